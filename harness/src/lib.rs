//! The engine and tools.
pub mod backend;
pub mod protocol;
pub mod worker;
pub mod cli;

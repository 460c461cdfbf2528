//! The engine and tools.
pub mod backend;
pub mod protocol;
pub mod worker;
pub mod cli;
pub mod bisect;
pub mod minimize;
pub mod repro;
pub mod triage;
pub mod classify;
pub mod compare;
pub mod store;
pub mod campaign;
pub mod interp_backend;
pub mod report;
pub mod fuzzing;

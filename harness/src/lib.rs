//! The engine and tools.
pub mod backend;
pub mod bisect;
pub mod campaign;
pub mod classify;
pub mod cli;
pub mod compare;
pub mod fuzzing;
pub mod interp_backend;
pub mod minimize;
pub mod protocol;
pub mod report;
pub mod repro;
pub mod store;
pub mod triage;
pub mod worker;

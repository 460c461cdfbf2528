//! Layer 1 of the harness: running a module on a backend.
//!
//! The [`backend::Backend`] trait and its typed [`backend::Outcome`]; the process-isolated XLA
//! worker pool ([`worker`], speaking [`protocol`] to `harness/engine/worker/hlo_worker.py`, the only
//! code that knows jaxlib's Python API); the oracle as a backend ([`interp_backend`]); and
//! [`engines::Engines`], the set of backends a command runs; [`environment`], where a result
//! was obtained (CPU features, GPU, versions, XLA flags). Nothing here decides whether a
//! result is a bug: that is the `judge` crate's job.

pub mod backend;
pub mod engines;
pub mod environment;
pub mod interp_backend;
pub mod protocol;
pub mod worker;

/// The oracle's backend name.
pub const ORACLE: &str = "interp";
/// The backend that votes on mismatches (Google's StableHLO reference interpreter).
pub const VOTER: &str = "stablehlo-ref";

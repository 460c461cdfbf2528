//! Layer 2 of the harness: the one place a verdict is decided.
//!
//! [`Judge::judge`] takes a module, its inputs and every backend's outcome and returns the
//! verdict with its evidence. On the way it uses the tolerance model ([`compare`]), the one
//! classifier ([`classify`]), the arbiter ([`proof`]: the set of results a legitimate
//! implementation returns, from the oracle's enclosure), the implementation choices XLA is free
//! to make ([`choices`], which name the freedom behind a difference), equivalent forms of the
//! module ([`forms`]) and the voter. `run`, `fuzz`, `recheck`, the
//! minimizer's predicate, the bisector and `triage` all ask the judge; nothing else decides.

pub mod choices;
pub mod classify;
pub mod compare;
pub mod forms;
mod judge;
pub mod proof;

pub use classify::{Label, Verdict, VerdictKind};
pub use judge::{Explanation, Judge, Judgement, Policy, Trial};

//! Layer 4 of the harness: the tools built on the judge and the findings store.
//!
//! [`campaign`] (the fuzz loop and the libFuzzer entry), [`minimize`] (one delta loop, one file
//! per reduction kind), [`bisect`] (the pass bisector), [`triage`] (bug-report triage),
//! [`disable`] (the disable-pass search), [`isolate`] (kernel isolation below HLO), [`releases`] (release bisection over jaxlib releases), [`repeat`] (fresh-process reruns) and [`fuzzing`]
//! (the oracle's fuzz body).

pub mod bisect;
pub mod campaign;
pub mod disable;
pub mod fuzzing;
pub mod isolate;
pub mod minimize;
pub mod recall;
pub mod releases;
pub mod repeat;
pub mod script;
pub mod triage;
pub mod xla_coverage;

//! Where a module's time went.

use serde::Serialize;

/// Where one module's time went (milliseconds).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModuleTimings {
    /// The whole module (generation excluded, confirmation runs included).
    pub wall_ms: f64,
    /// The oracle over every program (overlapping the XLA run).
    pub oracle_ms: f64,
    /// Until both the packed XLA run and the oracle were done.
    pub xla_wait_ms: f64,
    /// The packed XLA run alone (every XLA backend, one after the other), as the campaign
    /// thread saw it: the worker's stages plus the transfers.
    pub xla_run_ms: f64,
    /// XLA's compile and execute stages of the packed run, as the worker measured them.
    pub xla_compile_ms: f64,
    pub xla_execute_ms: f64,
    /// Splitting, classifying, attributing packed failures, confirming and storing findings.
    pub confirm_ms: f64,
    /// Of `confirm_ms`: the judge on the packed results (comparison, enclosure, variants), before
    /// any finding is confirmed; the rest is confirmation (XLA runs alone, the vote, storing).
    pub judge_ms: f64,
    /// Findings confirmed (each one compiled alone and voted on).
    pub confirmed: u64,
    /// The cost of each set of legitimate results the judge computed on a packed result
    /// (milliseconds, one per judged difference beyond the tolerance).
    pub set_ms: Vec<f64>,
    /// Packed runs that XLA answered, and how many of them reused the worker's executable.
    pub xla_packed_runs: u64,
    pub xla_packed_cached: u64,
    /// Programs whose agreeing result the voter was held to the set for (a sample), the
    /// dissents found, and the time they took.
    pub dissent_checks: u64,
    pub dissents: u64,
    pub dissent_ms: f64,
}

impl ModuleTimings {
    pub fn add(&mut self, o: &ModuleTimings) {
        self.xla_packed_runs += o.xla_packed_runs;
        self.xla_packed_cached += o.xla_packed_cached;
        self.wall_ms += o.wall_ms;
        self.oracle_ms += o.oracle_ms;
        self.xla_wait_ms += o.xla_wait_ms;
        self.xla_run_ms += o.xla_run_ms;
        self.xla_compile_ms += o.xla_compile_ms;
        self.xla_execute_ms += o.xla_execute_ms;
        self.confirm_ms += o.confirm_ms;
        self.judge_ms += o.judge_ms;
        self.confirmed += o.confirmed;
        self.set_ms.extend_from_slice(&o.set_ms);
        self.dissent_checks += o.dissent_checks;
        self.dissents += o.dissents;
        self.dissent_ms += o.dissent_ms;
    }
}

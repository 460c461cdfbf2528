//! What a campaign did: the input of the reports.

use crate::store::CampaignStats;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One point of the throughput timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub t_s: f64,
    pub modules: u64,
    pub programs: u64,
    pub findings: u64,
}

/// What a campaign did: the input of the reports.
#[derive(Clone, Debug, Serialize)]
pub struct CampaignSummary {
    pub seed: u64,
    pub shard: (u64, u64),
    pub backends: Vec<String>,
    pub xla_options: Vec<(String, String)>,
    pub pack: usize,
    pub input_sets: usize,
    pub jobs: usize,
    /// Seconds of this invocation.
    pub elapsed_s: f64,
    /// Counters over the whole campaign (all invocations).
    pub stats: CampaignStats,
    /// Modules, programs and cases (program x input set) of this invocation.
    pub modules_this_run: u64,
    pub programs_this_run: u64,
    pub cases_this_run: u64,
    pub modules_per_s: f64,
    pub programs_per_s: f64,
    pub cases_per_s: f64,
    /// Seconds of fuzzing over every run of the campaign (this one included).
    pub campaign_elapsed_s: f64,
    /// The whole campaign's timeline (campaign seconds; counters over every run).
    pub timeline: Vec<Sample>,
    /// Versions reported by the XLA worker.
    pub xla_info: serde_json::Value,
    /// Where the campaign ran (`engine::environment::Environment`'s JSON: CPU model and vector
    /// features, GPU, versions, XLA flags, the oracle's host); `null` for a merge (each finding
    /// keeps its own in `meta.environment`).
    pub environment: serde_json::Value,
    pub out: PathBuf,
    pub resumed: bool,
    /// What minimizing the findings did, when the campaign minimized.
    pub minimize: Option<MinimizeSummary>,
    /// Modules a timed campaign's end cut short (not counted; a resumed campaign tests them
    /// again).
    pub modules_cut: u64,
    /// The command that minimizes and buckets the findings this campaign left (empty: none
    /// given, as for a merge).
    pub finish_command: String,
}

/// What the phase did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MinimizeSummary {
    pub minimized: usize,
    pub not_reproduced: usize,
    pub failed: usize,
    /// Findings not minimized because one of the same provisional signature was: they join its
    /// bucket (status `folded`).
    pub folded: usize,
    /// Findings left for a later run (the budget ran out).
    pub left: usize,
    pub tests: usize,
    pub elapsed_s: f64,
}

impl MinimizeSummary {
    /// This phase's counts, then `later`'s (a campaign's rounds): what is left is what the
    /// later one left.
    pub fn then(&self, later: &MinimizeSummary) -> MinimizeSummary {
        MinimizeSummary {
            minimized: self.minimized + later.minimized,
            not_reproduced: self.not_reproduced + later.not_reproduced,
            failed: self.failed + later.failed,
            folded: self.folded + later.folded,
            left: later.left,
            tests: self.tests + later.tests,
            elapsed_s: self.elapsed_s + later.elapsed_s,
        }
    }
}

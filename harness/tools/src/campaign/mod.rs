//! Differential campaigns: generate modules, run them on the oracle and on XLA, classify, store
//! findings, resume after a kill.
//!
//! # How one module index is tested
//! 1. Module index `g` (this shard's indices are `g % N == I`) gets the seed
//!    `mix(campaign seed, g)`; its `pack` programs get `mix(module seed, j)`; each program is
//!    `generators::generate_from_seed` with inputs from `generators::generate_inputs_from_seed`.
//! 2. The programs are packed into one module (`generators::pack_with_layout`) so one XLA
//!    compile tests them all. The campaign thread evaluates each program with the oracle while
//!    the XLA worker compiles and runs the packed module.
//! 3. XLA's outputs are split back per program and each program is classified alone. When the
//!    packed run failed as a whole (crash, rejection, timeout) each program is re-run unpacked to
//!    find the culprit(s).
//! 4. A difference the judge's proof leaves inside the legitimate results (`judge::Policy::
//!    VERDICT`: the oracle's enclosure; no XLA run, no search for the choice that explains it)
//!    is settled on the packed result as `unproven`. Any other program whose verdict is a
//!    finding is re-run alone on XLA (keeping the
//!    `before_optimizations` module XLA compiled), re-run once more to tell nondeterminism
//!    (unless the packed run already gave the same bits: it was an earlier compile and run), and
//!    `stablehlo-ref` votes on a mismatch. The confirmed finding is written to the store before
//!    anything else happens with it. A finding seen only when packed is stored with the packed
//!    module.
//! 5. Steps 2-4 repeat for input sets 1..`input_sets` (`inputs_for`: drawn from each program's
//!    seed): the XLA worker runs the packed module it already compiled on the new inputs. A
//!    program with a stored finding of the same kind on the same outputs from an earlier set is
//!    not confirmed again. Later sets are skipped when the packed module failed as a whole.
//!
//! Why input sets: XLA CPU compiles each fusion to its own LLVM module, so compile time grows
//! with the number of instructions and the fixed cost of a compile is a small part of it
//! (`cargo bench -p tools --bench campaign` measures the split). Packing saves only that fixed
//! cost; running the compiled module again on other inputs costs an execution and an oracle run.
//!
//! Every thread holds one XLA worker (`--jobs` threads, `--jobs` workers), so every core is busy
//! with either a compile or the oracle.
//!
//! # Resumption
//! `DIR/campaign.json` holds the next module index below which everything is done; it is saved
//! atomically as modules complete. Findings are keyed by signature and occurrence, so work
//! redone after a kill neither loses nor duplicates findings.
//!
//! # The clock
//! `--time T` is the user's: the campaign, worker start-up, minimization and the reports
//! included, ends within T ([`Deadlines`], from the start of [`run_campaign`]). Fuzzing hands
//! out modules until its share of T is used (sooner when the new findings need the time to be
//! minimized); every XLA run of either phase ends at T less a reserve for the reports, and a
//! module or a minimization that the end cuts does not count (the module is tested again, the
//! finding minimized, by a resumed campaign: `hlo-diff fuzz --out DIR --finish` minimizes and
//! buckets what is left without testing more). Each module's stage limits are calibrated from
//! the stage times of the modules before it ([`calibrate`]), so a hang costs about what a
//! module of its size takes: it is seen once packed and confirmed once alone under the packed
//! module's limits.

use engine::backend::StageTimeouts;
use findings::store::{CampaignState, Store};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

mod bugs;
pub mod calibrate;
mod fuzz;
mod programs;
mod run;
mod stats;
mod tester;

pub use bugs::{
    bucket_case, culprit_of, minimize_pending, stage_limits_of, MinimizeConfig, MinimizeSummary,
};
pub use engine::engines::{EngineError, Engines};
pub use findings::summary::{CampaignSummary, Sample};
pub use findings::timings::ModuleTimings;
pub use fuzz::{feature_index, fuzz_one, fuzz_one_with_feedback, Finding, Fuzzed};
pub use programs::{inputs_for, program_config, programs_for, Program};
pub use run::{finish_command, run_campaign, Deadlines};
pub use tester::{CampaignClock, Fault, ProgramReport, Tested, Tester};

/// When a campaign stops.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stop {
    /// Wall-clock time of this invocation.
    pub time: Option<Duration>,
    /// Total module indices of the campaign (over all invocations of a resumed campaign).
    pub iterations: Option<u64>,
}

/// Everything a campaign is configured by.
#[derive(Clone, Debug)]
pub struct CampaignConfig {
    /// Backend names: the oracle (`interp`) and the XLA backends (`xla-cpu`, `xla-gpu`);
    /// `stablehlo-ref` in the list is used as the voter.
    pub backends: Vec<String>,
    pub seed: u64,
    pub jobs: usize,
    /// `(I, N)`.
    pub shard: (u64, u64),
    pub out: PathBuf,
    pub xla_options: Vec<(String, String)>,
    /// Programs per module.
    pub pack: usize,
    /// Input sets per program (one compile of the packed module runs on each).
    pub input_sets: usize,
    pub stop: Stop,
    pub generator: generators::Config,
    /// Each program draws its own configuration within `generator` from its seed
    /// (`generators::program_config`: swarm testing per program); without it every program
    /// uses `generator` itself.
    pub swarm: bool,
    pub python: Option<PathBuf>,
    /// Ask `stablehlo-ref` to vote on mismatches.
    pub voter: bool,
    /// Show a progress bar (only when stderr is a terminal).
    pub progress: bool,
    /// The stage limits' ceiling: each module's limits are calibrated from the stage times of
    /// the modules before it ([`calibrate`]), at most these.
    pub timeouts: StageTimeouts,
    /// Minimize and bucket new findings after the fuzz phase (`None`: leave them as found).
    pub minimize: Option<MinimizeConfig>,
    /// With a time limit, the share of it kept for minimizing (the fuzz phase stops earlier).
    pub minimize_share: f64,
    /// The known-bug registry directory (`None`: the repository's `corpora/known-bugs`).
    pub registry: Option<PathBuf>,
    /// Bucket ids earlier campaigns saw (a JSON object id -> first seen); updated at the end.
    pub history: Option<PathBuf>,
}

impl Default for CampaignConfig {
    fn default() -> Self {
        CampaignConfig {
            backends: vec!["interp".into(), "xla-cpu".into()],
            seed: 0,
            jobs: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            shard: (0, 1),
            out: PathBuf::from("hlo-diff-out"),
            xla_options: Vec::new(),
            pack: 8,
            input_sets: DEFAULT_INPUT_SETS,
            stop: Stop {
                time: None,
                iterations: Some(100),
            },
            generator: generators::Config::default(),
            swarm: true,
            python: None,
            voter: true,
            progress: true,
            timeouts: campaign_timeouts(),
            minimize: Some(MinimizeConfig::default()),
            minimize_share: DEFAULT_MINIMIZE_SHARE,
            registry: None,
            history: None,
        }
    }
}

/// The share of a timed campaign kept for minimizing its findings.
pub const DEFAULT_MINIMIZE_SHARE: f64 = 0.2;

/// Input sets per program by default: a later set costs an execution and an oracle run, no
/// compile (see `cargo bench -p tools --bench campaign`).
pub const DEFAULT_INPUT_SETS: usize = 4;

/// The ceiling of a campaign's stage limits (each module's are calibrated below it:
/// [`calibrate`]): shorter than a single run's.
pub fn campaign_timeouts() -> StageTimeouts {
    StageTimeouts {
        parse: Duration::from_secs(20),
        convert: Duration::from_secs(20),
        compile: Duration::from_secs(60),
        execute: Duration::from_secs(30),
    }
}

/// Why a campaign could not run.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Infrastructure(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl From<EngineError> for CampaignError {
    fn from(e: EngineError) -> CampaignError {
        match e {
            EngineError::Usage(m) => CampaignError::Usage(m),
            EngineError::Infrastructure(m) => CampaignError::Infrastructure(m),
        }
    }
}

/// A deterministic 64-bit mix (splitmix64's finalizer) of two values.
pub fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b
        .wrapping_mul(0x9e3779b97f4a7c15)
        .wrapping_add(0x632be59bd9b4e5b);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// Loads the campaign state of an output directory (for tools and tests).
pub fn load_state(out: &Path) -> std::io::Result<Option<CampaignState>> {
    Store::open(out)?.load_state()
}

/// Shared handle type for callers that stop a campaign from another thread.
pub type StopFlag = Arc<AtomicBool>;

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
//! 4. A mismatch that an allowed implementation choice explains (`explain_by_allowed_choices`,
//!    the oracle under variants; no XLA run) is settled on the packed result. Any other
//!    program whose verdict is a finding is re-run alone on XLA (keeping the
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
//! (`cargo bench -p harness --bench campaign` measures the split). Packing saves only that fixed
//! cost; running the compiled module again on other inputs costs an execution and an oracle run.
//!
//! Every thread holds one XLA worker (`--jobs` threads, `--jobs` workers), so every core is busy
//! with either a compile or the oracle.
//!
//! # Resumption
//! `DIR/campaign.json` holds the next module index below which everything is done; it is saved
//! atomically as modules complete. Findings are keyed by signature and occurrence, so work
//! redone after a kill neither loses nor duplicates findings.

use crate::backend::{Backend, Outcome, RunOptions, RunResult, StageTimeouts};
use crate::classify::{classify, Evidence, Label, Verdict, VerdictKind, ORACLE};
use crate::compare::Tolerance;
use crate::interp_backend::InterpBackend;
use crate::store::{CampaignState, CampaignStats, NewFinding, Recorded, Signature, Store};
use crate::worker::{WorkerBackend, WorkerConfig};
use hlo::{Literal, Module};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

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
    pub python: Option<PathBuf>,
    /// Ask `stablehlo-ref` to vote on mismatches.
    pub voter: bool,
    /// Show a progress bar (only when stderr is a terminal).
    pub progress: bool,
    pub timeouts: StageTimeouts,
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
            python: None,
            voter: true,
            progress: true,
            timeouts: campaign_timeouts(),
        }
    }
}

/// Input sets per program by default: a later set costs an execution and an oracle run, no
/// compile (see `cargo bench -p harness --bench campaign`).
pub const DEFAULT_INPUT_SETS: usize = 4;

/// Stage limits for campaigns: shorter than a single run's, so one hang costs little.
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

/// One point of the throughput timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    pub timeline: Vec<Sample>,
    /// Versions reported by the XLA worker.
    pub xla_info: serde_json::Value,
    pub out: PathBuf,
    pub resumed: bool,
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

/// The backends of a campaign.
pub struct Engines {
    pub oracle: InterpBackend,
    pub xla: Vec<WorkerBackend>,
    pub voter: Option<WorkerBackend>,
}

impl Engines {
    /// Builds the backends named in `names` (the oracle is always `interp`).
    pub fn new(
        names: &[String],
        jobs: usize,
        python: Option<PathBuf>,
        voter: bool,
    ) -> Result<Engines, CampaignError> {
        let mut xla = Vec::new();
        let mut want_voter = voter;
        if !names.iter().any(|n| n == ORACLE) {
            return Err(CampaignError::Usage(format!(
                "--backends must include the oracle `{ORACLE}`"
            )));
        }
        for n in names {
            match n.as_str() {
                "interp" => {}
                "stablehlo-ref" => want_voter = true,
                other => {
                    let cfg = WorkerConfig::new(crate::worker::Platform::Cpu)
                        .with_python(python.clone())
                        .with_workers(jobs);
                    match WorkerBackend::by_name(other, cfg) {
                        Some(b) => xla.push(b),
                        None => {
                            return Err(CampaignError::Usage(format!(
                                "unknown backend `{other}` (known: interp, xla-cpu, xla-gpu, stablehlo-ref)"
                            )))
                        }
                    }
                }
            }
        }
        if xla.is_empty() {
            return Err(CampaignError::Usage(
                "--backends needs at least one XLA backend (xla-cpu, xla-gpu)".into(),
            ));
        }
        let voter = if want_voter {
            Some(match xla.iter().find(|b| b.name() == "xla-cpu") {
                Some(cpu) => WorkerBackend::stablehlo_ref_on(cpu),
                None => WorkerBackend::stablehlo_ref(
                    WorkerConfig::new(crate::worker::Platform::Cpu)
                        .with_python(python)
                        .with_workers(1),
                ),
            })
        } else {
            None
        };
        Ok(Engines {
            oracle: InterpBackend::new(),
            xla,
            voter,
        })
    }

    /// Starts `n` workers of every XLA backend at once (a worker's start costs about a second:
    /// paid before a campaign's clock starts rather than inside it).
    pub fn warm_up(&self, n: usize) {
        const TRIVIAL: &str =
            "HloModule warm_up\n\nENTRY %main () -> f32[] {\n  ROOT %c = f32[] constant(0)\n}\n";
        let opts = RunOptions::default();
        std::thread::scope(|s| {
            for b in &self.xla {
                for _ in 0..n {
                    let opts = &opts;
                    s.spawn(move || b.run(TRIVIAL, &[], opts));
                }
            }
        });
    }

    /// Starts a worker of every XLA backend, failing with the install hint when one cannot run.
    pub fn check_available(&self) -> Result<serde_json::Value, CampaignError> {
        let mut info = serde_json::Map::new();
        for b in &self.xla {
            match b.info() {
                Ok(v) => {
                    info.insert(b.name().to_string(), v);
                }
                Err(Outcome::Unavailable { why }) => {
                    return Err(CampaignError::Infrastructure(format!(
                        "{}: {why}",
                        b.name()
                    )))
                }
                Err(o) => return Err(CampaignError::Infrastructure(format!("{}: {o}", b.name()))),
            }
        }
        Ok(serde_json::Value::Object(info))
    }
}

/// One generated program with its inputs.
pub struct Program {
    pub seed: u64,
    pub module: Module,
    pub inputs: Vec<Literal>,
}

/// The programs of module index `g`.
pub fn programs_for(seed: u64, g: u64, pack: usize, cfg: &generators::Config) -> Vec<Program> {
    let mseed = mix(seed, g);
    (0..pack.max(1))
        .map(|j| {
            let pseed = mix(mseed, j as u64);
            let module = generators::generate_from_seed(pseed, cfg);
            let inputs = generators::generate_inputs_from_seed(&module, pseed, cfg);
            Program {
                seed: pseed,
                module,
                inputs,
            }
        })
        .collect()
}

/// Input set `set` of a program: set 0 is the program's own inputs, set `r > 0` is drawn from
/// `mix(program seed, r)`, so every set is as reproducible as the program.
pub fn inputs_for(p: &Program, set: u64, cfg: &generators::Config) -> Vec<Literal> {
    match set {
        0 => p.inputs.clone(),
        r => generators::generate_inputs_from_seed(&p.module, mix(p.seed, r), cfg),
    }
}

/// What testing one program on one input set came to.
#[derive(Clone, Debug)]
pub struct ProgramReport {
    pub program: usize,
    /// Which input set (see [`inputs_for`]).
    pub input_set: u64,
    pub verdict: Verdict,
    pub recorded: Option<Recorded>,
    pub opcodes: Vec<hlo::Opcode>,
}

/// Where one module's time went (milliseconds).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModuleTimings {
    /// The whole module (generation excluded, confirmation runs included).
    pub wall_ms: f64,
    /// The oracle over every program (overlapping the XLA run).
    pub oracle_ms: f64,
    /// Until both the packed XLA run and the oracle were done.
    pub xla_wait_ms: f64,
    /// XLA's compile and execute stages of the packed run, as the worker measured them.
    pub xla_compile_ms: f64,
    pub xla_execute_ms: f64,
    /// Splitting, classifying, attributing packed failures, confirming and storing findings.
    pub confirm_ms: f64,
    /// Packed runs that XLA answered, and how many of them reused the worker's executable.
    pub xla_packed_runs: u64,
    pub xla_packed_cached: u64,
}

impl ModuleTimings {
    pub fn add(&mut self, o: &ModuleTimings) {
        self.xla_packed_runs += o.xla_packed_runs;
        self.xla_packed_cached += o.xla_packed_cached;
        self.wall_ms += o.wall_ms;
        self.oracle_ms += o.oracle_ms;
        self.xla_wait_ms += o.xla_wait_ms;
        self.xla_compile_ms += o.xla_compile_ms;
        self.xla_execute_ms += o.xla_execute_ms;
        self.confirm_ms += o.confirm_ms;
    }
}

/// Explains a mismatch by a choice XLA is free to make, or `None`. In order:
/// 1. flush-to-zero: the oracle agrees once subnormal inputs are zeros (XLA CPU's denormal mode);
///    vote `ftz`.
/// 2. implementation choices (`interp::variant`): denormals flushed anywhere (the CPU mode XLA
///    CPU runs in), the sign of NaNs operations produce, the last ulps of approximated
///    functions (through comparisons, bitcasts and roundings that turn them into different
///    integers), and the accumulation precision of dots and convolutions (partial sums that
///    overflow). The oracle evaluates again under each choice, and every element XLA returned
///    must equal the oracle's element under one of them; vote `implementation-choice`.
/// 3. select-and-scatter keeping the first or the last of tied elements (`select_ties`): one
///    rule must explain every output; vote `implementation-choice`.
/// 4. for modules with approximated complex functions, their rounding noise
///    ([`explain_by_complex_rounding`]).
pub fn explain_by_allowed_choices(
    oracle: &InterpBackend,
    module: &Module,
    inputs: &[Literal],
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Option<Verdict> {
    use interp::variant::{Accumulation, SelectTies, Variant, APPROXIMATED};
    let k = outcomes.iter().position(|(n, _)| n == ORACLE)?;
    let base = outcomes[k].1.as_ok()?.clone();
    let flushed = crate::compare::flush_subnormals(inputs);
    // The verdict with `oracle_outcome` in the oracle's place, when that is a match.
    let matches_with = |oracle_outcome: Outcome| {
        let mut again = outcomes.to_vec();
        again[k].1 = oracle_outcome;
        Some(classify(&again, &Evidence::new(tol))).filter(|v| v.kind == VerdictKind::Match)
    };
    if let Some(f) = &flushed {
        if let Some(mut v) = matches_with(oracle.run_module(module, f)) {
            v.message =
                "explained by flush-to-zero: the oracle agrees once subnormal inputs are zero"
                    .into();
            v.vote = Some("ftz".into());
            return Some(v);
        }
    }
    let mut approximated: Vec<hlo::Opcode> = module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.opcode))
        .filter(|op| APPROXIMATED.contains(op))
        .collect();
    approximated.sort_by_key(|op| op.name());
    approximated.dedup();
    let mut variants = Vec::new();
    for flush_denormals in [false, true] {
        for nan_sign in [None, Some(true), Some(false)] {
            variants.push(Variant {
                nan_sign,
                flush_denormals,
                ..Variant::default()
            });
        }
    }
    variants.remove(0); // the default evaluation is already a candidate
    if module.computations.iter().any(|c| {
        c.instructions
            .iter()
            .any(|i| matches!(i.opcode, hlo::Opcode::Dot | hlo::Opcode::Convolution))
    }) {
        for accumulation in [Accumulation::Narrow, Accumulation::NarrowFused] {
            variants.push(Variant {
                accumulation,
                ..Variant::default()
            });
        }
        variants.push(Variant {
            skip_conv_padding: true,
            ..Variant::default()
        });
    }
    if !approximated.is_empty() {
        variants.push(Variant {
            wide_complex: true,
            ..Variant::default()
        });
        // Every approximated op off by the same ulps, then each op alone (in a chain of two,
        // the last one's rounding is often all that differs).
        for n in [1, -1, 2, -2, 4, -4] {
            variants.push(Variant {
                nudge_ulps: n,
                ..Variant::default()
            });
        }
        if approximated.len() > 1 {
            for &op in &approximated {
                for n in [1, -1, 2, -2] {
                    variants.push(Variant {
                        nudge_ulps: n,
                        nudge_only: Some(op),
                        ..Variant::default()
                    });
                }
            }
        }
    }
    let mut candidates: Vec<Vec<Literal>> = vec![base.outputs.clone()];
    let xla: Vec<(usize, &RunResult)> = outcomes
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != k)
        .filter_map(|(j, (_, o))| o.as_ok().map(|r| (j, r)))
        .collect();
    if xla.is_empty() {
        return None;
    }
    for variant in &variants {
        let b = oracle.with_variant(*variant);
        // Under flush-to-zero, subnormal inputs read as zero too.
        let ins = match (&flushed, variant.flush_denormals) {
            (Some(f), true) => f.as_slice(),
            _ => inputs,
        };
        let Outcome::Ok(r) = b.run_module(module, ins) else {
            continue;
        };
        candidates.push(r.outputs);
        // Every XLA result must be explained by the candidates so far.
        let mut verdict = None;
        for &(j, r) in &xla {
            match explained_by(
                &candidates,
                r,
                &base,
                &outcomes[j],
                tol,
                crate::compare::merge_closest,
            ) {
                Some(v) => verdict = Some(v),
                None => {
                    verdict = None;
                    break;
                }
            }
        }
        if let Some(mut v) = verdict {
            v.message = "explained by implementation choices XLA is free to make (the sign of \
                         NaNs operations produce, the last ulps of approximated functions, \
                         dot/convolution accumulation precision, convolution padding, \
                         precision of c64 functions, \
                         flush-to-zero): each \
                         differing element is the oracle's under one"
                .into();
            v.vote = Some("implementation-choice".into());
            return Some(v);
        }
    }
    // Which of tied elements select-and-scatter selects: a choice per window, which element-wise
    // merging would overstate (a window's source value lost would pass as "another choice"),
    // so each rule must explain every output alone.
    if module.computations.iter().any(|c| {
        c.instructions
            .iter()
            .any(|i| i.opcode == hlo::Opcode::SelectAndScatter)
    }) {
        for rule in [SelectTies::First, SelectTies::Last] {
            let b = oracle.with_variant(Variant {
                select_ties: Some(rule),
                ..Variant::default()
            });
            if let Some(mut v) = matches_with(b.run_module(module, inputs)) {
                v.message = format!(
                    "explained by the choice among tied elements XLA is free to make in \
                     select-and-scatter: the oracle agrees keeping the {} of them",
                    if rule == SelectTies::First {
                        "first"
                    } else {
                        "last"
                    }
                );
                v.vote = Some("implementation-choice".into());
                return Some(v);
            }
        }
    }
    let complex_fn = module.computations.iter().any(|c| {
        c.instructions.iter().any(|i| {
            approximated.contains(&i.opcode) && i.shape.leaves().iter().any(|l| l.ty.is_complex())
        })
    });
    if !complex_fn {
        return None;
    }
    explain_by_complex_rounding(oracle, module, inputs, &base, &xla, outcomes, tol)
}

/// The last resort of [`explain_by_allowed_choices`], for modules with approximated complex
/// functions (the caller checks): their results carry rounding noise of the modulus' ulps in both parts, which later
/// ops can magnify (a log of the noise) or turn on (a branch cut at its sign). The oracle runs
/// with every complex result moved by 1, 2 and 4 ulps of its larger part, both ways; XLA's
/// element is explained when it lies between those results (see
/// [`crate::compare::merge_within_hull`]).
fn explain_by_complex_rounding(
    oracle: &InterpBackend,
    module: &Module,
    inputs: &[Literal],
    base: &RunResult,
    xla: &[(usize, &RunResult)],
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Option<Verdict> {
    use interp::variant::Variant;
    let mut candidates: Vec<Vec<Literal>> = vec![base.outputs.clone()];
    for n in [1, -1, 2, -2, 4, -4] {
        let b = oracle.with_variant(Variant {
            nudge_ulps: n,
            normwise_complex: true,
            ..Variant::default()
        });
        if let Outcome::Ok(r) = b.run_module(module, inputs) {
            candidates.push(r.outputs);
        }
    }
    let mut verdict = None;
    for &(j, r) in xla {
        verdict = Some(explained_by(
            &candidates,
            r,
            base,
            &outcomes[j],
            tol,
            crate::compare::merge_within_hull,
        )?);
    }
    let mut v = verdict?;
    v.message = "explained by rounding noise of complex functions: each differing element lies \
                 between the oracle's results with complex results moved by a few ulps of their \
                 modulus"
        .into();
    v.vote = Some("implementation-choice".into());
    Some(v)
}

/// How the candidates' elements are merged into the one oracle result XLA's is compared with.
type Merge = fn(&[&hlo::ArrayLiteral], &hlo::ArrayLiteral) -> Option<hlo::ArrayLiteral>;

/// The `match` verdict when every element of XLA's result `r` (of `xla`) is explained by the
/// candidate oracle results' elements as `merge` takes them (within the tolerance), else `None`.
fn explained_by(
    candidates: &[Vec<Literal>],
    r: &RunResult,
    base: &RunResult,
    xla: &(String, Outcome),
    tol: &Tolerance,
    merge: Merge,
) -> Option<Verdict> {
    let mut merged = Vec::with_capacity(r.outputs.len());
    for (leaf, actual) in r.outputs.iter().enumerate() {
        let Literal::Array(actual) = actual else {
            return None;
        };
        let cands: Vec<&hlo::ArrayLiteral> = candidates
            .iter()
            .filter_map(|c| match c.get(leaf) {
                Some(Literal::Array(a)) => Some(a),
                _ => None,
            })
            .collect();
        if cands.len() != candidates.len() {
            return None;
        }
        merged.push(Literal::Array(merge(&cands, actual)?));
    }
    let again = vec![
        (
            ORACLE.to_string(),
            Outcome::Ok(RunResult {
                outputs: merged,
                ..base.clone()
            }),
        ),
        xla.clone(),
    ];
    let v = classify(&again, &Evidence::new(tol));
    (v.kind == VerdictKind::Match).then_some(v)
}

/// A mismatch not labelled `xla` (the voter sided with XLA, or could not tell) is looked at once
/// more in forms that
/// mean the same program: every constant and iota of the entry computation as a parameter (no
/// compile-time folding), and unsigned indices converted to s64. When XLA's result on such a form
/// agrees with the oracle, XLA computes the same program differently depending on its form, and
/// the voter shared XLA's reading (it receives the module through XLA's parser and converter):
/// the finding is XLA's, relabelled `xla`. Other verdicts pass unchanged.
pub fn check_equivalent_forms(
    verdict: Verdict,
    oracle: &InterpBackend,
    xla: &[&WorkerBackend],
    module: &Module,
    inputs: &[Literal],
    opts: &RunOptions,
    tol: &Tolerance,
) -> Verdict {
    use crate::minimize::parameter::{constants_to_parameters, widen_unsigned_indices};
    if verdict.kind != VerdictKind::Mismatch || verdict.label == Some(Label::Xla) {
        return verdict;
    }
    let Some(name) = verdict.backend.clone() else {
        return verdict;
    };
    let Some(backend) = xla.iter().find(|b| b.name() == name) else {
        return verdict;
    };
    let case = crate::minimize::Case {
        module: module.clone(),
        inputs: inputs.to_vec(),
    };
    type Rewrite = fn(&crate::minimize::Case) -> Option<crate::minimize::Case>;
    let rewrites: [(&str, Rewrite); 2] = [
        (
            "constants as parameters: with constants and iotas as runtime parameters",
            constants_to_parameters,
        ),
        (
            "unsigned indices: with u8/u16/u32 indices converted to s64",
            widen_unsigned_indices,
        ),
    ];
    for (what, rewrite) in rewrites {
        let Some(dc) = rewrite(&case) else {
            continue;
        };
        let text = hlo::print::module_to_string(&dc.module);
        let outcomes = vec![
            (
                ORACLE.to_string(),
                oracle.run_module(&dc.module, &dc.inputs),
            ),
            (name.clone(), backend.run(&text, &dc.inputs, opts)),
        ];
        let mut again = classify(&outcomes, &Evidence::new(tol));
        if again.kind == VerdictKind::Mismatch {
            if let Some(v) =
                explain_by_allowed_choices(oracle, &dc.module, &dc.inputs, &outcomes, tol)
            {
                again = v;
            }
        }
        if again.kind == VerdictKind::Match {
            let mut v = verdict;
            v.label = Some(Label::Xla);
            v.vote = Some(format!(
                "{what} XLA agrees with the oracle (the voter shares XLA's reading of the \
                 original form)"
            ));
            return v;
        }
    }
    verdict
}

/// A copy of `m` whose root tuple holds only the output leaves `keep` (every parameter kept, dead
/// code and uncalled computations removed); `None` when the root is not a tuple of arrays.
pub fn restrict_outputs(m: &Module, keep: &[usize]) -> Option<Module> {
    use crate::minimize::{edit::live, unused};
    if keep.is_empty() || m.computations.is_empty() {
        return None;
    }
    let e = m.entry_computation();
    let root = e.root_instruction();
    if root.opcode != hlo::Opcode::Tuple
        || root
            .operands
            .iter()
            .any(|&o| !e.instructions[o].shape.is_array())
    {
        return None;
    }
    let ops: Vec<hlo::InstrId> = keep
        .iter()
        .filter_map(|&k| root.operands.get(k).copied())
        .collect();
    if ops.len() != keep.len() {
        return None;
    }
    let mut out = m.clone();
    out.header_attrs
        .retain(|(k, _)| k != "entry_computation_layout");
    let entry = out.entry;
    let c = &mut out.computations[entry];
    let r = c.root;
    c.instructions[r].shape = hlo::Shape::Tuple(
        ops.iter()
            .map(|&o| c.instructions[o].shape.clone())
            .collect(),
    );
    c.instructions[r].operands = ops;
    let mut keep_ins = live(c);
    for (k, i) in c.instructions.iter().enumerate() {
        if i.opcode == hlo::Opcode::Parameter {
            keep_ins[k] = true;
        }
    }
    unused::retain_instructions(c, &keep_ins);
    unused::remove_uncalled_computations(&mut out);
    Some(out)
}

/// Per-output leaf ranges of a packed module's programs.
fn leaf_ranges(
    packed: &Module,
    layout: &generators::pack::PackLayout,
) -> Vec<std::ops::Range<usize>> {
    let e = packed.entry_computation();
    let root = e.root_instruction();
    let counts: Vec<usize> = root
        .operands
        .iter()
        .map(|&o| e.instructions[o].shape.leaves().len())
        .collect();
    let mut offsets = vec![0usize; counts.len() + 1];
    for (i, c) in counts.iter().enumerate() {
        offsets[i + 1] = offsets[i] + c;
    }
    layout
        .outputs
        .iter()
        .map(|&(first, n)| offsets[first.min(counts.len())]..offsets[(first + n).min(counts.len())])
        .collect()
}

fn split_result(r: &RunResult, range: std::ops::Range<usize>) -> Option<RunResult> {
    let outs = r.outputs.get(range)?.to_vec();
    Some(RunResult {
        outputs: outs,
        result_shape: None,
        timings: r.timings.clone(),
        optimized_hlo: None,
        before_optimizations_hlo: None,
        dump_dir: None,
    })
}

/// Findings stored for a module's programs so far, by (program, verdict kind, differing
/// outputs), with their labels.
type Settled = std::collections::HashMap<(usize, &'static str, Vec<usize>), Label>;

/// Runs, confirms and (for findings) stores everything about one module index.
pub struct Tester<'a> {
    pub engines: &'a Engines,
    pub store: Option<&'a Store>,
    pub opts: RunOptions,
    pub campaign_seed: u64,
    /// Input sets per program: the packed module is compiled once and run on each.
    pub input_sets: usize,
    /// Draws the input sets after the first.
    pub generator: generators::Config,
}

impl<'a> Tester<'a> {
    pub fn new(
        engines: &'a Engines,
        store: Option<&'a Store>,
        xla_options: &[(String, String)],
        timeouts: StageTimeouts,
    ) -> Tester<'a> {
        Tester {
            engines,
            store,
            opts: RunOptions {
                timeouts,
                env_option_overrides: xla_options.to_vec(),
                ..RunOptions::default()
            },
            campaign_seed: 0,
            input_sets: 1,
            generator: generators::Config::default(),
        }
    }

    /// Tests programs packed into one module; `g` names the module index in occurrences.
    pub fn test_programs(&self, g: u64, programs: &[Program]) -> Vec<ProgramReport> {
        self.test_programs_timed(g, programs).0
    }

    /// [`Tester::test_programs`], also telling where the time went. Every program is tested on
    /// `input_sets` input sets; the later sets run the packed module again, which the XLA
    /// worker does without compiling it again. They are skipped when the packed module failed
    /// as a whole on the first set (its failure is attributed already).
    pub fn test_programs_timed(
        &self,
        g: u64,
        programs: &[Program],
    ) -> (Vec<ProgramReport>, ModuleTimings) {
        let mut settled = Settled::new();
        let (mut reports, mut timings, packed_ok) =
            self.test_input_set(g, 0, programs, &mut settled);
        if packed_ok {
            for set in 1..self.input_sets.max(1) as u64 {
                let again: Vec<Program> = programs
                    .iter()
                    .map(|p| Program {
                        seed: p.seed,
                        module: p.module.clone(),
                        inputs: inputs_for(p, set, &self.generator),
                    })
                    .collect();
                let (r, t, _) = self.test_input_set(g, set, &again, &mut settled);
                reports.extend(r);
                timings.add(&t);
            }
        }
        (reports, timings)
    }

    /// One input set of every program: the packed run, the oracle, classification and
    /// confirmation. Also says whether every XLA backend ran the packed module.
    ///
    /// A program that already has a stored finding of the same kind on the same outputs from
    /// an earlier input set (`settled`) is not confirmed and stored again: the case counts
    /// under that finding's label.
    fn test_input_set(
        &self,
        g: u64,
        set: u64,
        programs: &[Program],
        settled: &mut Settled,
    ) -> (Vec<ProgramReport>, ModuleTimings, bool) {
        let occ = |what: String| match set {
            0 => format!("{}:{g}:{what}", self.campaign_seed),
            r => format!("{}:{g}:{what}:inputs{r}", self.campaign_seed),
        };
        let wall = Instant::now();
        let mut timings = ModuleTimings::default();
        let mods: Vec<Module> = programs.iter().map(|p| p.module.clone()).collect();
        let (packed, layout) = generators::pack::pack_with_layout(&mods);
        let packed_text = hlo::print::module_to_string(&packed);
        let packed_inputs: Vec<Literal> = programs
            .iter()
            .flat_map(|p| p.inputs.iter().cloned())
            .collect();
        let ranges = leaf_ranges(&packed, &layout);

        // XLA on the packed module while the oracle runs here.
        let (xla_outcomes, oracle_outcomes) = std::thread::scope(|s| {
            let h = s.spawn(|| {
                self.engines
                    .xla
                    .iter()
                    .map(|b| {
                        (
                            b.name().to_string(),
                            b.run(&packed_text, &packed_inputs, &self.opts),
                        )
                    })
                    .collect::<Vec<_>>()
            });
            let t = Instant::now();
            let oracle: Vec<Outcome> = programs
                .iter()
                .map(|p| self.engines.oracle.run_module(&p.module, &p.inputs))
                .collect();
            let oracle_ms = t.elapsed().as_secs_f64() * 1e3;
            (h.join().unwrap_or_default(), (oracle, oracle_ms))
        });
        let (oracle_outcomes, oracle_ms) = oracle_outcomes;
        timings.oracle_ms = oracle_ms;
        timings.xla_wait_ms = wall.elapsed().as_secs_f64() * 1e3;
        for (_, o) in &xla_outcomes {
            if let Outcome::Ok(r) = o {
                timings.xla_compile_ms += r.timings.compile_ms;
                timings.xla_execute_ms += r.timings.execute_ms;
                timings.xla_packed_runs += 1;
                timings.xla_packed_cached += u64::from(r.timings.cached);
            }
        }
        let after_first = Instant::now();

        let mut reports = Vec::with_capacity(programs.len());
        for (j, p) in programs.iter().enumerate() {
            let tol = Tolerance::for_module(&p.module);
            // Per-program XLA outcomes: split from the packed run, or the program alone when the
            // packed run failed as a whole.
            let mut outcomes: Vec<(String, Outcome)> =
                vec![(ORACLE.to_string(), oracle_outcomes[j].clone())];
            let mut alone: Vec<(String, Outcome)> = Vec::new();
            for (k, (name, o)) in xla_outcomes.iter().enumerate() {
                let per = match o {
                    Outcome::Ok(r) => match split_result(r, ranges[j].clone()) {
                        Some(r) => Outcome::Ok(r),
                        None => Outcome::HarnessError {
                            stage: None,
                            message: "packed result has too few outputs".into(),
                        },
                    },
                    failed if programs.len() == 1 => failed.clone(),
                    _ => {
                        let text = hlo::print::module_to_string(&p.module);
                        let o = self.engines.xla[k].run(&text, &p.inputs, &self.opts);
                        alone.push((name.clone(), o.clone()));
                        o
                    }
                };
                outcomes.push((name.clone(), per));
            }
            let verdict = classify(&outcomes, &Evidence::new(&tol));
            let mut report = ProgramReport {
                program: j,
                input_set: set,
                verdict: verdict.clone(),
                recorded: None,
                opcodes: p.module.opcode_histogram().into_keys().collect(),
            };
            // A mismatch that an allowed implementation choice explains in the packed run is
            // settled here, before confirmation compiles the program alone twice.
            let explained = match verdict.kind {
                VerdictKind::Mismatch => explain_by_allowed_choices(
                    &self.engines.oracle,
                    &p.module,
                    &p.inputs,
                    &outcomes,
                    &tol,
                ),
                _ => None,
            };
            let key = (j, verdict.kind.name(), verdict.mismatched_outputs.clone());
            if let Some(v) = explained {
                report.verdict = v;
            } else if let (true, Some(label)) = (verdict.is_bug(), settled.get(&key)) {
                report.verdict.label = Some(*label);
                report.verdict.message = format!(
                    "{} (as on an earlier input set of this program, not confirmed again)",
                    report.verdict.message
                );
            } else if verdict.is_bug() {
                let (v, rec) = self.confirm_and_store(
                    g,
                    occ(j.to_string()),
                    set,
                    j,
                    p,
                    &tol,
                    &outcomes,
                    &alone,
                    &packed_text,
                    &packed_inputs,
                );
                if v.is_bug() && rec.is_some() {
                    settled.insert(key, v.label.unwrap_or(Label::Undecided));
                }
                report.verdict = v;
                report.recorded = rec;
            }
            reports.push(report);
        }
        // A packed failure no single program reproduces: keep the packed module.
        if let Some((name, o)) = xla_outcomes
            .iter()
            .find(|(_, o)| !o.is_ok() && programs.len() > 1)
        {
            if reports.iter().all(|r| !r.verdict.is_bug()) {
                let outcomes = vec![(name.clone(), o.clone())];
                let tol = Tolerance::default();
                let v = classify(&outcomes, &Evidence::new(&tol));
                if v.is_bug() {
                    let rec = self.store_finding(
                        &v,
                        Some(&packed),
                        &packed_text,
                        None,
                        &packed_inputs,
                        &outcomes,
                        occ("packed".into()),
                        json!({"module_index": g, "input_set": set, "only_when_packed": true, "programs": programs.len()}),
                    );
                    reports.push(ProgramReport {
                        program: usize::MAX,
                        input_set: set,
                        verdict: v,
                        recorded: rec,
                        opcodes: Vec::new(),
                    });
                }
            }
        }
        timings.confirm_ms = after_first.elapsed().as_secs_f64() * 1e3;
        timings.wall_ms = wall.elapsed().as_secs_f64() * 1e3;
        let packed_ok = xla_outcomes.iter().all(|(_, o)| o.is_ok());
        (reports, timings, packed_ok)
    }

    #[allow(clippy::too_many_arguments)]
    fn confirm_and_store(
        &self,
        g: u64,
        occurrence: String,
        set: u64,
        j: usize,
        p: &Program,
        tol: &Tolerance,
        outcomes: &[(String, Outcome)],
        alone: &[(String, Outcome)],
        packed_text: &str,
        packed_inputs: &[Literal],
    ) -> (Verdict, Option<Recorded>) {
        let text = hlo::print::module_to_string(&p.module);
        let oracle = outcomes[0].clone();
        let mut opts = self.opts.clone();
        opts.return_before_optimizations_hlo = true;
        let mut firsts: Vec<(String, Outcome)> = vec![oracle];
        let mut reruns: Vec<(String, Outcome)> = Vec::new();
        for (k, b) in self.engines.xla.iter().enumerate() {
            let name = b.name().to_string();
            // A failure already reproduced alone is not run a third time.
            let first = match alone.iter().find(|(n, _)| *n == name) {
                Some((_, o)) if !o.is_ok() => o.clone(),
                _ => self.engines.xla[k].run(&text, &p.inputs, &opts),
            };
            if let Some(r) = first.as_ok() {
                // The packed run was an earlier compile and run of the same program: when it
                // gave the same bits, it already is the rerun (a difference may come from the
                // other programs around it, so then run once more alone).
                let packed = outcomes
                    .iter()
                    .find(|(n, o)| *n == name && o.as_ok().is_some_and(|q| q.outputs == r.outputs));
                let again = match packed {
                    Some((_, o)) => o.clone(),
                    None => self.engines.xla[k].run(&text, &p.inputs, &opts),
                };
                reruns.push((name.clone(), again));
            }
            firsts.push((name, first));
        }
        let before = firsts
            .iter()
            .filter_map(|(_, o)| o.as_ok())
            .find_map(|r| r.before_optimizations_hlo.clone());
        let pre = classify(
            &firsts,
            &Evidence {
                reruns: &reruns,
                ..Evidence::new(tol)
            },
        );
        // Flush-to-zero: when the oracle agrees with XLA once subnormal inputs are zeros, the
        // difference is XLA CPU's denormal mode, not a bug.
        if pre.kind == VerdictKind::Mismatch {
            if let Some(v) =
                explain_by_allowed_choices(&self.engines.oracle, &p.module, &p.inputs, &firsts, tol)
            {
                return (v, None);
            }
        }
        // The voter runs the module reduced to the differing outputs, so that an op it cannot
        // run elsewhere in the module does not keep it from voting.
        let reduced = restrict_outputs(&p.module, &pre.mismatched_outputs);
        let voter = match (&self.engines.voter, pre.kind) {
            (Some(v), VerdictKind::Mismatch) => Some(
                match crate::classify::voter_abstains(reduced.as_ref().unwrap_or(&p.module)) {
                    Some(what) => Outcome::Unsupported { what },
                    None => match &reduced {
                        Some(m) => v.run(&hlo::print::module_to_string(m), &p.inputs, &self.opts),
                        None => v.run(&text, &p.inputs, &self.opts),
                    },
                },
            ),
            _ => None,
        };
        let sel = reduced.as_ref().map(|_| pre.mismatched_outputs.as_slice());
        let verdict = classify(
            &firsts,
            &Evidence {
                reruns: &reruns,
                voter: voter.as_ref(),
                voter_outputs: sel,
                ..Evidence::new(tol)
            },
        );
        let verdict = self.check_equivalent_forms(verdict, p, tol);
        let mut all = firsts.clone();
        if let Some(v) = voter {
            all.push(("stablehlo-ref".into(), v));
        }
        if verdict.is_bug() {
            let rec = self.store_finding(
                &verdict,
                Some(&p.module),
                &text,
                before.as_deref(),
                &p.inputs,
                &all,
                occurrence,
                json!({"module_index": g, "program": j, "program_seed": p.seed, "input_set": set}),
            );
            return (verdict, rec);
        }
        // Seen only when packed: keep the packed module, labelled as such.
        let packed_verdict = classify(outcomes, &Evidence::new(tol));
        let rec = self.store_finding(
            &packed_verdict,
            Some(&p.module),
            packed_text,
            None,
            packed_inputs,
            outcomes,
            occurrence,
            json!({"module_index": g, "program": j, "program_seed": p.seed, "input_set": set,
                   "only_when_packed": true, "alone": verdict.kind.name()}),
        );
        (packed_verdict, rec)
    }

    fn check_equivalent_forms(&self, verdict: Verdict, p: &Program, tol: &Tolerance) -> Verdict {
        check_equivalent_forms(
            verdict,
            &self.engines.oracle,
            &self.engines.xla.iter().collect::<Vec<_>>(),
            &p.module,
            &p.inputs,
            &self.opts,
            tol,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn store_finding(
        &self,
        verdict: &Verdict,
        module: Option<&Module>,
        text: &str,
        before: Option<&str>,
        inputs: &[Literal],
        outcomes: &[(String, Outcome)],
        occurrence: String,
        meta: serde_json::Value,
    ) -> Option<Recorded> {
        let store = self.store?;
        let mut meta = meta;
        if let Some(m) = meta.as_object_mut() {
            m.insert("campaign_seed".into(), json!(self.campaign_seed));
            m.insert("xla_options".into(), json!(self.opts.env_option_overrides));
        }
        let nf = NewFinding {
            signature: Signature::of(verdict, module),
            occurrence,
            verdict,
            module_text: text,
            before_optimizations: before,
            inputs,
            outcomes,
            meta,
        };
        match store.record(&nf) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("hlo-diff: could not store a finding: {e}");
                None
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The campaign loop.

struct Shared {
    state: CampaignState,
    /// Completed module indices (in-shard ordinals) above the watermark, with their stats.
    pending: BTreeMap<u64, CampaignStats>,
    timeline: Vec<Sample>,
    modules_this_run: u64,
    programs_this_run: u64,
    cases_this_run: u64,
    findings_this_run: u64,
    last_save: Instant,
    last_sample: Instant,
}

fn bucket_ulps(u: u64) -> u32 {
    if u == 0 {
        0
    } else {
        64 - u.leading_zeros()
    }
}

fn stats_of(reports: &[ProgramReport]) -> CampaignStats {
    let mut s = CampaignStats {
        modules: 1,
        ..CampaignStats::default()
    };
    for r in reports {
        if r.program != usize::MAX {
            s.cases += 1;
            if r.input_set == 0 {
                s.programs += 1;
            }
        }
        *s.verdicts
            .entry(r.verdict.kind.name().to_string())
            .or_insert(0) += 1;
        if r.verdict.vote.as_deref() == Some("ftz") {
            *s.labels.entry("match:explained_by_ftz".into()).or_insert(0) += 1;
        }
        if r.verdict.vote.as_deref() == Some("implementation-choice") {
            *s.labels
                .entry("match:explained_by_implementation_choice".into())
                .or_insert(0) += 1;
        }
        if r.verdict.is_bug() {
            let label = r.verdict.label.unwrap_or(Label::Undecided).name();
            *s.labels
                .entry(format!("{}:{label}", r.verdict.kind.name()))
                .or_insert(0) += 1;
        }
        if r.verdict.kind != VerdictKind::Unsupported && r.input_set == 0 {
            for op in &r.opcodes {
                *s.op_coverage.entry(op.name().to_string()).or_insert(0) += 1;
            }
        } else if r.verdict.kind == VerdictKind::Unsupported && r.input_set == 0 {
            *s.unsupported
                .entry(crate::store::normalize_message(&r.verdict.message))
                .or_insert(0) += 1;
        }
        if let Some(c) = &r.verdict.comparison {
            for o in &c.outputs {
                if o.ty.is_float() || o.ty.is_complex() {
                    *s.ulp_hist.entry(bucket_ulps(o.max_ulps)).or_insert(0) += 1;
                }
            }
        }
        match &r.recorded {
            Some(Recorded::New(_)) => s.findings_new += 1,
            Some(Recorded::Folded { .. }) => s.findings_folded += 1,
            _ => {}
        }
    }
    s
}

/// Runs a campaign to its stop condition (or until `stop_flag` is set), writing findings, the
/// state file and the reports under `cfg.out`.
pub fn run_campaign(
    cfg: &CampaignConfig,
    stop_flag: Option<&AtomicBool>,
) -> Result<CampaignSummary, CampaignError> {
    let (si, sn) = cfg.shard;
    if sn == 0 || si >= sn {
        return Err(CampaignError::Usage(format!(
            "--shard {si}/{sn}: need I < N"
        )));
    }
    if cfg.stop.time.is_none() && cfg.stop.iterations.is_none() {
        return Err(CampaignError::Usage("give --time or --iterations".into()));
    }
    let store = Store::open(&cfg.out)?;
    store.clean_temporaries()?;
    let backends_key: Vec<String> = cfg
        .backends
        .iter()
        .filter(|b| *b != "stablehlo-ref")
        .cloned()
        .collect();
    let fresh = CampaignState {
        seed: cfg.seed,
        shard: cfg.shard,
        next_index: 0,
        elapsed_s: 0.0,
        backends: backends_key.clone(),
        xla_options: cfg.xla_options.clone(),
        pack: cfg.pack.max(1),
        input_sets: cfg.input_sets.max(1),
        stats: CampaignStats::default(),
    };
    let (state, resumed) = match store.load_state()? {
        Some(s) => {
            if s.seed != fresh.seed
                || s.shard != fresh.shard
                || s.backends != fresh.backends
                || s.pack != fresh.pack
                || s.input_sets != fresh.input_sets
                || s.xla_options != fresh.xla_options
            {
                return Err(CampaignError::Usage(format!(
                    "{} holds a different campaign (seed {}, shard {}/{}, backends {:?}, pack {}, input sets {}, options {:?}); use another --out",
                    cfg.out.display(),
                    s.seed,
                    s.shard.0,
                    s.shard.1,
                    s.backends,
                    s.pack,
                    s.input_sets,
                    s.xla_options
                )));
            }
            (s, true)
        }
        None => (fresh, false),
    };
    let engines = Engines::new(
        &cfg.backends,
        cfg.jobs.max(1),
        cfg.python.clone(),
        cfg.voter,
    )?;
    let xla_info = engines.check_available()?;
    engines.warm_up(cfg.jobs.max(1));
    store.save_state(&state)?;

    let started = Instant::now();
    let start_index = state.next_index;
    let next = AtomicU64::new(start_index);
    let shared = Mutex::new(Shared {
        state,
        pending: BTreeMap::new(),
        timeline: vec![Sample {
            t_s: 0.0,
            modules: 0,
            programs: 0,
            findings: 0,
        }],
        modules_this_run: 0,
        programs_this_run: 0,
        cases_this_run: 0,
        findings_this_run: 0,
        last_save: Instant::now(),
        last_sample: Instant::now(),
    });
    let pb = if cfg.progress && std::io::stderr().is_terminal() {
        let pb = match cfg.stop.iterations {
            Some(n) => indicatif::ProgressBar::new(n.saturating_sub(start_index)),
            None => indicatif::ProgressBar::new_spinner(),
        };
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos} modules {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb.enable_steady_tick(Duration::from_millis(250));
        pb
    } else {
        indicatif::ProgressBar::hidden()
    };
    let tester = Tester {
        campaign_seed: cfg.seed,
        input_sets: cfg.input_sets.max(1),
        generator: cfg.generator.clone(),
        ..Tester::new(
            &engines,
            Some(&store),
            &cfg.xla_options,
            cfg.timeouts.clone(),
        )
    };
    let io_error: Mutex<Option<std::io::Error>> = Mutex::new(None);
    let pack = cfg.pack.max(1);

    std::thread::scope(|s| {
        for _ in 0..cfg.jobs.max(1) {
            s.spawn(|| loop {
                if stop_flag.is_some_and(|f| f.load(Ordering::SeqCst)) {
                    break;
                }
                if cfg.stop.time.is_some_and(|t| started.elapsed() >= t) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::SeqCst);
                if cfg.stop.iterations.is_some_and(|n| k >= n) {
                    break;
                }
                let g = k * sn + si;
                let tg = Instant::now();
                let programs = programs_for(cfg.seed, g, pack, &cfg.generator);
                let gen_ms = tg.elapsed().as_secs_f64() * 1e3;
                let (reports, tm) = tester.test_programs_timed(g, &programs);
                let mut st = stats_of(&reports);
                st.time.add(&tm, gen_ms);
                let mut sh = shared.lock().unwrap_or_else(|e| e.into_inner());
                sh.modules_this_run += 1;
                sh.programs_this_run += st.programs;
                sh.cases_this_run += st.cases;
                sh.findings_this_run += st.findings_new + st.findings_folded;
                sh.pending.insert(k, st);
                // Advance the watermark over completed indices.
                loop {
                    let w = sh.state.next_index;
                    match sh.pending.remove(&w) {
                        Some(st) => {
                            sh.state.stats.merge(&st);
                            sh.state.next_index = w + 1;
                        }
                        None => break,
                    }
                }
                let now = Instant::now();
                if now.duration_since(sh.last_sample) >= Duration::from_millis(500) {
                    sh.last_sample = now;
                    let sample = Sample {
                        t_s: started.elapsed().as_secs_f64(),
                        modules: sh.modules_this_run,
                        programs: sh.programs_this_run,
                        findings: sh.findings_this_run,
                    };
                    sh.timeline.push(sample);
                }
                if now.duration_since(sh.last_save) >= Duration::from_millis(500) {
                    sh.last_save = now;
                    let mut snapshot = sh.state.clone();
                    snapshot.elapsed_s += started.elapsed().as_secs_f64();
                    if let Err(e) = store.save_state(&snapshot) {
                        *io_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    }
                }
                let el = started.elapsed().as_secs_f64().max(1e-9);
                pb.set_position(sh.modules_this_run);
                let findings: Vec<String> = sh
                    .state
                    .stats
                    .verdicts
                    .iter()
                    .filter(|(k, _)| *k != "match" && *k != "unsupported")
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                pb.set_message(format!(
                    "{:.1} modules/s {:.1} programs/s {:.1} cases/s | findings: {} | crashes {} | ops {}",
                    sh.modules_this_run as f64 / el,
                    sh.programs_this_run as f64 / el,
                    sh.cases_this_run as f64 / el,
                    if findings.is_empty() {
                        "none".into()
                    } else {
                        findings.join(" ")
                    },
                    sh.state.stats.verdicts.get("crash").copied().unwrap_or(0),
                    sh.state.stats.op_coverage.len()
                ));
            });
        }
    });
    pb.finish_and_clear();

    let elapsed = started.elapsed().as_secs_f64();
    let mut sh = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    sh.state.elapsed_s += elapsed;
    store.save_state(&sh.state)?;
    if let Some(e) = io_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(CampaignError::Io(e));
    }
    sh.timeline.push(Sample {
        t_s: elapsed,
        modules: sh.modules_this_run,
        programs: sh.programs_this_run,
        findings: sh.findings_this_run,
    });
    let summary = CampaignSummary {
        seed: cfg.seed,
        shard: cfg.shard,
        backends: cfg.backends.clone(),
        xla_options: cfg.xla_options.clone(),
        pack,
        input_sets: cfg.input_sets.max(1),
        jobs: cfg.jobs.max(1),
        elapsed_s: elapsed,
        stats: sh.state.stats.clone(),
        modules_this_run: sh.modules_this_run,
        programs_this_run: sh.programs_this_run,
        cases_this_run: sh.cases_this_run,
        modules_per_s: sh.modules_this_run as f64 / elapsed.max(1e-9),
        programs_per_s: sh.programs_this_run as f64 / elapsed.max(1e-9),
        cases_per_s: sh.cases_this_run as f64 / elapsed.max(1e-9),
        timeline: sh.timeline,
        xla_info,
        out: cfg.out.clone(),
        resumed,
    };
    crate::report::write_reports(&summary, &store)?;
    Ok(summary)
}

// ---------------------------------------------------------------------------------------------
// The libFuzzer entry.

struct FuzzGlobals {
    engines: Engines,
    store: Store,
    generator: generators::Config,
}

fn fuzz_globals() -> &'static FuzzGlobals {
    static G: OnceLock<FuzzGlobals> = OnceLock::new();
    G.get_or_init(|| {
        let out = std::env::var_os("HLO_DIFF_FUZZ_OUT")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("fuzz/findings"));
        let engines = match Engines::new(&["interp".into(), "xla-cpu".into()], 1, None, true) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("hlo_diff: {e}");
                std::process::exit(3);
            }
        };
        if let Err(e) = engines.check_available() {
            eprintln!("hlo_diff: XLA is not available: {e}");
            std::process::exit(3);
        }
        let store = match Store::open(&out) {
            Ok(s) => s,
            Err(e) => {
                eprintln!(
                    "hlo_diff: cannot open the findings store {}: {e}",
                    out.display()
                );
                std::process::exit(3);
            }
        };
        FuzzGlobals {
            engines,
            store,
            generator: generators::Config::default(),
        }
    })
}

/// A finding of [`fuzz_one`].
#[derive(Clone, Debug)]
pub struct Finding {
    pub verdict: Verdict,
    pub dir: Option<PathBuf>,
}

/// One fuzz input: bytes -> module and inputs -> interp vs xla-cpu -> verdict. A finding is
/// written to the store (`HLO_DIFF_FUZZ_OUT`, default `fuzz/findings`) and returned.
pub fn fuzz_one(data: &[u8]) -> Option<Finding> {
    let g = fuzz_globals();
    let mut u = arbitrary::Unstructured::new(data);
    let module = generators::generate(&mut u, &g.generator).ok()?;
    let inputs = generators::generate_inputs(&module, &mut u, &g.generator);
    let seed = data.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100000001b3)
    });
    let tester = Tester {
        campaign_seed: seed,
        ..Tester::new(&g.engines, Some(&g.store), &[], campaign_timeouts())
    };
    let reports = tester.test_programs(
        0,
        &[Program {
            seed,
            module,
            inputs,
        }],
    );
    let r = reports.into_iter().find(|r| r.verdict.is_bug())?;
    Some(Finding {
        dir: r.recorded.map(|r| r.dir().to_path_buf()),
        verdict: r.verdict,
    })
}

/// Loads the campaign state of an output directory (for tools and tests).
pub fn load_state(out: &Path) -> std::io::Result<Option<CampaignState>> {
    Store::open(out)?.load_state()
}

/// Shared handle type for callers that stop a campaign from another thread.
pub type StopFlag = Arc<AtomicBool>;

//! The `Backend` trait: one way of running an HLO module on inputs, and the typed
//! [`Outcome`] every backend returns. Independent of Python: the XLA backends
//! ([`crate::worker::WorkerBackend`]) and the oracle interpreter both implement it.

use hlo::{Literal, Shape};
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A way of running HLO: `xla-cpu`, `xla-gpu`, `stablehlo-ref`, `interp`.
///
/// `run` never panics and never hangs past `opts.timeouts`: everything that can go wrong is
/// an [`Outcome`].
pub trait Backend: Send + Sync {
    /// The backend's name as the command line spells it.
    fn name(&self) -> &str;

    /// Runs `module_text` (HLO module text, handed to XLA verbatim; callers holding an
    /// `hlo::Module` print it first) on `inputs`, one literal per entry parameter (tuple
    /// parameters as tuple literals; they are flattened to their leaves as XLA does).
    fn run(&self, module_text: &str, inputs: &[Literal], opts: &RunOptions) -> Outcome;
}

/// Where in the pipeline something happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// XLA's HLO text parser.
    Parse,
    /// HLO -> MLIR (StableHLO), the form jaxlib compiles.
    Convert,
    /// XLA's compiler (for `stablehlo-ref`: the legalization check and wrapper).
    Compile,
    /// Transferring inputs, running, reading outputs back.
    Execute,
}

impl Stage {
    pub const ALL: [Stage; 4] = [Stage::Parse, Stage::Convert, Stage::Compile, Stage::Execute];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Parse => "parse",
            Stage::Convert => "convert",
            Stage::Compile => "compile",
            Stage::Execute => "execute",
        }
    }

    pub fn from_name(s: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|st| st.name() == s)
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Wall-clock limits per stage. A stage that runs past its limit becomes
/// [`Outcome::Timeout`] (and the worker running it is killed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StageTimeouts {
    pub parse: Duration,
    pub convert: Duration,
    pub compile: Duration,
    pub execute: Duration,
}

impl Default for StageTimeouts {
    fn default() -> Self {
        StageTimeouts {
            parse: Duration::from_secs(20),
            convert: Duration::from_secs(20),
            compile: Duration::from_secs(120),
            execute: Duration::from_secs(60),
        }
    }
}

impl StageTimeouts {
    /// The same limit for every stage.
    pub fn uniform(d: Duration) -> StageTimeouts {
        StageTimeouts {
            parse: d,
            convert: d,
            compile: d,
            execute: d,
        }
    }

    pub fn get(&self, s: Stage) -> Duration {
        match s {
            Stage::Parse => self.parse,
            Stage::Convert => self.convert,
            Stage::Compile => self.compile,
            Stage::Execute => self.execute,
        }
    }
}

/// Per-run options. Each run's debug options apply to that run's compile only.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunOptions {
    pub timeouts: StageTimeouts,
    /// `xla_dump_to`: XLA writes this compile's dump here.
    pub dump_to: Option<PathBuf>,
    /// `xla_dump_hlo_pass_re`: which passes get per-pass snapshots (needs `dump_to`).
    pub pass_re: Option<String>,
    /// `xla_disable_hlo_passes`: pass names, exactly as XLA names them (`algsimp`).
    pub disabled_passes: Vec<String>,
    /// Any other DebugOptions field as `(name, value)`, e.g.
    /// `("xla_cpu_enable_fast_min_max", "true")`. Booleans and integers are written as text.
    pub env_option_overrides: Vec<(String, String)>,
    /// Return the optimized module XLA compiled ([`RunResult::optimized_hlo`]).
    pub return_optimized_hlo: bool,
    /// Return the module as XLA received it after HLO -> MLIR -> HLO
    /// ([`RunResult::before_optimizations_hlo`]), even without `dump_to`.
    pub return_before_optimizations_hlo: bool,
    /// Compile even when the worker keeps an executable of this module and options (a rerun
    /// that tells nondeterminism must compile again). Without it, the same module on other
    /// inputs reuses the executable ([`Timings::cached`]).
    pub fresh_compile: bool,
    /// No stage runs past this instant, whatever its limit (the caller's clock: a campaign's
    /// end). A run cut by it is [`Outcome::Timeout`] like any other; the caller, who set the
    /// deadline, tells the two apart by the clock.
    #[serde(skip)]
    pub deadline: Option<Instant>,
}

impl RunOptions {
    /// Whether `deadline` has passed.
    pub fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// Milliseconds per stage, as the worker measured them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Timings {
    pub parse_ms: f64,
    pub convert_ms: f64,
    pub compile_ms: f64,
    pub execute_ms: f64,
    /// The worker ran an executable it had compiled for an earlier request (same module text
    /// and options), so there was no parse, convert or compile this time.
    pub cached: bool,
}

impl Timings {
    pub fn total_ms(&self) -> f64 {
        self.parse_ms + self.convert_ms + self.compile_ms + self.execute_ms
    }
}

/// A successful run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunResult {
    /// The result's array leaves in depth-first order, as XLA returns them
    /// (a tuple result is flattened; `()` gives none). Each is a `Literal::Array`.
    pub outputs: Vec<Literal>,
    /// The entry computation's result shape, when the backend knows it.
    pub result_shape: Option<Shape>,
    pub timings: Timings,
    /// The optimized module(s), when [`RunOptions::return_optimized_hlo`] was set.
    pub optimized_hlo: Option<String>,
    /// The module XLA's passes started from (the `before_optimizations` dump of this compile),
    /// when dumping or [`RunOptions::return_before_optimizations_hlo`] was requested.
    pub before_optimizations_hlo: Option<String>,
    /// The dump directory of this compile, when `dump_to` was set.
    pub dump_dir: Option<PathBuf>,
}

impl RunResult {
    /// The result as one literal: the tuple tree rebuilt from the leaves when the shape is
    /// known, else the single leaf (or a tuple of the leaves).
    pub fn result(&self) -> Literal {
        let leaves = self.outputs.iter().filter_map(|l| l.as_array().cloned());
        if let Some(shape) = &self.result_shape {
            if let Some(l) = Literal::from_leaves(shape, &mut leaves.clone()) {
                return l;
            }
        }
        if self.outputs.len() == 1 {
            return self.outputs[0].clone();
        }
        Literal::Tuple(self.outputs.clone())
    }
}

/// What running a module on a backend came to.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    Ok(RunResult),
    /// The backend refused the module or failed it with an ordinary error.
    Rejected {
        stage: Stage,
        message: String,
    },
    /// The process running the stage died: a signal (SIGSEGV, SIGABRT from a CHECK or an
    /// LLVM fatal error, SIGFPE...) or an unexpected exit. `stderr_tail` holds the last
    /// bytes (at most about 4 KiB) it wrote while running this request.
    Crash {
        stage: Stage,
        signal: Option<i32>,
        stderr_tail: String,
    },
    /// The stage ran past its limit; the process was killed.
    Timeout {
        stage: Stage,
    },
    /// The backend does not cover something in this module or these inputs.
    Unsupported {
        what: String,
    },
    /// The backend cannot run here at all (no Python, no jaxlib, no GPU). `why` names the
    /// command that installs what is missing.
    Unavailable {
        why: String,
    },
    /// Not the backend's fault: inputs that do not fit the entry parameters, or the harness
    /// failing to talk to its worker (a protocol violation). Never a finding.
    HarnessError {
        stage: Option<Stage>,
        message: String,
    },
}

impl Outcome {
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Ok(_))
    }

    pub fn as_ok(&self) -> Option<&RunResult> {
        match self {
            Outcome::Ok(r) => Some(r),
            _ => None,
        }
    }

    /// A short name of the outcome kind (`ok`, `rejected`, `crash`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Ok(_) => "ok",
            Outcome::Rejected { .. } => "rejected",
            Outcome::Crash { .. } => "crash",
            Outcome::Timeout { .. } => "timeout",
            Outcome::Unsupported { .. } => "unsupported",
            Outcome::Unavailable { .. } => "unavailable",
            Outcome::HarnessError { .. } => "harness_error",
        }
    }

    /// The stage a failure happened in.
    pub fn stage(&self) -> Option<Stage> {
        match self {
            Outcome::Rejected { stage, .. }
            | Outcome::Crash { stage, .. }
            | Outcome::Timeout { stage } => Some(*stage),
            Outcome::HarnessError { stage, .. } => *stage,
            _ => None,
        }
    }
}

/// The SPMD partitions a module is written for: its header's `num_partitions` (the
/// `HloModule` line; XLA's module config), 1 when it has none. A module partitioned N ways is
/// one global program that XLA's SPMD partitioner splits over N devices.
pub fn module_partitions(module_text: &str) -> usize {
    let Some(header) = module_text
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with("HloModule "))
    else {
        return 1;
    };
    header
        .split([',', ' '])
        .find_map(|w| w.strip_prefix("num_partitions="))
        .and_then(|n| n.parse().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(1)
}

/// How specifically a line of a dying XLA's stderr says what went wrong, most specific first:
/// 0 a CHECK failure, 1 another fatal line of XLA's logging (`F1201 15:18:18.505639 28074
/// file.cc:1615] message`, a `LOG(FATAL)`), 2 an LLVM fatal error, 3 an uncaught C++
/// exception's `what()`, 4 `terminate called`; `None` for any other line. The crash's stderr
/// tail keeps these lines however long the stack trace after them, and the verdict's message
/// is the most specific of them.
pub fn failure_line_rank(l: &str) -> Option<u8> {
    if l.contains("Check failed") {
        Some(0)
    } else if is_fatal_log_line(l) {
        Some(1)
    } else if l.contains("LLVM ERROR") {
        Some(2)
    } else if l.contains("what():") {
        Some(3)
    } else if l.contains("terminate called") {
        Some(4)
    } else {
        None
    }
}

/// A fatal line of XLA's logging: `F`, month and day, a time, a thread id, `file:line]`.
fn is_fatal_log_line(l: &str) -> bool {
    let mut words = l.split_whitespace();
    let (Some(date), Some(time), Some(_thread), Some(at)) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return false;
    };
    date.len() == 5
        && date.starts_with('F')
        && date[1..].bytes().all(|b| b.is_ascii_digit())
        && time.contains(':')
        && at.ends_with(']')
        && at.contains(':')
}

/// The conventional name of a Unix signal number (`SIGSEGV`), or `signal N`.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Ok(r) => write!(
                f,
                "ok ({} outputs, {:.1} ms)",
                r.outputs.len(),
                r.timings.total_ms()
            ),
            Outcome::Rejected { stage, message } => write!(f, "rejected at {stage}: {message}"),
            Outcome::Crash { stage, signal, .. } => match signal {
                Some(s) => write!(f, "crash at {stage}: {}", signal_name(*s)),
                None => write!(f, "crash at {stage}: the worker exited"),
            },
            Outcome::Timeout { stage } => write!(f, "timeout at {stage}"),
            Outcome::Unsupported { what } => write!(f, "unsupported: {what}"),
            Outcome::Unavailable { why } => write!(f, "unavailable: {why}"),
            Outcome::HarnessError { stage, message } => match stage {
                Some(s) => write!(f, "harness error at {s}: {message}"),
                None => write!(f, "harness error: {message}"),
            },
        }
    }
}

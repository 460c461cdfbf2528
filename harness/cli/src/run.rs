//! `hlo-diff run FILE`: run one module on several backends and print the verdict.
//!
//! The file is parsed with our parser for the oracle; XLA gets the original text verbatim.
//! Inputs come from `--inputs` (hlo-diff's literal file format, see [`findings::store`]) or are
//! generated from the parameter shapes with `--seed`. Exit 1 on a bug verdict.

use super::input::{load_inputs_with, load_module, parse_xla_options};
use super::{print_json, Exit, Failure, Global};
use engine::backend::{Backend, Outcome, RunOptions, StageTimeouts};
use engine::interp_backend::InterpBackend;
use engine::worker::{WorkerBackend, WorkerConfig};
use hlo::{ArrayLiteral, Literal};
use judge::classify::{Verdict, VerdictKind, ORACLE, VOTER};
use judge::compare::{scalar_text, Tolerance};
use judge::{Judge, Policy, Trial};
use serde_json::{json, Value};
use std::path::PathBuf;
use tools::repeat::Repeats;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO module text file.
    pub file: PathBuf,
    /// Comma-separated backends: interp, xla-cpu, xla-gpu, stablehlo-ref.
    #[arg(long, default_value = "interp,xla-cpu", value_delimiter = ',')]
    pub backends: Vec<String>,
    /// Inputs in hlo-diff's literal file format (e.g. a finding's `inputs.lit`).
    #[arg(long, value_name = "FILE")]
    pub inputs: Option<PathBuf>,
    /// Seed of the generated inputs (when no --inputs is given).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Percent of generated input elements that are boundary values (NaN, inf, -0, denormals,
    /// min, max). 0, the default, gives plain values as XLA's run_hlo_module does; campaigns
    /// use the generator's rate.
    #[arg(long, default_value_t = 0, value_name = "PERCENT")]
    pub special_values: u32,
    /// An XLA DebugOptions field for this compile, `name=value` (repeatable).
    #[arg(long = "xla-option", value_name = "NAME=VALUE")]
    pub xla_option: Vec<String>,
    /// Values to print per output.
    #[arg(long, default_value_t = 6)]
    pub show: usize,
    /// Run the module N more times on each XLA backend, each in a fresh worker process with a
    /// fresh compile, and count the runs that disagree with the oracle or with the first run
    /// (some XLA bugs show in only a few percent of processes).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub repeat: usize,
    /// For a difference that is no finding, search for the single implementation choice XLA is
    /// free to make that reproduces its result, and name it (the verdict is the set's either
    /// way; this costs an oracle evaluation per choice tried).
    #[arg(long)]
    pub explain: bool,
}

fn checksum(a: &ArrayLiteral) -> String {
    let h = a.data.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100000001b3)
    });
    format!("{h:016x}")
}

fn shape_text(a: &ArrayLiteral) -> String {
    format!(
        "{}[{}]",
        a.ty,
        a.dims
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

fn output_json(a: &ArrayLiteral, show: usize) -> Value {
    let n = a.len().min(show);
    json!({
        "shape": shape_text(a),
        "values": (0..n).map(|i| scalar_text(a.get(i))).collect::<Vec<_>>(),
        "elements": a.len(),
        "checksum": checksum(a),
    })
}

fn outcome_json(o: &Outcome, show: usize) -> Value {
    match o {
        Outcome::Ok(r) => json!({
            "outcome": "ok",
            "timings": r.timings,
            "outputs": r.outputs.iter().flat_map(|l| l.leaves()).map(|a| output_json(a, show)).collect::<Vec<_>>(),
        }),
        other => serde_json::to_value(other).unwrap_or(Value::Null),
    }
}

fn print_outcome(name: &str, o: &Outcome, show: usize) {
    match o {
        Outcome::Ok(r) => {
            let t = &r.timings;
            outln!(
                "{name}: ok (parse {:.1} ms, convert {:.1} ms, compile {:.1} ms, execute {:.1} ms)",
                t.parse_ms,
                t.convert_ms,
                t.compile_ms,
                t.execute_ms
            );
            for (i, a) in r.outputs.iter().flat_map(|l| l.leaves()).enumerate() {
                let n = a.len().min(show);
                let vals: Vec<String> = (0..n).map(|k| scalar_text(a.get(k))).collect();
                outln!(
                    "  output {i}: {} [{}{}] checksum {}",
                    shape_text(a),
                    vals.join(", "),
                    if a.len() > n { ", ..." } else { "" },
                    checksum(a)
                );
            }
        }
        other => outln!("{name}: {other}"),
    }
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let job = Job::load(&args)?;
    let workers = build_workers(&args.backends, global)?;
    let oracle = InterpBackend::new();
    let outcomes = job.run_backends(&args.backends, &workers, &oracle)?;
    // The voter is held to the set on every verdict that is no finding: where it gives a value
    // outside the legitimate results while XLA and the oracle agree, that is reported as a
    // dissent (a common mode of XLA and the oracle, or the voter's own error).
    let policy = if args.explain {
        Policy::FULL.explaining().with_dissent()
    } else {
        Policy::FULL.with_dissent()
    };
    let judgement = job.judge(&workers, &oracle, &outcomes, policy);
    let mut verdict: Verdict = judgement.verdict;
    let mut extra: Vec<(String, Outcome)> = Vec::new();
    if let Some(v) = judgement.voter {
        extra.push((format!("{VOTER} (voter)"), v));
    }
    let mut repeats = Vec::new();
    if args.repeat > 0 {
        repeats = job.repeat(args.repeat, global, &outcomes);
        flag_repeats(&mut verdict, &repeats);
    }
    let exit = if verdict.is_bug() {
        Exit::BugFound
    } else {
        Exit::Clean
    };
    if global.json {
        print_json_report(&args, &verdict, &repeats, &outcomes, &extra);
    } else {
        print_text_report(&args, &verdict, &repeats, &outcomes, &extra);
    }
    Ok(exit)
}

/// The module `run` runs, as text (for XLA) and parsed (for the oracle), with its inputs and
/// what every run of it takes.
struct Job {
    text: String,
    module: hlo::Module,
    inputs: Vec<Literal>,
    opts: RunOptions,
    tol: Tolerance,
}

impl Job {
    /// The module of `args.file`, its inputs (`--inputs`, else generated) and run options
    /// (`--xla-option`).
    fn load(args: &Args) -> Result<Job, Failure> {
        let (text, module) = load_module(&args.file)?;
        let xla_options = parse_xla_options(&args.xla_option)?;
        let inputs = load_inputs_with(
            &module,
            args.inputs.as_deref(),
            args.seed,
            &generators::Config {
                special_value_percent: args.special_values.min(100),
                ..generators::Config::default()
            },
        )?;
        let opts = RunOptions {
            timeouts: StageTimeouts::default(),
            env_option_overrides: xla_options,
            return_before_optimizations_hlo: false,
            ..RunOptions::default()
        };
        let tol = Tolerance::for_module(&module);
        Ok(Job {
            text,
            module,
            inputs,
            opts,
            tol,
        })
    }

    /// Each of `backends` in order: the oracle, or its worker of `workers`. A backend that is
    /// unavailable or a harness error fails the command.
    fn run_backends(
        &self,
        backends: &[String],
        workers: &[WorkerBackend],
        oracle: &InterpBackend,
    ) -> Result<Vec<(String, Outcome)>, Failure> {
        let mut outcomes: Vec<(String, Outcome)> = Vec::new();
        for name in backends {
            let o = if name == ORACLE {
                oracle.run_module(&self.module, &self.inputs)
            } else {
                let b = workers
                    .iter()
                    .find(|w| w.name() == name)
                    .expect("built above");
                b.run(&self.text, &self.inputs, &self.opts)
            };
            if let Outcome::Unavailable { why } = &o {
                return Err(Failure::infrastructure(format!("{name}: {why}")));
            }
            if let Outcome::HarnessError { message, .. } = &o {
                return Err(Failure::bad_input(format!("{name}: {message}")));
            }
            outcomes.push((name.clone(), o));
        }
        Ok(outcomes)
    }

    /// The judge's judgement of `outcomes` under `policy` ([`Policy::FULL`], explaining or
    /// not), the XLA backends of `workers` rerunning.
    fn judge(
        &self,
        workers: &[WorkerBackend],
        oracle: &InterpBackend,
        outcomes: &[(String, Outcome)],
        policy: Policy,
    ) -> judge::Judgement {
        // The voter: the listed one, else stablehlo-ref on the CPU worker.
        let implicit_voter = workers
            .iter()
            .find(|w| w.name() == "xla-cpu")
            .map(WorkerBackend::stablehlo_ref_on);
        let judge = Judge {
            oracle: oracle.clone(),
            xla: workers
                .iter()
                .filter(|w| w.name() != VOTER)
                .map(|w| w as &dyn Backend)
                .collect(),
            voter: implicit_voter.as_ref().map(|v| v as &dyn Backend),
            opts: self.opts.clone(),
            policy,
        };
        judge.judge(&Trial {
            module: &self.module,
            text: Some(&self.text),
            inputs: &self.inputs,
            outcomes,
            reruns: &[],
            tolerance: &self.tol,
        })
    }

    /// `--repeat N`: every XLA backend of `outcomes` run `runs` more times on fresh processes.
    fn repeat(&self, runs: usize, global: &Global, outcomes: &[(String, Outcome)]) -> Vec<Repeats> {
        tools::repeat::repeat_all(
            runs,
            global.python.clone(),
            &self.module,
            &self.text,
            &self.inputs,
            outcomes,
            &self.opts,
            &self.tol,
        )
    }
}

/// The XLA workers of `backends` (the oracle needs none; `stablehlo-ref` shares the CPU
/// worker when one is listed before it); an unknown name is bad input.
fn build_workers(backends: &[String], global: &Global) -> Result<Vec<WorkerBackend>, Failure> {
    let mut workers: Vec<WorkerBackend> = Vec::new();
    for name in backends {
        if name == ORACLE {
            continue;
        }
        let cfg = WorkerConfig::new(engine::worker::Platform::Cpu)
            .with_python(global.python.clone())
            .with_workers(1);
        let b = match (
            name.as_str(),
            workers.iter().find(|w| w.name() == "xla-cpu"),
        ) {
            ("stablehlo-ref", Some(cpu)) => Some(WorkerBackend::stablehlo_ref_on(cpu)),
            _ => WorkerBackend::by_name(name, cfg),
        };
        match b {
            Some(b) => workers.push(b),
            None => {
                return Err(Failure::bad_input(format!(
                "unknown backend `{name}` (known: interp, xla-cpu, xla-gpu, stablehlo-ref, pjrt)"
            )))
            }
        }
    }
    Ok(workers)
}

/// A first run that agreed does not clear runs that did not: a verdict that is no bug becomes
/// `nondeterministic` (label `xla`) when a repeated run disagreed with the oracle or with the
/// first run.
fn flag_repeats(verdict: &mut Verdict, repeats: &[Repeats]) {
    if let Some(r) = repeats
        .iter()
        .find(|r| r.disagree_with_oracle > 0 || r.differ_from_first > 0)
    {
        if !verdict.is_bug() {
            verdict.kind = VerdictKind::Nondeterministic;
            verdict.backend = Some(r.backend.clone());
            verdict.label = Some(judge::Label::Xla);
            verdict.explained = None;
            verdict.message = format!(
                "{} of {} fresh processes disagreed with the oracle, {} differed from the \
                 first run",
                r.disagree_with_oracle, r.runs, r.differ_from_first
            );
        }
    }
}

/// The `--json` report: the verdict, the repeats and every backend's outcome (`extra`: the
/// voter's).
fn print_json_report(
    args: &Args,
    verdict: &Verdict,
    repeats: &[Repeats],
    outcomes: &[(String, Outcome)],
    extra: &[(String, Outcome)],
) {
    let mut backends = serde_json::Map::new();
    for (n, o) in outcomes.iter().chain(extra.iter()) {
        backends.insert(n.clone(), outcome_json(o, args.show));
    }
    print_json(&json!({
        "file": args.file,
        "verdict": verdict.kind.name(),
        "label": verdict.label.map(|l| l.name()),
        "details": verdict,
        "explained": verdict.explained,
        "dissent": verdict.dissent,
        "repeat": repeats,
        "backends": backends,
    }));
}

/// The text report: every backend's outcome (`extra`: the voter's), the verdict, what explained
/// it, the repeats and the comparison's summary or the verdict's message.
fn print_text_report(
    args: &Args,
    verdict: &Verdict,
    repeats: &[Repeats],
    outcomes: &[(String, Outcome)],
    extra: &[(String, Outcome)],
) {
    for (n, o) in outcomes.iter().chain(extra.iter()) {
        print_outcome(n, o, args.show);
    }
    outln!("verdict: {}", verdict.short());
    if let Some(d) = &verdict.dissent {
        outln!(
            "  dissent (not a finding; triage it against the texts): XLA and the oracle agree, \
             but stablehlo-ref gives a value outside the legitimate results: {}",
            d.summary().replace("voter gives", "stablehlo-ref gives")
        );
    }
    if let Some(e) = &verdict.explained {
        outln!(
            "  explained ({}): {}\n  the difference it excused: max abs {:.3e}, max rel {:.3e}, max {} ulps on output(s) {:?}",
            e.choice, e.what, e.max_abs_err, e.max_rel_err, e.max_ulps, e.outputs
        );
    }
    for r in repeats {
        outln!(
            "repeat on {}: {} fresh processes, {} disagreed with the oracle, {} differed from the first run ({:?})",
            r.backend, r.runs, r.disagree_with_oracle, r.differ_from_first, r.outcomes
        );
    }
    if let Some(c) = verdict.comparison.as_ref().filter(|c| !c.is_match()) {
        out!("{}", c.summary());
    } else if verdict.kind != VerdictKind::Match {
        outln!("  {}", verdict.message);
    }
}

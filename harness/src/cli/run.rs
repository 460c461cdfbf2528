//! `hlo-diff run FILE`: run one module on several backends and print the verdict.
//!
//! The file is parsed with our parser for the oracle; XLA gets the original text verbatim.
//! Inputs come from `--inputs` (hlo-diff's literal file format, see [`crate::store`]) or are
//! generated from the parameter shapes with `--seed`. Exit 1 on a bug verdict.

use super::{print_json, Exit, Failure, Global};
use crate::backend::{Backend, Outcome, RunOptions, StageTimeouts};
use crate::classify::{classify, Evidence, Verdict, VerdictKind, ORACLE, VOTER};
use crate::compare::{scalar_text, Tolerance};
use crate::interp_backend::InterpBackend;
use crate::worker::{WorkerBackend, WorkerConfig};
use hlo::{ArrayLiteral, Literal};
use serde_json::{json, Value};
use std::path::PathBuf;

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
}

/// Parses `name=value` options.
pub fn parse_xla_options(opts: &[String]) -> Result<Vec<(String, String)>, Failure> {
    opts.iter()
        .map(|o| match o.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(Failure::bad_input(format!(
                "--xla-option {o:?}: expected NAME=VALUE"
            ))),
        })
        .collect()
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
            println!(
                "{name}: ok (parse {:.1} ms, convert {:.1} ms, compile {:.1} ms, execute {:.1} ms)",
                t.parse_ms, t.convert_ms, t.compile_ms, t.execute_ms
            );
            for (i, a) in r.outputs.iter().flat_map(|l| l.leaves()).enumerate() {
                let n = a.len().min(show);
                let vals: Vec<String> = (0..n).map(|k| scalar_text(a.get(k))).collect();
                println!(
                    "  output {i}: {} [{}{}] checksum {}",
                    shape_text(a),
                    vals.join(", "),
                    if a.len() > n { ", ..." } else { "" },
                    checksum(a)
                );
            }
        }
        other => println!("{name}: {other}"),
    }
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", args.file.display())))?;
    let module = hlo::parse::parse_module(&text)
        .map_err(|e| Failure::bad_input(format!("{}:{e}", args.file.display())))?;
    let xla_options = parse_xla_options(&args.xla_option)?;
    let inputs: Vec<Literal> = match &args.inputs {
        Some(p) => crate::store::read_literals(p)
            .map_err(|e| Failure::bad_input(format!("{}: {e}", p.display())))?,
        None => generators::generate_inputs_from_seed(
            &module,
            args.seed,
            &generators::Config {
                special_value_percent: args.special_values.min(100),
                ..generators::Config::default()
            },
        ),
    };
    let n_params = module.entry_computation().parameters().len();
    if inputs.len() != n_params {
        return Err(Failure::bad_input(format!(
            "{}: the module takes {n_params} parameters, the inputs file holds {}",
            args.inputs
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            inputs.len()
        )));
    }
    let opts = RunOptions {
        timeouts: StageTimeouts::default(),
        env_option_overrides: xla_options,
        return_before_optimizations_hlo: false,
        ..RunOptions::default()
    };
    let mut workers: Vec<WorkerBackend> = Vec::new();
    for name in &args.backends {
        if name == ORACLE {
            continue;
        }
        let cfg = WorkerConfig::new(crate::worker::Platform::Cpu)
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
                    "unknown backend `{name}` (known: interp, xla-cpu, xla-gpu, stablehlo-ref)"
                )))
            }
        }
    }
    let tol = Tolerance::for_module(&module);
    let mut outcomes: Vec<(String, Outcome)> = Vec::new();
    for name in &args.backends {
        let o = if name == ORACLE {
            InterpBackend::new().run_module(&module, &inputs)
        } else {
            let b = workers
                .iter()
                .find(|w| w.name() == name)
                .expect("built above");
            b.run(&text, &inputs, &opts)
        };
        if let Outcome::Unavailable { why } = &o {
            return Err(Failure::infrastructure(format!("{name}: {why}")));
        }
        if let Outcome::HarnessError { message, .. } = &o {
            return Err(Failure::bad_input(format!("{name}: {message}")));
        }
        outcomes.push((name.clone(), o));
    }
    let mut verdict: Verdict = classify(&outcomes, &Evidence::new(&tol));
    let mut extra: Vec<(String, Outcome)> = Vec::new();
    if verdict.kind == VerdictKind::Mismatch {
        // Re-run the differing backend (nondeterminism) and ask the voter when not listed.
        let bname = verdict.backend.clone().unwrap_or_default();
        let mut reruns = Vec::new();
        if let Some(b) = workers.iter().find(|w| w.name() == bname) {
            let fresh = RunOptions {
                fresh_compile: true,
                ..opts.clone()
            };
            reruns.push((bname.clone(), b.run(&text, &inputs, &fresh)));
        }
        let voter_outcome = if let Some(what) = crate::classify::voter_abstains(&module) {
            Some(Outcome::Unsupported { what })
        } else if args.backends.iter().any(|b| b == VOTER) {
            None
        } else {
            workers.iter().find(|w| w.name() == "xla-cpu").map(|cpu| {
                WorkerBackend::stablehlo_ref_on(cpu).run(&text, &inputs, &RunOptions::default())
            })
        };
        verdict = classify(
            &outcomes,
            &Evidence {
                reruns: &reruns,
                voter: voter_outcome.as_ref(),
                ..Evidence::new(&tol)
            },
        );
        if let Some(v) = voter_outcome {
            extra.push((format!("{VOTER} (voter)"), v));
        }
    }
    if verdict.kind == VerdictKind::Mismatch {
        if let Some(v) = crate::campaign::explain_by_allowed_choices(
            &InterpBackend::new(),
            &module,
            &inputs,
            &outcomes,
            &tol,
        ) {
            verdict = v;
        }
    }
    let xla: Vec<&WorkerBackend> = workers.iter().filter(|w| w.name() != VOTER).collect();
    let verdict = crate::campaign::check_equivalent_forms(
        verdict,
        &InterpBackend::new(),
        &xla,
        &module,
        &inputs,
        &opts,
        &tol,
    );
    let exit = if verdict.is_bug() {
        Exit::BugFound
    } else {
        Exit::Clean
    };
    if global.json {
        let mut backends = serde_json::Map::new();
        for (n, o) in outcomes.iter().chain(extra.iter()) {
            backends.insert(n.clone(), outcome_json(o, args.show));
        }
        print_json(&json!({
            "file": args.file,
            "verdict": verdict.kind.name(),
            "label": verdict.label.map(|l| l.name()),
            "details": verdict,
            "backends": backends,
        }));
    } else {
        for (n, o) in outcomes.iter().chain(extra.iter()) {
            print_outcome(n, o, args.show);
        }
        println!("verdict: {}", verdict.short());
        if let Some(c) = verdict.comparison.as_ref().filter(|c| !c.is_match()) {
            print!("{}", c.summary());
        } else if verdict.kind != VerdictKind::Match {
            println!("  {}", verdict.message);
        }
    }
    Ok(exit)
}

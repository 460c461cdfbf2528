//! `repro-bisect FILE` and `hlo-diff bisect FILE`: name the XLA pass that changed the module's
//! result (see [`crate::bisect`]).

use super::{print_json, Exit, Failure, Global};
use crate::bisect::{bisect, BisectError, BisectOptions};
use crate::worker::{WorkerBackend, WorkerConfig, INSTALL_HINT};
use hlo::{Literal, Module};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO module text.
    pub file: PathBuf,
    /// Inputs (an hlo-diff literal file, or `<shape><TAB><literal>` lines); default: inputs
    /// generated from --seed.
    #[arg(long)]
    pub inputs: Option<PathBuf>,
    /// The XLA backend: xla-cpu or xla-gpu.
    #[arg(long, default_value = "xla-cpu")]
    pub backend: String,
    /// Seed of generated inputs (without --inputs).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// An XLA debug option for every compile, NAME=VALUE (repeatable), e.g.
    /// xla_cpu_enable_fast_min_max=true.
    #[arg(long = "xla-option", value_name = "NAME=VALUE")]
    pub xla_options: Vec<String>,
    /// Keep XLA's dump in this directory (default: a temporary one).
    #[arg(long)]
    pub dump_dir: Option<PathBuf>,
    /// Skip the recompile with the culprit pass disabled.
    #[arg(long)]
    pub no_confirm: bool,
    /// Multiplies the comparator's default tolerances.
    #[arg(long, default_value_t = 1.0)]
    pub tolerance_scale: f64,
}

/// `repro-bisect`'s own command line (the same options as `hlo-diff bisect`).
#[derive(Debug, clap::Parser)]
#[command(
    name = "repro-bisect",
    version,
    about = "Name the XLA pass that changed an HLO module's result"
)]
pub struct Standalone {
    #[command(flatten)]
    pub global: Global,
    #[command(flatten)]
    pub args: Args,
}

/// Reads and parses an HLO module; errors name file:line:col.
pub fn load_module(path: &Path) -> Result<(String, Module), Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))?;
    let m = hlo::parse::parse_module(&text).map_err(|e| {
        Failure::bad_input(format!(
            "{}:{}:{}: {}",
            path.display(),
            e.line,
            e.column,
            e.message
        ))
    })?;
    Ok((text, m))
}

/// The inputs from --inputs, or generated from the seed; checked against the entry parameters.
pub fn load_inputs(m: &Module, path: Option<&Path>, seed: u64) -> Result<Vec<Literal>, Failure> {
    let inputs = match path {
        Some(p) => crate::repro::read_inputs(p).map_err(Failure::bad_input)?,
        None => generators::generate_inputs_from_seed(m, seed, &generators::Config::default()),
    };
    let params = m.entry_computation().parameter_shapes();
    if params.len() != inputs.len() {
        return Err(Failure::bad_input(format!(
            "the module has {} parameters but {} inputs were given",
            params.len(),
            inputs.len()
        )));
    }
    for (k, (s, l)) in params.iter().zip(&inputs).enumerate() {
        if !s.compatible(&l.shape()) {
            return Err(Failure::bad_input(format!(
                "input {k} is {} but parameter {k} is {}",
                l.shape(),
                s
            )));
        }
    }
    Ok(inputs)
}

/// `NAME=VALUE` pairs.
pub fn parse_xla_options(opts: &[String]) -> Result<Vec<(String, String)>, Failure> {
    opts.iter()
        .map(|o| {
            let o = o.trim_start_matches("--");
            o.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| Failure::bad_input(format!("--xla-option {o}: expected NAME=VALUE")))
        })
        .collect()
}

/// An XLA backend by name, checked to start.
pub fn xla_backend(name: &str, global: &Global) -> Result<WorkerBackend, Failure> {
    let cfg = WorkerConfig::new(crate::worker::Platform::Cpu)
        .with_python(global.python.clone())
        .with_workers(1);
    let b = match name {
        "xla-cpu" | "xla-gpu" => WorkerBackend::by_name(name, cfg),
        _ => None,
    }
    .ok_or_else(|| Failure::bad_input(format!("--backend {name}: expected xla-cpu or xla-gpu")))?;
    if let Err(o) = b.info() {
        return Err(Failure::infrastructure(format!(
            "{name} cannot start: {o}\ninstall with: {INSTALL_HINT}"
        )));
    }
    Ok(b)
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let (text, m) = load_module(&args.file)?;
    let inputs = load_inputs(&m, args.inputs.as_deref(), args.seed)?;
    let backend = xla_backend(&args.backend, global)?;
    let opts = BisectOptions {
        run: crate::backend::RunOptions {
            env_option_overrides: parse_xla_options(&args.xla_options)?,
            ..Default::default()
        },
        tolerance_scale: args.tolerance_scale,
        dump_dir: args.dump_dir.clone(),
        no_confirm: args.no_confirm,
    };
    let report = match bisect(&text, &inputs, &backend, &opts) {
        Ok(r) => r,
        Err(BisectError::BadInput(e)) => return Err(Failure::bad_input(e)),
        Err(BisectError::Unavailable(e)) => {
            return Err(Failure::infrastructure(format!(
                "{e}\ninstall with: {INSTALL_HINT}"
            )))
        }
        Err(e @ BisectError::NoResult { .. }) => {
            // A crash or rejection is a finding, but there are no values to bisect.
            if global.json {
                print_json(
                    &serde_json::json!({"bug": true, "bisected": false, "error": e.to_string()}),
                );
            } else {
                println!("{e}\nno values to bisect: run `hlo-diff minimize` on the module instead");
            }
            return Ok(Exit::BugFound);
        }
        Err(e @ BisectError::Failed(_)) => return Err(Failure::bad_input(e.to_string())),
    };
    if global.json {
        let mut v = serde_json::to_value(&report)
            .map_err(|e| Failure::bad_input(format!("cannot serialize the report: {e}")))?;
        v["bug"] = serde_json::Value::Bool(report.found_divergence());
        print_json(&v);
    } else {
        print!("{}", report.render());
    }
    Ok(if report.found_divergence() {
        Exit::BugFound
    } else {
        Exit::Clean
    })
}

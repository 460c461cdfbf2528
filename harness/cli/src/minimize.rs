//! `hlo-diff minimize X`: X is a finding directory of the store (`module.hlo` + `inputs.lit`)
//! or an HLO file with `--inputs`. Minimizes while the verdict keeps its signature and writes
//! the repro directory (`--out`).

use super::bisect::xla_backend;
use super::input::{
    finding_xla_options, load_inputs, load_module, merge_xla_options, parse_xla_options,
};
use super::{print_json, Exit, Failure, Global};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tools::minimize::{Case, Options};
use tools::triage::{minimize_case, write_repro, Session};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A finding directory or an HLO module file.
    pub target: PathBuf,
    /// Inputs for an HLO file (default: generated from --seed).
    #[arg(long)]
    pub inputs: Option<PathBuf>,
    /// Where to write the repro directory (default: `<target>.repro`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// XLA backends besides the oracle (comma-separated).
    #[arg(long, default_value = "xla-cpu")]
    pub backends: String,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// An XLA debug option for every compile, NAME=VALUE (repeatable).
    #[arg(long = "xla-option", value_name = "NAME=VALUE")]
    pub xla_options: Vec<String>,
    /// Most candidate runs.
    #[arg(long, default_value_t = 2000)]
    pub max_tests: usize,
    /// Wall-clock limit in seconds.
    #[arg(long, default_value_t = 600)]
    pub time_limit: u64,
    #[arg(long, default_value_t = 1.0)]
    pub tolerance_scale: f64,
    /// Do not ask the voter (stablehlo-ref) about the minimized mismatch.
    #[arg(long)]
    pub no_voter: bool,
}

/// The module file and inputs of a finding directory, or of a file with --inputs.
pub fn load_case(target: &Path, inputs: Option<&Path>, seed: u64) -> Result<Case, Failure> {
    if target.is_dir() {
        let module = target.join("module.hlo");
        let lit = target.join("inputs.lit");
        if !module.is_file() {
            return Err(Failure::bad_input(format!(
                "{}: not a finding directory (no module.hlo)",
                target.display()
            )));
        }
        let (_, m) = load_module(&module)?;
        let inputs = load_inputs(&m, Some(inputs.unwrap_or(&lit)), seed)?;
        return Ok(Case { module: m, inputs });
    }
    let (_, m) = load_module(target)?;
    let inputs = load_inputs(&m, inputs, seed)?;
    Ok(Case { module: m, inputs })
}

/// The session for `--backends` and XLA options.
pub fn session(
    backends: &str,
    xla_options: Vec<(String, String)>,
    scale: f64,
    voter: bool,
    global: &Global,
) -> Result<Session, Failure> {
    let mut workers = Vec::new();
    for name in backends.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if name == "interp" {
            continue;
        }
        workers.push(Arc::new(xla_backend(name, global)?));
    }
    Ok(Session {
        workers,
        opts: engine::backend::RunOptions {
            env_option_overrides: xla_options,
            ..Default::default()
        },
        tolerance_scale: scale,
        voter,
    })
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let case = load_case(&args.target, args.inputs.as_deref(), args.seed)?;
    // A finding is minimized under the XLA options it was found with (given ones added).
    let stored = if args.target.is_dir() {
        finding_xla_options(&args.target)?
    } else {
        Vec::new()
    };
    let xla_options = merge_xla_options(&stored, &parse_xla_options(&args.xla_options)?);
    let session = session(
        &args.backends,
        xla_options,
        args.tolerance_scale,
        !args.no_voter,
        global,
    )?;
    let opts = Options {
        max_tests: args.max_tests,
        time_limit: Duration::from_secs(args.time_limit),
        ..Options::default()
    };
    let m = match minimize_case(&session.runner(), case, &opts).map_err(Failure::bad_input)? {
        Err(v) => {
            if global.json {
                print_json(
                    &serde_json::json!({"bug": false, "verdict": v.kind.name(), "message": v.message}),
                );
            } else {
                outln!(
                    "no bug to minimize: the verdict is {} ({})",
                    v.kind.name(),
                    v.message
                );
            }
            return Ok(Exit::Clean);
        }
        Ok(m) => m,
    };
    let out = args.out.clone().unwrap_or_else(|| {
        let mut p = args.target.clone().into_os_string();
        p.push(".repro");
        PathBuf::from(p)
    });
    let files = write_repro(&out, &m, &session, None).map_err(Failure::bad_input)?;
    if global.json {
        print_json(&serde_json::json!({
            "bug": true,
            "verdict": m.last.verdict.kind.name(),
            "signature": m.target.signature,
            "instructions_before": m.stats.instructions_before,
            "instructions_after": m.stats.instructions_after,
            "ratio": m.stats.ratio(),
            "stats": m.stats,
            "repro": files,
        }));
    } else {
        outln!(
            "{}: {} -> {} instructions ({:.0}%), {} tests in {:.1} s",
            m.last.verdict.short(),
            m.stats.instructions_before,
            m.stats.instructions_after,
            100.0 * m.stats.ratio(),
            m.stats.tests,
            m.stats.elapsed_ms as f64 / 1e3
        );
        outln!("repro: {}", out.display());
    }
    Ok(Exit::BugFound)
}

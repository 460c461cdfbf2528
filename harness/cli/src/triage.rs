//! `hlo-diff triage X`: X is a dump directory from a bug report (every module's
//! `before_optimizations.txt` is triaged) or an HLO file. Runs each module on the backends; a
//! module that shows a bug is minimized, bisected and written up (`<out>/<module>/`: the repro
//! directory and `report.md`, the markdown of an upstream issue).

use super::input::{load_inputs, load_module};
use super::minimize::session;
use super::{print_json, Exit, Failure, Global};
use std::path::PathBuf;
use std::time::Duration;
use tools::minimize::{Case, Options};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A dump directory or an HLO module file.
    pub target: PathBuf,
    /// Inputs (for a single module; default: generated from --seed).
    #[arg(long)]
    pub inputs: Option<PathBuf>,
    /// Where reports go (default: `triage-out`).
    #[arg(long, default_value = "triage-out")]
    pub out: PathBuf,
    #[arg(long, default_value = "xla-cpu")]
    pub backends: String,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[arg(long = "xla-option", value_name = "NAME=VALUE")]
    pub xla_options: Vec<String>,
    #[arg(long, default_value_t = 1000)]
    pub max_tests: usize,
    /// Wall-clock limit of each minimization, seconds.
    #[arg(long, default_value_t = 300)]
    pub time_limit: u64,
    #[arg(long, default_value_t = 1.0)]
    pub tolerance_scale: f64,
    /// Do not ask the voter (stablehlo-ref) about minimized mismatches.
    #[arg(long)]
    pub no_voter: bool,
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    // The modules to triage: (name, path).
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    if args.target.is_dir() {
        let index = hlo::dump::read_dump_dir(&args.target)
            .map_err(|e| Failure::bad_input(e.to_string()))?;
        for m in &index.modules {
            if let Some(p) = &m.before_optimizations {
                let name = format!("module_{:04}.{}", m.id, m.name.clone().unwrap_or_default());
                files.push((name, args.target.join(p)));
            }
        }
        if files.is_empty() {
            return Err(Failure::bad_input(format!(
                "{}: no before_optimizations.txt in this dump directory",
                args.target.display()
            )));
        }
    } else {
        let name = args
            .target
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "module".into());
        files.push((name, args.target.clone()));
    }
    // Every module is read and verified before anything runs: bad input loses no work.
    let mut cases = Vec::with_capacity(files.len());
    for (name, path) in &files {
        let (_, m) = load_module(path)?;
        let inputs = load_inputs(&m, args.inputs.as_deref(), args.seed)?;
        cases.push((name, Case { module: m, inputs }));
    }
    let session = session(
        &args.backends,
        super::input::parse_xla_options(&args.xla_options)?,
        args.tolerance_scale,
        !args.no_voter,
        global,
    )?;
    let opts = Options {
        max_tests: args.max_tests,
        time_limit: Duration::from_secs(args.time_limit),
        ..Options::default()
    };
    let mut results = Vec::new();
    for (name, case) in cases {
        let out = args.out.join(name.replace(['/', ' '], "_"));
        let r =
            tools::triage::triage(&session, name, case, &out, &opts).map_err(Failure::bad_input)?;
        if !global.json {
            match &r.report {
                Some(rep) => println!(
                    "{name}: {} ({} -> {} instructions){}\n  report: {rep}",
                    r.verdict,
                    r.instructions_before.unwrap_or(0),
                    r.instructions_after.unwrap_or(0),
                    r.culprit
                        .as_ref()
                        .map(|c| format!(", culprit pass {c}"))
                        .unwrap_or_default()
                ),
                None => println!("{name}: {} ({})", r.verdict, r.message),
            }
        }
        results.push(r);
    }
    let bug = results.iter().any(|r| r.bug);
    if global.json {
        print_json(&serde_json::json!({"bug": bug, "modules": results}));
    }
    Ok(if bug { Exit::BugFound } else { Exit::Clean })
}

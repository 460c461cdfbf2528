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
    /// Also run each module N more times in fresh worker processes (fresh compiles) and count
    /// the runs that disagree with the oracle or with the first run.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub repeat: usize,
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
        let repeat = repeats(&session, &case, args.repeat, global);
        let mut r =
            tools::triage::triage(&session, name, case, &out, &opts).map_err(Failure::bad_input)?;
        r.repeat = repeat;
        if !global.json {
            for x in &r.repeat {
                println!(
                    "{name}: repeat on {}: {} of {} fresh processes disagreed with the oracle, {} differed from the first run",
                    x.backend, x.disagree_with_oracle, x.runs, x.differ_from_first
                );
            }
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

/// `--repeat N` for one module: its first run on the oracle and every XLA backend of the
/// session, then N more in fresh processes (none when N is 0).
fn repeats(
    session: &tools::triage::Session,
    case: &Case,
    n: usize,
    global: &Global,
) -> Vec<tools::repeat::Repeats> {
    use engine::backend::Backend;
    if n == 0 {
        return Vec::new();
    }
    let text = hlo::print::module_to_string(&case.module);
    let mut outcomes = vec![(
        engine::ORACLE.to_string(),
        engine::interp_backend::InterpBackend::new().run_module(&case.module, &case.inputs),
    )];
    for w in &session.workers {
        outcomes.push((
            w.name().to_string(),
            w.run(&text, &case.inputs, &session.opts),
        ));
    }
    tools::repeat::repeat_all(
        n,
        global.python.clone(),
        &case.module,
        &text,
        &case.inputs,
        &outcomes,
        &session.opts,
        &judge::compare::Tolerance::for_module(&case.module),
    )
}

//! `hlo-diff triage X`: X is a dump directory from a bug report (every module's
//! `before_optimizations.txt` is triaged), an HLO file, or a reporter's Python script
//! (`repro.py [-- ARGS]`: run with XLA dumping to a private directory, then every module it
//! compiled is triaged with the arguments it really passed where XLA's snapshot caught them).
//! Runs each module on the backends; a module that shows a bug is minimized, bisected, rerun in
//! fresh processes and written up (`<out>/<module>/`: the repro directory and `report.md`, the
//! markdown of an upstream issue). A script's triage directory also holds `report.json` (every
//! module, its inputs' origin, verdict and files), `script/` (the script, its stdout and stderr,
//! `run.sh`) and `dump/`.

use super::input::{load_inputs, load_module};
use super::minimize::session;
use super::{print_json, Exit, Failure, Global};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tools::minimize::{Case, Options};
use tools::script::{InputsSource, ScriptOptions};
use tools::triage::{Context, ReleasePlan, Session, TriageResult};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A dump directory, an HLO module file, or a Python script (`.py`) to run.
    pub target: PathBuf,
    /// Arguments for the script (after `--`).
    #[arg(last = true)]
    pub script_args: Vec<String>,
    /// Inputs (for a single module; default: generated from --seed). Any format `run` reads.
    #[arg(long)]
    pub inputs: Option<PathBuf>,
    /// Where reports go (default: `triage-out`).
    #[arg(long, default_value = "triage-out")]
    pub out: PathBuf,
    #[arg(long, default_value = "xla-cpu")]
    pub backends: String,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// An XLA DebugOptions field, `name=value` (repeatable); a script runs with it in XLA_FLAGS.
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
    /// Rerun each bug's minimized module N times in fresh worker processes (fresh compiles) and
    /// count the runs that disagree with the oracle or with the first run (default: 3 for a
    /// script, else 0; given for a dump or a file, clean modules are rerun too).
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,
    /// A script's `JAX_PLATFORMS`.
    #[arg(long, default_value = "cpu")]
    pub platforms: String,
    /// A script's time limit, seconds: then its process group is killed (the dump is kept).
    #[arg(long, default_value_t = 120)]
    pub script_timeout: u64,
    /// Release-bisect each bug's minimized module over these jaxlib releases (`A..B` of the
    /// releases pip lists, or a comma list): its report's "Release range" and report.json.
    #[arg(long, value_name = "A..B|A,B,...")]
    pub releases: Option<String>,
    /// Where each release's venv is kept (default: $HLO_DIFF_VENV_CACHE, else
    /// ~/.cache/hlo-diff/venvs).
    #[arg(long, value_name = "DIR")]
    pub venv_cache: Option<PathBuf>,
    /// Never install a release: those without a venv in the cache cannot run.
    #[arg(long)]
    pub no_install: bool,
}

/// The release plan of `--releases` (checked before anything runs).
fn release_plan(args: &Args, global: &Global) -> Result<Option<ReleasePlan>, Failure> {
    let Some(spec) = &args.releases else {
        return Ok(None);
    };
    let cache = super::bisect::venv_cache(args.venv_cache.as_ref(), args.no_install, global);
    let releases = super::bisect::release_list(spec, &cache)?;
    Ok(Some(ReleasePlan {
        releases,
        cache,
        spec: spec.clone(),
    }))
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    if args.target.extension().is_some_and(|e| e == "py") {
        return run_script(args, global);
    }
    if !args.script_args.is_empty() {
        return Err(Failure::bad_input(
            "arguments after `--` are for a Python script (`triage repro.py -- ARGS`)",
        ));
    }
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
    let releases = release_plan(&args, global)?;
    let session = make_session(&args, global)?;
    let opts = options(&args);
    let ctx = Context {
        repeat: args.repeat.unwrap_or(0),
        repeat_clean: true,
        python: global.python.clone(),
        versions: cpu_version(),
        releases,
        ..Context::default()
    };
    let mut results = Vec::new();
    for (name, case) in cases {
        let out = args.out.join(name.replace(['/', ' '], "_"));
        let r = tools::triage::triage(&session, name, case, &out, &opts, &ctx)
            .map_err(Failure::bad_input)?;
        if !global.json {
            print_result(&r);
        }
        results.push(r);
    }
    let bug = results.iter().any(|r| r.bug);
    if global.json {
        print_json(&serde_json::json!({"bug": bug, "modules": results}));
    }
    Ok(if bug { Exit::BugFound } else { Exit::Clean })
}

fn make_session(args: &Args, global: &Global) -> Result<Session, Failure> {
    session(
        &args.backends,
        super::input::parse_xla_options(&args.xla_options)?,
        args.tolerance_scale,
        !args.no_voter,
        global,
    )
}

fn options(args: &Args) -> Options {
    Options {
        max_tests: args.max_tests,
        time_limit: Duration::from_secs(args.time_limit),
        ..Options::default()
    }
}

fn cpu_version() -> Vec<(String, String)> {
    let cpu = engine::environment::cpu();
    if cpu.model.is_empty() {
        Vec::new()
    } else {
        vec![("cpu".into(), cpu.model)]
    }
}

fn print_result(r: &TriageResult) {
    let name = &r.module;
    for x in &r.repeat {
        outln!(
            "{name}: repeat on {}: {} of {} fresh processes disagreed with the oracle, {} differed from the first run",
            x.backend, x.disagree_with_oracle, x.runs, x.differ_from_first
        );
    }
    match &r.report {
        Some(rep) => outln!(
            "{name}: {} ({} -> {} instructions){}\n  title: {}\n  report: {rep}",
            r.verdict,
            r.instructions_before.unwrap_or(0),
            r.instructions_after.unwrap_or(0),
            r.culprit_summary
                .as_ref()
                .map(|c| format!(", culprit: {c}"))
                .unwrap_or_default(),
            r.title.as_deref().unwrap_or("")
        ),
        None => outln!("{name}: {} ({})", r.verdict, r.message),
    }
    if let Some(rr) = &r.releases {
        outln!("  release range: {}", rr.conclusion);
    }
}

/// One module of a script's run in `report.json`.
#[derive(serde::Serialize)]
struct ScriptModuleReport {
    #[serde(flatten)]
    result: TriageResult,
    /// `snapshot` (the script's own arguments) or `generated` (the module's shapes).
    inputs: &'static str,
    inputs_detail: String,
    /// XLA finished compiling it in the script (the dump has its optimized module).
    compiled_in_script: bool,
    /// The dump's files of this module (relative to the triage directory).
    dump_files: Vec<String>,
    /// The devices XLA partitioned it over (its header's `num_partitions`; 1: one device).
    partitions: usize,
}

/// `report.json` of a script's triage.
fn write_report_json(out: &Path, v: &serde_json::Value) -> Result<(), Failure> {
    let p = out.join("report.json");
    std::fs::write(
        &p,
        serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".into()),
    )
    .map_err(|e| Failure::bad_input(format!("{}: {e}", p.display())))
}

fn last_lines(s: &str, n: usize) -> String {
    let v: Vec<&str> = s.lines().rev().take(n).collect();
    v.into_iter().rev().collect::<Vec<_>>().join("\n")
}

fn run_script(args: Args, global: &Global) -> Result<Exit, Failure> {
    let start = Instant::now();
    if args.inputs.is_some() {
        return Err(Failure::bad_input(
            "--inputs does not apply to a script: its modules take the arguments the script passed (or generated ones)",
        ));
    }
    if !args.target.is_file() {
        return Err(Failure::bad_input(format!(
            "{}: no such script",
            args.target.display()
        )));
    }
    let python = global
        .python
        .clone()
        .unwrap_or_else(engine::worker::default_python);
    if !python.exists() {
        return Err(Failure::infrastructure(format!(
            "no Python at {} to run the script\ninstall with: {}",
            python.display(),
            engine::worker::INSTALL_HINT
        )));
    }
    let xla_options = super::input::parse_xla_options(&args.xla_options)?;
    let releases = release_plan(&args, global)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", args.out.display())))?;
    eprintln!(
        "running {} with {} (JAX_PLATFORMS={}, limit {} s), XLA dumping to {}",
        args.target.display(),
        python.display(),
        args.platforms,
        args.script_timeout,
        args.out.join("dump").display()
    );
    let script_opts = ScriptOptions {
        python: python.clone(),
        script: args.target.clone(),
        args: args.script_args.clone(),
        dir: args.out.clone(),
        platforms: args.platforms.clone(),
        xla_options: xla_options.clone(),
        timeout: Duration::from_secs(args.script_timeout),
    };
    let run = tools::script::run_script(&script_opts).map_err(Failure::bad_input)?;
    let dump = args.out.join("dump");
    let index = hlo::dump::read_dump_dir(&dump).map_err(|e| Failure::bad_input(e.to_string()))?;
    let modules = tools::script::script_modules(&dump, &index);
    eprintln!(
        "the script {} after {:.1} s; it compiled {} module(s)",
        run.ending(),
        run.elapsed_ms as f64 / 1000.0,
        modules.len()
    );
    let script_json = serde_json::to_value(&run).unwrap_or_default();
    // The script died (signal, abort, time limit) compiling a module of which XLA wrote only the
    // StableHLO: the crash happened before HLO.
    let died = run.signal.is_some() || run.timed_out;
    let pre_hlo = tools::script::mlir_only_modules(&dump, &index);
    let crash_site = pre_hlo.last().filter(|_| died).cloned();
    if modules.is_empty() && crash_site.is_none() {
        let (failure, what) = if let Some(pkg) = &run.missing_module {
            (
                Failure::infrastructure(format!(
                    "the script imports the Python module `{pkg}`, which {} lacks: install the package that provides it into that Python, or point --python at a Python that has it\n{}",
                    python.display(),
                    last_lines(&run.stderr_tail, 4)
                )),
                "missing_package",
            )
        } else if !run.succeeded() {
            (
                Failure::bad_input(format!(
                    "the script failed before compiling anything ({}); nothing to triage. Its stderr ends:\n{}",
                    run.ending(),
                    last_lines(&run.stderr_tail, 8)
                )),
                "failed_before_compiling",
            )
        } else {
            let flags = match run.xla_flags_set_by_script.last() {
                Some(f) => format!(
                    "; the script set XLA_FLAGS itself (last to `{f}`), and triage's dump flags were kept after its own"
                ),
                None => String::new(),
            };
            (
                Failure::bad_input(format!(
                    "the script ran ({}) but XLA compiled nothing under JAX_PLATFORMS={}{flags}: it ran no jitted computation on that platform, or took every executable from a persistent compilation cache it enables itself (jax's own is switched off); nothing to triage",
                    run.ending(),
                    args.platforms
                )),
                "compiled_nothing",
            )
        };
        write_report_json(
            &args.out,
            &serde_json::json!({
                "bug": false, "error": what, "message": failure.message,
                "script": script_json, "modules": [],
                "elapsed_ms": start.elapsed().as_millis() as u64,
            }),
        )?;
        if global.json {
            print_json(
                &serde_json::json!({"bug": false, "error": what, "message": failure.message, "script": script_json}),
            );
        }
        return Err(failure);
    }
    let session = make_session(&args, global)?;
    let opts = options(&args);
    let mut versions = cpu_version();
    let user_flags: Vec<String> = std::env::var("XLA_FLAGS")
        .ok()
        .map(|f| f.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    versions.push((
        "XLA_FLAGS of the script's run (besides dumping)".into(),
        if user_flags.is_empty() && xla_options.is_empty() {
            "none".into()
        } else {
            user_flags
                .into_iter()
                .chain(xla_options.iter().map(|(k, v)| format!("--{k}={v}")))
                .collect::<Vec<_>>()
                .join(" ")
        },
    ));
    let script_name = run.script_copy.trim_start_matches("script/").to_string();
    let mut reports: Vec<ScriptModuleReport> = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    let n = modules.len();
    for (i, sm) in modules.iter().enumerate() {
        let t0 = Instant::now();
        let path = dump.join(&sm.before_optimizations);
        let dump_files: Vec<String> = sm
            .relevant_files()
            .iter()
            .map(|f| format!("dump/{f}"))
            .collect();
        let skipped = |verdict: &str, message: String| ScriptModuleReport {
            result: TriageResult::no_bug(&sm.name, verdict, message, None, t0.elapsed()),
            inputs: "none",
            inputs_detail: String::new(),
            compiled_in_script: sm.compiled(),
            dump_files: dump_files.clone(),
            partitions: 1,
        };
        let m = match load_module(&path) {
            Ok((text, m)) => {
                let body: String = text.lines().skip(1).collect::<Vec<_>>().join("\n");
                if let Some((_, first)) = seen.iter().find(|(b, _)| *b == body) {
                    let r = skipped("duplicate", format!("the same module as {first}"));
                    eprintln!("[{}/{n}] {}: the same module as {first}", i + 1, sm.name);
                    reports.push(r);
                    continue;
                }
                seen.push((body, sm.name.clone()));
                m
            }
            Err(f) => {
                eprintln!("[{}/{n}] {}: not triaged: {}", i + 1, sm.name, f.message);
                reports.push(skipped(
                    "not_parsed",
                    format!(
                        "hlo-diff cannot read this module (not a bug report): {}",
                        f.message
                    ),
                ));
                continue;
            }
        };
        let (inputs, source) = match tools::script::snapshot_inputs(&dump, sm, &m) {
            Ok((ins, f)) => (ins, InputsSource::Snapshot(f)),
            Err(why) => match generators::try_generate_inputs_from_seed(
                &m,
                args.seed,
                &generators::Config::default(),
                interp::DEFAULT_MAX_BYTES,
            ) {
                Ok(ins) => (ins, InputsSource::Generated(why)),
                Err(e) => {
                    eprintln!("[{}/{n}] {}: not triaged: {e}", i + 1, sm.name);
                    reports.push(skipped(
                        "not_run",
                        format!("{}: no inputs: {why}; generating them: {e}", path.display()),
                    ));
                    continue;
                }
            },
        };
        let instructions = m.instruction_count();
        let partitions = m.num_partitions();
        let ctx = Context {
            releases: releases.clone(),
            from_script: Some(sm.compiled()),
            repeat: args.repeat.unwrap_or(3),
            repeat_clean: false,
            python: global.python.clone(),
            origin: vec![
                format!(
                    "found by `hlo-diff triage {}{}`: module `{}` of the script's XLA dump ({} instructions before minimization){}",
                    script_name,
                    if run.args.is_empty() {
                        String::new()
                    } else {
                        format!(" -- {}", run.args.join(" "))
                    },
                    sm.name,
                    instructions,
                    if sm.compiled() {
                        ""
                    } else {
                        "; XLA never finished compiling it in the script"
                    }
                ),
                format!("inputs: {}", source.describe()),
                format!("the script {}", run.ending()),
            ],
            versions: versions.clone(),
            original_files: sm.relevant_files().iter().map(|f| dump.join(f)).collect(),
            python_repro: Some(format!(
                "sh ../{}   # the reporter's script, {}",
                run.rerun, script_name
            )),
        };
        let out = args.out.join(sm.name.replace(['/', ' '], "_"));
        let case = Case { module: m, inputs };
        let r = tools::triage::triage(&session, &sm.name, case, &out, &opts, &ctx)
            .map_err(Failure::bad_input)?;
        eprintln!(
            "[{}/{n}] {} ({} instructions{}, inputs {}): {}{} in {:.1} s",
            i + 1,
            sm.name,
            instructions,
            if partitions > 1 {
                format!(", SPMD on {partitions} devices")
            } else {
                String::new()
            },
            match &source {
                InputsSource::Snapshot(_) => "from the script",
                InputsSource::Generated(_) => "generated",
            },
            r.verdict,
            r.title
                .as_ref()
                .map(|t| format!(": {t}"))
                .unwrap_or_default(),
            t0.elapsed().as_secs_f64()
        );
        reports.push(ScriptModuleReport {
            inputs: match &source {
                InputsSource::Snapshot(_) => "snapshot",
                InputsSource::Generated(_) => "generated",
            },
            inputs_detail: source.describe(),
            compiled_in_script: sm.compiled(),
            dump_files,
            partitions,
            result: r,
        });
    }
    let mut pre_hlo_reports = Vec::new();
    if let Some(site) = &crash_site {
        let t0 = Instant::now();
        let n_runs = args.repeat.unwrap_or(3);
        eprintln!(
            "[pre-HLO] {}: the script {} while XLA compiled it (only its StableHLO was dumped); rerunning the script {n_runs} time(s)",
            site.name,
            run.ending()
        );
        let same = tools::script::rerun_count(&script_opts, &run, n_runs);
        let all_versions: Vec<(String, String)> = session
            .versions()
            .into_iter()
            .chain(versions.clone())
            .collect();
        let r = tools::script::write_pre_hlo_report(
            &dump,
            &args.out.join(site.name.replace(['/', ' '], "_")),
            site,
            &run,
            (same, n_runs),
            &all_versions,
        )
        .map_err(Failure::bad_input)?;
        eprintln!(
            "[pre-HLO] {}: {}: {} in {:.1} s",
            site.name,
            r.title,
            r.reproduced,
            t0.elapsed().as_secs_f64()
        );
        pre_hlo_reports.push(r);
    }
    let bugs = reports.iter().filter(|r| r.result.bug).count() + pre_hlo_reports.len();
    let summary = serde_json::json!({
        "bug": bugs > 0,
        "bugs": bugs,
        "script": script_json,
        "pre_hlo": pre_hlo_reports,
        "versions": session.versions().into_iter().chain(versions.clone()).collect::<Vec<_>>(),
        "release_range": match &args.releases {
            Some(spec) => format!("--releases {spec}: per bug, in modules[].releases"),
            None => "not asked (--releases A..B)".to_string(),
        },
        "modules": reports,
        "elapsed_ms": start.elapsed().as_millis() as u64,
    });
    write_report_json(&args.out, &summary)?;
    if global.json {
        print_json(&summary);
    } else {
        for r in &reports {
            print_result(&r.result);
        }
        for r in &pre_hlo_reports {
            outln!(
                "{}: {} (stage {})\n  title: {}\n  report: {}",
                r.module,
                r.verdict,
                r.stage,
                r.title,
                r.report
            );
        }
        outln!(
            "{bugs} bug(s) in {n} module(s) in {:.1} s; triage directory: {} (report.json)",
            start.elapsed().as_secs_f64(),
            args.out.display()
        );
    }
    if bugs > 0 {
        return Ok(Exit::BugFound);
    }
    // No bug; a module XLA rejected is the script's error (or hlo-diff's limit), said as one.
    if let Some(r) = reports.iter().find(|r| r.result.verdict == "rejected") {
        return Err(Failure::bad_input(format!(
            "no XLA bug found; {}: {}",
            r.result.module, r.result.message
        )));
    }
    if !run.succeeded() {
        eprintln!(
            "note: the script {}, but hlo-diff found no XLA bug in the modules it compiled; its stderr ends:\n{}",
            run.ending(),
            last_lines(&run.stderr_tail, 4)
        );
    }
    Ok(Exit::Clean)
}

//! `repro-bisect FILE` and `hlo-diff bisect FILE`: name the XLA pass that changed the module's
//! result (see [`tools::bisect`]).

use super::input::{load_inputs, load_module, parse_xla_options};
use super::{print_json, Exit, Failure, Global};
use engine::worker::{WorkerBackend, WorkerConfig, INSTALL_HINT};
use tools::bisect::{bisect, BisectError, BisectOptions};
use tools::releases::{bisect_releases, Release, ReleaseOptions, VenvCache};

use std::path::PathBuf;

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
    /// Skip every recompile: the one with the culprit pass disabled and the disable-pass
    /// search.
    #[arg(long)]
    pub no_confirm: bool,
    /// At most this many compiles for the disable-pass search, and as many kernels run alone
    /// by kernel isolation.
    #[arg(long, default_value_t = 60)]
    pub search_budget: usize,
    /// Print the report as a markdown section (for an issue) instead of text.
    #[arg(long)]
    pub markdown: bool,
    /// Write the first wrong kernel that isolation finds, alone with its operand values, as a
    /// repro directory here.
    #[arg(long)]
    pub kernel_repro: Option<PathBuf>,
    /// Multiplies the comparator's default tolerances.
    #[arg(long, default_value_t = 1.0)]
    pub tolerance_scale: f64,
    /// Release bisection instead of pass bisection: run the module on each jaxlib release of
    /// `A..B` (the releases `pip index versions jaxlib` lists, inclusive) or of a comma list,
    /// by binary search, and report the last good and first bad release.
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

/// The venv cache of `--releases`, creating venvs with the default Python's interpreter.
pub fn venv_cache(dir: Option<&PathBuf>, no_install: bool, global: &Global) -> VenvCache {
    let base = global
        .python
        .clone()
        .unwrap_or_else(engine::worker::default_python);
    let mut c = VenvCache::new(
        dir.cloned()
            .unwrap_or_else(tools::releases::default_cache_dir),
        base,
    );
    c.install = !no_install;
    c
}

/// The releases a `--releases` value names (a range is read from pip's list).
pub fn release_list(spec: &str, cache: &VenvCache) -> Result<Vec<Release>, Failure> {
    tools::releases::select(spec, || {
        tools::releases::available_releases(&cache.base_python)
    })
    .map_err(Failure::bad_input)
}

/// Progress of a release bisection, on stderr (stdout keeps the report or the JSON).
pub fn release_progress(line: &str) {
    eprintln!("releases: {line}");
}

fn run_releases(
    args: &Args,
    spec: &str,
    text: &str,
    m: &hlo::Module,
    inputs: &[hlo::Literal],
    global: &Global,
) -> Result<Exit, Failure> {
    if args.backend != "xla-cpu" && args.backend != "xla-gpu" {
        return Err(Failure::bad_input(format!(
            "--backend {}: expected xla-cpu or xla-gpu",
            args.backend
        )));
    }
    let cache = venv_cache(args.venv_cache.as_ref(), args.no_install, global);
    let releases = release_list(spec, &cache)?;
    let opts = ReleaseOptions {
        cache,
        backend: args.backend.clone(),
        run: engine::backend::RunOptions {
            env_option_overrides: parse_xla_options(&args.xla_options)?,
            ..Default::default()
        },
        tolerance_scale: args.tolerance_scale,
        target: None,
        target_from: String::new(),
    };
    let report = bisect_releases(text, m, inputs, &releases, &opts, &release_progress)
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    let bug = report
        .tried
        .iter()
        .any(|t| t.state == tools::releases::State::Bad);
    if global.json {
        print_json(&serde_json::json!({"bug": bug, "releases": report}));
    } else if args.markdown {
        out!("{}", report.markdown());
    } else {
        out!("{}", report.render());
    }
    Ok(if bug { Exit::BugFound } else { Exit::Clean })
}

/// `repro-bisect`'s own command line (the same options as `hlo-diff bisect`).
#[derive(Debug, clap::Parser)]
#[command(
    name = "repro-bisect",
    version,
    about = "Name the XLA pass that changed an HLO module's result, or with --releases the jaxlib release"
)]
pub struct Standalone {
    #[command(flatten)]
    pub global: Global,
    #[command(flatten)]
    pub args: Args,
}

/// An XLA backend by name, checked to start.
pub fn xla_backend(name: &str, global: &Global) -> Result<WorkerBackend, Failure> {
    let cfg = WorkerConfig::new(engine::worker::Platform::Cpu)
        .with_python(global.python.clone())
        .with_workers(1);
    let b = match name {
        "xla-cpu" | "xla-gpu" | "pjrt" => WorkerBackend::by_name(name, cfg),
        _ => None,
    }
    .ok_or_else(|| {
        Failure::bad_input(format!(
            "--backend {name}: expected xla-cpu, xla-gpu or pjrt"
        ))
    })?;
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
    if let Some(spec) = &args.releases {
        return run_releases(&args, spec, &text, &m, &inputs, global);
    }
    let backend = xla_backend(&args.backend, global)?;
    let opts = BisectOptions {
        run: engine::backend::RunOptions {
            env_option_overrides: parse_xla_options(&args.xla_options)?,
            ..Default::default()
        },
        tolerance_scale: args.tolerance_scale,
        dump_dir: args.dump_dir.clone(),
        no_confirm: args.no_confirm,
        search_budget: args.search_budget,
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
            // Rejected before XLA's passes (parse, conversion): a finding, nothing to bisect.
            if global.json {
                print_json(
                    &serde_json::json!({"bug": true, "bisected": false, "error": e.to_string()}),
                );
            } else {
                outln!("{e}\nno values to bisect: run `hlo-diff minimize` on the module instead");
            }
            return Ok(Exit::BugFound);
        }
        Err(e @ BisectError::Failed(_)) => return Err(Failure::bad_input(e.to_string())),
    };
    if let (Some(dir), Some(iso)) = (&args.kernel_repro, &report.isolation) {
        if let Some(written) = iso.write_repro(dir, &args.backend, &opts.run.env_option_overrides) {
            written.map_err(|e| Failure::bad_input(format!("{}: {e}", dir.display())))?;
            if !global.json {
                outln!("kernel repro: {}", dir.display());
            }
        }
    }
    if global.json {
        let mut v = serde_json::to_value(&report)
            .map_err(|e| Failure::bad_input(format!("cannot serialize the report: {e}")))?;
        v["bug"] = serde_json::Value::Bool(report.found_divergence());
        print_json(&v);
    } else if args.markdown {
        out!("{}", report.markdown());
    } else {
        out!("{}", report.render());
    }
    Ok(if report.found_divergence() {
        Exit::BugFound
    } else {
        Exit::Clean
    })
}

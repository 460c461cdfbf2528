//! `hlo-diff recheck DIR...`: tests stored findings again, each exactly as a campaign tests a
//! program (same comparator, classifier, rerun and voter), with the current build and the current
//! jaxlib. Answers "which of these still reproduce, and how are they labelled now?" after an
//! oracle fix or an XLA upgrade. DIR is a finding directory or a campaign's output directory
//! (its `findings/` are all rechecked). Nothing is written.
//!
//! XLA CPU's code depends on the host's vector features, so a finding whose stored environment
//! (`meta.environment`) differs from this host's in CPU features, jaxlib version or the host
//! the oracle imitates gets a warning on stderr ("found on a host with avx512_fp16, rechecked
//! on one without") and, with `--json`, `environment_warnings` in its row.

use super::input::{finding_xla_options, load_inputs, load_module, merge_xla_options};
use super::{print_json, Exit, Failure, Global};
use judge::classify::Verdict;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tools::campaign::{campaign_timeouts, Engines, Program, Tester};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Finding directories, or campaign output directories (their `findings/`).
    #[arg(required = true)]
    pub targets: Vec<PathBuf>,
    /// Backends, as for `fuzz`.
    #[arg(long, default_value = "interp,xla-cpu")]
    pub backends: String,
    /// An XLA DebugOptions field for every compile, `name=value` (repeatable).
    #[arg(long = "xla-option", value_name = "NAME=VALUE")]
    pub xla_option: Vec<String>,
    /// Parallel jobs (one XLA worker each); default: the number of cores.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Do not ask stablehlo-ref to vote on mismatches.
    #[arg(long)]
    pub no_voter: bool,
    /// Test the finding on these inputs instead of its stored `inputs.lit` (one finding only;
    /// any format `run --inputs` reads).
    #[arg(long)]
    pub inputs: Option<PathBuf>,
}

/// The finding directories named by `targets`, sorted, each once.
fn finding_dirs(targets: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut dirs = Vec::new();
    for t in targets {
        if t.join("module.hlo").is_file() {
            dirs.push(t.clone());
            continue;
        }
        let root = if t.join("findings").is_dir() {
            t.join("findings")
        } else {
            t.clone()
        };
        let rd = std::fs::read_dir(&root).map_err(|e| {
            Failure::bad_input(format!(
                "{}: not a finding or campaign directory: {e}",
                t.display()
            ))
        })?;
        let before = dirs.len();
        for e in rd.flatten() {
            if e.path().join("module.hlo").is_file() {
                dirs.push(e.path());
            }
        }
        if dirs.len() == before {
            return Err(Failure::bad_input(format!(
                "{}: no finding directories (with module.hlo) in it",
                t.display()
            )));
        }
    }
    dirs.sort();
    dirs.dedup();
    Ok(dirs)
}

/// The label a finding was stored with (`finding.json`), if it says.
fn stored_label(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("finding.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let sig = v.get("signature")?;
    let kind = sig.get("kind")?.as_str()?.to_string();
    Some(match sig.get("label").and_then(|l| l.as_str()) {
        Some(l) => format!("{kind}/{l}"),
        None => kind,
    })
}

/// The environment a finding was stored with (`meta.environment` of `finding.json`), if any.
fn stored_environment(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("finding.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("meta")?.get("environment").cloned()
}

fn verdict_name(v: &Verdict) -> String {
    match (v.is_bug(), v.label) {
        (true, Some(l)) => format!("{}/{}", v.kind.name(), l.name()),
        _ => v.kind.name().to_string(),
    }
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let dirs = finding_dirs(&args.targets)?;
    let xla_options = super::input::parse_xla_options(&args.xla_option)?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .clamp(1, dirs.len().max(1));
    if args.inputs.is_some() && dirs.len() != 1 {
        return Err(Failure::bad_input(format!(
            "--inputs replaces one finding's inputs, but {} findings were named",
            dirs.len()
        )));
    }
    // Load everything first: bad input is reported before any XLA work.
    let mut cases = Vec::with_capacity(dirs.len());
    for d in &dirs {
        let (_, module) = load_module(&d.join("module.hlo"))?;
        let stored = d.join("inputs.lit");
        let inputs = load_inputs(&module, Some(args.inputs.as_deref().unwrap_or(&stored)), 0)?;
        // Each finding is tested under the XLA options it was found with (given ones added).
        let opts = merge_xla_options(&finding_xla_options(d)?, &xla_options);
        cases.push((d.clone(), module, inputs, opts));
    }
    let names: Vec<String> = args
        .backends
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let engines = Engines::new(&names, jobs, global.python.clone(), !args.no_voter)
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    let xla_info = engines
        .check_available()
        .map_err(|e| Failure::infrastructure(e.to_string()))?;
    let here = engine::environment::Environment::capture(
        &global
            .python
            .clone()
            .unwrap_or_else(engine::worker::default_python),
        engine::environment::hello_of(&xla_info),
        &xla_options,
    )
    .with_pjrt(&xla_info)
    .to_json();
    // Per finding: how the host it was found on differs from this one.
    let warnings: Vec<Vec<String>> = cases
        .iter()
        .map(|(d, ..)| {
            stored_environment(d)
                .map(|found| engine::environment::differences(&found, &here))
                .unwrap_or_default()
        })
        .collect();

    let next = AtomicUsize::new(0);
    let unavailable: Mutex<Option<String>> = Mutex::new(None);
    let results: Mutex<Vec<Option<(String, Verdict)>>> = Mutex::new(vec![None; cases.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((dir, module, inputs, opts)) = cases.get(i) else {
                    break;
                };
                let tester = Tester::new(&engines, None, opts, campaign_timeouts());
                let p = Program {
                    seed: 0,
                    module: module.clone(),
                    inputs: inputs.clone(),
                    config: generators::Config::default(),
                    origin: None,
                };
                let report = tester.test_programs(0, std::slice::from_ref(&p));
                if let Some(tools::campaign::Fault::Unavailable(why)) = tester.take_fault() {
                    *unavailable.lock().unwrap() = Some(why);
                }
                let v = report
                    .into_iter()
                    .next()
                    .map(|r| r.verdict)
                    .expect("one program gives one report");
                let was = stored_label(dir).unwrap_or_else(|| "?".into());
                if !global.json {
                    outln!(
                        "{}: was {was}, now {}: {}",
                        dir.display(),
                        verdict_name(&v),
                        v.message
                    );
                }
                for w in &warnings[i] {
                    eprintln!("warning: {}: {w}", dir.display());
                }
                results.lock().unwrap()[i] = Some((was, v));
            });
        }
    });
    if let Some(why) = unavailable.into_inner().unwrap() {
        return Err(Failure::infrastructure(format!(
            "an XLA backend became unavailable during the recheck: {why}"
        )));
    }
    let results = results.into_inner().unwrap();
    let mut still = 0usize;
    let mut tally: std::collections::BTreeMap<String, usize> = Default::default();
    let mut rows = Vec::new();
    // Per bucket (a finding's minimized.json): (title, findings, still bugs).
    let mut buckets: std::collections::BTreeMap<String, (String, usize, usize)> =
        Default::default();
    for (((dir, _, _, _), r), warned) in cases.iter().zip(results).zip(&warnings) {
        let (was, v) = r.expect("every case was tested");
        let now = verdict_name(&v);
        if v.is_bug() {
            still += 1;
        }
        *tally.entry(now.clone()).or_insert(0) += 1;
        let (id, title) = match findings::bucket::MinimizedRecord::read(dir) {
            Some(m) => (m.bucket_id, m.title),
            None => ("unbucketed".to_string(), "not minimized yet".to_string()),
        };
        let b = buckets.entry(id.clone()).or_insert((title, 0, 0));
        b.1 += 1;
        b.2 += usize::from(v.is_bug());
        rows.push(
            json!({"finding": dir, "bucket": id, "was": was, "now": now, "verdict": v,
                         "environment_warnings": warned}),
        );
    }
    if global.json {
        let per_bucket: Vec<_> = buckets
            .iter()
            .map(|(id, (title, n, s))| json!({"bucket": id, "title": title, "findings": n, "still_bugs": s}))
            .collect();
        print_json(
            &json!({"findings": rows, "buckets": per_bucket, "tally": tally,
                           "still_bugs": still, "environment": here}),
        );
    } else {
        let elsewhere = warnings.iter().filter(|w| !w.is_empty()).count();
        if elsewhere > 0 {
            outln!(
                "\n{elsewhere} of these were found on a different host or jaxlib (see the warnings)"
            );
        }
        outln!("\n{} findings rechecked; now:", cases.len());
        for (k, n) in &tally {
            outln!("  {n:5}  {k}");
        }
        outln!("\nper bucket (still a bug / findings):");
        for (id, (title, n, s)) in &buckets {
            outln!("  {s:3} / {n:<3} {id}  {title}");
        }
    }
    Ok(if still > 0 {
        Exit::BugFound
    } else {
        Exit::Clean
    })
}

//! From findings to bugs: every stored finding not minimized yet is minimized (keeping its
//! verdict's signature), bisected when it is a mismatch (the culprit pass is part of its
//! bucket), and written back as `repro/` plus `minimized.json` in its directory
//! ([`findings::bucket::MinimizedRecord`]). The record is written last and atomically, so a
//! killed campaign loses nothing and never minimizes a finding twice.

use crate::bisect::{bisect, BisectOptions, BisectReport};
use crate::minimize::{Case, Options};
use crate::triage::{minimize_case, write_repro, Session};
use engine::backend::{Backend, RunOptions};
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use findings::bucket::{BucketSignature, MinimizedRecord};
use findings::store::{read_literals, FindingRecord, Store};
pub use findings::summary::MinimizeSummary;
use judge::VerdictKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How much minimizing a campaign does.
#[derive(Clone, Debug)]
pub struct MinimizeConfig {
    /// Wall-clock budget of the whole phase (`None`: until every finding is done).
    pub budget: Option<Duration>,
    /// Limit per finding.
    pub per_finding: Duration,
    /// Most predicate runs per finding.
    pub max_tests: usize,
    /// Bisect minimized mismatches (the culprit pass goes into the bucket).
    pub bisect: bool,
    /// Chunked delta debugging (see [`crate::minimize::Options::chunked`]).
    pub chunked: bool,
}

impl Default for MinimizeConfig {
    fn default() -> Self {
        MinimizeConfig {
            budget: None,
            per_finding: Duration::from_secs(60),
            max_tests: 600,
            bisect: true,
            chunked: true,
        }
    }
}

/// The bucket's culprit from a bisection: the pass, `below-hlo` when every snapshot and the
/// optimized module were evaluated and agreed, `hlo-to-mlir` when the module XLA received
/// already differs; else empty (not established).
pub fn culprit_of(b: &BisectReport) -> String {
    if let Some(c) = &b.culprit {
        return c.pass.clone();
    }
    if b.input_matches_before_optimizations == Some(false) {
        return "hlo-to-mlir".into();
    }
    if b.evidence.below_hlo {
        return "below-hlo".into();
    }
    String::new()
}

/// Loads a stored finding as a case.
fn load(dir: &Path) -> Result<(FindingRecord, Case), String> {
    let rec: FindingRecord = std::fs::read(dir.join("finding.json"))
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
        .map_err(|e| format!("{}: {e}", dir.join("finding.json").display()))?;
    let text = std::fs::read_to_string(dir.join("module.hlo"))
        .map_err(|e| format!("{}: {e}", dir.join("module.hlo").display()))?;
    let module = hlo::parse::parse_module(&text)
        .map_err(|e| format!("{}:{e}", dir.join("module.hlo").display()))?;
    let inputs = read_literals(&dir.join("inputs.lit"))
        .map_err(|e| format!("{}: {e}", dir.join("inputs.lit").display()))?;
    Ok((rec, Case { module, inputs }))
}

/// A record of a finding that could not be minimized at all.
fn failed_record(why: String, sig: Option<BucketSignature>, t0: Instant) -> MinimizedRecord {
    let bucket = sig.unwrap_or(BucketSignature {
        kind: VerdictKind::Unsupported,
        backend: String::new(),
        ops: Vec::new(),
        symptom: String::new(),
        culprit: String::new(),
        message: findings::store::normalize_message(&why),
    });
    MinimizedRecord {
        status: "failed".into(),
        bucket_id: bucket.id(),
        title: bucket.title(),
        bucket,
        instructions_before: 0,
        instructions_after: 0,
        tests: 0,
        elapsed_ms: t0.elapsed().as_millis(),
        repro: None,
        bisect: None,
        message: why,
    }
}

/// Minimizes `case` on `backend` under `xla_options` (keeping the signature of the verdict it
/// shows), bisects a minimized mismatch, and buckets it; the repro directory goes to
/// `repro_dir` when given. `stored` is the verdict the case was found with: when the case
/// shows no bug any more, its bucket comes from that verdict (`not-reproduced`); without one,
/// the record says the case is no bug (status `no-bug`).
pub fn bucket_case(
    case: Case,
    stored: Option<&judge::Verdict>,
    backend: &Arc<WorkerBackend>,
    xla_options: Vec<(String, String)>,
    cfg: &MinimizeConfig,
    limit: Duration,
    repro_dir: Option<&Path>,
) -> MinimizedRecord {
    let t0 = Instant::now();
    let original = stored.map(|v| BucketSignature::of(v, &case.module, None));
    let session = Session {
        workers: vec![backend.clone()],
        opts: RunOptions {
            env_option_overrides: xla_options,
            ..RunOptions::default()
        },
        tolerance_scale: 1.0,
        voter: false,
    };
    let opts = Options {
        max_tests: cfg.max_tests,
        time_limit: limit,
        chunked: cfg.chunked,
    };
    let instructions = case.module.instruction_count();
    let ops = findings::bucket::ops_of(&case.module);
    let m = match minimize_case(&session.runner(), case, &opts) {
        Ok(Ok(m)) => m,
        Ok(Err(v)) => {
            let (status, bucket) = match original {
                Some(b) => ("not-reproduced", b),
                None => (
                    "no-bug",
                    BucketSignature {
                        kind: v.kind,
                        backend: v.backend.clone().unwrap_or_default(),
                        ops,
                        symptom: String::new(),
                        culprit: String::new(),
                        message: String::new(),
                    },
                ),
            };
            return MinimizedRecord {
                status: status.into(),
                bucket_id: bucket.id(),
                title: bucket.title(),
                bucket,
                instructions_before: instructions,
                instructions_after: instructions,
                tests: 1,
                elapsed_ms: t0.elapsed().as_millis(),
                repro: None,
                bisect: None,
                message: format!("run alone it is {}: {}", v.short(), v.message),
            };
        }
        Err(e) => return failed_record(e, original, t0),
    };
    let b = if cfg.bisect && m.last.verdict.kind == VerdictKind::Mismatch {
        let min_text = hlo::print::module_to_string(&m.case.module);
        bisect(
            &min_text,
            &m.case.inputs,
            backend.as_ref() as &dyn Backend,
            &BisectOptions {
                run: session.opts.clone(),
                no_confirm: true,
                ..BisectOptions::default()
            },
        )
        .ok()
    } else {
        None
    };
    let culprit = b.as_ref().map(culprit_of);
    let bucket = BucketSignature::of(&m.last.verdict, &m.case.module, culprit.as_deref());
    let repro = repro_dir.is_some_and(|d| write_repro(d, &m, &session, b.as_ref()).is_ok());
    MinimizedRecord {
        status: "minimized".into(),
        bucket_id: bucket.id(),
        title: bucket.title(),
        bucket,
        instructions_before: m.stats.instructions_before,
        instructions_after: m.stats.instructions_after,
        tests: m.stats.tests,
        elapsed_ms: t0.elapsed().as_millis(),
        repro: repro.then(|| "repro".to_string()),
        bisect: b.map(|b| b.conclusion),
        message: m.last.verdict.message.clone(),
    }
}

/// Minimizes and buckets one stored finding; the record to write.
fn minimize_one(
    dir: &Path,
    backend: &Arc<WorkerBackend>,
    cfg: &MinimizeConfig,
    limit: Duration,
) -> MinimizedRecord {
    match load(dir) {
        Ok((rec, case)) => bucket_case(
            case,
            Some(&rec.verdict),
            backend,
            rec.xla_options(),
            cfg,
            limit,
            Some(&dir.join("repro")),
        ),
        Err(e) => failed_record(e, None, Instant::now()),
    }
}

/// Minimizes every finding of `store` that has no `minimized.json` yet, `jobs` at a time, on
/// the backend each finding is about (started with `python`), within `cfg`'s budget.
pub fn minimize_pending(
    store: &Store,
    python: Option<PathBuf>,
    jobs: usize,
    cfg: &MinimizeConfig,
    progress: bool,
) -> std::io::Result<MinimizeSummary> {
    let t0 = Instant::now();
    let todo: Vec<(PathBuf, String)> = store
        .findings()?
        .into_iter()
        .filter(|(d, _)| MinimizedRecord::read(d).is_none())
        .map(|(d, f)| (d, f.signature.backend))
        .collect();
    let mut summary = MinimizeSummary::default();
    if todo.is_empty() {
        return Ok(summary);
    }
    let jobs = jobs.clamp(1, todo.len());
    let mut backends: Vec<(String, Arc<WorkerBackend>)> = Vec::new();
    for (_, name) in &todo {
        if backends.iter().any(|(n, _)| n == name) {
            continue;
        }
        let cfg = WorkerConfig::new(Platform::Cpu)
            .with_python(python.clone())
            .with_workers(jobs);
        if let Some(b) = WorkerBackend::by_name(name, cfg) {
            backends.push((name.clone(), Arc::new(b)));
        }
    }
    let next = AtomicUsize::new(0);
    let out: Mutex<(MinimizeSummary, Option<std::io::Error>)> = Mutex::new((summary.clone(), None));
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let remaining = match cfg.budget {
                    Some(b) => match b.checked_sub(t0.elapsed()) {
                        Some(r) if r > Duration::from_secs(1) => r,
                        _ => break,
                    },
                    None => cfg.per_finding,
                };
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some((dir, name)) = todo.get(i) else {
                    break;
                };
                let Some((_, backend)) = backends.iter().find(|(n, _)| n == name) else {
                    continue;
                };
                let rec = minimize_one(dir, backend, cfg, cfg.per_finding.min(remaining));
                if progress {
                    eprintln!(
                        "minimized {} ({}): {} -> {} instructions, {}",
                        dir.file_name().unwrap_or_default().to_string_lossy(),
                        rec.status,
                        rec.instructions_before,
                        rec.instructions_after,
                        rec.title
                    );
                }
                let written = rec.write(dir);
                let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
                match rec.status.as_str() {
                    "minimized" => o.0.minimized += 1,
                    "not-reproduced" => o.0.not_reproduced += 1,
                    _ => o.0.failed += 1,
                }
                o.0.tests += rec.tests;
                if let Err(e) = written {
                    o.1.get_or_insert(e);
                }
            });
        }
    });
    let (s, err) = out.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = err {
        return Err(e);
    }
    summary = s;
    summary.left = todo.len() - summary.minimized - summary.not_reproduced - summary.failed;
    summary.elapsed_s = t0.elapsed().as_secs_f64();
    Ok(summary)
}

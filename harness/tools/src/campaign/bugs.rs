//! From findings to bugs: every stored finding not minimized yet is minimized (keeping its
//! verdict's signature), bisected when it is a mismatch (the culprit pass is part of its
//! bucket), and written back as `repro/` plus `minimized.json` in its directory
//! ([`findings::bucket::MinimizedRecord`]). The record is written last and atomically, so a
//! killed campaign loses nothing and never minimizes a finding twice.

use crate::bisect::{bisect, BisectOptions, BisectReport};
use crate::minimize::{Case, Options};
use crate::triage::{minimize_case, write_repro, Session};
use engine::backend::{Backend, RunOptions, Stage, StageTimeouts};
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
    /// No XLA run goes past it, and a finding whose minimization it cuts is left as it was (no
    /// record: the next run minimizes it): a timed campaign's end.
    pub deadline: Option<Instant>,
    /// The stage limits of every run (`None`: [`RunOptions`]'s defaults); a campaign's finding
    /// is minimized under the limits it was found with.
    pub timeouts: Option<StageTimeouts>,
}

/// The share of what is left before the deadline that the delta loop of one finding may take:
/// the rest is for its final runs and its bisection.
const LOOP_SHARE: f64 = 0.7;

/// The least time left before the deadline for starting to minimize another finding.
const LEAST_TO_START: Duration = Duration::from_secs(2);

impl Default for MinimizeConfig {
    fn default() -> Self {
        MinimizeConfig {
            budget: None,
            per_finding: Duration::from_secs(60),
            max_tests: 600,
            bisect: true,
            chunked: true,
            deadline: None,
            timeouts: None,
        }
    }
}

/// The bucket's culprit from a bisection: the pass, `below-hlo` when every snapshot and the
/// optimized module were evaluated and agreed, `hlo-to-mlir` when the module XLA received
/// already differs; else empty (not established).
pub fn culprit_of(b: &BisectReport) -> String {
    if let Some(f) = &b.failure {
        return crate::bisect::failure_culprit(f);
    }
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
        partitions: 1,
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
            timeouts: cfg.timeouts.clone().unwrap_or_default(),
            deadline: cfg.deadline,
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
    // A crash found before goes straight to the workers that fork per request.
    let runner = session.runner();
    let runner = match (stored.map(|v| v.kind), runner.for_crashes) {
        (Some(VerdictKind::Crash), Some(forking)) => *forking,
        (_, for_crashes) => crate::minimize::predicate::Runner {
            for_crashes,
            ..runner
        },
    };
    let m = match minimize_case(&runner, case, &opts) {
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
                        partitions: 1,
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
    // Cut by the deadline: what the last runs came to is not the case's (the caller drops it).
    if cfg.deadline.is_some_and(|d| Instant::now() >= d) {
        return failed_record("cut by the deadline".into(), original, t0);
    }
    // A mismatch is bisected to its pass; a crash or rejection to where XLA was when it failed
    // (stage, pass entered, failed check), without the disable-pass search.
    let failed = matches!(
        m.last.verdict.kind,
        VerdictKind::Crash | VerdictKind::Rejected
    );
    let b = if cfg.bisect && (m.last.verdict.kind == VerdictKind::Mismatch || failed) {
        let min_text = hlo::print::module_to_string(&m.case.module);
        // A crash's compiles with dumps crash too: on the forking workers that costs a fork.
        let forking = (m.last.verdict.kind == VerdictKind::Crash)
            .then(|| backend.forking())
            .flatten();
        bisect(
            &min_text,
            &m.case.inputs,
            forking
                .as_ref()
                .map_or(backend.as_ref(), |f| f as &WorkerBackend) as &dyn Backend,
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

/// The stage limits a campaign stored with a finding (`meta.stage_limits_ms`), if any.
pub fn stage_limits_of(meta: &serde_json::Value) -> Option<StageTimeouts> {
    let m = meta.get("stage_limits_ms")?;
    let ms = |s: Stage| m.get(s.name()).and_then(serde_json::Value::as_u64);
    Some(StageTimeouts {
        parse: Duration::from_millis(ms(Stage::Parse)?),
        convert: Duration::from_millis(ms(Stage::Convert)?),
        compile: Duration::from_millis(ms(Stage::Compile)?),
        execute: Duration::from_millis(ms(Stage::Execute)?),
    })
}

/// [`minimize_one`] within `cfg.per_finding`: what the fuzzer does with the first finding of a
/// provisional signature.
pub(crate) fn minimize_stored(
    dir: &Path,
    backend: &Arc<WorkerBackend>,
    cfg: &MinimizeConfig,
) -> Option<MinimizedRecord> {
    minimize_one(dir, backend, cfg, cfg.per_finding)
}

/// Minimizes and buckets one stored finding, under the stage limits it was found with; the
/// record to write, or `None` when the deadline cut the work (the finding stays as it was).
fn minimize_one(
    dir: &Path,
    backend: &Arc<WorkerBackend>,
    cfg: &MinimizeConfig,
    limit: Duration,
) -> Option<MinimizedRecord> {
    let r = match load(dir) {
        Ok((rec, case)) => {
            let cfg = MinimizeConfig {
                timeouts: stage_limits_of(&rec.meta).or(cfg.timeouts.clone()),
                ..cfg.clone()
            };
            bucket_case(
                case,
                Some(&rec.verdict),
                backend,
                rec.xla_options(),
                &cfg,
                limit,
                Some(&dir.join("repro")),
            )
        }
        Err(e) => failed_record(e, None, Instant::now()),
    };
    if cfg.deadline.is_some_and(|d| Instant::now() >= d) {
        // A run may have been cut: what it came to is not the finding's.
        let _ = std::fs::remove_dir_all(dir.join("repro"));
        return None;
    }
    Some(r)
}

/// Minimizes every finding of `store` that has no `minimized.json` yet, `jobs` at a time, on
/// the backend each finding is about (started with `python`), within `cfg`'s budget.
///
/// Findings are grouped by their provisional signature ([`provisional_key`]). One finding of each group is minimized first, all groups
/// before any second try; a group whose first finding did not minimize (not reproduced alone,
/// failed) tries its next one while the budget lasts. Once a group has a minimized finding, the
/// rest of the group is folded into its bucket without minimizing each (status `folded`, the
/// message naming the finding it was folded into), so the budget goes to signatures not seen
/// yet and no finding of a known signature is left unbucketed.
pub fn minimize_pending(
    store: &Store,
    python: Option<PathBuf>,
    jobs: usize,
    cfg: &MinimizeConfig,
    progress: bool,
) -> std::io::Result<MinimizeSummary> {
    let t0 = Instant::now();
    let all = store.findings()?;
    // Groups already holding a minimized finding (from an earlier run) fold at once.
    let mut done: std::collections::HashMap<String, (String, MinimizedRecord)> = Default::default();
    let mut groups: Vec<(String, Vec<(PathBuf, String)>)> = Vec::new();
    for (d, f) in all {
        let key = provisional_key(&d, &f);
        match MinimizedRecord::read(&d) {
            Some(r) if r.status == "minimized" => {
                let name = d
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                done.entry(key).or_insert((name, r));
            }
            Some(_) => {}
            None => match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push((d, f.signature.backend)),
                None => groups.push((key, vec![(d, f.signature.backend)])),
            },
        }
    }
    let mut summary = MinimizeSummary::default();
    let total: usize = groups.iter().map(|(_, g)| g.len()).sum();
    if total == 0 {
        return Ok(summary);
    }
    let mut backends: Vec<(String, Arc<WorkerBackend>)> = Vec::new();
    let jobs = jobs.clamp(1, groups.len().max(1));
    for (_, g) in &groups {
        for (_, name) in g {
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
    }
    // Per group: the next member to try, and the minimized member once there is one.
    struct Group {
        next: usize,
        minimized: Option<(String, MinimizedRecord)>,
    }
    let state: Vec<Mutex<Group>> = groups
        .iter()
        .map(|(k, _)| {
            Mutex::new(Group {
                next: 0,
                minimized: done.remove(k),
            })
        })
        .collect();
    let out: Mutex<(MinimizeSummary, Option<std::io::Error>)> = Mutex::new((summary.clone(), None));
    let remaining = || time_left(cfg, t0, Instant::now());
    let record = |dir: &Path, rec: &MinimizedRecord| {
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
            "folded" => o.0.folded += 1,
            _ => o.0.failed += 1,
        }
        o.0.tests += rec.tests;
        if let Err(e) = written {
            o.1.get_or_insert(e);
        }
    };
    // Rounds: round r tries member r of every group still without a minimized member.
    let longest = groups.iter().map(|(_, g)| g.len()).max().unwrap_or(0);
    for round in 0..longest {
        if remaining().is_none() {
            break;
        }
        let next = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(|| loop {
                    let Some(left) = remaining() else { break };
                    let gi = next.fetch_add(1, Ordering::SeqCst);
                    let Some((_, members)) = groups.get(gi) else {
                        break;
                    };
                    let member = {
                        let mut g = state[gi].lock().unwrap_or_else(|e| e.into_inner());
                        if g.minimized.is_some() || g.next != round || round >= members.len() {
                            continue;
                        }
                        g.next += 1;
                        round
                    };
                    let (dir, name) = &members[member];
                    let Some((_, backend)) = backends.iter().find(|(n, _)| n == name) else {
                        continue;
                    };
                    let Some(rec) = minimize_one(dir, backend, cfg, left) else {
                        break;
                    };
                    record(dir, &rec);
                    if rec.status == "minimized" {
                        let name = dir.file_name().unwrap_or_default().to_string_lossy();
                        let mut g = state[gi].lock().unwrap_or_else(|e| e.into_inner());
                        g.minimized = Some((name.into_owned(), rec));
                    }
                });
            }
        });
    }
    // Fold the members no round reached into their group's minimized finding.
    for ((_, members), g) in groups.iter().zip(&state) {
        let g = g.lock().unwrap_or_else(|e| e.into_inner());
        let Some((into, rep)) = &g.minimized else {
            continue;
        };
        for (dir, _) in members {
            if MinimizedRecord::read(dir).is_some() {
                continue;
            }
            let rec = MinimizedRecord {
                status: "folded".into(),
                tests: 0,
                elapsed_ms: 0,
                repro: None,
                message: format!(
                    "not minimized: its provisional signature is that of finding {into}, which \
                     was minimized into this bucket"
                ),
                ..rep.clone()
            };
            record(dir, &rec);
        }
    }
    let (s, err) = out.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = err {
        return Err(e);
    }
    summary = s;
    summary.left =
        total - summary.minimized - summary.not_reproduced - summary.failed - summary.folded;
    summary.elapsed_s = t0.elapsed().as_secs_f64();
    Ok(summary)
}

/// How long the next finding's delta loop may run (`None`: start no other): its per-finding
/// limit, within the phase's budget (counted from `t0`) and, with a deadline, a share of what is
/// left before it ([`LOOP_SHARE`]; none when less than [`LEAST_TO_START`] is left).
fn time_left(cfg: &MinimizeConfig, t0: Instant, now: Instant) -> Option<Duration> {
    let mut left = cfg.per_finding;
    if let Some(b) = cfg.budget {
        let r = b
            .checked_sub(now.duration_since(t0))
            .filter(|r| *r > Duration::from_secs(1))?;
        left = left.min(r);
    }
    if let Some(d) = cfg.deadline {
        let r = d
            .checked_duration_since(now)
            .filter(|r| *r >= LEAST_TO_START)?;
        left = left.min(r.mul_f64(LOOP_SHARE));
    }
    Some(left)
}

/// A finding's provisional signature, as a key: its kind, backend and label, and for a wrong
/// value the op that computes the first wrong output, its type and the symptom (the store's
/// own signature names every op of the program, so no two findings share it); for a crash or
/// rejection the stored normalized message.
pub(crate) fn provisional_key(dir: &Path, f: &FindingRecord) -> String {
    let s = &f.signature;
    let what = match f.verdict.kind {
        VerdictKind::Mismatch | VerdictKind::Nondeterministic => {
            let module = std::fs::read_to_string(dir.join("module.hlo"))
                .ok()
                .and_then(|t| hlo::parse::parse_module(&t).ok());
            match module {
                Some(m) => {
                    let c = m.entry_computation();
                    let root = c.root_instruction();
                    let out = f.verdict.bug_output().unwrap_or(0);
                    let i = match root.opcode {
                        hlo::Opcode::Tuple => {
                            root.operands.get(out).map_or(root, |&o| &c.instructions[o])
                        }
                        _ => root,
                    };
                    let b = BucketSignature::of(&f.verdict, &m, None);
                    format!("{} {} {}", i.opcode.name(), i.shape, b.symptom)
                }
                // Unreadable: a group of its own.
                None => dir.display().to_string(),
            }
        }
        _ => s.detail.clone(),
    };
    format!("{:?}\u{1}{}\u{1}{}\u{1}{what}", s.kind, s.backend, s.label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_findings_loop_gets_its_limit_within_the_budget_and_a_share_of_the_deadline() {
        let t0 = Instant::now();
        let per = MinimizeConfig::default().per_finding;
        let cfg = |budget: Option<u64>, deadline: Option<u64>| MinimizeConfig {
            budget: budget.map(Duration::from_secs),
            deadline: deadline.map(|s| t0 + Duration::from_secs(s)),
            ..MinimizeConfig::default()
        };
        assert_eq!(time_left(&cfg(None, None), t0, t0), Some(per));
        assert_eq!(
            time_left(&cfg(Some(10), None), t0, t0 + Duration::from_secs(4)),
            Some(Duration::from_secs(6))
        );
        assert_eq!(
            time_left(&cfg(Some(10), None), t0, t0 + Duration::from_secs(9)),
            None
        );
        // 10 s left before the deadline: 7 s of loop, 3 s for the final runs and the bisection.
        assert_eq!(
            time_left(&cfg(None, Some(20)), t0, t0 + Duration::from_secs(10)),
            Some(Duration::from_secs(7))
        );
        // Less than LEAST_TO_START left: no other finding is started.
        assert_eq!(
            time_left(&cfg(None, Some(20)), t0, t0 + Duration::from_millis(18_500)),
            None
        );
        assert_eq!(
            time_left(&cfg(None, Some(20)), t0, t0 + Duration::from_secs(30)),
            None
        );
    }

    #[test]
    fn a_finding_is_minimized_under_the_stage_limits_it_was_found_with() {
        let meta = serde_json::json!({"stage_limits_ms": {"parse": 2000, "convert": 2000, "compile": 7500, "execute": 2000}});
        let t = stage_limits_of(&meta).unwrap();
        assert_eq!(t.compile, Duration::from_millis(7500));
        assert_eq!(t.execute, Duration::from_secs(2));
        assert_eq!(
            stage_limits_of(&serde_json::json!({"campaign_seed": 1})),
            None
        );
    }
}

//! Campaign reports: `report.json` (machine-readable, schema below), `report.html`
//! (self-contained, inline SVG charts) and `report.md` (the summary also printed on stdout).
//!
//! # `report.json` (schema `hlo-diff-campaign-report/1`)
//! ```text
//! schema          "hlo-diff-campaign-report/1"
//! campaign        {seed, shard: [I, N], backends, xla_options, pack, input_sets, jobs, out,
//!                  resumed, xla}
//! throughput      {elapsed_s, modules, programs, cases, modules_per_s, programs_per_s,
//!                  cases_per_s}                                         (this invocation)
//! campaign_throughput {elapsed_s, modules, programs, cases, modules_per_s, cases_per_s,
//!                  timeline: [{t_s, modules, programs, findings}]}
//!                  over every run of the campaign (fuzzing seconds; a resumed campaign's
//!                  timeline goes on where the last run stopped)
//! totals          counters over the whole campaign: {modules, programs, cases (program x
//!                  input set), verdicts{kind: cases},
//!                  labels{"kind:label": n}, op_coverage{op: programs}, unsupported{why: n},
//!                  ulp_hist{bits: outputs}, findings_new, findings_folded}
//! findings        [{dir, kind, backend, label, detail, count, message, first_occurrence,
//!                   first_hit_s, first_hit_module}]
//!                  `first_hit_s`: campaign seconds (over every run of a resumed campaign)
//!                  when it was first recorded, or null; `first_hit_module`: the smallest
//!                  module index among its occurrences
//! findings_by_kind {kind: distinct findings}
//! occurrences_by_kind {kind: occurrences}
//! findings_by_op  {op: distinct mismatch/nondeterministic findings whose pattern has it}
//! buckets         [{id, new, title, known: {id, title, status, upstream, releases?, bisect?} | null,
//!                   seen_before, not_reproduced, count, findings, repro, instructions, examples,
//!                   signature, first_hit_s, first_hit_module}]
//!                  NEW first; `not_reproduced`: its findings showed no bug run alone (never
//!                  NEW, never claimed by the registry); `first_hit_*`: the earliest over its
//!                  findings (what `hlo-diff time-to-bug` reads)
//! new_buckets     how many buckets are NEW (neither the registry nor the history knows them)
//! unbucketed      finding directories not minimized yet (counted as NEW by `hlo-diff fuzz`)
//! finish_command  the command that minimizes and buckets them ("" when there is none)
//! minimize        {minimized, not_reproduced, failed, folded, left, tests, elapsed_s} | null
//! worker_time     where the campaign threads' time went (seconds; the parts add up to
//!                  total_s): {total_s, xla_compile_s, xla_execute_s, xla_other_s, oracle_s
//!                  (beyond XLA's packed run), oracle_all_s, judge_s, confirmation_s,
//!                  generate_s, idle_s}
//! modules_cut     modules the end of a timed campaign cut short (tested again on resume)
//! environment     where the campaign ran: {jax, jaxlib, python, cpu: {model, vendor, cores,
//!                  features}, xla_flags, gpu, oracle_host, os} (`engine::environment`) | null
//! ```

mod html;
mod markdown;

use crate::bucket::{group, BucketView, History};
use crate::registry::Registry;
use crate::store::{write_atomic, FindingRecord, Store};
use crate::summary::CampaignSummary;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub use markdown::summary_text;

/// The report's data: the summary plus the findings read back from the store, and their
/// buckets.
pub struct ReportData<'a> {
    pub summary: &'a CampaignSummary,
    pub findings: Vec<(PathBuf, FindingRecord)>,
    /// NEW first (see [`crate::bucket::group`]).
    pub buckets: Vec<BucketView>,
    /// Findings not minimized yet.
    pub unbucketed: Vec<PathBuf>,
}

impl<'a> ReportData<'a> {
    /// The data of `findings`, bucketed with `registry` and `history`.
    pub fn new(
        summary: &'a CampaignSummary,
        findings: Vec<(PathBuf, FindingRecord)>,
        registry: &Registry,
        history: &History,
    ) -> ReportData<'a> {
        let (buckets, unbucketed) = group(&findings, registry, history);
        ReportData {
            summary,
            findings,
            buckets,
            unbucketed,
        }
    }

    /// NEW buckets (intended behaviour never is one).
    pub fn new_buckets(&self) -> usize {
        self.buckets.iter().filter(|b| b.new).count()
    }

    /// Whether the campaign found something no one knows: a NEW bucket, or a finding not
    /// bucketed yet (it may be one).
    pub fn has_new(&self) -> bool {
        self.new_buckets() > 0 || !self.unbucketed.is_empty()
    }

    /// The line that says findings are left to minimize, with the command that finishes
    /// them; `None` when every finding is bucketed.
    pub fn left_note(&self) -> Option<String> {
        let n = self.unbucketed.len();
        if n == 0 {
            return None;
        }
        let s = self.summary;
        let how = if s.finish_command.is_empty() {
            "hlo-diff minimize FINDING_DIR (one finding at a time)".to_string()
        } else {
            s.finish_command.clone()
        };
        Some(format!(
            "{n} finding{} not minimized yet: {} may be NEW, so the campaign exits 1. Minimize and \
             bucket {} (no more fuzzing): {how}",
            if n == 1 { " is" } else { "s are" },
            if n == 1 { "it" } else { "they" },
            if n == 1 { "it" } else { "them" },
        ))
    }

    /// Where the campaign threads' time went ([`crate::store::WorkerTime`]).
    pub fn worker_time(&self) -> crate::store::WorkerTime {
        let s = self.summary;
        let mut w = s
            .stats
            .time
            .worker_time(s.jobs as f64 * s.campaign_elapsed_s);
        // A merged store knows no threads: its total is what the modules used.
        let used: f64 = w.parts().iter().take(7).map(|(_, v)| v).sum();
        if w.total_s < used {
            w.total_s = used;
        }
        w
    }

    pub fn findings_by_kind(&self) -> BTreeMap<String, (u64, u64)> {
        let mut m: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for (_, f) in &self.findings {
            let e = m.entry(f.signature.kind.name().to_string()).or_default();
            e.0 += 1;
            e.1 += f.count;
        }
        m
    }

    pub fn findings_by_op(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (_, f) in &self.findings {
            if let Some(ops) = f.signature.detail.split("ops=").nth(1) {
                for op in ops.split(',').filter(|s| !s.is_empty()) {
                    *m.entry(op.to_string()).or_insert(0) += 1;
                }
            }
        }
        m
    }
}

/// The `report.json` value.
pub fn report_json(d: &ReportData) -> Value {
    let s = d.summary;
    let by_kind = d.findings_by_kind();
    json!({
        "schema": "hlo-diff-campaign-report/1",
        "campaign": {
            "seed": s.seed, "shard": [s.shard.0, s.shard.1], "backends": s.backends,
            "xla_options": s.xla_options, "pack": s.pack, "input_sets": s.input_sets, "jobs": s.jobs,
            "out": s.out, "resumed": s.resumed, "xla": s.xla_info,
        },
        "throughput": {
            "elapsed_s": s.elapsed_s, "modules": s.modules_this_run, "programs": s.programs_this_run,
            "cases": s.cases_this_run, "modules_per_s": s.modules_per_s,
            "programs_per_s": s.programs_per_s, "cases_per_s": s.cases_per_s,
        },
        "campaign_throughput": {
            "elapsed_s": s.campaign_elapsed_s, "modules": s.stats.modules,
            "programs": s.stats.programs, "cases": s.stats.cases,
            "modules_per_s": s.stats.modules as f64 / s.campaign_elapsed_s.max(1e-9),
            "cases_per_s": s.stats.cases as f64 / s.campaign_elapsed_s.max(1e-9),
            "timeline": s.timeline,
        },
        "totals": s.stats,
        "findings": d.findings.iter().map(|(dir, f)| json!({
            "dir": dir, "kind": f.signature.kind, "backend": f.signature.backend,
            "label": f.signature.label, "detail": f.signature.detail, "count": f.count,
            "message": f.verdict.message, "first_occurrence": f.first_occurrence,
            "first_hit_s": f.first_hit_s, "first_hit_module": f.first_hit_module(),
        })).collect::<Vec<_>>(),
        "findings_by_kind": by_kind.iter().map(|(k, v)| (k.clone(), json!(v.0))).collect::<serde_json::Map<_, _>>(),
        "occurrences_by_kind": by_kind.iter().map(|(k, v)| (k.clone(), json!(v.1))).collect::<serde_json::Map<_, _>>(),
        "findings_by_op": d.findings_by_op(),
        "buckets": d.buckets,
        "new_buckets": d.new_buckets(),
        "unbucketed": d.unbucketed,
        "finish_command": s.finish_command,
        "minimize": s.minimize,
        "worker_time": d.worker_time(),
        "modules_cut": s.modules_cut,
        "environment": s.environment,
    })
}

/// Writes `report.json`, `report.html` and `report.md` into the campaign's directory.
pub fn write_reports(
    summary: &CampaignSummary,
    store: &Store,
    registry: &Registry,
    history: &History,
) -> std::io::Result<()> {
    let d = ReportData::new(summary, store.findings()?, registry, history);
    let root = store.root();
    write_atomic(
        &root.join("report.json"),
        &serde_json::to_vec_pretty(&report_json(&d))?,
    )?;
    write_atomic(&root.join("report.html"), html::render(&d).as_bytes())?;
    write_atomic(&root.join("report.md"), summary_text(&d).as_bytes())?;
    Ok(())
}

/// The bucket history at `path` (empty when `None` or missing).
pub fn read_history(path: Option<&std::path::Path>) -> std::io::Result<History> {
    let Some(p) = path else {
        return Ok(History::new());
    };
    match std::fs::read(p) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}:{}:{}: {e}", p.display(), e.line(), e.column()),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(History::new()),
        Err(e) => Err(e),
    }
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Days since 1970-01-01 to a civil date (the proleptic Gregorian calendar).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Adds the store's buckets that `history` does not hold yet (first seen today) and writes it
/// to `path`.
pub fn update_history(
    path: &std::path::Path,
    store: &Store,
    registry: &Registry,
    history: &History,
) -> std::io::Result<()> {
    let (buckets, _) = group(&store.findings()?, registry, history);
    let mut h = history.clone();
    let day = today();
    for b in buckets {
        h.entry(b.id).or_insert_with(|| day.clone());
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    write_atomic(path, &serde_json::to_vec_pretty(&h)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{CampaignStats, TimeStats};

    fn summary(time: TimeStats, jobs: usize, elapsed_s: f64, finish: &str) -> CampaignSummary {
        CampaignSummary {
            seed: 1,
            shard: (0, 1),
            backends: vec!["interp".into(), "xla-cpu".into()],
            xla_options: Vec::new(),
            pack: 8,
            input_sets: 4,
            jobs,
            elapsed_s,
            stats: CampaignStats {
                time,
                ..CampaignStats::default()
            },
            modules_this_run: 0,
            programs_this_run: 0,
            cases_this_run: 0,
            modules_per_s: 0.0,
            programs_per_s: 0.0,
            cases_per_s: 0.0,
            campaign_elapsed_s: elapsed_s,
            timeline: Vec::new(),
            xla_info: Value::Null,
            environment: Value::Null,
            out: "runs/quick".into(),
            resumed: false,
            minimize: None,
            modules_cut: 0,
            finish_command: finish.into(),
        }
    }

    /// The shares add up to the threads' time; the oracle counts only where it ran past XLA.
    #[test]
    fn worker_time_parts_add_up_to_the_threads_time() {
        let t = TimeStats {
            generate_ms: 1_000.0,
            oracle_ms: 30_000.0,
            xla_wait_ms: 70_000.0,
            xla_run_ms: 60_000.0,
            xla_compile_ms: 50_000.0,
            xla_execute_ms: 4_000.0,
            confirm_ms: 20_000.0,
            judge_ms: 5_000.0,
            wall_ms: 91_000.0,
            ..TimeStats::default()
        };
        let s = summary(t, 2, 50.0, "");
        let d = ReportData {
            summary: &s,
            findings: Vec::new(),
            buckets: Vec::new(),
            unbucketed: Vec::new(),
        };
        let w = d.worker_time();
        assert_eq!(w.total_s, 100.0);
        assert_eq!(w.xla_compile_s, 50.0);
        assert_eq!(w.xla_execute_s, 4.0);
        assert_eq!(w.xla_other_s, 6.0);
        // 70 s of waiting, 60 s of it XLA's: the oracle ran 10 s beyond, 20 s alongside.
        assert_eq!(w.oracle_s, 10.0);
        assert_eq!(w.oracle_all_s, 30.0);
        assert_eq!(w.judge_s, 5.0);
        assert_eq!(w.confirmation_s, 15.0);
        assert_eq!(w.idle_s, 9.0);
        let sum: f64 = w.parts().iter().map(|(_, v)| v).sum();
        assert!((sum - w.total_s).abs() < 1e-9, "{sum}");
        let text = markdown::worker_time_text(&d);
        assert!(text.contains("XLA compile 50% (50.0 s)"), "{text}");
        assert!(text.contains("confirmation 15%"), "{text}");
        assert!(text.contains("idle 9%"), "{text}");
    }

    /// Findings left to minimize: the summary's first line says so, with the command.
    #[test]
    fn findings_left_to_minimize_come_first_with_the_command_that_finishes_them() {
        let s = summary(
            TimeStats::default(),
            2,
            60.0,
            "hlo-diff fuzz --out runs/quick --finish",
        );
        let mut d = ReportData {
            summary: &s,
            findings: Vec::new(),
            buckets: Vec::new(),
            unbucketed: Vec::new(),
        };
        assert_eq!(d.left_note(), None);
        assert!(summary_text(&d).starts_with("# hlo-diff campaign"));
        d.unbucketed = vec!["a".into(), "b".into()];
        let text = summary_text(&d);
        let first = text.lines().next().unwrap();
        assert!(
            first.contains("2 findings are not minimized yet"),
            "{first}"
        );
        assert!(first.contains("exits 1"), "{first}");
        assert!(
            first.contains("hlo-diff fuzz --out runs/quick --finish"),
            "{first}"
        );
        assert!(html::render(&d).contains("2 findings are not minimized yet"));
        assert_eq!(
            report_json(&d)["finish_command"],
            "hlo-diff fuzz --out runs/quick --finish"
        );
    }
}

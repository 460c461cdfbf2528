//! Campaign reports: `report.json` (machine-readable, schema below), `report.html`
//! (self-contained, inline SVG charts) and `report.md` (the summary also printed on stdout).
//!
//! # `report.json` (schema `hlo-diff-campaign-report/1`)
//! ```text
//! schema          "hlo-diff-campaign-report/1"
//! campaign        {seed, shard: [I, N], backends, xla_options, pack, input_sets, jobs, out,
//!                  resumed, xla}
//! throughput      {elapsed_s, modules, programs, cases, modules_per_s, programs_per_s,
//!                  cases_per_s, timeline: [{t_s, modules, programs, findings}]}
//!                                                                       (this invocation)
//! totals          counters over the whole campaign: {modules, programs, cases (program x
//!                  input set), verdicts{kind: cases},
//!                  labels{"kind:label": n}, op_coverage{op: programs}, unsupported{why: n},
//!                  ulp_hist{bits: outputs}, findings_new, findings_folded}
//! findings        [{dir, kind, backend, label, detail, count, message, first_occurrence}]
//! findings_by_kind {kind: distinct findings}
//! occurrences_by_kind {kind: occurrences}
//! findings_by_op  {op: distinct mismatch/nondeterministic findings whose pattern has it}
//! ```

mod html;
mod markdown;

use crate::store::{write_atomic, FindingRecord, Store};
use crate::summary::CampaignSummary;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub use markdown::summary_text;

/// The report's data: the summary plus the findings read back from the store.
pub struct ReportData<'a> {
    pub summary: &'a CampaignSummary,
    pub findings: Vec<(PathBuf, FindingRecord)>,
}

impl ReportData<'_> {
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
            "timeline": s.timeline,
        },
        "totals": s.stats,
        "findings": d.findings.iter().map(|(dir, f)| json!({
            "dir": dir, "kind": f.signature.kind, "backend": f.signature.backend,
            "label": f.signature.label, "detail": f.signature.detail, "count": f.count,
            "message": f.verdict.message, "first_occurrence": f.first_occurrence,
        })).collect::<Vec<_>>(),
        "findings_by_kind": by_kind.iter().map(|(k, v)| (k.clone(), json!(v.0))).collect::<serde_json::Map<_, _>>(),
        "occurrences_by_kind": by_kind.iter().map(|(k, v)| (k.clone(), json!(v.1))).collect::<serde_json::Map<_, _>>(),
        "findings_by_op": d.findings_by_op(),
    })
}

/// Writes `report.json`, `report.html` and `report.md` into the campaign's directory.
pub fn write_reports(summary: &CampaignSummary, store: &Store) -> std::io::Result<()> {
    let d = ReportData {
        summary,
        findings: store.findings()?,
    };
    let root = store.root();
    write_atomic(
        &root.join("report.json"),
        &serde_json::to_vec_pretty(&report_json(&d))?,
    )?;
    write_atomic(&root.join("report.html"), html::render(&d).as_bytes())?;
    write_atomic(&root.join("report.md"), summary_text(&d).as_bytes())?;
    Ok(())
}

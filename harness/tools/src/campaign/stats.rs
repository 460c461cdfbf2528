//! A module's reports folded into campaign statistics.

use super::*;
use findings::store::{CampaignStats, Recorded};
use judge::classify::{Label, VerdictKind};

fn bucket_ulps(u: u64) -> u32 {
    if u == 0 {
        0
    } else {
        64 - u.leading_zeros()
    }
}

pub(super) fn stats_of(reports: &[ProgramReport]) -> CampaignStats {
    let mut s = CampaignStats {
        modules: 1,
        ..CampaignStats::default()
    };
    for r in reports {
        if r.program != usize::MAX {
            s.cases += 1;
            if r.input_set == 0 {
                s.programs += 1;
            }
        }
        *s.verdicts
            .entry(r.verdict.kind.name().to_string())
            .or_insert(0) += 1;
        if r.verdict.vote.as_deref() == Some("ftz") {
            *s.labels.entry("match:explained_by_ftz".into()).or_insert(0) += 1;
        }
        if r.verdict.vote.as_deref() == Some("implementation-choice") {
            *s.labels
                .entry("match:explained_by_implementation_choice".into())
                .or_insert(0) += 1;
        }
        if r.verdict.is_bug() {
            let label = r.verdict.label.unwrap_or(Label::Undecided).name();
            *s.labels
                .entry(format!("{}:{label}", r.verdict.kind.name()))
                .or_insert(0) += 1;
        }
        if r.verdict.kind != VerdictKind::Unsupported && r.input_set == 0 {
            for op in &r.opcodes {
                *s.op_coverage.entry(op.name().to_string()).or_insert(0) += 1;
            }
        } else if r.verdict.kind == VerdictKind::Unsupported && r.input_set == 0 {
            *s.unsupported
                .entry(findings::store::normalize_message(&r.verdict.message))
                .or_insert(0) += 1;
        }
        if let Some(c) = &r.verdict.comparison {
            for o in &c.outputs {
                if o.ty.is_float() || o.ty.is_complex() {
                    *s.ulp_hist.entry(bucket_ulps(o.max_ulps)).or_insert(0) += 1;
                }
            }
        }
        match &r.recorded {
            Some(Recorded::New(_)) => s.findings_new += 1,
            Some(Recorded::Folded { .. }) => s.findings_folded += 1,
            _ => {}
        }
    }
    s
}

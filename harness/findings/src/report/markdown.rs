//! The markdown summary (printed on stdout at the end of a campaign and saved as `report.md`).

use super::ReportData;
use crate::bucket::BucketView;
use std::fmt::Write as _;

/// The repro module's text of a bucket, when it has one.
fn repro_module(b: &BucketView) -> Option<(String, String)> {
    let dir = b.repro.as_ref()?;
    let rd = std::fs::read_dir(dir).ok()?;
    let file = rd.flatten().map(|e| e.path()).find(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(".before_optimizations.txt"))
    })?;
    let text = std::fs::read_to_string(&file).ok()?;
    Some((file.display().to_string(), text))
}

/// When a bucket was first hit: `module N, T s` (either part when only it is known, `-` when
/// neither is).
fn first_hit(b: &BucketView) -> String {
    match (b.first_hit_module, b.first_hit_s) {
        (Some(m), Some(t)) => format!("module {m}, {t:.0} s"),
        (Some(m), None) => format!("module {m}"),
        (None, Some(t)) => format!("{t:.0} s"),
        (None, None) => "-".into(),
    }
}

/// The bugs: NEW buckets in full (what an upstream issue needs), then known ones, one line each.
pub fn bugs_text(d: &ReportData) -> String {
    let mut o = String::new();
    let new: Vec<&BucketView> = d.buckets.iter().filter(|b| b.new).collect();
    let intended = d.buckets.iter().filter(|b| b.intended()).count();
    let _ = writeln!(
        o,
        "\n## Bugs: {} buckets, {} NEW, {} known ({} of them intended behaviour){}\n",
        d.buckets.len(),
        new.len(),
        d.buckets.len() - new.len(),
        intended,
        if d.unbucketed.is_empty() {
            String::new()
        } else {
            format!("; {} findings not minimized yet", d.unbucketed.len())
        }
    );
    for b in &new {
        let _ = writeln!(o, "### NEW: {}\n", b.title);
        let _ = writeln!(
            o,
            "- bucket `{}`: {} occurrences in {} finding(s); examples: {}",
            b.id,
            b.count,
            b.findings.len(),
            b.examples.join(", ")
        );
        if let Some(r) = &b.repro {
            let _ = writeln!(
                o,
                "- repro ({} instructions): `{}` (README.md: expected vs actual, versions, the \
                 `run_hlo_module` line)",
                b.instructions,
                r.display()
            );
        }
        if !b.signature.culprit.is_empty() {
            let _ = writeln!(o, "- culprit: {}", b.signature.culprit);
        }
        if b.first_hit_s.is_some() || b.first_hit_module.is_some() {
            let _ = writeln!(o, "- first hit: {}", first_hit(b));
        }
        if let Some((file, text)) = repro_module(b) {
            let _ = writeln!(o, "\n`{file}`:\n```\n{}\n```", text.trim_end());
        }
        o.push('\n');
    }
    let known: Vec<&BucketView> = d.buckets.iter().filter(|b| !b.new).collect();
    if !known.is_empty() {
        o.push_str(
            "| known as | title | status | occurrences | first hit | bucket |\n|---|---|---|---|---|---|\n",
        );
        for b in known {
            let (id, title, status) = match &b.known {
                Some(k) => (
                    k.id.clone(),
                    k.title.clone(),
                    format!("{:?}", k.status).to_lowercase(),
                ),
                None if b.not_reproduced => (
                    "(not reproduced alone)".to_string(),
                    b.title.clone(),
                    "no bug when run alone: flaky, or the judge changed".to_string(),
                ),
                None => (
                    "(seen before)".to_string(),
                    b.title.clone(),
                    format!("first seen {}", b.seen_before.clone().unwrap_or_default()),
                ),
            };
            let _ = writeln!(
                o,
                "| {id} | {} | {status} | {} | {} | `{}` |",
                title.replace('|', "\\|"),
                b.count,
                first_hit(b),
                b.id
            );
        }
    }
    o
}

/// The summary as markdown.
pub fn summary_text(d: &ReportData) -> String {
    let s = d.summary;
    let st = &s.stats;
    let mut o = String::new();
    // Findings left to minimize come first: the exit code depends on them.
    if let Some(note) = d.left_note() {
        let _ = writeln!(o, "**{note}**\n");
    }
    o.push_str("# hlo-diff campaign\n");
    // The bugs first (NEW, then known), then what the campaign did.
    o.push_str(&bugs_text(d));
    o.push_str("\n## Campaign\n\n");
    o.push_str(&format!(
        "- seed {}, shard {}/{}, backends {}, pack {}, input sets {}, jobs {}{}\n",
        s.seed,
        s.shard.0,
        s.shard.1,
        s.backends.join(","),
        s.pack,
        s.input_sets,
        s.jobs,
        if s.resumed { " (resumed)" } else { "" }
    ));
    if !s.xla_options.is_empty() {
        let opts: Vec<String> = s
            .xla_options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        o.push_str(&format!("- XLA options: {}\n", opts.join(" ")));
    }
    o.push_str(&format!(
        "- whole campaign: {} modules, {} programs, {} cases in {:.1} s of fuzzing: **{:.2} modules/s, {:.2} cases/s**\n",
        st.modules,
        st.programs,
        st.cases,
        s.campaign_elapsed_s,
        st.modules as f64 / s.campaign_elapsed_s.max(1e-9),
        st.cases as f64 / s.campaign_elapsed_s.max(1e-9)
    ));
    if s.modules_this_run == 0 && s.resumed {
        o.push_str(
            "- this run: no modules tested (a resumed campaign: minimization and reports only)\n",
        );
    } else {
        o.push_str(&format!(
            "- this run: {} modules, {} programs, {} cases (programs x input sets) in {:.1} s: {:.2} modules/s, {:.2} programs/s, {:.2} cases/s\n",
            s.modules_this_run, s.programs_this_run, s.cases_this_run, s.elapsed_s, s.modules_per_s, s.programs_per_s, s.cases_per_s
        ));
    }
    if s.modules_cut > 0 {
        o.push_str(&format!(
            "- {} module(s) cut short by the end of the time limit (tested again on resume)\n",
            s.modules_cut
        ));
    }
    o.push_str(&format!("- worker time: {}\n", worker_time_text(d)));
    if let Some(m) = &s.minimize {
        o.push_str(&format!(
            "- minimization: {} minimized, {} folded, {} not reproduced, {} failed, {} left, in {:.1} s\n",
            m.minimized, m.folded, m.not_reproduced, m.failed, m.left, m.elapsed_s
        ));
    }
    let verdicts: Vec<String> = st
        .verdicts
        .iter()
        .map(|(k, v)| match k.as_str() {
            "unproven" => format!("{k} (inside the legitimate results: never a finding) {v}"),
            _ => format!("{k} {v}"),
        })
        .collect();
    o.push_str(&format!(
        "- cases by verdict: {}\n",
        if verdicts.is_empty() {
            "none".into()
        } else {
            verdicts.join(", ")
        }
    ));
    o.push_str(&format!("- opcodes covered: {}\n", st.op_coverage.len()));
    let mut sets = st.time.set_ms.clone();
    sets.sort_by(f64::total_cmp);
    if let (Some(med), Some(max)) = (sets.get(sets.len() / 2), sets.last()) {
        o.push_str(&format!(
            "- the set of legitimate results: computed for {} differing program results, median \
             {med:.2} ms, max {max:.1} ms\n",
            sets.len()
        ));
    }
    if st.time.dissent_checks > 0 {
        o.push_str(&format!(
            "- the voter held to the set where XLA and the oracle agree (a sample): {} checked, \
             {} dissent{} (kept in `dissent/`, to triage against the texts), {:.1} s\n",
            st.time.dissent_checks,
            st.time.dissents,
            if st.time.dissents == 1 { "" } else { "s" },
            st.time.dissent_ms / 1e3
        ));
    }
    o.push_str(&format!(
        "\n## Findings ({} distinct)\n\n",
        d.findings.len()
    ));
    if d.findings.is_empty() {
        o.push_str("None.\n");
    } else {
        o.push_str(
            "| kind | backend | label | count | detail | directory |\n|---|---|---|---|---|---|\n",
        );
        for (dir, f) in &d.findings {
            let detail: String = f.signature.detail.chars().take(90).collect();
            o.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                f.signature.kind.name(),
                f.signature.backend,
                f.signature.label,
                f.count,
                detail.replace('|', "\\|"),
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
        }
    }
    if !st.unsupported.is_empty() {
        o.push_str("\n## Unsupported (top reasons)\n\n");
        let mut v: Vec<(&String, &u64)> = st.unsupported.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1));
        for (why, n) in v.into_iter().take(10) {
            o.push_str(&format!("- {n}: {why}\n"));
        }
    }
    o
}

/// Where the campaign threads' time went, as shares: `XLA compile 45% (120.3 s), ...`.
pub fn worker_time_text(d: &ReportData) -> String {
    let w = d.worker_time();
    let total = w.total_s.max(1e-9);
    let parts: Vec<String> = w
        .parts()
        .iter()
        .map(|(name, v)| format!("{name} {:.0}% ({v:.1} s)", 100.0 * v / total))
        .collect();
    format!(
        "{:.1} s over the campaign threads: {}; the oracle ran {:.1} s in all, {:.1} s of it while XLA ran",
        w.total_s,
        parts.join(", "),
        w.oracle_all_s,
        (w.oracle_all_s - w.oracle_s).max(0.0)
    )
}

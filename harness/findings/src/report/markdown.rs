//! The markdown summary (printed on stdout at the end of a campaign and saved as `report.md`).

use super::ReportData;

/// The summary as markdown.
pub fn summary_text(d: &ReportData) -> String {
    let s = d.summary;
    let st = &s.stats;
    let mut o = String::new();
    o.push_str("# hlo-diff campaign\n\n");
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
        "- this run: {} modules, {} programs, {} cases (programs x input sets) in {:.1} s: **{:.2} modules/s, {:.2} programs/s, {:.2} cases/s**\n",
        s.modules_this_run, s.programs_this_run, s.cases_this_run, s.elapsed_s, s.modules_per_s, s.programs_per_s, s.cases_per_s
    ));
    o.push_str(&format!(
        "- whole campaign: {} modules, {} programs\n",
        st.modules, st.programs
    ));
    let verdicts: Vec<String> = st
        .verdicts
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
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

//! `report.html`: one self-contained page (no scripts, no external files) with inline SVG
//! charts: throughput over time, findings by kind, findings by op, the error distribution and
//! op coverage.

use super::ReportData;
use std::fmt::Write;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A line chart of several series over a shared x axis.
fn line_chart(title: &str, xs: &[f64], series: &[(&str, &str, Vec<f64>)], x_label: &str) -> String {
    let (w, h, ml, mb, mt, mr) = (640.0, 260.0, 60.0, 40.0, 30.0, 130.0);
    let pw = w - ml - mr;
    let ph = h - mt - mb;
    let xmax = xs.iter().cloned().fold(0.0, f64::max).max(1e-9);
    let ymax = series
        .iter()
        .flat_map(|s| s.2.iter().cloned())
        .fold(0.0, f64::max)
        .max(1.0);
    let mut o = String::new();
    let _ = write!(
        o,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img"><title>{}</title>"##,
        esc(title)
    );
    let _ = write!(
        o,
        r##"<text x="{}" y="18" font-size="14" font-weight="bold">{}</text>"##,
        ml,
        esc(title)
    );
    let _ = write!(
        o,
        r##"<line x1="{ml}" y1="{}" x2="{}" y2="{}" stroke="#444"/>"##,
        mt + ph,
        ml + pw,
        mt + ph
    );
    let _ = write!(
        o,
        r##"<line x1="{ml}" y1="{mt}" x2="{ml}" y2="{}" stroke="#444"/>"##,
        mt + ph
    );
    for k in 0..=4 {
        let v = ymax * k as f64 / 4.0;
        let y = mt + ph - ph * k as f64 / 4.0;
        let _ = write!(
            o,
            r##"<text x="{}" y="{}" font-size="10" text-anchor="end">{:.0}</text>"##,
            ml - 4.0,
            y + 3.0,
            v
        );
        let xv = xmax * k as f64 / 4.0;
        let x = ml + pw * k as f64 / 4.0;
        let _ = write!(
            o,
            r##"<text x="{x}" y="{}" font-size="10" text-anchor="middle">{:.0}</text>"##,
            mt + ph + 14.0,
            xv
        );
    }
    let _ = write!(
        o,
        r##"<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>"##,
        ml + pw / 2.0,
        h - 6.0,
        esc(x_label)
    );
    for (i, (name, color, ys)) in series.iter().enumerate() {
        let pts: Vec<String> = xs
            .iter()
            .zip(ys)
            .map(|(x, y)| format!("{:.1},{:.1}", ml + pw * x / xmax, mt + ph - ph * y / ymax))
            .collect();
        let _ = write!(
            o,
            r##"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"##,
            pts.join(" ")
        );
        let ly = mt + 14.0 * i as f64 + 6.0;
        let _ = write!(
            o,
            r##"<rect x="{}" y="{}" width="10" height="10" fill="{color}"/><text x="{}" y="{}" font-size="11">{}</text>"##,
            ml + pw + 10.0,
            ly - 9.0,
            ml + pw + 24.0,
            ly,
            esc(name)
        );
    }
    o.push_str("</svg>");
    o
}

/// A horizontal bar chart.
fn bar_chart(title: &str, bars: &[(String, f64)], color: &str) -> String {
    let row = 18.0;
    let (w, ml, mt) = (640.0, 220.0, 28.0);
    let h = mt + row * bars.len().max(1) as f64 + 10.0;
    let pw = w - ml - 70.0;
    let vmax = bars.iter().map(|b| b.1).fold(0.0, f64::max).max(1e-9);
    let mut o = String::new();
    let _ = write!(
        o,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img"><title>{}</title>"##,
        esc(title)
    );
    let _ = write!(
        o,
        r##"<text x="4" y="18" font-size="14" font-weight="bold">{}</text>"##,
        esc(title)
    );
    if bars.is_empty() {
        let _ = write!(
            o,
            r##"<text x="{ml}" y="{}" font-size="12">(none)</text>"##,
            mt + 12.0
        );
    }
    for (i, (label, v)) in bars.iter().enumerate() {
        let y = mt + row * i as f64;
        let bw = pw * v / vmax;
        let short: String = label.chars().take(34).collect();
        let _ = write!(
            o,
            r##"<text x="{}" y="{}" font-size="11" text-anchor="end">{}</text>"##,
            ml - 6.0,
            y + 12.0,
            esc(&short)
        );
        let _ = write!(
            o,
            r##"<rect x="{ml}" y="{}" width="{:.1}" height="{}" fill="{color}"/>"##,
            y + 2.0,
            bw.max(0.5),
            row - 5.0
        );
        let _ = write!(
            o,
            r##"<text x="{}" y="{}" font-size="11">{}</text>"##,
            ml + bw + 4.0,
            y + 12.0,
            if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        );
    }
    o.push_str("</svg>");
    o
}

/// The whole page.
pub fn render(d: &ReportData) -> String {
    let s = d.summary;
    let st = &s.stats;
    let mut o = String::new();
    o.push_str("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>hlo-diff campaign report</title><style>");
    o.push_str("body{font-family:sans-serif;margin:24px;max-width:1100px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;font-size:12px;text-align:left}th{background:#eee}.charts svg{margin:8px 0;display:block}code{font-size:12px}");
    o.push_str("</style></head><body><h1>hlo-diff campaign report</h1>");
    // Findings left to minimize come first: the exit code depends on them.
    if let Some(note) = d.left_note() {
        let _ = write!(
            o,
            "<p style=\"border:2px solid #d62728;padding:8px\"><b>{}</b></p>",
            esc(&note)
        );
    }
    let _ = write!(
        o,
        "<p>seed <b>{}</b>, shard {}/{}, backends <b>{}</b>, pack {}, input sets {}, jobs {}{}. XLA options: {}.</p>",
        s.seed,
        s.shard.0,
        s.shard.1,
        esc(&s.backends.join(", ")),
        s.pack,
        s.input_sets,
        s.jobs,
        if s.resumed { " (resumed)" } else { "" },
        if s.xla_options.is_empty() { "none".to_string() } else { esc(&s.xla_options.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")) }
    );
    let new = d.new_buckets();
    let _ = write!(o, "<h2>Bugs: {} buckets, {} NEW</h2>", d.buckets.len(), new);
    if !d.buckets.is_empty() {
        o.push_str("<table><tr><th></th><th>title</th><th>known as</th><th>occurrences</th><th>findings</th><th>repro</th><th>bucket</th></tr>");
        for b in &d.buckets {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                if b.new { "<b>NEW</b>" } else if b.intended() { "intended" } else { "known" },
                esc(&b.title),
                esc(&b.known.as_ref().map(|k| k.id.clone()).unwrap_or_default()),
                b.count,
                b.findings.len(),
                esc(&b.repro.as_ref().map(|r| format!("{} ({} instructions)", r.display(), b.instructions)).unwrap_or_default()),
                esc(&b.id)
            );
        }
        o.push_str("</table>");
    }
    if !d.unbucketed.is_empty() {
        let _ = write!(
            o,
            "<p>{} findings not minimized yet (see the top of the page).</p>",
            d.unbucketed.len()
        );
    }
    o.push_str("<h2>Campaign</h2>");
    let whole = s.campaign_elapsed_s.max(1e-9);
    let _ = write!(
        o,
        "<p>Whole campaign: <b>{}</b> modules, <b>{}</b> programs, <b>{}</b> cases in {:.1} s of fuzzing: <b>{:.2}</b> modules/s, <b>{:.2}</b> cases/s; {} distinct findings.</p>",
        st.modules, st.programs, st.cases, s.campaign_elapsed_s, st.modules as f64 / whole, st.cases as f64 / whole, d.findings.len()
    );
    if s.modules_this_run == 0 && s.resumed {
        o.push_str("<p>This run: no modules tested (a resumed campaign: minimization and reports only).</p>");
    } else {
        let _ = write!(
            o,
            "<p>This run: {} modules, {} programs, {} cases (programs x input sets) in {:.1} s: {:.2} modules/s, {:.2} programs/s, {:.2} cases/s.</p>",
            s.modules_this_run, s.programs_this_run, s.cases_this_run, s.elapsed_s, s.modules_per_s, s.programs_per_s, s.cases_per_s
        );
    }
    let _ = write!(
        o,
        "<p>Worker time: {}.</p>",
        esc(&super::markdown::worker_time_text(d))
    );
    if s.modules_cut > 0 {
        let _ = write!(
            o,
            "<p>{} module(s) cut short by the end of the time limit (tested again on resume).</p>",
            s.modules_cut
        );
    }
    o.push_str("<div class=\"charts\">");
    let w = d.worker_time();
    let shares: Vec<(String, f64)> = w
        .parts()
        .iter()
        .map(|(k, v)| (k.to_string(), 100.0 * v / w.total_s.max(1e-9)))
        .collect();
    o.push_str(&bar_chart(
        "Worker time: percent of the campaign threads' time",
        &shares,
        "#8c564b",
    ));
    let xs: Vec<f64> = s.timeline.iter().map(|p| p.t_s).collect();
    o.push_str(&line_chart(
        "Throughput (cumulative)",
        &xs,
        &[
            (
                "modules",
                "#1f77b4",
                s.timeline.iter().map(|p| p.modules as f64).collect(),
            ),
            (
                "programs",
                "#2ca02c",
                s.timeline.iter().map(|p| p.programs as f64).collect(),
            ),
            (
                "findings",
                "#d62728",
                s.timeline.iter().map(|p| p.findings as f64).collect(),
            ),
        ],
        "seconds",
    ));
    let verdicts: Vec<(String, f64)> = st
        .verdicts
        .iter()
        .map(|(k, v)| (k.clone(), *v as f64))
        .collect();
    o.push_str(&bar_chart("Programs by verdict", &verdicts, "#1f77b4"));
    let by_kind: Vec<(String, f64)> = d
        .findings_by_kind()
        .into_iter()
        .map(|(k, v)| (format!("{k} ({} occurrences)", v.1), v.0 as f64))
        .collect();
    o.push_str(&bar_chart("Distinct findings by kind", &by_kind, "#d62728"));
    let mut by_op: Vec<(String, f64)> = d
        .findings_by_op()
        .into_iter()
        .map(|(k, v)| (k, v as f64))
        .collect();
    by_op.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    by_op.truncate(30);
    o.push_str(&bar_chart(
        "Findings by op (mismatch patterns)",
        &by_op,
        "#ff7f0e",
    ));
    let ulps: Vec<(String, f64)> = st
        .ulp_hist
        .iter()
        .map(|(b, n)| {
            (
                if *b == 0 {
                    "exact".to_string()
                } else {
                    format!("< 2^{b} ulps")
                },
                *n as f64,
            )
        })
        .collect();
    o.push_str(&bar_chart(
        "Error distribution: float outputs by largest ulp distance",
        &ulps,
        "#9467bd",
    ));
    let mut cov: Vec<(String, f64)> = st
        .op_coverage
        .iter()
        .map(|(k, v)| (k.clone(), *v as f64))
        .collect();
    cov.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    o.push_str(&bar_chart(
        &format!("Op coverage: programs per opcode ({} opcodes)", cov.len()),
        &cov,
        "#17becf",
    ));
    o.push_str("</div>");
    o.push_str("<h2>Findings</h2>");
    if d.findings.is_empty() {
        o.push_str("<p>None.</p>");
    } else {
        o.push_str("<table><tr><th>kind</th><th>backend</th><th>label</th><th>count</th><th>detail</th><th>message</th><th>directory</th></tr>");
        for (dir, f) in &d.findings {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td><code>{}</code></td></tr>",
                f.signature.kind.name(),
                esc(&f.signature.backend),
                esc(&f.signature.label),
                f.count,
                esc(&f.signature.detail),
                esc(&f.verdict.message.chars().take(200).collect::<String>()),
                esc(&dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
            );
        }
        o.push_str("</table>");
    }
    o.push_str("</body></html>\n");
    o
}

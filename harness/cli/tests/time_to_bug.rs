//! `hlo-diff time-to-bug` on a real small default campaign (six modules of seed 5, which hit
//! known bugs): every bucket the campaign reports is a row (its registry entry's, or its own
//! when NEW) with the bucket's first hit; the same report given twice is hit in 2 of 2
//! campaigns with the same median; a report that is missing is exit 2 naming the file. Needs
//! real XLA (`test_support::need_xla`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn hlo_diff(args: &[&str]) -> (i32, String, String) {
    let st = Command::new(env!("CARGO_BIN_EXE_hlo-diff"))
        .args(args)
        .output()
        .unwrap();
    (
        st.status.code().expect("exited"),
        String::from_utf8_lossy(&st.stdout).into_owned(),
        String::from_utf8_lossy(&st.stderr).into_owned(),
    )
}

#[test]
fn time_to_bug_reads_a_campaigns_first_hits() {
    if !test_support::need_xla() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c");
    let out_s = out.to_str().unwrap();
    // The generator writes the constructs of known XLA bugs too, so that six modules hit some.
    let gen_config = tmp.path().join("gen.json");
    std::fs::write(&gen_config, r#"{"avoid_known_xla_bugs": false}"#).unwrap();
    let (code, _, err) = hlo_diff(&[
        "fuzz",
        "--gen-config",
        gen_config.to_str().unwrap(),
        "--backends",
        "interp,xla-cpu",
        "--iterations",
        "6",
        "--seed",
        "2",
        "--jobs",
        "2",
        "--quiet",
        "--out",
        out_s,
    ]);
    assert!(code <= 1, "{err}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let fuzz_s = report["throughput"]["elapsed_s"].as_f64().unwrap();
    // The rows the report's buckets make: the earliest first hit per registry entry or bucket.
    let mut want: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    for b in report["buckets"].as_array().unwrap() {
        if b["not_reproduced"].as_bool().unwrap() {
            continue;
        }
        let id = b["known"]["id"].as_str().or(b["id"].as_str()).unwrap();
        let t = b["first_hit_s"].as_f64().expect("a campaign records times");
        let m = b["first_hit_module"].as_u64().unwrap();
        assert!((0.0..=fuzz_s + 1.0).contains(&t), "{t} of {fuzz_s} s");
        assert!(m < 6, "module {m} of 6");
        let e = want.entry(id.to_string()).or_insert((t, m));
        *e = (e.0.min(t), e.1.min(m));
    }
    assert!(!want.is_empty(), "seed 2's six modules hit known bugs (atan2 at zero, a dead reduce's reducer call when generated)");

    let (code, json, err) = hlo_diff(&["time-to-bug", "--json", out_s]);
    assert_eq!(code, 0, "{err}");
    let t: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(t["schema"], "hlo-diff-time-to-bug/1");
    assert_eq!(t["campaigns"][0]["modules"], 6);
    assert_eq!(t["campaigns"][0]["seed"], 2);
    let rows: BTreeMap<String, (f64, u64)> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["hits"], 1);
            (
                r["id"].as_str().unwrap().to_string(),
                (
                    r["first_hit_s"][0].as_f64().unwrap(),
                    r["first_hit_module"][0].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(rows, want);

    // The markdown table names every row; given twice, a report is two campaigns that both hit
    // each row at the same time.
    let (code, md, _) = hlo_diff(&["time-to-bug", out_s, &format!("{out_s}/report.json")]);
    assert_eq!(code, 0);
    for (id, (time, _)) in &want {
        let line = md
            .lines()
            .find(|l| l.starts_with(&format!("| {id} |")) || l.starts_with(&format!("| `{id}` |")))
            .unwrap_or_else(|| panic!("no row for {id}: {md}"));
        assert!(line.contains(&format!("| 2/2 | {time:.0} |")), "{line}");
    }

    let missing = tmp.path().join("none");
    let (code, _, err) = hlo_diff(&["time-to-bug", missing.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains(&missing.display().to_string()), "{err}");
    assert!(!Path::new(&missing).exists());
}

/// The public bug classes section, on a written report (no XLA needed): the repository's
/// classes by default, a class reached through its registry entry, `--no-classes` without the
/// section, and a classes file naming a registry id that does not exist exit 2 with its
/// file:line:col.
#[test]
fn time_to_bug_reports_the_public_bug_classes() {
    let tmp = tempfile::tempdir().unwrap();
    let report = serde_json::json!({
        "schema": "hlo-diff-campaign-report/1",
        "campaign": {"seed": 1, "jobs": 2, "resumed": false},
        "throughput": {"elapsed_s": 10.0, "modules": 5, "modules_per_s": 0.5, "cases_per_s": 1.0},
        "totals": {"modules": 5},
        "buckets": [{
            "id": "b1",
            "title": "t",
            "new": false,
            "known": {"id": "xla-ynn-reduce-window-base-dilation", "title": "t", "status": "open"},
            "not_reproduced": false,
            "first_hit_s": 7.0,
            "first_hit_module": 3,
        }],
        "unbucketed": [],
    });
    let file = tmp.path().join("report.json");
    std::fs::write(&file, report.to_string()).unwrap();
    let file_s = file.to_str().unwrap();

    let (code, md, err) = hlo_diff(&["time-to-bug", file_s]);
    assert_eq!(code, 0, "{err}");
    assert!(md.contains("### Public bug classes: 1 of "), "{md}");
    let line = md
        .lines()
        .find(|l| l.starts_with("| ynn-reduce-window-base-dilation |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        line.contains("| **xla-ynn-reduce-window-base-dilation** | 1/1 | 7 | 3 |"),
        "{line}"
    );
    let (code, json, _) = hlo_diff(&["time-to-bug", "--json", file_s]);
    assert_eq!(code, 0);
    let t: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(t["public_classes"]["reached"], 1);

    let (code, md, _) = hlo_diff(&["time-to-bug", "--no-classes", file_s]);
    assert_eq!(code, 0);
    assert!(!md.contains("Public bug classes"), "{md}");

    let classes = tmp.path().join("classes.toml");
    std::fs::write(
        &classes,
        "[[class]]\nid = \"c\"\ntitle = \"t\"\nyear = 2026\nregistry = [\"xla-no-such-entry\"]\n\
         [[class.issue]]\nurl = \"https://github.com/openxla/xla/issues/1\"\nreports = \"r\"\n",
    )
    .unwrap();
    let (code, _, err) = hlo_diff(&[
        "time-to-bug",
        "--classes",
        classes.to_str().unwrap(),
        file_s,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{}:5:13: class `c` names registry entry `xla-no-such-entry`",
            classes.display()
        )),
        "{err}"
    );
}

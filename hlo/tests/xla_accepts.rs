//! XLA's own parser (jaxlib `hlo_module_from_text`, run by `xla_parse.py` in the project's
//! Python) accepts the text our printer writes for every corpus file.
//!
//! Needs the project's Python with jaxlib (`test_support::python`). Without it the test fails,
//! unless `HLO_DIFF_SKIP_XLA=1` is set, in which case it says so and skips.

mod common;

use common::{corpus_files, read_text};
use std::path::Path;
use std::process::Command;

#[test]
fn xla_parses_our_printed_text_for_every_corpus_file() {
    if !test_support::need_xla() {
        return;
    }
    let py = test_support::python();
    let dir = tempfile::tempdir().unwrap();
    let files = corpus_files();
    assert!(!files.is_empty(), "no corpus files");
    let mut printed = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let m = hlo::parse::parse_module(&read_text(f))
            .unwrap_or_else(|e| panic!("{}:{e}", f.display()));
        let out = dir.path().join(format!("{i:04}.hlo"));
        std::fs::write(&out, hlo::print::module_to_string(&m)).unwrap();
        printed.push((out, f.clone()));
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_parse.py");
    let output = Command::new(&py)
        .arg(&script)
        .args(printed.iter().map(|(p, _)| p))
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", py.display()));
    if output.status.code() == Some(3) {
        if std::env::var("HLO_DIFF_SKIP_XLA").as_deref() == Ok("1") {
            eprintln!(
                "SKIPPED: {} has no jaxlib and HLO_DIFF_SKIP_XLA=1",
                py.display()
            );
            return;
        }
        panic!(
            "{} cannot import jaxlib: {}",
            py.display(),
            String::from_utf8_lossy(&output.stdout)
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut ok = 0;
    let mut failures = Vec::new();
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["ok"] == true {
            ok += 1;
        } else {
            let p = v["path"].as_str().unwrap_or("?");
            let orig = printed
                .iter()
                .find(|(o, _)| o.to_str() == Some(p))
                .map(|(_, f)| f.display().to_string())
                .unwrap_or_default();
            failures.push(format!("{orig}: {}", v["error"]));
        }
    }
    assert!(
        failures.is_empty() && ok == printed.len(),
        "XLA accepted {ok} of {} printed modules; failures:\n{}\nstderr: {}",
        printed.len(),
        failures.join("\n"),
        String::from_utf8_lossy(&output.stderr)
    );
}

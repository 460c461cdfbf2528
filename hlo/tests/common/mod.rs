//! Shared helpers for the integration tests: finding the corpus files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository's `corpora/` folder.
pub fn corpora_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("corpora")
}

/// Reports XLA writes next to its HLO dumps that are not HLO text.
pub fn is_report(name: &str) -> bool {
    name.contains("buffer-assignment")
        || name.contains("memory-usage")
        || name.contains("live-range")
}

/// Every HLO text file (`*.txt` that is not a buffer-assignment/memory/live-range report)
/// under `corpora/`, sorted.
pub fn corpus_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![corpora_dir()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
                if name.ends_with(".txt") && !is_report(name) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

pub fn read_text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

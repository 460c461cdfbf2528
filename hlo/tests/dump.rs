//! The dump-directory reader against real XLA dumps in `corpora/jax/`.

use hlo::dump::{classify_paths, read_dump_dir, render_summary, FileKind};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/jax")
}

const DIRS: [&str; 4] = ["dump", "passes_all", "passes_narrow", "capped"];

/// Every file name XLA wrote (the `.FILES` listings keep the `.ll`/`.o` names that are not
/// checked in) matches the dump grammar.
#[test]
fn every_file_name_xla_wrote_is_classified() {
    for d in DIRS {
        let listing = std::fs::read_to_string(corpus().join(format!("{d}.FILES"))).unwrap();
        let names: Vec<&str> = listing.lines().filter(|l| !l.is_empty()).collect();
        assert!(names.len() > 100, "{d}: {} names", names.len());
        let idx = classify_paths(&names);
        let un: Vec<_> = idx.unclassified().map(|f| f.path.clone()).collect();
        assert!(un.is_empty(), "{d}: unclassified {un:?}");
        assert!(idx
            .files
            .iter()
            .any(|f| matches!(f.kind, FileKind::LlvmIr { .. })));
        assert!(idx
            .files
            .iter()
            .any(|f| matches!(f.kind, FileKind::ObjectFile { .. })));
    }
}

/// The checked-in directories are fully accounted for, and what XLA did is noted.
#[test]
fn checked_in_dumps_are_fully_classified_with_notes() {
    for d in DIRS {
        let idx = read_dump_dir(&corpus().join(d)).unwrap();
        assert_eq!(idx.unclassified().count(), 0, "{d}");
        assert!(idx.modules.iter().all(|m| m.name.is_some()), "{d}");
        match d {
            "passes_all" => {
                assert!(idx
                    .notes
                    .iter()
                    .any(|n| n.contains("only passes that changed")));
                let with_timeline = idx
                    .modules
                    .iter()
                    .filter(|m| !m.timeline.is_empty())
                    .count();
                assert_eq!(with_timeline, 5);
                for m in idx.modules.iter().filter(|m| !m.timeline.is_empty()) {
                    assert!(m.timeline.windows(2).all(|w| w[0].step < w[1].step));
                }
            }
            "passes_narrow" => {
                assert!(idx.notes.iter().any(|n| n.contains("every matching pass")))
            }
            "capped" => assert!(idx.notes.iter().any(|n| n.starts_with("truncated"))),
            _ => assert!(!idx.notes.iter().any(|n| n.starts_with("truncated"))),
        }
    }
}

#[test]
fn summaries_are_stable() {
    for d in ["passes_all", "capped"] {
        let idx = read_dump_dir(&corpus().join(d)).unwrap();
        insta::assert_snapshot!(format!("summary_{d}"), render_summary(&idx, d));
    }
}

#[test]
fn missing_directory_is_an_error() {
    let err = read_dump_dir(Path::new("/nonexistent/dump")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/dump"));
}

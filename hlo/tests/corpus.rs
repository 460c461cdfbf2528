//! Every HLO text file under `corpora/` (real XLA dumps: before/after optimizations and per-pass
//! snapshots) must parse, verify, and print to text that parses back to an equal module, whose
//! printing is a fixpoint.

mod common;

use common::{corpus_files, read_text};
use hlo::parse::parse_module;
use hlo::print::module_to_string;

#[test]
fn corpus_exists_and_is_not_empty() {
    let files = corpus_files();
    assert!(
        files.len() >= 100,
        "expected the real XLA dumps under corpora/jax (found {} HLO text files)",
        files.len()
    );
}

#[test]
fn every_corpus_file_parses_verifies_and_round_trips() {
    let files = corpus_files();
    let mut failures = Vec::new();
    for f in &files {
        let text = read_text(f);
        let m = match parse_module(&text) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}:{e}", f.display()));
                continue;
            }
        };
        if let Err(e) = hlo::verify::verify_module(&m) {
            failures.push(format!("{}: verify: {e}", f.display()));
            continue;
        }
        let printed = module_to_string(&m);
        let back = match parse_module(&printed) {
            Ok(b) => b,
            Err(e) => {
                failures.push(format!("{}: re-parse of printed text: {e}", f.display()));
                continue;
            }
        };
        if back != m {
            let detail = first_difference(&m, &back);
            failures.push(format!(
                "{}: printed text parses to a different module: {detail}",
                f.display()
            ));
            continue;
        }
        let again = module_to_string(&back);
        if again != printed {
            failures.push(format!("{}: printing is not a fixpoint", f.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus files failed:\n{}",
        failures.len(),
        files.len(),
        failures
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn first_difference(a: &hlo::Module, b: &hlo::Module) -> String {
    if a.name != b.name || a.header_attrs != b.header_attrs || a.entry != b.entry {
        return "module header or entry".into();
    }
    if a.stack_frame_tables != b.stack_frame_tables {
        return "stack frame tables".into();
    }
    for (ca, cb) in a.computations.iter().zip(&b.computations) {
        if ca != cb {
            for (ia, ib) in ca.instructions.iter().zip(&cb.instructions) {
                if ia != ib {
                    return format!(
                        "computation {} instruction {}: {:?} vs {:?}",
                        ca.name, ia.name, ia, ib
                    );
                }
            }
            return format!("computation {}", ca.name);
        }
    }
    "computation count".into()
}

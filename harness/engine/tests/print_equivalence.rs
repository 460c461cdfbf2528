//! Our printer changes nothing XLA can see: for every `before_optimizations` module of the
//! corpus, XLA CPU gives bitwise-identical outputs for the original text and for our printed
//! text, on the same inputs.
//!
//! Needs the project's venv (or `HLO_DIFF_PYTHON`); fails without it unless `HLO_DIFF_SKIP_XLA=1`.

use test_support::need_xla;

use engine::backend::{Backend, Outcome, RunOptions};
use engine::worker::{repo_root, Platform, WorkerBackend, WorkerConfig};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

fn corpus_modules() -> Vec<PathBuf> {
    let dir = repo_root().join("corpora/jax/dump");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".before_optimizations.txt"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn xla_cpu_outputs_are_bitwise_identical_for_original_and_printed_text() {
    if !need_xla() {
        return;
    }
    let files = corpus_modules();
    assert!(files.len() >= 40, "only {} corpus modules", files.len());
    let xla = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(2));
    let next = AtomicUsize::new(0);
    let problems = Mutex::new(Vec::new());
    let compared = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(path) = files.get(i) else { break };
                let original = std::fs::read_to_string(path).unwrap();
                let module = hlo::parse::parse_module(&original)
                    .unwrap_or_else(|e| panic!("{}:{e}", path.display()));
                let printed = hlo::print::module_to_string(&module);
                let inputs = generators::generate_inputs_from_seed(
                    &module,
                    7,
                    &generators::Config::default(),
                );
                let opts = RunOptions::default();
                let a = xla.run(&original, &inputs, &opts);
                let b = xla.run(&printed, &inputs, &opts);
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                match (&a, &b) {
                    (Outcome::Ok(ra), Outcome::Ok(rb)) => {
                        compared.fetch_add(1, Ordering::SeqCst);
                        if ra.outputs != rb.outputs {
                            problems
                                .lock()
                                .unwrap()
                                .push(format!("{name}: outputs differ"));
                        }
                    }
                    _ if a.kind() == b.kind() => problems.lock().unwrap().push(format!(
                        "{name}: neither text ran: original {a}, printed {b}"
                    )),
                    _ => problems
                        .lock()
                        .unwrap()
                        .push(format!("{name}: original gave {a}, printed gave {b}")),
                }
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(compared.load(Ordering::SeqCst), files.len());
}

//! The known-bug registry (`corpora/known-bugs/`) against real XLA: every entry's regression
//! module still lands in that entry's bucket (minimized, bisected, bucketed as a campaign
//! does), or, for an entry whose bug is fixed, no longer shows a bug. Every XLA bug module in
//! `corpora/regressions/` has an entry.

use engine::backend::{Backend, RunOptions};
use engine::interp_backend::InterpBackend;
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use findings::registry::{Registry, Status};
use judge::{Judge, Trial, VerdictKind};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tools::campaign::{bucket_case, MinimizeConfig};
use tools::minimize::Case;

fn registry() -> Registry {
    Registry::load(&test_support::repo_root().join("corpora/known-bugs")).expect("registry reads")
}

/// The module and inputs of a regression file (`F.lit` when present, in any input format
/// `--inputs` takes, else seeded inputs).
fn case_of(path: &Path) -> (String, Case) {
    let text = std::fs::read_to_string(path).unwrap();
    let module = hlo::parse::parse_module(&text).unwrap();
    let lit = path.with_extension("lit");
    let inputs = if lit.is_file() {
        findings::inputs::read_inputs_file(&lit)
            .unwrap()
            .fit_to(&module.entry_computation().parameter_shapes())
            .0
    } else {
        generators::generate_inputs_from_seed(&module, 0, &generators::Config::default())
    };
    (text, Case { module, inputs })
}

/// A case minimized, bisected and bucketed as a campaign does it (default minimizer, 60 s).
fn bucket_as_campaign(
    case: Case,
    backend: &Arc<WorkerBackend>,
) -> findings::bucket::MinimizedRecord {
    bucket_case(
        case,
        None,
        backend,
        Vec::new(),
        &MinimizeConfig::default(),
        Duration::from_secs(60),
        None,
    )
}

#[test]
fn every_xla_bug_module_has_a_registry_entry() {
    let reg = registry();
    assert!(reg.entries.len() >= 13, "{} entries", reg.entries.len());
    let dir = test_support::corpora("regressions");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("xla_") && name.ends_with(".hlo")) {
            continue;
        }
        let rel = format!("corpora/regressions/{name}");
        let covered = reg
            .entries
            .iter()
            .any(|x| x.regression == rel || x.notes.contains(&rel) || x.notes.contains(&name));
        assert!(covered, "{rel} has no entry in corpora/known-bugs");
    }
    for x in &reg.entries {
        if !x.regression.is_empty() {
            assert!(
                test_support::repo_root().join(&x.regression).is_file(),
                "{}: regression {} is missing",
                x.id,
                x.regression
            );
        }
    }
}

#[test]
fn every_regression_module_lands_in_its_entrys_bucket() {
    if !test_support::need_xla() {
        return;
    }
    let reg = registry();
    let cpu = Arc::new(WorkerBackend::xla_cpu(
        WorkerConfig::new(Platform::Cpu).with_workers(1),
    ));
    // Entries of one backend's bugs (`backend = "pjrt"`: the PJRT plugin scripts/setup installs)
    // are checked on that backend.
    let pjrt = Arc::new(WorkerBackend::pjrt(
        WorkerConfig::new(Platform::Cpu).with_workers(1),
    ));
    let host = engine::environment::cpu();
    let mut wrong = Vec::new();
    for e in reg.entries.iter().filter(|e| !e.regression.is_empty()) {
        let backend = match e.matcher.backend.as_deref() {
            Some("pjrt") => &pjrt,
            _ => &cpu,
        };
        let (text, case) = case_of(&test_support::repo_root().join(&e.regression));
        if e.check.as_deref() == Some("verbatim") {
            // Checked on its exact text: the judge must still see a mismatch.
            let outcomes = vec![
                (
                    "interp".to_string(),
                    InterpBackend::new().run_module(&case.module, &case.inputs),
                ),
                (
                    "xla-cpu".to_string(),
                    backend.run(&text, &case.inputs, &RunOptions::default()),
                ),
            ];
            let v = Judge::offline()
                .judge(&Trial {
                    module: &case.module,
                    text: Some(&text),
                    inputs: &case.inputs,
                    outcomes: &outcomes,
                    reruns: &[],
                    tolerance: &judge::compare::Tolerance::for_module(&case.module),
                })
                .verdict;
            let shows = v.kind == VerdictKind::Mismatch;
            let intended_no_bug = e.status == Status::Intended && v.kind.agrees();
            if shows != (e.status != Status::Fixed) && !intended_no_bug {
                wrong.push(format!("{}: verbatim text gives {}", e.id, v.short()));
            }
            continue;
        }
        let rec = bucket_as_campaign(case, backend);
        // A bug of code only some hosts get (`host_features`): on a host without those
        // features its regression may show nothing, which is said, not failed.
        let missing = e.missing_host_features(&host.features);
        if !missing.is_empty() {
            let seen = match reg.lookup(&rec.bucket) {
                Some(x) if rec.status == "minimized" && x.id == e.id => "shows it anyway",
                _ => "does not show it",
            };
            eprintln!(
                "{}: this host ({}) lacks {} of the features the bug was seen with; its \
                 regression module {seen} ({}: {})",
                e.id,
                host.model,
                missing.join(", "),
                rec.status,
                rec.title
            );
            continue;
        }
        match (e.status, rec.status.as_str()) {
            (Status::Fixed, "no-bug") => {}
            (Status::Fixed, s) => {
                wrong.push(format!("{}: marked fixed, but {s}: {}", e.id, rec.title))
            }
            (_, "minimized") => match reg.lookup(&rec.bucket) {
                Some(x) if x.id == e.id => {}
                other => wrong.push(format!(
                    "{}: its regression lands in bucket {} ({}), claimed by {:?}: {:?}",
                    e.id,
                    rec.bucket_id,
                    rec.title,
                    other.map(|x| &x.id),
                    rec.bucket
                )),
            },
            // Intended behaviour is no bug: the judge may rightly find it legitimate.
            (Status::Intended, "no-bug") => {}
            (_, s) => wrong.push(format!(
                "{}: the regression module gives no bug ({s}: {}); if this jaxlib fixed it, set \
                 status = \"fixed\" and fixed_in",
                e.id, rec.message
            )),
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// Retired entries: modules XLA returns legitimate results for. Each
/// `corpora/regressions/allowed_*.hlo` has a row in `corpora/regressions/ALLOWED.md` naming
/// the freedom and where XLA grants it, and bucketed as a campaign buckets it, it is no bug
/// (the judge's match or "unproven": never a finding).
#[test]
fn every_allowed_module_is_no_bug() {
    let dir = test_support::corpora("regressions");
    let table = std::fs::read_to_string(dir.join("ALLOWED.md")).expect("ALLOWED.md");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("allowed_") && n.ends_with(".hlo"))
        .collect();
    names.sort();
    assert!(names.len() >= 2, "{names:?}");
    for n in &names {
        assert!(
            table.contains(&format!("`{n}`")),
            "{n} has no row in corpora/regressions/ALLOWED.md"
        );
    }
    if !test_support::need_xla() {
        return;
    }
    let backend = Arc::new(WorkerBackend::xla_cpu(
        WorkerConfig::new(Platform::Cpu).with_workers(1),
    ));
    let mut wrong = Vec::new();
    for n in &names {
        let (_, case) = case_of(&dir.join(n));
        let rec = bucket_as_campaign(case, &backend);
        if rec.status != "no-bug" {
            wrong.push(format!(
                "{n}: {} ({}): {}",
                rec.status, rec.title, rec.message
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

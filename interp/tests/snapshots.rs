//! Every per-pass snapshot of the pass-dump corpora (`corpora/jax/passes_all/`,
//! `corpora/jax/passes_narrow/`: `module_NNNN.<name>.NNNN.<pipeline>.after_<pass>.before_<next>.txt`
//! and the pass-internal stages such as `copy-insertion.after_removing_unnecessary_copies`) is
//! evaluated by the oracle on the seeded inputs of its module's `before_optimizations`, and must
//! agree (within 1e-5 absolute + 1e-4 relative; integers exactly) with
//!   1. the oracle's own result on `before_optimizations` (a pass must not change the value), and
//!   2. XLA CPU's result on `before_optimizations` (unless HLO_DIFF_SKIP_XLA=1).
//! A snapshot the oracle cannot evaluate must be listed in KNOWN_DIFFERENCES.md as
//! `- snapshot: MODULE_NAME STEP` (or `- snapshot: MODULE_NAME *` for all of a module's steps);
//! any other error or disagreement fails the test. The counts are printed.

mod common;
use common::*;
use hlo::dump::read_dump_dir;
use std::path::Path;

/// (module name, step or "*") pairs from KNOWN_DIFFERENCES.md lines `- snapshot: NAME STEP ...`.
fn known() -> Vec<(String, String)> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("KNOWN_DIFFERENCES.md"))
            .unwrap_or_default();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("- snapshot: "))
        .filter_map(|s| {
            let mut w = s.split_whitespace();
            Some((
                w.next()?.to_string(),
                w.next()?.trim_end_matches(',').to_string(),
            ))
        })
        .collect()
}

struct Case {
    label: String,
    name: String,
    /// (step label, file path) per snapshot.
    snapshots: Vec<(String, std::path::PathBuf)>,
    before: String,
    args: Vec<hlo::Literal>,
}

#[test]
fn pass_snapshots_agree_with_before_optimizations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/jax");
    let mut cases = Vec::new();
    for sub in ["passes_all", "passes_narrow"] {
        let dir = root.join(sub);
        if !dir.is_dir() {
            eprintln!("no corpus at {}: skipping it", dir.display());
            continue;
        }
        let index = read_dump_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for m in &index.modules {
            if m.timeline.is_empty() {
                continue;
            }
            let before = m.before_optimizations.as_ref().unwrap_or_else(|| {
                panic!(
                    "{sub}: module {} has snapshots but no before_optimizations",
                    m.id
                )
            });
            let before = std::fs::read_to_string(dir.join(before)).unwrap();
            let shapes = parse(&before).entry_computation().parameter_shapes();
            let args = fake_args(&shapes, 42);
            let name = m
                .name
                .clone()
                .unwrap_or_else(|| format!("module_{:04}", m.id));
            let snapshots = m
                .timeline
                .iter()
                .map(|s| {
                    let label = if s.pass_internal {
                        format!("{:04} {}.{}", s.step, s.pipeline, s.after)
                    } else {
                        format!("{:04} {}: after {}", s.step, s.pipeline, s.after)
                    };
                    (label, dir.join(&s.path))
                })
                .collect();
            cases.push(Case {
                label: format!("{sub}/{name}"),
                name,
                snapshots,
                before,
                args,
            });
        }
    }
    if cases.is_empty() {
        eprintln!("no pass-dump corpora: nothing to check");
        return;
    }
    let xla = if skip_xla() {
        None
    } else {
        let jobs: Vec<_> = cases
            .iter()
            .map(|c| (c.before.clone(), c.args.clone()))
            .collect();
        Some(run_xla(&jobs))
    };
    let known = known();
    let mut failures = Vec::new();
    let mut unsupported = Vec::new();
    let (mut total, mut agree, mut ynn) = (0usize, 0usize, 0usize);
    for (k, c) in cases.iter().enumerate() {
        let reference = eval(&c.before, &c.args)
            .unwrap_or_else(|e| panic!("{}: before_optimizations: {e}", c.label));
        let ref_leaves: Vec<_> = reference.leaves().into_iter().cloned().collect();
        if let Some(xla) = &xla {
            match &xla[k] {
                Ok(theirs) => {
                    for (j, (a, b)) in ref_leaves.iter().zip(theirs).enumerate() {
                        if let Err(e) = compare(a, b, 1e-5, 1e-4) {
                            failures.push(format!(
                                "{} before_optimizations leaf {j} vs XLA: {e}",
                                c.label
                            ));
                        }
                    }
                    if ref_leaves.len() != theirs.len() {
                        failures.push(format!(
                            "{}: {} leaves vs XLA {}",
                            c.label,
                            ref_leaves.len(),
                            theirs.len()
                        ));
                    }
                }
                Err(e) => failures.push(format!(
                    "{}: XLA error on before_optimizations: {e}",
                    c.label
                )),
            }
        }
        for (step, path) in &c.snapshots {
            total += 1;
            let text = std::fs::read_to_string(path).unwrap();
            // kCustom `__ynn_fusion`s (dot-library-rewriter) are evaluated by their fused
            // computation: counted to show they were really exercised.
            ynn += text.contains("__ynn_fusion") as usize;
            let m = match hlo::parse::parse_module(&text) {
                Ok(m) => m,
                Err(e) => {
                    failures.push(format!("{} [{step}]: parse error: {e}", c.label));
                    continue;
                }
            };
            let ours = match interp::evaluate(&m, &c.args) {
                Ok(v) => v,
                Err(e) => {
                    let num = &step[..4];
                    let listed = known
                        .iter()
                        .any(|(n, s)| *n == c.name && (s == "*" || s == num));
                    let msg = format!("{} [{step}]: {e}", c.label);
                    if listed {
                        unsupported.push(msg);
                    } else {
                        failures.push(format!("{msg} (not listed in KNOWN_DIFFERENCES.md)"));
                    }
                    continue;
                }
            };
            let leaves: Vec<_> = ours.leaves().into_iter().cloned().collect();
            let mut ok = leaves.len() == ref_leaves.len();
            if !ok {
                failures.push(format!(
                    "{} [{step}]: {} leaves vs before_optimizations {}",
                    c.label,
                    leaves.len(),
                    ref_leaves.len()
                ));
            }
            for (j, (a, b)) in leaves.iter().zip(&ref_leaves).enumerate() {
                if let Err(e) = compare(a, b, 1e-5, 1e-4) {
                    ok = false;
                    failures.push(format!(
                        "{} [{step}] leaf {j} vs oracle on before_optimizations: {e}",
                        c.label
                    ));
                }
            }
            if let Some(Ok(theirs)) = xla.as_ref().map(|x| &x[k]) {
                for (j, (a, b)) in leaves.iter().zip(theirs).enumerate() {
                    if let Err(e) = compare(a, b, 1e-5, 1e-4) {
                        ok = false;
                        failures.push(format!(
                            "{} [{step}] leaf {j} vs XLA CPU on before_optimizations: {e}",
                            c.label
                        ));
                    }
                }
            }
            agree += ok as usize;
        }
    }
    eprintln!(
        "{} modules, {total} snapshots ({ynn} with __ynn_fusion): {agree} agree, {} not evaluable \
         (listed), {} failures",
        cases.len(),
        unsupported.len(),
        failures.len()
    );
    for u in &unsupported {
        eprintln!("  not evaluable: {u}");
    }
    assert!(total > 0);
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

//! Every module of `corpora/jax/dump/` (real XLA dumps, before and after CPU optimization) is
//! evaluated on seeded inputs and compared with XLA CPU running the before-optimizations module
//! on the same inputs. Disagreements must be fixed or listed in `KNOWN_DIFFERENCES.md`; this test
//! fails on any disagreement not listed there.

mod common;
use common::*;
use std::path::Path;

/// (module file name substring, reason) pairs from KNOWN_DIFFERENCES.md: lines `- corpus: NAME`.
fn known() -> Vec<String> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("KNOWN_DIFFERENCES.md"))
            .unwrap_or_default();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("- corpus: "))
        .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn corpus_modules_agree_with_xla_cpu() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/jax/dump");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        eprintln!("no corpus at {}: nothing to check", dir.display());
        return;
    };
    let mut befores: Vec<_> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".before_optimizations.txt"))
        .collect();
    befores.sort();
    assert!(!befores.is_empty());
    let only = std::env::var("INTERP_CORPUS_ONLY").ok();
    let known = known();
    let mut jobs = Vec::new();
    let mut cases = Vec::new();
    for b in &befores {
        let name = b.file_name().unwrap().to_string_lossy().to_string();
        if let Some(o) = &only {
            if !name.contains(o.as_str()) {
                continue;
            }
        }
        let text = std::fs::read_to_string(b).unwrap();
        let m = parse(&text);
        let shapes = m.entry_computation().parameter_shapes();
        let args = fake_args(&shapes, 42);
        let after = b
            .to_string_lossy()
            .replace(".before_optimizations.txt", ".cpu_after_optimizations.txt");
        jobs.push((text.clone(), args.clone()));
        cases.push((name, text, std::fs::read_to_string(&after).ok(), args));
    }
    let xla = if skip_xla() {
        None
    } else {
        Some(run_xla(&jobs))
    };
    let mut failures = Vec::new();
    let mut report = Vec::new();
    // Module stages compared with XLA's results.
    let mut compared = 0usize;
    for (k, (name, before, after, args)) in cases.iter().enumerate() {
        let is_known = known
            .iter()
            .any(|n| !n.is_empty() && name.contains(n.as_str()));
        for (stage, text) in [("before", Some(before)), ("after", after.as_ref())] {
            let Some(text) = text else { continue };
            let t0 = std::time::Instant::now();
            let ours = eval(text, args);
            let dt = t0.elapsed();
            let ours = match ours {
                Ok(v) => v,
                Err(e) => {
                    let msg = format!("{name} [{stage}]: interp error: {e}");
                    report.push(msg.clone());
                    if !is_known {
                        failures.push(msg);
                    }
                    continue;
                }
            };
            let Some(xla) = &xla else { continue };
            let theirs = match &xla[k] {
                Ok(v) => v,
                Err(e) => {
                    // XLA wrote these modules itself: one it cannot run compares nothing, so it
                    // fails the test unless KNOWN_DIFFERENCES.md lists it.
                    let msg = format!("{name} [{stage}]: XLA error: {e}");
                    report.push(msg.clone());
                    if !is_known {
                        failures.push(msg);
                    }
                    continue;
                }
            };
            compared += 1;
            let leaves: Vec<_> = ours.leaves().into_iter().cloned().collect();
            if leaves.len() != theirs.len() {
                failures.push(format!(
                    "{name} [{stage}]: {} leaves vs XLA {}",
                    leaves.len(),
                    theirs.len()
                ));
                continue;
            }
            let mut worst = 0.0f64;
            for (j, (a, b)) in leaves.iter().zip(theirs).enumerate() {
                match compare(a, b, 1e-5, 1e-4) {
                    Ok(w) => worst = worst.max(w),
                    Err(e) => {
                        let msg = format!("{name} [{stage}] leaf {j}: {e}");
                        report.push(msg.clone());
                        if !is_known {
                            failures.push(msg);
                        }
                    }
                }
            }
            report.push(format!(
                "{name} [{stage}]: ok in {dt:?}, worst error/tolerance {worst:.3}"
            ));
        }
    }
    for r in &report {
        eprintln!("{r}");
    }
    if xla.is_some() {
        assert!(
            compared > 0,
            "no module was compared with XLA:\n{}",
            report.join("\n")
        );
    }
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

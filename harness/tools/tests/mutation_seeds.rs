//! The seed modules of mutation fuzzing (`generators/seeds/mutation_seeds.hlo`, embedded by
//! `generators::mutate`) are exactly the usable modules of `corpora/`, in a fixed order: the
//! jax programs' `before_optimizations` texts (`corpora/jax/dump/`, by file name), every
//! regression module (`corpora/regressions/*.hlo`, by file name), and the texts of XLA's own
//! tests that XLA's parser accepts (`corpora/xla-tests/xla-tests.jsonl`, by origin and index).
//!
//! Usable: our parser reads it, with metadata and header attributes dropped
//! (`generators::mutate::canonical_seed`) our printer's text parses back to the same module,
//! our verifier accepts it (mixed precision included, which the oracle refuses), no constant is
//! elided, it is compiler input (`mutate::not_compiler_input`: no `fusion`, no bitcast but the
//! identity), it stays
//! within the default configuration's bounds (`mutate::within_bounds`: array elements, dot and
//! convolution work), and the oracle evaluates it on seeded inputs within a
//! small budget. A text another
//! seed already has (the same module after canonicalization) is left out.
//!
//! `UPDATE_MUTATION_SEEDS=1` writes the file; otherwise the test fails when the file is not what
//! the corpora and this build's parser, verifier and oracle make (regenerate it then, which
//! changes what mutation seeds pick: campaigns are reproducible within one build).

use generators::mutate::{canonical_seed, has_elided_constant, read_seeds, write_seeds};
use serde::Deserialize;
use std::path::PathBuf;

/// Seeds larger than this (printed text) are left out: the embedded file stays small and
/// mutated programs stay quick to compile.
const MAX_SEED_BYTES: usize = 24 * 1024;

fn repo() -> PathBuf {
    test_support::repo_root()
}

fn seeds_file() -> PathBuf {
    repo().join("generators/seeds/mutation_seeds.hlo")
}

#[derive(Deserialize)]
struct XlaTest {
    origin: String,
    index: u64,
    xla: String,
    text: String,
}

fn sorted_files(dir: &std::path::Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// Every candidate (id, text), in the fixed order.
fn candidates() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let corpora = repo().join("corpora");
    for p in sorted_files(&corpora.join("jax/dump"), ".before_optimizations.txt") {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let stem = name.trim_end_matches(".before_optimizations.txt");
        out.push((format!("jax/{stem}"), std::fs::read_to_string(&p).unwrap()));
    }
    for p in sorted_files(&corpora.join("regressions"), ".hlo") {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        out.push((
            format!("regressions/{name}"),
            std::fs::read_to_string(&p).unwrap(),
        ));
    }
    let jsonl = std::fs::read_to_string(corpora.join("xla-tests/xla-tests.jsonl")).unwrap();
    let mut tests: Vec<XlaTest> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    tests.sort_by(|a, b| (&a.origin, a.index).cmp(&(&b.origin, b.index)));
    for t in tests.into_iter().filter(|t| t.xla == "accept") {
        out.push((format!("xla-tests/{}#{}", t.origin, t.index), t.text));
    }
    out
}

/// The seed's text when the module is usable.
fn usable(text: &str) -> Option<String> {
    let m = std::panic::catch_unwind(|| hlo::parse::parse_module(text).ok())
        .ok()
        .flatten()?;
    let m = canonical_seed(&m);
    let printed = hlo::print::module_to_string(&m);
    if printed.len() > MAX_SEED_BYTES || printed.contains(generators::mutate::SEED_MARKER) {
        return None;
    }
    let again = hlo::parse::parse_module(&printed).ok()?;
    if again != m
        || hlo::verify::verify_module(&again).is_err()
        || hlo::verify::mixed_precision(&again).is_some()
        || has_elided_constant(&again)
        || !generators::mutate::within_bounds(&again, &generators::Config::default())
        || generators::mutate::not_compiler_input(&again).is_some()
    {
        return None;
    }
    let inputs = generators::try_generate_inputs_from_seed(
        &again,
        0,
        &generators::Config::default(),
        16 << 20,
    )
    .ok()?;
    let opts = interp::EvalOptions {
        max_steps: 2_000_000,
        max_bytes: 256 << 20,
        ..interp::EvalOptions::default()
    };
    interp::evaluate_with(&again, &inputs, &opts).ok()?;
    Some(printed)
}

fn compute() -> Vec<(String, String)> {
    let cands = candidates();
    let threads = 2;
    let results: Vec<Option<String>> = std::thread::scope(|s| {
        let chunks: Vec<_> = (0..threads)
            .map(|t| {
                let cands = &cands;
                s.spawn(move || {
                    cands
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % threads == t)
                        .map(|(i, (id, text))| {
                            if std::env::var_os("MUTATION_SEEDS_TRACE").is_some() {
                                eprintln!("seed candidate {id}");
                            }
                            (i, usable(text))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all = vec![None; cands.len()];
        for c in chunks {
            for (i, r) in c.join().unwrap() {
                all[i] = r;
            }
        }
        all
    });
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for ((id, _), r) in cands.into_iter().zip(results) {
        if let Some(text) = r {
            if seen.insert(text.clone()) {
                out.push((id, text));
            }
        }
    }
    out
}

#[test]
fn mutation_seed_file_is_current() {
    let seeds = compute();
    let by_source = |s: &str| seeds.iter().filter(|(id, _)| id.starts_with(s)).count();
    eprintln!(
        "usable seed modules: {} (jax {}, regressions {}, xla-tests {})",
        seeds.len(),
        by_source("jax/"),
        by_source("regressions/"),
        by_source("xla-tests/")
    );
    let text = write_seeds(&seeds);
    if std::env::var_os("UPDATE_MUTATION_SEEDS").is_some() {
        std::fs::write(seeds_file(), &text).unwrap();
    }
    // Every source contributes, and the embedded file is the one just computed.
    assert!(by_source("jax/") >= 20, "jax seeds: {}", by_source("jax/"));
    assert!(by_source("regressions/") >= 20);
    assert!(by_source("xla-tests/") >= 1000);
    let embedded = read_seeds(generators::mutate::SEEDS_TEXT);
    let want = read_seeds(&text);
    let ids = |v: &[generators::mutate::SeedModule]| {
        v.iter()
            .map(|s| format!("{} {}", s.id, s.hash))
            .collect::<Vec<_>>()
    };
    let (have, want) = (ids(&embedded), ids(&want));
    let first_difference = have
        .iter()
        .zip(&want)
        .position(|(a, b)| a != b)
        .unwrap_or(have.len().min(want.len()));
    assert!(
        have == want,
        "generators/seeds/mutation_seeds.hlo is stale ({} seeds embedded, {} usable; first \
         difference at {first_difference}: {:?} vs {:?}): run this test with \
         UPDATE_MUTATION_SEEDS=1 and rebuild",
        have.len(),
        want.len(),
        have.get(first_difference),
        want.get(first_difference)
    );
}

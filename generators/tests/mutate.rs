//! Mutation fuzzing from real modules (`generators::mutate`): the same seed gives the same
//! module and inputs byte for byte, every mutated module passes our verifier and survives a
//! print/parse round trip, every mutation kind applies somewhere, arbitrary bytes never panic,
//! and `generate_program` mutates at the configured share.

use arbitrary::Unstructured;
use generators::mutate::{mutate, mutate_from_seed, seeds, KINDS};
use generators::Config;
use proptest::prelude::*;
use std::collections::BTreeMap;

#[test]
fn embedded_seed_modules_parse_and_verify() {
    let s = seeds();
    assert!(s.len() >= 1000, "{} seed modules", s.len());
    for src in ["jax", "regressions", "xla-tests"] {
        assert!(s.iter().any(|x| x.source() == src), "no seed from {src}");
    }
    for x in s {
        assert_eq!(generators::mutate::fnv64_hex(&x.text), x.hash, "{}", x.id);
        let m = hlo::parse::parse_module(&x.text).unwrap_or_else(|e| panic!("{}: {e}", x.id));
        hlo::verify::verify_module(&m).unwrap_or_else(|e| panic!("{}: {e}", x.id));
    }
}

#[test]
fn same_seed_same_mutated_module_and_inputs() {
    let cfg = Config::default();
    for seed in 0..60u64 {
        let (a, oa) = mutate_from_seed(seed, &cfg).expect("seeds are embedded");
        let (b, ob) = mutate_from_seed(seed, &cfg).unwrap();
        assert_eq!(
            hlo::print::module_to_string(&a),
            hlo::print::module_to_string(&b)
        );
        assert_eq!(oa, ob);
        let ia = generators::generate_inputs_from_seed(&a, seed, &cfg);
        let ib = generators::generate_inputs_from_seed(&b, seed, &cfg);
        assert_eq!(ia, ib, "seed {seed}");
    }
}

/// Every mutated module of 400 seeds is valid for our verifier and prints to a text that
/// parses back to it; every kind is applied at least once.
#[test]
fn mutated_modules_are_valid_and_every_kind_applies() {
    let cfg = Config::default();
    let mut applied: BTreeMap<&str, usize> = BTreeMap::new();
    let mut unmutated = 0;
    let n = 400u64;
    for seed in 0..n {
        let (m, o) = mutate_from_seed(seed, &cfg).unwrap();
        if let Err(e) = hlo::verify::verify_module(&m) {
            panic!(
                "seed {seed} ({o}): {e}\n{}",
                hlo::print::module_to_string(&m)
            );
        }
        let text = hlo::print::module_to_string(&m);
        let again = hlo::parse::parse_module(&text)
            .unwrap_or_else(|e| panic!("seed {seed} ({o}): {e}\n{text}"));
        assert_eq!(hlo::print::module_to_string(&again), text, "seed {seed}");
        // Callees come before their callers, as XLA's parser needs them.
        for (ci, c) in m.computations.iter().enumerate() {
            for i in &c.instructions {
                for callee in i.called_computations() {
                    assert!(
                        callee < ci,
                        "seed {seed} ({o}): {} calls a later computation",
                        c.name
                    );
                }
            }
        }
        if o.mutations.is_empty() {
            unmutated += 1;
        }
        for what in &o.mutations {
            let kind = what.split(':').next().unwrap();
            *applied
                .entry(
                    KINDS
                        .iter()
                        .find(|(k, _)| k.name() == kind)
                        .unwrap()
                        .0
                        .name(),
                )
                .or_default() += 1;
        }
    }
    eprintln!("applied over {n} seeds: {applied:?}; unmutated {unmutated}");
    for (k, _) in KINDS {
        assert!(
            applied.contains_key(k.name()),
            "{} never applied over {n} seeds: {applied:?}",
            k.name()
        );
    }
    // Most seed modules have somewhere a mutation applies.
    assert!(unmutated * 5 < n as usize, "{unmutated} of {n} unmutated");
}

#[test]
fn generate_program_mutates_at_the_configured_share() {
    let none = Config {
        mutation_percent: 0,
        ..Config::default()
    };
    assert!((0..200u64).all(|s| generators::generate_program(s, &none).1.is_none()));
    let cfg = Config {
        mutation_percent: 20,
        ..Config::default()
    };
    let mutated = (0..1000u64)
        .filter(|&s| generators::generate_program(s, &cfg).1.is_some())
        .count();
    assert!((120..=280).contains(&mutated), "{mutated} of 1000");
    // A synthesized program is what generate_from_seed makes.
    let s = (0..1000u64)
        .find(|&s| generators::generate_program(s, &cfg).1.is_none())
        .unwrap();
    assert_eq!(
        generators::generate_program(s, &cfg).0,
        generators::generate_from_seed(s, &cfg)
    );
    // A stored configuration without the knob reads as synthesis only.
    let mut v = serde_json::to_value(Config::default()).unwrap();
    v.as_object_mut().unwrap().remove("mutation_percent");
    let old: Config = serde_json::from_value(v).unwrap();
    assert_eq!(old.mutation_percent, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Any bytes give a valid module (running out of bytes only makes choices take their
    /// first option).
    #[test]
    fn arbitrary_bytes_give_valid_mutants(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut u = Unstructured::new(&bytes);
        let (m, o) = mutate(&mut u, &Config::default()).unwrap();
        prop_assert!(hlo::verify::verify_module(&m).is_ok(), "{}", o);
    }
}

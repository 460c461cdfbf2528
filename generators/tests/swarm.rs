//! Swarm per program (`program_config`) and realistic patterns (`realistic_percent`).

use generators::{generate_from_seed, generate_inputs_from_seed, program_config, Config, OpFamily};
use hlo::{Module, Opcode, PrimitiveType};

fn text(m: &Module) -> String {
    hlo::print::module_to_string(m)
}

#[test]
fn program_configs_are_deterministic_and_stay_within_the_base() {
    let base = Config::default();
    let mut realistic = 0;
    let mut type_sets = std::collections::BTreeSet::new();
    for seed in 0..300u64 {
        let c = program_config(&base, seed);
        assert_eq!(c, program_config(&base, seed), "seed {seed}");
        assert!(c
            .element_types
            .iter()
            .all(|t| base.element_types.contains(t)));
        assert!(!c.element_types.is_empty());
        assert!(OpFamily::ALL.iter().any(|&f| c.weight(f) > 0));
        assert!(OpFamily::ALL
            .iter()
            .all(|&f| c.weight(f) == 0 || base.weight(f) > 0));
        assert_eq!(
            (c.max_elements, c.max_work, c.avoid_known_xla_bugs),
            (base.max_elements, base.max_work, base.avoid_known_xla_bugs)
        );
        realistic += usize::from(c.realistic_percent > 0);
        type_sets.insert(c.element_types.clone());
    }
    assert!(
        (20..=80).contains(&realistic),
        "{realistic} of 300 draw patterns"
    );
    assert!(type_sets.len() > 250, "only {} type sets", type_sets.len());
    // A narrower base narrows every draw.
    let narrow = Config {
        element_types: vec![PrimitiveType::F32],
        op_weights: [(OpFamily::Binary, 5)].into_iter().collect(),
        ..Config::default()
    };
    for seed in 0..50u64 {
        let c = program_config(&narrow, seed);
        assert_eq!(c.element_types, vec![PrimitiveType::F32]);
        assert_eq!(
            c.op_weights.keys().copied().collect::<Vec<_>>(),
            vec![OpFamily::Binary]
        );
    }
}

#[test]
fn swarm_programs_verify_and_reproduce_from_their_recorded_config() {
    let base = Config::default();
    for seed in 0..150u64 {
        let c = program_config(&base, seed);
        let m = generate_from_seed(seed, &c);
        hlo::verify::verify_module(&m).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", text(&m)));
        // What a finding records: the configuration as JSON.
        let back: Config = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        let again = generate_from_seed(seed, &back);
        assert_eq!(text(&m), text(&again), "seed {seed}");
        let a = generate_inputs_from_seed(&m, seed, &c);
        assert_eq!(a, generate_inputs_from_seed(&again, seed, &back));
    }
}

fn elements(s: &hlo::Shape) -> u64 {
    s.dims().iter().map(|&d| d.max(0) as u64).product()
}

/// With `realistic_percent` 100 every module starts with a pattern: the shapes real programs
/// use, valid, within the bounds, and the pattern's result is an output.
#[test]
fn realistic_patterns_reach_the_shapes_real_programs_use() {
    let cfg = Config {
        realistic_percent: 100,
        ..Config::default()
    };
    let (mut batched_dots, mut long_dots, mut high_rank_reduces, mut convs, mut long_sorts) =
        (0, 0, 0, 0, 0);
    let (mut big_elementwise, mut library) = (0, std::collections::BTreeMap::new());
    for seed in 0..400u64 {
        let m = generate_from_seed(seed, &cfg);
        hlo::verify::verify_module(&m).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", text(&m)));
        for comp in &m.computations {
            for i in &comp.instructions {
                // Inputs (the memory budget) within `max_elements`; the random ops after a
                // pattern may grow a value a little (a base-dilated reduce-window, a pad).
                if i.opcode == Opcode::Parameter && i.shape.is_array() {
                    assert!(
                        elements(&i.shape) <= cfg.max_elements,
                        "seed {seed}: {}",
                        i.name
                    );
                }
                if i.shape.is_array() {
                    assert!(
                        elements(&i.shape) <= 4 * cfg.max_elements,
                        "seed {seed}: {}",
                        i.name
                    );
                }
                let op = |k: usize| &comp.instructions[i.operands[k]].shape;
                match i.opcode {
                    Opcode::Dot => {
                        batched_dots += usize::from(i.ints("lhs_batch_dims").is_some());
                        long_dots += usize::from(
                            op(0).dims().iter().chain(op(1).dims()).any(|&d| d >= 1024),
                        );
                        let k: u64 = i
                            .ints("lhs_contracting_dims")
                            .unwrap_or(&[])
                            .iter()
                            .map(|&d| op(0).dims()[d as usize].max(1) as u64)
                            .product();
                        assert!(elements(&i.shape) * k <= cfg.max_work, "seed {seed}");
                    }
                    Opcode::Reduce if op(0).rank() >= 5 => high_rank_reduces += 1,
                    Opcode::Convolution
                        if op(1).dims().iter().filter(|&&d| d >= 8).count() >= 2 =>
                    {
                        convs += 1
                    }
                    Opcode::Sort if op(0).dims().iter().any(|&d| d >= 256) => long_sorts += 1,
                    Opcode::Fft | Opcode::TopK | Opcode::Cholesky | Opcode::TriangularSolve => {
                        *library.entry(i.opcode).or_insert(0) += 1
                    }
                    Opcode::Exp | Opcode::Tanh | Opcode::Add | Opcode::Maximum
                        if elements(&i.shape) >= 10_000 =>
                    {
                        big_elementwise += 1
                    }
                    _ => {}
                }
            }
        }
        let e = m.entry_computation();
        let outs = &e.instructions[e.root].operands;
        assert!(
            outs.iter().any(|&o| {
                let i = &e.instructions[o];
                matches!(
                    i.opcode,
                    Opcode::Dot
                        | Opcode::Reduce
                        | Opcode::Maximum
                        | Opcode::Convolution
                        | Opcode::Sort
                        | Opcode::ReduceWindow
                        | Opcode::Fft
                        | Opcode::TriangularSolve
                        | Opcode::GetTupleElement
                ) || elements(&i.shape) >= 1000
            }),
            "seed {seed}: no pattern result among the outputs\n{}",
            text(&m)
        );
    }
    for op in [
        Opcode::Fft,
        Opcode::TopK,
        Opcode::Cholesky,
        Opcode::TriangularSolve,
    ] {
        let n = library.get(&op).copied().unwrap_or(0);
        assert!(n >= 3, "only {n} {} in 400 modules", op.name());
    }
    for (what, n, min) in [
        ("batched dots", batched_dots, 20),
        ("dots with a dimension >= 1024", long_dots, 40),
        ("reduces of rank >= 5", high_rank_reduces, 20),
        ("convolutions with >= 8 features", convs, 10),
        ("sorts of rows >= 256", long_sorts, 10),
        ("elementwise ops over >= 10^4 elements", big_elementwise, 60),
    ] {
        assert!(n >= min, "only {n} {what} in 400 modules");
    }
}

#[test]
fn the_default_configuration_draws_no_pattern() {
    assert_eq!(Config::default().realistic_percent, 0);
    // Running out of bytes with patterns on still gives a valid module.
    let cfg = Config {
        realistic_percent: 100,
        ..Config::default()
    };
    for n in [0usize, 1, 3, 8, 20, 64] {
        let bytes = generators::rng::seed_bytes(n as u64, n);
        let m = generators::generate(&mut arbitrary::Unstructured::new(&bytes), &cfg).unwrap();
        hlo::verify::verify_module(&m).unwrap_or_else(|e| panic!("{n} bytes: {e}"));
    }
}

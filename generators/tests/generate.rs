//! Properties of generated modules: determinism, validity (our verifier, print/parse round
//! trip), fallbacks when bytes run out, swarm configurations, coverage, inputs and packing.

use arbitrary::Unstructured;
use generators::{
    generate, generate_from_seed, generate_inputs_from_seed, generate_swarm_from_seed,
    opcode_histogram, pack, Config,
};
use hlo::print::module_to_string;
use hlo::{Literal, Opcode, Shape};

fn check_valid(m: &hlo::Module, what: &str) {
    let text = module_to_string(m);
    if let Err(e) = hlo::verify::verify_module(m) {
        panic!("{what}: verifier rejects the generated module: {e}\n{text}");
    }
    let back = hlo::parse::parse_module(&text)
        .unwrap_or_else(|e| panic!("{what}: printed module does not parse: {e}\n{text}"));
    assert_eq!(
        module_to_string(&back),
        text,
        "{what}: print/parse/print is not a fixpoint"
    );
}

#[test]
fn same_seed_gives_the_same_text_and_different_seeds_differ() {
    let cfg = Config::default();
    let mut distinct = std::collections::BTreeSet::new();
    for seed in 0..50 {
        let a = module_to_string(&generate_from_seed(seed, &cfg));
        let b = module_to_string(&generate_from_seed(seed, &cfg));
        assert_eq!(a, b, "seed {seed} is not deterministic");
        distinct.insert(a);
    }
    assert!(
        distinct.len() >= 48,
        "only {} distinct modules from 50 seeds",
        distinct.len()
    );
}

#[test]
fn same_bytes_give_the_same_module() {
    let cfg = Config::default();
    let bytes: Vec<u8> = (0..3000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let a = generate(&mut Unstructured::new(&bytes), &cfg).unwrap();
    let b = generate(&mut Unstructured::new(&bytes), &cfg).unwrap();
    assert_eq!(a, b);
}

#[test]
fn default_modules_verify_and_round_trip() {
    let cfg = Config::default();
    for seed in 0..300 {
        check_valid(&generate_from_seed(seed, &cfg), &format!("seed {seed}"));
    }
}

#[test]
fn swarm_modules_verify_and_round_trip() {
    for seed in 0..200 {
        let (m, cfg) = generate_swarm_from_seed(seed);
        check_valid(&m, &format!("swarm seed {seed} ({cfg:?})"));
    }
}

#[test]
fn running_out_of_bytes_still_gives_a_valid_module() {
    let cfg = Config::default();
    for len in [0usize, 1, 2, 5, 17, 64, 200] {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
        let m = generate(&mut Unstructured::new(&bytes), &cfg).expect("generation never fails");
        check_valid(&m, &format!("{len} bytes"));
        assert!(m.entry_computation().root_instruction().opcode == Opcode::Tuple);
    }
}

#[test]
fn root_is_a_tuple_and_callees_come_first() {
    let cfg = Config::default();
    for seed in 0..100 {
        let m = generate_from_seed(seed, &cfg);
        assert_eq!(m.entry, m.computations.len() - 1, "entry is printed last");
        assert_eq!(
            m.entry_computation().root_instruction().opcode,
            Opcode::Tuple
        );
        for (ci, c) in m.computations.iter().enumerate() {
            for i in &c.instructions {
                for callee in i.called_computations() {
                    assert!(
                        callee < ci,
                        "seed {seed}: {} calls a later computation",
                        c.name
                    );
                }
            }
        }
    }
}

#[test]
fn shapes_respect_the_configured_limits() {
    let cfg = Config {
        max_rank: 3,
        max_elements: 5000,
        ..Config::default()
    };
    for seed in 0..100 {
        let m = generate_from_seed(seed, &cfg);
        for c in &m.computations {
            for i in &c.instructions {
                for leaf in i.shape.leaves() {
                    let n = leaf.element_count().unwrap();
                    assert!(n <= 5000, "seed {seed}: {} has {n} elements", i.name);
                }
            }
        }
    }
}

#[test]
fn switching_off_families_removes_their_opcodes() {
    let mut cfg = Config::default();
    cfg.op_weights
        .retain(|f, _| *f == generators::OpFamily::Binary);
    cfg.control_flow = false;
    let h = opcode_histogram(0, 100, &cfg);
    for op in [
        Opcode::Dot,
        Opcode::While,
        Opcode::Gather,
        Opcode::Sort,
        Opcode::Reduce,
    ] {
        assert!(
            !h.contains_key(&op),
            "{op} appears with only binary ops enabled"
        );
    }
    assert!(h.contains_key(&Opcode::Add) || h.contains_key(&Opcode::Multiply));
}

#[test]
fn element_type_set_restricts_data_types() {
    let cfg = Config {
        element_types: vec![hlo::PrimitiveType::F32],
        ..Config::default()
    };
    for seed in 0..50 {
        let m = generate_from_seed(seed, &cfg);
        let e = m.entry_computation();
        for (_, p) in e.parameters() {
            let t = p.shape.element_type().unwrap();
            // Index operands and predicates may use integer/pred types; data is f32.
            assert!(
                t == hlo::PrimitiveType::F32 || t.is_integer() || t == hlo::PrimitiveType::Pred,
                "seed {seed}: {t}"
            );
        }
    }
}

#[test]
fn config_round_trips_through_json() {
    let cfg = Config::default();
    let json = serde_json::to_string(&cfg).unwrap();
    let back: Config = serde_json::from_str(&json).unwrap();
    assert_eq!(back, cfg);
    let partial: Config = serde_json::from_str(r#"{"max_rank": 2}"#).unwrap();
    assert_eq!(partial.max_rank, 2);
    assert_eq!(partial.max_instructions, cfg.max_instructions);
    assert!(
        serde_json::from_str::<Config>(r#"{"max_rnk": 2}"#).is_err(),
        "unknown knobs are errors"
    );
}

#[test]
fn coverage_reaches_sixty_opcodes() {
    let h = opcode_histogram(0, 1500, &Config::default());
    let missing: Vec<&str> = [
        "atan2",
        "power",
        "remainder",
        "count-leading-zeros",
        "popcnt",
        "shift-left",
        "shift-right-logical",
        "shift-right-arithmetic",
        "and",
        "or",
        "xor",
        "not",
        "complex",
        "real",
        "imag",
        "is-finite",
        "round-nearest-afz",
        "round-nearest-even",
        "logistic",
        "cbrt",
        "erf",
        "exponential-minus-one",
        "log-plus-one",
        "tan",
        "compare",
        "select",
        "clamp",
        "convert",
        "bitcast-convert",
        "broadcast",
        "reshape",
        "transpose",
        "slice",
        "dynamic-slice",
        "dynamic-update-slice",
        "concatenate",
        "pad",
        "reverse",
        "iota",
        "reduce",
        "reduce-window",
        "select-and-scatter",
        "dot",
        "convolution",
        "gather",
        "scatter",
        "sort",
        "while",
        "conditional",
        "call",
        "map",
        "reduce-precision",
        "tuple",
        "get-tuple-element",
        "opt-barrier",
    ]
    .into_iter()
    .filter(|n| !h.contains_key(&Opcode::from_name(n).unwrap()))
    .collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
    assert!(
        h.len() >= 60,
        "only {} distinct opcodes: {:?}",
        h.len(),
        h.keys().collect::<Vec<_>>()
    );
}

#[test]
fn inputs_match_parameters_and_are_deterministic() {
    let cfg = Config::default();
    for seed in 0..100 {
        let m = generate_from_seed(seed, &cfg);
        let a = generate_inputs_from_seed(&m, seed, &cfg);
        let b = generate_inputs_from_seed(&m, seed, &cfg);
        assert_eq!(a, b);
        let shapes = m.entry_computation().parameter_shapes();
        assert_eq!(a.len(), shapes.len());
        for (lit, s) in a.iter().zip(&shapes) {
            assert!(
                lit.shape().compatible(s),
                "seed {seed}: input {:?} for {:?}",
                lit.shape(),
                s
            );
        }
    }
}

#[test]
fn index_inputs_are_mostly_in_range() {
    // A dynamic-slice of f32[10] with size 3 whose start is parameter 1: in range is 0..=7.
    let text = "HloModule m\n\nENTRY %main (p0: f32[10], p1: s32[]) -> f32[3] {\n  %p0 = f32[10] parameter(0)\n  %p1 = s32[] parameter(1)\n  ROOT %ds = f32[3] dynamic-slice(%p0, %p1), dynamic_slice_sizes={3}\n}\n";
    let m = hlo::parse::parse_module(text).unwrap();
    let cfg = Config {
        out_of_range_index_percent: 10,
        ..Config::default()
    };
    let (mut inside, mut outside) = (0, 0);
    for seed in 0..400 {
        let ins = generate_inputs_from_seed(&m, seed, &cfg);
        let v = match ins[1].as_array().unwrap().get(0) {
            hlo::Scalar::S(v) => v,
            other => panic!("{other:?}"),
        };
        if (0..=7).contains(&v) {
            inside += 1
        } else {
            outside += 1
        }
    }
    assert!(
        inside > 300 && outside > 10,
        "inside {inside}, outside {outside}"
    );
}

#[test]
fn special_values_appear_in_float_inputs() {
    let text = "HloModule m\n\nENTRY %main (p0: f32[1000]) -> f32[1000] {\n  ROOT %p0 = f32[1000] parameter(0)\n}\n";
    let m = hlo::parse::parse_module(text).unwrap();
    let ins = generate_inputs_from_seed(
        &m,
        7,
        &Config {
            special_value_percent: 20,
            ..Config::default()
        },
    );
    let a = ins[0].as_array().unwrap();
    let vals: Vec<f64> = (0..a.len()).map(|i| a.get(i).to_f64()).collect();
    assert!(vals.iter().any(|v| v.is_nan()));
    assert!(vals.iter().any(|v| v.is_infinite()));
    assert!(vals.iter().any(|v| *v == 0.0 && v.is_sign_negative()));
    assert!(
        vals.iter().any(|v| v.abs() > 0.0 && v.abs() < 1e-38),
        "denormals"
    );
}

#[test]
fn pack_merges_entries_with_all_parameters_and_outputs() {
    let cfg = Config::default();
    let mods: Vec<hlo::Module> = (10..14).map(|s| generate_from_seed(s, &cfg)).collect();
    let (p, layout) = generators::pack::pack_with_layout(&mods);
    check_valid(&p, "packed");
    let total_params: usize = mods
        .iter()
        .map(|m| m.entry_computation().parameters().len())
        .sum();
    assert_eq!(p.entry_computation().parameters().len(), total_params);
    let numbers: Vec<i64> = p
        .entry_computation()
        .parameters()
        .iter()
        .map(|(_, i)| i.parameter_number.unwrap())
        .collect();
    assert_eq!(numbers, (0..total_params as i64).collect::<Vec<_>>());
    let total_outs: usize = mods
        .iter()
        .map(|m| {
            m.entry_computation()
                .root_instruction()
                .shape
                .tuple_elements()
                .unwrap()
                .len()
        })
        .sum();
    let root_shape = &p.entry_computation().root_instruction().shape;
    assert_eq!(root_shape.tuple_elements().unwrap().len(), total_outs);
    // Module k's outputs sit where the layout says, with the same shapes.
    for (k, m) in mods.iter().enumerate() {
        let (first, n) = layout.outputs[k];
        let want = m
            .entry_computation()
            .root_instruction()
            .shape
            .tuple_elements()
            .unwrap();
        let got = &root_shape.tuple_elements().unwrap()[first..first + n];
        assert_eq!(got, want);
        let (pf, pn) = layout.params[k];
        let want_p: Vec<Shape> = m.entry_computation().parameter_shapes();
        assert_eq!(
            &p.entry_computation().parameter_shapes()[pf..pf + pn],
            &want_p[..]
        );
    }
    assert_eq!(
        pack(&mods[..1]).computations.len(),
        mods[0].computations.len()
    );
    // Inputs of the packed module are the modules' inputs concatenated.
    let inputs: Vec<Literal> = mods
        .iter()
        .flat_map(|m| generate_inputs_from_seed(m, 1, &cfg))
        .collect();
    assert_eq!(inputs.len(), total_params);
}

//! The minimized XLA bugs the generator avoids (`corpora/regressions/xla_bug_*.hlo`, see the
//! README there) are valid HLO: our parser and verifier accept each of them, so a crash on them
//! is XLA's fault, not a malformed input. With `avoid_known_xla_bugs` (the default) generated
//! modules contain none of the patterns; without it, some of them do appear.

use hlo::{Module, Opcode, PrimitiveType};
use std::path::Path;

#[test]
fn known_xla_bug_modules_parse_and_verify() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/regressions");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("xla_bug_") && n.ends_with(".hlo"))
        .collect();
    names.sort();
    for expected in [
        "xla_bug_bitcast_convert_chain.hlo",
        "xla_bug_int_div_by_const_zero.hlo",
        "xla_bug_int_rem_by_const_zero.hlo",
        "xla_bug_map_complex_expm1.hlo",
        "xla_bug_slice_at_empty_concat_operand.hlo",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected} is missing");
    }
    for n in &names {
        let text = std::fs::read_to_string(dir.join(n)).unwrap();
        let m = hlo::parse::parse_module(&text).unwrap_or_else(|e| panic!("{n}:{e}"));
        if let Err(e) = hlo::verify::verify_module(&m) {
            panic!("{n}: our verifier rejects it: {e}");
        }
    }
}

fn is_empty(m: &Module, c: usize, id: usize) -> bool {
    m.computations[c].instructions[id].shape.dims().contains(&0)
}

/// Names of the known-bug patterns found in `m` (one entry per occurrence).
fn known_bug_patterns(m: &Module) -> Vec<&'static str> {
    let mut found = Vec::new();
    for (ci, comp) in m.computations.iter().enumerate() {
        for i in &comp.instructions {
            let op = |k: usize| &comp.instructions[i.operands[k]];
            match i.opcode {
                // An empty slice of a concatenate that has an empty operand.
                Opcode::Slice | Opcode::DynamicSlice
                    if i.shape.dims().contains(&0)
                        && op(0).opcode == Opcode::Concatenate
                        && op(0).operands.iter().any(|&o| is_empty(m, ci, o)) =>
                {
                    found.push("empty slice of a concatenate with an empty operand")
                }
                // A width-changing bitcast-convert of a width-changing bitcast-convert.
                Opcode::BitcastConvert
                    if op(0).opcode == Opcode::BitcastConvert
                        && i.shape.rank() != op(0).shape.rank()
                        && op(0).shape.rank()
                            != comp.instructions[op(0).operands[0]].shape.rank() =>
                {
                    found.push("chained width-changing bitcast-converts")
                }
                // An integer division by a constant.
                Opcode::Divide | Opcode::Remainder
                    if i.shape.element_type().is_some_and(|t| t.is_integer())
                        && op(1).opcode == Opcode::Constant =>
                {
                    found.push("integer division by a constant")
                }
                // A mapped function computing complex expm1.
                Opcode::Map => {
                    let f = &m.computations[i.comp("to_apply").expect("map has to_apply")];
                    if f.instructions.iter().any(|j| {
                        j.opcode == Opcode::Expm1
                            && matches!(
                                j.shape.element_type(),
                                Some(PrimitiveType::C64 | PrimitiveType::C128)
                            )
                    }) {
                        found.push("complex expm1 in a mapped function")
                    }
                }
                _ => {}
            }
        }
    }
    found
}

#[test]
fn default_modules_avoid_the_known_xla_bugs() {
    let cfg = generators::Config::default();
    for seed in 0..1500u64 {
        let m = generators::generate_from_seed(seed, &cfg);
        let found = known_bug_patterns(&m);
        assert!(
            found.is_empty(),
            "seed {seed}: {found:?}\n{}",
            hlo::print::module_to_string(&m)
        );
    }
    for seed in 0..300u64 {
        let (m, _) = generators::generate_swarm_from_seed(seed);
        let found = known_bug_patterns(&m);
        assert!(found.is_empty(), "swarm seed {seed}: {found:?}");
    }
}

#[test]
fn without_the_knob_the_patterns_do_appear() {
    let cfg = generators::Config {
        avoid_known_xla_bugs: false,
        ..generators::Config::default()
    };
    let mut kinds = std::collections::BTreeSet::new();
    for seed in 0..1500u64 {
        kinds.extend(known_bug_patterns(&generators::generate_from_seed(
            seed, &cfg,
        )));
    }
    // The checker sees the patterns when the generator makes them (so the test above can fail).
    assert!(kinds.len() >= 2, "only {kinds:?}");
}

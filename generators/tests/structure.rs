//! Structural HLO (issue #27 item 2): each knob forced on gives modules with its feature that
//! our verifier accepts and that round-trip through print and parse; at 0 (the default) no
//! module has any; packing keeps the aliases at their new numbers.

use generators::structure::{features, forced_configs, parse_alias_text, FEATURES};
use generators::{generate_from_seed, pack, Config};
use hlo::print::module_to_string;
use hlo::{Module, Opcode};

fn check_valid(m: &Module, what: &str) {
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
fn each_knob_gives_valid_modules_with_its_feature() {
    for (name, cfg, wanted) in forced_configs() {
        let mut seen = std::collections::BTreeMap::<&str, usize>::new();
        for seed in 0..200u64 {
            let m = generate_from_seed(seed, &cfg);
            check_valid(&m, &format!("{name} seed {seed}"));
            for f in features(&m) {
                *seen.entry(f).or_default() += 1;
            }
        }
        for w in wanted {
            let n = seen.get(w).copied().unwrap_or(0);
            assert!(
                n >= 10,
                "{name}: only {n} of 200 modules have `{w}` ({seen:?})"
            );
        }
    }
}

#[test]
fn default_modules_have_no_structural_feature() {
    let cfg = Config::default();
    for seed in 0..300u64 {
        let m = generate_from_seed(seed, &cfg);
        let f = features(&m);
        assert!(f.is_empty(), "default seed {seed} has {f:?}");
        assert!(m.header_attrs.is_empty(), "seed {seed}");
    }
}

#[test]
fn swarm_programs_reach_every_feature() {
    let base = Config::default();
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..300u64 {
        let c = generators::program_config(&base, seed);
        let m = generate_from_seed(seed, &c);
        seen.extend(features(&m));
    }
    for f in FEATURES {
        assert!(seen.contains(f), "no swarm program of 300 has `{f}`");
    }
}

/// Every alias names an output and a parameter of one shape, each at most once.
fn check_aliases(m: &Module, what: &str) -> usize {
    let Some((_, text)) = m
        .header_attrs
        .iter()
        .find(|(k, _)| k == "input_output_alias")
    else {
        return 0;
    };
    let aliases = parse_alias_text(text).unwrap_or_else(|| panic!("{what}: {text}"));
    let e = m.entry_computation();
    let root = e.root_instruction();
    assert_eq!(root.opcode, Opcode::Tuple);
    let mut params = std::collections::BTreeSet::new();
    let mut outs = std::collections::BTreeSet::new();
    for a in &aliases {
        assert!(
            params.insert(a.param),
            "{what}: parameter {} twice",
            a.param
        );
        assert!(outs.insert(a.output), "{what}: output {} twice", a.output);
        let out = &e.instructions[root.operands[a.output]].shape;
        let p = e
            .instructions
            .iter()
            .find(|i| i.parameter_number == Some(a.param))
            .unwrap_or_else(|| panic!("{what}: no parameter {}", a.param));
        assert_eq!(&p.shape, out, "{what}: alias {a:?} of another shape");
    }
    aliases.len()
}

#[test]
fn aliases_are_well_formed_and_packing_renumbers_them() {
    let cfg = Config {
        alias_percent: 100,
        layout_percent: 50,
        ..Config::default()
    };
    let mods: Vec<Module> = (0..40).map(|s| generate_from_seed(s, &cfg)).collect();
    let mut total = 0;
    for (s, m) in mods.iter().enumerate() {
        total += check_aliases(m, &format!("seed {s}"));
    }
    assert!(total >= 30, "only {total} aliases over 40 modules");
    for chunk in mods.chunks(4) {
        let p = pack(chunk);
        check_valid(&p, "packed");
        let n: usize = chunk.iter().map(|m| check_aliases(m, "one")).sum();
        assert_eq!(check_aliases(&p, "packed"), n, "packing lost aliases");
        // The packed entry has every module's parameters and outputs: it has an entry layout
        // exactly when one of the modules has.
        let has_header = |m: &Module| {
            m.header_attrs
                .iter()
                .any(|(k, _)| k == "entry_computation_layout")
        };
        assert_eq!(chunk.iter().any(has_header), has_header(&p));
    }
}

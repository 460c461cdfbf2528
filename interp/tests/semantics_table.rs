//! The semantics table (`hlo::semantics`) covers the oracle: every opcode the oracle runs has a
//! row for every element-type class it takes, every row cites a source, and the generated
//! documentation (`docs/semantics.md`, the freedoms list in `docs/judging.md`) is the table's.

use hlo::semantics::{self, Freedom, Rule};
use hlo::{Category, Opcode, PrimitiveType, TypeClass};

/// The element-type classes `op` takes: its operand types for elementwise and conversion ops,
/// floats and complex values for the numerical kernels, every class otherwise.
fn classes_of(op: Opcode) -> Vec<TypeClass> {
    let all = [
        TypeClass::Pred,
        TypeClass::Signed,
        TypeClass::Unsigned,
        TypeClass::Float,
        TypeClass::Complex,
    ];
    let example = |c: TypeClass| match c {
        TypeClass::Pred => PrimitiveType::Pred,
        TypeClass::Signed => PrimitiveType::S32,
        TypeClass::Unsigned => PrimitiveType::U32,
        TypeClass::Float => PrimitiveType::F32,
        TypeClass::Complex => PrimitiveType::C64,
        TypeClass::Other => PrimitiveType::Token,
    };
    match (op.info().element_types, op.category()) {
        (Some(t), _) => all.into_iter().filter(|c| t.accepts(example(*c))).collect(),
        (None, Category::Numerical) => vec![TypeClass::Float, TypeClass::Complex],
        (None, _)
            if matches!(
                op,
                Opcode::PartitionId | Opcode::ReplicaId | Opcode::GetDimensionSize
            ) =>
        {
            vec![TypeClass::Signed, TypeClass::Unsigned]
        }
        (None, _) => all.to_vec(),
    }
}

#[test]
fn every_opcode_the_oracle_runs_has_a_row_for_every_class_it_takes() {
    let mut missing = Vec::new();
    for op in Opcode::ALL {
        if interp::UNSUPPORTED_OPCODES.contains(&op) {
            continue;
        }
        for c in classes_of(op) {
            if semantics::row(op, c).is_none() {
                missing.push(format!("{} on {c:?}", op.name()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "no row in hlo::semantics for: {missing:?}"
    );
}

#[test]
fn every_row_case_and_freedom_cites_a_source() {
    for r in semantics::ROWS {
        assert!(!r.sources.is_empty(), "{:?}", r.ops);
        for c in r.cases {
            assert!(!c.sources.is_empty(), "{:?} {:?}", r.ops, c.when);
            assert_eq!(
                c.rule,
                Rule::ImplementationDefined,
                "{:?} {:?}",
                r.ops,
                c.when
            );
        }
        for s in r
            .sources
            .iter()
            .chain(r.cases.iter().flat_map(|c| c.sources))
        {
            assert!(!s.cite.trim().is_empty(), "{:?}", r.ops);
        }
    }
    for f in Freedom::ALL {
        assert!(!f.sources().is_empty(), "{f:?}");
        assert_eq!(Freedom::from_name(f.name()), Some(f));
    }
}

/// The approximated rows have a measured bound for every float type the oracle computes in.
#[test]
fn approximated_rows_have_measured_ulps() {
    for r in semantics::ROWS
        .iter()
        .filter(|r| r.rule == Rule::Approximated)
    {
        for &op in r.ops {
            if r.classes.has(TypeClass::Float) {
                for t in [PrimitiveType::F64, PrimitiveType::F32, PrimitiveType::Bf16] {
                    assert!(
                        semantics::approximation_ulps(op, t).is_some(),
                        "{} {t}",
                        op.name()
                    );
                }
            }
        }
    }
}

fn docs(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("docs")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `docs/semantics.md` is the table's text: regenerate it with `cargo run --release -p
/// hlo-diff -- semantics --markdown > docs/semantics.md` when the table changes.
#[test]
fn the_semantics_doc_is_generated_from_the_table() {
    let want = semantics::markdown();
    let have = docs("semantics.md");
    assert!(
        have.trim_end() == want.trim_end(),
        "docs/semantics.md is not the table's text: run `target/release/hlo-diff semantics \
         --markdown > docs/semantics.md`"
    );
}

/// `docs/judging.md`'s list of freedoms is the table's, between its markers.
#[test]
fn the_freedoms_in_judging_md_are_the_tables() {
    let have = docs("judging.md");
    let (start, end) = ("<!-- freedoms: generated -->", "<!-- /freedoms -->");
    let a = have.find(start).expect("the start marker") + start.len();
    let b = have.find(end).expect("the end marker");
    assert_eq!(
        have[a..b].trim(),
        semantics::freedoms_markdown().trim(),
        "docs/judging.md's freedoms are not the table's: copy `hlo::semantics::freedoms_markdown()` \
         (the Freedoms section of `hlo-diff semantics --markdown`) between the markers"
    );
}

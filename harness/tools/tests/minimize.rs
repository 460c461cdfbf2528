//! The minimizer: its reductions and delta loop on the oracle alone, and a real XLA:CPU
//! mismatch (algsimp's log(exp(x)) -> x rewrite) minimized into a repro directory.
//!
//! The XLA tests need the project's Python (`.venv` with jax/jaxlib): without it they fail,
//! unless `HLO_DIFF_SKIP_XLA=1` says to skip them.

mod common;
use common::*;

use engine::backend::Backend;
use hlo::{ArrayLiteral, Literal, Opcode, PrimitiveType};
use std::sync::Arc;
use tools::minimize::predicate::Runner;
use tools::minimize::{self, unused, verify, Case, Options, Reduction};
use tools::triage::{minimize_case, write_repro, Session};

fn f32s(dims: Vec<i64>, v: &[f32]) -> Literal {
    Literal::Array(
        ArrayLiteral::from_bytes(
            PrimitiveType::F32,
            dims,
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        )
        .unwrap(),
    )
}

fn s32s(dims: Vec<i64>, v: &[i32]) -> Literal {
    Literal::Array(
        ArrayLiteral::from_bytes(
            PrimitiveType::S32,
            dims,
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        )
        .unwrap(),
    )
}

/// A module whose first output goes through log(exp(x + 100)) among unrelated work: a called
/// computation, a reduction, an integer output, constants.
const BIG: &str = r#"HloModule big_log_exp

add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

helper {
  h0 = f32[4] parameter(0)
  h1 = f32[4] negate(h0)
  ROOT h2 = f32[4] abs(h1)
}

ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  z = s32[4] parameter(2)
  c100 = f32[] constant(100)
  b100 = f32[4] broadcast(c100), dimensions={}
  xs = f32[4] add(x, b100)
  e = f32[4] exponential(xs)
  l = f32[4] log(e), metadata={op_name="jit(f)/log" source_file="f.py" source_line=3}
  w = f32[4] constant({1, 2, 3, 4})
  m = f32[4] multiply(l, w)
  zero = f32[] constant(0)
  r = f32[] reduce(y, zero), dimensions={0}, to_apply=add_f32
  k = f32[4] call(y), to_apply=helper
  zc = f32[4] convert(z)
  kz = f32[4] subtract(k, zc)
  ROOT t = (f32[4], f32[], f32[4]) tuple(m, r, kz)
}
"#;

fn big_case() -> Case {
    Case {
        module: hlo::parse::parse_module(BIG).unwrap(),
        inputs: vec![
            f32s(vec![4], &[0.5, 1.0, 2.0, 3.0]),
            f32s(vec![4], &[1.0, 2.0, 3.0, 4.0]),
            s32s(vec![4], &[1, 2, 3, 4]),
        ],
    }
}

fn has_inf(l: &Literal) -> bool {
    l.leaves().iter().any(|a| {
        (0..a.len()).any(|i| match a.get(i) {
            hlo::Scalar::F(v) => v.is_infinite(),
            _ => false,
        })
    })
}

#[test]
fn the_original_module_verifies_and_evaluates() {
    let c = big_case();
    verify(&c).unwrap();
    let out = interp::evaluate(&c.module, &c.inputs).unwrap();
    assert!(has_inf(&out), "log(exp(100.5)) overflows in IEEE f32");
}

/// Cleanup drops dead instructions, unused entry parameters (renumbering the others and
/// dropping their inputs) and uncalled computations.
#[test]
fn cleanup_removes_unused_parameters_and_computations() {
    let mut c = big_case();
    let entry = c.module.entry;
    let comp = &mut c.module.computations[entry];
    // Make the root the first output only: y, z, the reduce, the call and add_f32/helper die.
    comp.root = comp.find("m").unwrap();
    let cleaned = unused::cleanup(&c).unwrap();
    verify(&cleaned).unwrap();
    assert_eq!(cleaned.inputs.len(), 1, "only x is still used");
    assert_eq!(
        cleaned.module.computations.len(),
        1,
        "add_f32 and helper are gone"
    );
    let e = cleaned.module.entry_computation();
    assert!(e.find("r").is_none() && e.find("k").is_none());
    assert_eq!(
        interp::evaluate(&cleaned.module, &cleaned.inputs).unwrap(),
        interp::evaluate(&c.module, &c.inputs).unwrap()
    );
}

/// The signature's header attributes survive cleanup, fitted to what is left: the alias of a
/// surviving parameter is renumbered, the layout of each surviving parameter is kept, and an
/// alias whose output no longer exists (or whose parameter is gone) is dropped. A minimized
/// in-place bug keeps its aliasing.
#[test]
fn cleanup_renumbers_aliases_and_layouts_instead_of_dropping_them() {
    let text = "HloModule in_place, input_output_alias={ {0}: (2, {}, must-alias), {1}: (1, {}, may-alias) }, buffer_donor={ (2, {}) }, entry_computation_layout={(f32[3]{0}, s32[], f32[2,4]{0,1})->(f32[2,4]{0,1}, s32[])}\n\n\
ENTRY main {\n\
  unused = f32[3]{0} parameter(0)\n\
  i = s32[] parameter(1)\n\
  buf = f32[2,4]{0,1} parameter(2)\n\
  one = f32[] constant(1)\n\
  upd = f32[1,4]{0,1} broadcast(one), dimensions={}\n\
  zero = s32[] constant(0)\n\
  d = f32[2,4]{0,1} dynamic-update-slice(buf, upd, i, zero)\n\
  ROOT t = (f32[2,4]{0,1}, s32[]) tuple(d, i)\n\
}\n";
    let m = hlo::parse::parse_module(text).unwrap();
    let case = Case {
        module: m,
        inputs: vec![
            f32s(vec![3], &[0.0; 3]),
            s32s(vec![], &[1]),
            f32s(vec![2, 4], &[0.0; 8]),
        ],
    };
    let cleaned = unused::cleanup(&case).unwrap();
    verify(&cleaned).unwrap();
    assert_eq!(cleaned.inputs.len(), 2, "the unused parameter is gone");
    let attr = |m: &hlo::Module, k: &str| {
        m.header_attrs
            .iter()
            .find(|(a, _)| a == k)
            .map(|(_, v)| v.clone())
    };
    let m = &cleaned.module;
    assert_eq!(
        attr(m, "input_output_alias").as_deref(),
        Some("{ {0}: (1, {}, must-alias), {1}: (0, {}, may-alias) }")
    );
    assert_eq!(attr(m, "buffer_donor").as_deref(), Some("{ (1, {}) }"));
    let layout = attr(m, "entry_computation_layout").unwrap();
    assert!(
        layout.starts_with("{(s32[]") && layout.contains("f32[2,4]{0,1})->(f32[2,4]{0,1}, s32[]"),
        "{layout}"
    );
    // XLA reads the cleaned module's text and keeps what it says.
    let printed = hlo::print::module_to_string(m);
    assert!(hlo::parse::parse_module(&printed).is_ok(), "{printed}");

    // Cutting the root to the update alone: the output index {1} is gone and {0} is no longer
    // a tuple element: both aliases are dropped (the attribute with them), not left dangling.
    let mut cut = case.clone();
    let entry = cut.module.entry;
    let c = &mut cut.module.computations[entry];
    c.root = c.find("d").unwrap();
    let cleaned = unused::cleanup(&cut).unwrap();
    verify(&cleaned).unwrap();
    assert_eq!(attr(&cleaned.module, "input_output_alias"), None);
    assert!(attr(&cleaned.module, "entry_computation_layout")
        .unwrap()
        .ends_with("->f32[2,4]{0,1}}"));
}

/// Every candidate of every reduction on the example either fails our verifier or keeps the
/// module evaluable; the parameter reduction keeps values (the new input is the old value).
#[test]
fn reductions_propose_verifiable_candidates() {
    let c = big_case();
    let mut proposed = 0;
    let mut valid = 0;
    for red in minimize::default_reductions() {
        for i in 0..red.count(&c) {
            let Some(cand) = red.candidate(&c, i) else {
                continue;
            };
            proposed += 1;
            let cleaned = unused::cleanup(&cand.case).unwrap();
            if verify(&cleaned).is_ok() {
                valid += 1;
                interp::evaluate(&cleaned.module, &cleaned.inputs)
                    .unwrap_or_else(|e| panic!("{}: {}: {e}", red.name(), cand.what));
            }
        }
    }
    assert!(proposed > 30, "{proposed} candidates");
    assert!(
        valid * 2 > proposed,
        "{valid} of {proposed} candidates verify"
    );

    // Replacing `xs` by a parameter keeps the result exactly.
    let red = minimize::parameter::ReplaceByParameter;
    let before = interp::evaluate(&c.module, &c.inputs).unwrap();
    let n = red.count(&c);
    let cand = (0..n)
        .filter_map(|i| red.candidate(&c, i))
        .find(|cand| cand.what.starts_with("xs "))
        .expect("xs can become a parameter");
    let cleaned = unused::cleanup(&cand.case).unwrap();
    verify(&cleaned).unwrap();
    assert_eq!(
        interp::evaluate(&cleaned.module, &cleaned.inputs).unwrap(),
        before
    );
}

/// Inlining a call keeps the result and removes the callee.
#[test]
fn inlining_a_call_keeps_the_result() {
    let c = big_case();
    let red = minimize::calls::InlineCalls;
    assert_eq!(red.count(&c), 1);
    let cand = red.candidate(&c, 0).unwrap();
    let cleaned = unused::cleanup(&cand.case).unwrap();
    verify(&cleaned).unwrap();
    assert!(cleaned.module.find_computation("helper").is_none());
    assert_eq!(
        interp::evaluate(&cleaned.module, &cleaned.inputs).unwrap(),
        interp::evaluate(&c.module, &c.inputs).unwrap()
    );
}

/// The delta loop with an oracle-only predicate ("the result still holds an infinity")
/// shrinks the module to the overflowing core.
#[test]
fn delta_loop_shrinks_to_the_core_with_an_oracle_predicate() {
    let c = big_case();
    let before = c.module.instruction_count();
    let mut pred = |c: &Case| {
        interp::evaluate(&c.module, &c.inputs)
            .map(|l| has_inf(&l))
            .unwrap_or(false)
    };
    let (min, stats) = minimize::minimize(
        c,
        &minimize::default_reductions(),
        &mut pred,
        &Options::default(),
    );
    verify(&min).unwrap();
    assert!(pred(&min));
    assert_eq!(stats.instructions_before, before);
    assert!(
        min.module.instruction_count() <= 3,
        "{} instructions left:\n{}",
        min.module.instruction_count(),
        min.module
    );
    assert!(!stats.stopped_early);
    // Annotations are gone, and of the four overflowing inputs one is enough.
    assert!(
        !min.module.to_string().contains("metadata"),
        "{}",
        min.module
    );
    let nonzero: usize = min
        .inputs
        .iter()
        .flat_map(|l| l.leaves())
        .map(|a| (0..a.len()).filter(|&i| a.get(i).to_f64() != 0.0).count())
        .sum();
    assert_eq!(nonzero, 1, "{:?}", min.inputs);
    // The elementwise core shrinks to one element, the overflowing one.
    assert_eq!(
        min.module
            .entry_computation()
            .root_instruction()
            .shape
            .dims(),
        &[1]
    );
}

/// A real XLA:CPU mismatch, minimized with the "same signature" predicate and written as a
/// repro directory.
#[test]
fn xla_mismatch_minimizes_to_log_of_exp_and_writes_a_repro() {
    let Some(xla) = xla_cpu() else { return };
    assert_xla_rewrites_log_exp();
    let xla = Arc::new(xla);
    let session = Session {
        workers: vec![xla.clone()],
        opts: Default::default(),
        tolerance_scale: 1.0,
        voter: true,
    };
    let runner: Runner = session.runner();
    let c = big_case();
    let m = minimize_case(&runner, c, &Options::default())
        .unwrap()
        .unwrap_or_else(|v| panic!("expected a mismatch, got {v:?}"));
    eprintln!("{}\n{:#?}", m.case.module, m.stats);
    assert_eq!(m.last.verdict.kind.name(), "mismatch");
    assert_eq!(m.last.verdict.backend.as_deref(), Some("xla-cpu"));
    let e = m.case.module.entry_computation();
    let ops: Vec<Opcode> = e.instructions.iter().map(|i| i.opcode).collect();
    assert!(
        ops.contains(&Opcode::Log) && ops.contains(&Opcode::Exp),
        "{ops:?}"
    );
    assert!(
        m.stats.instructions_after <= 4,
        "{} -> {}",
        m.stats.instructions_before,
        m.stats.instructions_after
    );
    assert!(m.stats.instructions_before >= 20);

    let dir = tempfile::tempdir().unwrap();
    let files = write_repro(dir.path(), &m, &session, None).unwrap();
    let module_text = std::fs::read_to_string(dir.path().join(&files.module)).unwrap();
    assert!(
        files.module.starts_with("module_0000.big_log_exp.")
            && files.module.ends_with(".before_optimizations.txt")
    );
    // The repro module parses, and XLA's parser accepts it.
    hlo::parse::parse_module(&module_text).unwrap();
    let back = findings::repro::read_inputs(&dir.path().join(&files.inputs)).unwrap();
    assert_eq!(back, m.case.inputs);
    let pbtxt = std::fs::read_to_string(dir.path().join(&files.inputs_pbtxt)).unwrap();
    assert!(
        pbtxt.contains("iterations {") && pbtxt.contains("f32s: "),
        "{pbtxt}"
    );
    let script = std::fs::read_to_string(dir.path().join(&files.script)).unwrap();
    assert!(
        script.contains("hlo-diff run")
            && script.contains("run_hlo_module --platform=CPU --reference_platform=Interpreter")
    );
    let readme = std::fs::read_to_string(dir.path().join(&files.readme)).unwrap();
    assert!(
        readme.contains("inf") && readme.contains("jaxlib"),
        "{readme}"
    );
    // The repro still fails the same way on XLA.
    let o = xla.run(&module_text, &back, &Default::default());
    assert!(o.is_ok(), "{o}");
}

/// A rejection keeps its (normalized) message through minimization: XLA:CPU refuses an unknown
/// custom-call target, and everything around the custom call goes.
#[test]
fn xla_rejection_minimizes_to_the_custom_call() {
    let Some(xla) = xla_cpu() else { return };
    let text = r#"HloModule cc

ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  n = f32[4] negate(a)
  c = f32[4] custom-call(n), custom_call_target="no_such_target_xyz"
  m = f32[4] multiply(c, y)
  ROOT t = (f32[4], f32[4]) tuple(m, a)
}
"#;
    let runner = Runner::new(vec![Arc::new(xla) as Arc<dyn Backend>]);
    let case = Case {
        module: hlo::parse::parse_module(text).unwrap(),
        inputs: vec![f32s(vec![4], &[1.0; 4]), f32s(vec![4], &[2.0; 4])],
    };
    let m = minimize_case(&runner, case, &Options::default())
        .unwrap()
        .unwrap_or_else(|v| panic!("expected a rejection, got {v:?}"));
    assert_eq!(m.last.verdict.kind.name(), "rejected");
    assert!(
        m.target.signature.detail.contains("no_such_target_xyz"),
        "{:?}",
        m.target
    );
    let e = m.case.module.entry_computation();
    assert_eq!(
        e.root_instruction().opcode,
        Opcode::CustomCall,
        "{}",
        m.case.module
    );
    assert!(m.stats.instructions_after <= 3, "{}", m.case.module);
    assert!(m.case.inputs.is_empty() || m.case.inputs.len() == 1);
}

/// The equivalent forms the labeller asks XLA about mean the same program: the rewritten module
/// verifies and the oracle gives bit-identical results. Constants and iotas of the entry become
/// parameters (their values become inputs); unsigned indices narrower than 64 bits are
/// converted to s64, u64 ones are left alone.
#[test]
fn equivalent_forms_keep_the_program_and_its_results() {
    use judge::forms::{constants_to_parameters, widen_unsigned_indices};
    let text = "HloModule forms\n\n%second (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  ROOT %b = f32[] parameter(1)\n}\n\nENTRY %main (x: f32[8], i: u8[], j: u64[]) -> (f32[8], f32[2], f32[8]) {\n  %x = f32[8] parameter(0)\n  %i = u8[] parameter(1)\n  %j = u64[] parameter(2)\n  %io = f32[8] iota(), iota_dimension=0\n  %c = f32[] constant(2.5)\n  %cb = f32[8] broadcast(%c), dimensions={}\n  %m = f32[8] multiply(%io, %cb)\n  %s = f32[8] add(%m, %x)\n  %ds = f32[2] dynamic-slice(%s, %i), dynamic_slice_sizes={2}\n  %u = f32[] constant(-1)\n  %sc = f32[8] scatter(%s, %j, %u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=%second\n  ROOT %t = (f32[8], f32[2], f32[8]) tuple(%s, %ds, %sc)\n}\n";
    let module = hlo::parse::parse_module(text).unwrap();
    let inputs = vec![
        f32s(vec![8], &[1.0, -2.0, 3.5, 0.0, 7.0, -1.0, 2.0, 9.0]),
        Literal::Array(ArrayLiteral::from_bytes(PrimitiveType::U8, vec![], vec![5]).unwrap()),
        Literal::Array(
            ArrayLiteral::from_bytes(PrimitiveType::U64, vec![], 3u64.to_le_bytes().to_vec())
                .unwrap(),
        ),
    ];
    let case = Case {
        module: module.clone(),
        inputs: inputs.clone(),
    };
    let want = interp::evaluate(&module, &inputs).unwrap();

    let p = constants_to_parameters(&case).expect("constants and an iota to turn");
    verify(&p).unwrap();
    let entry = p.module.entry_computation();
    assert!(entry
        .instructions
        .iter()
        .all(|i| !matches!(i.opcode, Opcode::Constant | Opcode::Iota)));
    assert_eq!(
        p.inputs.len(),
        inputs.len() + 3,
        "iota, 2.5 and -1 became inputs"
    );
    assert_eq!(interp::evaluate(&p.module, &p.inputs).unwrap(), want);

    let w = widen_unsigned_indices(&case).expect("a u8 index to widen");
    verify(&w).unwrap();
    let converts: Vec<_> = w
        .module
        .entry_computation()
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Convert)
        .collect();
    assert_eq!(converts.len(), 1, "only the u8 index; u64 stays");
    assert_eq!(interp::evaluate(&w.module, &w.inputs).unwrap(), want);
}

/// The predicate treats a difference XLA is free to make as a match, as campaigns do: XLA folds
/// `0 % 0` to +NaN where the oracle on this CPU gives -NaN; seen through a bitcast, the bits
/// differ, but a bitcast of a float is compared as that float (NaN is NaN), so a reduction may
/// not slide onto it.
#[test]
fn differences_xla_is_free_to_make_are_no_finding_to_the_predicate() {
    let Some(xla) = xla_cpu() else { return };
    let text = "HloModule nan_sign\n\nENTRY %main () -> (u32[2]) {\n  %z = f32[2] constant({0, 0})\n  %r = f32[2] remainder(%z, %z)\n  %b = u32[2] bitcast-convert(%r)\n  ROOT %t = (u32[2]) tuple(%b)\n}\n";
    let case = Case {
        module: hlo::parse::parse_module(text).unwrap(),
        inputs: vec![],
    };
    let default = interp::evaluate(&case.module, &case.inputs).unwrap();
    let runner = Runner::new(vec![Arc::new(xla) as Arc<dyn Backend>]);
    let o = runner.observe(&case);
    let xla_out = o.outcomes[1]
        .1
        .as_ok()
        .expect("XLA runs it")
        .outputs
        .clone();
    assert_ne!(
        default.leaves()[0].data,
        xla_out[0].as_array().unwrap().data,
        "the default evaluation must differ from XLA for this test to mean anything"
    );
    // No finding: a NaN's bits are unspecified, so the bitcast's set holds XLA's bits (match),
    // or is left unbounded (unproven).
    assert!(
        matches!(o.verdict.kind.name(), "match" | "unproven"),
        "{:?}",
        o.verdict
    );
}

/// A wrong value that only a `convert` to another element type carries to the output is
/// minimized to the op that computes it: the reroot edit makes `count-leading-zeros` (folded to
/// a wrong constant by XLA's constant_folding) the output, although its element type differs
/// from the original output's, so one bug does not keep a tail of downstream ops (and a bucket
/// of its own per tail).
#[test]
fn a_wrong_value_carried_by_a_convert_minimizes_to_the_op_that_computes_it() {
    let Some(xla) = xla_cpu() else { return };
    let xla = Arc::new(xla);
    let session = Session {
        workers: vec![xla],
        opts: Default::default(),
        tolerance_scale: 1.0,
        voter: false,
    };
    let runner: Runner = session.runner();
    let module = hlo::parse::parse_module(
        r#"HloModule clz_tail

ENTRY main {
  x = f32[4] parameter(0)
  c = s32[4] constant({-9, 3, -1, 7})
  z = s32[4] count-leading-zeros(c)
  f = f32[4] convert(z)
  ROOT s = f32[4] add(f, x)
}
"#,
    )
    .unwrap();
    let case = Case {
        module,
        inputs: vec![f32s(vec![4], &[0.5, 1.0, 2.0, 4.0])],
    };
    let m = minimize_case(&runner, case, &Options::default())
        .unwrap()
        .unwrap_or_else(|v| panic!("expected a mismatch, got {v:?}"));
    let e = m.case.module.entry_computation();
    let root = e.root_instruction();
    assert_eq!(root.opcode, Opcode::Clz, "{}", m.case.module);
    assert!(
        !e.instructions
            .iter()
            .any(|i| matches!(i.opcode, Opcode::Convert | Opcode::Add)),
        "{}",
        m.case.module
    );
    assert!(
        m.stats.log.iter().any(|l| l.starts_with("reroot:")),
        "{:?}",
        m.stats.log
    );
}

/// The operand chain of a constant-folding bug is folded into the literal it evaluates to:
/// `count-leading-zeros(not(bitcast-convert(constant)))` (a negative s32 folded to a wrong
/// count) minimizes to `count-leading-zeros` of a constant, with no `not` or
/// `bitcast-convert` left to split the bug's bucket.
#[test]
fn a_constant_operand_chain_folds_into_a_literal() {
    let Some(xla) = xla_cpu() else { return };
    let session = Session {
        workers: vec![Arc::new(xla)],
        opts: Default::default(),
        tolerance_scale: 1.0,
        voter: false,
    };
    let runner: Runner = session.runner();
    let module = hlo::parse::parse_module(
        r#"HloModule clz_chain

ENTRY main {
  x = s32[4] parameter(0)
  c = f32[4] constant({1, -2, 3.5, -0.25})
  b = s32[4] bitcast-convert(c)
  n = s32[4] not(b)
  z = s32[4] count-leading-zeros(n)
  ROOT s = s32[4] add(z, x)
}
"#,
    )
    .unwrap();
    let case = Case {
        module,
        inputs: vec![s32s(vec![4], &[0, 0, 0, 0])],
    };
    let m = minimize_case(&runner, case, &Options::default())
        .unwrap()
        .unwrap_or_else(|v| panic!("expected a mismatch, got {v:?}"));
    let e = m.case.module.entry_computation();
    let ops: Vec<Opcode> = e.instructions.iter().map(|i| i.opcode).collect();
    assert_eq!(
        e.root_instruction().opcode,
        Opcode::Clz,
        "{}",
        m.case.module
    );
    assert!(
        !ops.iter()
            .any(|o| matches!(o, Opcode::Not | Opcode::BitcastConvert | Opcode::Add)),
        "{}",
        m.case.module
    );
    assert!(
        m.stats.log.iter().any(|l| l.starts_with("fold-to-value:")),
        "{:?}",
        m.stats.log
    );
}

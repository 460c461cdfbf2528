//! Unit tests of the parser: valid syntax XLA writes, and malformed input with line:col.

use super::*;
use crate::ir::{PaddingDim, SliceDim};
use crate::print::module_to_string;

fn parse_ok(text: &str) -> Module {
    match parse_module(text) {
        Ok(m) => m,
        Err(e) => panic!("parse failed:\n{e}\n--- text ---\n{text}"),
    }
}

fn parse_err(text: &str) -> ParseError {
    match parse_module(text) {
        Ok(_) => panic!("expected a parse error for:\n{text}"),
        Err(e) => e,
    }
}

const SMALL: &str = r#"HloModule small, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0), metadata={op_name="a{b}" source_file="x,y"}
  %c = f32[] constant(0)
  %r = f32[] reduce(%p, %c), dimensions={0}, to_apply=%add
  %b = f32[4]{0} broadcast(%r), dimensions={}
  ROOT %n = f32[4]{0} add(f32[4]{0} %p, %b)
}
"#;

#[test]
fn parses_a_small_module_with_typed_and_raw_attributes() {
    let m = parse_ok(SMALL);
    assert_eq!(m.name, "small");
    assert_eq!(m.header_attrs[0].0, "entry_computation_layout");
    assert_eq!(m.header_attrs[0].1, "{(f32[4]{0})->f32[4]{0}}");
    assert_eq!(m.computations.len(), 2);
    assert_eq!(m.entry, 1);
    let main = &m.computations[1];
    assert_eq!(main.root, 4);
    let p = &main.instructions[0];
    assert_eq!(p.parameter_number, Some(0));
    assert_eq!(
        p.attr("metadata"),
        Some(&Attr::Raw(r#"{op_name="a{b}" source_file="x,y"}"#.into()))
    );
    let r = &main.instructions[2];
    assert_eq!(r.operands, vec![0, 1]);
    assert_eq!(r.dimensions(), Some(&[0i64][..]));
    assert_eq!(r.comp("to_apply"), Some(0));
    assert_eq!(main.instructions[3].dimensions(), Some(&[][..]));
    assert_eq!(main.instructions[4].operands, vec![0, 3]);
}

#[test]
fn printing_then_parsing_gives_the_same_module() {
    let m = parse_ok(SMALL);
    let text = module_to_string(&m);
    assert_eq!(parse_ok(&text), m);
    assert_eq!(module_to_string(&parse_ok(&text)), text);
}

#[test]
fn computations_may_be_referenced_before_definition_and_entry_defaults_to_last() {
    let m = parse_ok(
        "HloModule m\n%main (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n  ROOT %c = f32[] call(%p), to_apply=%later\n}\n\n%later (q: f32[]) -> f32[] {\n  ROOT %q = f32[] parameter(0)\n}\n\nENTRY %e () -> f32[] {\n  %k = f32[] constant(1)\n  ROOT %c = f32[] call(%k), to_apply=%main\n}\n",
    );
    assert_eq!(m.computations[0].instructions[1].comp("to_apply"), Some(1));
    assert_eq!(m.entry, 2);
    let m = parse_ok("HloModule m\n%a () -> f32[] {\n  ROOT %k = f32[] constant(1)\n}\n%b () -> f32[] {\n  ROOT %k = f32[] constant(2)\n}\n");
    assert_eq!(
        m.entry, 1,
        "without ENTRY the last computation is the entry"
    );
}

#[test]
fn layouts_dynamic_dims_tuples_tokens_and_comments() {
    let m = parse_ok(
        "HloModule m /* c */\n// line comment\nENTRY %e (p: (f32[2,<=3], token[])) -> f32[?] {\n  %p = (f32[2,<=3]{1,0:T(8,128)(2,1)E(4)S(1)L(2)}, /*index=1*/token[]) parameter(0)\n  ROOT %g = f32[?]{0} custom-call(%p), custom_call_target=\"f\\\"x\"\n}\n",
    );
    let p = &m.computations[0].instructions[0];
    let Shape::Tuple(t) = &p.shape else { panic!() };
    let a = t[0].as_array().unwrap();
    assert_eq!(a.dims, vec![2, 3]);
    assert_eq!(a.dynamic, vec![false, true]);
    let l = a.layout.as_ref().unwrap();
    assert_eq!(l.tiles, vec![vec![8, 128], vec![2, 1]]);
    assert_eq!((l.element_size_bits, l.memory_space), (4, 1));
    assert_eq!(l.other, vec!["L(2)".to_string()]);
    assert_eq!(t[1], Shape::Token);
    let g = &m.computations[0].instructions[1];
    assert_eq!(
        g.shape.as_array().unwrap().dims,
        vec![crate::shape::UNBOUNDED_SIZE]
    );
    assert_eq!(g.string("custom_call_target"), Some("f\"x"));
    let text = module_to_string(&m);
    assert_eq!(parse_ok(&text), m);
}

#[test]
fn typed_attributes_window_conv_padding_slice_and_control_predecessors() {
    let m = parse_ok(
        "HloModule m\nENTRY %e (a: f32[1,8,8,3], k: f32[3,3,3,4]) -> f32[1,4,4,4] {\n  %a = f32[1,8,8,3] parameter(0)\n  %k = f32[3,3,3,4] parameter(1)\n  %s = f32[1,8,2,3] slice(%a), slice={[0:1], [0:8], [0:8:4], [0:3]}\n  %z = f32[] constant(0)\n  %q = f32[1,9,10,3] pad(%a, %z), padding=0_0x0_1x1_1_0x0_0, control-predecessors={%s}\n  ROOT %c = f32[1,4,4,4] convolution(%a, %k), window={size=3x3 stride=2x2 pad=1_0x1_0 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1\n}\n",
    );
    let c = &m.computations[0];
    assert_eq!(
        c.instructions[2].slice().unwrap()[2],
        SliceDim {
            start: 0,
            limit: 8,
            stride: 4
        }
    );
    assert_eq!(
        c.instructions[4].padding().unwrap()[2],
        PaddingDim {
            low: 1,
            high: 1,
            interior: 0
        }
    );
    assert_eq!(c.instructions[4].control_predecessors(), &[2]);
    let w = c.instructions[5].window().unwrap();
    assert_eq!(
        (w.dims[0].size, w.dims[0].stride, w.dims[0].padding_low),
        (3, 2, 1)
    );
    assert!(w.dims[1].window_reversal && !w.dims[0].window_reversal);
    let d = c.instructions[5].conv_dims().unwrap();
    assert_eq!(
        (d.input_batch, d.input_feature, d.input_spatial.clone()),
        (0, 3, vec![1, 2])
    );
    assert_eq!((d.kernel_input_feature, d.kernel_output_feature), (2, 3));
    assert_eq!(c.instructions[5].int("feature_group_count"), Some(1));
    crate::verify::verify_module(&m).unwrap();
    assert_eq!(parse_ok(&module_to_string(&m)), m);
}

#[test]
fn constants_of_every_kind_round_trip() {
    let m = parse_ok(
        "HloModule m\nENTRY %e () -> () {\n  %a = f32[2,2] constant({ { 1, 2.5 }, { -inf, nan } })\n  %b = pred[3] constant({true, false, true})\n  %c = c64[2] constant({(1, -2), (0.5, 3)})\n  %d = u64[] constant(18446744073709551615)\n  %e = s8[2] constant({-128, 127})\n  %f = f32[4] constant({-nan, nan(0x1), 1e-07, 3.4028235e+38})\n  %g = bf16[2] constant({0.1001, 1e+30})\n  %h = f8e4m3fn[2] constant({448, -0.5})\n  %i = f32[100] constant({...})\n  %j = (f32[], s32[1]) constant((1, {2}))\n  %k = f64[0] constant({})\n  ROOT %t = () tuple()\n}\n",
    );
    let c = &m.computations[0];
    assert_eq!(c.instructions[8].constant, Some(Constant::Elided));
    let text = module_to_string(&m);
    let back = parse_ok(&text);
    assert_eq!(back, m, "printed:\n{text}");
    let f = match &c.instructions[5].constant {
        Some(Constant::Literal(Literal::Array(a))) => a.clone(),
        _ => panic!(),
    };
    assert_eq!(f.bits(0) as u32, 0xffc0_0000);
    assert_eq!(f.bits(1) as u32, 0x7f80_0001);
}

#[test]
fn async_syntax_sugar_becomes_explicit_async_wrapped_computation() {
    let m = parse_ok(
        "HloModule m\nENTRY %main (a: f32[4]) -> f32[4] {\n  %a = f32[4] parameter(0)\n  %s = ((f32[4]), f32[4], s32[]) custom-call-start(%a), async_execution_thread=\"host\", custom_call_target=\"foo\"\n  %u = ((f32[4]), f32[4], s32[]) custom-call-update(%s)\n  ROOT %d = f32[4] custom-call-done(%u)\n}\n",
    );
    assert_eq!(m.computations.len(), 2);
    assert_eq!(m.entry, 1);
    let w = &m.computations[0];
    assert_eq!(w.name, "s.async_wrapped");
    assert_eq!(
        w.trailing_attrs,
        vec![("execution_thread".to_string(), "\"host\"".to_string())]
    );
    let inner = w.root_instruction();
    assert_eq!(inner.opcode, Opcode::CustomCall);
    assert_eq!(inner.string("custom_call_target"), Some("foo"));
    let main = &m.computations[1];
    assert_eq!(main.instructions[1].opcode, Opcode::AsyncStart);
    assert_eq!(main.instructions[1].comp("calls"), Some(0));
    assert_eq!(
        main.instructions[1].string("async_execution_thread"),
        Some("host")
    );
    assert_eq!(main.instructions[2].opcode, Opcode::AsyncUpdate);
    assert_eq!(main.instructions[3].opcode, Opcode::AsyncDone);
    // Real -start opcodes stay themselves.
    let m2 = parse_ok("HloModule m\nENTRY %e (a: f32[4]) -> f32[4] {\n  %a = f32[4] parameter(0)\n  %s = (f32[4], f32[4], u32[]) copy-start(%a)\n  ROOT %d = f32[4] copy-done(%s)\n}\n");
    assert_eq!(m2.computations[0].instructions[1].opcode, Opcode::CopyStart);
    let text = module_to_string(&m);
    assert_eq!(parse_ok(&text), m);
}

#[test]
fn empty_attribute_slots_and_execution_thread_are_accepted() {
    let m = parse_ok("HloModule m\n%w (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}, execution_thread=\"host\"\n\nENTRY %e (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  ROOT %c = f32[] call(%a), to_apply=%w, , backend_config={\"x\":1}\n}\n");
    assert_eq!(m.computations[0].trailing_attrs[0].1, "\"host\"");
    assert_eq!(
        m.computations[1].instructions[1].attr("backend_config"),
        Some(&Attr::Raw("{\"x\":1}".into()))
    );
}

#[test]
fn stack_frame_tables_are_kept_verbatim() {
    let m = parse_ok("HloModule m\n\nFileNames\n1 \"a.py\"\n\nFunctionNames\n1 \"f\"\n\nFileLocations\n1 {file_name_id=1 function_name_id=1 line=1 end_line=1 column=1 end_column=2}\n\nStackFrames\n1 {file_location_id=1 parent_frame_id=1}\n\nENTRY %e () -> f32[] {\n  ROOT %k = f32[] constant(1)\n}\n");
    assert_eq!(m.stack_frame_tables.len(), 8);
    assert_eq!(m.stack_frame_tables[1], "1 \"a.py\"");
    assert_eq!(parse_ok(&module_to_string(&m)), m);
}

// ---- malformed input: every error has the right line:col and no input panics ----

fn assert_err_at(text: &str, line: usize, col: usize, needle: &str) {
    let e = parse_err(text);
    assert_eq!(
        (e.line, e.column),
        (line, col),
        "wrong position for {needle:?}: {e}"
    );
    assert!(
        e.message.contains(needle),
        "message {:?} lacks {needle:?}",
        e.message
    );
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("{line}:{col}: error: ")),
        "{shown}"
    );
    assert!(
        shown.lines().nth(2).is_some_and(|l| l.ends_with('^')),
        "{shown}"
    );
}

#[test]
fn unknown_opcode_is_reported_at_the_opcode() {
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %k = f32[] frobnicate()\n}\n",
        3,
        19,
        "unknown opcode 'frobnicate'",
    );
}

#[test]
fn junk_and_binary_input_are_errors() {
    assert_err_at("\u{1}\u{2}garbage", 1, 1, "'HloModule'");
    assert_err_at("", 1, 1, "expected 'HloModule' or a computation");
    let e = parse_module_bytes(b"HloModule m\nENTRY %e \xff\xfe").unwrap_err();
    assert_eq!((e.line, e.column), (2, 10));
    assert!(e.message.contains("not UTF-8"));
    assert_err_at(
        "HloModule m\n\u{0}\u{0}",
        2,
        1,
        "expected a computation name",
    );
}

#[test]
fn truncated_files_are_errors_at_every_cut() {
    for cut in 0..SMALL.len() {
        if !SMALL.is_char_boundary(cut) {
            continue;
        }
        let prefix = &SMALL[..cut];
        // A cut right after a computation's closing brace leaves a complete module.
        if prefix.trim_end().ends_with("\n}") {
            continue;
        }
        let r = parse_module(prefix);
        assert!(r.is_err(), "truncated at {cut} parsed:\n{prefix}");
    }
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %k = f32[] constant(1)\n",
        2,
        22,
        "is not closed",
    );
}

#[test]
fn unbalanced_brackets_and_strings_are_errors() {
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %k = f32[] constant(1), metadata={op_name=\"x\"\n",
        3,
        41,
        "unbalanced '{'",
    );
    // Layout is free: the computation's '}' on the next line closes the metadata instead.
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %k = f32[] constant(1), metadata={op_name=\"x\"\n}\n",
        2,
        22,
        "computation e is not closed",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %k = f32[] constant(1), metadata={op_name=\"x}\n}\n",
        3,
        50,
        "unterminated string",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %k = f32[] constant(1), metadata={a=(1]}\n}\n",
        3,
        46,
        "']' closes the '(' opened at 3:44",
    );
    assert_err_at(
        "HloModule m /* never closed\n",
        1,
        13,
        "unterminated /* comment",
    );
}

#[test]
fn huge_numbers_are_errors_not_overflows() {
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %k = f32[99999999999999999999] parameter(0)\n}\n",
        3,
        17,
        "does not fit in 64 bits",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> s8[] {\n  ROOT %k = s8[] constant(300)\n}\n",
        3,
        27,
        "out of range for s8",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> u64[] {\n  ROOT %k = u64[] constant(18446744073709551616)\n}\n",
        3,
        28,
        "does not fit in 64 bits",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %k = f32[] parameter(-1)\n}\n",
        3,
        29,
        "negative parameter number",
    );
    // A huge (but representable) shape allocates nothing until elements are written.
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %k = f32[4000000000000,4000000000000] constant({1})\n}\n",
        3,
        56,
        "expected '{' for dimension 1",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %k = f32[4000000000000] constant({1})\n}\n",
        3,
        41,
        "dimension 0 has 1 elements here but the shape says 4000000000000",
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep_shape = format!(
        "HloModule m\nENTRY %e () -> f32[] {{\n  ROOT %k = {}f32[]{} parameter(0)\n}}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let e = parse_err(&deep_shape);
    assert_eq!(e.line, 3);
    assert!(e.message.contains("nested deeper"), "{e}");
    let deep_raw = format!(
        "HloModule m\nENTRY %e () -> f32[] {{\n  ROOT %k = f32[] constant(1), metadata={}\n}}\n",
        "{".repeat(1_000_000)
    );
    let e = parse_err(&deep_raw);
    assert!(e.message.contains("unbalanced"), "{e}");
    let rank = 100_000;
    let deep_lit = format!(
        "HloModule m\nENTRY %e () -> f32[] {{\n  ROOT %k = f32[{}] constant({}1{})\n}}\n",
        vec!["1"; rank].join(","),
        "{".repeat(rank),
        "}".repeat(rank)
    );
    let e = parse_err(&deep_lit);
    assert!(e.message.contains("too deep"), "{e}");
}

#[test]
fn wrong_literal_shapes_are_errors() {
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[2] {\n  ROOT %k = f32[2] constant({1, 2, 3})\n}\n",
        3,
        35,
        "too many elements",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[2,2] {\n  ROOT %k = f32[2,2] constant({1, 2})\n}\n",
        3,
        32,
        "expected '{' for dimension 1",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> pred[] {\n  ROOT %k = pred[] constant(2)\n}\n",
        3,
        29,
        "pred value must be true or false",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> s32[] {\n  ROOT %k = s32[] constant(1.5)\n}\n",
        3,
        28,
        "found a floating-point number",
    );
}

#[test]
fn undefined_names_duplicates_and_structure_errors() {
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %n = f32[] negate(%x)\n}\n",
        3,
        26,
        "instruction %x is not defined",
    );
    assert_err_at(
        "HloModule m\nENTRY %e (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n  ROOT %c = f32[] call(%p), to_apply=%nowhere\n}\n",
        4,
        38,
        "computation %nowhere is not defined",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  %k = f32[] constant(1)\n  ROOT %k = f32[] constant(2)\n}\n",
        4,
        8,
        "used twice",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %a = f32[] constant(1)\n  ROOT %b = f32[] constant(2)\n}\n",
        4,
        3,
        "a second ROOT",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %a = f32[] constant(1) junk\n}\n",
        3,
        31,
        "expected ','",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %a = f33[] constant(1)\n}\n",
        3,
        13,
        "unknown element type 'f33'",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %a = f32[] constant(1), dimensions={1,x}\n}\n",
        3,
        46,
        "expected dimensions (an integer)",
    );
    assert_err_at(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %a = f32[] constant(1), is_stable=maybe\n}\n",
        3,
        42,
        "takes true or false",
    );
}

#[test]
fn long_lines_get_a_windowed_snippet_with_the_caret_under_the_error() {
    let long = format!(
        "HloModule m\nENTRY %e () -> f32[] {{\n  ROOT %a = f32[] constant(1), metadata={{op_name=\"{}\"}} ??\n}}\n",
        "x".repeat(1000)
    );
    let e = parse_err(&long);
    assert!(e.snippet.chars().count() <= 170, "{}", e.snippet.len());
    assert_eq!(e.snippet.chars().nth(e.caret), Some('?'));
}

/// A deterministic mutation sweep: random byte edits of a valid module never panic.
#[test]
fn random_mutations_never_panic() {
    let base = SMALL.as_bytes();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet = b"{}()[],=%:\"\\/*-0123456789.xe\n \x00\xffabcf";
    for _ in 0..3000 {
        let mut v = base.to_vec();
        for _ in 0..(1 + next() % 4) {
            let i = (next() as usize) % v.len();
            match next() % 3 {
                0 => v[i] = alphabet[(next() as usize) % alphabet.len()],
                1 => {
                    v.remove(i);
                }
                _ => v.insert(i, alphabet[(next() as usize) % alphabet.len()]),
            }
        }
        if let Ok(m) = parse_module_bytes(&v) {
            // Whatever parses must print and re-parse to the same module.
            let text = module_to_string(&m);
            assert_eq!(parse_ok(&text), m);
            let _ = crate::verify::verify_module(&m);
        }
    }
}

// ---- free layout, as XLA's parser reads it ----

/// An instruction over several lines (attributes wrapped after a comma, a backend_config as
/// indented JSON, a module header's attributes wrapped), several instructions on one line and a
/// trailing comma before the next instruction read as the same module as the one-line form.
#[test]
fn layout_is_free_as_for_xlas_parser() {
    let one_line = parse_ok("HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n\n%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\n\nENTRY %e (p: f32[4]) -> f32[4] {\n  %p = f32[4] parameter(0)\n  %c = f32[] constant(1)\n  %b = f32[4] broadcast(%c), dimensions={}\n  %z = f32[] constant(0)\n  %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%add\n  %rb = f32[4] broadcast(%r), dimensions={}\n  %a = f32[4] add(%p, %b), backend_config={\"k\":[1,2],\"s\":\"v\"}\n  ROOT %o = f32[4] add(%a, %rb)\n}\n");
    let wrapped = parse_ok("HloModule m,\n    entry_computation_layout={(f32[4]{0})\n      ->f32[4]{0}}\n\n%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0) %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\n\nENTRY %e (p: f32[4]) -> f32[4] {\n  %p = f32[4] parameter(0)\n  %c = f32[] constant(1)\n  %b = f32[4] broadcast(%c),\n      dimensions={}\n  %z = f32[] constant(0)\n  %r = f32[] reduce(\n      %p,\n      %z),\n      dimensions={0},\n      to_apply=%add,\n  %rb = f32[4] broadcast(%r), dimensions={} // a comment\n  %a = f32[4] add(%p, %b), backend_config={\n    \"k\": [1,\n          2],\n    \"s\": \"v\"\n  }\n  ROOT %o = f32[4] add(%a, %rb)\n}\n");
    assert_eq!(one_line.computations.len(), wrapped.computations.len());
    for (a, b) in one_line.computations.iter().zip(&wrapped.computations) {
        assert_eq!(a.instructions.len(), b.instructions.len());
        for (x, y) in a.instructions.iter().zip(&b.instructions) {
            assert_eq!(
                (&x.name, x.opcode, &x.operands),
                (&y.name, y.opcode, &y.operands)
            );
            if x.name != "a" {
                assert_eq!(x.attrs, y.attrs, "{}", x.name);
            }
        }
    }
    // The JSON keeps its own layout; everything else reads alike, and the print round-trips.
    assert!(matches!(
        wrapped.computations[1].instructions[6].attrs.last(),
        Some((k, Attr::Raw(v))) if k == "backend_config" && v.contains("\"k\": [1,\n")
    ));
    assert_eq!(
        wrapped.header_attrs[0].0, "entry_computation_layout",
        "{:?}",
        wrapped.header_attrs
    );
    assert_eq!(parse_ok(&module_to_string(&wrapped)), wrapped);
    // An attribute whose value is a shape does not end the instruction.
    let m = parse_ok("HloModule m\nENTRY %e {\n  %x = f32[4] parameter(0)\n  %t = token[] after-all()\n  ROOT %o = token[] outfeed(%x, %t),\n    outfeed_shape=f32[4]\n}\n");
    assert_eq!(m.computations[0].instructions[2].attrs.len(), 1);
}

/// Free layout keeps errors where they are: junk after an instruction is reported there, and an
/// attribute wrapped onto the next line is checked at its own line and column.
#[test]
fn free_layout_errors_keep_their_positions() {
    assert_err_at(
        "HloModule m\nENTRY %e {\n  %x = f32[] parameter(0) junk\n  ROOT %y = f32[] negate(%x)\n}\n",
        3,
        27,
        "expected ',' or the end of the instruction",
    );
    assert_err_at(
        "HloModule m\nENTRY %e {\n  %x = f32[4] parameter(0)\n  ROOT %b = f32[4] broadcast(%x),\n      dimensions={0}, dimensions={0}\n}\n",
        5,
        23,
        "attribute dimensions is given twice",
    );
}

/// An array constant written as one value is, as XLA's parser reads it (measured), that value at
/// element 0 and zeros elsewhere; an empty array has no element 0; the size is bounded, with an
/// error naming the constant's position.
#[test]
fn an_array_constant_written_as_one_value_sets_element_zero() {
    let m = parse_ok("HloModule m\nENTRY %e {\n  ROOT %c = f32[2,3] constant(1.5)\n}\n");
    let want = parse_ok(
        "HloModule m\nENTRY %e {\n  ROOT %c = f32[2,3] constant({{1.5, 0, 0}, {0, 0, 0}})\n}\n",
    );
    assert_eq!(m, want);
    let m = parse_ok(
        "HloModule m\nENTRY %e {\n  ROOT %c = (s32[3], pred[2]) constant((-7, true))\n}\n",
    );
    assert_eq!(
        module_to_string(&m),
        module_to_string(&parse_ok("HloModule m\nENTRY %e {\n  ROOT %c = (s32[3], pred[2]) constant(({-7, 0, 0}, {true, false}))\n}\n"))
    );
    assert_err_at(
        "HloModule m\nENTRY %e {\n  ROOT %c = f32[0] constant(3)\n}\n",
        3,
        29,
        "sets element 0, which it has not",
    );
    assert_err_at(
        "HloModule m\nENTRY %e {\n  ROOT %c = f32[100000,100000] constant(0)\n}\n",
        3,
        41,
        "limited to",
    );
}

/// A result shape left out is inferred as XLA's parser does, for the ops whose shape follows
/// from their operands; for any other op the error says so at the opcode.
#[test]
fn a_result_shape_left_out_is_inferred_from_the_operands() {
    let m = parse_ok("HloModule m\nENTRY %e {\n  %p = f32[2,3] parameter(0)\n  %q = pred[2,3] parameter(1)\n  %n = negate(%p)\n  %c = compare(%p, %n), direction=LT\n  %s = select(%q, %n, %p)\n  %t = tuple(%c, %s)\n  %g = get-tuple-element(%t), index=1\n  ROOT %r = tuple(%g, %t)\n}\n");
    let want = parse_ok("HloModule m\nENTRY %e {\n  %p = f32[2,3] parameter(0)\n  %q = pred[2,3] parameter(1)\n  %n = f32[2,3] negate(%p)\n  %c = pred[2,3] compare(%p, %n), direction=LT\n  %s = f32[2,3] select(%q, %n, %p)\n  %t = (pred[2,3], f32[2,3]) tuple(%c, %s)\n  %g = f32[2,3] get-tuple-element(%t), index=1\n  ROOT %r = (f32[2,3], (pred[2,3], f32[2,3])) tuple(%g, %t)\n}\n");
    assert_eq!(m, want);
    assert_err_at(
        "HloModule m\nENTRY %e {\n  %p = f32[4] parameter(0)\n  ROOT %b = broadcast(%p), dimensions={0}\n}\n",
        4,
        13,
        "infers it only for tuple",
    );
    assert_err_at(
        "HloModule m\nENTRY %e {\n  ROOT %k = constant(1)\n}\n",
        3,
        13,
        "a constant needs its shape",
    );
    assert_err_at(
        "HloModule m\nENTRY %e {\n  %p = (f32[4]) parameter(0)\n  ROOT %g = get-tuple-element(%p), index=3\n}\n",
        4,
        13,
        "outside the operand's tuple of 1",
    );
}

/// A broadcast of a scalar without `dimensions=` means `dimensions={}` to XLA, and to the IR.
#[test]
fn a_scalar_broadcast_without_dimensions_broadcasts_into_no_dimension() {
    let m = parse_ok(
        "HloModule m\nENTRY %e {\n  %c = f32[] constant(2)\n  ROOT %b = f32[3] broadcast(%c)\n}\n",
    );
    let want = parse_ok("HloModule m\nENTRY %e {\n  %c = f32[] constant(2)\n  ROOT %b = f32[3] broadcast(%c), dimensions={}\n}\n");
    assert_eq!(m, want);
    // Of a non-scalar it stays missing (the verifier's error).
    let m = parse_ok("HloModule m\nENTRY %e {\n  %c = f32[3] parameter(0)\n  ROOT %b = f32[3,2] broadcast(%c)\n}\n");
    assert!(m.computations[0].instructions[1]
        .attr("dimensions")
        .is_none());
}

/// An instruction written in place of an operand (XLA's nested instruction) becomes an
/// instruction of its own before its user, named as XLA names it (`negate.anon`, then
/// `negate.anon.1`); a later instruction of the same name takes it, the nested one yields.
#[test]
fn a_nested_instruction_becomes_an_instruction_before_its_user() {
    let m = parse_ok("HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)\n  %a = f32[2] add(negate(%p), f32[2] negate(f32[2] broadcast(f32[] constant(1))))\n  %negate.anon = f32[2] abs(%a)\n  ROOT %t = tuple(%negate.anon, %a)\n}\n");
    let c = &m.computations[0];
    let names: Vec<&str> = c.instructions.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "p",
            "negate.anon.2",
            "constant.anon",
            "broadcast.anon",
            "negate.anon.1",
            "a",
            "negate.anon",
            "t"
        ]
    );
    assert_eq!(c.instructions[5].operands, vec![1, 4]);
    assert_eq!(c.instructions[6].opcode, Opcode::Abs);
    assert_eq!(c.root, 7);
    assert_eq!(parse_ok(&module_to_string(&m)), m);
    // Attributes are never a nested instruction's: the ',' belongs to its user.
    assert_err_at(
        "HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %a = f32[2] add(%p, f32[2] broadcast(f32[] constant(1)), dimensions={})\n}\n",
        4,
        65,
        "instruction %dimensions is not defined",
    );
}

/// Without an `HloModule` line XLA's parser reads the computations alone and names the module
/// after the entry computation (`module_<entry>`, measured); a module name follows XLA's name
/// syntax (`test$0` is refused, as XLA refuses it).
#[test]
fn a_module_without_a_header_is_named_after_its_entry() {
    let m = parse_ok("add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add\n}\n");
    assert_eq!(m.name, "module_e");
    assert_eq!(m.entry, 1);
    let m = parse_ok("// a lit test\ne {\n  ROOT a = f32[] exponential(f32[] parameter(0))\n}\n");
    assert_eq!(m.name, "module_e");
    assert_eq!(parse_ok(&module_to_string(&m)), m);
    assert_err_at(
        "HloModule test$0\nENTRY e {\n  ROOT c = f32[] constant(0)\n}\n",
        1,
        11,
        "expected the module name",
    );
    assert_err_at(
        "HloModule 9abc\nENTRY e {\n  ROOT c = f32[] constant(0)\n}\n",
        1,
        11,
        "expected the module name",
    );
    assert_eq!(
        parse_ok("HloModule a.b-c_d\nENTRY e {\n  ROOT c = f32[] constant(0)\n}\n").name,
        "a.b-c_d"
    );
}

/// XLA also reads the older `HloModule name:`.
#[test]
fn an_old_style_header_is_read() {
    let m = parse_ok("HloModule old_style:\nENTRY e {\n  ROOT c = f32[] constant(0)\n}\n");
    assert_eq!(m.name, "old_style");
}

/// Iota replica groups (`[2,4]<=[8]`, `[2,4]<=[4,2]T(1,0)`) are one attribute value.
#[test]
fn iota_replica_groups_are_one_value() {
    let m = parse_ok("HloModule m\n%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\nENTRY %e {\n  %p = f32[8] parameter(0)\n  %a = f32[8] all-reduce(%p), replica_groups=[2,4]<=[8], to_apply=%add\n  ROOT %b = f32[8] all-reduce(%a), replica_groups=[2,4]<=[4,2]T(1,0), to_apply=%add\n}\n");
    let e = &m.computations[1];
    assert_eq!(
        e.instructions[1].attr("replica_groups"),
        Some(&Attr::Raw("[2,4]<=[8]".into()))
    );
    assert_eq!(
        e.instructions[2].attr("replica_groups"),
        Some(&Attr::Raw("[2,4]<=[4,2]T(1,0)".into()))
    );
    assert_eq!(parse_ok(&module_to_string(&m)), m);
}

/// The result shape of ops that keep their operand's, of transpose and of after-all is inferred.
#[test]
fn more_result_shapes_are_inferred() {
    let m = parse_ok("HloModule m\nENTRY %e {\n  %p = f32[2,3] parameter(0)\n  %t = transpose(%p), dimensions={1,0}\n  %c = copy(%t)\n  %k = after-all()\n  ROOT %r = tuple(%c, %k)\n}\n");
    let want = parse_ok("HloModule m\nENTRY %e {\n  %p = f32[2,3] parameter(0)\n  %t = f32[3,2] transpose(%p), dimensions={1,0}\n  %c = f32[3,2] copy(%t)\n  %k = token[] after-all()\n  ROOT %r = (f32[3,2], token[]) tuple(%c, %k)\n}\n");
    assert_eq!(m, want);
}

/// dot, pad and concatenate without a result shape get the one XLA's parser infers (measured:
/// `(f32[2,3,5], f32[5,5,7], f32[2,6,4])` for the module below).
#[test]
fn dot_pad_and_concatenate_shapes_are_inferred_as_xla_infers_them() {
    let m = parse_ok("HloModule m\nENTRY e {\n  a = f32[2,3,4] parameter(0)\n  b = f32[2,4,5] parameter(1)\n  d = dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n  z = f32[] constant(0)\n  p = pad(a, z), padding=1_2x0_0_1x3_0\n  c = concatenate(a, a), dimensions={1}\n  ROOT t = tuple(d, p, c)\n}\n");
    let root = &m.computations[0].instructions[m.computations[0].root];
    assert_eq!(
        crate::print::shape_to_string(&root.shape),
        "(f32[2,3,5], f32[5,5,7], f32[2,6,4])"
    );
}

/// A call without a result shape takes its computation's root shape; collective-permute's
/// `slice_sizes={{128,32}}` is kept verbatim.
#[test]
fn a_call_takes_its_computations_shape_and_nested_slice_sizes_are_read() {
    let m = parse_ok("HloModule m\nf {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\nENTRY e {\n  p = f32[2] parameter(0)\n  c = call(p), to_apply=f\n  ROOT q = f32[2] collective-permute(c), source_target_pairs={{0,1}}, slice_sizes={{2}}\n}\n");
    let e = &m.computations[1];
    assert_eq!(
        crate::print::shape_to_string(&e.instructions[1].shape),
        "f32[2]"
    );
    assert_eq!(
        e.instructions[2].attr("slice_sizes"),
        Some(&Attr::Raw("{{2}}".into()))
    );
    assert_eq!(parse_ok(&module_to_string(&m)), m);
    assert_err_at(
        "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = call(p), to_apply=f\n}\nf {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n",
        4,
        12,
        "not read yet",
    );
}

/// Buffer shapes (`b(f32[16])`, XLA's shape kind BUFFER) are read, in tuples and as operand
/// shapes, print back as written and verify; what is inside must be an array.
#[test]
fn buffer_shapes_are_read_and_printed() {
    let text = "HloModule m\nENTRY e {\n  p = f32[16]{0} parameter(0)\n  pin = b(f32[16]{0}) custom-call(p), custom_call_target=\"Pin\"\n  t = (b(f32[16]{0}), u32[]) tuple(pin, u32[] constant(1))\n  g = b(f32[16]) get-tuple-element(t), index=0\n  ROOT u = f32[16] custom-call(b(f32[16]) g), custom_call_target=\"Unpin\"\n}\n";
    let m = parse_ok(text);
    let e = &m.computations[0];
    assert_eq!(
        e.instructions[1].shape,
        Shape::Buffer(ArrayShape {
            layout: Some(crate::shape::Layout::row_major(1)),
            ..ArrayShape::new(PrimitiveType::F32, vec![16])
        })
    );
    assert!(matches!(
        e.instructions[3].shape.tuple_elements(),
        Some([Shape::Buffer(_), _])
    ));
    let printed = module_to_string(&m);
    assert!(printed.contains("b(f32[16]{0}) custom-call"), "{printed}");
    assert_eq!(parse_ok(&printed), m);
    crate::verify::verify_module(&m).unwrap();
    assert_eq!(
        parse_shape("(b(s32[2,3]), token[])").map(|s| crate::print::shape_to_string(&s)),
        Ok("(b(s32[2,3]), token[])".to_string())
    );
    assert_err_at(
        "HloModule m\nENTRY e {\n  ROOT p = b((f32[2])) parameter(0)\n}\n",
        3,
        14,
        "holds an array shape",
    );
    assert_err_at(
        "HloModule m\nENTRY e {\n  ROOT p = b(f32[2] parameter(0)\n}\n",
        3,
        21,
        "to close the buffer shape",
    );
}

/// A computation written in place of a computation name (`to_apply={ ... }`, also in a
/// braced list) is a new computation of the module, with a fresh name that yields to a
/// computation of the text; its instruction names are its own.
#[test]
fn computations_written_in_attributes_become_computations() {
    let text = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  r = f32[] reduce(p, z), dimensions={0}, to_apply={\n    p = f32[] parameter(0)\n    z = f32[] parameter(1)\n    ROOT m = f32[] maximum(p, z)\n  }\n  i = s32[] parameter(1)\n  ROOT c = conditional(i, r, r), branch_computations={{\n    a = f32[] parameter(0)\n    ROOT n = negate(a)\n  }, r.to_apply.1}\n}\nr.to_apply.1 {\n  a = f32[] parameter(0)\n  ROOT n = f32[] abs(a)\n}\n";
    let m = parse_ok(text);
    let names: Vec<&str> = m.computations.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["r.to_apply", "c.branch_computations.0", "e", "r.to_apply.1"]
    );
    assert_eq!(m.entry, 2);
    let e = &m.computations[2];
    assert_eq!(e.instructions[2].comp("to_apply"), Some(0));
    assert_eq!(
        e.instructions[4].comps("branch_computations"),
        Some(&[1, 3][..])
    );
    // The conditional's shape comes from its first branch.
    assert_eq!(e.instructions[4].shape, Shape::scalar(PrimitiveType::F32));
    crate::verify::verify_module(&m).unwrap();
    let printed = module_to_string(&m);
    assert_eq!(parse_ok(&printed), m);
    // A computation of the text takes its name back from an in-place one.
    let m = parse_ok("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = call(p), to_apply={\n    a = f32[] parameter(0)\n    ROOT n = f32[] negate(a)\n  }\n}\nc.to_apply {\n  ROOT k = f32[] constant(1)\n}\n");
    let names: Vec<&str> = m.computations.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["c.to_apply.1", "e", "c.to_apply"]);
    assert_eq!(m.computations[1].instructions[1].comp("to_apply"), Some(0));
    assert_err_at(
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply={\n    a = f32[] parameter(0)\n    ROOT n = f32[] negate(b)\n  }\n}\n",
        6,
        27,
        "not defined",
    );
}

/// reduce, reduce-window, convolution and sort without a result shape get the one XLA's shape
/// inference gives: the reducer's result type, the window's output dimensions, the
/// convolution's dimension labels and group counts.
#[test]
fn reduce_window_convolution_and_sort_shapes_are_inferred() {
    let m = parse_ok("HloModule m\nadd {\n  x = bf16[] parameter(0)\n  y = bf16[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n  p = bf16[4,6] parameter(0)\n  z = bf16[] constant(0)\n  r = reduce(p, z), dimensions={1}, to_apply=add\n  w = reduce-window(p, z), window={size=2x3 stride=2x1 pad=0_0x1_1}, to_apply=add\n  x = f32[8,5,5,6] parameter(1)\n  k = f32[2,3,3,16] parameter(2)\n  c = convolution(x, k), window={size=3x3 pad=1_1x0_0 lhs_dilate=1x2}, dim_labels=b01f_i01o->b01f, batch_group_count=2, feature_group_count=3\n  s = sort(p, p), dimensions={0}, to_apply={\n    a = bf16[] parameter(0)\n    b = bf16[] parameter(1)\n    c = bf16[] parameter(2)\n    d = bf16[] parameter(3)\n    ROOT l = pred[] compare(a, b), direction=LT\n  }\n  ROOT t = tuple(r, w, c, s)\n}\n");
    let e = &m.computations[2];
    assert_eq!(
        crate::print::shape_to_string(&e.instructions[e.root].shape),
        "(f32[4], f32[2,6], f32[4,5,7,16], (bf16[4,6], bf16[4,6]))"
    );
}

/// Forms XLA's parser reads that a layout-strict reader would not: blanks before a layout
/// (`f32[2,3] {1,0}`) and between a type and its dimensions (`s32 [4]`), a body's `{` right
/// after the signature's result shape, a signature without ':', literal groups without commas,
/// attribute values that go on after a blank (`mesh[...] {'a'}`, `literal=f32[] 0.1`) or start
/// on the next line, and dim_labels with unknown ('?') dimensions, kept verbatim.
#[test]
fn lenient_forms_of_xlas_parser_are_read() {
    let m = parse_ok("HloModule m\nENTRY e (p f32[2,3]{1,0}) -> f32[3,2]{1,0}{\n  p = f32[2,3] {1, 0} parameter(0)\n  q = s32 [4] parameter(1)\n  k = s32[2,2] constant({ {1, 2} {3, 4} })\n  c = f32[] custom-call(p), custom_call_target=\"t\", literal=f32[] 0.1, backend_config=\n      \"x\"\n  a = f32[2,3] all-reduce(p), replica_groups=mesh['x'=2,'y'=2] {'y'}, to_apply=e2\n  d = f32[1] custom-call(), window={size=2x2}, dim_labels=b01f?_01i?o->b01f?, custom_call_target=\"u\"\n  ROOT b = f32[3,2]{0,1} bitcast(p)\n}\ne2 {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n");
    let e = &m.computations[0];
    assert_eq!(
        crate::print::shape_to_string(&e.instructions[0].shape),
        "f32[2,3]{1,0}"
    );
    assert_eq!(
        crate::print::shape_to_string(&e.instructions[1].shape),
        "s32[4]"
    );
    assert_eq!(
        e.instructions[3].attr("literal"),
        Some(&Attr::Raw("f32[] 0.1".into()))
    );
    assert_eq!(
        e.instructions[3].attr("backend_config"),
        Some(&Attr::Raw("\"x\"".into()))
    );
    assert_eq!(
        e.instructions[4].attr("replica_groups"),
        Some(&Attr::Raw("mesh['x'=2,'y'=2] {'y'}".into()))
    );
    assert_eq!(
        e.instructions[5].attr("dim_labels"),
        Some(&Attr::Raw("b01f?_01i?o->b01f?".into()))
    );
    assert_eq!(parse_ok(&module_to_string(&m)), m);
}

/// The fuzz seeds for the new syntax are valid modules (so the fuzzer starts from texts that
/// reach the verifier and the printer).
#[test]
fn the_buffer_and_inline_computation_fuzz_seeds_verify() {
    for text in [
        include_str!("../../../fuzz/seeds/hlo_parse/buffer_shapes.hlo"),
        include_str!("../../../fuzz/seeds/hlo_parse/inline_computations.hlo"),
    ] {
        let m = parse_ok(text);
        crate::verify::verify_module(&m).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(parse_ok(&module_to_string(&m)), m);
    }
}

/// Transfers take the shapes XLA's parser builds from their operands, whatever the text
/// declares (a module of XLA's own tests declares `recv-done` as `token[]`; XLA reads
/// `(u32[8], token[])`, and so the printed text is one XLA reads the same).
#[test]
fn transfers_take_the_shapes_xla_builds() {
    let m = parse_module(
        "HloModule t, replica_count=2\nENTRY c {\n  a = u32[8] parameter(0)\n  t = token[] after-all()\n  \
         r = (u32[8], u32[8], token[]) recv(t), channel_id=1\n  rd = token[] recv-done(r), channel_id=1\n  \
         s = (f32[2], token[]) send(a, t), channel_id=2\n  sd = (f32[2], token[]) send-done(s), channel_id=2\n  \
         o = () outfeed(a, t)\n  ROOT x = (token[], token[]) tuple(sd, o)\n}\n",
    )
    .unwrap();
    let e = m.entry_computation();
    let shape = |n: &str| {
        crate::print::shape_to_string(&e.instructions.iter().find(|i| i.name == n).unwrap().shape)
    };
    assert_eq!(shape("r"), "(u32[8], u32[], token[])");
    assert_eq!(shape("rd"), "(u32[8], token[])");
    assert_eq!(shape("s"), "(u32[8], u32[], token[])");
    assert_eq!(shape("sd"), "token[]");
    assert_eq!(shape("o"), "token[]");
}

/// `call-start` written as sugar keeps `output_to_operand_aliasing` on the async-start (XLA's
/// parser refuses it on the wrapped `call`).
#[test]
fn an_async_starts_aliasing_stays_on_the_start() {
    let m = parse_module(
        "HloModule t\n\nasync_computation {\n  p = f32[2,3] parameter(0)\n  ROOT n = f32[2,3] negate(p)\n}\n\n\
         ENTRY main {\n  p0 = f32[2,3] parameter(0)\n  start = ((f32[2,3]), f32[2,3], s32[]) call-start(p0),\n    \
         to_apply=async_computation,\n    output_to_operand_aliasing={{1}: (0, {})}\n  \
         ROOT done = f32[2,3] call-done(start)\n}\n",
    )
    .unwrap();
    let all: Vec<&crate::Instruction> = m
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .collect();
    let start = all.iter().find(|i| i.name == "start").unwrap();
    assert!(start.attr("output_to_operand_aliasing").is_some());
    assert!(all
        .iter()
        .filter(|i| i.opcode == crate::Opcode::Call)
        .all(|i| i.attr("output_to_operand_aliasing").is_none()));
}

/// Texts XLA's parser refuses and that would otherwise read as another module: float constants
/// out of their type's range (not an infinity), an operand written with another shape than
/// its instruction's, a signature whose result is not the root's, and async sugar whose
/// `-done` names another opcode than its start. Each with its position.
#[test]
fn texts_xla_refuses_are_refused_with_their_position() {
    assert_err_at(
        "HloModule m\nENTRY e {\n  ROOT c = f16[] constant(-65520)\n}\n",
        3,
        27,
        "out of range for f16",
    );
    assert_err_at(
        "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1e+100)\n}\n",
        3,
        27,
        "out of range for f32",
    );
    assert_err_at(
        "HloModule m\nENTRY e {\n  ROOT c = f64[] constant(1.8e308)\n}\n",
        3,
        27,
        "out of range for f64",
    );
    assert_err_at(
        "HloModule m\nENTRY e {\n  ROOT c = c64[] constant((1, -1e+100))\n}\n",
        3,
        31,
        "out of range for f32",
    );
    assert_err_at(
        "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(f32[2] p, f32[3] p)\n}\n",
        4,
        33,
        "operand %p is written as f32[3] but is f32[2]",
    );
    assert_err_at(
        "HloModule m\nENTRY e () -> f32[1] {\n  ROOT c = f32[1,2] constant({{1, 2}})\n}\n",
        2,
        15,
        "declares the result f32[1]",
    );
    assert_err_at(
        "HloModule m\nENTRY e {\n  p = f32[10] parameter(0)\n  s = ((f32[10]), f32[20], s32[]) custom-call-start(p), custom_call_target=\"foo\"\n  ROOT d = f32[20] add-done(s)\n}\n",
        5,
        20,
        "continues an async custom-call-start",
    );
    // Infinities written as such, and large values within range, stay numbers of the type.
    for ok in [
        "HloModule m\nENTRY e {\n  ROOT c = f16[2] constant({-inf, 65504})\n}\n",
        "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(3.4e38)\n}\n",
    ] {
        parse_module(ok).unwrap();
    }
}

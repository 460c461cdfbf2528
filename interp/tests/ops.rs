//! One unit test per op family, with expected values derived by hand.

mod common;
use common::*;
use hlo::Literal;

/// The module of an entry computation, its signature written with the root's true shape (XLA's
/// parser refuses a signature whose result is not the root's, as ours does).
fn module(params: &str, body: &str) -> String {
    let unsigned = format!("HloModule m\n\nENTRY %main {{\n{body}\n}}\n");
    let m = parse(&unsigned);
    let entry = m.entry_computation();
    let result = hlo::print::shape_to_string(&entry.instructions[entry.root].shape);
    format!("HloModule m\n\nENTRY %main ({params}) -> {result} {{\n{body}\n}}\n")
}

#[test]
fn elementwise_arithmetic_and_math() {
    let text = module(
        "a: f32[4], b: f32[4]",
        "  %a = f32[4] parameter(0)\n  %b = f32[4] parameter(1)\n  %s = f32[4] add(%a, %b)\n  %m = f32[4] multiply(%s, %b)\n  %e = f32[4] exponential(%a)\n  %d = f32[4] divide(%m, %e)\n  ROOT %t = (f32[4], f32[4], f32[4]) tuple(%s, %m, %d)",
    );
    let r = eval(
        &text,
        &[
            f32s(&[4], &[0.0, 1.0, -1.0, 2.0]),
            f32s(&[4], &[1.0, 2.0, 3.0, 0.5]),
        ],
    )
    .unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(vals(&t[0]), vec![1.0, 3.0, 2.0, 2.5]);
    assert_eq!(vals(&t[1]), vec![1.0, 6.0, 6.0, 1.25]);
    // (s*b)/exp(a), each rounded to f32 once.
    let want: Vec<f64> = [(1.0f64, 0.0f64), (6.0, 1.0), (6.0, -1.0), (1.25, 2.0)]
        .iter()
        .map(|&(m, a)| ((m as f32) / (a as f32).exp()) as f64)
        .collect();
    for (x, y) in vals(&t[2]).iter().zip(&want) {
        assert!((x - y).abs() <= 1e-6 * y.abs(), "{x} vs {y}");
    }
}

#[test]
fn integer_division_edge_cases_follow_xla() {
    let text = module(
        "a: s32[4], b: s32[4]",
        "  %a = s32[4] parameter(0)\n  %b = s32[4] parameter(1)\n  %d = s32[4] divide(%a, %b)\n  %r = s32[4] remainder(%a, %b)\n  ROOT %t = (s32[4], s32[4]) tuple(%d, %r)",
    );
    let r = eval(
        &text,
        &[
            s32s(&[4], &[7, -7, i32::MIN as i64, 5]),
            s32s(&[4], &[2, 0, -1, -3]),
        ],
    )
    .unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(ints(&t[0]), vec![3, -1, i32::MIN as i64, -1]);
    assert_eq!(ints(&t[1]), vec![1, -7, 0, 2]);
}

#[test]
fn shifts_past_the_width() {
    let text = module(
        "a: s32[3], b: s32[3]",
        "  %a = s32[3] parameter(0)\n  %b = s32[3] parameter(1)\n  %l = s32[3] shift-left(%a, %b)\n  %ra = s32[3] shift-right-arithmetic(%a, %b)\n  %rl = s32[3] shift-right-logical(%a, %b)\n  ROOT %t = (s32[3], s32[3], s32[3]) tuple(%l, %ra, %rl)",
    );
    let r = eval(&text, &[s32s(&[3], &[-8, -8, 5]), s32s(&[3], &[1, 40, 32])]).unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(ints(&t[0]), vec![-16, 0, 0]);
    assert_eq!(ints(&t[1]), vec![-4, -1, 0]);
    assert_eq!(ints(&t[2]), vec![0x7FFF_FFFC, 0, 0]);
}

#[test]
fn convert_saturates_and_maps_nan_to_zero() {
    let text = module(
        "a: f32[5]",
        "  %a = f32[5] parameter(0)\n  ROOT %c = s8[5] convert(%a)",
    );
    let r = eval(&text, &[f32s(&[5], &[f32::NAN, 1e9, -1e9, -2.7, 126.9])]).unwrap();
    assert_eq!(ints(&r), vec![0, 127, -128, -2, 126]);
}

#[test]
fn compare_total_order_and_nan_propagating_max() {
    let text = module(
        "a: f32[3], b: f32[3]",
        "  %a = f32[3] parameter(0)\n  %b = f32[3] parameter(1)\n  %lt = pred[3] compare(%a, %b), direction=LT, type=TOTALORDER\n  %flt = pred[3] compare(%a, %b), direction=LT\n  %mx = f32[3] maximum(%a, %b)\n  ROOT %t = (pred[3], pred[3], f32[3]) tuple(%lt, %flt, %mx)",
    );
    let r = eval(
        &text,
        &[
            f32s(&[3], &[-0.0, 1.0, f32::NAN]),
            f32s(&[3], &[0.0, f32::NAN, 2.0]),
        ],
    )
    .unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(ints(&t[0]), vec![1, 1, 0]); // -0 < +0; 1 < NaN; NaN > 2
    assert_eq!(ints(&t[1]), vec![0, 0, 0]);
    let m = vals(&t[2]);
    assert_eq!(m[0], 0.0);
    assert!(m[1].is_nan() && m[2].is_nan());
}

#[test]
fn data_movement_ops() {
    let text = module(
        "a: f32[2,3]",
        "  %a = f32[2,3] parameter(0)\n  %t = f32[3,2] transpose(%a), dimensions={1,0}\n  %s = f32[2,2] slice(%a), slice={[0:2], [1:3]}\n  %z = f32[] constant(0)\n  %p = f32[2,6] pad(%a, %z), padding=0_0x1_0_1\n  %q = f32[2,2] pad(%a, %z), padding=0_0x-1_0\n  %r = f32[2,3] reverse(%a), dimensions={1}\n  %c = f32[4,3] concatenate(%a, %a), dimensions={0}\n  %b = f32[2,2,3] broadcast(%a), dimensions={0,2}\n  ROOT %tu = (f32[3,2], f32[2,2], f32[2,6], f32[2,3], f32[4,3], f32[2,2,3], f32[2,2]) tuple(%t, %s, %p, %r, %c, %b, %q)",
    );
    let r = eval(&text, &[f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])]).unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(vals(&t[0]), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    assert_eq!(vals(&t[1]), vec![2.0, 3.0, 5.0, 6.0]);
    // One low, interior 1: [0,1,0,2,0,3] per row; negative low padding drops the first column.
    assert_eq!(
        vals(&t[2]),
        vec![0.0, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0, 0.0, 5.0, 0.0, 6.0]
    );
    assert_eq!(vals(&t[6]), vec![2.0, 3.0, 5.0, 6.0]);
    assert_eq!(vals(&t[3]), vec![3.0, 2.0, 1.0, 6.0, 5.0, 4.0]);
    assert_eq!(
        vals(&t[4]),
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
    assert_eq!(
        vals(&t[5]),
        vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 4.0, 5.0, 6.0]
    );
}

#[test]
fn dynamic_slice_clamps_start_indices() {
    let text = module(
        "a: f32[5], i: s32[]",
        "  %a = f32[5] parameter(0)\n  %i = s32[] parameter(1)\n  %d = f32[2] dynamic-slice(%a, %i), dynamic_slice_sizes={2}\n  %u = f32[2] constant({9, 9})\n  %w = f32[5] dynamic-update-slice(%a, %u, %i)\n  ROOT %t = (f32[2], f32[5]) tuple(%d, %w)",
    );
    let r = eval(
        &text,
        &[f32s(&[5], &[0.0, 1.0, 2.0, 3.0, 4.0]), s32s(&[], &[7])],
    )
    .unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(vals(&t[0]), vec![3.0, 4.0]);
    assert_eq!(vals(&t[1]), vec![0.0, 1.0, 2.0, 9.0, 9.0]);
}

#[test]
fn reduce_and_reduce_window() {
    let text = "HloModule m\n\n%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\n\n%max (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] maximum(%x, %y)\n}\n\nENTRY %main (a: f32[2,3]) -> (f32[2], f32[3], f32[2,2]) {\n  %a = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n  %r1 = f32[2] reduce(%a, %z), dimensions={1}, to_apply=%add\n  %r0 = f32[3] reduce(%a, %z), dimensions={0}, to_apply=%add\n  %ninf = f32[] constant(-inf)\n  %w = f32[2,2] reduce-window(%a, %ninf), window={size=1x2 stride=1x1}, to_apply=%max\n  ROOT %t = (f32[2], f32[3], f32[2,2]) tuple(%r1, %r0, %w)\n}\n";
    let r = eval(text, &[f32s(&[2, 3], &[1.0, 5.0, 3.0, 4.0, 2.0, 6.0])]).unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(vals(&t[0]), vec![9.0, 12.0]);
    assert_eq!(vals(&t[1]), vec![5.0, 7.0, 9.0]);
    assert_eq!(vals(&t[2]), vec![5.0, 5.0, 4.0, 6.0]);
}

#[test]
fn dot_general_with_batch_dims() {
    let text = "HloModule m\n\nENTRY %main (a: f32[2,2,3], b: f32[2,3,1]) -> f32[2,2,1] {\n  %a = f32[2,2,3] parameter(0)\n  %b = f32[2,3,1] parameter(1)\n  ROOT %d = f32[2,2,1] dot(%a, %b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}\n";
    let a: Vec<f32> = (1..=12).map(|x| x as f32).collect();
    let r = eval(
        text,
        &[
            f32s(&[2, 2, 3], &a),
            f32s(&[2, 3, 1], &[1.0, 0.0, -1.0, 2.0, 2.0, 2.0]),
        ],
    )
    .unwrap();
    // batch 0: [1,2,3]·[1,0,-1] = -2, [4,5,6]·[1,0,-1] = -2; batch 1: 2*(7+8+9)=48, 2*(10+11+12)=66
    assert_eq!(vals(&r), vec![-2.0, -2.0, 48.0, 66.0]);
}

#[test]
fn convolution_1d_with_padding_and_stride() {
    let text = "HloModule m\n\nENTRY %main (a: f32[1,1,5], k: f32[1,1,3]) -> f32[1,1,3] {\n  %a = f32[1,1,5] parameter(0)\n  %k = f32[1,1,3] parameter(1)\n  ROOT %c = f32[1,1,3] convolution(%a, %k), window={size=3 stride=2 pad=1_1}, dim_labels=bf0_oi0->bf0\n}\n";
    let r = eval(
        text,
        &[
            f32s(&[1, 1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]),
            f32s(&[1, 1, 3], &[1.0, 10.0, 100.0]),
        ],
    )
    .unwrap();
    // padded: 0 1 2 3 4 5 0; windows at 0,2,4: (0,1,2)->0+10+200, (2,3,4)->2+30+400, (4,5,0)->4+50+0
    assert_eq!(vals(&r), vec![210.0, 432.0, 54.0]);
}

#[test]
fn gather_and_scatter_with_out_of_bounds_update_skipped() {
    let text = "HloModule m\n\n%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\n\nENTRY %main (a: f32[4], i: s32[3,1]) -> (f32[3], f32[4]) {\n  %a = f32[4] parameter(0)\n  %i = s32[3,1] parameter(1)\n  %g = f32[3] gather(%a, %i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}\n  %u = f32[3] constant({10, 20, 30})\n  %s = f32[4] scatter(%a, %i, %u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add\n  ROOT %t = (f32[3], f32[4]) tuple(%g, %s)\n}\n";
    let r = eval(
        text,
        &[f32s(&[4], &[1.0, 2.0, 3.0, 4.0]), s32s(&[3, 1], &[2, 9, 2])],
    )
    .unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(vals(&t[0]), vec![3.0, 4.0, 3.0]); // gather clamps 9 to 3
    assert_eq!(vals(&t[1]), vec![1.0, 2.0, 43.0, 4.0]); // scatter skips index 9
}

#[test]
fn stable_sort_with_comparator_on_keys() {
    let text = "HloModule m\n\n%lt (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  %c = s32[] parameter(2)\n  %d = s32[] parameter(3)\n  ROOT %l = pred[] compare(%a, %b), direction=LT\n}\n\nENTRY %main (k: f32[5], v: s32[5]) -> (f32[5], s32[5]) {\n  %k = f32[5] parameter(0)\n  %v = s32[5] parameter(1)\n  ROOT %s = (f32[5], s32[5]) sort(%k, %v), dimensions={0}, is_stable=true, to_apply=%lt\n}\n";
    let r = eval(
        text,
        &[
            f32s(&[5], &[3.0, 1.0, 3.0, 0.0, 1.0]),
            s32s(&[5], &[0, 1, 2, 3, 4]),
        ],
    )
    .unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(vals(&t[0]), vec![0.0, 1.0, 1.0, 3.0, 3.0]);
    assert_eq!(ints(&t[1]), vec![3, 1, 4, 0, 2]);
}

#[test]
fn while_loop_and_conditional() {
    let text = "HloModule m\n\n%cond (s: (s32[], f32[])) -> pred[] {\n  %s = (s32[], f32[]) parameter(0)\n  %i = s32[] get-tuple-element(%s), index=0\n  %n = s32[] constant(5)\n  ROOT %c = pred[] compare(%i, %n), direction=LT\n}\n\n%body (s: (s32[], f32[])) -> (s32[], f32[]) {\n  %s = (s32[], f32[]) parameter(0)\n  %i = s32[] get-tuple-element(%s), index=0\n  %x = f32[] get-tuple-element(%s), index=1\n  %one = s32[] constant(1)\n  %two = f32[] constant(2)\n  %i2 = s32[] add(%i, %one)\n  %x2 = f32[] multiply(%x, %two)\n  ROOT %t = (s32[], f32[]) tuple(%i2, %x2)\n}\n\n%neg (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  ROOT %n = f32[] negate(%x)\n}\n\n%id (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n\nENTRY %main (x: f32[], b: s32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %b = s32[] parameter(1)\n  %z = s32[] constant(0)\n  %init = (s32[], f32[]) tuple(%z, %x)\n  %w = (s32[], f32[]) while(%init), condition=%cond, body=%body\n  %y = f32[] get-tuple-element(%w), index=1\n  ROOT %c = f32[] conditional(%b, %y, %y), branch_computations={%neg, %id}\n}\n";
    assert_eq!(
        vals(&eval(text, &[f32s(&[], &[1.5]), s32s(&[], &[0])]).unwrap()),
        vec![-48.0]
    );
    // Out-of-range branch index runs the last branch.
    assert_eq!(
        vals(&eval(text, &[f32s(&[], &[1.5]), s32s(&[], &[7])]).unwrap()),
        vec![48.0]
    );
}

#[test]
fn runaway_while_loop_hits_the_step_budget() {
    let text = "HloModule m\n\n%cond (s: s32[]) -> pred[] {\n  %s = s32[] parameter(0)\n  ROOT %t = pred[] constant(true)\n}\n\n%body (s: s32[]) -> s32[] {\n  ROOT %s = s32[] parameter(0)\n}\n\nENTRY %main (x: s32[]) -> s32[] {\n  %x = s32[] parameter(0)\n  ROOT %w = s32[] while(%x), condition=%cond, body=%body\n}\n";
    let opts = interp::EvalOptions {
        max_steps: 10_000,
        ..Default::default()
    };
    let r = interp::evaluate_with(&parse(text), &[s32s(&[], &[0])], &opts);
    assert!(matches!(r, Err(interp::EvalError::Budget { .. })), "{r:?}");
}

/// Steps count the bytes an instruction makes: 100 trips of a body over 4,096 f32 elements are
/// about 200,000 steps, past a budget of 10,000 that 100 trips over scalars stay within (a
/// loop that never ends over large arrays used to run for minutes at one step per instruction).
#[test]
fn a_loop_over_large_arrays_meets_the_budget_by_its_size() {
    let text = |ty: &str| {
        format!(
            "HloModule m\n\n%cond (s: (s32[], {ty})) -> pred[] {{\n  %s = (s32[], {ty}) parameter(0)\n  %i = s32[] get-tuple-element(%s), index=0\n  %n = s32[] constant(100)\n  ROOT %c = pred[] compare(%i, %n), direction=LT\n}}\n\n%body (s: (s32[], {ty})) -> (s32[], {ty}) {{\n  %s = (s32[], {ty}) parameter(0)\n  %i = s32[] get-tuple-element(%s), index=0\n  %x = {ty} get-tuple-element(%s), index=1\n  %one = s32[] constant(1)\n  %i2 = s32[] add(%i, %one)\n  %x2 = {ty} add(%x, %x)\n  ROOT %t = (s32[], {ty}) tuple(%i2, %x2)\n}}\n\nENTRY %main (x: {ty}) -> {ty} {{\n  %x = {ty} parameter(0)\n  %z = s32[] constant(0)\n  %init = (s32[], {ty}) tuple(%z, %x)\n  %w = (s32[], {ty}) while(%init), condition=%cond, body=%body\n  ROOT %y = {ty} get-tuple-element(%w), index=1\n}}\n"
        )
    };
    let opts = interp::EvalOptions {
        max_steps: 10_000,
        ..Default::default()
    };
    let small = interp::evaluate_with(&parse(&text("f32[]")), &[f32s(&[], &[1.0])], &opts);
    assert!(small.is_ok(), "{small:?}");
    let big = interp::evaluate_with(
        &parse(&text("f32[4096]")),
        &[f32s(&[4096], &vec![1.0; 4096])],
        &opts,
    );
    assert!(
        matches!(big, Err(interp::EvalError::Budget { .. })),
        "{big:?}"
    );
}

#[test]
fn bitcast_follows_layouts() {
    // f32[2,3]{0,1} is stored column-major: physical order a00 a10 a01 a11 a02 a12.
    let text = "HloModule m\n\nENTRY %main (a: f32[2,3]) -> f32[6] {\n  %a = f32[2,3]{0,1} parameter(0)\n  ROOT %b = f32[6]{0} bitcast(%a)\n}\n";
    let r = eval(text, &[f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])]).unwrap();
    assert_eq!(vals(&r), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
}

#[test]
fn reduce_precision_rounds_to_nearest_even_and_flushes() {
    let text = module("a: f32[4]", "  %a = f32[4] parameter(0)\n  ROOT %r = f32[4] reduce-precision(%a), exponent_bits=5, mantissa_bits=2");
    // 1.125 is a tie between 1.0 and 1.25 -> 1.0 (even); 1.375 -> 1.5; 1e6 overflows e5 -> inf; 1e-6 underflows -> 0.
    let r = eval(&text, &[f32s(&[4], &[1.125, 1.375, 1e6, 1e-6])]).unwrap();
    assert_eq!(vals(&r), vec![1.0, 1.5, f64::INFINITY, 0.0]);
}

#[test]
fn argument_mismatch_is_an_error_not_a_panic() {
    let text = module("a: f32[4]", "  ROOT %a = f32[4] parameter(0)");
    let r = eval(&text, &[f32s(&[3], &[1.0, 2.0, 3.0])]);
    assert!(matches!(r, Err(interp::EvalError::Invalid { .. })), "{r:?}");
    let r = eval(&text, &[]);
    assert!(matches!(r, Err(interp::EvalError::Invalid { .. })), "{r:?}");
}

#[test]
fn cholesky_and_triangular_solve_ops() {
    // [[4,2],[2,5]] = L L^T with L = [[2,0],[1,2]]; the other triangle is zero.
    let text = module(
        "a: f32[2,2]",
        "  %a = f32[2,2] parameter(0)\n  %l = f32[2,2] cholesky(%a), lower=true\n  %u = f32[2,2] cholesky(%a), lower=false\n  ROOT %t = (f32[2,2], f32[2,2]) tuple(%l, %u)",
    );
    let r = eval(&text, &[f32s(&[2, 2], &[4.0, 2.0, 2.0, 5.0])]).unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(vals(&t[0]), vec![2.0, 0.0, 1.0, 2.0]);
    assert_eq!(vals(&t[1]), vec![2.0, 1.0, 0.0, 2.0]);
    // Not positive definite: NaN throughout.
    let r = eval(&text, &[f32s(&[2, 2], &[1.0, 2.0, 2.0, 1.0])]).unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert!(vals(&t[0]).iter().all(|v| v.is_nan()));
    // L x = b with L = [[2,0],[1,2]], b = [[2],[5]] -> x = [[1],[2]]; L^T x = b -> [[-0.25],[2.5]];
    // x L = b^T (right side) with b^T = [[4, 2]] -> x = [[1.5, 1]]; unit diagonal: [[2],[3]].
    let text = module(
        "a: f32[2,2], b: f32[2,1], c: f32[1,2]",
        "  %a = f32[2,2] parameter(0)\n  %b = f32[2,1] parameter(1)\n  %c = f32[1,2] parameter(2)\n  %x = f32[2,1] triangular-solve(%a, %b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE\n  %y = f32[2,1] triangular-solve(%a, %b), left_side=true, lower=true, transpose_a=TRANSPOSE\n  %z = f32[1,2] triangular-solve(%a, %c), left_side=false, lower=true, transpose_a=NO_TRANSPOSE\n  %w = f32[2,1] triangular-solve(%a, %b), left_side=true, lower=true, unit_diagonal=true, transpose_a=NO_TRANSPOSE\n  ROOT %t = (f32[2,1], f32[2,1], f32[1,2], f32[2,1]) tuple(%x, %y, %z, %w)",
    );
    let r = eval(
        &text,
        &[
            f32s(&[2, 2], &[2.0, 99.0, 1.0, 2.0]),
            f32s(&[2, 1], &[2.0, 5.0]),
            f32s(&[1, 2], &[4.0, 2.0]),
        ],
    )
    .unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(vals(&t[0]), vec![1.0, 2.0]);
    assert_eq!(vals(&t[1]), vec![-0.25, 2.5]);
    assert_eq!(vals(&t[2]), vec![1.5, 1.0]);
    assert_eq!(vals(&t[3]), vec![2.0, 3.0]);
}

#[test]
fn sort_with_jax_canonicalizing_comparator() {
    // jax's `lt_to` comparator (NaN -> +NaN, -0 -> +0, then a TOTALORDER less-than), carrying
    // s32 payloads: the oracle compiles it to a scalar program; stable, NaNs last, -0 == +0.
    let text = "HloModule m\n\n%lt (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {\n  %a = f32[] parameter(0)\n  %ne.a = pred[] compare(%a, %a), direction=NE\n  %nan = f32[] constant(nan)\n  %zero = f32[] constant(0)\n  %eq.a = pred[] compare(%a, %zero), direction=EQ\n  %s.a = f32[] select(%eq.a, %zero, %a)\n  %c.a = f32[] select(%ne.a, %nan, %s.a)\n  %b = f32[] parameter(1)\n  %ne.b = pred[] compare(%b, %b), direction=NE\n  %eq.b = pred[] compare(%b, %zero), direction=EQ\n  %s.b = f32[] select(%eq.b, %zero, %b)\n  %c.b = f32[] select(%ne.b, %nan, %s.b)\n  %c = s32[] parameter(2)\n  %d = s32[] parameter(3)\n  ROOT %lt = pred[] compare(%c.a, %c.b), direction=LT, type=TOTALORDER\n}\n\nENTRY %main (k: f32[8], v: s32[8]) -> (f32[8], s32[8]) {\n  %k = f32[8] parameter(0)\n  %v = s32[8] parameter(1)\n  ROOT %s = (f32[8], s32[8]) sort(%k, %v), dimensions={0}, is_stable=true, to_apply=%lt\n}\n";
    let r = eval(
        text,
        &[
            f32s(
                &[8],
                &[
                    f32::NAN,
                    1.0,
                    -0.0,
                    0.0,
                    f32::NEG_INFINITY,
                    -f32::NAN,
                    2.0,
                    1.0,
                ],
            ),
            s32s(&[8], &[0, 1, 2, 3, 4, 5, 6, 7]),
        ],
    )
    .unwrap();
    let Literal::Tuple(t) = r else { panic!() };
    assert_eq!(ints(&t[1]), vec![4, 2, 3, 1, 7, 6, 0, 5]);
}

#[test]
fn compiled_reducers_match_the_general_evaluator_bit_for_bit() {
    // The same variadic reducer (log-add-exp of f16/f32 values with NaN handling, plus an s32
    // argmax-style index): once as plain scalar ops (compiled to a scalar program), once routed
    // through a `call` (which the compiler refuses, so the general evaluator runs it).
    let body = |ty: &str| {
        format!(
            "  %a = {ty}[] parameter(0)\n  %i = s32[] parameter(1)\n  %b = {ty}[] parameter(2)\n  %j = s32[] parameter(3)\n  %m = {ty}[] maximum(%a, %b)\n  %da = {ty}[] subtract(%a, %m)\n  %db = {ty}[] subtract(%b, %m)\n  %ea = {ty}[] exponential(%da)\n  %eb = {ty}[] exponential(%db)\n  %s = {ty}[] add(%ea, %eb)\n  %l = {ty}[] log(%s)\n  %r = {ty}[] add(%m, %l)\n  %gt = pred[] compare(%b, %a), direction=GT\n  %k = s32[] select(%gt, %j, %i)\n  %k2 = s32[] multiply(%k, %j)\n  ROOT %t = ({ty}[], s32[]) tuple(%r, %k2)\n"
        )
    };
    for ty in ["f32", "f16", "bf16", "f64"] {
        let direct = format!(
            "%red (a: {ty}[], i: s32[], b: {ty}[], j: s32[]) -> ({ty}[], s32[]) {{\n{}}}\n",
            body(ty)
        );
        let inner = format!(
            "%inner (a: {ty}[], i: s32[], b: {ty}[], j: s32[]) -> ({ty}[], s32[]) {{\n{}}}\n",
            body(ty)
        );
        let via_call = format!(
            "{inner}\n%red (a: {ty}[], i: s32[], b: {ty}[], j: s32[]) -> ({ty}[], s32[]) {{\n  %a = {ty}[] parameter(0)\n  %i = s32[] parameter(1)\n  %b = {ty}[] parameter(2)\n  %j = s32[] parameter(3)\n  ROOT %c = ({ty}[], s32[]) call(%a, %i, %b, %j), to_apply=%inner\n}}\n"
        );
        let entry = format!(
            "ENTRY %main (x: {ty}[4,6], n: s32[4,6]) -> ({ty}[4], s32[4], {ty}[4,6], s32[4,6]) {{\n  %x = {ty}[4,6] parameter(0)\n  %n = s32[4,6] parameter(1)\n  %z = {ty}[] constant(-inf)\n  %o = s32[] constant(1)\n  %r = ({ty}[4], s32[4]) reduce(%x, %n, %z, %o), dimensions={{1}}, to_apply=%red\n  %r0 = {ty}[4] get-tuple-element(%r), index=0\n  %r1 = s32[4] get-tuple-element(%r), index=1\n  %w = ({ty}[4,6], s32[4,6]) reduce-window(%x, %n, %z, %o), window={{size=1x6 pad=0_0x5_0}}, to_apply=%red\n  %w0 = {ty}[4,6] get-tuple-element(%w), index=0\n  %w1 = s32[4,6] get-tuple-element(%w), index=1\n  ROOT %t = ({ty}[4], s32[4], {ty}[4,6], s32[4,6]) tuple(%r0, %r1, %w0, %w1)\n}}\n"
        );
        let mut rng = Rng(11);
        let xs: Vec<f64> = (0..24)
            .map(|k| {
                if k == 5 {
                    f64::NAN
                } else {
                    8.0 * rng.unit() - 4.0
                }
            })
            .collect();
        let ns: Vec<i64> = (0..24).map(|_| (rng.next() % 7) as i64 - 3).collect();
        let pty = hlo::PrimitiveType::from_name(ty).unwrap();
        let x = lit(
            pty,
            &[4, 6],
            &xs.iter().map(|&v| hlo::Scalar::F(v)).collect::<Vec<_>>(),
        );
        let args = [x, s32s(&[4, 6], &ns)];
        let a = eval(&format!("HloModule m\n\n{direct}\n{entry}"), &args).unwrap();
        let b = eval(&format!("HloModule m\n\n{via_call}\n{entry}"), &args).unwrap();
        let (la, lb) = (a.leaves(), b.leaves());
        for (k, (p, q)) in la.iter().zip(&lb).enumerate() {
            assert_eq!(
                p.data,
                q.data,
                "{ty} leaf {k}: compiled {:?} vs general {:?}",
                vals(&Literal::Array((*p).clone())),
                vals(&Literal::Array((*q).clone()))
            );
        }
    }
}

/// select-and-scatter among elements `select` ties: the evaluator's scan keeps the first of
/// equal maxima under `GE` and moves on every `false` (the last) under `LT`; the `select_ties`
/// variant keeps the first or the last tied element under either, and leaves strict
/// preferences alone.
#[test]
fn select_and_scatter_ties_follow_the_scan_or_the_variant() {
    let module = |dir: &str| {
        parse(&format!("HloModule m\n\n%sel (a: f32[], b: f32[]) -> pred[] {{\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %c = pred[] compare(%a, %b), direction={dir}\n}}\n\n%add (x: f32[], y: f32[]) -> f32[] {{\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}}\n\nENTRY %main (a: f32[5], s: f32[1]) -> f32[5] {{\n  %a = f32[5] parameter(0)\n  %s = f32[1] parameter(1)\n  %z = f32[] constant(0)\n  ROOT %r = f32[5] select-and-scatter(%a, %s, %z), window={{size=5}}, select=%sel, scatter=%add\n}}\n"))
    };
    let args = [f32s(&[5], &[1.0, 7.0, 3.0, 7.0, 2.0]), f32s(&[1], &[10.0])];
    let run = |dir: &str, ties: Option<interp::variant::SelectTies>| {
        let opts = interp::EvalOptions {
            variant: interp::variant::Variant {
                select_ties: ties,
                ..Default::default()
            },
            ..Default::default()
        };
        vals(&interp::evaluate_with(&module(dir), &args, &opts).unwrap())
    };
    use interp::variant::SelectTies::{First, Last};
    let at = |k: usize| {
        let mut v = vec![0.0; 5];
        v[k] = 10.0;
        v
    };
    assert_eq!(run("GE", None), at(1));
    assert_eq!(run("GE", Some(First)), at(1));
    assert_eq!(run("GE", Some(Last)), at(3));
    // LT selects the minimum: 1.0 is strictly preferred, ties do not arise.
    assert_eq!(run("LT", Some(Last)), at(0));
    assert_eq!(run("EQ", None), at(4));
}

/// A comparator that holds for an element and itself (here `a == b`, from a minimizer that
/// reduced a lexicographic `a > b or (a == b and c > d)`) is no strict weak order: XLA leaves
/// the order undefined, so the oracle has no result to offer and says so; the lexicographic
/// comparator it came from sorts.
#[test]
fn a_sort_comparator_that_is_no_strict_weak_order_is_unsupported() {
    let text = |root: &str| {
        format!(
            "HloModule m\n\n%c (a: f32[], b: f32[], c: f32[], d: f32[]) -> pred[] {{\n  %a = f32[] \
             parameter(0)\n  %b = f32[] parameter(1)\n  %c = f32[] parameter(2)\n  %d = f32[] \
             parameter(3)\n  %gt = pred[] compare(%a, %b), direction=GT\n  %eq = pred[] \
             compare(%a, %b), direction=EQ\n  %gt2 = pred[] compare(%c, %d), direction=GT\n  \
             %and = pred[] and(%eq, %gt2)\n  %or = pred[] or(%gt, %and)\n  ROOT %r = pred[] \
             copy({root})\n}}\n\nENTRY %main (k: f32[4], v: f32[4]) -> f32[4] {{\n  %k = f32[4] \
             parameter(0)\n  %v = f32[4] parameter(1)\n  %s = (f32[4], f32[4]) sort(%k, %v), \
             dimensions={{0}}, is_stable=true, to_apply=%c\n  ROOT %g = f32[4] \
             get-tuple-element(%s), index=1\n}}\n"
        )
    };
    let inputs = [
        f32s(&[4], &[1.0, 0.0, 0.0, 0.0]),
        f32s(&[4], &[-5.5, 3.75, 2.5, -7.75]),
    ];
    let r = eval(&text("%or"), &inputs).unwrap();
    assert_eq!(vals(&r), vec![-5.5, 3.75, 2.5, -7.75]);
    let e = eval(&text("%eq"), &inputs).unwrap_err();
    assert!(
        matches!(e, interp::EvalError::Unsupported { .. }) && e.to_string().contains("strict weak"),
        "{e}"
    );
}

/// A gather whose window is empty in a collapsed dimension (an empty operand, a non-empty
/// result) has no element to read: refused as unsupported, not a panic (it was one: an index
/// into the empty operand).
#[test]
fn a_gather_from_an_empty_window_is_refused_not_a_panic() {
    let text = "HloModule g\nENTRY e {\n  a = f32[0] parameter(0)\n  i = s32[2,1] parameter(1)\n  ROOT g = f32[2] gather(a, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={0}\n}\n";
    let r = eval(text, &[f32s(&[0], &[]), s32s(&[2, 1], &[0, 1])]);
    assert!(
        matches!(&r, Err(interp::EvalError::Unsupported { what }) if what.contains("empty window")),
        "{r:?}"
    );
}

/// `set-dimension-size` to the bound is the array itself; to a smaller size the elements past
/// it are unspecified (XLA returns what its buffer held), which the oracle does not model: it
/// refuses instead of claiming the full array.
#[test]
fn set_dimension_size_below_the_bound_is_refused() {
    let text = "HloModule s\nENTRY e {\n  a = f32[3] parameter(0)\n  n = s32[] parameter(1)\n  ROOT s = f32[<=3] set-dimension-size(a, n), dimensions={0}\n}\n";
    let a = f32s(&[3], &[1.0, 2.0, 3.0]);
    let r = eval(text, &[a.clone(), s32s(&[], &[3])]);
    assert_eq!(r.unwrap(), a);
    let r = eval(text, &[a, s32s(&[], &[1])]);
    assert!(
        matches!(&r, Err(interp::EvalError::Unsupported { what }) if what.contains("below the bound")),
        "{r:?}"
    );
}

/// A comparator that holds both ways for two different elements (`NE`) is no strict weak
/// order: the merge sort's result is not sorted under it, and the oracle refuses instead of
/// returning some permutation (XLA CPU crashed with SIGSEGV on one, campaign seed 11235813).
#[test]
fn a_not_equal_comparator_is_refused() {
    let text = "HloModule s\n\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT ne = pred[] compare(b, a), direction=NE, type=FLOAT\n}\n\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT s = f32[4] sort(x), dimensions={0}, to_apply=cmp\n}\n";
    let r = eval(text, &[f32s(&[4], &[3.0, 1.0, 2.0, 0.5])]);
    assert!(
        matches!(&r, Err(interp::EvalError::Unsupported { what }) if what.contains("still less than")),
        "{r:?}"
    );
    // The same data under LT sorts.
    let lt = text.replace("direction=NE", "direction=LT");
    assert_eq!(
        eval(&lt, &[f32s(&[4], &[3.0, 1.0, 2.0, 0.5])]).unwrap(),
        f32s(&[4], &[3.0, 2.0, 1.0, 0.5])
    );
}

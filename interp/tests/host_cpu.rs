//! What the oracle does differently by host CPU (`interp::host`): XLA CPU's results for
//! narrowing converts to f16 and for the NaN sign of f8 `maximum`/`minimum` depend on whether
//! the host has AVX512-FP16. The first tests evaluate the same modules under both host settings
//! (no XLA) and check the values measured on each kind of host (KNOWN_DIFFERENCES.md, "What
//! differs by host CPU"); the last one checks the model of a host without AVX512-FP16 against
//! XLA CPU on this machine with its code generation limited to AVX2 (`--xla_cpu_max_isa=AVX2`,
//! which turns AVX512-FP16 off); `tests/xla_edge.rs` and `tests/campaign_fixes.rs` check the
//! default (this host's) model against XLA CPU as it runs here.

mod common;
use common::*;
use hlo::{Literal, PrimitiveType, Scalar};
use interp::host::HostCpu;
use interp::variant::{Narrowing, Variant};
use interp::EvalOptions;

const FP16: HostCpu = HostCpu::AVX512FP16;
const OLD: HostCpu = HostCpu::NO_AVX512FP16;

fn run(text: &str, args: &[Literal], opts: &EvalOptions) -> Vec<Vec<i64>> {
    let out = interp::evaluate_with(&parse(text), args, opts).unwrap_or_else(|e| panic!("{e}"));
    out.leaves()
        .into_iter()
        .map(|l| ints(&Literal::Array(l.clone())))
        .collect()
}

fn on(host: HostCpu) -> EvalOptions {
    EvalOptions {
        host: Some(host),
        ..EvalOptions::default()
    }
}

fn bytes_lit(ty: PrimitiveType, bits: &[u8]) -> Literal {
    Literal::Array(
        hlo::ArrayLiteral::from_bytes(ty, vec![bits.len() as i64], bits.to_vec()).unwrap(),
    )
}

/// f64 and c128 -> f16, f64 -> bf16 and f8e5m2, integers -> f16 and bf16, as bits.
fn narrowing_case() -> (String, Vec<Literal>) {
    let t = 2f64.powi(-40);
    let f = [
        1.0 + 2f64.powi(-11) + t,
        1.0 + 3.0 * 2f64.powi(-11) - t,
        65519.99999999,
        2f64.powi(-25) + 2f64.powi(-60),
        -(1.0 + 2f64.powi(-11) + t),
        1.0 + 2f64.powi(-8) + t,
        1.0 + 2f64.powi(-3) + t,
    ];
    let ints = [(1i64 << 30) + (1 << 22) + 1, 65519, (1i64 << 40) + 1];
    let text = "HloModule m\n\nENTRY %main (a: f64[7], i: s64[3]) -> (u16[7], u16[7], u16[7], u8[7], u16[3], u16[3], u16[3]) {\n  %a = f64[7] parameter(0)\n  %i = s64[3] parameter(1)\n  %c = c128[7] convert(%a)\n  %h = f16[7] convert(%a)\n  %ch = f16[7] convert(%c)\n  %b = bf16[7] convert(%a)\n  %e = f8e5m2[7] convert(%a)\n  %ih = f16[3] convert(%i)\n  %ib = bf16[3] convert(%i)\n  %s = s32[3] convert(%i)\n  %sb = bf16[3] convert(%s)\n  %o1 = u16[7] bitcast-convert(%h)\n  %o2 = u16[7] bitcast-convert(%ch)\n  %o3 = u16[7] bitcast-convert(%b)\n  %o4 = u8[7] bitcast-convert(%e)\n  %o5 = u16[3] bitcast-convert(%ih)\n  %o6 = u16[3] bitcast-convert(%ib)\n  %o7 = u16[3] bitcast-convert(%sb)\n  ROOT %t = (u16[7], u16[7], u16[7], u8[7], u16[3], u16[3], u16[3]) tuple(%o1, %o2, %o3, %o4, %o5, %o6, %o7)\n}\n";
    let i: Vec<Scalar> = ints.iter().map(|&x| Scalar::S(x)).collect();
    (
        text.to_string(),
        vec![f64s(&[7], &f), lit(PrimitiveType::S64, &[3], &i)],
    )
}

/// f64 -> f16 rounds once with AVX512-FP16 and through f32 without; everything else in the
/// module is the same on both hosts.
#[test]
fn narrowing_to_f16_follows_the_host() {
    let (text, args) = narrowing_case();
    // 1 + 2^-11 + 2^-40: 1.0009765625 once, 1.0 through f32 (a tie there, to even);
    // 1 + 3 * 2^-11 - 2^-40: 1.0009765625 once, 1.001953125 through f32; 65519.99999999: 65504
    // once, inf through f32 (65520, the tie to inf); 2^-25 + 2^-60: the smallest subnormal
    // once, 0 through f32; the others are the same either way.
    let f16_once = vec![0x3c01, 0x3c01, 0x7bff, 0x0001, 0xbc01, 0x3c04, 0x3c80];
    let f16_twice = vec![0x3c00, 0x3c02, 0x7c00, 0x0000, 0xbc00, 0x3c04, 0x3c80];
    // bf16 through f32 on both: 1 + 2^-8 + 2^-40 is 1.0; f8e5m2 once on both: 1 + 2^-3 + 2^-40
    // is 1.25 (0x3d), 65519.99999999 inf; 2^30 + 2^22 + 1 is 2^30 in bf16 from s64 and s32
    // alike; integers narrow to f16 alike (f32 holds every integer below f16's overflow).
    let bf16 = vec![0x3f80, 0x3f80, 0x4780, 0x3300, 0xbf80, 0x3f80, 0x3f90];
    let f8 = vec![0x3c, 0x3c, 0x7c, 0x00, 0xbc, 0x3c, 0x3d];
    let int_f16 = vec![0x7c00, 0x7bff, 0x7c00];
    let int_bf16 = vec![0x4e80, 0x4780, 0x5380];
    let s32_bf16 = vec![0x4e80, 0x4780, 0x3f80];
    for (host, f16) in [(FP16, &f16_once), (OLD, &f16_twice)] {
        let got = run(&text, &args, &on(host));
        let want = vec![
            f16.clone(),
            f16.clone(),
            bf16.clone(),
            f8.clone(),
            int_f16.clone(),
            int_bf16.clone(),
            s32_bf16.clone(),
        ];
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            let hex = |v: &[i64]| v.iter().map(|x| format!("{x:#x}")).collect::<Vec<_>>();
            assert_eq!(hex(g), hex(w), "{host:?}, leaf {k}");
        }
    }
}

/// `Variant::narrowing` overrides the host's choice both ways.
#[test]
fn narrowing_variant_overrides_the_host() {
    let (text, args) = narrowing_case();
    let with = |host, narrowing| EvalOptions {
        host: Some(host),
        variant: Variant {
            narrowing: Some(narrowing),
            ..Variant::default()
        },
        ..EvalOptions::default()
    };
    let fp16 = run(&text, &args, &on(FP16));
    let old = run(&text, &args, &on(OLD));
    assert_ne!(fp16, old);
    assert_eq!(run(&text, &args, &with(OLD, Narrowing::Direct)), fp16);
    assert_eq!(run(&text, &args, &with(FP16, Narrowing::ViaF32)), old);
}

/// `maximum`/`minimum` of f8e4m3fn, f8e4m3 and f8e3m4 with a NaN operand: the type's quiet NaN,
/// positive without AVX512-FP16; with it, the first operand's sign when that is NaN, else
/// negative for `maximum` only when both operands are negative and for `minimum` when either
/// is.
#[test]
fn f8_min_max_nan_signs_follow_the_host() {
    for (ty, qnan, pos_nan, neg_nan) in [
        ("f8e4m3fn", 0x7fi64, 0x7fu8, 0xffu8),
        ("f8e4m3", 0x7c, 0x7e, 0xfe),
        ("f8e3m4", 0x78, 0x7e, 0xfe),
    ] {
        let pt = PrimitiveType::from_name(ty).unwrap();
        // (a, b): +0 with -NaN, -0 with -NaN, -NaN with +0, -NaN with -0, +2 with +NaN,
        // +NaN with -2... (0xb8 is negative and finite in all three types), -0 with +NaN.
        let a = [0x00, 0x80, neg_nan, neg_nan, 0x40, pos_nan, 0x80];
        let b = [neg_nan, neg_nan, 0x00, 0x80, pos_nan, 0xb8, pos_nan];
        let text = format!("HloModule m\n\nENTRY %main (a: {ty}[7], b: {ty}[7]) -> (u8[7], u8[7]) {{\n  %a = {ty}[7] parameter(0)\n  %b = {ty}[7] parameter(1)\n  %mx = {ty}[7] maximum(%a, %b)\n  %mn = {ty}[7] minimum(%a, %b)\n  %u = u8[7] bitcast-convert(%mx)\n  %v = u8[7] bitcast-convert(%mn)\n  ROOT %t = (u8[7], u8[7]) tuple(%u, %v)\n}}\n");
        let args = [bytes_lit(pt, &a), bytes_lit(pt, &b)];
        let (p, n) = (qnan, qnan | 0x80);
        assert_eq!(
            run(&text, &args, &on(FP16)),
            vec![vec![p, n, n, n, p, p, p], vec![n, n, n, n, p, p, n]],
            "{ty} with AVX512-FP16"
        );
        assert_eq!(
            run(&text, &args, &on(OLD)),
            vec![vec![p; 7], vec![p; 7]],
            "{ty} without AVX512-FP16"
        );
    }
}

/// The model of a host without AVX512-FP16 against XLA CPU compiling for AVX2 at most: the
/// modules above, and the f8 `maximum`/`minimum` of every pair of a few values of each sign.
#[cfg(target_arch = "x86_64")]
#[test]
fn old_host_model_agrees_with_xla_cpu_limited_to_avx2() {
    let mut jobs = vec![narrowing_case()];
    for ty in ["f8e4m3fn", "f8e4m3", "f8e3m4", "f8e5m2"] {
        let pt = PrimitiveType::from_name(ty).unwrap();
        let pool = [0x00u8, 0x40, 0x7e, 0x7f, 0x80, 0xb8, 0xfe, 0xff];
        let a: Vec<u8> = pool.iter().flat_map(|&x| pool.map(|_| x)).collect();
        let b: Vec<u8> = pool.iter().flat_map(|_| pool).collect();
        let n = a.len();
        let text = format!("HloModule m\n\nENTRY %main (a: {ty}[{n}], b: {ty}[{n}]) -> (u8[{n}], u8[{n}]) {{\n  %a = {ty}[{n}] parameter(0)\n  %b = {ty}[{n}] parameter(1)\n  %mx = {ty}[{n}] maximum(%a, %b)\n  %mn = {ty}[{n}] minimum(%a, %b)\n  %u = u8[{n}] bitcast-convert(%mx)\n  %v = u8[{n}] bitcast-convert(%mn)\n  ROOT %t = (u8[{n}], u8[{n}]) tuple(%u, %v)\n}}\n");
        jobs.push((text, vec![bytes_lit(pt, &a), bytes_lit(pt, &b)]));
    }
    let ours: Vec<Vec<Vec<i64>>> = jobs.iter().map(|(t, a)| run(t, a, &on(OLD))).collect();
    if skip_xla() {
        return;
    }
    // This test binary's only XLA run: the flag reaches the Python process it starts.
    let flags = std::env::var("XLA_FLAGS").unwrap_or_default();
    std::env::set_var("XLA_FLAGS", format!("{flags} --xla_cpu_max_isa=AVX2"));
    let xla = run_xla(&jobs);
    for (k, (o, x)) in ours.iter().zip(&xla).enumerate() {
        let x: Vec<Vec<i64>> = x
            .as_ref()
            .unwrap_or_else(|e| panic!("job {k}: XLA failed: {e}"))
            .iter()
            .map(|l| ints(&Literal::Array(l.clone())))
            .collect();
        assert_eq!(o, &x, "job {k}");
    }
}

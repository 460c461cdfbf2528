//! The LAPACK custom-calls XLA CPU runs for jax's linalg ops (`lapack_{s,d}potrf_ffi`,
//! `..trsm_ffi`, `..getrf_ffi`, `..geqrf_ffi`, `..orgqr_ffi`, `..syevd_ffi`), written the way jax
//! emits them (column-major operand layouts, typed-FFI `backend_config` characters), over every
//! `uplo`/`side`/`trans_x`/`diag`/`mode` value, f32 and f64, with and without a batch dimension:
//! the oracle must agree with XLA CPU on the same inputs within 1e-5 absolute + 1e-4 relative
//! (f32; 1e-12/1e-10 for f64), integer outputs (`info`, pivots) exactly. Eigenvectors are compared
//! up to the sign of each column (LAPACK's signs are implementation-defined), and the oracle's
//! own convention (largest-magnitude component positive) is checked. Also: the jax corpus module
//! `jit_eigh_sym` (whose eigenvector output is sign-dependent) agrees up to sign.

mod common;
use common::*;
use hlo::{ArrayLiteral, Literal, PrimitiveType};

/// `f32[2,4,4]{1,2,0}`: the shape with the matrix dims column-major, as jax's layout constraints.
fn cm(ty: &str, dims: &[usize]) -> String {
    let r = dims.len();
    let mut m2m = vec![r.saturating_sub(2), r.saturating_sub(1)];
    m2m.truncate(r.min(2));
    if r == 1 {
        m2m = vec![0];
    }
    m2m.extend((0..r.saturating_sub(2)).rev());
    format!(
        "{ty}[{}]{{{}}}",
        dims.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(","),
        m2m.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// The shape with the default (row-major) layout, as jax gives the vector outputs (tau, w).
fn rm(ty: &str, dims: &[usize]) -> String {
    let m2m: Vec<String> = (0..dims.len()).rev().map(|d| d.to_string()).collect();
    format!("{}{{{}}}", dims_str(ty, dims), m2m.join(","))
}

fn dims_str(ty: &str, dims: &[usize]) -> String {
    format!(
        "{ty}[{}]",
        dims.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

fn call(target: &str, operands: &[(&str, String)], nb: usize, cfg: &str) -> String {
    let ops: Vec<&str> = operands.iter().map(|(n, _)| *n).collect();
    let cons: Vec<&str> = operands.iter().map(|(_, s)| s.as_str()).collect();
    format!(
        "custom-call({}), custom_call_target=\"{target}\", operand_layout_constraints={{{}}}, \
         api_version=API_VERSION_TYPED_FFI, frontend_attributes={{num_batch_dims=\"{nb}\"}}, \
         backend_config={{{cfg}}}\n",
        ops.join(", "),
        cons.join(", ")
    )
}

/// Random matrix values in [-1, 1); `spd` makes each matrix B B^T + n I; `dominant` adds 4 to the
/// diagonal (well-conditioned triangular solves).
fn matrices(
    rng: &mut Rng,
    batch: usize,
    r: usize,
    c: usize,
    spd: bool,
    dominant: bool,
) -> Vec<f64> {
    let mut out = Vec::new();
    for _ in 0..batch {
        let b: Vec<f64> = (0..r * c).map(|_| 2.0 * rng.unit() - 1.0).collect();
        if spd {
            for i in 0..r {
                for j in 0..r {
                    let s: f64 = (0..c).map(|k| b[i * c + k] * b[j * c + k]).sum();
                    out.push(s + if i == j { r as f64 } else { 0.0 });
                }
            }
        } else {
            out.extend(b.iter().enumerate().map(|(k, v)| {
                if dominant && k / c == k % c {
                    v + 4.0
                } else {
                    *v
                }
            }));
        }
    }
    out
}

fn literal(ty: &str, dims: &[usize], v: &[f64]) -> Literal {
    let d: Vec<i64> = dims.iter().map(|&x| x as i64).collect();
    match ty {
        "f32" => f32s(&d, &v.iter().map(|&x| x as f32).collect::<Vec<_>>()),
        _ => f64s(&d, v),
    }
}

struct Job {
    label: String,
    text: String,
    args: Vec<Literal>,
    /// Result leaves holding eigenvectors (compared up to column sign).
    eigvec_leaf: Option<usize>,
    ty: &'static str,
}

fn module(params: &[(String, String)], body: &str, root_shape: &str) -> String {
    let sig: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(k, (_, s))| format!("p{k}: {s}"))
        .collect();
    let mut t = format!(
        "HloModule m\n\nENTRY %main ({}) -> {root_shape} {{\n",
        sig.join(", ")
    );
    for (k, (_, s)) in params.iter().enumerate() {
        t += &format!("  %p{k} = {s} parameter({k})\n");
    }
    t + body + "}\n"
}

fn jobs() -> Vec<Job> {
    let mut rng = Rng(7);
    let mut jobs = Vec::new();
    for ty in ["f32", "f64"] {
        let p = &ty[1..2];
        let pre = if ty == "f32" { "s" } else { "d" };
        let _ = p;
        for (batch, n) in [(None, 5usize), (Some(2usize), 4)] {
            let nb = batch.is_some() as usize;
            let bdims =
                |r: usize, c: usize| -> Vec<usize> { batch.into_iter().chain([r, c]).collect() };
            let bcount = batch.unwrap_or(1);
            let info_dims: Vec<usize> = batch.into_iter().collect();
            // potrf: both triangles.
            for uplo in ["L", "U"] {
                let d = bdims(n, n);
                let a = matrices(&mut rng, bcount, n, n, true, false);
                let out = format!("({}, {})", cm(ty, &d), dims_str("s32", &info_dims));
                let body = format!(
                    "  ROOT %r = {out} {}",
                    call(
                        &format!("lapack_{pre}potrf_ffi"),
                        &[("%p0", cm(ty, &d))],
                        nb,
                        &format!("uplo = {} : ui8", uplo.as_bytes()[0])
                    )
                );
                jobs.push(Job {
                    label: format!("{pre}potrf uplo={uplo} {d:?}"),
                    text: module(&[("a".into(), dims_str(ty, &d))], &body, &out),
                    args: vec![literal(ty, &d, &a)],
                    eigvec_leaf: None,
                    ty,
                });
            }
            // trsm: every side/uplo/trans/diag for unbatched f32, four mixed ones otherwise.
            let full = ty == "f32" && batch.is_none();
            for side in ["L", "R"] {
                for uplo in ["L", "U"] {
                    for trans in ["N", "T"] {
                        for diag in ["N", "U"] {
                            let mixed =
                                (side == "L") == (uplo == "L") && (trans == "N") == (diag == "N");
                            if !full && !mixed {
                                continue;
                            }
                            let (m, k) = (n, 3usize);
                            let bd = if side == "L" {
                                bdims(m, k)
                            } else {
                                bdims(k, m)
                            };
                            let ad = bdims(m, m);
                            let a = matrices(&mut rng, bcount, m, m, false, true);
                            let b = matrices(&mut rng, bcount, bd[nb], bd[nb + 1], false, false);
                            let cfg = format!(
                                "diag = {} : ui8, side = {} : ui8, trans_x = {} : ui8, uplo = {} : ui8",
                                diag.as_bytes()[0], side.as_bytes()[0], trans.as_bytes()[0], uplo.as_bytes()[0]
                            );
                            let out = cm(ty, &bd);
                            let body = format!(
                                "  ROOT %r = {out} {}",
                                call(
                                    &format!("lapack_{pre}trsm_ffi"),
                                    &[("%p0", cm(ty, &ad)), ("%p1", cm(ty, &bd))],
                                    nb,
                                    &cfg
                                )
                            );
                            jobs.push(Job {
                                label: format!("{pre}trsm side={side} uplo={uplo} trans={trans} diag={diag} {bd:?}"),
                                text: module(&[("a".into(), dims_str(ty, &ad)), ("b".into(), dims_str(ty, &bd))], &body, &out),
                                args: vec![literal(ty, &ad, &a), literal(ty, &bd, &b)],
                                eigvec_leaf: None,
                                ty,
                            });
                        }
                    }
                }
            }
            // getrf: square, wide and tall.
            for (r, c) in [(n, n), (n, n + 2), (n + 2, n)] {
                let d = bdims(r, c);
                let a = matrices(&mut rng, bcount, r, c, false, false);
                let mut pd = info_dims.clone();
                pd.push(r.min(c));
                let out = format!(
                    "({}, {}, {})",
                    cm(ty, &d),
                    dims_str("s32", &pd),
                    dims_str("s32", &info_dims)
                );
                let body = format!(
                    "  ROOT %r = {out} {}",
                    call(
                        &format!("lapack_{pre}getrf_ffi"),
                        &[("%p0", cm(ty, &d))],
                        nb,
                        ""
                    )
                );
                jobs.push(Job {
                    label: format!("{pre}getrf {d:?}"),
                    text: module(&[("a".into(), dims_str(ty, &d))], &body, &out),
                    args: vec![literal(ty, &d, &a)],
                    eigvec_leaf: None,
                    ty,
                });
            }
            // geqrf then orgqr (tall and square).
            for (r, c) in [(n + 2, n), (n, n)] {
                let d = bdims(r, c);
                let mut td = info_dims.clone();
                td.push(c);
                let a = matrices(&mut rng, bcount, r, c, false, false);
                let qr = format!("({}, {})", cm(ty, &d), rm(ty, &td));
                let out = format!("({}, {}, {})", cm(ty, &d), rm(ty, &td), cm(ty, &d));
                let body = format!(
                    "  %qr = {qr} {}\n  %a = {} get-tuple-element(%qr), index=0\n  %t = {} get-tuple-element(%qr), index=1\n  %q = {} {}\n  ROOT %r = {out} tuple(%a, %t, %q)\n",
                    call(&format!("lapack_{pre}geqrf_ffi"), &[("%p0", cm(ty, &d))], nb, ""),
                    cm(ty, &d), rm(ty, &td), cm(ty, &d),
                    call(&format!("lapack_{pre}orgqr_ffi"), &[("%a", cm(ty, &d)), ("%t", rm(ty, &td))], nb, ""),
                );
                jobs.push(Job {
                    label: format!("{pre}geqrf+{pre}orgqr {d:?}"),
                    text: module(&[("a".into(), dims_str(ty, &d))], &body, &out),
                    args: vec![literal(ty, &d, &a)],
                    eigvec_leaf: None,
                    ty,
                });
            }
            // syevd: vectors with both triangles; values only.
            for (mode, uplo) in [("V", "L"), ("V", "U"), ("N", "L")] {
                let d = bdims(n, n);
                let mut wd = info_dims.clone();
                wd.push(n);
                let a = matrices(&mut rng, bcount, n, n, false, false);
                let inner = format!(
                    "({}, {}, {})",
                    cm(ty, &d),
                    rm(ty, &wd),
                    dims_str("s32", &info_dims)
                );
                let cfg = format!(
                    "mode = {} : ui8, uplo = {} : ui8",
                    mode.as_bytes()[0],
                    uplo.as_bytes()[0]
                );
                let (out, body, leaf) = if mode == "V" {
                    (
                        inner.clone(),
                        format!(
                            "  ROOT %r = {inner} {}",
                            call(
                                &format!("lapack_{pre}syevd_ffi"),
                                &[("%p0", cm(ty, &d))],
                                nb,
                                &cfg
                            )
                        ),
                        Some(0),
                    )
                } else {
                    let out = format!("({}, {})", rm(ty, &wd), dims_str("s32", &info_dims));
                    (out.clone(), format!(
                        "  %e = {inner} {}\n  %w = {} get-tuple-element(%e), index=1\n  %i = {} get-tuple-element(%e), index=2\n  ROOT %r = {out} tuple(%w, %i)\n",
                        call(&format!("lapack_{pre}syevd_ffi"), &[("%p0", cm(ty, &d))], nb, &cfg),
                        rm(ty, &wd), dims_str("s32", &info_dims)
                    ), None)
                };
                jobs.push(Job {
                    label: format!("{pre}syevd mode={mode} uplo={uplo} {d:?}"),
                    text: module(&[("a".into(), dims_str(ty, &d))], &body, &out),
                    args: vec![literal(ty, &d, &a)],
                    eigvec_leaf: leaf,
                    ty,
                });
            }
        }
    }
    jobs
}

/// Flips the sign of each eigenvector (column of the trailing n x n matrices) of `ours` to match
/// `xla` where that makes them closer.
fn align_signs(ours: &ArrayLiteral, xla: &ArrayLiteral) -> ArrayLiteral {
    let o = vals(&Literal::Array(ours.clone()));
    let x = vals(&Literal::Array(xla.clone()));
    let n = *ours.dims.last().unwrap() as usize;
    let mut out = o.clone();
    for b in 0..o.len() / (n * n) {
        for c in 0..n {
            let idx: Vec<usize> = (0..n).map(|r| b * n * n + r * n + c).collect();
            let same: f64 = idx.iter().map(|&k| (o[k] - x[k]).abs()).sum();
            let flip: f64 = idx.iter().map(|&k| (o[k] + x[k]).abs()).sum();
            if flip < same {
                for &k in &idx {
                    out[k] = -o[k];
                }
            }
        }
    }
    let dims: Vec<usize> = ours.dims.iter().map(|&d| d as usize).collect();
    match literal(
        if ours.ty == PrimitiveType::F32 {
            "f32"
        } else {
            "f64"
        },
        &dims,
        &out,
    ) {
        Literal::Array(a) => a,
        _ => unreachable!(),
    }
}

fn check_largest_positive(v: &ArrayLiteral) -> Result<(), String> {
    let x = vals(&Literal::Array(v.clone()));
    let n = *v.dims.last().unwrap() as usize;
    for b in 0..x.len() / (n * n) {
        for c in 0..n {
            let col: Vec<f64> = (0..n).map(|r| x[b * n * n + r * n + c]).collect();
            let big = col
                .iter()
                .cloned()
                .fold(0.0f64, |m, y| if y.abs() > m.abs() { y } else { m });
            if big < 0.0 {
                return Err(format!(
                    "eigenvector {c} of matrix {b} has a negative largest component"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn lapack_custom_calls_agree_with_xla_cpu() {
    let jobs = jobs();
    let mut failures = Vec::new();
    let ours: Vec<_> = jobs
        .iter()
        .map(|j| match eval(&j.text, &j.args) {
            Ok(v) => Some(v.leaves().into_iter().cloned().collect::<Vec<_>>()),
            Err(e) => {
                failures.push(format!("{}: oracle error: {e}", j.label));
                None
            }
        })
        .collect();
    for (j, o) in jobs.iter().zip(&ours) {
        if let (Some(o), Some(k)) = (o, j.eigvec_leaf) {
            if let Err(e) = check_largest_positive(&o[k]) {
                failures.push(format!("{}: {e}", j.label));
            }
        }
    }
    if !skip_xla() {
        let xla = run_xla(
            &jobs
                .iter()
                .map(|j| (j.text.clone(), j.args.clone()))
                .collect::<Vec<_>>(),
        );
        for ((j, o), x) in jobs.iter().zip(&ours).zip(&xla) {
            let (Some(o), Ok(x)) = (o, x) else {
                if let Err(e) = x {
                    failures.push(format!("{}: XLA error: {e}", j.label));
                }
                continue;
            };
            if o.len() != x.len() {
                failures.push(format!(
                    "{}: {} leaves vs XLA {}",
                    j.label,
                    o.len(),
                    x.len()
                ));
                continue;
            }
            let (atol, rtol) = if j.ty == "f32" {
                (1e-5, 1e-4)
            } else {
                (1e-12, 1e-10)
            };
            for (k, (a, b)) in o.iter().zip(x).enumerate() {
                let a = if Some(k) == j.eigvec_leaf {
                    align_signs(a, b)
                } else {
                    a.clone()
                };
                if let Err(e) = compare(&a, b, atol, rtol) {
                    failures.push(format!("{} leaf {k}: {e}", j.label));
                }
            }
        }
    }
    eprintln!(
        "{} LAPACK custom-call modules, {} failures",
        jobs.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_eigh_sym_agrees_up_to_eigenvector_sign() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpora/jax/dump/module_0127.jit_eigh_sym.before_optimizations.txt"
    );
    let Ok(text) = std::fs::read_to_string(p) else {
        eprintln!("no corpus module {p}: nothing to check");
        return;
    };
    let args = fake_args(&parse(&text).entry_computation().parameter_shapes(), 42);
    let ours: Vec<_> = eval(&text, &args)
        .unwrap()
        .leaves()
        .into_iter()
        .cloned()
        .collect();
    if skip_xla() {
        return;
    }
    let xla = run_xla(&[(text.clone(), args.clone())]).remove(0).unwrap();
    assert_eq!(ours.len(), 2);
    compare(&ours[0], &xla[0], 1e-5, 1e-4).expect("eigenvalues");
    compare(&align_signs(&ours[1], &xla[1]), &xla[1], 1e-5, 1e-4).expect("eigenvectors up to sign");
}

//! Shared test support: parsing, literals, seeded inputs, and running modules on XLA CPU through
//! `tests/xla_run.py` with the project's venv.
#![allow(dead_code)]

use hlo::{ArrayLiteral, Literal, PrimitiveType, Scalar, Shape};
use std::path::{Path, PathBuf};

pub fn parse(text: &str) -> hlo::Module {
    hlo::parse::parse_module(text).unwrap_or_else(|e| panic!("parse error: {e}\n{text}"))
}

pub fn eval(text: &str, args: &[Literal]) -> Result<Literal, interp::EvalError> {
    interp::evaluate(&parse(text), args)
}

/// [`eval`] under an implementation-choice variant.
#[allow(dead_code)]
pub fn eval_with_variant(
    text: &str,
    args: &[Literal],
    variant: &interp::variant::Variant,
) -> Result<Literal, interp::EvalError> {
    interp::evaluate_with(
        &parse(text),
        args,
        &interp::EvalOptions {
            variant: variant.clone(),
            ..interp::EvalOptions::default()
        },
    )
}

pub fn lit(ty: PrimitiveType, dims: &[i64], vals: &[Scalar]) -> Literal {
    Literal::Array(ArrayLiteral::from_scalars(ty, dims.to_vec(), vals).unwrap())
}
pub fn f32s(dims: &[i64], v: &[f32]) -> Literal {
    lit(
        PrimitiveType::F32,
        dims,
        &v.iter().map(|&x| Scalar::F(x as f64)).collect::<Vec<_>>(),
    )
}
pub fn f64s(dims: &[i64], v: &[f64]) -> Literal {
    lit(
        PrimitiveType::F64,
        dims,
        &v.iter().map(|&x| Scalar::F(x)).collect::<Vec<_>>(),
    )
}
pub fn s32s(dims: &[i64], v: &[i64]) -> Literal {
    lit(
        PrimitiveType::S32,
        dims,
        &v.iter().map(|&x| Scalar::S(x)).collect::<Vec<_>>(),
    )
}
pub fn u32s(dims: &[i64], v: &[u64]) -> Literal {
    lit(
        PrimitiveType::U32,
        dims,
        &v.iter().map(|&x| Scalar::U(x)).collect::<Vec<_>>(),
    )
}

/// Elements of an array literal as f64 (complex: real part).
pub fn vals(l: &Literal) -> Vec<f64> {
    let a = l.as_array().expect("array literal");
    (0..a.len()).map(|i| a.get(i).to_f64()).collect()
}

pub fn ints(l: &Literal) -> Vec<i64> {
    let a = l.as_array().expect("array literal");
    (0..a.len())
        .map(|i| match a.get(i) {
            Scalar::S(v) => v,
            Scalar::U(v) => v as i64,
            Scalar::Pred(b) => b as i64,
            s => panic!("not an integer: {s:?}"),
        })
        .collect()
}

/// splitmix64: a tiny deterministic generator for seeded inputs.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Inputs like XLA's MakeFakeArguments: floats uniform in [-0.1, 0.2); signed integers small and
/// non-negative (so that they are in range as indices); unsigned integers over their whole range
/// (RNG keys); pred random.
pub fn fake_args(shapes: &[Shape], seed: u64) -> Vec<Literal> {
    let mut rng = Rng(seed);
    fn one(s: &Shape, rng: &mut Rng) -> Literal {
        match s {
            Shape::Array(a) => {
                let n = a.element_count().unwrap() as usize;
                let v: Vec<Scalar> = (0..n)
                    .map(|_| match a.ty {
                        PrimitiveType::Pred => Scalar::Pred(rng.next() & 1 == 1),
                        t if t.is_float() => Scalar::F(-0.1 + 0.3 * rng.unit()),
                        t if t.is_complex() => {
                            Scalar::C(-0.1 + 0.3 * rng.unit(), -0.1 + 0.3 * rng.unit())
                        }
                        t if t.is_signed_integer() => Scalar::S((rng.next() % 3) as i64),
                        _ => Scalar::U(rng.next()),
                    })
                    .collect();
                Literal::Array(ArrayLiteral::from_scalars(a.ty, a.dims.clone(), &v).unwrap())
            }
            Shape::Tuple(t) => Literal::Tuple(t.iter().map(|s| one(s, rng)).collect()),
            Shape::Token => Literal::Token,
            Shape::Opaque | Shape::Buffer(_) => panic!("opaque or buffer parameter"),
        }
    }
    shapes.iter().map(|s| one(s, &mut rng)).collect()
}

/// The project's Python (the policy is `test_support`'s).
pub fn python() -> PathBuf {
    test_support::python()
}

/// True when XLA comparisons must be skipped (`HLO_DIFF_SKIP_XLA=1`); otherwise a missing
/// Python is a test failure (`test_support::need_xla`).
pub fn skip_xla() -> bool {
    !test_support::need_xla()
}

/// XLA CPU's results of `jobs` (HLO text, inputs; job `k` named `what[k]`) against the
/// oracle's `ours`, leaf by leaf with `same(k, ours, XLA's)`: panics when XLA fails on a job or
/// gives another number of leaves, and lists every leaf `same` refuses.
pub fn assert_leaves_agree_with_xla(
    what: &[String],
    jobs: &[(String, Vec<Literal>)],
    ours: &[Literal],
    same: impl Fn(usize, &ArrayLiteral, &ArrayLiteral) -> Result<(), String>,
) {
    let xla = run_xla(jobs);
    let mut failures = Vec::new();
    for (k, (o, x)) in ours.iter().zip(&xla).enumerate() {
        let what = &what[k];
        let x = x
            .as_ref()
            .unwrap_or_else(|e| panic!("{what}: XLA failed: {e}"));
        let leaves = o.leaves();
        assert_eq!(leaves.len(), x.len(), "{what}: leaf count");
        for (j, (a, b)) in leaves.iter().zip(x).enumerate() {
            if let Err(e) = same(k, a, b) {
                failures.push(format!("{what}, leaf {j}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs each (HLO text, inputs) on XLA CPU in one Python process. Per job: the flattened result
/// leaves, or XLA's error text.
pub fn run_xla(jobs: &[(String, Vec<Literal>)]) -> Vec<Result<Vec<ArrayLiteral>, String>> {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = Vec::new();
    for (k, (text, inputs)) in jobs.iter().enumerate() {
        let jd = dir.path().join(format!("job{k}"));
        std::fs::create_dir_all(&jd).unwrap();
        let hp = jd.join("module.hlo");
        std::fs::write(&hp, text).unwrap();
        let mut ins = Vec::new();
        let leaves: Vec<&ArrayLiteral> = inputs.iter().flat_map(|l| l.leaves()).collect();
        for (j, a) in leaves.iter().enumerate() {
            let p = jd.join(format!("in{j}.bin"));
            std::fs::write(&p, &a.data).unwrap();
            ins.push(serde_json::json!({"ty": a.ty.name(), "dims": a.dims, "path": p}));
        }
        spec.push(serde_json::json!({"hlo": hp, "inputs": ins, "out": jd.join("out")}));
    }
    let sp = dir.path().join("jobs.json");
    std::fs::write(&sp, serde_json::to_vec(&spec).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_run.py");
    // A job that kills the process (XLA aborts on some inputs) is reported as an error; the
    // remaining jobs run in a fresh process.
    let mut crashed = std::collections::HashMap::new();
    let mut start = 0;
    while start < jobs.len() {
        let out = std::process::Command::new(python())
            .arg(&script)
            .arg(&sp)
            .arg(start.to_string())
            .output()
            .expect("run python");
        if out.status.success() {
            break;
        }
        let dead = (start..jobs.len())
            .find(|k| !dir.path().join(format!("job{k}/out/meta.json")).exists())
            .unwrap_or(jobs.len());
        assert!(
            dead < jobs.len(),
            "xla_run.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tail: String = String::from_utf8_lossy(&out.stderr)
            .chars()
            .rev()
            .take(400)
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        crashed.insert(dead, format!("XLA process died ({}): {tail}", out.status));
        start = dead + 1;
    }
    (0..jobs.len())
        .map(|k| {
            if let Some(e) = crashed.get(&k) {
                return Err(e.clone());
            }
            let od = dir.path().join(format!("job{k}/out"));
            let meta: serde_json::Value = serde_json::from_slice(
                &std::fs::read(od.join("meta.json")).map_err(|e| e.to_string())?,
            )
            .unwrap();
            if meta["ok"] != true {
                return Err(meta["error"].as_str().unwrap_or("?").to_string());
            }
            Ok(meta["outputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    let ty =
                        PrimitiveType::from_name(o["ty"].as_str().unwrap()).expect("known type");
                    let dims: Vec<i64> = o["dims"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|d| d.as_i64().unwrap())
                        .collect();
                    let data = std::fs::read(od.join(o["file"].as_str().unwrap())).unwrap();
                    ArrayLiteral::from_bytes(ty, dims, data).unwrap()
                })
                .collect())
        })
        .collect()
}

/// Compares two leaves: integers and pred exactly, floats within |a-b| <= atol + rtol*|b| (NaN
/// equals NaN). Returns a description of the first mismatch and the worst error.
pub fn compare(
    ours: &ArrayLiteral,
    xla: &ArrayLiteral,
    atol: f64,
    rtol: f64,
) -> Result<f64, String> {
    if ours.ty != xla.ty || ours.dims != xla.dims {
        return Err(format!(
            "shape {}{:?} vs XLA {}{:?}",
            ours.ty, ours.dims, xla.ty, xla.dims
        ));
    }
    let mut worst = 0.0f64;
    for i in 0..ours.len() {
        let (a, b) = (ours.get(i), xla.get(i));
        let parts: Vec<(f64, f64)> = match (a, b) {
            (Scalar::C(ar, ai), Scalar::C(br, bi)) => vec![(ar, br), (ai, bi)],
            (Scalar::F(x), Scalar::F(y)) => vec![(x, y)],
            (x, y) => {
                if x != y {
                    return Err(format!("element {i}: {x:?} vs XLA {y:?}"));
                }
                continue;
            }
        };
        for (x, y) in parts {
            if x.is_nan() && y.is_nan() || x == y {
                continue;
            }
            let err = (x - y).abs();
            let tol = atol + rtol * y.abs();
            if !(err <= tol) {
                return Err(format!(
                    "element {i}: {x} vs XLA {y} (|diff| {err:e} > {tol:e})"
                ));
            }
            worst = worst.max(err / tol);
        }
    }
    Ok(worst)
}

/// [`compare`], except that two complex elements that both have an infinite or NaN part are
/// equal (C leaves such results implementation-defined; the campaign comparator's rule).
pub fn compare_nonfinite_complex_equal(
    ours: &ArrayLiteral,
    xla: &ArrayLiteral,
    atol: f64,
    rtol: f64,
) -> Result<f64, String> {
    let nonfinite = |v: Scalar| matches!(v, Scalar::C(r, i) if !r.is_finite() || !i.is_finite());
    let mut x = xla.clone();
    if ours.ty == xla.ty && ours.dims == xla.dims {
        for i in 0..ours.len() {
            if nonfinite(ours.get(i)) && nonfinite(xla.get(i)) {
                x.set(i, ours.get(i));
            }
        }
    }
    compare(ours, &x, atol, rtol)
}

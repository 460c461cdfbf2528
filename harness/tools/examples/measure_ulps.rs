//! How far XLA CPU's approximated functions are from the correctly rounded result, on this
//! host: the measurement behind `hlo::semantics::approximation_ulps` (the semantics table's
//! approximated rows). Each real function is run on XLA CPU over a dense sweep of its domain,
//! in f64, f32, bf16 and f16, and compared with the oracle's value there (the f64 function
//! rounded once to the type: correctly rounded for every type but f64, whose own reference is
//! within about an ulp); the largest distance in ulps of the type is printed beside the
//! table's bound.
//!
//!     cargo run --release -p tools --example measure_ulps [-- --json]
//!
//! Exit 1 when XLA is further off than the table allows somewhere (the table is then unsound on
//! this host: its figure must grow, with this measurement as its source).

use engine::backend::{Backend, Outcome, RunOptions};
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use hlo::{ArrayLiteral, Literal, Opcode, PrimitiveType, Scalar};

/// The sweep of `op`'s first (and second) operand: dense over the range where the function is
/// neither saturated nor trivially exact, plus its edges.
fn sweep(op: Opcode) -> (Vec<f64>, Option<Vec<f64>>) {
    let n = 4096;
    let lin = |lo: f64, hi: f64| -> Vec<f64> {
        (0..n)
            .map(|k| lo + (hi - lo) * k as f64 / (n - 1) as f64)
            .collect()
    };
    let geo = |lo: f64, hi: f64| -> Vec<f64> {
        let (a, b) = (lo.ln(), hi.ln());
        (0..n)
            .map(|k| (a + (b - a) * k as f64 / (n - 1) as f64).exp())
            .collect()
    };
    use Opcode as O;
    match op {
        O::Exp | O::Expm1 => (lin(-80.0, 80.0), None),
        O::Log | O::Log1p | O::Rsqrt | O::Cbrt => (geo(1e-30, 1e30), None),
        O::Logistic | O::Tanh | O::Erf => (lin(-20.0, 20.0), None),
        O::Sin | O::Cos | O::Tan => (lin(-1e4, 1e4), None),
        O::Atan | O::Asinh | O::Sinh | O::Cosh => (lin(-80.0, 80.0), None),
        O::Asin | O::Acos | O::Atanh => (lin(-0.999, 0.999), None),
        O::Acosh => (geo(1.0, 1e20), None),
        O::Atan2 => (lin(-100.0, 100.0), Some(lin(100.0, -100.0))),
        O::Power => (geo(1e-3, 1e3), Some(lin(-8.0, 8.0))),
        _ => (lin(-1.0, 1.0), None),
    }
}

fn literal(ty: PrimitiveType, v: &[f64]) -> Literal {
    let s: Vec<Scalar> = v.iter().map(|&x| Scalar::F(x)).collect();
    Literal::Array(ArrayLiteral::from_scalars(ty, vec![v.len() as i64], &s).expect("a literal"))
}

/// Distance in ulps of `ty` between two finite values of it (0 for equal bits).
fn ulps(ty: PrimitiveType, a: &ArrayLiteral, b: &ArrayLiteral, k: usize) -> Option<u64> {
    let w = ty.bit_width();
    let ord = |bits: u128| -> i128 {
        let mag = (bits & ((1u128 << (w - 1)) - 1)) as i128;
        if bits >> (w - 1) & 1 == 1 {
            -mag
        } else {
            mag
        }
    };
    let (x, y) = (a.get(k).to_f64(), b.get(k).to_f64());
    if !x.is_finite() || !y.is_finite() {
        return None;
    }
    Some((ord(a.bits(k)) - ord(b.bits(k))).unsigned_abs() as u64)
}

fn main() {
    let json = std::env::args().any(|a| a == "--json");
    let xla = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1));
    let oracle = engine::interp_backend::InterpBackend::new();
    let ops = [
        Opcode::Exp,
        Opcode::Expm1,
        Opcode::Log,
        Opcode::Log1p,
        Opcode::Logistic,
        Opcode::Tanh,
        Opcode::Erf,
        Opcode::Cbrt,
        Opcode::Rsqrt,
        Opcode::Sin,
        Opcode::Cos,
        Opcode::Tan,
        Opcode::Atan2,
        Opcode::Power,
        Opcode::Atan,
        Opcode::Asin,
        Opcode::Acos,
        Opcode::Asinh,
        Opcode::Acosh,
        Opcode::Atanh,
        Opcode::Sinh,
        Opcode::Cosh,
    ];
    let types = [
        PrimitiveType::F64,
        PrimitiveType::F32,
        PrimitiveType::Bf16,
        PrimitiveType::F16,
    ];
    let mut rows = Vec::new();
    let mut unsound = false;
    if !json {
        println!("| op | type | largest ulps measured | table's bound |\n|---|---|---:|---:|");
    }
    for op in ops {
        let (x, y) = sweep(op);
        for ty in types {
            let n = x.len();
            let text = match &y {
                None => format!(
                    "HloModule m\n\nENTRY main {{\n  x = {ty}[{n}] parameter(0)\n  ROOT r = {ty}[{n}] {}(x)\n}}\n",
                    op.name()
                ),
                Some(_) => format!(
                    "HloModule m\n\nENTRY main {{\n  x = {ty}[{n}] parameter(0)\n  y = {ty}[{n}] parameter(1)\n  ROOT r = {ty}[{n}] {}(x, y)\n}}\n",
                    op.name()
                ),
            };
            let module = hlo::parse::parse_module(&text).expect("a module");
            let mut inputs = vec![literal(ty, &x)];
            if let Some(y) = &y {
                inputs.push(literal(ty, y));
            }
            let (Outcome::Ok(a), Outcome::Ok(b)) = (
                xla.run(&text, &inputs, &RunOptions::default()),
                oracle.run_module(&module, &inputs),
            ) else {
                eprintln!("{} {ty}: did not run", op.name());
                continue;
            };
            let (a, b) = (&a.outputs[0], &b.outputs[0]);
            let (Some(a), Some(b)) = (a.as_array(), b.as_array()) else {
                continue;
            };
            let worst = (0..a.len())
                .filter_map(|k| ulps(ty, a, b, k))
                .max()
                .unwrap_or(0);
            let bound = hlo::semantics::approximation_ulps(op, ty);
            if bound.is_some_and(|u| worst > u as u64) {
                unsound = true;
            }
            if json {
                rows.push(serde_json::json!({
                    "op": op.name(), "type": ty.to_string(), "measured_ulps": worst,
                    "bound": bound,
                }));
            } else {
                println!(
                    "| {} | {ty} | {worst} | {} |",
                    op.name(),
                    bound.map_or("-".into(), |u| u.to_string())
                );
            }
        }
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "host": engine::environment::cpu().model,
                "rows": rows,
            }))
            .unwrap_or_default()
        );
    }
    if unsound {
        eprintln!("XLA CPU is further off than the semantics table allows somewhere above");
        std::process::exit(1);
    }
}

//! Interpreter throughput: elementwise (elements/s), dot (FLOP/s as elements = multiply-adds), and
//! time per corpus module (`corpora/jax/dump/*.before_optimizations.txt`, seeded inputs). The
//! `enclose` group times the set of legitimate results (`interp::enclose`) on the same
//! elementwise and dot modules, so that its cost reads as a ratio to `interp::evaluate`'s.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hlo::{ArrayLiteral, Literal, PrimitiveType, Scalar, Shape};
use std::time::Duration;

fn f32_lit(dims: &[i64], seed: u64) -> Literal {
    let n: i64 = dims.iter().product();
    let mut s = seed;
    let v: Vec<Scalar> = (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            Scalar::F(((s >> 40) as f64) / (1u64 << 24) as f64 - 0.5)
        })
        .collect();
    Literal::Array(ArrayLiteral::from_scalars(PrimitiveType::F32, dims.to_vec(), &v).unwrap())
}

/// `tanh((a + b) * a)` over f32[n], with seeded inputs.
fn add_mul_tanh(n: usize) -> (hlo::Module, Vec<Literal>) {
    let text = format!(
        "HloModule m\n\nENTRY %main (a: f32[{n}], b: f32[{n}]) -> f32[{n}] {{\n  %a = f32[{n}] parameter(0)\n  %b = f32[{n}] parameter(1)\n  %s = f32[{n}] add(%a, %b)\n  %m = f32[{n}] multiply(%s, %a)\n  ROOT %e = f32[{n}] tanh(%m)\n}}\n"
    );
    let m = hlo::parse::parse_module(&text).unwrap();
    (m, vec![f32_lit(&[n as i64], 1), f32_lit(&[n as i64], 2)])
}

/// An f32[n,n] matrix product, with seeded inputs.
fn matmul(n: i64) -> (hlo::Module, Vec<Literal>) {
    let text = format!(
        "HloModule m\n\nENTRY %main (a: f32[{n},{n}], b: f32[{n},{n}]) -> f32[{n},{n}] {{\n  %a = f32[{n},{n}] parameter(0)\n  %b = f32[{n},{n}] parameter(1)\n  ROOT %d = f32[{n},{n}] dot(%a, %b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n}}\n"
    );
    let m = hlo::parse::parse_module(&text).unwrap();
    (m, vec![f32_lit(&[n, n], 3), f32_lit(&[n, n], 4)])
}

fn elementwise(c: &mut Criterion) {
    let mut g = c.benchmark_group("elementwise");
    for n in [1usize << 12, 1 << 20] {
        let (m, args) = add_mul_tanh(n);
        // Three elementwise ops per element.
        g.throughput(Throughput::Elements(3 * n as u64));
        g.bench_with_input(BenchmarkId::new("add_mul_tanh_f32", n), &n, |b, _| {
            b.iter(|| interp::evaluate(&m, &args).unwrap())
        });
    }
    g.finish();
}

fn dot(c: &mut Criterion) {
    let mut g = c.benchmark_group("dot");
    g.sample_size(10);
    for n in [64i64, 256] {
        let (m, args) = matmul(n);
        // Elements = FLOPs (2 per multiply-add).
        g.throughput(Throughput::Elements(2 * (n * n * n) as u64));
        g.bench_with_input(BenchmarkId::new("matmul_f32", n), &n, |b, _| {
            b.iter(|| interp::evaluate(&m, &args).unwrap())
        });
    }
    g.finish();
}

fn fake(shapes: &[Shape]) -> Vec<Literal> {
    shapes
        .iter()
        .map(|s| match s {
            Shape::Array(a) if a.ty.is_float() => f32_lit(&a.dims, 7)
                .as_array()
                .map(|l| {
                    let v: Vec<Scalar> = (0..l.len())
                        .map(|i| Scalar::F(l.get(i).to_f64() * 0.3 + 0.05))
                        .collect();
                    Literal::Array(ArrayLiteral::from_scalars(a.ty, a.dims.clone(), &v).unwrap())
                })
                .unwrap(),
            s => Literal::zeros(s).unwrap(),
        })
        .collect()
}

fn corpus(c: &mut Criterion) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/jax/dump");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut files: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".before_optimizations.txt"))
        .collect();
    files.sort();
    let mut g = c.benchmark_group("corpus");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(200));
    for f in files {
        let name = f
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".before_optimizations.txt", "");
        let Ok(m) = hlo::parse::parse_module(&std::fs::read_to_string(&f).unwrap()) else {
            continue;
        };
        let args = fake(&m.entry_computation().parameter_shapes());
        if interp::evaluate(&m, &args).is_err() {
            continue; // unsupported modules are listed in KNOWN_DIFFERENCES.md
        }
        g.bench_function(name, |b| b.iter(|| interp::evaluate(&m, &args).unwrap()));
    }
    g.finish();
}

fn enclose(c: &mut Criterion) {
    let mut g = c.benchmark_group("enclose");
    g.sample_size(10);
    let opts = interp::enclose::EncloseOptions::default();
    let n = 1usize << 12;
    let (m, args) = add_mul_tanh(n);
    g.throughput(Throughput::Elements(3 * n as u64));
    g.bench_with_input(BenchmarkId::new("add_mul_tanh_f32", n), &n, |b, _| {
        b.iter(|| interp::enclose::enclose(&m, &args, &opts).unwrap())
    });
    let n = 64i64;
    let (m, args) = matmul(n);
    g.throughput(Throughput::Elements(2 * (n * n * n) as u64));
    g.bench_with_input(BenchmarkId::new("matmul_f32", n), &n, |b, _| {
        b.iter(|| interp::enclose::enclose(&m, &args, &opts).unwrap())
    });
    g.finish();
}

criterion_group!(benches, elementwise, dot, enclose, corpus);
criterion_main!(benches);

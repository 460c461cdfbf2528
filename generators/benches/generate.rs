//! Generation + printing throughput for the default configuration (one core).
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use generators::{generate_from_seed, Config};

fn bench(c: &mut Criterion) {
    let cfg = Config::default();
    let mut g = c.benchmark_group("generate");
    g.throughput(Throughput::Elements(100));
    g.bench_function("generate+print 100 modules", |b| {
        let mut seed = 0u64;
        b.iter(|| {
            let mut bytes = 0usize;
            for _ in 0..100 {
                let m = generate_from_seed(seed, &cfg);
                bytes += hlo::print::module_to_string(&m).len();
                seed += 1;
            }
            bytes
        })
    });
    g.bench_function("generate only 100 modules", |b| {
        let mut seed = 0u64;
        b.iter(|| {
            let mut n = 0usize;
            for _ in 0..100 {
                n += generate_from_seed(seed, &cfg).instruction_count();
                seed += 1;
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Engine throughput: modules/s through the worker pool (1 and 2 workers) against a tight
//! in-process jaxlib loop running the same module texts with the same number of threads
//! (benches/engine_inprocess.py). Prints the figures and the ratios.
//!
//!     cargo bench -p engine --bench engine        (HLO_DIFF_BENCH_MODULES=N, default 24)

use engine::backend::{Backend, Outcome, RunOptions};
use engine::worker::{default_python, Platform, WorkerBackend, WorkerConfig};
use hlo::{ArrayLiteral, Literal, PrimitiveType};
use std::time::Instant;

/// Distinct small modules (different constants and op chains, so nothing is cached).
fn modules(n: usize) -> Vec<String> {
    let ops = ["add", "multiply", "subtract", "maximum", "minimum"];
    (0..n)
        .map(|i| {
            let mut body = String::from("  p0 = f32[64] parameter(0)\n  v0 = f32[64] exponential(p0)\n");
            for k in 0..(3 + i % 5) {
                body += &format!(
                    "  c{k} = f32[] constant({}.5)\n  b{k} = f32[64] broadcast(c{k}), dimensions={{}}\n  v{} = f32[64] {}(v{k}, b{k})\n",
                    i + k,
                    k + 1,
                    ops[(i + k) % ops.len()]
                );
            }
            let last = 3 + i % 5;
            format!("HloModule bench_{i}\n\nENTRY main {{\n{body}  ROOT r = f32[64] tanh(v{last})\n}}\n")
        })
        .collect()
}

fn engine_rate(workers: usize, texts: &[String]) -> f64 {
    let b = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(workers));
    let x = Literal::Array(ArrayLiteral::zeros(PrimitiveType::F32, vec![64]).unwrap());
    let opts = RunOptions::default();
    // Start every worker before timing (import jax costs about a second each).
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| assert!(b.run(&texts[0], &[x.clone()], &opts).is_ok()));
        }
    });
    let next = std::sync::atomic::AtomicUsize::new(0);
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(text) = texts.get(i) else { return };
                match b.run(text, &[x.clone()], &opts) {
                    Outcome::Ok(_) => {}
                    other => panic!("bench module {i}: {other}"),
                }
            });
        }
    });
    texts.len() as f64 / t.elapsed().as_secs_f64()
}

fn inprocess_rate(threads: usize, paths: &[std::path::PathBuf]) -> f64 {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/engine_inprocess.py");
    let out = std::process::Command::new(default_python())
        .arg(script)
        .arg(threads.to_string())
        .args(paths)
        .env("JAX_PLATFORMS", "cpu")
        .output()
        .expect("run the in-process baseline");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "baseline said: {text}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

fn main() {
    if !default_python().exists() {
        eprintln!(
            "no Python at {}: {}",
            default_python().display(),
            engine::worker::INSTALL_HINT
        );
        std::process::exit(3);
    }
    let n = std::env::var("HLO_DIFF_BENCH_MODULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    let texts = modules(n);
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<_> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let p = dir.path().join(format!("m{i}.hlo"));
            std::fs::write(&p, t).unwrap();
            p
        })
        .collect();
    let mut rates = Vec::new();
    for threads in [1, 2] {
        let engine = engine_rate(threads, &texts);
        let direct = inprocess_rate(threads, &paths);
        println!(
            "{threads} worker(s): engine {engine:.1} modules/s, in-process jaxlib {direct:.1} modules/s, engine/in-process {:.2}",
            engine / direct
        );
        rates.push(engine);
    }
    println!("engine: 2 workers / 1 worker = {:.2}", rates[1] / rates[0]);
}

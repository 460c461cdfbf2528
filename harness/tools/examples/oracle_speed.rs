//! How fast the oracle (`interp`) is, against the StableHLO reference interpreter
//! (`stablehlo-ref`: jaxlib's `stablehlo.eval_module`, timed inside the worker around the call
//! itself) and against XLA CPU's compile time (`xla-cpu`, the worker's `compile_ms`), over every
//! `before_optimizations` module of `corpora/jax/dump/` with seeded inputs (generators'
//! input generation, seed 1, no special values).
//!
//!     cargo run --release -p tools --example oracle_speed [-- DIR] [--json]
//!
//! Per module it prints the oracle's evaluation time (median of repeated runs; parsing shown
//! separately), stablehlo-ref's `execute_ms` and XLA's `compile_ms` (each the median of 3 runs
//! after a warm-up run), and the ratios; then medians over the modules each backend ran.
//! Targets: stablehlo-ref / oracle >= 100; oracle / XLA compile <= 0.10.

use engine::backend::{Backend, Outcome, RunOptions};
use engine::worker::{repo_root, Platform, WorkerBackend, WorkerConfig};
use std::time::Instant;

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median of the worker's own timing `pick` over 3 runs after one warm-up, or why it failed.
fn worker_ms(
    b: &WorkerBackend,
    text: &str,
    inputs: &[hlo::Literal],
    pick: fn(&engine::backend::Timings) -> f64,
) -> Result<f64, String> {
    let opts = RunOptions::default();
    let mut v = Vec::new();
    for rep in 0..4 {
        match b.run(text, inputs, &opts) {
            Outcome::Ok(r) => {
                if rep > 0 {
                    v.push(pick(&r.timings));
                }
            }
            other => return Err(other.kind().to_string()),
        }
    }
    Ok(median(&mut v))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let dir = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| repo_root().join("corpora/jax/dump"));
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(".before_optimizations.txt"))
            .collect(),
        Err(e) => {
            eprintln!("{}: {e}", dir.display());
            std::process::exit(2);
        }
    };
    files.sort();
    // ORACLE_SPEED_LOOP=NAME: only evaluate the modules whose name contains NAME, for about 3 s,
    // with no worker (for a profiler).
    if let Ok(only) = std::env::var("ORACLE_SPEED_LOOP") {
        let gen_cfg = generators::Config {
            special_value_percent: 0,
            ..Default::default()
        };
        for f in files
            .iter()
            .filter(|f| f.to_string_lossy().contains(only.as_str()))
        {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            let Ok(module) = hlo::parse::parse_module(&text) else {
                continue;
            };
            let inputs = generators::generate_inputs_from_seed(&module, 1, &gen_cfg);
            let (t, mut n) = (Instant::now(), 0u64);
            while t.elapsed().as_secs_f64() < 3.0 {
                let _ = interp::evaluate(&module, &inputs);
                n += 1;
            }
            println!("{}: {:.3} us per evaluation", f.display(), 3e6 / n as f64);
        }
        return;
    }
    if cfg!(debug_assertions) {
        eprintln!("note: a debug build; run with --release for meaningful oracle figures");
    }
    let cfg = WorkerConfig::new(Platform::Cpu).with_workers(1);
    let xla = WorkerBackend::xla_cpu(cfg);
    let shlo = WorkerBackend::stablehlo_ref_on(&xla);
    if let Err(e) = xla.info() {
        eprintln!("no XLA worker: {e}");
        std::process::exit(3);
    }
    let gen_cfg = generators::Config {
        special_value_percent: 0,
        ..Default::default()
    };
    let mut rows = Vec::new();
    println!(
        "{:<36} {:>10} {:>10} {:>12} {:>9} {:>12} {:>9}",
        "module", "parse ms", "oracle ms", "shlo-ref ms", "ref/orc", "xla comp ms", "orc/comp"
    );
    for f in &files {
        let name = f
            .file_name()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".before_optimizations.txt")
            .to_string();
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let t = Instant::now();
        let module = match hlo::parse::parse_module(&text) {
            Ok(m) => m,
            Err(e) => {
                println!("{name:<36} parse error: {e}");
                continue;
            }
        };
        let parse_ms = t.elapsed().as_secs_f64() * 1e3;
        let inputs = generators::generate_inputs_from_seed(&module, 1, &gen_cfg);
        // Oracle: repeat until 9 runs or 0.5 s.
        let mut ot = Vec::new();
        let mut oracle = Ok(());
        let start = Instant::now();
        while ot.len() < 9 && (ot.len() < 2 || start.elapsed().as_secs_f64() < 0.5) {
            let t = Instant::now();
            if let Err(e) = interp::evaluate(&module, &inputs) {
                oracle = Err(e.to_string());
                break;
            }
            ot.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let oracle_ms = oracle.map(|_| median(&mut ot));
        let ref_ms = worker_ms(&shlo, &text, &inputs, |t| t.execute_ms);
        let comp_ms = worker_ms(&xla, &text, &inputs, |t| t.compile_ms);
        let fmt = |r: &Result<f64, String>| match r {
            Ok(v) => format!("{v:.3}"),
            Err(e) => e.chars().take(12).collect(),
        };
        let ratio = |a: &Result<f64, String>, b: &Result<f64, String>| match (a, b) {
            (Ok(a), Ok(b)) => Some(a / b),
            _ => None,
        };
        let r1 = ratio(&ref_ms, &oracle_ms);
        let r2 = ratio(&oracle_ms, &comp_ms);
        println!(
            "{:<36} {:>10.3} {:>10} {:>12} {:>9} {:>12} {:>9}",
            name.chars().take(36).collect::<String>(),
            parse_ms,
            fmt(&oracle_ms),
            fmt(&ref_ms),
            r1.map(|r| format!("{r:.0}x")).unwrap_or("-".into()),
            fmt(&comp_ms),
            r2.map(|r| format!("{:.2}%", r * 100.0))
                .unwrap_or("-".into()),
        );
        rows.push((name, parse_ms, oracle_ms, ref_ms, comp_ms, r1, r2));
    }
    let col = |f: &dyn Fn(
        &(
            String,
            f64,
            Result<f64, String>,
            Result<f64, String>,
            Result<f64, String>,
            Option<f64>,
            Option<f64>,
        ),
    ) -> Option<f64>| {
        let mut v: Vec<f64> = rows.iter().filter_map(f).collect();
        (v.len(), median(&mut v))
    };
    let (n_o, med_o) = col(&|r| r.2.as_ref().ok().copied());
    let (n_p, med_p) = col(&|r| Some(r.1));
    let (n_s, med_s) = col(&|r| r.3.as_ref().ok().copied());
    let (n_c, med_c) = col(&|r| r.4.as_ref().ok().copied());
    let (n_r1, med_r1) = col(&|r| r.5);
    let (n_r2, med_r2) = col(&|r| r.6);
    let tot = |f: &dyn Fn(
        &(
            String,
            f64,
            Result<f64, String>,
            Result<f64, String>,
            Result<f64, String>,
            Option<f64>,
            Option<f64>,
        ),
    ) -> Option<f64>|
     -> f64 { rows.iter().filter_map(f).sum() };
    // Totals over the modules all three ran.
    let both = |r: &(
        String,
        f64,
        Result<f64, String>,
        Result<f64, String>,
        Result<f64, String>,
        Option<f64>,
        Option<f64>,
    )| r.2.is_ok() && r.3.is_ok();
    let sum_o = tot(&|r| {
        if both(r) {
            r.2.as_ref().ok().copied()
        } else {
            None
        }
    });
    let sum_s = tot(&|r| {
        if both(r) {
            r.3.as_ref().ok().copied()
        } else {
            None
        }
    });
    let comp_ok = |r: &(
        String,
        f64,
        Result<f64, String>,
        Result<f64, String>,
        Result<f64, String>,
        Option<f64>,
        Option<f64>,
    )| r.2.is_ok() && r.4.is_ok();
    let sum_o2 = tot(&|r| {
        if comp_ok(r) {
            r.2.as_ref().ok().copied()
        } else {
            None
        }
    });
    let sum_c = tot(&|r| {
        if comp_ok(r) {
            r.4.as_ref().ok().copied()
        } else {
            None
        }
    });
    println!();
    println!("medians: parse {med_p:.3} ms ({n_p}), oracle {med_o:.3} ms ({n_o}), stablehlo-ref {med_s:.3} ms ({n_s}), xla-cpu compile {med_c:.3} ms ({n_c})");
    println!("per-module ratio medians: stablehlo-ref/oracle {med_r1:.0}x over {n_r1} modules (target >= 100x); oracle/xla compile {:.2}% over {n_r2} modules (target <= 10%)", med_r2 * 100.0);
    println!(
        "totals: stablehlo-ref/oracle {:.0}x (where both ran); oracle/xla compile {:.2}%",
        sum_s / sum_o,
        sum_o2 / sum_c * 100.0
    );
    if json {
        let v = serde_json::json!({
            "modules": rows.len(),
            "median_ms": {"parse": med_p, "oracle": med_o, "stablehlo_ref": med_s, "xla_cpu_compile": med_c},
            "median_ratio": {"stablehlo_ref_over_oracle": med_r1, "oracle_over_xla_compile": med_r2},
            "total_ratio": {"stablehlo_ref_over_oracle": sum_s / sum_o, "oracle_over_xla_compile": sum_o2 / sum_c},
        });
        println!("{v}");
    }
}

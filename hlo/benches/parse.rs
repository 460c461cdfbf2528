//! Parse throughput on the real XLA dumps under `corpora/`, and the same files through XLA's
//! own C++ parser for comparison.
//!
//! `cargo bench -p hlo --bench parse` runs the criterion benchmark (MB/s of HLO text), then
//! times one pass of our parser and of XLA's (`jaxlib._hlo.hlo_module_from_text` in a Python
//! subprocess, timed inside Python with the files already read; best of 5 each) over the same
//! files, and prints the ratio. Set `HLO_DIFF_PYTHON` to choose the Python; without jaxlib the
//! comparison is skipped with a message.

use criterion::{criterion_group, Criterion, Throughput};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn corpus() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(n) = p.file_name().and_then(|n| n.to_str()) {
                let report = n.contains("buffer-assignment")
                    || n.contains("memory-usage")
                    || n.contains("live-range");
                if n.ends_with(".txt") && !report {
                    if let Ok(t) = std::fs::read_to_string(&p) {
                        out.push((p, t));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

fn parse_all(files: &[(PathBuf, String)]) -> usize {
    let mut n = 0;
    for (_, t) in files {
        let m = hlo::parse::parse_module(t).expect("corpus file parses");
        n += m.instruction_count();
    }
    n
}

fn bench_parse(c: &mut Criterion) {
    let files = corpus();
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    let mut g = c.benchmark_group("hlo_parse");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(20);
    g.bench_function(format!("corpus_{}_files", files.len()), |b| {
        b.iter(|| parse_all(&files))
    });
    g.finish();
    let modules: Vec<hlo::Module> = files
        .iter()
        .map(|(_, t)| hlo::parse::parse_module(t).unwrap())
        .collect();
    let mut g = c.benchmark_group("hlo_print");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(20);
    g.bench_function("corpus", |b| {
        b.iter(|| {
            modules
                .iter()
                .map(|m| hlo::print::module_to_string(m).len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench_parse);

fn python() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("HLO_DIFF_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let repo = std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).ok()?;
    Some(repo.join(".venv/bin/python")).filter(|p| p.exists())
}

/// Best-of-5 wall time of our parser over all files, against XLA's timed inside Python.
fn compare_with_xla() {
    let files = corpus();
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    let mut ours = f64::INFINITY;
    for _ in 0..5 {
        let t0 = Instant::now();
        std::hint::black_box(parse_all(&files));
        ours = ours.min(t0.elapsed().as_secs_f64());
    }
    let mb = bytes as f64 / 1e6;
    println!(
        "ours: {} files, {:.2} MB in {:.1} ms = {:.1} MB/s",
        files.len(),
        mb,
        ours * 1e3,
        mb / ours
    );
    let Some(py) = python() else {
        println!("XLA comparison skipped: no Python with jaxlib (set HLO_DIFF_PYTHON)");
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_parse.py");
    let out = Command::new(&py)
        .arg(&script)
        .args(["--time", "--repeat", "5"])
        .args(files.iter().map(|(p, _)| p))
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            println!("XLA comparison skipped: cannot run {}: {e}", py.display());
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = match serde_json::from_str(text.trim()) {
        Ok(v) => v,
        Err(_) => {
            println!(
                "XLA comparison skipped: unexpected output {text:?} {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
    };
    let Some(xla) = v["seconds"].as_f64() else {
        println!("XLA comparison skipped: {v}");
        return;
    };
    println!(
        "XLA (jaxlib hlo_module_from_text): {:.1} ms = {:.1} MB/s ({} files failed in XLA)",
        xla * 1e3,
        mb / xla,
        v["failed"]
    );
    println!("ratio ours/XLA (throughput): {:.2}x", xla / ours);
}

fn main() {
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
    compare_with_xla();
}

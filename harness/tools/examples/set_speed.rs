//! What the judge's set of legitimate results costs (`interp::enclose`), against the oracle's
//! own evaluation of the same module on the same inputs, over stored findings (each
//! `module.hlo` with its `inputs.lit`: a campaign's `findings/` directory, or finding
//! directories).
//!
//!     cargo run --release -p tools --example set_speed -- DIR... [--top N]
//!
//! Per finding the median of 3 runs of each; then the total, median and largest set time, the
//! ratio of the sets' total to the oracle's, and the N (default 10) slowest findings with their
//! ratio. No XLA is run.

use interp::enclose::{enclose, EncloseOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn median3(mut f: impl FnMut() -> bool) -> Option<f64> {
    let mut v = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        if !f() {
            return None;
        }
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    v.sort_by(f64::total_cmp);
    Some(v[1])
}

fn finding_dirs(p: &Path, out: &mut Vec<PathBuf>) {
    if p.join("module.hlo").is_file() && p.join("inputs.lit").is_file() {
        out.push(p.to_path_buf());
        return;
    }
    let dir = if p.join("findings").is_dir() {
        p.join("findings")
    } else {
        p.to_path_buf()
    };
    if let Ok(rd) = std::fs::read_dir(&dir) {
        let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        v.sort();
        for d in v {
            if d.join("module.hlo").is_file() && d.join("inputs.lit").is_file() {
                out.push(d);
            }
        }
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut top = 10;
    if let Some(i) = args.iter().position(|a| a == "--top") {
        top = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(10);
        args.drain(i..(i + 2).min(args.len()));
    }
    let mut dirs = Vec::new();
    for a in &args {
        finding_dirs(Path::new(a), &mut dirs);
    }
    if dirs.is_empty() {
        eprintln!("set_speed: no finding directories (module.hlo + inputs.lit) under {args:?}");
        std::process::exit(2);
    }
    let opts = EncloseOptions::default();
    let mut rows: Vec<(f64, f64, String)> = Vec::new();
    let mut failed = 0;
    for d in &dirs {
        let Ok(text) = std::fs::read_to_string(d.join("module.hlo")) else {
            failed += 1;
            continue;
        };
        let Ok(m) = hlo::parse::parse_module(&text) else {
            failed += 1;
            continue;
        };
        let Ok(inputs) = findings::store::read_literals(&d.join("inputs.lit")) else {
            failed += 1;
            continue;
        };
        let eval = interp::EvalOptions::default();
        let oracle = median3(|| interp::evaluate_with(&m, &inputs, &eval).is_ok());
        let set = median3(|| enclose(&m, &inputs, &opts).is_ok());
        match (oracle, set) {
            (Some(o), Some(s)) => rows.push((
                s,
                o,
                d.file_name().unwrap_or_default().to_string_lossy().into(),
            )),
            _ => failed += 1,
        }
    }
    let set_total: f64 = rows.iter().map(|r| r.0).sum();
    let oracle_total: f64 = rows.iter().map(|r| r.1).sum();
    let mut sets: Vec<f64> = rows.iter().map(|r| r.0).collect();
    sets.sort_by(f64::total_cmp);
    println!(
        "set_speed: {} findings ({failed} without a set or an oracle result)",
        rows.len()
    );
    if let (Some(med), Some(max)) = (sets.get(sets.len() / 2), sets.last()) {
        println!(
            "  sets: {set_total:.0} ms in all, median {med:.1} ms, max {max:.1} ms; oracle {oracle_total:.0} ms in all; sets / oracle = {:.2}",
            set_total / oracle_total.max(f64::EPSILON)
        );
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (s, o, name) in rows.iter().take(top) {
        println!(
            "  {s:8.1} ms set, {o:7.1} ms oracle ({:5.1}x)  {name}",
            s / o.max(1e-3)
        );
    }
}

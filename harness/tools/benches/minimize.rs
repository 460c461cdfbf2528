//! The minimizer on the findings of a fixed campaign, chunked against one edit per predicate
//! call, in one run: predicate calls (tests) and seconds per finding, and the ratio.
//!
//!     cargo bench -p tools --bench minimize   (HLO_DIFF_BENCH_MODULES=N modules, default 60;
//!                                               HLO_DIFF_BENCH_STORE=DIR reuses a campaign's
//!                                               findings instead of running one)
//!
//! The campaign (seed 99, default generator, no minimization) runs first; then every finding is
//! minimized twice, once each way, with the same limits (600 tests, 60 s), on one XLA worker.

use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use findings::store::{read_literals, FindingRecord, Store};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tools::campaign::{bucket_case, run_campaign, CampaignConfig, MinimizeConfig, Stop};
use tools::minimize::Case;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

fn main() {
    let store_dir = match std::env::var_os("HLO_DIFF_BENCH_STORE") {
        Some(d) => PathBuf::from(d),
        None => {
            let n: u64 = std::env::var("HLO_DIFF_BENCH_MODULES")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(60);
            let dir = std::env::temp_dir().join(format!("hlo-diff-minimize-bench-{n}"));
            let _ = std::fs::remove_dir_all(&dir);
            let cfg = CampaignConfig {
                seed: 99,
                jobs: 2,
                out: dir.clone(),
                stop: Stop {
                    time: None,
                    iterations: Some(n),
                },
                progress: false,
                minimize: None,
                ..CampaignConfig::default()
            };
            run_campaign(&cfg, None).expect("the campaign runs");
            dir
        }
    };
    let store = Store::open(&store_dir).expect("store");
    let findings: Vec<(PathBuf, FindingRecord)> = store.findings().expect("findings");
    let backend = Arc::new(WorkerBackend::xla_cpu(
        WorkerConfig::new(Platform::Cpu).with_workers(1),
    ));
    println!(
        "minimize bench: {} findings of {}",
        findings.len(),
        store_dir.display()
    );
    let mut rows: Vec<(bool, Vec<f64>, Vec<f64>, Vec<f64>)> = Vec::new();
    for chunked in [true, false] {
        let (mut tests, mut secs, mut instrs) = (Vec::new(), Vec::new(), Vec::new());
        for (dir, rec) in &findings {
            let text = std::fs::read_to_string(dir.join("module.hlo")).unwrap();
            let module = hlo::parse::parse_module(&text).unwrap();
            let inputs = read_literals(&dir.join("inputs.lit")).unwrap();
            let opts = rec.xla_options();
            let t = Instant::now();
            let r = bucket_case(
                Case { module, inputs },
                Some(&rec.verdict),
                &backend,
                opts,
                &MinimizeConfig {
                    bisect: false,
                    chunked,
                    ..MinimizeConfig::default()
                },
                Duration::from_secs(60),
                None,
            );
            secs.push(t.elapsed().as_secs_f64());
            tests.push(r.tests as f64);
            instrs.push(r.instructions_after as f64);
        }
        rows.push((chunked, tests, secs, instrs));
    }
    let mut med = Vec::new();
    for (chunked, tests, secs, instrs) in &mut rows {
        let total_t: f64 = tests.iter().sum();
        let total_s: f64 = secs.iter().sum();
        let (mt, ms, mi) = (median(tests), median(secs), median(instrs));
        println!(
            "  {:<16} tests/finding median {mt:.0} (total {total_t:.0}), seconds/finding median {ms:.2} (total {total_s:.1}), instructions left median {mi:.0}",
            if *chunked { "chunked" } else { "one at a time" }
        );
        med.push((total_t, total_s));
    }
    if let [(ct, cs), (ot, os)] = med[..] {
        println!(
            "  one-at-a-time / chunked: {:.2}x the tests, {:.2}x the time",
            ot / ct.max(1.0),
            os / cs.max(1e-9)
        );
    }
}

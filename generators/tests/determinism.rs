//! Determinism across processes: the same seeds give byte-identical module text and identical
//! inputs (`generate_inputs_from_seed`) in two separate processes, and the same as in this one.
//! Nothing in generation may depend on per-process state (hash seeds, addresses, time).
//!
//! The test binary runs itself twice as a child (the ignored test `child_dump`, which writes
//! its dump to the file named by `HLO_GEN_DETERMINISM_OUT`).

use std::path::Path;
use std::process::Command;

const ENV: &str = "HLO_GEN_DETERMINISM_OUT";

/// Module texts and inputs (as JSON) for default seeds 0..60, swarm seeds 0..30, and seeds
/// 0..30 with every structural knob on and under per-program configurations.
fn dump() -> String {
    let mut out = String::new();
    let cfg = generators::Config::default();
    let mut add = |m: &hlo::Module, cfg: &generators::Config, seed: u64| {
        out.push_str(&hlo::print::module_to_string(m));
        let inputs = generators::generate_inputs_from_seed(m, seed, cfg);
        out.push_str(&serde_json::to_string(&inputs).expect("literals serialize"));
        out.push('\n');
    };
    for seed in 0..60u64 {
        add(&generators::generate_from_seed(seed, &cfg), &cfg, seed);
    }
    for seed in 0..30u64 {
        let (m, scfg) = generators::generate_swarm_from_seed(seed);
        add(&m, &scfg, seed);
    }
    // Every structural knob on (aliasing, composite calls, layouts, shardings, nested and
    // data-dependent control flow), and per-program configurations that draw them.
    let structural = generators::Config {
        alias_percent: 100,
        composite_call_percent: 100,
        layout_percent: 100,
        sharding_percent: 20,
        nested_control_percent: 100,
        ..generators::Config::default()
    };
    for seed in 0..30u64 {
        add(
            &generators::generate_from_seed(seed, &structural),
            &structural,
            seed,
        );
        let pc = generators::program_config(&cfg, seed);
        add(&generators::generate_from_seed(seed, &pc), &pc, seed);
    }
    out
}

#[test]
#[ignore = "child process of same_seeds_give_identical_bytes_in_separate_processes"]
fn child_dump() {
    let path = std::env::var_os(ENV).expect("run by the parent test, which sets the output file");
    std::fs::write(path, dump()).unwrap();
}

fn run_child(path: &Path) -> String {
    let exe = std::env::current_exe().unwrap();
    let st = Command::new(exe)
        .args(["--ignored", "--exact", "child_dump", "--test-threads", "1"])
        .env(ENV, path)
        .output()
        .expect("start the child test process");
    assert!(
        st.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    std::fs::read_to_string(path).expect("the child wrote its dump")
}

#[test]
fn same_seeds_give_identical_bytes_in_separate_processes() {
    let dir = tempfile::tempdir().unwrap();
    let a = run_child(&dir.path().join("a.txt"));
    let b = run_child(&dir.path().join("b.txt"));
    assert!(a.len() > 10_000, "the dump is too small to mean anything");
    assert!(a == b, "two processes generated different bytes");
    assert!(
        a == dump(),
        "a child process and this one generated different bytes"
    );
}

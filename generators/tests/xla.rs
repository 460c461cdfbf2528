//! XLA accepts generated modules: ~180 default, swarm, per-program and realistic-pattern
//! modules go through XLA's parser,
//! verifier, HLO->MLIR conversion and CPU compile (generators/scripts/xla_accept.py, run with
//! the project's venv). Fails when that Python is missing unless HLO_DIFF_SKIP_XLA=1.

use std::path::Path;
use std::process::Command;

#[test]
fn xla_cpu_accepts_generated_modules() {
    if !test_support::need_xla() {
        return;
    }
    let py = test_support::python();
    let dir = tempfile::tempdir().unwrap();
    let cfg = generators::Config::default();
    for seed in 0..80u64 {
        let m = generators::generate_from_seed(100_000 + seed, &cfg);
        std::fs::write(
            dir.path().join(format!("default_{seed}.hlo")),
            hlo::print::module_to_string(&m),
        )
        .unwrap();
    }
    for seed in 0..40u64 {
        let (m, _) = generators::generate_swarm_from_seed(200_000 + seed);
        std::fs::write(
            dir.path().join(format!("swarm_{seed}.hlo")),
            hlo::print::module_to_string(&m),
        )
        .unwrap();
    }
    // Every realistic pattern, and per-program swarm configurations (what campaigns generate).
    let realistic = generators::Config {
        realistic_percent: 100,
        ..generators::Config::default()
    };
    for seed in 0..30u64 {
        let m = generators::generate_from_seed(400_000 + seed, &realistic);
        std::fs::write(
            dir.path().join(format!("realistic_{seed}.hlo")),
            hlo::print::module_to_string(&m),
        )
        .unwrap();
        let pc = generators::program_config(&cfg, 500_000 + seed);
        let m = generators::generate_from_seed(500_000 + seed, &pc);
        std::fs::write(
            dir.path().join(format!("program_{seed}.hlo")),
            hlo::print::module_to_string(&m),
        )
        .unwrap();
    }
    // Packing several programs into one module must keep it acceptable too.
    let mods: Vec<hlo::Module> = (0..4)
        .map(|s| generators::generate_from_seed(300_000 + s, &cfg))
        .collect();
    std::fs::write(
        dir.path().join("packed.hlo"),
        hlo::print::module_to_string(&generators::pack(&mods)),
    )
    .unwrap();
    let stdout = xla_accept(&py, dir.path(), false);
    assert!(stdout.contains("accepted 181/181"), "{stdout}");
}

/// Mutated real modules (`generators::mutate`) go through XLA's parser, verifier, HLO->MLIR
/// conversion and CPU compile: most must be accepted. Some are not, and need not be: a seed
/// from XLA's tests may be a module only XLA's parser accepts, and a mutation may reach a
/// corner XLA refuses (a campaign keeps such a refusal as a finding). The share is printed.
#[test]
fn xla_cpu_compiles_most_mutated_modules() {
    if !test_support::need_xla() {
        return;
    }
    let py = test_support::python();
    let dir = tempfile::tempdir().unwrap();
    let cfg = generators::Config::default();
    let n = 120u64;
    for seed in 0..n {
        let (m, _) = generators::mutate::mutate_from_seed(700_000 + seed, &cfg).unwrap();
        std::fs::write(
            dir.path().join(format!("mutated_{seed}.hlo")),
            hlo::print::module_to_string(&m),
        )
        .unwrap();
    }
    let stdout = xla_accept(&py, dir.path(), true);
    let summary: serde_json::Value = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    let accepted = summary["accepted"].as_u64().unwrap();
    eprintln!("XLA CPU accepted {accepted} of {n} mutated modules\n{stdout}");
    assert_eq!(summary["total"].as_u64(), Some(n));
    assert!(
        accepted * 100 >= n * MIN_MUTATED_ACCEPTED_PERCENT,
        "{accepted} of {n}\n{stdout}"
    );
}

/// The share of mutated modules XLA CPU must compile, in percent (measured: 117 of 120, 97.5%,
/// once seeds with fusions were left out; refused: an sdy sharding abort, the `PadToStatic`
/// custom call, a layout of the wrong rank in compile).
const MIN_MUTATED_ACCEPTED_PERCENT: u64 = 85;

/// Structural HLO (issue #27 item 2): 30 modules per knob forced on (aliasing with the in-place
/// update, composite calls, non-default layouts, one-device shardings, data-dependent and
/// nested control flow) and two packed modules of them go through XLA's parser, verifier,
/// HLO->MLIR conversion and CPU compile. That they also run and agree with the oracle is
/// `harness/tools/tests/structure.rs`.
#[test]
fn xla_cpu_accepts_structural_modules() {
    if !test_support::need_xla() {
        return;
    }
    let py = test_support::python();
    let dir = tempfile::tempdir().unwrap();
    let mut files = 0;
    let mut with_feature = std::collections::BTreeMap::<&str, usize>::new();
    let mut packable = Vec::new();
    for (name, cfg, wanted) in generators::structure::forced_configs() {
        for seed in 0..30u64 {
            let m = generators::generate_from_seed(600_000 + seed, &cfg);
            let f = generators::structure::features(&m);
            for w in wanted.iter() {
                if f.contains(w) {
                    *with_feature.entry(w).or_default() += 1;
                }
            }
            if seed < 4 {
                packable.push(m.clone());
            }
            std::fs::write(
                dir.path().join(format!("{name}_{seed}.hlo")),
                hlo::print::module_to_string(&m),
            )
            .unwrap();
            files += 1;
        }
    }
    for (k, chunk) in packable.chunks(10).enumerate() {
        std::fs::write(
            dir.path().join(format!("packed_{k}.hlo")),
            hlo::print::module_to_string(&generators::pack(chunk)),
        )
        .unwrap();
        files += 1;
    }
    // Each feature is in the set (the knobs do something).
    for (_, _, wanted) in generators::structure::forced_configs() {
        for w in wanted.iter() {
            let n = with_feature.get(w).copied().unwrap_or(0);
            assert!(n >= 3, "only {n} of 30 modules have `{w}`");
        }
    }
    let stdout = xla_accept(&py, dir.path(), false);
    assert!(
        stdout.contains(&format!("accepted {files}/{files}")),
        "{stdout}"
    );
}

/// Runs `scripts/xla_accept.py` (XLA CPU's parser, verifier, conversion and compile) over the
/// modules in `dir` with `py`: its stdout. Without `json`, every module must be accepted (the
/// script's exit status says so); with it, the caller reads the summary line.
fn xla_accept(py: &Path, dir: &Path, json: bool) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/xla_accept.py");
    let mut cmd = Command::new(py);
    cmd.arg(&script).arg("--dir").arg(dir).args(["--jobs", "2"]);
    if json {
        cmd.arg("--json");
    }
    let out = cmd
        .arg("--python")
        .arg(py)
        .output()
        .expect("run xla_accept.py");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !json {
        assert!(
            out.status.success(),
            "XLA rejected generated modules:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    stdout
}

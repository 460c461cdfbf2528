//! Kill-then-resume: a campaign (`hlo-diff fuzz`) killed with SIGKILL, once while fuzzing and
//! once while minimizing its findings, and resumed each time, ends with the same findings (no
//! occurrence lost or counted twice), the same buckets with the same counts and the same repro
//! modules as the same campaign run without interruption, each bucket first hit on the same
//! module (times differ between the runs: each bucket has one, within the campaign's time).
//! The one difference allowed is XLA's own: a wrong result whose confirming rerun gave other
//! values is `nondeterministic` in one run and may be a `mismatch` in the other.
//! Needs real XLA (`test_support::need_xla`).

use findings::store::Store;
use hlo::PrimitiveType;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn skip() -> bool {
    !test_support::need_xla()
}

/// Every occurrence (`seed:module:program[:inputsN]`) of a campaign's findings, with the
/// finding it is recorded in; an occurrence recorded twice fails here.
fn finding_of_occurrence(dir: &Path) -> BTreeMap<String, String> {
    let mut by = BTreeMap::new();
    for (finding, occs) in occurrences(dir) {
        for o in occs {
            if let Some(first) = by.insert(o.clone(), finding.clone()) {
                panic!("{o} is recorded twice: in {first} and in {finding}");
            }
        }
    }
    by
}

/// The verdict counts with `nondeterministic` counted as `mismatch`: which of the two a wrong
/// result gets depends on whether XLA's rerun happened to repeat it.
fn verdicts_up_to_rerun(v: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (k, n) in v {
        let k = if k == "nondeterministic" {
            "mismatch"
        } else {
            k.as_str()
        };
        *out.entry(k.to_string()).or_insert(0) += n;
    }
    out
}

fn occurrences(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    Store::open(dir)
        .unwrap()
        .findings()
        .unwrap()
        .into_iter()
        .map(|(d, f)| {
            (
                d.file_name().unwrap().to_string_lossy().into_owned(),
                f.occurrences,
            )
        })
        .collect()
}

/// The buckets of a campaign's `report.json`: id -> (count, findings, repro module text, first
/// hit module). The first hit's time is left out: it is when the finding was recorded, which a
/// kill and a resume move ([`first_hit_times`]).
fn buckets(dir: &Path) -> BTreeMap<String, (u64, Vec<String>, String, u64)> {
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    r["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let repro = b["repro"].as_str().map(Path::new).map(|d| {
                let f = std::fs::read_dir(d)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .find(|p| p.to_string_lossy().ends_with(".before_optimizations.txt"))
                    .unwrap();
                std::fs::read_to_string(f).unwrap()
            });
            (
                b["id"].as_str().unwrap().to_string(),
                (
                    b["count"].as_u64().unwrap(),
                    b["findings"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|f| f.as_str().unwrap().to_string())
                        .collect(),
                    repro.unwrap_or_default(),
                    b["first_hit_module"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

/// Every bucket's `first_hit_s` in a campaign's `report.json`.
fn first_hit_times(dir: &Path) -> Vec<f64> {
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    r["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            b["first_hit_s"]
                .as_f64()
                .unwrap_or_else(|| panic!("a campaign's bucket has a first hit time: {b}"))
        })
        .collect()
}

fn minimized(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("findings"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().join("minimized.json").is_file())
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_killed_campaign_resumes_without_losing_or_duplicating_findings() {
    if skip() {
        return;
    }
    // Binary elementwise ops on f32 with many NaNs, and fast min/max: findings are certain.
    let gen = generators::Config {
        op_weights: [
            (generators::OpFamily::Binary, 10),
            (generators::OpFamily::CompareSelect, 2),
        ]
        .into_iter()
        .collect(),
        element_types: vec![PrimitiveType::F32],
        control_flow: false,
        max_instructions: 8,
        special_value_percent: 40,
        ..generators::Config::default()
    };
    let tmp = tempfile::tempdir().unwrap();
    let gen_path = tmp.path().join("gen.json");
    std::fs::write(&gen_path, serde_json::to_string(&gen).unwrap()).unwrap();
    let exe = env!("CARGO_BIN_EXE_hlo-diff");
    // Enough modules that the state file (saved at most every 500 ms) is seen mid-way on a
    // fast machine too: with 16, a CI machine went from its first save to the end between two
    // polls.
    const MODULES: u64 = 48;
    let iterations = MODULES.to_string();
    let args = |out: &Path| -> Vec<String> {
        [
            "fuzz",
            "--iterations",
            iterations.as_str(),
            "--pack",
            "2",
            "--jobs",
            "2",
            "--seed",
            "99",
            "--quiet",
            "--no-voter",
            // The fixed configuration above for every program (campaigns otherwise draw one
            // per program from it), so findings are certain and the run is long enough to kill.
            "--no-swarm",
            "--xla-option",
            "xla_cpu_enable_fast_min_max=true",
            "--gen-config",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([
            gen_path.display().to_string(),
            "--out".into(),
            out.display().to_string(),
        ])
        .collect()
    };
    let a = tmp.path().join("a");
    let st = Command::new(exe).args(args(&a)).output().unwrap();
    assert!(
        st.status.code() == Some(1) || st.status.code() == Some(0),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let reference = occurrences(&a);
    assert!(
        !reference.is_empty(),
        "fast min/max with NaN inputs must give findings"
    );

    let b = tmp.path().join("b");
    let mut child = Command::new(exe)
        .args(args(&b))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let next = tools::campaign::load_state(&b)
            .ok()
            .flatten()
            .map(|s| s.next_index)
            .unwrap_or(0);
        if next >= 5 || t0.elapsed() > Duration::from_secs(240) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let state = tools::campaign::load_state(&b).unwrap().unwrap();
    assert!(
        state.next_index >= 5 && state.next_index < MODULES,
        "killed mid-way: {}",
        state.next_index
    );
    // Resumed, it finishes the fuzz phase; killed again, this time while it minimizes.
    let mut child = Command::new(exe)
        .args(args(&b))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while minimized(&b) < 1 && t0.elapsed() < Duration::from_secs(240) {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let done = minimized(&b);
    assert!(done >= 1, "minimization started before the kill");
    let st = Command::new(exe).args(args(&b)).output().unwrap();
    assert!(
        st.status.code() == Some(1) || st.status.code() == Some(0),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let resumed = tools::campaign::load_state(&b).unwrap().unwrap();
    assert_eq!(resumed.next_index, MODULES, "the seeds continue to the end");
    assert_eq!(resumed.stats.modules, MODULES);
    assert_eq!(resumed.stats.programs, 2 * MODULES);
    // Same occurrences, each recorded once, each in the same finding. One exception is XLA's,
    // not the resume's: a wrong result whose confirming rerun (a fresh compile in another
    // process) gave other values is `nondeterministic`, and one whose rerun repeated it is a
    // `mismatch`; a CI host saw one program's rerun differ in one run and not in the other.
    let (in_a, in_b) = (finding_of_occurrence(&a), finding_of_occurrence(&b));
    assert_eq!(
        in_a.keys().collect::<Vec<_>>(),
        in_b.keys().collect::<Vec<_>>(),
        "the same occurrences, none lost, none counted twice"
    );
    let nondeterministic = |f: &str| f.starts_with("nondeterministic-");
    for (o, fa) in &in_a {
        let fb = &in_b[o];
        if fa != fb {
            assert!(
                nondeterministic(fa) || nondeterministic(fb),
                "{o}: {fa} uninterrupted, {fb} killed and resumed"
            );
            eprintln!("{o}: {fa} uninterrupted, {fb} resumed (XLA's rerun decided)");
        }
    }
    if in_a.values().all(|f| !nondeterministic(f)) && in_b.values().all(|f| !nondeterministic(f)) {
        assert_eq!(occurrences(&b), reference, "same findings");
    }
    // Same buckets, leaving out those holding a finding that XLA's rerun decided.
    let decided_by_rerun: BTreeSet<&String> = in_a
        .iter()
        .filter(|(o, fa)| in_b[*o] != **fa)
        .flat_map(|(o, fa)| [fa, &in_b[o]])
        .collect();
    let settled = |dir: &Path| {
        let mut all = buckets(dir);
        all.retain(|_, (_, findings, _, _)| !findings.iter().any(|f| decided_by_rerun.contains(f)));
        all
    };
    assert_eq!(settled(&b), settled(&a), "same buckets, counts and repros");
    assert!(
        !buckets(&a).is_empty(),
        "fast min/max findings are bucketed"
    );
    let a_state = tools::campaign::load_state(&a).unwrap().unwrap();
    assert_eq!(
        verdicts_up_to_rerun(&resumed.stats.verdicts),
        verdicts_up_to_rerun(&a_state.stats.verdicts)
    );
    // First hits are campaign time over every run: within the fuzz phases' total (the resumed
    // clock starts from the last saved state, at most half a second behind the kill).
    for (dir, st) in [(&a, &a_state), (&b, &resumed)] {
        for t in first_hit_times(dir) {
            assert!(
                (0.0..=st.elapsed_s + 1.0).contains(&t),
                "first hit at {t} s of a {} s campaign",
                st.elapsed_s
            );
        }
    }
}

//! The `minimize`, `bisect` and `triage` subcommands and the `repro-bisect` binary, end to end
//! on real XLA:CPU: exit codes, `--json`, the files they write.
//!
//! The XLA tests need the project's Python (`.venv` with jax/jaxlib): without it they fail,
//! unless `HLO_DIFF_SKIP_XLA=1` says to skip them.

#[path = "../../tools/tests/common/mod.rs"]
mod common;
use common::*;

use hlo::{ArrayLiteral, Literal, PrimitiveType};
use std::path::Path;
use std::process::{Command, Output};

const LOG_EXP_VEC: &str = r#"HloModule log_exp

ENTRY main {
  x = f32[3] parameter(0)
  one = f32[] constant(1)
  ones = f32[3] broadcast(one), dimensions={}
  y = f32[3] multiply(x, ones)
  e = f32[3] exponential(y)
  l = f32[3] log(e)
  n = f32[3] negate(x)
  ROOT t = (f32[3], f32[3]) tuple(l, n)
}
"#;

fn hlo_diff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hlo-diff"))
        .args(args)
        .output()
        .expect("hlo-diff runs")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Writes the module and `x = {100, 1, -3}` as text inputs; returns (module, inputs) paths.
fn write_case(dir: &Path) -> (String, String) {
    let m = dir.join("log_exp.hlo");
    std::fs::write(&m, LOG_EXP_VEC).unwrap();
    let ins = dir.join("inputs.txt");
    std::fs::write(&ins, "f32[3]\t{100, 1, -3}\n").unwrap();
    (m.display().to_string(), ins.display().to_string())
}

/// `repro-bisect M --inputs I --json`, which must exit 1 (a bug): its JSON report.
fn repro_bisect_finds_a_bug(m: &str, ins: &str) -> serde_json::Value {
    let o = Command::new(env!("CARGO_BIN_EXE_repro-bisect"))
        .args([m, "--inputs", ins, "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

#[test]
fn repro_bisect_names_algsimp_and_exits_1() {
    if !need_xla() {
        return;
    }
    assert_xla_rewrites_log_exp();
    let d = tempfile::tempdir().unwrap();
    let (m, ins) = write_case(d.path());
    let v = repro_bisect_finds_a_bug(&m, &ins);
    assert_eq!(v["culprit"]["pass"], "algsimp", "{v}");
    assert_eq!(v["disabled_check"]["xla_matches_oracle"], true);
    assert_eq!(v["bug"], true);
    // The same through `hlo-diff bisect`, as text.
    let o = hlo_diff(&["bisect", &m, "--inputs", &ins]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("after pass `algsimp`"),
        "{}",
        text(&o)
    );
}

/// A compile crash is bisected, not refused: `repro-bisect` on the regression module of a known
/// crash exits 1 and names the pass XLA died in and the smallest set of passes whose disabling
/// avoids it, in `--json` and as a markdown section.
#[test]
fn repro_bisect_locates_a_compile_crash() {
    if !need_xla() {
        return;
    }
    let m = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpora/regressions/xla_bug_map_complex_expm1.hlo")
        .display()
        .to_string();
    let o = Command::new(env!("CARGO_BIN_EXE_repro-bisect"))
        .args([&m, "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    if v["failure"].is_null() {
        // A fixed XLA compiles it.
        assert_fixed_xla_is_not_the_pinned_one("the compile crash of map(complex expm1)");
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(v["bug"], true);
    assert_eq!(
        v["failure"]["last_pass_entered"],
        "constant_folding",
        "{}",
        text(&o)
    );
    assert_eq!(
        v["disable_search"]["minimal"],
        serde_json::json!(["constant_folding"]),
        "{}",
        text(&o)
    );
    let o = Command::new(env!("CARGO_BIN_EXE_repro-bisect"))
        .args([&m, "--markdown"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "## Bisection (xla-cpu)",
        "- last pass entered: `constant_folding`",
        "`xla_disable_hlo_passes=constant_folding` (confirmed)",
    ] {
        assert!(md.contains(needle), "markdown lacks {needle}:\n{md}");
    }
}

#[test]
fn minimize_writes_a_repro_directory() {
    if !need_xla() {
        return;
    }
    assert_xla_rewrites_log_exp();
    let d = tempfile::tempdir().unwrap();
    let (m, ins) = write_case(d.path());
    let out = d.path().join("repro");
    let o = hlo_diff(&[
        "minimize",
        &m,
        "--inputs",
        &ins,
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"], "mismatch");
    let before = v["instructions_before"].as_u64().unwrap();
    let after = v["instructions_after"].as_u64().unwrap();
    assert_eq!(before, 8);
    assert!(after <= 3, "{}", text(&o));
    for f in [
        "module_0000.log_exp.before_optimizations.txt",
        "inputs.lit",
        "inputs.txt",
        "inputs.pbtxt",
        "repro.sh",
        "README.md",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    // The repro directory's own module and inputs still show the bug through `hlo-diff run`.
    let o = hlo_diff(&[
        "run",
        out.join("module_0000.log_exp.before_optimizations.txt")
            .to_str()
            .unwrap(),
        "--inputs",
        out.join("inputs.lit").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"], "mismatch", "{}", text(&o));
}

/// A finding directory as the store writes it (module.hlo + inputs.lit) is accepted.
#[test]
fn minimize_takes_a_finding_directory() {
    if !need_xla() {
        return;
    }
    assert_xla_rewrites_log_exp();
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("mismatch-xla-cpu-0123");
    std::fs::create_dir_all(&f).unwrap();
    std::fs::write(f.join("module.hlo"), LOG_EXP_VEC).unwrap();
    let x = Literal::Array(
        ArrayLiteral::from_bytes(
            PrimitiveType::F32,
            vec![3],
            [100f32, 1.0, -3.0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        )
        .unwrap(),
    );
    findings::store::write_literals(&f.join("inputs.lit"), &[x]).unwrap();
    let o = hlo_diff(&["minimize", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(d
        .path()
        .join("mismatch-xla-cpu-0123.repro/README.md")
        .is_file());
}

/// Triage of a real XLA dump directory (as a bug report would attach): the module's
/// before_optimizations is found, run, minimized, bisected and written up.
#[test]
fn triage_of_a_dump_directory_reports_the_culprit() {
    if !need_xla() {
        return;
    }
    assert_xla_rewrites_log_exp();
    let d = tempfile::tempdir().unwrap();
    let (m, ins) = write_case(d.path());
    // Make the dump the way a user would: compile once with xla_dump_to.
    let dump = d.path().join("dump");
    let o = hlo_diff(&[
        "bisect",
        &m,
        "--inputs",
        &ins,
        "--dump-dir",
        dump.to_str().unwrap(),
        "--no-confirm",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = d.path().join("triage");
    let o = hlo_diff(&[
        "triage",
        dump.to_str().unwrap(),
        "--inputs",
        &ins,
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let first = &v["modules"][0];
    assert_eq!(first["bug"], true, "{}", text(&o));
    assert_eq!(first["culprit"], "algsimp", "{}", text(&o));
    let report = std::fs::read_to_string(first["report"].as_str().unwrap()).unwrap();
    for needle in [
        "## Summary",
        "## Reproduce",
        "## Expected vs actual",
        "## Culprit",
        "algsimp",
        "jaxlib",
        "run_hlo_module",
    ] {
        assert!(report.contains(needle), "report lacks {needle}:\n{report}");
    }
}

#[test]
fn triage_of_a_clean_module_exits_0() {
    if !need_xla() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("ok.hlo");
    std::fs::write(
        &m,
        "HloModule ok\n\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(x)\n}\n",
    )
    .unwrap();
    let o = hlo_diff(&[
        "triage",
        m.to_str().unwrap(),
        "--out",
        d.path().join("t").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn bad_input_exits_2_with_a_position() {
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("bad.hlo");
    std::fs::write(&m, "HloModule bad\n\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] frobnicate(x)\n}\n").unwrap();
    for cmd in ["minimize", "bisect", "triage"] {
        let o = hlo_diff(&[cmd, m.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("bad.hlo:5:"), "{cmd}: {err}");
    }
    let o = hlo_diff(&["minimize", d.path().join("missing.hlo").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn missing_python_exits_3() {
    let d = tempfile::tempdir().unwrap();
    let (m, ins) = write_case(d.path());
    let o = hlo_diff(&[
        "--python",
        "/nonexistent/python3",
        "bisect",
        &m,
        "--inputs",
        &ins,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
}

/// `triage --repeat N`: the module runs N more times in fresh processes; with an injected
/// divergence (fast min/max drops a NaN) every one of them disagrees with the oracle.
#[test]
fn triage_repeat_counts_fresh_processes_that_disagree() {
    if !need_xla() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("max_nan.hlo");
    std::fs::write(
        &f,
        "HloModule max_nan\n\nENTRY e {\n  x = f32[2] parameter(0)\n  n = f32[] constant(nan)\n  b = f32[2] broadcast(n), dimensions={}\n  ROOT m = f32[2] maximum(x, b)\n}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = hlo_diff(&[
        "triage",
        "--json",
        "--repeat",
        "2",
        "--no-voter",
        "--xla-option",
        "xla_cpu_enable_fast_min_max=true",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &v["modules"][0]["repeat"][0];
    assert_eq!(r["runs"], 2, "{v}");
    assert_eq!(r["disagree_with_oracle"], 2, "{v}");
}

/// The jaxlib release of the project's Python (the one the default backends run).
fn pinned_jaxlib() -> String {
    let o = Command::new(test_support::python())
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('jaxlib'))",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// `repro-bisect --releases`: `--json` has a `releases` object, `--markdown` the section
/// triage includes, text the table; a release pip lacks is "cannot-run"; the pinned release
/// runs with the project's Python (no venv), in a private venv cache.
#[test]
fn repro_bisect_releases_reports_json_markdown_and_cannot_run() {
    if !need_xla() {
        return;
    }
    assert_xla_rewrites_log_exp();
    let d = tempfile::tempdir().unwrap();
    let (m, ins) = write_case(d.path());
    let cache = d.path().join("venvs");
    let pinned = pinned_jaxlib();
    let list = format!("{pinned},0.0.1");
    let args = |extra: &str| {
        let mut a = vec![
            m.clone(),
            "--inputs".into(),
            ins.clone(),
            "--releases".into(),
            list.clone(),
            "--venv-cache".into(),
            cache.display().to_string(),
        ];
        if !extra.is_empty() {
            a.push(extra.into());
        }
        a
    };
    let o = Command::new(env!("CARGO_BIN_EXE_repro-bisect"))
        .args(args("--json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &v["releases"];
    assert_eq!(
        r["candidates"],
        serde_json::json!(["0.0.1", pinned]),
        "{}",
        text(&o)
    );
    let state = |rel: &str| {
        r["tried"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["release"] == rel)
            .map(|t| t["state"].as_str().unwrap().to_string())
    };
    assert_eq!(
        state("0.0.1").as_deref(),
        Some("cannot-run"),
        "{}",
        text(&o)
    );
    assert_eq!(state(&pinned).as_deref(), Some("bad"), "{}", text(&o));
    assert_eq!(r["target"]["kind"], "mismatch");
    assert_eq!(r["direction"], "bad-throughout");
    assert!(
        r["first_bad"].is_null() && r["last_good"].is_null(),
        "{}",
        text(&o)
    );

    let o = Command::new(env!("CARGO_BIN_EXE_repro-bisect"))
        .args(args("--markdown"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "## Release range (xla-cpu)",
        "| 0.0.1 | cannot-run | cannot install",
        &format!("| {pinned} | bad |"),
    ] {
        assert!(md.contains(needle), "markdown lacks {needle}:\n{md}");
    }

    // Bad input: a malformed release list is exit 2, before anything runs.
    let o = Command::new(env!("CARGO_BIN_EXE_repro-bisect"))
        .args([&m, "--releases", "0.4.x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("not a jaxlib release number"),
        "{}",
        text(&o)
    );
}

/// `triage --releases` fills report.md's "Release range" and the module's `releases` in the
/// JSON, searching for the failure the triaged jaxlib shows.
#[test]
fn triage_releases_fill_the_report() {
    if !need_xla() {
        return;
    }
    assert_xla_rewrites_log_exp();
    let d = tempfile::tempdir().unwrap();
    let (m, ins) = write_case(d.path());
    let pinned = pinned_jaxlib();
    let out = d.path().join("triage");
    let o = hlo_diff(&[
        "triage",
        &m,
        "--inputs",
        &ins,
        "--out",
        out.to_str().unwrap(),
        "--releases",
        &format!("0.0.1,{pinned}"),
        "--venv-cache",
        d.path().join("venvs").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &v["modules"][0]["releases"];
    assert_eq!(
        r["target_from"],
        format!("as the triaged jaxlib {pinned} shows it")
    );
    assert_eq!(r["tried"].as_array().map(Vec::len), Some(2), "{}", text(&o));
    let report = std::fs::read_to_string(v["modules"][0]["report"].as_str().unwrap()).unwrap();
    assert!(report.contains("## Release range (xla-cpu)"), "{report}");
    assert!(report.contains("| 0.0.1 | cannot-run |"), "{report}");
    assert!(!report.contains("no release mode"), "{report}");
}

/// The same module as written by hand: instructions over several lines, two on one line, the
/// root tuple's shape left for XLA to infer. `check`, `run`, `bucket` and `repro-bisect` read it
/// as the one-line form (`repro-bisect` still names algsimp).
const LOG_EXP_BY_HAND: &str = r#"HloModule log_exp

ENTRY main {
  x = f32[3] parameter(0) one = f32[] constant(1)
  ones = f32[3] broadcast(one),
      dimensions={}
  y = f32[3] multiply(
      x,
      ones)
  e = f32[3] exponential(y)
  l = f32[3] log(e)
  n = f32[3] negate(x)
  ROOT t = tuple(l, n)
}
"#;

#[test]
fn run_bucket_and_repro_bisect_read_a_hand_formatted_module() {
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("by_hand.hlo");
    std::fs::write(&m, LOG_EXP_BY_HAND).unwrap();
    let ins = d.path().join("inputs.txt");
    std::fs::write(&ins, "f32[3]\t{100, 1, -3}\n").unwrap();
    let (m, ins) = (m.display().to_string(), ins.display().to_string());
    let o = hlo_diff(&["check", &m]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = hlo_diff(&[
        "run",
        &m,
        "--inputs",
        &ins,
        "--backends",
        "interp",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    if !need_xla() {
        return;
    }
    let o = hlo_diff(&["bucket", &m, "--inputs", &ins, "--json"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("bucket --json");
    assert!(v.is_object(), "{}", text(&o));
    let v = repro_bisect_finds_a_bug(&m, &ins);
    assert_eq!(v["culprit"]["pass"], "algsimp", "{v}");
}

/// Triage of a compile crash names where XLA was, as `bucket` and campaigns do: the title says
/// the crash is in the StableHLO -> HLO conversion, the culprit line gives the failed check's
/// place (openxla/xla#47343 on jaxlib 0.10.2, minimized).
#[test]
fn triage_of_a_compile_crash_names_its_stage_and_failed_check() {
    if !need_xla() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let reg = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/regressions");
    let m = reg.join("xla_bug_sdy_sharding_unknown_mesh_abort.hlo");
    let i = reg.join("xla_bug_sdy_sharding_unknown_mesh_abort.lit");
    let out = d.path().join("t");
    let o = hlo_diff(&[
        "triage",
        m.to_str().unwrap(),
        "--inputs",
        i.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(all.contains("(in stablehlo-to-hlo)"), "{all}");
    assert!(
        all.contains("in `stablehlo-to-hlo`, failed check at attribute_exporter.cc:86"),
        "{all}"
    );
}

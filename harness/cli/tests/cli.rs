//! The command-line contract (ARCHITECTURE-BRIEF): exit codes 0/1/2/3, `--json` output with the
//! documented keys, errors naming file:line:col, deterministic `gen`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn hlo_diff() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hlo-diff"))
}

fn repo() -> PathBuf {
    test_support::repo_root()
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("hlo-diff runs");
    (
        status.code().expect("exited, not killed"),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not one JSON object ({e}):\n{stdout}"))
}

#[test]
fn check_names_file_line_and_column_of_a_parse_error_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.hlo");
    std::fs::write(
        &bad,
        "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] frobnicate(p)\n}\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(hlo_diff().arg("check").arg(&bad));
    assert_eq!(code, 2, "{stdout}{stderr}");
    let expected = format!("{}:5:", bad.display());
    assert!(stderr.contains(&expected), "no {expected} in:\n{stderr}");
    assert!(stderr.contains("frobnicate"), "{stderr}");
}

/// `add` declaring `f32[3]` from two `f32[2]` operands: a user's typo, not an XLA bug.
const BAD_SHAPE: &str =
    "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT s = f32[3] add(p, p)\n}\n";

#[test]
fn an_invalid_module_is_bad_input_with_line_and_column_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.hlo");
    std::fs::write(&bad, BAD_SHAPE).unwrap();
    let at = format!("{}:5:8:", bad.display());
    // None of these reaches XLA: the module is refused before anything runs.
    for args in [
        vec!["run", "--backends", "interp,xla-cpu"],
        vec!["run", "--json"],
        vec!["check"],
        vec!["bisect"],
        vec!["minimize"],
        vec!["triage"],
    ] {
        let (code, stdout, stderr) = run(hlo_diff().args(&args).arg(&bad));
        assert_eq!(code, 2, "{args:?}: exit {code}\n{stdout}{stderr}");
        assert!(stderr.contains(&at), "{args:?}: no {at} in:\n{stderr}");
        assert!(!stdout.contains("rejected"), "{args:?}: {stdout}");
    }
}

#[test]
fn check_rejects_binary_junk_and_truncated_text_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.hlo");
    std::fs::write(&junk, [0x7fu8, b'E', b'L', b'F', 0, 0xff, 0xfe, 3, 1]).unwrap();
    let cut = dir.path().join("cut.hlo");
    std::fs::write(
        &cut,
        "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] neg",
    )
    .unwrap();
    let (code, _, stderr) = run(hlo_diff().arg("check").arg(&junk).arg(&cut));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("junk.hlo:1:"), "{stderr}");
    assert!(stderr.contains("cut.hlo:4:"), "{stderr}");
}

#[test]
fn check_passes_a_corpus_dump_directory_and_reports_json_counts() {
    let (code, stdout, stderr) = run(hlo_diff()
        .args(["check", "--json"])
        .arg(repo().join("corpora/jax/passes_narrow")));
    assert_eq!(code, 0, "{stderr}");
    let v = json(&stdout);
    assert!(v["files"].as_u64().unwrap() > 40, "{v}");
    assert_eq!(v["failed"], 0, "{v}");
    assert_eq!(v["ok"], v["files"]);
}

#[test]
fn dump_explains_a_capped_dump_and_a_missing_directory_exits_2() {
    let (code, stdout, _) = run(hlo_diff()
        .args(["dump", "--json"])
        .arg(repo().join("corpora/jax/capped")));
    assert_eq!(code, 0);
    let v = json(&stdout);
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("truncated")),
        "{notes:?}"
    );
    let (code, _, stderr) = run(hlo_diff().args(["dump", "/nonexistent/dump/dir"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("/nonexistent/dump/dir"), "{stderr}");
}

#[test]
fn gen_is_deterministic_byte_for_byte() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for d in [&a, &b] {
        let (code, _, stderr) = run(hlo_diff()
            .args(["gen", "--seed", "41", "--count", "3", "--out"])
            .arg(d.path()));
        assert_eq!(code, 0, "{stderr}");
    }
    for seed in 41..44 {
        let name = format!("gen_{seed}.hlo");
        let x = std::fs::read(a.path().join(&name)).unwrap();
        let y = std::fs::read(b.path().join(&name)).unwrap();
        assert!(!x.is_empty());
        assert_eq!(x, y, "{name} differs between two runs");
    }
}

/// `hlo-diff coverage` reports the structural features (issue #27 item 2) of the generated
/// modules next to the jax reference: none for the default configuration (its knobs are 0),
/// every one for swarm programs (which draw the knobs).
#[test]
fn coverage_reports_structural_features_against_the_reference() {
    let share = |args: &[&str]| {
        let (code, stdout, stderr) = run(hlo_diff().args(args));
        assert_eq!(code, 0, "{stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert!(v["reference_modules"].as_u64().unwrap() >= 60, "{v}");
        v["structural"].clone()
    };
    let default = share(&["coverage", "--count", "100", "--json"]);
    let swarm = share(&["coverage", "--count", "300", "--swarm", "--json"]);
    for f in generators::structure::FEATURES {
        assert_eq!(default[f]["generated_percent"], 0.0, "{f}: {default}");
        assert!(
            swarm[f]["generated_percent"].as_f64().unwrap() > 0.0,
            "{f}: {swarm}"
        );
    }
    // The jax reference has non-default layouts (its library calls' operands).
    assert!(
        swarm["non-default layout"]["reference_percent"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

/// `gen --finding DIR` writes a campaign finding's program again from its recorded seed and
/// per-program configuration (what `gen --swarm` draws for that seed); a finding without the
/// configuration is exit 2 saying so.
#[test]
fn gen_regenerates_a_findings_program_from_its_recorded_configuration() {
    let seed = 977u64;
    let cfg = generators::program_config(&generators::Config::default(), seed);
    let finding = tempfile::tempdir().unwrap();
    let record = serde_json::json!({"meta": {"program_seed": seed, "generator_config": cfg}});
    std::fs::write(finding.path().join("finding.json"), record.to_string()).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (code, _, stderr) = run(hlo_diff()
        .args(["gen", "--finding"])
        .arg(finding.path())
        .arg("--out")
        .arg(a.path()));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(hlo_diff()
        .args([
            "gen",
            "--swarm",
            "--count",
            "1",
            "--seed",
            &seed.to_string(),
            "--out",
        ])
        .arg(b.path()));
    assert_eq!(code, 0, "{stderr}");
    let name = format!("gen_{seed}.hlo");
    let x = std::fs::read_to_string(a.path().join(&name)).unwrap();
    assert_eq!(x, std::fs::read_to_string(b.path().join(&name)).unwrap());
    assert_eq!(
        x,
        hlo::print::module_to_string(&generators::generate_program(seed, &cfg).0)
    );

    let old = serde_json::json!({"meta": {"program_seed": seed}});
    std::fs::write(finding.path().join("finding.json"), old.to_string()).unwrap();
    let (code, _, stderr) = run(hlo_diff()
        .args(["gen", "--finding"])
        .arg(finding.path())
        .arg("--out")
        .arg(a.path()));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("generator_config"), "{stderr}");
}

#[test]
fn run_without_python_exits_3_naming_the_install_command() {
    let (code, stdout, stderr) = run(hlo_diff()
        .args([
            "run",
            "--backends",
            "interp,xla-cpu",
            "--python",
            "/nonexistent/bin/python",
        ])
        .arg(repo().join("corpora/regressions/ok_negate.hlo")));
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(
        stderr.contains("pip install") || stdout.contains("pip install"),
        "{stdout}{stderr}"
    );
}

#[test]
fn run_reports_a_match_verdict_as_json_for_a_simple_module() {
    if std::env::var("HLO_DIFF_SKIP_XLA").as_deref() == Ok("1") {
        return;
    }
    let (code, stdout, stderr) = run(hlo_diff()
        .args(["run", "--json", "--backends", "interp,xla-cpu"])
        .arg(repo().join("corpora/regressions/ok_negate.hlo")));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(json(&stdout)["verdict"], "match", "{stdout}");
}

/// `recheck` tests a stored finding again as a campaign would and says what it was and what it
/// is now: a finding once labelled `oracle` whose XLA bug the labeller now recognizes (a reduce
/// over no dimensions, which XLA replaces by its operand) reads `was mismatch/oracle, now
/// mismatch/xla`, exit 1. A directory without findings is bad input (exit 2).
#[test]
fn recheck_reports_the_stored_and_the_current_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(hlo_diff().arg("recheck").arg(dir.path()));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no finding directories"), "{err}");
    if std::env::var("HLO_DIFF_SKIP_XLA").as_deref() == Ok("1") {
        eprintln!("HLO_DIFF_SKIP_XLA=1: skipping the XLA part");
        return;
    }
    let f = dir
        .path()
        .join("findings")
        .join("mismatch-xla-cpu-0000000000000000");
    std::fs::create_dir_all(&f).unwrap();
    // A known XLA bug (xla-clz-constant-folding) next to the f32[4] parameter the inputs fill.
    std::fs::write(
        f.join("module.hlo"),
        "HloModule recheck_clz\n\nENTRY %main (p: f32[4]) -> (f32[4], s32[3]) {\n  \
         %p = f32[4] parameter(0)\n  %c = s32[3] constant({0, 6, -9})\n  \
         %z = s32[3] count-leading-zeros(%c)\n  ROOT %t = (f32[4], s32[3]) tuple(%p, %z)\n}\n",
    )
    .unwrap();
    let x = hlo::Literal::Array(
        hlo::ArrayLiteral::from_bytes(
            hlo::PrimitiveType::F32,
            vec![4],
            [1.0f32, 2.0, -3.0, 0.5]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        )
        .unwrap(),
    );
    findings::store::write_literals(&f.join("inputs.lit"), &[x]).unwrap();
    std::fs::write(
        f.join("finding.json"),
        r#"{"signature": {"kind": "mismatch", "backend": "xla-cpu", "label": "oracle", "detail": "s32 ops=count-leading-zeros"},
            "meta": {"environment": {"jaxlib": "0.0.0-elsewhere", "cpu": {"features": ["x_feature_of_the_finder"]}}}}"#,
    )
    .unwrap();
    let (code, out, err) = run(hlo_diff().arg("recheck").arg(dir.path()).arg("--jobs=1"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("was mismatch/oracle, now mismatch/xla"),
        "{out}{err}"
    );
    assert!(out.contains("1 findings rechecked"), "{out}");
    // It was stored with another host's environment: a warning says how it differs.
    for w in [
        "found on a host with x_feature_of_the_finder, rechecked on one without",
        "found with jaxlib 0.0.0-elsewhere, rechecked with jaxlib",
    ] {
        assert!(err.contains(w), "no {w:?} in:\n{err}");
    }
}

/// `maximum(x, NaN)`: IEEE gives NaN; with `xla_cpu_enable_fast_min_max=true` XLA CPU gives x.
const MAX_NAN: &str = "HloModule max_nan\n\nENTRY e {\n  x = f32[2] parameter(0)\n  n = f32[] constant(nan)\n  b = f32[2] broadcast(n), dimensions={}\n  ROOT m = f32[2] maximum(x, b)\n}\n";

#[test]
fn run_repeat_counts_fresh_processes_that_disagree() {
    if !test_support::need_xla() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("max_nan.hlo");
    std::fs::write(&f, MAX_NAN).unwrap();
    // Every fresh process agrees with the oracle ...
    let (code, stdout, stderr) = run(hlo_diff().args(["run", "--json", "--repeat", "2"]).arg(&f));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let v = json(&stdout);
    let r = &v["repeat"][0];
    assert_eq!(
        (r["runs"].as_u64(), r["disagree_with_oracle"].as_u64()),
        (Some(2), Some(0)),
        "{v}"
    );
    // ... and with the injected divergence every one of them disagrees.
    let (code, stdout, stderr) = run(hlo_diff()
        .args([
            "run",
            "--json",
            "--repeat",
            "2",
            "--xla-option",
            "xla_cpu_enable_fast_min_max=true",
        ])
        .arg(&f));
    assert_eq!(code, 1, "{stdout}{stderr}");
    let v = json(&stdout);
    assert_eq!(v["verdict"], "mismatch", "{v}");
    let r = &v["repeat"][0];
    assert_eq!(r["disagree_with_oracle"].as_u64(), Some(2), "{v}");
    assert_eq!(r["differ_from_first"].as_u64(), Some(0), "{v}");
}

#[test]
fn run_names_the_allowed_choice_that_explained_a_difference_and_its_size() {
    if !test_support::need_xla() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ftz.hlo");
    std::fs::write(
        &f,
        "HloModule ftz\n\nENTRY e {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT m = f32[] multiply(x, y)\n}\n",
    )
    .unwrap();
    let inputs = dir.path().join("in.txt");
    std::fs::write(&inputs, "f32[]\t1e-45\nf32[]\t1e30\n").unwrap();
    // The set decides (a flushed subnormal is inside it: a match); `--explain` names the
    // choice behind it.
    let (code, stdout, stderr) = run(hlo_diff()
        .arg("run")
        .arg(&f)
        .arg("--inputs")
        .arg(&inputs)
        .arg("--explain"));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("verdict: match"), "{stdout}");
    assert!(stdout.contains("explained (ftz)"), "{stdout}");
    assert!(stdout.contains("max abs 1.401e-15"), "{stdout}");
}

/// `doctor --json`: one object with the environment's keys, this machine's CPU model (as
/// `/proc/cpuinfo` names it) and the jaxlib the worker runs; without a Python it still says what
/// it can, and exits 3 with the install command.
#[test]
fn doctor_reports_versions_cpu_and_gpu_as_json() {
    let (code, stdout, stderr) =
        run(hlo_diff().args(["doctor", "--json", "--python", "/nonexistent/bin/python"]));
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(stderr.contains("pip install"), "{stderr}");
    let v = json(&stdout);
    assert!(
        v["jaxlib"].is_null() && v["cpu"]["features"].is_array(),
        "{v}"
    );

    if !test_support::need_xla() {
        return;
    }
    let (code, stdout, stderr) = run(hlo_diff().args(["doctor", "--json"]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let v = json(&stdout);
    for k in [
        "jax",
        "jaxlib",
        "python",
        "cpu",
        "xla_flags",
        "gpu",
        "oracle_host",
    ] {
        assert!(v.get(k).is_some(), "no {k} in {v}");
    }
    assert!(v["jaxlib"].is_string() && v["jax"].is_string(), "{v}");
    assert!(v["python"]["version"].is_string(), "{v}");
    for k in ["model", "vendor", "cores", "features"] {
        assert!(v["cpu"].get(k).is_some(), "no cpu.{k} in {v}");
    }
    assert!(v["cpu"]["cores"].as_u64().unwrap() >= 1, "{v}");
    assert!(v["gpu"].is_null() || v["gpu"]["name"].is_string(), "{v}");
    assert!(v["oracle_host"]["avx512fp16"].is_boolean(), "{v}");
    assert!(
        v["xla_flags"]["worker_env"]["JAX_PLATFORMS"] == "cpu",
        "{v}"
    );
    if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") {
        let model = info
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, m)| m.trim().to_string());
        if let Some(model) = model {
            assert_eq!(v["cpu"]["model"], model.as_str(), "{v}");
        }
        let fp16 = info.split_whitespace().any(|f| f == "avx512_fp16");
        let listed = v["cpu"]["features"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "avx512_fp16");
        assert_eq!(fp16, listed, "{v}");
    }
    // The text form names the same things.
    let (code, stdout, stderr) = run(hlo_diff().arg("doctor"));
    assert_eq!(code, 0, "{stdout}{stderr}");
    for w in [
        "jaxlib",
        "cpu",
        "features",
        "gpu",
        "oracle host",
        "XLA_FLAGS",
    ] {
        assert!(stdout.contains(w), "no {w} in:\n{stdout}");
    }
}

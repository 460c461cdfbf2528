//! `hlo-diff triage repro.py`: a reporter's Python snippet run with real jax/XLA:CPU, every
//! module it compiled triaged, reports written. Also the input formats users have (NumPy
//! files written by real NumPy, literal proto text) read by `run --inputs`.
//!
//! These tests run the project's Python (`.venv` with jax/jaxlib): without it they fail, unless
//! `HLO_DIFF_SKIP_XLA=1` says to skip them.

use std::path::Path;
use std::process::{Command, Output};
use test_support::{need_xla, python};

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

fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

fn report_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

/// Two jitted functions, one clean (`x * 2`) and one whose `maximum(1, NaN)` XLA:CPU gets wrong
/// under `xla_cpu_enable_fast_min_max=true` (injected divergence): only the second is a bug, it
/// is triaged with the arguments the script really passed (the NaN), and its report carries
/// what a maintainer needs.
#[test]
fn triage_of_a_script_reports_the_one_failing_module_of_several() {
    if !need_xla() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let script = write(
        d.path(),
        "repro.py",
        "import jax, jax.numpy as jnp\n\
         print(jax.jit(lambda x: x * 2)(jnp.arange(4.0)))\n\
         x = jnp.array([1.0, float('nan'), 3.0])\n\
         print(jax.jit(lambda a, b: jnp.maximum(a, b))(jnp.ones(3), x))\n",
    );
    let out = d.path().join("t");
    let o = hlo_diff(&[
        "triage",
        &script,
        "--out",
        out.to_str().unwrap(),
        "--xla-option",
        "xla_cpu_enable_fast_min_max=true",
        "--repeat",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v = report_json(&out);
    assert_eq!(v["bugs"], 1, "{v}");
    assert_eq!(v["script"]["exit_code"], 0, "{v}");
    let modules = v["modules"].as_array().unwrap();
    assert!(modules.len() >= 2, "{v}");
    let bugs: Vec<&serde_json::Value> = modules.iter().filter(|m| m["bug"] == true).collect();
    assert_eq!(bugs.len(), 1, "{v}");
    let bug = bugs[0];
    assert_eq!(bug["verdict"], "mismatch", "{v}");
    assert_eq!(bug["inputs"], "snapshot", "{v}");
    assert_eq!(bug["reproduced"], "2 of 2 on xla-cpu", "{v}");
    assert!(
        modules
            .iter()
            .any(|m| m["bug"] == false && m["verdict"] == "match" && m["inputs"] == "snapshot"),
        "the clean module is triaged with its real inputs too: {v}"
    );
    let report = std::fs::read_to_string(bug["report"].as_str().unwrap()).unwrap();
    for needle in [
        "maximum",
        "jaxlib 0.10.2",
        "- cpu: ",
        "--xla_cpu_enable_fast_min_max=true",
        "## HLO (before_optimizations, minimized)",
        "## Inputs",
        "nan",
        "## Culprit",
        "## Release range",
        "2 of 2 fresh processes",
        "run_hlo_module --platform=CPU",
        "hlo-diff run ",
        "snapshot",
    ] {
        assert!(
            report.contains(needle),
            "{needle:?} missing from:\n{report}"
        );
    }
    // Self-contained: the script, its output, the dump's files of the module.
    let dir = Path::new(bug["repro_dir"].as_str().unwrap());
    assert!(dir.join("original").read_dir().unwrap().count() >= 3);
    assert!(out.join("script/repro.py").is_file());
    assert!(out.join("script/stdout.txt").is_file());
    assert!(out.join("script/run.sh").is_file());
}

/// A multi-device snippet sets `XLA_FLAGS` itself before importing jax (as it must, for
/// `--xla_force_host_platform_device_count`): the script keeps its two devices, triage keeps
/// its dump, the modules it compiled are found and judged, and the report says what the script
/// set.
#[test]
fn a_script_that_sets_xla_flags_itself_keeps_them_and_is_still_dumped() {
    if !need_xla() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let script = write(
        d.path(),
        "sharded.py",
        "import os\n\
         os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=2'\n\
         import jax, jax.numpy as jnp\n\
         from jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n\
         print('devices', len(jax.devices()))\n\
         mesh = Mesh(jax.devices(), ('x',))\n\
         x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P('x')))\n\
         print(jax.jit(lambda x, i: jax.lax.dynamic_slice(x, (i,), (4,)))(x, 3))\n",
    );
    let out = d.path().join("t");
    let o = hlo_diff(&["triage", &script, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = std::fs::read_to_string(out.join("script/stdout.txt")).unwrap();
    assert!(stdout.contains("devices 2"), "{stdout}");
    assert!(stdout.contains("[3. 4. 5. 6.]"), "{stdout}");
    let v = report_json(&out);
    assert_eq!(
        v["script"]["xla_flags_set_by_script"],
        serde_json::json!(["--xla_force_host_platform_device_count=2"]),
        "{v}"
    );
    let modules = v["modules"].as_array().unwrap();
    assert!(
        modules
            .iter()
            .any(|m| m["module"].as_str().unwrap().ends_with("jit__lambda")
                && m["bug"] == false
                && m["verdict"] == "match"
                && m["partitions"] == 2),
        "the sharded module runs on the 2 devices it asked for, and agrees: {v}"
    );
    // run.sh runs it again the same way: the hook is on its PYTHONPATH.
    let rerun = std::fs::read_to_string(out.join("script/run.sh")).unwrap();
    assert!(rerun.contains("pyhook"), "{rerun}");
    assert!(out.join("script/pyhook/sitecustomize.py").is_file());
}

/// A script XLA kills while compiling (the slice of a concatenate with an empty operand aborts
/// in jaxlib 0.10.2 before any HLO is written): a crash report with the stage, the StableHLO the
/// dump kept, and how many fresh runs died the same way.
#[test]
fn triage_of_a_crashing_script_reports_the_crash_stage() {
    if !need_xla() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let script = write(
        d.path(),
        "crash.py",
        "import jax, jax.numpy as jnp\nfrom jax import lax\n\
         @jax.jit\ndef f(a, b):\n    return lax.slice(lax.concatenate([a, b], 0), (1,), (1,))\n\
         print(f(jnp.ones(1), jnp.ones(0)))\n",
    );
    let out = d.path().join("t");
    let o = hlo_diff(&[
        "triage",
        &script,
        "--out",
        out.to_str().unwrap(),
        "--repeat",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v = report_json(&out);
    assert!(v["script"]["signal"].is_number(), "{v}");
    let c = &v["pre_hlo"][0];
    assert_eq!(c["verdict"], "crash", "{v}");
    assert_eq!(c["stage"], "stablehlo-to-hlo", "{v}");
    assert_eq!(
        c["reproduced"],
        "1 of 1 fresh runs of the script ended the same way"
    );
    let report = std::fs::read_to_string(c["report"].as_str().unwrap()).unwrap();
    assert!(report.contains("stablehlo.concatenate"), "{report}");
    assert!(report.contains("SIGABRT"), "{report}");
    assert!(Path::new(c["repro_dir"].as_str().unwrap())
        .join("original/module.mlir")
        .is_file());
}

/// A script that hangs after compiling is killed at the time limit (its process group), and
/// the modules it compiled are still triaged from the dump it left.
#[test]
fn a_hanging_script_is_killed_and_its_dump_triaged() {
    if !need_xla() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let script = write(
        d.path(),
        "hang.py",
        "import time, jax, jax.numpy as jnp\n\
         print(jax.jit(lambda x: -x)(jnp.ones(2)), flush=True)\n\
         time.sleep(600)\n",
    );
    let out = d.path().join("t");
    let o = hlo_diff(&[
        "triage",
        &script,
        "--out",
        out.to_str().unwrap(),
        "--script-timeout",
        "8",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = report_json(&out);
    assert_eq!(v["script"]["timed_out"], true, "{v}");
    assert!(
        v["modules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["verdict"] == "match"),
        "{v}"
    );
}

/// Errors a reporter's script can have are named, with their exit codes, and never become a
/// bug: failing before compiling anything (2), a package the Python lacks (3), a missing script
/// (2), a module XLA rejects (2).
#[test]
fn script_errors_are_named_and_never_a_bug() {
    if !need_xla() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let fail = write(
        d.path(),
        "fail.py",
        "raise ValueError('the reporter\\'s own error')\n",
    );
    let out = d.path().join("t1");
    let o = hlo_diff(&["triage", &fail, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("failed before compiling anything"), "{err}");
    assert!(err.contains("the reporter's own error"), "{err}");
    assert_eq!(report_json(&out)["error"], "failed_before_compiling");

    let missing = write(
        d.path(),
        "missing.py",
        "import jax\nimport surely_not_installed_pkg\n",
    );
    let out = d.path().join("t2");
    let o = hlo_diff(&["triage", &missing, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("`surely_not_installed_pkg`"),
        "{}",
        text(&o)
    );

    let o = hlo_diff(&["triage", d.path().join("nope.py").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));

    // A module XLA rejects (a custom call nobody registered): named, exit 2, not a bug.
    let rejected = write(
        d.path(),
        "rejected.py",
        "import jax, jax.numpy as jnp\n\
         f = jax.ffi.ffi_call('hlo_diff_no_such_target', jax.ShapeDtypeStruct((2,), jnp.float32))\n\
         print(jax.jit(lambda x: f(x))(jnp.ones(2)))\n",
    );
    let out = d.path().join("t3");
    let o = hlo_diff(&["triage", &rejected, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("hlo_diff_no_such_target"),
        "{}",
        text(&o)
    );
    let v = report_json(&out);
    assert_eq!(v["bugs"], 0, "{v}");
    assert!(
        v["modules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["verdict"] == "rejected" && m["bug"] == false),
        "{v}"
    );
}

/// The same inputs saved by real NumPy (`.npy`, `.npz` compressed, float64 narrowed as jax
/// does) and as literal proto text give the same outputs through `run --inputs`.
#[test]
fn run_reads_the_input_formats_users_have() {
    if !need_xla() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let m = write(
        d.path(),
        "m.hlo",
        "HloModule m\n\nENTRY e {\n  x = f32[2,3] parameter(0)\n  y = s32[] parameter(1)\n  \
         c = f32[] convert(y)\n  b = f32[2,3] broadcast(c), dimensions={}\n  ROOT a = f32[2,3] add(x, b)\n}\n",
    );
    let st = Command::new(python())
        .current_dir(d.path())
        .args([
            "-c",
            "import numpy as np\n\
             x = np.asfortranarray(np.arange(6.0).reshape(2, 3))\n\
             np.save('x.npy', x)\n\
             np.savez_compressed('xy.npz', x.astype(np.float32), np.int32(10))\n\
             np.savez('xy_plain.npz', x, np.int64(10))\n",
        ])
        .status()
        .unwrap();
    assert!(st.success());
    write(
        d.path(),
        "xy.pbtxt",
        "iterations {\n  arguments {\n    shape { element_type: F32 dimensions: 2 dimensions: 3 layout { minor_to_major: [1, 0] } }\n    f32s: [0, 1, 2, 3, 4, 5]\n  }\n  arguments { shape { element_type: S32 } s32s: 10 }\n}\n",
    );
    let mut outputs = Vec::new();
    for f in ["xy.npz", "xy_plain.npz", "xy.pbtxt"] {
        let o = hlo_diff(&[
            "run",
            &m,
            "--backends",
            "interp",
            "--json",
            "--inputs",
            d.path().join(f).to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{f}: {}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        outputs.push((
            f,
            v["backends"]["interp"]["outputs"][0]["values"].to_string(),
        ));
    }
    assert_eq!(
        outputs[0].1, r#"["10.0","11.0","12.0","13.0","14.0","15.0"]"#,
        "{outputs:?}"
    );
    assert_eq!(outputs[0].1, outputs[1].1, "{outputs:?}");
    assert_eq!(outputs[0].1, outputs[2].1, "{outputs:?}");
    // A single .npy is one input: the module takes two.
    let o = hlo_diff(&[
        "run",
        &m,
        "--backends",
        "interp",
        "--inputs",
        d.path().join("x.npy").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("2 parameters but 1 inputs"),
        "{}",
        text(&o)
    );
}

/// A script that turns jax's persistent compilation cache on itself would, on its second run,
/// load its executables from the cache and compile (and dump) nothing; triage runs it with the
/// cache disabled, so a second triage still finds its modules.
#[test]
fn jax_compilation_cache_does_not_hide_modules() {
    if !need_xla() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("jax-cache");
    let script = write(
        d.path(),
        "cached.py",
        &format!(
            "import jax, jax.numpy as jnp\n\
             jax.config.update('jax_compilation_cache_dir', {:?})\n\
             jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\n\
             jax.config.update('jax_persistent_cache_min_entry_size_bytes', 0)\n\
             print(jax.jit(lambda x: jnp.sin(x) * 3)(jnp.ones(4)))\n",
            cache.display().to_string()
        ),
    );
    for run in ["first", "second"] {
        let out = d.path().join(run);
        let o = hlo_diff(&["triage", &script, "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{run}: {}", text(&o));
        let v = report_json(&out);
        assert!(
            v["modules"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["module"].as_str().unwrap().ends_with("jit__lambda")),
            "{run}: {v}"
        );
    }
}

/// `recheck --inputs` tests one finding on the given inputs (here a NumPy file) instead of its
/// stored ones: with `[1, 2]` against a NaN, fast min/max drops the NaN on XLA:CPU.
#[test]
fn recheck_takes_inputs_in_any_format() {
    if !need_xla() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("finding");
    std::fs::create_dir(&f).unwrap();
    write(
        &f,
        "module.hlo",
        "HloModule max_nan\n\nENTRY e {\n  x = f32[2] parameter(0)\n  n = f32[] constant(nan)\n  \
         b = f32[2] broadcast(n), dimensions={}\n  ROOT m = f32[2] maximum(x, b)\n}\n",
    );
    let st = Command::new(python())
        .current_dir(d.path())
        .args([
            "-c",
            "import numpy as np; np.save('x.npy', np.array([1.0, 2.0], dtype=np.float32))",
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let x = d.path().join("x.npy");
    let o = hlo_diff(&[
        "recheck",
        f.to_str().unwrap(),
        "--inputs",
        x.to_str().unwrap(),
        "--xla-option",
        "xla_cpu_enable_fast_min_max=true",
        "--no-voter",
    ]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("mismatch"),
        "{}",
        text(&o)
    );
    // One finding only: two are a usage error.
    let g = d.path().join("other");
    std::fs::create_dir(&g).unwrap();
    std::fs::copy(f.join("module.hlo"), g.join("module.hlo")).unwrap();
    let o = hlo_diff(&[
        "recheck",
        f.to_str().unwrap(),
        g.to_str().unwrap(),
        "--inputs",
        x.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

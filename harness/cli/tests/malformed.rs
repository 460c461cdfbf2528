//! Nothing a user supplies crashes hlo-diff or makes it hide a bug (issue 26): malformed inputs
//! and parameter shapes are bad input (exit 2, naming the file), a closed stdout ends it
//! quietly, and registries, stores and directories that would hide something say so. None of
//! these needs XLA (the oracle alone, or no backend).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn hlo_diff() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hlo-diff"))
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("hlo-diff runs");
    (
        status
            .code()
            .unwrap_or_else(|| panic!("killed: {status:?}")),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// `hlo-diff run --backends interp --inputs INPUTS MODULE`.
fn run_on_interp(module: &Path, inputs: &Path) -> (i32, String, String) {
    run(hlo_diff()
        .args(["run", "--backends", "interp", "--inputs"])
        .arg(inputs)
        .arg(module))
}

fn module(dir: &Path, name: &str, shape: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!(
            "HloModule m\n\nENTRY e {{\n  p = {shape} parameter(0)\n  ROOT n = {shape} negate(p)\n}}\n"
        ),
    )
    .unwrap();
    p
}

/// c128[2^60] overflowed the size arithmetic of input generation (a panic); f32[1e11] tried to
/// allocate 400 GB. Both are refused before anything is allocated, exit 2.
#[test]
fn parameters_too_large_to_generate_inputs_for_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    for (shape, why) in [
        (
            "c128[1152921504606846976]",
            "more bytes than can be addressed",
        ),
        ("f32[100000000000]", "over the memory budget"),
    ] {
        let m = module(dir.path(), "m.hlo", shape);
        let (code, out, err) = run(hlo_diff().args(["run", "--backends", "interp"]).arg(&m));
        assert_eq!(code, 2, "{shape}: {out}{err}");
        assert!(err.contains(why) && err.contains(shape), "{shape}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// A literal file declaring c128[2^60] with no data used to be accepted (its size wrapped to
/// 0 bytes), and `run` reported "rejected(execute) on interp [oracle]", exit 1: a bug report
/// for bad input.
#[test]
fn a_literal_file_whose_size_overflows_is_bad_input_not_a_bug() {
    let dir = tempfile::tempdir().unwrap();
    let m = module(dir.path(), "m.hlo", "c128[1152921504606846976]");
    let header = br#"{"literals":[{"array":{"ty":"c128","dims":[1152921504606846976],"offset":0,"bytes":0}}]}"#;
    let mut lit = b"HLODLIT1".to_vec();
    lit.extend((header.len() as u32).to_le_bytes());
    lit.extend(header);
    let inputs = dir.path().join("in.lit");
    std::fs::write(&inputs, lit).unwrap();
    let (code, out, err) = run_on_interp(&m, &inputs);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("in.lit"), "the error names the file: {err}");
}

/// Inputs that do not fit the module's parameters (another shape, another count) are the
/// input file's error, and the message names it (it named neither file nor line before).
#[test]
fn inputs_that_do_not_fit_the_parameters_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let m = module(dir.path(), "m.hlo", "f32[4]");
    for (text, why) in [
        (
            "f32[5]\t{1, 2, 3, 4, 5}\n",
            "input 0 is f32[5] but parameter 0 is f32[4]",
        ),
        (
            "f32[4]\t{1, 2, 3, 4}\nf32[4]\t{1, 2, 3, 4}\n",
            "the module has 1 parameters but 2 inputs were given",
        ),
    ] {
        let inputs = dir.path().join("in.txt");
        std::fs::write(&inputs, text).unwrap();
        let (code, out, err) = run_on_interp(&m, &inputs);
        assert_eq!(code, 2, "{out}{err}");
        assert!(
            err.contains(&format!("{}: {why}", inputs.display())),
            "{err}"
        );
    }
}

/// A non-permutation layout panicked (index out of bounds) or, for [0,0], scrambled the inputs
/// and gave a verdict; a deeply nested proto overflowed the stack. Both are exit 2 naming the
/// file (and, in text, line and column).
#[test]
fn malformed_literal_protos_are_bad_input_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let m = module(dir.path(), "m.hlo", "f32[2,3]");
    for m2m in [
        "7 minor_to_major: 1",
        "-1 minor_to_major: 0",
        "1 minor_to_major: 1",
        "0 minor_to_major: 0",
    ] {
        let inputs = dir.path().join("in.pbtxt");
        std::fs::write(
            &inputs,
            format!("arguments {{\n shape {{ element_type: F32 dimensions: 2 dimensions: 3 layout {{ minor_to_major: {m2m} }} }}\n f32s: [1, 4, 2, 5, 3, 6]\n}}\n"),
        )
        .unwrap();
        let (code, out, err) = run_on_interp(&m, &inputs);
        assert_eq!(code, 2, "{m2m}: {out}{err}");
        assert!(
            err.contains("in.pbtxt") && err.contains("not a permutation"),
            "{err}"
        );
    }
    let deep = 100_000;
    let inputs = dir.path().join("deep.pbtxt");
    std::fs::write(
        &inputs,
        format!("arguments {}{}", "{ a ".repeat(deep), "}".repeat(deep)),
    )
    .unwrap();
    let (code, out, err) = run_on_interp(&m, &inputs);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(&format!("{}:1:", inputs.display())) && err.contains("nested deeper"),
        "{err}"
    );
}

/// `hlo-diff dump --json DIR | head -c10`: the closed pipe panicked (exit 101). Now the process
/// ends as a closed pipe ends `cat` (SIGPIPE), with nothing on stderr.
#[test]
fn a_closed_stdout_ends_quietly() {
    let dump = test_support::repo_root().join("corpora/jax/passes_narrow");
    let dir = tempfile::tempdir().unwrap();
    let m = module(dir.path(), "m.hlo", "f32[2]");
    let cases: Vec<Vec<std::ffi::OsString>> = vec![
        vec!["dump".into(), "--json".into(), dump.clone().into()],
        vec!["dump".into(), dump.into()],
        vec!["check".into(), "--json".into(), m.clone().into()],
        vec![
            "gen".into(),
            "--count".into(),
            "2".into(),
            "--out".into(),
            dir.path().join("gen").into(),
        ],
    ];
    for args in cases {
        let mut child = hlo_diff()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read at most 10 bytes (`head -c10`), then close the pipe.
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 10];
        if args[0] == "dump" {
            stdout.read_exact(&mut first).unwrap();
        }
        drop(stdout);
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            // Killed by SIGPIPE, or done before the pipe closed (small outputs may be).
            assert!(
                status.signal() == Some(13) || status.code() == Some(0),
                "{args:?}: {status:?} {err}"
            );
            if args[0] == "dump" && args.len() == 3 {
                assert_eq!(status.signal(), Some(13), "94 KB of JSON cannot fit: {err}");
            }
        }
        assert!(err.is_empty(), "{args:?}: nothing on stderr: {err}");
    }
}

/// `hlo-diff check DIR 2>&1 | head -c10`: the closed pipe on stderr (the failures are named
/// there) panicked, exit 101. It ends as a closed stdout does, by SIGPIPE.
#[test]
fn a_closed_stderr_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    // 2,000 files that do not parse: more than a pipe holds of messages on stderr.
    for k in 0..2000 {
        std::fs::write(dir.path().join(format!("bad{k}.hlo")), "not HLO\n").unwrap();
    }
    let mut child = hlo_diff()
        .arg("check")
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut first = [0u8; 10];
    stderr.read_exact(&mut first).unwrap();
    drop(stderr);
    let status = child.wait().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(13), "{status:?}");
    }
    #[cfg(not(unix))]
    assert_ne!(status.code(), Some(101), "{status:?}");
}

fn empty_store(dir: &Path) {
    std::fs::create_dir_all(dir.join("findings")).unwrap();
}

fn entry(id: &str, matcher: &str) -> String {
    format!("id = \"{id}\"\ntitle = \"{id}\"\nstatus = \"intended\"\ntext = \"a cited text\"\n\n[match]\n{matcher}")
}

/// A mistyped --registry used to be an empty registry (every bucket NEW); an empty `[match]`
/// claimed every bucket (here as "intended": not a bug at all); `a.TOML` was ignored silently.
#[test]
fn registries_that_would_hide_bugs_are_refused_or_named() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    empty_store(&store);
    let out = dir.path().join("out");
    let merge = |registry: &Path| {
        run(hlo_diff()
            .arg("merge")
            .arg(&store)
            .arg("--out")
            .arg(&out)
            .arg("--registry")
            .arg(registry))
    };
    let missing = dir.path().join("no-such-registry");
    let (code, o, e) = merge(&missing);
    assert_eq!(code, 2, "{o}{e}");
    assert!(e.contains("no-such-registry"), "{e}");

    let reg = dir.path().join("reg");
    std::fs::create_dir_all(&reg).unwrap();
    std::fs::write(reg.join("all.toml"), entry("all", "")).unwrap();
    let (code, o, e) = merge(&reg);
    assert_eq!(code, 2, "{o}{e}");
    assert!(
        e.contains("all.toml") && e.contains("constrains nothing"),
        "{e}"
    );

    std::fs::write(reg.join("all.toml"), entry("all", "kind = \"crash\"\n")).unwrap();
    std::fs::write(reg.join("a.TOML"), entry("a", "kind = \"crash\"\n")).unwrap();
    let (code, o, e) = merge(&reg);
    assert_eq!(code, 0, "{o}{e}");
    assert!(
        e.contains("a.TOML") && e.contains("not a registry entry"),
        "{e}"
    );
}

/// `merge` dropped an unreadable finding.json silently (exit 0) where `fuzz` warns and exits 1.
#[test]
fn merge_reports_unreadable_records_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    empty_store(&store);
    let bad = store.join("findings/mismatch-xla-cpu-0123");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("finding.json"), "{ not json").unwrap();
    let reg = dir.path().join("reg");
    std::fs::create_dir_all(&reg).unwrap();
    let (code, o, e) = run(hlo_diff()
        .arg("merge")
        .arg(&store)
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg("--registry")
        .arg(&reg));
    assert_eq!(code, 1, "{o}{e}");
    assert!(e.contains("mismatch-xla-cpu-0123/finding.json"), "{e}");
    assert!(o.contains("1 unreadable finding records"), "{o}");
}

/// `check DIR` on files that do not follow XLA's dump names checked nothing and said "checked
/// 0 files", exit 0; files more than 16 directories down were dropped silently.
#[test]
fn check_says_what_it_skipped_and_refuses_to_check_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let m = module(dir.path(), "model.txt", "f32[2]");
    let (code, o, e) = run(hlo_diff().arg("check").arg(dir.path()));
    assert_eq!(code, 2, "{o}{e}");
    assert!(
        e.contains("no HLO module to check") && e.contains("model.txt"),
        "{e}"
    );
    // Named, any file is checked.
    let (code, o, e) = run(hlo_diff().arg("check").arg(&m));
    assert_eq!(code, 0, "{o}{e}");

    module(dir.path(), "ok.hlo", "f32[2]");
    let mut deep = dir.path().to_path_buf();
    for k in 0..18 {
        deep = deep.join(format!("d{k}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    module(&deep, "deep.hlo", "f32[2]");
    let (code, o, e) = run(hlo_diff().arg("check").arg(dir.path()));
    assert_eq!(code, 0, "{o}{e}");
    assert!(o.contains("checked 1 files"), "{o}");
    assert!(
        e.contains("skipped 1 files") && e.contains("model.txt"),
        "{e}"
    );
    assert!(e.contains("did not search 1 directories"), "{e}");
    let (_, o, _) = run(hlo_diff().args(["check", "--json"]).arg(dir.path()));
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!(v["skipped"]["files"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["skipped"]["too_deep"].as_array().unwrap().len(), 1, "{v}");
}

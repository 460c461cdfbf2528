//! A bug reporter's Python snippet, run the way they ran it, with XLA dumping what it compiled.
//!
//! [`run_script`] runs the script in a fresh process of the chosen Python, in its own process
//! group, with `XLA_FLAGS` extended by `--xla_dump_to=<triage dir>/dump` (text, large constants
//! kept, `--xla_dump_hlo_snapshots` so every execution also writes its arguments), jax's
//! persistent compilation cache off (a cache hit compiles nothing, so it would dump nothing),
//! `JAX_PLATFORMS` as asked, and a time limit after which the whole process group is killed.
//! A script that sets `XLA_FLAGS` itself (every multi-device CPU snippet sets
//! `--xla_force_host_platform_device_count`) keeps its flags and gains triage's: a
//! `sitecustomize` in `script/pyhook/` (on the script's `PYTHONPATH`) appends them to whatever
//! the script assigns, and logs what it assigned in `script/xla_flags_set_by_script.txt`.
//! Its stdout and stderr go to files in the triage directory; the dump stays whatever happens to
//! the script. This module never imports jax: it only starts the user's program.
//!
//! [`script_modules`] then lists the modules the script compiled (every `before_optimizations`
//! of the dump), each with the arguments of its first execution when XLA wrote a snapshot.

use hlo::dump::DumpIndex;
use hlo::Literal;
use serde::Serialize;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How to run a script.
#[derive(Clone, Debug)]
pub struct ScriptOptions {
    pub python: PathBuf,
    pub script: PathBuf,
    pub args: Vec<String>,
    /// The triage directory: `script/` (a copy of the script, its stdout and stderr, `run.sh`)
    /// and `dump/` are written here.
    pub dir: PathBuf,
    /// `JAX_PLATFORMS` for the script (`cpu`).
    pub platforms: String,
    /// XLA options added to the script's `XLA_FLAGS` (`--name=value`).
    pub xla_options: Vec<(String, String)>,
    pub timeout: Duration,
}

/// What became of the script.
#[derive(Clone, Debug, Serialize)]
pub struct ScriptRun {
    pub script: String,
    /// The copy kept in the triage directory (relative to it).
    pub script_copy: String,
    pub python: String,
    pub args: Vec<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub elapsed_ms: u64,
    /// Files in the triage directory (relative to it).
    pub stdout: String,
    pub stderr: String,
    pub dump_dir: String,
    /// `run.sh`: the script again, with the same environment.
    pub rerun: String,
    /// The environment given to the script (what was set or removed).
    pub xla_flags: String,
    pub jax_platforms: String,
    /// The last lines of stderr.
    pub stderr_tail: String,
    /// A module the script failed to import (`ModuleNotFoundError: No module named 'x'`).
    pub missing_module: Option<String>,
    /// Dump flags this XLA does not know (older releases lack `--xla_dump_large_constants`),
    /// left out of a second run of the script; the first run's stderr is `stderr-first.txt`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_xla_flags: Vec<String>,
    /// What the script itself assigned to `XLA_FLAGS`, in order (triage's flags were appended
    /// to each).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub xla_flags_set_by_script: Vec<String>,
}

/// The `sitecustomize.py` that keeps triage's XLA flags when the script sets `XLA_FLAGS`.
const FLAGS_HOOK: &str = include_str!("script/sitecustomize.py");
/// Where the hook logs the script's own assignments (relative to the triage directory).
const FLAGS_LOG: &str = "script/xla_flags_set_by_script.txt";

/// `script/pyhook/` with the hook written in it, and the script's `PYTHONPATH`: the hook's
/// directory first, then the caller's.
fn install_flags_hook(sdir: &Path) -> Result<(PathBuf, String), String> {
    let hook = sdir.join("pyhook");
    std::fs::create_dir_all(&hook).map_err(|e| format!("{}: {e}", hook.display()))?;
    let file = hook.join("sitecustomize.py");
    std::fs::write(&file, FLAGS_HOOK).map_err(|e| format!("{}: {e}", file.display()))?;
    let hook = std::fs::canonicalize(&hook).unwrap_or(hook);
    let mut path = hook.display().to_string();
    if let Some(p) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
        path.push(':');
        path.push_str(&p.to_string_lossy());
    }
    Ok((hook, path))
}

/// The dump flags triage adds besides `--xla_dump_to`: useful, not needed, so an XLA that does
/// not know one runs without it.
const OPTIONAL_DUMP_FLAGS: [&str; 3] = [
    "xla_dump_hlo_as_text",
    "xla_dump_hlo_snapshots",
    "xla_dump_large_constants",
];

/// The flag names of XLA's "Unknown flags in XLA_FLAGS: --a --b" line in `stderr`.
pub fn unknown_xla_flags(stderr: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in stderr.lines() {
        if let Some((_, rest)) = line.split_once("Unknown flags in XLA_FLAGS:") {
            for f in rest.split_whitespace() {
                let name = f.trim_start_matches('-');
                let name = name.split('=').next().unwrap_or(name).to_string();
                if !name.is_empty() && !out.contains(&name) {
                    out.push(name);
                }
            }
        }
    }
    out
}

impl ScriptRun {
    /// The script ended normally (exit 0, no signal, in time).
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// One line: how the script ended.
    pub fn ending(&self) -> String {
        if self.timed_out {
            format!("was killed at the time limit ({} ms)", self.elapsed_ms)
        } else if let Some(s) = self.signal {
            format!("was killed by {}", engine::backend::signal_name(s))
        } else {
            format!("exited with status {}", self.exit_code.unwrap_or(-1))
        }
    }
}

/// The XLA flags the script runs under: the caller's `XLA_FLAGS`, then the dump flags, then
/// the requested options.
pub fn script_xla_flags(
    dump: &Path,
    xla_options: &[(String, String)],
    dropped: &[String],
) -> String {
    let mut flags: Vec<String> = std::env::var("XLA_FLAGS")
        .ok()
        .map(|f| f.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    flags.push(format!("--xla_dump_to={}", dump.display()));
    flags.extend(
        OPTIONAL_DUMP_FLAGS
            .iter()
            .filter(|f| !dropped.iter().any(|d| d == *f))
            .map(|f| format!("--{f}")),
    );
    flags.extend(xla_options.iter().map(|(k, v)| format!("--{k}={v}")));
    flags.join(" ")
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Runs the script (see the module documentation). `Err` only when the script cannot be
/// started or the triage directory cannot be written. When XLA refuses some of the optional
/// dump flags as unknown (an older jaxlib), the script runs again without them.
pub fn run_script(o: &ScriptOptions) -> Result<ScriptRun, String> {
    let first = run_script_with(o, &[])?;
    let unknown =
        unknown_xla_flags(&std::fs::read_to_string(o.dir.join(&first.stderr)).unwrap_or_default());
    let dropped: Vec<String> = unknown
        .iter()
        .filter(|u| OPTIONAL_DUMP_FLAGS.contains(&u.as_str()))
        .cloned()
        .collect();
    if dropped.is_empty() || dropped.len() != unknown.len() {
        // Nothing of ours, or flags of the caller's too: the script's failure stands.
        return Ok(first);
    }
    let _ = std::fs::rename(
        o.dir.join(&first.stderr),
        o.dir.join("script/stderr-first.txt"),
    );
    let mut again = run_script_with(o, &dropped)?;
    again.dropped_xla_flags = dropped;
    Ok(again)
}

fn run_script_with(o: &ScriptOptions, dropped: &[String]) -> Result<ScriptRun, String> {
    let sdir = o.dir.join("script");
    let dump = o.dir.join("dump");
    std::fs::create_dir_all(&sdir).map_err(|e| format!("{}: {e}", sdir.display()))?;
    // A fresh dump directory: modules of an earlier triage must not be mistaken for this run's.
    if dump.exists() {
        std::fs::remove_dir_all(&dump).map_err(|e| format!("{}: {e}", dump.display()))?;
    }
    std::fs::create_dir_all(&dump).map_err(|e| format!("{}: {e}", dump.display()))?;
    let script =
        std::fs::canonicalize(&o.script).map_err(|e| format!("{}: {e}", o.script.display()))?;
    let name = script
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repro.py".into());
    std::fs::copy(&script, sdir.join(&name)).map_err(|e| format!("{}: {e}", script.display()))?;
    let dump_abs = std::fs::canonicalize(&dump).unwrap_or(dump.clone());
    let flags = script_xla_flags(&dump_abs, &o.xla_options, dropped);
    let (_, pythonpath) = install_flags_hook(&sdir)?;
    let flags_log = o.dir.join(FLAGS_LOG);
    let _ = std::fs::remove_file(&flags_log);
    let flags_log_abs = std::fs::canonicalize(&o.dir)
        .unwrap_or(o.dir.clone())
        .join(FLAGS_LOG);
    let stdout_path = sdir.join("stdout.txt");
    let stderr_path = sdir.join("stderr.txt");
    let out = std::fs::File::create(&stdout_path).map_err(|e| e.to_string())?;
    let err = std::fs::File::create(&stderr_path).map_err(|e| e.to_string())?;
    let cwd = script.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut cmd = Command::new(&o.python);
    cmd.arg(&script)
        .args(&o.args)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .env("XLA_FLAGS", &flags)
        .env("HLO_DIFF_TRIAGE_XLA_FLAGS", &flags)
        .env("HLO_DIFF_TRIAGE_XLA_FLAGS_LOG", &flags_log_abs)
        .env("PYTHONPATH", &pythonpath)
        .env("JAX_PLATFORMS", &o.platforms)
        .env("JAX_ENABLE_COMPILATION_CACHE", "false")
        .env_remove("JAX_COMPILATION_CACHE_DIR")
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONFAULTHANDLER", "1");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    // run.sh: the same run by hand, from the triage directory's copy.
    let rerun_flags = shell_quote(&script_xla_flags(
        Path::new("dump-rerun"),
        &o.xla_options,
        dropped,
    ));
    let rerun = format!(
        "#!/bin/sh\n# Runs the reporter's script again as hlo-diff triage ran it (dumping to ./dump-rerun; pyhook/ keeps these flags when the script sets XLA_FLAGS itself).\ncd \"$(dirname \"$0\")\"\nXLA_FLAGS={rerun_flags} HLO_DIFF_TRIAGE_XLA_FLAGS={rerun_flags} PYTHONPATH=\"$PWD/pyhook${{PYTHONPATH:+:$PYTHONPATH}}\" \\\n  JAX_PLATFORMS={} JAX_ENABLE_COMPILATION_CACHE=false {} {}{}\n",
        shell_quote(&o.platforms),
        shell_quote(&o.python.display().to_string()),
        shell_quote(&name),
        o.args
            .iter()
            .map(|a| format!(" {}", shell_quote(a)))
            .collect::<String>()
    );
    let rerun_path = sdir.join("run.sh");
    std::fs::write(&rerun_path, rerun).map_err(|e| e.to_string())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&rerun_path, std::fs::Permissions::from_mode(0o755));
    }
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", o.python.display()))?;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() >= o.timeout => {
                timed_out = true;
                kill_group(child.id());
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    // Children the script left behind die with it.
    kill_group(child.id());
    let elapsed_ms = start.elapsed().as_millis() as u64;
    let (exit_code, signal) = match status {
        Some(s) => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                (s.code(), s.signal())
            }
            #[cfg(not(unix))]
            {
                (s.code(), None)
            }
        }
        None => (None, None),
    };
    let mut stderr_text = String::new();
    if let Ok(mut f) = std::fs::File::open(&stderr_path) {
        let mut buf = Vec::new();
        let _ = f.read_to_end(&mut buf);
        stderr_text = String::from_utf8_lossy(&buf).into_owned();
    }
    let tail: Vec<&str> = stderr_text.lines().rev().take(30).collect();
    let stderr_tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    Ok(ScriptRun {
        script: script.display().to_string(),
        script_copy: format!("script/{name}"),
        python: o.python.display().to_string(),
        args: o.args.clone(),
        exit_code,
        signal,
        timed_out,
        elapsed_ms,
        stdout: "script/stdout.txt".into(),
        stderr: "script/stderr.txt".into(),
        dump_dir: "dump".into(),
        rerun: "script/run.sh".into(),
        xla_flags: flags,
        jax_platforms: o.platforms.clone(),
        missing_module: missing_module(&stderr_text),
        stderr_tail,
        dropped_xla_flags: Vec::new(),
        xla_flags_set_by_script: std::fs::read_to_string(&flags_log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect(),
    })
}

/// SIGKILL to the process group `pid` leads (the script and whatever it started).
fn kill_group(pid: u32) {
    #[cfg(unix)]
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

/// The module of the last `ModuleNotFoundError: No module named 'x'` in a traceback.
pub fn missing_module(stderr: &str) -> Option<String> {
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("ModuleNotFoundError: No module named "))?;
    let name = line
        .trim_start_matches("ModuleNotFoundError: No module named ")
        .trim()
        .trim_matches(['\'', '"']);
    Some(name.to_string())
}

/// Where a module's inputs came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputsSource {
    /// The arguments of the script's own execution, from XLA's HLO snapshot (the file, relative
    /// to the dump directory).
    Snapshot(String),
    /// Generated with the module's real parameter shapes (why: no snapshot, or it did not fit).
    Generated(String),
}

impl InputsSource {
    pub fn describe(&self) -> String {
        match self {
            InputsSource::Snapshot(f) => {
                format!("the arguments the script really passed (XLA's HLO snapshot `{f}`)")
            }
            InputsSource::Generated(why) => format!(
                "generated with the module's real parameter shapes (seeded), not the script's values: {why}"
            ),
        }
    }
}

/// One module the script compiled.
#[derive(Clone, Debug)]
pub struct ScriptModule {
    pub id: u64,
    /// `module_NNNN.<name>`.
    pub name: String,
    /// Paths relative to the dump directory.
    pub before_optimizations: String,
    pub after_optimizations: Option<String>,
    pub debug_options: Option<String>,
    /// Snapshots of the module's executions, oldest first.
    pub snapshots: Vec<String>,
}

impl ScriptModule {
    /// XLA finished compiling it in the script (it wrote the optimized module).
    pub fn compiled(&self) -> bool {
        self.after_optimizations.is_some()
    }

    /// Every file of the dump that belongs to it and a maintainer may want (the module before
    /// and after optimizations, its options, its first snapshot), relative to the dump.
    pub fn relevant_files(&self) -> Vec<String> {
        let mut v = vec![self.before_optimizations.clone()];
        v.extend(self.after_optimizations.clone());
        v.extend(self.debug_options.clone());
        v.extend(self.snapshots.first().cloned());
        v
    }
}

/// The modules of a script's dump that have a `before_optimizations` text, by id, with their
/// snapshots (`module_NNNN.<name>.snapshot.<n>.pb`, in the order they were written).
pub fn script_modules(dump: &Path, index: &DumpIndex) -> Vec<ScriptModule> {
    let mut snaps: Vec<(u64, std::time::SystemTime, String)> = index
        .files
        .iter()
        .filter(|f| f.path.contains(".snapshot.") && f.path.ends_with(".pb"))
        .filter_map(|f| {
            let t = std::fs::metadata(dump.join(&f.path))
                .and_then(|m| m.modified())
                .ok()?;
            Some((f.module_id?, t, f.path.clone()))
        })
        .collect();
    snaps.sort();
    index
        .modules
        .iter()
        .filter_map(|m| {
            let before = m.before_optimizations.clone()?;
            Some(ScriptModule {
                id: m.id,
                name: format!("module_{:04}.{}", m.id, m.name.clone().unwrap_or_default()),
                before_optimizations: before,
                after_optimizations: m.after_optimizations.values().next().cloned(),
                debug_options: m.debug_options.clone(),
                snapshots: snaps
                    .iter()
                    .filter(|(id, _, _)| *id == m.id)
                    .map(|(_, _, p)| p.clone())
                    .collect(),
            })
        })
        .collect()
}

/// The arguments of a module's first snapshot, when they fit its entry parameters.
pub fn snapshot_inputs(
    dump: &Path,
    m: &ScriptModule,
    module: &hlo::Module,
) -> Result<(Vec<Literal>, String), String> {
    let Some(first) = m.snapshots.first() else {
        return Err("XLA wrote no snapshot of an execution (the module was compiled but not run, or the script ended first)".into());
    };
    let bytes = std::fs::read(dump.join(first)).map_err(|e| format!("{first}: {e}"))?;
    let args =
        findings::inputs::hlo_snapshot_arguments(&bytes).map_err(|e| format!("{first}: {e}"))?;
    let params = module.entry_computation().parameter_shapes();
    if args.len() != params.len() {
        return Err(format!(
            "{first} holds {} arguments for {} parameters",
            args.len(),
            params.len()
        ));
    }
    for (k, (p, a)) in params.iter().zip(&args).enumerate() {
        if !p.compatible(&a.shape()) {
            return Err(format!(
                "{first}: argument {k} is {} but parameter {k} is {p}",
                a.shape()
            ));
        }
    }
    Ok((args, first.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_package_is_named_from_the_traceback() {
        let err = "Traceback (most recent call last):\n  File \"r.py\", line 1, in <module>\n    import flax\nModuleNotFoundError: No module named 'flax'\n";
        assert_eq!(missing_module(err).as_deref(), Some("flax"));
        assert_eq!(missing_module("ValueError: x\n"), None);
    }

    #[test]
    fn dump_flags_follow_the_callers_flags_and_precede_the_options() {
        let f = script_xla_flags(
            Path::new("/d"),
            &[("xla_cpu_enable_fast_min_max".into(), "true".into())],
            &[],
        );
        let dump = f.find("--xla_dump_to=/d").unwrap();
        let opt = f.find("--xla_cpu_enable_fast_min_max=true").unwrap();
        assert!(dump < opt, "{f}");
        assert!(f.contains("--xla_dump_hlo_snapshots"), "{f}");
        let older = script_xla_flags(Path::new("/d"), &[], &["xla_dump_large_constants".into()]);
        assert!(!older.contains("large_constants"), "{older}");
        assert!(older.contains("--xla_dump_to=/d"), "{older}");
    }

    /// jaxlib 0.4.26 aborts at start on flags it does not know, naming them.
    #[test]
    fn unknown_flags_are_read_from_xlas_abort_line() {
        let err = "2026-12-01 20:23:15.302926: F external/xla/xla/parse_flags_from_env.cc:225] Unknown flags in XLA_FLAGS: --xla_dump_large_constants  --xla_dump_hlo_snapshots --xla_dump_large_constants \nFatal Python error: Aborted\n";
        assert_eq!(
            unknown_xla_flags(err),
            vec!["xla_dump_large_constants", "xla_dump_hlo_snapshots"]
        );
        assert!(unknown_xla_flags("Fatal Python error: Aborted").is_empty());
    }
}

/// A module the script started compiling of which the dump holds only the StableHLO
/// (`module_NNNN.<name>/module.mlir`): XLA never wrote its `before_optimizations`.
#[derive(Clone, Debug, Serialize)]
pub struct MlirOnlyModule {
    pub id: u64,
    /// `module_NNNN.<name>`.
    pub name: String,
    /// The folder, relative to the dump directory.
    pub dir: String,
    pub mlir: String,
}

/// The modules of a dump that have a `module.mlir` folder but no `before_optimizations`, by id.
pub fn mlir_only_modules(dump: &Path, index: &DumpIndex) -> Vec<MlirOnlyModule> {
    let Ok(entries) = std::fs::read_dir(dump) else {
        return Vec::new();
    };
    let mut out: Vec<MlirOnlyModule> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let id: u64 = name.strip_prefix("module_")?.get(..4)?.parse().ok()?;
            let mlir = std::fs::read_to_string(e.path().join("module.mlir")).ok()?;
            let has_hlo = index
                .module(id)
                .is_some_and(|m| m.before_optimizations.is_some());
            (!has_hlo).then_some(MlirOnlyModule {
                id,
                dir: name.clone(),
                name,
                mlir,
            })
        })
        .collect();
    out.sort_by_key(|m| m.id);
    out
}

/// StableHLO text without its location table and `loc(...)` suffixes (they name the reporter's
/// files and lines, and are most of the text).
pub fn mlir_without_locations(mlir: &str) -> String {
    let mut s = String::new();
    for line in mlir.lines() {
        if line.starts_with("#loc") {
            continue;
        }
        let l = match line.rfind(" loc(") {
            Some(i) if line.trim_end().ends_with(')') => &line[..i],
            _ => line,
        };
        // `loc("a")` inside a function signature.
        let mut l = l.to_string();
        while let Some(i) = l.find(" loc(\"") {
            let Some(j) = l[i + 6..].find("\")") else {
                break;
            };
            l.replace_range(i..i + 6 + j + 2, "");
        }
        s.push_str(&l);
        s.push('\n');
    }
    s
}

/// Runs the script `n` more times in fresh processes (each with its own dump directory under a
/// temporary directory) and counts the runs that end as `run` did (same signal, or the time
/// limit again).
pub fn rerun_count(o: &ScriptOptions, run: &ScriptRun, n: usize) -> usize {
    let mut same = 0;
    for _ in 0..n {
        let Ok(tmp) = tempfile::tempdir() else {
            break;
        };
        let again = ScriptOptions {
            dir: tmp.path().to_path_buf(),
            ..o.clone()
        };
        if let Ok(r) = run_script(&again) {
            if r.timed_out == run.timed_out
                && r.signal == run.signal
                && r.exit_code == run.exit_code
            {
                same += 1;
            }
        }
    }
    same
}

/// The lines of stderr that say what XLA reported before dying (not Python's own traceback
/// of the fault handler).
pub fn crash_message(stderr_tail: &str) -> String {
    let lines: Vec<&str> = stderr_tail
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.is_empty()
                || t.starts_with("File \"")
                || t.starts_with("Thread 0x")
                || t.starts_with("Current thread")
                || t.starts_with("Extension modules:")
                || t.starts_with("Fatal Python error")
                || t.starts_with("Traceback"))
        })
        .collect();
    let v: Vec<&str> = lines.into_iter().rev().take(6).collect();
    let msg = v.into_iter().rev().collect::<Vec<_>>().join("\n");
    if msg.is_empty() {
        stderr_tail
            .lines()
            .find(|l| l.starts_with("Fatal Python error"))
            .unwrap_or("")
            .to_string()
    } else {
        msg
    }
}

/// What a crash or hang before HLO looks like in `report.json`.
#[derive(Clone, Debug, Serialize)]
pub struct PreHloReport {
    pub module: String,
    pub verdict: String,
    pub stage: String,
    pub title: String,
    pub message: String,
    pub reproduced: String,
    pub repro_dir: String,
    pub report: String,
}

/// Writes `<out>/report.md` (and `original/` with the module's StableHLO and compile options)
/// for a module the script died compiling before XLA wrote any HLO of it.
pub fn write_pre_hlo_report(
    dump: &Path,
    out: &Path,
    m: &MlirOnlyModule,
    run: &ScriptRun,
    reruns: (usize, usize),
    versions: &[(String, String)],
) -> Result<PreHloReport, String> {
    use std::fmt::Write as _;
    let orig = out.join("original");
    std::fs::create_dir_all(&orig).map_err(|e| format!("{}: {e}", orig.display()))?;
    if let Ok(entries) = std::fs::read_dir(dump.join(&m.dir)) {
        for e in entries.flatten() {
            let _ = std::fs::copy(e.path(), orig.join(e.file_name()));
        }
    }
    let hang = run.timed_out;
    let how = if hang {
        "hangs".to_string()
    } else {
        format!(
            "crashes ({})",
            run.signal
                .map(engine::backend::signal_name)
                .unwrap_or_else(|| format!("exit status {}", run.exit_code.unwrap_or(-1)))
        )
    };
    let short = m
        .name
        .split_once('.')
        .map(|x| x.1)
        .unwrap_or(&m.name)
        .to_string();
    let jaxlib = versions
        .iter()
        .find(|(k, _)| k == "jaxlib")
        .map(|(_, v)| format!(" [jaxlib {v}]"))
        .unwrap_or_default();
    let title =
        format!("XLA {how} compiling `{short}` before any HLO pass (StableHLO -> HLO){jaxlib}");
    let message = crash_message(&run.stderr_tail);
    let reproduced = format!(
        "{} of {} fresh runs of the script ended the same way",
        reruns.0, reruns.1
    );
    let mut s = String::new();
    let _ = writeln!(s, "# {title}\n");
    let _ = writeln!(
        s,
        "## Summary\n\nThe reporter's script {} while XLA compiles `{short}`. XLA had dumped the \
         module's StableHLO (`module.mlir`) but not yet its `before_optimizations` HLO, so the \
         failure is in the StableHLO -> HLO stage (MLIR legalization and folding), before any HLO \
         pass ran. hlo-diff runs and minimizes HLO modules, so the module is shown as dumped \
         (locations removed), not minimized.\n",
        if hang { "hangs" } else { "dies" }
    );
    let _ = writeln!(
        s,
        "## Origin\n\n- found by `hlo-diff triage {}{}`: the script {}\n- the dump's module folder: `{}` (copied to `original/`)\n",
        run.script_copy.trim_start_matches("script/"),
        if run.args.is_empty() {
            String::new()
        } else {
            format!(" -- {}", run.args.join(" "))
        },
        run.ending(),
        m.dir
    );
    s.push_str("## Versions\n\n");
    for (k, v) in versions {
        let _ = writeln!(s, "- {k}: {v}");
    }
    let _ = writeln!(
        s,
        "\n## StableHLO (module.mlir)\n\n```mlir\n{}```\n",
        mlir_without_locations(&m.mlir)
    );
    s.push_str(
        "## Inputs\n\nNone needed: the failure happens while compiling, before any execution.\n\n",
    );
    let _ = writeln!(
        s,
        "## Expected vs actual\n\n- expected: the module compiles (or XLA reports an error)\n- actual: the process {how}; stderr ends with:\n\n```\n{}\n```\n",
        message
    );
    let _ = writeln!(
        s,
        "## Culprit\n\n**{} in stage `stablehlo-to-hlo` (after `module.mlir` was dumped, before `before_optimizations`)**\n",
        if hang { "hang" } else { "crash" }
    );
    s.push_str(
        "## Release range\n\nNot determined: XLA died before writing any HLO of this module, so \
         there is no HLO module to run on other releases (`--releases` bisects HLO modules); run \
         the script with `--python` of another jaxlib release to compare.\n\n",
    );
    let _ = writeln!(s, "## Fresh-process reproduction\n\n- {reproduced}\n");
    let _ = writeln!(
        s,
        "## Reproduce\n\n```sh\nsh ../{}   # the reporter's script, as triaged\nrun_hlo_module --platform=CPU --input_format=stablehlo original/module.mlir\n```",
        run.rerun
    );
    let report = out.join("report.md");
    std::fs::write(&report, s).map_err(|e| format!("{}: {e}", report.display()))?;
    Ok(PreHloReport {
        module: m.name.clone(),
        verdict: if hang { "timeout" } else { "crash" }.into(),
        stage: "stablehlo-to-hlo".into(),
        title,
        message,
        reproduced,
        repro_dir: out.display().to_string(),
        report: report.display().to_string(),
    })
}

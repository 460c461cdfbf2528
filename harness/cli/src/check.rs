//! `hlo-diff check PATH...`: parse, verify and round-trip (print, re-parse, compare) every HLO
//! text file; with `--xla`, XLA's own parser must accept our printed text too.
//!
//! In directories, the files taken are the HLO modules by XLA's dump grammar
//! (before/after-optimizations and per-pass snapshots, not buffer-assignment reports) and files
//! ending in `.hlo`; files named on the command line are always taken. What a directory holds
//! that is not taken (other files, directories too deep to search) is counted and named, and a
//! command that finds nothing to check is an error (exit 2), never "checked 0 files".

use super::{print_json, Exit, Failure, Global};
use engine::backend::StageTimeouts;
use engine::worker::{WorkerBackend, WorkerConfig};
use hlo::dump::classify_paths;
use serde::Serialize;
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// HLO text files or directories (searched recursively).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Also have XLA's parser (through the worker) accept our printed text.
    #[arg(long)]
    pub xla: bool,
}

/// One file that did not pass.
#[derive(Clone, Debug, Serialize)]
pub struct CheckFailure {
    pub file: String,
    /// `read`, `parse`, `verify`, `round-trip` or `xla-parse`.
    pub step: &'static str,
    pub message: String,
}

/// What the directories given held that is not checked.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Skipped {
    /// Files whose names are not HLO modules by XLA's dump grammar nor `*.hlo`.
    pub files: Vec<String>,
    /// Directories more than [`hlo::dump::MAX_DUMP_DEPTH`] levels down, not searched.
    pub too_deep: Vec<String>,
}

/// The HLO files under `paths`, in a stable order.
pub fn collect_hlo_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    collect_hlo_files_skipping(paths).map(|(files, _)| files)
}

/// [`collect_hlo_files`] and what it skipped.
pub fn collect_hlo_files_skipping(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Skipped), Failure> {
    let mut out = Vec::new();
    let mut skipped = Skipped::default();
    for p in paths {
        if p.is_dir() {
            let index =
                hlo::dump::read_dump_dir(p).map_err(|e| Failure::bad_input(e.to_string()))?;
            let names: Vec<&str> = index.files.iter().map(|f| f.path.as_str()).collect();
            let kinds = classify_paths(&names);
            for f in &kinds.files {
                if f.kind.is_hlo_text() || f.path.ends_with(".hlo") {
                    out.push(p.join(&f.path));
                } else {
                    skipped.files.push(p.join(&f.path).display().to_string());
                }
            }
            skipped.too_deep.extend(
                index
                    .too_deep
                    .iter()
                    .map(|d| p.join(d).display().to_string()),
            );
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(Failure::bad_input(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    Ok((out, skipped))
}

/// The line saying what was skipped, if anything was.
fn skipped_text(s: &Skipped) -> Option<String> {
    let list = |v: &[String]| {
        let mut t = v.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
        if v.len() > 3 {
            t.push_str(&format!(", and {} more", v.len() - 3));
        }
        t
    };
    let mut parts = Vec::new();
    if !s.files.is_empty() {
        parts.push(format!(
            "skipped {} files whose names are not HLO modules by XLA's dump file names nor \
             *.hlo (name a file to check it anyway): {}",
            s.files.len(),
            list(&s.files)
        ));
    }
    if !s.too_deep.is_empty() {
        parts.push(format!(
            "did not search {} directories more than {} levels down: {}",
            s.too_deep.len(),
            hlo::dump::MAX_DUMP_DEPTH,
            list(&s.too_deep)
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Parses, verifies and round-trips one file; returns the printed text on success.
pub fn check_file(path: &Path) -> Result<String, CheckFailure> {
    let file = path.display().to_string();
    let fail = |step, message: String| CheckFailure {
        file: file.clone(),
        step,
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| fail("read", e.to_string()))?;
    let module =
        hlo::parse::parse_module_bytes(&bytes).map_err(|e| fail("parse", format!("{file}:{e}")))?;
    crate::input::verify(path, &module).map_err(|e| fail("verify", e.message))?;
    let printed = hlo::print::module_to_string(&module);
    let reparsed = hlo::parse::parse_module(&printed).map_err(|e| {
        fail(
            "round-trip",
            format!("{file}: our printed text does not re-parse: <printed>:{e}"),
        )
    })?;
    if reparsed != module {
        return Err(fail(
            "round-trip",
            format!("{file}: print then re-parse gives a different module"),
        ));
    }
    Ok(printed)
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let (files, skipped) = collect_hlo_files_skipping(&args.paths)?;
    if files.is_empty() {
        return Err(Failure::bad_input(format!(
            "{}: no HLO module to check{}",
            args.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            skipped_text(&skipped)
                .map(|t| format!(" ({t})"))
                .unwrap_or_default()
        )));
    }
    let xla = if args.xla {
        let backend = WorkerBackend::xla_cpu(
            WorkerConfig::new(engine::worker::Platform::Cpu)
                .with_python(global.python.clone())
                .with_workers(1),
        );
        if let Err(o) = backend.info() {
            return Err(Failure::infrastructure(format!(
                "--xla needs the XLA worker: {}",
                o
            )));
        }
        Some(backend)
    } else {
        None
    };
    let timeouts = StageTimeouts::default();
    let mut failures = Vec::new();
    for f in &files {
        match check_file(f) {
            Ok(printed) => {
                if let Some(b) = &xla {
                    if let Err(o) = b.xla_parse(&printed, &timeouts) {
                        failures.push(CheckFailure {
                            file: f.display().to_string(),
                            step: "xla-parse",
                            message: format!(
                                "{}: XLA's parser refuses our printed text: {}",
                                f.display(),
                                o
                            ),
                        });
                    }
                }
            }
            Err(e) => failures.push(e),
        }
    }
    let ok = files.len() - failures.len();
    if global.json {
        print_json(&json!({
            "files": files.len(),
            "ok": ok,
            "failed": failures.len(),
            "xla": args.xla,
            "failures": failures,
            "skipped": skipped,
        }));
    } else {
        for e in &failures {
            eprintln!("{} [{}]: {}", e.file, e.step, e.message);
        }
        if let Some(t) = skipped_text(&skipped) {
            eprintln!("{t}");
        }
        outln!(
            "checked {} files{}: {} ok, {} failed",
            files.len(),
            if args.xla { " (with XLA's parser)" } else { "" },
            ok,
            failures.len()
        );
    }
    Ok(if failures.is_empty() {
        Exit::Clean
    } else {
        Exit::BadInput
    })
}

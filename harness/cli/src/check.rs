//! `hlo-diff check PATH...`: parse, verify and round-trip (print, re-parse, compare) every HLO
//! text file; with `--xla`, XLA's own parser must accept our printed text too.
//!
//! In directories, the files taken are the HLO modules by XLA's dump grammar
//! (before/after-optimizations and per-pass snapshots, not buffer-assignment reports) and files
//! ending in `.hlo`; files named on the command line are always taken.

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

/// The HLO files under `paths`, in a stable order.
pub fn collect_hlo_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let index =
                hlo::dump::read_dump_dir(p).map_err(|e| Failure::bad_input(e.to_string()))?;
            let names: Vec<&str> = index.files.iter().map(|f| f.path.as_str()).collect();
            let kinds = classify_paths(&names);
            for f in &kinds.files {
                if f.kind.is_hlo_text() || f.path.ends_with(".hlo") {
                    out.push(p.join(&f.path));
                }
            }
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(Failure::bad_input(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    Ok(out)
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
    let files = collect_hlo_files(&args.paths)?;
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
        }));
    } else {
        for e in &failures {
            eprintln!("{} [{}]: {}", e.file, e.step, e.message);
        }
        println!(
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

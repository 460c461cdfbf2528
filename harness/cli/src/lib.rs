//! The `hlo-diff` and `repro-bisect` command lines. Each subcommand lives in its own file with
//! an `Args` (clap) and a `run(args, &Global) -> Result<Exit, Failure>`; this file only
//! dispatches and turns results into exit codes.
//!
//! Exit codes (the brief's contract): 0 nothing wrong found, 1 a bug was found, 2 bad input or
//! usage, 3 infrastructure missing.

/// `print!` to stdout that ends the process the way the shell expects (killed by SIGPIPE) when
/// stdout is a closed pipe (`hlo-diff dump --json DIR | head`), where `print!` would panic.
/// Every command writes its stdout through this and [`outln!`]. (SIGPIPE itself stays ignored,
/// as Rust sets it: a worker that dies must be a write error on its pipe, never the end of
/// hlo-diff.)
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::write_stdout(format_args!($($arg)*))
    };
}

/// [`out!`] with a newline, as `println!`.
macro_rules! outln {
    () => {
        $crate::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub mod bisect;
pub mod bucket;
pub mod check;
pub mod doctor;
pub mod dump;
pub mod fuzz;
pub mod gen;
pub mod input;
pub mod merge;
pub mod minimize;
pub mod recall;
pub mod recheck;
pub mod run;
pub mod semantics;
pub mod time_to_bug;
pub mod triage;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Writes to stdout; a closed pipe ends the process quietly, as killed by SIGPIPE (exit status
/// 141 in a shell), any other write error ends it with a message (exit 2).
pub fn write_stdout(args: std::fmt::Arguments) {
    use std::io::Write;
    let Err(e) = std::io::stdout().lock().write_fmt(args) else {
        return;
    };
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        die_of_sigpipe();
    }
    eprintln!("hlo-diff: writing to stdout: {e}");
    std::process::exit(Exit::BadInput as i32);
}

/// Makes writing to a closed stderr end the process as [`write_stdout`] does on a closed stdout
/// (`hlo-diff check DIR 2>&1 | head` panicked, exit 101). `eprintln!`, wherever it runs (this
/// crate, the harness libraries, worker threads), panics with `failed printing to stderr:
/// <error>` when the write fails; this panic hook turns that panic, on a broken pipe, into the
/// death by SIGPIPE a shell expects. Every other panic goes to the hook installed before.
/// Both binaries call it first.
pub fn end_quietly_on_closed_pipes() {
    let broken_pipe = format!(": {}", std::io::Error::from_raw_os_error(libc::EPIPE));
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload_as_str().is_some_and(|m| {
            m.starts_with("failed printing to std") && m.ends_with(broken_pipe.as_str())
        }) {
            die_of_sigpipe();
        }
        previous(info)
    }));
}

/// Ends the process as a closed pipe ends a program that does not ignore SIGPIPE.
fn die_of_sigpipe() -> ! {
    #[cfg(unix)]
    // SAFETY: signal and raise with a valid signal number and SIG_DFL; nothing else runs on
    // this thread meanwhile and the process ends here.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + 13)
}

/// What a command came to, as an exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Nothing wrong was found.
    Clean = 0,
    /// A bug was found (mismatch, crash, valid module rejected).
    BugFound = 1,
    /// Bad input or usage.
    BadInput = 2,
    /// Python, jaxlib or a GPU is missing.
    Infrastructure = 3,
}

/// A command that could not do its work: the exit code and the message for stderr.
#[derive(Debug)]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl Failure {
    pub fn bad_input(message: impl Into<String>) -> Failure {
        Failure {
            exit: Exit::BadInput,
            message: message.into(),
        }
    }
    pub fn infrastructure(message: impl Into<String>) -> Failure {
        Failure {
            exit: Exit::Infrastructure,
            message: message.into(),
        }
    }
}

/// Options every subcommand takes.
#[derive(Clone, Debug, clap::Args)]
pub struct Global {
    /// Machine-readable output: one JSON object on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// The Python whose jax/jaxlib to use (default: $HLO_DIFF_PYTHON, else the project's .venv).
    #[arg(long, global = true, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// The PJRT C API plugin the `pjrt` backend loads (a .so exporting GetPjrtApi; default:
    /// $HLO_DIFF_PJRT_PLUGIN, else the CPU plugin scripts/setup installs in .pjrt/cpu/).
    #[arg(long, global = true, value_name = "PATH")]
    pub pjrt_plugin: Option<PathBuf>,
}

#[derive(Debug, Parser)]
#[command(
    name = "hlo-diff",
    version,
    args_override_self = true,
    about = "Differential testing of the XLA compiler: generate, run, compare, minimize, bisect"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one module on several backends (default interp,xla-cpu) and print the verdict.
    Run(run::Args),
    /// A differential campaign: generate, run, compare, store findings, report.
    Fuzz(fuzz::Args),
    /// Parse, verify and round-trip HLO text files (directories: recursively, by XLA's dump grammar).
    Check(check::Args),
    /// Explain an XLA dump directory: modules, files by kind, stages, pass timelines.
    Dump(dump::Args),
    /// Write generated modules, one per file.
    Gen(gen::Args),
    /// Opcode histogram over generated modules.
    Coverage(gen::CoverageArgs),
    /// Minimize a finding (a finding directory, or FILE with --inputs) into a repro directory.
    Minimize(minimize::Args),
    /// Name the XLA pass that changed a module's result (as `repro-bisect`).
    Bisect(bisect::Args),
    /// Triage a bug report (a dump directory or an HLO file): run, minimize, bisect, report.
    Triage(triage::Args),
    /// Test stored findings again, as a campaign would, with the current build and jaxlib.
    Recheck(recheck::Args),
    /// The root-cause bucket of a module or finding, and whether the known-bug registry knows it.
    Bucket(bucket::Args),
    /// Fold several campaigns' stores (shards) into one store and one report.
    Merge(merge::Args),
    /// When each known bug and each NEW bucket was first hit, over campaigns' reports.
    TimeToBug(time_to_bug::Args),
    /// The environment results depend on: jax/jaxlib/Python versions, CPU model and vector
    /// features, XLA flags, GPU, the host the oracle imitates.
    Doctor(doctor::Args),
    /// How much of what a wrong XLA could return the judge proves wrong: real XLA results
    /// perturbed (ulps, zero signs, NaNs, moved elements, dropped updates) and judged.
    Recall(recall::Args),
    /// XLA's semantics as the judge reads them: per opcode and element type, what a result
    /// may be, with its sources (`--markdown`: docs/semantics.md).
    Semantics(semantics::Args),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<Exit, Failure> {
    if let Some(p) = &cli.global.pjrt_plugin {
        // `--pjrt-plugin` is the command line's spelling of HLO_DIFF_PJRT_PLUGIN: every `pjrt`
        // backend this process (and its children) makes loads that plugin. Set before any
        // thread starts.
        let p = std::path::absolute(p).unwrap_or_else(|_| p.clone());
        std::env::set_var("HLO_DIFF_PJRT_PLUGIN", p);
    }
    match cli.command {
        Command::Run(a) => run::run(a, &cli.global),
        Command::Fuzz(a) => fuzz::run(a, &cli.global),
        Command::Check(a) => check::run(a, &cli.global),
        Command::Dump(a) => dump::run(a, &cli.global),
        Command::Gen(a) => gen::run(a, &cli.global),
        Command::Coverage(a) => gen::coverage(a, &cli.global),
        Command::Minimize(a) => minimize::run(a, &cli.global),
        Command::Bisect(a) => bisect::run(a, &cli.global),
        Command::Triage(a) => triage::run(a, &cli.global),
        Command::Recheck(a) => recheck::run(a, &cli.global),
        Command::Bucket(a) => bucket::run(a, &cli.global),
        Command::Merge(a) => merge::run(a, &cli.global),
        Command::TimeToBug(a) => time_to_bug::run(a, &cli.global),
        Command::Doctor(a) => doctor::run(a, &cli.global),
        Command::Recall(a) => recall::run(a, &cli.global),
        Command::Semantics(a) => semantics::run(a, &cli.global),
    }
}

/// Prints a JSON value on stdout (the `--json` contract: one object).
pub fn print_json(value: &serde_json::Value) {
    outln!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".into())
    );
}

/// Turns a command's result into the process exit code, printing a failure's message.
pub fn finish(result: Result<Exit, Failure>) -> std::process::ExitCode {
    match result {
        Ok(exit) => std::process::ExitCode::from(exit as u8),
        Err(f) => {
            eprintln!("error: {}", f.message);
            std::process::ExitCode::from(f.exit as u8)
        }
    }
}

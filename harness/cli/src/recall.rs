//! `hlo-diff recall`: how much of what a wrong XLA could return the judge proves wrong. Real XLA
//! CPU results of generated modules (the default campaign's programs) and of corpus modules
//! are perturbed (k ulps at one element, the sign of a zero, NaN to a number and back, a moved
//! element, a dropped scatter update, a changed row of a decomposition) and judged as XLA's;
//! the report gives the share proven wrong by fault, op family and element type, the judge's
//! resolution per family, and the same faults scored by `run_hlo_module`'s and
//! `hlo_isolation`'s fixed tolerances ([`tools::recall`]).
//!
//! Exit 0, also when a goal is missed (the report says so); 2 for bad arguments; 3 without
//! XLA.

use super::{print_json, Exit, Failure, Global};
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use std::path::PathBuf;
use tools::recall::{measure, subjects, RecallConfig};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Generated programs: the default campaign's programs of this many module indices.
    #[arg(long, default_value_t = 150)]
    pub count: u64,
    /// The campaign seed they are drawn with.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Module files or directories (e.g. corpora/jax/dump) to perturb too, on seeded plain
    /// inputs (repeatable).
    #[arg(long, value_name = "PATH")]
    pub corpus: Vec<PathBuf>,
    /// Random sites per output leaf.
    #[arg(long, default_value_t = 2)]
    pub sites: usize,
    /// Write the markdown report here (besides printing it).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Keep the modules whose unperturbed result is a finding or unproven, or with a fault the
    /// judge missed, in this directory (`<n>.hlo`, `<n>.lit`), to look at each with `hlo-diff
    /// run`.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let mut command = format!(
        "hlo-diff recall --count {} --seed {}",
        args.count, args.seed
    );
    for c in &args.corpus {
        command.push_str(&format!(" --corpus {}", c.display()));
    }
    if args.sites != 2 {
        command.push_str(&format!(" --sites {}", args.sites));
    }
    let cfg = RecallConfig {
        seed: args.seed,
        count: args.count,
        corpus: args.corpus.clone(),
        sites: args.sites.max(1),
        command,
        keep: args.keep.clone(),
        ..RecallConfig::default()
    };
    let subjects = subjects(&cfg).map_err(Failure::bad_input)?;
    let jobs = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let xla = WorkerBackend::xla_cpu(
        WorkerConfig::new(Platform::Cpu)
            .with_python(global.python.clone())
            .with_workers(jobs),
    );
    if let Err(o) = xla.info() {
        return Err(Failure::infrastructure(format!("xla-cpu: {o}")));
    }
    let report = measure(&cfg, &subjects, &xla);
    let md = report.markdown();
    if let Some(p) = &args.out {
        std::fs::write(p, &md).map_err(|e| Failure::bad_input(format!("{}: {e}", p.display())))?;
    }
    if global.json {
        print_json(&serde_json::to_value(&report).unwrap_or_default());
    } else {
        out!("{md}");
    }
    Ok(Exit::Clean)
}

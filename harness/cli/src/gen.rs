//! `hlo-diff gen`: write generated modules, one per file; `hlo-diff coverage`: the opcode
//! histogram over many generated modules.

use super::{print_json, Exit, Failure, Global};
use generators::Config;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The generator configuration: defaults, or a JSON file of `generators::Config`.
#[derive(Debug, Clone, clap::Args)]
pub struct GenConfigArgs {
    /// A JSON file holding a generator `Config` (any field left out takes its default).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Swarm mode: each seed draws its own configuration within the given one, as a
    /// campaign's programs do (`generators::program_config`: random subsets of op families and
    /// types, extents, rank, large-op and realistic-pattern shares).
    #[arg(long)]
    pub swarm: bool,
}

impl GenConfigArgs {
    /// The configuration for one seed.
    pub fn config_for(&self, base: &Config, seed: u64) -> Config {
        tools::campaign::program_config(base, seed, self.swarm)
    }

    pub fn load(&self) -> Result<Config, Failure> {
        match &self.config {
            None => Ok(Config::default()),
            Some(p) => load_config(p),
        }
    }
}

fn load_config(p: &Path) -> Result<Config, Failure> {
    let text = std::fs::read_to_string(p)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", p.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        Failure::bad_input(format!(
            "{}:{}:{}: not a generator config: {e}",
            p.display(),
            e.line(),
            e.column()
        ))
    })
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// First seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// How many modules.
    #[arg(long, default_value_t = 10)]
    pub count: u64,
    /// Output directory (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Generate the program of a campaign finding again, from its `finding.json`
    /// (`meta.program_seed` and `meta.generator_config`), instead of `--seed`/`--count`.
    #[arg(long, value_name = "FINDING_DIR", conflicts_with_all = ["seed", "count", "config", "swarm"])]
    pub finding: Option<PathBuf>,
    #[command(flatten)]
    pub gen: GenConfigArgs,
}

/// A finding's program seed and generator configuration, from its `finding.json`.
fn finding_program(dir: &Path) -> Result<(u64, Config), Failure> {
    let path = dir.join("finding.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))?;
    let meta = &v["meta"];
    let seed = meta["program_seed"].as_u64().ok_or_else(|| {
        Failure::bad_input(format!(
            "{}: no meta.program_seed (not a campaign finding)",
            path.display()
        ))
    })?;
    let cfg = match meta.get("generator_config") {
        Some(c) => serde_json::from_value(c.clone()).map_err(|e| {
            Failure::bad_input(format!("{}: meta.generator_config: {e}", path.display()))
        })?,
        None => {
            return Err(Failure::bad_input(format!(
                "{}: no meta.generator_config (found before configurations were recorded)",
                path.display()
            )))
        }
    };
    Ok((seed, cfg))
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let base = args.gen.load()?;
    let from_finding = args.finding.as_deref().map(finding_program).transpose()?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", args.out.display())))?;
    let mut files = Vec::new();
    let seeds = match &from_finding {
        Some((seed, _)) => *seed..seed.saturating_add(1),
        None => args.seed..args.seed.saturating_add(args.count),
    };
    for seed in seeds {
        let cfg = match &from_finding {
            Some((_, cfg)) => cfg.clone(),
            None => args.gen.config_for(&base, seed),
        };
        let (module, _) = generators::generate_program(seed, &cfg);
        let path = args.out.join(format!("gen_{seed}.hlo"));
        std::fs::write(&path, hlo::print::module_to_string(&module))
            .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))?;
        files.push(path.display().to_string());
    }
    if global.json {
        print_json(&json!({ "files": files }));
    } else {
        outln!("wrote {} modules to {}", files.len(), args.out.display());
    }
    Ok(Exit::Clean)
}

#[derive(Debug, clap::Args)]
pub struct CoverageArgs {
    /// First seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// How many modules.
    #[arg(long, default_value_t = 10_000)]
    pub count: u64,
    /// Also run N programs on XLA CPU (those of a `--pack 1` campaign with this `--seed`) and
    /// count what XLA made of them (fusion kinds, library fusions and calls, ops that survive,
    /// ...), against the reference set of real jax programs.
    #[arg(long, value_name = "N")]
    pub xla: Option<u64>,
    /// The reference set: a dump directory of real programs (`*cpu_after_optimizations.txt`
    /// for `--xla`, `*before_optimizations.txt` for the structural features).
    #[arg(long, value_name = "DIR")]
    pub reference: Option<PathBuf>,
    /// Programs run on XLA at once (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub gen: GenConfigArgs,
}

pub fn coverage(args: CoverageArgs, global: &Global) -> Result<Exit, Failure> {
    let base = args.gen.load()?;
    if let Some(n) = args.xla {
        return xla_coverage(&args, &base, n, global);
    }
    let mut hist = std::collections::BTreeMap::new();
    let mut features = std::collections::BTreeMap::<&str, u64>::new();
    for seed in args.seed..args.seed.saturating_add(args.count) {
        let cfg = args.gen.config_for(&base, seed);
        let m = generators::generate_from_seed(seed, &cfg);
        for (op, n) in m.opcode_histogram() {
            *hist.entry(op).or_insert(0usize) += n;
        }
        for f in generators::structure::features(&m) {
            *features.entry(f).or_default() += 1;
        }
    }
    let total: usize = hist.values().sum();
    let ref_dir = args
        .reference
        .clone()
        .unwrap_or_else(tools::xla_coverage::default_reference_dir);
    let (ref_modules, ref_features) = reference_features(&ref_dir);
    let pct = |n: u64, of: u64| {
        if of == 0 {
            0.0
        } else {
            100.0 * n as f64 / of as f64
        }
    };
    let structural: Vec<(&str, f64, f64)> = generators::structure::FEATURES
        .iter()
        .map(|f| {
            (
                *f,
                pct(features.get(f).copied().unwrap_or(0), args.count),
                pct(ref_features.get(f).copied().unwrap_or(0), ref_modules),
            )
        })
        .collect();
    if global.json {
        let ops: serde_json::Map<String, serde_json::Value> = hist
            .iter()
            .map(|(op, n)| (op.name().to_string(), json!(n)))
            .collect();
        let st: serde_json::Map<String, serde_json::Value> = structural
            .iter()
            .map(|(f, g, r)| {
                (
                    f.to_string(),
                    json!({ "generated_percent": g, "reference_percent": r }),
                )
            })
            .collect();
        print_json(&json!({
            "modules": args.count,
            "distinct_opcodes": hist.len(),
            "instructions": total,
            "opcodes": ops,
            "structural": st,
            "reference_modules": ref_modules,
            "reference_dir": ref_dir.display().to_string(),
        }));
    } else {
        let mut rows: Vec<_> = hist.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let widest = rows.first().map_or(1, |r| *r.1).max(1);
        for (op, n) in &rows {
            let bar = "#".repeat(((**n as f64 / widest as f64) * 40.0).ceil() as usize);
            outln!("{:<28} {:>9} {}", op.name(), n, bar);
        }
        outln!(
            "{} distinct opcodes, {} instructions over {} modules",
            hist.len(),
            total,
            args.count
        );
        outln!();
        outln!(
            "{:<44} {:>10} {:>10}",
            "structural feature (share of modules)",
            "generated",
            "reference"
        );
        for (f, g, r) in &structural {
            outln!("{f:<44} {g:>9.1}% {r:>9.1}%");
        }
        outln!(
            "reference: the {ref_modules} before_optimizations modules of {}",
            ref_dir.display()
        );
    }
    Ok(Exit::Clean)
}

/// The structural features (`generators::structure::features`) of the reference set's
/// `*before_optimizations.txt` modules: how many modules were read, and how many have each.
/// A file our parser cannot read is left out of both counts.
fn reference_features(dir: &Path) -> (u64, std::collections::BTreeMap<&'static str, u64>) {
    let mut counts = std::collections::BTreeMap::new();
    let mut modules = 0;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (0, counts);
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("before_optimizations.txt"))
        })
        .collect();
    files.sort();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(m) = hlo::parse::parse_module(&text) else {
            continue;
        };
        modules += 1;
        for feat in generators::structure::features(&m) {
            *counts.entry(feat).or_default() += 1;
        }
    }
    (modules, counts)
}

/// `coverage --xla N`: what XLA CPU made of N generated programs, against the reference set.
fn xla_coverage(
    args: &CoverageArgs,
    base: &Config,
    n: u64,
    global: &Global,
) -> Result<Exit, Failure> {
    use tools::xla_coverage as xc;
    let ref_dir = args
        .reference
        .clone()
        .unwrap_or_else(xc::default_reference_dir);
    let reference = xc::reference_table(&ref_dir)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", ref_dir.display())))?;
    if reference.modules == 0 {
        return Err(Failure::bad_input(format!(
            "{}: no *cpu_after_optimizations.txt files",
            ref_dir.display()
        )));
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1);
    let backend = engine::worker::WorkerBackend::xla_cpu(
        engine::worker::WorkerConfig::new(engine::worker::Platform::Cpu)
            .with_python(global.python.clone())
            .with_workers(jobs),
    );
    if let Err(o) = backend.info() {
        return Err(Failure::infrastructure(format!("xla-cpu: {o}")));
    }
    let started = std::time::Instant::now();
    let generated = xc::measure_generated(&backend, args.seed, n, base, args.gen.swarm, jobs);
    let secs = started.elapsed().as_secs_f64();
    let rows = xc::compare(&generated.table, &reference);
    let below: Vec<&xc::Row> = rows
        .iter()
        .filter(|r| r.reference_percent > 0.0 && r.generated_percent < 1.0)
        .collect();
    if global.json {
        print_json(&json!({
            "programs": n,
            "seed": args.seed,
            "swarm": args.gen.swarm,
            "seconds": secs,
            "generated": generated,
            "reference": reference,
            "reference_dir": ref_dir.display().to_string(),
            "rows": rows,
            "reference_categories_below_1_percent": below.iter().map(|r| &r.category).collect::<Vec<_>>(),
        }));
        return Ok(Exit::Clean);
    }
    outln!(
        "{:<44} {:>10} {:>10}",
        "category (share of modules reaching it)",
        "generated",
        "reference"
    );
    for r in &rows {
        let mark = if r.reference_percent > 0.0 && r.generated_percent < 1.0 {
            "  < 1%"
        } else {
            ""
        };
        outln!(
            "{:<44} {:>9.1}% {:>9.1}%{mark}",
            r.category,
            r.generated_percent,
            r.reference_percent
        );
    }
    outln!(
        "generated: {} programs compiled by XLA CPU of {n} (seed {}, {}), {:.0} s; reference: {} modules of {}",
        generated.table.modules,
        args.seed,
        if args.gen.swarm { "swarm per program" } else { "one configuration" },
        secs,
        reference.modules,
        ref_dir.display()
    );
    if !generated.not_compiled.is_empty() {
        outln!("not run to completion: {:?}", generated.not_compiled);
    }
    for u in generated
        .table
        .unreadable
        .iter()
        .chain(&reference.unreadable)
    {
        outln!("unreadable optimized module: {u}");
    }
    outln!(
        "{} of {} reference categories reached by at least 1% of generated modules",
        rows.iter()
            .filter(|r| r.reference_percent > 0.0 && r.generated_percent >= 1.0)
            .count(),
        rows.iter().filter(|r| r.reference_percent > 0.0).count()
    );
    Ok(Exit::Clean)
}

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
    /// Swarm mode: each seed draws its own configuration (random subsets of op families and types).
    #[arg(long)]
    pub swarm: bool,
}

impl GenConfigArgs {
    /// The configuration for one seed.
    pub fn config_for(&self, base: &Config, seed: u64) -> Config {
        if self.swarm {
            generators::swarm_config(seed)
        } else {
            base.clone()
        }
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
    #[command(flatten)]
    pub gen: GenConfigArgs,
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let base = args.gen.load()?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", args.out.display())))?;
    let mut files = Vec::new();
    for seed in args.seed..args.seed.saturating_add(args.count) {
        let cfg = args.gen.config_for(&base, seed);
        let module = generators::generate_from_seed(seed, &cfg);
        let path = args.out.join(format!("gen_{seed}.hlo"));
        std::fs::write(&path, hlo::print::module_to_string(&module))
            .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))?;
        files.push(path.display().to_string());
    }
    if global.json {
        print_json(&json!({ "files": files }));
    } else {
        println!("wrote {} modules to {}", files.len(), args.out.display());
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
    #[command(flatten)]
    pub gen: GenConfigArgs,
}

pub fn coverage(args: CoverageArgs, global: &Global) -> Result<Exit, Failure> {
    let base = args.gen.load()?;
    let mut hist = std::collections::BTreeMap::new();
    for seed in args.seed..args.seed.saturating_add(args.count) {
        let cfg = args.gen.config_for(&base, seed);
        for (op, n) in generators::generate_from_seed(seed, &cfg).opcode_histogram() {
            *hist.entry(op).or_insert(0usize) += n;
        }
    }
    let total: usize = hist.values().sum();
    if global.json {
        let ops: serde_json::Map<String, serde_json::Value> = hist
            .iter()
            .map(|(op, n)| (op.name().to_string(), json!(n)))
            .collect();
        print_json(&json!({
            "modules": args.count,
            "distinct_opcodes": hist.len(),
            "instructions": total,
            "opcodes": ops,
        }));
    } else {
        let mut rows: Vec<_> = hist.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let widest = rows.first().map_or(1, |r| *r.1).max(1);
        for (op, n) in &rows {
            let bar = "#".repeat(((**n as f64 / widest as f64) * 40.0).ceil() as usize);
            println!("{:<28} {:>9} {}", op.name(), n, bar);
        }
        println!(
            "{} distinct opcodes, {} instructions over {} modules",
            hist.len(),
            total,
            args.count
        );
    }
    Ok(Exit::Clean)
}

//! `hlo-diff fuzz`: a differential campaign (see [`tools::campaign`]).
//!
//! Stops at `--time` or after `--iterations` modules (a total over a resumed campaign), writes
//! findings, `campaign.json` and the reports under `--out`, then minimizes and buckets the new
//! findings (a share of `--time`, or `--minimize-time`) and prints the summary; everything,
//! start-up and reports included, ends within `--time`. Exit 1 when a bucket is NEW (no
//! registry entry and no `--history` knows it) or a finding is left unbucketed (it may be NEW:
//! the first line says so, with the command that finishes it, `--finish`);
//! `--fail-on-any-finding` makes any finding exit 1.

use super::{print_json, Exit, Failure, Global};
use findings::store::Store;
use std::path::PathBuf;
use std::time::Duration;
use tools::campaign::{campaign_timeouts, run_campaign, CampaignConfig, CampaignError, Stop};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Wall-clock limit: `90`, `30s`, `10m`, `2h`.
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Modules to test in all (a resumed campaign continues up to this many).
    #[arg(long)]
    pub iterations: Option<u64>,
    /// Comma-separated backends: interp (the oracle) and xla-cpu / xla-gpu; stablehlo-ref is
    /// the voter on mismatches (on by default).
    #[arg(long, default_value = "interp,xla-cpu", value_delimiter = ',')]
    pub backends: Vec<String>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Parallel jobs (one XLA worker each); default: the number of cores.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// `I/N`: this process tests module indices g with g % N == I.
    #[arg(long, default_value = "0/1", value_parser = parse_shard)]
    pub shard: (u64, u64),
    /// Output directory (findings, campaign.json, report.json/html/md). Reusing it resumes.
    #[arg(long, default_value = "hlo-diff-out")]
    pub out: PathBuf,
    /// An XLA DebugOptions field for every compile, `name=value` (repeatable).
    #[arg(long = "xla-option", value_name = "NAME=VALUE")]
    pub xla_option: Vec<String>,
    /// Programs packed into one module (one compile tests them all).
    #[arg(long, default_value_t = 8)]
    pub pack: usize,
    /// Input sets per program: the compiled module runs on each (set 0 is the program's own).
    #[arg(long, default_value_t = tools::campaign::DEFAULT_INPUT_SETS)]
    pub input_sets: usize,
    /// Do not ask stablehlo-ref to vote on mismatches.
    #[arg(long)]
    pub no_voter: bool,
    /// Generator configuration (JSON, `generators::Config` fields; missing fields default).
    #[arg(long, value_name = "FILE")]
    pub gen_config: Option<PathBuf>,
    /// Every program uses the generator configuration itself; by default each program draws
    /// its own within it from its seed (swarm testing per program, recorded with its findings).
    #[arg(long)]
    pub no_swarm: bool,
    /// Hide the progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Leave findings as found: no minimization, no buckets (every finding is then unbucketed).
    #[arg(long)]
    pub no_minimize: bool,
    /// With --time: the share of it kept for minimizing findings.
    #[arg(long, default_value_t = tools::campaign::DEFAULT_MINIMIZE_SHARE, value_name = "FRACTION")]
    pub minimize_share: f64,
    /// Without --time: the budget of the minimization phase (default: until all are done).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub minimize_time: Option<Duration>,
    /// The limit per finding.
    #[arg(long, value_parser = parse_duration, default_value = "60s", value_name = "DURATION")]
    pub minimize_per_finding: Duration,
    /// The known-bug registry directory (default: the repository's corpora/known-bugs).
    #[arg(long, value_name = "DIR")]
    pub registry: Option<PathBuf>,
    /// Bucket history (JSON, bucket id -> first seen): buckets in it are "seen before", not
    /// NEW; the campaign's buckets are added to it.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Exit 1 when the campaign has any finding, known or not.
    #[arg(long)]
    pub fail_on_any_finding: bool,
    /// Finish the campaign in --out: minimize and bucket the findings it left and write the
    /// reports, testing no more modules (its seed, shard, backends, pack, input sets and XLA
    /// options come from its campaign.json); with --time, within that time.
    #[arg(long, conflicts_with_all = ["iterations", "seed", "shard", "backends", "pack", "input_sets", "xla_option"])]
    pub finish: bool,
}

/// `90` (seconds), `30s`, `10m`, `2h`, `1.5m`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, mult) = match s.chars().last() {
        Some('s') => (&s[..s.len() - 1], 1.0),
        Some('m') => (&s[..s.len() - 1], 60.0),
        Some('h') => (&s[..s.len() - 1], 3600.0),
        _ => (s, 1.0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected a duration like 90, 30s, 10m, 2h"))?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("{s:?}: a duration must be non-negative"));
    }
    Ok(Duration::from_secs_f64(v * mult))
}

/// `I/N` with I < N.
pub fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("{s:?}: expected I/N"))?;
    let i: u64 = i
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected I/N"))?;
    let n: u64 = n
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected I/N"))?;
    if n == 0 || i >= n {
        return Err(format!("{s:?}: need 0 <= I < N"));
    }
    Ok((i, n))
}

/// `args` for finishing the campaign in `--out`: its parameters from its `campaign.json`, as
/// many modules as it has tested (so none more is tested).
fn finish_args(mut args: Args) -> Result<Args, Failure> {
    let state = tools::campaign::load_state(&args.out)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", args.out.display())))?
        .ok_or_else(|| {
            Failure::bad_input(format!(
                "{}: no campaign to finish (no campaign.json)",
                args.out.display()
            ))
        })?;
    args.seed = state.seed;
    args.shard = state.shard;
    args.backends = state.backends.clone();
    args.pack = state.pack;
    args.input_sets = state.input_sets;
    args.xla_option = state
        .xla_options
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    args.iterations = Some(state.next_index);
    Ok(args)
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let args = if args.finish {
        finish_args(args)?
    } else {
        args
    };
    if args.time.is_none() && args.iterations.is_none() {
        return Err(Failure::bad_input("give --time DURATION or --iterations N"));
    }
    let generator = match &args.gen_config {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Failure::bad_input(format!("{}: {e}", p.display())))?;
            serde_json::from_str(&text).map_err(|e| {
                Failure::bad_input(format!("{}:{}:{}: {e}", p.display(), e.line(), e.column()))
            })?
        }
        None => generators::Config::default(),
    };
    // Read before the campaign: a mistyped --registry or a bad entry is known before hours
    // of fuzzing, not after.
    let registry = crate::input::load_registry(args.registry.as_deref())?;
    let cfg = CampaignConfig {
        backends: args.backends.clone(),
        seed: args.seed,
        jobs: args
            .jobs
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            })
            .max(1),
        shard: args.shard,
        out: args.out.clone(),
        xla_options: super::input::parse_xla_options(&args.xla_option)?,
        pack: args.pack.max(1),
        input_sets: args.input_sets.max(1),
        stop: Stop {
            time: args.time,
            iterations: args.iterations,
        },
        generator,
        swarm: !args.no_swarm,
        python: global.python.clone(),
        voter: !args.no_voter,
        progress: !args.quiet && !global.json,
        timeouts: campaign_timeouts(),
        minimize: (!args.no_minimize).then(|| tools::campaign::MinimizeConfig {
            budget: args.minimize_time,
            per_finding: args.minimize_per_finding,
            ..Default::default()
        }),
        minimize_share: args.minimize_share.clamp(0.0, 0.95),
        registry: args.registry.clone(),
        history: args.history.clone(),
    };
    // NEW is judged against the history as it was before this campaign (which adds to it).
    let history = findings::report::read_history(args.history.as_deref())
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    let summary = run_campaign(&cfg, None).map_err(|e| match e {
        CampaignError::Usage(m) => Failure::bad_input(m),
        CampaignError::Infrastructure(m) => Failure::infrastructure(m),
        CampaignError::Io(e) => Failure::bad_input(format!("{}: {e}", args.out.display())),
    })?;
    let store = Store::open(&args.out)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", args.out.display())))?;
    let scan = store
        .scan()
        .map_err(|e| Failure::bad_input(format!("{}: {e}", args.out.display())))?;
    // An unreadable record is still something found: reported, and it counts for the exit code.
    for (file, why) in &scan.unreadable {
        eprintln!(
            "warning: {}: unreadable finding record: {why}",
            file.display()
        );
    }
    let any = !scan.findings.is_empty() || !scan.unreadable.is_empty();
    let d = findings::report::ReportData::new(&summary, scan.findings, &registry, &history);
    let exit = if (args.fail_on_any_finding && any) || d.has_new() || !scan.unreadable.is_empty() {
        Exit::BugFound
    } else {
        Exit::Clean
    };
    if global.json {
        let mut v = findings::report::report_json(&d);
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "unreadable_findings".into(),
                serde_json::json!(scan
                    .unreadable
                    .iter()
                    .map(|(f, why)| serde_json::json!({"file": f, "error": why}))
                    .collect::<Vec<_>>()),
            );
        }
        print_json(&v);
        return Ok(exit);
    }
    out!("{}", findings::report::summary_text(&d));
    outln!(
        "\nreports: {}/report.html, report.json, report.md",
        args.out.display()
    );
    Ok(exit)
}

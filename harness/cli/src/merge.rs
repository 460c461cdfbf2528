//! `hlo-diff merge STORE... --out DIR`: folds several campaigns' stores (the shards of one
//! campaign, or campaigns on several machines) into one store and writes one report. Findings
//! fold by signature (occurrences are united, counts add up, nothing is doubled), their
//! buckets fold by bucket id, and the counters of every store's `campaign.json` add up. A
//! `finding.json` that cannot be read is not merged: it is named on stderr, counted in the
//! summary, and makes the exit 1, as `fuzz` does. Exit 1 when a bucket is NEW or a record is
//! unreadable, 0 otherwise.

use super::{print_json, Exit, Failure, Global};
use findings::store::{CampaignState, CampaignStats, Store};
use findings::summary::CampaignSummary;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Campaign output directories (each with `findings/` and `campaign.json`).
    #[arg(required = true)]
    pub stores: Vec<PathBuf>,
    /// Where the merged store and report go (created; may be one of the stores).
    #[arg(long)]
    pub out: PathBuf,
    /// The known-bug registry directory (default: the repository's corpora/known-bugs).
    #[arg(long, value_name = "DIR")]
    pub registry: Option<PathBuf>,
    /// Bucket history (as for `fuzz`): buckets in it are not NEW.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let bad = |p: &std::path::Path, e: &dyn std::fmt::Display| {
        Failure::bad_input(format!("{}: {e}", p.display()))
    };
    let mut states: Vec<CampaignState> = Vec::new();
    for s in &args.stores {
        if !s.join("findings").is_dir() {
            return Err(Failure::bad_input(format!(
                "{}: not a campaign output directory (no findings/)",
                s.display()
            )));
        }
        if let Some(st) = Store::open(s)
            .and_then(|st| st.load_state())
            .map_err(|e| bad(s, &e))?
        {
            states.push(st);
        }
    }
    let out = Store::open(&args.out).map_err(|e| bad(&args.out, &e))?;
    // A record that cannot be read is still something found: it is not merged (there is
    // nothing to fold), but it is reported and counts for the exit code.
    let mut unreadable: Vec<(PathBuf, String)> = Vec::new();
    for s in args.stores.iter().chain(std::iter::once(&args.out)) {
        if s != &args.out && s.canonicalize().ok() == args.out.canonicalize().ok() {
            continue;
        }
        let st = Store::open(s).map_err(|e| bad(s, &e))?;
        unreadable.extend(st.scan().map_err(|e| bad(s, &e))?.unreadable);
    }
    for (file, why) in &unreadable {
        eprintln!(
            "warning: {}: unreadable finding record, not merged: {why}",
            file.display()
        );
    }
    let mut copied = 0;
    let mut folded = 0;
    for s in &args.stores {
        if s.canonicalize().ok() == args.out.canonicalize().ok() {
            continue;
        }
        let src = Store::open(s).map_err(|e| bad(s, &e))?;
        let c = out.merge_from(&src).map_err(|e| bad(s, &e))?;
        copied += c.copied;
        folded += c.folded;
    }
    let mut stats = CampaignStats::default();
    for st in &states {
        stats.merge(&st.stats);
    }
    let first = states.first();
    let elapsed: f64 = states.iter().map(|s| s.elapsed_s).sum();
    let summary = CampaignSummary {
        seed: first.map(|s| s.seed).unwrap_or(0),
        shard: (0, 1),
        backends: first.map(|s| s.backends.clone()).unwrap_or_default(),
        xla_options: first.map(|s| s.xla_options.clone()).unwrap_or_default(),
        pack: first.map(|s| s.pack).unwrap_or(1),
        input_sets: first.map(|s| s.input_sets).unwrap_or(1),
        jobs: 0,
        elapsed_s: elapsed,
        modules_this_run: stats.modules,
        programs_this_run: stats.programs,
        cases_this_run: stats.cases,
        modules_per_s: stats.modules as f64 / elapsed.max(1e-9),
        programs_per_s: stats.programs as f64 / elapsed.max(1e-9),
        cases_per_s: stats.cases as f64 / elapsed.max(1e-9),
        stats,
        campaign_elapsed_s: elapsed,
        timeline: Vec::new(),
        xla_info: serde_json::json!({"merged_from": args.stores}),
        environment: serde_json::Value::Null,
        out: args.out.clone(),
        resumed: false,
        minimize: None,
        modules_cut: 0,
        finish_command: String::new(),
    };
    let registry = crate::input::load_registry(args.registry.as_deref())?;
    let history = findings::report::read_history(args.history.as_deref())
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    findings::report::write_reports(&summary, &out, &registry, &history)
        .map_err(|e| bad(&args.out, &e))?;
    let d = findings::report::ReportData::new(
        &summary,
        out.findings().map_err(|e| bad(&args.out, &e))?,
        &registry,
        &history,
    );
    if global.json {
        let mut v = findings::report::report_json(&d);
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "merge".into(),
                serde_json::json!({
                    "stores": args.stores,
                    "copied": copied,
                    "folded": folded,
                    "unreadable": unreadable
                        .iter()
                        .map(|(f, why)| serde_json::json!({"file": f, "why": why}))
                        .collect::<Vec<_>>(),
                }),
            );
        }
        print_json(&v);
    } else {
        outln!(
            "merged {} stores into {}: {copied} findings copied, {folded} folded{}",
            args.stores.len(),
            args.out.display(),
            if unreadable.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} unreadable finding records not merged (named above)",
                    unreadable.len()
                )
            }
        );
        out!("{}", findings::report::summary_text(&d));
    }
    Ok(if d.has_new() || !unreadable.is_empty() {
        Exit::BugFound
    } else {
        Exit::Clean
    })
}

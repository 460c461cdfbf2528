//! `hlo-diff bucket X`: the root-cause bucket of a module (X = an HLO file with `--inputs`, or a
//! finding directory): minimized, bisected when a mismatch, and looked up in the known-bug
//! registry. Exit 0 when it is no bug or a known one, 1 when its bucket is NEW.

use super::input::{finding_xla_options, merge_xla_options, parse_xla_options};
use super::minimize::load_case;
use super::{print_json, Exit, Failure, Global};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tools::campaign::{bucket_case, MinimizeConfig};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An HLO module file, or a finding directory.
    pub target: PathBuf,
    /// Inputs for an HLO file (default: generated from --seed).
    #[arg(long)]
    pub inputs: Option<PathBuf>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The XLA backend.
    #[arg(long, default_value = "xla-cpu")]
    pub backend: String,
    /// An XLA debug option for every compile, NAME=VALUE (repeatable).
    #[arg(long = "xla-option", value_name = "NAME=VALUE")]
    pub xla_options: Vec<String>,
    /// The known-bug registry directory (default: the repository's corpora/known-bugs).
    #[arg(long, value_name = "DIR")]
    pub registry: Option<PathBuf>,
    /// Limit of the minimization, in seconds.
    #[arg(long, default_value_t = 60)]
    pub time_limit: u64,
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let registry_dir = args
        .registry
        .clone()
        .unwrap_or_else(findings::registry::Registry::default_dir);
    let registry = crate::input::load_registry(args.registry.as_deref())?;
    let case = load_case(&args.target, args.inputs.as_deref(), args.seed)?;
    let stored = if args.target.is_dir() {
        finding_xla_options(&args.target)?
    } else {
        Vec::new()
    };
    let options = merge_xla_options(&stored, &parse_xla_options(&args.xla_options)?);
    let backend = Arc::new(super::bisect::xla_backend(&args.backend, global)?);
    let rec = bucket_case(
        case,
        None,
        &backend,
        options,
        &MinimizeConfig::default(),
        Duration::from_secs(args.time_limit),
        None,
    );
    if rec.status == "failed" {
        return Err(Failure::infrastructure(rec.message));
    }
    let bug = rec.status == "minimized";
    let known = bug.then(|| registry.lookup(&rec.bucket)).flatten();
    let new = bug && known.is_none();
    if global.json {
        print_json(&serde_json::json!({
            "bug": bug,
            "new": new,
            "bucket": rec.bucket_id,
            "title": rec.title,
            "signature": rec.bucket,
            "known": known.map(|e| serde_json::json!({"id": e.id, "title": e.title, "status": e.status})),
            "instructions": [rec.instructions_before, rec.instructions_after],
            "bisect": rec.bisect,
            "message": rec.message,
        }));
    } else if !bug {
        outln!("no bug: {}", rec.message);
    } else {
        outln!("bucket {}: {}", rec.bucket_id, rec.title);
        outln!(
            "  ops {:?}, symptom {:?}, culprit {:?}{}",
            rec.bucket.ops,
            rec.bucket.symptom,
            rec.bucket.culprit,
            if rec.bucket.message.is_empty() {
                String::new()
            } else {
                format!(", message {:?}", rec.bucket.message)
            }
        );
        outln!(
            "  minimized {} -> {} instructions in {} tests",
            rec.instructions_before,
            rec.instructions_after,
            rec.tests
        );
        match known {
            Some(e) => outln!("  KNOWN: {} ({}, {:?})", e.id, e.title, e.status),
            None => outln!("  NEW: no entry of {} claims it", registry_dir.display()),
        }
    }
    Ok(if new { Exit::BugFound } else { Exit::Clean })
}

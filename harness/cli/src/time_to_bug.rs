//! `hlo-diff time-to-bug REPORT...`: when each known bug (registry entry) and each NEW bucket was
//! first hit, in campaign seconds and modules, over one or more campaigns' `report.json` (a
//! campaign directory stands for its `report.json`). With several campaigns (seeds): in how
//! many each was hit, and the median first hit. Then the classes of XLA:CPU bugs others reported
//! publicly (`corpora/public-bug-classes.toml`, or `--classes FILE`): which the campaigns reached
//! through their registry entries, and when. Markdown on stdout, or `--json`
//! ([`findings::time_to_bug`]). `scripts/time-to-bug` runs the campaigns and then this.

use super::{print_json, Exit, Failure, Global};
use findings::public_classes::PublicClasses;
use findings::time_to_bug::{Claims, TimeToBug};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Campaign reports (`report.json`) or campaign output directories holding one.
    #[arg(required = true)]
    pub reports: Vec<PathBuf>,
    /// The known-bug registry directory, for the entries no campaign hit (default: the
    /// repository's corpora/known-bugs).
    #[arg(long, value_name = "DIR")]
    pub registry: Option<PathBuf>,
    /// The classes of publicly reported XLA:CPU bugs, each mapped to registry entries (default:
    /// the repository's corpora/public-bug-classes.toml, unless --registry names another
    /// registry, whose ids it would not match).
    #[arg(long, value_name = "FILE", conflicts_with = "no_classes")]
    pub classes: Option<PathBuf>,
    /// No section on the public bug classes.
    #[arg(long)]
    pub no_classes: bool,
    /// Claim each bucket by the registry now (matched against the bucket's signature), not by
    /// the entry the campaign's report names: a bug registered after the campaign counts as its
    /// entry's, not as NEW.
    #[arg(long)]
    pub by_current_registry: bool,
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let mut reports = Vec::new();
    for p in &args.reports {
        let file = if p.is_dir() {
            p.join("report.json")
        } else {
            p.clone()
        };
        let bytes = std::fs::read(&file).map_err(|e| {
            Failure::bad_input(format!(
                "{}: {e}{}",
                file.display(),
                if p.is_dir() {
                    " (a campaign that did not finish writes no report)"
                } else {
                    ""
                }
            ))
        })?;
        let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
            Failure::bad_input(format!(
                "{}:{}:{}: {e}",
                file.display(),
                e.line(),
                e.column()
            ))
        })?;
        reports.push((file.display().to_string(), value));
    }
    let registry = crate::input::load_registry(args.registry.as_deref())?;
    let classes_file = match (&args.classes, args.no_classes, &args.registry) {
        (Some(f), _, _) => Some(f.clone()),
        (None, false, None) => {
            let f = PublicClasses::default_path();
            f.is_file().then_some(f)
        }
        _ => None,
    };
    let classes = match classes_file {
        Some(f) => Some(PublicClasses::load(&f, &registry).map_err(Failure::bad_input)?),
        None => None,
    };
    let claims = if args.by_current_registry {
        Claims::Registry(&registry)
    } else {
        Claims::AsReported
    };
    let t = TimeToBug::new(&reports, &registry, claims, classes.as_ref())
        .map_err(Failure::bad_input)?;
    if global.json {
        print_json(&serde_json::to_value(&t).unwrap_or_default());
    } else {
        out!("{}", t.markdown());
    }
    Ok(Exit::Clean)
}

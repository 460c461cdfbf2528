//! `hlo-diff dump DIR`: explain an XLA dump directory.

use super::{print_json, Exit, Failure, Global};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directory XLA dumped into (`--xla_dump_to`).
    pub dir: PathBuf,
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    let index =
        hlo::dump::read_dump_dir(&args.dir).map_err(|e| Failure::bad_input(e.to_string()))?;
    if global.json {
        let value = serde_json::to_value(&index)
            .map_err(|e| Failure::bad_input(format!("cannot serialize the dump index: {e}")))?;
        print_json(&value);
    } else {
        out!(
            "{}",
            hlo::dump::render_summary(&index, &args.dir.display().to_string())
        );
    }
    Ok(Exit::Clean)
}

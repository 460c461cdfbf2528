//! `hlo-diff semantics`: XLA's semantics as the judge reads them (`hlo::semantics`): for every
//! opcode and element-type class the rule, the freedoms, the implementation-defined cases and
//! their sources. `--markdown` prints `docs/semantics.md` (a test keeps that file current);
//! `--json` the freedoms and rows as data.

use super::{print_json, Exit, Failure, Global};
use hlo::semantics::{Freedom, ROWS};
use serde_json::json;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the table as markdown (the text of docs/semantics.md).
    #[arg(long)]
    pub markdown: bool,
}

pub fn run(args: Args, global: &Global) -> Result<Exit, Failure> {
    if global.json {
        let cites = |s: &[hlo::semantics::Source]| -> Vec<serde_json::Value> {
            s.iter()
                .map(|c| json!({"kind": c.kind.name(), "cite": c.cite}))
                .collect()
        };
        print_json(&json!({
            "freedoms": Freedom::ALL.iter().map(|f| json!({
                "name": f.name(), "allows": f.describe(), "sources": cites(f.sources()),
            })).collect::<Vec<_>>(),
            "rows": ROWS.iter().map(|r| json!({
                "ops": r.ops.iter().map(|o| o.name()).collect::<Vec<_>>(),
                "classes": r.classes.names(),
                "rule": r.rule.name(),
                "freedoms": r.freedoms.iter().map(|f| f.name()).collect::<Vec<_>>(),
                "cases": r.cases.iter().map(|c| json!({
                    "when": c.when.name(), "rule": c.rule.name(), "sources": cites(c.sources),
                    "xla_does": c.xla_does,
                })).collect::<Vec<_>>(),
                "sources": cites(r.sources),
                "note": r.note,
            })).collect::<Vec<_>>(),
        }));
    } else if args.markdown {
        out!("{}", hlo::semantics::markdown());
    } else {
        for r in ROWS {
            let ops: Vec<&str> = r.ops.iter().map(|o| o.name()).collect();
            outln!(
                "{} ({}): {}",
                ops.join(", "),
                r.classes.names(),
                r.rule.name()
            );
            for c in r.cases {
                outln!("  when {}: {}", c.when.name(), c.rule.name());
            }
        }
    }
    Ok(Exit::Clean)
}

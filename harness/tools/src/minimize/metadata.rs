//! Removing what does not change the program's meaning but fills a report: `metadata={...}` and
//! the stack-frame tables it points into, `frontend_attributes`, `sharding`, and module header
//! attributes other than the entry's layout. Each group is one candidate, so the predicate
//! decides (a sharding annotation can matter to XLA).

use super::{Candidate, Case, Reduction};
use hlo::Module;

pub struct StripAnnotations;

/// (what, instruction attributes removed, also clear the stack-frame tables, header attributes
/// removed).
const GROUPS: [(&str, &[&str], bool, &[&str]); 3] = [
    ("metadata and stack-frame tables", &["metadata"], true, &[]),
    (
        "frontend attributes and sharding",
        &["frontend_attributes", "sharding"],
        false,
        &["frontend_attributes"],
    ),
    (
        "module header attributes",
        &[],
        false,
        &[
            "allow_spmd_sharding_propagation_to_parameters",
            "allow_spmd_sharding_propagation_to_output",
            "num_partitions",
            "replica_count",
            "is_scheduled",
        ],
    ),
];

fn applies(m: &Module, k: usize) -> bool {
    let (_, attrs, tables, header) = GROUPS[k];
    (tables && !m.stack_frame_tables.is_empty())
        || m.header_attrs
            .iter()
            .any(|(n, _)| header.contains(&n.as_str()))
        || m.computations.iter().any(|c| {
            c.instructions
                .iter()
                .any(|i| i.attrs.iter().any(|(n, _)| attrs.contains(&n.as_str())))
        })
}

impl Reduction for StripAnnotations {
    fn name(&self) -> &'static str {
        "strip-annotations"
    }

    fn count(&self, _case: &Case) -> usize {
        GROUPS.len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        if !applies(&case.module, index) {
            return None;
        }
        let (what, attrs, tables, header) = GROUPS[index];
        let mut m = case.module.clone();
        if tables {
            m.stack_frame_tables.clear();
        }
        m.header_attrs
            .retain(|(n, _)| !header.contains(&n.as_str()));
        for c in m.computations.iter_mut() {
            for i in c.instructions.iter_mut() {
                i.attrs.retain(|(n, _)| !attrs.contains(&n.as_str()));
            }
        }
        Some(Candidate {
            what: format!("removed {what}"),
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

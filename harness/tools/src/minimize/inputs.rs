//! Simplifying input values: an input becomes all zeros, or a contiguous chunk of it (halves,
//! quarters, ... down to 64ths) becomes zeros, so the report shows which elements matter.
//! Zero is false for pred, +0 for floats, (0, 0) for complex.

use super::{Candidate, Case, Reduction};
use hlo::Literal;

pub struct ZeroInputs;

/// Finest split: an input is cut into at most this many chunks.
const FINEST: usize = 64;

/// (input, chunk count, chunk index) edits, whole inputs first; chunks that are zero already
/// are left out.
fn edits(case: &Case) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    for (k, l) in case.inputs.iter().enumerate() {
        let Literal::Array(a) = l else { continue };
        let n = a.len();
        if n == 0 || a.data.iter().all(|&b| b == 0) {
            continue;
        }
        out.push((k, 1, 0));
        let mut parts = 2;
        while parts <= FINEST.min(n) {
            for p in 0..parts {
                let (lo, hi) = chunk(n, parts, p);
                let w = a.ty.byte_size();
                if a.data[lo * w..hi * w].iter().any(|&b| b != 0) {
                    out.push((k, parts, p));
                }
            }
            parts *= 2;
        }
    }
    out
}

fn chunk(n: usize, parts: usize, p: usize) -> (usize, usize) {
    (n * p / parts, n * (p + 1) / parts)
}

impl Reduction for ZeroInputs {
    fn name(&self) -> &'static str {
        "zero-inputs"
    }

    fn count(&self, case: &Case) -> usize {
        edits(case).len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let (k, parts, p) = *edits(case).get(index)?;
        let mut inputs = case.inputs.clone();
        let Literal::Array(a) = &mut inputs[k] else {
            return None;
        };
        let n = a.len();
        let (lo, hi) = chunk(n, parts, p);
        let w = a.ty.byte_size();
        a.data[lo * w..hi * w].fill(0);
        Some(Candidate {
            what: if parts == 1 {
                format!("input {k} -> zeros")
            } else {
                format!("input {k} elements {lo}..{hi} -> zeros")
            },
            case: Case {
                module: case.module.clone(),
                inputs,
            },
        })
    }
}

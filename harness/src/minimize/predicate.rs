//! The minimizer's predicate: run a case on the same backends (an XLA backend and the oracle),
//! classify the outcomes with [`crate::classify`], and check that the verdict keeps the
//! original's signature ([`crate::store::Signature`]): the same kind, backend and label, and
//!
//! - for a mismatch: the same element type of the first mismatching output, and an op pattern
//!   (the non-trivial opcodes feeding that output) that is a non-empty subset of the original's
//!   (a reduction removes ops, so equality would refuse every useful edit, while a subset keeps
//!   the candidate from sliding onto an unrelated op);
//! - for a crash or a rejection: the same stage, signal and normalized message;
//! - for a timeout: the same stage.
//!
//! A mismatch that an allowed implementation choice explains
//! ([`crate::campaign::explain_by_allowed_choices`]) is a match here, as in a campaign.

use super::Case;
use crate::backend::{Backend, Outcome, RunOptions, RunResult, Timings};
use crate::classify::{classify, Evidence, Verdict, VerdictKind};
use crate::compare::{output_opcodes, Tolerance};
use crate::store::{trivial, Signature};
use hlo::{Literal, Module};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Runs cases on backends and the oracle.
pub struct Runner {
    /// The backends besides the oracle (`xla-cpu`, ...).
    pub backends: Vec<Arc<dyn Backend>>,
    pub opts: RunOptions,
    /// Multiplies the comparator's default bounds.
    pub tolerance_scale: f64,
}

/// What one run of a case came to.
#[derive(Clone, Debug)]
pub struct Observation {
    pub outcomes: Vec<(String, Outcome)>,
    pub verdict: Verdict,
}

/// The oracle as an [`Outcome`]: `interp::evaluate` on the module.
pub fn interp_outcome(module: &Module, inputs: &[Literal]) -> Outcome {
    let t0 = std::time::Instant::now();
    match interp::evaluate(module, inputs) {
        Ok(l) => Outcome::Ok(RunResult {
            outputs: l
                .leaves()
                .into_iter()
                .cloned()
                .map(Literal::Array)
                .collect(),
            result_shape: Some(l.shape()),
            timings: Timings {
                execute_ms: t0.elapsed().as_secs_f64() * 1e3,
                ..Timings::default()
            },
            optimized_hlo: None,
            before_optimizations_hlo: None,
            dump_dir: None,
        }),
        Err(interp::EvalError::Unsupported { what }) => Outcome::Unsupported { what },
        Err(interp::EvalError::Budget { what }) => Outcome::Unsupported {
            what: format!("budget exceeded: {what}"),
        },
        Err(e @ interp::EvalError::Invalid { .. }) => Outcome::Rejected {
            stage: crate::backend::Stage::Execute,
            message: e.to_string(),
        },
        Err(e @ interp::EvalError::Internal { .. }) => Outcome::HarnessError {
            stage: None,
            message: e.to_string(),
        },
    }
}

impl Runner {
    pub fn new(backends: Vec<Arc<dyn Backend>>) -> Runner {
        Runner {
            backends,
            opts: RunOptions::default(),
            tolerance_scale: 1.0,
        }
    }

    /// Runs the case on the oracle and every backend and classifies the outcomes.
    pub fn observe(&self, case: &Case) -> Observation {
        let text = hlo::print::module_to_string(&case.module);
        let mut outcomes = vec![(
            crate::classify::ORACLE.to_string(),
            interp_outcome(&case.module, &case.inputs),
        )];
        for b in &self.backends {
            outcomes.push((b.name().to_string(), b.run(&text, &case.inputs, &self.opts)));
        }
        let tol = Tolerance {
            scale: self.tolerance_scale,
            ..Tolerance::for_module(&case.module)
        };
        let mut verdict = classify(&outcomes, &Evidence::new(&tol));
        // A difference an allowed implementation choice explains is no finding here either, so
        // a reduction cannot slide from a bug onto such a difference.
        if verdict.kind == VerdictKind::Mismatch {
            let oracle = crate::interp_backend::InterpBackend::default();
            if let Some(v) = crate::campaign::explain_by_allowed_choices(
                &oracle,
                &case.module,
                &case.inputs,
                &outcomes,
                &tol,
            ) {
                verdict = v;
            }
        }
        Observation { outcomes, verdict }
    }
}

/// The signature a minimization keeps.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Target {
    pub signature: Signature,
    /// Non-trivial opcodes feeding the first mismatching output (mismatch only).
    pub ops: BTreeSet<String>,
}

fn ops_of(verdict: &Verdict, module: &Module) -> BTreeSet<String> {
    let out = verdict.mismatched_outputs.first().copied().unwrap_or(0);
    output_opcodes(module, out)
        .into_iter()
        .filter(|o| !trivial(*o))
        .map(|o| o.name().to_string())
        .collect()
}

impl Target {
    /// The target of a verdict that is a finding, or `None` (match, unsupported).
    pub fn of(verdict: &Verdict, module: &Module) -> Option<Target> {
        if !verdict.is_bug() {
            return None;
        }
        Some(Target {
            signature: Signature::of(verdict, Some(module)),
            ops: if matches!(
                verdict.kind,
                VerdictKind::Mismatch | VerdictKind::Nondeterministic
            ) {
                ops_of(verdict, module)
            } else {
                BTreeSet::new()
            },
        })
    }

    /// Does `verdict` (of `module`) show the same bug?
    pub fn holds(&self, verdict: &Verdict, module: &Module) -> bool {
        if !verdict.is_bug() {
            return false;
        }
        let s = Signature::of(verdict, Some(module));
        if s.kind != self.signature.kind
            || s.backend != self.signature.backend
            || s.label != self.signature.label
        {
            return false;
        }
        match s.kind {
            VerdictKind::Mismatch | VerdictKind::Nondeterministic => {
                let ty = |d: &str| d.split(" ops=").next().unwrap_or("").to_string();
                if ty(&s.detail) != ty(&self.signature.detail) {
                    return false;
                }
                let ops = ops_of(verdict, module);
                // With no computing op left the output is data movement only; that can still be
                // the bug when the original had none either.
                (ops.is_empty() && self.ops.is_empty())
                    || (!ops.is_empty() && ops.is_subset(&self.ops))
            }
            _ => s.detail == self.signature.detail,
        }
    }
}

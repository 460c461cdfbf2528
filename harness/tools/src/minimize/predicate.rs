//! The minimizer's predicate: run a case on the same backends (an XLA backend and the oracle),
//! classify the outcomes with [`judge::classify`], and check that the verdict keeps the
//! original's signature ([`findings::store::Signature`]): the same kind, backend and label, and
//!
//! - for a mismatch: an op pattern (the non-trivial opcodes feeding the output that makes it a
//!   bug, [`Verdict::bug_output`]: the first the proof shows outside the legitimate results)
//!   that is a non-empty subset of the original's (a reduction removes ops, so equality would
//!   refuse every useful edit, while a subset keeps the candidate from sliding onto an
//!   unrelated op), and the same element type of that output unless the pattern is a strict
//!   subset (an earlier instruction made the output, [`super::outputs::Reroot`]);
//! - for a crash or a rejection: the same stage, signal and normalized message;
//! - for a timeout: the same stage.
//!
//! A difference the judge's proof leaves inside the legitimate results is no finding here, as
//! in a campaign: the predicate asks the judge under [`judge::Policy::VERDICT`] (the proof,
//! without the search for the choice that explains such a difference).

use super::Case;
use engine::backend::{Backend, Outcome, RunOptions};
use engine::interp_backend::InterpBackend;
use findings::store::{trivial, Signature};
use hlo::{Literal, Module};
use judge::classify::{Verdict, VerdictKind};
use judge::compare::{output_opcodes, Tolerance};
use judge::{Judge, Trial};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Runs cases on backends and the oracle.
pub struct Runner {
    /// The backends besides the oracle (`xla-cpu`, ...).
    pub backends: Vec<Arc<dyn Backend>>,
    pub opts: RunOptions,
    /// Multiplies the comparator's default bounds.
    pub tolerance_scale: f64,
    /// The runner for a case that crashes XLA, when there is a cheaper one: the same backends
    /// on workers that fork per request, so a crashing candidate costs a fork, not a new
    /// worker ([`engine::worker::WorkerBackend::forking`]).
    pub for_crashes: Option<Box<Runner>>,
}

/// What one run of a case came to.
#[derive(Clone, Debug)]
pub struct Observation {
    pub outcomes: Vec<(String, Outcome)>,
    pub verdict: Verdict,
}

/// The oracle as an [`Outcome`], with the engine's one mapping of oracle errors to outcomes
/// ([`InterpBackend::run_module`]).
pub fn interp_outcome(module: &Module, inputs: &[Literal]) -> Outcome {
    InterpBackend::new().run_module(module, inputs)
}

impl Runner {
    pub fn new(backends: Vec<Arc<dyn Backend>>) -> Runner {
        Runner {
            backends,
            opts: RunOptions::default(),
            tolerance_scale: 1.0,
            for_crashes: None,
        }
    }

    /// Runs the case on every backend and the oracle and classifies the outcomes. When a
    /// backend crashed, hung or refused the module, the oracle is not run: the verdict is that
    /// failure whatever the oracle computes (`judge::classify`'s precedence; an oracle that
    /// would fail too shows on the minimizer's final, full run), and a large module's oracle
    /// can take longer than XLA's compile (an ODE solver's loop: seconds per candidate).
    pub fn observe(&self, case: &Case) -> Observation {
        self.observe_with(case, false)
    }

    /// [`Runner::observe`] with the oracle always run (the minimizer's final run).
    pub fn observe_fully(&self, case: &Case) -> Observation {
        self.observe_with(case, true)
    }

    fn observe_with(&self, case: &Case, oracle_always: bool) -> Observation {
        let text = hlo::print::module_to_string(&case.module);
        let xla: Vec<(String, Outcome)> = self
            .backends
            .iter()
            .map(|b| (b.name().to_string(), b.run(&text, &case.inputs, &self.opts)))
            .collect();
        let failed = xla.iter().any(|(_, o)| {
            matches!(
                o,
                Outcome::Crash { .. } | Outcome::Timeout { .. } | Outcome::Rejected { .. }
            )
        });
        let oracle = match failed && !oracle_always {
            true => Outcome::Unsupported {
                what: "not run: XLA failed, which decides the verdict".into(),
            },
            false => InterpBackend {
                options: interp::EvalOptions {
                    deadline: self.opts.deadline,
                    ..interp::EvalOptions::default()
                },
            }
            .run_module(&case.module, &case.inputs),
        };
        let mut outcomes = vec![(judge::classify::ORACLE.to_string(), oracle)];
        outcomes.extend(xla);
        self.classify_observed(case, &text, outcomes)
    }

    fn classify_observed(
        &self,
        case: &Case,
        text: &str,
        outcomes: Vec<(String, Outcome)>,
    ) -> Observation {
        let tol = Tolerance {
            scale: self.tolerance_scale,
            ..Tolerance::for_module(&case.module)
        };
        // A difference an allowed implementation choice explains is no finding here either, so
        // a reduction cannot slide from a bug onto such a difference.
        let verdict = Judge::offline()
            .with_policy(judge::Policy::VERDICT)
            .judge(&Trial {
                module: &case.module,
                text: Some(text),
                inputs: &case.inputs,
                outcomes: &outcomes,
                reruns: &[],
                tolerance: &tol,
            })
            .verdict;
        Observation { outcomes, verdict }
    }
}

/// The signature a minimization keeps.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Target {
    pub signature: Signature,
    /// Non-trivial opcodes feeding the output that makes it a bug ([`Verdict::bug_output`]; mismatch only).
    pub ops: BTreeSet<String>,
}

fn ops_of(verdict: &Verdict, module: &Module) -> BTreeSet<String> {
    let out = verdict.bug_output().unwrap_or(0);
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
                let ops = ops_of(verdict, module);
                // With no computing op left the output is data movement only; that can still be
                // the bug when the original had none either.
                if ops.is_empty() {
                    return self.ops.is_empty() && ty(&s.detail) == ty(&self.signature.detail);
                }
                // The same element type, or fewer ops: a wrong `s16 count-leading-zeros` that
                // only a `convert` and an `f32 sort` carried to the output is the same bug
                // when the output is the count itself.
                ops.is_subset(&self.ops)
                    && (ty(&s.detail) == ty(&self.signature.detail) || ops.len() < self.ops.len())
            }
            _ => s.detail == self.signature.detail,
        }
    }
}

//! The judge: the one entry point that turns a module's outcomes on several backends into a
//! verdict with its evidence.
//!
//! In order:
//! 1. the classifier ([`crate::classify::classify`]) on the outcomes, with the reruns the caller
//!    already has; under [`Policy::rerun`] a backend whose result is part of a finding and that
//!    has no rerun yet is run once more with a fresh compile (nondeterminism);
//! 2. the arbiter ([`crate::proof::prove`]): a difference beyond the tolerance stays a mismatch
//!    only when some differing element lies outside the set of results a legitimate
//!    implementation returns (the oracle's enclosure, under all of XLA's freedoms at once); the
//!    verdict carries that proof. Otherwise the difference is never a finding: under
//!    [`Policy::explain`] a single implementation choice XLA is free to make that reproduces
//!    XLA's result ([`crate::choices::explain_by_allowed_choices`]) makes it a match with an
//!    [`Explanation`] naming the choice; without one (or without the search) the verdict is
//!    `unproven` (inside the set);
//! 3. under [`Policy::vote`] the voter runs the module reduced to the differing outputs and labels
//!    the mismatch (`xla`, `oracle`, `undecided`);
//! 4. under [`Policy::equivalent_forms`] a mismatch not labelled `xla` is tried in equivalent
//!    forms ([`crate::forms::check_equivalent_forms`]).

use crate::choices::explain_by_allowed_choices;
use crate::classify::{classify, voter_abstains, Evidence, Verdict, VerdictKind};
use crate::compare::{Comparison, Tolerance};
use crate::forms::{check_equivalent_forms, restrict_outputs};
use engine::backend::{Backend, Outcome, RunOptions};
use engine::interp_backend::InterpBackend;
use engine::VOTER;
use hlo::{Literal, Module};
use serde::{Deserialize, Serialize};

/// Which evidence the judge gathers beyond the outcomes it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Rerun (fresh compile) a backend whose result is part of a finding, when the trial has no
    /// rerun of it.
    pub rerun: bool,
    /// Ask the voter on a mismatch (when the judge has one and the outcomes hold no vote).
    pub vote: bool,
    /// Hold a mismatch to the arbiter's proof: a difference that no element shows outside the
    /// legitimate results is no finding.
    pub prove: bool,
    /// For such a difference, search for the single implementation choice that reproduces
    /// XLA's result: a match that names the choice, else `unproven`. The search is evidence for
    /// a person reading one verdict; it never decides whether a difference is a finding, and
    /// it costs an oracle evaluation per choice tried.
    pub explain: bool,
    /// Try equivalent forms of a mismatch not labelled `xla`.
    pub equivalent_forms: bool,
}

impl Policy {
    /// Everything: what `run`, `recheck` and a campaign's confirmation use.
    pub const FULL: Policy = Policy {
        rerun: true,
        vote: true,
        prove: true,
        explain: true,
        equivalent_forms: true,
    };
    /// The comparison, the proof and the explaining choice, no further XLA runs: what the
    /// bisector's snapshots, release bisection and triage use (each verdict is read by a
    /// person).
    pub const CHOICES: Policy = Policy {
        rerun: false,
        vote: false,
        prove: true,
        explain: true,
        equivalent_forms: false,
    };
    /// The comparison and the proof only: whether a difference is a finding, without the
    /// search for the choice that explains one that is not. What a campaign's packed run and
    /// the minimizer's predicate use (they ask that question thousands of times and show no
    /// single verdict).
    pub const VERDICT: Policy = Policy {
        explain: false,
        ..Policy::CHOICES
    };
}

/// What the judge is asked about: a module, its inputs and what the backends made of it.
#[derive(Clone, Copy, Debug)]
pub struct Trial<'a> {
    pub module: &'a Module,
    /// The text XLA was given (the judge reruns and votes with it); `None`: the module printed.
    pub text: Option<&'a str>,
    pub inputs: &'a [Literal],
    /// `(backend name, outcome)`, the oracle (`interp`) among them.
    pub outcomes: &'a [(String, Outcome)],
    /// Second runs the caller already has (backend name, outcome).
    pub reruns: &'a [(String, Outcome)],
    pub tolerance: &'a Tolerance,
}

/// Why a difference is no finding: the implementation choice that explains it, and how large
/// the output difference it excused is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// `ftz`, `implementation-choice`, ... (as the verdict's `vote`).
    pub choice: String,
    /// Which choice, for humans.
    pub what: String,
    /// The largest absolute and relative element difference, and ulps, that the choice excused.
    pub max_abs_err: f64,
    pub max_rel_err: f64,
    pub max_ulps: u64,
    /// Output leaves that differed.
    pub outputs: Vec<usize>,
}

impl Explanation {
    fn of(v: &Verdict, differed: &Comparison) -> Explanation {
        let outs: Vec<_> = differed.outputs.iter().filter(|o| !o.is_match()).collect();
        Explanation {
            choice: v.vote.clone().unwrap_or_default(),
            what: v.message.clone(),
            max_abs_err: outs.iter().map(|o| o.max_abs_err).fold(0.0, f64::max),
            max_rel_err: outs.iter().map(|o| o.max_rel_err).fold(0.0, f64::max),
            max_ulps: outs.iter().map(|o| o.max_ulps).max().unwrap_or(0),
            outputs: outs.iter().map(|o| o.output).collect(),
        }
    }
}

/// The judge's answer: the verdict (with its evidence) and the runs the judge made for it.
#[derive(Clone, Debug)]
pub struct Judgement {
    pub verdict: Verdict,
    /// Reruns the judge made (not those the trial brought).
    pub reruns: Vec<(String, Outcome)>,
    /// The voter's outcome, when the judge asked it.
    pub voter: Option<Outcome>,
}

/// The backends the judge may run for more evidence, and what it gathers.
pub struct Judge<'a> {
    pub oracle: InterpBackend,
    /// XLA backends by name (reruns and equivalent forms run on the backend a verdict is about).
    pub xla: Vec<&'a dyn Backend>,
    pub voter: Option<&'a dyn Backend>,
    pub opts: RunOptions,
    pub policy: Policy,
}

impl<'a> Judge<'a> {
    /// A judge that runs nothing: the outcomes and the oracle under allowed choices alone.
    pub fn offline() -> Judge<'static> {
        Judge {
            oracle: InterpBackend::new(),
            xla: Vec::new(),
            voter: None,
            opts: RunOptions::default(),
            policy: Policy::CHOICES,
        }
    }

    /// The same backends under another policy.
    pub fn with_policy(&self, policy: Policy) -> Judge<'a> {
        Judge {
            oracle: self.oracle.clone(),
            xla: self.xla.clone(),
            voter: self.voter,
            opts: self.opts.clone(),
            policy,
        }
    }

    fn backend(&self, name: &str) -> Option<&'a dyn Backend> {
        self.xla.iter().copied().find(|b| b.name() == name)
    }

    /// The verdict on `t`, with its evidence.
    pub fn judge(&self, t: &Trial) -> Judgement {
        let printed;
        let text = match t.text {
            Some(s) => s,
            None if self.policy.rerun || self.policy.vote || self.policy.equivalent_forms => {
                printed = hlo::print::module_to_string(t.module);
                printed.as_str()
            }
            None => "",
        };
        let mut reruns: Vec<(String, Outcome)> = t.reruns.to_vec();
        let mut made = Vec::new();
        let with_reruns = |reruns: &[(String, Outcome)]| {
            classify(
                t.outcomes,
                &Evidence {
                    reruns,
                    ..Evidence::new(t.tolerance)
                },
            )
        };
        let mut verdict = with_reruns(&reruns);
        if self.policy.rerun && verdict.is_bug() {
            let fresh = RunOptions {
                fresh_compile: true,
                ..self.opts.clone()
            };
            for (name, o) in t.outcomes {
                if !o.is_ok() || reruns.iter().any(|(n, _)| n == name) {
                    continue;
                }
                if let Some(b) = self.backend(name) {
                    let again = (name.clone(), b.run(text, t.inputs, &fresh));
                    reruns.push(again.clone());
                    made.push(again);
                }
            }
            if !made.is_empty() {
                verdict = with_reruns(&reruns);
            }
        }
        if verdict.kind == VerdictKind::Mismatch && self.policy.prove {
            let proof = t
                .outcomes
                .iter()
                .find(|(n, _)| n == engine::ORACLE)
                .and_then(|(_, o)| o.as_ok())
                .map(|oracle| {
                    crate::proof::prove(t.module, t.inputs, oracle, t.outcomes, t.tolerance)
                });
            match proof {
                Some(p) if p.proves() => {
                    verdict.message = format!("{}; {}", verdict.message, p.summary());
                    verdict.proof = Some(p);
                }
                proof => {
                    let explained = self
                        .policy
                        .explain
                        .then(|| {
                            explain_by_allowed_choices(
                                &self.oracle,
                                t.module,
                                t.inputs,
                                t.outcomes,
                                t.tolerance,
                            )
                        })
                        .flatten();
                    if let Some(mut v) = explained {
                        if let Some(c) = &verdict.comparison {
                            v.explained = Some(Explanation::of(&v, c));
                        }
                        v.proof = proof;
                        return Judgement {
                            verdict: v,
                            reruns: made,
                            voter: None,
                        };
                    }
                    verdict.kind = VerdictKind::Unproven;
                    verdict.label = None;
                    verdict.message = match &proof {
                        Some(p) if self.policy.explain => format!(
                            "{}; {}; no single implementation choice reproduces it",
                            verdict.message,
                            p.summary()
                        ),
                        Some(p) => format!("{}; {}", verdict.message, p.summary()),
                        None => format!("{}; the oracle gave no result", verdict.message),
                    };
                    verdict.proof = proof;
                    return Judgement {
                        verdict,
                        reruns: made,
                        voter: None,
                    };
                }
            }
        }
        let mut voter = None;
        let voted = t.outcomes.iter().any(|(n, _)| n == VOTER);
        if verdict.kind == VerdictKind::Mismatch && self.policy.vote && !voted {
            if let Some(vb) = self.voter {
                // The voter runs the module reduced to the differing outputs, so that an op it
                // cannot run elsewhere in the module does not keep it from voting.
                let reduced = restrict_outputs(t.module, &verdict.mismatched_outputs);
                let o = match voter_abstains(reduced.as_ref().unwrap_or(t.module)) {
                    Some(what) => Outcome::Unsupported { what },
                    None => match &reduced {
                        Some(m) => vb.run(&hlo::print::module_to_string(m), t.inputs, &self.opts),
                        None => vb.run(text, t.inputs, &self.opts),
                    },
                };
                let sel = reduced.as_ref().map(|_| verdict.mismatched_outputs.clone());
                // The vote labels the mismatch; the proof stays its evidence.
                let proof = verdict.proof.take();
                verdict = classify(
                    t.outcomes,
                    &Evidence {
                        reruns: &reruns,
                        voter: Some(&o),
                        voter_outputs: sel.as_deref(),
                        ..Evidence::new(t.tolerance)
                    },
                );
                if let (VerdictKind::Mismatch, Some(p)) = (verdict.kind, proof) {
                    verdict.message = format!("{}; {}", verdict.message, p.summary());
                    verdict.proof = Some(p);
                }
                voter = Some(o);
            }
        }
        if self.policy.equivalent_forms {
            verdict = check_equivalent_forms(
                verdict,
                &self.oracle,
                &self.xla,
                t.module,
                t.inputs,
                &self.opts,
                t.tolerance,
            );
        }
        Judgement {
            verdict,
            reruns: made,
            voter,
        }
    }
}

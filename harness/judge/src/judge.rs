//! The judge: the one entry point that turns a module's outcomes on several backends into a
//! verdict with its evidence.
//!
//! In order:
//! 1. the classifier ([`crate::classify::classify`]) on the outcomes: a crash, timeout,
//!    rejection or unsupported module by precedence; else whether some element of an XLA result
//!    is not the oracle's value ([`crate::compare::same_value`]: bits, NaN equal to NaN);
//! 2. the set is the only rule ([`crate::proof::prove`]): every differing element is checked
//!    against the set of results a legitimate implementation returns (the oracle's enclosure,
//!    under every freedom `hlo::semantics` grants XLA at once). An element outside its set
//!    proves a mismatch, and the verdict carries that proof. Otherwise the difference is no
//!    finding: a `match` when every differing element lies inside a bounded set, `unproven`
//!    when some set is unbounded (an op the table does not bound) or could not be computed;
//!    under [`Policy::explain`] the single implementation choice that reproduces XLA's result
//!    is searched and named ([`crate::choices::explain_by_allowed_choices`]): an explanation
//!    for a person, never a decision;
//! 3. under [`Policy::rerun`] a backend whose result is part of a finding is run once more with
//!    a fresh compile (nondeterminism);
//! 4. under [`Policy::vote`] the voter runs the module reduced to the differing outputs and labels
//!    the mismatch (`xla`, `oracle`, `undecided`);
//! 5. under [`Policy::equivalent_forms`] a mismatch not labelled `xla` is tried in equivalent
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

/// Which evidence the judge gathers beyond the outcomes it is given. Whether a difference is a
/// finding never depends on it: the set decides under every policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Rerun (fresh compile) a backend whose result is part of a finding, when the trial has no
    /// rerun of it.
    pub rerun: bool,
    /// Ask the voter on a mismatch (when the judge has one and the outcomes hold no vote).
    pub vote: bool,
    /// For a difference that is no finding, search for the single implementation choice that
    /// reproduces XLA's result and name it (`hlo-diff run --explain`): evidence for a person,
    /// at the cost of an oracle evaluation per choice tried.
    pub explain: bool,
    /// Try equivalent forms of a mismatch not labelled `xla`.
    pub equivalent_forms: bool,
    /// On no finding, run the voter too and hold its result to the set of legitimate results:
    /// a value outside it where XLA and the oracle agree is a dissent (`Verdict::dissent`,
    /// evidence about a common mode of XLA and the oracle). Costs a voter run and a set.
    pub dissent: bool,
}

impl Policy {
    /// Everything that labels a finding: what `run`, `recheck` and a campaign's confirmation
    /// use.
    pub const FULL: Policy = Policy {
        rerun: true,
        vote: true,
        explain: false,
        equivalent_forms: true,
        dissent: false,
    };
    /// The verdict alone, no further XLA runs: what a campaign's packed run, the minimizer's
    /// predicate, the bisectors, release bisection and triage use.
    pub const VERDICT: Policy = Policy {
        rerun: false,
        vote: false,
        explain: false,
        equivalent_forms: false,
        dissent: false,
    };

    /// The same policy, with the explaining choice searched for.
    pub const fn explaining(self) -> Policy {
        Policy {
            explain: true,
            ..self
        }
    }

    /// The same policy, with the voter held to the set where XLA and the oracle agree.
    pub const fn with_dissent(self) -> Policy {
        Policy {
            dissent: true,
            ..self
        }
    }
}

/// Why a backend's refusal of `module` (its message `message`) is one the semantics table
/// allows, if it is: a dot `algorithm` the backend does not implement
/// (`Condition::UnsupportedAlgorithm`: the StableHLO spec lets it raise an error).
fn refusal_allowed(module: &Module, message: &str) -> Option<String> {
    let has_algorithm = module.computations.iter().any(|c| {
        c.instructions
            .iter()
            .any(|i| i.opcode == hlo::Opcode::Dot && i.attr("algorithm").is_some())
    });
    let allowed = hlo::semantics::row(hlo::Opcode::Dot, hlo::TypeClass::Float)
        .and_then(|r| r.case(hlo::semantics::Condition::UnsupportedAlgorithm))
        .is_some();
    (allowed && has_algorithm && message.to_ascii_lowercase().contains("algorithm")).then(|| {
        "a dot algorithm the backend does not implement: the StableHLO spec lets it raise an \
         error (a refusal, not a finding)"
            .to_string()
    })
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

impl<'a> Trial<'a> {
    /// The outcomes of `module` on `inputs`, with no text (the module printed) and no reruns.
    pub fn new(
        module: &'a Module,
        inputs: &'a [Literal],
        outcomes: &'a [(String, Outcome)],
        tolerance: &'a Tolerance,
    ) -> Trial<'a> {
        Trial {
            module,
            text: None,
            inputs,
            outcomes,
            reruns: &[],
            tolerance,
        }
    }
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
            policy: Policy::VERDICT,
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

    /// The verdict on a difference the set does not prove: `match` when every differing element
    /// lies inside a bounded set, `unproven` when some set is unbounded or none could be
    /// computed; with the explaining choice under [`Policy::explain`].
    fn no_finding(
        &self,
        t: &Trial,
        mut verdict: crate::classify::Verdict,
        proof: Option<crate::proof::Proof>,
    ) -> crate::classify::Verdict {
        let decided = proof.as_ref().is_some_and(|p| p.decides_no_bug());
        verdict.kind = if decided {
            VerdictKind::Match
        } else {
            VerdictKind::Unproven
        };
        verdict.label = None;
        verdict.message = match &proof {
            Some(p) => format!("{}; {}", verdict.message, p.summary()),
            None => format!("{}; the oracle gave no result", verdict.message),
        };
        if self.policy.explain {
            let explained = explain_by_allowed_choices(
                &self.oracle,
                t.module,
                t.inputs,
                t.outcomes,
                t.tolerance,
            );
            match (explained, &verdict.comparison) {
                (Some(v), Some(c)) => {
                    verdict.explained = Some(Explanation::of(&v, c));
                    verdict.vote = v.vote;
                }
                _ => verdict
                    .message
                    .push_str("; no single implementation choice reproduces it"),
            }
        }
        verdict.proof = proof;
        verdict
    }

    /// Under [`Policy::dissent`], on a verdict that is no finding: the voter's result on the
    /// module (or the one the outcomes hold), held to the set of legitimate results; a value
    /// outside it is the verdict's `dissent`. Returns the voter's outcome when it ran.
    fn dissent(
        &self,
        t: &Trial,
        text: &str,
        verdict: &mut crate::classify::Verdict,
    ) -> Option<Outcome> {
        if !self.policy.dissent || verdict.is_bug() {
            return None;
        }
        let oracle = t
            .outcomes
            .iter()
            .find(|(n, _)| n == engine::ORACLE)
            .and_then(|(_, o)| o.as_ok())?;
        let given = t
            .outcomes
            .iter()
            .find(|(n, _)| n == VOTER)
            .map(|(_, o)| o.clone());
        let ran = given.is_none();
        let o = match given {
            Some(o) => o,
            None => {
                let vb = self.voter?;
                if voter_abstains(t.module).is_some() {
                    return None;
                }
                let printed;
                let text = if text.is_empty() {
                    printed = hlo::print::module_to_string(t.module);
                    printed.as_str()
                } else {
                    text
                };
                vb.run(text, t.inputs, &self.opts)
            }
        };
        if o.is_ok() {
            // The voter's result under another name: the proof skips the voter's own.
            let as_backend = vec![
                (engine::ORACLE.to_string(), Outcome::Ok(oracle.clone())),
                ("voter".to_string(), o.clone()),
            ];
            let p = crate::proof::prove(t.module, t.inputs, oracle, &as_backend, t.tolerance);
            if p.proves() {
                verdict.message = format!(
                    "{}; the voter dissents: {}",
                    verdict.message,
                    p.summary().replace("voter gives", "stablehlo-ref gives")
                );
                verdict.dissent = Some(p);
            }
        }
        ran.then_some(o)
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
        if verdict.kind == VerdictKind::Rejected {
            if let Some(why) = refusal_allowed(t.module, &verdict.message) {
                verdict.kind = VerdictKind::Unsupported;
                verdict.label = None;
                verdict.message = format!("{}; {why}", verdict.message);
                return Judgement {
                    verdict,
                    reruns: made,
                    voter: None,
                };
            }
        }
        if verdict.kind == VerdictKind::Mismatch {
            // The set decides every differing element.
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
                    let mut verdict = self.no_finding(t, verdict, proof);
                    let voter = self.dissent(t, text, &mut verdict);
                    return Judgement {
                        verdict,
                        reruns: made,
                        voter,
                    };
                }
            }
        }
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
                let again = with_reruns(&reruns);
                // A proven mismatch stays one (with its proof) unless the rerun shows XLA
                // nondeterministic; any other finding is classified again with the rerun.
                if verdict.kind != VerdictKind::Mismatch
                    || again.kind == VerdictKind::Nondeterministic
                {
                    let proof = verdict.proof.take();
                    verdict = again;
                    if verdict.proof.is_none() {
                        verdict.proof = proof;
                    }
                }
            }
        }
        if verdict.kind == VerdictKind::Match {
            let voter = self.dissent(t, text, &mut verdict);
            return Judgement {
                verdict,
                reruns: made,
                voter,
            };
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

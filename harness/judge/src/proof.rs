//! The arbiter: whether XLA's result lies within the set of results a legitimate implementation
//! returns ([`interp::enclose`], whose rules are `hlo::semantics`). Every element that is not
//! the oracle's value is checked; a difference is a proven mismatch only when some differing
//! element lies outside its set; the evidence names each such element, XLA's value, the set and
//! the freedoms that bound it.

use crate::compare::{failing_elements, scalar_text, Tolerance};
use engine::backend::{Outcome, RunResult};
use hlo::{Literal, Module};
use interp::enclose::{enclose, EncloseOptions, Enclosure, Why};
use serde::{Deserialize, Serialize};

/// One element outside its set: the proof that no legitimate implementation returns XLA's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutsideElement {
    /// The backend whose value it is.
    pub backend: String,
    pub output: usize,
    pub flat: usize,
    /// XLA's value and the oracle's.
    pub actual: String,
    pub expected: String,
    /// The set of legitimate values (`[lo, hi]`, `NaN`, ...).
    pub set: String,
    /// The freedoms that widened the set (what bounds it).
    pub freedoms: Vec<String>,
}

/// What the enclosure established about a difference.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Proof {
    /// Elements outside their sets (the first few) and how many there are.
    pub outside: Vec<OutsideElement>,
    pub outside_count: usize,
    /// Differing elements inside their sets, and how many of those sets an op without a rule
    /// in the semantics table widened (too wide to decide: `unproven`).
    pub inside_count: usize,
    pub unbounded_count: usize,
    /// Differing elements whose set does not hold the oracle's own value: the enclosure is
    /// wrong there (a gap in its model), so it claims nothing about them.
    #[serde(default)]
    pub inconsistent_count: usize,
    /// The freedoms that widened the sets of the differing elements inside them.
    pub inside_freedoms: Vec<String>,
    /// The ops without a rule that left some set of the module unbounded (`opcode type`): what
    /// makes an `unproven` verdict, for the coverage report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmodelled: Vec<String>,
    /// Why no set could be computed (a budget, an unsupported op); nothing is proven then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Milliseconds spent enclosing the module and checking the differing elements.
    #[serde(default)]
    pub set_ms: f64,
}

impl Proof {
    /// Whether it proves a mismatch.
    pub fn proves(&self) -> bool {
        self.outside_count > 0
    }

    /// Whether it shows the difference is no bug: every differing element lies inside a set
    /// that bounds it (none unbounded, none the set failed to hold the oracle's own value for,
    /// and a set was computed).
    pub fn decides_no_bug(&self) -> bool {
        self.error.is_none()
            && self.outside_count == 0
            && self.unbounded_count == 0
            && self.inconsistent_count == 0
    }

    /// One line for humans.
    pub fn summary(&self) -> String {
        if let Some(e) = &self.error {
            return format!("no set of legitimate results could be computed ({e})");
        }
        if let Some(o) = self.outside.first() {
            let mut s = format!(
                "{} element(s) outside the results any legitimate implementation returns; output \
                 {} element {}: {} gives {}, legitimate: {}",
                self.outside_count, o.output, o.flat, o.backend, o.actual, o.set
            );
            if !o.freedoms.is_empty() {
                s.push_str(&format!(" (bounded by {})", o.freedoms.join(", ")));
            }
            return s;
        }
        let mut s = format!(
            "each of the {} differing element(s) lies inside the results a legitimate \
             implementation may return",
            self.inside_count
        );
        if self.unbounded_count > 0 {
            s.push_str(&format!(
                "; {} of them widened by an op the semantics table does not bound (too wide \
                 to decide{})",
                self.unbounded_count,
                if self.unmodelled.is_empty() {
                    String::new()
                } else {
                    format!(": {}", self.unmodelled.join(", "))
                }
            ));
        }
        if self.inconsistent_count > 0 {
            s.push_str(&format!(
                "; {} more not decided: their set does not hold the oracle's own value (a gap \
                 in the enclosure's model)",
                self.inconsistent_count
            ));
        }
        if !self.inside_freedoms.is_empty() {
            s.push_str(&format!(" ({})", self.inside_freedoms.join(", ")));
        }
        s
    }
}

/// How many outside elements a proof keeps.
const KEPT: usize = 5;

/// The proof over every XLA result in `outcomes` that differs from the oracle's (`oracle`): the
/// module enclosed on `inputs`, each differing element checked against its set.
pub fn prove(
    module: &Module,
    inputs: &[Literal],
    oracle: &RunResult,
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Proof {
    let started = std::time::Instant::now();
    // Only the outputs that differ need sets: the module is enclosed reduced to them (their
    // cone; the other outputs' ops are dead code there), when its root is a tuple of arrays.
    let differing = differing_leaves(oracle, outcomes, tol);
    let reduced = match &differing {
        Some(keep) => crate::forms::restrict_outputs(module, keep),
        None => None,
    };
    let (enclosed, kept) = match &reduced {
        Some(m) => (m, differing.as_deref()),
        None => (module, None),
    };
    // Only the elements checked below need sets (a dot feeding an output computes just those).
    let opts = EncloseOptions {
        demand: demanded_elements(kept, oracle, outputs_of(outcomes), tol),
        ..EncloseOptions::default()
    };
    let mut proof = match enclose(enclosed, inputs, &opts) {
        Ok(enc) => {
            let mut p = check_leaves(&enc, kept, oracle, outcomes, tol);
            if p.unbounded_count > 0 {
                p.unmodelled = enc.unmodelled.iter().cloned().collect();
            }
            p
        }
        Err(e) => Proof {
            error: Some(e.to_string()),
            ..Proof::default()
        },
    };
    proof.set_ms = started.elapsed().as_secs_f64() * 1e3;
    proof
}

/// The output leaves where some XLA result is not the oracle's value,
/// ascending; `None` when every leaf may (a result whose leaves do not line up with the
/// oracle's) or none does.
pub(crate) fn differing_leaves(
    oracle: &RunResult,
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Option<Vec<usize>> {
    let expected: Vec<&hlo::ArrayLiteral> =
        oracle.outputs.iter().flat_map(|l| l.leaves()).collect();
    let mut keep = std::collections::BTreeSet::new();
    for (name, o) in outcomes {
        if name == engine::ORACLE || name == engine::VOTER {
            continue;
        }
        let Some(r) = o.as_ok() else { continue };
        let actual: Vec<&hlo::ArrayLiteral> = r.outputs.iter().flat_map(|l| l.leaves()).collect();
        if actual.len() != expected.len() {
            return None;
        }
        for (leaf, (e, a)) in expected.iter().zip(&actual).enumerate() {
            if failing_elements(leaf, e, a, tol).is_none_or(|f| !f.is_empty()) {
                keep.insert(leaf);
            }
        }
    }
    (!keep.is_empty() && keep.len() < expected.len()).then(|| keep.into_iter().collect())
}

/// The XLA results among `outcomes` (not the oracle's, not the voter's).
fn outputs_of(outcomes: &[(String, Outcome)]) -> impl Iterator<Item = &RunResult> + Clone {
    outcomes
        .iter()
        .filter(|(n, _)| n != engine::ORACLE && n != engine::VOTER)
        .filter_map(|(_, o)| o.as_ok())
}

/// Per output leaf of the enclosed module (the module's leaves `kept`, or all), the elements
/// [`check_leaves`] looks at: those where some XLA result differs from the oracle's (every
/// element, `None`, where a result does not line up). `None` when no result lines up at all.
fn demanded_elements<'a>(
    kept: Option<&[usize]>,
    oracle: &RunResult,
    results: impl Iterator<Item = &'a RunResult> + Clone,
    tol: &Tolerance,
) -> Option<Vec<Option<Vec<usize>>>> {
    let expected: Vec<&hlo::ArrayLiteral> =
        oracle.outputs.iter().flat_map(|l| l.leaves()).collect();
    let leaves: Vec<usize> = match kept {
        Some(k) => k.to_vec(),
        None => (0..expected.len()).collect(),
    };
    let actuals: Vec<Vec<&hlo::ArrayLiteral>> = results
        .map(|r| r.outputs.iter().flat_map(|l| l.leaves()).collect())
        .collect();
    if actuals.is_empty() || actuals.iter().any(|a| a.len() != expected.len()) {
        return None;
    }
    Some(
        leaves
            .iter()
            .map(|&leaf| {
                let mut want = std::collections::BTreeSet::new();
                for a in &actuals {
                    let (e, a) = (expected.get(leaf)?, a.get(leaf)?);
                    if e.ty != a.ty || e.len() != a.len() {
                        return None;
                    }
                    want.extend(failing_elements(leaf, e, a, tol)?);
                }
                Some(want.into_iter().collect())
            })
            .collect(),
    )
}

/// [`prove`] against an enclosure already computed.
pub fn check(
    enc: &Enclosure,
    oracle: &RunResult,
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Proof {
    check_leaves(enc, None, oracle, outcomes, tol)
}

/// [`check`] against an enclosure of the module reduced to the output leaves `kept` (its leaf
/// `i` is the module's leaf `kept[i]`; `None`: every leaf, in order).
fn check_leaves(
    enc: &Enclosure,
    kept: Option<&[usize]>,
    oracle: &RunResult,
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Proof {
    let mut p = Proof::default();
    let mut inside_why = Why::NONE;
    let expected: Vec<&hlo::ArrayLiteral> =
        oracle.outputs.iter().flat_map(|l| l.leaves()).collect();
    for (name, o) in outcomes {
        if name == engine::ORACLE || name == engine::VOTER {
            continue;
        }
        let Some(r) = o.as_ok() else { continue };
        let actual: Vec<&hlo::ArrayLiteral> = r.outputs.iter().flat_map(|l| l.leaves()).collect();
        for (leaf, (e, a)) in expected.iter().zip(&actual).enumerate() {
            let set = match kept {
                Some(k) => k
                    .iter()
                    .position(|&l| l == leaf)
                    .and_then(|i| enc.leaves.get(i)),
                None => enc.leaves.get(leaf),
            };
            let Some(set) = set else {
                continue;
            };
            if set.ty != a.ty || set.len() != a.len() {
                continue;
            }
            let candidates =
                failing_elements(leaf, e, a, tol).unwrap_or_else(|| (0..a.len()).collect());
            for k in candidates {
                let v = a.get(k);
                // The oracle is one legitimate implementation: a set without its value is no
                // evidence about XLA's.
                if !set.holds(k, e.get(k)) {
                    p.inconsistent_count += 1;
                    continue;
                }
                if set.holds(k, v) {
                    p.inside_count += 1;
                    inside_why |= set.why(k);
                    // A set an op without a rule widened decides nothing: with a rule it might
                    // not hold XLA's value.
                    if set.why(k).has(Why::UNMODELLED) {
                        p.unbounded_count += 1;
                    }
                    continue;
                }
                p.outside_count += 1;
                if p.outside.len() < KEPT {
                    p.outside.push(OutsideElement {
                        backend: name.clone(),
                        output: leaf,
                        flat: k,
                        actual: scalar_text(v),
                        expected: scalar_text(e.get(k)),
                        set: set.describe(k),
                        freedoms: set.why(k).names().iter().map(|s| s.to_string()).collect(),
                    });
                }
            }
        }
    }
    p.inside_freedoms = inside_why.names().iter().map(|s| s.to_string()).collect();
    p
}

//! Differences XLA is free to make: the oracle evaluates again under each allowed implementation
//! choice (`interp::variant`), and a difference every element of which one of them explains is a
//! match.

use crate::classify::{classify, Evidence, Verdict, VerdictKind};
use crate::compare::Tolerance;
use engine::backend::{Outcome, RunResult};
use engine::interp_backend::InterpBackend;
use engine::ORACLE;
use hlo::{Literal, Module};

/// Explains a mismatch by a choice XLA is free to make, or `None`. In order:
/// 1. flush-to-zero: the oracle agrees once subnormal inputs are zeros (XLA CPU's denormal mode);
///    vote `ftz`.
/// 2. implementation choices (`interp::variant`): denormals flushed anywhere (the CPU mode XLA
///    CPU runs in), the sign of NaNs operations produce, the last ulps of approximated
///    functions (through comparisons, bitcasts and roundings that turn them into different
///    integers), and the accumulation precision of dots and convolutions (partial sums that
///    overflow). The oracle evaluates again under each choice, and every element XLA returned
///    must equal the oracle's element under one of them; vote `implementation-choice`.
/// 3. select-and-scatter keeping the first or the last of tied elements (`select_ties`): one
///    rule must explain every output; vote `implementation-choice`.
/// 4. for modules with approximated complex functions, their rounding noise
///    ([`explain_by_complex_rounding`]).
pub fn explain_by_allowed_choices(
    oracle: &InterpBackend,
    module: &Module,
    inputs: &[Literal],
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Option<Verdict> {
    use interp::variant::{Accumulation, Narrowing, SelectTies, Variant, APPROXIMATED};
    let k = outcomes.iter().position(|(n, _)| n == ORACLE)?;
    let base = outcomes[k].1.as_ok()?.clone();
    let flushed = crate::compare::flush_subnormals(inputs);
    // The verdict with `oracle_outcome` in the oracle's place, when that is a match.
    let matches_with = |oracle_outcome: Outcome| {
        let mut again = outcomes.to_vec();
        again[k].1 = oracle_outcome;
        Some(classify(&again, &Evidence::new(tol))).filter(|v| v.kind == VerdictKind::Match)
    };
    if let Some(f) = &flushed {
        if let Some(mut v) = matches_with(oracle.run_module(module, f)) {
            v.message =
                "explained by flush-to-zero: the oracle agrees once subnormal inputs are zero"
                    .into();
            v.vote = Some("ftz".into());
            return Some(v);
        }
    }
    let mut approximated: Vec<hlo::Opcode> = module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.opcode))
        .filter(|op| APPROXIMATED.contains(op))
        .collect();
    approximated.sort_by_key(|op| op.name());
    approximated.dedup();
    let mut variants = Vec::new();
    for flush_denormals in [false, true] {
        for nan_sign in [None, Some(true), Some(false)] {
            variants.push(Variant {
                nan_sign,
                flush_denormals,
                ..Variant::default()
            });
        }
    }
    variants.remove(0); // the default evaluation is already a candidate
    if module.computations.iter().any(|c| {
        c.instructions
            .iter()
            .any(|i| matches!(i.opcode, hlo::Opcode::Dot | hlo::Opcode::Convolution))
    }) {
        for accumulation in [Accumulation::Narrow, Accumulation::NarrowFused] {
            variants.push(Variant {
                accumulation,
                ..Variant::default()
            });
        }
        variants.push(Variant {
            skip_conv_padding: true,
            ..Variant::default()
        });
    }
    // Narrowing to f16 once or through f32: XLA CPU's choice depends on the host's vector
    // features (AVX512-FP16), so either is allowed.
    if module.computations.iter().any(|c| {
        c.instructions.iter().any(|i| {
            i.opcode == hlo::Opcode::Convert
                && i.shape
                    .leaves()
                    .iter()
                    .any(|l| l.ty == hlo::PrimitiveType::F16)
        })
    }) {
        for narrowing in [Narrowing::ViaF32, Narrowing::Direct] {
            variants.push(Variant {
                narrowing: Some(narrowing),
                ..Variant::default()
            });
        }
    }
    if !approximated.is_empty() {
        variants.push(Variant {
            wide_complex: true,
            ..Variant::default()
        });
        // Every approximated op off by the same ulps, then each op alone (in a chain of two,
        // the last one's rounding is often all that differs).
        for n in [1, -1, 2, -2, 4, -4] {
            variants.push(Variant {
                nudge_ulps: n,
                ..Variant::default()
            });
        }
        if approximated.len() > 1 {
            for &op in &approximated {
                for n in [1, -1, 2, -2] {
                    variants.push(Variant {
                        nudge_ulps: n,
                        nudge_only: Some(op),
                        ..Variant::default()
                    });
                }
            }
        }
    }
    let mut candidates: Vec<Vec<Literal>> = vec![base.outputs.clone()];
    let xla: Vec<(usize, &RunResult)> = outcomes
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != k)
        .filter_map(|(j, (_, o))| o.as_ok().map(|r| (j, r)))
        .collect();
    if xla.is_empty() {
        return None;
    }
    for variant in &variants {
        let b = oracle.with_variant(*variant);
        // Under flush-to-zero, subnormal inputs read as zero too.
        let ins = match (&flushed, variant.flush_denormals) {
            (Some(f), true) => f.as_slice(),
            _ => inputs,
        };
        let Outcome::Ok(r) = b.run_module(module, ins) else {
            continue;
        };
        candidates.push(r.outputs);
        // Every XLA result must be explained by the candidates so far.
        let mut verdict = None;
        for &(j, r) in &xla {
            match explained_by(
                &candidates,
                r,
                &base,
                &outcomes[j],
                tol,
                crate::compare::merge_closest,
            ) {
                Some(v) => verdict = Some(v),
                None => {
                    verdict = None;
                    break;
                }
            }
        }
        if let Some(mut v) = verdict {
            v.message = "explained by implementation choices XLA is free to make (the sign of \
                         NaNs operations produce, the last ulps of approximated functions, \
                         dot/convolution accumulation precision, convolution padding, \
                         precision of c64 functions, \
                         flush-to-zero): each \
                         differing element is the oracle's under one"
                .into();
            v.vote = Some("implementation-choice".into());
            return Some(v);
        }
    }
    // Which of tied elements select-and-scatter selects: a choice per window, which element-wise
    // merging would overstate (a window's source value lost would pass as "another choice"),
    // so each rule must explain every output alone.
    if module.computations.iter().any(|c| {
        c.instructions
            .iter()
            .any(|i| i.opcode == hlo::Opcode::SelectAndScatter)
    }) {
        for rule in [SelectTies::First, SelectTies::Last] {
            let b = oracle.with_variant(Variant {
                select_ties: Some(rule),
                ..Variant::default()
            });
            if let Some(mut v) = matches_with(b.run_module(module, inputs)) {
                v.message = format!(
                    "explained by the choice among tied elements XLA is free to make in \
                     select-and-scatter: the oracle agrees keeping the {} of them",
                    if rule == SelectTies::First {
                        "first"
                    } else {
                        "last"
                    }
                );
                v.vote = Some("implementation-choice".into());
                return Some(v);
            }
        }
    }
    let complex_fn = module.computations.iter().any(|c| {
        c.instructions.iter().any(|i| {
            approximated.contains(&i.opcode) && i.shape.leaves().iter().any(|l| l.ty.is_complex())
        })
    });
    if !complex_fn {
        return None;
    }
    explain_by_complex_rounding(oracle, module, inputs, &base, &xla, outcomes, tol)
}

/// The last resort of [`explain_by_allowed_choices`], for modules with approximated complex
/// functions (the caller checks): their results carry rounding noise of the modulus' ulps in both parts, which later
/// ops can magnify (a log of the noise) or turn on (a branch cut at its sign). The oracle runs
/// with every complex result moved by 1, 2 and 4 ulps of its larger part, both ways; XLA's
/// element is explained when it lies between those results (see
/// [`crate::compare::merge_within_hull`]).
fn explain_by_complex_rounding(
    oracle: &InterpBackend,
    module: &Module,
    inputs: &[Literal],
    base: &RunResult,
    xla: &[(usize, &RunResult)],
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Option<Verdict> {
    use interp::variant::Variant;
    let mut candidates: Vec<Vec<Literal>> = vec![base.outputs.clone()];
    for n in [1, -1, 2, -2, 4, -4] {
        let b = oracle.with_variant(Variant {
            nudge_ulps: n,
            normwise_complex: true,
            ..Variant::default()
        });
        if let Outcome::Ok(r) = b.run_module(module, inputs) {
            candidates.push(r.outputs);
        }
    }
    let mut verdict = None;
    for &(j, r) in xla {
        verdict = Some(explained_by(
            &candidates,
            r,
            base,
            &outcomes[j],
            tol,
            crate::compare::merge_within_hull,
        )?);
    }
    let mut v = verdict?;
    v.message = "explained by rounding noise of complex functions: each differing element lies \
                 between the oracle's results with complex results moved by a few ulps of their \
                 modulus"
        .into();
    v.vote = Some("implementation-choice".into());
    Some(v)
}

/// How the candidates' elements are merged into the one oracle result XLA's is compared with.
type Merge = fn(&[&hlo::ArrayLiteral], &hlo::ArrayLiteral) -> Option<hlo::ArrayLiteral>;

/// The `match` verdict when every element of XLA's result `r` (of `xla`) is explained by the
/// candidate oracle results' elements as `merge` takes them (within the tolerance), else `None`.
fn explained_by(
    candidates: &[Vec<Literal>],
    r: &RunResult,
    base: &RunResult,
    xla: &(String, Outcome),
    tol: &Tolerance,
    merge: Merge,
) -> Option<Verdict> {
    let mut merged = Vec::with_capacity(r.outputs.len());
    for (leaf, actual) in r.outputs.iter().enumerate() {
        let Literal::Array(actual) = actual else {
            return None;
        };
        let cands: Vec<&hlo::ArrayLiteral> = candidates
            .iter()
            .filter_map(|c| match c.get(leaf) {
                Some(Literal::Array(a)) => Some(a),
                _ => None,
            })
            .collect();
        if cands.len() != candidates.len() {
            return None;
        }
        merged.push(Literal::Array(merge(&cands, actual)?));
    }
    let again = vec![
        (
            ORACLE.to_string(),
            Outcome::Ok(RunResult {
                outputs: merged,
                ..base.clone()
            }),
        ),
        xla.clone(),
    ];
    let v = classify(&again, &Evidence::new(tol));
    (v.kind == VerdictKind::Match).then_some(v)
}

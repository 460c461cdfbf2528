//! Differences XLA is free to make: the oracle evaluates again under each allowed implementation
//! choice (`interp::variant`), and a difference every element of which one of them explains is a
//! match.

use crate::classify::{classify, Evidence, Verdict, VerdictKind};
use crate::compare::{ClosestMerge, Tolerance};
use engine::backend::{Outcome, RunResult};
use engine::interp_backend::InterpBackend;
use engine::ORACLE;
use hlo::{Literal, Module, PrimitiveType};

/// Explains a mismatch by a choice XLA is free to make, or `None`. In order:
/// 1. flush-to-zero: the oracle agrees once subnormal inputs are zeros (XLA CPU's denormal mode);
///    vote `ftz`.
/// 2. implementation choices (`interp::variant`): denormals flushed anywhere (the CPU mode XLA
///    CPU runs in), the sign of NaNs operations produce, the last ulps of approximated
///    functions (through comparisons, bitcasts and roundings that turn them into different
///    integers), the accumulation precision of dots and convolutions (partial sums that
///    overflow), the order reductions combine their elements in, and which partial products of complex multiplies are fused. The oracle evaluates again under each choice, and every element XLA returned
///    must equal the oracle's element under one of them; vote `implementation-choice`.
/// 3. select-and-scatter keeping the first or the last of tied elements (`select_ties`): one
///    rule must explain every output; vote `implementation-choice`.
/// 4. for modules with approximated complex functions or complex divides, their rounding noise
///    ([`explain_by_complex_rounding`]).
///
/// Only the output leaves that differ need explaining: the search runs on the module reduced to
/// them (their cone, as the proof encloses it), and the verdict's comparison names them by their
/// place in the whole result.
pub fn explain_by_allowed_choices(
    oracle: &InterpBackend,
    module: &Module,
    inputs: &[Literal],
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Option<Verdict> {
    let base = outcomes.iter().find(|(n, _)| n == ORACLE)?.1.as_ok()?;
    let restricted = crate::proof::differing_leaves(base, outcomes, tol).and_then(|keep| {
        let m = crate::forms::restrict_outputs(module, &keep)?;
        let outcomes: Vec<(String, Outcome)> = outcomes
            .iter()
            .map(|(n, o)| (n.clone(), select_leaves(o, &keep)))
            .collect();
        Some((keep, m, outcomes))
    });
    let Some((keep, m, restricted_outcomes)) = restricted else {
        return explain_whole(oracle, module, inputs, outcomes, tol);
    };
    let mut v = explain_whole(oracle, &m, inputs, &restricted_outcomes, tol)?;
    for c in v.comparison.iter_mut().flat_map(|c| c.outputs.iter_mut()) {
        c.output = keep[c.output];
    }
    v.mismatched_outputs = v.mismatched_outputs.iter().map(|&o| keep[o]).collect();
    Some(v)
}

/// `o` with only the output leaves `keep` (in that order); a result whose outputs are not one
/// array per leaf, or any other outcome, as it is.
fn select_leaves(o: &Outcome, keep: &[usize]) -> Outcome {
    match o {
        Outcome::Ok(r) if r.outputs.iter().all(|l| matches!(l, Literal::Array(_))) => {
            Outcome::Ok(RunResult {
                outputs: keep
                    .iter()
                    .filter_map(|&k| r.outputs.get(k).cloned())
                    .collect(),
                result_shape: None,
                ..r.clone()
            })
        }
        o => o.clone(),
    }
}

/// [`explain_by_allowed_choices`] over every output of `module`.
fn explain_whole(
    oracle: &InterpBackend,
    module: &Module,
    inputs: &[Literal],
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Option<Verdict> {
    let k = outcomes.iter().position(|(n, _)| n == ORACLE)?;
    let base = outcomes[k].1.as_ok()?.clone();
    let flushed = crate::compare::flush_subnormals(inputs);
    if let Some(f) = &flushed {
        if let Some(mut v) = matches_with(outcomes, k, oracle.run_module(module, f), tol) {
            v.message =
                "explained by flush-to-zero: the oracle agrees once subnormal inputs are zero"
                    .into();
            v.vote = Some("ftz".into());
            return Some(v);
        }
    }
    let approximated = approximated_ops(module);
    let variants = candidate_variants(module, &approximated);
    let xla: Vec<(usize, &RunResult)> = outcomes
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != k)
        .filter_map(|(j, (_, o))| o.as_ok().map(|r| (j, r)))
        .collect();
    if xla.is_empty() {
        return None;
    }
    let elementwise = Elementwise {
        oracle,
        module,
        inputs,
        flushed: flushed.as_deref(),
        base: &base,
        xla: &xla,
        outcomes,
        tol,
    };
    if let Some(v) = elementwise.explain(&variants) {
        return Some(v);
    }
    if let Some(v) = explain_by_select_ties(oracle, module, inputs, outcomes, k, tol) {
        return Some(v);
    }
    if let Some(v) = explain_by_input_rounding(oracle, module, inputs, &base, &xla, outcomes, tol) {
        return Some(v);
    }
    let complex_fn = any_instruction(module, |i| {
        i.shape.leaves().iter().any(|l| {
            l.ty.is_complex()
                && (approximated.contains(&i.opcode)
                    || interp::variant::rounds_like_approximated(i.opcode, l.ty))
        })
    });
    if !complex_fn {
        return None;
    }
    explain_by_complex_rounding(oracle, module, inputs, &base, &xla, outcomes, tol)
}

/// The verdict with `oracle_outcome` in the oracle's place (`outcomes[k]`), when that is a
/// match.
fn matches_with(
    outcomes: &[(String, Outcome)],
    k: usize,
    oracle_outcome: Outcome,
    tol: &Tolerance,
) -> Option<Verdict> {
    let mut again = outcomes.to_vec();
    again[k].1 = oracle_outcome;
    Some(classify(&again, &Evidence::new(tol))).filter(|v| v.kind == VerdictKind::Match)
}

/// Whether any instruction of any computation of `module` satisfies `pred`.
fn any_instruction(module: &Module, pred: impl Fn(&hlo::Instruction) -> bool) -> bool {
    module
        .computations
        .iter()
        .any(|c| c.instructions.iter().any(&pred))
}

/// The approximated opcodes (`interp::variant::APPROXIMATED`) `module` uses, sorted by name,
/// each once.
fn approximated_ops(module: &Module) -> Vec<hlo::Opcode> {
    use interp::variant::APPROXIMATED;
    let mut approximated: Vec<hlo::Opcode> = module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.opcode))
        .filter(|op| APPROXIMATED.contains(op))
        .collect();
    approximated.sort_by_key(|op| op.name());
    approximated.dedup();
    approximated
}

/// The implementation choices the element-wise explanation tries on `module`, in order (the
/// default evaluation excluded: it is already a candidate): NaN signs and flushed denormals;
/// with dots or convolutions, narrow accumulation and skipped convolution padding; with
/// conversions to f16, both ways of narrowing; with float or complex reductions, other orders
/// of combining their elements; with complex multiplies, the other contractions
/// of their partial products into multiply-adds; with `approximated` ops (see
/// [`approximated_ops`]), c64 functions in double precision and ulp nudges, all together and
/// then each op alone.
fn candidate_variants(
    module: &Module,
    approximated: &[hlo::Opcode],
) -> Vec<interp::variant::Variant> {
    use interp::variant::{Accumulation, ComplexMul, Narrowing, Variant};
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
    if any_instruction(module, |i| {
        matches!(i.opcode, hlo::Opcode::Dot | hlo::Opcode::Convolution)
            || (i.opcode == hlo::Opcode::CustomCall
                && interp::onednn::call_profile(i, &[]).is_some_and(|p| p.contraction))
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
    // A dot's products are summed in an order of the kernel's choosing (blocked, vectorized):
    // where a partial sum overflows or cancels, the order decides the value, in the result's
    // precision (f32 partial sums for f32 and narrower, f64 for f64).
    if any_instruction(module, |i| {
        i.opcode == hlo::Opcode::Dot
            && i.shape
                .leaves()
                .iter()
                .any(|l| l.ty.is_float() || l.ty.is_complex())
    }) {
        for reduce_order in interp::variant::ReduceOrder::OTHERS {
            variants.push(Variant {
                accumulation: Accumulation::Narrow,
                reduce_order,
                ..Variant::default()
            });
        }
    }
    // Complex multiply: which partial products LLVM fuses into multiply-adds depends on the
    // code around it (a product used twice is not fused), and decides where an overflowing
    // partial product makes a part inf or NaN.
    if any_instruction(module, |i| {
        i.opcode == hlo::Opcode::Multiply && i.shape.leaves().iter().any(|l| l.ty.is_complex())
    }) {
        for complex_mul in ComplexMul::OTHERS {
            variants.push(Variant {
                complex_mul,
                ..Variant::default()
            });
        }
    }
    // Reductions of floats combine in an order of XLA's choosing; where a partial result
    // overflows (or cancels), the order decides the value.
    if any_instruction(module, |i| {
        matches!(i.opcode, hlo::Opcode::Reduce | hlo::Opcode::ReduceWindow)
            && i.shape
                .leaves()
                .iter()
                .any(|l| l.ty.is_float() || l.ty.is_complex())
    }) {
        // With denormals flushed too: a partial product that underflows to zero in XLA CPU's
        // flush-to-zero mode meets another that overflowed (inf * 0 is NaN).
        for flush_denormals in [false, true] {
            for reduce_order in interp::variant::ReduceOrder::OTHERS {
                variants.push(Variant {
                    reduce_order,
                    flush_denormals,
                    ..Variant::default()
                });
            }
        }
    }
    // Narrowing to f16 once or through f32: XLA CPU's choice depends on the host's vector
    // features (AVX512-FP16), so either is allowed.
    if any_instruction(module, |i| {
        i.opcode == hlo::Opcode::Convert
            && i.shape
                .leaves()
                .iter()
                .any(|l| l.ty == hlo::PrimitiveType::F16)
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
            narrow_complex: true,
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
            for &op in approximated {
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
    variants
}

/// What the element-wise explanation (step 2 of [`explain_by_allowed_choices`]) works on.
struct Elementwise<'a> {
    oracle: &'a InterpBackend,
    module: &'a Module,
    inputs: &'a [Literal],
    /// The inputs with subnormals flushed to zero, when any input has one.
    flushed: Option<&'a [Literal]>,
    /// The oracle's default result.
    base: &'a RunResult,
    /// The XLA results, by their index in `outcomes`.
    xla: &'a [(usize, &'a RunResult)],
    outcomes: &'a [(String, Outcome)],
    tol: &'a Tolerance,
}

impl Elementwise<'_> {
    /// The oracle evaluates again under each of `variants` in turn; once every XLA result is
    /// explained element-wise by the candidates so far (the default result and the variants'),
    /// the match verdict, voting `implementation-choice`.
    fn explain(&self, variants: &[interp::variant::Variant]) -> Option<Verdict> {
        // Per XLA result and output, the merge of the candidates so far, kept as each variant's
        // result arrives (each costs a pass over the elements not yet explained).
        let mut merges: Vec<Vec<ClosestMerge>> = Vec::with_capacity(self.xla.len());
        for (_, r) in self.xla {
            let mut per_output = Vec::with_capacity(r.outputs.len());
            for (leaf, actual) in r.outputs.iter().enumerate() {
                let (Literal::Array(actual), Some(Literal::Array(base))) =
                    (actual, self.base.outputs.get(leaf))
                else {
                    return None;
                };
                per_output.push(ClosestMerge::new(base, actual)?);
            }
            merges.push(per_output);
        }
        for variant in variants {
            let b = self.oracle.with_variant(*variant);
            // Under flush-to-zero the oracle reads subnormal operands of arithmetic as zero
            // where they are used (a TOTALORDER compare or a bitcast-convert of the same
            // parameter still sees its bits); the inputs flushed up front are tried as well.
            let mut runs = vec![self.inputs];
            if let (Some(f), true) = (self.flushed, variant.flush_denormals) {
                runs.push(f);
            }
            let mut changed = false;
            for ins in runs {
                if let Outcome::Ok(r) = b.run_module(self.module, ins) {
                    for per_output in &mut merges {
                        for (leaf, m) in per_output.iter_mut().enumerate() {
                            if let Some(Literal::Array(c)) = r.outputs.get(leaf) {
                                changed |= m.add(c);
                            }
                        }
                    }
                }
            }
            // Unchanged merges were no match before this variant either.
            if !changed {
                continue;
            }
            // Every XLA result must be explained by the candidates so far.
            if let Some(mut v) = self.all_merged_match(&merges) {
                v.message = "explained by implementation choices XLA is free to make (the sign \
                             of NaNs operations produce, the last ulps of approximated \
                             functions, dot/convolution accumulation precision, convolution \
                             padding, precision of c64 functions, fused multiply-adds of \
                             complex products, the order reductions combine elements in, \
                             flush-to-zero): each differing element is the oracle's under one"
                    .into();
                v.vote = Some("implementation-choice".into());
                return Some(v);
            }
        }
        None
    }

    /// The match verdict of the last XLA result when each one matches its merge, else `None`.
    fn all_merged_match(&self, merges: &[Vec<ClosestMerge>]) -> Option<Verdict> {
        let mut verdict = None;
        for (&(j, _), per_output) in self.xla.iter().zip(merges) {
            let again = vec![
                (
                    ORACLE.to_string(),
                    Outcome::Ok(RunResult {
                        outputs: per_output
                            .iter()
                            .map(|m| Literal::Array(m.merged().clone()))
                            .collect(),
                        result_shape: self.base.result_shape.clone(),
                        timings: self.base.timings.clone(),
                        optimized_hlo: None,
                        before_optimizations_hlo: None,
                        dump_dir: None,
                    }),
                ),
                self.outcomes[j].clone(),
            ];
            let v = classify(&again, &Evidence::new(self.tol));
            if v.kind != VerdictKind::Match {
                return None;
            }
            verdict = Some(v);
        }
        verdict
    }
}

/// The match verdict when every differing element of every XLA result lies within the hull of
/// the oracle's default result and the successful `runs` ([`crate::compare::merge_within_hull`]).
fn within_hull(
    runs: impl IntoIterator<Item = Outcome>,
    base: &RunResult,
    xla: &[(usize, &RunResult)],
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Option<Verdict> {
    let mut candidates: Vec<Vec<Literal>> = vec![base.outputs.clone()];
    candidates.extend(runs.into_iter().filter_map(|o| match o {
        Outcome::Ok(r) => Some(r.outputs),
        _ => None,
    }));
    all_explained_by(
        &candidates,
        base,
        xla,
        outcomes,
        tol,
        crate::compare::merge_within_hull,
    )
}

/// Rounding of the inputs: an ill-conditioned computation (tanh next to its pole, a difference
/// of nearly equal values) turns the few ulps of error XLA may make in each op into a large
/// output error that no per-op allowance covers. The oracle evaluates again on the inputs with
/// every f16/bf16/f32/f64 (and complex) element moved 1 and 2 ulps away from and toward zero
/// (never to zero or across it; zeros, infinities and NaNs stay); each differing element of
/// XLA's result must lie within the hull of those results (a continuous function takes every
/// value between them). A computation that does not amplify the rounding gives a hull a few
/// ulps wide, so a wrong value stays a mismatch; integer inputs and f8/f4 (whose ulps are too
/// coarse to call rounding) are not moved.
fn explain_by_input_rounding(
    oracle: &InterpBackend,
    module: &Module,
    inputs: &[Literal],
    base: &RunResult,
    xla: &[(usize, &RunResult)],
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
) -> Option<Verdict> {
    let mut runs = Vec::new();
    for ulps in [1i64, -1, 2, -2] {
        runs.push(oracle.run_module(module, &move_inputs(inputs, ulps)?));
    }
    let mut v = within_hull(runs, base, xla, outcomes, tol)?;
    v.message = "explained by the rounding of the inputs: each differing element lies between \
                 the oracle's results for inputs moved by up to 2 ulps (an ill-conditioned \
                 computation amplifies the rounding errors XLA may make)"
        .into();
    v.vote = Some("input-rounding".into());
    Some(v)
}

/// `inputs` with every f16/bf16/f32/f64 element (complex: each part) moved `ulps` units in the
/// last place away from zero (negative: toward it), keeping zeros, infinities, NaNs, and any
/// element the move would take to zero, across it or to infinity; `None` when no input has
/// such a type.
fn move_inputs(inputs: &[Literal], ulps: i64) -> Option<Vec<Literal>> {
    fn walk(l: &Literal, ulps: i64, any: &mut bool) -> Literal {
        match l {
            Literal::Array(a) => {
                let comp = a.ty.complex_component().unwrap_or(a.ty);
                let width = match comp {
                    PrimitiveType::F16 | PrimitiveType::Bf16 => 2,
                    PrimitiveType::F32 => 4,
                    PrimitiveType::F64 => 8,
                    _ => return l.clone(),
                };
                *any = true;
                let (exp_mask, sign): (u64, u64) = match comp {
                    PrimitiveType::F16 => (0x7c00, 0x8000),
                    PrimitiveType::Bf16 => (0x7f80, 0x8000),
                    PrimitiveType::F32 => (0x7f80_0000, 0x8000_0000),
                    _ => (0x7ff0_0000_0000_0000, 0x8000_0000_0000_0000),
                };
                let mut b = a.clone();
                for chunk in b.data.chunks_exact_mut(width) {
                    let mut bytes = [0u8; 8];
                    bytes[..width].copy_from_slice(chunk);
                    let bits = u64::from_le_bytes(bytes);
                    let mag = bits & !sign;
                    if mag == 0 || mag & exp_mask == exp_mask {
                        continue; // zero, infinity or NaN
                    }
                    let moved = mag as i64 + ulps;
                    if moved <= 0 || (moved as u64) & exp_mask == exp_mask {
                        continue;
                    }
                    let out = (bits & sign) | moved as u64;
                    chunk.copy_from_slice(&out.to_le_bytes()[..width]);
                }
                Literal::Array(b)
            }
            Literal::Tuple(t) => Literal::Tuple(t.iter().map(|e| walk(e, ulps, any)).collect()),
            other => other.clone(),
        }
    }
    let mut any = false;
    let out: Vec<Literal> = inputs.iter().map(|l| walk(l, ulps, &mut any)).collect();
    any.then_some(out)
}

/// Which of tied elements select-and-scatter selects: a choice per window, which element-wise
/// merging would overstate (a window's source value lost would pass as "another choice"),
/// so each rule must explain every output alone. The match verdict (in the oracle's place,
/// `outcomes[k]`) under the first rule that explains it, for a module with select-and-scatter.
fn explain_by_select_ties(
    oracle: &InterpBackend,
    module: &Module,
    inputs: &[Literal],
    outcomes: &[(String, Outcome)],
    k: usize,
    tol: &Tolerance,
) -> Option<Verdict> {
    use interp::variant::{SelectTies, Variant};
    if !any_instruction(module, |i| i.opcode == hlo::Opcode::SelectAndScatter) {
        return None;
    }
    for rule in [SelectTies::First, SelectTies::Last] {
        let b = oracle.with_variant(Variant {
            select_ties: Some(rule),
            ..Variant::default()
        });
        if let Some(mut v) = matches_with(outcomes, k, b.run_module(module, inputs), tol) {
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
    None
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
    let runs = [1, -1, 2, -2, 4, -4].map(|n| {
        oracle
            .with_variant(Variant {
                nudge_ulps: n,
                normwise_complex: true,
                ..Variant::default()
            })
            .run_module(module, inputs)
    });
    let mut v = within_hull(runs, base, xla, outcomes, tol)?;
    v.message = "explained by rounding noise of complex functions: each differing element lies \
                 between the oracle's results with complex results moved by a few ulps of their \
                 modulus"
        .into();
    v.vote = Some("implementation-choice".into());
    Some(v)
}

/// How the candidates' elements are merged into the one oracle result XLA's is compared with.
type Merge = fn(&[&hlo::ArrayLiteral], &hlo::ArrayLiteral) -> Option<hlo::ArrayLiteral>;

/// The `match` verdict of the last of the XLA results `xla` (by their index in `outcomes`)
/// when [`explained_by`] explains every one of them, else `None` (also when there are none).
fn all_explained_by(
    candidates: &[Vec<Literal>],
    base: &RunResult,
    xla: &[(usize, &RunResult)],
    outcomes: &[(String, Outcome)],
    tol: &Tolerance,
    merge: Merge,
) -> Option<Verdict> {
    let mut verdict = None;
    for &(j, r) in xla {
        verdict = Some(explained_by(candidates, r, base, &outcomes[j], tol, merge)?);
    }
    verdict
}

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

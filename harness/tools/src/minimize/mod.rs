//! The minimizer, in the manner of llvm-reduce: each file of this folder is one kind of
//! reduction that proposes candidate edits of a module ([`Reduction`]); [`minimize`] is the one
//! generic delta loop that tries them. A candidate is kept when the predicate still holds, and
//! the predicate is "the same verdict signature" ([`predicate::Signature`]), not "any failure":
//! a reduction that turns a mismatch in `log` into a crash elsewhere is refused.
//!
//! Every candidate is first cleaned ([`unused::cleanup`]: dead instructions, unused entry
//! parameters with their inputs, unused computations) and must pass the structural verifier
//! ([`verify`]) before it is tried.

pub mod calls;
pub mod constant;
pub mod constants;
pub mod fold;
pub mod inputs;
pub mod metadata;
pub mod operand;
pub mod outputs;
pub mod parameter;
pub mod predicate;
pub mod shapes;

use hlo::Module;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A module with one input per entry parameter: what the predicate runs.
pub use hlo::edit::Case;
pub use hlo::edit::{self as edit, unused};

/// One proposed edit: a description and the edited case (not yet cleaned or verified).
#[derive(Clone, Debug)]
pub struct Candidate {
    pub what: String,
    pub case: Case,
}

/// One kind of reduction. Candidates are numbered `0..count(case)`; `candidate` may return
/// `None` for an index that does not apply (an instruction of the wrong shape, ...). Earlier
/// indices should be the edits that remove the most.
pub trait Reduction {
    fn name(&self) -> &'static str;
    fn count(&self, case: &Case) -> usize;
    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate>;
}

/// The reductions in the order the loop tries them: coarse first.
pub fn default_reductions() -> Vec<Box<dyn Reduction>> {
    vec![
        Box::new(metadata::StripAnnotations),
        Box::new(outputs::DropOutputs),
        // Early too, so a large module does not keep its size through every other step.
        Box::new(shapes::ShrinkShapes),
        Box::new(calls::InlineCalls),
        Box::new(operand::ReplaceByOperand),
        Box::new(parameter::ReplaceByParameter),
        Box::new(constant::ReplaceByConstant),
        Box::new(fold::FoldToValue),
        Box::new(constants::SimplifyConstants),
        Box::new(inputs::ZeroInputs),
        Box::new(shapes::ShrinkShapes),
        // Last: by now few instructions are left to try as the output.
        Box::new(outputs::Reroot),
    ]
}

/// Limits of one minimization.
#[derive(Clone, Debug)]
pub struct Options {
    /// Most predicate calls.
    pub max_tests: usize,
    /// Wall-clock limit; the best case so far is returned when it is reached.
    pub time_limit: Duration,
    /// Try several consecutive edits of a reduction in one predicate call, doubling the number
    /// after a success and halving it after a failure (as ddmin and llvm-reduce do); `false`
    /// tries one edit per call.
    pub chunked: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_tests: 2000,
            time_limit: Duration::from_secs(600),
            chunked: true,
        }
    }
}

/// Up to `k` edits of `red` applied one after the other from `index` on (after an applied
/// edit the same index names the next site, as the list shifted), each cleaned and verified;
/// the case and the edits' descriptions, or `None` when none applies.
fn chunk(
    cur: &Case,
    red: &dyn Reduction,
    index: usize,
    k: usize,
    limit: (usize, u128),
) -> Option<(Case, Vec<String>)> {
    let mut case = cur.clone();
    let mut idx = index;
    let mut what = Vec::new();
    let mut steps = 0;
    while what.len() < k && idx < red.count(&case) && steps < 4 * k + 16 {
        steps += 1;
        let Some(cand) = red.candidate(&case, idx) else {
            idx += 1;
            continue;
        };
        let next = unused::cleanup(&cand.case).unwrap_or(cand.case);
        if next == case || size(&next) > limit || verify(&next).is_err() {
            idx += 1;
            continue;
        }
        case = next;
        what.push(cand.what);
    }
    (!what.is_empty()).then_some((case, what))
}

/// Per-reduction counts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ReductionStats {
    pub tried: usize,
    pub accepted: usize,
    pub refused_by_verifier: usize,
    /// Candidates larger than the module the minimization started from ([`size`]): never
    /// tried, so a repro never grows.
    #[serde(skip_serializing_if = "is_zero")]
    pub refused_as_larger: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How large a case is, compared instructions first (over every computation), then elements
/// (of every instruction's result, all leaves): the minimizer never returns a case larger than
/// the one it started from.
pub fn size(case: &Case) -> (usize, u128) {
    (
        case.module.instruction_count(),
        case.module.result_elements(),
    )
}

/// What a minimization did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub instructions_before: usize,
    pub instructions_after: usize,
    pub tests: usize,
    pub accepted: usize,
    pub rounds: usize,
    pub elapsed_ms: u128,
    /// True when a limit stopped the loop before a fixed point.
    pub stopped_early: bool,
    pub per_reduction: BTreeMap<String, ReductionStats>,
    /// The accepted edits, in order.
    pub log: Vec<String>,
}

impl Stats {
    /// instructions_after / instructions_before.
    pub fn ratio(&self) -> f64 {
        if self.instructions_before == 0 {
            1.0
        } else {
            self.instructions_after as f64 / self.instructions_before as f64
        }
    }
}

/// The checks every candidate must pass before it is tried: the IR's references are in range
/// and in definition order, parameter numbers are 0..n and the inputs fit them, and
/// `hlo::verify::verify_module` (structure and shape inference per opcode) accepts it.
pub fn verify(case: &Case) -> Result<(), String> {
    let m = &case.module;
    if m.entry >= m.computations.len() {
        return Err("entry computation out of range".into());
    }
    for (ci, c) in m.computations.iter().enumerate() {
        if c.root >= c.instructions.len() {
            return Err(format!("computation {}: root out of range", c.name));
        }
        let mut params = Vec::new();
        for (ii, i) in c.instructions.iter().enumerate() {
            for &o in &i.operands {
                if o >= c.instructions.len() {
                    return Err(format!("{}: operand out of range", i.name));
                }
                if o == ii {
                    return Err(format!("{}: uses itself", i.name));
                }
            }
            for p in i.control_predecessors() {
                if *p >= c.instructions.len() {
                    return Err(format!("{}: control predecessor out of range", i.name));
                }
            }
            for callee in i.called_computations() {
                if callee >= m.computations.len() || callee == ci {
                    return Err(format!("{}: called computation out of range", i.name));
                }
            }
            if let Some(n) = i.opcode.arity() {
                if i.operands.len() != n {
                    return Err(format!(
                        "{}: {} takes {n} operands, has {}",
                        i.name,
                        i.opcode.name(),
                        i.operands.len()
                    ));
                }
            }
            if i.opcode == hlo::Opcode::Parameter {
                params.push(i.parameter_number.unwrap_or(-1));
            }
        }
        params.sort();
        if params.iter().enumerate().any(|(k, &p)| p != k as i64) {
            return Err(format!(
                "computation {}: parameter numbers are not 0..{}",
                c.name,
                params.len()
            ));
        }
        if ci == m.entry {
            let shapes = c.parameter_shapes();
            if shapes.len() != case.inputs.len() {
                return Err(format!(
                    "{} entry parameters but {} inputs",
                    shapes.len(),
                    case.inputs.len()
                ));
            }
            for (k, (s, l)) in shapes.iter().zip(&case.inputs).enumerate() {
                if !s.compatible(&l.shape()) {
                    return Err(format!("input {k} does not fit parameter {k}"));
                }
            }
        }
    }
    // Definition order: uses after definitions, no cycles.
    for c in &m.computations {
        for (ii, i) in c.instructions.iter().enumerate() {
            if i.operands.iter().any(|&o| o > ii) {
                return Err(format!("{}: uses an operand defined after it", i.name));
            }
        }
    }
    hlo::verify::verify_module(m).map_err(|e| e.to_string())?;
    match order_dependent_reducer(m) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A reducer (of `reduce`, `reduce-window`, `select-and-scatter`, `all-reduce`,
/// `reduce-scatter`; not `scatter`, whose `(a, b) -> b` is jax's `.at[].set()` and only
/// order-dependent where indices collide) whose result `k` uses its accumulator `k` without
/// the element `k`, or the
/// other way round: `reduce(x, 0), to_apply=(a, b) -> a` is defined only up to the order the
/// elements are visited in (XLA requires reducers to be commutative and associative), so XLA
/// and the oracle may both be right and disagree. Edits inside reducers make such computations
/// (`xor(a, b)` reduced to `a`); a candidate with one is no repro. A result that uses neither
/// (a constant) is refused too: XLA takes the init value to be the reducer's identity and
/// drops a reduce over a dimension of size 1 (`algsimp`), which no constant reducer allows
/// (a minimized jax module "found" exactly that).
pub fn order_dependent_reducer(m: &hlo::Module) -> Option<String> {
    use hlo::Opcode as O;
    for c in &m.computations {
        for i in &c.instructions {
            let key = match i.opcode {
                O::Reduce | O::ReduceWindow | O::AllReduce | O::ReduceScatter => "to_apply",
                O::SelectAndScatter => "scatter",
                _ => continue,
            };
            let Some(hlo::Attr::Comp(f)) = i.attr(key) else {
                continue;
            };
            if let Some(e) = non_identity_init(m, c, i, *f) {
                return Some(e);
            }
            let Some(r) = m.computations.get(*f) else {
                continue;
            };
            let params = r.parameter_shapes().len();
            if params % 2 != 0 || params == 0 {
                continue;
            }
            let n = params / 2;
            let root = r.root_instruction();
            let results: Vec<usize> = if root.opcode == O::Tuple {
                root.operands.clone()
            } else {
                vec![r.root]
            };
            if results.len() != n {
                continue;
            }
            for (k, &res) in results.iter().enumerate() {
                let uses = parameters_used(r, res);
                let (acc, elem) = (uses.contains(&k), uses.contains(&(n + k)));
                if !(acc && elem) {
                    return Some(format!(
                        "{}: result {k} of reducer {} uses {} (order-dependent, or no init value \
                         is its identity)",
                        i.name,
                        r.name,
                        match (acc, elem) {
                            (true, _) => "the accumulator only",
                            (_, true) => "the element only",
                            _ => "neither operand",
                        }
                    ));
                }
            }
        }
    }
    None
}

/// A `reduce` or `reduce-window` of one operand whose reducer is one binary op and whose init
/// value is a constant that is not that op's identity (`multiply` from 0): XLA assumes the
/// identity (it may apply the init value any number of times, and algsimp drops a reduce over
/// a dimension of size 1), so such a module has no one right result. Edits of constants make
/// them; generated and jax modules use identities.
fn non_identity_init(
    m: &hlo::Module,
    c: &hlo::Computation,
    i: &hlo::Instruction,
    reducer: hlo::CompId,
) -> Option<String> {
    use hlo::{Opcode as O, Scalar};
    if !matches!(i.opcode, O::Reduce | O::ReduceWindow) || i.operands.len() != 2 {
        return None;
    }
    let (op, _) = interp::simple_binop(m, reducer)?;
    let init = c.instructions.get(i.operands[1])?;
    let Some(hlo::Constant::Literal(hlo::Literal::Array(a))) = &init.constant else {
        return None;
    };
    if a.len() != 1 {
        return None;
    }
    let v = a.get(0);
    let identity = match (op, v) {
        (O::Add | O::Or | O::Xor, Scalar::Pred(b)) => !b,
        (O::Add | O::Or | O::Xor, Scalar::C(re, im)) => re == 0.0 && im == 0.0,
        (O::Add | O::Or | O::Xor, x) => x.to_f64() == 0.0,
        (O::Multiply, Scalar::C(re, im)) => re == 1.0 && im == 0.0,
        (O::Multiply, x) => x.to_f64() == 1.0,
        (O::And, Scalar::Pred(b)) => b,
        (O::And, Scalar::S(x)) => x == -1,
        (O::And, Scalar::U(x)) => x == u64::MAX >> (64 - a.ty.bit_width().clamp(1, 64)),
        // The lowest (highest) value of the type, or -inf (inf): checked on the value alone,
        // so a max from anything at or below every element the type holds is accepted.
        (O::Maximum, Scalar::F(x)) => x == f64::NEG_INFINITY || x <= -lowest_finite_bound(a.ty),
        (O::Minimum, Scalar::F(x)) => x == f64::INFINITY || x >= lowest_finite_bound(a.ty),
        (O::Maximum, Scalar::S(x)) => x == i64::MIN >> (64 - a.ty.bit_width().clamp(1, 64)),
        (O::Minimum, Scalar::S(x)) => x == i64::MAX >> (64 - a.ty.bit_width().clamp(1, 64)),
        (O::Maximum, Scalar::U(x)) => x == 0,
        (O::Minimum, Scalar::U(x)) => x == u64::MAX >> (64 - a.ty.bit_width().clamp(1, 64)),
        (O::Maximum, Scalar::Pred(b)) => !b,
        (O::Minimum, Scalar::Pred(b)) => b,
        _ => return None,
    };
    (!identity).then(|| {
        format!(
            "{}: init value {} is not the identity of its reducer's {} (XLA assumes it is)",
            i.name,
            init.name,
            op.name()
        )
    })
}

/// The largest finite magnitude of float type `t` (f64's for the types with infinities, whose
/// identities are the infinities anyway).
fn lowest_finite_bound(t: hlo::PrimitiveType) -> f64 {
    use hlo::PrimitiveType as T;
    match t {
        T::F8E4M3FN => 448.0,
        T::F8E4M3FNUZ => 240.0,
        T::F8E5M2FNUZ => 57344.0,
        T::F8E4M3B11FNUZ => 30.0,
        T::F4E2M1FN => 6.0,
        _ => f64::MAX,
    }
}

/// The parameter numbers of computation `c` that instruction `at` depends on (a call's result
/// is taken to depend on all its operands).
fn parameters_used(c: &hlo::Computation, at: usize) -> Vec<usize> {
    let mut seen = vec![false; c.instructions.len()];
    let mut stack = vec![at];
    let mut out = Vec::new();
    while let Some(x) = stack.pop() {
        if x >= seen.len() || seen[x] {
            continue;
        }
        seen[x] = true;
        let i = &c.instructions[x];
        if i.opcode == hlo::Opcode::Parameter {
            if let Some(p) = i.parameter_number {
                out.push(p as usize);
            }
        }
        stack.extend(i.operands.iter().copied());
    }
    out
}

/// The generic delta loop: repeat rounds over every reduction until none applies (a fixed
/// point) or a limit is reached. A candidate larger than `start` ([`size`]) is never tried. Within a reduction, candidates are tried in index order; after
/// an accepted edit the same index is tried again on the new case (the list shifted). With
/// [`Options::chunked`], after an accepted edit the next call tries 2 edits at once, then 4,
/// ... while they are accepted, and half as many after a refusal, down to one edit (which,
/// refused, moves the index on): long runs of removable instructions cost a few calls.
pub fn minimize(
    start: Case,
    reductions: &[Box<dyn Reduction>],
    predicate: &mut dyn FnMut(&Case) -> bool,
    opts: &Options,
) -> (Case, Stats) {
    let t0 = Instant::now();
    let mut stats = Stats {
        instructions_before: start.module.instruction_count(),
        ..Stats::default()
    };
    // No candidate larger than the start is tried: the result is never larger than the input.
    let limit = size(&start);
    let mut cur = start;
    if let Some(c) = unused::cleanup(&cur) {
        if verify(&c).is_ok() && c != cur {
            stats.tests += 1;
            if predicate(&c) {
                stats
                    .log
                    .push("removed unused instructions, parameters and computations".into());
                cur = c;
            }
        }
    }
    let out_of_budget = |s: &Stats| s.tests >= opts.max_tests || t0.elapsed() >= opts.time_limit;
    'rounds: loop {
        stats.rounds += 1;
        let mut changed = false;
        for red in reductions {
            let mut index = 0;
            // Edits per predicate call: grows while edits are accepted, shrinks on failure.
            let mut k: usize = 1;
            loop {
                let n = red.count(&cur);
                if index >= n {
                    break;
                }
                if out_of_budget(&stats) {
                    stats.stopped_early = true;
                    break 'rounds;
                }
                if opts.chunked && k > 1 {
                    match chunk(&cur, red.as_ref(), index, k, limit) {
                        Some((case, what)) if what.len() > 1 => {
                            let entry = stats
                                .per_reduction
                                .entry(red.name().to_string())
                                .or_default();
                            entry.tried += 1;
                            stats.tests += 1;
                            if predicate(&case) {
                                entry.accepted += what.len();
                                stats.accepted += what.len();
                                for w in what {
                                    stats.log.push(format!("{}: {w}", red.name()));
                                }
                                cur = case;
                                changed = true;
                                k = (k * 2).min(64);
                            } else {
                                k /= 2;
                            }
                            continue;
                        }
                        // One edit or none left from here: the single-edit step decides.
                        _ => k = 1,
                    }
                }
                let Some(cand) = red.candidate(&cur, index) else {
                    index += 1;
                    continue;
                };
                let case = unused::cleanup(&cand.case).unwrap_or(cand.case);
                let entry = stats
                    .per_reduction
                    .entry(red.name().to_string())
                    .or_default();
                if case == cur {
                    index += 1;
                    continue;
                }
                if size(&case) > limit {
                    entry.refused_as_larger += 1;
                    index += 1;
                    continue;
                }
                if verify(&case).is_err() {
                    entry.refused_by_verifier += 1;
                    index += 1;
                    continue;
                }
                entry.tried += 1;
                stats.tests += 1;
                if predicate(&case) {
                    entry.accepted += 1;
                    stats.accepted += 1;
                    stats.log.push(format!("{}: {}", red.name(), cand.what));
                    cur = case;
                    changed = true;
                    k = 2;
                } else {
                    index += 1;
                }
            }
        }
        if !changed {
            break;
        }
    }
    stats.instructions_after = cur.module.instruction_count();
    stats.elapsed_ms = t0.elapsed().as_millis();
    (cur, stats)
}

/// Every (computation, instruction) a reduction may edit, most useful first: the entry
/// computation from its root backwards, then the other computations likewise.
pub fn sites(m: &Module) -> Vec<(hlo::CompId, hlo::InstrId)> {
    let mut out = Vec::new();
    let mut order: Vec<usize> = vec![m.entry];
    order.extend((0..m.computations.len()).filter(|&c| c != m.entry));
    for ci in order {
        let n = m.computations[ci].instructions.len();
        out.extend((0..n).rev().map(|ii| (ci, ii)));
    }
    out
}

/// The array shape of entry instruction `ii` when a reduction may replace it by a value of
/// that shape (a new parameter, a literal): a static array of a real element type, computed
/// (not a parameter or constant) and not already a splat.
pub fn replaceable_value(c: &hlo::Computation, ii: hlo::InstrId) -> Option<&hlo::ArrayShape> {
    let i = &c.instructions[ii];
    let a = i.shape.as_array()?;
    (a.ty.is_array_type()
        && a.is_static()
        && !matches!(i.opcode, hlo::Opcode::Parameter | hlo::Opcode::Constant)
        && !is_splat(c, ii))
    .then_some(a)
}

/// True for a value that is already as simple as a reduction makes it: a broadcast of a scalar
/// constant.
pub fn is_splat(c: &hlo::Computation, ii: hlo::InstrId) -> bool {
    let i = &c.instructions[ii];
    i.opcode == hlo::Opcode::Broadcast
        && i.operands.len() == 1
        && c.instructions
            .get(i.operands[0])
            .is_some_and(|o| o.opcode == hlo::Opcode::Constant && o.shape.rank() == 0)
}

#[cfg(test)]
mod tests {
    use super::order_dependent_reducer;

    fn reduce_with(body: &str) -> hlo::Module {
        let text = format!(
            "HloModule r\n\n%f (a: u64[], b: u64[]) -> u64[] {{\n  %a = u64[] parameter(0)\n  %b = u64[] parameter(1)\n{body}}}\n\nENTRY %main (x: u64[4]) -> u64[] {{\n  %x = u64[4] parameter(0)\n  %z = u64[] constant(0)\n  ROOT %r = u64[] reduce(%x, %z), dimensions={{0}}, to_apply=%f\n}}\n"
        );
        hlo::parse::parse_module(&text).unwrap()
    }

    fn f32_reduce(op: &str, init: &str) -> hlo::Module {
        let text = format!(
            "HloModule r\n\n%f (a: f32[], b: f32[]) -> f32[] {{\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %k = f32[] {op}(%a, %b)\n}}\n\nENTRY %main (x: f32[4]) -> f32[] {{\n  %x = f32[4] parameter(0)\n  %z = f32[] constant({init})\n  ROOT %r = f32[] reduce(%x, %z), dimensions={{0}}, to_apply=%f\n}}\n"
        );
        hlo::parse::parse_module(&text).unwrap()
    }

    /// A product from 0 (a minimized constant) has no one right result: XLA assumes the init
    /// value is the reducer's identity.
    #[test]
    fn an_init_value_that_is_not_the_reducers_identity_is_refused() {
        assert!(order_dependent_reducer(&f32_reduce("multiply", "0"))
            .unwrap()
            .contains("identity"));
        assert_eq!(order_dependent_reducer(&f32_reduce("multiply", "1")), None);
        assert_eq!(order_dependent_reducer(&f32_reduce("add", "-0")), None);
        assert_eq!(
            order_dependent_reducer(&f32_reduce("maximum", "-inf")),
            None
        );
        assert!(order_dependent_reducer(&f32_reduce("maximum", "0")).is_some());
        assert_eq!(order_dependent_reducer(&f32_reduce("minimum", "inf")), None);
    }

    #[test]
    fn a_reducer_result_must_use_both_its_accumulator_and_its_element() {
        // xor(a, b) edited down to `a`: the result is whichever element is visited first.
        let kept = reduce_with("  ROOT %k = u64[] copy(%a)\n");
        let e = order_dependent_reducer(&kept).expect("order-dependent");
        assert!(e.contains("accumulator"), "{e}");
        let elem = reduce_with("  ROOT %k = u64[] negate(%b)\n");
        assert!(order_dependent_reducer(&elem).unwrap().contains("element"));
        let both = reduce_with("  ROOT %k = u64[] xor(%a, %b)\n");
        assert_eq!(order_dependent_reducer(&both), None);
        let constant = reduce_with("  ROOT %k = u64[] constant(7)\n");
        assert!(order_dependent_reducer(&constant)
            .unwrap()
            .contains("neither"));
    }

    /// A reduction whose candidate is larger than the case (one more instruction, or more
    /// elements): the predicate would accept it, the minimizer never tries it.
    #[test]
    fn a_candidate_larger_than_the_input_is_never_tried() {
        use super::{minimize, size, Candidate, Case, Options, Reduction};
        struct Grow(&'static str);
        impl Reduction for Grow {
            fn name(&self) -> &'static str {
                "grow"
            }
            fn count(&self, _: &Case) -> usize {
                1
            }
            fn candidate(&self, case: &Case, _: usize) -> Option<Candidate> {
                Some(Candidate {
                    what: "grow".into(),
                    case: Case {
                        module: hlo::parse::parse_module(self.0).unwrap(),
                        inputs: case.inputs.clone(),
                    },
                })
            }
        }
        let start = Case {
            module: hlo::parse::parse_module(
                "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n",
            )
            .unwrap(),
            inputs: vec![hlo::Literal::Array(
                hlo::ArrayLiteral::zeros(hlo::PrimitiveType::F32, vec![4]).unwrap(),
            )],
        };
        let more_instructions = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  a = f32[4] negate(p)\n  ROOT n = f32[4] negate(a)\n}\n";
        let more_elements = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  b = f32[2,4] broadcast(p), dimensions={1}\n}\n";
        let fewer = "HloModule m\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n";
        for (text, kept) in [
            (more_instructions, false),
            (more_elements, false),
            (fewer, true),
        ] {
            let reductions: Vec<Box<dyn Reduction>> = vec![Box::new(Grow(text))];
            let mut tried = 0;
            let (out, stats) = minimize(
                start.clone(),
                &reductions,
                &mut |_| {
                    tried += 1;
                    true
                },
                &Options::default(),
            );
            assert!(size(&out) <= size(&start), "{text}: {:?}", size(&out));
            assert_eq!(out.module != start.module, kept, "{text}");
            let refused = stats
                .per_reduction
                .get("grow")
                .map_or(0, |r| r.refused_as_larger);
            assert_eq!(refused > 0, !kept, "{text}: {stats:?}");
            assert_eq!(tried > 0, kept, "{text}");
        }
    }
}

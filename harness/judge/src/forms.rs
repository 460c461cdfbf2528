//! Equivalent forms of a module: the same program written so that XLA cannot fold or misread
//! it the same way (constants as parameters, unsigned indices widened), and a module reduced
//! to some of its outputs (for the voter).

use crate::choices::explain_by_allowed_choices;
use crate::classify::{classify, Evidence, Label, Verdict, VerdictKind};
use crate::compare::Tolerance;
use engine::backend::{Backend, RunOptions};
use engine::interp_backend::InterpBackend;
use engine::ORACLE;
use hlo::edit::{self as edit, unused, Case};
use hlo::{Instruction, Literal, Module, Opcode, Shape};

/// A mismatch not labelled `xla` (the voter sided with XLA, or could not tell) is looked at once
/// more in forms that
/// mean the same program: every constant and iota of the entry computation as a parameter (no
/// compile-time folding), and unsigned indices converted to s64. When XLA's result on such a form
/// agrees with the oracle, XLA computes the same program differently depending on its form, and
/// the voter shared XLA's reading (it receives the module through XLA's parser and converter):
/// the finding is XLA's, relabelled `xla`. The forms keep only the differing outputs
/// ([`restrict_outputs`]). Other verdicts pass unchanged.
pub fn check_equivalent_forms(
    verdict: Verdict,
    oracle: &InterpBackend,
    xla: &[&dyn Backend],
    module: &Module,
    inputs: &[Literal],
    opts: &RunOptions,
    tol: &Tolerance,
) -> Verdict {
    if verdict.kind != VerdictKind::Mismatch || verdict.label == Some(Label::Xla) {
        return verdict;
    }
    let Some(name) = verdict.backend.clone() else {
        return verdict;
    };
    let Some(backend) = xla.iter().find(|b| b.name() == name) else {
        return verdict;
    };
    // Only the differing outputs are looked at: the forms are of the module reduced to them
    // (itself an equivalent form of those outputs), which XLA compiles faster.
    let case = Case {
        module: restrict_outputs(module, &verdict.mismatched_outputs)
            .unwrap_or_else(|| module.clone()),
        inputs: inputs.to_vec(),
    };
    type Rewrite = fn(&Case) -> Option<Case>;
    let rewrites: [(&str, Rewrite); 2] = [
        (
            "constants as parameters: with constants and iotas as runtime parameters",
            constants_to_parameters,
        ),
        (
            "unsigned indices: with u8/u16/u32 indices converted to s64",
            widen_unsigned_indices,
        ),
    ];
    for (what, rewrite) in rewrites {
        let Some(dc) = rewrite(&case) else {
            continue;
        };
        let text = hlo::print::module_to_string(&dc.module);
        let outcomes = vec![
            (
                ORACLE.to_string(),
                oracle.run_module(&dc.module, &dc.inputs),
            ),
            (name.clone(), backend.run(&text, &dc.inputs, opts)),
        ];
        let mut again = classify(&outcomes, &Evidence::new(tol));
        if again.kind == VerdictKind::Mismatch {
            if let Some(v) =
                explain_by_allowed_choices(oracle, &dc.module, &dc.inputs, &outcomes, tol)
            {
                again = v;
            }
        }
        if again.kind == VerdictKind::Match {
            let mut v = verdict;
            v.label = Some(Label::Xla);
            v.vote = Some(format!(
                "{what} XLA agrees with the oracle (the voter shares XLA's reading of the \
                 original form)"
            ));
            return v;
        }
    }
    verdict
}

/// A copy of `m` whose root tuple holds only the output leaves `keep` (every parameter kept, dead
/// code and uncalled computations removed); `None` when the root is not a tuple of arrays.
pub fn restrict_outputs(m: &Module, keep: &[usize]) -> Option<Module> {
    if keep.is_empty() || m.computations.is_empty() {
        return None;
    }
    let e = m.entry_computation();
    let root = e.root_instruction();
    if root.opcode != hlo::Opcode::Tuple
        || root
            .operands
            .iter()
            .any(|&o| !e.instructions[o].shape.is_array())
    {
        return None;
    }
    let ops: Vec<hlo::InstrId> = keep
        .iter()
        .filter_map(|&k| root.operands.get(k).copied())
        .collect();
    if ops.len() != keep.len() {
        return None;
    }
    let mut out = m.clone();
    // The signature's layout and the aliases name the old outputs: neither fits the new root
    // (XLA refuses an alias of an output index that is gone), and neither changes a value.
    out.header_attrs.retain(|(k, _)| {
        !matches!(
            k.as_str(),
            "entry_computation_layout" | "input_output_alias" | "buffer_donor"
        )
    });
    let entry = out.entry;
    let c = &mut out.computations[entry];
    let r = c.root;
    c.instructions[r].shape = hlo::Shape::Tuple(
        ops.iter()
            .map(|&o| c.instructions[o].shape.clone())
            .collect(),
    );
    c.instructions[r].operands = ops;
    let mut keep_ins = edit::live(c);
    for (k, i) in c.instructions.iter().enumerate() {
        if i.opcode == hlo::Opcode::Parameter {
            keep_ins[k] = true;
        }
    }
    unused::retain_instructions(c, &keep_ins);
    unused::remove_uncalled_computations(&mut out);
    Some(out)
}

/// The value of entry instruction `ii` on the case's inputs, as the oracle computes it.
pub fn value_of(case: &Case, ii: usize) -> Option<hlo::Literal> {
    let mut m = case.module.clone();
    let entry = m.entry;
    m.computations[entry].root = ii;
    let cleaned = unused::cleanup(&Case {
        module: m,
        inputs: case.inputs.clone(),
    })?;
    interp::evaluate(&cleaned.module, &cleaned.inputs).ok()
}

/// Every constant and iota of the entry computation turned into a new entry parameter whose
/// input is its value: the same program, with nothing left for XLA to fold at compile time.
/// `None` when there is nothing to turn or a value cannot be computed.
pub fn constants_to_parameters(case: &Case) -> Option<Case> {
    let c = case.module.entry_computation();
    let targets: Vec<usize> = (0..c.instructions.len())
        .filter(|&ii| {
            let i = &c.instructions[ii];
            matches!(i.opcode, Opcode::Constant | Opcode::Iota)
                && matches!(&i.shape, Shape::Array(a) if a.ty.is_array_type() && a.is_static())
        })
        .collect();
    if targets.is_empty() {
        return None;
    }
    let values = targets
        .iter()
        .map(|&ii| value_of(case, ii))
        .collect::<Option<Vec<_>>>()?;
    let mut m = case.module.clone();
    let mut inputs = case.inputs.clone();
    let entry = m.entry;
    for (k, (&ii, value)) in targets.iter().zip(values).enumerate() {
        // Each insertion at position 0 moved the later instructions down by one.
        let at = ii + k;
        let old = &m.computations[entry].instructions[at];
        let name = edit::fresh_name(&m, &format!("p.{}", old.name));
        let mut p = Instruction::new(name, Opcode::Parameter, old.shape.clone());
        p.parameter_number = Some(inputs.len() as i64);
        let c = &mut m.computations[entry];
        let id = edit::insert(c, 0, p);
        edit::replace_uses(c, at + 1, id);
        inputs.push(value);
    }
    unused::cleanup(&Case { module: m, inputs })
}

/// Every unsigned index operand narrower than 64 bits (of `gather`, `scatter`, `dynamic-slice`
/// and `dynamic-update-slice`, in any computation) converted to s64 first: the same program,
/// since an unsigned index means its unsigned value. `None` when there is none.
pub fn widen_unsigned_indices(case: &Case) -> Option<Case> {
    let mut m = case.module.clone();
    let mut changed = false;
    for ci in 0..m.computations.len() {
        let mut ii = 0;
        while ii < m.computations[ci].instructions.len() {
            let i = &m.computations[ci].instructions[ii];
            let n = i.operands.len();
            let idx: Vec<usize> = match i.opcode {
                Opcode::Gather => vec![1],
                Opcode::Scatter => vec![n / 2],
                Opcode::DynamicSlice => (1..n).collect(),
                Opcode::DynamicUpdateSlice => (2..n).collect(),
                _ => vec![],
            };
            let mut at = ii;
            for k in idx {
                let c = &m.computations[ci];
                let Some(&o) = c.instructions[at].operands.get(k) else {
                    continue;
                };
                let Shape::Array(a) = &c.instructions[o].shape else {
                    continue;
                };
                if a.ty.class() != hlo::TypeClass::Unsigned || a.ty.bit_width() >= 64 {
                    continue;
                }
                let name = edit::fresh_name(&m, &format!("{}.s64", c.instructions[o].name));
                let mut conv = Instruction::new(
                    name,
                    Opcode::Convert,
                    Shape::array(hlo::PrimitiveType::S64, a.dims.clone()),
                );
                conv.operands = vec![o];
                let c = &mut m.computations[ci];
                let id = edit::insert(c, at, conv);
                at += 1;
                c.instructions[at].operands[k] = id;
                changed = true;
            }
            ii = at + 1;
        }
    }
    changed.then(|| Case {
        module: m,
        inputs: case.inputs.clone(),
    })
}

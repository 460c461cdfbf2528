//! Kernel isolation below HLO: which fusion or library call of the optimized module computes
//! the wrong value (or crashes).
//!
//! The oracle evaluates XLA's `after_optimizations` module once, keeping the operands and the
//! result of every kernel of the entry computation (fusions of any kind, custom fusions such as
//! `__ynn_fusion`, custom-calls, and any other instruction that computes, such as a lone `dot`). Each kernel then becomes a standalone module: one parameter
//! per operand and the kernel instruction itself, with the computations it calls. XLA compiles
//! and runs it on the same backend, with the same options, on the operand values the oracle
//! computed; the judge compares its result with the oracle's (allowed implementation choices
//! included). The first kernel, in entry order, that differs or crashes is named with its kind,
//! its fused computation and the pass whose snapshot first defines it. Its module and inputs
//! are a repro of their own.

use crate::minimize::predicate::interp_outcome;
use engine::backend::{Backend, Outcome, RunOptions};
use engine::ORACLE;
use hlo::{Attr, CompId, Computation, Instruction, Literal, Module, Opcode, Shape};
use judge::{Judge, Trial};
use serde::Serialize;
use std::collections::BTreeSet;

/// One kernel of the optimized module, run alone.
#[derive(Clone, Debug, Serialize)]
pub struct KernelResult {
    /// The instruction's name in after_optimizations.
    pub name: String,
    /// `fusion kLoop`, `fusion kCustom __ynn_fusion`, `custom-call __onednn$matmul`, ...
    pub kind: String,
    /// The computation it calls (the fused computation), when it calls one.
    pub computation: Option<String>,
    /// The pass whose snapshot first defines an instruction of this name (`None`: no snapshot
    /// does; it first appears in after_optimizations).
    pub created_by: Option<String>,
    /// `agrees`, `differs`, `crash`, `rejected`, `timeout` or `not-isolated`.
    pub status: String,
    pub note: String,
    /// The `input_output_alias` its standalone module ran with: a kernel that updates an
    /// operand in place (a dynamic-update-slice or scatter at its root, on a parameter) runs
    /// alone on a buffer it may share with its output, as it does in the optimized module.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_place: Option<String>,
}

/// What [`isolate`] found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Isolation {
    pub kernels: Vec<KernelResult>,
    /// Index into `kernels` of the first that differs or fails.
    pub first_wrong: Option<usize>,
    /// The first wrong kernel as a standalone module, and its inputs.
    pub kernel_module: Option<String>,
    #[serde(skip)]
    pub kernel_inputs: Vec<Literal>,
    /// The oracle's and XLA's results on it (text).
    pub kernel_expected: Option<String>,
    pub kernel_actual: Option<String>,
    /// Why isolation could not run (the oracle cannot evaluate after_optimizations, ...).
    pub error: Option<String>,
}

impl Isolation {
    /// The first wrong kernel.
    pub fn wrong(&self) -> Option<&KernelResult> {
        self.first_wrong.and_then(|k| self.kernels.get(k))
    }

    /// Writes the first wrong kernel's module and inputs as a repro directory (module, `.lit`
    /// and `run_hlo_module` inputs, `repro.sh`, README); `None` when no kernel was wrong.
    pub fn write_repro(
        &self,
        dir: &std::path::Path,
        backend: &str,
        xla_flags: &[(String, String)],
    ) -> Option<std::io::Result<findings::repro::ReproFiles>> {
        let k = self.wrong()?;
        let text = self.kernel_module.clone()?;
        let name = hlo::parse::parse_module(&text)
            .map(|m| m.name)
            .unwrap_or_else(|_| k.name.clone());
        let r = findings::repro::Repro {
            module_text: text,
            module_name: name,
            inputs: self.kernel_inputs.clone(),
            backend: backend.into(),
            reference: ORACLE.into(),
            summary: format!("kernel `{}` ({}) {} on {backend}", k.name, k.kind, k.status),
            expected: self.kernel_expected.clone(),
            actual: self.kernel_actual.clone(),
            first_difference: None,
            versions: Vec::new(),
            culprit: k
                .created_by
                .as_ref()
                .map(|p| format!("{p} (the pass whose snapshot first defines the kernel)")),
            instructions_before: None,
            instructions_after: None,
            xla_flags: xla_flags.to_vec(),
            notes: vec![format!(
                "The kernel `{}` of XLA's after_optimizations module, alone, on the operand \
                 values the oracle computed for it{}.",
                k.name,
                k.computation
                    .as_ref()
                    .map(|c| format!(" (fused computation `{c}`)"))
                    .unwrap_or_default()
            )],
        };
        Some(findings::repro::write_repro_dir(dir, &r))
    }
}

/// Whether an entry instruction is a kernel isolation runs alone: fusions, library calls and
/// every other instruction that computes (not parameters, constants, tuples, bitcasts).
fn is_kernel(i: &Instruction) -> bool {
    !matches!(
        i.opcode,
        Opcode::Parameter
            | Opcode::Constant
            | Opcode::Tuple
            | Opcode::GetTupleElement
            | Opcode::Bitcast
            | Opcode::AfterAll
    ) && !i.has_side_effect()
}

fn kind_of(i: &Instruction) -> String {
    let raw = |n: &str| match i.attr(n) {
        Some(Attr::Ident(s)) | Some(Attr::Str(s)) | Some(Attr::Raw(s)) => Some(s.clone()),
        _ => None,
    };
    match i.opcode {
        Opcode::Fusion => {
            let mut k = format!("fusion {}", raw("kind").unwrap_or_default());
            // A custom fusion names its library in backend_config ("fusion_config":{"kind":..}).
            if let Some(bc) = raw("backend_config") {
                if let Some(pos) = bc.find("\"kind\":\"") {
                    let rest = &bc[pos + 8..];
                    if let Some(end) = rest.find('"') {
                        k.push(' ');
                        k.push_str(&rest[..end]);
                    }
                }
            }
            k
        }
        Opcode::CustomCall => format!(
            "custom-call {}",
            raw("custom_call_target").unwrap_or_default()
        ),
        o => o.name().to_string(),
    }
}

/// The computations `roots` call, transitively, in module order.
fn callees(m: &Module, roots: &[CompId]) -> Vec<CompId> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<CompId> = roots.to_vec();
    while let Some(c) = stack.pop() {
        if c >= m.computations.len() || !seen.insert(c) {
            continue;
        }
        for i in &m.computations[c].instructions {
            stack.extend(i.called_computations());
        }
    }
    seen.into_iter().collect()
}

fn remap_attrs(i: &mut Instruction, map: &dyn Fn(CompId) -> CompId) {
    i.attrs.retain(|(_, a)| !matches!(a, Attr::Instrs(_)));
    for (_, a) in i.attrs.iter_mut() {
        match a {
            Attr::Comp(c) => *c = map(*c),
            Attr::Comps(cs) => cs.iter_mut().for_each(|c| *c = map(*c)),
            _ => {}
        }
    }
}

/// The standalone module of `m`'s entry instruction `k`: a parameter per operand, the
/// instruction, and the computations it calls.
pub fn kernel_module(m: &Module, k: usize) -> Module {
    let entry = &m.computations[m.entry];
    let kernel = &entry.instructions[k];
    if kernel.opcode == Opcode::Fusion {
        if let Some(&fused) = kernel.called_computations().first() {
            return fused_module(m, kernel, fused);
        }
    }
    let comps = callees(m, &kernel.called_computations());
    let map = |c: CompId| comps.iter().position(|&x| x == c).unwrap_or(0);
    let mut computations: Vec<Computation> = comps
        .iter()
        .map(|&c| {
            let mut comp = m.computations[c].clone();
            for i in comp.instructions.iter_mut() {
                remap_attrs(i, &map);
            }
            comp
        })
        .collect();
    let mut instructions: Vec<Instruction> = kernel
        .operands
        .iter()
        .enumerate()
        .map(|(n, &o)| {
            let mut p = Instruction::new(
                format!("p{n}"),
                Opcode::Parameter,
                entry.instructions[o].shape.clone(),
            );
            p.parameter_number = Some(n as i64);
            p
        })
        .collect();
    let mut ki = kernel.clone();
    ki.operands = (0..kernel.operands.len()).collect();
    remap_attrs(&mut ki, &map);
    instructions.push(ki);
    computations.push(Computation {
        name: "main".into(),
        root: instructions.len() - 1,
        instructions,
        trailing_attrs: Vec::new(),
    });
    let safe = safe_name(&kernel.name);
    Module {
        name: format!("{}_{safe}", m.name),
        header_attrs: Vec::new(),
        stack_frame_tables: Vec::new(),
        entry: computations.len() - 1,
        computations,
    }
}

/// `km` with an `input_output_alias` for each output it updates in place: an output (the root,
/// or an element of a root tuple) that is a `dynamic-update-slice` or `scatter` whose updated
/// operand is, through bitcasts, an entry parameter of the output's shape. XLA runs such an
/// update in the operand's buffer (its dataflow analysis pairs the operand with the output);
/// alone, a parameter's buffer is XLA's input, so without the alias the kernel would write a
/// fresh buffer and an in-place bug (reading what it already wrote) would not show. The alias
/// is `may-alias`: XLA copies an input it cannot take over, so the values are the same.
pub fn with_in_place_aliases(mut km: Module) -> (Module, Option<String>) {
    let Some(e) = km.computations.get(km.entry) else {
        return (km, None);
    };
    let root = e.root_instruction();
    let outputs: Vec<(String, usize)> = if root.opcode == Opcode::Tuple {
        root.operands
            .iter()
            .enumerate()
            .map(|(k, &o)| (format!("{{{k}}}"), o))
            .collect()
    } else {
        vec![("{}".to_string(), e.root)]
    };
    let mut taken = BTreeSet::new();
    let mut pairs = Vec::new();
    for (index, o) in outputs {
        let out = &e.instructions[o];
        if !matches!(out.opcode, Opcode::DynamicUpdateSlice | Opcode::Scatter)
            || !out.shape.is_array()
        {
            continue;
        }
        let Some(mut x) = out.operands.first().copied() else {
            continue;
        };
        while e.instructions[x].opcode == Opcode::Bitcast {
            match e.instructions[x].operands.first() {
                Some(&y) => x = y,
                None => break,
            }
        }
        let p = &e.instructions[x];
        let Some(n) = p.parameter_number.filter(|_| p.opcode == Opcode::Parameter) else {
            continue;
        };
        if p.shape.as_array().map(|a| (a.ty, &a.dims))
            != out.shape.as_array().map(|a| (a.ty, &a.dims))
            || !taken.insert(n)
        {
            continue;
        }
        pairs.push(format!("{index}: ({n}, {{}}, may-alias)"));
    }
    if pairs.is_empty() {
        return (km, None);
    }
    let alias = format!("{{ {} }}", pairs.join(", "));
    km.header_attrs.retain(|(k, _)| k != "input_output_alias");
    km.header_attrs
        .push(("input_output_alias".into(), alias.clone()));
    (km, Some(alias))
}

/// `name` with every character that is not a letter or digit made `_` (for a module name).
fn safe_name(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect()
}

/// The kernel module with every operand that is a constant in `m`'s entry kept as that constant
/// instead of a parameter (and its argument dropped): a constant's value is exact, and as a
/// parameter the judge could excuse a wrong result as the rounding of an input that XLA never
/// rounded.
fn keep_constant_operands(
    mut km: Module,
    m: &Module,
    k: usize,
    args: Vec<Literal>,
) -> (Module, Vec<Literal>) {
    let entry = &m.computations[m.entry];
    let operands = &entry.instructions[k].operands;
    let constant_at: Vec<Option<&Instruction>> = operands
        .iter()
        .map(|&o| {
            let i = &entry.instructions[o];
            (i.opcode == Opcode::Constant && i.constant.is_some()).then_some(i)
        })
        .collect();
    if constant_at.iter().all(Option::is_none) || args.len() != operands.len() {
        return (km, args);
    }
    let kept: Vec<usize> = (0..operands.len())
        .filter(|&n| constant_at[n].is_none())
        .collect();
    let ke = km.entry;
    for i in km.computations[ke].instructions.iter_mut() {
        let Some(n) = i.parameter_number.and_then(|n| usize::try_from(n).ok()) else {
            continue;
        };
        if i.opcode != Opcode::Parameter || n >= operands.len() {
            continue;
        }
        match constant_at[n] {
            Some(c) => {
                i.opcode = Opcode::Constant;
                i.parameter_number = None;
                i.constant = c.constant.clone();
            }
            None => i.parameter_number = kept.iter().position(|&x| x == n).map(|p| p as i64),
        }
    }
    let args = args
        .into_iter()
        .enumerate()
        .filter(|(n, _)| constant_at[*n].is_none())
        .map(|(_, a)| a)
        .collect();
    (km, args)
}

/// A fusion's fused computation as a module of its own (its parameters the entry's): the
/// fusion instruction itself cannot travel alone, since the HLO -> MLIR import the worker
/// compiles through drops a fusion's `backend_config` (XLA then refuses a `kCustom` fusion),
/// and XLA fuses the computation again, library fusions (`__ynn_fusion`) included, as it did
/// in the module.
fn fused_module(m: &Module, kernel: &Instruction, fused: CompId) -> Module {
    let comps = callees(m, &[fused]);
    let map = |c: CompId| comps.iter().position(|&x| x == c).unwrap_or(0);
    let computations: Vec<Computation> = comps
        .iter()
        .map(|&c| {
            let mut comp = m.computations[c].clone();
            for i in comp.instructions.iter_mut() {
                remap_attrs(i, &map);
            }
            if c == fused {
                comp.name = "main".into();
            }
            comp
        })
        .collect();
    let safe = safe_name(&kernel.name);
    Module {
        name: format!("{}_{safe}", m.name),
        header_attrs: Vec::new(),
        stack_frame_tables: Vec::new(),
        entry: map(fused),
        computations,
    }
}

/// `m` with its entry's root replaced by a tuple of the operands of every kernel at `kernels`
/// (in order): one oracle evaluation gives them all.
fn operands_module(m: &Module, kernels: &[usize]) -> Module {
    let mut m = m.clone();
    m.header_attrs.retain(|(k, _)| {
        !matches!(
            k.as_str(),
            "entry_computation_layout" | "input_output_alias" | "buffer_donor"
        )
    });
    let entry = &mut m.computations[m.entry];
    let ops: Vec<usize> = kernels
        .iter()
        .flat_map(|&k| entry.instructions[k].operands.clone())
        .collect();
    let shapes: Vec<Shape> = ops
        .iter()
        .map(|&o| entry.instructions[o].shape.clone())
        .collect();
    let mut t = Instruction::new(
        hlo::edit::fresh_name(&m, "isolation_operands"),
        Opcode::Tuple,
        Shape::Tuple(shapes),
    );
    t.operands = ops;
    let entry = &mut m.computations[m.entry];
    entry.instructions.push(t);
    entry.root = entry.instructions.len() - 1;
    m
}

/// Runs the kernels of `after_text` (XLA's optimized module) alone on `backend` (see the
/// module docs), at most `max_runs` of them (the rest are listed as not isolated).
/// `created_by` names the pass whose snapshot first defines an instruction name. Errors when
/// the oracle cannot give the kernels' operands.
pub fn isolate(
    after_text: &str,
    inputs: &[Literal],
    backend: &dyn Backend,
    run: &RunOptions,
    tolerance_scale: f64,
    max_runs: usize,
    created_by: &dyn Fn(&str) -> Option<String>,
) -> Result<Isolation, String> {
    let m = hlo::parse::parse_module(after_text).map_err(|e| format!("our parser: {e}"))?;
    let entry = &m.computations[m.entry];
    // Kernels whose operands are arrays (a tuple operand would not map onto the leaves).
    let (kernels, skipped): (Vec<usize>, Vec<usize>) = (0..entry.instructions.len())
        .filter(|&k| is_kernel(&entry.instructions[k]))
        .partition(|&k| {
            entry.instructions[k]
                .operands
                .iter()
                .all(|&o| !entry.instructions[o].shape.is_tuple())
        });
    let mut out = Isolation::default();
    let values = match interp_outcome(&operands_module(&m, &kernels), inputs) {
        Outcome::Ok(r) => r.outputs,
        o => {
            return Err(format!(
                "the oracle cannot evaluate after_optimizations: {o}"
            ))
        }
    };
    let mut next = 0;
    let mut runs = 0;
    let mut order: Vec<usize> = kernels.iter().chain(&skipped).copied().collect();
    order.sort_unstable();
    for k in order {
        let i = &entry.instructions[k];
        let mut r = KernelResult {
            name: i.name.clone(),
            kind: kind_of(i),
            computation: i
                .called_computations()
                .first()
                .and_then(|&c| m.computations.get(c))
                .map(|c| c.name.clone()),
            created_by: created_by(&i.name),
            status: "not-isolated".into(),
            note: String::new(),
            in_place: None,
        };
        if skipped.contains(&k) {
            r.note = "a tuple-shaped operand".into();
            out.kernels.push(r);
            continue;
        }
        let args: Vec<Literal> = values[next..next + i.operands.len()].to_vec();
        next += i.operands.len();
        if runs == max_runs {
            r.note = format!("isolation stopped after {max_runs} kernels");
            out.kernels.push(r);
            continue;
        }
        runs += 1;
        let (km, args) = keep_constant_operands(kernel_module(&m, k), &m, k, args);
        let (km, in_place) = with_in_place_aliases(km);
        r.in_place = in_place;
        let (status, note, expected, actual) =
            run_kernel(&km, &args, backend, run, tolerance_scale);
        r.status = status;
        r.note = note;
        // A kernel module XLA refuses says nothing about the kernel: not isolated.
        if r.status == "rejected" {
            r.note = format!("could not be compiled alone: {}", r.note);
            r.status = "not-isolated".into();
        }
        let wrong = !matches!(r.status.as_str(), "agrees" | "not-isolated");
        out.kernels.push(r);
        if wrong {
            out.first_wrong = Some(out.kernels.len() - 1);
            out.kernel_module = Some(hlo::print::module_to_string(&km));
            out.kernel_inputs = args;
            out.kernel_expected = expected;
            out.kernel_actual = actual;
            break;
        }
    }
    Ok(out)
}

/// The kernel module on XLA and on the oracle: (status, note, expected, actual).
fn run_kernel(
    km: &Module,
    args: &[Literal],
    backend: &dyn Backend,
    run: &RunOptions,
    tolerance_scale: f64,
) -> (String, String, Option<String>, Option<String>) {
    let expected = match interp_outcome(km, args) {
        Outcome::Ok(r) => r,
        o => {
            return (
                "not-isolated".into(),
                format!("the oracle: {o}"),
                None,
                None,
            )
        }
    };
    let text = hlo::print::module_to_string(km);
    let first = |s: String| s.lines().next().unwrap_or("").to_string();
    let exp_text = Some(crate::bisect::short_literal(&expected.result()));
    match backend.run(&text, args, run) {
        Outcome::Ok(got) => {
            let tol = crate::bisect::tolerance(km, tolerance_scale);
            let outcomes = vec![
                (ORACLE.to_string(), Outcome::Ok(expected.clone())),
                (backend.name().to_string(), Outcome::Ok(got.clone())),
            ];
            let v = Judge::offline()
                .with_policy(judge::Policy::VERDICT)
                .judge(&Trial {
                    module: km,
                    text: None,
                    inputs: args,
                    outcomes: &outcomes,
                    reruns: &[],
                    tolerance: &tol,
                })
                .verdict;
            let act = Some(crate::bisect::short_literal(&got.result()));
            if v.kind.agrees() {
                ("agrees".into(), String::new(), exp_text, act)
            } else {
                let note = v
                    .comparison
                    .as_ref()
                    .map(|c| c.summary())
                    .unwrap_or(v.message);
                ("differs".into(), first(note), exp_text, act)
            }
        }
        Outcome::Rejected { stage, message }
            if matches!(
                stage,
                engine::backend::Stage::Parse | engine::backend::Stage::Convert
            ) =>
        {
            (
                "not-isolated".into(),
                first(format!(
                    "XLA does not take the kernel module ({stage}): {message}"
                )),
                exp_text,
                None,
            )
        }
        o => (
            o.kind().into(),
            first(o.to_string()),
            exp_text,
            Some(first(o.to_string())),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel's constant operand stays a constant in its module (its argument dropped, the
    /// other parameters renumbered); computed operands stay parameters.
    #[test]
    fn constant_operands_stay_constants() {
        let text = r#"HloModule m

fused {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = f32[2] parameter(2)
  s = f32[2] add(a, b)
  ROOT t = f32[2] multiply(s, c)
}

ENTRY main {
  x = f32[2] parameter(0)
  k = f32[2] constant({1.5, -2})
  y = f32[2] negate(x)
  ROOT f = f32[2] fusion(x, k, y), kind=kLoop, calls=fused
}
"#;
        let m = hlo::parse::parse_module(text).unwrap();
        let lit = |v: [f32; 2]| {
            Literal::Array(
                hlo::ArrayLiteral::from_bytes(
                    hlo::PrimitiveType::F32,
                    vec![2],
                    v.iter().flat_map(|x| x.to_le_bytes()).collect(),
                )
                .unwrap(),
            )
        };
        let args = vec![lit([1.0, 2.0]), lit([1.5, -2.0]), lit([-1.0, -2.0])];
        let (km, kept) = keep_constant_operands(kernel_module(&m, 3), &m, 3, args);
        assert_eq!(kept.len(), 2);
        let printed = hlo::print::module_to_string(&km);
        assert!(printed.contains("constant({1.5, -2})"), "{printed}");
        assert!(
            printed.contains("parameter(0)") && printed.contains("parameter(1)"),
            "{printed}"
        );
        assert!(!printed.contains("parameter(2)"), "{printed}");
        let out = interp::evaluate(&km, &kept).unwrap();
        // (x + k) * (-x) = (2.5 * -1, 0 * -2)
        let got: Vec<f64> = (0..2)
            .map(|i| out.as_array().unwrap().get(i).to_f64())
            .collect();
        assert_eq!(got, vec![-2.5, 0.0]);
    }

    /// A fusion with a nested call becomes a module of its own: parameters for the operands,
    /// the fusion, the fused computation and what it calls (ids remapped), nothing else.
    #[test]
    fn a_kernel_module_keeps_only_what_the_kernel_needs() {
        let text = r#"HloModule m, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}

%unused (x: f32[]) -> f32[] {
  ROOT %x = f32[] parameter(0)
}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%fused (p0: f32[4], p1: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  %p1 = f32[4]{0} parameter(1)
  %m = f32[4]{0} map(%p0, %p1), dimensions={0}, to_apply=%add
  ROOT %n = f32[4]{0} negate(%m)
}

ENTRY %main (a.1: f32[4], b.1: f32[4]) -> f32[4] {
  %a.1 = f32[4]{0} parameter(0)
  %b.1 = f32[4]{0} parameter(1)
  %e = f32[4]{0} exponential(%a.1)
  ROOT %f = f32[4]{0} fusion(%e, %b.1), kind=kLoop, calls=%fused
}
"#;
        let m = hlo::parse::parse_module(text).unwrap();
        let km = kernel_module(&m, 3);
        let printed = hlo::print::module_to_string(&km);
        hlo::verify::verify_module(&km).unwrap_or_else(|e| panic!("{e}\n{printed}"));
        let names: Vec<&str> = km.computations.iter().map(|c| c.name.as_str()).collect();
        // A fusion travels as its fused computation (the entry, `main`), with what it calls.
        assert_eq!(names, vec!["add", "main"], "{printed}");
        assert_eq!(
            km.entry_computation().root_instruction().opcode,
            Opcode::Negate
        );
        assert_eq!(
            kind_of(&m.computations[m.entry].instructions[3]),
            "fusion kLoop"
        );
        // The operands of the kernel come from one oracle run of the whole module.
        let x = hlo::Literal::Array(
            hlo::ArrayLiteral::from_bytes(
                hlo::PrimitiveType::F32,
                vec![4],
                [0f32, 1.0, 2.0, 3.0]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
            )
            .unwrap(),
        );
        let om = operands_module(&m, &[3]);
        let Outcome::Ok(r) = interp_outcome(&om, &[x.clone(), x.clone()]) else {
            panic!("the oracle evaluates the operands module")
        };
        assert_eq!(r.outputs.len(), 2);
        let Outcome::Ok(k) = interp_outcome(&km, &r.outputs) else {
            panic!("the oracle evaluates the kernel module")
        };
        let Outcome::Ok(whole) = interp_outcome(&m, &[x.clone(), x]) else {
            panic!("the oracle evaluates the module")
        };
        assert_eq!(
            k.outputs, whole.outputs,
            "the kernel alone gives the module's result"
        );
    }
}

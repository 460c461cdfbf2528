//! Dropping outputs of the entry's root tuple: first "keep only output i" (the root becomes
//! that value), then "drop output i" (a smaller tuple).

use super::{Candidate, Case, Reduction};
use hlo::{Opcode, Shape};

pub struct DropOutputs;

fn root_tuple_width(case: &Case) -> usize {
    let c = case.module.entry_computation();
    let r = c.root_instruction();
    if r.opcode == Opcode::Tuple {
        r.operands.len()
    } else {
        0
    }
}

impl Reduction for DropOutputs {
    fn name(&self) -> &'static str {
        "drop-outputs"
    }

    fn count(&self, case: &Case) -> usize {
        let n = root_tuple_width(case);
        if n <= 1 {
            n
        } else {
            2 * n
        }
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let n = root_tuple_width(case);
        let mut m = case.module.clone();
        let entry = m.entry;
        let c = &mut m.computations[entry];
        let root = c.root;
        let ops = c.instructions[root].operands.clone();
        let what;
        if index < n {
            // Keep only output `index`: the root is that value itself.
            c.root = ops[index];
            what = format!("kept only output {index} of {n}");
        } else {
            let drop = index - n;
            if drop >= n || n <= 1 {
                return None;
            }
            let r = &mut c.instructions[root];
            r.operands.remove(drop);
            if let Shape::Tuple(t) = &mut r.shape {
                if drop < t.len() {
                    t.remove(drop);
                }
            }
            what = format!("dropped output {drop} of {n}");
        }
        Some(Candidate {
            what,
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

/// Making an earlier instruction of the entry computation the output (`root = clz(x)` instead
/// of `root = sort(convert(clz(x)))`): what only the old root used becomes dead. The bug is
/// often in an op whose wrong values only a downstream op of another element type carries to
/// the output; without this edit such ops stay in every repro and split one bug into buckets.
/// Earliest instructions first: a success there removes the most.
pub struct Reroot;

fn reroot_sites(case: &Case) -> Vec<usize> {
    let c = case.module.entry_computation();
    (0..c.instructions.len())
        .filter(|&ii| {
            let i = &c.instructions[ii];
            ii != c.root
                && !matches!(
                    i.opcode,
                    Opcode::Parameter | Opcode::Constant | Opcode::Tuple | Opcode::GetTupleElement
                )
                && matches!(i.shape, Shape::Array(_))
        })
        .collect()
}

impl Reduction for Reroot {
    fn name(&self) -> &'static str {
        "reroot"
    }

    fn count(&self, case: &Case) -> usize {
        reroot_sites(case).len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let ii = *reroot_sites(case).get(index)?;
        let mut m = case.module.clone();
        let entry = m.entry;
        let c = &mut m.computations[entry];
        c.root = ii;
        let what = format!("{} is the output", c.instructions[ii].name);
        Some(Candidate {
            what,
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

/// The cones of the instructions XLA's message names (as `hlo_bisect` starts from the
/// instruction a failure names): each named instruction in turn becomes the output, so
/// everything outside its cone goes at once. A crash in a pass usually names the instruction it
/// was rewriting (`RET_CHECK ... "abs.0" (f64[2]{0}) vs "iota" (c128[2]{0})`). XLA keeps the
/// names of the module it got (the HLO -> MLIR route carries them as locations), but its
/// passes rename what they copy (the call inliner's `abs.0` is the module's `abs.5`), so a
/// name is also matched by its base (without the `.N` suffix) and the shape the message gives
/// it. An instruction of a computation that calls reach from the entry is inlined there first;
/// one of a loop body or a reducer stands for the entry instruction that runs it.
pub struct NamedCone(pub Vec<String>);

/// Most instructions one name of a message stands for by its base name.
const MOST_BY_BASE: usize = 8;

/// `name` without XLA's `.N` suffix.
fn base_name(name: &str) -> &str {
    name.rsplit_once('.')
        .filter(|(b, n)| !b.is_empty() && !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
        .map_or(name, |(b, _)| b)
}

/// A shape as messages print it, without its layout (`f64[2]{0}` -> `f64[2]`).
fn without_layout(shape: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in shape.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            c if depth == 0 && !c.is_whitespace() => out.push(c),
            _ => {}
        }
    }
    out
}

/// The instructions of `m` that `text` names, by their names in `m`, in the order the text
/// names them, each once: a name of `m` itself, else up to [`MOST_BY_BASE`] instructions of the
/// same base name and, when the message gives one right after the name (`"abs.0" (f64[2]{0})`),
/// the same shape. Parameters and constants are left out (a cone of one is no repro).
pub fn named_in(m: &hlo::Module, text: &str) -> Vec<String> {
    let instrs: Vec<&hlo::Instruction> = m
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter(|i| !matches!(i.opcode, Opcode::Parameter | Opcode::Constant))
        .collect();
    let is_name = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
    let mut out: Vec<String> = Vec::new();
    let push = |n: &str, out: &mut Vec<String>| {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    };
    let mut rest = text;
    while let Some(start) = rest.find(is_name) {
        let after = &rest[start..];
        let len = after.find(|c: char| !is_name(c)).unwrap_or(after.len());
        let token = after[..len].trim_end_matches('.');
        rest = &after[len..];
        if token.is_empty() {
            continue;
        }
        if instrs.iter().any(|i| i.name == token) {
            push(token, &mut out);
            continue;
        }
        // The shape right after a quoted name: `"abs.0" (f64[2]{0})`.
        let shape = rest
            .strip_prefix('"')
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix('('))
            .and_then(|r| r.split_once(')'))
            .map(|(s, _)| without_layout(s));
        let base = base_name(token);
        if base.len() < 2 || base.bytes().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let same: Vec<&str> = instrs
            .iter()
            .filter(|i| base_name(&i.name) == base)
            .filter(|i| {
                shape
                    .as_deref()
                    .is_none_or(|s| without_layout(&i.shape.to_string()) == s)
            })
            .map(|i| i.name.as_str())
            .take(MOST_BY_BASE)
            .collect();
        for n in same {
            push(n, &mut out);
        }
    }
    out
}

/// The entry instruction that calls (through any depth of calls, loops and reducers) the
/// computation `ci`.
fn entry_caller(m: &hlo::Module, ci: usize) -> Option<usize> {
    let entry = m.entry_computation();
    let mut held: Vec<usize> = vec![ci];
    for _ in 0..m.computations.len() {
        if let Some(i) = entry
            .instructions
            .iter()
            .position(|i| i.called_computations().iter().any(|c| held.contains(c)))
        {
            return Some(i);
        }
        let callers: Vec<usize> = (0..m.computations.len())
            .filter(|ci| !held.contains(ci))
            .filter(|&ci| {
                m.computations[ci]
                    .instructions
                    .iter()
                    .any(|i| i.called_computations().iter().any(|c| held.contains(c)))
            })
            .collect();
        if callers.is_empty() {
            return None;
        }
        held.extend(callers);
    }
    None
}

/// `m` with instruction `name` made reachable as an entry instruction: inlined along the calls
/// from the entry to its computation, else the entry instruction that runs it; and its id there.
fn in_entry(m: &hlo::Module, name: &str) -> Option<(hlo::Module, usize)> {
    let (ci, ii) = m.computations.iter().enumerate().find_map(|(ci, c)| {
        c.instructions
            .iter()
            .position(|i| i.name == name)
            .map(|ii| (ci, ii))
    })?;
    if ci == m.entry {
        return Some((m.clone(), ii));
    }
    let inlined = super::calls::call_chain(m, ci).and_then(|chain| {
        let mut out = m.clone();
        let mut map: Option<Vec<Option<usize>>> = None;
        for (_, call) in chain {
            let at = match &map {
                None => call,
                Some(prev) => (*prev.get(call)?)?,
            };
            let entry = out.entry;
            map = Some(super::calls::inline(&mut out, entry, at)?);
        }
        let id = (*map?.get(ii)?)?;
        Some((out, id))
    });
    inlined.or_else(|| Some((m.clone(), entry_caller(m, ci)?)))
}

impl Reduction for NamedCone {
    fn name(&self) -> &'static str {
        "named-cone"
    }

    fn count(&self, _: &Case) -> usize {
        self.0.len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let name = self.0.get(index)?;
        let (mut m, ii) = in_entry(&case.module, name)?;
        let entry = m.entry;
        let c = &mut m.computations[entry];
        if c.root == ii {
            return None;
        }
        c.root = ii;
        let what = format!(
            "{} (named by XLA's message as {name}) is the output",
            c.instructions[ii].name
        );
        Some(Candidate {
            what,
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module() -> hlo::Module {
        hlo::parse::parse_module(
            "HloModule m\n\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %sum.3 = f32[] add(%a, %b)\n}\n\nENTRY %main (x: f32[8,4]) -> (f32[7,4], f32[4]) {\n  %x = f32[8,4] parameter(0)\n  %zero = f32[] constant(0)\n  %neg.1 = f32[8,4] negate(%x)\n  %reduce_window_sum.7 = f32[7,4] reduce-window(%neg.1, %zero), window={size=1x1 pad=-1_0x0_0}, to_apply=%add\n  %r = f32[4] reduce(%x, %zero), dimensions={0}, to_apply=%add\n  ROOT %t = (f32[7,4], f32[4]) tuple(%reduce_window_sum.7, %r)\n}\n",
        )
        .unwrap()
    }

    #[test]
    fn the_instructions_a_message_names_are_found_in_the_module() {
        let m = module();
        let msg = "RET_CHECK failure (external/xla/xla/hlo/ir/hlo_computation.cc:1766) ShapeUtil::Compatible(old_instruction->shape(), new_instruction->shape()) \"reduce_window_sum.7\" (f32[7,4]{1,0}) vs \"add\" (f32[8,4]{1,0}); x and zero and sum.3.";
        // `add` is a computation, and no instruction of base name `add` is f32[8,4]; `x` and
        // `zero` are a parameter and a constant.
        assert_eq!(named_in(&m, msg), vec!["reduce_window_sum.7", "sum.3"]);
        // A name XLA's passes gave a copy: by its base name and the shape the message gives.
        assert_eq!(
            named_in(&m, "\"neg.0\" (f32[8,4]{1,0}) vs \"sum.9\" (f64[])"),
            vec!["neg.1"]
        );
        assert_eq!(named_in(&m, "neg.0 is wrong"), vec!["neg.1"]);
    }

    #[test]
    fn a_named_instruction_becomes_the_output_one_in_a_reducer_its_caller() {
        let m = module();
        let case = Case {
            module: m.clone(),
            inputs: vec![],
        };
        let cone = NamedCone(vec!["reduce_window_sum.7".into(), "sum.3".into()]);
        let c = cone.candidate(&case, 0).unwrap();
        let e = c.case.module.entry_computation();
        assert_eq!(e.root_instruction().name, "reduce_window_sum.7");
        // `sum.3` lives in the reducer: its first caller in the entry is the reduce-window.
        let c = cone.candidate(&case, 1).unwrap();
        assert_eq!(
            c.case.module.entry_computation().root_instruction().name,
            "reduce_window_sum.7"
        );
        assert!(NamedCone(vec!["nowhere".into()])
            .candidate(&case, 0)
            .is_none());
    }

    /// An instruction of a called computation is inlined into the entry along the calls, so
    /// its cone there holds what the entry passed in (a constant the rewrite needs).
    #[test]
    fn a_named_instruction_behind_calls_is_inlined_then_the_output() {
        let m = hlo::parse::parse_module(
            "HloModule m\n\n%inner (q: c128[2]) -> f64[2] {\n  %q = c128[2] parameter(0)\n  ROOT %abs.5 = f64[2] abs(%q)\n}\n\n%outer (p: c128[2]) -> f64[2] {\n  %p = c128[2] parameter(0)\n  %n = c128[2] negate(%p)\n  ROOT %c1 = f64[2] call(%n), to_apply=%inner\n}\n\nENTRY %main (x: f64[2]) -> f64[2] {\n  %x = f64[2] parameter(0)\n  %k = c128[2] constant({(0,0), (1,0)})\n  %c0 = f64[2] call(%k), to_apply=%outer\n  ROOT %s = f64[2] add(%c0, %x)\n}\n",
        )
        .unwrap();
        let case = Case {
            module: m.clone(),
            inputs: vec![hlo::Literal::Array(
                hlo::ArrayLiteral::zeros(hlo::PrimitiveType::F64, vec![2]).unwrap(),
            )],
        };
        assert_eq!(
            named_in(&m, "\"abs.0\" (f64[2]{0}) vs \"iota\" (c128[2]{0})"),
            vec!["abs.5"]
        );
        let c = NamedCone(vec!["abs.5".into()]).candidate(&case, 0).unwrap();
        let cleaned = hlo::edit::unused::cleanup(&c.case).unwrap_or(c.case);
        let e = cleaned.module.entry_computation();
        let ops: Vec<&str> = e.instructions.iter().map(|i| i.opcode.name()).collect();
        assert_eq!(ops, vec!["constant", "negate", "abs"], "{}", cleaned.module);
    }
}

//! Structural HLO around the ops (issue #27 item 2): what a module says about its buffers and
//! devices rather than about values. Input/output aliasing (`input_output_alias` on the module
//! header, with the in-place `dynamic-update-slice` pattern), non-default layouts (on
//! instructions and in `entry_computation_layout`) and one-device shardings. Each is behind
//! its own [`Config`](crate::Config) knob and reads no byte when that knob is 0.
//!
//! [`features`] names the structural features a module has, for coverage and tests.

use crate::config::{Config, OpFamily};
use crate::gen::{Comp, Gen};
use hlo::edit::signature::AliasEntry;
use hlo::{ArrayShape, Attr, InstrId, Layout, Module, Opcode, PrimitiveType, Shape};
use std::collections::BTreeSet;

/// The in-place update: a fresh entry parameter `p` and `dynamic-update-slice(p, update,
/// starts...)` of its shape; the pair (parameter number, the update) when there was room for
/// another parameter.
pub(crate) fn in_place_update(g: &mut Gen, c: &mut Comp) -> Option<(i64, InstrId)> {
    if !c.entry || c.n_params >= g.cfg.max_params {
        return None;
    }
    let ty = g.pick(&g.types.clone());
    let rank = g.range(1, g.cfg.max_rank.max(1) as i64) as usize;
    let dims = g.fresh_dims(rank);
    let number = c.n_params as i64;
    let p = g.add_param(c, Shape::array(ty, dims.clone()));
    let udims: Vec<i64> = dims.iter().map(|&d| g.range(d.min(1), d)).collect();
    let update = g.value(c, ty, &udims);
    let ity = g.pick(&[PrimitiveType::S32, PrimitiveType::S64, PrimitiveType::U32]);
    let mut ops = vec![p, update];
    for (d, u) in dims.iter().zip(&udims) {
        ops.push(g.index_scalar(c, ity, d - u));
    }
    let dus = g.add(
        c,
        Opcode::DynamicUpdateSlice,
        Shape::array(ty, dims),
        ops,
        vec![],
    );
    Some((number, dus))
}

/// One `input_output_alias` entry: output `output` of the ROOT tuple shares the buffer of
/// entry parameter `param` (the whole parameter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    pub output: usize,
    pub param: i64,
    pub must: bool,
}

/// The aliases of a finished entry: the in-place pair's, then, for other outputs, a parameter
/// of the same shape (layout included) not aliased yet, each with a coin. A parameter is
/// aliased to one output at most, an output to one parameter.
pub(crate) fn choose_aliases(
    g: &mut Gen,
    c: &Comp,
    outs: &[InstrId],
    in_place: Option<(i64, InstrId)>,
) -> Vec<Alias> {
    let mut aliases: Vec<Alias> = Vec::new();
    if let Some((param, dus)) = in_place {
        if let Some(output) = outs.iter().position(|&o| o == dus) {
            let must = g.coin(50);
            aliases.push(Alias {
                output,
                param,
                must,
            });
        }
    }
    let params: Vec<InstrId> = (0..c.instrs.len())
        .filter(|&i| c.instrs[i].opcode == Opcode::Parameter)
        .collect();
    for (output, &o) in outs.iter().enumerate() {
        if aliases.iter().any(|a| a.output == output) {
            continue;
        }
        let cands: Vec<InstrId> = params
            .iter()
            .copied()
            .filter(|&p| {
                c.instrs[p].shape == c.instrs[o].shape
                    && !aliases
                        .iter()
                        .any(|a| Some(a.param) == c.instrs[p].parameter_number)
            })
            .collect();
        if cands.is_empty() || !g.coin(50) {
            continue;
        }
        let p = g.pick(&cands);
        let must = g.coin(50);
        aliases.push(Alias {
            output,
            param: c.instrs[p].parameter_number.unwrap_or(0),
            must,
        });
    }
    aliases.sort_by_key(|a| a.output);
    aliases
}

/// `{ {0}: (1, {}, may-alias), ... }`, as XLA prints `input_output_alias`.
pub fn alias_text(aliases: &[Alias]) -> String {
    let entries: Vec<AliasEntry> = aliases
        .iter()
        .map(|a| AliasEntry {
            output_index: vec![a.output],
            parameter: a.param,
            parameter_index: vec![],
            must: a.must,
        })
        .collect();
    hlo::edit::signature::aliases_text(&entries)
}

/// The aliases of an `input_output_alias` text of the form this module writes ([`alias_text`]:
/// a whole parameter for one element of the root tuple); `None` for anything else (a nested
/// output index, a parameter's sub-buffer).
pub fn parse_alias_text(text: &str) -> Option<Vec<Alias>> {
    hlo::edit::signature::parse_aliases(text)?
        .into_iter()
        .map(
            |a| match (a.output_index.as_slice(), a.parameter_index.is_empty()) {
                (&[output], true) => Some(Alias {
                    output,
                    param: a.parameter,
                    must: a.must,
                }),
                _ => None,
            },
        )
        .collect()
}

/// Whether `ty` may take a non-default layout here: sub-byte types are left alone (XLA gives
/// their layouts an element size of its own).
fn layout_type(ty: PrimitiveType) -> bool {
    ty.bit_width() >= 8
}

/// A permuted `minor_to_major` for rank `r` that is not the default `{r-1,...,0}`.
fn permuted_layout(g: &mut Gen, r: usize) -> Layout {
    let mut perm: Vec<i64> = g.permutation(r).into_iter().map(|d| d as i64).collect();
    let default: Vec<i64> = (0..r as i64).rev().collect();
    if perm == default {
        perm.reverse();
    }
    let mut l = Layout::row_major(r);
    l.minor_to_major = perm;
    l
}

/// Non-default layouts on some entry parameters and array instructions of rank >= 2 (not
/// constants, tuples' elements or values inside tuples). The in-place pair keeps one layout, so
/// that its parameter and output stay the same shape.
pub(crate) fn assign_layouts(g: &mut Gen, c: &mut Comp, in_place: Option<(i64, InstrId)>) {
    for i in 0..c.instrs.len() {
        let ins = &c.instrs[i];
        if matches!(
            ins.opcode,
            Opcode::Constant | Opcode::GetTupleElement | Opcode::Tuple
        ) {
            continue;
        }
        let Some(a) = ins.shape.as_array() else {
            continue;
        };
        if a.rank() < 2 || !layout_type(a.ty) {
            continue;
        }
        let r = a.rank();
        if g.coin(40) {
            let l = permuted_layout(g, r);
            if let Some(a) = c.instrs[i].shape.as_array_mut() {
                a.layout = Some(l);
            }
        }
    }
    if let Some((param, dus)) = in_place {
        let p = (0..c.instrs.len()).find(|&i| {
            c.instrs[i].opcode == Opcode::Parameter && c.instrs[i].parameter_number == Some(param)
        });
        if let Some(p) = p {
            c.instrs[dus].shape = c.instrs[p].shape.clone();
        }
    }
}

/// A sharding on some entry instructions of array shape (never a form that names a mesh:
/// registry entry xla-sdy-sharding-unknown-mesh-abort). A one-device module gets
/// `{replicated}` or `{maximal device=0}`; an SPMD program ([`Config::spmd_percent`], drawn
/// here and only when that is above 0, so other modules stay as they were) is partitioned over
/// 2 or 4 devices and gets [`spmd_sharding`]s.
pub(crate) fn annotate_shardings(g: &mut Gen, c: &mut Comp) {
    if g.cfg.sharding_percent == 0 {
        return;
    }
    if g.cfg.spmd_percent > 0 && g.coin(g.cfg.spmd_percent) {
        g.partitions = g.pick(&[2, 4]);
    }
    for i in 0..c.instrs.len() {
        if !c.instrs[i].shape.is_array() || !g.coin(g.cfg.sharding_percent) {
            continue;
        }
        let s = if g.partitions > 1 {
            let dims = match &c.instrs[i].shape {
                Shape::Array(a) => a.dims.clone(),
                _ => Vec::new(),
            };
            spmd_sharding(g, &dims)
        } else {
            g.pick(&["{replicated}", "{maximal device=0}"]).to_string()
        };
        c.instrs[i]
            .attrs
            .push(("sharding".to_string(), Attr::Raw(s)));
    }
}

/// A sharding of an array of extents `dims` over the module's `g.partitions` devices, in XLA's
/// text: replicated; maximal on one device; tiled along one dimension over every device (the
/// extent need not divide: the partitioner pads); over two dimensions (4 devices, devices in
/// iota or transposed order); or tiled over 2 devices with the last tile dimension replicated.
pub(crate) fn spmd_sharding(g: &mut Gen, dims: &[i64]) -> String {
    let n = g.partitions;
    let rank = dims.len();
    let tiles = |split: &[(usize, i64)], extra: Option<i64>| {
        let mut t: Vec<String> = (0..rank)
            .map(|d| {
                split
                    .iter()
                    .find(|(k, _)| *k == d)
                    .map_or(1, |(_, v)| *v)
                    .to_string()
            })
            .collect();
        if let Some(e) = extra {
            t.push(e.to_string());
        }
        t.join(",")
    };
    let kind = if rank == 0 { g.below(2) } else { g.below(6) };
    match kind {
        0 => "{replicated}".to_string(),
        1 => format!("{{maximal device={}}}", g.range(0, n - 1)),
        2 | 3 => {
            let d = g.below(rank);
            format!("{{devices=[{}]<=[{n}]}}", tiles(&[(d, n)], None))
        }
        4 if n == 4 && rank >= 2 => {
            let a = g.below(rank);
            let b = (a + 1 + g.below(rank - 1)) % rank;
            let order = if g.coin(50) { "<=[4]" } else { "<=[2,2]T(1,0)" };
            format!("{{devices=[{}]{order}}}", tiles(&[(a, 2), (b, 2)], None))
        }
        _ if n == 4 => {
            let d = g.below(rank);
            format!(
                "{{devices=[{}]<=[4] last_tile_dim_replicate}}",
                tiles(&[(d, 2)], Some(2))
            )
        }
        _ => {
            let d = g.below(rank);
            format!("{{devices=[{}]<=[2]}}", tiles(&[(d, 2)], None))
        }
    }
}

fn non_default(a: &ArrayShape) -> bool {
    a.layout
        .as_ref()
        .is_some_and(|l| l.minor_to_major != Layout::row_major(a.rank()).minor_to_major)
}

/// Whether any parameter or output of the entry has a non-default layout.
fn entry_has_layouts(m: &Module) -> bool {
    let e = m.entry_computation();
    e.instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Parameter)
        .map(|i| &i.shape)
        .chain([&e.root_instruction().shape])
        .any(|s| s.leaves().iter().any(|a| non_default(a)))
}

/// `{(p0, p1, ...)->result}` with every layout written out.
pub fn entry_layout_text(m: &Module) -> String {
    let e = m.entry_computation();
    let params: Vec<Shape> = hlo::edit::signature::parameter_shapes(e)
        .into_iter()
        .map(|p| p.1)
        .collect();
    hlo::edit::signature::entry_layout_text(&params, &e.root_instruction().shape)
}

/// The module header: `input_output_alias` when there are aliases, `entry_computation_layout`
/// when an entry parameter or output has a non-default layout (replacing what was there).
pub fn write_header(m: &mut Module, aliases: &[Alias]) {
    m.header_attrs
        .retain(|(k, _)| k != "input_output_alias" && k != "entry_computation_layout");
    if !aliases.is_empty() {
        m.header_attrs
            .push(("input_output_alias".to_string(), alias_text(aliases)));
    }
    if entry_has_layouts(m) {
        let t = entry_layout_text(m);
        m.header_attrs
            .push(("entry_computation_layout".to_string(), t));
    }
}

/// The structural features of a module, by name: `aliased output`, `in-place update` (an
/// aliased output that is a dynamic-update-slice of its parameter), `non-default layout`,
/// `sharding`, `composite call`, `data-dependent while` (a condition other than a counter
/// compared with a constant), `conditional with 4+ branches`,
/// `control flow in reducer` and `control flow in comparator`.
pub fn features(m: &Module) -> BTreeSet<&'static str> {
    let mut out = BTreeSet::new();
    let e = m.entry_computation();
    for (k, v) in &m.header_attrs {
        if k == "input_output_alias" {
            let aliases = parse_alias_text(v).unwrap_or_default();
            if !aliases.is_empty() || !v.contains("{ }") {
                out.insert("aliased output");
            }
            let root = e.root_instruction();
            for a in aliases {
                let o = root.operands.get(a.output).map(|&o| &e.instructions[o]);
                if let Some(o) = o {
                    let p = o.operands.first().map(|&p| &e.instructions[p]);
                    if o.opcode == Opcode::DynamicUpdateSlice
                        && p.is_some_and(|p| p.parameter_number == Some(a.param))
                    {
                        out.insert("in-place update");
                    }
                }
            }
        }
    }
    for c in &m.computations {
        for i in &c.instructions {
            if i.shape.leaves().iter().any(|a| non_default(a)) {
                out.insert("non-default layout");
            }
            if i.attr("sharding").is_some() {
                out.insert("sharding");
            }
            match i.opcode {
                Opcode::Call if i.attr("is_composite").is_some() => {
                    out.insert("composite call");
                }
                Opcode::While => {
                    if let Some(cond) = i.comp("condition") {
                        if !counter_against_constant(&m.computations[cond]) {
                            out.insert("data-dependent while");
                        }
                    }
                }
                Opcode::Conditional => {
                    if matches!(i.attr("branch_computations"), Some(Attr::Comps(b)) if b.len() >= 4)
                    {
                        out.insert("conditional with 4+ branches");
                    }
                }
                Opcode::Reduce
                | Opcode::ReduceWindow
                | Opcode::Scatter
                | Opcode::SelectAndScatter
                | Opcode::Sort => {
                    let has_control = i.attrs.iter().any(|(_, a)| match a {
                        Attr::Comp(k) => m.computations[*k].instructions.iter().any(|x| {
                            matches!(x.opcode, Opcode::Call | Opcode::Conditional | Opcode::While)
                        }),
                        _ => false,
                    });
                    if has_control {
                        out.insert(if i.opcode == Opcode::Sort {
                            "control flow in comparator"
                        } else {
                            "control flow in reducer"
                        });
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Whether a while condition is `compare(get-tuple-element(state), constant)` (either way
/// round): a counter against a constant, the loop whose trip count XLA can know. Any other
/// condition (a bound from the state, a test on computed values) is data-dependent.
fn counter_against_constant(cond: &hlo::Computation) -> bool {
    let root = cond.root_instruction();
    if root.opcode != Opcode::Compare || root.operands.len() != 2 {
        return false;
    }
    let ops: Vec<Opcode> = root
        .operands
        .iter()
        .map(|&o| cond.instructions[o].opcode)
        .collect();
    matches!(
        ops.as_slice(),
        [Opcode::GetTupleElement, Opcode::Constant] | [Opcode::Constant, Opcode::GetTupleElement]
    )
}

/// Every feature [`features`] can name, in the order reports list them.
pub const FEATURES: [&str; 9] = [
    "aliased output",
    "in-place update",
    "non-default layout",
    "sharding",
    "composite call",
    "data-dependent while",
    "conditional with 4+ branches",
    "control flow in reducer",
    "control flow in comparator",
];

/// One configuration per structural knob, that knob forced on (and the op families its
/// features live in weighted up), with the features its modules are to show: what the tests
/// (here and on XLA) generate.
pub fn forced_configs() -> Vec<(&'static str, Config, &'static [&'static str])> {
    let d = Config::default;
    let mut control = d();
    control.nested_control_percent = 100;
    for (f, w) in [
        (OpFamily::ControlFlow, 20),
        (OpFamily::Reduction, 12),
        (OpFamily::Sort, 8),
    ] {
        control.op_weights.insert(f, w);
    }
    let mut composite = d();
    composite.composite_call_percent = 100;
    composite.op_weights.insert(OpFamily::ControlFlow, 30);
    vec![
        (
            "alias",
            Config {
                alias_percent: 100,
                ..d()
            },
            &["aliased output", "in-place update"],
        ),
        ("composite", composite, &["composite call"]),
        (
            "layout",
            Config {
                layout_percent: 100,
                max_rank: 3,
                ..d()
            },
            &["non-default layout"],
        ),
        (
            "sharding",
            Config {
                sharding_percent: 30,
                ..d()
            },
            &["sharding"],
        ),
        (
            "nested_control",
            control,
            &[
                "data-dependent while",
                "conditional with 4+ branches",
                "control flow in reducer",
                "control flow in comparator",
            ],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_text_round_trips() {
        let a = vec![
            Alias {
                output: 0,
                param: 2,
                must: false,
            },
            Alias {
                output: 3,
                param: 0,
                must: true,
            },
        ];
        let t = alias_text(&a);
        assert_eq!(t, "{ {0}: (2, {}, may-alias), {3}: (0, {}, must-alias) }");
        assert_eq!(parse_alias_text(&t), Some(a));
        assert_eq!(parse_alias_text("{ }"), Some(vec![]));
        assert_eq!(parse_alias_text("{ {0, 1}: (0, {}, may-alias) }"), None);
    }
}

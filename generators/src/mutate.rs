//! Mutation fuzzing from real modules: a program that starts from a module XLA's own tests, a
//! jax program or a regression module wrote, with a few mutations applied.
//!
//! The seed modules are embedded ([`SEEDS_TEXT`], `generators/seeds/mutation_seeds.hlo`, written
//! by `harness/tools/tests/mutation_seeds.rs` from `corpora/`: only those our parser and
//! verifier accept and the oracle runs, stripped of metadata and header attributes, in a fixed
//! order). A seed (or fuzzer bytes) picks the seed module, a donor module (for splicing) and
//! the mutations, so the same seed gives the same module byte for byte.
//!
//! Each mutation kind is one function (in the manner of llvm-reduce's delta passes), listed in
//! [`KINDS`]. A mutation either keeps the shapes it touches (compare directions, dot dimension
//! numbers with a transposed operand, index vector dims, rewired operands, spliced reducers,
//! converts there and back, layouts) or changes one instruction's shape and pads the result back
//! to the old shape (negative padding where it shrank), so nothing downstream changes. After
//! every mutation the module goes through our verifier; a mutation it refuses is undone and
//! another kind is tried. A kind that finds nowhere to apply returns `None`. Nothing panics on
//! any seed or bytes.

use crate::config::Config;
use crate::rng::seed_bytes;
use arbitrary::Unstructured;
use hlo::{
    ArrayLiteral, ArrayShape, Attr, CompId, Computation, Constant, InstrId, Instruction, Layout,
    Module, Opcode, PaddingDim, PrimitiveType, Scalar, Shape, TypeClass,
};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::OnceLock;

/// The embedded seed modules: records `//~~ seed <id> <fnv64 hex>` each followed by the
/// module's text (as our printer writes it).
pub const SEEDS_TEXT: &str = include_str!("../seeds/mutation_seeds.hlo");

/// The line that starts each record of [`SEEDS_TEXT`].
pub const SEED_MARKER: &str = "//~~ seed ";

/// One seed module: where it came from, the hash of its text, its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedModule {
    /// `jax/<module file stem>`, `regressions/<file>`, `xla-tests/<origin>#<index>`.
    pub id: String,
    /// FNV-1a 64 of `text`, in hex.
    pub hash: String,
    pub text: String,
}

impl SeedModule {
    /// The corpus the seed came from: the part of its id before the first `/`.
    pub fn source(&self) -> &str {
        self.id.split('/').next().unwrap_or("")
    }
}

/// FNV-1a, 64 bits, as 16 hex digits: the hash recorded for a seed module.
pub fn fnv64_hex(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Reads records in the format of [`SEEDS_TEXT`] (what [`write_seeds`] writes).
pub fn read_seeds(text: &str) -> Vec<SeedModule> {
    let mut out: Vec<SeedModule> = Vec::new();
    let mut cur: Option<(String, String, String)> = None;
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix(SEED_MARKER) {
            if let Some((id, hash, body)) = cur.take() {
                out.push(SeedModule {
                    id,
                    hash,
                    text: body,
                });
            }
            let mut it = rest.split_whitespace();
            let id = it.next().unwrap_or("").to_string();
            let hash = it.next().unwrap_or("").to_string();
            cur = Some((id, hash, String::new()));
        } else if let Some((_, _, body)) = cur.as_mut() {
            body.push_str(line);
        }
    }
    if let Some((id, hash, body)) = cur.take() {
        out.push(SeedModule {
            id,
            hash,
            text: body,
        });
    }
    out
}

/// Writes seed records (id, module text) in the format [`read_seeds`] reads, hashing each text.
pub fn write_seeds(seeds: &[(String, String)]) -> String {
    let mut s = String::new();
    for (id, text) in seeds {
        let mut t = text.clone();
        if !t.ends_with('\n') {
            t.push('\n');
        }
        s.push_str(&format!("{SEED_MARKER}{id} {}\n", fnv64_hex(&t)));
        s.push_str(&t);
    }
    s
}

/// The embedded seed modules, in their fixed order.
pub fn seeds() -> &'static [SeedModule] {
    static S: OnceLock<Vec<SeedModule>> = OnceLock::new();
    S.get_or_init(|| read_seeds(SEEDS_TEXT))
}

/// A real module as a seed: header attributes, stack frame tables and the per-instruction
/// `metadata` dropped (they do not change what the module computes, and a packed module has no
/// header of its own).
pub fn canonical_seed(m: &Module) -> Module {
    let mut m = m.clone();
    m.header_attrs.clear();
    m.stack_frame_tables.clear();
    for c in &mut m.computations {
        for i in &mut c.instructions {
            i.attrs.retain(|(k, _)| k != "metadata");
        }
    }
    m
}

/// What a mutated program was made from; stored with every finding of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MutationOrigin {
    /// The seed module's id ([`SeedModule::id`]) and text hash.
    pub seed_module: String,
    pub seed_hash: String,
    /// The module computations were spliced from, when a splice used one.
    pub donor: Option<String>,
    /// The mutations applied, in order, each `kind: what`.
    pub mutations: Vec<String>,
}

impl std::fmt::Display for MutationOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "mutated from {} ({}) with mutations [{}]",
            self.seed_module,
            self.seed_hash,
            self.mutations.join("; ")
        )
    }
}

/// The mutation kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MutationKind {
    /// A `pad`'s low/high/interior padding of one dimension (negative included).
    PadPadding,
    /// A `slice`'s start, limit and stride in one dimension.
    SliceBounds,
    /// One dimension of a `reduce-window`'s or `convolution`'s window: size (reduce-window),
    /// stride, padding, base (lhs) or window (rhs) dilation.
    Window,
    /// A `dynamic-slice` / `dynamic-update-slice` start index made a constant, in range or not.
    DynamicSliceStart,
    /// A `gather`/`scatter`'s `index_vector_dim` moved (the indices transposed to match), made
    /// implicit (a size-1 index vector dim dropped) or explicit (a size-1 dim added).
    IndexVectorDim,
    /// A `gather`/`scatter`'s index vector shortened by its last component (the indices sliced,
    /// the start index map shortened; the operand starts at 0 there), down to an empty vector.
    IndexVectorShrink,
    /// A `compare`'s direction and comparison `type=` (TOTALORDER for floats).
    CompareDirection,
    /// A `dot` operand transposed and its dimension numbers renumbered to match.
    DotDimensionNumbers,
    /// A value converted to another element type and back, uses redirected to the round trip.
    ConvertRoundTrip,
    /// A layout (minor_to_major) set on an intermediate array.
    Layout,
    /// An extent of an `iota` or a scalar `broadcast` changed, padded back to the old shape.
    ResizeSource,
    /// An operand replaced by another value of the same shape.
    RewireOperand,
    /// A `reduce`/`reduce-window`/`scatter`'s scalar reducer replaced by another of the same
    /// signature: the module's own, one spliced from the donor module, or a fresh binary op; a
    /// reduction's init value becomes the new reducer's identity.
    SpliceReducer,
}

impl MutationKind {
    /// The name in a [`MutationOrigin`]'s mutation list.
    pub fn name(self) -> &'static str {
        match self {
            MutationKind::PadPadding => "pad-padding",
            MutationKind::SliceBounds => "slice-bounds",
            MutationKind::Window => "window",
            MutationKind::DynamicSliceStart => "dynamic-slice-start",
            MutationKind::IndexVectorDim => "index-vector-dim",
            MutationKind::IndexVectorShrink => "index-vector-shrink",
            MutationKind::CompareDirection => "compare-direction",
            MutationKind::DotDimensionNumbers => "dot-dimension-numbers",
            MutationKind::ConvertRoundTrip => "convert-round-trip",
            MutationKind::Layout => "layout",
            MutationKind::ResizeSource => "resize-source",
            MutationKind::RewireOperand => "rewire-operand",
            MutationKind::SpliceReducer => "splice-reducer",
        }
    }
}

type MutationFn = fn(&mut Mutator) -> Option<String>;

/// Every mutation kind with its function.
pub const KINDS: [(MutationKind, MutationFn); 13] = [
    (MutationKind::PadPadding, pad_padding),
    (MutationKind::SliceBounds, slice_bounds),
    (MutationKind::Window, window),
    (MutationKind::DynamicSliceStart, dynamic_slice_start),
    (MutationKind::IndexVectorDim, index_vector_dim),
    (MutationKind::IndexVectorShrink, index_vector_shrink),
    (MutationKind::CompareDirection, compare_direction),
    (MutationKind::DotDimensionNumbers, dot_dimension_numbers),
    (MutationKind::ConvertRoundTrip, convert_round_trip),
    (MutationKind::Layout, layout),
    (MutationKind::ResizeSource, resize_source),
    (MutationKind::RewireOperand, rewire_operand),
    (MutationKind::SpliceReducer, splice_reducer),
];

/// Most mutations applied to one seed module.
pub const MAX_MUTATIONS: usize = 4;

/// The state one mutation works on.
pub struct Mutator<'a, 'b> {
    pub module: Module,
    u: &'a mut Unstructured<'b>,
    donor: Option<&'a Module>,
    donor_used: bool,
    max_elements: u64,
    names: HashSet<String>,
    counter: usize,
}

impl<'a, 'b> Mutator<'a, 'b> {
    /// A mutator of `module`, drawing its choices from `u`; `donor` is what splices take from.
    pub fn new(
        module: Module,
        u: &'a mut Unstructured<'b>,
        donor: Option<&'a Module>,
        cfg: &Config,
    ) -> Self {
        let names = module
            .computations
            .iter()
            .flat_map(|c| {
                std::iter::once(c.name.clone()).chain(c.instructions.iter().map(|i| i.name.clone()))
            })
            .collect();
        let max_elements = largest_array(&module).max(cfg.max_elements);
        Mutator {
            module,
            u,
            donor,
            donor_used: false,
            max_elements,
            names,
            counter: 0,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            self.u.choose_index(n).unwrap_or(0)
        }
    }

    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            lo
        } else {
            self.u.int_in_range(lo..=hi).unwrap_or(lo)
        }
    }

    fn pick<T: Copy>(&mut self, v: &[T]) -> Option<T> {
        if v.is_empty() {
            None
        } else {
            let k = self.below(v.len());
            Some(v[k])
        }
    }

    fn fresh(&mut self, base: &str) -> String {
        let base = base.split(".mut").next().unwrap_or(base).to_string();
        loop {
            let n = format!("{base}.mut{}", self.counter);
            self.counter += 1;
            if self.names.insert(n.clone()) {
                return n;
            }
        }
    }

    /// Every (computation, instruction) that `f` accepts, in module order.
    fn sites(&self, f: impl Fn(&Module, CompId, &Instruction) -> bool) -> Vec<(CompId, InstrId)> {
        let mut v = Vec::new();
        for (ci, c) in self.module.computations.iter().enumerate() {
            for (k, i) in c.instructions.iter().enumerate() {
                if f(&self.module, ci, i) {
                    v.push((ci, k));
                }
            }
        }
        v
    }

    fn instr(&self, s: (CompId, InstrId)) -> &Instruction {
        &self.module.computations[s.0].instructions[s.1]
    }

    fn instr_mut(&mut self, s: (CompId, InstrId)) -> &mut Instruction {
        &mut self.module.computations[s.0].instructions[s.1]
    }

    fn operand_shape(&self, s: (CompId, InstrId), k: usize) -> Option<&ArrayShape> {
        let o = *self.instr(s).operands.get(k)?;
        array(&self.module.computations[s.0].instructions.get(o)?.shape)
    }

    /// Inserts `i` just after position `after` of computation `c`; returns its id.
    fn insert_after(&mut self, c: CompId, after: InstrId, i: Instruction) -> InstrId {
        hlo::edit::insert(&mut self.module.computations[c], after + 1, i)
    }

    /// Inserts `i` just before position `before`; returns its id (`before` moves up by one).
    fn insert_before(&mut self, c: CompId, before: InstrId, i: Instruction) -> InstrId {
        hlo::edit::insert(&mut self.module.computations[c], before, i)
    }

    /// Gives site `s` the attribute `name` and the result shape it now has, then brings its
    /// users back to `orig` ([`Mutator::restore_shape`]).
    fn set_attr_and_shape(
        &mut self,
        s: (CompId, InstrId),
        name: &str,
        attr: Attr,
        shape: ArrayShape,
        orig: &ArrayShape,
    ) -> Option<()> {
        let i = self.instr_mut(s);
        i.set_attr(name, attr);
        i.shape = Shape::Array(shape);
        self.restore_shape(s, orig)
    }

    /// After instruction `s` changed its array shape to one of the same rank and type, pads it
    /// back to `orig` (negative high padding where it grew) and makes its users use the pad.
    fn restore_shape(&mut self, s: (CompId, InstrId), orig: &ArrayShape) -> Option<()> {
        let now = array(&self.instr(s).shape)?.clone();
        if now.dims == orig.dims {
            return Some(());
        }
        if now.rank() != orig.rank() || now.ty != orig.ty {
            return None;
        }
        let zero = ArrayLiteral::zeros(orig.ty, vec![]).ok()?;
        let cname = self.fresh("pad_value");
        let k = self.insert_after(s.0, s.1, hlo::edit::constant_instruction(cname, zero));
        let pname = self.fresh(&format!("{}.restore", self.instr(s).name));
        let mut pad = Instruction::new(pname, Opcode::Pad, Shape::Array(orig.clone()));
        pad.operands = vec![s.1, k];
        pad.set_attr(
            "padding",
            Attr::Padding(
                now.dims
                    .iter()
                    .zip(&orig.dims)
                    .map(|(n, o)| PaddingDim {
                        low: 0,
                        high: o - n,
                        interior: 0,
                    })
                    .collect(),
            ),
        );
        let p = self.insert_after(s.0, k, pad);
        let c = &mut self.module.computations[s.0];
        for (j, i) in c.instructions.iter_mut().enumerate() {
            if j != p {
                for o in i.operands.iter_mut() {
                    if *o == s.1 {
                        *o = p;
                    }
                }
            }
        }
        if c.root == s.1 {
            c.root = p;
        }
        Some(())
    }

    /// A scalar constant of `ty` holding `v`, inserted before `before`; returns (its id, where
    /// `before` moved).
    fn scalar_before(
        &mut self,
        c: CompId,
        before: InstrId,
        ty: PrimitiveType,
        v: Scalar,
        base: &str,
    ) -> Option<(InstrId, InstrId)> {
        let lit = hlo::edit::scalar_literal(ty, v)?;
        let name = self.fresh(base);
        let k = self.insert_before(c, before, hlo::edit::constant_instruction(name, lit));
        Some((k, before + 1))
    }
}

fn array(s: &Shape) -> Option<&ArrayShape> {
    match s {
        Shape::Array(a) => Some(a),
        _ => None,
    }
}

/// Why a module is not compiler input as XLA defines it, or `None` when it is: it holds an op
/// that only XLA's own passes write.
/// - `fusion`: made by the fusion passes; the workers' HLO -> MLIR route refuses it.
/// - the custom-calls `PadToStatic` and `SliceToDynamic`: made by the dynamic padder, which
///   lowers dynamic shapes; XLA CPU's code generation does not implement them on their own.
/// - a `bitcast` that is not the identity: a bitcast means something only once layouts are
///   assigned, and XLA's layout assignment refuses any bitcast it meets (layout_assignment.cc:
///   "a bitcast instruction present in the IR before layout assignment is a bug"); the
///   identity ones are removed by the simplifier before it.
///
/// The seed list keeps only compiler input, and a mutation that makes anything else is undone.
pub fn not_compiler_input(m: &Module) -> Option<String> {
    for c in &m.computations {
        for i in &c.instructions {
            match i.opcode {
                hlo::Opcode::Fusion => return Some(format!("{} is a fusion", i.name)),
                hlo::Opcode::CustomCall
                    if matches!(
                        i.attr("custom_call_target"),
                        Some(hlo::Attr::Str(t)) if t == "PadToStatic" || t == "SliceToDynamic"
                    ) =>
                {
                    return Some(format!(
                        "{} is a custom-call XLA's dynamic padder writes",
                        i.name
                    ))
                }
                hlo::Opcode::Bitcast => {
                    let operand = i.operands.first().and_then(|&o| c.instructions.get(o));
                    let identity = operand.is_some_and(|o| {
                        hlo::edit::signature::with_layouts(&o.shape)
                            == hlo::edit::signature::with_layouts(&i.shape)
                    });
                    if !identity {
                        return Some(format!(
                            "{} is a bitcast that changes the shape or layout",
                            i.name
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// Whether a module stays within a configuration's bounds, as generated ones do: no array over
/// `max_elements` elements, no dot or convolution over `max_work` multiply-adds (so that the
/// oracle runs it quickly). What the seed list keeps.
pub fn within_bounds(m: &Module, cfg: &Config) -> bool {
    if largest_array(m) > cfg.max_elements {
        return false;
    }
    m.computations.iter().all(|c| {
        c.instructions.iter().all(|i| {
            let shape = |k: usize| {
                i.operands
                    .get(k)
                    .and_then(|&o| c.instructions.get(o))
                    .and_then(|x| array(&x.shape))
            };
            let out = array(&i.shape).and_then(|a| a.element_count());
            let work = match i.opcode {
                Opcode::Dot => shape(0).and_then(|l| {
                    let k: u64 = i
                        .ints("lhs_contracting_dims")
                        .unwrap_or(&[])
                        .iter()
                        .map(|&d| l.dims.get(d as usize).copied().unwrap_or(1).max(0) as u64)
                        .product();
                    out?.checked_mul(k)
                }),
                Opcode::Convolution => shape(1).and_then(|k| {
                    let of = i
                        .conv_dims()
                        .and_then(|l| k.dims.get(l.kernel_output_feature as usize).copied())
                        .unwrap_or(1)
                        .max(1) as u64;
                    out?.checked_mul(k.element_count()? / of)
                }),
                _ => Some(0),
            };
            work.is_some_and(|w| w <= cfg.max_work)
        })
    })
}

fn largest_array(m: &Module) -> u64 {
    fn leaves(s: &Shape, best: &mut u64) {
        match s {
            Shape::Array(a) => *best = (*best).max(a.element_count().unwrap_or(u64::MAX)),
            Shape::Tuple(t) => t.iter().for_each(|x| leaves(x, best)),
            _ => {}
        }
    }
    let mut best = 0;
    for c in &m.computations {
        for i in &c.instructions {
            leaves(&i.shape, &mut best);
        }
    }
    best
}

fn plain_static(a: &ArrayShape) -> bool {
    a.is_static() && a.layout.as_ref().is_none_or(|l| l.is_plain())
}

/// Output extent of one window dimension over an input extent (0 when the window does not fit).
fn window_extent(input: i64, size: i64, stride: i64, lo: i64, hi: i64, base: i64, dil: i64) -> i64 {
    let dilated = if input == 0 {
        0
    } else {
        (input - 1) * base + 1
    };
    let padded = dilated + lo + hi;
    let eff = (size - 1) * dil + 1;
    if padded < eff || stride < 1 {
        0
    } else {
        (padded - eff) / stride + 1
    }
}

fn describe(m: &Module, s: (CompId, InstrId)) -> String {
    let c = &m.computations[s.0];
    format!("%{} in {}", c.instructions[s.1].name, c.name)
}

// ---------------------------------------------------------------------------------------------
// The mutation kinds.

fn pad_padding(mu: &mut Mutator) -> Option<String> {
    let sites = mu.sites(|_, _, i| i.opcode == Opcode::Pad && i.padding().is_some());
    let s = mu.pick(&sites)?;
    let orig = array(&mu.instr(s).shape)?.clone();
    let input = mu.operand_shape(s, 0)?.clone();
    if !plain_static(&orig) || input.rank() == 0 {
        return None;
    }
    let d = mu.below(input.rank());
    let n = input.dims[d];
    let mut p = mu.instr(s).padding()?.to_vec();
    let old = *p.get(d)?;
    let lo = mu.int(-n - 1, n + 3);
    let hi = mu.int(-n - 1, n + 3);
    let interior = mu.int(0, 3);
    let body = n + if n > 0 { (n - 1) * interior } else { 0 };
    let hi = if lo + hi + body < 0 { -lo - body } else { hi };
    p[d] = PaddingDim {
        low: lo,
        high: hi,
        interior,
    };
    let mut shape = orig.clone();
    shape.dims[d] = lo + hi + body;
    if shape.dims[d] < 0 {
        return None;
    }
    let what = format!(
        "{} dim {d}: {}_{}_{} -> {lo}_{hi}_{interior}",
        describe(&mu.module, s),
        old.low,
        old.high,
        old.interior
    );
    mu.set_attr_and_shape(s, "padding", Attr::Padding(p), shape, &orig)?;
    Some(what)
}

fn slice_bounds(mu: &mut Mutator) -> Option<String> {
    let sites = mu.sites(|_, _, i| i.opcode == Opcode::Slice && i.slice().is_some());
    let s = mu.pick(&sites)?;
    let orig = array(&mu.instr(s).shape)?.clone();
    let input = mu.operand_shape(s, 0)?.clone();
    if !plain_static(&orig) || input.rank() == 0 {
        return None;
    }
    let d = mu.below(input.rank());
    let n = input.dims[d];
    let mut sl = mu.instr(s).slice()?.to_vec();
    let old = *sl.get(d)?;
    let start = mu.int(0, n);
    let limit = mu.int(start, n);
    let stride = mu.int(1, 4);
    sl[d] = hlo::SliceDim {
        start,
        limit,
        stride,
    };
    let mut shape = orig.clone();
    shape.dims[d] = (limit - start + stride - 1) / stride;
    let what = format!(
        "{} dim {d}: [{}:{}:{}] -> [{start}:{limit}:{stride}]",
        describe(&mu.module, s),
        old.start,
        old.limit,
        old.stride
    );
    mu.set_attr_and_shape(s, "slice", Attr::Slice(sl), shape, &orig)?;
    Some(what)
}

fn window(mu: &mut Mutator) -> Option<String> {
    let sites = mu.sites(|_, _, i| {
        matches!(i.opcode, Opcode::ReduceWindow | Opcode::Convolution)
            && i.window().is_some()
            && matches!(i.shape, Shape::Array(_))
    });
    let s = mu.pick(&sites)?;
    let orig = array(&mu.instr(s).shape)?.clone();
    let input = mu.operand_shape(s, 0)?.clone();
    if !plain_static(&orig) {
        return None;
    }
    let is_conv = mu.instr(s).opcode == Opcode::Convolution;
    let mut w = mu.instr(s).window()?.clone();
    if w.dims.is_empty() {
        return None;
    }
    let d = mu.below(w.dims.len());
    // The input and output dimension the window dimension slides over.
    let (in_dim, out_dim) = if is_conv {
        let l = mu.instr(s).conv_dims()?;
        (
            *l.input_spatial.get(d)? as usize,
            *l.output_spatial.get(d)? as usize,
        )
    } else {
        (d, d)
    };
    let n = *input.dims.get(in_dim)?;
    let old = w.dims[d].clone();
    let field = mu.below(if is_conv { 5 } else { 6 });
    let wd = &mut w.dims[d];
    let name = match field {
        0 => {
            wd.stride = 1 + (wd.stride + 1 + (n % 3)) % 4;
            "stride"
        }
        1 => {
            wd.padding_low = -(n.min(2)) + (wd.padding_low + 2).rem_euclid(5);
            "padding_low"
        }
        2 => {
            wd.padding_high = -(n.min(2)) + (wd.padding_high + 3).rem_euclid(5);
            "padding_high"
        }
        3 => {
            wd.base_dilation = 1 + wd.base_dilation % 3;
            "lhs_dilate"
        }
        4 => {
            wd.window_dilation = 1 + wd.window_dilation % 3;
            "rhs_dilate"
        }
        _ => {
            wd.size = 1 + wd.size % (n.clamp(1, 4) + 1);
            "size"
        }
    };
    let wd = w.dims[d].clone();
    let ext = window_extent(
        n,
        wd.size,
        wd.stride,
        wd.padding_low,
        wd.padding_high,
        wd.base_dilation,
        wd.window_dilation,
    );
    let mut shape = orig.clone();
    *shape.dims.get_mut(out_dim)? = ext;
    let what = format!(
        "{} window dim {d} {name}: {:?} -> {:?}",
        describe(&mu.module, s),
        (
            old.size,
            old.stride,
            old.padding_low,
            old.padding_high,
            old.base_dilation,
            old.window_dilation
        ),
        (
            wd.size,
            wd.stride,
            wd.padding_low,
            wd.padding_high,
            wd.base_dilation,
            wd.window_dilation
        )
    );
    mu.set_attr_and_shape(s, "window", Attr::Window(w), shape, &orig)?;
    Some(what)
}

fn dynamic_slice_start(mu: &mut Mutator) -> Option<String> {
    let sites = mu.sites(|_, _, i| {
        matches!(i.opcode, Opcode::DynamicSlice | Opcode::DynamicUpdateSlice)
            && i.operands.len() > 2
    });
    let s = mu.pick(&sites)?;
    let first = if mu.instr(s).opcode == Opcode::DynamicSlice {
        1
    } else {
        2
    };
    let nstarts = mu.instr(s).operands.len() - first;
    let k = first + mu.below(nstarts);
    let idx = mu.operand_shape(s, k)?.clone();
    let operand = mu.operand_shape(s, 0)?.clone();
    if idx.rank() != 0 || !idx.ty.is_integer() {
        return None;
    }
    let extent = *operand.dims.get(k - first)?;
    let choices = [
        0,
        1,
        -1,
        extent,
        extent - 1,
        extent + 1,
        2 * extent + 3,
        i32::MAX as i64,
        i32::MIN as i64,
    ];
    let mut v = mu.pick(&choices)?;
    if idx.ty.is_unsigned_integer() && v < 0 {
        v = extent + 7;
    }
    let bits = idx.ty.bit_width();
    if bits < 64 {
        let (lo, hi) = if idx.ty.is_unsigned_integer() {
            (0, (1i64 << bits) - 1)
        } else {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        };
        v = v.clamp(lo, hi);
    }
    let what = format!(
        "{} start {} := {v} (extent {extent})",
        describe(&mu.module, s),
        k - first
    );
    let scalar = if idx.ty.is_unsigned_integer() {
        Scalar::U(v as u64)
    } else {
        Scalar::S(v)
    };
    let (c, at) = mu.scalar_before(s.0, s.1, idx.ty, scalar, "start")?;
    mu.instr_mut((s.0, at)).operands[k] = c;
    Some(what)
}

/// The indices operand of a gather or scatter, and the attribute names of the index vector dim
/// and of the indices' batching dims.
fn indices_slot(op: Opcode) -> Option<(usize, &'static str)> {
    match op {
        Opcode::Gather => Some((1, "start_indices_batching_dims")),
        Opcode::Scatter => Some((1, "scatter_indices_batching_dims")),
        _ => None,
    }
}

fn index_vector_dim(mu: &mut Mutator) -> Option<String> {
    let sites = mu.sites(|m, ci, i| {
        let c = &m.computations[ci];
        i.int("index_vector_dim").is_some()
            && match i.opcode {
                Opcode::Gather => true,
                // A single-operand scatter: its indices are operand 1.
                Opcode::Scatter => i.operands.len() == 3,
                _ => false,
            }
            && c.instructions
                .get(i.operands.get(1).copied().unwrap_or(usize::MAX))
                .is_some_and(|x| matches!(x.shape, Shape::Array(_)))
    });
    let s = mu.pick(&sites)?;
    let (slot, batching) = indices_slot(mu.instr(s).opcode)?;
    let ind = mu.operand_shape(s, slot)?.clone();
    let ivd = mu.instr(s).int("index_vector_dim")?;
    let r = ind.rank() as i64;
    if !(0..=r).contains(&ivd) || !ind.is_static() {
        return None;
    }
    // new index of each old indices dimension, the new indices shape, how to make it.
    let (new_dims, old_to_new, new_ivd, how): (Vec<i64>, Vec<i64>, i64, &str) = if ivd == r {
        // Implicit: add an explicit size-1 index vector dim at p.
        let p = mu.int(0, r);
        let mut dims = ind.dims.clone();
        dims.insert(p as usize, 1);
        let map = (0..r).map(|d| if d >= p { d + 1 } else { d }).collect();
        (dims, map, p, "explicit")
    } else if ind.dims[ivd as usize] == 1 && mu.below(2) == 0 {
        // A size-1 index vector dim dropped: the vector becomes implicit.
        let mut dims = ind.dims.clone();
        dims.remove(ivd as usize);
        let map = (0..r).map(|d| if d > ivd { d - 1 } else { d }).collect();
        (dims, map, r - 1, "implicit")
    } else {
        if r < 2 {
            return None;
        }
        let mut p = mu.int(0, r - 1);
        if p == ivd {
            p = (p + 1) % r;
        }
        let mut order: Vec<i64> = (0..r).filter(|&d| d != ivd).collect();
        order.insert(p as usize, ivd);
        let mut map = vec![0; r as usize];
        for (new, &old) in order.iter().enumerate() {
            map[old as usize] = new as i64;
        }
        let dims = order.iter().map(|&o| ind.dims[o as usize]).collect();
        let i_old = mu.instr(s).operands[slot];
        let name = mu.fresh("indices");
        let mut t = Instruction::new(
            name,
            Opcode::Transpose,
            Shape::Array(ArrayShape::new(ind.ty, dims)),
        );
        t.operands = vec![i_old];
        t.set_attr("dimensions", Attr::Ints(order));
        let tid = mu.insert_before(s.0, s.1, t);
        let at = (s.0, s.1 + 1);
        retarget_indices(mu, at, slot, tid, batching, &map, p);
        return Some(format!(
            "{} index_vector_dim {ivd} -> {p} (indices transposed)",
            describe(&mu.module, at)
        ));
    };
    let i_old = mu.instr(s).operands[slot];
    let name = mu.fresh("indices");
    let mut t = Instruction::new(
        name,
        Opcode::Reshape,
        Shape::Array(ArrayShape::new(ind.ty, new_dims)),
    );
    t.operands = vec![i_old];
    let tid = mu.insert_before(s.0, s.1, t);
    let at = (s.0, s.1 + 1);
    retarget_indices(mu, at, slot, tid, batching, &old_to_new, new_ivd);
    Some(format!(
        "{} index_vector_dim {ivd} -> {new_ivd} ({how}, indices reshaped)",
        describe(&mu.module, at)
    ))
}

fn retarget_indices(
    mu: &mut Mutator,
    at: (CompId, InstrId),
    slot: usize,
    indices: InstrId,
    batching: &str,
    old_to_new: &[i64],
    ivd: i64,
) {
    let i = mu.instr_mut(at);
    i.operands[slot] = indices;
    i.set_attr("index_vector_dim", Attr::Int(ivd));
    if let Some(b) = i.ints(batching).map(|b| b.to_vec()) {
        let nb = b
            .iter()
            .map(|&d| old_to_new.get(d as usize).copied().unwrap_or(d))
            .collect();
        i.set_attr(batching, Attr::Ints(nb));
    }
}

fn index_vector_shrink(mu: &mut Mutator) -> Option<String> {
    let sites = mu.sites(|_, _, i| {
        (i.opcode == Opcode::Gather || (i.opcode == Opcode::Scatter && i.operands.len() == 3))
            && i.int("index_vector_dim").is_some()
    });
    let s = mu.pick(&sites)?;
    let map_name = if mu.instr(s).opcode == Opcode::Gather {
        "start_index_map"
    } else {
        "scatter_dims_to_operand_dims"
    };
    let ind = mu.operand_shape(s, 1)?.clone();
    let ivd = mu.instr(s).int("index_vector_dim")?;
    let mut map = mu.instr(s).ints(map_name)?.to_vec();
    // Only an explicit index vector dim can be shortened (an implicit one has one component).
    if ivd < 0 || ivd as usize >= ind.rank() || map.is_empty() || !ind.is_static() {
        return None;
    }
    let k = ind.dims[ivd as usize];
    if k != map.len() as i64 {
        return None;
    }
    let dropped = map.pop()?;
    let mut dims = ind.dims.clone();
    dims[ivd as usize] = k - 1;
    let name = mu.fresh("indices");
    let mut sl = Instruction::new(
        name,
        Opcode::Slice,
        Shape::Array(ArrayShape::new(ind.ty, dims)),
    );
    sl.operands = vec![mu.instr(s).operands[1]];
    sl.set_attr(
        "slice",
        Attr::Slice(
            ind.dims
                .iter()
                .enumerate()
                .map(|(d, &n)| hlo::SliceDim {
                    start: 0,
                    limit: if d == ivd as usize { k - 1 } else { n },
                    stride: 1,
                })
                .collect(),
        ),
    );
    let id = mu.insert_before(s.0, s.1, sl);
    let at = (s.0, s.1 + 1);
    let i = mu.instr_mut(at);
    i.operands[1] = id;
    i.set_attr(map_name, Attr::Ints(map.clone()));
    Some(format!(
        "{} index vector {k} -> {} components (operand dim {dropped} starts at 0)",
        describe(&mu.module, at),
        k - 1
    ))
}

fn compare_direction(mu: &mut Mutator) -> Option<String> {
    let loops = loop_computations(&mu.module);
    let sites = mu.sites(|_, ci, i| i.opcode == Opcode::Compare && !loops.contains(&ci));
    let s = mu.pick(&sites)?;
    let ty = mu.operand_shape(s, 0)?.ty;
    let directions: &[&str] = if ty.is_complex() {
        &["EQ", "NE"]
    } else {
        &["EQ", "NE", "LT", "LE", "GT", "GE"]
    };
    let dir = mu.pick(directions)?;
    let types: &[&str] = match ty.class() {
        TypeClass::Float => &["FLOAT", "TOTALORDER"],
        TypeClass::Complex => &["FLOAT"],
        TypeClass::Signed => &["SIGNED"],
        TypeClass::Unsigned | TypeClass::Pred => &["UNSIGNED"],
        TypeClass::Other => return None,
    };
    let t = mu.pick(types)?;
    let old = format!(
        "{} {}",
        mu.instr(s).ident("direction").unwrap_or("?"),
        mu.instr(s).ident("type").unwrap_or("default")
    );
    let what = format!("{} {old} -> {dir} {t}", describe(&mu.module, s));
    let i = mu.instr_mut(s);
    i.set_attr("direction", Attr::Ident(dir.to_string()));
    i.set_attr("type", Attr::Ident(t.to_string()));
    Some(what)
}

fn dot_dimension_numbers(mu: &mut Mutator) -> Option<String> {
    let sites = mu.sites(|_, _, i| i.opcode == Opcode::Dot && i.operands.len() == 2);
    let s = mu.pick(&sites)?;
    let side = mu.below(2);
    let (pre, k) = if side == 0 { ("lhs", 0) } else { ("rhs", 1) };
    let a = mu.operand_shape(s, k)?.clone();
    let r = a.rank();
    if r < 2 || !a.is_static() {
        return None;
    }
    let bname = format!("{pre}_batch_dims");
    let cname = format!("{pre}_contracting_dims");
    let batch = mu.instr(s).ints(&bname).unwrap_or(&[]).to_vec();
    let contract = mu.instr(s).ints(&cname).unwrap_or(&[]).to_vec();
    let special: Vec<i64> = batch.iter().chain(&contract).copied().collect();
    if special.is_empty() || special.iter().any(|&d| d < 0 || d as usize >= r) {
        return None;
    }
    // Free dims keep their order (the output's order); batch and contracting dims go anywhere.
    let mut order: Vec<i64> = (0..r as i64).filter(|d| !special.contains(d)).collect();
    let mut moved = special.clone();
    // A rotation of the special dims, then each inserted at a drawn place.
    let rot = mu.below(moved.len());
    moved.rotate_left(rot);
    for d in moved {
        let p = mu.below(order.len() + 1);
        order.insert(p, d);
    }
    if order.iter().enumerate().all(|(i, &d)| i as i64 == d) {
        return None;
    }
    let mut inv = vec![0i64; r];
    for (new, &old) in order.iter().enumerate() {
        inv[old as usize] = new as i64;
    }
    let dims: Vec<i64> = order.iter().map(|&o| a.dims[o as usize]).collect();
    let operand = mu.instr(s).operands[k];
    let name = mu.fresh(pre);
    let mut t = Instruction::new(
        name,
        Opcode::Transpose,
        Shape::Array(ArrayShape::new(a.ty, dims)),
    );
    t.operands = vec![operand];
    t.set_attr("dimensions", Attr::Ints(order.clone()));
    let tid = mu.insert_before(s.0, s.1, t);
    let at = (s.0, s.1 + 1);
    let i = mu.instr_mut(at);
    i.operands[k] = tid;
    let map = |v: &[i64]| v.iter().map(|&d| inv[d as usize]).collect::<Vec<_>>();
    if !batch.is_empty() {
        i.set_attr(&bname, Attr::Ints(map(&batch)));
    }
    if !contract.is_empty() {
        i.set_attr(&cname, Attr::Ints(map(&contract)));
    }
    Some(format!(
        "{} {pre} transposed {order:?}, {pre} dims renumbered",
        describe(&mu.module, at)
    ))
}

const ROUND_TRIP_TYPES: [PrimitiveType; 10] = [
    PrimitiveType::F16,
    PrimitiveType::Bf16,
    PrimitiveType::F32,
    PrimitiveType::F64,
    PrimitiveType::S8,
    PrimitiveType::S32,
    PrimitiveType::U8,
    PrimitiveType::U32,
    PrimitiveType::S64,
    PrimitiveType::F8E5M2,
];

fn convert_round_trip(mu: &mut Mutator) -> Option<String> {
    let sites = mu.sites(|_, _, i| {
        array(&i.shape).is_some_and(|a| {
            a.is_static() && !a.ty.is_complex() && a.ty.class() != TypeClass::Other
        }) && !matches!(i.opcode, Opcode::Constant)
    });
    let s = mu.pick(&sites)?;
    let a = array(&mu.instr(s).shape)?.clone();
    let to = mu.pick(&ROUND_TRIP_TYPES)?;
    if to == a.ty {
        return None;
    }
    let there_name = mu.fresh("convert");
    let mut there = Instruction::new(
        there_name,
        Opcode::Convert,
        Shape::Array(ArrayShape::new(to, a.dims.clone())),
    );
    there.operands = vec![s.1];
    let t = mu.insert_after(s.0, s.1, there);
    let back_name = mu.fresh("convert");
    let mut back = Instruction::new(back_name, Opcode::Convert, Shape::Array(a.clone()));
    back.operands = vec![t];
    let b = mu.insert_after(s.0, t, back);
    let c = &mut mu.module.computations[s.0];
    for (j, i) in c.instructions.iter_mut().enumerate() {
        if j != t && j != b {
            for o in i.operands.iter_mut() {
                if *o == s.1 {
                    *o = b;
                }
            }
        }
    }
    if c.root == s.1 {
        c.root = b;
    }
    Some(format!(
        "{} through {} and back to {}",
        describe(&mu.module, s),
        to.name(),
        a.ty.name()
    ))
}

fn layout(mu: &mut Mutator) -> Option<String> {
    let entry = mu.module.entry;
    let c = &mu.module.computations[entry];
    let bitcast_operands: HashSet<InstrId> = c
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Bitcast)
        .flat_map(|i| i.operands.iter().copied())
        .collect();
    let root = c.root;
    let sites: Vec<(CompId, InstrId)> = c
        .instructions
        .iter()
        .enumerate()
        .filter(|(k, i)| {
            *k != root
                && !bitcast_operands.contains(k)
                && !matches!(i.opcode, Opcode::Parameter | Opcode::Bitcast)
                && array(&i.shape).is_some_and(|a| a.rank() >= 2 && plain_static(a))
        })
        .map(|(k, _)| (entry, k))
        .collect();
    let s = mu.pick(&sites)?;
    let a = array(&mu.instr(s).shape)?.clone();
    let mut m2m: Vec<i64> = (0..a.rank() as i64).collect();
    // A drawn permutation (Fisher-Yates on the drawn bytes).
    for i in (1..m2m.len()).rev() {
        let j = mu.below(i + 1);
        m2m.swap(i, j);
    }
    if m2m == a.minor_to_major() {
        m2m.reverse();
    }
    let what = format!("{} layout {{{m2m:?}}}", describe(&mu.module, s));
    if let Shape::Array(x) = &mut mu.instr_mut(s).shape {
        x.layout = Some(Layout {
            minor_to_major: m2m,
            ..Layout::default()
        });
    }
    Some(what)
}

fn resize_source(mu: &mut Mutator) -> Option<String> {
    let sites = mu.sites(|m, ci, i| {
        let scalar_operand = i.operands.first().is_some_and(|&o| {
            m.computations[ci]
                .instructions
                .get(o)
                .and_then(|x| array(&x.shape))
                .is_some_and(|a| a.rank() == 0)
        });
        (i.opcode == Opcode::Iota || (i.opcode == Opcode::Broadcast && scalar_operand))
            && array(&i.shape).is_some_and(|a| a.rank() > 0 && plain_static(a))
    });
    let s = mu.pick(&sites)?;
    let orig = array(&mu.instr(s).shape)?.clone();
    let d = mu.below(orig.rank());
    let n = orig.dims[d];
    let new = mu.int(0, n + 4);
    if new == n {
        return None;
    }
    let mut shape = orig.clone();
    shape.dims[d] = new;
    shape.layout = None;
    let what = format!("{} dim {d}: {n} -> {new}", describe(&mu.module, s));
    mu.instr_mut(s).shape = Shape::Array(shape);
    mu.restore_shape(s, &orig)?;
    Some(what)
}

/// The computations a `while` calls (bodies and conditions): a mutation there can make a loop
/// run forever (a counter rewired to a constant, `LT` made `NE`), which only times out.
fn loop_computations(m: &Module) -> HashSet<CompId> {
    m.computations
        .iter()
        .flat_map(|c| c.instructions.iter())
        .filter(|i| i.opcode == Opcode::While)
        .flat_map(|i| [i.comp("body"), i.comp("condition")])
        .flatten()
        .collect()
}

/// Whether `target` is among the values `from` is computed from (itself included).
fn depends_on(c: &Computation, from: InstrId, target: InstrId) -> bool {
    let mut seen = vec![false; c.instructions.len()];
    let mut stack = vec![from];
    while let Some(k) = stack.pop() {
        if k == target {
            return true;
        }
        if k >= seen.len() || seen[k] {
            continue;
        }
        seen[k] = true;
        stack.extend(c.instructions[k].operands.iter().copied());
    }
    false
}

fn rewire_operand(mu: &mut Mutator) -> Option<String> {
    let loops = loop_computations(&mu.module);
    let sites = mu.sites(|_, ci, i| {
        !loops.contains(&ci)
            && !i.operands.is_empty()
            && !matches!(i.opcode, Opcode::Tuple | Opcode::GetTupleElement)
            && !i.has_side_effect()
    });
    let s = mu.pick(&sites)?;
    let k = mu.below(mu.instr(s).operands.len());
    let c = &mu.module.computations[s.0];
    let old = mu.instr(s).operands[k];
    let want = &c.instructions.get(old)?.shape;
    array(want)?;
    let candidates: Vec<InstrId> = (0..c.instructions.len())
        .filter(|&j| {
            j != old
                && j != s.1
                && c.instructions[j].shape == *want
                && !c.instructions[j].has_side_effect()
                && !depends_on(c, j, s.1)
        })
        .collect();
    let j = mu.pick(&candidates)?;
    let what = format!(
        "{} operand {k}: %{} -> %{}",
        describe(&mu.module, s),
        mu.module.computations[s.0].instructions[old].name,
        mu.module.computations[s.0].instructions[j].name
    );
    mu.instr_mut(s).operands[k] = j;
    Some(what)
}

/// A scalar binary reducer's element type: two scalar parameters of one type, a root of that
/// type.
fn reducer_type(c: &Computation) -> Option<PrimitiveType> {
    let ps = c.parameters();
    if ps.len() != 2 {
        return None;
    }
    let t = array(&ps[0].1.shape).filter(|a| a.rank() == 0)?.ty;
    let t1 = array(&ps[1].1.shape).filter(|a| a.rank() == 0)?.ty;
    let r = array(&c.instructions.get(c.root)?.shape)
        .filter(|a| a.rank() == 0)?
        .ty;
    (t == t1 && t == r).then_some(t)
}

/// The commutative, associative binary op a reducer is (`root = op(p0, p1)`), if it is one.
fn reducer_op(c: &Computation) -> Option<Opcode> {
    let root = c.instructions.get(c.root)?;
    let params: Vec<InstrId> = c.parameters().iter().map(|(k, _)| *k).collect();
    let mut ops = root.operands.clone();
    ops.sort_unstable();
    let mut ps = params.clone();
    ps.sort_unstable();
    (matches!(
        root.opcode,
        Opcode::Add
            | Opcode::Multiply
            | Opcode::Maximum
            | Opcode::Minimum
            | Opcode::And
            | Opcode::Or
            | Opcode::Xor
    ) && ops == ps)
        .then_some(root.opcode)
}

/// The identity of `op` over `ty`, when it has one this code knows.
fn identity(op: Opcode, ty: PrimitiveType) -> Option<Scalar> {
    let bits = ty.bit_width();
    let class = ty.class();
    let signed_min = || -(1i128 << (bits - 1)) as i64;
    let signed_max = || ((1i128 << (bits - 1)) - 1) as i64;
    let unsigned_max = || ((1u128 << bits) - 1) as u64;
    let has_inf = matches!(
        ty,
        PrimitiveType::F16 | PrimitiveType::Bf16 | PrimitiveType::F32 | PrimitiveType::F64
    );
    Some(match (op, class) {
        (Opcode::Add | Opcode::Or | Opcode::Xor, TypeClass::Pred) => Scalar::Pred(false),
        (Opcode::Add, TypeClass::Float) => Scalar::F(0.0),
        (Opcode::Add | Opcode::Or | Opcode::Xor, TypeClass::Signed) => Scalar::S(0),
        (Opcode::Add | Opcode::Or | Opcode::Xor, TypeClass::Unsigned) => Scalar::U(0),
        (Opcode::Multiply, TypeClass::Float) => Scalar::F(1.0),
        (Opcode::Multiply, TypeClass::Signed) => Scalar::S(1),
        (Opcode::Multiply, TypeClass::Unsigned) => Scalar::U(1),
        (Opcode::Multiply | Opcode::And, TypeClass::Pred) => Scalar::Pred(true),
        (Opcode::And, TypeClass::Signed) => Scalar::S(-1),
        (Opcode::And, TypeClass::Unsigned) => Scalar::U(unsigned_max()),
        (Opcode::Maximum, TypeClass::Float) if has_inf => Scalar::F(f64::NEG_INFINITY),
        (Opcode::Minimum, TypeClass::Float) if has_inf => Scalar::F(f64::INFINITY),
        (Opcode::Maximum, TypeClass::Signed) => Scalar::S(signed_min()),
        (Opcode::Minimum, TypeClass::Signed) => Scalar::S(signed_max()),
        (Opcode::Maximum, TypeClass::Unsigned) => Scalar::U(0),
        (Opcode::Minimum, TypeClass::Unsigned) => Scalar::U(unsigned_max()),
        (Opcode::Maximum, TypeClass::Pred) => Scalar::Pred(false),
        (Opcode::Minimum, TypeClass::Pred) => Scalar::Pred(true),
        _ => return None,
    })
}

/// A copy of computation `c` of module `from` (which calls nothing) added to the mutator's
/// module as its first computation, every name fresh; returns its id.
fn add_computation(mu: &mut Mutator, c: &Computation) -> CompId {
    let mut n = c.clone();
    n.name = mu.fresh(&c.name);
    for i in &mut n.instructions {
        i.name = mu.fresh(&i.name);
        i.attrs.retain(|(k, _)| k != "metadata");
    }
    let m = &mut mu.module;
    for comp in &mut m.computations {
        for i in &mut comp.instructions {
            for (_, a) in i.attrs.iter_mut() {
                match a {
                    Attr::Comp(x) => *x += 1,
                    Attr::Comps(xs) => xs.iter_mut().for_each(|x| *x += 1),
                    _ => {}
                }
            }
        }
    }
    m.entry += 1;
    m.computations.insert(0, n);
    0
}

/// A fresh reducer `op(p0, p1)` over `ty`, added to the module; returns its id.
fn fresh_reducer(mu: &mut Mutator, op: Opcode, ty: PrimitiveType) -> CompId {
    let sh = Shape::scalar(ty);
    let mut p0 = Instruction::new("lhs", Opcode::Parameter, sh.clone());
    p0.parameter_number = Some(0);
    let mut p1 = Instruction::new("rhs", Opcode::Parameter, sh.clone());
    p1.parameter_number = Some(1);
    let mut r = Instruction::new(op.name(), op, sh);
    r.operands = vec![0, 1];
    let c = Computation {
        name: format!("{}_{}", op.name(), ty.name()),
        instructions: vec![p0, p1, r],
        root: 2,
        trailing_attrs: Vec::new(),
    };
    add_computation(mu, &c)
}

fn calls_nothing(c: &Computation) -> bool {
    c.instructions
        .iter()
        .all(|i| i.called_computations().is_empty() && !i.has_side_effect())
}

fn splice_reducer(mu: &mut Mutator) -> Option<String> {
    let sites = mu.sites(|m, _, i| {
        let single = match i.opcode {
            Opcode::Reduce | Opcode::ReduceWindow => i.operands.len() == 2,
            Opcode::Scatter => i.operands.len() == 3,
            _ => false,
        };
        single
            && i.comp("to_apply")
                .and_then(|c| m.computations.get(c))
                .and_then(reducer_type)
                .is_some()
    });
    let s = mu.pick(&sites)?;
    let old = mu.instr(s).comp("to_apply")?;
    let ty = reducer_type(&mu.module.computations[old])?;
    let needs_identity = mu.instr(s).opcode != Opcode::Scatter;
    let fits = |c: &Computation| {
        reducer_type(c) == Some(ty)
            && calls_nothing(c)
            && (!needs_identity || reducer_op(c).and_then(|op| identity(op, ty)).is_some())
    };
    // The module's own reducers defined before the caller (XLA's parser reads a computation
    // only after those it calls).
    let own: Vec<CompId> = (0..s.0)
        .filter(|&c| c != old && c != mu.module.entry && fits(&mu.module.computations[c]))
        .collect();
    let donor: Vec<Computation> = mu
        .donor
        .map(|d| {
            d.computations
                .iter()
                .enumerate()
                .filter(|(k, c)| *k != d.entry && fits(c))
                .map(|(_, c)| c.clone())
                .collect()
        })
        .unwrap_or_default();
    let fresh_ops: Vec<Opcode> = [
        Opcode::Add,
        Opcode::Multiply,
        Opcode::Maximum,
        Opcode::Minimum,
        Opcode::And,
        Opcode::Or,
        Opcode::Xor,
    ]
    .into_iter()
    .filter(|&op| identity(op, ty).is_some() && ty.class() != TypeClass::Complex)
    .filter(|&op| {
        !matches!(op, Opcode::And | Opcode::Or | Opcode::Xor)
            || matches!(
                ty.class(),
                TypeClass::Pred | TypeClass::Signed | TypeClass::Unsigned
            )
    })
    .collect();
    let total = own.len() + donor.len() + fresh_ops.len();
    if total == 0 {
        return None;
    }
    let k = mu.below(total);
    let (new, from) = if k < own.len() {
        (own[k], "own")
    } else if k < own.len() + donor.len() {
        mu.donor_used = true;
        let c = donor[k - own.len()].clone();
        (add_computation(mu, &c), "donor")
    } else {
        (
            fresh_reducer(mu, fresh_ops[k - own.len() - donor.len()], ty),
            "fresh",
        )
    };
    // Adding a computation at 0 moved every computation id up by one.
    let shift = usize::from(from != "own");
    let (old, at) = (old + shift, (s.0 + shift, s.1));
    let new_name = mu.module.computations[new].name.clone();
    let old_name = mu.module.computations.get(old)?.name.clone();
    mu.instr_mut(at).set_attr("to_apply", Attr::Comp(new));
    let mut what = format!(
        "{} to_apply {old_name} -> {new_name} ({from})",
        describe(&mu.module, at)
    );
    if needs_identity {
        let op = reducer_op(&mu.module.computations[new])?;
        let v = identity(op, ty)?;
        let (c, at2) = mu.scalar_before(at.0, at.1, ty, v, "init")?;
        mu.instr_mut((at.0, at2)).operands[1] = c;
        what.push_str(&format!(", init {}", op.name()));
    }
    Some(what)
}

// ---------------------------------------------------------------------------------------------
// Driving the mutations.

/// Applies one to [`MAX_MUTATIONS`] mutations drawn from `u` to `module`; each must leave the
/// module valid for our verifier and compiler input ([`not_compiler_input`]); one that does not
/// is undone and another kind is drawn.
/// Returns the mutated module and the descriptions of the mutations applied (`kind: what`).
pub fn apply_mutations(
    module: Module,
    u: &mut Unstructured,
    donor: Option<&Module>,
    cfg: &Config,
) -> (Module, Vec<String>, bool) {
    let n = 1 + u.choose_index(MAX_MUTATIONS).unwrap_or(0);
    let mut mu = Mutator::new(module, u, donor, cfg);
    let mut done = Vec::new();
    for _ in 0..n {
        // Up to as many tries as there are kinds: a kind that finds no place, or whose result
        // the verifier refuses, gives way to another.
        for _ in 0..KINDS.len() {
            let (kind, f) = KINDS[mu.below(KINDS.len())];
            let before = mu.module.clone();
            let names = mu.names.clone();
            let donor_used = mu.donor_used;
            match f(&mut mu) {
                Some(what)
                    if hlo::verify::verify_module(&mu.module).is_ok()
                        && largest_array(&mu.module) <= mu.max_elements
                        && not_compiler_input(&mu.module).is_none() =>
                {
                    done.push(format!("{}: {what}", kind.name()));
                    break;
                }
                _ => {
                    mu.module = before;
                    mu.names = names;
                    mu.donor_used = donor_used;
                }
            }
        }
    }
    (mu.module, done, mu.donor_used)
}

/// A mutated program from fuzzer bytes: the seed module, the donor and the mutations are drawn
/// from `u`. `None` when no seed module is embedded (or none parses, which the seed list's
/// test rules out).
pub fn mutate(u: &mut Unstructured, cfg: &Config) -> Option<(Module, MutationOrigin)> {
    let all = seeds();
    if all.is_empty() {
        return None;
    }
    // The source first (so the few jax programs are not drowned by XLA's thousands of tests),
    // then a module of it.
    let mut sources: Vec<&str> = all.iter().map(|s| s.source()).collect();
    sources.dedup();
    let src = sources[u.choose_index(sources.len()).unwrap_or(0)];
    let of_src: Vec<&SeedModule> = all.iter().filter(|s| s.source() == src).collect();
    let seed = of_src[u.choose_index(of_src.len()).unwrap_or(0)];
    let donor_seed = &all[u.choose_index(all.len()).unwrap_or(0)];
    let module = hlo::parse::parse_module(&seed.text).ok()?;
    let donor = hlo::parse::parse_module(&donor_seed.text).ok();
    let (mut module, mutations, donor_used) = apply_mutations(module, u, donor.as_ref(), cfg);
    module.name = "mutated".into();
    Some((
        module,
        MutationOrigin {
            seed_module: seed.id.clone(),
            seed_hash: seed.hash.clone(),
            donor: donor_used.then(|| donor_seed.id.clone()),
            mutations,
        },
    ))
}

/// [`mutate`] from a seed (expanded into bytes as [`crate::generate_from_seed`] does).
pub fn mutate_from_seed(seed: u64, cfg: &Config) -> Option<(Module, MutationOrigin)> {
    let bytes = seed_bytes(seed ^ 0x6d75_7461_7465_2121, 1024);
    let (mut m, o) = mutate(&mut Unstructured::new(&bytes), cfg)?;
    m.name = format!("mut_{seed}");
    Some((m, o))
}

/// Whether a constant is elided (`{...}`): such a seed module cannot be run.
pub fn has_elided_constant(m: &Module) -> bool {
    m.computations.iter().any(|c| {
        c.instructions
            .iter()
            .any(|i| matches!(i.constant, Some(Constant::Elided)))
    })
}

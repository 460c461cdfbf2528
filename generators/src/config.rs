//! The generator's knobs, declared once.
//!
//! [`Config::default`] is the everyday configuration; `impl Arbitrary for Config` is swarm
//! testing: each fuzz input also picks a random subset of op families and element types and
//! random limits, so that rarely-combined features meet more often.

use arbitrary::{Arbitrary, Unstructured};
use hlo::PrimitiveType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Families of operations; each has a weight in [`Config::op_weights`] (0 switches it off).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpFamily {
    /// abs, negate, sign, floor, ceil, round-*, exp, log, sqrt, tanh, sine, erf, ..., copy.
    Unary,
    /// add, subtract, multiply, divide, maximum, minimum, power, remainder, atan2.
    Binary,
    /// and, or, xor, not, shifts, count-leading-zeros, popcnt.
    Bitwise,
    /// compare (every direction, TOTALORDER), select, clamp, is-finite.
    CompareSelect,
    /// convert, bitcast-convert (same and different widths), reduce-precision.
    Convert,
    /// complex, real, imag.
    Complex,
    /// broadcast, reshape, transpose, reverse, iota, constant.
    Shape,
    /// slice, dynamic-slice, dynamic-update-slice, concatenate, pad.
    Slicing,
    /// reduce (also variadic), reduce-window, select-and-scatter.
    Reduction,
    /// dot and convolution with general dimension numbers.
    Contraction,
    /// gather and scatter in every dimension-number form.
    GatherScatter,
    /// multi-operand sort with comparators.
    Sort,
    /// while, conditional, call, map (needs `control_flow`).
    ControlFlow,
    /// tuple, get-tuple-element, opt-barrier.
    Tuple,
}

impl OpFamily {
    pub const ALL: [OpFamily; 14] = [
        OpFamily::Unary,
        OpFamily::Binary,
        OpFamily::Bitwise,
        OpFamily::CompareSelect,
        OpFamily::Convert,
        OpFamily::Complex,
        OpFamily::Shape,
        OpFamily::Slicing,
        OpFamily::Reduction,
        OpFamily::Contraction,
        OpFamily::GatherScatter,
        OpFamily::Sort,
        OpFamily::ControlFlow,
        OpFamily::Tuple,
    ];

    fn default_weight(self) -> u32 {
        match self {
            OpFamily::Unary => 14,
            OpFamily::Binary => 14,
            OpFamily::Bitwise => 6,
            OpFamily::CompareSelect => 8,
            OpFamily::Convert => 7,
            OpFamily::Complex => 3,
            OpFamily::Shape => 12,
            OpFamily::Slicing => 10,
            OpFamily::Reduction => 7,
            OpFamily::Contraction => 5,
            OpFamily::GatherScatter => 5,
            OpFamily::Sort => 3,
            OpFamily::ControlFlow => 4,
            OpFamily::Tuple => 2,
        }
    }
}

/// Element types XLA:CPU (jaxlib 0.10.2) compiles in every op family the generator uses them
/// with (checked by generating modules whose data has only that type; see README.md). `s1`/`u1`
/// are not generated; `s2`/`u2` are never `dot` operands ([`CPU_NO_DOT_TYPES`]).
pub const CPU_TYPES: [PrimitiveType; 28] = [
    PrimitiveType::Pred,
    PrimitiveType::S2,
    PrimitiveType::S4,
    PrimitiveType::S8,
    PrimitiveType::S16,
    PrimitiveType::S32,
    PrimitiveType::S64,
    PrimitiveType::U2,
    PrimitiveType::U4,
    PrimitiveType::U8,
    PrimitiveType::U16,
    PrimitiveType::U32,
    PrimitiveType::U64,
    PrimitiveType::F16,
    PrimitiveType::Bf16,
    PrimitiveType::F32,
    PrimitiveType::F64,
    PrimitiveType::F8E5M2,
    PrimitiveType::F8E4M3,
    PrimitiveType::F8E4M3FN,
    PrimitiveType::F8E4M3B11FNUZ,
    PrimitiveType::F8E3M4,
    PrimitiveType::F8E5M2FNUZ,
    PrimitiveType::F8E4M3FNUZ,
    PrimitiveType::F8E8M0FNU,
    PrimitiveType::F4E2M1FN,
    PrimitiveType::C64,
    PrimitiveType::C128,
];

/// Types XLA:CPU rejects as `dot` operands (and, mixed with any other type, as operands of one
/// multi-operand `sort`: "INTERNAL: Inputs must have the same shape") ("UNIMPLEMENTED: unsupported operand type S2 in op dot").
pub const CPU_NO_DOT_TYPES: [PrimitiveType; 2] = [PrimitiveType::S2, PrimitiveType::U2];

/// The default data types: every ordinary type plus the most used narrow ones. Swarm
/// configurations draw from all of [`CPU_TYPES`].
pub const DEFAULT_TYPES: [PrimitiveType; 19] = [
    PrimitiveType::Pred,
    PrimitiveType::S8,
    PrimitiveType::S16,
    PrimitiveType::S32,
    PrimitiveType::S64,
    PrimitiveType::U8,
    PrimitiveType::U16,
    PrimitiveType::U32,
    PrimitiveType::U64,
    PrimitiveType::F16,
    PrimitiveType::Bf16,
    PrimitiveType::F32,
    PrimitiveType::F64,
    PrimitiveType::C64,
    PrimitiveType::C128,
    PrimitiveType::S4,
    PrimitiveType::U4,
    PrimitiveType::F8E5M2,
    PrimitiveType::F8E4M3FN,
];

/// Every knob of the generator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Instructions the generator tries to add to the entry computation (at least `min_instructions`).
    pub max_instructions: usize,
    pub min_instructions: usize,
    /// Instructions in a called computation's body (while bodies, branches, called functions).
    pub max_body_instructions: usize,
    /// Largest rank of a generated array.
    pub max_rank: usize,
    /// Largest extent of an ordinary dimension.
    pub max_extent: i64,
    /// Percent chance that a fresh dimension is 0.
    pub zero_extent_percent: u32,
    /// Percent chance that a fresh dimension is 1.
    pub one_extent_percent: u32,
    /// Percent chance (per fresh shape) of one large dimension, up to `large_extent`.
    pub large_dim_percent: u32,
    /// Largest extent of a large dimension (XLA:CPU changes code paths above size thresholds).
    pub large_extent: i64,
    /// Percent chance that a `reduce` or `dot` builds fresh operands with one large dimension
    /// (a long row or column of `large_extent/4..=large_extent` elements; for `dot` a long
    /// contraction or many rows, also matrix-vector), within `max_elements` and `max_work`:
    /// the sizes where XLA:CPU changes code paths. 0 (the default) draws nothing, so default
    /// modules are as before; swarm configurations pick 0-25.
    pub large_op_percent: u32,
    /// Percent chance that the entry computation starts with a realistic pattern (batched
    /// dots, reductions over axes of rank 3-8 arrays, broadcast-multiply-reduce, long
    /// elementwise chains, convolutions with realistic feature counts, long sorts; see
    /// `realistic.rs`) at the sizes real programs use, within `max_elements` and `max_work`.
    /// 0 (the default) draws nothing, so default modules are as before.
    pub realistic_percent: u32,
    /// Bound on the number of elements of every array in a module.
    pub max_elements: u64,
    /// Bound on the multiply-adds of one dot/convolution/reduce-window (keeps runs short).
    pub max_work: u64,
    /// Element types data may have. Index operands and loop counters may use s32/s64/u32
    /// regardless. Types outside `arithmetic_types` only appear in data movement and convert.
    pub element_types: Vec<PrimitiveType>,
    /// Element types the generator does arithmetic on (elementwise math, reductions, dot, sort
    /// keys, ...); the others among `element_types` only move, convert and bitcast. Defaults to
    /// [`CPU_TYPES`].
    pub arithmetic_types: Vec<PrimitiveType>,
    /// Weight of each op family; a missing family has weight 0.
    pub op_weights: BTreeMap<OpFamily, u32>,
    /// while, conditional, call and map.
    pub control_flow: bool,
    /// Maximal nesting of called computations with bodies (while in while in conditional ...).
    pub max_nesting: usize,
    /// Most iterations of a generated while loop (the loop counter is compared to a constant).
    pub max_trip_count: i64,
    /// Most entry parameters.
    pub max_params: usize,
    /// Most outputs in the ROOT tuple.
    pub max_outputs: usize,
    /// Percent of input elements that are boundary values (NaN, +-inf, -0, denormals, min, max, ...).
    pub special_value_percent: u32,
    /// Percent of index inputs (dynamic-slice starts, gather/scatter indices) out of range.
    pub out_of_range_index_percent: u32,
    /// Percent of float constants in the module that are boundary values.
    pub special_constant_percent: u32,
    /// Steer clear of constructs that hit known XLA bugs (so campaigns find new ones): integer
    /// division by a foldable zero (SIGFPE while compiling), chains of width-changing
    /// bitcast-converts (folded into one of the wrong shape, "Expected instruction to have
    /// shape equal to u8[8], actual shape is u8[2,4]"), complex exponential-minus-one in map
    /// bodies (abort in constant folding), empty slices of a concatenate with an empty operand
    /// (`std::length_error` while compiling). See README.md and
    /// `corpora/regressions/xla_bug_*.hlo`.
    pub avoid_known_xla_bugs: bool,
    /// Percent of programs made by mutating a real module (`mutate.rs`: XLA's test modules, jax
    /// programs, regression modules) instead of synthesizing one; decided per program seed by
    /// [`crate::generate_program`]. A stored configuration without it reads as 0 (synthesis),
    /// so a finding recorded before it existed regenerates as it was made.
    #[serde(default)]
    pub mutation_percent: u32,

    // ----- Structural HLO (issue #27 item 2). Each knob is a percent chance; 0 reads no byte,
    // so `Config::default()` modules stay as they were; swarm configurations
    // (`swarm_within`, `Arbitrary`) draw them, so default (swarm) campaigns exercise them. -----
    /// Percent chance per module of an `input_output_alias` on the module header: an entry
    /// parameter aliased (`may-alias` or `must-alias`) to an output of the same shape, half the
    /// time through the in-place pattern (a `dynamic-update-slice` whose operand is the aliased
    /// parameter and whose result is the aliased output).
    pub alias_percent: u32,
    /// Percent chance that a generated `call` is a composite call (`is_composite=true` with the
    /// `composite.name`/`composite.attributes`/`composite.version` frontend attributes jax's
    /// `lax.composite` writes). (`async-start`/`async-done` wrappers of a call are not generated:
    /// XLA CPU refuses them on both routes; see generators/README.md.)
    pub composite_call_percent: u32,
    /// Percent chance per module of non-default layouts (a permuted `minor_to_major`) on some
    /// entry parameters, outputs and intermediates of rank >= 2, written in the
    /// `entry_computation_layout` header too.
    pub layout_percent: u32,
    /// Percent chance per entry instruction of a one-device sharding annotation
    /// (`sharding={replicated}` or `sharding={maximal device=0}`; never a mesh-referring form,
    /// registry entry xla-sdy-sharding-unknown-mesh-abort).
    pub sharding_percent: u32,
    /// Percent chance per module (with `sharding_percent` above 0) that it is an SPMD program
    /// partitioned over 2 or 4 devices (`num_partitions` in its header, which the engine runs
    /// on that many host devices): its sharding annotations are then also tiled (along one
    /// dimension, over two, partially replicated, with a transposed device order) and maximal
    /// on any of its devices. 0 (the default) draws nothing, so other modules stay as they were.
    pub spmd_percent: u32,
    /// Percent chance per while loop of a data-dependent trip count (the bound, clamped to
    /// `0..=max_trip_count`, comes from data and rides in the loop's tuple state), per
    /// conditional of 4 or 5 branches indexed by an s32 converted from data, and per reducer or
    /// sort comparator of control flow inside it (a `conditional` or `call` computing the same
    /// function).
    pub nested_control_percent: u32,
}

impl Default for Config {
    fn default() -> Self {
        let element_types = DEFAULT_TYPES.to_vec();
        Config {
            max_instructions: 24,
            min_instructions: 1,
            max_body_instructions: 6,
            max_rank: 4,
            max_extent: 8,
            zero_extent_percent: 3,
            one_extent_percent: 15,
            large_dim_percent: 2,
            large_extent: 40_000,
            large_op_percent: 0,
            realistic_percent: 0,
            max_elements: 1 << 17,
            max_work: 1 << 22,
            element_types,
            arithmetic_types: CPU_TYPES.to_vec(),
            op_weights: OpFamily::ALL
                .iter()
                .map(|f| (*f, f.default_weight()))
                .collect(),
            control_flow: true,
            max_nesting: 2,
            max_trip_count: 5,
            max_params: 6,
            max_outputs: 6,
            special_value_percent: 10,
            out_of_range_index_percent: 10,
            special_constant_percent: 5,
            avoid_known_xla_bugs: true,
            mutation_percent: 15,
            alias_percent: 0,
            composite_call_percent: 0,
            layout_percent: 0,
            sharding_percent: 0,
            nested_control_percent: 0,
            spmd_percent: 0,
        }
    }
}

impl Config {
    /// The weight of a family, 0 when switched off (control flow also needs `control_flow`).
    pub fn weight(&self, f: OpFamily) -> u32 {
        if f == OpFamily::ControlFlow && !self.control_flow {
            return 0;
        }
        self.op_weights.get(&f).copied().unwrap_or(0)
    }

    /// The configured element types, deduplicated and in a fixed order, with token/opaque and
    /// the single-bit integer types removed. Falls back to `[f32]` when nothing usable is left.
    pub fn data_types(&self) -> Vec<PrimitiveType> {
        let mut v: Vec<PrimitiveType> = PrimitiveType::ALL_ARRAY
            .iter()
            .copied()
            .filter(|t| self.element_types.contains(t))
            .filter(|t| !matches!(t, PrimitiveType::S1 | PrimitiveType::U1))
            .collect();
        if v.is_empty() {
            v.push(PrimitiveType::F32);
        }
        v
    }
}

impl Config {
    /// A program's own configuration within this one (swarm testing per program): a random
    /// subset of this configuration's op families (each kept with probability 3/4, at least
    /// one) with random weights, a random subset of its element types (each kept with
    /// probability 1/2, at least one), and random instruction counts, rank, extents, nesting,
    /// large-op share and realistic-pattern share, and the structural knobs (aliasing,
    /// composite calls, layouts, shardings, nested control flow: each on in about half the
    /// programs, whatever the base says, as the large-op share). The bounds (`max_elements`,
    /// `max_work`), the arithmetic types and `avoid_known_xla_bugs` stay this configuration's.
    /// Never fails: when `u` runs out, every remaining choice takes its first option.
    pub fn swarm_within(&self, u: &mut Unstructured) -> Config {
        let int = |u: &mut Unstructured, lo: u32, hi: u32| u.int_in_range(lo..=hi).unwrap_or(lo);
        let coin = |u: &mut Unstructured, pct: u32| int(u, 0, 99) < pct;
        let mut op_weights = BTreeMap::new();
        let base: Vec<OpFamily> = OpFamily::ALL
            .iter()
            .copied()
            .filter(|&f| self.weight(f) > 0)
            .collect();
        for &f in &base {
            if coin(u, 75) {
                op_weights.insert(f, int(u, 1, 20));
            }
        }
        if op_weights.is_empty() {
            let f = base.first().copied().unwrap_or(OpFamily::Binary);
            op_weights.insert(f, 10);
        }
        let types = self.data_types();
        let mut element_types: Vec<PrimitiveType> =
            types.iter().copied().filter(|_| coin(u, 50)).collect();
        if element_types.is_empty() {
            let i = int(u, 0, types.len() as u32 - 1) as usize;
            element_types.push(types[i]);
        }
        // Real programs compute in f32 above all: keep it in a third of the drawn sets.
        if types.contains(&PrimitiveType::F32)
            && !element_types.contains(&PrimitiveType::F32)
            && coin(u, 33)
        {
            element_types.push(PrimitiveType::F32);
        }
        let max_instructions = int(u, 2, 40) as usize;
        // About one program in seven starts with a realistic pattern: enough to reach the
        // library paths in most packed modules, few enough that the large ones do not dominate
        // a campaign's time.
        let realistic_percent = match int(u, 0, 19) {
            0..=16 => 0,
            17 => int(u, 30, 60),
            _ => 100,
        };
        Config {
            max_instructions,
            min_instructions: 1,
            max_body_instructions: int(u, 0, 10) as usize,
            max_rank: int(u, 0, 6) as usize,
            max_extent: [2, 4, 8, 8, 16, 32][int(u, 0, 5) as usize],
            zero_extent_percent: int(u, 0, 6),
            one_extent_percent: int(u, 0, 30),
            large_dim_percent: int(u, 0, 8),
            large_extent: int(u, 1000, 70_000) as i64,
            large_op_percent: if coin(u, 50) { 0 } else { int(u, 5, 40) },
            realistic_percent,
            max_elements: self.max_elements,
            max_work: self.max_work,
            element_types,
            arithmetic_types: self.arithmetic_types.clone(),
            op_weights,
            control_flow: self.control_flow && coin(u, 60),
            max_nesting: int(u, 0, self.max_nesting.max(1) as u32 + 1) as usize,
            max_trip_count: int(u, 0, 8) as i64,
            max_params: int(u, 1, 8) as usize,
            max_outputs: int(u, 1, 8) as usize,
            // Programs with realistic patterns get mostly ordinary values, as real programs do:
            // over 10^4 elements and more, every output would otherwise see a NaN or an
            // infinity, and only the (known) NaN handling of the library paths would be tested.
            special_value_percent: if realistic_percent > 0 {
                [0, 0, 0, 1][int(u, 0, 3) as usize]
            } else {
                int(u, 0, 2 * self.special_value_percent.min(50))
            },
            out_of_range_index_percent: int(u, 0, 2 * self.out_of_range_index_percent.min(50)),
            special_constant_percent: if realistic_percent > 0 {
                int(u, 0, self.special_constant_percent.min(50))
            } else {
                int(u, 0, 2 * self.special_constant_percent.min(50))
            },
            avoid_known_xla_bugs: self.avoid_known_xla_bugs,
            // Drawn last, so that the other fields of a seed's draw stay as they were.
            mutation_percent: if self.mutation_percent == 0 {
                0
            } else {
                int(u, 0, (2 * self.mutation_percent).min(100))
            },
            // Drawn last, so that the other fields of a seed's program configuration stay as
            // they were before these knobs existed. Each is on in about half the programs.
            alias_percent: if coin(u, 50) { int(u, 20, 100) } else { 0 },
            composite_call_percent: if coin(u, 50) { int(u, 20, 100) } else { 0 },
            layout_percent: if coin(u, 50) { int(u, 20, 100) } else { 0 },
            sharding_percent: if coin(u, 50) { int(u, 5, 30) } else { 0 },
            nested_control_percent: if coin(u, 50) { int(u, 30, 100) } else { 0 },
            // Kept as the base says: the default mix has no SPMD programs yet.
            spmd_percent: self.spmd_percent,
        }
    }
}

impl<'a> Arbitrary<'a> for Config {
    /// Swarm configuration: a random subset of op families (each kept with probability 1/2,
    /// at least one) with random weights, a random subset of element types (at least one),
    /// and random limits around the defaults.
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let d = Config::default();
        let mut op_weights = BTreeMap::new();
        for f in OpFamily::ALL {
            if u.arbitrary::<bool>()? {
                op_weights.insert(f, u.int_in_range(1..=20)?);
            }
        }
        if op_weights.is_empty() {
            op_weights.insert(OpFamily::Binary, 10);
        }
        let mut element_types: Vec<PrimitiveType> = CPU_TYPES
            .iter()
            .copied()
            .filter(|_| u.arbitrary::<bool>().unwrap_or(false))
            .collect();
        if element_types.is_empty() {
            element_types.push(*u.choose(&CPU_TYPES)?);
        }
        Ok(Config {
            max_instructions: u.int_in_range(1..=48)?,
            min_instructions: 1,
            max_body_instructions: u.int_in_range(0..=10)?,
            max_rank: u.int_in_range(0..=5)?,
            max_extent: u.int_in_range(1..=16)?,
            zero_extent_percent: u.int_in_range(0..=20)?,
            one_extent_percent: u.int_in_range(0..=50)?,
            large_dim_percent: u.int_in_range(0..=10)?,
            large_extent: u.int_in_range(1000..=70_000)?,
            max_elements: d.max_elements,
            max_work: d.max_work,
            element_types,
            arithmetic_types: d.arithmetic_types,
            op_weights,
            control_flow: u.arbitrary()?,
            max_nesting: u.int_in_range(0..=3)?,
            max_trip_count: u.int_in_range(0..=8)?,
            max_params: u.int_in_range(1..=10)?,
            max_outputs: u.int_in_range(1..=10)?,
            special_value_percent: u.int_in_range(0..=50)?,
            out_of_range_index_percent: u.int_in_range(0..=50)?,
            special_constant_percent: u.int_in_range(0..=30)?,
            avoid_known_xla_bugs: true,
            // Drawn last, so that the other fields of a seed's swarm configuration stay as
            // they were before this knob existed.
            large_op_percent: u.int_in_range(0..=25)?,
            realistic_percent: 0,
            mutation_percent: u.int_in_range(0..=30).unwrap_or(0),
            alias_percent: u.int_in_range(0..=100)?,
            composite_call_percent: u.int_in_range(0..=100)?,
            layout_percent: u.int_in_range(0..=100)?,
            sharding_percent: u.int_in_range(0..=30)?,
            nested_control_percent: u.int_in_range(0..=100)?,
            spmd_percent: 0,
        })
    }
}

//! HLO opcodes: every opcode XLA's `hlo_opcode.h` lists, described once in [`TABLE`].
//!
//! The table is the one place that says what an opcode is: its text name, its operand count,
//! its [`Category`], which element types it accepts when it is elementwise ([`ElementTypes`],
//! as XLA's shape inference decides them), and facts other crates need (whether XLA
//! approximates it, whether it has an effect beyond its result). [`Opcode`] itself, [`Opcode::ALL`],
//! [`Opcode::name`], [`Opcode::from_name`], [`Opcode::arity`] and the queries below are all
//! derived from it. Adding an opcode means adding its row here and its semantics (the
//! verifier's shape rule, which the compiler asks for, and the oracle's step).

use crate::types::PrimitiveType;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of operation an opcode is (one per opcode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Category {
    /// Values from no operands: parameter, constant, iota, replica-id, partition-id.
    Source,
    /// One operand, each result element computed from the same element of it (abs,
    /// exponential, is-finite, real, ...).
    ElementwiseUnary,
    /// Two operands of one shape, elementwise (add, compare, complex, shifts, ...).
    ElementwiseBinary,
    /// Three operands, elementwise (select, clamp).
    ElementwiseTernary,
    /// Element type changes: convert, bitcast-convert, reduce-precision, stochastic-convert.
    Conversion,
    /// Elements moved, copied or reinterpreted, never computed on: broadcast, reshape,
    /// transpose, slice, concatenate, pad, gather, copy, bitcast, ...
    DataMovement,
    /// tuple, get-tuple-element, opt-barrier.
    Tuple,
    /// Elements combined by a called computation: reduce, reduce-window, scatter,
    /// select-and-scatter.
    Reduction,
    /// dot, convolution, ragged-dot, scaled-dot.
    Contraction,
    /// sort, topk.
    Sort,
    /// Library-style kernels: fft, cholesky, triangular-solve, batch-norm-*.
    Numerical,
    /// Calls and loops: call, conditional, fusion, map, scan, while.
    ControlFlow,
    /// async-start/-update/-done, copy-start/-done.
    Async,
    /// Cross-device communication: all-reduce, all-gather, all-to-all, collective-permute,
    /// reduce-scatter, ... and their -start/-done halves.
    Collective,
    /// Tokens and I/O: after-all, add-dependency, infeed, outfeed, send, recv (and -done).
    Io,
    /// rng, rng-bit-generator, rng-get-and-update-state.
    Random,
    /// Dynamic dimension sizes: get-dimension-size, set-dimension-size, dynamic-reshape.
    DynamicShape,
    /// custom-call: whatever its target does.
    Custom,
    /// domain (a sharding annotation) and shuffle.
    Other,
}

/// The element types an elementwise or conversion opcode accepts for its (first) operand, as
/// XLA's `ShapeInference` checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementTypes {
    /// Every array type.
    Any,
    /// Floating point types.
    Float,
    /// Floating point and complex types.
    FloatOrComplex,
    /// Signed integers, floating point and complex types (XLA's "signed" includes floats).
    SignedOrComplex,
    /// Integers, floating point and complex types: every array type but pred.
    Numeric,
    /// Signed and unsigned integers.
    Integer,
    /// pred and integers.
    PredOrInteger,
}

impl ElementTypes {
    pub fn accepts(self, t: PrimitiveType) -> bool {
        use ElementTypes::*;
        t.is_array_type()
            && match self {
                Any => true,
                Float => t.is_float(),
                FloatOrComplex => t.is_float() || t.is_complex(),
                SignedOrComplex => t.is_signed_integer() || t.is_float() || t.is_complex(),
                Numeric => t != PrimitiveType::Pred,
                Integer => t.is_integer(),
                PredOrInteger => t == PrimitiveType::Pred || t.is_integer(),
            }
    }

    /// The types in words, for messages ("floats or complex").
    pub fn describe(self) -> &'static str {
        use ElementTypes::*;
        match self {
            Any => "any array type",
            Float => "floats",
            FloatOrComplex => "floats or complex",
            SignedOrComplex => "signed integers, floats or complex",
            Numeric => "integers, floats or complex",
            Integer => "integers",
            PredOrInteger => "pred or integers",
        }
    }
}

/// One row of [`TABLE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    pub opcode: Opcode,
    /// The name HLO text uses (`add`, `get-tuple-element`, `opt-barrier`, ...).
    pub name: &'static str,
    /// Number of operands, or `None` for variadic opcodes.
    pub arity: Option<usize>,
    pub category: Category,
    /// For elementwise and conversion opcodes, the element types of the (first) operand XLA
    /// accepts; `None` where the verifier's shape rule decides alone.
    pub element_types: Option<ElementTypes>,
    /// XLA computes it with approximations of its own: results a few ulps from the correctly
    /// rounded one (`exponential`, `log`, `tanh`, `power`, `fft`, ...).
    pub approximated: bool,
    /// It has an effect beyond its result (I/O, token ordering), so it stays even when nothing
    /// uses its value. A `custom-call` has one when `custom_call_has_side_effect=true` (see
    /// [`crate::Instruction::has_side_effect`]).
    pub side_effect: bool,
}

mod flag {
    pub const APPROXIMATED: u8 = 1;
    pub const SIDE_EFFECT: u8 = 2;
}

macro_rules! arity {
    (var) => {
        None
    };
    ($n:literal) => {
        Some($n)
    };
}

macro_rules! element_types {
    (-) => {
        None
    };
    ($t:ident) => {
        Some(ElementTypes::$t)
    };
}

macro_rules! opcode_table {
    ($( $variant:ident $name:literal $arity:tt $cat:ident $types:tt [$($flag:ident),*]; )*) => {
        /// An HLO opcode. Variant names follow XLA's `k<Name>` enum without the `k`; the
        /// declaration order (XLA's sorted order) is the `Ord` order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Opcode {
            $($variant,)*
        }

        impl Opcode {
            /// How many opcodes there are.
            pub const COUNT: usize = <[&str]>::len(&[$(stringify!($variant)),*]);

            /// Every opcode, in XLA's (sorted) order.
            pub const ALL: [Opcode; Opcode::COUNT] = [$(Opcode::$variant,)*];

            /// The opcode whose text name is `s`.
            pub fn from_name(s: &str) -> Option<Opcode> {
                match s {
                    $($name => Some(Opcode::$variant),)*
                    _ => None,
                }
            }
        }

        /// Every opcode's facts, in [`Opcode::ALL`] order (`TABLE[op as usize].opcode == op`).
        pub const TABLE: [OpInfo; Opcode::COUNT] = [$(
            OpInfo {
                opcode: Opcode::$variant,
                name: $name,
                arity: arity!($arity),
                category: Category::$cat,
                element_types: element_types!($types),
                approximated: (0 $(| flag::$flag)*) & flag::APPROXIMATED != 0,
                side_effect: (0 $(| flag::$flag)*) & flag::SIDE_EFFECT != 0,
            },
        )*];
    };
}

// Columns: variant, text name, operand count (`var`: variadic), category, element types of an
// elementwise or conversion operand (`-`: not in the table), flags (APPROXIMATED, SIDE_EFFECT).
opcode_table! {
    Abs                     "abs"                       1    ElementwiseUnary    SignedOrComplex  [];
    Acos                    "acos"                      1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Acosh                   "acosh"                     1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Add                     "add"                       2    ElementwiseBinary   Any              [];
    AddDependency           "add-dependency"            2    Io                  -                [SIDE_EFFECT];
    AfterAll                "after-all"                 var  Io                  -                [SIDE_EFFECT];
    AllGather               "all-gather"                var  Collective          -                [];
    AllGatherDone           "all-gather-done"           1    Collective          -                [];
    AllGatherStart          "all-gather-start"          var  Collective          -                [];
    AllReduce               "all-reduce"                var  Collective          -                [];
    AllReduceDone           "all-reduce-done"           1    Collective          -                [];
    AllReduceStart          "all-reduce-start"          var  Collective          -                [];
    AllToAll                "all-to-all"                var  Collective          -                [];
    And                     "and"                       2    ElementwiseBinary   PredOrInteger    [];
    Asin                    "asin"                      1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Asinh                   "asinh"                     1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    AsyncDone               "async-done"                1    Async               -                [];
    AsyncStart              "async-start"               var  Async               -                [];
    AsyncUpdate             "async-update"              var  Async               -                [];
    Atan                    "atan"                      1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Atan2                   "atan2"                     2    ElementwiseBinary   Numeric          [APPROXIMATED];
    Atanh                   "atanh"                     1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    BatchNormGrad           "batch-norm-grad"           5    Numerical           -                [];
    BatchNormInference      "batch-norm-inference"      5    Numerical           -                [];
    BatchNormTraining       "batch-norm-training"       3    Numerical           -                [];
    Bitcast                 "bitcast"                   1    DataMovement        -                [];
    BitcastConvert          "bitcast-convert"           1    Conversion          Any              [];
    Broadcast               "broadcast"                 1    DataMovement        -                [];
    Call                    "call"                      var  ControlFlow         -                [];
    Cbrt                    "cbrt"                      1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Ceil                    "ceil"                      1    ElementwiseUnary    Float            [];
    Cholesky                "cholesky"                  1    Numerical           -                [];
    Clamp                   "clamp"                     3    ElementwiseTernary  Any              [];
    Clz                     "count-leading-zeros"       1    ElementwiseUnary    Integer          [];
    CollectiveBroadcast     "collective-broadcast"      var  Collective          -                [];
    CollectivePermute       "collective-permute"        var  Collective          -                [];
    CollectivePermuteDone   "collective-permute-done"   1    Collective          -                [];
    CollectivePermuteStart  "collective-permute-start"  var  Collective          -                [];
    CollectiveReduce        "collective-reduce"         var  Collective          -                [];
    Compare                 "compare"                   2    ElementwiseBinary   Any              [];
    Complex                 "complex"                   2    ElementwiseBinary   Float            [];
    Concatenate             "concatenate"               var  DataMovement        -                [];
    Conditional             "conditional"               var  ControlFlow         -                [];
    Constant                "constant"                  0    Source              -                [];
    Convert                 "convert"                   1    Conversion          Any              [];
    Convolution             "convolution"               var  Contraction         -                [];
    Copy                    "copy"                      1    DataMovement        -                [];
    CopyDone                "copy-done"                 1    Async               -                [];
    CopyStart               "copy-start"                1    Async               -                [];
    Cos                     "cosine"                    1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Cosh                    "cosh"                      1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    CustomCall              "custom-call"               var  Custom              -                [];
    Divide                  "divide"                    2    ElementwiseBinary   Numeric          [];
    Domain                  "domain"                    1    Other               -                [];
    Dot                     "dot"                       2    Contraction         -                [];
    DynamicReshape          "dynamic-reshape"           var  DynamicShape        -                [];
    DynamicSlice            "dynamic-slice"             var  DataMovement        -                [];
    DynamicUpdateSlice      "dynamic-update-slice"      var  DataMovement        -                [];
    Erf                     "erf"                       1    ElementwiseUnary    Float            [APPROXIMATED];
    Exp                     "exponential"               1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Expm1                   "exponential-minus-one"     1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Fft                     "fft"                       1    Numerical           -                [APPROXIMATED];
    Floor                   "floor"                     1    ElementwiseUnary    Float            [];
    Fusion                  "fusion"                    var  ControlFlow         -                [];
    Gather                  "gather"                    2    DataMovement        -                [];
    GetDimensionSize        "get-dimension-size"        1    DynamicShape        -                [];
    GetTupleElement         "get-tuple-element"         1    Tuple               -                [];
    Imag                    "imag"                      1    ElementwiseUnary    FloatOrComplex   [];
    Infeed                  "infeed"                    1    Io                  -                [SIDE_EFFECT];
    Iota                    "iota"                      0    Source              -                [];
    IsFinite                "is-finite"                 1    ElementwiseUnary    Float            [];
    Log                     "log"                       1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Log1p                   "log-plus-one"              1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Logistic                "logistic"                  1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Map                     "map"                       var  ControlFlow         -                [];
    Maximum                 "maximum"                   2    ElementwiseBinary   Any              [];
    Minimum                 "minimum"                   2    ElementwiseBinary   Any              [];
    Mulhi                   "mulhi"                     2    ElementwiseBinary   Integer          [];
    Multiply                "multiply"                  2    ElementwiseBinary   Any              [];
    Negate                  "negate"                    1    ElementwiseUnary    Numeric          [];
    Not                     "not"                       1    ElementwiseUnary    PredOrInteger    [];
    OptimizationBarrier     "opt-barrier"               1    Tuple               -                [];
    Or                      "or"                        2    ElementwiseBinary   PredOrInteger    [];
    Outfeed                 "outfeed"                   2    Io                  -                [SIDE_EFFECT];
    Pad                     "pad"                       2    DataMovement        -                [];
    Parameter               "parameter"                 0    Source              -                [];
    PartitionId             "partition-id"              0    Source              -                [];
    PopulationCount         "popcnt"                    1    ElementwiseUnary    Integer          [];
    Power                   "power"                     2    ElementwiseBinary   Numeric          [APPROXIMATED];
    RaggedAllToAll          "ragged-all-to-all"         6    Collective          -                [];
    RaggedDot               "ragged-dot"                3    Contraction         -                [];
    Real                    "real"                      1    ElementwiseUnary    FloatOrComplex   [];
    Recv                    "recv"                      1    Io                  -                [SIDE_EFFECT];
    RecvDone                "recv-done"                 1    Io                  -                [SIDE_EFFECT];
    Reduce                  "reduce"                    var  Reduction           -                [];
    ReducePrecision         "reduce-precision"          1    Conversion          Float            [];
    ReduceScatter           "reduce-scatter"            var  Collective          -                [];
    ReduceWindow            "reduce-window"             var  Reduction           -                [];
    Remainder               "remainder"                 2    ElementwiseBinary   Numeric          [];
    ReplicaId               "replica-id"                0    Source              -                [];
    Reshape                 "reshape"                   1    DataMovement        -                [];
    Reverse                 "reverse"                   1    DataMovement        -                [];
    Rng                     "rng"                       var  Random              -                [];
    RngBitGenerator         "rng-bit-generator"         1    Random              -                [];
    RngGetAndUpdateState    "rng-get-and-update-state"  0    Random              -                [];
    RoundNearestAfz         "round-nearest-afz"         1    ElementwiseUnary    Float            [];
    RoundNearestEven        "round-nearest-even"        1    ElementwiseUnary    Float            [];
    Rsqrt                   "rsqrt"                     1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    ScaledDot               "scaled-dot"                4    Contraction         -                [];
    Scan                    "scan"                      var  ControlFlow         -                [];
    Scatter                 "scatter"                   var  Reduction           -                [];
    Select                  "select"                    3    ElementwiseTernary  Any              [];
    SelectAndScatter        "select-and-scatter"        3    Reduction           -                [];
    Send                    "send"                      2    Io                  -                [SIDE_EFFECT];
    SendDone                "send-done"                 1    Io                  -                [SIDE_EFFECT];
    SetDimensionSize        "set-dimension-size"        2    DynamicShape        -                [];
    ShiftLeft               "shift-left"                2    ElementwiseBinary   Integer          [];
    ShiftRightArithmetic    "shift-right-arithmetic"    2    ElementwiseBinary   Integer          [];
    ShiftRightLogical       "shift-right-logical"       2    ElementwiseBinary   Integer          [];
    Shuffle                 "shuffle"                   1    Other               -                [];
    Sign                    "sign"                      1    ElementwiseUnary    SignedOrComplex  [];
    Sin                     "sine"                      1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Sinh                    "sinh"                      1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Slice                   "slice"                     1    DataMovement        -                [];
    Sort                    "sort"                      var  Sort                -                [];
    Sqrt                    "sqrt"                      1    ElementwiseUnary    FloatOrComplex   [];
    StochasticConvert       "stochastic-convert"        2    Conversion          Float            [];
    Subtract                "subtract"                  2    ElementwiseBinary   Numeric          [];
    Tan                     "tan"                       1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    Tanh                    "tanh"                      1    ElementwiseUnary    FloatOrComplex   [APPROXIMATED];
    TopK                    "topk"                      1    Sort                -                [];
    Transpose               "transpose"                 1    DataMovement        -                [];
    TriangularSolve         "triangular-solve"          2    Numerical           -                [];
    Tuple                   "tuple"                     var  Tuple               -                [];
    While                   "while"                     1    ControlFlow         -                [];
    Xor                     "xor"                       2    ElementwiseBinary   PredOrInteger    [];
}

/// The opcodes XLA approximates ([`Opcode::is_approximated`]), in [`Opcode::ALL`] order.
pub const APPROXIMATED: &[Opcode] =
    &with_flag::<{ count_flag(flag::APPROXIMATED) }>(flag::APPROXIMATED);

const fn has_flag(info: &OpInfo, f: u8) -> bool {
    match f {
        flag::APPROXIMATED => info.approximated,
        flag::SIDE_EFFECT => info.side_effect,
        _ => false,
    }
}

const fn count_flag(f: u8) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < TABLE.len() {
        if has_flag(&TABLE[i], f) {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn with_flag<const N: usize>(f: u8) -> [Opcode; N] {
    let mut out = [Opcode::Abs; N];
    let (mut i, mut k) = (0, 0);
    while i < TABLE.len() {
        if has_flag(&TABLE[i], f) {
            out[k] = TABLE[i].opcode;
            k += 1;
        }
        i += 1;
    }
    out
}

impl Opcode {
    /// This opcode's row of [`TABLE`].
    pub fn info(self) -> &'static OpInfo {
        &TABLE[self as usize]
    }

    /// The name HLO text uses (`add`, `get-tuple-element`, `opt-barrier`, ...).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Number of operands, or `None` for variadic opcodes.
    pub fn arity(self) -> Option<usize> {
        self.info().arity
    }

    pub fn category(self) -> Category {
        self.info().category
    }

    /// Whether XLA computes it with approximations of its own (see [`OpInfo::approximated`]).
    pub fn is_approximated(self) -> bool {
        self.info().approximated
    }

    /// Whether it has an effect beyond its result (see [`OpInfo::side_effect`]).
    pub fn has_side_effect(self) -> bool {
        self.info().side_effect
    }

    /// Unary, binary and ternary elementwise opcodes (conversions and `copy` not included).
    pub fn is_elementwise(self) -> bool {
        matches!(
            self.category(),
            Category::ElementwiseUnary | Category::ElementwiseBinary | Category::ElementwiseTernary
        )
    }

    /// Opcodes that move, copy or reinterpret elements without computing on them.
    pub fn is_data_movement(self) -> bool {
        self.category() == Category::DataMovement
    }

    /// The element types XLA accepts for the (first) operand of an elementwise or conversion
    /// opcode; `None` for other opcodes.
    pub fn element_types(self) -> Option<ElementTypes> {
        self.info().element_types
    }

    /// Whether an operand of element type `t` is acceptable as far as the table knows (always
    /// true for opcodes without [`Opcode::element_types`]).
    pub fn accepts_element_type(self, t: PrimitiveType) -> bool {
        self.element_types().is_none_or(|e| e.accepts(t))
    }

    /// The result element type of elementwise opcode `self` on operands of element type `t`,
    /// as XLA's shape inference gives it (`pred` for compare and is-finite, the component type
    /// for abs/real/imag of complex values, c64/c128 for complex), or why `t` is refused.
    pub fn elementwise_result_type(self, t: PrimitiveType) -> Result<PrimitiveType, String> {
        use PrimitiveType as T;
        if !self.is_elementwise() {
            return Err(format!("{self} is not an elementwise opcode"));
        }
        if let Some(e) = self.element_types().filter(|e| !e.accepts(t)) {
            return Err(format!("{self} needs {}, got {t}", e.describe()));
        }
        Ok(match self {
            Opcode::Compare | Opcode::IsFinite => T::Pred,
            Opcode::Abs | Opcode::Real | Opcode::Imag => t.complex_component().unwrap_or(t),
            Opcode::Complex => match t {
                T::F32 => T::C64,
                T::F64 => T::C128,
                _ => return Err(format!("complex needs f32 or f64 operands, got {t}")),
            },
            _ => t,
        })
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opcode_name_round_trips() {
        for op in Opcode::ALL {
            assert_eq!(Opcode::from_name(op.name()), Some(op));
        }
        assert_eq!(Opcode::from_name("frobnicate"), None);
        assert_eq!(
            Opcode::from_name("opt-barrier"),
            Some(Opcode::OptimizationBarrier)
        );
    }

    #[test]
    fn the_table_is_indexed_by_opcode_and_sorted() {
        assert_eq!(Opcode::COUNT, 136);
        for (i, op) in Opcode::ALL.into_iter().enumerate() {
            assert_eq!(op as usize, i);
            assert_eq!(TABLE[i].opcode, op);
        }
        for w in Opcode::ALL.windows(2) {
            assert!(w[0] < w[1]);
        }
        let mut names: Vec<&str> = TABLE.iter().map(|i| i.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Opcode::COUNT, "text names are unique");
    }

    #[test]
    fn derived_lists_follow_the_table() {
        let approx: Vec<Opcode> = Opcode::ALL
            .into_iter()
            .filter(|o| o.is_approximated())
            .collect();
        assert_eq!(APPROXIMATED, approx.as_slice());
        assert_eq!(APPROXIMATED.len(), 23);
        assert!(APPROXIMATED.contains(&Opcode::Exp) && APPROXIMATED.contains(&Opcode::Fft));
        assert!(!APPROXIMATED.contains(&Opcode::Sqrt));
        for op in Opcode::ALL {
            // Elementwise and conversion opcodes say which types they take; no other does.
            let typed = op.is_elementwise() || op.category() == Category::Conversion;
            assert_eq!(op.element_types().is_some(), typed, "{op}");
            let fixed = match op.category() {
                Category::ElementwiseUnary => Some(1),
                Category::ElementwiseBinary => Some(2),
                Category::ElementwiseTernary => Some(3),
                Category::Source => Some(0),
                _ => op.arity(),
            };
            assert_eq!(op.arity(), fixed, "{op}");
        }
    }

    #[test]
    fn elementwise_result_types_follow_shape_inference() {
        use PrimitiveType as T;
        let r = |op: Opcode, t| op.elementwise_result_type(t);
        assert_eq!(r(Opcode::Abs, T::C64), Ok(T::F32));
        assert_eq!(r(Opcode::Abs, T::S8), Ok(T::S8));
        assert!(r(Opcode::Abs, T::U8)
            .unwrap_err()
            .contains("signed integers"));
        assert_eq!(r(Opcode::IsFinite, T::Bf16), Ok(T::Pred));
        assert!(r(Opcode::IsFinite, T::S32).is_err());
        assert_eq!(r(Opcode::Compare, T::C128), Ok(T::Pred));
        assert_eq!(r(Opcode::Complex, T::F64), Ok(T::C128));
        assert!(r(Opcode::Complex, T::F16).is_err());
        assert_eq!(r(Opcode::Not, T::Pred), Ok(T::Pred));
        assert!(r(Opcode::Not, T::F32)
            .unwrap_err()
            .contains("pred or integers"));
        assert!(r(Opcode::Subtract, T::Pred).is_err());
        assert_eq!(r(Opcode::Add, T::Pred), Ok(T::Pred));
        assert!(r(Opcode::Broadcast, T::F32).is_err());
    }
}

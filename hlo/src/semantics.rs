//! XLA's semantics as data: for every opcode and element-type class, what a result may be, and
//! the text that says so.
//!
//! One table ([`ROWS`]) answers "which results may a legitimate XLA return for this op on this
//! type?" with a [`Rule`] (exact, correctly rounded, approximated within measured ulps, an error
//! bound, implementation-defined), the [`Freedom`]s XLA has beyond the rule (summation order,
//! flush-to-zero, ...), the [`Case`]s in which the texts give up on a defined value (integer
//! overflow, division by zero, ...), and the [`Source`]s of each. The enclosure (the judge's
//! set of legitimate results), the oracle's special values and the generators' rules about
//! undefined behaviour read it; `docs/semantics.md` is generated from it
//! ([`markdown`], checked by a test), and so is the list of freedoms in `docs/judging.md`.
//!
//! Where the texts are silent, the row says so and grants either behaviour (the case's rule is
//! [`Rule::ImplementationDefined`] with a [`Source`] of kind [`SourceKind::Silent`]); XLA's own
//! choice is then named in the note, never made the rule. Special values of real and complex
//! functions follow C99 Annex F/G and IEEE 754 unless an XLA or StableHLO text says otherwise.
//!
//! The vocabulary of [`Freedom`] is the one every report uses: a proof names the freedoms that
//! widened a set by these names, and so do the judge's explanations.

use crate::{Opcode, PrimitiveType, TypeClass};

/// What kind of text a [`Source`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// XLA's `docs/operation_semantics.md`.
    OperationSemantics,
    /// StableHLO's `docs/spec.md`.
    StableHloSpec,
    /// A line or function of XLA's sources.
    XlaSource,
    /// C99 (C11) Annex F (real functions) or Annex G (complex functions).
    CAnnex,
    /// IEEE 754-2019.
    Ieee754,
    /// A public tracker thread where XLA's maintainers state the behaviour.
    Tracker,
    /// A measurement on XLA, with the command that makes it.
    Measured,
    /// The texts say nothing: either behaviour is legitimate.
    Silent,
}

impl SourceKind {
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::OperationSemantics => "XLA operation semantics",
            SourceKind::StableHloSpec => "StableHLO spec",
            SourceKind::XlaSource => "XLA source",
            SourceKind::CAnnex => "C99 Annex F/G",
            SourceKind::Ieee754 => "IEEE 754-2019",
            SourceKind::Tracker => "tracker",
            SourceKind::Measured => "measured",
            SourceKind::Silent => "silent",
        }
    }
}

/// One citation: the kind of text and where in it (section, file:line, issue, command).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Source {
    pub kind: SourceKind,
    pub cite: &'static str,
}

const fn src(kind: SourceKind, cite: &'static str) -> Source {
    Source { kind, cite }
}

use SourceKind as K;

/// The sources the table cites more than once.
pub mod sources {
    use super::*;
    pub const IEEE_BASIC: Source = src(
        K::Ieee754,
        "§5.1, §5.4.1: addition, subtraction, multiplication, division, squareRoot and \
         fusedMultiplyAdd are computed exactly and rounded once",
    );
    pub const IEEE_SIGN_BIT: Source = src(
        K::Ieee754,
        "§5.5.1: copy, negate, abs and copySign change at most the sign bit, NaNs included",
    );
    pub const IEEE_NAN_SIGN: Source = src(
        K::Ieee754,
        "§6.3: the sign of a NaN result is not interpreted (unspecified) except for the sign-bit \
         operations of §5.5.1; §6.2.3: which input's payload propagates is a recommendation",
    );
    pub const SPEC_ERRORS: Source = src(
        K::StableHloSpec,
        "Execution / Errors: integer overflow, out-of-bounds access and similar errors have \
         implementation-defined behaviour unless the op says otherwise",
    );
    pub const SPEC_ACCURACY: Source = src(
        K::StableHloSpec,
        "Execution / Accuracy: no numerical accuracy guarantee is made for the ops (openxla/\
         stablehlo#1156)",
    );
    pub const OPSEM_DIV: Source = src(
        K::OperationSemantics,
        "Element-wise binary arithmetic operations (Div/Rem): integer division overflow (by \
         zero, or INT_MIN by -1) produces an implementation defined value",
    );
    pub const MAINTAINER_SIGNED_OVERFLOW: Source = src(
        K::Tracker,
        "openxla/xla#41784: an XLA maintainer treats signed integer overflow as undefined, as in \
         C, and lets the compiler fold on that assumption",
    );
    pub const SPEC_REDUCE_ORDER: Source = src(
        K::StableHloSpec,
        "reduce: the reduction tree and the number and places of the init values are \
         implementation-defined (a monoid gives portable results)",
    );
    pub const OPSEM_REDUCE: Source = src(
        K::OperationSemantics,
        "Reduce: the computation is assumed associative and the init value an identity; it \
         may be applied any number of times in any place; reduce-window: the evaluation order \
         is arbitrary and may be non-deterministic",
    );
    pub const SPEC_DOT: Source = src(
        K::StableHloSpec,
        "dot_general: a sum of products reduced in an implementation-defined order; \
         precision_config and the algorithm's accumulation type are implementation-defined",
    );
    pub const CPU_FTZ: Source = src(
        K::XlaSource,
        "xla/pjrt/cpu/cpu_client.cc (Execute: tsl::port::ScopedFlushDenormal), \
         xla/tsl/platform/threadpool.cc (every worker thread): XLA CPU runs with flush-to-zero \
         and denormals-are-zero; maintainers call it intended (jax-ml/jax#16200)",
    );
    pub const CPU_NORMALIZATION: Source = src(
        K::XlaSource,
        "xla/service/cpu/cpu_compiler.cc: float normalization computes bf16 in f32 and f8/f4 \
         in f16 (xla_allow_excess_precision, default true, lets the result keep the wider \
         value: xla/debug_options_flags.cc)",
    );
    pub const MEASURED_ULPS: Source = src(
        K::Measured,
        "cargo run --release -p tools --example measure_ulps (dense sweeps of each function \
         on XLA CPU against the correctly rounded value; the table's figure is the largest \
         error seen over the hosts it ran on, plus one ulp of margin)",
    );
    pub const ANNEX_G: Source = src(
        K::CAnnex,
        "Annex G.6: special values of the complex functions (cabs = hypot G.6p6 and F.9.4.3: \
         an infinite part makes +inf even beside a NaN; csqrt G.6.4.2, cexp G.6.3.1, clog \
         G.6.3.2, ctanh G.6.2.6, casinh/catanh G.6.2.2-3; branch cuts follow the sign of a \
         zero part, G.6p3)",
    );
    pub const OPSEM_SCATTER: Source = src(
        K::OperationSemantics,
        "Scatter: the order in which updates are applied is non-deterministic",
    );
    pub const SPEC_SCATTER: Source = src(
        K::StableHloSpec,
        "scatter: updates are applied in an implementation-defined order (schedule); an update \
         element whose target index is out of bounds is skipped",
    );
    pub const SPEC_NO_SUBNORMALS: Source = src(
        K::Silent,
        "neither the StableHLO spec nor XLA's operation semantics says anything about \
         subnormals",
    );
}

use sources::*;

/// A freedom XLA has over a result, beyond the op's [`Rule`]: the one vocabulary a proof, an
/// explanation and the documentation use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Freedom {
    /// Each float result rounded to its type (outward: the set holds both neighbours when the
    /// exact value is uncertain).
    Rounding,
    /// A narrow float (bf16, f16, f8, f4) computed in a wider type and not rounded back between
    /// ops.
    ExcessPrecision,
    /// A multiply and the add after it contracted into one fused multiply-add (one rounding).
    FmaContraction,
    /// The order, blocking and tree shape a reduction, dot or convolution sums in.
    SummationOrder,
    /// A reduction's init value used any number of times (none included).
    InitMultiplicity,
    /// Subnormal operands read as zero and subnormal results flushed to zero.
    FlushToZero,
    /// The ulps an approximated function may be off.
    ApproximationUlps,
    /// A data-dependent op (compare, select, clamp, sort, ...) that may go either way because
    /// its operands are uncertain.
    EitherOutcome,
    /// A partial result that may overflow (then meet an infinity or a zero).
    Overflow,
    /// The sign and payload of a NaN an operation makes.
    NanBits,
    /// A complex infinity whose other part is unspecified.
    ComplexInfinity,
    /// An index (gather, dynamic-slice, scatter) that may take several values.
    UncertainIndex,
    /// A value the texts leave implementation-defined (any value of the type).
    ImplementationDefined,
    /// A complex function's parts accurate only relative to its modulus.
    Normwise,
    /// The order scatter and select-and-scatter combine their updates in, and which of tied
    /// elements a selection keeps.
    CombinationOrder,
    /// An error bound of a whole computation (fft, a matrix decomposition) rather than of one
    /// rounding.
    ErrorBound,
    /// An op whose results the table does not bound yet: any value (named in the coverage
    /// report; never a finding).
    Unmodelled,
}

impl Freedom {
    pub const ALL: [Freedom; 17] = [
        Freedom::Rounding,
        Freedom::ExcessPrecision,
        Freedom::FmaContraction,
        Freedom::SummationOrder,
        Freedom::InitMultiplicity,
        Freedom::FlushToZero,
        Freedom::ApproximationUlps,
        Freedom::EitherOutcome,
        Freedom::Overflow,
        Freedom::NanBits,
        Freedom::ComplexInfinity,
        Freedom::UncertainIndex,
        Freedom::ImplementationDefined,
        Freedom::Normwise,
        Freedom::CombinationOrder,
        Freedom::ErrorBound,
        Freedom::Unmodelled,
    ];

    /// The name every report uses.
    pub fn name(self) -> &'static str {
        match self {
            Freedom::Rounding => "rounding",
            Freedom::ExcessPrecision => "excess precision",
            Freedom::FmaContraction => "FMA contraction",
            Freedom::SummationOrder => "summation order",
            Freedom::InitMultiplicity => "init value multiplicity",
            Freedom::FlushToZero => "flush-to-zero",
            Freedom::ApproximationUlps => "ulps of approximated functions",
            Freedom::EitherOutcome => "either outcome of a data-dependent op",
            Freedom::Overflow => "overflowing partial results",
            Freedom::NanBits => "NaN sign and payload",
            Freedom::ComplexInfinity => "complex infinity",
            Freedom::UncertainIndex => "an uncertain index",
            Freedom::ImplementationDefined => "an implementation-defined result",
            Freedom::Normwise => "complex rounding relative to the modulus",
            Freedom::CombinationOrder => "combination order and ties",
            Freedom::ErrorBound => "error bound of the whole computation",
            Freedom::Unmodelled => "an op not modelled",
        }
    }

    /// The freedom named `name` ([`Freedom::name`]).
    pub fn from_name(name: &str) -> Option<Freedom> {
        Freedom::ALL.into_iter().find(|f| f.name() == name)
    }

    /// What it allows, for the generated documentation.
    pub fn describe(self) -> &'static str {
        match self {
            Freedom::Rounding => {
                "a float result is its exact value rounded to the element type; where the exact \
                 value is itself uncertain, both neighbours are legitimate"
            }
            Freedom::ExcessPrecision => {
                "bf16, f16, f8 and f4 arithmetic may be done in f32 or f16 and kept there across \
                 ops (XLA CPU's float normalization under xla_allow_excess_precision)"
            }
            Freedom::FmaContraction => {
                "a multiply feeding an add may be computed as one fused multiply-add (one \
                 rounding instead of two)"
            }
            Freedom::SummationOrder => {
                "a reduction, dot or convolution may sum in any order and tree shape, with \
                 partial sums in the element type or wider"
            }
            Freedom::InitMultiplicity => {
                "a reduction's init value may be combined any number of times, none included"
            }
            Freedom::FlushToZero => {
                "subnormal operands of float arithmetic may read as zero and subnormal results \
                 may be flushed to zero (XLA CPU's FTZ/DAZ mode; its constant folding does not \
                 flush)"
            }
            Freedom::ApproximationUlps => {
                "an approximated function may be off by the ulps measured for it; results it \
                 returns exactly (a saturated tanh, exp(0)) stay exact"
            }
            Freedom::EitherOutcome => {
                "where a compare's operands are uncertain, every op that depends on it (select, \
                 clamp, sort, a loop or branch predicate) may go either way"
            }
            Freedom::Overflow => {
                "a partial result computed in the element type may overflow to an infinity \
                 where a wider one would not, and then meet another infinity or a zero"
            }
            Freedom::NanBits => {
                "a NaN an operation makes has any sign and payload; copy, negate, abs and data \
                 movement keep their operand's"
            }
            Freedom::ComplexInfinity => {
                "a complex value with an infinite part is an infinity whatever its other part"
            }
            Freedom::UncertainIndex => {
                "a gather, dynamic-slice or scatter index computed from uncertain values may \
                 select any of the places it may take"
            }
            Freedom::ImplementationDefined => {
                "the texts leave the value implementation-defined (or say nothing): any value of \
                 the type"
            }
            Freedom::Normwise => {
                "a complex function's real and imaginary parts are accurate relative to the \
                 result's modulus, not each on its own"
            }
            Freedom::CombinationOrder => {
                "scatter combines colliding updates in any order; select-and-scatter may keep \
                 any of tied elements"
            }
            Freedom::ErrorBound => {
                "fft and the matrix decompositions are bounded as a whole by their normwise \
                 error analyses, not element by element"
            }
            Freedom::Unmodelled => {
                "no bound is known: any value of the type (never a finding; named in the \
                 coverage report)"
            }
        }
    }

    /// The texts that grant it.
    pub fn sources(self) -> &'static [Source] {
        match self {
            Freedom::Rounding => &[IEEE_BASIC],
            Freedom::ExcessPrecision => &[CPU_NORMALIZATION],
            Freedom::FmaContraction => {
                const S: &[Source] = &[
                    src(
                        K::XlaSource,
                        "xla/service/cpu/cpu_aot_loader.cc sets llvm AllowFPOpFusion::Fast; the \
                     Eigen and library kernels of dots and convolutions use FMA instructions",
                    ),
                    src(
                        K::Ieee754,
                        "§10.4: a language may allow contraction of a*b+c into fusedMultiplyAdd",
                    ),
                ];
                S
            }
            Freedom::SummationOrder => &[SPEC_REDUCE_ORDER, OPSEM_REDUCE, SPEC_DOT],
            Freedom::InitMultiplicity => &[SPEC_REDUCE_ORDER, OPSEM_REDUCE],
            Freedom::FlushToZero => &[CPU_FTZ, SPEC_NO_SUBNORMALS],
            Freedom::ApproximationUlps => &[SPEC_ACCURACY, MEASURED_ULPS],
            Freedom::EitherOutcome => {
                const S: &[Source] = &[src(
                    K::Ieee754,
                    "a consequence of the other freedoms: a compare of uncertain operands may \
                 have either result",
                )];
                S
            }
            Freedom::Overflow => &[SPEC_REDUCE_ORDER, SPEC_DOT],
            Freedom::NanBits => &[IEEE_NAN_SIGN, IEEE_SIGN_BIT],
            Freedom::ComplexInfinity => {
                const S: &[Source] = &[src(
                    K::CAnnex,
                    "G.3: a complex value with at least one infinite part is an infinity, even if \
                 its other part is a NaN",
                )];
                S
            }
            Freedom::UncertainIndex => {
                const S: &[Source] = &[src(
                    K::Ieee754,
                    "a consequence of the other freedoms: an index computed from uncertain values",
                )];
                S
            }
            Freedom::ImplementationDefined => &[SPEC_ERRORS, OPSEM_DIV],
            Freedom::Normwise => {
                const S: &[Source] = &[
                    SPEC_ACCURACY,
                    src(
                        K::Measured,
                        "cargo run --release -p tools --example measure_ulps (complex functions, \
                     error relative to the modulus)",
                    ),
                ];
                S
            }
            Freedom::CombinationOrder => {
                const S: &[Source] = &[
                    OPSEM_SCATTER,
                    SPEC_SCATTER,
                    src(
                        K::OperationSemantics,
                        "SelectAndScatter: the scatter's evaluation order is arbitrary and may be \
                     non-deterministic",
                    ),
                ];
                S
            }
            Freedom::ErrorBound => {
                const S: &[Source] = &[
                    SPEC_ACCURACY,
                    src(
                        K::Measured,
                        "fft: Higham, Accuracy and Stability of Numerical Algorithms, Thm 24.2 \
                     (normwise error of the Cooley-Tukey FFT); decompositions: their backward \
                     error analyses (Higham Thm 10.3 Cholesky, 8.5 triangular solve)",
                    ),
                ];
                S
            }
            Freedom::Unmodelled => &[SPEC_ACCURACY],
        }
    }

    /// Its bit in a [`FreedomSet`].
    pub const fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A set of [`Freedom`]s (bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FreedomSet(pub u32);

impl FreedomSet {
    pub const NONE: FreedomSet = FreedomSet(0);

    pub const fn of(f: Freedom) -> FreedomSet {
        FreedomSet(f.bit())
    }

    pub const fn with(self, f: Freedom) -> FreedomSet {
        FreedomSet(self.0 | f.bit())
    }

    pub fn has(self, f: Freedom) -> bool {
        self.0 & f.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Freedom> {
        Freedom::ALL.into_iter().filter(move |f| self.has(*f))
    }

    /// The names, in [`Freedom::ALL`] order.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Freedom::name).collect()
    }
}

impl std::ops::BitOr for FreedomSet {
    type Output = FreedomSet;
    fn bitor(self, o: FreedomSet) -> FreedomSet {
        FreedomSet(self.0 | o.0)
    }
}

impl std::ops::BitOrAssign for FreedomSet {
    fn bitor_assign(&mut self, o: FreedomSet) {
        self.0 |= o.0;
    }
}

/// What a result may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// One correct result, bit for bit (data movement, integer arithmetic without overflow,
    /// compares, selects, the sign-bit operations).
    Exact,
    /// One correct result: the exact value rounded to nearest, ties to even.
    CorrectlyRounded,
    /// Within the measured ulps of the correctly rounded value ([`approximation_ulps`]); for
    /// complex results, of the modulus ([`normwise_ulps`]).
    Approximated,
    /// A sum in any order: the exact sum of the (rounded) terms within `gamma(n) * sum |x|`,
    /// partial results in the element type or wider.
    OrderFree,
    /// A bound on the whole computation (fft's normwise error, a decomposition's backward
    /// error).
    ErrorBound,
    /// Any value of the type (or the named set of the case).
    ImplementationDefined,
    /// Defined by the op's called computation(s) or operands: the rule of what it calls
    /// (calls, loops, fusions, tuples).
    Structural,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::Exact => "exact",
            Rule::CorrectlyRounded => "correctly rounded",
            Rule::Approximated => "approximated (measured ulps)",
            Rule::OrderFree => "order-free sum",
            Rule::ErrorBound => "error bound",
            Rule::ImplementationDefined => "implementation-defined",
            Rule::Structural => "as what it calls",
        }
    }

    /// Whether the rule leaves exactly one legitimate result for exactly known operands (the
    /// elements recall's 1-ulp goal is about).
    pub fn is_unique(self) -> bool {
        matches!(
            self,
            Rule::Exact | Rule::CorrectlyRounded | Rule::Structural
        )
    }
}

/// A condition under which a row's rule gives way to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Condition {
    /// The exact integer result does not fit the element type.
    IntegerOverflow,
    /// An integer divisor of zero, or the most negative value divided by -1.
    IntegerDivisionOverflow,
    /// A shift amount at least the bit width (read unsigned).
    ShiftOutOfRange,
    /// An integer power with a negative exponent.
    NegativeExponent,
    /// A float converted to an integer type is NaN or out of the type's range.
    FloatToIntOutOfRange,
    /// An integer converted to a narrower integer type does not fit.
    IntToIntOutOfRange,
    /// A float narrowed to a type without infinities overflows, or is an infinity or a NaN.
    NarrowingWithoutInfinity,
    /// A reduction whose init value is not its reducer's identity, or whose reducer is not
    /// associative and commutative.
    NotAMonoid,
    /// Scatter or gather indices flagged sorted or unique that are not.
    FalseIndexFlags,
    /// A sort comparator that is not a strict weak order.
    NotAStrictWeakOrder,
    /// A Cholesky input that is not symmetric (Hermitian) positive definite; the triangle the
    /// result does not define.
    NotPositiveDefinite,
    /// The other triangle of a triangular result.
    OtherTriangle,
    /// A singular triangular matrix.
    SingularMatrix,
    /// Random values: the generator's algorithm and stream.
    RandomBits,
    /// select-and-scatter with a window that selects nothing.
    EmptyWindow,
    /// A NaN operand or result of a conversion whose target keeps NaN bits unspecified.
    NanOperand,
    /// A dot's `algorithm` the backend does not implement: it may refuse the module.
    UnsupportedAlgorithm,
    /// A complex power whose base is zero: C99 gives cpow no special values.
    ComplexPowerOfZero,
    /// An approximated function of a subnormal operand (or operand part).
    SubnormalOperand,
}

impl Condition {
    pub fn name(self) -> &'static str {
        match self {
            Condition::IntegerOverflow => "integer overflow",
            Condition::IntegerDivisionOverflow => "integer division by zero or INT_MIN / -1",
            Condition::ShiftOutOfRange => "shift amount >= bit width",
            Condition::NegativeExponent => "integer power with a negative exponent",
            Condition::FloatToIntOutOfRange => "float to integer: NaN or out of range",
            Condition::IntToIntOutOfRange => "integer to narrower integer: out of range",
            Condition::NarrowingWithoutInfinity => {
                "float narrowed to a type without infinities: overflow, inf or NaN"
            }
            Condition::NotAMonoid => "reducer not a monoid with its init value",
            Condition::FalseIndexFlags => "indices_are_sorted / unique_indices untrue",
            Condition::NotAStrictWeakOrder => "comparator not a strict weak order",
            Condition::NotPositiveDefinite => "input not symmetric positive definite",
            Condition::OtherTriangle => "the triangle not computed",
            Condition::SingularMatrix => "singular triangular matrix",
            Condition::RandomBits => "random bits",
            Condition::EmptyWindow => "a window that selects nothing",
            Condition::NanOperand => "NaN bits through a conversion",
            Condition::UnsupportedAlgorithm => "a dot algorithm the backend does not implement",
            Condition::ComplexPowerOfZero => "complex power of a zero base",
            Condition::SubnormalOperand => "approximated function of a subnormal operand",
        }
    }
}

/// A special case of a row: under `when`, the result follows `rule`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Case {
    pub when: Condition,
    pub rule: Rule,
    pub sources: &'static [Source],
    /// What XLA itself does there (documentation only: never the rule).
    pub xla_does: &'static str,
}

/// Which element-type classes a row covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Classes(pub u8);

impl Classes {
    pub const PRED: Classes = Classes(1);
    pub const SIGNED: Classes = Classes(2);
    pub const UNSIGNED: Classes = Classes(4);
    pub const FLOAT: Classes = Classes(8);
    pub const COMPLEX: Classes = Classes(16);
    pub const INT: Classes = Classes(2 | 4);
    pub const INT_PRED: Classes = Classes(1 | 2 | 4);
    pub const ALL: Classes = Classes(31);

    pub const fn or(self, o: Classes) -> Classes {
        Classes(self.0 | o.0)
    }

    pub fn has(self, c: TypeClass) -> bool {
        let bit = match c {
            TypeClass::Pred => 1,
            TypeClass::Signed => 2,
            TypeClass::Unsigned => 4,
            TypeClass::Float => 8,
            TypeClass::Complex => 16,
            TypeClass::Other => return self.0 == 31,
        };
        self.0 & bit != 0
    }

    pub fn names(self) -> String {
        let mut v = Vec::new();
        for (b, n) in [
            (1, "pred"),
            (2, "signed"),
            (4, "unsigned"),
            (8, "float"),
            (16, "complex"),
        ] {
            if self.0 & b != 0 {
                v.push(n);
            }
        }
        if self.0 == 31 {
            return "any".into();
        }
        v.join(", ")
    }
}

/// One row of the table: these opcodes on these element-type classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    pub ops: &'static [Opcode],
    pub classes: Classes,
    pub rule: Rule,
    /// Freedoms XLA has beyond the rule.
    pub freedoms: &'static [Freedom],
    pub cases: &'static [Case],
    pub sources: &'static [Source],
    pub note: &'static str,
}

impl Row {
    pub fn freedom_set(&self) -> FreedomSet {
        self.freedoms
            .iter()
            .fold(FreedomSet::NONE, |s, f| s.with(*f))
    }

    /// The case for `when`, if the row has one.
    pub fn case(&self, when: Condition) -> Option<&'static Case> {
        self.cases.iter().find(|c| c.when == when)
    }
}

use Freedom as F;
use Opcode as O;

/// An approximated function of a subnormal operand: XLA CPU runs under a flush-denormal
/// scope, and its approximations are measured on normal operands only.
const SUBNORMAL_OPERAND: Case = Case {
    when: Condition::SubnormalOperand,
    rule: Rule::ImplementationDefined,
    sources: &[
        src(
            K::StableHloSpec,
            "Accuracy: the accuracy of transcendental functions is implementation-defined; \
             XLA CPU executes under a flush-denormal scope (jax-ml/jax#16200), which the texts \
             do not describe for subnormal operands of its approximations; the value is left \
             open, not the function's range (atan2 stays in [-pi, pi]: C 7.12.4.4)",
        ),
        src(
            K::Measured,
            "harness/tools/examples/measure_ulps.rs sweeps normal operands only: no bound is \
             measured for a subnormal one",
        ),
    ],
    xla_does: "reads the subnormal as zero in some kernels and not in others (cbrt of a bf16 \
               subnormal: -5.6e-16; pow of an f64 subnormal base: 4.5e300 where the flushed and \
               unflushed readings give inf and 2.4e300)",
};

const INT_OVERFLOW: Case = Case {
    when: Condition::IntegerOverflow,
    rule: Rule::ImplementationDefined,
    sources: &[SPEC_ERRORS, MAINTAINER_SIGNED_OVERFLOW],
    xla_does: "wraps two's complement at the element's width, except where float \
               normalization computes s4 in s8 (excess precision) or a rewrite assumes no \
               signed overflow. Unsigned arithmetic is modular, as C's (the spec's Errors \
               clause speaks of overflow; jax's random bits rely on u32 wrap-around), so only \
               signed results overflow",
};

const SILENT_SHIFT: Case = Case {
    when: Condition::ShiftOutOfRange,
    rule: Rule::ImplementationDefined,
    sources: &[src(
        K::Silent,
        "StableHLO spec shift_left / shift_right_*: only small amounts in the examples; XLA \
         operation semantics: 'by rhs number of bits'",
    )],
    xla_does: "the amount is read unsigned; >= width gives 0 (left, logical right) or the \
               sign fill (arithmetic right): xla/service/elemental_ir_emitter.cc \
               SaturateShiftIfNecessary, the HloEvaluator alike",
};

const DATA_MOVEMENT_OPS: &[Opcode] = &[
    O::Broadcast,
    O::Reshape,
    O::Transpose,
    O::Slice,
    O::Concatenate,
    O::Pad,
    O::Reverse,
    O::Copy,
    O::Bitcast,
    O::DynamicReshape,
    O::SetDimensionSize,
];

const STRUCTURAL_OPS: &[Opcode] = &[
    O::Tuple,
    O::GetTupleElement,
    O::Parameter,
    O::Constant,
    O::Call,
    O::Fusion,
    O::While,
    O::Conditional,
    O::Map,
    O::OptimizationBarrier,
    O::Domain,
    O::AddDependency,
    O::AfterAll,
];

const APPROXIMATED_REAL: &[Opcode] = &[
    O::Exp,
    O::Expm1,
    O::Log,
    O::Log1p,
    O::Logistic,
    O::Tanh,
    O::Erf,
    O::Cbrt,
    O::Rsqrt,
    O::Sin,
    O::Cos,
    O::Tan,
    O::Atan2,
    O::Power,
    O::Atan,
    O::Asin,
    O::Acos,
    O::Asinh,
    O::Acosh,
    O::Atanh,
    O::Sinh,
    O::Cosh,
];

const APPROXIMATED_COMPLEX: &[Opcode] = &[
    O::Atan2,
    O::Exp,
    O::Expm1,
    O::Log,
    O::Log1p,
    O::Logistic,
    O::Tanh,
    O::Sqrt,
    O::Rsqrt,
    O::Cbrt,
    O::Sin,
    O::Cos,
    O::Tan,
    O::Power,
    O::Atan,
    O::Asin,
    O::Acos,
    O::Asinh,
    O::Acosh,
    O::Atanh,
    O::Sinh,
    O::Cosh,
    O::Divide,
    O::Multiply,
    O::Abs,
    O::Sign,
];

/// Freedoms of every float arithmetic op on XLA CPU.
const FLOAT_ARITH: &[Freedom] = &[
    F::Rounding,
    F::FlushToZero,
    F::ExcessPrecision,
    F::FmaContraction,
    F::NanBits,
];

/// The table. Every opcode the oracle runs has a row for each element-type class it takes
/// (checked by `interp/tests/semantics_table.rs`); the first row that covers an (opcode,
/// class) pair is its row. Elementwise ops and conversions are keyed by their (first)
/// operand's element type, as XLA's shape inference checks them (`compare` and `convert` by
/// what they read); every other op by its result's.
pub const ROWS: &[Row] = &[
    // --- Data movement and structure -------------------------------------------------------
    Row {
        ops: DATA_MOVEMENT_OPS,
        classes: Classes::ALL,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[],
        sources: &[
            src(
                K::StableHloSpec,
                "broadcast_in_dim, reshape, transpose, slice, concatenate, pad, reverse: each \
                 result element is a defined operand element (or the padding value)",
            ),
            IEEE_SIGN_BIT,
        ],
        note: "elements are moved, never computed on: a result keeps its operand's bits, NaN \
               payloads and signed zeros included, whatever XLA's rewrites convert on the way",
    },
    Row {
        ops: &[O::DynamicSlice, O::DynamicUpdateSlice, O::Gather],
        classes: Classes::ALL,
        rule: Rule::Exact,
        freedoms: &[F::UncertainIndex],
        cases: &[Case {
            when: Condition::FalseIndexFlags,
            rule: Rule::ImplementationDefined,
            sources: &[src(
                K::OperationSemantics,
                "Gather: indices_are_sorted set on unsorted indices gives an implementation \
                 defined result (the StableHLO spec: undefined behaviour)",
            )],
            xla_does: "ignores the flag on CPU",
        }],
        sources: &[src(
            K::StableHloSpec,
            "dynamic_slice, dynamic_update_slice, gather: start indices are clamped to [0, \
             dim - size]",
        )],
        note: "out-of-range starts are clamped, so every index is defined",
    },
    Row {
        ops: &[O::Scatter],
        classes: Classes::ALL,
        rule: Rule::Exact,
        freedoms: &[F::CombinationOrder, F::UncertainIndex],
        cases: &[Case {
            when: Condition::FalseIndexFlags,
            rule: Rule::ImplementationDefined,
            sources: &[src(
                K::OperationSemantics,
                "Scatter: indices_are_sorted or unique_indices set but untrue gives an \
                 implementation defined result",
            )],
            xla_does: "may combine colliding updates without the update computation",
        }],
        sources: &[OPSEM_SCATTER, SPEC_SCATTER],
        note: "each update is combined by the update computation (whose own rule applies); \
               colliding updates in any order; an update element outside the operand is \
               skipped (the HloEvaluator skips the whole window: either is legitimate)",
    },
    Row {
        ops: &[O::Select],
        classes: Classes::ALL,
        rule: Rule::Exact,
        freedoms: &[F::EitherOutcome],
        cases: &[],
        sources: &[src(
            K::StableHloSpec,
            "select: the on_true element where pred is true, else the on_false element",
        )],
        note: "moves one of its operands' elements, bits included",
    },
    Row {
        ops: &[O::Iota],
        classes: Classes::INT_PRED,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[INT_OVERFLOW],
        sources: &[
            src(
                K::StableHloSpec,
                "iota: output[i] = constant(index, element_type) along iota_dimension",
            ),
            src(
                K::Tracker,
                "openxla/stablehlo PR #234 (the iota spec's review): an index the type cannot \
                 hold overflows",
            ),
        ],
        note: "an index the type cannot hold (unsigned types included: it is a conversion of \
               the index) is implementation-defined",
    },
    Row {
        ops: &[O::Iota],
        classes: Classes::FLOAT.or(Classes::COMPLEX),
        rule: Rule::CorrectlyRounded,
        freedoms: &[F::Rounding, F::ExcessPrecision],
        cases: &[],
        sources: &[src(
            K::OperationSemantics,
            "Iota: as an integer iota converted to the element type",
        )],
        note: "an f8 iota may keep its f16 value (excess precision)",
    },
    Row {
        ops: STRUCTURAL_OPS,
        classes: Classes::ALL,
        rule: Rule::Structural,
        freedoms: &[],
        cases: &[],
        sources: &[src(
            K::StableHloSpec,
            "tuple, get_tuple_element, while, if/case, call, optimization_barrier: values \
             pass through unchanged; a called computation's ops have their own rules",
        )],
        note: "parameters and constants are given; control flow follows its predicates",
    },
    Row {
        ops: &[O::Scan],
        classes: Classes::ALL,
        rule: Rule::Structural,
        freedoms: &[F::SummationOrder],
        cases: &[],
        sources: &[src(
            K::XlaSource,
            "xla/service/scan_expander.cc: a scan runs its body once per step; with \
             is_associative XLA may reorder the combination (as a reduction)",
        )],
        note: "in order, except an associative scan, which combines in any order",
    },
    Row {
        ops: &[O::PartitionId, O::ReplicaId, O::GetDimensionSize],
        classes: Classes::INT,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[],
        sources: &[src(
            K::OperationSemantics,
            "ReplicaId / PartitionId: the device's id (0 on one device); GetDimensionSize: the \
             dimension's size",
        )],
        note: "",
    },
    // --- Integer and pred arithmetic --------------------------------------------------------
    Row {
        ops: &[O::Add, O::Subtract, O::Multiply, O::Negate, O::Abs],
        classes: Classes::INT,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[INT_OVERFLOW],
        sources: &[
            src(
                K::StableHloSpec,
                "add, subtract, multiply, negate, abs: integer arithmetic",
            ),
            SPEC_ERRORS,
        ],
        note: "exact where the result fits the type; a signed overflow (abs and negate of \
               INT_MIN included) is implementation-defined; unsigned arithmetic is modular",
    },
    Row {
        ops: &[O::Divide, O::Remainder],
        classes: Classes::INT,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[Case {
            when: Condition::IntegerDivisionOverflow,
            rule: Rule::ImplementationDefined,
            sources: &[OPSEM_DIV, SPEC_ERRORS],
            xla_does: "x / 0 = -1 (unsigned: all ones), INT_MIN / -1 = INT_MIN, x % 0 = x, \
                       INT_MIN % -1 = 0 (elemental_ir_emitter.cc EmitIntegerDivide)",
        }],
        sources: &[src(
            K::StableHloSpec,
            "divide: quotient truncated toward zero; remainder: the sign of the dividend",
        )],
        note: "",
    },
    Row {
        ops: &[O::ShiftLeft, O::ShiftRightLogical, O::ShiftRightArithmetic],
        classes: Classes::INT,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[SILENT_SHIFT],
        sources: &[src(
            K::StableHloSpec,
            "shift_left, shift_right_logical, shift_right_arithmetic: shifts of the bit \
             pattern",
        )],
        note: "",
    },
    Row {
        ops: &[O::Power],
        classes: Classes::INT,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[
            INT_OVERFLOW,
            Case {
                when: Condition::NegativeExponent,
                rule: Rule::ImplementationDefined,
                sources: &[src(
                    K::Silent,
                    "StableHLO spec power: 'integer exponentiation', negative exponents not \
                     said; XLA's operation semantics silent",
                )],
                xla_does: "0, except 1 for base 1 (elemental_ir_emitter.cc EmitIntegerPow); \
                           the StableHLO interpreter gives ±1 for base -1",
            },
        ],
        sources: &[src(K::StableHloSpec, "power: integer exponentiation")],
        note: "",
    },
    Row {
        ops: &[
            O::And,
            O::Or,
            O::Xor,
            O::Not,
            O::PopulationCount,
            O::Clz,
            O::Maximum,
            O::Minimum,
            O::Clamp,
            O::Sign,
            O::Mulhi,
        ],
        classes: Classes::INT_PRED,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[],
        sources: &[src(
            K::StableHloSpec,
            "and, or, xor, not, popcnt, count_leading_zeros, maximum, minimum, clamp, sign: \
             bitwise and integer operations on the element's bit pattern",
        )],
        note: "popcnt and count-leading-zeros count the element's own width",
    },
    Row {
        ops: &[O::Add, O::Subtract, O::Multiply],
        classes: Classes::PRED,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[],
        sources: &[src(
            K::StableHloSpec,
            "add / multiply of booleans: logical or / and",
        )],
        note: "",
    },
    Row {
        ops: &[O::Compare],
        classes: Classes::ALL,
        rule: Rule::Exact,
        freedoms: &[F::EitherOutcome, F::FlushToZero],
        cases: &[],
        sources: &[
            src(
                K::StableHloSpec,
                "compare: IEEE compareQuiet* for FLOAT, totalOrder for TOTALORDER, integer \
                 order by signedness; complex: EQ/NE (others lexicographic, deprecated)",
            ),
            CPU_FTZ,
        ],
        note: "exact on its operands as XLA reads them: a subnormal float operand may read as \
               zero under denormals-are-zero (not under TOTALORDER, which compares bits)",
    },
    // --- Conversions ------------------------------------------------------------------------
    Row {
        ops: &[O::Convert],
        classes: Classes::INT_PRED,
        rule: Rule::Exact,
        freedoms: &[F::Rounding],
        cases: &[Case {
            when: Condition::IntToIntOutOfRange,
            rule: Rule::ImplementationDefined,
            sources: &[
                src(
                    K::StableHloSpec,
                    "convert: exact when the value fits the result type; otherwise TBD \
                     (openxla/stablehlo#180)",
                ),
                SPEC_ERRORS,
            ],
            xla_does: "truncates to the low bits (s4/u4 are computed in s8/u8 on CPU)",
        }],
        sources: &[src(
            K::StableHloSpec,
            "convert: a value the result type holds is kept; to a float: rounded to nearest \
             even; to bool: x != 0",
        )],
        note: "integer to float is one rounding to nearest even",
    },
    Row {
        ops: &[O::Convert],
        classes: Classes::FLOAT.or(Classes::COMPLEX),
        rule: Rule::CorrectlyRounded,
        freedoms: &[F::Rounding, F::FlushToZero, F::NanBits, F::ExcessPrecision],
        cases: &[
            Case {
                when: Condition::FloatToIntOutOfRange,
                rule: Rule::ImplementationDefined,
                sources: &[src(
                    K::StableHloSpec,
                    "convert: float to integer of a value out of range (or NaN) is TBD \
                     (openxla/stablehlo#180); XLA's operation semantics: unspecified",
                )],
                xla_does: "saturates, NaN to 0 (the HloEvaluator and XLA CPU alike)",
            },
            Case {
                when: Condition::NarrowingWithoutInfinity,
                rule: Rule::ImplementationDefined,
                sources: &[src(
                    K::Silent,
                    "the StableHLO spec lists the f8/f4 formats; overflow, inf or NaN into a \
                     format without infinities is not said (TBD under openxla/stablehlo#180)",
                )],
                xla_does: "NaN for FN/FNUZ formats; f4e2m1fn saturates \
                           (xla/codegen/intrinsic/fptrunc.cc)",
            },
        ],
        sources: &[src(
            K::StableHloSpec,
            "convert: float to float rounds to nearest even; float to integer truncates toward \
             zero; complex to real keeps the real part",
        )],
        note: "a narrowing through f32 (two roundings) is legitimate where XLA CPU narrows \
               that way on the host (interp::host)",
    },
    Row {
        ops: &[O::BitcastConvert],
        classes: Classes::ALL,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[],
        sources: &[src(
            K::StableHloSpec,
            "bitcast_convert: the operand's bits read as the result type (the representation \
             is implementation-defined; IEEE formats on every XLA host)",
        )],
        note: "its operand's legitimate values decide: an approximated float bitcast to an \
               integer may be any of the integers those floats are",
    },
    Row {
        ops: &[O::ReducePrecision],
        classes: Classes::FLOAT,
        rule: Rule::Exact,
        freedoms: &[F::NanBits],
        cases: &[],
        sources: &[
            src(
                K::StableHloSpec,
                "reduce_precision: round to nearest even to the given exponent and mantissa \
                 bits; overflow to ±inf, underflow to ±0",
            ),
            src(
                K::OperationSemantics,
                "ReducePrecision: NaN values are retained, though they may be canonicalized",
            ),
        ],
        note: "",
    },
    Row {
        ops: &[O::StochasticConvert],
        classes: Classes::FLOAT,
        rule: Rule::ImplementationDefined,
        freedoms: &[F::ImplementationDefined],
        cases: &[],
        sources: &[src(
            K::Silent,
            "neither the StableHLO spec nor XLA's operation semantics defines stochastic-convert",
        )],
        note: "the oracle does not run it",
    },
    // --- Float arithmetic ---------------------------------------------------------------------
    Row {
        ops: &[O::Add, O::Subtract, O::Multiply, O::Divide, O::Sqrt],
        classes: Classes::FLOAT,
        rule: Rule::CorrectlyRounded,
        freedoms: FLOAT_ARITH,
        cases: &[],
        sources: &[
            IEEE_BASIC,
            src(
                K::StableHloSpec,
                "add, subtract, multiply, divide, sqrt: IEEE addition, subtraction, \
                 multiplication, division, squareRoot",
            ),
            CPU_FTZ,
        ],
        note: "one correct result for exactly known operands, unless a subnormal is flushed, a \
               narrow type is kept wide, or a multiply feeding it is contracted; sqrt(-0) = -0",
    },
    Row {
        ops: &[O::Remainder],
        classes: Classes::FLOAT,
        rule: Rule::Exact,
        freedoms: &[F::FlushToZero, F::NanBits],
        cases: &[],
        sources: &[
            src(
                K::StableHloSpec,
                "remainder: lhs - d * rhs with d the quotient truncated toward zero (C fmod)",
            ),
            src(
                K::CAnnex,
                "F.9.7.1: fmod is exact; fmod(±0, y) = ±0, fmod(x, ±inf) = x, fmod(inf, y) and \
                 fmod(x, 0) are NaN",
            ),
        ],
        note: "",
    },
    Row {
        ops: &[O::Negate, O::Abs, O::Real, O::Imag, O::Complex],
        classes: Classes::FLOAT,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[],
        sources: &[
            IEEE_SIGN_BIT,
            src(
                K::StableHloSpec,
                "negate, abs: IEEE negate and abs; real, imag, complex: the parts",
            ),
            src(
                K::Measured,
                "XLA CPU does not flush a subnormal through negate, abs (real), real, imag, \
                 complex, bitcast-convert, reduce-precision or copy: they move or relabel bits \
                 (interp::variant::flush_operand's measurement)",
            ),
        ],
        note: "negate and abs keep a NaN's payload and set its sign; a subnormal stays",
    },
    Row {
        ops: &[
            O::Sign,
            O::Floor,
            O::Ceil,
            O::RoundNearestAfz,
            O::RoundNearestEven,
            O::IsFinite,
        ],
        classes: Classes::FLOAT,
        rule: Rule::Exact,
        freedoms: &[F::FlushToZero],
        cases: &[],
        sources: &[src(
            K::StableHloSpec,
            "sign, floor, ceil, round_nearest_afz, round_nearest_even, is_finite: IEEE \
             roundToIntegral* and isFinite; sign is -1, -0, +0, +1 or NaN",
        )],
        note: "sign(±0) = ±0, sign(NaN) = NaN; a subnormal operand may read as zero",
    },
    Row {
        ops: &[O::Maximum, O::Minimum, O::Clamp],
        classes: Classes::FLOAT,
        rule: Rule::Exact,
        freedoms: &[F::FlushToZero, F::NanBits],
        cases: &[],
        sources: &[
            src(
                K::StableHloSpec,
                "maximum, minimum: IEEE 754-2019 maximum/minimum (NaN propagates, -0 < +0); \
                 clamp = min(max(x, lo), hi)",
            ),
            src(
                K::Measured,
                "jaxlib 0.10.2 XLA CPU propagates NaN unless xla_cpu_enable_fast_min_max=true \
                 (harness/tools/tests/pjrt.rs an_injected_divergence_is_found_through_pjrt)",
            ),
        ],
        note: "max(-0, +0) may be either zero (XLA's CSE treats the op as commutative)",
    },
    Row {
        ops: APPROXIMATED_REAL,
        classes: Classes::FLOAT,
        rule: Rule::Approximated,
        freedoms: &[
            F::ApproximationUlps,
            F::Rounding,
            F::FlushToZero,
            F::ExcessPrecision,
            F::NanBits,
        ],
        cases: &[SUBNORMAL_OPERAND],
        sources: &[
            SPEC_ACCURACY,
            MEASURED_ULPS,
            src(
                K::CAnnex,
                "Annex F.9: special values (exp(-inf) = +0, log(±0) = -inf, pow(x, ±0) = 1, \
                 atan2(±0, -0) = ±pi, tanh(±inf) = ±1, ...) are exact",
            ),
        ],
        note: "special values and results the function returns exactly stay exact; logistic \
               is enclosed as XLA's expansion 1 / (1 + exp(-x))",
    },
    // --- Complex ------------------------------------------------------------------------------
    Row {
        ops: &[O::Add, O::Subtract, O::Negate, O::Real, O::Imag],
        classes: Classes::COMPLEX,
        rule: Rule::CorrectlyRounded,
        freedoms: &[F::Rounding, F::FlushToZero, F::NanBits],
        cases: &[],
        sources: &[
            IEEE_BASIC,
            src(
                K::StableHloSpec,
                "complex add, subtract, negate: componentwise; real, imag: the part",
            ),
        ],
        note: "componentwise: each part one correctly rounded float operation (real and imag \
               exact)",
    },
    Row {
        ops: &[O::Remainder],
        classes: Classes::COMPLEX,
        rule: Rule::ImplementationDefined,
        freedoms: &[F::ImplementationDefined],
        cases: &[],
        sources: &[src(
            K::StableHloSpec,
            "remainder: the complex case is TBD (openxla/stablehlo#997)",
        )],
        note: "",
    },
    Row {
        ops: &[O::Atan2],
        classes: Classes::INT,
        rule: Rule::ImplementationDefined,
        freedoms: &[F::ImplementationDefined],
        cases: &[],
        sources: &[src(
            K::Silent,
            "the StableHLO spec's atan2 takes floats and complex values; XLA's shape inference \
             admits integers, which no text defines",
        )],
        note: "",
    },
    Row {
        ops: &[O::Maximum, O::Minimum, O::Clamp],
        classes: Classes::COMPLEX,
        rule: Rule::Exact,
        freedoms: &[F::EitherOutcome, F::FlushToZero],
        cases: &[],
        sources: &[
            src(
                K::StableHloSpec,
                "maximum, minimum of complex values: lexicographic on (real, imag), deprecated \
                 (openxla/stablehlo#560)",
            ),
            src(
                K::Measured,
                "jaxlib 0.10.2 XLA CPU orders by the real part alone: min((1.5,7.5), \
                 (1.5,2.5)) is (1.5,7.5) (shared/XLA-FACTS.md, checked 2026-12)",
            ),
        ],
        note: "one of the operands, bits included; the texts disagree on ties of the real \
               part, so either operand is legitimate there",
    },
    Row {
        ops: APPROXIMATED_COMPLEX,
        classes: Classes::COMPLEX,
        rule: Rule::Approximated,
        freedoms: &[
            F::Normwise,
            F::ApproximationUlps,
            F::ComplexInfinity,
            F::Overflow,
            F::EitherOutcome,
            F::FlushToZero,
            F::NanBits,
        ],
        cases: &[
            SUBNORMAL_OPERAND,
            Case {
                when: Condition::ComplexPowerOfZero,
                rule: Rule::ImplementationDefined,
                sources: &[
                    src(
                        K::CAnnex,
                        "G.6.4.1: cpow has no special-value table; it 'may be implemented as \
                     cexp(y clog x)' and may raise spurious exceptions, so a zero base has no \
                     specified result (through that formula 0^w is ±0 ± i0 for Re w > 0, \
                     infinite or NaN otherwise)",
                    ),
                    src(
                        K::StableHloSpec,
                        "power: 'complex exponentiation', no special values",
                    ),
                ],
                xla_does: "compiled code computes |z|^c e^(-d t) with ln|0| = -inf, giving NaN \
                       parts; constant folding gives (0, -0) for Re w > 0",
            },
        ],
        sources: &[
            SPEC_ACCURACY,
            ANNEX_G,
            src(
                K::CAnnex,
                "G.5.1: complex multiplication and division recover infinities (an infinite \
                 operand times a nonzero one is an infinity)",
            ),
        ],
        note: "accurate relative to the result's modulus; special values (infinite and NaN \
               parts, signed zeros on branch cuts) follow Annex G; cos, sin and exp may overflow \
               where the exp, cosh or sinh XLA computes them from does (exp(|y|) past the \
               type's largest value), though the exact value is finite; atan2 with a zero y and \
               Re x < 0 lies on log's branch cut (the spec's -i log((x + iy) / sqrt(x^2 + \
               y^2)) is log(-1)), where either side is legitimate",
    },
    // --- Reductions, contractions, sorts ----------------------------------------------------
    Row {
        ops: &[O::Reduce, O::ReduceWindow],
        classes: Classes::ALL,
        rule: Rule::OrderFree,
        freedoms: &[
            F::SummationOrder,
            F::InitMultiplicity,
            F::Overflow,
            F::Rounding,
            F::FlushToZero,
            F::ExcessPrecision,
            F::NanBits,
        ],
        cases: &[
            Case {
                when: Condition::NotAMonoid,
                rule: Rule::ImplementationDefined,
                sources: &[SPEC_REDUCE_ORDER, OPSEM_REDUCE],
                xla_does: "combines in its own tree, with the init value anywhere",
            },
            INT_OVERFLOW,
        ],
        sources: &[SPEC_REDUCE_ORDER, OPSEM_REDUCE],
        note: "integer sums are exact whatever the order (wrapping aside); a float sum lies \
               within gamma(n) * sum |x| of the exact sum",
    },
    Row {
        ops: &[O::Dot, O::Convolution],
        classes: Classes::ALL,
        rule: Rule::OrderFree,
        freedoms: &[
            F::SummationOrder,
            F::Overflow,
            F::Rounding,
            F::FlushToZero,
            F::ExcessPrecision,
            F::FmaContraction,
            F::NanBits,
        ],
        cases: &[
            INT_OVERFLOW,
            Case {
                when: Condition::UnsupportedAlgorithm,
                rule: Rule::ImplementationDefined,
                sources: &[src(
                    K::StableHloSpec,
                    "dot_general: the DotAlgorithm fields' support is implementation-defined; \
                     an algorithm a backend does not support raises an error (a refusal, not a \
                     finding)",
                )],
                xla_does: "XLA CPU refuses algorithms its elemental emitter lacks \
                           ('Algorithm not supported by the ElementalIrEmitter')",
            },
        ],
        sources: &[SPEC_DOT],
        note: "a sum of products in any order, accumulated in the element type or wider; \
               integer overflow of the accumulation is implementation-defined; a backend may \
               refuse an algorithm it does not implement",
    },
    Row {
        ops: &[O::SelectAndScatter],
        classes: Classes::ALL,
        rule: Rule::OrderFree,
        freedoms: &[
            F::CombinationOrder,
            F::SummationOrder,
            F::Rounding,
            F::FlushToZero,
            F::NanBits,
        ],
        cases: &[Case {
            when: Condition::EmptyWindow,
            rule: Rule::ImplementationDefined,
            sources: &[src(
                K::StableHloSpec,
                "select_and_scatter: the result for a window that selects nothing is currently \
                 unspecified (openxla/stablehlo#731)",
            )],
            xla_does: "scatters nothing from it",
        }],
        sources: &[src(
            K::OperationSemantics,
            "SelectAndScatter: select picks an element per window; the scatter's evaluation \
             order is arbitrary and may be non-deterministic; tied elements are the same \
             element for every type",
        )],
        note: "which of tied elements is selected, and the order the scattered values \
               combine in, are free for every element type",
    },
    Row {
        ops: &[O::Sort],
        classes: Classes::ALL,
        rule: Rule::Exact,
        freedoms: &[F::EitherOutcome, F::CombinationOrder],
        cases: &[Case {
            when: Condition::NotAStrictWeakOrder,
            rule: Rule::ImplementationDefined,
            sources: &[src(
                K::Silent,
                "StableHLO spec and XLA operation semantics: the comparator's order is assumed; \
                 a comparator that is not a strict weak order has no defined result",
            )],
            xla_does: "whatever its sorting network produces",
        }],
        sources: &[src(
            K::StableHloSpec,
            "sort: sorted by the comparator; with is_stable, equal elements keep their order \
             (otherwise their order is implementation-defined)",
        )],
        note: "elements move with their bits; ties of an unstable sort in any order",
    },
    Row {
        ops: &[O::TopK],
        classes: Classes::ALL,
        rule: Rule::Exact,
        freedoms: &[F::EitherOutcome, F::CombinationOrder],
        cases: &[],
        sources: &[src(
            K::OperationSemantics,
            "TopK: the k largest elements of the last dimension, largest first; of equal \
             elements the lower index first",
        )],
        note: "values are selected, not computed",
    },
    // --- Numerical kernels ------------------------------------------------------------------
    Row {
        ops: &[O::Fft],
        classes: Classes::FLOAT.or(Classes::COMPLEX),
        rule: Rule::ErrorBound,
        freedoms: &[F::ErrorBound, F::FlushToZero, F::NanBits],
        cases: &[],
        sources: &[
            src(
                K::StableHloSpec,
                "fft: FFT, IFFT (with the 1/n factor), RFFT, IRFFT of the trailing dimensions",
            ),
            src(
                K::Measured,
                "Higham, Thm 24.2: a Cooley-Tukey FFT's computed result y satisfies |y - Fx|_2 \
                 <= c log2(n) u |Fx|_2; XLA CPU (DUCC) also runs Bluestein for other lengths: \
                 the bound is taken over the padded length",
            ),
        ],
        note: "each output element within the normwise bound of the exact DFT of the operand",
    },
    Row {
        ops: &[O::Cholesky],
        classes: Classes::FLOAT.or(Classes::COMPLEX),
        rule: Rule::ErrorBound,
        freedoms: &[F::ErrorBound, F::FlushToZero, F::NanBits],
        cases: &[
            Case {
                when: Condition::NotPositiveDefinite,
                rule: Rule::ImplementationDefined,
                sources: &[src(
                    K::OperationSemantics,
                    "Cholesky: if a is not symmetric (Hermitian) positive definite, the result \
                     is implementation-defined (the StableHLO spec: undefined behaviour)",
                )],
                xla_does: "NaN (xla/service/cholesky_expander.cc)",
            },
            Case {
                when: Condition::OtherTriangle,
                rule: Rule::ImplementationDefined,
                sources: &[src(
                    K::OperationSemantics,
                    "Cholesky: the other triangle of the result is implementation-defined and \
                     may be anything",
                )],
                xla_does: "keeps the input there",
            },
        ],
        sources: &[src(
            K::Measured,
            "Higham Thm 10.3: the computed factor L satisfies L L^T = A + dA with |dA| <= \
             gamma(n+1) |L| |L^T|; with the perturbation bound of the factor, each element lies \
             within a bound proportional to the condition number",
        )],
        note: "unique for a positive definite input: bounded through its backward error",
    },
    Row {
        ops: &[O::TriangularSolve],
        classes: Classes::FLOAT.or(Classes::COMPLEX),
        rule: Rule::ErrorBound,
        freedoms: &[F::ErrorBound, F::FlushToZero, F::NanBits],
        cases: &[
            Case {
                when: Condition::SingularMatrix,
                rule: Rule::ImplementationDefined,
                sources: &[src(
                    K::Silent,
                    "StableHLO spec and XLA operation semantics say nothing of a singular a",
                )],
                xla_does: "infinities and NaNs from the division by a zero diagonal",
            },
            Case {
                when: Condition::OtherTriangle,
                rule: Rule::ImplementationDefined,
                sources: &[src(
                    K::OperationSemantics,
                    "TriangularSolve: the other triangle of a is ignored; unit_diagonal with a \
                     diagonal that is not 1 is undefined (StableHLO spec)",
                )],
                xla_does: "ignores it",
            },
        ],
        sources: &[src(
            K::Measured,
            "Higham Thm 8.5: the computed solution solves (T + dT) x = b with |dT| <= gamma(n) \
             |T|; each element lies within the forward bound cond(T, x) gamma(n) / (1 - ...)",
        )],
        note: "",
    },
    Row {
        ops: &[O::CustomCall],
        classes: Classes::ALL,
        rule: Rule::ErrorBound,
        freedoms: &[F::ErrorBound, F::FlushToZero, F::NanBits, F::Unmodelled],
        cases: &[Case {
            when: Condition::OtherTriangle,
            rule: Rule::ImplementationDefined,
            sources: &[src(
                K::XlaSource,
                "jaxlib's LAPACK calls (lapack_*_ffi) write only the triangle they compute; \
                 the other holds the input or scratch",
            )],
            xla_does: "keeps the input there",
        }],
        sources: &[src(
            K::XlaSource,
            "the LAPACK calls jax makes on CPU (potrf, trsm, getrf, geqrf, orgqr, syevd) and \
             XLA CPU's library calls: bounded by their decompositions' error analyses (Higham \
             Ch. 8-10, 19); any other target is not modelled",
        )],
        note: "Sharding and SPMD shape custom calls are identities",
    },
    Row {
        ops: &[O::RngBitGenerator],
        classes: Classes::ALL,
        rule: Rule::Exact,
        freedoms: &[],
        cases: &[Case {
            when: Condition::RandomBits,
            rule: Rule::ImplementationDefined,
            sources: &[src(
                K::StableHloSpec,
                "rng_bit_generator: deterministic for an initial state, but the DEFAULT \
                 algorithm and the exact stream are implementation-defined",
            )],
            xla_does: "Philox for DEFAULT on CPU",
        }],
        sources: &[src(
            K::OperationSemantics,
            "RngBitGenerator: THREE_FRY and PHILOX are the named counter-based generators",
        )],
        note: "the oracle runs XLA's expansion; a different stream is legitimate",
    },
];

/// The row of `op` on elements of class `class`: the first that covers both.
pub fn row(op: Opcode, class: TypeClass) -> Option<&'static Row> {
    ROWS.iter()
        .find(|r| r.ops.contains(&op) && r.classes.has(class))
}

/// The row of `op` on `ty` (its class).
pub fn row_for(op: Opcode, ty: PrimitiveType) -> Option<&'static Row> {
    row(op, ty.class())
}

/// The row of an instruction: keyed by its first operand's element type for elementwise ops and
/// conversions (`operand`), by its result's (`result`) otherwise.
pub fn row_of(
    op: Opcode,
    operand: Option<PrimitiveType>,
    result: PrimitiveType,
) -> Option<&'static Row> {
    use crate::Category as C;
    let key = match op.category() {
        C::ElementwiseUnary | C::ElementwiseBinary | C::ElementwiseTernary | C::Conversion => {
            operand.unwrap_or(result)
        }
        _ => result,
    };
    // select's first operand is its predicate; the values are its second and third.
    let key = if op == O::Select { result } else { key };
    row_for(op, key)
}

/// Whether the texts leave `op` on `ty` implementation-defined under `when`: the freedom the
/// enclosure grants there is any value of the type.
pub fn implementation_defined(op: Opcode, ty: PrimitiveType, when: Condition) -> bool {
    row_for(op, ty)
        .and_then(|r| r.case(when))
        .is_some_and(|c| c.rule == Rule::ImplementationDefined)
}

/// The largest error, in ulps of `ty`, of XLA CPU's real `op` (the table's
/// [`Rule::Approximated`] rows): the measured figure, plus the rounding of the oracle's own
/// f64 reference. `None`: not approximated by a measured bound (any value of the type).
pub fn approximation_ulps(op: Opcode, ty: PrimitiveType) -> Option<u32> {
    use PrimitiveType as T;
    let narrow = matches!(ty, T::F16 | T::Bf16) || ty.bit_width() <= 8;
    if op == O::Sqrt {
        return Some(0);
    }
    if !APPROXIMATED_REAL.contains(&op) {
        return None;
    }
    Some(match ty {
        T::F32 => match op {
            O::Power => 8,
            _ => 4,
        },
        T::F64 => match op {
            O::Power => 16,
            _ => 8,
        },
        _ if narrow => 2,
        _ => return None,
    })
}

/// The largest error of XLA CPU's complex `op`, in ulps of the component type relative to the
/// result's modulus (complex functions are accurate normwise, not part by part).
pub fn normwise_ulps(op: Opcode, ty: PrimitiveType) -> Option<u32> {
    if !ty.is_complex() || !APPROXIMATED_COMPLEX.contains(&op) {
        return None;
    }
    Some(match op {
        O::Multiply | O::Divide | O::Abs => 4,
        O::Power => 32,
        O::Exp | O::Log | O::Sqrt | O::Rsqrt | O::Tanh | O::Tan | O::Logistic => 8,
        O::Expm1 | O::Log1p | O::Sign | O::Sin | O::Cos | O::Atan2 => 8,
        _ => return None,
    })
}

/// Above this magnitude XLA CPU's argument reduction for sin, cos and tan of `ty` is not
/// measured: their results there are any value in [-1, 1] (tan: any value).
pub fn periodic_limit(ty: PrimitiveType) -> f64 {
    match ty {
        PrimitiveType::F64 => 1e6,
        _ => 1e4,
    }
}

fn cite_list(sources: &[Source]) -> String {
    sources
        .iter()
        .map(|s| format!("{}: {}", s.kind.name(), s.cite))
        .collect::<Vec<_>>()
        .join("; ")
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The table as markdown (`docs/semantics.md`).
pub fn markdown() -> String {
    let mut s = String::new();
    s.push_str(
        "# XLA's semantics, as the judge reads them\n\n\
         Generated from `hlo/src/semantics.rs` (`hlo-diff semantics --markdown > \
         docs/semantics.md`; a test keeps it current). For every opcode and element-type \
         class: what a result may be, the freedoms XLA has beyond that, the cases where the \
         texts leave the value implementation-defined, and the sources. The judge's set of \
         legitimate results is computed from these rows; a difference is a bug only when XLA's \
         value lies outside it.\n\n",
    );
    s.push_str("## Freedoms\n\n");
    s.push_str(&freedoms_markdown());
    s.push_str("\n## Rules\n\n| rule | meaning |\n|---|---|\n");
    for (r, m) in [
        (Rule::Exact, "one correct result, bit for bit"),
        (
            Rule::CorrectlyRounded,
            "one correct result: the exact value rounded to nearest even",
        ),
        (
            Rule::Approximated,
            "within the measured ulps of the correctly rounded value (complex: of the modulus)",
        ),
        (
            Rule::OrderFree,
            "a sum in any order, within gamma(n) * sum |x| of the exact sum",
        ),
        (
            Rule::ErrorBound,
            "within a normwise error bound of the whole computation",
        ),
        (Rule::ImplementationDefined, "any value of the type"),
        (
            Rule::Structural,
            "the values of what it calls, moves or is given",
        ),
    ] {
        s.push_str(&format!("| {} | {m} |\n", r.name()));
    }
    s.push_str("\n## The table\n\n");
    for row in ROWS {
        let ops: Vec<&str> = row.ops.iter().map(|o| o.name()).collect();
        s.push_str(&format!(
            "### {} ({})\n\n- rule: **{}**\n",
            ops.join(", "),
            row.classes.names(),
            row.rule.name()
        ));
        if !row.freedoms.is_empty() {
            let f: Vec<&str> = row.freedoms.iter().map(|f| f.name()).collect();
            s.push_str(&format!("- freedoms: {}\n", f.join(", ")));
        }
        for c in row.cases {
            s.push_str(&format!(
                "- when {}: **{}** ({}). XLA: {}\n",
                c.when.name(),
                c.rule.name(),
                escape(&cite_list(c.sources)),
                c.xla_does
            ));
        }
        s.push_str(&format!("- sources: {}\n", escape(&cite_list(row.sources))));
        if !row.note.is_empty() {
            s.push_str(&format!("- note: {}\n", row.note));
        }
        s.push('\n');
    }
    s.push_str("## Measured ulps of approximated functions (XLA CPU)\n\n");
    s.push_str("| op | f64 | f32 | f16, bf16, f8 |\n|---|---|---|---|\n");
    for op in APPROXIMATED_REAL {
        let u = |t| approximation_ulps(*op, t).map_or("-".to_string(), |u| u.to_string());
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            op.name(),
            u(PrimitiveType::F64),
            u(PrimitiveType::F32),
            u(PrimitiveType::Bf16)
        ));
    }
    s.push_str("\n| complex op | normwise ulps |\n|---|---|\n");
    for op in APPROXIMATED_COMPLEX {
        if let Some(u) = normwise_ulps(*op, PrimitiveType::C64) {
            s.push_str(&format!("| {} | {u} |\n", op.name()));
        }
    }
    s
}

/// The list of freedoms with what each allows and who grants it (a section of
/// `docs/semantics.md`, and the list in `docs/judging.md`).
pub fn freedoms_markdown() -> String {
    let mut s = String::from("| freedom | what it allows | granted by |\n|---|---|---|\n");
    for f in Freedom::ALL {
        s.push_str(&format!(
            "| {} | {} | {} |\n",
            f.name(),
            f.describe(),
            escape(&cite_list(f.sources()))
        ));
    }
    s
}

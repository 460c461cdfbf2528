//! HLO opcodes: every opcode XLA's `hlo_opcode.h` lists, with its text name and arity.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An HLO opcode. Variant names follow XLA's `k<Name>` enum without the `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Opcode {
    Abs,
    Acos,
    Acosh,
    Add,
    AddDependency,
    AfterAll,
    AllGather,
    AllGatherDone,
    AllGatherStart,
    AllReduce,
    AllReduceDone,
    AllReduceStart,
    AllToAll,
    And,
    Asin,
    Asinh,
    AsyncDone,
    AsyncStart,
    AsyncUpdate,
    Atan,
    Atan2,
    Atanh,
    BatchNormGrad,
    BatchNormInference,
    BatchNormTraining,
    Bitcast,
    BitcastConvert,
    Broadcast,
    Call,
    Cbrt,
    Ceil,
    Cholesky,
    Clamp,
    Clz,
    CollectiveBroadcast,
    CollectivePermute,
    CollectivePermuteDone,
    CollectivePermuteStart,
    CollectiveReduce,
    Compare,
    Complex,
    Concatenate,
    Conditional,
    Constant,
    Convert,
    Convolution,
    Copy,
    CopyDone,
    CopyStart,
    Cos,
    Cosh,
    CustomCall,
    Divide,
    Domain,
    Dot,
    DynamicReshape,
    DynamicSlice,
    DynamicUpdateSlice,
    Erf,
    Exp,
    Expm1,
    Fft,
    Floor,
    Fusion,
    Gather,
    GetDimensionSize,
    GetTupleElement,
    Imag,
    Infeed,
    Iota,
    IsFinite,
    Log,
    Log1p,
    Logistic,
    Map,
    Maximum,
    Minimum,
    Mulhi,
    Multiply,
    Negate,
    Not,
    OptimizationBarrier,
    Or,
    Outfeed,
    Pad,
    Parameter,
    PartitionId,
    PopulationCount,
    Power,
    RaggedAllToAll,
    RaggedDot,
    Real,
    Recv,
    RecvDone,
    Reduce,
    ReducePrecision,
    ReduceScatter,
    ReduceWindow,
    Remainder,
    ReplicaId,
    Reshape,
    Reverse,
    Rng,
    RngBitGenerator,
    RngGetAndUpdateState,
    RoundNearestAfz,
    RoundNearestEven,
    Rsqrt,
    ScaledDot,
    Scan,
    Scatter,
    Select,
    SelectAndScatter,
    Send,
    SendDone,
    SetDimensionSize,
    ShiftLeft,
    ShiftRightArithmetic,
    ShiftRightLogical,
    Shuffle,
    Sign,
    Sin,
    Sinh,
    Slice,
    Sort,
    Sqrt,
    StochasticConvert,
    Subtract,
    Tan,
    Tanh,
    TopK,
    Transpose,
    TriangularSolve,
    Tuple,
    While,
    Xor,
}

impl Opcode {
    /// Every opcode, in XLA's (sorted) order.
    pub const ALL: [Opcode; 136] = [
        Opcode::Abs,
        Opcode::Acos,
        Opcode::Acosh,
        Opcode::Add,
        Opcode::AddDependency,
        Opcode::AfterAll,
        Opcode::AllGather,
        Opcode::AllGatherDone,
        Opcode::AllGatherStart,
        Opcode::AllReduce,
        Opcode::AllReduceDone,
        Opcode::AllReduceStart,
        Opcode::AllToAll,
        Opcode::And,
        Opcode::Asin,
        Opcode::Asinh,
        Opcode::AsyncDone,
        Opcode::AsyncStart,
        Opcode::AsyncUpdate,
        Opcode::Atan,
        Opcode::Atan2,
        Opcode::Atanh,
        Opcode::BatchNormGrad,
        Opcode::BatchNormInference,
        Opcode::BatchNormTraining,
        Opcode::Bitcast,
        Opcode::BitcastConvert,
        Opcode::Broadcast,
        Opcode::Call,
        Opcode::Cbrt,
        Opcode::Ceil,
        Opcode::Cholesky,
        Opcode::Clamp,
        Opcode::Clz,
        Opcode::CollectiveBroadcast,
        Opcode::CollectivePermute,
        Opcode::CollectivePermuteDone,
        Opcode::CollectivePermuteStart,
        Opcode::CollectiveReduce,
        Opcode::Compare,
        Opcode::Complex,
        Opcode::Concatenate,
        Opcode::Conditional,
        Opcode::Constant,
        Opcode::Convert,
        Opcode::Convolution,
        Opcode::Copy,
        Opcode::CopyDone,
        Opcode::CopyStart,
        Opcode::Cos,
        Opcode::Cosh,
        Opcode::CustomCall,
        Opcode::Divide,
        Opcode::Domain,
        Opcode::Dot,
        Opcode::DynamicReshape,
        Opcode::DynamicSlice,
        Opcode::DynamicUpdateSlice,
        Opcode::Erf,
        Opcode::Exp,
        Opcode::Expm1,
        Opcode::Fft,
        Opcode::Floor,
        Opcode::Fusion,
        Opcode::Gather,
        Opcode::GetDimensionSize,
        Opcode::GetTupleElement,
        Opcode::Imag,
        Opcode::Infeed,
        Opcode::Iota,
        Opcode::IsFinite,
        Opcode::Log,
        Opcode::Log1p,
        Opcode::Logistic,
        Opcode::Map,
        Opcode::Maximum,
        Opcode::Minimum,
        Opcode::Mulhi,
        Opcode::Multiply,
        Opcode::Negate,
        Opcode::Not,
        Opcode::OptimizationBarrier,
        Opcode::Or,
        Opcode::Outfeed,
        Opcode::Pad,
        Opcode::Parameter,
        Opcode::PartitionId,
        Opcode::PopulationCount,
        Opcode::Power,
        Opcode::RaggedAllToAll,
        Opcode::RaggedDot,
        Opcode::Real,
        Opcode::Recv,
        Opcode::RecvDone,
        Opcode::Reduce,
        Opcode::ReducePrecision,
        Opcode::ReduceScatter,
        Opcode::ReduceWindow,
        Opcode::Remainder,
        Opcode::ReplicaId,
        Opcode::Reshape,
        Opcode::Reverse,
        Opcode::Rng,
        Opcode::RngBitGenerator,
        Opcode::RngGetAndUpdateState,
        Opcode::RoundNearestAfz,
        Opcode::RoundNearestEven,
        Opcode::Rsqrt,
        Opcode::ScaledDot,
        Opcode::Scan,
        Opcode::Scatter,
        Opcode::Select,
        Opcode::SelectAndScatter,
        Opcode::Send,
        Opcode::SendDone,
        Opcode::SetDimensionSize,
        Opcode::ShiftLeft,
        Opcode::ShiftRightArithmetic,
        Opcode::ShiftRightLogical,
        Opcode::Shuffle,
        Opcode::Sign,
        Opcode::Sin,
        Opcode::Sinh,
        Opcode::Slice,
        Opcode::Sort,
        Opcode::Sqrt,
        Opcode::StochasticConvert,
        Opcode::Subtract,
        Opcode::Tan,
        Opcode::Tanh,
        Opcode::TopK,
        Opcode::Transpose,
        Opcode::TriangularSolve,
        Opcode::Tuple,
        Opcode::While,
        Opcode::Xor,
    ];

    /// The name HLO text uses (`add`, `get-tuple-element`, `opt-barrier`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Opcode::Abs => "abs",
            Opcode::Acos => "acos",
            Opcode::Acosh => "acosh",
            Opcode::Add => "add",
            Opcode::AddDependency => "add-dependency",
            Opcode::AfterAll => "after-all",
            Opcode::AllGather => "all-gather",
            Opcode::AllGatherDone => "all-gather-done",
            Opcode::AllGatherStart => "all-gather-start",
            Opcode::AllReduce => "all-reduce",
            Opcode::AllReduceDone => "all-reduce-done",
            Opcode::AllReduceStart => "all-reduce-start",
            Opcode::AllToAll => "all-to-all",
            Opcode::And => "and",
            Opcode::Asin => "asin",
            Opcode::Asinh => "asinh",
            Opcode::AsyncDone => "async-done",
            Opcode::AsyncStart => "async-start",
            Opcode::AsyncUpdate => "async-update",
            Opcode::Atan => "atan",
            Opcode::Atan2 => "atan2",
            Opcode::Atanh => "atanh",
            Opcode::BatchNormGrad => "batch-norm-grad",
            Opcode::BatchNormInference => "batch-norm-inference",
            Opcode::BatchNormTraining => "batch-norm-training",
            Opcode::Bitcast => "bitcast",
            Opcode::BitcastConvert => "bitcast-convert",
            Opcode::Broadcast => "broadcast",
            Opcode::Call => "call",
            Opcode::Cbrt => "cbrt",
            Opcode::Ceil => "ceil",
            Opcode::Cholesky => "cholesky",
            Opcode::Clamp => "clamp",
            Opcode::Clz => "count-leading-zeros",
            Opcode::CollectiveBroadcast => "collective-broadcast",
            Opcode::CollectivePermute => "collective-permute",
            Opcode::CollectivePermuteDone => "collective-permute-done",
            Opcode::CollectivePermuteStart => "collective-permute-start",
            Opcode::CollectiveReduce => "collective-reduce",
            Opcode::Compare => "compare",
            Opcode::Complex => "complex",
            Opcode::Concatenate => "concatenate",
            Opcode::Conditional => "conditional",
            Opcode::Constant => "constant",
            Opcode::Convert => "convert",
            Opcode::Convolution => "convolution",
            Opcode::Copy => "copy",
            Opcode::CopyDone => "copy-done",
            Opcode::CopyStart => "copy-start",
            Opcode::Cos => "cosine",
            Opcode::Cosh => "cosh",
            Opcode::CustomCall => "custom-call",
            Opcode::Divide => "divide",
            Opcode::Domain => "domain",
            Opcode::Dot => "dot",
            Opcode::DynamicReshape => "dynamic-reshape",
            Opcode::DynamicSlice => "dynamic-slice",
            Opcode::DynamicUpdateSlice => "dynamic-update-slice",
            Opcode::Erf => "erf",
            Opcode::Exp => "exponential",
            Opcode::Expm1 => "exponential-minus-one",
            Opcode::Fft => "fft",
            Opcode::Floor => "floor",
            Opcode::Fusion => "fusion",
            Opcode::Gather => "gather",
            Opcode::GetDimensionSize => "get-dimension-size",
            Opcode::GetTupleElement => "get-tuple-element",
            Opcode::Imag => "imag",
            Opcode::Infeed => "infeed",
            Opcode::Iota => "iota",
            Opcode::IsFinite => "is-finite",
            Opcode::Log => "log",
            Opcode::Log1p => "log-plus-one",
            Opcode::Logistic => "logistic",
            Opcode::Map => "map",
            Opcode::Maximum => "maximum",
            Opcode::Minimum => "minimum",
            Opcode::Mulhi => "mulhi",
            Opcode::Multiply => "multiply",
            Opcode::Negate => "negate",
            Opcode::Not => "not",
            Opcode::OptimizationBarrier => "opt-barrier",
            Opcode::Or => "or",
            Opcode::Outfeed => "outfeed",
            Opcode::Pad => "pad",
            Opcode::Parameter => "parameter",
            Opcode::PartitionId => "partition-id",
            Opcode::PopulationCount => "popcnt",
            Opcode::Power => "power",
            Opcode::RaggedAllToAll => "ragged-all-to-all",
            Opcode::RaggedDot => "ragged-dot",
            Opcode::Real => "real",
            Opcode::Recv => "recv",
            Opcode::RecvDone => "recv-done",
            Opcode::Reduce => "reduce",
            Opcode::ReducePrecision => "reduce-precision",
            Opcode::ReduceScatter => "reduce-scatter",
            Opcode::ReduceWindow => "reduce-window",
            Opcode::Remainder => "remainder",
            Opcode::ReplicaId => "replica-id",
            Opcode::Reshape => "reshape",
            Opcode::Reverse => "reverse",
            Opcode::Rng => "rng",
            Opcode::RngBitGenerator => "rng-bit-generator",
            Opcode::RngGetAndUpdateState => "rng-get-and-update-state",
            Opcode::RoundNearestAfz => "round-nearest-afz",
            Opcode::RoundNearestEven => "round-nearest-even",
            Opcode::Rsqrt => "rsqrt",
            Opcode::ScaledDot => "scaled-dot",
            Opcode::Scan => "scan",
            Opcode::Scatter => "scatter",
            Opcode::Select => "select",
            Opcode::SelectAndScatter => "select-and-scatter",
            Opcode::Send => "send",
            Opcode::SendDone => "send-done",
            Opcode::SetDimensionSize => "set-dimension-size",
            Opcode::ShiftLeft => "shift-left",
            Opcode::ShiftRightArithmetic => "shift-right-arithmetic",
            Opcode::ShiftRightLogical => "shift-right-logical",
            Opcode::Shuffle => "shuffle",
            Opcode::Sign => "sign",
            Opcode::Sin => "sine",
            Opcode::Sinh => "sinh",
            Opcode::Slice => "slice",
            Opcode::Sort => "sort",
            Opcode::Sqrt => "sqrt",
            Opcode::StochasticConvert => "stochastic-convert",
            Opcode::Subtract => "subtract",
            Opcode::Tan => "tan",
            Opcode::Tanh => "tanh",
            Opcode::TopK => "topk",
            Opcode::Transpose => "transpose",
            Opcode::TriangularSolve => "triangular-solve",
            Opcode::Tuple => "tuple",
            Opcode::While => "while",
            Opcode::Xor => "xor",
        }
    }

    pub fn from_name(s: &str) -> Option<Opcode> {
        Some(match s {
            "abs" => Opcode::Abs,
            "acos" => Opcode::Acos,
            "acosh" => Opcode::Acosh,
            "add" => Opcode::Add,
            "add-dependency" => Opcode::AddDependency,
            "after-all" => Opcode::AfterAll,
            "all-gather" => Opcode::AllGather,
            "all-gather-done" => Opcode::AllGatherDone,
            "all-gather-start" => Opcode::AllGatherStart,
            "all-reduce" => Opcode::AllReduce,
            "all-reduce-done" => Opcode::AllReduceDone,
            "all-reduce-start" => Opcode::AllReduceStart,
            "all-to-all" => Opcode::AllToAll,
            "and" => Opcode::And,
            "asin" => Opcode::Asin,
            "asinh" => Opcode::Asinh,
            "async-done" => Opcode::AsyncDone,
            "async-start" => Opcode::AsyncStart,
            "async-update" => Opcode::AsyncUpdate,
            "atan" => Opcode::Atan,
            "atan2" => Opcode::Atan2,
            "atanh" => Opcode::Atanh,
            "batch-norm-grad" => Opcode::BatchNormGrad,
            "batch-norm-inference" => Opcode::BatchNormInference,
            "batch-norm-training" => Opcode::BatchNormTraining,
            "bitcast" => Opcode::Bitcast,
            "bitcast-convert" => Opcode::BitcastConvert,
            "broadcast" => Opcode::Broadcast,
            "call" => Opcode::Call,
            "cbrt" => Opcode::Cbrt,
            "ceil" => Opcode::Ceil,
            "cholesky" => Opcode::Cholesky,
            "clamp" => Opcode::Clamp,
            "count-leading-zeros" => Opcode::Clz,
            "collective-broadcast" => Opcode::CollectiveBroadcast,
            "collective-permute" => Opcode::CollectivePermute,
            "collective-permute-done" => Opcode::CollectivePermuteDone,
            "collective-permute-start" => Opcode::CollectivePermuteStart,
            "collective-reduce" => Opcode::CollectiveReduce,
            "compare" => Opcode::Compare,
            "complex" => Opcode::Complex,
            "concatenate" => Opcode::Concatenate,
            "conditional" => Opcode::Conditional,
            "constant" => Opcode::Constant,
            "convert" => Opcode::Convert,
            "convolution" => Opcode::Convolution,
            "copy" => Opcode::Copy,
            "copy-done" => Opcode::CopyDone,
            "copy-start" => Opcode::CopyStart,
            "cosine" => Opcode::Cos,
            "cosh" => Opcode::Cosh,
            "custom-call" => Opcode::CustomCall,
            "divide" => Opcode::Divide,
            "domain" => Opcode::Domain,
            "dot" => Opcode::Dot,
            "dynamic-reshape" => Opcode::DynamicReshape,
            "dynamic-slice" => Opcode::DynamicSlice,
            "dynamic-update-slice" => Opcode::DynamicUpdateSlice,
            "erf" => Opcode::Erf,
            "exponential" => Opcode::Exp,
            "exponential-minus-one" => Opcode::Expm1,
            "fft" => Opcode::Fft,
            "floor" => Opcode::Floor,
            "fusion" => Opcode::Fusion,
            "gather" => Opcode::Gather,
            "get-dimension-size" => Opcode::GetDimensionSize,
            "get-tuple-element" => Opcode::GetTupleElement,
            "imag" => Opcode::Imag,
            "infeed" => Opcode::Infeed,
            "iota" => Opcode::Iota,
            "is-finite" => Opcode::IsFinite,
            "log" => Opcode::Log,
            "log-plus-one" => Opcode::Log1p,
            "logistic" => Opcode::Logistic,
            "map" => Opcode::Map,
            "maximum" => Opcode::Maximum,
            "minimum" => Opcode::Minimum,
            "mulhi" => Opcode::Mulhi,
            "multiply" => Opcode::Multiply,
            "negate" => Opcode::Negate,
            "not" => Opcode::Not,
            "opt-barrier" => Opcode::OptimizationBarrier,
            "or" => Opcode::Or,
            "outfeed" => Opcode::Outfeed,
            "pad" => Opcode::Pad,
            "parameter" => Opcode::Parameter,
            "partition-id" => Opcode::PartitionId,
            "popcnt" => Opcode::PopulationCount,
            "power" => Opcode::Power,
            "ragged-all-to-all" => Opcode::RaggedAllToAll,
            "ragged-dot" => Opcode::RaggedDot,
            "real" => Opcode::Real,
            "recv" => Opcode::Recv,
            "recv-done" => Opcode::RecvDone,
            "reduce" => Opcode::Reduce,
            "reduce-precision" => Opcode::ReducePrecision,
            "reduce-scatter" => Opcode::ReduceScatter,
            "reduce-window" => Opcode::ReduceWindow,
            "remainder" => Opcode::Remainder,
            "replica-id" => Opcode::ReplicaId,
            "reshape" => Opcode::Reshape,
            "reverse" => Opcode::Reverse,
            "rng" => Opcode::Rng,
            "rng-bit-generator" => Opcode::RngBitGenerator,
            "rng-get-and-update-state" => Opcode::RngGetAndUpdateState,
            "round-nearest-afz" => Opcode::RoundNearestAfz,
            "round-nearest-even" => Opcode::RoundNearestEven,
            "rsqrt" => Opcode::Rsqrt,
            "scaled-dot" => Opcode::ScaledDot,
            "scan" => Opcode::Scan,
            "scatter" => Opcode::Scatter,
            "select" => Opcode::Select,
            "select-and-scatter" => Opcode::SelectAndScatter,
            "send" => Opcode::Send,
            "send-done" => Opcode::SendDone,
            "set-dimension-size" => Opcode::SetDimensionSize,
            "shift-left" => Opcode::ShiftLeft,
            "shift-right-arithmetic" => Opcode::ShiftRightArithmetic,
            "shift-right-logical" => Opcode::ShiftRightLogical,
            "shuffle" => Opcode::Shuffle,
            "sign" => Opcode::Sign,
            "sine" => Opcode::Sin,
            "sinh" => Opcode::Sinh,
            "slice" => Opcode::Slice,
            "sort" => Opcode::Sort,
            "sqrt" => Opcode::Sqrt,
            "stochastic-convert" => Opcode::StochasticConvert,
            "subtract" => Opcode::Subtract,
            "tan" => Opcode::Tan,
            "tanh" => Opcode::Tanh,
            "topk" => Opcode::TopK,
            "transpose" => Opcode::Transpose,
            "triangular-solve" => Opcode::TriangularSolve,
            "tuple" => Opcode::Tuple,
            "while" => Opcode::While,
            "xor" => Opcode::Xor,
            _ => return None,
        })
    }

    /// Number of operands, or `None` for variadic opcodes.
    pub fn arity(self) -> Option<usize> {
        match self {
            Opcode::Abs
            | Opcode::Acos
            | Opcode::Acosh
            | Opcode::AllGatherDone
            | Opcode::AllReduceDone
            | Opcode::Asin
            | Opcode::Asinh
            | Opcode::AsyncDone
            | Opcode::Atan
            | Opcode::Atanh
            | Opcode::Bitcast
            | Opcode::BitcastConvert
            | Opcode::Broadcast
            | Opcode::Cbrt
            | Opcode::Ceil
            | Opcode::Cholesky
            | Opcode::Clz
            | Opcode::CollectivePermuteDone
            | Opcode::Convert
            | Opcode::Copy
            | Opcode::CopyDone
            | Opcode::CopyStart
            | Opcode::Cos
            | Opcode::Cosh
            | Opcode::Domain
            | Opcode::Erf
            | Opcode::Exp
            | Opcode::Expm1
            | Opcode::Fft
            | Opcode::Floor
            | Opcode::GetDimensionSize
            | Opcode::GetTupleElement
            | Opcode::Imag
            | Opcode::Infeed
            | Opcode::IsFinite
            | Opcode::Log
            | Opcode::Log1p
            | Opcode::Logistic
            | Opcode::Negate
            | Opcode::Not
            | Opcode::OptimizationBarrier
            | Opcode::PopulationCount
            | Opcode::Real
            | Opcode::Recv
            | Opcode::RecvDone
            | Opcode::ReducePrecision
            | Opcode::Reshape
            | Opcode::Reverse
            | Opcode::RngBitGenerator
            | Opcode::RoundNearestAfz
            | Opcode::RoundNearestEven
            | Opcode::Rsqrt
            | Opcode::SendDone
            | Opcode::Shuffle
            | Opcode::Sign
            | Opcode::Sin
            | Opcode::Sinh
            | Opcode::Slice
            | Opcode::Sqrt
            | Opcode::Tan
            | Opcode::Tanh
            | Opcode::TopK
            | Opcode::Transpose
            | Opcode::While => Some(1),
            Opcode::Add
            | Opcode::AddDependency
            | Opcode::And
            | Opcode::Atan2
            | Opcode::Compare
            | Opcode::Complex
            | Opcode::Divide
            | Opcode::Dot
            | Opcode::Gather
            | Opcode::Maximum
            | Opcode::Minimum
            | Opcode::Mulhi
            | Opcode::Multiply
            | Opcode::Or
            | Opcode::Outfeed
            | Opcode::Pad
            | Opcode::Power
            | Opcode::Remainder
            | Opcode::Send
            | Opcode::SetDimensionSize
            | Opcode::ShiftLeft
            | Opcode::ShiftRightArithmetic
            | Opcode::ShiftRightLogical
            | Opcode::StochasticConvert
            | Opcode::Subtract
            | Opcode::TriangularSolve
            | Opcode::Xor => Some(2),
            Opcode::AfterAll
            | Opcode::AllGather
            | Opcode::AllGatherStart
            | Opcode::AllReduce
            | Opcode::AllReduceStart
            | Opcode::AllToAll
            | Opcode::AsyncStart
            | Opcode::AsyncUpdate
            | Opcode::Call
            | Opcode::CollectiveBroadcast
            | Opcode::CollectivePermute
            | Opcode::CollectivePermuteStart
            | Opcode::CollectiveReduce
            | Opcode::Concatenate
            | Opcode::Conditional
            | Opcode::Convolution
            | Opcode::CustomCall
            | Opcode::DynamicReshape
            | Opcode::DynamicSlice
            | Opcode::DynamicUpdateSlice
            | Opcode::Fusion
            | Opcode::Map
            | Opcode::Reduce
            | Opcode::ReduceScatter
            | Opcode::ReduceWindow
            | Opcode::Rng
            | Opcode::Scan
            | Opcode::Scatter
            | Opcode::Sort
            | Opcode::Tuple => None,
            Opcode::BatchNormGrad | Opcode::BatchNormInference => Some(5),
            Opcode::BatchNormTraining
            | Opcode::Clamp
            | Opcode::RaggedDot
            | Opcode::Select
            | Opcode::SelectAndScatter => Some(3),
            Opcode::Constant
            | Opcode::Iota
            | Opcode::Parameter
            | Opcode::PartitionId
            | Opcode::ReplicaId
            | Opcode::RngGetAndUpdateState => Some(0),
            Opcode::RaggedAllToAll => Some(6),
            Opcode::ScaledDot => Some(4),
        }
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
}

//! `hlo`: the HLO IR, XLA's text format (parser and printer), the verifier and the
//! XLA dump-directory reader. Knows nothing of backends or Python.

pub mod dump;
pub mod edit;
pub mod fuzzing;
pub mod ir;
pub mod literal;
pub mod opcode;
pub mod parse;
pub mod print;
pub mod proto;
pub mod semantics;
pub mod shape;
pub mod sharding;
pub mod types;
pub mod verify;

pub use ir::{
    Attr, CompId, Computation, Constant, ConvDimLabels, InstrId, Instruction, Module, PaddingDim,
    SliceDim, SourcePos, Window, WindowDim,
};
pub use literal::{ArrayLiteral, Literal, LiteralError, Scalar};
pub use opcode::{Category, ElementTypes, OpInfo, Opcode};
pub use shape::{ArrayShape, Layout, Shape};
pub use types::{PrimitiveType, TypeClass};

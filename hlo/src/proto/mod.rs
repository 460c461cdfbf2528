//! XLA's binary module format: an `xla.HloModuleProto`, as `--xla_dump_hlo_as_proto` writes it
//! (`*.hlo.pb`), as `run_hlo_module --input_format=pb` reads it and as a PJRT plugin compiles it
//! (program format `"hlo"`).
//!
//! [`module_to_proto`] writes one from a [`Module`] and [`module_from_proto`] reads one back;
//! [`encode_module`] / [`decode_module`] do the same with the serialized bytes. The messages are
//! hand-written `prost` structs ([`messages`]) with the field numbers of XLA's `hlo.proto` and
//! `xla_data.proto`, so no protobuf compiler is needed.
//!
//! What the text keeps verbatim and the proto has fields for (metadata, frontend attributes,
//! backend configs, shardings of the simple kinds, precision configs, output/operand aliasing,
//! operand layout constraints, result accuracy) is converted both ways; anything else that the
//! proto cannot carry is an [`ProtoError::Unsupported`] rather than silently dropped, except
//! what only tools read (`statistics`, `origin`), which is left out.

pub mod messages;
mod raw;
mod read;
mod write;

pub use messages::*;
pub use read::{module_from_proto, shape_from_proto};
pub use write::{module_to_proto, shape_to_proto};

use crate::ir::Module;
use crate::types::PrimitiveType;
use prost::Message;

/// Why a module could not be written as, or read from, a proto.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProtoError {
    /// Something the module holds that this writer cannot express (or a proto field this reader
    /// does not know how to turn into HLO text).
    #[error("{0}")]
    Unsupported(String),
    /// An attribute whose text the writer could not read.
    #[error("attribute {0}: {1}")]
    Attr(String, String),
    /// The bytes are not an HloModuleProto, or it is inconsistent (ids that point nowhere).
    #[error("malformed HloModuleProto: {0}")]
    Malformed(String),
}

/// The serialized `HloModuleProto` of a module.
pub fn encode_module(m: &Module) -> Result<Vec<u8>, ProtoError> {
    Ok(module_to_proto(m)?.encode_to_vec())
}

/// A module from a serialized `HloModuleProto` (an `.hlo.pb` file's bytes).
pub fn decode_module(bytes: &[u8]) -> Result<Module, ProtoError> {
    let p = HloModuleProto::decode(bytes).map_err(|e| ProtoError::Malformed(e.to_string()))?;
    module_from_proto(&p)
}

/// A module from a serialized `HloModuleProtoWithConfig` (program format `"hlo_with_config"`).
pub fn decode_module_with_config(bytes: &[u8]) -> Result<Module, ProtoError> {
    let p = HloModuleProtoWithConfig::decode(bytes)
        .map_err(|e| ProtoError::Malformed(e.to_string()))?;
    module_from_proto(
        p.hlo_module
            .as_ref()
            .ok_or_else(|| ProtoError::Malformed("no hlo_module".into()))?,
    )
}

/// Whether bytes are a serialized `HloModuleProto` (an `.hlo.pb` dump) rather than HLO text:
/// they start with field 1 (`name`, a length-delimited string, byte 0x0a), decode, and hold a
/// computation; text starts with `HloModule` (after any blank lines, which no proto decodes
/// into computations).
pub fn looks_like_module_proto(bytes: &[u8]) -> bool {
    bytes.first() == Some(&0x0a)
        && HloModuleProto::decode(bytes).is_ok_and(|p| !p.computations.is_empty())
}

/// `xla.PrimitiveType`'s number for an element type.
pub fn type_number(t: PrimitiveType) -> i32 {
    use PrimitiveType::*;
    match t {
        Pred => 1,
        S1 => 30,
        S2 => 26,
        S4 => 21,
        S8 => 2,
        S16 => 3,
        S32 => 4,
        S64 => 5,
        U1 => 31,
        U2 => 27,
        U4 => 22,
        U8 => 6,
        U16 => 7,
        U32 => 8,
        U64 => 9,
        F16 => 10,
        F32 => 11,
        Bf16 => 16,
        F64 => 12,
        F8E5M2 => 19,
        F8E4M3 => 28,
        F8E4M3FN => 20,
        F8E4M3B11FNUZ => 23,
        F8E3M4 => 29,
        F8E5M2FNUZ => 24,
        F8E4M3FNUZ => 25,
        F4E2M1FN => 32,
        F8E8M0FNU => 33,
        C64 => 15,
        C128 => 18,
        Opaque => 14,
        Token => 17,
    }
}

/// `xla.PrimitiveType` number 13.
pub const TUPLE_TYPE: i32 = 13;

/// The element type of an `xla.PrimitiveType` number (not tuple).
pub fn type_of_number(n: i32) -> Option<PrimitiveType> {
    PrimitiveType::ALL_ARRAY
        .into_iter()
        .chain([PrimitiveType::Token, PrimitiveType::Opaque])
        .find(|&t| type_number(t) == n)
}

#[cfg(test)]
mod tests;

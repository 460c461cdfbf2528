use super::*;
use crate::parse::parse_module;
use crate::print::module_to_string;

fn round_trip(text: &str) -> (Module, Module) {
    let m = parse_module(text).unwrap();
    let bytes = encode_module(&m).unwrap();
    let back = decode_module(&bytes).unwrap();
    (m, back)
}

#[test]
fn a_module_reads_back_from_its_own_proto() {
    let text = "HloModule m, entry_computation_layout={(f32[2,3]{0,1}, s32[])->(f32[3,2]{1,0}, s4[2]{0})}\n\n\
%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n\n\
ENTRY %e (p: f32[2,3], q: s32[]) -> (f32[3,2], s4[2]) {\n  %p = f32[2,3]{0,1} parameter(0)\n  %q = s32[] parameter(1)\n\
  %t = f32[3,2]{1,0} transpose(%p), dimensions={1,0}, metadata={op_name=\"x\" source_line=3}\n\
  %c = f32[2,3]{0,1} constant({ { 1, 2, 3 }, { 4, 5, -0.0 } })\n  %z = f32[] constant(0)\n\
  %r = f32[2]{0} reduce(%c, %z), dimensions={1}, to_apply=%add\n\
  %k = s4[2]{0} constant({-8, 7})\n  ROOT %o = (f32[3,2]{1,0}, s4[2]{0}) tuple(%t, %k)\n}\n";
    let (m, back) = round_trip(text);
    let a = module_to_string(&m);
    let b = module_to_string(&back);
    // Same computations, instructions, shapes, constants and typed attributes.
    for (c1, c2) in m.computations.iter().zip(&back.computations) {
        for (i1, i2) in c1.instructions.iter().zip(&c2.instructions) {
            assert_eq!(i1.name, i2.name);
            assert_eq!(i1.opcode, i2.opcode);
            assert_eq!(i1.constant, i2.constant, "{}", i1.name);
            assert_eq!(i1.operands, i2.operands);
        }
    }
    assert!(b.contains("%t = f32[3,2]{1,0} transpose(%p), dimensions={1,0}, metadata={op_name=\"x\" source_line=3}"), "{b}");
    assert!(
        b.contains("entry_computation_layout={(f32[2,3]{0,1}, s32[])->(f32[3,2]{1,0}, s4[2]{0})}"),
        "{a}\n{b}"
    );
    assert!(b.contains("to_apply=%add"), "{b}");
}

#[test]
fn what_the_proto_cannot_carry_is_an_error_not_a_loss() {
    let m = parse_module("HloModule m\nENTRY e {\n  ROOT c = f32[4] constant({...})\n}\n").unwrap();
    assert!(matches!(encode_module(&m), Err(ProtoError::Unsupported(_))));
    let m = parse_module("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] negate(p), some_new_attr={1}\n}\n").unwrap();
    assert!(matches!(encode_module(&m), Err(ProtoError::Unsupported(_))));
    assert!(matches!(
        decode_module(b"\x0a\x05ab"),
        Err(ProtoError::Malformed(_))
    ));
}

/// Tiled shardings (what jax writes for a program sharded over devices) go to `OpSharding`
/// and back to the text XLA prints: the tile assignment as an iota (reshaped, transposed) or a
/// device list, a replicated last tile dimension, last tile dimensions of other kinds.
#[test]
fn tiled_shardings_round_trip_through_op_sharding() {
    for text in [
        "{devices=[2,1]<=[2]}",
        "{devices=[2,2]<=[2,2]T(1,0)}",
        "{devices=[2,1]1,0}",
        "{devices=[1,4,1,2]<=[8] last_tile_dim_replicate}",
        "{devices=[1,2,2]<=[4] last_tile_dims={manual}}",
        "{devices=[2,1,2]<=[4] last_tile_dims={manual, replicated}}",
        "{{devices=[2,1]<=[2]}, {replicated}}",
    ] {
        let s = super::write::sharding(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(super::read::sharding_text(&s).unwrap(), text);
    }
    let s = super::write::sharding("{devices=[2,2]<=[2,2]T(1,0)}").unwrap();
    assert_eq!(s.r#type, 3);
    assert_eq!(s.tile_assignment_dimensions, vec![2, 2]);
    assert_eq!(s.iota_reshape_dims, vec![2, 2]);
    assert_eq!(s.iota_transpose_perm, vec![1, 0]);
    assert!(super::write::sharding("{devices=[2]<=[2] metadata={op_name=\"x\"}}").is_err());
}

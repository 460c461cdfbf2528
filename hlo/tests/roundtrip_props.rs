//! Property tests of the text format: print -> parse -> print is a fixpoint on every corpus
//! module, and every bit pattern of every float type survives print -> parse exactly.

mod common;

use common::{corpus_files, read_text};
use hlo::parse::parse_module;
use hlo::print::module_to_string;
use hlo::{ArrayLiteral, Constant, Literal, PrimitiveType};
use proptest::prelude::*;
use std::sync::OnceLock;

fn corpus_texts() -> &'static Vec<String> {
    static T: OnceLock<Vec<String>> = OnceLock::new();
    T.get_or_init(|| corpus_files().iter().map(|p| read_text(p)).collect())
}

/// A one-constant module holding `lit`.
fn constant_module(ty: PrimitiveType, bytes: Vec<u8>) -> String {
    let n = bytes.len() / ty.byte_size();
    let lit = ArrayLiteral::from_bytes(ty, vec![n as i64], bytes).unwrap();
    format!(
        "HloModule m\nENTRY %e () -> {t}[{n}] {{\n  ROOT %c = {t}[{n}] constant({l})\n}}\n",
        t = ty.name(),
        l = hlo::print::literal_to_string(&Literal::Array(lit))
    )
}

fn constant_bytes(text: &str) -> Vec<u8> {
    let m = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    match &m.computations[0].instructions[0].constant {
        Some(Constant::Literal(Literal::Array(a))) => a.data.clone(),
        other => panic!("{other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn printing_a_parsed_corpus_module_is_a_fixpoint(i in 0usize..10_000) {
        let texts = corpus_texts();
        prop_assume!(!texts.is_empty());
        let text = &texts[i % texts.len()];
        let m = parse_module(text).unwrap();
        let once = module_to_string(&m);
        let m2 = parse_module(&once).unwrap();
        prop_assert_eq!(&m2, &m);
        prop_assert_eq!(module_to_string(&m2), once);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn f32_f64_bit_patterns_round_trip(a in any::<u32>(), b in any::<u64>()) {
        let t = constant_module(PrimitiveType::F32, a.to_le_bytes().to_vec());
        prop_assert_eq!(constant_bytes(&t), a.to_le_bytes().to_vec(), "{}", t);
        let t = constant_module(PrimitiveType::F64, b.to_le_bytes().to_vec());
        prop_assert_eq!(constant_bytes(&t), b.to_le_bytes().to_vec(), "{}", t);
        let c = [a.to_le_bytes(), (a ^ 0x8000_0001).to_le_bytes()].concat();
        let t = constant_module(PrimitiveType::C64, c.clone());
        prop_assert_eq!(constant_bytes(&t), c, "{}", t);
    }

    #[test]
    fn half_precision_bit_patterns_round_trip(a in any::<u16>()) {
        for ty in [PrimitiveType::F16, PrimitiveType::Bf16] {
            let t = constant_module(ty, a.to_le_bytes().to_vec());
            prop_assert_eq!(constant_bytes(&t), a.to_le_bytes().to_vec(), "{}", t);
        }
    }

    #[test]
    fn integer_values_round_trip(a in any::<i64>(), b in any::<u64>()) {
        let t = constant_module(PrimitiveType::S64, a.to_le_bytes().to_vec());
        prop_assert_eq!(constant_bytes(&t), a.to_le_bytes().to_vec());
        let t = constant_module(PrimitiveType::U64, b.to_le_bytes().to_vec());
        prop_assert_eq!(constant_bytes(&t), b.to_le_bytes().to_vec());
    }
}

#[test]
fn every_eight_and_four_bit_float_pattern_round_trips() {
    use PrimitiveType::*;
    for ty in [
        F8E5M2,
        F8E4M3,
        F8E4M3FN,
        F8E4M3B11FNUZ,
        F8E3M4,
        F8E5M2FNUZ,
        F8E4M3FNUZ,
        F8E8M0FNU,
        F4E2M1FN,
    ] {
        let bytes: Vec<u8> = if ty == F4E2M1FN {
            (0u8..16).collect()
        } else {
            (0u8..=255).collect()
        };
        let t = constant_module(ty, bytes.clone());
        assert_eq!(constant_bytes(&t), bytes, "{}", t);
    }
}

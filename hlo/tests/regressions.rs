//! The crash-regression modules in `corpora/regressions/` (inputs that crash, hang or are
//! rejected by XLA) all parse; the verifier rejects every invalid one with a message naming the
//! broken rule, and accepts the control case.

mod common;

use common::corpora_dir;
use hlo::parse::parse_module;
use hlo::verify::verify_module;

fn load(name: &str) -> hlo::Module {
    let p = corpora_dir().join("regressions").join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    parse_module(&text).unwrap_or_else(|e| panic!("{}:{e}", p.display()))
}

fn rejected(name: &str, needle: &str) {
    let m = load(name);
    match verify_module(&m) {
        Ok(()) => panic!("{name}: the verifier accepted an invalid module"),
        Err(e) => assert!(
            e.to_string().contains(needle),
            "{name}: expected an error mentioning {needle:?}, got: {e}"
        ),
    }
}

#[test]
fn control_case_verifies() {
    verify_module(&load("ok_negate.hlo")).unwrap();
}

#[test]
fn invalid_regressions_are_rejected_with_the_broken_rule() {
    rejected("gte_index1_on_1tuple.hlo", "out of range");
    rejected("gte_index3_on_1tuple.hlo", "out of range");
    rejected("gte_of_array.hlo", "tuple operand");
    rejected("only_param1.hlo", "parameter numbers");
    rejected("reshape_5_from_4.hlo", "element count");
    rejected("add_shape_mismatch.hlo", "same shape");
}

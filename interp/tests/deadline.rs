//! An evaluation past its deadline ends as a budget error, whatever its step budget.

use hlo::{ArrayLiteral, Literal, PrimitiveType, Scalar};
use interp::{evaluate_with, EvalError, EvalOptions};

#[test]
fn an_evaluation_past_its_deadline_ends_as_a_budget_error() {
    let m = hlo::parse::parse_module(
        "HloModule hang\n\n%cond (s: s32[]) -> pred[] {\n  %s = s32[] parameter(0)\n  ROOT %t = pred[] constant(true)\n}\n\n%body (s: s32[]) -> s32[] {\n  %s = s32[] parameter(0)\n  %one = s32[] constant(1)\n  ROOT %n = s32[] add(%s, %one)\n}\n\nENTRY %main (a: s32[]) -> s32[] {\n  %a = s32[] parameter(0)\n  ROOT %w = s32[] while(%a), condition=%cond, body=%body\n}\n",
    )
    .unwrap();
    let zero = Literal::Array(
        ArrayLiteral::from_scalars(PrimitiveType::S32, vec![], &[Scalar::S(0)]).unwrap(),
    );
    let opts = EvalOptions {
        max_steps: u64::MAX,
        deadline: Some(std::time::Instant::now()),
        ..EvalOptions::default()
    };
    match evaluate_with(&m, &[zero.clone()], &opts) {
        Err(EvalError::Budget { what }) => assert!(what.contains("deadline"), "{what}"),
        other => panic!("{other:?}"),
    }
    // Without one, the step budget ends it.
    let opts = EvalOptions {
        max_steps: 100_000,
        ..EvalOptions::default()
    };
    match evaluate_with(&m, &[zero], &opts) {
        Err(EvalError::Budget { what }) => assert!(what.contains("steps"), "{what}"),
        other => panic!("{other:?}"),
    }
}

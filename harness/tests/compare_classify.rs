//! The classifier (harness::classify): every verdict from constructed outcomes, precedence,
//! and the voter's labels.

use harness::backend::{Outcome, RunResult, Stage, Timings};
use harness::classify::{classify, Evidence, Label, VerdictKind};
use harness::compare::Tolerance;
use hlo::{ArrayLiteral, Literal, PrimitiveType, Scalar};

fn ok(vals: &[f64]) -> Outcome {
    let a = ArrayLiteral::from_scalars(
        PrimitiveType::F32,
        vec![vals.len() as i64],
        &vals.iter().map(|v| Scalar::F(*v)).collect::<Vec<_>>(),
    )
    .unwrap();
    Outcome::Ok(RunResult {
        outputs: vec![Literal::Array(a)],
        result_shape: None,
        timings: Timings::default(),
        optimized_hlo: None,
        before_optimizations_hlo: None,
        dump_dir: None,
    })
}

fn runs(interp: Outcome, xla: Outcome) -> Vec<(String, Outcome)> {
    vec![("interp".into(), interp), ("xla-cpu".into(), xla)]
}

#[test]
fn agreement_is_a_match() {
    let t = Tolerance::default();
    let v = classify(&runs(ok(&[1.0, 2.0]), ok(&[1.0, 2.0])), &Evidence::new(&t));
    assert_eq!(v.kind, VerdictKind::Match);
    assert!(!v.is_bug());
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["verdict"], "match");
}

#[test]
fn a_difference_is_a_mismatch_labelled_by_the_voter() {
    let t = Tolerance::default();
    let outcomes = runs(ok(&[1.0, 2.0]), ok(&[1.0, 5.0]));
    let v = classify(&outcomes, &Evidence::new(&t));
    assert_eq!(v.kind, VerdictKind::Mismatch);
    assert_eq!(v.backend.as_deref(), Some("xla-cpu"));
    assert_eq!(v.label, Some(Label::Undecided));
    assert_eq!(v.mismatched_outputs, vec![0]);
    assert!(v.is_bug());
    assert_eq!(serde_json::to_value(&v).unwrap()["verdict"], "mismatch");

    let voter_oracle = ok(&[1.0, 2.0]);
    let v = classify(
        &outcomes,
        &Evidence {
            voter: Some(&voter_oracle),
            ..Evidence::new(&t)
        },
    );
    assert_eq!(
        v.label,
        Some(Label::Xla),
        "voter agrees with the oracle: XLA is wrong"
    );

    let voter_xla = ok(&[1.0, 5.0]);
    let v = classify(
        &outcomes,
        &Evidence {
            voter: Some(&voter_xla),
            ..Evidence::new(&t)
        },
    );
    assert_eq!(
        v.label,
        Some(Label::Oracle),
        "voter agrees with XLA: the oracle is wrong"
    );

    let voter_neither = ok(&[1.0, 7.0]);
    let v = classify(
        &outcomes,
        &Evidence {
            voter: Some(&voter_neither),
            ..Evidence::new(&t)
        },
    );
    assert_eq!(v.label, Some(Label::Undecided));

    let voter_failed = Outcome::Unsupported {
        what: "mhlo.erf".into(),
    };
    let v = classify(
        &outcomes,
        &Evidence {
            voter: Some(&voter_failed),
            ..Evidence::new(&t)
        },
    );
    assert_eq!(v.label, Some(Label::Undecided));
    assert!(v.vote.unwrap().contains("could not run"));

    // stablehlo-ref listed among the outcomes votes too, and never makes a verdict alone.
    let mut with_voter = outcomes.clone();
    with_voter.push(("stablehlo-ref".into(), ok(&[1.0, 2.0])));
    assert_eq!(
        classify(&with_voter, &Evidence::new(&t)).label,
        Some(Label::Xla)
    );
    let mut voter_crash = runs(ok(&[1.0]), ok(&[1.0]));
    voter_crash.push((
        "stablehlo-ref".into(),
        Outcome::Crash {
            stage: Stage::Execute,
            signal: Some(6),
            stderr_tail: "LLVM ERROR".into(),
        },
    ));
    assert_eq!(
        classify(&voter_crash, &Evidence::new(&t)).kind,
        VerdictKind::Match
    );
}

#[test]
fn crashes_come_first_with_stage_and_signal() {
    let t = Tolerance::default();
    let crash = Outcome::Crash {
        stage: Stage::Compile,
        signal: Some(11),
        stderr_tail: "some noise\nF0000 00:00 hlo_instruction.cc:123] Check failed: x == y\n*** Check failure stack trace: ***".into(),
    };
    let v = classify(&runs(ok(&[1.0]), crash), &Evidence::new(&t));
    assert_eq!(v.kind, VerdictKind::Crash);
    assert_eq!(v.stage, Some(Stage::Compile));
    assert_eq!(v.signal, Some(11));
    assert_eq!(v.label, Some(Label::Xla));
    assert!(v.message.contains("Check failed"), "{}", v.message);
    assert_eq!(v.short(), "crash(compile, SIGSEGV) on xla-cpu [xla]");
    // Even when the oracle cannot run the module.
    let v = classify(
        &runs(
            Outcome::Unsupported { what: "fft".into() },
            Outcome::Crash {
                stage: Stage::Execute,
                signal: Some(6),
                stderr_tail: String::new(),
            },
        ),
        &Evidence::new(&t),
    );
    assert_eq!(v.kind, VerdictKind::Crash);
    // The oracle crashing (a caught panic) is the oracle's bug.
    let v = classify(
        &runs(
            Outcome::Crash {
                stage: Stage::Execute,
                signal: None,
                stderr_tail: "internal interpreter error: index out of bounds".into(),
            },
            ok(&[1.0]),
        ),
        &Evidence::new(&t),
    );
    assert_eq!((v.kind, v.label), (VerdictKind::Crash, Some(Label::Oracle)));
}

#[test]
fn timeouts_rejections_and_unsupported() {
    let t = Tolerance::default();
    let v = classify(
        &runs(
            ok(&[1.0]),
            Outcome::Timeout {
                stage: Stage::Compile,
            },
        ),
        &Evidence::new(&t),
    );
    assert_eq!(
        (v.kind, v.stage),
        (VerdictKind::Timeout, Some(Stage::Compile))
    );
    assert_eq!(serde_json::to_value(&v).unwrap()["verdict"], "timeout");

    let v = classify(
        &runs(
            ok(&[1.0]),
            Outcome::Rejected {
                stage: Stage::Convert,
                message: "error: 'stablehlo.add' op requires the same type".into(),
            },
        ),
        &Evidence::new(&t),
    );
    assert_eq!(
        (v.kind, v.stage, v.label),
        (
            VerdictKind::Rejected,
            Some(Stage::Convert),
            Some(Label::Xla)
        )
    );
    assert!(v.is_bug());

    let v = classify(
        &runs(Outcome::Unsupported { what: "fft".into() }, ok(&[1.0])),
        &Evidence::new(&t),
    );
    assert_eq!(v.kind, VerdictKind::Unsupported);
    assert_eq!(v.backend.as_deref(), Some("interp"));
    assert!(!v.is_bug());
    assert_eq!(serde_json::to_value(&v).unwrap()["verdict"], "unsupported");

    let v = classify(
        &runs(
            ok(&[1.0]),
            Outcome::HarnessError {
                stage: None,
                message: "bad frame".into(),
            },
        ),
        &Evidence::new(&t),
    );
    assert_eq!(v.kind, VerdictKind::Unsupported);
}

#[test]
fn a_rerun_that_disagrees_bitwise_is_nondeterminism() {
    let t = Tolerance::default();
    let outcomes = runs(ok(&[1.0, 2.0]), ok(&[1.0, 5.0]));
    // Bitwise: even a difference the tolerance would accept.
    let reruns = vec![("xla-cpu".to_string(), ok(&[1.0, 5.0000005]))];
    let v = classify(
        &outcomes,
        &Evidence {
            reruns: &reruns,
            ..Evidence::new(&t)
        },
    );
    assert_eq!(v.kind, VerdictKind::Nondeterministic);
    assert_eq!(v.mismatched_outputs, vec![0]);
    assert_eq!(
        serde_json::to_value(&v).unwrap()["verdict"],
        "nondeterministic"
    );
    // The same result again: the mismatch stands.
    let same = vec![("xla-cpu".to_string(), ok(&[1.0, 5.0]))];
    assert_eq!(
        classify(
            &outcomes,
            &Evidence {
                reruns: &same,
                ..Evidence::new(&t)
            }
        )
        .kind,
        VerdictKind::Mismatch
    );
    // A rerun that crashes where the first run worked.
    let crashed = vec![(
        "xla-cpu".to_string(),
        Outcome::Crash {
            stage: Stage::Execute,
            signal: Some(11),
            stderr_tail: String::new(),
        },
    )];
    assert_eq!(
        classify(
            &outcomes,
            &Evidence {
                reruns: &crashed,
                ..Evidence::new(&t)
            }
        )
        .kind,
        VerdictKind::Nondeterministic
    );
}

#[test]
fn verdicts_round_trip_through_json() {
    let t = Tolerance::default();
    let v = classify(
        &runs(ok(&[1.0, f64::NAN]), ok(&[f64::INFINITY, 1.0])),
        &Evidence::new(&t),
    );
    let text = serde_json::to_string(&v).unwrap();
    let back: harness::classify::Verdict = serde_json::from_str(&text).unwrap();
    assert_eq!(back.kind, v.kind);
    assert_eq!(back.mismatched_outputs, v.mismatched_outputs);
    let w = &back.comparison.unwrap().outputs[0].worst;
    assert!(w.iter().any(|e| e.abs_err.is_infinite()));
}

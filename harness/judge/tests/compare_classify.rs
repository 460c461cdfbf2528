//! The classifier (judge::classify): every verdict from constructed outcomes, precedence,
//! and the voter's labels.

use engine::backend::{Outcome, RunResult, Stage, Timings};
use hlo::{ArrayLiteral, Literal, PrimitiveType, Scalar};
use judge::classify::{classify, Evidence, Label, VerdictKind};
use judge::compare::Tolerance;

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
    let back: judge::classify::Verdict = serde_json::from_str(&text).unwrap();
    assert_eq!(back.kind, v.kind);
    assert_eq!(back.mismatched_outputs, v.mismatched_outputs);
    let w = &back.comparison.unwrap().outputs[0].worst;
    assert!(w.iter().any(|e| e.abs_err.is_infinite()));
}

#[test]
fn a_voter_run_on_the_differing_outputs_only_still_votes() {
    let t = Tolerance::default();
    let two = |a: f64, b: f64| {
        let mut o = ok(&[a]);
        if let Outcome::Ok(r) = &mut o {
            r.outputs.push(ok(&[b]).as_ok().unwrap().outputs[0].clone());
        }
        o
    };
    let outcomes = runs(two(1.0, 2.0), two(1.0, 9.0));
    // The voter ran the module reduced to output 1: its only leaf is output 1.
    let voter = ok(&[2.0]);
    let sel = [1usize];
    let v = classify(
        &outcomes,
        &Evidence {
            voter: Some(&voter),
            voter_outputs: Some(&sel),
            ..Evidence::new(&t)
        },
    );
    assert_eq!(v.mismatched_outputs, vec![1]);
    assert_eq!(v.label, Some(Label::Xla));
    let voter = ok(&[9.0]);
    let v = classify(
        &outcomes,
        &Evidence {
            voter: Some(&voter),
            voter_outputs: Some(&sel),
            ..Evidence::new(&t)
        },
    );
    assert_eq!(v.label, Some(Label::Oracle));
}

#[test]
fn restricting_a_module_to_some_outputs_keeps_parameters_and_drops_the_rest() {
    let text = "HloModule m\n\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n\nENTRY %main (p: f32[4], q: f32[4]) -> (f32[4], f32[], f32[4]) {\n  %p = f32[4] parameter(0)\n  %q = f32[4] parameter(1)\n  %e = f32[4] exponential(%p)\n  %z = f32[] constant(0)\n  %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%add\n  %n = f32[4] negate(%q)\n  ROOT %t = (f32[4], f32[], f32[4]) tuple(%e, %r, %n)\n}\n";
    let m = hlo::parse::parse_module(text).unwrap();
    let r = judge::forms::restrict_outputs(&m, &[2]).unwrap();
    let printed = hlo::print::module_to_string(&r);
    assert!(
        printed.contains("negate")
            && !printed.contains("exponential")
            && !printed.contains("reduce"),
        "{printed}"
    );
    assert_eq!(r.computations.len(), 1, "the reducer is no longer called");
    assert_eq!(r.entry_computation().parameters().len(), 2);
    hlo::verify::verify_module(&r).unwrap();
    // The interpreter runs it and returns just that output.
    let x = Literal::Array(ArrayLiteral::zeros(PrimitiveType::F32, vec![4]).unwrap());
    let o = engine::interp_backend::InterpBackend::new().run_module(&r, &[x.clone(), x]);
    assert_eq!(o.as_ok().unwrap().outputs.len(), 1);
    assert!(judge::forms::restrict_outputs(&m, &[7]).is_none());
    // Aliases and the entry layout name the old outputs: they go.
    let aliased = text.replace(
        "HloModule m\n",
        "HloModule m, input_output_alias={ {2}: (1, {}, may-alias) }, entry_computation_layout={(f32[4]{0}, f32[4]{0})->(f32[4]{0}, f32[], f32[4]{0})}\n",
    );
    let m = hlo::parse::parse_module(&aliased).unwrap();
    assert_eq!(m.header_attrs.len(), 2);
    let r = judge::forms::restrict_outputs(&m, &[2]).unwrap();
    assert!(r.header_attrs.is_empty(), "{:?}", r.header_attrs);
}

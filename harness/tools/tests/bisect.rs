//! The pass bisector against real XLA:CPU (through the jaxlib worker).
//!
//! These tests need the project's Python (`.venv` with jax/jaxlib): without it they fail,
//! unless `HLO_DIFF_SKIP_XLA=1` says to skip them.

mod common;
use common::*;

use engine::backend::RunOptions;
use tools::bisect::{bisect, BisectOptions};

/// algsimp rewrites log(exp(x)) to x: with x = 100, IEEE evaluation overflows to inf while XLA
/// returns 100. The bisector must name algsimp, and recompiling without it must agree.
#[test]
fn log_exp_is_blamed_on_algsimp() {
    let Some(xla) = xla_cpu() else { return };
    let r = bisect(
        LOG_EXP,
        &[f32_scalar(100.0)],
        &xla,
        &BisectOptions::default(),
    )
    .unwrap();
    eprintln!("{}", r.render());
    let jaxlib = xla
        .info()
        .ok()
        .and_then(|v| v.get("jaxlib")?.as_str().map(str::to_string))
        .unwrap_or_default();
    if !jaxlib.starts_with("0.10.") && r.xla_matches_oracle {
        // jaxlib 0.11.2's XLA (seen on the GPU box) no longer rewrites log(exp(x)): then there
        // is nothing to blame, and the bisector must say so.
        eprintln!("jaxlib {jaxlib}: XLA keeps log(exp(x)); checking that nothing is blamed");
        assert!(
            r.culprit.is_none() && !r.found_divergence(),
            "{}",
            r.render()
        );
        return;
    }
    assert!(!r.xla_matches_oracle, "XLA should differ: {}", r.render());
    let c = r
        .culprit
        .as_ref()
        .unwrap_or_else(|| panic!("no culprit: {}", r.render()));
    assert_eq!(c.pass, "algsimp", "{}", r.render());
    assert!(
        c.diff.contains("log"),
        "the diff shows the rewrite: {}",
        c.diff
    );
    let d = r.disabled_check.as_ref().expect("the semantic check ran");
    assert_eq!(d.xla_matches_oracle, Some(true), "{}", r.render());
    assert!(r.found_divergence());
    assert!(r.expected.contains("inf"), "oracle result {}", r.expected);
    assert!(r.actual.contains("100"), "XLA result {}", r.actual);
}

/// With x = 1 the rewrite does not change the value: nothing to blame.
#[test]
fn log_exp_small_input_blames_nothing() {
    let Some(xla) = xla_cpu() else { return };
    let r = bisect(LOG_EXP, &[f32_scalar(1.0)], &xla, &BisectOptions::default()).unwrap();
    eprintln!("{}", r.render());
    assert!(r.xla_matches_oracle, "{}", r.render());
    assert!(r.culprit.is_none(), "{}", r.render());
    assert!(!r.found_divergence());
    assert!(r.evaluated > 0, "snapshots were evaluated: {}", r.render());
}

/// `xla_cpu_enable_fast_min_max=true` makes maximum(1, NaN) return 1. No HLO pass changes the
/// module's meaning, so the bisector must blame code generation.
#[test]
fn fast_min_max_is_blamed_on_code_generation() {
    let Some(xla) = xla_cpu() else { return };
    let text = r#"HloModule fast_max

ENTRY main {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
"#;
    let opts = BisectOptions {
        run: RunOptions {
            env_option_overrides: vec![("xla_cpu_enable_fast_min_max".into(), "true".into())],
            ..RunOptions::default()
        },
        ..BisectOptions::default()
    };
    let r = bisect(text, &[f32_scalar(1.0), f32_scalar(f32::NAN)], &xla, &opts).unwrap();
    eprintln!("{}", r.render());
    assert!(!r.xla_matches_oracle, "{}", r.render());
    assert!(r.culprit.is_none(), "{}", r.render());
    assert!(
        r.conclusion.contains("no pass changed the oracle's result")
            || r.conclusion.contains("No pass changed the oracle's result"),
        "{}",
        r.render()
    );
    // Said only because every snapshot and after_optimizations were evaluated and agree.
    assert!(r.evidence.below_hlo, "{}", r.render());
    assert_eq!(r.skipped, 0);
    assert_eq!(
        r.after_optimizations.as_ref().map(|a| a.status.as_str()),
        Some("same")
    );
    // No pass, disabled, brings the NaN back: the option acts in code generation.
    let s = r
        .disable_search
        .as_ref()
        .expect("the disable-pass search ran");
    assert!(s.minimal.is_empty(), "{}", r.render());
    assert_eq!(s.all_avoid, Some(false), "{}", r.render());
}

/// The regression module of a known XLA bug (`corpora/regressions/NAME.hlo`).
fn regression(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpora/regressions")
        .join(format!("{name}.hlo"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Below HLO, kernel by kernel: with `xla_cpu_enable_fast_min_max=true` the maximum drops a
/// NaN in code generation. Every snapshot agrees, so the bisector isolates the kernels of
/// after_optimizations: the exponential/reduce fusion run alone on the oracle's operand values
/// agrees, the maximum fusion does not; it is named with its kind and the pass that created it,
/// and its standalone module (with those operand values) is a repro that XLA gets wrong again.
#[test]
fn kernel_isolation_names_the_first_wrong_fusion() {
    use engine::backend::Backend;
    let Some(xla) = xla_cpu() else { return };
    let text = r#"HloModule fast_max2

ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  e = f32[4] exponential(a)
  d = f32[] dot(e, e), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  bd = f32[4] broadcast(d), dimensions={}
  m = f32[4] maximum(bd, b)
  ROOT n = f32[4] negate(m)
}
"#;
    let f32s = |v: &[f32]| {
        hlo::Literal::Array(
            hlo::ArrayLiteral::from_bytes(
                hlo::PrimitiveType::F32,
                vec![v.len() as i64],
                v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            )
            .unwrap(),
        )
    };
    let inputs = vec![
        f32s(&[1.0, 2.0, 3.0, 4.0]),
        f32s(&[f32::NAN, 0.0, 5.0, 1.0]),
    ];
    let run = RunOptions {
        env_option_overrides: vec![("xla_cpu_enable_fast_min_max".into(), "true".into())],
        ..RunOptions::default()
    };
    let opts = BisectOptions {
        run: run.clone(),
        ..BisectOptions::default()
    };
    let r = bisect(text, &inputs, &xla, &opts).unwrap();
    eprintln!("{}", r.render());
    assert!(
        !r.xla_matches_oracle && r.evidence.below_hlo,
        "{}",
        r.render()
    );
    let iso = r.isolation.as_ref().expect("kernel isolation ran");
    assert!(iso.error.is_none(), "{}", r.render());
    let k = iso
        .wrong()
        .unwrap_or_else(|| panic!("no wrong kernel: {}", r.render()));
    assert_eq!(k.status, "differs", "{}", r.render());
    assert!(k.kind.starts_with("fusion"), "{}", k.kind);
    assert!(k.name.contains("maximum"), "{}", r.render());
    assert!(k.created_by.is_some(), "{}", r.render());
    let before: Vec<&str> = iso.kernels[..iso.first_wrong.unwrap()]
        .iter()
        .map(|k| k.status.as_str())
        .collect();
    assert!(
        !before.is_empty() && before.iter().all(|s| *s == "agrees"),
        "the kernels before it agree: {}",
        r.render()
    );
    assert!(
        r.conclusion
            .contains(&format!("the first wrong kernel is `{}`", k.name)),
        "{}",
        r.conclusion
    );
    // The kernel module is a repro of its own: XLA gets it wrong again, the oracle does not.
    let km = iso.kernel_module.as_ref().unwrap();
    let again = bisect(
        km,
        &iso.kernel_inputs,
        &xla,
        &BisectOptions {
            no_confirm: true,
            ..opts.clone()
        },
    )
    .unwrap();
    assert!(!again.xla_matches_oracle, "{}", again.render());
    let d = tempfile::tempdir().unwrap();
    let files = iso
        .write_repro(d.path(), xla.name(), &run.env_option_overrides)
        .expect("a wrong kernel to write")
        .unwrap();
    let written = std::fs::read_to_string(d.path().join(&files.module)).unwrap();
    // The fused computation travels as a module of its own (XLA fuses it again).
    assert!(
        written.contains("maximum(") && written.contains("ENTRY"),
        "{written}"
    );
}

/// Found by a campaign and minimized (56 -> 2 instructions): XLA's constant folding computes
/// count-leading-zeros of a negative s32 as -32 (IEEE/HloEvaluator semantics: 0). Dumping with
/// large constants kept, the bisector names constant_folding, and disabling it agrees; the
/// disable-pass search finds the same single pass, confirmed by its dump file being absent.
#[test]
fn clz_of_negative_constant_is_blamed_on_constant_folding() {
    let Some(xla) = xla_cpu() else { return };
    let text = regression("xla_miscompile_clz_constant_folding");
    let r = bisect(&text, &[], &xla, &BisectOptions::default()).unwrap();
    eprintln!("{}", r.render());
    assert!(r.expected.contains("32, 29, 0"), "oracle: {}", r.expected);
    if r.xla_matches_oracle {
        // A fixed XLA: nothing to blame.
        assert_fixed_xla_is_not_the_pinned_one("clz of a negative constant folded to -32");
        assert!(r.culprit.is_none(), "{}", r.render());
        return;
    }
    let c = r
        .culprit
        .as_ref()
        .unwrap_or_else(|| panic!("{}", r.render()));
    assert_eq!(c.pass, "constant_folding", "{}", r.render());
    assert_eq!(r.skipped, 0, "no snapshot is elided: {}", r.render());
    assert_eq!(
        r.disabled_check.as_ref().and_then(|d| d.xla_matches_oracle),
        Some(true),
        "{}",
        r.render()
    );
    let s = r
        .disable_search
        .as_ref()
        .expect("the disable-pass search ran");
    assert_eq!(s.minimal, vec!["constant_folding"], "{}", r.render());
    assert!(
        s.confirmation.as_ref().is_some_and(|c| c.took_effect),
        "{}",
        r.render()
    );
    let role = s
        .roles
        .iter()
        .find(|x| x.pass == "constant_folding")
        .unwrap();
    assert_eq!(role.role, "changed-result", "{}", r.render());
    assert!(
        r.conclusion
            .contains("Changed the result: `constant_folding`"),
        "{}",
        r.conclusion
    );
}

/// log(exp(x)) with the exponential behind a `call`: algsimp only sees the pattern after the
/// call inliner ran. Disabling either pass makes XLA agree with the oracle, but only algsimp's
/// snapshot changes the result: the search names algsimp as the pass that changed it and the
/// inliner as masking.
#[test]
fn disabling_the_call_inliner_is_reported_as_masking() {
    let Some(xla) = xla_cpu() else { return };
    let text = r#"HloModule log_exp_call

f {
  p = f32[] parameter(0)
  ROOT e = f32[] exponential(p)
}

ENTRY main {
  x = f32[] parameter(0)
  e = f32[] call(x), to_apply=f
  ROOT l = f32[] log(e)
}
"#;
    let r = bisect(text, &[f32_scalar(100.0)], &xla, &BisectOptions::default()).unwrap();
    eprintln!("{}", r.render());
    if r.xla_matches_oracle {
        // An XLA that keeps log(exp(x)) (jaxlib 0.11.2): nothing to search for.
        assert_fixed_xla_is_not_the_pinned_one("algsimp rewriting log(exp(x)) to x");
        assert!(r.disable_search.is_none(), "{}", r.render());
        return;
    }
    assert_eq!(r.culprit.as_ref().map(|c| c.pass.as_str()), Some("algsimp"));
    let s = r
        .disable_search
        .as_ref()
        .expect("the disable-pass search ran");
    assert_eq!(s.minimal, vec!["algsimp"], "{}", r.render());
    let role = |p: &str| {
        s.roles
            .iter()
            .find(|x| x.pass == p)
            .map(|x| x.role.clone())
            .unwrap_or_else(|| panic!("{p} has no role: {}", r.render()))
    };
    assert_eq!(role("algsimp"), "changed-result");
    assert_eq!(role("call-inliner"), "masking");
    assert!(
        r.conclusion.contains(
            "Disabling `call-inliner` also avoids it, but `call-inliner` did not change the result"
        ),
        "{}",
        r.conclusion
    );
    let md = r.markdown();
    assert!(md.contains("`call-inliner`: masking"), "{md}");
}

/// A compile crash: XLA's constant folding aborts on a `map` of complex expm1. The bisector
/// compiles again with every pass dumped, names the pass the worker died in from the last file
/// written, and the search finds that disabling it makes the crash go away.
#[test]
fn compile_crash_is_located_in_the_pass_xla_died_in() {
    let Some(xla) = xla_cpu() else { return };
    let r = bisect(
        &regression("xla_bug_map_complex_expm1"),
        &[],
        &xla,
        &BisectOptions::default(),
    )
    .unwrap();
    eprintln!("{}", r.render());
    let Some(f) = &r.failure else {
        // A fixed XLA compiles it: then it is bisected over values like any module.
        assert_fixed_xla_is_not_the_pinned_one("the compile crash of map(complex expm1)");
        assert!(r.evaluated > 0, "{}", r.render());
        return;
    };
    assert_eq!((f.kind.as_str(), f.stage.as_str()), ("crash", "compile"));
    assert_eq!(f.reproduced, Some(true), "{}", r.render());
    assert_eq!(f.last_pass_entered.as_deref(), Some("constant_folding"));
    assert!(f
        .last_snapshot
        .as_deref()
        .is_some_and(|p| p.contains("before_constant_folding")));
    assert!(r.found_divergence());
    let s = r
        .disable_search
        .as_ref()
        .expect("the disable-pass search ran");
    assert_eq!(s.minimal, vec!["constant_folding"], "{}", r.render());
    assert!(s.confirmation.as_ref().is_some_and(|c| c.took_effect));
    assert_eq!(s.roles[0].role, "failed-inside", "{}", r.render());
}

/// A valid chain of bitcast-converts that XLA's simplifier turns into an invalid module: XLA's
/// verifier rejects it "after simplification" (a whole pipeline); walking the snapshots written
/// before the rejection, our verifier finds the first invalid one after algsimp, and disabling
/// algsimp avoids the rejection.
#[test]
fn verifier_rejection_is_traced_to_the_pass_that_broke_the_module() {
    let Some(xla) = xla_cpu() else { return };
    let r = bisect(
        &regression("xla_bug_bitcast_convert_chain"),
        &[hlo::Literal::Array(
            hlo::ArrayLiteral::from_bytes(
                hlo::PrimitiveType::S64,
                vec![],
                7i64.to_le_bytes().to_vec(),
            )
            .unwrap(),
        )],
        &xla,
        &BisectOptions::default(),
    )
    .unwrap();
    eprintln!("{}", r.render());
    let Some(f) = &r.failure else {
        assert_fixed_xla_is_not_the_pinned_one("the verifier rejecting a bitcast-convert chain");
        assert!(r.evaluated > 0, "{}", r.render());
        return;
    };
    assert_eq!(f.kind, "rejected", "{}", r.render());
    assert_eq!(f.rejected_after.as_deref(), Some("simplification"));
    let b = f.first_broken.as_ref().expect("a first broken snapshot");
    assert_eq!(b.pass, "algsimp", "{}", r.render());
    assert!(b
        .note
        .as_deref()
        .is_some_and(|n| n.contains("bitcast-convert")));
    let s = r
        .disable_search
        .as_ref()
        .expect("the disable-pass search ran");
    assert_eq!(s.minimal, vec!["algsimp"], "{}", r.render());
    assert_eq!(s.roles[0].role, "changed-result", "{}", r.render());
}

/// Integer division of constants by a constant zero kills XLA before it writes
/// before_optimizations: no pass ran, so none is named and nothing is searched.
#[test]
fn a_crash_before_the_passes_blames_no_pass() {
    let Some(xla) = xla_cpu() else { return };
    let r = bisect(
        &regression("xla_bug_int_div_by_const_zero"),
        &[],
        &xla,
        &BisectOptions::default(),
    )
    .unwrap();
    eprintln!("{}", r.render());
    let Some(f) = &r.failure else {
        assert_fixed_xla_is_not_the_pinned_one("the crash on integer division by a constant zero");
        assert!(r.evaluated > 0, "{}", r.render());
        return;
    };
    assert_eq!(f.kind, "crash");
    assert!(f.last_pass_entered.is_none(), "{}", r.render());
    assert_eq!(f.snapshots, 0);
    assert!(r.disable_search.is_none(), "{}", r.render());
    assert!(
        r.conclusion.contains("before its HLO passes started"),
        "{}",
        r.conclusion
    );
}

/// A difference an implementation choice XLA is free to make explains: XLA CPU runs with
/// subnormal inputs read as zero, so the smallest subnormal times 1e30 is 0 where IEEE
/// evaluation gives 1.4e-15. The plain comparison sees a difference; the bisector and a campaign
/// both ask the judge and blame nothing: the campaign's packed run settles it inside the
/// legitimate results, the bisector's judge names flush-to-zero.
#[test]
fn bisect_and_campaigns_agree_on_a_difference_an_allowed_choice_explains() {
    use engine::backend::Backend;
    use judge::VerdictKind;
    use tools::campaign::{campaign_timeouts, Engines, Program, Tester};
    const ADD: &str = "HloModule ftz\n\nENTRY main {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] multiply(x, y)\n}\n";
    let Some(xla) = xla_cpu() else { return };
    let inputs = vec![f32_scalar(f32::from_bits(1)), f32_scalar(1e30)];
    let module = hlo::parse::parse_module(ADD).unwrap();

    // The difference is real: the plain comparison alone would report it.
    let got = xla.run(ADD, &inputs, &RunOptions::default());
    let want = engine::interp_backend::InterpBackend::new().run_module(&module, &inputs);
    let plain = judge::compare::compare(
        &want.as_ok().unwrap().result(),
        &got.as_ok().expect("xla-cpu runs the add").result(),
        &judge::compare::Tolerance::for_module(&module),
    );
    assert!(
        !plain.is_match(),
        "XLA CPU no longer reads subnormal inputs as zero: {}",
        plain.summary()
    );

    let r = bisect(ADD, &inputs, &xla, &BisectOptions::default()).unwrap();
    assert!(r.xla_matches_oracle, "{}", r.render());
    assert!(
        r.culprit.is_none() && !r.found_divergence(),
        "{}",
        r.render()
    );

    let engines = Engines::new(&["interp".into(), "xla-cpu".into()], 1, None, false).unwrap();
    let tester = Tester::new(&engines, None, &[], campaign_timeouts());
    let reports = tester.test_programs(
        0,
        &[Program {
            seed: 0,
            module,
            inputs: inputs.clone(),
            config: generators::Config::default(),
            origin: None,
        }],
    );
    // The campaign's packed run asks only whether it is a finding: the proof leaves it inside
    // the legitimate results (a match where every set is bounded).
    let v = &reports[0].verdict;
    assert!(
        matches!(v.kind, VerdictKind::Match | VerdictKind::Unproven),
        "{v:?}"
    );
    assert!(v.proof.as_ref().is_some_and(|p| !p.proves()), "{v:?}");
    // The judge as the bisector asks it names the choice.
    let outcomes = vec![("interp".to_string(), want), ("xla-cpu".to_string(), got)];
    let v = judge::Judge::offline()
        .with_policy(judge::Policy::VERDICT.explaining())
        .judge(&judge::Trial {
            module: &hlo::parse::parse_module(ADD).unwrap(),
            text: Some(ADD),
            inputs: &inputs,
            outcomes: &outcomes,
            reruns: &[],
            tolerance: &judge::compare::Tolerance::default(),
        })
        .verdict;
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
    let e = v
        .explained
        .as_ref()
        .expect("the judge says which choice explained it");
    assert_eq!(e.choice, "ftz", "{e:?}");
    assert!(e.max_abs_err > 0.0, "{e:?}");
}

/// An execute-time crash (jax-ml/jax#40412 on jaxlib 0.10.2: a multiply + reduce of rank-7 f32
/// arrays dies with SIGSEGV while running). XLA compiled the module, so no pass is blamed for
/// the crash: kernel isolation runs each kernel of after_optimizations alone and names the one
/// that crashes by itself, the YNNPACK library fusion, with the pass that made it.
#[test]
fn execute_crash_is_isolated_to_the_kernel_that_crashes_alone() {
    let Some(xla) = xla_cpu() else { return };
    let path = test_support::corpora("regressions").join("xla_bucket_ynn_rank7_reduce_segv.hlo");
    let text = std::fs::read_to_string(&path).unwrap();
    let module = hlo::parse::parse_module(&text).unwrap();
    let inputs = generators::generate_inputs_from_seed(&module, 0, &generators::Config::default());
    let r = bisect(&text, &inputs, &xla, &BisectOptions::default()).unwrap();
    eprintln!("{}", r.render());
    let Some(f) = &r.failure else {
        // A fixed XLA runs it: then it is bisected over values like any module.
        assert_fixed_xla_is_not_the_pinned_one("the execute-time crash of a rank-7 reduce");
        assert!(r.evaluated > 0, "{}", r.render());
        return;
    };
    assert_eq!(
        (f.kind.as_str(), f.stage.as_str()),
        ("crash", "execute"),
        "{}",
        r.render()
    );
    assert!(r.culprit.is_none(), "{}", r.render());
    let iso = r.isolation.as_ref().expect("kernel isolation ran");
    let k = iso
        .wrong()
        .unwrap_or_else(|| panic!("a kernel crashes alone: {}", r.render()));
    assert_eq!(k.status, "crash", "{}", r.render());
    assert!(k.kind.contains("__ynn_fusion"), "{}", r.render());
    assert!(k.created_by.is_some(), "{}", r.render());
    assert!(
        iso.kernel_module.is_some(),
        "the crashing kernel is a repro of its own"
    );
}

/// A kernel that updates its operand in place (XLA CPU fuses a root dynamic-update-slice of a
/// copied parameter into a loop fusion that writes the copy's buffer) runs alone with its
/// output aliasing that parameter, so an in-place bug would show there too; XLA runs it and it
/// agrees. A kernel that updates nothing in place runs without an alias.
#[test]
fn an_in_place_kernel_is_isolated_with_its_aliasing() {
    use engine::backend::Backend;
    let Some(xla) = xla_cpu() else { return };
    let text = r#"HloModule dus_in_place

ENTRY main {
  p = f32[64] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  e = f32[4] exponential(u)
  ROOT d = f32[64] dynamic-update-slice(p, e, i)
}
"#;
    let lit = |ty, dims: Vec<i64>, bytes: Vec<u8>| {
        hlo::Literal::Array(hlo::ArrayLiteral::from_bytes(ty, dims, bytes).unwrap())
    };
    let inputs = vec![
        lit(
            hlo::PrimitiveType::F32,
            vec![64],
            (0..64).flat_map(|x| (x as f32).to_le_bytes()).collect(),
        ),
        lit(
            hlo::PrimitiveType::F32,
            vec![4],
            [0.5f32, 1.0, -1.0, 2.0]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
        ),
        lit(hlo::PrimitiveType::S32, vec![], 7i32.to_le_bytes().to_vec()),
    ];
    let run = RunOptions {
        return_optimized_hlo: true,
        ..RunOptions::default()
    };
    let after = match xla.run(text, &inputs, &run) {
        engine::backend::Outcome::Ok(r) => r.optimized_hlo.expect("optimized HLO"),
        o => panic!("XLA: {o}"),
    };
    let iso = tools::isolate::isolate(
        &after,
        &inputs,
        &xla,
        &RunOptions::default(),
        1.0,
        16,
        &|_| None,
    )
    .expect("isolation runs");
    let dus = iso
        .kernels
        .iter()
        .find(|k| k.kind.starts_with("fusion"))
        .unwrap_or_else(|| panic!("no fusion kernel in {after}"));
    assert_eq!(
        dus.in_place.as_deref(),
        Some("{ {}: (0, {}, may-alias) }"),
        "{after}\n{:?}",
        iso.kernels
    );
    assert_eq!(dus.status, "agrees", "{:?}", iso.kernels);
    assert!(
        iso.kernels
            .iter()
            .filter(|k| !k.kind.starts_with("fusion"))
            .all(|k| k.in_place.is_none()),
        "{:?}",
        iso.kernels
    );
}

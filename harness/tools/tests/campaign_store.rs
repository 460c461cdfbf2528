//! The findings store (findings::store) without XLA: literal files, atomic finding directories,
//! folding duplicates by signature, idempotent occurrences, the campaign state file.

use engine::backend::{Outcome, RunResult, Stage, Timings};
use findings::store::{
    decode_literals, encode_literals, normalize_message, read_literals, write_literals,
    CampaignState, LiteralFileError, NewFinding, Recorded, Signature, Store,
};
use hlo::{ArrayLiteral, Literal, PrimitiveType, Scalar};
use judge::classify::{classify, Evidence};
use judge::compare::Tolerance;

fn lit(ty: PrimitiveType, vals: &[Scalar]) -> Literal {
    Literal::Array(ArrayLiteral::from_scalars(ty, vec![vals.len() as i64], vals).unwrap())
}

#[test]
fn literal_files_round_trip_every_type_and_tuples() {
    let mut lits = Vec::new();
    for ty in PrimitiveType::ALL_ARRAY {
        lits.push(Literal::Array(ArrayLiteral::zeros(ty, vec![2, 3]).unwrap()));
    }
    lits.push(lit(
        PrimitiveType::F32,
        &[Scalar::F(1.5), Scalar::F(f64::NAN), Scalar::F(-0.0)],
    ));
    lits.push(Literal::Tuple(vec![
        lit(PrimitiveType::S8, &[Scalar::S(-3)]),
        Literal::Token,
        Literal::Tuple(vec![]),
    ]));
    lits.push(Literal::Array(
        ArrayLiteral::zeros(PrimitiveType::F32, vec![0, 4]).unwrap(),
    ));
    let bytes = encode_literals(&lits);
    assert_eq!(&bytes[..8], b"HLODLIT1");
    let back = decode_literals(&bytes).unwrap();
    assert_eq!(back.len(), lits.len());
    for (a, b) in back.iter().zip(&lits) {
        // Bitwise (NaN != NaN under PartialEq of f64 is not involved: bytes are compared).
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.lit");
    write_literals(&p, &lits).unwrap();
    assert_eq!(read_literals(&p).unwrap().len(), lits.len());
}

#[test]
fn bad_literal_files_are_errors_not_panics() {
    assert!(matches!(
        decode_literals(b"nonsense-nonsense"),
        Err(LiteralFileError::Magic)
    ));
    let bytes = encode_literals(&[lit(PrimitiveType::F32, &[Scalar::F(1.0), Scalar::F(2.0)])]);
    assert!(matches!(
        decode_literals(&bytes[..bytes.len() - 1]),
        Err(LiteralFileError::Truncated)
    ));
    assert!(matches!(
        decode_literals(&bytes[..10]),
        Err(LiteralFileError::Truncated)
    ));
    let mut bad = bytes.clone();
    bad[12] = b'[';
    assert!(matches!(
        decode_literals(&bad),
        Err(LiteralFileError::Header(_))
    ));
}

#[test]
fn messages_are_normalized_for_signatures() {
    let a = normalize_message("F1130 15:02:11.123 /usr/src/xla/hlo_instruction.cc:1234] Check failed: 0x7ffd1234 shape f32[5] vs f32[4]");
    let b = normalize_message("F1201 09:00:00.999 /other/path/hlo_instruction.cc:1240] Check failed: 0x1 shape f32[7] vs f32[2]");
    assert_eq!(a, b);
    assert!(a.contains("hlo_instruction.cc"), "{a}");
    assert!(!a.contains("1234"));
}

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

const MODULE: &str = "HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  %p = f32[2] parameter(0)\n  ROOT %m = f32[2] maximum(%p, %p)\n}\n";

#[test]
fn findings_are_written_atomically_and_fold_by_signature() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let module = hlo::parse::parse_module(MODULE).unwrap();
    let t = Tolerance::default();
    let outcomes = vec![
        ("interp".to_string(), ok(&[f64::NAN, 1.0])),
        ("xla-cpu".to_string(), ok(&[1.0, 1.0])),
    ];
    let v = classify(&outcomes, &Evidence::new(&t));
    let sig = Signature::of(&v, Some(&module));
    assert!(sig.detail.contains("maximum"), "{sig:?}");
    let inputs = vec![lit(
        PrimitiveType::F32,
        &[Scalar::F(f64::NAN), Scalar::F(1.0)],
    )];
    let nf = |occ: &str, t: f64| NewFinding {
        signature: sig.clone(),
        occurrence: occ.to_string(),
        verdict: &v,
        module_text: MODULE,
        before_optimizations: Some("HloModule before"),
        inputs: &inputs,
        outcomes: &outcomes,
        meta: serde_json::json!({"seed": 1}),
        found_at_s: Some(t),
    };
    let r1 = store.record(&nf("0:5:0", 40.0)).unwrap();
    let Recorded::New(d) = &r1 else {
        panic!("{r1:?}")
    };
    for f in [
        "finding.json",
        "module.hlo",
        "before_optimizations.txt",
        "inputs.lit",
        "outcomes.json",
        "outputs.interp.lit",
        "outputs.xla-cpu.lit",
    ] {
        assert!(d.join(f).is_file(), "{f} missing");
    }
    assert_eq!(read_literals(&d.join("inputs.lit")).unwrap().len(), 1);
    assert_eq!(
        std::fs::read_to_string(d.join("module.hlo")).unwrap(),
        MODULE
    );
    // Same signature, another occurrence (an earlier module that another job finished later):
    // folded; the first hit keeps the first record's time, and the smallest module index.
    assert_eq!(
        store.record(&nf("0:2:0:inputs1", 41.0)).unwrap(),
        Recorded::Folded {
            dir: d.clone(),
            count: 2
        }
    );
    // The same occurrence again (a resumed campaign redoing a module): not counted twice.
    assert_eq!(
        store.record(&nf("0:2:0:inputs1", 42.0)).unwrap(),
        Recorded::AlreadyKnown(d.clone())
    );
    let rec = |d: &std::path::Path| {
        serde_json::from_slice::<findings::store::FindingRecord>(
            &std::fs::read(d.join("finding.json")).unwrap(),
        )
        .unwrap()
    };
    assert_eq!(rec(d).first_hit_s, Some(40.0));
    assert_eq!(rec(d).first_hit_module(), Some(2));
    // A different signature: a new directory.
    let crash = vec![
        ("interp".to_string(), ok(&[1.0])),
        (
            "xla-cpu".to_string(),
            Outcome::Crash {
                stage: Stage::Compile,
                signal: Some(6),
                stderr_tail: "Check failed: a == b at 0xdeadbeef".into(),
            },
        ),
    ];
    let vc = classify(&crash, &Evidence::new(&t));
    let sc = Signature::of(&vc, Some(&module));
    let r3 = store
        .record(&NewFinding {
            signature: sc,
            occurrence: "0:3:0".into(),
            verdict: &vc,
            module_text: MODULE,
            before_optimizations: None,
            inputs: &inputs,
            outcomes: &crash,
            meta: serde_json::json!({}),
            found_at_s: None,
        })
        .unwrap();
    assert!(r3.is_new());
    // No campaign clock, no time: the record has none (and reads back as a record from before
    // first hits were recorded).
    let text = std::fs::read_to_string(r3.dir().join("finding.json")).unwrap();
    assert!(!text.contains("first_hit_s"), "{text}");
    assert_eq!(rec(r3.dir()).first_hit_s, None);
    assert_eq!(rec(r3.dir()).first_hit_module(), Some(3));
    let all = store.findings().unwrap();
    assert_eq!(all.len(), 2);
    let m = all.iter().find(|(p, _)| p == d).unwrap();
    assert_eq!(m.1.count, 2);
    assert_eq!(m.1.occurrences.len(), 2);
    // No temporaries are left behind.
    let names: Vec<String> = std::fs::read_dir(store.findings_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with(".tmp")), "{names:?}");
}

/// Merging stores (shards of one campaign) keeps the earliest first hit of a finding both
/// have, and its module is the smallest over the united occurrences.
#[test]
fn a_merge_keeps_the_earliest_first_hit() {
    let module = hlo::parse::parse_module(MODULE).unwrap();
    let t = Tolerance::default();
    let outcomes = vec![
        ("interp".to_string(), ok(&[f64::NAN, 1.0])),
        ("xla-cpu".to_string(), ok(&[1.0, 1.0])),
    ];
    let v = classify(&outcomes, &Evidence::new(&t));
    let inputs = vec![lit(PrimitiveType::F32, &[Scalar::F(1.0), Scalar::F(1.0)])];
    let tmp = tempfile::tempdir().unwrap();
    let record = |name: &str, occ: &str, t: f64| {
        let store = Store::open(&tmp.path().join(name)).unwrap();
        store
            .record(&NewFinding {
                signature: Signature::of(&v, Some(&module)),
                occurrence: occ.into(),
                verdict: &v,
                module_text: MODULE,
                before_optimizations: None,
                inputs: &inputs,
                outcomes: &outcomes,
                meta: serde_json::json!({}),
                found_at_s: Some(t),
            })
            .unwrap();
        store
    };
    // Shard 0/2 hit it late on module 8, shard 1/2 early on module 13.
    let a = record("a", "5:8:1", 300.0);
    let b = record("b", "5:13:0", 12.5);
    a.merge_from(&b).unwrap();
    let (_, f) = a.findings().unwrap().pop().unwrap();
    assert_eq!(f.count, 2);
    assert_eq!(f.first_hit_s, Some(12.5));
    assert_eq!(f.first_hit_module(), Some(8));
}

#[test]
fn a_crashed_writer_leaves_only_a_temporary_that_is_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    std::fs::create_dir_all(store.findings_dir().join(".tmp-abc-1-0")).unwrap();
    std::fs::write(store.findings_dir().join(".tmp-abc-1-0/module.hlo"), "half").unwrap();
    assert!(store.findings().unwrap().is_empty());
    assert_eq!(store.clean_temporaries().unwrap(), 1);
}

#[test]
fn campaign_state_round_trips_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert!(store.load_state().unwrap().is_none());
    let mut s = CampaignState {
        seed: 7,
        shard: (1, 3),
        next_index: 42,
        pack: 4,
        backends: vec!["interp".into(), "xla-cpu".into()],
        ..Default::default()
    };
    s.stats.modules = 42;
    s.stats.verdicts.insert("match".into(), 100);
    store.save_state(&s).unwrap();
    assert_eq!(store.load_state().unwrap().unwrap(), s);
    std::fs::write(store.state_path(), "{ not json").unwrap();
    assert!(store.load_state().is_err());
}

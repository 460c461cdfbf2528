//! Root-cause buckets: findings that are the same bug, told apart by their minimized repro.
//!
//! A finding's [`crate::store::Signature`] comes from the module a campaign generated (all its
//! ops), so one bug shows as many findings. A [`BucketSignature`] is computed from the
//! *minimized* repro instead:
//! - mismatch, nondeterministic, timeout: the ops left (non-trivial opcodes with their result
//!   element types), the symptom class of the first differing element (`nan`, `lost-nan`,
//!   `inf`, `sign`, `zero`, `value`), and the culprit (the pass the bisector named, `below-hlo`,
//!   or empty when not bisected), so a constant-folding bug and a kernel bug on the same opcode
//!   stay two buckets;
//! - crash: the stage (with the pass or part of the compile the bisector named: `compile:
//!   algsimp`, `compile: stablehlo-to-hlo`), the signal and the normalized message;
//! - rejected: the same stage and the normalized message.
//!
//! The bucket id is a hash of that signature: the same bug found tomorrow has the same id.

use crate::store::{normalize_message, trivial};
use engine::backend::signal_name;
use hlo::Module;
use judge::{Verdict, VerdictKind};
use serde::{Deserialize, Serialize};

/// What makes two minimized findings the same bug.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BucketSignature {
    pub kind: VerdictKind,
    pub backend: String,
    /// `opcode:type` of every non-trivial instruction of the minimized module, sorted, once.
    pub ops: Vec<String>,
    /// Mismatch: the symptom class; crash: the signal; rejected/timeout: empty.
    pub symptom: String,
    /// The pass that changed the result (`constant_folding`), `below-hlo`, or empty (not
    /// bisected); crash, rejected, timeout: the stage.
    pub culprit: String,
    /// Crash and rejected: the normalized first line of the message.
    pub message: String,
    /// The devices the minimized module is partitioned over (its `num_partitions`): above 1
    /// only when the bug needs the SPMD program (the minimizer drops the header attribute
    /// whenever the one-device program shows the bug too).
    #[serde(default = "one_device", skip_serializing_if = "is_one_device")]
    pub partitions: usize,
}

fn one_device() -> usize {
    1
}

fn is_one_device(n: &usize) -> bool {
    *n == 1
}

/// The symptom class of a mismatch's first differing element: `nan` (XLA gave NaN where the
/// oracle did not), `lost-nan` (the reverse), `sign` (same magnitude, other sign: -0 for +0,
/// -inf for inf), `inf` (one of them infinite), `zero` (one of them zero), else `value`. A
/// complex element `(re, im)` is classed by its differing parts, the most telling class first
/// (in the order above), so an overflow to `(inf, -inf)` is `inf` and a branch-cut error
/// `(x, 1)` for `(x, -1)` is `sign`.
pub fn symptom(expected: &str, actual: &str) -> &'static str {
    fn parts(s: &str) -> Option<(&str, &str)> {
        let t = s.trim().strip_prefix('(')?.strip_suffix(')')?;
        t.split_once(',')
    }
    if let (Some((er, ei)), Some((ar, ai))) = (parts(expected), parts(actual)) {
        const ORDER: [&str; 6] = ["nan", "lost-nan", "sign", "inf", "zero", "value"];
        let differing: Vec<&'static str> = [(er, ar), (ei, ai)]
            .into_iter()
            .filter(|(e, a)| e.trim() != a.trim())
            .map(|(e, a)| real_symptom(e, a))
            .collect();
        return ORDER
            .into_iter()
            .find(|c| differing.contains(c))
            .unwrap_or("value");
    }
    real_symptom(expected, actual)
}

fn real_symptom(expected: &str, actual: &str) -> &'static str {
    let parse = |s: &str| -> Option<f64> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "nan" | "-nan" | "+nan" => Some(f64::NAN),
            "inf" | "+inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            "true" => Some(1.0),
            "false" => Some(0.0),
            _ => t.parse::<f64>().ok(),
        }
    };
    let (Some(e), Some(a)) = (parse(expected), parse(actual)) else {
        return "value";
    };
    if a.is_nan() && !e.is_nan() {
        "nan"
    } else if e.is_nan() && !a.is_nan() {
        "lost-nan"
    } else if a == -e && (e != 0.0 || e.is_sign_negative() != a.is_sign_negative()) && a != e {
        "sign"
    } else if e == 0.0 && a == 0.0 && e.is_sign_negative() != a.is_sign_negative() {
        "sign"
    } else if a.is_infinite() || e.is_infinite() {
        "inf"
    } else if (a == 0.0) != (e == 0.0) {
        "zero"
    } else {
        "value"
    }
}

/// How a bucket names an element type: the ordinary float, integer and complex types by class
/// (`float`, `int`, `uint`, `complex`; a bug in f32 atan2 is the same bug in f64), the types
/// with code paths of their own by name (sub-byte integers, f8 and f4 types, `pred`).
pub fn type_key(ty: hlo::PrimitiveType) -> String {
    use hlo::PrimitiveType as T;
    match ty {
        T::F16 | T::Bf16 | T::F32 | T::F64 => "float".into(),
        T::S8 | T::S16 | T::S32 | T::S64 => "int".into(),
        T::U8 | T::U16 | T::U32 | T::U64 => "uint".into(),
        T::C64 | T::C128 => "complex".into(),
        other => other.name().to_string(),
    }
}

/// `opcode:type` of the non-trivial instructions of `m` (every computation; the type as
/// [`type_key`] names it), sorted, once.
pub fn ops_of(m: &Module) -> Vec<String> {
    let mut ops: Vec<String> = m
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter())
        .filter(|i| !trivial(i.opcode))
        .map(|i| {
            let ty = i
                .shape
                .leaves()
                .first()
                .map(|l| type_key(l.ty))
                .unwrap_or_default();
            format!("{}:{ty}", i.opcode.name())
        })
        .collect();
    ops.sort();
    ops.dedup();
    ops
}

/// A failure's culprit: its stage, and where in it the bisector placed the failure when that
/// is established and more than the stage (`compile: algsimp`).
fn failure_culprit(stage: &str, bisected: Option<&str>) -> String {
    match bisected {
        Some(c) if !c.is_empty() && c != stage => format!("{stage}: {c}"),
        _ => stage.to_string(),
    }
}

impl BucketSignature {
    /// The signature of a minimized finding: its verdict on the minimized module, and the
    /// culprit pass when bisected (`None`: not bisected).
    pub fn of(verdict: &Verdict, minimized: &Module, culprit: Option<&str>) -> BucketSignature {
        let stage = verdict
            .stage
            .map(|s| s.name().to_string())
            .unwrap_or_default();
        let first_line = normalize_message(verdict.message.lines().next().unwrap_or(""));
        let (symptom_class, culprit, message) = match verdict.kind {
            VerdictKind::Mismatch | VerdictKind::Nondeterministic | VerdictKind::Unproven => {
                // The element that makes it a bug: the first the proof shows outside every
                // legitimate result, else the first differing one (a difference the set
                // holds, such as an overflow the order allows, is no symptom of the bug).
                let outside = verdict.proof.as_ref().and_then(|p| p.outside.first());
                let out = verdict.bug_output();
                let compared = verdict
                    .comparison
                    .as_ref()
                    .and_then(|c| c.outputs.get(out?));
                // Integers have no NaN, infinity or signed zero: any wrong integer is `value`
                // (a wrong 0 and a wrong 1 from the same bug stay one bucket).
                let s = match compared {
                    Some(o) if o.ty.is_float() || o.ty.is_complex() => match outside {
                        Some(e) => symptom(&e.expected, &e.actual),
                        None => o
                            .worst
                            .first()
                            .map(|w| symptom(&w.expected, &w.actual))
                            .unwrap_or("value"),
                    },
                    _ => "value",
                };
                (
                    s.to_string(),
                    culprit.unwrap_or("").to_string(),
                    String::new(),
                )
            }
            VerdictKind::Crash => (
                verdict
                    .signal
                    .map(signal_name)
                    .unwrap_or_else(|| "exit".into()),
                failure_culprit(&stage, culprit),
                first_line,
            ),
            VerdictKind::Rejected => (String::new(), failure_culprit(&stage, culprit), first_line),
            VerdictKind::Timeout | VerdictKind::Match | VerdictKind::Unsupported => {
                (String::new(), stage, String::new())
            }
        };
        BucketSignature {
            kind: verdict.kind,
            backend: verdict.backend.clone().unwrap_or_default(),
            ops: ops_of(minimized),
            symptom: symptom_class,
            culprit,
            message,
            partitions: minimized.num_partitions(),
        }
    }

    /// The stable bucket id: 16 hex digits of an FNV-1a hash of the signature's text (an SPMD
    /// bucket's with its partition count).
    pub fn id(&self) -> String {
        let mut text = format!(
            "{}|{}|{}|{}|{}|{}",
            self.kind.name(),
            self.backend,
            self.ops.join(","),
            self.symptom,
            self.culprit,
            self.message
        );
        if self.partitions > 1 {
            text.push_str(&format!("|spmd{}", self.partitions));
        }
        let h = text.bytes().fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100000001b3)
        });
        format!("{h:016x}")
    }

    /// A short human title: `s16 count-leading-zeros: wrong value (constant_folding)`.
    pub fn title(&self) -> String {
        let ops = if self.ops.is_empty() {
            "data movement".to_string()
        } else {
            self.ops
                .iter()
                .map(|o| match o.split_once(':') {
                    Some((op, ty)) if !ty.is_empty() => format!("{ty} {op}"),
                    _ => o.clone(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let what = match self.kind {
            VerdictKind::Mismatch => match self.symptom.as_str() {
                "nan" => "NaN where a number is expected".to_string(),
                "lost-nan" => "a number where NaN is expected".to_string(),
                "inf" => "wrong infinity".to_string(),
                "sign" => "wrong sign".to_string(),
                "zero" => "wrong zero".to_string(),
                _ => "wrong value".to_string(),
            },
            VerdictKind::Nondeterministic => "differs between runs".to_string(),
            VerdictKind::Unproven => "a difference inside the legitimate results".to_string(),
            VerdictKind::Crash => format!("{} at {}", self.symptom, self.culprit),
            VerdictKind::Rejected => format!("valid module rejected at {}", self.culprit),
            VerdictKind::Timeout => format!("hangs at {}", self.culprit),
            VerdictKind::Match | VerdictKind::Unsupported => self.kind.name().to_string(),
        };
        let by = match (self.kind, self.culprit.as_str()) {
            (VerdictKind::Mismatch | VerdictKind::Nondeterministic, "") => String::new(),
            (VerdictKind::Mismatch | VerdictKind::Nondeterministic, c) => format!(" ({c})"),
            _ => String::new(),
        };
        let spmd = match self.partitions {
            1 => String::new(),
            n => format!(", SPMD on {n} devices"),
        };
        format!("{ops}: {what}{by} on {}{spmd}", self.backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symptoms_name_what_went_wrong() {
        assert_eq!(symptom("1.5", "nan"), "nan");
        assert_eq!(symptom("nan", "0"), "lost-nan");
        assert_eq!(symptom("1", "inf"), "inf");
        assert_eq!(symptom("2.5", "-2.5"), "sign");
        assert_eq!(symptom("3", "0"), "zero");
        assert_eq!(symptom("3", "4"), "value");
        assert_eq!(symptom("(1, 2)", "(1, 3)"), "value");
        assert_eq!(symptom("inf", "-inf"), "sign");
        assert_eq!(symptom("0", "-0"), "sign");
        assert_eq!(symptom("(6.6e37, -1.3e38)", "(inf, -inf)"), "inf");
        assert_eq!(symptom("(6.1e-17, -1.0)", "(6.1e-17, 1.0)"), "sign");
        assert_eq!(symptom("(nan, nan)", "(1.0, 0.0)"), "lost-nan");
        assert_eq!(symptom("(-708.4, 1.57)", "(-inf, 1.57)"), "inf");
    }

    /// A dot whose f32 partial sum may overflow (the order decides: XLA's inf is legitimate)
    /// next to a minimum reduction that loses a NaN: the bucket's symptom is the lost NaN, the
    /// element the proof shows outside, not the infinity that comes first.
    #[test]
    fn the_symptom_is_the_first_element_outside_the_legitimate_results() {
        use engine::backend::{Outcome, RunResult};
        use hlo::{ArrayLiteral, Literal, PrimitiveType};
        let text = "HloModule m\n\nmin {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] minimum(a, b)\n}\n\nENTRY main {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n  d = f32[] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n  z = f32[2] parameter(2)\n  inf = f32[] constant(inf)\n  r = f32[] reduce(z, inf), dimensions={0}, to_apply=min\n  ROOT t = (f32[], f32[]) tuple(d, r)\n}\n";
        let m = hlo::parse::parse_module(text).unwrap();
        let f32s = |dims: Vec<i64>, v: &[f32]| {
            let bytes = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            Literal::Array(ArrayLiteral::from_bytes(PrimitiveType::F32, dims, bytes).unwrap())
        };
        let inputs = [
            f32s(vec![3], &[3e38, 3e38, -3e38]),
            f32s(vec![3], &[1.0, 1.0, 1.0]),
            f32s(vec![2], &[f32::NAN, 1.0]),
        ];
        let judged = |d: f32, r: f32| {
            let xla = Outcome::Ok(RunResult {
                outputs: vec![Literal::Tuple(vec![f32s(vec![], &[d]), f32s(vec![], &[r])])],
                result_shape: None,
                timings: Default::default(),
                optimized_hlo: None,
                before_optimizations_hlo: None,
                dump_dir: None,
            });
            let oracle = engine::interp_backend::InterpBackend::new().run_module(&m, &inputs);
            let outcomes = vec![("interp".to_string(), oracle), ("xla-cpu".to_string(), xla)];
            judge::Judge::offline()
                .judge(&judge::Trial {
                    module: &m,
                    text: None,
                    inputs: &inputs,
                    outcomes: &outcomes,
                    reruns: &[],
                    tolerance: &judge::compare::Tolerance::for_module(&m),
                })
                .verdict
        };
        let v = judged(f32::INFINITY, 1.0);
        assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
        assert_eq!(v.mismatched_outputs, vec![0, 1], "{v:?}");
        assert_eq!(BucketSignature::of(&v, &m, None).symptom, "lost-nan");
        // Without a proof the first differing element still names it.
        let unproved = Verdict { proof: None, ..v };
        assert_eq!(BucketSignature::of(&unproved, &m, None).symptom, "inf");
    }

    fn sig(culprit: &str) -> BucketSignature {
        BucketSignature {
            partitions: 1,
            kind: VerdictKind::Mismatch,
            backend: "xla-cpu".into(),
            ops: vec!["count-leading-zeros:int".into()],
            symptom: "value".into(),
            culprit: culprit.into(),
            message: String::new(),
        }
    }

    fn finding(
        dir: &std::path::Path,
        status: &str,
    ) -> (std::path::PathBuf, crate::store::FindingRecord) {
        std::fs::create_dir_all(dir).unwrap();
        let b = sig("constant_folding");
        MinimizedRecord {
            status: status.into(),
            bucket_id: b.id(),
            title: b.title(),
            bucket: b,
            instructions_before: 9,
            instructions_after: 2,
            tests: 1,
            elapsed_ms: 0,
            repro: None,
            bisect: None,
            message: String::new(),
        }
        .write(dir)
        .unwrap();
        let verdict = judge::Verdict {
            kind: VerdictKind::Mismatch,
            backend: Some("xla-cpu".into()),
            stage: None,
            signal: None,
            message: String::new(),
            label: None,
            mismatched_outputs: Vec::new(),
            comparison: None,
            vote: None,
            explained: None,
            proof: None,
            dissent: None,
        };
        let rec = crate::store::FindingRecord {
            signature: crate::store::Signature::of(&verdict, None),
            key: status.into(),
            count: 1,
            occurrences: Default::default(),
            verdict,
            first_occurrence: "0:0:0".into(),
            meta: serde_json::Value::Null,
            first_hit_s: None,
        };
        (dir.to_path_buf(), rec)
    }

    /// A finding that showed no bug when run alone keeps its original signature, which no
    /// minimized repro backs: it is neither claimed by the registry nor NEW, and it never joins
    /// the bucket of a minimized finding with the same signature.
    #[test]
    fn a_not_reproduced_finding_is_neither_known_nor_new() {
        let tmp = tempfile::tempdir().unwrap();
        let reg_dir = tmp.path().join("reg");
        std::fs::create_dir_all(&reg_dir).unwrap();
        std::fs::write(
            reg_dir.join("clz.toml"),
            "id = \"clz\"\ntitle = \"clz folded\"\nstatus = \"open\"\ntext = \"a cited text\"\n\n[match]\nops_include = [\"count-leading-zeros\"]\n",
        )
        .unwrap();
        let registry = crate::registry::Registry::load(&reg_dir).unwrap();
        let findings = vec![
            finding(&tmp.path().join("a"), "minimized"),
            finding(&tmp.path().join("b"), "not-reproduced"),
        ];
        let (buckets, pending) = group(&findings, &registry, &History::new());
        assert!(pending.is_empty());
        assert_eq!(buckets.len(), 2, "{buckets:#?}");
        let minimized = buckets.iter().find(|b| !b.not_reproduced).unwrap();
        assert_eq!(minimized.known.as_ref().map(|k| k.id.as_str()), Some("clz"));
        let alone = buckets.iter().find(|b| b.not_reproduced).unwrap();
        assert!(alone.known.is_none() && !alone.new, "{alone:#?}");
    }

    /// A known bucket carries its entry's release range and bisection result as the entry
    /// states them; an entry without them adds neither key to the JSON.
    #[test]
    fn a_known_bucket_carries_its_entrys_releases_and_bisect_result() {
        let tmp = tempfile::tempdir().unwrap();
        let findings = vec![finding(&tmp.path().join("a"), "minimized")];
        let known = |extra: &str| {
            let reg_dir = tmp.path().join("reg");
            std::fs::create_dir_all(&reg_dir).unwrap();
            std::fs::write(
                reg_dir.join("clz.toml"),
                format!(
                    "id = \"clz\"\ntitle = \"clz folded\"\nstatus = \"open\"\ntext = \"a cited text\"\n{extra}\n[match]\nops_include = [\"count-leading-zeros\"]\n"
                ),
            )
            .unwrap();
            let registry = crate::registry::Registry::load(&reg_dir).unwrap();
            let (buckets, _) = group(&findings, &registry, &History::new());
            buckets[0]
                .known
                .clone()
                .expect("the entry claims the bucket")
        };
        let k = known(
            "releases = \"first bad 0.9.1\"\nbisect = \"pass constant_folding changed the result\"\n",
        );
        assert_eq!(k.releases, "first bad 0.9.1");
        assert_eq!(k.bisect, "pass constant_folding changed the result");
        let j = serde_json::to_value(&k).unwrap();
        assert_eq!(j["bisect"], "pass constant_folding changed the result");
        let bare = serde_json::to_value(known("")).unwrap();
        assert!(
            bare.get("bisect").is_none() && bare.get("releases").is_none(),
            "{bare}"
        );
    }

    /// A bucket's first hit is the earliest over its findings: the earliest time, and the
    /// smallest module index over every finding's occurrences (which need not be the same
    /// finding's).
    #[test]
    fn a_bucket_is_first_hit_by_its_earliest_finding() {
        let tmp = tempfile::tempdir().unwrap();
        let registry = crate::registry::Registry::default();
        let mut late = finding(&tmp.path().join("a"), "minimized");
        late.1.first_hit_s = Some(95.0);
        late.1.occurrences = ["7:4:2".to_string(), "7:40:0".to_string()].into();
        let mut early = finding(&tmp.path().join("b"), "minimized");
        early.1.first_hit_s = Some(12.5);
        early.1.occurrences = ["7:11:5:inputs2".to_string()].into();
        let mut old = finding(&tmp.path().join("c"), "minimized");
        old.1.occurrences = ["not an occurrence".to_string()].into();
        let (buckets, _) = group(&[late, early, old], &registry, &History::new());
        assert_eq!(buckets.len(), 1, "{buckets:#?}");
        assert_eq!(buckets[0].first_hit_s, Some(12.5));
        assert_eq!(buckets[0].first_hit_module, Some(4));
        let json = serde_json::to_value(&buckets[0]).unwrap();
        assert_eq!(json["first_hit_s"], 12.5);
        assert_eq!(json["first_hit_module"], 4);
    }

    #[test]
    fn the_same_opcode_blamed_on_two_passes_is_two_buckets_with_stable_ids() {
        let folding = sig("constant_folding");
        let kernel = sig("below-hlo");
        assert_ne!(folding.id(), kernel.id());
        assert_eq!(folding.id(), sig("constant_folding").id());
        assert_eq!(
            folding.title(),
            "int count-leading-zeros: wrong value (constant_folding) on xla-cpu"
        );
    }
}

/// What minimizing a stored finding came to: `minimized.json` in its directory, written
/// atomically once the repro directory (`repro/`) is complete. Its presence means "done": a
/// resumed campaign does not minimize the finding again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MinimizedRecord {
    /// `minimized`; `not-reproduced` (the finding did not show again when run alone: its
    /// bucket comes from the original module); `failed` (the harness could not run it);
    /// `folded` (not minimized: a finding of the same provisional signature was, and this one
    /// joins its bucket).
    pub status: String,
    pub bucket: BucketSignature,
    pub bucket_id: String,
    pub title: String,
    pub instructions_before: usize,
    pub instructions_after: usize,
    pub tests: usize,
    pub elapsed_ms: u128,
    /// The repro directory, relative to the finding's directory (`repro`), when written.
    pub repro: Option<String>,
    /// The bisector's conclusion, when it ran.
    pub bisect: Option<String>,
    pub message: String,
}

impl MinimizedRecord {
    pub const FILE: &'static str = "minimized.json";

    /// The record of the finding in `dir`, when it was minimized.
    pub fn read(dir: &std::path::Path) -> Option<MinimizedRecord> {
        let bytes = std::fs::read(dir.join(Self::FILE)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    pub fn write(&self, dir: &std::path::Path) -> std::io::Result<()> {
        crate::store::write_atomic(&dir.join(Self::FILE), &serde_json::to_vec_pretty(self)?)
    }
}

/// One bucket of a store, as reports show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketView {
    pub id: String,
    pub title: String,
    /// Neither a registry entry nor the history knows it.
    pub new: bool,
    /// The registry entry that claims it (`id`), with its title and status.
    pub known: Option<KnownRef>,
    /// Seen by an earlier campaign whose history was given (first seen, as recorded there).
    pub seen_before: Option<String>,
    /// Its findings did not show a bug when run alone (`not-reproduced` records): the
    /// signature is the original module's, not a minimized repro's, so no registry entry is
    /// asked to claim it and it is not NEW; reports list it apart.
    pub not_reproduced: bool,
    pub signature: BucketSignature,
    /// Occurrences over every finding in the bucket.
    pub count: u64,
    /// Finding directories (names) in the bucket.
    pub findings: Vec<String>,
    /// The smallest repro: its directory (the finding's `repro/`) and instruction count.
    pub repro: Option<std::path::PathBuf>,
    pub instructions: usize,
    /// A few occurrences (`campaign seed:module index:program`) that reproduce it.
    pub examples: Vec<String>,
    /// Campaign seconds when the first of its findings was recorded (the earliest over its
    /// findings; `None` when none recorded a time).
    pub first_hit_s: Option<f64>,
    /// The smallest module index among its findings' occurrences: how far into the campaign's
    /// modules it was first hit ([`crate::store::FindingRecord::first_hit_module`]).
    pub first_hit_module: Option<u64>,
}

/// A registry entry as a bucket refers to it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KnownRef {
    pub id: String,
    pub title: String,
    pub status: crate::registry::Status,
    pub upstream: String,
    /// The entry's release range (`releases` in its TOML), when it has one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub releases: String,
    /// What `repro-bisect` established on the entry's regression module (`bisect` in its
    /// TOML), when it has been bisected.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub bisect: String,
}

impl BucketView {
    /// An entry of kind `intended` claims it: XLA does this on purpose, so it is no bug.
    pub fn intended(&self) -> bool {
        self.known
            .as_ref()
            .is_some_and(|k| k.status == crate::registry::Status::Intended)
    }
}

/// Bucket ids seen by earlier campaigns (a nightly's memory), with when first seen.
pub type History = std::collections::BTreeMap<String, String>;

/// The buckets of `findings` (each with its `minimized.json`, when it has one): grouped by
/// bucket id, claimed by `registry` entries, NEW unless the registry or `history` knows them;
/// NEW first, then by count. Findings not minimized yet are returned apart.
pub fn group(
    findings: &[(std::path::PathBuf, crate::store::FindingRecord)],
    registry: &crate::registry::Registry,
    history: &History,
) -> (Vec<BucketView>, Vec<std::path::PathBuf>) {
    let mut by_id: std::collections::BTreeMap<String, BucketView> = Default::default();
    let mut pending = Vec::new();
    for (dir, f) in findings {
        let Some(rec) = MinimizedRecord::read(dir) else {
            pending.push(dir.clone());
            continue;
        };
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let repro = rec.repro.as_ref().map(|r| dir.join(r));
        let not_reproduced = rec.status == "not-reproduced";
        // One bucket id per kind of record: a not-reproduced finding never joins (or names) a
        // bucket of minimized repros.
        let key = if not_reproduced {
            format!("{}-not-reproduced", rec.bucket_id)
        } else {
            rec.bucket_id.clone()
        };
        let v = by_id.entry(key).or_insert_with(|| {
            let known = (!not_reproduced)
                .then(|| registry.lookup(&rec.bucket))
                .flatten()
                .map(|e| KnownRef {
                    id: e.id.clone(),
                    title: e.title.clone(),
                    status: e.status,
                    upstream: e.upstream.clone(),
                    releases: e.releases.clone(),
                    bisect: e.bisect.clone(),
                });
            let seen_before = history.get(&rec.bucket_id).cloned();
            BucketView {
                id: rec.bucket_id.clone(),
                title: rec.title.clone(),
                new: known.is_none() && seen_before.is_none() && !not_reproduced,
                known,
                seen_before,
                not_reproduced,
                signature: rec.bucket.clone(),
                count: 0,
                findings: Vec::new(),
                repro: None,
                instructions: usize::MAX,
                examples: Vec::new(),
                first_hit_s: None,
                first_hit_module: None,
            }
        });
        v.count += f.count;
        v.first_hit_s = crate::store::earliest(v.first_hit_s, f.first_hit_s);
        v.first_hit_module = match (v.first_hit_module, f.first_hit_module()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        v.findings.push(name);
        if repro.is_some() && rec.instructions_after < v.instructions {
            v.instructions = rec.instructions_after;
            v.repro = repro;
        } else if v.repro.is_none() && rec.instructions_after < v.instructions {
            v.instructions = rec.instructions_after;
        }
        if v.examples.len() < 3 {
            v.examples.push(f.first_occurrence.clone());
        }
    }
    let mut out: Vec<BucketView> = by_id.into_values().collect();
    out.sort_by(|a, b| {
        b.new
            .cmp(&a.new)
            .then(b.count.cmp(&a.count))
            .then(a.id.cmp(&b.id))
    });
    (out, pending)
}

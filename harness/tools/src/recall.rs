//! Recall: how much of what a wrong XLA could return the judge proves wrong (`hlo-diff recall`).
//!
//! Real XLA results of generated modules (the default campaign's programs) and of the corpus
//! are perturbed in the ways a miscompile changes a result, and every perturbed result is
//! handed to the judge (`Policy::VERDICT`, the campaign's) as XLA's: a fault is found when the
//! verdict is a proven mismatch. The faults:
//!
//! - **k ulps at one element** ([`Fault::Ulps`]; integers: k added);
//! - **the sign of an exact zero** flipped ([`Fault::ZeroSign`]);
//! - **a NaN made a number** and **a number made a NaN** ([`Fault::NanToNumber`],
//!   [`Fault::NumberToNan`]);
//! - **a value moved to its neighbouring index** (two different elements swapped:
//!   [`Fault::Moved`]);
//! - **one scatter update dropped** ([`Fault::DroppedUpdate`]: the oracle's result with one
//!   update's indices moved out of bounds, so that update is skipped);
//! - **one row of a decomposition changed** ([`Fault::DecompositionRow`]: scaled by 1 + 2^-8).
//!
//! Each fault is counted by the op family of the element it hits (the opcode that computed the
//! output, looking through data movement) and the element type, and marked `unique` when the
//! texts leave that element exactly one correct value ([`unique_cone`]: every op of its cone is
//! exact or correctly rounded, no float reduction, no contraction, no narrow float kept wide,
//! no subnormal about). The judge's resolution per family is the smallest number of ulps it
//! detects at a site (powers of two). Beside the judge, the same faults are scored by the fixed
//! tolerances other tools use: `run_hlo_module` (abs and rel 1e-3) and `hlo_isolation` (abs
//! 0.01, rel 0.1): an element fails there only when both errors exceed their bounds.

use crate::campaign::{inputs_for, programs_for};
use engine::backend::{Backend, Outcome, RunOptions, RunResult};
use engine::interp_backend::InterpBackend;
use hlo::{ArrayLiteral, InstrId, Literal, Module, Opcode, PrimitiveType, Scalar};
use judge::compare::Tolerance;
use judge::{Judge, Policy, Trial, VerdictKind};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A perturbation of one XLA result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    Ulps(u64),
    ZeroSign,
    NanToNumber,
    NumberToNan,
    Moved,
    DroppedUpdate,
    DecompositionRow,
}

impl Fault {
    pub fn name(self) -> String {
        match self {
            Fault::Ulps(k) => format!("{k} ulp"),
            Fault::ZeroSign => "zero sign".into(),
            Fault::NanToNumber => "NaN to number".into(),
            Fault::NumberToNan => "number to NaN".into(),
            Fault::Moved => "moved element".into(),
            Fault::DroppedUpdate => "dropped scatter update".into(),
            Fault::DecompositionRow => "decomposition row".into(),
        }
    }

    /// A semantic fault: one with a single right answer whatever the rounding (recall's goal
    /// for these is 99%).
    pub fn is_semantic(self) -> bool {
        !matches!(self, Fault::Ulps(_) | Fault::DecompositionRow)
    }
}

/// The ulp counts every site is tried with.
pub const ULPS: [u64; 3] = [1, 16, 4096];

/// One injected fault and what became of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultRecord {
    pub module: String,
    pub fault: Fault,
    pub output: usize,
    pub flat: usize,
    /// The opcode that computed the element (through data movement), or `data movement`.
    pub family: String,
    pub ty: PrimitiveType,
    /// The texts leave the element exactly one correct value.
    pub unique: bool,
    /// The judge proved the perturbed result wrong.
    pub found: bool,
    /// The verdict's kind.
    pub verdict: VerdictKind,
    /// `run_hlo_module`'s rule (abs and rel 1e-3) flags it.
    pub run_hlo_module: bool,
    /// `hlo_isolation`'s rule (abs 0.01, rel 0.1) flags it.
    pub hlo_isolation: bool,
    /// For a fault not found: the freedoms that widened the sets that held it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub freedoms: Vec<String>,
}

/// The smallest perturbation the judge detects at one site.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    pub module: String,
    pub family: String,
    pub ty: PrimitiveType,
    pub unique: bool,
    /// The smallest power-of-two ulp count detected (up to 2^30); `None`: none detected.
    pub ulps: Option<u64>,
    /// That perturbation relative to the element's magnitude.
    pub relative: Option<f64>,
}

/// What happened to the unperturbed results.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// Verdicts of the unperturbed results, by kind.
    pub verdicts: BTreeMap<String, usize>,
    /// Modules whose unperturbed result is a finding (a bug, or a judge too strict): their
    /// names and the verdict's first line.
    pub findings: Vec<(String, String)>,
}

/// The measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecallReport {
    pub command: String,
    pub modules: usize,
    pub baseline: Baseline,
    pub faults: Vec<FaultRecord>,
    pub resolutions: Vec<Resolution>,
    /// Milliseconds of the set per judged fault (median and max).
    pub set_ms_median: f64,
    pub set_ms_max: f64,
}

/// What to measure on.
#[derive(Clone, Debug)]
pub struct RecallConfig {
    /// Generated programs: the default campaign's programs of module indices `0..count` at
    /// `seed`, one per module index.
    pub seed: u64,
    pub count: u64,
    /// Module files (`.txt`/`.hlo`) or directories of them, run on seeded plain inputs.
    pub corpus: Vec<PathBuf>,
    /// Sites per output leaf.
    pub sites: usize,
    /// Sites per module whose resolution is searched.
    pub resolution_sites: usize,
    pub command: String,
    /// Where to keep the modules whose unperturbed result is a finding or unproven, or with a
    /// fault the judge missed (`<n>.hlo` and `<n>.lit`, `n` the subject's index), for a look at
    /// each.
    pub keep: Option<PathBuf>,
}

impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig {
            seed: 0,
            count: 150,
            corpus: Vec::new(),
            sites: 2,
            resolution_sites: 2,
            command: String::new(),
            keep: None,
        }
    }
}

/// One module to perturb: its name, module and inputs.
pub struct Subject {
    pub name: String,
    pub module: Module,
    pub inputs: Vec<Literal>,
}

/// The generated programs and corpus modules of `cfg`.
pub fn subjects(cfg: &RecallConfig) -> Result<Vec<Subject>, String> {
    let mut out = Vec::new();
    let base = generators::Config::default();
    for g in 0..cfg.count {
        for p in programs_for(cfg.seed, g, 1, &base, true) {
            out.push(Subject {
                name: format!("gen:{}:{g}:{}", cfg.seed, p.seed),
                inputs: inputs_for(&p, 0),
                module: p.module,
            });
        }
    }
    let mut files = Vec::new();
    for c in &cfg.corpus {
        if c.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(c)
                .map_err(|e| format!("{}: {e}", c.display()))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let s = p.to_string_lossy();
                    s.ends_with("before_optimizations.txt") || s.ends_with(".hlo")
                })
                .collect();
            v.sort();
            files.extend(v);
        } else {
            files.push(c.clone());
        }
    }
    let plain = generators::Config {
        special_value_percent: 0,
        ..generators::Config::default()
    };
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let Ok(module) = hlo::parse::parse_module(&text) else {
            continue;
        };
        if hlo::verify::verify_module(&module).is_err() {
            continue;
        }
        let Ok(inputs) = generators::try_generate_inputs_from_seed(
            &module,
            7,
            &plain,
            interp::DEFAULT_MAX_BYTES,
        ) else {
            continue;
        };
        out.push(Subject {
            name: f.display().to_string(),
            module,
            inputs,
        });
    }
    Ok(out)
}

/// Runs every subject on `xla` and the oracle, and judges every fault of each.
pub fn measure(cfg: &RecallConfig, subjects: &[Subject], xla: &dyn Backend) -> RecallReport {
    let mut report = RecallReport {
        command: cfg.command.clone(),
        ..RecallReport::default()
    };
    let oracle = InterpBackend::new();
    let mut set_ms: Vec<f64> = Vec::new();
    for (n, s) in subjects.iter().enumerate() {
        let text = hlo::print::module_to_string(&s.module);
        let base = oracle.run_module(&s.module, &s.inputs);
        let Some(expected) = base.as_ok().cloned() else {
            *report
                .baseline
                .verdicts
                .entry("oracle failed".into())
                .or_default() += 1;
            continue;
        };
        let got = xla.run(&text, &s.inputs, &RunOptions::default());
        let Some(actual) = got.as_ok().cloned() else {
            *report
                .baseline
                .verdicts
                .entry(format!("xla {}", got.kind()))
                .or_default() += 1;
            continue;
        };
        report.modules += 1;
        let tol = Tolerance::for_module(&s.module);
        let verdict = judge(&s.module, &s.inputs, &expected, &actual, &tol);
        *report
            .baseline
            .verdicts
            .entry(verdict.kind.name().into())
            .or_default() += 1;
        if verdict.is_bug() {
            report.baseline.findings.push((
                s.name.clone(),
                verdict.message.lines().next().unwrap_or("").to_string(),
            ));
            keep(cfg, n, &text, &s.inputs);
            continue;
        }
        if verdict.kind == VerdictKind::Unproven {
            keep(cfg, n, &text, &s.inputs);
        }
        let plan = Plan::new(&s.module, &s.inputs, &expected, &actual, cfg, n as u64);
        let judged: Vec<(FaultRecord, f64)> = plan
            .faults
            .par_iter()
            .filter_map(|(f, site, perturbed)| {
                let started = std::time::Instant::now();
                let v = judge(&s.module, &s.inputs, &expected, perturbed, &tol);
                let ms = started.elapsed().as_secs_f64() * 1e3;
                let e = expected
                    .outputs
                    .iter()
                    .flat_map(|l| l.leaves())
                    .nth(site.output)?;
                let p = perturbed
                    .outputs
                    .iter()
                    .flat_map(|l| l.leaves())
                    .nth(site.output)?;
                Some((
                    FaultRecord {
                        module: s.name.clone(),
                        fault: *f,
                        output: site.output,
                        flat: site.flat,
                        family: site.family.clone(),
                        ty: site.ty,
                        unique: site.unique,
                        found: v.kind == VerdictKind::Mismatch,
                        verdict: v.kind,
                        run_hlo_module: tool_flags(e, p, 1e-3, 1e-3),
                        hlo_isolation: tool_flags(e, p, 0.01, 0.1),
                        freedoms: match (&v.proof, v.kind) {
                            (Some(pr), k) if k != VerdictKind::Mismatch => pr
                                .inside_freedoms
                                .iter()
                                .chain(&pr.unmodelled)
                                .cloned()
                                .collect(),
                            _ => Vec::new(),
                        },
                    },
                    ms,
                ))
            })
            .collect();
        if verdict.kind != VerdictKind::Unproven && judged.iter().any(|(r, _)| !r.found) {
            keep(cfg, n, &text, &s.inputs);
        }
        for (r, ms) in judged {
            set_ms.push(ms);
            report.faults.push(r);
        }
        let resolutions: Vec<Resolution> = plan
            .resolution_sites
            .par_iter()
            .map(|site| resolution(s, &expected, &actual, &tol, site))
            .collect();
        report.resolutions.extend(resolutions);
    }
    set_ms.sort_by(f64::total_cmp);
    report.set_ms_median = set_ms.get(set_ms.len() / 2).copied().unwrap_or(0.0);
    report.set_ms_max = set_ms.last().copied().unwrap_or(0.0);
    report
}

/// Keeps subject `n` (its text and inputs) in `cfg.keep`, when given.
fn keep(cfg: &RecallConfig, n: usize, text: &str, inputs: &[Literal]) {
    if let Some(dir) = &cfg.keep {
        let _ = std::fs::create_dir_all(dir);
        let _ = std::fs::write(dir.join(format!("{n}.hlo")), text);
        let _ = findings::store::write_literals(&dir.join(format!("{n}.lit")), inputs);
    }
}

/// The campaign's verdict on `actual` as XLA's result.
fn judge(
    module: &Module,
    inputs: &[Literal],
    expected: &RunResult,
    actual: &RunResult,
    tol: &Tolerance,
) -> judge::Verdict {
    let outcomes = vec![
        (engine::ORACLE.to_string(), Outcome::Ok(expected.clone())),
        ("xla-cpu".to_string(), Outcome::Ok(actual.clone())),
    ];
    Judge::offline()
        .with_policy(Policy::VERDICT)
        .judge(&Trial::new(module, inputs, &outcomes, tol))
        .verdict
}

/// Whether a fixed-tolerance tool flags some element of `p` against `e` (the reference):
/// both the absolute and the relative error above their bounds, a NaN against a number, or an
/// integer that differs.
fn tool_flags(e: &ArrayLiteral, p: &ArrayLiteral, abs: f64, rel: f64) -> bool {
    if e.ty != p.ty || e.len() != p.len() {
        return true;
    }
    (0..e.len()).any(|i| {
        let parts = |v: Scalar| -> Vec<f64> {
            match v {
                Scalar::C(r, im) => vec![r, im],
                v => vec![v.to_f64()],
            }
        };
        if !(e.ty.is_float() || e.ty.is_complex()) {
            return e.get(i) != p.get(i);
        }
        parts(e.get(i))
            .into_iter()
            .zip(parts(p.get(i)))
            .any(|(x, y)| {
                if x.is_nan() || y.is_nan() {
                    return x.is_nan() != y.is_nan();
                }
                if x == y {
                    return false;
                }
                let d = (x - y).abs();
                d > abs && d > rel * x.abs()
            })
    })
}

/// One element a fault is injected at.
#[derive(Clone, Debug)]
struct Site {
    output: usize,
    flat: usize,
    family: String,
    ty: PrimitiveType,
    unique: bool,
}

/// The faults of one module and the sites whose resolution is searched.
struct Plan {
    faults: Vec<(Fault, Site, RunResult)>,
    resolution_sites: Vec<Site>,
}

impl Plan {
    fn new(
        module: &Module,
        inputs: &[Literal],
        expected: &RunResult,
        actual: &RunResult,
        cfg: &RecallConfig,
        salt: u64,
    ) -> Plan {
        let leaves: Vec<&ArrayLiteral> = actual.outputs.iter().flat_map(|l| l.leaves()).collect();
        let producers = leaf_producers(module);
        let subnormal_inputs = inputs.iter().flat_map(|l| l.leaves()).any(has_subnormal);
        let mut faults = Vec::new();
        let mut resolution_sites = Vec::new();
        let mut rng = salt.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ cfg.seed;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for (leaf, a) in leaves.iter().enumerate() {
            if a.is_empty() || a.ty == PrimitiveType::Pred && a.len() < 2 {
                continue;
            }
            let (family, cone_unique) = match producers.get(leaf).copied().flatten() {
                Some(id) => (family_of(module, id), unique_cone(module, id)),
                None => ("data movement".to_string(), false),
            };
            let site = |flat: usize| Site {
                output: leaf,
                flat,
                family: family.clone(),
                ty: a.ty,
                unique: cone_unique && !subnormal_inputs && !is_subnormal(a.get(flat)),
            };
            // Random sites: k ulps (every k), and number to NaN.
            for s in 0..cfg.sites {
                let flat = (next() % a.len() as u64) as usize;
                let st = site(flat);
                for k in ULPS {
                    if let Some(r) = with_leaf(actual, leaf, |l| move_ulps(l, flat, k)) {
                        faults.push((Fault::Ulps(k), st.clone(), r));
                    }
                }
                if a.ty.is_float() && a.get(flat).to_f64().is_finite() {
                    if let Some(r) = with_leaf(actual, leaf, |l| set_float(l, flat, f64::NAN)) {
                        faults.push((Fault::NumberToNan, st.clone(), r));
                    }
                }
                if s < cfg.resolution_sites && a.ty.is_float() {
                    resolution_sites.push(st);
                }
            }
            // Every zero, NaN and neighbour swap kind once, at the first element that has it.
            if a.ty.is_float() {
                if let Some(flat) = (0..a.len()).find(|&i| a.get(i).to_f64() == 0.0) {
                    if let Some(r) = with_leaf(actual, leaf, |l| flip_sign(l, flat)) {
                        faults.push((Fault::ZeroSign, site(flat), r));
                    }
                }
                if let Some(flat) = (0..a.len()).find(|&i| a.get(i).to_f64().is_nan()) {
                    if let Some(r) = with_leaf(actual, leaf, |l| set_float(l, flat, 0.0)) {
                        faults.push((Fault::NanToNumber, site(flat), r));
                    }
                }
            }
            let nan = |i: usize| a.get(i).to_f64().is_nan();
            if let Some(flat) = (0..a.len().saturating_sub(1))
                .find(|&i| a.bits(i) != a.bits(i + 1) && !(nan(i) && nan(i + 1)))
            {
                if let Some(r) = with_leaf(actual, leaf, |l| swap(l, flat)) {
                    faults.push((Fault::Moved, site(flat), r));
                }
            }
            if is_decomposition(&family) && a.dims.len() >= 2 {
                if let Some(r) = with_leaf(actual, leaf, |l| scale_row(l, 0)) {
                    faults.push((Fault::DecompositionRow, site(0), r));
                }
            }
        }
        for (leaf, fault) in dropped_updates(module, inputs, expected, &producers) {
            let a = leaves[leaf];
            let e = expected.outputs.iter().flat_map(|l| l.leaves()).nth(leaf);
            let f = fault.outputs.iter().flat_map(|l| l.leaves()).nth(leaf);
            let flat = match (e, f) {
                (Some(e), Some(f)) => (0..e.len()).find(|&i| e.bits(i) != f.bits(i)).unwrap_or(0),
                _ => 0,
            };
            let st = Site {
                output: leaf,
                flat,
                family: "scatter".into(),
                ty: a.ty,
                unique: false,
            };
            faults.push((Fault::DroppedUpdate, st, fault));
        }
        Plan {
            faults,
            resolution_sites,
        }
    }
}

/// The smallest power-of-two ulp perturbation at `site` the judge finds (up to 2^30).
fn resolution(
    s: &Subject,
    expected: &RunResult,
    actual: &RunResult,
    tol: &Tolerance,
    site: &Site,
) -> Resolution {
    let leaf = actual
        .outputs
        .iter()
        .flat_map(|l| l.leaves())
        .nth(site.output);
    let found = |k: u64| {
        with_leaf(actual, site.output, |l| move_ulps(l, site.flat, k))
            .map(|r| judge(&s.module, &s.inputs, expected, &r, tol).kind == VerdictKind::Mismatch)
    };
    // Binary search over the exponent, assuming a larger move is found whenever a smaller one
    // is (the sets are intervals).
    let (mut lo, mut hi) = (0u32, 30u32);
    let mut best = None;
    if found(1u64 << hi) == Some(true) {
        while lo < hi {
            let mid = (lo + hi) / 2;
            if found(1u64 << mid) == Some(true) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        best = Some(1u64 << hi);
    }
    let relative = best.and_then(|k| {
        let l = leaf?;
        let moved = with_leaf(actual, site.output, |m| move_ulps(m, site.flat, k))?;
        let m = moved
            .outputs
            .iter()
            .flat_map(|x| x.leaves())
            .nth(site.output)?;
        let (x, y) = (l.get(site.flat).to_f64(), m.get(site.flat).to_f64());
        Some(((y - x) / x.abs().max(f64::MIN_POSITIVE)).abs())
    });
    Resolution {
        module: s.name.clone(),
        family: site.family.clone(),
        ty: site.ty,
        unique: site.unique,
        ulps: best,
        relative,
    }
}

/// `r` with output leaf `leaf` replaced by `f` of it; `None` when `f` makes no change.
fn with_leaf(
    r: &RunResult,
    leaf: usize,
    f: impl FnOnce(&mut ArrayLiteral) -> bool,
) -> Option<RunResult> {
    let mut leaves: Vec<ArrayLiteral> =
        r.outputs.iter().flat_map(|l| l.leaves()).cloned().collect();
    let l = leaves.get_mut(leaf)?;
    if !f(l) {
        return None;
    }
    Some(RunResult {
        outputs: rebuild(&r.outputs, leaves)?,
        ..r.clone()
    })
}

/// `outputs`' tuple trees with their leaves replaced by `leaves` (in order).
fn rebuild(outputs: &[Literal], leaves: Vec<ArrayLiteral>) -> Option<Vec<Literal>> {
    let mut it = leaves.into_iter();
    outputs
        .iter()
        .map(|l| Literal::from_leaves(&l.shape(), &mut it))
        .collect()
}

fn set_bits(a: &mut ArrayLiteral, i: usize, bits: u128) {
    let w = a.ty.byte_size();
    a.data[i * w..(i + 1) * w].copy_from_slice(&bits.to_le_bytes()[..w]);
}

/// Float bits of `ty` on a line where neighbouring floats differ by one.
fn ordered(ty: PrimitiveType, bits: u128) -> i128 {
    let w = ty.bit_width();
    let mag = (bits & ((1u128 << (w - 1)) - 1)) as i128;
    if bits >> (w - 1) & 1 == 1 {
        -mag
    } else {
        mag
    }
}

fn from_ordered(ty: PrimitiveType, v: i128) -> u128 {
    let w = ty.bit_width();
    if v < 0 {
        (1u128 << (w - 1)) | v.unsigned_abs()
    } else {
        v as u128
    }
}

/// Element `i` moved by `k` ulps (away from zero, or toward it when that would leave the
/// finite numbers); integers by `k`; complex values in their real part.
fn move_ulps(a: &mut ArrayLiteral, i: usize, k: u64) -> bool {
    let ty = a.ty;
    if ty == PrimitiveType::Pred {
        let b = a.bits(i);
        set_bits(a, i, b ^ 1);
        return true;
    }
    if let Some(c) = ty.complex_component() {
        let half = c.byte_size() * 8;
        let bits = a.bits(i);
        let re = bits & ((1u128 << half) - 1);
        let Some(moved) = moved_float(c, re, k) else {
            return false;
        };
        set_bits(a, i, (bits >> half << half) | moved);
        return true;
    }
    if ty.is_float() {
        let Some(moved) = moved_float(ty, a.bits(i), k) else {
            return false;
        };
        set_bits(a, i, moved);
        return true;
    }
    let v = a.get(i);
    let nv = match v {
        Scalar::S(x) => Scalar::S(x.wrapping_add(k as i64)),
        Scalar::U(x) => Scalar::U(x.wrapping_add(k)),
        _ => return false,
    };
    a.set(i, nv);
    a.get(i) != v
}

/// The bits of the float `k` ulps from `bits` (a finite value), keeping within the finite
/// values of `ty`; `None` for a NaN or infinity.
fn moved_float(ty: PrimitiveType, bits: u128, k: u64) -> Option<u128> {
    let decode = |b: u128| {
        let mut buf = [0u8; 16];
        buf.copy_from_slice(&b.to_le_bytes());
        hlo::literal::decode(ty, &buf[..ty.byte_size()]).to_f64()
    };
    let v = decode(bits);
    if !v.is_finite() {
        return None;
    }
    let o = ordered(ty, bits);
    let step = k as i128;
    for cand in [
        if o >= 0 { o + step } else { o - step },
        if o >= 0 { o - step } else { o + step },
    ] {
        let b = from_ordered(ty, cand);
        let w = ty.bit_width();
        if w < 128 && b >> w != 0 {
            continue;
        }
        let x = decode(b);
        if x.is_finite() && b != bits && x != v {
            return Some(b);
        }
    }
    None
}

fn set_float(a: &mut ArrayLiteral, i: usize, v: f64) -> bool {
    let before = a.bits(i);
    a.set(i, Scalar::F(v));
    a.bits(i) != before
}

fn flip_sign(a: &mut ArrayLiteral, i: usize) -> bool {
    let w = a.ty.bit_width();
    let b = a.bits(i);
    set_bits(a, i, b ^ (1u128 << (w - 1)));
    true
}

fn swap(a: &mut ArrayLiteral, i: usize) -> bool {
    if i + 1 >= a.len() {
        return false;
    }
    let (x, y) = (a.bits(i), a.bits(i + 1));
    if x == y {
        return false;
    }
    set_bits(a, i, y);
    set_bits(a, i + 1, x);
    true
}

/// Row `r` (of the last two dimensions, in every batch) scaled by 1 + 2^-8.
fn scale_row(a: &mut ArrayLiteral, r: usize) -> bool {
    let n = a.dims.len();
    let (rows, cols) = (a.dims[n - 2] as usize, a.dims[n - 1] as usize);
    if r >= rows || cols == 0 {
        return false;
    }
    let batch = a.len() / (rows * cols).max(1);
    let mut changed = false;
    for b in 0..batch {
        for c in 0..cols {
            let i = b * rows * cols + r * cols + c;
            match a.get(i) {
                Scalar::F(x) if x.is_finite() && x != 0.0 => {
                    changed |= set_float(a, i, x * (1.0 + 1.0 / 256.0));
                }
                Scalar::C(x, y) if x.is_finite() && y.is_finite() => {
                    let before = a.bits(i);
                    let s = 1.0 + 1.0 / 256.0;
                    a.set(i, Scalar::C(x * s, y * s));
                    changed |= a.bits(i) != before;
                }
                _ => {}
            }
        }
    }
    changed
}

fn is_subnormal(v: Scalar) -> bool {
    match v {
        Scalar::F(x) => subnormal_f(x),
        Scalar::C(r, i) => subnormal_f(r) || subnormal_f(i),
        _ => false,
    }
}

fn subnormal_f(x: f64) -> bool {
    // Subnormal in f32 (and in every narrower type XLA CPU computes in f32): below the
    // smallest normal f32, not zero.
    x != 0.0 && x.is_finite() && x.abs() < f32::MIN_POSITIVE as f64
}

fn has_subnormal(a: &ArrayLiteral) -> bool {
    (a.ty.is_float() || a.ty.is_complex()) && (0..a.len()).any(|i| is_subnormal(a.get(i)))
}

/// For each output leaf of the entry, the instruction that computes it (through the root
/// tuple); `None` where the leaf is not one instruction's array.
fn leaf_producers(module: &Module) -> Vec<Option<InstrId>> {
    let comp = module.entry_computation();
    let root = comp.root_instruction();
    if root.opcode == Opcode::Tuple {
        let mut out = Vec::new();
        for &op in &root.operands {
            let n = comp.instructions[op].shape.leaves().len();
            if comp.instructions[op].shape.as_array().is_some() {
                out.push(Some(op));
            } else {
                out.extend(std::iter::repeat_n(None, n));
            }
        }
        out
    } else if root.shape.as_array().is_some() {
        vec![Some(comp.root)]
    } else {
        vec![None; root.shape.leaves().len()]
    }
}

/// Ops that move elements without computing them.
fn moves_only(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Copy
            | Opcode::Reshape
            | Opcode::Bitcast
            | Opcode::Transpose
            | Opcode::Broadcast
            | Opcode::Slice
            | Opcode::Reverse
            | Opcode::GetTupleElement
            | Opcode::OptimizationBarrier
    )
}

/// The opcode that computed instruction `id`'s elements, looking through data movement.
fn family_of(module: &Module, mut id: InstrId) -> String {
    let comp = module.entry_computation();
    loop {
        let i = &comp.instructions[id];
        if moves_only(i.opcode) && !i.operands.is_empty() {
            id = i.operands[0];
            continue;
        }
        return match i.opcode {
            Opcode::Parameter | Opcode::Constant => "data movement".into(),
            Opcode::CustomCall => format!(
                "custom-call {}",
                i.string("custom_call_target").unwrap_or("?")
            ),
            op => op.name().to_string(),
        };
    }
}

fn is_decomposition(family: &str) -> bool {
    family == "cholesky" || family == "triangular-solve" || family.starts_with("custom-call lapack")
}

/// Whether the texts leave every element of instruction `id` exactly one correct value: every
/// op of its cone (called computations included) is exact or correctly rounded by the table,
/// no float reduction or contraction, no float multiply feeding an add (FMA contraction), no
/// narrow float type (excess precision), no conversion that may round twice (f64 to f16).
pub fn unique_cone(module: &Module, id: InstrId) -> bool {
    let comp = module.entry_computation();
    let mut seen = vec![false; comp.instructions.len()];
    let mut stack = vec![id];
    let mut calls = Vec::new();
    let mut has_float_mul = false;
    let mut has_float_add = false;
    let mut ok = true;
    let mut check = |comp: &hlo::Computation, i: &hlo::Instruction| {
        // A tuple-shaped op (a custom call, a while loop) is judged by its leaves' types.
        let leaves = i.shape.leaves();
        if leaves
            .iter()
            .skip(1)
            .any(|a| !hlo::semantics::row_for(i.opcode, a.ty).is_some_and(|r| r.rule.is_unique()))
        {
            ok = false;
        }
        let Some(ty) = leaves.first().map(|a| a.ty) else {
            return;
        };
        // A real result of a complex operand (abs, real, imag) follows the complex row.
        if let Some(from) = i
            .operands
            .first()
            .and_then(|&o| comp.instructions.get(o))
            .and_then(|o| o.shape.as_array())
        {
            if from.ty.is_complex()
                && !ty.is_complex()
                && !hlo::semantics::row_for(i.opcode, from.ty).is_some_and(|r| r.rule.is_unique())
            {
                ok = false;
            }
        }
        let class = ty.complex_component().unwrap_or(ty);
        let narrow = class.is_float() && class.bit_width() <= 16;
        let float = class.is_float();
        if narrow {
            ok = false;
        }
        match hlo::semantics::row_for(i.opcode, ty) {
            Some(r) if r.rule.is_unique() => {}
            _ => ok = false,
        }
        if float && i.opcode == Opcode::Multiply {
            has_float_mul = true;
        }
        if float && matches!(i.opcode, Opcode::Add | Opcode::Subtract) {
            has_float_add = true;
        }
        if i.opcode == Opcode::Convert {
            if let Some(from) = i
                .operands
                .first()
                .and_then(|&o| comp.instructions[o].shape.as_array())
            {
                if from.ty == PrimitiveType::F64 && ty.bit_width() <= 16 && float {
                    ok = false;
                }
                if !float && from.ty != ty {
                    // Float to integer, or integer to another integer type: out-of-range
                    // values are implementation-defined.
                    ok = false;
                }
            }
        }
        if !float
            && matches!(
                i.opcode,
                Opcode::Add
                    | Opcode::Subtract
                    | Opcode::Multiply
                    | Opcode::Divide
                    | Opcode::Remainder
                    | Opcode::Power
                    | Opcode::Negate
                    | Opcode::Abs
                    | Opcode::ShiftLeft
                    | Opcode::ShiftRightArithmetic
                    | Opcode::ShiftRightLogical
                    | Opcode::Iota
            )
        {
            // Integer overflow and division by zero are implementation-defined: not every
            // element has one value.
            ok = false;
        }
    };
    while let Some(k) = stack.pop() {
        if seen[k] {
            continue;
        }
        seen[k] = true;
        let i = &comp.instructions[k];
        check(comp, i);
        calls.extend(i.called_computations());
        stack.extend(i.operands.iter().copied());
    }
    let mut done = std::collections::BTreeSet::new();
    while let Some(c) = calls.pop() {
        if !done.insert(c) {
            continue;
        }
        let cc = &module.computations[c];
        for i in &cc.instructions {
            check(cc, i);
            calls.extend(i.called_computations());
        }
    }
    ok && !(has_float_mul && has_float_add)
}

/// For each scatter that computes an output leaf (through data movement) and whose indices are
/// an entry parameter: the oracle's result with one update dropped (its index vector moved out
/// of bounds), when that changes the leaf.
fn dropped_updates(
    module: &Module,
    inputs: &[Literal],
    expected: &RunResult,
    producers: &[Option<InstrId>],
) -> Vec<(usize, RunResult)> {
    let comp = module.entry_computation();
    let mut out = Vec::new();
    for (leaf, p) in producers.iter().enumerate() {
        let Some(mut id) = *p else { continue };
        while moves_only(comp.instructions[id].opcode) && !comp.instructions[id].operands.is_empty()
        {
            id = comp.instructions[id].operands[0];
        }
        let s = &comp.instructions[id];
        if s.opcode != Opcode::Scatter || s.operands.len() != 3 {
            continue;
        }
        let idx = &comp.instructions[s.operands[1]];
        let Some(pn) = idx
            .parameter_number
            .filter(|_| idx.opcode == Opcode::Parameter)
        else {
            continue;
        };
        let Some(Literal::Array(ind)) = inputs.get(pn as usize) else {
            continue;
        };
        let ivd = s.int("index_vector_dim").unwrap_or(ind.dims.len() as i64) as usize;
        let vec_len = if ivd < ind.dims.len() {
            ind.dims[ivd] as usize
        } else {
            1
        };
        if vec_len == 0 || ind.is_empty() {
            continue;
        }
        // The first index vector: the elements whose index along ivd varies, at 0 elsewhere.
        let stride: usize = ind.dims[ivd.min(ind.dims.len())..]
            .iter()
            .skip(1)
            .map(|&d| d as usize)
            .product();
        let mut changed = ind.clone();
        let big = match ind.ty.class() {
            hlo::TypeClass::Unsigned => Scalar::U(u64::MAX),
            _ => Scalar::S(i64::MAX),
        };
        for c in 0..vec_len {
            let flat = if ivd < ind.dims.len() { c * stride } else { 0 };
            changed.set(flat, big);
        }
        let mut ins = inputs.to_vec();
        ins[pn as usize] = Literal::Array(changed);
        let Outcome::Ok(r) = InterpBackend::new().run_module(module, &ins) else {
            continue;
        };
        let a = r.outputs.iter().flat_map(|l| l.leaves()).nth(leaf);
        let e = expected.outputs.iter().flat_map(|l| l.leaves()).nth(leaf);
        if a.is_none() || a == e {
            continue;
        }
        // Only that leaf changes: the rest is the oracle's own result.
        let mut leaves: Vec<ArrayLiteral> = expected
            .outputs
            .iter()
            .flat_map(|l| l.leaves())
            .cloned()
            .collect();
        leaves[leaf] = a.cloned().expect("checked");
        let Some(outputs) = rebuild(&expected.outputs, leaves) else {
            continue;
        };
        out.push((
            leaf,
            RunResult {
                outputs,
                ..expected.clone()
            },
        ));
    }
    out
}

/// Shares by group: found / total.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub found: usize,
    pub total: usize,
    pub run_hlo_module: usize,
    pub hlo_isolation: usize,
}

impl Share {
    fn add(&mut self, r: &FaultRecord) {
        self.total += 1;
        self.found += usize::from(r.found);
        self.run_hlo_module += usize::from(r.run_hlo_module);
        self.hlo_isolation += usize::from(r.hlo_isolation);
    }

    /// The table cells `found | of | share | run_hlo_module | hlo_isolation`.
    fn cells(&self) -> String {
        format!(
            "{} | {} | {} | {} | {}",
            self.found,
            self.total,
            pct(self.found, self.total),
            pct(self.run_hlo_module, self.total),
            pct(self.hlo_isolation, self.total)
        )
    }

    pub fn rate(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.found as f64 / self.total as f64
        }
    }
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / d as f64)
    }
}

impl RecallReport {
    /// The goals of the recall measurement: (1-ulp faults in unique elements, semantic faults).
    pub fn goals(&self) -> (Share, Share) {
        let mut one = Share::default();
        let mut sem = Share::default();
        for r in &self.faults {
            if r.fault == Fault::Ulps(1) && r.unique {
                one.add(r);
            }
            if r.fault.is_semantic() {
                sem.add(r);
            }
        }
        (one, sem)
    }

    /// Shares by fault kind.
    pub fn by_fault(&self) -> BTreeMap<Fault, Share> {
        let mut m: BTreeMap<Fault, Share> = BTreeMap::new();
        for r in &self.faults {
            m.entry(r.fault).or_default().add(r);
        }
        m
    }

    /// Shares by op family and element type (all faults).
    pub fn by_family(&self) -> BTreeMap<(String, String), Share> {
        let mut m: BTreeMap<(String, String), Share> = BTreeMap::new();
        for r in &self.faults {
            m.entry((r.family.clone(), r.ty.to_string()))
                .or_default()
                .add(r);
        }
        m
    }

    /// The median resolution (ulps) per family, with the sites that had none.
    pub fn resolution_by_family(&self) -> BTreeMap<String, (Option<u64>, usize, usize)> {
        let mut m: BTreeMap<String, Vec<Option<u64>>> = BTreeMap::new();
        for r in &self.resolutions {
            m.entry(r.family.clone()).or_default().push(r.ulps);
        }
        m.into_iter()
            .map(|(f, v)| {
                let mut found: Vec<u64> = v.iter().flatten().copied().collect();
                found.sort_unstable();
                let none = v.len() - found.len();
                let med = if none * 2 >= v.len() {
                    None
                } else {
                    let mut all: Vec<u64> = v.iter().map(|x| x.unwrap_or(u64::MAX)).collect();
                    all.sort_unstable();
                    Some(all[all.len() / 2])
                };
                (f, (med, v.len(), none))
            })
            .collect()
    }

    /// The report as markdown.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "Command: `{}`\n\n{} modules judged with their real XLA CPU results perturbed; {} \
             faults injected.\n\n",
            self.command,
            self.modules,
            self.faults.len()
        ));
        s.push_str("Unperturbed verdicts: ");
        s.push_str(
            &self
                .baseline
                .verdicts
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
        s.push_str(".\n\n");
        if !self.baseline.findings.is_empty() {
            s.push_str(
                "Unperturbed results that are findings (each a bug or a judge too strict):\n\n",
            );
            for (m, v) in &self.baseline.findings {
                s.push_str(&format!("- `{m}`: {v}\n"));
            }
            s.push('\n');
        }
        let (one, sem) = self.goals();
        let mut sem_unique = Share::default();
        for r in self
            .faults
            .iter()
            .filter(|r| r.fault.is_semantic() && r.unique)
        {
            sem_unique.add(r);
        }
        s.push_str("## Goals\n\n| goal | found | of | share | run_hlo_module | hlo_isolation |\n|---|---:|---:|---:|---:|---:|\n");
        for (name, g) in [
            (
                "1-ulp faults in elements with one correct value (goal 99%)",
                &one,
            ),
            ("semantic faults (goal 99%)", &sem),
            (
                "semantic faults in elements with one correct value",
                &sem_unique,
            ),
        ] {
            s.push_str(&format!("| {name} | {} |\n", g.cells()));
        }
        let mut missed: BTreeMap<(String, String, String, String), usize> = BTreeMap::new();
        for r in self.faults.iter().filter(|r| {
            !r.found && (r.fault.is_semantic() || (r.fault == Fault::Ulps(1) && r.unique))
        }) {
            *missed
                .entry((
                    r.fault.name(),
                    r.family.clone(),
                    r.ty.to_string(),
                    r.freedoms.join(", "),
                ))
                .or_default() += 1;
        }
        if !missed.is_empty() {
            let mut rows: Vec<_> = missed.into_iter().collect();
            rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            s.push_str("\n## Missed goal faults\n\nBy fault, family and type, with the freedoms of the sets that held them (`--keep DIR` keeps their modules):\n\n| fault | family | type | freedoms | missed |\n|---|---|---|---|---:|\n");
            for ((f, fam, ty, why), n) in rows {
                let why = if why.is_empty() { "-".to_string() } else { why };
                s.push_str(&format!("| {f} | {fam} | {ty} | {why} | {n} |\n"));
            }
        }
        s.push_str("\n## By fault\n\n| fault | found | of | share | run_hlo_module | hlo_isolation |\n|---|---:|---:|---:|---:|---:|\n");
        for (f, g) in self.by_fault() {
            s.push_str(&format!("| {} | {} |\n", f.name(), g.cells()));
        }
        s.push_str("\n## By op family and element type\n\n| family | type | found | of | share | run_hlo_module | hlo_isolation |\n|---|---|---:|---:|---:|---:|---:|\n");
        for ((f, t), g) in self.by_family() {
            s.push_str(&format!("| {f} | {t} | {} |\n", g.cells()));
        }
        s.push_str("\n## Resolution (smallest perturbation found, ulps of the element type)\n\n| family | median ulps | sites | sites with none up to 2^30 |\n|---|---:|---:|---:|\n");
        for (f, (med, n, none)) in self.resolution_by_family() {
            s.push_str(&format!(
                "| {f} | {} | {n} | {none} |\n",
                med.map_or("none".to_string(), |m| m.to_string())
            ));
        }
        s.push_str(&format!(
            "\nThe set's cost per judged fault: median {:.2} ms, max {:.1} ms.\n",
            self.set_ms_median, self.set_ms_max
        ));
        s
    }
}

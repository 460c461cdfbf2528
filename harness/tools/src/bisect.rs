//! The pass bisector (`repro-bisect`, `hlo-diff bisect`).
//!
//! One compile of the module on an XLA backend with `xla_dump_to` and `xla_dump_hlo_pass_re=.*`
//! leaves a snapshot of the module after every pass that changed it. The oracle (`interp`)
//! evaluates `before_optimizations` (what XLA's passes started from) and then each snapshot in
//! step order on the same inputs; the first snapshot whose result differs from
//! `before_optimizations` names the pass in its `after_<pass>`. Every comparison (XLA against the
//! oracle, a snapshot against `before_optimizations`) is the judge's ([`judge::Policy::CHOICES`]):
//! a difference that an implementation choice XLA is free to make explains is no difference
//! here, as in campaigns.
//!
//! Then a semantic check: the module is compiled again with `xla_disable_hlo_passes=<pass>` and
//! XLA's result is compared with the oracle's. Disabling a pass can hide a divergence the pass
//! did not cause, so both facts are reported, not merged into one.
//!
//! Other conclusions: the divergence is already in `before_optimizations` (jax's HLO -> MLIR ->
//! HLO trip changed the module's meaning); no pass changed the oracle's result while XLA's
//! output differs (code generation or the runtime is at fault); snapshots the oracle cannot
//! evaluate (custom calls a CPU pass introduced, ...) are skipped and named.

use crate::minimize::predicate::interp_outcome;
use engine::backend::RunResult;
use engine::backend::{Backend, Outcome, RunOptions};
use engine::ORACLE;
use hlo::dump::{DumpModule, PassStep};
use hlo::{Literal, Module};
use judge::compare::Tolerance;
use judge::{Judge, Trial, Verdict, VerdictKind};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Settings of one bisection.
#[derive(Clone, Debug, Default)]
pub struct BisectOptions {
    /// Options of every compile (extra debug options such as `xla_cpu_enable_fast_min_max`);
    /// the dump settings are added.
    pub run: RunOptions,
    /// Multiplies the comparator's default bounds (0 = 1.0).
    pub tolerance_scale: f64,
    /// Where XLA dumps; a temporary directory (removed afterwards) when `None`.
    pub dump_dir: Option<PathBuf>,
    /// Skip the recompile with the culprit disabled.
    pub no_confirm: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    /// The module or inputs are not usable.
    #[error("{0}")]
    BadInput(String),
    /// XLA could not be run at all.
    #[error("{0}")]
    Unavailable(String),
    /// XLA did not produce a result (crash, rejection, timeout): there is nothing to bisect
    /// over values.
    #[error("{backend} did not produce a result: {outcome}")]
    NoResult { backend: String, outcome: String },
    /// The dump or the oracle failed in a way that leaves nothing to compare.
    #[error("{0}")]
    Failed(String),
}

/// What the oracle made of one snapshot.
#[derive(Clone, Debug, Serialize)]
pub struct StepResult {
    pub step: u32,
    pub pipeline: String,
    pub after: String,
    pub before: String,
    pub path: String,
    pub pass_internal: bool,
    /// `same`, `differs`, `skipped`, or `not_evaluated` (after the first difference).
    pub status: String,
    /// Why a snapshot was skipped, or the comparison summary of a difference.
    pub note: Option<String>,
}

/// The pass that changed the oracle's result.
#[derive(Clone, Debug, Serialize)]
pub struct Culprit {
    /// The pass name as `xla_disable_hlo_passes` takes it.
    pub pass: String,
    pub pipeline: String,
    pub step: u32,
    pub path: String,
    /// Passes of snapshots skipped between the last agreeing snapshot and this one: any of
    /// them may be the real culprit.
    pub also_possible: Vec<String>,
    /// Unified diff of the module text before and after the pass.
    pub diff: String,
}

/// The recompile with the culprit pass disabled.
#[derive(Clone, Debug, Serialize)]
pub struct DisabledCheck {
    pub pass: String,
    /// XLA's result with the pass disabled agrees with the oracle (`None`: no result).
    pub xla_matches_oracle: Option<bool>,
    pub outcome: String,
    pub summary: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct BisectReport {
    pub backend: String,
    pub module_name: String,
    pub dump_dir: Option<String>,
    /// XLA's final result agrees with the oracle on `before_optimizations`.
    pub xla_matches_oracle: bool,
    pub xla_vs_oracle: String,
    /// The oracle's result on the given module agrees with its result on
    /// `before_optimizations` (`None`: the given module could not be evaluated).
    pub input_matches_before_optimizations: Option<bool>,
    pub steps: Vec<StepResult>,
    /// The after-optimizations module, evaluated when no snapshot differed.
    pub after_optimizations: Option<StepResult>,
    pub culprit: Option<Culprit>,
    pub disabled_check: Option<DisabledCheck>,
    pub skipped: usize,
    pub evaluated: usize,
    /// One paragraph for humans.
    pub conclusion: String,
    pub expected: String,
    pub actual: String,
}

impl BisectReport {
    /// A divergence was found (XLA differs from the oracle, or a pass changed the oracle's
    /// result, or the conversion did).
    pub fn found_divergence(&self) -> bool {
        !self.xla_matches_oracle
            || self.culprit.is_some()
            || self.input_matches_before_optimizations == Some(false)
    }

    /// The report as text for a terminal or a README.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(s, "module {} on {}", self.module_name, self.backend);
        let _ = writeln!(
            s,
            "XLA vs oracle: {}",
            if self.xla_matches_oracle {
                "agree"
            } else {
                &self.xla_vs_oracle
            }
        );
        let _ = writeln!(s, "oracle on before_optimizations: {}", self.expected);
        let _ = writeln!(s, "{}: {}", self.backend, self.actual);
        let _ = writeln!(
            s,
            "snapshots: {} evaluated, {} skipped, {} in the timeline",
            self.evaluated,
            self.skipped,
            self.steps.len()
        );
        for st in &self.steps {
            if st.status == "not_evaluated" {
                continue;
            }
            let _ = writeln!(
                s,
                "  {:04} {:<10} {}{}{}",
                st.step,
                st.status,
                st.pipeline,
                if st.pass_internal { "." } else { ".after_" },
                st.after,
            );
            if let Some(n) = &st.note {
                if st.status != "same" {
                    let _ = writeln!(s, "       {}", n.lines().next().unwrap_or(""));
                }
            }
        }
        if let Some(a) = &self.after_optimizations {
            let _ = writeln!(s, "  after_optimizations: {}", a.status);
        }
        let _ = writeln!(s, "\n{}", self.conclusion);
        if let Some(c) = &self.culprit {
            if !c.diff.is_empty() {
                let _ = writeln!(s, "\ndiff of the module across {}:\n{}", c.pass, c.diff);
            }
        }
        s
    }
}

/// The module of a dump that has the pass timeline (the one XLA compiled).
fn pick_module(index: &hlo::dump::DumpIndex) -> Option<&DumpModule> {
    index
        .modules
        .iter()
        .filter(|m| m.before_optimizations.is_some())
        .max_by_key(|m| (m.timeline.len(), m.id))
}

fn read(dir: &Path, rel: &str) -> Result<String, String> {
    std::fs::read_to_string(dir.join(rel)).map_err(|e| format!("{rel}: {e}"))
}

fn evaluate_text(text: &str, inputs: &[Literal]) -> Result<(Module, RunResult), String> {
    let m = hlo::parse::parse_module(text).map_err(|e| format!("our parser: {e}"))?;
    match interp_outcome(&m, inputs) {
        Outcome::Ok(r) => Ok((m, r)),
        o => Err(format!("oracle: {o}")),
    }
}

/// The judge's verdict on `got` (named `name`) against the oracle's result `expected` of
/// `module`: allowed implementation choices included, no further runs.
fn judged(
    module: &Module,
    inputs: &[Literal],
    expected: &RunResult,
    name: &str,
    got: &RunResult,
    tol: &Tolerance,
) -> Verdict {
    let outcomes = vec![
        (ORACLE.to_string(), Outcome::Ok(expected.clone())),
        (name.to_string(), Outcome::Ok(got.clone())),
    ];
    Judge::offline()
        .judge(&Trial {
            module,
            text: None,
            inputs,
            outcomes: &outcomes,
            reruns: &[],
            tolerance: tol,
        })
        .verdict
}

/// The comparison's summary of a verdict, or its message (a match explained by a choice says
/// which).
fn summary(v: &Verdict) -> String {
    match &v.comparison {
        Some(c) if !c.is_match() || v.explained.is_none() => c.summary(),
        _ => v.message.clone(),
    }
}

fn tolerance(m: &Module, scale: f64) -> Tolerance {
    Tolerance {
        scale: if scale > 0.0 { scale } else { 1.0 },
        ..Tolerance::for_module(m)
    }
}

fn unified_diff(a: &str, b: &str, a_name: &str, b_name: &str) -> String {
    similar::TextDiff::from_lines(a, b)
        .unified_diff()
        .context_radius(2)
        .header(a_name, b_name)
        .to_string()
}

fn short_literal(l: &Literal) -> String {
    let s = hlo::print::literal_to_string(l);
    if s.chars().count() > 600 {
        format!("{}...", s.chars().take(600).collect::<String>())
    } else {
        s
    }
}

/// Bisects `module_text` on `backend` with `inputs`.
pub fn bisect(
    module_text: &str,
    inputs: &[Literal],
    backend: &dyn Backend,
    opts: &BisectOptions,
) -> Result<BisectReport, BisectError> {
    let given = hlo::parse::parse_module(module_text).ok();
    // `_tmp` keeps a temporary dump directory until the bisection is over.
    let (dump_dir, _tmp) = make_dump_dir(opts)?;
    let xla = compile_with_dump(module_text, inputs, backend, &opts.run, &dump_dir)?;
    let dm = dumped_module(&dump_dir)?;
    let reference = Reference::evaluate(&dump_dir, &dm, inputs, opts.tolerance_scale)?;
    let xla_verdict = reference.judge(backend.name(), &xla);
    let xla_matches_oracle = agrees(&xla_verdict);

    let input_matches_before_optimizations =
        given
            .as_ref()
            .and_then(|g| match interp_outcome(g, inputs) {
                Outcome::Ok(r) => Some(agrees(&reference.judge("given", &r))),
                _ => None,
            });

    let walk = walk_timeline(&dump_dir, &dm.timeline, &reference);
    let culprit = walk
        .culprit_at
        .map(|k| name_culprit(&dump_dir, &dm.timeline, &walk, k, &reference));

    // With no snapshot differing, evaluate the final module too.
    let after_optimizations = match culprit {
        None => evaluate_after_optimizations(&dump_dir, &dm, &reference),
        Some(_) => None,
    };

    // The semantic check.
    let disabled_check = match (&culprit, opts.no_confirm) {
        (Some(c), false) => Some(check_disabled(
            module_text,
            backend,
            &opts.run,
            &c.pass,
            &reference,
        )),
        _ => None,
    };

    let conclusion = conclude(
        xla_matches_oracle,
        input_matches_before_optimizations,
        culprit.as_ref(),
        disabled_check.as_ref(),
        after_optimizations.as_ref(),
        walk.skipped,
    );
    Ok(BisectReport {
        backend: backend.name().into(),
        module_name: dm
            .name
            .clone()
            .unwrap_or_else(|| reference.module.name.clone()),
        dump_dir: opts.dump_dir.as_ref().map(|d| d.display().to_string()),
        xla_matches_oracle,
        xla_vs_oracle: summary(&xla_verdict)
            .lines()
            .next()
            .unwrap_or("")
            .to_string(),
        input_matches_before_optimizations,
        steps: walk.steps,
        after_optimizations,
        culprit,
        disabled_check,
        skipped: walk.skipped,
        evaluated: walk.evaluated,
        conclusion,
        expected: short_literal(&reference.run.result()),
        actual: short_literal(&xla.result()),
    })
}

/// Where XLA dumps: `opts.dump_dir` (created), else a temporary directory, returned with it
/// (removed when dropped).
fn make_dump_dir(
    opts: &BisectOptions,
) -> Result<(PathBuf, Option<tempfile::TempDir>), BisectError> {
    match &opts.dump_dir {
        Some(d) => {
            std::fs::create_dir_all(d)
                .map_err(|e| BisectError::Failed(format!("{}: {e}", d.display())))?;
            Ok((d.clone(), None))
        }
        None => {
            let tmp = tempfile::Builder::new()
                .prefix("hlo-diff-bisect-")
                .tempdir()
                .map_err(|e| BisectError::Failed(format!("temporary directory: {e}")))?;
            Ok((tmp.path().to_path_buf(), Some(tmp)))
        }
    }
}

/// XLA's result of the compile of `module_text` (with `run`'s options) that dumps a snapshot
/// after every pass into `dump_dir`.
fn compile_with_dump(
    module_text: &str,
    inputs: &[Literal],
    backend: &dyn Backend,
    run: &RunOptions,
    dump_dir: &Path,
) -> Result<RunResult, BisectError> {
    let mut run = run.clone();
    run.dump_to = Some(dump_dir.to_path_buf());
    run.pass_re = Some(".*".into());
    // Large constants are elided (`{...}`) from dumps by default; the oracle needs them.
    if !run
        .env_option_overrides
        .iter()
        .any(|(k, _)| k == "xla_dump_large_constants")
    {
        run.env_option_overrides
            .push(("xla_dump_large_constants".into(), "true".into()));
    }
    match backend.run(module_text, inputs, &run) {
        Outcome::Ok(r) => Ok(r),
        Outcome::Unavailable { why } => Err(BisectError::Unavailable(why)),
        Outcome::HarnessError { message, .. } => Err(BisectError::BadInput(message)),
        o => Err(BisectError::NoResult {
            backend: backend.name().into(),
            outcome: o.to_string(),
        }),
    }
}

/// The module of the dump in `dump_dir` that XLA compiled (see [`pick_module`]).
fn dumped_module(dump_dir: &Path) -> Result<DumpModule, BisectError> {
    let index = hlo::dump::read_dump_dir(dump_dir)
        .map_err(|e| BisectError::Failed(format!("reading the dump: {e}")))?;
    pick_module(&index).cloned().ok_or_else(|| {
        BisectError::Failed(format!(
            "the dump in {} has no before_optimizations module",
            dump_dir.display()
        ))
    })
}

fn agrees(v: &Verdict) -> bool {
    v.kind == VerdictKind::Match
}

/// What every comparison is against: the oracle's result on `before_optimizations`, the
/// module XLA's passes started from.
struct Reference<'a> {
    inputs: &'a [Literal],
    /// `before_optimizations`' path in the dump.
    path: String,
    text: String,
    module: Module,
    /// The oracle's result on `module`.
    run: RunResult,
    tol: Tolerance,
}

impl<'a> Reference<'a> {
    /// Reads `dm`'s `before_optimizations` from `dump_dir` and evaluates it on `inputs`.
    fn evaluate(
        dump_dir: &Path,
        dm: &DumpModule,
        inputs: &'a [Literal],
        tolerance_scale: f64,
    ) -> Result<Reference<'a>, BisectError> {
        let path = dm.before_optimizations.clone().unwrap_or_default();
        let text = read(dump_dir, &path).map_err(BisectError::Failed)?;
        let (module, run) = evaluate_text(&text, inputs).map_err(|e| {
            BisectError::Failed(format!(
                "the oracle cannot evaluate before_optimizations ({path}): {e}"
            ))
        })?;
        let tol = tolerance(&module, tolerance_scale);
        Ok(Reference {
            inputs,
            path,
            text,
            module,
            run,
            tol,
        })
    }

    /// The judge's verdict on `got` (named `name`) against the oracle's result.
    fn judge(&self, name: &str, got: &RunResult) -> Verdict {
        judged(&self.module, self.inputs, &self.run, name, got, &self.tol)
    }

    /// The verdict on the oracle's result on the snapshot `rel` of `dump_dir`, or why it could
    /// not be evaluated.
    fn judge_snapshot(&self, dump_dir: &Path, rel: &str) -> Result<Verdict, String> {
        let (_, got) = read(dump_dir, rel).and_then(|t| evaluate_text(&t, self.inputs))?;
        Ok(self.judge("snapshot", &got))
    }
}

/// The oracle's walk over the timeline's snapshots, up to the first that differs.
struct Walk {
    /// One per snapshot of the timeline.
    steps: Vec<StepResult>,
    /// The first snapshot whose result differs from `before_optimizations`.
    culprit_at: Option<usize>,
    /// The last snapshot before it whose result agrees.
    last_agreeing: Option<usize>,
    evaluated: usize,
    skipped: usize,
}

/// Evaluates the snapshots of `timeline` in step order until one differs from the reference;
/// those the oracle cannot evaluate are skipped, those after the first difference are not
/// evaluated.
fn walk_timeline(dump_dir: &Path, timeline: &[PassStep], reference: &Reference) -> Walk {
    let mut walk = Walk {
        steps: Vec::with_capacity(timeline.len()),
        culprit_at: None,
        last_agreeing: None,
        evaluated: 0,
        skipped: 0,
    };
    for (k, st) in timeline.iter().enumerate() {
        let mut r = StepResult {
            step: st.step,
            pipeline: st.pipeline.clone(),
            after: st.after.clone(),
            before: st.before.clone(),
            path: st.path.clone(),
            pass_internal: st.pass_internal,
            status: "not_evaluated".into(),
            note: None,
        };
        if walk.culprit_at.is_none() {
            match reference.judge_snapshot(dump_dir, &st.path) {
                Err(e) => {
                    r.status = "skipped".into();
                    r.note = Some(e);
                    walk.skipped += 1;
                }
                Ok(v) => {
                    walk.evaluated += 1;
                    if agrees(&v) {
                        r.status = "same".into();
                        walk.last_agreeing = Some(k);
                    } else {
                        r.status = "differs".into();
                        r.note = Some(summary(&v));
                        walk.culprit_at = Some(k);
                    }
                }
            }
        }
        walk.steps.push(r);
    }
    walk
}

/// The pass a snapshot is after: its pipeline for a pass-internal snapshot, else its `after`.
fn pass_of(st: &PassStep) -> String {
    if st.pass_internal {
        st.pipeline.clone()
    } else {
        st.after.clone()
    }
}

/// The pass, as `xla_disable_hlo_passes` takes it, that made snapshot `k` of `timeline`
/// differ.
fn culprit_pass(timeline: &[PassStep], k: usize) -> String {
    let st = &timeline[k];
    if !st.pass_internal && st.is_pipeline_start() {
        // The module changed between the previous snapshot and this pipeline's start: the
        // pass that ran in between is the previous snapshot's `before`.
        k.checked_sub(1)
            .map(|p| timeline[p].before.clone())
            .filter(|b| !b.is_empty() && b != "pipeline-end")
            .unwrap_or_else(|| st.after.clone())
    } else {
        pass_of(st)
    }
}

/// The culprit at snapshot `k` (the walk's first difference): its pass, the passes of the
/// snapshots skipped since the last agreeing one (any of them may be the real culprit), and
/// the diff of the module across it.
fn name_culprit(
    dump_dir: &Path,
    timeline: &[PassStep],
    walk: &Walk,
    k: usize,
    reference: &Reference,
) -> Culprit {
    let st = &timeline[k];
    let pass = culprit_pass(timeline, k);
    let from = walk.last_agreeing.map(|p| p + 1).unwrap_or(0);
    let also_possible: Vec<String> = (from..k)
        .filter(|&j| walk.steps[j].status == "skipped")
        .map(|j| pass_of(&timeline[j]))
        .filter(|p| p != "pipeline-start" && *p != pass)
        .collect();
    let (prev_name, prev_text) = match k.checked_sub(1) {
        Some(p) => (
            timeline[p].path.clone(),
            read(dump_dir, &timeline[p].path).unwrap_or_default(),
        ),
        None => (reference.path.clone(), reference.text.clone()),
    };
    let cur_text = read(dump_dir, &st.path).unwrap_or_default();
    Culprit {
        pass,
        pipeline: if st.pass_internal {
            String::new()
        } else {
            st.pipeline.clone()
        },
        step: st.step,
        path: st.path.clone(),
        also_possible,
        diff: unified_diff(&prev_text, &cur_text, &prev_name, &st.path),
    }
}

/// The oracle's result on `dm`'s after-optimizations module against the reference (`None`
/// when the dump has none).
fn evaluate_after_optimizations(
    dump_dir: &Path,
    dm: &DumpModule,
    reference: &Reference,
) -> Option<StepResult> {
    let p = dm.after_optimizations.values().next()?;
    let mut r = StepResult {
        step: u32::MAX,
        pipeline: String::new(),
        after: "optimizations".into(),
        before: String::new(),
        path: p.clone(),
        pass_internal: false,
        status: "skipped".into(),
        note: None,
    };
    match reference.judge_snapshot(dump_dir, p) {
        Err(e) => r.note = Some(e),
        Ok(v) => {
            r.status = if agrees(&v) { "same" } else { "differs" }.into();
            r.note = Some(summary(&v));
        }
    }
    Some(r)
}

/// Compiles `module_text` again with `pass` disabled (and `run`'s options) and compares XLA's
/// result with the reference.
fn check_disabled(
    module_text: &str,
    backend: &dyn Backend,
    run: &RunOptions,
    pass: &str,
    reference: &Reference,
) -> DisabledCheck {
    let mut run = run.clone();
    run.disabled_passes.push(pass.to_string());
    match backend.run(module_text, reference.inputs, &run) {
        Outcome::Ok(r) => {
            let v = reference.judge(backend.name(), &r);
            DisabledCheck {
                pass: pass.to_string(),
                xla_matches_oracle: Some(agrees(&v)),
                outcome: "ok".into(),
                summary: format!(
                    "{} (XLA gave {})",
                    summary(&v).lines().next().unwrap_or(""),
                    short_literal(&r.result())
                ),
            }
        }
        o => DisabledCheck {
            pass: pass.to_string(),
            xla_matches_oracle: None,
            outcome: o.kind().into(),
            summary: o.to_string(),
        },
    }
}

fn conclude(
    xla_ok: bool,
    input_same: Option<bool>,
    culprit: Option<&Culprit>,
    disabled: Option<&DisabledCheck>,
    after_opt: Option<&StepResult>,
    skipped: usize,
) -> String {
    let mut parts = Vec::new();
    if input_same == Some(false) {
        parts.push(
            "The divergence is already in before_optimizations: the oracle's result on the given \
             module differs from its result on the module XLA received (the HLO -> MLIR -> HLO \
             conversion changed the module's meaning)."
                .to_string(),
        );
    }
    match culprit {
        Some(c) => {
            let mut s = format!(
                "The oracle's result first changes after pass `{}`{} (step {}, {}).",
                c.pass,
                if c.pipeline.is_empty() {
                    String::new()
                } else {
                    format!(" in pipeline `{}`", c.pipeline)
                },
                c.step,
                c.path
            );
            if !c.also_possible.is_empty() {
                s.push_str(&format!(
                    " Snapshots the oracle could not evaluate lie just before it, so these passes \
                     may be responsible instead: {}.",
                    c.also_possible.join(", ")
                ));
            }
            if xla_ok {
                s.push_str(" XLA's final result nevertheless agrees with the oracle.");
            }
            parts.push(s);
            if let Some(d) = disabled {
                parts.push(match d.xla_matches_oracle {
                    Some(true) => format!(
                        "With xla_disable_hlo_passes={} XLA's result agrees with the oracle.",
                        d.pass
                    ),
                    Some(false) => format!(
                        "With xla_disable_hlo_passes={} XLA's result still differs from the \
                         oracle ({}): another pass or code generation diverges as well.",
                        d.pass, d.summary
                    ),
                    None => format!(
                        "Recompiling with xla_disable_hlo_passes={} gave no result: {}.",
                        d.pass, d.summary
                    ),
                });
            }
        }
        None if !xla_ok => {
            let mut s = String::from(
                "No pass changed the oracle's result: the divergence is in code \
                 generation/runtime.",
            );
            if let Some(a) = after_opt {
                s.push_str(match a.status.as_str() {
                    "same" => {
                        " The oracle evaluates the after-optimizations module to the same result \
                         as before_optimizations."
                    }
                    "differs" => {
                        " The oracle evaluates the after-optimizations module to a different \
                         result: a pass whose snapshot was not dumped changed it."
                    }
                    _ => " The oracle cannot evaluate the after-optimizations module.",
                });
            }
            if skipped > 0 {
                s.push_str(&format!(
                    " {skipped} snapshot(s) could not be evaluated and were skipped."
                ));
            }
            parts.push(s);
        }
        None => parts.push(
            "XLA's result agrees with the oracle and no pass changed the oracle's result."
                .to_string(),
        ),
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn culprit(also: &[&str]) -> Culprit {
        Culprit {
            pass: "algsimp".into(),
            pipeline: "simplification".into(),
            step: 6,
            path: "module_0001.m.0006.simplification.after_algsimp.before_dce.txt".into(),
            also_possible: also.iter().map(|s| s.to_string()).collect(),
            diff: String::new(),
        }
    }

    #[test]
    fn conclusions_name_what_was_found() {
        let c = conclude(false, Some(true), Some(&culprit(&[])), None, None, 0);
        assert!(
            c.contains("after pass `algsimp` in pipeline `simplification` (step 6"),
            "{c}"
        );
        let c = conclude(
            false,
            Some(true),
            Some(&culprit(&["constant_folding"])),
            None,
            None,
            1,
        );
        assert!(
            c.contains("may be responsible instead: constant_folding"),
            "{c}"
        );
        let d = DisabledCheck {
            pass: "algsimp".into(),
            xla_matches_oracle: Some(false),
            outcome: "ok".into(),
            summary: "1 of 1 elements differ".into(),
        };
        let c = conclude(false, Some(true), Some(&culprit(&[])), Some(&d), None, 0);
        assert!(c.contains("still differs"), "{c}");
        let c = conclude(false, Some(true), None, None, None, 2);
        assert!(
            c.contains(
                "No pass changed the oracle's result: the divergence is in code generation/runtime"
            ),
            "{c}"
        );
        assert!(c.contains("2 snapshot(s) could not be evaluated"), "{c}");
        let c = conclude(true, Some(false), None, None, None, 0);
        assert!(
            c.starts_with("The divergence is already in before_optimizations"),
            "{c}"
        );
        let c = conclude(true, Some(true), None, None, None, 0);
        assert!(
            c.contains("agrees with the oracle and no pass changed"),
            "{c}"
        );
    }

    #[test]
    fn the_module_with_the_longest_timeline_is_bisected() {
        let index = hlo::dump::classify_paths(&[
            "module_0001.a.before_optimizations.txt",
            "module_0003.b.before_optimizations.txt",
            "module_0003.b.0000.p.after_pipeline-start.before_x.txt",
            "module_0003.b.0001.p.after_x.before_pipeline-end.txt",
        ]);
        assert_eq!(
            pick_module(&index).and_then(|m| m.name.clone()).as_deref(),
            Some("b")
        );
    }
}

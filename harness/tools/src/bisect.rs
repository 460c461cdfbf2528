//! The pass bisector (`repro-bisect`, `hlo-diff bisect`).
//!
//! One compile of the module on an XLA backend with `xla_dump_to` and `xla_dump_hlo_pass_re=.*`
//! leaves a snapshot of the module after every pass that changed it. The oracle (`interp`)
//! evaluates `before_optimizations` (what XLA's passes started from) and then each snapshot in
//! step order on the same inputs; the first snapshot whose result differs from
//! `before_optimizations` names the pass in its `after_<pass>`. Every comparison (XLA against the
//! oracle, a snapshot against `before_optimizations`) is the judge's ([`judge::Policy::VERDICT`]):
//! a difference that an implementation choice XLA is free to make explains is no difference
//! here, as in campaigns.
//!
//! Then a semantic check: the module is compiled again with `xla_disable_hlo_passes=<pass>` and
//! XLA's result is compared with the oracle's. Disabling a pass can hide a divergence the pass
//! did not cause, so both facts are reported, not merged into one.
//!
//! Other conclusions: the divergence is already in `before_optimizations` (jax's HLO -> MLIR ->
//! HLO trip changed the module's meaning); below HLO (code generation, a library kernel, the
//! runtime), said only when every snapshot and `after_optimizations` were evaluated and agree.
//! Snapshots the oracle cannot evaluate (custom calls a CPU pass introduced, ...) are skipped,
//! and then the conclusion names the last agreeing and the first unevaluable snapshot and
//! claims nothing past them ([`Evidence`]).
//!
//! Beside the snapshot verdict: the disable-pass search ([`crate::disable`]) and, when no
//! snapshot names a pass, kernel isolation ([`crate::isolate`]). A compile that crashes or is
//! rejected is compiled again with every pass dumped: the last file written names the pass XLA
//! was in, and the snapshots written before the failure are walked (our verifier, the oracle)
//! to the first that is broken ([`FailureBisect`]). Every recompile is skipped with
//! `no_confirm` (campaigns).

use crate::disable::{DisableSearch, PassRole};
use crate::isolate::Isolation;
use crate::minimize::predicate::interp_outcome;
use engine::backend::RunResult;
use engine::backend::{Backend, Outcome, RunOptions, StageTimeouts};
use engine::ORACLE;
use hlo::dump::{DumpModule, PassStep};
use hlo::{Literal, Module};
use judge::compare::Tolerance;
use judge::{Judge, Trial, Verdict};
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
    /// Skip every recompile: the one with the culprit disabled and the disable-pass search.
    pub no_confirm: bool,
    /// At most this many compiles for the disable-pass search, and as many kernels run alone by
    /// kernel isolation (0 = 60).
    pub search_budget: usize,
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

/// A snapshot named in a conclusion.
#[derive(Clone, Debug, Serialize)]
pub struct StepRef {
    pub step: u32,
    /// The pass the snapshot is after (as `xla_disable_hlo_passes` takes it).
    pub pass: String,
    pub path: String,
    /// Why the oracle could not evaluate it.
    pub note: Option<String>,
}

/// How far the snapshots establish where the divergence is.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Evidence {
    /// The first snapshot the oracle could not evaluate.
    pub first_unevaluable: Option<StepRef>,
    /// The last evaluated snapshot before it that agreed with before_optimizations (`None`
    /// with `first_unevaluable` set: none did, before_optimizations is the last agreeing
    /// module).
    pub last_agreeing: Option<StepRef>,
    /// Every snapshot and after_optimizations were evaluated and agree while XLA's result
    /// differs: the divergence is below HLO (code generation, a library kernel, the runtime).
    pub below_hlo: bool,
}

/// A compile or run that gave no result (crash, rejection, hang): where XLA was when it
/// failed.
#[derive(Clone, Debug, Serialize)]
pub struct FailureBisect {
    /// `crash`, `rejected` or `timeout`.
    pub kind: String,
    /// `parse`, `convert`, `compile` or `execute`.
    pub stage: String,
    pub outcome: String,
    /// The compile again with every pass dumped failed the same way (kind and stage).
    pub reproduced: Option<bool>,
    /// The HLO pass XLA had entered and not finished when it failed (from the per-pass files
    /// written before the worker died).
    pub last_pass_entered: Option<String>,
    /// The last per-pass file written before the failure.
    pub last_snapshot: Option<String>,
    /// Where the failure happened, in words.
    pub location: String,
    /// The source location of XLA's failed CHECK or RET_CHECK (or the first XLA source
    /// location its message names), its path from `xla/` on: `xla/service/while_util.cc:123`.
    pub check: Option<String>,
    /// Per-pass files the failing compile wrote.
    pub snapshots: usize,
    /// The pass after which XLA's own verifier rejected the module ("Failed after P").
    pub rejected_after: Option<String>,
    /// The first snapshot written before the failure that our verifier rejects or whose
    /// oracle result differs from before_optimizations': the pass that broke the module.
    pub first_broken: Option<StepRef>,
    /// Snapshots (that changed the module) the oracle evaluated, and those it could not.
    pub evaluated: usize,
    pub unevaluable: usize,
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
    /// The passes whose disabling avoids the divergence (see [`crate::disable`]).
    pub disable_search: Option<DisableSearch>,
    /// How far the snapshots establish where the divergence is.
    pub evidence: Evidence,
    /// XLA gave no result: where it failed.
    pub failure: Option<FailureBisect>,
    /// Kernel isolation below HLO (see [`crate::isolate`]): run when XLA differs (or fails
    /// while executing) and no snapshot names a pass.
    pub isolation: Option<Isolation>,
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
            || self.failure.is_some()
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
        if self.failure.is_none() {
            let _ = writeln!(
                s,
                "snapshots: {} evaluated, {} skipped, {} in the timeline",
                self.evaluated,
                self.skipped,
                self.steps.len()
            );
        }
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
        if let Some(f) = &self.failure {
            let _ = writeln!(s, "failure: {} at {}", f.kind, f.stage);
            if let Some(p) = &f.last_pass_entered {
                let _ = writeln!(s, "  last pass entered: {p}");
            }
            if let Some(p) = &f.last_snapshot {
                let _ = writeln!(s, "  last file written: {p}");
            }
            let _ = writeln!(
                s,
                "  per-pass files written: {} ({} changed the module and were evaluated, {} \
                 could not be)",
                f.snapshots, f.evaluated, f.unevaluable
            );
            if let Some(b) = &f.first_broken {
                let _ = writeln!(s, "  first broken: step {} after {}", b.step, b.pass);
            }
        }
        if let Some(d) = &self.disable_search {
            let _ = writeln!(
                s,
                "disable-pass search: {} compiles over {} passes; smallest set: {}",
                d.compiles,
                d.candidates.len(),
                if d.minimal.is_empty() {
                    "none".to_string()
                } else {
                    d.minimal.join(", ")
                }
            );
            for r in &d.roles {
                let _ = writeln!(s, "  {:<16} {} ({})", r.role, r.pass, r.why);
            }
        }
        if let Some(i) = &self.isolation {
            let _ = writeln!(s, "kernel isolation: {} kernels run alone", i.kernels.len());
            for k in &i.kernels {
                let _ = writeln!(
                    s,
                    "  {:<12} {} ({}{}{}){}",
                    k.status,
                    k.name,
                    k.kind.trim(),
                    k.created_by
                        .as_ref()
                        .map(|p| format!(", created by {p}"))
                        .unwrap_or_default(),
                    k.in_place
                        .as_ref()
                        .map(|a| format!(", run in place: input_output_alias={a}"))
                        .unwrap_or_default(),
                    if k.note.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", k.note)
                    }
                );
            }
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

impl BisectReport {
    /// The report as a markdown section (for an issue or a campaign report).
    pub fn markdown(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(s, "## Bisection ({})\n", self.backend);
        let _ = writeln!(s, "{}\n", self.conclusion);
        if let Some(f) = &self.failure {
            let _ = writeln!(s, "- failure: {} at {} (`{}`)", f.kind, f.stage, f.outcome);
            if let Some(p) = &f.last_pass_entered {
                let _ = writeln!(s, "- last pass entered: `{p}`");
            }
        } else {
            let _ = writeln!(
                s,
                "- snapshots: {} evaluated, {} skipped, {} in the timeline",
                self.evaluated,
                self.skipped,
                self.steps.len()
            );
            if let Some(c) = &self.culprit {
                let _ = writeln!(s, "- changed the result: `{}` (step {})", c.pass, c.step);
            }
            if let Some(r) = &self.evidence.last_agreeing {
                let _ = writeln!(
                    s,
                    "- last agreeing snapshot: step {} (`{}`)",
                    r.step, r.pass
                );
            }
            if let Some(r) = &self.evidence.first_unevaluable {
                let _ = writeln!(
                    s,
                    "- first unevaluable snapshot: step {} (`{}`)",
                    r.step, r.pass
                );
            }
            if self.evidence.below_hlo {
                s.push_str("- below HLO: every snapshot and after_optimizations agree\n");
            }
        }
        if let Some(d) = &self.disable_search {
            let _ = writeln!(
                s,
                "- disable-pass search ({} compiles): smallest set {}{}",
                d.compiles,
                if d.minimal.is_empty() {
                    "none".to_string()
                } else {
                    format!("`xla_disable_hlo_passes={}`", d.minimal.join(","))
                },
                match &d.confirmation {
                    Some(c) if c.took_effect => " (confirmed)",
                    Some(_) => " (not confirmed)",
                    None => "",
                }
            );
            for r in &d.roles {
                let _ = writeln!(s, "  - `{}`: {} ({})", r.pass, r.role, r.why);
            }
        }
        if let Some(k) = self.isolation.as_ref().and_then(|i| i.wrong()) {
            let _ = writeln!(
                s,
                "- first wrong kernel: `{}` ({}), {}{}{}",
                k.name,
                k.kind.trim(),
                k.status,
                k.created_by
                    .as_ref()
                    .map(|p| format!(", created by `{p}`"))
                    .unwrap_or_default(),
                k.in_place
                    .as_ref()
                    .map(|a| format!(", run in place (`input_output_alias={a}`)"))
                    .unwrap_or_default()
            );
            if let Some(m) = &self
                .isolation
                .as_ref()
                .and_then(|i| i.kernel_module.clone())
            {
                let _ = writeln!(s, "\n```\n{}```", m);
            }
        }
        if let Some(c) = &self.culprit {
            if !c.diff.is_empty() {
                let _ = writeln!(s, "\n```diff\n{}```", c.diff);
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
        .judge(&Trial::new(module, inputs, &outcomes, tol))
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

/// The default tolerance of `m`, scaled by `scale` (0 = 1.0): every comparison of a module
/// against the oracle in this crate uses it.
pub(crate) fn tolerance(m: &Module, scale: f64) -> Tolerance {
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

pub(crate) fn short_literal(l: &Literal) -> String {
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
    let xla = match compile_with_dump(module_text, inputs, backend, &opts.run, &dump_dir, ".*")? {
        Ok(r) => r,
        Err(failed) => {
            return bisect_failure(module_text, inputs, backend, opts, &dump_dir, failed, given)
        }
    };
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

    // The semantic checks.
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
    let disable_search = (!opts.no_confirm && !xla_matches_oracle).then(|| {
        let avoids = |o: &Outcome| match o {
            Outcome::Ok(r) => agrees(&reference.judge(backend.name(), r)),
            _ => false,
        };
        let mut s = crate::disable::search(
            module_text,
            inputs,
            backend,
            &opts.run,
            timeline_passes(&dm.timeline, culprit.as_ref().map(|c| c.pass.as_str())),
            culprit.as_ref().map(|c| c.pass.as_str()),
            "XLA agrees with the oracle",
            &avoids,
            budget(opts),
            &search_limits(&opts.run, Some(&xla.timings)),
        );
        s.roles = snapshot_roles(&s, &dm.timeline, &walk.steps, culprit.as_ref());
        s
    });

    let isolation = (!opts.no_confirm && !xla_matches_oracle && culprit.is_none())
        .then(|| isolate_kernels(&dump_dir, &dm, inputs, backend, opts))
        .flatten();
    let evidence = evidence(
        &dm.timeline,
        &walk.steps,
        xla_matches_oracle,
        culprit.is_some(),
        after_optimizations.as_ref(),
    );
    let conclusion = conclude(&Facts {
        xla_ok: xla_matches_oracle,
        input_same: input_matches_before_optimizations,
        culprit: culprit.as_ref(),
        disabled: disabled_check.as_ref(),
        after_opt: after_optimizations.as_ref(),
        skipped: walk.skipped,
        evaluated: walk.evaluated,
        evidence: &evidence,
        search: disable_search.as_ref(),
        isolation: isolation.as_ref(),
    });
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
        disable_search,
        evidence,
        failure: None,
        isolation,
        skipped: walk.skipped,
        evaluated: walk.evaluated,
        conclusion,
        expected: short_literal(&reference.run.result()),
        actual: short_literal(&xla.result()),
    })
}

/// Stage limits of the search's compiles: a disabled pass can make XLA hang, so a try gets a
/// multiple of what the first compile and run took (at least 20 s to compile, 5 s to run),
/// never more than `run`'s own limits.
fn search_limits(run: &RunOptions, first: Option<&engine::backend::Timings>) -> StageTimeouts {
    use std::time::Duration;
    let ms = |x: f64| Duration::from_millis(x.max(0.0) as u64);
    let (compile, execute) = match first {
        Some(t) => (
            ms(10.0 * t.compile_ms).max(Duration::from_secs(20)),
            ms(20.0 * t.execute_ms).max(Duration::from_secs(5)),
        ),
        None => (Duration::from_secs(30), Duration::from_secs(10)),
    };
    StageTimeouts {
        compile: compile.min(run.timeouts.compile),
        execute: execute.min(run.timeouts.execute),
        ..run.timeouts.clone()
    }
}

fn budget(opts: &BisectOptions) -> usize {
    if opts.search_budget == 0 {
        60
    } else {
        opts.search_budget
    }
}

/// The passes of `timeline` as `xla_disable_hlo_passes` takes them, each once, in the order
/// they first wrote a snapshot (with the regex `.*`: the passes that changed the module);
/// `also` (the culprit, which may have run outside a pipeline) is added when missing.
fn timeline_passes(timeline: &[PassStep], also: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in timeline
        .iter()
        .filter_map(step_pass)
        .chain(also.map(str::to_string))
    {
        if is_pass_name(&p) && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The pass whose run wrote snapshot `st` (`None` for a pipeline's start, which every
/// pipeline writes).
fn step_pass(st: &PassStep) -> Option<String> {
    (st.pass_internal || !st.is_pipeline_start()).then(|| pass_of(st))
}

fn is_pass_name(p: &str) -> bool {
    !p.is_empty() && p != "pipeline-start" && p != "pipeline-end"
}

/// What the snapshot walk says of each pass the search found (see [`PassRole`]).
fn snapshot_roles(
    s: &DisableSearch,
    timeline: &[PassStep],
    steps: &[StepResult],
    culprit: Option<&Culprit>,
) -> Vec<PassRole> {
    let mut passes: Vec<&String> = s.minimal.iter().collect();
    passes.extend(s.alone.iter().filter(|p| !s.minimal.contains(p)));
    passes
        .into_iter()
        .map(|p| {
            let mine: Vec<&StepResult> = (0..timeline.len())
                .filter(|&k| step_pass(&timeline[k]).as_deref() == Some(p.as_str()))
                .map(|k| &steps[k])
                .collect();
            let (role, why) = if culprit.is_some_and(|c| c.pass == *p) {
                let c = culprit.unwrap();
                (
                    "changed-result",
                    format!("its snapshot (step {}) is the first that differs", c.step),
                )
            } else if culprit.is_some_and(|c| c.also_possible.contains(p)) {
                (
                    "not-established",
                    "its snapshot just before the first difference could not be evaluated"
                        .to_string(),
                )
            } else if !mine.is_empty() && mine.iter().all(|st| st.status == "same") {
                (
                    "masking",
                    format!(
                        "its snapshot(s) (step {}) agree with before_optimizations",
                        mine.iter()
                            .map(|st| st.step.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            } else {
                (
                    "not-established",
                    "not all of its snapshots were evaluated".to_string(),
                )
            };
            PassRole {
                pass: p.clone(),
                role: role.into(),
                why,
            }
        })
        .collect()
}

/// How far the walk establishes where the divergence is (see [`Evidence`]).
fn evidence(
    timeline: &[PassStep],
    steps: &[StepResult],
    xla_ok: bool,
    has_culprit: bool,
    after_opt: Option<&StepResult>,
) -> Evidence {
    let step_ref = |k: usize| StepRef {
        step: steps[k].step,
        pass: culprit_pass(timeline, k),
        path: steps[k].path.clone(),
        note: steps[k].note.clone(),
    };
    let first = steps.iter().position(|s| s.status == "skipped");
    let last = steps[..first.unwrap_or(steps.len())]
        .iter()
        .rposition(|s| s.status == "same");
    Evidence {
        first_unevaluable: first.map(step_ref),
        last_agreeing: last.map(step_ref),
        below_hlo: !xla_ok
            && !has_culprit
            && first.is_none()
            && steps.iter().all(|s| s.status == "same")
            && after_opt.is_some_and(|a| a.status == "same"),
    }
}

/// XLA gave no result on the first compile (`failed`): where it failed, and which passes,
/// disabled, avoid the failure.
fn bisect_failure(
    module_text: &str,
    inputs: &[Literal],
    backend: &dyn Backend,
    opts: &BisectOptions,
    dump_dir: &Path,
    failed: Outcome,
    given: Option<Module>,
) -> Result<BisectReport, BisectError> {
    let stage = failed.stage().map(|s| s.name()).unwrap_or("?").to_string();
    let mut f = FailureBisect {
        kind: failed.kind().into(),
        stage: stage.clone(),
        outcome: failed.to_string().lines().next().unwrap_or("").to_string(),
        reproduced: None,
        last_pass_entered: None,
        last_snapshot: None,
        location: String::new(),
        check: check_site(&match &failed {
            Outcome::Crash { stderr_tail, .. } => stderr_tail.clone(),
            Outcome::Rejected { message, .. } => message.clone(),
            o => o.to_string(),
        }),
        snapshots: 0,
        rejected_after: failed_after(&failed),
        first_broken: None,
        evaluated: 0,
        unevaluable: 0,
    };
    // Candidates of the search, and the pass the failure is in.
    let mut candidates = Vec::new();
    let mut prefer = None;
    let mut search_it = !opts.no_confirm;
    let mut statuses = Vec::new();
    let mut isolation = None;
    match stage.as_str() {
        "parse" | "convert" => {
            f.location = format!(
                "XLA failed in the {stage} stage, before any HLO pass ran: no pass is involved"
            );
            search_it = false;
        }
        "execute" => {
            // Every pass ran; the `.*` dump of this compile has their snapshots.
            let dm = dumped_module(dump_dir).ok();
            f.snapshots = dm.as_ref().map_or(0, |m| m.timeline.len());
            f.location = "XLA compiled the module (every HLO pass ran) and failed while \
                          executing it"
                .into();
            if let Some(dm) = &dm {
                if !opts.no_confirm {
                    isolation = isolate_kernels(dump_dir, dm, inputs, backend, opts);
                }
                let w = walk_changed(dump_dir, dm, inputs, opts.tolerance_scale);
                candidates = w.candidates;
                statuses = w.statuses;
                (f.first_broken, f.evaluated, f.unevaluable) =
                    (w.first_broken, w.evaluated, w.unevaluable);
            }
        }
        _ => {
            // A compile failure: compile again with every pass dumped, so the last file
            // written names the pass that was running.
            let every = dump_dir.join("every-pass");
            let again = compile_with_dump(module_text, inputs, backend, &opts.run, &every, ".+")?;
            let again_kind = match &again {
                Ok(_) => "ok",
                Err(o) => o.kind(),
            };
            let again_stage = again.as_ref().err().and_then(|o| o.stage());
            f.reproduced =
                Some(again_kind == f.kind && again_stage.map(|s| s.name()) == Some(stage.as_str()));
            let index = hlo::dump::read_dump_dir(&every).ok();
            let dm = index.as_ref().and_then(pick_module);
            match dm {
                None => {
                    f.location = "XLA failed before its HLO passes started (no \
                                  before_optimizations was written): in the conversion of the \
                                  module to XLA's input, not in a pass"
                        .into();
                    search_it = false;
                }
                Some(dm) => {
                    f.snapshots = dm.timeline.len();
                    if !dm.after_optimizations.is_empty() {
                        f.location = "Every HLO pass finished (after_optimizations was written): \
                                      XLA failed after them, in code generation"
                            .into();
                    } else if let Some(p) = &f.rejected_after {
                        f.location = format!(
                            "XLA's own verifier rejected the module after pass `{p}` (\"Failed \
                             after {p}\")"
                        );
                        f.last_snapshot = dm.timeline.last().map(|l| l.path.clone());
                    } else if let Some(last) = dm.timeline.last() {
                        f.last_snapshot = Some(last.path.clone());
                        let entered = if last.pass_internal {
                            Some(last.pipeline.clone())
                        } else if is_pass_name(&last.before) {
                            Some(last.before.clone())
                        } else {
                            None
                        };
                        f.location = match &entered {
                            Some(p) => format!(
                                "XLA failed inside pass `{p}`: the last file written ({}) is \
                                 the module before it, and no file after it was written",
                                last.path
                            ),
                            None => format!(
                                "XLA failed after pipeline `{}` ended ({}), before the next \
                                 pipeline wrote its start",
                                last.pipeline, last.path
                            ),
                        };
                        f.last_pass_entered = entered;
                    } else {
                        f.location = "XLA failed after writing before_optimizations, before \
                                      the first pipeline wrote its start"
                            .into();
                    }
                    let w = walk_changed(&every, dm, inputs, opts.tolerance_scale);
                    candidates = w.candidates;
                    statuses = w.statuses;
                    (f.first_broken, f.evaluated, f.unevaluable) =
                        (w.first_broken, w.evaluated, w.unevaluable);
                    if let Some(p) = &f.last_pass_entered {
                        if !candidates.contains(p) {
                            candidates.push(p.clone());
                        }
                    }
                    prefer = f
                        .first_broken
                        .as_ref()
                        .map(|b| b.pass.clone())
                        .or_else(|| f.last_pass_entered.clone());
                }
            }
        }
    }
    if f.kind == "timeout" {
        // Every try would cost the stage's time limit.
        search_it = false;
    }
    let disable_search = (search_it && !candidates.is_empty()).then(|| {
        let avoids = |o: &Outcome| o.is_ok();
        let mut s = crate::disable::search(
            module_text,
            inputs,
            backend,
            &opts.run,
            candidates,
            prefer.as_deref(),
            "XLA gives a result",
            &avoids,
            budget(opts),
            &search_limits(&opts.run, None),
        );
        s.roles = failure_roles(&s, &f, &statuses);
        s
    });
    let expected = given
        .as_ref()
        .map(|g| match interp_outcome(g, inputs) {
            Outcome::Ok(r) => short_literal(&r.result()),
            o => format!("(the oracle: {o})"),
        })
        .unwrap_or_default();
    let mut conclusion = conclude_failure(&f, disable_search.as_ref());
    if let Some(i) = &isolation {
        conclusion.push(' ');
        conclusion.push_str(&isolation_words(i));
    }
    Ok(BisectReport {
        backend: backend.name().into(),
        module_name: given.as_ref().map(|g| g.name.clone()).unwrap_or_default(),
        dump_dir: opts.dump_dir.as_ref().map(|d| d.display().to_string()),
        xla_matches_oracle: false,
        xla_vs_oracle: f.outcome.clone(),
        input_matches_before_optimizations: None,
        steps: Vec::new(),
        after_optimizations: None,
        culprit: None,
        disabled_check: None,
        disable_search,
        evidence: Evidence::default(),
        isolation,
        skipped: 0,
        evaluated: 0,
        conclusion,
        expected,
        actual: f.outcome.clone(),
        failure: Some(f),
    })
}

/// Kernel isolation on `dm`'s after_optimizations module (`None` when the dump has none).
fn isolate_kernels(
    dir: &Path,
    dm: &DumpModule,
    inputs: &[Literal],
    backend: &dyn Backend,
    opts: &BisectOptions,
) -> Option<Isolation> {
    let p = dm.after_optimizations.values().next()?;
    let text = match read(dir, p) {
        Ok(t) => t,
        Err(e) => {
            return Some(Isolation {
                error: Some(e),
                ..Isolation::default()
            })
        }
    };
    let snapshots: Vec<(String, String)> = dm
        .timeline
        .iter()
        .enumerate()
        .map(|(k, st)| {
            (
                culprit_pass(&dm.timeline, k),
                read(dir, &st.path).unwrap_or_default(),
            )
        })
        .collect();
    // A kernel first seen in a pipeline's start snapshot was made by no pass.
    let created_by = |name: &str| {
        let def = format!("%{name} = ");
        snapshots
            .iter()
            .position(|(_, t)| t.contains(&def))
            .map(|k| match snapshots[k].0.as_str() {
                "pipeline-start" => "no pass (it is in the module XLA received)".to_string(),
                p => p.to_string(),
            })
    };
    let mut run = opts.run.clone();
    run.timeouts = search_limits(&opts.run, None);
    Some(
        crate::isolate::isolate(
            &text,
            inputs,
            backend,
            &run,
            opts.tolerance_scale,
            budget(opts),
            &created_by,
        )
        .unwrap_or_else(|e| Isolation {
            error: Some(e),
            ..Isolation::default()
        }),
    )
}

/// Kernel isolation in words.
fn isolation_words(i: &Isolation) -> String {
    if let Some(e) = &i.error {
        return format!("Kernel isolation could not run: {e}.");
    }
    let n = i.kernels.len();
    match i.wrong() {
        Some(k) => format!(
            "Kernel isolation (each kernel of after_optimizations compiled alone on the operand \
             values the oracle computed): the first wrong kernel is `{}` ({}{}), created by {}: \
             {}{}.",
            k.name,
            k.kind.trim(),
            k.computation
                .as_ref()
                .map(|c| format!(", computation `{c}`"))
                .unwrap_or_default(),
            k.created_by
                .as_ref()
                .map(|p| format!("pass `{p}`"))
                .unwrap_or_else(|| "a pass whose snapshot was not dumped".into()),
            k.status,
            if k.note.is_empty() {
                String::new()
            } else {
                format!(" ({})", k.note)
            }
        ),
        None if n == 0 => "Kernel isolation: after_optimizations has no fusion or library call \
                           to run alone."
            .into(),
        None => {
            let not = i
                .kernels
                .iter()
                .filter(|k| k.status == "not-isolated")
                .count();
            format!(
                "Kernel isolation: none of the {n} kernels of after_optimizations, run alone, \
                 differs from the oracle{}: which kernel is wrong is not established (the \
                 divergence needs them together, or lies outside the kernels).",
                if not > 0 {
                    format!(" ({not} could not be run alone)")
                } else {
                    String::new()
                }
            )
        }
    }
}

/// The pass after which XLA's verifier rejected the module, from its message ("Failed after
/// simplification").
fn failed_after(o: &Outcome) -> Option<String> {
    let Outcome::Rejected { message, .. } = o else {
        return None;
    };
    let rest = &message[message.find("Failed after ")? + "Failed after ".len()..];
    let p: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || "_-.".contains(*c))
        .collect();
    let p = p.trim_end_matches('.').to_string();
    (!p.is_empty()).then_some(p)
}

/// The snapshots written before a failure, judged (see [`walk_changed`]).
struct ChangedWalk {
    /// Passes whose snapshot changed the module, in order.
    candidates: Vec<String>,
    /// Per pass, the status of each of its snapshots that changed the module: `same`,
    /// `broken`, `skipped` (could not be evaluated) or `not_evaluated` (after the first
    /// broken one).
    statuses: Vec<(String, String)>,
    first_broken: Option<StepRef>,
    evaluated: usize,
    unevaluable: usize,
}

/// Walks `dm`'s snapshots (of a compile that failed) that changed the module: each one our
/// verifier accepts is evaluated by the oracle against before_optimizations, up to the first
/// that is invalid or differs. Snapshots whose text equals the previous one's are unchanged
/// modules and are not candidates of the disable-pass search.
fn walk_changed(dir: &Path, dm: &DumpModule, inputs: &[Literal], scale: f64) -> ChangedWalk {
    let reference = Reference::evaluate(dir, dm, inputs, scale).ok();
    let mut prev = dm
        .before_optimizations
        .as_deref()
        .and_then(|p| read(dir, p).ok())
        .unwrap_or_default();
    let mut w = ChangedWalk {
        candidates: Vec::new(),
        statuses: Vec::new(),
        first_broken: None,
        evaluated: 0,
        unevaluable: 0,
    };
    for (k, st) in dm.timeline.iter().enumerate() {
        let text = read(dir, &st.path).unwrap_or_default();
        // Snapshot text carries no pass name, so equal text is an unchanged module.
        let changed = text != prev;
        prev = text;
        let Some(p) = step_pass(st).filter(|p| changed && is_pass_name(p)) else {
            continue;
        };
        if !w.candidates.contains(&p) {
            w.candidates.push(p.clone());
        }
        let status = if w.first_broken.is_some() {
            "not_evaluated"
        } else {
            let judged = match hlo::parse::parse_module(&prev) {
                Err(e) => Err(format!("our parser: {e}")),
                Ok(m) => match hlo::verify::verify_module(&m) {
                    Err(e) => Ok(Some(format!("our verifier rejects it: {e}"))),
                    Ok(()) => match &reference {
                        None => Err("the oracle cannot evaluate before_optimizations".into()),
                        Some(r) => r.judge_snapshot(dir, &st.path).map(|v| {
                            (!agrees(&v)).then(|| {
                                format!(
                                    "the oracle's result differs: {}",
                                    summary(&v).lines().next().unwrap_or("")
                                )
                            })
                        }),
                    },
                },
            };
            match judged {
                Err(_) => {
                    w.unevaluable += 1;
                    "skipped"
                }
                Ok(None) => {
                    w.evaluated += 1;
                    "same"
                }
                Ok(Some(why)) => {
                    w.evaluated += 1;
                    w.first_broken = Some(StepRef {
                        step: st.step,
                        pass: culprit_pass(&dm.timeline, k),
                        path: st.path.clone(),
                        note: Some(why),
                    });
                    "broken"
                }
            }
        };
        w.statuses.push((p, status.into()));
    }
    w
}

/// Roles of the passes a failure search found: the pass that broke the module (its snapshot
/// is invalid or changes the result), the pass XLA failed in, passes whose snapshots are
/// valid and agree (masking: the module they left was correct), and the rest (not
/// established).
fn failure_roles(
    s: &DisableSearch,
    f: &FailureBisect,
    statuses: &[(String, String)],
) -> Vec<PassRole> {
    let mut passes: Vec<&String> = s.minimal.iter().collect();
    passes.extend(s.alone.iter().filter(|p| !s.minimal.contains(p)));
    passes
        .into_iter()
        .map(|p| {
            let mine: Vec<&str> = statuses
                .iter()
                .filter(|(q, _)| q == p)
                .map(|(_, st)| st.as_str())
                .collect();
            let (role, why) = match &f.first_broken {
                Some(b) if b.pass == *p => (
                    "changed-result",
                    format!(
                        "its snapshot (step {}) is the first that is broken: {}",
                        b.step,
                        b.note.as_deref().unwrap_or("")
                    ),
                ),
                _ if f.last_pass_entered.as_deref() == Some(p.as_str()) => {
                    ("failed-inside", "XLA failed inside it".to_string())
                }
                _ if f.rejected_after.as_deref() == Some(p.as_str()) => (
                    "failed-inside",
                    "XLA's verifier rejected the module after it".to_string(),
                ),
                _ if !mine.is_empty() && mine.iter().all(|st| *st == "same") => (
                    "masking",
                    "its snapshots are valid and evaluate to before_optimizations' result"
                        .to_string(),
                ),
                _ => (
                    "not-established",
                    "not all of its snapshots could be evaluated".to_string(),
                ),
            };
            PassRole {
                pass: p.clone(),
                role: role.into(),
                why,
            }
        })
        .collect()
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
/// after every pass matching `pass_re` into `dump_dir`; `Ok(Err(outcome))` when XLA gave no
/// result (crash, rejection, hang).
fn compile_with_dump(
    module_text: &str,
    inputs: &[Literal],
    backend: &dyn Backend,
    run: &RunOptions,
    dump_dir: &Path,
    pass_re: &str,
) -> Result<Result<RunResult, Outcome>, BisectError> {
    let mut run = run.clone();
    run.dump_to = Some(dump_dir.to_path_buf());
    run.pass_re = Some(pass_re.into());
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
        Outcome::Ok(r) => Ok(Ok(r)),
        Outcome::Unavailable { why } => Err(BisectError::Unavailable(why)),
        Outcome::HarnessError { message, .. } => Err(BisectError::BadInput(message)),
        o @ (Outcome::Crash { .. } | Outcome::Timeout { .. }) => Ok(Err(o)),
        o @ Outcome::Rejected {
            stage: engine::backend::Stage::Compile | engine::backend::Stage::Execute,
            ..
        } => Ok(Err(o)),
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
    v.kind.agrees()
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

/// What a mismatch's conclusion is written from.
struct Facts<'a> {
    xla_ok: bool,
    input_same: Option<bool>,
    culprit: Option<&'a Culprit>,
    disabled: Option<&'a DisabledCheck>,
    after_opt: Option<&'a StepResult>,
    skipped: usize,
    evaluated: usize,
    evidence: &'a Evidence,
    search: Option<&'a DisableSearch>,
    isolation: Option<&'a Isolation>,
}

fn step_words(r: &StepRef) -> String {
    format!("step {} (after `{}`, {})", r.step, r.pass, r.path)
}

/// The conclusion of a mismatch: only what the snapshots and recompiles established.
fn conclude(f: &Facts) -> String {
    let mut parts = Vec::new();
    if f.input_same == Some(false) {
        parts.push(
            "The divergence is already in before_optimizations: the oracle's result on the given \
             module differs from its result on the module XLA received (the HLO -> MLIR -> HLO \
             conversion changed the module's meaning)."
                .to_string(),
        );
    }
    match f.culprit {
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
            if f.xla_ok {
                s.push_str(" XLA's final result nevertheless agrees with the oracle.");
            }
            parts.push(s);
            if let Some(d) = f.disabled {
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
        None if !f.xla_ok => parts.push(unlocated(f)),
        None if f.skipped > 0 => parts.push(format!(
            "XLA's result agrees with the oracle; no evaluated snapshot changed the oracle's \
             result ({} evaluated, {} could not be evaluated).",
            f.evaluated, f.skipped
        )),
        None => parts.push(
            "XLA's result agrees with the oracle and no pass changed the oracle's result."
                .to_string(),
        ),
    }
    if let Some(s) = f.search {
        parts.push(search_words(s, "makes XLA agree with the oracle"));
    }
    if let Some(i) = f.isolation {
        parts.push(isolation_words(i));
    }
    parts.join(" ")
}

/// XLA differs and no evaluated snapshot differs: below HLO only when everything was
/// evaluated; otherwise the last agreeing and the first unevaluable snapshot.
fn unlocated(f: &Facts) -> String {
    let e = f.evidence;
    if e.below_hlo {
        return format!(
            "No pass changed the oracle's result: every snapshot ({}) and the \
             after-optimizations module were evaluated and agree with before_optimizations, so \
             the divergence is below HLO (code generation, a library call or the runtime).",
            f.evaluated
        );
    }
    if let Some(first) = &e.first_unevaluable {
        return format!(
            "Not established where the divergence comes from: the oracle could not evaluate \
             every snapshot ({} evaluated, {} not). The last evaluated snapshot that agrees \
             with before_optimizations is {}; the first it could not evaluate is {}: {}. The \
             pass of that snapshot, a later pass or code generation may be responsible.",
            f.evaluated,
            f.skipped,
            e.last_agreeing
                .as_ref()
                .map(step_words)
                .unwrap_or_else(|| "before_optimizations itself (none did)".into()),
            step_words(first),
            first
                .note
                .as_deref()
                .and_then(|n| n.lines().next())
                .unwrap_or("?"),
        );
    }
    match f.after_opt {
        Some(a) if a.status == "differs" => format!(
            "Every snapshot ({}) agrees with before_optimizations but the after-optimizations \
             module does not: a pass whose snapshot was not dumped changed the result.",
            f.evaluated
        ),
        Some(a) => format!(
            "Every snapshot ({}) agrees with before_optimizations, but the oracle could not \
             evaluate the after-optimizations module ({}): not established whether the \
             divergence is below HLO.",
            f.evaluated,
            a.note
                .as_deref()
                .and_then(|n| n.lines().next())
                .unwrap_or("?")
        ),
        None => format!(
            "Every snapshot ({}) agrees with before_optimizations, but the dump has no \
             after-optimizations module: not established whether the divergence is below HLO.",
            f.evaluated
        ),
    }
}

/// The disable-pass search in words; `goal` completes "disabling P ...".
fn search_words(s: &DisableSearch, goal: &str) -> String {
    let mut out = String::new();
    let n = s.candidates.len();
    if s.minimal.is_empty() {
        out.push_str(&format!(
            "Disable-pass search ({} compiles over {n} candidate passes): no set of them, \
             disabled, {goal}",
            s.compiles
        ));
        if let Some(o) = &s.all_outcome {
            out.push_str(&format!(" (all disabled: {o})"));
        }
        if s.truncated {
            out.push_str("; the search stopped at its compile budget");
        }
        out.push('.');
        return out;
    }
    out.push_str(&format!(
        "Disable-pass search ({} compiles over {n} candidate passes): disabling {} {goal}{}",
        s.compiles,
        s.minimal
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(" + "),
        if s.truncated {
            " (the search stopped at its compile budget: the set may not be minimal)"
        } else {
            ""
        }
    ));
    match &s.confirmation {
        Some(c) if c.took_effect => {
            out.push_str(" (confirmed: no dump file of a disabled pass was written).")
        }
        Some(c) if !c.still_dumped.is_empty() => out.push_str(&format!(
            " (NOT confirmed: {} still wrote dump files, so the disable may have been \
             overridden).",
            c.still_dumped.join(", ")
        )),
        Some(_) => {
            out.push_str(" (not confirmed: the confirming compile wrote no per-pass files).")
        }
        None => out.push('.'),
    }
    for r in &s.roles {
        out.push(' ');
        out.push_str(&match r.role.as_str() {
            "changed-result" => format!("Changed the result: `{}` ({}).", r.pass, r.why),
            "failed-inside" => format!("XLA failed in `{}` ({}).", r.pass, r.why),
            "masking" => format!(
                "Disabling `{}` also avoids it, but `{}` did not change the result ({}): masking.",
                r.pass, r.pass, r.why
            ),
            _ => format!(
                "Disabling `{}` also avoids it; whether it changed the result is not \
                 established ({}).",
                r.pass, r.why
            ),
        });
    }
    out
}

/// The XLA source location a failure message names (a CHECK's `file.cc:123]`, a RET_CHECK's
/// `(xla/service/x.cc:123)`), from `xla/` on when the path has it, else the file name: the same
/// check is the same place in any build directory. It is read from the line that says most
/// specifically what went wrong (`engine::backend::failure_line_rank`: a failed CHECK before any
/// other fatal line), else the first location in the message; a warning XLA logged before it
/// died (`W1207 ... sharding_propagation.cc:3197] ...`) names no check.
pub fn check_site(message: &str) -> Option<String> {
    let fatal = message
        .lines()
        .filter_map(|l| engine::backend::failure_line_rank(l).map(|r| (r, l)))
        .min_by_key(|(r, _)| *r);
    fatal
        .and_then(|(_, l)| first_source_location(l))
        .or_else(|| {
            message
                .lines()
                .filter(|l| !is_log_line_below_fatal(l))
                .find_map(first_source_location)
        })
}

/// An info, warning or error line of XLA's logging (`I1207`, `W1207`, `E1207`, then a time).
fn is_log_line_below_fatal(l: &str) -> bool {
    let mut words = l.split_whitespace();
    let (Some(date), Some(time)) = (words.next(), words.next()) else {
        return false;
    };
    date.len() == 5
        && matches!(date.as_bytes()[0], b'I' | b'W' | b'E')
        && date[1..].bytes().all(|b| b.is_ascii_digit())
        && time.contains(':')
}

fn first_source_location(message: &str) -> Option<String> {
    let bytes = message.as_bytes();
    let mut from = 0;
    while let Some(k) = message[from..].find(':').map(|k| k + from) {
        from = k + 1;
        let digits = bytes[k + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let path_start = message[..k]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_./-".contains(c)))
            .map_or(0, |p| p + 1);
        let path = &message[path_start..k];
        let source = [".cc", ".h", ".cpp", ".hpp", ".td"]
            .iter()
            .any(|ext| path.ends_with(ext));
        if digits == 0 || !source {
            continue;
        }
        let line = &message[k + 1..k + 1 + digits];
        let short = match path.rfind("xla/") {
            Some(x) => &path[x..],
            None => path.rsplit('/').next().unwrap_or(path),
        };
        return Some(format!("{short}:{line}"));
    }
    None
}

/// The short culprit of a failure for its bucket: the pass XLA was in (or after which its
/// verifier rejected the module), else the stage: `parse`, `convert` (HLO -> StableHLO, before
/// the compile), `stablehlo-to-hlo` (the compile failed before it wrote before_optimizations),
/// `codegen` (every HLO pass finished), `execute`; empty when not established.
pub fn failure_culprit(f: &FailureBisect) -> String {
    if let Some(p) = f.last_pass_entered.as_ref().or(f.rejected_after.as_ref()) {
        return p.clone();
    }
    match f.stage.as_str() {
        "parse" | "convert" | "execute" => f.stage.clone(),
        _ if f.reproduced != Some(true) => String::new(),
        _ if f.location.contains("before its HLO passes started") => "stablehlo-to-hlo".into(),
        _ if f.location.contains("in code generation") => "codegen".into(),
        _ => String::new(),
    }
}

fn conclude_failure(f: &FailureBisect, search: Option<&DisableSearch>) -> String {
    let mut s = format!("XLA gave no result ({}). {}.", f.outcome, f.location);
    if let Some(c) = &f.check {
        s.push_str(&format!(" XLA's failed check is at {c}."));
    }
    if f.reproduced == Some(false) {
        s.push_str(
            " Compiling again with every pass dumped did not fail the same way: the failure \
             is not deterministic, and where it happened is not established.",
        );
    }
    match &f.first_broken {
        Some(b) => s.push_str(&format!(
            " The module first breaks at {}: {}.",
            step_words(b),
            b.note.as_deref().unwrap_or("")
        )),
        None if f.evaluated > 0 && f.unevaluable == 0 => s.push_str(&format!(
            " Every snapshot written before the failure that changed the module ({}) is valid \
             and evaluates to before_optimizations' result: XLA failed on a correct module.",
            f.evaluated
        )),
        None if f.unevaluable > 0 => s.push_str(&format!(
            " Of the snapshots that changed the module, {} agree and {} could not be evaluated: \
             not established whether a pass broke the module before the failure.",
            f.evaluated, f.unevaluable
        )),
        None => {}
    }
    if let Some(d) = search {
        s.push(' ');
        s.push_str(&search_words(d, "makes the failure go away"));
    } else if f.kind == "timeout" {
        s.push_str(" No disable-pass search: every try would cost the time limit.");
    }
    s
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

    /// A timeline of `(path, status, note)` snapshots, walked as the bisector walks it.
    fn walked(snaps: &[(&str, &str, Option<&str>)]) -> (Vec<PassStep>, Vec<StepResult>) {
        let mut paths = vec!["module_0001.m.before_optimizations.txt"];
        paths.extend(snaps.iter().map(|s| s.0));
        let index = hlo::dump::classify_paths(&paths);
        let tl = pick_module(&index).unwrap().timeline.clone();
        let steps = tl
            .iter()
            .zip(snaps)
            .map(|(st, (_, status, note))| StepResult {
                step: st.step,
                pipeline: st.pipeline.clone(),
                after: st.after.clone(),
                before: st.before.clone(),
                path: st.path.clone(),
                pass_internal: st.pass_internal,
                status: status.to_string(),
                note: note.map(str::to_string),
            })
            .collect();
        (tl, steps)
    }

    fn facts<'a>(
        xla_ok: bool,
        input_same: Option<bool>,
        culprit: Option<&'a Culprit>,
        disabled: Option<&'a DisabledCheck>,
        skipped: usize,
        evidence: &'a Evidence,
    ) -> Facts<'a> {
        Facts {
            xla_ok,
            input_same,
            culprit,
            disabled,
            after_opt: None,
            skipped,
            evaluated: 3,
            evidence,
            search: None,
            isolation: None,
        }
    }

    #[test]
    fn a_failed_check_is_named_by_its_place_in_xla() {
        assert_eq!(
            check_site(
                "F1205 12:00:00.1 4242 window_util.cc:259] Check failed: bound >= 0 (-1 vs. 0)"
            )
            .as_deref(),
            Some("window_util.cc:259")
        );
        assert_eq!(
            check_site("INTERNAL: RET_CHECK failure (external/xla/xla/service/while_util.cc:315) cond->shape() ...")
                .as_deref(),
            Some("xla/service/while_util.cc:315")
        );
        assert_eq!(
            check_site("rejected at compile: /tmp/x/xla/hlo/ir/hlo_instructions.h:1021: operand")
                .as_deref(),
            Some("xla/hlo/ir/hlo_instructions.h:1021")
        );
        assert_eq!(check_site("operand 0 at 12:3 is f32[4]"), None);
        // A warning logged before the CHECK names no check.
        assert_eq!(
            check_site(
                "W0000 00:00:1796680401.119566   32596 sharding_propagation.cc:3197] GSPMD sharding propagation is going to be deprecated\n\
                 F0000 00:00:1796680401.133040   32596 spmd_partitioner_util.h:118] Check failed: ShapeUtil::IsScalarWithElementType(value.shape(), primitive_type)\n\
                 *** Check failure stack trace: ***"
            )
            .as_deref(),
            Some("spmd_partitioner_util.h:118")
        );
        assert_eq!(check_site("no location here"), None);
    }

    #[test]
    fn conclusions_name_what_was_found() {
        let none = Evidence::default();
        let c = conclude(&facts(
            false,
            Some(true),
            Some(&culprit(&[])),
            None,
            0,
            &none,
        ));
        assert!(
            c.contains("after pass `algsimp` in pipeline `simplification` (step 6"),
            "{c}"
        );
        let c = conclude(&facts(
            false,
            Some(true),
            Some(&culprit(&["constant_folding"])),
            None,
            1,
            &none,
        ));
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
        let c = conclude(&facts(
            false,
            Some(true),
            Some(&culprit(&[])),
            Some(&d),
            0,
            &none,
        ));
        assert!(c.contains("still differs"), "{c}");
        let below = Evidence {
            below_hlo: true,
            ..Evidence::default()
        };
        let c = conclude(&facts(false, Some(true), None, None, 0, &below));
        assert!(
            c.contains("No pass changed the oracle's result") && c.contains("below HLO"),
            "{c}"
        );
        let c = conclude(&facts(true, Some(false), None, None, 0, &none));
        assert!(
            c.starts_with("The divergence is already in before_optimizations"),
            "{c}"
        );
        let c = conclude(&facts(true, Some(true), None, None, 0, &none));
        assert!(
            c.contains("agrees with the oracle and no pass changed"),
            "{c}"
        );
        let c = conclude(&facts(true, Some(true), None, None, 2, &none));
        assert!(
            c.contains("no evaluated snapshot changed") && !c.contains("no pass changed"),
            "{c}"
        );
    }

    /// Issue 15 (a): on an older jaxlib the CPU pipeline rewrites a dot into a
    /// `__onednn$matmul` custom-call the oracle cannot evaluate, so every snapshot from that
    /// rewrite on is skipped. The bisector must not say "no pass changed the result" or
    /// "below HLO": it names the last snapshot that agreed and the first it could not
    /// evaluate (the rewrite), and nothing more.
    #[test]
    fn skipped_snapshots_are_never_concluded_to_be_below_hlo() {
        let skip = Some("oracle: unsupported: custom-call __onednn$matmul");
        let (tl, steps) = walked(&[
            (
                "module_0001.m.0000.p.after_pipeline-start.before_algsimp.txt",
                "same",
                None,
            ),
            (
                "module_0001.m.0001.p.after_algsimp.before_layout-assignment.txt",
                "same",
                None,
            ),
            (
                "module_0001.m.0002.p.after_layout-assignment.before_onednn-matmul-rewriter.txt",
                "same",
                None,
            ),
            (
                "module_0001.m.0003.p.after_onednn-matmul-rewriter.before_dce.txt",
                "skipped",
                skip,
            ),
            (
                "module_0001.m.0004.p.after_dce.before_pipeline-end.txt",
                "skipped",
                skip,
            ),
        ]);
        let after = StepResult {
            step: u32::MAX,
            pipeline: String::new(),
            after: "optimizations".into(),
            before: String::new(),
            path: "module_0001.m.cpu_after_optimizations.txt".into(),
            pass_internal: false,
            status: "skipped".into(),
            note: skip.map(str::to_string),
        };
        let e = evidence(&tl, &steps, false, false, Some(&after));
        assert!(!e.below_hlo);
        let first = e
            .first_unevaluable
            .as_ref()
            .expect("a first unevaluable snapshot");
        assert_eq!(
            (first.step, first.pass.as_str()),
            (3, "onednn-matmul-rewriter")
        );
        let last = e.last_agreeing.as_ref().expect("a last agreeing snapshot");
        assert_eq!((last.step, last.pass.as_str()), (2, "layout-assignment"));
        let c = conclude(&Facts {
            after_opt: Some(&after),
            ..facts(false, Some(true), None, None, 2, &e)
        });
        assert!(c.starts_with("Not established"), "{c}");
        assert!(
            c.contains("step 2 (after `layout-assignment`")
                && c.contains(
                    "first it could not evaluate is step 3 (after `onednn-matmul-rewriter`"
                )
                && c.contains("__onednn$matmul"),
            "{c}"
        );
        for claim in [
            "No pass changed",
            "no pass changed",
            "below HLO",
            "code generation/runtime",
        ] {
            assert!(!c.contains(claim), "claims {claim:?}: {c}");
        }
        // The same walk with everything evaluated and agreeing is below HLO.
        let (tl, steps) = walked(&[
            (
                "module_0001.m.0000.p.after_pipeline-start.before_algsimp.txt",
                "same",
                None,
            ),
            (
                "module_0001.m.0001.p.after_algsimp.before_pipeline-end.txt",
                "same",
                None,
            ),
        ]);
        let same = StepResult {
            status: "same".into(),
            note: None,
            ..after.clone()
        };
        assert!(evidence(&tl, &steps, false, false, Some(&same)).below_hlo);
        assert!(!evidence(&tl, &steps, false, false, Some(&after)).below_hlo);
        assert!(!evidence(&tl, &steps, false, false, None).below_hlo);
        assert!(!evidence(&tl, &steps, true, false, Some(&same)).below_hlo);
    }

    /// The search's words: the pass that changed the result, a masking one, and a disable that
    /// did not take effect is said to be unconfirmed.
    #[test]
    fn the_disable_search_names_changed_and_masking_passes() {
        let mut s = DisableSearch {
            candidates: vec!["algsimp".into(), "call-inliner".into(), "dce".into()],
            minimal: vec!["algsimp".into()],
            alone: vec!["algsimp".into(), "call-inliner".into()],
            compiles: 4,
            confirmation: Some(crate::disable::Confirmation {
                took_effect: true,
                still_dumped: vec![],
                files: 12,
                outcome: "ok".into(),
            }),
            roles: vec![
                PassRole {
                    pass: "algsimp".into(),
                    role: "changed-result".into(),
                    why: "its snapshot (step 6) is the first that differs".into(),
                },
                PassRole {
                    pass: "call-inliner".into(),
                    role: "masking".into(),
                    why: "its snapshot(s) (step 2) agree with before_optimizations".into(),
                },
            ],
            ..DisableSearch::default()
        };
        let w = search_words(&s, "makes XLA agree with the oracle");
        assert!(w.contains("disabling `algsimp` makes XLA agree"), "{w}");
        assert!(w.contains("(confirmed"), "{w}");
        assert!(w.contains("Changed the result: `algsimp`"), "{w}");
        assert!(
            w.contains("Disabling `call-inliner` also avoids it, but `call-inliner` did not change the result") && w.contains("masking"),
            "{w}"
        );
        s.confirmation = Some(crate::disable::Confirmation {
            took_effect: false,
            still_dumped: vec!["algsimp".into()],
            files: 12,
            outcome: "ok".into(),
        });
        let w = search_words(&s, "makes XLA agree with the oracle");
        assert!(w.contains("NOT confirmed: algsimp still wrote"), "{w}");
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

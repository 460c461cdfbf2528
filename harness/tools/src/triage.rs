//! From a module and inputs to a report: run on the backends, and when a bug shows, minimize it
//! (same verdict signature), bisect the minimized module over XLA's passes (for mismatches), and
//! write the repro directory plus a markdown report for an upstream issue.
//!
//! `hlo-diff minimize` uses [`minimize_case`] and [`write_repro`]; `hlo-diff triage` uses
//! [`triage`] on every module of a dump directory (or on one HLO file).

use crate::bisect::{bisect, BisectOptions, BisectReport};
use crate::minimize::predicate::{Observation, Runner, Target};
use crate::minimize::{self, Case, Options, Stats};
use crate::releases::{bisect_releases, ReleaseOptions, ReleaseReport, Symptom};
use engine::backend::{Backend, Outcome, RunOptions};
use engine::worker::WorkerBackend;
use findings::repro::{write_repro_dir, Repro, ReproFiles};
use hlo::Literal;
use judge::classify::{Verdict, VerdictKind};
use judge::{Judge, Trial};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

/// The XLA backends of a session, with their versions.
pub struct Session {
    pub workers: Vec<Arc<WorkerBackend>>,
    pub opts: RunOptions,
    pub tolerance_scale: f64,
    /// Ask the voter (`stablehlo-ref`, on the CPU workers) about the minimized mismatch.
    pub voter: bool,
}

impl Session {
    /// The runner over this session's workers; a case that crashes XLA is run on workers that
    /// fork per request ([`Runner::for_crashes`]) when every backend has them.
    pub fn runner(&self) -> Runner {
        let runner = |workers: Vec<Arc<dyn Backend>>| {
            let mut r = Runner::new(workers);
            r.opts = self.opts.clone();
            r.tolerance_scale = self.tolerance_scale;
            r
        };
        let mut r = runner(
            self.workers
                .iter()
                .map(|w| w.clone() as Arc<dyn Backend>)
                .collect(),
        );
        let forking: Option<Vec<Arc<dyn Backend>>> = self
            .workers
            .iter()
            .map(|w| w.forking().map(|f| Arc::new(f) as Arc<dyn Backend>))
            .collect();
        r.for_crashes = forking.map(|f| Box::new(runner(f)));
        r
    }

    /// The minimized mismatch re-classified with the voter's (`stablehlo-ref`) outcome: its
    /// label says whether the StableHLO reference interpreter sides with the oracle (`xla`:
    /// XLA is wrong) or with XLA (`oracle`). `None` when not asked or not a mismatch.
    pub fn vote(&self, m: &Minimized) -> Option<Verdict> {
        if !self.voter || m.last.verdict.kind != VerdictKind::Mismatch {
            return None;
        }
        let cpu = self.workers.iter().find(|w| w.name() == "xla-cpu")?;
        let voter = WorkerBackend::stablehlo_ref_on(cpu);
        let tol = judge::compare::Tolerance {
            scale: self.tolerance_scale,
            ..judge::compare::Tolerance::for_module(&m.case.module)
        };
        let judge = judge::Judge {
            voter: Some(&voter),
            xla: self
                .workers
                .iter()
                .map(|w| w.as_ref() as &dyn Backend)
                .collect(),
            opts: self.opts.clone(),
            policy: judge::Policy {
                vote: true,
                dissent: true,
                ..judge::Policy::VERDICT
            },
            ..judge::Judge::offline()
        };
        Some(
            judge
                .judge(&judge::Trial {
                    module: &m.case.module,
                    text: None,
                    inputs: &m.case.inputs,
                    outcomes: &m.last.outcomes,
                    reruns: &[],
                    tolerance: &tol,
                })
                .verdict,
        )
    }

    /// Where XLA and the oracle agree on `case`: the voter's value outside the legitimate
    /// results, if it gives one (`judge::Policy::dissent`). `None` when the voter is not asked
    /// or agrees.
    pub fn dissent(&self, case: &Case) -> Option<String> {
        if !self.voter {
            return None;
        }
        let cpu = self.workers.iter().find(|w| w.name() == "xla-cpu")?;
        let voter = WorkerBackend::stablehlo_ref_on(cpu);
        let o = self.runner().observe(case);
        let judge = judge::Judge {
            voter: Some(&voter),
            opts: self.opts.clone(),
            policy: judge::Policy::VERDICT.with_dissent(),
            ..judge::Judge::offline()
        };
        let v = judge
            .judge(&judge::Trial {
                module: &case.module,
                text: None,
                inputs: &case.inputs,
                outcomes: &o.outcomes,
                reruns: &[],
                tolerance: &judge::compare::Tolerance::for_module(&case.module),
            })
            .verdict;
        v.dissent
            .map(|p| p.summary().replace("voter gives", "stablehlo-ref gives"))
    }

    /// `jax`, `jaxlib`, `python` as the first worker reports them.
    pub fn versions(&self) -> Vec<(String, String)> {
        let Some(w) = self.workers.first() else {
            return Vec::new();
        };
        let Ok(info) = w.info() else {
            return Vec::new();
        };
        ["jax", "jaxlib", "python", "platform"]
            .iter()
            .filter_map(|k| {
                let v = info.get(*k)?;
                let v = v
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string());
                Some((k.to_string(), v))
            })
            .collect()
    }
}

/// What a triage knows beyond the module: where it came from, how to treat a rejection, how
/// often to rerun it in fresh processes. `Context::default()` is a hand-given module or dump.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// `Some(compiled)` for a module of a reporter's script (`compiled`: XLA finished compiling
    /// it there). XLA rejecting such a module is never reported as a bug: either the script's own
    /// program is at fault (XLA rejected it in the script too, or at run time) or hlo-diff cannot
    /// re-run the dumped text. `None` (a hand-given module or dump): a rejection is a finding.
    pub from_script: Option<bool>,
    /// Fresh-process reruns of the minimized module (the report's "k of N").
    pub repeat: usize,
    /// Also rerun modules that show no bug (`--repeat` given for a dump or a file).
    pub repeat_clean: bool,
    pub python: Option<std::path::PathBuf>,
    /// Lines for the report's "Origin" section (script, dump module, inputs).
    pub origin: Vec<String>,
    /// Extra version lines (`cpu`, the script's `XLA_FLAGS`), after the worker's.
    pub versions: Vec<(String, String)>,
    /// Files copied into the bug's `original/` directory (the dump's relevant files).
    pub original_files: Vec<std::path::PathBuf>,
    /// Commands that reproduce from Python (the script's `run.sh`), for the report.
    pub python_repro: Option<String>,
    /// `--releases`: release-bisect each bug's minimized module over these jaxlib releases.
    pub releases: Option<ReleasePlan>,
}

/// The releases a triage bisects each bug over, and where their venvs are.
#[derive(Clone, Debug)]
pub struct ReleasePlan {
    pub releases: Vec<crate::releases::Release>,
    pub cache: crate::releases::VenvCache,
    /// The `--releases` value as given (for the report's reproduce command).
    pub spec: String,
}

/// A minimization's result.
#[derive(Clone, Debug)]
pub struct Minimized {
    pub original: Verdict,
    pub target: Target,
    pub case: Case,
    pub stats: Stats,
    /// The minimized case's observation (its verdict keeps the target's signature).
    pub last: Observation,
}

/// Runs `case`; when it shows a bug, minimizes it keeping the verdict's signature. `Ok(None)`:
/// no bug (the verdict is returned so the caller can say what happened).
pub fn minimize_case(
    runner: &Runner,
    case: Case,
    opts: &Options,
) -> Result<Result<Minimized, Verdict>, String> {
    let first = runner.observe(&case);
    // A crash goes on where it costs a fork per candidate, when it shows there too.
    let (runner, first) = match (&runner.for_crashes, first.verdict.kind) {
        (Some(forking), VerdictKind::Crash) => {
            let again = forking.observe(&case);
            match again.verdict.kind {
                VerdictKind::Crash => (forking.as_ref(), again),
                _ => (runner, first),
            }
        }
        _ => (runner, first),
    };
    let first = attributable(runner, &case, first);
    let Some(target) = Target::of(&first.verdict, &case.module) else {
        return Ok(Err(first.verdict));
    };
    let mut predicate = |c: &Case| target.holds(&runner.observe(c).verdict, &c.module);
    // A crash or rejection first tries the cone of each instruction XLA's message names.
    let mut reductions: Vec<Box<dyn minimize::Reduction>> = Vec::new();
    let named = minimize::outputs::named_in(&case.module, &failure_text(&first));
    if !named.is_empty() {
        reductions.push(Box::new(minimize::outputs::NamedCone(named)));
    }
    reductions.extend(minimize::default_reductions());
    let (min, stats) = minimize::minimize(case.clone(), &reductions, &mut predicate, opts);
    // The loop only keeps cases the predicate accepted; a bug that shows in some runs only
    // (memory read out of bounds, a crash that depends on the heap) may not show on this last
    // run: up to three runs, then report the original.
    let mut last = runner.observe_fully(&min);
    for _ in 1..3 {
        if target.holds(&last.verdict, &min.module) {
            break;
        }
        last = runner.observe_fully(&min);
    }
    let (min, stats, last) = if target.holds(&last.verdict, &min.module) {
        (min, stats, last)
    } else {
        let mut s = stats;
        s.log
            .push("the minimized case did not reproduce on a final run: kept the original".into());
        s.instructions_after = case.module.instruction_count();
        (case, s, first.clone())
    };
    Ok(Ok(Minimized {
        original: first.verdict,
        target,
        case: min,
        stats,
        last,
    }))
}

/// What XLA said when it failed (a crash's stderr, a rejection's message), else nothing.
fn failure_text(o: &Observation) -> String {
    o.outcomes
        .iter()
        .filter_map(|(_, o)| match o {
            engine::backend::Outcome::Crash { stderr_tail, .. } => Some(stderr_tail.as_str()),
            engine::backend::Outcome::Rejected { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `first`, unless it is a crash that two more runs of `case` do not show: a worker process
/// whose heap an earlier module corrupted without crashing may crash on the next module it
/// runs (nightly at seed 1618033: an s16-indexed dynamic-update-slice writes outside its
/// buffer, and an f8 module minimized next in the same worker crashed in the HLO -> MLIR
/// conversion; alone, in fresh processes, it never crashes). The crashed worker is restarted,
/// so the reruns do not run where the crash happened; then the last rerun is what the case
/// shows.
fn attributable(runner: &Runner, case: &Case, first: Observation) -> Observation {
    if first.verdict.kind != VerdictKind::Crash {
        return first;
    }
    let mut again = first.clone();
    for _ in 0..2 {
        again = runner.observe(case);
        if again.verdict.kind == VerdictKind::Crash {
            return first;
        }
    }
    again
}

fn literal_text(l: &Literal) -> String {
    let s = hlo::print::literal_to_string(l);
    if s.chars().count() > 2000 {
        format!("{}...", s.chars().take(2000).collect::<String>())
    } else {
        s
    }
}

/// The repro description of a minimized finding.
pub fn repro_of(m: &Minimized, session: &Session, bisect: Option<&BisectReport>) -> Repro {
    let voted = session.vote(m);
    let v = voted.as_ref().unwrap_or(&m.last.verdict);
    let backend = v.backend.clone().unwrap_or_default();
    let oracle = judge::classify::ORACLE;
    let outcome_of = |name: &str| {
        m.last
            .outcomes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, o)| o)
    };
    let expected = outcome_of(oracle).map(|o| match o.as_ok() {
        Some(r) => literal_text(&r.result()),
        None => o.to_string(),
    });
    let actual = outcome_of(&backend).map(|o| match o {
        engine::backend::Outcome::Ok(r) => literal_text(&r.result()),
        engine::backend::Outcome::Crash { stderr_tail, .. } => {
            format!("{o}\n{}", stderr_tail.trim_end())
        }
        o => o.to_string(),
    });
    let first_difference = v.comparison.as_ref().and_then(|c| {
        let out = v.bug_output()?;
        let oc = c.outputs.get(out)?;
        let w = oc.worst.first()?;
        Some(format!(
            "output {out} at index {:?}: expected {}, got {} (abs error {:e})",
            w.index, w.expected, w.actual, w.abs_err
        ))
    });
    let culprit = bisect.map(|b| b.conclusion.clone());
    let mut notes = vec![format!("verdict: {}: {}", v.short(), v.message)];
    if let Some(vote) = &v.vote {
        notes.push(format!(
            "voter (stablehlo-ref, the StableHLO reference interpreter) agrees with: {vote}{}",
            match v.label.map(|l| l.name()) {
                Some("xla") => " -> XLA is the one that differs",
                Some("oracle") => " -> the oracle may be wrong",
                _ => "",
            }
        ));
    }
    notes.push(format!(
        "minimizer: {} tests, {} edits accepted, {} ms",
        m.stats.tests, m.stats.accepted, m.stats.elapsed_ms
    ));
    Repro {
        module_text: hlo::print::module_to_string(&m.case.module),
        module_name: m.case.module.name.clone(),
        inputs: m.case.inputs.clone(),
        backend,
        reference: oracle.into(),
        summary: format!(
            "{} ({})",
            v.short(),
            findings::store::Signature::of(v, Some(&m.case.module)).detail
        ),
        expected,
        actual,
        first_difference,
        versions: session.versions(),
        culprit,
        instructions_before: Some(m.stats.instructions_before),
        instructions_after: Some(m.stats.instructions_after),
        xla_flags: session.opts.env_option_overrides.clone(),
        notes,
    }
}

/// Writes the repro directory of a minimized finding.
pub fn write_repro(
    dir: &Path,
    m: &Minimized,
    session: &Session,
    bisect: Option<&BisectReport>,
) -> Result<ReproFiles, String> {
    write_repro_dir(dir, &repro_of(m, session, bisect))
        .map_err(|e| format!("{}: {e}", dir.display()))
}

/// One module's triage.
#[derive(Clone, Debug, Serialize)]
pub struct TriageResult {
    pub module: String,
    pub verdict: String,
    pub message: String,
    pub bug: bool,
    pub instructions_before: Option<usize>,
    pub instructions_after: Option<usize>,
    pub culprit: Option<String>,
    pub conclusion: Option<String>,
    pub repro_dir: Option<String>,
    pub report: Option<String>,
    /// `--repeat N`: the module run again in fresh processes, per XLA backend.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repeat: Vec<crate::repeat::Repeats>,
    /// The report's one-line title (bugs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// "k of N fresh processes reproduced it" (bugs, with reruns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproduced: Option<String>,
    /// Where the bug is, in one line: the pass (and what disabling it does), below HLO, or the
    /// crash stage (bugs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub culprit_summary: Option<String>,
    /// The release bisection of the minimized module (`--releases`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub releases: Option<ReleaseReport>,
    /// No bug, yet the voter (`stablehlo-ref`) gives a value outside the legitimate results
    /// where XLA and the oracle agree: a common mode of the two, or the voter's error; to be
    /// triaged against the texts (never a finding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dissent: Option<String>,
    /// Wall-clock time of this module's triage.
    pub elapsed_ms: u64,
}

impl TriageResult {
    /// A module that is no bug (run, but matching, rejected, or not run at all): `verdict` and
    /// `message` say which and why.
    pub fn no_bug(
        module: &str,
        verdict: &str,
        message: String,
        instructions_before: Option<usize>,
        elapsed: std::time::Duration,
    ) -> TriageResult {
        TriageResult {
            module: module.into(),
            verdict: verdict.into(),
            message,
            bug: false,
            instructions_before,
            instructions_after: None,
            culprit: None,
            conclusion: None,
            repro_dir: None,
            report: None,
            repeat: Vec::new(),
            title: None,
            reproduced: None,
            culprit_summary: None,
            releases: None,
            dissent: None,
            elapsed_ms: elapsed.as_millis() as u64,
        }
    }
}

/// The one-line title of a bug's report: the backend, what went wrong, on which ops, and the
/// culprit when the bisector named one.
pub fn issue_title(
    v: &Verdict,
    ops: &[String],
    culprit: Option<&str>,
    versions: &[(String, String)],
) -> String {
    let backend = match v.backend.as_deref().unwrap_or("xla") {
        "xla-cpu" => "XLA:CPU".to_string(),
        "xla-gpu" => "XLA:GPU".to_string(),
        b => b.to_string(),
    };
    let ops = if ops.is_empty() {
        "data movement".to_string()
    } else {
        ops.join(", ")
    };
    let mut t = match v.kind {
        VerdictKind::Mismatch => {
            let diff = v.comparison.as_ref().and_then(|c| {
                let out = v.bug_output()?;
                let w = c.outputs.get(out)?.worst.first()?;
                Some(format!(": expected {}, got {}", w.expected, w.actual))
            });
            format!(
                "{backend} returns a wrong result for {ops}{}",
                diff.unwrap_or_default()
            )
        }
        VerdictKind::Crash => format!(
            "{backend} crashes ({}) during {} on {ops}",
            v.signal
                .map(engine::backend::signal_name)
                .unwrap_or_else(|| "abnormal exit".into()),
            v.stage.map(|s| s.name()).unwrap_or("?")
        ),
        VerdictKind::Timeout => format!(
            "{backend} hangs during {} on {ops}",
            v.stage.map(|s| s.name()).unwrap_or("?")
        ),
        VerdictKind::Nondeterministic => {
            format!("{backend} gives different results on identical runs of {ops}")
        }
        VerdictKind::Rejected => format!(
            "{backend} rejects a valid module: {}",
            v.message
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(100)
                .collect::<String>()
        ),
        _ => format!("{backend}: {} on {ops}", v.short()),
    };
    match (v.kind, culprit) {
        (VerdictKind::Crash | VerdictKind::Rejected | VerdictKind::Timeout, Some(p)) => {
            t.push_str(&format!(" (in {p})"))
        }
        (_, Some(p)) => t.push_str(&format!(" (after pass {p})")),
        _ => {}
    }
    if let Some((_, j)) = versions.iter().find(|(k, _)| k == "jaxlib") {
        t.push_str(&format!(" [jaxlib {j}]"));
    }
    t
}

/// Everything the markdown of an upstream issue says beyond the repro directory.
#[derive(Clone, Debug, Default)]
pub struct IssueExtras<'a> {
    pub title: String,
    pub context: Option<&'a Context>,
    pub repeat: &'a [crate::repeat::Repeats],
    /// Where the culprit is, in one line (pass with masking, below HLO, crash stage).
    pub culprit_line: Option<String>,
    /// The release bisection (`--releases`), or why there is none.
    pub releases: Option<&'a ReleaseReport>,
    /// Why there is no release bisection when `releases` is `None`.
    pub releases_note: Option<String>,
}

/// The markdown of an upstream issue.
pub fn issue_markdown(
    r: &Repro,
    files: &ReproFiles,
    b: Option<&BisectReport>,
    x: &IssueExtras<'_>,
) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    if x.title.is_empty() {
        let _ = writeln!(s, "# XLA {}: {}\n", r.backend, r.summary);
    } else {
        let _ = writeln!(s, "# {}\n", x.title);
    }
    s.push_str("## Summary\n\n");
    let _ = writeln!(
        s,
        "The HLO module below gives a different outcome on `{}` than the reference \
         interpreter (`{}`, HloEvaluator semantics){}.\n",
        r.backend,
        r.reference,
        match (r.instructions_before, r.instructions_after) {
            (Some(a), Some(b)) if b < a => format!("; minimized from {a} to {b} instructions"),
            (Some(a), Some(b)) => format!(
                "; {b} instructions after minimization ({a} before: no smaller module kept the \
                 bug; the minimizer may have folded inputs into constants)"
            ),
            _ => String::new(),
        }
    );
    if let Some(c) = x.context.filter(|c| !c.origin.is_empty()) {
        s.push_str("## Origin\n\n");
        for o in &c.origin {
            let _ = writeln!(s, "- {o}");
        }
        s.push('\n');
    }
    s.push_str("## Versions\n\n");
    for (k, v) in &r.versions {
        let _ = writeln!(s, "- {k}: {v}");
    }
    if !r.xla_flags.is_empty() {
        let flags: Vec<String> = r
            .xla_flags
            .iter()
            .map(|(k, v)| format!("--{k}={v}"))
            .collect();
        let _ = writeln!(s, "- XLA options this bug needs: `{}`", flags.join(" "));
    } else {
        s.push_str("- XLA options this bug needs: none (defaults)\n");
    }
    let _ = writeln!(
        s,
        "\n## HLO (before_optimizations{})\n\n```\n{}\n```\n",
        if r.instructions_after.is_some() {
            ", minimized"
        } else {
            ", as the script compiled it"
        },
        r.module_text.trim_end()
    );
    s.push_str("## Inputs\n\n");
    if r.inputs.is_empty() {
        s.push_str(
            "None: the module takes no parameters (its values are constants in the HLO).\n\n",
        );
    } else {
        s.push_str("One line per parameter, `<shape><TAB><literal>`; long values are cut here and whole in `inputs.txt`:\n\n```\n");
        for line in findings::repro::literals_text(&r.inputs).lines() {
            if line.chars().count() > 600 {
                let _ = writeln!(s, "{} ...", line.chars().take(600).collect::<String>());
            } else {
                let _ = writeln!(s, "{line}");
            }
        }
        s.push_str("```\n\n");
    }
    let _ = writeln!(
        s,
        "## Expected vs actual\n\n- expected (reference): `{}`\n- actual ({}): `{}`",
        cut(r.expected.as_deref().unwrap_or("?")),
        r.backend,
        cut(r
            .actual
            .as_deref()
            .unwrap_or("?")
            .lines()
            .next()
            .unwrap_or(""))
    );
    if let Some(d) = &r.first_difference {
        let _ = writeln!(s, "- first difference: {d}");
    }
    let mut voted = false;
    for n in &r.notes {
        if n.starts_with("voter") {
            let _ = writeln!(s, "- {n}");
            voted = true;
        }
    }
    if !voted {
        s.push_str("- voter (stablehlo-ref): not asked (not a value mismatch, or --no-voter)\n");
    }
    s.push_str("\n## Culprit\n\n");
    if let Some(l) = &x.culprit_line {
        let _ = writeln!(s, "**{l}**\n");
    }
    match b {
        Some(b) => {
            // The bisector's own section, one heading level down.
            let md = b.markdown();
            let body = md.split_once('\n').map_or("", |(_, rest)| rest);
            let _ = writeln!(s, "{}", body.trim_start());
        }
        None => s.push_str(
            "Not bisected over passes (the finding is not a value mismatch on XLA, or bisection failed).\n\n",
        ),
    }
    match x.releases {
        Some(rr) => s.push_str(&rr.markdown()),
        None => {
            let _ = writeln!(
                s,
                "## Release range\n\nNot determined: {}.\n",
                x.releases_note.as_deref().unwrap_or(
                    "not asked (`hlo-diff triage ... --releases A..B`, or `repro-bisect \
                     module.hlo --inputs inputs.txt --releases A..B` from this directory, \
                     release-bisects it)"
                )
            );
        }
    }
    s.push_str("## Fresh-process reproduction\n\n");
    if x.repeat.is_empty() {
        s.push_str("Not rerun in fresh processes (`--repeat N` does).\n\n");
    }
    for rep in x.repeat {
        let _ = writeln!(
            s,
            "- {}: {} of {} fresh processes disagreed with the reference ({} differed from the first run; outcomes {:?})",
            rep.backend, rep.disagree_with_oracle, rep.runs, rep.differ_from_first, rep.outcomes
        );
    }
    if !x.repeat.is_empty() {
        s.push('\n');
    }
    let options: String = r
        .xla_flags
        .iter()
        .map(|(k, v)| format!(" --xla-option {k}={v}"))
        .collect();
    let flags: Vec<String> = r
        .xla_flags
        .iter()
        .map(|(k, v)| format!("--{k}={v}"))
        .collect();
    let env = if flags.is_empty() {
        String::new()
    } else {
        format!("XLA_FLAGS='{}' ", flags.join(" "))
    };
    let _ = writeln!(
        s,
        "## Reproduce\n\nFrom this directory (`sh repro.sh` runs both):\n\n```sh\nhlo-diff run {} --inputs {} --backends {},{}{options}\n\
         {env}run_hlo_module --platform={} --reference_platform=Interpreter --input_format=hlo \
         --input_literals_file={} {}\n```",
        files.module,
        files.inputs,
        r.reference,
        r.backend,
        if r.backend == "xla-gpu" { "CUDA" } else { "CPU" },
        files.inputs_pbtxt,
        files.module
    );
    if let Some(p) = x.context.and_then(|c| c.python_repro.as_ref()) {
        let _ = writeln!(
            s,
            "\nFrom Python, the reporter's script as triaged:\n\n```sh\n{p}\n```"
        );
    }
    s
}

/// A value for one markdown line: at most 300 characters.
fn cut(v: &str) -> String {
    if v.chars().count() > 300 {
        format!("{} ...", v.chars().take(300).collect::<String>())
    } else {
        v.to_string()
    }
}

/// One line naming where the bug is: the pass (and whether disabling it makes XLA agree), below
/// HLO, or the crash stage.
fn culprit_line(v: &Verdict, b: Option<&BisectReport>) -> Option<String> {
    match v.kind {
        VerdictKind::Crash | VerdictKind::Timeout | VerdictKind::Rejected => {
            let f = b.and_then(|b| b.failure.as_ref());
            let place = f
                .map(crate::bisect::failure_culprit)
                .filter(|c| !c.is_empty() && Some(c.as_str()) != v.stage.map(|s| s.name()))
                .map(|c| format!(", in `{c}`"))
                .unwrap_or_default();
            let check = f
                .and_then(|f| f.check.as_ref())
                .map(|c| format!(", failed check at {c}"))
                .unwrap_or_default();
            Some(format!(
                "{} in stage `{}`{}{place}{check}",
                v.kind.name(),
                v.stage.map(|s| s.name()).unwrap_or("?"),
                v.signal
                    .map(|s| format!(" ({})", engine::backend::signal_name(s)))
                    .unwrap_or_default()
            ))
        }
        _ => {
            let b = b?;
            Some(match (&b.culprit, &b.disabled_check) {
                (Some(c), Some(d)) => format!(
                    "pass `{}`: {}",
                    c.pass,
                    match d.xla_matches_oracle {
                        Some(true) => "disabling it makes XLA agree with the reference",
                        Some(false) => "disabling it does not make XLA agree (another divergence remains, or it is masked)",
                        None => "recompiling without it gave no result",
                    }
                ),
                (Some(c), None) => format!("pass `{}`", c.pass),
                (None, _) if !b.xla_matches_oracle => {
                    let avoided = b
                        .disable_search
                        .as_ref()
                        .filter(|d| !d.minimal.is_empty())
                        .map(|d| {
                            format!(
                                "; disabling {} avoids it",
                                d.minimal
                                    .iter()
                                    .map(|p| format!("`{p}`"))
                                    .collect::<Vec<_>>()
                                    .join(" + ")
                            )
                        })
                        .unwrap_or_default();
                    let kernel = b
                        .isolation
                        .as_ref()
                        .and_then(|i| i.wrong())
                        .map(|k| {
                            format!(
                                "; the wrong kernel is `{}` ({}{})",
                                k.name,
                                k.kind,
                                k.created_by
                                    .as_deref()
                                    .map(|p| format!(", made by `{p}`"))
                                    .unwrap_or_default()
                            )
                        })
                        .unwrap_or_default();
                    match (&b.evidence.first_unevaluable, b.evidence.below_hlo) {
                        (_, true) => format!(
                            "below HLO: every snapshot agrees (code generation, runtime or a \
                             library kernel){kernel}{avoided}"
                        ),
                        (Some(u), false) => format!(
                            "not established: the oracle cannot evaluate the module after `{}` \
                             ({}){kernel}{avoided}",
                            u.pass,
                            u.note.as_deref().unwrap_or("not evaluable")
                        ),
                        (None, false) => format!(
                            "not established: no evaluated snapshot differs{kernel}{avoided}"
                        ),
                    }
                }
                (None, _) => "not found: the bisected compile agreed with the reference".into(),
            })
        }
    }
}

/// `n` fresh-process reruns of `case` on every XLA backend of the session, judged against the
/// oracle's result.
pub fn fresh_repeats(
    session: &Session,
    case: &Case,
    n: usize,
    python: Option<std::path::PathBuf>,
) -> Vec<crate::repeat::Repeats> {
    if n == 0 {
        return Vec::new();
    }
    let text = hlo::print::module_to_string(&case.module);
    let mut outcomes = vec![(
        engine::ORACLE.to_string(),
        engine::interp_backend::InterpBackend::new().run_module(&case.module, &case.inputs),
    )];
    for w in &session.workers {
        outcomes.push((
            w.name().to_string(),
            w.run(&text, &case.inputs, &session.opts),
        ));
    }
    crate::repeat::repeat_all(
        n,
        python,
        &case.module,
        &text,
        &case.inputs,
        &outcomes,
        &session.opts,
        &judge::compare::Tolerance::for_module(&case.module),
    )
}

/// Triage of one case: run, minimize, bisect (value mismatches on an XLA backend), rerun in
/// fresh processes, write the repro directory and `report.md` under `out`.
pub fn triage(
    session: &Session,
    name: &str,
    case: Case,
    out: &Path,
    opts: &Options,
    ctx: &Context,
) -> Result<TriageResult, String> {
    let start = std::time::Instant::now();
    let runner = session.runner();
    let before = case.module.instruction_count();
    let clean_case = (ctx.repeat_clean && ctx.repeat > 0).then(|| case.clone());
    let dumped_case = (!ctx.original_files.is_empty()).then(|| case.clone());
    let agreed_case = session.voter.then(|| case.clone());
    let first = if let Some(compiled) = ctx.from_script {
        let o = runner.observe(&case);
        if o.verdict.kind == VerdictKind::Rejected {
            return Ok(TriageResult::no_bug(
                name,
                "rejected",
                if compiled {
                    format!(
                        "XLA rejects this module when hlo-diff re-runs it, though it compiled in the script: the script's own error at run time, or a module hlo-diff cannot re-run from its dump (not an XLA bug report): {}",
                        o.verdict.message
                    )
                } else {
                    format!(
                        "XLA rejected this module in the script as well (the script's own error, see script/stderr.txt; not an XLA bug report): {}",
                        o.verdict.message
                    )
                },
                Some(before),
                start.elapsed(),
            ));
        }
        Some(o)
    } else {
        None
    };
    let minimized = match first {
        Some(o) => match Target::of(&o.verdict, &case.module) {
            None => Err(o.verdict),
            Some(_) => minimize_case(&runner, case, opts)?,
        },
        None => minimize_case(&runner, case, opts)?,
    };
    let m = match minimized {
        Err(v) => {
            let mut message = v.message;
            if message.contains("elided") {
                message.push_str(
                    " (the dump elides large constants: re-dump with \
                     --xla_dump_large_constants=true)",
                );
            }
            let mut script_time = None;
            if let Some(c) = &dumped_case {
                if let Some(d) = compiled_differently(session, c, &ctx.original_files) {
                    message.push_str(&d.note);
                    script_time = Some(d);
                }
            }
            let repeat = clean_case
                .map(|c| fresh_repeats(session, &c, ctx.repeat, ctx.python.clone()))
                .unwrap_or_default();
            let mut r = TriageResult {
                repeat,
                ..TriageResult::no_bug(name, v.kind.name(), message, Some(before), start.elapsed())
            };
            if v.kind.agrees() {
                if let Some(d) = agreed_case.as_ref().and_then(|c| session.dissent(c)) {
                    r.message.push_str(&format!(
                        "; the StableHLO reference interpreter dissents (XLA and the oracle \
                         agree; a common mode or the voter's error, to triage against the \
                         texts): {d}"
                    ));
                    r.dissent = Some(d);
                }
            }
            if let Some(d) = script_time.filter(|d| d.changed_result) {
                r.bug = true;
                r.message = format!(
                    "the re-run agrees with the oracle, but{}",
                    d.note.trim_start_matches('.')
                );
                r.verdict = "mismatch".into();
                r.title = Some(format!(
                    "XLA:CPU's rewrite to {} changes the result of {name}{}",
                    d.calls,
                    ctx.versions
                        .iter()
                        .chain(session.versions().iter())
                        .find(|(k, _)| k == "jaxlib" || k.ends_with("jaxlib"))
                        .map(|(_, v)| format!(" [jaxlib {v}]"))
                        .unwrap_or_default()
                ));
                r.culprit_summary = Some(format!(
                    "the rewrite to {} (established on the script's own after_optimizations; \
                     the re-run through HLO -> MLIR -> HLO does not make it)",
                    d.calls
                ));
                if let Some(c) = &dumped_case {
                    match script_time_report(session, ctx, c, &d, &r, out) {
                        Ok(report) => {
                            r.repro_dir = Some(out.display().to_string());
                            r.report = Some(report);
                        }
                        Err(e) => eprintln!("{name}: {e}"),
                    }
                }
            }
            return Ok(r);
        }
        Ok(m) => m,
    };
    let mut bisect_report = None;
    let v = &m.last.verdict;
    // A wrong value is bisected to its pass; a crash or rejection to where XLA was when it
    // failed (stage, pass entered, failed check) and the passes whose disabling avoids it.
    if matches!(
        v.kind,
        VerdictKind::Mismatch | VerdictKind::Crash | VerdictKind::Rejected
    ) {
        if let Some(w) = session
            .workers
            .iter()
            .find(|w| Some(w.name()) == v.backend.as_deref())
        {
            let text = hlo::print::module_to_string(&m.case.module);
            let bo = BisectOptions {
                run: session.opts.clone(),
                tolerance_scale: session.tolerance_scale,
                ..BisectOptions::default()
            };
            match bisect(&text, &m.case.inputs, w.as_ref(), &bo) {
                Ok(b) => bisect_report = Some(b),
                Err(e) => eprintln!("bisect: {e}"),
            }
        }
    }
    let repeat = fresh_repeats(session, &m.case, ctx.repeat, ctx.python.clone());
    let (releases, releases_note) = match &ctx.releases {
        Some(plan) => release_range(session, &m, plan),
        None => (None, None),
    };
    let mut repro = repro_of(&m, session, bisect_report.as_ref());
    repro.versions.extend(ctx.versions.iter().cloned());
    let culprit = bisect_report.as_ref().and_then(|b| match &b.failure {
        Some(f) => Some(crate::bisect::failure_culprit(f)).filter(|c| !c.is_empty()),
        None => b.culprit.as_ref().map(|c| c.pass.clone()),
    });
    let voted = session.vote(&m);
    let shown = voted.as_ref().unwrap_or(v);
    // The ops the minimized module still computes (the title names them).
    let ops: Vec<String> = m
        .case
        .module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter())
        .filter(|i| !findings::store::trivial(i.opcode))
        .map(|i| i.opcode.name().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let title = issue_title(shown, &ops, culprit.as_deref(), &repro.versions);
    let files = write_repro_dir(out, &repro).map_err(|e| format!("{}: {e}", out.display()))?;
    if !ctx.original_files.is_empty() {
        let orig = out.join("original");
        std::fs::create_dir_all(&orig).map_err(|e| format!("{}: {e}", orig.display()))?;
        for f in &ctx.original_files {
            if let Some(n) = f.file_name() {
                let _ = std::fs::copy(f, orig.join(n));
            }
        }
    }
    let reproduced = (!repeat.is_empty()).then(|| {
        repeat
            .iter()
            .map(|r| format!("{} of {} on {}", r.disagree_with_oracle, r.runs, r.backend))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let extras = IssueExtras {
        title: title.clone(),
        context: Some(ctx),
        repeat: &repeat,
        culprit_line: culprit_line(shown, bisect_report.as_ref()),
        releases: releases.as_ref(),
        releases_note,
    };
    let report_path = out.join("report.md");
    std::fs::write(
        &report_path,
        issue_markdown(&repro, &files, bisect_report.as_ref(), &extras),
    )
    .map_err(|e| format!("{}: {e}", report_path.display()))?;
    let culprit_summary = extras.culprit_line.clone();
    Ok(TriageResult {
        module: name.into(),
        verdict: v.kind.name().into(),
        message: v.message.clone(),
        bug: true,
        instructions_before: Some(m.stats.instructions_before),
        instructions_after: Some(m.stats.instructions_after),
        culprit,
        conclusion: bisect_report.as_ref().map(|b| b.conclusion.clone()),
        repro_dir: Some(out.display().to_string()),
        report: Some(report_path.display().to_string()),
        repeat,
        title: Some(title),
        reproduced,
        culprit_summary,
        releases,
        dissent: None,
        elapsed_ms: start.elapsed().as_millis() as u64,
    })
}

/// The library calls and custom fusion kinds of an optimized module's text
/// (`custom_call_target="..."`, `"kind":"__..."`).
pub fn library_calls(optimized: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for (key, close) in [("custom_call_target=\"", '"'), ("\"kind\":\"__", '"')] {
        let mut rest = optimized;
        while let Some(at) = rest.find(key) {
            rest = &rest[at + key.len()..];
            let end = rest.find(close).unwrap_or(rest.len());
            let name = if key.starts_with('"') {
                format!("__{}", &rest[..end])
            } else {
                rest[..end].to_string()
            };
            out.insert(name);
        }
    }
    out
}

/// What the script's own optimized module says when it called libraries the re-run does not.
struct ScriptTimeCheck {
    /// Appended to the triage message.
    note: String,
    /// The libraries, as `` `__onednn$softmax` ``.
    calls: String,
    /// The oracle evaluates the script's optimized module to another result than the module
    /// itself: the rewrite changed what the module computes.
    changed_result: bool,
    /// The oracle's result on the module, and on the script's optimized module (text).
    expected: Option<String>,
    actual: Option<String>,
}

/// When the script's own dump shows XLA calling libraries (`__onednn$softmax`, ...) that the
/// re-run of the same module does not (hlo-diff re-runs a dumped module through HLO -> MLIR ->
/// HLO, whose canonicalizer folds reshape/broadcast chains that some rewrites match on), "XLA
/// agrees" does not clear what the script computed. The script's `after_optimizations` itself
/// is then evaluated by the oracle (which evaluates the library calls as their kernels compute)
/// and run on XLA as is: if the oracle's result differs from the module's, the rewrite changed
/// the result; if both agree with the module, the script's compile is cleared too; otherwise
/// nothing is claimed.
fn compiled_differently(
    session: &Session,
    case: &Case,
    original: &[std::path::PathBuf],
) -> Option<ScriptTimeCheck> {
    let theirs_path = original.iter().find(|f| {
        f.file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with("after_optimizations.txt"))
    })?;
    let theirs_text = std::fs::read_to_string(theirs_path).ok()?;
    let theirs = library_calls(&theirs_text);
    if theirs.is_empty() {
        return None;
    }
    let w = session.workers.first()?;
    let opts = RunOptions {
        return_optimized_hlo: true,
        ..session.opts.clone()
    };
    let text = hlo::print::module_to_string(&case.module);
    let ours = w.run(&text, &case.inputs, &opts);
    let ours = library_calls(ours.as_ok()?.optimized_hlo.as_deref()?);
    let missing: Vec<&String> = theirs.difference(&ours).collect();
    if missing.is_empty() {
        return None;
    }
    let calls = missing
        .iter()
        .map(|m| format!("`{m}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let not_cleared = format!(
        ". Not cleared: when the script ran, XLA compiled this module with {calls}, which the \
         re-run does not use (hlo-diff re-runs a dumped module through HLO -> MLIR -> HLO, whose \
         canonicalizer can undo the pattern a rewrite matches)"
    );
    let check = |note: String, changed_result: bool| ScriptTimeCheck {
        note,
        calls: calls.clone(),
        changed_result,
        expected: None,
        actual: None,
    };
    let file = theirs_path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    // The script's optimized module, on the oracle and on XLA, with the module's inputs.
    let optimized = match hlo::parse::parse_module(&theirs_text) {
        Ok(m) if m.entry_computation().parameter_shapes() == case.module.entry_computation().parameter_shapes() => m,
        _ => {
            return Some(check(
                format!("{not_cleared}; its optimized module ({file}) cannot be run with the module's inputs"),
                false,
            ))
        }
    };
    let oracle = engine::interp_backend::InterpBackend::new();
    let judge = |module: &hlo::Module, text: Option<&str>, got: Outcome, want: Outcome| {
        let outcomes = vec![
            (engine::ORACLE.to_string(), want),
            ("xla-cpu".to_string(), got),
        ];
        let tolerance = crate::bisect::tolerance(module, session.tolerance_scale);
        Judge::offline()
            .judge(&Trial {
                module,
                text,
                inputs: &case.inputs,
                outcomes: &outcomes,
                reruns: &[],
                tolerance: &tolerance,
            })
            .verdict
    };
    let of_module = oracle.run_module(&case.module, &case.inputs);
    let of_optimized = oracle.run_module(&optimized, &case.inputs);
    if let Outcome::Unsupported { what: why } | Outcome::HarnessError { message: why, .. } =
        &of_optimized
    {
        return Some(check(
            format!("{not_cleared}; the oracle cannot evaluate the script's optimized module ({file}): {why}"),
            false,
        ));
    }
    // Did the rewrite change the meaning? (the module's oracle result as the reference)
    let meaning = judge(&case.module, None, of_optimized.clone(), of_module.clone());
    // Does XLA's kernel compute what the oracle says the optimized module means?
    let xla_run = w.run(&theirs_text, &case.inputs, &session.opts);
    let kernel = match &xla_run {
        Outcome::Ok(_) => Some(judge(
            &optimized,
            Some(&theirs_text),
            xla_run.clone(),
            of_optimized.clone(),
        )),
        _ => None,
    };
    let kernel_note = match &kernel {
        Some(v) if v.kind == VerdictKind::Match => {
            "XLA running that optimized module as is agrees with the oracle's evaluation of it".to_string()
        }
        Some(v) => format!("XLA running that optimized module as is differs from the oracle's evaluation of it too: {}", first_line(&v.message)),
        None => format!("XLA could not run that optimized module as is ({})", first_line(&xla_run.to_string())),
    };
    if meaning.kind == VerdictKind::Mismatch {
        let text_of = |o: &Outcome| match o {
            Outcome::Ok(r) => Some(crate::bisect::short_literal(&r.result())),
            _ => None,
        };
        let (expected, actual) = (text_of(&of_module), text_of(&of_optimized));
        return Some(ScriptTimeCheck {
            expected,
            actual,
            ..check(
                format!(
                    ". The script's own optimized module ({file}, with {calls}) computes another \
                 result than the module: {}; {kernel_note}. The rewrite to {calls} changed the \
                 result (the re-run through HLO -> MLIR -> HLO does not make that rewrite, so \
                 this is established on the script's optimized module, not minimized)",
                    first_line(&meaning.message)
                ),
                true,
            )
        });
    }
    if meaning.kind == VerdictKind::Match
        && kernel
            .as_ref()
            .is_some_and(|v| v.kind == VerdictKind::Match)
    {
        return Some(check(
            format!(
                ". The script compiled this module with {calls}, which the re-run does not use; \
                 the script's own optimized module ({file}) was checked too: the oracle evaluates \
                 it to the module's result and {kernel_note}"
            ),
            false,
        ));
    }
    Some(check(format!("{not_cleared}; {kernel_note}"), false))
}

/// The repro directory and `report.md` of a bug only the script's own optimized module shows:
/// the module and its inputs (what the re-run compiles), the script's dump files (its
/// after_optimizations holds the rewrite), the oracle's result on each.
fn script_time_report(
    session: &Session,
    ctx: &Context,
    case: &Case,
    d: &ScriptTimeCheck,
    r: &TriageResult,
    out: &Path,
) -> Result<String, String> {
    let mut versions = ctx.versions.clone();
    if versions.is_empty() {
        versions = session.versions();
    }
    let repro = Repro {
        module_text: hlo::print::module_to_string(&case.module),
        // `module_0008.jit_f` -> `jit_f` (the repro file adds its own `module_0000.`).
        module_name: r
            .module
            .split_once('.')
            .filter(|(p, _)| p.starts_with("module_"))
            .map_or(r.module.clone(), |(_, n)| n.to_string()),
        inputs: case.inputs.clone(),
        backend: "xla-cpu".into(),
        reference: engine::ORACLE.into(),
        summary: r.title.clone().unwrap_or_default(),
        expected: d.expected.clone(),
        actual: d.actual.clone(),
        versions,
        culprit: r.culprit_summary.clone(),
        instructions_before: r.instructions_before,
        notes: vec![
            format!("What was found: {}", r.message),
            "`Actual` is the oracle's evaluation of the script's own optimized module \
             (`original/*after_optimizations.txt`), which evaluates the library calls as their \
             kernels compute; XLA running that optimized module as is gave the same. The module \
             here, compiled again, does not get the rewrite (hlo-diff compiles through \
             HLO -> MLIR -> HLO), so `repro.sh` shows no bug: rerun the script to see it."
                .into(),
        ],
        ..Repro::default()
    };
    let files = write_repro_dir(out, &repro).map_err(|e| format!("{}: {e}", out.display()))?;
    let orig = out.join("original");
    std::fs::create_dir_all(&orig).map_err(|e| format!("{}: {e}", orig.display()))?;
    for f in &ctx.original_files {
        if let Some(n) = f.file_name() {
            let _ = std::fs::copy(f, orig.join(n));
        }
    }
    let extras = IssueExtras {
        title: r.title.clone().unwrap_or_default(),
        context: Some(ctx),
        repeat: &r.repeat,
        culprit_line: r.culprit_summary.clone(),
        releases: None,
        releases_note: Some(
            "not searched: the rewrite happens only when jax compiles the script; run the \
             script with `--python` of other releases"
                .into(),
        ),
    };
    let path = out.join("report.md");
    std::fs::write(&path, issue_markdown(&repro, &files, None, &extras))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path.display().to_string())
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The release bisection of a bug's minimized module: the failure searched for is the one the
/// session's jaxlib shows (the minimized verdict's symptom).
fn release_range(
    session: &Session,
    m: &Minimized,
    plan: &ReleasePlan,
) -> (Option<ReleaseReport>, Option<String>) {
    let v = &m.last.verdict;
    let Some(target) = Symptom::of(v) else {
        return (
            None,
            Some(format!(
                "the minimized module shows no failure ({})",
                v.kind.name()
            )),
        );
    };
    let backend = v.backend.clone().unwrap_or_else(|| "xla-cpu".into());
    if backend != "xla-cpu" && backend != "xla-gpu" {
        return (
            None,
            Some(format!(
                "the failing backend `{backend}` has no jaxlib releases"
            )),
        );
    }
    let jaxlib = session
        .versions()
        .into_iter()
        .find(|(k, _)| k == "jaxlib")
        .map(|(_, v)| v)
        .unwrap_or_else(|| "?".into());
    let opts = ReleaseOptions {
        cache: plan.cache.clone(),
        backend,
        run: session.opts.clone(),
        tolerance_scale: session.tolerance_scale,
        target: Some(target),
        target_from: format!("as the triaged jaxlib {jaxlib} shows it"),
    };
    let text = hlo::print::module_to_string(&m.case.module);
    let progress = |l: &str| eprintln!("releases: {l}");
    match bisect_releases(
        &text,
        &m.case.module,
        &m.case.inputs,
        &plan.releases,
        &opts,
        &progress,
    ) {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(format!("release bisection failed: {e}"))),
    }
}

#[cfg(test)]
mod flaky_tests {
    use super::minimize_case;
    use crate::minimize::predicate::Runner;
    use crate::minimize::{Case, Options};
    use engine::backend::{Backend, Outcome, RunOptions, Stage};
    use engine::interp_backend::InterpBackend;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    /// `minimize_case` of `text` on f32[4] zeros, with `backend` beside the oracle.
    fn minimize_on(
        backend: Arc<dyn Backend>,
        text: &str,
    ) -> Result<super::Minimized, judge::Verdict> {
        let module = hlo::parse::parse_module(text).unwrap();
        let x = hlo::Literal::Array(
            hlo::ArrayLiteral::zeros(hlo::PrimitiveType::F32, vec![4]).unwrap(),
        );
        let case = Case {
            module,
            inputs: vec![x],
        };
        minimize_case(&Runner::new(vec![backend]), case, &Options::default()).unwrap()
    }

    /// A backend whose crash shows on every other run of the same module (the 1st, 3rd, ...),
    /// as a crash that depends on the heap does: a module with a `multiply` crashes at execute,
    /// any other runs as the oracle does.
    struct EveryOtherRun {
        runs: Mutex<HashMap<String, usize>>,
    }

    impl Backend for EveryOtherRun {
        fn name(&self) -> &str {
            "xla-cpu"
        }
        fn run(&self, text: &str, inputs: &[hlo::Literal], opts: &RunOptions) -> Outcome {
            let mut runs = self.runs.lock().unwrap();
            let k = runs.entry(text.to_string()).or_insert(0);
            *k += 1;
            if text.contains(" multiply(") && *k % 2 == 1 {
                return Outcome::Crash {
                    stage: Stage::Execute,
                    signal: Some(11),
                    stderr_tail: "Fatal Python error: Segmentation fault".into(),
                };
            }
            InterpBackend::new().run(text, inputs, opts)
        }
    }

    /// A backend whose first run crashes, whatever the module (a worker an earlier module left
    /// with a corrupted heap), and that runs every module as the oracle does after it.
    struct PoisonedOnce {
        runs: Mutex<usize>,
    }

    impl Backend for PoisonedOnce {
        fn name(&self) -> &str {
            "xla-cpu"
        }
        fn run(&self, text: &str, inputs: &[hlo::Literal], opts: &RunOptions) -> Outcome {
            let mut runs = self.runs.lock().unwrap();
            *runs += 1;
            if *runs == 1 {
                return Outcome::Crash {
                    stage: Stage::Convert,
                    signal: Some(6),
                    stderr_tail: "corrupted double-linked list\nFatal Python error: Aborted".into(),
                };
            }
            InterpBackend::new().run(text, inputs, opts)
        }
    }

    /// A crash the case does not show again is not its own: no crash is minimized, the case
    /// shows what its reruns show (here: no bug).
    #[test]
    fn a_crash_that_does_not_show_again_is_not_the_cases() {
        let backend = Arc::new(PoisonedOnce {
            runs: Mutex::new(0),
        });
        let v = minimize_on(
            backend,
            "HloModule f\n\nENTRY main {\n  x = f32[4] parameter(0)\n  ROOT n = f32[4] negate(x)\n}\n",
        )
        .expect_err("no bug to minimize");
        assert_eq!(v.kind, judge::VerdictKind::Match, "{v:?}");
    }

    /// Each candidate runs once in the loop (a first run: it crashes); the minimized module's
    /// final check is its second run, which does not: a third run shows the crash again, so the
    /// minimized module is kept, not the original.
    #[test]
    fn a_bug_that_shows_in_some_runs_keeps_its_minimized_module() {
        let backend = Arc::new(EveryOtherRun {
            runs: Mutex::new(HashMap::new()),
        });
        let min = minimize_on(
            backend,
            "HloModule f\n\nENTRY main {\n  x = f32[4] parameter(0)\n  n = f32[4] negate(x)\n  \
             e = f32[4] exponential(n)\n  m = f32[4] multiply(x, x)\n  a = f32[4] add(m, e)\n  \
             ROOT t = (f32[4], f32[4]) tuple(a, e)\n}\n",
        )
        .unwrap();
        let (before, after) = (
            min.stats.instructions_before,
            min.case.module.instruction_count(),
        );
        assert!(after < before, "{before} -> {after}: {:?}", min.stats.log);
        assert_eq!(min.last.verdict.kind, judge::VerdictKind::Crash);
    }
}

#[cfg(test)]
mod tests {
    use crate::bisect::{BisectReport, Evidence, StepRef};
    use judge::{Verdict, VerdictKind};

    fn report(evidence: Evidence) -> BisectReport {
        BisectReport {
            backend: "xla-cpu".into(),
            module_name: "m".into(),
            dump_dir: None,
            xla_matches_oracle: false,
            xla_vs_oracle: String::new(),
            input_matches_before_optimizations: Some(true),
            steps: Vec::new(),
            after_optimizations: None,
            culprit: None,
            disabled_check: None,
            disable_search: None,
            evidence,
            failure: None,
            isolation: None,
            skipped: 0,
            evaluated: 0,
            conclusion: String::new(),
            expected: String::new(),
            actual: String::new(),
        }
    }

    /// openxla/xla#13054 on jaxlib 0.4.28: the snapshot after onednn-matmul-rewriter holds a
    /// `__onednn$matmul` the oracle cannot evaluate, so the one-line culprit may not say "below
    /// HLO"; it says what is not established and where the evidence stops.
    #[test]
    fn the_culprit_line_says_below_hlo_only_when_every_snapshot_agrees() {
        let v: Verdict = serde_json::from_str(
            r#"{"verdict":"mismatch","backend":"xla-cpu","stage":null,"signal":null,"message":"","label":null,"mismatched_outputs":[0],"comparison":null,"vote":null}"#,
        )
        .unwrap();
        assert_eq!(v.kind, VerdictKind::Mismatch);
        let stopped = report(Evidence {
            first_unevaluable: Some(StepRef {
                step: 26,
                pass: "onednn-matmul-rewriter".into(),
                path: String::new(),
                note: Some("custom-call target \"__onednn$matmul\"".into()),
            }),
            last_agreeing: None,
            below_hlo: false,
        });
        let line = super::culprit_line(&v, Some(&stopped)).unwrap();
        assert!(line.starts_with("not established"), "{line}");
        assert!(line.contains("onednn-matmul-rewriter"), "{line}");
        assert!(!line.contains("below HLO"), "{line}");
        let all = report(Evidence {
            below_hlo: true,
            ..Evidence::default()
        });
        let line = super::culprit_line(&v, Some(&all)).unwrap();
        assert!(line.starts_with("below HLO"), "{line}");
    }

    /// Lines of real `cpu_after_optimizations` dumps: jaxlib 0.4.26 (jax.nn.softmax over axis 0,
    /// jax-ml/jax#20856) and 0.10.2 (the maximum reduction of
    /// corpora/regressions/xla_bucket_reduce_max_nan_large.hlo in a YNNPACK fusion).
    #[test]
    fn library_calls_name_custom_call_targets_and_custom_fusion_kinds() {
        let old = r#"  ROOT custom-call = f32[3,1,1]{2,1,0} custom-call(Arg_0.1), custom_call_target="__onednn$softmax", metadata={op_name="jit(f)/jit(main)/div"}"#;
        let new = r#"  ROOT %ynn_fusion = f32[] fusion(%p.1), kind=kCustom, calls=%fused_computation, metadata={op_name="r"}, backend_config={"outer_dimension_partitions":[],"fusion_config":{"kind":"__ynn_fusion"}}"#;
        let calls = super::library_calls(&format!("{old}\n{new}\n"));
        assert_eq!(
            calls.into_iter().collect::<Vec<_>>(),
            vec!["__onednn$softmax".to_string(), "__ynn_fusion".to_string()]
        );
        assert!(super::library_calls("  ROOT a = f32[] add(x, y)\n").is_empty());
    }
}

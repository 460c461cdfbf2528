//! From a module and inputs to a report: run on the backends, and when a bug shows, minimize it
//! (same verdict signature), bisect the minimized module over XLA's passes (for mismatches), and
//! write the repro directory plus a markdown report for an upstream issue.
//!
//! `hlo-diff minimize` uses [`minimize_case`] and [`write_repro`]; `hlo-diff triage` uses
//! [`triage`] on every module of a dump directory (or on one HLO file).

use crate::bisect::{bisect, BisectOptions, BisectReport};
use crate::minimize::predicate::{Observation, Runner, Target};
use crate::minimize::{self, Case, Options, Stats};
use engine::backend::{Backend, RunOptions};
use engine::worker::WorkerBackend;
use findings::repro::{write_repro_dir, Repro, ReproFiles};
use hlo::Literal;
use judge::classify::{Verdict, VerdictKind};
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
    pub fn runner(&self) -> Runner {
        let mut r = Runner::new(
            self.workers
                .iter()
                .map(|w| w.clone() as Arc<dyn Backend>)
                .collect(),
        );
        r.opts = self.opts.clone();
        r.tolerance_scale = self.tolerance_scale;
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
                ..judge::Policy::CHOICES
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
    let Some(target) = Target::of(&first.verdict, &case.module) else {
        return Ok(Err(first.verdict));
    };
    let mut predicate = |c: &Case| target.holds(&runner.observe(c).verdict, &c.module);
    let (min, stats) = minimize::minimize(
        case.clone(),
        &minimize::default_reductions(),
        &mut predicate,
        opts,
    );
    let last = runner.observe(&min);
    // The loop only keeps cases the predicate accepted; a flaky backend could still disagree
    // on this last run: then report the original.
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
        let out = v.mismatched_outputs.first().copied()?;
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
}

/// The markdown of an upstream issue.
pub fn issue_markdown(r: &Repro, files: &ReproFiles, b: Option<&BisectReport>) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "# XLA {}: {}\n", r.backend, r.summary);
    s.push_str("## Summary\n\n");
    let _ = writeln!(
        s,
        "The HLO module below gives a different outcome on `{}` than the reference \
         interpreter (`{}`, HloEvaluator semantics){}.\n",
        r.backend,
        r.reference,
        match (r.instructions_before, r.instructions_after) {
            (Some(a), Some(b)) => format!("; minimized from {a} to {b} instructions"),
            _ => String::new(),
        }
    );
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
        let _ = writeln!(s, "- XLA_FLAGS: `{}`", flags.join(" "));
    }
    let _ = writeln!(s, "\n## HLO\n\n```\n{}\n```\n", r.module_text.trim_end());
    let _ = writeln!(
        s,
        "## Inputs\n\n```\n{}```\n",
        findings::repro::literals_text(&r.inputs)
    );
    let _ = writeln!(
        s,
        "## Expected vs actual\n\n- expected (reference): `{}`\n- actual ({}): `{}`",
        r.expected.as_deref().unwrap_or("?"),
        r.backend,
        r.actual
            .as_deref()
            .unwrap_or("?")
            .lines()
            .next()
            .unwrap_or("")
    );
    if let Some(d) = &r.first_difference {
        let _ = writeln!(s, "- first difference: {d}");
    }
    for n in &r.notes {
        if n.starts_with("voter") {
            let _ = writeln!(s, "- {n}");
        }
    }
    s.push_str("\n## Culprit pass\n\n");
    match b {
        Some(b) => {
            // The bisector's own section, one heading level down.
            let md = b.markdown();
            let body = md.split_once('\n').map_or("", |(_, rest)| rest);
            let _ = writeln!(s, "{}", body.trim_start());
        }
        None => s.push_str(
            "Not bisected (the finding is not a value mismatch on XLA, or bisection failed).\n\n",
        ),
    }
    let _ = writeln!(
        s,
        "## Reproduce\n\n```sh\nhlo-diff run {} --inputs {} --backends {},{}\n\
         run_hlo_module --platform=CPU --reference_platform=Interpreter --input_format=hlo \
         --input_literals_file={} {}\n```",
        files.module, files.inputs, r.reference, r.backend, files.inputs_pbtxt, files.module
    );
    s
}

/// Triage of one case: run, minimize, bisect (value mismatches on an XLA backend), write the
/// repro directory and `report.md` under `out`.
pub fn triage(
    session: &Session,
    name: &str,
    case: Case,
    out: &Path,
    opts: &Options,
) -> Result<TriageResult, String> {
    let runner = session.runner();
    let before = case.module.instruction_count();
    let m = match minimize_case(&runner, case, opts)? {
        Err(v) => {
            let mut message = v.message;
            if message.contains("elided") {
                message.push_str(
                    " (the dump elides large constants: re-dump with \
                     --xla_dump_large_constants=true)",
                );
            }
            return Ok(TriageResult {
                module: name.into(),
                verdict: v.kind.name().into(),
                message,
                bug: false,
                instructions_before: Some(before),
                instructions_after: None,
                culprit: None,
                conclusion: None,
                repro_dir: None,
                report: None,
                repeat: Vec::new(),
            });
        }
        Ok(m) => m,
    };
    let mut bisect_report = None;
    let v = &m.last.verdict;
    if v.kind == VerdictKind::Mismatch {
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
    let repro = repro_of(&m, session, bisect_report.as_ref());
    let files = write_repro_dir(out, &repro).map_err(|e| format!("{}: {e}", out.display()))?;
    let report_path = out.join("report.md");
    std::fs::write(
        &report_path,
        issue_markdown(&repro, &files, bisect_report.as_ref()),
    )
    .map_err(|e| format!("{}: {e}", report_path.display()))?;
    Ok(TriageResult {
        module: name.into(),
        verdict: v.kind.name().into(),
        message: v.message.clone(),
        bug: true,
        instructions_before: Some(m.stats.instructions_before),
        instructions_after: Some(m.stats.instructions_after),
        culprit: bisect_report
            .as_ref()
            .and_then(|b| b.culprit.as_ref().map(|c| c.pass.clone())),
        conclusion: bisect_report.as_ref().map(|b| b.conclusion.clone()),
        repro_dir: Some(out.display().to_string()),
        report: Some(report_path.display().to_string()),
        repeat: Vec::new(),
    })
}

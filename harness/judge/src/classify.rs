//! The classifier: one function turns the outcomes of running one module on several backends
//! into a [`Verdict`] (after wasmtime's differential oracle, where a single function decides
//! what a pair of results means).
//!
//! Precedence, first that applies:
//! 1. a backend crashed -> `crash` (stage, signal);
//! 2. a backend ran past its limit -> `timeout` (stage);
//! 3. a backend refused the module -> `rejected` (XLA refusing a module our verifier accepts;
//!    the oracle refusing it is labelled `oracle`);
//! 4. a backend cannot run it (unsupported, unavailable, harness error) -> `unsupported`;
//! 5. a re-run of a backend disagrees with its first run bitwise -> `nondeterministic`;
//! 6. some element of a backend's result is not the oracle's value ([`crate::compare::same_value`])
//!    -> `mismatch`, which the judge then holds to the set of legitimate results (`proof.rs`),
//!    labelled by the voter (`stablehlo-ref`) when it could run the module:
//!    `xla` (the voter agrees with the oracle), `oracle` (the voter agrees with XLA) or
//!    `undecided`;
//! 7. otherwise `match`.
//!
//! The voter never makes a verdict by itself: its failures are ignored.

use crate::compare::{compare_leaves, Comparison, Tolerance};
use engine::backend::{failure_line_rank, signal_name, Outcome, RunResult, Stage};
use hlo::ArrayLiteral;
use serde::{Deserialize, Serialize};

pub use engine::{ORACLE, VOTER};

/// What a run came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    Match,
    Mismatch,
    Crash,
    Timeout,
    Rejected,
    Unsupported,
    Nondeterministic,
    /// A difference the set of legitimate results cannot decide: some differing element's set
    /// is unbounded (an op the semantics table does not bound), or no set could be computed.
    /// Not a bug the judge can prove (reported apart, never a finding).
    Unproven,
}

impl VerdictKind {
    pub const ALL: [VerdictKind; 8] = [
        VerdictKind::Match,
        VerdictKind::Mismatch,
        VerdictKind::Crash,
        VerdictKind::Timeout,
        VerdictKind::Rejected,
        VerdictKind::Unsupported,
        VerdictKind::Nondeterministic,
        VerdictKind::Unproven,
    ];

    pub fn name(self) -> &'static str {
        match self {
            VerdictKind::Match => "match",
            VerdictKind::Mismatch => "mismatch",
            VerdictKind::Crash => "crash",
            VerdictKind::Timeout => "timeout",
            VerdictKind::Rejected => "rejected",
            VerdictKind::Unsupported => "unsupported",
            VerdictKind::Nondeterministic => "nondeterministic",
            VerdictKind::Unproven => "unproven",
        }
    }

    /// Whether the backends agree as far as the judge can prove: a match, or a difference
    /// inside the legitimate results (`unproven`).
    pub fn agrees(self) -> bool {
        matches!(self, VerdictKind::Match | VerdictKind::Unproven)
    }

    /// Whether this verdict is a finding (something to store and report).
    pub fn is_finding(self) -> bool {
        !matches!(
            self,
            VerdictKind::Match | VerdictKind::Unsupported | VerdictKind::Unproven
        )
    }
}

impl std::fmt::Display for VerdictKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Who is probably wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// XLA (the voter agrees with the oracle, or XLA failed by itself).
    Xla,
    /// The oracle (the voter agrees with XLA, or the oracle failed by itself).
    Oracle,
    /// No voter result, or it agrees with both or neither.
    Undecided,
}

impl Label {
    pub fn name(self) -> &'static str {
        match self {
            Label::Xla => "xla",
            Label::Oracle => "oracle",
            Label::Undecided => "undecided",
        }
    }
}

/// The classifier's decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    #[serde(rename = "verdict")]
    pub kind: VerdictKind,
    /// The backend the verdict is about (the one that crashed, differs, ...).
    pub backend: Option<String>,
    #[serde(with = "stage_serde")]
    pub stage: Option<Stage>,
    pub signal: Option<i32>,
    /// One line for humans (the failure message, or a comparison summary).
    pub message: String,
    pub label: Option<Label>,
    /// Output leaves that differ (mismatch, nondeterministic).
    pub mismatched_outputs: Vec<usize>,
    /// The comparison that decided a mismatch (backend vs oracle); on a match, the last
    /// backend's comparison (for error statistics).
    pub comparison: Option<Comparison>,
    /// What the voter's result agreed with: `oracle`, `xla`, `both`, `neither`, or why it
    /// could not vote.
    pub vote: Option<String>,
    /// On a match that an allowed implementation choice explains: which, and what it excused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explained: Option<crate::judge::Explanation>,
    /// On a mismatch or an unproven difference: what the set of legitimate results
    /// established (the elements outside it, or that every differing one is inside).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<crate::proof::Proof>,
    /// On no finding: the voter (Google's StableHLO reference interpreter) gave a value outside
    /// the legitimate results where XLA and the oracle agree: evidence about the oracle (a
    /// common mode with XLA) or about the voter, for triage against the texts. Never a finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dissent: Option<crate::proof::Proof>,
}

impl Verdict {
    fn new(kind: VerdictKind, backend: Option<&str>, message: impl Into<String>) -> Verdict {
        Verdict {
            kind,
            backend: backend.map(str::to_string),
            stage: None,
            signal: None,
            message: message.into(),
            label: None,
            mismatched_outputs: Vec::new(),
            comparison: None,
            vote: None,
            explained: None,
            proof: None,
            dissent: None,
        }
    }

    /// The output that makes it a bug: the first the proof shows an element of outside every
    /// legitimate result, else the first that differs beyond the tolerance (`None`: no output
    /// differs). A difference the set holds (a flushed subnormal's 0 * inf) beside the bug is
    /// no part of it.
    pub fn bug_output(&self) -> Option<usize> {
        self.proof
            .as_ref()
            .and_then(|p| p.outside.first())
            .map(|o| o.output)
            .or_else(|| self.mismatched_outputs.first().copied())
    }

    /// A finding: anything but `match` and `unsupported`.
    pub fn is_bug(&self) -> bool {
        self.kind.is_finding()
    }

    /// `crash(compile, SIGSEGV)`, `mismatch[xla]`, ... for one-line summaries.
    pub fn short(&self) -> String {
        let mut s = self.kind.name().to_string();
        match self.kind {
            VerdictKind::Crash => {
                let sig = self
                    .signal
                    .map(signal_name)
                    .unwrap_or_else(|| "exit".into());
                let st = self.stage.map(|s| s.name()).unwrap_or("?");
                s.push_str(&format!("({st}, {sig})"));
            }
            VerdictKind::Timeout | VerdictKind::Rejected => {
                if let Some(st) = self.stage {
                    s.push_str(&format!("({st})"));
                }
            }
            _ => {}
        }
        if let Some(b) = &self.backend {
            s.push_str(&format!(" on {b}"));
        }
        if let Some(l) = self.label {
            s.push_str(&format!(" [{}]", l.name()));
        }
        s
    }
}

/// Everything besides the first outcomes that the classifier may use.
#[derive(Clone, Debug)]
pub struct Evidence<'a> {
    /// The oracle's backend name (`interp`).
    pub oracle: &'a str,
    pub tolerance: &'a Tolerance,
    /// Second runs of backends on the same module and inputs (the campaign re-runs XLA on a
    /// mismatch).
    pub reruns: &'a [(String, Outcome)],
    /// The voter's outcome when it was asked (only on mismatches, to keep campaigns cheap).
    pub voter: Option<&'a Outcome>,
    /// When the voter ran a copy of the module reduced to some outputs (so that ops elsewhere
    /// in the module it cannot run do not stop it): which output leaves its result holds.
    pub voter_outputs: Option<&'a [usize]>,
}

impl<'a> Evidence<'a> {
    pub fn new(tolerance: &'a Tolerance) -> Evidence<'a> {
        Evidence {
            oracle: ORACLE,
            tolerance,
            reruns: &[],
            voter: None,
            voter_outputs: None,
        }
    }
}

/// The leaves of a successful run.
pub fn leaves(r: &RunResult) -> Vec<&ArrayLiteral> {
    r.outputs.iter().flat_map(|l| l.leaves()).collect()
}

fn first_line(s: &str) -> String {
    let t = s.trim();
    // The line that says what went wrong, most specific first: a CHECK failure, an LLVM fatal
    // error, an uncaught C++ exception's `what()`, then any error line; Python's
    // "Fatal Python error: <signal>" only says which signal, so it comes last.
    let lines: Vec<&str> = t.lines().collect();
    let find = |pred: &dyn Fn(&str) -> bool| lines.iter().rev().find(|l| pred(l)).copied();
    let pick = (0..=4)
        .find_map(|rank| find(&|l| failure_line_rank(l) == Some(rank)))
        .or_else(|| {
            find(&|l| (l.contains("error") || l.contains("Error")) && !l.contains("Fatal Python"))
        })
        .or_else(|| lines.iter().find(|l| is_status_line(l)).copied())
        .or_else(|| find(&|l| l.contains("Fatal Python error")))
        .or_else(|| find(&|l| !l.trim().is_empty()))
        .unwrap_or("");
    let mut out: String = pick.trim().chars().take(400).collect();
    // XLA's pipeline says after which pass its verifier refused the module on a line of its
    // own ("Failed after simplification"): kept beside the error it explains.
    if let Some(after) = lines
        .iter()
        .map(|l| l.trim())
        .find(|l| l.starts_with("Failed after "))
    {
        if !out.contains(after) {
            out = format!("{out} ({after})");
        }
    }
    out
}

/// A line that starts with an absl status code (`INTERNAL: ...`, `INVALID_ARGUMENT: ...`): the
/// first line of the error XLA returned.
fn is_status_line(l: &str) -> bool {
    let l = l.trim_start();
    let Some((code, _)) = l.split_once(": ") else {
        return false;
    };
    code.len() >= 5 && code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
}

/// Classifies the outcomes of one module on several backends (`(backend name, outcome)`, the
/// oracle among them). An outcome of the voter (`stablehlo-ref`) in `outcomes` votes only.
pub fn classify(outcomes: &[(String, Outcome)], ev: &Evidence) -> Verdict {
    let voter_in_list = outcomes.iter().find(|(n, _)| n == VOTER).map(|(_, o)| o);
    let voter = ev.voter.or(voter_in_list);
    let runs: Vec<&(String, Outcome)> = outcomes.iter().filter(|(n, _)| n != VOTER).collect();
    let label_for = |name: &str| {
        if name == ev.oracle {
            Label::Oracle
        } else {
            Label::Xla
        }
    };

    for (name, o) in &runs {
        if let Outcome::Crash {
            stage,
            signal,
            stderr_tail,
        } = o
        {
            let mut v = Verdict::new(VerdictKind::Crash, Some(name), first_line(stderr_tail));
            v.stage = Some(*stage);
            v.signal = *signal;
            v.label = Some(label_for(name));
            return v;
        }
    }
    for (name, o) in &runs {
        if let Outcome::Timeout { stage } = o {
            let mut v = Verdict::new(
                VerdictKind::Timeout,
                Some(name),
                format!("timeout at {stage}"),
            );
            v.stage = Some(*stage);
            v.label = Some(label_for(name));
            return v;
        }
    }
    for (name, o) in &runs {
        if let Outcome::Rejected { stage, message } = o {
            let mut v = Verdict::new(VerdictKind::Rejected, Some(name), first_line(message));
            v.stage = Some(*stage);
            v.label = Some(label_for(name));
            return v;
        }
    }
    for (name, o) in &runs {
        let what = match o {
            Outcome::Unsupported { what } => what.clone(),
            Outcome::Unavailable { why } => format!("unavailable: {why}"),
            Outcome::HarnessError { message, .. } => format!("harness error: {message}"),
            _ => continue,
        };
        let mut v = Verdict::new(VerdictKind::Unsupported, Some(name), what);
        v.stage = o.stage();
        return v;
    }

    // Every run succeeded. A backend that disagrees with itself first.
    for (name, again) in ev.reruns {
        let Some((_, first)) = runs.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let differs = match (first, again) {
            (Outcome::Ok(a), Outcome::Ok(b)) => {
                let (la, lb) = (leaves(a), leaves(b));
                if la.len() != lb.len() {
                    Some((0..la.len().max(lb.len())).collect())
                } else {
                    let d: Vec<usize> = la
                        .iter()
                        .zip(lb.iter())
                        .enumerate()
                        .filter(|(_, (x, y))| x != y)
                        .map(|(i, _)| i)
                        .collect();
                    (!d.is_empty()).then_some(d)
                }
            }
            (a, b) => (a.kind() != b.kind()).then(Vec::new),
        };
        if let Some(outs) = differs {
            let mut v = Verdict::new(
                VerdictKind::Nondeterministic,
                Some(name),
                format!(
                    "a re-run of {name} gave a different result ({})",
                    again.kind()
                ),
            );
            v.mismatched_outputs = outs;
            v.label = Some(label_for(name));
            return v;
        }
    }

    let Some((_, Outcome::Ok(oracle))) = runs
        .iter()
        .find(|(n, _)| n == ev.oracle)
        .map(|x| (&x.0, &x.1))
    else {
        // No oracle in the list: nothing to compare against, everything ran.
        return Verdict::new(
            VerdictKind::Match,
            None,
            "every backend ran (no oracle to compare with)",
        );
    };
    let expected = leaves(oracle);
    let mut last = None;
    for (name, o) in &runs {
        if name == ev.oracle {
            continue;
        }
        let Outcome::Ok(r) = o else { continue };
        let actual = leaves(r);
        let cmp = compare_leaves(&expected, &actual, ev.tolerance);
        if cmp.is_match() {
            last = Some(cmp);
            continue;
        }
        let mut v = Verdict::new(
            VerdictKind::Mismatch,
            Some(name),
            cmp.summary().lines().next().unwrap_or("").to_string(),
        );
        v.mismatched_outputs = cmp.mismatched_outputs();
        let (label, vote) = vote(
            voter,
            ev.voter_outputs,
            &expected,
            &actual,
            &v.mismatched_outputs,
            cmp.structure.is_some(),
            ev.tolerance,
        );
        v.label = Some(label);
        v.vote = Some(vote);
        v.comparison = Some(cmp);
        return v;
    }
    let mut v = Verdict::new(
        VerdictKind::Match,
        None,
        "all backends agree with the oracle",
    );
    // Kept for error statistics (how close the match was).
    v.comparison = last;
    v
}

/// Why the voter (the StableHLO reference interpreter) cannot judge `module`, if it cannot:
/// it evaluates a float compare under `TOTALORDER` as the IEEE compare (measured on jaxlib
/// 0.10.2, every float type from f64 to f8e3m4, every direction: `-NaN LT 0.3125`, `-0 LT 0`
/// and `1 LT NaN` are false, NaN `EQ` itself too), so where a NaN or a signed zero meets such
/// a compare its vote would be noise.
pub fn voter_abstains(module: &hlo::Module) -> Option<String> {
    let word = |i: &hlo::Instruction, k: &str| match i.attr(k) {
        Some(hlo::Attr::Ident(s)) | Some(hlo::Attr::Str(s)) | Some(hlo::Attr::Raw(s)) => {
            Some(s.trim().to_string())
        }
        _ => None,
    };
    let c = module.computations.iter().find_map(|c| {
        c.instructions.iter().find(|i| {
            i.opcode == hlo::Opcode::Compare && word(i, "type").as_deref() == Some("TOTALORDER")
        })
    })?;
    Some(format!(
        "{} compares under TOTALORDER, which stablehlo-ref evaluates as the IEEE compare",
        c.name
    ))
}

/// The voter's label for a mismatch between `expected` (oracle) and `actual` (XLA) on `outs`.
fn vote(
    voter: Option<&Outcome>,
    voter_outputs: Option<&[usize]>,
    expected: &[&ArrayLiteral],
    actual: &[&ArrayLiteral],
    outs: &[usize],
    structural: bool,
    tol: &Tolerance,
) -> (Label, String) {
    let r = match voter {
        None => return (Label::Undecided, "not asked".into()),
        Some(Outcome::Ok(r)) => r,
        Some(Outcome::Unsupported { what }) => {
            return (Label::Undecided, format!("voter could not run: {what}"))
        }
        Some(o) => {
            return (
                Label::Undecided,
                format!("voter could not run: {}", o.kind()),
            )
        }
    };
    let v = leaves(r);
    if let Some(sel) = voter_outputs {
        // The voter's result holds only the leaves `sel` (in order).
        if v.len() != sel.len() || structural {
            return (
                Label::Undecided,
                "voter returned a different number of outputs".into(),
            );
        }
        let pick = |all: &[&ArrayLiteral]| -> Option<Vec<ArrayLiteral>> {
            sel.iter()
                .map(|&k| all.get(k).map(|a| (*a).clone()))
                .collect()
        };
        let (Some(e), Some(a)) = (pick(expected), pick(actual)) else {
            return (Label::Undecided, "voter outputs out of range".into());
        };
        let agrees = |other: &[ArrayLiteral]| {
            let o: Vec<&ArrayLiteral> = other.iter().collect();
            let c = compare_leaves(&o, &v, tol);
            sel.iter()
                .enumerate()
                .all(|(i, k)| !outs.contains(k) || c.outputs.get(i).is_some_and(|x| x.is_match()))
        };
        return match (agrees(&e), agrees(&a)) {
            (true, false) => (Label::Xla, "oracle".into()),
            (false, true) => (Label::Oracle, "xla".into()),
            (true, true) => (Label::Undecided, "both".into()),
            (false, false) => (Label::Undecided, "neither".into()),
        };
    }
    if v.len() != expected.len() && v.len() != actual.len() {
        return (
            Label::Undecided,
            "voter returned a different number of outputs".into(),
        );
    }
    let agrees = |other: &[&ArrayLiteral]| -> bool {
        if v.len() != other.len() {
            return false;
        }
        let c = compare_leaves(other, &v, tol);
        if structural {
            return c.is_match();
        }
        outs.iter()
            .all(|&k| c.outputs.get(k).is_some_and(|o| o.is_match()))
    };
    match (agrees(expected), agrees(actual)) {
        (true, false) => (Label::Xla, "oracle".into()),
        (false, true) => (Label::Oracle, "xla".into()),
        (true, true) => (Label::Undecided, "both".into()),
        (false, false) => (Label::Undecided, "neither".into()),
    }
}

/// `Stage` by name (the backend module only serializes it).
mod stage_serde {
    use engine::backend::Stage;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(s: &Option<Stage>, ser: S) -> Result<S::Ok, S::Error> {
        s.map(|s| s.name()).serialize(ser)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Option<Stage>, D::Error> {
        let s: Option<String> = Option::deserialize(de)?;
        Ok(s.and_then(|s| Stage::from_name(&s)))
    }
}

#[cfg(test)]
mod crash_message_tests {
    /// A `LOG(FATAL)` line names the crash, not Python's "Fatal Python error: Aborted" that
    /// follows it (seen: algsimp's HandleReverse on a map, jaxlib 0.10.2).
    #[test]
    fn a_fatal_log_line_is_the_crash_message() {
        let stderr = "F1201 15:18:18.505639   28074 hlo_instruction.cc:1615] Invalid binary instruction opcode map\n*** Check failure stack trace: ***\n    @     0x7fb423e40634  absl::log_internal::LogMessage::SendToLog()\nFatal Python error: Aborted\n\nCurrent thread 0x00007f (most recent call first):\n";
        let m = super::first_line(stderr);
        assert!(m.ends_with("Invalid binary instruction opcode map"), "{m}");
        let plain = "Fatal Python error: Aborted\n";
        assert_eq!(super::first_line(plain), "Fatal Python error: Aborted");
        assert_eq!(
            engine::backend::failure_line_rank("Fatal Python error: Aborted"),
            None
        );
    }

    /// A rejection by XLA's verifier between passes is named by its status line and the pass
    /// after which it came, not by the "Failed after ..." line alone (which every such
    /// rejection after that pass shares).
    #[test]
    fn a_verifier_rejection_is_named_by_its_status_line_and_pass() {
        let msg = "INTERNAL: during context [hlo verifier]: Mismatched tuple structure in original_value for instruction %while.1\nIn shape only: {{}}\nIn original_value only: {{0}, {1}}\n\nFailed after pipeline-start";
        let m = super::first_line(msg);
        assert!(
            m.starts_with("INTERNAL: during context [hlo verifier]: Mismatched tuple"),
            "{m}"
        );
        assert!(m.ends_with("(Failed after pipeline-start)"), "{m}");
        // An error line still comes first; a message of one line is itself.
        assert_eq!(
            super::first_line("UNKNOWN: x\n<unknown>:0: error: Failed to parse"),
            "<unknown>:0: error: Failed to parse"
        );
        assert_eq!(
            super::first_line("INTERNAL: Unsupported type: TUPLE"),
            "INTERNAL: Unsupported type: TUPLE"
        );
        assert!(!super::is_status_line(
            "See https://openxla.org/xla/errors/error_5 for more details."
        ));
    }
}

#[cfg(test)]
mod voter_tests {
    fn compare_module(attrs: &str) -> hlo::Module {
        let text = format!(
            "HloModule c\n\nENTRY main {{\n  x = f8e5m2[4] parameter(0)\n  y = f8e5m2[4] \
             parameter(1)\n  ROOT c = pred[4] compare(x, y), {attrs}\n}}\n"
        );
        hlo::parse::parse_module(&text).unwrap()
    }

    /// stablehlo-ref answers `-NaN LT 0.3125` under TOTALORDER with false (the IEEE answer),
    /// so it sits out every TOTALORDER compare, ordering directions included; a plain IEEE
    /// compare it evaluates as XLA does.
    #[test]
    fn the_voter_abstains_on_every_totalorder_compare_and_only_there() {
        for dir in ["LT", "LE", "GT", "GE", "EQ", "NE"] {
            let m = compare_module(&format!("direction={dir}, type=TOTALORDER"));
            assert!(super::voter_abstains(&m).is_some(), "{dir}");
            let ieee = compare_module(&format!("direction={dir}"));
            assert_eq!(super::voter_abstains(&ieee), None, "{dir}");
        }
    }
}

//! The disable-pass search: which passes, disabled with `xla_disable_hlo_passes`, make XLA
//! agree with the oracle again (or make a crash go away).
//!
//! The candidates are the passes that ran and changed the module (the dump's timeline). Every
//! single candidate is tried alone (a pass that avoids the divergence alone is a smallest set);
//! when none does, all of them are disabled together and the set is shrunk by delta debugging
//! (`ddmin`: subsets, then complements, then finer chunks) to a 1-minimal set. A pass whose
//! disabling avoids the divergence need not be the one that caused it: the bisector labels each
//! such pass by what its snapshots showed (`changed-result`, `masking`, `not-established`).
//! Finally one compile with the found set disabled and every pass dumped (`.+`) confirms that
//! the disable took effect: no dump file of a disabled pass may exist (jax can override the
//! list, see XLA-FACTS).

use engine::backend::{Backend, Outcome, RunOptions, StageTimeouts};
use hlo::Literal;
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

/// What [`search`] found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DisableSearch {
    /// What "avoids it" meant: `agrees with the oracle` or `no crash`.
    pub goal: String,
    /// The passes that ran and changed the module, in the order they first ran.
    pub candidates: Vec<String>,
    /// The smallest set found whose disabling avoids the divergence (a single pass when one
    /// does alone, else 1-minimal by delta debugging); empty when none was found.
    pub minimal: Vec<String>,
    /// Every candidate whose disabling alone avoids it.
    pub alone: Vec<String>,
    /// Disabling every candidate together avoids it (`None`: not tried, since a single pass
    /// does).
    pub all_avoid: Option<bool>,
    /// What the compile with every candidate disabled gave, when it did not avoid it.
    pub all_outcome: Option<String>,
    /// Each pass of `minimal` and `alone` with what the snapshots say of it (filled by the
    /// bisector).
    pub roles: Vec<PassRole>,
    /// The compile with `minimal` disabled and every pass dumped.
    pub confirmation: Option<Confirmation>,
    /// Compiles the search made.
    pub compiles: usize,
    /// The search stopped at its compile budget: `minimal` avoids it but may not be minimal,
    /// and `alone` may miss passes.
    pub truncated: bool,
}

/// What the snapshots say of a pass whose disabling avoids the divergence.
#[derive(Clone, Debug, Serialize)]
pub struct PassRole {
    pub pass: String,
    /// `changed-result` (its snapshot is the first that differs, or it is the pass the crash
    /// happened in), `masking` (its snapshots were evaluated and agree, or it ran to completion
    /// before the crash: it did not cause the divergence, it only enables it), or
    /// `not-established` (its snapshots could not all be evaluated).
    pub role: String,
    /// Why, in words (the snapshot step, ...).
    pub why: String,
}

/// The compile that confirms the disable took effect.
#[derive(Clone, Debug, Serialize)]
pub struct Confirmation {
    /// No dump file names a disabled pass, and the dump has per-pass files at all.
    pub took_effect: bool,
    /// Disabled passes that still have a dump file (the disable was overridden).
    pub still_dumped: Vec<String>,
    /// Per-pass files in that dump.
    pub files: usize,
    /// The outcome of that compile agrees with the search's (`ok` when avoided).
    pub outcome: String,
}

/// Tries disabled-pass sets on `backend` for `module_text` and `inputs`; `avoids` says whether
/// an outcome avoids the divergence. At most `budget` compiles (the confirmation not counted),
/// each under `limits` (disabling a pass can make XLA hang: without `copy-insertion` XLA CPU's
/// executable of a 3-element constant never returns; a timeout never avoids the divergence).
/// `prefer` (the snapshot culprit, the pass a crash happened in) is tried first and wins ties
/// among single passes.
#[allow(clippy::too_many_arguments)]
pub fn search(
    module_text: &str,
    inputs: &[Literal],
    backend: &dyn Backend,
    run: &RunOptions,
    candidates: Vec<String>,
    prefer: Option<&str>,
    goal: &str,
    avoids: &dyn Fn(&Outcome) -> bool,
    budget: usize,
    limits: &StageTimeouts,
) -> DisableSearch {
    let run = &RunOptions {
        timeouts: limits.clone(),
        ..run.clone()
    };
    let mut outcomes: HashMap<Vec<String>, String> = HashMap::new();
    let mut test = |set: &[String]| -> Option<bool> {
        let mut r = run.clone();
        r.disabled_passes.extend(set.iter().cloned());
        let o = backend.run(module_text, inputs, &r);
        let ok = avoids(&o);
        let said = match &o {
            _ if ok => "ok".to_string(),
            Outcome::Ok(_) => "XLA's result still differs".to_string(),
            o => o.to_string(),
        };
        outcomes.insert(set.to_vec(), said);
        Some(ok)
    };
    let found = ddmin_search(&candidates, prefer, budget, &mut test);
    let all_outcome = match found.all_avoid {
        Some(false) => outcomes.get(&candidates).map(|s| {
            s.lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(300)
                .collect::<String>()
        }),
        _ => None,
    };
    let mut s = DisableSearch {
        goal: goal.into(),
        candidates,
        minimal: found.minimal,
        alone: found.alone,
        all_avoid: found.all_avoid,
        all_outcome,
        roles: Vec::new(),
        confirmation: None,
        compiles: found.tests,
        truncated: found.truncated,
    };
    if !s.minimal.is_empty() {
        s.confirmation = Some(confirm(
            module_text,
            inputs,
            backend,
            run,
            &s.minimal,
            avoids,
        ));
    }
    s
}

/// Compiles with `passes` disabled and every pass dumped, and looks for dump files of them.
fn confirm(
    module_text: &str,
    inputs: &[Literal],
    backend: &dyn Backend,
    run: &RunOptions,
    passes: &[String],
    avoids: &dyn Fn(&Outcome) -> bool,
) -> Confirmation {
    let Ok(tmp) = tempfile::Builder::new()
        .prefix("hlo-diff-disable-")
        .tempdir()
    else {
        return Confirmation {
            took_effect: false,
            still_dumped: Vec::new(),
            files: 0,
            outcome: "no temporary directory for the dump".into(),
        };
    };
    let mut r = run.clone();
    r.disabled_passes.extend(passes.iter().cloned());
    r.dump_to = Some(tmp.path().to_path_buf());
    r.pass_re = Some(".+".into());
    let o = backend.run(module_text, inputs, &r);
    let outcome = if avoids(&o) {
        "ok".to_string()
    } else {
        o.to_string().lines().next().unwrap_or("").to_string()
    };
    let (files, still) = dumped_passes(tmp.path(), passes);
    Confirmation {
        took_effect: files > 0 && still.is_empty(),
        still_dumped: still,
        files,
        outcome,
    }
}

/// The number of per-pass files in the dump in `dir`, and which of `passes` have one.
pub fn dumped_passes(dir: &Path, passes: &[String]) -> (usize, Vec<String>) {
    let Ok(index) = hlo::dump::read_dump_dir(dir) else {
        return (0, Vec::new());
    };
    let steps: Vec<&hlo::dump::PassStep> = index
        .modules
        .iter()
        .flat_map(|m| m.timeline.iter())
        .collect();
    let still = passes
        .iter()
        .filter(|p| {
            steps.iter().any(|s| {
                if s.pass_internal {
                    s.pipeline == **p
                } else {
                    s.after == **p || s.before == **p || s.pipeline == **p
                }
            })
        })
        .cloned()
        .collect();
    (steps.len(), still)
}

/// What [`ddmin_search`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Found {
    pub minimal: Vec<String>,
    pub alone: Vec<String>,
    pub all_avoid: Option<bool>,
    pub tests: usize,
    pub truncated: bool,
}

/// The search over sets of `candidates` with `test` (`true`: disabling the set avoids the
/// divergence; `None`: out of budget). Singles first (`prefer` first), then, when no single
/// pass avoids it, the whole set shrunk by ddmin. Results are cached: no set is tested twice.
pub fn ddmin_search(
    candidates: &[String],
    prefer: Option<&str>,
    budget: usize,
    test: &mut dyn FnMut(&[String]) -> Option<bool>,
) -> Found {
    let mut cache: HashMap<Vec<usize>, bool> = HashMap::new();
    let mut tests = 0usize;
    let mut truncated = false;
    // Tests the candidates at `idx` (sorted), through the cache and the budget.
    let mut run = |idx: &[usize], truncated: &mut bool| -> Option<bool> {
        let mut key = idx.to_vec();
        key.sort_unstable();
        if let Some(&b) = cache.get(&key) {
            return Some(b);
        }
        if tests >= budget {
            *truncated = true;
            return None;
        }
        tests += 1;
        let set: Vec<String> = key.iter().map(|&i| candidates[i].clone()).collect();
        let r = test(&set)?;
        cache.insert(key, r);
        Some(r)
    };
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    if let Some(p) = prefer.and_then(|p| candidates.iter().position(|c| c == p)) {
        order.retain(|&i| i != p);
        order.insert(0, p);
    }
    let mut alone = Vec::new();
    for &i in &order {
        match run(&[i], &mut truncated) {
            Some(true) => alone.push(i),
            Some(false) => {}
            None => break,
        }
    }
    let mut found = Found {
        alone: alone.iter().map(|&i| candidates[i].clone()).collect(),
        ..Found::default()
    };
    if let Some(&first) = alone.first() {
        found.minimal = vec![candidates[first].clone()];
    }
    let all: Vec<usize> = (0..candidates.len()).collect();
    if candidates.len() == 1 {
        found.all_avoid = Some(!alone.is_empty());
    } else if alone.is_empty() {
        // Only needed when no single pass avoids it (a single is already a smallest set).
        found.all_avoid = run(&all, &mut truncated);
    }
    if found.minimal.is_empty() && found.all_avoid == Some(true) {
        let mut c = all;
        let mut n = 2usize;
        'outer: while c.len() >= 2 {
            let chunks: Vec<Vec<usize>> = split(&c, n);
            for ch in &chunks {
                match run(ch, &mut truncated) {
                    Some(true) => {
                        c = ch.clone();
                        n = 2;
                        continue 'outer;
                    }
                    Some(false) => {}
                    None => break 'outer,
                }
            }
            if chunks.len() > 2 {
                for ch in &chunks {
                    let rest: Vec<usize> = c.iter().copied().filter(|i| !ch.contains(i)).collect();
                    match run(&rest, &mut truncated) {
                        Some(true) => {
                            c = rest;
                            n = (n - 1).max(2);
                            continue 'outer;
                        }
                        Some(false) => {}
                        None => break 'outer,
                    }
                }
            }
            if n >= c.len() {
                break;
            }
            n = (n * 2).min(c.len());
        }
        found.minimal = c.iter().map(|&i| candidates[i].clone()).collect();
    }
    found.tests = tests;
    found.truncated = truncated;
    found
}

/// `c` in `n` chunks of nearly equal length.
fn split(c: &[usize], n: usize) -> Vec<Vec<usize>> {
    let n = n.min(c.len()).max(1);
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for k in 0..n {
        let end = start + (c.len() - start) / (n - k);
        out.push(c[start..end].to_vec());
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("p{i}")).collect()
    }

    /// A divergence avoided only when p3 and p7 are both disabled: no single pass avoids it,
    /// ddmin finds exactly {p3, p7} and tests no set twice.
    #[test]
    fn ddmin_finds_a_pair_no_single_pass_avoids() {
        let c = names(10);
        let mut seen = std::collections::HashSet::new();
        let mut test = |s: &[String]| {
            assert!(seen.insert(s.to_vec()), "tested twice: {s:?}");
            Some(s.contains(&"p3".to_string()) && s.contains(&"p7".to_string()))
        };
        let f = ddmin_search(&c, None, 200, &mut test);
        assert_eq!(f.minimal, vec!["p3", "p7"]);
        assert!(f.alone.is_empty());
        assert_eq!(f.all_avoid, Some(true));
        assert!(!f.truncated);
    }

    /// Two passes each avoid it alone (the culprit and a masking one): both are listed, and the
    /// preferred one is the minimal set.
    #[test]
    fn singles_are_all_listed_and_the_preferred_one_wins() {
        let c = names(6);
        let mut test = |s: &[String]| Some(s.iter().any(|p| p == "p1" || p == "p4"));
        let f = ddmin_search(&c, Some("p4"), 200, &mut test);
        assert_eq!(f.minimal, vec!["p4"]);
        assert_eq!(f.alone, vec!["p4", "p1"]);
    }

    /// Nothing avoids it: no minimal set; the budget stops the search and says so.
    #[test]
    fn nothing_avoids_it_and_the_budget_is_kept() {
        let c = names(8);
        let mut test = |_: &[String]| Some(false);
        let f = ddmin_search(&c, None, 200, &mut test);
        assert!(f.minimal.is_empty());
        assert_eq!(f.all_avoid, Some(false));
        assert_eq!(f.tests, 9);
        let mut calls = 0;
        let mut test = |_: &[String]| {
            calls += 1;
            Some(false)
        };
        let f = ddmin_search(&c, None, 3, &mut test);
        assert_eq!(calls, 3);
        assert!(f.truncated);
    }
}

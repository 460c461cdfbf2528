//! Intermittent results: the same module run again in fresh worker processes, each with a
//! fresh compile, and each run judged against the oracle (some XLA bugs show in only a few
//! percent of processes). Used by `hlo-diff run --repeat N` and `hlo-diff triage --repeat N`.

use engine::backend::{Backend, Outcome, RunOptions};
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use engine::{ORACLE, VOTER};
use hlo::Literal;
use judge::compare::Tolerance;
use judge::{Judge, Trial};

/// What `--repeat N` saw on one backend.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Repeats {
    pub backend: String,
    pub runs: usize,
    /// Runs whose verdict against the oracle was not a match.
    pub disagree_with_oracle: usize,
    /// Runs whose outputs were not bitwise the first run's (or whose outcome kind differed).
    pub differ_from_first: usize,
    /// Outcome kinds of the runs (`ok`, `crash`, ...), counted.
    pub outcomes: std::collections::BTreeMap<String, usize>,
}

/// Runs `text` `n` times on fresh processes of the backend `name` and judges each run.
#[allow(clippy::too_many_arguments)]
pub fn repeat_runs(
    name: &str,
    n: usize,
    python: Option<std::path::PathBuf>,
    module: &hlo::Module,
    text: &str,
    inputs: &[Literal],
    oracle: &Outcome,
    first: &Outcome,
    opts: &RunOptions,
    tol: &Tolerance,
) -> Repeats {
    let mut rep = Repeats {
        backend: name.to_string(),
        runs: n,
        ..Repeats::default()
    };
    for _ in 0..n {
        let cfg = WorkerConfig::new(Platform::Cpu)
            .with_python(python.clone())
            .with_workers(1);
        // A new backend is a new worker process: nothing compiled or cached survives.
        let Some(b) = WorkerBackend::by_name(name, cfg) else {
            break;
        };
        let o = b.run(
            text,
            inputs,
            &RunOptions {
                fresh_compile: true,
                ..opts.clone()
            },
        );
        *rep.outcomes.entry(o.kind().to_string()).or_insert(0) += 1;
        let same = match (first, &o) {
            (Outcome::Ok(a), Outcome::Ok(b)) => a.outputs == b.outputs,
            (a, b) => a.kind() == b.kind(),
        };
        rep.differ_from_first += usize::from(!same);
        let outcomes = vec![(ORACLE.to_string(), oracle.clone()), (name.to_string(), o)];
        let v = Judge::offline()
            .with_policy(judge::Policy::VERDICT)
            .judge(&Trial {
                module,
                text: Some(text),
                inputs,
                outcomes: &outcomes,
                reruns: &[],
                tolerance: tol,
            })
            .verdict;
        rep.disagree_with_oracle += usize::from(!v.kind.agrees());
    }
    rep
}

/// [`repeat_runs`] for every XLA backend of `outcomes` (the oracle's outcome among them; none
/// without it).
#[allow(clippy::too_many_arguments)]
pub fn repeat_all(
    runs: usize,
    python: Option<std::path::PathBuf>,
    module: &hlo::Module,
    text: &str,
    inputs: &[Literal],
    outcomes: &[(String, Outcome)],
    opts: &RunOptions,
    tol: &Tolerance,
) -> Vec<Repeats> {
    let Some(oracle) = outcomes.iter().find(|(n, _)| n == ORACLE).map(|(_, o)| o) else {
        return Vec::new();
    };
    outcomes
        .iter()
        .filter(|(n, _)| n != ORACLE && n != VOTER)
        .map(|(name, first)| {
            repeat_runs(
                name,
                runs,
                python.clone(),
                module,
                text,
                inputs,
                oracle,
                first,
                opts,
                tol,
            )
        })
        .collect()
}

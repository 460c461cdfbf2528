//! The backends of a campaign (or any command that runs XLA): the oracle, the XLA backends by
//! name, and the voter.

use crate::backend::{Backend, Outcome, RunOptions};
use crate::interp_backend::InterpBackend;
use crate::worker::{WorkerBackend, WorkerConfig};
use crate::ORACLE;
use std::path::PathBuf;

/// Why the backends could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The backend list is wrong (exit 2).
    #[error("{0}")]
    Usage(String),
    /// A backend cannot run here (exit 3).
    #[error("{0}")]
    Infrastructure(String),
}

/// The backends of a campaign.
pub struct Engines {
    pub oracle: InterpBackend,
    pub xla: Vec<WorkerBackend>,
    pub voter: Option<WorkerBackend>,
}

impl Engines {
    /// Builds the backends named in `names` (the oracle is always `interp`).
    pub fn new(
        names: &[String],
        jobs: usize,
        python: Option<PathBuf>,
        voter: bool,
    ) -> Result<Engines, EngineError> {
        let mut xla = Vec::new();
        let mut want_voter = voter;
        if !names.iter().any(|n| n == ORACLE) {
            return Err(EngineError::Usage(format!(
                "--backends must include the oracle `{ORACLE}`"
            )));
        }
        for n in names {
            match n.as_str() {
                "interp" => {}
                "stablehlo-ref" => want_voter = true,
                other => {
                    let cfg = WorkerConfig::new(crate::worker::Platform::Cpu)
                        .with_python(python.clone())
                        .with_workers(jobs);
                    match WorkerBackend::by_name(other, cfg) {
                        Some(b) => xla.push(b),
                        None => {
                            return Err(EngineError::Usage(format!(
                                "unknown backend `{other}` (known: interp, xla-cpu, xla-gpu, stablehlo-ref, pjrt)"
                            )))
                        }
                    }
                }
            }
        }
        if xla.is_empty() {
            return Err(EngineError::Usage(
                "--backends needs at least one XLA backend (xla-cpu, xla-gpu, pjrt)".into(),
            ));
        }
        let voter = if want_voter {
            Some(match xla.iter().find(|b| b.name() == "xla-cpu") {
                Some(cpu) => WorkerBackend::stablehlo_ref_on(cpu),
                None => WorkerBackend::stablehlo_ref(
                    WorkerConfig::new(crate::worker::Platform::Cpu)
                        .with_python(python)
                        .with_workers(1),
                ),
            })
        } else {
            None
        };
        Ok(Engines {
            oracle: InterpBackend::new(),
            xla,
            voter,
        })
    }

    /// Starts `n` workers of every XLA backend at once (a worker's start costs about a second:
    /// paid before a campaign's clock starts rather than inside it), then has the voter run
    /// once in each (its first run in a process registers the MLIR dialects, about 35 ms).
    pub fn warm_up(&self, n: usize) {
        const TRIVIAL: &str =
            "HloModule warm_up\n\nENTRY %main () -> f32[] {\n  ROOT %c = f32[] constant(0)\n}\n";
        let opts = RunOptions::default();
        let run_each = |backends: Vec<&WorkerBackend>| {
            std::thread::scope(|s| {
                for b in backends {
                    for _ in 0..n {
                        let opts = &opts;
                        s.spawn(move || b.run(TRIVIAL, &[], opts));
                    }
                }
            })
        };
        run_each(self.xla.iter().collect());
        run_each(self.voter.iter().collect());
    }

    /// Starts a worker of every XLA backend, failing with the install hint when one cannot run.
    pub fn check_available(&self) -> Result<serde_json::Value, EngineError> {
        let mut info = serde_json::Map::new();
        for b in &self.xla {
            match b.info() {
                Ok(v) => {
                    info.insert(b.name().to_string(), v);
                }
                Err(Outcome::Unavailable { why }) => {
                    return Err(EngineError::Infrastructure(format!("{}: {why}", b.name())))
                }
                Err(o) => return Err(EngineError::Infrastructure(format!("{}: {o}", b.name()))),
            }
        }
        Ok(serde_json::Value::Object(info))
    }
}

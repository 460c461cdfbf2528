//! The `interp` backend: hlo-diff's own reference interpreter (the oracle) behind the
//! [`Backend`] trait.
//!
//! `run` parses the text with `hlo`'s parser and evaluates it with [`interp::evaluate_with`];
//! callers that already hold the module use [`InterpBackend::run_module`] and skip the parse.
//!
//! Error mapping:
//! - parse error -> `Rejected { stage: parse }`;
//! - inputs that do not fit the entry parameters (count or shape) -> `HarnessError`;
//! - `EvalError::Unsupported` -> `Unsupported`; `EvalError::Budget` -> `Unsupported`
//!   (the oracle's own limit, not the module's fault);
//! - `EvalError::Invalid` -> `Rejected { stage: execute }` (the oracle refuses the module);
//! - `EvalError::Internal` (a caught panic) -> `Crash { stage: execute, signal: None }`: a bug
//!   of the oracle, which the classifier labels `oracle`.

use crate::backend::{Backend, Outcome, RunOptions, RunResult, Stage, Timings};
use hlo::{Literal, Module, Shape};
use interp::{EvalError, EvalOptions};
use std::time::Instant;

/// The oracle as a backend.
#[derive(Clone, Debug, Default)]
pub struct InterpBackend {
    pub options: EvalOptions,
}

fn fits(shape: &Shape, lit: &Literal) -> bool {
    match (shape, lit) {
        (Shape::Array(s), Literal::Array(a)) => s.ty == a.ty && s.dims == a.dims,
        (Shape::Tuple(ss), Literal::Tuple(ls)) => {
            ss.len() == ls.len() && ss.iter().zip(ls).all(|(s, l)| fits(s, l))
        }
        (Shape::Token, Literal::Token) => true,
        _ => false,
    }
}

impl InterpBackend {
    pub fn new() -> InterpBackend {
        InterpBackend::default()
    }

    /// The same oracle evaluating under the implementation choices `variant`.
    pub fn with_variant(&self, variant: interp::variant::Variant) -> InterpBackend {
        InterpBackend {
            options: interp::EvalOptions {
                variant,
                ..self.options.clone()
            },
        }
    }

    /// Evaluates an already parsed module.
    pub fn run_module(&self, module: &Module, inputs: &[Literal]) -> Outcome {
        if module.computations.is_empty() || module.entry >= module.computations.len() {
            return Outcome::Rejected {
                stage: Stage::Execute,
                message: "module has no entry computation".into(),
            };
        }
        let params = module.entry_computation().parameter_shapes();
        if params.len() != inputs.len() {
            return Outcome::HarnessError {
                stage: Some(Stage::Execute),
                message: format!(
                    "the entry computation takes {} parameters, {} inputs given",
                    params.len(),
                    inputs.len()
                ),
            };
        }
        for (k, (s, l)) in params.iter().zip(inputs).enumerate() {
            if !fits(&s.without_layout(), l) {
                return Outcome::HarnessError {
                    stage: Some(Stage::Execute),
                    message: format!("input {k} does not fit parameter {k}"),
                };
            }
        }
        let t = Instant::now();
        let r = interp::evaluate_with(module, inputs, &self.options);
        let execute_ms = t.elapsed().as_secs_f64() * 1e3;
        match r {
            Ok(lit) => Outcome::Ok(RunResult {
                outputs: lit
                    .leaves()
                    .into_iter()
                    .cloned()
                    .map(Literal::Array)
                    .collect(),
                result_shape: Some(lit.shape()),
                timings: Timings {
                    execute_ms,
                    ..Timings::default()
                },
                optimized_hlo: None,
                before_optimizations_hlo: None,
                dump_dir: None,
            }),
            Err(EvalError::Unsupported { what }) => Outcome::Unsupported { what },
            Err(EvalError::Budget { what }) => Outcome::Unsupported {
                what: format!("oracle budget exceeded: {what}"),
            },
            Err(EvalError::Invalid { instr, why }) => Outcome::Rejected {
                stage: Stage::Execute,
                message: if instr.is_empty() {
                    why
                } else {
                    format!("{instr}: {why}")
                },
            },
            Err(EvalError::Internal { why }) => Outcome::Crash {
                stage: Stage::Execute,
                signal: None,
                stderr_tail: format!("internal interpreter error: {why}"),
            },
        }
    }
}

impl Backend for InterpBackend {
    fn name(&self) -> &str {
        "interp"
    }

    fn run(&self, module_text: &str, inputs: &[Literal], _opts: &RunOptions) -> Outcome {
        let t = Instant::now();
        let module = match hlo::parse::parse_module(module_text) {
            Ok(m) => m,
            Err(e) => {
                return Outcome::Rejected {
                    stage: Stage::Parse,
                    message: e.to_string(),
                }
            }
        };
        let parse_ms = t.elapsed().as_secs_f64() * 1e3;
        match self.run_module(&module, inputs) {
            Outcome::Ok(mut r) => {
                r.timings.parse_ms = parse_ms;
                Outcome::Ok(r)
            }
            other => other,
        }
    }
}

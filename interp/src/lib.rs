//! `interp`: hlo-diff's reference HLO interpreter (the oracle).
//!
//! It evaluates an [`hlo::Module`] on [`hlo::Literal`] arguments with XLA's semantics
//! (HloEvaluator's edge cases: integer division by zero, shifts past the width, saturating
//! float-to-int conversion, clamped dynamic indices, NaN-propagating min/max, total-order compare,
//! stable sort, reduce-precision). Values are typed buffers (one `Vec` per element type, see
//! [`value::Buffer`]); each op dispatches on the element type once and then runs a tight loop.
//!
//! Errors separate what the program asked for and we cannot do ([`EvalError::Unsupported`]),
//! resource limits ([`EvalError::Budget`]), modules that are ill-formed at run time
//! ([`EvalError::Invalid`]) and bugs of the interpreter itself ([`EvalError::Internal`]).
//! See `OPS.md` for the op table and `KNOWN_DIFFERENCES.md` for where we differ from XLA CPU.

pub(crate) mod annex_g;
mod attrs;
mod control;
mod convert;
mod dot;
mod elementwise;
pub mod enclose;
mod eval;
mod fft;
pub mod host;
mod linalg;
pub mod onednn;
mod reduce;
pub use reduce::simple_binop;
mod rng;
mod scalar_prog;
mod shape_ops;
mod sort;
pub mod value;
pub mod variant;

use hlo::{Literal, Module, Opcode};

/// Why an evaluation produced no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// The module uses an op, custom-call target, attribute form or element type the interpreter
    /// does not implement.
    #[error("unsupported: {what}")]
    Unsupported { what: String },
    /// A limit of [`EvalOptions`] was exceeded (steps or bytes).
    #[error("budget exceeded: {what}")]
    Budget { what: String },
    /// The module is ill-formed in a way found while running it (wrong operand shapes, missing
    /// attributes, wrong argument count, ...).
    #[error("invalid module at {instr}: {why}")]
    Invalid { instr: String, why: String },
    /// A bug of the interpreter (a caught panic): never the program's fault.
    #[error("internal interpreter error: {why}")]
    Internal { why: String },
}

/// The oracle's default memory budget ([`EvalOptions::max_bytes`]): 8 GiB. What hlo-diff
/// reads or generates as a module's inputs is held to it too (an input the oracle could not
/// hold is refused before it is allocated).
pub const DEFAULT_MAX_BYTES: u64 = 8 << 30;

/// The opcodes the oracle does not run (`EvalError::Unsupported`; `OPS.md` says why): every
/// other opcode has a step in `eval.rs`, and a row in the semantics table
/// (`hlo::semantics`, checked by `tests/semantics_table.rs`).
pub const UNSUPPORTED_OPCODES: &[Opcode] = &[
    Opcode::AllGather,
    Opcode::AllGatherStart,
    Opcode::AllGatherDone,
    Opcode::AllReduce,
    Opcode::AllReduceStart,
    Opcode::AllReduceDone,
    Opcode::AllToAll,
    Opcode::CollectiveBroadcast,
    Opcode::CollectivePermute,
    Opcode::CollectivePermuteStart,
    Opcode::CollectivePermuteDone,
    Opcode::CollectiveReduce,
    Opcode::ReduceScatter,
    Opcode::RaggedAllToAll,
    Opcode::Send,
    Opcode::SendDone,
    Opcode::Recv,
    Opcode::RecvDone,
    Opcode::Infeed,
    Opcode::Outfeed,
    Opcode::AsyncStart,
    Opcode::AsyncUpdate,
    Opcode::AsyncDone,
    Opcode::CopyStart,
    Opcode::CopyDone,
    Opcode::Rng,
    Opcode::RngGetAndUpdateState,
    Opcode::StochasticConvert,
    Opcode::BatchNormTraining,
    Opcode::BatchNormInference,
    Opcode::BatchNormGrad,
    Opcode::RaggedDot,
    Opcode::ScaledDot,
    Opcode::Shuffle,
];

/// Limits that turn a runaway evaluation into [`EvalError::Budget`].
#[derive(Debug, Clone, PartialEq)]
pub struct EvalOptions {
    /// Instructions evaluated, counting those inside called computations (while bodies, reducers,
    /// comparators applied per element), each one step and one more per 8 bytes it makes.
    pub max_steps: u64,
    /// Bytes of live values (and of any one value being made).
    pub max_bytes: u64,
    /// Implementation choices to make differently from the default evaluation (NaN signs,
    /// last bits of approximated functions): see [`variant`].
    pub variant: variant::Variant,
    /// The host whose XLA CPU results the default evaluation imitates where they depend on the
    /// CPU's features (`None`: the host the oracle runs on, [`host::HostCpu::get`]).
    pub host: Option<host::HostCpu>,
    /// An evaluation still running at this instant ends as [`EvalError::Budget`] (the caller's
    /// clock: a timed campaign's end). Checked every [`DEADLINE_CHECK_STEPS`] steps.
    pub deadline: Option<std::time::Instant>,
}

/// How many steps an evaluation takes between two looks at [`EvalOptions::deadline`].
pub const DEADLINE_CHECK_STEPS: u64 = 1 << 16;

impl EvalOptions {
    /// The host this evaluation imitates: [`EvalOptions::host`], else the one it runs on.
    pub fn host(&self) -> host::HostCpu {
        self.host.unwrap_or_else(host::HostCpu::get)
    }

    /// How `convert` narrows to f16 in this evaluation: the variant's choice, else the host's.
    pub fn narrowing(&self) -> variant::Narrowing {
        self.variant
            .narrowing
            .unwrap_or_else(|| self.host().narrowing())
    }
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            max_steps: 200_000_000,
            max_bytes: DEFAULT_MAX_BYTES,
            variant: variant::Variant::default(),
            host: None,
            deadline: None,
        }
    }
}

/// Evaluates the entry computation of `module` on `args` with default limits.
pub fn evaluate(module: &Module, args: &[Literal]) -> Result<Literal, EvalError> {
    evaluate_with(module, args, &EvalOptions::default())
}

/// Evaluates the entry computation of `module` on `args`.
pub fn evaluate_with(
    module: &Module,
    args: &[Literal],
    opts: &EvalOptions,
) -> Result<Literal, EvalError> {
    let run = || -> Result<Literal, EvalError> {
        let vals = args
            .iter()
            .map(value::Value::from_literal)
            .collect::<Result<Vec<_>, _>>()?;
        let out = eval::run_entry(module, vals, opts)?;
        Ok(out.to_literal())
    };
    let caught = if opts.variant.flush_denormals {
        variant::with_flush_denormals(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
        })
    } else {
        Ok(std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)))
    };
    let caught = match caught {
        Ok(c) => c,
        Err(e) => return Err(e),
    };
    match caught {
        Ok(r) => r,
        Err(p) => {
            let why = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(EvalError::Internal { why })
        }
    }
}

pub(crate) type Result<T, E = EvalError> = std::result::Result<T, E>;

/// An [`EvalError::Invalid`] whose instruction name the evaluation loop fills in.
pub(crate) fn invalid(why: impl Into<String>) -> EvalError {
    EvalError::Invalid {
        instr: String::new(),
        why: why.into(),
    }
}

pub(crate) fn unsupported(what: impl Into<String>) -> EvalError {
    EvalError::Unsupported { what: what.into() }
}

//! The generated programs of a module index and their input sets.

#[allow(unused_imports)]
use super::*;
#[allow(unused_imports)]
use engine::backend::{Backend, Outcome, RunOptions, RunResult, StageTimeouts};
#[allow(unused_imports)]
use engine::engines::Engines;
#[allow(unused_imports)]
use findings::store::{CampaignState, CampaignStats, NewFinding, Recorded, Signature, Store};
#[allow(unused_imports)]
use findings::timings::ModuleTimings;
#[allow(unused_imports)]
use hlo::{Literal, Module};
#[allow(unused_imports)]
use judge::classify::{Label, Verdict, VerdictKind, ORACLE};
#[allow(unused_imports)]
use judge::compare::Tolerance;
#[allow(unused_imports)]
use serde_json::json;
#[allow(unused_imports)]
use std::collections::BTreeMap;
#[allow(unused_imports)]
use std::io::IsTerminal;
#[allow(unused_imports)]
use std::path::{Path, PathBuf};
#[allow(unused_imports)]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
#[allow(unused_imports)]
use std::sync::{Arc, Mutex, OnceLock};
#[allow(unused_imports)]
use std::time::{Duration, Instant};

/// One generated program with its inputs.
pub struct Program {
    pub seed: u64,
    pub module: Module,
    pub inputs: Vec<Literal>,
}

/// The programs of module index `g`.
pub fn programs_for(seed: u64, g: u64, pack: usize, cfg: &generators::Config) -> Vec<Program> {
    let mseed = mix(seed, g);
    (0..pack.max(1))
        .map(|j| {
            let pseed = mix(mseed, j as u64);
            let module = generators::generate_from_seed(pseed, cfg);
            let inputs = generators::generate_inputs_from_seed(&module, pseed, cfg);
            Program {
                seed: pseed,
                module,
                inputs,
            }
        })
        .collect()
}

/// Input set `set` of a program: set 0 is the program's own inputs, set `r > 0` is drawn from
/// `mix(program seed, r)`, so every set is as reproducible as the program.
pub fn inputs_for(p: &Program, set: u64, cfg: &generators::Config) -> Vec<Literal> {
    match set {
        0 => p.inputs.clone(),
        r => generators::generate_inputs_from_seed(&p.module, mix(p.seed, r), cfg),
    }
}

//! The generated programs of a module index and their input sets.

use super::*;
use hlo::{Literal, Module};

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

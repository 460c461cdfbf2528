//! The generated programs of a module index and their input sets.

use super::*;
use hlo::{Literal, Module};

/// One generated program with its inputs.
pub struct Program {
    pub seed: u64,
    pub module: Module,
    pub inputs: Vec<Literal>,
    /// The configuration the program was generated with (its own, under swarm); its later
    /// input sets are drawn with it, and every finding of it records it
    /// (`meta.generator_config`), so `generators::generate_program(seed, &config)` gives the
    /// program back.
    pub config: generators::Config,
    /// For a program made by mutating a real module (`generators::generate_program`): the
    /// seed module and the mutations, recorded with its findings (`meta.mutated_from`).
    pub origin: Option<generators::MutationOrigin>,
}

/// The configuration program seed `pseed` is generated with: `base` itself, or under `swarm`
/// the program's own draw within `base` (`generators::program_config`).
pub fn program_config(base: &generators::Config, pseed: u64, swarm: bool) -> generators::Config {
    if swarm {
        generators::program_config(base, pseed)
    } else {
        base.clone()
    }
}

/// The programs of module index `g`.
pub fn programs_for(
    seed: u64,
    g: u64,
    pack: usize,
    cfg: &generators::Config,
    swarm: bool,
) -> Vec<Program> {
    let mseed = mix(seed, g);
    (0..pack.max(1))
        .map(|j| {
            let pseed = mix(mseed, j as u64);
            let config = program_config(cfg, pseed, swarm);
            let (module, origin) = generators::generate_program(pseed, &config);
            let inputs = generators::generate_inputs_from_seed(&module, pseed, &config);
            Program {
                seed: pseed,
                module,
                inputs,
                config,
                origin,
            }
        })
        .collect()
}

/// Input set `set` of a program: set 0 is the program's own inputs, set `r > 0` is drawn from
/// `mix(program seed, r)` under the program's configuration, so every set is as reproducible
/// as the program.
pub fn inputs_for(p: &Program, set: u64) -> Vec<Literal> {
    match set {
        0 => p.inputs.clone(),
        r => generators::generate_inputs_from_seed(&p.module, mix(p.seed, r), &p.config),
    }
}

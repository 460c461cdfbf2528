//! Generators of random, valid HLO modules (in the manner of wasm-smith) and of their inputs.
//!
//! - [`generate`] builds a module from fuzzer bytes ([`arbitrary::Unstructured`]); every module
//!   is valid by construction and generation never fails: when the bytes run out every choice
//!   takes its first option.
//! - [`generate_from_seed`] does the same from a `u64` seed (the seed expands into a byte stream).
//! - [`generate_inputs`] makes arguments for a module's entry parameters, with boundary values
//!   and mostly-in-range indices.
//! - [`pack`] merges several generated modules into one so that one compile tests many programs.
//! - [`opcode_histogram`] counts opcodes over many seeds (coverage).
//! - With the `proptest` feature, [`strategy::arb_module`] is a proptest strategy.
//!
//! The same bytes (or seed) and [`Config`] give the same module, byte for byte.

pub mod config;
mod gen;
pub mod inputs;
pub mod mutate;
mod ops;
pub mod pack;
mod realistic;
pub mod rng;
#[cfg(feature = "proptest")]
pub mod strategy;
pub mod structure;

pub use config::{Config, OpFamily, CPU_NO_DOT_TYPES, CPU_TYPES, DEFAULT_TYPES};
pub use inputs::{generate_inputs, generate_inputs_from_seed, try_generate_inputs_from_seed};
pub use mutate::MutationOrigin;
pub use pack::pack;

use arbitrary::Unstructured;
use hlo::{Module, Opcode};
use std::collections::BTreeMap;

/// How many bytes [`generate_from_seed`] expands a seed into.
pub const SEED_BYTES: usize = 4096;

/// A module built from fuzzer bytes. Always `Ok` in practice: running out of bytes only makes
/// the remaining choices take their defaults.
pub fn generate(u: &mut Unstructured, cfg: &Config) -> arbitrary::Result<Module> {
    Ok(gen::Gen::new(u, cfg).module("hlo_diff_gen"))
}

/// The module for a seed: the seed is expanded into [`SEED_BYTES`] bytes with splitmix64.
pub fn generate_from_seed(seed: u64, cfg: &Config) -> Module {
    let bytes = rng::seed_bytes(seed, SEED_BYTES);
    let mut u = Unstructured::new(&bytes);
    let mut m = gen::Gen::new(&mut u, cfg).module("hlo_diff_gen");
    m.name = format!("gen_{seed}");
    m
}

/// How many instructions of each opcode the modules for seeds `seed_start..seed_start+count`
/// contain, over all their computations.
pub fn opcode_histogram(seed_start: u64, count: u64, cfg: &Config) -> BTreeMap<Opcode, usize> {
    let mut h = BTreeMap::new();
    for s in seed_start..seed_start.saturating_add(count) {
        for (op, n) in generate_from_seed(s, cfg).opcode_histogram() {
            *h.entry(op).or_insert(0) += n;
        }
    }
    h
}

/// The swarm configuration for a seed: `Config::arbitrary` over the seed's byte stream.
pub fn swarm_config(seed: u64) -> Config {
    use arbitrary::Arbitrary;
    let bytes = rng::seed_bytes(seed ^ 0x5a5a_5a5a_5a5a_5a5a, 256);
    Config::arbitrary(&mut Unstructured::new(&bytes)).unwrap_or_default()
}

/// A program's own configuration for a seed, within `base` ([`Config::swarm_within`] over the
/// seed's byte stream): what a campaign generates each program with. The same seed and base
/// give the same configuration.
pub fn program_config(base: &Config, seed: u64) -> Config {
    let bytes = rng::seed_bytes(seed ^ 0x7377_6172_6d5f_7072, 256);
    base.swarm_within(&mut Unstructured::new(&bytes))
}

/// The module for a seed under its swarm configuration ([`swarm_config`]).
pub fn generate_swarm_from_seed(seed: u64) -> (Module, Config) {
    let cfg = swarm_config(seed);
    (generate_from_seed(seed, &cfg), cfg)
}

/// A campaign program for a seed: with [`Config::mutation_percent`] percent chance (drawn from
/// the seed) a real module mutated ([`mutate::mutate_from_seed`], with what it was made from),
/// else a synthesized one ([`generate_from_seed`]). The same seed and configuration give the
/// same module, byte for byte.
pub fn generate_program(seed: u64, cfg: &Config) -> (Module, Option<MutationOrigin>) {
    if cfg.mutation_percent > 0
        && rng::SplitMix64(seed ^ 0x6d69_7865_645f_7061).percent(cfg.mutation_percent)
    {
        if let Some((m, origin)) = mutate::mutate_from_seed(seed, cfg) {
            return (m, Some(origin));
        }
    }
    (generate_from_seed(seed, cfg), None)
}

//! proptest strategies (feature `proptest`).

use crate::{generate, Config};
use arbitrary::Unstructured;
use hlo::Module;
use proptest::prelude::*;

/// Modules for `cfg`, built from a byte vector: shrinking the bytes shrinks the module (fewer
/// bytes means more choices take their first, smallest option).
pub fn arb_module(cfg: Config) -> impl Strategy<Value = Module> {
    proptest::collection::vec(any::<u8>(), 0..4096).prop_map(move |bytes| {
        let mut u = Unstructured::new(&bytes);
        generate(&mut u, &cfg).expect("generation does not fail")
    })
}

/// A module with its arguments.
pub fn arb_module_with_inputs(cfg: Config) -> impl Strategy<Value = (Module, Vec<hlo::Literal>)> {
    (arb_module(cfg.clone()), any::<u64>()).prop_map(move |(m, seed)| {
        let inputs = crate::generate_inputs_from_seed(&m, seed, &cfg);
        (m, inputs)
    })
}

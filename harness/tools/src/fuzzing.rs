//! Library side of the `interp_eval` fuzz target: the oracle never panics and never calls a
//! valid module invalid. Kept here (not in `interp`) because it needs the generators.

use arbitrary::{Arbitrary, Unstructured};
use interp::{EvalError, EvalOptions};

/// Limits that keep one fuzz input fast.
pub fn fuzz_eval_options() -> EvalOptions {
    EvalOptions {
        max_steps: 2_000_000,
        max_bytes: 256 << 20,
        ..EvalOptions::default()
    }
}

/// Bytes -> a swarm configuration, a generated module and its inputs -> the oracle.
/// Panics when the oracle panics (`Internal`) or finds the generated (verified) module invalid.
pub fn interp_eval(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let cfg = generators::Config::arbitrary(&mut u).unwrap_or_default();
    let Ok(module) = generators::generate(&mut u, &cfg) else {
        return;
    };
    let inputs = generators::generate_inputs(&module, &mut u, &cfg);
    match interp::evaluate_with(&module, &inputs, &fuzz_eval_options()) {
        Ok(_) | Err(EvalError::Unsupported { .. }) | Err(EvalError::Budget { .. }) => {}
        Err(e @ (EvalError::Invalid { .. } | EvalError::Internal { .. })) => panic!(
            "oracle failed on a generated module: {e}\n{}",
            hlo::print::module_to_string(&module)
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fixed_inputs_evaluate_without_oracle_failures() {
        for seed in 0..64u64 {
            let bytes = generators::rng::seed_bytes(seed, 2048);
            super::interp_eval(&bytes);
        }
        super::interp_eval(&[]);
    }
}

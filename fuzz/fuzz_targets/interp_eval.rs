//! The oracle never panics: generated modules and inputs from the fuzzer's bytes are evaluated
//! under a step and memory budget; every outcome but a panic is fine.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tools::fuzzing::interp_eval(data);
});

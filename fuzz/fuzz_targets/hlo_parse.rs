//! Parser robustness: any bytes either fail to parse with an error, or parse to a module whose
//! printed text re-parses to the same module (print is a fixpoint after one round).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hlo::fuzzing::parse_round_trip(data);
});

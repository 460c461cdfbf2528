//! Literal file reader robustness: any bytes decode or fail with an error; what decodes
//! encodes and decodes to the same literals.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    findings::fuzzing::literal_file(data);
});

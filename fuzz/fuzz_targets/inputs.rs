//! Input-file reader robustness: any bytes (literal file, text lines, literal proto text or
//! binary, .npy, .npz) are read or refused with an error, within a memory budget; what is read
//! is self-consistent and fits to parameters without a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    findings::fuzzing::inputs(data);
});

//! Registry entry reader robustness: any bytes are an entry or an error (malformed TOML, a
//! matcher that constrains nothing); an accepted entry's matcher runs on a bucket.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    findings::fuzzing::registry(data);
});

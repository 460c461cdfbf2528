//! Library side of the `hlo_parse` fuzz target, kept here so tests can run it on fixed inputs.

use crate::parse::parse_module_bytes;
use crate::print::module_to_string;

/// Any bytes either fail to parse (with an error, never a panic), or parse to a module whose
/// printed text re-parses to an equal module and prints identically. Panics on a violation.
pub fn parse_round_trip(data: &[u8]) {
    let Ok(module) = parse_module_bytes(data) else {
        return;
    };
    let printed = module_to_string(&module);
    let reparsed = match crate::parse::parse_module(&printed) {
        Ok(m) => m,
        Err(e) => panic!("printed module does not re-parse: {e}\n--- printed ---\n{printed}"),
    };
    assert_eq!(
        module_to_string(&reparsed),
        printed,
        "printing is not a fixpoint"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junk_and_valid_inputs_hold_the_round_trip_property() {
        parse_round_trip(b"\xff\xfe garbage");
        parse_round_trip(b"HloModule m\nENTRY e { ROOT p = f32[2]{0} parameter(0) }");
        parse_round_trip(b"HloModule m\nENTRY e { ROOT c = f32[2] constant({1, nan}) }");
        parse_round_trip(b"HloModule m\nENTRY e {");
        parse_round_trip(include_bytes!("../../fuzz/seeds/hlo_parse/free_layout.hlo"));
    }
}

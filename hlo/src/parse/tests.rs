//! Unit tests of the parser: valid syntax XLA writes, and malformed input with line:col.

use super::*;
use crate::ir::{PaddingDim, SliceDim};
use crate::print::module_to_string;

fn parse_ok(text: &str) -> Module {
    match parse_module(text) {
        Ok(m) => m,
        Err(e) => panic!("parse failed:\n{e}\n--- text ---\n{text}"),
    }
}

fn parse_err(text: &str) -> ParseError {
    match parse_module(text) {
        Ok(_) => panic!("expected a parse error for:\n{text}"),
        Err(e) => e,
    }
}

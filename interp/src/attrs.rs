//! Attribute access that tolerates the forms a parser may give (typed or verbatim).

use crate::{invalid, Result};
use hlo::{Attr, Instruction};

/// Parses `{1,2,3}`, `1,2`, `{}` or a single integer.
fn parse_ints(s: &str) -> Option<Vec<i64>> {
    let t = s
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .trim();
    if t.is_empty() {
        return Some(Vec::new());
    }
    t.split(',').map(|x| x.trim().parse::<i64>().ok()).collect()
}

/// An integer list attribute; absent means empty.
pub fn ints(i: &Instruction, name: &str) -> Result<Vec<i64>> {
    Ok(match i.attr(name) {
        None => Vec::new(),
        Some(Attr::Ints(v)) => v.clone(),
        Some(Attr::Int(v)) => vec![*v],
        Some(Attr::Raw(s)) | Some(Attr::Ident(s)) | Some(Attr::Str(s)) => parse_ints(s)
            .ok_or_else(|| invalid(format!("attribute {name}={s} is not a list of integers")))?,
        Some(a) => {
            return Err(invalid(format!(
                "attribute {name} is not a list of integers: {a:?}"
            )))
        }
    })
}

/// A list of non-negative integers as `usize` (dimension numbers, sizes).
pub fn dims(i: &Instruction, name: &str) -> Result<Vec<usize>> {
    ints(i, name)?
        .into_iter()
        .map(|v| usize::try_from(v).map_err(|_| invalid(format!("{name} holds negative {v}"))))
        .collect()
}

/// An integer attribute, if present.
pub fn int(i: &Instruction, name: &str) -> Result<Option<i64>> {
    Ok(match i.attr(name) {
        None => None,
        Some(Attr::Int(v)) => Some(*v),
        Some(Attr::Ints(v)) if v.len() == 1 => Some(v[0]),
        Some(Attr::Raw(s)) | Some(Attr::Ident(s)) | Some(Attr::Str(s)) => Some(
            s.trim()
                .parse::<i64>()
                .map_err(|_| invalid(format!("attribute {name}={s} is not an integer")))?,
        ),
        Some(a) => {
            return Err(invalid(format!(
                "attribute {name} is not an integer: {a:?}"
            )))
        }
    })
}

pub fn req_int(i: &Instruction, name: &str) -> Result<i64> {
    int(i, name)?.ok_or_else(|| invalid(format!("missing attribute {name}")))
}

/// A word-valued attribute (`direction=LT`, `fft_type=FFT`, `custom_call_target="TopK"`).
pub fn word(i: &Instruction, name: &str) -> Option<String> {
    match i.attr(name)? {
        Attr::Ident(s) | Attr::Str(s) | Attr::Raw(s) => {
            Some(s.trim().trim_matches('"').to_string())
        }
        Attr::Int(v) => Some(v.to_string()),
        Attr::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A boolean attribute; absent means `default`.
pub fn flag(i: &Instruction, name: &str, default: bool) -> bool {
    match i.attr(name) {
        Some(Attr::Bool(b)) => *b,
        Some(Attr::Ident(s)) | Some(Attr::Raw(s)) | Some(Attr::Str(s)) => s.trim() == "true",
        Some(Attr::Int(v)) => *v != 0,
        _ => default,
    }
}

/// A called computation.
pub fn comp(i: &Instruction, name: &str) -> Result<usize> {
    i.comp(name)
        .ok_or_else(|| invalid(format!("missing called computation {name}")))
}

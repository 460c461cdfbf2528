//! Constant literals: scalars, nested `{...}` arrays checked against their shape, tuples,
//! `inf`/`nan`/`nan(0x..)`, `true`/`false`, complex `(re, im)`.

use super::cursor::{err_at, Cursor, PResult, MAX_DEPTH};
use crate::literal::{encode, ArrayLiteral, Literal, Scalar};
use crate::shape::{ArrayShape, Shape};
use crate::types::{PrimitiveType, TypeClass};

/// The most bytes an array constant written as one value (`f32[9] constant(0)`) may take: the
/// only literal whose size the text does not bound.
pub const MAX_FILLED_BYTES: u64 = 64 << 20;

impl<'a> Cursor<'a> {
    /// After blanks: a literal of `shape`.
    pub fn literal(&mut self, shape: &Shape, depth: usize) -> PResult<Literal> {
        self.skip_ws()?;
        if depth > MAX_DEPTH {
            return err_at(
                self.pos,
                format!("literal nested deeper than {MAX_DEPTH} levels"),
            );
        }
        match shape {
            Shape::Tuple(elems) => {
                let open = self.pos;
                self.expect(b'(', "to start a tuple literal")?;
                let mut out = Vec::with_capacity(elems.len());
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        self.expect(b',', "between tuple literal elements")?;
                    }
                    out.push(self.literal(e, depth + 1)?);
                }
                if !self.eat(b')')? {
                    return err_at(
                        self.pos,
                        format!(
                            "tuple literal at byte {open} has more than the {} elements its shape has",
                            elems.len()
                        ),
                    );
                }
                Ok(Literal::Tuple(out))
            }
            Shape::Token => {
                if self.eat_word("token")? {
                    Ok(Literal::Token)
                } else {
                    err_at(self.pos, "expected 'token'")
                }
            }
            Shape::Opaque => err_at(self.pos, "opaque shapes have no literal"),
            Shape::Buffer(_) => err_at(self.pos, "buffer shapes have no literal"),
            Shape::Array(a) => self.array_literal(a),
        }
    }

    /// An array literal: nested braces, or one value (element 0; the others zero).
    fn array_literal(&mut self, a: &ArrayShape) -> PResult<Literal> {
        let start = self.pos;
        if a.dims.len() > MAX_DEPTH {
            return err_at(
                start,
                format!("literal of rank {} is too deep to parse", a.dims.len()),
            );
        }
        let w = a.ty.byte_size();
        let mut data = Vec::new();
        if a.dims.is_empty() {
            // XLA also accepts a scalar in braces.
            let braced = self.eat(b'{')?;
            self.element(a.ty, &mut data)?;
            if braced {
                self.expect(b'}', "to close the scalar")?;
            }
        } else if self.peek() != Some(b'{') {
            // XLA reads one value for an array as its element 0, every other element zero
            // (`s32[3] constant(-7)` is {-7, 0, 0}; measured with jaxlib 0.10.2's parser).
            self.element(a.ty, &mut data)?;
            let shape = || crate::print::shape_to_string(&Shape::Array(a.clone()));
            let n = a
                .dims
                .iter()
                .try_fold(1u64, |n, &d| n.checked_mul(d.max(0) as u64));
            match n {
                Some(0) => {
                    return err_at(
                        start,
                        format!("one value for {} sets element 0, which it has not", shape()),
                    )
                }
                Some(n) if n.saturating_mul(data.len() as u64) <= MAX_FILLED_BYTES => {
                    data.resize(n as usize * data.len(), 0);
                }
                _ => {
                    return err_at(
                        start,
                        format!(
                            "an array constant written as one value is limited to {MAX_FILLED_BYTES} bytes; {} is larger",
                            shape()
                        ),
                    )
                }
            }
        } else {
            self.nested(a, 0, &mut data)?;
        }
        debug_assert_eq!(data.len() % w.max(1), 0);
        ArrayLiteral::from_bytes(a.ty, a.dims.clone(), data)
            .map(Literal::Array)
            .or_else(|e| err_at(start, format!("bad literal: {e}")))
    }

    fn nested(&mut self, a: &ArrayShape, dim: usize, data: &mut Vec<u8>) -> PResult<()> {
        self.skip_ws()?;
        let open = self.pos;
        if self.peek() != Some(b'{') {
            return err_at(
                self.pos,
                format!(
                    "expected '{{' for dimension {dim} of {}, found {}",
                    crate::print::shape_to_string(&Shape::Array(a.clone())),
                    self.describe_here()
                ),
            );
        }
        self.pos += 1;
        let want = a.dims[dim];
        let last = dim + 1 == a.dims.len();
        let mut n: i64 = 0;
        if !self.eat(b'}')? {
            loop {
                if n >= want {
                    return err_at(
                        self.pos,
                        format!("too many elements in dimension {dim}: the shape says {want}"),
                    );
                }
                if last {
                    self.element(a.ty, data)?;
                } else {
                    self.nested(a, dim + 1, data)?;
                }
                n += 1;
                if self.eat(b'}')? {
                    break;
                }
                // XLA's parser takes the commas as optional; groups without one are read too.
                if !last && self.peek() == Some(b'{') {
                    continue;
                }
                self.expect(b',', "between literal elements")?;
            }
        }
        if n != want {
            return err_at(
                open,
                format!("dimension {dim} has {n} elements here but the shape says {want}"),
            );
        }
        Ok(())
    }

    /// One element of type `ty`, appended to `data` as its storage bytes.
    fn element(&mut self, ty: PrimitiveType, data: &mut Vec<u8>) -> PResult<()> {
        self.skip_ws()?;
        let at = self.pos;
        let mut buf = [0u8; 16];
        let w = ty.byte_size();
        match ty.class() {
            TypeClass::Pred => {
                let v = if self.eat_word("true")? {
                    true
                } else if self.eat_word("false")? {
                    false
                } else {
                    match self.int("a pred value")? {
                        0 => false,
                        1 => true,
                        v => {
                            return err_at(at, format!("pred value must be true or false, not {v}"))
                        }
                    }
                };
                buf[0] = v as u8;
            }
            TypeClass::Signed | TypeClass::Unsigned => {
                let v = self.wide_int()?;
                let bits = ty.bit_width();
                let (lo, hi): (i128, i128) = if ty.is_signed_integer() {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                };
                if v < lo || v > hi {
                    return err_at(at, format!("value {v} is out of range for {}", ty.name()));
                }
                let s = if ty.is_signed_integer() {
                    Scalar::S(v as i64)
                } else {
                    Scalar::U(v as u64)
                };
                encode(ty, s, &mut buf[..w]);
            }
            TypeClass::Float => {
                self.float_into(ty, &mut buf[..w])?;
            }
            TypeClass::Complex => {
                let comp = ty.complex_component().unwrap_or(PrimitiveType::F64);
                let cw = comp.byte_size();
                self.expect(b'(', "to start a complex value (re, im)")?;
                self.skip_ws()?;
                self.float_into(comp, &mut buf[..cw])?;
                self.expect(b',', "between the real and imaginary parts")?;
                self.skip_ws()?;
                self.float_into(comp, &mut buf[cw..2 * cw])?;
                self.expect(b')', "to close the complex value")?;
            }
            TypeClass::Other => return err_at(at, format!("{} has no literal values", ty.name())),
        }
        data.extend_from_slice(&buf[..w]);
        Ok(())
    }

    /// An integer literal that may exceed i64 (u64 values); hex (`0x..`) accepted.
    fn wide_int(&mut self) -> PResult<i128> {
        let start = self.pos;
        let neg = match self.peek() {
            Some(b'-') => {
                self.pos += 1;
                true
            }
            Some(b'+') => {
                self.pos += 1;
                false
            }
            _ => false,
        };
        let (radix, ds) =
            if self.peek() == Some(b'0') && matches!(self.peek_at(1), Some(b'x' | b'X')) {
                self.pos += 2;
                (16u32, self.pos)
            } else {
                (10u32, self.pos)
            };
        while self.peek().is_some_and(|c| (c as char).is_digit(radix)) {
            self.pos += 1;
        }
        let digits = &self.src[ds..self.pos];
        if digits.is_empty() {
            self.pos = start;
            return err_at(
                start,
                format!("expected an integer, found {}", self.describe_here()),
            );
        }
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return err_at(start, "expected an integer, found a floating-point number");
        }
        let v = u128::from_str_radix(digits, radix)
            .ok()
            .filter(|&v| v <= u64::MAX as u128)
            .ok_or(())
            .or_else(|_| err_at(start, format!("integer {digits} does not fit in 64 bits")))?
            as i128;
        Ok(if neg { -v } else { v })
    }

    /// A float of type `ty` (`1.5`, `-2e-3`, `inf`, `-nan`, `nan(0x7)`), stored into `out`.
    fn float_into(&mut self, ty: PrimitiveType, out: &mut [u8]) -> PResult<()> {
        let start = self.pos;
        let neg = self.peek() == Some(b'-');
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.pos += 1;
        }
        if self.b[self.pos..].starts_with(b"inf") {
            self.pos += 3;
            let v = if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            encode(ty, Scalar::F(v), out);
            return Ok(());
        }
        if self.b[self.pos..].starts_with(b"nan") {
            self.pos += 3;
            let mut payload = None;
            if self.peek() == Some(b'(') {
                self.pos += 1;
                let at = self.pos;
                if !(self.peek() == Some(b'0') && matches!(self.peek_at(1), Some(b'x' | b'X'))) {
                    return err_at(at, "expected a hex NaN payload like nan(0x1)");
                }
                self.pos += 2;
                let ds = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                    self.pos += 1;
                }
                let p = u64::from_str_radix(&self.src[ds..self.pos], 16)
                    .or_else(|_| err_at(at, "bad NaN payload"))?;
                if self.peek() != Some(b')') {
                    return err_at(self.pos, "expected ')' after the NaN payload");
                }
                self.pos += 1;
                payload = Some((p, at));
            }
            return set_nan(ty, neg, payload, out);
        }
        let ds = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit() || c == b'.') {
            self.pos += 1;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'-' | b'+')) {
                self.pos += 1;
            }
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        let text = &self.src[start..self.pos];
        if self.pos == ds {
            self.pos = start;
            return err_at(
                start,
                format!("expected a number, found {}", self.describe_here()),
            );
        }
        // A number XLA's parser would take to an infinity of the type is out of its range
        // there (a parse error, "value -65520 is out of range for ... F16"): refused alike, so
        // no module XLA refuses reads here as one with an infinity in it.
        let out_of_range = |out: &[u8]| -> PResult<()> {
            match crate::literal::decode(ty, out) {
                Scalar::F(v) if v.is_infinite() => err_at(
                    start,
                    format!("value {text} is out of range for {}", ty.name()),
                ),
                _ => Ok(()),
            }
        };
        // f32 (and narrower) values parse straight to f32 so that the shortest digits we print
        // give back the same value; f64 parses as f64.
        if ty == PrimitiveType::F64 {
            let v: f64 = text
                .parse()
                .or_else(|_| err_at(start, format!("bad number '{text}'")))?;
            encode(ty, Scalar::F(v), out);
        } else {
            let v: f32 = text
                .parse()
                .or_else(|_| err_at(start, format!("bad number '{text}'")))?;
            if v.is_infinite() && ty != PrimitiveType::F32 {
                // Out of f32's range: let the narrow type's rounding decide (inf or saturation).
                let v64: f64 = text.parse().unwrap_or(v as f64);
                encode(ty, Scalar::F(v64), out);
            } else {
                encode(ty, Scalar::F(v as f64), out);
            }
        }
        out_of_range(out)
    }
}

/// Writes a NaN of `ty` with the given sign and optional payload.
fn set_nan(
    ty: PrimitiveType,
    neg: bool,
    payload: Option<(u64, usize)>,
    out: &mut [u8],
) -> PResult<()> {
    use PrimitiveType::*;
    // (total bits, mantissa bits) of the IEEE-like types whose NaNs carry payloads.
    let ieee = match ty {
        F16 => Some((16u32, 10u32)),
        Bf16 => Some((16, 7)),
        F32 => Some((32, 23)),
        F64 => Some((64, 52)),
        F8E5M2 => Some((8, 2)),
        F8E4M3 => Some((8, 3)),
        F8E3M4 => Some((8, 4)),
        _ => None,
    };
    match ieee {
        Some((total, mant)) => {
            let mant_mask = (1u64 << mant) - 1;
            let p = match payload {
                None => 1u64 << (mant - 1),
                Some((p, at)) => {
                    if p == 0 || p > mant_mask {
                        return err_at(
                            at,
                            format!(
                                "NaN payload 0x{p:x} does not fit {} (1..=0x{mant_mask:x})",
                                ty.name()
                            ),
                        );
                    }
                    p
                }
            };
            let exp_mask = ((1u64 << (total - 1 - mant)) - 1) << mant;
            let sign = if neg { 1u64 << (total - 1) } else { 0 };
            let bits = sign | exp_mask | p;
            out.copy_from_slice(&bits.to_le_bytes()[..out.len()]);
            Ok(())
        }
        None => {
            if let Some((p, at)) = payload {
                return err_at(
                    at,
                    format!("{} NaNs have no payload (got 0x{p:x})", ty.name()),
                );
            }
            let v = if neg { -f64::NAN } else { f64::NAN };
            encode(ty, Scalar::F(v), out);
            Ok(())
        }
    }
}

//! The HLO text printer: writes a [`Module`] the way XLA's `HloModule::ToString` does, so that
//! XLA's own parser accepts it and [`crate::parse::parse_module`] reads back the same IR.
//!
//! What is printed:
//! - `HloModule name, header_attr=value, ...`, then the stack-frame tables verbatim;
//! - each computation in module order: `[ENTRY ]%name (p0: f32[4], ...) -> f32[] {`, one line per
//!   instruction (`[ROOT ]%name = shape opcode(%a, %b), attr=value, ...`), `}` and the
//!   computation's trailing attributes (`, execution_thread="..."`);
//! - shapes with their layouts (`f32[2,<=3]{1,0:T(8,128)E(4)S(1)}`), scalars without one;
//! - constants as XLA writes them (`1.5`, `{1, 2}`, `{ { 1, 2 }, { 3, 4 } }`, `inf`, `nan`,
//!   `nan(0x1)`, `(re, im)`, `true`), floats with the shortest digits that give back the same
//!   value of their type, elided constants as `{...}`;
//! - typed attributes in XLA's syntax (`window={size=3x3 stride=2x2 pad=1_1x1_1}`,
//!   `dim_labels=b01f_01io->b01f`, `padding=0_1_2x0_0_0`, `slice={[0:4:2]}`, `{0,1}`, `%comp`,
//!   `{%a, %b}`, quoted strings), raw attributes verbatim.
//!
//! Operands are written as `%name` (as current XLA dumps do); [`PrintOptions::operand_shapes`]
//! writes `f32[4]{0} %name` instead.

use crate::ir::{
    Attr, Computation, Constant, ConvDimLabels, Instruction, Module, PaddingDim, SliceDim, Window,
};
use crate::literal::{ArrayLiteral, Literal, Scalar};
use crate::opcode::Opcode;
use crate::shape::{ArrayShape, Layout, Shape, TILE_COMBINE_DIMENSION, UNBOUNDED_SIZE};
use crate::types::PrimitiveType;
use std::fmt::{self, Write};

/// Printing choices. The default writes what current XLA writes in its dumps.
#[derive(Clone, Debug, Default)]
pub struct PrintOptions {
    /// Write each operand's shape before its name (`add(f32[4]{0} %a, f32[4]{0} %b)`).
    pub operand_shapes: bool,
}

/// The module as HLO text (XLA's format), ending with a newline.
pub fn module_to_string(m: &Module) -> String {
    module_to_string_with(m, &PrintOptions::default())
}

/// [`module_to_string`] with explicit options.
pub fn module_to_string_with(m: &Module, opts: &PrintOptions) -> String {
    let mut out = String::with_capacity(64 * m.instruction_count() + 256);
    write_module(&mut out, m, opts).expect("writing to a String cannot fail");
    out
}

const TABLE_NAMES: [&str; 4] = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

/// Writes the module as HLO text.
pub fn write_module(out: &mut impl Write, m: &Module, opts: &PrintOptions) -> fmt::Result {
    write!(out, "HloModule {}", m.name)?;
    for (k, v) in &m.header_attrs {
        write!(out, ", {k}={v}")?;
    }
    out.write_str("\n")?;
    if !m.stack_frame_tables.is_empty() {
        for line in &m.stack_frame_tables {
            if TABLE_NAMES.contains(&line.trim()) {
                out.write_str("\n")?;
            }
            out.write_str(line)?;
            out.write_str("\n")?;
        }
    }
    for (ci, c) in m.computations.iter().enumerate() {
        out.write_str("\n")?;
        write_computation(out, m, c, ci == m.entry, opts)?;
        out.write_str("\n")?;
    }
    Ok(())
}

/// Writes one computation: header line, instructions, closing brace and trailing attributes.
pub fn write_computation(
    out: &mut impl Write,
    m: &Module,
    c: &Computation,
    is_entry: bool,
    opts: &PrintOptions,
) -> fmt::Result {
    if is_entry {
        out.write_str("ENTRY ")?;
    }
    write!(out, "%{} (", c.name)?;
    for (i, (_, p)) in c.parameters().into_iter().enumerate() {
        if i > 0 {
            out.write_str(", ")?;
        }
        write!(out, "{}: ", p.name)?;
        write_shape(out, &p.shape, false)?;
    }
    out.write_str(") -> ")?;
    match c.instructions.get(c.root) {
        Some(r) => write_shape(out, &r.shape, false)?,
        None => out.write_str("()")?,
    }
    out.write_str(" {\n")?;
    for (id, instr) in c.instructions.iter().enumerate() {
        out.write_str("  ")?;
        if id == c.root {
            out.write_str("ROOT ")?;
        }
        write_instruction(out, m, c, instr, opts)?;
        out.write_str("\n")?;
    }
    out.write_str("}")?;
    for (k, v) in &c.trailing_attrs {
        write!(out, ", {k}={v}")?;
    }
    Ok(())
}

/// Writes one instruction without indentation, `ROOT` or newline:
/// `%name = shape opcode(operands), attrs`.
pub fn write_instruction(
    out: &mut impl Write,
    m: &Module,
    c: &Computation,
    instr: &Instruction,
    opts: &PrintOptions,
) -> fmt::Result {
    write!(out, "%{} = ", instr.name)?;
    write_shape(out, &instr.shape, true)?;
    write!(out, " {}(", instr.opcode.name())?;
    match instr.opcode {
        Opcode::Parameter => write!(out, "{}", instr.parameter_number.unwrap_or(0))?,
        Opcode::Constant => match &instr.constant {
            Some(Constant::Literal(l)) => write_literal(out, l)?,
            Some(Constant::Elided) | None => out.write_str("{...}")?,
        },
        _ => {
            for (i, &op) in instr.operands.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                match c.instructions.get(op) {
                    Some(o) => {
                        if opts.operand_shapes {
                            write_shape(out, &o.shape, true)?;
                            out.write_str(" ")?;
                        }
                        write!(out, "%{}", o.name)?
                    }
                    None => write!(out, "%<bad operand {op}>")?,
                }
            }
        }
    }
    out.write_str(")")?;
    for (k, v) in &instr.attrs {
        write!(out, ", {k}=")?;
        write_attr(out, m, c, v)?;
    }
    Ok(())
}

/// Writes an attribute's value in XLA's syntax.
pub fn write_attr(out: &mut impl Write, m: &Module, c: &Computation, a: &Attr) -> fmt::Result {
    let comp_name = |id: usize| -> &str {
        m.computations
            .get(id)
            .map(|c| c.name.as_str())
            .unwrap_or("<bad computation>")
    };
    match a {
        Attr::Int(v) => write!(out, "{v}"),
        Attr::Bool(b) => write!(out, "{b}"),
        Attr::Ints(v) => write_int_list(out, v),
        Attr::Str(s) => write_quoted(out, s),
        Attr::Ident(s) => out.write_str(s),
        Attr::Comp(id) => write!(out, "%{}", comp_name(*id)),
        Attr::Comps(ids) => {
            out.write_str("{")?;
            for (i, id) in ids.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                write!(out, "%{}", comp_name(*id))?;
            }
            out.write_str("}")
        }
        Attr::Window(w) => write_window(out, w),
        Attr::ConvDims(d) => write_conv_dims(out, d),
        Attr::Padding(p) => write_padding(out, p),
        Attr::Slice(s) => write_slice(out, s),
        Attr::Instrs(ids) => {
            out.write_str("{")?;
            for (i, id) in ids.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                match c.instructions.get(*id) {
                    Some(x) => write!(out, "%{}", x.name)?,
                    None => write!(out, "%<bad instruction {id}>")?,
                }
            }
            out.write_str("}")
        }
        Attr::Raw(s) => out.write_str(s),
    }
}

fn write_int_list(out: &mut impl Write, v: &[i64]) -> fmt::Result {
    out.write_str("{")?;
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            out.write_str(",")?;
        }
        write!(out, "{x}")?;
    }
    out.write_str("}")
}

/// Writes a string in double quotes with C escapes (as XLA's `CEscape`).
pub fn write_quoted(out: &mut impl Write, s: &str) -> fmt::Result {
    out.write_str("\"")?;
    for ch in s.chars() {
        match ch {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\t' => out.write_str("\\t")?,
            '\r' => out.write_str("\\r")?,
            '\'' => out.write_str("\\'")?,
            c if (c as u32) < 0x20 || c as u32 == 0x7f => write!(out, "\\{:03o}", c as u32)?,
            c => out.write_char(c)?,
        }
    }
    out.write_str("\"")
}

fn join_x(out: &mut impl Write, items: impl Iterator<Item = String>) -> fmt::Result {
    for (i, s) in items.enumerate() {
        if i > 0 {
            out.write_str("x")?;
        }
        out.write_str(&s)?;
    }
    Ok(())
}

/// `{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}`, leaving out
/// the fields whose every dimension has the default value, as XLA does.
pub fn write_window(out: &mut impl Write, w: &Window) -> fmt::Result {
    out.write_str("{")?;
    if !w.dims.is_empty() {
        out.write_str("size=")?;
        join_x(out, w.dims.iter().map(|d| d.size.to_string()))?;
        if w.dims.iter().any(|d| d.stride != 1) {
            out.write_str(" stride=")?;
            join_x(out, w.dims.iter().map(|d| d.stride.to_string()))?;
        }
        if w.dims
            .iter()
            .any(|d| d.padding_low != 0 || d.padding_high != 0)
        {
            out.write_str(" pad=")?;
            join_x(
                out,
                w.dims
                    .iter()
                    .map(|d| format!("{}_{}", d.padding_low, d.padding_high)),
            )?;
        }
        if w.dims.iter().any(|d| d.base_dilation != 1) {
            out.write_str(" lhs_dilate=")?;
            join_x(out, w.dims.iter().map(|d| d.base_dilation.to_string()))?;
        }
        if w.dims.iter().any(|d| d.window_dilation != 1) {
            out.write_str(" rhs_dilate=")?;
            join_x(out, w.dims.iter().map(|d| d.window_dilation.to_string()))?;
        }
        if w.dims.iter().any(|d| d.window_reversal) {
            out.write_str(" rhs_reversal=")?;
            join_x(
                out,
                w.dims.iter().map(|d| (d.window_reversal as u8).to_string()),
            )?;
        }
    }
    out.write_str("}")
}

/// One label string of `dim_labels`: for each dimension, its letter or spatial index.
fn labels(rank: usize, a: (i64, char), b: (i64, char), spatial: &[i64]) -> String {
    let mut s = vec!['?'; rank];
    let mut put = |i: i64, ch: char| {
        if let Some(slot) = usize::try_from(i).ok().and_then(|i| s.get_mut(i)) {
            *slot = ch;
        }
    };
    put(a.0, a.1);
    put(b.0, b.1);
    for (k, &d) in spatial.iter().enumerate() {
        put(d, char::from_digit(k as u32, 36).unwrap_or('?'));
    }
    s.into_iter().collect()
}

/// `b01f_01io->b01f`.
pub fn write_conv_dims(out: &mut impl Write, d: &ConvDimLabels) -> fmt::Result {
    let n = d.input_spatial.len() + 2;
    let k = d.kernel_spatial.len() + 2;
    let o = d.output_spatial.len() + 2;
    write!(
        out,
        "{}_{}->{}",
        labels(
            n,
            (d.input_batch, 'b'),
            (d.input_feature, 'f'),
            &d.input_spatial
        ),
        labels(
            k,
            (d.kernel_input_feature, 'i'),
            (d.kernel_output_feature, 'o'),
            &d.kernel_spatial
        ),
        labels(
            o,
            (d.output_batch, 'b'),
            (d.output_feature, 'f'),
            &d.output_spatial
        ),
    )
}

/// `0_1x2_3`, or `0_1_0x2_3_1` when some dimension has interior padding.
pub fn write_padding(out: &mut impl Write, p: &[PaddingDim]) -> fmt::Result {
    let interior = p.iter().any(|d| d.interior != 0);
    for (i, d) in p.iter().enumerate() {
        if i > 0 {
            out.write_str("x")?;
        }
        write!(out, "{}_{}", d.low, d.high)?;
        if interior {
            write!(out, "_{}", d.interior)?;
        }
    }
    Ok(())
}

/// `{[0:4], [1:3]}`, or `{[0:4:1], [1:3:2]}` when some stride is not 1.
pub fn write_slice(out: &mut impl Write, s: &[SliceDim]) -> fmt::Result {
    let strided = s.iter().any(|d| d.stride != 1);
    out.write_str("{")?;
    for (i, d) in s.iter().enumerate() {
        if i > 0 {
            out.write_str(", ")?;
        }
        if strided {
            write!(out, "[{}:{}:{}]", d.start, d.limit, d.stride)?;
        } else {
            write!(out, "[{}:{}]", d.start, d.limit)?;
        }
    }
    out.write_str("}")
}

/// The shape as HLO text, with layouts.
pub fn shape_to_string(s: &Shape) -> String {
    let mut out = String::new();
    let _ = write_shape(&mut out, s, true);
    out
}

/// Writes a shape; `with_layout` false leaves layouts out (computation signatures).
pub fn write_shape(out: &mut impl Write, s: &Shape, with_layout: bool) -> fmt::Result {
    match s {
        Shape::Array(a) => write_array_shape(out, a, with_layout),
        Shape::Tuple(t) => {
            out.write_str("(")?;
            for (i, e) in t.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                write_shape(out, e, with_layout)?;
            }
            out.write_str(")")
        }
        Shape::Token => out.write_str("token[]"),
        Shape::Opaque => out.write_str("opaque[]"),
        Shape::Buffer(a) => {
            out.write_str("b(")?;
            write_array_shape(out, a, with_layout)?;
            out.write_str(")")
        }
    }
}

fn write_array_shape(out: &mut impl Write, a: &ArrayShape, with_layout: bool) -> fmt::Result {
    write!(out, "{}[", a.ty.name())?;
    for (i, &d) in a.dims.iter().enumerate() {
        if i > 0 {
            out.write_str(",")?;
        }
        let dynamic = a.dynamic.get(i).copied().unwrap_or(false);
        if d == UNBOUNDED_SIZE {
            out.write_str("?")?;
        } else if dynamic {
            write!(out, "<={d}")?;
        } else {
            write!(out, "{d}")?;
        }
    }
    out.write_str("]")?;
    if with_layout {
        if let Some(l) = &a.layout {
            if !(a.dims.is_empty() && l.minor_to_major.is_empty() && l.is_plain()) {
                write_layout(out, l)?;
            }
        }
    }
    Ok(())
}

/// The layout as HLO text: `{1,0:T(8,128)E(4)S(1)}`.
pub fn layout_to_string(l: &Layout) -> String {
    let mut out = String::new();
    let _ = write_layout(&mut out, l);
    out
}

/// Writes `{minor_to_major[:items]}` with the items in XLA's order: `D(..)`, tiles, `L(..)`,
/// `#(..)`, `*(..)`, `E(..)`, `S(..)`, then the rest (`SC`, `P`, `M`) in text order.
pub fn write_layout(out: &mut impl Write, l: &Layout) -> fmt::Result {
    out.write_str("{")?;
    for (i, d) in l.minor_to_major.iter().enumerate() {
        if i > 0 {
            out.write_str(",")?;
        }
        write!(out, "{d}")?;
    }
    if !l.is_plain() {
        out.write_str(":")?;
        let (early, late): (Vec<&String>, Vec<&String>) =
            l.other.iter().partition(|s| s.starts_with("D("));
        for s in &early {
            out.write_str(s)?;
        }
        if !l.tiles.is_empty() {
            out.write_str("T")?;
            for t in &l.tiles {
                out.write_str("(")?;
                for (i, &d) in t.iter().enumerate() {
                    if i > 0 {
                        out.write_str(",")?;
                    }
                    if d == TILE_COMBINE_DIMENSION {
                        out.write_str("*")?;
                    } else {
                        write!(out, "{d}")?;
                    }
                }
                out.write_str(")")?;
            }
        }
        let (mid, rest): (Vec<&String>, Vec<&String>) = late
            .into_iter()
            .partition(|s| s.starts_with("L(") || s.starts_with("#(") || s.starts_with("*("));
        for s in &mid {
            out.write_str(s)?;
        }
        if l.element_size_bits != 0 {
            write!(out, "E({})", l.element_size_bits)?;
        }
        if l.memory_space != 0 {
            write!(out, "S({})", l.memory_space)?;
        }
        for s in &rest {
            out.write_str(s)?;
        }
    }
    out.write_str("}")
}

/// The literal as HLO constant text (without its shape): `1.5`, `{1, 2}`, `{ { 1, 2 }, { 3, 4 } }`,
/// `(1, {2})` for tuples.
pub fn literal_to_string(l: &Literal) -> String {
    let mut out = String::new();
    let _ = write_literal(&mut out, l);
    out
}

/// Writes a literal as HLO constant text.
pub fn write_literal(out: &mut impl Write, l: &Literal) -> fmt::Result {
    match l {
        Literal::Array(a) => write_array_literal(out, a),
        Literal::Tuple(t) => {
            out.write_str("(")?;
            for (i, e) in t.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                write_literal(out, e)?;
            }
            out.write_str(")")
        }
        Literal::Token => out.write_str("token"),
    }
}

fn write_array_literal(out: &mut impl Write, a: &ArrayLiteral) -> fmt::Result {
    if a.dims.is_empty() {
        if a.is_empty() {
            return out.write_str("{}");
        }
        return write_element(out, a, 0);
    }
    let mut next = 0usize;
    write_nested(out, a, 0, &mut next)
}

fn write_nested(
    out: &mut impl Write,
    a: &ArrayLiteral,
    dim: usize,
    next: &mut usize,
) -> fmt::Result {
    let n = a.dims[dim].max(0) as usize;
    let last = dim + 1 == a.dims.len();
    // XLA pads the innermost braces with spaces when the literal has rank 2 or more.
    let pad = if a.dims.len() > 1 { " " } else { "" };
    if last {
        out.write_str("{")?;
        if n > 0 {
            out.write_str(pad)?;
        }
        for i in 0..n {
            if i > 0 {
                out.write_str(", ")?;
            }
            if *next < a.len() {
                write_element(out, a, *next)?;
            }
            *next += 1;
        }
        if n > 0 {
            out.write_str(pad)?;
        }
        out.write_str("}")
    } else {
        out.write_str("{ ")?;
        for i in 0..n {
            if i > 0 {
                out.write_str(", ")?;
            }
            write_nested(out, a, dim + 1, next)?;
        }
        out.write_str(" }")
    }
}

fn write_element(out: &mut impl Write, a: &ArrayLiteral, i: usize) -> fmt::Result {
    match a.get(i) {
        Scalar::Pred(b) => write!(out, "{b}"),
        Scalar::S(v) => write!(out, "{v}"),
        Scalar::U(v) => write!(out, "{v}"),
        Scalar::F(v) => write_float(out, a.ty, v, a.bits(i)),
        Scalar::C(re, im) => {
            let comp = a.ty.complex_component().unwrap_or(PrimitiveType::F64);
            let w = comp.bit_width();
            let bits = a.bits(i);
            let mask = if w == 64 {
                u64::MAX as u128
            } else {
                (1u128 << w) - 1
            };
            out.write_str("(")?;
            write_float(out, comp, re, bits & mask)?;
            out.write_str(", ")?;
            write_float(out, comp, im, (bits >> w) & mask)?;
            out.write_str(")")
        }
    }
}

/// Sign bit position and mantissa width of the float types whose NaNs carry an IEEE payload.
fn ieee_nan_layout(ty: PrimitiveType) -> Option<(u32, u32)> {
    use PrimitiveType::*;
    Some(match ty {
        F16 => (15, 10),
        Bf16 => (15, 7),
        F32 => (31, 23),
        F64 => (63, 52),
        F8E5M2 => (7, 2),
        F8E4M3 => (7, 3),
        F8E3M4 => (7, 4),
        _ => return None,
    })
}

/// Writes one float element of type `ty` with value `v` (exact in f64) and raw bits `bits`.
pub fn write_float(out: &mut impl Write, ty: PrimitiveType, v: f64, bits: u128) -> fmt::Result {
    if v.is_nan() {
        let (negative, payload) = match ieee_nan_layout(ty) {
            Some((sign, mant)) => {
                let negative = (bits >> sign) & 1 == 1;
                let payload = bits & ((1u128 << mant) - 1);
                let quiet = 1u128 << (mant - 1);
                (negative, (payload != quiet).then_some(payload))
            }
            None => {
                let w = ty.bit_width().max(1);
                (
                    (bits >> (w - 1)) & 1 == 1 && ty != PrimitiveType::F8E8M0FNU,
                    None,
                )
            }
        };
        if negative {
            out.write_str("-")?;
        }
        return match payload {
            Some(p) => write!(out, "nan(0x{p:x})"),
            None => out.write_str("nan"),
        };
    }
    if v.is_infinite() {
        return out.write_str(if v < 0.0 { "-inf" } else { "inf" });
    }
    if v == 0.0 && v.is_sign_negative() {
        // XLA's lexer reads `-0` as the integer 0 (losing the sign); `-0.0` stays a negative zero.
        return out.write_str("-0.0");
    }
    if ty == PrimitiveType::F64 {
        write_shortest_f64(out, v)
    } else {
        // Every narrower float is exactly an f32: the shortest f32 digits give it back exactly.
        write_shortest_f32(out, v as f32)
    }
}

fn write_shortest_f64(out: &mut impl Write, v: f64) -> fmt::Result {
    let a = v.abs();
    if a == 0.0 || (1e-5..1e16).contains(&a) {
        write!(out, "{v}")
    } else {
        write!(out, "{v:e}")
    }
}

fn write_shortest_f32(out: &mut impl Write, v: f32) -> fmt::Result {
    let a = v.abs();
    if a == 0.0 || (1e-5..1e16).contains(&a) {
        write!(out, "{v}")
    } else {
        write!(out, "{v:e}")
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_module(f, self, &PrintOptions::default())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_shape(f, self, true)
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_layout(f, self)
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_literal(f, self)
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_window(f, self)
    }
}

impl fmt::Display for ConvDimLabels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_conv_dims(f, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::WindowDim;
    use PrimitiveType::*;

    fn f32_lit(dims: Vec<i64>, v: &[f64]) -> Literal {
        let s: Vec<Scalar> = v.iter().map(|&x| Scalar::F(x)).collect();
        Literal::Array(ArrayLiteral::from_scalars(F32, dims, &s).unwrap())
    }

    #[test]
    fn shapes_print_with_layouts_dynamic_dims_and_tuples() {
        let mut a = ArrayShape::new(F32, vec![2, 3, UNBOUNDED_SIZE]);
        a.dynamic = vec![false, true, true];
        a.layout = Some(Layout {
            minor_to_major: vec![2, 1, 0],
            tiles: vec![vec![8, 128], vec![2, TILE_COMBINE_DIMENSION]],
            element_size_bits: 4,
            memory_space: 1,
            other: vec![],
        });
        let s = Shape::Tuple(vec![Shape::Array(a), Shape::Token, Shape::scalar(S32)]);
        assert_eq!(
            shape_to_string(&s),
            "(f32[2,<=3,?]{2,1,0:T(8,128)(2,*)E(4)S(1)}, token[], s32[])"
        );
    }

    #[test]
    fn scalar_empty_layout_is_not_printed() {
        let mut a = ArrayShape::new(F32, vec![]);
        a.layout = Some(Layout::default());
        assert_eq!(shape_to_string(&Shape::Array(a)), "f32[]");
    }

    #[test]
    fn literals_print_like_xla() {
        assert_eq!(literal_to_string(&f32_lit(vec![], &[1.5])), "1.5");
        assert_eq!(literal_to_string(&f32_lit(vec![], &[1.0])), "1");
        assert_eq!(literal_to_string(&f32_lit(vec![], &[0.1])), "0.1");
        // XLA prints "-0", but its own parser reads that as +0: we write what keeps the sign.
        assert_eq!(literal_to_string(&f32_lit(vec![], &[-0.0])), "-0.0");
        assert_eq!(literal_to_string(&f32_lit(vec![], &[1e-7])), "1e-7");
        assert_eq!(
            literal_to_string(&f32_lit(vec![], &[3.4028234663852886e38])),
            "3.4028235e38"
        );
        assert_eq!(literal_to_string(&f32_lit(vec![], &[f64::INFINITY])), "inf");
        assert_eq!(
            literal_to_string(&f32_lit(vec![], &[f64::NEG_INFINITY])),
            "-inf"
        );
        assert_eq!(literal_to_string(&f32_lit(vec![], &[f64::NAN])), "nan");
        assert_eq!(
            literal_to_string(&f32_lit(vec![2, 2], &[1.0, 2.0, 3.0, 4.0])),
            "{ { 1, 2 }, { 3, 4 } }"
        );
        assert_eq!(
            literal_to_string(&f32_lit(vec![3], &[1.0, 2.5, 3.0])),
            "{1, 2.5, 3}"
        );
        assert_eq!(literal_to_string(&f32_lit(vec![0], &[])), "{}");
        let p =
            ArrayLiteral::from_scalars(Pred, vec![2], &[Scalar::Pred(true), Scalar::Pred(false)])
                .unwrap();
        assert_eq!(literal_to_string(&Literal::Array(p)), "{true, false}");
        let c = ArrayLiteral::from_scalars(C64, vec![], &[Scalar::C(1.5, -2.0)]).unwrap();
        assert_eq!(literal_to_string(&Literal::Array(c)), "(1.5, -2)");
        let u = ArrayLiteral::from_scalars(U64, vec![], &[Scalar::U(u64::MAX)]).unwrap();
        assert_eq!(
            literal_to_string(&Literal::Array(u)),
            "18446744073709551615"
        );
    }

    #[test]
    fn nan_payload_and_sign_are_printed() {
        let l =
            ArrayLiteral::from_bytes(F32, vec![], 0x7fc00001u32.to_le_bytes().to_vec()).unwrap();
        assert_eq!(literal_to_string(&Literal::Array(l)), "nan(0x400001)");
        let l =
            ArrayLiteral::from_bytes(F32, vec![], 0xffc00000u32.to_le_bytes().to_vec()).unwrap();
        assert_eq!(literal_to_string(&Literal::Array(l)), "-nan");
    }

    #[test]
    fn typed_attributes_print_in_xla_syntax() {
        let w = Window {
            dims: vec![
                WindowDim {
                    size: 3,
                    stride: 2,
                    padding_low: 1,
                    padding_high: 1,
                    ..WindowDim::default()
                },
                WindowDim {
                    size: 3,
                    window_reversal: true,
                    ..WindowDim::default()
                },
            ],
        };
        assert_eq!(
            w.to_string(),
            "{size=3x3 stride=2x1 pad=1_1x0_0 rhs_reversal=0x1}"
        );
        let d = ConvDimLabels {
            input_batch: 0,
            input_feature: 3,
            input_spatial: vec![1, 2],
            kernel_input_feature: 2,
            kernel_output_feature: 3,
            kernel_spatial: vec![0, 1],
            output_batch: 0,
            output_feature: 3,
            output_spatial: vec![1, 2],
        };
        assert_eq!(d.to_string(), "b01f_01io->b01f");
        let mut s = String::new();
        write_padding(
            &mut s,
            &[
                PaddingDim {
                    low: 0,
                    high: 1,
                    interior: 0,
                },
                PaddingDim {
                    low: -2,
                    high: 0,
                    interior: 1,
                },
            ],
        )
        .unwrap();
        assert_eq!(s, "0_1_0x-2_0_1");
        let mut s = String::new();
        write_slice(
            &mut s,
            &[SliceDim {
                start: 0,
                limit: 4,
                stride: 1,
            }],
        )
        .unwrap();
        assert_eq!(s, "{[0:4]}");
        let mut s = String::new();
        write_quoted(&mut s, "a\"b\\c\n").unwrap();
        assert_eq!(s, "\"a\\\"b\\\\c\\n\"");
    }

    #[test]
    fn module_prints_header_tables_and_computations() {
        let mut p0 = Instruction::new("p0", Opcode::Parameter, Shape::array(F32, vec![4]));
        p0.parameter_number = Some(0);
        let mut neg = Instruction::new("neg", Opcode::Negate, Shape::array(F32, vec![4]));
        neg.operands = vec![0];
        neg.attrs
            .push(("metadata".into(), Attr::Raw("{op_name=\"x\"}".into())));
        let m = Module {
            name: "m".into(),
            header_attrs: vec![("is_scheduled".into(), "true".into())],
            stack_frame_tables: vec!["FileNames".into(), "1 \"a.py\"".into()],
            computations: vec![Computation {
                name: "main".into(),
                instructions: vec![p0, neg],
                root: 1,
                trailing_attrs: vec![],
            }],
            entry: 0,
        };
        assert_eq!(
            module_to_string(&m),
            "HloModule m, is_scheduled=true\n\nFileNames\n1 \"a.py\"\n\n\
             ENTRY %main (p0: f32[4]) -> f32[4] {\n  %p0 = f32[4] parameter(0)\n  \
             ROOT %neg = f32[4] negate(%p0), metadata={op_name=\"x\"}\n}\n"
        );
    }
}

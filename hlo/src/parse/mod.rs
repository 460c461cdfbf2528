//! The HLO text parser: reads everything current XLA prints (`HloModule::ToString`, dump files
//! before/after optimizations and after each pass) into a [`Module`].
//!
//! Grammar, as XLA writes it:
//! ```text
//! module      := ('HloModule' NAME (',' ATTR '=' RAW)*)? tables? computation+
//! tables      := ('FileNames' | 'FunctionNames' | 'FileLocations' | 'StackFrames') LINE*
//! computation := 'ENTRY'? NAME ('(' (NAME ':' shape),* ')' '->' shape)? '{' instr* '}' (',' ATTR '=' RAW)*
//! instr       := 'ROOT'? NAME '=' shape? OPCODE '(' operands ')' (',' ATTR '=' value)*
//! operand     := shape? (NAME | OPCODE '(' operands ')')
//! ```
//! Names may carry a `%`. Comments `/* */` and `//` are blanks. Layout is free, as for XLA's
//! parser: an instruction may span lines (attributes wrapped after a comma, a bracketed value
//! such as an indented JSON `backend_config` over several lines) and several may share a line;
//! an attribute list ends where no ',' follows, and a trailing ',' before the next instruction
//! (`Cursor::at_instruction_start`) or the computation's `}` is allowed. A bare attribute value
//! ends at its line's end. Instructions must be defined before use (as XLA requires);
//! computations may be referenced before they are defined.
//!
//! What XLA's parser fills in, this one fills in alike: a result shape left out (for `tuple`,
//! `get-tuple-element` and elementwise ops, whose shape follows from their operands; any other
//! op without a shape is an error saying so), an array constant written as one value (its
//! element 0, every other element zero: `s32[3] constant(-7)` is `{-7, 0, 0}`), and
//! `dimensions={}` of a scalar's broadcast written without it. An instruction written in place
//! of an operand (`add(%p, f32[] negate(%p))`, XLA's nested instruction: no attributes) becomes
//! an instruction before its user, named as XLA names it (`negate.anon`, `negate.anon.1`, ...).
//!
//! Attribute values are typed by attribute name (see [`attr_kind`]); every other attribute is
//! kept verbatim as [`Attr::Raw`] (balanced brackets and quoted strings included). Header
//! attributes of `HloModule` and attributes after a computation's `}` are kept verbatim.
//!
//! XLA's async syntax sugar (`%s = ... custom-call-start(%a), custom_call_target="f"`,
//! `...-update`, `...-done`) is read into the explicit form: an `async-start` whose `calls=`
//! names a new wrapped computation (`<start name>.async_wrapped`, placed just before the
//! computation holding the start), `async-update`, `async-done`. Real opcodes such as
//! `all-reduce-start` and `copy-start` stay themselves.
//!
//! No input makes the parser panic, recurse without bound (nesting is capped at
//! [`MAX_DEPTH`]), or allocate more than a small multiple of the input's size (an array
//! constant written as one value, `f32[9] constant(0)`, at most [`MAX_FILLED_BYTES`]): every
//! error is a
//! [`ParseError`] with line, column and the offending line.

mod attrs;
mod cursor;
mod literal;
mod shape;

pub use attrs::{attr_kind, AttrKind};
pub use cursor::MAX_DEPTH;
pub use literal::MAX_FILLED_BYTES;

use crate::ir::{Attr, CompId, Computation, Constant, InstrId, Instruction, Module, SourcePos};
use crate::literal::Literal;
use crate::opcode::Opcode;
use crate::shape::{ArrayShape, Shape};
use crate::types::PrimitiveType;
use cursor::{err_at, line_col, Cursor, PResult, RawError};
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// A parse error: where (1-based line and column, in characters), what, and the line itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// The offending line (cut to a window around the column when very long).
    pub snippet: String,
    /// Where the caret goes under `snippet` (0-based, in characters).
    pub caret: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: error: {}\n{}\n{}^",
            self.line,
            self.column,
            self.message,
            self.snippet,
            " ".repeat(self.caret)
        )
    }
}

impl std::error::Error for ParseError {}

const SNIPPET_WINDOW: usize = 160;

impl ParseError {
    /// Builds the error for a byte offset of `src`.
    pub fn at(src: &str, offset: usize, message: impl Into<String>) -> ParseError {
        let mut offset = offset.min(src.len());
        while !src.is_char_boundary(offset) {
            offset -= 1;
        }
        let line_start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[offset..].find('\n').map_or(src.len(), |i| offset + i);
        let line = src[..line_start].bytes().filter(|&b| b == b'\n').count() + 1;
        let text = src[line_start..line_end].trim_end_matches('\r');
        let col_chars = src[line_start..offset].chars().count();
        let chars: Vec<char> = text.chars().collect();
        let (from, prefix) = if chars.len() > SNIPPET_WINDOW && col_chars > SNIPPET_WINDOW / 2 {
            (col_chars - SNIPPET_WINDOW / 2, "...")
        } else {
            (0, "")
        };
        let to = (from + SNIPPET_WINDOW).min(chars.len());
        let suffix = if to < chars.len() { "..." } else { "" };
        let body: String = chars[from.min(to)..to]
            .iter()
            .map(|&c| {
                if c.is_control() && c != '\t' {
                    '\u{FFFD}'
                } else {
                    c
                }
            })
            .collect();
        ParseError {
            line,
            column: col_chars + 1,
            message: message.into(),
            snippet: format!("{prefix}{body}{suffix}"),
            caret: prefix.len() + col_chars - from.min(col_chars),
        }
    }

    fn from_raw(src: &str, e: RawError) -> ParseError {
        ParseError::at(src, e.offset, e.message)
    }
}

/// Parses an HLO module from text.
pub fn parse_module(text: &str) -> Result<Module, ParseError> {
    let mut p = Parser::new(text);
    p.module().map_err(|e| ParseError::from_raw(text, e))
}

/// Parses an HLO module from bytes, reporting invalid UTF-8 with its line and column.
pub fn parse_module_bytes(bytes: &[u8]) -> Result<Module, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(s) => parse_module(s),
        Err(e) => {
            let ok = &bytes[..e.valid_up_to()];
            // Safe: the prefix is valid UTF-8 by construction.
            let prefix = std::str::from_utf8(ok).unwrap_or("");
            Err(ParseError::at(
                prefix,
                prefix.len(),
                format!(
                    "input is not UTF-8 text (bad byte 0x{:02x})",
                    bytes[e.valid_up_to()]
                ),
            ))
        }
    }
}

/// Parses a shape (`f32[2,3]{1,0}`, `(s32[], token[])`).
pub fn parse_shape(text: &str) -> Result<Shape, ParseError> {
    let mut c = Cursor::new(text);
    let r = c.shape(0).and_then(|s| {
        c.skip_ws()?;
        if c.at_end() {
            Ok(s)
        } else {
            err_at(
                c.pos,
                format!("unexpected {} after the shape", c.describe_here()),
            )
        }
    });
    r.map_err(|e| ParseError::from_raw(text, e))
}

/// Parses a literal of the given shape (`{ { 1, 2 }, { 3, 4 } }`, `1.5`, `(1, {2})`).
pub fn parse_literal(text: &str, shape: &Shape) -> Result<Literal, ParseError> {
    let mut c = Cursor::new(text);
    let r = c.literal(shape, 0).and_then(|l| {
        c.skip_ws()?;
        if c.at_end() {
            Ok(l)
        } else {
            err_at(
                c.pos,
                format!("unexpected {} after the literal", c.describe_here()),
            )
        }
    });
    r.map_err(|e| ParseError::from_raw(text, e))
}

/// A fast hash for the name tables (names are short, trusted to be adversarial only in
/// collisions, which cost time, never correctness).
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(buf))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.0 = (self.0.rotate_left(5) ^ i as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A computation reference waiting for its computation: where it goes and the name.
struct PendingComp<'a> {
    comp: CompId,
    instr: InstrId,
    attr: usize,
    /// Index in an `Attr::Comps` list; `None` for `Attr::Comp`.
    slot: Option<usize>,
    name: &'a str,
    offset: usize,
}

/// A reference inside one instruction's attributes, before the instruction has a place.
struct LocalRef<'a> {
    attr: usize,
    slot: Option<usize>,
    name: &'a str,
    offset: usize,
}

struct Parser<'a> {
    c: Cursor<'a>,
    comps: Vec<Computation>,
    comp_names: FastMap<String, CompId>,
    /// Computations made from async syntax sugar (their names may yield to real ones).
    generated: Vec<CompId>,
    pending: Vec<PendingComp<'a>>,
    lines: LineTracker,
    /// Names given to nested instructions (`add(%p, negate(%p))`) in the current computation.
    anon: std::collections::HashSet<String>,
    /// How many nested computations (`to_apply={...}`) enclose the one being read.
    inline_depth: usize,
    /// The opcode each async-start written as sugar (`custom-call-start`) wraps, by the
    /// start's name: its `-update`/`-done` sugar must name the same opcode.
    sugar_starts: std::collections::HashMap<String, Opcode>,
}

/// Line and column of increasing byte offsets, in time linear in the input overall (the
/// instructions are read in text order; a smaller offset starts over from the beginning).
#[derive(Default)]
struct LineTracker {
    offset: usize,
    line: u32,
    /// Characters between the start of the line and `offset`.
    col: u32,
}

impl LineTracker {
    fn pos(&mut self, src: &str, offset: usize) -> SourcePos {
        let offset = offset.min(src.len());
        if offset < self.offset {
            *self = LineTracker::default();
        }
        for &b in &src.as_bytes()[self.offset..offset] {
            if b == b'\n' {
                self.line = self.line.saturating_add(1);
                self.col = 0;
            } else if b & 0xc0 != 0x80 {
                // Not a UTF-8 continuation byte: a new character.
                self.col = self.col.saturating_add(1);
            }
        }
        self.offset = offset;
        SourcePos {
            line: self.line.saturating_add(1),
            col: self.col.saturating_add(1),
        }
    }
}

const TABLE_NAMES: [&str; 4] = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

/// The result shape XLA infers for an instruction written without one, for the opcodes whose
/// shape follows from their operands alone: `tuple`, `get-tuple-element`, the elementwise ops
/// (the shape of the operand that carries the data: the second of `select` and `clamp`), the
/// ops that keep their operand's shape (`copy`, `while`, `reverse`, ...), `transpose`,
/// `after-all`, `dot` (of the lhs type), `pad`, `concatenate`, `sort` (its operands' shapes),
/// `reduce` and `reduce-window` (of the reducer's result types, `reducer_root`, when it is read,
/// else of the init values' types) and `convolution` (of the input's type). (A `call`, `fusion`
/// or `conditional` takes its computation's root shape, in [`Parser::instruction_rhs`].)
/// The shape XLA's parser gives a host or channel transfer, from its operands: `send` (data,
/// u32[] context, token), `recv` (the declared shape's first element as the data, u32[], token),
/// `send-done` and `outfeed` a token, `recv-done` (the recv's data, token). `None` for other
/// opcodes, or when the operands do not have the shapes these need (the verifier says so).
fn transfer_shape(i: &Instruction, instrs: &[Instruction]) -> Option<Shape> {
    let operand = |k: usize| i.operands.get(k).map(|&o| &instrs[o].shape);
    let context = || Shape::scalar(crate::PrimitiveType::U32);
    match i.opcode {
        Opcode::Send => Some(Shape::Tuple(vec![
            operand(0)?.clone(),
            context(),
            Shape::Token,
        ])),
        Opcode::Recv => match &i.shape {
            Shape::Tuple(t) if !t.is_empty() => {
                Some(Shape::Tuple(vec![t[0].clone(), context(), Shape::Token]))
            }
            _ => None,
        },
        Opcode::SendDone | Opcode::Outfeed => Some(Shape::Token),
        Opcode::RecvDone => match operand(0)? {
            Shape::Tuple(t) if !t.is_empty() => {
                Some(Shape::Tuple(vec![t[0].clone(), Shape::Token]))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether two shapes have the same element types and dimensions (layouts and dynamic-size
/// flags aside), as a written operand shape must have its instruction's.
fn same_type_and_dims(a: &Shape, b: &Shape) -> bool {
    match (a, b) {
        (Shape::Array(x), Shape::Array(y)) | (Shape::Buffer(x), Shape::Buffer(y)) => {
            x.ty == y.ty && x.dims == y.dims
        }
        (Shape::Tuple(x), Shape::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_type_and_dims(p, q))
        }
        (Shape::Token, Shape::Token) | (Shape::Opaque, Shape::Opaque) => true,
        _ => false,
    }
}

fn infer_shape<'s>(
    i: &Instruction,
    instrs: &'s [Instruction],
    reducer_root: Option<&Shape>,
) -> Result<Shape, String> {
    let operand = |k: usize| -> Result<&'s Shape, String> {
        i.operands.get(k).map(|&o| &instrs[o].shape).ok_or_else(|| {
            format!(
                "{} has no operand {k} to infer its result shape from",
                i.opcode
            )
        })
    };
    let array = |s: &'s Shape, op: &str| -> Result<&'s ArrayShape, String> {
        s.as_array().ok_or_else(|| {
            format!(
                "{op}'s operand is {}, not an array",
                crate::print::shape_to_string(s)
            )
        })
    };
    match i.opcode {
        // The operand's shape, as it is.
        Opcode::Copy
        | Opcode::OptimizationBarrier
        | Opcode::AddDependency
        | Opcode::While
        | Opcode::Reverse
        | Opcode::Domain => operand(0).cloned(),
        Opcode::AfterAll => Ok(Shape::Token),
        Opcode::Dot => {
            let (l, r) = (array(operand(0)?, "dot")?, array(operand(1)?, "dot")?);
            let dims = |name: &str| i.ints(name).unwrap_or(&[]).to_vec();
            let (lb, rb) = (dims("lhs_batch_dims"), dims("rhs_batch_dims"));
            let (lc, rc) = (dims("lhs_contracting_dims"), dims("rhs_contracting_dims"));
            let pick = |a: &ArrayShape, ks: &[i64]| -> Result<Vec<i64>, String> {
                ks.iter()
                    .map(|&k| {
                        usize::try_from(k)
                            .ok()
                            .and_then(|k| a.dims.get(k).copied())
                            .ok_or_else(|| format!("dot dimension {k} is out of range"))
                    })
                    .collect()
            };
            let free = |a: &ArrayShape, b: &[i64], c: &[i64]| -> Vec<i64> {
                (0..a.dims.len() as i64)
                    .filter(|k| !b.contains(k) && !c.contains(k))
                    .map(|k| a.dims[k as usize])
                    .collect()
            };
            let mut out = pick(l, &lb)?;
            pick(r, &rb)?;
            pick(l, &lc)?;
            pick(r, &rc)?;
            out.extend(free(l, &lb, &lc));
            out.extend(free(r, &rb, &rc));
            Ok(Shape::Array(ArrayShape::new(l.ty, out)))
        }
        Opcode::Pad => {
            let a = array(operand(0)?, "pad")?;
            let Some(Attr::Padding(p)) = i.attr("padding") else {
                return Err("pad needs padding= to infer its result shape".into());
            };
            if p.len() != a.dims.len() {
                return Err("pad's padding does not fit its operand".into());
            }
            let dims = a
                .dims
                .iter()
                .zip(p)
                .map(|(&n, p)| n + p.low + p.high + p.interior * (n - 1).max(0))
                .collect();
            Ok(Shape::Array(ArrayShape::new(a.ty, dims)))
        }
        Opcode::Concatenate => {
            let Some(&[d]) = i.ints("dimensions") else {
                return Err("concatenate needs dimensions={d} to infer its result shape".into());
            };
            let first = array(operand(0)?, "concatenate")?;
            let d = usize::try_from(d)
                .ok()
                .filter(|&d| d < first.dims.len())
                .ok_or("concatenate's dimension is out of range")?;
            let mut dims = first.dims.clone();
            dims[d] = 0;
            for k in 0..i.operands.len() {
                dims[d] += array(operand(k)?, "concatenate")?
                    .dims
                    .get(d)
                    .copied()
                    .unwrap_or(0);
            }
            Ok(Shape::Array(ArrayShape::new(first.ty, dims)))
        }
        Opcode::Transpose => {
            let Some(Attr::Ints(perm)) = i.attr("dimensions") else {
                return Err("transpose needs dimensions= to infer its result shape".into());
            };
            match operand(0)? {
                Shape::Array(a) if perm.len() == a.dims.len() => {
                    let at = |k: &i64| usize::try_from(*k).ok().filter(|&k| k < a.dims.len());
                    let idx: Option<Vec<usize>> = perm.iter().map(at).collect();
                    let idx = idx.ok_or("transpose's dimensions are out of range")?;
                    Ok(Shape::Array(ArrayShape {
                        ty: a.ty,
                        dims: idx.iter().map(|&k| a.dims[k]).collect(),
                        dynamic: idx.iter().map(|&k| a.dynamic[k]).collect(),
                        layout: None,
                    }))
                }
                other => Err(format!(
                    "transpose's dimensions do not fit its operand {}",
                    crate::print::shape_to_string(other)
                )),
            }
        }
        Opcode::Tuple => Ok(Shape::Tuple(
            i.operands
                .iter()
                .map(|&o| instrs[o].shape.clone())
                .collect(),
        )),
        Opcode::GetTupleElement => {
            let Some(Attr::Int(k)) = i.attr("index") else {
                return Err("get-tuple-element needs index= to infer its result shape".into());
            };
            match operand(0)? {
                Shape::Tuple(es) => usize::try_from(*k)
                    .ok()
                    .and_then(|k| es.get(k))
                    .cloned()
                    .ok_or_else(|| {
                        format!("index={k} is outside the operand's tuple of {}", es.len())
                    }),
                other => Err(format!(
                    "get-tuple-element's operand is {}, not a tuple",
                    crate::print::shape_to_string(other)
                )),
            }
        }
        op if op.is_elementwise() => {
            let k = usize::from(matches!(op, Opcode::Select | Opcode::Clamp));
            match operand(k)? {
                Shape::Array(a) => Ok(Shape::Array(ArrayShape {
                    ty: op.elementwise_result_type(a.ty)?,
                    dims: a.dims.clone(),
                    dynamic: a.dynamic.clone(),
                    layout: None,
                })),
                other => Err(format!(
                    "{op}'s operand {k} is {}, not an array",
                    crate::print::shape_to_string(other)
                )),
            }
        }
        Opcode::Sort => {
            let v: Vec<Shape> = (0..i.operands.len())
                .map(|k| operand(k).map(Shape::without_layout))
                .collect::<Result<_, _>>()?;
            match v.len() {
                0 => Err("sort has no operand to infer its result shape from".into()),
                1 => Ok(v.into_iter().next().unwrap_or(Shape::Token)),
                _ => Ok(Shape::Tuple(v)),
            }
        }
        Opcode::Reduce | Opcode::ReduceWindow => {
            let n2 = i.operands.len();
            if n2 == 0 || n2 % 2 != 0 {
                return Err(format!(
                    "{} takes N inputs and N init values, got {n2} operands",
                    i.opcode
                ));
            }
            let n = n2 / 2;
            let input = array(operand(0)?, i.opcode.name())?;
            let dims = if i.opcode == Opcode::Reduce {
                let rd = i.ints("dimensions").unwrap_or(&[]);
                input
                    .dims
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !rd.contains(&(*k as i64)))
                    .map(|(_, &d)| d)
                    .collect()
            } else {
                let w = i
                    .window()
                    .ok_or("reduce-window needs window= to infer its result shape")?;
                crate::verify::window_output_dims(w, &input.dims)?
            };
            // The reducer's result types; the init values' where the reducer is not read yet.
            let tys: Vec<PrimitiveType> = match reducer_root {
                Some(Shape::Array(a)) if n == 1 => vec![a.ty],
                Some(Shape::Tuple(t)) if t.len() == n && t.iter().all(Shape::is_array) => {
                    t.iter().filter_map(Shape::element_type).collect()
                }
                _ => (n..n2)
                    .map(|k| Ok(array(operand(k)?, i.opcode.name())?.ty))
                    .collect::<Result<_, String>>()?,
            };
            let mut v: Vec<Shape> = tys
                .into_iter()
                .map(|ty| Shape::array(ty, dims.clone()))
                .collect();
            Ok(if v.len() == 1 {
                v.pop().unwrap_or(Shape::Token)
            } else {
                Shape::Tuple(v)
            })
        }
        Opcode::Convolution => {
            let (x, k) = (
                array(operand(0)?, "convolution")?,
                array(operand(1)?, "convolution")?,
            );
            let d = i
                .conv_dims()
                .ok_or("convolution needs dim_labels= to infer its result shape")?;
            let dims = crate::verify::conv_output_dims(
                x,
                k,
                d,
                i.window(),
                i.int("feature_group_count").unwrap_or(1),
                i.int("batch_group_count").unwrap_or(1),
            )?;
            // The wider of the two element types, as XLA's inference picks.
            let ty = if k.ty.bit_width() > x.ty.bit_width() {
                k.ty
            } else {
                x.ty
            };
            Ok(Shape::array(ty, dims))
        }
        op => Err(format!(
            "the result shape of {op} is left out: hlo-diff infers it only for tuple, \
             get-tuple-element, elementwise ops, copy, while, transpose, reverse, after-all, \
             add-dependency, opt-barrier, domain, dot, pad, concatenate, sort, reduce, \
             reduce-window, convolution, call, fusion and conditional; write it before the \
             opcode"
        )),
    }
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Parser<'a> {
        Parser {
            c: Cursor::new(src),
            comps: Vec::new(),
            comp_names: FastMap::default(),
            generated: Vec::new(),
            pending: Vec::new(),
            lines: LineTracker::default(),
            anon: Default::default(),
            sugar_starts: Default::default(),
            inline_depth: 0,
        }
    }

    fn module(&mut self) -> PResult<Module> {
        let c = &mut self.c;
        // Without a header XLA names the module after its entry computation (below).
        let headed = c.eat_word("HloModule")?;
        let mut name = None;
        let mut header_attrs = Vec::new();
        if headed {
            c.skip_inline_ws()?;
            let name_at = c.pos;
            if c.peek() == Some(b'%') {
                c.pos += 1;
            }
            let starts = c
                .peek()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
            let n = c.name_chars();
            // XLA also reads the older `HloModule name:`.
            if c.peek() == Some(b':') {
                c.pos += 1;
            }
            if !starts
                || !matches!(
                    c.peek(),
                    None | Some(b' ' | b'\t' | b'\r' | b'\n' | b',' | b'/')
                )
            {
                return err_at(
                    name_at,
                    "expected the module name after 'HloModule' (a letter or '_', then letters, \
                     digits, '_', '.' or '-')",
                );
            }
            name = Some(n.to_string());
            header_attrs = self.trailing_attrs("a module header attribute")?;
        } else {
            c.skip_ws()?;
            if c.at_end() {
                return err_at(
                    c.pos,
                    "expected 'HloModule' or a computation, found end of input",
                );
            }
        }

        let mut stack_frame_tables = Vec::new();
        let mut entry: Option<(CompId, usize)> = None;
        loop {
            self.c.skip_ws()?;
            if self.c.at_end() {
                break;
            }
            let at = self.c.pos;
            let save = self.c.pos;
            if let Ok(word) = self.c.ident("") {
                if TABLE_NAMES.contains(&word) {
                    stack_frame_tables.push(word.to_string());
                    self.table_lines(&mut stack_frame_tables)?;
                    continue;
                }
            }
            self.c.pos = save;
            let is_entry = self.c.eat_word("ENTRY")?;
            let id = self.computation()?;
            if is_entry {
                if let Some((_, first)) = entry {
                    return err_at(
                        at,
                        format!(
                            "a second ENTRY computation (the first is at {})",
                            line_col(self.c.src, first)
                        ),
                    );
                }
                entry = Some((id, at));
            }
        }
        if self.comps.is_empty() {
            return err_at(self.c.pos, "the module has no computations");
        }
        self.resolve_pending()?;
        let entry = match entry {
            Some((id, _)) => id,
            None => {
                // XLA's rule: without ENTRY the last computation is the entry.
                let mut id = self.comps.len() - 1;
                while self.generated.contains(&id) && id > 0 {
                    id -= 1;
                }
                id
            }
        };
        let name = name.unwrap_or_else(|| format!("module_{}", self.comps[entry].name));
        Ok(Module {
            name,
            header_attrs,
            stack_frame_tables,
            computations: std::mem::take(&mut self.comps),
            entry,
        })
    }

    /// The numbered lines of a stack-frame table, verbatim.
    fn table_lines(&mut self, out: &mut Vec<String>) -> PResult<()> {
        loop {
            self.c.skip_ws()?;
            if !self.c.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Ok(());
            }
            let start = self.c.pos;
            // A table line may hold quoted strings; an escaped newline never ends it.
            while let Some(b) = self.c.peek() {
                match b {
                    b'\n' => break,
                    b'"' => {
                        self.c.skip_string()?;
                    }
                    _ => self.c.pos += 1,
                }
            }
            out.push(self.c.src[start..self.c.pos].trim_end().to_string());
        }
    }

    /// `, name=value` items, values verbatim. Layout is free, as for XLA's parser: the list
    /// ends where no ',' follows (on this line or a later one).
    fn trailing_attrs(&mut self, what: &str) -> PResult<Vec<(String, String)>> {
        let mut out = Vec::new();
        while self.c.eat(b',')? {
            let k = self.c.ident(what)?;
            self.c.expect(b'=', &format!("after {k}"))?;
            let v = self.c.raw_value(k)?;
            out.push((k.to_string(), v.to_string()));
        }
        Ok(out)
    }

    fn computation(&mut self) -> PResult<CompId> {
        let name_at = {
            self.c.skip_ws()?;
            self.c.pos
        };
        let name = self
            .c
            .name("a computation name (or 'HloModule' at the start)")?;
        let mut declared = None;
        if self.c.eat(b'(')? {
            // The signature repeats the parameters' and the root's shapes: read, and the
            // result checked against the root (XLA's parser refuses a root of another shape).
            if !self.c.eat(b')')? {
                loop {
                    self.c.name("a parameter name")?;
                    // XLA's parser also reads `(p f32[2])`, without the ':'.
                    self.c.eat(b':')?;
                    self.c.shape(0)?;
                    if self.c.eat(b')')? {
                        break;
                    }
                    self.c.expect(b',', "between signature parameters")?;
                }
            }
            self.c.skip_ws()?;
            if !(self.c.peek() == Some(b'-') && self.c.peek_at(1) == Some(b'>')) {
                return err_at(
                    self.c.pos,
                    format!(
                        "expected '->' and the result shape, found {}",
                        self.c.describe_here()
                    ),
                );
            }
            self.c.pos += 2;
            self.c.skip_ws()?;
            let at = self.c.pos;
            declared = Some((self.c.shape(0)?, at));
        }
        let open = {
            self.c.skip_ws()?;
            self.c.pos
        };
        self.c
            .expect(b'{', &format!("to start the body of computation {name}"))?;
        let (instrs, root, local_pending) = self.computation_body(name, open)?;
        // XLA's parser refuses a signature whose result is not the root's.
        if let Some((sig, at)) = declared {
            let r = &instrs[root].shape;
            if !same_type_and_dims(&sig, r) {
                return err_at(
                    at,
                    format!(
                        "computation {name} declares the result {}, its root instruction {} is {}",
                        crate::print::shape_to_string(&sig),
                        instrs[root].name,
                        crate::print::shape_to_string(r)
                    ),
                );
            }
        }
        let trailing = self.trailing_attrs("a computation attribute")?;
        let id = self.comps.len();
        self.add_comp_name(name, id, name_at)?;
        self.push_computation(name.to_string(), instrs, root, local_pending, trailing);
        Ok(id)
    }

    /// Adds a computation read from the text, with its pending computation references.
    fn push_computation(
        &mut self,
        name: String,
        instrs: Vec<Instruction>,
        root: InstrId,
        local_pending: Vec<(InstrId, LocalRef<'a>)>,
        trailing_attrs: Vec<(String, String)>,
    ) {
        let id = self.comps.len();
        for (instr, r) in local_pending {
            self.pending.push(PendingComp {
                comp: id,
                instr,
                attr: r.attr,
                slot: r.slot,
                name: r.name,
                offset: r.offset,
            });
        }
        self.comps.push(Computation {
            name,
            instructions: instrs,
            root,
            trailing_attrs,
        });
    }

    /// A computation written in place of a computation name (`to_apply={ ROOT r = ... }`,
    /// XLA's nested computation), starting at its `{`: a new computation of the module, named
    /// `base` (made unique; a computation of the text with that name takes it back).
    fn inline_computation(&mut self, base: &str) -> PResult<CompId> {
        let open = self.c.pos;
        if self.inline_depth >= MAX_DEPTH {
            return err_at(
                open,
                format!("computations nested deeper than {MAX_DEPTH} levels"),
            );
        }
        self.c.expect(b'{', "to start a nested computation")?;
        // The enclosing computation's nested-instruction names are its own.
        let outer_anon = std::mem::take(&mut self.anon);
        self.inline_depth += 1;
        let body = self.computation_body(base, open);
        self.inline_depth -= 1;
        self.anon = outer_anon;
        let (instrs, root, local_pending) = body?;
        let name = if self.comp_names.contains_key(base) {
            self.fresh_comp_name(base)
        } else {
            base.to_string()
        };
        let id = self.comps.len();
        self.comp_names.insert(name.clone(), id);
        self.generated.push(id);
        self.push_computation(name, instrs, root, local_pending, Vec::new());
        Ok(id)
    }

    /// The instructions of a computation after its `{`, through its `}`: the instructions, the
    /// root and the computation references still to resolve.
    #[allow(clippy::type_complexity)]
    fn computation_body(
        &mut self,
        name: &str,
        open: usize,
    ) -> PResult<(Vec<Instruction>, InstrId, Vec<(InstrId, LocalRef<'a>)>)> {
        let mut instrs: Vec<Instruction> = Vec::new();
        let mut names: FastMap<&'a str, InstrId> = FastMap::default();
        self.anon.clear();
        let mut local_pending: Vec<(InstrId, LocalRef<'a>)> = Vec::new();
        // Async wrapped computations made while reading this one: (instruction, computation, refs).
        let mut root: Option<(InstrId, usize)> = None;
        loop {
            self.c.skip_ws()?;
            match self.c.peek() {
                None => {
                    return err_at(
                        open,
                        format!("computation {name} is not closed: '{{' without '}}'"),
                    )
                }
                Some(b'}') => {
                    self.c.pos += 1;
                    break;
                }
                _ => {}
            }
            let line_at = self.c.pos;
            let is_root = self.c.eat_word("ROOT")?;
            let (instr, refs) = self.instruction(&mut instrs, &names)?;
            let id = instrs.len();
            if is_root {
                if let Some((_, first)) = root {
                    return err_at(
                        line_at,
                        format!(
                            "a second ROOT in computation {name} (the first is at {})",
                            line_col(self.c.src, first)
                        ),
                    );
                }
                root = Some((id, line_at));
            }
            let iname: &'a str = instr.1;
            if self.anon.contains(iname) {
                // A nested instruction took this name first: it yields.
                let fresh = self.anon_name(iname, &names);
                if let Some(i) = instrs.iter_mut().find(|i| i.name == iname) {
                    i.name = fresh.clone();
                }
                self.anon.remove(iname);
                self.anon.insert(fresh);
            }
            if names.insert(iname, id).is_some() {
                return err_at(
                    instr.2,
                    format!("instruction name %{iname} is used twice in computation {name}"),
                );
            }
            instrs.push(instr.0);
            local_pending.extend(refs.into_iter().map(|r| (id, r)));
        }
        if instrs.is_empty() {
            return err_at(open, format!("computation {name} has no instructions"));
        }
        let root = root.map_or(instrs.len() - 1, |(r, _)| r);
        Ok((instrs, root, local_pending))
    }

    fn add_comp_name(&mut self, name: &str, id: CompId, at: usize) -> PResult<()> {
        if let Some(&other) = self.comp_names.get(name) {
            if let Some(g) = self.generated.iter().position(|&g| g == other) {
                // A computation made from async sugar took a real computation's name: rename it.
                let _ = g;
                let fresh = self.fresh_comp_name(name);
                self.comp_names.remove(name);
                self.comps[other].name = fresh.clone();
                self.comp_names.insert(fresh, other);
            } else {
                return err_at(at, format!("computation name %{name} is used twice"));
            }
        }
        self.comp_names.insert(name.to_string(), id);
        Ok(())
    }

    fn fresh_comp_name(&self, base: &str) -> String {
        let mut n = 1;
        loop {
            let cand = format!("{base}.{n}");
            if !self.comp_names.contains_key(&cand) {
                return cand;
            }
            n += 1;
        }
    }

    /// One instruction (after `ROOT`). Returns it with its name and the name's offset, and
    /// its unresolved computation references.
    #[allow(clippy::type_complexity)]
    fn instruction(
        &mut self,
        instrs: &mut Vec<Instruction>,
        names: &FastMap<&'a str, InstrId>,
    ) -> PResult<((Instruction, &'a str, usize), Vec<LocalRef<'a>>)> {
        let c = &mut self.c;
        c.skip_ws()?;
        let name_at = c.pos;
        let name = c.name("an instruction name")?;
        c.expect(b'=', &format!("after the instruction name %{name}"))?;
        let (instr, refs) = self.instruction_rhs(name, name_at, instrs, names, 0)?;
        Ok(((instr, name, name_at), refs))
    }

    /// What follows `name =`: the shape (which XLA may leave out), the opcode, the operands and,
    /// unless the instruction is nested in another's operands (`depth` > 0), the attributes.
    /// Nested instructions are pushed onto `instrs` as they are read.
    fn instruction_rhs(
        &mut self,
        name: &str,
        name_at: usize,
        instrs: &mut Vec<Instruction>,
        names: &FastMap<&'a str, InstrId>,
        depth: usize,
    ) -> PResult<(Instruction, Vec<LocalRef<'a>>)> {
        let c = &mut self.c;
        if depth > MAX_DEPTH {
            return err_at(
                name_at,
                format!("instructions nested deeper than {MAX_DEPTH} levels"),
            );
        }
        // XLA infers a result shape left out (`ROOT %t = tuple(%a, %b)`).
        c.skip_ws()?;
        let word_at = c.pos;
        let word = c.name_chars();
        let inferred = Opcode::from_name(word).is_some() && c.peek() == Some(b'(');
        c.pos = word_at;
        let shape = if inferred {
            Shape::Tuple(Vec::new())
        } else {
            c.shape(0)?
        };
        c.skip_ws()?;
        let op_at = c.pos;
        while c
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            c.pos += 1;
        }
        let op_text = &c.src[op_at..c.pos];
        if op_text.is_empty() {
            return err_at(
                op_at,
                format!("expected an opcode, found {}", c.describe_here()),
            );
        }
        // Real opcodes first; then XLA's async sugar `<op>-start/-update/-done`.
        let (opcode, wrapped) = match Opcode::from_name(op_text) {
            Some(op) => (op, None),
            None => {
                let sugar = [
                    ("-start", Opcode::AsyncStart),
                    ("-update", Opcode::AsyncUpdate),
                    ("-done", Opcode::AsyncDone),
                ]
                .into_iter()
                .find_map(|(suffix, op)| {
                    let base = op_text.strip_suffix(suffix)?;
                    Some((op, Opcode::from_name(base)?))
                });
                match sugar {
                    Some((op, base)) => (op, Some(base)),
                    None => return err_at(op_at, format!("unknown opcode '{op_text}'")),
                }
            }
        };
        c.skip_ws()?;
        if c.peek() != Some(b'(') {
            return err_at(
                c.pos,
                format!(
                    "expected '(' after opcode {op_text}, found {}",
                    c.describe_here()
                ),
            );
        }
        c.pos += 1;
        let mut instr = Instruction::new(name, opcode, shape);
        match opcode {
            Opcode::Parameter => {
                c.skip_ws()?;
                let at = c.pos;
                let n = c.int("the parameter number")?;
                if n < 0 {
                    return err_at(at, format!("negative parameter number {n}"));
                }
                instr.parameter_number = Some(n);
                c.expect(b')', "after the parameter number")?;
            }
            Opcode::Constant if inferred => {
                return err_at(op_at, "a constant needs its shape before the opcode");
            }
            Opcode::Constant => {
                c.skip_ws()?;
                if c.b[c.pos..].starts_with(b"{...}") {
                    c.pos += 5;
                    instr.constant = Some(Constant::Elided);
                } else {
                    let lit = c.literal(&instr.shape, 0)?;
                    instr.constant = Some(Constant::Literal(lit));
                }
                c.expect(b')', "to close the constant")?;
            }
            _ => {
                if !c.eat(b')')? {
                    loop {
                        let o = self.operand(instrs, names, depth)?;
                        instr.operands.push(o);
                        if self.c.eat(b')')? {
                            break;
                        }
                        self.c.expect(b',', "between operands")?;
                    }
                }
            }
        }
        // A nested instruction has no attributes: a ',' after it is its user's.
        let refs = if depth == 0 {
            self.instr_attrs(&mut instr, instrs, names)?
        } else {
            Vec::new()
        };
        let callee_attr = match opcode {
            Opcode::Call => ["to_apply", "to_apply"],
            Opcode::Fusion => ["calls", "calls"],
            Opcode::Conditional => ["true_computation", "branch_computations"],
            _ => ["", ""],
        };
        if inferred && !callee_attr[0].is_empty() {
            // The called computation's root shape (of the first branch for a conditional),
            // when it is already read.
            let callee = self.callee(&instr, &refs, &callee_attr);
            instr.shape = match callee {
                Some(c) => c.instructions[c.root].shape.clone(),
                None => {
                    return err_at(
                        op_at,
                        format!(
                            "the result shape of {opcode} is left out and its {} computation is \
                             not read yet: write the shape, or the computation first",
                            callee_attr[0]
                        ),
                    )
                }
            };
        } else if inferred {
            let reducer_root = self
                .callee(&instr, &refs, &["to_apply"])
                .map(|c| c.instructions[c.root].shape.clone());
            instr.shape = infer_shape(&instr, instrs, reducer_root.as_ref())
                .or_else(|why| err_at(op_at, why))?;
        }
        // XLA's parser builds these from their operands (a recv from its declared shape's first
        // element), whatever else the text declares: so does the IR, and the print says what
        // XLA read (the text `recv-done` declared `token[]` is `(u32[8], token[])` to XLA).
        if let Some(s) = transfer_shape(&instr, instrs) {
            instr.shape = s;
        }
        // XLA reads a broadcast of a scalar without `dimensions=` as `dimensions={}`: so does
        // the IR (and the print says it).
        if opcode == Opcode::Broadcast
            && instr.attr("dimensions").is_none()
            && instr.operands.first().is_some_and(|&o| {
                instrs[o]
                    .shape
                    .as_array()
                    .is_some_and(|a| a.dims.is_empty())
            })
        {
            instr
                .attrs
                .push(("dimensions".to_string(), Attr::Ints(Vec::new())));
        }
        instr.pos = Some(self.lines.pos(self.c.src, name_at));
        match wrapped {
            Some(_) if depth > 0 => err_at(op_at, "async syntax sugar cannot be nested"),
            Some(base) if opcode == Opcode::AsyncStart => {
                self.sugar_starts.insert(name.to_string(), base);
                let refs = self.desugar_async_start(&mut instr, base, refs, name_at, instrs)?;
                Ok((instr, refs))
            }
            Some(base) => {
                // `<op>-update` / `<op>-done`: the start it continues must wrap `<op>` (XLA's
                // parser refuses `add-update` of a `custom-call-start`).
                let mut at = instr.operands.first().copied();
                while let Some(k) = at.filter(|&k| instrs[k].opcode == Opcode::AsyncUpdate) {
                    at = instrs[k].operands.first().copied();
                }
                match at.and_then(|k| self.sugar_starts.get(&instrs[k].name)) {
                    Some(&started) if started != base => err_at(
                        op_at,
                        format!(
                            "{op_text} continues an async {}-start: the sugar must name the                              opcode the start wraps",
                            started.name()
                        ),
                    ),
                    _ => Ok((instr, refs)),
                }
            }
            None => Ok((instr, refs)),
        }
    }

    /// The opcode of a nested instruction starting here (an optional shape, then an opcode and
    /// its `(`); the cursor is left anywhere.
    fn nested_opcode(&mut self) -> Option<Opcode> {
        Opcode::from_name(self.c.opcode_after_optional_shape()?)
    }

    /// A fresh name for a nested instruction (`negate.anon`, `negate.anon.1`, ... as XLA names
    /// them), from `base` (`negate.anon`).
    fn anon_name(&self, base: &str, names: &FastMap<&'a str, InstrId>) -> String {
        let mut cand = base.to_string();
        let mut n = 0;
        while names.contains_key(cand.as_str()) || self.anon.contains(&cand) {
            n += 1;
            cand = format!("{base}.{n}");
        }
        cand
    }

    /// `[shape] %name`, resolved in the current computation; or an instruction written in its
    /// place (`add(%p, f32[] negate(%p))`: XLA's nested instruction, without attributes),
    /// pushed onto `instrs` under a fresh name.
    fn operand(
        &mut self,
        instrs: &mut Vec<Instruction>,
        names: &FastMap<&'a str, InstrId>,
        depth: usize,
    ) -> PResult<InstrId> {
        self.c.skip_ws()?;
        let start = self.c.pos;
        if let Some(op) = self.nested_opcode() {
            let name = self.anon_name(&format!("{}.anon", op.name()), names);
            self.anon.insert(name.clone());
            self.c.pos = start;
            let (instr, _) = self.instruction_rhs(&name, start, instrs, names, depth + 1)?;
            instrs.push(instr);
            return Ok(instrs.len() - 1);
        }
        self.c.pos = start;
        let c = &mut self.c;
        let written =
            if c.peek() == Some(b'(') || (c.peek() == Some(b'b') && c.peek_at(1) == Some(b'(')) {
                Some(c.shape(0)?)
            } else if c.peek() != Some(b'%') {
                let save = c.pos;
                let word = c.name_chars();
                match PrimitiveType::from_name(word) {
                    Some(ty) if c.peek() == Some(b'[') => Some(c.array_shape_after_type(ty, save)?),
                    _ => {
                        c.pos = save;
                        None
                    }
                }
            } else {
                None
            };
        c.skip_ws()?;
        let at = c.pos;
        let n = c.name("an operand name")?;
        let Some(&id) = names.get(n) else {
            return err_at(
                at,
                format!("instruction %{n} is not defined before this use in the computation"),
            );
        };
        // XLA's parser refuses an operand whose written shape is not its instruction's.
        match written {
            Some(w) if !same_type_and_dims(&w, &instrs[id].shape) => err_at(
                start,
                format!(
                    "operand %{n} is written as {} but is {}",
                    crate::print::shape_to_string(&w),
                    crate::print::shape_to_string(&instrs[id].shape)
                ),
            ),
            _ => Ok(id),
        }
    }

    /// The `, name=value` attributes of an instruction.
    fn instr_attrs(
        &mut self,
        instr: &mut Instruction,
        _instrs: &[Instruction],
        names: &FastMap<&'a str, InstrId>,
    ) -> PResult<Vec<LocalRef<'a>>> {
        let mut refs = Vec::new();
        // Layout is free, as for XLA's parser: an attribute may follow its ',' on the next line,
        // and the instruction ends where no ',' follows.
        while self.c.eat(b',')? {
            let c = &mut self.c;
            c.skip_ws()?;
            // XLA sometimes prints an empty attribute (`, , backend_config=...`); and a
            // trailing comma before the next instruction or the end of the computation is
            // harmless.
            if matches!(c.peek(), Some(b',') | Some(b'}') | None) || c.at_instruction_start() {
                continue;
            }
            let key_at = c.pos;
            let key = c.ident("an attribute name")?;
            c.expect(b'=', &format!("after attribute name {key}"))?;
            if instr.attrs.iter().any(|(k, _)| k == key) {
                return err_at(key_at, format!("attribute {key} is given twice"));
            }
            let attr_index = instr.attrs.len();
            let value = match attr_kind(key) {
                AttrKind::Int => Attr::Int(c.int(key)?),
                AttrKind::Bool => {
                    if c.eat_word("true")? {
                        Attr::Bool(true)
                    } else if c.eat_word("false")? {
                        Attr::Bool(false)
                    } else {
                        return err_at(
                            c.pos,
                            format!("{key} takes true or false, found {}", c.describe_here()),
                        );
                    }
                }
                // collective-permute's slice_sizes is a list of lists (`{{128,32}}`): verbatim.
                AttrKind::Ints if c.b[c.pos..].starts_with(b"{{") => {
                    Attr::Raw(c.raw_value(key)?.to_string())
                }
                AttrKind::Ints => Attr::Ints(c.int_list(key)?),
                AttrKind::Str => Attr::Str(c.string(key)?),
                AttrKind::Ident => {
                    c.skip_ws()?;
                    let at = c.pos;
                    let v = c.name_chars();
                    if v.is_empty() {
                        return err_at(
                            at,
                            format!("{key} takes a word, found {}", c.describe_here()),
                        );
                    }
                    Attr::Ident(v.to_string())
                }
                AttrKind::Comp | AttrKind::Comps => {
                    let base = format!("{}.{key}", instr.name);
                    self.comp_attr(key, attr_index, &base, &mut refs)?
                }
                AttrKind::Window => Attr::Window(c.window()?),
                // Labels with '?' (a custom-call's unknown dimensions, `b01f?_01i?o->b01f?`)
                // are kept verbatim.
                AttrKind::ConvDims if c.bare_value_has(b'?') => {
                    Attr::Raw(c.raw_value(key)?.to_string())
                }
                AttrKind::ConvDims => Attr::ConvDims(c.conv_dims()?),
                AttrKind::Padding => Attr::Padding(c.padding()?),
                AttrKind::Slice => Attr::Slice(c.slice()?),
                AttrKind::Instrs => {
                    c.expect(b'{', &format!("to start {key}"))?;
                    let mut ids = Vec::new();
                    if !c.eat(b'}')? {
                        loop {
                            c.skip_ws()?;
                            let at = c.pos;
                            let n = c.name("an instruction name")?;
                            match names.get(n) {
                                Some(&id) => ids.push(id),
                                None => {
                                    return err_at(
                                        at,
                                        format!("instruction %{n} is not defined before this use"),
                                    )
                                }
                            }
                            if c.eat(b'}')? {
                                break;
                            }
                            c.expect(b',', "between instruction names")?;
                        }
                    }
                    Attr::Instrs(ids)
                }
                AttrKind::Raw => Attr::Raw(c.raw_value(key)?.to_string()),
            };
            instr.attrs.push((key.to_string(), value));
        }
        // What follows an instruction: the next one (on this line or a later one), or the end
        // of the computation.
        let c = &mut self.c;
        let end = c.pos;
        c.skip_ws()?;
        let next = matches!(c.peek(), None | Some(b'}')) || c.at_instruction_start();
        c.pos = end;
        if next {
            Ok(refs)
        } else {
            c.skip_ws()?;
            err_at(
                c.pos,
                format!(
                    "expected ',' or the end of the instruction, found {}",
                    c.describe_here()
                ),
            )
        }
    }

    /// The first computation that one of the attributes `keys` of `instr` names, when it is read
    /// already (a computation written in place, or a name defined earlier in the text).
    fn callee(
        &self,
        instr: &Instruction,
        refs: &[LocalRef<'a>],
        keys: &[&str],
    ) -> Option<&Computation> {
        instr
            .attrs
            .iter()
            .enumerate()
            .find(|(_, (k, _))| keys.contains(&k.as_str()))
            .and_then(|(ai, (_, v))| match v {
                Attr::Comp(id) if *id != usize::MAX => Some(*id),
                Attr::Comps(ids) if ids.first().is_some_and(|&id| id != usize::MAX) => {
                    ids.first().copied()
                }
                _ => refs
                    .iter()
                    .find(|r| r.attr == ai && r.slot.unwrap_or(0) == 0)
                    .and_then(|r| self.comp_names.get(r.name).copied()),
            })
            .and_then(|id| self.comps.get(id))
    }

    /// The value of a computation attribute: a name (`to_apply=%add`), a braced list of names
    /// (`branch_computations={%a, %b}`), or computations written in place (`to_apply={ ... }`,
    /// `branch_computations={{ ... }, %b}`), which become new computations named after `base`.
    fn comp_attr(
        &mut self,
        key: &'a str,
        attr_index: usize,
        base: &str,
        refs: &mut Vec<LocalRef<'a>>,
    ) -> PResult<Attr> {
        self.c.skip_ws()?;
        if self.c.peek() == Some(b'{') {
            let open = self.c.pos;
            self.c.pos += 1;
            if self.c.at_instruction_start() {
                // One computation written in place.
                self.c.pos = open;
                let id = self.inline_computation(base)?;
                return Ok(if attr_kind(key) == AttrKind::Comps {
                    Attr::Comps(vec![id])
                } else {
                    Attr::Comp(id)
                });
            }
            let mut ids = Vec::new();
            if !self.c.eat(b'}')? {
                loop {
                    self.c.skip_ws()?;
                    let at = self.c.pos;
                    if self.c.peek() == Some(b'{') {
                        let n = ids.len();
                        ids.push(self.inline_computation(&format!("{base}.{n}"))?);
                    } else {
                        let cn = self.c.name("a computation name")?;
                        refs.push(LocalRef {
                            attr: attr_index,
                            slot: Some(ids.len()),
                            name: cn,
                            offset: at,
                        });
                        ids.push(usize::MAX);
                    }
                    if self.c.eat(b'}')? {
                        break;
                    }
                    self.c.expect(b',', "between computation names")?;
                }
            }
            return Ok(Attr::Comps(ids));
        }
        let at = self.c.pos;
        let cn = self.c.name("a computation name")?;
        Ok(if attr_kind(key) == AttrKind::Comps {
            refs.push(LocalRef {
                attr: attr_index,
                slot: Some(0),
                name: cn,
                offset: at,
            });
            Attr::Comps(vec![usize::MAX])
        } else {
            refs.push(LocalRef {
                attr: attr_index,
                slot: None,
                name: cn,
                offset: at,
            });
            Attr::Comp(usize::MAX)
        })
    }

    /// Turns `%s = (operands, result, ctx) <op>-start(...), <op's attrs>` into an
    /// `async-start` calling a new computation that wraps `<op>`.
    fn desugar_async_start(
        &mut self,
        start: &mut Instruction,
        base: Opcode,
        refs: Vec<LocalRef<'a>>,
        at: usize,
        instrs: &[Instruction],
    ) -> PResult<Vec<LocalRef<'a>>> {
        let operand_shapes: Vec<Shape> = match start.shape.tuple_elements() {
            Some([Shape::Tuple(ops), _, ..]) if ops.len() == start.operands.len() => ops.clone(),
            _ => start
                .operands
                .iter()
                .map(|&o| instrs[o].shape.clone())
                .collect(),
        };
        let result_shape = match start.shape.tuple_elements() {
            Some([_, r, ..]) => r.clone(),
            _ => {
                return err_at(
                    at,
                    format!(
                        "{}-start needs a tuple shape ((operands), result, ...)",
                        base.name()
                    ),
                )
            }
        };
        let mut body = Vec::with_capacity(operand_shapes.len() + 1);
        for (i, s) in operand_shapes.into_iter().enumerate() {
            let mut p = Instruction::new(format!("param_{i}"), Opcode::Parameter, s);
            p.parameter_number = Some(i as i64);
            // The wrapped computation was written on the start's line.
            p.pos = start.pos;
            body.push(p);
        }
        let mut wrapped = Instruction::new(format!("{}.wrapped", start.name), base, result_shape);
        wrapped.operands = (0..body.len()).collect();
        wrapped.pos = start.pos;
        // Everything but the thread and the aliasing of the start's output to its operands
        // (an attribute of the async-start in XLA, which the wrapped op may not carry) moves to
        // the wrapped instruction.
        let mut thread = None;
        let mut moved_refs = Vec::new();
        let mut kept_refs = Vec::new();
        let mut new_index = vec![(false, usize::MAX); start.attrs.len()];
        for (i, (k, v)) in std::mem::take(&mut start.attrs).into_iter().enumerate() {
            if k == "async_execution_thread" {
                if let Attr::Str(s) = &v {
                    thread = Some(s.clone());
                }
                new_index[i] = (false, start.attrs.len());
                start.attrs.push((k, v));
            } else if k == "output_to_operand_aliasing" {
                new_index[i] = (false, start.attrs.len());
                start.attrs.push((k, v));
            } else {
                new_index[i] = (true, wrapped.attrs.len());
                wrapped.attrs.push((k, v));
            }
        }
        for r in refs {
            let (moved, attr) = new_index[r.attr];
            let r = LocalRef { attr, ..r };
            if moved {
                moved_refs.push(r);
            } else {
                kept_refs.push(r);
            }
        }
        let wrapped_id = body.len();
        body.push(wrapped);
        let id = self.comps.len();
        let base_name = format!("{}.async_wrapped", start.name);
        let name = if self.comp_names.contains_key(&base_name) {
            self.fresh_comp_name(&base_name)
        } else {
            base_name
        };
        self.comp_names.insert(name.clone(), id);
        self.generated.push(id);
        for r in moved_refs {
            self.pending.push(PendingComp {
                comp: id,
                instr: wrapped_id,
                attr: r.attr,
                slot: r.slot,
                name: r.name,
                offset: r.offset,
            });
        }
        let mut trailing_attrs = Vec::new();
        if let Some(t) = thread {
            let mut q = String::new();
            let _ = crate::print::write_quoted(&mut q, &t);
            trailing_attrs.push(("execution_thread".to_string(), q));
        }
        self.comps.push(Computation {
            name,
            instructions: body,
            root: wrapped_id,
            trailing_attrs,
        });
        start.attrs.push(("calls".to_string(), Attr::Comp(id)));
        Ok(kept_refs)
    }

    fn resolve_pending(&mut self) -> PResult<()> {
        for p in std::mem::take(&mut self.pending) {
            let Some(&id) = self.comp_names.get(p.name) else {
                return err_at(p.offset, format!("computation %{} is not defined", p.name));
            };
            let slot = &mut self.comps[p.comp].instructions[p.instr].attrs[p.attr].1;
            match (slot, p.slot) {
                (Attr::Comp(c), None) => *c = id,
                (Attr::Comps(cs), Some(i)) => cs[i] = id,
                _ => return err_at(p.offset, "internal: misplaced computation reference"),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

//! Shapes and layouts: `f32[2,<=3,?]{2,1,0:T(8,128)(2,*)E(4)S(1)}`, `(s32[], f32[4])`, `token[]`,
//! `b(f32[16])` (a buffer).

use super::cursor::{err_at, Cursor, PResult, MAX_DEPTH};
use crate::shape::{ArrayShape, Layout, Shape, TILE_COMBINE_DIMENSION, UNBOUNDED_SIZE};
use crate::types::PrimitiveType;

impl<'a> Cursor<'a> {
    /// After blanks: a shape.
    pub fn shape(&mut self, depth: usize) -> PResult<Shape> {
        self.skip_ws()?;
        if depth > MAX_DEPTH {
            return err_at(
                self.pos,
                format!("shape nested deeper than {MAX_DEPTH} levels"),
            );
        }
        if self.peek() == Some(b'(') {
            self.pos += 1;
            let mut elems = Vec::new();
            if !self.eat(b')')? {
                loop {
                    elems.push(self.shape(depth + 1)?);
                    if self.eat(b')')? {
                        break;
                    }
                    self.expect(b',', "between tuple shape elements")?;
                }
            }
            return Ok(Shape::Tuple(elems));
        }
        let start = self.pos;
        // A buffer: `b(f32[16]{0})`, an array shape in `b(...)`.
        if self.peek() == Some(b'b') && self.peek_at(1) == Some(b'(') {
            self.pos += 2;
            let inner_at = self.pos;
            let inner = self.shape(depth + 1)?;
            self.expect(b')', "to close the buffer shape b(...)")?;
            return match inner {
                Shape::Array(a) => Ok(Shape::Buffer(a)),
                other => err_at(
                    inner_at,
                    format!(
                        "a buffer shape b(...) holds an array shape, not {}",
                        crate::print::shape_to_string(&other)
                    ),
                ),
            };
        }
        let name = self.ident("a shape")?;
        let Some(ty) = PrimitiveType::from_name(name) else {
            return err_at(start, format!("unknown element type '{name}'"));
        };
        self.array_shape_after_type(ty, start)
    }

    /// The `[dims]{layout}` part of an array shape whose type name was just read.
    pub fn array_shape_after_type(&mut self, ty: PrimitiveType, start: usize) -> PResult<Shape> {
        // XLA's parser also reads blanks between the type and its dimensions (`s32 [4]`).
        let mut k = self.pos;
        while matches!(self.b.get(k), Some(b' ' | b'\t')) {
            k += 1;
        }
        if self.b.get(k) == Some(&b'[') {
            self.pos = k;
        }
        if self.peek() != Some(b'[') {
            return err_at(
                self.pos,
                format!(
                    "expected '[' after element type {}, found {}",
                    ty.name(),
                    self.describe_here()
                ),
            );
        }
        self.pos += 1;
        let mut dims = Vec::new();
        let mut dynamic = Vec::new();
        self.skip_ws()?;
        if self.peek() != Some(b']') {
            loop {
                self.skip_ws()?;
                match self.peek() {
                    Some(b'?') => {
                        self.pos += 1;
                        dims.push(UNBOUNDED_SIZE);
                        dynamic.push(true);
                    }
                    Some(b'<') if self.peek_at(1) == Some(b'=') => {
                        self.pos += 2;
                        let at = self.pos;
                        let d = self.int("dimension bound")?;
                        if d < 0 {
                            return err_at(at, format!("negative dimension bound {d}"));
                        }
                        dims.push(d);
                        dynamic.push(true);
                    }
                    _ => {
                        let at = self.pos;
                        let d = self.int("dimension size")?;
                        if d < 0 {
                            return err_at(at, format!("negative dimension size {d}"));
                        }
                        dims.push(d);
                        dynamic.push(false);
                    }
                }
                if self.eat(b']')? {
                    break;
                }
                self.expect(b',', "between dimensions")?;
            }
        } else {
            self.pos += 1;
        }
        match ty {
            PrimitiveType::Token if dims.is_empty() => return Ok(Shape::Token),
            PrimitiveType::Opaque if dims.is_empty() => return Ok(Shape::Opaque),
            PrimitiveType::Token | PrimitiveType::Opaque => {
                return err_at(start, format!("{} shapes have no dimensions", ty.name()))
            }
            _ => {}
        }
        let mut a = ArrayShape {
            ty,
            dims,
            dynamic,
            layout: None,
        };
        // A layout follows, directly as XLA prints it, or after blanks as its parser also reads
        // it (`f32[2,3] {1,0}`): then only when a dimension number follows the `{`, which a
        // computation's body after its signature's result shape never starts with.
        let mut k = self.pos;
        while matches!(self.b.get(k), Some(b' ' | b'\t')) {
            k += 1;
        }
        if k > self.pos && self.b.get(k) == Some(&b'{') && !a.dims.is_empty() {
            let mut j = k + 1;
            while matches!(self.b.get(j), Some(b' ' | b'\t')) {
                j += 1;
            }
            if self.b.get(j).is_some_and(|c| c.is_ascii_digit()) {
                self.pos = k;
            }
        }
        if self.peek() == Some(b'{') && self.layout_follows() {
            let l = self.layout(a.dims.len())?;
            if !(a.dims.is_empty() && l.minor_to_major.is_empty() && l.is_plain()) {
                a.layout = Some(l);
            }
        }
        Ok(Shape::Array(a))
    }

    /// At a `{` after a shape's dimensions: whether a layout starts here (a dimension number,
    /// `:` or `}` follows), rather than the body of a computation whose signature ends with the
    /// shape (`-> f32[2]{` and a newline).
    fn layout_follows(&self) -> bool {
        let mut k = self.pos + 1;
        while matches!(self.b.get(k), Some(b' ' | b'\t')) {
            k += 1;
        }
        self.b
            .get(k)
            .is_some_and(|&c| c.is_ascii_digit() || c == b':' || c == b'}')
    }

    /// `{1,0:T(8,128)E(4)S(1)}` starting at `{`.
    pub fn layout(&mut self, rank: usize) -> PResult<Layout> {
        let open = self.pos;
        self.pos += 1;
        let mut l = Layout::default();
        self.skip_ws()?;
        while self.peek().is_some_and(|c| c.is_ascii_digit() || c == b'-') {
            let at = self.pos;
            let d = self.int("layout dimension")?;
            if d < 0 || d as usize >= rank.max(1) {
                return err_at(
                    at,
                    format!("layout dimension {d} is out of range for rank {rank}"),
                );
            }
            l.minor_to_major.push(d);
            self.skip_ws()?;
            if self.peek() == Some(b',') {
                self.pos += 1;
                self.skip_ws()?;
            }
        }
        if self.eat(b':')? {
            loop {
                self.skip_ws()?;
                let at = self.pos;
                match self.peek() {
                    Some(b'}') => break,
                    None => return err_at(open, "unterminated layout"),
                    Some(b'T') => {
                        self.pos += 1;
                        while self.peek() == Some(b'(') {
                            self.pos += 1;
                            let mut tile = Vec::new();
                            if !self.eat(b')')? {
                                loop {
                                    self.skip_ws()?;
                                    if self.peek() == Some(b'*') {
                                        self.pos += 1;
                                        tile.push(TILE_COMBINE_DIMENSION);
                                    } else {
                                        tile.push(self.int("tile dimension")?);
                                    }
                                    if self.eat(b')')? {
                                        break;
                                    }
                                    self.expect(b',', "between tile dimensions")?;
                                }
                            }
                            l.tiles.push(tile);
                        }
                        if l.tiles.is_empty() {
                            return err_at(at, "T in a layout needs at least one (tile)");
                        }
                    }
                    Some(b'E') if self.peek_at(1) == Some(b'(') => {
                        self.pos += 2;
                        l.element_size_bits = self.int("element size")?;
                        self.expect(b')', "after the element size")?;
                    }
                    Some(b'S') if self.peek_at(1) == Some(b'(') => {
                        self.pos += 2;
                        l.memory_space = self.int("memory space")?;
                        self.expect(b')', "after the memory space")?;
                    }
                    Some(c) if c.is_ascii_alphabetic() || c == b'#' || c == b'*' => {
                        // D(..), L(..), #(..), *(..), SC(..), P(..), M(..): kept verbatim.
                        while self
                            .peek()
                            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'#' || c == b'*')
                        {
                            self.pos += 1;
                        }
                        if self.peek() != Some(b'(') {
                            return err_at(at, "expected '(' after a layout item's letter");
                        }
                        let mut depth = 0usize;
                        while let Some(c) = self.peek() {
                            self.pos += 1;
                            match c {
                                b'(' => depth += 1,
                                b')' => {
                                    depth -= 1;
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                b'\n' => return err_at(at, "unbalanced '(' in layout item"),
                                _ => {}
                            }
                        }
                        if depth != 0 {
                            return err_at(at, "unbalanced '(' in layout item");
                        }
                        l.other.push(self.src[at..self.pos].to_string());
                    }
                    _ => {
                        return err_at(
                            at,
                            format!("unexpected {} in a layout", self.describe_here()),
                        )
                    }
                }
            }
        }
        self.skip_ws()?;
        if self.peek() != Some(b'}') {
            return err_at(
                self.pos,
                format!(
                    "expected '}}' to close the layout, found {}",
                    self.describe_here()
                ),
            );
        }
        self.pos += 1;
        if !l.minor_to_major.is_empty() && l.minor_to_major.len() != rank {
            return err_at(
                open,
                format!(
                    "layout lists {} dimensions for a shape of rank {rank}",
                    l.minor_to_major.len()
                ),
            );
        }
        Ok(l)
    }
}

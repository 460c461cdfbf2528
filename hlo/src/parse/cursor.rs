//! The lexical layer: a cursor over the input bytes that skips blanks and comments and reads
//! names, integers, strings and raw (balanced) attribute values. Errors carry byte offsets; the
//! parser turns them into line:column.

/// An error at a byte offset of the input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawError {
    pub offset: usize,
    pub message: String,
}

pub(crate) type PResult<T> = Result<T, RawError>;

pub(crate) fn err_at<T>(offset: usize, message: impl Into<String>) -> PResult<T> {
    Err(RawError {
        offset,
        message: message.into(),
    })
}

/// Deepest nesting of tuple shapes, tuple literals and literal dimensions the parser follows.
pub const MAX_DEPTH: usize = 256;

#[derive(Clone)]
pub(crate) struct Cursor<'a> {
    pub src: &'a str,
    pub b: &'a [u8],
    pub pos: usize,
}

#[inline]
pub(crate) fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-'
}

impl<'a> Cursor<'a> {
    pub fn new(src: &'a str) -> Cursor<'a> {
        Cursor {
            src,
            b: src.as_bytes(),
            pos: 0,
        }
    }

    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    #[inline]
    pub fn peek_at(&self, k: usize) -> Option<u8> {
        self.b.get(self.pos + k).copied()
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.b.len()
    }

    /// Skips a `/* ... */` comment starting at `pos` (which must hold `/*`).
    fn skip_block_comment(&mut self) -> PResult<()> {
        let start = self.pos;
        let rest = &self.b[self.pos + 2..];
        match rest.windows(2).position(|w| w == b"*/") {
            Some(i) => {
                self.pos += 2 + i + 2;
                Ok(())
            }
            None => err_at(start, "unterminated /* comment"),
        }
    }

    /// Skips blanks, newlines and comments.
    pub fn skip_ws(&mut self) -> PResult<()> {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                b'/' if self.peek_at(1) == Some(b'*') => self.skip_block_comment()?,
                b'/' if self.peek_at(1) == Some(b'/') => {
                    while let Some(c) = self.peek() {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        Ok(())
    }

    /// Whether an instruction starts here, after blanks (nothing is consumed): `ROOT`, or a
    /// name, `=`, a result shape (which XLA may leave out) and an opcode with its `(`. No
    /// attribute looks like that (`outfeed_shape=f32[4]` has no opcode after the shape), so
    /// this is where a free-layout instruction ends.
    pub fn at_instruction_start(&mut self) -> bool {
        let save = self.pos;
        let found = (|| -> PResult<bool> {
            if self.eat_word("ROOT")? {
                return Ok(true);
            }
            self.skip_ws()?;
            if self.peek() == Some(b'%') {
                self.pos += 1;
            }
            if self.name_chars().is_empty() || !self.eat(b'=')? {
                return Ok(false);
            }
            Ok(self.opcode_after_optional_shape().is_some())
        })()
        .unwrap_or(false);
        self.pos = save;
        found
    }

    /// After blanks: a result shape (which XLA may leave out), then a word and its `(`: the
    /// word (an instruction's opcode, as its text has it); the cursor is left anywhere.
    pub fn opcode_after_optional_shape(&mut self) -> Option<&'a str> {
        self.skip_ws().ok()?;
        let at = self.pos;
        let word = self.name_chars();
        // `b(` starts a buffer shape (`b(f32[4]) custom-call(...)`), not an opcode.
        if !word.is_empty() && word != "b" && self.peek() == Some(b'(') {
            return Some(word);
        }
        self.pos = at;
        self.shape(0).ok()?;
        self.skip_ws().ok()?;
        let word = self.name_chars();
        (!word.is_empty() && self.peek() == Some(b'(')).then_some(word)
    }

    /// Skips blanks and block comments on the current line (not newlines).
    pub fn skip_inline_ws(&mut self) -> PResult<()> {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'/' if self.peek_at(1) == Some(b'*') => self.skip_block_comment()?,
                _ => break,
            }
        }
        Ok(())
    }

    /// After blanks: consumes `c` if it is next.
    pub fn eat(&mut self, c: u8) -> PResult<bool> {
        self.skip_ws()?;
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    pub fn describe_here(&self) -> String {
        match self.src.get(self.pos..).and_then(|s| s.chars().next()) {
            None => "end of input".to_string(),
            Some('\n') => "end of line".to_string(),
            Some(c) if c.is_control() => format!("character U+{:04X}", c as u32),
            Some(c) => format!("'{c}'"),
        }
    }

    /// After blanks: requires `c`.
    pub fn expect(&mut self, c: u8, context: &str) -> PResult<()> {
        if self.eat(c)? {
            Ok(())
        } else {
            err_at(
                self.pos,
                format!(
                    "expected '{}' {context}, found {}",
                    c as char,
                    self.describe_here()
                ),
            )
        }
    }

    /// After blanks: consumes the word `w` if it is next and not followed by a name character.
    pub fn eat_word(&mut self, w: &str) -> PResult<bool> {
        self.skip_ws()?;
        let wb = w.as_bytes();
        if self.b[self.pos..].starts_with(wb)
            && !self
                .b
                .get(self.pos + wb.len())
                .is_some_and(|&c| is_name_byte(c))
        {
            self.pos += wb.len();
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// A run of name characters (`[A-Za-z0-9_.-]`), stopping before `->`. May be empty.
    pub fn name_chars(&mut self) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if !is_name_byte(c) || (c == b'-' && self.peek_at(1) == Some(b'>')) {
                break;
            }
            self.pos += 1;
        }
        &self.src[start..self.pos]
    }

    /// After blanks: a name with an optional `%` prefix (instruction and computation names).
    pub fn name(&mut self, what: &str) -> PResult<&'a str> {
        self.skip_ws()?;
        let start = self.pos;
        if self.peek() == Some(b'%') {
            self.pos += 1;
        }
        let n = self.name_chars();
        if n.is_empty() {
            return err_at(
                start,
                format!("expected {what}, found {}", self.describe_here()),
            );
        }
        Ok(n)
    }

    /// After blanks: an identifier `[A-Za-z_][A-Za-z0-9_.-]*` (keywords, attribute names, types).
    pub fn ident(&mut self, what: &str) -> PResult<&'a str> {
        self.skip_ws()?;
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => Ok(self.name_chars()),
            _ => err_at(
                self.pos,
                format!("expected {what}, found {}", self.describe_here()),
            ),
        }
    }

    /// After blanks: a decimal integer with optional sign, checked for overflow.
    pub fn int(&mut self, what: &str) -> PResult<i64> {
        self.skip_ws()?;
        self.int_here(what)
    }

    /// A decimal integer starting exactly here.
    pub fn int_here(&mut self, what: &str) -> PResult<i64> {
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
        let digits_start = self.pos;
        let mut v: i128 = 0;
        while let Some(c) = self.peek() {
            if !c.is_ascii_digit() {
                break;
            }
            v = v * 10 + (c - b'0') as i128;
            if v > i64::MAX as i128 + 1 {
                // Keep scanning to report the whole number.
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                return err_at(
                    start,
                    format!(
                        "{what} {} does not fit in 64 bits",
                        &self.src[start..self.pos]
                    ),
                );
            }
            self.pos += 1;
        }
        if self.pos == digits_start {
            self.pos = start;
            return err_at(
                start,
                format!(
                    "expected {what} (an integer), found {}",
                    self.describe_here()
                ),
            );
        }
        let v = if neg { -v } else { v };
        if v > i64::MAX as i128 {
            return err_at(
                start,
                format!(
                    "{what} {} does not fit in 64 bits",
                    &self.src[start..self.pos]
                ),
            );
        }
        Ok(v as i64)
    }

    /// Skips a quoted string starting at `pos` (which must hold `"`); returns its raw text
    /// without quotes.
    pub fn skip_string(&mut self) -> PResult<&'a str> {
        let start = self.pos;
        self.pos += 1;
        while let Some(c) = self.peek() {
            match c {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Ok(&self.src[start + 1..self.pos - 1]);
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.b.len();
        err_at(start, "unterminated string")
    }

    /// After blanks: a quoted string, unescaped.
    pub fn string(&mut self, what: &str) -> PResult<String> {
        self.skip_ws()?;
        if self.peek() != Some(b'"') {
            return err_at(
                self.pos,
                format!(
                    "expected {what} (a quoted string), found {}",
                    self.describe_here()
                ),
            );
        }
        let start = self.pos;
        let raw = self.skip_string()?;
        unescape(raw).map_err(|m| RawError {
            offset: start,
            message: m,
        })
    }

    /// A raw attribute value: everything up to the next `,` or end of line outside brackets and
    /// strings (or an unmatched closing bracket), trailing blanks removed.
    /// After inline blanks: whether the bare word here (up to a blank, ',' or line end)
    /// holds the byte `c`.
    pub fn bare_value_has(&self, c: u8) -> bool {
        let mut k = self.pos;
        while matches!(self.b.get(k), Some(b' ' | b'\t')) {
            k += 1;
        }
        self.b[k..]
            .iter()
            .take_while(|&&b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b','))
            .any(|&b| b == c)
    }

    pub fn raw_value(&mut self, what: &str) -> PResult<&'a str> {
        self.skip_inline_ws()?;
        // The value may start on the next line (`backend_config=` and a newline), as XLA's
        // parser reads it.
        if matches!(self.peek(), Some(b'\n' | b'\r')) {
            self.skip_ws()?;
        }
        let start = self.pos;
        // A bracketed or quoted value ends with its closing bracket or quote; a bare value at
        // the first blank, ',' or closing bracket.
        let grouped = matches!(self.peek(), Some(b'{' | b'(' | b'[' | b'"'));
        let mut stack: Vec<(u8, usize)> = Vec::new();
        while let Some(c) = self.peek() {
            if grouped && stack.is_empty() && self.pos > start {
                // An iota tile assignment goes on: `[2,4]<=[8]`, `[2,4]<=[4,2]T(1,0)`.
                let rest = &self.b[self.pos..];
                if rest.starts_with(b"<=[") {
                    self.pos += 2;
                } else if rest.starts_with(b"T(") && self.b[self.pos - 1] == b']' {
                    self.pos += 1;
                } else {
                    break;
                }
                // The group that follows opens here.
                stack.push((self.b[self.pos], self.pos));
                self.pos += 1;
                continue;
            }
            if !grouped && stack.is_empty() && matches!(c, b' ' | b'\t' | b'\r') {
                // A braced group after a blank still belongs to a bare value: a mesh's axes
                // (`mesh['a'=2,'b'=2] {'b'}`), a literal's value (`s32[2]{0} {1, 2}`).
                let mut k = self.pos;
                while matches!(self.b.get(k), Some(b' ' | b'\t' | b'\r')) {
                    k += 1;
                }
                if self.b.get(k) == Some(&b'{') {
                    self.pos = k;
                    continue;
                }
                // A shape's value after a blank (`literal=f32[] 0.1`, `literal=s32[] -1`).
                let after_shape = matches!(self.b.get(self.pos.wrapping_sub(1)), Some(b']' | b'}'));
                if after_shape
                    && self
                        .b
                        .get(k)
                        .is_some_and(|&b| b.is_ascii_digit() || b == b'-')
                {
                    self.pos = k;
                    continue;
                }
                break;
            }
            match c {
                b'"' => {
                    self.skip_string()?;
                    continue;
                }
                b'/' if self.peek_at(1) == Some(b'*') => {
                    self.skip_block_comment()?;
                    continue;
                }
                b'{' | b'(' | b'[' => stack.push((c, self.pos)),
                b'}' | b')' | b']' => match stack.pop() {
                    None => break,
                    Some((open, at)) => {
                        let want = match open {
                            b'{' => b'}',
                            b'(' => b')',
                            _ => b']',
                        };
                        if c != want {
                            return err_at(
                                self.pos,
                                format!(
                                    "'{}' closes the '{}' opened at {} in {what}",
                                    c as char,
                                    open as char,
                                    line_col(self.src, at)
                                ),
                            );
                        }
                    }
                },
                // A bare value ends at the line's end; a bracketed one may span lines (a
                // backend_config written as indented JSON).
                b',' | b'\n' if stack.is_empty() => break,
                _ => {}
            }
            self.pos += 1;
        }
        if let Some(&(open, at)) = stack.last() {
            return err_at(at, format!("unbalanced '{}' in {what}", open as char));
        }
        let s = self.src[start..self.pos].trim_end();
        if s.is_empty() {
            return err_at(
                start,
                format!(
                    "expected a value for {what}, found {}",
                    self.describe_here()
                ),
            );
        }
        Ok(s)
    }
}

/// Undoes C escapes (`\n \t \r \\ \" \' \xHH \NNN`).
pub(crate) fn unescape(raw: &str) -> Result<String, String> {
    if !raw.contains('\\') {
        return Ok(raw.to_string());
    }
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let Some(&c) = b.get(i) else {
            return Err("string ends with a lone backslash".into());
        };
        i += 1;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v: u32 = (c - b'0') as u32;
                let mut n = 1;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + (b[i] - b'0') as u32;
                    i += 1;
                    n += 1;
                }
                if v > 255 {
                    return Err(format!("octal escape \\{v:o} is over 255"));
                }
                out.push(v as u8);
            }
            b'x' => {
                let s = i;
                while i < b.len() && b[i].is_ascii_hexdigit() && i - s < 2 {
                    i += 1;
                }
                if i == s {
                    return Err("\\x escape without hex digits".into());
                }
                out.push(u8::from_str_radix(&raw[s..i], 16).map_err(|e| e.to_string())?);
            }
            other => out.push(other),
        }
    }
    String::from_utf8(out).map_err(|_| "string is not valid UTF-8 after unescaping".to_string())
}

/// `LINE:COL` (1-based, columns in characters) of a byte offset.
pub(crate) fn line_col(src: &str, offset: usize) -> String {
    let mut offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = src[..line_start].bytes().filter(|&b| b == b'\n').count() + 1;
    format!("{}:{}", line, src[line_start..offset].chars().count() + 1)
}

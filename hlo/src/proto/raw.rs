//! The attributes HLO text keeps verbatim ([`crate::Attr::Raw`]) that a proto has fields for:
//! a small reader of their syntax (`{op_name="a" source_line=3}`, `{k="v",k2="w"}`,
//! `{{0}: (1, {})}`, `{default,highest}`, quoted strings) and the writer of the same syntax.

use super::ProtoError;

/// A token of an attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Open(char),
    Close(char),
    Comma,
    Colon,
    Eq,
    Arrow,
    Str(String),
    /// A bare word or number (`default`, `-3`, `1.5e-3`, `rng_three_fry`).
    Word(String),
}

/// Splits an attribute value into tokens.
pub fn tokens(s: &str) -> Result<Vec<Tok>, String> {
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '{' | '(' | '[' => {
                out.push(Tok::Open(c));
                i += 1
            }
            '}' | ')' | ']' => {
                out.push(Tok::Close(c));
                i += 1
            }
            ',' => {
                out.push(Tok::Comma);
                i += 1
            }
            ':' => {
                out.push(Tok::Colon);
                i += 1
            }
            '=' => {
                out.push(Tok::Eq);
                i += 1
            }
            '-' if b.get(i + 1) == Some(&'>') => {
                out.push(Tok::Arrow);
                i += 2
            }
            '"' => {
                let (v, n) = unquote_at(&b, i)?;
                out.push(Tok::Str(v));
                i = n;
            }
            _ => {
                let start = i;
                while i < b.len()
                    && !b[i].is_whitespace()
                    && !"{}()[],:=\"".contains(b[i])
                    && !(b[i] == '-' && b.get(i + 1) == Some(&'>'))
                {
                    i += 1;
                }
                if i == start {
                    return Err(format!("unexpected character {c:?}"));
                }
                out.push(Tok::Word(b[start..i].iter().collect()));
            }
        }
    }
    Ok(out)
}

/// Reads the quoted string starting at `b[i] == '"'` (C escapes, as XLA's `CEscape` writes
/// them): its value and the index after the closing quote.
fn unquote_at(b: &[char], mut i: usize) -> Result<(String, usize), String> {
    i += 1;
    let mut bytes: Vec<u8> = Vec::new();
    while i < b.len() {
        match b[i] {
            '"' => {
                return String::from_utf8(bytes)
                    .map(|s| (s, i + 1))
                    .map_err(|_| "a quoted string is not UTF-8".to_string())
            }
            '\\' => {
                let e = *b.get(i + 1).ok_or("a quoted string ends in a backslash")?;
                i += 2;
                match e {
                    'n' => bytes.push(b'\n'),
                    't' => bytes.push(b'\t'),
                    'r' => bytes.push(b'\r'),
                    '0'..='7' => {
                        let mut v = e.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            match b.get(i).and_then(|c| c.to_digit(8)) {
                                Some(d) => {
                                    v = v * 8 + d;
                                    i += 1;
                                }
                                None => break,
                            }
                        }
                        bytes.push(v as u8);
                    }
                    'x' => {
                        let mut v = 0u32;
                        while let Some(d) = b.get(i).and_then(|c| c.to_digit(16)) {
                            v = v * 16 + d;
                            i += 1;
                        }
                        bytes.push(v as u8);
                    }
                    other => {
                        let mut buf = [0u8; 4];
                        bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                    }
                }
            }
            c => {
                let mut buf = [0u8; 4];
                bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i += 1;
            }
        }
    }
    Err("a quoted string is not closed".into())
}

/// The value of a quoted string (`"a\"b"` → `a"b`).
pub fn unquote(s: &str) -> Result<String, String> {
    let b: Vec<char> = s.trim().chars().collect();
    if b.first() != Some(&'"') {
        return Err("expected a quoted string".into());
    }
    let (v, n) = unquote_at(&b, 0)?;
    if n != b.len() {
        return Err("text after a quoted string".into());
    }
    Ok(v)
}

/// A string in double quotes with XLA's escapes.
pub fn quote(s: &str) -> String {
    let mut out = String::new();
    crate::print::write_quoted(&mut out, s).expect("writing to a String cannot fail");
    out
}

/// A cursor over tokens with the error context of one attribute.
pub struct Toks<'a> {
    pub t: Vec<Tok>,
    pub i: usize,
    pub what: &'a str,
}

impl<'a> Toks<'a> {
    pub fn new(s: &str, what: &'a str) -> Result<Toks<'a>, ProtoError> {
        let t = tokens(s).map_err(|e| ProtoError::Attr(what.to_string(), e))?;
        Ok(Toks { t, i: 0, what })
    }
    pub fn err<T>(&self, m: impl Into<String>) -> Result<T, ProtoError> {
        Err(ProtoError::Attr(self.what.to_string(), m.into()))
    }
    pub fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    pub fn next(&mut self) -> Option<Tok> {
        let t = self.t.get(self.i).cloned();
        self.i += 1;
        t
    }
    pub fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    pub fn expect(&mut self, t: Tok) -> Result<(), ProtoError> {
        if self.eat(&t) {
            Ok(())
        } else {
            self.err(format!("expected {t:?}, found {:?}", self.peek()))
        }
    }
    pub fn word(&mut self) -> Result<String, ProtoError> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            t => self.err(format!("expected a word, found {t:?}")),
        }
    }
    pub fn int(&mut self) -> Result<i64, ProtoError> {
        let w = self.word()?;
        w.parse()
            .or_else(|_| self.err(format!("{w:?} is not an integer")))
    }
    pub fn done(&self) -> Result<(), ProtoError> {
        if self.i == self.t.len() {
            Ok(())
        } else {
            self.err(format!("unexpected {:?}", self.peek()))
        }
    }
    /// `{1,2,3}` or `{}`.
    pub fn int_list(&mut self) -> Result<Vec<i64>, ProtoError> {
        self.expect(Tok::Open('{'))?;
        let mut v = Vec::new();
        if self.eat(&Tok::Close('}')) {
            return Ok(v);
        }
        loop {
            v.push(self.int()?);
            if self.eat(&Tok::Close('}')) {
                return Ok(v);
            }
            self.expect(Tok::Comma)?;
        }
    }
}

/// `{k=v k2="w"}` or `{k="v",k2="w"}`: the pairs, values unquoted.
pub fn key_values(s: &str, what: &str) -> Result<Vec<(String, String)>, ProtoError> {
    let mut t = Toks::new(s, what)?;
    t.expect(Tok::Open('{'))?;
    let mut out = Vec::new();
    loop {
        match t.next() {
            Some(Tok::Close('}')) => break,
            Some(Tok::Comma) => continue,
            Some(Tok::Word(k)) => {
                t.expect(Tok::Eq)?;
                let v = match t.next() {
                    Some(Tok::Str(v)) | Some(Tok::Word(v)) => v,
                    other => return t.err(format!("value of {k}: unexpected {other:?}")),
                };
                out.push((k, v));
            }
            Some(Tok::Str(k)) => {
                t.expect(Tok::Eq)?;
                let v = match t.next() {
                    Some(Tok::Str(v)) | Some(Tok::Word(v)) => v,
                    other => return t.err(format!("value of {k}: unexpected {other:?}")),
                };
                out.push((k, v));
            }
            other => return t.err(format!("unexpected {other:?}")),
        }
    }
    t.done()?;
    Ok(out)
}

/// Splits `{a, b, c}` at its top-level commas: the items' texts.
pub fn top_level_items(s: &str, what: &str) -> Result<Vec<String>, ProtoError> {
    let s = s.trim();
    let inner = s
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| ProtoError::Attr(what.into(), "expected {...}".into()))?;
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut in_str = false;
    let mut esc = false;
    for c in inner.chars() {
        if in_str {
            cur.push(c);
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                cur.push(c)
            }
            '{' | '(' | '[' => {
                depth += 1;
                cur.push(c)
            }
            '}' | ')' | ']' => {
                depth -= 1;
                cur.push(c)
            }
            ',' if depth == 0 => items.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    if !cur.trim().is_empty() || !items.is_empty() {
        items.push(cur);
    }
    Ok(items.into_iter().map(|s| s.trim().to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_key_values() {
        let kv = key_values(
            r#"{op_type="add" op_name="jit(f)/a\"b" source_line=3}"#,
            "metadata",
        )
        .unwrap();
        assert_eq!(kv[1], ("op_name".into(), "jit(f)/a\"b".into()));
        assert_eq!(kv[2], ("source_line".into(), "3".into()));
        let items = top_level_items("{f32[2,3]{1,0}, s32[]}", "x").unwrap();
        assert_eq!(items, vec!["f32[2,3]{1,0}", "s32[]"]);
        assert_eq!(unquote(r#""a\nb\101""#).unwrap(), "a\nbA");
        assert_eq!(quote("a\"b"), r#""a\"b""#);
    }
}

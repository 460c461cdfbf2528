//! The header attributes that describe the entry's signature (`entry_computation_layout`,
//! `input_output_alias`, `buffer_donor`) as data, and [`refit`]: after an edit that removed or
//! renumbered entry parameters or changed the root, keep what still fits the new signature
//! (renumbered) and drop only what no longer does. A repro of an aliasing bug keeps its alias
//! through minimization this way.

use crate::{Computation, Module, Opcode, Shape};

/// One `{output}: (parameter, {parameter index}, kind)` entry of `input_output_alias`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasEntry {
    pub output_index: Vec<usize>,
    pub parameter: i64,
    pub parameter_index: Vec<usize>,
    /// `must-alias` (else `may-alias`, also when the text names no kind).
    pub must: bool,
}

/// One `(parameter, {index})` entry of `buffer_donor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferDonor {
    pub parameter: i64,
    pub index: Vec<usize>,
}

/// `{ {0}: (0, {}, may-alias), {1, 0}: (2, {1}) }`, or `None` when the text is not of that form.
pub fn parse_aliases(text: &str) -> Option<Vec<AliasEntry>> {
    Cursor::new(text).braced_list(|t| {
        let output_index = t.index()?;
        t.eat(':')?;
        t.eat('(')?;
        let parameter = t.int()?;
        t.eat(',')?;
        let parameter_index = t.index()?;
        let mut must = false;
        if t.try_eat(',') {
            must = match t.word()?.as_str() {
                "must-alias" => true,
                "may-alias" => false,
                _ => return None,
            };
        }
        t.eat(')')?;
        Some(AliasEntry {
            output_index,
            parameter,
            parameter_index,
            must,
        })
    })
}

/// The text XLA prints for `input_output_alias`.
pub fn aliases_text(entries: &[AliasEntry]) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|a| {
            format!(
                "{}: ({}, {}, {})",
                index_text(&a.output_index),
                a.parameter,
                index_text(&a.parameter_index),
                if a.must { "must-alias" } else { "may-alias" }
            )
        })
        .collect();
    format!("{{ {} }}", items.join(", "))
}

/// `{ (0, {}), (1, {0}) }`, or `None` when the text is not of that form.
pub fn parse_buffer_donors(text: &str) -> Option<Vec<BufferDonor>> {
    Cursor::new(text).braced_list(|t| {
        t.eat('(')?;
        let parameter = t.int()?;
        t.eat(',')?;
        let index = t.index()?;
        t.eat(')')?;
        Some(BufferDonor { parameter, index })
    })
}

/// The text XLA prints for `buffer_donor`.
pub fn buffer_donors_text(donors: &[BufferDonor]) -> String {
    let items: Vec<String> = donors
        .iter()
        .map(|d| format!("({}, {})", d.parameter, index_text(&d.index)))
        .collect();
    format!("{{ {} }}", items.join(", "))
}

/// `{(p0, p1, ...)->result}` as its parameter shapes and result shape.
pub fn parse_entry_layout(text: &str) -> Option<(Vec<Shape>, Shape)> {
    let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?;
    let b = inner.as_bytes();
    let mut depth = 0i32;
    let arrow = (0..b.len()).find(|&i| {
        match b[i] {
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => depth -= 1,
            _ => {}
        }
        depth == 0 && b[i] == b'-' && b.get(i + 1) == Some(&b'>')
    })?;
    let params = crate::parse::parse_shape(inner[..arrow].trim()).ok()?;
    let result = crate::parse::parse_shape(inner[arrow + 2..].trim()).ok()?;
    match params {
        Shape::Tuple(ps) => Some((ps, result)),
        _ => None,
    }
}

/// The text of `entry_computation_layout` for these shapes (every array given its layout,
/// row-major where it has none).
pub fn entry_layout_text(params: &[Shape], result: &Shape) -> String {
    let ps: Vec<String> = params
        .iter()
        .map(|s| crate::print::shape_to_string(&with_layouts(s)))
        .collect();
    format!(
        "{{({})->{}}}",
        ps.join(", "),
        crate::print::shape_to_string(&with_layouts(result))
    )
}

/// `s` with a row-major layout on every array that has none.
pub fn with_layouts(s: &Shape) -> Shape {
    match s {
        Shape::Array(a) => {
            let mut a = a.clone();
            if a.layout.is_none() {
                a.layout = Some(crate::Layout::row_major(a.rank()));
            }
            Shape::Array(a)
        }
        Shape::Tuple(t) => Shape::Tuple(t.iter().map(with_layouts).collect()),
        s => s.clone(),
    }
}

/// A computation's parameters as (number, shape), by number.
pub fn parameter_shapes(c: &Computation) -> Vec<(i64, Shape)> {
    let mut params: Vec<(i64, Shape)> = c
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Parameter)
        .map(|i| (i.parameter_number.unwrap_or(0), i.shape.clone()))
        .collect();
    params.sort_by_key(|p| p.0);
    params
}

/// Makes the signature header attributes fit the entry as it is now. `renumbered[n]` is the
/// new number of the entry parameter that was number `n` before the edit (`None`: removed).
/// - `entry_computation_layout` keeps the layout it gave each surviving parameter and the
///   result while their shapes are unchanged; a changed shape takes the instruction's layout.
/// - An `input_output_alias` or `buffer_donor` entry is renumbered, and dropped when its
///   parameter is gone or either side no longer has a buffer of the same shape.
///
/// An attribute whose text cannot be read, or with no entry left, is dropped.
pub fn refit(m: &mut Module, renumbered: &[Option<i64>]) {
    let Some(entry) = m.computations.get(m.entry) else {
        return;
    };
    let params = parameter_shapes(entry);
    let root = entry
        .instructions
        .get(entry.root)
        .map(|i| i.shape.clone())
        .unwrap_or(Shape::Tuple(vec![]));
    let param_shape = |n: i64| params.iter().find(|p| p.0 == n).map(|p| &p.1);
    let new_number = |old: i64| {
        usize::try_from(old)
            .ok()
            .and_then(|o| renumbered.get(o).copied().flatten())
    };
    let same_buffer = |a: Option<&Shape>, b: Option<&Shape>| match (a, b) {
        (Some(Shape::Array(x)), Some(Shape::Array(y))) => {
            x.ty == y.ty && x.dims == y.dims && x.dynamic == y.dynamic
        }
        _ => false,
    };
    let old_attrs = std::mem::take(&mut m.header_attrs);
    for (k, v) in old_attrs {
        let refitted = match k.as_str() {
            "entry_computation_layout" => parse_entry_layout(&v).map(|(old_params, old_result)| {
                let mut new_params: Vec<Shape> = params.iter().map(|p| p.1.clone()).collect();
                for (old, s) in old_params.iter().enumerate() {
                    if let Some(n) = new_number(old as i64) {
                        let slot = usize::try_from(n).ok().and_then(|n| new_params.get_mut(n));
                        if let Some(slot) = slot.filter(|slot| slot.compatible(s)) {
                            *slot = s.clone();
                        }
                    }
                }
                let result = if old_result.compatible(&root) {
                    old_result
                } else {
                    root.clone()
                };
                entry_layout_text(&new_params, &result)
            }),
            "input_output_alias" => parse_aliases(&v)
                .map(|entries| {
                    let kept: Vec<AliasEntry> = entries
                        .into_iter()
                        .filter_map(|mut a| {
                            a.parameter = new_number(a.parameter)?;
                            let p = param_shape(a.parameter)?.subshape(&a.parameter_index);
                            same_buffer(p, root.subshape(&a.output_index)).then_some(a)
                        })
                        .collect();
                    (!kept.is_empty()).then(|| aliases_text(&kept))
                })
                .flatten(),
            "buffer_donor" => parse_buffer_donors(&v)
                .map(|donors| {
                    let kept: Vec<BufferDonor> = donors
                        .into_iter()
                        .filter_map(|mut d| {
                            d.parameter = new_number(d.parameter)?;
                            let p = param_shape(d.parameter)?.subshape(&d.index);
                            matches!(p, Some(Shape::Array(_))).then_some(d)
                        })
                        .collect();
                    (!kept.is_empty()).then(|| buffer_donors_text(&kept))
                })
                .flatten(),
            _ => Some(v),
        };
        if let Some(v) = refitted {
            m.header_attrs.push((k, v));
        }
    }
}

fn index_text(index: &[usize]) -> String {
    let items: Vec<String> = index.iter().map(|i| i.to_string()).collect();
    format!("{{{}}}", items.join(","))
}

/// A cursor over the small brace-and-paren grammar of the signature attributes.
struct Cursor<'a> {
    s: &'a str,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Self {
        Cursor { s: s.trim_start() }
    }
    fn skip(&mut self) {
        self.s = self.s.trim_start();
    }
    fn try_eat(&mut self, c: char) -> bool {
        self.skip();
        match self.s.strip_prefix(c) {
            Some(rest) => {
                self.s = rest;
                true
            }
            None => false,
        }
    }
    fn eat(&mut self, c: char) -> Option<()> {
        self.try_eat(c).then_some(())
    }
    fn end(&mut self) -> bool {
        self.skip();
        self.s.is_empty()
    }
    fn word(&mut self) -> Option<String> {
        self.skip();
        let n = self
            .s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(self.s.len());
        if n == 0 {
            return None;
        }
        let (w, rest) = self.s.split_at(n);
        self.s = rest;
        Some(w.to_string())
    }
    fn int(&mut self) -> Option<i64> {
        self.word()?.parse().ok()
    }
    /// `{ item, item, ... }` to the end of the text, each item read by `item`.
    fn braced_list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        self.eat('{')?;
        let mut out = Vec::new();
        if !self.try_eat('}') {
            loop {
                out.push(item(self)?);
                if self.try_eat('}') {
                    break;
                }
                self.eat(',')?;
            }
        }
        self.end().then_some(out)
    }
    /// `{}` or `{0, 1}`: a shape index.
    fn index(&mut self) -> Option<Vec<usize>> {
        self.eat('{')?;
        let mut out = Vec::new();
        if self.try_eat('}') {
            return Some(out);
        }
        loop {
            out.push(usize::try_from(self.int()?).ok()?);
            if self.try_eat('}') {
                return Some(out);
            }
            self.eat(',')?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_and_donor_texts_read_back() {
        let t = "{ {0}: (0, {}, may-alias), {1, 0}: (2, {1}, must-alias), {}: (1, {}) }";
        let a = parse_aliases(t).unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a[1].output_index, vec![1, 0]);
        assert!(a[1].must && !a[2].must);
        assert_eq!(parse_aliases(&aliases_text(&a)).unwrap(), a);
        assert_eq!(parse_aliases("{ }").unwrap(), vec![]);
        assert!(parse_aliases("{ {0}: (x, {}) }").is_none());
        let d = parse_buffer_donors("{ (0, {}), (3, {1}) }").unwrap();
        assert_eq!(
            d[1],
            BufferDonor {
                parameter: 3,
                index: vec![1]
            }
        );
        assert_eq!(parse_buffer_donors(&buffer_donors_text(&d)).unwrap(), d);
        let (ps, r) = parse_entry_layout("{(f32[2,3]{0,1}, s32[])->(f32[3]{0})}").unwrap();
        assert_eq!(ps.len(), 2);
        assert!(r.is_tuple());
    }
}

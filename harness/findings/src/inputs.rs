//! The one reader of input files: every command that takes `--inputs` (run, minimize, bisect,
//! triage, recheck, repro-bisect) reads them here, in whichever form the user has, detected by
//! content (never by file name):
//!
//! - hlo-diff's literal file (`HLODLIT1` magic, [`crate::store`]);
//! - NumPy `.npy` (`\x93NUMPY` magic) and `.npz` (a zip archive of `.npy` files, stored or
//!   deflated; `arr_0, arr_1, ...` in numeric order, other names in archive order);
//! - binary protobuf: an `xla.HloSnapshot` (what `--xla_dump_hlo_snapshots` writes: its
//!   `arguments`) or an `xla.RunHloModuleLiterals` (its first iteration's `arguments`);
//! - protobuf text format of the same (`run_hlo_module --input_literals_file`, the
//!   `inputs.pbtxt` of our repro directories): `iterations { arguments { shape {...} f32s: ... } }`,
//!   or top-level `arguments { ... }`;
//! - `<shape><TAB><literal>` text lines ([`crate::repro::literals_text`]).
//!
//! Literal protos honour their layout's `minor_to_major` (data in physical order); `.npy` honours
//! `fortran_order` and byte order. NumPy has no bf16/f8 dtypes of its own: arrays saved from
//! `ml_dtypes` types come as raw `V1`/`V2` and take the parameter's type of that width when
//! [`ReadInputs::fit_to`] is given the parameters. Inputs saved as 64-bit values for a 32-bit
//! parameter (numpy's default f64/i64, which jax narrows without `jax_enable_x64`) are
//! converted the way jax does, with a note.

use hlo::{ArrayLiteral, Literal, PrimitiveType, Scalar, Shape};
use std::path::Path;

/// The format a file was read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputFormat {
    LiteralFile,
    Text,
    ProtoText,
    Proto,
    Npy,
    Npz,
}

impl InputFormat {
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::LiteralFile => "hlo-diff literal file",
            InputFormat::Text => "<shape><TAB><literal> text",
            InputFormat::ProtoText => "literal proto text (RunHloModuleLiterals / HloSnapshot)",
            InputFormat::Proto => "binary proto (HloSnapshot / RunHloModuleLiterals)",
            InputFormat::Npy => "NumPy .npy",
            InputFormat::Npz => "NumPy .npz",
        }
    }
}

/// Inputs as read, before they are fitted to a module's parameters.
#[derive(Clone, Debug)]
pub struct ReadInputs {
    pub format: InputFormat,
    pub literals: Vec<Literal>,
    /// Per literal: its bytes are a raw NumPy void type (`V1`/`V2`, from `ml_dtypes`), read as
    /// u8/u16 until a parameter says which type they are.
    raw: Vec<bool>,
}

/// A file's bytes, when it holds at most `max_bytes`: a larger file, or one without end
/// (`/dev/zero`, a FIFO that keeps writing), is an error naming it after `max_bytes` read,
/// never an allocation that grows until the process is killed.
pub fn read_file_within(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    let over = || {
        format!(
            "{}: larger than the memory budget of {max_bytes} bytes",
            path.display()
        )
    };
    let file = std::fs::File::open(path).map_err(io)?;
    if file.metadata().is_ok_and(|m| m.len() > max_bytes) {
        return Err(over());
    }
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(over());
    }
    Ok(bytes)
}

/// Reads an input file in any of the formats above, within the oracle's memory budget
/// ([`interp::DEFAULT_MAX_BYTES`]).
pub fn read_inputs_file(path: &Path) -> Result<ReadInputs, String> {
    read_inputs_file_within(path, interp::DEFAULT_MAX_BYTES)
}

/// [`read_inputs_file`] with a memory budget of `max_bytes`, for the file and for what it
/// declares.
pub fn read_inputs_file_within(path: &Path, max_bytes: u64) -> Result<ReadInputs, String> {
    let bytes = read_file_within(path, max_bytes)?;
    read_inputs_bytes_within(&bytes, max_bytes).map_err(|e| {
        // A position (`line:col: ...`) joins the file name as `file:line:col`.
        let positioned = e
            .split_once(':')
            .is_some_and(|(l, _)| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()));
        let sep = if positioned { ":" } else { ": " };
        format!("{}{sep}{e}", path.display())
    })
}

/// How deep literal protos may nest (messages in text, tuples in either encoding): deeper is an
/// error, never a stack overflow. Real argument protos nest a few levels.
pub const MAX_NESTING: usize = 100;

/// [`read_inputs_file`] on bytes already read, within the oracle's memory budget
/// ([`interp::DEFAULT_MAX_BYTES`]).
pub fn read_inputs_bytes(bytes: &[u8]) -> Result<ReadInputs, String> {
    read_inputs_bytes_within(bytes, interp::DEFAULT_MAX_BYTES)
}

/// [`read_inputs_bytes`] with a memory budget of `max_bytes`: an archive whose members would
/// decompress to more is refused before anything is decompressed.
pub fn read_inputs_bytes_within(bytes: &[u8], max_bytes: u64) -> Result<ReadInputs, String> {
    let plain = |format, literals: Vec<Literal>| ReadInputs {
        format,
        raw: vec![false; literals.len()],
        literals,
    };
    if bytes.starts_with(b"HLODLIT1") {
        return crate::store::decode_literals(bytes)
            .map(|l| plain(InputFormat::LiteralFile, l))
            .map_err(|e| e.to_string());
    }
    if bytes.starts_with(b"\x93NUMPY") {
        let (l, raw) = npy(bytes)?;
        return Ok(ReadInputs {
            format: InputFormat::Npy,
            literals: vec![l],
            raw: vec![raw],
        });
    }
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        let mut literals = Vec::new();
        let mut raw = Vec::new();
        for (name, data) in npz_members(bytes, max_bytes)? {
            let (l, r) = npy(&data).map_err(|e| format!("{name}: {e}"))?;
            literals.push(l);
            raw.push(r);
        }
        return Ok(ReadInputs {
            format: InputFormat::Npz,
            literals,
            raw,
        });
    }
    match std::str::from_utf8(bytes) {
        Ok(text) if looks_like_proto_text(text) => {
            let msg = text_format::parse(text, MAX_NESTING)?;
            literals_of_container(&msg).map(|l| plain(InputFormat::ProtoText, l))
        }
        Ok(text) => crate::repro::parse_literals_text(text).map(|l| plain(InputFormat::Text, l)),
        Err(_) => {
            let msg = Msg::Binary(bytes.to_vec());
            literals_of_container(&msg)
                .map(|l| plain(InputFormat::Proto, l))
                .map_err(|e| {
                    format!("not a literal file, .npy/.npz, text, or a literal proto ({e})")
                })
        }
    }
}

/// Text whose first non-comment token is a field name followed by `{`, `<` or `:`.
fn looks_like_proto_text(text: &str) -> bool {
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let name: String = t
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            return false;
        }
        let rest = t[name.len()..].trim_start();
        return rest.starts_with('{') || rest.starts_with('<') || rest.starts_with(':');
    }
    false
}

impl ReadInputs {
    /// The literals fitted to `params`: raw NumPy void arrays take the parameter's type of the
    /// same width; 64-bit arrays for a narrower parameter of the same class are converted as
    /// jax does without `jax_enable_x64` (round to nearest even, integers wrap). Returns notes
    /// saying what was converted. Count and shape are checked by the caller.
    pub fn fit_to(self, params: &[Shape]) -> (Vec<Literal>, Vec<String>) {
        let mut notes = Vec::new();
        let mut out = Vec::with_capacity(self.literals.len());
        for (k, (l, raw)) in self.literals.into_iter().zip(self.raw).enumerate() {
            let (Some(p), Literal::Array(a)) = (params.get(k).and_then(Shape::as_array), &l) else {
                out.push(l);
                continue;
            };
            if a.ty == p.ty || a.dims != p.dims {
                out.push(l);
                continue;
            }
            if raw && p.ty.byte_size() == a.ty.byte_size() {
                notes.push(format!(
                    "input {k}: raw {}-byte NumPy values read as {} (the parameter's type)",
                    a.ty.byte_size(),
                    p.ty.name()
                ));
                out.push(Literal::Array(ArrayLiteral {
                    ty: p.ty,
                    dims: a.dims.clone(),
                    data: a.data.clone(),
                }));
                continue;
            }
            let same_class = (a.ty.is_float() && p.ty.is_float())
                || (a.ty.is_complex() && p.ty.is_complex())
                || (a.ty.is_integer() && p.ty.is_integer());
            if !raw && same_class && a.ty.bit_width() > p.ty.bit_width() {
                let values: Vec<Scalar> = (0..a.len()).map(|i| a.get(i)).collect();
                if let Ok(c) = ArrayLiteral::from_scalars(p.ty, a.dims.clone(), &values) {
                    notes.push(format!(
                        "input {k}: {} values converted to {} as jax does without jax_enable_x64",
                        a.ty.name(),
                        p.ty.name()
                    ));
                    out.push(Literal::Array(c));
                    continue;
                }
            }
            out.push(l);
        }
        (out, notes)
    }
}

// ---------------------------------------------------------------------------------------------
// NumPy.

fn npy(bytes: &[u8]) -> Result<(Literal, bool), String> {
    if bytes.len() < 10 || !bytes.starts_with(b"\x93NUMPY") {
        return Err("not a .npy file".into());
    }
    let major = bytes[6];
    let (hlen, start) = if major == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        if bytes.len() < 12 {
            return Err(".npy header is truncated".into());
        }
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    let header = bytes
        .get(start..start + hlen)
        .ok_or(".npy header is truncated")?;
    let header = std::str::from_utf8(header).map_err(|_| ".npy header is not text")?;
    let data = &bytes[start + hlen..];
    let value_after = |key: &str| -> Result<&str, String> {
        let i = header
            .find(&format!("'{key}'"))
            .ok_or_else(|| format!(".npy header has no '{key}': {header}"))?;
        let rest = &header[i + key.len() + 2..];
        let rest = rest
            .trim_start()
            .strip_prefix(':')
            .unwrap_or(rest)
            .trim_start();
        Ok(rest)
    };
    let descr = value_after("descr")?;
    let quote = descr.chars().next().unwrap_or(' ');
    if quote != '\'' && quote != '"' {
        return Err(format!(
            "structured NumPy dtype {descr:?} is not an array of numbers"
        ));
    }
    let descr = &descr[1..descr[1..].find(quote).map(|e| e + 1).unwrap_or(1)];
    let fortran = value_after("fortran_order")?.starts_with("True");
    let shape = value_after("shape")?;
    let shape = shape
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| format!(".npy shape is not a tuple: {shape}"))?;
    let dims: Vec<i64> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.trim_end_matches('L')
                .parse::<i64>()
                .map_err(|_| format!(".npy shape has {s:?}"))
        })
        .collect::<Result<_, _>>()?;
    // The byte-order character, then the type code (a first character that is not ASCII is
    // neither: split on a character boundary and let the code be refused below).
    let first = descr.chars().next().map_or(0, char::len_utf8);
    let (order, code) = descr.split_at(first);
    if !matches!(order, "<" | ">" | "=" | "|") {
        return Err(format!(
            "NumPy dtype {descr:?} has no XLA element type here (no byte order first)"
        ));
    }
    let (ty, raw) = match code {
        "b1" => (PrimitiveType::Pred, false),
        "i1" => (PrimitiveType::S8, false),
        "i2" => (PrimitiveType::S16, false),
        "i4" => (PrimitiveType::S32, false),
        "i8" => (PrimitiveType::S64, false),
        "u1" => (PrimitiveType::U8, false),
        "u2" => (PrimitiveType::U16, false),
        "u4" => (PrimitiveType::U32, false),
        "u8" => (PrimitiveType::U64, false),
        "f2" => (PrimitiveType::F16, false),
        "f4" => (PrimitiveType::F32, false),
        "f8" => (PrimitiveType::F64, false),
        "c8" => (PrimitiveType::C64, false),
        "c16" => (PrimitiveType::C128, false),
        "V1" => (PrimitiveType::U8, true),
        "V2" => (PrimitiveType::U16, true),
        _ => {
            return Err(format!(
                "NumPy dtype {descr:?} has no XLA element type here"
            ))
        }
    };
    if let Some(d) = dims.iter().find(|&&d| d < 0) {
        return Err(format!(".npy shape has a negative dimension {d}"));
    }
    let es = ty.byte_size();
    let n = element_count(&dims)
        .ok_or_else(|| format!(".npy shape {dims:?} has more elements than can be addressed"))?;
    let need = n
        .checked_mul(es)
        .ok_or_else(|| format!(".npy shape {dims:?} has more bytes than can be addressed"))?;
    let mut buf = data
        .get(..need)
        .ok_or_else(|| {
            format!(
                ".npy data is truncated: {} bytes for {n} elements of {es} bytes",
                data.len()
            )
        })?
        .to_vec();
    if order == ">" && es > 1 {
        let part = if ty.is_complex() { es / 2 } else { es };
        for chunk in buf.chunks_mut(part) {
            chunk.reverse();
        }
    }
    if ty == PrimitiveType::Pred {
        for b in &mut buf {
            *b = (*b != 0) as u8;
        }
    }
    if fortran && dims.len() > 1 {
        let m2m: Vec<i64> = (0..dims.len() as i64).collect();
        buf = physical_to_row_major(&buf, &dims, &m2m, es);
    }
    let a = ArrayLiteral::from_bytes(ty, dims, buf).map_err(|e| e.to_string())?;
    Ok((Literal::Array(a), raw))
}

fn le16(b: &[u8], at: usize) -> Result<u16, String> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| "zip archive is truncated".to_string())
}

fn le32(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| "zip archive is truncated".to_string())
}

fn le64(b: &[u8], at: usize) -> Result<u64, String> {
    b.get(at..at + 8)
        .map(|s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
        .ok_or_else(|| "zip archive is truncated".to_string())
}

/// The `.npy` members of an `.npz` (zip) archive, in input order, read through the central
/// directory (numpy writes zip64 entries). The members' declared sizes must fit in `max_bytes`
/// together, checked before any member is decompressed, and a member is never inflated past
/// its declared size (a decompression bomb is an error, not an allocation).
fn npz_members(b: &[u8], max_bytes: u64) -> Result<Vec<(String, Vec<u8>)>, String> {
    let eocd = (0..=b.len().saturating_sub(22))
        .rev()
        .find(|&i| b[i..].starts_with(b"PK\x05\x06"))
        .ok_or("zip archive without an end of central directory")?;
    let mut count = le16(b, eocd + 10)? as u64;
    let mut cd = le32(b, eocd + 16)? as u64;
    if count == 0xFFFF || cd == 0xFFFF_FFFF {
        // zip64 end of central directory, through its locator just before the classic record.
        let loc = eocd
            .checked_sub(20)
            .filter(|&l| b[l..].starts_with(b"PK\x06\x07"))
            .ok_or("zip64 archive without its locator")?;
        let z = le64(b, loc + 8)? as usize;
        if !b.get(z..).is_some_and(|s| s.starts_with(b"PK\x06\x06")) {
            return Err("zip64 end of central directory not found".into());
        }
        count = le64(b, z + 32)?;
        cd = le64(b, z + 48)?;
    }
    let mut at = usize::try_from(cd).map_err(|_| "zip central directory is out of range")?;
    // (name, method, compressed bytes, declared size): the whole directory first, so that the
    // sizes are checked before anything is decompressed.
    let mut entries: Vec<(String, u16, &[u8], u64)> = Vec::new();
    let mut total = 0u64;
    for _ in 0..count {
        if !b.get(at..).is_some_and(|s| s.starts_with(b"PK\x01\x02")) {
            return Err("zip central directory is damaged".into());
        }
        let method = le16(b, at + 10)?;
        let mut csize = le32(b, at + 20)? as u64;
        let mut usize_ = le32(b, at + 24)? as u64;
        let nlen = le16(b, at + 28)? as usize;
        let xlen = le16(b, at + 30)? as usize;
        let clen = le16(b, at + 32)? as usize;
        let mut local = le32(b, at + 42)? as u64;
        let name =
            String::from_utf8_lossy(b.get(at + 46..at + 46 + nlen).ok_or("zip name")?).into_owned();
        // zip64 extra field: the sizes and offset that are 0xFFFFFFFF above, in that order.
        let extra = b
            .get(at + 46 + nlen..at + 46 + nlen + xlen)
            .ok_or("zip extra field is truncated")?;
        let mut x = 0;
        while x + 4 <= extra.len() {
            let id = le16(extra, x)?;
            let len = le16(extra, x + 2)? as usize;
            if id == 1 {
                let mut p = x + 4;
                for v in [&mut usize_, &mut csize, &mut local] {
                    if *v == 0xFFFF_FFFF {
                        *v = le64(extra, p)?;
                        p += 8;
                    }
                }
            }
            x += 4 + len;
        }
        at += 46 + nlen + xlen + clen;
        let l = usize::try_from(local).unwrap_or(usize::MAX);
        if !b.get(l..).is_some_and(|s| s.starts_with(b"PK\x03\x04")) {
            return Err(format!("{name}: zip local header not found"));
        }
        let start = l + 30 + le16(b, l + 26)? as usize + le16(b, l + 28)? as usize;
        let raw = usize::try_from(csize)
            .ok()
            .and_then(|c| start.checked_add(c))
            .and_then(|end| b.get(start..end))
            .ok_or_else(|| format!("{name}: zip member is truncated"))?;
        total = total.saturating_add(usize_);
        if total > max_bytes {
            return Err(format!(
                "{name}: the archive's members declare {total} bytes or more, over the memory \
                 budget of {max_bytes} bytes"
            ));
        }
        entries.push((name, method, raw, usize_));
    }
    let mut members = Vec::new();
    for (name, method, raw, size) in entries {
        // Within the budget, so it fits in memory (and in usize).
        let size = size as usize;
        let data = match method {
            0 => raw.to_vec(),
            8 => match miniz_oxide::inflate::decompress_to_vec_with_limit(raw, size) {
                Ok(d) => d,
                Err(e) if e.status == miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
                    return Err(format!(
                        "{name}: zip member inflates to more than its declared {size} bytes"
                    ))
                }
                Err(e) => return Err(format!("{name}: deflate: {e}")),
            },
            m => {
                return Err(format!(
                    "{name}: zip compression method {m} is not supported"
                ))
            }
        };
        if data.len() != size {
            return Err(format!(
                "{name}: zip member has {} bytes, its directory entry says {size}",
                data.len()
            ));
        }
        members.push((name.trim_end_matches(".npy").to_string(), data));
    }
    // savez(*arrays) names them arr_0, arr_1, ...: order by number (arr_10 after arr_9).
    let index = |n: &str| n.strip_prefix("arr_").and_then(|d| d.parse::<u64>().ok());
    if members.iter().all(|(n, _)| index(n).is_some()) {
        members.sort_by_key(|(n, _)| index(n));
    }
    Ok(members)
}

/// The element count of `dims` (all non-negative), `None` when it overflows.
fn element_count(dims: &[i64]) -> Option<usize> {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
}

/// Whether `m2m` is a permutation of `0..rank` (a layout's `minor_to_major` must be).
fn is_permutation(m2m: &[i64], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    m2m.len() == rank
        && m2m.iter().all(|&d| {
            usize::try_from(d)
                .ok()
                .and_then(|d| seen.get_mut(d))
                .is_some_and(|s| !std::mem::replace(s, true))
        })
}

/// Reorders elements stored with layout `m2m` (minor to major) into row-major order. The
/// caller has checked that `m2m` is a permutation of the dimensions, that they are not
/// negative, and that `data` holds exactly their elements.
fn physical_to_row_major(data: &[u8], dims: &[i64], m2m: &[i64], es: usize) -> Vec<u8> {
    let rank = dims.len();
    let mut pstride = vec![0usize; rank];
    let mut s = 1usize;
    for &d in m2m {
        pstride[d as usize] = s;
        s *= dims[d as usize].max(0) as usize;
    }
    let n: usize = dims.iter().map(|&d| d.max(0) as usize).product();
    let mut out = Vec::with_capacity(n * es);
    let mut idx = vec![0usize; rank];
    for _ in 0..n {
        let off: usize = idx.iter().zip(&pstride).map(|(i, s)| i * s).sum();
        out.extend_from_slice(&data[off * es..off * es + es]);
        for d in (0..rank).rev() {
            idx[d] += 1;
            if idx[d] < dims[d] as usize {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Literal protos: binary wire format and text format over one accessor.

/// A protobuf message in either encoding: binary fields are known by number, text fields by
/// name; every accessor asks with both.
#[derive(Clone, Debug)]
enum Msg {
    Binary(Vec<u8>),
    Text(Vec<(String, TextValue)>),
}

#[derive(Clone, Debug)]
enum TextValue {
    Scalar(String),
    Str(Vec<u8>),
    Msg(Vec<(String, TextValue)>),
}

/// Maps a text-format enum value name to its number.
type EnumOf = dyn Fn(&str) -> Option<i64>;

/// A field value in either encoding.
#[derive(Clone, Debug)]
enum Value<'a> {
    Varint(u64),
    Fixed32(u32),
    Fixed64(u64),
    Len(&'a [u8]),
    Text(&'a TextValue),
}

fn varint(b: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let byte = *b.get(*at).ok_or("protobuf varint is truncated")?;
        *at += 1;
        if shift < 64 {
            v |= ((byte & 0x7f) as u64) << shift;
        }
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("protobuf varint is too long".into())
}

/// The fields of a binary message, in order.
fn wire_fields(b: &[u8]) -> Result<Vec<(u32, Value<'_>)>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let key = varint(b, &mut at)?;
        let (num, wt) = ((key >> 3) as u32, key & 7);
        if num == 0 {
            return Err("protobuf field number 0".into());
        }
        let v = match wt {
            0 => Value::Varint(varint(b, &mut at)?),
            1 => {
                let s = b.get(at..at + 8).ok_or("protobuf fixed64 is truncated")?;
                at += 8;
                Value::Fixed64(u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
            }
            2 => {
                let len = varint(b, &mut at)? as usize;
                let s = b
                    .get(at..at.checked_add(len).ok_or("protobuf length")?)
                    .ok_or("protobuf field is truncated")?;
                at += len;
                Value::Len(s)
            }
            5 => {
                let s = b.get(at..at + 4).ok_or("protobuf fixed32 is truncated")?;
                at += 4;
                Value::Fixed32(u32::from_le_bytes(s.try_into().unwrap_or([0; 4])))
            }
            w => return Err(format!("protobuf wire type {w} is not supported")),
        };
        out.push((num, v));
    }
    Ok(out)
}

impl Msg {
    fn fields(&self, num: u32, name: &str) -> Result<Vec<Value<'_>>, String> {
        Ok(match self {
            Msg::Binary(b) => wire_fields(b)?
                .into_iter()
                .filter(|(n, _)| *n == num)
                .map(|(_, v)| v)
                .collect(),
            Msg::Text(fields) => fields
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| Value::Text(v))
                .collect(),
        })
    }

    fn has_fields(&self) -> bool {
        match self {
            Msg::Binary(b) => !b.is_empty(),
            Msg::Text(f) => !f.is_empty(),
        }
    }

    fn messages(&self, num: u32, name: &str) -> Result<Vec<Msg>, String> {
        self.fields(num, name)?
            .into_iter()
            .map(|v| match v {
                Value::Len(b) => Ok(Msg::Binary(b.to_vec())),
                Value::Text(TextValue::Msg(f)) => Ok(Msg::Text(f.clone())),
                _ => Err(format!("field {name} is not a message")),
            })
            .collect()
    }

    fn message(&self, num: u32, name: &str) -> Result<Option<Msg>, String> {
        Ok(self.messages(num, name)?.into_iter().next())
    }

    /// Repeated integer field (varints, packed or not; text numbers or enum names via `enum_of`).
    fn ints(&self, num: u32, name: &str, enum_of: Option<&EnumOf>) -> Result<Vec<i64>, String> {
        let mut out = Vec::new();
        for v in self.fields(num, name)? {
            match v {
                Value::Varint(x) => out.push(x as i64),
                Value::Len(b) => {
                    let mut at = 0;
                    while at < b.len() {
                        out.push(varint(b, &mut at)? as i64);
                    }
                }
                Value::Text(TextValue::Scalar(s)) => {
                    let s = s.as_str();
                    let n = match s {
                        "true" | "True" => Some(1),
                        "false" | "False" => Some(0),
                        _ => s
                            .parse::<i64>()
                            .ok()
                            .or_else(|| s.parse::<u64>().ok().map(|u| u as i64))
                            .or_else(|| {
                                s.strip_prefix("0x")
                                    .and_then(|h| u64::from_str_radix(h, 16).ok())
                                    .map(|u| u as i64)
                            })
                            .or_else(|| enum_of.and_then(|f| f(s))),
                    };
                    out.push(n.ok_or_else(|| format!("field {name}: {s:?} is not a number"))?);
                }
                _ => return Err(format!("field {name} is not an integer")),
            }
        }
        Ok(out)
    }

    /// Repeated fixed-width float field as bit patterns (`double`: 64 bits, else 32).
    fn float_bits(&self, num: u32, name: &str, double: bool) -> Result<Vec<u64>, String> {
        let mut out = Vec::new();
        for v in self.fields(num, name)? {
            match v {
                Value::Fixed32(x) if !double => out.push(x as u64),
                Value::Fixed64(x) if double => out.push(x),
                Value::Len(b) => {
                    let w = if double { 8 } else { 4 };
                    if b.len() % w != 0 {
                        return Err(format!("field {name}: packed floats of a wrong length"));
                    }
                    for c in b.chunks(w) {
                        out.push(if double {
                            u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))
                        } else {
                            u32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as u64
                        });
                    }
                }
                Value::Text(TextValue::Scalar(s)) => {
                    let f = text_float(s)
                        .ok_or_else(|| format!("field {name}: {s:?} is not a number"))?;
                    out.push(if double {
                        f.to_bits()
                    } else {
                        (f as f32).to_bits() as u64
                    });
                }
                _ => return Err(format!("field {name} is not a float")),
            }
        }
        Ok(out)
    }

    fn bytes(&self, num: u32, name: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        for v in self.fields(num, name)? {
            match v {
                Value::Len(b) => out.extend_from_slice(b),
                Value::Text(TextValue::Str(b)) => out.extend_from_slice(b),
                _ => return Err(format!("field {name} is not bytes")),
            }
        }
        Ok(out)
    }
}

fn text_float(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "inf" | "infinity" | "inff" => Some(f64::INFINITY),
        "-inf" | "-infinity" | "-inff" => Some(f64::NEG_INFINITY),
        "nan" | "-nan" | "nanf" => Some(f64::NAN),
        // C-style float suffix (`1.5f`).
        t => t
            .parse::<f64>()
            .ok()
            .or_else(|| t.strip_suffix('f').and_then(|t| t.parse::<f64>().ok())),
    }
}

/// `xla.PrimitiveType` enum number of a type (xla_data.proto).
fn proto_type_number(ty: PrimitiveType) -> i64 {
    use PrimitiveType::*;
    match ty {
        Pred => 1,
        S1 => 30,
        S2 => 26,
        S4 => 21,
        S8 => 2,
        S16 => 3,
        S32 => 4,
        S64 => 5,
        U1 => 31,
        U2 => 27,
        U4 => 22,
        U8 => 6,
        U16 => 7,
        U32 => 8,
        U64 => 9,
        F16 => 10,
        F32 => 11,
        Bf16 => 16,
        F64 => 12,
        F8E5M2 => 19,
        F8E4M3 => 28,
        F8E4M3FN => 20,
        F8E4M3B11FNUZ => 23,
        F8E3M4 => 29,
        F8E5M2FNUZ => 24,
        F8E4M3FNUZ => 25,
        F4E2M1FN => 32,
        F8E8M0FNU => 33,
        C64 => 15,
        C128 => 18,
        Token => 17,
        Opaque => 14,
    }
}

const TUPLE: i64 = 13;

/// `LiteralProto`'s field number for the values of `ty`.
fn literal_field_number(ty: PrimitiveType) -> u32 {
    use PrimitiveType::*;
    match ty {
        Pred => 2,
        S1 => 30,
        S2 => 26,
        S4 => 21,
        S8 => 15,
        U1 => 31,
        U2 => 27,
        U4 => 22,
        U8 => 3,
        S32 => 4,
        S64 => 5,
        U32 => 6,
        U64 => 7,
        F32 => 8,
        F64 => 9,
        C64 => 12,
        C128 => 18,
        F16 => 11,
        Bf16 => 13,
        U16 => 16,
        S16 => 17,
        F4E2M1FN => 32,
        F8E3M4 => 29,
        F8E4M3B11FNUZ => 23,
        F8E4M3FN => 20,
        F8E4M3FNUZ => 25,
        F8E4M3 => 28,
        F8E5M2FNUZ => 24,
        F8E5M2 => 19,
        F8E8M0FNU => 33,
        Token | Opaque => 0,
    }
}

fn type_of_enum(v: i64) -> Option<PrimitiveType> {
    PrimitiveType::ALL_ARRAY
        .iter()
        .copied()
        .find(|t| proto_type_number(*t) == v)
}

fn enum_of_name(s: &str) -> Option<i64> {
    if s == "TUPLE" {
        return Some(TUPLE);
    }
    if s == "TOKEN" {
        return Some(17);
    }
    PrimitiveType::ALL_ARRAY
        .iter()
        .find(|t| crate::repro::proto_type_name(**t) == s)
        .map(|t| proto_type_number(*t))
}

/// A `LiteralProto` as a literal (tuples nested at most [`MAX_NESTING`] deep).
fn literal_of_proto(m: &Msg) -> Result<Literal, String> {
    literal_of_proto_at(m, 0)
}

fn literal_of_proto_at(m: &Msg, depth: usize) -> Result<Literal, String> {
    if depth > MAX_NESTING {
        return Err(format!(
            "tuple literals nested deeper than {MAX_NESTING} levels"
        ));
    }
    let shape = m
        .message(1, "shape")?
        .ok_or("a literal proto without a shape")?;
    let et = shape
        .ints(2, "element_type", Some(&enum_of_name))?
        .first()
        .copied()
        .unwrap_or(0);
    if et == TUPLE {
        return Ok(Literal::Tuple(
            m.messages(10, "tuple_literals")?
                .iter()
                .map(|t| literal_of_proto_at(t, depth + 1))
                .collect::<Result<_, _>>()?,
        ));
    }
    if et == 17 {
        return Ok(Literal::Token);
    }
    let ty = type_of_enum(et).ok_or_else(|| format!("element type {et} is not supported"))?;
    let dims = shape.ints(3, "dimensions", None)?;
    let shape_text = || {
        format!(
            "{}[{}]",
            ty.name(),
            dims.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        )
    };
    if dims.iter().any(|&d| d < 0) {
        return Err(format!("{} has a negative dimension", shape_text()));
    }
    let m2m = match shape.message(5, "layout")? {
        Some(l) => l.ints(1, "minor_to_major", None)?,
        None => Vec::new(),
    };
    // An empty minor_to_major is no layout (row-major); any other must order every dimension
    // once, or the data cannot be placed (and a repeated dimension would scramble it).
    if !m2m.is_empty() && !is_permutation(&m2m, dims.len()) {
        return Err(format!(
            "{}: layout minor_to_major {m2m:?} is not a permutation of the {} dimensions",
            shape_text(),
            dims.len()
        ));
    }
    let n = element_count(&dims)
        .ok_or_else(|| format!("{} has more elements than can be addressed", shape_text()))?;
    let (num, name) = (literal_field_number(ty), crate::repro::proto_field(ty).0);
    let es = ty.byte_size();
    let need = n
        .checked_mul(es)
        .ok_or_else(|| format!("{} has more bytes than can be addressed", shape_text()))?;
    let mut data: Vec<u8> = match ty {
        PrimitiveType::Pred => m
            .ints(num, name, None)?
            .into_iter()
            .map(|v| (v != 0) as u8)
            .collect(),
        PrimitiveType::S32 | PrimitiveType::U32 => m
            .ints(num, name, None)?
            .into_iter()
            .flat_map(|v| (v as u32).to_le_bytes())
            .collect(),
        PrimitiveType::S64 | PrimitiveType::U64 => m
            .ints(num, name, None)?
            .into_iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        PrimitiveType::F32 | PrimitiveType::C64 => m
            .float_bits(num, name, false)?
            .into_iter()
            .flat_map(|v| (v as u32).to_le_bytes())
            .collect(),
        PrimitiveType::F64 | PrimitiveType::C128 => m
            .float_bits(num, name, true)?
            .into_iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        _ => m.bytes(num, name)?,
    };
    // Sub-byte integer types keep one value per byte, sign-extended as hlo::Literal stores them.
    if matches!(
        ty,
        PrimitiveType::S1 | PrimitiveType::S2 | PrimitiveType::S4
    ) {
        let bits = ty.bit_width();
        for b in &mut data {
            *b = (((*b as i8) << (8 - bits)) >> (8 - bits)) as u8;
        }
    }
    if data.len() != need {
        return Err(format!(
            "{} needs {n} values, the proto holds {} bytes of them",
            shape_text(),
            data.len()
        ));
    }
    let row_major: Vec<i64> = (0..dims.len() as i64).rev().collect();
    if !m2m.is_empty() && m2m != row_major {
        data = physical_to_row_major(&data, &dims, &m2m, es);
    }
    ArrayLiteral::from_bytes(ty, dims, data)
        .map(Literal::Array)
        .map_err(|e| e.to_string())
}

/// The argument literals of a container message: `HloSnapshot` (`arguments` = 2),
/// `RunHloModuleLiterals` (`iterations` = 1, each `arguments` = 1; the first is taken) or
/// `RunHloModuleIterationLiterals` (`arguments` = 1, text only: in binary it cannot be told from
/// the former).
fn literals_of_container(m: &Msg) -> Result<Vec<Literal>, String> {
    match m {
        Msg::Text(fields) => {
            if fields.iter().any(|(n, _)| n == "iterations") {
                let it = m.message(1, "iterations")?.unwrap_or(Msg::Text(Vec::new()));
                return it
                    .messages(1, "arguments")?
                    .iter()
                    .map(literal_of_proto)
                    .collect();
            }
            if fields.iter().any(|(n, _)| n == "arguments") {
                return m
                    .messages(2, "arguments")?
                    .iter()
                    .map(literal_of_proto)
                    .collect();
            }
            if fields.iter().any(|(n, _)| n == "shape") {
                return Ok(vec![literal_of_proto(m)?]);
            }
            Err("a literal proto text without iterations, arguments or shape".into())
        }
        Msg::Binary(b) => {
            let fields = wire_fields(b)?;
            if fields.iter().any(|(n, _)| *n == 2) {
                // HloSnapshot: hlo = 1, arguments = 2, result = 3.
                return m
                    .messages(2, "arguments")?
                    .iter()
                    .map(literal_of_proto)
                    .collect();
            }
            let it = m.message(1, "iterations")?.ok_or("an empty proto")?;
            if !it.has_fields() {
                return Ok(Vec::new());
            }
            it.messages(1, "arguments")?
                .iter()
                .map(literal_of_proto)
                .collect()
        }
    }
}

/// The arguments of an `xla.HloSnapshot` (`--xla_dump_hlo_snapshots`' `*.snapshot.*.pb`).
pub fn hlo_snapshot_arguments(bytes: &[u8]) -> Result<Vec<Literal>, String> {
    let m = Msg::Binary(bytes.to_vec());
    m.messages(2, "arguments")?
        .iter()
        .map(literal_of_proto)
        .collect()
}

mod text_format {
    //! Protobuf text format, as far as literal protos need: nested messages, scalars, strings.
    use super::TextValue;

    /// Parses `text`, with messages nested at most `max_depth` deep.
    pub fn parse(text: &str, max_depth: usize) -> Result<super::Msg, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            at: 0,
            line: 1,
            depth: 0,
            max_depth,
        };
        let fields = p.message(None)?;
        Ok(super::Msg::Text(fields))
    }

    struct Parser<'a> {
        s: &'a [u8],
        at: usize,
        line: usize,
        depth: usize,
        max_depth: usize,
    }

    impl Parser<'_> {
        fn err(&self, m: &str) -> String {
            let line_start = self.s[..self.at.min(self.s.len())]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |i| i + 1);
            let column = String::from_utf8_lossy(&self.s[line_start..self.at.min(self.s.len())])
                .chars()
                .count()
                + 1;
            format!("{}:{column}: {m}", self.line)
        }

        fn skip(&mut self) {
            while let Some(&c) = self.s.get(self.at) {
                if c == b'#' {
                    while self.s.get(self.at).is_some_and(|&c| c != b'\n') {
                        self.at += 1;
                    }
                } else if c.is_ascii_whitespace() || c == b',' || c == b';' {
                    if c == b'\n' {
                        self.line += 1;
                    }
                    self.at += 1;
                } else {
                    break;
                }
            }
        }

        fn word(&mut self) -> String {
            let start = self.at;
            while self.s.get(self.at).is_some_and(|&c| {
                c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'+')
            }) {
                self.at += 1;
            }
            String::from_utf8_lossy(&self.s[start..self.at]).into_owned()
        }

        fn message(&mut self, close: Option<u8>) -> Result<Vec<(String, TextValue)>, String> {
            let mut fields = Vec::new();
            loop {
                self.skip();
                match (self.s.get(self.at), close) {
                    (None, None) => return Ok(fields),
                    (None, Some(_)) => return Err(self.err("unclosed message")),
                    (Some(&c), Some(cl)) if c == cl => {
                        self.at += 1;
                        return Ok(fields);
                    }
                    _ => {}
                }
                let name = self.word();
                if name.is_empty() {
                    return Err(self.err("expected a field name"));
                }
                self.skip();
                let mut colon = false;
                if self.s.get(self.at) == Some(&b':') {
                    self.at += 1;
                    colon = true;
                    self.skip();
                }
                match self.s.get(self.at) {
                    Some(b'{') | Some(b'<') => {
                        let cl = if self.s[self.at] == b'{' { b'}' } else { b'>' };
                        if self.depth >= self.max_depth {
                            return Err(self.err(&format!(
                                "messages nested deeper than {} levels",
                                self.max_depth
                            )));
                        }
                        self.at += 1;
                        self.depth += 1;
                        let sub = self.message(Some(cl))?;
                        self.depth -= 1;
                        fields.push((name, TextValue::Msg(sub)));
                    }
                    Some(b'[') if colon => {
                        self.at += 1;
                        loop {
                            self.skip();
                            if self.s.get(self.at) == Some(&b']') {
                                self.at += 1;
                                break;
                            }
                            let v = self.value()?;
                            fields.push((name.clone(), v));
                        }
                    }
                    _ if colon => {
                        let v = self.value()?;
                        fields.push((name, v));
                    }
                    _ => return Err(self.err(&format!("expected ':' or '{{' after {name}"))),
                }
            }
        }

        fn value(&mut self) -> Result<TextValue, String> {
            match self.s.get(self.at) {
                Some(&q) if q == b'"' || q == b'\'' => {
                    let mut out = Vec::new();
                    // Adjacent string literals concatenate.
                    while self.s.get(self.at) == Some(&q) {
                        self.at += 1;
                        out.extend(self.string(q)?);
                        self.skip();
                    }
                    Ok(TextValue::Str(out))
                }
                Some(_) => {
                    let w = self.word();
                    if w.is_empty() {
                        Err(self.err("expected a value"))
                    } else {
                        Ok(TextValue::Scalar(w))
                    }
                }
                None => Err(self.err("expected a value")),
            }
        }

        fn string(&mut self, q: u8) -> Result<Vec<u8>, String> {
            let mut out = Vec::new();
            loop {
                let c = *self
                    .s
                    .get(self.at)
                    .ok_or_else(|| self.err("unclosed string"))?;
                self.at += 1;
                if c == q {
                    return Ok(out);
                }
                if c != b'\\' {
                    out.push(c);
                    continue;
                }
                let e = *self
                    .s
                    .get(self.at)
                    .ok_or_else(|| self.err("unclosed string"))?;
                self.at += 1;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'v' => out.push(11),
                    b'x' | b'X' => {
                        let mut v = 0u32;
                        let mut k = 0;
                        while k < 2 && self.s.get(self.at).is_some_and(u8::is_ascii_hexdigit) {
                            v = v * 16 + (self.s[self.at] as char).to_digit(16).unwrap_or(0);
                            self.at += 1;
                            k += 1;
                        }
                        out.push(v as u8);
                    }
                    b'0'..=b'7' => {
                        let mut v = (e - b'0') as u32;
                        let mut k = 1;
                        while k < 3
                            && self
                                .s
                                .get(self.at)
                                .is_some_and(|c| (b'0'..=b'7').contains(c))
                        {
                            v = v * 8 + (self.s[self.at] - b'0') as u32;
                            self.at += 1;
                            k += 1;
                        }
                        out.push(v as u8);
                    }
                    other => out.push(other),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(dims: Vec<i64>, v: &[f32]) -> Literal {
        let data = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        Literal::Array(ArrayLiteral::from_bytes(PrimitiveType::F32, dims, data).unwrap())
    }

    fn npy_bytes(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut h = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((h.len() as u16).to_le_bytes());
        out.extend(h.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn our_pbtxt_reads_back_bit_for_bit() {
        let ins = vec![
            f32s(vec![2, 2], &[1.5, f32::INFINITY, -0.0, 3.0]),
            Literal::Array(
                ArrayLiteral::from_bytes(PrimitiveType::Bf16, vec![1], vec![0x80, 0x3f]).unwrap(),
            ),
            Literal::Tuple(vec![Literal::Array(
                ArrayLiteral::from_bytes(PrimitiveType::S4, vec![2], vec![0xf9, 3]).unwrap(),
            )]),
        ];
        let text = crate::repro::run_hlo_module_literals_pbtxt(&ins);
        let r = read_inputs_bytes(text.as_bytes()).unwrap();
        assert_eq!(r.format, InputFormat::ProtoText);
        assert_eq!(r.literals, ins);
    }

    #[test]
    fn proto_text_layout_is_honoured() {
        // A column-major f32[2,3]: physical order is column by column.
        let t = "arguments {\n shape { element_type: F32 dimensions: 2 dimensions: 3 layout { minor_to_major: 0 minor_to_major: 1 } }\n f32s: [1, 4, 2, 5, 3, 6]\n}\n";
        let r = read_inputs_bytes(t.as_bytes()).unwrap();
        assert_eq!(
            r.literals,
            vec![f32s(vec![2, 3], &[1., 2., 3., 4., 5., 6.])]
        );
    }

    #[test]
    fn binary_snapshot_arguments_are_read() {
        // HloSnapshot { arguments { shape { element_type: F32 dimensions: 2 } f32s: [packed] } }
        let mut shape = vec![0x10, 11, 0x18, 2];
        let mut lit = vec![0x0a, shape.len() as u8];
        lit.append(&mut shape);
        lit.extend([0x42, 8]);
        lit.extend(2.5f32.to_le_bytes());
        lit.extend(f32::NAN.to_le_bytes());
        let mut snap = vec![0x12, lit.len() as u8];
        snap.extend(lit);
        let r = read_inputs_bytes(&snap).unwrap();
        assert_eq!(r.format, InputFormat::Proto);
        assert_eq!(r.literals, vec![f32s(vec![2], &[2.5, f32::NAN])]);
    }

    #[test]
    fn npy_fortran_order_and_byte_order_are_honoured() {
        let data: Vec<u8> = [1.0f64, 4.0, 2.0, 5.0, 3.0, 6.0]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        let r = read_inputs_bytes(&npy_bytes(">f8", true, "(2, 3)", &data)).unwrap();
        assert_eq!(r.format, InputFormat::Npy);
        let (ls, notes) = r.fit_to(&[Shape::array(PrimitiveType::F32, vec![2, 3])]);
        assert_eq!(ls, vec![f32s(vec![2, 3], &[1., 2., 3., 4., 5., 6.])]);
        assert_eq!(notes.len(), 1, "{notes:?}");
    }

    #[test]
    fn npy_raw_two_byte_values_take_the_parameter_type() {
        let r = read_inputs_bytes(&npy_bytes("<V2", false, "(1,)", &[0x80, 0x3f])).unwrap();
        let (ls, _) = r.fit_to(&[Shape::array(PrimitiveType::Bf16, vec![1])]);
        assert_eq!(ls[0].as_array().unwrap().ty, PrimitiveType::Bf16);
    }

    /// A stored (method 0) zip of two members, written the way Python's zipfile writes one.
    fn zip_stored(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut cd = Vec::new();
        for (name, data) in members {
            let off = out.len() as u32;
            let mut h = b"PK\x03\x04".to_vec();
            h.extend([20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            h.extend((data.len() as u32).to_le_bytes());
            h.extend((data.len() as u32).to_le_bytes());
            h.extend((name.len() as u16).to_le_bytes());
            h.extend(0u16.to_le_bytes());
            h.extend(name.as_bytes());
            out.extend(h);
            out.extend(data);
            let mut c = b"PK\x01\x02".to_vec();
            c.extend([20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            c.extend((data.len() as u32).to_le_bytes());
            c.extend((data.len() as u32).to_le_bytes());
            c.extend((name.len() as u16).to_le_bytes());
            c.extend([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            c.extend(off.to_le_bytes());
            c.extend(name.as_bytes());
            cd.extend(c);
        }
        let cd_off = out.len() as u32;
        out.extend(&cd);
        out.extend(b"PK\x05\x06\0\0\0\0");
        out.extend((members.len() as u16).to_le_bytes());
        out.extend((members.len() as u16).to_le_bytes());
        out.extend((cd.len() as u32).to_le_bytes());
        out.extend(cd_off.to_le_bytes());
        out.extend([0, 0]);
        out
    }

    #[test]
    fn npz_members_come_in_argument_order() {
        let a = npy_bytes("<f4", false, "()", &2.0f32.to_le_bytes());
        let b = npy_bytes("<f4", false, "(1,)", &3.0f32.to_le_bytes());
        let mut many: Vec<(String, Vec<u8>)> = (0..11)
            .map(|i| {
                (
                    format!("arr_{i}.npy"),
                    if i == 10 { b.clone() } else { a.clone() },
                )
            })
            .collect();
        many.swap(2, 10); // archive order differs from argument order
        let z = zip_stored(
            &many
                .iter()
                .map(|(n, d)| (n.as_str(), d.clone()))
                .collect::<Vec<_>>(),
        );
        let r = read_inputs_bytes(&z).unwrap();
        assert_eq!(r.format, InputFormat::Npz);
        assert_eq!(r.literals.len(), 11);
        assert_eq!(r.literals[10], f32s(vec![1], &[3.0]));
        assert_eq!(r.literals[2], f32s(vec![], &[2.0]));
    }

    /// A zip of `(name, method, payload, declared uncompressed size)` members.
    fn zip_with(members: &[(&str, u16, Vec<u8>, u32)]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut cd = Vec::new();
        for (name, method, payload, declared) in members {
            let off = out.len() as u32;
            let mut h = b"PK\x03\x04".to_vec();
            h.extend([20, 0, 0, 0]);
            h.extend(method.to_le_bytes());
            h.extend([0, 0, 0, 0, 0, 0, 0, 0]);
            h.extend((payload.len() as u32).to_le_bytes());
            h.extend(declared.to_le_bytes());
            h.extend((name.len() as u16).to_le_bytes());
            h.extend(0u16.to_le_bytes());
            h.extend(name.as_bytes());
            out.extend(h);
            out.extend(payload);
            let mut c = b"PK\x01\x02".to_vec();
            c.extend([20, 0, 20, 0, 0, 0]);
            c.extend(method.to_le_bytes());
            c.extend([0, 0, 0, 0, 0, 0, 0, 0]);
            c.extend((payload.len() as u32).to_le_bytes());
            c.extend(declared.to_le_bytes());
            c.extend((name.len() as u16).to_le_bytes());
            c.extend([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            c.extend(off.to_le_bytes());
            c.extend(name.as_bytes());
            cd.extend(c);
        }
        let cd_off = out.len() as u32;
        out.extend(&cd);
        out.extend(b"PK\x05\x06\0\0\0\0");
        out.extend((members.len() as u16).to_le_bytes());
        out.extend((members.len() as u16).to_le_bytes());
        out.extend((cd.len() as u32).to_le_bytes());
        out.extend(cd_off.to_le_bytes());
        out.extend([0, 0]);
        out
    }

    fn proto_text_with_layout(m2m: &[i64]) -> String {
        let layout: String = m2m
            .iter()
            .map(|d| format!(" minor_to_major: {d}"))
            .collect();
        format!(
            "arguments {{\n shape {{ element_type: F32 dimensions: 2 dimensions: 3 layout {{{layout} }} }}\n f32s: [1, 4, 2, 5, 3, 6]\n}}\n"
        )
    }

    /// A binary `HloSnapshot` with one argument `shape { F32 [2,3] layout { m2m } }`.
    fn proto_binary_with_layout(m2m: &[i64]) -> Vec<u8> {
        fn len_field(num: u8, body: &[u8]) -> Vec<u8> {
            let mut out = vec![num << 3 | 2];
            let mut n = body.len();
            loop {
                let b = (n & 0x7f) as u8;
                n >>= 7;
                out.push(if n > 0 { b | 0x80 } else { b });
                if n == 0 {
                    break;
                }
            }
            out.extend(body);
            out
        }
        let mut layout = Vec::new();
        for &d in m2m {
            layout.push(0x08);
            let mut v = d as u64;
            loop {
                let b = (v & 0x7f) as u8;
                v >>= 7;
                layout.push(if v > 0 { b | 0x80 } else { b });
                if v == 0 {
                    break;
                }
            }
        }
        let mut shape = vec![0x10, 11, 0x18, 2, 0x18, 3];
        shape.extend(len_field(5, &layout));
        let mut lit = len_field(1, &shape);
        let values: Vec<u8> = [1f32, 4., 2., 5., 3., 6.]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        lit.extend(len_field(8, &values));
        len_field(2, &lit)
    }

    /// minor_to_major must be a permutation of the dimensions: out of range and negative
    /// entries used to panic (index out of bounds), a repeated one scrambled the data silently
    /// (1,4,2,5,3,6 read as 1,1,1,2,2,2).
    #[test]
    fn a_layout_that_is_not_a_permutation_is_an_error() {
        for m2m in [&[7, 1][..], &[-1, 0], &[1, 1], &[0, 0], &[0], &[2, 1, 0]] {
            for (form, bytes) in [
                ("text", proto_text_with_layout(m2m).into_bytes()),
                ("binary", proto_binary_with_layout(m2m)),
            ] {
                let e = read_inputs_bytes(&bytes)
                    .map(|r| r.literals)
                    .expect_err(&format!("{form} {m2m:?} accepted"));
                assert!(e.contains("not a permutation"), "{form} {m2m:?}: {e}");
            }
        }
        // The permutations still read (the binary form too).
        for m2m in [&[0, 1][..], &[1, 0]] {
            let want = if m2m == [0, 1] {
                f32s(vec![2, 3], &[1., 2., 3., 4., 5., 6.])
            } else {
                f32s(vec![2, 3], &[1., 4., 2., 5., 3., 6.])
            };
            let r = read_inputs_bytes(&proto_binary_with_layout(m2m)).unwrap();
            assert_eq!(r.literals, vec![want.clone()], "{m2m:?}");
            let r = read_inputs_bytes(proto_text_with_layout(m2m).as_bytes()).unwrap();
            assert_eq!(r.literals, vec![want], "{m2m:?}");
        }
    }

    /// A `descr` whose first character is not ASCII used to panic ("not a char boundary").
    #[test]
    fn an_npy_descr_that_starts_with_a_non_ascii_character_is_an_error() {
        for descr in ["\u{e9}f4", "\u{1F600}", "<\u{e9}", "\u{e9}"] {
            let e = read_inputs_bytes(&npy_bytes(descr, false, "(1,)", &[0; 4]))
                .map(|r| r.literals)
                .unwrap_err();
            assert!(e.contains("no XLA element type"), "{descr:?}: {e}");
        }
    }

    /// Deep nesting is an error, not a stack overflow (text messages and binary tuples).
    #[test]
    fn deeply_nested_protos_are_an_error() {
        let deep = 200_000;
        let text = format!("arguments {}{}", "{ a ".repeat(deep), "}".repeat(deep));
        let e = read_inputs_bytes(text.as_bytes())
            .map(|r| r.literals)
            .unwrap_err();
        assert!(e.contains("nested deeper than"), "{e}");
        assert!(
            e.starts_with("1:"),
            "the error has the line and column: {e}"
        );

        // tuple_literals inside tuple_literals, each with a TUPLE shape.
        let mut lit: Vec<u8> = vec![0x0a, 2, 0x10, 13];
        for _ in 0..3000 {
            let mut next = vec![0x0a, 2, 0x10, 13, 0x52];
            let mut n = lit.len();
            loop {
                let b = (n & 0x7f) as u8;
                n >>= 7;
                next.push(if n > 0 { b | 0x80 } else { b });
                if n == 0 {
                    break;
                }
            }
            next.extend(&lit);
            lit = next;
        }
        let mut snap = vec![0x12];
        let mut n = lit.len();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            snap.push(if n > 0 { b | 0x80 } else { b });
            if n == 0 {
                break;
            }
        }
        snap.extend(lit);
        let e = read_inputs_bytes(&snap).map(|r| r.literals).unwrap_err();
        assert!(e.contains("nested deeper than"), "{e}");
    }

    /// A member that inflates past its declared size stops there; members whose declared
    /// sizes exceed the memory budget are refused before anything is inflated.
    #[test]
    fn an_npz_decompression_bomb_is_refused_within_its_budget() {
        let big = npy_bytes("<f4", false, "(1048576,)", &vec![0u8; 4 << 20]);
        let deflated = miniz_oxide::deflate::compress_to_vec(&big, 6);
        assert!(deflated.len() < 64 << 10);
        // Declared honestly: within a budget it reads; over a smaller one it is refused.
        let honest = zip_with(&[("arr_0.npy", 8, deflated.clone(), big.len() as u32)]);
        let r = read_inputs_bytes(&honest).unwrap();
        assert_eq!(r.literals[0].as_array().unwrap().len(), 1 << 20);
        let e = read_inputs_bytes_within(&honest, 1 << 20)
            .map(|r| r.literals)
            .unwrap_err();
        assert!(e.contains("over the memory budget of 1048576 bytes"), "{e}");
        // Several members that together pass the budget.
        let two = zip_with(&[
            ("arr_0.npy", 8, deflated.clone(), big.len() as u32),
            ("arr_1.npy", 8, deflated.clone(), big.len() as u32),
        ]);
        let e = read_inputs_bytes_within(&two, 6 << 20)
            .map(|r| r.literals)
            .unwrap_err();
        assert!(
            e.contains("arr_1.npy") && e.contains("memory budget"),
            "{e}"
        );
        // Declaring less than it inflates to: stopped at the declared size.
        let bomb = zip_with(&[("arr_0.npy", 8, deflated, 1000)]);
        let e = read_inputs_bytes(&bomb).map(|r| r.literals).unwrap_err();
        assert!(e.contains("more than its declared 1000 bytes"), "{e}");
    }

    /// Sizes that overflow (c128[2^60] is 2^64 bytes) are errors, not a wrap to 0 bytes that
    /// accepts no data.
    #[test]
    fn sizes_that_overflow_are_errors_in_every_format() {
        let text = "arguments { shape { element_type: C128 dimensions: 1152921504606846976 } }\n";
        let e = read_inputs_bytes(text.as_bytes())
            .map(|r| r.literals)
            .unwrap_err();
        assert!(e.contains("more bytes than can be addressed"), "{e}");
        let text = "arguments { shape { element_type: F32 dimensions: 4294967296 dimensions: 4294967296 dimensions: 4294967296 } }\n";
        let e = read_inputs_bytes(text.as_bytes())
            .map(|r| r.literals)
            .unwrap_err();
        assert!(e.contains("more elements than can be addressed"), "{e}");
        let text = "arguments { shape { element_type: F32 dimensions: -1 } }\n";
        let e = read_inputs_bytes(text.as_bytes())
            .map(|r| r.literals)
            .unwrap_err();
        assert!(e.contains("negative"), "{e}");
        let e = read_inputs_bytes(&npy_bytes("<c16", false, "(1152921504606846976,)", &[]))
            .map(|r| r.literals)
            .unwrap_err();
        assert!(e.contains("more bytes than can be addressed"), "{e}");
        let e = read_inputs_bytes(&npy_bytes("<f4", false, "(-2,)", &[]))
            .map(|r| r.literals)
            .unwrap_err();
        assert!(e.contains("negative"), "{e}");
        // hlo-diff's own literal file.
        let header = br#"{"literals":[{"array":{"ty":"c128","dims":[1152921504606846976],"offset":0,"bytes":0}}]}"#;
        let mut lit = b"HLODLIT1".to_vec();
        lit.extend((header.len() as u32).to_le_bytes());
        lit.extend(header);
        let e = read_inputs_bytes(&lit).map(|r| r.literals).unwrap_err();
        assert!(
            e.contains("more bytes than this machine can address"),
            "{e}"
        );
    }

    /// A literal file whose arrays all point at the same bytes was read as one copy per array:
    /// 2.5 MB of file (1 MiB of data, 20,000 arrays) allocated 20 GB. Each array's bytes are
    /// its own, so the arrays may declare no more than the data section holds.
    #[test]
    fn a_literal_file_whose_arrays_share_bytes_is_refused() {
        let lit = |n: usize| {
            let d = r#"{"array":{"ty":"f32","dims":[256],"offset":0,"bytes":1024}}"#;
            let header = format!(r#"{{"literals":[{}]}}"#, vec![d; n].join(","));
            let mut lit = b"HLODLIT1".to_vec();
            lit.extend((header.len() as u32).to_le_bytes());
            lit.extend(header.as_bytes());
            lit.extend([0u8; 1024]);
            lit
        };
        let r = read_inputs_bytes(&lit(1)).unwrap();
        assert_eq!(r.literals.len(), 1);
        for n in [2, 3, 20_000] {
            let e = read_inputs_bytes(&lit(n)).map(|r| r.literals).unwrap_err();
            assert!(
                e.contains("declare more bytes than the 1024 of the data section"),
                "{n}: {e}"
            );
        }
        // A tuple's elements share the one budget too.
        let d = r#"{"array":{"ty":"f32","dims":[256],"offset":0,"bytes":1024}}"#;
        let header = format!(r#"{{"literals":[{{"tuple":[{d},{d}]}}]}}"#);
        let mut tuple = b"HLODLIT1".to_vec();
        tuple.extend((header.len() as u32).to_le_bytes());
        tuple.extend(header.as_bytes());
        tuple.extend([0u8; 1024]);
        let e = read_inputs_bytes(&tuple).map(|r| r.literals).unwrap_err();
        assert!(e.contains("declare more bytes"), "{e}");
    }

    /// An input file was read whole before anything was checked: `--inputs /dev/zero` grew
    /// until the allocation failed (or the OOM killer came). A file over the budget is an error
    /// naming it, after at most the budget is read.
    #[test]
    fn an_input_file_larger_than_the_budget_is_refused() {
        let e = read_inputs_file_within(Path::new("/dev/zero"), 1 << 20)
            .map(|r| r.literals)
            .unwrap_err();
        assert_eq!(
            e, "/dev/zero: larger than the memory budget of 1048576 bytes",
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in.txt");
        std::fs::write(&p, "f32[2]\t{1, 2}\n").unwrap();
        let e = read_inputs_file_within(&p, 8)
            .map(|r| r.literals)
            .unwrap_err();
        assert!(
            e.contains("in.txt: larger than the memory budget of 8 bytes"),
            "{e}"
        );
        let r = read_inputs_file_within(&p, 14).unwrap();
        assert_eq!(r.literals, vec![f32s(vec![2], &[1., 2.])]);
    }

    /// Text-line errors name the file, line and column (`file:line:col`) as proto text errors
    /// do; they were `file: line 2: literal: 1:6: ...`, the column counted within the literal.
    #[test]
    fn text_line_errors_carry_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in.txt");
        for (text, want) in [
            ("f32[2]\t{1, 2}\nf32[2]\t{1, x}\n", ":2:12: literal: "),
            ("f32[2]\t{1, 2}\n  f32[2,]\t{1, 2}\n", ":2:9: shape: "),
            ("f32[2] {1, 2}\n", ":1:1: expected <shape><TAB><literal>"),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = read_inputs_file(&p).map(|r| r.literals).unwrap_err();
            assert!(e.starts_with(&format!("{}{want}", p.display())), "{e}");
        }
    }

    #[test]
    fn text_lines_are_still_read() {
        let r = read_inputs_bytes(b"f32[2]\t{1, 2}\n").unwrap();
        assert_eq!(r.format, InputFormat::Text);
        assert_eq!(r.literals, vec![f32s(vec![2], &[1., 2.])]);
    }
}

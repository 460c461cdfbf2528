//! The worker protocol's framing: the one wire format between the engine and
//! `harness/engine/worker/hlo_worker.py`.
//!
//! All integers are little-endian.
//! ```text
//! frame   = u32 payload_len, payload
//! payload = u32 header_len, header (UTF-8 JSON object), buffer_0 .. buffer_n
//! ```
//! The header's `"buffers"` array lists each buffer's byte length. Element data only ever
//! travels in buffers, never as JSON numbers. Messages from the worker carry `"kind"`:
//! `hello` (once, at start), `stage` (a stage was entered) or `result`.

use hlo::{ArrayLiteral, PrimitiveType};
use serde_json::{json, Value};
use std::io::{self, Read, Write};

/// Largest frame either side accepts by default (1 GiB).
pub const DEFAULT_MAX_FRAME: usize = 1 << 30;

/// A decoded frame: its JSON header and its buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub header: Value,
    pub buffers: Vec<Vec<u8>>,
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream ended cleanly before a frame started.
    #[error("end of stream")]
    Eof,
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
    #[error("frame of {0} bytes exceeds the limit of {1}")]
    TooLarge(usize, usize),
    #[error("malformed frame: {0}")]
    Malformed(String),
}

impl Frame {
    pub fn new(header: Value, buffers: Vec<Vec<u8>>) -> Frame {
        Frame { header, buffers }
    }

    /// The header's `"kind"`, or "".
    pub fn kind(&self) -> &str {
        self.header
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// Encodes the frame (the header's `"buffers"` is set from the buffers).
    pub fn encode(&self) -> Vec<u8> {
        let mut header = self.header.clone();
        if let Value::Object(m) = &mut header {
            m.insert(
                "buffers".into(),
                json!(self.buffers.iter().map(Vec::len).collect::<Vec<_>>()),
            );
        }
        let h = serde_json::to_vec(&header).expect("a JSON value always serializes");
        let body: usize = self.buffers.iter().map(Vec::len).sum();
        let payload_len = 4 + h.len() + body;
        let mut out = Vec::with_capacity(4 + payload_len);
        out.extend_from_slice(&(payload_len as u32).to_le_bytes());
        out.extend_from_slice(&(h.len() as u32).to_le_bytes());
        out.extend_from_slice(&h);
        for b in &self.buffers {
            out.extend_from_slice(b);
        }
        out
    }

    /// Writes the frame and flushes.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        w.write_all(&self.encode())?;
        w.flush()
    }

    /// Reads one frame, refusing frames over `max` bytes without allocating them.
    pub fn read_from(r: &mut impl Read, max: usize) -> Result<Frame, FrameError> {
        let mut len = [0u8; 4];
        match r.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Err(FrameError::Eof),
            Err(e) => return Err(e.into()),
        }
        let n = u32::from_le_bytes(len) as usize;
        if n > max {
            return Err(FrameError::TooLarge(n, max));
        }
        if n < 4 {
            return Err(FrameError::Malformed(format!("payload of {n} bytes")));
        }
        let mut payload = vec![0u8; n];
        r.read_exact(&mut payload)?;
        Frame::decode_payload(payload)
    }

    /// Splits a payload into header and buffers, checking every length.
    pub fn decode_payload(payload: Vec<u8>) -> Result<Frame, FrameError> {
        let bad = |m: String| FrameError::Malformed(m);
        if payload.len() < 4 {
            return Err(bad("payload shorter than its header length".into()));
        }
        let hlen = u32::from_le_bytes(payload[..4].try_into().unwrap()) as usize;
        if hlen > payload.len() - 4 {
            return Err(bad(format!(
                "header of {hlen} bytes in a payload of {}",
                payload.len()
            )));
        }
        let header: Value = serde_json::from_slice(&payload[4..4 + hlen])
            .map_err(|e| bad(format!("header is not JSON: {e}")))?;
        if !header.is_object() {
            return Err(bad("header is not a JSON object".into()));
        }
        let lens = match header.get("buffers") {
            None => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_u64().map(|x| x as usize))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad("\"buffers\" holds a non-integer".into()))?,
            Some(_) => return Err(bad("\"buffers\" is not an array".into())),
        };
        let mut off = 4 + hlen;
        let mut buffers = Vec::with_capacity(lens.len());
        for l in lens {
            let end = off
                .checked_add(l)
                .filter(|&e| e <= payload.len())
                .ok_or_else(|| bad("buffer lengths exceed the frame".into()))?;
            buffers.push(payload[off..end].to_vec());
            off = end;
        }
        if off != payload.len() {
            return Err(bad(format!(
                "{} trailing bytes after the buffers",
                payload.len() - off
            )));
        }
        Ok(Frame { header, buffers })
    }
}

/// The header entry describing one array (`{"dtype": "f32", "dims": [2, 3]}`).
pub fn array_header(a: &ArrayLiteral) -> Value {
    json!({ "dtype": a.ty.name(), "dims": a.dims })
}

/// Rebuilds an array literal from a header entry and its buffer.
pub fn array_from_wire(desc: &Value, data: Vec<u8>) -> Result<ArrayLiteral, String> {
    let dtype = desc
        .get("dtype")
        .and_then(Value::as_str)
        .ok_or("output without a dtype")?;
    let ty = PrimitiveType::from_name(dtype).ok_or_else(|| format!("unknown dtype {dtype}"))?;
    let dims = desc
        .get("dims")
        .and_then(Value::as_array)
        .ok_or("output without dims")?
        .iter()
        .map(|d| d.as_i64().ok_or("non-integer dimension"))
        .collect::<Result<Vec<_>, _>>()?;
    ArrayLiteral::from_bytes(ty, dims, data).map_err(|e| e.to_string())
}

/// Rebuilds a shape from the worker's JSON form (`{"array": {...}}`, `{"tuple": [...]}`, `{"token": true}`).
pub fn shape_from_wire(v: &Value) -> Option<hlo::Shape> {
    if let Some(t) = v.get("tuple").and_then(Value::as_array) {
        return t
            .iter()
            .map(shape_from_wire)
            .collect::<Option<Vec<_>>>()
            .map(hlo::Shape::Tuple);
    }
    if v.get("token").is_some() {
        return Some(hlo::Shape::Token);
    }
    let a = v.get("array")?;
    let ty = PrimitiveType::from_name(a.get("dtype")?.as_str()?)?;
    let dims = a
        .get("dims")?
        .as_array()?
        .iter()
        .map(Value::as_i64)
        .collect::<Option<Vec<_>>>()?;
    Some(hlo::Shape::array(ty, dims))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_with_buffers() {
        let f = Frame::new(
            json!({"kind": "result", "x": 1}),
            vec![vec![1, 2, 3], vec![], vec![9]],
        );
        let bytes = f.encode();
        let back = Frame::read_from(&mut &bytes[..], DEFAULT_MAX_FRAME).unwrap();
        assert_eq!(back.buffers, f.buffers);
        assert_eq!(back.kind(), "result");
    }

    #[test]
    fn garbage_and_oversize_frames_are_errors_not_panics() {
        // Oversize: refused before allocating.
        let big = (u32::MAX).to_le_bytes();
        assert!(matches!(
            Frame::read_from(&mut &big[..], 1 << 20),
            Err(FrameError::TooLarge(..))
        ));
        // Truncated stream.
        assert!(matches!(
            Frame::read_from(&mut &[1u8, 0][..], 100),
            Err(FrameError::Eof)
        ));
        // Header length beyond the payload, non-JSON header, buffers beyond the payload.
        for payload in [
            vec![200, 0, 0, 0, b'{', b'}'],
            vec![2, 0, 0, 0, b'x', b'y'],
            [&[20u8, 0, 0, 0][..], br#"{"buffers":[100000]}"#].concat(),
            [&[14u8, 0, 0, 0][..], br#"{"buffers":[1]}"#].concat(),
        ] {
            let mut bytes = (payload.len() as u32).to_le_bytes().to_vec();
            bytes.extend(payload);
            assert!(
                matches!(
                    Frame::read_from(&mut &bytes[..], 1000),
                    Err(FrameError::Malformed(_))
                ),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn arrays_and_shapes_come_back_from_the_wire() {
        let a = array_from_wire(&json!({"dtype": "s4", "dims": [2]}), vec![0xff, 1]).unwrap();
        assert_eq!(a.ty, PrimitiveType::S4);
        assert!(array_from_wire(&json!({"dtype": "f32", "dims": [2]}), vec![0; 7]).is_err());
        assert!(array_from_wire(&json!({"dtype": "f33", "dims": []}), vec![]).is_err());
        let s = shape_from_wire(
            &json!({"tuple": [{"array": {"dtype": "f32", "dims": [3]}}, {"tuple": []}]}),
        )
        .unwrap();
        assert_eq!(
            s,
            hlo::Shape::Tuple(vec![
                hlo::Shape::array(PrimitiveType::F32, vec![3]),
                hlo::Shape::Tuple(vec![])
            ])
        );
    }
}

//! Library side of the reader fuzz targets (`fuzz/fuzz_targets/{inputs,registry,literal_file}.rs`):
//! whatever the bytes, each reader returns a value or an error, never panics, overflows its
//! stack or allocates past its budget; what it accepts is self-consistent.

use crate::bucket::BucketSignature;
use hlo::{Literal, PrimitiveType, Shape};
use judge::VerdictKind;

/// The memory budget of one fuzz input (the readers' budget is the oracle's, 8 GiB, too much
/// for a fuzzer's process).
pub const FUZZ_MAX_BYTES: u64 = 64 << 20;

fn check_literal(l: &Literal) {
    if let Literal::Array(a) = l {
        let n: usize = a.dims.iter().map(|&d| d as usize).product();
        assert_eq!(a.data.len(), n * a.ty.byte_size(), "{}{:?}", a.ty, a.dims);
    }
    if let Literal::Tuple(t) = l {
        t.iter().for_each(check_literal);
    }
}

/// Any bytes as an input file (every format [`crate::inputs`] detects), then fitted to
/// parameters of each literal's shape and to 32-bit / 16-bit ones of the same dimensions.
pub fn inputs(data: &[u8]) {
    let Ok(read) = crate::inputs::read_inputs_bytes_within(data, FUZZ_MAX_BYTES) else {
        return;
    };
    read.literals.iter().for_each(check_literal);
    let narrow = |l: &Literal, ty| match l.shape() {
        Shape::Array(a) => Shape::array(ty, a.dims),
        s => s,
    };
    for ty in [None, Some(PrimitiveType::F32), Some(PrimitiveType::Bf16)] {
        let params: Vec<Shape> = read
            .literals
            .iter()
            .map(|l| ty.map_or_else(|| l.shape(), |t| narrow(l, t)))
            .collect();
        let (fitted, _) = read.clone().fit_to(&params);
        assert_eq!(fitted.len(), read.literals.len());
        fitted.iter().for_each(check_literal);
    }
}

/// Any bytes as a registry entry; an accepted one matches or not, and constrains something.
pub fn registry(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(e) = crate::registry::Entry::parse(text) else {
        return;
    };
    assert!(e.matcher.constrains_something());
    let b = BucketSignature {
        kind: VerdictKind::Mismatch,
        backend: "xla-cpu".into(),
        ops: vec!["add:float".into(), "reduce:f32".into()],
        symptom: "value".into(),
        culprit: "below-hlo".into(),
        message: String::new(),
        partitions: 1,
    };
    let _ = e.matcher.matches(&b);
}

/// Any bytes as a literal file; what decodes encodes and decodes to the same literals.
pub fn literal_file(data: &[u8]) {
    let Ok(ls) = crate::store::decode_literals(data) else {
        return;
    };
    ls.iter().for_each(check_literal);
    let again = crate::store::decode_literals(&crate::store::encode_literals(&ls))
        .expect("an encoded literal file decodes");
    // Literals compare by their bytes, so NaNs compare too.
    assert_eq!(again, ls);
}

#[cfg(test)]
mod tests {
    /// The fuzz bodies on the seed corpora (fuzz/seeds/{inputs,registry,literal_file}), so that
    /// a seed that panics fails the tests, not only the fuzz smoke.
    #[test]
    fn the_fuzz_bodies_pass_their_seeds() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
        for (target, body) in [
            ("inputs", super::inputs as fn(&[u8])),
            ("registry", super::registry),
            ("literal_file", super::literal_file),
        ] {
            let dir = root.join(target);
            let mut n = 0;
            for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
                let p = e.unwrap().path();
                let bytes = std::fs::read(&p).unwrap();
                // Real files of each format: every seed is accepted, so the fuzzer starts from
                // the readers' accepting paths.
                let accepted = match target {
                    "inputs" => crate::inputs::read_inputs_bytes(&bytes).map(|_| ()),
                    "registry" => std::str::from_utf8(&bytes)
                        .map_err(|e| e.to_string())
                        .and_then(crate::registry::Entry::parse)
                        .map(|_| ()),
                    _ => crate::store::decode_literals(&bytes)
                        .map(|_| ())
                        .map_err(|e| e.to_string()),
                };
                if let Err(e) = accepted {
                    panic!("{}: {e}", p.display());
                }
                body(&bytes);
                n += 1;
            }
            assert!(n >= 3, "{target}: {n} seeds");
        }
    }
}

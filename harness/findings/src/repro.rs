//! The repro directory `hlo-diff minimize` and `hlo-diff triage` write:
//!
//! - `module_0000.<name>.before_optimizations.txt`: the module to hand XLA (the name follows XLA's
//!   dump grammar so XLA's own tools and `hlo-diff dump` recognise it);
//! - `inputs.lit`: the inputs in hlo-diff's literal file format ([`crate::store`]);
//! - `inputs.txt`: the same inputs as text, one `<shape><TAB><literal>` line per parameter
//!   (left out when the inputs hold more than [`TEXT_INPUTS_LIMIT`] bytes: text triples their
//!   size, and `inputs.lit` and `inputs.pbtxt` already hold them);
//! - `inputs.pbtxt`: the same inputs as a text `xla.RunHloModuleLiterals` proto, the form
//!   `run_hlo_module --input_literals_file` reads (`iterations { arguments { shape {...} ... } }`);
//! - `module_0000.<name>.before_optimizations.hlo.pb`: the same module as an `xla.HloModuleProto`
//!   (`hlo::proto`), what `run_hlo_module --input_format=pb` and a PJRT plugin take (left out
//!   when the module holds something the proto writer cannot express);
//! - `repro.sh`: the `hlo-diff run` line and the equivalent `run_hlo_module` line;
//! - `README.md`: what was expected and what came back, backend and versions, the inputs as text,
//!   the culprit pass.

use hlo::{ArrayLiteral, Literal, PrimitiveType, Scalar};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Inputs larger than this many bytes (as literal data) get no `inputs.txt`: a 14.2M-element
/// f32 input of a real bug report (jax-ml/jax#39257) made 390 MB of repro directory with it.
pub const TEXT_INPUTS_LIMIT: usize = 16 << 20;

/// Everything a repro directory states.
#[derive(Clone, Debug, Default)]
pub struct Repro {
    /// The module text to hand XLA.
    pub module_text: String,
    /// The module's name (for the file name).
    pub module_name: String,
    /// One literal per entry parameter.
    pub inputs: Vec<Literal>,
    /// The backend that misbehaved (`xla-cpu`, ...).
    pub backend: String,
    /// The reference it was compared against (`interp`).
    pub reference: String,
    /// One line: what kind of bug (`mismatch on xla-cpu vs interp at log`, ...).
    pub summary: String,
    /// Expected value (reference), as text.
    pub expected: Option<String>,
    /// What the backend produced (value or failure), as text.
    pub actual: Option<String>,
    /// Where the first differing element is, with both values, when known.
    pub first_difference: Option<String>,
    /// `jax`/`jaxlib`/`python` versions as the worker reported them.
    pub versions: Vec<(String, String)>,
    /// The pass that changed the result, with how it was found, when known.
    pub culprit: Option<String>,
    /// Instruction counts before and after minimization.
    pub instructions_before: Option<usize>,
    pub instructions_after: Option<usize>,
    /// XLA debug options the bug needs (`xla_cpu_enable_fast_min_max=true`).
    pub xla_flags: Vec<(String, String)>,
    /// Free-form notes for the reader.
    pub notes: Vec<String>,
}

/// The files written, relative to the repro directory.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ReproFiles {
    pub dir: PathBuf,
    pub module: String,
    pub inputs: String,
    /// Empty when the inputs were too large for a text copy ([`TEXT_INPUTS_LIMIT`]).
    pub inputs_text: String,
    pub inputs_pbtxt: String,
    /// The module as an `HloModuleProto`; empty when it could not be written.
    pub module_proto: String,
    pub script: String,
    pub readme: String,
}

/// A file name that keeps to XLA's dump grammar: characters XLA would not write become `_`.
fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "module".into()
    } else {
        s.chars().take(200).collect()
    }
}

/// Writes the repro directory (creating it). Existing files of the same names are replaced.
pub fn write_repro_dir(dir: &Path, r: &Repro) -> std::io::Result<ReproFiles> {
    std::fs::create_dir_all(dir)?;
    let module = format!(
        "module_0000.{}.before_optimizations.txt",
        file_safe(&r.module_name)
    );
    let input_bytes: usize = r.inputs.iter().map(literal_bytes).sum();
    let mut files = ReproFiles {
        dir: dir.to_path_buf(),
        module: module.clone(),
        inputs: "inputs.lit".into(),
        inputs_text: if input_bytes > TEXT_INPUTS_LIMIT {
            String::new()
        } else {
            "inputs.txt".into()
        },
        inputs_pbtxt: "inputs.pbtxt".into(),
        module_proto: String::new(),
        script: "repro.sh".into(),
        readme: "README.md".into(),
    };
    let mut text = r.module_text.clone();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    std::fs::write(dir.join(&module), &text)?;
    if let Ok(bytes) = hlo::parse::parse_module(&text)
        .map_err(|e| e.to_string())
        .and_then(|m| hlo::proto::encode_module(&m).map_err(|e| e.to_string()))
    {
        files.module_proto = module.replace(".txt", ".hlo.pb");
        std::fs::write(dir.join(&files.module_proto), bytes)?;
    }
    crate::store::write_literals(&dir.join(&files.inputs), &r.inputs)?;
    if !files.inputs_text.is_empty() {
        std::fs::write(dir.join(&files.inputs_text), literals_text(&r.inputs))?;
    }
    std::fs::write(
        dir.join(&files.inputs_pbtxt),
        run_hlo_module_literals_pbtxt(&r.inputs),
    )?;
    let script = repro_script(r, &files);
    let script_path = dir.join(&files.script);
    std::fs::write(&script_path, script)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&script_path, std::fs::Permissions::from_mode(0o755));
    }
    std::fs::write(dir.join(&files.readme), readme(r, &files))?;
    Ok(files)
}

/// The bytes of a literal's array data (tuples summed).
fn literal_bytes(l: &Literal) -> usize {
    match l {
        Literal::Array(a) => a.data.len(),
        Literal::Tuple(t) => t.iter().map(literal_bytes).sum(),
        _ => 0,
    }
}

/// Inputs as text: one line per parameter, `<shape><TAB><literal>` in HLO constant syntax
/// (NaN payloads kept as `nan(0x...)`).
pub fn literals_text(inputs: &[Literal]) -> String {
    let mut out = String::new();
    for l in inputs {
        let _ = writeln!(
            out,
            "{}\t{}",
            hlo::print::shape_to_string(&l.shape()),
            hlo::print::literal_to_string(l)
        );
    }
    out
}

/// Reads [`literals_text`]'s format back; errors begin with the position in `text`
/// (`line:column: `, the column in characters, 1-based), as a file name is joined to.
pub fn parse_literals_text(text: &str) -> Result<Vec<Literal>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let (shape, lit) = line
            .split_once('\t')
            .ok_or_else(|| format!("{}:1: expected <shape><TAB><literal>", n + 1))?;
        // Where a trimmed part begins in the line, in characters.
        let start = |part: &str| {
            line[..part.as_ptr() as usize - line.as_ptr() as usize]
                .chars()
                .count()
        };
        let at = |part: &str, what: &str, e: hlo::parse::ParseError| {
            format!(
                "{}:{}: {what}: {}\n{}\n{}^",
                n + 1,
                start(part) + e.column,
                e.message,
                e.snippet,
                " ".repeat(e.caret)
            )
        };
        let (shape, lit) = (shape.trim(), lit.trim());
        let shape = hlo::parse::parse_shape(shape).map_err(|e| at(shape, "shape", e))?;
        let l = hlo::parse::parse_literal(lit, &shape).map_err(|e| at(lit, "literal", e))?;
        out.push(l);
    }
    Ok(out)
}

/// Reads inputs in any format [`crate::inputs`] detects (literal file, text lines, literal proto
/// text or binary, NumPy `.npy`/`.npz`), not yet fitted to a module's parameters.
pub fn read_inputs(path: &Path) -> Result<Vec<Literal>, String> {
    crate::inputs::read_inputs_file(path).map(|r| r.literals)
}

/// `platform` for `run_hlo_module` from a backend name.
fn run_hlo_module_platform(backend: &str) -> &'static str {
    match backend {
        "xla-gpu" => "CUDA",
        _ => "CPU",
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn repro_script(r: &Repro, f: &ReproFiles) -> String {
    let mut s = String::new();
    s.push_str("#!/bin/sh\n# Reproduces the finding described in README.md.\nset -u\ncd \"$(dirname \"$0\")\"\n\n");
    let reference = if r.reference.is_empty() {
        "interp"
    } else {
        &r.reference
    };
    let backend = if r.backend.is_empty() {
        "xla-cpu"
    } else {
        &r.backend
    };
    let flags: Vec<String> = r
        .xla_flags
        .iter()
        .map(|(k, v)| format!("--{k}={v}"))
        .collect();
    s.push_str(
        "# hlo-diff: runs the module on the backend and the reference interpreter and compares.\n",
    );
    let options: String = r
        .xla_flags
        .iter()
        .map(|(k, v)| format!(" --xla-option {}", shell_quote(&format!("{k}={v}"))))
        .collect();
    let _ = writeln!(
        s,
        "hlo-diff run {} --inputs {} --backends {},{}{options}\n",
        shell_quote(&f.module),
        shell_quote(&f.inputs),
        reference,
        backend
    );
    s.push_str(
        "# XLA's own tool (built from openxla/xla: bazel build //xla/tools:run_hlo_module),\n",
    );
    s.push_str("# when it is on PATH; it exits with status 255 when the platform and the reference disagree.\n");
    s.push_str("if command -v run_hlo_module >/dev/null 2>&1; then\n");
    if !flags.is_empty() {
        let _ = writeln!(s, "  XLA_FLAGS={} \\", shell_quote(&flags.join(" ")));
    }
    let _ = writeln!(
        s,
        "  run_hlo_module --platform={} --reference_platform=Interpreter --input_format=hlo --input_literals_file={} {}\nfi",
        run_hlo_module_platform(backend),
        shell_quote(&f.inputs_pbtxt),
        shell_quote(&f.module)
    );
    if !f.module_proto.is_empty() {
        let _ = writeln!(
            s,
            "# the same module as an HloModuleProto: run_hlo_module ... --input_format=pb {}",
            shell_quote(&f.module_proto)
        );
    }
    s
}

fn readme(r: &Repro, f: &ReproFiles) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {}\n",
        if r.summary.is_empty() {
            "hlo-diff finding"
        } else {
            &r.summary
        }
    );
    let _ = writeln!(s, "- module: `{}`", f.module);
    let _ = writeln!(
        s,
        "- inputs: `{}` (hlo-diff), `{}` (`run_hlo_module --input_literals_file`)",
        f.inputs, f.inputs_pbtxt
    );
    let _ = writeln!(
        s,
        "- backend: `{}`, reference: `{}`",
        r.backend,
        if r.reference.is_empty() {
            "interp"
        } else {
            &r.reference
        }
    );
    for (k, v) in &r.versions {
        let _ = writeln!(s, "- {k}: {v}");
    }
    if !r.xla_flags.is_empty() {
        let flags: Vec<String> = r
            .xla_flags
            .iter()
            .map(|(k, v)| format!("--{k}={v}"))
            .collect();
        let _ = writeln!(s, "- XLA flags: `{}`", flags.join(" "));
    }
    if let (Some(b), Some(a)) = (r.instructions_before, r.instructions_after) {
        let _ = writeln!(s, "- minimized from {b} to {a} instructions");
    }
    s.push('\n');
    if let Some(e) = &r.expected {
        let _ = writeln!(s, "## Expected (reference)\n\n```\n{}\n```\n", e.trim_end());
    }
    if let Some(a) = &r.actual {
        let _ = writeln!(
            s,
            "## Actual ({})\n\n```\n{}\n```\n",
            r.backend,
            a.trim_end()
        );
    }
    if let Some(d) = &r.first_difference {
        let _ = writeln!(s, "First difference: {d}\n");
    }
    let _ = writeln!(
        s,
        "## Culprit pass\n\n{}\n",
        r.culprit
            .as_deref()
            .unwrap_or("not determined (run `repro-bisect` on the module with the inputs)")
    );
    if f.inputs_text.is_empty() {
        let shapes: Vec<String> = r
            .inputs
            .iter()
            .map(|l| hlo::print::shape_to_string(&l.shape()))
            .collect();
        let _ = writeln!(
            s,
            "## Inputs\n\n{} (too large to show or to copy as text: `{}` and `{}` hold them; \
             `hlo-diff run {} --inputs {}` runs the module on them)\n",
            shapes.join(", "),
            f.inputs,
            f.inputs_pbtxt,
            f.module,
            f.inputs
        );
    } else {
        let inputs = literals_text(&r.inputs);
        let shown = if inputs.chars().count() > 4000 {
            format!(
                "{}...\n(truncated: the whole inputs are in `{}`)\n",
                inputs.chars().take(4000).collect::<String>(),
                f.inputs_text
            )
        } else {
            inputs
        };
        let _ = writeln!(
            s,
            "## Inputs\n\nOne line per parameter, `<shape><TAB><literal>` (also `{}`, `{}` and `{}`):\n\n```\n{}```\n",
            f.inputs_text, f.inputs, f.inputs_pbtxt, shown
        );
    }
    s.push_str("## Reproduce\n\n```sh\nsh repro.sh\n```\n\n");
    let _ = writeln!(s, "## Module\n\n```\n{}\n```", r.module_text.trim_end());
    if !r.notes.is_empty() {
        s.push_str("\n## Notes\n\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// The `xla.PrimitiveType` enum name of an element type (xla_data.proto).
pub(crate) fn proto_type_name(ty: PrimitiveType) -> &'static str {
    use PrimitiveType::*;
    match ty {
        Pred => "PRED",
        S1 => "S1",
        S2 => "S2",
        S4 => "S4",
        S8 => "S8",
        S16 => "S16",
        S32 => "S32",
        S64 => "S64",
        U1 => "U1",
        U2 => "U2",
        U4 => "U4",
        U8 => "U8",
        U16 => "U16",
        U32 => "U32",
        U64 => "U64",
        F16 => "F16",
        Bf16 => "BF16",
        F32 => "F32",
        F64 => "F64",
        F8E5M2 => "F8E5M2",
        F8E4M3 => "F8E4M3",
        F8E4M3FN => "F8E4M3FN",
        F8E4M3B11FNUZ => "F8E4M3B11FNUZ",
        F8E3M4 => "F8E3M4",
        F8E5M2FNUZ => "F8E5M2FNUZ",
        F8E4M3FNUZ => "F8E4M3FNUZ",
        F8E8M0FNU => "F8E8M0FNU",
        F4E2M1FN => "F4E2M1FN",
        C64 => "C64",
        C128 => "C128",
        Token => "TOKEN",
        Opaque => "OPAQUE_TYPE",
    }
}

/// The `LiteralProto` field holding elements of `ty`, and whether it is a `bytes` field
/// (little-endian storage bytes) rather than a repeated number field.
pub(crate) fn proto_field(ty: PrimitiveType) -> (&'static str, bool) {
    use PrimitiveType::*;
    match ty {
        Pred => ("preds", false),
        S1 => ("s1s", true),
        S2 => ("s2s", true),
        S4 => ("s4s", true),
        S8 => ("s8s", true),
        U1 => ("u1s", true),
        U2 => ("u2s", true),
        U4 => ("u4s", true),
        U8 => ("u8s", true),
        S16 => ("s16s", true),
        U16 => ("u16s", true),
        F16 => ("f16s", true),
        Bf16 => ("bf16s", true),
        S32 => ("s32s", false),
        S64 => ("s64s", false),
        U32 => ("u32s", false),
        U64 => ("u64s", false),
        F32 => ("f32s", false),
        F64 => ("f64s", false),
        C64 => ("c64s", false),
        C128 => ("c128s", false),
        F8E5M2 => ("f8e5m2s", true),
        F8E4M3 => ("f8e4m3s", true),
        F8E4M3FN => ("f8e4m3fns", true),
        F8E4M3B11FNUZ => ("f8e4m3b11fnuzs", true),
        F8E3M4 => ("f8e3m4s", true),
        F8E5M2FNUZ => ("f8e5m2fnuzs", true),
        F8E4M3FNUZ => ("f8e4m3fnuzs", true),
        F8E8M0FNU => ("f8e8m0fnus", true),
        F4E2M1FN => ("f4e2m1fns", true),
        Token | Opaque => ("", true),
    }
}

/// A float as protobuf text format reads it back exactly (`inf`, `-inf`, `nan`; NaN payloads
/// are not expressible in text format and become the default NaN).
fn proto_float(v: f64, single: bool) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v < 0.0 {
            "-inf".into()
        } else {
            "inf".into()
        }
    } else if single {
        format!("{:e}", v as f32)
    } else {
        format!("{v:e}")
    }
}

/// Bytes as a protobuf text-format string literal (octal escapes for everything but plain
/// printable ASCII).
fn proto_bytes(data: &[u8]) -> String {
    let mut s = String::with_capacity(data.len() * 4 + 2);
    s.push('"');
    for &b in data {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b' '..=b'~' => s.push(b as char),
            _ => {
                let _ = write!(s, "\\{b:03o}");
            }
        }
    }
    s.push('"');
    s
}

fn write_shape_proto(out: &mut String, l: &Literal, indent: usize) {
    let pad = " ".repeat(indent);
    match l {
        Literal::Array(a) => {
            let _ = writeln!(out, "{pad}element_type: {}", proto_type_name(a.ty));
            for d in &a.dims {
                let _ = writeln!(out, "{pad}dimensions: {d}");
            }
            let _ = writeln!(out, "{pad}layout {{");
            for d in (0..a.dims.len()).rev() {
                let _ = writeln!(out, "{pad}  minor_to_major: {d}");
            }
            let _ = writeln!(out, "{pad}}}");
        }
        Literal::Tuple(t) => {
            let _ = writeln!(out, "{pad}element_type: TUPLE");
            for e in t {
                let _ = writeln!(out, "{pad}tuple_shapes {{");
                write_shape_proto(out, e, indent + 2);
                let _ = writeln!(out, "{pad}}}");
            }
        }
        Literal::Token => {
            let _ = writeln!(out, "{pad}element_type: TOKEN");
        }
    }
}

fn write_array_values(out: &mut String, a: &ArrayLiteral, pad: &str) {
    let (field, bytes) = proto_field(a.ty);
    if field.is_empty() || a.is_empty() {
        return;
    }
    if bytes {
        let _ = writeln!(out, "{pad}{field}: {}", proto_bytes(&a.data));
        return;
    }
    for i in 0..a.len() {
        match a.get(i) {
            Scalar::Pred(b) => {
                let _ = writeln!(out, "{pad}{field}: {b}");
            }
            Scalar::S(v) => {
                let _ = writeln!(out, "{pad}{field}: {v}");
            }
            Scalar::U(v) => {
                let _ = writeln!(out, "{pad}{field}: {v}");
            }
            Scalar::F(v) => {
                let _ = writeln!(
                    out,
                    "{pad}{field}: {}",
                    proto_float(v, a.ty == PrimitiveType::F32)
                );
            }
            Scalar::C(re, im) => {
                let single = a.ty == PrimitiveType::C64;
                let _ = writeln!(out, "{pad}{field}: {}", proto_float(re, single));
                let _ = writeln!(out, "{pad}{field}: {}", proto_float(im, single));
            }
        }
    }
}

/// Writes one `LiteralProto` body (shape and values) at `indent`.
pub fn write_literal_proto(out: &mut String, l: &Literal, indent: usize) {
    let pad = " ".repeat(indent);
    let _ = writeln!(out, "{pad}shape {{");
    write_shape_proto(out, l, indent + 2);
    let _ = writeln!(out, "{pad}}}");
    match l {
        Literal::Array(a) => write_array_values(out, a, &pad),
        Literal::Tuple(t) => {
            for e in t {
                let _ = writeln!(out, "{pad}tuple_literals {{");
                write_literal_proto(out, e, indent + 2);
                let _ = writeln!(out, "{pad}}}");
            }
        }
        Literal::Token => {}
    }
}

/// The inputs as a text-format `xla.RunHloModuleLiterals` with one iteration
/// (`run_hlo_module --input_literals_file=...`).
pub fn run_hlo_module_literals_pbtxt(inputs: &[Literal]) -> String {
    let mut out = String::from("# proto-file: xla/tools/run_hlo_module.proto\n# proto-message: xla.RunHloModuleLiterals\niterations {\n");
    for l in inputs {
        out.push_str("  arguments {\n");
        write_literal_proto(&mut out, l, 4);
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(dims: Vec<i64>, v: &[f32]) -> Literal {
        let data = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        Literal::Array(ArrayLiteral::from_bytes(PrimitiveType::F32, dims, data).unwrap())
    }

    #[test]
    fn pbtxt_names_fields_of_literal_proto() {
        let t = run_hlo_module_literals_pbtxt(&[
            f32s(vec![2], &[1.5, f32::INFINITY]),
            Literal::Array(
                ArrayLiteral::from_bytes(PrimitiveType::Bf16, vec![1], vec![0x80, 0x3f]).unwrap(),
            ),
        ]);
        assert!(t.contains("element_type: F32"), "{t}");
        assert!(t.contains("dimensions: 2"), "{t}");
        assert!(t.contains("f32s: 1.5e0"), "{t}");
        assert!(t.contains("f32s: inf"), "{t}");
        assert!(t.contains("bf16s: \"\\200?\""), "{t}");
        assert!(t.contains("minor_to_major: 0"), "{t}");
        assert_eq!(t.matches("arguments {").count(), 2);
    }

    #[test]
    fn text_inputs_round_trip() {
        let ins = vec![f32s(vec![2], &[1.5, f32::NAN]), f32s(vec![], &[-0.0])];
        let back = parse_literals_text(&literals_text(&ins)).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(
            back[0].as_array().unwrap().data,
            ins[0].as_array().unwrap().data
        );
        assert_eq!(
            back[1].as_array().unwrap().data,
            ins[1].as_array().unwrap().data
        );
    }

    /// Inputs over the limit get no text copy: the directory has `inputs.lit` and
    /// `inputs.pbtxt`, the README names the shapes instead of the values; small ones keep all.
    #[test]
    fn large_inputs_get_no_text_copy() {
        let tmp = tempfile::tempdir().unwrap();
        let n = TEXT_INPUTS_LIMIT / 4 + 1;
        let big = Repro {
            module_text: "HloModule m\n".into(),
            module_name: "m".into(),
            inputs: vec![f32s(vec![n as i64], &vec![0.5; n])],
            ..Repro::default()
        };
        let f = write_repro_dir(&tmp.path().join("big"), &big).unwrap();
        assert!(f.inputs_text.is_empty());
        assert!(!tmp.path().join("big/inputs.txt").exists());
        assert!(tmp.path().join("big/inputs.lit").exists());
        assert!(tmp.path().join("big/inputs.pbtxt").exists());
        let readme = std::fs::read_to_string(tmp.path().join("big/README.md")).unwrap();
        assert!(readme.contains(&format!("f32[{n}]")), "{readme}");
        assert!(readme.contains("too large"), "{readme}");
        let small = Repro {
            inputs: vec![f32s(vec![2], &[1.0, 2.0])],
            ..big
        };
        let f = write_repro_dir(&tmp.path().join("small"), &small).unwrap();
        assert_eq!(f.inputs_text, "inputs.txt");
        assert!(tmp.path().join("small/inputs.txt").exists());
    }

    #[test]
    fn tuple_literals_nest() {
        let t = run_hlo_module_literals_pbtxt(&[Literal::Tuple(vec![f32s(vec![], &[2.0])])]);
        assert!(t.contains("element_type: TUPLE"));
        assert!(t.contains("tuple_shapes {"));
        assert!(t.contains("tuple_literals {"));
    }
}

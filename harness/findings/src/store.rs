//! The findings store of a campaign (`--out DIR`), and hlo-diff's literal file format.
//!
//! # Layout
//! ```text
//! DIR/campaign.json                 campaign state: seed, shard, next module index, counters
//! DIR/findings/<kind>-<backend>-<key>/
//!     finding.json                  signature, verdict, count, occurrences, first occurrence,
//!                                   first hit (campaign seconds)
//!     module.hlo                    the module text handed to the backends
//!     before_optimizations.txt      the module XLA compiled (HLO -> MLIR -> HLO), when known
//!     inputs.lit                    the inputs (literal file format below)
//!     outputs.<backend>.lit         each successful backend's outputs
//!     outcomes.json                 each backend's outcome (kind, timings, messages)
//! ```
//! Every file is written atomically: a finding directory is filled under a temporary name and
//! renamed into place; `finding.json` and `campaign.json` are replaced by renaming a complete
//! temporary file. A finding is on disk before anyone minimizes or reports it.
//!
//! # Deduplication and resumption
//! A finding's [`Signature`] (verdict kind, backend, label, and a detail: the op pattern of the
//! mismatching output, or the crash message with addresses and numbers stripped) names its
//! directory. A second finding with the same signature folds into the first: its occurrence
//! key (`<seed>:<program>`) is added to `occurrences` and `count` is their number. Occurrences
//! are a set, so a campaign killed after writing a finding and resumed before its state file
//! moved past that module re-finds it without counting it twice.
//!
//! # Literal file format (`.lit`)
//! ```text
//! 8 bytes   magic "HLODLIT1"
//! 4 bytes   header length H, little-endian u32
//! H bytes   JSON: {"literals": [D, ...]} where D is
//!             {"array": {"ty": "f32", "dims": [2, 3], "offset": 0, "bytes": 24}}
//!           | {"tuple": [D, ...]} | "token"
//! rest      the arrays' bytes (hlo::Literal storage: little-endian, row-major, sub-byte
//!           types one byte each), at `offset` from the start of this section; no two
//!           arrays share bytes
//! ```

use hlo::{ArrayLiteral, Literal, Module, Opcode, PrimitiveType};
use judge::classify::{Label, Verdict, VerdictKind};
use judge::compare::output_opcodes;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

// ---------------------------------------------------------------------------------------------
// Literal files.

const MAGIC: &[u8; 8] = b"HLODLIT1";

/// A literal file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LiteralFileError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("not an hlo-diff literal file (bad magic)")]
    Magic,
    #[error("literal file is truncated")]
    Truncated,
    #[error("literal file header: {0}")]
    Header(String),
}

fn describe(l: &Literal, data: &mut Vec<u8>) -> Value {
    match l {
        Literal::Array(a) => {
            let offset = data.len();
            data.extend_from_slice(&a.data);
            json!({"array": {"ty": a.ty.name(), "dims": a.dims, "offset": offset, "bytes": a.data.len()}})
        }
        Literal::Tuple(t) => {
            json!({"tuple": t.iter().map(|e| describe(e, data)).collect::<Vec<_>>()})
        }
        Literal::Token => json!("token"),
    }
}

/// Encodes literals in the literal file format.
pub fn encode_literals(literals: &[Literal]) -> Vec<u8> {
    let mut data = Vec::new();
    let descs: Vec<Value> = literals.iter().map(|l| describe(l, &mut data)).collect();
    let header = serde_json::to_vec(&json!({ "literals": descs })).unwrap_or_default();
    let mut out = Vec::with_capacity(12 + header.len() + data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&data);
    out
}

/// The literal `d` describes, its array bytes taken from `data`. `unclaimed` is how many bytes
/// of `data` no array has taken yet: each array's bytes are its own (as [`encode_literals`]
/// writes them), so arrays that together declare more than the data section holds are an
/// error, never a copy of the same bytes per array (a small file claiming gigabytes).
fn rebuild(d: &Value, data: &[u8], unclaimed: &mut usize) -> Result<Literal, LiteralFileError> {
    let bad = |m: &str| LiteralFileError::Header(m.to_string());
    if d.as_str() == Some("token") {
        return Ok(Literal::Token);
    }
    if let Some(t) = d.get("tuple").and_then(Value::as_array) {
        return Ok(Literal::Tuple(
            t.iter()
                .map(|e| rebuild(e, data, unclaimed))
                .collect::<Result<_, _>>()?,
        ));
    }
    let a = d
        .get("array")
        .ok_or_else(|| bad("an entry is neither array, tuple nor token"))?;
    let ty_name = a
        .get("ty")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("array without \"ty\""))?;
    let ty = PrimitiveType::from_name(ty_name)
        .ok_or_else(|| bad(&format!("unknown element type {ty_name:?}")))?;
    let dims: Vec<i64> = a
        .get("dims")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("array without \"dims\""))?
        .iter()
        .map(|v| {
            v.as_i64()
                .ok_or_else(|| bad("a dimension is not an integer"))
        })
        .collect::<Result<_, _>>()?;
    let offset = a
        .get("offset")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("array without \"offset\""))? as usize;
    let bytes = a
        .get("bytes")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("array without \"bytes\""))? as usize;
    let end = offset
        .checked_add(bytes)
        .ok_or(LiteralFileError::Truncated)?;
    if end > data.len() {
        return Err(LiteralFileError::Truncated);
    }
    *unclaimed = unclaimed.checked_sub(bytes).ok_or_else(|| {
        bad(&format!(
            "the arrays declare more bytes than the {} of the data section (each array's \
             bytes are its own)",
            data.len()
        ))
    })?;
    ArrayLiteral::from_bytes(ty, dims, data[offset..end].to_vec())
        .map(Literal::Array)
        .map_err(|e| LiteralFileError::Header(e.to_string()))
}

/// Decodes a literal file's bytes.
pub fn decode_literals(bytes: &[u8]) -> Result<Vec<Literal>, LiteralFileError> {
    if bytes.len() < 12 {
        return Err(if bytes.starts_with(&MAGIC[..bytes.len().min(8)]) {
            LiteralFileError::Truncated
        } else {
            LiteralFileError::Magic
        });
    }
    if &bytes[..8] != MAGIC {
        return Err(LiteralFileError::Magic);
    }
    let h = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
    let header_end = 12usize.checked_add(h).ok_or(LiteralFileError::Truncated)?;
    if header_end > bytes.len() {
        return Err(LiteralFileError::Truncated);
    }
    let header: Value = serde_json::from_slice(&bytes[12..header_end])
        .map_err(|e| LiteralFileError::Header(e.to_string()))?;
    let data = &bytes[header_end..];
    let descs = header
        .get("literals")
        .and_then(Value::as_array)
        .ok_or_else(|| LiteralFileError::Header("no \"literals\" list".into()))?;
    let mut unclaimed = data.len();
    descs
        .iter()
        .map(|d| rebuild(d, data, &mut unclaimed))
        .collect()
}

/// Writes literals to a file (atomically).
pub fn write_literals(path: &Path, literals: &[Literal]) -> io::Result<()> {
    write_atomic(path, &encode_literals(literals))
}

/// Reads a literal file.
pub fn read_literals(path: &Path) -> Result<Vec<Literal>, LiteralFileError> {
    decode_literals(&fs::read(path)?)
}

// ---------------------------------------------------------------------------------------------
// Atomic files.

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn tmp_name(path: &Path) -> PathBuf {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp.{}.{n}", std::process::id()))
}

/// Writes a file by writing a temporary sibling and renaming it over the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = tmp_name(path);
    {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_data()?;
    }
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

// ---------------------------------------------------------------------------------------------
// Signatures.

/// What makes two findings "the same bug" for deduplication.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Signature {
    pub kind: VerdictKind,
    pub backend: String,
    pub label: String,
    /// Op pattern (mismatch, nondeterministic) or normalized message (crash, rejected) or stage
    /// (timeout).
    pub detail: String,
}

/// Ops that move or wrap data without computing: left out of op patterns (signatures here and
/// the minimizer's predicate).
pub fn trivial(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Parameter
            | Opcode::Constant
            | Opcode::Tuple
            | Opcode::GetTupleElement
            | Opcode::Broadcast
            | Opcode::Reshape
            | Opcode::Bitcast
            | Opcode::Copy
            | Opcode::Transpose
            | Opcode::Slice
            | Opcode::Concatenate
            | Opcode::Reverse
            | Opcode::Pad
            | Opcode::Iota
    )
}

/// A message with its variable parts removed: hex addresses, numbers, quoted paths.
pub fn normalize_message(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut chars = msg.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '0' && chars.peek().is_some_and(|&n| n == 'x' || n == 'X') {
            chars.next();
            while chars.peek().is_some_and(|n| n.is_ascii_hexdigit()) {
                chars.next();
            }
            out.push_str("0x_");
        } else if c.is_ascii_digit() {
            while chars.peek().is_some_and(|n| n.is_ascii_digit()) {
                chars.next();
            }
            out.push('N');
        } else if c == '/' && out.ends_with(' ') {
            // A path: keep its last component only.
            let mut p = String::from("/");
            while chars
                .peek()
                .is_some_and(|n| !n.is_whitespace() && *n != ':' && *n != ']' && *n != ')')
            {
                p.push(chars.next().expect("peeked"));
            }
            out.push_str(p.rsplit('/').next().unwrap_or(""));
        } else {
            out.push(c);
        }
    }
    out.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(240)
        .collect()
}

impl Signature {
    /// The signature of a finding. `module` gives the op pattern of a mismatching output.
    pub fn of(verdict: &Verdict, module: Option<&Module>) -> Signature {
        let detail = match verdict.kind {
            VerdictKind::Mismatch | VerdictKind::Nondeterministic | VerdictKind::Unproven => {
                let out = verdict.bug_output().unwrap_or(0);
                let ty = verdict
                    .comparison
                    .as_ref()
                    .and_then(|c| c.outputs.get(out))
                    .map(|o| o.ty.name().to_string())
                    .unwrap_or_default();
                let ops = module
                    .map(|m| {
                        output_opcodes(m, out)
                            .into_iter()
                            .filter(|o| !trivial(*o))
                            .map(|o| o.name())
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .unwrap_or_default();
                let structural = verdict.comparison.as_ref().is_some_and(|c| {
                    c.structure.is_some()
                        || c.outputs.get(out).is_some_and(|o| o.structure.is_some())
                });
                format!(
                    "{}{ty} ops={ops}",
                    if structural { "structure " } else { "" }
                )
            }
            VerdictKind::Crash => format!(
                "{} {} {}",
                verdict.stage.map(|s| s.name()).unwrap_or("?"),
                verdict
                    .signal
                    .map(engine::backend::signal_name)
                    .unwrap_or_else(|| "exit".into()),
                normalize_message(&verdict.message)
            ),
            VerdictKind::Rejected => format!(
                "{} {}",
                verdict.stage.map(|s| s.name()).unwrap_or("?"),
                normalize_message(&verdict.message)
            ),
            VerdictKind::Timeout => verdict.stage.map(|s| s.name()).unwrap_or("?").to_string(),
            VerdictKind::Match | VerdictKind::Unsupported => normalize_message(&verdict.message),
        };
        Signature {
            kind: verdict.kind,
            backend: verdict.backend.clone().unwrap_or_default(),
            label: verdict.label.unwrap_or(Label::Undecided).name().to_string(),
            detail,
        }
    }

    /// A stable 64-bit FNV-1a hash of the signature's text.
    pub fn key(&self) -> String {
        let text = format!(
            "{}|{}|{}|{}",
            self.kind.name(),
            self.backend,
            self.label,
            self.detail
        );
        let h = text.bytes().fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100000001b3)
        });
        format!("{h:016x}")
    }

    /// The finding directory's name.
    pub fn dir_name(&self) -> String {
        let backend: String = self
            .backend
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        format!(
            "{}-{}-{}",
            self.kind.name(),
            if backend.is_empty() { "none" } else { &backend },
            self.key()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// The store.

/// Everything known about one new finding.
pub struct NewFinding<'a> {
    pub signature: Signature,
    /// Identifies this occurrence (`<seed>:<program>`); recording the same occurrence twice
    /// counts it once.
    pub occurrence: String,
    pub verdict: &'a Verdict,
    pub module_text: &'a str,
    pub before_optimizations: Option<&'a str>,
    pub inputs: &'a [Literal],
    pub outcomes: &'a [(String, engine::backend::Outcome)],
    /// Anything else worth keeping (seed, program index, options, versions).
    pub meta: Value,
    /// When it was found: seconds of campaign time (over every run of a resumed campaign), when
    /// a campaign found it.
    pub found_at_s: Option<f64>,
}

/// What [`Store::record`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// A new finding directory.
    New(PathBuf),
    /// Folded into an existing finding; `count` is its new count.
    Folded { dir: PathBuf, count: u64 },
    /// This occurrence was already recorded (a resumed campaign re-running a module).
    AlreadyKnown(PathBuf),
}

impl Recorded {
    pub fn dir(&self) -> &Path {
        match self {
            Recorded::New(d) | Recorded::Folded { dir: d, .. } | Recorded::AlreadyKnown(d) => d,
        }
    }
    pub fn is_new(&self) -> bool {
        matches!(self, Recorded::New(_))
    }
}

/// A stored finding's `finding.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingRecord {
    pub signature: Signature,
    pub key: String,
    pub count: u64,
    pub occurrences: BTreeSet<String>,
    pub verdict: Verdict,
    pub first_occurrence: String,
    pub meta: Value,
    /// Campaign seconds (over every run of a resumed campaign) when this finding was first
    /// recorded; the earliest over the stores merged into this one. `None` for a finding not
    /// made by a campaign, or made before campaigns recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_hit_s: Option<f64>,
}

/// The module index (`g`) an occurrence names: `<seed>:<g>:<program>[:inputs<r>]`.
pub fn module_index_of(occurrence: &str) -> Option<u64> {
    occurrence.split(':').nth(1)?.parse().ok()
}

/// The earlier of two optional times (either one when the other is missing).
pub fn earliest(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The XLA options a finding was found with: its `meta.xla_options` (campaigns store them
/// there), empty when it recorded none.
pub fn xla_options_of(meta: &Value) -> Vec<(String, String)> {
    meta.get("xla_options")
        .and_then(|o| serde_json::from_value(o.clone()).ok())
        .unwrap_or_default()
}

impl FindingRecord {
    /// See [`xla_options_of`].
    pub fn xla_options(&self) -> Vec<(String, String)> {
        xla_options_of(&self.meta)
    }

    /// The smallest module index among its occurrences: the first module that hit it, in the
    /// order a campaign hands modules out. A function of the occurrences alone, so the same
    /// whether the campaign ran with one job or several, in one run or resumed.
    pub fn first_hit_module(&self) -> Option<u64> {
        self.occurrences
            .iter()
            .filter_map(|o| module_index_of(o))
            .min()
    }
}

/// What [`Store::merge_from`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MergeCounts {
    /// Finding directories new to this store.
    pub copied: usize,
    /// Findings both stores had, folded into one.
    pub folded: usize,
}

/// Copies the directory `from` (files and folders, recursively) to a new directory `to`.
fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for e in fs::read_dir(from)? {
        let e = e?;
        let p = e.path();
        if e.file_type()?.is_dir() {
            copy_dir(&p, &to.join(e.file_name()))?;
        } else {
            fs::copy(&p, to.join(e.file_name()))?;
        }
    }
    Ok(())
}

/// What [`Store::scan`] found.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    pub findings: Vec<(PathBuf, FindingRecord)>,
    /// `finding.json` files that could not be read or parsed, with why.
    pub unreadable: Vec<(PathBuf, String)>,
}

/// A findings store rooted at a campaign's output directory.
pub struct Store {
    root: PathBuf,
    lock: Mutex<()>,
}

/// Outcomes as JSON without the output arrays (those go to `.lit` files).
fn outcome_json(o: &engine::backend::Outcome) -> Value {
    use engine::backend::Outcome;
    match o {
        Outcome::Ok(r) => json!({
            "outcome": "ok",
            "outputs": r.outputs.iter().map(|l| l.shape().to_string_lossy()).collect::<Vec<_>>(),
            "timings": r.timings,
        }),
        other => serde_json::to_value(other).unwrap_or(Value::Null),
    }
}

trait ShapeText {
    fn to_string_lossy(&self) -> String;
}

impl ShapeText for hlo::Shape {
    fn to_string_lossy(&self) -> String {
        match self {
            hlo::Shape::Array(a) => format!(
                "{}[{}]",
                a.ty,
                a.dims
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            hlo::Shape::Tuple(t) => format!(
                "({})",
                t.iter()
                    .map(|s| s.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            hlo::Shape::Token => "token[]".into(),
            hlo::Shape::Opaque => "opaque[]".into(),
            s @ hlo::Shape::Buffer(_) => hlo::print::shape_to_string(s),
        }
    }
}

/// Holds an exclusive `flock` on a file while alive (folds from several processes sharing a
/// store stay consistent).
struct FileLock(fs::File);

impl FileLock {
    fn acquire(path: &Path) -> io::Result<FileLock> {
        use std::os::unix::io::AsRawFd;
        let f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        // SAFETY: flock on a file descriptor we own.
        let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(FileLock(f))
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        use std::os::unix::io::AsRawFd;
        // SAFETY: unlocking our own descriptor.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

impl Store {
    /// Opens (creating) a store at `root`.
    pub fn open(root: &Path) -> io::Result<Store> {
        fs::create_dir_all(root.join("findings"))?;
        Ok(Store {
            root: root.to_path_buf(),
            lock: Mutex::new(()),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn findings_dir(&self) -> PathBuf {
        self.root.join("findings")
    }

    /// Records a finding: a new directory, or a fold into the one with the same signature.
    pub fn record(&self, f: &NewFinding) -> io::Result<Recorded> {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let _fl = FileLock::acquire(&self.findings_dir().join(".lock"))?;
        let dir = self.findings_dir().join(f.signature.dir_name());
        if dir.is_dir() {
            return self.fold(&dir, f);
        }
        let tmp = self.findings_dir().join(format!(
            ".tmp-{}-{}-{}",
            f.signature.key(),
            std::process::id(),
            TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&tmp)?;
        let fill = || -> io::Result<()> {
            fs::write(tmp.join("module.hlo"), f.module_text)?;
            if let Some(b) = f.before_optimizations {
                fs::write(tmp.join("before_optimizations.txt"), b)?;
            }
            fs::write(tmp.join("inputs.lit"), encode_literals(f.inputs))?;
            let mut outcomes = serde_json::Map::new();
            for (name, o) in f.outcomes {
                outcomes.insert(name.clone(), outcome_json(o));
                if let engine::backend::Outcome::Ok(r) = o {
                    let safe: String = name
                        .chars()
                        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                        .collect();
                    fs::write(
                        tmp.join(format!("outputs.{safe}.lit")),
                        encode_literals(&r.outputs),
                    )?;
                }
            }
            fs::write(
                tmp.join("outcomes.json"),
                serde_json::to_vec_pretty(&Value::Object(outcomes))?,
            )?;
            let rec = FindingRecord {
                signature: f.signature.clone(),
                key: f.signature.key(),
                count: 1,
                occurrences: [f.occurrence.clone()].into_iter().collect(),
                verdict: f.verdict.clone(),
                first_occurrence: f.occurrence.clone(),
                meta: f.meta.clone(),
                first_hit_s: f.found_at_s,
            };
            fs::write(tmp.join("finding.json"), serde_json::to_vec_pretty(&rec)?)?;
            // Make the contents durable before the directory appears under its real name.
            for e in fs::read_dir(&tmp)? {
                fs::File::open(e?.path())?.sync_all()?;
            }
            Ok(())
        };
        if let Err(e) = fill() {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
        match fs::rename(&tmp, &dir) {
            Ok(()) => Ok(Recorded::New(dir)),
            Err(_) if dir.is_dir() => {
                let _ = fs::remove_dir_all(&tmp);
                self.fold(&dir, f)
            }
            Err(e) => {
                let _ = fs::remove_dir_all(&tmp);
                Err(e)
            }
        }
    }

    fn fold(&self, dir: &Path, f: &NewFinding) -> io::Result<Recorded> {
        let path = dir.join("finding.json");
        let mut rec: FindingRecord = serde_json::from_slice(&fs::read(&path)?).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })?;
        if rec.occurrences.contains(&f.occurrence) {
            return Ok(Recorded::AlreadyKnown(dir.to_path_buf()));
        }
        rec.occurrences.insert(f.occurrence.clone());
        rec.count = rec.occurrences.len() as u64;
        // Normally the directory's first record is the earliest; a resumed campaign's clock
        // restarts from its last saved time, which may lag the killed run's by a moment.
        rec.first_hit_s = earliest(rec.first_hit_s, f.found_at_s);
        write_atomic(&path, &serde_json::to_vec_pretty(&rec)?)?;
        Ok(Recorded::Folded {
            dir: dir.to_path_buf(),
            count: rec.count,
        })
    }

    /// Every stored finding that can be read, sorted by directory name (see [`Store::scan`] for
    /// the unreadable ones).
    pub fn findings(&self) -> io::Result<Vec<(PathBuf, FindingRecord)>> {
        Ok(self.scan()?.findings)
    }

    /// Every finding directory: the records, and the directories whose `finding.json` cannot be
    /// read or parsed (with why), both sorted by directory name.
    pub fn scan(&self) -> io::Result<Scan> {
        let mut scan = Scan::default();
        for e in fs::read_dir(self.findings_dir())? {
            let p = e?.path();
            if !p.is_dir()
                || p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                continue;
            }
            let file = p.join("finding.json");
            match fs::read(&file)
                .map_err(|e| e.to_string())
                .and_then(|bytes| {
                    serde_json::from_slice::<FindingRecord>(&bytes).map_err(|e| e.to_string())
                }) {
                Ok(rec) => scan.findings.push((p, rec)),
                Err(why) => scan.unreadable.push((file, why)),
            }
        }
        scan.findings.sort_by(|a, b| a.0.cmp(&b.0));
        scan.unreadable.sort();
        Ok(scan)
    }

    /// Folds every finding of `other` into this store: a finding this store has too gets the
    /// union of both occurrence sets (its count is that set's size; the earlier of the two first
    /// occurrences by text; a minimization only `other` has is copied with its repro); any
    /// other finding directory is copied whole (through a temporary name, renamed last). Merging
    /// the stores of a campaign's shards gives the findings of the unsharded campaign.
    pub fn merge_from(&self, other: &Store) -> io::Result<MergeCounts> {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let _fl = FileLock::acquire(&self.findings_dir().join(".lock"))?;
        let mut counts = MergeCounts::default();
        for (src, rec) in other.findings()? {
            let Some(name) = src.file_name() else {
                continue;
            };
            let dest = self.findings_dir().join(name);
            if !dest.is_dir() {
                let tmp = self.findings_dir().join(format!(
                    ".tmp-merge-{}-{}",
                    std::process::id(),
                    TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
                ));
                copy_dir(&src, &tmp)?;
                fs::rename(&tmp, &dest)?;
                counts.copied += 1;
                continue;
            }
            let path = dest.join("finding.json");
            let mut mine: FindingRecord =
                serde_json::from_slice(&fs::read(&path)?).map_err(|e| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("{}: {e}", path.display()),
                    )
                })?;
            mine.occurrences.extend(rec.occurrences.iter().cloned());
            mine.count = mine.occurrences.len() as u64;
            if rec.first_occurrence < mine.first_occurrence {
                mine.first_occurrence = rec.first_occurrence.clone();
            }
            mine.first_hit_s = earliest(mine.first_hit_s, rec.first_hit_s);
            if !dest.join("minimized.json").is_file() && src.join("minimized.json").is_file() {
                if src.join("repro").is_dir() {
                    let _ = fs::remove_dir_all(dest.join("repro"));
                    copy_dir(&src.join("repro"), &dest.join("repro"))?;
                }
                fs::copy(src.join("minimized.json"), dest.join("minimized.json"))?;
            }
            write_atomic(&path, &serde_json::to_vec_pretty(&mine)?)?;
            counts.folded += 1;
        }
        Ok(counts)
    }

    /// Removes temporary directories left by a killed process.
    pub fn clean_temporaries(&self) -> io::Result<usize> {
        let mut n = 0;
        for e in fs::read_dir(self.findings_dir())? {
            let p = e?.path();
            if p.file_name()
                .is_some_and(|s| s.to_string_lossy().starts_with(".tmp-"))
            {
                let _ = fs::remove_dir_all(&p);
                n += 1;
            }
        }
        Ok(n)
    }

    pub fn state_path(&self) -> PathBuf {
        self.root.join("campaign.json")
    }

    /// The saved campaign state, if any.
    pub fn load_state(&self) -> io::Result<Option<CampaignState>> {
        match fs::read(self.state_path()) {
            Ok(b) => serde_json::from_slice(&b).map(Some).map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidData, format!("campaign.json: {e}"))
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Saves the campaign state atomically.
    pub fn save_state(&self, s: &CampaignState) -> io::Result<()> {
        write_atomic(&self.state_path(), &serde_json::to_vec_pretty(s)?)
    }
}

/// Counters of a campaign (over the done prefix of module indices).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CampaignStats {
    pub modules: u64,
    pub programs: u64,
    /// Programs times the input sets each ran on.
    #[serde(default)]
    pub cases: u64,
    /// Cases (program x input set) per verdict kind.
    pub verdicts: BTreeMap<String, u64>,
    /// Findings per `kind:label`.
    pub labels: BTreeMap<String, u64>,
    /// Programs (not unsupported) containing each opcode.
    pub op_coverage: BTreeMap<String, u64>,
    /// Why programs were unsupported (normalized message -> count).
    pub unsupported: BTreeMap<String, u64>,
    /// Float outputs by the bit length of their largest ulp distance (0: exact, k: < 2^k).
    pub ulp_hist: BTreeMap<u32, u64>,
    /// Findings that made a new directory / folded into an existing one.
    pub findings_new: u64,
    pub findings_folded: u64,
    /// Where the time went, summed over modules (milliseconds).
    pub time: TimeStats,
}

/// Milliseconds summed over modules.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeStats {
    pub generate_ms: f64,
    pub oracle_ms: f64,
    pub xla_wait_ms: f64,
    /// The packed XLA runs alone (the oracle ran meanwhile: `xla_wait_ms` is the longer of the two).
    #[serde(default)]
    pub xla_run_ms: f64,
    pub xla_compile_ms: f64,
    pub xla_execute_ms: f64,
    pub confirm_ms: f64,
    /// Of `confirm_ms`: the judge on packed results; and the findings confirmed.
    #[serde(default)]
    pub judge_ms: f64,
    #[serde(default)]
    pub confirmed: u64,
    /// The cost of each set of legitimate results computed on a packed result (milliseconds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_ms: Vec<f64>,
    pub wall_ms: f64,
    /// Packed runs XLA answered, and those that reused an executable (later input sets).
    #[serde(default)]
    pub xla_packed_runs: u64,
    #[serde(default)]
    pub xla_packed_cached: u64,
    /// The voter held to the set on a sample of agreeing programs: checks, dissents, time.
    #[serde(default)]
    pub dissent_checks: u64,
    #[serde(default)]
    pub dissents: u64,
    #[serde(default)]
    pub dissent_ms: f64,
}

/// Where the campaign threads' time went, in seconds that add up to the threads' time (jobs x
/// seconds of fuzzing): the oracle counts only where it ran past XLA's packed run (it runs
/// while XLA compiles), and `idle` is what no module used (threads waiting for the last module,
/// the state file, the progress bar).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WorkerTime {
    pub total_s: f64,
    pub xla_compile_s: f64,
    pub xla_execute_s: f64,
    /// The rest of the packed XLA runs: parse, HLO -> MLIR, transfers, the worker protocol.
    pub xla_other_s: f64,
    /// The oracle beyond XLA's packed run, and (not part of the sum) all of its time.
    pub oracle_s: f64,
    pub oracle_all_s: f64,
    /// The judge on packed results.
    pub judge_s: f64,
    /// Confirming findings: XLA runs alone, the vote, equivalent forms, storing.
    pub confirmation_s: f64,
    pub generate_s: f64,
    pub idle_s: f64,
}

impl WorkerTime {
    /// The parts that add up to `total_s`, named as reports name them.
    pub fn parts(&self) -> [(&'static str, f64); 8] {
        [
            ("XLA compile", self.xla_compile_s),
            ("XLA execute", self.xla_execute_s),
            ("XLA other", self.xla_other_s),
            ("oracle", self.oracle_s),
            ("judge", self.judge_s),
            ("confirmation", self.confirmation_s),
            ("generate", self.generate_s),
            ("idle", self.idle_s),
        ]
    }
}

impl TimeStats {
    /// Where `thread_s` seconds of campaign threads went (see [`WorkerTime`]). Records made
    /// before the packed run was timed alone count its stages as the whole run.
    pub fn worker_time(&self, thread_s: f64) -> WorkerTime {
        let stages = self.xla_compile_ms + self.xla_execute_ms;
        let xla_run = if self.xla_run_ms > 0.0 {
            self.xla_run_ms.max(stages)
        } else {
            stages
        };
        let oracle = (self.xla_wait_ms - xla_run).clamp(0.0, self.oracle_ms);
        let used_ms = self.wall_ms;
        WorkerTime {
            total_s: thread_s,
            xla_compile_s: self.xla_compile_ms / 1e3,
            xla_execute_s: self.xla_execute_ms / 1e3,
            xla_other_s: (xla_run - stages) / 1e3,
            oracle_s: oracle / 1e3,
            oracle_all_s: self.oracle_ms / 1e3,
            judge_s: self.judge_ms / 1e3,
            confirmation_s: (self.confirm_ms - self.judge_ms).max(0.0) / 1e3,
            generate_s: self.generate_ms / 1e3,
            idle_s: (thread_s - used_ms / 1e3).max(0.0),
        }
    }

    pub fn add(&mut self, t: &crate::timings::ModuleTimings, generate_ms: f64) {
        self.xla_packed_runs += t.xla_packed_runs;
        self.xla_packed_cached += t.xla_packed_cached;
        self.generate_ms += generate_ms;
        self.oracle_ms += t.oracle_ms;
        self.xla_wait_ms += t.xla_wait_ms;
        self.xla_run_ms += t.xla_run_ms;
        self.xla_compile_ms += t.xla_compile_ms;
        self.xla_execute_ms += t.xla_execute_ms;
        self.confirm_ms += t.confirm_ms;
        self.judge_ms += t.judge_ms;
        self.confirmed += t.confirmed;
        self.set_ms.extend_from_slice(&t.set_ms);
        self.dissent_checks += t.dissent_checks;
        self.dissents += t.dissents;
        self.dissent_ms += t.dissent_ms;
        self.wall_ms += t.wall_ms + generate_ms;
    }

    pub fn merge(&mut self, o: &TimeStats) {
        self.xla_packed_runs += o.xla_packed_runs;
        self.xla_packed_cached += o.xla_packed_cached;
        self.generate_ms += o.generate_ms;
        self.oracle_ms += o.oracle_ms;
        self.xla_wait_ms += o.xla_wait_ms;
        self.xla_run_ms += o.xla_run_ms;
        self.xla_compile_ms += o.xla_compile_ms;
        self.xla_execute_ms += o.xla_execute_ms;
        self.confirm_ms += o.confirm_ms;
        self.judge_ms += o.judge_ms;
        self.confirmed += o.confirmed;
        self.set_ms.extend_from_slice(&o.set_ms);
        self.dissent_checks += o.dissent_checks;
        self.dissents += o.dissents;
        self.dissent_ms += o.dissent_ms;
        self.wall_ms += o.wall_ms;
    }
}

impl CampaignStats {
    pub fn merge(&mut self, o: &CampaignStats) {
        fn add<K: Ord + Clone>(a: &mut BTreeMap<K, u64>, b: &BTreeMap<K, u64>) {
            for (k, v) in b {
                *a.entry(k.clone()).or_insert(0) += v;
            }
        }
        self.modules += o.modules;
        self.programs += o.programs;
        self.cases += o.cases;
        add(&mut self.verdicts, &o.verdicts);
        add(&mut self.labels, &o.labels);
        add(&mut self.op_coverage, &o.op_coverage);
        add(&mut self.unsupported, &o.unsupported);
        add(&mut self.ulp_hist, &o.ulp_hist);
        self.findings_new += o.findings_new;
        self.findings_folded += o.findings_folded;
        self.time.merge(&o.time);
    }
}

fn one() -> usize {
    1
}

/// What a campaign needs to resume: written atomically as modules complete.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CampaignState {
    /// The campaign's base seed.
    pub seed: u64,
    /// `(I, N)`: this process handles module indices `g = k * N + I`.
    pub shard: (u64, u64),
    /// Every in-shard ordinal `k` below this one is done.
    pub next_index: u64,
    /// Seconds spent over all runs of this campaign.
    pub elapsed_s: f64,
    /// Backends and options, to refuse resuming with different ones.
    pub backends: Vec<String>,
    pub xla_options: Vec<(String, String)>,
    pub pack: usize,
    /// Input sets per program (campaigns from before input sets had one).
    #[serde(default = "one")]
    pub input_sets: usize,
    pub stats: CampaignStats,
    /// Throughput over the whole campaign: campaign seconds (over every run) against modules,
    /// programs and findings so far (campaigns from before it start empty).
    #[serde(default)]
    pub timeline: Vec<crate::summary::Sample>,
}

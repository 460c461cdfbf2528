//! XLA dump directories (`--xla_dump_to=DIR`): classify every file by XLA's naming grammar,
//! group files by module, and order each module's per-pass snapshots into a pass timeline.
//!
//! File names are `[<timestamp>.]module_<id>[.<module name>].<suffix>`. Module names and kernel
//! names may both contain dots, so names are resolved in two rounds: first the files whose suffix
//! is unambiguous (`before_optimizations.txt`, `debug_options`, `*_after_optimizations*.txt`,
//! module folders) give each module id its name; then every other file is read knowing that name.

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What one dump file is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileKind {
    /// `before_optimizations.txt`: the module XLA was handed (after jax's HLO->MLIR->HLO trip).
    BeforeOptimizations,
    /// `cpu_after_optimizations.txt`, `sm_90_gpu_after_optimizations.txt`, ...
    AfterOptimizations { platform: String },
    /// `<platform>_after_optimizations-buffer-assignment.txt` and its siblings
    /// (`-buffer-assignment-values`, `-live-range`, `-memory-usage-report`).
    BufferAssignmentReport { platform: String, report: String },
    /// `debug_options`: the non-default DebugOptions, `name: value` per line.
    DebugOptions,
    /// `NNNN.<pipeline>.after_<pass>.before_<next>.txt`: the module after one pass.
    PassSnapshot {
        step: u32,
        pipeline: String,
        after: String,
        before: String,
    },
    /// `NNNN.<pass>.<stage>.txt`: a pass that dumps its own stages (copy-insertion, ...).
    PassStage {
        step: u32,
        pass: String,
        stage: String,
    },
    /// `<kernel>.ir-no-opt.ll` / `<kernel>.ir-with-opt.ll`.
    LlvmIr { kernel: String, optimized: bool },
    /// `obj-file.<kernel>.o`.
    ObjectFile { kernel: String },
    /// `module.mlir` (or any `.mlir`).
    Mlir,
    /// `compile_options.textproto`, `topology.textproto`, ...
    TextProto { what: String },
    /// `.hlo.pb` / `.pb` (with `--xla_dump_hlo_as_proto`).
    HloProto,
    /// `.dot`, `.html`, `.url` renderings.
    Rendering { format: String },
    /// Another text file of a module (`.txt`).
    OtherModuleText { suffix: String },
    /// Nothing in the grammar matches.
    Unclassified,
}

impl FileKind {
    /// HLO module text this crate can parse.
    pub fn is_hlo_text(&self) -> bool {
        matches!(
            self,
            FileKind::BeforeOptimizations
                | FileKind::AfterOptimizations { .. }
                | FileKind::PassSnapshot { .. }
                | FileKind::PassStage { .. }
        )
    }

    /// A short label for summaries.
    pub fn label(&self) -> &'static str {
        match self {
            FileKind::BeforeOptimizations => "before_optimizations",
            FileKind::AfterOptimizations { .. } => "after_optimizations",
            FileKind::BufferAssignmentReport { .. } => "buffer-assignment report",
            FileKind::DebugOptions => "debug_options",
            FileKind::PassSnapshot { .. } => "pass snapshot",
            FileKind::PassStage { .. } => "pass stage",
            FileKind::LlvmIr { .. } => "LLVM IR",
            FileKind::ObjectFile { .. } => "object file",
            FileKind::Mlir => "MLIR",
            FileKind::TextProto { .. } => "textproto",
            FileKind::HloProto => "HLO proto",
            FileKind::Rendering { .. } => "rendering",
            FileKind::OtherModuleText { .. } => "other text",
            FileKind::Unclassified => "unclassified",
        }
    }
}

/// One file of a dump, with the module it belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DumpFile {
    /// Path relative to the dump directory, `/`-separated.
    pub path: String,
    pub timestamp: Option<u64>,
    pub module_id: Option<u64>,
    pub module_name: Option<String>,
    #[serde(flatten)]
    pub kind: FileKind,
}

/// One step of a module's pass timeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PassStep {
    pub step: u32,
    pub pipeline: String,
    /// The pass after which the snapshot was taken (`pipeline-start` for a pipeline's first).
    pub after: String,
    /// The pass that runs next (`pipeline-end` for a pipeline's last).
    pub before: String,
    pub path: String,
    /// A stage a pass dumped from inside itself (`copy-insertion.after_removing_unnecessary_copies`):
    /// `pipeline` holds the pass, `after` the stage, `before` is empty.
    pub pass_internal: bool,
}

impl PassStep {
    /// True for the snapshot a pipeline writes at its start (no pass ran yet).
    pub fn is_pipeline_start(&self) -> bool {
        self.after == "pipeline-start"
    }
}

/// Everything a dump holds for one module id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DumpModule {
    pub id: u64,
    pub name: Option<String>,
    pub timestamp: Option<u64>,
    pub before_optimizations: Option<String>,
    /// Platform (`cpu`, `sm_90_gpu`, ...) -> file.
    pub after_optimizations: BTreeMap<String, String>,
    pub debug_options: Option<String>,
    /// Per-pass snapshots in step order.
    pub timeline: Vec<PassStep>,
    /// Every file of the module, by kind label, counted.
    pub file_counts: BTreeMap<String, usize>,
}

/// A classified dump directory.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DumpIndex {
    pub files: Vec<DumpFile>,
    pub modules: Vec<DumpModule>,
    /// Options read from the `debug_options` files (the first seen value of each).
    pub debug_options: BTreeMap<String, String>,
    /// Observations a reader should know about (module cap reached, `.*` regex, ...).
    pub notes: Vec<String>,
    /// Directories below the dump directory that were not read: more than
    /// [`MAX_DUMP_DEPTH`] levels down (relative paths).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub too_deep: Vec<String>,
}

/// How many directory levels below a dump directory [`read_dump_dir`] reads.
pub const MAX_DUMP_DEPTH: usize = 16;

impl DumpIndex {
    pub fn unclassified(&self) -> impl Iterator<Item = &DumpFile> {
        self.files
            .iter()
            .filter(|f| f.kind == FileKind::Unclassified)
    }
    pub fn module(&self, id: u64) -> Option<&DumpModule> {
        self.modules.iter().find(|m| m.id == id)
    }
}

/// Splits `[<timestamp>.]module_<digits>` off the front of a base name.
fn split_module_prefix(base: &str) -> Option<(Option<u64>, u64, &str)> {
    let (timestamp, rest) = match base.find('.') {
        Some(dot) if base[..dot].bytes().all(|b| b.is_ascii_digit()) && dot > 0 => {
            (base[..dot].parse().ok(), &base[dot + 1..])
        }
        _ => (None, base),
    };
    let rest = rest.strip_prefix("module_")?;
    let digits = rest.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let id = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if !tail.is_empty() && !tail.starts_with('.') {
        return None;
    }
    Some((timestamp, id, tail.strip_prefix('.').unwrap_or("")))
}

/// Suffixes that end a module's name unambiguously: `(name, suffix)` when `tail` is
/// `<name>.<suffix>` or just `<suffix>`.
fn split_unambiguous(tail: &str) -> Option<(Option<&str>, &str)> {
    const EXACT: [&str; 2] = ["before_optimizations.txt", "debug_options"];
    for s in EXACT {
        if tail == s {
            return Some((None, s));
        }
        if let Some(name) = tail.strip_suffix(s).and_then(|n| n.strip_suffix('.')) {
            return Some((Some(name), &tail[tail.len() - s.len()..]));
        }
    }
    // <platform>_after_optimizations[...].txt: the platform is a single dot-free token.
    let pos = tail.rfind("_after_optimizations")?;
    let start = tail[..pos].rfind('.').map(|d| d + 1).unwrap_or(0);
    let suffix = &tail[start..];
    if !suffix.ends_with(".txt") {
        return None;
    }
    let name = if start == 0 {
        None
    } else {
        Some(&tail[..start - 1])
    };
    Some((name, suffix))
}

/// Classifies what follows the module name.
fn classify_suffix(suffix: &str) -> FileKind {
    if suffix == "before_optimizations.txt" {
        return FileKind::BeforeOptimizations;
    }
    if suffix == "debug_options" {
        return FileKind::DebugOptions;
    }
    if let Some(pos) = suffix.find("_after_optimizations") {
        let platform = suffix[..pos].to_string();
        let rest = &suffix[pos + "_after_optimizations".len()..];
        if rest == ".txt" {
            return FileKind::AfterOptimizations { platform };
        }
        if let Some(report) = rest.strip_prefix('-').and_then(|r| r.strip_suffix(".txt")) {
            return FileKind::BufferAssignmentReport {
                platform,
                report: report.to_string(),
            };
        }
    }
    if let Some(kind) = classify_pass_file(suffix) {
        return kind;
    }
    if let Some(kernel) = suffix.strip_suffix(".ir-no-opt.ll") {
        return FileKind::LlvmIr {
            kernel: kernel.to_string(),
            optimized: false,
        };
    }
    if let Some(kernel) = suffix.strip_suffix(".ir-with-opt.ll") {
        return FileKind::LlvmIr {
            kernel: kernel.to_string(),
            optimized: true,
        };
    }
    if let Some(kernel) = suffix
        .strip_prefix("obj-file.")
        .and_then(|k| k.strip_suffix(".o"))
    {
        return FileKind::ObjectFile {
            kernel: kernel.to_string(),
        };
    }
    classify_by_extension(suffix)
}

/// `NNNN.<pipeline>.after_<pass>.before_<next>.txt` or `NNNN.<pass>.<stage>.txt`.
fn classify_pass_file(suffix: &str) -> Option<FileKind> {
    let body = suffix.strip_suffix(".txt")?;
    let (step, rest) = body.split_once('.')?;
    if step.len() < 4 || !step.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let step: u32 = step.parse().ok()?;
    let (first, rest) = rest.split_once('.')?;
    if let Some(after_before) = rest.strip_prefix("after_") {
        if let Some(pos) = after_before.rfind(".before_") {
            return Some(FileKind::PassSnapshot {
                step,
                pipeline: first.to_string(),
                after: after_before[..pos].to_string(),
                before: after_before[pos + ".before_".len()..].to_string(),
            });
        }
    }
    Some(FileKind::PassStage {
        step,
        pass: first.to_string(),
        stage: rest.to_string(),
    })
}

fn classify_by_extension(name: &str) -> FileKind {
    let ext = name.rsplit('.').next().unwrap_or("");
    match ext {
        "mlir" => FileKind::Mlir,
        "textproto" | "pbtxt" => FileKind::TextProto {
            what: name.rsplit('/').next().unwrap_or(name).to_string(),
        },
        "pb" => FileKind::HloProto,
        "dot" | "html" | "url" => FileKind::Rendering {
            format: ext.to_string(),
        },
        "txt" => FileKind::OtherModuleText {
            suffix: name.to_string(),
        },
        _ => FileKind::Unclassified,
    }
}

/// Classifies a set of relative file paths (`/`-separated) as XLA wrote them.
/// Files inside a `module_NNNN.<name>/` folder belong to that module.
pub fn classify_paths<S: AsRef<str>>(paths: &[S]) -> DumpIndex {
    // Round 1: module names from unambiguous files and module folders.
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    for p in paths {
        let p = p.as_ref();
        let mut comps: Vec<&str> = p.split('/').collect();
        let base = comps.pop().unwrap_or("");
        if let Some((_, id, tail)) = split_module_prefix(base) {
            if let Some((Some(name), _)) = split_unambiguous(tail) {
                names.entry(id).or_insert_with(|| name.to_string());
            }
        }
        for dir in comps {
            if let Some((_, id, tail)) = split_module_prefix(dir) {
                if !tail.is_empty() {
                    names.entry(id).or_insert_with(|| tail.to_string());
                }
            }
        }
    }

    // Round 2: every file.
    let mut files = Vec::with_capacity(paths.len());
    for p in paths {
        let p = p.as_ref();
        files.push(classify_one(p, &names));
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    build_index(files)
}

fn classify_one(path: &str, names: &BTreeMap<u64, String>) -> DumpFile {
    let mut comps: Vec<&str> = path.split('/').collect();
    let base = comps.pop().unwrap_or("");
    let mut file = DumpFile {
        path: path.to_string(),
        timestamp: None,
        module_id: None,
        module_name: None,
        kind: FileKind::Unclassified,
    };
    if let Some((ts, id, tail)) = split_module_prefix(base) {
        file.timestamp = ts;
        file.module_id = Some(id);
        let suffix = match names.get(&id) {
            Some(name) if tail == name => "",
            Some(name) => tail
                .strip_prefix(name.as_str())
                .and_then(|t| t.strip_prefix('.'))
                .unwrap_or(tail),
            None => match split_unambiguous(tail) {
                Some((_, s)) => s,
                None => tail,
            },
        };
        file.module_name = names.get(&id).cloned();
        file.kind = classify_suffix(suffix);
        return file;
    }
    // A file inside a module folder (`module_NNNN.<name>/module.mlir`), at any depth.
    if let Some((ts, id)) = comps
        .iter()
        .rev()
        .find_map(|d| split_module_prefix(d).map(|(ts, id, _)| (ts, id)))
    {
        file.timestamp = ts;
        file.module_id = Some(id);
        file.module_name = names.get(&id).cloned();
    }
    file.kind = match classify_by_extension(base) {
        // A loose text file that names no module is nothing XLA writes.
        FileKind::OtherModuleText { .. } if file.module_id.is_none() => FileKind::Unclassified,
        k => k,
    };
    file
}

fn build_index(files: Vec<DumpFile>) -> DumpIndex {
    let mut modules: BTreeMap<u64, DumpModule> = BTreeMap::new();
    for f in &files {
        let Some(id) = f.module_id else { continue };
        let m = modules.entry(id).or_insert_with(|| DumpModule {
            id,
            ..DumpModule::default()
        });
        if m.name.is_none() {
            m.name = f.module_name.clone();
        }
        if m.timestamp.is_none() {
            m.timestamp = f.timestamp;
        }
        *m.file_counts.entry(f.kind.label().to_string()).or_insert(0) += 1;
        match &f.kind {
            FileKind::BeforeOptimizations => m.before_optimizations = Some(f.path.clone()),
            FileKind::AfterOptimizations { platform } => {
                m.after_optimizations
                    .insert(platform.clone(), f.path.clone());
            }
            FileKind::DebugOptions => m.debug_options = Some(f.path.clone()),
            FileKind::PassSnapshot {
                step,
                pipeline,
                after,
                before,
            } => m.timeline.push(PassStep {
                step: *step,
                pipeline: pipeline.clone(),
                after: after.clone(),
                before: before.clone(),
                path: f.path.clone(),
                pass_internal: false,
            }),
            FileKind::PassStage { step, pass, stage } => m.timeline.push(PassStep {
                step: *step,
                pipeline: pass.clone(),
                after: stage.clone(),
                before: String::new(),
                path: f.path.clone(),
                pass_internal: true,
            }),
            _ => {}
        }
    }
    let mut modules: Vec<DumpModule> = modules.into_values().collect();
    for m in &mut modules {
        m.timeline.sort_by_key(|s| s.step);
    }
    DumpIndex {
        files,
        modules,
        debug_options: BTreeMap::new(),
        notes: Vec::new(),
        too_deep: Vec::new(),
    }
}

/// Parses a `debug_options` file: `name: value` per line; values keep their quotes stripped.
pub fn parse_debug_options(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(v);
        out.insert(k.trim().to_string(), v.to_string());
    }
    out
}

#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}: not a directory")]
    NotADirectory(PathBuf),
}

/// Reads a dump directory: classifies every file below it, reads its `debug_options`, and notes
/// what a reader should know (module cap reached, `.*` pass regex, modules without an
/// after-optimizations file).
pub fn read_dump_dir(dir: &Path) -> Result<DumpIndex, DumpError> {
    if !dir.is_dir() {
        return Err(DumpError::NotADirectory(dir.to_path_buf()));
    }
    let mut paths = Vec::new();
    let mut too_deep = Vec::new();
    walk(dir, dir, &mut paths, &mut too_deep, 0)?;
    let mut index = classify_paths(&paths);
    for m in &index.modules {
        if let Some(p) = &m.debug_options {
            let full = dir.join(p);
            // An unreadable or truncated debug_options file only loses its options.
            if let Ok(text) = std::fs::read_to_string(&full) {
                for (k, v) in parse_debug_options(&text) {
                    index.debug_options.entry(k).or_insert(v);
                }
            }
        }
    }
    index.notes = notes_for(&index);
    if let Some(first) = too_deep.first() {
        index.notes.push(format!(
            "{} directories more than {MAX_DUMP_DEPTH} levels down were not read (the first: {first})",
            too_deep.len()
        ));
    }
    index.too_deep = too_deep;
    Ok(index)
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let rel: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    rel.join("/")
}

fn walk(
    root: &Path,
    dir: &Path,
    out: &mut Vec<String>,
    too_deep: &mut Vec<String>,
    depth: usize,
) -> Result<(), DumpError> {
    if depth > MAX_DUMP_DEPTH {
        too_deep.push(relative(root, dir));
        return Ok(());
    }
    let io = |e| DumpError::Io {
        path: dir.to_path_buf(),
        source: e,
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let ft = e.file_type().map_err(|err| DumpError::Io {
            path: path.clone(),
            source: err,
        })?;
        if ft.is_dir() {
            walk(root, &path, out, too_deep, depth + 1)?;
        } else {
            out.push(relative(root, &path));
        }
    }
    Ok(())
}

/// What the files and options say about how the dump was made.
pub fn notes_for(index: &DumpIndex) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(cap) = index
        .debug_options
        .get("xla_dump_max_hlo_modules")
        .and_then(|v| v.parse::<i64>().ok())
    {
        let dumped = index
            .modules
            .iter()
            .filter(|m| m.before_optimizations.is_some())
            .count() as i64;
        if cap >= 0 && dumped >= cap {
            notes.push(format!(
                "truncated: --xla_dump_max_hlo_modules={cap} was reached ({dumped} modules dumped); later modules were not written"
            ));
        }
    }
    if let Some(re) = index.debug_options.get("xla_dump_hlo_pass_re") {
        if re == ".*" {
            notes.push(
                "per-pass dump made with --xla_dump_hlo_pass_re=.*: only passes that changed the module are present"
                    .to_string(),
            );
        } else {
            notes.push(format!(
                "per-pass dump made with --xla_dump_hlo_pass_re={re}: every matching pass is present, changed or not"
            ));
        }
    }
    for m in &index.modules {
        if m.before_optimizations.is_some() && m.after_optimizations.is_empty() {
            let name = m.name.as_deref().unwrap_or("?");
            notes.push(format!(
                "module_{:04} ({name}) has no after_optimizations file: its compile failed, was cut short, or dumps after optimization were off",
                m.id
            ));
        }
    }
    let unclassified = index.unclassified().count();
    if unclassified > 0 {
        notes.push(format!(
            "{unclassified} file(s) match nothing in XLA's dump grammar"
        ));
    }
    notes
}

/// A plain-text explanation of a dump: modules, files by kind, stages and pass timelines.
pub fn render_summary(index: &DumpIndex, dir_label: &str) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let classified = index.files.len() - index.unclassified().count();
    let _ = writeln!(
        s,
        "dump {dir_label}: {} files ({} classified), {} modules",
        index.files.len(),
        classified,
        index.modules.len()
    );
    if !index.debug_options.is_empty() {
        let _ = writeln!(s, "debug_options:");
        for (k, v) in &index.debug_options {
            let _ = writeln!(s, "  {k}: {v}");
        }
    }
    for n in &index.notes {
        let _ = writeln!(s, "note: {n}");
    }
    for m in &index.modules {
        let _ = writeln!(
            s,
            "module_{:04} {}",
            m.id,
            m.name.as_deref().unwrap_or("(unnamed)")
        );
        let mut stages = Vec::new();
        if m.before_optimizations.is_some() {
            stages.push("before_optimizations".to_string());
        }
        for p in m.after_optimizations.keys() {
            stages.push(format!("{p}_after_optimizations"));
        }
        let _ = writeln!(
            s,
            "  stages: {}",
            if stages.is_empty() {
                "(none)".to_string()
            } else {
                stages.join(", ")
            }
        );
        let counts: Vec<String> = m
            .file_counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        let _ = writeln!(s, "  files: {}", counts.join(", "));
        if !m.timeline.is_empty() {
            let passes = m
                .timeline
                .iter()
                .filter(|p| !p.is_pipeline_start() && !p.pass_internal)
                .count();
            let _ = writeln!(
                s,
                "  pass timeline: {} snapshots, {} after a pass",
                m.timeline.len(),
                passes
            );
            for p in &m.timeline {
                if p.pass_internal {
                    let _ = writeln!(s, "    {:04} {:<40} stage {}", p.step, p.pipeline, p.after);
                } else {
                    let _ = writeln!(
                        s,
                        "    {:04} {:<40} after {:<36} before {}",
                        p.step, p.pipeline, p.after, p.before
                    );
                }
            }
        }
    }
    let un: Vec<&DumpFile> = index.unclassified().collect();
    if !un.is_empty() {
        let _ = writeln!(s, "unclassified files:");
        for f in un {
            let _ = writeln!(s, "  {}", f.path);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_the_main_file_kinds() {
        let idx = classify_paths(&[
            "module_0003.jit_f.before_optimizations.txt",
            "module_0003.jit_f.cpu_after_optimizations.txt",
            "module_0003.jit_f.cpu_after_optimizations-buffer-assignment.txt",
            "module_0003.jit_f.debug_options",
            "module_0003.jit_f.0007.simplification.after_algsimp.before_simplify-sorts.txt",
            "module_0003.jit_f.0041.copy-insertion.after_removing_unnecessary_copies.txt",
            "module_0003.jit_f.multiply_subtract_fusion.1_kernel_module.ir-no-opt.ll",
            "module_0003.jit_f.obj-file.wrapped_scatter.o",
            "module_0003.jit_f/module.mlir",
            "module_0003.jit_f/compile_options.textproto",
            "1700000000123456.module_0009.jit_g.sm_90_gpu_after_optimizations.txt",
        ]);
        assert_eq!(idx.unclassified().count(), 0, "{:#?}", idx.files);
        let m = idx.module(3).unwrap();
        assert_eq!(m.name.as_deref(), Some("jit_f"));
        assert_eq!(m.timeline.len(), 2);
        assert!(m.timeline[1].pass_internal);
        assert_eq!(m.timeline[0].after, "algsimp");
        let kernel = idx
            .files
            .iter()
            .find(|f| f.path.ends_with("ir-no-opt.ll"))
            .unwrap();
        assert_eq!(
            kernel.kind,
            FileKind::LlvmIr {
                kernel: "multiply_subtract_fusion.1_kernel_module".into(),
                optimized: false
            }
        );
        let gpu = idx.module(9).unwrap();
        assert_eq!(gpu.timestamp, Some(1700000000123456));
        assert!(gpu.after_optimizations.contains_key("sm_90_gpu"));
    }

    #[test]
    fn module_names_with_dots_are_resolved_from_unambiguous_files() {
        let idx = classify_paths(&[
            "module_0001.jit_f.1.before_optimizations.txt",
            "module_0001.jit_f.1.0002.simplification.after_dce.before_algsimp.txt",
        ]);
        let m = idx.module(1).unwrap();
        assert_eq!(m.name.as_deref(), Some("jit_f.1"));
        assert_eq!(m.timeline[0].step, 2);
    }

    #[test]
    fn junk_names_are_unclassified_not_errors() {
        let idx = classify_paths(&["README", "module_x.txt", "module_.foo", ""]);
        assert_eq!(idx.unclassified().count(), 4);
    }

    #[test]
    fn debug_options_lines_are_read() {
        let o = parse_debug_options("xla_dump_to: \"/tmp/x\"\nxla_dump_max_hlo_modules: 3\n");
        assert_eq!(o["xla_dump_to"], "/tmp/x");
        assert_eq!(o["xla_dump_max_hlo_modules"], "3");
    }
}

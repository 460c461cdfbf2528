//! XLA path coverage, measured from XLA's own output: what XLA CPU made of a module (its
//! `after_optimizations` HLO), as a set of categories, and the share of modules reaching each
//! category over a set of modules.
//!
//! A category names a code path of XLA CPU that a module's optimized HLO shows it will run:
//! - `fusion kind=kLoop` (kInput, kOutput, kCustom): a fusion of that kind;
//! - `custom fusion __ynn_fusion`: a fusion whose `backend_config` names a library fusion kind
//!   (`fusion_config.kind`); `__ynn_fusion with dot` (convolution, reduce, reduce-window), or
//!   `elementwise only`: what the library fusion holds;
//! - `custom-call <target>`: a library call (`lapack_*`, `TopK`, `__onednn$matmul`, ...);
//! - `partitioned (outer_dimension_partitions)`: an op whose `backend_config` splits its outer
//!   dimension across threads;
//! - `op <name>`: an op that survives outside every fusion (its own emitter or thunk: a `dot`
//!   that stays a dot, a `sort`, a `while`, ...), for the ops in [`STRUCTURAL`];
//! - `fused <name>`: such an op inside an ordinary (kLoop/kInput/kOutput) fusion;
//! - `array >= 2^16 elements`, `array >= 2^20 elements`: an array value of the entry
//!   computation that large (XLA CPU changes paths with size);
//! - structural HLO (issue #27 item 2): `aliased output` (a non-empty `input_output_alias`),
//!   `non-default entry layout` (an entry parameter or result whose `entry_computation_layout`
//!   is not the descending default), `sharding` (an instruction with a `sharding`), `while
//!   without known trip count` (a `while` outside fusions whose `backend_config` has no
//!   `known_trip_count`: a data-dependent loop), `conditional with 4+ branches`, `control flow
//!   in reducer or comparator` (a `call`, `conditional` or `while` inside a `to_apply` or
//!   comparator computation).
//!
//! [`categories_of`] reads one module; [`CoverageTable`] counts modules per category;
//! [`reference_table`] counts the real jax programs of `corpora/jax/dump/`.

use hlo::{Attr, Module, Opcode};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Ops whose presence (outside or inside fusions) names a distinct code path of XLA CPU.
pub const STRUCTURAL: &[Opcode] = &[
    Opcode::Dot,
    Opcode::Convolution,
    Opcode::Reduce,
    Opcode::ReduceWindow,
    Opcode::SelectAndScatter,
    Opcode::Sort,
    Opcode::Scatter,
    Opcode::Gather,
    Opcode::DynamicSlice,
    Opcode::DynamicUpdateSlice,
    Opcode::While,
    Opcode::Conditional,
    Opcode::Call,
    Opcode::Fft,
    Opcode::RngBitGenerator,
    Opcode::Concatenate,
    Opcode::Pad,
    Opcode::Transpose,
    Opcode::Copy,
    Opcode::Iota,
    Opcode::TriangularSolve,
    Opcode::Cholesky,
];

/// How a computation of an optimized module is called.
#[derive(Clone, Debug, PartialEq)]
enum Role {
    /// Entry, loop bodies, branches, called computations: ops run with their own emitters.
    Plain,
    /// The fused computation of an ordinary fusion.
    Fused,
    /// The fused computation of a library fusion (`fusion_config.kind`).
    Library(String),
    /// A reducer or comparator (`to_apply`, `comparator`, ...): scalar code inlined into its
    /// caller's kernel; not counted.
    Scalar,
}

/// The `backend_config` of an instruction as JSON, when it is JSON.
fn backend_config(i: &hlo::Instruction) -> Option<serde_json::Value> {
    match i.attr("backend_config")? {
        Attr::Raw(s) | Attr::Str(s) => serde_json::from_str(s).ok(),
        _ => None,
    }
}

/// The library fusion kind named by a fusion's `backend_config` (`__ynn_fusion`).
fn custom_fusion_kind(cfg: &serde_json::Value) -> Option<String> {
    cfg.get("fusion_config")?
        .get("kind")?
        .as_str()
        .filter(|k| !k.is_empty())
        .map(str::to_string)
}

/// Whether a `backend_config` splits the op's outer dimension across threads.
fn partitioned(cfg: &serde_json::Value) -> bool {
    cfg.get("outer_dimension_partitions")
        .and_then(|v| v.as_array())
        .is_some_and(|a| !a.is_empty())
}

/// The categories of XLA's optimized text (one module per executable, one after the other,
/// as [`CoverageTable::add_text`] reads it): `None` when it holds no module, an error when
/// our parser cannot read one.
pub fn categories_of_modules(text: &str) -> Result<Option<BTreeSet<String>>, String> {
    let mut cats = BTreeSet::new();
    let mut any = false;
    for part in split_modules(text) {
        let m = hlo::parse::parse_module(part).map_err(|e| e.to_string())?;
        any = true;
        cats.extend(categories_of(&m));
    }
    Ok(any.then_some(cats))
}

/// The categories of XLA's optimized text, none when it cannot be read (the fuzzer's feedback:
/// an unreadable module reaches nothing it can count).
pub fn categories_of_text(text: &str) -> BTreeSet<String> {
    categories_of_modules(text)
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// The categories one optimized module reaches (see the module documentation).
pub fn categories_of(m: &Module) -> BTreeSet<String> {
    let mut roles = vec![Role::Plain; m.computations.len()];
    // Callers come after callees in text order, so walk callers first (reverse) to hand each
    // callee its caller's role.
    let mut assigned = vec![false; m.computations.len()];
    if m.entry < assigned.len() {
        assigned[m.entry] = true;
    }
    for ci in (0..m.computations.len()).rev() {
        let caller = roles[ci].clone();
        for i in &m.computations[ci].instructions {
            let cfg = backend_config(i);
            for (name, a) in &i.attrs {
                let callees: Vec<usize> = match a {
                    Attr::Comp(c) => vec![*c],
                    Attr::Comps(cs) => cs.clone(),
                    _ => continue,
                };
                let role = match (i.opcode, name.as_str()) {
                    (Opcode::Fusion, "calls") => match cfg.as_ref().and_then(custom_fusion_kind) {
                        Some(k) => Role::Library(k),
                        None => Role::Fused,
                    },
                    (
                        Opcode::While | Opcode::Conditional | Opcode::Call | Opcode::AsyncStart,
                        _,
                    ) => match caller {
                        Role::Plain => Role::Plain,
                        ref r => r.clone(),
                    },
                    _ => Role::Scalar,
                };
                for c in callees {
                    if c < roles.len() && !assigned[c] {
                        roles[c] = role.clone();
                        assigned[c] = true;
                    }
                }
            }
        }
    }
    let mut out = structural_categories(m);
    for (ci, comp) in m.computations.iter().enumerate() {
        let role = &roles[ci];
        let mut lib_has: BTreeSet<&'static str> = BTreeSet::new();
        for i in &comp.instructions {
            let cfg = backend_config(i);
            if let Some(c) = &cfg {
                if partitioned(c) {
                    out.insert("partitioned (outer_dimension_partitions)".to_string());
                }
            }
            match role {
                Role::Plain => {
                    if i.opcode == Opcode::Fusion {
                        if let Some(k) = i.ident("kind") {
                            out.insert(format!("fusion kind={k}"));
                        }
                        if let Some(k) = cfg.as_ref().and_then(custom_fusion_kind) {
                            out.insert(format!("custom fusion {k}"));
                        }
                    }
                    if i.opcode == Opcode::CustomCall {
                        if let Some(t) = i.string("custom_call_target") {
                            out.insert(format!("custom-call {t}"));
                        }
                    }
                    if STRUCTURAL.contains(&i.opcode) {
                        out.insert(format!("op {}", i.opcode.name()));
                    }
                    if ci == m.entry {
                        let n = i.shape.as_array().map_or(0, |a| {
                            a.dims
                                .iter()
                                .fold(1u64, |p, &d| p.saturating_mul(d.max(0) as u64))
                        });
                        if n >= 1 << 16 {
                            out.insert("array >= 2^16 elements".to_string());
                        }
                        if n >= 1 << 20 {
                            out.insert("array >= 2^20 elements".to_string());
                        }
                    }
                }
                Role::Fused => {
                    if STRUCTURAL.contains(&i.opcode) {
                        out.insert(format!("fused {}", i.opcode.name()));
                    }
                }
                Role::Library(_) => {
                    if matches!(
                        i.opcode,
                        Opcode::Dot | Opcode::Convolution | Opcode::Reduce | Opcode::ReduceWindow
                    ) {
                        lib_has.insert(i.opcode.name());
                    }
                }
                Role::Scalar => {
                    if matches!(i.opcode, Opcode::Call | Opcode::Conditional | Opcode::While) {
                        out.insert("control flow in reducer or comparator".to_string());
                    }
                }
            }
        }
        if let Role::Library(k) = role {
            if lib_has.is_empty() {
                out.insert(format!("{k} elementwise only"));
            }
            for op in lib_has {
                out.insert(format!("{k} with {op}"));
            }
        }
    }
    out
}

/// The module-wide structural categories (see the module documentation) but the reducer one,
/// which needs the computations' roles.
fn structural_categories(m: &Module) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (k, v) in &m.header_attrs {
        if k == "input_output_alias" && v.contains(':') {
            out.insert("aliased output".to_string());
        }
        if k == "entry_computation_layout" && non_default_layout_text(v) {
            out.insert("non-default entry layout".to_string());
        }
    }
    for comp in &m.computations {
        for i in &comp.instructions {
            if i.attr("sharding").is_some() {
                out.insert("sharding".to_string());
            }
            match i.opcode {
                Opcode::While => {
                    let known =
                        backend_config(i).is_some_and(|c| c.get("known_trip_count").is_some());
                    if !known {
                        out.insert("while without known trip count".to_string());
                    }
                }
                Opcode::Conditional
                    if i.comps("branch_computations").is_some_and(|b| b.len() >= 4) =>
                {
                    out.insert("conditional with 4+ branches".to_string());
                }
                _ => {}
            }
        }
    }
    out
}

/// Whether an `entry_computation_layout` text has a layout other than `{n-1,...,1,0}` (the
/// element-size and tiling items after `:` are not looked at).
fn non_default_layout_text(v: &str) -> bool {
    let mut rest = v;
    while let Some(open) = rest.find(']') {
        rest = &rest[open + 1..];
        let Some(body) = rest.strip_prefix('{') else {
            continue;
        };
        let end = body.find('}').unwrap_or(body.len());
        let dims = body[..end].split(':').next().unwrap_or("");
        let m2m: Vec<i64> = dims
            .split(',')
            .filter_map(|d| d.trim().parse().ok())
            .collect();
        if m2m.windows(2).any(|w| w[0] < w[1]) {
            return true;
        }
    }
    false
}

/// How many modules reach each category.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CoverageTable {
    /// Modules counted.
    pub modules: usize,
    /// Modules per category.
    pub counts: BTreeMap<String, usize>,
    /// Optimized modules our parser could not read (named with the error); not counted in
    /// `modules`.
    pub unreadable: Vec<String>,
}

impl CoverageTable {
    /// Counts one optimized module.
    pub fn add(&mut self, m: &Module) {
        self.modules += 1;
        for c in categories_of(m) {
            *self.counts.entry(c).or_insert(0) += 1;
        }
    }

    /// Counts one optimized module given as XLA's text; `what` names it when it cannot be read.
    /// XLA may print several modules (one per executable), one after the other: each
    /// `HloModule` header starts one, and the whole text counts as one module.
    pub fn add_text(&mut self, text: &str, what: &str) {
        match categories_of_modules(text) {
            Ok(Some(cats)) => {
                self.modules += 1;
                for c in cats {
                    *self.counts.entry(c).or_insert(0) += 1;
                }
            }
            Ok(None) => {}
            Err(e) => self.unreadable.push(format!("{what}: {e}")),
        }
    }

    /// The share of modules reaching `category`, in percent.
    pub fn percent(&self, category: &str) -> f64 {
        if self.modules == 0 {
            return 0.0;
        }
        100.0 * self.counts.get(category).copied().unwrap_or(0) as f64 / self.modules as f64
    }
}

/// The texts of the modules in XLA's printout of an executable's modules.
fn split_modules(text: &str) -> Vec<&str> {
    let mut starts: Vec<usize> = text
        .match_indices("HloModule ")
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || text.as_bytes()[i - 1] == b'\n')
        .collect();
    if starts.is_empty() {
        return vec![text];
    }
    starts.push(text.len());
    starts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

/// The reference set: the `*cpu_after_optimizations.txt` files of a dump directory (the real
/// jax programs of `corpora/jax/dump/`), one module each.
pub fn reference_table(dump_dir: &Path) -> std::io::Result<CoverageTable> {
    let mut files: Vec<_> = std::fs::read_dir(dump_dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("cpu_after_optimizations.txt"))
        })
        .collect();
    files.sort();
    let mut t = CoverageTable::default();
    for f in files {
        let text = std::fs::read_to_string(&f)?;
        t.add_text(&text, &f.display().to_string());
    }
    Ok(t)
}

/// The default reference directory: `<repo>/corpora/jax/dump`.
pub fn default_reference_dir() -> std::path::PathBuf {
    engine::worker::repo_root().join("corpora/jax/dump")
}

/// One row of a generated-vs-reference table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub category: String,
    pub generated_percent: f64,
    pub reference_percent: f64,
}

/// Every category either table reaches: the reference's first (most common first), then the
/// ones only generated modules reach.
pub fn compare(generated: &CoverageTable, reference: &CoverageTable) -> Vec<Row> {
    let mut cats: Vec<&String> = reference.counts.keys().collect();
    cats.sort_by(|a, b| {
        reference.counts[*b]
            .cmp(&reference.counts[*a])
            .then(a.cmp(b))
    });
    let mut rest: Vec<&String> = generated
        .counts
        .keys()
        .filter(|c| !reference.counts.contains_key(*c))
        .collect();
    rest.sort_by(|a, b| {
        generated.counts[*b]
            .cmp(&generated.counts[*a])
            .then(a.cmp(b))
    });
    cats.into_iter()
        .chain(rest)
        .map(|c| Row {
            category: c.clone(),
            generated_percent: generated.percent(c),
            reference_percent: reference.percent(c),
        })
        .collect()
}

/// What running generated programs on an XLA backend gave: the coverage of the programs XLA
/// compiled, and how many it did not (by outcome kind: rejected, crash, timeout, ...).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GeneratedCoverage {
    pub table: CoverageTable,
    pub not_compiled: BTreeMap<String, usize>,
    /// Programs whose run returned no optimized module although it succeeded.
    pub no_optimized_text: usize,
}

/// Runs the programs a `--pack 1` campaign with this seed and generator would test (module
/// indices `0..n`, `jobs` at a time) on `backend`, asking for the optimized module, and counts
/// what XLA made of them.
pub fn measure_generated(
    backend: &(dyn engine::backend::Backend + Sync),
    seed: u64,
    n: u64,
    base: &generators::Config,
    swarm: bool,
    jobs: usize,
) -> GeneratedCoverage {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;
    let opts = engine::backend::RunOptions {
        timeouts: crate::campaign::campaign_timeouts(),
        return_optimized_hlo: true,
        ..Default::default()
    };
    let next = AtomicU64::new(0);
    let out = Mutex::new(GeneratedCoverage::default());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let g = next.fetch_add(1, Ordering::Relaxed);
                if g >= n {
                    return;
                }
                let p = crate::campaign::programs_for(seed, g, 1, base, swarm).remove(0);
                let text = hlo::print::module_to_string(&p.module);
                let o = backend.run(&text, &p.inputs, &opts);
                let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
                match o.as_ok() {
                    Some(r) => match &r.optimized_hlo {
                        Some(t) => out.table.add_text(t, &format!("program seed {}", p.seed)),
                        None => out.no_optimized_text += 1,
                    },
                    None => *out.not_compiled.entry(o.kind().to_string()).or_insert(0) += 1,
                }
            });
        }
    });
    out.into_inner().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structural_categories_are_read_from_the_optimized_module() {
        let t = "HloModule a, input_output_alias={ {0}: (0, {}, may-alias) }, entry_computation_layout={(f32[4,3]{0,1}, s32[])->(f32[4,3]{1,0})}\n\nENTRY e {\n  p = f32[4,3]{0,1} parameter(0), sharding={replicated}\n  q = s32[] parameter(1)\n  ROOT t = (f32[4,3]{1,0}) tuple(p)\n}\n";
        let m = hlo::parse::parse_module(t).unwrap();
        let c = categories_of(&m);
        for want in ["aliased output", "non-default entry layout", "sharding"] {
            assert!(c.contains(want), "{want}: {c:?}");
        }
        assert!(!non_default_layout_text(
            "{(f32[4,3]{1,0}, s4[2]{0:E(4)})->f32[]}"
        ));
        assert!(non_default_layout_text(
            "{()->(f32[2]{0}, f32[2,3,4]{1,2,0})}"
        ));
    }

    #[test]
    fn split_keeps_single_module_whole() {
        let t = "HloModule a\n\nENTRY e { ROOT c = f32[] constant(0) }\n";
        assert_eq!(split_modules(t), vec![t]);
        let two = format!("{t}{}", t.replace("HloModule a", "HloModule b"));
        assert_eq!(split_modules(&two).len(), 2);
    }
}

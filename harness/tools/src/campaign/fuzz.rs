//! The libFuzzer entry (`cargo fuzz run hlo_diff`).
//!
//! Every finding is stored; what the registry or the store already knows is counted and the
//! run goes on, and only a NEW one is returned as such ([`Finding::known`] `None`: the target
//! aborts on it, so libFuzzer keeps the input). A finding is known when another finding of the
//! store has its provisional signature (the op of the first wrong output, its type and symptom;
//! a failure's message: [`super::bugs::provisional_key`]), or else, once it is minimized and
//! bucketed, when the registry claims its bucket or a finding of the store is in it. Each input
//! also tells what XLA made of the module ([`Fuzzed::xla_features`]: the categories of its
//! optimized module, as `hlo-diff coverage --xla` counts them), which the target feeds to
//! libFuzzer as extra counters ([`feature_index`]), so the corpus grows toward new XLA
//! behaviour.

use super::*;
use engine::engines::Engines;
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use findings::bucket::MinimizedRecord;
use findings::registry::Registry;
use findings::store::{FindingRecord, Recorded, Store};
use judge::classify::Verdict;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

struct FuzzGlobals {
    engines: Engines,
    store: Store,
    generator: generators::Config,
    /// Where the fuzzer runs: every finding's `meta.environment`.
    environment: serde_json::Value,
    registry: Registry,
    /// The backend findings are minimized on (its own workers; a crash forks per candidate).
    minimizer: Arc<WorkerBackend>,
    /// What knows each provisional signature seen (of the store's findings, then this run's).
    known: Mutex<HashMap<String, Known>>,
    known_findings: AtomicU64,
    new_findings: AtomicU64,
}

/// Who knows a provisional signature.
#[derive(Clone, Debug)]
enum Known {
    /// A finding of the store, by directory name, minimized into a bucket claimed by the
    /// registry entry (when one does).
    Store {
        finding: String,
        entry: Option<String>,
    },
    /// A NEW bucket of this run (the run went on: the target stopped on it, or does not stop).
    New { finding: String },
}

fn fuzz_globals() -> &'static FuzzGlobals {
    static G: OnceLock<FuzzGlobals> = OnceLock::new();
    G.get_or_init(|| {
        let out = std::env::var_os("HLO_DIFF_FUZZ_OUT")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("fuzz/findings"));
        let engines = match Engines::new(&["interp".into(), "xla-cpu".into()], 1, None, true) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("hlo_diff: {e}");
                std::process::exit(3);
            }
        };
        let xla_info = match engines.check_available() {
            Ok(i) => i,
            Err(e) => {
                eprintln!("hlo_diff: XLA is not available: {e}");
                std::process::exit(3);
            }
        };
        let environment = engine::environment::Environment::capture(
            &engine::worker::default_python(),
            engine::environment::hello_of(&xla_info),
            &[],
        )
        .to_json();
        let store = match Store::open(&out) {
            Ok(s) => s,
            Err(e) => {
                eprintln!(
                    "hlo_diff: cannot open the findings store {}: {e}",
                    out.display()
                );
                std::process::exit(3);
            }
        };
        let registry = match Registry::load_or_default(None) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("hlo_diff: the known-bug registry: {e}");
                std::process::exit(2);
            }
        };
        let known = store_knows(&store, &registry);
        eprintln!(
            "hlo_diff: findings store {} ({} provisional signatures known), registry of {} entries",
            out.display(),
            known.len(),
            registry.entries.len()
        );
        FuzzGlobals {
            engines,
            store,
            generator: generators::Config::default(),
            environment,
            registry,
            minimizer: Arc::new(WorkerBackend::xla_cpu(
                WorkerConfig::new(Platform::Cpu).with_workers(1),
            )),
            known: Mutex::new(known),
            known_findings: AtomicU64::new(0),
            new_findings: AtomicU64::new(0),
        }
    })
}

/// The provisional signatures of the store's findings with a bucket, and who knows them.
fn store_knows(store: &Store, registry: &Registry) -> HashMap<String, Known> {
    let mut known = HashMap::new();
    for (dir, f) in store.findings().unwrap_or_default() {
        let Some(m) = MinimizedRecord::read(&dir).filter(|m| m.status != "failed") else {
            continue;
        };
        known
            .entry(super::bugs::provisional_key(&dir, &f))
            .or_insert(Known::Store {
                finding: dir_name(&dir),
                entry: registry.lookup(&m.bucket).map(|e| e.id.clone()),
            });
    }
    known
}

fn dir_name(d: &Path) -> String {
    d.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// A finding of [`fuzz_one`].
#[derive(Clone, Debug)]
pub struct Finding {
    pub verdict: Verdict,
    pub dir: Option<PathBuf>,
    /// What already knows it (a registry entry, a finding of the store, a NEW bucket seen
    /// earlier in this run); `None`: NEW.
    pub known: Option<String>,
}

/// What one fuzz input came to: the finding, if any, and what XLA made of the module.
#[derive(Clone, Debug, Default)]
pub struct Fuzzed {
    pub finding: Option<Finding>,
    /// The categories of XLA's optimized module ([`crate::xla_coverage::categories_of`]).
    pub xla_features: BTreeSet<String>,
}

/// The extra counter (of `n`) that stands for XLA feature `category`: a stable hash (FNV-1a),
/// so the same category counts in the same counter in every run.
pub fn feature_index(category: &str, n: usize) -> usize {
    let h = category.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    });
    (h % n.max(1) as u64) as usize
}

/// One fuzz input: bytes -> module (synthesized, or a real module mutated: see
/// `generators::mutate`) and inputs -> interp vs xla-cpu -> verdict. A finding is
/// written to the store (`HLO_DIFF_FUZZ_OUT`, default `fuzz/findings`) and returned, with what
/// knows it.
pub fn fuzz_one(data: &[u8]) -> Option<Finding> {
    fuzz_one_with_feedback(data).finding
}

/// [`fuzz_one`], also telling what XLA made of the module (libFuzzer's extra counters).
pub fn fuzz_one_with_feedback(data: &[u8]) -> Fuzzed {
    let g = fuzz_globals();
    let Some(tester_input) = fuzz_input(g, data) else {
        return Fuzzed::default();
    };
    let tester = Tester {
        campaign_seed: tester_input.seed,
        environment: Some(g.environment.clone()),
        xla_features: Some(Mutex::new(Vec::new())),
        ..Tester::new(&g.engines, Some(&g.store), &[], campaign_timeouts())
    };
    let reports = tester.test_programs(0, &[tester_input]);
    // A finding that could not be stored, or XLA gone: nothing after this can be trusted.
    if let Some(f) = tester.take_fault() {
        eprintln!("hlo_diff: stopping: {f:?}");
        std::process::exit(3);
    }
    let xla_features = tester
        .xla_features
        .map(|f| f.into_inner().unwrap_or_else(|e| e.into_inner()))
        .unwrap_or_default()
        .into_iter()
        .collect();
    let finding = reports.into_iter().find(|r| r.verdict.is_bug()).map(|r| {
        let known = r.recorded.as_ref().and_then(|rec| who_knows(g, rec));
        let counter = match known {
            Some(_) => &g.known_findings,
            None => &g.new_findings,
        };
        counter.fetch_add(1, Ordering::SeqCst);
        eprintln!(
            "hlo_diff: {} finding ({}): {} known, {} new so far",
            if known.is_some() { "known" } else { "NEW" },
            known
                .as_deref()
                .unwrap_or("no registry entry or stored finding knows it"),
            g.known_findings.load(Ordering::SeqCst),
            g.new_findings.load(Ordering::SeqCst)
        );
        Finding {
            dir: r.recorded.map(|r| r.dir().to_path_buf()),
            verdict: r.verdict,
            known,
        }
    });
    Fuzzed {
        finding,
        xla_features,
    }
}

/// What knows the finding just recorded: the store (its provisional signature, or the finding
/// itself from earlier inputs), else, once minimized and bucketed, the registry or a stored
/// finding of its bucket; `None` when NEW. A finding that cannot be read back is NEW.
fn who_knows(g: &FuzzGlobals, rec: &Recorded) -> Option<String> {
    let dir = rec.dir();
    let f: FindingRecord =
        serde_json::from_slice(&std::fs::read(dir.join("finding.json")).ok()?).ok()?;
    let key = super::bugs::provisional_key(dir, &f);
    let earlier = g
        .known
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .cloned();
    if let Some(k) = earlier {
        return Some(match k {
            Known::Store {
                finding,
                entry: Some(id),
            } => format!("registry entry {id}, as stored finding {finding}"),
            Known::Store { finding, .. } => format!("stored finding {finding}"),
            Known::New { finding } => format!("NEW earlier in this run as {finding}"),
        });
    }
    if matches!(rec, Recorded::Folded { .. } | Recorded::AlreadyKnown(_)) {
        return Some(format!("stored finding {}", dir_name(dir)));
    }
    // The first of its provisional signature: its bucket decides.
    let m = super::bugs::minimize_stored(dir, &g.minimizer, &MinimizeConfig::default())?;
    let _ = m.write(dir);
    let entry = g.registry.lookup(&m.bucket).map(|e| e.id.clone());
    let same_bucket = g.store.findings().ok().and_then(|all| {
        all.into_iter()
            .filter(|(d, _)| d != dir)
            .find(|(d, _)| MinimizedRecord::read(d).is_some_and(|o| o.bucket_id == m.bucket_id))
            .map(|(d, _)| dir_name(&d))
    });
    let name = dir_name(dir);
    let (known, answer) = match (&entry, same_bucket) {
        (Some(id), _) => (
            Known::Store {
                finding: name.clone(),
                entry: Some(id.clone()),
            },
            Some(format!("registry entry {id}")),
        ),
        (None, Some(other)) => (
            Known::Store {
                finding: other.clone(),
                entry: None,
            },
            Some(format!("stored finding {other}, bucket {}", m.bucket_id)),
        ),
        (None, None) => (Known::New { finding: name }, None),
    };
    g.known
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, known);
    answer
}

/// The program the bytes make, with its inputs; `None` when they make none.
fn fuzz_input(g: &FuzzGlobals, data: &[u8]) -> Option<Program> {
    // The first byte picks mutation of a real module at the configuration's
    // `mutation_percent` (it is read, not consumed, so a synthesized program is what these
    // bytes always made).
    let pct = g.generator.mutation_percent;
    let mutate = data.first().is_some_and(|&b| (b as u32 * 100) >> 8 < pct);
    let (module, origin, mut u) = match mutate {
        true => {
            let mut u = arbitrary::Unstructured::new(&data[1..]);
            let (m, o) = generators::mutate::mutate(&mut u, &g.generator)?;
            (m, Some(o), u)
        }
        false => {
            let mut u = arbitrary::Unstructured::new(data);
            (generators::generate(&mut u, &g.generator).ok()?, None, u)
        }
    };
    let inputs = generators::generate_inputs(&module, &mut u, &g.generator);
    let seed = data.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100000001b3)
    });
    Some(Program {
        seed,
        module,
        inputs,
        config: g.generator.clone(),
        origin,
    })
}

#[cfg(test)]
mod tests {
    use super::feature_index;

    #[test]
    fn a_category_has_one_counter_in_every_run() {
        let n = 4096;
        let a = feature_index("fusion kind kLoop", n);
        assert_eq!(a, feature_index("fusion kind kLoop", n));
        assert!(a < n);
        assert_ne!(a, feature_index("fusion kind kOutput", n));
        assert_eq!(feature_index("anything", 1), 0);
    }
}

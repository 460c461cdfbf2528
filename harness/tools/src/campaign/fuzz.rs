//! The libFuzzer entry (`cargo fuzz run hlo_diff`).

use super::*;
use engine::engines::Engines;
use findings::store::Store;
use judge::classify::Verdict;
use std::path::PathBuf;
use std::sync::OnceLock;

struct FuzzGlobals {
    engines: Engines,
    store: Store,
    generator: generators::Config,
    /// Where the fuzzer runs: every finding's `meta.environment`.
    environment: serde_json::Value,
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
        FuzzGlobals {
            engines,
            store,
            generator: generators::Config::default(),
            environment,
        }
    })
}

/// A finding of [`fuzz_one`].
#[derive(Clone, Debug)]
pub struct Finding {
    pub verdict: Verdict,
    pub dir: Option<PathBuf>,
}

/// One fuzz input: bytes -> module (synthesized, or a real module mutated: see
/// `generators::mutate`) and inputs -> interp vs xla-cpu -> verdict. A finding is
/// written to the store (`HLO_DIFF_FUZZ_OUT`, default `fuzz/findings`) and returned.
pub fn fuzz_one(data: &[u8]) -> Option<Finding> {
    let g = fuzz_globals();
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
    let tester = Tester {
        campaign_seed: seed,
        environment: Some(g.environment.clone()),
        ..Tester::new(&g.engines, Some(&g.store), &[], campaign_timeouts())
    };
    let reports = tester.test_programs(
        0,
        &[Program {
            seed,
            module,
            inputs,
            config: g.generator.clone(),
            origin,
        }],
    );
    // A finding that could not be stored, or XLA gone: nothing after this can be trusted.
    if let Some(f) = tester.take_fault() {
        eprintln!("hlo_diff: stopping: {f:?}");
        std::process::exit(3);
    }
    let r = reports.into_iter().find(|r| r.verdict.is_bug())?;
    Some(Finding {
        dir: r.recorded.map(|r| r.dir().to_path_buf()),
        verdict: r.verdict,
    })
}

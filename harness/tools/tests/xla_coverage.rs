//! The coverage categories read from real `after_optimizations` modules that XLA CPU (jaxlib
//! 0.10.2) wrote for the jax programs of `corpora/jax/dump/` (made by `corpora/gen_corpus.py`).

use std::path::{Path, PathBuf};
use tools::xla_coverage::{categories_of, compare, reference_table, CoverageTable};

fn dump_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/jax/dump")
}

fn cats(program: &str) -> Vec<String> {
    let dir = dump_dir();
    let f = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.contains(&format!(".jit_{program}.")) && n.ends_with("cpu_after_optimizations.txt")
        })
        .unwrap_or_else(|| panic!("no optimized module of {program} in {}", dir.display()));
    let m = hlo::parse::parse_module(&std::fs::read_to_string(&f).unwrap()).unwrap();
    categories_of(&m).into_iter().collect()
}

#[test]
fn a_tall_matmul_goes_to_the_library_and_a_small_one_stays_a_dot() {
    let c = cats("matmul_tall");
    for want in [
        "fusion kind=kCustom",
        "custom fusion __ynn_fusion",
        "__ynn_fusion with dot",
        "op dot",
    ] {
        assert!(c.contains(&want.to_string()), "{want} missing from {c:?}");
    }
    assert!(!c.iter().any(|x| x == "fused dot"), "{c:?}");
}

#[test]
fn sorts_loops_and_library_calls_are_named() {
    assert!(cats("sort_argsort").contains(&"op sort".to_string()));
    assert!(cats("fori_loop_power_iteration").contains(&"op while".to_string()));
    assert!(cats("cholesky_solve").contains(&"custom-call lapack_spotrf_ffi".to_string()));
    assert!(cats("top_k").contains(&"custom-call TopK".to_string()));
    // A pooling layer of the CNN goes to the library as a reduce-window.
    assert!(cats("cnn_train_step").contains(&"__ynn_fusion with reduce-window".to_string()));
    let e = cats("transcendental_math");
    assert!(e.contains(&"fusion kind=kLoop".to_string()), "{e:?}");
    assert!(!e.iter().any(|x| x.contains("ynn")), "{e:?}");
}

#[test]
fn the_reference_set_is_read_whole() {
    let t = reference_table(&dump_dir()).unwrap();
    assert!(t.unreadable.is_empty(), "{:?}", t.unreadable);
    assert_eq!(t.modules, 61);
    // Every program has at least one kernel: a fusion or an op of its own.
    assert!(t.percent("fusion kind=kLoop") > 50.0, "{:?}", t.counts);
    assert!(
        t.counts["custom fusion __ynn_fusion"] >= 5,
        "{:?}",
        t.counts
    );
    let rows = compare(&CoverageTable::default(), &t);
    assert_eq!(rows.len(), t.counts.len());
    assert!(rows.iter().all(|r| r.generated_percent == 0.0));
    // Most common first.
    assert!(rows
        .windows(2)
        .all(|w| w[0].reference_percent >= w[1].reference_percent));
}

#[test]
fn unreadable_text_is_reported_not_counted() {
    let mut t = CoverageTable::default();
    t.add_text(
        "HloModule broken\n\nENTRY e {\n  ROOT x = f32[] nonsense(\n}\n",
        "broken",
    );
    assert_eq!(t.modules, 0);
    assert_eq!(t.unreadable.len(), 1);
    assert!(
        t.unreadable[0].starts_with("broken: "),
        "{:?}",
        t.unreadable
    );
}

/// What XLA CPU makes of a module, asked of XLA itself: a tall f32 matmul goes to the library
/// fusion, and generated programs (a `--pack 1` campaign's) are all compiled and counted.
#[test]
fn xla_cpu_output_is_counted() {
    if !test_support::need_xla() {
        return;
    }
    use engine::backend::{Backend, RunOptions};
    use engine::worker::{Platform, WorkerBackend, WorkerConfig};
    let b = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1));
    let text = "HloModule tall\n\nENTRY main {\n  a = f32[8192,32] parameter(0)\n  b = f32[32,32] parameter(1)\n  ROOT d = f32[8192,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let m = hlo::parse::parse_module(text).unwrap();
    let inputs = generators::generate_inputs_from_seed(&m, 1, &generators::Config::default());
    let o = b.run(
        text,
        &inputs,
        &RunOptions {
            return_optimized_hlo: true,
            ..RunOptions::default()
        },
    );
    let optimized = o
        .as_ok()
        .and_then(|r| r.optimized_hlo.clone())
        .unwrap_or_else(|| panic!("{o:?}"));
    let mut t = CoverageTable::default();
    t.add_text(&optimized, "tall");
    assert!(t.unreadable.is_empty(), "{:?}", t.unreadable);
    assert_eq!(t.modules, 1);
    // jaxlib 0.10.2 moves this dot into a YNNPACK fusion (XLA-FACTS.md); another jaxlib may not.
    assert_eq!(
        t.counts.get("custom fusion __ynn_fusion"),
        Some(&1),
        "{optimized}"
    );

    let cfg = generators::Config {
        realistic_percent: 100,
        ..generators::Config::default()
    };
    let g = tools::xla_coverage::measure_generated(&b, 3, 6, &cfg, false, 1);
    assert_eq!(
        g.table.modules + g.not_compiled.values().sum::<usize>() + g.no_optimized_text,
        6,
        "{g:?}"
    );
    assert!(g.table.unreadable.is_empty(), "{:?}", g.table.unreadable);
    assert!(g.table.modules >= 4, "{g:?}");
}

//! XLA CPU's oneDNN library calls, on a jaxlib release that emits them (0.4.30: its CPU
//! pipeline rewrites dots with their bias/activation epilogues into `__onednn$matmul` and
//! softmax into `__onednn$softmax`). The bisector must evaluate every per-pass snapshot after
//! the rewrite: before the oracle knew these calls it skipped them, and could only say "not
//! established".
//!
//! Needs the project's Python (for the oracle's side nothing else) and jax/jaxlib 0.4.30 in the
//! venv cache (`$HLO_DIFF_VENV_CACHE`, else `~/.cache/hlo-diff/venvs`), which the releases test
//! installs too: the first run installs it from pip (20-40 s), later runs reuse it.

mod common;

use engine::backend::Backend;
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use std::path::{Path, PathBuf};
use std::process::Command;
use tools::bisect::{bisect, BisectOptions};
use tools::releases::{default_cache_dir, Release, VenvCache};

/// The Python of jaxlib `release` (installed into the cache on first use).
fn python_of(release: &str) -> PathBuf {
    let cache = VenvCache::new(default_cache_dir(), test_support::python());
    let v = cache
        .python_for(&Release::parse(release).unwrap(), None, &|l| {
            eprintln!("{l}")
        })
        .unwrap_or_else(|e| panic!("jax/jaxlib {release} installs into the venv cache: {e}"));
    PathBuf::from(v.python)
}

/// Inputs of plain values (no NaN or infinities, which would make every result NaN).
fn plain_inputs(module: &hlo::Module) -> Vec<hlo::Literal> {
    let cfg = generators::Config {
        special_value_percent: 0,
        ..generators::Config::default()
    };
    generators::generate_inputs_from_seed(module, 0, &cfg)
}

/// jax programs whose optimized HLO on 0.4.30 holds oneDNN calls: dense layers with each
/// epilogue the rewriter fuses, a batched matmul, attention (scaled QKᵀ, softmax, ·V).
const PROGRAMS: &str = r#"
import jax, jax.numpy as jnp
f = jnp.ones((512, 256), jnp.float32)
w = jnp.ones((256, 128), jnp.float32)
b = jnp.ones((128,), jnp.float32)
full = jnp.ones((512, 128), jnp.float32)
def dense_gelu(x, w, b): return jax.nn.gelu(x @ w + b)
def dense_gelu_erf(x, w, b): return jax.nn.gelu(x @ w + b, approximate=False)
def dense_relu(x, w, b): return jax.nn.relu(x @ w + b)
def dense_sigmoid(x, w, b): return jax.nn.sigmoid(x @ w + b)
def matmul_tanh(x, w): return jnp.tanh(x @ w)
def matmul_add(x, w, y): return x @ w + y
def matmul_scaled(x, w): return (x @ w) * 0.25
def batched(x, y): return jnp.einsum("bij,bjk->bik", x, y)
def attention(q, k, v): return jax.nn.softmax(q @ k.T / 8.0, axis=-1) @ v
for fn, args in [
    (dense_gelu, (f, w, b)), (dense_gelu_erf, (f, w, b)), (dense_relu, (f, w, b)),
    (dense_sigmoid, (f, w, b)), (matmul_tanh, (f, w)), (matmul_add, (f, w, full)),
    (matmul_scaled, (f, w)), (batched, (jnp.ones((4, 128, 96)), jnp.ones((4, 96, 64)))),
    (attention, (jnp.ones((512, 64)), jnp.ones((512, 64)), jnp.ones((512, 64)))),
]:
    jax.jit(fn).lower(*args).compile()
"#;

/// The functions of [`PROGRAMS`] (jax also compiles helpers for `jnp.ones`).
const NAMES: [&str; 9] = [
    "dense_gelu",
    "dense_gelu_erf",
    "dense_relu",
    "dense_sigmoid",
    "matmul_tanh",
    "matmul_add",
    "matmul_scaled",
    "batched",
    "attention",
];

/// Compiles [`PROGRAMS`] with `python`, dumping into `dir`; returns the before_optimizations
/// files of [`NAMES`], sorted.
fn dump_programs(python: &Path, dir: &Path) -> Vec<PathBuf> {
    let dump = dump_script(python, dir, PROGRAMS, "");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dump)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            NAMES
                .iter()
                .any(|f| n.ends_with(&format!(".jit_{f}.before_optimizations.txt")))
        })
        .collect();
    files.sort();
    files
}

/// Runs `script` with `python`, XLA dumping into `dir/dump` (with `flags` besides); returns
/// the dump directory.
fn dump_script(python: &Path, dir: &Path, script: &str, flags: &str) -> PathBuf {
    let file = dir.join("programs.py");
    std::fs::write(&file, script).unwrap();
    let dump = dir.join("dump");
    let out = Command::new(python)
        .arg(&file)
        .env("JAX_PLATFORMS", "cpu")
        .env(
            "XLA_FLAGS",
            format!("--xla_dump_to={} {flags}", dump.display()),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dump
}

/// Where the set proves XLA's result on `module` wrong, XLA is within one f32 ulp of 1 of the
/// oracle, absolutely (relatively above 1): a sign of zero, a flushed tiny result, 1 - 2^-24
/// for 1. With every element that close given the oracle's value, the judge finds no bug.
fn assert_differs_by_less_than_an_ulp_of_one(
    xla: &WorkerBackend,
    text: &str,
    module: &hlo::Module,
    inputs: &[hlo::Literal],
) {
    let oracle = engine::interp_backend::InterpBackend::new().run_module(module, inputs);
    let got = xla.run(text, inputs, &engine::backend::RunOptions::default());
    let (engine::backend::Outcome::Ok(o), engine::backend::Outcome::Ok(mut x)) =
        (oracle.clone(), got.clone())
    else {
        panic!("{}: {oracle:?} {got:?}", module.name);
    };
    let judge = |xla: engine::backend::Outcome| {
        let outcomes = vec![
            (engine::ORACLE.to_string(), oracle.clone()),
            ("xla-cpu".to_string(), xla),
        ];
        judge::Judge::offline()
            .judge(&judge::Trial {
                module,
                text: Some(text),
                inputs,
                outcomes: &outcomes,
                reruns: &[],
                tolerance: &judge::compare::Tolerance::for_module(module),
            })
            .verdict
    };
    assert!(
        judge(got.clone()).is_bug(),
        "{}: no longer differs",
        module.name
    );
    let mut replaced = 0;
    for (lo, lx) in o.outputs.iter().zip(x.outputs.iter_mut()) {
        let (hlo::Literal::Array(a), hlo::Literal::Array(b)) = (lo, lx) else {
            panic!("{}: a tuple output", module.name)
        };
        for k in 0..a.len() {
            let (p, q) = (a.get(k).to_f64(), b.get(k).to_f64());
            let close = (p - q).abs() <= f32::EPSILON as f64 * p.abs().max(1.0);
            if close && p.to_bits() != q.to_bits() {
                b.set(k, a.get(k));
                replaced += 1;
            }
        }
    }
    assert!(replaced > 0, "{}", module.name);
    let v = judge(engine::backend::Outcome::Ok(x));
    assert!(
        !v.is_bug(),
        "{}: {replaced} close elements given the oracle's values: {v:?}",
        module.name
    );
}

/// Every snapshot after `onednn-matmul-rewriter` is evaluated and
/// agrees with before_optimizations; XLA agrees and nothing is blamed (but for oneDNN's GELU_ERF
/// and SIGMOID, whose differences of less than an ulp of 1 are checked to be the only ones). The snapshots must really
/// hold the calls with the post-ops named here, so the test cannot pass by the rewriter not
/// running.
#[test]
fn every_snapshot_with_onednn_calls_is_evaluated() {
    if !test_support::need_xla() {
        return;
    }
    let python = python_of("0.4.30");
    let tmp = tempfile::tempdir().unwrap();
    let files = dump_programs(&python, tmp.path());
    assert_eq!(files.len(), 9, "one module per program: {files:?}");
    let xla = WorkerBackend::xla_cpu(
        WorkerConfig::new(Platform::Cpu)
            .with_workers(1)
            .with_python(Some(python)),
    );
    let mut seen = String::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let module = hlo::parse::parse_module(&text).unwrap();
        let inputs = plain_inputs(&module);
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let opts = BisectOptions {
            dump_dir: Some(tmp.path().join(format!("bisect-{name}"))),
            ..BisectOptions::default()
        };
        let r = bisect(&text, &inputs, &xla, &opts).unwrap();
        if r.xla_matches_oracle {
            assert!(r.culprit.is_none(), "{name}: {}", r.render());
        } else {
            // Measured on jaxlib 0.4.30 (2026-12-07, AMD EPYC with AVX2): the activations
            // oneDNN computes in place of the module's own differ by less than an ulp of 1.
            // GELU_ERF gives +0 where the module's x * (erf(x / sqrt 2) + 1) / 2 is -0 (erf
            // saturates at -1 and a negative times +0 is -0, IEEE 754 §6.3); SIGMOID gives 0
            // where 1 / (1 + exp(-x)) is a normal value near 2e-38, and 1 - 2^-24 where it
            // rounds to 1. XLA's differences, proven by the set; they must be those alone.
            assert!(
                name.contains("dense_gelu_erf") || name.contains("dense_sigmoid"),
                "{name}: {}",
                r.render()
            );
            assert!(
                r.culprit
                    .as_ref()
                    .is_none_or(|c| c.pass == "onednn-matmul-rewriter"),
                "{name}: {}",
                r.render()
            );
            assert_differs_by_less_than_an_ulp_of_one(&xla, &text, &module, &inputs);
        }
        assert_eq!(
            r.skipped,
            0,
            "{name}: a snapshot was skipped: {}",
            r.render()
        );
        assert!(r.evaluated > 0, "{name}: {}", r.render());
        for s in &r.steps {
            let p = Path::new(&s.path);
            let p = match p.is_absolute() {
                true => p.to_path_buf(),
                false => opts.dump_dir.as_ref().unwrap().join(p),
            };
            let snap = std::fs::read_to_string(&p).unwrap_or_default();
            if snap.contains("__onednn$") {
                if r.xla_matches_oracle {
                    assert_eq!(s.status, "same", "{name} step {}: {:?}", s.step, s.note);
                } else {
                    // The walk stops at the first snapshot that differs: later ones are not
                    // evaluated (none skipped, asserted above).
                    assert!(
                        ["same", "differs", "not_evaluated"].contains(&s.status.as_str()),
                        "{name} step {}: {} {:?}",
                        s.step,
                        s.status,
                        s.note
                    );
                }
                seen.push_str(&snap);
            }
        }
    }
    for needle in [
        "__onednn$matmul",
        "\"BIAS\"",
        "\"GELU_TANH\"",
        "\"GELU_ERF\"",
        "\"RELU\"",
        "\"SIGMOID\"",
        "\"TANH\"",
        "\"BINARY_ADD\"",
        "\"LINEAR\"",
        "\"transpose_b\":true",
    ] {
        assert!(
            seen.contains(needle),
            "no evaluated snapshot holds {needle}: the programs no longer reach it; \
             the configs seen: {:?}",
            seen.lines()
                .filter_map(|l| Some(&l[l.find("onednn_matmul_config")?..]))
                .collect::<std::collections::BTreeSet<_>>()
        );
    }
}

/// Library calls as XLA compiled them for jax programs: softmax alone (0.4.30) and convolutions
/// (0.5.0 with `xla_cpu_use_thunk_runtime=false`: NHWC padded, NCHW, strided and dilated,
/// grouped). The oracle evaluates the optimized module that holds the calls, and must agree
/// with XLA's result.
#[test]
fn library_calls_evaluate_as_xla_runs_them() {
    if !test_support::need_xla() {
        return;
    }
    let softmax = r#"
import jax, jax.numpy as jnp
jax.jit(lambda x: jax.nn.softmax(x, axis=-1)).lower(jnp.ones((16, 8, 128))).compile()
jax.jit(lambda x: jax.nn.softmax(x, axis=1)).lower(jnp.ones((16, 64))).compile()
"#;
    let convolutions = r#"
import jax, jax.numpy as jnp
from jax import lax
nhwc = ("NHWC", "HWIO", "NHWC")
x, w = jnp.ones((2, 12, 12, 8)), jnp.ones((3, 3, 8, 16))
jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc)).lower(x, w).compile()
jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (2, 2), ((1, 0), (2, 1)), rhs_dilation=(2, 1), dimension_numbers=nhwc)).lower(x, w).compile()
jax.jit(lambda x, w: lax.conv(x, w, (1, 1), "VALID")).lower(jnp.ones((2, 8, 12, 12)), jnp.ones((16, 8, 3, 3))).compile()
jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc, feature_group_count=2)).lower(x, jnp.ones((3, 3, 4, 16))).compile()
"#;
    let cases = [
        ("0.4.30", softmax, "", "__onednn$softmax", 2),
        (
            "0.5.0",
            convolutions,
            "--xla_cpu_use_thunk_runtime=false",
            "__onednn$convolution",
            4,
        ),
    ];
    for (release, script, flags, target, want) in cases {
        let python = python_of(release);
        let tmp = tempfile::tempdir().unwrap();
        let dump = dump_script(&python, tmp.path(), script, flags);
        let mut run = engine::backend::RunOptions::default();
        if let Some((k, v)) = flags.trim_start_matches("--").split_once('=') {
            run.env_option_overrides
                .push((k.to_string(), v.to_string()));
        }
        let xla = WorkerBackend::xla_cpu(
            WorkerConfig::new(Platform::Cpu)
                .with_workers(1)
                .with_python(Some(python)),
        );
        let oracle = engine::interp_backend::InterpBackend::new();
        let mut checked = 0;
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dump)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".before_optimizations.txt"))
            .collect();
        files.sort();
        for before in files {
            // What XLA ran: the optimized module of its compile of before_optimizations when
            // that holds the call; else jax's own optimized module (the worker's round trip
            // through MLIR can hide a pattern from the rewriter), which XLA then runs as is.
            let text = std::fs::read_to_string(&before).unwrap();
            let module = hlo::parse::parse_module(&text).unwrap();
            let inputs = plain_inputs(&module);
            let with_optimized = engine::backend::RunOptions {
                return_optimized_hlo: true,
                ..run.clone()
            };
            let (optimized, outcome) = match xla.run(&text, &inputs, &with_optimized) {
                engine::backend::Outcome::Ok(r)
                    if r.optimized_hlo
                        .as_deref()
                        .is_some_and(|o| o.contains(target)) =>
                {
                    let o = r.optimized_hlo.clone().unwrap();
                    (o, engine::backend::Outcome::Ok(r))
                }
                _ => {
                    let after = PathBuf::from(
                        before
                            .to_string_lossy()
                            .replace(".before_optimizations.txt", ".cpu_after_optimizations.txt"),
                    );
                    let a = std::fs::read_to_string(&after).unwrap_or_default();
                    if !a.contains(target) {
                        continue;
                    }
                    let o = xla.run(&a, &inputs, &run);
                    (a, o)
                }
            };
            let m = hlo::parse::parse_module(&optimized).unwrap();
            let outcomes = vec![
                (engine::ORACLE.to_string(), oracle.run_module(&m, &inputs)),
                ("xla-cpu".to_string(), outcome),
            ];
            let v = judge::Judge::offline()
                .judge(&judge::Trial {
                    module: &m,
                    text: Some(&optimized),
                    inputs: &inputs,
                    outcomes: &outcomes,
                    reruns: &[],
                    tolerance: &judge::compare::Tolerance::default(),
                })
                .verdict;
            // The semantics table does not bound oneDNN's calls, so the set cannot prove a
            // match (unproven at most); the oracle's evaluation of them must still be XLA's
            // result within 1e-4 of the output's largest magnitude, element by element (a
            // cancelling sum's element moves with the summation order by that much; a wrong
            // layout, window or group moves elements by the output's scale).
            assert!(
                !v.is_bug(),
                "{} on jaxlib {release}: {}\n{optimized}",
                before.display(),
                v.message
            );
            if let (engine::backend::Outcome::Ok(o), engine::backend::Outcome::Ok(x)) =
                (&outcomes[0].1, &outcomes[1].1)
            {
                for (lo, lx) in o.outputs.iter().zip(&x.outputs) {
                    for (a, b) in lo.leaves().iter().zip(lx.leaves()) {
                        let scale = (0..b.len())
                            .map(|k| b.get(k).to_f64().abs())
                            .fold(1.0f64, f64::max);
                        for k in 0..a.len() {
                            let (p, q) = (a.get(k).to_f64(), b.get(k).to_f64());
                            assert!(
                                (p - q).abs() <= 1e-4 * scale,
                                "{} on jaxlib {release}: element {k}: oracle {p}, XLA {q}",
                                before.display()
                            );
                        }
                    }
                }
            } else {
                panic!("{}: {:?}", before.display(), outcomes);
            }
            checked += 1;
        }
        assert_eq!(
            checked, want,
            "modules holding {target} on jaxlib {release}"
        );
    }
}

/// A dense layer with constant weights: 0.4.30 prepacks them into oneDNN's blocked layout, which
/// the oracle cannot read (the weights differ, so the layout matters). The bisector names the
/// last agreeing snapshot and the first it could not evaluate (after `onednn-matmul-rewriter`,
/// with the reason), and its conclusion says that only the evaluated snapshots agree: it never
/// states that no pass changed the result.
#[test]
fn an_unevaluable_snapshot_is_named_and_never_claimed_past() {
    if !test_support::need_xla() {
        return;
    }
    let python = python_of("0.4.30");
    let tmp = tempfile::tempdir().unwrap();
    let script = r#"
import jax, jax.numpy as jnp, numpy as np
W = np.arange(256 * 128, dtype=np.float32).reshape(256, 128) / 1e4
def dense_floor(x): return jnp.maximum(x @ W, 0.5)
jax.jit(dense_floor).lower(jnp.ones((512, 256), jnp.float32)).compile()
"#;
    // The weights are a large constant: without this flag the dump elides it.
    let dump = dump_script(
        &python,
        tmp.path(),
        script,
        "--xla_dump_large_constants=true",
    );
    let before = std::fs::read_dir(&dump)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with(".jit_dense_floor.before_optimizations.txt")
        })
        .expect("jax dumped the module");
    let text = std::fs::read_to_string(&before).unwrap();
    let module = hlo::parse::parse_module(&text).unwrap();
    let inputs = plain_inputs(&module);
    let xla = WorkerBackend::xla_cpu(
        WorkerConfig::new(Platform::Cpu)
            .with_workers(1)
            .with_python(Some(python)),
    );
    let opts = BisectOptions {
        no_confirm: true,
        ..BisectOptions::default()
    };
    let r = bisect(&text, &inputs, &xla, &opts).unwrap();
    let report = r.render();
    assert!(r.xla_matches_oracle, "{report}");
    assert!(r.skipped > 0 && r.evaluated > 0, "{report}");
    let first = r
        .evidence
        .first_unevaluable
        .as_ref()
        .unwrap_or_else(|| panic!("an unevaluable snapshot is named: {report}"));
    assert_eq!(first.pass, "onednn-matmul-rewriter", "{report}");
    assert!(
        first
            .note
            .as_deref()
            .is_some_and(|n| n.contains("blocked layout")),
        "{report}"
    );
    assert!(r.evidence.last_agreeing.is_some(), "{report}");
    assert!(!r.evidence.below_hlo, "{report}");
    assert!(
        r.conclusion.contains("no evaluated snapshot changed")
            && !r.conclusion.contains("no pass changed"),
        "{}",
        r.conclusion
    );
}

//! Release bisection against real XLA (jaxlib releases, each in its own venv).
//!
//! These tests need the project's Python (`.venv` with the pinned jax/jaxlib): without it they
//! fail, unless `HLO_DIFF_SKIP_XLA=1` says to skip them. The pinned release runs with that
//! Python itself (no venv is made for it).
//!
//! `a_regression_between_two_installed_releases_is_found` also needs jax/jaxlib 0.4.30 in the
//! venv cache (`$HLO_DIFF_VENV_CACHE`, else `~/.cache/hlo-diff/venvs`): the first run installs
//! it from pip (about 20-40 s and 250 MB: one download per machine, or per CI run when the cache
//! directory is not kept); later runs reuse it.

use std::path::PathBuf;
use tools::releases::{
    bisect_releases, default_cache_dir, Release, ReleaseOptions, ReleaseReport, State, VenvCache,
};

/// The jaxlib release of the project's Python.
fn pinned() -> String {
    VenvCache::new(PathBuf::new(), test_support::python())
        .base_jaxlib()
        .expect("the project's Python has jaxlib")
}

fn options(cache: PathBuf) -> ReleaseOptions {
    ReleaseOptions {
        cache: VenvCache::new(cache, test_support::python()),
        backend: "xla-cpu".into(),
        run: Default::default(),
        tolerance_scale: 1.0,
        target: None,
        target_from: String::new(),
    }
}

/// Release-bisects a regression module of `corpora/regressions/` (inputs from `F.lit` when
/// present, else seed 0, as the registry test does).
fn bisect_regression(file: &str, releases: &[&str], opts: &ReleaseOptions) -> ReleaseReport {
    let path = test_support::corpora("regressions").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let module = hlo::parse::parse_module(&text).unwrap();
    let lit = path.with_extension("lit");
    let inputs = if lit.is_file() {
        findings::inputs::read_inputs_file(&lit)
            .unwrap()
            .fit_to(&module.entry_computation().parameter_shapes())
            .0
    } else {
        generators::generate_inputs_from_seed(&module, 0, &generators::Config::default())
    };
    let releases: Vec<Release> = releases
        .iter()
        .map(|r| Release::parse(r).unwrap())
        .collect();
    let r = bisect_releases(&text, &module, &inputs, &releases, opts, &|l| {
        eprintln!("{l}")
    })
    .unwrap();
    eprintln!("{}", r.render());
    r
}

/// A release pip does not have is "cannot run", never good or bad; with only the pinned
/// release left, no range is claimed. Cheap: the pinned release needs no venv, and the
/// missing one fails at `pip install` (offline too).
#[test]
fn a_release_that_cannot_be_installed_is_never_counted_good_or_bad() {
    if !test_support::need_xla() {
        return;
    }
    let pinned = pinned();
    let cache = tempfile::tempdir().unwrap();
    let r = bisect_regression(
        "xla_miscompile_clz_constant_folding.hlo",
        &["0.0.1", &pinned],
        &options(cache.path().to_path_buf()),
    );
    let st = |v: &str| r.tried.iter().find(|t| t.release == v).map(|t| t.state);
    assert_eq!(st("0.0.1"), Some(State::CannotRun), "{}", r.render());
    let missing = r.tried.iter().find(|t| t.release == "0.0.1").unwrap();
    assert!(
        missing.detail.starts_with("cannot install"),
        "{}",
        missing.detail
    );
    assert!(
        !cache.path().join("jaxlib-0.0.1").exists(),
        "a failed install leaves no venv behind"
    );
    assert_eq!(
        st(&pinned),
        Some(State::Bad),
        "the pinned XLA folds clz wrong: {}",
        r.render()
    );
    let p = r.tried.iter().find(|t| t.release == pinned).unwrap();
    assert_eq!(p.venv.as_ref().unwrap().source, "default");
    assert_eq!(r.target.as_ref().unwrap().kind, "mismatch");
    assert_eq!(r.direction, "bad-throughout");
    assert!(r.last_good.is_none() && r.first_bad.is_none(), "{r:?}");
    assert!(
        r.conclusion.contains("only release") && r.conclusion.contains("Cannot run"),
        "{}",
        r.conclusion
    );
}

/// jax-ml/jax#39103: a dot plus a reduction over 32769 rows that XLA CPU 0.10.2 hands to a
/// YNNPACK fusion gets its last row wrong; jaxlib 0.4.30 (no such library path) is right. The
/// bisection must report 0.4.30 as the last good and the pinned release as the first bad; the
/// same venv then serves the rank-7 SIGSEGV (jax-ml/jax#40412), a crash, over the same two
/// releases.
#[test]
fn a_regression_between_two_installed_releases_is_found() {
    if !test_support::need_xla() {
        return;
    }
    let pinned = pinned();
    assert!(
        Release::parse(&pinned).unwrap().at_least("0.10.0"),
        "this test relies on the YNNPACK bugs of jaxlib 0.10.x; the project's jaxlib is {pinned}"
    );
    let opts = options(default_cache_dir());
    let r = bisect_regression(
        "xla_bucket_ynn_matvec_reduce_wrong.hlo",
        &["0.4.30", &pinned],
        &opts,
    );
    assert_eq!(r.direction, "regression", "{}", r.render());
    assert_eq!(r.last_good.as_deref(), Some("0.4.30"), "{}", r.render());
    assert_eq!(
        r.first_bad.as_deref(),
        Some(pinned.as_str()),
        "{}",
        r.render()
    );
    assert_eq!(r.target.as_ref().unwrap().kind, "mismatch");
    let old = r.tried.iter().find(|t| t.release == "0.4.30").unwrap();
    let venv = old.venv.as_ref().unwrap();
    assert_ne!(venv.source, "default", "0.4.30 runs in its own venv");
    assert!(
        venv.python.contains("jaxlib-0.4.30"),
        "its venv is the cache's: {}",
        venv.python
    );
    assert!(
        r.markdown().contains("| 0.4.30 | good |"),
        "{}",
        r.markdown()
    );

    let c = bisect_regression(
        "xla_bucket_ynn_rank7_reduce_segv.hlo",
        &["0.4.30", &pinned],
        &opts,
    );
    let t = c.target.as_ref().expect("a failure was found");
    assert_eq!(
        (t.kind.as_str(), t.stage.as_deref()),
        ("crash", Some("execute")),
        "{}",
        c.render()
    );
    assert_eq!(c.direction, "regression", "{}", c.render());
    assert_eq!(c.last_good.as_deref(), Some("0.4.30"), "{}", c.render());
}

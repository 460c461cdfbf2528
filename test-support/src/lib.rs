//! The one policy every test that runs real XLA follows (dev-only; every crate's tests use it).
//!
//! - The Python is `HLO_DIFF_PYTHON` when set and not empty, else `<repo>/.venv/bin/python`
//!   (what `scripts/setup` creates; the same rule as the engine's default).
//! - A test that needs XLA runs when that Python exists. It is skipped, saying so on stderr,
//!   only when `HLO_DIFF_SKIP_XLA=1`; any other value (unset, `0`, ...) means run. Without the
//!   Python and without `HLO_DIFF_SKIP_XLA=1` the test fails: a test never passes without
//!   testing.

use std::path::{Path, PathBuf};

/// The repository root (this crate lives at `<repo>/test-support`).
pub fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// The Python whose jax/jaxlib tests use.
pub fn python() -> PathBuf {
    match std::env::var_os("HLO_DIFF_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => repo_root().join(".venv/bin/python"),
    }
}

/// Whether `HLO_DIFF_SKIP_XLA` asks to skip the XLA tests (exactly `1`).
pub fn skip_requested() -> bool {
    std::env::var("HLO_DIFF_SKIP_XLA").as_deref() == Ok("1")
}

/// True when a test that needs XLA should run; false (with a note on stderr) only under
/// `HLO_DIFF_SKIP_XLA=1`. Panics when the Python is missing and skipping was not asked for.
pub fn need_xla() -> bool {
    if skip_requested() {
        eprintln!("HLO_DIFF_SKIP_XLA=1: skipping a test that needs XLA");
        return false;
    }
    let py = python();
    assert!(
        py.exists(),
        "no Python at {}: run scripts/setup, point HLO_DIFF_PYTHON at one, or set \
         HLO_DIFF_SKIP_XLA=1 to skip the tests that need XLA",
        py.display()
    );
    true
}

/// [`need_xla`] for a test that runs the `pjrt` backend: then the PJRT plugin at `plugin` (the
/// engine's `default_pjrt_plugin`: what `scripts/setup` installs, or `HLO_DIFF_PJRT_PLUGIN`)
/// must be there.
pub fn need_pjrt_plugin(plugin: &std::path::Path) -> bool {
    if !need_xla() {
        return false;
    }
    assert!(
        plugin.is_file(),
        "no PJRT plugin at {}: run scripts/setup or set HLO_DIFF_PJRT_PLUGIN",
        plugin.display()
    );
    true
}

/// A path under the repository's `corpora/`.
pub fn corpora(rel: &str) -> PathBuf {
    repo_root().join("corpora").join(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_python_is_the_project_venv_unless_overridden() {
        if std::env::var_os("HLO_DIFF_PYTHON").is_some_and(|p| !p.is_empty()) {
            return;
        }
        assert!(python().ends_with(".venv/bin/python"));
        assert!(repo_root().join("Cargo.toml").is_file());
    }
}

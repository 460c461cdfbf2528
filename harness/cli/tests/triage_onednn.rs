//! `hlo-diff triage repro.py` on a jaxlib release whose CPU pipeline calls oneDNN: jax-ml/jax
//! issue 20856 (jaxlib 0.4.26 rewrites a softmax over axis 0 into `__onednn$softmax`, whose
//! kernel normalizes over the last axis: every element becomes 1). The re-run of the dumped
//! module through HLO -> MLIR -> HLO does not make that rewrite, so the bug is only visible in
//! the script's own optimized module, which triage evaluates with the oracle.
//!
//! Needs the project's Python and jax/jaxlib 0.4.26 in the venv cache (`$HLO_DIFF_VENV_CACHE`,
//! else `~/.cache/hlo-diff/venvs`; the first run installs it from pip, 20-60 s).

use std::process::Command;
use test_support::need_xla;
use tools::releases::{default_cache_dir, Release, VenvCache};

const SNIPPET: &str = "import jax\n\
import jax.numpy as jnp\n\
x = jax.random.normal(jax.random.key(0), (3, 1, 1))\n\
def f(x):\n    return jax.nn.softmax(x, axis=0)\n\
print(f(x))\n\
print(jax.jit(f)(x))\n";

fn triage(python: Option<&str>, dir: &std::path::Path) -> serde_json::Value {
    let script = dir.join("repro.py");
    std::fs::write(&script, SNIPPET).unwrap();
    let out = dir.join("t");
    let mut c = Command::new(env!("CARGO_BIN_EXE_hlo-diff"));
    if let Some(p) = python {
        c.args(["--python", p]);
    }
    let o = c
        .args(["triage", &script.display().to_string(), "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let report = std::fs::read_to_string(out.join("report.json")).unwrap_or_else(|_| {
        panic!(
            "no report.json: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    serde_json::from_str(&report).unwrap()
}

/// On 0.4.26 the softmax module is a bug, named as the rewrite to `__onednn$softmax`; every
/// other module the snippet compiled is clean. On the pinned jaxlib (no oneDNN rewrite) the
/// same snippet has no bug.
#[test]
fn a_library_rewrite_only_the_script_made_is_found_in_its_optimized_module() {
    if !need_xla() {
        return;
    }
    let cache = VenvCache::new(default_cache_dir(), test_support::python());
    let old = cache
        .python_for(&Release::parse("0.4.26").unwrap(), None, &|l| {
            eprintln!("{l}")
        })
        .expect("jax/jaxlib 0.4.26 installs into the venv cache");
    let d = tempfile::tempdir().unwrap();
    let r = triage(Some(&old.python), d.path());
    assert_eq!(r["bugs"], 1, "{r:#}");
    let bugs: Vec<&serde_json::Value> = r["modules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["bug"] == true)
        .collect();
    let m = bugs[0];
    assert!(m["module"].as_str().unwrap().ends_with("jit_f"), "{m:#}");
    assert!(
        m["culprit_summary"]
            .as_str()
            .unwrap()
            .contains("`__onednn$softmax`"),
        "{m:#}"
    );
    let msg = m["message"].as_str().unwrap();
    assert!(
        msg.contains("computes another result than the module"),
        "{msg}"
    );
    assert!(
        msg.contains("agrees with the oracle's evaluation of it"),
        "{msg}"
    );
    assert!(
        m["title"].as_str().unwrap().contains("[jaxlib 0.4.26]"),
        "{m:#}"
    );
    // A report a maintainer can read: the module, the oracle's results on it and on the
    // script's optimized module (kept in original/), the rewrite as the culprit.
    let report = std::fs::read_to_string(m["report"].as_str().expect("report.md written")).unwrap();
    assert!(report.contains("as the script compiled it"), "{report}");
    assert!(report.contains("`__onednn$softmax`"), "{report}");
    let dir = std::path::Path::new(m["repro_dir"].as_str().unwrap());
    assert!(std::fs::read_dir(dir.join("original")).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with("cpu_after_optimizations.txt")));

    let d = tempfile::tempdir().unwrap();
    let r = triage(None, d.path());
    assert_eq!(
        r["bugs"], 0,
        "the pinned jaxlib computes this softmax right: {r:#}"
    );
}

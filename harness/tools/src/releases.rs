//! Release bisection (`repro-bisect FILE --releases A..B`, `triage --releases`): since which
//! jaxlib release does a module fail?
//!
//! Each release runs in its own virtual environment, kept in a cache directory
//! ([`default_cache_dir`]: `$HLO_DIFF_VENV_CACHE`, else `~/.cache/hlo-diff/venvs`), one
//! `jaxlib-<version>` directory per release, made the way `scripts/setup` makes the project's
//! `.venv` (`python -m venv`, then `pip install jax==V jaxlib==V` plus the pins an older release
//! needs, see [`pins_for`]) and marked complete by a file written last ([`MARKER`]). A release
//! whose jaxlib is the one of the default Python is run with that Python, not a new venv.
//!
//! Every release runs the module through the same worker as the pinned jaxlib, and its outcome
//! is judged against the oracle on the same inputs with the judge's [`judge::Policy::VERDICT`]
//! (as every bisector comparison). A release is then:
//! - `good`: XLA agrees with the oracle;
//! - `bad`: it fails with the [`Symptom`] searched for (a mismatch; a crash, hang or rejection
//!   in the same stage, and for a crash with the same signal);
//! - `fails-differently`: another failure (a crash where a mismatch is searched for, ...);
//! - `cannot-run`: its venv cannot be installed or started, or XLA cannot parse or convert the
//!   module (an older parser does not know an op or attribute), or its result cannot be judged
//!   (the oracle cannot evaluate the module).
//!
//! The search assumes one transition. It judges the two ends first (the oldest and newest
//! release that can run); when they agree, that is the answer and nothing between them is
//! tried. Otherwise a binary search keeps a release in the state of the older end and one in
//! the state of the newer end; a release that cannot run or fails differently is stepped past
//! (its neighbours are tried) and listed, never counted good or bad.

use engine::backend::{Backend, Outcome, RunOptions, Stage};
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use hlo::{Literal, Module};
use judge::classify::{Verdict, VerdictKind};
use judge::compare::Tolerance;
use judge::{Judge, Trial};
use serde::Serialize;
use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The file a venv of the cache gets once its install and import check succeeded.
pub const MARKER: &str = "hlo-diff-venv.json";

/// A jaxlib release number, compared numerically part by part (`0.9.0.1` < `0.10.0`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Release {
    pub text: String,
    parts: Vec<u64>,
}

impl Release {
    pub fn parse(s: &str) -> Result<Release, String> {
        let t = s.trim();
        let parts: Result<Vec<u64>, _> = t.split('.').map(str::parse::<u64>).collect();
        match parts {
            Ok(p) if !p.is_empty() && !t.is_empty() => Ok(Release {
                text: t.to_string(),
                parts: p,
            }),
            _ => Err(format!(
                "`{t}` is not a jaxlib release number (expected digits and dots, e.g. 0.4.30)"
            )),
        }
    }

    /// At least this release (`0.4` is `0.4.0`).
    pub fn at_least(&self, other: &str) -> bool {
        Release::parse(other).is_ok_and(|o| self.cmp(&o) != Ordering::Less)
    }
}

impl Ord for Release {
    fn cmp(&self, o: &Release) -> Ordering {
        let n = self.parts.len().max(o.parts.len());
        for i in 0..n {
            let a = self.parts.get(i).copied().unwrap_or(0);
            let b = o.parts.get(i).copied().unwrap_or(0);
            match a.cmp(&b) {
                Ordering::Equal => continue,
                x => return x,
            }
        }
        Ordering::Equal
    }
}

impl PartialOrd for Release {
    fn partial_cmp(&self, o: &Release) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The releases `pip index versions jaxlib` lists (run with `python`), oldest first.
pub fn available_releases(python: &Path) -> Result<Vec<Release>, String> {
    let out = Command::new(python)
        .args(["-m", "pip", "index", "versions", "jaxlib"])
        .output()
        .map_err(|e| format!("cannot run {} -m pip: {e}", python.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Available versions:"))
        .ok_or_else(|| {
            format!(
                "cannot list the jaxlib releases (`{} -m pip index versions jaxlib` exited with \
                 {}: {}); give the releases as a comma list instead",
                python.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })?;
    let mut v: Vec<Release> = line
        .split(',')
        .filter_map(|s| Release::parse(s).ok())
        .collect();
    v.sort();
    v.dedup();
    Ok(v)
}

/// The releases a `--releases` value names, oldest first: `A..B` is every release of
/// `available` from A to B inclusive; `A,B,C` is exactly those (available or not: one that pip
/// cannot install is reported as unable to run). `available` is only called for a range.
pub fn select(
    spec: &str,
    available: impl FnOnce() -> Result<Vec<Release>, String>,
) -> Result<Vec<Release>, String> {
    let spec = spec.trim();
    if let Some((a, b)) = spec.split_once("..") {
        let (a, b) = (Release::parse(a)?, Release::parse(b)?);
        if a > b {
            return Err(format!("--releases {spec}: the range runs backwards"));
        }
        let all = available()?;
        let v: Vec<Release> = all.into_iter().filter(|r| *r >= a && *r <= b).collect();
        if v.is_empty() {
            return Err(format!(
                "--releases {spec}: pip offers no jaxlib release in this range"
            ));
        }
        return Ok(v);
    }
    let mut v = spec
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(Release::parse)
        .collect::<Result<Vec<_>, _>>()?;
    if v.is_empty() {
        return Err("--releases: expected A..B or a comma list of jaxlib releases".into());
    }
    v.sort();
    v.dedup();
    Ok(v)
}

/// Packages pinned beside `jax==V jaxlib==V` for release V: releases before 0.4.26 were built
/// against NumPy 1 (NumPy 2 breaks their import, e.g. `np.trapz` for 0.4.20) and need the
/// `ml_dtypes` and SciPy of their time. Checked: 0.4.28 and 0.4.30 import with NumPy 2. A
/// release that does not import with these pins gets all three (see `install_venv`).
pub fn pins_for(r: &Release) -> Vec<String> {
    if r.at_least("0.4.26") {
        return Vec::new();
    }
    vec![
        "numpy<2".to_string(),
        "ml_dtypes==0.4.1".to_string(),
        "scipy<1.13".to_string(),
    ]
}

/// `$HLO_DIFF_VENV_CACHE`, else `~/.cache/hlo-diff/venvs` (`$XDG_CACHE_HOME` honoured).
pub fn default_cache_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("HLO_DIFF_VENV_CACHE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|p| !p.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("hlo-diff").join("venvs")
}

/// How a release's Python was obtained.
#[derive(Clone, Debug, Serialize)]
pub struct VenvInfo {
    pub python: String,
    /// `default` (the default Python already has this jaxlib), `cached` or `installed`.
    pub source: String,
    /// Seconds the install took (`installed` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install_s: Option<f64>,
    /// What was pinned beside jax and jaxlib.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<String>,
}

/// Where the venvs are and how to make them.
#[derive(Clone, Debug)]
pub struct VenvCache {
    pub dir: PathBuf,
    /// The Python that creates the venvs (its base interpreter), and whose jaxlib is used
    /// directly for its own release.
    pub base_python: PathBuf,
    /// Install releases missing from the cache (otherwise they cannot run).
    pub install: bool,
}

impl VenvCache {
    pub fn new(dir: PathBuf, base_python: PathBuf) -> VenvCache {
        VenvCache {
            dir,
            base_python,
            install: true,
        }
    }

    /// The venv directory of a release.
    pub fn venv_dir(&self, r: &Release) -> PathBuf {
        self.dir.join(format!("jaxlib-{}", r.text))
    }

    /// The jaxlib version the base Python has (`None`: it has none or cannot say).
    pub fn base_jaxlib(&self) -> Option<String> {
        let out = Command::new(&self.base_python)
            .args([
                "-c",
                "import importlib.metadata as m; print(m.version('jaxlib'))",
            ])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    }

    /// The Python of release `r`: the default one when it has this jaxlib, else the cached
    /// venv, else a new venv (with `install`). `progress` hears about an install before it
    /// starts.
    pub fn python_for(
        &self,
        r: &Release,
        base_jaxlib: Option<&str>,
        progress: &dyn Fn(&str),
    ) -> Result<VenvInfo, String> {
        if base_jaxlib == Some(r.text.as_str()) {
            return Ok(VenvInfo {
                python: self.base_python.display().to_string(),
                source: "default".into(),
                install_s: None,
                pins: Vec::new(),
            });
        }
        let dir = self.venv_dir(r);
        let python = dir.join("bin").join("python");
        if dir.join(MARKER).is_file() && python.exists() {
            return Ok(VenvInfo {
                python: python.display().to_string(),
                source: "cached".into(),
                install_s: None,
                pins: read_marker_pins(&dir),
            });
        }
        if !self.install {
            return Err(format!(
                "no venv for jaxlib {r} in {} (installing was not allowed)",
                self.dir.display()
            ));
        }
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        // One installer per release at a time; a second process waits, then finds it done.
        let _lock = Lock::take(&self.dir.join(format!("jaxlib-{}.lock", r.text)))?;
        if dir.join(MARKER).is_file() && python.exists() {
            return Ok(VenvInfo {
                python: python.display().to_string(),
                source: "cached".into(),
                install_s: None,
                pins: read_marker_pins(&dir),
            });
        }
        progress(&format!(
            "installing jax/jaxlib {r} into {} (once; later runs reuse it)",
            dir.display()
        ));
        let start = Instant::now();
        let pins = self.install_venv(r, &dir)?;
        let secs = start.elapsed().as_secs_f64();
        Ok(VenvInfo {
            python: python.display().to_string(),
            source: "installed".into(),
            install_s: Some((secs * 10.0).round() / 10.0),
            pins,
        })
    }

    /// Creates the venv of `r` in `dir` (a half-made one from an interrupted install is
    /// removed first); the marker is written last. Returns the pins used.
    fn install_venv(&self, r: &Release, dir: &Path) -> Result<Vec<String>, String> {
        if dir.exists() {
            // Only ever a directory this cache made (`jaxlib-<version>`), without its marker.
            std::fs::remove_dir_all(dir)
                .map_err(|e| format!("cannot remove the unfinished {}: {e}", dir.display()))?;
        }
        run_step(
            Command::new(&self.base_python)
                .arg("-m")
                .arg("venv")
                .arg(dir),
            "python -m venv",
        )?;
        let python = dir.join("bin").join("python");
        let mut pins = pins_for(r);
        let pip = |extra: &[String]| {
            let mut c = Command::new(&python);
            c.args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(format!("jax=={r}"))
            .arg(format!("jaxlib=={r}"))
            .args(extra);
            run_step(&mut c, &format!("pip install jax=={r} jaxlib=={r}"))
        };
        let fail = |e: String| {
            let _ = std::fs::remove_dir_all(dir);
            Err(e)
        };
        if let Err(e) = pip(&pins) {
            return fail(e);
        }
        let mut check = import_check(&python);
        if check.is_err() && pins.is_empty() {
            // The release needs the older packages of its era after all.
            pins = vec![
                "numpy<2".into(),
                "ml_dtypes==0.4.1".into(),
                "scipy<1.13".into(),
            ];
            if let Err(e) = pip(&pins) {
                return fail(e);
            }
            check = import_check(&python);
        }
        let versions = match check {
            Ok(v) => v,
            Err(e) => return fail(format!("jax {r} does not import after installing: {e}")),
        };
        let marker = serde_json::json!({
            "jaxlib": r.text,
            "pins": pins,
            "versions": versions,
        });
        std::fs::write(dir.join(MARKER), marker.to_string())
            .map_err(|e| format!("{}: {e}", dir.join(MARKER).display()))?;
        Ok(pins)
    }
}

fn read_marker_pins(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(MARKER))
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .and_then(|v| {
            v.get("pins")?.as_array().map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
        })
        .unwrap_or_default()
}

/// Runs one install step; its failure carries the last lines it wrote.
fn run_step(c: &mut Command, what: &str) -> Result<(), String> {
    let out = c
        .output()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = tail[tail.len().saturating_sub(3)..].join(" | ");
    Err(format!("{what} failed ({}): {tail}", out.status))
}

/// Imports jax and runs one tiny computation: the versions on success.
fn import_check(python: &Path) -> Result<serde_json::Value, String> {
    let out = Command::new(python)
        .env("JAX_PLATFORMS", "cpu")
        .args([
            "-c",
            "import json, jax, jaxlib, numpy, ml_dtypes\n\
             assert float(jax.numpy.ones(3).sum()) == 3.0\n\
             print(json.dumps({'jax': jax.__version__, 'numpy': numpy.__version__, \
             'ml_dtypes': ml_dtypes.__version__}))",
        ])
        .output()
        .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("failed")
            .to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("import check: {e}"))
}

/// An exclusive `flock` on a file, released when dropped.
struct Lock(std::fs::File);

impl Lock {
    fn take(path: &Path) -> Result<Lock, String> {
        use std::os::unix::io::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        // SAFETY: flock on a file descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(format!(
                "{}: cannot lock: {}",
                path.display(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(Lock(f))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        use std::os::unix::io::AsRawFd;
        // SAFETY: the descriptor is still open (closed after this).
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// The failure a release bisection looks for: the verdict kind, and for a crash, hang or
/// rejection its stage (and a crash's signal).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Symptom {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
}

impl Symptom {
    /// The symptom of a failing verdict (`None` for a match or an unsupported module).
    pub fn of(v: &Verdict) -> Option<Symptom> {
        let staged = |v: &Verdict| v.stage.map(|s| s.name().to_string());
        match v.kind {
            VerdictKind::Match | VerdictKind::Unsupported | VerdictKind::Unproven => None,
            VerdictKind::Mismatch | VerdictKind::Nondeterministic => Some(Symptom {
                kind: "mismatch".into(),
                stage: None,
                signal: None,
            }),
            VerdictKind::Crash => Some(Symptom {
                kind: "crash".into(),
                stage: staged(v),
                signal: v.signal.map(engine::backend::signal_name),
            }),
            VerdictKind::Timeout | VerdictKind::Rejected => Some(Symptom {
                kind: v.kind.name().into(),
                stage: staged(v),
                signal: None,
            }),
        }
    }
}

impl std::fmt::Display for Symptom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind.as_str() {
            "mismatch" => f.write_str("a wrong result (XLA differs from the oracle)")?,
            k => {
                write!(f, "{k}")?;
                if let Some(s) = &self.stage {
                    write!(f, " at {s}")?;
                }
                if let Some(s) = &self.signal {
                    write!(f, " ({s})")?;
                }
            }
        }
        Ok(())
    }
}

/// A release's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    Good,
    Bad,
    FailsDifferently,
    CannotRun,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Good => "good",
            State::Bad => "bad",
            State::FailsDifferently => "fails-differently",
            State::CannotRun => "cannot-run",
        }
    }

    fn judged(self) -> bool {
        matches!(self, State::Good | State::Bad)
    }
}

/// One release tried.
#[derive(Clone, Debug, Serialize)]
pub struct ReleaseRun {
    pub release: String,
    pub state: State,
    /// What happened: the verdict and its message, or why it could not run.
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symptom: Option<Symptom>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub venv: Option<VenvInfo>,
    /// Seconds for this release: install (if any), worker start, compile and run, judging.
    pub seconds: f64,
}

/// Settings of a release bisection.
#[derive(Clone, Debug)]
pub struct ReleaseOptions {
    pub cache: VenvCache,
    /// `xla-cpu` or `xla-gpu`.
    pub backend: String,
    pub run: RunOptions,
    pub tolerance_scale: f64,
    /// The failure to look for; `None`: the one an end of the range shows (the newer end first).
    pub target: Option<Symptom>,
    /// Where `target` comes from, for the report (e.g. "as the pinned jaxlib 0.10.2 shows it").
    pub target_from: String,
}

/// What a release bisection found.
#[derive(Clone, Debug, Serialize)]
pub struct ReleaseReport {
    pub backend: String,
    /// The releases in the range, oldest first.
    pub candidates: Vec<String>,
    /// The failure searched for, and where it was taken from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Symptom>,
    pub target_from: String,
    /// Every release run, in the order they were tried.
    pub tried: Vec<ReleaseRun>,
    /// `regression` (older good, newer bad), `fix` (older bad, newer good), `appears` /
    /// `disappears` (one end shows the failure, the other fails differently: the first / last
    /// release showing it), `bad-throughout`, `good-throughout`, or `undetermined`.
    pub direction: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_good: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_bad: Option<String>,
    /// For a fix: the last release that fails and the first that does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_bad: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_good: Option<String>,
    /// The release just before the first bad one (`appears`) or just after the last bad one
    /// (`disappears`) when it does not show the failure but fails differently.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_without: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_without: Option<String>,
    /// Releases between the boundary's two sides that could not be judged (cannot run, fail
    /// differently): the transition may lie at any of them.
    pub unresolved: Vec<String>,
    /// What the search assumed.
    pub assumption: String,
    /// One paragraph for humans.
    pub conclusion: String,
}

impl ReleaseReport {
    fn run_of(&self, r: &str) -> Option<&ReleaseRun> {
        self.tried.iter().find(|t| t.release == r)
    }

    /// The report as text for a terminal.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "release bisection on {} over {} jaxlib releases ({} .. {}), {} tried",
            self.backend,
            self.candidates.len(),
            self.candidates.first().map(String::as_str).unwrap_or("?"),
            self.candidates.last().map(String::as_str).unwrap_or("?"),
            self.tried.len()
        );
        if let Some(t) = &self.target {
            let _ = writeln!(s, "looking for: {t} ({})", self.target_from);
        }
        for r in &self.candidates {
            match self.run_of(r) {
                Some(t) => {
                    let venv = t
                        .venv
                        .as_ref()
                        .map(|v| match v.install_s {
                            Some(x) => format!(" [installed in {x:.0} s]"),
                            None => format!(" [{}]", v.source),
                        })
                        .unwrap_or_default();
                    let _ = writeln!(
                        s,
                        "  {:<9} {:<17} {}{venv}",
                        r,
                        t.state.name(),
                        first_line(&t.detail)
                    );
                }
                None => {
                    let _ = writeln!(s, "  {r:<9} (not tried)");
                }
            }
        }
        let _ = writeln!(s, "\n{}", self.conclusion);
        s
    }

    /// The report as a markdown section (an issue's "Release range").
    pub fn markdown(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(s, "## Release range ({})\n", self.backend);
        let _ = writeln!(s, "{}\n", self.conclusion);
        s.push_str("| jaxlib | state | what happened |\n|---|---|---|\n");
        for r in &self.candidates {
            if let Some(t) = self.run_of(r) {
                let _ = writeln!(
                    s,
                    "| {r} | {} | {} |",
                    t.state.name(),
                    first_line(&t.detail).replace('|', "\\|")
                );
            }
        }
        let untried = self.candidates.len() - self.tried.len();
        if untried > 0 {
            let _ = writeln!(
                s,
                "\n{untried} other release(s) of the range were not needed by the binary search."
            );
        }
        s.push('\n');
        s
    }
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    if l.chars().count() > 160 {
        format!("{}...", l.chars().take(160).collect::<String>())
    } else {
        l.to_string()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("{0}")]
    BadInput(String),
}

/// Release-bisects `module_text` (parsed as `module`) with `inputs` over `releases` (oldest
/// first). `progress` hears about each release as it is tried.
pub fn bisect_releases(
    module_text: &str,
    module: &Module,
    inputs: &[Literal],
    releases: &[Release],
    opts: &ReleaseOptions,
    progress: &dyn Fn(&str),
) -> Result<ReleaseReport, ReleaseError> {
    if releases.is_empty() {
        return Err(ReleaseError::BadInput("no releases to bisect over".into()));
    }
    let oracle = engine::interp_backend::InterpBackend::new().run_module(module, inputs);
    let base_jaxlib = opts.cache.base_jaxlib();
    let tol = crate::bisect::tolerance(module, opts.tolerance_scale);
    let mut s = Search {
        releases,
        runs: vec![None; releases.len()],
        order: Vec::new(),
        target: opts.target.clone(),
        try_one: &mut |r: &Release| {
            progress(&format!("jaxlib {r}: running"));
            let (state_src, run) = try_release(
                module_text,
                module,
                inputs,
                r,
                opts,
                &oracle,
                &tol,
                base_jaxlib.as_deref(),
                progress,
            );
            progress(&format!(
                "jaxlib {r}: {}",
                state_src.map(|v| v.message.clone()).unwrap_or_else(|| run
                    .detail
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string())
            ));
            run
        },
    };
    let target_from = if opts.target.is_some() {
        opts.target_from.clone()
    } else {
        String::new()
    };
    let found = s.run();
    let mut report = ReleaseReport {
        backend: opts.backend.clone(),
        candidates: releases.iter().map(|r| r.text.clone()).collect(),
        target: s.target.clone(),
        target_from: if target_from.is_empty() {
            found.target_from.clone()
        } else {
            target_from
        },
        tried: s.order.iter().filter_map(|&i| s.runs[i].clone()).collect(),
        direction: found.direction.clone(),
        last_good: None,
        first_bad: None,
        last_bad: None,
        first_good: None,
        last_without: None,
        first_without: None,
        unresolved: found.unresolved.clone(),
        assumption: "one transition in the range: the releases between two judged ones are \
                     assumed to follow the nearer judged state (not every release is run)"
            .into(),
        conclusion: String::new(),
    };
    if let (Some(lo), Some(hi)) = (found.lo, found.hi) {
        let (a, b) = (releases[lo].text.clone(), releases[hi].text.clone());
        match found.direction.as_str() {
            "regression" | "appears" => {
                report.first_bad = Some(b);
                if report.run_of(&a).map(|t| t.state) == Some(State::Good) {
                    report.last_good = Some(a);
                } else {
                    report.last_without = Some(a);
                }
            }
            "fix" | "disappears" => {
                report.last_bad = Some(a);
                if report.run_of(&b).map(|t| t.state) == Some(State::Good) {
                    report.first_good = Some(b);
                } else {
                    report.first_without = Some(b);
                }
            }
            _ => {}
        }
    }
    report.conclusion = conclude(&report, &found);
    Ok(report)
}

/// Runs one release: its venv, its worker, the module, the judge.
#[allow(clippy::too_many_arguments)]
fn try_release(
    module_text: &str,
    module: &Module,
    inputs: &[Literal],
    r: &Release,
    opts: &ReleaseOptions,
    oracle: &Outcome,
    tol: &Tolerance,
    base_jaxlib: Option<&str>,
    progress: &dyn Fn(&str),
) -> (Option<Verdict>, ReleaseRun) {
    let start = Instant::now();
    let done = |state: State,
                detail: String,
                symptom: Option<Symptom>,
                venv: Option<VenvInfo>,
                verdict: Option<Verdict>| {
        (
            verdict,
            ReleaseRun {
                release: r.text.clone(),
                state,
                detail,
                symptom,
                venv,
                seconds: (start.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            },
        )
    };
    let venv = match opts.cache.python_for(r, base_jaxlib, progress) {
        Ok(v) => v,
        Err(e) => {
            return done(
                State::CannotRun,
                format!("cannot install: {e}"),
                None,
                None,
                None,
            )
        }
    };
    let platform = if opts.backend == "xla-gpu" {
        Platform::Cuda
    } else {
        Platform::Cpu
    };
    let cfg = WorkerConfig::new(platform)
        .with_python(Some(PathBuf::from(&venv.python)))
        .with_workers(1);
    let Some(backend) = WorkerBackend::by_name(&opts.backend, cfg) else {
        return done(
            State::CannotRun,
            format!("no backend {}", opts.backend),
            None,
            Some(venv),
            None,
        );
    };
    match backend.info() {
        Err(o) => {
            return done(
                State::CannotRun,
                format!("its worker cannot start: {o}"),
                None,
                Some(venv),
                None,
            )
        }
        Ok(info) => {
            let got = info.get("jaxlib").and_then(|v| v.as_str()).unwrap_or("?");
            if got != r.text {
                return done(
                    State::CannotRun,
                    format!("{} has jaxlib {got}, not {r}", venv.python),
                    None,
                    Some(venv),
                    None,
                );
            }
        }
    }
    let outcome = backend.run(module_text, inputs, &opts.run);
    drop(backend);
    match &outcome {
        Outcome::Rejected { stage, message } if matches!(stage, Stage::Parse | Stage::Convert) => {
            return done(
                State::CannotRun,
                format!("XLA cannot {stage} the module: {}", first_line(message)),
                None,
                Some(venv),
                None,
            );
        }
        Outcome::Unavailable { .. }
        | Outcome::HarnessError { .. }
        | Outcome::Unsupported { .. } => {
            return done(
                State::CannotRun,
                format!("not run: {outcome}"),
                None,
                Some(venv),
                None,
            );
        }
        _ => {}
    }
    let outcomes = vec![
        (engine::ORACLE.to_string(), oracle.clone()),
        (opts.backend.clone(), outcome),
    ];
    let v = Judge::offline()
        .judge(&Trial {
            module,
            text: Some(module_text),
            inputs,
            outcomes: &outcomes,
            reruns: &[],
            tolerance: tol,
        })
        .verdict;
    if v.kind == VerdictKind::Unsupported {
        // XLA ran, but its result cannot be judged (the oracle cannot evaluate the module):
        // neither good nor bad.
        return done(
            State::CannotRun,
            format!("not judged: {}", first_line(&v.message)),
            None,
            Some(venv),
            Some(v),
        );
    }
    let symptom = Symptom::of(&v);
    let detail = match &symptom {
        None => format!("{}: {}", v.kind.name(), first_line(&v.message)),
        Some(sym) => format!("{sym}: {}", first_line(&v.message)),
    };
    // The state relative to the target is decided by the search (which may take the target
    // from this very run); `Good` when no failure, else `Bad` for now.
    let state = if symptom.is_none() {
        State::Good
    } else {
        State::Bad
    };
    done(state, detail, symptom, Some(venv), Some(v))
}

/// The binary search over release indices (separate from running releases, so it can be
/// tested without XLA).
struct Search<'a> {
    releases: &'a [Release],
    runs: Vec<Option<ReleaseRun>>,
    order: Vec<usize>,
    target: Option<Symptom>,
    try_one: &'a mut dyn FnMut(&Release) -> ReleaseRun,
}

/// Where the search ended.
#[derive(Clone, Debug, Default)]
struct Found {
    direction: String,
    /// The judged releases either side of the boundary (or the ends, when they agree).
    lo: Option<usize>,
    hi: Option<usize>,
    unresolved: Vec<String>,
    target_from: String,
    /// Why the search stopped without a boundary.
    note: Option<String>,
}

impl Search<'_> {
    /// The run of release `i` (run once), its state relative to the target.
    fn state(&mut self, i: usize) -> State {
        if self.runs[i].is_none() {
            let run = (self.try_one)(&self.releases[i]);
            self.runs[i] = Some(run);
            self.order.push(i);
        }
        let run = self.runs[i].as_mut().expect("just run");
        if run.state == State::CannotRun {
            return State::CannotRun;
        }
        match (&run.symptom, &self.target) {
            (None, _) => run.state = State::Good,
            (Some(_), None) => run.state = State::Bad,
            (Some(s), Some(t)) => {
                run.state = if s == t {
                    State::Bad
                } else {
                    State::FailsDifferently
                }
            }
        }
        run.state
    }

    /// The first release from `from` stepping by `step` (within `lo..=hi`) that can run.
    fn runnable(&mut self, mut i: usize, lo: usize, hi: usize, up: bool) -> Option<usize> {
        loop {
            if !(lo..=hi).contains(&i) {
                return None;
            }
            if self.state(i) != State::CannotRun {
                return Some(i);
            }
            if up {
                i += 1;
            } else if i == 0 {
                return None;
            } else {
                i -= 1;
            }
        }
    }

    fn run(&mut self) -> Found {
        let n = self.releases.len();
        let mut found = Found::default();
        // The ends: the newest that runs, then the oldest that runs.
        let Some(hi) = self.runnable(n - 1, 0, n - 1, false) else {
            found.direction = "undetermined".into();
            found.note = Some("no release of the range could run the module".into());
            return found;
        };
        if self.target.is_none() {
            if let Some(s) = self.runs[hi].as_ref().and_then(|r| r.symptom.clone()) {
                self.target = Some(s);
                found.target_from = format!("as jaxlib {} shows it", self.releases[hi]);
            }
        }
        let Some(lo) = self.runnable(0, 0, hi, true).filter(|&lo| lo < hi) else {
            let st = self.state(hi);
            found.direction = match st {
                State::Good => "good-throughout",
                State::Bad => "bad-throughout",
                _ => "undetermined",
            }
            .into();
            found.lo = Some(hi);
            found.hi = Some(hi);
            found.note = Some(format!(
                "only jaxlib {} of the range could run the module",
                self.releases[hi]
            ));
            return found;
        };
        if self.target.is_none() {
            if let Some(s) = self.runs[lo].as_ref().and_then(|r| r.symptom.clone()) {
                self.target = Some(s);
                found.target_from = format!("as jaxlib {} shows it", self.releases[lo]);
            }
        }
        let (s_lo, s_hi) = (self.state(lo), self.state(hi));
        found.lo = Some(lo);
        found.hi = Some(hi);
        // Strict: both ends judged (good and bad), and releases failing differently are
        // stepped past. Loose: one end shows the failure and the other fails differently;
        // then the search is for the first (or last) release that shows it, and every other
        // state that runs counts as "without it".
        let loose = match (s_lo, s_hi) {
            (a, b) if a.judged() && b.judged() => false,
            (State::Bad, State::FailsDifferently) | (State::FailsDifferently, State::Bad) => true,
            _ => {
                found.direction = "undetermined".into();
                found.note = Some(format!(
                    "neither end of the range shows the failure searched for (jaxlib {}: {}, \
                     jaxlib {}: {})",
                    self.releases[lo],
                    s_lo.name(),
                    self.releases[hi],
                    s_hi.name()
                ));
                return found;
            }
        };
        if s_lo == s_hi {
            found.direction = if s_lo == State::Good {
                "good-throughout"
            } else {
                "bad-throughout"
            }
            .into();
            return found;
        }
        found.direction = match (s_lo, loose) {
            (State::Good, _) => "regression",
            (State::Bad, false) => "fix",
            (State::Bad, true) => "disappears",
            _ => "appears",
        }
        .into();
        let lo_bad = s_lo == State::Bad;
        let (mut lo, mut hi) = (lo, hi);
        while hi - lo > 1 {
            // The middle, or the nearest release around it that can be judged.
            let mid = lo + (hi - lo) / 2;
            let mut pick = None;
            for d in 0..(hi - lo) {
                for c in [mid + d, mid.wrapping_sub(d)] {
                    if c > lo && c < hi {
                        let st = self.state(c);
                        if st.judged() || (loose && st != State::CannotRun) {
                            pick = Some((c, st));
                            break;
                        }
                    }
                }
                if pick.is_some() {
                    break;
                }
            }
            match pick {
                Some((c, st)) if (st == State::Bad) == lo_bad => lo = c,
                Some((c, _)) => hi = c,
                None => break,
            }
        }
        found.lo = Some(lo);
        found.hi = Some(hi);
        found.unresolved = ((lo + 1)..hi)
            .map(|i| {
                let st = self.runs[i]
                    .as_ref()
                    .map(|r| r.state.name())
                    .unwrap_or("not tried");
                format!("{} ({st})", self.releases[i])
            })
            .collect();
        found
    }
}

fn conclude(r: &ReleaseReport, f: &Found) -> String {
    let sym = r
        .target
        .as_ref()
        .map(|t| t.to_string())
        .unwrap_or_else(|| "the failure".into());
    let n_cannot = r
        .tried
        .iter()
        .filter(|t| t.state == State::CannotRun)
        .map(|t| t.release.as_str())
        .collect::<Vec<_>>();
    let cannot = if n_cannot.is_empty() {
        String::new()
    } else {
        format!(
            " Cannot run (never counted good or bad): jaxlib {}.",
            n_cannot.join(", ")
        )
    };
    let unresolved = if r.unresolved.is_empty() {
        String::new()
    } else {
        format!(
            " Between them, not judged: {}; the transition may be at any of them.",
            r.unresolved.join(", ")
        )
    };
    let assume = "Assuming one transition in the range (not every release was run).";
    let ends = |f: &Found| {
        let lo = f.lo.map(|i| r.candidates[i].clone()).unwrap_or_default();
        let hi = f.hi.map(|i| r.candidates[i].clone()).unwrap_or_default();
        (lo, hi)
    };
    let body = match f.direction.as_str() {
        "regression" => format!(
            "First bad jaxlib release: {} (last good: {}): {sym} appears between them. {assume}{unresolved}",
            r.first_bad.as_deref().unwrap_or("?"),
            r.last_good.as_deref().unwrap_or("?"),
        ),
        "fix" => format!(
            "Fixed in jaxlib {} (last bad: {}): {sym} is gone from it on. {assume}{unresolved}",
            r.first_good.as_deref().unwrap_or("?"),
            r.last_bad.as_deref().unwrap_or("?"),
        ),
        "appears" | "disappears" => {
            let (lo, hi) = ends(f);
            let other = |v: &str| {
                r.run_of(v)
                    .map(|t| match t.state {
                        State::Good => "agrees with the oracle".to_string(),
                        _ => format!("fails differently: {}", first_line(&t.detail)),
                    })
                    .unwrap_or_default()
            };
            if f.direction == "appears" {
                format!(
                    "First jaxlib release showing {sym}: {hi}; the release before it that was run, {lo}, {}. {assume}{unresolved}",
                    other(&lo)
                )
            } else {
                format!(
                    "Last jaxlib release showing {sym}: {lo}; the next release that was run, {hi}, {}. {assume}{unresolved}",
                    other(&hi)
                )
            }
        }
        "bad-throughout" => {
            let (lo, hi) = ends(f);
            if lo == hi {
                format!(
                    "Present in jaxlib {hi}, the only release of the range that could run it; no range determined."
                )
            } else {
                format!(
                    "Present in every release tried: both ends of the range (jaxlib {lo} and {hi}) show {sym}, so no boundary was searched (assuming one transition, it predates {lo})."
                )
            }
        }
        "good-throughout" => {
            let (lo, hi) = ends(f);
            if lo == hi {
                format!(
                    "jaxlib {hi}, the only release of the range that could run it, agrees with the oracle; no range determined."
                )
            } else {
                format!(
                    "No failure at either end of the range: jaxlib {lo} and {hi} both agree with the oracle, so no boundary was searched."
                )
            }
        }
        _ => format!(
            "No release range determined: {}.",
            f.note.as_deref().unwrap_or("no good/bad pair")
        ),
    };
    format!("{body}{cannot}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(v: &[&str]) -> Vec<Release> {
        v.iter().map(|s| Release::parse(s).unwrap()).collect()
    }

    fn mismatch() -> Symptom {
        Symptom {
            kind: "mismatch".into(),
            stage: None,
            signal: None,
        }
    }

    /// Runs the search with release states given by `f`.
    fn search(
        releases: &[Release],
        f: impl Fn(&str) -> (State, Option<Symptom>),
    ) -> (Found, Vec<String>) {
        let mut try_one = |r: &Release| {
            let (state, symptom) = f(&r.text);
            ReleaseRun {
                release: r.text.clone(),
                state,
                detail: String::new(),
                symptom,
                venv: None,
                seconds: 0.0,
            }
        };
        let mut s = Search {
            releases,
            runs: vec![None; releases.len()],
            order: Vec::new(),
            target: None,
            try_one: &mut try_one,
        };
        let f = s.run();
        let tried = s
            .order
            .iter()
            .map(|&i| s.releases[i].text.clone())
            .collect();
        (f, tried)
    }

    #[test]
    fn releases_order_numerically_and_ranges_select_from_pips_list() {
        let mut v = rel(&["0.10.0", "0.9.0.1", "0.4.30", "0.9.0", "0.4.4"]);
        v.sort();
        let t: Vec<_> = v.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(t, ["0.4.4", "0.4.30", "0.9.0", "0.9.0.1", "0.10.0"]);
        let avail = || Ok(rel(&["0.4.13", "0.4.30", "0.4.31", "0.5.0", "0.10.2"]));
        let s = select("0.4.30..0.5.0", avail).unwrap();
        assert_eq!(s, rel(&["0.4.30", "0.4.31", "0.5.0"]));
        let s = select("0.10.2, 0.4.30,0.4.30", || unreachable!()).unwrap();
        assert_eq!(s, rel(&["0.4.30", "0.10.2"]));
        assert!(select("0.5..0.4", avail).is_err());
        assert!(select("0.4.x", avail).is_err());
        assert!(select("1.0..2.0", avail).is_err());
        assert!(select(" , ", avail).is_err());
    }

    #[test]
    fn old_releases_get_the_numpy_of_their_time() {
        let p = |v: &str| pins_for(&Release::parse(v).unwrap());
        assert!(p("0.4.20").contains(&"numpy<2".to_string()));
        assert!(p("0.4.20").contains(&"scipy<1.13".to_string()));
        assert!(p("0.4.30").is_empty());
        assert!(p("0.10.2").is_empty());
    }

    #[test]
    fn a_regression_is_found_by_binary_search_past_releases_that_cannot_run() {
        let v = rel(&[
            "0.4.30", "0.4.35", "0.4.38", "0.5.3", "0.6.2", "0.7.2", "0.8.3", "0.9.2", "0.10.0",
            "0.10.2",
        ]);
        // Bad from 0.7.2 on; 0.6.2 cannot run.
        let (f, tried) = search(&v, |r| {
            let r = Release::parse(r).unwrap();
            if r.text == "0.6.2" {
                (State::CannotRun, None)
            } else if r.at_least("0.7.2") {
                (State::Bad, Some(mismatch()))
            } else {
                (State::Good, None)
            }
        });
        assert_eq!(f.direction, "regression");
        assert_eq!(v[f.lo.unwrap()].text, "0.5.3");
        assert_eq!(v[f.hi.unwrap()].text, "0.7.2");
        assert_eq!(f.unresolved, ["0.6.2 (cannot-run)"]);
        assert!(
            tried.len() < v.len(),
            "binary search skips releases: {tried:?}"
        );
        assert_eq!(tried[0], "0.10.2", "the ends first: {tried:?}");
        assert_eq!(tried[1], "0.4.30", "the ends first: {tried:?}");
    }

    #[test]
    fn agreeing_ends_are_reported_without_inventing_a_boundary() {
        let v = rel(&["0.4.30", "0.5.3", "0.6.2", "0.10.2"]);
        let (f, tried) = search(&v, |_| (State::Bad, Some(mismatch())));
        assert_eq!(f.direction, "bad-throughout");
        assert_eq!(tried, ["0.10.2", "0.4.30"]);
        let (f, _) = search(&v, |_| (State::Good, None));
        assert_eq!(f.direction, "good-throughout");
    }

    #[test]
    fn a_fix_and_an_end_that_cannot_run() {
        let v = rel(&["0.4.13", "0.4.30", "0.5.3", "0.6.2", "0.10.2"]);
        let (f, _) = search(&v, |r| match r {
            "0.4.13" => (State::CannotRun, None),
            "0.4.30" | "0.5.3" => (
                State::Bad,
                Some(Symptom {
                    kind: "crash".into(),
                    stage: Some("execute".into()),
                    signal: Some("SIGSEGV".into()),
                }),
            ),
            _ => (State::Good, None),
        });
        assert_eq!(f.direction, "fix");
        assert_eq!(v[f.lo.unwrap()].text, "0.5.3");
        assert_eq!(v[f.hi.unwrap()].text, "0.6.2");
    }

    #[test]
    fn another_failure_is_neither_good_nor_bad() {
        let v = rel(&["0.4.30", "0.5.3", "0.6.2", "0.7.2", "0.10.2"]);
        let crash = Symptom {
            kind: "crash".into(),
            stage: Some("compile".into()),
            signal: Some("SIGABRT".into()),
        };
        let (f, tried) = search(&v, |r| match r {
            "0.4.30" | "0.5.3" => (State::Good, None),
            "0.6.2" => (State::Bad, Some(crash.clone())),
            _ => (State::Bad, Some(mismatch())),
        });
        assert_eq!(f.direction, "regression");
        assert_eq!(v[f.lo.unwrap()].text, "0.5.3");
        assert_eq!(v[f.hi.unwrap()].text, "0.7.2");
        assert_eq!(f.unresolved, ["0.6.2 (fails-differently)"]);
        assert!(tried.contains(&"0.6.2".to_string()));
        // One end fails differently: the first release showing the failure is searched for.
        let (f, _) = search(&v, |r| match r {
            "0.4.30" | "0.5.3" => (State::Bad, Some(crash.clone())),
            _ => (State::Bad, Some(mismatch())),
        });
        assert_eq!(f.direction, "appears");
        assert_eq!(v[f.lo.unwrap()].text, "0.5.3");
        assert_eq!(v[f.hi.unwrap()].text, "0.6.2");
        // Nothing runs at all.
        let (f, _) = search(&v, |_| (State::CannotRun, None));
        assert_eq!(f.direction, "undetermined");
    }
}

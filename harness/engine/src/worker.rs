//! The XLA backends: a pool of persistent Python worker processes
//! (`harness/engine/worker/hlo_worker.py`) driven over [`crate::protocol`].
//!
//! Robustness rules, which keep campaigns alive:
//! - each worker runs in its own process group; a stage past its limit gets the whole group
//!   SIGKILLed and becomes [`Outcome::Timeout`];
//! - a worker that dies (signal or exit) mid-request becomes [`Outcome::Crash`] with the stage
//!   it had announced and the tail of what it wrote to stderr during the request;
//! - a broken pipe, a malformed or oversize frame is a [`Outcome::HarnessError`], never a panic;
//! - a dead or killed worker is replaced by a fresh one on the next request;
//! - a missing Python, jax/jaxlib or device is [`Outcome::Unavailable`] with the install command.
//!
//! The worker script is found at `<repo>/harness/engine/worker/hlo_worker.py` (or `HLO_DIFF_WORKER`);
//! when neither exists a copy embedded in this binary is written to the temp directory.

use crate::backend::{
    failure_line_rank, Backend, Outcome, RunOptions, RunResult, Stage, StageTimeouts, Timings,
};
use crate::protocol::{
    array_from_wire, array_header, shape_from_wire, Frame, FrameError, DEFAULT_MAX_FRAME,
};
use hlo::Literal;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How to set up what the XLA backends need.
pub const INSTALL_HINT: &str =
    "python3 -m venv .venv && .venv/bin/pip install -r harness/engine/worker/requirements.txt";

const EMBEDDED_WORKER: &str = include_str!("../worker/hlo_worker.py");
const STDERR_KEEP: usize = 64 * 1024;
const STDERR_TAIL: usize = 4096;

/// The repository root: `HLO_DIFF_REPO`, else the repository this crate was built in.
pub fn repo_root() -> PathBuf {
    if let Some(p) = std::env::var_os("HLO_DIFF_REPO") {
        return PathBuf::from(p);
    }
    // This crate lives at `<repo>/harness/engine`.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .unwrap_or(manifest)
        .to_path_buf()
}

/// The Python to use when none is given: `HLO_DIFF_PYTHON`, else `<repo>/.venv/bin/python`.
pub fn default_python() -> PathBuf {
    match std::env::var_os("HLO_DIFF_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => repo_root().join(".venv/bin/python"),
    }
}

/// The worker script: `HLO_DIFF_WORKER`, the repository's copy, or the embedded copy
/// written to the temp directory.
pub fn worker_script() -> std::io::Result<PathBuf> {
    if let Some(p) = std::env::var_os("HLO_DIFF_WORKER") {
        return Ok(PathBuf::from(p));
    }
    let in_repo = repo_root().join("harness/engine/worker/hlo_worker.py");
    if in_repo.is_file() {
        return Ok(in_repo);
    }
    // A content hash in the name: concurrent writers write the same bytes.
    let hash = EMBEDDED_WORKER.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    });
    let path = std::env::temp_dir().join(format!("hlo-diff-worker-{hash:016x}.py"));
    if !path.is_file() {
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        std::fs::write(&tmp, EMBEDDED_WORKER)?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(path)
}

/// Where `scripts/setup` installs the default PJRT plugin (a CPU plugin of a newer XLA than the
/// pinned jaxlib), relative to the repository root.
pub const DEFAULT_PJRT_PLUGIN: &str = ".pjrt/cpu/pjrt_c_api_cpu_plugin.so";

/// How to get the `pjrt` backend's plugin.
pub const PJRT_INSTALL_HINT: &str = "scripts/setup (installs the default CPU plugin into .pjrt/), or point --pjrt-plugin / HLO_DIFF_PJRT_PLUGIN at a PJRT plugin (.so exporting GetPjrtApi)";

/// The PJRT plugin the `pjrt` backend loads: `HLO_DIFF_PJRT_PLUGIN` (what `--pjrt-plugin` sets),
/// else the one `scripts/setup` installs.
pub fn default_pjrt_plugin() -> PathBuf {
    match std::env::var_os("HLO_DIFF_PJRT_PLUGIN") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => repo_root().join(DEFAULT_PJRT_PLUGIN),
    }
}

/// The PJRT worker binary (`hlo-diff-pjrt-worker`, built with the engine): `HLO_DIFF_PJRT_WORKER`,
/// else next to the running binary, else in the folder above it (test binaries live in
/// `target/<profile>/deps/`), else in the `target/` of the repository this crate was built in.
pub fn pjrt_worker_binary() -> Option<PathBuf> {
    const NAME: &str = "hlo-diff-pjrt-worker";
    if let Some(p) = std::env::var_os("HLO_DIFF_PJRT_WORKER") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = exe.as_deref().and_then(Path::parent) {
        candidates.push(dir.join(NAME));
        if let Some(up) = dir.parent() {
            candidates.push(up.join(NAME));
        }
    }
    for profile in ["release", "debug"] {
        candidates.push(repo_root().join("target").join(profile).join(NAME));
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// Where the worker runs XLA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platform {
    Cpu,
    Cuda,
}

impl Platform {
    pub fn name(self) -> &'static str {
        match self {
            Platform::Cpu => "cpu",
            Platform::Cuda => "cuda",
        }
    }
}

/// The environment variables every worker of `platform` is started with (on top of the
/// inherited environment, `XLA_FLAGS` included, and [`WorkerConfig::env`]).
pub fn worker_env(platform: Platform) -> Vec<(&'static str, &'static str)> {
    let mut env = vec![("PYTHONUNBUFFERED", "1"), ("TF_CPP_MIN_LOG_LEVEL", "1")];
    if platform == Platform::Cpu {
        env.push(("JAX_PLATFORMS", "cpu"));
    }
    env
}

/// Settings of a worker pool.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// The Python whose jax/jaxlib to use.
    pub python: PathBuf,
    pub platform: Platform,
    /// Most workers alive at once (each one process, each about 1 s to start).
    pub workers: usize,
    /// Limit for a worker's start-up (`import jax` and platform initialization).
    pub startup_timeout: Duration,
    /// Largest frame accepted from a worker.
    pub max_frame: usize,
    /// Extra environment variables for the workers.
    pub env: Vec<(String, String)>,
    /// The worker script; `None`: [`worker_script`].
    pub script: Option<PathBuf>,
    /// Run the PJRT worker on this plugin instead of the Python worker (the `pjrt` backend).
    pub pjrt_plugin: Option<PathBuf>,
    /// Each request in a process the worker forks for it (`hlo_worker.py --fork`): a request
    /// that kills its process is a [`Outcome::Crash`] that costs a fork and an XLA client, not
    /// a new worker (`import jax`, a second or more). No executable is kept between requests.
    /// The Python worker only.
    pub fork_per_request: bool,
    /// Devices of each worker's client: above 1, XLA CPU's host devices an SPMD program runs
    /// on (`--xla_force_host_platform_device_count` for the Python worker, `--devices` for the
    /// PJRT worker). Set by [`WorkerPool::partitioned`].
    pub host_devices: usize,
}

impl WorkerConfig {
    /// The default Python, one worker per core.
    pub fn new(platform: Platform) -> WorkerConfig {
        WorkerConfig {
            python: default_python(),
            platform,
            workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            startup_timeout: Duration::from_secs(120),
            max_frame: DEFAULT_MAX_FRAME,
            env: Vec::new(),
            script: None,
            pjrt_plugin: None,
            fork_per_request: false,
            host_devices: 1,
        }
    }

    pub fn with_python(mut self, python: Option<PathBuf>) -> WorkerConfig {
        if let Some(p) = python {
            self.python = p;
        }
        self
    }

    pub fn with_workers(mut self, n: usize) -> WorkerConfig {
        self.workers = n.max(1);
        self
    }

    /// See [`WorkerConfig::fork_per_request`].
    pub fn with_fork_per_request(mut self, fork: bool) -> WorkerConfig {
        self.fork_per_request = fork;
        self
    }
}

struct StderrState {
    buf: VecDeque<u8>,
    total: u64,
    eof: bool,
}

struct StderrBuf {
    state: Mutex<StderrState>,
    cv: Condvar,
}

impl StderrBuf {
    fn total(&self) -> u64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).total
    }

    /// What was written since `since` (its [`stderr_excerpt`] of [`STDERR_TAIL`] bytes),
    /// after waiting up to `wait` for the stream to end.
    fn tail_since(&self, since: u64, wait: Duration) -> String {
        let deadline = Instant::now() + wait;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while !st.eof {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            st = self
                .cv
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let new = (st.total - since).min(st.buf.len() as u64) as usize;
        let bytes: Vec<u8> = st.buf.iter().skip(st.buf.len() - new).copied().collect();
        stderr_excerpt(&String::from_utf8_lossy(&bytes), STDERR_TAIL)
    }

    /// What was written since `since` up to the line `marker` (the worker's word that a forked
    /// request's process ended, written after everything that process wrote), waiting up to
    /// `wait` for it: the [`stderr_excerpt`] of what came before the marker.
    fn tail_before(&self, since: u64, marker: &str, wait: Duration) -> String {
        let deadline = Instant::now() + wait;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let new = (st.total - since).min(st.buf.len() as u64) as usize;
            let text: Vec<u8> = st.buf.iter().skip(st.buf.len() - new).copied().collect();
            let text = String::from_utf8_lossy(&text).into_owned();
            let now = Instant::now();
            if let Some(at) = text.rfind(marker) {
                return stderr_excerpt(text[..at].trim_end_matches('\n'), STDERR_TAIL);
            }
            if st.eof || now >= deadline {
                return stderr_excerpt(&text, STDERR_TAIL);
            }
            st = self
                .cv
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// What a request's stderr says, in about `n` bytes: all of it when it fits, else the lines
/// that say what went wrong ([`failure_line_rank`], at most four, each cut to 1 KiB) from the
/// part that does not fit, a line saying how much was cut, and the whole lines of the last `n`
/// bytes. A CHECK failure comes before its stack trace, so a trace longer than `n` (longer
/// paths on another host) must not take the line that names the crash with it.
fn stderr_excerpt(text: &str, n: usize) -> String {
    if text.len() <= n {
        return text.to_string();
    }
    let tail = last_bytes(text, n);
    // Whole lines only, when there are lines: a line cut at its start could pass for another.
    let tail = match tail.find('\n') {
        Some(nl) => &tail[nl + 1..],
        None => tail,
    };
    let cut = &text[..text.len() - tail.len()];
    let mut out = String::new();
    for line in cut
        .lines()
        .filter(|l| failure_line_rank(l).is_some())
        .take(4)
    {
        out.push_str(first_bytes(line, 1024));
        out.push('\n');
    }
    out.push_str(&format!("[hlo-diff: {} bytes of stderr cut]\n", cut.len()));
    out.push_str(tail);
    out
}

/// The start of `text`: at most `n` bytes, ending at a character boundary.
fn first_bytes(text: &str, n: usize) -> &str {
    let to = (0..=n.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    &text[..to]
}

/// The end of `text`: at most `n` bytes, starting at a character boundary.
fn last_bytes(text: &str, n: usize) -> &str {
    let from = text.len().saturating_sub(n);
    let from = (from..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    &text[from..]
}

/// What the worker writes on stderr once a forked request's process has ended
/// (`REQUEST_ENDED` in hlo_worker.py).
const REQUEST_ENDED: &str = "[hlo_worker: request process ended]";

/// A crash's stderr tail with what is known of how the process ended.
fn crash_tail(
    mut tail: String,
    signal: Option<i32>,
    code: Option<i32>,
    note: Option<String>,
) -> String {
    if let (None, Some(code)) = (signal, code) {
        tail.push_str(&format!("\n[worker exited with status {code}]"));
    }
    if let Some(n) = note {
        tail.push_str(&format!("\n[{n}]"));
    }
    tail
}

enum FromWorker {
    Frame(Frame),
    Eof,
    Bad(String),
}

/// One live worker process.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<FromWorker>,
    stderr: Arc<StderrBuf>,
    hello: Value,
    /// Affinity keys of the executables this worker keeps, oldest first (see
    /// [`WorkerPool::request_with_affinity`]).
    recent: Vec<u64>,
}

/// Why a request did not produce a result frame; the worker is unusable afterwards.
fn unavailable(why: String) -> Outcome {
    Outcome::Unavailable {
        why: format!("{why}\n  install: {INSTALL_HINT}\n  or point --python / HLO_DIFF_PYTHON at a Python with jax and jaxlib"),
    }
}

/// Why the PJRT worker cannot run.
fn pjrt_unavailable(why: String) -> Outcome {
    Outcome::Unavailable {
        why: format!("{why}\n  install: {PJRT_INSTALL_HINT}"),
    }
}

impl Worker {
    /// The worker's command: the Python worker, or the PJRT worker on a plugin.
    fn command(cfg: &WorkerConfig) -> Result<Command, Outcome> {
        if let Some(plugin) = &cfg.pjrt_plugin {
            if !plugin.is_file() {
                return Err(pjrt_unavailable(format!(
                    "no PJRT plugin at {}",
                    plugin.display()
                )));
            }
            let bin = pjrt_worker_binary().ok_or_else(|| {
                pjrt_unavailable(
                    "the PJRT worker binary hlo-diff-pjrt-worker is not built (cargo build --release -p engine --bin hlo-diff-pjrt-worker, or set HLO_DIFF_PJRT_WORKER)".into(),
                )
            })?;
            let mut cmd = Command::new(bin);
            cmd.arg("--plugin").arg(plugin);
            if cfg.host_devices > 1 {
                cmd.arg("--devices").arg(cfg.host_devices.to_string());
            }
            return Ok(cmd);
        }
        let script = match &cfg.script {
            Some(s) => Ok(s.clone()),
            None => worker_script(),
        }
        .map_err(|e| unavailable(format!("cannot write the worker script: {e}")))?;
        let mut cmd = Command::new(&cfg.python);
        cmd.arg("-u")
            .arg(&script)
            .arg("--platform")
            .arg(cfg.platform.name());
        if cfg.fork_per_request {
            cmd.arg("--fork");
        }
        Ok(cmd)
    }

    fn start(cfg: &WorkerConfig) -> Result<Worker, Outcome> {
        let mut cmd = Worker::command(cfg)?;
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        for (k, v) in worker_env(cfg.platform) {
            cmd.env(k, v);
        }
        for (k, v) in &cfg.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| match &cfg.pjrt_plugin {
            Some(_) => pjrt_unavailable(format!("cannot start the PJRT worker: {e}")),
            None => unavailable(format!("cannot start Python {}: {e}", cfg.python.display())),
        })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr_pipe = child.stderr.take().expect("piped");

        let stderr = Arc::new(StderrBuf {
            state: Mutex::new(StderrState {
                buf: VecDeque::new(),
                total: 0,
                eof: false,
            }),
            cv: Condvar::new(),
        });
        let sb = stderr.clone();
        std::thread::spawn(move || {
            let mut r = stderr_pipe;
            let mut chunk = [0u8; 8192];
            loop {
                let n = match r.read(&mut chunk) {
                    Ok(0) | Err(_) => 0,
                    Ok(n) => n,
                };
                let mut st = sb.state.lock().unwrap_or_else(|e| e.into_inner());
                if n == 0 {
                    st.eof = true;
                    sb.cv.notify_all();
                    return;
                }
                st.buf.extend(&chunk[..n]);
                st.total += n as u64;
                let excess = st.buf.len().saturating_sub(STDERR_KEEP);
                st.buf.drain(..excess);
            }
        });

        let (tx, rx) = mpsc::channel();
        let max = cfg.max_frame;
        std::thread::spawn(move || {
            let mut r = BufReader::with_capacity(1 << 16, stdout);
            loop {
                let msg = match Frame::read_from(&mut r, max) {
                    Ok(f) => FromWorker::Frame(f),
                    Err(FrameError::Eof) => FromWorker::Eof,
                    Err(FrameError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                        FromWorker::Eof
                    }
                    Err(e) => FromWorker::Bad(e.to_string()),
                };
                let stop = !matches!(msg, FromWorker::Frame(_));
                if tx.send(msg).is_err() || stop {
                    return;
                }
            }
        });

        let mut w = Worker {
            recent: Vec::new(),
            child,
            stdin,
            rx,
            stderr,
            hello: Value::Null,
        };
        let why = match w.rx.recv_timeout(cfg.startup_timeout) {
            Ok(FromWorker::Frame(f)) if f.kind() == "hello" => {
                if f.header.get("ok").and_then(Value::as_bool) == Some(true) {
                    w.hello = f.header;
                    return Ok(w);
                }
                let why = f
                    .header
                    .get("why")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                format!("the worker cannot run: {why}")
            }
            Ok(FromWorker::Frame(f)) => format!("the worker greeted with {:?}", f.kind()),
            Ok(FromWorker::Bad(e)) => format!("the worker's first frame is broken: {e}"),
            Ok(FromWorker::Eof) | Err(RecvTimeoutError::Disconnected) => {
                let tail = w.stderr.tail_since(0, Duration::from_secs(2));
                format!(
                    "the worker ({}) exited at start-up:\n{tail}",
                    cfg.python.display()
                )
            }
            Err(RecvTimeoutError::Timeout) => {
                format!("the worker did not start within {:?}", cfg.startup_timeout)
            }
        };
        Err(if cfg.pjrt_plugin.is_some() {
            pjrt_unavailable(why)
        } else if cfg.platform == Platform::Cuda && !why.contains("cannot import") {
            Outcome::Unavailable {
                why: format!("{why}\n  the xla-gpu backend needs an NVIDIA GPU and jax[cuda12] in that Python: .venv/bin/pip install 'jax[cuda12]==<jax version>'"),
            }
        } else {
            unavailable(why)
        })
    }

    /// Kills the worker's whole process group and reaps it.
    fn kill(&mut self) {
        let pid = self.child.id() as i32;
        // SAFETY: kill(2) on our own child's process group (the child leads it: process_group(0)).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends a request and waits for its result, timing each announced stage.
    /// `Err` means the worker is gone (crashed, killed or out of protocol) and must be dropped.
    /// No stage runs past `until`, whatever its limit.
    fn request(
        &mut self,
        req: &Frame,
        timeouts: &StageTimeouts,
        until: Option<Instant>,
    ) -> Result<Frame, Outcome> {
        let stage_end = |s: Stage| {
            let end = Instant::now() + timeouts.get(s);
            until.map_or(end, |u| end.min(u))
        };
        let since = self.stderr.total();
        let mut stage = Stage::Parse;
        if let Err(e) = self
            .stdin
            .write_all(&req.encode())
            .and_then(|_| self.stdin.flush())
        {
            return Err(self.died(stage, since, Some(format!("writing the request: {e}"))));
        }
        let mut deadline = stage_end(stage);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(FromWorker::Frame(f)) => match f.kind() {
                    "stage" => {
                        let name = f.header.get("stage").and_then(Value::as_str).unwrap_or("");
                        match Stage::from_name(name) {
                            Some(s) => {
                                stage = s;
                                deadline = stage_end(s);
                            }
                            None => {
                                self.kill();
                                return Err(Outcome::HarnessError {
                                    stage: Some(stage),
                                    message: format!("worker announced an unknown stage {name:?}"),
                                });
                            }
                        }
                    }
                    "result" => return Ok(self.forked_crash(f, since)),
                    other => {
                        self.kill();
                        return Err(Outcome::HarnessError {
                            stage: Some(stage),
                            message: format!("unexpected {other:?} frame from the worker"),
                        });
                    }
                },
                Ok(FromWorker::Eof) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.died(stage, since, None));
                }
                Ok(FromWorker::Bad(e)) => {
                    self.kill();
                    let tail = self.stderr.tail_since(since, Duration::from_millis(200));
                    return Err(Outcome::HarnessError {
                        stage: Some(stage),
                        message: format!("worker protocol error: {e}\n{tail}"),
                    });
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(Outcome::Timeout { stage });
                }
            }
        }
    }

    /// The worker's output ended: wait for its exit status and describe the crash.
    fn died(&mut self, stage: Stage, since: u64, note: Option<String>) -> Outcome {
        let deadline = Instant::now() + Duration::from_secs(3);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => {
                    self.kill();
                    break None;
                }
            }
        };
        // Make sure nothing of the group survives, then collect its last words.
        // SAFETY: as in `kill`.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let tail = self.stderr.tail_since(since, Duration::from_secs(1));
        let signal = status.and_then(|s| s.signal());
        Outcome::Crash {
            stage,
            signal,
            stderr_tail: crash_tail(tail, signal, status.and_then(|s| s.code()), note),
        }
    }

    /// A result frame, with the stderr tail added to a forked request's crash (`"type":
    /// "crash"`, [`WorkerConfig::fork_per_request`]): what the request's process wrote before
    /// the worker's [`REQUEST_ENDED`] line.
    fn forked_crash(&self, mut f: Frame, since: u64) -> Frame {
        let crashed = f
            .header
            .pointer("/error/type")
            .and_then(Value::as_str)
            .is_some_and(|t| t == "crash");
        if crashed {
            let tail = self
                .stderr
                .tail_before(since, REQUEST_ENDED, Duration::from_secs(2));
            let num = |k: &str| {
                f.header
                    .pointer(&format!("/error/{k}"))
                    .and_then(Value::as_i64)
                    .map(|v| v as i32)
            };
            let tail = crash_tail(tail, num("signal"), num("exit_code"), None);
            if let Some(e) = f.header.get_mut("error").and_then(Value::as_object_mut) {
                e.insert("stderr_tail".into(), Value::String(tail));
            }
        }
        f
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Executables a worker keeps (`_EXECUTABLES_KEPT` in hlo_worker.py).
pub const WORKER_EXECUTABLES_KEPT: usize = 2;

struct PoolState {
    idle: Vec<Worker>,
    live: usize,
    /// Set once a worker could not start: every later request answers the same.
    unavailable: Option<Outcome>,
    /// The first worker's greeting (versions, devices).
    hello: Option<Value>,
}

/// A pool of persistent workers of one configuration, shared by the backends using it.
pub struct WorkerPool {
    cfg: WorkerConfig,
    state: Mutex<PoolState>,
    cv: Condvar,
    /// The pool of the same configuration whose workers fork per request, made on first use
    /// ([`WorkerBackend::forking`]) and kept, so its workers are started once.
    forking: std::sync::OnceLock<Arc<WorkerPool>>,
    /// The pool of the same configuration whose CPU workers have [`HOST_DEVICES`] host devices,
    /// for SPMD programs (a module whose header says `num_partitions` above 1), made on first
    /// use: a one-device module never pays for more devices.
    partitioned: std::sync::OnceLock<Arc<WorkerPool>>,
}

/// The host devices of a worker that runs SPMD programs on XLA CPU
/// (`--xla_force_host_platform_device_count`): a module partitioned more ways is unsupported.
pub const HOST_DEVICES: usize = 8;

/// `XLA_FLAGS` for a worker with `n` host devices: the flags the worker would inherit (its
/// configuration's, else this process's), the device count added unless they set one.
fn xla_flags_with_devices(cfg: &WorkerConfig, n: usize) -> String {
    let inherited = cfg
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "XLA_FLAGS")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("XLA_FLAGS").ok())
        .unwrap_or_default();
    if inherited.contains("--xla_force_host_platform_device_count") {
        return inherited;
    }
    format!("{inherited} --xla_force_host_platform_device_count={n}")
        .trim()
        .to_string()
}

impl WorkerPool {
    pub fn new(cfg: WorkerConfig) -> Arc<WorkerPool> {
        Arc::new(WorkerPool {
            cfg,
            state: Mutex::new(PoolState {
                idle: Vec::new(),
                live: 0,
                unavailable: None,
                hello: None,
            }),
            cv: Condvar::new(),
            forking: std::sync::OnceLock::new(),
            partitioned: std::sync::OnceLock::new(),
        })
    }

    /// The pool for SPMD programs ([`WorkerPool::partitioned`]): this configuration with
    /// [`HOST_DEVICES`] host devices. This pool itself for a pool already made so (or a Python
    /// pool whose `XLA_FLAGS` already give its workers that many devices).
    pub fn partitioned(self: &Arc<Self>) -> Arc<WorkerPool> {
        let python = self.cfg.pjrt_plugin.is_none();
        let flags = xla_flags_with_devices(&self.cfg, HOST_DEVICES);
        if self.cfg.host_devices >= HOST_DEVICES
            || (python
                && self
                    .cfg
                    .env
                    .iter()
                    .any(|(k, v)| k == "XLA_FLAGS" && *v == flags))
        {
            return self.clone();
        }
        self.partitioned
            .get_or_init(|| {
                let mut cfg = self.cfg.clone();
                cfg.host_devices = HOST_DEVICES;
                if python {
                    cfg.env.retain(|(k, _)| k != "XLA_FLAGS");
                    cfg.env.push(("XLA_FLAGS".into(), flags));
                }
                WorkerPool::new(cfg)
            })
            .clone()
    }

    pub fn config(&self) -> &WorkerConfig {
        &self.cfg
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes an idle worker (one that keeps the executable of this affinity key, else the one
    /// idle longest), starts one, or waits for one to come back.
    fn checkout(&self, affinity: Option<u64>) -> Result<Worker, Outcome> {
        let mut st = self.lock();
        loop {
            if let Some(u) = &st.unavailable {
                return Err(u.clone());
            }
            if !st.idle.is_empty() {
                let i = affinity
                    .and_then(|a| st.idle.iter().position(|w| w.recent.contains(&a)))
                    .unwrap_or(0);
                return Ok(st.idle.remove(i));
            }
            if st.live < self.cfg.workers {
                st.live += 1;
                drop(st);
                let started = Worker::start(&self.cfg);
                let mut st = self.lock();
                return match started {
                    Ok(w) => {
                        st.hello.get_or_insert_with(|| w.hello.clone());
                        Ok(w)
                    }
                    Err(e) => {
                        st.live -= 1;
                        st.unavailable = Some(e.clone());
                        self.cv.notify_all();
                        Err(e)
                    }
                };
            }
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn checkin(&self, w: Option<Worker>) {
        let mut st = self.lock();
        match w {
            Some(w) => st.idle.push(w),
            None => st.live -= 1,
        }
        self.cv.notify_one();
    }

    /// Runs one request on some worker. A worker that fails is dropped (killed) and replaced
    /// by a fresh one on a later request.
    pub fn request(&self, req: &Frame, timeouts: &StageTimeouts) -> Result<Frame, Outcome> {
        self.request_with_affinity(req, timeouts, None)
    }

    /// [`WorkerPool::request`], preferring a worker that keeps the executable of a request
    /// with the same `affinity` key: a worker keeps its last [`WORKER_EXECUTABLES_KEPT`]
    /// executables compiled without dumps (its result says `"kept"`), so the same module on
    /// other inputs runs there without compiling again. Only speed depends on which worker
    /// answers.
    pub fn request_with_affinity(
        &self,
        req: &Frame,
        timeouts: &StageTimeouts,
        affinity: Option<u64>,
    ) -> Result<Frame, Outcome> {
        self.request_until(req, timeouts, affinity, None)
    }

    /// [`WorkerPool::request_with_affinity`], no stage running past `until`
    /// ([`RunOptions::deadline`]).
    pub fn request_until(
        &self,
        req: &Frame,
        timeouts: &StageTimeouts,
        affinity: Option<u64>,
        until: Option<Instant>,
    ) -> Result<Frame, Outcome> {
        // Past the deadline no worker is started (a second or more) for a request that would
        // time out at once.
        if until.is_some_and(|u| Instant::now() >= u) {
            return Err(Outcome::Timeout {
                stage: Stage::Parse,
            });
        }
        let mut w = self.checkout(affinity)?;
        match w.request(req, timeouts, until) {
            Ok(f) => {
                let kept = f.header.get("kept").and_then(Value::as_bool) == Some(true);
                if let Some(a) = affinity.filter(|_| kept) {
                    w.recent.retain(|&k| k != a);
                    w.recent.push(a);
                    if w.recent.len() > WORKER_EXECUTABLES_KEPT {
                        w.recent.remove(0);
                    }
                }
                self.checkin(Some(w));
                Ok(f)
            }
            Err(e) => {
                drop(w);
                self.checkin(None);
                Err(e)
            }
        }
    }

    /// Versions and devices of this pool's Python, starting a worker if none ran yet.
    pub fn info(&self) -> Result<Value, Outcome> {
        if let Some(h) = self.lock().hello.clone() {
            return Ok(h);
        }
        let w = self.checkout(None)?;
        let h = w.hello.clone();
        self.checkin(Some(w));
        Ok(h)
    }

    /// Number of worker processes alive now.
    pub fn live_workers(&self) -> usize {
        self.lock().live
    }
}

/// Which engine inside the worker a backend uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    Xla,
    StablehloRef,
}

/// `xla-cpu`, `xla-gpu` or `stablehlo-ref`: a [`Backend`] over a [`WorkerPool`].
pub struct WorkerBackend {
    name: &'static str,
    engine: Engine,
    pool: Arc<WorkerPool>,
}

impl WorkerBackend {
    /// XLA's CPU compiler.
    pub fn xla_cpu(cfg: WorkerConfig) -> WorkerBackend {
        WorkerBackend {
            name: "xla-cpu",
            engine: Engine::Xla,
            pool: WorkerPool::new(WorkerConfig {
                platform: Platform::Cpu,
                ..cfg
            }),
        }
    }

    /// XLA's GPU compiler through the jax-cuda12 PJRT plugin. Without a GPU or the plugin,
    /// every run is [`Outcome::Unavailable`].
    pub fn xla_gpu(cfg: WorkerConfig) -> WorkerBackend {
        WorkerBackend {
            name: "xla-gpu",
            engine: Engine::Xla,
            pool: WorkerPool::new(WorkerConfig {
                platform: Platform::Cuda,
                ..cfg
            }),
        }
    }

    /// The StableHLO reference interpreter (runs in CPU workers).
    pub fn stablehlo_ref(cfg: WorkerConfig) -> WorkerBackend {
        WorkerBackend {
            name: "stablehlo-ref",
            engine: Engine::StablehloRef,
            pool: WorkerPool::new(WorkerConfig {
                platform: Platform::Cpu,
                ..cfg
            }),
        }
    }

    /// `stablehlo-ref` sharing the workers of a CPU backend (`xla-cpu`).
    pub fn stablehlo_ref_on(cpu: &WorkerBackend) -> WorkerBackend {
        WorkerBackend {
            name: "stablehlo-ref",
            engine: Engine::StablehloRef,
            pool: cpu.pool.clone(),
        }
    }

    /// An XLA PJRT C API plugin through the PJRT worker (`hlo-diff-pjrt-worker`): the module
    /// compiled as an `HloModuleProto`, with no StableHLO round trip. The plugin is
    /// `cfg.pjrt_plugin`, else [`default_pjrt_plugin`].
    pub fn pjrt(cfg: WorkerConfig) -> WorkerBackend {
        let plugin = cfg.pjrt_plugin.clone().unwrap_or_else(default_pjrt_plugin);
        WorkerBackend {
            name: "pjrt",
            engine: Engine::Xla,
            pool: WorkerPool::new(WorkerConfig {
                platform: Platform::Cpu,
                pjrt_plugin: Some(plugin),
                ..cfg
            }),
        }
    }

    /// The backend of that name (`xla-cpu`, `xla-gpu`, `stablehlo-ref`, `pjrt`).
    pub fn by_name(name: &str, cfg: WorkerConfig) -> Option<WorkerBackend> {
        match name {
            "xla-cpu" => Some(WorkerBackend::xla_cpu(cfg)),
            "pjrt" => Some(WorkerBackend::pjrt(cfg)),
            "xla-gpu" => Some(WorkerBackend::xla_gpu(cfg)),
            "stablehlo-ref" => Some(WorkerBackend::stablehlo_ref(cfg)),
            _ => None,
        }
    }

    pub fn pool(&self) -> &Arc<WorkerPool> {
        &self.pool
    }

    /// The same backend on workers that fork per request ([`WorkerConfig::fork_per_request`]:
    /// a pool of its own, made once per pool and started on first use); `None` for `pjrt`,
    /// whose worker does not fork.
    pub fn forking(&self) -> Option<WorkerBackend> {
        let cfg = self.pool.config();
        if cfg.pjrt_plugin.is_some() {
            return None;
        }
        let pool = match cfg.fork_per_request {
            true => self.pool.clone(),
            false => self
                .pool
                .forking
                .get_or_init(|| WorkerPool::new(cfg.clone().with_fork_per_request(true)))
                .clone(),
        };
        Some(WorkerBackend {
            name: self.name,
            engine: self.engine,
            pool,
        })
    }

    /// The worker's greeting: `python`, `jax`, `jaxlib`, `numpy`, `ml_dtypes`, `platform`,
    /// `devices`, `api`.
    pub fn info(&self) -> Result<Value, Outcome> {
        self.pool.info()
    }

    /// XLA's HLO parser only: `Ok(())`, or `Err(Outcome::Rejected{stage: Parse, ..})` with
    /// XLA's message (or another failure outcome).
    pub fn xla_parse(&self, module_text: &str, timeouts: &StageTimeouts) -> Result<(), Outcome> {
        self.text_request("parse", module_text, timeouts)
            .map(|_| ())
    }

    /// XLA's parser then XLA's printer: the module as XLA itself prints it.
    pub fn xla_print(
        &self,
        module_text: &str,
        timeouts: &StageTimeouts,
    ) -> Result<String, Outcome> {
        let f = self.text_request("print", module_text, timeouts)?;
        Ok(f.header
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string())
    }

    fn text_request(
        &self,
        op: &str,
        text: &str,
        timeouts: &StageTimeouts,
    ) -> Result<Frame, Outcome> {
        let f = self.pool.request(
            &Frame::new(json!({"op": op, "hlo": text}), vec![]),
            timeouts,
        )?;
        match result_error(&f) {
            Some(e) => Err(e),
            None => Ok(f),
        }
    }
}

/// The failure a result frame reports, if any.
fn result_error(f: &Frame) -> Option<Outcome> {
    if f.header.get("ok").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let err = f.header.get("error").cloned().unwrap_or(Value::Null);
    let s = |k: &str| err.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let stage = Stage::from_name(&s("stage"));
    let message = s("message");
    Some(match (s("type").as_str(), stage) {
        ("crash", Some(stage)) => Outcome::Crash {
            stage,
            signal: err.get("signal").and_then(Value::as_i64).map(|v| v as i32),
            stderr_tail: s("stderr_tail"),
        },
        ("rejected", Some(stage)) => Outcome::Rejected { stage, message },
        ("unsupported", _) => Outcome::Unsupported { what: message },
        ("unavailable", _) => Outcome::Unavailable { why: message },
        ("bad_inputs", stage) => Outcome::HarnessError { stage, message },
        (t, stage) => Outcome::HarnessError {
            stage,
            message: format!("worker reported a {t:?} failure: {message}"),
        },
    })
}

fn has_token(l: &Literal) -> bool {
    match l {
        Literal::Token => true,
        Literal::Tuple(t) => t.iter().any(has_token),
        Literal::Array(_) => false,
    }
}

impl Backend for WorkerBackend {
    fn name(&self) -> &str {
        self.name
    }

    fn run(&self, module_text: &str, inputs: &[Literal], opts: &RunOptions) -> Outcome {
        if inputs.iter().any(has_token) {
            return Outcome::Unsupported {
                what: "token inputs cannot be fed from the host".into(),
            };
        }
        // An SPMD program runs partitioned, on host devices of a worker that has them.
        let partitions = crate::backend::module_partitions(module_text);
        let pool = match (partitions > 1, self.engine, self.pool.config().platform) {
            (true, Engine::Xla, Platform::Cpu) => self.pool.partitioned(),
            _ => self.pool.clone(),
        };
        let leaves: Vec<&hlo::ArrayLiteral> = inputs.iter().flat_map(Literal::leaves).collect();
        let header = json!({
            "op": "run",
            "engine": match self.engine { Engine::Xla => "xla", Engine::StablehloRef => "stablehlo-ref" },
            "hlo": module_text,
            "inputs": leaves.iter().map(|a| array_header(a)).collect::<Vec<_>>(),
            "options": {
                "dump_to": opts.dump_to.as_ref().map(|p| p.to_string_lossy().into_owned()),
                "pass_re": opts.pass_re,
                "disabled_passes": opts.disabled_passes,
                "env_option_overrides": opts.env_option_overrides,
                "return_optimized_hlo": opts.return_optimized_hlo,
                "return_before_optimizations_hlo": opts.return_before_optimizations_hlo,
                "fresh_compile": opts.fresh_compile,
                "num_partitions": (partitions > 1 && self.engine == Engine::Xla).then_some(partitions),
            },
        });
        let req = Frame::new(header, leaves.iter().map(|a| a.data.clone()).collect());
        // Requests for the same module text and options go to the worker that kept its
        // executable, when that one is idle.
        let affinity = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            module_text.hash(&mut h);
            req.header["options"].to_string().hash(&mut h);
            Some(h.finish())
        };
        let f = match pool.request_until(&req, &opts.timeouts, affinity, opts.deadline) {
            Ok(f) => f,
            Err(o) => return o,
        };
        if let Some(e) = result_error(&f) {
            return e;
        }
        decode_result(f)
    }
}

fn decode_result(f: Frame) -> Outcome {
    let h = &f.header;
    let descs = h
        .get("outputs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if descs.len() != f.buffers.len() {
        return Outcome::HarnessError {
            stage: Some(Stage::Execute),
            message: format!(
                "{} outputs described, {} buffers sent",
                descs.len(),
                f.buffers.len()
            ),
        };
    }
    let mut outputs = Vec::with_capacity(descs.len());
    for (d, b) in descs.iter().zip(f.buffers) {
        match array_from_wire(d, b) {
            Ok(a) => outputs.push(Literal::Array(a)),
            Err(e) => {
                return Outcome::HarnessError {
                    stage: Some(Stage::Execute),
                    message: format!("output: {e}"),
                }
            }
        }
    }
    let t = h.get("timings").cloned().unwrap_or(Value::Null);
    let ms = |k: &str| t.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let text = |k: &str| h.get(k).and_then(Value::as_str).map(str::to_string);
    Outcome::Ok(RunResult {
        outputs,
        result_shape: h.get("result_shape").and_then(shape_from_wire),
        timings: Timings {
            parse_ms: ms("parse_ms"),
            convert_ms: ms("convert_ms"),
            compile_ms: ms("compile_ms"),
            execute_ms: ms("execute_ms"),
            cached: ms("cached") != 0.0,
        },
        optimized_hlo: text("optimized_hlo"),
        before_optimizations_hlo: text("before_optimizations_hlo"),
        dump_dir: text("dump_dir").map(PathBuf::from),
    })
}

#[cfg(test)]
mod stderr_excerpt_tests {
    use super::stderr_excerpt;

    /// A CHECK failure followed by a stack trace longer than the excerpt: the check's line is
    /// kept whole (its file name is the bucket's), the trace's end is kept in whole lines, and
    /// the cut is said.
    #[test]
    fn a_long_stack_trace_keeps_the_line_that_names_the_crash() {
        let mut text = String::from("W1207 warning before\n");
        text.push_str("F1207 12:00:00.000000 123 algebraic_simplifier.cc:586] Check failed: x\n");
        text.push_str("*** Check failure stack trace: ***\n");
        for i in 0..200 {
            text.push_str(&format!(
                "    @ 0x{i:012x} /check/work/main/.venv/lib/frame{i}\n"
            ));
        }
        text.push_str("Fatal Python error: Aborted\n");
        let e = stderr_excerpt(&text, 4096);
        assert!(e.len() < 4096 + 1200, "{}", e.len());
        let first = e.lines().next().unwrap();
        assert!(
            first.contains(" algebraic_simplifier.cc:586] Check failed: x"),
            "{e}"
        );
        assert!(!e.contains("W1207"), "{e}");
        assert!(e.contains("bytes of stderr cut]"), "{e}");
        assert!(e.ends_with("Fatal Python error: Aborted\n"), "{e}");
        // Every kept trace line is whole.
        assert!(e
            .lines()
            .filter(|l| l.contains("0x"))
            .all(|l| l.starts_with("    @ 0x")));
        // What fits is kept as it is.
        assert_eq!(stderr_excerpt("short\n", 4096), "short\n");
    }
}

//! The campaign loop: threads, the resumable watermark, progress, the reports at the end.

use super::stats::stats_of;
use super::tester::Fault;
use super::*;
use engine::engines::Engines;
use findings::store::{CampaignState, CampaignStats, Store};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Shared {
    state: CampaignState,
    /// Completed module indices (in-shard ordinals) above the watermark, with their stats.
    pending: BTreeMap<u64, CampaignStats>,
    /// This run's samples, on the whole campaign's axes (see [`Shared::sample`]).
    timeline: Vec<Sample>,
    /// Where this run starts on those axes: the campaign's seconds and counters before it.
    base: Sample,
    modules_this_run: u64,
    programs_this_run: u64,
    cases_this_run: u64,
    findings_this_run: u64,
    /// New findings of this run: the minimization phase's backlog.
    to_minimize: u64,
    last_save: Instant,
    last_sample: Instant,
}

impl Shared {
    fn new(state: CampaignState) -> Shared {
        let base = Sample {
            t_s: state.elapsed_s,
            modules: state.stats.modules,
            programs: state.stats.programs,
            findings: state.timeline.last().map_or(0, |p| p.findings),
        };
        Shared {
            state,
            pending: BTreeMap::new(),
            timeline: vec![base.clone()],
            base,
            modules_this_run: 0,
            programs_this_run: 0,
            cases_this_run: 0,
            findings_this_run: 0,
            to_minimize: 0,
            last_save: Instant::now(),
            last_sample: Instant::now(),
        }
    }

    /// Counts module index `k` (in-shard ordinal) as done with its stats `st`, and advances
    /// the watermark over completed indices.
    fn complete(&mut self, k: u64, st: CampaignStats) {
        self.modules_this_run += 1;
        self.programs_this_run += st.programs;
        self.cases_this_run += st.cases;
        self.findings_this_run += st.findings_new + st.findings_folded;
        self.to_minimize += st.findings_new;
        self.pending.insert(k, st);
        loop {
            let w = self.state.next_index;
            match self.pending.remove(&w) {
                Some(st) => {
                    self.state.stats.merge(&st);
                    self.state.next_index = w + 1;
                }
                None => break,
            }
        }
    }

    /// This invocation's counters at `t_s` seconds.
    /// A timeline sample `t_s` seconds into this run, on the whole campaign's axes (campaign
    /// seconds, counters over every run), so a resumed campaign's chart goes on where the last
    /// run stopped.
    fn sample(&self, t_s: f64) -> Sample {
        Sample {
            t_s: self.base.t_s + t_s,
            modules: self.base.modules + self.modules_this_run,
            programs: self.base.programs + self.programs_this_run,
            findings: self.base.findings + self.findings_this_run,
        }
    }
}

/// Runs a campaign to its stop condition (or until `stop_flag` is set), writing findings, the
/// state file and the reports under `cfg.out`.
pub fn run_campaign(
    cfg: &CampaignConfig,
    stop_flag: Option<&AtomicBool>,
) -> Result<CampaignSummary, CampaignError> {
    validate(cfg)?;
    let store = Store::open(&cfg.out)?;
    store.clean_temporaries()?;
    let (state, resumed) = load_or_start(&store, cfg)?;
    let engines = Engines::new(
        &cfg.backends,
        cfg.jobs.max(1),
        cfg.python.clone(),
        cfg.voter,
    )?;
    let xla_info = engines.check_available()?;
    engines.warm_up(cfg.jobs.max(1));
    store.save_state(&state)?;
    // Where this campaign runs, once: every finding and the report carry it.
    let environment = engine::environment::Environment::capture(
        &cfg.python
            .clone()
            .unwrap_or_else(engine::worker::default_python),
        engine::environment::hello_of(&xla_info),
        &cfg.xla_options,
    )
    .with_pjrt(&xla_info)
    .to_json();

    let started = Instant::now();
    let tester = Tester {
        campaign_seed: cfg.seed,
        input_sets: cfg.input_sets.max(1),
        environment: Some(environment.clone()),
        clock: Some(super::CampaignClock {
            earlier_s: state.elapsed_s,
            started,
        }),
        ..Tester::new(
            &engines,
            Some(&store),
            &cfg.xla_options,
            cfg.timeouts.clone(),
        )
    };
    let phase = FuzzPhase::new(cfg, stop_flag, &store, &tester, state, started);
    phase.run();
    let (shared, elapsed) = phase.finish()?;
    let mut summary = summary_of(cfg, shared, elapsed, xla_info, resumed);
    summary.environment = environment;
    let interrupted = stop_flag.is_some_and(|f| f.load(Ordering::SeqCst));
    if let (Some(m), false) = (&cfg.minimize, interrupted) {
        summary.minimize = Some(minimize_phase(cfg, &store, m, started)?);
    }
    write_reports(cfg, &store, &summary)?;
    Ok(summary)
}

/// A usage error unless the shard is `I < N` and a stop condition is given.
fn validate(cfg: &CampaignConfig) -> Result<(), CampaignError> {
    let (si, sn) = cfg.shard;
    if sn == 0 || si >= sn {
        return Err(CampaignError::Usage(format!(
            "--shard {si}/{sn}: need I < N"
        )));
    }
    if cfg.stop.time.is_none() && cfg.stop.iterations.is_none() {
        return Err(CampaignError::Usage("give --time or --iterations".into()));
    }
    Ok(())
}

/// The state of the campaign in `store` when it is this configuration's (resumed: `true`), a
/// fresh one when there is none; a usage error when `store` holds a different campaign.
fn load_or_start(
    store: &Store,
    cfg: &CampaignConfig,
) -> Result<(CampaignState, bool), CampaignError> {
    let backends_key: Vec<String> = cfg
        .backends
        .iter()
        .filter(|b| *b != "stablehlo-ref")
        .cloned()
        .collect();
    let fresh = CampaignState {
        seed: cfg.seed,
        shard: cfg.shard,
        next_index: 0,
        elapsed_s: 0.0,
        backends: backends_key.clone(),
        xla_options: cfg.xla_options.clone(),
        pack: cfg.pack.max(1),
        input_sets: cfg.input_sets.max(1),
        stats: CampaignStats::default(),
        timeline: Vec::new(),
    };
    match store.load_state()? {
        Some(s) => {
            if s.seed != fresh.seed
                || s.shard != fresh.shard
                || s.backends != fresh.backends
                || s.pack != fresh.pack
                || s.input_sets != fresh.input_sets
                || s.xla_options != fresh.xla_options
            {
                return Err(CampaignError::Usage(format!(
                    "{} holds a different campaign (seed {}, shard {}/{}, backends {:?}, pack {}, input sets {}, options {:?}); use another --out",
                    cfg.out.display(),
                    s.seed,
                    s.shard.0,
                    s.shard.1,
                    s.backends,
                    s.pack,
                    s.input_sets,
                    s.xla_options
                )));
            }
            Ok((s, true))
        }
        None => Ok((fresh, false)),
    }
}

/// The progress bar over the module indices from `start_index` on (hidden unless asked for
/// and stderr is a terminal).
fn progress_bar(cfg: &CampaignConfig, start_index: u64) -> indicatif::ProgressBar {
    if !(cfg.progress && std::io::stderr().is_terminal()) {
        return indicatif::ProgressBar::hidden();
    }
    let pb = match cfg.stop.iterations {
        Some(n) => indicatif::ProgressBar::new(n.saturating_sub(start_index)),
        None => indicatif::ProgressBar::new_spinner(),
    };
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos} modules {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb.enable_steady_tick(Duration::from_millis(250));
    pb
}

/// The fuzz phase: `cfg.jobs` threads test module indices until a stop condition holds or a
/// fault stops the campaign, folding each module's stats into the shared state.
struct FuzzPhase<'a> {
    cfg: &'a CampaignConfig,
    stop_flag: Option<&'a AtomicBool>,
    store: &'a Store,
    tester: &'a Tester<'a>,
    started: Instant,
    /// How long the phase may run: with minimization and a time limit, a share of the time is
    /// left for minimizing.
    fuzz_time: Option<Duration>,
    /// The next module index (in-shard ordinal) to hand out.
    next: AtomicU64,
    shared: Mutex<Shared>,
    pb: indicatif::ProgressBar,
    /// A failure to save the state file (the campaign goes on, and fails at the end).
    io_error: Mutex<Option<std::io::Error>>,
    /// The first fault a tester met: the campaign stops.
    fault: Mutex<Option<Fault>>,
    halt: AtomicBool,
}

/// What minimizing (and bucketing) one new finding is expected to cost, for the fuzz phase's
/// stop: 0.75 s median and 2-5 s typical on 2 cores in the 2,000-module campaign and nightlies,
/// more for the large modules of the long tail.
const MINIMIZE_ESTIMATE: Duration = Duration::from_secs(3);

impl<'a> FuzzPhase<'a> {
    fn new(
        cfg: &'a CampaignConfig,
        stop_flag: Option<&'a AtomicBool>,
        store: &'a Store,
        tester: &'a Tester<'a>,
        state: CampaignState,
        started: Instant,
    ) -> FuzzPhase<'a> {
        let start_index = state.next_index;
        // With minimization and a time limit, the fuzz phase leaves a share of the time for it.
        let fuzz_time = match (&cfg.minimize, cfg.stop.time) {
            (Some(_), Some(t)) => Some(t.mul_f64((1.0 - cfg.minimize_share).clamp(0.05, 1.0))),
            (_, t) => t,
        };
        FuzzPhase {
            cfg,
            stop_flag,
            store,
            tester,
            started,
            fuzz_time,
            next: AtomicU64::new(start_index),
            shared: Mutex::new(Shared::new(state)),
            pb: progress_bar(cfg, start_index),
            io_error: Mutex::new(None),
            fault: Mutex::new(None),
            halt: AtomicBool::new(false),
        }
    }

    /// Runs the threads until every one of them stops.
    fn run(&self) {
        std::thread::scope(|s| {
            for _ in 0..self.cfg.jobs.max(1) {
                s.spawn(|| {
                    while let Some(k) = self.next_index() {
                        if !self.test_module(k) {
                            break;
                        }
                    }
                });
            }
        });
        self.pb.finish_and_clear();
    }

    /// The next module index (in-shard ordinal) to test, or `None` once the campaign is halted
    /// or stopped, the phase's time is up or the last index is handed out.
    fn next_index(&self) -> Option<u64> {
        if self.halt.load(Ordering::SeqCst)
            || self.stop_flag.is_some_and(|f| f.load(Ordering::SeqCst))
        {
            return None;
        }
        if self.fuzz_time.is_some_and(|t| self.started.elapsed() >= t) {
            return None;
        }
        // The share kept for minimizing is a floor: when the new findings so far would take
        // longer to minimize (at MINIMIZE_ESTIMATE each), fuzzing stops sooner, so that a
        // timed campaign buckets what it found rather than leaving findings unminimized.
        if let (Some(_), Some(total)) = (&self.cfg.minimize, self.cfg.stop.time) {
            let backlog = self.shared.lock().map(|s| s.to_minimize).unwrap_or(0);
            let need = MINIMIZE_ESTIMATE.mul_f64(backlog as f64);
            if self.started.elapsed() + need >= total {
                return None;
            }
        }
        let k = self.next.fetch_add(1, Ordering::SeqCst);
        if self.cfg.stop.iterations.is_some_and(|n| k >= n) {
            return None;
        }
        Some(k)
    }

    /// Tests module index `k` (in-shard ordinal) and records its stats; `false` when the
    /// tester met a fault (the campaign halts).
    fn test_module(&self, k: u64) -> bool {
        let (si, sn) = self.cfg.shard;
        let g = k * sn + si;
        let tg = Instant::now();
        let programs = programs_for(
            self.cfg.seed,
            g,
            self.cfg.pack.max(1),
            &self.cfg.generator,
            self.cfg.swarm,
        );
        let gen_ms = tg.elapsed().as_secs_f64() * 1e3;
        let (reports, tm) = self.tester.test_programs_timed(g, &programs);
        if let Some(f) = self.tester.take_fault() {
            // This module is not counted as done: a resumed campaign tests it again.
            self.fault
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(f);
            self.halt.store(true, Ordering::SeqCst);
            return false;
        }
        let mut st = stats_of(&reports);
        st.time.add(&tm, gen_ms);
        self.record(k, st);
        true
    }

    /// Folds module index `k`'s stats into the shared state (counters and watermark); at most
    /// every 500 ms adds a timeline sample and saves the state file; updates the progress bar.
    fn record(&self, k: u64, st: CampaignStats) {
        let mut sh = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        sh.complete(k, st);
        let now = Instant::now();
        if now.duration_since(sh.last_sample) >= Duration::from_millis(500) {
            sh.last_sample = now;
            let sample = sh.sample(self.started.elapsed().as_secs_f64());
            sh.timeline.push(sample);
        }
        if now.duration_since(sh.last_save) >= Duration::from_millis(500) {
            sh.last_save = now;
            let mut snapshot = sh.state.clone();
            snapshot.elapsed_s += self.started.elapsed().as_secs_f64();
            if let Err(e) = self.store.save_state(&snapshot) {
                *self.io_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
            }
        }
        self.show_progress(&sh);
    }

    /// The progress bar's position and message: rates, findings by verdict, crashes, ops
    /// covered.
    fn show_progress(&self, sh: &Shared) {
        let el = self.started.elapsed().as_secs_f64().max(1e-9);
        self.pb.set_position(sh.modules_this_run);
        let findings: Vec<String> = sh
            .state
            .stats
            .verdicts
            .iter()
            .filter(|(k, _)| *k != "match" && *k != "unsupported")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        self.pb.set_message(format!(
            "{:.1} modules/s {:.1} programs/s {:.1} cases/s | findings: {} | crashes {} | ops {}",
            sh.modules_this_run as f64 / el,
            sh.programs_this_run as f64 / el,
            sh.cases_this_run as f64 / el,
            if findings.is_empty() {
                "none".into()
            } else {
                findings.join(" ")
            },
            sh.state.stats.verdicts.get("crash").copied().unwrap_or(0),
            sh.state.stats.op_coverage.len()
        ));
    }

    /// Ends the phase: the state file saved with this invocation's time added; a state file
    /// that could not be saved, or a fault, is the campaign's error. Otherwise the shared
    /// state, its timeline's last sample added, and the phase's seconds.
    fn finish(self) -> Result<(Shared, f64), CampaignError> {
        let elapsed = self.started.elapsed().as_secs_f64();
        let mut sh = self.shared.into_inner().unwrap_or_else(|e| e.into_inner());
        sh.state.elapsed_s += elapsed;
        let last = sh.sample(elapsed);
        sh.timeline.push(last);
        // The whole campaign's timeline: this run's samples after the earlier runs' (its
        // first sample repeats their last one), thinned to at most 2,000 points.
        let mut run = std::mem::take(&mut sh.timeline);
        if !sh.state.timeline.is_empty() {
            run.remove(0);
        }
        sh.state.timeline.extend(run);
        thin(&mut sh.state.timeline, 2000);
        self.store.save_state(&sh.state)?;
        if let Some(e) = self
            .io_error
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
        {
            return Err(CampaignError::Io(e));
        }
        match self.fault.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Fault::Store(e)) => {
                return Err(CampaignError::Io(std::io::Error::new(
                    e.kind(),
                    format!("could not store a finding, campaign stopped: {e}"),
                )))
            }
            Some(Fault::Unavailable(why)) => {
                return Err(CampaignError::Infrastructure(format!(
                    "an XLA backend became unavailable, campaign stopped: {why}"
                )))
            }
            None => {}
        }
        Ok((sh, elapsed))
    }
}

/// Keeps at most `n` samples of `t`: every other one dropped (the last kept) while too long.
fn thin(t: &mut Vec<Sample>, n: usize) {
    while t.len() > n.max(2) {
        let last = t.pop();
        let mut i = 0;
        t.retain(|_| {
            i += 1;
            i % 2 == 1
        });
        t.extend(last);
    }
}

/// The summary of the fuzz phase (`sh`, `elapsed` seconds), minimization not yet done.
fn summary_of(
    cfg: &CampaignConfig,
    sh: Shared,
    elapsed: f64,
    xla_info: serde_json::Value,
    resumed: bool,
) -> CampaignSummary {
    CampaignSummary {
        seed: cfg.seed,
        shard: cfg.shard,
        backends: cfg.backends.clone(),
        xla_options: cfg.xla_options.clone(),
        pack: cfg.pack.max(1),
        input_sets: cfg.input_sets.max(1),
        jobs: cfg.jobs.max(1),
        elapsed_s: elapsed,
        stats: sh.state.stats.clone(),
        modules_this_run: sh.modules_this_run,
        programs_this_run: sh.programs_this_run,
        cases_this_run: sh.cases_this_run,
        modules_per_s: sh.modules_this_run as f64 / elapsed.max(1e-9),
        programs_per_s: sh.programs_this_run as f64 / elapsed.max(1e-9),
        cases_per_s: sh.cases_this_run as f64 / elapsed.max(1e-9),
        campaign_elapsed_s: sh.state.elapsed_s,
        timeline: sh.state.timeline.clone(),
        xla_info,
        environment: serde_json::Value::Null,
        out: cfg.out.clone(),
        resumed,
        minimize: None,
    }
}

/// The minimization phase: with a time limit, the time left of it (at least 5 s) is its
/// budget, else `m`'s.
fn minimize_phase(
    cfg: &CampaignConfig,
    store: &Store,
    m: &MinimizeConfig,
    started: Instant,
) -> Result<MinimizeSummary, CampaignError> {
    let budget = match cfg.stop.time {
        Some(t) => Some(
            t.saturating_sub(started.elapsed())
                .max(Duration::from_secs(5)),
        ),
        None => m.budget,
    };
    let m = MinimizeConfig {
        budget,
        ..m.clone()
    };
    Ok(super::minimize_pending(
        store,
        cfg.python.clone(),
        cfg.jobs.max(1),
        &m,
        cfg.progress,
    )?)
}

/// The reports under `cfg.out` (buckets against the registry and the history), and the
/// history updated when the campaign keeps one.
fn write_reports(
    cfg: &CampaignConfig,
    store: &Store,
    summary: &CampaignSummary,
) -> Result<(), CampaignError> {
    let registry = findings::registry::Registry::load_or_default(cfg.registry.as_deref())
        .map_err(|e| CampaignError::Usage(e.to_string()))?;
    let history = findings::report::read_history(cfg.history.as_deref())?;
    findings::report::write_reports(summary, store, &registry, &history)?;
    if let Some(h) = &cfg.history {
        findings::report::update_history(h, store, &registry, &history)?;
    }
    Ok(())
}

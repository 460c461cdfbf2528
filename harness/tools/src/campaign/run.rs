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
    /// Modules the deadline cut (not counted: a resumed campaign tests them again).
    cut: u64,
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
            cut: 0,
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
/// state file and the reports under `cfg.out`. With a time limit, everything (start-up,
/// fuzzing, minimizing, the reports) ends within it: see [`Deadlines`].
pub fn run_campaign(
    cfg: &CampaignConfig,
    stop_flag: Option<&AtomicBool>,
) -> Result<CampaignSummary, CampaignError> {
    let clock = Deadlines::new(Instant::now(), cfg);
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

    // Rounds of fuzzing then minimizing: a timed campaign whose minimization is done before
    // its end fuzzes again in the time left (`Deadlines::next_round`), so it ends near its
    // limit, not when its first minimization happens to end.
    let mut calibration = Some(super::calibrate::Calibration::new(
        super::calibrate::floor_timeouts(),
        cfg.timeouts.clone(),
    ));
    let mut state = state;
    let mut round = Some(clock);
    let mut totals = Totals::default();
    let mut minimized: Option<MinimizeSummary> = None;
    let mut last = None;
    while let Some(clock) = round {
        let started = Instant::now();
        let tester = Tester {
            campaign_seed: cfg.seed,
            input_sets: cfg.input_sets.max(1),
            environment: Some(environment.clone()),
            clock: Some(super::CampaignClock {
                earlier_s: state.elapsed_s,
                started,
            }),
            calibration: calibration.take(),
            deadline: clock.end,
            ..Tester::new(
                &engines,
                Some(&store),
                &cfg.xla_options,
                cfg.timeouts.clone(),
            )
        };
        let phase = FuzzPhase::new(cfg, stop_flag, &store, &tester, state, started, clock);
        phase.run();
        let (shared, elapsed) = phase.finish()?;
        calibration = tester.calibration;
        totals.add(&shared, elapsed);
        state = shared.state.clone();
        let interrupted = stop_flag.is_some_and(|f| f.load(Ordering::SeqCst));
        if let (Some(m), false) = (&cfg.minimize, interrupted) {
            let done = minimize_phase(cfg, &store, m, clock)?;
            minimized = Some(match minimized {
                Some(before) => before.then(&done),
                None => done,
            });
        }
        let more = cfg.stop.iterations.is_none_or(|n| state.next_index < n);
        round = match (interrupted, more, shared.modules_this_run + shared.cut > 0) {
            (false, true, true) => clock.next_round(Instant::now(), cfg),
            _ => None,
        };
        last = Some(shared);
    }
    let Some(shared) = last else {
        unreachable!("the first round always runs");
    };
    let mut summary = summary_of(cfg, shared, &totals, xla_info, resumed);
    summary.environment = environment;
    summary.minimize = minimized;
    summary.finish_command = finish_command(cfg);
    write_reports(cfg, &store, &summary)?;
    Ok(summary)
}

/// What every round of this run did.
#[derive(Clone, Debug, Default)]
struct Totals {
    modules: u64,
    programs: u64,
    cases: u64,
    cut: u64,
    /// Seconds of fuzzing.
    elapsed_s: f64,
}

impl Totals {
    fn add(&mut self, sh: &Shared, elapsed_s: f64) {
        self.modules += sh.modules_this_run;
        self.programs += sh.programs_this_run;
        self.cases += sh.cases_this_run;
        self.cut += sh.cut;
        self.elapsed_s += elapsed_s;
    }
}

/// The command that minimizes and buckets what a campaign left (the campaign resumed without
/// testing more modules: `hlo-diff fuzz --finish`, the campaign's parameters read from its
/// `campaign.json`).
pub fn finish_command(cfg: &CampaignConfig) -> String {
    let mut c = format!(
        "hlo-diff fuzz --out {} --finish",
        shell_word(&cfg.out.display().to_string())
    );
    if let Some(p) = &cfg.python {
        c.push_str(&format!(
            " --python {}",
            shell_word(&p.display().to_string())
        ));
    }
    if let Some(r) = &cfg.registry {
        c.push_str(&format!(
            " --registry {}",
            shell_word(&r.display().to_string())
        ));
    }
    if let Some(h) = &cfg.history {
        c.push_str(&format!(
            " --history {}",
            shell_word(&h.display().to_string())
        ));
    }
    c
}

/// `w` as one word of a POSIX shell command line.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// When a timed campaign's parts must end, all measured from the start of `run_campaign` (the
/// user's clock: worker start-up counts).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Deadlines {
    /// When fuzzing stops handing out modules: the time limit less the share kept for
    /// minimizing (earlier when the findings' minimization needs more, [`FuzzPhase`]).
    pub fuzz_end: Option<Instant>,
    /// When every XLA run, fuzzing or minimizing, ends (a module or minimization it cuts does
    /// not count): the time limit less [`Deadlines::reserve`] for the reports.
    pub end: Option<Instant>,
}

impl Deadlines {
    /// What is kept at the end of a timed campaign for writing the reports and stopping the
    /// workers: 0.5 s plus 1% of the limit, at most 5 s.
    pub fn reserve(limit: Duration) -> Duration {
        (Duration::from_millis(500) + limit / 100).min(Duration::from_secs(5))
    }

    /// The next round of fuzzing then minimizing at `now`, when a timed campaign has time left
    /// for one (at least [`Deadlines::least_round`]): fuzzing again until its share of what is
    /// left is used, the same end.
    pub fn next_round(&self, now: Instant, cfg: &CampaignConfig) -> Option<Deadlines> {
        let (end, limit) = (self.end?, cfg.stop.time?);
        let left = end
            .checked_duration_since(now)
            .filter(|l| *l >= Deadlines::least_round(limit))?;
        Some(Deadlines {
            fuzz_end: Some(now + Deadlines::fuzz_share(cfg, left)),
            end: Some(end),
        })
    }

    /// The least time left for another round: 5% of the limit, at least 2 s (less is left
    /// unused: the campaign ends within 5% of its limit).
    pub fn least_round(limit: Duration) -> Duration {
        (limit / 20).max(Duration::from_secs(2))
    }

    /// Of `time`, what fuzzing takes: all of it without minimization, else all but the share
    /// kept for minimizing.
    fn fuzz_share(cfg: &CampaignConfig, time: Duration) -> Duration {
        match &cfg.minimize {
            Some(_) => time.mul_f64((1.0 - cfg.minimize_share).clamp(0.05, 1.0)),
            None => time,
        }
    }

    pub fn new(t0: Instant, cfg: &CampaignConfig) -> Deadlines {
        let Some(limit) = cfg.stop.time else {
            return Deadlines {
                fuzz_end: None,
                end: None,
            };
        };
        let end = t0 + limit.saturating_sub(Deadlines::reserve(limit));
        Deadlines {
            fuzz_end: Some((t0 + Deadlines::fuzz_share(cfg, limit)).min(end)),
            end: Some(end),
        }
    }
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
    clock: Deadlines,
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

/// Whether the fuzz phase hands out another module at `now`, with `backlog` new findings to
/// minimize: before `fuzz_end`, and while their minimization (at [`MINIMIZE_ESTIMATE`] each)
/// still fits before `end`. The share kept for minimizing is a floor: a campaign with many new
/// findings stops fuzzing sooner, so that it buckets what it found rather than leaving it.
fn fuzzing_goes_on(clock: &Deadlines, now: Instant, backlog: u64) -> bool {
    if clock.fuzz_end.is_some_and(|t| now >= t) {
        return false;
    }
    clock
        .end
        .is_none_or(|end| now + MINIMIZE_ESTIMATE.mul_f64(backlog as f64) < end)
}

impl<'a> FuzzPhase<'a> {
    fn new(
        cfg: &'a CampaignConfig,
        stop_flag: Option<&'a AtomicBool>,
        store: &'a Store,
        tester: &'a Tester<'a>,
        state: CampaignState,
        started: Instant,
        clock: Deadlines,
    ) -> FuzzPhase<'a> {
        let start_index = state.next_index;
        FuzzPhase {
            cfg,
            stop_flag,
            store,
            tester,
            started,
            clock,
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
        let backlog = match self.cfg.minimize {
            Some(_) => self.shared.lock().map(|s| s.to_minimize).unwrap_or(0),
            None => 0,
        };
        if !fuzzing_goes_on(&self.clock, Instant::now(), backlog) {
            return None;
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
        let tested = self.tester.test_programs_timed(g, &programs);
        if tested.cut {
            // The deadline cut it: not counted, a resumed campaign tests it again.
            self.shared.lock().unwrap_or_else(|e| e.into_inner()).cut += 1;
            return false;
        }
        let (reports, tm) = (tested.reports, tested.timings);
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

/// The summary of the fuzzing of this run (`sh`, the last round's state; `t`, what every
/// round did), minimization not yet added.
fn summary_of(
    cfg: &CampaignConfig,
    sh: Shared,
    t: &Totals,
    xla_info: serde_json::Value,
    resumed: bool,
) -> CampaignSummary {
    let elapsed = t.elapsed_s;
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
        modules_this_run: t.modules,
        programs_this_run: t.programs,
        cases_this_run: t.cases,
        modules_per_s: t.modules as f64 / elapsed.max(1e-9),
        programs_per_s: t.programs as f64 / elapsed.max(1e-9),
        cases_per_s: t.cases as f64 / elapsed.max(1e-9),
        campaign_elapsed_s: sh.state.elapsed_s,
        timeline: sh.state.timeline.clone(),
        xla_info,
        environment: serde_json::Value::Null,
        out: cfg.out.clone(),
        resumed,
        minimize: None,
        modules_cut: t.cut,
        finish_command: String::new(),
    }
}

/// The minimization phase: with a time limit, until the campaign's end (what it does not
/// finish is left, and the reports say how to finish it), else within `m`'s budget.
fn minimize_phase(
    cfg: &CampaignConfig,
    store: &Store,
    m: &MinimizeConfig,
    clock: Deadlines,
) -> Result<MinimizeSummary, CampaignError> {
    let m = match clock.end {
        Some(end) => MinimizeConfig {
            budget: None,
            deadline: Some(end),
            ..m.clone()
        },
        None => m.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(secs: u64, minimize: bool) -> CampaignConfig {
        CampaignConfig {
            stop: Stop {
                time: Some(Duration::from_secs(secs)),
                iterations: None,
            },
            minimize: minimize.then(MinimizeConfig::default),
            ..CampaignConfig::default()
        }
    }

    /// Every part of a timed campaign ends within its limit, measured from the start.
    #[test]
    fn a_timed_campaign_ends_within_its_limit_reports_included() {
        let t0 = Instant::now();
        let d = Deadlines::new(t0, &timed(60, true));
        let end = d.end.unwrap();
        // 0.5 s + 1% of 60 s kept for the reports.
        assert_eq!(end - t0, Duration::from_millis(58_900));
        // Fuzzing stops after 80% (the default minimize share is 20%).
        assert_eq!(d.fuzz_end.unwrap() - t0, Duration::from_secs(48));
        // Without minimization fuzzing takes it all, up to the reports' reserve.
        let d = Deadlines::new(t0, &timed(60, false));
        assert_eq!(d.fuzz_end, d.end);
        // A long campaign keeps at most 5 s for its reports.
        let d = Deadlines::new(t0, &timed(3600, true));
        assert_eq!(d.end.unwrap() - t0, Duration::from_secs(3595));
        // The reserve is taken from the limit, never added to it, and leaves most of it.
        for secs in [5, 10, 60, 600, 36_000] {
            let r = Deadlines::reserve(Duration::from_secs(secs));
            assert!(r.as_secs_f64() <= 0.11 * secs as f64, "{secs}: {r:?}");
        }
        // No time limit: no deadline.
        let d = Deadlines::new(
            t0,
            &CampaignConfig {
                stop: Stop {
                    time: None,
                    iterations: Some(10),
                },
                ..CampaignConfig::default()
            },
        );
        assert_eq!((d.fuzz_end, d.end), (None, None));
    }

    /// A campaign whose minimization ends early fuzzes again in what is left, keeping the
    /// minimize share of it, until less than 5% of the limit (at least 2 s) is left.
    #[test]
    fn time_left_after_minimizing_goes_to_another_round() {
        let t0 = Instant::now();
        let cfg = timed(60, true);
        let first = Deadlines::new(t0, &cfg);
        let end = first.end.unwrap();
        // Minimization ended at 40 s: 18.9 s left, 80% of it fuzzing.
        let second = first
            .next_round(t0 + Duration::from_secs(40), &cfg)
            .unwrap();
        assert_eq!(second.end, first.end);
        assert_eq!(
            second.fuzz_end.unwrap() - t0,
            Duration::from_secs(40) + Duration::from_millis(18_900).mul_f64(0.8)
        );
        // 3 s (5% of 60 s) left: another round; less: none.
        assert!(first
            .next_round(end - Duration::from_secs(3), &cfg)
            .is_some());
        assert!(first
            .next_round(end - Duration::from_millis(2_999), &cfg)
            .is_none());
        assert!(first
            .next_round(end + Duration::from_secs(1), &cfg)
            .is_none());
        // An untimed campaign has one round.
        let untimed = Deadlines {
            fuzz_end: None,
            end: None,
        };
        assert_eq!(untimed.next_round(t0, &cfg), None);
        assert_eq!(
            Deadlines::least_round(Duration::from_secs(10)),
            Duration::from_secs(2)
        );
    }

    #[test]
    fn fuzzing_stops_at_its_share_or_sooner_when_the_findings_need_the_time() {
        let t0 = Instant::now();
        let d = Deadlines::new(t0, &timed(60, true));
        assert!(fuzzing_goes_on(&d, t0, 0));
        assert!(fuzzing_goes_on(&d, t0 + Duration::from_secs(47), 0));
        assert!(!fuzzing_goes_on(&d, t0 + Duration::from_secs(48), 0));
        // 10 findings at 3 s each need 30 s of the 58.9 s: fuzzing stops before 28.9 s.
        assert!(fuzzing_goes_on(&d, t0 + Duration::from_secs(28), 10));
        assert!(!fuzzing_goes_on(&d, t0 + Duration::from_secs(29), 10));
        let untimed = Deadlines {
            fuzz_end: None,
            end: None,
        };
        assert!(fuzzing_goes_on(
            &untimed,
            t0 + Duration::from_secs(1 << 20),
            1000
        ));
    }

    #[test]
    fn the_finish_command_names_the_campaign_and_what_it_was_run_with() {
        let cfg = CampaignConfig {
            out: "runs/my campaign".into(),
            registry: Some("reg".into()),
            ..CampaignConfig::default()
        };
        assert_eq!(
            finish_command(&cfg),
            "hlo-diff fuzz --out 'runs/my campaign' --finish --registry reg"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}

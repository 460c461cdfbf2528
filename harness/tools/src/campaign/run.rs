//! The campaign loop: threads, the resumable watermark, progress, the reports at the end.

use super::stats::stats_of;
use super::tester::Fault;
#[allow(unused_imports)]
use super::*;
#[allow(unused_imports)]
use engine::backend::{Backend, Outcome, RunOptions, RunResult, StageTimeouts};
#[allow(unused_imports)]
use engine::engines::Engines;
#[allow(unused_imports)]
use findings::store::{CampaignState, CampaignStats, NewFinding, Recorded, Signature, Store};
#[allow(unused_imports)]
use findings::timings::ModuleTimings;
#[allow(unused_imports)]
use hlo::{Literal, Module};
#[allow(unused_imports)]
use judge::classify::{Label, Verdict, VerdictKind, ORACLE};
#[allow(unused_imports)]
use judge::compare::Tolerance;
#[allow(unused_imports)]
use serde_json::json;
#[allow(unused_imports)]
use std::collections::BTreeMap;
#[allow(unused_imports)]
use std::io::IsTerminal;
#[allow(unused_imports)]
use std::path::{Path, PathBuf};
#[allow(unused_imports)]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
#[allow(unused_imports)]
use std::sync::{Arc, Mutex, OnceLock};
#[allow(unused_imports)]
use std::time::{Duration, Instant};

struct Shared {
    state: CampaignState,
    /// Completed module indices (in-shard ordinals) above the watermark, with their stats.
    pending: BTreeMap<u64, CampaignStats>,
    timeline: Vec<Sample>,
    modules_this_run: u64,
    programs_this_run: u64,
    cases_this_run: u64,
    findings_this_run: u64,
    last_save: Instant,
    last_sample: Instant,
}

/// Runs a campaign to its stop condition (or until `stop_flag` is set), writing findings, the
/// state file and the reports under `cfg.out`.
pub fn run_campaign(
    cfg: &CampaignConfig,
    stop_flag: Option<&AtomicBool>,
) -> Result<CampaignSummary, CampaignError> {
    let (si, sn) = cfg.shard;
    if sn == 0 || si >= sn {
        return Err(CampaignError::Usage(format!(
            "--shard {si}/{sn}: need I < N"
        )));
    }
    if cfg.stop.time.is_none() && cfg.stop.iterations.is_none() {
        return Err(CampaignError::Usage("give --time or --iterations".into()));
    }
    let store = Store::open(&cfg.out)?;
    store.clean_temporaries()?;
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
    };
    let (state, resumed) = match store.load_state()? {
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
            (s, true)
        }
        None => (fresh, false),
    };
    let engines = Engines::new(
        &cfg.backends,
        cfg.jobs.max(1),
        cfg.python.clone(),
        cfg.voter,
    )?;
    let xla_info = engines.check_available()?;
    engines.warm_up(cfg.jobs.max(1));
    store.save_state(&state)?;

    let started = Instant::now();
    let start_index = state.next_index;
    let next = AtomicU64::new(start_index);
    let shared = Mutex::new(Shared {
        state,
        pending: BTreeMap::new(),
        timeline: vec![Sample {
            t_s: 0.0,
            modules: 0,
            programs: 0,
            findings: 0,
        }],
        modules_this_run: 0,
        programs_this_run: 0,
        cases_this_run: 0,
        findings_this_run: 0,
        last_save: Instant::now(),
        last_sample: Instant::now(),
    });
    let pb = if cfg.progress && std::io::stderr().is_terminal() {
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
    } else {
        indicatif::ProgressBar::hidden()
    };
    let tester = Tester {
        campaign_seed: cfg.seed,
        input_sets: cfg.input_sets.max(1),
        generator: cfg.generator.clone(),
        ..Tester::new(
            &engines,
            Some(&store),
            &cfg.xla_options,
            cfg.timeouts.clone(),
        )
    };
    let io_error: Mutex<Option<std::io::Error>> = Mutex::new(None);
    let fault: Mutex<Option<Fault>> = Mutex::new(None);
    let halt = AtomicBool::new(false);
    let pack = cfg.pack.max(1);

    // With minimization and a time limit, the fuzz phase leaves a share of the time for it.
    let fuzz_time = match (&cfg.minimize, cfg.stop.time) {
        (Some(_), Some(t)) => Some(t.mul_f64((1.0 - cfg.minimize_share).clamp(0.05, 1.0))),
        (_, t) => t,
    };
    std::thread::scope(|s| {
        for _ in 0..cfg.jobs.max(1) {
            s.spawn(|| loop {
                if halt.load(Ordering::SeqCst) || stop_flag.is_some_and(|f| f.load(Ordering::SeqCst))
                {
                    break;
                }
                if fuzz_time.is_some_and(|t| started.elapsed() >= t) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::SeqCst);
                if cfg.stop.iterations.is_some_and(|n| k >= n) {
                    break;
                }
                let g = k * sn + si;
                let tg = Instant::now();
                let programs = programs_for(cfg.seed, g, pack, &cfg.generator);
                let gen_ms = tg.elapsed().as_secs_f64() * 1e3;
                let (reports, tm) = tester.test_programs_timed(g, &programs);
                if let Some(f) = tester.take_fault() {
                    // This module is not counted as done: a resumed campaign tests it again.
                    fault.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(f);
                    halt.store(true, Ordering::SeqCst);
                    break;
                }
                let mut st = stats_of(&reports);
                st.time.add(&tm, gen_ms);
                let mut sh = shared.lock().unwrap_or_else(|e| e.into_inner());
                sh.modules_this_run += 1;
                sh.programs_this_run += st.programs;
                sh.cases_this_run += st.cases;
                sh.findings_this_run += st.findings_new + st.findings_folded;
                sh.pending.insert(k, st);
                // Advance the watermark over completed indices.
                loop {
                    let w = sh.state.next_index;
                    match sh.pending.remove(&w) {
                        Some(st) => {
                            sh.state.stats.merge(&st);
                            sh.state.next_index = w + 1;
                        }
                        None => break,
                    }
                }
                let now = Instant::now();
                if now.duration_since(sh.last_sample) >= Duration::from_millis(500) {
                    sh.last_sample = now;
                    let sample = Sample {
                        t_s: started.elapsed().as_secs_f64(),
                        modules: sh.modules_this_run,
                        programs: sh.programs_this_run,
                        findings: sh.findings_this_run,
                    };
                    sh.timeline.push(sample);
                }
                if now.duration_since(sh.last_save) >= Duration::from_millis(500) {
                    sh.last_save = now;
                    let mut snapshot = sh.state.clone();
                    snapshot.elapsed_s += started.elapsed().as_secs_f64();
                    if let Err(e) = store.save_state(&snapshot) {
                        *io_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    }
                }
                let el = started.elapsed().as_secs_f64().max(1e-9);
                pb.set_position(sh.modules_this_run);
                let findings: Vec<String> = sh
                    .state
                    .stats
                    .verdicts
                    .iter()
                    .filter(|(k, _)| *k != "match" && *k != "unsupported")
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                pb.set_message(format!(
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
            });
        }
    });
    pb.finish_and_clear();

    let elapsed = started.elapsed().as_secs_f64();
    let mut sh = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    sh.state.elapsed_s += elapsed;
    store.save_state(&sh.state)?;
    if let Some(e) = io_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(CampaignError::Io(e));
    }
    match fault.into_inner().unwrap_or_else(|e| e.into_inner()) {
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
    sh.timeline.push(Sample {
        t_s: elapsed,
        modules: sh.modules_this_run,
        programs: sh.programs_this_run,
        findings: sh.findings_this_run,
    });
    let summary = CampaignSummary {
        seed: cfg.seed,
        shard: cfg.shard,
        backends: cfg.backends.clone(),
        xla_options: cfg.xla_options.clone(),
        pack,
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
        timeline: sh.timeline,
        xla_info,
        out: cfg.out.clone(),
        resumed,
        minimize: None,
    };
    let mut summary = summary;
    let interrupted = stop_flag.is_some_and(|f| f.load(Ordering::SeqCst));
    if let (Some(m), false) = (&cfg.minimize, interrupted) {
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
        summary.minimize = Some(super::minimize_pending(
            &store,
            cfg.python.clone(),
            cfg.jobs.max(1),
            &m,
            cfg.progress,
        )?);
    }
    let registry = findings::registry::Registry::load(&cfg.registry)
        .map_err(|e| CampaignError::Usage(e.to_string()))?;
    let history = findings::report::read_history(cfg.history.as_deref())?;
    findings::report::write_reports(&summary, &store, &registry, &history)?;
    if let Some(h) = &cfg.history {
        findings::report::update_history(h, &store, &registry, &history)?;
    }
    Ok(summary)
}

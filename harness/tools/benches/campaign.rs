//! Campaign throughput against the raw compile limit.
//!
//! - the default campaign (what `hlo-diff fuzz` and `scripts/campaign` run: `CampaignConfig`'s
//!   defaults, i.e. pack 8, `DEFAULT_INPUT_SETS` input sets, swarm, the default generator with
//!   its mutation share and structural knobs) against the raw limit on the same modules: each
//!   packed module and its input sets sent straight to the pool by `jobs` threads (compiled
//!   once, the later sets on the kept executable), no oracle, no judge, no store; cases/s over
//!   cases/s (goal >= 0.9; the raw limit measured before and after, as it drifts), and where
//!   the campaign threads' time went (XLA compile, XLA execute, oracle beyond XLA, judge,
//!   confirmation, idle);
//! - raw: the same generated programs (one per module, as a pack=1 campaign makes them) sent
//!   straight to the XLA worker pool by `jobs` threads, no oracle, no comparison, no store:
//!   the most modules/s XLA can compile and run here;
//! - campaign pack=1: modules/s of a real campaign (oracle, comparison, store, state file),
//!   one input set; target >= 90% of raw (the mean of the raw limit measured before and right
//!   after it, since the limit drifts between measurements on a shared host);
//! - campaign pack=K: programs tested/s through packing, one input set, against the packing
//!   bound below (the fixed cost of a compile is all packing saves);
//! - campaign pack=K with the default input sets (`DEFAULT_INPUT_SETS`): programs/s and
//!   cases/s (program x input set) of the default configuration, the later sets running the
//!   compiled module again;
//! - per campaign: where a module's time went, and the cost of each set of legitimate results
//!   the judge computed (median and max per judged difference);
//! - floor: the same pool on the smallest modules (one `add` each): the fixed cost of one
//!   XLA compile and run. Packing K programs saves K-1 of these fixed costs and nothing
//!   else, so with t = 1/raw and f = 1/floor (seconds per module at full pool throughput)
//!   no packed campaign can exceed K*t / (f + K*(t - f)) times raw, nor t / (t - f) for any
//!   K. The bench prints that bound next to the measured ratio.
//!
//!     cargo bench -p tools --bench campaign   (HLO_DIFF_BENCH_MODULES=N, default 40;
//!                                                HLO_DIFF_BENCH_PACK=K, default 8;
//!                                                HLO_DIFF_BENCH_DEFAULT_ONLY=1: the first
//!                                                measure only)

use engine::backend::{Backend, RunOptions};
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use std::time::Instant;
use tools::campaign::{
    campaign_timeouts, inputs_for, programs_for, run_campaign, CampaignConfig, CampaignSummary,
    Stop, DEFAULT_INPUT_SETS,
};

/// The packed modules of a default campaign's first `modules` indices, each with its input
/// sets: what the campaign sends XLA, as text and inputs.
fn default_modules(seed: u64, modules: u64) -> Vec<(String, Vec<Vec<hlo::Literal>>, usize)> {
    let d = CampaignConfig::default();
    (0..modules)
        .map(|g| {
            let programs = programs_for(seed, g, d.pack, &d.generator, d.swarm);
            let mods: Vec<hlo::Module> = programs.iter().map(|p| p.module.clone()).collect();
            let (packed, _) = generators::pack::pack_with_layout(&mods);
            let sets = (0..d.input_sets as u64)
                .map(|r| programs.iter().flat_map(|p| inputs_for(p, r)).collect())
                .collect();
            (hlo::print::module_to_string(&packed), sets, programs.len())
        })
        .collect()
}

/// Cases/s (program x input set) of the pool alone on `runs`, `jobs` threads feeding it: set 0
/// compiles, the later sets run the kept executable; a module that fails on set 0 is not run
/// again (as the campaign does).
fn raw_cases_per_s(
    b: &WorkerBackend,
    opts: &RunOptions,
    runs: &[(String, Vec<Vec<hlo::Literal>>, usize)],
    jobs: usize,
) -> f64 {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cases = std::sync::atomic::AtomicUsize::new(0);
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((text, sets, programs)) = runs.get(i) else {
                    return;
                };
                for inputs in sets {
                    cases.fetch_add(*programs, std::sync::atomic::Ordering::Relaxed);
                    if !b.run(text, inputs, opts).is_ok() {
                        break;
                    }
                }
            });
        }
    });
    cases.into_inner() as f64 / t.elapsed().as_secs_f64()
}

/// The default campaign on `modules` module indices, and the raw limit on the same modules
/// before and after it: (campaign, raw before, raw after).
fn default_against_raw(
    b: &WorkerBackend,
    opts: &RunOptions,
    seed: u64,
    jobs: usize,
    modules: u64,
) -> (CampaignSummary, f64, f64) {
    let runs = default_modules(seed, modules);
    let before = raw_cases_per_s(b, opts, &runs, jobs);
    let dir = tempfile::tempdir().expect("temp dir");
    let cfg = CampaignConfig {
        seed,
        jobs,
        out: dir.path().to_path_buf(),
        stop: Stop {
            time: None,
            iterations: Some(modules),
        },
        progress: false,
        // The fuzz phase is measured; minimizing its findings afterwards is not.
        minimize: None,
        ..CampaignConfig::default()
    };
    let c = run_campaign(&cfg, None).expect("XLA must be available");
    let after = raw_cases_per_s(b, opts, &runs, jobs);
    (c, before, after)
}

fn env_usize(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let n = env_usize("HLO_DIFF_BENCH_MODULES", 40);
    let pack = env_usize("HLO_DIFF_BENCH_PACK", 8);
    let jobs = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let seed = 2024;
    let gen = generators::Config::default();

    let b = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(jobs));
    let opts = RunOptions {
        timeouts: campaign_timeouts(),
        ..RunOptions::default()
    };
    // Modules/s of the pool alone over distinct modules (so no executable is reused), `jobs`
    // threads feeding it.
    let pool_rate_on = |b: &WorkerBackend, runs: &[(String, Vec<hlo::Literal>)]| {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((text, inputs)) = runs.get(i) else {
                        return;
                    };
                    let _ = b.run(text, inputs, &opts);
                });
            }
        });
        runs.len() as f64 / t.elapsed().as_secs_f64()
    };
    let pool_rate = |runs: &[(String, Vec<hlo::Literal>)]| pool_rate_on(&b, runs);
    let x = hlo::Literal::Array(
        hlo::ArrayLiteral::zeros(hlo::PrimitiveType::F32, vec![8]).expect("f32[8] zeros"),
    );
    // One add per module, distinct constants: the fixed cost of a compile and run.
    let tiny = |name: &str, i: usize| {
        (
            format!(
                "HloModule {name}_{i}\n\nENTRY main {{\n  p = f32[8] parameter(0)\n  c = f32[] constant({i}.25)\n  b = f32[8] broadcast(c), dimensions={{}}\n  ROOT r = f32[8] add(p, b)\n}}\n"
            ),
            vec![x.clone()],
        )
    };
    // Start every worker before timing (import jax costs about a second each).
    pool_rate(&(0..jobs).map(|i| tiny("warm_up", i)).collect::<Vec<_>>());

    // The default campaign against the raw limit on the same modules.
    let (cd, raw_d_before, raw_d_after) =
        default_against_raw(&b, &opts, seed, jobs, (n / 2).max(1) as u64);
    let raw_d = (raw_d_before + raw_d_after) / 2.0;
    let d = CampaignConfig::default();
    println!(
        "campaign bench: the default campaign (pack {}, {} input sets, swarm, mutation {}%), {} modules, jobs {jobs}",
        d.pack, d.input_sets, d.generator.mutation_percent, cd.stats.modules
    );
    println!(
        "  default campaign: {:.2} cases/s = {:.2} of raw on the same modules (goal >= 0.9; raw {raw_d_before:.2} cases/s before it, {raw_d_after:.2} after, mean {raw_d:.2})",
        cd.cases_per_s,
        cd.cases_per_s / raw_d
    );
    let w = cd
        .stats
        .time
        .worker_time(jobs as f64 * cd.campaign_elapsed_s);
    let shares: Vec<String> = w
        .parts()
        .iter()
        .map(|(k, v)| format!("{k} {:.0}%", 100.0 * v / w.total_s.max(1e-9)))
        .collect();
    println!(
        "  default campaign: worker time {:.1} s: {}; the oracle {:.1} s in all, {:.1} s of it while XLA ran",
        w.total_s,
        shares.join(", "),
        w.oracle_all_s,
        (w.oracle_all_s - w.oracle_s).max(0.0)
    );
    if std::env::var_os("HLO_DIFF_BENCH_DEFAULT_ONLY").is_some() {
        return;
    }

    // Raw: the generated programs, one per module.
    let raw_runs: Vec<(String, Vec<hlo::Literal>)> = (0..n as u64)
        .map(|g| {
            let p = programs_for(seed, g, 1, &gen, true).remove(0);
            (hlo::print::module_to_string(&p.module), p.inputs)
        })
        .collect();
    let raw = pool_rate(&raw_runs);
    // Floor.
    let floor = pool_rate(&(0..n).map(|i| tiny("floor", i)).collect::<Vec<_>>());
    // The same on the `pjrt` backend (the PJRT plugin scripts/setup installs: a newer XLA CPU,
    // the module handed over as an HloModuleProto), when it is there.
    let pjrt_rates = if engine::worker::default_pjrt_plugin().is_file() {
        let p = WorkerBackend::pjrt(WorkerConfig::new(Platform::Cpu).with_workers(jobs));
        pool_rate_on(
            &p,
            &(0..jobs)
                .map(|i| tiny("warm_up_pjrt", i))
                .collect::<Vec<_>>(),
        );
        let raw_p = pool_rate_on(&p, &raw_runs);
        let floor_p = pool_rate_on(
            &p,
            &(0..n).map(|i| tiny("floor_pjrt", i)).collect::<Vec<_>>(),
        );
        Some((raw_p, floor_p))
    } else {
        None
    };
    drop(b);

    let campaign = |pack: usize, input_sets: usize, modules: u64| {
        let dir = tempfile::tempdir().expect("temp dir");
        let cfg = CampaignConfig {
            seed,
            jobs,
            pack,
            input_sets,
            out: dir.path().to_path_buf(),
            stop: Stop {
                time: None,
                iterations: Some(modules),
            },
            progress: false,
            ..CampaignConfig::default()
        };
        // The rates cover the campaign loop only (worker start-up is paid before it starts).
        run_campaign(&cfg, None).expect("XLA must be available")
    };
    let c1 = campaign(1, 1, n as u64);
    // The raw limit again, right after pack=1: the limit drifts by 10% and more between runs
    // on a shared host, so pack=1 is set against the mean of the measurements on either side
    // of it (both are printed).
    let raw_after = {
        let b = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(jobs));
        pool_rate_on(
            &b,
            &(0..jobs)
                .map(|i| tiny("warm_up_again", i))
                .collect::<Vec<_>>(),
        );
        pool_rate_on(&b, &raw_runs)
    };
    let raw_around = (raw + raw_after) / 2.0;
    // The default campaign (pack, input sets) on interp,pjrt instead of interp,xla-cpu.
    let cs_pjrt = pjrt_rates.map(|_| {
        let dir = tempfile::tempdir().expect("temp dir");
        let cfg = CampaignConfig {
            seed,
            jobs,
            pack,
            input_sets: DEFAULT_INPUT_SETS,
            out: dir.path().to_path_buf(),
            stop: Stop {
                time: None,
                iterations: Some((n / 2).max(1) as u64),
            },
            progress: false,
            backends: vec!["interp".into(), "pjrt".into()],
            ..CampaignConfig::default()
        };
        run_campaign(&cfg, None).expect("the PJRT plugin must be available")
    });
    let show = |name: &str, c: &tools::campaign::CampaignSummary| {
        let t = &c.stats.time;
        let m = c.stats.modules.max(1) as f64;
        println!(
            "  {name}: per module ms: wall {:.0}, generate {:.1}, oracle {:.0}, xla wait {:.0} (compile {:.0}, execute {:.1}), confirm {:.0} (judge {:.0}; {} findings confirmed); packed runs {}, of them reusing an executable {}",
            t.wall_ms / m, t.generate_ms / m, t.oracle_ms / m, t.xla_wait_ms / m, t.xla_compile_ms / m, t.xla_execute_ms / m, t.confirm_ms / m, t.judge_ms / m, t.confirmed, t.xla_packed_runs, t.xla_packed_cached
        );
        let mut sets = t.set_ms.clone();
        sets.sort_by(f64::total_cmp);
        match (sets.get(sets.len() / 2), sets.last()) {
            (Some(median), Some(max)) => println!(
                "  {name}: sets of legitimate results: {} judged differences, median {median:.1} ms, max {max:.1} ms, {:.0} ms in all = {:.0}% of the judge's time",
                sets.len(),
                sets.iter().sum::<f64>(),
                100.0 * sets.iter().sum::<f64>() / t.judge_ms.max(f64::EPSILON)
            ),
            _ => println!("  {name}: sets of legitimate results: no difference judged"),
        }
    };
    let ck = campaign(pack, 1, (n / 2).max(1) as u64);
    let sets = DEFAULT_INPUT_SETS;
    let cs = campaign(pack, sets, (n / 2).max(1) as u64);
    println!("campaign bench: {n} generated modules, jobs {jobs}");
    println!("  raw compile limit (pool only):  {raw:.2} modules/s");
    println!(
        "  campaign pack=1:                {:.2} modules/s  = {:.0}% of raw (target >= 90%; raw {raw:.2} before it and {raw_after:.2} after it, mean {raw_around:.2}: {:.0}% of raw before it)",
        c1.modules_per_s,
        100.0 * c1.modules_per_s / raw_around,
        100.0 * c1.modules_per_s / raw
    );
    println!(
        "  campaign pack={pack}:                {:.2} modules/s, {:.2} programs/s = {:.2}x raw",
        ck.modules_per_s,
        ck.programs_per_s,
        ck.programs_per_s / raw
    );
    // The most packing can give when only the fixed cost is shared (see the module doc).
    let (tm, fm) = (1.0 / raw, 1.0 / floor);
    let per_program = (tm - fm).max(f64::EPSILON);
    let bound_k = pack as f64 * tm / (fm + pack as f64 * per_program);
    println!(
        "  floor (one-add modules, pool):  {floor:.2} modules/s: fixed cost {:.0} ms of a generated module's {:.0} ms",
        1e3 * fm,
        1e3 * tm
    );
    println!(
        "  packing bound from that split:  {bound_k:.2}x raw at pack={pack}, {:.2}x at any pack",
        tm / per_program
    );
    println!(
        "  campaign pack={pack}, {sets} input sets: {:.2} modules/s, {:.2} programs/s = {:.2}x raw, {:.2} cases/s = {:.2}x raw",
        cs.modules_per_s,
        cs.programs_per_s,
        cs.programs_per_s / raw,
        cs.cases_per_s,
        cs.cases_per_s / raw
    );
    if let (Some((raw_p, floor_p)), Some(cp)) = (pjrt_rates, &cs_pjrt) {
        println!(
            "  pjrt raw compile limit (pool):  {raw_p:.2} modules/s = {:.2}x xla-cpu's; floor {floor_p:.2} modules/s ({:.0} ms fixed)",
            raw_p / raw,
            1e3 / floor_p
        );
        println!(
            "  campaign on interp,pjrt, pack={pack}, {sets} input sets: {:.2} modules/s, {:.2} cases/s = {:.2}x interp,xla-cpu's",
            cp.modules_per_s,
            cp.cases_per_s,
            cp.cases_per_s / cs.cases_per_s
        );
    }
    show("pack=1", &c1);
    show(&format!("pack={pack}"), &ck);
    show(&format!("pack={pack}, {sets} input sets"), &cs);
}

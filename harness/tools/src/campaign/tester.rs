//! The per-module pipeline: pack, run on XLA and the oracle, judge, confirm, store.

use super::*;
use engine::backend::{Backend, Outcome, RunOptions, RunResult, Stage, StageTimeouts};
use engine::engines::Engines;
use findings::store::{NewFinding, Recorded, Signature, Store};
use findings::timings::ModuleTimings;
use hlo::{Literal, Module};
use judge::classify::{Label, Verdict, ORACLE};
use judge::compare::Tolerance;
use judge::{Judge, Policy, Trial};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// What testing one program on one input set came to.
#[derive(Clone, Debug)]
pub struct ProgramReport {
    pub program: usize,
    /// Which input set (see [`inputs_for`]).
    pub input_set: u64,
    pub verdict: Verdict,
    pub recorded: Option<Recorded>,
    pub opcodes: Vec<hlo::Opcode>,
}

/// Per-output leaf ranges of a packed module's programs.
fn leaf_ranges(
    packed: &Module,
    layout: &generators::pack::PackLayout,
) -> Vec<std::ops::Range<usize>> {
    let e = packed.entry_computation();
    let root = e.root_instruction();
    let counts: Vec<usize> = root
        .operands
        .iter()
        .map(|&o| e.instructions[o].shape.leaves().len())
        .collect();
    let mut offsets = vec![0usize; counts.len() + 1];
    for (i, c) in counts.iter().enumerate() {
        offsets[i + 1] = offsets[i] + c;
    }
    layout
        .outputs
        .iter()
        .map(|&(first, n)| offsets[first.min(counts.len())]..offsets[(first + n).min(counts.len())])
        .collect()
}

fn split_result(r: &RunResult, range: std::ops::Range<usize>) -> Option<RunResult> {
    let outs = r.outputs.get(range)?.to_vec();
    Some(RunResult {
        outputs: outs,
        result_shape: None,
        timings: r.timings.clone(),
        optimized_hlo: None,
        before_optimizations_hlo: None,
        dump_dir: None,
    })
}

/// One input set of a module's programs packed into one module (one XLA compile tests them
/// all).
struct Packed {
    /// The module index, as occurrences name it.
    g: u64,
    /// Which input set.
    set: u64,
    /// How many programs are packed.
    programs: usize,
    module: Module,
    /// The packed module's text, as XLA gets it.
    text: String,
    /// Every program's inputs, in program order.
    inputs: Vec<Literal>,
    /// Each program's output leaves in the packed result ([`leaf_ranges`]).
    ranges: Vec<std::ops::Range<usize>>,
    /// The stage limits of every XLA run for this module: the packed run, each program alone,
    /// the confirmation (calibrated by the packed module's size, [`Tester::calibration`]).
    limits: StageTimeouts,
    /// Set when the tester's deadline cut an XLA run for this module (or came before one):
    /// nothing of it is stored or counted, a resumed campaign tests it again.
    cut: AtomicBool,
}

impl Packed {
    fn new(g: u64, set: u64, programs: &[Program], limits: StageTimeouts) -> Packed {
        let mods: Vec<Module> = programs.iter().map(|p| p.module.clone()).collect();
        let (module, layout) = generators::pack::pack_with_layout(&mods);
        let text = hlo::print::module_to_string(&module);
        let inputs: Vec<Literal> = programs
            .iter()
            .flat_map(|p| p.inputs.iter().cloned())
            .collect();
        let ranges = leaf_ranges(&module, &layout);
        Packed {
            g,
            set,
            programs: programs.len(),
            module,
            text,
            inputs,
            ranges,
            limits,
            cut: AtomicBool::new(false),
        }
    }

    fn is_cut(&self) -> bool {
        self.cut.load(Ordering::SeqCst)
    }
}

/// What testing a module index came to.
#[derive(Clone, Debug, Default)]
pub struct Tested {
    pub reports: Vec<ProgramReport>,
    pub timings: ModuleTimings,
    /// The tester's deadline cut it: none of its work counts (findings of it stored before the
    /// cut stay stored), and a resumed campaign tests it again.
    pub cut: bool,
}

/// Outcomes by backend name.
type Outcomes = Vec<(String, Outcome)>;

/// Findings stored for a module's programs so far, by (program, verdict kind, differing
/// outputs), with their labels.
type Settled = std::collections::HashMap<(usize, &'static str, Vec<usize>), Label>;

/// Why a tester's work cannot be trusted to go on: the campaign stops on it (the module it
/// happened in is not counted as done, so a resumed campaign tests it again).
#[derive(Debug)]
pub enum Fault {
    /// A finding could not be written: the invariant is "on disk first".
    Store(std::io::Error),
    /// An XLA backend became unavailable (its Python or jaxlib went away).
    Unavailable(String),
}

/// Runs, confirms and (for findings) stores everything about one module index.
/// One program in this many (by seed) that XLA and the oracle agree on has the voter held to
/// the set (`Tester::check_dissent`): a voter run and a set each, about 1/16 of a program's
/// cost on average.
pub const DISSENT_EVERY: u64 = 16;

pub struct Tester<'a> {
    /// The first fault met (see [`Tester::take_fault`]).
    pub fault: Mutex<Option<Fault>>,
    pub engines: &'a Engines,
    pub store: Option<&'a Store>,
    pub opts: RunOptions,
    pub campaign_seed: u64,
    /// Input sets per program: the packed module is compiled once and run on each.
    pub input_sets: usize,
    /// Where the campaign runs (`engine::environment::Environment`'s JSON, computed once per
    /// campaign): every stored finding's `meta.environment`.
    pub environment: Option<serde_json::Value>,
    /// The campaign's clock: a new finding records the campaign time it was found at
    /// (`first_hit_s`). `None` outside a campaign.
    pub clock: Option<CampaignClock>,
    /// Stage limits calibrated per module from the packed runs so far, within `opts.timeouts`
    /// (the ceiling); `None`: `opts.timeouts` for every module.
    pub calibration: Option<super::calibrate::Calibration>,
    /// No XLA run goes past it: a module whose run it cuts is not counted ([`Tested::cut`]).
    /// A timed campaign's end.
    pub deadline: Option<Instant>,
    /// When kept: what XLA made of each packed module (the categories of its optimized module,
    /// [`crate::xla_coverage::categories_of`]), for the fuzzer's feedback. Asking for the
    /// optimized module costs the worker's executable cache.
    pub xla_features: Option<Mutex<Vec<String>>>,
}

/// Campaign time over every run of a resumed campaign: the seconds earlier runs spent (the state
/// file's `elapsed_s` when this run started) plus this run's.
#[derive(Clone, Copy, Debug)]
pub struct CampaignClock {
    pub earlier_s: f64,
    pub started: Instant,
}

impl CampaignClock {
    /// Seconds of campaign time now.
    pub fn now_s(&self) -> f64 {
        self.earlier_s + self.started.elapsed().as_secs_f64()
    }
}

impl<'a> Tester<'a> {
    pub fn new(
        engines: &'a Engines,
        store: Option<&'a Store>,
        xla_options: &[(String, String)],
        timeouts: StageTimeouts,
    ) -> Tester<'a> {
        Tester {
            fault: Mutex::new(None),
            engines,
            store,
            opts: RunOptions {
                timeouts,
                env_option_overrides: xla_options.to_vec(),
                ..RunOptions::default()
            },
            campaign_seed: 0,
            input_sets: 1,
            environment: None,
            clock: None,
            calibration: None,
            deadline: None,
            xla_features: None,
        }
    }

    /// The first fault met since the last call, if any. A caller that sees one must not count
    /// the module it tested as done.
    pub fn take_fault(&self) -> Option<Fault> {
        self.fault.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn set_fault(&self, f: Fault) {
        let mut slot = self.fault.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(f);
        }
    }

    /// Tests programs packed into one module; `g` names the module index in occurrences.
    pub fn test_programs(&self, g: u64, programs: &[Program]) -> Vec<ProgramReport> {
        self.test_programs_timed(g, programs).reports
    }

    /// [`Tester::test_programs`], also telling where the time went. Every program is tested on
    /// `input_sets` input sets; the later sets run the packed module again, which the XLA
    /// worker does without compiling it again. They are skipped when the packed module failed
    /// as a whole on the first set (its failure is attributed already).
    pub fn test_programs_timed(&self, g: u64, programs: &[Program]) -> Tested {
        // A generated module our verifier rejects is a generator bug: said so, never run.
        let invalid: Vec<(usize, String)> = programs
            .iter()
            .enumerate()
            .filter_map(|(j, p)| {
                hlo::verify::verify_module(&p.module)
                    .err()
                    .map(|e| (j, e.to_string()))
            })
            .collect();
        if !invalid.is_empty() {
            return self.test_valid_programs(g, programs, &invalid);
        }
        let mut settled = Settled::new();
        let (mut reports, mut timings, packed_ok, mut cut) =
            self.test_input_set(g, 0, programs, &mut settled);
        if packed_ok && !cut {
            for set in 1..self.input_sets.max(1) as u64 {
                let again: Vec<Program> = programs
                    .iter()
                    .map(|p| Program {
                        seed: p.seed,
                        module: p.module.clone(),
                        inputs: inputs_for(p, set),
                        config: p.config.clone(),
                        origin: p.origin.clone(),
                    })
                    .collect();
                let (r, t, _, set_cut) = self.test_input_set(g, set, &again, &mut settled);
                reports.extend(r);
                timings.add(&t);
                if set_cut {
                    cut = true;
                    break;
                }
            }
        }
        Tested {
            reports,
            timings,
            cut,
        }
    }

    /// [`Tester::test_programs_timed`] for the programs not in `invalid`, each program of
    /// `invalid` reported as the generator bug it is (`unsupported`, so no XLA finding).
    fn test_valid_programs(
        &self,
        g: u64,
        programs: &[Program],
        invalid: &[(usize, String)],
    ) -> Tested {
        let keep: Vec<usize> = (0..programs.len())
            .filter(|j| !invalid.iter().any(|(b, _)| b == j))
            .collect();
        let valid: Vec<Program> = keep
            .iter()
            .map(|&j| Program {
                seed: programs[j].seed,
                module: programs[j].module.clone(),
                inputs: programs[j].inputs.clone(),
                config: programs[j].config.clone(),
                origin: programs[j].origin.clone(),
            })
            .collect();
        let mut tested = if valid.is_empty() {
            Tested::default()
        } else {
            self.test_programs_timed(g, &valid)
        };
        let reports = &mut tested.reports;
        for r in reports.iter_mut() {
            if let Some(&j) = keep.get(r.program) {
                r.program = j;
            }
        }
        for (j, why) in invalid {
            let p = &programs[*j];
            eprintln!(
                "hlo-diff: generator bug: our verifier rejects the program of seed {}: {why}",
                p.seed
            );
            let mut v = Judge::offline()
                .judge(&Trial {
                    module: &p.module,
                    text: None,
                    inputs: &p.inputs,
                    outcomes: &[(
                        ORACLE.to_string(),
                        Outcome::Unsupported {
                            what: format!("generator bug: our verifier rejects it: {why}"),
                        },
                    )],
                    reruns: &[],
                    tolerance: &Tolerance::default(),
                })
                .verdict;
            v.backend = None;
            reports.push(ProgramReport {
                program: *j,
                input_set: 0,
                verdict: v,
                recorded: None,
                opcodes: Vec::new(),
            });
        }
        tested
    }

    /// One input set of every program: the packed run, the oracle, classification and
    /// confirmation. Also says whether every XLA backend ran the packed module, and whether
    /// the deadline cut the work.
    ///
    /// A program that already has a stored finding of the same kind on the same outputs from
    /// an earlier input set (`settled`) is not confirmed and stored again: the case counts
    /// under that finding's label.
    fn test_input_set(
        &self,
        g: u64,
        set: u64,
        programs: &[Program],
        settled: &mut Settled,
    ) -> (Vec<ProgramReport>, ModuleTimings, bool, bool) {
        let wall = Instant::now();
        let mut timings = ModuleTimings::default();
        let mut packed = Packed::new(g, set, programs, self.opts.timeouts.clone());
        packed.limits = self.limits_for(&packed.module);
        let (xla_outcomes, oracle_outcomes, oracle_ms, xla_ms) = self.run_packed(&packed, programs);
        timings.oracle_ms = oracle_ms;
        timings.xla_run_ms = xla_ms;
        timings.xla_wait_ms = wall.elapsed().as_secs_f64() * 1e3;
        self.note_packed_outcomes(&packed, &xla_outcomes, &mut timings);
        let after_first = Instant::now();
        if packed.is_cut() {
            return (Vec::new(), timings, false, true);
        }

        let mut reports = Vec::with_capacity(programs.len());
        for (j, p) in programs.iter().enumerate() {
            reports.push(self.test_program(
                &packed,
                j,
                p,
                &oracle_outcomes[j],
                &xla_outcomes,
                settled,
                &mut timings,
            ));
        }
        if let Some(r) = self.packed_only_failure(&packed, &xla_outcomes, &reports) {
            reports.push(r);
        }
        timings.confirm_ms = after_first.elapsed().as_secs_f64() * 1e3;
        timings.wall_ms = wall.elapsed().as_secs_f64() * 1e3;
        let packed_ok = xla_outcomes.iter().all(|(_, o)| o.is_ok());
        (reports, timings, packed_ok, packed.is_cut())
    }

    /// The stage limits for a module: calibrated by its size, else `opts.timeouts`.
    fn limits_for(&self, m: &Module) -> StageTimeouts {
        match &self.calibration {
            Some(c) => c.limits(m.instruction_count(), m.result_elements()),
            None => self.opts.timeouts.clone(),
        }
    }

    /// The options of every XLA run for `packed`: its stage limits, none past the deadline.
    fn opts_for(&self, packed: &Packed) -> RunOptions {
        RunOptions {
            timeouts: packed.limits.clone(),
            deadline: self.deadline,
            ..self.opts.clone()
        }
    }

    /// XLA backend `k` on `text` for `packed`'s sake. Past the deadline nothing runs, and a
    /// timeout at the deadline is the deadline's, not the module's: either way `packed` is cut
    /// (the outcome returned then is never judged into a finding).
    fn xla_run(
        &self,
        packed: &Packed,
        k: usize,
        text: &str,
        inputs: &[Literal],
        opts: &RunOptions,
    ) -> Outcome {
        if opts.past_deadline() {
            packed.cut.store(true, Ordering::SeqCst);
            return Outcome::Timeout {
                stage: Stage::Parse,
            };
        }
        let o = self.engines.xla[k].run(text, inputs, opts);
        if matches!(o, Outcome::Timeout { .. }) && opts.past_deadline() {
            packed.cut.store(true, Ordering::SeqCst);
        }
        o
    }

    /// The occurrence `what` (a program's index, or `packed`) of module index `g` on input set
    /// `set`, as findings record it.
    fn occurrence(&self, g: u64, set: u64, what: &str) -> String {
        match set {
            0 => format!("{}:{g}:{what}", self.campaign_seed),
            r => format!("{}:{g}:{what}:inputs{r}", self.campaign_seed),
        }
    }

    /// XLA on the packed module (every backend, on another thread) while the oracle runs each
    /// program here: XLA's outcomes, the oracle's per program, its time and XLA's in ms.
    fn run_packed(
        &self,
        packed: &Packed,
        programs: &[Program],
    ) -> (Vec<(String, Outcome)>, Vec<Outcome>, f64, f64) {
        let opts = RunOptions {
            return_optimized_hlo: self.xla_features.is_some(),
            ..self.opts_for(packed)
        };
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                let t = Instant::now();
                let outcomes = self
                    .engines
                    .xla
                    .iter()
                    .enumerate()
                    .map(|(k, b)| {
                        (
                            b.name().to_string(),
                            self.xla_run(packed, k, &packed.text, &packed.inputs, &opts),
                        )
                    })
                    .collect::<Vec<_>>();
                (outcomes, t.elapsed().as_secs_f64() * 1e3)
            });
            let t = Instant::now();
            let interp = self.oracle();
            let oracle: Vec<Outcome> = programs
                .iter()
                .map(|p| interp.run_module(&p.module, &p.inputs))
                .collect();
            let oracle_ms = t.elapsed().as_secs_f64() * 1e3;
            // An oracle the deadline stopped gave no verdict of the module's.
            if self.deadline.is_some_and(|d| Instant::now() >= d) {
                packed.cut.store(true, Ordering::SeqCst);
            }
            // A panic of the XLA thread is a harness bug: it must not read as "no outcomes".
            let (xla, xla_ms) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            (xla, oracle, oracle_ms, xla_ms)
        })
    }

    /// Folds XLA's outcomes on the packed module into `timings` and the calibration (and
    /// what XLA made of it into `xla_features`, when kept); a backend that became unavailable
    /// is a fault.
    fn note_packed_outcomes(
        &self,
        packed: &Packed,
        xla_outcomes: &[(String, Outcome)],
        timings: &mut ModuleTimings,
    ) {
        for (name, o) in xla_outcomes {
            if let Outcome::Unavailable { why } = o {
                self.set_fault(Fault::Unavailable(format!("{name}: {why}")));
            }
            if let Outcome::Ok(r) = o {
                if let Some(c) = &self.calibration {
                    c.observe(
                        packed.module.instruction_count(),
                        packed.module.result_elements(),
                        &r.timings,
                    );
                }
                if let (Some(f), Some(text)) = (&self.xla_features, &r.optimized_hlo) {
                    f.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(crate::xla_coverage::categories_of_text(text));
                }
                timings.xla_compile_ms += r.timings.compile_ms;
                timings.xla_execute_ms += r.timings.execute_ms;
                timings.xla_packed_runs += 1;
                timings.xla_packed_cached += u64::from(r.timings.cached);
            }
        }
    }

    /// Program `j` (`p`) on this input set: its outcomes judged under [`Policy::VERDICT`]; a
    /// finding already settled on an earlier input set takes that finding's label, any other
    /// finding is confirmed and stored. The judge's time and the confirmations go to `timings`.
    #[allow(clippy::too_many_arguments)]
    fn test_program(
        &self,
        packed: &Packed,
        j: usize,
        p: &Program,
        oracle: &Outcome,
        xla_outcomes: &[(String, Outcome)],
        settled: &mut Settled,
        timings: &mut ModuleTimings,
    ) -> ProgramReport {
        let tol = Tolerance::for_module(&p.module);
        let (outcomes, alone) = self.program_outcomes(packed, j, p, oracle, xla_outcomes);
        // The set decides here, in the packed run: a difference inside the legitimate results is
        // settled before confirmation runs the program again.
        let judged = Instant::now();
        let verdict = self
            .judge(Policy::VERDICT, packed)
            .judge(&Trial {
                module: &p.module,
                text: None,
                inputs: &p.inputs,
                outcomes: &outcomes,
                reruns: &[],
                tolerance: &tol,
            })
            .verdict;
        timings.judge_ms += judged.elapsed().as_secs_f64() * 1e3;
        if let Some(proof) = &verdict.proof {
            timings.set_ms.push(proof.set_ms);
        }
        if !verdict.is_bug() && packed.set == 0 && p.seed % DISSENT_EVERY == 0 {
            self.check_dissent(p, &outcomes, &tol, packed, timings);
        }
        let mut report = ProgramReport {
            program: j,
            input_set: packed.set,
            verdict: verdict.clone(),
            recorded: None,
            opcodes: p.module.opcode_histogram().into_keys().collect(),
        };
        let key = (j, verdict.kind.name(), verdict.mismatched_outputs.clone());
        if let (true, Some(label)) = (verdict.is_bug(), settled.get(&key)) {
            report.verdict.label = Some(*label);
            report.verdict.message = format!(
                "{} (as on an earlier input set of this program, not confirmed again)",
                report.verdict.message
            );
        } else if verdict.is_bug() {
            timings.confirmed += 1;
            let (v, rec) = self.confirm_and_store(
                packed,
                self.occurrence(packed.g, packed.set, &j.to_string()),
                j,
                p,
                &tol,
                &outcomes,
                &alone,
            );
            if v.is_bug() && rec.is_some() {
                settled.insert(key, v.label.unwrap_or(Label::Undecided));
            }
            report.verdict = v;
            report.recorded = rec;
        }
        report
    }

    /// Program `j`'s outcomes, the oracle's (`oracle`) first: each XLA backend's split from the
    /// packed run, or the program alone when the packed run failed as a whole. Also the
    /// outcomes of those runs alone.
    fn program_outcomes(
        &self,
        packed: &Packed,
        j: usize,
        p: &Program,
        oracle: &Outcome,
        xla_outcomes: &[(String, Outcome)],
    ) -> (Outcomes, Outcomes) {
        let mut outcomes: Outcomes = vec![(ORACLE.to_string(), oracle.clone())];
        let mut alone: Outcomes = Vec::new();
        for (k, (name, o)) in xla_outcomes.iter().enumerate() {
            let per = match o {
                Outcome::Ok(r) => match split_result(r, packed.ranges[j].clone()) {
                    Some(r) => Outcome::Ok(r),
                    None => Outcome::HarnessError {
                        stage: None,
                        message: "packed result has too few outputs".into(),
                    },
                },
                failed if packed.programs == 1 => failed.clone(),
                _ => {
                    let text = hlo::print::module_to_string(&p.module);
                    let o = self.xla_run(packed, k, &text, &p.inputs, &self.opts_for(packed));
                    alone.push((name.clone(), o.clone()));
                    o
                }
            };
            outcomes.push((name.clone(), per));
        }
        (outcomes, alone)
    }

    /// A packed failure no single program reproduces: the packed module is kept, its report
    /// (program `usize::MAX`) returned when the judge makes it a finding.
    fn packed_only_failure(
        &self,
        packed: &Packed,
        xla_outcomes: &[(String, Outcome)],
        reports: &[ProgramReport],
    ) -> Option<ProgramReport> {
        let (name, o) = xla_outcomes
            .iter()
            .find(|(_, o)| !o.is_ok() && packed.programs > 1)?;
        if reports.iter().any(|r| r.verdict.is_bug()) {
            return None;
        }
        let outcomes = vec![(name.clone(), o.clone())];
        let tol = Tolerance::default();
        let v = Judge::offline()
            .judge(&Trial {
                module: &packed.module,
                text: Some(&packed.text),
                inputs: &packed.inputs,
                outcomes: &outcomes,
                reruns: &[],
                tolerance: &tol,
            })
            .verdict;
        if !v.is_bug() {
            return None;
        }
        let (g, set) = (packed.g, packed.set);
        let rec = self.store_finding(
            packed,
            &v,
            Some(&packed.module),
            &packed.text,
            None,
            &packed.inputs,
            &outcomes,
            self.occurrence(g, set, "packed"),
            json!({"module_index": g, "input_set": set, "only_when_packed": true, "programs": packed.programs}),
        );
        Some(ProgramReport {
            program: usize::MAX,
            input_set: set,
            verdict: v,
            recorded: rec,
            opcodes: Vec::new(),
        })
    }

    /// Confirms a finding of program `j` and stores it: the program's outcomes again, judged
    /// under [`Policy::FULL`] (the proof, the vote, equivalent forms) with a rerun of each XLA
    /// backend.
    ///
    /// - Packed with others, the program is compiled alone (with XLA's `before_optimizations`
    ///   dump, kept in the finding), and the packed run counts as its rerun when it gave the
    ///   same bits; a finding the program alone does not show is stored as seen only when packed.
    /// - Alone in its packed module (`--pack 1`) and run to a result, the packed run already is
    ///   the program alone: the rerun executes the executable the worker kept from it again (no compile; a worker
    ///   that does not hold it compiles it afresh), which rules out a result that changes from
    ///   run to run. Such a finding has no `before_optimizations` text until it is minimized
    ///   (the minimizer dumps its repro).
    #[allow(clippy::too_many_arguments)]
    fn confirm_and_store(
        &self,
        packed: &Packed,
        occurrence: String,
        j: usize,
        p: &Program,
        tol: &Tolerance,
        outcomes: &[(String, Outcome)],
        alone: &[(String, Outcome)],
    ) -> (Verdict, Option<Recorded>) {
        let g = packed.g;
        let set = packed.set;
        let text = hlo::print::module_to_string(&p.module);
        let oracle = outcomes[0].clone();
        let packed_opts = self.opts_for(packed);
        let mut opts = packed_opts.clone();
        opts.return_before_optimizations_hlo = true;
        let mut firsts: Vec<(String, Outcome)> = vec![oracle];
        let mut reruns: Vec<(String, Outcome)> = Vec::new();
        for (k, b) in self.engines.xla.iter().enumerate() {
            let name = b.name().to_string();
            let packed_outcome = outcomes.iter().find(|(n, _)| *n == name).map(|(_, o)| o);
            if let Some(first) = packed_outcome.filter(|o| packed.programs == 1 && o.is_ok()) {
                let again =
                    match self.xla_run(packed, k, &packed.text, &packed.inputs, &packed_opts) {
                        Outcome::Ok(r) => match split_result(&r, packed.ranges[j].clone()) {
                            Some(r) => Outcome::Ok(r),
                            None => Outcome::HarnessError {
                                stage: None,
                                message: "packed result has too few outputs".into(),
                            },
                        },
                        failed => failed,
                    };
                reruns.push((name.clone(), again));
                firsts.push((name, first.clone()));
                continue;
            }
            // A failure already reproduced alone is not run a third time.
            let first = match alone.iter().find(|(n, _)| *n == name) {
                Some((_, o)) if !o.is_ok() => o.clone(),
                _ => self.xla_run(packed, k, &text, &p.inputs, &opts),
            };
            if let Some(r) = first.as_ok() {
                // The packed run was an earlier compile and run of the same program: when it
                // gave the same bits, it already is the rerun (a difference may come from the
                // other programs around it, so then run once more alone).
                let same = packed_outcome
                    .filter(|o| o.as_ok().is_some_and(|q| q.outputs == r.outputs))
                    .cloned();
                let again = match same {
                    Some(o) => o,
                    None => self.xla_run(packed, k, &text, &p.inputs, &opts),
                };
                reruns.push((name.clone(), again));
            }
            firsts.push((name, first));
        }
        let before = firsts
            .iter()
            .filter_map(|(_, o)| o.as_ok())
            .find_map(|r| r.before_optimizations_hlo.clone());
        let judgement = self.judge(Policy::FULL, packed).judge(&Trial {
            module: &p.module,
            text: Some(&text),
            inputs: &p.inputs,
            outcomes: &firsts,
            reruns: &reruns,
            tolerance: tol,
        });
        let verdict = judgement.verdict;
        let voter = judgement.voter;
        let mut all = firsts.clone();
        if let Some(v) = voter {
            all.push(("stablehlo-ref".into(), v));
        }
        if verdict.is_bug() {
            let rec = self.store_finding(
                packed,
                &verdict,
                Some(&p.module),
                &text,
                before.as_deref(),
                &p.inputs,
                &all,
                occurrence,
                json!({"module_index": g, "program": j, "program_seed": p.seed, "input_set": set,
                       "generator_config": p.config,
                       "mutated_from": p.origin.as_ref().map(|o| o.to_string()), "mutation": p.origin}),
            );
            return (verdict, rec);
        }
        // Seen only when packed: keep the packed module, labelled as such.
        let packed_verdict = self
            .judge(Policy::VERDICT, packed)
            .judge(&Trial::new(&p.module, &p.inputs, outcomes, tol))
            .verdict;
        let rec = self.store_finding(
            packed,
            &packed_verdict,
            Some(&p.module),
            &packed.text,
            None,
            &packed.inputs,
            outcomes,
            occurrence,
            json!({"module_index": g, "program": j, "program_seed": p.seed, "input_set": set,
                   "generator_config": p.config, "only_when_packed": true, "alone": verdict.kind.name(),
                   "mutated_from": p.origin.as_ref().map(|o| o.to_string()), "mutation": p.origin}),
        );
        (packed_verdict, rec)
    }

    /// A sample of the programs XLA and the oracle agree on: the voter's result held to the
    /// set of legitimate results (`judge::Policy::dissent`). A dissent is evidence about a
    /// common mode of XLA and the oracle, never a finding: it is kept in `dissent/<program
    /// seed>/` (module, inputs, what the set says) for triage against the texts.
    fn check_dissent(
        &self,
        p: &Program,
        outcomes: &[(String, Outcome)],
        tol: &Tolerance,
        packed: &Packed,
        timings: &mut ModuleTimings,
    ) {
        if self.engines.voter.is_none() {
            return;
        }
        let started = Instant::now();
        let v = self
            .judge(Policy::VERDICT.with_dissent(), packed)
            .judge(&Trial::new(&p.module, &p.inputs, outcomes, tol))
            .verdict;
        timings.dissent_checks += 1;
        if let (Some(d), Some(store)) = (&v.dissent, self.store) {
            timings.dissents += 1;
            let dir = store.root().join("dissent").join(p.seed.to_string());
            if std::fs::create_dir_all(&dir).is_ok() {
                let _ = std::fs::write(
                    dir.join("module_0000.dissent.before_optimizations.txt"),
                    hlo::print::module_to_string(&p.module),
                );
                let _ = findings::store::write_literals(&dir.join("inputs.lit"), &p.inputs);
                let _ = std::fs::write(
                    dir.join("dissent.txt"),
                    format!(
                        "XLA and the oracle agree ({}); the StableHLO reference interpreter \
                         gives a value outside the legitimate results: {}\n\nrun: hlo-diff \
                         run module_0000.dissent.before_optimizations.txt --inputs inputs.lit \
                         --backends interp,xla-cpu,stablehlo-ref\n",
                        v.kind.name(),
                        d.summary().replace("voter gives", "stablehlo-ref gives")
                    ),
                );
            }
        }
        timings.dissent_ms += started.elapsed().as_secs_f64() * 1e3;
    }

    /// The oracle, stopping at the deadline.
    fn oracle(&self) -> engine::interp_backend::InterpBackend {
        engine::interp_backend::InterpBackend {
            options: interp::EvalOptions {
                deadline: self.deadline,
                ..self.engines.oracle.options.clone()
            },
        }
    }

    /// The judge over this tester's backends, with `packed`'s run options.
    fn judge(&self, policy: Policy, packed: &Packed) -> Judge<'_> {
        Judge {
            oracle: self.oracle(),
            xla: self.engines.xla.iter().map(|b| b as &dyn Backend).collect(),
            voter: self.engines.voter.as_ref().map(|b| b as &dyn Backend),
            opts: self.opts_for(packed),
            policy,
        }
    }

    /// Stores a finding of `packed`, with the stage limits its runs had; nothing once the
    /// deadline cut `packed` or has passed (a run the judge made for it may have been cut).
    #[allow(clippy::too_many_arguments)]
    fn store_finding(
        &self,
        packed: &Packed,
        verdict: &Verdict,
        module: Option<&Module>,
        text: &str,
        before: Option<&str>,
        inputs: &[Literal],
        outcomes: &[(String, Outcome)],
        occurrence: String,
        meta: serde_json::Value,
    ) -> Option<Recorded> {
        let store = self.store?;
        if packed.is_cut() || self.deadline.is_some_and(|d| Instant::now() >= d) {
            packed.cut.store(true, Ordering::SeqCst);
            return None;
        }
        let mut meta = meta;
        if let Some(m) = meta.as_object_mut() {
            m.insert("campaign_seed".into(), json!(self.campaign_seed));
            m.insert(
                "stage_limits_ms".into(),
                json!(Stage::ALL
                    .iter()
                    .map(|s| (s.name(), packed.limits.get(*s).as_millis() as u64))
                    .collect::<std::collections::BTreeMap<_, _>>()),
            );
            m.insert("xla_options".into(), json!(self.opts.env_option_overrides));
            if let Some(env) = &self.environment {
                m.insert("environment".into(), env.clone());
            }
        }
        let nf = NewFinding {
            signature: Signature::of(verdict, module),
            occurrence,
            verdict,
            module_text: text,
            before_optimizations: before,
            inputs,
            outcomes,
            meta,
            found_at_s: self.clock.map(|c| c.now_s()),
        };
        match store.record(&nf) {
            Ok(r) => Some(r),
            Err(e) => {
                self.set_fault(Fault::Store(e));
                None
            }
        }
    }
}

//! Stage limits calibrated per module, as fuzzers calibrate their timeouts (AFL sets its limit
//! from the execution times it measured, with a floor): a hang then costs what a module of its
//! size takes, not the fixed limit made for the largest module there could be.
//!
//! The worker's stage times of every packed run XLA answered are kept by size class (powers of
//! two: instructions for parse, convert and compile; elements of every instruction's result for
//! execute), as the longest time seen in each class. A module's limit for a stage is
//! [`MULTIPLE`] times the longest time seen for modules of its size: a smaller class's time
//! scaled up by the size ratio, a larger class's as it is (a larger module bounds a smaller
//! one's time); within `[floor, ceiling]`, and the ceiling (today's fixed limits) until the stage
//! has [`MIN_OBSERVATIONS`].

use engine::backend::{Stage, StageTimeouts, Timings};
use std::sync::Mutex;
use std::time::Duration;

/// A module's limit is this many times the longest time seen for modules of its size.
pub const MULTIPLE: f64 = 4.0;

/// Observations a stage needs before its limit is calibrated (the ceiling until then).
pub const MIN_OBSERVATIONS: u64 = 3;

/// The shortest limits calibration sets: a module slower than any seen so far (a busy host, a
/// larger module) still gets this long.
pub fn floor_timeouts() -> StageTimeouts {
    StageTimeouts {
        parse: Duration::from_secs(2),
        convert: Duration::from_secs(2),
        compile: Duration::from_secs(5),
        execute: Duration::from_secs(2),
    }
}

/// The longest time seen per size class of one stage.
#[derive(Clone, Debug, Default)]
struct Classes {
    /// By class (`class(size)`); `None`: nothing seen in that class.
    longest_ms: Vec<Option<f64>>,
    observations: u64,
}

/// The size class of `n`: `floor(log2(n))`, 0 for 0 and 1.
fn class(n: u128) -> usize {
    (127 - n.max(1).leading_zeros()) as usize
}

impl Classes {
    fn observe(&mut self, size: u128, ms: f64) {
        if !ms.is_finite() || ms < 0.0 {
            return;
        }
        let c = class(size);
        if self.longest_ms.len() <= c {
            self.longest_ms.resize(c + 1, None);
        }
        let slot = &mut self.longest_ms[c];
        *slot = Some(slot.map_or(ms, |m| m.max(ms)));
        self.observations += 1;
    }

    /// The longest time a module of `size` is expected to take, from what was seen: a smaller
    /// class's longest scaled by the size ratio, a larger class's as it is.
    fn expected_ms(&self, size: u128) -> Option<f64> {
        if self.observations < MIN_OBSERVATIONS {
            return None;
        }
        let c = class(size);
        self.longest_ms
            .iter()
            .enumerate()
            .filter_map(|(k, m)| {
                let m = (*m)?;
                Some(match c.checked_sub(k) {
                    Some(up) => m * 2f64.powi(up.min(64) as i32),
                    None => m,
                })
            })
            .reduce(f64::max)
    }
}

/// Calibrated stage limits, shared by a campaign's threads.
#[derive(Debug)]
pub struct Calibration {
    floor: StageTimeouts,
    ceiling: StageTimeouts,
    /// Per stage, in [`Stage::ALL`]'s order.
    seen: Mutex<[Classes; 4]>,
}

fn index(s: Stage) -> usize {
    Stage::ALL.iter().position(|x| *x == s).unwrap_or(0)
}

fn set(t: &mut StageTimeouts, s: Stage, d: Duration) {
    match s {
        Stage::Parse => t.parse = d,
        Stage::Convert => t.convert = d,
        Stage::Compile => t.compile = d,
        Stage::Execute => t.execute = d,
    }
}

/// The size a stage's time grows with: instructions, or for execute the elements computed.
fn size_for(s: Stage, instructions: usize, elements: u128) -> u128 {
    match s {
        Stage::Execute => elements,
        _ => instructions as u128,
    }
}

impl Calibration {
    /// Limits between `floor` and `ceiling` (each stage's floor raised to at most its ceiling).
    pub fn new(floor: StageTimeouts, ceiling: StageTimeouts) -> Calibration {
        let mut floor = floor;
        for s in Stage::ALL {
            let d = floor.get(s).min(ceiling.get(s));
            set(&mut floor, s, d);
        }
        Calibration {
            floor,
            ceiling,
            seen: Mutex::new(Default::default()),
        }
    }

    /// The limits for a module of `instructions` instructions and `elements` result elements
    /// ([`hlo::Module::instruction_count`], [`hlo::Module::result_elements`]).
    pub fn limits(&self, instructions: usize, elements: u128) -> StageTimeouts {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = self.ceiling.clone();
        for s in Stage::ALL {
            if let Some(ms) = seen[index(s)].expected_ms(size_for(s, instructions, elements)) {
                let d = Duration::from_secs_f64((ms * MULTIPLE / 1e3).min(1e9));
                set(&mut t, s, d.clamp(self.floor.get(s), self.ceiling.get(s)));
            }
        }
        t
    }

    /// The stage times of a run XLA answered on a module of that size. A run on an executable
    /// the worker kept (`cached`) had no parse, convert or compile: only its execute counts.
    pub fn observe(&self, instructions: usize, elements: u128, t: &Timings) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let stages: &[(Stage, f64)] = &[
            (Stage::Parse, t.parse_ms),
            (Stage::Convert, t.convert_ms),
            (Stage::Compile, t.compile_ms),
            (Stage::Execute, t.execute_ms),
        ];
        for &(s, ms) in stages {
            if t.cached && s != Stage::Execute {
                continue;
            }
            seen[index(s)].observe(size_for(s, instructions, elements), ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ceiling() -> StageTimeouts {
        super::super::campaign_timeouts()
    }

    fn timings(compile_ms: f64, execute_ms: f64) -> Timings {
        Timings {
            parse_ms: 1.0,
            convert_ms: 2.0,
            compile_ms,
            execute_ms,
            cached: false,
        }
    }

    #[test]
    fn the_ceiling_holds_until_a_stage_has_enough_observations() {
        let c = Calibration::new(floor_timeouts(), ceiling());
        assert_eq!(c.limits(100, 1000), ceiling());
        for _ in 0..MIN_OBSERVATIONS - 1 {
            c.observe(100, 1000, &timings(500.0, 1.0));
        }
        assert_eq!(c.limits(100, 1000), ceiling());
        c.observe(100, 1000, &timings(500.0, 1.0));
        let l = c.limits(100, 1000);
        assert!(l.compile < ceiling().compile, "{l:?}");
    }

    #[test]
    fn a_limit_is_a_multiple_of_the_longest_time_seen_within_floor_and_ceiling() {
        let c = Calibration::new(floor_timeouts(), ceiling());
        for ms in [300.0, 2000.0, 700.0] {
            c.observe(100, 1000, &timings(ms, 1.0));
        }
        let l = c.limits(100, 1000);
        // 4 x 2 s.
        assert_eq!(l.compile, Duration::from_secs(8));
        // 4 x 1 ms, 4 x 2 ms: the floors.
        assert_eq!(l.execute, floor_timeouts().execute);
        assert_eq!(l.convert, floor_timeouts().convert);
        // A 40 s compile would make 160 s: the ceiling.
        c.observe(100, 1000, &timings(40_000.0, 1.0));
        assert_eq!(c.limits(100, 1000).compile, ceiling().compile);
    }

    #[test]
    fn a_larger_module_scales_the_limit_a_smaller_one_keeps_the_larger_ones() {
        let c = Calibration::new(floor_timeouts(), ceiling());
        // Modules of 64..127 instructions compile in 1.5 s at most.
        for _ in 0..MIN_OBSERVATIONS {
            c.observe(100, 1 << 10, &timings(1500.0, 600.0));
        }
        // 4x the instructions (two classes up): 4 x 4 x 1.5 s = 24 s.
        assert_eq!(c.limits(400, 1 << 10).compile, Duration::from_secs(24));
        // Fewer instructions: bounded by the larger modules' time, 4 x 1.5 s.
        assert_eq!(c.limits(10, 1 << 10).compile, Duration::from_secs(6));
        // Execute goes by elements: 8x the elements, 4 x 8 x 0.6 s = 19.2 s.
        assert_eq!(
            c.limits(100, 1 << 13).execute,
            Duration::from_secs_f64(19.2)
        );
    }

    #[test]
    fn a_cached_run_calibrates_execute_only() {
        let c = Calibration::new(floor_timeouts(), ceiling());
        for _ in 0..MIN_OBSERVATIONS {
            c.observe(
                100,
                1000,
                &Timings {
                    cached: true,
                    ..timings(0.0, 1000.0)
                },
            );
        }
        let l = c.limits(100, 1000);
        assert_eq!(l.compile, ceiling().compile);
        assert_eq!(l.execute, Duration::from_secs(4));
    }

    #[test]
    fn size_classes_are_powers_of_two() {
        assert_eq!(class(0), 0);
        assert_eq!(class(1), 0);
        assert_eq!(class(2), 1);
        assert_eq!(class(3), 1);
        assert_eq!(class(4), 2);
        assert_eq!(class(1 << 20), 20);
    }
}

//! `large_op_percent`: reduce and dot get operands with a long row or column (the sizes where
//! XLA:CPU switches code paths), the modules stay valid and within `max_elements`/`max_work`,
//! and with the knob at 0 (the default) no such operands are built on purpose.

use generators::{generate_from_seed, Config};
use hlo::Opcode;

/// (reduces with a large operand dimension, dots with one, largest dot work seen).
fn census(cfg: &Config, seeds: std::ops::Range<u64>) -> (usize, usize, u64) {
    let (mut reduces, mut dots, mut work) = (0, 0, 0u64);
    let threshold = cfg.large_extent / 4;
    for seed in seeds {
        let m = generate_from_seed(seed, cfg);
        hlo::verify::verify_module(&m).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        for comp in &m.computations {
            for i in &comp.instructions {
                let dims = |k: usize| comp.instructions[i.operands[k]].shape.dims().to_vec();
                let large = |d: &[i64]| d.iter().any(|&x| x >= threshold);
                match i.opcode {
                    Opcode::Reduce if large(&dims(0)) => reduces += 1,
                    Opcode::Dot => {
                        let (l, r) = (dims(0), dims(1));
                        if large(&l) || large(&r) {
                            dots += 1;
                        }
                        let k: u64 = i
                            .ints("lhs_contracting_dims")
                            .unwrap_or(&[])
                            .iter()
                            .map(|&d| l[d as usize].max(1) as u64)
                            .product();
                        let out: u64 = i.shape.dims().iter().map(|&d| d.max(0) as u64).product();
                        work = work.max(out * k);
                    }
                    _ => {}
                }
            }
        }
    }
    (reduces, dots, work)
}

#[test]
fn large_op_percent_builds_long_rows_and_columns_within_the_bounds() {
    let cfg = Config {
        large_op_percent: 100,
        ..Config::default()
    };
    let (reduces, dots, work) = census(&cfg, 0..300);
    assert!(reduces >= 30, "only {reduces} reduces with a large operand");
    assert!(dots >= 30, "only {dots} dots with a large operand");
    assert!(work <= cfg.max_work, "a dot does {work} multiply-adds");
}

#[test]
fn default_config_leaves_large_operations_to_chance() {
    let cfg = Config::default();
    assert_eq!(cfg.large_op_percent, 0);
    let (reduces, dots, _) = census(&cfg, 0..300);
    // Only the 2% large fresh shapes (`large_dim_percent`) reach reduce/dot by chance.
    assert!(
        reduces + dots < 30,
        "{reduces} reduces and {dots} dots with large operands"
    );
}

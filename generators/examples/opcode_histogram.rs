//! Prints the opcode-coverage histogram over N default modules.
//!
//! `cargo run -p generators --example opcode_histogram -- [COUNT] [SEED_START]`
fn main() {
    let mut a = std::env::args().skip(1);
    let count: u64 = a.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let start: u64 = a.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let h = generators::opcode_histogram(start, count, &generators::Config::default());
    let total: usize = h.values().sum();
    let mut rows: Vec<_> = h.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!(
        "{} distinct opcodes, {} instructions over {} modules",
        rows.len(),
        total,
        count
    );
    for (op, n) in rows {
        println!(
            "{:>28} {:>8} {:>6.2}%",
            op.name(),
            n,
            100.0 * n as f64 / total as f64
        );
    }
}

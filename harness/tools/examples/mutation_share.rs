//! How many of a campaign's programs are mutated real modules (`generators::generate_program`),
//! and from which corpora: `cargo run --release --example mutation_share -- SEED ITERATIONS [PACK]`
//! for the programs `hlo-diff fuzz --seed SEED --iterations ITERATIONS --pack PACK` makes (default
//! configuration, swarm per program).

fn main() {
    let a: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|s| s.parse().ok())
        .collect();
    let (seed, n, pack) = (
        a.first().copied().unwrap_or(0),
        a.get(1).copied().unwrap_or(40),
        a.get(2).copied().unwrap_or(8),
    );
    let cfg = generators::Config::default();
    let mut by_source = std::collections::BTreeMap::<String, usize>::new();
    let mut total = 0;
    for g in 0..n {
        for p in tools::campaign::programs_for(seed, g, pack as usize, &cfg, true) {
            total += 1;
            if let Some(o) = p.origin {
                let src = o.seed_module.split('/').next().unwrap_or("").to_string();
                *by_source.entry(src).or_default() += 1;
                println!("module {g}: {o}");
            }
        }
    }
    let mutated: usize = by_source.values().sum();
    println!("{mutated} of {total} programs mutated: {by_source:?}");
}

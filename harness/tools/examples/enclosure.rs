//! The set of legitimate results of each output element of a module, as the judge computes it
//! (`interp::enclose`), beside the oracle's value: a look inside the judge.
//!
//!     cargo run --release -p tools --example enclosure -- MODULE.hlo [INPUTS] [--seed N] [--all]
//!
//! INPUTS is any input file `hlo-diff run --inputs` reads; without it, inputs are generated from
//! `--seed` (plain values). Prints, per output leaf, the first 20 elements (`--all`: every one)
//! with the oracle's value, the set and the freedoms that widened it, and the ops without a rule
//! that left a set unbounded.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = args.first().expect("a module file");
    let text = std::fs::read_to_string(file).expect("readable");
    let module = hlo::parse::parse_module(&text).expect("a module");
    let seed = args
        .iter()
        .position(|a| a == "--seed")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0u64);
    let inputs = match args.get(1).filter(|a| !a.starts_with("--")) {
        Some(p) => {
            findings::inputs::read_inputs_file(std::path::Path::new(p))
                .expect("inputs")
                .fit_to(&module.entry_computation().parameter_shapes())
                .0
        }
        None => generators::inputs::generate_inputs_from_seed(
            &module,
            seed,
            &generators::Config {
                special_value_percent: 0,
                ..generators::Config::default()
            },
        ),
    };
    let all = args.iter().any(|a| a == "--all");
    let oracle = interp::evaluate(&module, &inputs).expect("the oracle runs");
    let enc = interp::enclose::enclose(&module, &inputs, &Default::default()).expect("a set");
    for (leaf, (set, value)) in enc.leaves.iter().zip(oracle.leaves()).enumerate() {
        println!("output {leaf} {}[{:?}]", set.ty, set.dims);
        let n = if all { set.len() } else { set.len().min(20) };
        for k in 0..n {
            println!(
                "  [{k}] oracle {:?}  set {}  ({})",
                value.get(k),
                set.describe(k),
                set.why(k).names().join(", ")
            );
        }
    }
    if !enc.unmodelled.is_empty() {
        println!("ops without a rule: {:?}", enc.unmodelled);
    }
}

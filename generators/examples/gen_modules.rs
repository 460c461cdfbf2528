//! Writes generated modules as HLO text files, after checking each with our own verifier and
//! the print/parse/print round trip. Modules that fail a check are still written; each failure
//! is printed on stderr as `OURS-REJECTED <file>: <reason>` and the exit status is 1.
//!
//! `cargo run -p generators --example gen_modules -- OUT_DIR [--seed S] [--count N] [--swarm] [--config FILE.json]`
use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut out: Option<PathBuf> = None;
    let mut cfg = generators::Config::default();
    let (mut seed, mut count, mut swarm) = (0u64, 10u64, false);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seed" => seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(0),
            "--count" => count = args.next().and_then(|s| s.parse().ok()).unwrap_or(10),
            "--swarm" => swarm = true,
            "--config" => {
                let path = args.next().expect("--config FILE");
                let text = std::fs::read_to_string(&path).expect("read config");
                cfg = serde_json::from_str(&text).expect("config JSON");
            }
            _ => out = Some(PathBuf::from(a)),
        }
    }
    let Some(out) = out else {
        eprintln!("usage: gen_modules OUT_DIR [--seed S] [--count N] [--swarm]");
        std::process::exit(2);
    };
    std::fs::create_dir_all(&out).expect("create output directory");
    let mut rejected = 0u64;
    for s in seed..seed + count {
        let m = if swarm {
            generators::generate_swarm_from_seed(s).0
        } else {
            generators::generate_from_seed(s, &cfg)
        };
        let kind = if swarm { "swarm" } else { "default" };
        let path = out.join(format!("{kind}_{s:06}.hlo"));
        let text = hlo::print::module_to_string(&m);
        std::fs::write(&path, &text).expect("write module");
        let problem = match hlo::verify::verify_module(&m) {
            Err(e) => Some(format!("verifier: {e}")),
            Ok(()) => match hlo::parse::parse_module(&text) {
                Err(e) => Some(format!("printed text does not parse: {e}")),
                Ok(back) if hlo::print::module_to_string(&back) != text => {
                    Some("print/parse/print is not a fixpoint".to_string())
                }
                Ok(_) => None,
            },
        };
        if let Some(p) = problem {
            rejected += 1;
            eprintln!("OURS-REJECTED {}: {p}", path.display());
        }
    }
    eprintln!(
        "our verifier and round trip: {}/{count} accepted",
        count - rejected
    );
    if rejected > 0 {
        std::process::exit(1);
    }
}

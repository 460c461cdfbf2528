//! Parses HLO text files and prints them back (for eyeballing the printer):
//! `cargo run -p hlo --example hlo_roundtrip -- FILE...`
fn main() {
    for path in std::env::args().skip(1) {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(2);
            }
        };
        match hlo::parse::parse_module_bytes(&bytes) {
            Ok(m) => print!("{}", hlo::print::module_to_string(&m)),
            Err(e) => {
                eprintln!("{path}:{e}");
                std::process::exit(2);
            }
        }
    }
}

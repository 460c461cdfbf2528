use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = harness::cli::Cli::parse();
    harness::cli::finish(harness::cli::run(cli))
}

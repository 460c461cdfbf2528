use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = harness::cli::bisect::Standalone::parse();
    harness::cli::finish(harness::cli::bisect::run(cli.args, &cli.global))
}

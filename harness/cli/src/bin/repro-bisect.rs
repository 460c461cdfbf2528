use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = cli::bisect::Standalone::parse();
    cli::finish(cli::bisect::run(cli.args, &cli.global))
}

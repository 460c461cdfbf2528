use clap::Parser;

fn main() -> std::process::ExitCode {
    cli::end_quietly_on_closed_pipes();
    let cli = cli::bisect::Standalone::parse();
    cli::finish(cli::bisect::run(cli.args, &cli.global))
}

use clap::Parser;

fn main() -> std::process::ExitCode {
    cli::end_quietly_on_closed_pipes();
    let cli = cli::Cli::parse();
    cli::finish(cli::run(cli))
}

//! The `coprof` command-line program: wires sources, engines and reports.

mod cmd;
mod error;
mod input;
mod output;
mod progress;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// coprof: profiling mechanisms from computer-architecture research, in
/// software, for real programs: a profiling co-processor with its
/// load-value profiler, a frequent-loop detector, branch-on-random
/// sampling, range-adaptive profiling and DCPI-style value sampling. Every
/// estimate can be checked against the exact answer.
#[derive(Parser)]
#[command(name = "coprof", version, propagate_version = true)]
#[command(after_help = "Start with `coprof demo`. Every report command takes --json.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Demo(cmd::demo::Args),
    Gen(cmd::gen::Args),
    Info(cmd::info::Args),
    Run(cmd::run::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(a) => cmd::demo::run(a),
        Command::Gen(a) => cmd::gen::run(a),
        Command::Info(a) => cmd::info::run(a),
        Command::Run(a) => cmd::run::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => error::report(&e),
    }
}

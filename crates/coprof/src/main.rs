//! The `coprof` command-line program: wires sources, engines and reports.

mod areas;
mod cmd;
mod error;
mod file_kind;
mod guest_env;
mod host_program;
mod input;
mod job;
mod notes;
mod output;
mod per_process;
mod perf_map;
mod progress;
mod sampled;
mod stop_signals;
mod symbol_cache;
mod symbols;
mod timing;
mod vdso;

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
    Bench(cmd::bench::Args),
    Demo(cmd::demo::Args),
    Gen(cmd::gen::Args),
    Info(cmd::info::Args),
    Ranges(cmd::ranges::Args),
    Loops(cmd::loops::Args),
    Values(Box<cmd::values::Args>),
    Sample(cmd::sample::Args),
    Run(cmd::run::Args),
    Record(cmd::record::Args),
    Profile(cmd::profile::Args),
    Report(cmd::profile::ReportArgs),
    Export(cmd::export::Args),
}

fn main() -> ExitCode {
    // Before anything is opened or changed: the descriptors coprof
    // inherited, and the signals it was started ignoring, are the
    // program's too.
    cmd::run::record_inherited();
    // Die quietly of SIGPIPE when the reader of standard output goes away
    // (`coprof loops run.cpt | head`), as other command-line tools do,
    // instead of failing to print.
    // SAFETY: setting a signal's disposition to the default before any
    // thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(a) => cmd::bench::run(a),
        Command::Demo(a) => cmd::demo::run(a),
        Command::Gen(a) => cmd::gen::run(a),
        Command::Info(a) => cmd::info::run(a),
        Command::Ranges(a) => cmd::ranges::run(a),
        Command::Loops(a) => cmd::loops::run(a),
        Command::Values(a) => cmd::values::run(*a),
        Command::Sample(a) => cmd::sample::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Record(a) => cmd::record::run(a),
        Command::Profile(a) => cmd::profile::run(a),
        Command::Report(a) => cmd::profile::report(a),
        Command::Export(a) => cmd::export::run(a),
    };
    match result {
        // A live run ends with its program's status, as `perf record`
        // and valgrind do.
        Ok(()) => input::program_status().map_or(ExitCode::SUCCESS, ExitCode::from),
        Err(e) => error::report(&e),
    }
}

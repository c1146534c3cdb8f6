//! Runs a static RV64 program under the simulator: `rvrun PROG ARGS...`.
//! A minimal driver for trying the simulator without the coprof CLI.

use coprof_core::{ClassSet, Collect};
use coprof_rv::{Config, Simulator};

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.is_empty() {
        eprintln!("usage: rvrun PROG [ARGS...]");
        std::process::exit(2);
    }
    let config = Config {
        args: args.clone(),
        env: std::env::vars_os()
            .map(|(mut k, v)| {
                k.push("=");
                k.push(v);
                k
            })
            .collect(),
        ..Config::default()
    };
    let mut sim = match Simulator::load(args[0].as_ref(), &config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rvrun: {e}");
            std::process::exit(2);
        }
    };
    let mut none = Collect {
        events: vec![],
        wants: ClassSet::NONE,
    };
    let t = std::time::Instant::now();
    match sim.run_to_exit(&mut none) {
        Ok(exit) => {
            let secs = t.elapsed().as_secs_f64();
            eprintln!(
                "rvrun: {} instructions in {:.3} s ({:.1} MIPS)",
                sim.instret(),
                secs,
                sim.instret() as f64 / secs / 1e6
            );
            if let coprof_rv::Exit::Signal { message, .. } = &exit {
                eprintln!("rvrun: {message}");
            }
            std::process::exit(exit.status());
        }
        Err(e) => {
            eprintln!("rvrun: {e}");
            std::process::exit(2);
        }
    }
}

//! `coprof demo`: the main job on a built-in default, no files needed.
//!
//! It runs a real program, bundled in the coprof binary, in the RV64
//! simulator and profiles it with every engine in one pass, beside the
//! exact answers: what `coprof profile --exact -- PROG` prints. The program
//! is workloads/kernels/dijkstra.c (shortest paths over a random graph),
//! built by scripts/build-demo.sh with `riscv64-linux-gnu-gcc -static -O2
//! -g` and committed, so that the demo works without a cross compiler.
//! `--synthetic` instead generates a synthetic stream in memory and prints
//! its exact profile.

use crate::job::parse_args;
use crate::output::{pct, print_json, thousands};
use coprof_core::synth::{GenConfig, Generator, Workload};
use coprof_core::{Class, ExactCounts, Source};
use serde::Serialize;

/// The bundled program: workloads/kernels/dijkstra.c for RV64GC Linux.
const PROGRAM: &[u8] = include_bytes!("../../demo/dijkstra-rv64");

/// Profile a bundled real program (Dijkstra's shortest paths, compiled for
/// RV64) with every engine and print what coprof finds, beside the exact
/// answers.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  coprof demo
  coprof demo --reps 3 --json
  coprof demo --synthetic --events 10000000")]
pub struct Args {
    /// Repetitions of the bundled program's work (one is about 61 million
    /// instructions).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// Profile a synthetic stream generated in memory instead.
    #[arg(long)]
    synthetic: bool,
    /// With --synthetic: events to generate.
    #[arg(long, short = 'n', default_value_t = 2_000_000, requires = "synthetic")]
    events: u64,
    /// With --synthetic: random seed.
    #[arg(long, default_value_t = 1, requires = "synthetic")]
    seed: u64,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if a.synthetic {
        return synthetic(&a);
    }
    let dir = tempfile::tempdir()?;
    let prog = dir.path().join("dijkstra");
    std::fs::write(&prog, PROGRAM)?;
    if !a.json {
        println!(
            "coprof demo: Dijkstra's shortest paths (workloads/kernels/dijkstra.c, RV64GC, \
             bundled) run in coprof's simulator, every engine in one pass, exact answers beside \
             the estimates.\n"
        );
    }
    // The program is a new temporary file each time: answers kept about
    // its symbols would never be asked again.
    let mut argv = vec!["--exact".to_string(), "--no-symbol-cache".to_string()];
    if a.json {
        argv.push("--json".into());
    }
    argv.extend([
        "--".to_string(),
        prog.display().to_string(),
        a.reps.to_string(),
    ]);
    crate::cmd::profile::run(parse_args(&argv)?)?;
    if !a.json {
        println!(
            "\nThe bundled program ran from a temporary file, {}; to run the commands above \
             yourself, build it with `workloads/build-kernels.sh` and use workloads/build/dijkstra.",
            prog.display()
        );
        println!(
            "Next: `coprof profile -o p.json -- PROG ARGS` profiles your own RV64 \
             program; `coprof export -o p.pb.gz -- PROG ARGS` writes its exact profile for \
             `go tool pprof` (or, to callgrind.out.NAME, for KCachegrind); \
             `coprof loops|ranges|values|sample --help` shows each engine's options."
        );
    }
    Ok(())
}

#[derive(Serialize)]
struct Loop {
    branch_pc: u64,
    body_lo: u64,
    body_hi: u64,
    iterations: u64,
    share_of_execution: f64,
}

#[derive(Serialize)]
struct Load {
    pc: u64,
    value: u64,
    invariance: f64,
    executions: u64,
}

#[derive(Serialize)]
struct Demo {
    workload: Workload,
    events: u64,
    classes: Vec<(String, u64)>,
    hot_pcs: Vec<(u64, u64)>,
    loops: Vec<Loop>,
    invariant_loads: Vec<Load>,
}

/// The exact profile of a synthetic `mixed` stream.
fn synthetic(a: &Args) -> anyhow::Result<()> {
    let cfg = GenConfig::new(Workload::Mixed, a.events).seed(a.seed);
    let mut exact = ExactCounts::new();
    Generator::new(&cfg)
        .map_err(crate::error::bad_input)?
        .run(&mut exact)
        .expect("generators do not fail");
    let n = exact.events.max(1);
    let loops = exact
        .top_loops(8)
        .into_iter()
        .map(|(pc, c)| Loop {
            branch_pc: pc,
            body_lo: c.target,
            body_hi: pc,
            iterations: c.taken,
            share_of_execution: exact.pcs_in(c.target, pc) as f64 / n as f64,
        })
        .collect();
    let mut loads: Vec<Load> = exact
        .load_values
        .iter()
        .map(|(&(pc, value), &k)| {
            let total = exact.pc_count(pc);
            Load {
                pc,
                value,
                invariance: k as f64 / total as f64,
                executions: total,
            }
        })
        .filter(|l| l.invariance >= 0.5 && l.executions >= 1000)
        .collect();
    loads.sort_by(|x, y| y.executions.cmp(&x.executions).then(x.pc.cmp(&y.pc)));
    loads.truncate(8);
    let d = Demo {
        workload: cfg.workload,
        events: exact.events,
        classes: Class::ALL
            .iter()
            .filter(|c| exact.class_count(**c) > 0)
            .map(|c| (c.name().to_string(), exact.class_count(*c)))
            .collect(),
        hot_pcs: exact.top_pcs(8),
        loops,
        invariant_loads: loads,
    };
    if a.json {
        return print_json(&d);
    }
    println!(
        "coprof demo: a synthetic '{}' program, {} events (seed {})\n",
        d.workload,
        thousands(d.events),
        a.seed
    );
    println!("instruction mix");
    for (c, k) in &d.classes {
        println!(
            "  {:<12} {:>12} {:>8}",
            c,
            thousands(*k),
            pct(*k as f64 / n as f64)
        );
    }
    println!("\nhottest instructions");
    for (pc, k) in &d.hot_pcs {
        println!(
            "  {:#10x} {:>12} {:>8}",
            pc,
            thousands(*k),
            pct(*k as f64 / n as f64)
        );
    }
    println!("\nhottest loops (taken short backward branches)");
    println!(
        "  {:>10}  {:<23} {:>12} {:>10}",
        "branch", "body", "iterations", "execution"
    );
    for l in &d.loops {
        println!(
            "  {:#10x}  [{:#x}, {:#x}] {:>12} {:>10}",
            l.branch_pc,
            l.body_lo,
            l.body_hi,
            thousands(l.iterations),
            pct(l.share_of_execution)
        );
    }
    println!("\nmost executed loads with an invariant value (>= 50%)");
    println!(
        "  {:>10} {:>20} {:>10} {:>12}",
        "pc", "value", "invariance", "executions"
    );
    for l in &d.invariant_loads {
        println!(
            "  {:#10x} {:>20} {:>10} {:>12}",
            l.pc,
            l.value,
            pct(l.invariance),
            thousands(l.executions)
        );
    }
    println!("\nNext: `coprof gen --workload loops -o loops.cpt` writes a trace; `coprof info loops.cpt` reads it.");
    Ok(())
}

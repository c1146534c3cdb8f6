//! `coprof demo`: the main job on a built-in default, no files needed.
//!
//! It generates a synthetic program's event stream in memory and prints
//! what coprof finds in it: the instruction mix, the hottest code, the
//! hottest loops and the most invariant loads, each from exact counts.

use crate::output::{pct, print_json, thousands};
use coprof_core::synth::{GenConfig, Generator, Workload};
use coprof_core::{Class, ExactCounts, Source};
use serde::Serialize;

/// Profile a built-in synthetic program and print what coprof finds.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  coprof demo\n  coprof demo --events 10000000 --json")]
pub struct Args {
    /// Events to generate.
    #[arg(long, short = 'n', default_value_t = 2_000_000)]
    events: u64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
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

pub fn run(a: Args) -> anyhow::Result<()> {
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

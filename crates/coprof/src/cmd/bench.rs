//! `coprof bench`: measurements that docs/PERFORMANCE.md quotes.
//!
//! `coprof bench io` times writing and reading traces of each synthetic
//! workload: the median of several runs of each, in million events per
//! second, beside the bytes per event on disk, before compression, and in
//! memory.

use crate::output::print_json;
use coprof_core::synth::{generate, GenConfig, Workload};
use coprof_core::trace::{TraceMeta, TraceReader, TraceWriter};
use coprof_core::{ClassSet, Event};
use serde::Serialize;
use std::time::Instant;

/// Run a benchmark and print its table.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  coprof bench io\n  coprof bench io --events 20000000 --runs 7 --json"
)]
pub struct Args {
    #[command(subcommand)]
    which: Which,
}

#[derive(clap::Subcommand, Debug)]
enum Which {
    /// Trace writing and reading speed and size, per workload.
    Io(IoArgs),
}

#[derive(clap::Args, Debug)]
struct IoArgs {
    /// Events per workload.
    #[arg(long, short = 'n', default_value_t = 10_000_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    events: u64,
    /// Timed runs per measurement (the median is reported).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..1000))]
    runs: u64,
    /// Workloads to measure (comma-separated; default all).
    #[arg(long, value_delimiter = ',', value_parser = |s: &str| s.parse::<Workload>())]
    workloads: Vec<Workload>,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct IoRow {
    workload: Workload,
    events: u64,
    file_bytes_per_event: f64,
    raw_bytes_per_event: f64,
    memory_bytes_per_event: usize,
    write_mevents_per_s: f64,
    read_mevents_per_s: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn io_row(w: Workload, events: &[Event], runs: usize) -> anyhow::Result<IoRow> {
    let dir = tempfile_dir()?;
    let path = dir.join(format!("bench-{w}.cpt"));
    let mut write_rates = Vec::new();
    let mut summary = None;
    for _ in 0..runs {
        let t = Instant::now();
        let mut wr = TraceWriter::create(&path, TraceMeta::default(), ClassSet::ALL)?;
        wr.write(events)?;
        summary = Some(wr.commit()?);
        write_rates.push(events.len() as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
    let s = summary.expect("at least one run");
    let mut read_rates = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut r = TraceReader::open(&path)?;
        let mut n = 0u64;
        let mut check = 0u64;
        while let Some(b) = r.next_batch()? {
            n += b.len() as u64;
            check = check.wrapping_add(b[b.len() - 1].pc);
        }
        let dt = t.elapsed().as_secs_f64();
        std::hint::black_box(check);
        anyhow::ensure!(
            n == events.len() as u64,
            "read {n} events of {}",
            events.len()
        );
        read_rates.push(n as f64 / dt / 1e6);
    }
    std::fs::remove_file(&path)?;
    let n = events.len() as f64;
    Ok(IoRow {
        workload: w,
        events: events.len() as u64,
        file_bytes_per_event: s.file_bytes as f64 / n,
        raw_bytes_per_event: s.raw_bytes as f64 / n,
        memory_bytes_per_event: std::mem::size_of::<Event>(),
        write_mevents_per_s: median(write_rates),
        read_mevents_per_s: median(read_rates),
    })
}

fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let d = std::env::temp_dir().join(format!("coprof-bench-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}

pub fn run(a: Args) -> anyhow::Result<()> {
    match a.which {
        Which::Io(io) => run_io(io),
    }
}

fn run_io(a: IoArgs) -> anyhow::Result<()> {
    let workloads = if a.workloads.is_empty() {
        Workload::ALL.to_vec()
    } else {
        a.workloads.clone()
    };
    let runs = a.runs as usize;
    let mut rows = Vec::new();
    for w in workloads {
        let events = generate(&GenConfig::new(w, a.events)).map_err(crate::error::bad_input)?;
        rows.push(io_row(w, &events, runs)?);
    }
    let _ = std::fs::remove_dir(tempfile_dir()?);
    if a.json {
        return print_json(&rows);
    }
    println!("| workload | events | bytes/event (file) | bytes/event (raw records) | bytes/event (in memory) | write Mevents/s | read+decode Mevents/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {} | {:.2} | {:.2} | {} | {:.1} | {:.1} |",
            r.workload,
            r.events,
            r.file_bytes_per_event,
            r.raw_bytes_per_event,
            r.memory_bytes_per_event,
            r.write_mevents_per_s,
            r.read_mevents_per_s
        );
    }
    Ok(())
}

//! `coprof gen`: write a synthetic stream with a known answer to a trace.

use crate::error::bad_input;
use crate::output::thousands;
use coprof_core::synth::{GenConfig, Generator, Workload};
use coprof_core::trace::TraceMeta;
use coprof_core::{ClassSet, Source};
use serde::Serialize;
use std::path::PathBuf;

/// Generate a deterministic synthetic event stream and write it as a trace.
///
/// Workloads: zipf (loads whose values and addresses follow a Zipf law),
/// uniform, loops (nested loops with known trip counts), phases (load
/// values that stay put for long phases), methods (calls, including a loop
/// calling two leaf methods in turn), mixed (every class in realistic
/// proportions). The same seed gives the same trace on every machine.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  coprof gen --workload loops --events 10000000 -o loops.cpt\n  coprof gen --workload zipf --alpha 1.2 --seed 7 -o zipf.cpt"
)]
pub struct Args {
    /// Which workload.
    #[arg(long, short, value_parser = parse_workload, default_value = "mixed")]
    workload: Workload,
    /// Number of events.
    #[arg(long, short = 'n', default_value_t = 1_000_000)]
    events: u64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Zipf exponent (zipf; the skew of minor values in phases).
    #[arg(long, default_value_t = 1.0)]
    alpha: f64,
    /// Largest number of distinct values per load PC (zipf, uniform).
    #[arg(long, default_value_t = 65536)]
    keys: u64,
    /// Only record these classes (comma-separated, e.g. load,cond-branch; default all).
    #[arg(long, value_parser = parse_classes, default_value = "all")]
    classes: ClassSet,
    /// Output trace file, or `-` for standard output (streamed; the
    /// summary then goes to standard error).
    #[arg(long, short, value_parser = crate::output::trace_file())]
    output: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_workload(s: &str) -> Result<Workload, String> {
    s.parse()
}

/// Parses a class list for clap.
pub fn parse_classes(s: &str) -> Result<ClassSet, String> {
    s.parse()
}

#[derive(Serialize)]
struct Summary<'a> {
    output: &'a std::path::Path,
    workload: Workload,
    events: u64,
    file_bytes: u64,
    raw_bytes: u64,
    bytes_per_event: f64,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let cfg = GenConfig {
        workload: a.workload,
        events: a.events,
        seed: a.seed,
        alpha: a.alpha,
        keys: a.keys,
    };
    let mut gen = Generator::new(&cfg).map_err(bad_input)?;
    let meta = TraceMeta {
        source: "synthetic".into(),
        isa: "synthetic".into(),
        program: a.workload.name().into(),
        args: vec![
            format!("--events={}", a.events),
            format!("--seed={}", a.seed),
            format!("--alpha={}", a.alpha),
            format!("--keys={}", a.keys),
        ],
        ..TraceMeta::default()
    };
    let mut w = crate::output::trace_writer(&a.output, meta, a.classes)?;
    {
        let mut p = crate::progress::ProgressSink::new(&mut w, a.events, "events");
        gen.run(&mut p).expect("generators do not fail");
        p.done();
    }
    let s = w.commit()?;
    let sum = Summary {
        output: &a.output,
        workload: a.workload,
        events: s.events,
        file_bytes: s.file_bytes,
        raw_bytes: s.raw_bytes,
        bytes_per_event: s.file_bytes as f64 / s.events.max(1) as f64,
    };
    let text = if a.json {
        serde_json::to_string_pretty(&sum)?
    } else {
        format!(
            "wrote {} {} events to {} ({} bytes, {:.2} bytes/event)",
            thousands(s.events),
            a.workload,
            crate::output::trace_name(&a.output),
            thousands(s.file_bytes),
            sum.bytes_per_event
        )
    };
    crate::output::print_summary(&a.output, &text);
    Ok(())
}

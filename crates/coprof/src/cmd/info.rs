//! `coprof info`: what a trace holds.

use crate::output::{pct, print_json, thousands};
use coprof_core::trace::TraceMeta;
use coprof_core::Class;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Show a trace's header, event count, events per class and per thread, and size.
///
/// Reads the whole trace, checking every chunk, so it also tells whether a
/// trace is intact.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  coprof info loops.cpt\n  coprof info --json run.cpt")]
pub struct Args {
    /// Trace file (.cpt), or `-` for standard input.
    file: PathBuf,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Info {
    file: PathBuf,
    version: u16,
    /// Written as it went, with the final metadata after the end marker.
    streamed: bool,
    meta: TraceMeta,
    events: u64,
    /// Thread switches recorded between the events (version 2).
    switches: u64,
    /// Sampled events' stacks recorded before them (version 3).
    #[serde(skip_serializing_if = "is_zero")]
    stacks: u64,
    /// The events of each thread the switches name, by id.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    threads: Vec<ThreadEvents>,
    classes: BTreeMap<String, u64>,
    chunks: u64,
    file_bytes: u64,
    raw_bytes: u64,
    bytes_per_event: f64,
    raw_bytes_per_event: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A thread's share of a trace.
#[derive(Serialize)]
struct ThreadEvents {
    tid: u64,
    /// Its name: the one the trace records, else its program's.
    name: String,
    events: u64,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let mut r = crate::input::open_trace(&a.file)?;
    let mut per_class = [0u64; Class::ALL.len()];
    // Events per thread, from the switches; those before the first go
    // to no thread.
    let mut per_thread: BTreeMap<u64, u64> = BTreeMap::new();
    let mut thread = None;
    let bar = crate::progress::bar(r.meta().events, "events");
    while let Some(batch) = r.next_batch()? {
        for e in batch {
            per_class[e.class as usize] += 1;
        }
        if let Some(b) = &bar {
            b.inc(batch.len() as u64);
        }
        for (tid, events) in r.pieces() {
            thread = tid.or(thread);
            if let Some(t) = thread {
                *per_thread.entry(t).or_insert(0) += events.len() as u64;
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let st = r.stats().clone();
    let n = st.events.max(1) as f64;
    let info = Info {
        file: a.file.clone(),
        version: r.version(),
        streamed: r.is_streamed(),
        meta: r.meta().clone(),
        events: st.events,
        switches: st.switches,
        stacks: st.stacks,
        threads: per_thread
            .into_iter()
            .map(|(tid, events)| ThreadEvents {
                tid,
                name: r.meta().thread_name(tid),
                events,
            })
            .collect(),
        classes: Class::ALL
            .iter()
            .filter(|c| per_class[**c as usize] > 0)
            .map(|c| (c.name().to_string(), per_class[*c as usize]))
            .collect(),
        chunks: st.chunks,
        file_bytes: st.file_bytes,
        raw_bytes: st.raw_bytes,
        bytes_per_event: st.file_bytes as f64 / n,
        raw_bytes_per_event: st.raw_bytes as f64 / n,
    };
    if a.json {
        return print_json(&info);
    }
    let m = &info.meta;
    println!("trace      {}", info.file.display());
    println!(
        "format     .cpt version {}{}",
        info.version,
        if info.streamed { ", streamed" } else { "" }
    );
    println!("source     {} ({})", m.source, m.isa);
    if !m.program.is_empty() {
        println!("program    {} {}", m.program, m.args.join(" "));
    }
    if let Some(pid) = m.pid {
        let attached = match m.extra.contains_key("attached") {
            true => ", attached to as it ran (coprof record --attach)",
            false => "",
        };
        println!("process    {pid}{attached}");
    }
    if let Some(how) = m.extra.get("sampling").and_then(sampling_text) {
        println!("sampled    {how}");
    }
    if let Some(ns) = m.cpu_ns {
        println!(
            "cpu time   {:.3} s of its threads' while sampled",
            crate::output::seconds(ns)
        );
    }
    print_spans(
        "code",
        m.modules
            .iter()
            .map(|x| (x.start, x.end, x.path.display().to_string())),
    );
    print_spans(
        "mapped",
        m.areas.iter().map(|a| (a.start, a.end, a.name.clone())),
    );
    println!(
        "recorded   {}",
        if m.classes.is_empty() {
            "?".into()
        } else {
            m.classes.join(",")
        }
    );
    println!("events     {}", thousands(info.events));
    if info.switches > 1 {
        println!(
            "threads    {} switches between threads",
            thousands(info.switches - 1)
        );
    }
    if info.stacks > 0 {
        let whole = m.whole_stacks.map(|w| {
            format!(
                ", {} ({}) to their thread's first frame",
                thousands(w),
                pct(w as f64 / info.stacks as f64)
            )
        });
        println!(
            "stacks     {}, each before its sample's event{}",
            thousands(info.stacks),
            whole.unwrap_or_default()
        );
    }
    println!(
        "size       {} bytes in {} chunks: {:.2} bytes/event ({:.2} before compression)",
        thousands(info.file_bytes),
        info.chunks,
        info.bytes_per_event,
        info.raw_bytes_per_event
    );
    println!();
    println!("{:<12} {:>14} {:>8}", "class", "events", "share");
    for (c, k) in &info.classes {
        println!("{:<12} {:>14} {:>8}", c, thousands(*k), pct(*k as f64 / n));
    }
    if info.threads.len() > 1 {
        println!();
        println!(
            "{:<12} {:<16} {:>14} {:>8}",
            "thread", "name", "events", "share"
        );
        for t in &info.threads {
            let share = pct(t.events as f64 / n);
            println!(
                "{:<12} {:<16} {:>14} {:>8}",
                t.tid,
                t.name,
                thousands(t.events),
                share
            );
        }
    }
    Ok(())
}

/// Address ranges and their names, one per line, the first under `title`.
fn print_spans(title: &str, spans: impl Iterator<Item = (u64, u64, String)>) {
    for (i, (start, end, name)) in spans.enumerate() {
        let title = if i == 0 { title } else { "" };
        println!("{title:<10} {start:#x}..{end:#x} {name}");
    }
}

/// How a native program was sampled, in words, from its trace's
/// `sampling` metadata (`coprof record`'s
/// [`sampling_meta`](crate::cmd::record::sampling_meta)); `None` where it
/// says no period.
fn sampling_text(s: &serde_json::Value) -> Option<String> {
    let period_ns = s.get("period_ns")?.as_u64()?;
    let on = |key: &str| s.get(key).and_then(|v| v.as_bool()) == Some(true);
    let mut parts = vec![format!(
        "a sample every ~{} µs of each thread's CPU time",
        thousands(period_ns / 1000)
    )];
    if on("next_load") {
        parts.push(match on("single_step") {
            true => "each at its next load, stepped to".into(),
            false => "each at its next load".into(),
        });
    }
    if on("ring_buffer") {
        parts.push("into ring buffers, the program not stopped".into());
    }
    if on("frame_pointers") {
        parts.push("stacks from the kernel's walk of the frame pointers".into());
    }
    if let Some(copy) = s.get("stack_copy").and_then(|v| v.as_u64()) {
        parts.push(format!(
            "stacks unwound from the top {} bytes the kernel copied",
            thousands(copy)
        ));
    }
    if on("same_cpu") {
        parts.push("on one CPU".into());
    }
    if let Some(seed) = s.get("random_seed").and_then(|v| v.as_u64()) {
        parts.push(format!("periods drawn with seed {seed}"));
    }
    Some(parts.join("; "))
}

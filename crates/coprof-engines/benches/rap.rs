//! Range-adaptive profiling benchmark (Mysore et al., TACO 2008, §3.2.1 and
//! §4): events per second of the RAP tree on a Zipf(1.0) value stream at
//! ε = 1% with and without the merging event buffer, beside exact counting
//! of the same stream in a hash map; then the memory table (bytes, and max
//! and average nodes for ε = 10% and 1% on the zipf, loops and mixed
//! streams) printed as Markdown for docs/PERFORMANCE.md.
//!
//! Every case is timed twice: by the wall clock (criterion's default) and
//! by the CPU time of the benchmark thread, which is what one core spends
//! when the machine is shared with other work.
//!
//! Run: cargo bench -p coprof-engines --bench rap -- --warm-up-time 1 --measurement-time 3

use coprof_core::synth::{generate, GenConfig, Workload};
use coprof_core::Sink;
use coprof_engines::rap::{ExactPoints, RangeProfiler, Rap, RapConfig, Stream};
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{black_box, BenchmarkGroup, Criterion, Throughput};

const EVENTS: u64 = 4_000_000;

fn config(epsilon: f64, buffer: bool) -> RapConfig {
    RapConfig {
        buffer_bytes: buffer.then_some(1024),
        ..RapConfig::with_epsilon(epsilon)
    }
}

fn zipf_values() -> Vec<u64> {
    generate(&GenConfig::new(Workload::Zipf, EVENTS))
        .unwrap()
        .iter()
        .map(|e| e.value)
        .collect()
}

/// CPU time of the calling thread, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A criterion measurement of the benchmark thread's CPU time.
struct ThreadCpu;

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WallTime.formatter()
    }
}

fn throughput<M: Measurement>(c: &mut Criterion<M>, clock: &str, values: &[u64], loops: &[u64]) {
    let mut g = c.benchmark_group(format!("rap-{clock}/zipf-values"));
    g.sample_size(10);
    g.throughput(Throughput::Elements(values.len() as u64));
    rap_cases(&mut g, values);
    g.bench_function("exact-hashmap", |b| {
        b.iter(|| {
            let mut x = ExactPoints::new([Stream::LoadValue]);
            for &v in values {
                x.add_points(1, [v]);
            }
            black_box(x.distinct())
        })
    });
    g.finish();
    // A stream with the locality of real code: the PCs of the loops
    // workload, where the merging buffer has repeats to combine.
    let mut g = c.benchmark_group(format!("rap-{clock}/loops-pc"));
    g.sample_size(10);
    g.throughput(Throughput::Elements(loops.len() as u64));
    rap_cases(&mut g, loops);
    g.finish();
}

/// RAP at ε = 1% over `points`, with and without the merging buffer, fed
/// a slice at a time (`add_all`, as the event sinks do) and one event at a
/// time (`add`).
fn rap_cases<M: Measurement>(g: &mut BenchmarkGroup<M>, points: &[u64]) {
    for (name, buffer) in [("rap-eps1%-buffer", true), ("rap-eps1%-no-buffer", false)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut rap: Rap<1> = Rap::new(config(0.01, buffer)).unwrap();
                rap.add_all(points.iter().map(|&v| [v]));
                rap.flush();
                black_box(rap.nodes())
            })
        });
        g.bench_function(format!("{name}-one-by-one"), |b| {
            b.iter(|| {
                let mut rap: Rap<1> = Rap::new(config(0.01, buffer)).unwrap();
                for &v in points {
                    rap.add([v]);
                }
                rap.flush();
                black_box(rap.nodes())
            })
        });
    }
}

fn memory_table(values: &[u64]) {
    println!("\n### Memory: bytes held after {EVENTS} Zipf(1.0) load values\n");
    println!("| counter | bytes | nodes or entries |");
    println!("|---|---:|---:|");
    for buffer in [true, false] {
        let mut rap: Rap<1> = Rap::new(config(0.01, buffer)).unwrap();
        for &v in values {
            rap.add([v]);
        }
        let s = rap.snapshot();
        println!(
            "| RAP ε=1%, buffer {} | {} | {} nodes (max {}) |",
            if buffer { "on" } else { "off" },
            s.bytes,
            s.nodes_final,
            s.nodes_max
        );
    }
    let mut x = ExactPoints::new([Stream::LoadValue]);
    for &v in values {
        x.add_points(1, [v]);
    }
    println!(
        "| exact hash map | {} | {} entries |",
        x.bytes(),
        x.distinct()
    );

    println!(
        "\n### Memory: RAP tree nodes over {EVENTS}-event streams (buffer on, b = 4, 64-bit)\n"
    );
    println!("| stream | ε | log_b(R)/ε | nodes max | nodes avg | nodes final | bytes |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (workload, stream) in [
        (Workload::Zipf, Stream::LoadValue),
        (Workload::Loops, Stream::Pc),
        (Workload::Mixed, Stream::Pc),
    ] {
        let events = generate(&GenConfig::new(workload, EVENTS)).unwrap();
        for epsilon in [0.1, 0.01] {
            let mut p = RangeProfiler::new(Rap::new(config(epsilon, true)).unwrap(), [stream]);
            p.observe(&events);
            p.finish();
            let s = p.snapshot();
            println!(
                "| {workload} {stream} | {}% | {:.0} | {} | {:.0} | {} | {} |",
                epsilon * 100.0,
                s.levels as f64 / epsilon,
                s.nodes_max,
                s.nodes_avg,
                s.nodes_final,
                s.bytes
            );
        }
    }
    println!();
}

fn main() {
    let values = zipf_values();
    let loops: Vec<u64> = generate(&GenConfig::new(Workload::Loops, EVENTS))
        .unwrap()
        .iter()
        .map(|e| e.pc)
        .collect();
    let mut wall = Criterion::default().configure_from_args();
    throughput(&mut wall, "wall", &values, &loops);
    let mut cpu = Criterion::default()
        .with_measurement(ThreadCpu)
        .configure_from_args();
    throughput(&mut cpu, "cpu", &values, &loops);
    wall.final_summary();
    memory_table(&values);
}

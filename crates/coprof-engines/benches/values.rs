//! Throughput of the value profilers, against exact (PC, value) counting
//! in a hash map measured in the same run: the co-processor's load-value
//! profiler (Zilles & Sohi, HPCA 2001, §5.1) and Gibbons–Matias hotlists
//! covering 10,000 PCs (DCPI, Burrows et al., ASPLOS 2000, §2.2).
//!
//! Run: cargo bench -p coprof-engines --bench values -- --warm-up-time 1 --measurement-time 3
//! Results go into docs/PERFORMANCE.md, section "Value profiling".

use coprof_core::synth::{generate, GenConfig, Workload};
use coprof_core::{Event, Sink};
use coprof_engines::coproc::{Coprocessor, HostConfig, LoadValueProfiler, LvpConfig, Sample};
use coprof_engines::hotlist::{HotlistConfig, HotlistTable, ValueKind, Variant};
use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rand::SeedableRng;
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use rustc_hash::FxHashMap;

const N: usize = 1 << 20;

/// Time this thread spent on a CPU, in nanoseconds, from
/// /proc/thread-self/schedstat. On a shared machine wall time counts the
/// time other processes hold the cores; CPU time measures what one core
/// does, which is what the targets are stated in.
struct CpuTime;

fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .expect("/proc/thread-self/schedstat is readable (Linux)")
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, i: u64) -> u64 {
        thread_cpu_ns() - i
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
        &CpuTimeFormatter
    }
}

struct CpuTimeFormatter;

impl ValueFormatter for CpuTimeFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = if typical >= 1e9 {
            (1e9, "s cpu")
        } else if typical >= 1e6 {
            (1e6, "ms cpu")
        } else if typical >= 1e3 {
            (1e3, "us cpu")
        } else {
            (1.0, "ns cpu")
        };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }
    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let n = match t {
            Throughput::Elements(n) | Throughput::Bytes(n) | Throughput::BytesDecimal(n) => *n,
        } as f64;
        values.iter_mut().for_each(|v| *v = n * 1e9 / *v / 1e6);
        "M/s per core"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

/// Loads at 10,000 PCs (Zipf), each PC with up to 1,000 values (Zipf).
fn wide_loads(seed: u64, n: usize) -> Vec<Event> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let pcs = Zipf::new(10_000, 1.0).unwrap();
    let values = Zipf::new(1_000, 1.0).unwrap();
    (0..n)
        .map(|_| {
            let i = pcs.sample(&mut rng) as u64;
            let v = values.sample(&mut rng) as u64;
            Event::load(0x40_0000 + 4 * i, 0x1000_0000 + 8 * v, 8, (i << 20) + v)
        })
        .collect()
}

fn exact(events: &[Event]) -> usize {
    let mut m: FxHashMap<(u64, u64), u64> = FxHashMap::default();
    for e in events {
        *m.entry((e.pc, e.value)).or_insert(0) += 1;
    }
    m.len()
}

fn coproc(c: &mut Criterion<CpuTime>) {
    let events = generate(&GenConfig::new(Workload::Zipf, N as u64)).unwrap();
    let samples: Vec<Sample> = events
        .iter()
        .map(|e| Sample {
            pc: e.pc,
            value: e.value,
        })
        .collect();
    let mut g = c.benchmark_group("values/zipf-256-pcs");
    g.throughput(Throughput::Elements(N as u64));
    let host = || {
        Coprocessor::new(
            &HostConfig::default(),
            LoadValueProfiler::new(LvpConfig::default()).unwrap(),
        )
        .unwrap()
    };
    g.bench_function("coproc-program", |b| {
        b.iter_batched(
            host,
            |mut cp| {
                for s in &samples {
                    cp.offer(*s);
                }
                cp.stats().interrupts
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("coproc-host-end-to-end", |b| {
        b.iter_batched(
            host,
            |mut cp| {
                cp.observe(&events);
                cp.finish();
                cp.stats().processed
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("exact-hashmap", |b| b.iter(|| exact(black_box(&events))));
    g.finish();
}

fn hotlists(c: &mut Criterion<CpuTime>) {
    let events = wide_loads(7, N);
    let mut g = c.benchmark_group("values/10000-pcs");
    g.throughput(Throughput::Elements(N as u64));
    for variant in [Variant::Concise, Variant::Counting] {
        let new = move || {
            HotlistTable::new(HotlistConfig {
                variant,
                ..HotlistConfig::default()
            })
            .unwrap()
        };
        let feed = |mut t: HotlistTable, ev: &[Event]| {
            for e in ev {
                t.add(e.pc, ValueKind::Loaded, e.value);
            }
            t
        };
        // Cold: every list starts at p = 1 and thins often.
        g.bench_function(format!("hotlist-{variant}-cold"), |b| {
            b.iter_batched(new, |t| feed(t, &events).lists(), BatchSize::LargeInput)
        });
        // Warm: the lists have seen 8 Mi other samples; p has settled.
        let mut warm = None;
        g.bench_function(format!("hotlist-{variant}-warm"), |b| {
            let w = warm.get_or_insert_with(|| feed(new(), &wide_loads(8, 8 * N)));
            b.iter_batched(
                || w.clone(),
                |t| feed(t, &events).lists(),
                BatchSize::LargeInput,
            )
        });
    }
    // The co-processor's program on the same 10,000 PCs: its 256 slots
    // thrash here, which exercises replacement, thrash interrupts and the
    // partition filter's reprogramming.
    let samples: Vec<Sample> = events
        .iter()
        .map(|e| Sample {
            pc: e.pc,
            value: e.value,
        })
        .collect();
    g.bench_function("coproc-program", |b| {
        b.iter_batched(
            || {
                Coprocessor::new(
                    &HostConfig::default(),
                    LoadValueProfiler::new(LvpConfig::default()).unwrap(),
                )
                .unwrap()
            },
            |mut cp| {
                for s in &samples {
                    cp.offer(*s);
                }
                cp.stats().interrupts
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("exact-hashmap", |b| b.iter(|| exact(black_box(&events))));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = coproc, hotlists
}
criterion_main!(benches);

//! Per-site overhead of sampled instrumentation: no instrumentation, full
//! instrumentation, counter-based sampling, branch-on-random (an explicit
//! LFSR unit, and the thread-local one behind `brr!(freq, {..})`) and
//! geometric countdown sampling, at sampling intervals 2^1 … 2^16.
//!
//! The kernel is the paper's microbenchmark (Lee & Zilles, CGO 2008, §5.3):
//! a loop over half a million characters computing a checksum and counting
//! character classes, with one instrumentation site per character whose
//! instrumentation records the character in a histogram.
//!
//! Criterion measures nanoseconds. After it, an interleaved pass runs every
//! configuration once per round for 21 rounds (so that load changes on a
//! shared machine hit all alike) and writes the median nanoseconds and, on
//! x86-64, time-stamp-counter ticks per site to
//! `target/coprof-brr-overhead/interleaved.csv`.
//! `cargo run -p coprof-brr --example overhead_report` turns both into the
//! table and plot of docs/PERFORMANCE.md.
//!
//! Run: `cargo bench -p coprof-brr --bench overhead -- --warm-up-time 1 --measurement-time 2`

use coprof_brr::{brr, rng::SplitMix64, sampled, Brr, Counter, Geometric};
use criterion::{black_box, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

/// Characters in the input, as in §5.3.
const CHARS: usize = 500_000;

fn text() -> Vec<u8> {
    const ALPHABET: &[u8] = b"etaoinshrdlucmfwypvbgkqjxzETAOINSHRDLU0123456789     ,.;:!?-()'\"\n";
    let mut r = SplitMix64::new(2008);
    (0..CHARS)
        .map(|_| ALPHABET[(r.next_u64() % ALPHABET.len() as u64) as usize])
        .collect()
}

/// What the kernel computes: a checksum and counts of character classes.
#[derive(Default)]
struct Stats {
    checksum: u32,
    classes: [u32; 5],
}

/// Character class of each byte: letter, digit, space, punctuation, other.
/// A table, so the kernel does not pay branch mispredictions on random
/// text, which would bury the frameworks' cost in noise.
const CLASS: [u8; 256] = {
    let mut t = [4u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = match b {
            b'a'..=b'z' | b'A'..=b'Z' => 0,
            b'0'..=b'9' => 1,
            b' ' | b'\n' | b'\t' => 2,
            b'!'..=b'/' | b':'..=b'@' => 3,
            _ => 4,
        };
        c += 1;
    }
    t
};

#[inline(always)]
fn work(s: &mut Stats, c: u8) {
    s.checksum = s.checksum.rotate_left(5) ^ c as u32;
    s.classes[CLASS[c as usize] as usize] += 1;
}

/// The instrumentation: record the character.
#[inline(always)]
fn record(hist: &mut [u64; 256], c: u8) {
    hist[c as usize] += 1;
}

/// The sampling frameworks compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    None,
    Full,
    Counter,
    Brr,
    BrrThreadLocal,
    Geometric,
}

impl Variant {
    const SAMPLED: [Variant; 4] = [
        Variant::Counter,
        Variant::Brr,
        Variant::BrrThreadLocal,
        Variant::Geometric,
    ];

    fn name(self) -> &'static str {
        match self {
            Variant::None => "none",
            Variant::Full => "full",
            Variant::Counter => "counter",
            Variant::Brr => "brr",
            Variant::BrrThreadLocal => "brr-thread-local",
            Variant::Geometric => "geometric",
        }
    }
}

/// Runs the kernel once; `log2` is the sampling interval's logarithm.
#[inline(never)]
fn run(v: Variant, log2: u32, input: &[u8], hist: &mut [u64; 256]) -> u32 {
    let mut s = Stats::default();
    match v {
        Variant::None => {
            for &c in input {
                work(&mut s, c);
            }
        }
        Variant::Full => {
            for &c in input {
                work(&mut s, c);
                record(hist, c);
            }
        }
        Variant::Counter => {
            let mut counter = Counter::new(1 << log2).unwrap();
            for &c in input {
                work(&mut s, c);
                sampled!(counter, { record(hist, c) });
            }
        }
        Variant::Brr => {
            let mut unit = Brr::new(1);
            let freq = log2 - 1;
            for &c in input {
                work(&mut s, c);
                brr!(unit, freq, { record(hist, c) });
            }
        }
        Variant::BrrThreadLocal => {
            let freq = log2 - 1;
            for &c in input {
                work(&mut s, c);
                brr!(freq, { record(hist, c) });
            }
        }
        Variant::Geometric => {
            let mut g = Geometric::new(1 << log2, 1).unwrap();
            for &c in input {
                work(&mut s, c);
                sampled!(g, { record(hist, c) });
            }
        }
    }
    s.checksum ^ s.classes.iter().sum::<u32>()
}

fn bench(c: &mut Criterion, input: &[u8]) {
    let mut group = c.benchmark_group("overhead");
    group.throughput(Throughput::Elements(CHARS as u64));
    let mut hist = [0u64; 256];
    for v in [Variant::None, Variant::Full] {
        group.bench_function(BenchmarkId::new(v.name(), 0), |b| {
            b.iter(|| run(v, black_box(1), black_box(input), &mut hist))
        });
    }
    for log2 in 1..=16u32 {
        for v in Variant::SAMPLED {
            group.bench_function(BenchmarkId::new(v.name(), log2), |b| {
                b.iter(|| run(v, black_box(log2), black_box(input), &mut hist))
            });
        }
    }
    group.finish();
    black_box(hist);
}

#[cfg(target_arch = "x86_64")]
fn ticks() -> Option<u64> {
    // SAFETY: RDTSC has no preconditions on x86-64.
    Some(unsafe { core::arch::x86_64::_rdtsc() })
}

#[cfg(not(target_arch = "x86_64"))]
fn ticks() -> Option<u64> {
    None
}

/// Every configuration measured in the pass after criterion.
fn configs() -> Vec<(Variant, u32)> {
    let mut v = vec![(Variant::None, 0), (Variant::Full, 0)];
    for log2 in 1..=16u32 {
        for s in Variant::SAMPLED {
            v.push((s, log2));
        }
    }
    v
}

/// Interleaved pass: every configuration runs once per round, round after
/// round, so that a load change on the shared machine hits all of them
/// alike; the medians over the rounds are written as nanoseconds and (on
/// x86-64) time-stamp-counter ticks per site.
fn interleaved_pass(input: &[u8], rounds: usize) {
    let configs = configs();
    let mut ns: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); configs.len()];
    let mut tk: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); configs.len()];
    let mut hist = [0u64; 256];
    for _ in 0..rounds {
        for (i, &(v, log2)) in configs.iter().enumerate() {
            let l = log2.max(1);
            let t0 = std::time::Instant::now();
            let a = ticks();
            black_box(run(v, black_box(l), black_box(input), &mut hist));
            let b = ticks();
            let dt = t0.elapsed();
            ns[i].push(dt.as_nanos() as f64 / CHARS as f64);
            if let (Some(a), Some(b)) = (a, b) {
                tk[i].push((b - a) as f64 / CHARS as f64);
            }
        }
    }
    let median = |x: &mut Vec<f64>| -> Option<f64> {
        if x.is_empty() {
            return None;
        }
        x.sort_by(|a, b| a.total_cmp(b));
        Some(x[x.len() / 2])
    };
    let mut csv = String::from("variant,log2_interval,ns_per_site,tsc_ticks_per_site\n");
    for (i, &(v, log2)) in configs.iter().enumerate() {
        let n = median(&mut ns[i]).unwrap_or(f64::NAN);
        let t = median(&mut tk[i]).map_or(String::new(), |t| format!("{t:.4}"));
        csv.push_str(&format!("{},{log2},{n:.4},{t}\n", v.name()));
    }
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/coprof-brr-overhead");
    std::fs::create_dir_all(&dir).expect("create target/coprof-brr-overhead");
    std::fs::write(dir.join("interleaved.csv"), csv).expect("write interleaved.csv");
    if ticks().is_none() {
        eprintln!("no readable cycle counter on this machine: ticks not measured");
    }
    eprintln!("wrote {}", dir.join("interleaved.csv").display());
}

fn main() {
    let input = text();
    // The variants compute the same thing.
    let mut h = [0u64; 256];
    let expect = run(Variant::None, 1, &input, &mut h);
    for v in Variant::SAMPLED.into_iter().chain([Variant::Full]) {
        assert_eq!(run(v, 10, &input, &mut h), expect, "{v:?}");
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .configure_from_args();
    bench(&mut c, &input);
    c.final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` does not.
    if std::env::args().any(|a| a == "--bench") {
        interleaved_pass(&input, 21);
    }
}

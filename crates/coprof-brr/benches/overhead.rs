//! Per-site overhead of sampled instrumentation: no instrumentation, full
//! instrumentation, counter-based sampling, branch-on-random (an explicit
//! LFSR unit, the thread-local one behind `brr!(freq, {..})`, and
//! `BrrSkip`, the same outcomes counted down) and geometric countdown
//! sampling, at sampling intervals 2^1 … 2^16.
//!
//! The kernel is the paper's microbenchmark (Lee & Zilles, CGO 2008, §5.3):
//! a loop over half a million characters computing a checksum and counting
//! character classes, with one instrumentation site per character whose
//! instrumentation records the character in a histogram.
//!
//! Criterion measures nanoseconds. After it, an interleaved pass runs every
//! configuration once per round for [`ROUNDS`] rounds (so that load changes
//! on a shared machine hit all alike) and writes, per configuration, the
//! median nanoseconds per site and their interquartile range, the median
//! and interquartile range of the framework cost per site (each round's
//! sampled time less that round's uninstrumented time and 1/N of its
//! instrumentation cost, see `interleaved_pass`), the median
//! time-stamp-counter ticks per site (x86-64: reference cycles at the
//! counter's constant rate) and, where the kernel lets a process read its
//! own core cycle counter (Linux `perf_event_open`, user mode), the median
//! core cycles per site, to `target/coprof-brr-overhead/interleaved.csv`.
//! `cargo run -p coprof-brr --example overhead_report` turns both into the
//! tables and the plot of docs/PERFORMANCE.md.
//!
//! Run: `cargo bench -p coprof-brr --bench overhead -- --warm-up-time 1 --measurement-time 2`

use coprof_brr::{brr, rng::SplitMix64, sampled, Brr, BrrSkip, Counter, Geometric};
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

/// The kernel's work on one character. The checksum and the class counts
/// are separate locals, not fields of one struct: with the counts indexed
/// at run time the struct stays in memory, and whether the compiler then
/// keeps the checksum in a register or stores it at every character
/// depended on the sampler's code around it, a difference of a store per
/// site that has nothing to do with the framework.
#[inline(always)]
fn work(checksum: &mut u32, classes: &mut [u32; 5], c: u8) {
    *checksum = checksum.rotate_left(5) ^ c as u32;
    classes[CLASS[c as usize] as usize] += 1;
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
    BrrSkip,
    Geometric,
}

impl Variant {
    const SAMPLED: [Variant; 5] = [
        Variant::Counter,
        Variant::Brr,
        Variant::BrrThreadLocal,
        Variant::BrrSkip,
        Variant::Geometric,
    ];

    fn name(self) -> &'static str {
        match self {
            Variant::None => "none",
            Variant::Full => "full",
            Variant::Counter => "counter",
            Variant::Brr => "brr",
            Variant::BrrThreadLocal => "brr-thread-local",
            Variant::BrrSkip => "brr-skip",
            Variant::Geometric => "geometric",
        }
    }
}

std::thread_local! {
    /// One `BrrSkip` per interval, built before anything is timed: making
    /// one walks the register's whole period (see `construction`), which
    /// a program pays once per site, not once per run of a loop.
    static SKIP_UNITS: std::cell::RefCell<Vec<Option<BrrSkip>>> =
        std::cell::RefCell::new((0..=16).map(|_| None).collect());
}

/// The `BrrSkip` unit of interval 2^`log2`, built if it is not yet.
fn take_skip(log2: u32) -> BrrSkip {
    SKIP_UNITS
        .with(|u| u.borrow_mut()[log2 as usize].take())
        .unwrap_or_else(|| BrrSkip::new(log2 - 1, 1).unwrap())
}

/// Puts back the unit [`take_skip`] gave, for the next run.
fn put_skip(log2: u32, unit: BrrSkip) {
    SKIP_UNITS.with(|u| u.borrow_mut()[log2 as usize] = Some(unit));
}

/// Runs the kernel once; `log2` is the sampling interval's logarithm.
#[inline(never)]
fn run(v: Variant, log2: u32, input: &[u8], hist: &mut [u64; 256]) -> u32 {
    let (mut checksum, mut classes) = (0u32, [0u32; 5]);
    match v {
        Variant::None => {
            for &c in input {
                work(&mut checksum, &mut classes, c);
            }
        }
        Variant::Full => {
            for &c in input {
                work(&mut checksum, &mut classes, c);
                record(hist, c);
            }
        }
        Variant::Counter => {
            let mut counter = Counter::new(1 << log2).unwrap();
            for &c in input {
                work(&mut checksum, &mut classes, c);
                sampled!(counter, { record(hist, c) });
            }
        }
        Variant::Brr => {
            let mut unit = Brr::new(1);
            let freq = log2 - 1;
            for &c in input {
                work(&mut checksum, &mut classes, c);
                brr!(unit, freq, { record(hist, c) });
            }
        }
        Variant::BrrThreadLocal => {
            let freq = log2 - 1;
            for &c in input {
                work(&mut checksum, &mut classes, c);
                brr!(freq, { record(hist, c) });
            }
        }
        Variant::BrrSkip => {
            let mut unit = take_skip(log2);
            for &c in input {
                work(&mut checksum, &mut classes, c);
                sampled!(unit, { record(hist, c) });
            }
            put_skip(log2, unit);
        }
        Variant::Geometric => {
            let mut g = Geometric::new(1 << log2, 1).unwrap();
            for &c in input {
                work(&mut checksum, &mut classes, c);
                sampled!(g, { record(hist, c) });
            }
        }
    }
    checksum ^ classes.iter().sum::<u32>()
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
    // What making a `BrrSkip` costs: at freq 5 and up on the paper's
    // register it walks the whole period to make its table.
    let mut group = c.benchmark_group("construction");
    for freq in [4u32, 5, 9, 15] {
        group.bench_function(BenchmarkId::new("brr-skip", freq), |b| {
            b.iter(|| BrrSkip::new(black_box(freq), 1).unwrap())
        });
    }
    group.finish();
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

/// This thread's core cycle counter in user mode, through Linux
/// `perf_event_open` (absent in many virtual machines and containers).
/// The C library's `syscall`, `read` and `close` are declared here so
/// that the crate keeps no dependency for one system call.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod cycles {
    extern "C" {
        fn syscall(number: core::ffi::c_long, ...) -> core::ffi::c_long;
        fn read(fd: core::ffi::c_int, buf: *mut core::ffi::c_void, n: usize) -> isize;
        fn close(fd: core::ffi::c_int) -> core::ffi::c_int;
    }
    #[cfg(target_arch = "x86_64")]
    const SYS_PERF_EVENT_OPEN: core::ffi::c_long = 298;
    #[cfg(target_arch = "aarch64")]
    const SYS_PERF_EVENT_OPEN: core::ffi::c_long = 241;

    /// `struct perf_event_attr` up to `config1` (PERF_ATTR_SIZE_VER0).
    #[repr(C)]
    #[derive(Default)]
    struct Attr {
        kind: u32,
        size: u32,
        config: u64,
        sample_period: u64,
        sample_type: u64,
        read_format: u64,
        flags: u64,
        wakeup_events: u32,
        bp_type: u32,
        config1: u64,
    }
    const PERF_TYPE_HARDWARE: u32 = 0;
    const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
    const EXCLUDE_KERNEL: u64 = 1 << 5;
    const EXCLUDE_HV: u64 = 1 << 6;

    /// An open counter (a file descriptor).
    pub struct Cycles(core::ffi::c_int);

    impl Cycles {
        /// Opens the counter, or says why it cannot be read.
        pub fn open() -> Result<Cycles, String> {
            let attr = Attr {
                kind: PERF_TYPE_HARDWARE,
                size: core::mem::size_of::<Attr>() as u32,
                config: PERF_COUNT_HW_CPU_CYCLES,
                flags: EXCLUDE_KERNEL | EXCLUDE_HV,
                ..Attr::default()
            };
            // SAFETY: `attr` is a valid perf_event_attr of the size it
            // states; pid 0 / cpu -1 count this thread on any CPU.
            let fd = unsafe {
                syscall(
                    SYS_PERF_EVENT_OPEN,
                    &attr as *const Attr,
                    0 as core::ffi::c_int,
                    -1 as core::ffi::c_int,
                    -1 as core::ffi::c_int,
                    0 as core::ffi::c_ulong,
                )
            };
            if fd < 0 {
                return Err(format!(
                    "perf_event_open(PERF_COUNT_HW_CPU_CYCLES): {}",
                    std::io::Error::last_os_error()
                ));
            }
            Ok(Cycles(fd as core::ffi::c_int))
        }

        /// Cycles counted so far.
        pub fn read(&self) -> Option<u64> {
            let mut v = 0u64;
            // SAFETY: reads 8 bytes into `v` from a counter opened without
            // a read format, whose value is one u64.
            let n = unsafe { read(self.0, (&mut v as *mut u64).cast(), 8) };
            (n == 8).then_some(v)
        }
    }

    impl Drop for Cycles {
        fn drop(&mut self) {
            // SAFETY: the descriptor is ours and closed once.
            unsafe { close(self.0) };
        }
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod cycles {
    pub struct Cycles;
    impl Cycles {
        pub fn open() -> Result<Cycles, String> {
            Err("no core cycle counter is read on this system".into())
        }
        pub fn read(&self) -> Option<u64> {
            None
        }
    }
}

/// Rounds of the interleaved pass.
const ROUNDS: usize = 101;

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

/// The `q` quantile (0..=1) of `x`, by the nearest rank; sorts `x`.
fn quantile(x: &mut [f64], q: f64) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    x.sort_by(|a, b| a.total_cmp(b));
    Some(x[((x.len() - 1) as f64 * q).round() as usize])
}

/// Interleaved pass: every configuration runs once per round, round after
/// round, so that a load change on the shared machine hits all of them
/// alike; per configuration, the medians over the rounds of nanoseconds,
/// framework cost (nanoseconds, each round's own difference),
/// time-stamp-counter ticks and core cycles per site are written, with the
/// interquartile ranges of the first two.
fn interleaved_pass(input: &[u8], rounds: usize) {
    let configs = configs();
    let cyc = cycles::Cycles::open();
    let per_config = || -> Vec<Vec<f64>> { vec![Vec::with_capacity(rounds); configs.len()] };
    let (mut ns, mut tk, mut cy) = (per_config(), per_config(), per_config());
    let mut hist = [0u64; 256];
    for _ in 0..rounds {
        for (i, &(v, log2)) in configs.iter().enumerate() {
            let l = log2.max(1);
            let c0 = cyc.as_ref().ok().and_then(|c| c.read());
            let t0 = std::time::Instant::now();
            let a = ticks();
            black_box(run(v, black_box(l), black_box(input), &mut hist));
            let b = ticks();
            let dt = t0.elapsed();
            let c1 = cyc.as_ref().ok().and_then(|c| c.read());
            ns[i].push(dt.as_nanos() as f64 / CHARS as f64);
            if let (Some(a), Some(b)) = (a, b) {
                tk[i].push((b - a) as f64 / CHARS as f64);
            }
            if let (Some(a), Some(b)) = (c0, c1) {
                cy[i].push((b - a) as f64 / CHARS as f64);
            }
        }
    }
    // The framework cost, round by round: the sampled run less the
    // uninstrumented one and less 1/N of the instrumentation's own cost,
    // t(N) − t(none) − (t(full) − t(none))/N, all three from the same
    // round, so that a load change between rounds cancels out.
    let at = |v: Variant| configs.iter().position(|c| c.0 == v).expect("configured");
    let (none, full) = (ns[at(Variant::None)].clone(), ns[at(Variant::Full)].clone());
    let mut framework: Vec<Vec<f64>> = configs
        .iter()
        .enumerate()
        .map(|(i, &(v, log2))| match v {
            Variant::None | Variant::Full => Vec::new(),
            _ => (0..rounds)
                .map(|r| ns[i][r] - none[r] - (full[r] - none[r]) / (1u64 << log2) as f64)
                .collect(),
        })
        .collect();
    let fmt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.4}"));
    let iqr = |x: &mut [f64]| Some(quantile(x, 0.75)? - quantile(x, 0.25)?);
    let mut csv = String::from(
        "variant,log2_interval,ns_per_site,ns_iqr,framework_ns,framework_iqr,\
         tsc_ticks_per_site,cycles_per_site\n",
    );
    for (i, &(v, log2)) in configs.iter().enumerate() {
        csv.push_str(&format!(
            "{},{log2},{},{},{},{},{},{}\n",
            v.name(),
            fmt(quantile(&mut ns[i], 0.5)),
            fmt(iqr(&mut ns[i])),
            fmt(quantile(&mut framework[i], 0.5)),
            fmt(iqr(&mut framework[i])),
            fmt(quantile(&mut tk[i], 0.5)),
            fmt(quantile(&mut cy[i], 0.5)),
        ));
    }
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/coprof-brr-overhead");
    std::fs::create_dir_all(&dir).expect("create target/coprof-brr-overhead");
    std::fs::write(dir.join("interleaved.csv"), csv).expect("write interleaved.csv");
    if ticks().is_none() {
        eprintln!("no time-stamp counter on this machine: ticks not measured");
    }
    if let Err(e) = &cyc {
        eprintln!("core cycles not measured: {e}");
    }
    eprintln!("wrote {}", dir.join("interleaved.csv").display());
}

fn main() {
    let input = text();
    for log2 in 1..=16 {
        put_skip(log2, take_skip(log2));
    }
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
        interleaved_pass(&input, ROUNDS);
    }
}

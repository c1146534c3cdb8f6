//! Simulator speed: retired instructions per second on compute-bound C
//! kernels, with nothing attached and while delivering every load and
//! conditional-branch event to a consumer that counts them, side by side
//! with `qemu-riscv64` running the same binary in the same run.
//!
//! Run: `cargo bench -p coprof-rv --bench mips` (builds the kernels with
//! workloads/build-kernels.sh first). `COPROF_BENCH_RUNS` sets the runs per
//! configuration (default 5), `COPROF_BENCH_KERNELS` the kernels
//! (default `crc32,matmul`). Times are CPU time (user + system) of the
//! simulating thread or of the qemu child, so that a machine shared with
//! other jobs disturbs them less than wall time; wall-clock medians are
//! printed too. Prints a Markdown table for docs/PERFORMANCE.md.

use coprof_core::{Class, ClassSet, Event, Sink};
use coprof_rv::{Config, Exit, Simulator};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Counts the loads and conditional branches it receives.
struct Counter {
    counts: [u64; Class::ALL.len()],
}

impl Sink for Counter {
    fn wants(&self) -> ClassSet {
        ClassSet::of(Class::Load).with(Class::CondBranch)
    }
    fn observe(&mut self, batch: &[Event]) {
        for e in batch {
            self.counts[e.class as usize] += 1;
        }
    }
}

struct Nothing;

impl Sink for Nothing {
    fn wants(&self) -> ClassSet {
        ClassSet::NONE
    }
    fn observe(&mut self, _: &[Event]) {}
}

fn cpu_time(who: i32) -> Duration {
    // SAFETY: getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills ts.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

struct Row {
    kernel: String,
    instret: u64,
    events: u64,
    none: (Duration, Duration),
    counted: (Duration, Duration),
    qemu: (Duration, Duration),
}

fn sim_run(bin: &Path, sink: &mut dyn Sink) -> (u64, Duration, Duration) {
    let config = Config {
        args: vec![bin.as_os_str().to_owned()],
        ..Config::default()
    };
    let mut sim = Simulator::load(bin, &config).expect("kernel loads");
    let (c0, w0) = (thread_cpu(), Instant::now());
    // The kernels print a few lines; they go to this process's stdout.
    let exit = sim.run_to_exit(sink).expect("kernel runs");
    let (cpu, wall) = (thread_cpu() - c0, w0.elapsed());
    assert_eq!(exit, Exit::Code(0), "{} failed", bin.display());
    (sim.instret(), cpu, wall)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let status = Command::new(root.join("workloads/build-kernels.sh"))
        .stdout(Stdio::null())
        .status()
        .expect("workloads/build-kernels.sh runs");
    assert!(status.success(), "building the kernels failed");
    let runs: usize = std::env::var("COPROF_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let kernels = std::env::var("COPROF_BENCH_KERNELS").unwrap_or_else(|_| "crc32,matmul".into());
    let mut rows = Vec::new();
    for k in kernels.split(',') {
        let bin: PathBuf = root.join("workloads/build").join(k);
        let (mut none, mut counted, mut qemu) = (vec![], vec![], vec![]);
        let (mut instret, mut events) = (0, 0);
        for _ in 0..runs {
            let (n, cpu, wall) = sim_run(&bin, &mut Nothing);
            instret = n;
            none.push((cpu, wall));
            let mut c = Counter {
                counts: [0; Class::ALL.len()],
            };
            let (_, cpu, wall) = sim_run(&bin, &mut c);
            events = c.counts.iter().sum();
            counted.push((cpu, wall));
            let (c0, w0) = (cpu_time(libc::RUSAGE_CHILDREN), Instant::now());
            let st = Command::new("qemu-riscv64")
                .arg(&bin)
                .stdout(Stdio::null())
                .status()
                .expect("qemu-riscv64 runs (scripts/install-deps.sh installs it)");
            assert!(st.success());
            qemu.push((cpu_time(libc::RUSAGE_CHILDREN) - c0, w0.elapsed()));
        }
        let med = |v: &Vec<(Duration, Duration)>| {
            (
                median(v.iter().map(|x| x.0).collect()),
                median(v.iter().map(|x| x.1).collect()),
            )
        };
        rows.push(Row {
            kernel: k.to_string(),
            instret,
            events,
            none: med(&none),
            counted: med(&counted),
            qemu: med(&qemu),
        });
    }
    let mips = |n: u64, d: Duration| n as f64 / d.as_secs_f64() / 1e6;
    println!("\nmedians of {runs} runs; CPU time (wall time in parentheses)\n");
    println!("| kernel | instructions | coprof, nothing attached | coprof, loads+branches counted | qemu-riscv64 | coprof/qemu time (nothing attached) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {} | {:.3} s = **{:.0} MIPS** ({:.3} s) | {:.3} s = **{:.0} MIPS**, {} events ({:.3} s) | {:.3} s = {:.0} MIPS ({:.3} s) | {:.2}× |",
            r.kernel,
            r.instret,
            r.none.0.as_secs_f64(),
            mips(r.instret, r.none.0),
            r.none.1.as_secs_f64(),
            r.counted.0.as_secs_f64(),
            mips(r.instret, r.counted.0),
            r.events,
            r.counted.1.as_secs_f64(),
            r.qemu.0.as_secs_f64(),
            mips(r.instret, r.qemu.0),
            r.qemu.1.as_secs_f64(),
            r.none.0.as_secs_f64() / r.qemu.0.as_secs_f64(),
        );
    }
}

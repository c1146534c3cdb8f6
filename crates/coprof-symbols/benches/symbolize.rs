//! Symbolization speed: opening a binary, the first look-up of each PC
//! (which makes `addr2line` parse the units it falls in), a repeated
//! look-up without the per-PC cache and with it, and disassembly; side by
//! side so the cache's saving is measured, not assumed.
//!
//! Run: `cargo bench -p coprof-symbols --bench symbolize`. Two binaries:
//! this benchmark's own executable (x86-64, Rust, the `bench` profile's
//! line-table DWARF: a large real binary) and `tests/programs/symtest.c`
//! built with `riscv64-linux-gnu-gcc -static -O2 -g` (a simulator binary;
//! mostly glibc without DWARF). `COPROF_BENCH_PCS` sets the number of
//! distinct PCs (default 20000), spread evenly over the largest code
//! section; `COPROF_BENCH_RUNS` the runs per measure (default 5);
//! `COPROF_BENCH_BINARY` names one more binary to measure. Times are CPU
//! time of this thread (`CLOCK_THREAD_CPUTIME_ID`), medians, so
//! that other jobs on the machine disturb them less than wall time. Prints
//! a Markdown table for docs/PERFORMANCE.md.

use coprof_symbols::{Quality, Symbolizer};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills ts.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Median CPU time of `runs` calls of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = thread_cpu();
            f();
            thread_cpu() - t
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn riscv_symtest(dir: &Path) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in ["symtest.c", "scale.h"] {
        std::fs::copy(manifest.join("tests/programs").join(f), dir.join(f)).unwrap();
    }
    let out = dir.join("symtest");
    let st = Command::new("riscv64-linux-gnu-gcc")
        .args(["-static", "-O2", "-g", "-o"])
        .arg(&out)
        .arg(dir.join("symtest.c"))
        .status()
        .expect("riscv64-linux-gnu-gcc runs (scripts/install-deps.sh installs it)");
    assert!(st.success(), "building symtest.c failed");
    out
}

/// `n` PCs spread evenly over the largest code section, 2-byte aligned.
fn spread_pcs(sym: &Symbolizer, n: usize) -> Vec<u64> {
    let (start, end) = sym
        .code_ranges()
        .into_iter()
        .max_by_key(|(a, b)| b - a)
        .expect("the binary has code");
    let step = ((end - start) / n as u64).max(2) & !1;
    (0..n as u64)
        .map(|i| start + i * step)
        .filter(|&pc| pc < end)
        .collect()
}

fn ns_per(d: Duration, n: usize) -> f64 {
    d.as_nanos() as f64 / n as f64
}

fn measure(name: &str, path: &Path, n: usize, runs: usize) {
    let size = std::fs::metadata(path).unwrap().len();
    let open = median(runs, || {
        black_box(Symbolizer::open(path).unwrap());
    });
    // First look-ups: a fresh symbolizer per run, so every run pays for
    // parsing the units its PCs fall in.
    let probe = Symbolizer::open(path).unwrap();
    let pcs = spread_pcs(&probe, n);
    let mut firsts: Vec<Duration> = (0..runs)
        .map(|_| {
            let sym = Symbolizer::open(path).unwrap();
            let t = thread_cpu();
            for &pc in &pcs {
                black_box(sym.lookup(pc));
            }
            thread_cpu() - t
        })
        .collect();
    firsts.sort();
    let first = firsts[runs / 2];
    let sym = Symbolizer::open(path).unwrap();
    for &pc in &pcs {
        sym.lookup(pc);
    }
    let uncached = median(runs, || {
        for &pc in &pcs {
            black_box(sym.lookup_uncached(pc));
        }
    });
    let cached = median(runs, || {
        for &pc in &pcs {
            black_box(sym.lookup(pc));
        }
    });
    let disasm = median(runs, || {
        for &pc in &pcs {
            black_box(sym.disassemble(pc));
        }
    });
    let dwarf = pcs
        .iter()
        .filter(|&&pc| sym.lookup(pc).source == Quality::Dwarf)
        .count();
    println!(
        "| {name} | {:.1} MB | {} ({dwarf} from DWARF) | {:.1} ms | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} MB |",
        size as f64 / 1e6,
        pcs.len(),
        open.as_secs_f64() * 1e3,
        ns_per(first, pcs.len()),
        ns_per(uncached, pcs.len()),
        ns_per(cached, pcs.len()),
        ns_per(disasm, pcs.len()),
        sym.bytes() as f64 / 1e6,
    );
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument is a filter it
    // would pass to libtest, which this harness does not have.
    let n = env_usize("COPROF_BENCH_PCS", 20_000);
    let runs = env_usize("COPROF_BENCH_RUNS", 5).max(1);
    let dir = tempfile::tempdir().unwrap();
    let rv = riscv_symtest(dir.path());
    let me = std::env::current_exe().unwrap();
    println!("CPU time of one thread, medians of {runs} runs; per-PC times in ns.\n");
    println!("| binary | size | PCs | open | first look-up | repeat, no cache | repeat, cached | disassemble | bytes held |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    measure("this benchmark (x86-64, Rust)", &me, n, runs);
    measure("symtest -static -O2 -g (RV64)", &rv, n, runs);
    if let Some(extra) = std::env::var_os("COPROF_BENCH_BINARY") {
        let extra = PathBuf::from(extra);
        let name = extra.file_name().unwrap().to_string_lossy().into_owned();
        measure(&name, &extra, n, runs);
    }
}

//! Benchmarks of the frequent loop detector (Gordon-Ross & Vahid, CASES
//! 2003): one configuration's throughput in short backward branches per
//! second, beside exact counting in a hash map, and the 672-configuration
//! design-space sweep (the paper's Fig. 3) over a 10-million-sbb stream of
//! the `loops` workload (and a scattered worst case of 1 million).
//!
//! Times are the benchmark thread's CPU time ([`support::CpuTime`]): the
//! machine is shared, and CPU time is what one core spent on the work.
//!
//! Run: `cargo bench -p coprof-engines --bench loops -- --warm-up-time 1 --measurement-time 3`

use coprof_core::synth::{GenConfig, Generator, Workload};
use coprof_core::{Class, Event, Sink, Source};
use coprof_engines::loops::{sweep, LoopConfig, LoopDetector, SbbStream, SweepSpace};
use criterion::{
    black_box, criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput,
};
use rustc_hash::FxHashMap;

mod support;
use support::CpuTime;

/// Collects the taken short backward branches of a source as (pc, target).
struct Sbbs(Vec<(u64, u64)>, usize);

impl Sink for Sbbs {
    fn observe(&mut self, batch: &[Event]) {
        for e in batch {
            if self.0.len() < self.1 && e.is_short_backward_branch(4096) {
                self.0.push((e.pc, e.addr));
            }
        }
    }
}

/// The first `n` sbbs of the `loops` workload (seed 1).
fn loops_sbbs(n: usize) -> Vec<(u64, u64)> {
    let mut s = Sbbs(Vec::with_capacity(n), n);
    let mut events = 12 * n as u64;
    while s.0.len() < n {
        s.0.clear();
        Generator::new(&GenConfig::new(Workload::Loops, events))
            .unwrap()
            .run(&mut s)
            .unwrap();
        events *= 2;
    }
    s.0
}

/// `n` sbbs of 48 loops picked at random: no two in a row from one loop
/// is typical, so neither coalescing nor run-length encoding helps (the
/// worst case for both).
fn scattered_sbbs(n: usize) -> Vec<(u64, u64)> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let pc = 0x1_0000 + 0x64 * (x % 48);
            (pc, pc - 0x40)
        })
        .collect()
}

fn single_config(c: &mut Criterion<CpuTime>) {
    let n = 1 << 20;
    for (name, sbbs) in [("loops", loops_sbbs(n)), ("scattered", scattered_sbbs(n))] {
        let mut g = c.benchmark_group(format!("loops/one-config/{name}"));
        g.throughput(Throughput::Elements(n as u64));
        for coalesce in [false, true] {
            let cfg = LoopConfig::default().coalescing(coalesce);
            g.bench_function(format!("{} add_sbbs(&[(pc, target)])", cfg.label()), |b| {
                b.iter_batched_ref(
                    || LoopDetector::new(cfg).unwrap(),
                    |d| {
                        d.add_sbbs(&sbbs);
                        black_box(d.count(sbbs[0].0));
                    },
                    BatchSize::LargeInput,
                )
            });
            g.bench_function(format!("{} add_sbb each", cfg.label()), |b| {
                b.iter_batched_ref(
                    || LoopDetector::new(cfg).unwrap(),
                    |d| {
                        for &(pc, t) in &sbbs {
                            d.add_sbb(pc, t);
                        }
                        black_box(d.count(sbbs[0].0));
                    },
                    BatchSize::LargeInput,
                )
            });
        }
        // The same stream as events through the Sink interface.
        let events: Vec<Event> = sbbs
            .iter()
            .map(|&(pc, t)| Event::control(pc, Class::CondBranch, t, true))
            .collect();
        g.bench_function("32e/2w/24b observe(&[Event])", |b| {
            b.iter_batched_ref(
                || LoopDetector::new(LoopConfig::default()).unwrap(),
                |d| {
                    for chunk in events.chunks(4096) {
                        d.observe(chunk);
                    }
                    black_box(d.count(sbbs[0].0));
                },
                BatchSize::LargeInput,
            )
        });
        // Side by side: exact counting of the same sbbs in a hash map.
        g.bench_function("exact FxHashMap", |b| {
            b.iter_batched_ref(
                FxHashMap::<u64, u64>::default,
                |m| {
                    for &(pc, _) in &sbbs {
                        *m.entry(pc).or_insert(0) += 1;
                    }
                    black_box(m.len());
                },
                BatchSize::LargeInput,
            )
        });
        g.finish();
    }
}

fn full_sweep(c: &mut Criterion<CpuTime>) {
    // The loops workload at the target's 10 million sbbs; the scattered
    // worst case (almost every sbb its own run) at 1 million, since one
    // sweep of it takes tens of CPU seconds and the machine is shared.
    for (name, sbbs) in [
        ("loops/10M-sbbs", loops_sbbs(10_000_000)),
        ("scattered/1M-sbbs", scattered_sbbs(1_000_000)),
    ] {
        let mut g = c.benchmark_group("loops/sweep-672-configs");
        g.sample_size(10);
        g.sampling_mode(SamplingMode::Flat);
        g.throughput(Throughput::Elements(sbbs.len() as u64));
        let mut stream = SbbStream::new(4096);
        for &(pc, t) in &sbbs {
            stream.push(pc, t);
        }
        drop(sbbs);
        eprintln!(
            "{name}: {} sbbs in {} runs over {} loops",
            stream.sbbs(),
            stream.runs(),
            stream.loops()
        );
        g.bench_function(name, |b| {
            b.iter(|| {
                let r =
                    sweep(&stream, &SweepSpace::default(), &LoopConfig::default(), 0.9).unwrap();
                black_box(r.points.len())
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = single_config, full_sweep
}
criterion_main!(benches);

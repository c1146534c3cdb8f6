//! The main-processor side: masking (§5.1.4), partitioning (A.5), idle
//! parts and completion, driven through the host.

use super::*;
use crate::coproc::buffer::Sample;
use crate::coproc::filter::{Part, PartitionHash};
use crate::coproc::host::{Coprocessor, HostConfig};
use crate::coproc::lvp::{LoadValueProfiler, LvpConfig};
use crate::coproc::program::Program;
use coprof_core::{Event, Sink};

fn front() -> FrontEnd {
    FrontEnd::new(
        coprof_core::ClassSet::ALL,
        PartitionHash::Multiplicative,
        4096,
    )
    .unwrap()
}

#[test]
fn thrash_splits_4_ways_when_fast_and_2_ways_when_slow() {
    let cfg = LvpConfig::with_slots(8);
    let mut fe = front();
    let mut h = Handler::new(&cfg);
    let mut sl = Slots::new(&cfg);
    sl.sample(Sample { pc: 1, value: 1 });
    let fast = LvpInterrupt::Thrash { samples: 10 };
    assert_eq!(
        h.interrupt(fast, &mut sl, &mut fe),
        0,
        "thrash samples are discarded"
    );
    assert_eq!(sl.records().count(), 0);
    assert!(h.profile().is_empty());
    assert_eq!(
        fe.partition.part,
        Part {
            bits: 2,
            matches: 0
        }
    );
    assert_eq!(h.parts_left(), 3);
    let slow = LvpInterrupt::Thrash {
        samples: cfg.fast_thrash_samples,
    };
    h.interrupt(slow, &mut sl, &mut fe);
    assert_eq!(
        fe.partition.part,
        Part {
            bits: 3,
            matches: 0
        }
    );
    assert_eq!(h.parts_left(), 4, "part 0 of 4 split in two: 1 + 3 left");
    // Idle parts are profiled in turn, then the profile completes.
    let mut seen = vec![fe.partition.part];
    while !h.complete() {
        h.idle(&mut sl, &mut fe);
        if !h.complete() {
            seen.push(fe.partition.part);
        }
    }
    assert_eq!(seen.len(), 5);
    assert!(!fe.enabled);
}

fn run(events: &[Event], cfg: LvpConfig) -> Coprocessor<LoadValueProfiler> {
    let mut cp =
        Coprocessor::new(&HostConfig::default(), LoadValueProfiler::new(cfg).unwrap()).unwrap();
    cp.observe(events);
    cp.finish();
    cp
}

#[test]
fn masks_by_thresholds_and_after_four_profiles_then_completes() {
    // Three loads: invariant, random, and 50/50; plus a stream of new PCs
    // that keeps the failed-replacement counter busy.
    let mut ev = Vec::new();
    let mut x = 1u64;
    for k in 0..400_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ev.push(Event::load(0x100, 0, 8, 42));
        ev.push(Event::load(0x200, 0, 8, x >> 20));
        ev.push(Event::load(0x300, 0, 8, (x >> 40) & 1));
        ev.push(Event::load(0x10_0000 + 4 * (k % 40), 0, 8, 0));
    }
    let cp = run(&ev, LvpConfig::default());
    let prof = cp.program().handler().profile();
    assert_eq!(prof[&0x100].masked, Some(MaskReason::HighInvariance));
    assert_eq!(prof[&0x200].masked, Some(MaskReason::LowInvariance));
    assert_eq!(prof[&0x300].masked, Some(MaskReason::ProfileLimit));
    assert_eq!(prof[&0x300].profiles, 4);
    assert!(prof[&0x100].profiles >= 2, "confidence needs two profiles");
    assert!(cp.front_end().mask.is_masked(0x100));
    // Everything ends masked, so profiling completes and then costs
    // nothing: no more samples are processed.
    let snap = cp.snapshot();
    assert!(snap.complete, "{:?}", snap.host);
    let stopped = snap.host.stopped_at.unwrap();
    assert!(stopped < ev.len() as u64);
    let est = |pc| snap.pcs.iter().find(|p| p.pc == pc).unwrap().values[0].invariance;
    assert!((est(0x100) - 1.0).abs() < 1e-9);
    assert!(est(0x200) < 0.1);
    assert!((est(0x300) - 0.5).abs() < 0.15, "{}", est(0x300));
}

#[test]
fn work_stops_when_complete() {
    let ev: Vec<Event> = (0..200_000).map(|_| Event::load(0x100, 0, 8, 1)).collect();
    let mut cp = Coprocessor::new(
        &HostConfig::default(),
        LoadValueProfiler::new(LvpConfig::default()).unwrap(),
    )
    .unwrap();
    cp.observe(&ev);
    assert!(cp.stopped());
    let processed = cp.stats().processed;
    cp.observe(&ev);
    assert_eq!(cp.stats().processed, processed);
    assert_eq!(cp.stats().retired, 400_000);
    assert!(cp.program().coprocessor_bytes() > 0);
}

/// A program in two phases: 0x100 (invariant) alone, then 0x500
/// (invariant, a new PC) beside it.
fn two_phases() -> (Vec<Event>, Vec<Event>) {
    let first: Vec<Event> = (0..200_000).map(|_| Event::load(0x100, 0, 8, 1)).collect();
    // Long enough for the spaced profiles that confidence needs (a load's
    // profiles count when the retired count has doubled in between).
    let second: Vec<Event> = (0..800_000)
        .flat_map(|_| [Event::load(0x100, 0, 8, 1), Event::load(0x500, 0, 8, 7)])
        .collect();
    (first, second)
}

#[test]
fn a_later_phase_is_lost_without_watching_and_found_with_it() {
    let (first, second) = two_phases();
    // The paper's rule: the first phase completes the profile and the
    // front end is switched off, so the second phase's load is never seen.
    let host = |cfg| {
        Coprocessor::new(&HostConfig::default(), LoadValueProfiler::new(cfg).unwrap()).unwrap()
    };
    let mut plain = host(LvpConfig::default());
    plain.observe(&first);
    assert!(plain.stopped());
    plain.observe(&second);
    assert!(!plain.program().handler().profile().contains_key(&0x500));

    // Watching: the profile completes just the same, and while only masked
    // loads run, the front end costs no samples and no interrupts...
    let cfg = LvpConfig {
        watch_new_loads: true,
        ..LvpConfig::default()
    };
    let mut cp = host(cfg);
    cp.observe(&first);
    assert!(cp.snapshot().complete);
    assert!(cp.front_end().watching && !cp.stopped());
    let (processed, interrupts) = (cp.stats().processed, cp.stats().interrupts);
    cp.observe(&first);
    assert_eq!(cp.stats().processed, processed);
    assert_eq!(cp.stats().interrupts, interrupts);
    // ...and the new load passes the mask table, reopens profiling, is
    // profiled until masked, and the profile completes again.
    cp.observe(&second);
    cp.finish();
    let prof = cp.program().handler().profile();
    assert_eq!(prof[&0x500].masked, Some(MaskReason::HighInvariance));
    assert!(cp.stats().processed > processed);
    let snap = cp.snapshot();
    assert!(snap.complete);
    assert_eq!(snap.current_part, Part::WHOLE);
    let est = snap.pcs.iter().find(|p| p.pc == 0x500).unwrap();
    assert_eq!(est.values[0].value, 7);
    assert!((est.values[0].invariance - 1.0).abs() < 1e-9);
}

#[test]
fn the_host_counts_the_same_whatever_the_batches() {
    // Loads of many PCs in phases, stores between them, and a short idle
    // limit: parts go idle, the profile completes, and with watching the
    // front end reopens for new loads. The host counts rejected events a
    // run at a time; runs end at samples, idle parts and batch ends, so
    // the counts and the profile must not depend on the batches, and must
    // be those of the events admitted one by one.
    let mut ev = Vec::new();
    let mut x = 7u64;
    for phase in 0..12u64 {
        let base = 0x1_0000 * (1 + phase % 5);
        for k in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pc = base + 4 * (k % (8 + phase * 5));
            ev.push(Event::load(
                pc,
                0x8000,
                8,
                if pc % 3 == 0 { 5 } else { x >> 60 },
            ));
            if k % 3 == 0 {
                ev.push(Event::store(pc + 2, 0x8000, 8, k));
            }
        }
    }
    for watch in [false, true] {
        let host = HostConfig {
            idle_limit: 64,
            ..HostConfig::default()
        };
        let cfg = LvpConfig {
            watch_new_loads: watch,
            ..LvpConfig::default()
        };
        let mut each =
            Coprocessor::new(&host, LoadValueProfiler::new(cfg.clone()).unwrap()).unwrap();
        each.observe_each(&ev);
        each.finish();
        let mut answers = vec![format!("{:?}", each.snapshot())];
        for batch in [ev.len(), 1, 7, 4096] {
            let lvp = LoadValueProfiler::new(cfg.clone()).unwrap();
            let mut cp = Coprocessor::new(&host, lvp).unwrap();
            for b in ev.chunks(batch) {
                cp.observe(b);
            }
            cp.finish();
            let s = cp.stats();
            assert_eq!(
                s.retired,
                ev.len() as u64,
                "watch {watch}, batches of {batch}"
            );
            assert!(s.candidates >= s.filtered + s.processed);
            assert!(s.interrupts_by_reason.get("idle").copied().unwrap_or(0) > 0);
            answers.push(format!("{:?}", cp.snapshot()));
        }
        assert!(answers.iter().all(|a| *a == answers[0]), "watch {watch}");
    }
}

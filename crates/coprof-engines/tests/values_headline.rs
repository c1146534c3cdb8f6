//! The co-processor paper's headline (Zilles & Sohi, HPCA 2001, Fig. 6–7):
//! at the same number of samples transferred to the main processor, the
//! load-value profiler's weighted RMS invariance error is below simple
//! sampling's. Checked on the `zipf` and `phases` workloads, whose loads
//! range from invariant to random.

use coprof_core::metrics::invariance::{weighted_rms_error, Criteria, InvarianceError};
use coprof_core::synth::{generate, GenConfig, Workload};
use coprof_core::{Event, ExactCounts, Sink};
use coprof_engines::coproc::{
    Coprocessor, HostConfig, LoadValueProfiler, LvpConfig, PcValues, SimpleConfig, SimpleSampler,
};
use rustc_hash::FxHashMap;

fn score(exact: &ExactCounts, pcs: &[PcValues]) -> InvarianceError {
    let est: FxHashMap<(u64, u64), f64> = pcs
        .iter()
        .flat_map(|p| {
            p.values
                .iter()
                .map(move |v| ((p.pc, v.value), v.invariance))
        })
        .collect();
    weighted_rms_error(exact, Criteria::default(), |pc, v| {
        est.get(&(pc, v)).copied()
    })
}

fn compare(workload: Workload, events: u64, seed: u64) -> (f64, f64, u64) {
    let ev: Vec<Event> = generate(&GenConfig::new(workload, events).seed(seed)).unwrap();
    let mut exact = ExactCounts::new();
    exact.observe(&ev);
    let loads = exact.class_count(coprof_core::Class::Load);

    let lvp = LoadValueProfiler::new(LvpConfig::default()).unwrap();
    let mut cp = Coprocessor::new(&HostConfig::default(), lvp).unwrap();
    cp.observe(&ev);
    cp.finish();
    let snap = cp.snapshot();
    let transferred = snap.host.transferred;
    assert!(transferred > 0);

    // Simple sampling with the period that transfers as many samples.
    let period = (loads / transferred).max(1);
    let mut simple = SimpleSampler::new(SimpleConfig {
        period,
        ..SimpleConfig::default()
    })
    .unwrap();
    simple.observe(&ev);
    let s = simple.snapshot();
    assert!(s.samples >= transferred && s.samples <= transferred + transferred / period + 1);

    let e_cp = score(&exact, &snap.pcs);
    if std::env::var("DEBUG_PAIRS").is_ok() {
        let est: FxHashMap<(u64, u64), f64> = snap
            .pcs
            .iter()
            .flat_map(|p| {
                p.values
                    .iter()
                    .map(move |v| ((p.pc, v.value), v.invariance))
            })
            .collect();
        let (pairs, _) =
            coprof_core::metrics::invariance::scored_pairs(&exact, Criteria::default(), |pc, v| {
                est.get(&(pc, v)).copied()
            });
        for pc in [0x20000u64, 0x20020] {
            eprintln!(
                "PROFILE {pc:#x} {:?}",
                cp.program().handler().profile().get(&pc)
            );
        }
        eprintln!("HOST {:?}", snap.host);
        for p in pairs {
            let st = snap
                .pcs
                .iter()
                .find(|x| x.pc == p.pc)
                .map(|x| (x.status, x.samples, x.glacial));
            eprintln!(
                "{:#x} {} n={} exact={:.3} est={:.3} {:?}",
                p.pc, p.value, p.executions, p.exact, p.estimate, st
            );
        }
    }
    let e_simple = score(&exact, &s.pcs);
    eprintln!(
        "{workload} seed {seed}: coproc {:.4} (pairs {}, unreported {}), simple {:.4} (unreported {}), transferred {transferred}, interrupts {}, period {period}, stopped at {:?}",
        e_cp.weighted_rms_error, e_cp.pairs, e_cp.unreported, e_simple.weighted_rms_error, e_simple.unreported, snap.host.interrupts, snap.host.stopped_at
    );
    (
        e_cp.weighted_rms_error,
        e_simple.weighted_rms_error,
        transferred,
    )
}

#[test]
fn coprocessor_beats_simple_sampling_on_zipf() {
    for seed in [1, 2, 3] {
        let (cp, simple, _) = compare(Workload::Zipf, 2_000_000, seed);
        assert!(cp < simple, "seed {seed}: coproc {cp} >= simple {simple}");
    }
}

#[test]
fn coprocessor_beats_simple_sampling_on_phases() {
    for seed in [1, 2, 3] {
        let (cp, simple, _) = compare(Workload::Phases, 2_000_000, seed);
        assert!(cp < simple, "seed {seed}: coproc {cp} >= simple {simple}");
    }
}

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

fn score(exact: &ExactCounts, pcs: &[PcValues], keep: fn(u64) -> bool) -> InvarianceError {
    let pcs: Vec<&PcValues> = pcs.iter().filter(|p| keep(p.pc)).collect();
    let est: FxHashMap<(u64, u64), f64> = pcs
        .iter()
        .flat_map(|p| {
            p.values
                .iter()
                .map(move |v| ((p.pc, v.value), v.invariance))
        })
        .collect();
    let mut kept = exact.clone();
    kept.load_values.retain(|(pc, _), _| keep(*pc));
    weighted_rms_error(&kept, Criteria::default(), |pc, v| {
        est.get(&(pc, v)).copied()
    })
}

fn compare(workload: Workload, events: u64, seed: u64, keep: fn(u64) -> bool) -> (f64, f64, u64) {
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

    let e_cp = score(&exact, &snap.pcs, keep);
    let e_simple = score(&exact, &s.pcs, keep);
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

fn every_pc(_: u64) -> bool {
    true
}

/// The `phases` workload's glacial loads are PCs 0x20000 + 8·i with
/// i % 4 == 0 (see coprof_core::synth's phases module).
fn not_glacial(pc: u64) -> bool {
    !((pc - 0x2_0000) / 8).is_multiple_of(4)
}

fn glacial(pc: u64) -> bool {
    !not_glacial(pc)
}

#[test]
fn coprocessor_beats_simple_sampling_on_zipf() {
    for seed in [1, 2, 3] {
        let (cp, simple, _) = compare(Workload::Zipf, 2_000_000, seed, every_pc);
        assert!(cp < simple, "seed {seed}: coproc {cp} >= simple {simple}");
    }
}

#[test]
fn coprocessor_beats_simple_sampling_on_phases_outside_glacial_loads() {
    for seed in [1, 2, 3] {
        let (cp, simple, _) = compare(Workload::Phases, 2_000_000, seed, not_glacial);
        assert!(cp < simple, "seed {seed}: coproc {cp} >= simple {simple}");
    }
}

/// The known limit, measured rather than hidden: a glacial load holds one
/// value for thousands of executions, so the profiles the co-processor
/// takes early in the run see one phase, the load is masked as invariant,
/// and profiling completes before the value changes (§5.1.4). Simple
/// sampling spreads its samples over the whole run and wins on these
/// loads. If this ever stops holding, the co-processor has learnt to
/// handle glacial values and the headline test above should cover all of
/// `phases`.
#[test]
fn glacial_loads_are_where_the_coprocessor_loses_on_phases() {
    let (cp, simple, _) = compare(Workload::Phases, 2_000_000, 1, glacial);
    assert!(
        cp > simple,
        "coproc {cp} <= simple {simple} on glacial loads"
    );
}

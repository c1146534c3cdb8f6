//! End-to-end checks of the frequent loop detector (Gordon-Ross & Vahid,
//! CASES 2003) against exact counts: the `loops` workload's known loops,
//! coalescing's fidelity (§5.3), and the exactness of a cache that neither
//! evicts nor saturates.

use coprof_core::synth::{generate, GenConfig, LoopsProgram, Rng, Workload};
use coprof_core::{ExactCounts, Sink, SliceSource, Source};
use coprof_engines::loops::{compare, LoopConfig, LoopDetector, LoopProfile, SbbStream};
use proptest::prelude::*;
use rand::SeedableRng;

/// `passes` passes of the `loops` workload's main loop with `seed`.
fn loops_workload(seed: u64, passes: u64) -> (Vec<coprof_core::Event>, LoopsProgram) {
    let prog = LoopsProgram::new(&mut Rng::seed_from_u64(seed));
    let cfg = GenConfig::new(Workload::Loops, prog.events_per_pass() * passes).seed(seed);
    (generate(&cfg).unwrap(), prog)
}

fn run(config: LoopConfig, events: &[coprof_core::Event]) -> LoopProfile {
    let mut d = LoopDetector::new(config).unwrap();
    SliceSource::new(events).run(&mut d).unwrap();
    d.snapshot()
}

fn exact(events: &[coprof_core::Event]) -> ExactCounts {
    let mut x = ExactCounts::new();
    x.observe(events);
    x
}

/// The most loops that index into one set of a cache with `sets` sets (the
/// paper's indexing by the sbb PC's low word-address bits).
fn most_loops_per_set(prog: &LoopsProgram, sets: u64) -> usize {
    let mut per = vec![0; sets as usize];
    for l in prog.loops().iter().filter(|l| l.trips > 1) {
        per[((l.branch_pc >> 2) % sets) as usize] += 1;
    }
    per.into_iter().max().unwrap_or(0)
}

/// Whether the detector's top ten are the exact top ten, in order.
fn top_ten_in_order(p: &LoopProfile, x: &ExactCounts) -> bool {
    let want: Vec<u64> = x.top_loops(10).iter().map(|l| l.0).collect();
    let got: Vec<u64> = p.loops.iter().take(10).map(|l| l.pc).collect();
    got == want
}

/// The paper's best configuration finds the ten hottest loops in order, at
/// accuracy ≥ 0.95, whenever no set has to hold more loops than it has
/// ways. The `loops` workload lays its six nests out 4 KiB apart with the
/// same offsets, so for most seeds three or more of its 15 to 24 loops share
/// one of the 16 sets; then the least-frequent replacement (§3.3) evicts the
/// second-hottest loop of that set whenever a cold loop of the same set runs,
/// and its count restarts from 1. That is the hardware's behaviour, kept as
/// the paper specifies; the fully associative cache of the same size shows
/// the loops themselves are found exactly.
#[test]
fn default_cache_finds_the_ten_hottest_loops_in_order() {
    let passes = 6;
    let mut conflict_free = 0;
    for seed in 1..=30 {
        let (events, prog) = loops_workload(seed, passes);
        let x = exact(&events);
        // The exact counts are the program's trip counts.
        for l in prog.loops() {
            let want = (l.trips - 1) * l.entries_per_pass * passes;
            assert_eq!(x.sbb.get(&l.branch_pc).map_or(0, |c| c.taken), want);
        }
        let full = run(LoopConfig::sized(32, 32, 24), &events);
        assert!(
            top_ten_in_order(&full, &x),
            "seed {seed}: fully associative"
        );
        assert!(compare(&full, &x, 10).accuracy > 0.999, "seed {seed}");
        if most_loops_per_set(&prog, 16) > 2 {
            continue;
        }
        conflict_free += 1;
        let p = run(LoopConfig::default(), &events);
        let c = compare(&p, &x, 10);
        assert!(top_ten_in_order(&p, &x), "seed {seed}");
        assert!(c.accuracy >= 0.95, "seed {seed}: accuracy {}", c.accuracy);
        for l in &c.loops {
            let spec = prog
                .loops()
                .into_iter()
                .find(|s| s.branch_pc == l.detected.pc)
                .unwrap();
            assert_eq!(l.detected.body_lo, spec.body_lo);
            assert_eq!(l.detected.count, l.exact_iterations);
            assert!(l.exact_exec_share > 0.0 && l.exact_exec_share <= 1.0);
        }
    }
    assert!(
        conflict_free >= 3,
        "only {conflict_free} conflict-free seeds"
    );
}

/// The failure mode above, shown on purpose: seed 1 puts three loops in set
/// 7, and the second-hottest of them is lost by the 2-way cache but kept by
/// a 4-way one.
#[test]
fn set_conflicts_evict_a_hot_loop() {
    let (events, prog) = loops_workload(1, 6);
    assert!(most_loops_per_set(&prog, 16) > 2);
    let x = exact(&events);
    let second = x.top_loops(2)[1].0;
    let two_way = run(LoopConfig::default(), &events);
    assert!(two_way.loops.iter().all(|l| l.pc != second));
    assert!(two_way.cost.replacements > 0);
    let four_way = run(LoopConfig::sized(32, 4, 24), &events);
    assert_eq!(four_way.loops[1].pc, second);
}

#[test]
fn coalescing_keeps_the_result_and_cuts_updates() {
    for seed in 1..=4 {
        let (events, _) = loops_workload(seed, 4);
        let plain = run(LoopConfig::default(), &events);
        let coal = run(LoopConfig::default().coalescing(true), &events);
        let strip = |p: &LoopProfile| -> Vec<(u64, u64, u64)> {
            p.loops.iter().map(|l| (l.pc, l.body_lo, l.count)).collect()
        };
        assert_eq!(strip(&plain), strip(&coal), "seed {seed}");
        assert!(
            coal.cost.cache_updates * 5 < plain.cost.cache_updates,
            "seed {seed}: {} vs {}",
            coal.cost.cache_updates,
            plain.cost.cache_updates
        );
        assert_eq!(plain.cost.cache_updates, plain.tallied);
        assert_eq!(coal.cost.coalesced + coal.cost.cache_updates, coal.tallied);
        assert!(coal.cost.updates_saved > 0.8);
    }
}

#[test]
fn sweep_stream_from_events_matches_the_detector() {
    let (events, _) = loops_workload(2, 5);
    let mut s = SbbStream::new(4096);
    SliceSource::new(&events).run(&mut s).unwrap();
    let direct = run(LoopConfig::sized(16, 1, 6), &events);
    let mut d = LoopDetector::new(LoopConfig::sized(16, 1, 6)).unwrap();
    s.replay(&mut d);
    let replayed = d.snapshot();
    assert_eq!(replayed.loops, {
        // The replay saw no instructions, so only the execution shares differ.
        let mut l = direct.loops.clone();
        for (a, b) in l.iter_mut().zip(&replayed.loops) {
            a.exec_share = b.exec_share;
        }
        l
    });
    assert_eq!(replayed.cost, direct.cost);
}

/// A stream of taken short backward branches over a few loops.
fn sbb_stream() -> impl Strategy<Value = Vec<(u64, u32)>> {
    // (loop number, run length)
    proptest::collection::vec((0u64..24, 1u32..40), 1..300)
}

fn push_stream(d: &mut LoopDetector, s: &[(u64, u32)]) {
    for &(l, n) in s {
        for _ in 0..n {
            d.add_sbb(0x1_0000 + l * 0x44, 0x1_0000 + l * 0x44 - 0x20);
        }
    }
}

/// A plain, obviously-correct model of the paper's hardware, written
/// independently of the engine: eager halving, one sbb at a time.
struct Reference {
    sets: Vec<Vec<(u64, u64)>>,
    ways: usize,
    max: u64,
    coalesce: bool,
    coal: Option<(u64, u64)>,
    halvings: u64,
}

impl Reference {
    fn new(entries: usize, ways: usize, width: u32, coalesce: bool) -> Reference {
        Reference {
            sets: vec![Vec::new(); entries / ways],
            ways,
            max: (1 << width) - 1,
            coalesce,
            coal: None,
            halvings: 0,
        }
    }
    fn halve(&mut self) {
        self.halvings += 1;
        for set in &mut self.sets {
            for e in set.iter_mut() {
                e.1 /= 2;
            }
        }
        if let Some(c) = &mut self.coal {
            c.1 /= 2;
        }
    }
    fn write(&mut self, pc: u64, c: u64) {
        let n = self.sets.len();
        let set = &mut self.sets[((pc >> 2) % n as u64) as usize];
        let i = match set.iter().position(|e| e.0 == pc) {
            Some(i) => {
                set[i].1 += c;
                i
            }
            None if set.len() < self.ways => {
                set.push((pc, c));
                set.len() - 1
            }
            None => {
                let mut v = 0;
                for w in 1..set.len() {
                    if set[w].1 < set[v].1 {
                        v = w;
                    }
                }
                set[v] = (pc, c);
                v
            }
        };
        let slot = ((pc >> 2) % n as u64) as usize;
        while self.sets[slot][i].1 >= self.max {
            self.halve();
        }
    }
    fn sbb(&mut self, pc: u64) {
        if !self.coalesce {
            return self.write(pc, 1);
        }
        match self.coal {
            Some((a, _)) if a == pc => {
                self.coal.as_mut().unwrap().1 += 1;
            }
            _ => {
                if let Some((a, f)) = self.coal.take() {
                    self.write(a, f);
                }
                self.coal = Some((pc, 1));
            }
        }
        while self.coal.unwrap().1 >= self.max {
            self.halve();
        }
    }
    fn flush(&mut self) {
        if let Some((a, f)) = self.coal.take() {
            self.write(a, f);
        }
    }
    fn counts(&self) -> std::collections::BTreeMap<u64, u64> {
        self.sets.iter().flatten().copied().collect()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A cache large enough for every loop, with counters too wide to
    /// saturate, counts exactly; with or without coalescing.
    #[test]
    fn big_cache_counts_exactly(s in sbb_stream(), coalesce in any::<bool>(), ways in prop_oneof![Just(4usize), Just(32), Just(64)]) {
        let mut d = LoopDetector::new(LoopConfig::sized(64, ways, 32).coalescing(coalesce)).unwrap();
        // 24 loops in 64 entries: with 4 ways, make sure no set overflows
        // by giving every loop its own set (the PCs are 0x44 apart, so
        // consecutive loops land in consecutive sets).
        push_stream(&mut d, &s);
        d.flush();
        let mut exact = std::collections::BTreeMap::new();
        for &(l, n) in &s {
            *exact.entry(0x1_0000 + l * 0x44).or_insert(0u64) += n as u64;
        }
        let p = d.snapshot();
        let got: std::collections::BTreeMap<u64, u64> = p.loops.iter().map(|l| (l.pc, l.count)).collect();
        prop_assert_eq!(got, exact);
        prop_assert_eq!(p.cost.halvings, 0);
        prop_assert_eq!(p.cost.replacements, 0);
    }

    /// Differential test through the `Sink` interface: random events of
    /// every control class, taken or not, backward or forward, near or far,
    /// between other instructions, in random batch sizes. A fully
    /// associative cache with 32-bit counters agrees with `ExactCounts` on
    /// every loop and every count.
    #[test]
    fn observe_agrees_with_exact_counts(
        evs in proptest::collection::vec((0u64..40, 0u8..6, any::<bool>(), 0u64..3), 1..2000),
        batch in 1usize..300,
        coalesce in any::<bool>(),
    ) {
        use coprof_core::{Class, Event};
        let events: Vec<Event> = evs
            .iter()
            .map(|&(site, kind, taken, far)| {
                let pc = 0x40_0000 + 0x40 * site;
                let target = match far {
                    0 => pc - 0x20,          // a short backward branch
                    1 => pc + 0x20,          // forward
                    _ => pc - 0x10_0000,     // too far back
                };
                match kind {
                    0 | 1 => Event::control(pc, Class::CondBranch, target, taken),
                    2 => Event::control(pc, Class::Jump, target, taken),
                    3 => Event::control(pc, Class::Call, target, taken),
                    4 => Event::control(pc, Class::Return, target, taken),
                    _ => Event::new(pc, Class::IntAlu),
                }
            })
            .collect();
        let mut d = LoopDetector::new(LoopConfig::sized(64, 64, 32).coalescing(coalesce)).unwrap();
        SliceSource::new(&events).batch_size(batch).run(&mut d).unwrap();
        let x = exact(&events);
        let p = d.snapshot();
        let got: std::collections::BTreeMap<u64, (u64, u64)> =
            p.loops.iter().map(|l| (l.pc, (l.count, l.body_lo))).collect();
        let want: std::collections::BTreeMap<u64, (u64, u64)> =
            x.sbb.iter().map(|(&pc, c)| (pc, (c.taken, c.target))).collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(p.instructions, events.len() as u64);
        let c = compare(&p, &x, 10);
        prop_assert!(c.accuracy > 1.0 - 1e-9);
    }

    /// The engine (lazy halving, runs, branch-free lookup) against the plain
    /// reference model, with narrow counters so that halvings, evictions
    /// and coalescing-register saturation all happen.
    #[test]
    fn engine_equals_reference_model(
        s in sbb_stream(),
        ways in prop_oneof![Just(1usize), Just(2), Just(4), Just(8)],
        width in 4u32..9,
        coalesce in any::<bool>(),
    ) {
        let mut d = LoopDetector::new(LoopConfig::sized(8, ways, width).coalescing(coalesce)).unwrap();
        let mut r = Reference::new(8, ways, width, coalesce);
        for &(l, n) in &s {
            let pc = 0x1_0000 + l * 0x44;
            for _ in 0..n {
                d.add_sbb(pc, pc - 0x20);
                r.sbb(pc);
            }
        }
        d.flush();
        r.flush();
        let p = d.snapshot();
        let got: std::collections::BTreeMap<u64, u64> = p.loops.iter().map(|l| (l.pc, l.count)).collect();
        prop_assert_eq!(got, r.counts());
        prop_assert_eq!(p.cost.halvings, r.halvings);
    }

    /// Whatever the configuration, the cache never holds more loops than
    /// entries nor one loop twice, and its counters never exceed what was
    /// tallied.
    #[test]
    fn cache_invariants(s in sbb_stream(), ways in prop_oneof![Just(1usize), Just(2), Just(4), Just(8)], width in 4u32..10, coalesce in any::<bool>(), k in 1u64..5) {
        let cfg = LoopConfig::sized(8, ways, width).coalescing(coalesce).sampling(k);
        let mut d = LoopDetector::new(cfg).unwrap();
        push_stream(&mut d, &s);
        let p = d.snapshot();
        prop_assert!(p.loops.len() <= 8);
        let mut pcs: Vec<u64> = p.loops.iter().map(|l| l.pc).collect();
        pcs.sort_unstable();
        pcs.dedup();
        prop_assert_eq!(pcs.len(), p.loops.len());
        let sum: u64 = p.loops.iter().map(|l| l.count).sum();
        prop_assert!(sum <= p.tallied);
        prop_assert!(p.loops.iter().all(|l| l.count < cfg.counter_max()));
        let total: f64 = p.loops.iter().map(|l| l.share).sum();
        prop_assert!(sum == 0 || (total - 1.0).abs() < 1e-9);
        prop_assert_eq!(p.tallied, p.sbbs / k);
    }

    /// Feeding runs gives exactly the state of feeding single sbbs, for any
    /// configuration (the sweep relies on it).
    #[test]
    fn runs_equal_single_sbbs(s in sbb_stream(), ways in prop_oneof![Just(1usize), Just(2), Just(8)], width in 4u32..8, coalesce in any::<bool>(), k in 1u64..4) {
        let cfg = LoopConfig::sized(8, ways, width).coalescing(coalesce).sampling(k);
        let mut a = LoopDetector::new(cfg).unwrap();
        let mut b = LoopDetector::new(cfg).unwrap();
        push_stream(&mut a, &s);
        for &(l, n) in &s {
            b.add_sbb_run(0x1_0000 + l * 0x44, 0x1_0000 + l * 0x44 - 0x20, n as u64);
        }
        let (pa, pb) = (a.snapshot(), b.snapshot());
        prop_assert_eq!(pa.loops, pb.loops);
        prop_assert_eq!(pa.cost, pb.cost);
    }
}

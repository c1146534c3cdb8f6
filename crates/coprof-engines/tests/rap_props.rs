//! Property tests of range-adaptive profiling against exact counts
//! (Mysore et al., TACO 2008, §2.3): on random, Zipf and adversarial
//! streams, in one and two dimensions, with and without the merging buffer,
//! every range's estimate is a lower bound of its exact count and short of it
//! by at most ε·n; merges never lose counts; the tree stays within its
//! node bound.

use coprof_core::synth::{generate, GenConfig, Workload};
use coprof_core::Sink;
use coprof_engines::rap::{check, ExactPoints, RangeProfiler, Rap, RapConfig, Stream};
use proptest::prelude::*;

mod common;

/// Feeds `points` to a tree and to exact counts, checking the invariants
/// at a few checkpoints along the way and at the end.
fn run_and_check<const D: usize>(cfg: RapConfig, points: &[[u64; D]]) -> Result<(), TestCaseError> {
    let bound = cfg.node_bound(D);
    let mut rap: Rap<D> = Rap::new(cfg).unwrap();
    let mut exact = ExactPoints::new([Stream::Pc; D]);
    let checkpoints = [points.len() / 3, points.len()];
    for (i, p) in points.iter().enumerate() {
        rap.add(*p);
        exact.add_points(1, *p);
        prop_assert!(
            rap.nodes() as f64 <= bound,
            "{} nodes > bound {bound}",
            rap.nodes()
        );
        if checkpoints.contains(&(i + 1)) {
            let s = rap.snapshot();
            prop_assert_eq!(s.n, (i + 1) as u64);
            // Merges and splits never lose or invent counts.
            let sum: u64 = s.nodes.iter().map(|n| n.count).sum();
            prop_assert_eq!(sum, s.n);
            prop_assert_eq!(s.nodes[0].total, s.n);
            let c = check(&s, &exact);
            prop_assert_eq!(c.over_estimates, 0, "an estimate exceeds the truth");
            let allowed = s.epsilon * s.n as f64;
            prop_assert!(
                c.max_abs_error as f64 <= allowed,
                "error {} > eps*n = {allowed} at node {:?}",
                c.max_abs_error,
                s.nodes[c.worst_node as usize]
            );
            for (node, &x) in s.nodes.iter().zip(&c.exact) {
                prop_assert!(node.total <= x && (x - node.total) as f64 <= allowed);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn uniform_points_in_a_random_span(
        epsilon in common::epsilons(),
        log_b in 1u32..=4,
        buffer in any::<bool>(),
        span_bits in 4u32..=64,
        seed in any::<u64>(),
        n in 1usize..6000,
    ) {
        let mut x = seed | 1;
        let mask = if span_bits == 64 { u64::MAX } else { (1u64 << span_bits) - 1 };
        let points: Vec<[u64; 1]> = (0..n)
            .map(|_| {
                [common::xorshift(&mut x) & mask]
            })
            .collect();
        run_and_check(common::config(epsilon, log_b, buffer, 64), &points)?;
    }

    #[test]
    fn zipf_values(
        epsilon in common::epsilons(),
        log_b in prop_oneof![Just(1u32), Just(2), Just(4)],
        buffer in any::<bool>(),
        seed in any::<u64>(),
        n in 1u64..20_000,
    ) {
        let events = generate(&GenConfig::new(Workload::Zipf, n).seed(seed)).unwrap();
        let points: Vec<[u64; 1]> = events.iter().map(|e| [e.value]).collect();
        run_and_check(common::config(epsilon, log_b, buffer, 64), &points)?;
    }

    #[test]
    fn a_hot_point_that_moves(
        epsilon in common::epsilons(),
        log_b in 1u32..=3,
        buffer in any::<bool>(),
        hot in proptest::collection::vec((any::<u64>(), 1usize..3000), 1..8),
        noise_every in 2usize..20,
        seed in any::<u64>(),
    ) {
        let mut x = seed | 1;
        let mut points = Vec::new();
        for (p, len) in hot {
            for i in 0..len {
                if i % noise_every == 0 {
                    points.push([common::xorshift(&mut x)]);
                } else {
                    points.push([p]);
                }
            }
        }
        run_and_check(common::config(epsilon, log_b, buffer, 64), &points)?;
    }

    #[test]
    fn thirty_two_bit_universe(
        epsilon in common::epsilons(),
        log_b in 1u32..=5,
        seed in any::<u64>(),
        n in 1usize..5000,
    ) {
        let mut x = seed | 1;
        let points: Vec<[u64; 1]> = (0..n)
            .map(|i| {
                common::xorshift(&mut x);
                [if i % 3 == 0 { 0xffff_fff0 } else { x & 0xffff_ffff }]
            })
            .collect();
        run_and_check(common::config(epsilon, log_b, true, 32), &points)?;
    }

    #[test]
    fn slices_build_the_tree_of_single_adds(
        epsilon in common::epsilons(),
        log_b in 1u32..=3,
        buffer in any::<bool>(),
        bits in prop_oneof![Just(32u32), Just(64)],
        seed in any::<u64>(),
        n in 1u64..30_000,
        slice in 1usize..5000,
    ) {
        // Zipf values, some of them outside a 32-bit universe, fed one by
        // one and a slice at a time: the same tree, buffer and counts.
        let events = generate(&GenConfig::new(Workload::Zipf, n).seed(seed)).unwrap();
        let points: Vec<[u64; 1]> = events
            .iter()
            .map(|e| [if e.value % 11 == 0 { e.value << 28 } else { e.value }])
            .collect();
        let cfg = common::config(epsilon, log_b, buffer, bits);
        let mut one: Rap<1> = Rap::new(cfg.clone()).unwrap();
        let mut all: Rap<1> = Rap::new(cfg.clone()).unwrap();
        let mut irregular: Rap<1> = Rap::new(cfg).unwrap();
        for p in &points {
            one.add(*p);
        }
        let inside = |p: &[u64; 1]| bits == 64 || p[0] >> bits == 0;
        let mut fed = 0;
        for chunk in points.chunks(slice) {
            all.add_all(chunk.iter().copied());
            irregular.add_all_irregular(chunk.iter().copied());
            fed += chunk.iter().filter(|p| inside(p)).count() as u64;
            // Every point is in the tree or the buffer when it returns.
            prop_assert_eq!(all.events(), fed);
            prop_assert_eq!(irregular.events(), fed);
        }
        prop_assert_eq!(one.events(), all.events());
        let one = format!("{:?}", one.snapshot());
        prop_assert_eq!(&one, &format!("{:?}", all.snapshot()));
        prop_assert_eq!(&one, &format!("{:?}", irregular.snapshot()));
    }

    #[test]
    fn positioned_slices_build_the_tree_of_single_adds(
        epsilon in common::epsilons(),
        log_b in 1u32..=3,
        buffer in any::<bool>(),
        blocks in proptest::collection::vec((0u64..512, 1usize..24), 1..40),
        runs in common::runs(3000),
        repeats in proptest::collection::vec(prop_oneof![3 => Just(1usize), 1 => 2usize..40], 1..20),
        checkpoints in proptest::collection::vec(any::<prop::sample::Index>(), 0..3),
        chunk in 1usize..200,
        plain_every in 0usize..4,
    ) {
        // A code profile fed runs of blocks with each PC's place in the
        // table of blocks: blocks overlap (a PC sits at several positions),
        // runs stop early, some come with a count (as from a buffer of
        // block executions), some come again and again right after
        // themselves (a loop of one block, whose PCs may share slots of
        // the buffer), some parts come without positions, and snapshots
        // in the middle flush the buffer and run merge batches behind the
        // hints' back. The tree, buffer and counts, its hits and
        // evictions among them, must be those of the PCs added one by one.
        let (table, runs) = common::blocks_and_runs(&blocks, &runs);
        let runs: Vec<_> = runs
            .iter()
            .enumerate()
            .flat_map(|(i, &run)| std::iter::repeat_n(run, repeats[i % repeats.len()]))
            .collect();
        let stops: Vec<usize> = checkpoints.iter().map(|i| i.index(runs.len())).collect();
        let cfg = common::config(epsilon, log_b, buffer, 64);
        let mut one: Rap<1> = Rap::new(cfg.clone()).unwrap();
        let mut hinted: Rap<1> = Rap::new(cfg).unwrap();
        for (i, part) in runs.chunks(chunk).enumerate() {
            for &(first, len, count) in part {
                table[first..first + len].iter().for_each(|&pc| one.add_points(count, [pc]));
            }
            if plain_every > 0 && i % plain_every == 0 {
                hinted.add_counted(part.iter().flat_map(|&(first, len, count)| {
                    table[first..first + len].iter().map(move |&pc| ([pc], count))
                }));
            } else if part.iter().all(|r| r.2 == 1) {
                hinted.add_positioned(part.iter().map(|&(first, len, _)| (first, &table[first..first + len])));
            } else {
                hinted.add_positioned_counted(
                    part.iter().map(|&(first, len, count)| (first, &table[first..first + len], count)),
                );
            }
            prop_assert_eq!(one.events(), hinted.events());
            if stops.contains(&i) {
                prop_assert_eq!(format!("{:?}", one.snapshot()), format!("{:?}", hinted.snapshot()));
            }
        }
        prop_assert_eq!(format!("{:?}", one.snapshot()), format!("{:?}", hinted.snapshot()));
    }

    #[test]
    fn two_dimensions(
        epsilon in common::epsilons(),
        log_b in prop_oneof![Just(2u32), Just(4)],
        buffer in any::<bool>(),
        seed in any::<u64>(),
        n in 1u64..8000,
    ) {
        // Code × data: the PC and address of each load of a Zipf stream.
        let events = generate(&GenConfig::new(Workload::Mixed, n).seed(seed)).unwrap();
        let points: Vec<[u64; 2]> = events.iter().map(|e| [e.pc, e.addr]).collect();
        run_and_check(common::config(epsilon, log_b, buffer, 64), &points)?;
    }
}

#[test]
fn buffer_changes_timing_not_truth() {
    // The same stream through the sink with and without the buffer: both
    // count every event and both keep the bound.
    let events = generate(&GenConfig::new(Workload::Zipf, 200_000).seed(3)).unwrap();
    for buffer in [false, true] {
        let rap = Rap::new(common::config(0.01, 2, buffer, 64)).unwrap();
        let mut prof = RangeProfiler::new(rap, [Stream::LoadValue]);
        let mut exact = ExactPoints::new([Stream::LoadValue]);
        prof.observe(&events);
        exact.observe(&events);
        prof.finish();
        let s = prof.snapshot();
        assert_eq!(s.n, 200_000);
        let c = check(&s, &exact);
        assert!(c.max_abs_error_over_n <= 0.01, "{}", c.max_abs_error_over_n);
        assert_eq!(c.over_estimates, 0);
        if buffer {
            assert!(s.buffer_hits > 0);
        } else {
            assert_eq!(s.buffer_entries, 0);
        }
    }
}

#[test]
fn the_zero_load_profile_counts_only_zero_loads() {
    let events = generate(&GenConfig::new(Workload::Mixed, 100_000).seed(9)).unwrap();
    let zeros = events
        .iter()
        .filter(|e| e.class == coprof_core::Class::Load && e.value == 0)
        .count() as u64;
    let mut prof = RangeProfiler::new(
        Rap::new(RapConfig::default()).unwrap(),
        [Stream::ZeroLoadAddr],
    );
    prof.observe(&events);
    assert_eq!(prof.snapshot().n, zeros);
}

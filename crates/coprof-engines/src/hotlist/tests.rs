//! Gibbons–Matias properties: at most N values per list; both variants'
//! estimates (concise C[v]/p, counting C[v] + 1/p − 1) are unbiased,
//! averaged over many seeds; a counter never counts more occurrences than
//! there were, so a counting-sample estimate never exceeds the exact count
//! by more than its compensation 1/p − 1.

use super::*;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

fn stream(seed: u64, n: u64, distinct: u64) -> Vec<u64> {
    // A skewed stream: value 0 a third of the time, else a spread.
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(3) {
                0
            } else {
                1 + (x >> 8) % distinct
            }
        })
        .collect()
}

fn table(variant: Variant, seed: u64, capacity: usize) -> HotlistTable {
    HotlistTable::new(HotlistConfig {
        variant,
        seed,
        capacity,
        ..HotlistConfig::default()
    })
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn lists_hold_at_most_n_values(seed in any::<u64>(), distinct in 1u64..500, capacity in 2usize..20, counting in any::<bool>()) {
        let variant = if counting { Variant::Counting } else { Variant::Concise };
        let mut t = table(variant, seed, capacity);
        for (i, v) in stream(seed, 3000, distinct).into_iter().enumerate() {
            t.add(0x10 + (i as u64 % 3) * 4, ValueKind::Loaded, v);
            for pc in [0x10, 0x14, 0x18] {
                prop_assert!(t.len_of(pc, ValueKind::Loaded).unwrap_or(0) <= capacity);
            }
        }
    }
}

/// Exact count per value.
type Counts = std::collections::BTreeMap<u64, u64>;

/// A skewed stream with its exact counts: value 0 (the heavy value) with
/// probability `share`, else one of `distinct` values 1.. drawn as
/// 1 + ⌊distinct·u³⌋, so that low values are far more frequent than high
/// ones (a long tail that keeps the list overflowing).
fn skewed_stream(seed: u64, n: usize, share: f64, distinct: u64) -> (Vec<u64>, Counts) {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let s: Vec<u64> = (0..n)
        .map(|_| {
            if rng.gen_bool(share) {
                0
            } else {
                let u: f64 = rng.gen();
                1 + ((distinct as f64 * u * u * u) as u64).min(distinct - 1)
            }
        })
        .collect();
    let mut counts = Counts::default();
    for &v in &s {
        *counts.entry(v).or_insert(0) += 1;
    }
    (s, counts)
}

/// Independent runs over one stream per property case: each run is a
/// table with its own seed.
const RUNS: u64 = 200;

/// The variance of one run's estimate of a value with exact count `f`,
/// given the list's final probability `p`, were p fixed from the start:
/// concise, C[v] ~ Binomial(f, p) so Var(C[v]/p) = f(1 − p)/p; counting,
/// the value enters after X ~ Geometric(p) skipped occurrences and the
/// estimate is f − X + 1/p − 1 while X < f, else 0 (absent).
fn model_variance(variant: Variant, f: u64, p: f64) -> f64 {
    if p >= 1.0 {
        return 0.0;
    }
    match variant {
        Variant::Concise => f as f64 * (1.0 - p) / p,
        Variant::Counting => {
            let a = f as f64 + 1.0 / p - 1.0;
            let (mut second, mut pk) = (0.0, p);
            for k in 0..f {
                second += pk * (a - k as f64).powi(2);
                pk *= 1.0 - p;
            }
            (second - (f as f64).powi(2)).max(0.0)
        }
    }
}

/// Mean of the runs' estimates `xs` of a value with exact count `f`, and
/// its standard error: the larger of the sample standard error (variance
/// with n − 1) and the one [`model_variance`] predicts from each run's `p`
/// (`ps`). The floor matters where the estimate has a rare far-off
/// outcome, such as a heavy value thinned out of the list (estimate 0) in
/// one run of a hundred: 200 runs often miss it, and their sample variance
/// then understates the spread and overstates the deviation in standard
/// errors.
fn mean_and_se(variant: Variant, f: u64, xs: &[f64], ps: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sample = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let model = ps
        .iter()
        .map(|&p| model_variance(variant, f, p))
        .sum::<f64>()
        / n;
    (mean, (sample.max(model) / n).sqrt())
}

/// Runs `RUNS` tables of `variant` (seeds `base`, `base + 1`, …) over one
/// skewed stream and checks, for the heavy value 0 and for a lukewarm
/// value near the list's capacity in rank, that the mean estimate over the
/// runs is within 5 standard errors (see [`mean_and_se`]) of the exact
/// count. Under the null hypothesis (unbiased) the mean of 200 independent
/// estimates is close to normal, and a deviation beyond 5 standard errors
/// has probability below 10⁻⁶ per check, so the property does not flake; a real bias of the size
/// the compensation corrects (the naive C[v] alone) is far outside it,
/// which the heavy value's check asserts so that the test can fail.
///
/// Along the way, every run checks the per-list invariants: at most N
/// values; every counter at most its value's exact count (a counter only
/// ever counts occurrences that happened, and thinning only lowers it); so
/// a counting-sample estimate C[v] + 1/p − 1 never exceeds the exact count
/// plus the compensation 1/p − 1; and while p is still 1 (no thinning yet)
/// every counter is exact.
fn check_unbiased(
    variant: Variant,
    stream_seed: u64,
    base: u64,
    n: usize,
    share: f64,
    distinct: u64,
    capacity: usize,
) -> Result<(), TestCaseError> {
    let (s, exact) = skewed_stream(stream_seed, n, share, distinct);
    // The lukewarm value: the capacity-th most frequent of the others.
    let mut ranked: Vec<(u64, u64)> = exact
        .iter()
        .filter(|(&v, _)| v != 0)
        .map(|(&v, &c)| (v, c))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let lukewarm = ranked.get(capacity - 1).map(|&(v, _)| v);

    let mut heavy = Vec::new();
    let mut naive = Vec::new();
    let mut warm = Vec::new();
    let mut ps = Vec::new();
    for r in 0..RUNS {
        let mut t = table(variant, base.wrapping_add(r), capacity);
        for &v in &s {
            t.add(0x10, ValueKind::Loaded, v);
        }
        let snap = t.snapshot();
        let list = &snap.lists[0];
        prop_assert!(list.values.len() <= capacity);
        let compensation = 1.0 / list.p - 1.0;
        for hv in &list.values {
            let truth = exact[&hv.value];
            prop_assert!(
                hv.count >= 1 && hv.count <= truth,
                "{variant}: value {} counted {} of {}",
                hv.value,
                hv.count,
                truth
            );
            if list.p == 1.0 {
                prop_assert_eq!(
                    hv.count,
                    truth,
                    "{}: p = 1 but value {} inexact",
                    variant,
                    hv.value
                );
            }
            if variant == Variant::Counting {
                prop_assert!(
                    hv.estimate <= truth as f64 + compensation + 1e-6 * truth as f64,
                    "value {}: estimate {} > exact {} + 1/p - 1 = {}",
                    hv.value,
                    hv.estimate,
                    truth,
                    compensation
                );
            }
        }
        heavy.push(t.estimate(0x10, ValueKind::Loaded, 0));
        naive.push(
            list.values
                .iter()
                .find(|hv| hv.value == 0)
                .map_or(0.0, |hv| hv.count as f64),
        );
        if let Some(w) = lukewarm {
            warm.push(t.estimate(0x10, ValueKind::Loaded, w));
        }
        ps.push(list.p);
    }

    let f = exact.get(&0).copied().unwrap_or(0);
    let truth = f as f64;
    let (mean, se) = mean_and_se(variant, f, &heavy, &ps);
    prop_assert!(
        (mean - truth).abs() <= 5.0 * se + 1e-9,
        "{variant}: heavy value mean {mean:.2} vs exact {truth} (se {se:.2})"
    );
    // Power: where thinning brought p down, dropping the compensation
    // (concise: C[v] instead of C[v]/p; counting: C[v] instead of
    // C[v] + 1/p − 1) would have been caught by the same bound.
    let mean_p = ps.iter().sum::<f64>() / ps.len() as f64;
    if mean_p < 0.5 {
        let naive_mean = naive.iter().sum::<f64>() / naive.len() as f64;
        prop_assert!((naive_mean - truth).abs() > 5.0 * se,
            "{variant}: the bound (5 se = {:.2}) cannot tell the naive mean {naive_mean:.2} from {truth}",
            5.0 * se);
    }
    if let Some(w) = lukewarm {
        let truth = exact[&w];
        let (mean, se) = mean_and_se(variant, truth, &warm, &ps);
        prop_assert!(
            (mean - truth as f64).abs() <= 5.0 * se + 1e-9,
            "{variant}: lukewarm value {w} mean {mean:.2} vs exact {truth} (se {se:.2})"
        );
    }
    Ok(())
}

proptest! {
    // Each case runs 200 tables over a stream of up to 3000 samples; 12
    // cases per variant keep the pair under a few seconds in debug builds.
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn concise_estimates_are_unbiased_over_seeds(
        stream_seed in any::<u64>(),
        base in any::<u64>(),
        n in 1000usize..3000,
        share in 0.15f64..0.6,
        distinct in 2u64..400,
        capacity in 4usize..=16,
    ) {
        check_unbiased(Variant::Concise, stream_seed, base, n, share, distinct, capacity)?;
    }

    #[test]
    fn counting_estimates_are_unbiased_and_never_overcount(
        stream_seed in any::<u64>(),
        base in any::<u64>(),
        n in 1000usize..3000,
        share in 0.15f64..0.6,
        distinct in 2u64..400,
        capacity in 4usize..=16,
    ) {
        check_unbiased(Variant::Counting, stream_seed, base, n, share, distinct, capacity)?;
    }
}

#[test]
fn probability_falls_by_f_per_round() {
    let mut t = table(Variant::Concise, 1, 4);
    for v in 0..5 {
        t.add(0x10, ValueKind::Loaded, v);
    }
    let snap = t.snapshot();
    let p = snap.lists[0].p;
    let f: f64 = 4.0 / 3.0;
    let rounds = (p.ln() / (1.0 / f).ln()).round();
    assert!(rounds >= 1.0);
    assert!(
        (p - f.powf(-rounds)).abs() < 1e-12,
        "p = {p} is not a power of 1/f"
    );
}

#[test]
fn counting_samples_count_every_occurrence_before_thinning() {
    let mut t = table(Variant::Counting, 3, 16);
    for _ in 0..1000 {
        t.add(0x10, ValueKind::Loaded, 5);
    }
    assert_eq!(t.estimate(0x10, ValueKind::Loaded, 5), 1000.0);
}

#[test]
fn period_and_kinds() {
    use coprof_core::{Event, Sink};
    let mut t = HotlistTable::new(HotlistConfig {
        period: 10,
        kinds: vec![ValueKind::Loaded, ValueKind::Address],
        ..HotlistConfig::default()
    })
    .unwrap();
    let ev: Vec<Event> = (0..1000)
        .map(|i| Event::load(0x10, 0x8000 + 8 * (i % 2), 8, 3))
        .collect();
    t.observe(&ev);
    let snap = t.snapshot();
    assert_eq!((snap.loads, snap.samples), (1000, 100));
    assert_eq!(snap.lists.len(), 2);
    let vals = snap.pc_values(ValueKind::Loaded);
    assert_eq!(vals[0].values[0].value, 3);
    assert_eq!(vals[0].values[0].invariance, 1.0);
    // Every 10th load has an even index: address 0x8000 only.
    let addrs = snap.pc_values(ValueKind::Address);
    assert_eq!(addrs[0].values.len(), 1);
    assert!(HotlistTable::new(HotlistConfig {
        capacity: 1,
        ..HotlistConfig::default()
    })
    .is_err());
    assert!(HotlistTable::new(HotlistConfig {
        factor: Some(1.0),
        ..HotlistConfig::default()
    })
    .is_err());
}

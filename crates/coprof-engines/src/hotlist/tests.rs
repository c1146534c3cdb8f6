//! Gibbons–Matias properties: at most N values per list; concise-sample
//! estimates C[v]/p are unbiased (averaged over many seeds); counting
//! samples never count more occurrences than there were.

use super::*;
use proptest::prelude::*;

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

    #[test]
    fn counting_samples_never_overcount(seed in any::<u64>(), distinct in 1u64..200) {
        let mut t = table(Variant::Counting, seed, 8);
        let s = stream(seed, 5000, distinct);
        for &v in &s {
            t.add(0x10, ValueKind::Loaded, v);
        }
        let snap = t.snapshot();
        for hv in &snap.lists[0].values {
            let truth = s.iter().filter(|&&v| v == hv.value).count() as u64;
            prop_assert!(hv.count <= truth, "{} counted {} > {}", hv.value, hv.count, truth);
        }
    }
}

/// The mean of C[v]/p over many seeds is within 3 standard errors of the
/// true count, for a hot value and for a lukewarm one.
#[test]
fn concise_estimates_are_unbiased_over_seeds() {
    let s = stream(42, 20_000, 300);
    let truth = |v: u64| s.iter().filter(|&&x| x == v).count() as f64;
    // Value 0 is a third of the stream; pick a value near the 16th rank too.
    for value in [0u64, 1] {
        let t_true = truth(value);
        let ests: Vec<f64> = (0..400u64)
            .map(|seed| {
                let mut t = table(Variant::Concise, seed, 16);
                for &v in &s {
                    t.add(0x10, ValueKind::Loaded, v);
                }
                t.estimate(0x10, ValueKind::Loaded, value)
            })
            .collect();
        let n = ests.len() as f64;
        let mean = ests.iter().sum::<f64>() / n;
        let var = ests.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let se = (var / n).sqrt();
        assert!(
            (mean - t_true).abs() <= 3.0 * se + 1e-9,
            "value {value}: mean {mean:.1} vs true {t_true} (se {se:.1})"
        );
        // The test can fail: a biased estimator (say, C alone) would not pass.
        if value == 0 {
            assert!(se < 0.05 * t_true, "too noisy to tell: se {se}");
        }
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

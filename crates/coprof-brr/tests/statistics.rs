//! Statistical checks of branch-on-random (Lee & Zilles, CGO 2008, §3.2–3.3):
//! each freq is taken with probability (1/2)^(freq+1), and with spaced bits
//! a taken outcome says nothing about the next one, while with adjacent bits
//! it does.
//!
//! Every check is a binomial confidence interval at z = 4.5 (a chance miss
//! has probability below 1e-5); the seeds are fixed, so the runs repeat.

use coprof_brr::brr::probability;
use coprof_brr::{Brr, BrrConfig, Spacing};

const Z: f64 = 4.5;

/// Whether `hits` of `n` Bernoulli trials fits probability `p`.
fn within(hits: u64, n: u64, p: f64) -> bool {
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    (hits as f64 - mean).abs() <= Z * sd
}

fn unit(width: u32, spacing: Spacing, seed: u64) -> Brr {
    Brr::with_config(BrrConfig {
        width,
        seed,
        spacing,
    })
    .unwrap()
}

#[test]
fn every_freq_is_taken_with_its_probability() {
    for width in [20, 32, 64] {
        for freq in 0..=15u32 {
            let p = probability(freq);
            // At least ~200 expected takens.
            let n = ((200.0 / p) as u64).max(1 << 16);
            let mut u = unit(width, Spacing::Spaced, 11 + freq as u64);
            let hits = (0..n).filter(|_| u.brr(freq)).count() as u64;
            assert!(
                within(hits, n, p),
                "width {width} freq {freq}: {hits} of {n}, expected {:.1}",
                n as f64 * p
            );
        }
    }
}

/// (takens, takens followed `lag` uses later by a taken).
fn after_taken(u: &mut Brr, freq: u32, n: u64, lag: usize) -> (u64, u64) {
    let mut history = std::collections::VecDeque::with_capacity(lag + 1);
    let (mut taken, mut both) = (0u64, 0u64);
    for _ in 0..n {
        let t = u.brr(freq);
        if history.len() == lag {
            let before: bool = history.pop_front().unwrap();
            if before {
                taken += 1;
                if t {
                    both += 1;
                }
            }
        }
        history.push_back(t);
    }
    (taken, both)
}

#[test]
fn spaced_bits_make_consecutive_outcomes_independent() {
    // The paper's 20-bit register: every freq whose bits fit apart and
    // whose conditional count is measurable in a few million uses.
    for freq in 0..=5u32 {
        let p = probability(freq);
        let mut u = unit(20, Spacing::Spaced, 5);
        // Outcomes closer than the smallest gap share no bit at all.
        let m = u.mask(freq);
        let bits: Vec<u32> = (0..64).filter(|b| m >> b & 1 != 0).collect();
        let min_gap = bits.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(19);
        for lag in 1..min_gap.min(4) as usize {
            let (t, tt) = after_taken(&mut u, freq, 8_000_000, lag);
            assert!(
                within(tt, t, p),
                "spaced freq {freq} lag {lag}: P(T|T) = {:.5}, p = {p}",
                tt as f64 / t as f64
            );
        }
    }
    // A wider register keeps higher freqs apart too.
    let mut u = unit(32, Spacing::Spaced, 6);
    let (t, tt) = after_taken(&mut u, 7, 40_000_000, 1);
    assert!(within(tt, t, probability(7)), "32-bit freq 7: {tt} of {t}");
}

#[test]
fn adjacent_bits_make_taken_follow_taken() {
    for freq in 1..=5u32 {
        let p = probability(freq);
        let mut u = unit(20, Spacing::Adjacent, 5);
        let (t, tt) = after_taken(&mut u, freq, 8_000_000, 1);
        let cond = tt as f64 / t as f64;
        // The next outcome shares freq bits: P(T|T) = 1/2.
        assert!(!within(tt, t, p), "adjacent freq {freq} looks independent");
        assert!(within(tt, t, 0.5), "adjacent freq {freq}: P(T|T) = {cond}");
        // The marginal rate is still right.
        let mut u = unit(20, Spacing::Adjacent, 9);
        let n = 2_000_000;
        let hits = (0..n).filter(|_| u.brr(freq)).count() as u64;
        assert!(within(hits, n, p), "adjacent freq {freq} rate {hits}");
    }
}

#[test]
fn forced_adjacency_at_high_freq_is_bounded() {
    // At 20 bits, freq 10..=15 cannot keep all bits apart. The rule spreads
    // the unavoidable adjacent pairs; check the number of shared bits at
    // lag 1 is the minimum the width allows (k − (width − 1 − k)).
    for freq in 10..=15u32 {
        let k = freq + 1;
        let m = coprof_brr::brr::outcome_mask(20, freq, Spacing::Spaced);
        let shared = (m & (m >> 1)).count_ones();
        let free = 19 - k; // unused positions among bits 1..=19
        assert!(
            shared <= k - free.min(k - 1),
            "freq {freq}: {shared} shared"
        );
    }
}

#[test]
fn outcomes_two_uses_apart_share_the_bits_their_masks_share() {
    // Two uses later the register has shifted by two, so the later
    // outcome reads, for each of its mask bits q, the bit q − 2 of the
    // earlier state. Where that bit was itself a mask bit it is known to
    // be 1 after a taken outcome, and P(T | T) = 2^−(k − shared). At the
    // paper's 20 bits, freq 9's ten bits fit apart only as bits 1, 3, …,
    // 19, which share nine: a taken outcome is followed two uses later by
    // another with probability 1/2. A 64-bit register spaces them so that
    // one is shared.
    let m20 = coprof_brr::brr::outcome_mask(20, 9, Spacing::Spaced);
    assert_eq!(m20, 0b1010_1010_1010_1010_1010, "bits 1, 3, …, 19");
    for (width, n) in [(20u32, (1u64 << 20) - 1), (64, 16_000_000)] {
        let m = coprof_brr::brr::outcome_mask(width, 9, Spacing::Spaced);
        let shared = (m & (m << 2)).count_ones();
        let p = 0.5f64.powi(10 - shared as i32);
        let mut u = unit(width, Spacing::Spaced, 5);
        let (t, tt) = after_taken(&mut u, 9, n, 2);
        assert!(
            within(tt, t, p),
            "width {width} freq 9 lag 2: {tt} of {t} taken, expected P(T|T) = {p}"
        );
        if width == 20 {
            assert_eq!(shared, 9);
        } else {
            assert!(shared <= 1, "width {width}: {shared} shared");
        }
    }
}

#[test]
fn spread_bits_bound_every_lag_at_freq_9() {
    // Spacing::Spread at the paper's 20 bits: over the register's whole
    // period, a taken outcome is followed `lag` uses later by another with
    // probability 2^−(10 − shared), shared ≤ 4 at every lag 1..=19: at most
    // 1/64 where the default selection gives 1/2 at lag 2.
    let m = coprof_brr::brr::outcome_mask(20, 9, Spacing::Spread);
    let n = (1u64 << 20) - 1;
    for lag in 1..20usize {
        let shared = (m & (m >> lag)).count_ones();
        assert!(shared <= 4, "lag {lag}: {shared} shared");
        let p = 0.5f64.powi(10 - shared as i32);
        let mut u = unit(20, Spacing::Spread, 5);
        let (t, tt) = after_taken(&mut u, 9, n, lag);
        assert!(
            within(tt, t, p),
            "spread freq 9 lag {lag}: {tt} of {t} taken, expected P(T|T) = {p}"
        );
    }
}

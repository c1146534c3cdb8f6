//! Property tests of the samplers' invariants.

use coprof_brr::{
    brr::{max_shared, outcome_mask},
    counter::Counter,
    geometric::Geometric,
    periodic::Periodic,
    BrrConfig, BrrSampler, BrrSkip, Lfsr, Sampler, SamplerSpec, Spacing,
};
use proptest::prelude::*;

proptest! {
    #[test]
    fn lfsr_never_zero_and_stays_in_width(width in 16u32..=64, seed: u64, steps in 1usize..2000) {
        let mut r = Lfsr::new(width, seed).unwrap();
        let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
        for _ in 0..steps {
            let s = r.step();
            prop_assert_ne!(s, 0);
            prop_assert_eq!(s & !mask, 0);
        }
    }

    #[test]
    fn lfsr_step_is_a_permutation_locally(width in 16u32..=24, seed: u64) {
        // Distinct states map to distinct successors: no state repeats
        // within 2^16 steps (the period is at least 2^16 − 1).
        let mut r = Lfsr::new(width, seed).unwrap();
        let first = r.state();
        for _ in 0..((1u32 << 16) - 2) {
            prop_assert_ne!(r.step(), first);
        }
    }

    #[test]
    fn outcome_masks_have_the_right_size(width in 16u32..=64, freq in 0u32..=15) {
        for sp in [Spacing::Spaced, Spacing::Adjacent, Spacing::Spread] {
            let m = outcome_mask(width, freq, sp);
            prop_assert_eq!(m.count_ones(), freq + 1);
            if freq + 1 < width {
                prop_assert_eq!(m & 1, 0, "bit 0 is never read");
                prop_assert_eq!(m.checked_shr(width).unwrap_or(0), 0);
            }
        }
        // Spread never lets outcomes share more bits, at any distance,
        // than the default selection does.
        let spread = max_shared(outcome_mask(width, freq, Spacing::Spread), width);
        let spaced = max_shared(outcome_mask(width, freq, Spacing::Spaced), width);
        prop_assert!(spread <= spaced, "w{width} f{freq}: spread {spread}, spaced {spaced}");
    }

    #[test]
    fn skip_ahead_takes_the_same_uses_as_the_stepped_register(
        width in 16u32..=64,
        freq in 0u32..=15,
        spacing in prop_oneof![Just(Spacing::Spaced), Just(Spacing::Adjacent), Just(Spacing::Spread)],
        seed: u64,
        uses in 1usize..20_000,
    ) {
        let config = BrrConfig { width, seed, spacing };
        let mut stepped = BrrSampler::with_config(freq, config).unwrap();
        let mut skip = BrrSkip::with_config(freq, config).unwrap();
        for i in 0..uses {
            prop_assert_eq!(skip.sample(), stepped.sample(), "use {}", i);
        }
    }

    #[test]
    fn sample_many_decides_as_sample_does(
        kind in 0u8..4,
        a in 1u64..3000,
        f in 0u32..=15,
        seed: u64,
        runs in prop::collection::vec(0usize..5000, 1..20),
    ) {
        let spec = match kind {
            0 => SamplerSpec::Brr { freq: f, spacing: Spacing::Spaced },
            1 => SamplerSpec::Counter { interval: a },
            2 => SamplerSpec::Geometric { mean: a },
            _ => SamplerSpec::Periodic { period: a + 1, jitter: a / 2 },
        };
        let mut one = spec.build(seed).unwrap();
        let mut many = spec.build(seed).unwrap();
        for n in runs {
            let expect: Vec<usize> = (0..n).filter(|_| one.sample()).collect();
            let mut got = Vec::new();
            many.sample_many(n, |i| got.push(i));
            prop_assert_eq!(got, expect);
        }
        // And the stepped register, which keeps the default.
        let mut one = BrrSampler::new(f.min(6), seed).unwrap();
        let mut many = one.clone();
        let expect: Vec<usize> = (0..3000).filter(|_| one.sample()).collect();
        let mut got = Vec::new();
        many.sample_many(3000, |i| got.push(i));
        prop_assert_eq!(got, expect);
    }

    #[test]
    fn counter_samples_floor_n_over_interval(interval in 1u64..5000, n in 0u64..50_000) {
        let mut c = Counter::new(interval).unwrap();
        let hits = (0..n).filter(|_| c.sample()).count() as u64;
        prop_assert_eq!(hits, n / interval);
    }

    #[test]
    fn periodic_gaps_stay_in_window(period in 2u64..500, jitter_frac in 0.0f64..1.0, seed: u64) {
        let jitter = ((period - 1) as f64 * jitter_frac) as u64;
        let mut p = Periodic::new(period, jitter, seed).unwrap();
        let mut since = 0u64;
        for _ in 0..20_000 {
            since += 1;
            if p.sample() {
                prop_assert!(since >= period - jitter && since <= period + jitter);
                since = 0;
            }
        }
    }

    #[test]
    fn geometric_rate_is_one_over_mean(mean in 1u64..64, seed: u64) {
        let mut g = Geometric::new(mean, seed).unwrap();
        let n = 200_000u64;
        let hits = (0..n).filter(|_| g.sample()).count() as f64;
        let p = 1.0 / mean as f64;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        prop_assert!((hits - n as f64 * p).abs() <= 5.0 * sd + 1.0);
    }

    #[test]
    fn spec_text_round_trips(kind in 0u8..4, a in 1u64..1_000_000, f in 0u32..=15) {
        let spacing = [Spacing::Spaced, Spacing::Spread, Spacing::Adjacent][a as usize % 3];
        let spec = match kind {
            0 => SamplerSpec::Brr { freq: f, spacing },
            1 => SamplerSpec::Counter { interval: a },
            2 => SamplerSpec::Geometric { mean: a },
            _ => SamplerSpec::Periodic { period: a + 1, jitter: a / 3 },
        };
        let text = spec.to_string();
        prop_assert_eq!(text.parse::<SamplerSpec>().unwrap(), spec);
    }

    #[test]
    fn spec_parser_never_panics(s in ".{0,24}") {
        let _ = s.parse::<SamplerSpec>();
    }
}

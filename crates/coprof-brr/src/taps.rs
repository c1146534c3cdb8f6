//! Maximal-length tap sets for Fibonacci LFSRs of 16 to 64 bits.
//!
//! Branch-on-random draws its randomness from a linear feedback shift
//! register (Lee & Zilles, CGO 2008, §3.3). A register of n bits cycles
//! through all 2^n − 1 non-zero states exactly when its feedback polynomial
//! x^n + Σ x^t + 1 (t over the taps below n) is primitive over GF(2). The tap
//! sets below are the standard published maximal-length taps (two or four
//! taps where one exists; six for 37 bits), 1-based as in the literature: tap
//! `t` is bit `t − 1` of the register. `tests` checks primitivity of every
//! polynomial, and `lfsr`'s tests walk the full period for the small widths.

/// Smallest supported register width.
pub const MIN_WIDTH: u32 = 16;
/// Largest supported register width.
pub const MAX_WIDTH: u32 = 64;

/// Tap sets indexed by `width − 16`; the first tap is always the width.
pub(crate) const TAPS: [&[u8]; 49] = [
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 22, 2, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
    &[64, 63, 61, 60],
];

/// The taps of a `width`-bit register (1-based), or `None` outside 16..=64.
pub fn taps(width: u32) -> Option<&'static [u8]> {
    if (MIN_WIDTH..=MAX_WIDTH).contains(&width) {
        Some(TAPS[(width - MIN_WIDTH) as usize])
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    //! Primitivity of every feedback polynomial: P of degree n is primitive
    //! iff x^(2^n − 1) ≡ 1 (mod P) and x^((2^n − 1)/q) ≢ 1 for every prime
    //! q dividing 2^n − 1. Polynomials over GF(2) are bit masks (u128 holds a
    //! product of two degree-64 polynomials reduced on the fly).
    use super::*;

    fn poly(width: u32) -> u128 {
        let mut p: u128 = 1 | 1u128 << width;
        for &t in &taps(width).unwrap()[1..] {
            p |= 1u128 << t;
        }
        p
    }

    fn mulmod(a: u128, b: u128, p: u128, n: u32) -> u128 {
        let mut r = 0u128;
        let mut a = a;
        let mut b = b;
        while b != 0 {
            if b & 1 != 0 {
                r ^= a;
            }
            b >>= 1;
            a <<= 1;
            if a >> n & 1 != 0 {
                a ^= p;
            }
        }
        r
    }

    fn x_pow(e: u64, p: u128, n: u32) -> u128 {
        let mut result = 1u128;
        let mut base = 2u128; // x
        let mut e = e;
        while e != 0 {
            if e & 1 != 0 {
                result = mulmod(result, base, p, n);
            }
            base = mulmod(base, base, p, n);
            e >>= 1;
        }
        result
    }

    fn mul_mod_u64(a: u64, b: u64, m: u64) -> u64 {
        ((a as u128 * b as u128) % m as u128) as u64
    }

    fn pow_mod_u64(mut b: u64, mut e: u64, m: u64) -> u64 {
        let mut r = 1u64;
        b %= m;
        while e != 0 {
            if e & 1 != 0 {
                r = mul_mod_u64(r, b, m);
            }
            b = mul_mod_u64(b, b, m);
            e >>= 1;
        }
        r
    }

    /// Deterministic Miller–Rabin for 64-bit numbers.
    fn is_prime(n: u64) -> bool {
        if n < 2 {
            return false;
        }
        for p in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
            if n.is_multiple_of(p) {
                return n == p;
            }
        }
        let (mut d, mut s) = (n - 1, 0);
        while d % 2 == 0 {
            d /= 2;
            s += 1;
        }
        'witness: for a in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
            let mut x = pow_mod_u64(a, d, n);
            if x == 1 || x == n - 1 {
                continue;
            }
            for _ in 1..s {
                x = mul_mod_u64(x, x, n);
                if x == n - 1 {
                    continue 'witness;
                }
            }
            return false;
        }
        true
    }

    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }

    /// Pollard's rho: a non-trivial factor of composite odd `n`.
    fn rho(n: u64) -> u64 {
        for c in 1u64.. {
            let f = |x: u64| (mul_mod_u64(x, x, n) + c) % n;
            let (mut x, mut y, mut d) = (2u64, 2u64, 1u64);
            while d == 1 {
                x = f(x);
                y = f(f(y));
                d = gcd(x.abs_diff(y), n);
            }
            if d != n {
                return d;
            }
        }
        unreachable!()
    }

    fn prime_factors(n: u64, out: &mut std::vec::Vec<u64>) {
        if n == 1 {
            return;
        }
        if n.is_multiple_of(2) {
            out.push(2);
            let mut m = n;
            while m.is_multiple_of(2) {
                m /= 2;
            }
            return prime_factors(m, out);
        }
        if is_prime(n) {
            out.push(n);
            return;
        }
        let d = rho(n);
        prime_factors(d, out);
        prime_factors(n / d, out);
    }

    #[test]
    fn every_tap_set_is_primitive() {
        for width in MIN_WIDTH..=MAX_WIDTH {
            let p = poly(width);
            let order = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            assert_eq!(x_pow(order, p, width), 1, "width {width}: x^(2^n-1) != 1");
            let mut qs = std::vec::Vec::new();
            prime_factors(order, &mut qs);
            qs.sort_unstable();
            qs.dedup();
            let mut product = 1u128;
            for &q in &qs {
                product *= q as u128;
                assert_ne!(
                    x_pow(order / q, p, width),
                    1,
                    "width {width}: order divides (2^n-1)/{q}"
                );
            }
            assert!(product > 1);
        }
    }

    #[test]
    fn a_non_primitive_polynomial_is_caught() {
        // x^16 + x^8 + 1 = (x^8 + x^4 + 1)^2 is reducible: the check must fail.
        let p = 1u128 | 1 << 8 | 1 << 16;
        let order = (1u64 << 16) - 1;
        let mut qs = std::vec::Vec::new();
        prime_factors(order, &mut qs);
        let primitive =
            x_pow(order, p, 16) == 1 && qs.iter().all(|&q| x_pow(order / q, p, 16) != 1);
        assert!(!primitive);
    }

    #[test]
    fn widths_outside_the_table_have_no_taps() {
        assert!(taps(15).is_none());
        assert!(taps(65).is_none());
        assert_eq!(taps(20).unwrap()[0], 20);
        for w in MIN_WIDTH..=MAX_WIDTH {
            assert_eq!(taps(w).unwrap()[0] as u32, w);
        }
    }
}

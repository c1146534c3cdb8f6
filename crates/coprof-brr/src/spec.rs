//! Sampler specifications as text (`brr:9`, `brr:9,spread`,
//! `counter:1024`, `geometric:1024`, `periodic:65536±4096`), and one
//! sampler type that is any of them, for programs that choose a sampler at
//! run time.

use crate::brr::{BrrConfig, Spacing, MAX_FREQ};
use crate::counter::Counter;
use crate::error::Error;
use crate::geometric::Geometric;
use crate::periodic::{default_jitter, Periodic, DEFAULT_PERIOD};
use crate::skip::BrrSkip;
use crate::Sampler;
use core::fmt;
use core::str::FromStr;

/// Which sampler, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SamplerSpec {
    /// `brr:F`: branch-on-random with freq F, probability (1/2)^(F+1);
    /// `brr:F,spread` and `brr:F,adjacent` choose the register bits with
    /// [`Spacing::Spread`] or [`Spacing::Adjacent`] instead of the default
    /// [`Spacing::Spaced`].
    Brr {
        /// The freq operand, 0..=15.
        freq: u32,
        /// Which register bits are ANDed.
        spacing: Spacing,
    },
    /// `counter:N`: every N-th event (Arnold–Ryder).
    Counter {
        /// The interval N.
        interval: u64,
    },
    /// `geometric:N`: geometric countdown with mean N.
    Geometric {
        /// The mean interval N.
        mean: u64,
    },
    /// `periodic:N±J`: DCPI's interrupt every N events with jitter J.
    /// `periodic` alone is N = 65536; a missing `±J` means J = N/16;
    /// `±0` means no jitter.
    Periodic {
        /// The period N.
        period: u64,
        /// The jitter J (< N).
        jitter: u64,
    },
}

/// Why a sampler specification did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// The kind before the colon is not a sampler.
    UnknownKind,
    /// The kind needs a parameter after a colon.
    MissingParameter,
    /// A parameter is not a non-negative integer.
    BadNumber,
    /// A parameter is out of range.
    Range(Error),
    /// brr's bit selection after the comma is not spaced, spread or
    /// adjacent.
    UnknownSpacing,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::UnknownKind => f.write_str(
                "unknown sampler (expected brr:F, counter:N, geometric:N or periodic:N[±J])",
            ),
            SpecError::MissingParameter => {
                f.write_str("missing parameter (write brr:F, counter:N or geometric:N)")
            }
            SpecError::BadNumber => f.write_str("parameter is not a non-negative integer"),
            SpecError::Range(e) => fmt::Display::fmt(e, f),
            SpecError::UnknownSpacing => f.write_str(
                "unknown brr bit selection (expected brr:F,spaced, brr:F,spread or brr:F,adjacent)",
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SpecError {}

fn number(s: &str) -> Result<u64, SpecError> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return Err(SpecError::BadNumber);
    }
    let mut n: u64 = 0;
    for b in s.bytes().filter(|&b| b != b'_') {
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add((b - b'0') as u64))
            .ok_or(SpecError::BadNumber)?;
    }
    Ok(n)
}

impl FromStr for SamplerSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<SamplerSpec, SpecError> {
        let s = s.trim();
        let (kind, param) = match s.split_once(':') {
            Some((k, p)) => (k.trim(), Some(p.trim())),
            None => (s, None),
        };
        let spec = match kind {
            "brr" => {
                let param = param.ok_or(SpecError::MissingParameter)?;
                let (f, spacing) = match param.split_once(',') {
                    None => (param, Spacing::Spaced),
                    Some((f, sp)) => (
                        f,
                        match sp.trim() {
                            "spaced" => Spacing::Spaced,
                            "spread" => Spacing::Spread,
                            "adjacent" => Spacing::Adjacent,
                            _ => return Err(SpecError::UnknownSpacing),
                        },
                    ),
                };
                let f = number(f)?;
                if f > MAX_FREQ as u64 {
                    return Err(SpecError::Range(Error::Freq(f.min(u32::MAX as u64) as u32)));
                }
                SamplerSpec::Brr {
                    freq: f as u32,
                    spacing,
                }
            }
            "counter" => SamplerSpec::Counter {
                interval: number(param.ok_or(SpecError::MissingParameter)?)?,
            },
            "geometric" => SamplerSpec::Geometric {
                mean: number(param.ok_or(SpecError::MissingParameter)?)?,
            },
            "periodic" => match param {
                None => SamplerSpec::Periodic {
                    period: DEFAULT_PERIOD,
                    jitter: default_jitter(DEFAULT_PERIOD),
                },
                Some(p) => {
                    let split = p.split_once('±').or_else(|| p.split_once("+-"));
                    match split {
                        Some((n, j)) => SamplerSpec::Periodic {
                            period: number(n)?,
                            jitter: number(j)?,
                        },
                        None => {
                            let n = number(p)?;
                            SamplerSpec::Periodic {
                                period: n,
                                jitter: default_jitter(n),
                            }
                        }
                    }
                }
            },
            _ => return Err(SpecError::UnknownKind),
        };
        spec.check().map_err(SpecError::Range)?;
        Ok(spec)
    }
}

impl fmt::Display for SamplerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SamplerSpec::Brr {
                freq,
                spacing: Spacing::Spaced,
            } => write!(f, "brr:{freq}"),
            SamplerSpec::Brr {
                freq,
                spacing: Spacing::Spread,
            } => write!(f, "brr:{freq},spread"),
            SamplerSpec::Brr {
                freq,
                spacing: Spacing::Adjacent,
            } => write!(f, "brr:{freq},adjacent"),
            SamplerSpec::Counter { interval } => write!(f, "counter:{interval}"),
            SamplerSpec::Geometric { mean } => write!(f, "geometric:{mean}"),
            SamplerSpec::Periodic { period, jitter } => write!(f, "periodic:{period}±{jitter}"),
        }
    }
}

impl SamplerSpec {
    /// Checks the parameters' ranges.
    pub fn check(&self) -> Result<(), Error> {
        match *self {
            SamplerSpec::Brr { freq, .. } if freq > MAX_FREQ => Err(Error::Freq(freq)),
            SamplerSpec::Counter { interval: 0 }
            | SamplerSpec::Geometric { mean: 0 }
            | SamplerSpec::Periodic { period: 0, .. } => Err(Error::ZeroInterval),
            SamplerSpec::Periodic { period, jitter } if jitter >= period => {
                Err(Error::Jitter { period, jitter })
            }
            _ => Ok(()),
        }
    }

    /// The mean number of events per sample.
    pub fn mean_interval(&self) -> f64 {
        match *self {
            SamplerSpec::Brr { freq, .. } => (1u64 << (freq.min(MAX_FREQ) + 1)) as f64,
            SamplerSpec::Counter { interval } => interval as f64,
            SamplerSpec::Geometric { mean } => mean as f64,
            SamplerSpec::Periodic { period, .. } => period as f64,
        }
    }

    /// The sampler, seeded with `seed` where it is random.
    pub fn build(&self, seed: u64) -> Result<AnySampler, Error> {
        Ok(match *self {
            SamplerSpec::Brr { freq, spacing } => AnySampler::Brr(BrrSkip::with_config(
                freq,
                BrrConfig {
                    seed,
                    spacing,
                    ..BrrConfig::default()
                },
            )?),
            SamplerSpec::Counter { interval } => AnySampler::Counter(Counter::new(interval)?),
            SamplerSpec::Geometric { mean } => AnySampler::Geometric(Geometric::new(mean, seed)?),
            SamplerSpec::Periodic { period, jitter } => {
                AnySampler::Periodic(Periodic::new(period, jitter, seed)?)
            }
        })
    }
}

/// Any of the samplers a [`SamplerSpec`] names.
#[derive(Clone, Debug, PartialEq)]
pub enum AnySampler {
    /// Branch-on-random: the outcomes of a
    /// [`BrrSampler`](crate::BrrSampler), counted down
    /// ([`BrrSkip`]).
    Brr(BrrSkip),
    /// Counter-based.
    Counter(Counter),
    /// Geometric countdown.
    Geometric(Geometric),
    /// DCPI periodic.
    Periodic(Periodic),
}

impl Sampler for AnySampler {
    #[inline]
    fn sample(&mut self) -> bool {
        match self {
            AnySampler::Brr(s) => s.sample(),
            AnySampler::Counter(s) => s.sample(),
            AnySampler::Geometric(s) => s.sample(),
            AnySampler::Periodic(s) => s.sample(),
        }
    }
    /// Dispatches once for the whole run, so that each sampler's own
    /// `sample_many` (and its countdown) is used.
    #[inline]
    fn sample_many(&mut self, n: usize, taken: impl FnMut(usize)) {
        match self {
            AnySampler::Brr(s) => s.sample_many(n, taken),
            AnySampler::Counter(s) => s.sample_many(n, taken),
            AnySampler::Geometric(s) => s.sample_many(n, taken),
            AnySampler::Periodic(s) => s.sample_many(n, taken),
        }
    }
    fn mean_interval(&self) -> f64 {
        match self {
            AnySampler::Brr(s) => s.mean_interval(),
            AnySampler::Counter(s) => s.mean_interval(),
            AnySampler::Geometric(s) => s.mean_interval(),
            AnySampler::Periodic(s) => s.mean_interval(),
        }
    }
    fn bytes(&self) -> usize {
        core::mem::size_of::<AnySampler>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn parses_every_kind() {
        let brr = |freq, spacing| Ok(SamplerSpec::Brr { freq, spacing });
        assert_eq!("brr:9".parse(), brr(9, Spacing::Spaced));
        assert_eq!("brr:9,spaced".parse(), brr(9, Spacing::Spaced));
        assert_eq!("brr:9, spread".parse(), brr(9, Spacing::Spread));
        assert_eq!("brr:3,adjacent".parse(), brr(3, Spacing::Adjacent));
        assert_eq!(
            "counter:1024".parse(),
            Ok(SamplerSpec::Counter { interval: 1024 })
        );
        assert_eq!(
            "geometric:1_024".parse(),
            Ok(SamplerSpec::Geometric { mean: 1024 })
        );
        assert_eq!(
            "periodic".parse(),
            Ok(SamplerSpec::Periodic {
                period: 65536,
                jitter: 4096
            })
        );
        assert_eq!(
            "periodic:1000±10".parse(),
            Ok(SamplerSpec::Periodic {
                period: 1000,
                jitter: 10
            })
        );
        assert_eq!(
            "periodic:1000+-0".parse(),
            Ok(SamplerSpec::Periodic {
                period: 1000,
                jitter: 0
            })
        );
        assert_eq!(
            "periodic:1600".parse(),
            Ok(SamplerSpec::Periodic {
                period: 1600,
                jitter: 100
            })
        );
    }

    #[test]
    fn rejects_nonsense_with_a_reason() {
        let e = |s: &str| s.parse::<SamplerSpec>().unwrap_err();
        assert_eq!(e("random:3"), SpecError::UnknownKind);
        assert_eq!(e("brr"), SpecError::MissingParameter);
        assert_eq!(e("brr:x"), SpecError::BadNumber);
        assert_eq!(e("counter:-1"), SpecError::BadNumber);
        assert_eq!(e("counter:99999999999999999999999"), SpecError::BadNumber);
        assert_eq!(e("brr:16"), SpecError::Range(Error::Freq(16)));
        assert_eq!(e("brr:9,wide"), SpecError::UnknownSpacing);
        assert_eq!(e("brr:x,spread"), SpecError::BadNumber);
        assert_eq!(e("counter:0"), SpecError::Range(Error::ZeroInterval));
        assert_eq!(
            e("periodic:10±10"),
            SpecError::Range(Error::Jitter {
                period: 10,
                jitter: 10
            })
        );
        assert!(e("brr:16").to_string().contains("0..=15"));
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "brr:0",
            "counter:7",
            "geometric:1024",
            "periodic:65536±4096",
        ] {
            let spec: SamplerSpec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
            let mut sampler = spec.build(1).unwrap();
            assert_eq!(sampler.mean_interval(), spec.mean_interval());
            let n = (0..200_000).filter(|_| sampler.sample()).count() as f64;
            let expect = 200_000.0 / spec.mean_interval();
            assert!(
                (n - expect).abs() <= 5.0 * expect.sqrt() + 2.0,
                "{s}: {n} vs {expect}"
            );
        }
    }
}

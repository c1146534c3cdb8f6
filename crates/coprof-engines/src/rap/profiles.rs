//! Several simultaneous RAP profiles behind one handle: the paper's
//! programming interface (Mysore et al., TACO 2008, §3), which creates a
//! profiler with the number of profiles wanted and then adds points to a
//! profile by its id.

use super::config::{ConfigError, RapConfig};
use super::engine::Rap;
use super::snapshot::RapSnapshot;
use std::fmt;

/// `count` independent RAP trees sharing one configuration.
#[derive(Clone, Debug)]
pub struct RapProfiles<const D: usize> {
    profiles: Vec<Rap<D>>,
}

/// A profile id that was never created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownProfile {
    /// The id asked for.
    pub id: usize,
    /// How many profiles exist.
    pub count: usize,
}

impl fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no RAP profile {} (profiles are numbered 0 to {})",
            self.id,
            self.count.saturating_sub(1)
        )
    }
}

impl std::error::Error for UnknownProfile {}

impl<const D: usize> RapProfiles<D> {
    /// `count` empty profiles with `config`.
    pub fn new(count: usize, config: RapConfig) -> Result<RapProfiles<D>, ConfigError> {
        let one = Rap::new(config)?;
        Ok(RapProfiles {
            profiles: vec![one; count],
        })
    }

    /// Number of profiles.
    pub fn len(&self) -> usize {
        self.profiles.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.profiles.is_empty()
    }

    /// Counts `count` events at `point` in profile `id`.
    #[inline]
    pub fn add_points(
        &mut self,
        id: usize,
        count: u64,
        point: [u64; D],
    ) -> Result<(), UnknownProfile> {
        let n = self.profiles.len();
        self.profiles
            .get_mut(id)
            .ok_or(UnknownProfile { id, count: n })?
            .add_points(count, point);
        Ok(())
    }

    /// Profile `id` itself.
    pub fn profile(&mut self, id: usize) -> Option<&mut Rap<D>> {
        self.profiles.get_mut(id)
    }

    /// Finalizes every profile, in id order.
    pub fn finalize(&mut self) -> Vec<RapSnapshot> {
        self.profiles.iter_mut().map(|p| p.snapshot()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_independent() {
        let mut p: RapProfiles<1> = RapProfiles::new(2, RapConfig::default()).unwrap();
        p.add_points(0, 10, [1]).unwrap();
        p.add_points(1, 3, [2]).unwrap();
        let err = p.add_points(2, 1, [3]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no RAP profile 2 (profiles are numbered 0 to 1)"
        );
        let s = p.finalize();
        assert_eq!((s[0].n, s[1].n), (10, 3));
    }
}

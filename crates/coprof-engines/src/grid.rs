//! The grid of a design-space sweep: every combination of three lists of
//! parameters, each configuration an engine of its own fed every event,
//! so that their number is bounded.

use std::fmt;

/// The most configurations one sweep runs.
pub const MAX_CONFIGS: usize = 256;

/// Why a grid cannot be swept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GridError {
    /// A list is empty: (which list).
    Empty(&'static str),
    /// More configurations than [`MAX_CONFIGS`]: (how many).
    TooMany(usize),
}

impl fmt::Display for GridError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GridError::Empty(list) => write!(f, "the sweep's list of {list} is empty"),
            GridError::TooMany(n) => write!(
                f,
                "the sweep has {n} configurations, more than {MAX_CONFIGS}: shorten its lists"
            ),
        }
    }
}

impl std::error::Error for GridError {}

/// Why a sweep of configurations `C` cannot start: its grid, or one
/// configuration that its engine refuses, with the engine's reason.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepError<C> {
    /// An empty list or too many configurations.
    Grid(GridError),
    /// A configuration the engine refuses, and why.
    Config(C, String),
}

impl<C: fmt::Display> fmt::Display for SweepError<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SweepError::Grid(e) => e.fmt(f),
            SweepError::Config(c, why) => write!(f, "configuration {c}: {why}"),
        }
    }
}

impl<C: fmt::Debug + fmt::Display> std::error::Error for SweepError<C> {}

/// Every combination of `a`, `b` and `c` made by `f`, `a` slowest and `c`
/// fastest, each list in its order; `names` name the lists in an error.
pub fn combinations<A: Copy, B: Copy, C: Copy, T>(
    (a, b, c): (&[A], &[B], &[C]),
    names: [&'static str; 3],
    f: impl Fn(A, B, C) -> T,
) -> Result<Vec<T>, GridError> {
    for (name, empty) in names
        .into_iter()
        .zip([a.is_empty(), b.is_empty(), c.is_empty()])
    {
        if empty {
            return Err(GridError::Empty(name));
        }
    }
    let n = a.len() * b.len() * c.len();
    if n > MAX_CONFIGS {
        return Err(GridError::TooMany(n));
    }
    let mut out = Vec::with_capacity(n);
    for &x in a {
        for &y in b {
            for &z in c {
                out.push(f(x, y, z));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 3] = ["a", "b", "c"];

    #[test]
    fn the_first_list_is_slowest_and_the_last_fastest() {
        let g = combinations((&[1, 2], &['x'], &[10, 20]), NAMES, |a, b, c| (a, b, c)).unwrap();
        assert_eq!(g, [(1, 'x', 10), (1, 'x', 20), (2, 'x', 10), (2, 'x', 20)]);
    }

    #[test]
    fn an_empty_list_or_too_many_configurations_is_an_error() {
        let e = combinations((&[1], &[] as &[u8], &[2]), NAMES, |_, _, _| ()).unwrap_err();
        assert_eq!(e, GridError::Empty("b"));
        let big: Vec<u32> = (0..7).collect();
        let e = combinations((&big[..], &big[..], &big[..]), NAMES, |_, _, _| ()).unwrap_err();
        assert_eq!(e, GridError::TooMany(343));
        assert!(e.to_string().contains("343 configurations, more than 256"));
        let ok = combinations((&big[..6], &big[..6], &big[..7]), NAMES, |_, _, _| ());
        assert_eq!(ok.unwrap().len(), 252);
    }
}

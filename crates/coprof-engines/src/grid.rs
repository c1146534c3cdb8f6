//! The grid of a design-space sweep: every combination of three lists of
//! parameters, each configuration an engine of its own fed every event,
//! so that their number is bounded.

use std::cmp::Ordering;
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

/// The configurations of a sweep that no other beats: the Pareto front
/// of cost and error, what an architect picks from. A point is off the
/// front when another is as cheap or cheaper and as accurate or more,
/// and better in one of the two; of points equal in both, the earliest
/// in the grid stands for them. `cheaper(a, b)` orders two points by
/// cost, `worse(a, b)` by error (or inaccuracy). The indices of the
/// points on the front, cheapest first (in the grid's order among equal
/// costs).
pub fn pareto_front<T>(
    points: &[T],
    cheaper: impl Fn(&T, &T) -> Ordering,
    worse: impl Fn(&T, &T) -> Ordering,
) -> Vec<usize> {
    let beats = |(i, q): (usize, &T), (j, p): (usize, &T)| {
        let (cost, error) = (cheaper(q, p), worse(q, p));
        cost != Ordering::Greater
            && error != Ordering::Greater
            && (cost == Ordering::Less || error == Ordering::Less || i < j)
    };
    let mut front: Vec<usize> = (0..points.len())
        .filter(|&j| !(0..points.len()).any(|i| i != j && beats((i, &points[i]), (j, &points[j]))))
        .collect();
    front.sort_by(|&a, &b| cheaper(&points[a], &points[b]).then(a.cmp(&b)));
    front
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
    fn the_front_is_what_no_other_point_beats() {
        // (cost, error)
        let points: [(u32, f64); 7] = [
            (4, 0.5),
            (1, 0.9),
            (4, 0.5),
            (2, 0.5),
            (8, 0.1),
            (9, 0.1),
            (3, 0.95),
        ];
        let front = pareto_front(&points, |a, b| a.0.cmp(&b.0), |a, b| a.1.total_cmp(&b.1));
        // (4, 0.5) twice is beaten by (2, 0.5); (9, 0.1) by (8, 0.1);
        // (3, 0.95) by (1, 0.9).
        assert_eq!(front, [1, 3, 4]);
        let ties: [(u32, f64); 2] = [(1, 0.5), (1, 0.5)];
        let front = pareto_front(&ties, |a, b| a.0.cmp(&b.0), |a, b| a.1.total_cmp(&b.1));
        assert_eq!(front, [0]);
    }

    proptest::proptest! {
        /// No point off the front is unbeaten, and no point on it is
        /// beaten by another on both counts.
        #[test]
        fn the_front_is_exactly_the_unbeaten_points(
            points in proptest::collection::vec((0u32..6, 0u32..6), 0..40),
        ) {
            let front = pareto_front(&points, |a, b| a.0.cmp(&b.0), |a, b| a.1.cmp(&b.1));
            for (j, p) in points.iter().enumerate() {
                let strictly_beaten = points.iter().any(|q| {
                    q.0 <= p.0 && q.1 <= p.1 && (q.0 < p.0 || q.1 < p.1)
                });
                let earlier_twin = points[..j].contains(p);
                proptest::prop_assert_eq!(
                    front.contains(&j),
                    !strictly_beaten && !earlier_twin,
                    "{:?} at {}", p, j
                );
            }
            // Cheapest first, and down the front the error falls.
            for w in front.windows(2) {
                let (a, b) = (points[w[0]], points[w[1]]);
                proptest::prop_assert!(a.0 < b.0 && a.1 > b.1, "{:?} then {:?}", a, b);
            }
        }
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

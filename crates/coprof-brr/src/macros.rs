//! Sampled instrumentation as a macro whose instrumentation is out of line
//! and cold (Lee & Zilles, CGO 2008, §4.1, Fig. 8).
//!
//! In Fig. 8 the brr jumps to instrumentation placed away from the hot
//! code, and the fall-through path continues the program. Here the taken
//! path first calls an empty `#[cold]`, never-inlined function: the
//! compiler then predicts the branch not taken and lays the taken path
//! (the body) out of the hot path, so the common path is the decision and
//! a fall-through. The body itself runs in a closure that is called on the
//! spot, and so inlined: were the closure passed to an out-of-line
//! function instead, every local it reads would escape through its
//! captures, and the compiler would keep those locals in memory, storing
//! them at every execution of the site, sampled or not.

/// Marks the path that calls it as rarely taken; does nothing.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn __cold_path() {}

/// Runs a block with the probability of `brr freq`: (1/2)^(freq+1).
///
/// - `brr!(freq, { .. })` uses this thread's unit (`std` feature);
/// - `brr!(unit, freq, { .. })` uses an explicit [`Brr`](crate::Brr) unit.
///
/// Evaluates to `Some(value of the block)` when sampled, else `None`. The
/// block runs in a closure: `return` and `?` inside it leave the block only.
///
/// ```
/// # #[cfg(feature = "std")] {
/// let mut seen = 0u32;
/// for c in "some text to profile".bytes() {
///     coprof_brr::brr!(1, { seen += u32::from(c > 0) });
/// }
/// assert!(seen <= 20);
/// # }
/// let mut unit = coprof_brr::Brr::new(7);
/// let mut n = 0;
/// for _ in 0..1000 {
///     coprof_brr::brr!(unit, 0, { n += 1 });
/// }
/// assert!((400..600).contains(&n));
/// ```
#[macro_export]
macro_rules! brr {
    ($unit:expr, $freq:expr, $body:block) => {
        if ($unit).brr($freq) {
            $crate::macros::__cold_path();
            // Called where it is made, so inlined (see the module's notes).
            #[allow(clippy::redundant_closure_call)]
            let value = (|| $body)();
            ::core::option::Option::Some(value)
        } else {
            ::core::option::Option::None
        }
    };
    ($freq:expr, $body:block) => {
        if $crate::brr($freq) {
            $crate::macros::__cold_path();
            // Called where it is made, so inlined (see the module's notes).
            #[allow(clippy::redundant_closure_call)]
            let value = (|| $body)();
            ::core::option::Option::Some(value)
        } else {
            ::core::option::Option::None
        }
    };
}

/// Runs a block when a [`Sampler`](crate::Sampler) says so, out of line and
/// cold as [`brr!`] does: `sampled!(sampler, { .. })`.
///
/// ```
/// use coprof_brr::{sampled, Counter};
/// let mut c = Counter::new(10).unwrap();
/// let mut n = 0;
/// for _ in 0..100 {
///     sampled!(c, { n += 1 });
/// }
/// assert_eq!(n, 10);
/// ```
#[macro_export]
macro_rules! sampled {
    ($sampler:expr, $body:block) => {
        if $crate::Sampler::sample(&mut $sampler) {
            $crate::macros::__cold_path();
            // Called where it is made, so inlined (see the module's notes).
            #[allow(clippy::redundant_closure_call)]
            let value = (|| $body)();
            ::core::option::Option::Some(value)
        } else {
            ::core::option::Option::None
        }
    };
}

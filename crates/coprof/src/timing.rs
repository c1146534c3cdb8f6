//! What each report's engines cost in one pass (`coprof profile
//! --timing`): the CPU time of the thread that runs them, measured around
//! every call that hands them events or runs, and the process's CPU and
//! wall time around the whole pass.
//!
//! A thread's CPU time is read with `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`
//! once before and once after each call: about 250 ns a read on the
//! machine of docs/PERFORMANCE.md, against calls that carry up to 4,096
//! events or runs on the simulator's thread and 32,768 on the others. On
//! bzip2-text with everything on one thread, some 120 thousand calls cost
//! about 0.06 s of a 4.7 s pass. What is not inside a call (simulating or reading
//! the trace, gathering events into batches, passing them between
//! threads) is the rest of the process's CPU time.

use coprof_core::{Blocks, ClassSet, Event, Run, Sink};
use std::time::Duration;

/// CPU time used so far by the calling thread.
pub fn thread_cpu() -> Duration {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time used so far by the whole process, every thread.
pub fn process_cpu() -> Duration {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clocks exist on
    // every Linux since 2.6.12, and a failure leaves `ts` at zero.
    unsafe { libc::clock_gettime(id, &mut ts) };
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// A sink that passes everything on to `inner` and adds up the CPU time
/// its calls take on whichever thread makes them.
pub struct Timed<'a> {
    inner: &'a mut (dyn Sink + Send),
    cpu: Duration,
}

impl<'a> Timed<'a> {
    /// Times `inner`.
    pub fn new(inner: &'a mut (dyn Sink + Send)) -> Timed<'a> {
        Timed {
            inner,
            cpu: Duration::ZERO,
        }
    }

    /// The CPU time of `inner`'s calls so far.
    pub fn cpu(&self) -> Duration {
        self.cpu
    }

    fn timed<T>(&mut self, f: impl FnOnce(&mut (dyn Sink + Send)) -> T) -> T {
        let start = thread_cpu();
        let out = f(self.inner);
        self.cpu += thread_cpu().saturating_sub(start);
        out
    }
}

impl Sink for Timed<'_> {
    fn wants(&self) -> ClassSet {
        self.inner.wants()
    }

    fn observe(&mut self, batch: &[Event]) {
        self.timed(|s| s.observe(batch))
    }

    fn finish(&mut self) {
        self.timed(|s| s.finish())
    }

    fn wants_with_runs(&self) -> Option<ClassSet> {
        self.inner.wants_with_runs()
    }

    fn runs_follow(&mut self) {
        self.inner.runs_follow()
    }

    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        self.timed(|s| s.observe_runs(runs, blocks))
    }

    fn wants_thread_switches(&self) -> bool {
        self.inner.wants_thread_switches()
    }

    fn thread_switch(&mut self, tid: u64) {
        self.timed(|s| s.thread_switch(tid))
    }

    fn wants_stacks(&self) -> bool {
        self.inner.wants_stacks()
    }

    fn stack(&mut self, calls: &[coprof_core::OpenCall]) {
        self.timed(|s| s.stack(calls))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coprof_core::{Class, ExactCounts};

    /// A sink that spends about `spin` of CPU time on every batch.
    struct Busy {
        spin: Duration,
        batches: usize,
    }

    impl Sink for Busy {
        fn wants(&self) -> ClassSet {
            ClassSet::of(Class::Load)
        }
        fn observe(&mut self, _batch: &[Event]) {
            let end = thread_cpu() + self.spin;
            while thread_cpu() < end {
                std::hint::black_box(0);
            }
            self.batches += 1;
        }
    }

    #[test]
    fn adds_up_the_cpu_time_of_the_calls_it_passes_on() {
        let mut busy = Busy {
            spin: Duration::from_millis(20),
            batches: 0,
        };
        let mut timed = Timed::new(&mut busy);
        assert_eq!(timed.wants(), ClassSet::of(Class::Load));
        let batch = [Event::new(0x100, Class::Load)];
        timed.observe(&batch);
        timed.observe(&batch);
        // Time spent outside its calls is not counted.
        let end = thread_cpu() + Duration::from_millis(30);
        while thread_cpu() < end {
            std::hint::black_box(0);
        }
        timed.finish();
        let cpu = timed.cpu();
        assert!(cpu >= Duration::from_millis(40), "{cpu:?}");
        assert!(cpu < Duration::from_millis(70), "{cpu:?}");
        assert_eq!(busy.batches, 2);
    }

    #[test]
    fn passes_runs_and_events_on_unchanged() {
        use coprof_core::{SliceSource, Source};
        let events: Vec<Event> = (0..1000u64)
            .map(|i| Event::new(0x1000 + (i % 10) * 4, Class::IntAlu))
            .collect();
        let mut plain = ExactCounts::new();
        SliceSource::new(&events)
            .with_runs()
            .run(&mut plain)
            .unwrap();
        let mut inner = ExactCounts::new();
        let mut timed = Timed::new(&mut inner);
        SliceSource::new(&events)
            .with_runs()
            .run(&mut timed)
            .unwrap();
        assert_eq!(format!("{inner:?}"), format!("{plain:?}"));
        assert!(process_cpu() >= thread_cpu());
    }
}

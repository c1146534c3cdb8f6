//! The three interval timers of `setitimer` and `getitimer`
//! (kernel/time/itimer.c): ITIMER_REAL counts wall-clock time and sends
//! SIGALRM, ITIMER_VIRTUAL and ITIMER_PROF count the CPU time of the
//! simulator's thread (the simulated program's user time, as near as the
//! simulator can tell) and send SIGVTALRM and SIGPROF. glibc's `alarm` is
//! ITIMER_REAL. The simulator asks for expired timers between blocks, about
//! every [`CHECK_EVERY`] instructions while one is armed, so a signal
//! arrives within a fraction of a millisecond of its time.

use crate::posix_timer::PosixTimers;
use crate::signal::SigInfo;
use std::time::{Duration, Instant};

/// Instructions between two looks at the armed timers.
pub const CHECK_EVERY: u64 = 1 << 16;

/// Which timer, as `setitimer` numbers them.
const REAL: usize = 0;
/// The signal each timer sends: SIGALRM, SIGVTALRM, SIGPROF.
const SIGNALS: [i32; 3] = [14, 26, 27];

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Timer {
    /// When it expires, on its clock; `None` when disarmed.
    at: Option<Duration>,
    /// The period it is re-armed with after expiring (zero: once).
    interval: Duration,
}

/// The process's interval timers, and its POSIX timers beside them.
#[derive(Debug)]
pub struct Itimers {
    timers: [Timer; 3],
    started: Instant,
    /// `timer_create`'s timers, looked at with these.
    pub posix: PosixTimers,
}

impl Default for Itimers {
    fn default() -> Itimers {
        Itimers {
            timers: [Timer::default(); 3],
            started: Instant::now(),
            posix: PosixTimers::default(),
        }
    }
}

/// The host's clock `id` now.
pub(crate) fn host_clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills ts.
    unsafe { libc::clock_gettime(id, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The CPU time of the simulator's thread: the simulated program's CPU
/// time, as near as the simulator can tell.
pub(crate) fn cpu_time() -> Duration {
    host_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The sooner of two optional times (`None`: never).
pub(crate) fn earlier(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A timer's state as `struct itimerval` gives it: time left until it
/// expires (zero when disarmed) and its interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// Time to the next expiry.
    pub value: Duration,
    /// The period after it.
    pub interval: Duration,
}

impl Itimers {
    /// The time on timer `which`'s clock.
    fn now(&self, which: usize) -> Duration {
        if which == REAL {
            return self.started.elapsed();
        }
        cpu_time()
    }

    /// Timer `which` (0, 1 or 2) now. An armed timer whose time has come
    /// but that has not been looked at reports a microsecond left, as
    /// Linux does, never zero (which would mean disarmed).
    pub fn get(&self, which: usize) -> Setting {
        let t = self.timers[which];
        let value = match t.at {
            Some(at) => at
                .saturating_sub(self.now(which))
                .max(Duration::from_micros(1)),
            None => Duration::ZERO,
        };
        Setting {
            value,
            interval: t.interval,
        }
    }

    /// Arms timer `which` (a zero value disarms it); returns what it was.
    pub fn set(&mut self, which: usize, new: Setting) -> Setting {
        let old = self.get(which);
        self.timers[which] = Timer {
            at: (!new.value.is_zero()).then(|| self.now(which) + new.value),
            interval: new.interval,
        };
        old
    }

    /// Whether any timer is armed, interval or POSIX.
    pub fn armed(&self) -> bool {
        self.timers.iter().any(|t| t.at.is_some()) || self.posix.armed()
    }

    /// The signals of the timers whose time has come, with the thread
    /// each goes to (`None`: the process): the interval timers' and the
    /// POSIX timers' ([`PosixTimers::expire`]).
    pub fn expire(&mut self) -> Vec<(SigInfo, Option<i64>)> {
        let mut due: Vec<(SigInfo, Option<i64>)> = self
            .expire_interval()
            .into_iter()
            .map(|sig| (SigInfo::timer(sig), None))
            .collect();
        due.extend(self.posix.expire());
        due
    }

    /// The signals of the interval timers whose time has come, each timer
    /// re-armed by its interval (periods missed meanwhile are not made
    /// up: a standard signal does not queue) or disarmed.
    fn expire_interval(&mut self) -> Vec<i32> {
        let mut due = Vec::new();
        for (which, &signal) in SIGNALS.iter().enumerate() {
            let Some(at) = self.timers[which].at else {
                continue;
            };
            let now = self.now(which);
            if now < at {
                continue;
            }
            due.push(signal);
            let interval = self.timers[which].interval;
            self.timers[which].at = (!interval.is_zero()).then(|| {
                let missed = (now - at).as_nanos() / interval.as_nanos();
                at + interval * (missed as u32 + 1)
            });
        }
        due
    }

    /// Wall-clock time until ITIMER_REAL or a wall-clock POSIX timer
    /// expires, if one is armed: what a wait that nothing else can end
    /// sleeps for.
    pub fn until_real(&self) -> Option<Duration> {
        let real = self.timers[REAL]
            .at
            .map(|at| at.saturating_sub(self.now(REAL)));
        earlier(real, self.posix.until_wall())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_shot_timer_fires_once_and_disarms() {
        let mut t = Itimers::default();
        assert!(!t.armed());
        let ms = Duration::from_millis;
        let old = t.set(
            0,
            Setting {
                value: ms(5),
                interval: Duration::ZERO,
            },
        );
        assert_eq!(old.value, Duration::ZERO);
        assert!(t.armed());
        let left = t.get(0).value;
        assert!(left > ms(0) && left <= ms(5), "{left:?}");
        assert!(t.expire().is_empty());
        std::thread::sleep(t.until_real().unwrap());
        assert_eq!(t.expire(), vec![(SigInfo::timer(14), None)]);
        assert!(!t.armed());
        assert_eq!(t.get(0).value, Duration::ZERO);
    }

    #[test]
    fn a_periodic_timer_rearms_without_making_up_missed_periods() {
        let mut t = Itimers::default();
        let ms = Duration::from_millis;
        t.set(
            0,
            Setting {
                value: ms(1),
                interval: ms(2),
            },
        );
        std::thread::sleep(ms(10));
        assert_eq!(
            t.expire(),
            vec![(SigInfo::timer(14), None)],
            "one signal for the missed periods"
        );
        assert!(t.armed());
        let left = t.get(0).value;
        assert!(left <= ms(2), "{left:?}");
        assert_eq!(t.get(0).interval, ms(2));
        let old = t.set(
            0,
            Setting {
                value: Duration::ZERO,
                interval: Duration::ZERO,
            },
        );
        assert_eq!(old.interval, ms(2));
        assert!(!t.armed());
    }
}

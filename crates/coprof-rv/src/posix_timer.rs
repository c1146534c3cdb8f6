//! POSIX per-process timers: `timer_create`, `timer_settime`,
//! `timer_gettime`, `timer_getoverrun` and `timer_delete`
//! (kernel/time/posix-timers.c). A timer counts wall-clock time
//! (CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_TAI) or the
//! simulated program's CPU time (CLOCK_PROCESS_CPUTIME_ID and
//! CLOCK_THREAD_CPUTIME_ID: the simulator thread's, as for ITIMER_VIRTUAL),
//! and when it expires sends a signal to the process (SIGEV_SIGNAL) or to
//! one of its threads (SIGEV_THREAD_ID, which glibc's SIGEV_THREAD uses
//! with a helper thread), or nothing (SIGEV_NONE). The simulator looks at
//! them with the interval timers ([`crate::itimer`]).

use crate::itimer::{cpu_time, host_clock};
use crate::signal::SigInfo;
use std::time::{Duration, Instant};

/// `si_code` of a POSIX timer's signal.
pub const SI_TIMER: i32 = -2;
/// Timers a process may hold at once here.
const MAX_TIMERS: usize = 1024;

/// What a timer counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Wall-clock time.
    Wall {
        /// CLOCK_REALTIME, whose absolute times are dates; the others'
        /// are times since boot.
        realtime: bool,
    },
    /// The program's CPU time.
    Cpu,
}

impl Clock {
    /// The clock of `clockid`, if a timer can count it. Negative ids are
    /// CPU clocks of a process or thread (`MAKE_PROCESS_CPUCLOCK`, which is
    /// how the C library passes CLOCK_PROCESS_CPUTIME_ID and
    /// CLOCK_THREAD_CPUTIME_ID: pid 0, the caller): accepted for the
    /// caller, or for a pid or tid that `is_ours` says is this process's.
    pub fn of(clockid: i64, is_ours: impl Fn(i64) -> bool) -> Option<Clock> {
        match clockid {
            0 => Some(Clock::Wall { realtime: true }),
            1 | 7 | 11 => Some(Clock::Wall { realtime: false }),
            2 | 3 => Some(Clock::Cpu),
            id if id < 0 => {
                // CPUCLOCK_PROF, _VIRT or _SCHED; 3 is a descriptor clock.
                let pid = !(id >> 3);
                (id & 3 != 3 && (pid == 0 || is_ours(pid))).then_some(Clock::Cpu)
            }
            _ => None,
        }
    }
}

/// Whom an expiry tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notify {
    /// The signal, 0 for none (SIGEV_NONE).
    pub signo: i32,
    /// `sigev_value`, passed in the siginfo.
    pub value: u64,
    /// The thread it goes to (SIGEV_THREAD_ID), else the process.
    pub tid: Option<i64>,
}

#[derive(Clone, Copy, Debug)]
struct Timer {
    clock: Clock,
    notify: Notify,
    /// When it expires, on [`PosixTimers::now`]'s scale for its clock.
    at: Option<Duration>,
    interval: Duration,
    /// Periods missed before the last signal was sent.
    overrun: u32,
}

/// A timer's setting as `struct itimerspec` holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spec {
    /// Time to the next expiry (zero: disarmed).
    pub value: Duration,
    /// The period after it.
    pub interval: Duration,
}

/// The process's POSIX timers, by id.
#[derive(Debug)]
pub struct PosixTimers {
    timers: Vec<Option<Timer>>,
    started: Instant,
}

impl Default for PosixTimers {
    fn default() -> PosixTimers {
        PosixTimers {
            timers: Vec::new(),
            started: Instant::now(),
        }
    }
}

impl PosixTimers {
    fn now(&self, clock: Clock) -> Duration {
        match clock {
            Clock::Wall { .. } => self.started.elapsed(),
            Clock::Cpu => cpu_time(),
        }
    }

    fn timer(&mut self, id: i64) -> Option<&mut Timer> {
        self.timers.get_mut(usize::try_from(id).ok()?)?.as_mut()
    }

    /// A new disarmed timer; its id, or EAGAIN (as a negative errno) when
    /// the process holds too many. A `notify` of `None` is Linux's
    /// default: SIGALRM with the timer's id as its value.
    pub fn create(&mut self, clock: Clock, notify: Option<Notify>) -> Result<i64, i64> {
        let id = match self.timers.iter().position(Option::is_none) {
            Some(free) => free,
            None if self.timers.len() < MAX_TIMERS => {
                self.timers.push(None);
                self.timers.len() - 1
            }
            None => return Err(-(libc::EAGAIN as i64)),
        };
        self.timers[id] = Some(Timer {
            clock,
            notify: notify.unwrap_or(Notify {
                signo: 14,
                value: id as u64,
                tid: None,
            }),
            at: None,
            interval: Duration::ZERO,
            overrun: 0,
        });
        Ok(id as i64)
    }

    /// Timer `id`'s setting now (EINVAL for no such timer). An expired
    /// timer not yet looked at reports a nanosecond left, never zero.
    pub fn get(&mut self, id: i64) -> Result<Spec, i64> {
        let t = *self.timer(id).ok_or(-(libc::EINVAL as i64))?;
        let value = match t.at {
            Some(at) => at
                .saturating_sub(self.now(t.clock))
                .max(Duration::from_nanos(1)),
            None => Duration::ZERO,
        };
        Ok(Spec {
            value,
            interval: t.interval,
        })
    }

    /// Arms timer `id` (a zero value disarms it); with `absolute`
    /// (TIMER_ABSTIME) the value is a time on its clock. Returns the
    /// setting before.
    pub fn set(&mut self, id: i64, new: Spec, absolute: bool) -> Result<Spec, i64> {
        let old = self.get(id)?;
        let clock = self
            .timer(id)
            .map(|t| t.clock)
            .ok_or(-(libc::EINVAL as i64))?;
        let now = self.now(clock);
        let at = if new.value.is_zero() {
            None
        } else if absolute {
            // How far the date or uptime is from now, on this clock.
            let left = new.value.saturating_sub(clock_now(clock));
            Some(now + left)
        } else {
            Some(now + new.value)
        };
        if let Some(t) = self.timer(id) {
            t.at = at;
            t.interval = new.interval;
            t.overrun = 0;
        }
        Ok(old)
    }

    /// The program took `info`: if it is a timer's signal, the timer's
    /// overrun becomes the signal's (`timer_getoverrun` answers the
    /// overrun of the last signal delivered or accepted).
    pub fn delivered(&mut self, info: &SigInfo) {
        if info.code == SI_TIMER {
            if let Some(t) = self.timer(info.word as u32 as i64) {
                t.overrun = (info.word >> 32) as u32;
            }
        }
    }

    /// Periods timer `id` missed before its last signal.
    pub fn overrun(&mut self, id: i64) -> Result<i64, i64> {
        Ok(self.timer(id).ok_or(-(libc::EINVAL as i64))?.overrun as i64)
    }

    /// Deletes timer `id`.
    pub fn delete(&mut self, id: i64) -> Result<(), i64> {
        let slot = usize::try_from(id)
            .ok()
            .and_then(|i| self.timers.get_mut(i))
            .filter(|t| t.is_some())
            .ok_or(-(libc::EINVAL as i64))?;
        *slot = None;
        Ok(())
    }

    /// Whether any timer is armed.
    pub fn armed(&self) -> bool {
        self.timers.iter().flatten().any(|t| t.at.is_some())
    }

    /// Wall-clock time until the first armed wall-clock timer expires.
    pub fn until_wall(&self) -> Option<Duration> {
        let now = self.started.elapsed();
        self.timers
            .iter()
            .flatten()
            .filter(|t| matches!(t.clock, Clock::Wall { .. }))
            .filter_map(|t| t.at)
            .min()
            .map(|at| at.saturating_sub(now))
    }

    /// The signals of the timers whose time has come, with the thread
    /// each goes to (`None`: the process); each timer re-armed by its
    /// interval, the periods missed meanwhile counted as its overrun, or
    /// disarmed.
    pub fn expire(&mut self) -> Vec<(SigInfo, Option<i64>)> {
        let mut due = Vec::new();
        let wall = self.started.elapsed();
        let mut cpu = None;
        for (id, slot) in self.timers.iter_mut().enumerate() {
            let Some(t) = slot else { continue };
            let Some(at) = t.at else { continue };
            let now = match t.clock {
                Clock::Wall { .. } => wall,
                Clock::Cpu => *cpu.get_or_insert_with(cpu_time),
            };
            if now < at {
                continue;
            }
            let missed = if t.interval.is_zero() {
                t.at = None;
                0
            } else {
                let missed = (now - at).as_nanos() / t.interval.as_nanos();
                t.at = Some(at + t.interval * (missed as u32 + 1));
                missed.min(i32::MAX as u128) as u32
            };
            t.overrun = missed;
            if t.notify.signo != 0 {
                let info = SigInfo {
                    signo: t.notify.signo,
                    code: SI_TIMER,
                    // si_tid (the timer's id) and si_overrun.
                    word: id as u64 | (missed as u64) << 32,
                    value: t.notify.value,
                };
                due.push((info, t.notify.tid));
            }
        }
        due
    }
}

/// `clock`'s own reading: the date for CLOCK_REALTIME, the time since
/// boot for the other wall clocks, the CPU time for CPU clocks; what an
/// absolute time (TIMER_ABSTIME) is measured on.
fn clock_now(clock: Clock) -> Duration {
    match clock {
        Clock::Wall { realtime: true } => host_clock(libc::CLOCK_REALTIME),
        Clock::Wall { realtime: false } => host_clock(libc::CLOCK_MONOTONIC),
        Clock::Cpu => cpu_time(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_librarys_cpu_clock_ids_are_cpu_clocks() {
        let none = |_| false;
        // MAKE_PROCESS_CPUCLOCK(0, CPUCLOCK_SCHED) and the thread's.
        assert_eq!(Clock::of(-6, none), Some(Clock::Cpu));
        assert_eq!(Clock::of(-2, none), Some(Clock::Cpu));
        assert_eq!(Clock::of(-5, none), None, "a descriptor clock");
        let other = !1234i64 << 3 | 2;
        assert_eq!(Clock::of(other, none), None, "another process's");
        assert_eq!(Clock::of(other, |p| p == 1234), Some(Clock::Cpu));
        assert_eq!(
            Clock::of(4, none),
            None,
            "CLOCK_MONOTONIC_RAW has no timers"
        );
    }

    #[test]
    fn ids_are_reused_and_bad_ids_are_einval() {
        let mut t = PosixTimers::default();
        let wall = Clock::Wall { realtime: false };
        assert_eq!(t.create(wall, None), Ok(0));
        assert_eq!(t.create(wall, None), Ok(1));
        assert_eq!(t.delete(0), Ok(()));
        assert_eq!(t.delete(0), Err(-(libc::EINVAL as i64)));
        assert_eq!(t.create(Clock::Cpu, None), Ok(0), "the freed id first");
        assert_eq!(t.get(7), Err(-(libc::EINVAL as i64)));
        assert_eq!(t.get(-1), Err(-(libc::EINVAL as i64)));
        assert!(!t.armed());
    }

    #[test]
    fn a_periodic_timer_counts_missed_periods_as_overrun() {
        let mut t = PosixTimers::default();
        let notify = Notify {
            signo: 10,
            value: 42,
            tid: Some(7),
        };
        let id = t
            .create(Clock::Wall { realtime: false }, Some(notify))
            .unwrap();
        let ms = Duration::from_millis;
        let old = t
            .set(
                id,
                Spec {
                    value: ms(1),
                    interval: ms(2),
                },
                false,
            )
            .unwrap();
        assert_eq!(old, Spec::default());
        assert!(t.armed() && t.until_wall().unwrap() <= ms(1));
        std::thread::sleep(ms(8));
        let due = t.expire();
        assert_eq!(due.len(), 1, "one signal for the periods missed");
        let (info, tid) = due[0];
        assert_eq!(
            (info.signo, info.code, info.value, tid),
            (10, SI_TIMER, 42, Some(7))
        );
        assert_eq!(info.word as u32 as i64, id, "si_tid is the timer's id");
        let overrun = (info.word >> 32) as i64;
        assert!(overrun >= 2, "{overrun} periods missed");
        assert_eq!(t.overrun(id), Ok(overrun));
        assert_eq!(t.get(id).unwrap().interval, ms(2));
    }

    #[test]
    fn an_absolute_time_in_the_past_expires_at_once_and_none_sends_nothing() {
        let mut t = PosixTimers::default();
        let quiet = Notify {
            signo: 0,
            value: 0,
            tid: None,
        };
        let id = t
            .create(Clock::Wall { realtime: true }, Some(quiet))
            .unwrap();
        let past = Spec {
            value: Duration::from_secs(1),
            interval: Duration::ZERO,
        };
        t.set(id, past, true).unwrap();
        assert!(t.expire().is_empty(), "SIGEV_NONE sends nothing");
        assert!(!t.armed(), "and the one-shot timer is disarmed");
        let default = t.create(Clock::Wall { realtime: true }, None).unwrap();
        t.set(default, past, true).unwrap();
        let due = t.expire();
        assert_eq!(due.len(), 1);
        assert_eq!((due[0].0.signo, due[0].0.value), (14, default as u64));
    }
}

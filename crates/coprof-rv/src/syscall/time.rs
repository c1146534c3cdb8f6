//! Clocks and timers: `clock_gettime`, `gettimeofday`, sleeps (off the
//! hart beside other threads, cut short by signals), POSIX timers and the
//! interval timers.

use super::{
    instant_at, read_timespec, ret, write_timespec, Blocked, Kernel, Outcome, EFAULT, EINVAL,
};
use crate::error::SimError;
use crate::itimer::{earlier, Setting};
use crate::mem::{perm, Memory};
use crate::posix_timer::{Clock, Notify, Spec};
use crate::sysno as nr;

/// The calls this module answers.
pub(super) const CALLS: &[u64] = &[
    nr::CLOCK_GETTIME,
    nr::CLOCK_GETRES,
    nr::GETTIMEOFDAY,
    nr::NANOSLEEP,
    nr::CLOCK_NANOSLEEP,
    nr::TIMER_CREATE,
    nr::TIMER_SETTIME,
    nr::TIMER_GETTIME,
    nr::TIMER_GETOVERRUN,
    nr::TIMER_DELETE,
    nr::GETITIMER,
    nr::SETITIMER,
];

impl Kernel {
    /// One of [`CALLS`], number `a[7]`.
    pub(super) fn time_call(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<Outcome, SimError> {
        let num = a[7];
        let r: i64 = match num {
            nr::CLOCK_GETTIME | nr::CLOCK_GETRES => {
                // struct timespec is the same on both sides.
                if a[1] == 0 {
                    // SAFETY: a null result pointer is allowed.
                    ret(unsafe {
                        libc::syscall(num_host(num), a[0] as i32, std::ptr::null_mut::<u8>())
                    })
                } else {
                    let buf = tryf!(mem.slice_mut(a[1], 16));
                    // SAFETY: 16 valid bytes.
                    ret(unsafe { libc::syscall(num_host(num), a[0] as i32, buf.as_mut_ptr()) })
                }
            }
            nr::GETTIMEOFDAY => {
                let tv = if a[0] != 0 {
                    tryf!(mem.slice_mut(a[0], 16)).as_mut_ptr()
                } else {
                    std::ptr::null_mut()
                };
                // SAFETY: null or 16 valid bytes; the time zone is not used.
                ret(unsafe {
                    libc::syscall(libc::SYS_gettimeofday, tv, std::ptr::null_mut::<u8>())
                })
            }
            nr::NANOSLEEP | nr::CLOCK_NANOSLEEP => {
                let (req, rem) = if num == nr::NANOSLEEP {
                    (a[0], a[1])
                } else {
                    (a[2], a[3])
                };
                let (clock, absolute) = if num == nr::NANOSLEEP {
                    (libc::CLOCK_MONOTONIC, false)
                } else {
                    (a[0] as i32, a[1] & libc::TIMER_ABSTIME as u64 != 0)
                };
                // Beside other threads, which go on meanwhile.
                if self.beside_threads() {
                    if let Some(outcome) = self.sleep_off_hart(mem, clock, absolute, req, rem) {
                        return Ok(outcome);
                    }
                }
                // A sleep on the real-time or monotonic clock that
                // ITIMER_REAL's signal or one from outside would end early,
                // as it would under Linux: relative, or to an absolute time
                // (TIMER_ABSTIME, as Python's `time.sleep` asks), whose
                // `rem` Linux leaves alone.
                let on_wall_clock = num == nr::NANOSLEEP || (a[0] <= 1 && a[1] & !1 == 0);
                if on_wall_clock && (self.timers.until_real().is_some() || self.outside.is_some()) {
                    let end = match read_timespec(mem, req) {
                        Ok(t) if absolute => instant_at(clock, t),
                        Ok(t) => std::time::Instant::now() + t,
                        Err(e) => return Ok(Outcome::Ret(e)),
                    };
                    let rem = if absolute { 0 } else { rem };
                    return Ok(Outcome::Ret(self.sleep_until_signal(mem, end, rem)));
                }
                let reqp = tryf!(mem.slice(req, 16, perm::R)).as_ptr();
                let remp = if rem != 0 {
                    tryf!(mem.slice_mut(rem, 16)).as_mut_ptr()
                } else {
                    std::ptr::null_mut()
                };
                // SAFETY: valid timespec pointers.
                if num == nr::NANOSLEEP {
                    ret(unsafe { libc::syscall(libc::SYS_nanosleep, reqp, remp) })
                } else {
                    loop {
                        let r = unsafe {
                            libc::clock_nanosleep(
                                a[0] as i32,
                                a[1] as i32,
                                reqp as *const _,
                                remp as *mut _,
                            )
                        };
                        // A signal from outside ends the host's sleep: only
                        // one the program takes ends the program's.
                        if r == libc::EINTR && self.outside.is_some() {
                            self.fire_timers();
                            if !self.signals.wakes() {
                                continue;
                            }
                        }
                        break -(r as i64);
                    }
                }
            }
            nr::TIMER_CREATE
            | nr::TIMER_SETTIME
            | nr::TIMER_GETTIME
            | nr::TIMER_GETOVERRUN
            | nr::TIMER_DELETE => self.posix_timer(mem, num, a),
            nr::GETITIMER | nr::SETITIMER => {
                // kernel/time/itimer.c: the new value read and checked,
                // then the timer, then the old value written back.
                // struct itimerval: the interval, then the value, each a
                // timeval of two longs.
                let which = a[0] as i64;
                let new = if num == nr::SETITIMER && a[1] != 0 {
                    let raw = tryf!(mem.slice(a[1], 32, perm::R));
                    let w = |i: usize| {
                        i64::from_le_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap_or_default())
                    };
                    let valid = |sec: i64, usec: i64| sec >= 0 && (0..1_000_000).contains(&usec);
                    if !valid(w(0), w(1)) || !valid(w(2), w(3)) {
                        return Ok(Outcome::Ret(EINVAL));
                    }
                    let d = |sec: i64, usec: i64| {
                        std::time::Duration::new(sec as u64, usec as u32 * 1000)
                    };
                    Some(Setting {
                        interval: d(w(0), w(1)),
                        value: d(w(2), w(3)),
                    })
                } else {
                    None
                };
                if !(0..3).contains(&which) {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let which = which as usize;
                let old = if num == nr::GETITIMER {
                    self.timers.get(which)
                } else {
                    // A null new value disarms, as Linux still allows.
                    let zero = std::time::Duration::ZERO;
                    let new = new.unwrap_or(Setting {
                        value: zero,
                        interval: zero,
                    });
                    self.timers.set(which, new)
                };
                let out = if num == nr::GETITIMER { a[1] } else { a[2] };
                if out != 0 {
                    let buf = tryf!(mem.slice_mut(out, 32));
                    for (i, d) in [old.interval, old.value].iter().enumerate() {
                        buf[i * 16..i * 16 + 8].copy_from_slice(&d.as_secs().to_le_bytes());
                        buf[i * 16 + 8..i * 16 + 16]
                            .copy_from_slice(&(d.subsec_micros() as u64).to_le_bytes());
                    }
                }
                0
            }
            _ => unreachable!("time_call of a call not in CALLS"),
        };
        Ok(Outcome::Ret(r))
    }

    /// `nanosleep` or `clock_nanosleep` on `clock` beside other threads:
    /// off the hart until the sleep's end, which a signal that runs a
    /// handler or kills cuts short with EINTR (and, for a relative sleep,
    /// the time left in `rem`), as Linux's hrtimer_nanosleep. `None` for
    /// a clock whose time the host's monotonic clock cannot follow (a
    /// CPU-time clock): the caller sleeps on the host.
    fn sleep_off_hart(
        &mut self,
        mem: &mut Memory,
        clock: libc::clockid_t,
        absolute: bool,
        req: u64,
        rem: u64,
    ) -> Option<Outcome> {
        let follows = matches!(
            clock,
            libc::CLOCK_REALTIME | libc::CLOCK_MONOTONIC | libc::CLOCK_BOOTTIME | libc::CLOCK_TAI
        );
        if !follows {
            return None;
        }
        let until = match self.resumed.until {
            Some(u) => u,
            None => match read_timespec(mem, req) {
                Ok(t) if absolute => instant_at(clock, t),
                Ok(t) => std::time::Instant::now() + t,
                Err(e) => return Some(Outcome::Ret(e)),
            },
        };
        if self.signals.wakes() {
            if !absolute && rem != 0 {
                let left = until.saturating_duration_since(std::time::Instant::now());
                if let Err(e) = write_timespec(mem, rem, left) {
                    return Some(Outcome::Ret(e));
                }
            }
            return Some(Outcome::Ret(-(libc::EINTR as i64)));
        }
        if std::time::Instant::now() >= until {
            return Some(Outcome::Ret(0));
        }
        Some(Outcome::Block(Blocked {
            mask: self.signals.mask,
            until: Some(until),
            ..Blocked::default()
        }))
    }

    /// Sleeps until `end` or until ITIMER_REAL's signal or one from
    /// outside comes that is delivered (not blocked, not ignored): then
    /// EINTR, with the time left written to `rem` if given.
    fn sleep_until_signal(&mut self, mem: &mut Memory, end: std::time::Instant, rem: u64) -> i64 {
        loop {
            let left = end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return 0;
            }
            self.nap(earlier(Some(left), self.timers.until_real()));
            if self.signals.wakes() {
                if rem != 0 {
                    let left = end.saturating_duration_since(std::time::Instant::now());
                    if let Err(e) = write_timespec(mem, rem, left) {
                        return e;
                    }
                }
                return -(libc::EINTR as i64);
            }
        }
    }

    /// `timer_create`, `timer_settime`, `timer_gettime`,
    /// `timer_getoverrun` and `timer_delete` ([`crate::posix_timer`]), with
    /// Linux's checks: EINVAL for a clock a timer cannot count, a
    /// `sigevent` that names no signal or a thread not of this process
    /// (or SIGEV_THREAD, which the C library turns into SIGEV_THREAD_ID),
    /// a bad `itimerspec` or an unknown timer; EFAULT for memory that
    /// cannot be read or written.
    fn posix_timer(&mut self, mem: &mut Memory, num: u64, a: [u64; 8]) -> i64 {
        let result = match num {
            nr::TIMER_CREATE => (|| {
                let clock = Clock::of(a[0] as i32 as i64, |id| {
                    self.is_me(id as u64) || self.tids.contains(&id)
                })
                .ok_or(EINVAL)?;
                // struct sigevent: sigev_value, sigev_signo, sigev_notify,
                // then the thread id of SIGEV_THREAD_ID.
                let notify = match a[1] {
                    0 => None,
                    at => {
                        let b = mem.slice(at, 20, perm::R).map_err(|_| EFAULT)?;
                        let int = |o: usize| {
                            i32::from_le_bytes(b[o..o + 4].try_into().unwrap_or_default())
                        };
                        let value = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
                        let (signo, how, tid) = (int(8), int(12), int(16));
                        let signal_ok = (1..=64).contains(&signo);
                        Some(match how {
                            SIGEV_NONE => Notify {
                                signo: 0,
                                value,
                                tid: None,
                            },
                            SIGEV_SIGNAL if signal_ok => Notify {
                                signo,
                                value,
                                tid: None,
                            },
                            SIGEV_THREAD_ID if signal_ok && self.tids.contains(&(tid as i64)) => {
                                Notify {
                                    signo,
                                    value,
                                    tid: Some(tid as i64),
                                }
                            }
                            _ => return Err(EINVAL),
                        })
                    }
                };
                mem.slice(a[2], 4, perm::W).map_err(|_| EFAULT)?;
                let id = self.timers.posix.create(clock, notify)?;
                mem.store::<4>(a[2], id as u64).map_err(|_| EFAULT)?;
                Ok(0)
            })(),
            nr::TIMER_SETTIME => (|| {
                let new = read_itimerspec(mem, a[2])?;
                let old =
                    self.timers
                        .posix
                        .set(a[0] as i32 as i64, new, a[1] & TIMER_ABSTIME != 0)?;
                if a[3] != 0 {
                    write_itimerspec(mem, a[3], old)?;
                }
                Ok(0)
            })(),
            nr::TIMER_GETTIME => (|| {
                let now = self.timers.posix.get(a[0] as i32 as i64)?;
                write_itimerspec(mem, a[1], now)?;
                Ok(0)
            })(),
            nr::TIMER_GETOVERRUN => self.timers.posix.overrun(a[0] as i32 as i64),
            _ => self.timers.posix.delete(a[0] as i32 as i64).map(|()| 0),
        };
        result.unwrap_or_else(|e| e)
    }
}

/// `struct itimerspec` at `at` (an interval, then a value, each a
/// timespec): EFAULT when it cannot be read, EINVAL when a time is
/// negative or its nanoseconds out of range.
fn read_itimerspec(mem: &Memory, at: u64) -> Result<Spec, i64> {
    Ok(Spec {
        interval: read_timespec(mem, at)?,
        value: read_timespec(mem, at + 16)?,
    })
}

/// Writes `spec` as a `struct itimerspec` at `at`.
fn write_itimerspec(mem: &mut Memory, at: u64, spec: Spec) -> Result<(), i64> {
    mem.slice_mut(at, 32).map_err(|_| EFAULT)?;
    write_timespec(mem, at, spec.interval)?;
    write_timespec(mem, at + 16, spec.value)
}

/// `sigev_notify` values (include/uapi/asm-generic/siginfo.h).
const SIGEV_SIGNAL: i32 = 0;
const SIGEV_NONE: i32 = 1;
const SIGEV_THREAD_ID: i32 = 4;
/// `timer_settime`'s flag for an absolute time.
const TIMER_ABSTIME: u64 = 1;

/// The host's number for a call passed through unchanged.
fn num_host(num: u64) -> libc::c_long {
    match num {
        nr::CLOCK_GETTIME => libc::SYS_clock_gettime,
        _ => libc::SYS_clock_getres,
    }
}

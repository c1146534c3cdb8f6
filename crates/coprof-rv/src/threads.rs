//! The threads of the simulated process: one hart, shared by turns.
//!
//! A program's threads (`clone` with CLONE_VM | CLONE_THREAD, as
//! `pthread_create` makes them) share its memory, descriptors and signal
//! handlers; each has its own registers, thread id, signal mask, `rseq`
//! area and the word its exit clears (CLONE_CHILD_CLEARTID, which
//! `pthread_join` waits on). They run one at a time on the simulator's one
//! hart, in turns of [`QUANTUM`] instructions, round-robin, and a thread
//! that waits on a futex (a mutex, a condition variable, a join) leaves the
//! hart until a wake on its word. A wait with a timeout (a timed futex
//! wait, `nanosleep`, `poll`, `select`, `epoll_wait`, `sigtimedwait`)
//! leaves it too, until its end on the host's clock, which is looked at
//! when a turn ends and whenever no thread is ready.
//!
//! The interleaving is deterministic when no thread waits with a timeout
//! beside others: the same program and input give the same instructions
//! in the same order, which two profiles of a multithreaded program need
//! to compare. Where one does, when its wait ends depends on the host's
//! clock, as it does under Linux; a thread that sleeps never holds up the
//! others (the Go runtime's monitor thread sleeps 20 µs to 10 ms at a
//! time, for the life of every Go program).

use crate::cpu::Cpu;
use crate::signal::Pending;
use crate::syscall::Blocked;
use std::collections::VecDeque;
use std::time::Instant;

/// Instructions a thread runs before the next ready thread gets the hart
/// (checked between blocks, so a turn ends up to a block later).
pub const QUANTUM: u64 = 100_000;

/// Why a thread is off the hart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Ready to run.
    Ready,
    /// Asleep on the futex word at `addr` until a wake whose bitset meets
    /// `bitset`, or until `until` on the host's clock (ETIMEDOUT).
    Futex {
        addr: u64,
        /// The value the word held: in shared memory, a change of it by
        /// another process ends the wait.
        val: u32,
        bitset: u32,
        until: Option<Instant>,
    },
    /// In a system call (its `ecall` at the thread's PC) that waits for a
    /// descriptor, a signal or the end of its timeout, as `blocked` says.
    Call(Blocked),
    /// Out of such a wait: ready to make the call again.
    Redo(Redo),
}

/// A system call made again by a thread back on the hart after it waited
/// off it ([`Wait::Call`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Redo {
    /// Bytes a `write` wrote before it waited: it goes on with the rest.
    pub done: u64,
    /// The end of the call's timeout, if it has one: made again, the call
    /// waits until then rather than for its whole timeout once more.
    pub until: Option<Instant>,
    /// Whether the call waited on a System V semaphore or queue
    /// ([`Blocked::looks_again`]).
    pub looked: bool,
}

impl Wait {
    /// Whether the thread can take the hart.
    fn runs(&self) -> bool {
        matches!(self, Wait::Ready | Wait::Redo(_))
    }
}

/// A thread off the hart, with everything that is its own.
pub(crate) struct Parked {
    pub cpu: Cpu,
    pub tid: i64,
    pub clear_tid: u64,
    pub mask: u64,
    /// Signals sent to this thread and not yet delivered.
    pub pending: Pending,
    pub rseq: u64,
    /// Its alternate signal stack (`sigaltstack` is per thread).
    pub altstack: [u64; 3],
    pub wait: Wait,
}

/// The threads other than the running one, in the order they get turns.
#[derive(Default)]
pub(crate) struct Threads {
    pub parked: VecDeque<Parked>,
    /// The id the next thread gets.
    pub next_tid: i64,
    /// The instruction count at which the running thread's turn ends.
    pub turn_ends: u64,
    /// Instructions in a turn ([`QUANTUM`] unless configured).
    pub quantum: u64,
}

impl Threads {
    /// Marks up to `count` threads asleep on `addr` with a bitset meeting
    /// `bitset` ready, oldest sleeper first; returns how many.
    pub fn wake(&mut self, addr: u64, bitset: u32, count: u32) -> u32 {
        let mut woken = 0;
        for p in self.parked.iter_mut() {
            if woken == count {
                break;
            }
            if let Wait::Futex {
                addr: a, bitset: b, ..
            } = p.wait
            {
                if a == addr && b & bitset != 0 {
                    p.wait = Wait::Ready;
                    woken += 1;
                }
            }
        }
        woken
    }

    /// Makes the threads that wait on a System V semaphore or queue
    /// ([`Blocked::looks_again`])
    /// ready to make their call again: another thread's System V call may
    /// have let them through.
    pub fn wake_sysv_waits(&mut self) {
        for p in self.parked.iter_mut() {
            if let Wait::Call(b) = &p.wait {
                if b.looks_again {
                    p.wait = Wait::Redo(b.redo());
                }
            }
        }
    }

    /// Takes the next thread to run: the first ready one (or ready to
    /// make its call again). `None` when every thread waits.
    pub fn take_next(&mut self) -> Option<Parked> {
        let i = self.parked.iter().position(|p| p.wait.runs())?;
        self.parked.remove(i)
    }

    /// Makes the threads whose wait's end has come by `now` ready: a
    /// futex wait with ETIMEDOUT in a0, a call to be made again (it finds
    /// no time left and returns as its timeout says).
    pub fn time_out(&mut self, now: Instant) {
        for p in self.parked.iter_mut() {
            match &p.wait {
                Wait::Futex { until: Some(u), .. } if *u <= now => {
                    p.wait = Wait::Ready;
                    p.cpu.x[10] = -(libc::ETIMEDOUT as i64) as u64;
                }
                Wait::Call(b) if b.until.is_some_and(|u| u <= now) => {
                    p.wait = Wait::Redo(b.redo());
                }
                _ => {}
            }
        }
    }

    /// The earliest end of a timed wait among the threads off the hart.
    pub fn next_timeout(&self) -> Option<Instant> {
        self.parked
            .iter()
            .filter_map(|p| match &p.wait {
                Wait::Futex { until, .. } => *until,
                Wait::Call(b) => b.until,
                _ => None,
            })
            .min()
    }

    /// Whether another thread is ready to run.
    pub fn any_ready(&self) -> bool {
        self.parked.iter().any(|p| p.wait.runs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parked(tid: i64, wait: Wait) -> Parked {
        Parked {
            cpu: Cpu::new(0),
            tid,
            clear_tid: 0,
            mask: 0,
            pending: Pending::default(),
            rseq: 0,
            altstack: [0; 3],
            wait,
        }
    }

    #[test]
    fn wakes_meet_their_word_and_bitset_oldest_first() {
        let mut t = Threads::default();
        let on = |addr, bitset| Wait::Futex {
            addr,
            val: 0,
            bitset,
            until: None,
        };
        t.parked.push_back(parked(1, on(0x100, 1)));
        t.parked.push_back(parked(2, on(0x100, 2)));
        t.parked.push_back(parked(3, on(0x100, !0)));
        t.parked.push_back(parked(4, on(0x200, !0)));
        assert!(!t.any_ready());
        assert_eq!(t.wake(0x100, 2, 1), 1);
        assert_eq!(t.parked[1].wait, Wait::Ready, "the bitset picks thread 2");
        assert_eq!(t.wake(0x100, !0, 5), 2, "1 and 3; 2 is awake already");
        assert_eq!(t.take_next().map(|p| p.tid), Some(1));
        assert_eq!(t.wake(0x300, !0, 1), 0);
    }

    #[test]
    fn a_system_v_call_wakes_the_waits_that_look_again_with_their_own_timeout() {
        let mut t = Threads::default();
        let look = Instant::now() + std::time::Duration::from_millis(1);
        let end = look + std::time::Duration::from_secs(5);
        let sysv = |timeout_end| {
            Wait::Call(Blocked {
                until: Some(look),
                looks_again: true,
                timeout_end,
                ..Blocked::default()
            })
        };
        t.parked.push_back(parked(1, sysv(Some(end))));
        t.parked.push_back(parked(2, sysv(None)));
        let sleep = Wait::Call(Blocked {
            until: Some(end),
            ..Blocked::default()
        });
        t.parked.push_back(parked(3, sleep.clone()));
        t.wake_sysv_waits();
        let redo = |until| {
            Wait::Redo(Redo {
                done: 0,
                until,
                looked: true,
            })
        };
        assert_eq!(
            t.parked[0].wait,
            redo(Some(end)),
            "made again with its timeout, not its look"
        );
        assert_eq!(t.parked[1].wait, redo(None));
        assert_eq!(t.parked[2].wait, sleep, "a sleep is not a System V wait");
    }

    #[test]
    fn timed_waits_end_at_their_time_and_untimed_ones_never() {
        let mut t = Threads::default();
        let start = Instant::now();
        let later = start + std::time::Duration::from_secs(5);
        t.parked.push_back(parked(
            1,
            Wait::Futex {
                addr: 8,
                val: 0,
                bitset: !0,
                until: None,
            },
        ));
        t.parked.push_back(parked(
            2,
            Wait::Futex {
                addr: 8,
                val: 0,
                bitset: !0,
                until: Some(later),
            },
        ));
        t.parked.push_back(parked(
            3,
            Wait::Call(Blocked {
                done: 7,
                until: Some(start),
                ..Blocked::default()
            }),
        ));
        assert_eq!(t.next_timeout(), Some(start));
        assert!(
            t.take_next().is_none(),
            "nothing ready before a look at the clock"
        );
        t.time_out(start);
        let p = t.take_next().unwrap();
        assert_eq!(p.tid, 3, "the call whose end came");
        assert_eq!(
            p.wait,
            Wait::Redo(Redo {
                done: 7,
                until: Some(start),
                looked: false,
            })
        );
        assert!(t.take_next().is_none(), "the futex wait's end is 5 s away");
        assert_eq!(t.next_timeout(), Some(later));
        t.time_out(later);
        let p = t.take_next().unwrap();
        assert_eq!((p.tid, p.cpu.x[10] as i64), (2, -(libc::ETIMEDOUT as i64)));
        t.time_out(later + std::time::Duration::from_secs(3600));
        assert!(
            t.take_next().is_none(),
            "an untimed wait never ends by itself"
        );
        assert_eq!(t.next_timeout(), None);
    }
}

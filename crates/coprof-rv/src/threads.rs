//! The threads of the simulated process: one hart, shared by turns.
//!
//! A program's threads (`clone` with CLONE_VM | CLONE_THREAD, as
//! `pthread_create` makes them) share its memory, descriptors and signal
//! handlers; each has its own registers, thread id, signal mask, `rseq`
//! area and the word its exit clears (CLONE_CHILD_CLEARTID, which
//! `pthread_join` waits on). They run one at a time on the simulator's one
//! hart, in turns of [`QUANTUM`] instructions, round-robin, and a thread
//! that waits on a futex (a mutex, a condition variable, a join) leaves the
//! hart until a wake on its word. The interleaving is deterministic: the
//! same program and input give the same instructions in the same order,
//! which two profiles of a multithreaded program need to compare.

use crate::cpu::Cpu;
use crate::signal::Pending;
use crate::syscall::Blocked;
use std::collections::VecDeque;

/// Instructions a thread runs before the next ready thread gets the hart
/// (checked between blocks, so a turn ends up to a block later).
pub const QUANTUM: u64 = 100_000;

/// Why a thread is off the hart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Ready to run.
    Ready,
    /// Asleep on the futex word at `addr` until a wake whose bitset meets
    /// `bitset`; `timed` waits run out when nothing else can run.
    Futex { addr: u64, bitset: u32, timed: bool },
    /// In a system call (its `ecall` at the thread's PC) that waits for a
    /// descriptor or a signal, as `blocked` says.
    Call(Blocked),
    /// Out of such a wait: ready to make the call again, a `write` having
    /// written this many bytes already.
    Redo(u64),
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

    /// Takes the next thread to run: the first ready one (or ready to
    /// make its call again); else, when
    /// every thread sleeps, the first whose wait has a timeout, which runs
    /// out (`ETIMEDOUT` in a0). `None` when every thread sleeps untimed.
    pub fn take_next(&mut self) -> Option<Parked> {
        if let Some(i) = self.parked.iter().position(|p| p.wait.runs()) {
            return self.parked.remove(i);
        }
        let i = self
            .parked
            .iter()
            .position(|p| matches!(p.wait, Wait::Futex { timed: true, .. }))?;
        let mut p = self.parked.remove(i)?;
        p.cpu.x[10] = -(libc::ETIMEDOUT as i64) as u64;
        p.wait = Wait::Ready;
        Some(p)
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
            bitset,
            timed: false,
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
    fn when_all_sleep_a_timed_wait_runs_out_and_an_untimed_one_cannot() {
        let mut t = Threads::default();
        t.parked.push_back(parked(
            1,
            Wait::Futex {
                addr: 8,
                bitset: !0,
                timed: false,
            },
        ));
        assert!(t.take_next().is_none(), "a deadlock");
        t.parked.push_back(parked(
            2,
            Wait::Futex {
                addr: 8,
                bitset: !0,
                timed: true,
            },
        ));
        let p = t.take_next().unwrap();
        assert_eq!((p.tid, p.cpu.x[10] as i64), (2, -(libc::ETIMEDOUT as i64)));
    }
}

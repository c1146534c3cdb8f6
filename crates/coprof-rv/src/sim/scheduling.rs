//! The program's threads on the simulator's one hart: a thread started by
//! `clone`, ended by `exit`, and the switch from one to the next when a
//! turn ends or the running one waits (on a futex, in a call, for a
//! descriptor or a timeout), with the host's wait when none can run and
//! the deadlock when nothing could end every thread's wait.

use super::{deadlock, Exit, Simulator, SHARED_FUTEX_LOOK};
use crate::cpu::Cpu;
use crate::error::SimError;
use crate::itimer::earlier;
use crate::signal::Pending;
use crate::syscall::{clone_flags, host_ready, Blocked, CloneArgs};
use crate::threads::{Parked, Wait};

impl Simulator {
    /// Starts a thread as `clone` asked (CLONE_VM | CLONE_THREAD): the
    /// caller's registers, with its own stack, thread pointer and a0 = 0,
    /// after the `ecall` at `at`; it runs when its turn comes. Returns its
    /// id.
    #[inline(never)]
    pub(super) fn start_thread(&mut self, args: &CloneArgs, at: u64) -> i64 {
        let tid = self.threads.next_tid;
        self.threads.next_tid += 1;
        let mut cpu = self.cpu.clone();
        if args.stack != 0 {
            cpu.x[2] = args.stack;
            self.name_thread_stack(args.stack, tid as u64);
        }
        if args.flags & clone_flags::SETTLS != 0 {
            cpu.x[4] = args.tls;
        }
        cpu.x[10] = 0;
        cpu.pc = at + 4;
        cpu.reservation = Cpu::NO_RESERVATION;
        // Failed writes of the ids are the program's own fault, as on
        // Linux (which drops them too).
        if args.flags & clone_flags::PARENT_SETTID != 0 {
            let _ = self.mem.store::<4>(args.parent_tid, tid as u64);
        }
        if args.flags & clone_flags::CHILD_SETTID != 0 {
            let _ = self.mem.store::<4>(args.child_tid, tid as u64);
        }
        let clear_tid = if args.flags & clone_flags::CHILD_CLEARTID != 0 {
            args.child_tid
        } else {
            0
        };
        self.kernel.tids.push(tid);
        if self.threads.parked.is_empty() {
            self.threads.turn_ends = self.cpu.instret + self.threads.quantum;
        }
        self.threads.parked.push_back(Parked {
            cpu,
            tid,
            clear_tid,
            mask: self.kernel.signals.mask,
            pending: Pending::default(),
            rseq: 0,
            // A thread starts without an alternate stack (Linux's
            // copy_process with CLONE_VM).
            altstack: [0; 3],
            wait: Wait::Ready,
        });
        tid
    }

    /// Names the anonymous memory the stack pointer `sp` of the new
    /// thread `tid` starts below `[stack:TID]`, as Linux's
    /// `/proc/PID/maps` did: the pages around `sp - 1` with its
    /// permissions (the C library's guard page below a stack has none),
    /// within the anonymous mapping they lie in. A stack elsewhere (a
    /// static array) keeps its name.
    fn name_thread_stack(&mut self, sp: u64, tid: u64) {
        use crate::mem::{page_down, PAGE};
        use coprof_core::areas::{thread_stack, ANON};
        let top = sp - 1;
        let named_anon = self
            .kernel
            .areas
            .overlapping(top, top)
            .any(|a| a.name == ANON);
        let Some((floor, ceiling)) = self.kernel.anon_map_at(top).filter(|_| named_anon) else {
            return;
        };
        let p = self.mem.perm_at(top);
        let (mut lo, mut hi) = (page_down(top), page_down(top) + PAGE);
        while lo > floor && self.mem.perm_at(lo - PAGE) == p {
            lo -= PAGE;
        }
        while hi < ceiling && self.mem.perm_at(hi) == p {
            hi += PAGE;
        }
        self.kernel.areas.rename(lo, hi, ANON, &thread_stack(tid));
    }

    /// Ends the running thread with `code`: its CLONE_CHILD_CLEARTID word
    /// cleared and woken (what `pthread_join` waits for), and the next
    /// thread on the hart; the last thread's end is the process's.
    #[inline(never)]
    pub(super) fn end_thread(&mut self, code: i32, at: u64) -> Result<Option<Exit>, SimError> {
        let tid = self.kernel.tid;
        if self.kernel.clear_tid != 0 && self.mem.store::<4>(self.kernel.clear_tid, 0).is_ok() {
            self.threads.wake(self.kernel.clear_tid, u32::MAX, 1);
        }
        self.kernel.tids.retain(|&t| t != tid);
        if self.threads.parked.is_empty() {
            return Ok(Some(Exit::Code(code)));
        }
        let next = self
            .next_thread(None, None, None)
            .ok_or_else(|| deadlock(self.cpu.x[17], at))?;
        self.run_thread(next);
        Ok(None)
    }

    /// Takes the running thread off the hart (waiting as `wait` says) and
    /// puts the next one on: the first ready, else one whose timed wait
    /// runs out, else the first whose descriptor the host says is ready. A
    /// ready thread with no other to hand over to keeps the hart; `false`
    /// when the running one waits and so does every other, for something
    /// no thread can do: a deadlock.
    #[inline(never)]
    pub(super) fn switch(&mut self, wait: Wait) -> bool {
        let next = match &wait {
            Wait::Ready => self.threads.take_next(),
            Wait::Call(blocked) => self.next_thread(Some(blocked), blocked.until, None),
            Wait::Futex {
                addr, val, until, ..
            } => {
                let shared = self.mem.is_shared(*addr);
                self.next_thread(None, *until, shared.then_some((*addr, *val)))
            }
            Wait::Redo(_) => self.next_thread(None, None, None),
        };
        let Some(next) = next else {
            // Keeps the hart: ready, or its own wait ended first.
            return wait == Wait::Ready || self.redo.is_some();
        };
        let me = self.parked_me(wait);
        self.threads.parked.push_back(me);
        self.run_thread(next);
        true
    }

    /// Whether another thread can take the hart, after looking whether the
    /// waits of those blocked in a call are over.
    pub(super) fn another_ready(&mut self) -> bool {
        self.wake_blocked(true);
        self.threads.any_ready()
    }

    /// The next thread for the hart when the running one cannot go on:
    /// one ready, or whose wait's end has come; else, if threads wait on
    /// host descriptors or with a timeout, or the interval timer is
    /// armed, the first ready after the host says so (the whole process
    /// waits there, as it would on Linux). `None` when nothing can end
    /// every thread's wait, or when the running thread's own timeout
    /// (`my_until`) comes first. When the running thread is about to
    /// block in a call as `mine` says, its own descriptors count for the
    /// host's wait too, and if its wait is the one that ends, it keeps
    /// the hart to make its call again (`None`, with [`Self::redo`] set).
    /// When it waits on a futex in shared memory (`my_futex`: the word
    /// and the value it held), another process moving the word, or a
    /// signal for it, ends its wait too (`None`).
    fn next_thread(
        &mut self,
        mine: Option<&Blocked>,
        my_until: Option<std::time::Instant>,
        my_futex: Option<(u64, u32)>,
    ) -> Option<Parked> {
        loop {
            self.wake_blocked(true);
            if let Some(next) = self.threads.take_next() {
                return Some(next);
            }
            if my_until.is_some_and(|u| std::time::Instant::now() >= u) {
                self.redo = mine.map(Blocked::redo);
                return None;
            }
            if my_futex.is_some_and(|(a, v)| self.shared_word_moved(a, v))
                || (my_futex.is_some() && self.my_wait_interrupted())
            {
                return None;
            }
            if !self.wait_on_host(mine, my_until, my_futex) {
                return None;
            }
            if let Some(b) = mine {
                if self.call_wait_over(&self.kernel.signals.own, b, true) {
                    self.redo = Some(b.redo());
                    return None;
                }
            }
        }
    }

    /// Whether the futex word at `addr`, which held `val` when a thread
    /// began to wait on it, lies in shared memory and holds something
    /// else now: another process changed it, as it does before it wakes
    /// its waiters (glibc's mutexes, semaphores and condition variables
    /// all do). Its wake reaches only its own process's threads, so the
    /// waiter ends its wait when it sees the change, as after a spurious
    /// wake-up, which futex callers allow for.
    pub(super) fn shared_word_moved(&self, addr: u64, val: u32) -> bool {
        self.mem.is_shared(addr) && self.mem.load::<4>(addr).map_or(true, |v| v as u32 != val)
    }

    /// Whether a signal pending for the running thread would interrupt
    /// its wait.
    pub(super) fn my_wait_interrupted(&self) -> bool {
        let signals = &self.kernel.signals;
        signals.would_interrupt(&signals.own, signals.mask)
    }

    /// The running thread as it would be parked, waiting as `wait` says.
    fn parked_me(&mut self, wait: Wait) -> Parked {
        Parked {
            cpu: self.cpu.clone(),
            tid: self.kernel.tid,
            clear_tid: self.kernel.clear_tid,
            mask: self.kernel.signals.mask,
            pending: std::mem::take(&mut self.kernel.signals.own),
            rseq: self.kernel.rseq,
            altstack: self.kernel.signals.altstack,
            wait,
        }
    }

    /// Whether the wait of a call blocked as `b` is over for a thread
    /// whose own pending signals are `own`: a descriptor ready (polled on
    /// the host when `poll`), a signal of its set pending, or a signal
    /// that its mask lets through and that does something.
    fn call_wait_over(&self, own: &Pending, b: &Blocked, poll: bool) -> bool {
        let signals = &self.kernel.signals;
        signals.takes_in(own, b.set)
            || signals.would_interrupt(own, b.mask)
            || (poll && host_ready(&b.fds))
    }

    /// Makes threads whose wait is over ready: those blocked in a call
    /// ([`Self::call_wait_over`]; descriptors are polled only when
    /// `poll`), those asleep on a futex with a signal to take, whose
    /// wait ends with EINTR as Linux's signal_wake_up ends it (the
    /// thread then takes the signal on its way back), and, when `poll`,
    /// those whose timeout's end has come.
    pub(super) fn wake_blocked(&mut self, poll: bool) {
        if self.threads.parked.is_empty() {
            return;
        }
        if poll {
            self.threads.time_out(std::time::Instant::now());
        }
        let mut parked = std::mem::take(&mut self.threads.parked);
        for p in parked.iter_mut() {
            match &p.wait {
                Wait::Call(b) if self.call_wait_over(&p.pending, b, poll) => {
                    p.wait = Wait::Redo(b.redo());
                }
                Wait::Futex { .. } if self.kernel.signals.would_interrupt(&p.pending, p.mask) => {
                    p.wait = Wait::Ready;
                    p.cpu.x[10] = -(libc::EINTR as i64) as u64;
                }
                Wait::Futex { addr, val, .. } if self.shared_word_moved(*addr, *val) => {
                    p.wait = Wait::Ready;
                }
                _ => {}
            }
        }
        self.threads.parked = parked;
    }

    /// Waits on the host, when no thread can run, for a descriptor that a
    /// blocked thread (or the running one, about to block as `mine` says)
    /// waits on, the end of a thread's timeout (the running one's is
    /// `my_until`), the interval timer's signal or, if a thread waits for
    /// a signal, one from outside, whichever comes first; `false` when
    /// there is none of them (every thread waits on a futex without a
    /// timeout: a deadlock). A thread waiting on a futex in shared memory
    /// (the running one on `my_shared_futex`: the word and the value it
    /// held) may be ended by another process: then the wait lasts at most
    /// [`SHARED_FUTEX_LOOK`], after which the caller looks at the words
    /// again, and with no descriptor to wait for it is the host's futex
    /// wait on the first such word, which the other process's wake ends.
    fn wait_on_host(
        &mut self,
        mine: Option<&Blocked>,
        my_until: Option<std::time::Instant>,
        my_shared_futex: Option<(u64, u32)>,
    ) -> bool {
        let my_fds = mine.map_or(&[][..], |b| &b.fds);
        let mut fds: Vec<libc::pollfd> = self
            .threads
            .parked
            .iter()
            .filter_map(|p| match &p.wait {
                Wait::Call(b) => Some(b.fds.iter()),
                _ => None,
            })
            .flatten()
            .chain(my_fds)
            .map(|&(fd, events)| libc::pollfd {
                fd,
                events,
                revents: 0,
            })
            .collect();
        let until = match (self.threads.next_timeout(), my_until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let left = until.map(|u| u.saturating_duration_since(std::time::Instant::now()));
        let mut timeout = earlier(left, self.kernel.timers.until_real());
        // A futex word in shared memory waited on, the running thread's
        // first: then the wait is short, since another process may change
        // any such word.
        let shared_word = my_shared_futex.or_else(|| {
            self.threads.parked.iter().find_map(|p| match p.wait {
                Wait::Futex { addr, val, .. } if self.mem.is_shared(addr) => Some((addr, val)),
                _ => None,
            })
        });
        if shared_word.is_some() {
            timeout = earlier(timeout, Some(SHARED_FUTEX_LOOK));
        }
        // A thread waiting for a signal (`sigwait`, `sigsuspend`, `pause`)
        // may get one from outside; threads that all wait on futexes for
        // each other, none.
        let for_a_signal = self
            .threads
            .parked
            .iter()
            .any(|p| matches!(&p.wait, Wait::Call(b) if b.fds.is_empty()))
            || mine.is_some_and(|b| b.fds.is_empty());
        let signal_may_come = for_a_signal && self.kernel.outside_fd().is_some();
        if fds.is_empty() && timeout.is_none() && !signal_may_come {
            return false;
        }
        if let (true, Some((addr, val))) = (fds.is_empty(), shared_word) {
            // Only futex words to wait for: on the host's futex of the
            // first, which another process's wake ends at once; the others
            // are looked at after at most SHARED_FUTEX_LOOK, and so are
            // signals from outside (whose catching interrupts the wait).
            self.mem
                .futex_wait(addr, val, timeout.unwrap_or(SHARED_FUTEX_LOOK));
        } else {
            // A signal from outside ends the wait too; an error (EINTR
            // from a host signal) just looks again.
            self.kernel.poll_with_outside(&mut fds, timeout);
        }
        self.kernel.fire_timers();
        self.hand_directed();
        true
    }

    /// Puts `next` on the hart for a turn.
    fn run_thread(&mut self, next: Parked) {
        let instret = self.cpu.instret;
        self.redirected.get_or_insert(self.cpu.pc);
        self.cpu = next.cpu;
        self.cpu.instret = instret;
        self.cpu.reservation = Cpu::NO_RESERVATION;
        if next.tid != self.kernel.tid {
            self.switched_to = Some(next.tid);
        }
        self.kernel.tid = next.tid;
        self.kernel.clear_tid = next.clear_tid;
        self.kernel.signals.set_mask(next.mask);
        self.kernel.signals.own = next.pending;
        self.kernel.rseq = next.rseq;
        self.kernel.signals.altstack = next.altstack;
        self.threads.turn_ends = instret + self.threads.quantum;
        if let Wait::Redo(redo) = next.wait {
            self.redo = Some(redo);
        }
    }
}

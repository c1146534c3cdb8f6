//! The groups of sinks and the threads that feed them: any thread takes
//! any group's turn.
//!
//! Each group has a desk: the messages waiting for it, in order, and its
//! sinks, which one thread at a time feeds, message after message. A
//! worker thread takes the turn of the group it fed last while that
//! group has messages, else of the group with the most waiting; the
//! source's thread takes turns too, when a group it sends to already has
//! [`QUEUE`] messages waiting, instead of only waiting for it. So the
//! cores go wherever the work is: a profile whose code profile costs
//! three times its value profile does not wait for the one thread that
//! happens to hold it, and the simulator's thread feeds engines whenever
//! it is ahead. Every group still sees its messages one at a time and in
//! the order they were sent, so every report is the same as on one
//! thread.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError, TryLockError};

use super::{Message, SendSink, QUEUE};
use crate::runs::Blocks;
use crate::stream::{Fanout, Sink};

/// A group's sinks as one [`Fanout`], with its copy of the source's
/// table of blocks: what moves from thread to thread with its turns.
struct Work<'a> {
    fan: Fanout<'a>,
    blocks: Blocks,
    /// Whether a sink of the group panicked: its messages are dropped
    /// from then on, and the panic raised again at the end.
    failed: bool,
}

// SAFETY: every sink of `fan` came from a `SendSink`, a sink that may be
// moved to another thread; the fan-out's own state is plain data. The
// mutex around `Work` lets one thread at a time use it.
unsafe impl Send for Work<'_> {}

/// One group: the messages waiting for it and its sinks.
struct Desk<'a> {
    inbox: Mutex<VecDeque<Message>>,
    work: Mutex<Work<'a>>,
}

/// What the threads wait on.
#[derive(Default)]
struct State {
    /// No more messages will come.
    closed: bool,
    /// The first panic of a sink, raised again by [`Pool::finish`].
    panic: Option<Box<dyn std::any::Any + Send>>,
}

/// The desks of every group, shared by the source's thread and the
/// workers.
pub(super) struct Pool<'a> {
    desks: Vec<Desk<'a>>,
    state: Mutex<State>,
    /// Signalled when a message is queued, a turn ends or the pool
    /// closes.
    changed: Condvar,
}

/// Locks `m`, whatever a panicking holder left: the pool catches the
/// sinks' panics itself, and its own state stays whole.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks `m` if no other thread holds it, whatever a panicking holder
/// left (see [`lock`]).
fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

impl<'a> Pool<'a> {
    /// A desk per group, each with nothing waiting.
    pub(super) fn new(groups: Vec<Vec<SendSink<'a>>>) -> Pool<'a> {
        let desks = groups
            .into_iter()
            .map(|sinks| {
                let mut fan = Fanout::new();
                for s in sinks {
                    fan.push(s);
                }
                Desk {
                    inbox: Mutex::new(VecDeque::new()),
                    work: Mutex::new(Work {
                        fan,
                        blocks: Blocks::new(),
                        failed: false,
                    }),
                }
            })
            .collect();
        Pool {
            desks,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    /// Calls `f` with the sinks of group `g` as one sink, on this thread
    /// and before any message: to ask what they want.
    pub(super) fn ask<R>(&self, g: usize, f: impl FnOnce(&mut dyn Sink) -> R) -> R {
        f(&mut lock(&self.desks[g].work).fan)
    }

    /// Queues `m` for group `g`; when more than [`QUEUE`] messages then
    /// wait for it, takes turns (of `g`, or of any group free while `g`
    /// is fed elsewhere) until no more do.
    pub(super) fn send(&self, g: usize, m: Message) {
        let waiting = {
            let mut inbox = lock(&self.desks[g].inbox);
            inbox.push_back(m);
            inbox.len()
        };
        self.signal();
        if waiting > QUEUE {
            let behind = || lock(&self.desks[g].inbox).len() > QUEUE;
            while let Some((d, work)) = self.next_turn(g, || !behind()) {
                // One message, then back to the source, which is needed
                // as soon as the group has caught up.
                self.take_turn(d, work, 1);
            }
        }
    }

    /// A worker's life: takes turns until the pool closes and every
    /// message has been fed, starting with group `home`.
    pub(super) fn work(&self, home: usize) {
        let mut last = home;
        while let Some((d, work)) = self.next_turn(last, || self.drained()) {
            self.take_turn(d, work, usize::MAX);
            last = d;
        }
    }

    /// Says that no more messages will come, feeds what is left on this
    /// thread beside the workers, and raises again the first panic of a
    /// sink, if any.
    pub(super) fn finish(&self) {
        lock(&self.state).closed = true;
        self.changed.notify_all();
        self.work(0);
        if let Some(panic) = lock(&self.state).panic.take() {
            std::panic::resume_unwind(panic);
        }
    }

    /// Whether the pool is closed and no message waits.
    fn drained(&self) -> bool {
        lock(&self.state).closed && self.desks.iter().all(|d| lock(&d.inbox).is_empty())
    }

    /// Wakes every thread waiting for a turn.
    fn signal(&self) {
        // Taking the lock orders this after any thread's look at the
        // desks that found nothing to do, which then waits.
        drop(lock(&self.state));
        self.changed.notify_all();
    }

    /// The next turn a thread may take, preferring group `first`, then
    /// the group with the most messages waiting: a group with a message
    /// whose sinks no other thread is feeding, with its sinks. Waits for
    /// one until `done` (checked without the state's lock held, when no
    /// turn can be had) says to stop, and then returns `None`.
    fn next_turn(
        &self,
        first: usize,
        done: impl Fn() -> bool,
    ) -> Option<(usize, MutexGuard<'_, Work<'a>>)> {
        loop {
            if done() {
                return None;
            }
            let state = lock(&self.state);
            if let Some(turn) = self.free_turn(first) {
                return Some(turn);
            }
            // Nothing to take now: wait for a message, a turn's end or
            // the close, unless what ends the wait came before the lock.
            drop(state);
            if done() {
                return None;
            }
            let state = lock(&self.state);
            if self.free_turn_exists() {
                continue;
            }
            drop(
                self.changed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
            );
        }
    }

    /// A group with a message whose sinks are free, `first` if it is one,
    /// else the one with the most messages waiting, with its sinks.
    fn free_turn(&self, first: usize) -> Option<(usize, MutexGuard<'_, Work<'a>>)> {
        let waiting = |d: usize| lock(&self.desks[d].inbox).len();
        if waiting(first) > 0 {
            if let Some(work) = try_lock(&self.desks[first].work) {
                return Some((first, work));
            }
        }
        let mut order: Vec<(usize, usize)> = (0..self.desks.len())
            .map(|d| (waiting(d), d))
            .filter(|&(n, d)| n > 0 && d != first)
            .collect();
        order.sort_unstable_by(|a, b| b.cmp(a));
        order
            .into_iter()
            .find_map(|(_, d)| try_lock(&self.desks[d].work).map(|w| (d, w)))
    }

    /// Whether some group has a message and free sinks.
    fn free_turn_exists(&self) -> bool {
        self.desks
            .iter()
            .any(|d| !lock(&d.inbox).is_empty() && try_lock(&d.work).is_some())
    }

    /// Feeds group `d`'s sinks, held in `work`, up to `most` of its
    /// waiting messages, in order; a sink's panic is kept for
    /// [`finish`](Self::finish) and the group fed nothing more.
    fn take_turn(&self, d: usize, mut work: MutexGuard<'_, Work<'a>>, most: usize) {
        for _ in 0..most {
            let Some(m) = lock(&self.desks[d].inbox).pop_front() else {
                break;
            };
            if work.failed {
                continue;
            }
            let w = &mut *work;
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| deliver(w, m))) {
                work.failed = true;
                lock(&self.state).panic.get_or_insert(panic);
            }
        }
        drop(work);
        self.signal();
    }
}

/// Feeds one message to a group's sinks.
fn deliver(w: &mut Work<'_>, m: Message) {
    match m {
        Message::Events(batch) => w.fan.observe(&batch),
        Message::RunsFollow => w.fan.runs_follow(),
        Message::Runs(runs, new) => {
            if let Some(new) = new {
                w.blocks.append_from(&new, 0);
            }
            w.fan.observe_runs(&runs, &w.blocks);
        }
        Message::Finish => w.fan.finish(),
    }
}

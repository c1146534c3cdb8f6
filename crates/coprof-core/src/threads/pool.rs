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
    /// Threads waiting for a turn.
    sleepers: usize,
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
            let caught_up = |_: &State| lock(&self.desks[g].inbox).len() <= QUEUE;
            while let Some((d, work)) = self.next_turn(g, caught_up) {
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
        while let Some((d, work)) = self.next_turn(last, |state| self.drained(state)) {
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

    /// Whether the pool is closed and no message waits, by its `state`,
    /// locked.
    fn drained(&self, state: &State) -> bool {
        state.closed && self.desks.iter().all(|d| lock(&d.inbox).is_empty())
    }

    /// Wakes every thread waiting for a turn.
    fn signal(&self) {
        // Taking the lock orders this after any thread's look at the
        // desks that found nothing to do, which then waits; with none
        // waiting, there is no one to wake (and no system call to make).
        if lock(&self.state).sleepers > 0 {
            self.changed.notify_all();
        }
    }

    /// The next turn a thread may take, preferring group `first`, then
    /// the group with the most messages waiting: a group with a message
    /// whose sinks no other thread is feeding, with its sinks. Waits for
    /// one until `done` (called with the state locked) says to stop, and
    /// then returns `None`.
    fn next_turn(
        &self,
        first: usize,
        done: impl Fn(&State) -> bool,
    ) -> Option<(usize, MutexGuard<'_, Work<'a>>)> {
        loop {
            // Looked at with the lock held, up to the wait: a thread that
            // changes what `done` reads or frees a turn (a message queued
            // or fed, a turn's end, the close) signals with the lock
            // taken, so it comes either before this look or after the
            // wait begins, which it then ends.
            let mut state = lock(&self.state);
            if done(&state) {
                return None;
            }
            if let Some(turn) = self.free_turn(first) {
                return Some(turn);
            }
            state.sleepers += 1;
            let mut state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.sleepers -= 1;
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

    /// Feeds group `d`'s sinks, held in `work`, up to `most` of its
    /// waiting messages, in order; a sink's panic is kept for
    /// [`finish`](Self::finish) and the group fed nothing more.
    fn take_turn(&self, d: usize, mut work: MutexGuard<'_, Work<'a>>, most: usize) {
        for _ in 0..most {
            let Some(m) = lock(&self.desks[d].inbox).pop_front() else {
                break;
            };
            // The source may be waiting for this group to catch up.
            self.signal();
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
        Message::Switch(tid) => w.fan.thread_switch(tid),
        Message::Stack(calls) => w.fan.stack(&calls),
        Message::Finish => w.fan.finish(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Class, ClassSet, Event};
    use std::sync::Arc;

    /// A sink that keeps the PCs it is given, in order, taking `spin`
    /// rounds of busy work per event.
    struct Keep {
        pcs: Vec<u64>,
        spin: u32,
        finished: bool,
    }

    impl Sink for Keep {
        fn wants(&self) -> ClassSet {
            ClassSet::ALL
        }
        fn observe(&mut self, batch: &[Event]) {
            for e in batch {
                let mut x = e.pc;
                for _ in 0..self.spin {
                    x = std::hint::black_box(x.wrapping_mul(3));
                }
                self.pcs.push(e.pc);
            }
        }
        fn finish(&mut self) {
            self.finished = true;
        }
    }

    /// Many small messages to groups of unequal cost, from the source's
    /// thread with 0 to 3 workers: every group gets every message, in
    /// order, and is finished, however the turns fall.
    #[test]
    fn every_group_gets_every_message_in_order_however_the_turns_fall() {
        for round in 0..12u32 {
            let workers = (round % 4) as usize;
            let mut sinks: Vec<Keep> = [0, 40, 3, 200]
                .into_iter()
                .map(|spin| Keep {
                    pcs: Vec::new(),
                    spin,
                    finished: false,
                })
                .collect();
            let messages = 1500u64;
            {
                let groups: Vec<Vec<SendSink<'_>>> =
                    sinks.iter_mut().map(|s| vec![s as SendSink<'_>]).collect();
                let count = groups.len();
                let pool = Pool::new(groups);
                std::thread::scope(|scope| {
                    let pool = &pool;
                    for home in 0..workers {
                        scope.spawn(move || pool.work(home));
                    }
                    for m in 0..messages {
                        let batch: Vec<Event> = (0..4)
                            .map(|i| Event::new(m * 4 + i, Class::IntAlu))
                            .collect();
                        let batch = Arc::new(batch);
                        for g in 0..count {
                            pool.send(g, Message::Events(batch.clone()));
                        }
                    }
                    for g in 0..count {
                        pool.send(g, Message::Finish);
                    }
                    pool.finish();
                });
            }
            let expected: Vec<u64> = (0..messages * 4).collect();
            for (i, s) in sinks.iter().enumerate() {
                assert_eq!(s.pcs, expected, "group {i}, {workers} workers");
                assert!(s.finished, "group {i}, {workers} workers");
            }
        }
    }
}

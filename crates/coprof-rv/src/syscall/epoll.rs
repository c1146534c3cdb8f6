//! epoll: an epoll instance is a host descriptor watching host
//! descriptors. `epoll_ctl` translates the guest's descriptor; events are
//! converted between RV64's `struct epoll_event` (16 bytes: the events, 4
//! bytes of padding, the 64-bit data) and x86-64's packed 12-byte one. A
//! wait goes through the wait `ppoll` uses, on the epoll descriptor (which
//! the host makes readable while an event is ready), so that signals,
//! interval timers and the program's other threads end it as they end a
//! `ppoll`; the events are then collected without waiting.

use super::{errno, read_timespec, ret, Kernel, Outcome, EBADF, EFAULT, EINVAL, SIGSET_BYTES};
use crate::error::SimError;
use crate::mem::{perm, Memory};
use crate::sysno as nr;
use std::time::Duration;

/// The calls this module answers.
pub(super) const CALLS: &[u64] = &[
    nr::EPOLL_CREATE1,
    nr::EPOLL_CTL,
    nr::EPOLL_PWAIT,
    nr::EPOLL_PWAIT2,
];

/// Bytes of RV64's `struct epoll_event`.
const EVENT: u64 = 16;
/// Most events one wait may ask for (Linux: INT_MAX / sizeof(struct
/// epoll_event)).
const MAX_EVENTS: i64 = i32::MAX as i64 / EVENT as i64;
/// Most events collected from the host at once: a wait may return fewer
/// than it asked for.
const BATCH: usize = 1024;

impl Kernel {
    /// One of [`CALLS`], number `a[7]`, made at `pc`.
    pub(super) fn epoll_call(
        &mut self,
        mem: &mut Memory,
        a: [u64; 8],
        pc: u64,
    ) -> Result<Outcome, SimError> {
        let r = match a[7] {
            nr::EPOLL_CREATE1 => {
                // SAFETY: plain call.
                let h = unsafe { libc::epoll_create1(a[0] as i32) };
                self.install(h, 0)
            }
            nr::EPOLL_CTL => {
                let ep = fd!(self, a[0]);
                let h = fd!(self, a[2]);
                let op = a[1] as i32;
                let mut ev = libc::epoll_event { events: 0, u64: 0 };
                if op != libc::EPOLL_CTL_DEL {
                    let raw = tryf!(mem.slice(a[3], EVENT, perm::R));
                    ev.events = u32::from_le_bytes(raw[..4].try_into().unwrap_or_default());
                    ev.u64 = u64::from_le_bytes(raw[8..16].try_into().unwrap_or_default());
                }
                // SAFETY: a pointer to a local event.
                ret(unsafe { libc::epoll_ctl(ep, op, h, &mut ev) } as i64)
            }
            _ => return self.epoll_wait(mem, a, pc),
        };
        Ok(Outcome::Ret(r))
    }

    /// `epoll_pwait(epfd, events, maxevents, timeout_ms, sigmask,
    /// sigsetsize)` and `epoll_pwait2`, whose timeout is a `struct
    /// timespec` (NULL: none). Checked in Linux's order: the count, the
    /// buffer, the descriptor (EBADF, EINVAL for one that is not epoll's),
    /// then the mask's size.
    fn epoll_wait(&mut self, mem: &mut Memory, a: [u64; 8], pc: u64) -> Result<Outcome, SimError> {
        let max = a[2] as i32 as i64;
        if max <= 0 || max > MAX_EVENTS {
            return Ok(Outcome::Ret(EINVAL));
        }
        if mem.slice_mut(a[1], max as u64 * EVENT).is_err() {
            return Ok(Outcome::Ret(EFAULT));
        }
        let Some(ep) = self.fds.host(a[0] as i32 as i64) else {
            return Ok(Outcome::Ret(EBADF));
        };
        let timeout = if a[7] == nr::EPOLL_PWAIT {
            let ms = a[3] as i32;
            (ms >= 0).then(|| Duration::from_millis(ms as u64))
        } else if a[3] == 0 {
            None
        } else {
            Some(errno!(read_timespec(mem, a[3])))
        };
        let mask = if a[4] == 0 {
            None
        } else if a[5] != SIGSET_BYTES {
            return Ok(Outcome::Ret(EINVAL));
        } else {
            Some(tryf!(mem.load::<8>(a[4])))
        };
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; (max as usize).min(BATCH)];
        let deadline = self.deadline(timeout);
        loop {
            // SAFETY: `events` has room for that many.
            let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, 0) };
            if n < 0 {
                return Ok(Outcome::Ret(errno()));
            }
            if n > 0 {
                let out = tryf!(mem.slice_mut(a[1], n as u64 * EVENT));
                for (slot, ev) in out.chunks_exact_mut(EVENT as usize).zip(&events) {
                    // Copied out of the packed host structure first.
                    let (bits, data) = (ev.events, ev.u64);
                    slot[..4].copy_from_slice(&bits.to_le_bytes());
                    slot[4..8].fill(0);
                    slot[8..].copy_from_slice(&data.to_le_bytes());
                }
                return Ok(Outcome::Ret(n as i64));
            }
            let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
            if left == Some(Duration::ZERO) {
                return Ok(Outcome::Ret(0));
            }
            let mut watch = [libc::pollfd {
                fd: ep,
                events: libc::POLLIN,
                revents: 0,
            }];
            match self.poll_host(&mut watch, &[false], deadline, mask, "epoll_pwait", pc)? {
                Err(outcome) => return Ok(outcome),
                Ok(0) => return Ok(Outcome::Ret(0)),
                Ok(_) => {}
            }
        }
    }
}

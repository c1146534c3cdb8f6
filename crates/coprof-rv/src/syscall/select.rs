//! Waits for descriptors: `ppoll`, and `pselect6` (`select` and
//! `pselect`) over the descriptors of its three sets, polled on the host
//! as [`Kernel::poll_host`] waits, with the sets, `revents` and the time
//! left written back.

use super::{read_timespec, write_timespec, Kernel, Outcome, EBADF, EFAULT, EINVAL, SIGSET_BYTES};
use crate::error::SimError;
use crate::fdtable::MAX_FDS;
use crate::mem::{perm, Memory};
use crate::sysno as nr;

/// The calls this module answers.
pub(super) const CALLS: &[u64] = &[nr::PPOLL, nr::PSELECT6];

impl Kernel {
    /// One of [`CALLS`], number `a[7]`, made at `pc`.
    pub(super) fn select_call(
        &mut self,
        mem: &mut Memory,
        a: [u64; 8],
        pc: u64,
    ) -> Result<Outcome, SimError> {
        if a[7] == nr::PSELECT6 {
            return self.pselect6(mem, a, pc);
        }
        // fs/select.c, do_sys_poll: the count, the timeout (read and
        // checked), the signal mask, then the descriptors.
        if a[1] > MAX_FDS as u64 {
            return Ok(Outcome::Ret(EINVAL));
        }
        let timeout = match a[2] {
            0 => None,
            at => Some(errno!(read_timespec(mem, at))),
        };
        let mask = match a[3] {
            0 => None,
            _ if a[4] != SIGSET_BYTES => return Ok(Outcome::Ret(EINVAL)),
            at => Some(tryf!(mem.load::<8>(at))),
        };
        self.ppoll(mem, a[0], a[1] as usize, timeout, mask, pc)
    }

    /// `ppoll` after its arguments are read: the descriptors polled on the
    /// host (a guest descriptor that is not open reads POLLNVAL) as
    /// [`Self::poll_host`] waits for them, their `revents` written back.
    fn ppoll(
        &mut self,
        mem: &mut Memory,
        fds_at: u64,
        nfds: usize,
        timeout: Option<std::time::Duration>,
        mask: Option<u64>,
        pc: u64,
    ) -> Result<Outcome, SimError> {
        // struct pollfd: int fd, short events, short revents.
        let Ok(guest) = mem.slice_mut(fds_at, nfds as u64 * 8) else {
            return Ok(Outcome::Ret(EFAULT));
        };
        // Guest descriptors that are not open answer POLLNVAL at once, as
        // on Linux; the host polls them as ignored (-1).
        let mut closed = Vec::with_capacity(nfds);
        let mut host: Vec<libc::pollfd> = guest
            .chunks(8)
            .map(|p| {
                let fd = i32::from_le_bytes(p[..4].try_into().unwrap_or_default());
                let h = if fd < 0 {
                    None
                } else {
                    Some(self.fds.host(fd as i64))
                };
                closed.push(h == Some(None));
                libc::pollfd {
                    fd: h.flatten().unwrap_or(-1),
                    events: i16::from_le_bytes(p[4..6].try_into().unwrap_or_default()),
                    revents: 0,
                }
            })
            .collect();
        let deadline = self.deadline(timeout);
        let ready = match self.poll_host(&mut host, &closed, deadline, mask, "ppoll", pc)? {
            Ok(n) => n,
            Err(outcome) => return Ok(outcome),
        };
        let Ok(guest) = mem.slice_mut(fds_at, nfds as u64 * 8) else {
            return Ok(Outcome::Ret(EFAULT));
        };
        for (p, h) in guest.chunks_mut(8).zip(&host) {
            p[6..8].copy_from_slice(&h.revents.to_le_bytes());
        }
        Ok(Outcome::Ret(ready))
    }

    /// `pselect6` (glibc's `select` and `pselect`): Linux's order of
    /// checks (`nfds`, the timeout, the signal mask's size, the sets, a
    /// descriptor in a set that is not open: EBADF), then the wait of
    /// [`Self::poll_host`] on the descriptors of the three sets (POLLIN
    /// for reading, POLLOUT for writing, POLLPRI for exceptions), and
    /// the sets written back with only the ready descriptors, as
    /// `core_sys_select` does; the time left goes back into the timeout.
    fn pselect6(&mut self, mem: &mut Memory, a: [u64; 8], pc: u64) -> Result<Outcome, SimError> {
        let n = a[0] as i32;
        if n < 0 {
            return Ok(Outcome::Ret(EINVAL));
        }
        let n = (n as usize).min(MAX_FDS);
        let timeout = match a[4] {
            0 => None,
            at => Some(errno!(read_timespec(mem, at))),
        };
        // The sixth argument: { const sigset_t *ss; size_t ss_len }.
        let mask = match a[5] {
            0 => None,
            at => {
                let [ss, len] = [tryf!(mem.load::<8>(at)), tryf!(mem.load::<8>(at + 8))];
                match ss {
                    0 => None,
                    _ if len != SIGSET_BYTES => return Ok(Outcome::Ret(EINVAL)),
                    ss => Some(tryf!(mem.load::<8>(ss))),
                }
            }
        };
        // fd_set: an array of 64-bit words, bit fd % 64 of word fd / 64.
        let words = n.div_ceil(64);
        let mut sets = [vec![0u64; words], vec![0u64; words], vec![0u64; words]];
        for (set, &at) in sets.iter_mut().zip(&a[1..4]) {
            if at == 0 {
                continue;
            }
            let bytes = tryf!(mem.slice(at, words as u64 * 8, perm::R));
            for (w, b) in set.iter_mut().zip(bytes.chunks_exact(8)) {
                *w = u64::from_le_bytes(b.try_into().unwrap_or_default());
            }
            if let Some(last) = set.last_mut() {
                if !n.is_multiple_of(64) {
                    *last &= (1u64 << (n % 64)) - 1;
                }
            }
        }
        const EVENTS: [i16; 3] = [libc::POLLIN, libc::POLLOUT, libc::POLLPRI];
        let mut guest_fds = Vec::new();
        let mut host = Vec::new();
        for fd in 0..n {
            let bit = |set: &Vec<u64>| set[fd / 64] >> (fd % 64) & 1 != 0;
            let events = sets
                .iter()
                .zip(EVENTS)
                .filter(|(set, _)| bit(set))
                .fold(0, |e, (_, ev)| e | ev);
            if events == 0 {
                continue;
            }
            let h = fd!(self, fd);
            guest_fds.push(fd);
            host.push(libc::pollfd {
                fd: h,
                events,
                revents: 0,
            });
        }
        let deadline = self.deadline(timeout);
        let closed = vec![false; host.len()];
        if let Err(outcome) = self.poll_host(&mut host, &closed, deadline, mask, "pselect6", pc)? {
            return Ok(outcome);
        }
        // POLLIN_SET, POLLOUT_SET and POLLEX_SET of fs/select.c.
        const READY: [i16; 3] = [
            libc::POLLIN | libc::POLLRDNORM | libc::POLLRDBAND | libc::POLLHUP | libc::POLLERR,
            libc::POLLOUT | libc::POLLWRNORM | libc::POLLWRBAND | libc::POLLERR,
            libc::POLLPRI,
        ];
        let mut ready = 0;
        let mut out = [vec![0u64; words], vec![0u64; words], vec![0u64; words]];
        for (&fd, h) in guest_fds.iter().zip(&host) {
            for k in 0..3 {
                if h.events & EVENTS[k] != 0 && h.revents & READY[k] != 0 {
                    out[k][fd / 64] |= 1 << (fd % 64);
                    ready += 1;
                }
            }
        }
        for (set, &at) in out.iter().zip(&a[1..4]) {
            if at == 0 {
                continue;
            }
            let bytes = tryf!(mem.slice_mut(at, words as u64 * 8));
            for (b, w) in bytes.chunks_exact_mut(8).zip(set) {
                b.copy_from_slice(&w.to_le_bytes());
            }
        }
        if let Some(d) = deadline {
            // The time left, as Linux writes it back (a timeout in memory
            // that cannot be written is left as it was).
            let left = d.saturating_duration_since(std::time::Instant::now());
            let _ = write_timespec(mem, a[4], left);
        }
        Ok(Outcome::Ret(ready))
    }
}

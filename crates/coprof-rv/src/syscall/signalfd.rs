//! `signalfd4`: a descriptor that reads the program's pending signals of
//! a set as `struct signalfd_siginfo` records, and that `poll`, `select`
//! and `epoll` see readable while one is pending.
//!
//! The program's signals are the simulator's ([`crate::signal`]), which a
//! host signalfd cannot see, so the descriptor the program holds is one
//! end of a host socket pair standing in for it. A read is answered here,
//! from the simulator's pending signals. Readiness is a byte the other end
//! writes while a signal of the set is pending and takes back once none
//! is: it is brought up to date after every system call and whenever
//! timers fire or signals come from outside ([`Kernel::sync_signalfds`]),
//! so a wait on the host, alone or beside other descriptors, ends as a
//! wait on a real signalfd does. A signalfd is known by its socket's
//! inode, which `dup`, `fcntl` and `fork` keep.

use super::{Kernel, Outcome, EFAULT, EINVAL};
use crate::error::SimError;
use crate::mem::{perm, Memory};
use crate::signal::{code, SigInfo};

/// Bytes of `struct signalfd_siginfo`.
const RECORD: u64 = 128;
/// `signalfd4`'s flags: SFD_NONBLOCK and SFD_CLOEXEC (O_NONBLOCK and
/// O_CLOEXEC).
const SFD_NONBLOCK: u64 = 0o4000;
const SFD_CLOEXEC: u64 = 0o2000000;
/// SIGKILL and SIGSTOP, which a signalfd never takes.
const UNCATCHABLE: u64 = 1 << (9 - 1) | 1 << (19 - 1);

/// The signalfds the program made.
#[derive(Debug, Default)]
pub struct SignalFds(Vec<SignalFd>);

#[derive(Debug)]
struct SignalFd {
    /// The inode of the socket the program holds an end of.
    ino: u64,
    /// A descriptor of that end of our own, to take the readiness byte
    /// back from (with MSG_DONTWAIT: the program's flags stay its own).
    mine: i32,
    /// The other end, which writes the readiness byte.
    peer: i32,
    /// The signals it takes (bit n − 1 for signal n).
    mask: u64,
    /// Whether the readiness byte is there.
    ready: bool,
}

/// A connected pair of host Unix stream sockets, close-on-exec.
fn socket_pair() -> Option<[i32; 2]> {
    let mut pair = [0i32; 2];
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    // SAFETY: a valid out-array of two descriptors.
    let r = unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, pair.as_mut_ptr()) };
    (r == 0).then_some(pair)
}

/// The inode of host descriptor `h` when it is a socket.
fn socket_inode(h: i32) -> Option<u64> {
    let st = super::host_stat(h)?;
    (st.st_mode & libc::S_IFMT == libc::S_IFSOCK).then_some(st.st_ino)
}

/// `struct signalfd_siginfo` for `info`, with the fields Linux fills for
/// its kind of `siginfo_t` (`siginfo_layout`).
fn record(info: &SigInfo) -> [u8; RECORD as usize] {
    let mut r = [0u8; RECORD as usize];
    let (low, high) = (info.word as u32, (info.word >> 32) as u32);
    r[..4].copy_from_slice(&(info.signo as u32).to_le_bytes());
    r[8..12].copy_from_slice(&info.code.to_le_bytes());
    let fault = matches!(
        info.signo,
        libc::SIGILL | libc::SIGFPE | libc::SIGSEGV | libc::SIGBUS | libc::SIGTRAP
    );
    if info.code == code::SI_TIMER {
        r[24..28].copy_from_slice(&low.to_le_bytes()); // ssi_tid
        r[32..36].copy_from_slice(&high.to_le_bytes()); // ssi_overrun
    } else if info.code > 0 && info.code < code::SI_KERNEL && fault {
        r[72..80].copy_from_slice(&info.word.to_le_bytes()); // ssi_addr
    } else {
        r[12..16].copy_from_slice(&low.to_le_bytes()); // ssi_pid
        r[16..20].copy_from_slice(&high.to_le_bytes()); // ssi_uid
    }
    if info.code < 0 {
        r[44..48].copy_from_slice(&(info.value as u32).to_le_bytes()); // ssi_int
        r[48..56].copy_from_slice(&info.value.to_le_bytes()); // ssi_ptr
    }
    r
}

impl Kernel {
    /// `signalfd4(fd, mask, sizemask, flags)`: a new signalfd when `fd` is
    /// −1, else a new set for the signalfd `fd`.
    pub(super) fn signalfd4(&mut self, mem: &mut Memory, a: [u64; 8]) -> i64 {
        let (fd, flags) = (a[0] as i32, a[3]);
        if a[2] != 8 || flags & !(SFD_NONBLOCK | SFD_CLOEXEC) != 0 {
            return EINVAL;
        }
        let Ok(mask) = mem.load::<8>(a[1]) else {
            return EFAULT;
        };
        let mask = mask & !UNCATCHABLE;
        let r = if fd != -1 {
            let Some(h) = self.fds.host(fd as i64) else {
                return super::EBADF;
            };
            match self.signalfd_of(h) {
                Some(i) => {
                    self.signalfds.0[i].mask = mask;
                    fd as i64
                }
                None => EINVAL,
            }
        } else {
            self.new_signalfd(mask, flags)
        };
        self.sync_signalfds();
        r
    }

    fn new_signalfd(&mut self, mask: u64, flags: u64) -> i64 {
        let Some([theirs, peer]) = socket_pair() else {
            return super::errno();
        };
        // SAFETY: plain descriptor calls on descriptors we hold.
        let mine = unsafe { libc::fcntl(theirs, libc::F_DUPFD_CLOEXEC, 0) };
        let ino = socket_inode(theirs);
        let (Some(ino), true) = (ino, mine >= 0) else {
            let e = super::errno();
            for h in [theirs, peer, mine] {
                if h >= 0 {
                    // SAFETY: closing descriptors we made.
                    unsafe { libc::close(h) };
                }
            }
            return e;
        };
        // The program's end: close-on-exec only if it asked.
        // SAFETY: plain descriptor calls.
        unsafe {
            if flags & SFD_CLOEXEC == 0 {
                libc::fcntl(theirs, libc::F_SETFD, 0);
            }
            if flags & SFD_NONBLOCK != 0 {
                libc::fcntl(theirs, libc::F_SETFL, libc::O_NONBLOCK);
            }
        }
        let fd = self.install(theirs, 0);
        if fd < 0 {
            // SAFETY: closing descriptors we made.
            unsafe {
                libc::close(mine);
                libc::close(peer);
            }
            return fd;
        }
        self.signalfds.0.push(SignalFd {
            ino,
            mine,
            peer,
            mask,
            ready: false,
        });
        fd
    }

    /// In a forked child: gives each signalfd a socket pair of the
    /// child's own, in place under every descriptor the program holds of
    /// it (with its flags), so that its readiness follows the child's
    /// signals alone, as a read of it takes the child's.
    pub(crate) fn own_signalfds_after_fork(&mut self) {
        let hosts: Vec<i32> = self.fds.hosts().collect();
        for s in &mut self.signalfds.0 {
            let Some([fresh, peer]) = socket_pair() else {
                continue;
            };
            for &h in &hosts {
                if socket_inode(h) != Some(s.ino) {
                    continue;
                }
                // SAFETY: plain descriptor calls on descriptors we hold;
                // dup3 replaces the program's descriptor in place.
                unsafe {
                    let fd_flags = libc::fcntl(h, libc::F_GETFD);
                    let fl_flags = libc::fcntl(h, libc::F_GETFL);
                    let cloexec = if fd_flags & libc::FD_CLOEXEC != 0 {
                        libc::O_CLOEXEC
                    } else {
                        0
                    };
                    if libc::dup3(fresh, h, cloexec) == h {
                        libc::fcntl(h, libc::F_SETFL, fl_flags & libc::O_NONBLOCK);
                    }
                }
            }
            // SAFETY: closing the parent's copies and swapping in ours.
            unsafe {
                libc::close(s.mine);
                libc::close(s.peer);
            }
            s.ino = socket_inode(fresh).unwrap_or(0);
            s.mine = fresh;
            s.peer = peer;
            s.ready = false;
        }
        self.sync_signalfds();
    }

    /// Which signalfd the host descriptor `h` is, if any.
    pub(super) fn signalfd_of(&self, h: i32) -> Option<usize> {
        if self.signalfds.0.is_empty() {
            return None;
        }
        let ino = socket_inode(h)?;
        self.signalfds.0.iter().position(|s| s.ino == ino)
    }

    /// Makes each signalfd readable exactly while a signal of its set is
    /// pending for the running thread or the process.
    pub(crate) fn sync_signalfds(&mut self) {
        if self.signalfds.0.is_empty() {
            return;
        }
        let pending = self.signals.pending();
        for s in &mut self.signalfds.0 {
            let want = pending & s.mask != 0;
            if want == s.ready {
                continue;
            }
            let mut byte = [0u8; 1];
            // SAFETY: a one-byte buffer; the socket is our own.
            let done = unsafe {
                if want {
                    libc::send(s.peer, byte.as_ptr() as *const _, 1, libc::MSG_DONTWAIT) == 1
                } else {
                    libc::recv(s.mine, byte.as_mut_ptr() as *mut _, 1, libc::MSG_DONTWAIT) == 1
                }
            };
            if done {
                s.ready = want;
            }
        }
    }

    /// `read(fd, buf, count)` of signalfd number `i` (host descriptor
    /// `h`): as many pending signals of its set as `count` holds records,
    /// waiting for one unless the descriptor is non-blocking.
    pub(super) fn read_signalfd(
        &mut self,
        mem: &mut Memory,
        i: usize,
        h: i32,
        buf: u64,
        count: u64,
        pc: u64,
    ) -> Result<Outcome, SimError> {
        if count < RECORD {
            return Ok(Outcome::Ret(EINVAL));
        }
        let mask = self.signalfds.0[i].mask;
        let room = (count / RECORD).min(64);
        let writable = |mem: &Memory, n: u64| mem.slice(buf + n * RECORD, RECORD, perm::W).is_ok();
        loop {
            let mut n = 0;
            // A record goes only where it can be written, so that no
            // signal is taken and lost.
            while n < room && writable(mem, n) {
                let Some(info) = self.signals.take_pending_in(mask) else {
                    break;
                };
                self.timers.posix.delivered(&info);
                if let Ok(out) = mem.slice_mut(buf + n * RECORD, RECORD) {
                    out.copy_from_slice(&record(&info));
                }
                n += 1;
            }
            if n > 0 {
                self.sync_signalfds();
                return Ok(Outcome::Ret((n * RECORD) as i64));
            }
            if !writable(mem, 0) {
                return Ok(Outcome::Ret(EFAULT));
            }
            // SAFETY: a plain descriptor call.
            if unsafe { libc::fcntl(h, libc::F_GETFL) } & libc::O_NONBLOCK != 0 {
                return Ok(Outcome::Ret(-(libc::EAGAIN as i64)));
            }
            let what = "read of a signalfd none of whose signals is pending";
            if let Some(end) = self.wait_for_signal(mask, None, what, pc)? {
                return Ok(end);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The little-endian field of `N` bytes at `at` of a record.
    fn field<const N: usize>(r: &[u8; RECORD as usize], at: usize) -> u64 {
        let mut b = [0u8; 8];
        b[..N].copy_from_slice(&r[at..at + N]);
        u64::from_le_bytes(b)
    }

    #[test]
    fn records_carry_the_fields_of_their_kind() {
        let sent = record(&SigInfo {
            signo: libc::SIGUSR1,
            code: code::SI_QUEUE,
            word: 42 | 1000 << 32,
            value: 7,
        });
        assert_eq!(field::<4>(&sent, 0), 10, "signo");
        assert_eq!(field::<4>(&sent, 8) as u32 as i32, code::SI_QUEUE, "code");
        assert_eq!(field::<4>(&sent, 12), 42, "pid");
        assert_eq!(field::<4>(&sent, 16), 1000, "uid");
        assert_eq!(field::<4>(&sent, 44), 7, "int");
        let timer = record(&SigInfo {
            signo: libc::SIGALRM,
            code: code::SI_TIMER,
            word: 3 | 2 << 32,
            value: 9,
        });
        assert_eq!(field::<4>(&timer, 24), 3, "tid");
        assert_eq!(field::<4>(&timer, 32), 2, "overrun");
        assert_eq!(field::<8>(&timer, 48), 9, "ptr");
        let fault = record(&SigInfo::fault(libc::SIGSEGV, code::SEGV_MAPERR, 0x1234));
        assert_eq!(field::<8>(&fault, 72), 0x1234, "addr");
        assert_eq!(field::<4>(&fault, 12), 0, "no pid");
    }
}

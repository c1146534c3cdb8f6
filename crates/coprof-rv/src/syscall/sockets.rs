//! Sockets: the host's, through the guest's descriptor table. Socket
//! addresses, options and `struct msghdr` have the same layout on RV64 and
//! x86-64, so only the addresses inside them move; descriptors passed in
//! SCM_RIGHTS messages are translated both ways, and so are the pids of
//! SCM_CREDENTIALS and SO_PEERCRED (`--pid`). Beside other threads, a
//! blocking `accept`, receive or send that would wait leaves the hart as
//! `read` and `write` do.

use super::{errno, guest_ptr, host_iovecs, ret, Kernel, Outcome, EBADF, EFAULT};
use crate::error::SimError;
use crate::mem::{perm, Memory};
use crate::sysno as nr;

/// The calls this module answers.
pub(super) const CALLS: &[u64] = &[
    nr::SOCKET,
    nr::SOCKETPAIR,
    nr::BIND,
    nr::LISTEN,
    nr::ACCEPT,
    nr::ACCEPT4,
    nr::CONNECT,
    nr::GETSOCKNAME,
    nr::GETPEERNAME,
    nr::SENDTO,
    nr::RECVFROM,
    nr::SETSOCKOPT,
    nr::GETSOCKOPT,
    nr::SHUTDOWN,
    nr::SENDMSG,
    nr::RECVMSG,
];

/// A receive or send flag: this call does not wait.
const MSG_DONTWAIT: u64 = 0x40;
/// Most buffers one message may gather (UIO_MAXIOV).
const MAX_IOV: u64 = 1024;
/// Bytes of `struct cmsghdr`'s header (a 64-bit length, level, type).
const CMSG_HEADER: usize = 16;

/// A `socklen_t` the guest passes by address (0: none).
fn read_len(mem: &Memory, at: u64) -> Result<u32, i64> {
    if at == 0 {
        return Ok(0);
    }
    mem.load::<4>(at).map(|v| v as u32).map_err(|_| EFAULT)
}

impl Kernel {
    /// One of [`CALLS`], number `a[7]`.
    pub(super) fn socket_call(
        &mut self,
        mem: &mut Memory,
        a: [u64; 8],
    ) -> Result<Outcome, SimError> {
        let num = a[7];
        // SAFETY (for the host calls below): every pointer is null or points
        // into guest memory checked for the length the call uses, and
        // every descriptor is the host's for the guest's.
        let r: i64 = match num {
            nr::SOCKET => {
                let h = unsafe { libc::socket(a[0] as i32, a[1] as i32, a[2] as i32) };
                self.install(h, 0)
            }
            nr::SOCKETPAIR => {
                if mem.slice_mut(a[3], 8).is_err() {
                    return Ok(Outcome::Ret(EFAULT));
                }
                let mut sv = [0i32; 2];
                if unsafe {
                    libc::socketpair(a[0] as i32, a[1] as i32, a[2] as i32, sv.as_mut_ptr())
                } < 0
                {
                    errno()
                } else {
                    let g0 = self.install(sv[0], 0);
                    let g1 = self.install(sv[1], 0);
                    tryf!(mem.store::<4>(a[3], g0 as u32 as u64));
                    tryf!(mem.store::<4>(a[3] + 4, g1 as u32 as u64));
                    0
                }
            }
            nr::BIND | nr::CONNECT => {
                let h = fd!(self, a[0]);
                let addr = errno!(guest_ptr(mem, a[1], a[2], false));
                let len = a[2] as u32;
                ret(if num == nr::BIND {
                    unsafe { libc::bind(h, addr as *const libc::sockaddr, len) }
                } else {
                    unsafe { libc::connect(h, addr as *const libc::sockaddr, len) }
                } as i64)
            }
            nr::LISTEN => {
                let h = fd!(self, a[0]);
                ret(unsafe { libc::listen(h, a[1] as i32) } as i64)
            }
            nr::SHUTDOWN => {
                let h = fd!(self, a[0]);
                ret(unsafe { libc::shutdown(h, a[1] as i32) } as i64)
            }
            nr::ACCEPT | nr::ACCEPT4 => {
                let h = fd!(self, a[0]);
                let flags = if num == nr::ACCEPT4 { a[3] as i32 } else { 0 };
                if let Some(wait) = self.must_wait(h, libc::POLLIN) {
                    return Ok(wait);
                }
                let mut len = errno!(read_len(mem, a[2]));
                let addr = errno!(guest_ptr(mem, a[1], len as u64, true));
                let lenp = if a[2] == 0 {
                    std::ptr::null_mut()
                } else {
                    &mut len as *mut u32
                };
                let n = unsafe { libc::accept4(h, addr as *mut libc::sockaddr, lenp, flags) };
                if n >= 0 && a[2] != 0 {
                    tryf!(mem.store::<4>(a[2], len as u64));
                }
                self.install(n, 0)
            }
            nr::GETSOCKNAME | nr::GETPEERNAME => {
                let h = fd!(self, a[0]);
                let mut len = errno!(read_len(mem, a[2]));
                if a[2] == 0 {
                    return Ok(Outcome::Ret(EFAULT));
                }
                let addr = errno!(guest_ptr(mem, a[1], len as u64, true)) as *mut libc::sockaddr;
                let r = if num == nr::GETSOCKNAME {
                    unsafe { libc::getsockname(h, addr, &mut len) }
                } else {
                    unsafe { libc::getpeername(h, addr, &mut len) }
                };
                if r == 0 {
                    tryf!(mem.store::<4>(a[2], len as u64));
                }
                ret(r as i64)
            }
            nr::SENDTO => {
                let h = fd!(self, a[0]);
                if let Some(wait) = self.must_wait_unless_dontwait(h, a[3], libc::POLLOUT) {
                    return Ok(wait);
                }
                let buf = errno!(guest_ptr(mem, a[1], a[2], false));
                let addr = errno!(guest_ptr(mem, a[4], a[5], false));
                ret(unsafe {
                    libc::sendto(
                        h,
                        buf as *const _,
                        a[2] as usize,
                        a[3] as i32,
                        addr as *const libc::sockaddr,
                        a[5] as u32,
                    )
                } as i64)
            }
            nr::RECVFROM => {
                let h = fd!(self, a[0]);
                if let Some(wait) = self.must_wait_unless_dontwait(h, a[3], libc::POLLIN) {
                    return Ok(wait);
                }
                let buf = errno!(guest_ptr(mem, a[1], a[2], true));
                let mut len = errno!(read_len(mem, a[5]));
                let addr = errno!(guest_ptr(mem, a[4], len as u64, true));
                let lenp = if a[5] == 0 {
                    std::ptr::null_mut()
                } else {
                    &mut len as *mut u32
                };
                let n = unsafe {
                    libc::recvfrom(
                        h,
                        buf as *mut _,
                        a[2] as usize,
                        a[3] as i32,
                        addr as *mut libc::sockaddr,
                        lenp,
                    )
                };
                if n >= 0 && a[5] != 0 {
                    tryf!(mem.store::<4>(a[5], len as u64));
                }
                ret(n as i64)
            }
            nr::SETSOCKOPT => {
                let h = fd!(self, a[0]);
                let val = errno!(guest_ptr(mem, a[3], a[4], false));
                ret(unsafe {
                    libc::setsockopt(h, a[1] as i32, a[2] as i32, val as *const _, a[4] as u32)
                } as i64)
            }
            nr::GETSOCKOPT => {
                let h = fd!(self, a[0]);
                if a[4] == 0 {
                    return Ok(Outcome::Ret(EFAULT));
                }
                let mut len = errno!(read_len(mem, a[4]));
                let val = errno!(guest_ptr(mem, a[3], len as u64, true));
                let r = unsafe {
                    libc::getsockopt(h, a[1] as i32, a[2] as i32, val as *mut _, &mut len)
                };
                if r == 0 {
                    tryf!(mem.store::<4>(a[4], len as u64));
                    // SO_PEERCRED's struct ucred: its pid as the program sees it.
                    if a[1] as i32 == libc::SOL_SOCKET && a[2] as i32 == libc::SO_PEERCRED {
                        self.pids.swap_raw(tryf!(mem.slice_mut(a[3], len as u64)));
                    }
                }
                ret(r as i64)
            }
            _ => {
                let h = fd!(self, a[0]);
                let want = if num == nr::SENDMSG {
                    libc::POLLOUT
                } else {
                    libc::POLLIN
                };
                if let Some(wait) = self.must_wait_unless_dontwait(h, a[2], want) {
                    return Ok(wait);
                }
                errno!(self.message(mem, a, h))
            }
        };
        Ok(Outcome::Ret(r))
    }

    /// [`Kernel::must_wait`] for a send or receive on `h` with `flags`,
    /// unless MSG_DONTWAIT makes this one call non-blocking.
    fn must_wait_unless_dontwait(&self, h: i32, flags: u64, events: i16) -> Option<Outcome> {
        if flags & MSG_DONTWAIT != 0 {
            return None;
        }
        self.must_wait(h, events)
    }

    /// `sendmsg(fd, msg, flags)` and `recvmsg`: the guest's `struct
    /// msghdr` rebuilt with host addresses, its control messages copied,
    /// and the descriptors of SCM_RIGHTS translated (guest to host on the
    /// way out; received ones installed in the guest's table). `h` is the
    /// socket's host descriptor.
    fn message(&mut self, mem: &mut Memory, a: [u64; 8], h: i32) -> Result<i64, i64> {
        let send = a[7] == nr::SENDMSG;
        let raw = mem.slice(a[1], 56, perm::R).map_err(|_| EFAULT)?.to_vec();
        let word = |i: usize| u64::from_le_bytes(raw[i..i + 8].try_into().unwrap_or_default());
        let (name, name_len) = (word(0), word(8) as u32);
        let (iov_at, iov_len) = (word(16), word(24));
        let (control_at, control_len) = (word(32), word(40));
        if iov_len > MAX_IOV {
            return Err(-(libc::EMSGSIZE as i64));
        }
        let (mut iov, whole) = host_iovecs(mem, iov_at, iov_len, !send)?;
        if !whole {
            return Err(EFAULT);
        }
        let mut control = if control_at == 0 {
            Vec::new()
        } else {
            mem.slice(control_at, control_len, perm::R)
                .map_err(|_| EFAULT)?
                .to_vec()
        };
        if send {
            self.rights(&mut control, true)?;
        }
        // SAFETY: an all-zero msghdr is valid.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = guest_ptr(mem, name, name_len as u64, !send)? as *mut _;
        msg.msg_namelen = name_len;
        msg.msg_iov = iov.as_mut_ptr();
        msg.msg_iovlen = iov.len();
        if !control.is_empty() {
            msg.msg_control = control.as_mut_ptr() as *mut _;
            msg.msg_controllen = control.len();
        }
        // SAFETY: every pointer in `msg` is valid for its length.
        let n = unsafe {
            if send {
                libc::sendmsg(h, &msg, a[2] as i32)
            } else {
                libc::recvmsg(h, &mut msg, a[2] as i32)
            }
        };
        if n < 0 {
            return Err(errno());
        }
        if !send {
            control.truncate(msg.msg_controllen);
            self.rights(&mut control, false)?;
            if control_at != 0 {
                let out = mem
                    .slice_mut(control_at, control.len() as u64)
                    .map_err(|_| EFAULT)?;
                out.copy_from_slice(&control);
            }
            let hdr = mem.slice_mut(a[1], 56).map_err(|_| EFAULT)?;
            hdr[8..12].copy_from_slice(&msg.msg_namelen.to_le_bytes());
            hdr[40..48].copy_from_slice(&(control.len() as u64).to_le_bytes());
            hdr[48..52].copy_from_slice(&msg.msg_flags.to_le_bytes());
        }
        Ok(n as i64)
    }

    /// Translates the descriptors of every SCM_RIGHTS message in
    /// `control`: guest numbers to host ones (`outgoing`, EBADF for one
    /// that is not open), or received host descriptors installed in the
    /// guest's table and replaced by their guest numbers; and the pid of
    /// every SCM_CREDENTIALS message, the program's to the host's or back.
    fn rights(&mut self, control: &mut [u8], outgoing: bool) -> Result<(), i64> {
        let mut at = 0;
        while at + CMSG_HEADER <= control.len() {
            let len =
                u64::from_le_bytes(control[at..at + 8].try_into().unwrap_or_default()) as usize;
            if len < CMSG_HEADER || at + len > control.len() {
                break;
            }
            let level = i32::from_le_bytes(control[at + 8..at + 12].try_into().unwrap_or_default());
            let kind = i32::from_le_bytes(control[at + 12..at + 16].try_into().unwrap_or_default());
            if level == libc::SOL_SOCKET && kind == libc::SCM_CREDENTIALS {
                // struct ucred's pid, the program's to the host's or back.
                self.pids.swap_raw(&mut control[at + CMSG_HEADER..at + len]);
            }
            if level == libc::SOL_SOCKET && kind == libc::SCM_RIGHTS {
                for slot in control[at + CMSG_HEADER..at + len].chunks_exact_mut(4) {
                    let fd = i32::from_le_bytes(slot.try_into().unwrap_or_default());
                    let to = if outgoing {
                        self.fds.host(fd as i64).ok_or(EBADF)?
                    } else {
                        match self.install(fd, 0) {
                            g if g < 0 => return Err(g),
                            g => g as i32,
                        }
                    };
                    slot.copy_from_slice(&to.to_le_bytes());
                }
            }
            at += (len + 7) & !7;
        }
        Ok(())
    }
}

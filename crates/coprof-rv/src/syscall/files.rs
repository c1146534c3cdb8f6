//! Descriptors and the file system: reads and writes (off the hart when
//! they would wait beside other threads), opening, closing and duplicating
//! descriptors, `fcntl` and `ioctl`, pipes, `stat` and `statx`, links,
//! directories, the working directory and the umask.

use super::{errno, host_iovecs, proc_tasks, ret, Kernel, Outcome, EBADF, EFAULT, EINVAL};
use crate::error::SimError;
use crate::fdtable::MAX_FDS;
use crate::mem::{perm, Memory};
use crate::sysno as nr;
use std::ffi::CString;

/// The calls this module answers.
pub(super) const CALLS: &[u64] = &[
    nr::READ,
    nr::WRITE,
    nr::PREAD64,
    nr::PWRITE64,
    nr::READV,
    nr::WRITEV,
    nr::OPENAT,
    nr::CLOSE,
    nr::LSEEK,
    nr::DUP,
    nr::DUP3,
    nr::FCNTL,
    nr::IOCTL,
    nr::PIPE2,
    nr::FSTAT,
    nr::NEWFSTATAT,
    nr::STATX,
    nr::READLINKAT,
    nr::GETCWD,
    nr::CHDIR,
    nr::FCHDIR,
    nr::FACCESSAT,
    nr::FACCESSAT2,
    nr::UNLINKAT,
    nr::MKDIRAT,
    nr::FCHMODAT,
    nr::TRUNCATE,
    nr::RENAMEAT2,
    nr::LINKAT,
    nr::SYMLINKAT,
    nr::GETDENTS64,
    nr::FSYNC,
    nr::FDATASYNC,
    nr::FTRUNCATE,
    nr::FCHMOD,
    nr::UMASK,
];

impl Kernel {
    /// One of [`CALLS`], number `a[7]`, made at `pc`.
    pub(super) fn file_call(
        &mut self,
        mem: &mut Memory,
        a: [u64; 8],
        pc: u64,
    ) -> Result<Outcome, SimError> {
        let num = a[7];
        let r: i64 = match num {
            nr::READ => {
                let h = fd!(self, a[0]);
                if let Some(i) = self.signalfd_of(h) {
                    return self.read_signalfd(mem, i, h, a[1], a[2], pc);
                }
                let buf = tryf!(mem.slice_mut(a[1], a[2]));
                if let Some(wait) = self.must_wait(h, libc::POLLIN) {
                    return Ok(wait);
                }
                // SAFETY: buf is a valid writable guest range of that length.
                ret(unsafe { libc::read(h, buf.as_mut_ptr() as *mut _, buf.len()) } as i64)
            }
            nr::WRITE => {
                let h = fd!(self, a[0]);
                let buf = tryf!(mem.slice(a[1], a[2], perm::R));
                if let Some(tid) = self.comm_file_of(h) {
                    // As Linux takes it: all of it written, the first
                    // bytes the name.
                    let name = buf.to_vec();
                    self.set_name(tid, &name);
                    return Ok(Outcome::Ret(buf.len() as i64));
                }
                if self.beside_threads() {
                    return Ok(self.write_beside_threads(h, buf));
                }
                // SAFETY: buf is a valid readable guest range.
                ret(unsafe { libc::write(h, buf.as_ptr() as *const _, buf.len()) } as i64)
            }
            nr::PREAD64 | nr::PWRITE64 => {
                let h = fd!(self, a[0]);
                if num == nr::PREAD64 {
                    let buf = tryf!(mem.slice_mut(a[1], a[2]));
                    // SAFETY: valid writable range.
                    ret(unsafe {
                        libc::pread(h, buf.as_mut_ptr() as *mut _, buf.len(), a[3] as i64)
                    } as i64)
                } else {
                    let buf = tryf!(mem.slice(a[1], a[2], perm::R));
                    if self.comm_file_of(h).is_some() {
                        // A sequential file, as Linux's `seq_file`s are.
                        return Ok(Outcome::Ret(-(libc::ESPIPE as i64)));
                    }
                    // SAFETY: valid readable range.
                    ret(
                        unsafe { libc::pwrite(h, buf.as_ptr() as *const _, buf.len(), a[3] as i64) }
                            as i64,
                    )
                }
            }
            nr::READV | nr::WRITEV => {
                let h = fd!(self, a[0]);
                let n = a[2];
                if n > 1024 {
                    EINVAL
                } else {
                    let (iov, whole) = errno!(host_iovecs(mem, a[1], n, num == nr::READV));
                    // Linux copies segment by segment and stops at the
                    // first bad one: a short transfer of the good ones
                    // before it, EFAULT if there are none (as qemu-user and
                    // regular files do).
                    if !whole && !iov.iter().any(|v| v.iov_len > 0) {
                        return Ok(Outcome::Ret(EFAULT));
                    }
                    if num == nr::WRITEV {
                        if let Some(tid) = self.comm_file_of(h) {
                            return Ok(Outcome::Ret(self.writev_comm(tid, &iov)));
                        }
                    }
                    let events = if num == nr::READV {
                        libc::POLLIN
                    } else {
                        libc::POLLOUT
                    };
                    if let Some(wait) = self.must_wait(h, events) {
                        return Ok(wait);
                    }
                    // SAFETY: every iovec points into a validated guest range.
                    ret(unsafe {
                        if num == nr::READV {
                            libc::readv(h, iov.as_ptr(), iov.len() as i32)
                        } else {
                            libc::writev(h, iov.as_ptr(), iov.len() as i32)
                        }
                    } as i64)
                }
            }
            nr::OPENAT => {
                // The name is read once, first (a bad pointer is EFAULT
                // even beside a bad descriptor, as in `at_path`).
                let guest = errno!(mem.read_cstr(a[1], 4096).map_err(|_| EFAULT));
                let guest = errno!(self.own_relative(a[0], guest));
                if let Some(file) = self.proc_self(mem, &guest, a[2] as i32) {
                    let h = errno!(file);
                    return Ok(Outcome::Ret(self.install(h, 0)));
                }
                let path = errno!(self.host_path(guest));
                let dir = errno!(self.dirfd(a[0]));
                // SAFETY: path is a valid C string; flags are Linux's.
                let h =
                    unsafe { libc::openat(dir, path.as_ptr(), a[2] as i32, a[3] as libc::c_uint) };
                if h < 0 {
                    errno()
                } else {
                    match self.fds.insert(h, 0) {
                        Some(g) => g,
                        None => {
                            // SAFETY: closing the descriptor we just opened.
                            unsafe { libc::close(h) };
                            -(libc::EMFILE as i64)
                        }
                    }
                }
            }
            nr::CLOSE => match self.fds.remove(a[0] as i64) {
                // Never close the host's own standard streams.
                Some(h) if h <= 2 => 0,
                // SAFETY: a descriptor the guest owned.
                Some(h) => ret(unsafe { libc::close(h) } as i64),
                None => EBADF,
            },
            nr::LSEEK => {
                let h = fd!(self, a[0]);
                // SAFETY: plain descriptor call.
                ret(unsafe { libc::lseek(h, a[1] as i64, a[2] as i32) })
            }
            nr::DUP => {
                let h = fd!(self, a[0]);
                // SAFETY: plain descriptor call.
                let n = unsafe { libc::dup(h) };
                self.install(n, 0)
            }
            nr::DUP3 => {
                let h = fd!(self, a[0]);
                let (old, new) = (a[0] as i64, a[1] as i32 as i64);
                if old == new || a[2] & !(libc::O_CLOEXEC as u64) != 0 {
                    EINVAL
                } else if !(0..MAX_FDS as i64).contains(&new) {
                    EBADF
                } else {
                    // The host descriptor carries the guest's FD_CLOEXEC,
                    // for an exec (crate::syscall's `exec`).
                    let cmd = if a[2] & libc::O_CLOEXEC as u64 != 0 {
                        libc::F_DUPFD_CLOEXEC
                    } else {
                        libc::F_DUPFD
                    };
                    // SAFETY: plain descriptor call.
                    let n = unsafe { libc::fcntl(h, cmd, 3) };
                    if n < 0 {
                        errno()
                    } else {
                        if let Some(prev) = self.fds.insert_at(new as usize, n) {
                            if prev > 2 {
                                // SAFETY: the replaced guest descriptor.
                                unsafe { libc::close(prev) };
                            }
                        }
                        new
                    }
                }
            }
            nr::FCNTL => {
                let h = fd!(self, a[0]);
                let cmd = a[1] as i32;
                match cmd {
                    libc::F_DUPFD | libc::F_DUPFD_CLOEXEC if a[2] >= MAX_FDS as u64 => EINVAL,
                    libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => {
                        // SAFETY: plain descriptor call (host numbers from 3
                        // up: 0, 1 and 2 are the host's own).
                        let n = unsafe { libc::fcntl(h, cmd, 3) };
                        self.install(n, a[2] as usize)
                    }
                    libc::F_GETFD | libc::F_GETFL => {
                        // SAFETY: plain descriptor call.
                        ret(unsafe { libc::fcntl(h, cmd) } as i64)
                    }
                    libc::F_SETFD | libc::F_SETFL => {
                        // SAFETY: plain descriptor call.
                        ret(unsafe { libc::fcntl(h, cmd, a[2] as i32) } as i64)
                    }
                    libc::F_GETLK | libc::F_SETLK | libc::F_SETLKW => {
                        // struct flock has the same layout on RV64 and x86-64.
                        let buf = tryf!(mem.slice_mut(a[2], 32));
                        // SAFETY: 32 valid bytes, the size of struct flock.
                        ret(unsafe { libc::fcntl(h, cmd, buf.as_mut_ptr()) } as i64)
                    }
                    _ => EINVAL,
                }
            }
            nr::IOCTL => {
                let h = fd!(self, a[0]);
                // Requests whose argument points to a structure of the
                // same layout on both sides, of this many bytes: TCGETS
                // and TCSETS* (the kernel's struct termios), TIOCGWINSZ
                // and TIOCSWINSZ (struct winsize), and an int for
                // TIOCGPGRP, TIOCSPGRP, FIONREAD, FIONBIO,
                // FS_IOC_GETFLAGS and FS_IOC_SETFLAGS (whose `long` in
                // the request's size the kernel reads as an int).
                let len = match a[1] {
                    0x5401..=0x5404 => Some(36),
                    0x5413 | 0x5414 => Some(8),
                    0x540f | 0x5410 | 0x541b | 0x5421 | 0x8008_6601 | 0x4008_6602 => Some(4),
                    _ => None,
                };
                match len {
                    Some(len) => {
                        let mut tmp = [0u8; 64];
                        let guest = tryf!(mem.slice_mut(a[2], len));
                        tmp[..len as usize].copy_from_slice(guest);
                        // A terminal's foreground group, TIOCGPGRP's and
                        // TIOCSPGRP's int, is a group id both ways.
                        let group = matches!(a[1], 0x540f | 0x5410);
                        if group {
                            self.pids.swap_raw(&mut tmp);
                        }
                        // SAFETY: tmp is larger than either structure.
                        let r = unsafe { libc::ioctl(h, a[1] as _, tmp.as_mut_ptr()) };
                        if r >= 0 {
                            if group {
                                self.pids.swap_raw(&mut tmp);
                            }
                            guest.copy_from_slice(&tmp[..len as usize]);
                        }
                        ret(r as i64)
                    }
                    // Others: as a descriptor that knows none of them.
                    None => -(libc::ENOTTY as i64),
                }
            }
            nr::PIPE2 => {
                let mut p = [0i32; 2];
                // SAFETY: p has room for two descriptors.
                let r = unsafe { libc::pipe2(p.as_mut_ptr(), a[1] as i32) };
                if r < 0 {
                    errno()
                } else {
                    let g0 = self.fds.insert(p[0], 0).unwrap_or(-1);
                    let g1 = self.fds.insert(p[1], 0).unwrap_or(-1);
                    let mut out = [0u8; 8];
                    out[..4].copy_from_slice(&(g0 as i32).to_le_bytes());
                    out[4..].copy_from_slice(&(g1 as i32).to_le_bytes());
                    tryf!(mem.slice_mut(a[0], 8)).copy_from_slice(&out);
                    0
                }
            }
            nr::FSTAT => {
                let h = fd!(self, a[0]);
                // SAFETY: st is a valid out-parameter.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                let r = unsafe { libc::fstat(h, &mut st) };
                self.put_stat(mem, r, &st, a[1])
            }
            nr::NEWFSTATAT => {
                let (dir, path) = errno!(self.at_path(mem, a[0], a[1]));
                // SAFETY: valid C string and out-parameter.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                let r = unsafe { libc::fstatat(dir, path.as_ptr(), &mut st, a[3] as i32) };
                self.put_stat(mem, r, &st, a[2])
            }
            nr::STATX => {
                let (dir, path) = errno!(self.at_path(mem, a[0], a[1]));
                // struct statx is the same on every architecture.
                let buf = tryf!(mem.slice_mut(a[4], 256));
                // SAFETY: valid C string and a 256-byte buffer.
                ret(unsafe {
                    libc::syscall(
                        libc::SYS_statx,
                        dir,
                        path.as_ptr(),
                        a[2] as i32,
                        a[3] as u32,
                        buf.as_mut_ptr(),
                    )
                })
            }
            nr::READLINKAT => {
                // Linux refuses a buffer of no bytes before it reads the name.
                if a[3] as i32 <= 0 {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let raw = tryf!(mem.read_cstr(a[1], 4096));
                let raw = errno!(self.own_relative(a[0], raw));
                if Self::is_exe(&self.host_proc_path(raw)) {
                    let exe = self.exe.as_os_str().as_encoded_bytes().to_vec();
                    let n = exe.len().min(a[3] as usize);
                    tryf!(mem.slice_mut(a[2], n as u64)).copy_from_slice(&exe[..n]);
                    n as i64
                } else {
                    let (dir, path) = errno!(self.at_path(mem, a[0], a[1]));
                    let buf = tryf!(mem.slice_mut(a[2], a[3]));
                    // SAFETY: valid C string and buffer.
                    ret(unsafe {
                        libc::readlinkat(dir, path.as_ptr(), buf.as_mut_ptr() as *mut _, buf.len())
                    } as i64)
                }
            }
            nr::GETCWD => {
                let buf = tryf!(mem.slice_mut(a[0], a[1]));
                // SAFETY: the raw call returns the length including the NUL.
                ret(unsafe { libc::syscall(libc::SYS_getcwd, buf.as_mut_ptr(), buf.len()) })
            }
            nr::CHDIR => match self.path(mem, a[0]) {
                // SAFETY: valid C string.
                Ok(p) => ret(unsafe { libc::chdir(p.as_ptr()) } as i64),
                Err(e) => e,
            },
            nr::FCHDIR => {
                let h = fd!(self, a[0]);
                // SAFETY: plain descriptor call.
                ret(unsafe { libc::fchdir(h) } as i64)
            }
            nr::FACCESSAT
            | nr::FACCESSAT2
            | nr::UNLINKAT
            | nr::MKDIRAT
            | nr::FCHMODAT
            | nr::TRUNCATE => {
                let (dir, pa) = if num == nr::TRUNCATE {
                    (Ok(libc::AT_FDCWD), a[0])
                } else {
                    (self.dirfd(a[0]), a[1])
                };
                let path = errno!(self.path(mem, pa));
                let dir = errno!(dir);
                // SAFETY: valid C strings; plain calls.
                ret(unsafe {
                    match num {
                        nr::FACCESSAT => libc::faccessat(dir, path.as_ptr(), a[2] as i32, 0),
                        nr::FACCESSAT2 => {
                            libc::faccessat(dir, path.as_ptr(), a[2] as i32, a[3] as i32)
                        }
                        nr::UNLINKAT => libc::unlinkat(dir, path.as_ptr(), a[2] as i32),
                        nr::MKDIRAT => libc::mkdirat(dir, path.as_ptr(), a[2] as libc::mode_t),
                        nr::FCHMODAT => libc::fchmodat(dir, path.as_ptr(), a[2] as libc::mode_t, 0),
                        _ => libc::truncate(path.as_ptr(), a[1] as i64),
                    }
                } as i64)
            }
            nr::RENAMEAT2 | nr::LINKAT => {
                // Linux reads both names before it looks at either directory.
                let (p1, p2) = (errno!(self.path(mem, a[1])), errno!(self.path(mem, a[3])));
                let (d1, d2) = (errno!(self.dirfd(a[0])), errno!(self.dirfd(a[2])));
                // SAFETY: valid C strings.
                ret(unsafe {
                    if num == nr::RENAMEAT2 {
                        libc::syscall(
                            libc::SYS_renameat2,
                            d1,
                            p1.as_ptr(),
                            d2,
                            p2.as_ptr(),
                            a[4] as u32,
                        )
                    } else {
                        libc::linkat(d1, p1.as_ptr(), d2, p2.as_ptr(), a[4] as i32) as i64
                    }
                })
            }
            nr::SYMLINKAT => {
                let target = match mem
                    .read_cstr(a[0], 4096)
                    .ok()
                    .and_then(|t| CString::new(t).ok())
                {
                    Some(t) => t,
                    None => return Ok(Outcome::Ret(EFAULT)),
                };
                let (dir, path) = errno!(self.at_path(mem, a[1], a[2]));
                // SAFETY: valid C strings.
                ret(unsafe { libc::symlinkat(target.as_ptr(), dir, path.as_ptr()) } as i64)
            }
            nr::GETDENTS64 => {
                let h = fd!(self, a[0]);
                // struct linux_dirent64 is the same on every architecture.
                let buf = tryf!(mem.slice_mut(a[1], a[2]));
                if proc_tasks::proc_dir_of(h) == Some(proc_tasks::ProcDir::Tasks) {
                    return Ok(Outcome::Ret(self.list_threads(h, buf)));
                }
                // SAFETY: valid buffer.
                ret(unsafe { libc::syscall(libc::SYS_getdents64, h, buf.as_mut_ptr(), buf.len()) })
            }
            nr::FSYNC | nr::FDATASYNC | nr::FTRUNCATE | nr::FCHMOD => {
                let h = fd!(self, a[0]);
                // SAFETY: plain descriptor calls.
                ret(unsafe {
                    match num {
                        nr::FSYNC => libc::fsync(h),
                        nr::FDATASYNC => libc::fdatasync(h),
                        nr::FTRUNCATE => libc::ftruncate(h, a[1] as i64),
                        _ => libc::fchmod(h, a[1] as libc::mode_t),
                    }
                } as i64)
            }
            nr::UMASK => {
                // SAFETY: plain call.
                (unsafe { libc::umask(a[0] as libc::mode_t) }) as i64
            }
            _ => unreachable!("file_call of a call not in CALLS"),
        };
        Ok(Outcome::Ret(r))
    }
}

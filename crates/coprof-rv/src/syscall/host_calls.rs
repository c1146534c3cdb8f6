//! System calls the host answers for the guest once its descriptors and
//! pointers are translated: file advice, space, locks, owners and times,
//! file-system statistics, copies between descriptors, process groups and
//! sessions, priorities, ids and credentials, scheduling queries,
//! `prctl`'s thread name, `membarrier`, `getcpu`, `personality`'s query,
//! `close_range` over the guest's table, `mknodat` (FIFOs), extended
//! attributes (`*xattr`, by path, by link and by descriptor), and the
//! descriptors of `memfd_create`, `eventfd2`, `timerfd_*` and inotify. Every structure here has the same layout on RV64 and
//! x86-64 (`struct statfs`, `struct timespec`, `struct itimerspec`,
//! `struct sched_param`), so it goes through in place; only addresses move.

use super::{errno, guest_ptr, put_struct, ret, Kernel, Outcome, EBADF, EFAULT, EINVAL, ESRCH};
use crate::error::SimError;
use crate::mem::Memory;
use crate::sysno as nr;
use std::ffi::CString;

/// The calls this module answers.
pub(super) const CALLS: &[u64] = &[
    nr::FADVISE64,
    nr::FALLOCATE,
    nr::FLOCK,
    nr::FCHOWN,
    nr::FCHOWNAT,
    nr::UTIMENSAT,
    nr::STATFS,
    nr::FSTATFS,
    nr::SYNC,
    nr::SYNCFS,
    nr::SENDFILE,
    nr::COPY_FILE_RANGE,
    nr::GETPGID,
    nr::SETPGID,
    nr::GETSID,
    nr::SETSID,
    nr::GETPRIORITY,
    nr::SETPRIORITY,
    nr::GETRESUID,
    nr::GETRESGID,
    nr::GETGROUPS,
    nr::PRCTL,
    nr::SCHED_GETSCHEDULER,
    nr::SCHED_GETPARAM,
    nr::SCHED_GET_PRIORITY_MAX,
    nr::SCHED_GET_PRIORITY_MIN,
    nr::SCHED_SETAFFINITY,
    nr::MEMBARRIER,
    nr::MEMFD_CREATE,
    nr::EVENTFD2,
    nr::TIMERFD_CREATE,
    nr::TIMERFD_SETTIME,
    nr::TIMERFD_GETTIME,
    nr::CLOSE_RANGE,
    nr::MKNODAT,
    nr::GETCPU,
    nr::PERSONALITY,
    nr::INOTIFY_INIT1,
    nr::INOTIFY_ADD_WATCH,
    nr::INOTIFY_RM_WATCH,
    nr::SETUID,
    nr::SETGID,
    nr::SETREUID,
    nr::SETREGID,
    nr::SETRESUID,
    nr::SETRESGID,
    nr::SETGROUPS,
    nr::CAPGET,
    nr::SETXATTR,
    nr::LSETXATTR,
    nr::FSETXATTR,
    nr::GETXATTR,
    nr::LGETXATTR,
    nr::FGETXATTR,
    nr::LISTXATTR,
    nr::LLISTXATTR,
    nr::FLISTXATTR,
    nr::REMOVEXATTR,
    nr::LREMOVEXATTR,
    nr::FREMOVEXATTR,
];

/// `close_range` flags (include/uapi/linux/close_range.h).
const CLOSE_RANGE_UNSHARE: u64 = 2;
const CLOSE_RANGE_CLOEXEC: u64 = 4;

/// `prctl` options (include/uapi/linux/prctl.h).
const PR_SET_PDEATHSIG: u64 = 1;
const PR_GET_PDEATHSIG: u64 = 2;
const PR_GET_DUMPABLE: u64 = 3;
const PR_SET_DUMPABLE: u64 = 4;
const PR_SET_NAME: u64 = 15;
const PR_GET_NAME: u64 = 16;
const PR_SET_NO_NEW_PRIVS: u64 = 38;
const PR_GET_NO_NEW_PRIVS: u64 = 39;

/// `membarrier` commands that one hart makes trivially true: every
/// thread's stores are seen in order by every other (GLOBAL, and
/// PRIVATE_EXPEDITED with its registration).
const MEMBARRIER_GLOBAL: u64 = 1;
const MEMBARRIER_PRIVATE_EXPEDITED: u64 = 8;
const MEMBARRIER_REGISTER_PRIVATE_EXPEDITED: u64 = 16;
const MEMBARRIERS: u64 =
    MEMBARRIER_GLOBAL | MEMBARRIER_PRIVATE_EXPEDITED | MEMBARRIER_REGISTER_PRIVATE_EXPEDITED;

impl Kernel {
    /// One of [`CALLS`], number `a[7]`.
    pub(super) fn host_call(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<Outcome, SimError> {
        let num = a[7];
        // SAFETY (for the raw calls below): every pointer is null or points
        // into guest memory checked for the length the call uses, and
        // every descriptor is the host's for the guest's.
        let r: i64 = match num {
            nr::FADVISE64 | nr::FALLOCATE | nr::FLOCK | nr::FCHOWN | nr::SYNCFS => {
                let h = fd!(self, a[0]);
                ret(match num {
                    nr::FADVISE64 => unsafe {
                        libc::syscall(libc::SYS_fadvise64, h, a[1], a[2], a[3] as i32)
                    },
                    nr::FALLOCATE => unsafe {
                        libc::syscall(libc::SYS_fallocate, h, a[1] as i32, a[2], a[3])
                    },
                    nr::FLOCK => unsafe { libc::flock(h, a[1] as i32) as i64 },
                    nr::FCHOWN => unsafe { libc::fchown(h, a[1] as u32, a[2] as u32) as i64 },
                    _ => unsafe { libc::syncfs(h) as i64 },
                })
            }
            nr::FCHOWNAT => {
                let (dir, path) = errno!(self.at_path(mem, a[0], a[1]));
                ret(unsafe {
                    libc::fchownat(dir, path.as_ptr(), a[2] as u32, a[3] as u32, a[4] as i32)
                } as i64)
            }
            nr::UTIMENSAT => {
                // A null path sets the times of the descriptor itself
                // (futimens).
                let dir = errno!(self.dirfd(a[0]));
                let path = if a[1] == 0 {
                    None
                } else {
                    Some(errno!(self.path(mem, a[1])))
                };
                let times = errno!(guest_ptr(mem, a[2], 32, false));
                let p = path.as_ref().map_or(std::ptr::null(), |p| p.as_ptr());
                ret(unsafe { libc::syscall(libc::SYS_utimensat, dir, p, times, a[3] as i32) })
            }
            nr::STATFS | nr::FSTATFS => {
                let mut st: libc::statfs = unsafe { std::mem::zeroed() };
                let r = if num == nr::STATFS {
                    let path = errno!(self.path(mem, a[0]));
                    unsafe { libc::statfs(path.as_ptr(), &mut st) }
                } else {
                    let h = fd!(self, a[0]);
                    unsafe { libc::fstatfs(h, &mut st) }
                };
                if r < 0 {
                    errno()
                } else {
                    errno!(put_struct(mem, a[1], &st));
                    0
                }
            }
            nr::SYNC => {
                unsafe { libc::sync() };
                0
            }
            nr::SENDFILE => {
                let (out, input) = (fd!(self, a[0]), fd!(self, a[1]));
                let off = errno!(guest_ptr(mem, a[2], 8, true));
                ret(unsafe { libc::syscall(libc::SYS_sendfile, out, input, off, a[3]) })
            }
            nr::COPY_FILE_RANGE => {
                let (input, out) = (fd!(self, a[0]), fd!(self, a[2]));
                let off_in = errno!(guest_ptr(mem, a[1], 8, true));
                let off_out = errno!(guest_ptr(mem, a[3], 8, true));
                ret(unsafe {
                    libc::syscall(
                        libc::SYS_copy_file_range,
                        input,
                        off_in,
                        out,
                        off_out,
                        a[4],
                        a[5] as u32,
                    )
                })
            }
            // Process and group ids both ways through the program's pids.
            nr::GETPGID | nr::GETSID => {
                let pid = self.pids.host(a[0] as i32 as i64) as i32;
                let r = if num == nr::GETPGID {
                    unsafe { libc::getpgid(pid) }
                } else {
                    unsafe { libc::getsid(pid) }
                };
                self.seen_id(r as i64)
            }
            nr::SETPGID => {
                let pid = self.pids.host(a[0] as i32 as i64) as i32;
                let group = self.pids.host(a[1] as i32 as i64) as i32;
                ret(unsafe { libc::setpgid(pid, group) } as i64)
            }
            nr::SETSID => self.seen_id(unsafe { libc::setsid() } as i64),
            nr::GETPRIORITY | nr::SETPRIORITY => {
                // The raw calls: getpriority answers 20 − nice, as the
                // guest's C library expects of the kernel.
                let n = if num == nr::GETPRIORITY {
                    libc::SYS_getpriority
                } else {
                    libc::SYS_setpriority
                };
                // PRIO_PROCESS and PRIO_PGRP name a process or a group.
                let who = match a[0] as u32 {
                    libc::PRIO_PROCESS | libc::PRIO_PGRP => self.pids.host(a[1] as i32 as i64),
                    _ => a[1] as i32 as i64,
                };
                ret(unsafe { libc::syscall(n, a[0] as i32, who as i32, a[2] as i32) })
            }
            nr::GETRESUID | nr::GETRESGID => {
                let (mut r, mut e, mut s) = (0u32, 0u32, 0u32);
                let rc = if num == nr::GETRESUID {
                    unsafe { libc::getresuid(&mut r, &mut e, &mut s) }
                } else {
                    unsafe { libc::getresgid(&mut r, &mut e, &mut s) }
                };
                if rc < 0 {
                    errno()
                } else {
                    for (at, v) in [(a[0], r), (a[1], e), (a[2], s)] {
                        tryf!(mem.store::<4>(at, v as u64));
                    }
                    0
                }
            }
            nr::GETGROUPS => {
                let size = a[0] as i32;
                if size < 0 {
                    EINVAL
                } else {
                    let list = errno!(guest_ptr(mem, a[1], size as u64 * 4, true));
                    let list = if size == 0 {
                        std::ptr::null_mut()
                    } else {
                        list
                    };
                    ret(unsafe { libc::getgroups(size, list as *mut libc::gid_t) } as i64)
                }
            }
            nr::PRCTL => errno!(self.prctl(mem, a)),
            nr::SCHED_GETSCHEDULER | nr::SCHED_GETPARAM | nr::SCHED_SETAFFINITY
                if !self.is_me(a[0]) && !self.tids.contains(&(a[0] as i32 as i64)) =>
            {
                ESRCH
            }
            nr::SCHED_GETSCHEDULER => ret(unsafe { libc::sched_getscheduler(0) } as i64),
            nr::SCHED_GETPARAM => {
                let mut p = libc::sched_param { sched_priority: 0 };
                if unsafe { libc::sched_getparam(0, &mut p) } < 0 {
                    errno()
                } else {
                    errno!(put_struct(mem, a[1], &p));
                    0
                }
            }
            nr::SCHED_GET_PRIORITY_MAX => {
                ret(unsafe { libc::sched_get_priority_max(a[0] as i32) } as i64)
            }
            nr::SCHED_GET_PRIORITY_MIN => {
                ret(unsafe { libc::sched_get_priority_min(a[0] as i32) } as i64)
            }
            nr::SCHED_SETAFFINITY => {
                // The simulated threads share one hart, whichever CPUs they
                // ask for: the mask is checked, as Linux checks it (it must
                // hold a CPU the host has), and kept by nobody.
                let mask = errno!(guest_ptr(mem, a[2], a[1], false));
                let mut host: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                let got = unsafe {
                    libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut host)
                };
                let bytes = unsafe { std::slice::from_raw_parts(mask, a[1] as usize) };
                let host_bytes = unsafe {
                    std::slice::from_raw_parts(
                        &host as *const libc::cpu_set_t as *const u8,
                        std::mem::size_of::<libc::cpu_set_t>(),
                    )
                };
                let meets = bytes.iter().zip(host_bytes).any(|(g, h)| g & h != 0);
                if got < 0 || !meets {
                    EINVAL
                } else {
                    0
                }
            }
            nr::MEMBARRIER => match a[0] {
                0 => MEMBARRIERS as i64,
                c if c & MEMBARRIERS == c && c.count_ones() == 1 && a[1] == 0 => 0,
                _ => EINVAL,
            },
            nr::MEMFD_CREATE => {
                let name = tryf!(mem.read_cstr(a[0], 250));
                let name = errno!(CString::new(name).map_err(|_| EINVAL));
                let h =
                    unsafe { libc::syscall(libc::SYS_memfd_create, name.as_ptr(), a[1] as u32) };
                self.install(h as i32, 0)
            }
            nr::EVENTFD2 => {
                let h = unsafe { libc::eventfd(a[0] as u32, a[1] as i32) };
                self.install(h, 0)
            }
            nr::TIMERFD_CREATE => {
                let h = unsafe { libc::timerfd_create(a[0] as i32, a[1] as i32) };
                self.install(h, 0)
            }
            nr::TIMERFD_SETTIME => {
                let h = fd!(self, a[0]);
                let new = errno!(guest_ptr(mem, a[2], 32, false));
                let old = errno!(guest_ptr(mem, a[3], 32, true));
                ret(unsafe { libc::syscall(libc::SYS_timerfd_settime, h, a[1] as i32, new, old) })
            }
            nr::TIMERFD_GETTIME => {
                let h = fd!(self, a[0]);
                let cur = errno!(guest_ptr(mem, a[1], 32, true));
                if cur.is_null() {
                    EFAULT
                } else {
                    ret(unsafe { libc::syscall(libc::SYS_timerfd_gettime, h, cur) })
                }
            }
            nr::CLOSE_RANGE => {
                // Over the guest's own numbers: coprof's descriptors are
                // not the program's to close.
                let (first, last, flags) = (a[0] as u32, a[1] as u32, a[2]);
                if flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 || first > last {
                    EINVAL
                } else {
                    let last = last.min(super::MAX_FDS as u32 - 1);
                    for fd in first..=last {
                        if flags & CLOSE_RANGE_CLOEXEC != 0 {
                            if let Some(h) = self.fds.host(fd as i64) {
                                unsafe { libc::fcntl(h, libc::F_SETFD, libc::FD_CLOEXEC) };
                            }
                        } else if let Some(h) = self.fds.remove(fd as i64) {
                            // As `close`: never the host's own standard
                            // streams.
                            if h > 2 {
                                unsafe { libc::close(h) };
                            }
                        }
                    }
                    0
                }
            }
            nr::MKNODAT => {
                let (dir, path) = errno!(self.at_path(mem, a[0], a[1]));
                ret(unsafe { libc::mknodat(dir, path.as_ptr(), a[2] as u32, a[3]) } as i64)
            }
            nr::GETCPU => {
                // One hart: CPU 0, node 0 (as `rseq` reports cpu_id 0).
                for at in [a[0], a[1]] {
                    if at != 0 {
                        tryf!(mem.store::<4>(at, 0));
                    }
                }
                0
            }
            nr::PERSONALITY => {
                // The query (0xffffffff) answers PER_LINUX; a program may
                // set PER_LINUX again; other personalities are EINVAL.
                match a[0] as u32 {
                    0xffff_ffff | 0 => 0,
                    _ => EINVAL,
                }
            }
            nr::SETXATTR..=nr::FREMOVEXATTR => return self.xattr(mem, a),
            nr::INOTIFY_INIT1 => {
                let h = unsafe { libc::inotify_init1(a[0] as i32) };
                self.install(h, 0)
            }
            nr::INOTIFY_ADD_WATCH => {
                let h = fd!(self, a[0]);
                let path = errno!(self.path(mem, a[1]));
                ret(unsafe { libc::inotify_add_watch(h, path.as_ptr(), a[2] as u32) } as i64)
            }
            nr::INOTIFY_RM_WATCH => {
                let h = fd!(self, a[0]);
                ret(unsafe { libc::inotify_rm_watch(h, a[1] as i32) } as i64)
            }
            nr::SETUID
            | nr::SETGID
            | nr::SETREUID
            | nr::SETREGID
            | nr::SETRESUID
            | nr::SETRESGID => {
                // The host process's credentials are the program's: the
                // raw calls, which set them for this thread only, as
                // Linux's do (the C library makes them process-wide by
                // calling them in every thread).
                let n = match num {
                    nr::SETUID => libc::SYS_setuid,
                    nr::SETGID => libc::SYS_setgid,
                    nr::SETREUID => libc::SYS_setreuid,
                    nr::SETREGID => libc::SYS_setregid,
                    nr::SETRESUID => libc::SYS_setresuid,
                    _ => libc::SYS_setresgid,
                };
                ret(unsafe { libc::syscall(n, a[0] as u32, a[1] as u32, a[2] as u32) })
            }
            nr::SETGROUPS => {
                let list = errno!(guest_ptr(mem, a[1], a[0].min(1 << 16) * 4, false));
                ret(unsafe { libc::syscall(libc::SYS_setgroups, a[0], list) })
            }
            nr::CAPGET => {
                // struct __user_cap_header_struct (version, pid) and up to
                // two __user_cap_data_struct (12 bytes each).
                let header = errno!(guest_ptr(mem, a[0], 8, true));
                let data = errno!(guest_ptr(mem, a[1], 24, true));
                ret(unsafe { libc::syscall(libc::SYS_capget, header, data) })
            }
            _ => unreachable!("host_call of a call not in CALLS"),
        };
        Ok(Outcome::Ret(r))
    }

    /// `prctl(option, …)`: a thread's name (PR_SET_NAME, PR_GET_NAME),
    /// kept by the simulator since the host thread is coprof's; the
    /// parent-death signal, the dumpable flag and no-new-privileges, which
    /// are the host process's and so the guest's. Other options are
    /// EINVAL, as Linux answers an option it does not know.
    fn prctl(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<i64, i64> {
        match a[0] {
            PR_SET_NAME => {
                let raw = mem.read_cstr(a[1], 4096).map_err(|_| EFAULT)?;
                self.set_name(self.tid, &raw);
                Ok(0)
            }
            PR_GET_NAME => {
                let name = self.thread_name();
                mem.slice_mut(a[1], 16)
                    .map_err(|_| EFAULT)?
                    .copy_from_slice(&name);
                Ok(0)
            }
            PR_SET_PDEATHSIG | PR_SET_DUMPABLE | PR_SET_NO_NEW_PRIVS | PR_GET_DUMPABLE
            | PR_GET_NO_NEW_PRIVS => {
                // SAFETY: plain call with integer arguments.
                Ok(ret(
                    unsafe { libc::prctl(a[0] as i32, a[1], a[2], a[3], a[4]) } as i64,
                ))
            }
            PR_GET_PDEATHSIG => {
                let mut sig = 0i32;
                // SAFETY: a pointer to a local int.
                if unsafe { libc::prctl(PR_GET_PDEATHSIG as i32, &mut sig) } < 0 {
                    return Ok(errno());
                }
                mem.store::<4>(a[1], sig as u32 as u64)
                    .map_err(|_| EFAULT)?;
                Ok(0)
            }
            _ => Err(EINVAL),
        }
    }

    /// Names thread `tid` by `raw`, as Linux's `set_task_comm` does: its
    /// bytes up to the first NUL, 15 at most.
    pub(super) fn set_name(&mut self, tid: i64, raw: &[u8]) {
        let raw = &raw[..raw.iter().position(|&b| b == 0).unwrap_or(raw.len())];
        let mut name = [0u8; 16];
        let n = raw.len().min(15);
        name[..n].copy_from_slice(&raw[..n]);
        match self.names.iter_mut().find(|(t, _)| *t == tid) {
            Some(entry) => entry.1 = name,
            None => self.names.push((tid, name)),
        }
    }

    /// The running thread's name: the one it set, or, as Linux starts every
    /// thread, the first 15 bytes of the program file's name.
    fn thread_name(&self) -> [u8; 16] {
        self.name_of(self.tid)
    }

    /// Thread `tid`'s name, as [`thread_name`](Self::thread_name) says.
    /// The names threads gave themselves, by id, as text.
    pub(crate) fn thread_names(&self) -> std::collections::BTreeMap<u64, String> {
        (self.names.iter())
            .map(|(tid, name)| {
                let end = name.iter().position(|&b| b == 0).unwrap_or(16);
                (
                    *tid as u64,
                    String::from_utf8_lossy(&name[..end]).into_owned(),
                )
            })
            .collect()
    }

    pub(super) fn name_of(&self, tid: i64) -> [u8; 16] {
        if let Some((_, name)) = self.names.iter().find(|(t, _)| *t == tid) {
            return *name;
        }
        let mut name = [0u8; 16];
        let file = self
            .exe
            .file_name()
            .map(|f| f.as_encoded_bytes())
            .unwrap_or_default();
        let n = file.len().min(15);
        name[..n].copy_from_slice(&file[..n]);
        name
    }
}
impl Kernel {
    /// The extended-attribute calls: `set`, `get`, `list` and `remove`,
    /// each on a path (following a last symbolic link), on the link
    /// itself (`l`) or on a descriptor (`f`). Names and values go through
    /// as they are: the host checks them as Linux would.
    fn xattr(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<Outcome, SimError> {
        let num = a[7];
        // What the call acts on: 0 for a path, 1 for a link, 2 for a
        // descriptor, the calls coming in threes in that order.
        let on = (num - nr::SETXATTR) % 3;
        let (path, fd) = if on == 2 {
            (None, fd!(self, a[0]))
        } else {
            (Some(errno!(self.path(mem, a[0]))), -1)
        };
        let p = path.as_ref().map_or(std::ptr::null(), |p| p.as_ptr());
        let name = || -> Result<CString, i64> {
            CString::new(mem.read_cstr(a[1], 4096).map_err(|_| EFAULT)?).map_err(|_| EINVAL)
        };
        // SAFETY: the path and name are C strings, the buffers null or
        // checked for their length in guest memory, the descriptor the
        // host's for the guest's.
        let r = match num {
            nr::SETXATTR..=nr::FSETXATTR => {
                let name = errno!(name());
                let value = errno!(guest_ptr(mem, a[2], a[3], false)) as *const libc::c_void;
                let (n, size, flags) = (name.as_ptr(), a[3] as usize, a[4] as i32);
                (match on {
                    0 => unsafe { libc::setxattr(p, n, value, size, flags) },
                    1 => unsafe { libc::lsetxattr(p, n, value, size, flags) },
                    _ => unsafe { libc::fsetxattr(fd, n, value, size, flags) },
                }) as isize
            }
            nr::GETXATTR..=nr::FGETXATTR => {
                let name = errno!(name());
                let value = errno!(guest_ptr(mem, a[2], a[3], true)) as *mut libc::c_void;
                let (n, size) = (name.as_ptr(), a[3] as usize);
                match on {
                    0 => unsafe { libc::getxattr(p, n, value, size) },
                    1 => unsafe { libc::lgetxattr(p, n, value, size) },
                    _ => unsafe { libc::fgetxattr(fd, n, value, size) },
                }
            }
            nr::LISTXATTR..=nr::FLISTXATTR => {
                let list = errno!(guest_ptr(mem, a[1], a[2], true)) as *mut libc::c_char;
                let size = a[2] as usize;
                match on {
                    0 => unsafe { libc::listxattr(p, list, size) },
                    1 => unsafe { libc::llistxattr(p, list, size) },
                    _ => unsafe { libc::flistxattr(fd, list, size) },
                }
            }
            _ => {
                let name = errno!(name());
                let n = name.as_ptr();
                (match on {
                    0 => unsafe { libc::removexattr(p, n) },
                    1 => unsafe { libc::lremovexattr(p, n) },
                    _ => unsafe { libc::fremovexattr(fd, n) },
                }) as isize
            }
        };
        Ok(Outcome::Ret(ret(r as i64)))
    }
}

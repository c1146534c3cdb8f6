//! System V IPC: shared memory segments, semaphore sets and message
//! queues are the host kernel's objects, as under qemu-user, so that the
//! program's forked children (host processes too) and other processes
//! share them as under Linux. Structures are converted where RV64's
//! layout differs from x86-64's (`struct semid64_ds`: the generic one,
//! 88 bytes, against x86-64's 104 with unused words between the times);
//! the others (`ipc64_perm`, `shmid64_ds`, `msqid64_ds`, `sembuf`, the
//! `*info` structures, a message's `long` type) are the same on both.
//!
//! A segment is attached inside the guest's address space with the
//! host's `shmat` ([`Memory::attach_sysv`]) and remembered here, by
//! address and length, until `shmdt`.
//!
//! A `semop`, `semtimedop`, `msgsnd` or `msgrcv` that must wait waits on
//! the host when the program has one thread. Beside other threads it
//! must not hold the simulator's one hart, since the thread that would
//! let it through may be one of them: the call is made with IPC_NOWAIT,
//! and if it would wait, the thread leaves the hart and makes it again
//! when another thread makes a System V call, or every
//! [`LOOK_EVERY`] for what other processes do, until it goes through, its
//! timeout ends (EAGAIN) or a signal comes (EINTR: these calls are never
//! restarted, signal(7)).

use super::{read_timespec, Blocked, Kernel, Outcome, EFAULT, EINVAL};
use crate::error::SimError;
use crate::mem::{page_up, perm, Memory, PAGE};
use crate::process::MMAP_TOP;
use crate::sysno as nr;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The calls this module answers.
pub(super) const CALLS: &[u64] = &[
    nr::MSGGET,
    nr::MSGCTL,
    nr::MSGRCV,
    nr::MSGSND,
    nr::SEMGET,
    nr::SEMCTL,
    nr::SEMTIMEDOP,
    nr::SEMOP,
    nr::SHMGET,
    nr::SHMCTL,
    nr::SHMAT,
    nr::SHMDT,
];

/// Segments attached, by guest address: their length in bytes (whole
/// pages).
#[derive(Clone, Debug, Default)]
pub struct Attached(BTreeMap<u64, u64>);

// The commands of `shmctl`, `semctl` and `msgctl` (linux/ipc.h, shm.h,
// sem.h, msg.h).
// The others (IPC_RMID, SHM_LOCK, SHM_UNLOCK, GETPID, GETVAL, GETNCNT,
// GETZCNT, SETVAL) take a value or nothing, passed on as it is.
const IPC_SET: u64 = 1;
const IPC_STAT: u64 = 2;
const IPC_INFO: u64 = 3;
const SHM_STAT: u64 = 13;
const SHM_INFO: u64 = 14;
const SHM_STAT_ANY: u64 = 15;
const GETVAL: u64 = 12;
const GETALL: u64 = 13;
const SETALL: u64 = 17;
const SEM_STAT: u64 = 18;
const SEM_INFO: u64 = 19;
const SEM_STAT_ANY: u64 = 20;
const MSG_STAT: u64 = 11;
const MSG_INFO: u64 = 12;
const MSG_STAT_ANY: u64 = 13;

// `shmat`'s flags.
const SHM_RDONLY: u64 = 0o10000;
const SHM_RND: u64 = 0o20000;
const SHM_REMAP: u64 = 0o40000;
const SHM_EXEC: u64 = 0o100000;

/// Bytes of `struct shmid64_ds`, `struct msqid64_ds`, `struct
/// shminfo64`, `struct shm_info`, `struct seminfo` and `struct msginfo`
/// (the same on RV64 and x86-64).
const SHMID_DS: usize = 112;
const MSQID_DS: usize = 120;
const SHMINFO: usize = 72;
const SHM_INFO_BYTES: usize = 48;
const SEMINFO: usize = 40;
const MSGINFO: usize = 32;
/// Bytes of `struct semid64_ds`: RV64's (asm-generic) and x86-64's.
const SEMID_DS_RV: usize = 88;
const SEMID_DS_HOST: usize = 104;
/// Bytes of `struct ipc64_perm`, at the start of every `*id64_ds`.
const IPC_PERM: usize = 48;
/// The fields of `struct semid64_ds` as (offset in RV64's, offset in
/// x86-64's, bytes): the permissions, `sem_otime`, `sem_ctime` and
/// `sem_nsems`; x86-64 keeps an unused word after each time.
const SEMID_FIELDS: [(usize, usize, usize); 4] =
    [(0, 0, IPC_PERM), (48, 48, 8), (56, 64, 8), (64, 80, 8)];
/// Where x86-64's `struct semid64_ds` holds `sem_nsems`.
const HOST_SEM_NSEMS: usize = SEMID_FIELDS[3].1;
/// Bytes of a `struct sembuf`.
const SEMBUF: u64 = 6;
/// Most operations one `semop` takes (SEMOPM).
const SEMOPM: u64 = 500;
/// `IPC_NOWAIT`: a call's (or a semaphore operation's) flag to fail
/// rather than wait.
const IPC_NOWAIT: u64 = 0o4000;
/// `msgrcv`'s flag to copy the message at a position rather than take
/// it; it needs IPC_NOWAIT.
const MSG_COPY: u64 = 0o40000;
/// How often a wait on a semaphore or queue beside other threads looks
/// again for what other processes did.
pub(super) const LOOK_EVERY: Duration = Duration::from_millis(1);
/// A message longer than this is refused (EINVAL) before its bytes are
/// read: far above any host's `msgmax`, which the host checks.
const MSG_LIMIT: u64 = 1 << 26;

/// The host's answer to a raw system call: its result, or minus errno.
fn host(r: libc::c_long) -> i64 {
    if r < 0 {
        super::errno()
    } else {
        r
    }
}

/// RV64's `struct semid64_ds` from x86-64's ([`SEMID_FIELDS`]).
fn semid_to_guest(h: &[u8; SEMID_DS_HOST]) -> [u8; SEMID_DS_RV] {
    let mut g = [0u8; SEMID_DS_RV];
    for (at_g, at_h, n) in SEMID_FIELDS {
        g[at_g..at_g + n].copy_from_slice(&h[at_h..at_h + n]);
    }
    g
}

/// x86-64's `struct semid64_ds` from RV64's (for IPC_SET).
fn semid_to_host(g: &[u8]) -> [u8; SEMID_DS_HOST] {
    let mut h = [0u8; SEMID_DS_HOST];
    for (at_g, at_h, n) in SEMID_FIELDS {
        h[at_h..at_h + n].copy_from_slice(&g[at_g..at_g + n]);
    }
    h
}

/// Runs `call` on `data`, a host buffer standing for the guest's at
/// `buf`: filled from the guest's first when `input`, else written back
/// to it when the call succeeds. EFAULT when the guest's cannot be read
/// or written.
fn through_buffer(
    mem: &mut Memory,
    buf: u64,
    data: &mut [u8],
    input: bool,
    call: impl FnOnce(usize) -> i64,
) -> Result<i64, i64> {
    let len = data.len() as u64;
    if input {
        data.copy_from_slice(mem.slice(buf, len, perm::R).map_err(|_| EFAULT)?);
    }
    let r = call(data.as_mut_ptr() as usize);
    if r >= 0 && !input {
        mem.slice_mut(buf, len)
            .map_err(|_| EFAULT)?
            .copy_from_slice(data);
    }
    Ok(r)
}

impl Kernel {
    /// One of [`CALLS`], number `a[7]`.
    pub(super) fn sysv_call(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<Outcome, SimError> {
        // SAFETY (every `libc::syscall` below): the host's System V calls
        // with plain values and pointers to buffers of this function that
        // are as large as the command writes or reads.
        let r = match a[7] {
            nr::SHMGET => host(unsafe { libc::syscall(libc::SYS_shmget, a[0], a[1], a[2]) }),
            nr::SEMGET => host(unsafe { libc::syscall(libc::SYS_semget, a[0], a[1], a[2]) }),
            nr::MSGGET => host(unsafe { libc::syscall(libc::SYS_msgget, a[0], a[1]) }),
            nr::SHMAT => return self.shmat(mem, a),
            nr::SHMDT => return self.shmdt(mem, a[0]),
            nr::SHMCTL => {
                let size = match a[1] {
                    IPC_STAT | SHM_STAT | SHM_STAT_ANY | IPC_SET => SHMID_DS,
                    IPC_INFO => SHMINFO,
                    SHM_INFO => SHM_INFO_BYTES,
                    _ => 0,
                };
                errno!(ctl(
                    mem,
                    libc::SYS_shmctl,
                    a[0],
                    a[1],
                    a[2],
                    size,
                    a[1] == IPC_SET
                ))
            }
            nr::MSGCTL => {
                let size = match a[1] {
                    IPC_STAT | MSG_STAT | MSG_STAT_ANY | IPC_SET => MSQID_DS,
                    IPC_INFO | MSG_INFO => MSGINFO,
                    _ => 0,
                };
                errno!(ctl(
                    mem,
                    libc::SYS_msgctl,
                    a[0],
                    a[1],
                    a[2],
                    size,
                    a[1] == IPC_SET
                ))
            }
            nr::SEMCTL => errno!(semctl(mem, a)),
            nr::SEMOP | nr::SEMTIMEDOP => return self.semop(mem, a),
            nr::MSGSND => return self.msgsnd(mem, a),
            nr::MSGRCV => return self.msgrcv(mem, a),
            _ => EINVAL,
        };
        self.sysv_moved |= r >= 0 && matches!(a[7], nr::SEMCTL | nr::MSGCTL);
        Ok(Outcome::Ret(r))
    }

    /// Whether a call that would wait must not wait on the host: beside
    /// other threads, which need the hart, and when it is made again
    /// after such a wait (the others may have ended since, and a signal
    /// one of them sent may be there to take).
    fn waits_off_hart(&self) -> bool {
        self.beside_threads() || self.resumed.looked
    }

    /// The flags for the host's call of a program's `msgsnd` or `msgrcv`
    /// given `flags`, and whether the program lets it wait where the host
    /// call will not: with IPC_NOWAIT added off the hart. A `msgrcv` with
    /// MSG_COPY never waits: without IPC_NOWAIT Linux refuses it (EINVAL),
    /// so its flags go as they are.
    fn nowait(&self, flags: u64) -> (u64, bool) {
        let waits = self.waits_off_hart() && flags & IPC_NOWAIT == 0 && flags & MSG_COPY == 0;
        (flags | if waits { IPC_NOWAIT } else { 0 }, waits)
    }

    /// The answer `r` of a System V call; when `would_wait` (the host's
    /// call, made with IPC_NOWAIT, would have waited where the program
    /// lets it), the thread waits off the hart until `timeout` ends, as
    /// the module's comment says. A call that went through makes any
    /// other thread waiting on a semaphore or queue look again; one made
    /// again after a wait that finds its object gone (EINVAL) gets EIDRM,
    /// as Linux's waiters do.
    fn went_or_waits(&mut self, r: i64, would_wait: bool, timeout: Option<Duration>) -> Outcome {
        if r == EINVAL && self.resumed.looked {
            // The object went away while the call waited: Linux wakes
            // its waiters with EIDRM.
            return Outcome::Ret(-(libc::EIDRM as i64));
        }
        if !would_wait {
            self.sysv_moved |= r >= 0;
            return Outcome::Ret(r);
        }
        if self.signals.wakes() {
            return Outcome::Ret(-(libc::EINTR as i64));
        }
        let end = self.deadline(timeout);
        let now = Instant::now();
        if end.is_some_and(|e| now >= e) {
            return Outcome::Ret(-(libc::EAGAIN as i64));
        }
        let look = now + LOOK_EVERY;
        Outcome::Block(Blocked {
            mask: self.signals.mask,
            until: Some(end.map_or(look, |e| e.min(look))),
            looks_again: true,
            timeout_end: end,
            ..Blocked::default()
        })
    }

    /// `semop(id, ops, n)` and `semtimedop(id, ops, n, timeout)`.
    fn semop(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<Outcome, SimError> {
        let n = a[2];
        if n == 0 {
            return Ok(Outcome::Ret(EINVAL));
        }
        if n > SEMOPM {
            return Ok(Outcome::Ret(-(libc::E2BIG as i64)));
        }
        let mut ops = match mem.slice(a[1], n * SEMBUF, perm::R) {
            Ok(s) => s.to_vec(),
            Err(_) => return Ok(Outcome::Ret(EFAULT)),
        };
        let timeout = if a[7] == nr::SEMTIMEDOP && a[3] != 0 {
            Some(errno!(read_timespec(mem, a[3])))
        } else {
            None
        };
        let off_hart = self.waits_off_hart();
        // The flags the program gave each operation, before IPC_NOWAIT
        // is added to all of them for a wait off the hart.
        let flags: Vec<u16> = ops.chunks(SEMBUF as usize).map(sem_flg).collect();
        if off_hart {
            for op in ops.chunks_mut(SEMBUF as usize) {
                let f = sem_flg(op) | IPC_NOWAIT as u16;
                op[4..6].copy_from_slice(&f.to_ne_bytes());
            }
        }
        let ts = timeout.filter(|_| !off_hart).map(|t| libc::timespec {
            tv_sec: t.as_secs() as libc::time_t,
            tv_nsec: t.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `ops` holds `n` sembufs; `ts_ptr` is null or a timespec.
        let r =
            host(unsafe { libc::syscall(libc::SYS_semtimedop, a[0], ops.as_mut_ptr(), n, ts_ptr) });
        // Linux takes the operations in order and waits at the first that
        // cannot be done, unless that one has IPC_NOWAIT.
        let lets_wait = |i: usize| flags[i] & IPC_NOWAIT as u16 == 0;
        let would_wait = off_hart
            && r == -(libc::EAGAIN as i64)
            && match blocking_op(a[0], &ops) {
                Some(i) => lets_wait(i),
                // The values moved since: look again if it may wait.
                None => (0..flags.len()).any(lets_wait),
            };
        Ok(self.went_or_waits(r, would_wait, timeout))
    }

    /// `msgsnd(id, msg, size, flags)`.
    fn msgsnd(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<Outcome, SimError> {
        if a[2] > MSG_LIMIT {
            return Ok(Outcome::Ret(EINVAL));
        }
        let msg = match mem.slice(a[1], 8 + a[2], perm::R) {
            Ok(s) => s.to_vec(),
            Err(_) => return Ok(Outcome::Ret(EFAULT)),
        };
        let (flags, waits) = self.nowait(a[3]);
        // SAFETY: `msg` holds the type and `a[2]` bytes.
        let r = host(unsafe { libc::syscall(libc::SYS_msgsnd, a[0], msg.as_ptr(), a[2], flags) });
        Ok(self.went_or_waits(r, waits && r == -(libc::EAGAIN as i64), None))
    }

    /// `msgrcv(id, msg, size, type, flags)`.
    fn msgrcv(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<Outcome, SimError> {
        if a[2] > MSG_LIMIT {
            return Ok(Outcome::Ret(EINVAL));
        }
        let mut msg = vec![0u8; 8 + a[2] as usize];
        let (flags, waits) = self.nowait(a[4]);
        // SAFETY: `msg` has room for the type and `a[2]` bytes.
        let r = host(unsafe {
            libc::syscall(libc::SYS_msgrcv, a[0], msg.as_mut_ptr(), a[2], a[3], flags)
        });
        if r >= 0 {
            let n = 8 + r as usize;
            match mem.slice_mut(a[1], n as u64) {
                Ok(out) => out.copy_from_slice(&msg[..n]),
                Err(_) => return Ok(Outcome::Ret(EFAULT)),
            }
        }
        Ok(self.went_or_waits(r, waits && r == -(libc::ENOMSG as i64), None))
    }

    /// `shmat(id, addr, flags)`: the segment attached where the program
    /// asks (rounded down to a page with SHM_RND; over what is there only
    /// with SHM_REMAP) or where the simulator's `mmap` would put it.
    fn shmat(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<Outcome, SimError> {
        let (id, addr, flags) = (a[0], a[1], a[2]);
        let mut ds = [0u8; SHMID_DS];
        // SAFETY: a buffer of the structure's size.
        let r = unsafe { libc::syscall(libc::SYS_shmctl, id, IPC_STAT, ds.as_mut_ptr()) };
        if r < 0 {
            return Ok(Outcome::Ret(super::errno()));
        }
        let size = u64::from_le_bytes(ds[48..56].try_into().unwrap_or_default());
        let len = page_up(size);
        // SHM_RND rounds down to SHMLBA, a page on RISC-V; an address
        // that rounds to 0 asks for none, as 0 does.
        let addr = if flags & SHM_RND != 0 {
            addr & !(PAGE - 1)
        } else {
            addr
        };
        let at = if addr != 0 {
            if addr % PAGE != 0 {
                return Ok(Outcome::Ret(EINVAL));
            }
            if flags & SHM_REMAP == 0 && !mem.is_free(addr, len) {
                return Ok(Outcome::Ret(EINVAL));
            }
            addr
        } else if flags & SHM_REMAP != 0 {
            return Ok(Outcome::Ret(EINVAL));
        } else {
            match mem.find_free(len, page_up(self.brk) + PAGE, MMAP_TOP) {
                Some(a) => a,
                None => return Ok(Outcome::Ret(-(libc::ENOMEM as i64))),
            }
        };
        let read_only = flags & SHM_RDONLY != 0;
        let prot = perm::R
            | if read_only { 0 } else { perm::W }
            | if flags & SHM_EXEC != 0 { perm::X } else { 0 };
        let changes_code = mem.changes_code(at, len, prot);
        if let Err(e) = mem.attach_sysv(at, len, prot, id as i32, read_only) {
            return Ok(Outcome::Ret(
                -(e.raw_os_error().unwrap_or(libc::EINVAL) as i64),
            ));
        }
        self.file_maps.forget(at, len);
        self.areas.record(at, at + len, coprof_core::areas::SHM);
        self.sysv
            .0
            .retain(|&s, &mut l| s + l <= at || s >= at + len);
        self.sysv.0.insert(at, len);
        Ok(if changes_code {
            Outcome::RetFlush(at as i64, at..at + len)
        } else {
            Outcome::Ret(at as i64)
        })
    }

    /// `shmdt(addr)`: detaches the segment attached at `addr`.
    fn shmdt(&mut self, mem: &mut Memory, addr: u64) -> Result<Outcome, SimError> {
        let Some(&len) = self.sysv.0.get(&addr) else {
            return Ok(Outcome::Ret(EINVAL));
        };
        let code = mem.range_has(addr, len, perm::X);
        if let Err(e) = mem.detach_sysv(addr, len) {
            return Ok(Outcome::Ret(
                -(e.raw_os_error().unwrap_or(libc::EINVAL) as i64),
            ));
        }
        self.sysv.0.remove(&addr);
        Ok(if code {
            Outcome::RetFlush(0, addr..addr + len)
        } else {
            Outcome::Ret(0)
        })
    }
}

/// `shmctl` or `msgctl` (the host's call `call`) of object `id` with
/// command `cmd`, whose structure of `size` bytes (0: none) at guest
/// `buf` the host reads (`input`) or writes.
fn ctl(
    mem: &mut Memory,
    call: libc::c_long,
    id: u64,
    cmd: u64,
    buf: u64,
    size: usize,
    input: bool,
) -> Result<i64, i64> {
    // SAFETY: the host's call with a buffer of the structure's size, or
    // none for a command that takes no structure.
    let host_call = |p: usize| host(unsafe { libc::syscall(call, id, cmd, p) });
    if size == 0 {
        return Ok(host_call(0));
    }
    through_buffer(mem, buf, &mut vec![0u8; size], input, host_call)
}

/// A `struct sembuf`'s `sem_flg`.
fn sem_flg(op: &[u8]) -> u16 {
    u16::from_ne_bytes([op[4], op[5]])
}

/// The first of `ops` (`struct sembuf`s) on set `id` that cannot be done
/// with the set's values now, after the ones before it (Linux's
/// perform_atomic_semop): a decrease below zero, or a wait for zero on a
/// value that is not. `None` if all can, or a value cannot be read.
fn blocking_op(id: u64, ops: &[u8]) -> Option<usize> {
    let mut values: BTreeMap<u16, i64> = BTreeMap::new();
    for (i, op) in ops.chunks(SEMBUF as usize).enumerate() {
        let num = u16::from_ne_bytes([op[0], op[1]]);
        let change = i16::from_ne_bytes([op[2], op[3]]) as i64;
        let v = match values.get(&num) {
            Some(&v) => v,
            None => {
                // SAFETY: GETVAL takes no buffer.
                let v = unsafe { libc::syscall(libc::SYS_semctl, id, num as u64, GETVAL, 0) };
                if v < 0 {
                    return None;
                }
                v
            }
        };
        if (change == 0 && v != 0) || v + change < 0 {
            return Some(i);
        }
        values.insert(num, v + change);
    }
    None
}

/// `semctl(id, num, cmd, arg)`: `arg` is a value or a guest pointer, as
/// the command says.
fn semctl(mem: &mut Memory, a: [u64; 8]) -> Result<i64, i64> {
    let (id, num, cmd, arg) = (a[0], a[1], a[2], a[3]);
    // SAFETY: the host's call with plain values, or a buffer as large as
    // the command reads or writes.
    let host_call = |num: u64, cmd: u64, arg: usize| {
        host(unsafe { libc::syscall(libc::SYS_semctl, id, num, cmd, arg) })
    };
    match cmd {
        IPC_STAT | SEM_STAT | SEM_STAT_ANY => {
            let mut h = [0u8; SEMID_DS_HOST];
            let r = host_call(num, cmd, h.as_mut_ptr() as usize);
            if r >= 0 {
                mem.slice_mut(arg, SEMID_DS_RV as u64)
                    .map_err(|_| EFAULT)?
                    .copy_from_slice(&semid_to_guest(&h));
            }
            Ok(r)
        }
        IPC_SET => {
            let g = mem
                .slice(arg, SEMID_DS_RV as u64, perm::R)
                .map_err(|_| EFAULT)?;
            let mut h = semid_to_host(g);
            Ok(host_call(num, cmd, h.as_mut_ptr() as usize))
        }
        IPC_INFO | SEM_INFO => through_buffer(mem, arg, &mut [0u8; SEMINFO], false, |p| {
            host_call(num, cmd, p)
        }),
        GETALL | SETALL => {
            // The set's size first, for the array's.
            let mut h = [0u8; SEMID_DS_HOST];
            let r = host_call(0, IPC_STAT, h.as_mut_ptr() as usize);
            if r < 0 {
                return Ok(r);
            }
            let nsems = &h[HOST_SEM_NSEMS..HOST_SEM_NSEMS + 8];
            let n = u64::from_le_bytes(nsems.try_into().unwrap_or_default());
            let mut values = vec![0u8; 2 * n as usize];
            through_buffer(mem, arg, &mut values, cmd == SETALL, |p| {
                host_call(num, cmd, p)
            })
        }
        // A value, or nothing (IPC_RMID, GETPID, GETVAL, GETNCNT, GETZCNT,
        // SETVAL), and commands the host refuses.
        _ => Ok(host_call(num, cmd, arg as usize)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semid_ds_moves_between_the_two_layouts() {
        let mut h = [0u8; SEMID_DS_HOST];
        for (i, b) in h.iter_mut().enumerate() {
            *b = i as u8;
        }
        let g = semid_to_guest(&h);
        // The offsets as the two kernels' headers lay them out.
        assert_eq!(&g[..48], &h[..48], "the permissions");
        assert_eq!(&g[48..56], &h[48..56], "sem_otime");
        assert_eq!(&g[56..64], &h[64..72], "sem_ctime");
        assert_eq!(&g[64..72], &h[80..88], "sem_nsems");
        let back = semid_to_host(&g);
        for (range, what) in [
            (0..56, "perm and otime"),
            (64..72, "ctime"),
            (80..88, "nsems"),
        ] {
            assert_eq!(&back[range.clone()], &h[range], "{what}");
        }
    }

    /// `struct sembuf`s as bytes.
    fn ops(list: &[(u16, i16, u16)]) -> Vec<u8> {
        list.iter()
            .flat_map(|&(num, op, flg)| {
                [num.to_ne_bytes(), op.to_ne_bytes(), flg.to_ne_bytes()].concat()
            })
            .collect()
    }

    #[test]
    fn the_operation_a_semop_waits_at_is_the_first_that_cannot_be_done() {
        // SAFETY: plain System V calls on a private set this test removes.
        let id = unsafe { libc::semget(libc::IPC_PRIVATE, 2, libc::IPC_CREAT | 0o600) };
        assert!(id >= 0, "semget: {}", std::io::Error::last_os_error());
        let set = |num: i32, v: i32| unsafe { libc::semctl(id, num, libc::SETVAL, v) };
        assert_eq!((set(0, 1), set(1, 0)), (0, 0));
        let id = id as u64;
        assert_eq!(blocking_op(id, &ops(&[(0, -1, 0)])), None, "1 − 1 is 0");
        assert_eq!(blocking_op(id, &ops(&[(0, -2, 0)])), Some(0), "1 − 2");
        assert_eq!(
            blocking_op(id, &ops(&[(1, 0, 0)])),
            None,
            "waits for 0: is 0"
        );
        assert_eq!(
            blocking_op(id, &ops(&[(0, 0, 0)])),
            Some(0),
            "waits for 0: is 1"
        );
        // Each operation sees the ones before it.
        let two_takes = ops(&[(0, -1, 0), (0, -1, IPC_NOWAIT as u16)]);
        assert_eq!(blocking_op(id, &two_takes), Some(1));
        assert_eq!(
            blocking_op(id, &ops(&[(1, 1, 0), (1, -1, 0), (1, 0, 0)])),
            None
        );
        assert_eq!(blocking_op(id, &ops(&[(1, 1, 0), (1, 0, 0)])), Some(1));
        assert_eq!(sem_flg(&two_takes[6..]), IPC_NOWAIT as u16);
        // SAFETY: removes the set made above.
        unsafe { libc::semctl(id as i32, 0, libc::IPC_RMID) };
        assert_eq!(blocking_op(id, &ops(&[(0, -1, 0)])), None, "a set gone");
    }
}

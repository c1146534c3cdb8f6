//! The program's own `/proc/self` files: `maps`, `cmdline`, `environ`,
//! `auxv`, `comm`, `stat` and `status` (and its threads' listing in
//! `task`: `syscall/proc_tasks.rs`).
//!
//! The host's files describe coprof's process: its mappings, whose
//! addresses mean nothing to the program, coprof's own command line and
//! name, and the host's ids. Opening one of these under `/proc/self`,
//! `/proc/thread-self` or `/proc/PID` with the process's own PID gives a
//! file written then with the program's: its argv and environment as it
//! started with them, NUL-terminated, its auxiliary vector as it lay on
//! its stack, and its mappings. `comm` is the thread's name (the main
//! thread's for the process), as `prctl(PR_SET_NAME)` set it or Linux
//! starts it, the program file's name; `stat` and `status` are the
//! host's (the process's times, memory and state are the simulated
//! program's, which runs in it) with that name, the ids the program sees
//! ([`Pids`], `--pid`), its count of threads, and its signals: the
//! thread's own blocked and pending ones (for `/proc/self`, the first
//! thread's, as Linux shows the thread group leader's). (The C library's
//! `pthread_getname_np` reads `comm`, `ps` and `top` read `stat`, and
//! programs that look for their parent or a tracer read `status`.) A
//! `comm` opened to be written names its thread at each `write`, as
//! Linux's does: glibc's `pthread_setname_np` names another thread so.
//! `writev` names it by each segment in turn, as Linux's loop over a file
//! without a vector write of its own does, so that the last one is the
//! name; `pwrite` is refused (ESPIPE), as a `seq_file`'s is.
//!
//! Programs read their maps: glibc's
//! `pthread_getattr_np` looks for the line that holds the main thread's
//! stack (Rust's standard library, Java and others ask it), conservative
//! garbage collectors and sanitizers look for their roots, libsigsegv for
//! the stack. The file is in Linux's format (fs/proc/task_mmu.c,
//! `show_map_vma`):
//!
//! ```text
//! 00010000-00012000 r-xp 00000000 08:01 1234567    /path/to/prog
//! ```
//!
//! one line per run of pages with the same permissions and the same
//! file, with the file's offset, device and inode for what a file was
//! mapped from, `[heap]` for the program break and `[stack]` for the main
//! thread's stack. The mappings are private copies, so every line says
//! `p`.

use super::Kernel;
use crate::mem::{perm, Memory, PAGE};
use crate::pids::Pids;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Pages mapped from a file: `[start, end)` from byte `offset` of `path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMap {
    /// First address.
    pub start: u64,
    /// The address after the last page.
    pub end: u64,
    /// The file offset of `start`.
    pub offset: u64,
    /// The host's file.
    pub path: PathBuf,
}

/// The address ranges mapped from files, kept apart from each other: a
/// mapping over part of another (the dynamic loader maps a library whole,
/// then its data segment over it) splits the older one.
#[derive(Clone, Debug, Default)]
pub struct FileMaps(Vec<FileMap>);

impl FileMaps {
    /// Forgets `[start, start + len)`: its pages are unmapped, or mapped
    /// anew.
    pub fn forget(&mut self, start: u64, len: u64) {
        let end = start.saturating_add(len);
        let mut kept = Vec::with_capacity(self.0.len() + 1);
        for m in self.0.drain(..) {
            if m.end <= start || end <= m.start {
                kept.push(m);
                continue;
            }
            if m.start < start {
                kept.push(FileMap {
                    end: start,
                    ..m.clone()
                });
            }
            if end < m.end {
                kept.push(FileMap {
                    start: end,
                    offset: m.offset + (end - m.start),
                    ..m
                });
            }
        }
        self.0 = kept;
    }

    /// Records `[start, start + len)` as mapped from byte `offset` of
    /// `path`, over whatever was there.
    pub fn record(&mut self, start: u64, len: u64, offset: u64, path: &Path) {
        self.forget(start, len);
        self.0.push(FileMap {
            start,
            end: start.saturating_add(len),
            offset,
            path: path.to_path_buf(),
        });
        self.0.sort_by_key(|m| m.start);
    }

    /// The file mapping that holds `addr`.
    fn at(&self, addr: u64) -> Option<&FileMap> {
        let i = self.0.partition_point(|m| m.start <= addr).checked_sub(1)?;
        Some(&self.0[i]).filter(|m| addr < m.end)
    }

    /// The first file mapping that starts after `addr`, where a run of
    /// anonymous pages ends.
    fn next_start(&self, addr: u64) -> u64 {
        let i = self.0.partition_point(|m| m.start <= addr);
        self.0.get(i).map_or(u64::MAX, |m| m.start)
    }
}

/// Where the text names things: the program break and the main stack.
pub struct Landmarks {
    /// `[heap]`: from the start of the break to the break.
    pub heap: (u64, u64),
    /// `[stack]`.
    pub stack: (u64, u64),
}

/// `/proc/self/maps` for `mem`, with the files of `files`.
pub fn maps_text(mem: &Memory, files: &FileMaps, landmarks: &Landmarks) -> String {
    let mut out = String::new();
    for (start, end, p) in mem.regions() {
        // Split each run of equal permissions where a file mapping starts
        // or ends.
        let mut at = start;
        while at < end {
            let (to, file) = match files.at(at) {
                Some(f) => (
                    f.end.min(end),
                    Some((f.offset + (at - f.start), f.path.as_path())),
                ),
                None => (files.next_start(at).min(end), None),
            };
            line(&mut out, at, to, p, file, landmarks);
            at = to;
        }
    }
    out
}

fn line(out: &mut String, start: u64, end: u64, p: u8, file: Option<(u64, &Path)>, l: &Landmarks) {
    let bit = |b, c| if p & b != 0 { c } else { '-' };
    let perms = format!(
        "{}{}{}{}",
        bit(perm::R, 'r'),
        bit(perm::W, 'w'),
        bit(perm::X, 'x'),
        if p & perm::SHARED != 0 { 's' } else { 'p' }
    );
    let (offset, dev, inode, name) = match file {
        Some((offset, path)) => {
            let (dev, inode) = std::fs::metadata(path).map_or((0, 0), |m| {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino())
            });
            (offset, dev, inode, path.display().to_string())
        }
        None if start < l.stack.1 && l.stack.0 < end => (0, 0, 0, "[stack]".to_string()),
        None if start < l.heap.1 && l.heap.0 < end => (0, 0, 0, "[heap]".to_string()),
        None => (0, 0, 0, String::new()),
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let head =
        format!("{start:08x}-{end:08x} {perms} {offset:08x} {major:02x}:{minor:02x} {inode}");
    if name.is_empty() {
        let _ = writeln!(out, "{head} ");
    } else {
        let _ = writeln!(out, "{head:<72} {name}");
    }
}

/// What the program started with, for its `/proc/self` files.
#[derive(Clone, Debug, Default)]
pub struct OwnFiles {
    /// `cmdline`: each argument followed by a NUL.
    pub cmdline: Vec<u8>,
    /// `environ`: each `NAME=value` followed by a NUL.
    pub environ: Vec<u8>,
    /// `auxv`: the (key, value) pairs of 8 bytes each, AT_NULL's last.
    pub auxv: Vec<u8>,
}

impl OwnFiles {
    /// The files of a program started with `args` and `env` and the
    /// auxiliary vector `auxv` (its bytes).
    pub fn new(args: &[Vec<u8>], env: &[Vec<u8>], auxv: Vec<u8>) -> OwnFiles {
        let joined = |v: &[Vec<u8>]| {
            v.iter()
                .flat_map(|a| a.iter().copied().chain([0]))
                .collect()
        };
        OwnFiles {
            cmdline: joined(args),
            environ: joined(env),
            auxv,
        }
    }
}

/// Which of the files `path` names, when it is one of the process's own
/// (`path` as [`host_proc_path`] left it, the own pid made `self`).
fn own_file(path: &[u8]) -> Option<&[u8]> {
    let rest = path.strip_prefix(b"/proc/")?;
    let slash = rest.iter().position(|&b| b == b'/')?;
    let (who, name) = (&rest[..slash], &rest[slash + 1..]);
    let mine = who == b"self" || who == b"thread-self";
    let known = [
        &b"maps"[..],
        b"cmdline",
        b"environ",
        b"auxv",
        b"comm",
        b"stat",
        b"status",
    ];
    (mine && known.contains(&name)).then_some(name)
}

/// What `stat` and `status` say of the program rather than of the host
/// process: its id (the thread's, for `/proc/thread-self`), its name, its
/// threads, and the ids it sees for the host's.
struct Seen<'a> {
    id: i64,
    name: &'a [u8],
    threads: usize,
    pids: &'a Pids,
    /// Its signal sets, by the names `status` gives them
    /// ([`Signals::status_sets`](crate::signal::Signals::status_sets)).
    signals: [(&'static str, u64); 5],
}

impl Seen<'_> {
    /// The host's `stat` line with the program's id and name, its parent,
    /// group, session and terminal's group as it sees them, and its
    /// threads (fs/proc/array.c, `do_task_stat`: the name in parentheses,
    /// which may hold spaces and parentheses itself, then the fields).
    fn stat(&self, host: &str) -> Option<String> {
        let close = host.rfind(')')?;
        let mut fields: Vec<String> = host[close + 1..]
            .split_whitespace()
            .map(str::to_string)
            .collect();
        // After the name: state, ppid, pgrp, session, tty_nr, tpgid …
        // num_threads is the 20th field, the 18th after it.
        for i in [1, 2, 3, 5] {
            let id: i64 = fields.get(i)?.parse().ok()?;
            fields[i] = self.pids.seen(id).to_string();
        }
        *fields.get_mut(17)? = self.threads.to_string();
        Some(format!(
            "{} ({}) {}\n",
            self.id,
            String::from_utf8_lossy(self.name),
            fields.join(" ")
        ))
    }

    /// The host's `status` with the program's name, ids and threads.
    fn status(&self, host: &str) -> String {
        let ids = |v: &str| {
            v.split_whitespace()
                .map(|id| {
                    id.parse()
                        .map_or(id.to_string(), |id| self.pids.seen(id).to_string())
                })
                .collect::<Vec<_>>()
                .join("\t")
        };
        let mut out = String::with_capacity(host.len());
        for line in host.lines() {
            let (key, value) = line.split_once(':').unwrap_or((line, ""));
            if let Some((_, set)) = self.signals.iter().find(|(k, _)| *k == key) {
                let _ = writeln!(out, "{key}:\t{set:016x}");
                continue;
            }
            let value = match key {
                "Name" => String::from_utf8_lossy(self.name).into_owned(),
                "Pid" => self.id.to_string(),
                "NSpid" => self.id.to_string(),
                "Threads" => self.threads.to_string(),
                "Tgid" | "PPid" | "TracerPid" | "NStgid" | "NSpgid" | "NSsid" => ids(value),
                _ => {
                    out.push_str(line);
                    out.push('\n');
                    continue;
                }
            };
            let _ = writeln!(out, "{key}:\t{value}");
        }
        out
    }
}

/// The id a `/proc` directory's name `part` is, written as Linux writes
/// it (decimal digits, no leading zero): `/proc/042` is no directory.
fn proc_number(part: &[u8]) -> Option<i64> {
    let digits = std::str::from_utf8(part).ok()?;
    let canonical = digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

/// The guest path `path` with a `/proc/PID` directory named as the host
/// knows it: the program's own pid (as [`Pids`] has it seen) as
/// `/proc/self`, another process's by its host pid. Other paths are
/// returned as they are.
pub(crate) fn host_proc_path(path: Vec<u8>, pids: &Pids) -> Vec<u8> {
    let Some(rest) = path.strip_prefix(b"/proc/") else {
        return path;
    };
    let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let Some(pid) = proc_number(&rest[..end]) else {
        return path;
    };
    let dir = if pid == pids.own() {
        "self".to_string()
    } else {
        pids.host(pid).to_string()
    };
    let mut out = b"/proc/".to_vec();
    out.extend_from_slice(dir.as_bytes());
    out.extend_from_slice(&rest[end..]);
    out
}

/// The thread of the program's own a guest `/proc` path names, and the
/// path with that thread's directory as `/proc/thread-self`: `/proc/TID`
/// (Linux serves a thread's id as a directory too, though `ls /proc`
/// does not show it) and `/proc/self/task/TID` (or `/proc/PID/task/TID`
/// with the process's own pid as the program sees it), for a thread of
/// `tids`. The host has no such thread: the program's threads run on
/// coprof's, and its ids are the simulator's, so that under the host's
/// `/proc/TID` lies another thread or process, or none. A thread's own
/// files are then its own ([`Kernel::proc_self`]); the others are those
/// of the thread that runs them.
pub(crate) fn thread_dir(path: &[u8], pids: &Pids, tids: &[i64]) -> Option<(i64, Vec<u8>)> {
    let rest = path.strip_prefix(b"/proc/")?;
    let mut parts = rest.splitn(2, |&b| b == b'/');
    let first = parts.next()?;
    let after = parts.next().unwrap_or_default();
    let own = pids.own();
    let (tid, tail) = if first == b"self" || proc_number(first) == Some(own) {
        let task = after.strip_prefix(b"task/")?;
        let mut parts = task.splitn(2, |&b| b == b'/');
        (proc_number(parts.next()?)?, parts.next())
    } else {
        let tid = proc_number(first)?;
        (tid != own).then_some((tid, (!after.is_empty()).then_some(after)))?
    };
    if !tids.contains(&tid) {
        return None;
    }
    let mut out = b"/proc/thread-self".to_vec();
    if let Some(tail) = tail {
        out.push(b'/');
        out.extend_from_slice(tail);
    }
    Some((tid, out))
}

impl Kernel {
    /// The host descriptor of a file holding one of the program's own
    /// `/proc/self` files, when `path` (the guest's) names one, opened
    /// with `flags` (`O_CLOEXEC`, the access mode). A thread's `comm`
    /// opened to be written names the thread at each write
    /// ([`comm_file_of`](Self::comm_file_of)).
    pub(super) fn proc_self(
        &mut self,
        mem: &Memory,
        path: &[u8],
        flags: i32,
    ) -> Option<Result<i32, i64>> {
        let cloexec = flags & libc::O_CLOEXEC != 0;
        let (thread_id, path) = self.proc_dir(path.to_vec());
        // Most paths opened are none of these: nothing more is done for
        // them.
        let file = own_file(&path)?;
        let thread = path.starts_with(b"/proc/thread-self/");
        let id = match (thread_id, thread) {
            (Some(tid), _) => tid,
            (None, true) => self.tid,
            (None, false) => self.pids.own(),
        };
        let name = self.name_of(id);
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(15)];
        // The thread's own signals: the running one's, or one off the
        // hart's as the simulator left them. A process's file shows its
        // first thread's, as Linux shows the thread group leader's.
        let (own, mask) = self
            .parked_signals
            .iter()
            .find(|&&(tid, ..)| tid == id)
            .map_or(
                (self.signals.own.set(), self.signals.mask),
                |&(_, mask, own)| (own, mask),
            );
        let seen = || Seen {
            id,
            name,
            threads: self.tids.len(),
            pids: &self.pids,
            signals: self.signals.status_sets(own, mask),
        };
        // The host's file of the process, or of the simulator's thread.
        let dir = if thread { "thread-self" } else { "self" };
        let host = |file: &str| {
            std::fs::read_to_string(format!("/proc/{dir}/{file}"))
                .map_err(|e| -(e.raw_os_error().unwrap_or(libc::EIO) as i64))
        };
        let bytes = match file {
            b"comm" => [name, b"\n"].concat(),
            b"stat" => match host("stat").map(|h| seen().stat(&h)) {
                Ok(Some(text)) => text.into_bytes(),
                Ok(None) => return Some(Err(-(libc::EIO as i64))),
                Err(e) => return Some(Err(e)),
            },
            b"status" => match host("status") {
                Ok(h) => seen().status(&h).into_bytes(),
                Err(e) => return Some(Err(e)),
            },
            b"cmdline" => self.own_files.cmdline.clone(),
            b"environ" => self.own_files.environ.clone(),
            b"auxv" => self.own_files.auxv.clone(),
            _ => {
                let landmarks = Landmarks {
                    heap: (
                        self.brk_start,
                        self.brk.max(self.brk_start).next_multiple_of(PAGE),
                    ),
                    stack: (
                        crate::process::STACK_TOP - crate::process::STACK_SIZE,
                        crate::process::STACK_TOP,
                    ),
                };
                maps_text(mem, &self.file_maps, &landmarks).into_bytes()
            }
        };
        let h = generated_file(&bytes, cloexec);
        if let (Ok(h), b"comm") = (h, file) {
            if flags & libc::O_ACCMODE != libc::O_RDONLY {
                self.comm_files
                    .extend(super::host_stat(h).map(|st| (st.st_ino, id)));
            }
        }
        Some(h)
    }

    /// The thread whose `comm` the host descriptor `h` was opened to
    /// write, if it was.
    pub(super) fn comm_file_of(&self, h: i32) -> Option<i64> {
        if self.comm_files.is_empty() {
            return None;
        }
        let ino = super::host_stat(h)?.st_ino;
        (self.comm_files.iter()).find_map(|&(i, tid)| (i == ino).then_some(tid))
    }

    /// `writev` of the segments `iov` (guest memory, checked) to thread
    /// `tid`'s `comm`: each segment names the thread in turn; the bytes
    /// written.
    pub(super) fn writev_comm(&mut self, tid: i64, iov: &[libc::iovec]) -> i64 {
        let mut written = 0i64;
        for v in iov.iter().filter(|v| v.iov_len > 0) {
            // SAFETY: each iovec points into a validated guest range of
            // its length (`host_iovecs`).
            let bytes = unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len) };
            let name = bytes.to_vec();
            self.set_name(tid, &name);
            written += v.iov_len as i64;
        }
        written
    }
}

/// A host descriptor of an unnamed file holding `bytes`, at offset 0.
fn generated_file(bytes: &[u8], cloexec: bool) -> Result<i32, i64> {
    let flags = if cloexec { libc::MFD_CLOEXEC } else { 0 };
    // SAFETY: a NUL-terminated name and plain descriptor calls on the
    // descriptor made here; the buffer is valid for its length.
    unsafe {
        let fd = libc::memfd_create(c"proc-self".as_ptr(), flags);
        if fd < 0 {
            return Err(super::errno());
        }
        let mut done = 0;
        while done < bytes.len() {
            let n = libc::write(fd, bytes[done..].as_ptr() as *const _, bytes.len() - done);
            if n <= 0 {
                let e = super::errno();
                libc::close(fd);
                return Err(e);
            }
            done += n as usize;
        }
        libc::lseek(fd, 0, libc::SEEK_SET);
        Ok(fd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_rewritten_past_a_name_of_spaces_and_parentheses() {
        let me = unsafe { libc::getpid() } as i64;
        let pids = Pids::new(me as i32, 42);
        let seen = Seen {
            id: 42,
            name: b"prog",
            threads: 3,
            pids: &pids,
            signals: [("SigBlk", 0x800); 5],
        };
        let fields: Vec<String> = (3..=52).map(|i| i.to_string()).collect();
        let host = format!("{me} (a (b) c) R 7 {me} 9 {}\n", fields[4..].join(" "));
        let line = seen.stat(&host).unwrap();
        let after: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&after[..2], ["42", "(prog)"]);
        // ppid 7 is another's; the group, the process's own, is 42.
        assert_eq!(&after[2..6], ["R", "7", "42", "9"]);
        assert_eq!(after[19], "3", "num_threads: {line}");
        assert_eq!(after.len(), 52);
        assert!(seen.stat("no name here").is_none());
    }

    #[test]
    fn a_threads_directory_is_its_own() {
        let me = unsafe { libc::getpid() };
        let pids = Pids::new(me, 42);
        let tids = [42, 43, 44];
        let dir = |p: &str| thread_dir(p.as_bytes(), &pids, &tids);
        let own = |tid: i64, p: &str| Some((tid, p.as_bytes().to_vec()));
        assert_eq!(dir("/proc/43/comm"), own(43, "/proc/thread-self/comm"));
        assert_eq!(dir("/proc/44"), own(44, "/proc/thread-self"));
        assert_eq!(
            dir("/proc/self/task/44/stat"),
            own(44, "/proc/thread-self/stat")
        );
        assert_eq!(
            dir("/proc/42/task/43/status"),
            own(43, "/proc/thread-self/status")
        );
        assert_eq!(
            dir("/proc/self/task/42/comm"),
            own(42, "/proc/thread-self/comm")
        );
        // The process's own directory, another process's, a thread that
        // is not the program's, and numbers Linux would not name so.
        for other in [
            "/proc/42/comm",
            "/proc/self/comm",
            "/proc/45/comm",
            "/proc/self/task/45/comm",
            "/proc/043/comm",
            "/proc/self/task",
            "/tmp/43",
        ] {
            assert_eq!(dir(other), None, "{other}");
        }
    }

    #[test]
    fn a_proc_directory_is_the_one_the_program_means() {
        let me = unsafe { libc::getpid() };
        let p = Pids::new(me, 42);
        let host = |path: &str| String::from_utf8(host_proc_path(path.into(), &p)).unwrap();
        assert_eq!(host("/proc/42/status"), "/proc/self/status");
        assert_eq!(host("/proc/42"), "/proc/self");
        assert_eq!(host(&format!("/proc/{me}/stat")), "/proc/42/stat");
        assert_eq!(host("/proc/7/stat"), "/proc/7/stat");
        assert_eq!(host("/proc/042/stat"), "/proc/042/stat");
        assert_eq!(host("/proc/self/maps"), "/proc/self/maps");
        assert_eq!(host("/proc/cpuinfo"), "/proc/cpuinfo");
        assert_eq!(host("/etc/42"), "/etc/42");
        let plain = Pids::default();
        let mine = format!("/proc/{me}/maps");
        assert_eq!(host_proc_path(mine.into(), &plain), b"/proc/self/maps");
    }

    #[test]
    fn names_the_process_own_files_only() {
        let me = unsafe { libc::getpid() };
        assert_eq!(own_file(b"/proc/self/maps"), Some(&b"maps"[..]));
        assert_eq!(
            own_file(b"/proc/thread-self/cmdline"),
            Some(&b"cmdline"[..])
        );
        let plain = |path: String| host_proc_path(path.into(), &Pids::default());
        assert_eq!(
            own_file(&plain(format!("/proc/{me}/auxv"))),
            Some(&b"auxv"[..])
        );
        assert_eq!(own_file(&plain(format!("/proc/{}/environ", me + 1))), None);
        let given = host_proc_path(b"/proc/42/cmdline".to_vec(), &Pids::new(me, 42));
        assert_eq!(own_file(&given), Some(&b"cmdline"[..]));
        assert_eq!(own_file(b"/proc/self/status"), Some(&b"status"[..]));
        assert_eq!(own_file(b"/proc/self/limits"), None);
        assert_eq!(own_file(b"/proc/self"), None);
        let f = OwnFiles::new(
            &[b"prog".to_vec(), b"".to_vec(), b"a b".to_vec()],
            &[b"X=1".to_vec()],
            vec![],
        );
        assert_eq!(f.cmdline, b"prog\0\0a b\0");
        assert_eq!(f.environ, b"X=1\0");
    }

    #[test]
    fn mappings_over_others_split_them() {
        let mut f = FileMaps::default();
        let lib = Path::new("/lib/libc.so.6");
        f.record(0x10000, 0x10000, 0, lib);
        f.record(0x14000, 0x2000, 0x8000, Path::new("/lib/other"));
        f.forget(0x1e000, 0x1000);
        let spans: Vec<_> = f.0.iter().map(|m| (m.start, m.end, m.offset)).collect();
        assert_eq!(
            spans,
            vec![
                (0x10000, 0x14000, 0),
                (0x14000, 0x16000, 0x8000),
                (0x16000, 0x1e000, 0x6000),
                (0x1f000, 0x20000, 0xf000)
            ]
        );
        assert_eq!(f.at(0x15fff).map(|m| m.offset), Some(0x8000));
        assert_eq!(f.at(0x1e800), None);
        assert_eq!(f.next_start(0x1e800), 0x1f000);
    }

    #[test]
    fn text_names_files_heap_and_stack_as_linux_does() {
        let mut mem = Memory::new().unwrap();
        let mut f = FileMaps::default();
        let exe = std::env::current_exe().unwrap();
        mem.map(0x10000, 0x2000, perm::R | perm::X).unwrap();
        mem.map(0x12000, 0x3000, perm::R | perm::W).unwrap();
        f.record(0x10000, 0x2000, 0, &exe);
        f.record(0x12000, 0x1000, 0x2000, &exe);
        let stack = (0x3f_0000_0000, 0x3f_0000_4000);
        mem.map(stack.0, 0x4000, perm::R | perm::W).unwrap();
        let text = maps_text(
            &mem,
            &f,
            &Landmarks {
                heap: (0x13000, 0x15000),
                stack,
            },
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        let name = exe.display().to_string();
        assert!(
            lines[0].starts_with("00010000-00012000 r-xp 00000000 ") && lines[0].ends_with(&name),
            "{text}"
        );
        assert!(
            lines[1].starts_with("00012000-00013000 rw-p 00002000 ") && lines[1].ends_with(&name),
            "{text}"
        );
        assert!(
            lines[2].starts_with("00013000-00015000 rw-p 00000000 00:00 0")
                && lines[2].ends_with("[heap]"),
            "{text}"
        );
        assert!(
            lines[3].starts_with("3f00000000-3f00004000 rw-p ") && lines[3].ends_with("[stack]"),
            "{text}"
        );
    }
}

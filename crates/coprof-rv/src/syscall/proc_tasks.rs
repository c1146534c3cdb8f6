//! The program's own `/proc/self/task` directory: one entry per thread of
//! the program, by the ids it knows them by.
//!
//! The host's directory lists coprof's threads by the host's ids, which
//! mean nothing to the program (its threads run on coprof's, with the
//! simulator's ids). Programs list it to find their threads: sanitizers
//! and leak checkers stop each one, runtimes and `ps -T` count them, and
//! debuggers attach to them. So a descriptor of the host's directory,
//! however the program opened it (`/proc/self/task`, `/proc/PID/task`
//! with its own pid), is kept, and `getdents64` on it answers with the
//! program's threads, in Linux's `linux_dirent64` records
//! (fs/proc/base.c, `proc_task_readdir`): `.`, `..`, then each thread's id
//! as a directory, the oldest first. The position in the listing is the
//! host descriptor's own offset (procfs lets a directory's offset be set
//! to any value), so that duplicates share it and `rewinddir`'s `lseek`
//! goes to the host as it is.
//!
//! A name an `*at` call takes relative to the directory (`openat(fd,
//! "TID/stat")`, as `opendir`'s callers do) is the program's own path
//! under `/proc/self/task`, and likewise under a descriptor of
//! `/proc/self` itself (`openat(fd, "maps")`, `readlinkat(fd, "exe")`).

use super::Kernel;
use std::os::unix::fs::MetadataExt;

/// `struct linux_dirent64`'s fixed part: inode, offset, length and type.
const HEADER: usize = 8 + 8 + 2 + 1;

/// Inode numbers given the listing's entries: any that are not 0 (a
/// reader may skip an entry of inode 0), apart from each other.
const INODE_BASE: u64 = 0x7f00_0000;

/// Which of the process's own `/proc` directories a host descriptor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProcDir {
    /// `/proc/self`.
    Process,
    /// `/proc/self/task`.
    Tasks,
}

impl ProcDir {
    /// The program's path of the directory.
    pub(crate) fn path(self) -> &'static [u8] {
        match self {
            ProcDir::Process => b"/proc/self",
            ProcDir::Tasks => b"/proc/self/task",
        }
    }
}

/// Which of the process's own `/proc` directories host descriptor `h`
/// is, if it is one: the same file as the host's `/proc/self` or
/// `/proc/self/task` now.
pub(crate) fn proc_dir_of(h: i32) -> Option<ProcDir> {
    let st = super::host_stat(h)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return None;
    }
    // Most directories are not in /proc: one look at its device, the
    // same for every process's /proc, settles those.
    static PROC_DEV: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    let proc_dev = PROC_DEV.get_or_init(|| std::fs::metadata("/proc").ok().map(|m| m.dev()));
    if *proc_dev != Some(st.st_dev) {
        return None;
    }
    let same = |path: &str| {
        std::fs::metadata(path).is_ok_and(|m| m.dev() == st.st_dev && m.ino() == st.st_ino)
    };
    if same("/proc/self/task") {
        Some(ProcDir::Tasks)
    } else if same("/proc/self") {
        Some(ProcDir::Process)
    } else {
        None
    }
}

/// The guest path `name` means when opened relative to `dir`: the
/// program's own path under it, for the program's own files to be found
/// by it ([`Kernel::proc_self`](super::Kernel)).
pub(crate) fn under(dir: ProcDir, name: &[u8]) -> Vec<u8> {
    let mut path = dir.path().to_vec();
    if !name.is_empty() && name != b"." {
        path.push(b'/');
        path.extend_from_slice(name);
    }
    path
}

/// The guest path `name` means relative to host directory `dir`
/// (`AT_FDCWD` for the working directory): under one of the program's
/// own `/proc` directories, its own path there ([`under`]); else `name`
/// as it is.
pub(crate) fn relative(dir: i32, name: Vec<u8>) -> Vec<u8> {
    if name.starts_with(b"/") || dir == libc::AT_FDCWD {
        return name;
    }
    match proc_dir_of(dir) {
        Some(own) => under(own, &name),
        None => name,
    }
}

/// The listing of threads `tids` from entry `pos` on (0 is `.`, 1 `..`,
/// then each thread), as `linux_dirent64` records that fit in `room`
/// bytes, each record's offset the position after it. `Err(EINVAL)` when
/// not even the first record fits, as Linux answers.
pub(crate) fn listing(tids: &[i64], pos: u64, room: usize) -> Result<(Vec<u8>, u64), i64> {
    let mut sorted = tids.to_vec();
    sorted.sort_unstable();
    let entries = [(b".".to_vec(), 1), (b"..".to_vec(), 2)].into_iter().chain(
        sorted
            .iter()
            .map(|&tid| (tid.to_string().into_bytes(), 16 + tid as u64)),
    );
    let mut out = Vec::new();
    let mut next = pos;
    for (i, (name, inode)) in entries.enumerate().skip(pos as usize) {
        let len = (HEADER + name.len() + 1).next_multiple_of(8);
        if out.len() + len > room {
            break;
        }
        let offset = i as u64 + 1;
        out.extend_from_slice(&(INODE_BASE + inode).to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&(len as u16).to_le_bytes());
        out.push(libc::DT_DIR);
        out.extend_from_slice(&name);
        out.resize(out.len() + len - HEADER - name.len(), 0);
        next = offset;
    }
    if out.is_empty() && (pos as usize) < sorted.len() + 2 {
        return Err(-(libc::EINVAL as i64));
    }
    Ok((out, next))
}

impl Kernel {
    /// The guest path `name` of an `*at` call relative to guest
    /// descriptor `dirfd` means: under a descriptor of the program's own
    /// `/proc` directory, its own path there ([`under`]); else `name` as
    /// it is. Err(EBADF) for a descriptor the program does not hold.
    pub(super) fn own_relative(&self, dirfd: u64, name: Vec<u8>) -> Result<Vec<u8>, i64> {
        if name.starts_with(b"/") {
            return Ok(name);
        }
        Ok(relative(self.dirfd(dirfd)?, name))
    }

    /// `getdents64` on host descriptor `h` of the host's `/proc/self/task`:
    /// the program's threads into `buf`, from the descriptor's offset on,
    /// which is then moved past them. Returns the bytes written, or the
    /// error.
    pub(super) fn list_threads(&self, h: i32, buf: &mut [u8]) -> i64 {
        // SAFETY: plain descriptor calls.
        let pos = unsafe { libc::lseek(h, 0, libc::SEEK_CUR) };
        if pos < 0 {
            return super::errno();
        }
        match listing(&self.tids, pos as u64, buf.len()) {
            Ok((bytes, next)) => {
                buf[..bytes.len()].copy_from_slice(&bytes);
                // SAFETY: as above.
                if unsafe { libc::lseek(h, next as i64, libc::SEEK_SET) } < 0 {
                    return super::errno();
                }
                bytes.len() as i64
            }
            Err(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names and offsets of `bytes`' records.
    fn names(mut bytes: &[u8]) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let offset = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
            let len = u16::from_le_bytes(bytes[16..18].try_into().unwrap()) as usize;
            assert_eq!(len % 8, 0);
            assert_eq!(bytes[18], libc::DT_DIR);
            assert_ne!(u64::from_le_bytes(bytes[..8].try_into().unwrap()), 0);
            let name = &bytes[HEADER..len];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap()];
            out.push((String::from_utf8(name.to_vec()).unwrap(), offset));
            bytes = &bytes[len..];
        }
        out
    }

    #[test]
    fn the_listing_is_dot_dotdot_then_each_thread_oldest_first_in_as_many_reads_as_it_takes() {
        let tids = [44, 42, 43];
        let (all, end) = listing(&tids, 0, 4096).unwrap();
        let want = [(".", 1), ("..", 2), ("42", 3), ("43", 4), ("44", 5)];
        let want: Vec<(String, u64)> = want.iter().map(|&(n, o)| (n.into(), o)).collect();
        assert_eq!(names(&all), want);
        assert_eq!(end, 5);
        // Read in a buffer of two records at a time, from each record's
        // offset: the same entries, then none at the end.
        let mut pos = 0;
        let mut read = Vec::new();
        loop {
            let (bytes, next) = listing(&tids, pos, 48).unwrap();
            if bytes.is_empty() {
                break;
            }
            read.extend(names(&bytes));
            pos = next;
        }
        assert_eq!(read, want);
        // A buffer too small for one record.
        assert_eq!(listing(&tids, 0, 16), Err(-(libc::EINVAL as i64)));
        assert_eq!(listing(&tids, 5, 16).unwrap().0, Vec::<u8>::new());
    }

    #[test]
    fn a_name_under_a_directory_is_the_programs_path_under_it() {
        assert_eq!(
            under(ProcDir::Tasks, b"43/stat"),
            b"/proc/self/task/43/stat"
        );
        assert_eq!(under(ProcDir::Process, b"maps"), b"/proc/self/maps");
        assert_eq!(under(ProcDir::Tasks, b"."), b"/proc/self/task");
    }

    #[test]
    fn the_hosts_own_directories_are_known_by_their_descriptors() {
        let open = |p: &str| std::fs::File::open(p).unwrap();
        use std::os::fd::AsRawFd;
        let (tasks, me, other) = (open("/proc/self/task"), open("/proc/self"), open("/proc"));
        assert_eq!(proc_dir_of(tasks.as_raw_fd()), Some(ProcDir::Tasks));
        assert_eq!(proc_dir_of(me.as_raw_fd()), Some(ProcDir::Process));
        assert_eq!(proc_dir_of(other.as_raw_fd()), None);
        assert_eq!(proc_dir_of(-1), None);
    }
}

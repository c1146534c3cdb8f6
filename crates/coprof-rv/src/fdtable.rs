//! The guest's file descriptors, mapped onto host descriptors.
//!
//! Files are the host's, as under qemu-user, but the guest gets its own
//! numbering (lowest free number first, as POSIX requires), so a guest
//! cannot see or close the descriptors coprof itself holds (a trace file
//! being written, say). Descriptors 0, 1 and 2 are the host's own.

/// Guest descriptor → host descriptor.
#[derive(Debug)]
pub struct FdTable {
    map: Vec<Option<i32>>,
}

impl Default for FdTable {
    fn default() -> Self {
        FdTable::new()
    }
}

/// Most descriptors a guest may hold (RLIMIT_NOFILE's usual soft limit).
pub const MAX_FDS: usize = 1024;

/// The host descriptors from 3 up that are open now. Called before the
/// host process opens any file of its own (first thing in `main`), these
/// are the ones it inherited, for [`Config::inherited_fds`](crate::Config).
pub fn inherited_fds() -> Vec<i32> {
    (3..MAX_FDS as i32)
        // SAFETY: plain call; an fd that is not open answers EBADF.
        .filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0)
        .collect()
}

impl FdTable {
    /// Standard input, output and error, shared with the host.
    pub fn new() -> FdTable {
        FdTable {
            map: vec![Some(0), Some(1), Some(2)],
        }
    }

    /// Adds the host descriptors `fds` under their own numbers: those the
    /// process inherited beyond the first three (a shell's `3<file`, a
    /// parent's pipe), which the program may use as a process started by
    /// Linux would.
    pub fn adopt(&mut self, fds: &[i32]) {
        for &fd in fds {
            if (3..MAX_FDS as i32).contains(&fd) {
                self.insert_at(fd as usize, fd);
            }
        }
    }

    /// The host descriptor for guest `fd`.
    pub fn host(&self, fd: i64) -> Option<i32> {
        if fd < 0 {
            return None;
        }
        self.map.get(fd as usize).copied().flatten()
    }

    /// The host descriptors the guest holds, each once per guest number.
    pub fn hosts(&self) -> impl Iterator<Item = i32> + '_ {
        self.map.iter().flatten().copied()
    }

    /// Installs `host` at the lowest free guest number at or above `min`.
    pub fn insert(&mut self, host: i32, min: usize) -> Option<i64> {
        let mut i = min;
        while i < self.map.len() && self.map[i].is_some() {
            i += 1;
        }
        if i >= MAX_FDS {
            return None;
        }
        if i >= self.map.len() {
            self.map.resize(i + 1, None);
        }
        self.map[i] = Some(host);
        Some(i as i64)
    }

    /// Installs `host` exactly at guest `fd`, returning the host
    /// descriptor it replaces.
    pub fn insert_at(&mut self, fd: usize, host: i32) -> Option<i32> {
        if fd >= self.map.len() {
            self.map.resize(fd + 1, None);
        }
        self.map[fd].replace(host)
    }

    /// Forgets guest `fd`, returning its host descriptor.
    pub fn remove(&mut self, fd: i64) -> Option<i32> {
        if fd < 0 {
            return None;
        }
        self.map.get_mut(fd as usize).and_then(|s| s.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_free_number() {
        let mut t = FdTable::new();
        assert_eq!(t.insert(10, 0), Some(3));
        assert_eq!(t.insert(11, 0), Some(4));
        assert_eq!(t.remove(3), Some(10));
        assert_eq!(t.host(3), None);
        assert_eq!(t.insert(12, 0), Some(3));
        assert_eq!(t.insert(13, 10), Some(10));
        assert_eq!(t.host(10), Some(13));
        assert_eq!(t.host(-1), None);
        assert_eq!(t.insert_at(4, 20), Some(11));
    }

    #[test]
    fn inherited_descriptors_keep_their_numbers() {
        let mut t = FdTable::new();
        t.adopt(&[0, 5, 7, -1, MAX_FDS as i32]);
        assert_eq!(t.host(0), Some(0));
        assert_eq!(t.host(5), Some(5));
        assert_eq!(t.host(7), Some(7));
        assert_eq!(t.host(6), None);
        assert_eq!(t.insert(9, 0), Some(3));
        assert_eq!(t.insert(10, 5), Some(6));
    }
}

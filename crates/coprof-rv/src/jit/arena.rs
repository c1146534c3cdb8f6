//! Executable memory for translated blocks: one host mapping, filled from
//! the start and emptied whole.
//!
//! Translated blocks are never freed one by one. The simulator drops every
//! translation at once when it drops its pre-decoded code (`fence.i`, a
//! store to code, `munmap`) or when the arena is full, as QEMU's
//! translation buffer is flushed whole.

use std::io;

/// Where each translation starts: a multiple of 16 bytes, the alignment
/// the host's front end fetches best from.
const ALIGN: usize = 16;

/// A region of host memory that is writable and executable.
pub(crate) struct Arena {
    ptr: *mut u8,
    len: usize,
    used: usize,
}

impl Arena {
    /// Maps `len` bytes (committed as they are written).
    pub(crate) fn new(len: usize) -> io::Result<Arena> {
        // SAFETY: a fresh anonymous private mapping; nothing aliases it.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Arena {
            ptr: ptr.cast(),
            len,
            used: 0,
        })
    }

    /// Copies `code` in and returns its offset, or `None` when it does
    /// not fit in what is left.
    pub(crate) fn add(&mut self, code: &[u8]) -> Option<u32> {
        let at = self.used.next_multiple_of(ALIGN);
        if at + code.len() > self.len || at > u32::MAX as usize / 2 {
            return None;
        }
        // SAFETY: at + code.len() <= len, inside the mapping; no code runs
        // while the simulator adds a translation.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), self.ptr.add(at), code.len()) };
        self.used = at + code.len();
        Some(at as u32)
    }

    /// Forgets every translation; the caller must have dropped every
    /// offset [`add`](Self::add) returned.
    pub(crate) fn clear(&mut self) {
        self.used = 0;
    }

    /// Bytes of translations held.
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    /// The address of the translation at `offset`.
    pub(crate) fn at(&self, offset: u32) -> *const u8 {
        debug_assert!((offset as usize) < self.used);
        // SAFETY: offsets come from `add`, inside the mapping.
        unsafe { self.ptr.add(offset as usize) }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

//! Executable memory for translated blocks: one host mapping, filled from
//! the start and emptied whole.
//!
//! Translated blocks are never freed one by one. The simulator drops every
//! translation at once when it drops its pre-decoded code (`fence.i`, a
//! store to code, `munmap`) or when the arena is full, as QEMU's
//! translation buffer is flushed whole.

use super::x86::Translation;
use std::io;

/// Where each translation starts: a multiple of 16 bytes, the alignment
/// the host's front end fetches best from.
const ALIGN: usize = 16;

/// The header's `jalr` target before any link: odd, which no target is.
const NO_TARGET: u64 = u64::MAX;

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

    /// Copies a translation in, its header's words made addresses, and
    /// returns its offset, or `None` when it does not fit in what is left.
    pub(crate) fn add(&mut self, t: &Translation) -> Option<u32> {
        let code = &t.bytes;
        let at = self.used.next_multiple_of(ALIGN);
        if at + code.len() > self.len || at > u32::MAX as usize / 2 {
            return None;
        }
        // SAFETY: at + code.len() <= len, inside the mapping; no code runs
        // while the simulator adds a translation. The header's four
        // words are the first HEADER bytes of the code.
        unsafe {
            let p = self.ptr.add(at);
            std::ptr::copy_nonoverlapping(code.as_ptr(), p, code.len());
            let words = p as *mut u64;
            let addr = |offset: u64| if offset == 0 { 0 } else { p as u64 + offset };
            words.write_unaligned(addr(t.exits[0]));
            words.add(1).write_unaligned(addr(t.exits[1]));
            words.add(2).write_unaligned(addr(t.chained_entry));
            words.add(3).write_unaligned(NO_TARGET);
        }
        self.used = at + code.len();
        Some(at as u32)
    }

    /// Makes way `way` out of the translation at `from` go on to the
    /// translation at `to`, if that way can be linked.
    pub(crate) fn link(&mut self, from: u32, way: usize, to: u32) {
        debug_assert!(way < 2);
        // SAFETY: both are offsets of translations `add` copied in, whose
        // first three words are the header; no code runs meanwhile.
        unsafe {
            let slot = (self.ptr.add(from as usize) as *mut u64).add(way);
            if slot.read_unaligned() != 0 {
                slot.write_unaligned(self.entry(to));
            }
        }
    }

    /// Makes the one way out of the translation at `from`, which ends in
    /// a `jalr`, go on to the translation at `to` when its target is
    /// `pc`, if that way can be linked.
    pub(crate) fn link_target(&mut self, from: u32, to: u32, pc: u64) {
        // SAFETY: as in `link`.
        unsafe {
            let words = self.ptr.add(from as usize) as *mut u64;
            if words.read_unaligned() != 0 {
                words.write_unaligned(self.entry(to));
                words.add(3).write_unaligned(pc);
            }
        }
    }

    /// The address of the entry from another translation of the
    /// translation at `offset`.
    pub(crate) fn entry(&self, offset: u32) -> u64 {
        // SAFETY: an offset `add` returned; its header's third word is
        // that entry's address.
        unsafe {
            (self.ptr.add(offset as usize) as *const u64)
                .add(2)
                .read_unaligned()
        }
    }

    /// Forgets every translation; the caller must have dropped every
    /// offset [`add`](Self::add) returned.
    pub(crate) fn clear(&mut self) {
        self.used = 0;
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

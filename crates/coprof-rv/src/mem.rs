//! Guest memory: one flat host reservation for the whole user address
//! space plus a table of page permissions.
//!
//! The guest sees the user half of an Sv39 address space (256 GiB, as a
//! Linux RV64 process does; RISC-V Privileged ISA §4.4). coprof reserves the
//! same amount of host *address space* once (no memory is committed until a
//! page is mapped and touched), so a guest address is a host address plus a
//! constant: a load is a bounds check, one permission-table byte and one
//! host load. Mapping a guest range makes the host pages read-write and sets
//! the guest permissions in the table; unmapping replaces the host pages
//! with fresh zero pages. Accesses are checked against the table, never
//! against host protection, so a guest fault is an ordinary `Err`.

use std::io;

/// Guest page size (Linux on RV64).
pub const PAGE: u64 = 4096;
/// One past the highest guest address (the Sv39 user range).
pub const LIMIT: u64 = 1 << 38;
const PAGES: usize = (LIMIT / PAGE) as usize;

/// Page permission bits, as in `mmap`'s `PROT_*`.
pub mod perm {
    /// Readable.
    pub const R: u8 = 1;
    /// Writable.
    pub const W: u8 = 2;
    /// Executable.
    pub const X: u8 = 4;
    /// Mapped (possibly with no access, `PROT_NONE`).
    pub const MAPPED: u8 = 8;
    /// Backed by a host `MAP_SHARED` mapping ([`super::Memory::map_shared`]):
    /// writes reach the file, and a forked child shares the pages.
    pub const SHARED: u8 = 16;
}

/// What kind of access failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A load.
    Read,
    /// A store.
    Write,
    /// An instruction fetch.
    Execute,
}

/// A guest access to an address that is unmapped or lacks the permission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The faulting guest address.
    pub addr: u64,
    /// What was attempted.
    pub access: Access,
}

/// Rounds `v` up to a multiple of the page size (saturating).
pub fn page_up(v: u64) -> u64 {
    v.saturating_add(PAGE - 1) & !(PAGE - 1)
}

/// Rounds `v` down to a multiple of the page size.
pub fn page_down(v: u64) -> u64 {
    v & !(PAGE - 1)
}

/// [`Memory::take_code_written`] when nothing was stored into code: an
/// empty range that any store widens (its start above its end, so that
/// the first store's address becomes both).
#[allow(clippy::reversed_empty_ranges)]
const NONE_WRITTEN: std::ops::Range<u64> = u64::MAX..0;

/// The guest's memory.
pub struct Memory {
    base: *mut u8,
    perms: Vec<u8>,
    /// Set when a store hits an executable page: the pre-decoded code may
    /// be stale, and the interpreter drops it at the end of the block if
    /// it decoded any from `code_written_at`.
    pub code_written: bool,
    /// The addresses of the stores into executable pages since the flag
    /// was last taken ([`take_code_written`](Self::take_code_written)):
    /// from the lowest to the end of the highest.
    code_written_at: std::ops::Range<u64>,
}

impl Memory {
    /// Reserves the guest address space (no memory is committed yet).
    pub fn new() -> io::Result<Memory> {
        // SAFETY: an anonymous, private, PROT_NONE reservation; the kernel
        // chooses the place. Nothing aliases it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                LIMIT as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Memory {
            base: base as *mut u8,
            perms: vec![0; PAGES],
            code_written: false,
            code_written_at: NONE_WRITTEN,
        })
    }

    fn range_ok(addr: u64, len: u64) -> bool {
        addr.is_multiple_of(PAGE) && len.is_multiple_of(PAGE) && addr < LIMIT && len <= LIMIT - addr
    }

    /// Maps `[addr, addr+len)` (page-aligned) with permissions `prot`
    /// (`perm::R|W|X`), zero-filled. Existing contents are discarded.
    pub fn map(&mut self, addr: u64, len: u64, prot: u8) -> io::Result<()> {
        if !Self::range_ok(addr, len) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        if len == 0 {
            return Ok(());
        }
        self.release(addr, len)?;
        // SAFETY: the range lies inside our reservation (checked above).
        let r = unsafe {
            libc::mprotect(
                self.base.add(addr as usize) as *mut libc::c_void,
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        let p = (prot & (perm::R | perm::W | perm::X)) | perm::MAPPED;
        self.perms[(addr / PAGE) as usize..((addr + len) / PAGE) as usize].fill(p);
        Ok(())
    }

    /// Maps `[addr, addr+len)` (page-aligned) with permissions `prot` onto
    /// a host `MAP_SHARED` mapping: of the host descriptor `fd` from byte
    /// `offset` (open for reading and writing), or anonymous memory when
    /// `fd` is `None`. The host process's children (the program's, which
    /// the simulator forks) share the pages, and a file's pages are the
    /// file's, as under Linux. Existing contents are discarded.
    pub fn map_shared(
        &mut self,
        addr: u64,
        len: u64,
        prot: u8,
        fd: Option<i32>,
        offset: u64,
    ) -> io::Result<()> {
        if !Self::range_ok(addr, len) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        if len == 0 {
            return Ok(());
        }
        let flags =
            libc::MAP_SHARED | libc::MAP_FIXED | if fd.is_none() { libc::MAP_ANONYMOUS } else { 0 };
        // SAFETY: MAP_FIXED over a part of our own reservation (checked
        // above); the host pages stay readable and writable, as every
        // mapped page is, and the table keeps the guest's permissions.
        let r = unsafe {
            libc::mmap(
                self.base.add(addr as usize) as *mut libc::c_void,
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd.unwrap_or(-1),
                offset as libc::off_t,
            )
        };
        if r == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            // Whatever the failed call left there, inaccessible again.
            let _ = self.unmap(addr, len);
            return Err(e);
        }
        let p = (prot & (perm::R | perm::W | perm::X)) | perm::MAPPED | perm::SHARED;
        self.perms[(addr / PAGE) as usize..((addr + len) / PAGE) as usize].fill(p);
        Ok(())
    }

    /// Attaches the host's System V shared memory segment `id` at
    /// `[addr, addr+len)` (page-aligned, `len` the segment's size rounded
    /// up to pages), replacing what was there, with the guest permissions
    /// `prot`: the host's `shmat`, so that the segment is the host
    /// kernel's, shared with the program's forked children and with any
    /// other process attached to it. `read_only` attaches it so on the
    /// host too.
    pub fn attach_sysv(
        &mut self,
        addr: u64,
        len: u64,
        prot: u8,
        id: i32,
        read_only: bool,
    ) -> io::Result<()> {
        if !Self::range_ok(addr, len) || len == 0 {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let flags = libc::SHM_REMAP | if read_only { libc::SHM_RDONLY } else { 0 };
        // SAFETY: SHM_REMAP over a part of our own reservation (checked
        // above), as MAP_FIXED does for `map_shared`.
        let r = unsafe {
            libc::shmat(
                id,
                self.base.add(addr as usize) as *const libc::c_void,
                flags,
            )
        };
        if r as isize == -1 {
            return Err(io::Error::last_os_error());
        }
        let p = (prot & (perm::R | perm::W | perm::X)) | perm::MAPPED | perm::SHARED;
        self.perms[(addr / PAGE) as usize..((addr + len) / PAGE) as usize].fill(p);
        Ok(())
    }

    /// Detaches the System V segment attached at `addr` by
    /// [`attach_sysv`](Self::attach_sysv), `len` bytes, and reserves the
    /// range again, unmapped.
    pub fn detach_sysv(&mut self, addr: u64, len: u64) -> io::Result<()> {
        if !Self::range_ok(addr, len) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: an address inside our reservation.
        let r = unsafe { libc::shmdt(self.base.add(addr as usize) as *const libc::c_void) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        self.unmap(addr, len)
    }

    /// Moves the host pages of `[from, from+len)` to `to` (page-aligned,
    /// not overlapping, `to` free), keeping their permissions: a shared
    /// mapping stays the same shared memory, as `mremap` moves it.
    pub fn move_pages(&mut self, from: u64, len: u64, to: u64) -> io::Result<()> {
        if !Self::range_ok(from, len) || !Self::range_ok(to, len) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        if len == 0 {
            return Ok(());
        }
        // SAFETY: both ranges lie in our reservation; MREMAP_FIXED replaces
        // the reservation's pages at `to`.
        let r = unsafe {
            libc::mremap(
                self.base.add(from as usize) as *mut libc::c_void,
                len as usize,
                len as usize,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                self.base.add(to as usize) as *mut libc::c_void,
            )
        };
        if r == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // The old range left a hole in the reservation: reserve it again.
        self.release(from, len)?;
        let (f, t) = ((from / PAGE) as usize, (to / PAGE) as usize);
        let n = (len / PAGE) as usize;
        self.perms.copy_within(f..f + n, t);
        self.perms[f..f + n].fill(0);
        Ok(())
    }

    /// Flushes the shared file pages of `[addr, addr+len)` to their file
    /// (`msync`), with the host's `flags`; private pages have nothing to
    /// flush.
    pub fn sync(&self, addr: u64, len: u64, flags: i32) -> io::Result<()> {
        if !Self::range_ok(addr, len) || !self.range_has(addr, len, perm::SHARED) {
            return Ok(());
        }
        // SAFETY: inside our reservation.
        let r = unsafe {
            libc::msync(
                self.base.add(addr as usize) as *mut libc::c_void,
                len as usize,
                flags,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Replaces the host pages of a range by fresh inaccessible ones.
    fn release(&mut self, addr: u64, len: u64) -> io::Result<()> {
        // SAFETY: MAP_FIXED over a part of our own reservation.
        let r = unsafe {
            libc::mmap(
                self.base.add(addr as usize) as *mut libc::c_void,
                len as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if r == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Unmaps `[addr, addr+len)` (page-aligned). Unmapped parts are fine.
    pub fn unmap(&mut self, addr: u64, len: u64) -> io::Result<()> {
        if !Self::range_ok(addr, len) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        if len == 0 {
            return Ok(());
        }
        self.release(addr, len)?;
        self.perms[(addr / PAGE) as usize..((addr + len) / PAGE) as usize].fill(0);
        Ok(())
    }

    /// Changes the permissions of mapped pages; fails with ENOMEM if part of
    /// the range is unmapped (as `mprotect` does).
    pub fn protect(&mut self, addr: u64, len: u64, prot: u8) -> io::Result<()> {
        if !Self::range_ok(addr, len) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let pages = (addr / PAGE) as usize..((addr + len) / PAGE) as usize;
        if self.perms[pages.clone()]
            .iter()
            .any(|p| p & perm::MAPPED == 0)
        {
            return Err(io::Error::from_raw_os_error(libc::ENOMEM));
        }
        let p = (prot & (perm::R | perm::W | perm::X)) | perm::MAPPED;
        for page in &mut self.perms[pages] {
            *page = p | (*page & perm::SHARED);
        }
        Ok(())
    }

    /// Whether the page holding `addr` is shared memory
    /// ([`Memory::map_shared`]), which other processes may write at once.
    #[inline]
    pub fn is_shared(&self, addr: u64) -> bool {
        self.perm_at(addr) & perm::SHARED != 0
    }

    /// The host address of guest address 0 and the table of permissions
    /// per page, for translated code ([`crate::jit`]), which checks each
    /// access as [`load`](Self::load) and [`store`](Self::store) do.
    #[inline]
    pub(crate) fn raw_parts(&self) -> (*mut u8, *const u8) {
        (self.base, self.perms.as_ptr())
    }

    /// Permission bits of the page holding `addr` (0 if unmapped).
    #[inline]
    pub fn perm_at(&self, addr: u64) -> u8 {
        if addr >= LIMIT {
            return 0;
        }
        // SAFETY: addr < LIMIT, so the index is below PAGES.
        unsafe { *self.perms.get_unchecked((addr / PAGE) as usize) }
    }

    /// The mapped address space as runs of pages with the same
    /// permissions: `(start, end, permissions)` in address order, for
    /// `/proc/self/maps`. Unmapped stretches are skipped eight pages at a
    /// time.
    pub fn regions(&self) -> Vec<(u64, u64, u8)> {
        let mut out: Vec<(u64, u64, u8)> = Vec::new();
        let mut i = 0;
        while i < self.perms.len() {
            if i % 8 == 0 && i + 8 <= self.perms.len() {
                let word = u64::from_ne_bytes(self.perms[i..i + 8].try_into().unwrap_or([0; 8]));
                if word == 0 {
                    i += 8;
                    continue;
                }
            }
            let p = self.perms[i];
            if p != 0 {
                let addr = i as u64 * PAGE;
                match out.last_mut() {
                    Some(last) if last.1 == addr && last.2 == p => last.1 += PAGE,
                    _ => out.push((addr, addr + PAGE, p)),
                }
            }
            i += 1;
        }
        out
    }

    /// Whether every page of `[addr, addr+len)` is unmapped.
    pub fn is_free(&self, addr: u64, len: u64) -> bool {
        Self::range_ok(addr, len)
            && self.perms[(addr / PAGE) as usize..((addr + len) / PAGE) as usize]
                .iter()
                .all(|p| *p == 0)
    }

    /// Whether every page of `[addr, addr+len)` (page-aligned) is mapped;
    /// an empty range is.
    pub fn is_mapped(&self, addr: u64, len: u64) -> bool {
        Self::range_ok(addr, len)
            && self.perms[(addr / PAGE) as usize..((addr + len) / PAGE) as usize]
                .iter()
                .all(|p| p & perm::MAPPED != 0)
    }

    /// The highest free, page-aligned range of `len` bytes that ends at or
    /// below `top` and starts at or above `bottom` (top-down allocation as
    /// Linux's default mmap layout).
    pub fn find_free(&self, len: u64, bottom: u64, top: u64) -> Option<u64> {
        let need = (page_up(len) / PAGE) as usize;
        if need == 0 {
            return None;
        }
        let lo = (page_up(bottom) / PAGE) as usize;
        let mut hi = (page_down(top.min(LIMIT)) / PAGE) as usize;
        while hi >= lo + need {
            match self.perms[hi - need..hi].iter().rposition(|p| *p != 0) {
                None => return Some(((hi - need) as u64) * PAGE),
                Some(i) => hi = hi - need + i,
            }
        }
        None
    }

    /// Validates `size` bytes at `addr` for `want`; returns the host
    /// pointer and the union of the permissions of the pages touched.
    #[inline(always)]
    fn check(
        &self,
        addr: u64,
        size: u64,
        want: u8,
        access: Access,
    ) -> Result<(*mut u8, u8), Fault> {
        let end = addr.wrapping_add(size - 1);
        if addr < LIMIT && end < LIMIT && end >= addr {
            // SAFETY: both indices are below PAGES because both < LIMIT.
            let (p0, p1) = unsafe {
                (
                    *self.perms.get_unchecked((addr / PAGE) as usize),
                    *self.perms.get_unchecked((end / PAGE) as usize),
                )
            };
            if p0 & p1 & want == want {
                // SAFETY: inside the reservation; the pages are host RW.
                return Ok((unsafe { self.base.add(addr as usize) }, p0 | p1));
            }
            let bad = if p0 & want == want {
                page_down(end)
            } else {
                addr
            };
            return Err(Fault { addr: bad, access });
        }
        Err(Fault { addr, access })
    }

    /// Loads a little-endian value of `N` bytes (1, 2, 4, 8), zero-extended.
    #[inline(always)]
    pub fn load<const N: usize>(&self, addr: u64) -> Result<u64, Fault> {
        let (p, _) = self.check(addr, N as u64, perm::R, Access::Read)?;
        // SAFETY: `check` validated N bytes at p; unaligned reads are fine.
        unsafe {
            Ok(match N {
                1 => *p as u64,
                2 => (p as *const u16).read_unaligned() as u64,
                4 => (p as *const u32).read_unaligned() as u64,
                _ => (p as *const u64).read_unaligned(),
            })
        }
    }

    /// Stores the low `N` bytes of `v`, little-endian.
    #[inline(always)]
    pub fn store<const N: usize>(&mut self, addr: u64, v: u64) -> Result<(), Fault> {
        let (p, perms) = self.check(addr, N as u64, perm::W, Access::Write)?;
        if perms & perm::X != 0 {
            self.note_code_written(addr, N as u64);
        }
        // SAFETY: `check` validated N writable bytes at p.
        unsafe {
            match N {
                1 => *p = v as u8,
                2 => (p as *mut u16).write_unaligned(v as u16),
                4 => (p as *mut u32).write_unaligned(v as u32),
                _ => (p as *mut u64).write_unaligned(v),
            }
        }
        Ok(())
    }

    /// Fetches 16 bits of instruction at `addr` (execute permission).
    #[inline]
    pub fn fetch16(&self, addr: u64) -> Result<u16, Fault> {
        let (p, _) = self.check(addr, 2, perm::X, Access::Execute)?;
        // SAFETY: validated by `check`.
        Ok(unsafe { (p as *const u16).read_unaligned() })
    }

    /// An atomic read-modify-write of the naturally aligned `N`-byte word
    /// at `addr` (4 or 8; an AMO): stores `f(old)` and returns `old`. In
    /// shared memory, which other processes write at the same time, it is
    /// a host compare-and-swap loop; elsewhere the hart is the only writer
    /// and a load and a store do. A page that cannot be read faults as a
    /// load, one that cannot be written as a store.
    #[inline]
    pub fn atomic_rmw<const N: usize>(
        &mut self,
        addr: u64,
        f: impl Fn(u64) -> u64,
    ) -> Result<u64, Fault> {
        let old = self.load::<N>(addr)?;
        if !self.is_shared(addr) {
            self.store::<N>(addr, f(old))?;
            return Ok(old);
        }
        let (p, _) = self.check(addr, N as u64, perm::W, Access::Write)?;
        // SAFETY: `check` validated N writable bytes at p, aligned by the
        // caller (AMOs are naturally aligned); the host page is shared
        // memory that other processes access only atomically or by
        // aligned plain accesses.
        Ok(unsafe { host_rmw::<N>(p, old, f) })
    }

    /// The store of an SC whose LR loaded `expected` from the naturally
    /// aligned `N`-byte word at `addr` (4 or 8): in shared memory, done
    /// only if the word still holds `expected` (a host compare-and-swap,
    /// since another process may have written it); elsewhere always.
    /// Returns whether it stored.
    #[inline]
    pub fn store_conditional<const N: usize>(
        &mut self,
        addr: u64,
        expected: u64,
        v: u64,
    ) -> Result<bool, Fault> {
        if !self.is_shared(addr) {
            self.store::<N>(addr, v)?;
            return Ok(true);
        }
        let (p, _) = self.check(addr, N as u64, perm::W, Access::Write)?;
        // SAFETY: as in `atomic_rmw`.
        Ok(unsafe { host_cas::<N>(p, expected, v) })
    }

    /// Waits on the host, at most `timeout`, while the 4-byte word at
    /// `addr` in shared memory holds `val`, for another process's
    /// [`futex_wake`](Self::futex_wake) of it: the host's `FUTEX_WAIT` on
    /// the shared page (not private, so other processes' wakes reach it).
    /// Returns at once when `addr` is not shared memory.
    pub fn futex_wait(&self, addr: u64, val: u32, timeout: std::time::Duration) {
        if !self.is_shared(addr) || !addr.is_multiple_of(4) {
            return;
        }
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: a mapped, aligned word of our reservation and a valid
        // timespec; the call only reads the word.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.base.add(addr as usize),
                libc::FUTEX_WAIT,
                val,
                &ts as *const libc::timespec,
            );
        }
    }

    /// Wakes up to `count` host waiters on the 4-byte word at `addr` in
    /// shared memory (other processes' [`futex_wait`](Self::futex_wait)s);
    /// nothing when `addr` is not shared memory.
    pub fn futex_wake(&self, addr: u64, count: u32) {
        if !self.is_shared(addr) || !addr.is_multiple_of(4) {
            return;
        }
        // SAFETY: a mapped, aligned word of our reservation.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.base.add(addr as usize),
                libc::FUTEX_WAKE,
                count.min(i32::MAX as u32),
            );
        }
    }

    /// The guest bytes `[addr, addr+len)`, which must all carry `want`.
    pub fn slice(&self, addr: u64, len: u64, want: u8) -> Result<&[u8], Fault> {
        if len == 0 {
            return Ok(&[]);
        }
        let p = self.check_range(addr, len, want, Access::Read)?;
        // SAFETY: every page of the range is mapped (host RW) per the table.
        Ok(unsafe { std::slice::from_raw_parts(p, len as usize) })
    }

    /// The guest bytes `[addr, addr+len)` for writing (write permission).
    pub fn slice_mut(&mut self, addr: u64, len: u64) -> Result<&mut [u8], Fault> {
        if len == 0 {
            return Ok(&mut []);
        }
        let p = self.check_range(addr, len, perm::W, Access::Write)?;
        if self.range_has(addr, len, perm::X) {
            self.note_code_written(addr, len);
        }
        // SAFETY: every page of the range is mapped (host RW) per the table.
        Ok(unsafe { std::slice::from_raw_parts_mut(p, len as usize) })
    }

    /// Writes bytes ignoring guest permissions (the loader filling
    /// read-only segments). The range must be mapped.
    pub fn poke(&mut self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        self.write_bytes(addr, bytes)?;
        if self.range_has(addr, bytes.len() as u64, perm::X) {
            self.note_code_written(addr, bytes.len() as u64);
        }
        Ok(())
    }

    /// [`poke`](Self::poke) of a new mapping's first contents, which are
    /// no change of code that ran: whatever the mapping replaced, the call
    /// that made it says so (so that the loader's `mmap` of a library does
    /// not make the simulator forget what it decoded elsewhere).
    pub fn fill_new(&mut self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        self.write_bytes(addr, bytes)
    }

    /// Copies `bytes` to `addr`, whatever the guest permissions: every
    /// page must be mapped.
    fn write_bytes(&mut self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        if bytes.is_empty() {
            return Ok(());
        }
        let p = self.check_range(addr, bytes.len() as u64, perm::MAPPED, Access::Write)?;
        // SAFETY: every page is mapped, hence host RW.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok(())
    }

    /// Records a store of `len` bytes at `addr` into an executable page.
    fn note_code_written(&mut self, addr: u64, len: u64) {
        self.code_written = true;
        let at = &mut self.code_written_at;
        *at = at.start.min(addr)..at.end.max(addr.saturating_add(len));
    }

    /// The addresses stored into in executable pages since the last call
    /// (from the lowest to the end of the highest; empty when none), and
    /// clears the flag.
    pub fn take_code_written(&mut self) -> std::ops::Range<u64> {
        self.code_written = false;
        std::mem::replace(&mut self.code_written_at, NONE_WRITTEN)
    }

    /// Whether giving `[addr, addr+len)` the permissions `prot` (a mapping
    /// or `mprotect`) changes code: the range is executable before or
    /// after, so that a block decoded there, or a fetch that faulted
    /// there and is kept as a block, may be stale.
    pub fn changes_code(&self, addr: u64, len: u64, prot: u8) -> bool {
        self.range_has(addr, len, perm::X) || prot & perm::X != 0
    }

    /// Whether any page of `[addr, addr+len)` carries permission `bit`.
    pub fn range_has(&self, addr: u64, len: u64, bit: u8) -> bool {
        if len == 0 || addr >= LIMIT {
            return false;
        }
        let len = len.min(LIMIT - addr);
        let first = (addr / PAGE) as usize;
        let last = ((addr + len - 1) / PAGE) as usize;
        self.perms[first..=last].iter().any(|p| p & bit != 0)
    }

    fn check_range(&self, addr: u64, len: u64, want: u8, access: Access) -> Result<*mut u8, Fault> {
        if addr >= LIMIT || len > LIMIT - addr {
            return Err(Fault { addr, access });
        }
        let first = addr / PAGE;
        let last = (addr + len - 1) / PAGE;
        for page in first..=last {
            if self.perms[page as usize] & want != want {
                return Err(Fault {
                    addr: (page * PAGE).max(addr),
                    access,
                });
            }
        }
        // SAFETY: inside the reservation.
        Ok(unsafe { self.base.add(addr as usize) })
    }

    /// Reads a NUL-terminated string of at most `max` bytes.
    pub fn read_cstr(&self, addr: u64, max: usize) -> Result<Vec<u8>, Fault> {
        let mut out = Vec::new();
        let mut a = addr;
        while out.len() < max {
            let b = self.load::<1>(a)? as u8;
            if b == 0 {
                return Ok(out);
            }
            out.push(b);
            a += 1;
        }
        Err(Fault {
            addr: a,
            access: Access::Read,
        })
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the reservation made in `new`.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, LIMIT as usize);
        }
    }
}

/// Stores `f(old)` at the `N`-byte word `p` atomically, starting from the
/// guess `old`; returns the value replaced.
///
/// # Safety
/// `p` must point to `N` (4 or 8) writable, naturally aligned bytes.
unsafe fn host_rmw<const N: usize>(p: *mut u8, old: u64, f: impl Fn(u64) -> u64) -> u64 {
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};
    if N == 4 {
        // SAFETY: per the function's contract.
        let a = unsafe { AtomicU32::from_ptr(p as *mut u32) };
        let mut cur = old as u32;
        loop {
            match a.compare_exchange_weak(cur, f(cur as u64) as u32, SeqCst, SeqCst) {
                Ok(_) => return cur as u64,
                Err(now) => cur = now,
            }
        }
    }
    // SAFETY: per the function's contract.
    let a = unsafe { AtomicU64::from_ptr(p as *mut u64) };
    let mut cur = old;
    loop {
        match a.compare_exchange_weak(cur, f(cur), SeqCst, SeqCst) {
            Ok(_) => return cur,
            Err(now) => cur = now,
        }
    }
}

/// Stores `v` at the `N`-byte word `p` if it holds `expected`; returns
/// whether it did.
///
/// # Safety
/// As [`host_rmw`].
unsafe fn host_cas<const N: usize>(p: *mut u8, expected: u64, v: u64) -> bool {
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};
    if N == 4 {
        // SAFETY: per the function's contract.
        let a = unsafe { AtomicU32::from_ptr(p as *mut u32) };
        return a
            .compare_exchange(expected as u32, v as u32, SeqCst, SeqCst)
            .is_ok();
    }
    // SAFETY: per the function's contract.
    let a = unsafe { AtomicU64::from_ptr(p as *mut u64) };
    a.compare_exchange(expected, v, SeqCst, SeqCst).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stores into executable pages are noted with their addresses, from
    /// the lowest to the end of the highest, by every way of writing but
    /// a new mapping's first contents; stores elsewhere are not.
    #[test]
    fn stores_into_code_are_noted_with_where_they_went() {
        let mut m = Memory::new().unwrap();
        m.map(0x20000, 2 * PAGE, perm::R | perm::W | perm::X)
            .unwrap();
        m.map(0x30000, PAGE, perm::R | perm::W).unwrap();
        assert_eq!(m.take_code_written(), NONE_WRITTEN);
        m.store::<4>(0x30000, 1).unwrap();
        m.fill_new(0x20000, &[1, 2, 3]).unwrap();
        assert!(!m.code_written);
        m.store::<4>(0x21000, 1).unwrap();
        m.store::<8>(0x20010, 1).unwrap();
        assert!(m.code_written);
        assert_eq!(m.take_code_written(), 0x20010..0x21004);
        assert!(!m.code_written);
        m.slice_mut(0x20100, 16).unwrap()[0] = 9;
        m.poke(0x20200, &[1, 2]).unwrap();
        assert_eq!(m.take_code_written(), 0x20100..0x20202);
        assert_eq!(m.take_code_written(), NONE_WRITTEN);
    }

    /// Shared pages are marked, keep the mark through `protect`, move
    /// with their contents and their mark, and lose it when mapped over
    /// privately; a host file's shared pages are the file.
    #[test]
    fn shared_pages_stay_shared() {
        let mut m = Memory::new().unwrap();
        m.map_shared(0x20000, 2 * PAGE, perm::R | perm::W, None, 0)
            .unwrap();
        assert_eq!(
            m.perm_at(0x20000),
            perm::R | perm::W | perm::MAPPED | perm::SHARED
        );
        m.store::<8>(0x21000, 77).unwrap();
        m.protect(0x20000, PAGE, perm::R).unwrap();
        assert_eq!(m.perm_at(0x20000), perm::R | perm::MAPPED | perm::SHARED);
        m.move_pages(0x20000, 2 * PAGE, 0x40000).unwrap();
        assert_eq!(m.perm_at(0x20000), 0, "the old place is free");
        assert!(m.load::<8>(0x21000).is_err());
        assert_eq!(m.load::<8>(0x41000).unwrap(), 77);
        assert_eq!(m.perm_at(0x40000), perm::R | perm::MAPPED | perm::SHARED);
        m.map(0x41000, PAGE, perm::R | perm::W).unwrap();
        assert_eq!(m.perm_at(0x41000), perm::R | perm::W | perm::MAPPED);
        assert_eq!(m.load::<8>(0x41000).unwrap(), 0);

        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &[0u8; 2 * PAGE as usize]).unwrap();
        use std::os::unix::io::AsRawFd;
        m.map_shared(
            0x60000,
            PAGE,
            perm::R | perm::W,
            Some(file.as_raw_fd()),
            PAGE,
        )
        .unwrap();
        m.store::<4>(0x60010, 0xdead_beef).unwrap();
        m.sync(0x60000, PAGE, libc::MS_SYNC).unwrap();
        let mut back = [0u8; 4];
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut back, PAGE + 0x10).unwrap();
        assert_eq!(u32::from_le_bytes(back), 0xdead_beef);
    }

    #[test]
    fn map_load_store_and_faults() {
        let mut m = Memory::new().unwrap();
        m.map(0x10000, 2 * PAGE, perm::R | perm::W).unwrap();
        m.store::<8>(0x10ffc, 0x1122_3344_5566_7788).unwrap(); // crosses a page
        assert_eq!(m.load::<8>(0x10ffc).unwrap(), 0x1122_3344_5566_7788);
        assert_eq!(m.load::<2>(0x10ffe).unwrap(), 0x5566);
        assert_eq!(m.load::<1>(0x11fff).unwrap(), 0);
        assert_eq!(
            m.load::<4>(0x11ffe),
            Err(Fault {
                addr: 0x12000,
                access: Access::Read
            })
        );
        assert!(m.load::<1>(LIMIT).is_err());
        assert!(m.load::<8>(u64::MAX - 3).is_err());
        m.protect(0x10000, PAGE, perm::R).unwrap();
        assert_eq!(m.store::<1>(0x10000, 1).unwrap_err().access, Access::Write);
        m.unmap(0x10000, 2 * PAGE).unwrap();
        assert!(m.load::<1>(0x11000).is_err());
        m.map(0x10000, PAGE, perm::R).unwrap();
        assert_eq!(m.load::<8>(0x10ff8).unwrap(), 0, "fresh pages are zero");
    }

    #[test]
    fn find_free_is_top_down() {
        let mut m = Memory::new().unwrap();
        let top = 0x100_0000;
        let a = m.find_free(3 * PAGE, 0x10000, top).unwrap();
        assert_eq!(a, top - 3 * PAGE);
        m.map(a, 3 * PAGE, perm::R).unwrap();
        let b = m.find_free(PAGE, 0x10000, top).unwrap();
        assert_eq!(b, a - PAGE);
        assert!(m.find_free(PAGE, top - PAGE, top).is_none());
        assert!(m.is_free(b, PAGE));
        assert!(!m.is_free(a, PAGE));
    }
}

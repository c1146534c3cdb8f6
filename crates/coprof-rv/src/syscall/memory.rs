//! The address space: `brk`, `mmap` of anonymous and file memory (shared
//! file mappings written back), `munmap`, `mprotect`, `mremap`, `msync`,
//! the lock calls, `mincore` and `madvise`, and `riscv_flush_icache`; and
//! the modules a mapping of an ELF file adds, for the profile's symbols.

use super::{errno, Kernel, Outcome, EBADF, EFAULT, EINVAL, ENOMEM};
use crate::error::SimError;
use crate::mem::{page_down, page_up, perm, Memory, PAGE};
use crate::process::MMAP_TOP;
use crate::sysno as nr;

/// The calls this module answers.
pub(super) const CALLS: &[u64] = &[
    nr::BRK,
    nr::MMAP,
    nr::MUNMAP,
    nr::MPROTECT,
    nr::MREMAP,
    nr::MSYNC,
    nr::MLOCK,
    nr::MUNLOCK,
    nr::MLOCK2,
    nr::MLOCKALL,
    nr::MUNLOCKALL,
    nr::MINCORE,
    nr::MADVISE,
    nr::RISCV_FLUSH_ICACHE,
];

impl Kernel {
    /// One of [`CALLS`], number `a[7]`, made at `pc`.
    pub(super) fn memory_call(
        &mut self,
        mem: &mut Memory,
        a: [u64; 8],
        pc: u64,
    ) -> Result<Outcome, SimError> {
        let num = a[7];
        let r: i64 = match num {
            nr::BRK => return Ok(self.brk(mem, a[0])),
            nr::MMAP => return self.mmap(mem, a),
            nr::MUNMAP => {
                if !a[0].is_multiple_of(PAGE) || a[1] == 0 {
                    EINVAL
                } else {
                    let len = page_up(a[1]);
                    let code = mem.range_has(a[0], len, perm::X);
                    self.file_maps.forget(a[0], len);
                    match mem.unmap(a[0], len) {
                        Ok(()) if code => return Ok(Outcome::RetFlush(0, a[0]..a[0] + len)),
                        Ok(()) => 0,
                        Err(_) => EINVAL,
                    }
                }
            }
            nr::MPROTECT => {
                // Bits beyond read, write, exec, PROT_SEM and the two grow
                // flags are refused, as is asking to grow both ways.
                let grows = libc::PROT_GROWSDOWN as u64 | libc::PROT_GROWSUP as u64;
                let known = 0xf | grows;
                if !a[0].is_multiple_of(PAGE) || a[2] & !known != 0 || a[2] & grows == grows {
                    EINVAL
                } else {
                    let (len, prot) = (page_up(a[1]), (a[2] & 7) as u8);
                    let code = mem.changes_code(a[0], len, prot);
                    match mem.protect(a[0], len, prot) {
                        Ok(()) if code => return Ok(Outcome::RetFlush(0, a[0]..a[0] + len)),
                        Ok(()) => 0,
                        Err(e) => -(e.raw_os_error().unwrap_or(libc::ENOMEM) as i64),
                    }
                }
            }
            nr::MREMAP => return self.mremap(mem, a, pc),
            // Nothing to write back (file mappings are private, or shared
            // read-only) and nothing to lock: these check their arguments
            // as Linux does and succeed on mapped memory.
            nr::MSYNC => {
                let (async_, invalidate, sync) = (1u64, 2u64, 4u64);
                let flags = a[2];
                if !a[0].is_multiple_of(PAGE)
                    || flags & !(async_ | invalidate | sync) != 0
                    || flags & (async_ | sync) == async_ | sync
                {
                    EINVAL
                } else if !mem.is_mapped(a[0], page_up(a[1])) {
                    ENOMEM
                } else {
                    match mem.sync(a[0], page_up(a[1]), flags as i32) {
                        Ok(()) => 0,
                        Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                    }
                }
            }
            nr::MLOCK | nr::MUNLOCK | nr::MLOCK2 => {
                if num == nr::MLOCK2 && a[2] & !1 != 0 {
                    EINVAL
                } else if !mem.is_mapped(page_down(a[0]), page_up(a[1].saturating_add(a[0] % PAGE)))
                {
                    ENOMEM
                } else {
                    0
                }
            }
            nr::MLOCKALL => {
                // MCL_CURRENT, MCL_FUTURE, MCL_ONFAULT (not alone).
                if a[0] == 0 || a[0] & !7 != 0 || a[0] == 4 {
                    EINVAL
                } else {
                    0
                }
            }
            nr::MUNLOCKALL => 0,
            nr::MINCORE => {
                // Every mapped page is resident: one byte of 1 per page.
                if !a[0].is_multiple_of(PAGE) {
                    EINVAL
                } else if !mem.is_mapped(a[0], page_up(a[1])) {
                    ENOMEM
                } else {
                    let pages = page_up(a[1]) / PAGE;
                    tryf!(mem.slice_mut(a[2], pages)).fill(1);
                    0
                }
            }
            nr::MADVISE => {
                // MADV_DONTNEED on private anonymous memory reads back as
                // zeros afterwards; other advice changes nothing visible.
                if !a[0].is_multiple_of(PAGE) {
                    EINVAL
                } else if a[2] == 4 {
                    let len = page_up(a[1]);
                    let mut at = a[0];
                    while at < a[0].saturating_add(len) {
                        let p = mem.perm_at(at);
                        // Shared pages keep their contents, as under Linux.
                        if p & perm::MAPPED != 0 && p & perm::SHARED == 0 {
                            let _ = mem.map(at, PAGE, p);
                        }
                        at += PAGE;
                    }
                    0
                } else {
                    0
                }
            }
            // What `fence.i` does for one hart, for every hart of the
            // process, as JIT compilers (PCRE2's, behind `grep -P`) ask
            // after writing code. Linux refuses flag bits other than
            // SYS_RISCV_FLUSH_ICACHE_LOCAL (1) and does not check the
            // range; the simulator forgets every decoded block.
            nr::RISCV_FLUSH_ICACHE => {
                if a[2] & !1 != 0 {
                    EINVAL
                } else {
                    return Ok(Outcome::RetFlush(0, super::ALL_CODE));
                }
            }
            _ => unreachable!("memory_call of a call not in CALLS"),
        };
        Ok(Outcome::Ret(r))
    }

    fn brk(&mut self, mem: &mut Memory, want: u64) -> Outcome {
        if want < self.brk_start {
            return Outcome::Ret(self.brk as i64);
        }
        let (cur_end, new_end) = (page_up(self.brk), page_up(want));
        if new_end > cur_end {
            if !mem.is_free(cur_end, new_end - cur_end)
                || mem
                    .map(cur_end, new_end - cur_end, perm::R | perm::W)
                    .is_err()
            {
                return Outcome::Ret(self.brk as i64);
            }
            self.areas
                .record(self.brk_start, new_end, coprof_core::areas::HEAP);
        } else if new_end < cur_end && mem.unmap(new_end, cur_end - new_end).is_err() {
            return Outcome::Ret(self.brk as i64);
        }
        self.brk = want;
        Outcome::Ret(want as i64)
    }

    fn mmap(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<Outcome, SimError> {
        let (addr, len, prot, flags, fd, off) =
            (a[0], a[1], (a[2] & 7) as u8, a[3] as i32, a[4] as i32, a[5]);
        // Linux's order: the offset, the descriptor, the length, the type.
        if off % PAGE != 0 {
            return Ok(Outcome::Ret(EINVAL));
        }
        let anon = flags & libc::MAP_ANONYMOUS != 0;
        let host = if anon {
            -1
        } else {
            match self.fds.host(fd as i64) {
                Some(h) => h,
                None => return Ok(Outcome::Ret(EBADF)),
            }
        };
        if len == 0 {
            return Ok(Outcome::Ret(EINVAL));
        }
        if len > crate::mem::LIMIT {
            return Ok(Outcome::Ret(ENOMEM));
        }
        // MAP_SHARED, MAP_PRIVATE or MAP_SHARED_VALIDATE, exactly one.
        if !matches!(flags & 0x0f, 1..=3) {
            return Ok(Outcome::Ret(EINVAL));
        }
        if !anon {
            // A file mapping needs a descriptor open for reading, of a
            // file that can be mapped (not a directory, pipe or socket).
            // SAFETY: plain descriptor calls on a descriptor we hold.
            let mode = unsafe { libc::fcntl(host, libc::F_GETFL) };
            if mode >= 0 && mode & libc::O_ACCMODE == libc::O_WRONLY {
                return Ok(Outcome::Ret(-(libc::EACCES as i64)));
            }
            // A shared mapping to write needs a descriptor open for
            // writing too (O_APPEND does not matter: Linux refuses only
            // files with the append-only attribute, which the host checks).
            let shared = flags & libc::MAP_SHARED != 0;
            if shared && prot & perm::W != 0 && mode & libc::O_ACCMODE != libc::O_RDWR {
                return Ok(Outcome::Ret(-(libc::EACCES as i64)));
            }
            // SAFETY: st is a valid out-parameter.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstat(host, &mut st) } == 0
                && matches!(
                    st.st_mode & libc::S_IFMT,
                    libc::S_IFDIR | libc::S_IFIFO | libc::S_IFSOCK
                )
            {
                return Ok(Outcome::Ret(-(libc::ENODEV as i64)));
            }
        }
        let len = page_up(len);
        let shared = flags & libc::MAP_SHARED != 0;
        let fixed = flags & libc::MAP_FIXED != 0;
        let noreplace = flags & libc::MAP_FIXED_NOREPLACE != 0;
        let at = if fixed || noreplace {
            if addr % PAGE != 0 {
                return Ok(Outcome::Ret(EINVAL));
            }
            if noreplace && !mem.is_free(addr, len) {
                return Ok(Outcome::Ret(-(libc::EEXIST as i64)));
            }
            addr
        } else if addr != 0 && addr % PAGE == 0 && mem.is_free(addr, len) {
            addr
        } else {
            match mem.find_free(len, page_up(self.brk) + PAGE, MMAP_TOP) {
                Some(a) => a,
                None => return Ok(Outcome::Ret(ENOMEM)),
            }
        };
        let changes_code = mem.changes_code(at, len, prot);
        let host_shared = match (shared, anon) {
            (false, _) => None,
            (true, true) => Some((None, len)),
            // A file open for writing: its pages, as far as the file goes.
            // One open only for reading is copied, as a private mapping:
            // nothing can write to it through this mapping.
            (true, false) => shared_file_pages(host, off, len).map(|n| (Some(host), n)),
        };
        if let Some((fd, n)) = host_shared {
            if let Err(e) = mem.map_shared(at, n, prot, fd, off) {
                return Ok(Outcome::Ret(
                    -(e.raw_os_error().unwrap_or(libc::ENOMEM) as i64),
                ));
            }
            // Past the file's end Linux sends SIGBUS; here those pages
            // read as zeros (and reach no file).
            if mem.map(at + n, len - n, prot).is_err() {
                return Ok(Outcome::Ret(ENOMEM));
            }
        } else {
            if mem.map(at, len, prot).is_err() {
                return Ok(Outcome::Ret(ENOMEM));
            }
            if !anon {
                if let Err(e) = copy_file(mem, host, at, len, off) {
                    let _ = mem.unmap(at, len);
                    return Ok(Outcome::Ret(e));
                }
            }
        }
        let file = (!anon)
            .then(|| std::fs::read_link(format!("/proc/self/fd/{host}")).ok())
            .flatten();
        match file {
            Some(path) => {
                if prot & perm::X != 0 {
                    self.note_module(host, &path, at, off);
                }
                self.file_maps.record(at, len, off, &path);
                self.areas.record_file(at, at + len, &path);
            }
            None => {
                self.file_maps.forget(at, len);
                self.areas.record(at, at + len, coprof_core::areas::ANON);
                self.note_anon_map(at, at + len);
            }
        }
        if changes_code {
            Ok(Outcome::RetFlush(at as i64, at..at + len))
        } else {
            Ok(Outcome::Ret(at as i64))
        }
    }

    /// Records the code of a file mapped executable at `at` from byte
    /// `offset` of the host descriptor `host`, the file `path` (a library
    /// the dynamic loader maps), unless the same file is already known
    /// there.
    fn note_module(&mut self, host: i32, path: &std::path::Path, at: u64, offset: u64) {
        if let Some(m) = crate::process::mapped_module(host, path, at, offset) {
            if !self.modules.contains(&m) {
                self.modules.push(m);
            }
        }
    }

    /// Records a file the loader put in memory (the program, its dynamic
    /// loader): its code, to name PCs, and its file-backed pages, for
    /// `/proc/self/maps`.
    pub(crate) fn note_loaded(&mut self, elf: &crate::elf::Elf, bias: u64, path: &std::path::Path) {
        self.modules
            .push(crate::process::module_of(elf, bias, path));
        for (start, len, offset) in crate::process::file_pages(elf, bias) {
            self.file_maps.record(start, len, offset, path);
        }
        // A segment's `.bss` is anonymous in the maps, but its variables
        // are the file's.
        for (start, end) in crate::process::segment_ranges(elf, bias) {
            self.areas.record_file(start, end, path);
        }
    }

    /// `mremap`, and what it does to the file mappings: the pages it
    /// gives up are forgotten, and a moved mapping is anonymous in
    /// `/proc/self/maps` (its file is not followed). A shared mapping
    /// moves as the same shared pages, and may shrink, but growing one
    /// stops the run: its new pages would have to be the same file's or
    /// memory's, which only Linux's own mapping can extend.
    fn mremap(&mut self, mem: &mut Memory, a: [u64; 8], pc: u64) -> Result<Outcome, SimError> {
        let (old, old_len, new_len) = (a[0], page_up(a[1]), page_up(a[2]));
        if mem.range_has(old, old_len, perm::SHARED) && new_len > old_len {
            return Err(SimError::Unsupported {
                what: format!(
                    "mremap (system call {}) growing a MAP_SHARED mapping",
                    nr::MREMAP
                ),
                pc,
            });
        }
        let out = self.mremap_pages(mem, a);
        if let Outcome::Ret(v) | Outcome::RetFlush(v, _) = out {
            let (old, old_len, new_len) = (a[0], page_up(a[1]), page_up(a[2]));
            if v >= 0 && v as u64 != old {
                self.file_maps.forget(old, old_len);
                self.file_maps.forget(v as u64, new_len);
                let to = v as u64;
                self.areas
                    .record(to, to + new_len, coprof_core::areas::ANON);
            } else if v >= 0 && new_len > old_len {
                // Grown in place: the new pages are anonymous.
                self.areas
                    .record(old + old_len, old + new_len, coprof_core::areas::ANON);
            } else if v >= 0 && new_len < old_len {
                self.file_maps.forget(old + new_len, old_len - new_len);
            }
        }
        Ok(out)
    }

    fn mremap_pages(&mut self, mem: &mut Memory, a: [u64; 8]) -> Outcome {
        let (old, old_len, new_len, flags) = (a[0], page_up(a[1]), page_up(a[2]), a[3]);
        let (may_move, fixed) = (flags & 1 != 0, flags & 2 != 0);
        // MREMAP_DONTUNMAP (4) is not supported: EINVAL, as for any
        // unknown flag; MREMAP_FIXED needs MREMAP_MAYMOVE.
        if old % PAGE != 0 || new_len == 0 || flags & !3 != 0 || (fixed && !may_move) {
            return Outcome::Ret(EINVAL);
        }
        let p = mem.perm_at(old);
        if p & perm::MAPPED == 0 || old_len == 0 {
            return Outcome::Ret(-(libc::EFAULT as i64));
        }
        let code = mem.range_has(old, old_len, perm::X);
        let done = |v: u64| {
            if code {
                Outcome::RetFlush(v as i64, super::ALL_CODE)
            } else {
                Outcome::Ret(v as i64)
            }
        };
        if fixed {
            // To exactly a[4], replacing what was there; the two ranges
            // must not overlap.
            let to = a[4];
            let overlap = to < old.saturating_add(old_len) && old < to.saturating_add(new_len);
            if !to.is_multiple_of(PAGE) || overlap || to.checked_add(new_len).is_none() {
                return Outcome::Ret(EINVAL);
            }
            return self.move_mapping(mem, old, old_len, to, new_len, p, code);
        }
        if new_len <= old_len {
            let _ = mem.unmap(old + new_len, old_len - new_len);
            return done(old);
        }
        if mem.is_free(old + old_len, new_len - old_len)
            && mem.map(old + old_len, new_len - old_len, p).is_ok()
        {
            return Outcome::Ret(old as i64);
        }
        if flags & 1 == 0 {
            return Outcome::Ret(ENOMEM);
        }
        let Some(to) = mem.find_free(new_len, page_up(self.brk) + PAGE, MMAP_TOP) else {
            return Outcome::Ret(ENOMEM);
        };
        self.move_mapping(mem, old, old_len, to, new_len, p, code)
    }

    /// Moves the mapping at `old` (`old_len` bytes, permissions `p`) to
    /// `to`, `new_len` bytes long: what the first `new_len` bytes held
    /// moves with it, the rest reads as zeros, and the old range is
    /// unmapped.
    #[allow(clippy::too_many_arguments)]
    fn move_mapping(
        &mut self,
        mem: &mut Memory,
        old: u64,
        old_len: u64,
        to: u64,
        new_len: u64,
        p: u8,
        code: bool,
    ) -> Outcome {
        if mem.range_has(old, old_len, perm::SHARED) {
            // Shared pages move as themselves (never growing: see
            // `mremap`), so that they stay shared.
            let _ = mem.unmap(to, new_len);
            if mem.move_pages(old, new_len, to).is_err() {
                return Outcome::Ret(ENOMEM);
            }
            let _ = mem.unmap(old, old_len);
        } else {
            let data = match mem.slice(old, old_len.min(new_len), perm::MAPPED) {
                Ok(s) => s.to_vec(),
                Err(_) => return Outcome::Ret(EFAULT),
            };
            if mem.map(to, new_len, p).is_err() || mem.poke(to, &data).is_err() {
                return Outcome::Ret(ENOMEM);
            }
            let _ = mem.unmap(old, old_len);
        }
        if code || mem.range_has(to, new_len, perm::X) {
            Outcome::RetFlush(to as i64, super::ALL_CODE)
        } else {
            Outcome::Ret(to as i64)
        }
    }

    /// Notes an anonymous mapping of `[start, end)`, among the last
    /// [`ANON_MAPS_KEPT`].
    fn note_anon_map(&mut self, start: u64, end: u64) {
        if self.anon_maps.len() == ANON_MAPS_KEPT {
            self.anon_maps.pop_front();
        }
        self.anon_maps.push_back((start, end));
    }

    /// The extent of the newest anonymous mapping noted that holds
    /// `addr`, if one: the mapping there now, unless a file's or shared
    /// memory replaced it since.
    pub fn anon_map_at(&self, addr: u64) -> Option<(u64, u64)> {
        self.anon_maps
            .iter()
            .rev()
            .find(|&&(start, end)| start <= addr && addr < end)
            .copied()
    }
}

/// Anonymous mappings whose extents are kept: enough for the stacks a C
/// library keeps for reuse (glibc's cache holds 40 MiB of them) among a
/// program's other mappings.
const ANON_MAPS_KEPT: usize = 256;

/// How many bytes from `off` of `len` a shared mapping of the host
/// descriptor `fd` takes from the file: those up to its end, page-rounded;
/// `None` when the descriptor is not open for reading and writing (its
/// mapping is a copy) or is not a regular file.
fn shared_file_pages(fd: i32, off: u64, len: u64) -> Option<u64> {
    // SAFETY: plain descriptor calls; st is a valid out-parameter.
    let mode = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if mode < 0
        || mode & libc::O_ACCMODE != libc::O_RDWR
        || unsafe { libc::fstat(fd, &mut st) } != 0
        || st.st_mode & libc::S_IFMT != libc::S_IFREG
    {
        return None;
    }
    Some(page_up((st.st_size as u64).saturating_sub(off)).min(len))
}

/// Fills the mapped range `[at, at+len)` with the bytes of the host
/// descriptor `fd` from `off` (a private file mapping: a copy; past the
/// file's end it reads as zeros). Err: the errno, negated.
fn copy_file(mem: &mut Memory, fd: i32, at: u64, len: u64, off: u64) -> Result<(), i64> {
    let mut buf = vec![0u8; len as usize];
    let mut done = 0usize;
    while done < buf.len() {
        // SAFETY: reading into our own buffer.
        let n = unsafe {
            libc::pread(
                fd,
                buf[done..].as_mut_ptr() as *mut _,
                buf.len() - done,
                (off + done as u64) as i64,
            )
        };
        if n < 0 {
            return Err(errno());
        }
        if n == 0 {
            break;
        }
        done += n as usize;
    }
    // A mapping's first contents: what it replaced is the caller's to
    // report (`RetFlush` with its range).
    mem.fill_new(at, &buf[..done]).map_err(|_| ENOMEM)
}

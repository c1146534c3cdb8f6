//! Process start: map an executable's segments and build the initial stack
//! the way Linux's ELF loader does (fs/binfmt_elf.c behaviour: segments at
//! their addresses or, for static-pie, at a load bias; the stack with
//! argc, argv, envp and the auxiliary vector, System V ABI RISC-V
//! supplement "Process Initialization"). glibc does the rest itself (TLS
//! via the `tp` register, relocation of static-pie, the program break).

use crate::elf::{Elf, Segment, PT_LOAD, PT_PHDR};
use crate::mem::{page_down, page_up, perm, Memory, LIMIT, PAGE};
pub use coprof_core::trace::Module;
use std::io;

/// Top of the initial stack (just below the end of the Sv39 user range).
pub const STACK_TOP: u64 = LIMIT - 0x1000;
/// Size of the stack mapping (Linux's default 8 MiB limit).
pub const STACK_SIZE: u64 = 8 << 20;
/// Highest address for `mmap` placements (top-down below the stack).
pub const MMAP_TOP: u64 = STACK_TOP - STACK_SIZE - (16 << 20);
/// Where a static-pie executable is loaded, as Linux's ELF_ET_DYN_BASE
/// (two thirds of the user range) for RV64.
pub const PIE_BASE: u64 = 0x2a_aaaa_a000;

/// Auxiliary vector keys (include/uapi/linux/auxvec.h).
mod at {
    pub const NULL: u64 = 0;
    pub const PHDR: u64 = 3;
    pub const PHENT: u64 = 4;
    pub const PHNUM: u64 = 5;
    pub const PAGESZ: u64 = 6;
    pub const BASE: u64 = 7;
    pub const FLAGS: u64 = 8;
    pub const ENTRY: u64 = 9;
    pub const UID: u64 = 11;
    pub const EUID: u64 = 12;
    pub const GID: u64 = 13;
    pub const EGID: u64 = 14;
    pub const HWCAP: u64 = 16;
    pub const CLKTCK: u64 = 17;
    pub const SECURE: u64 = 23;
    pub const RANDOM: u64 = 25;
    pub const EXECFN: u64 = 31;
}

/// `AT_HWCAP` for RV64IMAFDC: one bit per extension letter (bit = letter −
/// 'a'), as the Linux RISC-V port reports ISA extensions.
pub const HWCAP_RV64IMAFDC: u64 =
    letter(b'i') | letter(b'm') | letter(b'a') | letter(b'f') | letter(b'd') | letter(b'c');

const fn letter(c: u8) -> u64 {
    1u64 << (c - b'a')
}

/// Where things ended up.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Entry point (after the bias).
    pub entry: u64,
    /// Initial stack pointer.
    pub sp: u64,
    /// Start of the program break (page after the highest segment).
    pub brk: u64,
    /// Load bias (0 for ET_EXEC).
    pub bias: u64,
    /// The dynamic loader's bias, when there is one.
    pub loader_bias: Option<u64>,
    /// The auxiliary vector's bytes as on the stack, AT_NULL's pair last,
    /// for `/proc/self/auxv`.
    pub auxv: Vec<u8>,
}

fn prot_of(flags: u32) -> u8 {
    let mut p = 0;
    if flags & 4 != 0 {
        p |= perm::R;
    }
    if flags & 2 != 0 {
        p |= perm::W;
    }
    if flags & 1 != 0 {
        p |= perm::X;
    }
    p
}

/// Where a file's segments go.
#[derive(Clone, Copy)]
enum Place {
    /// The program: at its addresses, or at [`PIE_BASE`] when
    /// position-independent (Linux's ELF_ET_DYN_BASE).
    Program,
    /// A dynamic loader: at the top of the free space below [`MMAP_TOP`],
    /// where Linux maps it (with the first `mmap`), aligned as its segments ask.
    Loader,
}

/// The page-aligned span of `elf`'s PT_LOAD segments before the bias, and
/// the largest alignment they ask for.
fn span_of(segments: &[Segment]) -> (u64, u64, u64) {
    let loads = || segments.iter().filter(|s| s.kind == PT_LOAD && s.memsz > 0);
    let lo = loads().map(|s| page_down(s.vaddr)).min().unwrap_or(0);
    let hi = loads()
        .map(|s| page_up(s.vaddr + s.memsz))
        .max()
        .unwrap_or(0);
    let align = loads()
        .map(|s| s.align.max(PAGE))
        .filter(|a| a.is_power_of_two())
        .max()
        .unwrap_or(PAGE);
    (lo, hi, align)
}

/// Maps the PT_LOAD segments of `elf` (contents from `file`) where
/// `place` says; returns the bias and the page after the highest segment.
fn load_segments(mem: &mut Memory, elf: &Elf, file: &[u8], place: Place) -> io::Result<(u64, u64)> {
    let (lo, hi, align) = span_of(&elf.segments);
    let bias = match place {
        Place::Program if elf.pie => (PIE_BASE + align - 1) & !(align - 1),
        Place::Program => 0,
        Place::Loader => {
            let at = mem
                .find_free(hi - lo + align - PAGE, PAGE, MMAP_TOP)
                .ok_or_else(|| io::Error::other("no room for the dynamic loader"))?;
            ((at + align - 1) & !(align - 1)).wrapping_sub(lo)
        }
    };
    // Page ranges with the union of the permissions of the segments that
    // share them.
    let mut runs: Vec<(u64, u64, u8)> = Vec::new();
    for s in elf
        .segments
        .iter()
        .filter(|s| s.kind == PT_LOAD && s.memsz > 0)
    {
        let start = page_down(bias.wrapping_add(s.vaddr));
        let end = page_up(bias.wrapping_add(s.vaddr) + s.memsz);
        if end > LIMIT || start < PAGE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "segment at {:#x} lies outside the user address space",
                    bias.wrapping_add(s.vaddr)
                ),
            ));
        }
        runs.push((start, end, prot_of(s.flags)));
    }
    runs.sort_unstable();
    let mut merged: Vec<(u64, u64, u8)> = Vec::new();
    for (s, e, p) in runs {
        match merged.last_mut() {
            Some(last) if s < last.1 => {
                last.1 = last.1.max(e);
                last.2 |= p;
            }
            _ => merged.push((s, e, p)),
        }
    }
    for (s, e, p) in &merged {
        mem.map(*s, e - s, *p)?;
    }
    for s in elf
        .segments
        .iter()
        .filter(|s| s.kind == PT_LOAD && s.filesz > 0)
    {
        let bytes = &file[s.offset as usize..(s.offset + s.filesz) as usize];
        mem.poke(bias.wrapping_add(s.vaddr), bytes)
            .map_err(|f| io::Error::other(format!("cannot fill segment at {:#x}", f.addr)))?;
    }
    let brk = merged.iter().map(|r| r.1).max().unwrap_or(PAGE);
    Ok((bias, brk))
}

/// The module of `elf` loaded with `bias` from `path`.
pub fn module_of(elf: &Elf, bias: u64, path: &std::path::Path) -> Module {
    spanning(&elf.segments, bias, path)
}

fn spanning(segments: &[Segment], bias: u64, path: &std::path::Path) -> Module {
    let (lo, hi, _) = span_of(segments);
    Module {
        start: bias.wrapping_add(lo),
        end: bias.wrapping_add(hi),
        bias,
        path: path.to_path_buf(),
    }
}

/// The module of an executable mapping at `at` of the host file `fd`
/// (`path`) from byte `offset`, as the dynamic loader maps a library: the
/// file's PT_LOAD segment that starts at that page of the file is the
/// one mapped there, which gives the bias. `None` for a file that is
/// not an RV64 ELF file or has no segment there.
pub fn mapped_module(fd: i32, path: &std::path::Path, at: u64, offset: u64) -> Option<Module> {
    let segments = crate::elf::read_segments(fd)?;
    let loads = || segments.iter().filter(|s| s.kind == PT_LOAD);
    let seg = loads()
        .find(|s| page_down(s.offset) == offset)
        .or_else(|| {
            loads().find(|s| page_down(s.offset) <= offset && offset < s.offset + s.filesz)
        })?;
    let bias = at
        .wrapping_sub(page_down(seg.vaddr))
        .wrapping_sub(offset - page_down(seg.offset));
    Some(spanning(&segments, bias, path))
}

/// The file-backed pages of `elf` loaded with `bias`: for each PT_LOAD
/// segment, `(address, length, file offset)` of the pages its file bytes
/// fill, as Linux's loader maps them from the file (the rest of a
/// segment, its `.bss`, is anonymous).
pub fn file_pages(elf: &Elf, bias: u64) -> Vec<(u64, u64, u64)> {
    elf.segments
        .iter()
        .filter(|s| s.kind == PT_LOAD && s.filesz > 0)
        .map(|s| {
            let start = page_down(bias.wrapping_add(s.vaddr));
            let end = page_up(bias.wrapping_add(s.vaddr) + s.filesz);
            (start, end - start, page_down(s.offset))
        })
        .collect()
}

/// The bytes of `elf`'s PT_LOAD segments loaded with `bias`, `.bss`
/// included: `[start, end)` of each, as the program's variables lie.
pub fn segment_ranges(elf: &Elf, bias: u64) -> Vec<(u64, u64)> {
    elf.segments
        .iter()
        .filter(|s| s.kind == PT_LOAD && s.memsz > 0)
        .map(|s| {
            let start = bias.wrapping_add(s.vaddr);
            (start, start.wrapping_add(s.memsz))
        })
        .collect()
}

/// Address of the program headers in memory, for `AT_PHDR`.
fn phdr_addr(elf: &Elf, bias: u64) -> u64 {
    if let Some(p) = elf.segments.iter().find(|s| s.kind == PT_PHDR) {
        return bias + p.vaddr;
    }
    elf.segments
        .iter()
        .find(|s| s.kind == PT_LOAD && s.offset <= elf.phoff && elf.phoff < s.offset + s.filesz)
        .map_or(0, |s| bias + s.vaddr + (elf.phoff - s.offset))
}

/// A dynamic loader to start a dynamically linked program with: its
/// parsed headers and its bytes.
pub struct Loader<'a> {
    /// The loader's headers.
    pub elf: &'a Elf,
    /// The loader's file.
    pub file: &'a [u8],
}

/// Loads `elf` (and, for a dynamically linked program, its dynamic
/// `loader`, where the program starts, as Linux's `load_elf_binary` does)
/// and builds the initial stack with `args` (`argv[0]` first), `env`
/// (`NAME=value` strings) and `execfn` (the path as given).
#[allow(clippy::too_many_arguments)]
pub fn start(
    mem: &mut Memory,
    elf: &Elf,
    file: &[u8],
    loader: Option<Loader<'_>>,
    args: &[Vec<u8>],
    env: &[Vec<u8>],
    execfn: &[u8],
    random: [u8; 16],
) -> io::Result<Loaded> {
    let (bias, brk) = load_segments(mem, elf, file, Place::Program)?;
    let loader_bias = match &loader {
        Some(l) => Some(load_segments(mem, l.elf, l.file, Place::Loader)?.0),
        None => None,
    };
    mem.map(STACK_TOP - STACK_SIZE, STACK_SIZE, perm::R | perm::W)?;
    // Where signal handlers return to (Linux maps its vDSO, which holds
    // the same two instructions).
    crate::signal::install_trampoline(mem)?;
    let fault = |f: crate::mem::Fault| {
        io::Error::other(format!("initial stack overflows at {:#x}", f.addr))
    };

    // Strings at the top, then AT_RANDOM's bytes, then the pointer block.
    let mut sp = STACK_TOP - 16;
    let push_bytes = |mem: &mut Memory, sp: &mut u64, b: &[u8], nul: bool| -> io::Result<u64> {
        let len = b.len() as u64 + nul as u64;
        if len > STACK_SIZE / 4 || *sp < STACK_TOP - STACK_SIZE / 2 + len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "arguments and environment exceed the stack (E2BIG)",
            ));
        }
        *sp -= len;
        mem.poke(*sp, b).map_err(fault)?;
        if nul {
            mem.poke(*sp + b.len() as u64, &[0]).map_err(fault)?;
        }
        Ok(*sp)
    };
    let execfn_at = push_bytes(mem, &mut sp, execfn, true)?;
    let mut env_at = Vec::with_capacity(env.len());
    for e in env.iter().rev() {
        env_at.push(push_bytes(mem, &mut sp, e, true)?);
    }
    env_at.reverse();
    let mut arg_at = Vec::with_capacity(args.len());
    for a in args.iter().rev() {
        arg_at.push(push_bytes(mem, &mut sp, a, true)?);
    }
    arg_at.reverse();
    sp &= !15;
    let random_at = push_bytes(mem, &mut sp, &random, false)?;
    sp &= !15;

    // SAFETY of the values: these are the host's ids, as qemu-user reports.
    let (uid, euid, gid, egid) = unsafe {
        (
            libc::getuid(),
            libc::geteuid(),
            libc::getgid(),
            libc::getegid(),
        )
    };
    let auxv: [(u64, u64); 16] = [
        (at::PHDR, phdr_addr(elf, bias)),
        (at::PHENT, elf.phentsize as u64),
        (at::PHNUM, elf.phnum as u64),
        (at::PAGESZ, PAGE),
        (at::BASE, loader_bias.unwrap_or(0)),
        (at::FLAGS, 0),
        (at::ENTRY, bias + elf.entry),
        (at::UID, uid as u64),
        (at::EUID, euid as u64),
        (at::GID, gid as u64),
        (at::EGID, egid as u64),
        (at::HWCAP, HWCAP_RV64IMAFDC),
        (at::CLKTCK, 100),
        (at::SECURE, 0),
        (at::RANDOM, random_at),
        (at::EXECFN, execfn_at),
    ];
    let words = 1 + arg_at.len() + 1 + env_at.len() + 1 + 2 * (auxv.len() + 1);
    sp -= 8 * words as u64;
    sp &= !15;
    let mut block: Vec<u8> = Vec::with_capacity(words * 8);
    let mut w = |v: u64| block.extend_from_slice(&v.to_le_bytes());
    w(arg_at.len() as u64);
    arg_at.iter().for_each(|a| w(*a));
    w(0);
    env_at.iter().for_each(|e| w(*e));
    w(0);
    for (k, v) in auxv {
        w(k);
        w(v);
    }
    w(at::NULL);
    w(0);
    mem.poke(sp, &block).map_err(fault)?;
    let auxv = block[(1 + arg_at.len() + 1 + env_at.len() + 1) * 8..].to_vec();
    mem.take_code_written();
    Ok(Loaded {
        entry: match (&loader, loader_bias) {
            (Some(l), Some(lb)) => lb.wrapping_add(l.elf.entry),
            _ => bias + elf.entry,
        },
        loader_bias,
        auxv,
        sp,
        brk,
        bias,
    })
}

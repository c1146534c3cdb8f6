//! ELF64 executable parser: just what a loader needs, from untrusted bytes.
//!
//! Reads the ELF header and program headers of a little-endian RV64
//! executable (System V gABI "ELF-64 Object File Format"; the RISC-V psABI
//! for `EM_RISCV` = 243 and `e_flags`). Every offset and size is checked
//! before use; malformed input yields an [`ElfError`] that names the field
//! and the byte offset, never a panic.

use thiserror::Error;

/// Why a file cannot be run.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ElfError {
    /// The file does not start with the ELF magic number.
    #[error("not an ELF file (it starts with bytes {}, an ELF file with 7f 45 4c 46)", hex(.0))]
    NotElf(Vec<u8>),
    /// A 32-bit or big-endian ELF.
    #[error("not a 64-bit little-endian ELF file ({0}); coprof runs RV64 Linux executables")]
    WrongClass(&'static str),
    /// An ELF for another machine.
    #[error("ELF file is for {0} (e_machine {1}), not RISC-V (e_machine 243)")]
    NotRiscV(&'static str, u16),
    /// Not an executable (a relocatable object or a core file).
    #[error("ELF file is not an executable (e_type {0}: {1})")]
    NotExecutable(u16, &'static str),
    /// A dynamically linked executable whose dynamic loader was not found.
    #[error("dynamically linked executable: its dynamic loader {interp} is not in {looked}; give the directory that holds the RISC-V libraries with --sysroot DIR (for Debian's cross compiler, /usr/riscv64-linux-gnu), or link the program with -static")]
    NoInterpreter {
        /// The loader the executable asks for (its PT_INTERP).
        interp: String,
        /// Where it was looked for.
        looked: String,
    },
    /// The dynamic loader an executable asks for cannot be run.
    #[error("its dynamic loader {interp} cannot be loaded: {why}")]
    BadInterpreter {
        /// The loader's host path.
        interp: String,
        /// What is wrong with it.
        why: String,
    },
    /// RV32E/RV64E code.
    #[error("ELF file uses the RVE (16-register) ABI, which coprof does not run")]
    Rve,
    /// A field or table lies outside the file or is inconsistent.
    #[error("malformed ELF: {what} at byte offset {offset:#x}")]
    Malformed {
        /// What is wrong.
        what: String,
        /// Where in the file.
        offset: u64,
    },
}

/// Program header types used by the loader.
pub const PT_LOAD: u32 = 1;
/// Dynamic linking information.
pub const PT_DYNAMIC: u32 = 2;
/// Path of the program interpreter.
pub const PT_INTERP: u32 = 3;
/// The program header table itself.
pub const PT_PHDR: u32 = 6;

/// One program header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// `p_type`.
    pub kind: u32,
    /// `p_flags` (PF_X = 1, PF_W = 2, PF_R = 4).
    pub flags: u32,
    /// File offset of the contents.
    pub offset: u64,
    /// Virtual address (before the load bias of a position-independent file).
    pub vaddr: u64,
    /// Bytes in the file.
    pub filesz: u64,
    /// Bytes in memory (the rest is zero: .bss).
    pub memsz: u64,
    /// Alignment.
    pub align: u64,
}

/// A parsed executable.
#[derive(Clone, Debug)]
pub struct Elf {
    /// True for ET_DYN (a static-pie executable, loaded at a bias).
    pub pie: bool,
    /// Entry point (before the bias).
    pub entry: u64,
    /// File offset of the program headers.
    pub phoff: u64,
    /// Size of one program header.
    pub phentsize: u16,
    /// Number of program headers.
    pub phnum: u16,
    /// The program headers.
    pub segments: Vec<Segment>,
    /// The dynamic loader a dynamically linked executable asks for (its
    /// PT_INTERP), as written in the file.
    pub interp: Option<String>,
}

fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "(none: the file is empty)".into();
    }
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn bad(what: impl Into<String>, offset: u64) -> ElfError {
    ElfError::Malformed {
        what: what.into(),
        offset,
    }
}

fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}
fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap_or([0; 4]))
}
fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap_or([0; 8]))
}

fn machine_name(m: u16) -> &'static str {
    match m {
        3 => "x86 (i386)",
        8 => "MIPS",
        20 => "PowerPC",
        21 => "PowerPC64",
        22 => "S/390",
        40 => "ARM",
        EM_X86_64 => "x86-64",
        183 => "AArch64",
        258 => "LoongArch",
        _ => "another architecture",
    }
}

/// `e_machine` of a RISC-V ELF file.
pub const EM_RISCV: u16 = 243;

/// `e_machine` of an x86-64 ELF file: the native sampler's programs.
pub const EM_X86_64: u16 = 62;

/// The machine an ELF file is for, from its first 20 bytes or more: its
/// name and `e_machine`; `None` when `head` is not the start of an ELF
/// file.
pub fn machine(head: &[u8]) -> Option<(&'static str, u16)> {
    (head.len() >= 20 && head.starts_with(b"\x7fELF")).then(|| {
        let m = u16_at(head, 18);
        (
            if m == EM_RISCV {
                "RISC-V"
            } else {
                machine_name(m)
            },
            m,
        )
    })
}

/// Whether `head`, the first bytes of a file, starts a RISC-V ELF file.
pub fn is_riscv(head: &[u8]) -> bool {
    machine(head).is_some_and(|(_, m)| m == EM_RISCV)
}

/// Parses the headers of `file`. The loader reads segment contents from
/// the same bytes afterwards, so every segment's file range is checked.
pub fn parse(file: &[u8]) -> Result<Elf, ElfError> {
    if file.len() < 4 || &file[..4] != b"\x7fELF" {
        return Err(ElfError::NotElf(file[..file.len().min(4)].to_vec()));
    }
    if file.len() < 64 {
        return Err(bad(
            format!(
                "file is {} bytes, shorter than an ELF64 header (64)",
                file.len()
            ),
            0,
        ));
    }
    match (file[4], file[5]) {
        (2, 1) => {}
        (1, _) => return Err(ElfError::WrongClass("32-bit")),
        (2, 2) => return Err(ElfError::WrongClass("big-endian")),
        (c, d) => return Err(bad(format!("unknown EI_CLASS {c} / EI_DATA {d}"), 4)),
    }
    let machine = u16_at(file, 18);
    if machine != EM_RISCV {
        return Err(ElfError::NotRiscV(machine_name(machine), machine));
    }
    let e_type = u16_at(file, 16);
    let pie = match e_type {
        2 => false,
        3 => true,
        1 => return Err(ElfError::NotExecutable(1, "relocatable object file")),
        4 => return Err(ElfError::NotExecutable(4, "core file")),
        t => return Err(ElfError::NotExecutable(t, "unknown type")),
    };
    let flags = u32_at(file, 48);
    if flags & 0x8 != 0 {
        return Err(ElfError::Rve);
    }
    let entry = u64_at(file, 24);
    let phoff = u64_at(file, 32);
    let phentsize = u16_at(file, 54);
    let phnum = u16_at(file, 56);
    if phnum == 0 {
        return Err(bad("no program headers (e_phnum is 0)", 56));
    }
    if phentsize < 56 {
        return Err(bad(
            format!("program header size {phentsize} is smaller than 56"),
            54,
        ));
    }
    let table_len = phentsize as u64 * phnum as u64;
    if phoff
        .checked_add(table_len)
        .is_none_or(|end| end > file.len() as u64)
    {
        return Err(bad(
            format!(
                "program header table ({phnum} entries of {phentsize} bytes) runs past the end of the {}-byte file",
                file.len()
            ),
            32,
        ));
    }
    let mut segments = Vec::with_capacity(phnum as usize);
    let mut interp = None;
    for i in 0..phnum as usize {
        let at = phoff as usize + i * phentsize as usize;
        let seg = segment_at(file, at);
        if seg.kind == PT_INTERP {
            let path = seg
                .offset
                .checked_add(seg.filesz)
                .filter(|end| *end <= file.len() as u64)
                .map(|end| &file[seg.offset as usize..end as usize])
                .and_then(|s| s.split(|b| *b == 0).next())
                .filter(|s| !s.is_empty())
                .ok_or_else(|| {
                    bad(
                        format!("segment {i}: the dynamic loader's path (PT_INTERP) lies outside the file or is empty"),
                        at as u64 + 8,
                    )
                })?;
            interp = Some(String::from_utf8_lossy(path).into_owned());
        }
        if seg.kind == PT_LOAD {
            if seg.filesz > seg.memsz {
                return Err(bad(
                    format!(
                        "segment {i}: file size {:#x} exceeds memory size {:#x}",
                        seg.filesz, seg.memsz
                    ),
                    at as u64 + 32,
                ));
            }
            if seg
                .offset
                .checked_add(seg.filesz)
                .is_none_or(|end| end > file.len() as u64)
            {
                return Err(bad(
                    format!(
                        "segment {i}: contents [{:#x}, +{:#x}) run past the end of the {}-byte file",
                        seg.offset,
                        seg.filesz,
                        file.len()
                    ),
                    at as u64 + 8,
                ));
            }
            if seg
                .vaddr
                .checked_add(seg.memsz)
                .is_none_or(|end| end > crate::mem::LIMIT)
            {
                return Err(bad(
                    format!(
                        "segment {i}: address range [{:#x}, +{:#x}) lies outside the 256 GiB user address space",
                        seg.vaddr, seg.memsz
                    ),
                    at as u64 + 16,
                ));
            }
            if seg.align > 1 && seg.vaddr % crate::mem::PAGE != seg.offset % crate::mem::PAGE {
                return Err(bad(
                    format!("segment {i}: address and file offset disagree modulo the page size"),
                    at as u64 + 8,
                ));
            }
        }
        segments.push(seg);
    }
    if !segments.iter().any(|s| s.kind == PT_LOAD && s.memsz > 0) {
        return Err(bad("no loadable segment", phoff));
    }
    if pie
        && interp.is_none()
        && segments.iter().any(|s| s.kind == PT_DYNAMIC)
        && !has_static_pie_entry(&segments, entry)
    {
        // A shared library has PT_DYNAMIC but neither PT_INTERP nor an entry.
        return Err(ElfError::NotExecutable(3, "shared library"));
    }
    Ok(Elf {
        pie,
        entry,
        phoff,
        phentsize,
        phnum,
        segments,
        interp,
    })
}

/// The program header at byte `at` of `bytes` (56 bytes there).
fn segment_at(bytes: &[u8], at: usize) -> Segment {
    Segment {
        kind: u32_at(bytes, at),
        flags: u32_at(bytes, at + 4),
        offset: u64_at(bytes, at + 8),
        vaddr: u64_at(bytes, at + 16),
        filesz: u64_at(bytes, at + 32),
        memsz: u64_at(bytes, at + 40),
        align: u64_at(bytes, at + 48),
    }
}

/// The program headers of the RV64 ELF file open on the host descriptor
/// `fd`, read in place: what a shared library that the dynamic loader maps
/// needs to say where its code lies. `None` for anything else.
pub fn read_segments(fd: i32) -> Option<Vec<Segment>> {
    let read = |len: usize, at: u64| -> Option<Vec<u8>> {
        let mut buf = vec![0u8; len];
        // SAFETY: reading into our own buffer of `len` bytes.
        let n = unsafe { libc::pread(fd, buf.as_mut_ptr() as *mut _, len, at as i64) };
        (n == len as isize).then_some(buf)
    };
    let head = read(64, 0)?;
    if &head[..4] != b"\x7fELF" || head[4] != 2 || head[5] != 1 || u16_at(&head, 18) != 243 {
        return None;
    }
    let (phoff, phentsize, phnum) = (u64_at(&head, 32), u16_at(&head, 54), u16_at(&head, 56));
    if phentsize < 56 || phnum == 0 {
        return None;
    }
    let table = read(phentsize as usize * phnum as usize, phoff)?;
    Some(
        (0..phnum as usize)
            .map(|i| segment_at(&table, i * phentsize as usize))
            .collect(),
    )
}

/// Whether an ET_DYN file with a PT_DYNAMIC can start as a program: glibc's
/// static-pie executables carry a PT_PHDR, and a position-independent
/// program linked by hand (`-nostdlib -pie`) may not but has an entry point
/// inside an executable segment, as Linux and qemu-user require. A shared
/// library has neither (its entry is 0).
fn has_static_pie_entry(segments: &[Segment], entry: u64) -> bool {
    segments.iter().any(|s| s.kind == PT_PHDR)
        || (entry != 0
            && segments.iter().any(|s| {
                s.kind == PT_LOAD
                    && s.flags & 1 != 0
                    && entry >= s.vaddr
                    && entry - s.vaddr < s.memsz
            }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(machine: u16, e_type: u16) -> Vec<u8> {
        let mut h = vec![0u8; 64 + 56];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[16..18].copy_from_slice(&e_type.to_le_bytes());
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h[24..32].copy_from_slice(&0x10078u64.to_le_bytes());
        h[32..40].copy_from_slice(&64u64.to_le_bytes());
        h[54..56].copy_from_slice(&56u16.to_le_bytes());
        h[56..58].copy_from_slice(&1u16.to_le_bytes());
        // one PT_LOAD of the whole file at 0x10000
        let p = 64;
        h[p..p + 4].copy_from_slice(&PT_LOAD.to_le_bytes());
        h[p + 4..p + 8].copy_from_slice(&5u32.to_le_bytes());
        h[p + 16..p + 24].copy_from_slice(&0x10000u64.to_le_bytes());
        h[p + 32..p + 40].copy_from_slice(&120u64.to_le_bytes());
        h[p + 40..p + 48].copy_from_slice(&0x2000u64.to_le_bytes());
        h[p + 48..p + 56].copy_from_slice(&0x1000u64.to_le_bytes());
        h
    }

    #[test]
    fn accepts_a_minimal_executable() {
        let e = parse(&header(243, 2)).unwrap();
        assert!(!e.pie);
        assert_eq!(e.entry, 0x10078);
        assert_eq!(e.segments.len(), 1);
    }

    #[test]
    fn names_what_is_wrong() {
        assert!(matches!(parse(b"#!/bin/sh\n"), Err(ElfError::NotElf(_))));
        assert!(matches!(parse(b""), Err(ElfError::NotElf(_))));
        assert_eq!(
            parse(&header(62, 2)).unwrap_err(),
            ElfError::NotRiscV("x86-64", 62)
        );
        assert!(matches!(
            parse(&header(243, 1)),
            Err(ElfError::NotExecutable(1, _))
        ));
        let mut h = header(243, 2);
        h[4] = 1;
        assert_eq!(parse(&h).unwrap_err(), ElfError::WrongClass("32-bit"));
        let mut h = header(243, 2);
        h[64 + 32..64 + 40].copy_from_slice(&0x10000u64.to_le_bytes());
        let e = parse(&h).unwrap_err().to_string();
        assert!(e.contains("file size") && e.contains("offset 0x60"), "{e}");
        let mut h = header(243, 2);
        h[64 + 40..64 + 48].copy_from_slice(&0x10000u64.to_le_bytes());
        h[64 + 8..64 + 16].copy_from_slice(&0x100000u64.to_le_bytes());
        assert!(parse(&h).unwrap_err().to_string().contains("past the end"));
        let mut h = header(243, 2);
        h.truncate(100);
        assert!(parse(&h)
            .unwrap_err()
            .to_string()
            .contains("program header table"));
    }

    #[test]
    fn reads_the_dynamic_loader_of_dynamic_executables() {
        let mut h = header(243, 2);
        h[56..58].copy_from_slice(&2u16.to_le_bytes());
        let mut interp = vec![0u8; 56];
        interp[..4].copy_from_slice(&PT_INTERP.to_le_bytes());
        interp[8..16].copy_from_slice(&(64u64 + 112).to_le_bytes());
        interp[32..40].copy_from_slice(&4u64.to_le_bytes());
        h.extend_from_slice(&interp);
        h.extend_from_slice(b"/ld\0");
        assert_eq!(parse(&h).unwrap().interp.as_deref(), Some("/ld"));
        // A path past the end of the file is named, with the field.
        let len = h.len() as u64;
        h[64 + 56 + 32..64 + 56 + 40].copy_from_slice(&len.to_le_bytes());
        let e = parse(&h).unwrap_err().to_string();
        assert!(e.contains("PT_INTERP") && e.contains("offset 0x80"), "{e}");
    }
}

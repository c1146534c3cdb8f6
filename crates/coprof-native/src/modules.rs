//! Where the code of each file a process ran lies: read from
//! `/proc/PID/maps` while the process still has its address space (at its
//! exit stop), with each file's bias worked out from its ELF segments, for
//! naming its PCs afterwards; and every area of its memory by name
//! (files, `[heap]`, `[stack]`, `[vdso]`, anonymous memory), for naming
//! the places its loads read and the code no file holds.

use coprof_core::areas::{Areas, ANON};
use coprof_core::trace::Module;
use object::read::elf::{ElfFile64, ProgramHeader};
use object::Endianness;
use std::path::{Path, PathBuf};

/// One line of `/proc/PID/maps`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub executable: bool,
    pub offset: u64,
    /// The file mapped; `None` for an anonymous or special one.
    pub path: Option<PathBuf>,
    /// A special mapping's name, as the kernel gives it (`[heap]`,
    /// `[stack]`, `[vdso]`); `None` for a file or anonymous memory.
    pub special: Option<String>,
}

/// The lines of a `/proc/PID/maps` text that it can read.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Mapping> {
    let mut fields = line.splitn(6, ' ');
    let (range, perms, offset) = (fields.next()?, fields.next()?, fields.next()?);
    let (_dev, _inode) = (fields.next()?, fields.next()?);
    let name = fields.next().unwrap_or("").trim_start();
    let (start, end) = range.split_once('-')?;
    let path = name
        .strip_prefix('/')
        .map(|_| PathBuf::from(name.strip_suffix(" (deleted)").unwrap_or(name)));
    Some(Mapping {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        executable: perms.as_bytes().get(2) == Some(&b'x'),
        offset: u64::from_str_radix(offset, 16).ok()?,
        special: name.starts_with('[').then(|| name.to_string()),
        path,
    })
}

/// The modules of a process whose mappings are `maps` and whose program is
/// `exe`: every file with executable code, the program first, then the
/// others by address. A file whose ELF headers cannot be read is left out.
pub fn modules(maps: &[Mapping], exe: Option<&Path>) -> Vec<Module> {
    let mut out: Vec<Module> = Vec::new();
    for m in maps.iter().filter(|m| m.executable) {
        let Some(path) = &m.path else { continue };
        if out.iter().any(|o| &o.path == path) {
            continue;
        }
        let Some((bias, image_end)) = layout(path, m.start, m.offset) else {
            continue;
        };
        let of_file = maps.iter().filter(|o| o.path.as_ref() == Some(path));
        let start = of_file.clone().map(|o| o.start).min().unwrap_or(m.start);
        // Its zero-filled data (`.bss`) past the file's bytes is mapped
        // anonymous, but its symbols are the file's.
        let end = of_file.map(|o| o.end).max().unwrap_or(m.end).max(image_end);
        out.push(Module {
            start,
            end,
            bias,
            path: path.clone(),
        });
    }
    if let Some(i) = exe.and_then(|exe| out.iter().position(|m| m.path == exe)) {
        let program = out.remove(i);
        out.insert(0, program);
    }
    out
}

/// Every area of `maps` by name: a file's path, a special mapping's name
/// (`[heap]`, `[vdso]`), or `[anon]` for anonymous memory, as the
/// simulator names a program's areas; adjacent lines of one name join.
/// Anonymous memory within one of `modules` is that file's zero-filled
/// data (`.bss`), named by the file as the simulator names it.
pub fn areas(maps: &[Mapping], modules: &[Module]) -> Areas {
    let mut areas = Areas::default();
    for m in maps {
        let image = || (modules.iter()).find(|i| i.start <= m.start && m.end <= i.end);
        match (&m.path, &m.special) {
            (Some(path), _) => areas.record_file(m.start, m.end, path),
            (None, Some(name)) => areas.record(m.start, m.end, name),
            (None, None) => match image() {
                Some(i) => areas.record_file(m.start, m.end, &i.path),
                None => areas.record(m.start, m.end, ANON),
            },
        }
    }
    areas
}

/// What was added to `path`'s own addresses, given that its bytes from
/// `offset` are mapped at `start` (the segment loaded from that offset
/// gives the address the file meant for them), and the end of its loaded
/// image at the run's addresses: its last segment's memory, page-rounded.
fn layout(path: &Path, start: u64, offset: u64) -> Option<(u64, u64)> {
    let data = std::fs::read(path).ok()?;
    let elf = ElfFile64::<Endianness>::parse(&*data).ok()?;
    let endian = elf.endian();
    const PAGE: u64 = 4096;
    let loads =
        || (elf.elf_program_headers().iter()).filter(|h| h.p_type(endian) == object::elf::PT_LOAD);
    let bias = loads()
        .find(|h| h.p_offset(endian) & !(PAGE - 1) == offset)
        .map(|h| start.wrapping_sub(h.p_vaddr(endian) & !(PAGE - 1)))?;
    let end = loads()
        .map(|h| h.p_vaddr(endian).saturating_add(h.p_memsz(endian)))
        .max()?
        .next_multiple_of(PAGE);
    Some((bias, end.wrapping_add(bias)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_lines_are_read_with_their_files() {
        let text = "\
55d0c0a00000-55d0c0a02000 r--p 00000000 fe:01 123 /usr/bin/prog
55d0c0a02000-55d0c0a05000 r-xp 00002000 fe:01 123 /usr/bin/prog
7f0000000000-7f0000021000 rw-p 00000000 00:00 0 
7ffd1000-7ffd2000 r-xp 00000000 00:00 0                          [vdso]
7f1000000000-7f1000001000 r-xp 00000000 fe:01 9 /tmp/x (deleted)
";
        let maps = parse_maps(text);
        assert_eq!(maps.len(), 5);
        assert_eq!(maps[1].start, 0x55d0c0a02000);
        assert!(maps[1].executable && !maps[0].executable);
        assert_eq!(maps[1].offset, 0x2000);
        assert_eq!(maps[1].path.as_deref(), Some(Path::new("/usr/bin/prog")));
        assert_eq!(maps[2].path, None);
        assert_eq!(maps[3].path, None, "[vdso] is no file");
        assert_eq!(maps[3].special.as_deref(), Some("[vdso]"));
        assert_eq!(maps[4].path.as_deref(), Some(Path::new("/tmp/x")));
        // Each by name; the program's two lines are one area.
        let named: Vec<(u64, u64, String)> = (areas(&maps, &[]).iter())
            .map(|a| (a.start, a.end, a.name.clone()))
            .collect();
        assert_eq!(
            named,
            [
                (0x7ffd1000, 0x7ffd2000, "[vdso]".to_string()),
                (0x55d0c0a00000, 0x55d0c0a05000, "/usr/bin/prog".to_string()),
                (0x7f0000000000, 0x7f0000021000, ANON.to_string()),
                (0x7f1000000000, 0x7f1000001000, "/tmp/x".to_string()),
            ]
        );
        // Anonymous memory within a file's image is its zero-filled data.
        let image = Module {
            start: 0x7f0000000000 - 0x1000,
            end: 0x7f0000021000,
            bias: 0,
            path: "/lib/libx.so".into(),
        };
        let names: Vec<String> = (areas(&maps, &[image]).iter())
            .map(|a| a.name.clone())
            .collect();
        assert!(names.contains(&"/lib/libx.so".to_string()) && !names.contains(&ANON.to_string()));
    }

    #[test]
    fn this_test_programs_own_code_is_found_with_its_bias() {
        let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let found = modules(&maps, Some(&exe));
        assert_eq!(found[0].path, exe, "the program first");
        // This function's address, less the bias, is an address of the
        // file's own: inside its executable segment's range.
        let here = this_test_programs_own_code_is_found_with_its_bias as *const () as u64;
        let m = &found[0];
        assert!(m.start <= here && here < m.end);
        // It spans its zero-filled data too, mapped anonymous past the
        // file's bytes.
        static mut ZEROED: [u8; 1 << 16] = [0; 1 << 16];
        let zeroed = &raw const ZEROED as u64;
        assert!(m.start <= zeroed && zeroed + (1 << 16) <= m.end);
        let data = std::fs::read(&exe).unwrap();
        let elf = ElfFile64::<Endianness>::parse(&*data).unwrap();
        let e = elf.endian();
        let file_addr = here - m.bias;
        assert!(elf.elf_program_headers().iter().any(|h| {
            h.p_type(e) == object::elf::PT_LOAD
                && h.p_flags(e) & object::elf::PF_X != 0
                && (h.p_vaddr(e)..h.p_vaddr(e) + h.p_memsz(e)).contains(&file_addr)
        }));
        assert!(found
            .iter()
            .skip(1)
            .any(|m| m.path.to_string_lossy().contains("libc")));
    }
}

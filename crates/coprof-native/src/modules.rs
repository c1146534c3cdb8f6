//! Where the code of each file a process ran lies: read from
//! `/proc/PID/maps` while the process still has its address space (at its
//! exit stop), with each file's bias worked out from its ELF segments, for
//! naming its PCs afterwards.

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
        let Some(bias) = bias(path, m.start, m.offset) else {
            continue;
        };
        let of_file = maps.iter().filter(|o| o.path.as_ref() == Some(path));
        let start = of_file.clone().map(|o| o.start).min().unwrap_or(m.start);
        let end = of_file.map(|o| o.end).max().unwrap_or(m.end);
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

/// What was added to `path`'s own addresses, given that its bytes from
/// `offset` are mapped at `start`: the segment loaded from that offset
/// gives the address the file meant for them.
fn bias(path: &Path, start: u64, offset: u64) -> Option<u64> {
    let data = std::fs::read(path).ok()?;
    let elf = ElfFile64::<Endianness>::parse(&*data).ok()?;
    let endian = elf.endian();
    const PAGE: u64 = 4096;
    elf.elf_program_headers()
        .iter()
        .filter(|h| h.p_type(endian) == object::elf::PT_LOAD)
        .find(|h| h.p_offset(endian) & !(PAGE - 1) == offset)
        .map(|h| start.wrapping_sub(h.p_vaddr(endian) & !(PAGE - 1)))
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
        assert_eq!(maps[4].path.as_deref(), Some(Path::new("/tmp/x")));
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

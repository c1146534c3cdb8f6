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
use std::collections::HashMap;
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
///
/// A file mapped in more than one place is a module per place, each with
/// its own bias: node maps part of its own text again, far from the rest
/// (V8's builtins, near the code it makes), and that copy's PCs are the
/// file's at another bias. A place spans the file's mappings at its bias
/// alone, so it never covers the memory between two places.
pub fn modules(maps: &[Mapping], exe: Option<&Path>) -> Vec<Module> {
    let mut out: Vec<Module> = Vec::new();
    let mut layouts: HashMap<&Path, Option<Layout>> = HashMap::new();
    for m in maps.iter().filter(|m| m.executable) {
        let Some(path) = &m.path else { continue };
        let layout = layouts.entry(path).or_insert_with(|| Layout::of(path));
        let Some(layout) = layout.as_ref() else {
            continue;
        };
        let Some(bias) = layout.bias(m) else { continue };
        if out.iter().any(|o| &o.path == path && o.bias == bias) {
            continue;
        }
        let at_bias = maps
            .iter()
            .filter(|o| o.path.as_ref() == Some(path) && layout.fits(o, bias));
        let start = at_bias.clone().map(|o| o.start).min().unwrap_or(m.start);
        let mut end = at_bias.map(|o| o.end).max().unwrap_or(m.end);
        // Its zero-filled data (`.bss`) past the file's bytes is mapped
        // anonymous, but its symbols are the file's: where this place
        // holds the file's last bytes, it spans the image's end.
        if end >= layout.bytes_end.wrapping_add(bias) {
            end = end.max(layout.image_end.wrapping_add(bias));
        }
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

const PAGE: u64 = 4096;

/// Where an ELF file's loaded segments go, by its own addresses.
struct Layout {
    /// Each segment's file offset and address, page-rounded down, the
    /// end of its bytes in the file, and whether it is code.
    loads: Vec<(u64, u64, u64, bool)>,
    /// The address after the last segment's bytes from the file.
    bytes_end: u64,
    /// The address after the last segment's memory, page-rounded: the
    /// end of its zero-filled data.
    image_end: u64,
}

impl Layout {
    /// The layout of the ELF file at `path`, from its program headers
    /// (read alone, not the whole file).
    fn of(path: &Path) -> Option<Layout> {
        let cache = object::ReadCache::new(std::fs::File::open(path).ok()?);
        let elf = ElfFile64::<Endianness, _>::parse(&cache).ok()?;
        let e = elf.endian();
        let loads: Vec<_> = (elf.elf_program_headers().iter())
            .filter(|h| h.p_type(e) == object::elf::PT_LOAD)
            .map(|h| {
                let code = h.p_flags(e) & object::elf::PF_X != 0;
                (
                    h.p_offset(e),
                    h.p_vaddr(e),
                    h.p_filesz(e),
                    h.p_memsz(e),
                    code,
                )
            })
            .collect();
        let last = loads.iter().max_by_key(|l| l.1)?;
        Some(Layout {
            bytes_end: last.1.saturating_add(last.2),
            image_end: last.1.saturating_add(last.3).next_multiple_of(PAGE),
            loads: (loads.iter())
                .map(|&(offset, vaddr, filesz, _, code)| {
                    let skew = offset % PAGE;
                    (
                        offset - skew,
                        vaddr - skew,
                        offset.saturating_add(filesz),
                        code,
                    )
                })
                .collect(),
        })
    }

    /// The biases mapping `m` could have: one for each segment that holds
    /// its offset (two segments may share a page of the file), the
    /// segment loaded from that very offset first, of `m`'s kind (code or
    /// not) first among those.
    fn biases<'a>(&'a self, m: &'a Mapping) -> impl Iterator<Item = u64> + 'a {
        let mut held: Vec<_> = (self.loads.iter())
            .filter(|l| l.0 <= m.offset && m.offset < l.2.max(l.0 + 1))
            .collect();
        held.sort_by_key(|l| (l.0 != m.offset, l.3 != m.executable));
        (held.into_iter())
            .map(|&(offset, vaddr, _, _)| m.start.wrapping_sub(vaddr + (m.offset - offset)))
    }

    /// Whether mapping `m` could be the file's at `bias`.
    fn fits(&self, m: &Mapping, bias: u64) -> bool {
        self.biases(m).any(|b| b == bias)
    }

    /// What was added to the file's own addresses where mapping `m` of it
    /// lies: its bytes from `m.offset` are at `m.start`, and the segment
    /// loaded from that offset (else the one that holds it: a part of a
    /// segment mapped again) gives the address the file meant for them.
    fn bias(&self, m: &Mapping) -> Option<u64> {
        self.biases(m).next()
    }
}

/// The mappings a loader makes of the ELF file at `path` at `bias`: each
/// segment's pages, its code executable. For tests.
#[cfg(test)]
pub(crate) fn laid_out(path: &Path, bias: u64) -> Vec<Mapping> {
    let layout = Layout::of(path).expect("an ELF file");
    (layout.loads.iter())
        .map(|&(offset, vaddr, end, code)| Mapping {
            start: bias + vaddr,
            end: bias + vaddr + (end - offset).next_multiple_of(PAGE),
            executable: code,
            offset,
            path: Some(path.to_path_buf()),
            special: None,
        })
        .collect()
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
    fn a_file_mapped_again_elsewhere_is_a_module_per_place() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let layout = Layout::of(&exe).unwrap();
        // The image, each segment where its bias puts it.
        let bias = 0x5500_0000_0000;
        let mut maps = laid_out(&exe, bias);
        let text = maps.iter().find(|m| m.executable).unwrap();
        let (text_offset, text_vaddr) = (text.offset, text.start - bias);
        let file = |start: u64, end: u64, offset: u64, executable: bool| Mapping {
            start,
            end,
            executable,
            offset,
            path: Some(exe.clone()),
            special: None,
        };
        // Anonymous memory past it, then a page of its code mapped again.
        let again = 0x7f00_0000_0000;
        maps.push(Mapping {
            start: 0x6000_0000_0000,
            end: 0x6000_0001_0000,
            executable: true,
            offset: 0,
            path: None,
            special: None,
        });
        maps.push(file(again, again + PAGE, text_offset + PAGE, true));
        let found = modules(&maps, Some(&exe));
        assert_eq!(found.len(), 2, "{found:?}");
        let (image, copy) = (&found[0], &found[1]);
        assert_eq!(image.bias, bias);
        assert!(image.end >= bias + layout.image_end && image.end < 0x6000_0000_0000);
        // The copy's PCs are the file's own addresses at its bias.
        assert_eq!((copy.start, copy.end), (again, again + PAGE));
        assert_eq!(again - copy.bias, text_vaddr + PAGE);
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

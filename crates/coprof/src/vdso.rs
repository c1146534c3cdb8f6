//! The kernel's vDSO: the code Linux maps into every process for the
//! calls it answers without entering the kernel (`clock_gettime`,
//! `gettimeofday`, `getcpu`, `time`). No file holds it, so a native
//! program's PCs there have no file to be named by; but a kernel maps
//! the same image into every 64-bit process it runs, coprof's own too.
//! A report names those PCs by coprof's copy (`__vdso_clock_gettime in
//! [vdso]`, as perf names them) when the program's vDSO was the same
//! image: a trace keeps the build ID of the one it ran with
//! ([`TraceMeta::vdso_build_id`]), which a report on another kernel does
//! not match.
//!
//! [`TraceMeta::vdso_build_id`]: coprof_core::trace::TraceMeta::vdso_build_id

use std::io::{Read, Seek, SeekFrom};
use std::sync::OnceLock;

/// The name of the vDSO's mapping, as `/proc/PID/maps` gives it.
pub const NAME: &str = "[vdso]";

/// A vDSO image, read from memory.
#[derive(Debug)]
pub struct Vdso {
    /// Its bytes: the whole mapping, from its ELF header on.
    pub image: Vec<u8>,
    /// Its build ID, in hexadecimal.
    pub build_id: String,
}

/// This process's vDSO, read once: `None` when the kernel maps none, or
/// it cannot be read or has no build ID.
pub fn own() -> Option<&'static Vdso> {
    static OWN: OnceLock<Option<Vdso>> = OnceLock::new();
    OWN.get_or_init(read_own).as_ref()
}

fn read_own() -> Option<Vdso> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with(NAME))?;
    let (start, end) = line.split_whitespace().next()?.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    let mut image = vec![0; end.checked_sub(start)? as usize];
    let mut mem = std::fs::File::open("/proc/self/mem").ok()?;
    mem.seek(SeekFrom::Start(start)).ok()?;
    mem.read_exact(&mut image).ok()?;
    let build_id = coprof_symbols::debug_file::build_id_in(&image)?;
    Some(Vdso { image, build_id })
}

/// This process's vDSO, if it is the image of build ID `build_id`, and
/// of the size `len` of the mapping a program had it in.
pub fn matching(build_id: &str, len: u64) -> Option<&'static Vdso> {
    own().filter(|v| v.build_id == build_id && v.image.len() as u64 == len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_processs_vdso_is_an_elf_image_that_names_clock_gettime() {
        let Some(v) = own() else {
            // A kernel without a vDSO (vdso=0): nothing to name.
            return;
        };
        assert_eq!(&v.image[..4], b"\x7fELF");
        assert_eq!(v.build_id.len(), 40, "{}", v.build_id);
        let sym = coprof_symbols::Symbolizer::from_bytes(NAME.as_ref(), &v.image).unwrap();
        let at = ["__vdso_clock_gettime", "clock_gettime"]
            .iter()
            .find_map(|n| sym.function_address(n))
            .expect("the vDSO has clock_gettime");
        let named = sym.lookup(at).function.unwrap_or_default();
        assert!(named.contains("clock_gettime"), "{named}");
        assert!(matching(&v.build_id, v.image.len() as u64).is_some());
        assert!(matching("00", v.image.len() as u64).is_none());
        assert!(matching(&v.build_id, v.image.len() as u64 + 4096).is_none());
    }
}

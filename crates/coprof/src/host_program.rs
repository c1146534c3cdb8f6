//! A program on the host, as `coprof record` and the live reports find
//! it before deciding whether the simulator runs it or the native
//! sampler samples it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The file `name` runs: as given when it has a slash, else the first
/// executable file of that name in the host's PATH, as a shell finds it.
pub(crate) fn find(name: &OsStr) -> Option<PathBuf> {
    let path = PathBuf::from(name);
    if path.as_os_str().as_encoded_bytes().contains(&b'/') {
        return Some(path);
    }
    let dirs = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&dirs)
        .map(|d| d.join(&path))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The ELF `e_machine` of the file at `path`: `None` when it cannot be
/// read or is not an ELF file.
pub(crate) fn elf_machine(path: &Path) -> Option<u16> {
    let mut head = [0u8; 20];
    let mut file = std::fs::File::open(path).ok()?;
    std::io::Read::read_exact(&mut file, &mut head).ok()?;
    coprof_rv::elf::machine(&head).map(|(_, m)| m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use coprof_rv::elf::{EM_RISCV, EM_X86_64};

    #[test]
    fn finds_in_path_and_reads_the_machine() {
        let sh = find(OsStr::new("sh")).expect("sh is in PATH");
        assert!(sh.is_absolute(), "{}", sh.display());
        let me = std::env::current_exe().unwrap();
        let expected = if cfg!(target_arch = "x86_64") {
            EM_X86_64
        } else {
            elf_machine(&me).unwrap()
        };
        assert_eq!(elf_machine(&me), Some(expected));
        assert_ne!(elf_machine(&me), Some(EM_RISCV));
    }

    #[test]
    fn what_is_not_found_or_not_elf_says_none() {
        assert_eq!(find(OsStr::new("no-such-program-coprof-test")), None);
        // A name with a slash is taken as given, found or not.
        assert_eq!(
            find(OsStr::new("./no-such")),
            Some(PathBuf::from("./no-such"))
        );
        let dir = std::env::temp_dir().join(format!("coprof-host-program-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("script");
        std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
        assert_eq!(elf_machine(&script), None);
        assert_eq!(elf_machine(&dir.join("missing")), None);
        std::fs::write(&script, "\x7fELF").unwrap();
        assert_eq!(elf_machine(&script), None, "a header shorter than 20 bytes");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Where a dynamically linked program's loader and libraries come from.
//!
//! A dynamically linked RISC-V program names its dynamic loader by an
//! absolute path (`/lib/ld-linux-riscv64-lp64d.so.1`), and the loader opens
//! the libraries by absolute paths too. On a host of another architecture
//! those paths hold the host's own files, or nothing. As qemu-user's `-L`
//! does, absolute paths are first looked up under a *sysroot*, the
//! directory that holds the RISC-V libraries, and fall back to the host's
//! own path when the sysroot has no such file: the program still reads the
//! host's `/etc`, `/tmp` and home directories.
//!
//! With no sysroot given, a dynamically linked program whose loader is not
//! a RISC-V file on the host gets the first of [`DEFAULT_SYSROOTS`] that
//! holds it: the directory the Debian and Ubuntu cross compilers
//! (`gcc-riscv64-linux-gnu`) install their libraries in, so that a program
//! the cross compiler built with its defaults runs as it is.

use crate::elf::ElfError;
use std::path::{Path, PathBuf};

/// Sysroots tried, in order, for a dynamically linked program when none
/// is given.
pub const DEFAULT_SYSROOTS: &[&str] = &["/usr/riscv64-linux-gnu"];

/// The host file for the absolute guest path `guest` under `sysroot`, when
/// the sysroot has one (a file, a directory or a link). The guest's `/`
/// itself is never moved, so that `chdir("/")` and `ls /` see the host's.
pub fn under(sysroot: &Path, guest: &[u8]) -> Option<PathBuf> {
    if guest.first() != Some(&b'/') || guest.iter().all(|b| *b == b'/') {
        return None;
    }
    let p = joined(sysroot, guest);
    std::fs::symlink_metadata(&p).is_ok().then_some(p)
}

/// `dir`'s path followed by the absolute guest path `guest`: where
/// `guest` lies under a sysroot or under `--root`.
fn joined(dir: &Path, guest: &[u8]) -> PathBuf {
    let mut p = dir.as_os_str().as_encoded_bytes().to_vec();
    p.extend_from_slice(guest);
    // SAFETY: the bytes are a directory path's followed by a path's bytes.
    PathBuf::from(unsafe { std::ffi::OsString::from_encoded_bytes_unchecked(p) })
}

/// The host file the guest path `guest` names: an absolute path under
/// `root` (`--root`, where every absolute path lies), else under `sysroot`
/// when the sysroot has it, else the path itself, as the host has it.
pub fn host_file(guest: &[u8], root: Option<&Path>, sysroot: Option<&Path>) -> Vec<u8> {
    if guest.first() != Some(&b'/') {
        return guest.to_vec();
    }
    if let Some(root) = root {
        return joined(root, guest).into_os_string().into_encoded_bytes();
    }
    match sysroot.and_then(|s| under(s, guest)) {
        Some(p) => p.into_os_string().into_encoded_bytes(),
        None => guest.to_vec(),
    }
}

/// Whether the host file `path` is a RISC-V ELF file.
fn is_riscv_elf(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && crate::elf::is_riscv(&head)
}

/// The sysroot a program that asks for the loader `interp` runs with, and
/// the loader's host file. `given` is `--sysroot`; `root` is `--root`,
/// under which every absolute path already lies (so no sysroot is used).
/// Without either, the host's own `interp` when it is a RISC-V file (a
/// RISC-V host), else the first default sysroot that holds it.
pub fn choose(
    interp: &str,
    given: Option<&Path>,
    root: Option<&Path>,
) -> Result<(Option<PathBuf>, PathBuf), ElfError> {
    let guest = interp.as_bytes();
    let not_found = |looked: String| ElfError::NoInterpreter {
        interp: interp.to_string(),
        looked,
    };
    if let Some(root) = root {
        let p = joined(root, guest);
        return match p.exists() {
            true => Ok((None, p)),
            false => Err(not_found(format!("--root {}", root.display()))),
        };
    }
    if let Some(sysroot) = given {
        return match under(sysroot, guest) {
            Some(p) => Ok((Some(sysroot.to_path_buf()), p)),
            None => Err(not_found(format!("--sysroot {}", sysroot.display()))),
        };
    }
    if is_riscv_elf(Path::new(interp)) {
        return Ok((None, PathBuf::from(interp)));
    }
    for dir in DEFAULT_SYSROOTS {
        if let Some(p) = under(Path::new(dir), guest).filter(|p| is_riscv_elf(p)) {
            return Ok((Some(PathBuf::from(dir)), p));
        }
    }
    Err(not_found(format!(
        "the host's / (not a RISC-V file there) or {}",
        DEFAULT_SYSROOTS.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_under_the_sysroot_then_falls_back() {
        let dir = std::env::temp_dir().join(format!("coprof-sysroot-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join("lib/ld.so"), b"\x7fELF").unwrap();
        assert_eq!(under(&dir, b"/lib/ld.so"), Some(dir.join("lib/ld.so")));
        assert_eq!(under(&dir, b"/lib"), Some(dir.join("lib")));
        // Missing there: the host's path; the root and relative paths stay.
        assert_eq!(under(&dir, b"/etc/passwd"), None);
        assert_eq!(under(&dir, b"/"), None);
        assert_eq!(under(&dir, b"//"), None);
        assert_eq!(under(&dir, b"lib/ld.so"), None);
        // A loader that is not there is named with where it was looked for.
        let e = choose("/lib/none.so", Some(&dir), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/lib/none.so") && e.contains("--sysroot"), "{e}");
        let (sysroot, file) = choose("/lib/ld.so", Some(&dir), None).unwrap();
        assert_eq!((sysroot, file), (Some(dir.clone()), dir.join("lib/ld.so")));
        let (sysroot, file) = choose("/lib/ld.so", None, Some(&dir)).unwrap();
        assert_eq!((sysroot, file), (None, dir.join("lib/ld.so")));
        // Under --root every absolute path lies there, found or not;
        // under a sysroot only what it holds; a relative path stays. A
        // loader missing under the root is named with the root.
        let bytes = |p: PathBuf| p.into_os_string().into_encoded_bytes();
        assert_eq!(
            host_file(b"/etc/passwd", Some(&dir), Some(&dir)),
            bytes(dir.join("etc/passwd"))
        );
        assert_eq!(
            host_file(b"/lib/ld.so", None, Some(&dir)),
            bytes(dir.join("lib/ld.so"))
        );
        assert_eq!(host_file(b"/etc/passwd", None, Some(&dir)), b"/etc/passwd");
        assert_eq!(host_file(b"lib/ld.so", Some(&dir), None), b"lib/ld.so");
        let e = choose("/lib/none.so", None, Some(&dir))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/lib/none.so") && e.contains("--root"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

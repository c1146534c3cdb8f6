//! A program on the host, as `coprof record` and the live reports find
//! it before deciding whether the simulator runs it or the native
//! sampler samples it.

use crate::error::bad_input;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The program the running process `pid` runs (`/proc/PID/exe`), and its
/// arguments after `argv[0]` (`/proc/PID/cmdline`), for `--attach`.
pub(crate) fn of_process(pid: i32) -> anyhow::Result<(PathBuf, Vec<OsString>)> {
    let prog = std::fs::read_link(format!("/proc/{pid}/exe")).map_err(|e| {
        bad_input(match e.kind() {
            std::io::ErrorKind::NotFound => format!("--attach {pid}: no such process"),
            _ => format!("--attach {pid}: cannot read /proc/{pid}/exe: {e}"),
        })
    })?;
    let args = coprof_native::command_line(pid)
        .into_iter()
        .skip(1)
        .collect();
    Ok((prog, args))
}

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

/// The longest chain of `#!` scripts Linux runs before an ELF file: a
/// script whose interpreter is a script, and so on (fs/exec.c,
/// `exec_binprm`, which fails with ELOOP past it).
const MAX_SCRIPTS: usize = 5;

/// The ELF `e_machine` of the program the kernel runs for the file at
/// `path`: the file's own for an ELF file; for a `#!` script, its
/// interpreter's, followed as Linux follows them (a pyenv shim runs
/// `/usr/bin/env`, an x86-64 program). `None` when it cannot be read or
/// is neither.
pub(crate) fn elf_machine(path: &Path) -> Option<u16> {
    let mut path = path.to_path_buf();
    for _ in 0..=MAX_SCRIPTS {
        let mut head = Vec::with_capacity(256);
        let file = std::fs::File::open(&path).ok()?;
        std::io::Read::read_to_end(&mut std::io::Read::take(file, 256), &mut head).ok()?;
        if let Some((_, m)) = coprof_rv::elf::machine(&head) {
            return Some(m);
        }
        let (interpreter, _) = coprof_rv::command::shebang(head.strip_prefix(b"#!")?)?;
        use std::os::unix::ffi::OsStrExt;
        path = PathBuf::from(OsStr::from_bytes(&interpreter));
    }
    None
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
        std::fs::write(&script, "#!/no/such/interpreter\nexit 0\n").unwrap();
        assert_eq!(elf_machine(&script), None);
        std::fs::write(&script, "no interpreter\n").unwrap();
        assert_eq!(elf_machine(&script), None);
        assert_eq!(elf_machine(&dir.join("missing")), None);
        std::fs::write(&script, "\x7fELF").unwrap();
        assert_eq!(elf_machine(&script), None, "a header shorter than 20 bytes");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_script_runs_its_interpreters_machine_as_linux_follows_it() {
        let me = std::env::current_exe().unwrap();
        let machine = elf_machine(&me).unwrap();
        let dir = std::env::temp_dir().join(format!("coprof-host-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A script whose interpreter is this test's ELF file, with an
        // argument; and scripts run by scripts, as deep as Linux goes.
        let mut interpreter = me.clone();
        for depth in 0..MAX_SCRIPTS {
            let script = dir.join(format!("s{depth}"));
            std::fs::write(
                &script,
                format!("#! {}  -x \nbody\n", interpreter.display()),
            )
            .unwrap();
            assert_eq!(elf_machine(&script), Some(machine), "depth {depth}");
            interpreter = script;
        }
        // One deeper than Linux follows: not run.
        let script = dir.join("too-deep");
        std::fs::write(&script, format!("#!{}\n", interpreter.display())).unwrap();
        assert_eq!(elf_machine(&script), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

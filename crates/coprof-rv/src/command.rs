//! The program a command line names (`coprof run -- NAME ARGS…`), found
//! as a shell's `execvp` and Linux's `execve` would find and run it.
//!
//! - A name without a slash is looked for in the directories of the
//!   program's own `PATH` (glibc's `/bin:/usr/bin` when it has none), each
//!   looked up as the program would see it: under `--root`, or under
//!   `--sysroot` first. The first RISC-V program or `#!` script found
//!   runs; a host program of the same name (`/usr/bin/gzip`, an x86-64
//!   file) is passed over, since the simulator cannot run it. When none is
//!   found, a file of that name in the current directory runs, as under
//!   valgrind, which looks there last too.
//! - A path with a slash is the host's file, as given. An absolute one is
//!   first looked up as the program would see it, so that
//!   `--sysroot DIR -- /usr/bin/gzip` runs the sysroot's gzip.
//! - A `#!` script runs its interpreter, found the same way, with Linux's
//!   argv (binfmt_script): the interpreter as written, the line's one
//!   optional argument, the script's path, then the script's arguments.
//!   A `#!/usr/bin/env NAME` or `#!/usr/bin/env -S NAME ARGS…` script
//!   runs NAME from PATH directly, with the argv `env` would give it, so
//!   that the process is NAME's from its start and not an `env` that
//!   replaces itself.
//!
//! `argv[0]` stays as given; the program's own file (`/proc/self/exe`,
//! AT_EXECFN) is the file found.

use crate::elf;
use crate::error::SimError;
use crate::sim::Config;
use crate::sysroot::host_file;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Most bytes of a `#!` line Linux reads (BINPRM_BUF_SIZE).
const BINPRM_BUF: usize = 256;
/// Scripts Linux looks through before it gives up with ELOOP: a script's
/// interpreter may be a script in turn, up to five scripts in all before
/// the program that runs them (`exec_binprm` in fs/exec.c).
pub(crate) const MAX_REWRITES: u32 = 5;
/// The search path of a program whose environment has no `PATH`: glibc's
/// `execvp`'s.
const DEFAULT_PATH: &[u8] = b"/bin:/usr/bin";

/// The end of the error about a script whose interpreter the simulator
/// cannot run.
const NEEDS_ROOT: &str = "; give the RISC-V root that has one with --sysroot DIR";

/// What a command line runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The host file of the RISC-V program to load: the one named, or the
    /// interpreter of the script named.
    pub program: PathBuf,
    /// Its argv: the command line as given, or a script's interpreter's.
    pub args: Vec<OsString>,
}

/// The program `args[0]` names and the argv it runs with, for a run with
/// `config`'s environment (its `PATH`), root and sysroot.
pub fn find(args: &[OsString], config: &Config) -> Result<Command, SimError> {
    let Some(word) = args.first() else {
        return Err(SimError::Command {
            name: String::new(),
            why: "no program given".into(),
        });
    };
    let name = word.as_bytes();
    if name.is_empty() {
        return Err(SimError::Command {
            name: "\"\"".into(),
            why: "an empty program name".into(),
        });
    }
    let (host, guest, kind) = if name.contains(&b'/') {
        let mapped = guest_file(name, config);
        let host = if name[0] == b'/' && mapped.exists() {
            mapped
        } else {
            PathBuf::from(word)
        };
        let kind = kind(&host, config);
        (host, name.to_vec(), kind)
    } else {
        search(word, config)?
    };
    match kind {
        Kind::Script { head, host } => {
            let mut argv: Vec<OsString> = head.into_iter().map(OsString::from_vec).collect();
            argv.push(OsString::from_vec(guest));
            argv.extend(args[1..].iter().cloned());
            Ok(Command {
                program: host,
                args: argv,
            })
        }
        Kind::Other { script: true, why } => Err(SimError::Command {
            name: host.display().to_string(),
            why,
        }),
        // A RISC-V file, or one the loader names what is wrong with.
        Kind::RiscV | Kind::Other { .. } => Ok(Command {
            program: host,
            args: args.to_vec(),
        }),
    }
}

/// What a host file is to the simulator.
enum Kind {
    /// A RISC-V ELF file.
    RiscV,
    /// A `#!` script whose interpreter, `host`, is a RISC-V ELF file.
    Script {
        /// The interpreter's argv before the script's path: the
        /// interpreter as the script names it and the `#!` line's one
        /// argument, or what `env` would run.
        head: Vec<Vec<u8>>,
        /// The interpreter's host file.
        host: PathBuf,
    },
    /// Anything else; `script` when it is a `#!` script.
    Other { script: bool, why: String },
}

/// What the host file `host` is, to a run with `config`'s root and
/// sysroot, which a script's interpreter is looked up under.
fn kind(host: &Path, config: &Config) -> Kind {
    kind_at(host, config, 0)
}

/// [`kind`] of a file reached through `depth` interpreters: a script's
/// interpreter may be a script in turn, as deep as Linux looks
/// ([`MAX_REWRITES`]), its argv the inner interpreter's, then the outer
/// one's path as written and its argument.
fn kind_at(host: &Path, config: &Config, depth: u32) -> Kind {
    let other = |why: String| Kind::Other { script: false, why };
    let head = match head_of(host) {
        Ok(head) => head,
        Err(e) => return other(os_error(e)),
    };
    if elf::is_riscv(&head) {
        return Kind::RiscV;
    }
    if !head.starts_with(b"#!") {
        return other(what_file(&head));
    }
    let bad_script = |why: String| Kind::Other { script: true, why };
    let Some((interp, arg)) = shebang(&head[2..]) else {
        return bad_script("a `#!` script whose first line names no interpreter".into());
    };
    if let Some((host, head)) = env_target(&interp, arg.as_deref(), config) {
        return Kind::Script { head, host };
    }
    let interp_host = guest_file(&interp, config);
    let named = format!(
        "a `#!` script whose interpreter {} (host file {})",
        String::from_utf8_lossy(&interp),
        interp_host.display()
    );
    let own = std::iter::once(interp).chain(arg);
    match head_of(&interp_host) {
        Err(e) => bad_script(format!(
            "{named} cannot be run: {}{NEEDS_ROOT}",
            os_error(e)
        )),
        Ok(h) if h.starts_with(b"#!") && depth + 1 < MAX_REWRITES => {
            match kind_at(&interp_host, config, depth + 1) {
                Kind::Script { head, host } => Kind::Script {
                    head: head.into_iter().chain(own).collect(),
                    host,
                },
                Kind::Other { why, .. } => bad_script(format!("{named} is {why}")),
                Kind::RiscV => unreachable!("a file that starts with #! is no ELF file"),
            }
        }
        Ok(h) if h.starts_with(b"#!") => bad_script(format!(
            "{named} is a script too: more than {MAX_REWRITES} scripts, each the interpreter of the one before, which Linux refuses (ELOOP)"
        )),
        Ok(h) if !elf::is_riscv(&h) => bad_script(format!(
            "{named} is {}, not a RISC-V program{NEEDS_ROOT}",
            what_file(&h)
        )),
        Ok(_) => Kind::Script {
            head: own.collect(),
            host: interp_host,
        },
    }
}

/// The host file, guest path and kind of the program `word` (no slash)
/// in `config`'s `PATH`, as [`find`] describes.
fn search(word: &OsStr, config: &Config) -> Result<(PathBuf, Vec<u8>, Kind), SimError> {
    let path = search_path(config);
    let mut passed_over = Vec::new();
    for (host, guest) in in_path(word.as_bytes(), config) {
        match kind(&host, config) {
            Kind::Other { why, .. } => passed_over.push(format!("{} ({why})", host.display())),
            k => return Ok((host, guest, k)),
        }
    }
    if Path::new(word).is_file() {
        let host = PathBuf::from(word);
        let k = kind(&host, config);
        return Ok((host, word.as_bytes().to_vec(), k));
    }
    let under = match (&config.root, &config.sysroot) {
        (Some(r), _) => format!(", each under --root {}", r.display()),
        (None, Some(s)) => format!(", each under --sysroot {} first", s.display()),
        (None, None) => String::new(),
    };
    let mut why = format!(
        "no RISC-V program or script of this name in PATH ({}{under}) or the current directory",
        String::from_utf8_lossy(path)
    );
    if !passed_over.is_empty() {
        why += &format!(
            "; passed over {}: give the RISC-V root that has one with --sysroot DIR, or a path",
            passed_over.join(", ")
        );
    }
    Err(SimError::Command {
        name: word.to_string_lossy().into_owned(),
        why,
    })
}

/// The program's `PATH`, or glibc's default when it has none.
fn search_path(config: &Config) -> &[u8] {
    env_value(&config.env, b"PATH").unwrap_or(DEFAULT_PATH)
}

/// The value of `name` in the environment `env` (`NAME=VALUE` strings),
/// the first if several, as `getenv` finds it.
fn env_value<'e>(env: &'e [OsString], name: &[u8]) -> Option<&'e [u8]> {
    env.iter()
        .find_map(|e| e.as_bytes().strip_prefix(name)?.strip_prefix(b"="))
}

/// The files named `word` in the directories of the program's `PATH`, in
/// order: each host file that is a regular file, with its guest path.
fn in_path<'c>(
    word: &'c [u8],
    config: &'c Config,
) -> impl Iterator<Item = (PathBuf, Vec<u8>)> + 'c {
    search_path(config)
        .split(|&b| b == b':')
        .filter_map(move |dir| {
            let dir: &[u8] = if dir.is_empty() { b"." } else { dir };
            let mut guest = dir.to_vec();
            if !guest.ends_with(b"/") {
                guest.push(b'/');
            }
            guest.extend_from_slice(word);
            let host = guest_file(&guest, config);
            host.is_file().then_some((host, guest))
        })
}

/// For a script whose `#!` line is `/usr/bin/env NAME` (an `env` and one
/// plain word, no option and no assignment) or `/usr/bin/env -S NAME
/// ARGS…` (GNU env's split string, see [`split_string`]), the RISC-V
/// program NAME that `env` would run, found in the program's `PATH` as
/// `env`'s `execvp` finds it (passing over host programs, as [`find`]
/// does): its host file, and the argv before the script's path (`NAME`
/// and its arguments). The script then runs NAME directly with the argv
/// `env` would give it, so that the process is NAME's from its start, as
/// under perf, and not an `env` that replaces itself, which a report
/// about the program it started refuses. Anything else `env` is told
/// (other options, assignments, a NAME with a slash) runs `env` as
/// written.
fn env_target(
    interp: &[u8],
    arg: Option<&[u8]>,
    config: &Config,
) -> Option<(PathBuf, Vec<Vec<u8>>)> {
    if interp.rsplit(|&b| b == b'/').next() != Some(b"env") {
        return None;
    }
    let arg = arg?;
    let words = match arg.strip_prefix(b"-S") {
        Some(rest) => split_string(rest, &config.env)?,
        None => vec![arg.to_vec()],
    };
    let name = words.first()?;
    let plain = !name.is_empty()
        && !name.starts_with(b"-")
        && !name.contains(&b'=')
        && !name.contains(&b'/')
        && !name.iter().any(|b| b.is_ascii_whitespace());
    if !plain {
        return None;
    }
    let host = in_path(name, config)
        .map(|(host, _)| host)
        .find(|host| head_of(host).is_ok_and(|head| elf::is_riscv(&head)))?;
    Some((host, words))
}

/// The words of GNU `env -S STRING`'s string, as coreutils' env splits
/// it: blanks separate words; `'…'` quotes everything but `\'` and
/// `\\`; `"…"` and unquoted text take the escapes `\"`, `\'`, `\\`,
/// `\#`, `\$`, `\_` (a space, or a separator outside quotes), `\t`, `\n`,
/// `\r`, `\f`, `\v` and `\c` (the end of the string), and `${NAME}`,
/// the value of NAME in `env` (empty when unset); a word that starts with
/// `#` starts a comment to the end. `None` for what env would refuse (an
/// open quote, an unknown escape, a `$` without `{NAME}`), which then
/// runs `env` itself, to say so.
fn split_string(s: &[u8], env: &[OsString]) -> Option<Vec<Vec<u8>>> {
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let mut words: Vec<Vec<u8>> = Vec::new();
    let mut word: Option<Vec<u8>> = None;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        i += 1;
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(b'\''), b'\\') if matches!(s.get(i), Some(b'\\' | b'\'')) => {
                word.get_or_insert_with(Vec::new).push(s[i]);
                i += 1;
            }
            (Some(b'\''), c) => word.get_or_insert_with(Vec::new).push(c),
            (None, c) if blank(c) => words.extend(word.take()),
            (None, b'#') if word.is_none() => break,
            (None, b'\'' | b'"') => {
                quote = Some(c);
                word.get_or_insert_with(Vec::new);
            }
            (_, b'\\') => {
                let e = *s.get(i)?;
                i += 1;
                let lit = match e {
                    b'"' | b'\'' | b'\\' | b'#' | b'$' => e,
                    b'_' if quote.is_none() => {
                        words.extend(word.take());
                        continue;
                    }
                    b'_' => b' ',
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b'f' => 0x0c,
                    b'v' => 0x0b,
                    b'c' if quote.is_none() => break,
                    _ => return None,
                };
                word.get_or_insert_with(Vec::new).push(lit);
            }
            (_, b'$') => {
                let rest = s[i..].strip_prefix(b"{")?;
                let end = rest.iter().position(|&b| b == b'}')?;
                let name = &rest[..end];
                let ok = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
                if name.is_empty() || name[0].is_ascii_digit() || !name.iter().all(ok) {
                    return None;
                }
                word.get_or_insert_with(Vec::new)
                    .extend_from_slice(env_value(env, name).unwrap_or_default());
                i += 1 + end + 1;
            }
            (_, c) => word.get_or_insert_with(Vec::new).push(c),
        }
    }
    if quote.is_some() {
        return None;
    }
    words.extend(word);
    Some(words)
}

/// A negated errno as the host's message.
fn os_error(e: i64) -> String {
    std::io::Error::from_raw_os_error(-e as i32).to_string()
}

/// What a file that is not a RISC-V program is, from its first bytes.
fn what_file(head: &[u8]) -> String {
    match elf::machine(head) {
        Some((machine, _)) => format!("an ELF file for {machine}"),
        None => "not an ELF file".into(),
    }
}

/// The host file the program's path `guest` names, under `config`'s root
/// or sysroot ([`host_file`]).
fn guest_file(guest: &[u8], config: &Config) -> PathBuf {
    PathBuf::from(OsString::from_vec(host_file(
        guest,
        config.root.as_deref(),
        config.sysroot.as_deref(),
    )))
}

/// [`read_head`] of the host file `host`.
fn head_of(host: &Path) -> Result<Vec<u8>, i64> {
    let path = CString::new(host.as_os_str().as_bytes()).map_err(|_| -(libc::EINVAL as i64))?;
    read_head(&path)
}

/// The first bytes of the host file `path` (up to a `#!` line's length),
/// after Linux's checks: EACCES unless it is a regular file the caller may
/// execute. Errors are negated errnos.
pub(crate) fn read_head(path: &CString) -> Result<Vec<u8>, i64> {
    let errno = || {
        -(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as i64)
    };
    // SAFETY: a zeroed stat is valid; plain calls with a C string.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::stat(path.as_ptr(), &mut st) } < 0 {
        return Err(errno());
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(-(libc::EACCES as i64));
    }
    if unsafe { libc::access(path.as_ptr(), libc::X_OK) } < 0 {
        return Err(errno());
    }
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(errno());
    }
    let mut head = vec![0u8; BINPRM_BUF];
    // SAFETY: `head` is writable for its length.
    let n = unsafe { libc::read(fd, head.as_mut_ptr() as *mut _, head.len()) };
    unsafe { libc::close(fd) };
    head.truncate(n.max(0) as usize);
    Ok(head)
}

/// The interpreter and its optional argument from the rest of a `#!`
/// line, as Linux splits it: blanks before the interpreter, one argument
/// holding everything after the blanks that follow it, trailing blanks
/// dropped. `None` when there is no interpreter.
pub fn shebang(rest: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let line = rest.split(|&b| b == b'\n').next().unwrap_or(rest);
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let line = trim(line, blank);
    if line.is_empty() {
        return None;
    }
    let end = line.iter().position(blank).unwrap_or(line.len());
    let arg = trim(&line[end..], blank);
    Some((
        line[..end].to_vec(),
        (!arg.is_empty()).then(|| arg.to_vec()),
    ))
}

fn trim(s: &[u8], blank: impl Fn(&u8) -> bool) -> &[u8] {
    let start = s.iter().position(|b| !blank(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !blank(b)).map_or(start, |e| e + 1);
    &s[start..end.max(start)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn shebang_lines_split_as_linux_splits_them() {
        assert_eq!(shebang(b"/bin/sh\n"), Some((b"/bin/sh".to_vec(), None)));
        assert_eq!(
            shebang(b" /usr/bin/env  python3 -u \nprint()"),
            Some((b"/usr/bin/env".to_vec(), Some(b"python3 -u".to_vec())))
        );
        assert_eq!(
            shebang(b"\t/bin/awk\t-f"),
            Some((b"/bin/awk".to_vec(), Some(b"-f".to_vec())))
        );
        assert_eq!(shebang(b"   \n/bin/sh"), None);
        assert_eq!(shebang(b""), None);
    }

    #[test]
    fn env_split_strings_split_as_gnu_env_splits_them() {
        let env = [OsString::from("HOME=/home/u"), OsString::from("E=")];
        let split = |s: &[u8]| {
            split_string(s, &env).map(|w| {
                w.iter()
                    .map(|x| String::from_utf8_lossy(x).into_owned())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            split(b" py  -u\t-B "),
            Some(vec!["py".into(), "-u".into(), "-B".into()])
        );
        // Quotes: single ones keep all but \\ and \', double ones take escapes.
        assert_eq!(
            split(br#"a'b c\n\'' "d\te\_f\$" '' "#),
            Some(vec![r"ab c\n'".into(), "d\te f$".into(), "".into()])
        );
        // ${NAME} from the environment, empty when unset or empty.
        assert_eq!(
            split(b"x${HOME}/y \"${NOPE}${E}z\""),
            Some(vec!["x/home/u/y".into(), "z".into()])
        );
        // \_ separates outside quotes; \c ends the string; # at a word's
        // start is a comment, elsewhere a letter.
        assert_eq!(
            split(b"a\\_b c#d \\c e # f"),
            Some(vec!["a".into(), "b".into(), "c#d".into()])
        );
        assert_eq!(split(b"# all a comment"), Some(vec![]));
        // What env refuses: an open quote, an unknown escape, a bare $,
        // a bad name, \c in double quotes, a backslash at the end.
        for bad in [
            &b"'open"[..],
            b"\\q",
            b"$HOME",
            b"${1A}",
            b"${A",
            b"\"\\c\"",
            b"a\\",
        ] {
            assert_eq!(split(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    /// An ELF header for machine `m`, padded to 64 bytes.
    fn elf_head(m: u16) -> Vec<u8> {
        let mut h = b"\x7fELF\x02\x01\x01".to_vec();
        h.resize(64, 0);
        h[18..20].copy_from_slice(&m.to_le_bytes());
        h
    }

    fn write_exe(p: &Path, bytes: &[u8]) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn config(path: &str, sysroot: Option<&Path>) -> Config {
        Config {
            env: vec![format!("PATH={path}").into(), "HOME=/x".into()],
            sysroot: sysroot.map(Path::to_path_buf),
            ..Config::default()
        }
    }

    fn words(w: &[&str]) -> Vec<OsString> {
        w.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_name_is_found_in_path_under_the_sysroot_first_passing_over_host_programs() {
        let dir = std::env::temp_dir().join(format!("coprof-command-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let host_bin = dir.join("host/bin");
        let sys = dir.join("sys");
        write_exe(&host_bin.join("tool"), &elf_head(62));
        write_exe(&dir.join("host/usr/bin/tool"), &elf_head(elf::EM_RISCV));
        write_exe(
            &sys.join(host_bin.strip_prefix("/").unwrap()).join("only"),
            &elf_head(elf::EM_RISCV),
        );
        let path = format!("{}:{}/host/usr/bin", host_bin.display(), dir.display());

        // The x86-64 `tool` first in PATH is passed over for the RISC-V one.
        let c = find(&words(&["tool", "-v"]), &config(&path, None)).unwrap();
        assert_eq!(c.program, dir.join("host/usr/bin/tool"));
        assert_eq!(c.args, words(&["tool", "-v"]));

        // A directory of PATH is looked up under the sysroot first.
        let c = find(&words(&["only"]), &config(&path, Some(&sys))).unwrap();
        assert_eq!(
            c.program,
            sys.join(host_bin.strip_prefix("/").unwrap()).join("only")
        );

        // Under --root, PATH's directories are the root's only.
        let root = dir.join("root");
        write_exe(&root.join("usr/bin/tool"), &elf_head(elf::EM_RISCV));
        let c = find(
            &words(&["tool"]),
            &Config {
                root: Some(root.clone()),
                ..config("/bin:/usr/bin", None)
            },
        )
        .unwrap();
        assert_eq!(c.program, root.join("usr/bin/tool"));

        // Not found: the error names the name, PATH and what was passed over.
        let e = find(
            &words(&["tool"]),
            &config(&host_bin.display().to_string(), None),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("tool: no RISC-V program"), "{e}");
        assert!(e.contains(&host_bin.display().to_string()), "{e}");
        assert!(e.contains("an ELF file for x86-64"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_script_runs_its_interpreter_with_linux_argv() {
        let dir = std::env::temp_dir().join(format!("coprof-script-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let sys = dir.join("sys");
        write_exe(&sys.join("bin/sh"), &elf_head(elf::EM_RISCV));
        let script = dir.join("s.sh");
        write_exe(&script, b"#!/bin/sh -e\necho hi\n");
        let s = script.display().to_string();
        let c = find(&words(&[&s, "a", "b"]), &config("/bin", Some(&sys))).unwrap();
        assert_eq!(c.program, sys.join("bin/sh"));
        assert_eq!(c.args, words(&["/bin/sh", "-e", &s, "a", "b"]));

        // `#!/usr/bin/env NAME` runs NAME from PATH as env would run it;
        // env with an option runs as written.
        write_exe(&sys.join("usr/bin/env"), &elf_head(elf::EM_RISCV));
        write_exe(&sys.join("opt/bin/py"), &elf_head(elf::EM_RISCV));
        let env_script = dir.join("e.py");
        write_exe(&env_script, b"#!/usr/bin/env py\n");
        let e = env_script.display().to_string();
        let c = find(&words(&[&e, "a"]), &config("/opt/bin", Some(&sys))).unwrap();
        assert_eq!(c.program, sys.join("opt/bin/py"));
        assert_eq!(c.args, words(&["py", &e, "a"]));
        // `env -S`: the split string's words run, as GNU env splits them.
        write_exe(
            &env_script,
            b"#!/usr/bin/env -S py -u 'a b' \"${HOME}/x\"\\_c # z\n",
        );
        let c = find(&words(&[&e, "a"]), &config("/opt/bin", Some(&sys))).unwrap();
        assert_eq!(c.program, sys.join("opt/bin/py"));
        assert_eq!(c.args, words(&["py", "-u", "a b", "/x/x", "c", &e, "a"]));
        // Options or assignments for env itself: env runs as written.
        for line in [
            &b"#!/usr/bin/env -S -i py\n"[..],
            b"#!/usr/bin/env -S A=1 py\n",
            b"#!/usr/bin/env -u A py\n",
        ] {
            write_exe(&env_script, line);
            let c = find(&words(&[&e, "a"]), &config("/opt/bin", Some(&sys))).unwrap();
            assert_eq!(c.program, sys.join("usr/bin/env"));
            assert_eq!(c.args[2..], words(&[&e, "a"]));
        }

        // An interpreter that is not RISC-V is named, with the script.
        let bad = dir.join("x.sh");
        write_exe(&bad, b"#!/xbin/tool\n");
        write_exe(&sys.join("xbin/tool"), &elf_head(62));
        let e = find(
            &words(&[&bad.display().to_string()]),
            &config("/bin", Some(&sys)),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with(&bad.display().to_string()), "{e}");
        assert!(
            e.contains("whose interpreter /xbin/tool") && e.contains("x86-64"),
            "{e}"
        );

        // No name at all.
        let e = find(&words(&[""]), &config("/bin", None)).unwrap_err();
        assert_eq!(e.to_string(), "\"\": an empty program name");

        // A `#!` line naming nothing.
        write_exe(&bad, b"#!   \n");
        let e = find(&words(&[&bad.display().to_string()]), &config("/bin", None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("names no interpreter"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

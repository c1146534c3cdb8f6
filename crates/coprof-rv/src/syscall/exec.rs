//! `execve`: a process nothing observes replacing itself with another
//! program.
//!
//! A RISC-V executable, or a script whose interpreter is one, runs in a
//! new simulator: the host process executes [`Kernel::runner`] (`coprof
//! run` with the options of this run) on it, as a host with binfmt_misc
//! hands such a file to qemu-user. Anything else (a host shell,
//! `/bin/echo`) is the host's to run, as under qemu-user without
//! binfmt_misc. Either way the guest's open descriptors are handed down
//! under their guest numbers: the new program, or the new simulator, which
//! adopts the descriptors it inherits, knows only those.
//!
//! Only a process nothing observes may replace itself (a forked child, or
//! a run with [`crate::Config::exec_in_place`]): the profiled process's
//! events feed reports about its own program.

use super::{Kernel, Outcome, EFAULT};
use crate::command::{read_head, shebang, MAX_REWRITES};
use crate::error::SimError;
use crate::mem::Memory;
use crate::sysno as nr;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStringExt;

/// Most bytes of arguments and environment together (Linux allows a
/// quarter of the stack limit, 2 MiB under the usual 8 MiB).
const ARG_MAX: usize = 2 << 20;
/// `close_range`'s flag that marks the range close-on-exec instead.
const CLOSE_RANGE_CLOEXEC: u32 = 4;

/// Who runs a file given to `execve`.
#[derive(Debug, PartialEq, Eq)]
enum Runs {
    /// A new simulator, on this RISC-V program with this argv.
    Simulator {
        program: CString,
        argv: Vec<Vec<u8>>,
    },
    /// The host kernel.
    Host,
}

impl Kernel {
    /// `execve(pathname, argv, envp)`, made by the guest at `pc`. Returns
    /// only when the host's `execve` fails (its errno) or the file cannot
    /// be run (ENOENT, EACCES, E2BIG, as Linux answers).
    pub(super) fn execve(
        &mut self,
        mem: &Memory,
        a: [u64; 8],
        pc: u64,
    ) -> Result<Outcome, SimError> {
        let refused = |what: &str| SimError::Unsupported {
            what: format!(
                "execve (system call {}){what} in the process coprof watches: it would replace \
                 the program its reports are about (a child the program forks may; \
                 `coprof profile --follow-children` follows the program into a RISC-V one, and \
                 `coprof run` without --trace, --stats and --max-instructions lets the \
                 program replace itself)",
                nr::EXECVE
            ),
            pc,
        };
        // The watched process may go on as another RISC-V program only
        // when that one is followed.
        let follower = match (self.unobserved, &self.exec_follower) {
            (true, _) => None,
            (false, Some(f)) => Some(f.clone()),
            (false, None) => return Err(refused("")),
        };
        let guest_path = match mem.read_cstr(a[0], 4096) {
            Ok(p) => p,
            Err(_) => return Ok(Outcome::Ret(EFAULT)),
        };
        let path = errno!(self.host_path(guest_path.clone()));
        let argv = errno!(read_strings(mem, a[1]));
        let envp = errno!(read_strings(mem, a[2]));
        let bytes: usize = argv.iter().chain(&envp).map(|s| s.len() + 1).sum();
        if bytes > ARG_MAX {
            return Ok(Outcome::Ret(-(libc::E2BIG as i64)));
        }
        let runs = errno!(self.who_runs(&path, &guest_path, &argv, 0));
        if follower.is_some() && runs == Runs::Host {
            return Err(refused(&format!(
                " of the host program {}",
                String::from_utf8_lossy(&guest_path)
            )));
        }
        let runner = match &follower {
            Some(f) => Some(&f.runner),
            None => self.runner.as_ref(),
        };
        // The descriptor to hand to the follower, and where in its command
        // the option naming it goes.
        let mut handed: Option<(i32, String, usize)> = None;
        let (file, argv) = match runs {
            Runs::Host => (path, argv),
            Runs::Simulator { program, argv } => {
                let Some(runner) = runner else {
                    return Err(SimError::Unsupported {
                        what: format!(
                            "execve (system call {}) of the RISC-V program {}: this simulator \
                             has no command to run another in (Config::runner)",
                            nr::EXECVE,
                            program.to_string_lossy()
                        ),
                        pc,
                    });
                };
                let mut cmd: Vec<Vec<u8>> =
                    runner.iter().cloned().map(OsString::into_vec).collect();
                if let Some((fd, option)) = follower.as_ref().and_then(|f| f.pass.as_ref()) {
                    // Its number is known once the descriptors are in place.
                    handed = Some((*fd, option.clone(), cmd.len()));
                    cmd.push(Vec::new());
                }
                // One word, so that a name starting with `-` (a login
                // shell's) stays a value.
                let mut argv0 = b"--argv0=".to_vec();
                argv0.extend(argv.first().cloned().unwrap_or_default());
                cmd.push(argv0);
                cmd.push(b"--".to_vec());
                // A path with a slash, which the runner takes as a file
                // and does not look for in PATH.
                let mut program = program.into_bytes();
                if !program.contains(&b'/') {
                    program.splice(0..0, *b"./");
                }
                cmd.push(program);
                cmd.extend(argv.into_iter().skip(1));
                let file = errno!(CString::new(cmd[0].clone()).map_err(|_| super::EINVAL));
                (file, cmd)
            }
        };
        let above = self.hand_down_fds();
        let mut argv = argv;
        if let Some((fd, option, at)) = handed {
            // Above every guest number, so that it is nobody's, and open
            // across the exec (F_DUPFD leaves FD_CLOEXEC off).
            // SAFETY: plain call on a descriptor the caller keeps open.
            let n = unsafe { libc::fcntl(fd, libc::F_DUPFD, above) };
            if n < 0 {
                return Ok(Outcome::Ret(super::errno()));
            }
            argv[at] = format!("{option}{n}").into_bytes();
        }
        let argv = c_strings(argv);
        let envp = c_strings(envp);
        let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|s| s.as_ptr()).collect();
        argv_ptrs.push(std::ptr::null());
        let mut envp_ptrs: Vec<*const libc::c_char> = envp.iter().map(|s| s.as_ptr()).collect();
        envp_ptrs.push(std::ptr::null());
        // The host ignores SIGPIPE while the guest runs: the new program
        // gets the guest's, as an exec keeps an ignored signal ignored.
        let ignores = self.signals.actions[libc::SIGPIPE as usize][0] == crate::signal::SIG_IGN;
        crate::host_signals::sigpipe_for_exec(ignores);
        // The new program starts with the calling thread's mask, as under
        // Linux: the host thread takes the program's for the call (a new
        // simulator reads it as it starts, `InheritedSignals`).
        // Its pending signals stay pending, made the host thread's.
        let mask = crate::host_signals::mask_for_exec(self.signals.mask);
        let carried = crate::host_signals::pend_for_exec(&self.signals.pending_infos());
        // SAFETY: NUL-terminated strings and null-terminated arrays of them,
        // alive across the call, which returns only on failure.
        unsafe { libc::execve(file.as_ptr(), argv_ptrs.as_ptr(), envp_ptrs.as_ptr()) };
        crate::host_signals::take_back(carried);
        crate::host_signals::unblock(&mask);
        crate::host_signals::ignore_sigpipe();
        Ok(Outcome::Ret(super::errno()))
    }

    /// Who runs the host file `path` (the guest's `guest_path`) with
    /// `argv`: a RISC-V ELF file, or a `#!` script whose interpreter is
    /// one (Linux's binfmt_script: argv becomes the interpreter as written,
    /// its one optional argument, the script's path, then `argv[1..]`),
    /// runs in a simulator, and so does a script whose interpreter is such
    /// a script, [`MAX_REWRITES`] deep; anything else on the host. `depth`
    /// is the number of interpreters looked through to reach `path`.
    /// Errors are Linux's: EACCES for a file that is not a regular
    /// executable one, ENOEXEC for a `#!` line without an interpreter,
    /// ELOOP for scripts nested too deep.
    fn who_runs(
        &self,
        path: &CString,
        guest_path: &[u8],
        argv: &[Vec<u8>],
        depth: u32,
    ) -> Result<Runs, i64> {
        if depth > MAX_REWRITES {
            return Err(-(libc::ELOOP as i64));
        }
        let head = read_head(path)?;
        if crate::elf::is_riscv(&head) {
            return Ok(Runs::Simulator {
                program: path.clone(),
                argv: argv.to_vec(),
            });
        }
        if !head.starts_with(b"#!") {
            return Ok(Runs::Host);
        }
        let (interp, arg) = shebang(&head[2..]).ok_or(-(libc::ENOEXEC as i64))?;
        let interp_host = self.host_path(interp.clone())?;
        let mut with = vec![interp.clone()];
        with.extend(arg);
        with.push(guest_path.to_vec());
        with.extend(argv.iter().skip(1).cloned());
        self.who_runs(&interp_host, &interp, &with, depth + 1)
    }

    /// Puts every guest descriptor that outlives an exec (no FD_CLOEXEC)
    /// at its guest number on the host, and marks every other host
    /// descriptor close-on-exec (coprof's own among them), so that the new
    /// program sees the guest's table. The table follows the moves, so the
    /// guest goes on with the same files if the exec then fails. Returns
    /// the first number above every guest descriptor's.
    fn hand_down_fds(&mut self) -> i32 {
        let mut open: Vec<(usize, i32, bool)> = Vec::new();
        for g in 0..super::MAX_FDS {
            if let Some(h) = self.fds.host(g as i64) {
                // SAFETY: plain call.
                let flags = unsafe { libc::fcntl(h, libc::F_GETFD) };
                open.push((g, h, flags >= 0 && flags & libc::FD_CLOEXEC == 0));
            }
        }
        let above = open.iter().map(|o| o.0).max().unwrap_or(2) as i32 + 1;
        // First every guest file above every guest number, so that putting
        // one in place cannot close the file of another.
        for &(g, h, _) in &open {
            // SAFETY: plain calls on descriptors the table holds.
            let copy = unsafe { libc::fcntl(h, libc::F_DUPFD_CLOEXEC, above) };
            if copy >= 0 {
                unsafe { libc::close(h) };
                self.fds.insert_at(g, copy);
            }
        }
        let mut kept = Vec::new();
        for &(g, _, survives) in &open {
            let Some(h) = self.fds.host(g as i64) else {
                continue;
            };
            // SAFETY: plain calls; dup2 leaves the new descriptor without
            // FD_CLOEXEC.
            if survives && h != g as i32 && unsafe { libc::dup2(h, g as i32) } == g as i32 {
                unsafe { libc::close(h) };
                self.fds.insert_at(g, g as i32);
            }
            if survives {
                kept.push(g as u32);
            }
        }
        let mut from = 0u32;
        for k in kept.into_iter().chain([u32::MAX]) {
            if k > from {
                // SAFETY: plain call; marks [from, k − 1] close-on-exec.
                unsafe { libc::syscall(libc::SYS_close_range, from, k - 1, CLOSE_RANGE_CLOEXEC) };
            }
            from = k.saturating_add(1);
        }
        above
    }
}

/// The NULL-terminated array of C strings at `addr` (none when `addr` is
/// 0, as Linux allows); EFAULT for a bad pointer, E2BIG past ARG_MAX.
fn read_strings(mem: &Memory, addr: u64) -> Result<Vec<Vec<u8>>, i64> {
    let mut out = Vec::new();
    if addr == 0 {
        return Ok(out);
    }
    let mut total = 0;
    for i in 0.. {
        let p = mem.load::<8>(addr + 8 * i).map_err(|_| EFAULT)?;
        if p == 0 {
            break;
        }
        let s = mem.read_cstr(p, ARG_MAX).map_err(|_| EFAULT)?;
        total += s.len() + 1;
        if total > ARG_MAX {
            return Err(-(libc::E2BIG as i64));
        }
        out.push(s);
    }
    Ok(out)
}

fn c_strings(v: Vec<Vec<u8>>) -> Vec<CString> {
    // Read as C strings, they hold no NUL.
    v.into_iter()
        .map(|s| CString::new(s).unwrap_or_default())
        .collect()
}

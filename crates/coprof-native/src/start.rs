//! Starting the program under ptrace: forked, seized before it execs, and
//! told to go on.

use crate::NativeError;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The ptrace options a process is seized with: its threads, its
/// `exec`s and its exit stops, with forked children too when they are
/// followed; and, for a program coprof started (`kill_with_tracer`),
/// killed if coprof dies. A process attached to is not: it was running
/// before coprof and goes on after it.
pub(crate) fn options(follow_children: bool, kill_with_tracer: bool) -> libc::c_int {
    let mut options =
        libc::PTRACE_O_TRACECLONE | libc::PTRACE_O_TRACEEXEC | libc::PTRACE_O_TRACEEXIT;
    if kill_with_tracer {
        options |= libc::PTRACE_O_EXITKILL;
    }
    if follow_children {
        options |= libc::PTRACE_O_TRACEFORK | libc::PTRACE_O_TRACEVFORK;
    }
    options
}

/// A started program: its pid, and the read end of the pipe a failed
/// `execve` writes its errno to (closed by a successful one).
pub(crate) struct Started {
    pub pid: i32,
    pub exec_error: i32,
}

impl Drop for Started {
    fn drop(&mut self) {
        // SAFETY: the descriptor `start` opened.
        unsafe { libc::close(self.exec_error) };
    }
}

/// Forks, and runs `program` with `args` in the child once this thread
/// has seized it, with SIGPIPE ignored if `ignore_sigpipe`, else at its
/// default ([`Config::ignore_sigpipe`](crate::Config::ignore_sigpipe)). Seized (`PTRACE_SEIZE`) rather than traced from the
/// child (`PTRACE_TRACEME`), so that a stop signal's group-stop can be
/// kept (`PTRACE_LISTEN`) until a SIGCONT, as it would be without coprof.
pub(crate) fn start(
    program: &Path,
    args: &[OsString],
    follow_children: bool,
    ignore_sigpipe: bool,
) -> Result<Started, NativeError> {
    let start_error = |source| NativeError::Start {
        program: program.to_path_buf(),
        source,
    };
    let invalid = || start_error(std::io::Error::from(std::io::ErrorKind::InvalidInput));
    // execve says only EACCES of a directory.
    if program.is_dir() {
        return Err(start_error(std::io::Error::from_raw_os_error(libc::EISDIR)));
    }
    let path = CString::new(program.as_os_str().as_bytes()).map_err(|_| invalid())?;
    let argv: Vec<CString> = args
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(|_| invalid())?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    // The child tells a failed execve through `pipe`, and waits on `go`
    // until it is seized.
    let mut pipe = [0i32; 2];
    let mut go = [0i32; 2];
    // SAFETY: room for two descriptors each.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(start_error(std::io::Error::last_os_error()));
    }
    if unsafe { libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: the ends opened above.
        unsafe {
            libc::close(pipe[0]);
            libc::close(pipe[1]);
        }
        return Err(start_error(e));
    }
    // SAFETY: the child makes only async-signal-safe calls before execv,
    // on values made before the fork.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above; _exit ends the child if the tracer has gone
        // (end of file on `go`) or execv fails.
        unsafe {
            libc::close(pipe[0]);
            libc::close(go[1]);
            let mut byte = 0u8;
            if libc::read(go[0], &mut byte as *mut u8 as *mut _, 1) != 1 {
                libc::_exit(127);
            }
            let sigpipe = match ignore_sigpipe {
                true => libc::SIG_IGN,
                false => libc::SIG_DFL,
            };
            libc::signal(libc::SIGPIPE, sigpipe);
            libc::execv(path.as_ptr(), argv_ptrs.as_ptr());
            let errno = *libc::__errno_location();
            libc::write(pipe[1], &errno as *const i32 as *const _, 4);
            libc::_exit(127);
        }
    }
    let fork_error = std::io::Error::last_os_error();
    // SAFETY: the write end and `go`'s read end are the child's.
    unsafe {
        libc::close(pipe[1]);
        libc::close(go[0]);
    }
    if pid < 0 {
        // SAFETY: the ends opened above.
        unsafe {
            libc::close(go[1]);
            libc::close(pipe[0]);
        }
        return Err(start_error(fork_error));
    }
    // SAFETY: ptrace and a write on the child this function started and
    // the pipe it made; then the pipe's end closed.
    let seized =
        unsafe { libc::ptrace(libc::PTRACE_SEIZE, pid, 0, options(follow_children, true)) } == 0
            && unsafe { libc::write(go[1], b"g".as_ptr() as *const _, 1) } == 1;
    let seize_error = std::io::Error::last_os_error();
    unsafe { libc::close(go[1]) };
    if !seized {
        // SAFETY: the child this function started, reaped.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), libc::__WALL);
            libc::close(pipe[0]);
        }
        return Err(NativeError::Trace {
            program: program.to_path_buf(),
            pid,
            source: seize_error,
        });
    }
    Ok(Started {
        pid,
        exec_error: pipe[0],
    })
}

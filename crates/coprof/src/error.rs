//! Exit codes and error messages.
//!
//! Exit code 2 means the user's input or options were bad (a corrupt trace,
//! a foreign ELF, a nonsense option); 1 means coprof itself failed. Bad
//! input is marked by wrapping the message in [`BadInput`] or by an error
//! type from a reader that says what was malformed and where.

use coprof_core::trace::{TraceError, TraceErrorKind};
use std::fmt;
use std::process::ExitCode;

/// An error caused by the user's input or options.
#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Shorthand for returning a bad-input error.
pub fn bad_input(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadInput(msg.into()))
}

/// Whether an error was caused by the input (exit 2) rather than by coprof.
pub fn is_bad_input(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| c.is::<BadInput>() || c.is::<coprof_core::trace::TraceError>())
}

/// Whether `e` is a write to a pipe whose reader has gone: standard
/// output into `head`, or a trace into a reader that stopped.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(broken)
            || c.downcast_ref::<TraceError>()
                .is_some_and(is_trace_into_broken_pipe)
    })
}

/// Whether the trace error `e` is a write into a pipe whose reader has
/// gone.
fn is_trace_into_broken_pipe(e: &TraceError) -> bool {
    matches!(&e.kind, TraceErrorKind::Io(io) if broken(io))
}

fn broken(io: &std::io::Error) -> bool {
    io.kind() == std::io::ErrorKind::BrokenPipe
}

/// Ends coprof by SIGPIPE with its default action, as the kernel ends a
/// writer into a pipe whose reader has gone: quietly, with the status a
/// shell reads as a broken pipe (141). SIGPIPE is unblocked first, since
/// a parent may have left it blocked, and the status is the same if the
/// signal still does not end the process.
pub fn end_by_sigpipe() -> ! {
    // SAFETY: the default action of SIGPIPE, SIGPIPE unblocked in this
    // thread, then the signal to this thread, which ends the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + libc::SIGPIPE)
}

/// Prints `e` to stderr and returns the exit code it calls for; a write
/// to a pipe whose reader has gone ends coprof by SIGPIPE instead,
/// quietly, as it ends other command-line tools. (While a program runs
/// in the simulator, coprof ignores SIGPIPE, which is the program's: its
/// own writes to a broken pipe fail with EPIPE and end here.)
pub fn report(e: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(e) {
        end_by_sigpipe();
    }
    let mut msg = format!("coprof: error: {e}");
    for cause in e.chain().skip(1) {
        msg.push_str(&format!("\n  caused by: {cause}"));
    }
    eprintln!("{msg}");
    if is_bad_input(e) {
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    }
}

//! Exit codes and error messages.
//!
//! Exit code 2 means the user's input or options were bad (a corrupt trace,
//! a foreign ELF, a nonsense option); 1 means coprof itself failed. Bad
//! input is marked by wrapping the message in [`BadInput`] or by an error
//! type from a reader that says what was malformed and where.

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
    use coprof_core::trace::{TraceError, TraceErrorKind};
    let broken = |io: &std::io::Error| io.kind() == std::io::ErrorKind::BrokenPipe;
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(broken)
            || c.downcast_ref::<TraceError>()
                .is_some_and(|t| matches!(&t.kind, TraceErrorKind::Io(io) if broken(io)))
    })
}

/// Prints `e` to stderr and returns the exit code it calls for; a write
/// to a pipe whose reader has gone ends coprof by SIGPIPE instead,
/// quietly, as it ends other command-line tools. (While a program runs
/// in the simulator, coprof ignores SIGPIPE, which is the program's: its
/// own writes to a broken pipe fail with EPIPE and end here.)
pub fn report(e: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(e) {
        // SAFETY: the default action of SIGPIPE, then the signal to this
        // process, which ends it.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::raise(libc::SIGPIPE);
        }
        return ExitCode::from(128 + libc::SIGPIPE as u8);
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

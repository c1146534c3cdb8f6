//! Errors that stop the simulator before or during a run.
//!
//! A guest that dies of a signal (illegal instruction, memory fault) is not
//! an error of the simulator: that is an [`crate::Exit::Signal`]. These are
//! the cases where the simulator cannot or will not go on.

use crate::elf::ElfError;
use std::io;
use std::path::PathBuf;
use thiserror::Error;

/// Why a program cannot be loaded or run further.
#[derive(Debug, Error)]
pub enum SimError {
    /// The executable could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The path given.
        path: PathBuf,
        /// The host's error.
        source: io::Error,
    },
    /// The executable is not one coprof can run.
    #[error("{}: {source}", path.display())]
    Elf {
        /// The path given.
        path: PathBuf,
        /// What is wrong with it.
        source: ElfError,
    },
    /// The command line names no program that can run
    /// ([`crate::command::find`]).
    #[error("{name}: {why}")]
    Command {
        /// The program as named, or the script found.
        name: String,
        /// Why it cannot run.
        why: String,
    },
    /// Memory for the guest could not be set up.
    #[error("cannot set up the guest process: {0}")]
    Setup(io::Error),
    /// The guest made a system call that coprof does not implement.
    #[error("unknown system call {num} ({name}) at pc {pc:#x}; run with --enosys to have it return ENOSYS instead")]
    UnknownSyscall {
        /// The call number (register a7).
        num: u64,
        /// Its Linux name.
        name: &'static str,
        /// Address of the `ecall`.
        pc: u64,
    },
    /// The guest asked for something the simulator refuses (threads,
    /// `execve`, signal handlers).
    #[error("unsupported at pc {pc:#x}: {what}")]
    Unsupported {
        /// What was asked.
        what: String,
        /// Address of the `ecall`.
        pc: u64,
    },
}

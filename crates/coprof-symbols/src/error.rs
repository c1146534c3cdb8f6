//! Errors of opening a binary for symbolization. Each names the file and
//! says what is wrong with it; lookups themselves never fail (they fall
//! back, see [`crate::Quality`]).

use std::path::PathBuf;

/// Why a file could not be opened for symbolization.
#[derive(Debug, thiserror::Error)]
pub enum SymbolError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The file is not an ELF file at all.
    #[error("{}: not an ELF file ({detail})", path.display())]
    NotElf {
        /// The file.
        path: PathBuf,
        /// What it looks like instead.
        detail: String,
    },
    /// The file starts like an ELF file but its headers or sections are
    /// malformed.
    #[error("{}: corrupt ELF file: {detail}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What was malformed, as the parser said it.
        detail: String,
    },
}

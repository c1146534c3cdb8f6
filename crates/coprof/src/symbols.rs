//! Names for the PCs in reports: function, source line, loop spans and
//! disassembly, from the profiled program's ELF file (coprof-symbols).
//!
//! A live run symbolizes with the program it ran; a trace with `--binary`,
//! or else the program its header names when that file exists. A stripped
//! binary's separate debug file is used when one is found (a note names
//! it). A binary without debug info falls back to symbol names and then
//! to addresses, with a note on standard error.

use coprof_symbols::{Quality, Symbolizer};
use std::fmt;
use std::path::Path;
use std::rc::Rc;

/// A symbolizer for one program, shared by every report of a pass.
#[derive(Clone)]
pub struct Symbols(Rc<Symbolizer>);

impl fmt::Debug for Symbols {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Symbols({})", self.0.path().display())
    }
}

impl Symbols {
    /// Opens `binary`; a failure is a note, not an error: the report is
    /// still right with raw addresses.
    pub fn open(binary: &Path, quiet: bool) -> Option<Symbols> {
        match Symbolizer::open(binary) {
            Ok(s) => {
                if let (Some(note), false) = (s.debug_info().note(), quiet) {
                    eprintln!("coprof: note: {note}");
                }
                if let (Some(file), false) = (&s.debug_info().debug_file, quiet) {
                    eprintln!("coprof: note: debug info from {}", file.display());
                }
                Some(Symbols(Rc::new(s)))
            }
            Err(e) => {
                if !quiet {
                    eprintln!("coprof: note: no symbols ({e}); reports show addresses");
                }
                None
            }
        }
    }

    /// `function (file:line)`, `function+0x1a` or the address.
    pub fn place(&self, pc: u64) -> Option<String> {
        let l = self.0.lookup(pc);
        (l.source != Quality::Address).then(|| l.to_string())
    }

    /// The function a PC lies in (the outermost when inlined).
    pub fn function(&self, pc: u64) -> Option<String> {
        self.0.lookup(pc).outer_function().map(str::to_string)
    }

    /// A code range as source lines (`crc32.c:20-24`), or as offsets in a
    /// function without debug info.
    pub fn span(&self, lo: u64, hi: u64) -> Option<String> {
        let s = self.0.span(lo, hi);
        (s.source != Quality::Address).then(|| s.to_string())
    }

    /// The functions a code range covers: one name, or `first .. last`.
    pub fn functions(&self, lo: u64, hi: u64) -> Option<String> {
        match (self.function(lo), self.function(hi)) {
            (Some(a), Some(b)) if a == b => Some(a),
            (Some(a), Some(b)) => Some(format!("{a} .. {b}")),
            (a, b) => a.or(b),
        }
    }

    /// A code range in words: `function (file.c:20-24)` when it lies in
    /// one function and its lines are few enough to read, else the
    /// functions at its ends.
    pub fn code_range(&self, lo: u64, hi: u64) -> Option<String> {
        let (f, g) = (self.function(lo), self.function(hi));
        if f.is_some() && f == g {
            if let Some(span) = self.span(lo, hi).filter(|s| s.len() <= 48) {
                let f = f.unwrap_or_default();
                return Some(if span.starts_with(&f) {
                    span
                } else {
                    format!("{f} ({span})")
                });
            }
        }
        self.functions(lo, hi)
    }

    /// The instructions in the code range `[lo, hi]`, both instruction
    /// starts (see [`Symbolizer::instructions_in`]).
    pub fn instructions_in(&self, lo: u64, hi: u64) -> Option<u64> {
        self.0.instructions_in(lo, hi)
    }

    /// The instruction at `pc` as assembly text.
    pub fn disassemble(&self, pc: u64) -> Option<String> {
        self.0.disassemble(pc).map(|d| d.text)
    }

    /// The source line of `pc`, trimmed, for annotated listings.
    pub fn source_text(&self, pc: u64) -> Option<String> {
        let l = self.0.lookup(pc);
        let text = self.0.source_line_text(l.file.as_deref()?, l.line?)?;
        Some(text.trim().to_string())
    }
}

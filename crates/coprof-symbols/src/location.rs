//! What a PC symbolizes to: the source position, the chain of functions it
//! was inlined into, and how good the answer is ([`Quality`]), so that a
//! report can say "no debug info" instead of printing a silent guess.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a symbolized answer came from, best first. Reports print
/// [`Quality::note`] beside anything less than [`Quality::Dwarf`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quality {
    /// Function, file and line (and inlined frames) from DWARF debug info.
    Dwarf,
    /// No DWARF covers the PC, but it is Go code: function, file and line
    /// from the Go runtime's own table (`.gopclntab`, which stripped Go
    /// binaries keep), and inlined frames from its inlining trees when
    /// they can be found ([`DebugInfo::go_inlining`]).
    ///
    /// [`DebugInfo::go_inlining`]: crate::symbolizer::DebugInfo::go_inlining
    GoTable,
    /// No debug info covers the PC: the function and offset come from the
    /// ELF symbol table.
    Symbols,
    /// Neither debug info nor a symbol covers the PC: only the address.
    Address,
}

impl Quality {
    /// One sentence for a report when the answer is not from debug info,
    /// `None` when it is.
    pub fn note(self) -> Option<&'static str> {
        match self {
            Quality::Dwarf => None,
            Quality::GoTable => Some(
                "no DWARF for this code: function, file and line from the Go runtime's \
                 table (.gopclntab)",
            ),
            Quality::Symbols => Some(
                "no debug info for this code: function names and offsets from the ELF \
                 symbol table (build with -g for file and line)",
            ),
            Quality::Address => {
                Some("no debug info and no symbol for this code (stripped binary?): raw addresses")
            }
        }
    }

    /// `dwarf`, `go_table`, `symbols` or `address`.
    pub fn name(self) -> &'static str {
        match self {
            Quality::Dwarf => "dwarf",
            Quality::GoTable => "go_table",
            Quality::Symbols => "symbols",
            Quality::Address => "address",
        }
    }
}

/// One source frame: a function and a position in it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// Function name (demangled), if known.
    pub function: Option<String>,
    /// Source file as recorded in the debug info (usually an absolute path).
    pub file: Option<String>,
    /// Line number (1-based), if known.
    pub line: Option<u32>,
    /// Column (1-based), if recorded.
    pub column: Option<u32>,
}

/// The symbolized form of one PC.
///
/// `function`, `file` and `line` are the innermost source position: for an
/// instruction of a function inlined into another, the inlined function
/// and its own line, as `addr2line -i` prints first. `inlined` then lists
/// the functions it was inlined into, innermost first, each with the line
/// of the call site; the last one is the function the code physically
/// lives in ([`Location::outer_function`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// The PC looked up.
    pub pc: u64,
    /// Function name (demangled), if known.
    pub function: Option<String>,
    /// Offset of `pc` from the start of the ELF symbol containing it, when
    /// the function came from the symbol table ([`Quality::Symbols`]).
    pub offset: Option<u64>,
    /// Source file, if known.
    pub file: Option<String>,
    /// Source line, if known.
    pub line: Option<u32>,
    /// Source column, if recorded.
    pub column: Option<u32>,
    /// The callers this code was inlined into, innermost first, each with
    /// the file and line of its call site.
    pub inlined: Vec<Frame>,
    /// Where this answer came from.
    pub source: Quality,
}

impl Location {
    /// A location that is just the address.
    pub fn address(pc: u64) -> Location {
        Location {
            pc,
            function: None,
            offset: None,
            file: None,
            line: None,
            column: None,
            inlined: Vec::new(),
            source: Quality::Address,
        }
    }

    /// The function the code physically belongs to: the outermost frame of
    /// the inlining chain, or `function` when nothing was inlined.
    pub fn outer_function(&self) -> Option<&str> {
        match self.inlined.last() {
            Some(f) => f.function.as_deref(),
            None => self.function.as_deref(),
        }
    }

    /// The innermost position as a [`Frame`].
    pub fn frame(&self) -> Frame {
        Frame {
            function: self.function.clone(),
            file: self.file.clone(),
            line: self.line,
            column: self.column,
        }
    }

    /// A display of the whole inlining chain:
    /// `helper (util.h:5) inlined into main (prog.c:20)`.
    pub fn inlined_chain(&self) -> InlinedChain<'_> {
        InlinedChain(self)
    }
}

/// The last path component of `file`, for compact display.
pub(crate) fn base_name(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}

/// `name (file.c:42)`; the full path with the alternate flag (`{:#}`).
fn write_frame(
    f: &mut fmt::Formatter<'_>,
    function: Option<&str>,
    file: Option<&str>,
    line: Option<u32>,
) -> fmt::Result {
    f.write_str(function.unwrap_or("??"))?;
    if let Some(file) = file {
        let shown = if f.alternate() { file } else { base_name(file) };
        match line {
            Some(l) => write!(f, " ({shown}:{l})")?,
            None => write!(f, " ({shown})")?,
        }
    }
    Ok(())
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_frame(f, self.function.as_deref(), self.file.as_deref(), self.line)
    }
}

/// `crc32_update (crc32.c:42)` from debug info, `memcpy+0x1a` from the
/// symbol table (`memcpy` at its entry, as `addr2line -f` and perf name
/// it), `0x10a3c` otherwise.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            Quality::Dwarf | Quality::GoTable => {
                write_frame(f, self.function.as_deref(), self.file.as_deref(), self.line)
            }
            Quality::Symbols => {
                f.write_str(self.function.as_deref().unwrap_or("??"))?;
                match self.offset.unwrap_or(0) {
                    0 => Ok(()),
                    offset => write!(f, "+{offset:#x}"),
                }
            }
            Quality::Address => write!(f, "{:#x}", self.pc),
        }
    }
}

/// Display of a [`Location`] with every frame it was inlined into.
pub struct InlinedChain<'a>(&'a Location);

impl fmt::Display for InlinedChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.0, f)?;
        for frame in &self.0.inlined {
            f.write_str(" inlined into ")?;
            fmt::Display::fmt(frame, f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Location {
        Location {
            pc: 0x1000,
            function: Some("helper".into()),
            offset: None,
            file: Some("/src/util.h".into()),
            line: Some(5),
            column: None,
            inlined: vec![Frame {
                function: Some("main".into()),
                file: Some("/src/prog.c".into()),
                line: Some(20),
                column: Some(3),
            }],
            source: Quality::Dwarf,
        }
    }

    #[test]
    fn displays_each_quality() {
        let l = loc();
        assert_eq!(l.to_string(), "helper (util.h:5)");
        assert_eq!(format!("{l:#}"), "helper (/src/util.h:5)");
        assert_eq!(
            l.inlined_chain().to_string(),
            "helper (util.h:5) inlined into main (prog.c:20)"
        );
        assert_eq!(l.outer_function(), Some("main"));
        let s = Location {
            function: Some("memcpy".into()),
            offset: Some(0x1a),
            source: Quality::Symbols,
            ..Location::address(0x2000)
        };
        assert_eq!(s.to_string(), "memcpy+0x1a");
        let entry = Location {
            offset: Some(0),
            ..s.clone()
        };
        assert_eq!(
            entry.to_string(),
            "memcpy",
            "a function's entry is its name"
        );
        assert!(s.source.note().is_some());
        assert_eq!(Location::address(0x10a3c).to_string(), "0x10a3c");
        assert_eq!(Quality::Dwarf.note(), None);
    }
}

//! Annotated listings: each instruction of a range beside the source line
//! it came from, the way DCPI's `dcpilist` printed a procedure with its
//! samples (Anderson et al., SOSP 1997, §2; the value-profile reports of
//! Burrows et al., ASPLOS 2000, §5, annotate the same listing with each
//! load's hot values). A report adds its own columns (counts, values) per
//! row; this module only pairs instructions with source.

use crate::disasm::Disassembly;
use crate::location::{base_name, Location};
use serde::Serialize;
use std::fmt;

/// Most instructions one listing decodes, so that a nonsense range (say,
/// the whole address space) costs bounded time and memory.
pub const MAX_LISTING_ROWS: usize = 1 << 16;

/// One instruction of a listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ListingRow {
    /// The instruction: address, bytes, text.
    pub insn: Disassembly,
    /// Where it came from (innermost frame first, as [`Location`] says).
    pub location: Location,
    /// The text of its source line, when the source file is readable here.
    pub source_text: Option<String>,
}

/// The instructions of an address range with their source lines, in
/// address order. Built by [`crate::Symbolizer::listing`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Listing {
    /// The rows, one per decoded instruction.
    pub rows: Vec<ListingRow>,
    /// True when the range held more than [`MAX_LISTING_ROWS`]
    /// instructions, or decoding stopped before its end (bytes outside the
    /// code sections).
    pub truncated: bool,
}

/// A source line as a listing prints it above its instructions:
/// `scale.h:6  return x * 3 + 7;`.
fn write_source_header(f: &mut fmt::Formatter<'_>, row: &ListingRow) -> fmt::Result {
    let l = &row.location;
    match (&l.file, l.line) {
        (Some(file), Some(line)) => {
            write!(f, "{}:{line}", base_name(file))?;
            if let Some(text) = &row.source_text {
                write!(f, "  {}", text.trim())?;
            }
            if let Some(func) = &l.function {
                if l.inlined.is_empty() {
                    write!(f, "  [{func}]")?;
                } else {
                    write!(f, "  [{}]", l.inlined_chain())?;
                }
            }
            writeln!(f)
        }
        _ => writeln!(f, "{l}"),
    }
}

/// Each source line once, followed by the instructions that came from it
/// (a new header whenever the line changes):
///
/// ```text
/// scale.h:6  return x * 3 + 7; /* MARK:scale */  [scale (scale.h:6) inlined into sum_scaled (symtest.c:10)]
///        10674:  1443                  lw a3, 0(a4)
/// ```
impl fmt::Display for Listing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut last: Option<(&Option<String>, Option<u32>, &Option<String>)> = None;
        for row in &self.rows {
            let l = &row.location;
            let key = (&l.file, l.line, &l.function);
            if last != Some(key) {
                write_source_header(f, row)?;
                last = Some(key);
            }
            let bytes: String = row.insn.bytes.iter().map(|b| format!("{b:02x}")).collect();
            writeln!(
                f,
                "    {:>8x}:  {bytes:<20}  {}",
                row.insn.pc, row.insn.text
            )?;
        }
        if self.truncated {
            writeln!(f, "    ... (listing truncated)")?;
        }
        Ok(())
    }
}

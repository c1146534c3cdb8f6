//! A loop body `[lo, hi]` as source lines: the lines of every instruction
//! in the range, one entry per file. The frequent-loop detector
//! (Gordon-Ross & Vahid, CASES 2003, §3) reports a loop as the address of
//! its short backward branch and of its target; a person wants "crc32.c
//! lines 40–44" instead, and code inlined into the loop adds lines of other
//! files (a header's helper), listed after the loop's own file.

use crate::location::{base_name, Quality};
use serde::Serialize;
use std::fmt;

/// The lines of one source file that a range of code comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileLines {
    /// The file as recorded in the debug info.
    pub file: String,
    /// Smallest line.
    pub first: u32,
    /// Largest line.
    pub last: u32,
    /// Every distinct line, ascending.
    pub lines: Vec<u32>,
}

/// The source form of an address range.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceSpan {
    /// First address of the range.
    pub lo: u64,
    /// Last address of the range (inclusive: the loop's branch).
    pub hi: u64,
    /// The innermost function the whole range lies in: for a loop inside
    /// code inlined into another function, the inlined function, whose
    /// lines the range's are; else the function `lo` physically lies in.
    pub function: Option<String>,
    /// Offsets of `lo` and `hi` from the start of that function's symbol,
    /// when there is one.
    pub offsets: Option<(u64, u64)>,
    /// Lines per file: first the file of `function`'s code at `lo`, then
    /// the others (of code inlined into it) in address order. Empty
    /// unless `source` is `Dwarf`.
    pub files: Vec<FileLines>,
    /// Where this answer came from.
    pub source: Quality,
}

impl SourceSpan {
    /// The main file's `(file, first, last)`, the usual one-line answer.
    pub fn primary(&self) -> Option<(&str, u32, u32)> {
        self.files
            .first()
            .map(|f| (f.file.as_str(), f.first, f.last))
    }
}

/// Groups `(file, line)` rows, taken in address order, by file. Line 0
/// (code the compiler attributes to no line) is skipped.
pub fn group_by_file<'a>(rows: impl IntoIterator<Item = (&'a str, u32)>) -> Vec<FileLines> {
    let mut files: Vec<FileLines> = Vec::new();
    for (file, line) in rows {
        if line == 0 {
            continue;
        }
        match files.iter_mut().find(|f| f.file == file) {
            Some(f) => {
                if let Err(i) = f.lines.binary_search(&line) {
                    f.lines.insert(i, line);
                }
            }
            None => files.push(FileLines {
                file: file.to_string(),
                first: line,
                last: line,
                lines: vec![line],
            }),
        }
    }
    for f in &mut files {
        f.first = f.lines[0];
        f.last = *f.lines.last().unwrap_or(&f.first);
    }
    files
}

/// `crc32.c:40-44`, `crc32.c:40-44, util.h:5` (base names; full paths with
/// `{:#}`), `memcpy+0x10..+0x40` from symbols, `0x100..0x140` otherwise.
impl fmt::Display for SourceSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.source, &self.function, self.offsets) {
            (Quality::Dwarf | Quality::GoTable, _, _) if !self.files.is_empty() => {
                for (i, fl) in self.files.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    let name = if f.alternate() {
                        fl.file.as_str()
                    } else {
                        base_name(&fl.file)
                    };
                    if fl.first == fl.last {
                        write!(f, "{name}:{}", fl.first)?;
                    } else {
                        write!(f, "{name}:{}-{}", fl.first, fl.last)?;
                    }
                }
                Ok(())
            }
            (_, Some(func), Some((a, b))) => write!(f, "{func}+{a:#x}..+{b:#x}"),
            _ => write!(f, "{:#x}..{:#x}", self.lo, self.hi),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_lines_per_file_in_address_order() {
        let rows = [
            ("/s/a.c", 12),
            ("/s/a.c", 10),
            ("/s/u.h", 5),
            ("/s/a.c", 0),
            ("/s/a.c", 14),
            ("/s/u.h", 5),
        ];
        let files = group_by_file(rows);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].file, "/s/a.c");
        assert_eq!((files[0].first, files[0].last), (10, 14));
        assert_eq!(files[0].lines, vec![10, 12, 14]);
        assert_eq!(files[1].lines, vec![5]);
        let span = SourceSpan {
            lo: 0x100,
            hi: 0x140,
            function: Some("f".into()),
            offsets: Some((0x10, 0x50)),
            files,
            source: Quality::Dwarf,
        };
        assert_eq!(span.to_string(), "a.c:10-14, u.h:5");
        assert_eq!(span.primary(), Some(("/s/a.c", 10, 14)));
        let sym = SourceSpan {
            files: vec![],
            source: Quality::Symbols,
            ..span.clone()
        };
        assert_eq!(sym.to_string(), "f+0x10..+0x50");
        let raw = SourceSpan {
            function: None,
            offsets: None,
            source: Quality::Address,
            ..sym
        };
        assert_eq!(raw.to_string(), "0x100..0x140");
    }
}

//! Names for the PCs in reports: function, source line, loop spans and
//! disassembly, from the profiled program's ELF file (coprof-symbols).
//!
//! A live run symbolizes with the files whose code it ran: the program,
//! and for a dynamically linked one its loader and libraries, each where
//! it was loaded. A trace does the same with the modules its header
//! lists (the program replaced by `--binary` when given), or else with
//! `--binary` or the program its header names when that file exists. A stripped
//! binary's separate debug file is used when one is found (a note names
//! it). A binary without debug info falls back to symbol names and then
//! to addresses, with a note on standard error.

use coprof_core::trace::Module;
use coprof_symbols::{Quality, Symbolizer};
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// One instruction of an annotated listing ([`Symbols::listing`]).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Listed {
    /// Its address in the run.
    pub pc: u64,
    /// Its assembly text.
    pub text: String,
    /// The function it lies in (the outermost when inlined).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// Its source file (base name) and line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The text of that line, when the source is readable here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Times it ran, when counted exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

/// The symbols of one file whose code the program ran.
struct Loaded {
    /// Its addresses in the run: `[start, end)`.
    start: u64,
    end: u64,
    /// What was added to the file's own addresses.
    bias: u64,
    /// Its file name (`libc.so.6`), for the addresses of code without a
    /// name, and after a library's function names.
    name: String,
    /// Whether it is a library or the dynamic loader, not the program.
    library: bool,
    sym: Symbolizer,
}

/// Symbolizers for a program and the libraries it ran, shared by every
/// report of a pass.
#[derive(Clone)]
pub struct Symbols(Rc<Vec<Loaded>>);

impl fmt::Debug for Symbols {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let paths: Vec<String> = self
            .0
            .iter()
            .map(|m| m.sym.path().display().to_string())
            .collect();
        write!(f, "Symbols({})", paths.join(", "))
    }
}

/// The last component of `path`, or all of it.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

impl Loaded {
    /// `what`, the name of code at the file's address `a`: after it the
    /// library's name; without it the file and the address, when the
    /// address differs from the PC (a library, a position-independent
    /// program).
    fn named(&self, what: Option<String>, a: u64) -> Option<String> {
        match (what, self.library) {
            (Some(w), true) => Some(format!("{w} in {}", self.name)),
            (Some(w), false) => Some(w),
            (None, _) if self.library || self.bias != 0 => Some(format!("{}+{a:#x}", self.name)),
            (None, _) => None,
        }
    }
}

/// Where separate debug files are looked for: under the program's
/// sysroot first (its `usr/lib/debug`, where a distribution's `-dbg`
/// packages unpacked there put them), then the host's `/usr/lib/debug`.
fn debug_dirs(sysroot: Option<&Path>) -> Vec<PathBuf> {
    let host = PathBuf::from(coprof_symbols::debug_file::DEFAULT_DEBUG_DIR);
    let under = sysroot.map(|s| s.join("usr/lib/debug"));
    under.into_iter().chain(std::iter::once(host)).collect()
}

/// Opens `path`; with `notes`, says on standard error what its debug
/// information lacks or where it came from, and why it cannot be read.
fn open_file(path: &Path, debug_dirs: &[PathBuf], notes: bool) -> Option<Symbolizer> {
    match Symbolizer::open_with_debug_dirs(path, debug_dirs) {
        Ok(s) => {
            if let (Some(note), true) = (s.debug_info().note(), notes) {
                eprintln!("coprof: note: {note}");
            }
            if let (Some(file), true) = (&s.debug_info().debug_file, notes) {
                eprintln!("coprof: note: debug info from {}", file.display());
            }
            Some(s)
        }
        Err(e) => {
            if notes {
                eprintln!("coprof: note: no symbols ({e}); reports show addresses");
            }
            None
        }
    }
}

impl Symbols {
    /// Opens `binary`, whose addresses are the PCs' own; a failure is a
    /// note, not an error: the report is still right with raw addresses.
    pub fn open(binary: &Path, quiet: bool) -> Option<Symbols> {
        let sym = open_file(binary, &debug_dirs(None), !quiet)?;
        Some(Symbols(Rc::new(vec![Loaded {
            start: 0,
            end: u64::MAX,
            bias: 0,
            name: file_name(binary),
            library: false,
            sym,
        }])))
    }

    /// Opens the files of `modules`, the program first (with `binary`
    /// instead of its file when given), with separate debug files from
    /// `sysroot` (see [`TraceMeta::sysroot`]) or the host: notes about
    /// the program as [`open`](Self::open) gives them, none about the
    /// libraries, whose PCs fall back to `libc.so.6+0x1234` when they
    /// cannot be named.
    ///
    /// [`TraceMeta::sysroot`]: coprof_core::trace::TraceMeta::sysroot
    pub fn of_modules(
        modules: &[Module],
        binary: Option<&Path>,
        sysroot: Option<&Path>,
        quiet: bool,
    ) -> Option<Symbols> {
        let (main, libraries) = modules.split_first()?;
        let dirs = debug_dirs(sysroot);
        let mut loaded = Vec::with_capacity(modules.len());
        let program = binary.unwrap_or(&main.path);
        if let Some(sym) = open_file(program, &dirs, !quiet) {
            loaded.push(Loaded {
                start: main.start,
                end: main.end,
                bias: main.bias,
                name: file_name(program),
                library: false,
                sym,
            });
        }
        for m in libraries {
            if let Some(sym) = open_file(&m.path, &dirs, false) {
                loaded.push(Loaded {
                    start: m.start,
                    end: m.end,
                    bias: m.bias,
                    name: file_name(&m.path),
                    library: true,
                    sym,
                });
            }
        }
        (!loaded.is_empty()).then(|| Symbols(Rc::new(loaded)))
    }

    /// The file `pc` lies in (the one mapped last, where mappings overlap)
    /// and `pc` as that file's own address.
    fn at(&self, pc: u64) -> Option<(&Loaded, u64)> {
        let m = self.0.iter().rev().find(|m| m.start <= pc && pc < m.end)?;
        Some((m, pc.wrapping_sub(m.bias)))
    }

    /// Both ends of a range in one file, as that file's addresses.
    fn range(&self, lo: u64, hi: u64) -> Option<(&Loaded, u64, u64)> {
        let (m, a) = self.at(lo)?;
        (m.start <= hi && hi < m.end).then(|| (m, a, hi.wrapping_sub(m.bias)))
    }

    /// `function (file:line)`, `function+0x1a`, with ` in libc.so.6` for
    /// a library's PC; where there is no name, the file and the address
    /// in it (`libc.so.6+0x1234`, as `addr2line -e` takes it), but for
    /// the program loaded at its own addresses, whose PC is that already.
    pub fn place(&self, pc: u64) -> Option<String> {
        let (m, a) = self.at(pc)?;
        let l = m.sym.lookup(a);
        m.named((l.source != Quality::Address).then(|| l.to_string()), a)
    }

    /// The function a PC lies in (the outermost when inlined), named as
    /// [`place`](Self::place) names it.
    pub fn function(&self, pc: u64) -> Option<String> {
        let (m, a) = self.at(pc)?;
        let f = m.sym.lookup(a).outer_function().map(str::to_string);
        m.named(f, a)
    }

    /// A code range as source lines (`crc32.c:20-24`), or as offsets in a
    /// function without debug info.
    pub fn span(&self, lo: u64, hi: u64) -> Option<String> {
        let (m, lo, hi) = self.range(lo, hi)?;
        let s = m.sym.span(lo, hi);
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
        let (m, lo, hi) = self.range(lo, hi)?;
        m.sym.instructions_in(lo, hi)
    }

    /// The instruction at `pc` as assembly text.
    pub fn disassemble(&self, pc: u64) -> Option<String> {
        let (m, a) = self.at(pc)?;
        m.sym.disassemble(a).map(|d| d.text)
    }

    /// The instructions of the code range `[lo, hi]` (both instruction
    /// starts, in one file) beside their source lines: an annotated
    /// listing, at the run's addresses. `None` when the range's code
    /// cannot be read.
    pub fn listing(&self, lo: u64, hi: u64) -> Option<Vec<Listed>> {
        let (m, a, b) = self.range(lo, hi)?;
        let listing = m.sym.listing(a, b);
        if listing.rows.is_empty() || listing.truncated {
            return None;
        }
        let rows = listing
            .rows
            .into_iter()
            .map(|row| {
                let l = row.location;
                Listed {
                    pc: row.insn.pc.wrapping_add(m.bias),
                    text: row.insn.text,
                    function: m.named(l.outer_function().map(str::to_string), row.insn.pc),
                    file: l.file.as_deref().map(|f| file_name(Path::new(f))),
                    line: l.line,
                    source: row.source_text.map(|t| t.trim().to_string()),
                    count: None,
                }
            })
            .collect();
        Some(rows)
    }

    /// The source line of `pc`, trimmed, for annotated listings.
    pub fn source_text(&self, pc: u64) -> Option<String> {
        let (m, a) = self.at(pc)?;
        let l = m.sym.lookup(a);
        let text = m.sym.source_line_text(l.file.as_deref()?, l.line?)?;
        Some(text.trim().to_string())
    }
}

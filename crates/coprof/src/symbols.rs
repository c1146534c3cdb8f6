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
//! to addresses, with a note on standard error. Code no file holds (a
//! native program's JIT's) is named by the map the JIT wrote for perf,
//! where it wrote one ([`PerfMap`]), and the kernel's vDSO by this
//! process's copy of the same image ([`crate::vdso`]).

mod opened;

use crate::perf_map::PerfMap;
use crate::symbol_cache::{Answers, FunctionsIn, Row, SpanAnswer, SymbolCache};
use coprof_core::trace::Module;
use coprof_symbols::source::SourceCache;
use coprof_symbols::{Location, Quality, Symbolizer};
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
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

/// Where a file's code was in the run.
#[derive(Clone, Copy)]
struct Mapping {
    /// Its addresses in the run: `[start, end)`.
    start: u64,
    end: u64,
    /// What was added to the file's own addresses.
    bias: u64,
    /// Whether it is a library or the dynamic loader, not the program.
    library: bool,
}

/// The symbols of one file whose code the program ran.
struct Loaded {
    at: Mapping,
    /// Its file name (`libc.so.6`), for the addresses of code without a
    /// name, and after a library's function names.
    name: String,
    /// The file, and where its debug files are looked for.
    path: PathBuf,
    dirs: Vec<PathBuf>,
    /// Its symbolizer: opened at once when no answers were kept for it,
    /// else the first time a report asks something they do not hold.
    /// Shared with the other [`Symbols`] of the same file in this thread
    /// ([`opened`]).
    sym: OnceCell<Option<Rc<Symbolizer>>>,
    /// The answers kept between runs ([`crate::symbol_cache`]); `None`
    /// with `--no-symbol-cache`. Written back when this is dropped.
    cache: Option<RefCell<SymbolCache>>,
    /// Source files' lines, for listings: read afresh, never kept.
    sources: SourceCache,
    /// The file's build ID, read the first time a report asks.
    build_id: OnceCell<Option<String>>,
}

/// Symbolizers for a program and the libraries it ran, shared by every
/// report of a pass.
#[derive(Clone)]
pub struct Symbols {
    files: Rc<Vec<Loaded>>,
    /// The names a JIT gave the code it made, for PCs no file holds.
    jit: Option<Rc<PerfMap>>,
}

impl fmt::Debug for Symbols {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let paths: Vec<String> = self
            .files
            .iter()
            .map(|m| m.path.display().to_string())
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
        match (what, self.at.library) {
            (Some(w), true) => Some(format!("{w} in {}", self.name)),
            (Some(w), false) => Some(w),
            (None, _) if self.at.library || self.at.bias != 0 => {
                Some(format!("{}+{a:#x}", self.name))
            }
            (None, _) => None,
        }
    }

    /// The file's build ID, if it has one.
    fn build_id(&self) -> Option<&str> {
        self.build_id
            .get_or_init(|| coprof_symbols::debug_file::build_id(&self.path))
            .as_deref()
    }

    /// The symbolizer, opened now if it was not.
    fn sym(&self) -> Option<&Symbolizer> {
        self.sym
            .get_or_init(|| open_file(&self.path, &self.dirs).0)
            .as_deref()
    }

    /// The answer to a question (`key` in the map `kept` picks): the one
    /// kept, or the one `work` gives, kept from now on.
    fn answer<K: Eq + Hash, V: Clone>(
        &self,
        kept: fn(&mut Answers) -> &mut HashMap<K, V>,
        key: K,
        work: impl FnOnce(Option<&Symbolizer>) -> V,
    ) -> V {
        let Some(cache) = &self.cache else {
            return work(self.sym());
        };
        if let Some(v) = kept(&mut cache.borrow_mut().answers).get(&key).cloned() {
            return v;
        }
        let v = work(self.sym());
        let mut cache = cache.borrow_mut();
        kept(&mut cache.answers).insert(key, v.clone());
        cache.touch();
        v
    }

    /// The location of the file's address `a`.
    fn lookup(&self, a: u64) -> Location {
        self.answer(
            |k| &mut k.locations,
            a,
            |s| s.map_or_else(|| Location::address(a), |s| s.lookup(a)),
        )
    }

    /// The function symbols `[lo, hi]` overlaps.
    fn functions_in(&self, lo: u64, hi: u64) -> FunctionsIn {
        self.answer(
            |k| &mut k.functions_in,
            (lo, hi),
            |s| FunctionsIn::of(s.map_or(&[][..], |s| s.function_symbols_in(lo, hi))),
        )
    }

    /// The data objects (global and static variables) `[lo, hi]` overlaps.
    fn objects_in(&self, lo: u64, hi: u64) -> FunctionsIn {
        self.answer(
            |k| &mut k.objects_in,
            (lo, hi),
            |s| FunctionsIn::of(s.map_or(&[][..], |s| s.data_symbols_in(lo, hi))),
        )
    }

    /// What a pointer to the file's address `a` points at
    /// ([`Symbolizer::pointee`]).
    fn starting_at(&self, a: u64) -> Option<String> {
        self.answer(|k| &mut k.starting_at, a, |s| s?.pointee(a))
    }

    /// Whether the instruction at the file's address `a` loads a code
    /// address ([`Symbolizer::loads_code_address`]).
    fn loads_code_address(&self, a: u64) -> bool {
        self.answer(
            |k| &mut k.code_loads,
            a,
            |s| s.is_some_and(|s| s.loads_code_address(a)),
        )
    }

    /// The function and offset of the code address `a`
    /// ([`Symbolizer::code_symbol`]).
    fn code_symbol(&self, a: u64) -> Option<String> {
        self.answer(|k| &mut k.code_symbols, a, |s| s?.code_symbol(a))
    }

    /// The function the file's address `a` lies in (the outermost when
    /// inlined), without the file's name.
    fn function(&self, a: u64) -> Option<String> {
        self.lookup(a).outer_function().map(str::to_string)
    }

    /// The source span of `[lo, hi]`: its lines, and the innermost
    /// function it lies in, worked out together.
    fn span_answer(&self, lo: u64, hi: u64) -> SpanAnswer {
        self.answer(
            |k| &mut k.spans,
            (lo, hi),
            |s| {
                let Some(s) = s else {
                    return SpanAnswer::default();
                };
                let span = s.span(lo, hi);
                SpanAnswer {
                    text: (span.source != Quality::Address).then(|| span.to_string()),
                    function: span.function,
                }
            },
        )
    }

    /// The source lines of `[lo, hi]`, when they are more than addresses.
    fn span(&self, lo: u64, hi: u64) -> Option<String> {
        self.span_answer(lo, hi).text
    }

    /// The innermost function `[lo, hi]` lies in, inlined or not
    /// ([`SourceSpan::function`](coprof_symbols::span::SourceSpan)), without the
    /// file's name.
    fn span_function(&self, lo: u64, hi: u64) -> Option<String> {
        self.span_answer(lo, hi).function
    }

    fn instructions_in(&self, lo: u64, hi: u64) -> Option<u64> {
        self.answer(
            |k| &mut k.instructions,
            (lo, hi),
            |s| s?.instructions_in(lo, hi),
        )
    }

    fn disassemble(&self, a: u64) -> Option<String> {
        self.answer(
            |k| &mut k.disassembly,
            a,
            |s| s?.disassemble(a).map(|d| d.text),
        )
    }

    /// The instructions of `[lo, hi]` with their locations, when the whole
    /// range decodes.
    fn listing(&self, lo: u64, hi: u64) -> Option<Vec<Row>> {
        self.answer(
            |k| &mut k.listings,
            (lo, hi),
            |s| {
                let listing = s?.listing_code(lo, hi);
                if listing.rows.is_empty() || listing.truncated {
                    return None;
                }
                let rows = listing.rows.into_iter().map(|row| Row {
                    pc: row.insn.pc,
                    text: row.insn.text,
                    location: row.location,
                });
                Some(rows.collect())
            },
        )
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        if let Some(cache) = &self.cache {
            let mut cache = cache.borrow_mut();
            if let Some(Some(sym)) = self.sym.get() {
                cache.depend_on(&sym.split_files());
            }
            cache.save();
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

/// Opens `path`, or takes it as this thread opened it before
/// ([`opened`]), and what to say about it on standard error: what its
/// debug information lacks or where it came from, or why it cannot be
/// read.
fn open_file(path: &Path, debug_dirs: &[PathBuf]) -> opened::Opened {
    opened::open_kept(
        path,
        debug_dirs,
        || match Symbolizer::open_with_debug_dirs(path, debug_dirs) {
            Ok(s) => {
                let info = s.debug_info();
                let mut notes: Vec<String> = info.note().into_iter().collect();
                if let Some(file) = &info.debug_file {
                    notes.push(format!("debug info from {}", file.display()));
                }
                (Some(Rc::new(s)), notes)
            }
            Err(e) => (
                None,
                vec![format!("no symbols ({e}); reports show addresses")],
            ),
        },
    )
}

/// What [`load`] does with the notes opening a file gives (no debug
/// information, a debug file found elsewhere).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Notes {
    /// Said on standard error and kept ([`crate::notes::say`]).
    Said,
    /// Kept alone ([`crate::notes::keep`]): a followed child's, whose
    /// standard error is its program's.
    Kept,
    /// Neither: a library's, whose PCs fall back to offsets in it, or
    /// those of a program a trace names, opened only if it is there.
    Dropped,
}

/// The symbols of `path`, mapped at `at`: from the answers kept in
/// `cache` when it holds some for the file as it is now, else opened
/// (and its answers kept from now on), with what opening it says given
/// as `notes` tells. `None` when the file is no ELF file.
fn load(
    path: &Path,
    dirs: &[PathBuf],
    at: Mapping,
    notes: Notes,
    cache: Option<&Path>,
) -> Option<Loaded> {
    let mut cache = cache.and_then(|dir| SymbolCache::open(path, dirs, dir));
    let sym = OnceCell::new();
    let (opened, said) = match &mut cache {
        Some(c) if c.hit() => (c.answers.opened, c.answers.notes.clone()),
        _ => {
            let (s, said) = open_file(path, dirs);
            let opened = s.is_some();
            let _ = sym.set(s);
            if let Some(c) = &mut cache {
                c.answers.opened = opened;
                c.answers.notes = said.clone();
                c.touch();
            }
            (opened, said)
        }
    };
    match notes {
        Notes::Said => said.iter().cloned().for_each(crate::notes::say),
        Notes::Kept => said.iter().cloned().for_each(crate::notes::keep),
        Notes::Dropped => {}
    }
    let loaded = Loaded {
        at,
        name: file_name(path),
        path: path.to_path_buf(),
        dirs: dirs.to_vec(),
        sym,
        cache: cache.map(RefCell::new),
        sources: SourceCache::default(),
        build_id: OnceCell::new(),
    };
    // Dropped, a file that did not open keeps that answer too.
    opened.then_some(loaded)
}

impl Symbols {
    /// Opens `binary`, whose addresses are the PCs' own; a failure is a
    /// note, not an error: the report is still right with raw addresses.
    /// `cache` is the directory of kept answers, if any
    /// ([`crate::symbol_cache`]).
    pub fn open(binary: &Path, quiet: bool, cache: Option<&Path>) -> Option<Symbols> {
        let at = Mapping {
            start: 0,
            end: u64::MAX,
            bias: 0,
            library: false,
        };
        let notes = if quiet { Notes::Dropped } else { Notes::Said };
        let loaded = load(binary, &debug_dirs(None), at, notes, cache)?;
        Some(Symbols::of_files(vec![loaded]))
    }

    /// Opens the files of `modules`, the program first (with `binary`
    /// instead of its file when given), with separate debug files from
    /// `sysroot` (see [`TraceMeta::sysroot`]) or the host: notes about
    /// the program as [`open`](Self::open) gives them, or kept without
    /// being printed when `quiet` (a followed child's, which its profile
    /// holds), and none about the libraries, whose PCs fall back to
    /// `libc.so.6+0x1234` when they cannot be named.
    ///
    /// [`TraceMeta::sysroot`]: coprof_core::trace::TraceMeta::sysroot
    pub fn of_modules(
        modules: &[Module],
        binary: Option<&Path>,
        sysroot: Option<&Path>,
        quiet: bool,
        cache: Option<&Path>,
    ) -> Option<Symbols> {
        let (main, libraries) = modules.split_first()?;
        let dirs = debug_dirs(sysroot);
        let program = binary.unwrap_or(&main.path);
        let notes = if quiet { Notes::Kept } else { Notes::Said };
        let at = |m: &Module, library| Mapping {
            start: m.start,
            end: m.end,
            bias: m.bias,
            library,
        };
        let loaded: Vec<Loaded> =
            std::iter::once(load(program, &dirs, at(main, false), notes, cache))
                .chain(
                    libraries
                        .iter()
                        .map(|m| load(&m.path, &dirs, at(m, true), Notes::Dropped, cache)),
                )
                .flatten()
                .collect();
        (!loaded.is_empty()).then(|| Symbols::of_files(loaded))
    }

    fn of_files(files: Vec<Loaded>) -> Symbols {
        Symbols {
            files: Rc::new(files),
            jit: None,
        }
    }

    /// These symbols, and for code no file holds the names `map` gives,
    /// where there is a map (a JIT's, [`PerfMap`]).
    pub fn with_perf_map(self, map: Option<PerfMap>) -> Symbols {
        Symbols {
            jit: map.map(Rc::new),
            ..self
        }
    }

    /// These symbols, and the kernel's vDSO's where the program had it,
    /// `[start, end)`, named by `vdso`, this process's copy of the same
    /// image (see [`crate::vdso`]). Symbols shared already are left as
    /// they are.
    pub fn with_vdso(self, start: u64, end: u64, vdso: &crate::vdso::Vdso) -> Symbols {
        let Symbols { files, jit } = self;
        let mut files = match Rc::try_unwrap(files) {
            Ok(files) => files,
            Err(shared) => return Symbols { files: shared, jit },
        };
        if let Ok(sym) = Symbolizer::from_bytes(Path::new(crate::vdso::NAME), &vdso.image) {
            files.push(Loaded {
                at: Mapping {
                    start,
                    end,
                    // The image is linked at 0.
                    bias: start,
                    library: true,
                },
                name: crate::vdso::NAME.into(),
                path: crate::vdso::NAME.into(),
                dirs: Vec::new(),
                sym: OnceCell::from(Some(Rc::new(sym))),
                cache: None,
                sources: SourceCache::default(),
                build_id: OnceCell::from(Some(vdso.build_id.clone())),
            });
        }
        Symbols {
            files: Rc::new(files),
            jit,
        }
    }

    /// The JIT's perf map, for a PC no file holds.
    fn jit(&self) -> Option<&PerfMap> {
        self.jit.as_deref()
    }

    /// The file `pc` lies in (the one mapped last, where mappings overlap)
    /// and `pc` as that file's own address.
    fn at(&self, pc: u64) -> Option<(&Loaded, u64)> {
        let m = self
            .files
            .iter()
            .rev()
            .find(|m| m.at.start <= pc && pc < m.at.end)?;
        Some((m, pc.wrapping_sub(m.at.bias)))
    }

    /// Both ends of a range in one file, as that file's addresses.
    fn range(&self, lo: u64, hi: u64) -> Option<(&Loaded, u64, u64)> {
        let (m, a) = self.at(lo)?;
        (m.at.start <= hi && hi < m.at.end).then(|| (m, a, hi.wrapping_sub(m.at.bias)))
    }

    /// The one file a range overlaps, if only one, and the part of the
    /// range in it as that file's addresses.
    fn only_file_in(&self, lo: u64, hi: u64) -> Option<(&Loaded, u64, u64)> {
        let mut files = self
            .files
            .iter()
            .filter(|m| m.at.start <= hi && lo < m.at.end);
        let m = files.next()?;
        if files.next().is_some() {
            return None;
        }
        let (a, b) = (lo.max(m.at.start), hi.min(m.at.end - 1));
        Some((m, a.wrapping_sub(m.at.bias), b.wrapping_sub(m.at.bias)))
    }

    /// `function (file:line)`, `function+0x1a`, with ` in libc.so.6` for
    /// a library's PC; where there is no name, the file and the address
    /// in it (`libc.so.6+0x1234`, as `addr2line -e` takes it), but for
    /// the program loaded at its own addresses, whose PC is that already.
    pub fn place(&self, pc: u64) -> Option<String> {
        let Some((m, a)) = self.at(pc) else {
            return self.jit()?.place(pc);
        };
        let l = m.lookup(a);
        m.named((l.source != Quality::Address).then(|| l.to_string()), a)
    }

    /// Where `pc` is, for a profile other tools read: the file it lies in
    /// with where that was mapped in the run, and its location in the
    /// file (function, source line, and the frames it was inlined into).
    pub fn located(&self, pc: u64) -> Option<(coprof_report::Object, Location)> {
        let Some((m, a)) = self.at(pc) else {
            return self.jit()?.located(pc);
        };
        let object = coprof_report::Object {
            path: m.path.display().to_string(),
            start: m.at.start,
            end: m.at.end,
            build_id: m.build_id().map(str::to_string),
        };
        Some((object, m.lookup(a)))
    }

    /// What a value that is a pointer points at: the function or data
    /// object that starts there (`memset in libc.so.6`), or the C++
    /// virtual table it lies in (`vtable for Circle+0x10`), named as
    /// [`place`](Self::place) names code; `None` for any other value.
    pub fn pointee(&self, value: u64) -> Option<String> {
        let Some((m, a)) = self.at(value) else {
            return self.jit()?.pointee(value);
        };
        m.named(Some(m.starting_at(a)?), a)
    }

    /// What the value `value` that the load at `pc` read points at: for a
    /// load of a return address (`ret`, `ld ra, …`), the place in the code
    /// it returns to (`mainQSort3+0x52`), as gdb names a code address;
    /// else [`pointee`](Self::pointee).
    pub fn loaded_pointee(&self, pc: u64, value: u64) -> Option<String> {
        if self.at(pc).is_some_and(|(m, a)| m.loads_code_address(a)) {
            let Some((m, a)) = self.at(value) else {
                return self.jit()?.place(value);
            };
            return m.named(Some(m.code_symbol(a)?), a);
        }
        self.pointee(value)
    }

    /// The function a PC lies in (the outermost when inlined), named as
    /// [`place`](Self::place) names it.
    pub fn function(&self, pc: u64) -> Option<String> {
        let Some((m, a)) = self.at(pc) else {
            return self.jit()?.function_name(pc);
        };
        m.named(m.function(a), a)
    }

    /// A code range as source lines (`crc32.c:20-24`), or as offsets in a
    /// function without debug info.
    pub fn span(&self, lo: u64, hi: u64) -> Option<String> {
        let (m, lo, hi) = self.range(lo, hi)?;
        m.span(lo, hi)
    }

    /// The innermost function a code range lies in, named as
    /// [`place`](Self::place) names a PC's: for a loop inside code inlined
    /// into another function, the inlined function, whose lines the
    /// range's are.
    pub fn range_function(&self, lo: u64, hi: u64) -> Option<String> {
        let Some((m, a, b)) = self.range(lo, hi) else {
            // No file holds it: a JIT's function, if it lies in one.
            let jit = self.jit().filter(|_| self.at(lo).is_none())?;
            let (_, end, _) = jit.function(lo)?;
            return jit.function_name(lo).filter(|_| hi < end);
        };
        m.named(m.span_function(a, b).or_else(|| m.function(b)), b)
    }

    /// The functions a code range covers: the one it lies in, or `first ..
    /// last (N functions)`. Each end is the function its address lies in,
    /// or, where no function's code is there (a range's bounds are powers
    /// of two, not functions'), the first or last function symbol inside
    /// the range; N counts the function symbols the range overlaps, so
    /// that a range across much of a program does not read as one
    /// function, nor one with code of no symbol as the one it holds
    /// (`PyDict_New (1 function)`). A range that reaches past the one
    /// file it overlaps is taken as the part in that file. A range of a
    /// library or a position-independent program with no function symbol
    /// in it is that file's offsets (`ls+0x4000 .. ls+0x7fff`). One
    /// across files is what is at its ends with the count of files
    /// (`memcpy in libc.so.6 .. libm.so.6+0x1000 (3 files)`) when both
    /// ends lie in a file, else the files (`libc.so.6 .. libm.so.6 (3
    /// files)`).
    pub fn functions(&self, lo: u64, hi: u64) -> Option<String> {
        let Some((m, a, b)) = self.only_file_in(lo, hi) else {
            // Across files: what is at both ends, with the count of files,
            // when both ends lie in a file; else the files alone (what is
            // at one end would read as the whole range).
            let Some((first, last, count)) = self.files_in(lo, hi) else {
                // No file's code there: a JIT's, if it named it.
                return self.jit()?.functions(lo, hi);
            };
            return Some(match (self.function(lo), self.function(hi)) {
                (Some(x), Some(y)) => format!("{x} .. {y} ({count} files)"),
                _ => format!("{first} .. {last} ({count} files)"),
            });
        };
        let (at_lo, at_hi) = (m.function(a), m.function(b));
        if at_lo.is_some() && at_lo == at_hi {
            return m.named(at_lo, a);
        }
        let inside = m.functions_in(a, b);
        let what = match (at_lo.or(inside.first), at_hi.or(inside.last)) {
            (Some(x), Some(y)) if x == y => format!("{x} (1 function)"),
            (Some(x), Some(y)) => format!("{x} .. {y} ({} functions)", inside.count.max(2)),
            (Some(x), None) | (None, Some(x)) => x,
            // No function symbol there (a stripped program's code): the
            // file and its offsets, as a PC of no name is shown; a range
            // of one address, as that PC.
            (None, None) if a == b => return m.named(None, a),
            (None, None) => return Some(format!("{} .. {}", m.named(None, a)?, m.named(None, b)?)),
        };
        m.named(Some(what), a)
    }

    /// The files whose code a range overlaps, when they are more than
    /// one: the first's name, the last's, in the order of their
    /// addresses, and how many.
    fn files_in(&self, lo: u64, hi: u64) -> Option<(&str, &str, usize)> {
        let mut files: Vec<&Loaded> = (self.files.iter())
            .filter(|m| m.at.start <= hi && lo < m.at.end)
            .collect();
        files.sort_by_key(|m| m.at.start);
        match files.as_slice() {
            [first, .., last] => Some((&first.name, &last.name, files.len())),
            _ => None,
        }
    }

    /// The data a range of addresses covers, from the symbol table's data
    /// objects (global and static variables), as `perf mem` names a
    /// sample's data symbol: `table`, or `first .. last (N objects)`,
    /// with ` in libc.so.6` for a library's. `None` where no object lies
    /// (the heap, the stack, a mapping of no file).
    pub fn data_range(&self, lo: u64, hi: u64) -> Option<String> {
        let (m, a, b) = self.only_file_in(lo, hi)?;
        let inside = m.objects_in(a, b);
        let what = match (inside.first, inside.last) {
            (Some(x), Some(y)) if inside.count == 1 || x == y => x,
            (Some(x), Some(y)) => format!("{x} .. {y} ({} objects)", inside.count),
            _ => return None,
        };
        m.named(Some(what), a)
    }

    /// A code range in words: `function (file.c:20-24)` when it lies in
    /// one function and its lines are few enough to read, else the
    /// functions at its ends.
    pub fn code_range(&self, lo: u64, hi: u64) -> Option<String> {
        let (f, g) = (self.function(lo), self.function(hi));
        if f.is_some() && f == g {
            if let Some(span) = self.span(lo, hi).filter(|s| s.len() <= 48) {
                let f = self.range_function(lo, hi).or(f).unwrap_or_default();
                return Some(function_and_span(&f, &span));
            }
        }
        self.functions(lo, hi)
    }

    /// The instructions in the code range `[lo, hi]`, both instruction
    /// starts (see [`Symbolizer::instructions_in`]).
    pub fn instructions_in(&self, lo: u64, hi: u64) -> Option<u64> {
        let (m, lo, hi) = self.range(lo, hi)?;
        m.instructions_in(lo, hi)
    }

    /// The instruction at `pc` as assembly text.
    pub fn disassemble(&self, pc: u64) -> Option<String> {
        let (m, a) = self.at(pc)?;
        m.disassemble(a)
    }

    /// The instructions of the code range `[lo, hi]` (both instruction
    /// starts, in one file) beside their source lines: an annotated
    /// listing, at the run's addresses. `None` when the range's code
    /// cannot be read.
    pub fn listing(&self, lo: u64, hi: u64) -> Option<Vec<Listed>> {
        let (m, a, b) = self.range(lo, hi)?;
        let rows = m
            .listing(a, b)?
            .into_iter()
            .map(|row| {
                let l = row.location;
                let source = match (&l.file, l.line) {
                    (Some(file), Some(line)) => m.sources.line(file, line),
                    _ => None,
                };
                Listed {
                    pc: row.pc.wrapping_add(m.at.bias),
                    text: row.text,
                    function: m.named(l.outer_function().map(str::to_string), row.pc),
                    file: l.file.as_deref().map(|f| file_name(Path::new(f))),
                    line: l.line,
                    source: source.map(|t| t.trim().to_string()),
                    count: None,
                }
            })
            .collect();
        Some(rows)
    }

    /// The source line of `pc`, trimmed, for annotated listings.
    pub fn source_text(&self, pc: u64) -> Option<String> {
        let (m, a) = self.at(pc)?;
        let l = m.lookup(a);
        let text = m.sources.line(l.file.as_deref()?, l.line?)?;
        Some(text.trim().to_string())
    }
}

/// A code range named by its function and its span: `dijkstra
/// (dijkstra.c:22-23)`; a span from the symbol table, which is the
/// function's offsets already (`memset+0x3e..+0x52`), alone.
pub fn function_and_span(function: &str, span: &str) -> String {
    if span
        .strip_prefix(function)
        .is_some_and(|rest| rest.starts_with('+'))
    {
        span.to_string()
    } else {
        format!("{function} ({span})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two of the host's programs, `true` at 0x10000 and `false` at
    /// 0x40000, as the program and a library of one run.
    fn two_files() -> Symbols {
        let module = |path: &str, start: u64| Module {
            start,
            end: start + 0x10000,
            bias: start,
            path: PathBuf::from(path),
        };
        let modules = [
            module("/usr/bin/true", 0x10000),
            module("/usr/bin/false", 0x40000),
        ];
        Symbols::of_modules(&modules, None, None, true, None).unwrap()
    }

    #[test]
    fn a_range_across_files_is_named_by_its_ends_or_else_its_files() {
        let s = two_files();
        // Both ends in the gaps around the files: the files.
        assert_eq!(
            s.functions(0x8000, 0x60000).as_deref(),
            Some("true .. false (2 files)")
        );
        // One file only, with gaps around it: not a list of one.
        assert_eq!(s.files_in(0x8000, 0x30000), None);
        // One end in a file, the other in a gap: the files, not what is
        // at the one end, which would read as the whole range.
        assert_eq!(
            s.functions(0x8000, 0x40123).as_deref(),
            Some("true .. false (2 files)")
        );
        // Both ends in files: what is at each, and the count of files.
        let both = s.functions(0x10010, 0x40123).unwrap();
        assert!(both.starts_with("true+0x10 .. false"), "{both}");
        assert!(both.ends_with(" (2 files)"), "{both}");
    }

    #[test]
    fn code_no_file_holds_is_named_by_a_jits_perf_map() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("perf-77.map");
        // `inside` overlaps `true`'s file, whose names come first.
        std::fs::write(&path, "20000 40 jitted\n20040 40 next\n10100 10 inside\n").unwrap();
        let s = two_files().with_perf_map(PerfMap::read(&path));
        assert_eq!(
            s.place(0x20008).as_deref(),
            Some("jitted+0x8 in perf-77.map")
        );
        assert_eq!(
            s.function(0x20008).as_deref(),
            Some("jitted in perf-77.map")
        );
        assert_eq!(s.pointee(0x20040).as_deref(), Some("next in perf-77.map"));
        assert_eq!(s.place(0x10104), two_files().place(0x10104));
        assert_eq!(
            s.range_function(0x20000, 0x2003f).as_deref(),
            Some("jitted in perf-77.map")
        );
        assert_eq!(s.range_function(0x20000, 0x20040), None, "two functions");
        assert_eq!(
            s.code_range(0x20010, 0x20050).as_deref(),
            Some("jitted .. next (2 functions) in perf-77.map")
        );
        let (object, _) = s.located(0x20044).unwrap();
        assert_eq!((object.start, object.end), (0x20040, 0x20080));
        // Across files, the files still name the range.
        assert_eq!(
            s.functions(0x8000, 0x60000).as_deref(),
            Some("true .. false (2 files)")
        );
        // Without a map, no name.
        assert_eq!(two_files().place(0x20008), None);
    }

    #[test]
    fn a_span_is_named_by_its_function_unless_it_holds_it() {
        assert_eq!(
            function_and_span("dijkstra", "dijkstra.c:22-23"),
            "dijkstra (dijkstra.c:22-23)"
        );
        assert_eq!(
            function_and_span("memset", "memset+0x3e..+0x52"),
            "memset+0x3e..+0x52"
        );
    }

    #[test]
    fn a_range_of_one_address_of_no_function_is_named_as_its_pc() {
        let s = two_files();
        // The first bytes of `true`'s file, its ELF header: no function.
        let one = s.functions(0x10010, 0x10010).unwrap();
        assert_eq!(Some(&one), s.place(0x10010).as_ref());
        assert_eq!(one, "true+0x10");
        assert_eq!(
            s.functions(0x10010, 0x10020).as_deref(),
            Some("true+0x10 .. true+0x20")
        );
    }
}

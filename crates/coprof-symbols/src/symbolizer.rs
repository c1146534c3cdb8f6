//! [`Symbolizer`]: one opened ELF file answering PC look-ups, with a cache
//! per PC. Opening reads the file once, keeps only the debug sections, the
//! symbol table and the code, and fails only when the file is not a usable
//! ELF; every later look-up falls back instead of failing (DWARF, then the
//! symbol table, then the raw address) and says which it used.

use crate::arch::Arch;
use crate::debug_file;
use crate::demangle::demangle_or_keep;
use crate::disasm::{self, Code, Disassembly};
use crate::dwarf::{self, Dwarf};
use crate::error::SymbolError;
use crate::gopclntab::GoTable;
use crate::listing::{Listing, ListingRow, MAX_LISTING_ROWS};
use crate::location::{Frame, Location, Quality};
use crate::names::FunctionNames;
use crate::riscv_addresses::{self, RiscvAddresses};
use crate::source::SourceCache;
use crate::span::{group_by_file, SourceSpan};
use crate::symtab::{FunctionSymbol, SymbolTable};
use object::Object;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// The name given to a signal's return trampoline that no symbol names
/// (see [`Symbolizer::lookup`]): glibc's and musl's own.
pub const SIGNAL_RETURN: &str = "__restore_rt";

/// What a binary offers for symbolization, and the note a report prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DebugInfo {
    /// It has readable DWARF line and function information.
    pub dwarf: bool,
    /// Why its DWARF could not be used, when it has some but it is
    /// malformed (look-ups then fall back to symbols).
    pub dwarf_error: Option<String>,
    /// Number of function symbols in its symbol table.
    pub function_symbols: usize,
    /// Number of functions in its Go runtime table (`.gopclntab`), 0 when
    /// it has none.
    pub go_functions: usize,
    /// Whether its Go code gets inlined frames: the runtime's inlining
    /// trees were found ([`crate::gopclntab`]).
    pub go_inlining: bool,
    /// The separate debug file its DWARF and symbols came from, when the
    /// binary itself has none ([`crate::debug_file`]).
    pub debug_file: Option<PathBuf>,
    /// The supplementary DWARF file (`dwz -m`) its DWARF's
    /// `.gnu_debugaltlink` led to ([`crate::debug_file::find_supplementary`]).
    pub supplementary_file: Option<PathBuf>,
    /// The supplementary file its link names, when it was not found: the
    /// names of the functions moved there are then missing.
    pub missing_supplementary_file: Option<PathBuf>,
    /// Units whose functions are in split DWARF files (`-gsplit-dwarf`),
    /// and the files of those that were not found
    /// ([`crate::split_dwarf`]).
    pub split_units: usize,
    /// See `split_units`.
    pub missing_split_files: Vec<PathBuf>,
}

impl DebugInfo {
    /// The best answer any PC of this binary's own code can get. The
    /// stubs of its procedure linkage table, named from its relocations
    /// (`memset@plt`, [`crate::plt`]), are not its own code: a stripped
    /// program with them is still a program without symbols.
    pub fn best(&self) -> Quality {
        if self.dwarf {
            Quality::Dwarf
        } else if self.go_functions > 0 {
            Quality::GoTable
        } else if self.function_symbols > 0 {
            Quality::Symbols
        } else {
            Quality::Address
        }
    }

    /// One sentence for a report when the binary lacks debug info, or
    /// some of its split DWARF files.
    pub fn note(&self) -> Option<String> {
        let split = crate::split_dwarf::missing_note(self.split_units, &self.missing_split_files);
        let sup = self.missing_supplementary_file.as_ref().map(|f| {
            format!(
                "supplementary DWARF file {} (.gnu_debugaltlink) not found: the names of \
                 the functions moved there are missing",
                f.display()
            )
        });
        let Some(base) = self.best().note() else {
            let notes: Vec<String> = sup.into_iter().chain(split).collect();
            return (!notes.is_empty()).then(|| notes.join("; "));
        };
        let mut base = base.to_string();
        if self.best() == Quality::GoTable {
            base.push_str(match self.go_inlining {
                true => ", with inlined frames from its inlining trees",
                false => ", without inlined frames (the runtime's module data was not found)",
            });
        }
        Some(match &self.dwarf_error {
            Some(e) => format!("{base}; its DWARF is unreadable: {e}"),
            None => base.to_string(),
        })
    }
}

/// The supplementary DWARF file of the file whose DWARF is read (a
/// binary, or its separate debug file): where it was found, or what its
/// link named when it was not.
#[derive(Default)]
struct Supplement {
    found: Option<PathBuf>,
    missing: Option<PathBuf>,
}

impl Supplement {
    /// [`dwarf::load`] of `file` (read from `holder`; `binary` is the
    /// program's file), with its supplementary file when its link leads
    /// to one.
    fn load(
        &mut self,
        file: &object::File<'_>,
        holder: &Path,
        binary: &Path,
        debug_dirs: &[PathBuf],
    ) -> Result<Option<Dwarf>, String> {
        if !dwarf::has_info(file) {
            return Ok(None);
        }
        let found = match debug_file::find_supplementary(holder, file, debug_dirs) {
            None => return dwarf::load(file, None, binary),
            Some(debug_file::Supplementary::Missing(named)) => {
                self.missing = Some(named);
                return dwarf::load(file, None, binary);
            }
            Some(debug_file::Supplementary::Found(f)) => f,
        };
        let sup = object::File::parse(&*found.data)
            .map_err(|e| format!("{}: {e}", found.path.display()))?;
        self.found = Some(found.path.clone());
        dwarf::load(file, Some(&sup), binary)
    }
}

/// The address of RISC-V's `__global_pointer$` in `file`'s symbol table,
/// where the C library's start-up points `gp`.
fn global_pointer_of(file: &object::File<'_>) -> Option<u64> {
    use object::{Object, ObjectSymbol};
    if file.architecture() != object::Architecture::Riscv64 {
        return None;
    }
    file.symbols()
        .find(|s| s.name() == Ok("__global_pointer$"))
        .map(|s| s.address())
}

/// An ELF file opened for symbolization.
///
/// `Send` but not `Sync`: look-ups fill caches through `&self`. Open one
/// per thread when symbolizing in parallel.
pub struct Symbolizer {
    path: PathBuf,
    arch: Arch,
    dwarf: Option<Dwarf>,
    info: DebugInfo,
    symbols: SymbolTable,
    /// The data objects (global and static variables), by address.
    objects: SymbolTable,
    go: Option<GoTable>,
    code: Code,
    /// RISC-V's `__global_pointer$`, what `gp` holds.
    global_pointer: Option<u64>,
    /// The global offset table's slots that dynamic relocations fill, by
    /// address: the name of the symbol each will hold ([`crate::plt`]).
    slots: FxHashMap<u64, String>,
    names: FunctionNames,
    cache: RefCell<FxHashMap<u64, Location>>,
    /// The functions whose RISC-V instructions were walked for the
    /// addresses they reach through registers, by start address.
    walked: RefCell<FxHashSet<u64>>,
    /// What those walks found: the address each instruction reaches.
    reached: RefCell<FxHashMap<u64, u64>>,
    sources: SourceCache,
}

impl Symbolizer {
    /// Opens the ELF file at `path`; when it has no DWARF, with its
    /// separate debug file if one is found under `/usr/lib/debug` or
    /// beside it ([`crate::debug_file`]).
    pub fn open(path: &Path) -> Result<Symbolizer, SymbolError> {
        Symbolizer::open_with_debug_dirs(path, &[PathBuf::from(debug_file::DEFAULT_DEBUG_DIR)])
    }

    /// [`Symbolizer::open`], looking for separate debug files under
    /// `debug_dirs` (in that order) instead of `/usr/lib/debug`.
    pub fn open_with_debug_dirs(
        path: &Path,
        debug_dirs: &[PathBuf],
    ) -> Result<Symbolizer, SymbolError> {
        let data = std::fs::read(path).map_err(|source| SymbolError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let separate = match object::File::parse(&*data) {
            Ok(f) if !dwarf::has_info(&f) => debug_file::find(path, &f, debug_dirs),
            _ => None,
        };
        Symbolizer::parse(path, &data, separate, debug_dirs)
    }

    /// Parses an ELF file already in memory; `path` names it in errors.
    /// No separate debug file is looked for, and a supplementary DWARF
    /// file only where its link says.
    pub fn from_bytes(path: &Path, data: &[u8]) -> Result<Symbolizer, SymbolError> {
        Symbolizer::parse(path, data, None, &[])
    }

    fn parse(
        path: &Path,
        data: &[u8],
        separate: Option<debug_file::DebugFile>,
        debug_dirs: &[PathBuf],
    ) -> Result<Symbolizer, SymbolError> {
        if !data.starts_with(b"\x7fELF") {
            return Err(SymbolError::NotElf {
                path: path.to_path_buf(),
                detail: describe_non_elf(data),
            });
        }
        let file = object::File::parse(data).map_err(|e| SymbolError::Corrupt {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        let arch = Arch::from_object(file.architecture());
        let mut symbols = SymbolTable::from_object(&file);
        let mut objects = SymbolTable::data_from_object(&file);
        let go = GoTable::from_object(&file);
        let code = Code::from_object(&file);
        let mut global_pointer = global_pointer_of(&file);
        let mut sup = Supplement::default();
        let (mut dwarf, mut dwarf_error) = match sup.load(&file, path, path, debug_dirs) {
            Ok(d) => (d, None),
            Err(e) => (None, Some(e)),
        };
        // The stripped binary's own debug file: its DWARF, and its symbols
        // when the binary has none (the code stays the binary's).
        let mut debug_file = None;
        if let Some(sep) = separate.as_ref() {
            if let Ok(dbg) = object::File::parse(&*sep.data) {
                if dwarf.is_none() {
                    match sup.load(&dbg, &sep.path, path, debug_dirs) {
                        Ok(d) => dwarf = d,
                        Err(e) => dwarf_error = Some(format!("{}: {e}", sep.path.display())),
                    }
                }
                if symbols.is_empty() {
                    symbols = SymbolTable::from_object(&dbg);
                    objects = SymbolTable::data_from_object(&dbg);
                    global_pointer = global_pointer_of(&dbg);
                }
                debug_file = Some(sep.path.clone());
            }
        }
        let slots = crate::plt::slot_names(&file);
        symbols.add_stubs(crate::plt::stub_symbols(&file, &slots));
        let info = DebugInfo {
            dwarf: dwarf.is_some(),
            dwarf_error,
            function_symbols: symbols.len(),
            go_functions: go.as_ref().map_or(0, GoTable::len),
            go_inlining: go.as_ref().is_some_and(GoTable::has_inlining),
            debug_file,
            supplementary_file: sup.found,
            missing_supplementary_file: sup.missing,
            split_units: dwarf.as_ref().map_or(0, |d| d.census.units),
            missing_split_files: dwarf
                .as_ref()
                .map_or_else(Vec::new, |d| d.census.missing.clone()),
        };
        Ok(Symbolizer {
            path: path.to_path_buf(),
            arch,
            dwarf,
            info,
            symbols,
            objects,
            go,
            code,
            global_pointer,
            slots: slots.into_iter().collect(),
            names: FunctionNames::default(),
            cache: RefCell::new(FxHashMap::default()),
            walked: RefCell::default(),
            reached: RefCell::default(),
            sources: SourceCache::default(),
        })
    }

    /// The file this symbolizer reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its instruction set.
    pub fn arch(&self) -> &Arch {
        &self.arch
    }

    /// What it offers: DWARF, symbols, or neither.
    pub fn debug_info(&self) -> &DebugInfo {
        &self.info
    }

    /// The split DWARF files its answers so far were read from, and where
    /// the missing ones were looked for: answers kept between runs hold
    /// while the first are unchanged and the second still absent. (The
    /// package, `BINARY.dwp`, is in the first when it was read; whether it
    /// exists is part of [`crate::debug_file::stamps`].)
    pub fn split_files(&self) -> crate::split_dwarf::SplitFiles {
        self.dwarf
            .as_ref()
            .map(|d| d.split.files(&d.census))
            .unwrap_or_default()
    }

    /// Start address of the function symbol `name`, if the symbol table has
    /// one (e.g. to find a known function's PCs).
    pub fn function_address(&self, name: &str) -> Option<u64> {
        self.symbols.by_name(name).map(|s| s.addr)
    }

    /// Address range `[start, end)` of the function symbol `name`, e.g. to
    /// list a whole function instruction by instruction.
    pub fn function_range(&self, name: &str) -> Option<(u64, u64)> {
        self.symbols
            .by_name(name)
            .map(|s| (s.addr, s.addr.saturating_add(s.size)))
    }

    /// What a value that is a pointer to `addr` points at, named as gdb
    /// names a pointer (`<memset>`, `<vtable for Circle+0x10>`): the
    /// function or data object (global or static variable) of the symbol
    /// table that starts at `addr`, or a C++ virtual table that holds it.
    ///
    /// A value inside any other object is not named: most values are
    /// numbers, and a number inside a program's address range would read
    /// as a pointer. A virtual table is the exception because a pointer
    /// to one never points at its start: an object's first word points
    /// past the table's offset-to-top and type-info words (Itanium C++
    /// ABI §2.5), at `+0x10` on 64-bit targets, and a load that always
    /// reads the same one is a virtual call that can be made direct.
    pub fn pointee(&self, addr: u64) -> Option<String> {
        if let Some(name) = [&self.symbols, &self.objects]
            .into_iter()
            .find_map(|t| t.find(addr).filter(|&(_, off)| off == 0))
            .map(|(s, _)| s.name.as_str())
        {
            return Some(name.to_string());
        }
        let (s, off) = self.objects.find(addr)?;
        is_vtable(&s.name).then(|| with_offset(s, off))
    }

    /// The function symbols whose code overlaps `[lo, hi]`, by address:
    /// what a code range wider than a function covers.
    pub fn function_symbols_in(&self, lo: u64, hi: u64) -> &[FunctionSymbol] {
        self.symbols.overlapping(lo, hi)
    }

    /// The data objects (global and static variables, from the symbol
    /// table) that overlap `[lo, hi]`, by address: what a hot range of
    /// load or store addresses covers.
    pub fn data_symbols_in(&self, lo: u64, hi: u64) -> &[FunctionSymbol] {
        self.objects.overlapping(lo, hi)
    }

    /// The source location of `pc`, from the cache when it was asked for
    /// before. Code of no symbol that is x86-64 Linux's signal return
    /// trampoline is named [`SIGNAL_RETURN`].
    pub fn lookup(&self, pc: u64) -> Location {
        if let Some(l) = self.cache.borrow().get(&pc) {
            return l.clone();
        }
        let l = self.lookup_uncached(pc);
        self.cache.borrow_mut().insert(pc, l.clone());
        l
    }

    /// The source location of `pc`, computed afresh (no cache read or
    /// written); [`Symbolizer::lookup`] is the one to use, this one exists
    /// to measure what the cache saves.
    pub fn lookup_uncached(&self, pc: u64) -> Location {
        let sym = self.symbols.find(pc);
        let (sym_name, offset) = match sym {
            Some((s, off)) => (Some(s.name.clone()), Some(off)),
            None => (None, None),
        };
        if let Some(mut frames) = self.dwarf_frames(pc) {
            let inner = frames.remove(0);
            return Location {
                pc,
                // A PC covered by a line table but by no function entry
                // (assembly with -g) takes its name from the symbol table.
                function: inner.function.or(sym_name),
                offset,
                file: inner.file,
                line: inner.line,
                column: inner.column,
                inlined: frames,
                source: Quality::Dwarf,
            };
        }
        if let Some(g) = self.go.as_ref().and_then(|g| g.find(pc)) {
            return g.location(pc);
        }
        match sym_name {
            Some(name) => Location {
                function: Some(name),
                offset,
                source: Quality::Symbols,
                ..Location::address(pc)
            },
            None => match self.signal_return(pc) {
                Some(offset) => Location {
                    function: Some(SIGNAL_RETURN.into()),
                    offset,
                    source: Quality::Symbols,
                    ..Location::address(pc)
                },
                None => Location::address(pc),
            },
        }
    }

    /// Whether `pc` is in a signal's return trampoline that no symbol
    /// names, known by its code as gdb knows it
    /// (`amd64_linux_sigtramp_p`): on x86-64 Linux, `mov rax, 15;
    /// syscall` (`rt_sigreturn`), glibc's and musl's `__restore_rt`,
    /// which glibc's dynamic symbols leave out. Its offset in the
    /// trampoline, or `Some(None)` for the byte before it, where glibc's
    /// CFI starts the trampoline's frame (so that a return address less
    /// one falls in it); `None` elsewhere.
    fn signal_return(&self, pc: u64) -> Option<Option<u64>> {
        const CODE: [u8; 9] = [0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05];
        if self.arch != Arch::X86_64 {
            return None;
        }
        let starts_at = |at: u64| self.code.at(at).is_some_and(|b| b.starts_with(&CODE));
        if starts_at(pc.wrapping_add(1)) {
            return Some(None);
        }
        (0..CODE.len() as u64)
            .find(|&back| pc >= back && starts_at(pc - back))
            .map(Some)
    }

    /// DWARF frames of `pc`, innermost first; `None` when DWARF says
    /// nothing useful about it (no unit covers it, or it is malformed).
    fn dwarf_frames(&self, pc: u64) -> Option<Vec<Frame>> {
        let dwarf = self.dwarf.as_ref()?;
        let ctx = &dwarf.context;
        // addr2line probes `[pc, pc + 1)`, which overflows at the very last
        // address; no instruction can start there anyway.
        if pc == u64::MAX {
            return None;
        }
        // With split DWARF, the frames and their unit are the `.dwo`'s.
        let mut iter = dwarf.split.resolve(ctx.find_frames(pc)).ok()?;
        // The unit the frames come from: their DIE offsets are in it.
        let unit = dwarf.split.resolve(ctx.find_dwarf_and_unit(pc));
        let mut frames = Vec::new();
        // A malformed entry ends the chain: keep what was read before it.
        while let Ok(Some(f)) = iter.next() {
            let function = match (unit, f.dw_die_offset) {
                (Some(unit), Some(die)) => self.names.frame(unit, die),
                _ => None,
            }
            .or_else(|| {
                let raw = f.function.as_ref()?.raw_name().ok()?;
                Some(demangle_or_keep(raw))
            });
            let (file, line, column) = match &f.location {
                Some(l) => (
                    l.file.map(str::to_string),
                    l.line.filter(|&n| n > 0),
                    l.column.filter(|&n| n > 0),
                ),
                None => (None, None, None),
            };
            frames.push(Frame {
                function,
                file,
                line,
                column,
            });
        }
        let useful = frames
            .first()
            .is_some_and(|f| f.line.is_some() || f.function.is_some());
        useful.then_some(frames)
    }

    /// The source lines of the code in `[lo, hi]` (inclusive; the order of
    /// the two is not significant), e.g. a loop from its target to its
    /// backward branch.
    pub fn span(&self, lo: u64, hi: u64) -> SourceSpan {
        let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        let start = self.lookup(lo);
        let offsets = match (self.symbols.find(lo), self.symbols.find(hi)) {
            (Some((a, off)), Some((b, _))) if a.addr == b.addr => Some((off, hi - a.addr)),
            (Some((a, off)), _) => Some((off, hi - a.addr)),
            _ => start.offset.map(|off| (off, off + (hi - lo))),
        };
        let (mut files, rows) = self.dwarf_lines(lo, hi);
        let mut lines_from = Quality::Dwarf;
        if files.is_empty() {
            if let Some(g) = &self.go {
                files = g.lines(lo, hi);
                lines_from = Quality::GoTable;
            }
        }
        let pcs = rows.map(|mut rows| {
            rows.push(hi);
            rows.into_iter()
                .map(|pc| self.lookup(pc))
                .collect::<Vec<_>>()
        });
        let (function, home) = enclosing_frame(&start, pcs.as_deref());
        let function = function.map(str::to_string);
        // The range's own file first: the file of the function it lies in,
        // even when inlined code of other files is inside it.
        if let Some(i) = home.and_then(|h| files.iter().position(|f| f.file == h)) {
            let main = files.remove(i);
            files.insert(0, main);
        }
        let source = if !files.is_empty() {
            lines_from
        } else if function.is_some() && offsets.is_some() {
            Quality::Symbols
        } else {
            Quality::Address
        };
        SourceSpan {
            lo,
            hi,
            function: if source == Quality::Address {
                None
            } else {
                function
            },
            offsets: if source == Quality::Address {
                None
            } else {
                offsets
            },
            files,
            source,
        }
    }

    /// The lines of `[lo, hi]` by file, and the addresses in it where a
    /// row of the line table starts, unless there are more than
    /// [`MAX_SPAN_ROWS`].
    fn dwarf_lines(&self, lo: u64, hi: u64) -> (Vec<crate::span::FileLines>, Option<Vec<u64>>) {
        let Some(d) = &self.dwarf else {
            return (Vec::new(), None);
        };
        let Ok(rows) = d.context.find_location_range(lo, hi.saturating_add(1)) else {
            return (Vec::new(), None);
        };
        let mut starts = Vec::new();
        let rows: Vec<(String, u32)> = rows
            .filter_map(|(addr, _, l)| {
                if (lo..=hi).contains(&addr) && starts.len() <= MAX_SPAN_ROWS {
                    starts.push(addr);
                }
                Some((l.file?.to_string(), l.line?))
            })
            .collect();
        let starts = (starts.len() <= MAX_SPAN_ROWS).then_some(starts);
        (
            group_by_file(rows.iter().map(|(f, l)| (f.as_str(), *l))),
            starts,
        )
    }

    /// The instruction at `pc`: `None` when `pc` is outside the code
    /// sections or the architecture has no disassembler here. The address
    /// it names ([`Disassembly::target`]) is followed by the symbol it
    /// lies in, as `objdump -d` prints it: `call 0x401130 <memcpy>`,
    /// `mov 0x2ee5(%rip),%eax # 0x404010 <counter+0x8>`, and on RISC-V
    /// `ld a5, -1234(a5) # 0x7f0c0 <table>`, the address its function's
    /// instructions before it put together ([`RiscvAddresses`]).
    pub fn disassemble(&self, pc: u64) -> Option<Disassembly> {
        let mut d = disasm::disassemble(&self.arch, pc, self.code.at(pc)?)?;
        if self.arch == Arch::Riscv64 && d.target.is_none() {
            if let Some(address) = self.riscv_reached(pc) {
                d.with_address(address);
            }
        }
        if let Some(name) = d.target.and_then(|t| self.symbol_at(t)) {
            d.text.push_str(&format!(" <{name}>"));
        }
        Some(d)
    }

    /// The address the RISC-V instruction at `pc` reaches through a
    /// register ([`RiscvAddresses`]). The first question about a function
    /// walks all of it once, from its start, and keeps the answer for
    /// each of its instructions. Only `gp` is known where no function
    /// symbol holds `pc`. A value whose upper part came from `lui` counts
    /// only where a symbol lies: elsewhere it is a constant.
    fn riscv_reached(&self, pc: u64) -> Option<u64> {
        /// The bytes of a function walked at most; the rest is looked at
        /// afresh, from `gp` alone.
        const MAX_WALK: u64 = 1 << 20;
        let address = |r: riscv_addresses::Reached| {
            (!r.absolute || self.symbol_at(r.address).is_some()).then_some(r.address)
        };
        let fresh = || {
            let mut walk = RiscvAddresses::new(self.global_pointer);
            walk.next(pc, self.code.at(pc)?)?.1.and_then(address)
        };
        let Some((f, _)) = self.symbols.find(pc) else {
            return fresh();
        };
        let end = f.addr.saturating_add(f.size.clamp(1, MAX_WALK));
        if pc >= end {
            return fresh();
        }
        if self.walked.borrow_mut().insert(f.addr) {
            let mut walk = RiscvAddresses::new(self.global_pointer);
            let mut reached = self.reached.borrow_mut();
            let mut at = f.addr;
            while at < end {
                let Some((len, to)) = self.code.at(at).and_then(|c| walk.next(at, c)) else {
                    break;
                };
                if let Some(to) = to.and_then(address) {
                    reached.insert(at, to);
                }
                at = at.saturating_add(len as u64);
            }
        }
        self.reached.borrow().get(&pc).copied()
    }

    /// Whether the instruction at `pc` loads a code address: a return
    /// address, which x86-64's `ret` reads from the stack and a RISC-V
    /// function reloads into `ra` before it returns (`ld ra, 24(sp)`).
    /// Its values are places in the code ([`code_symbol`](Self::code_symbol)),
    /// the call sites it returns to, not numbers.
    pub fn loads_code_address(&self, pc: u64) -> bool {
        self.code
            .at(pc)
            .is_some_and(|code| disasm::loads_code_address(&self.arch, pc, code))
    }

    /// The function `addr` lies in and the offset, as gdb names a code
    /// address (`mainQSort3+0x52`); the name alone at its start.
    pub fn code_symbol(&self, addr: u64) -> Option<String> {
        let (s, off) = self.symbols.find(addr)?;
        Some(with_offset(s, off))
    }

    /// The function or data object `addr` lies in, from the symbol table,
    /// with the offset when it is not the start (`counter+0x8`); else the
    /// global offset table's slot that holds a symbol's address
    /// (`stdout@got`), which position-independent code loads it from.
    fn symbol_at(&self, addr: u64) -> Option<String> {
        let found = self.symbols.find(addr).or_else(|| self.objects.find(addr));
        let Some((s, off)) = found else {
            return self.slots.get(&addr).map(|name| format!("{name}@got"));
        };
        Some(with_offset(s, off))
    }

    /// An annotated listing of the instructions in `[lo, hi]` (inclusive;
    /// the order of the two is not significant), each with its source
    /// location and line text. Decoding starts at the lower address and
    /// stops at the first address that is not code, or after
    /// [`MAX_LISTING_ROWS`] instructions ([`Listing::truncated`] says so).
    pub fn listing(&self, lo: u64, hi: u64) -> Listing {
        let mut listing = self.listing_code(lo, hi);
        for row in &mut listing.rows {
            if let (Some(file), Some(line)) = (&row.location.file, row.location.line) {
                row.source_text = self.source_line_text(file, line);
            }
        }
        listing
    }

    /// [`listing`](Self::listing) without the source lines' text (each
    /// row's `source_text` is `None`): for a caller that reads the source
    /// files itself.
    pub fn listing_code(&self, lo: u64, hi: u64) -> Listing {
        let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        let mut rows = Vec::new();
        let mut pc = lo;
        let mut truncated = false;
        while pc <= hi {
            if rows.len() == MAX_LISTING_ROWS {
                truncated = true;
                break;
            }
            let Some(insn) = self.disassemble(pc) else {
                truncated = true;
                break;
            };
            let location = self.lookup(pc);
            let next = pc.checked_add(insn.bytes.len() as u64);
            rows.push(ListingRow {
                insn,
                location,
                source_text: None,
            });
            match next {
                Some(n) => pc = n,
                None => break,
            }
        }
        Listing { rows, truncated }
    }

    /// How many instructions lie in `[lo, hi]`, both instruction starts:
    /// decoded one after another from `lo`, which must land on `hi`. For a
    /// loop body (its branch's target to the branch) this is the body's
    /// length in instructions, which the address difference gives only for
    /// instructions of one size: RISC-V's compressed (2-byte) forms and
    /// x86-64's are not. `None` when an address on the way is not code,
    /// the bytes are no instruction, the decoding steps over `hi`, the
    /// range holds more than [`MAX_LISTING_ROWS`] instructions, or the
    /// architecture has no decoder here.
    ///
    /// ```no_run
    /// # use coprof_symbols::Symbolizer;
    /// let s = Symbolizer::open("workloads/build/crc32".as_ref()).unwrap();
    /// let (lo, end) = s.function_range("main").unwrap();
    /// let listing = s.listing(lo, end - 1);
    /// let last = listing.rows.last().unwrap().insn.pc;
    /// assert_eq!(s.instructions_in(lo, last), Some(listing.rows.len() as u64));
    /// ```
    pub fn instructions_in(&self, lo: u64, hi: u64) -> Option<u64> {
        if lo > hi {
            return None;
        }
        let mut pc = lo;
        let mut n = 0u64;
        loop {
            let len = disasm::instruction_length(&self.arch, self.code.at(pc)?)?;
            n += 1;
            if pc == hi {
                return Some(n);
            }
            if n as usize >= MAX_LISTING_ROWS {
                return None;
            }
            pc = pc.checked_add(len as u64)?;
            if pc > hi {
                return None;
            }
        }
    }

    /// The code sections' address ranges `[start, end)`.
    pub fn code_ranges(&self) -> Vec<(u64, u64)> {
        self.code.ranges().collect()
    }

    /// Line `line` of source file `file` (as a [`Location`] names it), when
    /// the file can be read here.
    pub fn source_line_text(&self, file: &str, line: u32) -> Option<String> {
        self.sources.line(file, line)
    }

    /// Number of PCs cached.
    pub fn cached(&self) -> usize {
        self.cache.borrow().len()
    }

    /// Bytes held: debug sections, symbols, code, the function names
    /// worked out and the cache (estimated from entry sizes; the parsed
    /// units inside `addr2line` are not counted).
    pub fn bytes(&self) -> usize {
        let cache = self.cache.borrow();
        let per_entry = std::mem::size_of::<(u64, Location)>();
        let strings: usize = cache
            .values()
            .map(|l| {
                l.function.as_ref().map_or(0, String::capacity)
                    + l.file.as_ref().map_or(0, String::capacity)
                    + l.inlined.capacity() * std::mem::size_of::<Frame>()
            })
            .sum();
        self.dwarf.as_ref().map_or(0, |d| d.bytes + d.split.bytes())
            + self.symbols.bytes()
            + self.objects.bytes()
            + self.code.bytes()
            + self.names.bytes()
            + self.slots.capacity() * 8
            + self.slots.values().map(String::capacity).sum::<usize>()
            + self.walked.borrow().capacity() * 8
            + self.reached.borrow().capacity() * 16
            + cache.capacity() * per_entry
            + strings
    }
}

/// What a file that is not ELF looks like, for the error message.
fn describe_non_elf(data: &[u8]) -> String {
    if data.is_empty() {
        return "the file is empty".into();
    }
    if let Ok(kind) = object::FileKind::parse(data) {
        return format!("it is a {kind:?} file; only ELF is supported");
    }
    if data.starts_with(b"#!") {
        return "it is a script (starts with #!)".into();
    }
    let head: Vec<String> = data.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!(
        "it starts with bytes {} instead of 7f 45 4c 46 (\\x7fELF)",
        head.join(" ")
    )
}

/// The rows of the line table a source span looks up one by one to find
/// the function the whole range lies in; a range of more is named by the
/// function its first instruction physically lies in.
const MAX_SPAN_ROWS: usize = 256;

/// The innermost function every one of `others` lies in with `start`, and
/// the file of its code at `start`: for a loop inside code inlined into
/// another function, the inlined function, as a PC's own place names it
/// (`dijkstra (dijkstra.c:22-23)`, not `main`, whose lines those are not).
/// Without `others`, or when they share not even the outermost function,
/// it is the function `start` physically lies in.
fn enclosing_frame<'a>(
    start: &'a Location,
    others: Option<&[Location]>,
) -> (Option<&'a str>, Option<&'a str>) {
    let mine: Vec<_> = frames_outermost_first(start).collect();
    let mut depth = if others.is_some() { mine.len() } else { 1 };
    for other in others.unwrap_or_default() {
        let same = mine
            .iter()
            .zip(frames_outermost_first(other))
            .take_while(|((a, _), (b, _))| a.is_some() && a == b)
            .count();
        depth = depth.min(same);
    }
    mine[depth.max(1) - 1]
}

/// The (function, file) of each frame of `l`, from the function its code
/// physically lies in to the innermost inlined one.
fn frames_outermost_first(l: &Location) -> impl Iterator<Item = (Option<&str>, Option<&str>)> {
    l.inlined
        .iter()
        .rev()
        .map(|f| (f.function.as_deref(), f.file.as_deref()))
        .chain([(l.function.as_deref(), l.file.as_deref())])
}

/// An address `off` bytes into symbol `s`, as objdump and gdb name it:
/// `counter+0x8`, or the name alone at its start.
fn with_offset(s: &FunctionSymbol, off: u64) -> String {
    if off == 0 {
        s.name.clone()
    } else {
        format!("{}+{off:#x}", s.name)
    }
}

/// Whether a demangled data symbol is a C++ virtual table: `vtable for
/// X` or, for a class under construction, `construction vtable for X-in-Y`.
fn is_vtable(name: &str) -> bool {
    name.starts_with("vtable for ") || name.starts_with("construction vtable for ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbolizer_can_move_to_another_thread() {
        fn send<T: Send>() {}
        send::<Symbolizer>();
    }

    #[test]
    fn describes_what_a_non_elf_file_is() {
        assert_eq!(describe_non_elf(b""), "the file is empty");
        assert!(describe_non_elf(b"#!/bin/sh").contains("script"));
        assert!(describe_non_elf(b"MZ\x90\0").contains("starts with bytes 4d 5a"));
    }
}

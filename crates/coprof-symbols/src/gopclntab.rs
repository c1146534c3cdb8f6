//! The Go runtime's own function table (`.gopclntab`): function names,
//! files and lines for Go binaries without DWARF.
//!
//! Go programs are usually shipped stripped (`-ldflags=-s -w`, or a
//! distribution's `strip`): no ELF symbol table and no DWARF. The runtime
//! still needs names and lines for its tracebacks, so the linker keeps a
//! table of every function in the `.gopclntab` section, whose layout the
//! Go source describes (src/runtime/symtab.go, `pcHeader` and `_func`;
//! src/debug/gosym/pclntab.go reads it). This reads the layout of Go 1.18
//! and later (magic 0xfffffff0 and 0xfffffff1):
//!
//! - a header: the PC quantum (the smallest instruction: 1 on x86-64, 4 on
//!   RISC-V, where Go emits no compressed instructions), the pointer size,
//!   the number of functions and the offsets of the tables below;
//! - the function table: for each function, its entry as an offset from
//!   the start of the text, and the offset of its `_func` record;
//! - each `_func`: the offset of its name in the name table, and of its
//!   file and line tables among the PC-value tables;
//! - a PC-value table: pairs of varints, a zigzag value delta and a PC
//!   delta in quanta, from the function's entry with the value −1;
//! - the file of a PC is an index into its compilation unit's list of
//!   file offsets, each the offset of a name in the file table.
//!
//! A PC of inlined code is named by the function inlined there, with the
//! callers it was inlined into as frames, from the runtime's inlining
//! trees (`go_inline.rs`), when the binary's `moduledata` can be
//! found; otherwise by the function it was inlined into, with the inlined
//! code's own file and line, as `go tool addr2line` prints.

use crate::go_inline::{GoFuncData, Layout, FUNCDATA_INL_TREE, PCDATA_INL_TREE_INDEX};
use crate::location::Frame;
use object::{Object, ObjectSection, SectionKind};

/// The most inlined frames followed up from one PC: a damaged tree whose
/// nodes lead round in a circle stops there.
const MAX_INLINE_DEPTH: usize = 64;

/// One function of the table: its entry PC and where its record is.
#[derive(Clone, Copy, Debug)]
struct Func {
    entry: u64,
    /// Offset of its `_func` record in the section.
    record: usize,
}

/// A PC's function, file and line from the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoLine {
    /// The function's name, as the runtime prints it (`main.main`,
    /// `runtime.mallocgc`): the innermost function inlined at the PC, or
    /// the function whose code it is.
    pub function: String,
    /// The PC's offset from the entry of the function whose code it is.
    pub offset: u64,
    /// The source file, as the compiler recorded it.
    pub file: Option<String>,
    /// The source line.
    pub line: Option<u32>,
    /// The callers `function` was inlined into, innermost first, each with
    /// the file and line of its call site; the last is the function whose
    /// code it is. Empty for a function's own code.
    pub inlined: Vec<Frame>,
}

impl GoLine {
    /// The answer for `pc` as a [`Location`](crate::Location) from the Go
    /// table.
    pub fn location(self, pc: u64) -> crate::Location {
        crate::Location {
            pc,
            function: Some(self.function),
            offset: Some(self.offset),
            file: self.file,
            line: self.line,
            column: None,
            inlined: self.inlined,
            source: crate::Quality::GoTable,
        }
    }
}

/// A parsed `.gopclntab` section.
#[derive(Clone, Debug)]
pub struct GoTable {
    data: Vec<u8>,
    quantum: u64,
    funcs: Vec<Func>,
    /// End of the last function (the table's final entry).
    end: u64,
    funcnames: usize,
    cutab: usize,
    filetab: usize,
    pctab: usize,
    /// Where this Go release puts its records' fields.
    layout: Layout,
    /// `go:func.*`, for the inlining trees, when it was found.
    gofunc: Option<GoFuncData>,
}

/// The little-endian `u32` at `at`, if the bytes are there.
pub(crate) fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        d.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// The little-endian `u64` at `at`, if the bytes are there.
pub(crate) fn word_at(d: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        d.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// The NUL-terminated string at `at` (lossy UTF-8).
fn cstr_at(d: &[u8], at: usize) -> Option<String> {
    let rest = d.get(at..)?;
    let len = rest.iter().position(|&b| b == 0)?;
    Some(String::from_utf8_lossy(&rest[..len]).into_owned())
}

/// The unsigned varint at `*at`, moving `*at` past it.
fn uvarint(d: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *d.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

impl GoTable {
    /// The table of `file`, if it has one in a layout this reads (Go 1.18
    /// or later, 64-bit, little-endian): its `.gopclntab` section; in a
    /// position-independent binary Go's linker made, its
    /// `.data.rel.ro.gopclntab` (among the data the loader relocates,
    /// though nothing in it needs relocating); in one the system linker
    /// made (`-linkmode=external`), where the table has no section of its
    /// own, the first 8-byte aligned place in the data that starts with a
    /// table's header and parses as one.
    pub fn from_object(file: &object::File<'_>) -> Option<GoTable> {
        let (address, mut table) = [".gopclntab", ".data.rel.ro.gopclntab"]
            .iter()
            .find_map(|name| {
                let s = file.section_by_name(name)?;
                Some((s.address(), GoTable::parse(s.data().ok()?.to_vec())?))
            })
            .or_else(|| GoTable::search(file))?;
        table.gofunc = GoFuncData::find(file, address, table.funcnames as u64, table.layout);
        Some(table)
    }

    /// A table found by its header in the data sections of `file`, and
    /// its address.
    fn search(file: &object::File<'_>) -> Option<(u64, GoTable)> {
        file.sections()
            .filter(|s| matches!(s.kind(), SectionKind::Data | SectionKind::ReadOnlyData))
            .find_map(|s| {
                let d = s.data().ok()?;
                (0..d.len().saturating_sub(64)).step_by(8).find_map(|at| {
                    let head = &d[at..at + 8];
                    let header = matches!(head[..4], [0xf0 | 0xf1, 0xff, 0xff, 0xff])
                        && head[4..6] == [0, 0]
                        && matches!(head[6], 1 | 2 | 4)
                        && head[7] == 8;
                    header
                        .then(|| GoTable::parse(d[at..].to_vec()))
                        .flatten()
                        .map(|t| (s.address() + at as u64, t))
                })
            })
    }

    /// The table with `go:func.*`'s bytes, for tests.
    #[cfg(test)]
    fn with_gofunc(mut self, data: Vec<u8>) -> GoTable {
        self.gofunc = Some(GoFuncData::from_bytes(data, self.layout));
        self
    }

    /// Whether inlined frames can be read (the function data was found).
    pub fn has_inlining(&self) -> bool {
        self.gofunc.is_some()
    }

    /// Parses the section's bytes.
    pub fn parse(data: Vec<u8>) -> Option<GoTable> {
        let magic = u32_at(&data, 0)?;
        if !matches!(magic, 0xffff_fff0 | 0xffff_fff1) || data.get(7) != Some(&8) {
            return None;
        }
        let quantum = u64::from(*data.get(6)?).max(1);
        let field = |i: usize| word_at(&data, 8 + 8 * i);
        let nfunc = usize::try_from(field(0)?).ok()?;
        let text = field(2)?;
        let [funcnames, cutab, filetab, pctab, pcln] =
            [3, 4, 5, 6, 7].map(|i| field(i).and_then(|v| usize::try_from(v).ok()));
        let (funcnames, cutab, filetab, pctab, pcln) =
            (funcnames?, cutab?, filetab?, pctab?, pcln?);
        // nfunc entries and the end: (entry offset, record offset) pairs.
        if nfunc == 0 || nfunc > data.len() / 8 {
            return None;
        }
        let mut funcs = Vec::with_capacity(nfunc);
        for i in 0..nfunc {
            let at = pcln.checked_add(8 * i)?;
            let entry = text + u64::from(u32_at(&data, at)?);
            let record = pcln.checked_add(u32_at(&data, at + 4)? as usize)?;
            funcs.push(Func { entry, record });
        }
        let end = text + u64::from(u32_at(&data, pcln.checked_add(8 * nfunc)?)?);
        if funcs.windows(2).any(|w| w[0].entry > w[1].entry) {
            return None;
        }
        let layout = if magic == 0xffff_fff0 {
            Layout::GO_1_18
        } else {
            Layout::GO_1_20
        };
        Some(GoTable {
            layout,
            gofunc: None,
            data,
            quantum,
            funcs,
            end,
            funcnames,
            cutab,
            filetab,
            pctab,
        })
    }

    /// Number of functions in the table.
    pub fn len(&self) -> usize {
        self.funcs.len()
    }

    /// Whether the table has no function.
    pub fn is_empty(&self) -> bool {
        self.funcs.is_empty()
    }

    /// The function, file and line of `pc`; `None` outside every function.
    pub fn find(&self, pc: u64) -> Option<GoLine> {
        if pc >= self.end {
            return None;
        }
        let i = self
            .funcs
            .partition_point(|f| f.entry <= pc)
            .checked_sub(1)?;
        let f = self.funcs[i];
        let r = f.record;
        let outer = self.name(u32_at(&self.data, r + 4)? as i32)?;
        let (file, line) = self.position(f, pc)?;
        let mut line = GoLine {
            function: outer.clone(),
            offset: pc - f.entry,
            file,
            line,
            inlined: Vec::new(),
        };
        if let Some((index_table, tree)) = self.inline_tables(r) {
            self.inline_frames(f, index_table, tree, pc, outer, &mut line);
        }
        Some(line)
    }

    /// The function name at offset `off` of the name table.
    fn name(&self, off: i32) -> Option<String> {
        cstr_at(&self.data, self.funcnames.checked_add_signed(off as isize)?)
    }

    /// The file and line of `pc` in function `f` (the innermost inlined
    /// code's); `None` when the record is unreadable.
    fn position(&self, f: Func, pc: u64) -> Option<(Option<String>, Option<u32>)> {
        let r = f.record;
        let line = self
            .pc_value(u32_at(&self.data, r + 24)?, f.entry, pc)
            .and_then(|l| u32::try_from(l).ok())
            .filter(|&l| l > 0);
        let file = self
            .pc_value(u32_at(&self.data, r + 20)?, f.entry, pc)
            .and_then(|n| self.file_name(u32_at(&self.data, r + 32)?, n));
        Some((file, line))
    }

    /// The offsets of the inlining-tree index table (among the PC-value
    /// tables) and of the tree (in `go:func.*`) of the function whose
    /// record is at `r`, when it has both and the function data was found.
    fn inline_tables(&self, r: usize) -> Option<(u32, u32)> {
        self.gofunc.as_ref()?;
        let at = r.checked_add(self.layout.pcdata_at)?;
        let npcdata = u32_at(&self.data, r + 28)? as usize;
        let nfuncdata = *self.data.get(at - 1)? as usize;
        if npcdata <= PCDATA_INL_TREE_INDEX || nfuncdata <= FUNCDATA_INL_TREE {
            return None;
        }
        let index_table = u32_at(&self.data, at + 4 * PCDATA_INL_TREE_INDEX)?;
        let funcdata = at.checked_add(npcdata.checked_mul(4)?)?;
        let tree = u32_at(&self.data, funcdata.checked_add(4 * FUNCDATA_INL_TREE)?)?;
        (index_table != 0 && tree != u32::MAX).then_some((index_table, tree))
    }

    /// Fills in `line`'s innermost function and the callers it was
    /// inlined into, going up the inlining tree from `pc` as the runtime's
    /// `inlineUnwinder` does. A node that cannot be read ends the chain
    /// with what was read so far, named by the function `outer`.
    fn inline_frames(
        &self,
        f: Func,
        index_table: u32,
        tree: u32,
        pc: u64,
        outer: String,
        line: &mut GoLine,
    ) {
        let Some(gofunc) = &self.gofunc else {
            return;
        };
        let mut index = self.pc_value(index_table, f.entry, pc).unwrap_or(-1);
        // Names from the innermost out; the first is `line.function`.
        let mut names = Vec::new();
        let mut sites = Vec::new();
        while index >= 0 && names.len() < MAX_INLINE_DEPTH {
            let Some(call) = gofunc.call(tree, index) else {
                break;
            };
            let Some(name) = self.name(call.name_off) else {
                break;
            };
            let site = f.entry + u64::from(call.parent_pc);
            let Some(position) = self.position(f, site) else {
                break;
            };
            names.push(name);
            sites.push(position);
            index = self.pc_value(index_table, f.entry, site).unwrap_or(-1);
        }
        if names.is_empty() {
            return;
        }
        line.function = names[0].clone();
        let callers = names.into_iter().skip(1).chain(std::iter::once(outer));
        line.inlined = callers
            .zip(sites)
            .map(|(function, (file, at))| Frame {
                function: Some(function),
                file,
                line: at,
                column: None,
            })
            .collect();
    }

    /// The source lines of the code in `[lo, hi]`, one group per file (at
    /// most 4,096 instructions are looked at).
    pub fn lines(&self, lo: u64, hi: u64) -> Vec<crate::span::FileLines> {
        let rows: Vec<(String, u32)> = (0..4096)
            .map(|i| lo.saturating_add(i * self.quantum))
            .take_while(|&pc| pc <= hi)
            .filter_map(|pc| {
                let l = self.find(pc)?;
                Some((l.file?, l.line?))
            })
            .collect();
        crate::span::group_by_file(rows.iter().map(|(f, l)| (f.as_str(), *l)))
    }

    /// The value of the PC-value table at offset `table` of the PC-value
    /// tables for `pc`, in the function entered at `entry`.
    fn pc_value(&self, table: u32, entry: u64, pc: u64) -> Option<i64> {
        if table == 0 {
            return None;
        }
        let mut at = self.pctab.checked_add(table as usize)?;
        let (mut value, mut at_pc) = (-1i64, entry);
        let mut first = true;
        loop {
            let delta = uvarint(&self.data, &mut at)?;
            if delta == 0 && !first {
                return None;
            }
            first = false;
            // Zigzag: the low bit is the sign.
            let delta = if delta & 1 != 0 {
                !(delta >> 1) as i64
            } else {
                (delta >> 1) as i64
            };
            value = value.wrapping_add(delta);
            at_pc = at_pc.wrapping_add(uvarint(&self.data, &mut at)?.wrapping_mul(self.quantum));
            if pc < at_pc {
                return Some(value);
            }
        }
    }

    /// The name of file number `n` of the compilation unit whose file list
    /// starts at entry `cu` of the unit table.
    fn file_name(&self, cu: u32, n: i64) -> Option<String> {
        let n = u32::try_from(n).ok()?;
        let entry = self
            .cutab
            .checked_add(4 * (cu as usize).checked_add(n as usize)?)?;
        let off = u32_at(&self.data, entry)?;
        if off == u32::MAX {
            return None;
        }
        cstr_at(&self.data, self.filetab.checked_add(off as usize)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of two functions at 0x1000 (`main.f`, 0x20 bytes, lines 10
    /// then 12 from +0x8, in `/src/f.go`) and 0x1020 (`main.g`, to 0x1040,
    /// no line table), built as the Go linker lays it out.
    fn table() -> Vec<u8> {
        let mut d = vec![0u8; 0x200];
        d[..4].copy_from_slice(&0xffff_fff1u32.to_le_bytes());
        d[6] = 4; // quantum
        d[7] = 8; // pointer size
        let put_word =
            |d: &mut Vec<u8>, at: usize, v: u64| d[at..at + 8].copy_from_slice(&v.to_le_bytes());
        let put32 =
            |d: &mut Vec<u8>, at: usize, v: u32| d[at..at + 4].copy_from_slice(&v.to_le_bytes());
        // nfunc, nfiles, text, funcnames, cutab, filetab, pctab, pcln
        for (i, v) in [2u64, 1, 0x1000, 0x60, 0x80, 0x90, 0xa0, 0xc0]
            .into_iter()
            .enumerate()
        {
            put_word(&mut d, 8 + 8 * i, v);
        }
        d[0x60..0x67].copy_from_slice(b"main.f\0");
        d[0x67..0x6e].copy_from_slice(b"main.g\0");
        put32(&mut d, 0x80, 0); // cutab[0]: file 0 at filetab + 0
        d[0x90..0x9a].copy_from_slice(b"/src/f.go\0");
        // pctab + 1: file table: value 0 for 0x20 bytes (8 quanta).
        // zigzag(+1) = 2, pc delta 8; end.
        d[0xa1..0xa4].copy_from_slice(&[2, 8, 0]);
        // pctab + 4: line table: -1 + 11 = 10 for 2 quanta, then +2 = 12
        // for 6 quanta; end.
        d[0xa4..0xa9].copy_from_slice(&[22, 2, 4, 6, 0]);
        // Function table at pcln: (entry offset, record offset) and the end.
        for (i, (e, r)) in [(0u32, 0x40u32), (0x20, 0xa0)].into_iter().enumerate() {
            put32(&mut d, 0xc0 + 8 * i, e);
            put32(&mut d, 0xc0 + 8 * i + 4, r);
        }
        put32(&mut d, 0xc0 + 16, 0x40);
        // _func records at pcln + 0x40 and pcln + 0x80.
        let f = 0xc0 + 0x40;
        put32(&mut d, f + 4, 0); // name
        put32(&mut d, f + 20, 1); // pcfile
        put32(&mut d, f + 24, 4); // pcln
        put32(&mut d, f + 32, 0); // cu
        let g = 0xc0 + 0xa0;
        d.resize(g + 44, 0);
        put32(&mut d, g + 4, 7);
        d
    }

    /// [`table`] with an inlining tree for `main.f` (Go 1.20's layout):
    /// `main.m` inlined at +0x4 (line 10) covers +0x10..+0x20, and
    /// `main.h`, inlined into it at +0x10 (line 12), covers +0x8..+0x10.
    /// Returns the table's bytes and `go:func.*`'s.
    fn table_with_inlining() -> (Vec<u8>, Vec<u8>) {
        let mut d = table();
        let put32 =
            |d: &mut Vec<u8>, at: usize, v: u32| d[at..at + 4].copy_from_slice(&v.to_le_bytes());
        d[0x6e..0x75].copy_from_slice(b"main.m\0");
        d[0x75..0x7c].copy_from_slice(b"main.h\0");
        // pctab + 9: the tree index: -1 for 2 quanta, node 1 for 2, node
        // 0 for 4 (value deltas 0, +2, -1, zigzagged).
        d[0xa9..0xb0].copy_from_slice(&[0, 2, 4, 2, 1, 4, 0]);
        let f = 0xc0 + 0x40;
        put32(&mut d, f + 28, 3); // npcdata
        d[f + 43] = 4; // nfuncdata
        put32(&mut d, f + 44 + 8, 9); // PCDATA_InlTreeIndex
        for i in 0..3 {
            put32(&mut d, f + 56 + 4 * i, u32::MAX);
        }
        put32(&mut d, f + 56 + 12, 0); // FUNCDATA_InlTree at go:func.* + 0
        let mut gofunc = vec![0u8; 32];
        for (i, (name, parent_pc)) in [(0x0eu32, 0x4u32), (0x15, 0x10)].into_iter().enumerate() {
            put32(&mut gofunc, 16 * i + 4, name);
            put32(&mut gofunc, 16 * i + 8, parent_pc);
        }
        (d, gofunc)
    }

    #[test]
    fn reads_inlined_frames_from_the_inlining_tree() {
        let (d, gofunc) = table_with_inlining();
        let t = GoTable::parse(d).expect("a table").with_gofunc(gofunc);
        let frame = |function: &str, line| Frame {
            function: Some(function.into()),
            file: Some("/src/f.go".into()),
            line: Some(line),
            column: None,
        };
        let at = |pc| {
            t.find(pc)
                .map(|l| (l.function, l.offset, l.line, l.inlined))
        };
        assert_eq!(at(0x1004), Some(("main.f".into(), 4, Some(10), vec![])));
        assert_eq!(
            at(0x1008),
            Some((
                "main.h".into(),
                8,
                Some(12),
                vec![frame("main.m", 12), frame("main.f", 10)]
            ))
        );
        assert_eq!(
            at(0x101c),
            Some(("main.m".into(), 0x1c, Some(12), vec![frame("main.f", 10)]))
        );
        // Without go:func.* the same PC is the outer function's.
        let (d, _) = table_with_inlining();
        let bare = GoTable::parse(d).expect("a table");
        assert_eq!(
            bare.find(0x1008).map(|l| (l.function, l.inlined)),
            Some(("main.f".into(), vec![]))
        );
        // A node pointing at itself ends after MAX_INLINE_DEPTH frames.
        let (d, mut gofunc) = table_with_inlining();
        gofunc[24..28].copy_from_slice(&0x8u32.to_le_bytes());
        let looping = GoTable::parse(d).expect("a table").with_gofunc(gofunc);
        let l = looping.find(0x1008).expect("an answer");
        assert_eq!(l.inlined.len(), MAX_INLINE_DEPTH);
    }

    #[test]
    fn reads_names_files_and_lines() {
        let t = GoTable::parse(table()).expect("a table");
        assert_eq!(t.len(), 2);
        let at = |pc| t.find(pc).map(|l| (l.function, l.offset, l.file, l.line));
        let f = Some("/src/f.go".to_string());
        assert_eq!(at(0x1000), Some(("main.f".into(), 0, f.clone(), Some(10))));
        assert_eq!(at(0x1004), Some(("main.f".into(), 4, f.clone(), Some(10))));
        assert_eq!(at(0x1008), Some(("main.f".into(), 8, f.clone(), Some(12))));
        assert_eq!(at(0x101c), Some(("main.f".into(), 0x1c, f, Some(12))));
        assert_eq!(at(0x1024), Some(("main.g".into(), 4, None, None)));
        assert_eq!(at(0x0fff), None, "before the first function");
        assert_eq!(at(0x1040), None, "past the last");
    }

    proptest::proptest! {
        /// Any bytes flipped anywhere in a table: parsing and look-ups
        /// answer or decline, never panic.
        #[test]
        fn damaged_tables_never_panic(
            flips in proptest::collection::vec((0usize..0x220, proptest::prelude::any::<u8>()), 1..8),
            pcs in proptest::collection::vec(0xf00u64..0x1100, 1..16),
        ) {
            let (mut d, mut gofunc) = table_with_inlining();
            for (at, b) in flips {
                if at >= 0x200 {
                    gofunc[(at - 0x200) % 32] = b;
                } else if at != 0 && at != 7 && at < d.len() {
                    d[at] = b;
                }
            }
            if let Some(t) = GoTable::parse(d).map(|t| t.with_gofunc(gofunc)) {
                for pc in pcs {
                    let _ = t.find(pc);
                }
                let _ = t.lines(0x1000, 0x1040);
            }
        }
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        let mut d = table();
        d[0] = 0xfa; // Go 1.16's magic
        assert!(GoTable::parse(d).is_none());
        let mut d = table();
        d[7] = 4; // 32-bit
        assert!(GoTable::parse(d).is_none());
        assert!(
            GoTable::parse(table()[..40].to_vec()).is_none(),
            "cut short"
        );
        // A record that points past the end answers nothing, not a panic.
        let mut d = table();
        d[0xc4..0xc8].copy_from_slice(&0xffff_0000u32.to_le_bytes());
        let t = GoTable::parse(d).expect("the header is fine");
        assert_eq!(t.find(0x1000), None);
    }
}

//! Inlined frames of Go code, from the runtime's own inlining trees.
//!
//! The Go compiler inlines small functions aggressively, and a stripped Go
//! binary still says, for every PC of inlined code, which calls it came
//! through: the runtime needs it for tracebacks (src/runtime/symtab.go,
//! `inlinedCall`, and src/runtime/symtabinl.go, the `inlineUnwinder`). Two
//! tables hold it, per function:
//!
//! - the PC-value table `PCDATA_InlTreeIndex` (index 2 of the function's
//!   PC-data tables): for each PC, the node of the inlining tree its code
//!   belongs to, or −1 for the function's own code;
//! - the tree itself, `FUNCDATA_InlTree` (index 3 of its function data),
//!   an array of `inlinedCall` records: the inlined function's name and
//!   `parentPc`, the offset from the function's entry of an instruction
//!   whose position is the call site.
//!
//! Going up from a PC: its node names the innermost function; the PC's own
//! file and line are that function's; at `entry + parentPc` the file and
//! line are the call site's, in the caller, whose node is the one that PC
//! has, until a PC of the function's own code (−1).
//!
//! Function data lives outside `.gopclntab`, at offsets from the start of
//! `go:func.*`, whose address only the runtime's `moduledata` holds. In a
//! stripped binary, `moduledata` is found as the runtime finds its first
//! module: the data word that points at `.gopclntab` (its `pcHeader`),
//! checked by the next word, which must point at the table's function
//! names. A position-independent binary holds the same values there,
//! which its loader then relocates (Go's linker and the GNU linker write
//! them in; a linker that left the words zero for the loader to fill
//! would leave its PCs without inlined frames, with the note saying so).

use crate::gopclntab::{u32_at, word_at};
use object::{Object, ObjectSection, SectionKind};

/// Where the records of one Go release family lie.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// Offset in a `_func` record of its first PC-data table offset (its
    /// `nfuncdata` byte is the one before).
    pub(crate) pcdata_at: usize,
    /// Bytes of an `inlinedCall`.
    call_size: usize,
    /// Offset in an `inlinedCall` of its name offset.
    call_name_at: usize,
    /// Offset in an `inlinedCall` of its `parentPc`.
    call_parent_pc_at: usize,
    /// Offset of `gofunc` in `moduledata`.
    gofunc_at: usize,
}

impl Layout {
    /// Go 1.18 and 1.19 (table magic 0xfffffff0): `_func` without
    /// `startLine`, `inlinedCall` with its parent index, call-site file and
    /// line, `moduledata` without the coverage counters.
    pub(crate) const GO_1_18: Layout = Layout {
        pcdata_at: 40,
        call_size: 20,
        call_name_at: 12,
        call_parent_pc_at: 16,
        gofunc_at: 304,
    };
    /// Go 1.20 and later (magic 0xfffffff1).
    pub(crate) const GO_1_20: Layout = Layout {
        pcdata_at: 44,
        call_size: 16,
        call_name_at: 4,
        call_parent_pc_at: 8,
        gofunc_at: 320,
    };
}

/// Index of the inlining-tree PC-value table among a function's PC data.
pub(crate) const PCDATA_INL_TREE_INDEX: usize = 2;
/// Index of the inlining tree among a function's function data.
pub(crate) const FUNCDATA_INL_TREE: usize = 3;

/// The bytes of `go:func.*`, where function data lies.
#[derive(Clone, Debug)]
pub(crate) struct GoFuncData {
    data: Vec<u8>,
    layout: Layout,
}

/// One node of an inlining tree.
pub(crate) struct InlinedCall {
    /// Offset of the inlined function's name in the function-name table.
    pub(crate) name_off: i32,
    /// Offset from the function's entry of a PC at the call site.
    pub(crate) parent_pc: u32,
}

impl GoFuncData {
    /// Finds `go:func.*` in `file` through its `moduledata`: the 8-byte
    /// aligned data word equal to `pclntab` (the address of
    /// `.gopclntab`) followed by `pclntab + funcnames` (its function-name
    /// table).
    pub(crate) fn find(
        file: &object::File<'_>,
        pclntab: u64,
        funcnames: u64,
        layout: Layout,
    ) -> Option<GoFuncData> {
        let names = pclntab.checked_add(funcnames)?;
        let gofunc = file
            .sections()
            .filter(|s| matches!(s.kind(), SectionKind::Data | SectionKind::ReadOnlyData))
            .find_map(|s| {
                let d = s.data().ok()?;
                (0..d.len().saturating_sub(16))
                    .step_by(8)
                    .find(|&at| {
                        word_at(d, at) == Some(pclntab) && word_at(d, at + 8) == Some(names)
                    })
                    .and_then(|at| word_at(d, at + layout.gofunc_at))
            })?;
        let section = file
            .sections()
            .find(|s| s.address() <= gofunc && gofunc < s.address() + s.size())?;
        let data = section.data().ok()?;
        let from = usize::try_from(gofunc - section.address()).ok()?;
        Some(GoFuncData {
            data: data.get(from..)?.to_vec(),
            layout,
        })
    }

    /// Node `index` of the inlining tree at offset `tree` of `go:func.*`.
    pub(crate) fn call(&self, tree: u32, index: i64) -> Option<InlinedCall> {
        let index = usize::try_from(index).ok()?;
        let at = (tree as usize).checked_add(index.checked_mul(self.layout.call_size)?)?;
        Some(InlinedCall {
            name_off: u32_at(&self.data, at.checked_add(self.layout.call_name_at)?)? as i32,
            parent_pc: u32_at(&self.data, at.checked_add(self.layout.call_parent_pc_at)?)?,
        })
    }

    /// Function data laid out for tests: `data` at the start of
    /// `go:func.*`.
    #[cfg(test)]
    pub(crate) fn from_bytes(data: Vec<u8>, layout: Layout) -> GoFuncData {
        GoFuncData { data, layout }
    }
}

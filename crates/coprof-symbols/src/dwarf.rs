//! Loading an ELF's DWARF sections for `addr2line`.
//!
//! Each debug section is copied into a reference-counted buffer, or, when
//! `SHF_COMPRESSED`, inflated into one, so the context owns its data and
//! the file itself need not stay in memory; only the `.debug_*` sections
//! and the code are kept. Parsing is lazy: `addr2line` reads a unit's
//! line table and functions the first time a PC inside it is asked for.

use gimli::{EndianReader, RunTimeEndian, SectionId};
use object::{Object, ObjectSection};
use std::ops::Deref;
use std::sync::Arc;

/// The reader type over owned section data.
pub type Reader = EndianReader<RunTimeEndian, SectionBytes>;

/// A section's bytes, shared by every reader over them. An inflated
/// section stays in the buffer it was inflated into: a libc's separate
/// debug file inflates to megabytes, which a copy would write again into
/// fresh pages, for each process a profile follows.
#[derive(Clone, Debug)]
pub struct SectionBytes(Arc<Vec<u8>>);

impl Deref for SectionBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

// SAFETY: the bytes lie in the vector's heap buffer, which the `Arc` keeps
// alive and which nothing can change or move while it is shared: every
// clone of a `SectionBytes` derefs to the same address for as long as any
// of them lives.
unsafe impl stable_deref_trait::StableDeref for SectionBytes {}
// SAFETY: as above; a clone shares the same buffer.
unsafe impl stable_deref_trait::CloneStableDeref for SectionBytes {}

/// A DWARF context ready for look-ups, and the bytes it was built from.
pub struct Dwarf {
    /// The `addr2line` context.
    pub context: addr2line::Context<Reader>,
    /// Bytes of section data held.
    pub bytes: usize,
}

/// The sections `gimli` loads that function, file and line look-ups never
/// read.
const UNUSED: [SectionId; 4] = [
    SectionId::DebugLoc,
    SectionId::DebugLocLists,
    SectionId::DebugMacinfo,
    SectionId::DebugMacro,
];

/// Whether `file` has DWARF (a non-empty `.debug_info`).
pub fn has_info<'d, R: object::ReadRef<'d>>(file: &object::File<'d, R>) -> bool {
    file.section_by_name(SectionId::DebugInfo.name())
        .is_some_and(|s| s.size() > 0)
}

/// Reads the DWARF of `file`. `Ok(None)` when it has no `.debug_info`
/// (built without `-g`, or stripped with `strip --strip-debug`); `Err` with
/// the parser's message when the sections are there but malformed.
pub fn load(file: &object::File<'_>) -> Result<Option<Dwarf>, String> {
    if !has_info(file) {
        return Ok(None);
    }
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let mut bytes = 0usize;
    let load_section = |id: SectionId| -> Result<Reader, String> {
        let data: Vec<u8> = match file.section_by_name(id.name()) {
            // Where variables live and macros: no look-up here reads them,
            // and libc's location lists alone inflate to megabytes.
            _ if UNUSED.contains(&id) => Vec::new(),
            // An inflated section is taken as it is; a stored one copied.
            Some(s) => match s.uncompressed_data() {
                Ok(d) => d.into_owned(),
                Err(e) => return Err(format!("section {}: {e}", id.name())),
            },
            None => Vec::new(),
        };
        bytes += data.len();
        Ok(EndianReader::new(SectionBytes(Arc::new(data)), endian))
    };
    let dwarf = gimli::Dwarf::load(load_section)?;
    let context = addr2line::Context::from_dwarf(dwarf).map_err(|e| format!("DWARF: {e}"))?;
    Ok(Some(Dwarf { context, bytes }))
}

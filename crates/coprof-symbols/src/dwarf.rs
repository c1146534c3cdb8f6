//! Loading an ELF's DWARF sections for `addr2line`.
//!
//! Each debug section is copied (decompressed when `SHF_COMPRESSED`) into
//! a reference-counted buffer, so the context owns its data and the file
//! itself need not stay mapped; only the `.debug_*` sections and the code
//! are kept. Parsing is lazy: `addr2line` reads a unit's line table and
//! functions the first time a PC inside it is asked for.

use gimli::{EndianArcSlice, RunTimeEndian, SectionId};
use object::{Object, ObjectSection};
use std::sync::Arc;

/// The reader type over owned section data.
pub type Reader = EndianArcSlice<RunTimeEndian>;

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
pub fn has_info(file: &object::File<'_>) -> bool {
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
        let data: Arc<[u8]> = match file.section_by_name(id.name()) {
            // Where variables live and macros: no look-up here reads them,
            // and libc's location lists alone inflate to megabytes.
            _ if UNUSED.contains(&id) => Arc::from(&[][..]),
            Some(s) => match s.uncompressed_data() {
                Ok(d) => Arc::from(&*d),
                Err(e) => return Err(format!("section {}: {e}", id.name())),
            },
            None => Arc::from(&[][..]),
        };
        bytes += data.len();
        Ok(EndianArcSlice::new(data, endian))
    };
    let dwarf = gimli::Dwarf::load(load_section)?;
    let context = addr2line::Context::from_dwarf(dwarf).map_err(|e| format!("DWARF: {e}"))?;
    Ok(Some(Dwarf { context, bytes }))
}

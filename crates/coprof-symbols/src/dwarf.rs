//! Loading an ELF's DWARF sections for `addr2line`.
//!
//! Each debug section is copied into a reference-counted buffer, or, when
//! `SHF_COMPRESSED`, inflated into one, so the context owns its data and
//! the file itself need not stay in memory; only the `.debug_*` sections
//! and the code are kept. Parsing is lazy: `addr2line` reads a unit's
//! line table and functions the first time a PC inside it is asked for.

use crate::split_dwarf::{Census, SplitDwarf};
use gimli::{EndianReader, RunTimeEndian, SectionId};
use object::{Object, ObjectSection};
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

/// The reader type over owned section data.
pub type Reader = EndianReader<RunTimeEndian, SectionBytes>;

/// A section's bytes, shared by every reader over them. An inflated
/// section stays in the buffer it was inflated into: a libc's separate
/// debug file inflates to megabytes, which a copy would write again into
/// fresh pages, for each process a profile follows.
#[derive(Clone, Debug)]
pub struct SectionBytes(Arc<Vec<u8>>);

impl SectionBytes {
    /// No bytes.
    pub(crate) fn empty() -> SectionBytes {
        SectionBytes(Arc::new(Vec::new()))
    }
}

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
    /// Bytes of section data held, split files' apart.
    pub bytes: usize,
    /// The binary's split DWARF files, loaded as look-ups need them.
    pub(crate) split: SplitDwarf,
    /// Which of them are missing.
    pub(crate) census: Census,
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

/// Reads the DWARF of `file`, the binary at `binary` or its separate
/// debug file, with its supplementary file `sup` when it has one (`dwz
/// -m`, [`crate::debug_file::find_supplementary`]), and the split DWARF
/// files of the binary at `binary` ([`crate::split_dwarf`]). `Ok(None)`
/// when it has no `.debug_info` (built without `-g`, or stripped with
/// `strip --strip-debug`); `Err` with the parser's message when the
/// sections are there but malformed.
pub fn load(
    file: &object::File<'_>,
    sup: Option<&object::File<'_>>,
    binary: &Path,
) -> Result<Option<Dwarf>, String> {
    if !has_info(file) {
        return Ok(None);
    }
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let mut bytes = 0usize;
    let mut dwarf =
        gimli::Dwarf::load(|id: SectionId| read_section(file, id, false, endian, &mut bytes))?;
    if let Some(sup) = sup {
        dwarf.load_sup(|id: SectionId| read_section(sup, id, false, endian, &mut bytes))?;
    }
    let split = SplitDwarf::open(binary, endian);
    let census = split.census(&dwarf);
    let context = addr2line::Context::from_dwarf(dwarf).map_err(|e| format!("DWARF: {e}"))?;
    Ok(Some(Dwarf {
        context,
        bytes,
        split,
        census,
    }))
}

/// Section `id` of `file` as a reader, inflated when compressed: its
/// split form (`.debug_info.dwo`) when `dwo`. Empty when `file` has no
/// such section, or, in a binary or its debug file, when no look-up reads
/// it. (A DWARF package's index slices every section it lists, so a split
/// file's are all read; they are small.) Adds its length to `bytes`.
pub(crate) fn read_section(
    file: &object::File<'_>,
    id: SectionId,
    dwo: bool,
    endian: RunTimeEndian,
    bytes: &mut usize,
) -> Result<Reader, String> {
    let name = if dwo { id.dwo_name() } else { Some(id.name()) };
    let data: Vec<u8> = match name.and_then(|n| file.section_by_name(n)) {
        // Where variables live and macros: no look-up here reads them,
        // and libc's location lists alone inflate to megabytes.
        _ if !dwo && UNUSED.contains(&id) => Vec::new(),
        // An inflated section is taken as it is; a stored one copied.
        Some(s) => match s.uncompressed_data() {
            Ok(d) => d.into_owned(),
            Err(e) => return Err(format!("section {}: {e}", name.unwrap_or_default())),
        },
        None => Vec::new(),
    };
    *bytes += data.len();
    Ok(EndianReader::new(SectionBytes(Arc::new(data)), endian))
}

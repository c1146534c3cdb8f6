//! Split DWARF (`-gsplit-dwarf`): the binary keeps a skeleton unit per
//! object and the line tables, and the rest of each unit (its functions,
//! its inlined frames) goes to a `.dwo` file beside the object, or, packed
//! by `dwp`, to one `BINARY.dwp` beside the binary (DWARF 5, §7.3.2 and
//! Appendix F). Line numbers come from the skeleton alone; a function's
//! inlined frames need its `.dwo`.
//!
//! Found as GDB finds them ("Debugging Information in Separate Files" in
//! its manual) and as `addr2line`'s own loader does: the package first,
//! then the unit's `DW_AT_dwo_name` under its compilation directory, then
//! that file's name in the binary's directory (a build moved as a whole).
//! A `.dwo` is used only if its unit's DWO id is the skeleton's: one left
//! over from another build would name the wrong frames.

use crate::dwarf::{read_section, Reader};
use addr2line::{LookupContinuation, LookupResult, SplitDwarfLoad};
use gimli::{RunTimeEndian, UnitType};
use std::cell::{Cell, RefCell};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a binary's split units are, and what was loaded of them.
pub(crate) struct SplitDwarf {
    /// The binary's directory: a `.dwo` missing from its compilation
    /// directory is looked for here by its file name.
    binary_dir: PathBuf,
    /// `BINARY.dwp`, when there is one and it reads.
    package: Option<gimli::DwarfPackage<Reader>>,
    endian: RunTimeEndian,
    /// Bytes of section data read from `.dwo` files and the package.
    bytes: Cell<usize>,
    /// The package and the `.dwo` files read so far, in the order read.
    read: RefCell<Vec<PathBuf>>,
}

/// The split files the answers so far were read from, and those looked for
/// and not found: what a cache of answers must see unchanged, and still
/// absent, for them to hold ([`crate::Symbolizer::split_files`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SplitFiles {
    /// The package and each `.dwo` read, each once.
    pub read: Vec<PathBuf>,
    /// Every place a missing unit's split file was looked for.
    pub absent: Vec<PathBuf>,
}

/// What a binary's skeleton units need, for the note a report prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Census {
    /// Skeleton units: units whose functions are in a split file.
    pub units: usize,
    /// The split files of those units that were not found, in unit order.
    pub missing: Vec<PathBuf>,
    /// Every candidate of those files, where each was looked for.
    pub absent: Vec<PathBuf>,
}

impl SplitDwarf {
    /// The split files of the binary at `binary`.
    pub(crate) fn open(binary: &Path, endian: RunTimeEndian) -> SplitDwarf {
        let mut bytes = 0;
        let name = package_path(binary);
        let package = std::fs::read(&name).ok().and_then(|data| {
            let file = object::File::parse(&*data).ok()?;
            let load = |id: gimli::SectionId| {
                read_section(&file, id, true, endian, &mut bytes).map_err(|_| gimli::Error::Io)
            };
            gimli::DwarfPackage::load(load, empty(endian)).ok()
        });
        SplitDwarf {
            binary_dir: binary.parent().map(Path::to_path_buf).unwrap_or_default(),
            read: RefCell::new(package.as_ref().map(|_| name).into_iter().collect()),
            package,
            endian,
            bytes: Cell::new(bytes),
        }
    }

    /// The split files read so far, and where those of `census` that are
    /// missing were looked for.
    pub(crate) fn files(&self, census: &Census) -> SplitFiles {
        SplitFiles {
            read: self.read.borrow().clone(),
            absent: census.absent.clone(),
        }
    }

    /// Bytes of section data held from split files so far.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.get()
    }

    /// Runs a look-up to its end, giving it each split unit it asks for
    /// (or none, when it is not found: the look-up then answers from the
    /// skeleton, as without split files).
    pub(crate) fn resolve<L: LookupContinuation<Buf = Reader>>(
        &self,
        mut lookup: LookupResult<L>,
    ) -> L::Output {
        loop {
            match lookup {
                LookupResult::Output(out) => return out,
                LookupResult::Load { load, continuation } => {
                    lookup = continuation.resume(self.load(&load));
                }
            }
        }
    }

    /// The split unit `load` asks for, from the package or a `.dwo`.
    fn load(&self, load: &SplitDwarfLoad<Reader>) -> Option<Arc<gimli::Dwarf<Reader>>> {
        if let Some(p) = &self.package {
            if let Ok(Some(dwo)) = p.find_cu(load.dwo_id, &load.parent) {
                return Some(Arc::new(dwo));
            }
        }
        let candidates = self.candidates(load.comp_dir.as_ref(), load.path.as_ref()?);
        candidates
            .iter()
            .find_map(|path| self.read_dwo(path, load.dwo_id, &load.parent))
    }

    /// Where the `.dwo` named `name` (as its unit gives it, relative to
    /// `comp_dir` unless absolute) may be, in the order they are tried.
    fn candidates(&self, comp_dir: Option<&Reader>, name: &Reader) -> Vec<PathBuf> {
        let name = Path::new(std::ffi::OsStr::from_bytes(name.bytes()));
        let mut at = PathBuf::new();
        if let Some(dir) = comp_dir {
            at.push(std::ffi::OsStr::from_bytes(dir.bytes()));
        }
        at.push(name);
        let mut out = vec![at];
        if let Some(base) = name.file_name() {
            out.push(self.binary_dir.join(base));
        }
        out
    }

    /// The `.dwo` at `path`, if it reads and its unit is `id`'s.
    fn read_dwo(
        &self,
        path: &Path,
        id: gimli::DwoId,
        parent: &gimli::Dwarf<Reader>,
    ) -> Option<Arc<gimli::Dwarf<Reader>>> {
        let data = std::fs::read(path).ok()?;
        let file = object::File::parse(&*data).ok()?;
        let mut bytes = 0;
        let mut dwo = gimli::Dwarf::load(|s: gimli::SectionId| {
            read_section(&file, s, true, self.endian, &mut bytes)
        })
        .ok()?;
        let header = dwo.units().next().ok()??;
        if dwo.unit(header).ok()?.dwo_id != Some(id) {
            return None;
        }
        dwo.make_dwo(parent);
        self.bytes.set(self.bytes.get() + bytes);
        let mut read = self.read.borrow_mut();
        if !read.iter().any(|p| p == path) {
            read.push(path.to_path_buf());
        }
        Some(Arc::new(dwo))
    }

    /// The skeleton units of `dwarf` and which of their split files are
    /// nowhere to be found. A DWARF 5 skeleton is marked in its unit
    /// header (`DW_UT_skeleton`); GCC's DWARF 4 extension (`-gdwarf-4
    /// -gsplit-dwarf`) marks its skeletons only in their first entry
    /// (`DW_AT_GNU_dwo_id`), so a DWARF 4 unit's first entry is read when
    /// the binary has a `.debug_addr`, which only split units use before
    /// DWARF 5. Otherwise only unit headers are read: a binary without
    /// split DWARF pays a walk over its headers.
    pub(crate) fn census(&self, dwarf: &gimli::Dwarf<Reader>) -> Census {
        use gimli::{Reader as _, Section as _};
        let gnu_split = !dwarf.debug_addr.reader().is_empty();
        let mut census = Census::default();
        let mut headers = dwarf.units();
        while let Ok(Some(header)) = headers.next() {
            let gnu = gnu_split && header.version() < 5;
            if !matches!(header.type_(), UnitType::Skeleton(_)) && !gnu {
                continue;
            }
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            let Some(id) = unit.dwo_id else {
                continue;
            };
            census.units += 1;
            if self
                .package
                .as_ref()
                .is_some_and(|p| p.cu_index.find(id.0).is_some())
            {
                continue;
            }
            let name = unit
                .dwo_name()
                .ok()
                .flatten()
                .and_then(|v| dwarf.attr_string(&unit, v).ok());
            let Some(name) = name else {
                continue;
            };
            let candidates = self.candidates(unit.comp_dir.as_ref(), &name);
            if !candidates.iter().any(|p| p.is_file()) {
                census.missing.push(candidates[0].clone());
                census.absent.extend(candidates);
            }
        }
        census
    }
}

/// Where the DWARF package of the binary at `binary` is: `BINARY.dwp`.
pub fn package_path(binary: &Path) -> PathBuf {
    let mut name = binary.as_os_str().to_owned();
    name.push(".dwp");
    PathBuf::from(name)
}

/// An empty section.
fn empty(endian: RunTimeEndian) -> Reader {
    gimli::EndianReader::new(crate::dwarf::SectionBytes::empty(), endian)
}

/// The sentence a report prints when `missing` of `units` skeleton
/// units' split files were not found ([`SplitDwarf::census`]).
pub(crate) fn missing_note(units: usize, missing: &[PathBuf]) -> Option<String> {
    let first = missing.first()?;
    let more = match missing.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Some(format!(
        "split DWARF file {}{more} not found ({} of {units} units): their code has \
         lines but no inlined frames",
        first.display(),
        missing.len(),
    ))
}

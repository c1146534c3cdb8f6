//! Function names from DWARF, spelled as their programmers write them.
//!
//! A frame's DIE, a subprogram or an inlined subroutine, often names its
//! function only through a chain: a concrete instance points to its
//! abstract instance (`DW_AT_abstract_origin`), which points to the
//! declaration inside its class (`DW_AT_specification`) (DWARF 5 §2.13.2,
//! §3.3.8). A frame is named by the first linkage name on that chain,
//! demangled, which spells the function with its scopes and parameters as
//! c++filt does (`std::vector<int, std::allocator<int> >::push_back(int
//! const&)`). GCC gives some C++ functions no linkage name at all: those
//! of internal linkage (in an anonymous namespace, or `static`) and the
//! abstract constructors and destructors that inlined copies point to.
//! Those get the chain's `DW_AT_name` qualified by the namespaces, classes
//! and functions around the declaration, without parameters:
//! `(anonymous namespace)::Noisy::Noisy`. C has no scopes: there the name
//! is the one the DIE gives.

use crate::demangle::demangle_or_keep;
use crate::dwarf::Reader;
use gimli::{AttributeValue, Reader as _, UnitOffset, UnitRef, UnitSectionOffset};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::Arc;

/// Steps followed along a chain of abstract origins and specifications;
/// real chains take at most three, and a malformed one may loop.
const MAX_CHAIN: usize = 16;
/// Scopes walked outward from a declaration.
const MAX_SCOPES: usize = 64;

/// Names of the frames of one binary's units, with each C++ unit's scope
/// table built the first time one of its frames is named.
#[derive(Default)]
pub(crate) struct FunctionNames {
    /// Per unit (its DWARF and its offset there): the enclosing scope of
    /// each scope and subprogram DIE, or `None` for a unit that is not
    /// C++.
    units: RefCell<FxHashMap<UnitKey, Option<Arc<Scopes>>>>,
    /// Each frame DIE's name, once worked out: the PCs of one function
    /// share their frames' DIEs, and a chain costs several DIE reads.
    frames: RefCell<FxHashMap<(UnitKey, usize), Option<String>>>,
}

/// A unit: the address of its DWARF (the file's, or a split DWARF file's)
/// and its offset there (the top bit for `.debug_types`).
type UnitKey = (usize, u64);

fn unit_key(unit: UnitRef<'_, Reader>) -> UnitKey {
    (
        unit.dwarf as *const _ as usize,
        match unit.header.offset() {
            UnitSectionOffset::DebugInfoOffset(o) => o.0 as u64,
            UnitSectionOffset::DebugTypesOffset(o) => o.0 as u64 | 1 << 63,
        },
    )
}

/// For each namespace, class, structure, union and subprogram DIE of a
/// unit that has one, the nearest such DIE around it (DIE offsets in the
/// unit).
#[derive(Default)]
struct Scopes {
    parent: FxHashMap<usize, usize>,
}

/// What a chain of references from a frame's DIE gives.
struct Chain {
    /// The first linkage name on the chain.
    linkage: Option<String>,
    /// The first plain name on the chain.
    name: Option<String>,
    /// The chain's last DIE in the unit: the declaration whose place says
    /// which scopes hold the function.
    declaration: usize,
}

impl FunctionNames {
    /// The name of the function of the frame whose DIE is at `die` in
    /// `unit`; `None` when the DIE cannot be read or names nothing.
    pub(crate) fn frame(
        &self,
        unit: UnitRef<'_, Reader>,
        die: UnitOffset<usize>,
    ) -> Option<String> {
        let key = (unit_key(unit), die.0);
        if let Some(name) = self.frames.borrow().get(&key) {
            return name.clone();
        }
        let name = self.work_out(unit, die.0);
        self.frames.borrow_mut().insert(key, name.clone());
        name
    }

    fn work_out(&self, unit: UnitRef<'_, Reader>, die: usize) -> Option<String> {
        let chain = follow(unit, die)?;
        if let Some(linkage) = chain.linkage {
            return Some(demangle_or_keep(linkage.into()));
        }
        let name = chain.name?;
        match self.scopes(unit) {
            Some(scopes) => Some(qualify(unit, &scopes, chain.declaration, name)),
            None => Some(name),
        }
    }

    /// Bytes held by the tables (estimated from entry sizes).
    pub(crate) fn bytes(&self) -> usize {
        let scopes: usize = self
            .units
            .borrow()
            .values()
            .flatten()
            .map(|s| s.parent.capacity() * 2 * std::mem::size_of::<usize>())
            .sum();
        let frames = self.frames.borrow();
        let names: usize = frames.values().flatten().map(String::capacity).sum();
        scopes
            + names
            + frames.capacity() * std::mem::size_of::<((UnitKey, usize), Option<String>)>()
    }

    /// The scope table of `unit`, built on first use; `None` when the unit
    /// is not C++.
    fn scopes(&self, unit: UnitRef<'_, Reader>) -> Option<Arc<Scopes>> {
        self.units
            .borrow_mut()
            .entry(unit_key(unit))
            .or_insert_with(|| is_cpp(unit).then(|| Arc::new(Scopes::of(unit))))
            .clone()
    }
}

impl Scopes {
    /// One walk over the unit's DIEs. A malformed DIE ends the walk; the
    /// scopes read before it are kept.
    fn of(unit: UnitRef<'_, Reader>) -> Scopes {
        let mut parent = FxHashMap::default();
        // The open scopes: (depth, DIE offset), innermost last.
        let mut open: Vec<(isize, usize)> = Vec::new();
        let mut depth = 0isize;
        let mut entries = unit.entries();
        while let Ok(Some((delta, entry))) = entries.next_dfs() {
            depth += delta;
            while open.last().is_some_and(|&(d, _)| d >= depth) {
                open.pop();
            }
            if is_scope(entry.tag()) {
                let offset = entry.offset().0;
                if let Some(&(_, around)) = open.last() {
                    parent.insert(offset, around);
                }
                open.push((depth, offset));
            }
        }
        Scopes { parent }
    }
}

/// DIEs whose name qualifies the names inside them.
fn is_scope(tag: gimli::DwTag) -> bool {
    matches!(
        tag,
        gimli::DW_TAG_namespace
            | gimli::DW_TAG_class_type
            | gimli::DW_TAG_structure_type
            | gimli::DW_TAG_union_type
            | gimli::DW_TAG_subprogram
    )
}

/// Whether the unit's root says it is C++ (any standard's).
fn is_cpp(unit: UnitRef<'_, Reader>) -> bool {
    let mut entries = unit.entries();
    let Ok(Some((_, root))) = entries.next_dfs() else {
        return false;
    };
    matches!(
        root.attr_value(gimli::DW_AT_language),
        Ok(Some(AttributeValue::Language(
            gimli::DW_LANG_C_plus_plus
                | gimli::DW_LANG_C_plus_plus_03
                | gimli::DW_LANG_C_plus_plus_11
                | gimli::DW_LANG_C_plus_plus_14
                | gimli::DW_LANG_C_plus_plus_17
                | gimli::DW_LANG_C_plus_plus_20
                | gimli::DW_LANG_ObjC_plus_plus
        )))
    )
}

/// Follows abstract origins and specifications from the DIE at `die`,
/// within the unit.
fn follow(unit: UnitRef<'_, Reader>, die: usize) -> Option<Chain> {
    let mut chain = Chain {
        linkage: None,
        name: None,
        declaration: die,
    };
    let mut at = die;
    for _ in 0..MAX_CHAIN {
        let entry = unit.entry(UnitOffset(at)).ok()?;
        chain.declaration = at;
        if chain.linkage.is_none() {
            chain.linkage = string(unit, &entry, gimli::DW_AT_linkage_name)
                .or_else(|| string(unit, &entry, gimli::DW_AT_MIPS_linkage_name));
        }
        if chain.name.is_none() {
            chain.name = string(unit, &entry, gimli::DW_AT_name);
        }
        let next = [gimli::DW_AT_abstract_origin, gimli::DW_AT_specification]
            .into_iter()
            .find_map(|a| match entry.attr_value(a) {
                Ok(Some(AttributeValue::UnitRef(o))) => Some(o.0),
                _ => None,
            });
        match next {
            // A reference to itself would loop to the limit for nothing.
            Some(n) if n != at => at = n,
            _ => break,
        }
    }
    Some(chain)
}

/// `name` with the scopes around the DIE at `declaration`, outermost first.
fn qualify(unit: UnitRef<'_, Reader>, scopes: &Scopes, declaration: usize, name: String) -> String {
    let mut parts = vec![name];
    let mut at = declaration;
    for _ in 0..MAX_SCOPES {
        let Some(&around) = scopes.parent.get(&at) else {
            break;
        };
        let Ok(entry) = unit.entry(UnitOffset(around)) else {
            break;
        };
        let own = string(unit, &entry, gimli::DW_AT_name);
        at = around;
        parts.push(match entry.tag() {
            gimli::DW_TAG_namespace => own.unwrap_or_else(|| "(anonymous namespace)".into()),
            gimli::DW_TAG_class_type => own.unwrap_or_else(|| "(anonymous class)".into()),
            gimli::DW_TAG_structure_type => own.unwrap_or_else(|| "(anonymous struct)".into()),
            gimli::DW_TAG_union_type => own.unwrap_or_else(|| "(anonymous union)".into()),
            // A local class or a lambda: the function around it is named
            // by its own chain, and its scopes are those of its
            // declaration.
            _ => match follow(unit, around) {
                Some(Chain {
                    name: Some(n),
                    declaration,
                    ..
                }) => {
                    at = declaration;
                    n
                }
                _ => "(anonymous function)".into(),
            },
        });
    }
    parts.reverse();
    parts.join("::")
}

/// The string value of attribute `name` of `entry`, when it has one.
fn string(
    unit: UnitRef<'_, Reader>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, Reader>,
    name: gimli::DwAt,
) -> Option<String> {
    let value = entry.attr_value(name).ok()??;
    let s = unit.attr_string(value).ok()?;
    let text = s.to_string_lossy().ok()?.into_owned();
    Some(text)
}

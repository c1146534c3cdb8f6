//! Addresses named by the mappings they lie in (`[heap]`, `[stack]`,
//! `[anon]`, `[shm]`, a file), from the areas a live run or its trace
//! recorded ([`coprof_core::areas`]), as perf names a sample that no
//! symbol covers by its mapping: the data no variable holds, the code no
//! function symbol covers (a JIT's, a stripped program's).

use crate::input::InputInfo;
use coprof_core::areas::{Area, Areas};

/// The input's areas, when it recorded some and the user did not ask
/// for raw addresses only (`--no-symbols`).
pub fn known(info: &InputInfo) -> Option<&Areas> {
    Some(&info.meta.areas).filter(|a| !a.is_empty() && !info.raw_addresses)
}

/// The mapping `addr` lies in: the narrowest, where several held it over
/// the run: the anonymous `.bss` a loader mapped over part of a
/// library's file mapping, say.
pub fn area_of(info: &InputInfo, addr: u64) -> Option<&Area> {
    known(info)?
        .overlapping(addr, addr)
        .min_by_key(|a| a.end - a.start)
}

/// The mapping `addr` lies in ([`area_of`]), by its full name (a file's
/// host path).
pub fn of(info: &InputInfo, addr: u64) -> Option<String> {
    area_of(info, addr).map(|a| a.name.clone())
}

/// A code address in words: `named` (its symbol's place) when there is
/// one, else its mapping (`area`, as [`of`] gives it) by its short name.
pub fn or_mapping(named: Option<String>, area: Option<&str>) -> Option<String> {
    named.or_else(|| area.map(short))
}

/// The names of the areas of `areas` that overlap `[lo, hi]`, each once,
/// by address.
pub fn names_in(areas: &Areas, lo: u64, hi: u64) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for a in areas.overlapping(lo, hi) {
        if !names.contains(&a.name) {
            names.push(a.name.clone());
        }
    }
    names
}

/// A mapping's name for a report's column: `[heap]` as it is, a file by
/// its name without its directory.
pub fn short(name: &str) -> String {
    if name.starts_with('[') {
        return name.to_string();
    }
    std::path::Path::new(name)
        .file_name()
        .map_or_else(|| name.to_string(), |f| f.to_string_lossy().into_owned())
}

/// Areas in words: `[heap]`, a file by its name (`prog`), or `first ..
/// last (N areas)`; `None` for none.
pub fn label(names: &[String]) -> Option<String> {
    match names {
        [] => None,
        [one] => Some(short(one)),
        [first, .., last] => Some(format!(
            "{} .. {} ({} areas)",
            short(first),
            short(last),
            names.len()
        )),
    }
}

/// A range of addresses in words: the data objects it covers
/// (`objects`), followed by the areas of no file it overlaps too
/// (`table + [heap]`); else the areas it lies in ([`label`]).
pub fn data_label(objects: Option<&str>, areas: Option<&[String]>) -> Option<String> {
    let areas = areas.unwrap_or_default();
    match objects {
        Some(o) => {
            let mut words = o.to_string();
            for a in areas.iter().filter(|a| a.starts_with('[')) {
                words.push_str(" + ");
                words.push_str(a);
            }
            Some(words)
        }
        None => label(areas),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn a_range_of_addresses_reads_as_its_objects_then_its_mappings() {
        let heap = owned(&["[heap]"]);
        assert_eq!(data_label(None, Some(&heap)).as_deref(), Some("[heap]"));
        assert_eq!(data_label(None, None), None);
        assert_eq!(data_label(None, Some(&[])), None);
        // Files read by their names; several mappings by the first and last.
        let three = owned(&["/w/build/prog", "[heap]", "[stack]"]);
        assert_eq!(
            data_label(None, Some(&three)).as_deref(),
            Some("prog .. [stack] (3 areas)")
        );
        // Objects first; then only the memory of no file, since the
        // objects already name the file's.
        assert_eq!(
            data_label(Some("table"), Some(&three)).as_deref(),
            Some("table + [heap] + [stack]")
        );
        assert_eq!(data_label(Some("table"), None).as_deref(), Some("table"));
    }
}

//! The ELF symbol table as a sorted list of function ranges: the fallback
//! for code without debug info (function + offset), as DCPI's tools fell
//! back to image symbols for code without line tables. Its data objects
//! (`STT_OBJECT`: global and static variables) in a list of their own name
//! the data an address range covers, as `perf mem` names a sample's data
//! symbol.

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

/// One function symbol: `[addr, addr + size)`.
#[derive(Clone, Debug)]
pub struct FunctionSymbol {
    /// Start address.
    pub addr: u64,
    /// Size in bytes; symbols recorded with size 0 extend to the next one.
    pub size: u64,
    /// Demangled name.
    pub name: String,
}

/// Function symbols sorted by address, for binary search.
#[derive(Clone, Debug, Default)]
pub struct SymbolTable {
    syms: Vec<FunctionSymbol>,
    /// How many of them are PLT stubs ([`SymbolTable::add_stubs`]).
    stubs: usize,
}

impl SymbolTable {
    /// Reads the function symbols of `file` (the static symbol table, or
    /// the dynamic one when the static table was stripped).
    pub fn from_object(file: &object::File<'_>) -> SymbolTable {
        let mut syms = by_address(file, SymbolKind::Text);
        // A zero-sized symbol (hand-written assembly) runs to the next one,
        // within its section: `_init`, alone in `.init`, does not take in
        // the PLT after it.
        let sections: Vec<(u64, u64)> = file
            .sections()
            .filter(|s| s.size() > 0)
            .map(|s| (s.address(), s.address().saturating_add(s.size())))
            .collect();
        for i in 0..syms.len() {
            if syms[i].size == 0 {
                let at = syms[i].addr;
                let section_end = sections
                    .iter()
                    .find(|&&(lo, hi)| lo <= at && at < hi)
                    .map(|s| s.1);
                let next = syms.get(i + 1).map(|n| n.addr);
                if let Some(end) = [next, section_end].into_iter().flatten().min() {
                    syms[i].size = end - at;
                }
            }
        }
        SymbolTable { syms, stubs: 0 }
    }

    /// Adds the procedure linkage table's stubs ([`crate::plt`]), which
    /// the symbol table does not hold. They do not count in [`len`]: a
    /// stripped program with them still has no symbols of its own.
    ///
    /// [`len`]: SymbolTable::len
    pub fn add_stubs(&mut self, stubs: Vec<FunctionSymbol>) {
        let taken: Vec<u64> = self.syms.iter().map(|s| s.addr).collect();
        let new: Vec<FunctionSymbol> = stubs
            .into_iter()
            .filter(|s| taken.binary_search(&s.addr).is_err())
            .collect();
        self.stubs += new.len();
        self.syms.extend(new);
        self.syms.sort_by_key(|s| s.addr);
    }

    /// Reads the data objects of `file` with a size (global and static
    /// variables; the static symbol table, or the dynamic one when the
    /// static table was stripped). Thread-local ones are left out: their
    /// addresses are offsets in each thread's block, not addresses.
    pub fn data_from_object(file: &object::File<'_>) -> SymbolTable {
        let mut syms = by_address(file, SymbolKind::Data);
        syms.retain(|s| s.size > 0);
        SymbolTable { syms, stubs: 0 }
    }

    /// Number of function symbols from the symbol table (PLT stubs are
    /// not counted).
    pub fn len(&self) -> usize {
        self.syms.len() - self.stubs
    }

    /// True when the symbol table has no function symbol (stripped
    /// binary), PLT stubs or not.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The symbol containing `pc` and the offset of `pc` in it.
    pub fn find(&self, pc: u64) -> Option<(&FunctionSymbol, u64)> {
        let i = self.syms.partition_point(|s| s.addr <= pc).checked_sub(1)?;
        let s = &self.syms[i];
        let off = pc - s.addr;
        // A last zero-sized symbol has no known end: accept only its start.
        (off < s.size || (s.size == 0 && off == 0)).then_some((s, off))
    }

    /// The symbols whose code overlaps `[lo, hi]`, by address.
    pub fn overlapping(&self, lo: u64, hi: u64) -> &[FunctionSymbol] {
        if lo > hi {
            return &[];
        }
        let mut start = self.syms.partition_point(|s| s.addr < lo);
        if start > 0 && self.find(lo).is_some_and(|(s, _)| s.addr < lo) {
            start -= 1;
        }
        let end = self.syms.partition_point(|s| s.addr <= hi);
        &self.syms[start..end.max(start)]
    }

    /// Looks a function up by name (the first symbol of that name).
    pub fn by_name(&self, name: &str) -> Option<&FunctionSymbol> {
        self.syms.iter().find(|s| s.name == name)
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.syms.capacity() * std::mem::size_of::<FunctionSymbol>()
            + self.syms.iter().map(|s| s.name.capacity()).sum::<usize>()
    }
}

/// The defined symbols of `kind` in `file` (its static symbol table, or
/// the dynamic one when the static table was stripped), by address, one
/// per address: the largest, so that the sized symbol wins over a
/// zero-sized alias.
fn by_address(file: &object::File<'_>, kind: SymbolKind) -> Vec<FunctionSymbol> {
    let mut syms = collect(file.symbols(), kind);
    if syms.is_empty() {
        syms = collect(file.dynamic_symbols(), kind);
    }
    syms.sort_by(|a, b| a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)));
    syms.dedup_by_key(|s| s.addr);
    syms
}

/// The defined symbols of `kind` with a name and an address.
fn collect<'a, S: ObjectSymbol<'a>>(
    it: impl Iterator<Item = S>,
    kind: SymbolKind,
) -> Vec<FunctionSymbol> {
    it.filter(|s| s.kind() == kind && s.is_definition() && s.address() != 0)
        .filter_map(|s| {
            let name = s.name().ok()?;
            if name.is_empty() {
                return None;
            }
            let name = crate::demangle::demangle_or_keep(name.into());
            Some(FunctionSymbol {
                addr: s.address(),
                size: s.size(),
                name,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(v: &[(u64, u64, &str)]) -> SymbolTable {
        SymbolTable {
            syms: v
                .iter()
                .map(|&(addr, size, n)| FunctionSymbol {
                    addr,
                    size,
                    name: n.into(),
                })
                .collect(),
            stubs: 0,
        }
    }

    #[test]
    fn finds_containing_symbol_and_offset() {
        let t = table(&[(0x100, 0x10, "a"), (0x120, 0x20, "b"), (0x200, 0, "c")]);
        assert_eq!(t.find(0xff).map(|x| x.1), None);
        let (s, off) = t.find(0x10f).unwrap();
        assert_eq!((s.name.as_str(), off), ("a", 0xf));
        assert!(t.find(0x110).is_none(), "gap between a and b");
        assert_eq!(t.find(0x13f).unwrap().0.name, "b");
        assert!(t.find(0x140).is_none());
        assert_eq!(t.find(0x200).unwrap().0.name, "c");
        assert!(t.find(0x201).is_none());
        assert_eq!(t.by_name("b").unwrap().addr, 0x120);
    }

    #[test]
    fn a_range_overlaps_the_symbols_it_touches() {
        let t = table(&[(0x100, 0x10, "a"), (0x120, 0x20, "b"), (0x200, 0, "c")]);
        let names = |lo, hi| -> Vec<&str> {
            t.overlapping(lo, hi)
                .iter()
                .map(|s| s.name.as_str())
                .collect()
        };
        assert_eq!(names(0x0, 0xfff), ["a", "b", "c"]);
        assert_eq!(names(0x108, 0x121), ["a", "b"], "from inside a to inside b");
        assert_eq!(names(0x110, 0x11f), Vec::<&str>::new(), "the gap");
        assert_eq!(names(0x110, 0x120), ["b"], "b's first byte");
        assert_eq!(names(0x13f, 0x1ff), ["b"], "b's last byte");
        assert_eq!(names(0x140, 0x1ff), Vec::<&str>::new());
        assert_eq!(names(0x200, 0x200), ["c"]);
        assert_eq!(
            names(0x201, 0x300),
            Vec::<&str>::new(),
            "past c's one known byte"
        );
        assert_eq!(names(0x120, 0x100), Vec::<&str>::new(), "upside down");
    }
}

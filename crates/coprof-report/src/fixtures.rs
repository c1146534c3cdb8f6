//! Locations the writers' tests profile: a function's own line, and a
//! helper from a header inlined into `main`.

use coprof_symbols::{Frame, Location, Quality};

/// `pc` in `function`, at `file:line`, from DWARF, inlined nowhere.
pub fn at(pc: u64, function: &str, file: &str, line: u32) -> Location {
    Location {
        pc,
        function: Some(function.into()),
        offset: None,
        file: Some(file.into()),
        line: Some(line),
        column: None,
        inlined: Vec::new(),
        source: Quality::Dwarf,
    }
}

/// `pc` in `helper` at `/src/util.h:line`, inlined into `main` at
/// `/src/prog.c:20`.
pub fn inlined(pc: u64, line: u32) -> Location {
    let mut l = at(pc, "helper", "/src/util.h", line);
    l.inlined.push(Frame {
        function: Some("main".into()),
        file: Some("/src/prog.c".into()),
        line: Some(20),
        column: None,
    });
    l
}

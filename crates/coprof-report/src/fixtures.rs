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

/// `main` (0x1000, calling from 0x1004) calls `f` (0x2000), which calls
/// itself once from 0x2004 and returns from 0x2008: 8 instructions, 5 of
/// them `f`'s, 2 in its recursive call.
pub fn recursive() -> crate::PcProfile {
    use crate::{CallContext, ContextCost, Cost, Object, PcProfile};
    let mut p = PcProfile::new(vec![Cost::instructions()], vec!["prog".into()]);
    p.objects.push(Object {
        path: "/bin/prog".into(),
        start: 0,
        end: u64::MAX,
        build_id: None,
    });
    let mut pc = |pc: u64, function: &str, line: u32, n: u64| {
        p.push(pc, vec![n], Some(0), at(pc, function, "/src/prog.c", line))
    };
    let main = pc(0x1000, "main", 10, 2);
    let site = pc(0x1004, "main", 11, 1);
    let entry = pc(0x2000, "f", 20, 2);
    let again = pc(0x2004, "f", 21, 1);
    let ret = pc(0x2008, "f", 22, 2);
    let outer = p.push_call(CallContext {
        parent: None,
        call_site: site,
        callee: entry,
        calls: 1,
        thread: None,
    });
    let inner = p.push_call(CallContext {
        parent: Some(outer),
        call_site: again,
        callee: entry,
        calls: 1,
        thread: None,
    });
    for (context, pc, n) in [
        (None, main, 2),
        (None, site, 1),
        (Some(outer), entry, 1),
        (Some(outer), again, 1),
        (Some(outer), ret, 1),
        (Some(inner), entry, 1),
        (Some(inner), ret, 1),
    ] {
        p.push_context_cost(ContextCost {
            context,
            pc,
            values: vec![n],
            thread: None,
        });
    }
    p
}

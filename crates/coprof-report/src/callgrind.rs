//! A [`PcProfile`] in callgrind's text format, which `callgrind_annotate`
//! and KCachegrind read.
//!
//! The file follows valgrind's "Callgrind Format Specification" (version
//! 1): `positions: instr line`, so that every cost line is an instruction
//! address, its source line and one value per event; `ob=`, `fl=` and
//! `fn=` name the object, source file and function of the lines after
//! them, each name written in full once and then by its number (the
//! format's name compression). A PC inside a function inlined into
//! another counts in the function it was inlined into, as callgrind
//! counts it, at the inlined code's own file and line (`fi=`, and `fe=`
//! back to the function's file): KCachegrind then shows the inlined
//! lines in their own file. Code no symbol names counts in a function
//! named after its file (`[libc.so.6]`), each instruction still a line of
//! its own ([`PcProfile::function_of`]).

use crate::pc_profile::{frames, PcProfile};
use std::collections::HashMap;
use std::io::{self, Write};

/// What a PC without a known object or file is written as.
const UNKNOWN: &str = "???";

/// Names written once in full, then by number (`(3)`).
#[derive(Default)]
struct Names(HashMap<String, usize>);

impl Names {
    /// `(id) name` the first time, `(id)` after.
    fn put(&mut self, name: &str) -> String {
        if let Some(id) = self.0.get(name) {
            return format!("({id})");
        }
        let id = self.0.len() + 1;
        self.0.insert(name.to_string(), id);
        format!("({id}) {name}")
    }
}

/// Writes `p` to `out` in callgrind's format. `creator` names the tool
/// that made it (`coprof 0.1.0`). PCs whose every value is zero are left
/// out; the others are written in address order.
pub fn write(out: &mut impl Write, p: &PcProfile, creator: &str) -> io::Result<()> {
    let events: Vec<&str> = p.costs.iter().map(|c| c.event.as_str()).collect();
    let totals = join(&p.totals());
    writeln!(out, "# callgrind format")?;
    writeln!(out, "version: 1")?;
    writeln!(out, "creator: {creator}")?;
    if let Some(pid) = p.pid {
        writeln!(out, "pid: {pid}")?;
    }
    writeln!(out, "cmd: {}", p.command.join(" "))?;
    writeln!(out, "part: 1")?;
    writeln!(out)?;
    writeln!(out, "positions: instr line")?;
    for c in &p.costs {
        writeln!(out, "event: {} : {}", c.event, c.description)?;
    }
    writeln!(out, "events: {}", events.join(" "))?;
    writeln!(out, "summary: {totals}")?;
    writeln!(out)?;

    let (mut objects, mut files, mut functions) =
        (Names::default(), Names::default(), Names::default());
    let mut order: Vec<usize> = (0..p.pcs.len()).collect();
    order.sort_by_key(|&i| p.pcs[i].pc);
    // The object, function file and function of the lines written last,
    // and the file a reader takes their source lines to be in.
    let mut at: Option<(&str, &str, String)> = None;
    let mut line_file = String::new();
    for i in order {
        let pc = &p.pcs[i];
        if pc.values.iter().all(|&v| v == 0) {
            continue;
        }
        let object = pc.object.map_or(UNKNOWN, |o| p.objects[o].path.as_str());
        let frames = frames(&pc.location);
        let fn_file = frames.last().and_then(|f| f.file).unwrap_or(UNKNOWN);
        let function = p.function_of(pc);
        let own_file = frames.first().and_then(|f| f.file).unwrap_or(fn_file);
        let line = frames.first().and_then(|f| f.line).unwrap_or(0);

        let same_object = at.as_ref().is_some_and(|a| a.0 == object);
        if !same_object {
            writeln!(out, "ob={}", objects.put(object))?;
        }
        let same_function = same_object
            && at
                .as_ref()
                .is_some_and(|a| a.1 == fn_file && a.2 == function);
        if !same_function {
            // A reader takes `fn=` to be in the file it read last, an
            // `fi=` line's included (callgrind_annotate does).
            if line_file != fn_file || !same_object {
                writeln!(out, "fl={}", files.put(fn_file))?;
            }
            writeln!(out, "fn={}", functions.put(&function))?;
            line_file = fn_file.to_string();
            at = Some((object, fn_file, function));
        }
        if own_file != line_file {
            let key = if own_file == fn_file { "fe" } else { "fi" };
            writeln!(out, "{key}={}", files.put(own_file))?;
            line_file = own_file.to_string();
        }
        writeln!(out, "{:#x} {line} {}", pc.pc, join(&pc.values))?;
    }
    writeln!(out)?;
    writeln!(out, "totals: {totals}")?;
    Ok(())
}

/// Values separated by spaces.
fn join(values: &[u64]) -> String {
    let words: Vec<String> = values.iter().map(u64::to_string).collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{at, inlined};
    use crate::{Cost, Object};
    use coprof_symbols::Location;

    fn text(p: &PcProfile) -> String {
        let mut out = Vec::new();
        write(&mut out, p, "coprof test").unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn names_are_written_once_then_by_number_and_inlined_lines_name_their_file_until_the_next_function(
    ) {
        let mut p = PcProfile::new(
            vec![Cost::instructions(), Cost::samples()],
            vec!["prog".into(), "-v".into()],
        );
        p.pid = Some(42);
        p.objects.push(Object {
            path: "/bin/prog".into(),
            start: 0,
            end: u64::MAX,
        });
        p.push(
            0x1004,
            vec![7, 0],
            Some(0),
            at(0x1004, "main", "/src/prog.c", 19),
        );
        p.push(
            0x1000,
            vec![3, 1],
            Some(0),
            at(0x1000, "main", "/src/prog.c", 18),
        );
        p.push(0x1008, vec![9, 2], Some(0), inlined(0x1008, 5));
        p.push(0x1010, vec![1, 0], Some(0), inlined(0x1010, 6));
        p.push(
            0x1100,
            vec![1, 0],
            Some(0),
            at(0x1100, "other", "/src/prog.c", 30),
        );
        p.push(
            0x100c,
            vec![1, 0],
            Some(0),
            at(0x100c, "main", "/src/prog.c", 21),
        );
        p.push(
            0x2000,
            vec![0, 0],
            Some(0),
            at(0x2000, "cold", "/src/prog.c", 40),
        );
        p.push(0x9000, vec![2, 0], None, Location::address(0x9000));
        let expected = "\
# callgrind format
version: 1
creator: coprof test
pid: 42
cmd: prog -v
part: 1

positions: instr line
event: Ir : Instructions retired
event: Samples : Samples taken
events: Ir Samples
summary: 24 3

ob=(1) /bin/prog
fl=(1) /src/prog.c
fn=(1) main
0x1000 18 3 1
0x1004 19 7 0
fi=(2) /src/util.h
0x1008 5 9 2
fe=(1)
0x100c 21 1 0
fi=(2)
0x1010 6 1 0
fl=(1)
fn=(2) other
0x1100 30 1 0
ob=(2) ???
fl=(3) ???
fn=(3) 0x9000
0x9000 0 2 0

totals: 24 3
";
        assert_eq!(text(&p), expected);
    }
}

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
//!
//! A profile with calls also has callgrind's call arcs: after a call
//! site's own cost line, each function called from it (`cfi=`, `cfn=`;
//! `cob=` when its code is in another object), the calls made
//! (`calls=`, with the callee's entry and line) and their inclusive cost,
//! from call to return, on a line at the call site. Arcs of the same call
//! site to the same function in different contexts are added up, as
//! callgrind adds them: with recursion, a function's incoming arcs count
//! its recursive calls' costs again, as in callgrind's own files.
//!
//! One thread's part of a profile ([`PcProfile::of_thread`]) names its
//! thread in the header (`thread:`), as each file callgrind writes with
//! `--separate-threads=yes` does.

use crate::pc_profile::{add, frames, PcCost, PcProfile};
use std::collections::{BTreeMap, HashMap};
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

/// A function called from a call site: its object, file and name.
type Callee = (String, String, String);

/// The calls made from one call site to one function, in every context.
struct Arc {
    /// The first callee entry seen (its position on the `calls=` line).
    target: usize,
    calls: u64,
    inclusive: Vec<u64>,
}

/// Where a PC's code is, read from its frames once.
struct Place {
    /// Its object, its function's file and its function.
    callee: Callee,
    /// Its own file and line: the innermost frame's.
    own_file: String,
    line: u32,
}

/// Where `pc`'s code is.
fn place(p: &PcProfile, pc: &PcCost) -> Place {
    let object = pc.object.map_or(UNKNOWN, |o| p.objects[o].path.as_str());
    let frames = frames(&pc.location);
    let fn_file = frames.last().and_then(|f| f.file).unwrap_or(UNKNOWN);
    let own_file = frames.first().and_then(|f| f.file).unwrap_or(fn_file);
    Place {
        own_file: own_file.to_string(),
        line: frames.first().and_then(|f| f.line).unwrap_or(0),
        callee: (object.to_string(), fn_file.to_string(), p.function_of(pc)),
    }
}

/// The call arcs of `p` by call site (an index in `p.pcs`), each call
/// site's callees in name order.
fn arcs(p: &PcProfile) -> HashMap<usize, BTreeMap<Callee, Arc>> {
    let mut out: HashMap<usize, BTreeMap<Callee, Arc>> = HashMap::new();
    let inclusive = p.inclusive();
    for (c, call) in p.calls.iter().enumerate() {
        let callee = place(p, &p.pcs[call.callee]).callee;
        let arc = out
            .entry(call.call_site)
            .or_default()
            .entry(callee)
            .or_insert_with(|| Arc {
                target: call.callee,
                calls: 0,
                inclusive: vec![0; p.costs.len()],
            });
        arc.calls += call.calls;
        add(&mut arc.inclusive, &inclusive[c]);
    }
    out
}

/// Writes `p` to `out` in callgrind's format. `creator` names the tool
/// that made it (`coprof 0.1.0`). PCs whose every value is zero are left
/// out, but for call sites; the others are written in address order.
pub fn write(out: &mut impl Write, p: &PcProfile, creator: &str) -> io::Result<()> {
    let events: Vec<&str> = p.costs.iter().map(|c| c.event.as_str()).collect();
    let totals = join(&p.totals());
    writeln!(out, "# callgrind format")?;
    writeln!(out, "version: 1")?;
    writeln!(out, "creator: {creator}")?;
    if let Some(pid) = p.pid {
        writeln!(out, "pid: {pid}")?;
    }
    if let Some(tid) = p.thread {
        writeln!(out, "thread: {tid}")?;
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
    let arcs = arcs(p);
    let mut order: Vec<usize> = (0..p.pcs.len()).collect();
    order.sort_by_key(|&i| p.pcs[i].pc);
    // The object, function file and function of the lines written last,
    // and the file a reader takes their source lines to be in.
    let mut at: Option<Callee> = None;
    let mut line_file = String::new();
    for i in order {
        let pc = &p.pcs[i];
        let calls = arcs.get(&i);
        if pc.values.iter().all(|&v| v == 0) && calls.is_none() {
            continue;
        }
        let Place {
            callee: here,
            own_file,
            line,
        } = place(p, pc);
        let (object, fn_file, function) = (&here.0, &here.1, &here.2);

        let same_object = at.as_ref().is_some_and(|a| a.0 == *object);
        if !same_object {
            writeln!(out, "ob={}", objects.put(object))?;
        }
        let same_function = same_object
            && at
                .as_ref()
                .is_some_and(|a| a.1 == *fn_file && a.2 == *function);
        if !same_function {
            // A reader takes `fn=` to be in the file it read last, an
            // `fi=` line's included (callgrind_annotate does).
            if line_file != *fn_file || !same_object {
                writeln!(out, "fl={}", files.put(fn_file))?;
            }
            writeln!(out, "fn={}", functions.put(function))?;
            line_file = fn_file.clone();
        }
        if own_file != line_file {
            let key = if own_file == *fn_file { "fe" } else { "fi" };
            writeln!(out, "{key}={}", files.put(&own_file))?;
            line_file = own_file;
        }
        writeln!(out, "{:#x} {line} {}", pc.pc, join(&pc.values))?;
        for ((c_object, c_file, c_function), arc) in calls.into_iter().flatten() {
            if c_object != object {
                writeln!(out, "cob={}", objects.put(c_object))?;
            }
            writeln!(out, "cfi={}", files.put(c_file))?;
            writeln!(out, "cfn={}", functions.put(c_function))?;
            let target = &p.pcs[arc.target];
            let target_line = place(p, target).line;
            writeln!(out, "calls={} {:#x} {target_line}", arc.calls, target.pc)?;
            writeln!(out, "{:#x} {line} {}", pc.pc, join(&arc.inclusive))?;
        }
        at = Some(here);
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
            build_id: None,
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

    #[test]
    fn a_call_site_has_its_arcs_after_its_own_cost_with_the_inclusive_cost_of_each_call() {
        let expected = "\
ob=(1) /bin/prog
fl=(1) /src/prog.c
fn=(1) main
0x1000 10 2
0x1004 11 1
cfi=(1)
cfn=(2) f
calls=1 0x2000 20
0x1004 11 5
fn=(2)
0x2000 20 2
0x2004 21 1
cfi=(1)
cfn=(2)
calls=1 0x2000 20
0x2004 21 2
0x2008 22 2

totals: 8
";
        let t = text(&crate::fixtures::recursive());
        assert!(t.ends_with(expected), "{t}");
    }

    #[test]
    fn a_threads_part_names_its_thread_in_the_header_and_a_whole_profile_names_none() {
        let mut p = crate::fixtures::recursive();
        p.pid = Some(42);
        assert!(!text(&p).contains("thread:"));
        p.thread = Some(43);
        assert!(
            text(&p).contains("\npid: 42\nthread: 43\ncmd: prog\n"),
            "{}",
            text(&p)
        );
    }

    /// A cost line as a reader of the format sees it: its object, the
    /// file its line is in, its function and the file the function was
    /// named in, its address, line and values.
    #[derive(Debug, PartialEq)]
    struct Read {
        object: String,
        file: String,
        function: String,
        function_file: String,
        pc: u64,
        line: u32,
        values: Vec<u64>,
    }

    /// Reads a file of ours as the format's specification says: names in
    /// full once then by number, `fl=` and `fi=`/`fe=` set the file of the
    /// lines after them, `fn=` takes the file last set (as
    /// callgrind_annotate does).
    fn read(text: &str) -> Vec<Read> {
        let mut names: HashMap<(&str, String), String> = HashMap::new();
        // `kind` is the name's space: objects, files (fl, fi, fe share
        // it) or functions.
        let mut name = |kind: &'static str, v: &str| -> String {
            let (id, rest) = v.split_once(')').unwrap();
            let key = (kind, id.to_string());
            let rest = rest.trim();
            if !rest.is_empty() {
                names.insert(key.clone(), rest.to_string());
            }
            names[&key].clone()
        };
        let kind = |k: &str| match k {
            "fn" => "fn",
            "ob" => "ob",
            _ => "fl",
        };
        let (mut object, mut file, mut function, mut function_file) =
            (String::new(), String::new(), String::new(), String::new());
        let mut out = Vec::new();
        for line in text.lines() {
            if let Some((k, v)) = line.split_once('=') {
                let n = name(kind(k), v);
                match k {
                    "ob" => object = n,
                    "fl" | "fi" | "fe" => file = n,
                    "fn" => {
                        function = n;
                        function_file = file.clone();
                    }
                    _ => panic!("unknown line {line}"),
                }
            } else if let Some(hex) = line.strip_prefix("0x") {
                let words: Vec<&str> = hex.split(' ').collect();
                out.push(Read {
                    object: object.clone(),
                    file: file.clone(),
                    function: function.clone(),
                    function_file: function_file.clone(),
                    pc: u64::from_str_radix(words[0], 16).unwrap(),
                    line: words[1].parse().unwrap(),
                    values: words[2..].iter().map(|w| w.parse().unwrap()).collect(),
                });
            }
        }
        out
    }

    proptest::proptest! {
        /// Whatever the PCs, their functions, files and inlining, a reader
        /// finds every PC with a cost once, in its object, its function
        /// named in the function's own file, at its innermost line and
        /// file, with its values; and the totals are theirs.
        #[test]
        fn a_reader_finds_every_pc_where_it_is(
            pcs in proptest::collection::btree_map(
                0u64..4096,
                (0usize..3, 0usize..4, 0usize..3, 1u32..50, proptest::option::of(0usize..3), 0u64..5),
                1..60,
            )
        ) {
            let objects = ["/bin/prog", "/lib/libc.so.6"];
            let functions = ["main", "hot", "cold", "walk"];
            let files = ["/src/a.c", "/src/b.h", "/src/c.h"];
            let mut p = PcProfile::new(vec![Cost::instructions(), Cost::samples()], vec![]);
            for path in objects {
                p.objects.push(Object { path: path.into(), start: 0, end: u64::MAX, build_id: None });
            }
            for (&pc, &(object, function, file, line, inlined_into, n)) in &pcs {
                let pc = pc * 2;
                let mut l = match function {
                    3 => Location::address(pc),
                    _ => at(pc, functions[function], files[file], line),
                };
                if let (Some(caller), 0..=2) = (inlined_into, function) {
                    l.inlined.push(coprof_symbols::Frame {
                        function: Some(functions[caller].into()),
                        file: Some(files[(file + 1) % 3].into()),
                        line: Some(line + 100),
                        column: None,
                    });
                }
                let object = (object < 2).then_some(object);
                p.push(pc, vec![n, n / 2], object, l);
            }
            let got = read(&text(&p));
            let mut want = Vec::new();
            for pc in &p.pcs {
                if pc.values.iter().all(|&v| v == 0) {
                    continue;
                }
                let frames = frames(&pc.location);
                let fn_file = frames.last().and_then(|f| f.file).unwrap_or(UNKNOWN);
                want.push(Read {
                    object: pc.object.map_or(UNKNOWN, |o| objects[o]).to_string(),
                    file: frames.first().and_then(|f| f.file).unwrap_or(fn_file).to_string(),
                    function: p.function_of(pc),
                    function_file: fn_file.to_string(),
                    pc: pc.pc,
                    line: frames.first().and_then(|f| f.line).unwrap_or(0),
                    values: pc.values.clone(),
                });
            }
            want.sort_by_key(|r| r.pc);
            proptest::prop_assert_eq!(got, want);
        }
    }
}

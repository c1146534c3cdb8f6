//! `coprof export`: a run's exact profile written for other tools, and
//! read back by them: valgrind's `callgrind_annotate` and Go's `go tool
//! pprof` (both installed by scripts/install-deps.sh); its calls against
//! those valgrind's callgrind counts on the native build.

mod common;

use common::{coprof, json_of, succeeded};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A program whose hot loop calls a function kept apart (`hot`) and one
/// inlined into `main` whose code the line directives place in a file of
/// its own, `helper.h`, as a header's inline function is.
const PROG: &str = r#"
#line 1 "helper.h"
static inline unsigned long mix(unsigned long x) {
    x ^= x >> 7;
    x *= 0x9E3779B97F4A7C15ul;
    return x ^ (x >> 29);
}
#line 8 "prog.c"
__attribute__((noinline)) unsigned long hot(unsigned long x) {
    for (int i = 0; i < 50; i++)
        x = x * 31 + i;
    return x;
}
volatile unsigned long sink;
int main(void) {
    unsigned long s = 1;
    for (int i = 0; i < 20000; i++)
        s = mix(s) + hot(s);
    sink = s;
    return 0;
}
"#;

fn program(dir: &Path) -> PathBuf {
    let flags = ["-static", "-O2", "-g", "-Wl,--build-id=sha1"];
    common::compile_with(dir, "prog", PROG, &flags)
}

/// `coprof export --json -o OUT ARGS -- PROG` run with a fixed seed, so
/// that two runs of the program are the same run.
fn export(out: &Path, args: &[&str], prog: &Path) -> serde_json::Value {
    json_of(
        coprof()
            .args(["export", "--json", "--top", "100", "-o"])
            .arg(out)
            .args(args)
            .args(["--random-seed", "1", "--"])
            .arg(prog),
    )
}

/// `coprof export --json -o OUT ARGS INPUT` of a trace file: its summary.
fn export_file(out: &Path, args: &[&str], input: &Path) -> serde_json::Value {
    json_of(
        coprof()
            .args(["export", "--json", "-o"])
            .arg(out)
            .args(args)
            .arg(input),
    )
}

/// The count of `function` in an export's summary (all its objects).
fn count_of(summary: &serde_json::Value, function: &str) -> u64 {
    summary["top"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["function"] == function)
        .map(|f| f["count"].as_u64().unwrap())
        .sum()
}

/// What `callgrind_annotate FILE` prints: the program's total, and the
/// cost of each `file:function` (callgrind's own names: a function's
/// inlined code under its own file).
fn annotate(file: &Path) -> (u64, HashMap<String, u64>) {
    let out = succeeded(
        Command::new("callgrind_annotate")
            .args(["--auto=no", "--threshold=100"])
            .arg(file),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let number = |w: &str| w.replace(',', "").parse::<u64>().ok();
    let mut total = None;
    let mut functions = HashMap::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(n) = words.first().and_then(|w| number(w)) else {
            continue;
        };
        if line.contains("PROGRAM TOTALS") {
            total = Some(n);
        } else if let Some(name) = words.iter().find(|w| w.contains(':')) {
            functions.insert(name.to_string(), n);
        }
    }
    (
        total.unwrap_or_else(|| panic!("no total in:\n{text}")),
        functions,
    )
}

/// The cost `annotate` gives the names ending with `suffix`, together.
fn ending_with(costs: &HashMap<String, u64>, suffix: &str) -> u64 {
    costs
        .iter()
        .filter(|(k, _)| k.ends_with(suffix))
        .map(|(_, &n)| n)
        .sum()
}

/// `go tool pprof -top ARGS` of `file`: the total and each name's flat
/// value (counts, or nanoseconds with `-unit=ns`).
fn pprof_top(file: &Path, args: &[&str]) -> (u64, HashMap<String, u64>) {
    let (total, columns) = pprof_columns(file, args);
    (total, columns.into_iter().map(|(k, v)| (k, v.0)).collect())
}

/// `go tool pprof -top ARGS` of `file`: the total and each name's flat
/// and cumulative values.
fn pprof_columns(file: &Path, args: &[&str]) -> (u64, HashMap<String, (u64, u64)>) {
    let out = succeeded(
        Command::new("go")
            .args([
                "tool",
                "pprof",
                "-top",
                "-nodefraction=0",
                "-nodecount=1000",
            ])
            .args(args)
            .arg(file),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let total = text
        .lines()
        .find_map(|l| {
            l.split(" of ")
                .nth(1)?
                .strip_suffix(" total")?
                .trim_end_matches("ns")
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no total in:\n{text}"));
    let mut flat = HashMap::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() >= 6 && words[1].ends_with('%') {
            // Counts bare, or nanoseconds with `-unit=ns`.
            let n = |w: &str| w.trim_end_matches("ns").parse::<u64>().ok();
            if let (Some(own), Some(cum)) = (n(words[0]), n(words[3])) {
                flat.insert(words[5..].join(" "), (own, cum));
            }
        }
    }
    (total, flat)
}

/// A program whose calls are known: `fib(20)` (21,891 calls, 21,890 of
/// them recursive) and 30 calls of `middle`, each calling `leaf` 1,000
/// times. `noipa` keeps every call a call, and the same on both ISAs.
const CALLS: &str = r#"
#include <stdio.h>
__attribute__((noipa)) unsigned fib(unsigned n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
__attribute__((noipa)) unsigned leaf(unsigned x) {
    return (x * 2654435761u) >> 7;
}
__attribute__((noipa)) unsigned middle(unsigned n) {
    unsigned s = 0;
    for (unsigned i = 0; i < n; i++)
        s += leaf(i);
    return s;
}
int main(void) {
    unsigned s = fib(20);
    for (int i = 0; i < 30; i++)
        s += middle(1000);
    printf("%u\n", s);
    return 0;
}
"#;

/// The flags both builds of [`CALLS`] take: no call made a jump.
const CALLS_FLAGS: [&str; 4] = ["-static", "-O1", "-g", "-fno-optimize-sibling-calls"];

/// The calls of a callgrind file between the functions of [`CALLS`]:
/// (caller, callee) → calls. Callgrind's names of recursion levels
/// (`fib'2`) are the function's.
fn calls_between_program_functions(file: &Path) -> HashMap<(String, String), u64> {
    let ours = ["main", "fib", "middle", "leaf"];
    let mut names: HashMap<String, String> = HashMap::new();
    let (mut caller, mut callee) = (String::new(), String::new());
    let mut calls = HashMap::new();
    for line in std::fs::read_to_string(file).unwrap().lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        match key {
            "fn" | "cfn" => {
                let (id, name) = value.split_once(')').unwrap();
                let name = name.trim();
                if !name.is_empty() {
                    let plain = name.split('\'').next().unwrap();
                    names.insert(id.to_string(), plain.to_string());
                }
                let name = names[id].clone();
                if key == "fn" {
                    caller = name;
                } else {
                    callee = name;
                }
            }
            "calls" => {
                let n: u64 = value.split(' ').next().unwrap().parse().unwrap();
                if ours.contains(&caller.as_str()) && ours.contains(&callee.as_str()) {
                    *calls.entry((caller.clone(), callee.clone())).or_insert(0) += n;
                }
            }
            _ => {}
        }
    }
    calls
}

#[test]
fn the_calls_followed_are_those_callgrind_counts_on_the_native_build() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile_with(dir.path(), "calls", CALLS, &CALLS_FLAGS);
    let native = common::host_compile(dir.path(), "calls-x86", CALLS, &CALLS_FLAGS);
    let ours = dir.path().join("callgrind.out.rv64");
    let summary = export(&ours, &[], &prog);
    let theirs = dir.path().join("callgrind.out.native");
    succeeded(
        Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", theirs.display()))
            .arg(&native),
    );
    let want: HashMap<(String, String), u64> = [
        ("main", "fib", 1),
        ("fib", "fib", 21_890),
        ("main", "middle", 30),
        ("middle", "leaf", 30_000),
    ]
    .into_iter()
    .map(|(a, b, n)| ((a.to_string(), b.to_string()), n))
    .collect();
    assert_eq!(calls_between_program_functions(&theirs), want);
    assert_eq!(calls_between_program_functions(&ours), want);
    assert!(summary["calls"]["calls"].as_u64().unwrap() > 21_891 + 30_030);
    // The recursion folded: a handful of contexts, not one per call.
    assert!(
        summary["calls"]["contexts"].as_u64().unwrap() < 1000,
        "{summary}"
    );
    // callgrind_annotate reads the arcs: `main` with its callees is
    // nearly the whole run.
    let out = succeeded(
        Command::new("callgrind_annotate")
            .args(["--inclusive=yes", "--auto=no"])
            .arg(&ours),
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let main = text
        .lines()
        .find(|l| l.contains("calls.c:main"))
        .unwrap_or_else(|| panic!("{text}"));
    let share: f64 = main
        .split('(')
        .nth(1)
        .unwrap()
        .split('%')
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(share > 90.0, "{main}");
}

#[test]
fn pprof_stacks_count_a_caller_with_its_callees_and_a_recursive_function_once() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile_with(dir.path(), "calls", CALLS, &CALLS_FLAGS);
    let pb = dir.path().join("calls.pb.gz");
    let summary = export(&pb, &[], &prog);
    let (total, columns) = pprof_columns(&pb, &[]);
    let (fib, middle, leaf) = (columns["fib"], columns["middle"], columns["leaf"]);
    assert_eq!(fib.1, fib.0, "fib's recursion counts once");
    assert!(fib.0 > 21_891 * 5);
    assert_eq!(middle.1, middle.0 + leaf.0);
    assert_eq!(leaf.1, leaf.0);
    assert!(columns["main"].1 >= fib.1 + middle.1);
    assert_eq!(columns["_start"].1, total, "everything runs under _start");
    // The summary gives the same inclusive counts.
    let inclusive = |f: &str| {
        summary["top"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"] == f)
            .map(|t| t["inclusive"].as_u64().unwrap())
    };
    assert_eq!(inclusive("fib"), Some(fib.1));
    assert_eq!(inclusive("middle"), Some(middle.1));
    // `leaf`'s samples have `middle` then `main` above them.
    let stack = ["leaf", "middle", "main", "__libc_start_call_main"];
    let stacks = traces(&pb);
    assert!(
        stacks
            .iter()
            .any(|s| s.windows(stack.len()).any(|w| w == stack)),
        "{stacks:?}"
    );
    // --flat leaves the stacks out: the same counts, one frame each.
    let flat = dir.path().join("flat.pb.gz");
    let flat_summary = export(&flat, &["--flat"], &prog);
    assert!(flat_summary.get("calls").is_none());
    let (flat_total, flat_columns) = pprof_columns(&flat, &[]);
    assert_eq!(flat_total, total);
    assert_eq!(flat_columns["middle"], (middle.0, middle.0));
}

/// Two threads, each calling a function of its own 200,000 times: far
/// longer than a turn on the simulator's hart, so that they take turns.
const THREADS: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
__attribute__((noipa)) unsigned leaf_a(unsigned x) { return x * 2654435761u >> 3; }
__attribute__((noipa)) unsigned leaf_b(unsigned x) { return x * 40503u >> 5; }
__attribute__((noipa)) void *worker_a(void *arg) {
    prctl(PR_SET_NAME, "worker-a");
    unsigned s = 0;
    for (unsigned i = 0; i < 200000; i++) s += leaf_a(i);
    *(unsigned *)arg = s;
    return 0;
}
__attribute__((noipa)) void *worker_b(void *arg) {
    prctl(PR_SET_NAME, "worker-b");
    unsigned s = 0;
    for (unsigned i = 0; i < 200000; i++) s += leaf_b(i);
    *(unsigned *)arg = s;
    return 0;
}
int main(void) {
    pthread_t a, b;
    unsigned ra, rb;
    pthread_create(&a, 0, worker_a, &ra);
    pthread_create(&b, 0, worker_b, &rb);
    pthread_join(a, 0);
    pthread_join(b, 0);
    printf("%u %u\n", ra, rb);
    return 0;
}
"#;

/// `dir/NAME`: the trace of every instruction of a run of `prog`.
fn traced(dir: &Path, name: &str, prog: &Path) -> PathBuf {
    let trace = dir.join(name);
    succeeded(
        coprof()
            .args(["run", "--random-seed", "1", "--trace"])
            .arg(&trace)
            .arg("--")
            .arg(prog),
    );
    trace
}

/// The stacks `go tool pprof -traces` prints, each leaf first (after its
/// `thread` label, when it has one).
fn traces(pb: &Path) -> Vec<Vec<String>> {
    let out = succeeded(
        Command::new("go")
            .args(["tool", "pprof", "-traces"])
            .arg(pb),
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split("-----------+")
        .map(|t| {
            t.lines()
                .filter(|l| !l.starts_with('-'))
                // The thread's id stands for its labels.
                .filter(|l| !l.trim_start().starts_with("thread_name:"))
                .filter_map(|l| l.split_whitespace().last().map(str::to_string))
                .collect()
        })
        .collect()
}

/// The thread labels of the samples whose leaf is `leaf` in `stacks` (as
/// [`traces`] gives them, a sample's label first), each once.
fn threads_of(stacks: &[Vec<String>], leaf: &str) -> Vec<String> {
    let mut threads: Vec<String> = (stacks.iter())
        .filter(|s| s.get(1).is_some_and(|f| f == leaf))
        .map(|s| s[0].clone())
        .collect();
    threads.sort();
    threads.dedup();
    threads
}

/// The thread each of `leaves` was sampled in, in `pb`'s labels: one
/// each, and not the same.
fn one_thread_each(pb: &Path, leaves: [&str; 2]) -> [String; 2] {
    let stacks = traces(pb);
    let [a, b] = leaves.map(|leaf| threads_of(&stacks, leaf));
    assert_eq!((a.len(), b.len()), (1, 1), "{leaves:?}: {a:?} {b:?}");
    assert_ne!(a, b);
    [a[0].clone(), b[0].clone()]
}

#[test]
fn each_thread_of_a_program_has_stacks_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let mut flags = CALLS_FLAGS.to_vec();
    flags.push("-pthread");
    let prog = common::compile_with(dir.path(), "threads", THREADS, &flags);
    let pb = dir.path().join("threads.pb.gz");
    export(&pb, &[], &prog);
    // Every stack of a worker's leaf is its worker's, started by the C
    // library's thread start, with nothing of main's.
    let leaves = |stacks: &[Vec<String>], leaf: &str| -> Vec<Vec<String>> {
        stacks
            .iter()
            .filter(|s| s.first().is_some_and(|f| f == leaf))
            .cloned()
            .collect()
    };
    // The same from a profile's pass, whose reports are fed on threads of
    // their own: the switches reach them in order with the runs.
    let profiled = dir.path().join("profiled.pb.gz");
    succeeded(
        coprof()
            .args(["profile", "--random-seed", "1", "--threads", "2", "--pprof"])
            .arg(&profiled)
            .arg("--")
            .arg(&prog),
    );
    // And from a trace file of the run, which records the switches: the
    // same stacks with the same counts as the live run's.
    let trace = traced(dir.path(), "threads.cpt", &prog);
    let from_trace = dir.path().join("from-trace.pb.gz");
    export_file(&from_trace, &[], &trace);
    assert_eq!(traces(&from_trace), traces(&pb));
    // With each thread's costs apart, every sample is labelled by its
    // thread: each worker's leaf under one thread of its own, and the
    // counts per function those of the profile with threads together.
    let apart = dir.path().join("apart.pb.gz");
    let summary = export(&apart, &["--separate-threads"], &prog);
    assert_eq!(summary["threads"], 3, "{summary}");
    let labelled = traces(&apart);
    let [a, _] = one_thread_each(&apart, ["leaf_a", "leaf_b"]);
    assert_eq!(pprof_top(&apart, &[]), pprof_top(&pb, &[]));
    // Flat, each thread's counts apart all the same.
    let flat_apart = dir.path().join("flat-apart.pb.gz");
    let summary = export(&flat_apart, &["--flat", "--separate-threads"], &prog);
    assert_eq!(summary["threads"], 3, "{summary}");
    assert!(summary.get("calls").is_none(), "{summary}");
    one_thread_each(&flat_apart, ["leaf_a", "leaf_b"]);
    assert_eq!(pprof_top(&flat_apart, &[]), pprof_top(&pb, &[]));
    // A profile's pass gives its export the option: the same labelled
    // stacks; without an export to give it to, the option is refused.
    let profiled_apart = dir.path().join("profiled-apart.pb.gz");
    succeeded(
        coprof()
            .args([
                "profile",
                "--random-seed",
                "1",
                "--separate-threads",
                "--pprof",
            ])
            .arg(&profiled_apart)
            .arg("--")
            .arg(&prog),
    );
    // (Thread ids differ from run to run: each is named by its rank.)
    let ranked = |stacks: Vec<Vec<String>>| -> Vec<Vec<String>> {
        let mut tids: Vec<u64> = stacks
            .iter()
            .filter_map(|s| s.first()?.parse().ok())
            .collect();
        tids.sort_unstable();
        tids.dedup();
        let rank = |t: &String| t.parse().ok().and_then(|t| tids.binary_search(&t).ok());
        stacks
            .into_iter()
            .filter_map(|mut s| {
                s[0] = format!("thread #{}", rank(s.first()?)?);
                Some(s)
            })
            .collect()
    };
    let (ours, export_s) = (ranked(traces(&profiled_apart)), ranked(labelled.clone()));
    assert!(
        ours.len() > 10 && ours == export_s,
        "{} stacks against {}",
        ours.len(),
        export_s.len()
    );
    coprof()
        .args(["profile", "--separate-threads", "--"])
        .arg(&prog)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "give --pprof FILE or --callgrind FILE",
        ));
    let focused = pprof_top(&apart, &[&format!("-tagfocus=thread={a}")]).1;
    assert!(
        focused.contains_key("leaf_a") && !focused.contains_key("leaf_b"),
        "{focused:?}"
    );
    // and by the name the thread gave itself.
    let by_name = pprof_top(&apart, &["-tagfocus=thread_name=worker-b"]).1;
    assert!(
        by_name.contains_key("leaf_b") && !by_name.contains_key("leaf_a"),
        "{by_name:?}"
    );
    // A callgrind profile is a file per thread, as callgrind writes it:
    // each worker's leaf in its thread's file alone, and the files' costs
    // per function add up to those of the file of every thread.
    let (cg, cg_apart) = (
        dir.path().join("callgrind.out.t"),
        dir.path().join("callgrind.out.apart"),
    );
    export(&cg, &[], &prog);
    let summary = export(&cg_apart, &["--separate-threads"], &prog);
    let parts = summary["per_thread"].as_array().unwrap();
    assert_eq!(parts.len(), 3, "{summary}");
    assert!(
        !cg_apart.exists(),
        "no file of every thread beside the parts"
    );
    let (whole_total, whole) = annotate(&cg);
    let mut sums: HashMap<String, u64> = HashMap::new();
    let mut total = 0;
    let mut with_leaf = Vec::new();
    for part in parts {
        let tid = part["thread"].as_u64().unwrap();
        let file = PathBuf::from(part["output"].as_str().unwrap());
        assert_eq!(file, dir.path().join(format!("callgrind.out.apart-{tid}")));
        assert!(std::fs::read_to_string(&file)
            .unwrap()
            .contains(&format!("\nthread: {tid}\n")));
        let (n, functions) = annotate(&file);
        assert_eq!(n, part["total"].as_u64().unwrap(), "{summary}");
        total += n;
        for (name, n) in functions {
            if name.ends_with(":leaf_a") || name.ends_with(":leaf_b") {
                with_leaf.push((name.clone(), tid));
            }
            *sums.entry(name).or_insert(0) += n;
        }
    }
    assert_eq!(total, whole_total);
    assert_eq!(sums, whole);
    with_leaf.sort();
    assert_eq!(with_leaf.len(), 2, "each leaf in one file: {with_leaf:?}");
    assert_ne!(with_leaf[0].1, with_leaf[1].1, "{with_leaf:?}");
    // A trace of samples of the run keeps its threads: its export keeps
    // each worker's function under a thread of its own too.
    let sampled = dir.path().join("sampled.cpt");
    succeeded(
        coprof()
            .args(["sample", "--sampler", "counter:7", "-o"])
            .arg(&sampled)
            .arg(&trace),
    );
    let sampled_pb = dir.path().join("sampled.pb.gz");
    let summary = export_file(&sampled_pb, &["--separate-threads"], &sampled);
    assert_eq!(summary["threads"], 3, "{summary}");
    one_thread_each(&sampled_pb, ["leaf_a", "leaf_b"]);
    // `coprof info` counts the switches: the main thread's start, then at
    // least one turn of each worker and main's return to join them.
    let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
    assert_eq!(info["version"], 2);
    assert!(info["switches"].as_u64().unwrap() >= 4, "{info}");
    // and each thread's events: all of them, the workers' the most.
    let threads = info["threads"].as_array().unwrap();
    let events: Vec<u64> = threads
        .iter()
        .map(|t| t["events"].as_u64().unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{info}");
    assert_eq!(events.iter().sum::<u64>(), info["events"].as_u64().unwrap());
    assert!(
        events[1] > 1_000_000 && events[2] > 1_000_000 && events[0] < events[1],
        "{info}"
    );
    // and each one's name: the program's for the first, and the names
    // the workers gave themselves.
    let names: Vec<&str> = threads
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["threads", "worker-a", "worker-b"], "{info}");
    for stacks in [traces(&pb), traces(&profiled)] {
        for (leaf, worker) in [("leaf_a", "worker_a"), ("leaf_b", "worker_b")] {
            let of_leaf = leaves(&stacks, leaf);
            assert!(!of_leaf.is_empty(), "{stacks:?}");
            for s in of_leaf {
                assert_eq!(s[1], worker, "{s:?}");
                assert!(s.contains(&"start_thread".to_string()), "{s:?}");
                assert!(!s.contains(&"main".to_string()), "{s:?}");
            }
        }
    }
}

#[test]
fn callgrind_annotate_reads_the_instructions_of_each_function_and_inlined_file() {
    let dir = tempfile::tempdir().unwrap();
    let prog = program(dir.path());
    let file = dir.path().join("callgrind.out.prog");
    let summary = export(&file, &[], &prog);
    assert_eq!(summary["format"], "callgrind");
    assert_eq!(summary["event"], "Ir");
    // Every instruction the simulator retired, as `coprof run` counts them.
    let run = succeeded(
        coprof()
            .args(["run", "--stats", "--random-seed", "1", "--"])
            .arg(&prog),
    );
    let retired = common::retired(&run.stderr);
    assert_eq!(summary["total"].as_u64().unwrap(), retired);

    let (total, functions) = annotate(&file);
    assert_eq!(total, retired);
    let named = |suffix: &str| ending_with(&functions, suffix);
    // `hot` alone: 50 rounds of a few instructions, 20,000 times.
    let hot = named("prog.c:hot");
    assert_eq!(hot, count_of(&summary, "hot"));
    assert!(hot > 20_000 * 50 * 2, "{functions:?}");
    // `main`'s cost is its own lines and those of `mix`, inlined into it
    // from helper.h: callgrind_annotate lists them apart.
    let (main_own, main_mix) = (named("prog.c:main"), named("helper.h:main"));
    assert!(main_mix >= 20_000 * 5, "{functions:?}");
    assert_eq!(main_own + main_mix, count_of(&summary, "main"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("\nfi=(") && text.contains("/helper.h\n"),
        "{text}"
    );
}

#[test]
fn go_tool_pprof_reads_the_same_counts_with_inlined_functions_as_frames() {
    let dir = tempfile::tempdir().unwrap();
    let prog = program(dir.path());
    let pb = dir.path().join("prog.pb.gz");
    let callgrind = dir.path().join("callgrind.out.prog");
    let summary = export(&pb, &[], &prog);
    assert_eq!(summary["format"], "pprof");
    assert_eq!(summary["sample_type"], "instructions");
    let (total, flat) = pprof_top(&pb, &[]);
    assert_eq!(total, summary["total"].as_u64().unwrap());
    assert_eq!(flat["hot"], count_of(&summary, "hot"));
    // pprof counts inlined code in the inlined function (`mix (inline)`),
    // which callgrind counts in `main` under helper.h's lines.
    export(&callgrind, &[], &prog);
    let (_, annotated) = annotate(&callgrind);
    let mix_lines = ending_with(&annotated, "helper.h:main");
    assert_eq!(flat["mix (inline)"], mix_lines, "{flat:?}");
    // The inlined frame's caller is `main`, in the same stack.
    let traces = succeeded(
        Command::new("go")
            .args(["tool", "pprof", "-traces"])
            .arg(&pb),
    );
    let traces = String::from_utf8(traces.stdout).unwrap();
    assert!(
        traces
            .lines()
            .any(|l| l.trim_end().ends_with("mix (inline)")),
        "{traces}"
    );
    // The program's mapping carries its build ID, as readelf reads it.
    let notes = succeeded(Command::new("readelf").arg("-n").arg(&prog));
    let notes = String::from_utf8(notes.stdout).unwrap();
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap_or_else(|| panic!("no build ID: {notes}"));
    let raw = succeeded(Command::new("go").args(["tool", "pprof", "-raw"]).arg(&pb));
    let raw = String::from_utf8(raw.stdout).unwrap();
    let mapping = raw
        .lines()
        .skip_while(|l| *l != "Mappings")
        .find(|l| l.contains(prog.to_str().unwrap()))
        .unwrap_or_else(|| panic!("no mapping of the program: {raw}"));
    assert!(mapping.contains(&format!(" {id} ")), "{mapping} lacks {id}");
}

#[test]
fn a_live_run_and_its_trace_give_the_same_profile_and_loads_alone_count_the_loads() {
    let dir = tempfile::tempdir().unwrap();
    let prog = program(dir.path());
    let trace = traced(dir.path(), "prog.cpt", &prog);
    // A live run counts blocks, a trace every instruction's event.
    let cost_lines = |file: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(file).unwrap();
        text.lines()
            .filter(|l| l.starts_with("0x"))
            .map(String::from)
            .collect()
    };
    for classes in [None, Some("load")] {
        let extra: Vec<&str> = classes.map_or(vec![], |c| vec!["--classes", c]);
        let (live, traced) = (
            dir.path().join("callgrind.out.live"),
            dir.path().join("callgrind.out.traced"),
        );
        let a = export(&live, &extra, &prog);
        succeeded(
            coprof()
                .args(["export", "-o"])
                .arg(&traced)
                .args(&extra)
                .arg(&trace),
        );
        let lines = cost_lines(&live);
        assert!(lines.len() > 100, "{lines:?}");
        assert_eq!(lines, cost_lines(&traced), "classes {classes:?}");
        if classes.is_some() {
            let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
            assert_eq!(a["total"], info["classes"]["load"], "{info}");
            assert_eq!(a["event"], "load");
        }
    }
}

#[test]
fn a_native_programs_samples_export_to_pprof_named_by_function() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::host_compile(dir.path(), "hot", common::HOT, &["-O1", "-g"]);
    let pb = dir.path().join("hot.pb.gz");
    let summary = json_of(
        coprof()
            .args(["export", "--json", "-o"])
            .arg(&pb)
            .arg("--")
            .arg(&prog),
    );
    assert_eq!(summary["sample_type"], "samples");
    assert_eq!(summary["top"][0]["function"], "hot_loop", "{summary}");
    assert!(
        summary["top"][0]["share"].as_f64().unwrap() > 0.8,
        "{summary}"
    );
    let (total, flat) = pprof_top(&pb, &["-sample_index=samples"]);
    assert_eq!(total, summary["total"].as_u64().unwrap());
    let hot = summary["top"][0]["count"].as_u64().unwrap();
    assert_eq!(flat["hot_loop"], hot);
    // The CPU time each sample stands for, shown by default, in
    // nanoseconds: the samples times the period.
    let period = summary["period_ns"].as_u64().unwrap();
    assert_eq!(period, 31_000);
    let (total_ns, flat_ns) = pprof_top(&pb, &["-unit=ns"]);
    assert_eq!(total_ns, total * period);
    assert_eq!(flat_ns["hot_loop"], hot * period);
}

/// `coprof export --json --top 100 -o OUT ARGS -- PROG` of a native
/// program: its summary.
fn native_export(prog: &Path, out: &Path, args: &[&str]) -> serde_json::Value {
    json_of(
        coprof()
            .args(["export", "--json", "--top", "100", "-o"])
            .arg(out)
            .args(args)
            .arg("--")
            .arg(prog),
    )
}

/// [`native_export`] of a native program, once its summary says that at
/// least `whole` of its stacks reached their thread's first frame.
fn native_stacks(prog: &Path, pb: &Path, args: &[&str], whole: f64) -> serde_json::Value {
    let summary = native_export(prog, pb, args);
    let calls = &summary["calls"];
    let share = calls["whole_stacks"].as_f64().unwrap() / calls["stacks"].as_f64().unwrap();
    assert!(share >= whole, "{summary}");
    summary
}

/// The export to `pb` of a trace of native program `prog` recorded with
/// `-g` to `trace`: a stack for each event, which `coprof info` counts;
/// the trace says the program's process and how many of its stacks
/// reached their thread's first frame, at least `whole` of them, and the
/// export says the same. Its summary.
fn recorded_stacks(
    prog: &Path,
    trace: &Path,
    pb: &Path,
    whole: f64,
    options: &[&str],
) -> serde_json::Value {
    succeeded(
        coprof()
            .args(["record", "-g"])
            .args(options)
            .arg("-o")
            .arg(trace)
            .arg("--")
            .arg(prog),
    );
    let info = json_of(coprof().args(["info", "--json"]).arg(trace));
    assert_eq!(info["version"], 3, "{info}");
    assert_eq!(info["stacks"], info["events"], "{info}");
    assert!(info["meta"]["pid"].as_u64().unwrap() > 1, "{info}");
    let kept = info["meta"]["whole_stacks"].as_f64().unwrap();
    assert!(kept >= whole * info["stacks"].as_f64().unwrap(), "{info}");
    let summary = export_file(pb, &[], trace);
    assert_eq!(summary["calls"]["stacks"], summary["total"], "{summary}");
    assert_eq!(summary["calls"]["whole_stacks"], kept as u64, "{summary}");
    summary
}

/// Asserts that `coprof record ARGS -- prog` is refused as bad input
/// saying `says`, before the program runs.
fn record_refused(prog: &Path, args: &[&str], says: &str) {
    coprof()
        .arg("record")
        .args(args)
        .args(["-o", "/dev/null", "--"])
        .arg(prog)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(says));
}

/// The stacks of `pb` whose leaf is `leaf`, leaf first, as `go tool
/// pprof -traces` prints them: at least one.
fn stacks_of(pb: &Path, leaf: &str) -> Vec<Vec<String>> {
    let stacks: Vec<Vec<String>> = (traces(pb).into_iter())
        .filter(|s| s.first().is_some_and(|f| f == leaf))
        .collect();
    assert!(!stacks.is_empty(), "no {leaf} in {}", pb.display());
    stacks
}

/// What the programs that time themselves share, put before each
/// ([`timed`]): `cpu()`, the process's CPU time in seconds; `sink`, which
/// keeps their work; and `leaf`, 2,000 rounds of arithmetic that call
/// nothing.
const TIMED: &str = r#"
#include <time.h>
static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
volatile unsigned sink;
__attribute__((noipa)) unsigned leaf(unsigned x) {
    for (int i = 0; i < 2000; i++) x = x * 2654435761u + 1;
    return x;
}
"#;

/// The C program `body`, after [`TIMED`].
fn timed(body: &str) -> String {
    format!("{TIMED}{body}")
}

/// A program whose time is known by caller: `leaf` called once per round
/// from `once`, three times from `thrice` and twice through a pointer from
/// `by_pointer`, for 300 ms of its CPU time. Built without frame
/// pointers, so that only its CFI can unwind it. `thrice` realigns its
/// stack for a variable-length array, so its CFI finds its caller's
/// frame by DWARF expressions (`DW_CFA_def_cfa_expression`).
///
/// The clock is read (a system call) once every 64 rounds, not at every
/// round: the code right after a system call gets more samples than its
/// time. With a read at every round, `once`, which comes right after it,
/// had 18 to 20% of `main`'s samples where its time is a sixth, and
/// `by_pointer` 27 to 32% where it is a third (CI once met 26%); with a
/// read every 64 rounds, 16.5 to 16.8% and 32.7 to 33.6%.
const STACKS: &str = r#"
unsigned (*volatile through)(unsigned) = leaf;
__attribute__((noipa)) void once(void) { sink += leaf(sink); }
__attribute__((noipa)) void thrice(int n) {
    _Alignas(64) volatile unsigned char aligned[64];
    volatile char vla[n];
    vla[0] = sink;
    aligned[0] = vla[0];
    for (int i = 0; i < 3; i++) sink += leaf(sink + aligned[0] + i);
}
__attribute__((noipa)) void by_pointer(void) {
    for (int i = 0; i < 2; i++) sink += through(sink + i);
}
int main(void) {
    double end = cpu() + 0.3;
    while (cpu() < end)
        for (int r = 0; r < 64; r++) {
            once();
            thrice(16);
            by_pointer();
        }
    return 0;
}
"#;

#[test]
fn a_native_programs_samples_carry_the_stacks_its_cfi_unwinds() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::host_compile(
        dir.path(),
        "stacks",
        &timed(STACKS),
        &["-O2", "-g", "-fomit-frame-pointer"],
    );
    // Nearly every stack reaches the thread's first frame (those taken
    // in the dynamic loader's first instructions do not); none says how
    // many calls were made.
    let pb = dir.path().join("stacks.pb.gz");
    let summary = native_stacks(&prog, &pb, &[], 0.98);
    let calls = &summary["calls"];
    assert_eq!(calls["stacks"], summary["total"], "{summary}");
    assert_eq!(calls["calls"], 0, "{summary}");
    let columns = leaf_under_its_callers(&pb);
    // The summary's inclusive column says the same.
    let inclusive = |f: &str| {
        (summary["top"].as_array().unwrap().iter())
            .find(|t| t["function"] == f)
            .and_then(|t| t["inclusive"].as_u64())
    };
    assert_eq!(inclusive("thrice"), Some(columns["thrice"].1), "{summary}");
    // A callgrind file has the same arcs: callgrind_annotate counts
    // main's callees in it.
    let cg = dir.path().join("callgrind.out.stacks");
    native_export(&prog, &cg, &[]);
    let arcs = std::fs::read_to_string(&cg).unwrap();
    assert!(arcs.contains("calls=0 "), "a stack counts no calls");
    let out = succeeded(
        Command::new("callgrind_annotate")
            .arg("--inclusive=yes")
            .arg(&cg),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let percent_of = |f: &str| {
        text.lines()
            .find(|l| l.ends_with(&format!(":{f} [{}]", prog.display())))
            .and_then(|l| l.split('(').nth(1)?.split('%').next()?.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no {f} in:\n{text}"))
    };
    assert!(percent_of("main") > 95.0, "{text}");
    assert!(percent_of("thrice") > percent_of("once") * 2.0, "{text}");
    // With --flat, no stack is unwound.
    let flat = native_export(&prog, &dir.path().join("flat.pb.gz"), &["--flat"]);
    assert!(flat.get("calls").is_none(), "{flat}");
    // `coprof record -g` keeps each sample's stack in the trace, and its
    // export has them as the live one has; `coprof info` counts them.
    let from_trace = dir.path().join("from-trace.pb.gz");
    recorded_stacks(
        &prog,
        &dir.path().join("stacks.cpt"),
        &from_trace,
        0.98,
        &[],
    );
    leaf_under_its_callers(&from_trace);
    // Without -g, the trace holds no stack and its export is flat.
    let plain = dir.path().join("plain.cpt");
    succeeded(
        coprof()
            .args(["record", "-o"])
            .arg(&plain)
            .arg("--")
            .arg(&prog),
    );
    let info = json_of(coprof().args(["info", "--json"]).arg(&plain));
    assert_eq!(info["version"], 2, "{info}");
    let summary = export_file(&dir.path().join("plain.pb.gz"), &[], &plain);
    assert!(summary.get("calls").is_none(), "{summary}");
    // Samples that do not stop the thread are unwound from the copy of
    // their stack the kernel makes, when their buffer is read: the same
    // stacks.
    let ring = dir.path().join("ring.pb.gz");
    let summary = recorded_stacks(
        &prog,
        &dir.path().join("ring.cpt"),
        &ring,
        0.98,
        &["--ring-buffer"],
    );
    assert_eq!(summary["calls"]["calls"], 0, "{summary}");
    leaf_under_its_callers(&ring);
}

/// The program of known callers built with frame pointers, recorded with
/// `--call-graph fp --ring-buffer`: each sample's stack is the kernel's
/// walk of its frame pointers, with `leaf`'s caller, which GCC's leaf
/// hides (it keeps no frame pointer, even with -fno-omit-frame-pointer),
/// unwound from the top of the stack by its CFI. Each `leaf` lies under
/// its true caller and `main`, in their shares of the time; the walk ends
/// in the C library, which keeps no frame pointers, and a note says so.
#[test]
fn stacks_from_frame_pointers_name_each_caller_a_leaf_would_hide() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::host_compile(
        dir.path(),
        "stacks-fp",
        &timed(STACKS),
        &["-O2", "-g", "-fno-omit-frame-pointer"],
    );
    let trace = dir.path().join("fp.cpt");
    let out = succeeded(
        coprof()
            .args(["record", "--ring-buffer", "--call-graph", "fp", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&prog),
    );
    let said = String::from_utf8(out.stderr).unwrap();
    assert!(
        said.contains(
            "stopped short of their thread's first frame: the kernel's walk of the frame pointers"
        ),
        "{said}"
    );
    let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
    assert_eq!(info["stacks"], info["events"], "{info}");
    assert_eq!(info["meta"]["sampling"]["frame_pointers"], true, "{info}");
    assert!(
        info["meta"]["sampling"].get("stack_copy").is_none(),
        "{info}"
    );
    let text = String::from_utf8(succeeded(coprof().arg("info").arg(&trace)).stdout).unwrap();
    assert!(
        text.contains("; stacks from the kernel's walk of the frame pointers"),
        "{text}"
    );
    let pb = dir.path().join("fp.pb.gz");
    export_file(&pb, &[], &trace);
    leaf_under_its_callers_from(&pb, None);
    // The same, live.
    let live = dir.path().join("live.pb.gz");
    native_export(&prog, &live, &["--ring-buffer", "--call-graph", "fp"]);
    leaf_under_its_callers_from(&live, None);
    // Frame pointers are walked into a ring buffer, with no copy of the
    // stack to size, and a copy's size is given once: other asks are
    // refused before the program runs.
    for (args, says) in [
        (&["--call-graph", "fp"][..], "add --ring-buffer"),
        (
            &[
                "--ring-buffer",
                "--call-graph",
                "fp",
                "--stack-copy",
                "1024",
            ][..],
            "--call-graph fp copies none",
        ),
        (
            &[
                "--ring-buffer",
                "--call-graph",
                "dwarf,16384",
                "--stack-copy",
                "8192",
            ][..],
            "give it once",
        ),
        (&["--call-graph", "dwarf,16384"][..], "add --ring-buffer"),
        (
            &["--call-graph", "fast"][..],
            "give fp, dwarf or dwarf,BYTES",
        ),
        (&["--call-graph", "dwarf,12"][..], "a multiple of 8"),
    ] {
        record_refused(&prog, args, says);
    }
}

/// A program whose time is spent 13 calls deep, each frame holding 1 KiB:
/// its stacks are deeper than the 8 KiB of them a sample taken into a
/// ring buffer copies by default.
const DEEP: &str = r#"
__attribute__((noipa)) unsigned deep(int n, unsigned x) {
    volatile unsigned char pad[1024];
    pad[n] = x;
    if (n == 0) return leaf(x + pad[0]);
    return deep(n - 1, x) + pad[n];
}
int main(void) {
    double end = cpu() + 0.3;
    while (cpu() < end) sink += deep(12, sink);
    return 0;
}
"#;

#[test]
fn a_ring_buffers_stacks_go_as_deep_as_the_copy_the_kernel_makes() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::host_compile(dir.path(), "deep", &timed(DEEP), &["-O1", "-g"]);
    // The record's stacks that reached their thread's first frame, as a
    // share, and the leaf's stacks in its export.
    let record = |copy: Option<&str>| {
        let name = copy.unwrap_or("default");
        let trace = dir.path().join(format!("{name}.cpt"));
        let out = succeeded(
            coprof()
                .args(["record", "-g", "--ring-buffer"])
                .args(copy.map(|c| ["--stack-copy", c]).iter().flatten())
                .arg("-o")
                .arg(&trace)
                .arg("--")
                .arg(&prog),
        );
        let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
        let whole = info["meta"]["whole_stacks"].as_f64().unwrap();
        let stacks = info["stacks"].as_f64().unwrap();
        assert_eq!(info["stacks"], info["events"], "{info}");
        let bytes = copy.map_or(8192, |c| c.parse().unwrap());
        assert_eq!(info["meta"]["sampling"]["stack_copy"], bytes, "{info}");
        let text = String::from_utf8(succeeded(coprof().arg("info").arg(&trace)).stdout).unwrap();
        let said = match copy {
            None => "; stacks unwound from the top 8,192 bytes the kernel copied;",
            Some(_) => "; stacks unwound from the top 32,768 bytes the kernel copied;",
        };
        assert!(text.contains(said), "{text}");
        // Where stacks stopped at the copy's end, a note counts them and
        // says what to do: all but those the copy held whole.
        let said = String::from_utf8(out.stderr).unwrap();
        let note = "stacks stopped at the end of the 8,192 bytes of their top the kernel copies \
                    at a sample, deeper than that (--stack-copy takes more)";
        // (The note's other parts, such as samples the kernel dropped,
        // follow after a semicolon.)
        let cut = (said.lines())
            .filter_map(|l| l.strip_prefix("coprof: note: "))
            .flat_map(|l| l.split("; "))
            .find_map(|part| part.strip_suffix(note))
            .map(|counts| counts.replace(',', ""));
        match copy {
            None => {
                let counts = cut.unwrap_or_else(|| panic!("no note in {said}"));
                let (cut, of) = counts.trim().split_once(" of ").unwrap();
                let cut: f64 = cut.parse().unwrap();
                assert_eq!(of.parse::<f64>().unwrap(), stacks, "{said}");
                assert!(cut >= 0.95 * (stacks - whole), "{said}");
            }
            Some(_) => assert!(cut.is_none(), "{said}"),
        }
        let pb = dir.path().join(format!("{name}.pb.gz"));
        export_file(&pb, &[], &trace);
        (whole / stacks, stacks_of(&pb, "leaf"))
    };
    // 8 KiB holds the leaf's frame and seven of `deep`'s: its stacks stop
    // there, the most of them, and none reaches `main`. (A recursion's
    // levels are folded: `deep` under `deep` is one call site.)
    let (whole, leaf) = record(None);
    assert!(whole < 0.5, "{whole} of the stacks whole");
    for s in &leaf {
        assert!(s[1] == "deep" && !s.iter().any(|f| f == "main"), "{s:?}");
    }
    // 32 KiB holds them all: the leaf under `deep`, `main` and `_start`.
    let (whole, leaf) = record(Some("32768"));
    assert!(whole > 0.95, "{whole} of the stacks whole");
    for s in &leaf {
        let main = s.iter().any(|f| f == "main");
        assert!(
            s[1] == "deep" && main && s.last().unwrap() == "_start",
            "{s:?}"
        );
    }
    // A size the kernel does not copy, and a copy without the stacks or
    // the ring buffer it is for, are refused before the program runs.
    for (args, says) in [
        (
            &["-g", "--ring-buffer", "--stack-copy", "100"][..],
            "a multiple of 8 from 8 to 65528",
        ),
        (
            &["-g", "--ring-buffer", "--stack-copy", "65536"][..],
            "a multiple of 8 from 8 to 65528",
        ),
        (&["-g", "--stack-copy", "16384"][..], "--ring-buffer"),
        (
            &["--ring-buffer", "--stack-copy", "16384"][..],
            "--call-graph",
        ),
    ] {
        record_refused(&prog, args, says);
    }
}

/// A program that spends a third of its time in a handler of its own
/// SIGPROF, which interrupts `work` (or `leaf` under it) every 2 ms of
/// its CPU time and calls `leaf` from the handler, until `main` ends.
const SIGNALS: &str = r#"
#include <signal.h>
#include <sys/time.h>
__attribute__((noipa)) void on_prof(int sig) {
    for (int i = 0; i < 20; i++) sink += leaf(sink + sig);
}
__attribute__((noipa)) void work(void) {
    for (int i = 0; i < 20; i++) sink += leaf(sink + i);
}
int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_prof;
#ifdef ALT_STACK
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
    sigaltstack(&ss, 0);
    sa.sa_flags = SA_ONSTACK;
#endif
    sigaction(SIGPROF, &sa, 0);
    struct itimerval every = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_PROF, &every, 0);
    double end = cpu() + 0.3;
    while (cpu() < end) work();
    /* Stopped, so that no signal interrupts the exit, which runs after
       main has returned and so is not under it. */
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, 0);
    return 0;
}
"#;

/// The stacks of `pb` that hold the handler `on_prof`: at least one.
fn in_handler(pb: &Path) -> Vec<Vec<String>> {
    let in_handler: Vec<Vec<String>> = traces(pb)
        .into_iter()
        .filter(|s| s.iter().any(|f| f == "on_prof"))
        .collect();
    assert!(!in_handler.is_empty(), "no on_prof in {}", pb.display());
    in_handler
}

#[test]
fn a_signal_handlers_stacks_go_on_through_the_code_it_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::host_compile(dir.path(), "signals", &timed(SIGNALS), &["-O2", "-g"]);
    let pb = dir.path().join("signals.pb.gz");
    native_stacks(&prog, &pb, &[], 0.98);
    // The same from the kernel's copy of each stack's top, which holds
    // the signal's frame and the code it interrupted.
    let ring = dir.path().join("ring.pb.gz");
    native_stacks(&prog, &ring, &["--ring-buffer"], 0.98);
    for pb in [&pb, &ring] {
        through_the_trampoline(&in_handler(pb));
    }
    // From frame pointers, the stacks stop at the trampoline: the
    // kernel's walk does not lead into the code the signal interrupted.
    // Each is the handler's calls, under nothing.
    let prog = common::host_compile(
        dir.path(),
        "signals-fp",
        &timed(SIGNALS),
        &["-O2", "-g", "-fno-omit-frame-pointer"],
    );
    let fp = dir.path().join("fp.pb.gz");
    native_export(&prog, &fp, &["--ring-buffer", "--call-graph", "fp"]);
    for s in in_handler(&fp) {
        assert_eq!(s.last().unwrap(), "on_prof", "{s:?}");
    }
    // A handler on a stack of its own (`sigaltstack`): a stopped
    // thread's stack goes on from it into the thread's own, through the
    // trampoline, as before.
    let prog = common::host_compile(
        dir.path(),
        "signals-alt",
        &timed(SIGNALS),
        &["-O2", "-g", "-DALT_STACK"],
    );
    let alt = dir.path().join("alt.pb.gz");
    native_stacks(&prog, &alt, &[], 0.98);
    through_the_trampoline(&in_handler(&alt));
    // From the kernel's copy, which starts at the handler's stack
    // pointer, on its own stack: the signal's context there names the
    // code interrupted, but its callers, on the thread's own stack, are
    // in no copy. Each stack ends there.
    let ring = dir.path().join("alt-ring.pb.gz");
    native_export(&prog, &ring, &["--ring-buffer"]);
    for s in in_handler(&ring) {
        let at = s.iter().position(|f| f == "on_prof").unwrap();
        assert_eq!(s[at + 1], "__restore_rt", "{s:?}");
        assert_eq!(s.len(), at + 3, "{s:?}");
    }
}

/// Asserts that each stack of `in_handler` goes under the handler to the
/// signal's trampoline, then the code it interrupted, under `main`, from
/// `_start`; and that the code most often interrupted is `leaf`.
fn through_the_trampoline(in_handler: &[Vec<String>]) {
    let mut interrupted = Vec::new();
    for s in in_handler {
        let at = s.iter().position(|f| f == "on_prof").unwrap();
        // The trampoline, which glibc's dynamic symbols leave unnamed,
        // known by its code.
        assert_eq!(s[at + 1], "__restore_rt", "{s:?}");
        let below = &s[at + 2..];
        assert!(
            below.contains(&"main".to_string()) && s.last().unwrap() == "_start",
            "{s:?}"
        );
        interrupted.push(below[0].as_str());
    }
    // Most signals interrupt `leaf`, the busiest; some the clock's
    // reading in `cpu`.
    assert!(interrupted.contains(&"leaf"), "{interrupted:?}");
}

/// A program that calls its work through code it makes at run time, as a
/// JIT's: no file holds that code and no CFI covers it, but it keeps a
/// frame pointer. Built with `-DPERF_MAP`, it names that code in
/// `/tmp/perf-PID.map`, as JITs do for perf.
const JIT: &str = r#"
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
__attribute__((noipa)) void work(void) {
    for (int i = 0; i < 3; i++) sink += leaf(sink + i);
}
int main(void) {
    /* Code made at run time, with no CFI: push rbp; mov rbp, rsp;
       call rdi; pop rbp; ret. It calls the function it is given. */
    static const unsigned char code[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3};
    void *jit = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memcpy(jit, code, sizeof code);
#ifdef PERF_MAP
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", getpid());
    FILE *map = fopen(path, "w");
    fprintf(map, "%lx %zx jit_trampoline\n", (unsigned long)jit, sizeof code);
    fclose(map);
#endif
    void (*call)(void (*)(void)) = (void (*)(void (*)(void)))jit;
    double end = cpu() + 0.3;
    while (cpu() < end) call(work);
    return 0;
}
"#;

#[test]
fn code_made_at_run_time_is_unwound_by_its_frame_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::host_compile(dir.path(), "jit", &timed(JIT), &["-O2", "-g"]);
    let pb = dir.path().join("jit.pb.gz");
    native_stacks(&prog, &pb, &[], 0.95);
    // `work` under the made code, named by its memory, under `main`.
    let under = |pb: &Path, jit: &str| {
        for s in stacks_of(pb, "leaf") {
            assert!(
                s[1] == "work" && s[2] == jit && s[3] == "main" && s.last().unwrap() == "_start",
                "{s:?}"
            );
        }
    };
    under(&pb, "[[anon]]");
    // Named by the JIT's perf map, where it wrote one: live, and from a
    // trace, which says the process whose map it is.
    let named = common::host_compile(
        dir.path(),
        "jit-map",
        &timed(JIT),
        &["-O2", "-g", "-DPERF_MAP"],
    );
    let live = dir.path().join("jit-map.pb.gz");
    let from_trace = dir.path().join("jit-map-trace.pb.gz");
    let summaries = [
        native_stacks(&named, &live, &[], 0.95),
        recorded_stacks(&named, &dir.path().join("jit.cpt"), &from_trace, 0.95, &[]),
    ];
    for summary in &summaries {
        let maps: Vec<&str> = (summary["objects"].as_array().unwrap().iter())
            .filter_map(|o| o.as_str())
            .filter(|o| o.starts_with("/tmp/perf-") && o.ends_with(".map"))
            .collect();
        for map in &maps {
            std::fs::remove_file(map).unwrap();
        }
        assert_eq!(maps.len(), 1, "{summary}");
    }
    under(&live, "jit_trampoline");
    under(&from_trace, "jit_trampoline");
}

/// A program that spends its time asking the kernel's vDSO the time.
const CLOCK: &str = r#"
#include <time.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
int main(void) {
    double end = now() + 0.3;
    while (now() < end) {
    }
    return 0;
}
"#;

#[test]
fn the_kernels_vdso_is_named_by_its_functions_live_and_from_a_trace() {
    if !std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .contains("[vdso]")
    {
        return; // A kernel that maps no vDSO (vdso=0).
    }
    let dir = tempfile::tempdir().unwrap();
    let prog = common::host_compile(dir.path(), "clock", CLOCK, &["-O2", "-g"]);
    let live = dir.path().join("clock.pb.gz");
    let from_trace = dir.path().join("clock-trace.pb.gz");
    let summaries = [
        native_stacks(&prog, &live, &[], 0.95),
        recorded_stacks(&prog, &dir.path().join("clock.cpt"), &from_trace, 0.95, &[]),
    ];
    for (summary, pb) in summaries.iter().zip([&live, &from_trace]) {
        // Most samples are in the vDSO's clock_gettime (`__vdso_` its
        // other name), whose object is the vDSO.
        let top = &summary["top"][0];
        let function = top["function"].as_str().unwrap();
        assert!(function.ends_with("clock_gettime"), "{summary}");
        assert_eq!(top["object"], "[vdso]", "{summary}");
        assert!(top["share"].as_f64().unwrap() > 0.3, "{summary}");
        // Called by the C library's, from `now` or `main`.
        for s in stacks_of(pb, function) {
            assert!(s.contains(&"main".to_string()), "{s:?}");
        }
    }
}

/// A plugin: a library that a program loads, runs and unloads.
const PLUGIN: &str = r#"
volatile unsigned sink;
void plugin_work(double seconds) {
    extern double cpu(void);
    double end = cpu() + seconds;
    while (cpu() < end)
        for (int i = 0; i < 2000; i++) sink = sink * 2654435761u + 1;
}
"#;

/// A program that runs the plugin named by its argument for 0.3 s of
/// its CPU time, unloads it, then works 0.1 s more on its own.
const LOADS_PLUGIN: &str = r#"
#include <dlfcn.h>
#include <time.h>
double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
volatile unsigned sink;
int main(int argc, char **argv) {
    void *plugin = dlopen(argv[1], RTLD_NOW);
    if (!plugin) return 1;
    void (*work)(double) = (void (*)(double))dlsym(plugin, "plugin_work");
    work(0.3);
    dlclose(plugin);
    double end = cpu() + 0.1;
    while (cpu() < end) sink++;
    return 0;
}
"#;

#[test]
fn a_library_unloaded_before_the_end_still_names_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = common::host_compile(
        dir.path(),
        "libplugin.so",
        PLUGIN,
        &["-O2", "-g", "-shared", "-fPIC"],
    );
    let prog = common::host_compile(
        dir.path(),
        "loads",
        LOADS_PLUGIN,
        &["-O2", "-g", "-rdynamic"],
    );
    let pb = dir.path().join("loads.pb.gz");
    let summary = json_of(
        coprof()
            .args(["export", "--json", "--flat", "-o"])
            .arg(&pb)
            .arg("--")
            .arg(&prog)
            .arg(&plugin),
    );
    // About three quarters of the time, named by the library's symbols.
    let share = count_of(&summary, "plugin_work") as f64 / summary["total"].as_f64().unwrap();
    assert!(share > 0.5, "{summary}");
    let objects = summary["objects"].as_array().unwrap();
    assert!(
        objects.iter().any(|o| o == plugin.to_str().unwrap()),
        "{summary}"
    );
}

/// [`STACKS`] in Go: `leaf` called once a round by `once` and three times
/// by `thrice`. Go's linker writes no `.eh_frame`, only a compressed
/// `.debug_frame`.
const GO_STACKS: &str = r#"package main

import (
	"fmt"
	"time"
)

//go:noinline
func leaf(x uint32) uint32 {
	for i := 0; i < 2000; i++ {
		x = x*2654435761 + 1
	}
	return x
}

//go:noinline
func once(s uint32) uint32 { return leaf(s) }

//go:noinline
func thrice(s uint32) uint32 {
	for i := uint32(0); i < 3; i++ {
		s += leaf(s + i)
	}
	return s
}

func main() {
	var s uint32
	end := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(end) {
		s += once(s)
		s += thrice(s)
	}
	fmt.Println(s)
}
"#;

#[test]
fn a_go_programs_stacks_unwind_from_its_debug_frame() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.go"), GO_STACKS).unwrap();
    std::fs::write(dir.path().join("go.mod"), "module gop\ngo 1.19\n").unwrap();
    let prog = dir.path().join("gop");
    succeeded(
        Command::new("go")
            .args(["build", "-o"])
            .arg(&prog)
            .arg(".")
            .current_dir(dir.path())
            .env("GOCACHE", dir.path().join("cache"))
            .env("GOFLAGS", "-mod=mod"),
    );
    let pb = dir.path().join("go.pb.gz");
    native_stacks(&prog, &pb, &[], 0.95);
    for s in stacks_of(&pb, "main.leaf") {
        assert!(
            ["main.once", "main.thrice"].contains(&s[1].as_str())
                && s[2..] == ["main.main", "runtime.main", "runtime.goexit"],
            "{s:?}"
        );
    }
    let (_, columns) = pprof_columns(&pb, &["-sample_index=samples"]);
    let share = columns["main.thrice"].1 as f64 / columns["main.main"].1 as f64;
    assert!((share - 0.75).abs() < 0.06, "thrice: {share} of main's");
}

/// Checks that every sample of [`STACKS`]'s `leaf` in the pprof file
/// `pb` is under one of its three callers, under main, from the
/// program's entry, and that each caller's time with its callees is in
/// the proportion of its calls (1, 3 and 2); returns pprof's columns.
fn leaf_under_its_callers(pb: &Path) -> HashMap<String, (u64, u64)> {
    leaf_under_its_callers_from(pb, Some("_start"))
}

/// [`leaf_under_its_callers`], each stack's outermost frame `outermost`
/// where given.
fn leaf_under_its_callers_from(pb: &Path, outermost: Option<&str>) -> HashMap<String, (u64, u64)> {
    let leaf_stacks = stacks_of(pb, "leaf");
    let mut callers: Vec<&str> = leaf_stacks.iter().map(|s| s[1].as_str()).collect();
    callers.sort();
    callers.dedup();
    assert_eq!(
        callers,
        ["by_pointer", "once", "thrice"],
        "{}",
        pb.display()
    );
    for s in &leaf_stacks {
        assert!(
            ["once", "thrice", "by_pointer"].contains(&s[1].as_str())
                && s[2] == "main"
                && outermost.is_none_or(|o| s.last().unwrap() == o),
            "{s:?}"
        );
    }
    let (_, columns) = pprof_columns(pb, &["-sample_index=samples"]);
    let cum = |f: &str| columns[f].1 as f64;
    let main = cum("main");
    for (f, share) in [
        ("once", 1.0 / 6.0),
        ("thrice", 0.5),
        ("by_pointer", 1.0 / 3.0),
    ] {
        let got = cum(f) / main;
        assert!(
            (got - share).abs() < 0.06,
            "{f}: {got} of main's, not {share}"
        );
    }
    columns
}

#[test]
fn a_bad_output_is_named_before_the_run_and_no_file_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let trace = common::gen_trace(dir.path(), "loops", 10_000, 1);
    for (args, says) in [
        (vec!["-o", "profile.txt"], "-o profile.txt: give --format"),
        (
            vec!["-o", "/no/such/dir/p.pb.gz"],
            "no directory /no/such/dir",
        ),
        (vec!["-o", "p.pb.gz", "--format", "xml"], "'xml'"),
        (vec!["-o", "-"], "give a file name"),
    ] {
        coprof()
            .current_dir(dir.path())
            .arg("export")
            .arg(&trace)
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    // --format overrides the name.
    let out = dir.path().join("profile.txt");
    coprof()
        .args(["export", "--format", "callgrind", "-o"])
        .arg(&out)
        .arg(&trace)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with("# callgrind format\n"));
}

#[test]
fn a_profile_writes_the_exports_from_its_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let prog = program(dir.path());
    let (pb, cg) = (
        dir.path().join("p.pb.gz"),
        dir.path().join("callgrind.out.p"),
    );
    let p = json_of(
        coprof()
            .args(["profile", "--json", "--random-seed", "1", "--pprof"])
            .arg(&pb)
            .arg("--callgrind")
            .arg(&cg)
            .arg("--")
            .arg(&prog),
    );
    let instructions = p["instructions"].as_u64().unwrap();
    let names: Vec<&str> = p["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"export --format pprof"), "{names:?}");
    assert!(names.contains(&"export --format callgrind"), "{names:?}");
    assert_eq!(pprof_top(&pb, &[]).0, instructions);
    assert_eq!(annotate(&cg).0, instructions);
    // The same profile as the export alone.
    let alone = dir.path().join("callgrind.out.alone");
    export(&alone, &[], &prog);
    let body = |f: &Path| {
        let text = std::fs::read_to_string(f).unwrap();
        text[text.find("\nob=").unwrap()..].to_string()
    };
    assert_eq!(body(&cg), body(&alone));
    // One file cannot hold every child's.
    coprof()
        .args(["profile", "--follow-children", "-o"])
        .arg(dir.path().join("p.json"))
        .arg("--pprof")
        .arg(&pb)
        .arg("--")
        .arg(&prog)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--follow-children"));
}

#[test]
fn a_dynamically_linked_programs_libraries_are_objects_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile_with(dir.path(), "prog", PROG, &["-O2", "-g"]);
    let pb = dir.path().join("prog.pb.gz");
    let summary = export(&pb, &[], &prog);
    let objects: Vec<&str> = summary["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    for file in ["/prog", "/libc.so.6", "/ld-linux-riscv64-lp64d.so.1"] {
        assert!(
            objects.iter().any(|o| o.ends_with(file)),
            "{file} in {objects:?}"
        );
    }
    // pprof takes each as a mapping at its place in the run, its names given.
    let raw = succeeded(Command::new("go").args(["tool", "pprof", "-raw"]).arg(&pb));
    let raw = String::from_utf8(raw.stdout).unwrap();
    let mappings = &raw[raw.find("Mappings").unwrap()..];
    for file in ["/prog ", "/libc.so.6 "] {
        let line = mappings
            .lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("{raw}"));
        assert!(line.ends_with("[FN][FL][LN][IN]"), "{line}");
    }
    // The program's own function is the same count as when it is static.
    let (total, flat) = pprof_top(&pb, &[]);
    assert_eq!(total, summary["total"].as_u64().unwrap());
    assert_eq!(flat["hot"], count_of(&summary, "hot"));
    assert!(flat["hot"] > 20_000 * 50 * 2, "{flat:?}");
}

#[test]
fn a_samplers_estimate_is_written_beside_the_exact_count() {
    let dir = tempfile::tempdir().unwrap();
    let prog = program(dir.path());
    let cg = dir.path().join("callgrind.out.brr");
    let summary = export(&cg, &["--sampler", "brr:4"], &prog);
    // The same samples and overlap as `coprof sample --eval` of the run.
    let eval = json_of(
        coprof()
            .args(["sample", "--sampler", "brr:4", "--eval", "--profile", "pc"])
            .args(["--json", "--random-seed", "1", "--"])
            .arg(&prog),
    );
    let s = &summary["sampler"];
    assert_eq!(s["sampler"], "brr:4");
    assert_eq!(s["samples"], eval["samples"], "{summary}\n{eval}");
    assert_eq!(s["overlap"], eval["overlap"]);
    assert!(s["overlap"].as_f64().unwrap() > 0.9, "{s}");
    // callgrind_annotate reads both columns: the exact count, then the samples.
    let out = succeeded(Command::new("callgrind_annotate").arg(&cg));
    let text = String::from_utf8(out.stdout).unwrap();
    let totals = text.lines().find(|l| l.contains("PROGRAM TOTALS")).unwrap();
    let numbers: Vec<u64> = totals
        .split_whitespace()
        .filter_map(|w| w.replace(',', "").parse().ok())
        .collect();
    assert_eq!(
        numbers,
        [
            summary["total"].as_u64().unwrap(),
            s["samples"].as_u64().unwrap()
        ],
        "{totals}"
    );
    // A native program's samples are not sampled again.
    let native = common::host_compile(dir.path(), "hot", common::HOT, &["-O1", "-g"]);
    coprof()
        .args(["export", "--sampler", "brr:4", "-o"])
        .arg(dir.path().join("x.pb.gz"))
        .arg("--")
        .arg(&native)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--sampler: "))
        .stderr(predicates::str::contains(
            "a sampler picks from every event",
        ));
}

/// Two threads, each spinning in a function of its own for 150 ms of its
/// CPU time, while the first waits for them.
const NATIVE_THREADS: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>
static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
__attribute__((noipa)) unsigned spin_a(unsigned x) {
    for (int i = 0; i < 1000; i++) x = x * 2654435761u + 1;
    return x;
}
__attribute__((noipa)) unsigned spin_b(unsigned x) {
    for (int i = 0; i < 1000; i++) x = x * 40503u + 7;
    return x;
}
static void *worker(void *arg) {
    unsigned (*spin)(unsigned) = arg;
    prctl(PR_SET_NAME, spin == spin_a ? "spin-a" : "spin-b");
    unsigned s = 0;
    double end = cpu() + 0.15;
    while (cpu() < end) s = spin(s);
    return (void *)(unsigned long)s;
}
int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, worker, spin_a);
    pthread_create(&b, 0, worker, spin_b);
    pthread_join(a, 0);
    pthread_join(b, 0);
    puts("done");
    return 0;
}
"#;

#[test]
fn a_native_programs_threads_are_kept_apart_live_and_from_its_recording() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::host_compile(
        dir.path(),
        "spin",
        NATIVE_THREADS,
        &["-O1", "-g", "-pthread"],
    );
    // The thread of each function's samples, by pprof's labels: one
    // each, and not the same.
    let live = dir.path().join("live.pb.gz");
    let summary = native_export(&prog, &live, &["--separate-threads"]);
    assert!(summary["threads"].as_u64().unwrap() >= 2, "{summary}");
    // Each thread's total and share, adding up to the whole; the two
    // spinning threads take nearly all of it.
    let per_thread = summary["per_thread"].as_array().unwrap();
    assert_eq!(
        per_thread.len() as u64,
        summary["threads"].as_u64().unwrap()
    );
    let total: u64 = per_thread
        .iter()
        .map(|t| t["total"].as_u64().unwrap())
        .sum();
    assert_eq!(total, summary["total"].as_u64().unwrap(), "{summary}");
    let names: Vec<&str> = (per_thread.iter())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"spin-a") && names.contains(&"spin-b"),
        "{summary}"
    );
    let mut shares: Vec<f64> = per_thread
        .iter()
        .map(|t| t["share"].as_f64().unwrap())
        .collect();
    shares.sort_by(f64::total_cmp);
    assert!(shares.iter().rev().take(2).sum::<f64>() > 0.9, "{summary}");
    one_thread_each(&live, ["spin_a", "spin_b"]);
    // Without the option, the same counts per function and no label.
    let together = dir.path().join("together.pb.gz");
    let plain = native_export(&prog, &together, &[]);
    assert!(plain.get("threads").is_none(), "{plain}");
    assert!(threads_of(&traces(&together), "spin_a").is_empty());
    // A recording keeps the threads: `coprof info` counts each one's
    // samples, and its export keeps them apart as the live run's does,
    // a callgrind file per thread.
    let trace = dir.path().join("spin.cpt");
    succeeded(
        coprof()
            .args(["record", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&prog),
    );
    let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
    let threads = info["threads"].as_array().unwrap();
    assert!(threads.len() >= 2, "{info}");
    let events: u64 = threads.iter().map(|t| t["events"].as_u64().unwrap()).sum();
    assert_eq!(events, info["events"].as_u64().unwrap(), "{info}");
    let names: Vec<&str> = threads
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"spin-a") && names.contains(&"spin-b"),
        "{info}"
    );
    let from_trace = dir.path().join("from-trace.pb.gz");
    export_file(&from_trace, &["--separate-threads"], &trace);
    one_thread_each(&from_trace, ["spin_a", "spin_b"]);
    let cg = dir.path().join("callgrind.out.spin");
    let summary = export_file(&cg, &["--separate-threads"], &trace);
    let parts = summary["per_thread"].as_array().unwrap();
    assert_eq!(parts.len(), threads.len(), "{summary}");
    let mut with = Vec::new();
    for part in parts {
        let (total, functions) = annotate(Path::new(part["output"].as_str().unwrap()));
        assert_eq!(total, part["total"].as_u64().unwrap());
        for f in ["spin_a", "spin_b"] {
            if ending_with(&functions, &format!(":{f}")) > 0 {
                with.push((f, part["thread"].as_u64().unwrap()));
            }
        }
    }
    with.sort();
    assert_eq!(
        with.len(),
        2,
        "each function in one thread's file: {with:?}"
    );
    assert_ne!(with[0].1, with[1].1, "{with:?}");
}

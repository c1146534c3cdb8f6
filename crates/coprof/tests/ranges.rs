//! `coprof ranges`: range-adaptive profiling of traces made by `coprof gen`,
//! checked against the exact counts it computes in the same pass, and its
//! errors on bad options and bad input.

mod common;

use common::{coprof, gen_trace, json_of, stdout_of, traced_run};
use predicates::str::contains;
use serde_json::Value;
use std::path::Path;

fn json(args: &[&str], file: &Path) -> Value {
    json_of(coprof().arg("ranges").arg(file).args(args).arg("--json"))
}

/// The hot ranges (5%) of load addresses of a live run of `bin` with
/// `args`, as JSON.
fn hot_load_ranges(bin: &Path, args: &[&std::ffi::OsStr]) -> Value {
    let hot = [
        "ranges",
        "--stream",
        "load-addr",
        "--hot",
        "0.05",
        "--json",
        "--",
    ];
    json_of(coprof().args(hot).arg(bin).args(args))
}

#[test]
fn zipf_values_with_exact_counts_keep_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "zipf", 200_000, 5);
    let v = json(&["--stream", "load-value", "--exact"], &trace);
    assert_eq!(v["n"], 200_000, "every zipf event is a load");
    assert_eq!(v["epsilon"], 0.01);
    for key in ["nodes_max", "nodes_final", "bytes", "avg_error_pct"] {
        assert!(v[key].is_number(), "missing {key}: {v}");
    }
    assert!(v["max_abs_error_over_n"].as_f64().unwrap() <= 0.01);
    let hot = v["hot_ranges"].as_array().unwrap();
    assert!(!hot.is_empty());
    for h in hot {
        let (count, exact) = (h["count"].as_u64().unwrap(), h["exact"].as_u64().unwrap());
        assert!(
            count <= exact && (exact - count) as f64 <= 0.01 * 200_000.0,
            "{h}"
        );
        assert!(h["lo"].as_u64().unwrap() <= h["hi"].as_u64().unwrap());
        assert!(h["own_share"].as_f64().unwrap() >= 0.1);
        assert!(h["share"].as_f64().unwrap() >= h["own_share"].as_f64().unwrap());
        assert!(h["error_pct"].as_f64().unwrap() >= 0.0);
    }
}

#[test]
fn the_loops_code_profile_finds_the_loop_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "loops", 300_000, 1);
    let v = json(&["--stream", "pc", "--exact", "--epsilon", "0.001"], &trace);
    assert_eq!(v["n"], 300_000);
    let hot = v["hot_ranges"].as_array().unwrap();
    // The program's loops are 4 KiB apart above 0x10000: the hot ranges
    // are code ranges there, and none is the whole universe.
    assert!(hot
        .iter()
        .any(|h| h["hi"].as_u64().unwrap() - h["lo"].as_u64().unwrap() < 1 << 16));
    assert!(v["max_abs_error_over_n"].as_f64().unwrap() <= 0.001);
}

#[test]
fn two_dimensions_report_coordinate_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "mixed", 100_000, 2);
    let v = json(
        &["--dims", "pc,load-addr", "--exact", "--epsilon", "0.05"],
        &trace,
    );
    assert_eq!(v["dims"], serde_json::json!(["pc", "load-addr"]));
    let hot = v["hot_ranges"].as_array().unwrap();
    assert!(!hot.is_empty());
    for h in hot {
        assert_eq!(h["lo"].as_array().unwrap().len(), 2);
        assert!(h["count"].as_u64() <= h["exact"].as_u64());
    }
    assert!(v["max_abs_error_over_n"].as_f64().unwrap() <= 0.05);
    // The 2-D profile counts loads only.
    let loads = json(&["--stream", "load-addr"], &trace)["n"].clone();
    assert_eq!(v["n"], loads);
}

#[test]
fn buffer_off_counts_the_same_events() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "mixed", 50_000, 3);
    let on = json(&["--stream", "store-addr"], &trace);
    let off = json(&["--stream", "store-addr", "--no-buffer"], &trace);
    assert_eq!(on["n"], off["n"]);
    assert_eq!(off["buffer"]["entries"], 0);
    assert!(on["buffer"]["entries"].as_u64().unwrap() > 0);
}

#[test]
fn merge_factor_sets_how_often_merges_run() {
    // Merge batches run at n = 1, q, q², ... (§3.1): the JSON's batch count
    // is floor(log_q n) + 1 (unbuffered, so that n grows one event at a
    // time), and the bound holds whatever q is.
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "zipf", 100_000, 4);
    for (q, batches) in [("2", 17), ("4", 9), ("10", 6)] {
        let v = json(
            &[
                "--stream",
                "load-value",
                "--exact",
                "--no-buffer",
                "--merge-factor",
                q,
            ],
            &trace,
        );
        assert_eq!(v["merge_batches"], batches, "--merge-factor {q}: {v}");
        assert!(v["max_abs_error_over_n"].as_f64().unwrap() <= 0.01);
    }
}

#[test]
fn dump_writes_the_tree_and_text_shows_errors() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "zipf", 50_000, 4);
    let dump = dir.path().join("tree.txt");
    coprof()
        .arg("ranges")
        .arg(&trace)
        .args(["--stream", "load-addr", "--exact", "--dump"])
        .arg(&dump)
        .assert()
        .success()
        .stdout(contains("hot ranges"))
        .stdout(contains("largest error over all"));
    let text = std::fs::read_to_string(&dump).unwrap();
    assert!(text.starts_with("# RAP tree: n=50000"));
    assert!(text.contains("[0x0, 0xffffffffffffffff]"));
    let v = json(&["--stream", "load-addr"], &trace);
    assert_eq!(
        text.lines().count() as u64,
        v["nodes_final"].as_u64().unwrap() + 2
    );
}

#[test]
fn bad_options_are_named_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "zipf", 1000, 1);
    common::rejects(
        "ranges",
        &trace,
        &[
            (
                vec!["--epsilon", "0"],
                "epsilon must lie strictly between 0 and 1",
            ),
            (vec!["--epsilon", "1"], "epsilon"),
            (vec!["--branching", "6"], "power of two"),
            (vec!["--branching", "1"], "power of two"),
            (
                vec!["--dims", "pc,load-addr", "--branching", "8"],
                "power of 4",
            ),
            (vec!["--hot", "0"], "--hot"),
            (vec!["--hot", "1.5"], "--hot"),
            (vec!["--merge-factor", "1"], "merge factor"),
            (vec!["--dims", "pc,pc,pc,pc"], "1 to 3 streams"),
            (vec!["--bits", "0"], "bits"),
        ],
    );
    coprof()
        .arg("ranges")
        .arg(&trace)
        .args(["--stream", "pcs"])
        .assert()
        .code(2)
        .stderr(contains("unknown stream 'pcs'"));
}

#[test]
fn bad_input_files_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.cpt");
    coprof()
        .arg("ranges")
        .arg(&missing)
        .assert()
        .failure()
        .stderr(contains("missing.cpt"));
    let junk = dir.path().join("junk.cpt");
    std::fs::write(&junk, b"this is not a trace at all, just some bytes").unwrap();
    coprof()
        .arg("ranges")
        .arg(&junk)
        .assert()
        .code(2)
        .stderr(contains("junk.cpt"));
    let trace = gen_trace(dir.path(), "zipf", 1000, 1);
    let dump = dir.path().join("no-such-dir").join("tree.txt");
    coprof()
        .arg("ranges")
        .arg(&trace)
        .arg("--dump")
        .arg(&dump)
        .assert()
        .code(2)
        .stderr(contains("tree.txt"));
}

/// Function symbols of an RV64 binary as `nm` lists them (an
/// implementation of its own): (start, end, name), by address.
fn nm_functions(bin: &Path) -> Vec<(u64, u64, String)> {
    let out = std::process::Command::new("riscv64-linux-gnu-nm")
        .args(["--defined-only", "-S", "-n"])
        .arg(bin)
        .output()
        .expect("riscv64-linux-gnu-nm runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let [addr, size, kind, name] = f[..] else {
                return None;
            };
            let start = u64::from_str_radix(addr, 16).ok()?;
            let size = u64::from_str_radix(size, 16).ok()?;
            (matches!(kind, "T" | "t") && size > 0).then(|| (start, start + size, name.to_string()))
        })
        .collect()
}

/// A hot code range that spans functions is named by the functions at
/// its ends (or, where no function's code is, the first and last inside
/// it) and how many it overlaps, as `nm` counts them; one inside a
/// function, by that function alone.
#[test]
fn hot_code_ranges_name_the_functions_they_span() {
    let dir = tempfile::tempdir().unwrap();
    // Forty small functions, aligned 256 bytes apart and called in turn,
    // so that hot ranges of the code profile span several of them.
    let mut src = String::from("#define F(n) __attribute__((noinline, aligned(256))) unsigned long f##n(unsigned long x) { for (int i = 0; i < 8; i++) x = x * 31 + n; return x; }\n");
    for n in 0..40 {
        src.push_str(&format!("F({n})\n"));
    }
    src.push_str("int main(void) { unsigned long x = 1; for (int r = 0; r < 4000; r++) {");
    for n in 0..40 {
        src.push_str(&format!(" x = f{n}(x);"));
    }
    src.push_str(" } static volatile unsigned long sink; sink = x; return 0; }\n");
    let bin = common::compile_with(dir.path(), "spread", &src, &["-static", "-O1", "-g"]);
    let functions = nm_functions(&bin);
    let v = json_of(
        coprof()
            .args(["ranges", "--json", "--hot", "0.05", "--"])
            .arg(&bin),
    );
    let hot = v["hot_ranges"].as_array().unwrap();
    let mut spanning = 0;
    for h in hot {
        let (lo, hi) = (h["lo"].as_u64().unwrap(), h["hi"].as_u64().unwrap());
        let label = h["functions"].as_str();
        let at = |pc: u64| {
            functions
                .iter()
                .find(|f| f.0 <= pc && pc < f.1)
                .map(|f| &f.2)
        };
        let inside: Vec<&String> = functions
            .iter()
            .filter(|f| f.0 <= hi && lo < f.1)
            .map(|f| &f.2)
            .collect();
        match (at(lo), at(hi)) {
            (Some(a), Some(b)) if a == b => {
                let label = label.unwrap_or_else(|| panic!("no name for {h}"));
                assert!(
                    label.starts_with(a.as_str()) && !label.contains("function"),
                    "{h}"
                );
            }
            (a, b) if inside.len() >= 2 => {
                let first = a.unwrap_or(inside[0]);
                let last = b.unwrap_or(inside[inside.len() - 1]);
                let want = format!("{first} .. {last} ({} functions)", inside.len());
                assert_eq!(label, Some(want.as_str()), "{h}");
                spanning += 1;
            }
            _ if inside.len() == 1 => {
                assert_eq!(
                    label,
                    Some(format!("{} (1 function)", inside[0]).as_str()),
                    "{h}"
                );
            }
            _ => assert_eq!(label, None, "{h}"),
        }
    }
    assert!(spanning > 0, "no hot range spans functions: {hot:?}");
}

/// Data objects of an RV64 binary as `readelf` lists them (an
/// implementation of its own): (start, end, name) of each sized
/// `OBJECT` symbol, one per address (the largest), by address.
fn readelf_objects(bin: &Path) -> Vec<(u64, u64, String)> {
    let out = std::process::Command::new("riscv64-linux-gnu-readelf")
        .args(["-sW"])
        .arg(bin)
        .output()
        .expect("riscv64-linux-gnu-readelf runs");
    assert!(out.status.success());
    let mut objects: Vec<(u64, u64, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let [_, value, size, kind, _, _, ndx, name] = f[..] else {
                return None;
            };
            let start = u64::from_str_radix(value, 16).ok()?;
            let size: u64 = size.parse().ok()?;
            (kind == "OBJECT" && ndx != "UND" && size > 0 && start != 0)
                .then(|| (start, start + size, name.to_string()))
        })
        .collect();
    objects.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    objects.dedup_by_key(|o| o.0);
    objects
}

/// A hot range of load addresses is named by the data objects (global
/// and static variables) it overlaps, as `readelf` lists them, as `perf
/// mem` names a sample's data symbol; a range of the heap, where no
/// object is, by none.
#[test]
fn hot_address_ranges_name_the_data_objects_they_cover() {
    let dir = tempfile::tempdir().unwrap();
    let src = r#"
#include <stdio.h>
#include <stdlib.h>
static unsigned hot_table[4096];
unsigned cold_table[4096];
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100;
    unsigned s = 0, *heap = malloc(4096 * sizeof *heap);
    for (int j = 0; j < 4096; j++) { hot_table[j] = j * 2654435761u; cold_table[j] = j; heap[j] = j; }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 4096; j++)
            s += hot_table[(j * 7 + i) & 4095] ^ heap[(j * 5 + i) & 4095];
    printf("%u\n", s + cold_table[n & 4095]);
    return 0;
}
"#;
    let bin = common::compile_with(dir.path(), "tables", src, &["-static", "-O2", "-g"]);
    let objects = readelf_objects(&bin);
    let v = hot_load_ranges(&bin, &["100".as_ref()]);
    let hot = v["hot_ranges"].as_array().unwrap();
    let (mut named_hot, mut unnamed) = (0, 0);
    for h in hot {
        let (lo, hi) = (h["lo"].as_u64().unwrap(), h["hi"].as_u64().unwrap());
        assert!(h.get("functions").is_none(), "{h}");
        let label = h["objects"].as_str();
        let inside: Vec<&String> = objects
            .iter()
            .filter(|o| o.0 <= hi && lo < o.1)
            .map(|o| &o.2)
            .collect();
        match inside[..] {
            [] => assert_eq!(label, None, "{h}"),
            [one] => assert_eq!(label, Some(one.as_str()), "{h}"),
            [first, .., last] => {
                let want = format!("{first} .. {last} ({} objects)", inside.len());
                assert_eq!(label, Some(want.as_str()), "{h}");
            }
        }
        named_hot += (label == Some("hot_table")) as usize;
        unnamed += label.is_none() as usize;
    }
    assert!(named_hot > 0, "no hot range named hot_table: {hot:?}");
    assert!(unnamed > 0, "no hot range of the heap: {hot:?}");
}

/// A hot range of load addresses of a live run is named by the mappings
/// it overlaps, as `perf mem` names a sample's data object: the heap,
/// the stack, anonymous memory (glibc maps a large `malloc` block) and
/// the program's own file, where the program itself says its variables
/// are. Where no variable is, the text names the range by them.
#[test]
fn hot_address_ranges_are_named_by_the_mappings_they_lie_in() {
    let dir = tempfile::tempdir().unwrap();
    let src = r#"
#include <stdio.h>
#include <stdlib.h>
static unsigned table[4096];
int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    unsigned *heap = malloc(4096 * sizeof *heap);
    unsigned *big = malloc(4 << 20);
    volatile unsigned local[4096];
    for (int j = 0; j < 4096; j++) { table[j] = j; heap[j] = 3 * j; big[256 * j] = j; local[j] = j; }
    unsigned s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 4096; j++) {
            int k = (7 * j + i) & 4095;
            s += table[k] ^ heap[k] ^ big[256 * k] ^ local[k];
        }
    FILE *f = fopen(argv[2], "w");
    fprintf(f, "%p %p %p %p %u\n", (void *)table, (void *)heap, (void *)big, (void *)local, s);
    return fclose(f);
}
"#;
    let bin = common::compile_with(dir.path(), "areas", src, &["-static", "-O2", "-g"]);
    let said = dir.path().join("addresses");
    let run = |json: bool| {
        let mut c = coprof();
        c.args(["ranges", "--stream", "load-addr", "--hot", "0.05"]);
        if json {
            c.arg("--json");
        }
        c.arg("--").arg(&bin).arg("50").arg(&said);
        c
    };
    let v = json_of(&mut run(true));
    let text = String::from_utf8(run(false).output().unwrap().stdout).unwrap();
    let said = std::fs::read_to_string(&said).unwrap();
    let at: Vec<u64> = said
        .split_whitespace()
        .take(4)
        .map(|p| u64::from_str_radix(p.trim_start_matches("0x"), 16).unwrap())
        .collect();
    let file = std::fs::canonicalize(&bin).unwrap().display().to_string();
    // Each array's first address, bytes and mapping.
    let places = [
        (at[0], 16 << 10, file.as_str()),
        (at[1], 16 << 10, "[heap]"),
        (at[2], 4 << 20, "[anon]"),
        (at[3], 16 << 10, "[stack]"),
    ];
    let (mut seen, mut inside) = ([false; 4], [false; 4]);
    for h in v["hot_ranges"].as_array().unwrap() {
        let (lo, hi) = (h["lo"].as_u64().unwrap(), h["hi"].as_u64().unwrap());
        let areas: Vec<&str> = h["areas"]
            .as_array()
            .unwrap_or_else(|| panic!("no areas: {h}"))
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        for (i, &(start, bytes, name)) in places.iter().enumerate() {
            let end = start + bytes;
            if start <= hi && lo < end {
                assert!(areas.contains(&name), "{name} not named in {h}");
                seen[i] = true;
            }
            if start <= lo && hi < end && i > 0 {
                // Inside the heap, the big block or the stack: nothing
                // else was mapped there, and no variable is.
                assert_eq!(areas, [name], "{h}");
                assert!(h.get("objects").is_none(), "{h}");
                let line = format!("[{lo:#x}, {hi:#x}]");
                let line = text.lines().find(|l| l.contains(&line)).unwrap();
                assert!(line.ends_with(&format!("  {name}")), "{line}");
                inside[i] = true;
            }
        }
    }
    assert_eq!(seen, [true; 4], "hot ranges miss a place: {v}");
    assert_eq!(inside[1..], [true; 3], "no hot range inside a mapping: {v}");

    // A trace of the run keeps its mappings and names its ranges alike.
    let trace = dir.path().join("areas.cpt");
    traced_run(&trace, &bin)
        .arg("50")
        .arg(dir.path().join("addresses"))
        .assert()
        .success();
    let traced = json(&["--stream", "load-addr", "--hot", "0.05"], &trace);
    assert_eq!(traced["hot_ranges"], v["hot_ranges"]);
}

/// A hot range in a thread's stack is named `[stack:TID]`, as Linux's
/// `/proc/PID/maps` named them, not `[anon]`: the C library maps a
/// thread's stack as anonymous memory, and the simulator names the pages
/// the new thread's stack pointer starts in when it starts it.
#[test]
fn a_thread_stack_is_named_by_its_thread() {
    let dir = tempfile::tempdir().unwrap();
    let src = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
static int n;
static FILE *f;
static void *work(void *arg) {
    volatile unsigned local[4096];
    for (int j = 0; j < 4096; j++) local[j] = j;
    unsigned s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 4096; j++) s += local[(7 * j + i) & 4095];
    fprintf(f, "%p %ld %u\n", (void *)local, (long)syscall(SYS_gettid), s);
    return arg;
}
int main(int argc, char **argv) {
    n = atoi(argv[1]);
    f = fopen(argv[2], "w");
    /* Mapped just before the stack, so right above it, with the same
       permissions: the stack's name stops where its own mapping does. */
    char *block = mmap(0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    block[0] = 1;
    fprintf(f, "%p ", (void *)block);
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    pthread_join(t, 0);
    return fclose(f);
}
"#;
    let bin = common::compile_with(
        dir.path(),
        "stacks",
        src,
        &["-static", "-O2", "-g", "-pthread"],
    );
    let said = dir.path().join("said");
    let v = hot_load_ranges(&bin, &["30".as_ref(), said.as_os_str()]);
    // The block's and the array's addresses, and the thread's name.
    let read_said = || {
        let said = std::fs::read_to_string(&said).unwrap();
        let words: Vec<&str> = said.split_whitespace().collect();
        let hex = |w: &str| u64::from_str_radix(w.trim_start_matches("0x"), 16).unwrap();
        (
            hex(words[0]),
            hex(words[1]),
            format!("[stack:{}]", words[2]),
        )
    };
    let (_, local, name) = read_said();
    let mut inside = 0;
    for h in v["hot_ranges"].as_array().unwrap() {
        let (lo, hi) = (h["lo"].as_u64().unwrap(), h["hi"].as_u64().unwrap());
        if local <= lo && hi < local + (16 << 10) {
            assert_eq!(h["areas"], serde_json::json!([name]), "{h}");
            inside += 1;
        }
    }
    assert!(inside > 0, "no hot range in the thread's array: {v}");
    // The trace's areas: the stack holds the array and ends below the
    // block mapped above it, which stays anonymous memory.
    let trace = dir.path().join("stacks.cpt");
    traced_run(&trace, &bin)
        .arg("1")
        .arg(&said)
        .assert()
        .success();
    // Another run: another thread id.
    let (block, local, name) = read_said();
    let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
    let areas = info["meta"]["areas"].as_array().unwrap();
    let area = |name: &str, addr: u64| {
        areas.iter().find(|a| {
            a["name"] == name
                && a["start"].as_u64().unwrap() <= addr
                && addr < a["end"].as_u64().unwrap()
        })
    };
    let stack = area(&name, local).unwrap_or_else(|| panic!("{name} holds no {local:#x}: {info}"));
    assert!(
        stack["end"].as_u64().unwrap() <= block,
        "{stack} reaches {block:#x}"
    );
    assert!(area("[anon]", block).is_some(), "{info}");
}

/// Code no function symbol covers is named by the mapping it lies in, as
/// perf names such samples by their mapping, in every report that names
/// code: code a program generated at run time (a JIT's) by `[anon]`, and
/// the code of a stripped program by its file. `--no-symbols` shows raw
/// addresses only.
#[test]
fn code_without_symbols_is_named_by_its_mapping() {
    let dir = tempfile::tempdir().unwrap();
    // The generated function: a0 += a1 in a loop of a1 steps.
    let src = r#"
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    unsigned *code = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    code[0] = 0x00150513; /* addi a0, a0, 1 */
    code[1] = 0xfff58593; /* addi a1, a1, -1 */
    code[2] = 0xfe059ce3; /* bnez a1, code[0] */
    code[3] = 0x00008067; /* ret */
    __builtin___clear_cache((char *)code, (char *)(code + 4));
    long (*f)(long, long) = (long (*)(long, long))code;
    long s = 0;
    for (int i = 0; i < n; i++)
        s = f(s, 1000);
    printf("%ld %p\n", s, (void *)code);
    return 0;
}
"#;
    let bin = common::compile_with(dir.path(), "jit", src, &["-static", "-O2", "-g"]);
    let out = common::succeeded(
        coprof()
            .args(["ranges", "--stream", "pc", "--hot", "0.5", "--"])
            .arg(&bin)
            .arg("200"),
    );
    // The program's own output goes to standard error under coprof.
    let said = String::from_utf8_lossy(&out.stderr);
    let line = said.lines().find(|l| l.starts_with("200000 ")).unwrap();
    let code = u64::from_str_radix(line[7..].trim_start_matches("0x"), 16).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let hot = text
        .lines()
        .find(|l| l.contains(&format!("{code:#x}")))
        .unwrap_or_else(|| panic!("no hot range at the generated code:\n{text}"));
    assert!(hot.ends_with("  [anon]"), "{hot}");
    let report = |args: &[&str], prog: &Path, json: bool| {
        let mut c = coprof();
        c.args(args);
        if json {
            c.arg("--json");
        }
        // 200 calls of the generated code: more than any other function has.
        c.arg("--").arg(prog).arg("200");
        c
    };
    // The loop in the generated code, its PCs and the calls to it.
    let loops = json_of(&mut report(&["loops"], &bin, true));
    let top = &loops["loops"][0];
    assert_eq!(top["body_lo"], code, "{top}");
    assert_eq!(top["area"], "[anon]", "{top}");
    let text = stdout_of(&mut report(&["loops"], &bin, false));
    let row = text.lines().find(|l| l.starts_with("   1  ")).unwrap();
    assert!(row.ends_with("  [anon]"), "{row}");
    for profile in ["pc", "method"] {
        let args = [
            "sample",
            "--sampler",
            "periodic:64",
            "--eval",
            "--profile",
            profile,
        ];
        let v = json_of(&mut report(&args, &bin, true));
        let top = &v["top"][0];
        assert_eq!(top["key"], format!("{code:#x}"), "{profile}: {top}");
        assert_eq!(top["area"], "[anon]", "{profile}: {top}");
        let text = stdout_of(&mut report(&args, &bin, false));
        let row = text
            .lines()
            .find(|l| l.contains(&format!("{code:#x}")))
            .unwrap();
        assert!(row.ends_with("  [anon]"), "{profile}: {row}");
    }
    let raw = json_of(&mut report(&["ranges", "--no-symbols"], &bin, true));
    assert!(!raw.to_string().contains("areas"), "{raw}");

    // A stripped copy: no symbol anywhere, so every hot range of the
    // program's own code reads as its file's name.
    let stripped = dir.path().join("jit-stripped");
    let ok = std::process::Command::new("riscv64-linux-gnu-strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&bin)
        .status()
        .unwrap();
    assert!(ok.success());
    let v = json_of(
        coprof()
            .args(["ranges", "--stream", "pc", "--hot", "0.001", "--json", "--"])
            .arg(&stripped)
            .arg("20"),
    );
    let text = stdout_of(
        coprof()
            .args(["ranges", "--stream", "pc", "--hot", "0.001", "--"])
            .arg(&stripped)
            .arg("20"),
    );
    let file = std::fs::canonicalize(&stripped)
        .unwrap()
        .display()
        .to_string();
    let mut own = 0;
    for h in v["hot_ranges"].as_array().unwrap() {
        let areas = h["areas"].as_array().unwrap();
        if areas.len() == 1 && areas[0] == file.as_str() {
            let (lo, hi) = (h["lo"].as_u64().unwrap(), h["hi"].as_u64().unwrap());
            let at = format!("[{lo:#x}, {hi:#x}]");
            let line = text.lines().find(|l| l.contains(&at)).unwrap();
            assert!(line.ends_with("  jit-stripped"), "{line}");
            own += 1;
        }
    }
    assert!(own > 0, "no hot range in the program's own code: {v}");
    // Each load of the stripped program, by its file.
    let v = json_of(&mut report(&["values"], &stripped, true));
    let text = stdout_of(&mut report(&["values"], &stripped, false));
    let pcs = v["pcs"].as_array().unwrap();
    assert!(!pcs.is_empty());
    for p in pcs {
        assert_eq!(p["area"], file.as_str(), "{p}");
        assert!(p.get("place").is_none(), "{p}");
    }
    let at = format!("{:#x}", pcs[0]["pc"].as_u64().unwrap());
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(&at));
    let (row, under) = (lines.next().unwrap(), lines.next().unwrap());
    assert!(
        under.trim_end().ends_with(" jit-stripped"),
        "{row}\n{under}"
    );
}

//! `coprof values` end to end: the three profilers on a generated trace,
//! the JSON keys the issue asks for, exact scoring, hotlists of load
//! addresses on a trace and a live program, and bad input.

mod common;

use common::{coprof, gen_trace};
use serde_json::Value;
use std::path::Path;
use tempfile::TempDir;

fn json(file: &Path, args: &[&str]) -> Value {
    common::json_of(coprof().arg("values").arg(file).args(args).arg("--json"))
}

#[test]
fn coproc_report_has_the_keys_and_scores_well_on_zipf() {
    let dir = TempDir::new().unwrap();
    let t = gen_trace(dir.path(), "zipf", 400_000, 3);
    let v = json(&t, &["--exact"]);
    assert_eq!(v["algo"], "coproc");
    assert_eq!(v["events"], 400_000);
    assert!(v["interrupts"].as_u64().unwrap() > 0);
    assert!(v["samples_transferred"].as_u64().unwrap() > 0);
    assert_eq!(v["samples_dropped"], 0);
    let err = v["weighted_rms_error"].as_f64().unwrap();
    assert!(err < 0.15, "weighted RMS error {err}");
    let pcs = v["pcs"].as_array().unwrap();
    assert!(!pcs.is_empty());
    // Sorted by execution weight.
    let ex: Vec<u64> = pcs
        .iter()
        .map(|p| p["executions"].as_u64().unwrap())
        .collect();
    assert!(ex.windows(2).all(|w| w[0] >= w[1]));
    for p in pcs {
        assert!(p["pc"].is_u64());
        for val in p["values"].as_array().unwrap() {
            assert!(val["value"].is_u64());
            let inv = val["invariance"].as_f64().unwrap();
            let exact = val["exact_invariance"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&inv) && (0.0..=1.0).contains(&exact));
        }
    }
    // The zipf workload's PC 16 (of 17) has a single value: invariant.
    let pc16 = pcs.iter().find(|p| p["pc"] == 0x1_0000 + 4 * 16).unwrap();
    assert_eq!(pc16["values"][0]["exact_invariance"], 1.0);
    assert!(pc16["values"][0]["invariance"].as_f64().unwrap() > 0.99);
    // The convergence series: geometric points, then the end.
    let c = v["convergence"].as_array().unwrap();
    assert!(c.len() >= 5);
    let n: Vec<u64> = c.iter().map(|p| p["events"].as_u64().unwrap()).collect();
    assert_eq!(n[0], 4096);
    assert!(n.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(*n.last().unwrap(), 400_000);
    assert_eq!(
        c.last().unwrap()["weighted_rms_error"].as_f64().unwrap(),
        err
    );
}

#[test]
fn simple_and_hotlist_run_and_report_without_exact() {
    let dir = TempDir::new().unwrap();
    let t = gen_trace(dir.path(), "phases", 100_000, 3);
    let s = json(&t, &["--algo", "simple", "--period", "64"]);
    assert_eq!(s["algo"], "simple");
    assert_eq!(s["samples_transferred"], 50_000 / 64);
    assert!(s.get("weighted_rms_error").is_none());
    assert!(s["pcs"][0]["values"][0].get("exact_invariance").is_none());
    let h = json(
        &t,
        &[
            "--algo",
            "hotlist",
            "--variant",
            "counting",
            "--hotlist-size",
            "8",
            "--exact",
        ],
    );
    assert_eq!(h["algo"], "hotlist");
    assert!(h["weighted_rms_error"].as_f64().unwrap() < 0.1);
    assert!(h["pcs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["values"].as_array().unwrap().len() <= 4));
}

#[test]
fn hotlist_value_type_address_profiles_load_addresses() {
    let dir = TempDir::new().unwrap();
    let t = gen_trace(dir.path(), "zipf", 200_000, 3);
    let hot = ["--algo", "hotlist", "--exact"];
    let v = json(&t, &hot);
    let a = json(&t, &[&hot[..], &["--value-type", "address"]].concat());
    assert_eq!(v["value_type"], "value");
    assert_eq!(a["value_type"], "address");
    assert_eq!(
        a["engine"]["config"]["kinds"],
        serde_json::json!(["address"])
    );
    // The zipf workload's load i reads its value of rank r from address
    // 0x2000_0000 + i·2^24 + 8r (and loads the value i·2^20 + r).
    let pcs = a["pcs"].as_array().unwrap();
    assert!(!pcs.is_empty());
    for p in pcs {
        let i = (p["pc"].as_u64().unwrap() - 0x1_0000) / 4;
        let base = 0x2000_0000 + (i << 24);
        for val in p["values"].as_array().unwrap() {
            let addr = val["value"].as_u64().unwrap();
            assert!(
                (base..base + (1 << 24)).contains(&addr) && (addr - base) % 8 == 0,
                "load {i}: {addr:#x} is not one of its addresses"
            );
            // --exact counted (PC, address): every address shown was seen.
            assert!(val["exact_invariance"].as_f64().unwrap() > 0.0, "{p}");
        }
    }
    // Load 16 reads one address only: its list never overflows, p stays 1,
    // and the estimate is exact.
    let pc16 = pcs.iter().find(|p| p["pc"] == 0x1_0000 + 4 * 16).unwrap();
    assert_eq!(pc16["values"][0]["value"], 0x2000_0000u64 + (16 << 24));
    assert_eq!(pc16["values"][0]["invariance"], 1.0);
    assert_eq!(pc16["values"][0]["exact_invariance"], 1.0);
    // Per load, address and value are one to one here, and the coin tosses
    // do not depend on what is tossed for: the address profile is the value
    // profile relabelled, scored against exact counts of addresses.
    let err = a["weighted_rms_error"].as_f64().unwrap();
    assert!(err < 0.05, "weighted RMS error {err}");
    assert_eq!(a["weighted_rms_error"], v["weighted_rms_error"]);
    assert_eq!(a["scored_pairs"], v["scored_pairs"]);
    assert!(a["scored_pairs"].as_u64().unwrap() > 0);
    let invariances = |r: &Value| -> Vec<f64> {
        r["pcs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["values"].as_array().unwrap().clone())
            .map(|x| x["invariance"].as_f64().unwrap())
            .collect()
    };
    assert_eq!(invariances(&a), invariances(&v));
    // `coprof profile` runs the same report in its pass.
    let report = "values --algo hotlist --exact --value-type address";
    let out = coprof()
        .args(["profile", "--json", "--report", report])
        .arg(&t)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let p: Value = serde_json::from_slice(&out).unwrap();
    let section = p["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == report)
        .unwrap_or_else(|| panic!("no {report} in {p}"));
    assert_eq!(section["json"], a);
    // The text report says what it profiled.
    coprof()
        .args(["values", "--algo", "hotlist", "--value-type", "address"])
        .arg(&t)
        .assert()
        .success()
        .stdout(predicates::str::contains("hotlist address profile"))
        .stdout(predicates::str::contains("addresses (invariance)"));
}

const TABLE_LOOP: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static volatile long table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    long s = 0;
    for (int i = 0; i < n; i++)
        s += table[i & 3] * table[7];
    printf("sum %ld table %p\n", s, (void *)table);
    return 0;
}
"#;

/// The address a program printed as `NAME 0xHEX` in `text`.
fn printed_address(text: &str, name: &str) -> u64 {
    text.split(&format!("{name} 0x"))
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or_else(|| panic!("no address of {name} in {text}"))
}

#[test]
fn hotlist_value_type_address_on_a_live_program() {
    let dir = TempDir::new().unwrap();
    let prog = common::compile(dir.path(), "table", TABLE_LOOP);
    let out = coprof()
        .args(["values", "--algo", "hotlist", "--value-type", "address"])
        .args(["--exact", "--json", "--"])
        .arg(&prog)
        .arg("20000")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    // The program prints where its table is (to stderr, beside coprof's).
    let table = printed_address(&stderr, "table");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["value_type"], "address");
    let pcs = v["pcs"].as_array().unwrap();
    let addresses = |p: &Value| -> Vec<(u64, f64, f64)> {
        p["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["value"].as_u64().unwrap(),
                    x["invariance"].as_f64().unwrap(),
                    x["exact_invariance"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    // table[i & 3]: four addresses, a quarter each, exactly (four values
    // fit in a hotlist, so p stays 1).
    let quarter = pcs
        .iter()
        .find(|p| addresses(p).iter().any(|a| a.0 == table))
        .expect("a load of table[0]");
    assert_eq!(quarter["executions"], 20_000);
    let mut q = addresses(quarter);
    q.sort_by_key(|a| a.0);
    let want: Vec<u64> = (0..4).map(|k| table + 8 * k).collect();
    assert_eq!(q.iter().map(|a| a.0).collect::<Vec<_>>(), want);
    assert!(q.iter().all(|a| a.1 == 0.25 && a.2 == 0.25), "{q:?}");
    // table[7]: one address, always.
    let seventh = pcs
        .iter()
        .find(|p| addresses(p).iter().any(|a| a.0 == table + 56))
        .expect("a load of table[7]");
    assert_eq!(addresses(seventh), [(table + 56, 1.0, 1.0)]);
    assert!(
        v["weighted_rms_error"].as_f64().unwrap() < 0.01,
        "{}",
        v["weighted_rms_error"]
    );
}

/// Two phases: a loop loading 5s, long enough for the profile to complete
/// on it, then, in another function (a new load PC), a longer loop loading
/// 9s.
const TWO_PHASES: &str = r#"
#include <stdio.h>
#include <stdlib.h>
volatile long first[4] = {5, 5, 5, 5};
volatile long second[4] = {9, 9, 9, 9};
__attribute__((noinline)) long sum(volatile long *t, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) s += t[i & 3];
    return s;
}
__attribute__((noinline)) long mix(volatile long *t, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) s ^= t[i & 3] + i;
    return s;
}
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    long s = sum(first, 4 * n);
    s += mix(second, 8 * n);
    printf("%ld\n", s);
    return 0;
}
"#;

#[test]
fn watching_for_new_loads_finds_a_later_phase() {
    let dir = TempDir::new().unwrap();
    let prog = common::compile(dir.path(), "phases", TWO_PHASES);
    let run = |extra: &[&str]| -> Value {
        // An empty environment and a fixed seed: the same instructions on
        // every machine, so that the first phase completes the profile
        // wherever the test runs.
        common::json_of(
            coprof()
                .env_clear()
                .args(["values", "--exact", "--json", "--random-seed", "1"])
                .args(extra)
                .arg("--")
                .arg(&prog)
                .arg("100000"),
        )
    };
    // The estimate for the second phase's load (value 9), if reported.
    let nines = |v: &Value| -> Option<f64> {
        v["pcs"].as_array().unwrap().iter().find_map(|p| {
            let top = &p["values"][0];
            (top["value"] == 9 && p["executions"].as_u64().unwrap() >= 800_000)
                .then(|| top["invariance"].as_f64().unwrap())
        })
    };
    // The paper's rule: the first phase completes the profile, profiling
    // stops, and the second phase's load is never seen.
    let plain = run(&[]);
    assert_eq!(plain["engine"]["complete"], true);
    assert!(plain["engine"]["host"]["stopped_at"].is_u64());
    assert_eq!(nines(&plain), None, "{}", plain["pcs"]);
    // Watching, the new load is profiled: invariant, as it is.
    let watched = run(&["--watch-new-loads"]);
    assert_eq!(watched["engine"]["config"]["watch_new_loads"], true);
    let inv = nines(&watched).unwrap_or_else(|| panic!("{}", watched["pcs"]));
    assert!(inv > 0.9, "{inv}");
    assert!(
        watched["weighted_rms_error"].as_f64().unwrap()
            < plain["weighted_rms_error"].as_f64().unwrap()
    );
}

#[test]
fn slow_coprocessor_drops_samples() {
    let dir = TempDir::new().unwrap();
    let t = gen_trace(dir.path(), "zipf", 100_000, 3);
    let v = json(&t, &["--service-rate", "0.1", "--slots", "128"]);
    assert!(
        v["samples_dropped"].as_u64().unwrap() > 50_000,
        "{}",
        v["samples_dropped"]
    );
}

#[test]
fn text_report_names_the_metric() {
    let dir = TempDir::new().unwrap();
    let t = gen_trace(dir.path(), "zipf", 50_000, 3);
    coprof()
        .args(["values", "--exact", "--limit", "3"])
        .arg(&t)
        .assert()
        .success()
        .stdout(predicates::str::contains("weighted RMS invariance error"))
        .stdout(predicates::str::contains("more loads"));
}

#[test]
fn bad_options_and_input_exit_2_with_a_message() {
    let dir = TempDir::new().unwrap();
    let t = gen_trace(dir.path(), "zipf", 1000, 3);
    let bad = |args: &[&str], needle: &str| {
        let out = coprof().arg("values").arg(&t).args(args).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    };
    bad(&["--slots", "0"], "--slots");
    bad(
        &["--algo", "simple", "--slots", "128"],
        "--slots applies to --algo coproc",
    );
    bad(&["--period", "8"], "--period");
    bad(&["--algo", "simple", "--period", "0"], "--period");
    bad(&["--algo", "hotlist", "--variant", "bogus"], "bogus");
    bad(&["--algo", "hotlist", "--hotlist-size", "1"], "capacity");
    bad(
        &["--algo", "hotlist", "--value-type", "bogus"],
        "invalid value 'bogus' for '--value-type <TYPE>'",
    );
    bad(
        &["--value-type", "address"],
        "--value-type address applies to --algo hotlist",
    );
    bad(&["--service-rate", "0"], "service rate");
    bad(&["--partition-hash", "md5"], "md5");
    bad(
        &["--algo", "hotlist", "--watch-new-loads"],
        "--watch-new-loads applies to --algo coproc",
    );
    bad(&["--algo", "nope"], "nope");

    let garbage = dir.path().join("garbage.cpt");
    std::fs::write(&garbage, b"this is not a trace file at all, not even close").unwrap();
    let out = coprof().arg("values").arg(&garbage).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("garbage.cpt") || err.contains("trace"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

/// Loads of pointers that never change: a function pointer and a pointer
/// to a global array, each read through a `volatile` global.
const POINTERS: &str = r#"
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) long twice(long x) { return 2 * x; }
long counts[16];
long (*volatile op)(long) = twice;
long *volatile where = counts;
int main(int argc, char **argv) {
    long n = atol(argv[1]), s = 0;
    for (long i = 0; i < n; i++) {
        s += op(i);
        where[i & 15] += s;
    }
    fprintf(stderr, "twice %p counts %p %ld\n", (void *)twice, (void *)counts, s);
    return 0;
}
"#;

/// `coprof values --json -- PROG 20000`'s report, and what the program
/// wrote to standard error.
fn live_values(prog: &Path) -> (Value, String) {
    let out = coprof()
        .args(["values", "--json", "--"])
        .arg(prog)
        .arg("20000")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

/// A value that is the address of a function or a global is named, as gdb
/// names a pointer; a plain number is not.
#[test]
fn values_that_point_at_a_function_or_a_global_are_named() {
    let dir = TempDir::new().unwrap();
    let prog = common::compile(dir.path(), "pointers", POINTERS);
    let (v, stderr) = live_values(&prog);
    // The program prints its own addresses, independently of coprof.
    let address = |name: &str| printed_address(&stderr, name);
    let values: Vec<&Value> = v["pcs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["values"].as_array().unwrap())
        .collect();
    for (name, at) in [("twice", address("twice")), ("counts", address("counts"))] {
        let loaded = values
            .iter()
            .find(|x| x["value"] == at)
            .unwrap_or_else(|| panic!("no load of {name}'s address {at:#x}: {v}"));
        assert_eq!(loaded["points_to"], name, "{loaded}");
    }
    // The loop's other values are numbers: none named.
    for x in &values {
        let value = x["value"].as_u64().unwrap();
        if value != address("twice") && value != address("counts") && value < 0x1000 {
            assert!(x.get("points_to").is_none(), "{x}");
        }
    }
    // The text shows the name beside the value.
    let text = coprof()
        .args(["values", "--"])
        .arg(&prog)
        .arg("20000")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains(&format!("{:#x} <twice> ", address("twice"))),
        "{text}"
    );
}

const VIRTUAL_CALLS: &str = r#"
#include <cstdio>
#include <cstdlib>
struct Shape {
    virtual long area() const = 0;
    virtual ~Shape() {}
};
struct Circle : Shape {
    long r;
    explicit Circle(long r) : r(r) {}
    long area() const override { return 3 * r * r; }
};
struct Square : Shape {
    long s;
    explicit Square(long s) : s(s) {}
    long area() const override { return s * s; }
};
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    Shape *shapes[4];
    for (int i = 0; i < 4; i++)
        shapes[i] = new Circle(i + 1);
    // Opaque to the compiler, so the calls stay virtual.
    Shape *volatile other = new Square(2);
    long s = 0;
    for (int i = 0; i < n; i++)
        s += shapes[i & 3]->area();
    s += other->area();
    fprintf(stderr, "sum %ld circle 0x%lx square 0x%lx\n", s,
            *(unsigned long *)shapes[0], *(unsigned long *)other);
    return 0;
}
"#;

/// A value that points into a C++ virtual table (an object's first word)
/// is named after the table and the offset, as gdb names it: the load
/// that always reads one is a virtual call that could be made direct.
#[test]
fn values_that_point_into_a_virtual_table_are_named() {
    let dir = TempDir::new().unwrap();
    let prog = common::compile_cpp(dir.path(), "shapes", VIRTUAL_CALLS);
    let (v, stderr) = live_values(&prog);
    // The objects' first words, as the program read them itself.
    let circle = printed_address(&stderr, "circle");
    let vptr_load = v["pcs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["values"][0]["value"] == circle)
        .unwrap_or_else(|| panic!("no load of the Circle vptr {circle:#x}: {v}"));
    let top = &vptr_load["values"][0];
    assert_eq!(top["points_to"], "vtable for Circle+0x10", "{vptr_load}");
    assert_eq!(top["invariance"], 1.0, "{vptr_load}");
    // The ELF's own symbol for the table (mangled `_ZTV6Circle`) starts
    // 16 bytes before: past the offset-to-top and type-info words.
    let table = symbol_address(&prog, "_ZTV6Circle");
    assert_eq!(circle, table + 16);
    // The Square's table is another object's, and loaded once: whatever
    // reports it names its own table.
    let square = printed_address(&stderr, "square");
    assert_eq!(square, symbol_address(&prog, "_ZTV6Square") + 16);
    for x in v["pcs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["values"].as_array().unwrap())
        .filter(|x| x["value"] == square)
    {
        assert_eq!(x["points_to"], "vtable for Square+0x10", "{x}");
    }
}

/// The address of the symbol `name` in the ELF file `prog`.
fn symbol_address(prog: &Path, name: &str) -> u64 {
    use object::{Object, ObjectSymbol};
    let data = std::fs::read(prog).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let address = file
        .symbols()
        .find(|s| s.name() == Ok(name))
        .unwrap_or_else(|| panic!("no symbol {name} in {}", prog.display()))
        .address();
    address
}

const TWO_CALL_SITES: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static void *seen[2];
__attribute__((noinline)) long leaf(long x) { return x * 3 + 1; }
/* Not a leaf: it saves its return address and loads it back to return. */
__attribute__((noinline)) long helper(long x, int site) {
    seen[site] = __builtin_return_address(0);
    return leaf(x) + leaf(x + 1);
}
int main(int argc, char **argv) {
    long n = atol(argv[1]), s = 0;
    for (long i = 0; i < n; i++) {
        s += helper(i, 0);
        if (i % 4 == 0)
            s += helper(i, 1);
    }
    fprintf(stderr, "sum %ld first %p second %p\n", s, seen[0], seen[1]);
    return 0;
}
"#;

/// The values of a return-address load (`ld ra, …`) are places in the
/// code, the call sites it returns to, named as gdb names a code address
/// (`<main+0x2a>`), with their shares: 4 in 5 returns go to the first.
#[test]
fn return_addresses_loaded_are_named_as_places_in_the_code() {
    let dir = TempDir::new().unwrap();
    let prog = common::compile(dir.path(), "callsites", TWO_CALL_SITES);
    let (v, stderr) = live_values(&prog);
    // Where helper returns to, as the program found it itself.
    let (first, second) = (
        printed_address(&stderr, "first"),
        printed_address(&stderr, "second"),
    );
    let main = symbol_address(&prog, "main");
    let load = v["pcs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            p["disasm"]
                .as_str()
                .is_some_and(|d| d.starts_with("ld ra,"))
        })
        .unwrap_or_else(|| panic!("no load of ra: {v}"));
    assert_eq!(
        load["place"].as_str().map(|p| p.starts_with("helper")),
        Some(true),
        "{load}"
    );
    let values = load["values"].as_array().unwrap();
    let value = |at: u64| {
        values
            .iter()
            .find(|x| x["value"] == at)
            .unwrap_or_else(|| panic!("no return to {at:#x}: {load}"))
    };
    for at in [first, second] {
        assert_eq!(
            value(at)["points_to"],
            format!("main+{:#x}", at - main),
            "{load}"
        );
    }
    let share = |at: u64| value(at)["invariance"].as_f64().unwrap();
    assert!((share(first) - 0.8).abs() < 0.05, "{load}");
    assert!((share(second) - 0.2).abs() < 0.05, "{load}");
}

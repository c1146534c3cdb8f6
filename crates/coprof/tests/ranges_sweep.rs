//! `coprof ranges --sweep`: RAP's design space in one pass, each
//! configuration against `coprof ranges` run alone with the same options
//! and `--exact`, on a trace and on a live program, and its errors.

mod common;

use common::{coprof, gen_trace, json_of};
use serde_json::Value;
use std::ffi::OsStr;

/// `coprof ranges SOURCE ARGS --json`, SOURCE a trace or `-- PROG`.
fn ranges(source: &[&OsStr], args: &[&str]) -> Value {
    let mut cmd = coprof();
    cmd.arg("ranges").args(args).arg("--json");
    json_of(cmd.args(source))
}

/// Checks every point of `sweep` against `coprof ranges` alone with its
/// options and `--exact`, and the smallest against the points.
fn check_sweep(source: &[&OsStr], stream: &str, sweep: &Value, configs: usize) {
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points.len(), configs, "{sweep}");
    for p in points {
        let (eps, b, buffer) = (
            p["epsilon"].to_string(),
            p["branching"].to_string(),
            p["buffer_bytes"].as_u64().unwrap(),
        );
        let mut args = vec![
            "--stream",
            stream,
            "--exact",
            "--epsilon",
            &eps,
            "--branching",
            &b,
        ];
        let bytes = buffer.to_string();
        if buffer == 0 {
            args.push("--no-buffer");
        } else {
            args.extend(["--buffer-bytes", &bytes]);
        }
        let alone = ranges(source, &args);
        let what = format!("epsilon {eps}, branching {b}, buffer {buffer}");
        assert_eq!(alone["n"], sweep["n"], "{what}");
        assert_eq!(alone["exact_distinct"], sweep["distinct"], "{what}");
        for (mine, theirs) in [
            ("nodes_max", "nodes_max"),
            ("nodes_avg", "nodes_avg"),
            ("avg_error_pct", "avg_error_pct"),
            ("max_error_pct", "max_error_pct"),
        ] {
            assert_eq!(p[mine], alone[theirs], "{what}: {mine}");
        }
        assert_eq!(p["buffer_hits"], alone["buffer"]["hits"], "{what}");
        assert_eq!(
            p["hot_ranges"].as_u64().unwrap() as usize,
            alone["hot_ranges"].as_array().unwrap().len(),
            "{what}"
        );
        let entries = alone["buffer"]["entries"].as_u64().unwrap();
        let memory = alone["nodes_max"].as_u64().unwrap() * 12 + entries * 16;
        assert_eq!(p["memory_bytes"].as_u64().unwrap(), memory, "{what}");
        let bound =
            alone["max_abs_error_over_n"].as_f64().unwrap() / p["epsilon"].as_f64().unwrap();
        assert!(
            (p["worst_over_bound"].as_f64().unwrap() - bound).abs() < 1e-12,
            "{what}"
        );
        assert!(bound <= 1.0, "{what}: the paper's bound");
    }
    let target = sweep["target"].as_f64().unwrap();
    let reaching: Vec<&Value> = points
        .iter()
        .filter(|p| p["accuracy"].as_f64().unwrap() >= target)
        .collect();
    let least = reaching
        .iter()
        .map(|p| p["memory_bytes"].as_u64().unwrap())
        .min();
    match least {
        Some(m) => {
            let s = &sweep["smallest"];
            assert_eq!(s["memory_bytes"].as_u64(), Some(m), "{sweep}");
            assert!(s["accuracy"].as_f64().unwrap() >= target);
            assert!(points.contains(s));
        }
        None => assert!(sweep["smallest"].is_null()),
    }
}

#[test]
fn a_sweep_over_a_trace_is_each_configuration_run_alone() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "mixed", 120_000, 3);
    let source = [trace.as_os_str()];
    let sweep = ranges(
        &source,
        &[
            "--stream",
            "load-addr",
            "--sweep",
            "--sweep-epsilon",
            "0.1,0.01",
            "--sweep-branching",
            "2,8",
            "--sweep-buffer",
            "0,512",
            "--target",
            "0.995",
        ],
    );
    assert_eq!(sweep["stream"], "load-addr");
    assert!(sweep["n"].as_u64().unwrap() > 10_000, "{sweep}");
    check_sweep(&source, "load-addr", &sweep, 8);
    // The grid's order: ε slowest, the buffer fastest.
    let order: Vec<(f64, u64, u64)> = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["epsilon"].as_f64().unwrap(),
                p["branching"].as_u64().unwrap(),
                p["buffer_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(order[0], (0.1, 2, 0));
    assert_eq!(order[1], (0.1, 2, 512));
    assert_eq!(order[2], (0.1, 8, 0));
    assert_eq!(order[7], (0.01, 8, 512));
}

#[test]
fn a_sweep_of_a_live_programs_code_is_each_configuration_run_alone() {
    let dir = tempfile::tempdir().unwrap();
    let src = r#"
        #include <stdio.h>
        static unsigned step(unsigned x) { return x * 1103515245u + 12345u; }
        int main(void) {
            unsigned x = 1, h = 0;
            for (int i = 0; i < 200000; i++) {
                x = step(x);
                if (x & 0x100) h += x >> 3; else h ^= x;
            }
            printf("%u\n", h);
            return 0;
        }
    "#;
    let bin = common::compile(dir.path(), "code", src);
    let source = [OsStr::new("--"), bin.as_os_str()];
    let sweep = ranges(
        &source,
        &[
            "--sweep",
            "--sweep-epsilon",
            "0.1,0.01",
            "--sweep-branching",
            "4",
            "--sweep-buffer",
            "0,1024",
        ],
    );
    assert_eq!(sweep["stream"], "pc");
    assert!(sweep["n"].as_u64().unwrap() > 1_000_000, "{sweep}");
    check_sweep(&source, "pc", &sweep, 4);
    // The loop's PCs come again and again: the paper's buffer combines
    // some of them, and no buffer combines none.
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points[0]["buffer_hits"], 0);
    assert!(points[1]["buffer_hits"].as_u64().unwrap() > 0);
}

#[test]
fn a_profile_holds_a_sweep_beside_its_other_reports() {
    let dir = tempfile::tempdir().unwrap();
    let bin = common::compile(
        dir.path(),
        "small",
        "int main(void) { volatile unsigned s = 0; for (int i = 0; i < 50000; i++) s += i; return 0; }",
    );
    let out = dir.path().join("p.json");
    // --exact and --block-buffer go to the one code profile, not to the
    // sweep, which takes neither.
    coprof()
        .args(["profile", "--exact", "--block-buffer", "4096", "-o"])
        .arg(&out)
        .args(["--report", "ranges", "--report"])
        .arg("ranges --sweep --sweep-epsilon 0.1,0.01 --sweep-branching 4 --sweep-buffer 1024")
        .arg("--")
        .arg(&bin)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let reports = v["reports"].as_array().unwrap();
    let (one, sweep) = (&reports[0]["json"], &reports[1]["json"]);
    assert!(
        one["block_buffer"].is_object() && one["exact_distinct"].is_number(),
        "{one}"
    );
    assert_eq!(sweep["points"].as_array().unwrap().len(), 2, "{sweep}");
    assert_eq!(sweep["n"], one["n"]);
    assert_eq!(sweep["distinct"], one["exact_distinct"]);
}

/// The text of a sweep of one configuration (ε = 10%, b = 4, no buffer)
/// over `trace`, with `args`.
fn one_configuration(trace: &std::path::Path, args: &[&str]) -> String {
    let sweep = [
        "--sweep",
        "--sweep-epsilon",
        "0.1",
        "--sweep-branching",
        "4",
        "--sweep-buffer",
        "0",
    ];
    common::stdout_of(coprof().arg("ranges").arg(trace).args(sweep).args(args))
}

#[test]
fn the_text_names_the_smallest_configuration_by_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "zipf", 40_000, 2);
    let out = one_configuration(&trace, &["--stream", "load-value", "--target", "0"]);
    assert!(
        out.starts_with("RAP design-space sweep over load-value: n = 40,000 events"),
        "{out}"
    );
    assert!(
        out.contains(
            "smallest configuration reaching accuracy 0: --epsilon 0.1 --branching 4 --no-buffer,"
        ),
        "{out}"
    );
    // A loop's code, whose hot ranges at ε = 10% miss some of their
    // events: no configuration is exact.
    let loops = gen_trace(dir.path(), "loops", 40_000, 2);
    let out = one_configuration(&loops, &["--target", "1"]);
    assert!(
        out.contains("no configuration reaches accuracy 1 (best "),
        "{out}"
    );
}

#[test]
fn bad_sweeps_are_named_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "zipf", 1000, 1);
    common::rejects(
        "ranges",
        &trace,
        &[
            (vec!["--sweep", "--epsilon", "0.1"], "--epsilon"),
            (vec!["--sweep", "--exact"], "--exact"),
            (vec!["--sweep", "--dims", "pc,load-addr"], "--dims"),
            (vec!["--sweep-epsilon", "0.1"], "--sweep"),
            (vec!["--target", "0.9"], "--sweep"),
            (
                vec!["--sweep", "--sweep-branching", "4,3"],
                "--sweep: configuration epsilon 0.1, branching 3, buffer 0 bytes: ",
            ),
            (
                vec!["--sweep", "--sweep-epsilon", "0.1,2"],
                "--sweep: configuration epsilon 2, branching 2, buffer 0 bytes: ",
            ),
            (vec!["--sweep", "--sweep-buffer", "0,8"], "buffer 8 bytes"),
            (
                vec!["--sweep", "--target", "1.5"],
                "--target must be an accuracy from 0 to 1",
            ),
            (vec!["--sweep", "--sweep-epsilon", "x"], "--sweep-epsilon"),
        ],
    );
}

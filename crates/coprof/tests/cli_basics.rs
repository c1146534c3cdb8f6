//! The `coprof` program end to end: gen, info, demo and their errors.

mod common;

use common::{coprof, gen_trace, json_of};
use predicates::prelude::*;
use serde_json::Value;

#[test]
fn help_lists_every_subcommand_with_examples() {
    coprof().arg("--help").assert().success().stdout(
        predicate::str::contains("gen")
            .and(predicate::str::contains("info"))
            .and(predicate::str::contains("demo")),
    );
    for sub in [
        "gen", "info", "demo", "bench", "loops", "ranges", "values", "sample", "run", "profile",
        "report",
    ] {
        coprof()
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:"));
    }
}

#[test]
fn gen_then_info_json_counts_every_class() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen_trace(dir.path(), "mixed", 100_000, 3);
    let out = coprof()
        .args(["info", "--json"])
        .arg(&p)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["events"], 100_000);
    let classes = v["classes"].as_object().unwrap();
    let sum: u64 = classes.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(sum, 100_000);
    assert!(classes["load"].as_u64().unwrap() > 10_000);
    let bpe = v["bytes_per_event"].as_f64().unwrap();
    let size = std::fs::metadata(&p).unwrap().len() as f64;
    assert!((bpe - size / 100_000.0).abs() < 1e-9);
    assert_eq!(v["meta"]["program"], "mixed");
}

#[test]
fn gen_is_deterministic_and_seeded() {
    let dir = tempfile::tempdir().unwrap();
    let a = gen_trace(dir.path(), "zipf", 20_000, 3);
    let b = dir.path().join("again.cpt");
    coprof()
        .args(["gen", "-w", "zipf", "-n", "20000", "--seed", "3", "-o"])
        .arg(&b)
        .assert()
        .success();
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let c = dir.path().join("other.cpt");
    coprof()
        .args(["gen", "-w", "zipf", "-n", "20000", "--seed", "4", "-o"])
        .arg(&c)
        .assert()
        .success();
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());
}

#[test]
fn gen_classes_filter_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("loads.cpt");
    coprof()
        .args([
            "gen",
            "-w",
            "mixed",
            "-n",
            "50000",
            "--classes",
            "load,store",
            "--json",
            "-o",
        ])
        .arg(&p)
        .assert()
        .success();
    let out = coprof().args(["info", "--json"]).arg(&p).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let classes: Vec<&String> = v["classes"].as_object().unwrap().keys().collect();
    assert_eq!(classes, ["load", "store"]);
    assert_eq!(v["meta"]["classes"], serde_json::json!(["load", "store"]));
}

#[test]
fn info_text_names_the_counts() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen_trace(dir.path(), "loops", 50_000, 3);
    coprof()
        .arg("info")
        .arg(&p)
        .assert()
        .success()
        .stdout(predicate::str::contains("50,000").and(predicate::str::contains("cond-branch")));
}

#[test]
fn bad_traces_exit_2_naming_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen_trace(dir.path(), "loops", 100_000, 3);
    let bytes = std::fs::read(&p).unwrap();

    let notrace = dir.path().join("notrace.cpt");
    std::fs::write(&notrace, b"#!/bin/sh\necho hi\n").unwrap();
    coprof().arg("info").arg(&notrace).assert().code(2).stderr(
        predicate::str::contains("notrace.cpt")
            .and(predicate::str::contains("byte 0"))
            .and(predicate::str::contains("not a coprof trace")),
    );

    let cut = dir.path().join("cut.cpt");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    coprof()
        .arg("info")
        .arg(&cut)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("truncated"));

    let mut v = bytes.clone();
    v[8] = 7;
    let ver = dir.path().join("ver.cpt");
    std::fs::write(&ver, &v).unwrap();
    coprof()
        .arg("info")
        .arg(&ver)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("version 7"));

    let mut m = bytes.clone();
    m[16] = b'x';
    let meta = dir.path().join("meta.cpt");
    std::fs::write(&meta, &m).unwrap();
    coprof()
        .arg("info")
        .arg(&meta)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("metadata"));

    let mut c = bytes.clone();
    let n = c.len();
    c[n - 100] ^= 0xff;
    let corrupt = dir.path().join("corrupt.cpt");
    std::fs::write(&corrupt, &c).unwrap();
    coprof().arg("info").arg(&corrupt).assert().code(2).stderr(
        predicate::str::contains("corrupt").and(predicate::str::contains("panicked").not()),
    );

    coprof()
        .arg("info")
        .arg(dir.path().join("missing.cpt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.cpt"));
}

#[test]
fn a_trace_on_standard_input_is_read_as_dash() {
    // `-` reads the trace from standard input, once, in every command that
    // takes a trace: the same reports as from the file.
    let dir = tempfile::tempdir().unwrap();
    let p = gen_trace(dir.path(), "mixed", 200_000, 5);
    let bytes = std::fs::read(&p).unwrap();
    for cmd in [
        vec!["loops"],
        vec!["ranges", "--stream", "load-value", "--json"],
        vec!["values"],
        vec!["sample", "-s", "counter:16", "--eval"],
        vec!["profile", "--json"],
        vec!["info", "--json"],
    ] {
        let from_file = common::succeeded(coprof().args(&cmd).arg(&p));
        let from_stdin = common::succeeded(coprof().args(&cmd).arg("-").write_stdin(bytes.clone()));
        let name = p.to_str().unwrap();
        let file_text = String::from_utf8(from_file.stdout).unwrap();
        let stdin_text = String::from_utf8(from_stdin.stdout).unwrap();
        assert!(file_text.len() > 200, "{cmd:?}: {file_text}");
        assert_eq!(
            file_text.replace(name, "-"),
            stdin_text,
            "{cmd:?}: the same report but for the input's name"
        );
    }
    // A sampled trace written from standard input: the header's event
    // count (read before the events) and the samples are the file's.
    let out = dir.path().join("sampled.cpt");
    coprof()
        .args(["sample", "-s", "counter:16", "-o"])
        .arg(&out)
        .arg("-")
        .write_stdin(bytes.clone())
        .assert()
        .success()
        .stdout(predicate::str::contains("of 200,000 events"));
    // Bad input there is named as standard input, with the offset.
    coprof()
        .args(["loops", "-"])
        .write_stdin(b"#!/bin/sh\n".to_vec())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("standard input: byte 0")
                .and(predicate::str::contains("not a coprof trace")),
        );
    coprof()
        .args(["ranges", "-"])
        .write_stdin(bytes[..bytes.len() / 2].to_vec())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("standard input")
                .and(predicate::str::contains("truncated"))
                .and(predicate::str::contains("panicked").not()),
        );
}

#[test]
fn bad_options_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("x.cpt");
    coprof()
        .args(["gen", "-w", "nonsense", "-o"])
        .arg(&o)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nonsense"));
    coprof()
        .args(["gen", "--alpha=-2", "-o"])
        .arg(&o)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--alpha"));
    coprof()
        .args(["gen", "--classes", "load,bogus", "-o"])
        .arg(&o)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bogus"));
    coprof().args(["frobnicate"]).assert().code(2);
    assert!(!o.exists(), "a failed gen left a file behind");
}

/// The options of a program's run mean nothing to a trace recorded
/// already: each is refused by name instead of being ignored.
#[test]
fn program_options_are_refused_with_a_trace_file() {
    let dir = tempfile::tempdir().unwrap();
    let trace = common::gen_trace(dir.path(), "loops", 2000, 1);
    for (command, option) in [
        (vec!["loops", "--quantum", "10"], "--quantum"),
        (vec!["ranges", "--random-seed", "3"], "--random-seed"),
        (vec!["values", "--enosys"], "--enosys"),
        (vec!["profile", "--root", "/tmp"], "--root"),
        (vec!["loops", "--isa", "rv64gc"], "--isa"),
    ] {
        coprof()
            .args(&command)
            .arg(&trace)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "{option} applies to a program run after `--`, not to the trace file"
            )));
    }
    coprof().args(["loops"]).arg(&trace).assert().success();
}

#[test]
fn unwritable_output_is_an_error_not_a_panic() {
    coprof()
        .args(["gen", "-n", "10", "-o", "/nonexistent-dir/x.cpt"])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("/nonexistent-dir/x.cpt")
                .and(predicate::str::contains("panicked").not()),
        );
}

#[test]
fn demo_needs_no_arguments_and_profiles_the_bundled_program() {
    let out = common::succeeded(coprof().arg("demo"));
    let text = String::from_utf8(out.stdout).unwrap();
    for heading in [
        "== loops",
        "== ranges-pc",
        "== ranges-load-value",
        "== values",
        "== sample",
    ] {
        assert!(text.contains(heading), "no {heading} in:\n{text}");
    }
    assert!(text.contains("exit status 0"));
    assert!(text.contains("accuracy (1 - SOD"));
    // The commands it prints name a temporary file: it says how to get
    // the program to rerun them.
    assert!(text.contains("workloads/build-kernels.sh"), "{text}");
    // The program's own output is kept off the report.
    assert!(String::from_utf8_lossy(&out.stderr).contains("dijkstra: reps 1 checksum"));

    let out = common::succeeded(coprof().args(["demo", "--json"]));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], 0);
    assert!(v["instructions"].as_u64().unwrap() > 50_000_000);
    // The frequent loop cache finds the program's loops as the exact count does.
    let loops = &v["reports"][0]["json"];
    assert!(loops["accuracy"].as_f64().unwrap() > 0.95, "{loops}");
}

#[test]
fn synthetic_demo_reports_loops_and_values() {
    coprof()
        .args(["demo", "--synthetic", "-n", "200000"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("hottest loops").and(predicate::str::contains("invariant")),
        );
    let out = common::succeeded(coprof().args(["demo", "--synthetic", "-n", "200000", "--json"]));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["events"], 200_000);
    assert!(!v["loops"].as_array().unwrap().is_empty());
    coprof()
        .args(["demo", "-n", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--synthetic"));
}

#[test]
fn closed_stdout_ends_quietly_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen_trace(dir.path(), "loops", 300_000, 3);
    for args in [vec!["loops", "--exact"], vec!["ranges"], vec!["values"]] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("coprof"))
            .args(&args)
            .arg(&p)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the report is written, as `| head` does.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            !out.status.success() || stderr.is_empty(),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn bench_and_output_errors_name_the_option_or_directory() {
    coprof()
        .args(["bench", "io", "--events", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--events"));
    coprof()
        .args(["bench", "io", "--runs", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--runs"));
    coprof()
        .args(["gen", "--workload", "loops", "-n", "1000", "-o"])
        .arg("/nonexistent-dir/x.cpt")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("/nonexistent-dir/x.cpt: cannot create the trace file")
                .and(predicate::str::contains(
                    "directory /nonexistent-dir does not exist",
                ))
                .and(predicate::str::contains(".tmp").not()),
        );
}

#[test]
fn bench_io_measures_every_workload_and_reports_json() {
    let out = common::succeeded(
        coprof().args(["bench", "io", "--events", "20000", "--runs", "1", "--json"]),
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["workload"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["zipf", "uniform", "loops", "phases", "methods", "mixed"]
    );
    for r in rows {
        assert_eq!(r["events"], 20000);
        assert_eq!(r["memory_bytes_per_event"], 32);
        // The compressed file is smaller than the raw records, and both
        // speeds are measured.
        let file = r["file_bytes_per_event"].as_f64().unwrap();
        assert!(file > 0.0 && file < r["raw_bytes_per_event"].as_f64().unwrap());
        assert!(r["write_mevents_per_s"].as_f64().unwrap() > 0.0);
        assert!(r["read_mevents_per_s"].as_f64().unwrap() > 0.0);
    }
    // The loops workload meets the format's size target.
    assert!(rows[2]["file_bytes_per_event"].as_f64().unwrap() <= 10.0);
}

/// An option that names a file to write other than a trace refuses `-`
/// by name, where a user of gzip or tar means standard output, instead of
/// writing a file called `-`.
#[test]
fn a_dash_for_an_output_file_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "zipf", 1000, 1);
    let cases: [(&[&str], &str); 2] = [
        (&["profile", "-o", "-", "--", "prog"], "--output"),
        (&["ranges", "--dump", "-"], "--dump"),
    ];
    for (args, option) in cases {
        let mut cmd = coprof();
        cmd.current_dir(dir.path()).args(args);
        if args[0] == "ranges" {
            cmd.arg(&trace);
        }
        cmd.assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "invalid value '-' for '{option}"
            )))
            .stderr(predicate::str::contains("give a file name"));
        assert!(
            !dir.path().join("-").exists(),
            "{args:?} wrote a file named -"
        );
    }
}

/// A trace written to `-` streams on standard output, and the command's
/// summary goes to standard error, naming standard output: `gen` and
/// `sample -o` into a reader (`run --trace -` in tests/run.rs).
#[test]
fn a_dash_for_a_trace_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = gen_trace(dir.path(), "mixed", 50_000, 3);
    let gen = common::succeeded(coprof().current_dir(dir.path()).args([
        "gen",
        "--workload",
        "mixed",
        "--events",
        "50000",
        "--seed",
        "3",
        "-o",
        "-",
    ]));
    let summary = String::from_utf8_lossy(&gen.stderr);
    assert!(
        summary.contains("wrote 50,000 mixed events to standard output"),
        "{summary}"
    );
    // The same events as the file, streamed.
    let loops = |input: Option<Vec<u8>>| {
        let mut cmd = coprof();
        cmd.args(["loops", "--json"]);
        match input {
            Some(bytes) => cmd.arg("-").write_stdin(bytes),
            None => cmd.arg(&file),
        };
        let mut v = json_of(&mut cmd);
        v["input"] = serde_json::Value::Null;
        v
    };
    assert_eq!(loops(Some(gen.stdout.clone())), loops(None));
    let info = coprof()
        .args(["info", "-"])
        .write_stdin(gen.stdout.clone())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&info.stdout).contains(".cpt version 2, streamed"),
        "{info:?}"
    );
    // A sampled trace of standard input, on standard output.
    let sampled = common::succeeded(
        coprof()
            .current_dir(dir.path())
            .args(["sample", "-s", "counter:16", "-o", "-", "-"])
            .write_stdin(gen.stdout),
    );
    assert!(
        String::from_utf8_lossy(&sampled.stderr)
            .contains("of 50,000 events (all) with counter:16 into standard output"),
        "{sampled:?}"
    );
    let info = coprof()
        .args(["info", "--json", "-"])
        .write_stdin(sampled.stdout)
        .output()
        .unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(info["events"], 50_000 / 16, "{info}");
    assert_eq!(info["meta"]["source"], "sample");
    assert!(!dir.path().join("-").exists(), "a file named - was written");
}

/// A trace is not written to a terminal, as gzip writes no compressed
/// data there: `-` on a terminal is refused by name, before anything
/// runs. (`script`, of util-linux, gives the command a terminal.)
#[test]
fn a_trace_is_not_written_to_a_terminal() {
    let bin = assert_cmd::cargo::cargo_bin("coprof");
    for args in ["gen -w loops -n 1000 -o -", "run --trace - -- /nonexistent"] {
        let out = std::process::Command::new("script")
            .args(["-qec", &format!("{} {args}", bin.display()), "/dev/null"])
            .output()
            .expect("script (util-linux) runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{args}: {text}");
        assert!(
            text.contains("standard output is a terminal: a trace is binary"),
            "{args}: {text}"
        );
    }
}

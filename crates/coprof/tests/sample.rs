//! `coprof sample`: writing sampled traces, evaluating samplers with the
//! overlap metric (on traces and on a live program), and rejecting bad
//! options.

mod common;

use common::{coprof, gen_trace};
use predicates::str::contains;
use serde_json::Value;
use std::path::Path;

fn eval_json(trace: &Path, sampler: &str, extra: &[&str]) -> Value {
    common::json_of(
        coprof()
            .arg("sample")
            .arg(trace)
            .args(["--sampler", sampler, "--eval", "--json"])
            .args(extra),
    )
}

#[test]
fn eval_reports_overlap_and_finds_the_resonance() {
    let dir = tempfile::tempdir().unwrap();
    let t = gen_trace(dir.path(), "methods", 2_000_000, 3);
    let counter = eval_json(&t, "counter:64", &[]);
    let brr = eval_json(&t, "brr:5", &[]);
    for v in [&counter, &brr] {
        assert!(v["samples"].as_u64().unwrap() > 0);
        assert!(v["overlap"].as_f64().unwrap() <= 1.0);
        assert_eq!(v["profile"], "method");
        assert_eq!(v["classes"], "call");
    }
    assert_eq!(counter["sampler"], "counter:64");
    assert_eq!(brr["sampler"], "brr:5");
    // The resonant loop's two methods are the two largest entries; the
    // counter samples only one of them.
    let top = counter["top"].as_array().unwrap();
    let sampled: Vec<u64> = top[..2]
        .iter()
        .map(|e| e["sampled"].as_u64().unwrap())
        .collect();
    assert!(sampled.contains(&0), "counter sampled both: {sampled:?}");
    assert!(counter["missed_share"].as_f64().unwrap() > 0.3);
    let (oc, ob) = (
        counter["overlap"].as_f64().unwrap(),
        brr["overlap"].as_f64().unwrap(),
    );
    assert!(ob > oc + 0.25, "brr {ob} vs counter {oc}");
    // The spread bit selection is a sampler of its own, named as typed,
    // at the same rate and as free of resonance.
    let spread = eval_json(&t, "brr:5,spread", &[]);
    assert_eq!(spread["sampler"], "brr:5,spread");
    assert_eq!(spread["mean_interval"], 64.0);
    assert_ne!(spread["samples"], brr["samples"]);
    assert!(spread["overlap"].as_f64().unwrap() > oc + 0.25);
    // Same seed, same answer; another seed, other samples.
    assert_eq!(eval_json(&t, "brr:5", &[]), brr);
    assert_ne!(
        eval_json(&t, "brr:5", &["--seed", "9"])["samples"],
        brr["samples"]
    );
}

#[test]
fn eval_pc_profile_and_text_output() {
    let dir = tempfile::tempdir().unwrap();
    let t = gen_trace(dir.path(), "mixed", 200_000, 3);
    let v = eval_json(
        &t,
        "geometric:16",
        &["--profile", "pc", "--classes", "load"],
    );
    assert_eq!(v["classes"], "load");
    assert!(v["overlap"].as_f64().unwrap() > 0.5);
    coprof()
        .arg("sample")
        .arg(&t)
        .args(["--sampler", "periodic:100±10", "--eval", "--profile", "pc"])
        .assert()
        .success()
        .stdout(contains("overlap"))
        .stdout(contains("periodic:100±10"));
}

#[test]
fn writes_the_sampled_stream_as_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let t = gen_trace(dir.path(), "mixed", 300_000, 3);
    let out = dir.path().join("loads.cpt");
    let w = common::succeeded(
        coprof()
            .arg("sample")
            .arg(&t)
            .args([
                "--sampler",
                "counter:10",
                "--classes",
                "load",
                "--json",
                "-o",
            ])
            .arg(&out),
    );
    let w: Value = serde_json::from_slice(&w.stdout).unwrap();
    let info = common::succeeded(coprof().arg("info").arg("--json").arg(&out));
    let info: Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(info["events"], w["samples"]);
    assert_eq!(
        w["samples"].as_u64().unwrap(),
        w["events"].as_u64().unwrap() / 10
    );
    // Only loads were sampled.
    let classes = info["classes"].as_object().unwrap();
    assert_eq!(classes.len(), 1, "{classes:?}");
    assert!(classes.contains_key("load"));
    assert_eq!(info["meta"]["source"], "sample");
    assert_eq!(info["meta"]["sampler"], "counter:10");
    // The sampled trace is itself a valid input.
    coprof()
        .arg("sample")
        .arg(&out)
        .args(["--sampler", "brr:0", "--eval", "--profile", "pc"])
        .assert()
        .success();
}

#[test]
fn bad_options_are_named_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let t = gen_trace(dir.path(), "methods", 10_000, 3);
    let out = dir.path().join("never.cpt");
    for (sampler, msg) in [
        ("bogus:3", "unknown sampler"),
        ("brr:16", "0..=15"),
        ("counter:0", "at least 1"),
        ("counter:x", "not a non-negative integer"),
        ("periodic:10±10", "smaller than the period"),
        ("geometric", "missing parameter"),
        ("brr:9,wide", "unknown brr bit selection"),
    ] {
        coprof()
            .arg("sample")
            .arg(&t)
            .args(["--sampler", sampler, "-o"])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(contains(format!("--sampler '{sampler}'")))
            .stderr(contains(msg));
        assert!(!out.exists(), "{sampler} left an output file");
    }
    // Neither -o nor --eval.
    coprof()
        .arg("sample")
        .arg(&t)
        .args(["--sampler", "brr:1"])
        .assert()
        .code(2);
    // A method profile of loads has no calls to count.
    coprof()
        .arg("sample")
        .arg(&t)
        .args(["--sampler", "brr:1", "--eval", "--classes", "load"])
        .assert()
        .code(2)
        .stderr(contains("no events for a method profile"));
    // A missing input file.
    coprof()
        .arg("sample")
        .arg(dir.path().join("missing.cpt"))
        .args(["--sampler", "brr:1", "--eval"])
        .assert()
        .code(2)
        .stderr(contains("missing.cpt"));
}

#[test]
fn a_corrupt_input_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let t = gen_trace(dir.path(), "mixed", 100_000, 3);
    let mut bytes = std::fs::read(&t).unwrap();
    let n = bytes.len();
    bytes.truncate(n - n / 3);
    let bad = dir.path().join("bad.cpt");
    std::fs::write(&bad, bytes).unwrap();
    let out = dir.path().join("out.cpt");
    coprof()
        .arg("sample")
        .arg(&bad)
        .args(["--sampler", "brr:2", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("bad.cpt"));
    assert!(!out.exists());
}

/// A loop that calls two methods in turn: the jython case of Lee & Zilles
/// (CGO 2008, §4.2) in a real program.
const TICK_TOCK: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned sink;
__attribute__((noinline)) void tick(unsigned i) { sink += i; }
__attribute__((noinline)) void tock(unsigned i) { sink ^= i; }
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    for (int i = 0; i < n; i++) {
        tick(i);
        tock(i);
    }
    printf("done %u\n", sink);
    return 0;
}
"#;

#[test]
fn eval_of_a_live_program_finds_the_resonance() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile(dir.path(), "ticktock", TICK_TOCK);
    let live = |sampler: &str| -> Value {
        let out = coprof()
            .args(["sample", "--sampler", sampler, "--eval", "--json", "--"])
            .arg(&prog)
            .arg("20000")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The program's own output goes to stderr, the report to stdout.
        assert!(String::from_utf8_lossy(&out.stderr).contains("done "));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let counter = live("counter:4");
    let brr = live("brr:1");
    // tick and tock are called 20,000 times each: the two largest entries
    // of the method profile, and most of the program's calls.
    for v in [&counter, &brr] {
        assert_eq!(v["profile"], "method");
        assert_eq!(v["classes"], "call");
        let top = v["top"].as_array().unwrap();
        assert_eq!(top[0]["full"], 20_000, "{v}");
        assert_eq!(top[1]["full"], 20_000, "{v}");
        assert!(v["events"].as_u64().unwrap() >= 40_000);
        assert!(top[0]["full_share"].as_f64().unwrap() > 0.4, "{v}");
        // Each called function is named, with the file and line of its entry.
        let mut places: Vec<&str> = top[..2]
            .iter()
            .map(|e| {
                e["place"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no place: {e}"))
            })
            .collect();
        places.sort_unstable();
        assert!(places[0].starts_with("tick (ticktock.c:"), "{places:?}");
        assert!(places[1].starts_with("tock (ticktock.c:"), "{places:?}");
    }
    assert_eq!(counter, live("counter:4"), "a live run is deterministic");
    // Counting calls by 4, the counter samples only one of the two.
    let top = counter["top"].as_array().unwrap();
    let sampled: Vec<u64> = top[..2]
        .iter()
        .map(|e| e["sampled"].as_u64().unwrap())
        .collect();
    assert!(
        sampled.contains(&0) && sampled.iter().any(|&s| s > 0),
        "counter: {sampled:?}"
    );
    // brr samples both in their true proportion.
    for e in &brr["top"].as_array().unwrap()[..2] {
        let (f, s) = (
            e["full_share"].as_f64().unwrap(),
            e["sampled_share"].as_f64().unwrap(),
        );
        assert!((s - f).abs() < 0.03, "brr: {e}");
    }
    let (oc, ob) = (
        counter["overlap"].as_f64().unwrap(),
        brr["overlap"].as_f64().unwrap(),
    );
    assert!(ob > oc + 0.3, "brr {ob} vs counter {oc}");
}

/// `coprof sample --sweep --json` with `args`.
fn sweep_json(args: &[&str]) -> Value {
    common::json_of(coprof().args(["sample", "--sweep", "--json"]).args(args))
}

/// Every row of a sweep is what `--eval` gives with that sampler alone:
/// the same samples and the same overlap, over the same pass.
fn rows_equal_single_evaluations(sweep: &Value, eval: impl Fn(&str) -> Value) {
    let points = sweep["points"].as_array().unwrap();
    for p in points {
        let sampler = p["sampler"].as_str().unwrap();
        let alone = eval(sampler);
        assert_eq!(p["samples"], alone["samples"], "{sampler}");
        assert_eq!(p["overlap"], alone["overlap"], "{sampler}");
        assert_eq!(p["missed_share"], alone["missed_share"], "{sampler}");
        assert_eq!(sweep["events"], alone["events"], "{sampler}");
        assert_eq!(sweep["keys_full"], alone["keys_full"], "{sampler}");
    }
}

#[test]
fn a_sweep_scores_every_sampler_as_eval_does_and_finds_the_resonance() {
    let dir = tempfile::tempdir().unwrap();
    let t = gen_trace(dir.path(), "methods", 1_000_000, 3);
    let sweep = sweep_json(&[t.to_str().unwrap()]);
    let points = sweep["points"].as_array().unwrap();
    // Four methods at five intervals, interval by interval.
    assert_eq!(points.len(), 20);
    let order: Vec<(&str, u64)> = points
        .iter()
        .map(|p| {
            (
                p["method"].as_str().unwrap(),
                p["interval"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        order[..5],
        [
            ("brr", 16),
            ("counter", 16),
            ("geometric", 16),
            ("periodic", 16),
            ("brr", 64)
        ]
    );
    assert_eq!(points[0]["sampler"], "brr:3");
    assert_eq!(points[19]["sampler"], "periodic:4096±256");
    rows_equal_single_evaluations(&sweep, |s| eval_json(&t, s, &[]));
    // The counter resonates with the loop that calls two methods in turn:
    // it is the least accurate at every interval, and never the best.
    for chunk in points.chunks(4) {
        let counter = chunk[1]["overlap"].as_f64().unwrap();
        for other in [&chunk[0], &chunk[2], &chunk[3]] {
            assert!(
                other["overlap"].as_f64().unwrap() > counter + 0.2,
                "{chunk:?}"
            );
        }
    }
    let best = sweep["best"].as_array().unwrap();
    assert_eq!(best.len(), 5);
    for b in best {
        assert!(
            !b["sampler"].as_str().unwrap().starts_with("counter"),
            "{b}"
        );
        let interval = b["interval"].as_u64().unwrap();
        let top = points
            .iter()
            .filter(|p| p["interval"] == interval)
            .map(|p| p["overlap"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(b["overlap"].as_f64().unwrap(), top);
    }
    // The front: each sampler off it beaten on both samples and overlap
    // by one on it, none on it by any, and no counter sampler on it.
    let front = common::checked_front(
        &sweep,
        |p| p["samples"].as_u64().unwrap(),
        |p| -p["overlap"].as_f64().unwrap(),
    );
    for i in front {
        assert_ne!(points[i]["method"], "counter", "{}", points[i]);
    }
}

/// brr's other choices of register bits are methods of the sweep too.
#[test]
fn a_sweep_compares_brrs_register_bits() {
    let dir = tempfile::tempdir().unwrap();
    let t = gen_trace(dir.path(), "methods", 200_000, 3);
    let methods = ["--sweep-methods", "brr,brr-spread,brr-adjacent"];
    let sweep = sweep_json(
        &[
            &methods[..],
            &["--sweep-intervals", "16,1024", t.to_str().unwrap()],
        ]
        .concat(),
    );
    let samplers: Vec<&str> = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["sampler"].as_str().unwrap())
        .collect();
    assert_eq!(
        samplers,
        [
            "brr:3",
            "brr:3,spread",
            "brr:3,adjacent",
            "brr:9",
            "brr:9,spread",
            "brr:9,adjacent"
        ]
    );
    rows_equal_single_evaluations(&sweep, |s| eval_json(&t, s, &[]));
}

#[test]
fn a_sweep_of_a_live_programs_pc_profile_scores_as_eval_does() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile(dir.path(), "ticktock", TICK_TOCK);
    let p = prog.to_str().unwrap();
    let args = [
        "--sweep-methods",
        "brr,counter",
        "--sweep-intervals",
        "2,1024",
    ];
    let sweep = sweep_json(&[&args[..], &["--profile", "pc", "--", p, "3000"]].concat());
    assert_eq!(sweep["points"].as_array().unwrap().len(), 4);
    assert_eq!(sweep["profile"], "pc");
    rows_equal_single_evaluations(&sweep, |s| {
        common::json_of(
            coprof()
                .args([
                    "sample",
                    "--eval",
                    "--json",
                    "--profile",
                    "pc",
                    "--sampler",
                    s,
                    "--",
                ])
                .args([p, "3000"]),
        )
    });
    // As a report of a profile, beside another, the same rows.
    let file = dir.path().join("profile.json");
    let report = format!("sample --sweep --profile pc {}", args.join(" "));
    coprof()
        .args(["profile", "--report", "loops", "--report", &report, "-o"])
        .arg(&file)
        .args(["--", p, "3000"])
        .assert()
        .success();
    let saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let in_profile = saved["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["command"].as_str().unwrap().contains("sample --sweep"))
        .expect("the sweep is a report of the profile");
    assert_eq!(in_profile["json"]["points"], sweep["points"]);
    assert_eq!(in_profile["json"]["best"], sweep["best"]);
}

#[test]
fn a_sweeps_bad_options_are_named_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let t = gen_trace(dir.path(), "methods", 10_000, 3);
    let t = t.to_str().unwrap();
    for (args, msg) in [
        (
            &["--sweep-intervals", "100"][..],
            "--sweep-intervals 100: branch-on-random",
        ),
        (
            &["--sweep-intervals", "0", "--sweep-methods", "counter"],
            "--sweep-intervals 0",
        ),
        (&["--sweep-methods", "lfsr"], "invalid value 'lfsr'"),
        (&["--sampler", "brr:3"], "--sampler"),
        (&["--eval"], "--eval"),
        (&["-o", "x.cpt"], "--output"),
        (&["--top", "3"], "--top"),
    ] {
        coprof()
            .args(["sample", "--sweep", t])
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(msg));
    }
    // The sweep's lists need --sweep.
    coprof()
        .args([
            "sample",
            t,
            "--sampler",
            "brr:1",
            "--eval",
            "--sweep-intervals",
            "2",
        ])
        .assert()
        .code(2)
        .stderr(contains("--sweep"));
}

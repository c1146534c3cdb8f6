//! `coprof values --sweep`: the co-processor's, simple sampling's and the
//! hotlists' design spaces in one pass, each configuration against `coprof values` run
//! alone with the same options and `--exact`, on a trace and on a live
//! program, and their errors.

mod common;

use common::{coprof, gen_trace, json_of};
use serde_json::Value;
use std::ffi::OsStr;

/// `coprof values SOURCE ARGS --json`, SOURCE a trace or `-- PROG`.
fn values(source: &[&OsStr], args: &[&str]) -> Value {
    let mut cmd = coprof();
    cmd.arg("values").args(args).arg("--json");
    json_of(cmd.args(source))
}

/// Checks every point of `sweep` against `coprof values` alone with its
/// options, `base` and `--exact`, and the cheapest against the points.
fn check_sweep(source: &[&OsStr], base: &[&str], sweep: &Value, configs: usize) {
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points.len(), configs, "{sweep}");
    for p in points {
        let (slots, rate, buffer) = (
            p["slots"].to_string(),
            p["service_rate"].to_string(),
            p["buffer_bytes"].to_string(),
        );
        let mut args = vec![
            "--exact",
            "--slots",
            &slots,
            "--service-rate",
            &rate,
            "--buffer-bytes",
            &buffer,
        ];
        args.extend(base);
        let alone = values(source, &args);
        let what = format!("{slots} slots, service rate {rate}, buffer {buffer}");
        assert_eq!(alone["loads"], sweep["loads"], "{what}");
        assert_eq!(alone["scored_pairs"], sweep["scored_pairs"], "{what}");
        for (mine, theirs) in [
            ("weighted_rms_error", "weighted_rms_error"),
            ("unreported_pairs", "unreported_pairs"),
            ("interrupts", "interrupts"),
            ("samples_transferred", "samples_transferred"),
            ("samples_dropped", "samples_dropped"),
        ] {
            assert_eq!(p[mine], alone[theirs], "{what}: {mine}");
        }
        assert_eq!(
            p["loads_reported"].as_u64().unwrap() as usize,
            alone["pcs"].as_array().unwrap().len(),
            "{what}"
        );
        assert_eq!(p["complete"], alone["engine"]["complete"], "{what}");
        assert_eq!(
            p["samples_processed"], alone["engine"]["host"]["processed"],
            "{what}"
        );
    }
    let max = sweep["max_error"].as_f64().unwrap();
    let within: Vec<&Value> = points
        .iter()
        .filter(|p| p["weighted_rms_error"].as_f64().unwrap() <= max)
        .collect();
    match within
        .iter()
        .map(|p| p["hardware_bytes"].as_u64().unwrap())
        .min()
    {
        Some(least) if sweep["scored_pairs"].as_u64().unwrap() > 0 => {
            let c = &sweep["cheapest"];
            assert_eq!(c["hardware_bytes"].as_u64(), Some(least), "{sweep}");
            assert!(c["weighted_rms_error"].as_f64().unwrap() <= max);
            assert!(points.contains(c));
        }
        _ => assert!(sweep["cheapest"].is_null(), "{sweep}"),
    }
}

#[test]
fn a_sweep_over_a_trace_is_each_configuration_run_alone() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "mixed", 200_000, 3);
    let source = [trace.as_os_str()];
    let sweep = values(
        &source,
        &[
            "--sweep",
            "--sweep-slots",
            "32,256",
            "--sweep-service-rate",
            "1,0.02",
            "--sweep-buffer",
            "64,1024",
        ],
    );
    assert!(sweep["loads"].as_u64().unwrap() > 10_000, "{sweep}");
    assert!(sweep["scored_pairs"].as_u64().unwrap() > 0, "{sweep}");
    check_sweep(&source, &[], &sweep, 8);
    let points = sweep["points"].as_array().unwrap();
    // The grid's order: slots slowest, the buffer fastest.
    let key = |p: &Value| {
        (
            p["slots"].as_u64().unwrap(),
            p["service_rate"].as_f64().unwrap(),
            p["buffer_bytes"].as_u64().unwrap(),
        )
    };
    assert_eq!(key(&points[0]), (32, 1.0, 64));
    assert_eq!(key(&points[1]), (32, 1.0, 1024));
    assert_eq!(key(&points[2]), (32, 0.02, 64));
    assert_eq!(key(&points[7]), (256, 0.02, 1024));
    // A co-processor that keeps up drops nothing; one fifty times slower
    // than the instructions drops samples.
    assert_eq!(points[4]["samples_dropped"], 0);
    assert!(points[6]["samples_dropped"].as_u64().unwrap() > 0);
    // The hardware grows with the slots and with the buffer.
    let bytes = |i: usize| points[i]["hardware_bytes"].as_u64().unwrap();
    assert_eq!(bytes(1) - bytes(0), 1024 - 64);
    assert!(bytes(4) > bytes(0) + 200 * 16, "{sweep}");
}

#[test]
fn a_sweep_of_a_live_program_keeps_its_shared_options() {
    let dir = tempfile::tempdir().unwrap();
    // A table filled, then read: loads of a few values and of many.
    let src = r#"
        #include <stdio.h>
        static unsigned table[64];
        int main(void) {
            unsigned h = 0;
            for (int r = 0; r < 2000; r++)
                for (int i = 0; i < 64; i++) table[i] += i & 3;
            for (int r = 0; r < 4000; r++)
                for (int i = 0; i < 64; i++) h = h * 31 + table[i & 7] + (table[i] & 1);
            printf("%u\n", h);
            return 0;
        }
    "#;
    let bin = common::compile(dir.path(), "table", src);
    let source = [OsStr::new("--"), bin.as_os_str()];
    // The seed changes which slots the co-processor replaces: a sweep that
    // dropped it would differ from the configurations run alone.
    let base = ["--seed", "7", "--partition-hash", "fold"];
    let mut args = vec![
        "--sweep",
        "--sweep-slots",
        "128,256",
        "--sweep-service-rate",
        "1,0.25",
        "--sweep-buffer",
        "1024",
    ];
    args.extend(base);
    let sweep = values(&source, &args);
    assert!(sweep["loads"].as_u64().unwrap() > 200_000, "{sweep}");
    check_sweep(&source, &base, &sweep, 4);
}

#[test]
fn a_profile_holds_a_values_sweep_beside_its_other_reports() {
    let dir = tempfile::tempdir().unwrap();
    let bin = common::compile(
        dir.path(),
        "small",
        "int main(void) { volatile unsigned s = 0; for (int i = 0; i < 50000; i++) s += i & 7; return 0; }",
    );
    let out = dir.path().join("p.json");
    // --exact goes to the one value report, not to the sweep.
    coprof()
        .args(["profile", "--exact", "-o"])
        .arg(&out)
        .args(["--report", "values", "--report"])
        .arg("values --sweep --sweep-slots 64,256 --sweep-service-rate 1 --sweep-buffer 1024")
        .arg("--")
        .arg(&bin)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let reports = v["reports"].as_array().unwrap();
    let (one, sweep) = (&reports[0]["json"], &reports[1]["json"]);
    assert!(one["weighted_rms_error"].is_number(), "{one}");
    assert_eq!(sweep["points"].as_array().unwrap().len(), 2, "{sweep}");
    assert_eq!(sweep["loads"], one["loads"]);
    assert_eq!(sweep["scored_pairs"], one["scored_pairs"]);
    assert_eq!(
        sweep["points"][1]["weighted_rms_error"],
        one["weighted_rms_error"]
    );
}

/// The text of a sweep of one configuration (256 slots, keeping up, the
/// paper's buffer) over `trace`, with `args`.
fn one_configuration(trace: &std::path::Path, args: &[&str]) -> String {
    let sweep = [
        "--sweep",
        "--sweep-slots",
        "256",
        "--sweep-service-rate",
        "1",
        "--sweep-buffer",
        "1024",
    ];
    common::stdout_of(coprof().arg("values").arg(trace).args(sweep).args(args))
}

#[test]
fn the_text_names_the_cheapest_configuration_by_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "phases", 100_000, 2);
    let out = one_configuration(&trace, &["--max-error", "0.5"]);
    assert!(
        out.starts_with(
            "co-processor design-space sweep: 50,000 loads at 64 PCs, 1 configuration\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "cheapest configuration within error 50.00%: --slots 256 --service-rate 1 --buffer-bytes 1024,"
        ),
        "{out}"
    );
    let out = one_configuration(&trace, &["--max-error", "0"]);
    assert!(
        out.contains("no configuration is within error 0.00% (least: "),
        "{out}"
    );
    // Every load of the loops workload takes many values: no pair has the
    // invariance the paper's metric asks for.
    let loops = gen_trace(dir.path(), "loops", 20_000, 1);
    let out = one_configuration(&loops, &[]);
    assert!(
        out.contains("no (PC, value) pair qualifies, so the error is not defined"),
        "{out}"
    );
}

#[test]
fn bad_sweeps_are_named_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "zipf", 1000, 1);
    common::rejects(
        "values",
        &trace,
        &[
            (vec!["--sweep", "--slots", "256"], "--slots"),
            (vec!["--sweep", "--service-rate", "0.5"], "--service-rate"),
            (vec!["--sweep", "--exact"], "--exact"),
            (vec!["--sweep-slots", "128"], "--sweep"),
            (vec!["--max-error", "0.1"], "--sweep"),
            (
                vec!["--sweep", "--algo", "simple", "--values-per-pc", "4"],
                "--values-per-pc",
            ),
            (
                vec!["--values-per-pc", "4"],
                "--values-per-pc applies to --algo simple, not --algo coproc",
            ),
            (
                vec!["--algo", "simple", "--values-per-pc", "0"],
                "--values-per-pc: values per PC must be at least 1",
            ),
            (
                vec!["--sweep", "--algo", "hotlist", "--sweep-values-per-pc", "4"],
                "--sweep-values-per-pc applies to --algo simple, not --algo hotlist",
            ),
            (
                vec!["--sweep", "--algo", "simple", "--sweep-values-per-pc", "4,0"],
                "--sweep: configuration period 1, 0 values per PC: values per PC must be at least 1",
            ),
            (
                vec!["--sweep", "--algo", "simple", "--sweep-period", "0"],
                "--sweep-period: a period must be at least 1 load, got 0",
            ),
            (
                vec!["--sweep", "--algo", "hotlist", "--sweep-slots", "128"],
                "--sweep-slots applies to --algo coproc, not --algo hotlist",
            ),
            (
                vec!["--sweep", "--sweep-period", "64"],
                "--sweep-period applies to --algo simple or hotlist: the co-processor sees every load",
            ),
            (
                vec!["--sweep", "--algo", "hotlist", "--watch-new-loads"],
                "--watch-new-loads applies to --algo coproc, not --algo hotlist",
            ),
            (
                vec!["--sweep", "--algo", "hotlist", "--sweep-variant", "concise,x"],
                "--sweep-variant: unknown hotlist variant 'x'",
            ),
            (
                vec!["--sweep", "--algo", "hotlist", "--sweep-period", "1,0"],
                "--sweep-period: a period must be at least 1 load, got 0",
            ),
            (
                vec!["--sweep", "--algo", "hotlist", "--sweep-hotlist-size", "0"],
                "--sweep: configuration hotlist size 0, period 1, concise samples: ",
            ),
            (
                vec!["--sweep", "--sweep-buffer", "1024,8"],
                "--sweep: configuration 128 slots, service rate 1, buffer 8 bytes: ",
            ),
            (
                vec!["--sweep", "--sweep-slots", "0"],
                "--sweep: configuration 0 slots, service rate 1, buffer 256 bytes: slots must be in 1..=65536",
            ),
            (
                vec!["--sweep", "--sweep-service-rate", "1,0"],
                "service rate 0, buffer 256 bytes: service rate must be a positive number",
            ),
            (
                vec!["--sweep", "--max-error", "2"],
                "--max-error must be an error from 0 to 1, got 2",
            ),
            (vec!["--sweep", "--sweep-slots", "x"], "--sweep-slots"),
            (
                vec!["--sweep", "--sweep-slots", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22"],
                "the sweep has 264 configurations, more than 256",
            ),
        ],
    );
}

#[test]
fn a_profiles_sweeps_are_the_same_on_one_thread_as_spread_over_several() {
    let dir = tempfile::tempdir().unwrap();
    let bin = common::compile(
        dir.path(),
        "mix",
        "int main(void) { volatile unsigned s = 0; for (int i = 0; i < 80000; i++) s += (i * 7) & 15; return 0; }",
    );
    let profile = |threads: &str| -> Vec<Value> {
        let out = dir.path().join(format!("p{threads}.json"));
        coprof()
            .args(["profile", "--threads", threads, "-o"])
            .arg(&out)
            .args([
                "--report",
                "ranges --sweep --sweep-epsilon 0.1,0.01 --sweep-branching 4",
            ])
            .args([
                "--report",
                "values --sweep --sweep-slots 64,256 --sweep-service-rate 1,0.5",
            ])
            .arg("--")
            .arg(&bin)
            .assert()
            .success();
        let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        v["reports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["json"].clone())
            .collect()
    };
    let (one, three) = (profile("1"), profile("3"));
    assert_eq!(one.len(), 2);
    // Two error bounds and the four default buffers.
    assert_eq!(one[0]["points"].as_array().unwrap().len(), 8);
    // Two slot counts, two rates and the three default buffers.
    assert_eq!(one[1]["points"].as_array().unwrap().len(), 12);
    assert_eq!(one, three);
}

#[test]
fn a_hotlist_sweep_is_each_configuration_run_alone() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "mixed", 200_000, 3);
    let source = [trace.as_os_str()];
    let sweep = values(
        &source,
        &[
            "--sweep",
            "--algo",
            "hotlist",
            "--seed",
            "3",
            "--sweep-hotlist-size",
            "2,16",
            "--sweep-period",
            "1,32",
            "--sweep-variant",
            "counting,concise",
        ],
    );
    assert_eq!(sweep["algo"], "hotlist");
    assert!(sweep["scored_pairs"].as_u64().unwrap() > 0, "{sweep}");
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points.len(), 8);
    // The grid's order: sizes slowest, the variant fastest, as given.
    assert_eq!(
        (
            &points[0]["size"],
            &points[0]["period"],
            &points[0]["variant"]
        ),
        (&Value::from(2), &Value::from(1), &Value::from("counting"))
    );
    assert_eq!(points[1]["variant"], "concise");
    assert_eq!(points[2]["period"], 32);
    for p in points {
        let (size, period) = (p["size"].to_string(), p["period"].to_string());
        let variant = p["variant"].as_str().unwrap();
        let alone = values(
            &source,
            &[
                "--exact",
                "--algo",
                "hotlist",
                "--seed",
                "3",
                "--hotlist-size",
                &size,
                "--period",
                &period,
                "--variant",
                variant,
            ],
        );
        let what = format!("size {size}, period {period}, {variant}");
        assert_eq!(alone["loads"], sweep["loads"], "{what}");
        assert_eq!(alone["scored_pairs"], sweep["scored_pairs"], "{what}");
        assert_eq!(
            p["weighted_rms_error"], alone["weighted_rms_error"],
            "{what}"
        );
        assert_eq!(p["unreported_pairs"], alone["unreported_pairs"], "{what}");
        assert_eq!(p["samples"], alone["samples_transferred"], "{what}");
        assert_eq!(p["bytes"], alone["bytes"], "{what}");
        assert_eq!(
            p["loads_reported"].as_u64().unwrap() as usize,
            alone["pcs"].as_array().unwrap().len(),
            "{what}"
        );
    }
    // Sampling 1 in 32 offers a 32nd of the samples.
    let samples = |i: usize| points[i]["samples"].as_u64().unwrap();
    assert_eq!(samples(0) / 32, samples(2));
    let max = sweep["max_error"].as_f64().unwrap();
    let least = points
        .iter()
        .filter(|p| p["weighted_rms_error"].as_f64().unwrap() <= max)
        .map(|p| p["bytes"].as_u64().unwrap())
        .min();
    assert_eq!(sweep["cheapest"]["bytes"].as_u64(), least, "{sweep}");
}

#[test]
fn a_simple_sampling_sweep_is_each_configuration_run_alone() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "mixed", 200_000, 3);
    let source = [trace.as_os_str()];
    let sweep = values(
        &source,
        &[
            "--sweep",
            "--algo",
            "simple",
            "--sweep-period",
            "1,9,128",
            "--sweep-values-per-pc",
            "2,16",
        ],
    );
    assert_eq!(sweep["algo"], "simple");
    assert!(sweep["scored_pairs"].as_u64().unwrap() > 0, "{sweep}");
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    // The grid's order: periods slowest, as given.
    assert_eq!(
        (&points[1]["period"], &points[1]["values_per_pc"]),
        (&Value::from(1), &Value::from(16))
    );
    assert_eq!(points[2]["period"], 9);
    for p in points {
        let (period, per_pc) = (p["period"].to_string(), p["values_per_pc"].to_string());
        let alone = values(
            &source,
            &[
                "--exact",
                "--algo",
                "simple",
                "--period",
                &period,
                "--values-per-pc",
                &per_pc,
            ],
        );
        let what = format!("period {period}, {per_pc} values per PC");
        assert_eq!(alone["loads"], sweep["loads"], "{what}");
        assert_eq!(alone["scored_pairs"], sweep["scored_pairs"], "{what}");
        assert_eq!(
            p["weighted_rms_error"], alone["weighted_rms_error"],
            "{what}"
        );
        assert_eq!(p["unreported_pairs"], alone["unreported_pairs"], "{what}");
        assert_eq!(p["samples"], alone["interrupts"], "{what}");
        assert_eq!(p["bytes"], alone["bytes"], "{what}");
        assert_eq!(
            p["loads_reported"].as_u64().unwrap() as usize,
            alone["pcs"].as_array().unwrap().len(),
            "{what}"
        );
    }
    // Every load sampled, with room for its values, is the exact profile.
    assert_eq!(points[1]["weighted_rms_error"], 0.0);
    let samples = |i: usize| points[i]["samples"].as_u64().unwrap();
    assert_eq!(samples(0) / 128, samples(4));
    // The cheapest within the error takes the fewest samples.
    let max = sweep["max_error"].as_f64().unwrap();
    let fewest = points
        .iter()
        .filter(|p| p["weighted_rms_error"].as_f64().unwrap() <= max)
        .map(|p| p["samples"].as_u64().unwrap())
        .min();
    assert_eq!(sweep["cheapest"]["samples"].as_u64(), fewest, "{sweep}");
    // The front: every configuration off it is beaten, on samples and
    // on error both, by one on it; none on it by any.
    common::checked_front(
        &sweep,
        |p| (p["samples"].as_u64().unwrap(), p["bytes"].as_u64().unwrap()),
        |p| p["weighted_rms_error"].as_f64().unwrap(),
    );
}

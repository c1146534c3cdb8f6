//! `coprof values` end to end: the three profilers on a generated trace,
//! the JSON keys the issue asks for, exact scoring, and bad input.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

fn coprof() -> Command {
    Command::cargo_bin("coprof").unwrap()
}

fn trace(dir: &TempDir, workload: &str, events: u64) -> PathBuf {
    let out = dir.path().join(format!("{workload}.cpt"));
    coprof()
        .args([
            "gen",
            "--workload",
            workload,
            "--events",
            &events.to_string(),
            "--seed",
            "3",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    out
}

fn json(file: &Path, args: &[&str]) -> Value {
    let out = coprof()
        .arg("values")
        .arg(file)
        .args(args)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("valid JSON")
}

#[test]
fn coproc_report_has_the_keys_and_scores_well_on_zipf() {
    let dir = TempDir::new().unwrap();
    let t = trace(&dir, "zipf", 400_000);
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
    let t = trace(&dir, "phases", 100_000);
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
fn slow_coprocessor_drops_samples() {
    let dir = TempDir::new().unwrap();
    let t = trace(&dir, "zipf", 100_000);
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
    let t = trace(&dir, "zipf", 50_000);
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
    let t = trace(&dir, "zipf", 1000);
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
    bad(&["--service-rate", "0"], "service rate");
    bad(&["--partition-hash", "md5"], "md5");
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

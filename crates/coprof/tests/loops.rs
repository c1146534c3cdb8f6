//! `coprof loops`: the frequent loop detector on traces of the `loops`
//! workload, its JSON keys, the sweep, and bad input.

mod common;

use common::{coprof, gen_trace, json_of, traced_run};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use tempfile::TempDir;

/// The seed of the `loops` workload traces: seed 7 lays its loops out so
/// that no set of the default 2-way, 32-entry cache is asked to hold more
/// than two.
const SEED: u64 = 7;

fn json(args: &[&str], file: &Path) -> Value {
    json_of(coprof().arg("loops").arg(file).args(args).arg("--json"))
}

#[test]
fn exact_report_has_the_keys_and_accuracy() {
    let dir = TempDir::new().unwrap();
    let f = gen_trace(dir.path(), "loops", 1_500_000, SEED);
    let v = json(&["--exact"], &f);
    for k in [
        "config",
        "loops",
        "accuracy",
        "cache_updates",
        "halvings",
        "coalesced",
    ] {
        assert!(v.get(k).is_some(), "missing key {k}");
    }
    assert_eq!(v["config"]["entries"], 32);
    assert_eq!(v["config"]["ways"], 2);
    assert_eq!(v["config"]["width"], 24);
    let loops = v["loops"].as_array().unwrap();
    assert_eq!(loops.len(), 10);
    for (i, l) in loops.iter().enumerate() {
        for k in [
            "pc",
            "body_lo",
            "body_hi",
            "share",
            "exact_share",
            "exec_share",
            "exact_exec_share",
        ] {
            assert!(l.get(k).is_some(), "loop {i} lacks {k}");
        }
        assert!(l["body_lo"].as_u64() <= l["body_hi"].as_u64());
        assert_eq!(l["rank"], i + 1);
        // A conflict-free cache with wide counters counts exactly.
        assert_eq!(l["iterations"], l["exact_iterations"]);
    }
    let shares: Vec<f64> = loops
        .iter()
        .map(|l| l["exact_share"].as_f64().unwrap())
        .collect();
    assert!(
        shares.windows(2).all(|w| w[0] >= w[1]),
        "not in exact order: {shares:?}"
    );
    assert!(v["accuracy"].as_f64().unwrap() >= 0.95);
    assert_eq!(v["halvings"], 0);
    // Without --exact there is no accuracy and no exact column.
    let plain = json(&["--top", "3"], &f);
    assert!(plain.get("accuracy").is_none());
    assert_eq!(plain["loops"].as_array().unwrap().len(), 3);
    assert!(plain["loops"][0].get("exact_share").is_none());
}

#[test]
fn coalescing_same_loops_fewer_updates() {
    let dir = TempDir::new().unwrap();
    let f = gen_trace(dir.path(), "loops", 600_000, SEED);
    let a = json(&[], &f);
    let b = json(&["--coalesce"], &f);
    let key = |v: &Value| -> Vec<(u64, u64)> {
        v["loops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["pc"].as_u64().unwrap(), l["count"].as_u64().unwrap()))
            .collect()
    };
    assert_eq!(key(&a), key(&b));
    assert!(b["cache_updates"].as_u64().unwrap() * 5 < a["cache_updates"].as_u64().unwrap());
    assert!(b["coalesced"].as_u64().unwrap() > 0);
    assert_eq!(a["coalesced"], 0);
}

#[test]
fn text_report_names_the_cache_and_accuracy() {
    let dir = TempDir::new().unwrap();
    let f = gen_trace(dir.path(), "loops", 300_000, SEED);
    coprof()
        .arg("loops")
        .arg(&f)
        .args([
            "--exact",
            "--ways",
            "full",
            "--entries",
            "16",
            "--sample-interval",
            "3",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("16 entries, fully associative"))
        .stdout(predicate::str::contains("1 in 3 sbbs tallied"))
        .stdout(predicate::str::contains("accuracy (1 - SOD"));
}

#[test]
fn sweep_lists_every_configuration_and_the_smallest() {
    let dir = TempDir::new().unwrap();
    let f = gen_trace(dir.path(), "loops", 600_000, SEED);
    let v = json(&["--sweep", "--target", "0.95"], &f);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 672);
    assert_eq!(
        points
            .iter()
            .filter(|p| p["config"]["coalesce"] == true)
            .count(),
        336
    );
    assert!(points
        .iter()
        .all(|p| (0.0..=1.0).contains(&p["accuracy"].as_f64().unwrap())));
    let s = &v["smallest"];
    assert!(s["accuracy"].as_f64().unwrap() >= 0.95);
    let bits = s["size_bits"].as_u64().unwrap();
    assert!(points
        .iter()
        .filter(|p| p["accuracy"].as_f64().unwrap() >= 0.95)
        .all(|p| p["size_bits"].as_u64().unwrap() >= bits));
    // The paper's best configuration is exact on this trace.
    let best = points
        .iter()
        .find(|p| {
            p["config"]["entries"] == 32
                && p["config"]["ways"] == 2
                && p["config"]["width"] == 24
                && p["config"]["coalesce"] == false
        })
        .unwrap();
    assert!(best["accuracy"].as_f64().unwrap() > 0.999);
    coprof()
        .arg("loops")
        .arg(&f)
        .args(["--sweep", "--target", "0.95"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "smallest configuration reaching accuracy 0.95",
        ));
}

#[test]
fn bad_options_and_input_exit_2_with_a_message() {
    let dir = TempDir::new().unwrap();
    let f = gen_trace(dir.path(), "loops", 20_000, SEED);
    for (args, msg) in [
        (vec!["--entries", "24"], "entries must be a power of two"),
        (vec!["--ways", "3"], "ways must be a power of two"),
        (
            vec!["--ways", "64"],
            "ways must be a power of two no larger than entries",
        ),
        (vec!["--width", "3"], "counter width must be 4 to 32"),
        (vec!["--width", "40"], "counter width must be 4 to 32"),
        (
            vec!["--sample-interval", "0"],
            "sample interval must be at least 1",
        ),
        (vec!["--top", "0"], "--top must be at least 1"),
        (
            vec!["--sweep", "--target", "1.5"],
            "--target must be an accuracy from 0 to 1",
        ),
    ] {
        coprof()
            .arg("loops")
            .arg(&f)
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg))
            .stderr(predicate::str::contains("panicked").not());
    }
    // Options clap rejects (exit 2 as well).
    coprof()
        .arg("loops")
        .arg(&f)
        .args(["--ways", "two"])
        .assert()
        .code(2);
    coprof()
        .arg("loops")
        .arg(&f)
        .args(["--sweep", "--width", "8"])
        .assert()
        .code(2);
    // A missing file and a file that is not a trace.
    coprof()
        .arg("loops")
        .arg(dir.path().join("missing.cpt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.cpt"));
    let junk = dir.path().join("junk.cpt");
    std::fs::write(&junk, b"this is not a coprof trace at all").unwrap();
    coprof()
        .arg("loops")
        .arg(&junk)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("junk.cpt"))
        .stderr(predicate::str::contains("panicked").not());
    // A trace cut short.
    let whole = std::fs::read(&f).unwrap();
    let cut = dir.path().join("cut.cpt");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    coprof()
        .arg("loops")
        .arg(&cut)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn traces_of_some_classes_have_no_execution_share_and_say_why() {
    let dir = TempDir::new().unwrap();
    let gen = |classes: &str| {
        let out = dir
            .path()
            .join(format!("{}.cpt", classes.replace(',', "-")));
        coprof()
            .args([
                "gen",
                "--workload",
                "loops",
                "-n",
                "300000",
                "--classes",
                classes,
                "-o",
            ])
            .arg(&out)
            .assert()
            .success();
        out
    };
    // Branches but not every instruction: loops are found, the share of
    // execution is unknown rather than a share of the recorded events.
    let part = gen("load,cond-branch");
    let v = json(&["--exact"], &part);
    assert_eq!(v["every_instruction"], false);
    let top = &v["loops"][0];
    assert!(top["iterations"].as_u64().unwrap() > 0);
    assert!(
        top["exec_share"].is_null() && top["exact_exec_share"].is_null(),
        "{top}"
    );
    assert!(v["accuracy"].as_f64().unwrap() > 0.5);
    coprof()
        .args(["loops", "--exact"])
        .arg(&part)
        .assert()
        .success()
        .stdout(predicate::str::contains("share of execution is unknown"));
    // No branches at all: nothing to rank, no accuracy, and a note.
    let loads = gen("load");
    let v = json(&["--exact"], &loads);
    assert!(v.get("accuracy").is_none(), "{v}");
    coprof()
        .arg("loops")
        .arg(&loads)
        .assert()
        .success()
        .stdout(predicate::str::contains("recorded only load"));
}

/// A hot loop whose body is straight-line code: every instruction of it
/// runs once per iteration, so its body length in instructions is what
/// the exact counts say an iteration retires.
const STRAIGHT_LOOP: &str = r#"
#include <stdio.h>
static unsigned a[4096];
int main(void) {
    unsigned s = 1;
    for (int i = 0; i < 4096; i++) a[i] = i * 2654435761u;
    for (int r = 0; r < 200; r++)
        for (int i = 0; i < 4096; i++)
            s = (s * 31u + a[i]) ^ (s >> 3);
    printf("%u\n", s);
    return 0;
}
"#;

#[test]
fn body_length_from_the_code_counts_compressed_instructions() {
    let dir = TempDir::new().unwrap();
    let prog = common::compile(dir.path(), "straight", STRAIGHT_LOOP);
    let live = |length: &str| {
        json_of(
            coprof()
                .args(["loops", "--exact", "--json", "--body-length", length, "--"])
                .arg(&prog),
        )
    };
    let (paper, code) = (live("paper"), live("code"));
    assert_eq!(paper["body_length"], "paper");
    assert!(paper.get("bodies_counted").is_none(), "{paper}");
    assert_eq!(code["body_length"], "code");
    let shown = code["loops"].as_array().unwrap().len();
    assert_eq!(code["bodies_counted"], shown as u64, "{code}");
    assert_eq!(paper["compressed_seen"], true, "RV64GC code at -O1");

    // The inner loop: 200 × 4,096 passes over a straight-line body, of
    // which 200 × 4,095 come back by its branch.
    let (p, c) = (&paper["loops"][0], &code["loops"][0]);
    assert_eq!(c["exact_iterations"], 819_000u64, "{c}");
    let retired = code["instructions"].as_u64().unwrap() as f64;
    let per_iteration = c["exact_exec_share"].as_f64().unwrap() * retired / 819_200.0;
    let n = c["body_instructions"].as_u64().unwrap();
    assert!(
        (per_iteration - n as f64).abs() < 0.01,
        "the code's length {n} against {per_iteration} instructions retired per iteration"
    );
    // The paper's length misses the compressed instructions; the exec
    // share follows the length.
    let m = p["body_instructions"].as_u64().unwrap();
    assert!(m < n, "paper {m}, code {n}");
    let exact = c["exact_exec_share"].as_f64().unwrap();
    let share = |l: &Value| l["exec_share"].as_f64().unwrap();
    assert!((share(c) - exact).abs() < 1e-3, "{c}");
    assert!((share(p) - exact).abs() > 0.01, "{p}");
    // The counts, the shares of iterations and the accuracy do not depend
    // on the body length.
    assert_eq!(paper["accuracy"], code["accuracy"]);
    assert_eq!(p["iterations"], c["iterations"]);

    let text = common::stdout_of(
        coprof()
            .args(["loops", "--body-length", "code", "--"])
            .arg(&prog),
    );
    assert!(
        text.contains("body lengths counted in the program's code"),
        "{text}"
    );

    // Without the program's code (a trace read with --no-symbols) every
    // loop keeps the paper's length, and the report says so.
    let trace = dir.path().join("straight.cpt");
    traced_run(&trace, &prog).assert().success();
    let blind = json_of(
        coprof()
            .args(["loops", "--json", "--no-symbols", "--body-length", "code"])
            .arg(&trace),
    );
    assert_eq!(blind["bodies_counted"], 0);
    assert_eq!(
        blind["loops"][0]["body_instructions"],
        p["body_instructions"]
    );
    coprof()
        .args(["loops", "--no-symbols", "--body-length", "code"])
        .arg(&trace)
        .assert()
        .success()
        .stdout(predicate::str::contains("keep the paper's body length"));

    coprof()
        .args(["loops", "--body-length", "words"])
        .arg(&trace)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--body-length"));
}

#[test]
fn listings_show_each_instruction_of_the_hottest_loops_with_its_count() {
    let dir = TempDir::new().unwrap();
    let prog = common::compile(dir.path(), "straight", STRAIGHT_LOOP);
    let v = json_of(
        coprof()
            .args(["loops", "--exact", "--json", "--listing", "2", "--"])
            .arg(&prog),
    );
    let loops = v["loops"].as_array().unwrap();
    assert!(loops.len() > 2, "{v}");
    let hot = &loops[0];
    let rows = hot["listing"]
        .as_array()
        .expect("the hottest loop is listed");
    // From the branch's target to the branch, every instruction once, in
    // address order.
    let pcs: Vec<u64> = rows.iter().map(|r| r["pc"].as_u64().unwrap()).collect();
    assert_eq!(pcs.first(), hot["body_lo"].as_u64().as_ref());
    assert_eq!(pcs.last(), hot["pc"].as_u64().as_ref());
    assert!(
        pcs.windows(2).all(|w| w[1] - w[0] == 2 || w[1] - w[0] == 4),
        "{pcs:x?}"
    );
    // The body is straight-line code: each instruction ran once per pass,
    // 200 × 4,096 times, and its line is the loop's.
    for r in rows {
        assert_eq!(r["count"], 819_200u64, "{r}");
        assert!(!r["text"].as_str().unwrap().is_empty(), "{r}");
        assert_eq!(r["file"], "straight.c", "{r}");
        assert!((8..=9).contains(&r["line"].as_u64().unwrap()), "{r}");
    }
    assert!(rows.iter().any(|r| r["source"]
        .as_str()
        .is_some_and(|s| s.contains("s = (s * 31u + a[i])"))));
    assert!(loops[1]["listing"].is_array());
    assert!(loops[2].get("listing").is_none(), "only two asked for");

    let text = common::stdout_of(
        coprof()
            .args(["loops", "--exact", "--listing", "1", "--"])
            .arg(&prog),
    );
    assert!(
        text.contains(&format!(
            "loop 1 at {:#x}: 819,000 iterations; each instruction with the times it ran",
            hot["pc"].as_u64().unwrap()
        )),
        "{text}"
    );
    assert!(
        text.contains("straight.c:9  s = (s * 31u + a[i]) ^ (s >> 3);  [main]"),
        "{text}"
    );
    assert!(text.contains("819,200"), "{text}");

    // Without the program's code the report says why there is no listing.
    coprof()
        .args(["loops", "--no-symbols", "--listing", "1", "--"])
        .arg(&prog)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "1 of the 1 loops asked for by --listing could not be listed",
        ));
}

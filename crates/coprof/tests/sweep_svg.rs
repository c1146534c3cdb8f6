//! `--svg FILE`: every design-space sweep drawn as a picture, each
//! configuration a point and the front joined and listed, the same
//! configurations as the sweep's `--json`.

mod common;

use common::{coprof, gen_trace, json_of};
use std::path::Path;

/// Runs `coprof COMMAND --sweep --json --svg FILE ARGS TRACE` and checks
/// the picture against the JSON: a point per configuration, the front's
/// again on top, and the front listed cheapest first by `label`.
fn drawn(command: &str, args: &[&str], trace: &Path, label: impl Fn(&serde_json::Value) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("sweep.svg");
    let r = json_of(
        coprof()
            .args([command, "--sweep", "--json", "--svg"])
            .arg(&svg)
            .args(args)
            .arg(trace),
    );
    assert_eq!(r["svg"], svg.display().to_string());
    let points = r["points"].as_array().unwrap();
    let front = common::front_of(&r);
    assert!(!front.is_empty() && front.len() < points.len(), "{r}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{command}");
    assert_eq!(
        text.matches("<circle").count(),
        points.len() + front.len(),
        "{command} {args:?}"
    );
    assert!(text.contains(&format!(
        "{} configurations; the front ({})",
        points.len(),
        front.len()
    )));
    let first = format!("1. {}", label(&points[front[0]]));
    assert!(text.contains(&first), "{command}: {first} not in the list");
}

#[test]
fn each_sweep_draws_its_configurations_and_front() {
    let dir = tempfile::tempdir().unwrap();
    let loops = gen_trace(dir.path(), "loops", 60_000, 2);
    let zipf = gen_trace(dir.path(), "zipf", 60_000, 2);
    drawn("loops", &[], &loops, |p| {
        let c = &p["config"];
        let coal = if c["coalesce"].as_bool().unwrap() {
            "+coal"
        } else {
            ""
        };
        format!("{}e/{}w/{}b{coal}", c["entries"], c["ways"], c["width"])
    });
    drawn("ranges", &["--sweep-epsilon", "0.01,0.05"], &loops, |p| {
        format!("--epsilon {}", p["epsilon"])
    });
    drawn("sample", &["--profile", "pc"], &loops, |p| {
        p["sampler"].as_str().unwrap().to_string()
    });
    drawn("values", &[], &zipf, |p| format!("--slots {}", p["slots"]));
    drawn("values", &["--algo", "hotlist"], &zipf, |p| {
        format!("--hotlist-size {}", p["size"])
    });
    drawn("values", &["--algo", "simple"], &zipf, |p| {
        format!("--period {}", p["period"])
    });
}

#[test]
fn a_picture_needs_a_sweep_and_a_directory_to_go_in() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "loops", 10_000, 1);
    for command in ["loops", "ranges", "values"] {
        coprof()
            .args([command, "--svg", "x.svg"])
            .arg(&trace)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--sweep"));
    }
    coprof()
        .args(["sample", "--sampler", "brr:3", "--eval", "--svg", "x.svg"])
        .arg(&trace)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--svg is an option of --sweep"));
    coprof()
        .args(["loops", "--sweep", "--svg", "/no/such/dir/x.svg"])
        .arg(&trace)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--svg /no/such/dir/x.svg: no directory /no/such/dir",
        ));
}

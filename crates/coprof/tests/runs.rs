//! Runs of basic blocks against every event, on real programs: a live run
//! hands `loops`, `ranges --stream pc` and `sample --profile pc` the
//! instructions as runs of blocks (one record per block execution, and for
//! `loops` the taken branches found from where the next run starts); a
//! trace of the same run (`coprof run --trace`, every class) hands them one
//! event per instruction. Over the whole C corpus of the simulator's tests
//! (self-modifying code that drops the code cache, setjmp/longjmp, deep
//! recursion, system calls in the middle of blocks), the reports must be
//! the same.

mod common;

use common::{coprof, json_of};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The corpus programs that run 10 to 70 million instructions: four runs
/// each would take minutes in a test build, and the code paths they take
/// are those of the others.
const LONG: [&str; 5] = [
    "fp_arith",
    "recursion",
    "sort_search",
    "malloc",
    "printf_float",
];

/// The corpus built at -O2 by scripts/build-test-programs.sh, but for the
/// [`LONG`] programs.
fn corpus() -> Vec<PathBuf> {
    let out = repo_root().join("target/rv-programs");
    let st = Command::new("bash")
        .arg(repo_root().join("scripts/build-test-programs.sh"))
        .arg(&out)
        .status()
        .expect("scripts/build-test-programs.sh runs");
    assert!(st.success(), "building the RV64 test corpus failed");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.strip_suffix("-O2").is_some_and(|n| !LONG.contains(&n))
        })
        .collect();
    v.sort();
    assert!(
        v.len() >= 12,
        "only {} programs in {}",
        v.len(),
        out.display()
    );
    v
}

/// The report, without what says where it came from: the trace's file and
/// recorded classes, and the events delivered (a live run sends fewer).
fn report(cmd: &mut assert_cmd::Command) -> Value {
    let mut v = json_of(cmd);
    if let Some(o) = v.as_object_mut() {
        for k in ["file", "recorded_classes", "events"] {
            o.remove(k);
        }
    }
    v
}

#[test]
fn every_corpus_program_gives_the_same_reports_from_runs_as_from_events() {
    let reports: [&[&str]; 3] = [
        &["loops", "--max-distance", "100000"],
        &["ranges", "--stream", "pc", "--exact", "--epsilon", "0.001"],
        &["sample", "--sampler", "brr:3", "--eval", "--profile", "pc"],
    ];
    for prog in corpus() {
        let name = prog.file_name().unwrap().to_string_lossy().to_string();
        // Each run in a directory of its own: some programs write files.
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("run.cpt");
        let out = coprof()
            .current_dir(dir.path())
            .args(["run", "--random-seed", "7", "--trace"])
            .arg(&trace)
            .arg("--")
            .arg(&prog)
            .output()
            .unwrap();
        assert!(trace.exists(), "{name}: no trace: {out:?}");
        for args in reports {
            let live_dir = tempfile::tempdir().unwrap();
            let live = report(
                coprof()
                    .current_dir(live_dir.path())
                    .args(args)
                    .args(["--json", "--random-seed", "7", "--"])
                    .arg(&prog),
            );
            let traced = report(coprof().args(args).arg("--json").arg(&trace));
            assert_eq!(
                live, traced,
                "{name}: coprof {args:?} differs live and from its trace"
            );
        }
    }
}

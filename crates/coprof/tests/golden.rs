//! Every report's text, byte for byte, against a golden file in
//! `tests/golden/`: the reports of `loops`, `ranges`, `values` and
//! `sample --eval` and `sample --sweep` on traces that `coprof gen` makes from fixed seeds.
//!
//! The engines are deterministic (their random sources are seeded), so a
//! difference means that a report's layout or an engine's result changed.
//! When the change is intended, rewrite the files with
//! `COPROF_UPDATE_GOLDEN=1 cargo test -p coprof --test golden` and review
//! the diff of `tests/golden/` like any other change.

mod common;

use common::{coprof, gen_trace, stdout_of};
use std::path::Path;

/// Runs `coprof COMMAND TRACE ARGS…` and compares its standard output with
/// `tests/golden/NAME.txt` (or writes that file when asked to).
fn golden(name: &str, command: &str, workload: &str, args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), workload, 50_000, 4);
    let text = stdout_of(coprof().arg(command).arg(&trace).args(args))
        .replace(&trace.display().to_string(), "TRACE");
    let what = format!("coprof {command} {}", args.join(" "));
    compare(name, &what, &text);
}

/// Compares `text`, what `what` printed, with `tests/golden/NAME.txt`
/// (or writes that file when asked to).
fn compare(name: &str, what: &str, text: &str) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    if std::env::var_os("COPROF_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&file).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (create it with COPROF_UPDATE_GOLDEN=1)",
            file.display()
        )
    });
    if text != want {
        let (line, (got, exp)) = text
            .lines()
            .zip(want.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| (i + 1, (a.to_string(), b.to_string())))
            .unwrap_or((
                text.lines().count().min(want.lines().count()) + 1,
                ("(line count differs)".into(), String::new()),
            ));
        panic!(
            "{what} differs from {} at line {line}:\n  got:  {got}\n  want: {exp}\n\
             (if the change is intended: COPROF_UPDATE_GOLDEN=1 cargo test -p coprof --test golden)",
            file.display()
        );
    }
}

#[test]
fn loops_report() {
    golden("loops-exact", "loops", "loops", &["--exact"]);
}

#[test]
fn loops_report_sampled_and_coalesced() {
    golden(
        "loops-coalesce-sampled",
        "loops",
        "loops",
        &["--coalesce", "--sample-interval", "5", "--exact"],
    );
}

#[test]
fn ranges_report_of_load_values() {
    golden(
        "ranges-load-value-exact",
        "ranges",
        "zipf",
        &["--stream", "load-value", "--exact"],
    );
}

#[test]
fn ranges_report_of_pcs_in_two_dimensions() {
    golden(
        "ranges-pc-load-addr",
        "ranges",
        "zipf",
        &["--dims", "pc,load-addr", "--epsilon", "0.05"],
    );
}

#[test]
fn ranges_sweep_of_loops_code() {
    golden(
        "ranges-sweep-loops-pc",
        "ranges",
        "loops",
        &[
            "--sweep",
            "--sweep-epsilon",
            "0.1,0.02",
            "--sweep-branching",
            "2,4,16",
            "--sweep-buffer",
            "0,1024",
            "--target",
            "0.99",
        ],
    );
}

#[test]
fn values_sweep_of_the_coprocessor() {
    golden(
        "values-sweep-mixed",
        "values",
        "mixed",
        &[
            "--sweep",
            "--sweep-slots",
            "64,256",
            "--sweep-service-rate",
            "1,0.05",
            "--sweep-buffer",
            "256,1024",
        ],
    );
}

#[test]
fn values_sweep_of_the_hotlists() {
    golden(
        "values-sweep-hotlist-zipf",
        "values",
        "zipf",
        &[
            "--sweep",
            "--algo",
            "hotlist",
            "--sweep-hotlist-size",
            "4,16",
            "--sweep-period",
            "1,256",
        ],
    );
}

#[test]
fn values_sweep_of_simple_sampling() {
    golden(
        "values-sweep-simple-zipf",
        "values",
        "zipf",
        &[
            "--sweep",
            "--algo",
            "simple",
            "--sweep-period",
            "1,64,1024",
            "--sweep-values-per-pc",
            "2,8",
        ],
    );
}

#[test]
fn values_report_of_the_coprocessor() {
    golden(
        "values-coproc-exact",
        "values",
        "zipf",
        &["--exact", "--limit", "12"],
    );
}

#[test]
fn values_report_of_hotlists() {
    golden(
        "values-hotlist-counting",
        "values",
        "zipf",
        &[
            "--algo",
            "hotlist",
            "--variant",
            "counting",
            "--exact",
            "--limit",
            "12",
        ],
    );
}

#[test]
fn sample_evaluation_report() {
    golden(
        "sample-brr-methods",
        "sample",
        "methods",
        &["--sampler", "brr:4", "--eval", "--profile", "method"],
    );
}

#[test]
fn sample_sweep_report() {
    golden(
        "sample-sweep-methods",
        "sample",
        "methods",
        &["--sweep", "--sweep-intervals", "4,64,1024"],
    );
}

/// `coprof export`'s summary and the callgrind file it writes, of a trace
/// of synthetic PCs (no symbols: each PC its own function, by address).
#[test]
fn export_summary_and_callgrind_file() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "loops", 50_000, 4);
    let out = dir.path().join("callgrind.out.loops");
    let summary = stdout_of(
        coprof()
            .args(["export", "--top", "5", "-o"])
            .arg(&out)
            .arg(&trace),
    );
    let file = std::fs::read_to_string(&out).unwrap();
    let text = format!("{summary}--- callgrind.out.loops\n{file}")
        .replace(&dir.path().display().to_string(), "DIR");
    compare(
        "export-callgrind-loops",
        "coprof export -o callgrind.out.loops",
        &text,
    );
}

//! `coprof record`: a native x86-64 program, built here with the host's
//! gcc, sampled into a trace that `coprof ranges` and `coprof values`
//! read with its symbols and lines; and what it refuses.

mod common;

use common::{compile, coprof, json_of, stdout_of};
use std::path::{Path, PathBuf};
use std::process::Command;

fn native(dir: &Path) -> PathBuf {
    common::host_compile(dir, "hot", common::HOT, &["-O1", "-g"])
}

/// The hot range of the `coprof ranges --json` report `r` that holds the
/// most samples of its own.
fn top_range(r: &serde_json::Value) -> &serde_json::Value {
    (r["hot_ranges"].as_array().unwrap().iter())
        .max_by(|a, b| {
            let share = |h: &serde_json::Value| h["own_share"].as_f64().unwrap();
            share(a).total_cmp(&share(b))
        })
        .unwrap_or_else(|| panic!("no hot range: {r}"))
}

/// Asserts that the top hot range of the `coprof ranges --json` report
/// `r` is named by the test program's hot loop and its source line. (Not
/// always the first: the program's start, its loads spread over the
/// address space, may be a tenth of a short run's samples, which a range
/// wider than any area holds, listed before the loop's.)
fn assert_hot_loop_on_top(r: &serde_json::Value) {
    let functions = top_range(r)["functions"].as_str().unwrap_or_default();
    assert!(functions.starts_with("hot_loop (hot.c:"), "{r}");
}

/// The share of the samples of the `coprof ranges --json` report `r`
/// whose hot ranges are named by the test program's hot loop, each
/// counted once: the loop's few instructions, each a range of its own
/// where its samples alone are hot (how many depends on the CPU, which
/// lets a sample land after the instruction it interrupted).
fn hot_loop_share(r: &serde_json::Value) -> f64 {
    (r["hot_ranges"].as_array().unwrap().iter())
        .filter(|h| (h["functions"].as_str()).is_some_and(|f| f.starts_with("hot_loop (hot.c:")))
        .map(|h| h["own_share"].as_f64().unwrap())
        .sum()
}

#[test]
fn ranges_of_a_native_programs_samples_name_its_hot_loop() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let trace = dir.path().join("hot.cpt");
    let out = common::succeeded(
        coprof()
            .args(["record", "--period-us", "20", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&prog),
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(" samples of ") && said.contains("hot.cpt"),
        "{said}"
    );
    let r = json_of(coprof().arg("ranges").arg("--json").arg(&trace));
    assert!(hot_loop_share(&r) > 0.8, "{r}");
    // A position-independent build: its load address taken off.
    assert_hot_loop_on_top(&r);
}

#[test]
fn value_samples_find_the_loops_load_and_its_invariant_value() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let trace = dir.path().join("values.cpt");
    // The live reports' spelling of the same, too.
    for place in [&["--next-load"][..], &["--sample-at", "next-load"]] {
        coprof()
            .arg("record")
            .args(place)
            .args(["--period-us", "20", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&prog)
            .assert()
            .success();
        let v = json_of(
            coprof()
                .args(["values", "--algo", "hotlist", "--json"])
                .arg(&trace),
        );
        let top = &v["pcs"][0];
        assert!(
            top["place"]
                .as_str()
                .unwrap()
                .starts_with("hot_loop (hot.c:"),
            "{place:?}: {top}"
        );
        assert_eq!(top["source_text"], "s += table[i];", "{top}");
        assert_eq!(top["values"][0]["value"], 7, "{top}");
        assert_eq!(top["values"][0]["invariance"], 1.0, "{top}");
    }
    // The loads' addresses: every hot range is in the program's table,
    // its zero-filled data past the file's bytes included, and in the
    // program's file.
    let r = json_of(
        coprof()
            .args(["ranges", "--stream", "load-addr", "--json"])
            .arg(&trace),
    );
    // (The loads of the program's start, the dynamic loader's and the C
    // library's, are spread over the whole address space: where they are
    // a tenth of the samples, as they are in some runs of this short
    // program, a range wider than any area holds them.)
    let hot = r["hot_ranges"].as_array().unwrap();
    let narrow: Vec<&serde_json::Value> = (hot.iter())
        .filter(|h| h["areas"].as_array().unwrap().len() == 1)
        .collect();
    assert!(narrow.len() > 1, "{r}");
    for h in &narrow {
        let objects = h["objects"].as_str().unwrap_or_else(|| panic!("{r}"));
        assert!(objects.contains("table"), "{h}");
        assert_eq!(
            h["areas"],
            serde_json::json!([prog.to_str().unwrap()]),
            "{h}"
        );
    }
    let in_table: f64 = narrow
        .iter()
        .map(|h| h["own_share"].as_f64().unwrap())
        .sum();
    assert!(in_table > 0.6, "{r}");
    // The trace names every area of the program's memory, as the
    // simulator's do: its file, the C library's, its stack and the vDSO.
    let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
    let names: Vec<&str> = (info["meta"]["areas"].as_array().unwrap().iter())
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    for name in ["[stack]", "[vdso]", prog.to_str().unwrap()] {
        assert!(names.contains(&name), "{name}: {names:?}");
    }
    assert!(names.iter().any(|n| n.contains("libc")), "{names:?}");
}

#[test]
fn the_trace_streams_to_a_reader_and_the_status_is_the_programs() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let mut record = std::process::Command::new(env!("CARGO_BIN_EXE_coprof"))
        .args(["record", "--json", "-o", "-", "--"])
        .arg(&prog)
        .arg("exit3")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = record.stdout.take().unwrap();
    let ranges = std::process::Command::new(env!("CARGO_BIN_EXE_coprof"))
        .args(["ranges", "--json", "-"])
        .stdin(stdout)
        .output()
        .unwrap();
    let recorded = record.wait_with_output().unwrap();
    assert_eq!(recorded.status.code(), Some(3));
    let summary: serde_json::Value = serde_json::from_slice(&recorded.stderr).unwrap();
    assert_eq!(summary["status"], 3);
    assert_eq!(summary["samples"], summary["events"]);
    cpu_time_holds_the_samples(&summary, cpu_seconds(&summary), period_ns(&summary));
    assert!(ranges.status.success());
    let r: serde_json::Value = serde_json::from_slice(&ranges.stdout).unwrap();
    assert_eq!(r["n"], summary["events"]);
}

/// The share of the CPU time its samples stand for, as the note about
/// the kernel's time in `stderr` says it; `None` without the note.
fn kernel_time_note_share(stderr: &[u8]) -> Option<f64> {
    let text = String::from_utf8_lossy(stderr);
    let note = text
        .lines()
        .find(|l| l.starts_with("coprof: note: the samples stand for "))?;
    let share = note.split_once(" s (")?.1.split_once("%)")?.0;
    Some(share.parse::<f64>().expect("a percentage") / 100.0)
}

#[test]
fn a_run_mostly_in_the_kernel_is_told_where_its_cpu_time_went() {
    // dd copying one byte at a time runs mostly in read and write, where
    // its clock counts and takes no sample.
    let dd = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=200000"];
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("dd.cpt");
    let out = common::succeeded(
        coprof()
            .args(["record", "-o"])
            .arg(&trace)
            .arg("--")
            .args(dd),
    );
    let share = kernel_time_note_share(&out.stderr);
    assert!(
        share.is_some_and(|s| s < 0.5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("each sample's interrupt and stop (--ring-buffer takes"),
        "{err}"
    );
    // With --json the note is in the summary's notes, not a line of its
    // own beside it (dd's own lines are on standard error too).
    let out = common::succeeded(
        coprof()
            .args(["record", "--json", "-o"])
            .arg(&trace)
            .arg("--")
            .args(dd),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("coprof: note:"), "{err}");
    let summary: serde_json::Value = err
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no JSON summary in {err}"));
    let notes = summary["notes"].as_array().expect("a list of notes");
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("the samples stand for ")),
        "{summary}"
    );
    // Followed children are told of together, after their lines (the
    // shell forks for dd, which is not its last command).
    // `coprof profile` says it too.
    let script = format!("{} 2>/dev/null; true", dd.join(" "));
    let profile = dir.path().join("dd.json");
    for (command, output) in [("record", &trace), ("profile", &profile)] {
        let out = common::succeeded(
            coprof()
                .args([command, "--follow-children", "-o"])
                .arg(output)
                .args(["--", "sh", "-c", &script]),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        let children = "CPU the child processes' threads ran while sampled; the rest was in the \
                        kernel, where the clock takes no sample: their system calls";
        assert!(err.contains(children), "{command}: {err}");
        if command == "profile" {
            // The profile keeps it, for `coprof report` to give again.
            let saved: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(output).unwrap()).unwrap();
            let kept = saved["notes"].as_array().expect("the notes kept");
            assert!(
                kept.iter().any(|n| n.as_str().unwrap().contains(children)),
                "{saved}"
            );
        }
    }
    // A live report says it too; with ring buffers, no stop is named.
    let out = common::succeeded(coprof().args(["ranges", "--ring-buffer", "--"]).args(dd));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(kernel_time_note_share(&out.stderr).is_some(), "{err}");
    assert!(
        err.contains("each sample's interrupt (a longer --period-us"),
        "{err}"
    );
    // The hot loop, sampled every millisecond into ring buffers: its
    // samples stand for nearly all of its CPU time, and nothing is said.
    let prog = native(dir.path());
    let out = common::succeeded(
        coprof()
            .args(["record", "--ring-buffer", "--period-us", "1000", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&prog)
            .args(["for", "0.3"]),
    );
    assert_eq!(
        kernel_time_note_share(&out.stderr),
        None,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_streamed_trace_keeps_the_cpu_time_in_its_final_metadata() {
    // Its header is written before the program runs; the CPU time is
    // known at its end, and comes after the end marker, with the modules.
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let out = coprof()
        .args(["record", "--json", "-o", "-", "--"])
        .arg(&prog)
        .output()
        .unwrap();
    assert!(out.status.success());
    let summary: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    let trace = dir.path().join("streamed.cpt");
    std::fs::write(&trace, &out.stdout).unwrap();
    let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
    assert_eq!(info["streamed"], true, "{info}");
    let kept = info["meta"]["cpu_ns"].as_f64().expect("cpu_ns kept") / 1e9;
    assert!((kept - cpu_seconds(&summary)).abs() < 1e-6, "{info}");
    let p = json_of(coprof().args(["profile", "--json"]).arg(&trace));
    assert_eq!(p["sampled"]["cpu_ns"], info["meta"]["cpu_ns"], "{p}");
}

/// Asserts that `cpu` seconds, the CPU time a run's threads ran while
/// sampled, hold its `run["samples"]` at a period of `period_ns` each:
/// taken in the program's code, they stand for from a fiftieth of it to
/// all of it, and no more (a period is drawn within ±1/31 of its mean).
/// With a stop at each sample, most of it is the kernel's, on the
/// thread's way to and from its stop: the samples stood for 15% of it at
/// the default period in docs/PERFORMANCE.md's measurement, 43 to 50%
/// in this file's runs.
fn cpu_time_holds_the_samples(run: &serde_json::Value, cpu: f64, period_ns: f64) {
    let periods = run["samples"].as_f64().unwrap() * period_ns / 1e9;
    assert!(
        periods > 0.0 && (0.02..=1.04).contains(&(periods / cpu)),
        "{cpu} s of CPU: {run}"
    );
}

/// The CPU time of a `coprof record --json` summary, or of its entry for
/// a child.
fn cpu_seconds(run: &serde_json::Value) -> f64 {
    run["cpu_seconds"].as_f64().unwrap()
}

/// The period of a `coprof record --json` summary's samples.
fn period_ns(summary: &serde_json::Value) -> f64 {
    summary["period_ns"].as_f64().unwrap()
}

/// Asserts that `cmd` is refused with status 2, its message saying `said`,
/// and no panic.
fn refused(cmd: &mut assert_cmd::Command, said: &str) {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(said), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn what_record_and_the_reports_refuse_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let trace = dir.path().join("hot.cpt");
    coprof()
        .args(["record", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&prog)
        .assert()
        .success();
    // Samples are not every instruction.
    refused(
        coprof().arg("loops").arg(&trace),
        "holds samples of a native process (coprof record), not every instruction",
    );
    refused(
        coprof()
            .args(["sample", "--sampler", "brr:1/16", "--eval"])
            .arg(&trace),
        "holds samples of a native process",
    );
    // A RISC-V program is the simulator's; a native one is record's.
    let rv = compile(dir.path(), "rv", "int main(void) { return 0; }\n");
    refused(
        coprof().args(["record", "--"]).arg(&rv),
        "is a RISC-V program: `coprof run --trace OUT.cpt",
    );
    // A trace is read, not sampled.
    refused(
        coprof()
            .args(["record", "-o"])
            .arg(dir.path().join("again.cpt"))
            .arg("--")
            .arg(&trace),
        "it is a coprof trace, which is read, not run",
    );
    // A report that needs every instruction says why, of a native program.
    refused(
        coprof()
            .args(["ranges", "--stream", "narrow-pc", "--"])
            .arg(&prog),
        "is an x86-64 program, which coprof samples (only an RV64 program runs in its \
         simulator, every instruction seen): the narrow-PC stream needs the value every \
         instruction produces",
    );
    refused(
        coprof().args(["loops", "--"]).arg(&prog),
        "is an x86-64 program, which coprof samples (only an RV64 program runs in its \
         simulator, every instruction seen): the loop cache counts every backward branch; \
         `coprof ranges`, `values`, `profile` and `export` sample it",
    );
    refused(
        coprof()
            .args(["sample", "--sampler", "brr:1/16", "--eval", "--"])
            .arg(&prog),
        "a sampler picks from every event of the stream",
    );
    refused(
        coprof().args(["record", "--", "no-such-program-here"]),
        "no-such-program-here: not found in PATH",
    );
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "text\n").unwrap();
    refused(
        coprof().args(["record", "--"]).arg(&text),
        "notes.txt: Permission denied",
    );
    refused(
        coprof()
            .args(["record", "--period-us", "0", "--"])
            .arg(&prog),
        "--period-us",
    );
    refused(
        coprof()
            .args(["record", "--next-load", "--sample-at", "next-load", "--"])
            .arg(&prog),
        "--sample-at",
    );
    refused(
        coprof()
            .args(["record", "--single-step", "--sample-at", "interrupt", "--"])
            .arg(&prog),
        "--single-step steps to the next load",
    );
}

#[test]
fn a_live_range_or_value_report_samples_a_native_program() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let r = json_of(coprof().args(["ranges", "--json", "--"]).arg(&prog));
    assert_hot_loop_on_top(&r);
    // A report of values: each sample taken at its next load.
    let v = json_of(
        coprof()
            .args(["values", "--algo", "hotlist", "--json", "--"])
            .arg(&prog),
    );
    let top = &v["pcs"][0];
    assert_eq!(top["source_text"], "s += table[i];", "{top}");
    assert_eq!(top["values"][0]["value"], 7, "{top}");
    // Its status is coprof's, after the report.
    coprof()
        .args(["ranges", "--"])
        .arg(&prog)
        .arg("exit3")
        .assert()
        .code(3);
    refused(
        coprof().args(["ranges", "--pid", "5", "--"]).arg(&prog),
        "--pid applies to a RISC-V program run in the simulator",
    );
    // The loop cache needs every instruction: not sampled.
    refused(
        coprof().args(["loops", "--"]).arg(&prog),
        "the loop cache counts every backward branch",
    );
}

#[test]
fn followed_children_get_a_trace_each_named_by_pid() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let trace = dir.path().join("run.cpt");
    // A shell whose child shell runs the program twice, the second time
    // to status 3: children and grandchildren.
    let script = format!(
        "/bin/sh -c '{p}; {p} exit3; exit 0'; exit 0",
        p = prog.display()
    );
    let out = common::succeeded(
        coprof()
            .args(["record", "--follow-children", "--json", "-o"])
            .arg(&trace)
            .args(["--", "/bin/sh", "-c", &script]),
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    let children = summary["children"].as_array().unwrap();
    assert_eq!(children.len(), 3, "{summary}");
    // Listed as they ended: the two runs of the program, then their shell.
    let shell = &children[2];
    assert_eq!(shell["parent"], summary["pid"], "{shell}");
    let hot = std::fs::canonicalize(&prog).unwrap();
    for (child, status) in children.iter().zip([0, 3]) {
        assert_eq!(child["parent"], shell["pid"], "{child}");
        assert_eq!(child["status"], status, "{child}");
        assert_eq!(child["program"], hot.to_str().unwrap(), "{child}");
        let pid = child["pid"].as_i64().unwrap();
        let path = dir.path().join(format!("run.{pid}.cpt"));
        assert_eq!(child["trace"], path.to_str().unwrap(), "{child}");
        // Each child's trace names its own program's hot loop.
        let r = json_of(coprof().arg("ranges").arg("--json").arg(&path));
        assert_hot_loop_on_top(&r);
        assert_eq!(r["n"], child["events"], "{r}");
        cpu_time_holds_the_samples(child, cpu_seconds(child), period_ns(&summary));
        // The trace keeps the CPU time, for `info` and the reports.
        let info = json_of(coprof().args(["info", "--json"]).arg(&path));
        let kept = info["meta"]["cpu_ns"].as_f64().unwrap() / 1e9;
        assert!((kept - cpu_seconds(child)).abs() < 1e-6, "{info}");
    }
    let info = common::stdout_of(coprof().arg("info").arg(&trace));
    let line = format!(
        "cpu time   {:.3} s of its threads' while sampled",
        cpu_seconds(&summary)
    );
    assert!(info.contains(&line), "{info}");
    let profile = common::stdout_of(coprof().arg("profile").arg(&trace));
    let header = format!(
        " samples ({:.3} s of CPU), sampled natively",
        cpu_seconds(&summary)
    );
    assert!(profile.contains(&header), "{profile}");
    // The shell's own trace has none of the program's samples.
    let shell_samples = summary["samples"].as_u64().unwrap();
    let child_samples = children[0]["samples"].as_u64().unwrap();
    assert!(shell_samples * 10 < child_samples, "{summary}");
    // Not to standard output, and no %p in -o: the program's trace is -o.
    for (output, said) in [
        ("-", "give a file for -o, not `-`"),
        ("run-%p.cpt", "no %p"),
    ] {
        let out = coprof()
            .args(["record", "--follow-children", "-o", output, "--"])
            .arg(&prog)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{err}");
    }
}

#[test]
fn followed_childrens_traces_keep_their_stacks_with_call_graph() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    // With each sample a stop, and taken into ring buffers, whose stacks
    // are unwound from the copy the kernel makes.
    for how in [&[][..], &["--ring-buffer"][..]] {
        let trace = dir.path().join("run.cpt");
        let script = format!("{}; exit 0", prog.display());
        let out = common::succeeded(
            coprof()
                .args(["record", "-g", "--follow-children", "--json"])
                .args(how)
                .arg("-o")
                .arg(&trace)
                .args(["--", "/bin/sh", "-c", &script]),
        );
        let summary: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
        let child = &summary["children"][0];
        let path = dir.path().join(format!("run.{}.cpt", child["pid"]));
        // Each sample of the child's has its stack, and its export counts
        // the hot loop under main; the trace names the child's process,
        // and the share of its stacks that were whole.
        let info = json_of(coprof().args(["info", "--json"]).arg(&path));
        assert_eq!(info["version"], 3, "{how:?}: {info}");
        assert_eq!(info["stacks"], info["events"], "{how:?}: {info}");
        assert_eq!(info["meta"]["pid"], child["pid"], "{how:?}: {info}");
        let ring = info["meta"]["sampling"]["ring_buffer"].as_bool();
        assert_eq!(ring, Some(!how.is_empty()), "{info}");
        assert!(
            info["meta"]["whole_stacks"].as_u64().unwrap() > 0,
            "{how:?}: {info}"
        );
        let export = json_of(
            coprof()
                .args(["export", "--json", "--top", "50", "-o"])
                .arg(dir.path().join("child.pb.gz"))
                .arg(&path),
        );
        assert_eq!(
            export["calls"]["stacks"], export["total"],
            "{how:?}: {export}"
        );
        let main = (export["top"].as_array().unwrap().iter())
            .find(|f| f["function"] == "main")
            .unwrap_or_else(|| panic!("{how:?}: no main in {export}"));
        assert!(
            main["inclusive_share"].as_f64().unwrap() > 0.9,
            "{how:?}: {export}"
        );
    }
}

/// The names of a profile's reports, in order.
fn report_names(p: &serde_json::Value) -> Vec<&str> {
    p["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect()
}

#[test]
fn a_profile_of_a_native_program_holds_the_reports_that_read_samples() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let file = dir.path().join("hot.json");
    let out = coprof()
        .args(["profile", "--json", "-o"])
        .arg(&file)
        .arg("--")
        .arg(&prog)
        .arg("exit3")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "the program's status: {err}");
    assert!(
        err.contains("the loops and sample reports, which need every instruction, are left out"),
        "{err}"
    );
    let p: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report_names(&p),
        ["ranges-pc", "ranges-load-value", "values"]
    );
    assert_eq!(p["status"], 3);
    assert_eq!(p["sampled"]["threads"], 1);
    assert_eq!(
        p["sampled"]["left_out"],
        serde_json::json!(["loops", "sample"])
    );
    assert!(
        p["sampled"]["samples"].as_u64().unwrap() > 100,
        "{}",
        p["sampled"]
    );
    // The CPU time the samples stand for, at the default period of 31 µs.
    let cpu = p["sampled"]["cpu_ns"].as_f64().unwrap() / 1e9;
    cpu_time_holds_the_samples(&p["sampled"], cpu, 31_000.0);
    // Every sample at its interrupted instruction, as `coprof record`
    // takes them, and each report's command line says so.
    assert_hot_loop_on_top(&p["reports"][0]["json"]);
    for r in p["reports"].as_array().unwrap() {
        let command = r["command"].as_str().unwrap();
        assert!(command.contains(" --sample-at interrupt -- "), "{command}");
    }
    // The saved profile prints again, with what was left out.
    let again = common::stdout_of(coprof().arg("report").arg(&file));
    assert!(
        again.contains(" samples of 1 thread (")
            && again.contains(" s of CPU), exit status 3, sampled natively"),
        "{again}"
    );
    assert!(
        again.contains("left out: the loops and sample reports"),
        "{again}"
    );
    assert!(!again.contains("== loops"), "{again}");

    // Every sample at its next load: the values report sees the loop's load.
    let p = json_of(
        coprof()
            .args(["profile", "--json", "--sample-at", "next-load", "--"])
            .arg(&prog),
    );
    let values = &p["reports"][2];
    assert_eq!(values["name"], "values");
    assert!(
        values["command"]
            .as_str()
            .unwrap()
            .contains("--sample-at next-load"),
        "{values}"
    );
    let top = &values["json"]["pcs"][0];
    assert_eq!(top["source_text"], "s += table[i];", "{top}");
}

#[test]
fn a_profile_of_a_trace_of_samples_leaves_out_what_needs_every_instruction() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let trace = dir.path().join("hot.cpt");
    common::succeeded(
        coprof()
            .args(["record", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&prog),
    );
    let p = json_of(coprof().args(["profile", "--json", "--exact"]).arg(&trace));
    assert_eq!(
        report_names(&p),
        ["ranges-pc", "ranges-load-value", "values"]
    );
    // The CPU time the trace keeps, over which its samples were taken.
    let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
    assert!(info["meta"]["cpu_ns"].as_u64().unwrap() > 0, "{info}");
    assert_eq!(
        p["sampled"],
        serde_json::json!({
            "samples": null,
            "threads": null,
            "cpu_ns": info["meta"]["cpu_ns"],
            "left_out": ["loops", "sample"]
        })
    );
    assert_hot_loop_on_top(&p["reports"][0]["json"]);
    // Each report is what its command line gives alone.
    for r in p["reports"].as_array().unwrap() {
        let command = r["command"].as_str().unwrap();
        let words: Vec<&str> = command.split(' ').collect();
        assert_eq!(words[0], "coprof", "{command}");
        let alone = json_of(coprof().args(&words[1..]).arg("--json"));
        assert_eq!(r["json"], alone, "{command}");
    }
    // The reports named are those that read samples.
    let p = json_of(
        coprof()
            .args([
                "profile",
                "--json",
                "--report",
                "ranges",
                "--report",
                "values --algo hotlist",
            ])
            .arg(&trace),
    );
    assert_eq!(report_names(&p), ["ranges", "values --algo hotlist"]);
    assert_eq!(p["sampled"]["left_out"], serde_json::json!([]));
    refused(
        coprof().args(["profile", "--report", "loops"]).arg(&trace),
        "--report 'loops': ",
    );
    refused(
        coprof()
            .args(["profile", "--report", "sample --sampler brr:9 --eval"])
            .arg(&trace),
        "a sampler picks from every event of the stream",
    );
    // Nor does a stream of the values every instruction produces.
    refused(
        coprof()
            .args(["profile", "--report", "ranges --stream=narrow-pc"])
            .arg(&trace),
        "--report 'ranges --stream=narrow-pc': ",
    );
    refused(
        coprof()
            .args(["profile", "--report", "ranges --dims pc,narrow-pc", "--"])
            .arg(&prog),
        "the narrow-PC stream needs the value every instruction produces",
    );
    refused(
        coprof()
            .args(["ranges", "--stream", "narrow-pc"])
            .arg(&trace),
        "the narrow-PC stream needs the value every instruction produces",
    );
    // Where a sample is taken belongs to a live run.
    refused(
        coprof()
            .args(["ranges", "--sample-at", "interrupt"])
            .arg(&trace),
        "--sample-at applies to a program run after `--`, not to the trace file",
    );
    let rv = compile(dir.path(), "rv", "int main(void) { return 0; }\n");
    refused(
        coprof()
            .args(["values", "--sample-at", "next-load", "--"])
            .arg(&rv),
        "--sample-at applies to an x86-64 program",
    );
    refused(
        coprof()
            .args(["profile", "--follow-children", "-o"])
            .arg(dir.path().join("p.json"))
            .arg(&trace),
        "--follow-children applies to a program run after `--`, not to the trace file",
    );
}

#[test]
fn a_script_that_runs_a_native_program_is_sampled_live() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    // A wrapper, as pyenv's shims and many /usr/bin commands are: its
    // interpreter is the host's shell, an x86-64 program.
    let wrapper = dir.path().join("wrapper");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec {} \"$@\"\n", prog.display()),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = json_of(coprof().args(["ranges", "--json", "--"]).arg(&wrapper));
    assert_hot_loop_on_top(&r);
    coprof()
        .args(["profile", "--"])
        .arg(&wrapper)
        .arg("exit3")
        .assert()
        .code(3);
}

#[test]
fn a_profile_follows_a_native_programs_children_each_into_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let file = dir.path().join("family.json");
    let script = format!("{p}; {p} exit3; exit 0", p = prog.display());
    let out = common::succeeded(
        coprof()
            .args(["profile", "--follow-children", "-o"])
            .arg(&file)
            .args(["--", "/bin/sh", "-c", &script]),
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("== child processes (--follow-children): 2 profiled"),
        "{summary}"
    );
    let main: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let children = main["children"].as_array().unwrap();
    let mut statuses: Vec<_> = children
        .iter()
        .map(|c| c["status"].as_i64().unwrap())
        .collect();
    statuses.sort();
    assert_eq!(statuses, [0, 3], "{main}");
    for c in children {
        // Each child's samples, in reports of its own, named by its
        // program's symbols and lines.
        assert!(c["samples"].as_u64().unwrap() > 100, "{c}");
        let command = c["command"].as_str().unwrap();
        let p = prog.display();
        assert!(
            [format!("{p}"), format!("{p} exit3")].contains(&command.to_string()),
            "{c}"
        );
        let pid = c["pid"].as_u64().unwrap();
        let child_file = dir.path().join(format!("family.{pid}.json"));
        assert_eq!(c["file"], child_file.display().to_string());
        let child: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&child_file).unwrap()).unwrap();
        assert_eq!(child["process"]["pid"], pid);
        assert_eq!(child["sampled"]["samples"], c["samples"]);
        // Its CPU time, listed with its samples and in its own profile.
        assert_eq!(child["sampled"]["cpu_ns"], c["cpu_ns"]);
        let cpu = c["cpu_ns"].as_f64().unwrap() / 1e9;
        cpu_time_holds_the_samples(c, cpu, 31_000.0);
        let line = format!(
            " samples ({cpu:.3} s of CPU), exit status {}  {}",
            c["status"],
            child_file.display()
        );
        assert!(summary.contains(&line), "{line}: {summary}");
        assert_eq!(
            report_names(&child),
            ["ranges-pc", "ranges-load-value", "values"]
        );
        assert_hot_loop_on_top(&child["reports"][0]["json"]);
        // Each report's command line runs the child's program alone,
        // not the shell.
        for r in child["reports"].as_array().unwrap() {
            let line = r["command"].as_str().unwrap();
            assert!(line.ends_with(&format!(" -- {command}")), "{line}");
            assert!(!line.contains("/bin/sh"), "{line}");
        }
    }
    // The shell's own profile holds only its samples: far fewer.
    let own = main["sampled"]["samples"].as_u64().unwrap();
    assert!(
        own * 4 < children[0]["samples"].as_u64().unwrap(),
        "{}",
        main["sampled"]
    );
}

#[test]
fn children_left_unsampled_are_said_with_their_cpu_time() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    // Two runs of the hot loop for 0.1 s each: a run of it alone, about
    // 8 ms of CPU time on a fast machine, may be less than the kernel's
    // tick that the children's time is told in.
    let script = format!("{p} for 0.1; {p} for 0.1; exit 0", p = prog.display());
    let trace = dir.path().join("sh.cpt");
    let out = common::succeeded(
        coprof()
            .args(["record", "--json", "-o"])
            .arg(&trace)
            .args(["--", "/bin/sh", "-c", &script]),
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    // Whatever share of a CPU they had, in ticks.
    let cpu = summary["children_cpu_seconds"].as_f64().unwrap();
    assert!(cpu > 0.0 && cpu < 10.0, "{summary}");
    // Said in the summary, and by the live reports, unless followed.
    let out = common::succeeded(
        coprof()
            .args(["record", "-o"])
            .arg(&trace)
            .args(["--", "/bin/sh", "-c", &script]),
    );
    let said = String::from_utf8_lossy(&out.stderr);
    // (The shell named as /proc/PID/exe has it: `/usr/bin/dash`.)
    assert!(said.contains("sh's child processes used "), "{said}");
    assert!(said.contains("s of CPU time, not sampled"), "{said}");
    let out = common::succeeded(coprof().args(["ranges", "--", "/bin/sh", "-c", &script]));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("s of CPU time, not sampled"), "{said}");
    let out = common::succeeded(
        coprof()
            .args(["record", "--follow-children", "-o"])
            .arg(&trace)
            .args(["--", "/bin/sh", "-c", &script]),
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("not sampled"), "{said}");
}

/// Starts `prog` running its hot loop for `secs` seconds, not under
/// coprof; returns once it runs `prog` itself, past its `execve`.
fn running(prog: &Path, secs: &str) -> std::process::Child {
    let child = Command::new(prog).args(["for", secs]).spawn().unwrap();
    let exe = format!("/proc/{}/exe", child.id());
    let cmdline = format!("/proc/{}/cmdline", child.id());
    let canonical = std::fs::canonicalize(prog).unwrap();
    let started = std::time::Instant::now();
    // Started once its exe is the program and its arguments are in place:
    // `execve` points exe at the new program before it lays out the
    // arguments that cmdline reads, and a process attached to in between
    // reads as having none.
    let args_in_place =
        || std::fs::read(&cmdline).is_ok_and(|c| c.split(|&b| b == 0).any(|w| w == b"for"));
    while std::fs::read_link(&exe).ok().as_ref() != Some(&canonical) || !args_in_place() {
        assert!(
            started.elapsed().as_secs() < 20,
            "{} never started",
            prog.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child
}

#[test]
fn a_running_process_is_recorded_for_a_time_and_runs_on() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let trace = dir.path().join("attached.cpt");
    let mut child = running(&prog, "4");
    let pid = child.id().to_string();
    let out = common::succeeded(
        coprof()
            .args([
                "record",
                "--json",
                "--attach",
                &pid,
                "--duration",
                "0.5",
                "-o",
            ])
            .arg(&trace),
    );
    let summary: serde_json::Value = serde_json::from_slice(
        out.stderr
            .trim_ascii_end()
            .rsplit(|&b| b == b'\n')
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(summary["attached"], true, "{summary}");
    assert_eq!(summary["let_go"], true, "{summary}");
    assert_eq!(summary["pid"].to_string(), pid);
    assert_eq!(
        summary["program"].as_str().unwrap(),
        std::fs::canonicalize(&prog).unwrap().to_str().unwrap()
    );
    // Half a second of its CPU time at 31 µs, however busy the machine
    // (the clock counts the process's own time).
    assert!(summary["seconds"].as_f64().unwrap() >= 0.5, "{summary}");
    assert!(summary["samples"].as_u64().unwrap() > 100, "{summary}");
    // The trace names the process's program and arguments, and its hot
    // loop with its line.
    let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
    assert_eq!(
        info["meta"]["args"],
        serde_json::json!(["for", "4"]),
        "{info}"
    );
    assert_eq!(info["meta"]["attached"]["pid"].to_string(), pid);
    let text = String::from_utf8(common::succeeded(coprof().arg("info").arg(&trace)).stdout);
    let said = format!("\nprocess    {pid}, attached to as it ran (coprof record --attach)\n");
    assert!(text.as_ref().unwrap().contains(&said), "{text:?}");
    assert_hot_loop_on_top(&json_of(coprof().args(["ranges", "--json"]).arg(&trace)));
    // Let go, it runs to its end, unharmed.
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn ctrl_c_lets_an_attached_process_go_and_the_trace_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let trace = dir.path().join("attached.cpt");
    let mut child = running(&prog, "4");
    let recorder = Command::new(assert_cmd::cargo::cargo_bin("coprof"))
        .args(["record", "--attach", &child.id().to_string(), "-o"])
        .arg(&trace)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    // SAFETY: a signal to the coprof started here.
    unsafe { libc::kill(recorder.id() as i32, libc::SIGINT) };
    let out = recorder.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(
        err.contains(&format!("let go of process {}: it runs on", child.id())),
        "{err}"
    );
    assert_hot_loop_on_top(&json_of(coprof().args(["ranges", "--json"]).arg(&trace)));
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// How long a sampler may run on once its trace's reader has gone: its
/// first write, of a chunk of 65,536 samples, comes after 2 s of the
/// program's CPU time at the least, 31 µs a sample.
const UNREAD_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

#[test]
fn a_traces_reader_that_goes_ends_the_sampling_at_once() {
    // `coprof record -o - | reader`, and the reader ends before the
    // program does: coprof ends by SIGPIPE, quietly, as a writer in a
    // pipeline does, at once rather than when its next chunk is written
    // or the program ends. A process attached to is let go first, as at
    // Ctrl-C, and runs on; a program started here ends with coprof.
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let record = |args: &[&str]| {
        Command::new(assert_cmd::cargo::cargo_bin("coprof"))
            .args(["record", "-o", "-"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut child = running(&prog, "20");
    let err = common::ended_by_sigpipe_when_unread(
        record(&["--attach", &child.id().to_string()]),
        UNREAD_WITHIN,
    );
    assert!(
        err.contains(&format!("let go of process {}: it runs on", child.id())),
        "{err}"
    );
    // Let go, it runs on (not stopped) until killed here.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
    let state = stat.rsplit(')').next().unwrap().split_whitespace().next();
    assert!(matches!(state, Some("R" | "S")), "{state:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    // Started here: its 20 s do not run out.
    let prog = prog.to_str().unwrap();
    common::ended_by_sigpipe_when_unread(record(&["--", prog, "for", "20"]), UNREAD_WITHIN);
}

#[test]
fn a_death_by_a_signal_is_told_by_its_name_but_sigpipes() {
    // As the simulator tells one, and a shell: SIGPIPE, a pipeline's
    // writer's usual end, unannounced.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.cpt");
    for (sig, told) in [("SEGV", Some("SIGSEGV (signal 11)")), ("PIPE", None)] {
        let out = coprof()
            .args(["record", "-o"])
            .arg(&trace)
            .args(["--", "/bin/sh", "-c", &format!("kill -{sig} $$")])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let number = if sig == "SEGV" { 11 } else { 13 };
        assert_eq!(out.status.code(), Some(128 + number), "{err}");
        match told {
            Some(name) => assert!(err.contains(&format!("was killed by {name}")), "{err}"),
            None => assert!(!err.contains("killed"), "{err}"),
        }
    }
}

#[test]
fn what_attaching_refuses_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    refused(
        coprof()
            .args(["record", "--duration", "1", "--"])
            .arg(&prog),
        "--duration applies with --attach",
    );
    refused(
        coprof().args(["record", "--attach", "1", "--"]).arg(&prog),
        "'--attach <PID>' cannot be used with",
    );
    refused(
        coprof().args(["record", "--attach", "2147483647"]),
        "--attach 2147483647: no such process",
    );
    refused(
        coprof().args(["record", "--attach", "1", "--duration", "0"]),
        "0 seconds: give more than 0",
    );
}

#[test]
fn the_live_reports_and_a_profile_attach_to_a_running_process() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let mut child = running(&prog, "5");
    let pid = child.id().to_string();
    let attach = ["--attach", pid.as_str(), "--duration", "0.4"];
    let r = json_of(coprof().args(["ranges", "--json"]).args(attach));
    assert_hot_loop_on_top(&r);
    let out = dir.path().join("p.json");
    common::succeeded(coprof().args(["profile", "-o"]).arg(&out).args(attach));
    let p: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(
        p["sampled"]["attached"].to_string(),
        pid,
        "{}",
        p["sampled"]
    );
    assert_eq!(
        p["sampled"]["left_out"],
        serde_json::json!(["loops", "sample"])
    );
    // Let go, it has no exit status yet.
    assert!(p["status"].is_null(), "{}", p["status"]);
    assert_eq!(p["args"], serde_json::json!(["for", "5"]));
    assert_eq!(
        report_names(&p),
        ["ranges-pc", "ranges-load-value", "values"]
    );
    for r in p["reports"].as_array().unwrap() {
        let command = r["command"].as_str().unwrap();
        assert!(
            command.ends_with(&format!("--attach {pid} --duration 0.4")),
            "{command}"
        );
    }
    let summary = stdout_of(coprof().arg("report").arg(&out));
    assert!(
        summary.contains(&format!("of process {pid}, attached and let go")),
        "{summary}"
    );
    // What needs every instruction is refused by name.
    refused(
        coprof().args(["loops"]).args(attach),
        &format!("--attach {pid} samples a running process, which gives no instruction stream"),
    );
    refused(
        coprof()
            .args(["ranges", "--duration", "1", "--"])
            .arg(&prog),
        "--duration applies with --attach",
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn same_cpu_runs_the_program_on_one_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("one.cpt");
    // The program's standard output is its own: `nproc` counts the CPUs
    // it may run on.
    let out = common::succeeded(
        coprof()
            .args(["record", "--same-cpu", "-o"])
            .arg(&trace)
            .args(["--", "nproc"]),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
    let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
    assert_eq!(info["meta"]["sampling"]["same_cpu"], true, "{info}");
    let rv = compile(dir.path(), "rv", "int main(void) { return 0; }\n");
    refused(
        coprof().args(["ranges", "--same-cpu", "--"]).arg(&rv),
        "--same-cpu applies to an x86-64 program",
    );
    refused(
        coprof().args(["record", "--same-cpu", "--attach", "1"]),
        "'--same-cpu' cannot be used with '--attach <PID>'",
    );
}

#[test]
fn ring_buffers_give_a_trace_of_pcs_that_only_the_code_profile_reads() {
    let dir = tempfile::tempdir().unwrap();
    let prog = native(dir.path());
    let trace = dir.path().join("ring.cpt");
    let out = common::succeeded(
        coprof()
            .args(["record", "--ring-buffer", "--period-us", "20", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&prog),
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(" samples of "), "{said}");
    let info = json_of(coprof().args(["info", "--json"]).arg(&trace));
    assert_eq!(info["meta"]["sampling"]["ring_buffer"], true, "{info}");
    // `coprof info` says how, in words.
    let text = common::succeeded(coprof().arg("info").arg(&trace)).stdout;
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains(
            "\nsampled    a sample every ~20 µs of each thread's CPU time; into ring buffers, the \
             program not stopped; periods drawn with seed 1\n"
        ),
        "{text}"
    );
    assert_eq!(
        info["meta"]["classes"],
        serde_json::json!(["other"]),
        "{info}"
    );
    let r = json_of(coprof().arg("ranges").arg("--json").arg(&trace));
    assert!(hot_loop_share(&r) > 0.8, "{r}");
    assert_hot_loop_on_top(&r);
    // What needs loads refuses the trace, naming it and what reads it.
    refused(
        coprof().arg("values").arg(&trace),
        "ring.cpt holds samples taken into ring buffers (coprof record --ring-buffer), PCs \
         alone: the values report needs each sampled load with its value; `coprof ranges \
         --stream pc` reads them",
    );
    refused(
        coprof()
            .args(["ranges", "--stream", "load-value"])
            .arg(&trace),
        "ranges of a stream other than pc need each sampled load or store",
    );
    // A profile of it holds the code profile alone, and says why.
    let p = json_of(coprof().args(["profile", "--json"]).arg(&trace));
    assert_eq!(report_names(&p), ["ranges-pc"]);
    assert_eq!(p["sampled"]["pcs_only"], true);
    let text = common::stdout_of(coprof().arg("profile").arg(&trace));
    assert!(
        text.contains(
            "left out: the ranges-load-value and values reports, which need loads with their \
             values (sample without --ring-buffer for them)"
        ),
        "{text}"
    );

    // Live, the same: the code profile of the program, with the option
    // in its command line.
    let p = json_of(
        coprof()
            .args(["profile", "--json", "--ring-buffer", "--"])
            .arg(&prog),
    );
    assert_eq!(report_names(&p), ["ranges-pc"]);
    assert_eq!(p["sampled"]["pcs_only"], true);
    let command = p["reports"][0]["command"].as_str().unwrap();
    assert!(command.contains(" --ring-buffer -- "), "{command}");
    assert_hot_loop_on_top(&p["reports"][0]["json"]);
    refused(
        coprof().args(["values", "--ring-buffer", "--"]).arg(&prog),
        "--ring-buffer takes samples without stopping the program, PCs alone: the values report",
    );
    refused(
        coprof()
            .args(["ranges", "--ring-buffer", "--sample-at", "next-load", "--"])
            .arg(&prog),
        "--ring-buffer takes samples without stopping the program, so not at the next load",
    );
    refused(
        coprof()
            .args(["record", "--ring-buffer", "--next-load", "--"])
            .arg(&prog),
        "'--ring-buffer' cannot be used with '--next-load'",
    );
    refused(
        coprof().args(["ranges", "--ring-buffer"]).arg(&trace),
        "--ring-buffer applies to a program run after `--`, not to the trace file",
    );
}

#[test]
fn a_stripped_position_independent_programs_ranges_are_its_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::host_compile(
        dir.path(),
        "hot",
        common::HOT,
        &["-O1", "-fPIE", "-pie", "-s"],
    );
    let trace = dir.path().join("hot.cpt");
    common::succeeded(
        coprof()
            .args(["record", "--period-us", "20", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&prog),
    );
    // No symbol names its code: the hot range is the file's offsets, as
    // `addr2line -e hot` takes them, not a blank.
    let r = json_of(coprof().args(["ranges", "--json"]).arg(&trace));
    let innermost = top_range(&r);
    assert!(innermost["share"].as_f64().unwrap() > 0.3, "{r}");
    let (lo, hi) = (
        innermost["lo"].as_u64().unwrap(),
        innermost["hi"].as_u64().unwrap(),
    );
    let functions = innermost["functions"].as_str().unwrap_or_default();
    let offsets: Vec<u64> = functions
        .split(" .. ")
        .map(|end| {
            let hex = end
                .strip_prefix("hot+0x")
                .unwrap_or_else(|| panic!("{functions}"));
            u64::from_str_radix(hex, 16).unwrap()
        })
        .collect();
    // Both ends, or the one address of a range of one, as a PC is named.
    assert_eq!(offsets.len(), if lo == hi { 1 } else { 2 }, "{functions}");
    // The same span as the addresses, at the program's load address.
    let span = offsets[offsets.len() - 1] - offsets[0];
    assert_eq!(span, hi - lo, "{functions}");
    assert!(
        offsets[0] < 0x10000 && lo > 0x10000,
        "{functions} at {lo:#x}"
    );
}

/// Threads that all live at once (a barrier holds them until the last
/// has started), then each sum a while: argv[1] of them.
const MANY: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
volatile long sink;
static pthread_barrier_t all;
static void *work(void *a) {
    pthread_barrier_wait(&all);
    long s = 0;
    for (long i = 0; i < 2000000; i++)
        s += i;
    sink = s;
    return a;
}
int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    pthread_t *t = calloc(n, sizeof *t);
    pthread_barrier_init(&all, NULL, n + 1);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, work, NULL))
            return 2;
    pthread_barrier_wait(&all);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return 0;
}
"#;

#[test]
fn threads_past_the_locked_memory_for_ring_buffers_are_sampled_with_stops_and_told() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::host_compile(dir.path(), "many", MANY, &["-O1", "-pthread"]);
    // Each buffer takes a page of data and its control page at the
    // least, out of the user's perf_event_mlock_kb per CPU, and then out
    // of `ulimit -l`, set to 0 here: more threads at once than that
    // budget holds leave some without, sampled with stops instead.
    let kb: usize = std::fs::read_to_string("/proc/sys/kernel/perf_event_mlock_kb")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let cpus = std::thread::available_parallelism().unwrap().get();
    let threads = kb * cpus / 8 + 64;
    if threads > 3000 {
        eprintln!("skipped: {cpus} CPUs' locked memory for ring buffers needs {threads} threads");
        return;
    }
    let coprof = assert_cmd::cargo::cargo_bin("coprof");
    let trace = dir.path().join("many.cpt");
    let run = |options: &str| {
        let script = format!(
            "ulimit -l 0 && exec \"$0\" record --ring-buffer {options} -o \"$1\" -- \"$2\" {threads}"
        );
        // Root may lock any amount (CAP_IPC_LOCK): run without that right.
        let mut cmd = match unsafe { libc::geteuid() } {
            0 => {
                let mut c = Command::new("setpriv");
                c.args(["--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock", "sh"]);
                c
            }
            _ => Command::new("sh"),
        };
        let out = cmd
            .args(["-c", &script])
            .arg(&coprof)
            .arg(&trace)
            .arg(&prog)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        err
    };
    // With stacks too, whose buffers are larger, and leave more threads
    // without.
    for options in ["", "-g"] {
        let err = run(&format!("--json {options}"));
        let summary: serde_json::Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
        let stopped = summary["stopped_threads"].as_u64().unwrap();
        assert_eq!(summary["threads"], threads as u64 + 1, "{summary}");
        // (The program's first thread has its buffer: without one, the
        // run would end with an error.)
        assert!(stopped > 0 && stopped <= threads as u64, "{summary}");
        // The threads sampled with stops have samples as the others do,
        // PCs alone: more threads have samples than had buffers.
        let info = json_of(common::coprof().args(["info", "--json"]).arg(&trace));
        assert_eq!(
            info["meta"]["classes"],
            serde_json::json!(["other"]),
            "{info}"
        );
        let sampled = (info["threads"].as_array().unwrap().iter())
            .filter(|t| t["events"].as_u64().unwrap() > 0)
            .count() as u64;
        let buffers = threads as u64 + 1 - stopped;
        assert!(
            sampled > buffers,
            "{sampled} threads sampled, {buffers} buffers: {info}"
        );
        if options == "-g" {
            assert_eq!(summary["stacks"], summary["samples"], "{summary}");
        }
    }
    // Said in words without --json.
    let err = run("");
    assert!(
        err.contains(
            "threads were sampled with a stop at each sample, at its cost: no ring buffer could \
             be mapped for them"
        ),
        "{err}"
    );
}

//! `coprof profile` and `coprof report` (issue 8): every engine in one pass,
//! reports identical to the single commands', a profile file that `report`
//! prints again, live runs of a real program, and bad profile files.

mod common;

use common::{compile, coprof, gen_trace, json_of, stdout_of, traced_run};
use predicates::prelude::*;
use serde_json::Value;
use std::os::unix::fs::FileTypeExt;

/// The default profile's sections, each with the command (after `coprof`,
/// with `--exact` where it applies) that prints it alone.
const DEFAULT_SECTIONS: [(&str, &[&str]); 5] = [
    ("loops", &["loops", "--exact"]),
    ("ranges-pc", &["ranges", "--stream", "pc", "--exact"]),
    (
        "ranges-load-value",
        &["ranges", "--stream", "load-value", "--exact"],
    ),
    ("values", &["values", "--exact"]),
    (
        "sample",
        &["sample", "--sampler", "brr:9", "--eval", "--profile", "pc"],
    ),
];

fn section<'a>(profile: &'a Value, name: &str) -> &'a Value {
    profile["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no {name} report in {profile}"))
}

#[test]
fn profile_reports_equal_the_single_commands() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "mixed", 300_000, 3);
    let p = json_of(
        coprof()
            .arg("profile")
            .arg("--exact")
            .arg(&trace)
            .arg("--json"),
    );
    assert_eq!(p["format"], "coprof-profile");
    assert_eq!(p["events"], 300_000);
    let names: Vec<&str> = p["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "loops",
            "ranges-pc",
            "ranges-load-value",
            "values",
            "sample"
        ]
    );
    // Each section is what its command prints alone, and says so.
    for (name, args) in DEFAULT_SECTIONS {
        let s = section(&p, name);
        let alone = json_of(coprof().args(args).arg(&trace).arg("--json"));
        assert_eq!(s["json"], alone, "{name} differs from `coprof {args:?}`");
        assert!(
            s["command"]
                .as_str()
                .unwrap()
                .starts_with(&format!("coprof {}", args.join(" "))),
            "{}",
            s["command"]
        );
    }
}

#[test]
fn saved_profile_is_printed_again_by_report() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "loops", 200_000, 3);
    let file = dir.path().join("p.json");

    let out = common::succeeded(coprof().arg("profile").arg(&trace).arg("-o").arg(&file));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("== loops (coprof loops "), "{text}");
    assert!(text.contains("frequent loop cache: 32 entries, 2-way, 24-bit counters"));
    assert!(text.contains("profile saved to"));

    let again = common::succeeded(coprof().arg("report").arg(&file));
    let again = String::from_utf8(again.stdout).unwrap();
    let before: String = text
        .lines()
        .filter(|l| !l.starts_with("profile saved to"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(again, before, "report must print what profile printed");

    let only = json_of(
        coprof()
            .arg("report")
            .arg(&file)
            .args(["--only", "loops", "--json"]),
    );
    assert_eq!(only["reports"].as_array().unwrap().len(), 1);
    assert!(
        only["reports"][0]["json"]["loops"]
            .as_array()
            .unwrap()
            .len()
            >= 5
    );
}

#[test]
fn bad_profile_files_are_named_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    coprof()
        .arg("report")
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.json"));

    // Files that are there but are no profile coprof can read, each named
    // with what is wrong.
    let bad = [
        (
            "garbage.json",
            "{\n  \"format\": \"coprof-profile\",\n  oops\n}",
            "line 3",
        ),
        ("other.json", "{\"events\": 3}", "not a coprof profile"),
        (
            "future.json",
            "{\"format\": \"coprof-profile\", \"version\": 99}",
            "version 99",
        ),
    ];
    for (name, content, says) in bad {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        coprof()
            .arg("report")
            .arg(&path)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(name).and(predicate::str::contains(says)));
    }

    let trace = gen_trace(dir.path(), "loops", 10_000, 3);
    let good = dir.path().join("good.json");
    coprof()
        .arg("profile")
        .arg(&trace)
        .arg("-o")
        .arg(&good)
        .assert()
        .success();
    coprof()
        .arg("report")
        .arg(&good)
        .args(["--only", "nosuch"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--only nosuch").and(predicate::str::contains("loops")));

    // A file given in another's place is said to be what it is, with the
    // command that takes it: a trace to report, a profile to read as a
    // trace, a program without its `--`.
    let wrong_place = [
        (
            "report",
            &trace,
            "not a coprof profile: it is a coprof trace: `coprof profile -o PROFILE.json FILE`",
        ),
        (
            "loops",
            &good,
            "not a coprof trace (the file does not start with the magic \"CPTRACE\\0\"): it is a \
             coprof profile, which `coprof report FILE` prints",
        ),
    ];
    for (command, file, says) in wrong_place {
        coprof()
            .arg(command)
            .arg(file)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    let program = std::path::PathBuf::from(env!("CARGO_BIN_EXE_coprof"));
    for command in ["report", "ranges"] {
        coprof()
            .arg(command)
            .arg(&program)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("it is an ELF file for x86-64"))
            .stderr(predicate::str::contains("-- FILE ARGS"));
    }

    // An unwritable output path fails before anything is left behind.
    coprof()
        .arg("profile")
        .arg(&trace)
        .arg("-o")
        .arg(dir.path().join("no/such/dir/p.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("p.json"));
}

const HOT_LOOP: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned sink;
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    unsigned s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 100; j++)
            s += (unsigned)i * j ^ (s >> 3);
    sink = s;
    printf("done %u\n", s);
    return 0;
}
"#;

#[test]
fn live_profile_of_a_program_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "hot", HOT_LOOP);
    let file = dir.path().join("hot.json");
    let out = common::succeeded(
        coprof()
            .arg("profile")
            .arg("--exact")
            .arg("-o")
            .arg(&file)
            .arg("--")
            .arg(&prog)
            .arg("2000"),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    // The program's own output goes to stderr; stdout is the report.
    assert!(String::from_utf8_lossy(&out.stderr).contains("done "));
    assert!(!stdout.contains("done "));
    assert!(stdout.contains("exit status 0"), "{stdout}");

    let p: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(p["args"], serde_json::json!(["2000"]));
    assert_eq!(p["status"], 0);
    assert!(p["instructions"].as_u64().unwrap() > 200_000);
    // The inner loop runs 2000 × 100 times: the detector's top loop has
    // about 200,000 iterations and the estimate matches the exact count.
    let loops = &section(&p, "loops")["json"];
    let top = &loops["loops"][0];
    let iters = top["exact_iterations"].as_u64().unwrap();
    assert!((190_000..=210_000).contains(&iters), "{top}");
    assert!(loops["accuracy"].as_f64().unwrap() > 0.95, "{loops}");
    // With the program's debug info, the loop is named by its source lines
    // and the loads by their instruction and line.
    let src = top["source"].as_str().expect("a source span");
    assert!(src.contains("hot.c:"), "{top}");
    assert_eq!(top["function"], "main");
    // The loop keeps its values in registers; the loads profiled are the C
    // library's, named by symbol (it has no line table) and disassembled.
    for load in section(&p, "values")["json"]["pcs"].as_array().unwrap() {
        let text = load["disasm"].as_str().unwrap_or_default();
        assert!(
            ["lb", "lh", "lw", "ld", "fl", "c.l", "c.fl", "amo", "lr."]
                .iter()
                .any(|m| text.starts_with(m)),
            "{load}"
        );
        assert!(load["place"].as_str().is_some(), "{load}");
    }
    // The code profile's hottest range holds the loop.
    let hot = &section(&p, "ranges-pc")["json"]["hot_ranges"];
    let pc = top["pc"].as_u64().unwrap();
    assert!(hot
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["lo"].as_u64().unwrap() <= pc && pc <= h["hi"].as_u64().unwrap()));
}

#[test]
fn live_single_commands_equal_the_live_profile() {
    // `coprof loops|ranges|values|sample -- PROG` run the program themselves;
    // each report equals the same section of `coprof profile -- PROG`, and
    // the program's output and exit status pass through as with `run`. The
    // same --random-seed gives both runs the same canaries, so that their
    // load values agree too.
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "hot", HOT_LOOP);
    let p = json_of(
        coprof()
            .args(["profile", "--exact", "--json", "--random-seed", "1", "--"])
            .arg(&prog)
            .arg("300"),
    );
    for (name, args) in DEFAULT_SECTIONS {
        let out = common::succeeded(
            coprof()
                .args(args)
                .args(["--json", "--random-seed", "1", "--"])
                .arg(&prog)
                .arg("300"),
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("done "),
            "{args:?}: the program's output is missing"
        );
        let alone: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        assert_eq!(
            section(&p, name)["json"],
            alone,
            "live {name} differs from `coprof {args:?} -- PROG`"
        );
    }
    // The loop the program runs 300 × 100 times is found live.
    let loops = &section(&p, "loops")["json"]["loops"][0];
    let iters = loops["exact_iterations"].as_u64().unwrap();
    assert!((28_000..=31_000).contains(&iters), "{loops}");
}

#[test]
fn chosen_reports_compare_configurations_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "loops", 400_000, 3);
    let p = json_of(
        coprof()
            .arg("profile")
            .arg(&trace)
            .args(["--exact", "--json"])
            .args(["--report", "loops", "--report", "loops  --coalesce"])
            .args([
                "--report",
                "loops --sweep",
                "--report",
                "ranges --epsilon 0.1",
            ]),
    );
    let names: Vec<&str> = p["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "loops",
            "loops --coalesce",
            "loops --sweep",
            "ranges --epsilon 0.1"
        ]
    );
    let plain = &section(&p, "loops")["json"];
    let coal = &section(&p, "loops --coalesce")["json"];
    // Coalescing keeps the counts (§5.3) and saves cache updates; --exact
    // reached both.
    assert_eq!(plain["loops"], coal["loops"]);
    assert!(coal["cache_updates"].as_u64() < plain["cache_updates"].as_u64());
    assert!(plain["accuracy"].as_f64().unwrap() > 0.9, "{plain}");
    assert_eq!(plain["accuracy"], coal["accuracy"]);
    // The sweep takes no --exact, and evaluates every configuration.
    let sweep = &section(&p, "loops --sweep")["json"];
    assert_eq!(sweep["points"].as_array().unwrap().len(), 672);
    assert_eq!(section(&p, "ranges --epsilon 0.1")["json"]["epsilon"], 0.1);

    // The loops workload makes no calls: no method profile, said so, and
    // the other reports stand.
    let out = common::succeeded(coprof().arg("profile").arg(&trace).args([
        "--report",
        "loops",
        "--report",
        "sample --sampler brr:3 --eval",
    ]));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("== sample --sampler brr:3 --eval") && text.contains("no report: "),
        "{text}"
    );
    assert!(text.contains("frequent loop cache"));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no sample --sampler brr:3 --eval report")
    );
    coprof()
        .arg("profile")
        .arg(&trace)
        .args(["--report", "bogus --x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--report 'bogus --x'"));
    coprof()
        .arg("profile")
        .arg(&trace)
        .args(["--report", "loops --entries 3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("loops --entries 3"));
}

#[test]
fn symbols_for_traces_come_from_binary_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "hot", HOT_LOOP);
    let trace = dir.path().join("hot.cpt");
    traced_run(&trace, &prog).arg("300").assert().success();
    // The trace names the program, which exists: its symbols are used.
    let v = json_of(coprof().arg("loops").arg(&trace).arg("--json"));
    assert!(v["loops"][0]["source"].as_str().unwrap().contains("hot.c:"));
    // --no-symbols: addresses only.
    let v = json_of(
        coprof()
            .arg("loops")
            .arg(&trace)
            .args(["--json", "--no-symbols"]),
    );
    assert!(v["loops"][0].get("source").is_none(), "{v}");
    // A trace moved away from its program: --binary names it.
    let moved = dir.path().join("moved");
    std::fs::create_dir(&moved).unwrap();
    std::fs::rename(&prog, moved.join("hot")).unwrap();
    let v = json_of(coprof().arg("loops").arg(&trace).arg("--json"));
    assert!(v["loops"][0].get("source").is_none());
    let v = json_of(
        coprof()
            .arg("loops")
            .arg(&trace)
            .arg("--json")
            .arg("--binary")
            .arg(moved.join("hot")),
    );
    assert!(v["loops"][0]["source"].as_str().unwrap().contains("hot.c:"));
    coprof()
        .arg("loops")
        .arg(&trace)
        .arg("--binary")
        .arg(dir.path().join("nothing"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--binary").and(predicate::str::contains("nothing")));
}

#[test]
fn a_live_profile_counts_what_came_as_runs_of_blocks() {
    // The loop detector, the code profile and the sampled PC profile take
    // the instructions as runs of blocks (tests/runs.rs checks that their
    // reports do not change); only the loads still come as events.
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "hot", HOT_LOOP);
    let p = json_of(
        coprof()
            .args(["profile", "--json", "--"])
            .arg(&prog)
            .arg("300"),
    );
    assert_eq!(p["instructions_in_runs"], p["instructions"]);
    // The events are the loads: as many as the load-value profile counted.
    let loads = &section(&p, "ranges-load-value")["json"]["n"];
    assert_eq!(&p["events"], loads);
    assert!(p["events"].as_u64().unwrap() < p["instructions"].as_u64().unwrap() / 2);
}

#[test]
fn a_block_buffer_keeps_the_code_profile_within_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "hot", HOT_LOOP);
    let p = json_of(
        coprof()
            .args([
                "profile",
                "--json",
                "--exact",
                "--block-buffer",
                "1024",
                "--",
            ])
            .arg(&prog)
            .arg("300"),
    );
    let pc = section(&p, "ranges-pc");
    assert!(
        pc["command"]
            .as_str()
            .unwrap()
            .contains("--block-buffer 1024"),
        "{}",
        pc["command"]
    );
    let r = &pc["json"];
    let b = &r["block_buffer"];
    assert_eq!(b["entries"], 64);
    assert!(
        b["hits"].as_u64().unwrap() > b["executions"].as_u64().unwrap() / 2,
        "{b}"
    );
    assert_eq!(r["n"], p["instructions"], "every instruction counted");
    let err = r["max_abs_error_over_n"].as_f64().unwrap();
    assert!(err <= r["epsilon"].as_f64().unwrap(), "{r}");
    // Only the code profile takes it.
    assert!(section(&p, "ranges-load-value")["json"]
        .get("block_buffer")
        .is_none());

    // A trace has no blocks: the buffer is unused, and the report says so.
    let trace = gen_trace(dir.path(), "loops", 50_000, 1);
    let text = stdout_of(
        coprof()
            .args(["ranges", "--block-buffer", "1024"])
            .arg(&trace),
    );
    assert!(
        text.contains("unused: the input gives no basic blocks"),
        "{text}"
    );

    // A profile without a code profile has nothing to give it to.
    let out = coprof()
        .args(["profile", "--block-buffer", "1024", "--report", "loops"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no report here is a code profile"));

    // Bad uses are named.
    for (args, says) in [
        (
            &["--stream", "load-value", "--block-buffer", "1024"][..],
            "needs --stream pc, not load-value",
        ),
        (&["--block-buffer", "8"][..], "--block-buffer 8"),
    ] {
        let out = coprof()
            .arg("ranges")
            .args(args)
            .arg(&trace)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn engine_threads_change_no_report() {
    // `--threads N` feeds the engines on N - 1 threads beside the one
    // that simulates (or reads the trace), which feeds them too when one
    // falls behind: every report, the exact answers and the counts of the
    // run are the same as on one thread, whatever N.
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "hot", HOT_LOOP);
    let trace = gen_trace(dir.path(), "mixed", 300_000, 5);
    let live: Vec<String> = ["--random-seed", "1", "--", prog.to_str().unwrap(), "300"]
        .map(String::from)
        .to_vec();
    let file = vec![trace.to_str().unwrap().to_string()];
    for input in [&live, &file] {
        let with = |threads: &str, command: &[&str]| {
            json_of(
                coprof()
                    .args(command)
                    .args(["--exact", "--json", "--threads", threads])
                    .args(input),
            )
        };
        let one = with("1", &["profile"]);
        assert_eq!(one["reports"].as_array().unwrap().len(), 5);
        for threads in ["2", "3", "5", "6", "64"] {
            assert_eq!(
                with(threads, &["profile"]),
                one,
                "--threads {threads}, {input:?}"
            );
        }
        // With a block buffer the value profiles are handed out too,
        // rather than fed on the simulator's thread: the same reports.
        let buffered = ["profile", "--block-buffer", "4096"];
        assert_eq!(with("2", &buffered), with("1", &buffered), "{input:?}");
        // A single report with one thread beside the source.
        let ranges = ["ranges", "--stream", "pc"];
        assert_eq!(with("2", &ranges), with("1", &ranges), "{input:?}");
        assert_eq!(with("2", &ranges), section(&one, "ranges-pc")["json"]);
    }
    // No thread at all is an error that names the option.
    coprof()
        .args(["profile", "--threads", "0"])
        .args(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--threads"));
}

#[test]
fn timing_says_what_each_report_costs_and_changes_no_report() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "hot", HOT_LOOP);
    let file = dir.path().join("timed.json");
    let profile = |extra: &[&str]| {
        json_of(
            coprof()
                .args(["profile", "--json", "--random-seed", "3"])
                .args(extra)
                .arg("--")
                .arg(&prog)
                .arg("20000"),
        )
    };
    let plain = profile(&[]);
    assert!(plain.get("timing").is_none(), "no timing unless asked");
    for threads in ["1", "3"] {
        let timed = profile(&[
            "--timing",
            "--threads",
            threads,
            "-o",
            file.to_str().unwrap(),
        ]);
        let t = &timed["timing"];
        let (wall, cpu) = (
            t["wall_seconds"].as_f64().unwrap(),
            t["cpu_seconds"].as_f64().unwrap(),
        );
        assert!(wall > 0.0 && cpu > 0.0, "{t}");
        let mut engines = 0.0;
        for (a, b) in plain["reports"]
            .as_array()
            .unwrap()
            .iter()
            .zip(timed["reports"].as_array().unwrap())
        {
            assert_eq!(a["json"], b["json"], "{} with --timing", a["name"]);
            let s = b["cpu_seconds"].as_f64().unwrap();
            assert!(s >= 0.0, "{b}");
            engines += s;
        }
        // The engines' calls are part of the process's CPU time, and on
        // one thread part of the wall time too.
        assert!(engines <= cpu + 1e-3, "engines {engines} s of {cpu} s");
        if threads == "1" {
            assert!(
                cpu <= wall * 1.05 + 0.01,
                "one thread: {cpu} s CPU in {wall} s"
            );
        }
        // Some ten million instructions through the code profile take time.
        assert!(
            section(&timed, "ranges-pc")["cpu_seconds"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        let text = stdout_of(coprof().arg("report").arg(&file));
        assert!(text.contains("== time: "), "{text}");
        assert!(text.contains("the simulator and delivery"), "{text}");
    }
}

/// A named pipe at `path`, and a thread that reads everything written to
/// it into memory.
fn pipe_reader(path: &std::path::Path) -> std::thread::JoinHandle<Vec<u8>> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let path = path.to_path_buf();
    std::thread::spawn(move || std::fs::read(path).unwrap())
}

/// `-o` and `--trace` naming something other than a regular file (a named
/// pipe here; `/dev/null` and a shell's `>(command)` alike) get the file
/// written into them: renaming the finished file into place would put a
/// plain file where the pipe or device was. A symbolic link stays a link.
#[test]
fn output_into_a_pipe_or_through_a_link_leaves_them_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gen_trace(dir.path(), "loops", 100_000, 3);
    let fifo = dir.path().join("profile.fifo");
    let reader = pipe_reader(&fifo);
    coprof()
        .arg("profile")
        .arg(&trace)
        .arg("-o")
        .arg(&fifo)
        .assert()
        .success();
    // (Checked first: a pipe renamed over would leave the reader waiting.)
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    let sent: Value = serde_json::from_slice(&reader.join().unwrap()).unwrap();
    assert_eq!(sent["format"], "coprof-profile");

    // A trace through a pipe reads back whole.
    let prog = compile(dir.path(), "tiny", "int main(void) { return 0; }\n");
    let fifo = dir.path().join("trace.fifo");
    let reader = pipe_reader(&fifo);
    traced_run(&fifo, &prog).assert().success();
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    let copy = dir.path().join("copy.cpt");
    std::fs::write(&copy, reader.join().unwrap()).unwrap();
    let info = stdout_of(coprof().arg("info").arg(&copy));
    assert!(info.contains("tiny"), "{info}");

    // Through a link: the file it names is written, the link kept.
    let target = dir.path().join("target.json");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    coprof()
        .arg("profile")
        .arg(&trace)
        .arg("-o")
        .arg(&link)
        .assert()
        .success();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    coprof().arg("report").arg(&target).assert().success();
    // Nothing left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A program that prints three lines, one note on standard error, and, with
/// no argument, first prints `before` and runs itself again with `execve`.
const PRINTS: &str = r#"
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc == 1) {
        printf("before\n");
        fflush(stdout);
        char *again[] = {argv[0], "again", 0};
        execv(argv[0], again);
        return 1;
    }
    for (int i = 0; i < 3; i++)
        printf("line %d\n", i);
    fprintf(stderr, "to stderr\n");
    return 0;
}
"#;

/// With `--keep-stdout` the program's standard output is coprof's, byte
/// for byte, through an `execve` too, and every report goes to standard
/// error; a trace file refuses the option by name.
#[test]
fn keep_stdout_leaves_the_program_its_output_and_reports_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "prints", PRINTS);
    let lines = "line 0\nline 1\nline 2\n";
    let file = dir.path().join("p.json");
    let out = common::succeeded(
        coprof()
            .args(["profile", "--keep-stdout", "-o"])
            .arg(&file)
            .arg("--")
            .arg(&prog)
            .arg("again"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(String::from_utf8_lossy(&out.stdout), lines);
    assert!(stderr.starts_with("to stderr\n"), "{stderr}");
    assert!(stderr.contains("coprof profile of"), "{stderr}");
    assert!(stderr.contains("profile saved to"), "{stderr}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["status"], 0);

    // A single report, as JSON on standard error after the program's note.
    let out = common::succeeded(
        coprof()
            .args(["loops", "--keep-stdout", "--json", "--"])
            .arg(&prog)
            .arg("again"),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), lines);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let json = stderr
        .strip_prefix("to stderr\n")
        .expect("the program's note first");
    let loops: Value = serde_json::from_str(json).expect("the report as JSON");
    assert!(loops["loops"].is_array(), "{loops}");

    // The program replaces itself: the one after the exec keeps stdout.
    let out = common::succeeded(
        coprof()
            .args(["profile", "--keep-stdout", "--follow-children", "-o"])
            .arg(&file)
            .arg("--")
            .arg(&prog),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("before\n{lines}")
    );
    assert!(stderr.contains("replaced itself"), "{stderr}");
    assert!(stderr.contains("coprof profile of"), "{stderr}");

    // Without it, as before: the program's output on standard error.
    let out = coprof()
        .args(["profile", "--"])
        .arg(&prog)
        .arg("again")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("coprof profile of"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(lines) && stderr.contains("to stderr\n"),
        "{stderr}"
    );

    let trace = gen_trace(dir.path(), "loops", 1000, 1);
    coprof()
        .args(["loops", "--keep-stdout"])
        .arg(&trace)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--keep-stdout applies to a program run",
        ));
}

/// Exits with the status its argument names, or, given `abort`, dies of
/// SIGABRT.
const EXITS_WITH: &str = r#"
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    volatile long s = 0;
    for (long i = 0; i < 10000; i++) s += i;
    if (argc > 1 && strcmp(argv[1], "abort") == 0) abort();
    return argc > 1 ? atoi(argv[1]) : 0;
}
"#;

/// A live run ends with its program's exit status once the report is
/// written, as `perf record` and valgrind do, so that a script sees the
/// program fail; a trace file's report ends with 0.
#[test]
fn a_live_run_exits_with_the_programs_status_after_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "exits_with", EXITS_WITH);
    let file = dir.path().join("p.json");
    for (arg, status) in [("0", 0), ("3", 3), ("abort", 134)] {
        let out = coprof()
            .args(["profile", "-o"])
            .arg(&file)
            .arg("--")
            .arg(&prog)
            .arg(arg)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(status), "{arg}: {out:?}");
        assert!(stdout.contains("profile saved to"), "{stdout}");
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(saved["status"], status);
        // The report printed again exits 0: nothing ran.
        coprof().arg("report").arg(&file).assert().success();
    }
    // A single report command, as JSON, the same.
    let out = coprof()
        .args(["loops", "--json", "--"])
        .arg(&prog)
        .arg("5")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    serde_json::from_slice::<Value>(&out.stdout).expect("the report, whole");
    // A trace's report: 0.
    let trace = gen_trace(dir.path(), "loops", 10_000, 1);
    coprof().arg("loops").arg(&trace).assert().success();
}

/// The notes a command said on standard error (`stderr`), in order.
fn notes_said(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("coprof: note: "))
        .map(String::from)
        .collect()
}

/// The notes a JSON report or profile holds; none without the key.
fn notes_held(json: &Value) -> Vec<String> {
    json["notes"].as_array().map_or(Vec::new(), |notes| {
        notes
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    })
}

/// The notes in a report's `--json` are those its run said on standard
/// error, whether they come from the program's run or from its symbols,
/// live and from a trace: a script reads what a user reads.
#[test]
fn the_notes_in_a_reports_json_are_those_it_said() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["-static", "-O1"];
    let prog = common::compile_with(dir.path(), "no_debug", EXITS_WITH, &flags);
    let trace = dir.path().join("t.cpt");
    traced_run(&trace, &prog).arg("3").output().unwrap();
    let (p, t) = (prog.to_str().unwrap(), trace.to_str().unwrap());
    let runs: [&[&str]; 3] = [
        &["loops", "--json", "--", p, "3"],
        &["loops", "--json", t],
        &["loops", "--json", "--binary", p, t],
    ];
    for (args, least) in runs.iter().zip([2, 1, 1]) {
        let out = coprof().args(*args).output().unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let said = notes_said(&out.stderr);
        assert_eq!(notes_held(&report), said, "{args:?}");
        assert!(said.len() >= least, "{args:?}: {said:?}");
    }
}

/// The notes a run gives on standard error are kept in its profile, so
/// that `coprof report` gives them again and a script reads them in the
/// JSON: a profile read later, without its run's terminal, would
/// otherwise not say that the program failed part way.
#[test]
fn a_profile_keeps_the_notes_its_run_gave() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "exits_with", EXITS_WITH);
    let file = dir.path().join("p.json");
    let profile = |status: &str| {
        let mut c = coprof();
        c.args(["profile", "-o"]).arg(&file).arg("--").arg(&prog);
        c.arg(status).output().unwrap()
    };
    let saved =
        || -> Value { serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap() };
    let loops = |status: &str| -> Value {
        let mut c = coprof();
        let out = c
            .args(["loops", "--json", "--"])
            .arg(&prog)
            .arg(status)
            .output();
        serde_json::from_slice(&out.unwrap().stdout).unwrap()
    };
    let said = "exits_with exited with status 3; the profile covers its run up to then";
    let out = profile("3");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    // Each note kept is one the run gave, in its order.
    let given = notes_said(&out.stderr);
    assert!(given.iter().any(|n| n.ends_with(said)), "{given:?}");
    assert_eq!(notes_held(&saved()), given);
    // `coprof report` gives them again, alone on standard error.
    let again = coprof().arg("report").arg(&file).output().unwrap();
    assert!(again.status.success(), "{again:?}");
    let lines = String::from_utf8_lossy(&again.stderr).lines().count();
    assert_eq!(
        (notes_said(&again.stderr), lines),
        (given.clone(), given.len())
    );
    let json = json_of(coprof().args(["report", "--json"]).arg(&file));
    assert_eq!(notes_held(&json), given);
    // A single report run live holds them in its JSON too.
    let report = loops("3");
    assert_eq!(notes_held(&report), given, "{report}");
    assert!(report["loops"].is_array(), "the report itself: {report}");

    // A run that gave no note keeps none: no empty list in the file.
    assert!(profile("0").status.success());
    assert!(saved().get("notes").is_none(), "{}", saved());
    assert!(loops("0").get("notes").is_none());
}

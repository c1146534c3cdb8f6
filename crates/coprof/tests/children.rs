//! `coprof profile --follow-children`: every child process of the
//! program gets a profile of its own (a forked child from the fork on, a
//! child that execs a RISC-V program of that program), the program's
//! output and every exit status are as without coprof watching, and the
//! parent's profile lists its children's files.

mod common;

use common::{coprof, stdout_of};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A parent whose children each spend their time in a loop of their own:
/// a forked child (`child_loop`, exit 5) that forks a grandchild
/// (`grandchild_loop`, exit 6); a child started with `posix_spawn` on the
/// same program (`spawned_loop`, exit 3), whose standard output is a pipe
/// the parent reads; and a forked child killed by SIGTERM. The parent's
/// own loop is `parent_loop`.
const PROGRAM: &str = r#"
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;

#define LOOP(name) \
    static __attribute__((noinline)) long name(long n) { \
        volatile long s = 0; \
        for (long i = 0; i < n; i++) s += i; \
        return s; \
    }
LOOP(parent_loop)
LOOP(child_loop)
LOOP(grandchild_loop)
LOOP(spawned_loop)

static void report(const char *who, int st) {
    if (WIFEXITED(st)) printf("%s: exited %d\n", who, WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) printf("%s: killed by %d\n", who, WTERMSIG(st));
}

int main(int argc, char **argv) {
    int st;
    if (argc > 1) {
        spawned_loop(atol(argv[1]));
        printf("spawned ran %s\n", argv[1]);
        return 3;
    }
    parent_loop(30000);
    pid_t child = fork();
    if (child == 0) {
        child_loop(50000);
        pid_t grandchild = fork();
        if (grandchild == 0) {
            grandchild_loop(20000);
            _exit(6);
        }
        waitpid(grandchild, &st, 0);
        report("grandchild", st);
        fflush(stdout);
        _exit(5);
    }
    waitpid(child, &st, 0);
    report("child", st);

    int out[2];
    if (pipe(out) != 0) return 1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    pid_t spawned;
    char *av[] = {argv[0], "40000", NULL};
    if (posix_spawn(&spawned, argv[0], &fa, NULL, av, environ) != 0) return 1;
    close(out[1]);
    char said[128] = {0};
    ssize_t got = read(out[0], said, sizeof said - 1);
    waitpid(spawned, &st, 0);
    printf("the spawned child said through the pipe: %.*s", (int)(got > 0 ? got : 0), said);
    report("spawned", st);

    pid_t doomed = fork();
    if (doomed == 0) {
        raise(SIGTERM);
        _exit(0);
    }
    waitpid(doomed, &st, 0);
    report("doomed", st);
    parent_loop(10000);
    return 0;
}
"#;

/// The program's output, whoever watches it.
const OUTPUT: &str = "grandchild: exited 6
child: exited 5
the spawned child said through the pipe: spawned ran 40000
spawned: exited 3
doomed: killed by 15
";

/// Builds [`PROGRAM`] statically, and also dynamically linked (the cross
/// compiler's default).
fn build(dir: &Path) -> [PathBuf; 2] {
    let fixed = common::compile(dir, "family", PROGRAM);
    let dynamic = dir.join("family-dyn");
    let st = std::process::Command::new("riscv64-linux-gnu-gcc")
        .args(["-O1", "-g", "-o"])
        .arg(&dynamic)
        .arg(dir.join("family.c"))
        .status()
        .expect("cross compiler runs");
    assert!(st.success(), "compiling family.c dynamically failed");
    [fixed, dynamic]
}

/// The function of a profile's most frequent loop, and its iterations.
fn top_loop(profile: &Value) -> (String, u64) {
    let loops = profile["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "loops")
        .expect("a loops report");
    let top = &loops["json"]["loops"][0];
    (
        top["function"].as_str().unwrap_or("").to_string(),
        top["iterations"].as_u64().unwrap(),
    )
}

/// `coprof profile OPTIONS -o FILE -- PROG`, ready to run.
fn profile(options: &[&str], file: &Path, prog: &Path) -> assert_cmd::Command {
    let mut cmd = coprof();
    cmd.arg("profile")
        .args(options)
        .arg("-o")
        .arg(file)
        .arg("--")
        .arg(prog);
    cmd
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_child_process_gets_its_own_profile() {
    let dir = tempfile::tempdir().unwrap();
    for prog in build(dir.path()) {
        let name = prog.file_name().unwrap().to_string_lossy().into_owned();
        let out_dir = dir.path().join(format!("{name}-profiles"));
        std::fs::create_dir(&out_dir).unwrap();
        let main_file = out_dir.join("family.json");
        // The program's output goes to standard error under `coprof
        // profile`, the summary to standard output.
        let run = common::succeeded(&mut profile(
            &["--follow-children", "--exact", "--timing"],
            &main_file,
            &prog,
        ));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(stderr, OUTPUT, "{name}: the program's output");
        let summary = String::from_utf8(run.stdout).unwrap();
        assert!(
            summary.contains("== child processes (--follow-children): 4 profiled"),
            "{name}: {summary}"
        );

        let main = read(&main_file);
        assert_eq!(main["status"], 0);
        assert!(
            main.get("process").is_none(),
            "{name}: the parent is no child"
        );
        assert_eq!(top_loop(&main), ("parent_loop".to_string(), 39_998));
        let children = main["children"].as_array().expect("children listed");
        assert_eq!(children.len(), 4, "{name}: {children:?}");

        // Each child by the loop it ran: its status, its file, its parent.
        let mut by_loop = std::collections::BTreeMap::new();
        // The parent no child is: the children are listed as they ended,
        // so the first may be the grandchild, whose parent is the child.
        let main_pid = {
            let pids: Vec<u64> = children
                .iter()
                .map(|c| c["pid"].as_u64().unwrap())
                .collect();
            let mut parents: Vec<u64> = children
                .iter()
                .map(|c| {
                    let p = read(Path::new(c["file"].as_str().unwrap()));
                    p["process"]["parent"].as_u64().unwrap()
                })
                .filter(|p| !pids.contains(p))
                .collect();
            parents.dedup();
            assert_eq!(parents.len(), 1, "{name}: one parent outside the children");
            parents[0]
        };
        for c in children {
            let file = PathBuf::from(c["file"].as_str().unwrap());
            let pid = c["pid"].as_u64().unwrap();
            assert_eq!(
                file,
                out_dir.join(format!("family.{pid}.json")),
                "{name}: a child's file is named by its PID"
            );
            let p = read(&file);
            assert_eq!(p["process"]["pid"].as_u64(), Some(pid));
            assert_eq!(p["status"], c["status"]);
            assert_eq!(p["instructions"], c["instructions"]);
            let (function, iterations) = if p["instructions"].as_u64().unwrap() < 1000 {
                // The doomed child: a few instructions to its signal.
                ("raise".to_string(), 0)
            } else {
                top_loop(&p)
            };
            by_loop.insert(
                function.clone(),
                (
                    iterations,
                    p["status"].as_i64().unwrap(),
                    pid,
                    p["process"]["parent"].as_u64().unwrap(),
                    p["args"].clone(),
                ),
            );
            // Exact answers came along (the parent's --exact), and each
            // child's own times (--timing): every report's engines took
            // some CPU time, all within the child's own pass.
            assert_eq!(p["exact"], true, "{name}: {function}");
            let pass = p["timing"]["cpu_seconds"]
                .as_f64()
                .expect("the child's pass timed");
            for r in p["reports"].as_array().unwrap() {
                let cpu = r["cpu_seconds"].as_f64().expect("each report timed");
                assert!(
                    cpu > 0.0 && cpu <= pass,
                    "{name}: {function}: {cpu} of {pass}"
                );
            }
        }
        let child = &by_loop["child_loop"];
        let grandchild = &by_loop["grandchild_loop"];
        let spawned = &by_loop["spawned_loop"];
        let doomed = &by_loop["raise"];
        assert_eq!((child.0, child.1, child.3), (49_999, 5, main_pid));
        assert_eq!(
            (grandchild.0, grandchild.1, grandchild.3),
            (19_999, 6, child.2),
            "{name}: the grandchild's parent is the child"
        );
        assert_eq!((spawned.0, spawned.1, spawned.3), (39_999, 3, main_pid));
        assert_eq!(spawned.4, serde_json::json!(["40000"]), "{name}");
        assert_eq!((doomed.1, doomed.3), (128 + 15, main_pid));

        // `coprof report` reads a child's file like any profile.
        let text = stdout_of(
            coprof()
                .args(["report", "--only", "loops"])
                .arg(out_dir.join(format!("family.{}.json", spawned.2))),
        );
        assert!(
            text.contains(&format!("(child process {} of {main_pid})", spawned.2)),
            "{text}"
        );
        assert!(text.contains("spawned_loop (family.c:"), "{text}");
    }
}

#[test]
fn without_following_children_run_unobserved() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile(dir.path(), "family", PROGRAM);
    let out = dir.path().join("p.json");
    let run = common::succeeded(&mut profile(&[], &out, &prog));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.starts_with(OUTPUT),
        "the program's output is the same: {stderr}"
    );
    assert!(
        stderr.contains("started 3 child processes, which ran unobserved"),
        "{stderr}"
    );
    // Only the parent's file.
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".json"))
        .collect();
    assert_eq!(files, ["p.json"]);
    assert!(read(&out).get("children").is_none());
}

#[test]
fn a_pid_pattern_names_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile(dir.path(), "family", PROGRAM);
    let pattern = dir.path().join("run-%p.json");
    let summary = stdout_of(&mut profile(&["--follow-children"], &pattern, &prog));
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with("run-"))
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        5,
        "the parent's and four children's: {files:?}"
    );
    for f in &files {
        let pid = f
            .strip_prefix("run-")
            .and_then(|f| f.strip_suffix(".json"))
            .unwrap();
        assert!(pid.parse::<u32>().is_ok(), "{f}");
    }
    let saved = summary
        .lines()
        .find_map(|l| l.strip_prefix("profile saved to "))
        .expect("the parent's file named");
    assert!(files.iter().any(|f| saved.ends_with(f.as_str())), "{saved}");
}

#[test]
fn following_children_is_refused_where_it_cannot_work() {
    let dir = tempfile::tempdir().unwrap();
    let trace = common::gen_trace(dir.path(), "loops", 1000, 1);
    // No file for the children's profiles.
    coprof()
        .args(["profile", "--follow-children", "--", "/bin/true"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--output"));
    // A trace has no processes.
    coprof()
        .args(["profile", "--follow-children", "-o"])
        .arg(dir.path().join("p.json"))
        .arg(&trace)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--follow-children applies to a program run after `--`, not to the trace file",
        ));
    // %p in a directory would name directories that do not exist.
    coprof()
        .args(["profile", "--follow-children", "-o"])
        .arg(dir.path().join("d-%p/p.json"))
        .args(["--", "/bin/true"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "%p may stand only in the file's name",
        ));
    // A directory that does not exist is named before the run.
    coprof()
        .args(["profile", "-o"])
        .arg(dir.path().join("missing/p.json"))
        .args(["--", "/bin/true"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no directory"));
}

/// A program that replaces itself: the first image computes, then
/// `execv`s the same program with an argument, whose second image runs
/// its own loop and forks a child.
const REPLACES_ITSELF: &str = r#"
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static __attribute__((noinline)) long first_loop(long n) {
    volatile long s = 0;
    for (long i = 0; i < n; i++) s += i;
    return s;
}
static __attribute__((noinline)) long second_loop(long n) {
    volatile long s = 0;
    for (long i = 0; i < n; i++) s += i;
    return s;
}
int main(int argc, char **argv) {
    if (argc == 1) {
        first_loop(30000);
        printf("first image\n");
        fflush(stdout);
        char *again[] = {argv[0], "again", NULL};
        execv(argv[0], again);
        return 1;
    }
    second_loop(25000);
    pid_t pid = fork();
    if (pid == 0) {
        second_loop(5000);
        _exit(4);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("second image, child exited %d\n", WEXITSTATUS(st));
    return 0;
}
"#;

#[test]
fn a_followed_program_that_replaces_itself_is_profiled_as_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile(dir.path(), "again", REPLACES_ITSELF);
    let file = dir.path().join("again.json");
    let run = common::succeeded(&mut profile(&["--follow-children"], &file, &prog));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.starts_with("first image\nsecond image, child exited 4\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the program replaced itself with"),
        "{stderr}"
    );
    let replaced = read(&file)["notes"].to_string();
    assert!(
        replaced.contains("the program replaced itself with"),
        "{replaced}"
    );
    // The summary still on standard output, of the second image.
    let summary = String::from_utf8(run.stdout).unwrap();
    assert!(
        summary.starts_with(&format!("coprof profile of {} again\n", prog.display())),
        "{summary}"
    );
    assert!(summary.contains("profile saved to"), "{summary}");
    let p = read(&file);
    assert_eq!(p["args"], serde_json::json!(["again"]));
    assert_eq!(top_loop(&p), ("second_loop".to_string(), 24_999));
    let children = p["children"].as_array().expect("the child listed");
    assert_eq!(children.len(), 1, "{children:?}");
    assert_eq!(children[0]["status"], 4);

    // Not followed, the exec stops the run and names the option.
    coprof()
        .args(["profile", "--"])
        .arg(&prog)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--follow-children"));
}

/// A parent whose forked child replaces itself twice: with the same
/// program and `one`, which replaces itself with `two`, whose loop is
/// `third_loop` and which exits 7 (a shell script that `exec`s its last
/// command, run by a shell's child, does the same).
const CHILD_REPLACES_ITSELF_TWICE: &str = r#"
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static __attribute__((noinline)) long third_loop(long n) {
    volatile long s = 0;
    for (long i = 0; i < n; i++) s += i;
    return s;
}
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "one") == 0) {
        char *next[] = {argv[0], "two", NULL};
        execv(argv[0], next);
        return 1;
    }
    if (argc > 1) {
        third_loop(20000);
        return 7;
    }
    pid_t pid = fork();
    if (pid == 0) {
        char *next[] = {argv[0], "one", NULL};
        execv(argv[0], next);
        _exit(1);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child exited %d\n", WEXITSTATUS(st));
    return 0;
}
"#;

#[test]
fn a_followed_child_that_replaces_itself_again_is_profiled_as_its_last_program() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile(dir.path(), "twice", CHILD_REPLACES_ITSELF_TWICE);
    let file = dir.path().join("twice.json");
    let run = common::succeeded(&mut profile(&["--follow-children"], &file, &prog));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.starts_with("child exited 7\n"), "{stderr}");
    let children = read(&file)["children"]
        .as_array()
        .expect("the child listed")
        .clone();
    assert_eq!(children.len(), 1, "{children:?}");
    assert_eq!(children[0]["status"], 7);
    let child = read(Path::new(children[0]["file"].as_str().unwrap()));
    assert_eq!(child["args"], serde_json::json!(["two"]));
    assert_eq!(top_loop(&child), ("third_loop".to_string(), 19_999));
    // The child's note on its status is kept in its profile, not printed
    // among its program's output (the parent's stderr here).
    let said = "exited with status 7; the profile covers its run up to then";
    assert!(!stderr.contains(said), "{stderr}");
    let notes = child["notes"].as_array().expect("the child's notes");
    assert!(
        notes.iter().any(|n| n.as_str().unwrap().ends_with(said)),
        "{notes:?}"
    );
}

/// A followed child's notes about its program's symbols go into its own
/// profile, as its parent's into the parent's: built without `-g`, each
/// is named from the ELF symbol table, and says so.
#[test]
fn a_followed_childs_notes_on_its_symbols_are_in_its_profile() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["-static", "-O1"];
    let prog = common::compile_with(dir.path(), "twice", CHILD_REPLACES_ITSELF_TWICE, &flags);
    let file = dir.path().join("twice.json");
    let run = common::succeeded(&mut profile(&["--follow-children"], &file, &prog));
    let stderr = String::from_utf8_lossy(&run.stderr);
    let said = "no debug info for this code: function names and offsets from the ELF symbol table";
    // Said once, for the parent: the child's is not printed.
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
    let parent = read(&file);
    let child_file = parent["children"][0]["file"]
        .as_str()
        .expect("the child listed");
    let child = read(Path::new(child_file));
    for (whose, p) in [("parent", &parent), ("child", &child)] {
        let notes = p["notes"].to_string();
        assert!(notes.contains(said), "{whose}: {notes}");
    }
    assert_eq!(top_loop(&child).0, "third_loop");
}

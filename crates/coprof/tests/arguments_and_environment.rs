//! What a program starts with. Its arguments, byte for byte, UTF-8 or
//! not, also when a program `execve`s another. Its environment: coprof's
//! own, changed by `--clear-env`, `--unset NAME` and `--env NAME=VALUE`,
//! for `coprof run` and every report command; and runs that repeat
//! exactly whatever the shell's variables, once the environment is fixed.

mod common;

use common::{coprof, json_of};
use serde_json::Value;
use std::path::Path;

/// Prints its environment, one variable a line.
const PRINTENV: &str = r#"
#include <stdio.h>
extern char **environ;
int main(void) {
    for (char **e = environ; *e; e++) puts(*e);
    return 0;
}
"#;

/// Loads, many times, a pointer to one of its stack variables: the load
/// values follow wherever the stack lies.
const STACK_LOADS: &str = r#"
#include <stdio.h>
int main(void) {
    int here = 0;
    int *volatile where = &here;
    unsigned long sum = 0;
    for (int i = 0; i < 20000; i++) sum += (unsigned long)where;
    printf("%lu\n", sum);
    return 0;
}
"#;

/// Prints its arguments, one a line.
const ECHOARGS: &str = r#"
#include <stdio.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) printf("%s\n", argv[i]);
    return 0;
}
"#;

/// Replaces itself with the program its first argument names, giving it
/// an argument in Latin-1 and no environment.
const EXEC_LATIN1: &str = r#"
#include <unistd.h>
int main(int argc, char **argv) {
    char *args[] = {argv[1], "caf\xe9", 0};
    char *env[] = {0};
    execve(argv[1], args, env);
    return 127;
}
"#;

#[test]
fn arguments_that_are_not_utf8_reach_the_program_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let echo = common::compile(dir.path(), "echoargs", ECHOARGS);
    let exec = common::compile(dir.path(), "exec_latin1", EXEC_LATIN1);
    let latin1 = std::ffi::OsStr::from_bytes(b"caf\xe9");
    let out = common::succeeded(
        coprof()
            .args(["run", "--"])
            .arg(&echo)
            .arg(latin1)
            .arg("ok"),
    );
    assert_eq!(out.stdout, b"caf\xe9\nok\n");
    // The program it `execve`s runs in a simulator of its own, started
    // by a command line that carries the arguments as they are.
    let out = common::succeeded(coprof().args(["run", "--"]).arg(&exec).arg(&echo));
    assert_eq!(out.stdout, b"caf\xe9\n");
    // So does the program it becomes under a profile, which goes on
    // profiling that one: the program gets the bytes, the profile names
    // them as text.
    let saved = dir.path().join("p.json");
    let out = common::succeeded(
        coprof()
            .args(["profile", "--follow-children", "-o"])
            .arg(&saved)
            .arg("--")
            .arg(&exec)
            .arg(&echo),
    );
    assert!(
        out.stderr.starts_with(b"caf\xe9\n"),
        "the program's output, on standard error: {out:?}"
    );
    let p: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(p["input"], echo.to_str().unwrap());
    assert_eq!(p["args"], serde_json::json!(["caf\u{fffd}"]));
    assert_eq!(p["status"], 0);
}

/// The lines `coprof run ARGS -- PROG` prints, run with only the host
/// variables `vars`.
fn printed(prog: &Path, args: &[&str], vars: &[(&str, &str)]) -> Vec<String> {
    common::stdout_of(
        coprof()
            .env_clear()
            .envs(vars.iter().copied())
            .arg("run")
            .args(args)
            .arg("--")
            .arg(prog),
    )
    .lines()
    .map(String::from)
    .collect()
}

#[test]
fn the_program_gets_coprofs_environment_as_the_options_change_it() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile(dir.path(), "printenv", PRINTENV);
    let host = [
        ("KEEP", "yes"),
        ("HOME", "/home/u"),
        ("_", "/usr/bin/coprof"),
    ];
    // (The host's variables come in the order `Command` sets them:
    // sorted by name.)
    assert_eq!(
        printed(&prog, &[], &host),
        ["HOME=/home/u", "KEEP=yes", "_=/usr/bin/coprof"]
    );
    assert_eq!(
        printed(
            &prog,
            &["--unset", "_", "--env", "HOME=/tmp", "--env", "NEW=a=b"],
            &host
        ),
        ["HOME=/tmp", "KEEP=yes", "NEW=a=b"]
    );
    assert_eq!(
        printed(&prog, &["--clear-env", "--env", "TZ=UTC"], &host),
        ["TZ=UTC"]
    );
    assert!(printed(&prog, &["--clear-env"], &host).is_empty());
}

#[test]
fn variables_that_are_not_utf8_reach_the_program_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile(dir.path(), "printenv", PRINTENV);
    let out = common::succeeded(
        coprof()
            .env_clear()
            .env("RAW", std::ffi::OsStr::from_bytes(b"caf\xe9"))
            .args(["run", "--env", "B=\u{e9}", "--"])
            .arg(&prog),
    );
    assert_eq!(out.stdout, b"RAW=caf\xe9\nB=\xc3\xa9\n");
}

#[test]
fn with_a_fixed_environment_a_report_repeats_whatever_the_shell_set() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile(dir.path(), "stack_loads", STACK_LOADS);
    // The same profile, run by shells that name coprof by paths of
    // different lengths in `_`, as bash does for each command it runs.
    let profile = |underscore: &str, fixed: &[&str]| -> Value {
        json_of(
            coprof()
                .env_clear()
                .env("_", underscore)
                .args(["ranges", "--stream", "load-value", "--json"])
                .args(["--random-seed", "1"])
                .args(fixed)
                .arg("--")
                .arg(&prog),
        )
    };
    let (a, b) = (
        profile("/usr/bin/coprof", &[]),
        profile("/home/someone/build/target/release/coprof", &[]),
    );
    assert_ne!(
        a, b,
        "the stack moves with the environment, and the pointers loaded with it"
    );
    for fixed in [&["--clear-env"][..], &["--unset", "_"][..]] {
        assert_eq!(
            profile("/usr/bin/coprof", fixed),
            profile("/home/someone/build/target/release/coprof", fixed),
            "{fixed:?}"
        );
    }
}

#[test]
fn a_profile_lists_the_environments_options_to_run_each_report_again() {
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile(dir.path(), "stack_loads", STACK_LOADS);
    let p = json_of(
        coprof()
            .env("_", "/usr/bin/coprof")
            .args(["profile", "--json", "--random-seed", "1"])
            .args(["--clear-env", "--env", "A=1", "--"])
            .arg(&prog),
    );
    let reports = p["reports"].as_array().expect("reports");
    assert_eq!(reports.len(), 5);
    for r in reports {
        let command = r["command"].as_str().unwrap();
        assert!(command.contains("--clear-env --env A=1 -- "), "{command}");
    }
    // The value profile's command, run again by a shell whose `_` is
    // longer, prints the same report.
    let r = reports
        .iter()
        .find(|r| r["name"] == "ranges-load-value")
        .unwrap();
    let words: Vec<&str> = r["command"].as_str().unwrap().split(' ').collect();
    assert_eq!(words[0], "coprof");
    let again = json_of(
        coprof()
            .env("_", "/home/someone/build/target/release/coprof")
            .arg(words[1])
            .arg("--json")
            .args(&words[2..]),
    );
    assert_eq!(r["json"], again);
}

#[test]
fn bad_environment_options_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let trace = common::gen_trace(dir.path(), "mixed", 1000, 1);
    for (args, says) in [
        (
            &["run", "--env", "NOEQUALS", "--", "/bin/true"][..],
            "'--env <NAME=VALUE>'",
        ),
        (
            &["run", "--env", "=1", "--", "/bin/true"][..],
            "'--env <NAME=VALUE>'",
        ),
        (
            &["loops", "--unset", "A=B", "--", "/bin/true"][..],
            "'--unset <NAME>'",
        ),
    ] {
        let out = coprof().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    for option in [&["--clear-env"][..], &["--env", "A=1"], &["--unset", "A"]] {
        let out = coprof()
            .arg("ranges")
            .args(option)
            .arg(&trace)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{option:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "{} applies to a program run after `--`",
                option[0]
            )),
            "{option:?}: {err}"
        );
    }
}

//! A program started by coprof inherits the signals coprof was started
//! ignoring, as one started by `execve` does under Linux: `nohup coprof
//! profile … &` survives the hangup, as the program alone would.

mod common;

use common::compile;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Says whether SIGHUP is ignored, then sends itself one.
const PROGRAM: &str = r#"
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
    struct sigaction sa;
    sigaction(SIGHUP, NULL, &sa);
    printf("SIGHUP ignored at start: %d\n", sa.sa_handler == SIG_IGN);
    fflush(stdout);
    kill(getpid(), SIGHUP);
    printf("survived SIGHUP\n");
    return 0;
}
"#;

/// `coprof ARGS -- prog`, started with SIGHUP ignored when `ignored`.
fn run(args: &[&str], prog: &std::path::Path, ignored: bool) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coprof"));
    cmd.args(args).arg("--").arg(prog);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let action = if ignored {
                libc::SIG_IGN
            } else {
                libc::SIG_DFL
            };
            libc::signal(libc::SIGHUP, action);
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn a_signal_coprof_was_started_ignoring_is_ignored_by_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "hup", PROGRAM);
    for args in [&["run"][..], &["profile", "--report", "loops"][..]] {
        let out = run(args, &prog, true);
        let said = String::from_utf8_lossy(if args[0] == "run" {
            &out.stdout
        } else {
            &out.stderr
        })
        .into_owned();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {said}");
        assert!(
            said.contains("SIGHUP ignored at start: 1\nsurvived SIGHUP\n"),
            "{args:?}: {said}"
        );
    }
    // Not ignored: its default action kills, as under Linux.
    let out = run(&["run"], &prog, false);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "SIGHUP ignored at start: 0\n"
    );
    assert_eq!(out.status.code(), Some(128 + libc::SIGHUP));
}

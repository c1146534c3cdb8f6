//! A program started by coprof inherits the signals coprof was started
//! ignoring and blocking, as one started by `execve` does under Linux:
//! `nohup coprof profile … &` survives the hangup, as the program alone
//! would, and a signal its parent left blocked waits until it unblocks it;
//! and a signal pending at an `execve` is still pending in the new program.

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

/// `coprof ARGS -- prog PROG_ARGS`, with `start` called in the child
/// between fork and exec, to set up what coprof starts with.
fn started(
    args: &[&str],
    prog: &std::path::Path,
    prog_args: &[&str],
    start: impl Fn() + Send + Sync + 'static,
) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coprof"));
    cmd.args(args).arg("--").arg(prog).args(prog_args);
    // SAFETY: `start` makes only async-signal-safe calls.
    unsafe {
        cmd.pre_exec(move || {
            start();
            Ok(())
        });
    }
    cmd
}

/// What the program said under `coprof ARGS`: `run` passes its standard
/// output through, `profile` sends it to standard error.
fn said(args: &[&str], out: &std::process::Output) -> String {
    String::from_utf8_lossy(if args[0] == "run" {
        &out.stdout
    } else {
        &out.stderr
    })
    .into_owned()
}

/// `coprof ARGS -- prog`, started with SIGHUP ignored when `ignored`.
fn run(args: &[&str], prog: &std::path::Path, ignored: bool) -> std::process::Output {
    let action = if ignored {
        libc::SIG_IGN
    } else {
        libc::SIG_DFL
    };
    // SAFETY (in the child): signal is async-signal-safe.
    started(args, prog, &[], move || unsafe {
        libc::signal(libc::SIGHUP, action);
    })
    .output()
    .unwrap()
}

#[test]
fn a_signal_coprof_was_started_ignoring_is_ignored_by_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "hup", PROGRAM);
    for args in [&["run"][..], &["profile", "--report", "loops"][..]] {
        let out = run(args, &prog, true);
        let said = said(args, &out);
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

/// Says whether SIGPIPE is ignored, then writes into a pipe whose reader
/// has gone: EPIPE if so, else the signal's default, death.
const PIPE: &str = r#"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    struct sigaction sa;
    sigaction(SIGPIPE, NULL, &sa);
    printf("SIGPIPE ignored at start: %d\n", sa.sa_handler == SIG_IGN);
    fflush(stdout);
    int p[2];
    pipe(p);
    close(p[0]);
    long n = write(p[1], "x", 1);
    printf("write %ld: %s\n", n, n < 0 ? strerror(errno) : "written");
    return 0;
}
"#;

#[test]
fn sigpipe_ignored_when_coprof_starts_is_ignored_by_the_program() {
    // Rust's runtime ignores SIGPIPE before `main`, whatever coprof was
    // started with: what it was is read before, and the program, in the
    // simulator or sampled natively, starts as it would alone (a shell's
    // `trap '' PIPE`, Python's `os.system`).
    let dir = tempfile::tempdir().unwrap();
    let rv = compile(dir.path(), "pipe", PIPE);
    let x86 = common::host_compile(dir.path(), "pipe-x86", PIPE, &["-O1", "-static"]);
    let trace = dir.path().join("p.cpt");
    let trace = trace.to_str().unwrap();
    let cases: [(&[&str], &std::path::Path); 2] =
        [(&["run"], &rv), (&["record", "-o", trace], &x86)];
    for (args, prog) in cases {
        for ignored in [true, false] {
            let action = match ignored {
                true => libc::SIG_IGN,
                false => libc::SIG_DFL,
            };
            // SAFETY (in the child): signal is async-signal-safe.
            let out = started(args, prog, &[], move || unsafe {
                libc::signal(libc::SIGPIPE, action);
            })
            .output()
            .unwrap();
            let said = String::from_utf8_lossy(&out.stdout);
            let err = String::from_utf8_lossy(&out.stderr);
            let expected = match ignored {
                true => "SIGPIPE ignored at start: 1\nwrite -1: Broken pipe\n",
                false => "SIGPIPE ignored at start: 0\n",
            };
            assert_eq!(said, expected, "{args:?} {ignored}: {err}");
            let status = if ignored { 0 } else { 128 + libc::SIGPIPE };
            assert_eq!(out.status.code(), Some(status), "{args:?} {ignored}: {err}");
            // A death by SIGPIPE goes unannounced, as shells leave it.
            assert!(!err.contains("killed"), "{args:?} {ignored}: {err}");
        }
    }
}

/// Says whether SIGUSR1 and SIGUSR2 are blocked, sends itself SIGUSR1
/// (which waits while blocked), then unblocks it and says whether its
/// handler ran. With `again`, first `execve`s itself with SIGUSR2
/// blocked, and without SIGUSR1 blocked, to check the mask crosses. With
/// `wait`, unblocks SIGUSR1 and waits (at most 5 s) for one from outside.
const BLOCKED: &str = r#"
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static volatile sig_atomic_t handled;
static void on_usr1(int sig) { (void)sig; handled = 1; }
int main(int argc, char **argv) {
    sigset_t now, pending;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("blocked at start: USR1 %d USR2 %d\n", sigismember(&now, SIGUSR1),
           sigismember(&now, SIGUSR2));
    fflush(stdout);
    signal(SIGUSR1, on_usr1);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    if (argc > 1 && argv[1][0] == 'w') {
        sigprocmask(SIG_UNBLOCK, &usr1, NULL);
        printf("ready\n");
        fflush(stdout);
        for (int i = 0; i < 500 && !handled; i++)
            usleep(10000);
        printf("handled from outside: %d\n", (int)handled);
        return 0;
    }
    if (argc > 1) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR2);
        sigprocmask(SIG_SETMASK, &set, NULL);
        char *again[] = {argv[0], NULL};
        execv(argv[0], again);
        return 3;
    }
    kill(getpid(), SIGUSR1);
    sigpending(&pending);
    printf("pending while blocked: %d, handled: %d\n", sigismember(&pending, SIGUSR1),
           (int)handled);
    sigprocmask(SIG_UNBLOCK, &usr1, NULL);
    printf("handled after unblocking: %d\n", (int)handled);
    return 0;
}
"#;

/// `coprof ARGS -- prog PROG_ARGS`, started with SIGUSR1 blocked when
/// `blocked`.
fn run_blocked(
    args: &[&str],
    prog: &std::path::Path,
    prog_args: &[&str],
    blocked: bool,
) -> std::process::Output {
    blocked_command(args, prog, prog_args, blocked)
        .output()
        .unwrap()
}

/// The command [`run_blocked`] runs.
fn blocked_command(
    args: &[&str],
    prog: &std::path::Path,
    prog_args: &[&str],
    blocked: bool,
) -> Command {
    // SAFETY (in the child): sigset calls and sigprocmask are
    // async-signal-safe.
    started(args, prog, prog_args, move || unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        if blocked {
            libc::sigaddset(&mut set, libc::SIGUSR1);
        }
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    })
}

#[test]
fn a_signal_coprof_was_started_blocking_is_blocked_for_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "blocked", BLOCKED);
    for args in [&["run"][..], &["profile", "--report", "loops"][..]] {
        let out = run_blocked(args, &prog, &[], true);
        let said = said(args, &out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {said}");
        assert!(
            said.contains(
                "blocked at start: USR1 1 USR2 0\n\
                 pending while blocked: 1, handled: 0\n\
                 handled after unblocking: 1\n"
            ),
            "{args:?}: {said}"
        );
    }
    // Not blocked: the handler runs at the kill, as under Linux.
    let out = run_blocked(&["run"], &prog, &[], false);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "blocked at start: USR1 0 USR2 0\n\
         pending while blocked: 0, handled: 1\n\
         handled after unblocking: 1\n"
    );
    // The program's own mask crosses its execve into a new simulator.
    let out = run_blocked(&["run"], &prog, &["again"], true);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "blocked at start: USR1 1 USR2 0\n\
         blocked at start: USR1 0 USR2 1\n\
         pending while blocked: 0, handled: 1\n\
         handled after unblocking: 1\n"
    );
}

#[test]
fn a_signal_from_outside_reaches_a_program_that_unblocks_what_coprof_was_started_blocking() {
    use std::io::{BufRead, BufReader, Read};
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "blocked", BLOCKED);
    let mut child = blocked_command(&["run"], &prog, &["wait"], true)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut said = String::new();
    while !said.ends_with("ready\n") {
        assert!(out.read_line(&mut said).unwrap() > 0, "ended early: {said}");
    }
    // SAFETY: plain call on the child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
    out.read_to_string(&mut said).unwrap();
    assert!(child.wait().unwrap().success(), "{said}");
    assert_eq!(
        said,
        "blocked at start: USR1 1 USR2 0\nready\nhandled from outside: 1\n"
    );
}

/// Blocks SIGUSR1 and SIGRTMIN, queues one SIGUSR1 (value 42) and two
/// SIGRTMINs (values 1, 2), and `execve`s itself with `after`; which
/// finds them pending, installs handlers, unblocks them, and says what
/// each handler was told, in the order they ran.
const PENDING: &str = r#"
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static int seen[8][3], n;
static void on(int sig, siginfo_t *info, void *ctx) {
    (void)ctx;
    if (n < 8) {
        seen[n][0] = sig == SIGUSR1 ? 1 : sig == SIGRTMIN ? 2 : 0;
        seen[n][1] = info->si_code;
        seen[n][2] = info->si_value.sival_int;
        n++;
    }
}
int main(int argc, char **argv) {
    sigset_t set, pending;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGRTMIN);
    if (argc > 1 && !strcmp(argv[1], "after")) {
        sigpending(&pending);
        printf("pending after exec: USR1 %d RTMIN %d\n", sigismember(&pending, SIGUSR1),
               sigismember(&pending, SIGRTMIN));
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGUSR1, &sa, NULL);
        sigaction(SIGRTMIN, &sa, NULL);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        for (int i = 0; i < n; i++)
            printf("handled: %s code %d value %d\n", seen[i][0] == 1 ? "USR1" : "RTMIN",
                   seen[i][1], seen[i][2]);
        return 0;
    }
    sigprocmask(SIG_BLOCK, &set, NULL);
    union sigval v;
    v.sival_int = 42;
    sigqueue(getpid(), SIGUSR1, v);
    v.sival_int = 1;
    sigqueue(getpid(), SIGRTMIN, v);
    v.sival_int = 2;
    sigqueue(getpid(), SIGRTMIN, v);
    char *again[] = {argv[0], "after", NULL};
    execv(argv[0], again);
    return 3;
}
"#;

#[test]
fn signals_pending_at_an_execve_stay_pending_for_the_new_program() {
    let dir = tempfile::tempdir().unwrap();
    // Linux's own answer: the program built for this machine, run alone.
    let native = common::host_compile(dir.path(), "pending-native", PENDING, &[]);
    let linux = common::succeeded(&mut Command::new(&native));
    let linux = String::from_utf8_lossy(&linux.stdout).into_owned();
    // All three kept with their values; unblocked at once, SIGUSR1 is
    // delivered first and SIGRTMIN's handler on top of it, so that runs
    // (twice) before SIGUSR1's.
    assert_eq!(
        linux,
        "pending after exec: USR1 1 RTMIN 1\n\
         handled: RTMIN code -1 value 1\n\
         handled: RTMIN code -1 value 2\n\
         handled: USR1 code -1 value 42\n"
    );
    // The RISC-V build in the simulator, which runs the new program in a
    // new simulator: the same.
    let prog = compile(dir.path(), "pending", PENDING);
    let out = common::succeeded(
        Command::new(env!("CARGO_BIN_EXE_coprof"))
            .args(["run", "--"])
            .arg(&prog),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), linux);
}

//! `coprof run`: programs run with their output and exit status passed
//! through, traces, statistics, and every kind of bad input (issue 3):
//! not ELF, another architecture, dynamically linked, illegal instruction,
//! memory fault, unknown system call. Test programs are compiled here with
//! the RISC-V cross compiler (scripts/install-deps.sh installs it).

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Once;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

static DEPS: Once = Once::new();

/// Compiles `src` with riscv64-linux-gnu-gcc (-static unless `dynamic`).
fn compile(dir: &Path, name: &str, src: &str, dynamic: bool) -> PathBuf {
    DEPS.call_once(|| {
        let st = std::process::Command::new(repo_root().join("scripts/install-deps.sh"))
            .stdout(std::process::Stdio::null())
            .status()
            .expect("scripts/install-deps.sh runs");
        assert!(st.success(), "installing the cross compiler failed");
    });
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    let mut cmd = std::process::Command::new("riscv64-linux-gnu-gcc");
    if !dynamic {
        cmd.arg("-static");
    }
    let st = cmd
        .arg("-O2")
        .arg("-o")
        .arg(&out)
        .arg(&c)
        .status()
        .expect("cross compiler runs");
    assert!(st.success(), "compiling {name}.c failed");
    out
}

fn coprof() -> Command {
    Command::cargo_bin("coprof").unwrap()
}

const HELLO: &str = r#"
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    char line[64] = "";
    if (fgets(line, sizeof line, stdin)) line[strcspn(line, "\n")] = 0;
    printf("hello %s, %d args, last %s\n", line, argc, argv[argc - 1]);
    fprintf(stderr, "to stderr\n");
    return 3;
}
"#;

#[test]
fn passes_stdio_arguments_and_exit_status_through() {
    let dir = tempfile::tempdir().unwrap();
    let hello = compile(dir.path(), "hello", HELLO, false);
    coprof()
        .arg("run")
        .arg("--")
        .arg(&hello)
        .args(["one", "--two"])
        .write_stdin("world\n")
        .assert()
        .code(3)
        .stdout("hello world, 3 args, last --two\n")
        .stderr("to stderr\n");
}

#[test]
fn stats_and_trace() {
    let dir = tempfile::tempdir().unwrap();
    let hello = compile(dir.path(), "hello", HELLO, false);
    let trace = dir.path().join("hello.cpt");
    coprof()
        .args(["run", "--stats", "--trace"])
        .arg(&trace)
        .args(["--classes", "load,cond-branch", "--"])
        .arg(&hello)
        .write_stdin("x\n")
        .assert()
        .code(3)
        .stderr(predicate::str::contains("instructions retired in"))
        .stderr(predicate::str::contains("MIPS"))
        .stderr(predicate::str::contains("events to"));
    coprof()
        .arg("info")
        .arg(&trace)
        .assert()
        .success()
        .stdout(predicate::str::contains("rv-sim"))
        .stdout(predicate::str::contains("load"))
        .stdout(predicate::str::contains("cond-branch"))
        .stdout(predicate::str::contains("store").not());
}

#[test]
fn refuses_files_it_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("script.sh");
    std::fs::write(&text, "#!/bin/sh\necho hi\n").unwrap();
    coprof()
        .args(["run", "--"])
        .arg(&text)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not an ELF file"))
        .stderr(predicate::str::contains("script.sh"));
    // The test binary's own executable: an x86-64 ELF.
    coprof()
        .args(["run", "--", env!("CARGO_BIN_EXE_coprof")])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("x86-64"))
        .stderr(predicate::str::contains("not RISC-V"));
    let dynamic = compile(dir.path(), "dyn", HELLO, true);
    coprof()
        .args(["run", "--"])
        .arg(&dynamic)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("dynamically linked"))
        .stderr(predicate::str::contains("-static"));
    coprof()
        .args(["run", "--"])
        .arg(dir.path().join("missing"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read"));
}

#[test]
fn illegal_instruction_and_fault_exit_like_signals() {
    let dir = tempfile::tempdir().unwrap();
    let ill = compile(
        dir.path(),
        "ill",
        "int main(void) { __asm__ volatile(\".word 0x0000000b\"); return 0; }",
        false,
    );
    coprof()
        .args(["run", "--"])
        .arg(&ill)
        .assert()
        .code(128 + 4)
        .stderr(predicate::str::contains("illegal instruction at pc 0x"))
        .stderr(predicate::str::contains("bytes 0b 00 00 00"))
        .stderr(predicate::str::contains("custom-0"));
    let segv = compile(
        dir.path(),
        "segv",
        "int main(void) { volatile int *p = (int *)0x1234; return *p; }",
        false,
    );
    coprof()
        .args(["run", "--"])
        .arg(&segv)
        .assert()
        .code(128 + 11)
        .stderr(predicate::str::contains("address 0x1234"))
        .stderr(predicate::str::contains("at pc 0x"))
        .stderr(predicate::str::contains("SIGSEGV"));
}

#[test]
fn unknown_system_calls_stop_or_return_enosys() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(
        dir.path(),
        "sys",
        r#"
#include <stdio.h>
#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(void) {
    long r = syscall(1234);
    printf("r=%ld errno=%d\n", r, errno);
    return 0;
}
"#,
        false,
    );
    let trace = dir.path().join("t.cpt");
    coprof()
        .args(["run", "--trace"])
        .arg(&trace)
        .arg("--")
        .arg(&prog)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown system call 1234"))
        .stderr(predicate::str::contains("at pc 0x"))
        .stderr(predicate::str::contains("--enosys"));
    assert!(!trace.exists(), "no partial trace is left behind");
    coprof()
        .args(["run", "--enosys", "--stats", "--"])
        .arg(&prog)
        .assert()
        .success()
        .stdout("r=-1 errno=38\n")
        .stderr(predicate::str::contains("system call 1234"));
}

#[test]
fn bad_options_are_refused() {
    coprof().args(["run"]).assert().code(2);
    coprof()
        .args(["run", "--classes", "load", "--", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--trace"));
    coprof()
        .args(["run", "--root", "/nonexistent-dir", "--", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a directory"));
}

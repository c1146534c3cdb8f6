//! `coprof run`: programs run with their output and exit status passed
//! through, traces, statistics, `--root` and `--max-instructions`, and
//! every kind of bad input (issue 3): not ELF, another architecture,
//! dynamically linked, illegal instruction, memory fault, unknown or
//! unimplemented system call (by number, name and PC), child processes
//! and the process creation that is refused, deadlocks. Test programs are
//! compiled here with the RISC-V cross compiler (scripts/install-deps.sh
//! installs it).

mod common;

use common::{coprof, repo_root, traced_run};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

/// Compiles `src` with riscv64-linux-gnu-gcc -O2 (-static unless
/// `dynamic`).
fn compile(dir: &Path, name: &str, src: &str, dynamic: bool) -> PathBuf {
    let flags: &[&str] = if dynamic {
        &["-O2"]
    } else {
        &["-static", "-O2"]
    };
    common::compile_with(dir, name, src, flags)
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

    // The same as one JSON object, the last line of standard error.
    let out = coprof()
        .args(["run", "--stats", "--json", "--trace"])
        .arg(&trace)
        .args(["--classes", "load", "--"])
        .arg(&hello)
        .write_stdin("x\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    let stats: serde_json::Value = serde_json::from_str(last).expect("JSON on the last line");
    assert_eq!(stats["status"], 3);
    assert_eq!(stats["signal"], serde_json::Value::Null);
    assert!(stats["instructions"].as_u64().unwrap() > 1000, "{stats}");
    assert!(stats["mips"].as_f64().unwrap() > 0.0, "{stats}");
    assert_eq!(stats["trace"]["file"], trace.display().to_string());
    let info = common::json_of(coprof().args(["info", "--json"]).arg(&trace));
    assert_eq!(stats["trace"]["events"], info["events"], "{info}");
    assert_eq!(stats["trace"]["bytes"], info["file_bytes"], "{info}");
    // --json alone is refused by name.
    coprof()
        .args(["run", "--json", "--"])
        .arg(&hello)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--stats"));
}

/// A program with a hot loop, for reports from its traces.
const LOOP: &str = r#"
#include <stdio.h>
int main(void) {
    unsigned s = 1;
    for (int i = 0; i < 300000; i++) s = s * 1103515245u + (unsigned)i;
    printf("%u\n", s);
    return 0;
}
"#;

#[test]
fn a_trace_streams_through_a_pipe() {
    // `--trace /dev/fd/3` in a pipeline: the trace goes into the pipe as
    // it is written, and `coprof loops -` reads it as it comes, with the
    // report the file gives.
    let dir = tempfile::tempdir().unwrap();
    let prog = common::compile_with(dir.path(), "loop", LOOP, &["-static", "-O1", "-g"]);
    let file = dir.path().join("loop.cpt");
    // Every run from the same shell, so that the program sees the same
    // environment (its start-up code's loops run over it).
    let bin = assert_cmd::cargo::cargo_bin("coprof");
    let shell = |script: &str| {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(&bin)
            .arg(&prog)
            .arg(&file)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {out:?}");
        out.stdout
    };
    shell("\"$0\" run --trace \"$2\" -- \"$1\" >/dev/null");
    let pipeline = |reader: &str| {
        let out = shell(&format!(
            "\"$0\" run --trace /dev/fd/3 -- \"$1\" 3>&1 >/dev/null | \"$0\" {reader}"
        ));
        String::from_utf8(out).unwrap()
    };
    let from_file = common::stdout_of(coprof().arg("loops").arg(&file));
    assert!(from_file.contains("main (loop.c:"), "{from_file}");
    assert_eq!(
        pipeline("loops -"),
        from_file.replace(file.to_str().unwrap(), "-")
    );
    // `--trace -`: the trace on standard output, and the program's own
    // output on standard error instead.
    assert_eq!(
        String::from_utf8(shell(
            "\"$0\" run --trace - -- \"$1\" 2>/dev/null | \"$0\" loops -"
        ))
        .unwrap(),
        from_file.replace(file.to_str().unwrap(), "-")
    );
    let plain = shell("\"$0\" run -- \"$1\"");
    assert!(!plain.is_empty());
    assert_eq!(
        shell("\"$0\" run --trace - -- \"$1\" 2>&1 >/dev/null"),
        plain
    );
    let info = pipeline("info -");
    assert!(info.contains(".cpt version 2, streamed"), "{info}");
    let file_info = common::stdout_of(coprof().arg("info").arg(&file));
    let events = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("events"))
            .map(str::to_owned)
    };
    assert_eq!(events(&info), events(&file_info));
    assert!(events(&info).is_some(), "{info}");

    // Kept in a file, a streamed trace reads as one; cut short, it is
    // named truncated.
    let kept = shell("\"$0\" run --trace /dev/fd/3 -- \"$1\" 3>&1 >/dev/null");
    let streamed = dir.path().join("streamed.cpt");
    std::fs::write(&streamed, &kept).unwrap();
    assert_eq!(
        common::stdout_of(coprof().arg("loops").arg(&streamed)),
        from_file.replace(file.to_str().unwrap(), streamed.to_str().unwrap())
    );
    coprof()
        .args(["loops", "-"])
        .write_stdin(kept[..kept.len() - 20].to_vec())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("standard input")
                .and(predicate::str::contains("truncated"))
                .and(predicate::str::contains("final metadata")),
        );
}

#[test]
fn a_trace_into_a_pipe_whose_reader_goes_ends_quietly_by_sigpipe() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    // `coprof run --trace - -- prog | head -c 100`: the trace's reader
    // goes after 100 bytes of a trace of tens of megabytes. coprof ends
    // as other tools in a pipeline do, by SIGPIPE, with no message, and
    // at once: the program, which prints a line at its end (to standard
    // error, since the trace has standard output), does not run on to it.
    // So with `coprof sample -o -` of a program run live.
    let dir = tempfile::tempdir().unwrap();
    let long = "#include <stdio.h>\n\
                int main(void) { volatile long s = 0; \
                for (long i = 0; i < 20000000; i++) s += i; \
                puts(\"the program's end\"); return 0; }\n";
    let prog = common::compile_with(dir.path(), "long", long, &["-static", "-O1"]);
    let commands: [&[&str]; 2] = [
        &["run", "--trace", "-", "--"],
        &["sample", "--sampler", "counter:3", "-o", "-", "--"],
    ];
    for args in commands {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("coprof"))
            .args(args)
            .arg(&prog)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 100];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        // The pipe's read end is closed here, as `head` closes it.
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGPIPE),
            "{args:?} {:?}: {stderr}",
            out.status
        );
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
        assert!(!stderr.contains("the program's end"), "{args:?}: {stderr}");
    }
    // A program asleep retires nothing, and so writes nothing into the
    // pipe: its end is found by waiting for the pipe's, not by a write
    // that fails. It would sleep 30 s.
    let asleep = "#include <unistd.h>\n\
                  int main(void) { sleep(30); return 0; }\n";
    let prog = common::compile_with(dir.path(), "asleep", asleep, &["-static", "-O1"]);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("coprof"))
        .args(["run", "--trace", "-", "--"])
        .arg(&prog)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::ended_by_sigpipe_when_unread(child, std::time::Duration::from_secs(15));
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
    // A trace given as the program is said to be one, with how it is read.
    let trace = dir.path().join("run.cpt");
    coprof()
        .args(["gen", "--workload", "loops", "--events", "1000", "-o"])
        .arg(&trace)
        .assert()
        .success();
    for command in ["run", "loops"] {
        coprof()
            .args([command, "--"])
            .arg(&trace)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("run.cpt: not an ELF file"))
            .stderr(predicate::str::contains("it is a coprof trace"))
            .stderr(predicate::str::contains("`coprof loops FILE`"));
    }
    // The test binary's own executable: an x86-64 ELF.
    coprof()
        .args(["run", "--", env!("CARGO_BIN_EXE_coprof")])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("x86-64"))
        .stderr(predicate::str::contains("not RISC-V"));
    // Dynamically linked, with a sysroot that lacks its loader.
    let dynamic = compile(dir.path(), "dyn", HELLO, true);
    coprof()
        .args(["run", "--sysroot"])
        .arg(dir.path())
        .arg("--")
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

/// A program that spawns itself as a child, and each runs `clz` (Zbb):
/// what the child and then the parent print.
const ZBB_SPAWNER: &str = r#"
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
extern char **environ;
static unsigned long clz(unsigned long a) {
    unsigned long r;
    __asm__(".option push\n.option arch, +zbb\nclz %0, %1\n.option pop" : "=r"(r) : "r"(a));
    return r;
}
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        printf("child clz %lu\n", clz(1));
        return 0;
    }
    pid_t pid;
    char *args[] = {argv[0], "child", 0};
    if (posix_spawn(&pid, argv[0], 0, 0, args, environ) != 0) return 1;
    int st;
    waitpid(pid, &st, 0);
    printf("child %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
           WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    fflush(stdout);
    printf("parent clz %lu\n", clz(1));
    return 0;
}
"#;

/// `--isa` makes the hart a plain RV64GC one, or leaves out some of Zba,
/// Zbb and Zbs: their instructions are then illegal, in the program and
/// in the children it runs, as on a board without them (and under
/// `qemu-riscv64 -cpu rv64,zbb=false`).
#[test]
fn an_isa_without_an_extension_makes_its_instructions_illegal() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "zbb", ZBB_SPAWNER, false);
    let all = "child clz 63\nchild exit 0\nparent clz 63\n";
    coprof()
        .args(["run", "--"])
        .arg(&prog)
        .assert()
        .success()
        .stdout(all);
    coprof()
        .args(["run", "--isa", "rv64gc_zicsr_zifencei_zbb", "--"])
        .arg(&prog)
        .assert()
        .success()
        .stdout(all);
    coprof()
        .args(["run", "--isa", "rv64gc_zba_zbs", "--"])
        .arg(&prog)
        .assert()
        .code(128 + 4)
        // The child's own simulator dies of the child's SIGILL, so that
        // the parent's wait sees it, as under Linux.
        .stdout("child signal 4\n")
        .stderr(predicate::str::contains("illegal instruction at pc 0x"))
        .stderr(predicate::str::contains("(clz "))
        .stderr(predicate::str::contains(
            "an instruction of Zbb, which this hart's instruction set leaves out (see --isa)",
        ));
    // The reports say how to run them again, on the same hart.
    let json = dir.path().join("p.json");
    coprof()
        .args(["profile", "--isa", "rv64gc", "-o"])
        .arg(&json)
        .arg("--")
        .arg(&prog)
        .assert()
        .code(128 + 4);
    let profile: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(profile["isa"], "rv64gc", "the profile names its hart");
    for r in profile["reports"].as_array().expect("reports") {
        let command = r["command"].as_str().unwrap();
        assert!(command.contains("--isa rv64gc --"), "{command}");
    }
    // A trace says which hart made it.
    let trace = dir.path().join("t.cpt");
    coprof()
        .args(["run", "--isa", "rv64gc_zbb", "--trace"])
        .arg(&trace)
        .arg("--")
        .arg(&prog)
        .assert()
        .success();
    let info = common::json_of(coprof().args(["info", "--json"]).arg(&trace));
    assert_eq!(info["meta"]["isa"], "rv64gc_zbb");
    coprof()
        .args(["run", "--isa", "rv64gcv", "--"])
        .arg(&prog)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "extension 'v' is not one the simulator has",
        ));
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
    traced_run(&trace, &prog)
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

/// A position-independent program linked by hand, without glibc and
/// without a PT_PHDR: an ET_DYN with PT_DYNAMIC that Linux and qemu-user
/// start at its entry point. It writes a line and exits with status 7.
const NOSTDLIB_PIE: &str = r#"
static long sys(long n, long a, long b, long c) {
    register long a7 asm("a7") = n;
    register long a0 asm("a0") = a;
    register long a1 asm("a1") = b;
    register long a2 asm("a2") = c;
    asm volatile("ecall" : "+r"(a0) : "r"(a7), "r"(a1), "r"(a2) : "memory");
    return a0;
}
void _start(void) {
    static const char msg[] = "pie ok\n";
    sys(64, 1, (long)msg, sizeof msg - 1);
    sys(93, 7, 0, 0);
    for (;;) {}
}
"#;

#[test]
fn runs_a_static_pie_without_program_headers_segment() {
    let dir = tempfile::tempdir().unwrap();
    // compile() installs the cross compiler; this build needs its own flags.
    compile(dir.path(), "warmup", HELLO, false);
    let c = dir.path().join("pie.c");
    std::fs::write(&c, NOSTDLIB_PIE).unwrap();
    let out = dir.path().join("pie");
    let st = std::process::Command::new("riscv64-linux-gnu-gcc")
        .args([
            "-O1",
            "-fPIE",
            "-pie",
            "-nostdlib",
            "-Wl,--no-dynamic-linker",
            "-o",
        ])
        .arg(&out)
        .arg(&c)
        .status()
        .unwrap();
    assert!(st.success());
    let elf = std::fs::read(&out).unwrap();
    assert_eq!(u16::from_le_bytes([elf[16], elf[17]]), 3, "ET_DYN");
    coprof()
        .arg("run")
        .arg("--")
        .arg(&out)
        .assert()
        .code(7)
        .stdout("pie ok\n");

    // A shared library (entry 0, no PT_PHDR) is still refused by name.
    let c = dir.path().join("lib.c");
    std::fs::write(&c, "int f(int x) { return x + 1; }\n").unwrap();
    let lib = dir.path().join("lib.so");
    let st = std::process::Command::new("riscv64-linux-gnu-gcc")
        .args(["-O1", "-fPIC", "-shared", "-o"])
        .arg(&lib)
        .arg(&c)
        .status()
        .unwrap();
    assert!(st.success());
    coprof()
        .arg("run")
        .arg("--")
        .arg(&lib)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("shared library"));
}

/// Prints the file named by argv[1], or perror's message and status 1.
const CAT: &str = r#"
#include <stdio.h>
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 1; }
    char line[128];
    while (fgets(line, sizeof line, f)) fputs(line, stdout);
    fclose(f);
    return 0;
}
"#;

#[test]
fn root_maps_absolute_paths_under_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let cat = compile(dir.path(), "cat", CAT, false);
    let root = dir.path().join("sysroot");
    let only_there = "/coprof-root-test/greeting.txt";
    assert!(
        !Path::new(only_there).exists(),
        "{only_there} exists on the host"
    );
    std::fs::create_dir_all(root.join("coprof-root-test")).unwrap();
    std::fs::write(
        root.join("coprof-root-test/greeting.txt"),
        "hello from the root\n",
    )
    .unwrap();
    coprof()
        .arg("run")
        .arg("--root")
        .arg(&root)
        .arg("--")
        .arg(&cat)
        .arg(only_there)
        .assert()
        .success()
        .stdout("hello from the root\n");
    // Without --root the same path is the host's, where it does not exist.
    coprof()
        .args(["run", "--"])
        .arg(&cat)
        .arg(only_there)
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!("{only_there}: No such file or directory\n"));
}

/// The number in "stopped after N instructions (--max-instructions)".
fn stopped_after(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.contains("(--max-instructions)"))
        .unwrap_or_else(|| panic!("no limit message in {stderr:?}"));
    let n = line
        .strip_prefix("coprof: stopped after ")
        .and_then(|r| r.strip_suffix(" instructions (--max-instructions)"))
        .unwrap_or_else(|| panic!("unexpected limit message {line:?}"));
    n.replace(',', "").parse().unwrap()
}

#[test]
fn max_instructions_stops_a_program_that_never_ends() {
    let dir = tempfile::tempdir().unwrap();
    let spin = compile(
        dir.path(),
        "spin",
        r#"
#include <unistd.h>
int main(void) {
    write(1, "started\n", 8);
    volatile unsigned long n = 0;
    for (;;) n++;
}
"#,
        false,
    );
    let limit = 300_000u64;
    let out = coprof()
        .args([
            "run",
            "--stats",
            "--max-instructions",
            &limit.to_string(),
            "--",
        ])
        .arg(&spin)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .code(0)
        .stdout("started\n")
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let n = stopped_after(&stderr);
    // Documented: it stops at the end of the basic block that reaches the
    // count (a block holds at most 64 instructions), and prints the exact
    // number, which --stats reports too.
    assert!(
        (limit..limit + 64).contains(&n),
        "stopped after {n} for a limit of {limit}"
    );
    let stats = stderr
        .lines()
        .find(|l| l.contains("instructions retired in"));
    let stats = stats.unwrap_or_else(|| panic!("no --stats line in {stderr:?}"));
    assert!(
        stats.starts_with(&format!("coprof: {} instructions retired", thousands(n))),
        "{stats}"
    );
    // A program that ends first is not affected.
    let hello = compile(dir.path(), "hello", HELLO, false);
    coprof()
        .args(["run", "--max-instructions", "100000000", "--"])
        .arg(&hello)
        .write_stdin("x\n")
        .assert()
        .code(3)
        .stdout(predicate::str::starts_with("hello x, 1 args, last "))
        .stderr("to stderr\n");
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The address range of `symbol` in `elf`, from the cross toolchain's nm.
fn symbol_range(elf: &Path, symbol: &str) -> std::ops::Range<u64> {
    find_symbol(elf, symbol).unwrap_or_else(|| panic!("{symbol} not in {}", elf.display()))
}

fn find_symbol(elf: &Path, symbol: &str) -> Option<std::ops::Range<u64>> {
    let out = std::process::Command::new("riscv64-linux-gnu-nm")
        .args(["-S", "--defined-only"])
        .arg(elf)
        .output()
        .expect("riscv64-linux-gnu-nm runs");
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 4 && f[3] == symbol {
            let start = u64::from_str_radix(f[0], 16).unwrap();
            let size = u64::from_str_radix(f[1], 16).unwrap();
            return Some(start..start + size);
        }
    }
    None
}

/// The PC in "... at pc 0x...".
fn pc_in(message: &str) -> u64 {
    let hex = message
        .split("at pc 0x")
        .nth(1)
        .unwrap_or_else(|| panic!("no pc in {message:?}"));
    let end = hex
        .find(|c: char| !c.is_ascii_hexdigit())
        .unwrap_or(hex.len());
    u64::from_str_radix(&hex[..end], 16).unwrap()
}

#[test]
fn a_known_but_unimplemented_system_call_is_named_with_its_number_and_pc() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(
        dir.path(),
        "mq_open",
        r#"
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
int main(void) {
    long r = (long)mq_open("/coprof-test", O_RDONLY);
    printf("r=%ld errno=%d\n", r, errno);
    return 0;
}
"#,
        false,
    );
    let out = coprof()
        .args(["run", "--"])
        .arg(&prog)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "unknown system call 180 (mq_open) at pc 0x",
        ))
        .stderr(predicate::str::contains("--enosys"))
        .get_output()
        .clone();
    // The PC is the ecall inside glibc's mq_open wrapper.
    let pc = pc_in(&String::from_utf8_lossy(&out.stderr));
    let wrapper = symbol_range(&prog, "mq_open");
    assert!(
        wrapper.contains(&pc),
        "pc {pc:#x} not in mq_open {wrapper:x?}"
    );
    // --enosys: the call returns -1 with errno ENOSYS (38) and the run goes on.
    coprof()
        .args(["run", "--enosys", "--stats", "--"])
        .arg(&prog)
        .assert()
        .success()
        .stdout("r=-1 errno=38\n")
        .stderr(predicate::str::contains(
            "system call 180 (mq_open) answered ENOSYS 1 times",
        ));
}

/// A program that runs itself as a child: with `posix_spawn` of
/// `/proc/self/exe`, and through a `#!` script whose interpreter it is.
const SPAWNER: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        const char *mark = getenv("SPAWN_MARK");
        printf("child argv0=%s argc=%d last=%s fd9=%s mark=%s\n", argv[0], argc,
               argv[argc - 1], fcntl(9, F_GETFD) >= 0 ? "open" : "closed",
               mark ? mark : "unset");
        return 9;
    }
    if (argc > 1 && strcmp(argv[1], "exec-self") == 0) {
        execl("/proc/self/exe", "again", "child", (char *)NULL);
        return 1;
    }
    dup2(1, 9);
    char *args[] = {"renamed", "child", "via-spawn", NULL};
    char *env[] = {"SPAWN_MARK=spawned", NULL};
    pid_t pid;
    int st;
    fflush(stdout);
    int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, env);
    waitpid(pid, &st, 0);
    printf("spawn rc %d status %d\n", rc, WEXITSTATUS(st));
    if (argc > 1) {
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            execl(argv[1], "script-name", "extra", (char *)NULL);
            _exit(127);
        }
        waitpid(pid, &st, 0);
        printf("script status %d\n", WEXITSTATUS(st));
    }
    return 0;
}
"#;

#[test]
fn a_child_runs_risc_v_programs_it_execs_in_a_simulator_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "spawner", SPAWNER, false);
    // A script whose interpreter is the program, with one argument.
    let script = dir.path().join("script");
    std::fs::write(
        &script,
        format!("#!{} child\necho not run\n", prog.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = coprof()
        .args(["run", "--"])
        .arg(&prog)
        .arg(&script)
        .env("SPAWN_MARK", "inherited")
        .assert()
        .success()
        .get_output()
        .clone();
    // posix_spawn's argv[0], arguments, environment and the descriptor 9
    // without FD_CLOEXEC reach the new program; Linux's binfmt_script
    // order for the script: interpreter, its argument, script, the rest.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "child argv0=renamed argc=3 last=via-spawn fd9=open mark=spawned\n\
             spawn rc 0 status 9\n\
             child argv0={} argc=4 last=extra fd9=open mark=inherited\n\
             script status 9\n",
            prog.display()
        )
    );
    // --argv0 is what the child's runner uses; a user may too.
    coprof()
        .args(["run", "--argv0=-login", "--"])
        .arg(&prog)
        .args(["child", "x"])
        .assert()
        .code(9)
        .stdout("child argv0=-login argc=3 last=x fd9=closed mark=unset\n");
    // The profile is of the parent; its children run unobserved. (The
    // program's output goes to stderr beside a report.)
    let json = dir.path().join("p.json");
    coprof()
        .args(["profile", "-o"])
        .arg(&json)
        .arg("--")
        .arg(&prog)
        .assert()
        .success()
        .stderr(predicate::str::contains("spawn rc 0 status 9"))
        .stderr(predicate::str::contains(
            "started 1 child process, which ran unobserved",
        ))
        .stdout(predicate::str::contains("exit status 0"));
    coprof()
        .args(["run", "--stats", "--"])
        .arg(&prog)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "started 1 child process, which ran unobserved",
        ));
}

#[test]
fn process_creation_that_shares_too_much_is_refused_by_name_flags_and_pc() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(
        dir.path(),
        "vmclone",
        r#"
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
static char stack[65536];
int main(void) {
    /* Two processes sharing memory without vfork's wait: not simulated. */
    long p = syscall(SYS_clone, CLONE_VM | SIGCHLD, stack + sizeof stack, 0, 0, 0);
    printf("clone %ld\n", p);
    return 0;
}
"#,
        false,
    );
    let out = coprof()
        .args(["run", "--"])
        .arg(&prog)
        .assert()
        .code(2)
        .stdout("")
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("clone (system call 220) with flags 0x111 and exit signal 17"),
        "{stderr}"
    );
    let pc = pc_in(&stderr);
    let syscall = find_symbol(&prog, "syscall").expect("syscall()");
    assert!(
        syscall.contains(&pc),
        "pc {pc:#x} not in syscall() {syscall:x?}"
    );

    // The process coprof watches may not replace itself when something
    // reports on it (here the count of --stats): the reports are about its
    // program. The refusal names the call and the PC.
    let spawner = compile(dir.path(), "spawner", SPAWNER, false);
    let out = coprof()
        .args(["run", "--stats", "--"])
        .arg(&spawner)
        .arg("exec-self")
        .assert()
        .code(2)
        .stdout("")
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("execve (system call 221) in the process coprof watches"),
        "{stderr}"
    );
    let execve = find_symbol(&spawner, "execve")
        .or_else(|| find_symbol(&spawner, "__execve"))
        .expect("execve()");
    assert!(execve.contains(&pc_in(&stderr)), "{stderr}");
    // With nothing reported, it replaces itself as under Linux: the new
    // program has the argv it was given and ends with its own status.
    coprof()
        .args(["run", "--"])
        .arg(&spawner)
        .arg("exec-self")
        .assert()
        .code(9)
        .stdout("child argv0=again argc=2 last=child fd9=closed mark=unset\n");
}

/// Every thread waiting on a futex that no thread will wake stops the run
/// with a message naming the call and PC, instead of hanging.
#[test]
fn threads_that_all_wait_are_a_named_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(
        dir.path(),
        "deadlock",
        r#"
#include <pthread.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;
static void *other(void *arg) {
    pthread_mutex_lock(&b);
    pthread_barrier_wait(&both);
    pthread_mutex_lock(&a);
    return arg;
}
int main(void) {
    pthread_barrier_init(&both, 0, 2);
    pthread_t t;
    pthread_create(&t, 0, other, 0);
    pthread_mutex_lock(&a);
    pthread_barrier_wait(&both);
    pthread_mutex_lock(&b);
    return 0;
}
"#,
        false,
    );
    coprof()
        .args(["run", "--"])
        .arg(&prog)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "futex (system call 98) leaves every thread waiting",
        ))
        .stderr(predicate::str::contains("(deadlock)"))
        .stderr(predicate::str::contains("pc 0x"));
}

/// `--quantum` sets how many instructions a thread runs before the next
/// gets the hart: another interleaving of the same program, with the
/// same answer, and the same instructions again when repeated.
#[test]
fn the_quantum_sets_the_interleaving() {
    common::run_script("scripts/build-test-programs.sh", &[]);
    let prog = repo_root().join("target/rv-programs/thread_waits-O2");
    let run = |quantum: &str| {
        let out = coprof()
            .args(["run", "--stats", "--quantum", quantum, "--"])
            .arg(&prog)
            .assert()
            .success()
            .get_output()
            .clone();
        (
            String::from_utf8(out.stdout).unwrap(),
            common::retired(&out.stderr),
        )
    };
    let (usual, _) = run("100000");
    assert!(
        usual.contains("sums match") && usual.contains("then 'y'"),
        "{usual}"
    );
    let (short, retired) = run("97");
    assert_eq!(
        short, usual,
        "the same output with turns of 97 instructions"
    );
    assert_eq!(run("97").1, retired, "the same instructions when repeated");
    coprof()
        .args(["run", "--quantum", "0", "--"])
        .arg(&prog)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--quantum"));
}

/// Prints the 16 bytes at AT_RANDOM and 16 bytes from getrandom.
const RANDOM_BYTES: &str = r#"
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/random.h>
int main(void) {
    const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
    unsigned char g[16];
    if (getrandom(g, sizeof g, 0) != sizeof g) return 1;
    for (int i = 0; i < 16; i++) printf("%02x", r[i]);
    printf(" ");
    for (int i = 0; i < 16; i++) printf("%02x", g[i]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn random_seed_repeats_the_kernels_random_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "random_bytes", RANDOM_BYTES, false);
    let run = |seed: Option<&str>| -> String {
        let mut c = coprof();
        c.arg("run");
        if let Some(s) = seed {
            c.args(["--random-seed", s]);
        }
        common::stdout_of(c.arg("--").arg(&prog))
    };
    let (a, b) = (run(Some("7")), run(Some("7")));
    assert_eq!(a, b, "the same seed gives the same bytes");
    assert_eq!(a.trim().len(), 65, "{a}");
    assert_ne!(run(Some("8")), a, "another seed, other bytes");
    // Without a seed the bytes are the host's: two runs differ.
    assert_ne!(run(None), run(None));
    coprof()
        .args(["run", "--random-seed", "x", "--"])
        .arg(&prog)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--random-seed"));
}

/// What a handler runs with, where qemu-user 7.2 departs from Linux (so
/// the corpus's `signals` program, checked against qemu, leaves it out):
/// the action's `sa_mask` is blocked while the handler runs, and an
/// alternate stack set with SS_AUTODISARM is disarmed while a handler
/// runs on it and set again by its return. The expected lines are what
/// the same source prints built for x86-64 and run on Linux 6.
#[test]
fn handlers_run_with_linuxs_mask_and_alternate_stack() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(
        dir.path(),
        "handler_state",
        r#"
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
static char alt[16384];
static int mask_inside, on, flags_inside;
static void masked(int sig) {
    sigset_t cur;
    sigprocmask(SIG_SETMASK, NULL, &cur);
    mask_inside = sigismember(&cur, sig) * 10 + sigismember(&cur, SIGUSR2);
}
static void onstack(int sig) {
    char here;
    on = &here >= alt && &here < alt + sizeof alt;
    stack_t now;
    sigaltstack(NULL, &now);
    flags_inside = now.ss_flags;
}
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = masked;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    sigset_t cur;
    sigprocmask(SIG_SETMASK, NULL, &cur);
    printf("inside: USR1 and sa_mask's USR2 blocked %d, after: USR2 blocked %d\n", mask_inside,
           sigismember(&cur, SIGUSR2));
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = SS_AUTODISARM};
    printf("sigaltstack %d\n", sigaltstack(&ss, NULL));
    sa.sa_handler = onstack;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR2);
    stack_t after;
    sigaltstack(NULL, &after);
    printf("on it %d, flags inside %#x, after %#x, size kept %d\n", on, flags_inside,
           after.ss_flags, after.ss_size == sizeof alt);
    return 0;
}
"#,
        false,
    );
    coprof()
        .args(["run", "--"])
        .arg(&prog)
        .assert()
        .success()
        .stdout(
            "inside: USR1 and sa_mask's USR2 blocked 11, after: USR2 blocked 0\n\
             sigaltstack 0\n\
             on it 1, flags inside 0x2, after 0x80000000, size kept 1\n",
        );
}

/// Faults a handler cannot take kill the process as before, with the
/// fault's own message: one whose signal is blocked (Linux resets it to
/// the default action), and a handler whose frame cannot be written (a
/// stack pointer in unmapped memory: SIGSEGV, naming the frame's
/// address).
#[test]
fn faults_handlers_cannot_take_still_kill() {
    let dir = tempfile::tempdir().unwrap();
    let blocked = compile(
        dir.path(),
        "blocked_fault",
        r#"
#include <signal.h>
#include <stdio.h>
static void h(int sig) { (void)sig; }
int main(void) {
    signal(SIGSEGV, h);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGSEGV);
    sigprocmask(SIG_BLOCK, &s, NULL);
    volatile int *p = (int *)0x1234;
    return *p;
}
"#,
        false,
    );
    coprof()
        .args(["run", "--"])
        .arg(&blocked)
        .assert()
        .code(128 + 11)
        .stderr(predicate::str::contains("address 0x1234"));
    let no_stack = compile(
        dir.path(),
        "no_stack",
        r#"
#include <signal.h>
static void h(int sig) { (void)sig; }
int main(void) {
    signal(SIGUSR1, h);
    __asm__ volatile("li sp, 0x1000\n li a7, 129\n li a0, 0\n li a1, 10\n ecall" ::: "memory");
    return 0;
}
"#,
        false,
    );
    coprof()
        .args(["run", "--"])
        .arg(&no_stack)
        .assert()
        .code(128 + 11)
        .stderr(predicate::str::contains(
            "no room for the frame of SIGUSR1 (signal 10) at 0xbc0 below sp 0x1000",
        ));
}

/// Real-time signals queue, each with its own value, and are delivered in
/// the order sent, where standard ones merge; a POSIX timer whose signal
/// stays pending sends no second one but counts overruns. The expected
/// output is what the same source prints on Linux (x86-64, gcc -O2);
/// qemu-user 7.2 does not queue real-time signals, so this is not in the
/// qemu corpus.
#[test]
fn real_time_signals_queue_and_timers_overrun_as_on_linux() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "rt_queue", RT_QUEUE, false);
    coprof()
        .args(["run", "--"])
        .arg(&prog)
        .assert()
        .success()
        .stdout(
            "sigqueue 1 rc 0\n\
             sigqueue 2 rc 0\n\
             sigqueue 3 rc 0\n\
             delivered SIGRTMIN+1 value -1\n\
             delivered SIGRTMIN+1 value -1\n\
             delivered SIGRTMIN value 10\n\
             delivered SIGRTMIN value 20\n\
             delivered SIGRTMIN value 30\n\
             delivered SIGUSR1 value -1\n\
             timer signal taken, si_overrun over 5: yes, a second instance: no, \
             timer_getoverrun agrees: yes\n",
        );
}

const RT_QUEUE: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static int order[16], values[16], n;
static void h(int sig, siginfo_t *info, void *c) {
    (void)c;
    if (n < 16) {
        order[n] = sig;
        values[n++] = info->si_code == SI_QUEUE ? info->si_value.sival_int : -1;
    }
}
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, 0);
    sigaction(SIGRTMIN, &sa, 0);
    sigaction(SIGRTMIN + 1, &sa, 0);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGRTMIN);
    sigaddset(&set, SIGRTMIN + 1);
    sigprocmask(SIG_BLOCK, &set, &old);
    for (int i = 1; i <= 3; i++) {
        union sigval v = {.sival_int = i * 10};
        printf("sigqueue %d rc %d\n", i, sigqueue(getpid(), SIGRTMIN, v));
    }
    kill(getpid(), SIGRTMIN + 1);
    kill(getpid(), SIGRTMIN + 1);
    kill(getpid(), SIGUSR1);
    kill(getpid(), SIGUSR1);
    sigprocmask(SIG_SETMASK, &old, 0);
    for (int i = 0; i < n; i++)
        printf("delivered %s value %d\n",
               order[i] == SIGUSR1 ? "SIGUSR1" : order[i] == SIGRTMIN ? "SIGRTMIN" : "SIGRTMIN+1",
               values[i]);
    /* A periodic timer whose signal stays blocked: one instance, overruns. */
    sigset_t rt;
    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN + 2);
    sigprocmask(SIG_BLOCK, &rt, 0);
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 2};
    timer_t t;
    timer_create(CLOCK_MONOTONIC, &ev, &t);
    struct itimerspec its = {.it_interval = {0, 1000000}, .it_value = {0, 1000000}};
    timer_settime(t, 0, &its, 0);
    struct timespec wait = {0, 30000000};
    nanosleep(&wait, 0);
    siginfo_t info;
    int sig = sigwaitinfo(&rt, &info);
    struct timespec zero = {0, 0};
    int again = sigtimedwait(&rt, &info, &zero);
    int ov = timer_getoverrun(t);
    printf("timer signal %s, si_overrun over 5: %s, a second instance: %s, timer_getoverrun agrees: %s\n",
           sig == SIGRTMIN + 2 ? "taken" : "missing", info.si_overrun > 5 || ov > 5 ? "yes" : "no",
           again == SIGRTMIN + 2 ? "yes" : "no", ov >= 5 ? "yes" : "no");
    return 0;
}
"#;

/// A program that waits for signals from outside: `pause`, a `read` that
/// a signal interrupts, a thread in `sigwait` (a daemon's pattern), then
/// a loop that only a signal ends.
const OUTSIDE: &str = r#"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static volatile sig_atomic_t got;
static volatile pid_t sender;
static void h(int sig, siginfo_t *info, void *c) { (void)c; got = sig; sender = info->si_pid; }
static void *waiter(void *a) {
    sigset_t s;
    int sig;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR2);
    sigwait(&s, &sig);
    printf("thread sigwait got %d\n", sig);
    fflush(stdout);
    return a;
}
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, 0);
    /* Blocked from the start: a SIGUSR2 sent early waits for the sigwait. */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &s, 0);
    printf("ready\n");
    fflush(stdout);
    pause();
    printf("pause ended by %d from the parent: %s\n", got, sender == getppid() ? "yes" : "no");
    fflush(stdout);
    char buf[16];
    errno = 0;
    long n = read(0, buf, sizeof buf);
    printf("read rc %ld errno %s\n", n, strerror(errno));
    fflush(stdout);
    pthread_t t;
    pthread_create(&t, 0, waiter, 0);
    pthread_join(t, 0);
    printf("joined\n");
    fflush(stdout);
    for (;;)
        ;
}
"#;

/// Signals from another process reach the program as under Linux: its
/// handler runs (with the sender's pid), a `pause` and a blocked `read`
/// end, a `sigwait` takes one, and a signal whose default kills ends the
/// run as a death by it, naming the sender.
#[test]
fn signals_from_outside_reach_the_program() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "outside", OUTSIDE, false);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("coprof"))
        .args(["run", "--"])
        .arg(&prog)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let next = || rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap();
    // Sends `sig` until the program prints its next line: a signal sent
    // before the program waits for it is taken before the wait.
    let send_until_line = |sig: i32| loop {
        // SAFETY: plain call.
        unsafe { libc::kill(pid, sig) };
        if let Ok(line) = rx.recv_timeout(std::time::Duration::from_millis(300)) {
            return line;
        }
    };
    assert_eq!(next(), "ready");
    assert_eq!(
        send_until_line(libc::SIGUSR1),
        "pause ended by 10 from the parent: yes"
    );
    assert_eq!(
        send_until_line(libc::SIGUSR1),
        "read rc -1 errno Interrupted system call"
    );
    // SAFETY: plain call. SIGUSR2 is blocked: it waits for the sigwait.
    unsafe { libc::kill(pid, libc::SIGUSR2) };
    assert_eq!(next(), "thread sigwait got 12");
    assert_eq!(next(), "joined");
    // SAFETY: plain call.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let end = child.wait_with_output().unwrap();
    assert_eq!(end.status.code(), Some(128 + 15));
    let stderr = String::from_utf8_lossy(&end.stderr);
    assert!(
        stderr.contains(&format!(
            "killed by SIGTERM (signal 15) sent by process {}",
            std::process::id()
        )),
        "{stderr}"
    );
}

/// Real-time signals from another process queue, as under Linux: three
/// `sigqueue`s of one blocked real-time signal are three instances, each
/// with its own value, taken in the order sent.
#[test]
fn real_time_signals_from_outside_queue() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(
        dir.path(),
        "rtqueue",
        r#"
#include <signal.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    sigset_t rt, usr;
    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN + 1);
    sigemptyset(&usr);
    sigaddset(&usr, SIGUSR1);
    sigprocmask(SIG_BLOCK, &rt, 0);
    sigprocmask(SIG_BLOCK, &usr, 0);
    printf("ready\n");
    fflush(stdout);
    siginfo_t info;
    struct timespec long_wait = {60, 0}, second = {1, 0};
    /* SIGUSR1 says the real-time ones were sent. */
    sigtimedwait(&usr, &info, &long_wait);
    char values[64] = "";
    int n = 0;
    while (sigtimedwait(&rt, &info, &second) == SIGRTMIN + 1) {
        n++;
        sprintf(values + strlen(values), " %d", info.si_value.sival_int);
    }
    printf("instances %d, values%s\n", n, values);
    return 0;
}
"#,
        false,
    );
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("coprof"))
        .args(["run", "--"])
        .arg(&prog)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "ready");
    for v in 1..=3usize {
        let value = libc::sigval {
            sival_ptr: v as *mut libc::c_void,
        };
        // SAFETY: plain call.
        assert_eq!(
            unsafe { libc::sigqueue(pid, libc::SIGRTMIN() + 1, value) },
            0
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: plain call.
    unsafe { libc::kill(pid, libc::SIGUSR1) };
    assert_eq!(lines.next().unwrap().unwrap(), "instances 3, values 1 2 3");
    assert!(child.wait().unwrap().success());
}

/// A child that stops itself (SIGSTOP's default action) stops as a
/// process, its parent sees it stopped and continued, and it goes on to
/// its own end; SIGCHLD tells the parent of each change unless its
/// handler was installed with SA_NOCLDSTOP, as on Linux (kernel/signal.c,
/// `do_notify_parent_cldstop`).
#[test]
fn a_child_that_stops_and_goes_on_is_told_as_on_linux() {
    let dir = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(repo_root().join("crates/coprof-rv/tests/programs/processes.c"))
            .unwrap();
    let body = &src[src.find("/* The si_code of each SIGCHLD").unwrap()
        ..src.find("int main(void) {").unwrap()];
    let loop_ = &src[src.find("    for (int nocldstop = 0;").unwrap()
        ..src
            .find("    signal(SIGCHLD, SIG_DFL);\n    return 0;")
            .unwrap()];
    let program = format!(
        "#define _GNU_SOURCE\n#include <signal.h>\n#include <stdio.h>\n#include <string.h>\n#include <time.h>\n\
         #include <sys/wait.h>\n#include <unistd.h>\n{body}int main(void) {{\n    int status;\n{}    return 0;\n}}\n",
        loop_.replace("nocldstop < 1;", "nocldstop < 2;")
    );
    let prog = compile(dir.path(), "stops", &program, false);
    let out = common::succeeded(coprof().args(["run", "--"]).arg(&prog));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "SA_NOCLDSTOP 0: waitpid WUNTRACED stopped 1 by 19\n\
         SA_NOCLDSTOP 0: waitpid WCONTINUED continued 1\n\
         SA_NOCLDSTOP 0: SIGCHLD codes stopped continued exited, exit status 4\n\
         SA_NOCLDSTOP 1: waitpid WUNTRACED stopped 1 by 19\n\
         SA_NOCLDSTOP 1: waitpid WCONTINUED continued 1\n\
         SA_NOCLDSTOP 1: SIGCHLD codes exited, exit status 4\n"
    );
}

/// Threads take turns on the simulator's one hart in a fixed order, so a
/// contended multithreaded program runs the same number of instructions,
/// and prints the same, every time (what comparing two profiles of it
/// needs); its result is the one any interleaving must give.
#[test]
fn threads_interleave_the_same_way_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(
        dir.path(),
        "contended",
        r#"
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn = PTHREAD_COND_INITIALIZER;
static long shared, order[64];
static int n;
static void *work(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < 50000; i++) {
        pthread_mutex_lock(&lock);
        shared += id;
        if (i % 5000 == 0 && n < 64) order[n++] = id;
        pthread_cond_broadcast(&turn);
        pthread_mutex_unlock(&lock);
    }
    return 0;
}
int main(void) {
    pthread_t t[3];
    for (long i = 0; i < 3; i++) pthread_create(&t[i], 0, work, (void *)(i + 1));
    for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
    printf("shared %ld\n", shared);
    return 0;
}
"#,
        false,
    );
    let run = || {
        let out = coprof()
            .args(["run", "--stats", "--"])
            .arg(&prog)
            .assert()
            .success()
            .stdout("shared 300000\n")
            .get_output()
            .clone();
        common::retired(&out.stderr)
    };
    let first = run();
    assert!(first > 3 * 50_000 * 10, "{first} instructions");
    assert_eq!(run(), first, "the same instructions in the second run");
}

/// `clone3` with CLONE_CLEAR_SIGHAND (what glibc's newer `posix_spawn`
/// and Python's `subprocess` ask for) makes a child whose handled signals
/// are back to their defaults while ignored ones stay ignored, and leaves
/// the parent's alone. Checked against the host's own kernel: the same
/// source built for x86-64 and run natively must print the same.
#[test]
fn clone3_clear_sighand_resets_handlers_as_linux_does() {
    let dir = tempfile::tempdir().unwrap();
    let src = r#"
#define _GNU_SOURCE
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static void on_usr1(int s) { (void)s; }
static const char *what(int sig) {
    struct sigaction sa;
    sigaction(sig, 0, &sa);
    return sa.sa_handler == SIG_DFL ? "default" : sa.sa_handler == SIG_IGN ? "ignored" : "handled";
}
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, 0);
    signal(SIGUSR2, SIG_IGN);
    for (int clear = 0; clear < 2; clear++) {
        struct clone_args ca;
        memset(&ca, 0, sizeof ca);
        ca.flags = clear ? CLONE_CLEAR_SIGHAND : 0;
        ca.exit_signal = SIGCHLD;
        fflush(stdout);
        long pid = syscall(SYS_clone3, &ca, sizeof ca);
        if (pid == 0) {
            printf("clear %d: child SIGUSR1 %s, SIGUSR2 %s\n", clear, what(SIGUSR1), what(SIGUSR2));
            fflush(stdout);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
    }
    printf("parent SIGUSR1 %s\n", what(SIGUSR1));
    return 0;
}
"#;
    let prog = compile(dir.path(), "clear_sighand", src, false);
    let expected = "clear 0: child SIGUSR1 handled, SIGUSR2 ignored\n\
                    clear 1: child SIGUSR1 default, SIGUSR2 ignored\n\
                    parent SIGUSR1 handled\n";
    let out = common::succeeded(coprof().args(["run", "--"]).arg(&prog));
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    let native = common::host_compile(dir.path(), "clear_sighand-native", src, &[]);
    let host = std::process::Command::new(&native).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&host.stdout),
        expected,
        "the host's kernel"
    );
}

/// A trace keeps every area the run mapped, named as `/proc/self/maps`
/// would name it while it lived: `mmap`'d and `mremap`'d anonymous
/// memory (unmapped before the end, still listed), System V shared
/// memory, the break and the stack, and the program's file.
#[test]
fn a_trace_lists_every_area_the_run_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let src = r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char *a = mmap(0, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    a[0] = 1;
    /* Grown where it is, then, with the page after it taken, moved. */
    char *b = mremap(a, 1 << 16, 1 << 20, MREMAP_MAYMOVE);
    mmap(b + (1 << 20), 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    char *c = mremap(b, 1 << 20, 1 << 24, MREMAP_MAYMOVE);
    c[1 << 23] = 2;
    munmap(c, 1 << 24);
    int id = shmget(IPC_PRIVATE, 1 << 16, IPC_CREAT | 0600);
    char *s = shmat(id, 0, 0);
    shmctl(id, IPC_RMID, 0);
    s[0] = 3;
    char *brk0 = sbrk(0);
    sbrk(1 << 20);
    char *brk1 = sbrk(0);
    FILE *f = fopen(argv[1], "w");
    fprintf(f, "%p %p %p %p %p %p %p\n", a, b, c, s, brk0, brk1, (void *)&id);
    return fclose(f);
}
"#;
    let prog = compile(dir.path(), "mapper", src, false);
    let said = dir.path().join("addresses");
    let trace = dir.path().join("mapper.cpt");
    traced_run(&trace, &prog).arg(&said).assert().success();
    let at: Vec<u64> = std::fs::read_to_string(&said)
        .unwrap()
        .split_whitespace()
        .map(|p| u64::from_str_radix(p.trim_start_matches("0x"), 16).unwrap())
        .collect();
    let out = common::succeeded(coprof().args(["info", "--json"]).arg(&trace));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let areas = v["meta"]["areas"].as_array().unwrap();
    let named = |start: u64, end: u64, name: &str| {
        areas.iter().any(|x| {
            x["name"] == name
                && x["start"].as_u64().unwrap() <= start
                && end <= x["end"].as_u64().unwrap()
        })
    };
    let file = std::fs::canonicalize(&prog).unwrap().display().to_string();
    let [a, b, c, s, brk0, brk1, stack] = at[..] else {
        panic!("{at:?}")
    };
    assert_eq!(b, a, "mremap did not grow the mapping in place");
    assert!(c != b, "mremap did not move the mapping");
    for (start, end, name) in [
        (a, b + (1 << 20), "[anon]"),
        (c, c + (1 << 24), "[anon]"),
        (s, s + (1 << 16), "[shm]"),
        (brk0, brk1, "[heap]"),
        (stack, stack + 4, "[stack]"),
        (prog_entry(&prog), prog_entry(&prog) + 4, file.as_str()),
    ] {
        assert!(
            named(start, end, name),
            "{name} {start:#x}..{end:#x} not in {areas:?}"
        );
    }
    // `coprof info` lists them under `mapped`.
    let text =
        String::from_utf8(coprof().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
    let mapped = text.split_once("\nmapped ").unwrap().1;
    for name in ["[anon]", "[shm]", "[heap]", "[stack]"] {
        assert!(mapped.contains(name), "{name}:\n{text}");
    }
}

/// The entry point of the ELF file `prog`, an address of its code.
fn prog_entry(prog: &Path) -> u64 {
    let bytes = std::fs::read(prog).unwrap();
    u64::from_le_bytes(bytes[24..32].try_into().unwrap())
}

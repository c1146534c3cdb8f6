//! Helpers shared by the CLI tests: the binary under test, synthetic
//! traces, and real RV64 programs to run live. Each test binary uses some
//! of them, hence `dead_code` is allowed here.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The `coprof` binary under test.
pub fn coprof() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("coprof").unwrap()
}

/// A trace of `events` events of the synthetic `workload` drawn from
/// `seed`, written by `coprof gen` to `dir/WORKLOAD-SEED.cpt`.
pub fn gen_trace(dir: &Path, workload: &str, events: u64, seed: u64) -> PathBuf {
    let out = dir.join(format!("{workload}-{seed}.cpt"));
    coprof()
        .args(["gen", "--workload", workload, "--events"])
        .arg(events.to_string())
        .args(["--seed", &seed.to_string(), "-o"])
        .arg(&out)
        .assert()
        .success();
    out
}

/// Asserts that `coprof COMMAND FILE ARGS` fails with exit status 2 and
/// an error that says `says`, for each `(ARGS, says)` of `cases`: a bad
/// option, named.
pub fn rejects(command: &str, file: &Path, cases: &[(Vec<&str>, &str)]) {
    for (args, says) in cases {
        coprof()
            .arg(command)
            .arg(file)
            .args(args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(*says));
    }
}

/// `coprof run --trace TRACE -- PROG`: a live run of `prog` written to
/// `trace`; the caller adds the program's arguments and runs it.
pub fn traced_run(trace: &Path, prog: &Path) -> assert_cmd::Command {
    let mut c = coprof();
    c.args(["run", "--trace"]).arg(trace).arg("--").arg(prog);
    c
}

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Runs one of the project's build scripts (`script` relative to the
/// root) with `args`, and fails the test with its output when it fails.
pub fn run_script(script: &str, args: &[&str]) {
    let path = repo_root().join(script);
    let out = std::process::Command::new("bash")
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", path.display()));
    assert!(
        out.status.success(),
        "{script} {args:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The instruction count that `coprof run --stats` reports on `stderr`.
pub fn retired(stderr: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .find_map(|l| l.strip_prefix("coprof: "))
        .and_then(|l| l.split(" instructions").next())
        .unwrap_or_else(|| panic!("no instruction count in {text:?}"))
        .replace(',', "")
        .parse()
        .unwrap()
}

/// Compiles a C program with the RISC-V cross compiler (installed by
/// scripts/install-deps.sh when missing): static, -O1, with debug info.
pub fn compile(dir: &Path, name: &str, src: &str) -> PathBuf {
    compile_with(dir, name, src, &["-static", "-O1", "-g"])
}

static DEPS: std::sync::Once = std::sync::Once::new();

/// Writes `src` to `dir/NAME.c` and compiles it with the RISC-V cross
/// compiler and `flags` into `dir/NAME`, installing the compiler first
/// if it is missing (once per test binary).
pub fn compile_with(dir: &Path, name: &str, src: &str, flags: &[&str]) -> PathBuf {
    install_cross_compiler();
    build("riscv64-linux-gnu-gcc", dir, name, src, flags)
}

/// Installs the RISC-V cross compilers if they are missing, once per
/// test binary.
fn install_cross_compiler() {
    DEPS.call_once(|| {
        let st = std::process::Command::new(repo_root().join("scripts/install-deps.sh"))
            .stdout(std::process::Stdio::null())
            .status()
            .expect("scripts/install-deps.sh runs");
        assert!(st.success(), "installing the cross compiler failed");
    });
}

/// Writes the C++ `src` to `dir/NAME.c` and compiles it as C++ with the
/// RISC-V cross compiler, as [`compile`] compiles C.
pub fn compile_cpp(dir: &Path, name: &str, src: &str) -> PathBuf {
    install_cross_compiler();
    build(
        "riscv64-linux-gnu-g++",
        dir,
        name,
        src,
        &["-x", "c++", "-static", "-O1", "-g"],
    )
}

/// Writes `src` to `dir/NAME.c` and compiles it with `compiler` and
/// `flags` into `dir/NAME`.
fn build(compiler: &str, dir: &Path, name: &str, src: &str, flags: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    let st = std::process::Command::new(compiler)
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(&c)
        .status()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(st.success(), "{compiler}: compiling {name}.c failed");
    out
}

/// Writes `src` to `dir/NAME.c` and compiles it with the host's C
/// compiler and `flags` into `dir/NAME`: the same program built for this
/// machine, to run alone (Linux's own answer) or sampled natively.
pub fn host_compile(dir: &Path, name: &str, src: &str, flags: &[&str]) -> PathBuf {
    build("cc", dir, name, src, flags)
}

/// A command a test runs: coprof's own, or another program's.
pub trait Runs: std::fmt::Debug {
    /// Runs it to its end, with what it wrote.
    fn output_of(&mut self) -> std::io::Result<std::process::Output>;
}

impl Runs for assert_cmd::Command {
    fn output_of(&mut self) -> std::io::Result<std::process::Output> {
        self.output()
    }
}

impl Runs for std::process::Command {
    fn output_of(&mut self) -> std::io::Result<std::process::Output> {
        self.output()
    }
}

/// Runs `cmd`, asserts that it succeeded (showing the command, its
/// status and its standard error if not) and returns what it wrote.
pub fn succeeded(cmd: &mut impl Runs) -> std::process::Output {
    let out = cmd.output_of().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `cmd`, asserts that it succeeded (showing its standard error if
/// not) and returns its standard output.
pub fn stdout_of(cmd: &mut assert_cmd::Command) -> String {
    String::from_utf8(succeeded(cmd).stdout).expect("UTF-8 on stdout")
}

/// Runs `cmd`, asserts that it succeeded (showing its standard error if
/// not) and parses its standard output as JSON.
pub fn json_of(cmd: &mut assert_cmd::Command) -> serde_json::Value {
    serde_json::from_str(&stdout_of(cmd)).expect("JSON on stdout")
}

/// Waits for `coprof`, started with its standard output piped into this
/// test, whose reader goes 0.3 s in, having read nothing; fails if it
/// runs `within` longer. It must end by SIGPIPE, quietly, as a writer
/// into a pipe whose reader has gone ends. Its standard error.
pub fn ended_by_sigpipe_when_unread(
    mut coprof: std::process::Child,
    within: std::time::Duration,
) -> String {
    use std::os::unix::process::ExitStatusExt;
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(coprof.stdout.take());
    let started = std::time::Instant::now();
    while coprof.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < within,
            "still running {within:?} after its trace's reader went"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = coprof.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}: {err}",
        out.status
    );
    assert!(!err.contains("error"), "{err}");
    err
}

/// The front a sweep's JSON names: `front`, indices into `points`.
pub fn front_of(sweep: &serde_json::Value) -> Vec<usize> {
    sweep["front"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_u64().unwrap() as usize)
        .collect()
}

/// The front a sweep's JSON names ([`front_of`]),
/// checked: a point is on it exactly when no other is as cheap (`cost`,
/// less is cheaper) and as accurate (`error`, less is better) and better
/// on one of the two; of points equal on both, only the earliest is.
pub fn checked_front<C: PartialOrd>(
    sweep: &serde_json::Value,
    cost: impl Fn(&serde_json::Value) -> C,
    error: impl Fn(&serde_json::Value) -> f64,
) -> Vec<usize> {
    let points = sweep["points"].as_array().unwrap();
    let front = front_of(sweep);
    assert!(!front.is_empty(), "{sweep}");
    for (i, p) in points.iter().enumerate() {
        let beaten = points.iter().enumerate().any(|(j, q)| {
            cost(q) <= cost(p)
                && error(q) <= error(p)
                && (cost(q) < cost(p) || error(q) < error(p) || j < i)
        });
        assert_eq!(front.contains(&i), !beaten, "point {i}: {sweep}");
    }
    front
}

/// A C program for this machine (`host_compile`) whose time goes to one
/// function, `hot_loop`, summing an array of 7s; `exit3` ends with status 3 after
/// it; `for SECS` runs it for that many seconds of wall time.
pub const HOT: &str = r#"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define N 4096
long table[N];
volatile long sink;
__attribute__((noinline)) long hot_loop(long rounds) {
    long s = 0;
    for (long r = 0; r < rounds; r++)
        for (int i = 0; i < N; i++)
            s += table[i];
    return s;
}
int main(int argc, char **argv) {
    for (int i = 0; i < N; i++)
        table[i] = 7;
    if (argc > 2 && !strcmp(argv[1], "for")) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            sink = hot_loop(10);
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < atof(argv[2]));
        return 0;
    }
    sink = hot_loop(6000);
    return argc > 1 && !strcmp(argv[1], "exit3") ? 3 : 0;
}
"#;

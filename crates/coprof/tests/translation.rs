//! Blocks translated to host code against the interpreter, on whole
//! programs: `coprof profile --exact` of each kernel of workloads/ prints
//! the same profile with and without `--interpret`, every report and
//! every exact answer, and `coprof run --stats` the same counts; a
//! forked child, unobserved, runs its parent's blocks without the
//! parent's events. (The
//! simulator's unit tests compare random blocks one by one; the
//! differential test against qemu runs with translation on.)

mod common;

use common::{compile, coprof, repo_root, run_script, stdout_of};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn kernels() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        run_script("workloads/build-kernels.sh", &[]);
        repo_root().join("workloads/build")
    })
}

/// `v` without the reports' command lines, which name `--interpret`.
fn without_commands(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("command");
            m.values_mut().for_each(without_commands);
        }
        Value::Array(a) => a.iter_mut().for_each(without_commands),
        _ => {}
    }
}

fn profile(bin: &Path, interpret: bool, dir: &Path) -> Value {
    let out = dir.join(if interpret { "i.json" } else { "t.json" });
    let mut cmd = coprof();
    cmd.args([
        "profile",
        "--exact",
        "--random-seed",
        "1",
        "--no-symbols",
        "-o",
    ])
    .arg(&out);
    if interpret {
        cmd.arg("--interpret");
    }
    stdout_of(cmd.arg("--").arg(bin).arg("1"));
    let mut v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    without_commands(&mut v);
    v
}

#[test]
fn kernels_profile_the_same_translated_or_interpreted() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "crc32", "sha256", "qsort", "dijkstra", "adpcm", "dct8x8", "matmul",
    ] {
        let bin = kernels().join(name);
        let translated = profile(&bin, false, dir.path());
        let interpreted = profile(&bin, true, dir.path());
        assert!(
            translated == interpreted,
            "{name}: the profiles differ with --interpret"
        );
        let instructions = translated["instructions"].as_u64().unwrap_or(0);
        assert!(
            instructions > 1_000_000,
            "{name}: {instructions} instructions"
        );
    }
}

#[test]
fn run_counts_the_same_translated_or_interpreted() {
    let bin = kernels().join("sha256");
    let stats = |interpret: bool| {
        let mut cmd = coprof();
        cmd.args(["run", "--stats"]);
        if interpret {
            cmd.arg("--interpret");
        }
        let out = common::succeeded(cmd.arg("--").arg(&bin).arg("1"));
        (
            out.stdout,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (out_t, err_t) = stats(false);
    let (out_i, err_i) = stats(true);
    assert_eq!(out_t, out_i, "the program's output differs");
    let retired = |s: &str| common::retired(s.as_bytes());
    assert_eq!(retired(&err_t), retired(&err_i), "{err_t}\n{err_i}");
}

/// A parent whose hot loop was translated with load events, then a
/// forked child that runs the same loop unobserved, with no events.
const FORK_AFTER_HOT_LOOP: &str = r#"
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static unsigned a[1000];
static unsigned long sum(void) {
    unsigned long s = 0;
    for (int r = 0; r < 50; r++)
        for (int i = 0; i < 1000; i++) s += a[i] * (r + 1);
    return s;
}
int main(void) {
    for (int i = 0; i < 1000; i++) a[i] = i * 7;
    unsigned long p = sum();
    pid_t c = fork();
    if (c == 0) {
        fprintf(stderr, "child %lu\n", sum());
        return 0;
    }
    int st;
    waitpid(c, &st, 0);
    fprintf(stderr, "parent %lu status %d\n", p, st);
    return 0;
}
"#;

#[test]
fn a_forked_child_runs_its_parents_translated_blocks_without_events() {
    let dir = tempfile::tempdir().unwrap();
    let bin = compile(dir.path(), "fork_after_hot_loop", FORK_AFTER_HOT_LOOP);
    // 1275 * 7 * (0 + 1 + ... + 999)
    let want = 1275u64 * 7 * 499_500;
    let out = common::succeeded(coprof().args(["values", "--no-symbols", "--"]).arg(&bin));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("child {want}\n")), "{err}");
    assert!(err.contains(&format!("parent {want} status 0\n")), "{err}");
}

//! A real multithreaded program under the simulator: Zstandard's library
//! (zstd-sys's copy, built by `workloads/build-real.sh --only zstdrun`
//! with ZSTD_MULTITHREAD) compressing with two worker threads, which share
//! jobs through its thread pool's mutexes and condition variables. zstd
//! makes the compressed bytes the same however its threads interleave, so
//! they must be qemu's byte for byte (qemu runs the threads in parallel on
//! host threads); they must decompress to the input; and two runs under
//! coprof, whose threads take turns in a fixed order, must retire the same
//! number of instructions. Those two write to a file: into a pipe that the
//! test reads at its own pace, zstd's writes would wait for room as long
//! as the host takes, and the workers would run meanwhile for as many
//! turns, which is an interleaving of the host's making.

mod common;

use common::{repo_root, retired, run_script};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn coprof() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_coprof"))
}

fn zstdrun() -> PathBuf {
    run_script("workloads/build-real.sh", &["--only", "zstdrun"]);
    repo_root().join("workloads/build/real/zstdrun")
}

/// About 3 MB of text from the repository's own C and Rust sources, so
/// that the 512 KB jobs of `-J 512` give each worker several.
fn input(dir: &Path) -> PathBuf {
    let root = repo_root();
    let mut files: Vec<PathBuf> = [
        "workloads/kernels",
        "workloads/real",
        "crates/coprof-rv/src",
    ]
    .iter()
    .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
    .map(|e| e.unwrap().path())
    .filter(|p| p.extension().is_some_and(|x| x == "c" || x == "rs"))
    .collect();
    files.sort();
    let mut text = Vec::new();
    for round in 0..8 {
        for f in &files {
            text.extend_from_slice(format!("// round {round}: {}\n", f.display()).as_bytes());
            text.extend_from_slice(&std::fs::read(f).unwrap());
        }
    }
    assert!(text.len() > 2_000_000, "{} bytes of input", text.len());
    let path = dir.join("input.txt");
    std::fs::write(&path, &text).unwrap();
    path
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .env_clear()
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn zstd_compresses_on_worker_threads_as_under_qemu() {
    let bin = zstdrun();
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    let args = ["-3", "-T", "2", "-J", "512"];
    let qemu = run(Command::new("qemu-riscv64")
        .arg(&bin)
        .args(args)
        .arg(&input));
    // The compressed bytes of a run into a file (see the module's comment).
    let into_file = |name: &str| {
        let path = dir.path().join(name);
        let mut out = run(Command::new(coprof())
            .args(["run", "--stats", "--"])
            .arg(&bin)
            .args(args)
            .arg(&input)
            .stdout(std::fs::File::create(&path).unwrap()));
        out.stdout = std::fs::read(&path).unwrap();
        out
    };
    let ours = into_file("first.zst");
    assert!(
        ours.stdout.len() > 1000,
        "{} bytes compressed",
        ours.stdout.len()
    );
    assert!(
        ours.stdout == qemu.stdout,
        "coprof's {} compressed bytes differ from qemu's {}",
        ours.stdout.len(),
        qemu.stdout.len()
    );
    let packed = dir.path().join("input.zst");
    std::fs::write(&packed, &ours.stdout).unwrap();
    let back = run(Command::new(coprof())
        .args(["run", "--"])
        .arg(&bin)
        .arg("-d")
        .arg(&packed));
    assert!(
        back.stdout == std::fs::read(&input).unwrap(),
        "the round trip gives back the input"
    );
    let again = into_file("second.zst");
    assert_eq!(again.stdout, ours.stdout);
    assert_eq!(
        retired(&again.stderr),
        retired(&ours.stderr),
        "the threads interleave the same way in both runs"
    );
}

//! The answers about symbols kept between runs (`src/symbol_cache.rs`):
//! a second run answers from them and prints the same profile, a changed
//! binary, a debug file installed since (beside it, or in the
//! debuginfod client's cache) or a split DWARF file found since is not
//! answered from them, a damaged cache
//! file is passed over, and `--no-symbol-cache` leaves the cache alone.

mod common;

use common::{compile, coprof, stdout_of};
use serde_json::Value;
use std::path::{Path, PathBuf};

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static unsigned table[256];
unsigned spin(int n) {
    unsigned s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 256; j++)
            s += table[j] ^ (s >> 3) ^ (unsigned)i;
    return s;
}
int main(int argc, char **argv) {
    for (int j = 0; j < 256; j++) table[j] = j * 2654435761u;
    printf("done %u\n", spin(argc > 1 ? atoi(argv[1]) : 100));
    return 0;
}
"#;

/// `coprof profile` of `prog` with `cache` as `XDG_CACHE_HOME`: the
/// reports of the profile file it wrote, and its standard error.
fn profile(dir: &Path, cache: &Path, prog: &Path, extra: &[&str]) -> (Value, String) {
    profile_with(dir, cache, prog, extra, &[])
}

/// [`profile`] with the environment variables `env` set too.
fn profile_with(
    dir: &Path,
    cache: &Path,
    prog: &Path,
    extra: &[&str],
    env: &[(&str, &Path)],
) -> (Value, String) {
    let file = dir.join("p.json");
    let out = coprof()
        .env("XDG_CACHE_HOME", cache)
        .envs(env.iter().copied())
        .arg("profile")
        .args(["--random-seed", "1", "-o"])
        .arg(&file)
        .args(extra)
        .arg("--")
        .arg(prog)
        .arg("300")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let p: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    (p["reports"].clone(), stderr)
}

/// `riscv64-linux-gnu-objcopy ARGS FROM TO`, which must succeed.
fn objcopy(args: &[&str], from: &Path, to: &Path) {
    let st = std::process::Command::new("riscv64-linux-gnu-objcopy")
        .args(args)
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success(), "objcopy {args:?}");
}

/// The cache's files.
fn kept(cache: &Path) -> Vec<PathBuf> {
    let dir = cache.join("coprof/symbols");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(d) => d.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

/// Renames the function `from` to `to` in every kept answer, leaving the
/// keys as they are: a run that prints `to` took its answers from there.
fn rename_in_cache(cache: &Path, from: &str, to: &str) -> usize {
    let mut renamed = 0;
    for f in kept(cache) {
        let text = std::fs::read_to_string(&f).unwrap();
        let quoted = format!("\"{from}\"");
        renamed += text.matches(&quoted).count();
        std::fs::write(&f, text.replace(&quoted, &format!("\"{to}\""))).unwrap();
    }
    renamed
}

#[test]
fn a_second_run_answers_from_the_cache_and_prints_the_same_profile() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let prog = compile(dir.path(), "spin", PROGRAM);
    let (plain, plain_err) = profile(dir.path(), &cache, &prog, &["--no-symbol-cache"]);
    assert!(
        kept(&cache).is_empty(),
        "--no-symbol-cache wrote to the cache"
    );
    let (first, first_err) = profile(dir.path(), &cache, &prog, &[]);
    assert!(!kept(&cache).is_empty(), "nothing kept");
    let (second, second_err) = profile(dir.path(), &cache, &prog, &[]);
    assert_eq!(first, plain);
    assert_eq!(second, plain);
    // The notes about the program's symbols are said again, the same.
    let notes = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("coprof: note:"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(notes(&first_err), notes(&plain_err));
    assert_eq!(notes(&second_err), notes(&plain_err));
    assert!(plain.to_string().contains("\"spin\""), "{plain}");

    // Answers changed behind the key's back show that they are used ...
    assert!(rename_in_cache(&cache, "spin", "kept_spin") > 0);
    let (third, _) = profile(dir.path(), &cache, &prog, &[]);
    assert!(third.to_string().contains("kept_spin"), "{third}");
    // ... and a binary changed since is not answered from them.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    let file = std::fs::File::options().append(true).open(&prog).unwrap();
    file.set_modified(later).unwrap();
    drop(file);
    let (fourth, _) = profile(dir.path(), &cache, &prog, &[]);
    assert_eq!(fourth, plain);
}

#[test]
fn a_debug_file_installed_since_is_read_not_the_answers_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let full = compile(dir.path(), "spin", PROGRAM);
    // A stripped copy that links to `spin.debug`, not there yet.
    let debug = dir.path().join("spin.debug");
    let stripped = dir.path().join("stripped");
    objcopy(&["--only-keep-debug"], &full, &debug);
    let link = format!("--add-gnu-debuglink={}", debug.display());
    objcopy(&["--strip-debug", &link], &full, &stripped);
    let elsewhere = dir.path().join("elsewhere.debug");
    std::fs::rename(&debug, &elsewhere).unwrap();
    let (without, err) = profile(dir.path(), &cache, &stripped, &[]);
    assert!(err.contains("no debug info"), "{err}");
    assert!(!without.to_string().contains("spin.c:"), "{without}");
    std::fs::rename(&elsewhere, &debug).unwrap();
    let (with, err) = profile(dir.path(), &cache, &stripped, &[]);
    assert!(err.contains("debug info from"), "{err}");
    assert!(with.to_string().contains("spin.c:"), "{with}");
}

#[test]
fn a_split_dwarf_file_found_since_is_not_answered_without() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let prog = common::compile_with(
        dir.path(),
        "spin",
        PROGRAM,
        &["-static", "-O1", "-g", "-gsplit-dwarf"],
    );
    let dwo = dir.path().join("spin.dwo");
    let away = dir.path().join("away");
    std::fs::create_dir(&away).unwrap();
    let note = "split DWARF file";
    std::fs::rename(&dwo, away.join("spin.dwo")).unwrap();
    let (_, err) = profile(dir.path(), &cache, &prog, &[]);
    assert!(err.contains(note), "no note of the missing .dwo: {err}");
    let (_, err) = profile(dir.path(), &cache, &prog, &[]);
    assert!(err.contains(note), "the kept answers lost the note: {err}");
    // Put back, the `.dwo` is read, not the answers kept without it.
    std::fs::rename(away.join("spin.dwo"), &dwo).unwrap();
    let (with, err) = profile(dir.path(), &cache, &prog, &[]);
    assert!(!err.contains(note), "answers kept without the .dwo: {err}");
    let (plain, _) = profile(dir.path(), &cache, &prog, &["--no-symbol-cache"]);
    assert_eq!(with, plain);
    // Kept with it, they hold while it is there ...
    assert!(rename_in_cache(&cache, "spin", "kept_spin") > 0);
    let (kept_with, _) = profile(dir.path(), &cache, &prog, &[]);
    assert!(kept_with.to_string().contains("kept_spin"), "{kept_with}");
    // ... and not once it is gone again.
    std::fs::rename(&dwo, away.join("spin.dwo")).unwrap();
    let (_, err) = profile(dir.path(), &cache, &prog, &[]);
    assert!(err.contains(note), "answers kept with the .dwo: {err}");
}

/// A debug file that a debuginfod client fetched (`debuginfod-find
/// debuginfo`, GDB, perf) is read from the client's cache, by build ID,
/// and a later run's answers are keyed by it.
#[test]
fn a_debug_file_in_the_debuginfod_cache_is_read() {
    use object::Object;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let fetched = dir.path().join("debuginfod");
    let full = compile(dir.path(), "spin", PROGRAM);
    let stripped = dir.path().join("stripped");
    objcopy(&["--strip-debug"], &full, &stripped);
    let data = std::fs::read(&full).unwrap();
    let id = object::File::parse(&*data)
        .unwrap()
        .build_id()
        .unwrap()
        .unwrap()
        .to_vec();
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let place = fetched.join(&hex).join("debuginfo");
    let run = || {
        let env = [("DEBUGINFOD_CACHE_PATH", fetched.as_path())];
        profile_with(dir.path(), &cache, &stripped, &[], &env)
    };
    let (without, err) = run();
    assert!(err.contains("no debug info"), "{err}");
    assert!(!without.to_string().contains("spin.c:"), "{without}");
    std::fs::create_dir_all(place.parent().unwrap()).unwrap();
    objcopy(&["--only-keep-debug"], &full, &place);
    let (with, err) = run();
    assert!(
        err.contains(&format!("debug info from {}", place.display())),
        "{err}"
    );
    assert!(with.to_string().contains("spin.c:"), "{with}");
}

#[test]
fn a_damaged_cache_file_is_passed_over_and_written_anew() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let prog = compile(dir.path(), "spin", PROGRAM);
    let (first, _) = profile(dir.path(), &cache, &prog, &[]);
    let files = kept(&cache);
    assert!(!files.is_empty());
    for f in &files {
        std::fs::write(f, b"{\"key\": not json").unwrap();
    }
    let (second, _) = profile(dir.path(), &cache, &prog, &[]);
    assert_eq!(second, first);
    for f in &files {
        let text = std::fs::read(f).unwrap();
        assert!(
            serde_json::from_slice::<Value>(&text).is_ok(),
            "{} not written anew",
            f.display()
        );
    }
}

#[test]
fn an_unwritable_cache_is_no_error() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the cache's directory would be.
    let cache = dir.path().join("cache");
    std::fs::write(&cache, b"").unwrap();
    let prog = compile(dir.path(), "spin", PROGRAM);
    let (reports, _) = profile(dir.path(), &cache, &prog, &[]);
    let (plain, _) = profile(dir.path(), &cache, &prog, &["--no-symbol-cache"]);
    assert_eq!(reports, plain);
}

/// Forks, and the child `execv`s the program named by the first argument.
const SPAWNER: &str = r#"
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    pid_t pid = fork();
    if (pid == 0) {
        char *args[] = {argv[1], "200", 0};
        execv(argv[1], args);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    return WEXITSTATUS(st);
}
"#;

#[test]
fn a_followed_child_that_execs_keeps_its_answers_too() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let spawner = compile(dir.path(), "spawner", SPAWNER);
    let spun = compile(dir.path(), "spin", PROGRAM);
    stdout_of(
        coprof()
            .env("XDG_CACHE_HOME", &cache)
            .args(["profile", "--follow-children", "-o"])
            .arg(dir.path().join("p.json"))
            .arg("--")
            .arg(&spawner)
            .arg(&spun),
    );
    // The child is a process of its own that ends as its program did; the
    // answers about its program were kept before it did.
    let keyed = |prog: &Path| {
        let name = serde_json::to_string(prog).unwrap();
        kept(&cache)
            .iter()
            .any(|f| std::fs::read_to_string(f).unwrap().contains(&name))
    };
    assert!(keyed(&spawner), "the parent's program");
    assert!(keyed(&spun), "the child's program");
}

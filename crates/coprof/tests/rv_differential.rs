//! Differential test of the RV64 simulator (issue 3, "Correctness"): every
//! program of the corpus in `crates/coprof-rv/tests/programs/`, compiled
//! with `riscv64-linux-gnu-gcc -static` (C++ with `riscv64-linux-gnu-g++`)
//! at -O0, -O2 and -Os, and dynamically linked at -O2 (some also at -O2
//! for the bit-manipulation extensions Zba, Zbb and Zbs), by
//! `scripts/build-test-programs.sh`, runs under `qemu-riscv64` (an
//! independent RV64 implementation) and under `coprof run --`, with the
//! same arguments, environment, working directory and standard input. Their
//! stdout, stderr and exit status must be identical, byte for byte.
//!
//! Every mismatch is collected and reported together, by program and
//! optimisation level, with the first differing line and an excerpt of
//! both outputs around it. A missing cross compiler or qemu that the build
//! script cannot install fails the test with the script's message: the
//! test never passes without having compared anything.
//!
//! `COPROF_RV_DIFF_ONLY=name[,name…]` restricts the run to binaries whose
//! name (for example `fp_convert-O2`) contains one of the given strings.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The optimisation levels the build script produces for every program,
/// as binary suffixes.
const LEVELS: [&str; 4] = ["O0", "O2", "Os", "dyn"];

/// The build of the programs whose source holds [`ZB_MARK`]: -O2 for the
/// bit-manipulation extensions Zba, Zbb and Zbs.
const ZB_LEVEL: &str = "zb";
const ZB_MARK: &str = "coprof-corpus: +zb";

/// The levels `name` was built at: [`LEVELS`], and [`ZB_LEVEL`] when its
/// source asks for it, as the build script decides.
fn levels_of(name: &str) -> Vec<&'static str> {
    let dir = repo_root().join("crates/coprof-rv/tests/programs");
    let source = ["c", "cpp"]
        .iter()
        .find_map(|ext| std::fs::read_to_string(dir.join(format!("{name}.{ext}"))).ok())
        .unwrap_or_else(|| panic!("no source of {name} in {}", dir.display()));
    let mut levels = LEVELS.to_vec();
    if source.contains(ZB_MARK) {
        levels.push(ZB_LEVEL);
    }
    levels
}

/// Where the dynamically linked builds (level `dyn`) find their loader and
/// libraries: the cross compiler's, which qemu is told with `-L` and
/// coprof finds by default.
const SYSROOT: &str = "/usr/riscv64-linux-gnu";

/// Arguments given to every program unless [`args_for`] says otherwise:
/// plain words, a space, an empty argument and a control character, so that
/// the initial stack's argv strings are checked byte for byte.
const DEFAULT_ARGS: [&str; 4] = ["alpha", "two words", "", "tab\there"];

/// Standard input given to every program (the last line has no newline).
const STDIN: &[u8] = b"line one\nsecond line\n\nlast without newline";

/// The whole environment of both runs (everything else is cleared, so the
/// host's variables, and qemu's own `QEMU_*` settings, cannot leak in).
const ENV: [(&str, &str); 5] = [
    ("LC_ALL", "C"),
    ("COPROF_TEST_GREETING", "hello"),
    ("COPROF_TEST_EMPTY", ""),
    ("COPROF_TEST_SPACES", "a b  c"),
    ("COPROF_TEST_EQUALS", "x=y=z"),
];

/// Longest a single run may take before it counts as hung.
const TIMEOUT: Duration = Duration::from_secs(300);

fn args_for(program: &str) -> Vec<&'static str> {
    match program {
        // A status that is neither 0 nor 1 nor the program's default of 3.
        "exit_status" => vec!["42"],
        _ => DEFAULT_ARGS.to_vec(),
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// What one run of a program produced.
#[derive(Debug)]
struct Outcome {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    status: String,
}

/// Describes an exit status in a form that compares a signal death with a
/// normal exit sensibly ("exit 3", "signal 11").
fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        (None, None) => "unknown status".to_string(),
    }
}

/// Runs `cmd` with the fixed environment, working directory and stdin,
/// capturing both output streams, killing it after [`TIMEOUT`].
fn run(mut cmd: Command) -> Result<Outcome, String> {
    cmd.env_clear()
        .envs(ENV)
        .current_dir("/tmp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let feeder = std::thread::spawn(move || {
        // A program that exits without reading stdin closes the pipe: a
        // broken pipe here is not an error of the program.
        let _ = stdin.write_all(STDIN);
    });
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{shown} did not finish within {TIMEOUT:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for {shown}: {e}")),
        }
    };
    let _ = feeder.join();
    Ok(Outcome {
        stdout: out_reader.join().expect("stdout reader"),
        stderr: err_reader.join().expect("stderr reader"),
        status: describe(status),
    })
}

/// Builds the corpus with the project's script (which installs the cross
/// compiler and qemu-user when they are missing) and returns the directory
/// of binaries. Panics with the script's own output when it fails.
fn build_corpus() -> PathBuf {
    prepared(
        "scripts/build-test-programs.sh",
        "target/rv-programs",
        "the RV64 test corpus could not be built",
        "It needs riscv64-linux-gnu-gcc (Debian packages gcc-riscv64-linux-gnu, \
         libc6-dev-riscv64-cross) and qemu-riscv64 (package qemu-user); \
         scripts/install-deps.sh installs them as root.",
    )
}

/// Runs the project's `script` with the directory `out` (both relative to
/// the repository's root) and returns that directory; when the script
/// fails, panics with `failure`, the script and its status, `hint`, and
/// the script's own output.
fn prepared(script: &str, out: &str, failure: &str, hint: &str) -> PathBuf {
    let root = repo_root();
    let out = root.join(out);
    let script = root.join(script);
    let result = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        result.status.success(),
        "{failure}: {} exited with {}.\n{hint}\n--- stdout\n{}\n--- stderr\n{}",
        script.display(),
        describe(result.status),
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
    out
}

/// The corpus programs' names, from the C and C++ sources (so a new
/// program is picked up without touching this file).
fn program_names() -> Vec<String> {
    let dir = repo_root().join("crates/coprof-rv/tests/programs");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| {
            let p = e.ok()?.path();
            let source = matches!(p.extension()?.to_str()?, "c" | "cpp");
            source.then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    names.sort();
    assert!(
        names.len() >= 10,
        "the corpus in {} has only {} programs",
        dir.display(),
        names.len()
    );
    names
}

/// Where two byte streams first differ, as a readable excerpt: the line
/// number, a few lines of common context, then both sides' lines from the
/// first difference on. Returns None when they are equal.
fn diff_excerpt(stream: &str, reference: &[u8], candidate: &[u8]) -> Option<String> {
    if reference == candidate {
        return None;
    }
    let r = String::from_utf8_lossy(reference);
    let c = String::from_utf8_lossy(candidate);
    let rl: Vec<&str> = r.split_inclusive('\n').collect();
    let cl: Vec<&str> = c.split_inclusive('\n').collect();
    let first = rl
        .iter()
        .zip(&cl)
        .position(|(a, b)| a != b)
        .unwrap_or(rl.len().min(cl.len()));
    let differing =
        rl.iter().zip(&cl).filter(|(a, b)| a != b).count() + rl.len().abs_diff(cl.len());
    let mut s = format!(
        "  {stream} differs from line {} on ({} of {} lines differ; qemu {} bytes / {} lines, coprof {} bytes / {} lines)\n",
        first + 1,
        differing,
        rl.len().max(cl.len()),
        reference.len(),
        rl.len(),
        candidate.len(),
        cl.len()
    );
    let clip = |line: &str| -> String {
        let t = line.trim_end_matches('\n');
        if t.chars().count() > 200 {
            format!("{}…", t.chars().take(200).collect::<String>())
        } else {
            t.to_string()
        }
    };
    for (i, line) in rl
        .iter()
        .enumerate()
        .take(first)
        .skip(first.saturating_sub(2))
    {
        s += &format!("    {:>5}   {}\n", i + 1, clip(line));
    }
    for (i, line) in rl.iter().enumerate().skip(first).take(4) {
        s += &format!("    {:>5} q {}\n", i + 1, clip(line));
    }
    if rl.len() <= first {
        s += "          q (end of output)\n";
    }
    for (i, line) in cl.iter().enumerate().skip(first).take(4) {
        s += &format!("    {:>5} c {}\n", i + 1, clip(line));
    }
    if cl.len() <= first {
        s += "          c (end of output)\n";
    }
    Some(s)
}

/// Compares a reference run with a candidate run; None when identical.
fn compare(label: &str, reference: &Outcome, candidate: &Outcome) -> Option<String> {
    let mut report = String::new();
    if reference.status != candidate.status {
        report += &format!(
            "  exit status: qemu {}, coprof {}\n",
            reference.status, candidate.status
        );
    }
    if let Some(d) = diff_excerpt("stdout", &reference.stdout, &candidate.stdout) {
        report += &d;
    }
    if let Some(d) = diff_excerpt("stderr", &reference.stderr, &candidate.stderr) {
        report += &d;
    }
    (!report.is_empty()).then(|| format!("--- {label}\n{report}"))
}

/// The sysroot a dynamically linked program of the tests runs with: the
/// cross compiler's for the corpus's `dyn` builds (which coprof finds by
/// default), the Debian root a Debian program was unpacked in (which it
/// is told).
fn sysroot_of(bin: &Path) -> Option<(PathBuf, bool)> {
    if bin.to_string_lossy().ends_with("-dyn") {
        return Some((PathBuf::from(SYSROOT), false));
    }
    let root = bin.ancestors().find(|a| a.ends_with("sysroot"))?;
    Some((root.to_path_buf(), true))
}

fn qemu_command(bin: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("qemu-riscv64");
    if let Some((sysroot, _)) = sysroot_of(bin) {
        c.arg("-L").arg(sysroot);
    }
    c.arg(bin).args(args);
    c
}

fn coprof_command(bin: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("coprof"));
    c.arg("run");
    if let Some((sysroot, true)) = sysroot_of(bin) {
        c.arg("--sysroot").arg(sysroot);
    }
    c.arg("--").arg(bin).args(args);
    c
}

#[test]
fn corpus_matches_qemu() {
    let dir = build_corpus();
    let only: Vec<String> = std::env::var("COPROF_RV_DIFF_ONLY")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let mut mismatches = Vec::new();
    let mut compared = 0;
    let mut with_zb = 0;
    for name in program_names() {
        let levels = levels_of(&name);
        with_zb += levels.contains(&ZB_LEVEL) as usize;
        for level in levels {
            let label = format!("{name}-{level}");
            if !only.is_empty() && !only.iter().any(|o| label.contains(o.as_str())) {
                continue;
            }
            let bin = dir.join(&label);
            assert!(bin.is_file(), "{} was not built", bin.display());
            let args = args_for(&name);
            let reference = match run(qemu_command(&bin, &args)) {
                Ok(o) => o,
                Err(e) => panic!("the reference run failed, so nothing can be compared: {e}"),
            };
            compared += 1;
            match run(coprof_command(&bin, &args)) {
                Ok(candidate) => {
                    if let Some(m) = compare(&format!("{name} -{level}"), &reference, &candidate) {
                        mismatches.push(m);
                    }
                }
                Err(e) => mismatches.push(format!("--- {name} -{level}\n  {e}\n")),
            }
        }
    }
    assert!(
        compared > 0,
        "no program matched COPROF_RV_DIFF_ONLY={only:?}"
    );
    assert!(
        with_zb >= 2,
        "{with_zb} programs built for Zba, Zbb and Zbs"
    );
    assert!(
        mismatches.is_empty(),
        "{} of {compared} runs differ between qemu-riscv64 and `coprof run` \
         (q = qemu, c = coprof):\n{}",
        mismatches.len(),
        mismatches.join("")
    );
}

/// The comparison itself must see every kind of difference, or the test
/// above could pass while the simulator is wrong. Two qemu runs of the same
/// binary with different arguments differ in status and stdout.
#[test]
fn comparison_reports_status_and_output_differences() {
    let dir = build_corpus();
    let bin = dir.join("exit_status-O2");
    let a = run(qemu_command(&bin, &["5"])).expect("qemu run");
    let b = run(qemu_command(&bin, &["6"])).expect("qemu run");
    let same = run(qemu_command(&bin, &["5"])).expect("qemu run");
    assert_eq!(a.status, "exit 5");
    assert!(
        compare("same", &a, &same).is_none(),
        "identical runs reported as different"
    );
    let report = compare("exit_status -O2", &a, &b).expect("a difference");
    assert!(
        report.contains("exit status: qemu exit 5, coprof exit 6"),
        "{report}"
    );
    assert!(report.contains("stdout differs from line"), "{report}");
    assert!(report.contains("exiting with status 5"), "{report}");
    assert!(report.contains("exiting with status 6"), "{report}");
    assert!(!report.contains("stderr differs"), "{report}");
}

#[test]
fn excerpt_names_the_first_differing_line_and_truncation() {
    let r = b"a\nb\nc\nd\n";
    let c = b"a\nb\nX\nd\n";
    let e = diff_excerpt("stdout", r, c).expect("differs");
    assert!(e.contains("from line 3"), "{e}");
    assert!(e.contains("q c") && e.contains("c X"), "{e}");
    assert!(e.contains("1 of 4 lines differ"), "{e}");
    let short = diff_excerpt("stderr", b"one\ntwo\n", b"one\n").expect("differs");
    assert!(short.contains("from line 2"), "{short}");
    assert!(short.contains("c (end of output)"), "{short}");
    assert!(diff_excerpt("stdout", b"same", b"same").is_none());
    // A difference inside the last line without a newline still counts.
    assert!(diff_excerpt("stdout", b"x\ny", b"x\nz").is_some());
}

/// Fetches the Debian programs with the project's script and returns
/// their directory. Panics with the script's own output when it fails.
fn fetch_debian_programs() -> PathBuf {
    prepared(
        "scripts/fetch-debian-rv.sh",
        "target/debian-rv",
        "the Debian RV64 programs could not be fetched",
        "It downloads from deb.debian.org (or $DEBIAN_MIRROR).",
    )
}

/// Command lines of the Debian programs, each run under qemu and coprof:
/// shells that fork, pipe and trap signals, text tools, checksums and
/// compression over the repository's own files, an archiver (C++, with
/// extended attributes and file flags), and a Go program; then the
/// dynamically linked ones (`sysroot/usr/bin/…`, over Debian's glibc and
/// their libraries): gzip, xz (which asks for a Landlock sandbox), diff
/// and cmp, Lua running the project's own Lua workloads, SQLite's shell
/// running its SQL workload, Python 3.13 (regular expressions, JSON,
/// hashing, zlib, its Mersenne Twister, big integers), Perl, grep with
/// PCRE2's JIT compiler, sed, gawk with arbitrary precision, jq, the Rust
/// programs ripgrep and fd on two threads, openssl's digests and
/// ciphers, zstd on two threads, bzip2, tar and file.
fn debian_commands() -> Vec<(&'static str, Vec<String>)> {
    let root = repo_root();
    let file = |p: &str| root.join(p).to_string_lossy().into_owned();
    let readme = file("README.md");
    // dar writes its archive here; both runs of a command write the same.
    let archive = file("target/debian-rv/scripts-archive");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let with = |v: &[&str], f: &str| {
        let mut v = s(v);
        v.push(f.to_string());
        v
    };
    vec![
        ("busybox", s(&["echo", "hello", "world"])),
        (
            "busybox",
            s(&["sh", "-c", "for i in 1 2 3; do echo $i; done | sort -r"]),
        ),
        (
            "busybox",
            s(&[
                "sh",
                "-c",
                "i=0; s=0; while [ $i -lt 3000 ]; do s=$((s + i * i % 7)); i=$((i + 1)); done; echo $s",
            ]),
        ),
        (
            "busybox",
            s(&[
                "awk",
                "BEGIN { for (i = 0; i < 30000; i++) s += sin(i) * (i % 13); printf \"%.6f\\n\", s }",
            ]),
        ),
        ("busybox", with(&["sha256sum"], &readme)),
        ("busybox", with(&["md5sum"], &readme)),
        ("busybox", with(&["gzip", "-9", "-c"], &readme)),
        ("busybox", with(&["sort"], &readme)),
        ("busybox", with(&["wc"], &readme)),
        ("busybox", with(&["sed", "-e", "s/[aeiou]/_/g"], &readme)),
        ("busybox", with(&["od", "-A", "x", "-t", "x1z", "-N", "96"], &readme)),
        ("busybox", s(&["tr", "a-z", "A-Z"])),
        ("busybox", s(&["printf", "%05.2f %x %s\\n", "3.14159", "255", "ok"])),
        ("busybox", s(&["date", "-u", "-d", "@86400"])),
        ("busybox", s(&["expr", "6", "*", "7"])),
        ("busybox", with(&["find"], &file("scripts"))),
        (
            "busybox",
            s(&[
                "sh",
                "-c",
                "echo $(( $(seq 100 | tr '\\n' + | sed 's/+$//') )); exit 7",
            ]),
        ),
        ("busybox", s(&["ls", "/nonexistent"])),
        (
            "bash",
            s(&[
                "-c",
                "declare -A m; for w in one two three two one one; do m[$w]=$(( ${m[$w]:-0} + 1 )); done; \
                 for k in one two three; do echo $k ${m[$k]}; done",
            ]),
        ),
        (
            "bash",
            s(&[
                "-c",
                "fib() { if (( $1 < 2 )); then echo $1; else echo $(( $(fib $(( $1 - 1 ))) + $(fib $(( $1 - 2 ))) )); fi; }; fib 9",
            ]),
        ),
        (
            "bash",
            s(&[
                "-c",
                "x=(a b c d); echo ${#x[@]} ${x[@]:1:2}; v=hello; echo ${v^^} ${v:1:3}; printf '%s-%d\\n' a 1 b 2",
            ]),
        ),
        ("bash", s(&["-c", "while read -r l; do echo \"[$l]\"; done"])),
        (
            "bash",
            s(&["-c", "trap 'echo trapped' USR1; kill -USR1 $$; echo after"]),
        ),
        (
            "dar",
            s(&["-c", &archive, "-R", &file("scripts"), "-Q", "-w"]),
        ),
        ("dar", s(&["-l", &archive, "-Q"])),
        ("dar", s(&["-t", &archive, "-Q"])),
        ("shfmt", with(&[], &file("scripts/test.sh"))),
        ("shfmt", with(&["-i", "2", "-ci"], &file("scripts/fetch-debian-rv.sh"))),
        ("shfmt", with(&["-d"], &file("scripts/install-deps.sh"))),
        ("shfmt", s(&["--version"])),
        ("sysroot/usr/bin/gzip", with(&["-9", "-c"], &readme)),
        ("sysroot/usr/bin/xz", with(&["-6", "-c"], &readme)),
        ("sysroot/usr/bin/xz", with(&["-l"], &file("target/debian-rv/readme.xz"))),
        (
            "sysroot/usr/bin/diff",
            s(&["-u", &file("scripts/test.sh"), &file("scripts/install-deps.sh")]),
        ),
        ("sysroot/usr/bin/diff", s(&["-r", "-q", &file("docs"), &file("scripts")])),
        ("sysroot/usr/bin/cmp", s(&[&readme, &file("docs/profile.md")])),
        // coreutils, which pipelines and `#!/usr/bin/env` scripts run.
        ("sysroot/usr/bin/sort", s(&["-u", "-r", &readme])),
        (
            "sysroot/usr/bin/sha256sum",
            s(&[&readme, &file("docs/profile.md")]),
        ),
        ("sysroot/usr/bin/wc", s(&[&readme, &file("docs/profile.md")])),
        (
            "sysroot/usr/bin/lua5.4",
            s(&[&file("workloads/real/lua/interp.lua"), "300"]),
        ),
        (
            "sysroot/usr/bin/lua5.4",
            s(&[&file("workloads/real/lua/tables.lua"), "2000"]),
        ),
        (
            "sysroot/usr/bin/sqlite3",
            s(&[
                "-cmd",
                "CREATE TABLE config(rows INTEGER); INSERT INTO config VALUES(2000);",
                ":memory:",
                &format!(".read {}", file("workloads/real/sql/orders.sql")),
            ]),
        ),
        (
            "sysroot/usr/bin/sqlite3",
            s(&[
                "-json",
                ":memory:",
                "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000) \
                 SELECT i % 7 AS k, count(*) AS n, sum(i * i) AS s, printf('%.3f', avg(i)) AS a \
                 FROM c GROUP BY k ORDER BY s DESC",
            ]),
        ),
        ("sysroot/usr/bin/python3.13", s(&["-B", "-c", PYTHON, &readme])),
        ("sysroot/usr/bin/python3.13", s(&["-B", "-c", PYTHON_STDLIB])),
        ("sysroot/usr/bin/perl", s(&["-e", PERL, &readme])),
        // -P compiles each pattern to RISC-V code with PCRE2's JIT, which
        // then asks riscv_flush_icache before running it.
        ("sysroot/usr/bin/grep", with(&["-n", "-P", r"(?i)\bco(prof|proc)\w*\s+\w+"], &readme)),
        ("sysroot/usr/bin/grep", with(&["-c", "-E", "^(#|-) .*(RAP|loop)"], &readme)),
        ("sysroot/usr/bin/sed", with(&["-n", "-E", "s/(co)(prof)/\\2\\1/gp"], &readme)),
        (
            "sysroot/usr/bin/gawk",
            with(
                &["{ n += NF; w[tolower($1)]++ } END { print n, length(w); printf \"%.9f\\n\", sin(1) + exp(1) }"],
                &readme,
            ),
        ),
        // Arbitrary precision, on GMP and MPFR.
        ("sysroot/usr/bin/gawk", s(&["-M", "BEGIN { print 3^150; print 2^0.5 }"])),
        (
            "sysroot/usr/bin/jq",
            s(&["-n", "[range(0; 2000)] | map(select(. % 7 == 3)) | {n: length, sum: add, last: .[-1]}"]),
        ),
        // Rust programs that search on two threads.
        (
            "sysroot/usr/bin/rg",
            s(&["-c", "--sort", "path", "-j", "2", "unsafe", &file("crates/coprof-rv/src")]),
        ),
        (
            "sysroot/usr/bin/fdfind",
            // fd sorts what it finds only when the search ends within
            // its buffering time (100 ms by default), else it prints in
            // the order its two threads find: a busy machine slows qemu
            // past it. Ten minutes keep both runs sorted.
            s(&[
                "-e",
                "rs",
                "-j",
                "2",
                "--max-buffer-time",
                "600000",
                "--base-directory",
                &file("crates/coprof-rv"),
                ".",
            ]),
        ),
        ("sysroot/usr/bin/openssl", with(&["dgst", "-sha3-256"], &readme)),
        (
            "sysroot/usr/bin/openssl",
            with(
                &["enc", "-aes-256-cbc", "-pbkdf2", "-pass", "pass:x", "-S", "0011223344556677", "-iv", "00112233445566778899aabbccddeeff", "-a", "-in"],
                &readme,
            ),
        ),
        // Two compression threads.
        ("sysroot/usr/bin/zstd", with(&["-T2", "-3", "-c"], &file("docs/PERFORMANCE.md"))),
        ("sysroot/usr/bin/bzip2", with(&["-9", "-c"], &readme)),
        (
            "sysroot/usr/bin/tar",
            s(&["-cf", "-", "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "-C", &file("."), "scripts"]),
        ),
        // libmagic reads its database from the sysroot.
        ("sysroot/usr/bin/file", s(&[&readme, &file("target/debian-rv/shfmt")])),
        // A database on a file in write-ahead-log mode: SQLite maps its
        // -shm index MAP_SHARED and writes through the mapping. Each run
        // starts the table afresh, so both print the same.
        (
            "sysroot/usr/bin/sqlite3",
            s(&[
                &file("target/debian-rv/wal-test.db"),
                "PRAGMA journal_mode=WAL; DROP TABLE IF EXISTS t; CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT); \
                 WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000) \
                 INSERT INTO t SELECT i, printf('row %05d', i) FROM c; \
                 SELECT count(*), sum(k), max(v) FROM t; PRAGMA wal_checkpoint(TRUNCATE);",
            ]),
        ),
    ]
}

/// A Perl program over a text file: hashes, sorting, regular expressions
/// and formatted numbers.
const PERL: &str = r#"
my %w; my $lines = 0;
while (<>) { $lines++; $w{lc $1}++ while /([A-Za-z]{3,})/g }
my @top = (sort { $w{$b} <=> $w{$a} || $a cmp $b } keys %w)[0..4];
print "$lines lines, ", scalar(keys %w), " words: @top\n";
my @a = sort { $a <=> $b } map { ($_ * 7919) % 10007 } 1..20000;
printf "%d %d %.10f\n", $a[0], $a[-1], atan2(1, 1) * 4;
"#;

/// A Python program over a text file (its first argument), for the Debian
/// Python under qemu and coprof. `-B` keeps it from writing bytecode into
/// the sysroot.
const PYTHON: &str = r#"
import re, json, collections, functools, itertools, struct, hashlib, zlib, random, math, sys
words = re.findall(r"[a-z]+", open(sys.argv[1]).read().lower())
print(json.dumps(collections.Counter(words).most_common(5)))
print(hashlib.sha256(" ".join(words).encode()).hexdigest())
print(len(zlib.compress(" ".join(words).encode(), 9)))
random.seed(7)
xs = sorted(random.random() for _ in range(20000))
print("%.12f %.12f" % (xs[0], math.fsum(xs)))
print(struct.pack("<dI", math.pi, 7).hex())
@functools.lru_cache(None)
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(300), sorted(itertools.permutations("abcd"))[7])
"#;

/// A Python program over the parts of the standard library that lean on
/// the kernel (libpython3.13-stdlib): asyncio's event loop and timers,
/// threads on a queue and a thread pool, a process pool and a child
/// process talking through pipes and semaphores (forks of the
/// interpreter), a subprocess fed on standard input, ctypes calling libc
/// with a Python callback (libffi writes a trampoline at run time),
/// decimal (libmpdec) and uuid, and an HTTP server on a thread answering
/// urllib over loopback TCP. Everything it prints is the same on every
/// run.
const PYTHON_STDLIB: &str = r#"
import asyncio, threading, queue, multiprocessing as mp, subprocess, ctypes, decimal, uuid
import socketserver, http.server, urllib.request, concurrent.futures as cf
def square(x): return x * x
async def later(i):
    await asyncio.sleep(0.001 * (i % 5))
    return i * i
async def gathered():
    return sum(await asyncio.gather(*(later(i) for i in range(40))))
class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"hello " + self.path.encode())
    def log_message(self, *a): pass
if __name__ == "__main__":
    print("asyncio", asyncio.run(gathered()))
    q, out = queue.Queue(), []
    def worker():
        while (x := q.get()) is not None: out.append(x * x)
    ts = [threading.Thread(target=worker) for _ in range(3)]
    for t in ts: t.start()
    for i in range(300): q.put(i)
    for _ in ts: q.put(None)
    for t in ts: t.join()
    print("threads", sum(out), len(out))
    with cf.ThreadPoolExecutor(3) as ex: print("thread pool", sum(ex.map(square, range(100))))
    pool = mp.Pool(2); print("process pool", pool.map(square, range(12))); pool.close(); pool.join()
    mq = mp.Queue(); p = mp.Process(target=mq.put, args=("from a child",)); p.start()
    print(mq.get()); p.join(); print("exit code", p.exitcode)
    r = subprocess.run(["sh", "-c", "read x; echo got $x; exit 4"], input=b"hi\n", capture_output=True)
    print("subprocess", r.stdout, r.returncode)
    libc = ctypes.CDLL(None)
    arr = (ctypes.c_int * 6)(5, 2, 9, 1, 7, 3)
    compare = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
    libc.qsort(arr, 6, ctypes.sizeof(ctypes.c_int), compare(lambda a, b: a[0] - b[0]))
    print("ctypes", libc.strlen(b"coprof"), list(arr))
    decimal.getcontext().prec = 50
    print("decimal", decimal.Decimal(2).sqrt(), uuid.uuid5(uuid.NAMESPACE_DNS, "coprof.example"))
    srv = socketserver.TCPServer(("127.0.0.1", 0), Hello)
    t = threading.Thread(target=srv.serve_forever); t.start()
    print("http", urllib.request.urlopen(f"http://127.0.0.1:{srv.server_address[1]}/x").read())
    srv.shutdown(); t.join(); srv.server_close()
"#;

/// Real programs of a Linux distribution, built by others with a newer
/// glibc than the corpus (Debian 13's 2.41, which asks `riscv_hwprobe` at
/// startup): busybox, bash, dar and the Go program shfmt, and the
/// dynamically linked gzip, xz, diff, cmp, lua5.4 and sqlite3 with
/// Debian's own libraries, print and exit under `coprof run` exactly as
/// under qemu.
#[test]
fn debian_programs_match_qemu() {
    let dir = fetch_debian_programs();
    // What `xz -l` lists, made by the host's xz (the fetch script's own
    // tool).
    let readme = std::fs::File::open(repo_root().join("README.md")).unwrap();
    let xz = Command::new("xz")
        .args(["-6", "-c"])
        .stdin(readme)
        .output()
        .expect("xz runs");
    assert!(xz.status.success(), "xz -c README.md failed");
    std::fs::write(dir.join("readme.xz"), xz.stdout).unwrap();
    let mut mismatches = Vec::new();
    let commands = debian_commands();
    for (prog, args) in &commands {
        let bin = dir.join(prog);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let label = format!("{prog} {}", args.join(" "));
        let reference = run(qemu_command(&bin, &args)).unwrap_or_else(|e| {
            panic!("the reference run failed, so nothing can be compared: {e}")
        });
        // A dynamically linked program that cannot start (a library or
        // Python's standard library missing from the sysroot) fails alike
        // under both: each of these prints its result and exits 0 or 1.
        if prog.starts_with("sysroot/") {
            assert!(
                !reference.stdout.is_empty()
                    && matches!(reference.status.as_str(), "exit 0" | "exit 1"),
                "{label}: qemu's run printed nothing or failed ({}): {}",
                reference.status,
                String::from_utf8_lossy(&reference.stderr)
            );
        }
        match run(coprof_command(&bin, &args)) {
            Ok(candidate) => mismatches.extend(compare(&label, &reference, &candidate)),
            Err(e) => mismatches.push(format!("--- {label}\n  {e}\n")),
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} runs differ between qemu-riscv64 and `coprof run` (q = qemu, c = coprof):\n{}",
        mismatches.len(),
        commands.len(),
        mismatches.join("")
    );
}

/// `coprof profile` of a Go program, of a dynamically linked Lua and
/// Python and of a shell pipeline: every report, the program's own output and status as
/// it would be, stripped C code shown by address with a note, stripped Go
/// code by function, file and line from the Go runtime's own table, and
/// a library's code by the library's name, with its lines when its debug
/// files are in the sysroot.
#[test]
fn debian_programs_profile() {
    let dir = fetch_debian_programs();
    let script = repo_root().join("scripts/test.sh");
    let lua = repo_root().join("workloads/real/lua/tables.lua");
    for (prog, args) in [
        ("shfmt", vec![script.to_string_lossy().into_owned()]),
        (
            "sysroot/usr/bin/lua5.4",
            vec![lua.to_string_lossy().into_owned(), "2000".into()],
        ),
        (
            "sysroot/usr/bin/python3.13",
            vec![
                "-B".into(),
                "-c".into(),
                "print(sum(i * i for i in range(10**5)))".into(),
            ],
        ),
        (
            "busybox",
            vec![
                "sh".into(),
                "-c".into(),
                "seq 2000 | sort -r | md5sum".into(),
            ],
        ),
    ] {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("coprof"));
        cmd.arg("profile")
            .arg("--sysroot")
            .arg(dir.join("sysroot"))
            .arg("--")
            .arg(dir.join(prog))
            .args(&args);
        let out = run(cmd).expect("coprof profile runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status, "exit 0", "{prog}: {err}");
        assert!(text.contains("exit status 0"), "{prog}: {text}");
        for report in [
            "== loops",
            "== ranges-pc",
            "== ranges-load-value",
            "== values",
            "== sample",
        ] {
            assert!(text.contains(report), "{prog}: no {report} in\n{text}");
        }
        if prog == "shfmt" {
            // Stripped, but Go keeps its own table of functions and lines.
            assert!(
                err.contains("from the Go runtime's table (.gopclntab)"),
                "{prog}: the note on Go's table is missing: {err}"
            );
            // Go 1.24's module data found: inlined code is named.
            assert!(
                err.contains("with inlined frames from its inlining trees"),
                "{prog}: Go's inlining trees were not found: {err}"
            );
            assert!(
                text.contains("runtime.") && text.contains(".go:"),
                "{prog}: no Go function with its file and line in\n{text}"
            );
        } else if prog.ends_with("python3.13") {
            // Stripped, but the interpreter exports its functions: the
            // bytecode loop is named.
            assert!(
                text.contains("_PyEval_EvalFrameDefault+0x"),
                "{prog}: no loop of the bytecode interpreter named in\n{text}"
            );
        } else if prog.ends_with("lua5.4") {
            // Dynamically linked: the libraries' code is named with the
            // library it lies in, by its dynamic symbols or by address.
            assert!(
                text.contains(" in libc.so.6") || text.contains("libc.so.6+0x"),
                "{prog}: no code of libc.so.6 named in\n{text}"
            );
            // libc6-dbg, unpacked in the sysroot, gives libc's lines.
            assert!(
                text.lines()
                    .any(|l| l.contains(".c:") && l.contains(") in libc.so.6")),
                "{prog}: no line of libc's sources (from libc6-dbg) in\n{text}"
            );
        } else {
            assert!(
                err.contains("no debug info and no symbol"),
                "{prog}: the note on stripped code is missing: {err}"
            );
        }
    }
}

/// `coprof profile --follow-children --sysroot DIR/sysroot -o FILE --
/// PROG ARGS` for the Debian programs fetched into `dir`.
fn following(dir: &Path, file: &Path, prog: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("coprof"));
    cmd.args(["profile", "--follow-children", "--sysroot"])
        .arg(dir.join("sysroot"))
        .arg("-o")
        .arg(file)
        .arg("--")
        .arg(prog)
        .args(args);
    cmd
}

/// `coprof profile --follow-children` on programs that start others:
/// busybox's shell running a pipeline of its own applets (forked children,
/// stripped code), Python's `subprocess` running the interpreter
/// again (`clone3` with CLONE_CLEAR_SIGHAND, then `execve` of a
/// dynamically linked RISC-V program, under the sysroot), and Python's
/// `os.system`, whose /bin/sh is the root's dash. The programs'
/// output is as without following, every child has a profile of its own
/// whose parent is the program, and the children write nothing on the
/// output they share with the program.
#[test]
fn debian_programs_profile_their_children() {
    let dir = fetch_debian_programs();
    let out_dir = tempfile::tempdir().unwrap();
    let spawn = "import subprocess, sys\n\
                 r = subprocess.run([sys.executable, '-B', '-c', \
                 'import sys; print(sum(range(1000))); sys.exit(3)'], capture_output=True)\n\
                 print('the child said', r.stdout, 'and exited', r.returncode)\n";
    for (name, prog, args, output, children) in [
        (
            "sh",
            "busybox",
            vec!["sh", "-c", "seq 5 | sort -r | uniq -c; echo done"],
            "      1 5\n      1 4\n      1 3\n      1 2\n      1 1\ndone\n",
            3,
        ),
        (
            "python",
            "sysroot/usr/bin/python3.13",
            vec!["-B", "-c", spawn],
            "the child said b'499500\\n' and exited 3\n",
            1,
        ),
        // A pool of two workers, forks of the interpreter that run no
        // other program: each is profiled to its exit.
        (
            "pool",
            "sysroot/usr/bin/python3.13",
            vec![
                "-B",
                "-c",
                "import multiprocessing as mp\n\
                 def square(x): return x * x\n\
                 if __name__ == '__main__':\n    \
                 pool = mp.Pool(2); print(pool.map(square, range(8))); pool.close(); pool.join()\n",
            ],
            "[0, 1, 4, 9, 16, 25, 36, 49]\n",
            2,
        ),
        // `system` runs the root's /bin/sh (Debian's dash, RISC-V), which
        // forks for the pipeline and execs the root's gzip twice.
        (
            "system",
            "sysroot/usr/bin/python3.13",
            vec![
                "-B",
                "-c",
                "import os; print('status', os.system('echo from dash; echo abc | gzip -c | gzip -dc'))",
            ],
            "from dash\nabc\nstatus 0\n",
            4,
        ),
    ] {
        let file = out_dir.path().join(format!("{name}.json"));
        let out = run(following(&dir, &file, &dir.join(prog), &args)).expect("coprof profile runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status, "exit 0", "{name}: {err}");
        // The program's output (on standard error under `coprof profile`),
        // then only the parent's own notes.
        assert!(err.contains(output), "{name}: {err}");
        let notes = err.lines().filter(|l| l.starts_with("coprof:")).count();
        assert!(
            notes <= 1,
            "{name}: children wrote on the program's stderr: {err}"
        );
        let main: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let listed = main["children"].as_array().cloned().unwrap_or_default();
        assert_eq!(listed.len(), children, "{name}: {listed:?}");
        let mut uniq = 0;
        for c in &listed {
            let child: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(c["file"].as_str().unwrap()).unwrap(),
            )
            .unwrap();
            assert_eq!(child["process"]["pid"], c["pid"], "{name}");
            assert!(child["instructions"].as_u64().unwrap() > 0, "{name}: {c}");
            assert_eq!(child["reports"].as_array().unwrap().len(), 5, "{name}");
            if name == "system" {
                let input = child["input"].as_str().unwrap();
                assert!(
                    input.ends_with("bin/sh") || input.ends_with("bin/gzip"),
                    "{name}: a child ran {input}"
                );
            }
            if name == "sh" {
                // busybox's shell runs seq and sort in its forked children
                // and execs itself as `uniq`: that child's profile says so.
                let command = c["command"].as_str().unwrap();
                let by_name = command.starts_with("uniq -c (") && command.ends_with("busybox)");
                assert_eq!(by_name, child["argv0"] == "uniq", "{name}: {command}");
                assert!(by_name || command.contains(" sh -c 'seq 5"), "{command}");
                uniq += by_name as usize;
            }
            if name == "pool" {
                // A worker took its tasks and left when the pool closed.
                assert_eq!(child["status"], 0, "{name}: {c}");
                assert!(child["input"].as_str().unwrap().ends_with("python3.13"), "{c}");
            }
            if name == "python" {
                // The interpreter run again, by its own path, to its exit.
                assert_eq!(child["status"], 3, "{name}: {c}");
                assert!(
                    child["input"].as_str().unwrap().ends_with("python3.13"),
                    "{c}"
                );
                assert!(child["instructions"].as_u64().unwrap() > 10_000_000, "{c}");
            }
        }
        assert_eq!(uniq, (name == "sh") as usize, "{name}: {listed:?}");
    }
}

/// `coprof profile --follow-children` of Debian's dash told to `exec` a
/// command in place of itself: the profile is of that command (Lua,
/// dynamically linked, found in the sysroot), its summary on standard
/// output.
#[test]
fn debian_shell_that_execs_its_command_is_followed() {
    let dir = fetch_debian_programs();
    let out_dir = tempfile::tempdir().unwrap();
    let file = out_dir.path().join("sh.json");
    let lua = repo_root().join("workloads/real/lua/tables.lua");
    let script = format!("exec /usr/bin/lua5.4 {} 300", lua.display());
    let sh = dir.join("sysroot/usr/bin/sh");
    let out = run(following(&dir, &file, &sh, &["-c", &script])).expect("coprof profile runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status, "exit 0", "{err}");
    assert!(
        err.contains("the program replaced itself with ")
            && err.contains("sysroot/usr/bin/lua5.4 (execve)"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("coprof profile of ")
            && text
                .lines()
                .next()
                .unwrap()
                .contains("sysroot/usr/bin/lua5.4 "),
        "{text}"
    );
    assert!(
        text.contains(" in libc.so.6") || text.contains("libc.so.6+0x"),
        "{text}"
    );
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(p["status"], 0);
    assert!(
        p["instructions"].as_u64().unwrap() > 1_000_000,
        "{}",
        p["instructions"]
    );
}

/// A program that replaces itself (`env`, `exec` in a shell) under `coprof
/// run`, which has nothing to report about it: a RISC-V program goes on in
/// a new simulator, a host one on the host, with the environment and the
/// descriptors it was given. With `--stats` the run says why it cannot.
#[test]
fn debian_programs_exec_in_place() {
    let dir = fetch_debian_programs();
    let busybox = dir.join("busybox").to_string_lossy().into_owned();
    let readme = repo_root().join("README.md").to_string_lossy().into_owned();
    let first_line = std::fs::read_to_string(&readme)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let coprof = |args: &[&str]| {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("coprof"));
        c.args(args);
        run(c).expect("coprof runs")
    };
    let out = coprof(&["run", "--", &busybox, "env", "-i", "A=1", &busybox, "env"]);
    assert_eq!(
        (out.status.as_str(), out.stdout.as_slice()),
        ("exit 0", &b"A=1\n"[..]),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = format!("exec 3<{readme}; exec {busybox} head -n 1 /dev/fd/3");
    let out = coprof(&["run", "--", &busybox, "sh", "-c", &script]);
    assert_eq!(
        out.status,
        "exit 0",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), first_line);
    let out = coprof(&[
        "run",
        "--",
        &busybox,
        "sh",
        "-c",
        "exec /bin/echo on the host",
    ]);
    assert_eq!(out.stdout, b"on the host\n");
    let out = coprof(&["run", "--stats", "--", &busybox, "env", "true"]);
    assert_eq!(out.status, "exit 2");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("execve") && err.contains("without --trace, --stats"),
        "{err}"
    );
}

/// Scripts that start `#!/usr/bin/env python3.13` and `#!/usr/bin/env -S
/// python3.13 …`, named as a shell names them (found in the program's
/// PATH under the sysroot): each runs the root's RISC-V Python directly,
/// with the argv `env` would give it (for `-S`, the split string's words,
/// quotes and `${NAME}` from the program's environment, as GNU env splits
/// them), and prints what Python run on the script directly prints under
/// qemu; `coprof loops` of it profiles Python, with no `env` that
/// replaces itself for the report to refuse.
#[test]
fn debian_env_scripts_run_by_name() {
    let dir = fetch_debian_programs();
    let sysroot = dir.join("sysroot");
    let scripts = tempfile::tempdir().unwrap();
    let path = format!("PATH={}:/usr/bin:/bin", scripts.path().display());
    let python = sysroot.join("usr/bin/python3.13");
    // Writes script `name`, runs it by name with `env` and `args` under
    // coprof and Python with `options` on it under qemu, and checks both
    // print `printed`; then profiles it.
    let check =
        |name: &str, text: &str, options: &[&str], env: &[&str], args: &[&str], printed: &str| {
            let script = scripts.path().join(name);
            std::fs::write(&script, text).unwrap();
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            let script = script.to_string_lossy();
            let qemu_args: Vec<&str> = options
                .iter()
                .copied()
                .chain([&*script])
                .chain(args.iter().copied())
                .collect();
            let reference =
                run(qemu_command(&python, &qemu_args)).expect("qemu runs the script's Python");
            let env: Vec<&str> = env.iter().copied().chain(["--env", &path, "--"]).collect();
            let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("coprof"));
            cmd.arg("run")
                .arg("--sysroot")
                .arg(&sysroot)
                .args(&env)
                .arg(name)
                .args(args);
            let candidate = run(cmd).expect("coprof runs the script");
            if let Some(mismatch) = compare(name, &reference, &candidate) {
                panic!("qemu (q) and coprof (c) differ:\n{mismatch}");
            }
            assert_eq!(String::from_utf8_lossy(&candidate.stdout), printed);
            let report = common::json_of(
                common::coprof()
                    .arg("loops")
                    .arg("--sysroot")
                    .arg(&sysroot)
                    .arg("--json")
                    .args(&env)
                    .arg(name)
                    .arg("x"),
            );
            assert!(
                report["instructions"].as_u64().unwrap() > 1_000_000,
                "{name}: {report}"
            );
        };
    check(
        "tally.py",
        "#!/usr/bin/env python3.13\nimport sys\nprint(sys.argv[1:], sum(i * i for i in range(5000)))\n",
        &["-B"],
        &["--env", "PYTHONDONTWRITEBYTECODE=1"],
        &["a", "b c"],
        "['a', 'b c'] 41654167500\n",
    );
    check(
        "split.py",
        "#!/usr/bin/env -S python3.13 -B -W \"ignore::${CATEGORY}\" # options\n\
         import sys\nprint(sys.warnoptions, sys.dont_write_bytecode, sys.argv[1:])\n",
        &["-B", "-W", "ignore::DeprecationWarning"],
        &["--env", "CATEGORY=DeprecationWarning"],
        &["a"],
        "['ignore::DeprecationWarning'] True ['a']\n",
    );
}

//! Dynamically linked RISC-V programs: they run with the cross compiler's
//! loader and libraries (`/usr/riscv64-linux-gnu`, found by default or
//! given with `--sysroot`), still read the host's own files, and their
//! reports name the program's PCs by source line and the libraries' by
//! function and file, live and from a trace.

mod common;

use common::{coprof, gen_trace, json_of, stdout_of, traced_run};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The cross compiler's sysroot, where the default lookup finds the loader.
const SYSROOT: &str = "/usr/riscv64-linux-gnu";

/// A program whose time goes to a loop of its own, to libc's `strlen` and
/// to a function that is not exported, and that reads the file its first
/// argument names by an absolute path.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static char text[4096];

/* Not exported: a stripped build has no name for it. */
static __attribute__((noinline)) unsigned long checksum(const char *t, size_t n) {
    unsigned long h = 5381;
    for (size_t i = 0; i < n; i++)
        h = h * 33 + (unsigned char)t[i];
    return h;
}

int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 1; }
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    unsigned long sum = 0;
    for (int round = 0; round < 400; round++) {
        sum += strlen(text);
        for (size_t i = 0; i < got; i++)
            sum += (unsigned char)text[i] * (unsigned long)(round + 1);
    }
    printf("read %zu bytes, sum %lu, checksum %lx\n", got, sum, checksum(text, got));
    return 0;
}
"#;

/// Builds [`PROGRAM`] dynamically linked (the cross compiler's default)
/// into `dir`, with a data file beside it of 3,000 bytes.
fn build(dir: &Path) -> (PathBuf, PathBuf) {
    common::run_script("scripts/install-deps.sh", &[]);
    let c = dir.join("dyn.c");
    std::fs::write(&c, PROGRAM).unwrap();
    let bin = dir.join("dyn");
    let st = std::process::Command::new("riscv64-linux-gnu-gcc")
        .args(["-O1", "-g", "-o"])
        .arg(&bin)
        .arg(&c)
        .status()
        .expect("cross compiler runs");
    assert!(st.success(), "compiling dyn.c failed");
    let data = dir.join("data.txt");
    std::fs::write(&data, "abcdefghij".repeat(300)).unwrap();
    (bin, data)
}

/// The `function` and `source` of every loop of a loops report.
fn places(v: &Value) -> Vec<(String, String)> {
    v["loops"]
        .as_array()
        .expect("loops")
        .iter()
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap_or("").to_string();
            (s("function"), s("source"))
        })
        .collect()
}

#[test]
fn runs_with_the_cross_compilers_libraries_and_reads_host_files() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, data) = build(dir.path());
    let expected = "read 3000 bytes, sum 24422100000, checksum de110654c432e79\n";
    for sysroot in [None, Some(SYSROOT)] {
        let mut cmd = coprof();
        cmd.arg("run");
        if let Some(s) = sysroot {
            cmd.args(["--sysroot", s]);
        }
        assert_eq!(stdout_of(cmd.arg("--").arg(&bin).arg(&data)), expected);
    }
}

#[test]
fn reports_name_the_program_and_its_libraries_live_and_from_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, data) = build(dir.path());
    let live = json_of(
        coprof()
            .args(["loops", "--json", "--"])
            .arg(&bin)
            .arg(&data),
    );
    let live_places = places(&live);
    assert!(
        live_places
            .iter()
            .any(|(f, s)| f == "main" && s.starts_with("dyn.c:")),
        "no loop of main with its lines: {live_places:?}"
    );
    assert!(
        live_places.iter().any(|(f, _)| f == "strlen in libc.so.6"),
        "no loop in libc's strlen: {live_places:?}"
    );
    // The trace keeps where each file was loaded, so it reads the same.
    let trace = dir.path().join("dyn.cpt");
    stdout_of(traced_run(&trace, &bin).arg(&data));
    let traced = json_of(coprof().arg("loops").arg(&trace).arg("--json"));
    assert_eq!(places(&traced), live_places);
    // `coprof info` lists where each file's code was.
    let info = stdout_of(coprof().arg("info").arg(&trace));
    let lists_every_file = |info: &str| {
        for file in ["dyn", "ld-linux-riscv64-lp64d.so.1", "libc.so.6"] {
            assert!(
                info.lines()
                    .any(|l| l.starts_with("code") || l.starts_with("  "))
                    && info.contains(&format!("/{file}\n")),
                "{file} missing from:\n{info}"
            );
        }
    };
    lists_every_file(&info);

    // Streamed through a pipe, the trace's header names only the files
    // mapped before the program started; the libraries come in its final
    // metadata, after the events, and name their PCs just the same. A
    // sampled trace written from that stream keeps them.
    let sampled = dir.path().join("sampled.cpt");
    let out = common::succeeded(std::process::Command::new("sh")
        .arg("-c")
        .arg(
            "\"$0\" run --trace /dev/fd/3 -- \"$1\" \"$2\" 3>&1 >/dev/null | tee \"$3.stream\" \
             | \"$0\" sample -s counter:4 -o \"$3\" - >/dev/null && \"$0\" loops --json \"$3.stream\"",
        )
        .arg(assert_cmd::cargo::cargo_bin("coprof"))
        .arg(&bin)
        .arg(&data)
        .arg(&sampled));
    let streamed = places(&serde_json::from_slice(&out.stdout).unwrap());
    // (The shell's environment moves the loader's loops, which run over
    // it, in the ranking: the program's and libc's are compared.)
    let named = |p: &[(String, String)]| {
        let mut v: Vec<_> = p
            .iter()
            .filter(|(f, _)| f == "main" || f == "checksum" || f.ends_with("libc.so.6"))
            .cloned()
            .collect();
        v.sort();
        v
    };
    assert_eq!(named(&streamed), named(&live_places));
    assert!(
        streamed.iter().any(|(f, _)| f == "strlen in libc.so.6"),
        "{streamed:?}"
    );
    lists_every_file(&stdout_of(coprof().arg("info").arg(&sampled)));
    // So does one written from a live run, which knows them at its end.
    let live_sampled = dir.path().join("live-sampled.cpt");
    coprof()
        .args(["sample", "-s", "counter:4", "-o"])
        .arg(&live_sampled)
        .arg("--")
        .arg(&bin)
        .arg(&data)
        .assert()
        .success();
    lists_every_file(&stdout_of(coprof().arg("info").arg(&live_sampled)));
}

#[test]
fn a_missing_loader_is_named_with_where_it_was_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, data) = build(dir.path());
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = coprof()
        .arg("run")
        .arg("--sysroot")
        .arg(&empty)
        .arg("--")
        .arg(&bin)
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("dynamic loader /lib/ld-linux-riscv64-lp64d.so.1")
            && err.contains(&format!("--sysroot {}", empty.display()))
            && err.contains("-static"),
        "{err}"
    );
    let out = coprof()
        .args(["run", "--sysroot", "/no/such/dir", "--"])
        .arg(&bin)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--sysroot /no/such/dir: not a directory"),
        "{err}"
    );
    // A trace was recorded already: --sysroot has nothing to apply to.
    let trace = gen_trace(dir.path(), "loops", 1000, 1);
    let out = coprof()
        .args(["loops", "--sysroot", SYSROOT])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--sysroot"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_profile_says_how_to_run_each_report_again_with_the_same_options() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, data) = build(dir.path());
    let file = dir.path().join("p.json");
    stdout_of(
        coprof()
            .args(["profile", "--sysroot", SYSROOT, "--random-seed", "7", "-o"])
            .arg(&file)
            .arg("--")
            .arg(&bin)
            .arg(&data),
    );
    let profile: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let reports = profile["reports"].as_array().expect("reports");
    assert!(!reports.is_empty());
    for r in reports {
        let command = r["command"].as_str().unwrap();
        assert!(
            command.contains(&format!(
                "--sysroot {SYSROOT} --random-seed 7 -- {}",
                bin.display()
            )),
            "{command}"
        );
    }
    // The loops report's line, run alone, gives the same report.
    let loops = reports.iter().find(|r| r["name"] == "loops").unwrap();
    let words: Vec<&str> = loops["command"].as_str().unwrap().split(' ').collect();
    assert_eq!(words[..2], ["coprof", "loops"]);
    let alone = json_of(coprof().args(&words[1..2]).arg("--json").args(&words[2..]));
    assert_eq!(places(&alone), places(&loops["json"]));
}

#[test]
fn a_stripped_position_independent_program_is_named_by_file_and_address() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, data) = build(dir.path());
    let st = std::process::Command::new("riscv64-linux-gnu-strip")
        .arg(&bin)
        .status()
        .expect("strip runs");
    assert!(st.success());
    let v = json_of(
        coprof()
            .args(["loops", "--json", "--"])
            .arg(&bin)
            .arg(&data),
    );
    let p = places(&v);
    // Its own code has no name left, and runs at a bias: the file's own
    // address, as addr2line and objdump take it.
    let own: Vec<u64> = p
        .iter()
        .filter_map(|(f, _)| f.strip_prefix("dyn+0x"))
        .map(|a| u64::from_str_radix(a, 16).unwrap())
        .collect();
    assert!(
        !own.is_empty(),
        "no loop of the program named by address: {p:?}"
    );
    let loops = v["loops"].as_array().unwrap();
    for l in loops
        .iter()
        .filter(|l| l["function"].as_str().unwrap_or("").starts_with("dyn+0x"))
    {
        let pc = l["pc"].as_u64().unwrap();
        let a = u64::from_str_radix(&l["function"].as_str().unwrap()[6..], 16).unwrap();
        assert_eq!(
            pc - a,
            0x2a_aaaa_a000,
            "the bias of a position-independent program"
        );
    }
    assert!(p.iter().any(|(f, _)| f == "strlen in libc.so.6"), "{p:?}");
}

/// A plugin: one loop, in a function every copy exports.
const PLUGIN: &str = r#"
unsigned long plugin_work(unsigned long n) {
    unsigned long s = 0;
    for (unsigned long i = 0; i < n; i++)
        s += (i * i) ^ (s >> 3);
    return s;
}
"#;

/// A host that loads `argv[2]` copies of the plugin from the directory
/// `argv[1]`, and calls the last one loaded most.
const PLUGIN_HOST: &str = r#"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = atoi(argv[2]);
    unsigned long total = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/plugin%03d.so", argv[1], i);
        void *h = dlopen(path, RTLD_NOW);
        if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
        unsigned long (*work)(unsigned long) = (unsigned long (*)(unsigned long))dlsym(h, "plugin_work");
        total += work(i == n - 1 ? 100000 : 10);
    }
    printf("%lu\n", total);
    return 0;
}
"#;

/// A program that maps more libraries than a trace's header has room for
/// when it starts (about a hundred paths): a trace of it still names the
/// last one's code, as the live run does.
#[test]
fn a_trace_of_a_program_with_hundreds_of_libraries_names_the_last() {
    let dir = tempfile::tempdir().unwrap();
    common::run_script("scripts/install-deps.sh", &[]);
    let gcc = |args: &[&str], out: &Path, src: &str| {
        let c = out.with_extension("c");
        std::fs::write(&c, src).unwrap();
        let st = std::process::Command::new("riscv64-linux-gnu-gcc")
            .args(args)
            .arg("-o")
            .arg(out)
            .arg(&c)
            .status()
            .expect("cross compiler runs");
        assert!(st.success(), "compiling {} failed", c.display());
    };
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let first = plugins.join("plugin000.so");
    gcc(&["-O1", "-g", "-shared", "-fPIC"], &first, PLUGIN);
    const COUNT: usize = 250;
    // Copies are separate files to the loader, each mapped on its own.
    for i in 1..COUNT {
        std::fs::copy(&first, plugins.join(format!("plugin{i:03}.so"))).unwrap();
    }
    let host = dir.path().join("host");
    gcc(&["-O1", "-g"], &host, PLUGIN_HOST);

    let count = COUNT.to_string();
    let live = json_of(
        coprof()
            .args(["loops", "--json", "--"])
            .arg(&host)
            .arg(&plugins)
            .arg(&count),
    );
    let last = format!("plugin_work in plugin{:03}.so", COUNT - 1);
    assert!(
        places(&live).iter().any(|(f, _)| *f == last),
        "live: {:?}",
        places(&live)
    );

    let trace = dir.path().join("host.cpt");
    let out = stdout_of(traced_run(&trace, &host).arg(&plugins).arg(&count));
    assert!(!out.is_empty());
    let traced = json_of(coprof().arg("loops").arg(&trace).arg("--json"));
    assert_eq!(places(&traced), places(&live));
    let info = stdout_of(coprof().arg("info").arg(&trace));
    // The code's files, listed before the areas mapped (where each file
    // shows once per segment).
    let (code, mapped) = info.split_once("\nmapped ").unwrap();
    assert_eq!(
        code.matches("/plugins/plugin").count(),
        COUNT,
        "every library listed:\n{info}"
    );
    assert!(mapped.contains(&format!("plugin{:03}.so\n", COUNT - 1)));
}

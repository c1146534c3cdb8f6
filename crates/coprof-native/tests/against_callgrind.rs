//! The sampler's profile against an exact one from an independent tool:
//! `valgrind --tool=callgrind` counts every instruction a program
//! retires, per function. A program spends its time in three functions
//! with the same loop body, so that their shares of the time are their
//! shares of the instructions; the samples, taken on the program's CPU
//! time, must give each function its share of callgrind's count, stopped
//! at each sample (ptrace) and written to ring buffers alike.

mod common;

use common::{build_static, function};
use coprof_core::{Event, Sink};
use coprof_native::{sample, Config, Exit};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

/// Three functions of one loop body, run 5 : 3 : 2 times as long, in
/// turns, so that no phase of the run favours one.
const PROGRAM: &str = r#"
#include <stdlib.h>
volatile unsigned long sink;
#define BODY(name) \
    __attribute__((noinline)) unsigned long name(unsigned long x, long n) { \
        for (long i = 0; i < n; i++) \
            x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15UL + (unsigned long)i; \
        return x; \
    }
BODY(part_a)
BODY(part_b)
BODY(part_c)
int main(int argc, char **argv) {
    long turns = argc > 1 ? atol(argv[1]) : 100;
    unsigned long x = 1;
    for (long t = 0; t < turns; t++) {
        x = part_a(x, 5000);
        x = part_b(x, 3000);
        x = part_c(x, 2000);
    }
    sink = x;
    return 0;
}
"#;

const PARTS: [&str; 3] = ["part_a", "part_b", "part_c"];

/// Turns of the program's loop: about 0.15 s natively, a few seconds
/// under callgrind.
const TURNS: &str = "8000";

/// Installs valgrind with the project's script when it is missing.
fn valgrind() {
    if Command::new("valgrind").arg("--version").output().is_ok() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let st = Command::new(root.join("scripts/install-deps.sh"))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("scripts/install-deps.sh runs");
    assert!(st.success(), "installing valgrind failed");
}

/// Each function's instructions as callgrind counts them (its self
/// cost in `Ir`), from its output file read without compression: `fn=`
/// names the function the cost lines after it belong to, each `LINE
/// COST`; the line after a `calls=` line is a call's inclusive cost,
/// which is the callee's, not the caller's.
fn callgrind_counts(prog: &Path, dir: &Path) -> HashMap<String, u64> {
    valgrind();
    let out = dir.join("callgrind.out");
    let run = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--compress-strings=no",
            "--compress-pos=no",
        ])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(prog)
        .arg(TURNS)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "valgrind: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let mut counts: HashMap<String, u64> = HashMap::new();
    let (mut function, mut after_call) = (String::new(), false);
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("fn=") {
            function = name.to_string();
            continue;
        }
        if line.starts_with("calls=") {
            after_call = true;
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(first), Some(cost)) = (fields.next(), fields.next()) else {
            continue;
        };
        if !first.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if std::mem::take(&mut after_call) {
            continue;
        }
        *counts.entry(function.clone()).or_default() += cost.parse::<u64>().unwrap();
    }
    counts
}

#[derive(Default)]
struct Pcs(Vec<u64>);

impl Sink for Pcs {
    fn observe(&mut self, batch: &[Event]) {
        self.0.extend(batch.iter().map(|e| e.pc));
    }
}

/// The shares of the three functions in `counts` (by function), over the
/// three.
fn shares(counts: [u64; 3]) -> [f64; 3] {
    let total: u64 = counts.iter().sum();
    assert!(total > 0);
    counts.map(|c| c as f64 / total as f64)
}

/// The samples of a run of `prog` with `config`, counted per function.
fn sampled(prog: &Path, config: &Config) -> [u64; 3] {
    let mut pcs = Pcs::default();
    let args = [OsString::from("parts"), OsString::from(TURNS)];
    let r = sample(prog, &args, config, &mut pcs).unwrap();
    assert_eq!(r.exit, Exit::Exited(0));
    let ranges = PARTS.map(|p| function(prog, p));
    let counts = ranges.map(|r| pcs.0.iter().filter(|pc| r.contains(pc)).count() as u64);
    let inside: u64 = counts.iter().sum();
    // Nearly all the time is in the three.
    assert!(
        inside * 100 >= pcs.0.len() as u64 * 95,
        "{inside} of {} samples in the three functions",
        pcs.0.len()
    );
    assert!(inside >= 2000, "{inside} samples");
    counts
}

#[test]
fn sampled_shares_of_the_functions_are_callgrinds_exact_ones() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build_static(dir.path(), "parts", PROGRAM, &[]);
    let exact = callgrind_counts(&prog, dir.path());
    let want = shares(PARTS.map(|p| *exact.get(p).unwrap_or_else(|| panic!("{p}: {exact:?}"))));
    // The program's own loop is what the shares say: 5 : 3 : 2.
    for (w, p) in want.iter().zip([0.5, 0.3, 0.2]) {
        assert!((w - p).abs() < 0.01, "callgrind's shares {want:?}");
    }
    for (how, config) in [
        (
            "stopped",
            Config {
                period_ns: 20_000,
                ..Config::default()
            },
        ),
        (
            "ring buffers",
            Config {
                period_ns: 20_000,
                ring_buffer: true,
                ..Config::default()
            },
        ),
    ] {
        let got = shares(sampled(&prog, &config));
        // The overlap of the two profiles (Lee & Zilles' accuracy):
        // the sum of the smaller share of each function.
        let overlap: f64 = got.iter().zip(&want).map(|(g, w)| g.min(*w)).sum();
        assert!(
            overlap > 0.97,
            "{how}: sampled {got:?} against callgrind's {want:?}"
        );
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() < 0.03,
                "{how}: sampled {got:?} against callgrind's {want:?}"
            );
        }
    }
}

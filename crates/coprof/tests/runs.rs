//! Runs of basic blocks against every event, on real programs.
//!
//! In one simulation: a sink taking every event and a sink taking runs
//! listen to the same run of each corpus program, so the two streams must
//! give the same PCs in the same order, and a loop detector fed each way
//! the same loops (no host clock can make them differ).
//!
//! Across two runs: a live run
//! hands `loops`, `ranges --stream pc` and `sample --profile pc` the
//! instructions as runs of blocks (one record per block execution, and for
//! `loops` the taken branches found from where the next run starts); a
//! trace of the same run (`coprof run --trace`, every class) hands them one
//! event per instruction. Over the whole C corpus of the simulator's tests
//! (self-modifying code that drops the code cache, setjmp/longjmp, deep
//! recursion, system calls in the middle of blocks), the reports must be
//! the same.

mod common;

use common::{coprof, repo_root};
use coprof_core::{Blocks, ClassSet, Event, ExactCounts, Fanout, Run, Sink};
use coprof_engines::loops::{LoopConfig, LoopDetector};
use coprof_rv::{Config, Simulator};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// Held while a corpus program runs. Both tests here run the corpus, in
/// parallel, and `stdio_files` works in a directory under /tmp whose name
/// is fixed per optimisation level: two of its runs at once would see each
/// other's files and retire different instructions.
static CORPUS_RUN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes [`CORPUS_RUN`], also after a test that held it failed.
fn one_corpus_run_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    CORPUS_RUN.lock().unwrap_or_else(|e| e.into_inner())
}

/// The corpus programs that run 10 to 230 million instructions: four
/// runs each would take minutes in a test build, and the code paths they
/// take are those of the others.
const LONG: [&str; 8] = [
    "fp_arith",
    "fp_filter",
    "fp_hot",
    "fp_libm",
    "recursion",
    "sort_search",
    "malloc",
    "printf_float",
];

/// The corpus programs whose path depends on the host: `syscalls` reads
/// the clocks and the cycle counters, and `itimers` and `posix_timers`
/// compute until their timers' signals come, after wall-clock and CPU
/// time, `processes` reads pipes its child processes fill at their
/// own pace, in `timed_waits` threads sleep beside threads that
/// compute, whose turns the host's clock ends, and `mm_calls` and
/// `shared_memory` parse `/proc/self/maps`, whose lines hold the inode
/// numbers of the files they make, and in `sysv_threads` a semaphore's
/// timeout ends beside a thread that computes, so two runs of them need
/// not retire the same instructions.
const HOST_DEPENDENT: [&str; 8] = [
    "syscalls",
    "itimers",
    "posix_timers",
    "processes",
    "timed_waits",
    "mm_calls",
    "shared_memory",
    "sysv_threads",
];

/// The whole corpus built at -O2 by scripts/build-test-programs.sh.
fn whole_corpus() -> Vec<PathBuf> {
    let out = repo_root().join("target/rv-programs");
    let st = Command::new("bash")
        .arg(repo_root().join("scripts/build-test-programs.sh"))
        .arg(&out)
        .status()
        .expect("scripts/build-test-programs.sh runs");
    assert!(st.success(), "building the RV64 test corpus failed");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("-O2"))
        .collect();
    v.sort();
    assert!(
        v.len() >= 19,
        "only {} programs in {}",
        v.len(),
        out.display()
    );
    v
}

/// The corpus but for the [`LONG`] and [`HOST_DEPENDENT`] programs.
fn corpus() -> Vec<PathBuf> {
    whole_corpus()
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.strip_suffix("-O2")
                .is_some_and(|n| !LONG.contains(&n) && !HOST_DEPENDENT.contains(&n))
        })
        .collect()
}

/// The report, without what says where it came from: the trace's file and
/// recorded classes, the events delivered (a live run sends fewer), and
/// the run's notes (a live run's exit status is said where it ends).
/// The command must exit with `status`: a live run's is its program's.
fn report(cmd: &mut assert_cmd::Command, status: Option<i32>) -> Value {
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        status,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    if let Some(o) = v.as_object_mut() {
        for k in ["file", "recorded_classes", "events", "notes"] {
            o.remove(k);
        }
    }
    v
}

#[test]
fn every_corpus_program_gives_the_same_reports_from_runs_as_from_events() {
    let reports: [&[&str]; 4] = [
        &["loops", "--max-distance", "100000"],
        &["loops", "--exact"],
        &["ranges", "--stream", "pc", "--exact", "--epsilon", "0.001"],
        &["sample", "--sampler", "brr:3", "--eval", "--profile", "pc"],
    ];
    for prog in corpus() {
        let name = prog.file_name().unwrap().to_string_lossy().to_string();
        let _one = one_corpus_run_at_a_time();
        // Each run in a directory of its own: some programs write files.
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("run.cpt");
        let out = coprof()
            .current_dir(dir.path())
            .args(["run", "--random-seed", "7", "--trace"])
            .arg(&trace)
            .arg("--")
            .arg(&prog)
            .output()
            .unwrap();
        assert!(trace.exists(), "{name}: no trace: {out:?}");
        for args in reports {
            let live_dir = tempfile::tempdir().unwrap();
            let live = report(
                coprof()
                    .current_dir(live_dir.path())
                    .args(args)
                    .args(["--json", "--random-seed", "7", "--"])
                    .arg(&prog),
                out.status.code(),
            );
            let traced = report(coprof().args(args).arg("--json").arg(&trace), Some(0));
            assert_eq!(
                live, traced,
                "{name}: coprof {args:?} differs live and from its trace"
            );
        }
    }
}

/// The PCs of one stream, hashed in order, and counted.
#[derive(Default, PartialEq, Debug)]
struct PcStream {
    hash: u64,
    count: u64,
}

impl PcStream {
    fn add(&mut self, pc: u64) {
        self.hash = (self.hash.rotate_left(7) ^ pc).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.count += 1;
    }
}

/// Every event's PC, a loop detector and exact counts fed the events.
struct FromEvents(PcStream, LoopDetector, ExactCounts);

impl Sink for FromEvents {
    fn observe(&mut self, batch: &[Event]) {
        batch.iter().for_each(|e| self.0.add(e.pc));
        self.1.observe(batch);
        self.2.observe(batch);
    }
}

/// The runs' PCs, a loop detector and exact counts fed the runs (and the
/// exact counts the loads and calls too).
struct FromRuns(PcStream, LoopDetector, ExactCounts);

impl Sink for FromRuns {
    fn observe(&mut self, batch: &[Event]) {
        self.2.observe(batch);
    }
    fn finish(&mut self) {
        self.2.finish();
    }
    fn wants_with_runs(&self) -> Option<ClassSet> {
        self.2.wants_with_runs()
    }
    fn runs_follow(&mut self) {
        self.1.runs_follow();
        self.2.runs_follow();
    }
    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        coprof_core::runs::for_each_pc(runs, blocks, |pc| self.0.add(pc));
        self.1.observe_runs(runs, blocks);
        self.2.observe_runs(runs, blocks);
    }
}

/// Exact counts as sorted lists, to compare two of them.
fn sorted(x: &ExactCounts) -> String {
    let mut pcs: Vec<_> = x.per_pc.iter().collect();
    pcs.sort();
    let mut values: Vec<_> = x.load_values.iter().collect();
    values.sort();
    let mut sbb: Vec<_> = x
        .sbb
        .iter()
        .map(|(pc, c)| (*pc, c.taken, c.target))
        .collect();
    sbb.sort();
    let mut calls: Vec<_> = x.calls.iter().collect();
    calls.sort();
    format!(
        "{} {:?} {pcs:?} {values:?} {sbb:?} {calls:?}",
        x.events, x.per_class
    )
}

/// While it lives, this process's standard output and error go to
/// /dev/null: the simulated programs write to them directly, and their
/// output would fill the test log. Restored when dropped, even in a panic.
struct Quiet([i32; 2]);

impl Quiet {
    fn new() -> Quiet {
        let null = std::fs::File::create("/dev/null").unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&null);
        // SAFETY: plain descriptor calls on descriptors this process owns.
        unsafe {
            let saved = [libc::dup(1), libc::dup(2)];
            assert!(saved[0] >= 0 && saved[1] >= 0);
            libc::dup2(fd, 1);
            libc::dup2(fd, 2);
            Quiet(saved)
        }
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        // SAFETY: as in `new`; the saved descriptors are closed once.
        unsafe {
            libc::dup2(self.0[0], 1);
            libc::dup2(self.0[1], 2);
            libc::close(self.0[0]);
            libc::close(self.0[1]);
        }
    }
}

#[test]
fn runs_and_events_of_one_simulation_give_the_same_pcs_and_loops() {
    for prog in whole_corpus() {
        let name = prog.file_name().unwrap().to_string_lossy().to_string();
        let _one = one_corpus_run_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            seed: Some(7),
            ..Config::default()
        };
        let cfg = LoopConfig {
            max_distance: 100_000,
            ..LoopConfig::default()
        };
        let exact = || ExactCounts::with_sbb_distance(cfg.max_distance);
        let detector = || LoopDetector::new(cfg).unwrap();
        let mut events = FromEvents(PcStream::default(), detector(), exact());
        let mut runs = FromRuns(PcStream::default(), detector(), exact());
        // Some programs write files: in a directory of their own (the
        // other test here gives every command its directory explicitly).
        let cwd = std::env::current_dir().unwrap();
        std::env::set_current_dir(dir.path()).unwrap();
        let mut sim = Simulator::load(&prog, &config).unwrap();
        {
            let _quiet = Quiet::new();
            let mut fan = Fanout::new();
            fan.push(&mut events);
            fan.push(&mut runs);
            sim.run_to_exit(&mut fan).unwrap();
        }
        std::env::set_current_dir(cwd).unwrap();
        assert_eq!(
            events.0.count,
            sim.instret(),
            "{name}: an event per instruction"
        );
        assert_eq!(
            runs.0, events.0,
            "{name}: the runs' PCs differ from the events'"
        );
        let (a, b) = (events.1.snapshot(), runs.1.snapshot());
        assert!(a.sbbs > 0, "{name}: no loops");
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}: loops differ");
        assert!(events.2.load_values.len() > 10, "{name}: no loads");
        assert_eq!(
            sorted(&events.2),
            sorted(&runs.2),
            "{name}: exact counts differ"
        );
    }
}

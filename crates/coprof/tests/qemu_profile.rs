//! Differential test of coprof's *exact* profiles against an independent
//! RV64 implementation. Every estimate coprof reports is checked against
//! coprof's own exact answer; this test checks that exact answer itself.
//!
//! `qemu-riscv64` run with one instruction per translation block and its
//! execution log on (`-singlestep -d nochain,exec`, `-one-insn-per-tb` in
//! newer qemu) writes one line per instruction it executes, with its PC.
//! From that log the test counts, independently of coprof:
//!
//! - how many times each PC executed: the exact instruction profile, which
//!   coprof makes from instruction events (`coprof sample --sampler
//!   counter:1 --eval --profile pc`, whose full profile is every event)
//!   and from runs of basic blocks (`coprof ranges --stream pc --exact`,
//!   whose event count and hot ranges' exact counts come from runs);
//! - how many times each short backward branch was taken: consecutive log
//!   lines whose second PC is not the first's fall-through, at a
//!   conditional branch or a plain jump (classified from the instruction's
//!   bits in the ELF, by the RISC-V specification's Table 2.1 for
//!   calls and returns) whose target is at most 4 KiB below it. That is the
//!   frequent loop detector's exact answer (`coprof loops --exact`, made
//!   from runs of blocks);
//! - what each of a few hundred loads loaded: a second run dumps the
//!   registers before and after those loads only (`-d cpu,fpu -dfilter`),
//!   and the load's destination register after it, cut to its width, is
//!   its value. That checks the values report's exact answer (`coprof
//!   values --exact`): each load's executions and the exact invariance of
//!   each value it lists.
//!
//! The programs: the small programs of the simulator's corpus (one of them
//! writes and runs its own code, one is C++ that throws exceptions), four kernels of workloads/ at one
//! repetition, and the real programs of workloads/ (bzip2, zlib's
//! minigzip, Lua, SQLite) on small inputs. For the real programs the test
//! also compares the program's own output under plain qemu and `coprof run`.
//!
//! Both sides run with the same arguments, working directory, environment
//! (only `LC_ALL=C`), and with the program's standard output on /dev/null:
//! the C library's start-up takes other paths for other kinds of files. One
//! difference remains, and the test allows [`SLACK`] instructions for it:
//! qemu-user answers `set_robust_list` with ENOSYS where Linux, and coprof,
//! return 0, which sends the C library's thread set-up one instruction
//! further; the corpus's `syscalls` program asks a few more such questions.
//! Code outside the ELF's image (the code a program writes into memory it
//! maps) lies where each implementation's `mmap` put it: qemu's PCs there
//! are moved by the distance between the pages where each began to run
//! such code.

mod common;

use common::{repo_root, run_script};
use object::{Object, ObjectSegment};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::OnceLock;

/// Instructions, in all, by which a PC profile may differ from qemu's:
/// the start-up differences described in the module's documentation.
const SLACK: u64 = 16;

/// The loop detector's default distance limit of a short backward branch.
const SBB_DISTANCE: u64 = 4096;

/// Runs one of the project's build scripts, failing the test with its
/// output if it fails (it installs the cross compiler when missing).
/// The directory of the corpus's binaries, built once per test run.
fn corpus() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = repo_root().join("target/rv-programs");
        run_script("scripts/build-test-programs.sh", &[dir.to_str().unwrap()]);
        dir
    })
}

/// The directory of the kernels' binaries, built once per test run.
fn kernels() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        run_script("workloads/build-kernels.sh", &[]);
        repo_root().join("workloads/build")
    })
}

/// The directory of the real programs' binaries, built once per test run.
fn real() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        run_script(
            "workloads/build-real.sh",
            &["--only", "bzip2,minigzip,luarun,sqlrun"],
        );
        repo_root().join("workloads/build/real")
    })
}

/// qemu's option for one instruction per translation block: renamed in
/// qemu 8.1, the old name removed later.
fn one_insn_per_tb() -> &'static str {
    static OPT: OnceLock<&'static str> = OnceLock::new();
    OPT.get_or_init(|| {
        let help = Command::new("qemu-riscv64")
            .arg("-h")
            .output()
            .expect("qemu-riscv64 runs (scripts/install-deps.sh installs it)");
        if String::from_utf8_lossy(&help.stdout).contains("-one-insn-per-tb") {
            "-one-insn-per-tb"
        } else {
            "-singlestep"
        }
    })
}

/// The ELF's loaded bytes, to read instructions at PCs.
struct Image {
    segments: Vec<(u64, Vec<u8>)>,
}

impl Image {
    fn read(bin: &Path) -> Image {
        let data = std::fs::read(bin).unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        let file = object::File::parse(&*data).expect("an ELF file");
        let segments = file
            .segments()
            .map(|s| (s.address(), s.data().expect("segment data").to_vec()))
            .collect();
        Image { segments }
    }

    fn contains(&self, pc: u64) -> bool {
        self.bytes_at(pc).is_some()
    }

    fn bytes_at(&self, pc: u64) -> Option<&[u8]> {
        self.segments.iter().find_map(|(a, d)| {
            let off = pc.checked_sub(*a)? as usize;
            (off < d.len()).then(|| &d[off..])
        })
    }

    /// The instruction at `pc`: its length and whether it is a branch that
    /// can close a loop (a conditional branch or a jump that is neither a
    /// call nor a return).
    fn instruction(&self, pc: u64) -> Option<(u64, bool)> {
        Some(match self.encoding(pc)? {
            (2, half) => (2, compressed_loop_branch(half)),
            (len, raw) => (len, loop_branch(raw)),
        })
    }

    /// The instruction's length and bits at `pc`: 2 and the halfword of a
    /// compressed instruction (its low two bits not 11), else 4 and the word.
    fn encoding(&self, pc: u64) -> Option<(u64, u32)> {
        let b = self.bytes_at(pc)?;
        let half = u16::from_le_bytes([b[0], *b.get(1)?]) as u32;
        if half & 3 != 3 {
            return Some((2, half));
        }
        Some((4, u32::from_le_bytes(b.get(..4)?.try_into().ok()?)))
    }
}

/// Whether a link register (x1 or x5) is meant: RISC-V unprivileged
/// specification, Table 2.1, which marks calls and returns.
fn is_link(r: u32) -> bool {
    r == 1 || r == 5
}

fn loop_branch(raw: u32) -> bool {
    let (rd, rs1) = ((raw >> 7) & 31, (raw >> 15) & 31);
    match raw & 0x7f {
        0x63 => true,                          // BRANCH
        0x6f => !is_link(rd),                  // JAL x0 (or another non-link rd)
        0x67 => !is_link(rd) && !is_link(rs1), // JALR: not a call, not a return
        _ => false,
    }
}

fn compressed_loop_branch(half: u32) -> bool {
    let (op, f3) = (half & 3, half >> 13);
    let (bit12, r1, r2) = ((half >> 12) & 1, (half >> 7) & 31, (half >> 2) & 31);
    match (op, f3) {
        (1, 5) | (1, 6) | (1, 7) => true, // C.J, C.BEQZ, C.BNEZ
        // C.JR (C.JALR, bit 12 set, is a call); rs1 = x1 or x5 is a return.
        (2, 4) => bit12 == 0 && r2 == 0 && r1 != 0 && !is_link(r1),
        _ => false,
    }
}

/// A plain load (not an AMO or LR): where its value lands and how wide
/// it is.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Load {
    len: u64,
    /// Destination register: 0..=31 integer, 32..=63 floating point.
    reg: usize,
    bytes: u32,
}

impl Image {
    /// The load at `pc`, decoded from its bits (RISC-V unprivileged
    /// specification: LOAD, LOAD-FP and the compressed loads of quadrants 0
    /// and 2).
    fn load(&self, pc: u64) -> Option<Load> {
        let (len, bits) = self.encoding(pc)?;
        let (reg, bytes) = if len == 4 {
            let (rd, f3) = (((bits >> 7) & 31) as usize, (bits >> 12) & 7);
            match (bits & 0x7f, f3) {
                (0x03, 0 | 4) => (rd, 1),
                (0x03, 1 | 5) => (rd, 2),
                (0x03, 2 | 6) => (rd, 4),
                (0x03, 3) => (rd, 8),
                (0x07, 1) => (32 + rd, 2),
                (0x07, 2) => (32 + rd, 4),
                (0x07, 3) => (32 + rd, 8),
                _ => return None,
            }
        } else {
            let (rd_short, rd) = (
                (((bits >> 2) & 7) + 8) as usize,
                ((bits >> 7) & 31) as usize,
            );
            match (bits & 3, bits >> 13) {
                (0, 1) => (32 + rd_short, 8), // C.FLD
                (0, 2) => (rd_short, 4),      // C.LW
                (0, 3) => (rd_short, 8),      // C.LD
                (2, 1) => (32 + rd, 8),       // C.FLDSP
                (2, 2) => (rd, 4),            // C.LWSP
                (2, 3) => (rd, 8),            // C.LDSP
                _ => return None,
            }
        };
        (reg != 0).then_some(Load { len, reg, bytes })
    }
}

/// Executions of the loads whose values are read from qemu's register
/// dumps, at most: each costs two dumps of a few kilobytes in the log.
const DUMPED_EXECUTIONS: u64 = 60_000;

/// Executions of one load whose values are read from the dumps, at most,
/// so that the budget covers many loads.
const DUMPED_PER_LOAD: u64 = 5_000;

/// Whether two values reports agree on a load's exact answer: the same
/// executions, and the same values listed with the same exact invariance.
/// (Which values a report lists is the engine's estimate: a load whose
/// list differs is left out, for its values may have changed.)
fn same_exact_answer(a: &Value, b: &Value) -> bool {
    let shares = |l: &Value| -> Vec<(u64, f64)> {
        let values = l["values"].as_array().unwrap().iter();
        let mut shares: Vec<(u64, f64)> = values
            .map(|v| {
                (
                    v["value"].as_u64().unwrap(),
                    v["exact_invariance"].as_f64().unwrap(),
                )
            })
            .collect();
        shares.sort_by_key(|s| s.0);
        shares
    };
    a["executions"] == b["executions"] && shares(a) == shares(b)
}

/// Whether a loaded value may be an address of the stack or of mapped
/// memory, which each implementation places where it likes (qemu-user
/// near 0x40_0080_0000 and 0x7f.., coprof below 0x40_0000_0000): loads that
/// ever see such a value are not compared. The image and the heap that
/// `brk` grows after it lie at the same addresses in both.
fn is_mapped(value: u64) -> bool {
    (0x20_0000_0000..1 << 47).contains(&value)
}

/// Starts the program under qemu, one instruction per translation block,
/// with the log `options`, its output on /dev/null; returns qemu and its
/// standard error (where the log goes), to read as it streams in.
fn qemu_logging(
    options: &[&str],
    bin: &Path,
    args: &[String],
    dir: &Path,
) -> (Child, BufReader<ChildStderr>) {
    let mut qemu = Command::new("qemu-riscv64");
    qemu.arg(one_insn_per_tb()).args(options);
    let mut child = launch(&mut qemu, bin, args, dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("qemu-riscv64 starts");
    let log = BufReader::with_capacity(1 << 20, child.stderr.take().unwrap());
    (child, log)
}

/// Runs the program under qemu with the register file dumped before each
/// of the given loads and before the instruction after it, and returns,
/// per load, how many times each value was loaded (the destination
/// register after the load, cut to the load's width).
fn qemu_load_values(
    loads: &HashMap<u64, Load>,
    bin: &Path,
    args: &[String],
    dir: &Path,
) -> HashMap<u64, HashMap<u64, u64>> {
    let filter: Vec<String> = loads
        .iter()
        .map(|(pc, l)| format!("{pc:#x}+{}", l.len + 1))
        .collect();
    let filter = filter.join(",");
    let log_options = ["-d", "nochain,exec,cpu,fpu", "-dfilter", &filter];
    let (mut child, log) = qemu_logging(&log_options, bin, args, dir);
    let mut values: HashMap<u64, HashMap<u64, u64>> = HashMap::new();
    // The load whose value the current dump shows, and the load just logged.
    let mut reading: Option<(u64, Load)> = None;
    let mut pending: Option<(u64, Load)> = None;
    for line in log.split(b'\n') {
        let line = line.expect("reading qemu's log");
        if line.starts_with(b"Trace ") {
            let pc = parse_trace_pc(&line).expect("a PC in a Trace line");
            reading = pending.filter(|(at, l)| pc == at + l.len);
            pending = loads.get(&pc).map(|l| (pc, *l));
            continue;
        }
        let Some((at, load)) = reading else { continue };
        let text = String::from_utf8_lossy(&line);
        let words: Vec<&str> = text.split_whitespace().collect();
        for pair in words.chunks(2) {
            let [name, value] = pair else { continue };
            let Some((reg, _)) = name.split_once('/') else {
                continue;
            };
            let index = match reg.as_bytes()[0] {
                b'x' => reg[1..].parse::<usize>().ok(),
                b'f' => reg[1..].parse::<usize>().ok().map(|r| 32 + r),
                _ => None,
            };
            if index == Some(load.reg) {
                let v = u64::from_str_radix(value, 16).expect("a register value");
                let v = if load.bytes == 8 {
                    v
                } else {
                    v & ((1u64 << (8 * load.bytes)) - 1)
                };
                *values.entry(at).or_default().entry(v).or_insert(0) += 1;
                reading = None;
            }
        }
    }
    assert!(child.wait().expect("qemu-riscv64 finishes").success());
    values
}

/// What qemu's instruction log says about one run.
struct QemuProfile {
    /// Executions per PC.
    pcs: HashMap<u64, u64>,
    /// Taken short backward branches per branch PC.
    sbbs: HashMap<u64, u64>,
    status: i32,
}

/// `cmd` running `bin args` as every run of this test does: in `dir`,
/// with only `LC_ALL=C` in its environment and nothing on its input.
fn launch<'a>(cmd: &'a mut Command, bin: &Path, args: &[String], dir: &Path) -> &'a mut Command {
    cmd.arg(bin)
        .args(args)
        .env_clear()
        .env("LC_ALL", "C")
        .current_dir(dir)
        .stdin(Stdio::null())
}

/// Runs the program under qemu, one instruction per block with the
/// execution log on, and counts the log's PCs as it streams in.
fn qemu_profile(image: &Image, bin: &Path, args: &[String], dir: &Path) -> QemuProfile {
    // A log file is written in large blocks, qemu's standard error a line
    // at a time (twice the time in all). qemu opens the file as fd 3,
    // which moves the program's own files up by one; no count depends on
    // that, but loaded values can, so the register dumps use standard error.
    let log_options = ["-d", "nochain,exec", "-D", "/dev/stderr"];
    let (mut child, log) = qemu_logging(&log_options, bin, args, dir);
    let mut pcs: HashMap<u64, u64> = HashMap::new();
    let mut sbbs: HashMap<u64, u64> = HashMap::new();
    let mut decoded: HashMap<u64, Option<(u64, bool)>> = HashMap::new();
    let mut other = String::new();
    let mut prev: Option<u64> = None;
    for line in log.split(b'\n') {
        let line = line.expect("reading qemu's log");
        // "Trace 0: 0x7f.. [0000000000000000/0000000000010794/00207600/00000201] _start"
        let Some(pc) = line
            .starts_with(b"Trace ")
            .then(|| parse_trace_pc(&line))
            .flatten()
        else {
            if other.len() < 2000 {
                other.push_str(&String::from_utf8_lossy(&line));
                other.push('\n');
            }
            continue;
        };
        *pcs.entry(pc).or_insert(0) += 1;
        if let Some(from) = prev {
            let insn = *decoded
                .entry(from)
                .or_insert_with(|| image.instruction(from));
            if let Some((len, loop_branch)) = insn {
                let taken = pc != from + len;
                if taken && loop_branch && pc <= from && from - pc <= SBB_DISTANCE {
                    *sbbs.entry(from).or_insert(0) += 1;
                }
            }
        }
        prev = Some(pc);
    }
    let status = child.wait().expect("qemu-riscv64 finishes");
    let status = status
        .code()
        .unwrap_or_else(|| panic!("qemu-riscv64 was killed: {status}\n{other}"));
    assert!(!pcs.is_empty(), "qemu wrote no instruction log:\n{other}");
    QemuProfile { pcs, sbbs, status }
}

fn parse_trace_pc(line: &[u8]) -> Option<u64> {
    let open = line.iter().position(|&c| c == b'[')?;
    let fields = &line[open + 1..];
    let mut parts = fields.split(|&c| c == b'/');
    parts.next()?;
    u64::from_str_radix(std::str::from_utf8(parts.next()?).ok()?, 16).ok()
}

/// Runs `coprof ARGS -- PROG PROG_ARGS` with the same environment as the
/// qemu run and the program's output (coprof's standard error) on
/// /dev/null; returns the report's JSON.
fn coprof_json(report: &[&str], bin: &Path, args: &[String], dir: &Path) -> Value {
    coprof_json_with(report, bin, args, dir, &[])
}

/// [`coprof_json`] with more variables in the program's environment.
fn coprof_json_with(
    report: &[&str],
    bin: &Path,
    args: &[String],
    dir: &Path,
    env: &[(&str, &str)],
) -> Value {
    let mut coprof = Command::new(assert_cmd::cargo::cargo_bin("coprof"));
    coprof.args(report).args(["--json", "--"]);
    let out = launch(&mut coprof, bin, args, dir)
        .envs(env.iter().copied())
        .stderr(Stdio::null())
        .output()
        .expect("coprof starts");
    assert!(
        out.status.success(),
        "coprof {report:?} failed: {}",
        out.status
    );
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

fn hex(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// The page of the lowest PC outside the image, if any: where the
/// program's mapped code starts.
fn mapped_base(image: &Image, pcs: &HashMap<u64, u64>) -> Option<u64> {
    pcs.keys()
        .filter(|&&pc| !image.contains(pc))
        .min()
        .map(|pc| pc & !0xfff)
}

/// qemu's PCs as coprof would see them: those outside the image moved by
/// the distance between the two implementations' mapped code.
fn in_coprofs_space(
    image: &Image,
    qemu: &HashMap<u64, u64>,
    coprof: &HashMap<u64, u64>,
) -> HashMap<u64, u64> {
    let shift = match (mapped_base(image, qemu), mapped_base(image, coprof)) {
        (Some(q), Some(c)) => c.wrapping_sub(q),
        _ => 0,
    };
    let moved = |pc: u64| pc.wrapping_add(if image.contains(pc) { 0 } else { shift });
    qemu.iter().map(|(&pc, &n)| (moved(pc), n)).collect()
}

/// Sum of |a - b| over every key, and the largest differences, for the
/// message.
fn difference(a: &HashMap<u64, u64>, b: &HashMap<u64, u64>) -> (u64, Vec<String>) {
    let mut diffs: Vec<(u64, u64, u64)> = a
        .keys()
        .chain(b.keys())
        .map(|&k| {
            (
                k,
                a.get(&k).copied().unwrap_or(0),
                b.get(&k).copied().unwrap_or(0),
            )
        })
        .filter(|(_, x, y)| x != y)
        .collect();
    diffs.sort();
    diffs.dedup();
    let total = diffs.iter().map(|(_, x, y)| x.abs_diff(*y)).sum();
    diffs.sort_by_key(|(_, x, y)| std::cmp::Reverse(x.abs_diff(*y)));
    let shown = diffs
        .iter()
        .take(12)
        .map(|(k, x, y)| format!("{k:#x}: coprof {x}, qemu {y}"))
        .collect();
    (total, shown)
}

/// One program and its arguments.
struct Program {
    bin: PathBuf,
    args: Vec<String>,
    /// Compare the program's own output under plain qemu and `coprof run`.
    compare_output: bool,
}

fn program(bin: PathBuf, args: &[&str]) -> Program {
    Program {
        bin,
        args: args.iter().map(|s| s.to_string()).collect(),
        compare_output: false,
    }
}

/// A working directory with a text file of a few tens of kilobytes: the
/// kernels' C sources, repeated.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(repo_root().join("workloads/kernels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    sources.sort();
    let mut text = Vec::new();
    for s in &sources {
        text.extend(std::fs::read(s).unwrap());
    }
    std::fs::write(dir.path().join("text.txt"), &text).unwrap();
    dir
}

/// The check itself: the three exact profiles of coprof against qemu's log.
fn check(p: Program) {
    let dir = workdir();
    let image = Image::read(&p.bin);
    let name = p.bin.file_name().unwrap().to_string_lossy().into_owned();
    let q = qemu_profile(&image, &p.bin, &p.args, dir.path());
    let qemu_total: u64 = q.pcs.values().sum();

    // 1. Every PC's count, from instruction events.
    let sample = coprof_json(
        &[
            "sample",
            "--sampler",
            "counter:1",
            "--eval",
            "--profile",
            "pc",
            "--top",
            "100000000",
        ],
        &p.bin,
        &p.args,
        dir.path(),
    );
    let events: HashMap<u64, u64> = sample["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (hex(&t["key"]), t["full"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        events.len() as u64,
        sample["keys_full"].as_u64().unwrap(),
        "{name}: --top did not list every PC"
    );
    let qemu_pcs = in_coprofs_space(&image, &q.pcs, &events);
    let (off, worst) = difference(&events, &qemu_pcs);
    assert!(
        off <= SLACK,
        "{name} {:?}: coprof's exact PC profile differs from qemu's log by {off} instructions \
         (coprof {} in all, qemu {qemu_total}); largest differences:\n  {}",
        p.args,
        events.values().sum::<u64>(),
        worst.join("\n  ")
    );

    // 2. The code profile, from runs of basic blocks: its event count, and
    // its hot ranges' exact counts and estimates against qemu's sums.
    let ranges = coprof_json(
        &["ranges", "--stream", "pc", "--exact", "--hot", "0.02"],
        &p.bin,
        &p.args,
        dir.path(),
    );
    let n = ranges["n"].as_u64().unwrap();
    assert!(
        n.abs_diff(qemu_total) <= SLACK,
        "{name}: the code profile counted {n} instructions, qemu {qemu_total}"
    );
    let bound = ranges["epsilon"].as_f64().unwrap() * n as f64;
    let hot = ranges["hot_ranges"].as_array().unwrap();
    assert!(!hot.is_empty(), "{name}: no hot range");
    for r in hot {
        let (lo, hi) = (r["lo"].as_u64().unwrap(), r["hi"].as_u64().unwrap());
        let truth: u64 = qemu_pcs
            .iter()
            .filter(|(&pc, _)| lo <= pc && pc <= hi)
            .map(|(_, &c)| c)
            .sum();
        let exact = r["exact"].as_u64().unwrap();
        assert!(
            exact.abs_diff(truth) <= SLACK,
            "{name}: range [{lo:#x}, {hi:#x}]: exact count {exact}, qemu's log {truth}"
        );
        let estimate = r["count"].as_u64().unwrap();
        assert!(
            (estimate.abs_diff(truth) as f64) <= bound + SLACK as f64,
            "{name}: range [{lo:#x}, {hi:#x}]: RAP's estimate {estimate} is further than \
             epsilon*n = {bound} from qemu's {truth}"
        );
    }

    // 3. The loops' exact iteration counts, from runs of basic blocks.
    let loops = coprof_json(
        &["loops", "--exact", "--top", "32"],
        &p.bin,
        &p.args,
        dir.path(),
    );
    let in_image: u64 = q
        .sbbs
        .iter()
        .filter(|(&pc, _)| image.contains(pc))
        .map(|(_, &c)| c)
        .sum();
    let sbbs = loops["sbbs"].as_u64().unwrap();
    if q.pcs.keys().all(|&pc| image.contains(pc)) {
        assert!(
            sbbs.abs_diff(in_image) <= SLACK,
            "{name}: coprof saw {sbbs} taken short backward branches, qemu's log {in_image}"
        );
    }
    let listed = loops["loops"].as_array().unwrap();
    assert!(!listed.is_empty(), "{name}: no loop found");
    for l in listed {
        let pc = l["pc"].as_u64().unwrap();
        if !image.contains(pc) {
            continue;
        }
        let exact = l["exact_iterations"].as_u64().unwrap();
        let truth = q.sbbs.get(&pc).copied().unwrap_or(0);
        assert!(
            exact.abs_diff(truth) <= SLACK,
            "{name}: loop at {pc:#x}: exact iterations {exact}, qemu's log {truth}"
        );
    }

    // 4. The loaded values: the values report's exact executions and
    // invariances of its loads, against the registers in qemu's dumps.
    // Some loads see values that differ from run to run: the random bytes
    // the program gets from the kernel (stack canaries, pointer guards),
    // or what follows from the time and from addresses (Lua's string hash
    // seed, hence its tables' order and the strings it compares). They
    // show as differences between two coprof runs with other random bytes
    // and a stack 4 KiB lower (a 4 KiB environment variable), and are not
    // compared; nor are loads of addresses of the stack or of mapped
    // memory, which differ between implementations.
    let pad = "x".repeat(4096);
    let values_with = |seed: &str, env: &[(&str, &str)]| {
        let report = ["values", "--exact", "--random-seed", seed];
        let json = coprof_json_with(&report, &p.bin, &p.args, dir.path(), env);
        let pcs = json["pcs"].as_array().unwrap().clone();
        pcs.into_iter()
            .map(|l| (l["pc"].as_u64().unwrap(), l))
            .collect::<HashMap<u64, Value>>()
    };
    let report = values_with("1", &[]);
    let reseeded = values_with("2", &[("COPROF_TEST_PAD", &pad)]);
    let mut listed: Vec<&Value> = report
        .iter()
        .filter(|(pc, l)| {
            let mut values = l["values"].as_array().unwrap().iter();
            reseeded.get(pc).is_some_and(|r| same_exact_answer(l, r))
                && !values.any(|v| is_mapped(v["value"].as_u64().unwrap()))
        })
        .map(|(_, l)| l)
        .collect();
    listed.sort_by_key(|l| {
        (
            std::cmp::Reverse(l["executions"].as_u64().unwrap()),
            l["pc"].as_u64(),
        )
    });
    let mut chosen: HashMap<u64, Load> = HashMap::new();
    let mut budget = DUMPED_EXECUTIONS;
    for l in &listed {
        let (pc, n) = (l["pc"].as_u64().unwrap(), l["executions"].as_u64().unwrap());
        if let Some(load) = image.load(pc).filter(|_| n <= budget.min(DUMPED_PER_LOAD)) {
            chosen.insert(pc, load);
            budget -= n;
        }
    }
    let seen = qemu_load_values(&chosen, &p.bin, &p.args, dir.path());
    let mut compared = 0;
    for l in listed
        .iter()
        .filter(|l| chosen.contains_key(&l["pc"].as_u64().unwrap()))
    {
        let pc = l["pc"].as_u64().unwrap();
        let executions = l["executions"].as_u64().unwrap();
        let truth = seen.get(&pc).cloned().unwrap_or_default();
        let ours = l["values"].as_array().unwrap().iter();
        let values = ours.map(|v| v["value"].as_u64().unwrap());
        if values.chain(truth.keys().copied()).any(is_mapped) {
            continue;
        }
        compared += 1;
        assert_eq!(
            executions,
            truth.values().sum::<u64>(),
            "{name}: load at {pc:#x}: coprof counts {executions} executions, qemu's dumps {}",
            truth.values().sum::<u64>()
        );
        for v in l["values"].as_array().unwrap() {
            let value = v["value"].as_u64().unwrap();
            let share = v["exact_invariance"].as_f64().unwrap();
            let count = truth.get(&value).copied().unwrap_or(0);
            assert!(
                (share * executions as f64 - count as f64).abs() < 0.5,
                "{name}: load at {pc:#x}: value {value:#x} has exact invariance {share} \
                 in coprof, {count} of {executions} in qemu's dumps"
            );
        }
    }
    eprintln!("{name}: {compared} of {} loads compared", chosen.len());
    assert!(compared >= 5, "{name}: only {compared} loads compared");

    // 5. The program's own output, for the real programs.
    if p.compare_output {
        let run = |cmd: &mut Command| {
            let out = launch(cmd, &p.bin, &p.args, dir.path())
                .output()
                .expect("runs");
            (out.status.code(), out.stdout)
        };
        let plain = run(&mut Command::new("qemu-riscv64"));
        let ours = run(Command::new(assert_cmd::cargo::cargo_bin("coprof")).args(["run", "--"]));
        assert_eq!(
            plain.0, ours.0,
            "{name}: exit status under qemu and coprof run"
        );
        assert!(
            plain.1 == ours.1,
            "{name}: standard output differs: qemu {} bytes, coprof run {} bytes",
            plain.1.len(),
            ours.1.len()
        );
        assert!(!plain.1.is_empty(), "{name} printed nothing");
    }
    assert_eq!(q.status, 0, "{name} failed under qemu");
}

fn corpus_program(name: &str) {
    check(program(corpus().join(format!("{name}-O2")), &["alpha"]));
}

fn kernel(name: &str) {
    check(program(kernels().join(name), &["1"]));
}

fn real_program(name: &str, args: &[&str]) {
    let mut p = program(real().join(name), args);
    p.compare_output = true;
    check(p);
}

#[test]
fn self_modifying_code() {
    corpus_program("self_modifying");
}

#[test]
fn setjmp_longjmp() {
    corpus_program("setjmp_longjmp");
}

#[test]
fn atomics() {
    corpus_program("atomics");
}

#[test]
fn floating_point_conversions() {
    corpus_program("fp_convert");
}

#[test]
fn strings() {
    corpus_program("strings");
}

#[test]
fn system_calls() {
    corpus_program("syscalls");
}

#[test]
fn signal_handlers_and_caught_faults() {
    corpus_program("signals");
}

#[test]
fn stdio_files() {
    corpus_program("stdio_files");
}

#[test]
fn cpp_exceptions_and_containers() {
    corpus_program("cpp_runtime");
}

#[test]
fn crc32_kernel() {
    kernel("crc32");
}

#[test]
fn fir_kernel() {
    kernel("fir");
}

#[test]
fn adpcm_kernel() {
    kernel("adpcm");
}

#[test]
fn sha256_kernel() {
    kernel("sha256");
}

#[test]
fn bzip2_compresses() {
    real_program("bzip2", &["-9", "-c", "text.txt"]);
}

#[test]
fn minigzip_compresses() {
    real_program("minigzip", &["-6", "text.txt"]);
}

#[test]
fn lua_interprets() {
    let script = repo_root().join("workloads/real/lua/interp.lua");
    real_program("luarun", &[script.to_str().unwrap(), "20"]);
}

#[test]
fn sqlite_queries() {
    let script = repo_root().join("workloads/real/sql/orders.sql");
    real_program("sqlrun", &[script.to_str().unwrap(), "100"]);
}

/// The branch classifier the loop check rests on, on encodings that
/// riscv64-linux-gnu-as produced: without it, a wrong classifier could make the loop
/// check vacuous.
#[test]
fn classifier_knows_loop_branches_from_calls_and_returns() {
    assert!(loop_branch(0xfe071ce3)); // bnez a4, -8
    assert!(loop_branch(0xff5ff06f)); // j -12 (jal x0)
    assert!(!loop_branch(0xff1ff0ef)); // jal ra, -16: a call
    assert!(!loop_branch(0x00008067)); // ret (jalr x0, 0(ra))
    assert!(loop_branch(0x00078067)); // jr a5
    assert!(!loop_branch(0x000780e7)); // jalr ra, a5: a call
    assert!(!loop_branch(0x00a50533)); // add a0, a0, a0
    assert!(compressed_loop_branch(0xbff1)); // c.j -36
    assert!(compressed_loop_branch(0xffe9)); // c.bnez a5, -38
    assert!(!compressed_loop_branch(0x8082)); // c.jr ra: ret
    assert!(compressed_loop_branch(0x8782)); // c.jr a5
    assert!(!compressed_loop_branch(0x9782)); // c.jalr a5: a call
    assert!(!compressed_loop_branch(0x853e)); // c.mv a0, a5
}

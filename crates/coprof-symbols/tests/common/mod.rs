//! Shared by the symbolization tests: builds `tests/programs/symtest.c`
//! with the RISC-V cross compiler or the host's gcc, finds source lines by
//! their `MARK:` comments, walks a function instruction by instruction,
//! and compares the answers of two builds of it. A missing compiler or
//! tool fails the test (after trying `scripts/install-deps.sh`), never
//! skips it.

#![allow(dead_code)]

use coprof_symbols::{Disassembly, Location, Quality, Symbolizer};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;

const SYMTEST_C: &str = include_str!("../programs/symtest.c");
const SCALE_H: &str = include_str!("../programs/scale.h");

/// The two instruction sets the symbolizer must serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `riscv64-linux-gnu-gcc -static`: the simulator's binaries.
    Riscv64,
    /// The host's `gcc` (x86-64): the native sampler's binaries.
    X86_64,
}

impl Target {
    pub fn compiler(self) -> &'static str {
        match self {
            Target::Riscv64 => "riscv64-linux-gnu-gcc",
            Target::X86_64 => "gcc",
        }
    }

    /// The binutils program `name` (`objcopy`, `strip`) for this
    /// instruction set.
    pub fn tool(self, name: &str) -> String {
        match self {
            Target::Riscv64 => format!("riscv64-linux-gnu-{name}"),
            Target::X86_64 => name.to_string(),
        }
    }

    /// Whether `text` is a conditional or unconditional branch of this
    /// instruction set.
    pub fn is_branch(self, text: &str) -> bool {
        let m = mnemonic(text);
        match self {
            Target::Riscv64 => matches!(m, "beq" | "bne" | "blt" | "bge" | "bltu" | "bgeu"),
            Target::X86_64 => m.starts_with('j'),
        }
    }
}

/// The mnemonic of an assembly line.
pub fn mnemonic(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or("")
}

/// The absolute target of a direct branch as its text shows it: its last
/// operand, in hex, before the symbol it lies in (`jne 0x1150
/// <sum_scaled+0x10>`).
pub fn branch_target(text: &str) -> Option<u64> {
    let operands = text.split(" <").next()?;
    let last = operands.rsplit([' ', ',']).next()?;
    u64::from_str_radix(last.strip_prefix("0x")?, 16).ok()
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

static DEPS: Once = Once::new();

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Asserts that the program `name` runs, after `scripts/install-deps.sh`
/// (run once per test binary) when it does not: a missing tool fails the
/// test, never skips it.
pub fn ensure_tool(name: &str) {
    if !have(name) {
        DEPS.call_once(|| {
            let st = Command::new("bash")
                .arg(repo_root().join("scripts/install-deps.sh"))
                .status()
                .expect("scripts/install-deps.sh runs");
            assert!(st.success(), "scripts/install-deps.sh failed");
        });
    }
    assert!(
        have(name),
        "{name} is needed (scripts/install-deps.sh installs it)"
    );
}

/// Runs `program` with `args` (in `dir`, when given) and asserts that it
/// succeeded, with its standard error in the message when it did not.
pub fn run<S: AsRef<OsStr>>(dir: Option<&Path>, program: &str, args: impl IntoIterator<Item = S>) {
    let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let mut cmd = Command::new(program);
    cmd.args(&args);
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let out = cmd.output().unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A built test program and the sources it was built from.
pub struct Built {
    /// Keeps the sources and the binary alive for the test.
    _dir: tempfile::TempDir,
    /// The binary.
    pub binary: PathBuf,
    /// `symtest.c` as written into the build directory.
    pub source: PathBuf,
    /// `scale.h` as written into the build directory.
    pub header: PathBuf,
    /// What it was built for.
    pub target: Target,
}

impl Built {
    /// Opens the binary.
    pub fn open(&self) -> Symbolizer {
        Symbolizer::open(&self.binary)
            .unwrap_or_else(|e| panic!("opening {}: {e}", self.binary.display()))
    }
}

/// Builds symtest.c for `target` at -O2 with the extra `flags`
/// (`-g`, `-g0`, `-s`).
pub fn build(target: Target, flags: &[&str]) -> Built {
    ensure_tool(target.compiler());
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("symtest.c");
    let header = dir.path().join("scale.h");
    std::fs::write(&source, SYMTEST_C).unwrap();
    std::fs::write(&header, SCALE_H).unwrap();
    let binary = dir.path().join("symtest");
    let mut cmd = Command::new(target.compiler());
    if target == Target::Riscv64 {
        cmd.arg("-static");
    }
    let out = cmd
        .arg("-O2")
        .args(flags)
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .current_dir(dir.path())
        .output()
        .expect("the compiler runs");
    assert!(
        out.status.success(),
        "{} {flags:?} symtest.c failed: {}",
        target.compiler(),
        String::from_utf8_lossy(&out.stderr)
    );
    Built {
        _dir: dir,
        binary,
        source,
        header,
        target,
    }
}

/// The 1-based line of `text` (sources in tests/programs) that carries the
/// comment `MARK:<mark>`.
pub fn line_of(text: &str, mark: &str) -> u32 {
    let tag = format!("MARK:{mark} ");
    let hits: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(&tag))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "exactly one line marks {mark}");
    hits[0] as u32
}

/// Line of a mark in symtest.c.
pub fn c_line(mark: &str) -> u32 {
    line_of(SYMTEST_C, mark)
}

/// Line of a mark in scale.h.
pub fn h_line(mark: &str) -> u32 {
    line_of(SCALE_H, mark)
}

/// Every instruction of function `name`, in address order.
pub fn instructions(sym: &Symbolizer, name: &str) -> Vec<Disassembly> {
    let (start, end) = sym
        .function_range(name)
        .unwrap_or_else(|| panic!("{name} is in the symbol table"));
    let mut out = Vec::new();
    let mut pc = start;
    while pc < end {
        let d = sym
            .disassemble(pc)
            .unwrap_or_else(|| panic!("{name}: no instruction at {pc:#x}"));
        pc += d.bytes.len() as u64;
        out.push(d);
    }
    out
}

/// The loop of `name`: `(target, branch)` of its backward branch.
pub fn find_loop(sym: &Symbolizer, target: Target, name: &str) -> (u64, u64) {
    let (start, _) = sym.function_range(name).unwrap();
    let loops: Vec<(u64, u64)> = instructions(sym, name)
        .iter()
        .filter(|d| target.is_branch(&d.text))
        .filter_map(|d| {
            let t = branch_target(&d.text)?;
            assert_eq!(d.target, Some(t), "the target of {}", d.text);
            Some((t, d.pc))
        })
        .filter(|&(t, pc)| t >= start && t < pc)
        .collect();
    assert_eq!(loops.len(), 1, "{name} has one backward branch: {loops:x?}");
    let (target, branch) = loops[0];
    let text = sym.disassemble(branch).unwrap().text;
    let named = match target - start {
        0 => format!("<{name}>"),
        off => format!("<{name}+{off:#x}>"),
    };
    assert!(text.ends_with(&named), "{text} names its target {named}");
    loops[0]
}

/// The simulator corpus's C++ program (namespaces, classes, templates,
/// lambdas, inlined constructors) built with the host's `g++ -O2 -g`,
/// dynamically linked so that nearly all of its code has DWARF.
pub struct BuiltCpp {
    _dir: tempfile::TempDir,
    /// The binary.
    pub binary: PathBuf,
}

/// Builds `crates/coprof-rv/tests/programs/cpp_runtime.cpp`.
pub fn build_cpp() -> BuiltCpp {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("cpp_runtime");
    let source = repo_root().join("crates/coprof-rv/tests/programs/cpp_runtime.cpp");
    let out = Command::new("g++")
        .args(["-O2", "-g", "-o"])
        .arg(&binary)
        .arg(&source)
        .output()
        .expect("g++ runs");
    assert!(
        out.status.success(),
        "g++ cpp_runtime.cpp failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    BuiltCpp { _dir: dir, binary }
}

/// Every PC of `sum_scaled` in `plain`, with its answer there and in
/// `other` (the same source built another way).
pub fn answers_beside(plain: &Symbolizer, other: &Symbolizer) -> Vec<(u64, Location, Location)> {
    let pcs: Vec<u64> = instructions(plain, "sum_scaled")
        .iter()
        .map(|d| d.pc)
        .collect();
    assert!(!pcs.is_empty());
    pcs.into_iter()
        .map(|pc| (pc, plain.lookup(pc), other.lookup(pc)))
        .collect()
}

/// `other` names every PC of `sum_scaled` as `plain` does, inlined
/// frames included, and some PC is in the inlined `scale`.
pub fn same_frames(plain: &Symbolizer, other: &Symbolizer) {
    let mut inlined = 0;
    for (pc, x, y) in answers_beside(plain, other) {
        assert_eq!(y.source, Quality::Dwarf, "{y:?}");
        assert_eq!(
            x.inlined_chain().to_string(),
            y.inlined_chain().to_string(),
            "at {pc:#x}"
        );
        inlined += usize::from(!y.inlined.is_empty());
    }
    assert!(inlined > 0, "no PC of sum_scaled is in the inlined scale");
}

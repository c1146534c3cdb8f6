//! Differential test of the symbolizer against GNU binutils' `addr2line`,
//! an independent DWARF reader: for every instruction of every function of
//! real programs (bzip2 and Lua, built by `workloads/build-real.sh` for
//! RV64 and, with `--native`, for x86-64) that has line information,
//! `addr2line -a -f -i` and [`Symbolizer::lookup`] must name the same
//! innermost function, file and line, and the same chain of functions it
//! was inlined into, each with the file and line of its call site. The
//! corpus's C++ program is compared too, its names by the rules of
//! [`CppName`].

use coprof_symbols::demangle::demangle_or_keep;
use coprof_symbols::{Location, Quality, Symbolizer};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Builds bzip2 and Lua for the target with the project's script (which
/// installs the cross compiler when missing), once per test run, and
/// returns their directory.
fn real_programs(native: bool) -> &'static Path {
    static DIRS: [OnceLock<PathBuf>; 2] = [OnceLock::new(), OnceLock::new()];
    DIRS[native as usize].get_or_init(|| build_real_programs(native))
}

fn build_real_programs(native: bool) -> PathBuf {
    let root = repo_root();
    let mut cmd = Command::new("bash");
    cmd.arg(root.join("workloads/build-real.sh"));
    if native {
        cmd.arg("--native");
    }
    let out = cmd
        .args(["--only", "bzip2,luarun"])
        .output()
        .expect("workloads/build-real.sh runs");
    assert!(
        out.status.success(),
        "workloads/build-real.sh failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    root.join(if native {
        "workloads/build/real-x86_64"
    } else {
        "workloads/build/real"
    })
}

/// One source frame as both sides print it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Frame {
    function: String,
    file: String,
    line: Option<u32>,
}

/// The ELF's function symbols, sorted by address, with their demangled
/// names: read with `object`, not through the symbolizer. Alignment
/// padding between functions lies in none of them; the line table covers
/// it (with the line before it) and no function does, where addr2line
/// names the symbol before it. No program runs padding, and it is not
/// compared.
struct FunctionSymbols(Vec<(u64, u64, String)>);

impl FunctionSymbols {
    fn of(bin: &Path) -> FunctionSymbols {
        use object::{Object, ObjectSymbol, SymbolKind};
        let data = std::fs::read(bin).unwrap();
        let file = object::File::parse(&*data).expect("an ELF file");
        let mut symbols: Vec<(u64, u64, String)> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
            .map(|s| {
                let name = demangle_or_keep(s.name().unwrap_or_default().into());
                (s.address(), s.address() + s.size(), name)
            })
            .collect();
        symbols.sort_unstable();
        FunctionSymbols(symbols)
    }

    /// The symbol whose range holds `pc`.
    fn containing(&self, pc: u64) -> Option<&str> {
        let i = self.0.partition_point(|r| r.0 <= pc);
        self.0[..i]
            .iter()
            .rev()
            .take(8)
            .find(|&&(lo, hi, _)| lo <= pc && pc < hi)
            .map(|(_, _, name)| name.as_str())
    }
}

/// Every instruction start of the binary's code, decoded one after
/// another.
fn instruction_starts(sym: &Symbolizer) -> Vec<u64> {
    let mut pcs = Vec::new();
    for (lo, hi) in sym.code_ranges() {
        let mut pc = lo;
        while pc < hi {
            pcs.push(pc);
            pc += sym.disassemble(pc).map_or(2, |d| d.bytes.len() as u64);
        }
    }
    pcs
}

/// `addr2line -a -f -i` on every PC: for each, its frames innermost first,
/// or `None` when it has no line information.
fn addr2line(tool: &str, bin: &Path, pcs: &[u64]) -> Vec<Option<Vec<Frame>>> {
    let mut child = Command::new(tool)
        .args(["-a", "-C", "-f", "-i", "-e"])
        .arg(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{tool} starts: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let input: String = pcs.iter().map(|pc| format!("{pc:#x}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("addr2line finishes");
    writer.join().unwrap().expect("addr2line reads its input");
    assert!(out.status.success(), "{tool} failed");
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let mut answers: Vec<Option<Vec<Frame>>> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(addr) = lines.next() {
        assert!(addr.starts_with("0x"), "an address line, not {addr:?}");
        let mut frames = Vec::new();
        while lines.peek().is_some_and(|l| !l.starts_with("0x")) {
            let function = lines.next().unwrap().to_string();
            let place = lines.next().expect("a file:line after a function");
            // "file:42 (discriminator 3)", "file:?", "??:0"
            let place = place.split(" (discriminator").next().unwrap();
            let (file, line) = place.rsplit_once(':').expect("file:line");
            frames.push(Frame {
                function,
                file: file.to_string(),
                line: line.parse().ok().filter(|&l| l != 0),
            });
        }
        // Without DWARF, addr2line still names the object file from the
        // symbol table ("iofclose.o:?"): only a line number is line
        // information.
        let known = frames.first().is_some_and(|f| f.line.is_some());
        answers.push(known.then_some(frames));
    }
    assert_eq!(answers.len(), pcs.len(), "one answer per address");
    answers
}

/// The symbolizer's frames for `loc`, innermost first, as addr2line
/// prints them.
fn frames_of(loc: &Location) -> Vec<Frame> {
    let name = |f: &Option<String>| f.clone().unwrap_or_else(|| "??".to_string());
    let mut frames = vec![Frame {
        function: name(&loc.function),
        file: loc.file.clone().unwrap_or_default(),
        line: loc.line,
    }];
    frames.extend(loc.inlined.iter().map(|f| Frame {
        function: name(&f.function),
        file: f.file.clone().unwrap_or_default(),
        line: f.line,
    }));
    frames
}

/// Builds the simulator corpus's C++ program (exceptions, templates, the
/// standard library) with `compiler -static -O2 -g` into a temporary
/// directory.
fn cpp_program(compiler: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("cpp_runtime");
    let source = repo_root().join("crates/coprof-rv/tests/programs/cpp_runtime.cpp");
    let out = Command::new(compiler)
        .args(["-static", "-O2", "-g", "-o"])
        .arg(&bin)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("{compiler} runs (scripts/install-deps.sh installs it): {e}"));
    assert!(
        out.status.success(),
        "{compiler} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, bin)
}

/// How function names are compared. C: exactly. C++: each implementation
/// at hand names some C++ functions its own way, so a name must take one
/// of the forms of [`CppName`], and those of [`CppName::TheirSymbol`] are
/// not compared.
#[derive(Clone, Copy, PartialEq)]
enum Names {
    Exact,
    Cpp,
}

/// How a C++ frame's name from coprof stands to GNU addr2line's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CppName {
    /// The same text: both demangled the frame's linkage name, or both
    /// qualified it alike.
    Same,
    /// GNU prints the function's bare `DW_AT_name` (`parse_digit`) where
    /// coprof qualifies it (`(anonymous namespace)::parse_digit`).
    Bare,
    /// GNU prints the demangled symbol, with parameters and clone suffix
    /// (`…::parse_digit(std::…, int, int) [clone .cold]`), where coprof
    /// prints the qualified name without them: the function has no
    /// linkage name in the debug info.
    WithParameters,
    /// GNU prints the demangled name of the ELF symbol holding the PC for
    /// an inlined frame whose debug info has no linkage name: the outer
    /// function's name (`main` for an inlined `push_back`). Not compared.
    TheirSymbol,
    /// Anything else: a failure.
    Differ,
}

fn cpp_name(ours: &str, theirs: &str, symbol: Option<&str>) -> CppName {
    if ours == theirs {
        CppName::Same
    } else if ours.ends_with(&format!("::{theirs}")) {
        CppName::Bare
    } else if theirs
        .strip_prefix(ours)
        .is_some_and(|rest| rest.starts_with('('))
    {
        CppName::WithParameters
    } else if symbol == Some(theirs) {
        CppName::TheirSymbol
    } else {
        CppName::Differ
    }
}

fn compare(tool: &str, bin: &Path) {
    compare_frames(tool, bin, Names::Exact)
}

fn compare_frames(tool: &str, bin: &Path, names: Names) {
    let sym = Symbolizer::open(bin).unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    let functions = FunctionSymbols::of(bin);
    let pcs: Vec<u64> = instruction_starts(&sym)
        .into_iter()
        .filter(|&pc| functions.containing(pc).is_some())
        .collect();
    assert!(
        pcs.len() > 1000,
        "{}: only {} PCs",
        bin.display(),
        pcs.len()
    );
    let theirs = addr2line(tool, bin, &pcs);
    let (mut compared, mut inlined) = (0, 0);
    let mut differ = Vec::new();
    let mut cpp_names = std::collections::BTreeMap::<CppName, usize>::new();
    let mut ours = std::collections::BTreeSet::<String>::new();
    for (pc, want) in pcs.iter().zip(&theirs) {
        let Some(want) = want else { continue };
        compared += 1;
        inlined += usize::from(want.len() > 1);
        let loc = sym.lookup(*pc);
        let mut got = frames_of(&loc);
        let mut want = want.clone();
        let mut names_differ = false;
        if names == Names::Cpp {
            for (g, w) in got.iter_mut().zip(want.iter_mut()) {
                let kind = cpp_name(&g.function, &w.function, functions.containing(*pc));
                ours.insert(g.function.clone());
                *cpp_names.entry(kind).or_default() += 1;
                names_differ |= kind == CppName::Differ;
                g.function.clear();
                w.function.clear();
            }
        }
        if loc.source != Quality::Dwarf || got != want || names_differ {
            let text = sym.disassemble(*pc).map(|d| d.text).unwrap_or_default();
            differ.push(format!(
                "{pc:#x} {text}:\n    addr2line {want:?}\n    coprof    {got:?}",
                want = theirs[compared_index(&pcs, *pc)],
                got = frames_of(&loc),
            ));
        }
    }
    eprintln!(
        "{}: {compared} of {} PCs with line information ({inlined} in inlined code), {} differ",
        bin.display(),
        pcs.len(),
        differ.len()
    );
    assert!(compared >= 1000, "too few PCs with line information");
    assert!(inlined >= 100, "too few PCs in inlined code");
    assert!(
        differ.is_empty(),
        "{}: {} of {compared} PCs symbolize differently from {tool}; the first:\n{}",
        bin.display(),
        differ.len(),
        differ[..differ.len().min(8)].join("\n")
    );
    if names == Names::Cpp {
        eprintln!("{}: C++ frame names {cpp_names:?}", bin.display());
        let frames: usize = cpp_names.values().sum();
        let count = |k| cpp_names.get(&k).copied().unwrap_or(0);
        assert!(
            count(CppName::Same) * 2 > frames,
            "most C++ frames are named alike: {cpp_names:?}"
        );
        assert!(
            count(CppName::TheirSymbol) * 10 < frames,
            "few C++ frames go uncompared: {cpp_names:?}"
        );
        // A member of a class template by its demangled linkage name; and
        // functions without a linkage name by their scopes: a function and
        // an inlined constructor and destructor in an anonymous namespace,
        // a member of a class template over a type of internal linkage, a
        // lambda.
        let shapes = "std::unique_ptr<(anonymous namespace)::Shape, \
                      std::default_delete<(anonymous namespace)::Shape> >";
        for name in [
            "std::vector<int, std::allocator<int> >::push_back(int&&)",
            "(anonymous namespace)::parse_digit",
            "(anonymous namespace)::Noisy::Noisy",
            "(anonymous namespace)::Noisy::~Noisy",
            &format!("std::vector<{shapes}, std::allocator<{shapes} > >::push_back"),
            "main::(anonymous struct)::operator()",
        ] {
            assert!(ours.contains(name), "no frame named {name:?}");
        }
    }
}

/// Where `pc` is in `pcs` (sorted), for a message.
fn compared_index(pcs: &[u64], pc: u64) -> usize {
    pcs.partition_point(|&p| p < pc)
}

#[test]
fn riscv64_bzip2() {
    compare(
        "riscv64-linux-gnu-addr2line",
        &real_programs(false).join("bzip2"),
    );
}

#[test]
fn riscv64_lua() {
    compare(
        "riscv64-linux-gnu-addr2line",
        &real_programs(false).join("luarun"),
    );
}

#[test]
fn x86_64_bzip2() {
    compare("addr2line", &real_programs(true).join("bzip2"));
}

#[test]
fn x86_64_lua() {
    compare("addr2line", &real_programs(true).join("luarun"));
}

#[test]
fn riscv64_cpp() {
    let (_dir, bin) = cpp_program("riscv64-linux-gnu-g++");
    compare_frames("riscv64-linux-gnu-addr2line", &bin, Names::Cpp);
}

#[test]
fn x86_64_cpp() {
    let (_dir, bin) = cpp_program("g++");
    compare_frames("addr2line", &bin, Names::Cpp);
}

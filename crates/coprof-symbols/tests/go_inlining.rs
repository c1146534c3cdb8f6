//! Go's own tables against Go's DWARF: a Go program built with its DWARF,
//! for RISC-V and for x86-64, answers every PC of its code from
//! `.gopclntab` and the runtime's inlining trees as its DWARF answers
//! them: the innermost function, its file and line, and each caller it
//! was inlined into with the line of the call site; and so do
//! position-independent x86-64 builds, whose table sits among the data
//! the loader relocates: linked by Go's linker, with a section of its own,
//! and by the system's (`-linkmode=external`), without one.
//! The Go toolchain is Debian's (`golang-go`, which scripts/install-deps.sh
//! installs).

mod common;

use coprof_symbols::gopclntab::GoTable;
use coprof_symbols::{Location, Quality, Symbolizer};
use object::{Object, ObjectSymbol};
use std::path::PathBuf;
use std::process::Command;

/// A program whose hot loop calls small functions that the compiler
/// inlines into each other (`step` inlines `add` and `scale`), beside
/// the standard library's own inlined code.
const PROGRAM: &str = r#"package main

import (
	"fmt"
	"os"
	"strings"
)

type point struct{ x, y int }

func (p point) add(q point) point { return point{p.x + q.x, p.y + q.y} }

func scale(p point, k int) point { return point{p.x * k, p.y * k} }

func norm1(p point) int {
	if p.x < 0 {
		p.x = -p.x
	}
	if p.y < 0 {
		p.y = -p.y
	}
	return p.x + p.y
}

func step(p point, i int) point { return scale(p.add(point{i, -i}), 3) }

func main() {
	n := 1000
	if len(os.Args) > 1 {
		fmt.Sscan(os.Args[1], &n)
	}
	p := point{1, 2}
	sum := 0
	for i := 0; i < n; i++ {
		p = step(p, i%7)
		p.x %= 1000003
		p.y %= 1000003
		sum += norm1(p)
	}
	fmt.Println(strings.Repeat("=", 3), sum, p)
}
"#;

/// How to build: Go's linker, or position-independent, by Go's linker or
/// the system's.
#[derive(Clone, Copy, Debug)]
enum Link {
    Plain,
    Pie,
    ExternalPie,
}

/// Builds [`PROGRAM`] for `goarch` with its DWARF, linked as `link` says.
fn build(goarch: &str, link: Link) -> (tempfile::TempDir, PathBuf) {
    let root = common::repo_root();
    let st = Command::new("bash")
        .arg(root.join("scripts/install-deps.sh"))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("scripts/install-deps.sh runs");
    assert!(st.success(), "installing the Go toolchain failed");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.go"), PROGRAM).unwrap();
    std::fs::write(dir.path().join("go.mod"), "module goinl\n\ngo 1.19\n").unwrap();
    let bin = dir.path().join(format!("goinl-{goarch}"));
    let flags: &[&str] = match link {
        Link::Plain => &[],
        Link::Pie => &["-buildmode=pie"],
        Link::ExternalPie => &["-buildmode=pie", "-ldflags=-linkmode=external"],
    };
    let out = Command::new("go")
        .arg("build")
        .args(flags)
        .arg("-o")
        .arg(&bin)
        .arg(".")
        .current_dir(dir.path())
        .env("GOOS", "linux")
        .env("GOARCH", goarch)
        .env(
            "CGO_ENABLED",
            if matches!(link, Link::ExternalPie) {
                "1"
            } else {
                "0"
            },
        )
        .env("GOCACHE", root.join("target/go-cache"))
        .env("GOFLAGS", "-mod=mod")
        .env("GO111MODULE", "on")
        .output()
        .expect("go runs");
    assert!(
        out.status.success(),
        "go build for {goarch}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, bin)
}

/// A location as (function, file's last component, line) per frame,
/// innermost first.
fn frames(l: &Location) -> Vec<(String, String, u32)> {
    let short = |f: &Option<String>| {
        f.as_deref()
            .map(|f| f.rsplit('/').next().unwrap_or(f).to_string())
            .unwrap_or_default()
    };
    std::iter::once((
        l.function.clone().unwrap_or_default(),
        short(&l.file),
        l.line.unwrap_or(0),
    ))
    .chain(l.inlined.iter().map(|f| {
        (
            f.function.clone().unwrap_or_default(),
            short(&f.file),
            f.line.unwrap_or(0),
        )
    }))
    .collect()
}

fn matches_dwarf(goarch: &str, link: Link) {
    let (_dir, bin) = build(goarch, link);
    let data = std::fs::read(&bin).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let table = GoTable::from_object(&file).expect("a .gopclntab");
    assert!(table.has_inlining(), "the inlining trees were not found");
    let dwarf = Symbolizer::open(&bin).unwrap();
    // Every instruction-aligned PC of the program's own functions and of
    // a few of the runtime's that inline much.
    let wanted = [
        "main.",
        "fmt.(*pp).doPrint",
        "strings.Repeat",
        "runtime.mallocgc",
    ];
    let step = if goarch == "riscv64" { 4 } else { 1 };
    let (mut compared, mut inlined, mut differ) = (0, 0, Vec::new());
    for sym in file.symbols() {
        let name = sym.name().unwrap_or("");
        if sym.size() == 0 || !wanted.iter().any(|w| name.starts_with(w)) {
            continue;
        }
        for pc in (sym.address()..sym.address() + sym.size()).step_by(step) {
            let d = dwarf.lookup(pc);
            if d.source != Quality::Dwarf || d.line.unwrap_or(0) == 0 {
                continue;
            }
            let g = table
                .find(pc)
                .expect("every PC of a function is in the table")
                .location(pc);
            compared += 1;
            inlined += usize::from(!g.inlined.is_empty());
            if frames(&d) != frames(&g) && differ.len() < 10 {
                differ.push(format!(
                    "{pc:#x}: DWARF {:?}, Go's tables {:?}",
                    frames(&d),
                    frames(&g)
                ));
            }
        }
    }
    assert!(compared > 500, "only {compared} PCs compared");
    assert!(inlined > 20, "only {inlined} PCs of inlined code");
    assert!(
        differ.is_empty(),
        "{goarch} {link:?}: of {compared} PCs:\n{}",
        differ.join("\n")
    );
}

#[test]
fn riscv64_inlined_frames_match_dwarf() {
    matches_dwarf("riscv64", Link::Plain);
}

#[test]
fn x86_64_inlined_frames_match_dwarf() {
    matches_dwarf("amd64", Link::Plain);
}

#[test]
fn x86_64_position_independent_inlined_frames_match_dwarf() {
    matches_dwarf("amd64", Link::Pie);
}

#[test]
fn x86_64_externally_linked_inlined_frames_match_dwarf() {
    matches_dwarf("amd64", Link::ExternalPie);
}

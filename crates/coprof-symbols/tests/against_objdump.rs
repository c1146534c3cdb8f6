//! Differential test of the addresses the disassembly names against GNU
//! binutils' `objdump -d`, an independent disassembler: for every
//! instruction of a statically linked program (its own code and the C
//! library's), the address [`Symbolizer::disassemble`] gives as a comment
//! (`# 0x404010`) must be the one objdump gives at that PC. On x86-64
//! these are RIP-relative operands, and the two must agree on every one.
//! On RISC-V they are the addresses put together from an `auipc` or `lui`
//! and the offset of a later instruction, or from `gp`: objdump follows
//! the registers across the whole section, where coprof forgets them at a
//! function's start and after a jump, so coprof gives a part of objdump's
//! comments (it must give most), and where it gives one, objdump's.

mod common;

use common::{build, ensure_tool, run, Target};
use std::collections::BTreeMap;
use std::process::Command;

/// objdump's comments: PC to the address after `#`.
fn objdump_comments(target: Target, binary: &std::path::Path) -> BTreeMap<u64, u64> {
    let tool = target.tool("objdump");
    ensure_tool(&tool);
    let out = Command::new(&tool)
        .arg("-d")
        .arg(binary)
        .output()
        .expect("objdump runs");
    assert!(out.status.success(), "{tool} -d failed");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut comments = BTreeMap::new();
    for line in text.lines() {
        let Some((pc, rest)) = line.trim_start().split_once(":\t") else {
            continue;
        };
        let Ok(pc) = u64::from_str_radix(pc, 16) else {
            continue;
        };
        let Some((_, comment)) = rest.split_once(" # ") else {
            continue;
        };
        let address = comment.split_whitespace().next().unwrap();
        let address = u64::from_str_radix(address, 16).expect("a hex address");
        comments.insert(pc, address);
    }
    comments
}

/// coprof's comments: PC to the address after `#`, for every instruction
/// of the code sections, decoded one after another; also checked to be
/// the instruction's target.
fn coprof_comments(built: &common::Built) -> BTreeMap<u64, u64> {
    let sym = built.open();
    let mut comments = BTreeMap::new();
    for (lo, hi) in sym.code_ranges() {
        let mut pc = lo;
        while pc < hi {
            let Some(d) = sym.disassemble(pc) else {
                pc += 1;
                continue;
            };
            if let Some((_, comment)) = d.text.split_once(" # ") {
                let address = comment.split_whitespace().next().unwrap();
                let address = u64::from_str_radix(address.trim_start_matches("0x"), 16).unwrap();
                assert_eq!(d.target, Some(address), "{pc:#x} {}", d.text);
                comments.insert(pc, address);
            }
            pc += d.bytes.len() as u64;
        }
    }
    comments
}

/// The addresses from the first loaded section's start to the last's end.
fn loaded_span(binary: &std::path::Path) -> (u64, u64) {
    use object::{Object, ObjectSection};
    let bytes = std::fs::read(binary).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let loaded: Vec<(u64, u64)> = file
        .sections()
        .filter(|s| s.address() != 0)
        .map(|s| (s.address(), s.address() + s.size()))
        .collect();
    let lo = loaded.iter().map(|s| s.0).min().unwrap();
    let hi = loaded.iter().map(|s| s.1).max().unwrap();
    (lo, hi)
}

#[test]
fn x86_64_rip_relative_addresses_are_objdumps() {
    let built = build(Target::X86_64, &["-g", "-static"]);
    let theirs = objdump_comments(Target::X86_64, &built.binary);
    let ours = coprof_comments(&built);
    assert!(
        theirs.len() > 1000,
        "a static libc: {} comments",
        theirs.len()
    );
    let differ: Vec<_> = theirs
        .iter()
        .filter(|(pc, a)| ours.get(pc) != Some(a))
        .take(10)
        .collect();
    assert!(
        differ.is_empty(),
        "objdump's comments coprof lacks or differs on: {differ:x?}"
    );
    assert_eq!(
        ours.len(),
        theirs.len(),
        "coprof's comments objdump has not"
    );
}

#[test]
fn riscv_register_addresses_are_objdumps() {
    let built = build(Target::Riscv64, &["-g"]);
    let theirs = objdump_comments(Target::Riscv64, &built.binary);
    let ours = coprof_comments(&built);
    let wrong: Vec<_> = ours
        .iter()
        .filter(|(pc, a)| theirs.get(pc).is_some_and(|t| t != *a))
        .take(10)
        .map(|(pc, a)| (pc, a, theirs.get(pc)))
        .collect();
    assert!(
        wrong.is_empty(),
        "coprof's comments objdump differs on: {wrong:x?}"
    );
    // objdump also writes addresses relative to `tp`, the thread pointer,
    // as if it were 0 (offsets into a thread's block), and the constants
    // `lui` builds (ELF tags): their addresses lie outside the program.
    let (lo, hi) = loaded_span(&built.binary);
    let addresses: Vec<u64> = theirs
        .iter()
        .filter(|(_, &a)| (lo..hi).contains(&a))
        .map(|(&pc, _)| pc)
        .collect();
    let both = addresses.iter().filter(|pc| ours.contains_key(pc)).count();
    let only_ours = ours.keys().filter(|pc| !theirs.contains_key(pc)).count();
    eprintln!(
        "coprof gives {both} of objdump's {} addresses in the program, and {only_ours} more",
        addresses.len()
    );
    assert!(
        both * 100 >= addresses.len() * 99,
        "coprof gives {both} of objdump's {} addresses in the program",
        addresses.len()
    );
}

/// A program that calls the C library through its PLT.
const CALLS_LIBC: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    char buf[64];
    memset(buf, 'x', sizeof buf - 1);
    buf[63] = 0;
    char *copy = strdup(buf);
    printf("%zu %s\n", strlen(copy), argc > 1 ? argv[1] : "");
    free(copy);
    return 0;
}
"#;

/// objdump's `<name@plt>:` headers: each stub's address and name.
fn objdump_stubs(target: Target, binary: &std::path::Path) -> Vec<(u64, String)> {
    let tool = target.tool("objdump");
    let out = Command::new(&tool).arg("-d").arg(binary).output().unwrap();
    assert!(out.status.success(), "{tool} -d failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (addr, rest) = l.split_once(" <")?;
            let name = rest.strip_suffix(">:")?.strip_suffix("@plt")?;
            Some((u64::from_str_radix(addr, 16).ok()?, name.to_string()))
        })
        .collect()
}

/// The PCs where objdump's comment names a symbol by its version or
/// `@Base` (an address in the global offset table), with the symbol.
fn objdump_slot_names(target: Target, binary: &std::path::Path) -> Vec<(u64, String)> {
    let out = Command::new(target.tool("objdump"))
        .arg("-d")
        .arg(binary)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (pc, rest) = l.trim_start().split_once(":\t")?;
            let (_, comment) = rest.split_once(" # ")?;
            let symbol = comment.split_once(" <")?.1.strip_suffix('>')?;
            let (name, version) = symbol.split_once('@')?;
            (version.starts_with("GLIBC") || version == "Base")
                .then(|| Some((u64::from_str_radix(pc, 16).ok()?, name.to_string())))?
        })
        .collect()
}

/// Every stub objdump names `memset@plt` is named so, from its first
/// byte to its last, in a dynamically linked program of each instruction
/// set, where it was the symbol before (`_init+0x20`).
fn plt_stubs_are_named(target: Target) {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("calls.c");
    std::fs::write(&source, CALLS_LIBC).unwrap();
    let binary = dir.path().join("calls");
    ensure_tool(target.compiler());
    run(
        Some(dir.path()),
        target.compiler(),
        ["-O1", "-g", "-o", "calls", "calls.c"],
    );
    let theirs = objdump_stubs(target, &binary);
    let names: Vec<&str> = theirs.iter().map(|s| s.1.as_str()).collect();
    for f in ["strdup", "strlen", "free"] {
        assert!(names.contains(&f), "objdump names no {f}@plt: {names:?}");
    }
    let named_as_objdump_names = || {
        let sym = coprof_symbols::Symbolizer::open(&binary).unwrap();
        for (addr, name) in &theirs {
            assert_eq!(sym.lookup(*addr).to_string(), format!("{name}@plt"));
            assert_eq!(sym.lookup(addr + 6).to_string(), format!("{name}@plt+0x6"));
        }
    };
    named_as_objdump_names();
    // An address read from the global offset table names the symbol the
    // slot holds, `name@got`, where objdump names it by its version
    // (`__libc_start_main@GLIBC_2.34`).
    let sym = coprof_symbols::Symbolizer::open(&binary).unwrap();
    let mut slots = 0;
    for (pc, name) in objdump_slot_names(target, &binary) {
        let text = sym.disassemble(pc).unwrap().text;
        assert!(text.ends_with(&format!("<{name}@got>")), "{pc:#x}: {text}");
        slots += 1;
    }
    if target == Target::X86_64 {
        assert!(slots > 0, "no load from the global offset table");
    }
    // Stripped, as distributions ship programs: the stubs keep their
    // names, which come from the dynamic relocations.
    let strip = Command::new(target.tool("strip")).arg(&binary).status();
    assert!(strip.unwrap().success());
    named_as_objdump_names();
}

#[test]
fn x86_64_plt_stubs_are_named() {
    plt_stubs_are_named(Target::X86_64);
}

#[test]
fn riscv_plt_stubs_are_named() {
    plt_stubs_are_named(Target::Riscv64);
}

/// The output of `tool ARGS… binary`.
fn output_of(tool: &str, args: &[&str], binary: &std::path::Path) -> String {
    let out = Command::new(tool).args(args).arg(binary).output().unwrap();
    assert!(out.status.success(), "{tool} {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// In a statically linked x86-64 program, the stubs through which it
/// calls the C library's indirect functions (`strlen`, `memset`) are
/// named after them, `strlen@plt`, where objdump names them after the
/// symbol before (`_init+0xc8`). Each name is checked against binutils'
/// own tables: the stub's slot (objdump), the `IRELATIVE` relocation that
/// fills it with its resolver's answer (readelf -r), and the `IFUNC`
/// symbols at that resolver (readelf -s).
#[test]
fn x86_64_static_indirect_function_stubs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("calls.c"), CALLS_LIBC).unwrap();
    let binary = dir.path().join("calls");
    run(
        Some(dir.path()),
        "gcc",
        ["-O1", "-g", "-static", "-o", "calls", "calls.c"],
    );
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    // Slot -> resolver.
    let resolvers: BTreeMap<u64, u64> = output_of("readelf", &["-rW"], &binary)
        .lines()
        .filter(|l| l.contains("R_X86_64_IRELATIV"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (hex(f[0]), hex(f[f.len() - 1]))
        })
        .collect();
    assert!(resolvers.len() > 5, "{resolvers:?}");
    // Resolver -> the IFUNC symbols there.
    let mut ifuncs: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for l in output_of("readelf", &["-sW"], &binary).lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() == 8 && f[3] == "IFUNC" {
            ifuncs.entry(hex(f[1])).or_default().push(f[7].to_string());
        }
    }
    // Stub -> slot, from objdump's `jmp *…(%rip) # SLOT` in `.plt`.
    let stubs: Vec<(u64, u64)> = output_of("objdump", &["-d", "-j", ".plt"], &binary)
        .lines()
        .filter_map(|l| {
            let (pc, rest) = l.trim_start().split_once(":\t")?;
            let (insn, slot) = rest.split_once(" # ")?;
            let slot = slot.split_whitespace().next()?;
            insn.contains("jmp").then(|| (hex(pc), hex(slot)))
        })
        .collect();
    assert_eq!(stubs.len(), resolvers.len(), "a stub per slot: {stubs:x?}");
    let sym = coprof_symbols::Symbolizer::open(&binary).unwrap();
    for (stub, slot) in &stubs {
        let names = &ifuncs[&resolvers[slot]];
        let named = sym.lookup(*stub).to_string();
        let name = named
            .strip_suffix("@plt")
            .unwrap_or_else(|| panic!("stub {stub:#x} named {named}"));
        assert!(names.iter().any(|n| n == name), "{named}: {names:?}");
        // The whole stub, 8 bytes: `jmp *` and a two-byte nop.
        assert_eq!(sym.lookup(stub + 7).to_string(), format!("{name}@plt+0x7"));
    }
    // The call in main names the stub it calls.
    let main = output_of("objdump", &["-d", "--disassemble=main"], &binary);
    let calls: Vec<String> = main
        .lines()
        .filter_map(|l| {
            let (pc, rest) = l.trim_start().split_once(":\t")?;
            rest.contains("call").then(|| hex(pc))
        })
        .filter_map(|pc| Some(sym.disassemble(pc)?.text))
        .collect();
    assert!(
        calls.iter().any(|c| c.ends_with("<strlen@plt>")),
        "main's calls: {calls:?}"
    );
}

//! Stripped binaries whose DWARF is in a separate debug file: found by
//! debug link (beside the binary, in its `.debug` directory) and by build
//! ID (under a debug directory), and refused when it does not match, as
//! GDB, perf and valgrind find them. Answers are those of the unstripped
//! binary.

mod common;

use common::{build, instructions, Target};
use coprof_symbols::{Quality, Symbolizer};
use std::path::Path;
use std::process::Command;

fn tool(target: Target, name: &str) -> String {
    match target {
        Target::Riscv64 => format!("riscv64-linux-gnu-{name}"),
        Target::X86_64 => name.to_string(),
    }
}

fn run(dir: &Path, program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn separate_debug_files(target: Target) {
    let full = build(target, &["-g"]);
    let expected: Vec<_> = {
        let sym = full.open();
        instructions(&sym, "sum_scaled")
            .iter()
            .map(|d| sym.lookup(d.pc))
            .collect()
    };
    assert!(expected.iter().all(|l| l.source == Quality::Dwarf));
    let dir = full.binary.parent().unwrap().to_path_buf();
    let no_dirs: &[std::path::PathBuf] = &[];
    // A binary with DWARF of its own: its answers hang on it alone.
    assert_eq!(
        stamped(&full.binary, no_dirs),
        std::slice::from_ref(&full.binary)
    );
    let objcopy = tool(target, "objcopy");
    run(
        &dir,
        &objcopy,
        &["--only-keep-debug", "symtest", "symtest.debug"],
    );
    let kept = dir.join("kept.debug");
    std::fs::copy(dir.join("symtest.debug"), &kept).unwrap();
    run(&dir, &tool(target, "strip"), &["--strip-all", "symtest"]);
    let bare = Symbolizer::open(&full.binary).unwrap();
    assert_eq!(bare.debug_info().best(), Quality::Address, "stripped");
    run(
        &dir,
        &objcopy,
        &["--add-gnu-debuglink=symtest.debug", "symtest"],
    );
    // Stripped, with a link: on the binary and the linked file beside it,
    // the only candidate that exists.
    assert_eq!(
        stamped(&full.binary, no_dirs),
        [full.binary.clone(), dir.join("symtest.debug")]
    );

    let same_answers = |sym: &Symbolizer| {
        for want in &expected {
            let got = sym.lookup(want.pc);
            assert_eq!(&got, want, "{target:?}");
        }
    };
    // Beside the binary.
    let sym = Symbolizer::open_with_debug_dirs(&full.binary, no_dirs).unwrap();
    assert!(sym.debug_info().dwarf, "{:?}", sym.debug_info());
    assert_eq!(
        sym.debug_info().debug_file.as_deref(),
        Some(dir.canonicalize().unwrap().join("symtest.debug").as_path())
    );
    assert!(sym.debug_info().function_symbols > 0, "symbols from it too");
    same_answers(&sym);
    assert!(
        sym.disassemble(expected[0].pc).is_some(),
        "code from the binary"
    );

    // In its .debug directory.
    std::fs::create_dir(dir.join(".debug")).unwrap();
    std::fs::rename(dir.join("symtest.debug"), dir.join(".debug/symtest.debug")).unwrap();
    let sym = Symbolizer::open_with_debug_dirs(&full.binary, no_dirs).unwrap();
    same_answers(&sym);

    // A file of that name with other contents fails the link's CRC.
    let other = build(target, &["-g", "-O0"]);
    std::fs::copy(&other.binary, dir.join(".debug/symtest.debug")).unwrap();
    let sym = Symbolizer::open_with_debug_dirs(&full.binary, no_dirs).unwrap();
    assert_eq!(sym.debug_info().debug_file, None);
    assert_eq!(sym.debug_info().best(), Quality::Address);

    // By build ID, under a debug directory, without a link.
    run(
        &dir,
        &objcopy,
        &["--remove-section=.gnu_debuglink", "symtest"],
    );
    let id = build_id(&dir.join("symtest"));
    let root = tempfile::tempdir().unwrap();
    let place = root
        .path()
        .join(".build-id")
        .join(&id[..2])
        .join(format!("{}.debug", &id[2..]));
    std::fs::create_dir_all(place.parent().unwrap()).unwrap();
    // The debug file kept from before stripping, moved into place.
    std::fs::rename(&kept, &place).unwrap();
    let dirs = [root.path().to_path_buf()];
    assert_eq!(
        stamped(&full.binary, &dirs),
        [full.binary.clone(), place.clone()]
    );
    let sym = Symbolizer::open_with_debug_dirs(&full.binary, &[root.path().to_path_buf()]).unwrap();
    assert_eq!(
        sym.debug_info().debug_file.as_deref(),
        Some(place.as_path())
    );
    same_answers(&sym);
    // Not under the directories asked for: nothing.
    let sym = Symbolizer::open_with_debug_dirs(&full.binary, no_dirs).unwrap();
    assert_eq!(sym.debug_info().best(), Quality::Address);
}

/// The files whose stamps key the answers about `binary`'s symbols
/// ([`coprof_symbols::debug_file::stamps`]), read without loading the
/// binary whole.
fn stamped(binary: &Path, debug_dirs: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let stamps = coprof_symbols::debug_file::stamps(binary, debug_dirs).unwrap();
    assert_eq!(stamps[0].len, std::fs::metadata(binary).unwrap().len());
    stamps.into_iter().map(|s| s.path).collect()
}

/// The binary's build ID in hex, from `readelf -n`'s "Build ID:" line.
fn build_id(binary: &Path) -> String {
    let out = Command::new("readelf")
        .arg("-n")
        .arg(binary)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap_or_else(|| panic!("{} has no build ID: {text}", binary.display()))
        .trim()
        .to_string()
}

#[test]
fn riscv_separate_debug_files() {
    separate_debug_files(Target::Riscv64);
}

#[test]
fn x86_64_separate_debug_files() {
    separate_debug_files(Target::X86_64);
}

//! Stripped binaries whose DWARF is in a separate debug file: found by
//! debug link (beside the binary, in its `.debug` directory) and by build
//! ID (under a debug directory), and refused when it does not match, as
//! GDB, perf and valgrind find them. Answers are those of the unstripped
//! binary.

mod common;

use common::{answers_beside, build, ensure_tool, instructions, run, same_frames, Built, Target};
use coprof_symbols::{Quality, Symbolizer};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

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
    let objcopy = target.tool("objcopy");
    run(
        Some(&dir),
        &objcopy,
        ["--only-keep-debug", "symtest", "symtest.debug"],
    );
    let kept = dir.join("kept.debug");
    std::fs::copy(dir.join("symtest.debug"), &kept).unwrap();
    run(
        Some(&dir),
        &target.tool("strip"),
        ["--strip-all", "symtest"],
    );
    let bare = Symbolizer::open(&full.binary).unwrap();
    assert_eq!(bare.debug_info().best(), Quality::Address, "stripped");
    run(
        Some(&dir),
        &objcopy,
        ["--add-gnu-debuglink=symtest.debug", "symtest"],
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
        Some(&dir),
        &objcopy,
        ["--remove-section=.gnu_debuglink", "symtest"],
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

/// Two builds of symtest.c whose DWARF `dwz -m` has made share a
/// supplementary file, named in each by a `.gnu_debugaltlink` of
/// `link` (the path written in the link; `file` is where it is
/// written), as distributions' debug packages are built. Returns the
/// plain build, for the answers to compare with, and the two.
fn dwz_pair(target: Target, file: &Path, link: &Path) -> (Built, Built, Built) {
    ensure_tool("dwz");
    let plain = build(target, &["-g"]);
    let (a, b) = (build(target, &["-g"]), build(target, &["-g"]));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let args = [
        OsStr::new("-m"),
        file.as_os_str(),
        OsStr::new("-M"),
        link.as_os_str(),
    ];
    run(
        None,
        "dwz",
        args.into_iter()
            .chain([a.binary.as_os_str(), b.binary.as_os_str()]),
    );
    (plain, a, b)
}

/// `dwz` moved the DIEs the two builds share, among them the inlined
/// `scale`'s, to the supplementary file: with it, every PC gets the
/// answer of the build before `dwz`, inlined frames included.
fn dwz_supplementary_file(target: Target) {
    let dir = tempfile::tempdir().unwrap();
    let sup = dir.path().join("common.debug");
    let (plain, a, _b) = dwz_pair(target, &sup, &sup);
    let (want, got) = (plain.open(), a.open());
    assert_eq!(
        got.debug_info().supplementary_file.as_deref(),
        Some(sup.as_path())
    );
    assert_eq!(got.debug_info().note(), None);
    same_frames(&want, &got);
}

#[test]
fn riscv_dwz_supplementary_file() {
    dwz_supplementary_file(Target::Riscv64);
}

#[test]
fn x86_64_dwz_supplementary_file() {
    dwz_supplementary_file(Target::X86_64);
}

/// A link into `/usr/lib/debug` is followed under each debug directory
/// (a sysroot's `usr/lib/debug`), and the answers about symbols are keyed
/// by the file found there; with it gone, the note names the file the
/// link gives, and every PC keeps its line.
#[test]
fn dwz_link_under_a_debug_directory_and_missing() {
    let root = tempfile::tempdir().unwrap();
    let debug = root.path().join("usr/lib/debug");
    let rest = Path::new(".dwz/x86_64-linux-gnu/symtest.debug");
    let file = debug.join(rest);
    let link = Path::new("/usr/lib/debug").join(rest);
    let (plain, a, _b) = dwz_pair(Target::X86_64, &file, &link);
    let dirs = [debug.clone()];
    let got = Symbolizer::open_with_debug_dirs(&a.binary, &dirs).unwrap();
    assert_eq!(
        got.debug_info().supplementary_file.as_deref(),
        Some(file.as_path())
    );
    assert_eq!(stamped(&a.binary, &dirs), [a.binary.clone(), file.clone()]);

    std::fs::remove_file(&file).unwrap();
    let got = Symbolizer::open_with_debug_dirs(&a.binary, &dirs).unwrap();
    assert_eq!(
        got.debug_info().missing_supplementary_file.as_deref(),
        Some(link.as_path())
    );
    let note = got
        .debug_info()
        .note()
        .expect("a note for the missing file");
    assert!(
        note.contains(&format!(
            "supplementary DWARF file {} (.gnu_debugaltlink) not found",
            link.display()
        )),
        "{note}"
    );
    for (pc, x, y) in answers_beside(&plain.open(), &got) {
        assert_eq!(y.source, Quality::Dwarf, "{y:?}");
        assert_eq!(x.line, y.line, "at {pc:#x}");
    }
}

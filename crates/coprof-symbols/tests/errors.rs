//! Files that cannot be symbolized: a missing file, a file that is not ELF,
//! a truncated ELF. Each error names the file and says what is wrong; none
//! panics.

mod common;

use common::{build, Target};
use coprof_symbols::{SymbolError, Symbolizer};
use std::path::Path;

fn open_err(path: &Path) -> SymbolError {
    match Symbolizer::open(path) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.starts_with(&path.display().to_string()),
                "the error names the file: {msg}"
            );
            e
        }
    }
}

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("no-such-program");
    let e = open_err(&p);
    assert!(matches!(e, SymbolError::Io { .. }), "{e:?}");
    assert!(e.to_string().contains("cannot read"), "{e}");
}

#[test]
fn not_elf_files() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 3] = [
        ("empty", b"", "empty"),
        ("script.sh", b"#!/bin/sh\necho hi\n", "script"),
        ("notes.txt", b"hello world\n", "68 65 6c 6c"),
    ];
    for (name, bytes, says) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let e = open_err(&p);
        assert!(matches!(e, SymbolError::NotElf { .. }), "{name}: {e:?}");
        let msg = e.to_string();
        assert!(msg.contains("not an ELF file"), "{msg}");
        assert!(msg.contains(says), "{name}: {msg}");
    }
}

#[test]
fn truncated_elf() {
    let b = build(Target::Riscv64, &["-g"]);
    let full = std::fs::read(&b.binary).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for len in [4, 20, 63, 64, 200, full.len() / 2, full.len() - 1] {
        let p = dir.path().join(format!("symtest-{len}"));
        std::fs::write(&p, &full[..len]).unwrap();
        let e = open_err(&p);
        assert!(
            matches!(e, SymbolError::Corrupt { .. }),
            "{len} bytes: {e:?}"
        );
        assert!(e.to_string().contains("corrupt ELF file"), "{e}");
    }
}

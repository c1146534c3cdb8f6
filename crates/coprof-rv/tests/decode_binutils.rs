//! Differential test of the decoder and disassembler against GNU
//! binutils, an independent reading of the same specifications: every
//! encoding of the integer opcodes that the bit-manipulation extensions
//! share with RV64I and M (OP, OP-32, OP-IMM and OP-IMM-32: every funct7
//! and funct3 of the register forms, every 12-bit immediate and funct3 of
//! the immediate forms) is assembled with `.insn` into an object for
//! `rv64gc_zba_zbb_zbc_zbs`, and `riscv64-linux-gnu-objdump -M no-aliases`
//! says what each word is. coprof must call the same words illegal (the
//! ones objdump prints as `.4byte`, Zbkb's among them) and give
//! the others the same mnemonic and operands.
//!
//! The cross binutils come with the cross compiler that
//! `scripts/install-deps.sh` installs (`scripts/test.sh` runs it first);
//! without them the test fails and says so: it never passes without
//! having compared anything.

use coprof_rv::decode::decode;
use coprof_rv::disasm::disassemble;
use coprof_rv::op::Kind;
use std::path::Path;
use std::process::Command;

/// The words compared: each opcode's encodings with rd = a0, rs1 = a1
/// and, in the register forms, rs2 = a2 or zero (`zext.h` needs zero).
fn words() -> Vec<u32> {
    let (rd, rs1) = (10u32 << 7, 11u32 << 15);
    let mut out = Vec::new();
    for opcode in [0x33u32, 0x3b] {
        for f7 in 0..128u32 {
            for f3 in 0..8u32 {
                for rs2 in [12u32, 0] {
                    out.push(f7 << 25 | rs2 << 20 | rs1 | f3 << 12 | rd | opcode);
                }
            }
        }
    }
    for opcode in [0x13u32, 0x1b] {
        for imm in 0..4096u32 {
            for f3 in 0..8u32 {
                out.push(imm << 20 | rs1 | f3 << 12 | rd | opcode);
            }
        }
    }
    out
}

/// What objdump says of each word, in order: `None` for a word it does
/// not know, else its text (`sh1add a0,a1,a2`).
fn objdump(words: &[u32], dir: &Path) -> Vec<Option<String>> {
    let source: String = words.iter().map(|w| format!(".insn {w:#010x}\n")).collect();
    let (s, o) = (dir.join("words.s"), dir.join("words.o"));
    std::fs::write(&s, source).unwrap();
    let tool = |name: &str| {
        let path = format!("riscv64-linux-gnu-{name}");
        move |args: &[&std::ffi::OsStr]| {
            let out = Command::new(&path).args(args).output().unwrap_or_else(|e| {
                panic!(
                    "cannot run {path} ({e}): it comes with the RISC-V cross compiler \
                     that scripts/install-deps.sh installs"
                )
            });
            assert!(
                out.status.success(),
                "{path} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        }
    };
    tool("as")(&[
        "-march=rv64gc_zba_zbb_zbc_zbs".as_ref(),
        s.as_os_str(),
        "-o".as_ref(),
        o.as_os_str(),
    ]);
    let listing = tool("objdump")(&[
        "-d".as_ref(),
        "-M".as_ref(),
        "no-aliases".as_ref(),
        o.as_os_str(),
    ]);
    let texts: Vec<Option<String>> = listing
        .lines()
        .filter_map(|line| {
            // "   4:\t20c5a533          \tsh1add\ta0,a1,a2"
            let mut fields = line.split('\t');
            let address = fields.next()?;
            if !address.trim_end().ends_with(':') || !address.starts_with(' ') {
                return None;
            }
            let _bytes = fields.next()?;
            let mnemonic = fields.next()?.trim();
            let operands = fields.next().unwrap_or("").trim();
            Some((mnemonic != ".4byte").then(|| format!("{mnemonic} {operands}")))
        })
        .collect();
    assert_eq!(
        texts.len(),
        words.len(),
        "objdump listed {} words of {}",
        texts.len(),
        words.len()
    );
    texts
}

/// An operand as a number, when it is one (objdump writes shift amounts
/// in hexadecimal and other immediates in decimal).
fn number(s: &str) -> Option<i64> {
    match s.strip_prefix("0x") {
        Some(hex) => i64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Whether two texts name the same instruction: the same mnemonic, and
/// the same operands, numbers compared by value.
fn same_text(ours: &str, theirs: &str) -> bool {
    let split = |t: &str| -> (String, Vec<String>) {
        let (m, rest) = t.split_once(' ').unwrap_or((t, ""));
        let ops = rest
            .split(',')
            .map(|o| o.trim().to_string())
            .filter(|o| !o.is_empty())
            .collect();
        (m.to_string(), ops)
    };
    let ((m1, o1), (m2, o2)) = (split(ours), split(theirs));
    m1 == m2
        && o1.len() == o2.len()
        && o1
            .iter()
            .zip(&o2)
            .all(|(a, b)| a == b || matches!((number(a), number(b)), (Some(x), Some(y)) if x == y))
}

#[test]
fn integer_encodings_decode_as_binutils_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let words = words();
    let theirs = objdump(&words, dir.path());
    let mut differences = Vec::new();
    let mut known = 0;
    for (&word, theirs) in words.iter().zip(&theirs) {
        let op = decode(word, 0);
        let ours = (op.kind != Kind::Illegal).then(|| disassemble(&op, 0));
        let agree = match (&ours, theirs) {
            (None, None) => true,
            (Some(a), Some(b)) => same_text(a, b),
            _ => false,
        };
        known += theirs.is_some() as usize;
        if !agree {
            differences.push(format!(
                "{word:#010x}: coprof {}, objdump {}",
                ours.as_deref().unwrap_or("illegal"),
                theirs.as_deref().unwrap_or("illegal")
            ));
        }
    }
    // The comparison saw both kinds of word: the extensions' and the
    // reserved ones around them.
    assert!(
        known > 20_000 && known < words.len() - 20_000,
        "{known} known"
    );
    assert!(
        differences.is_empty(),
        "{} of {} words differ:\n{}",
        differences.len(),
        words.len(),
        differences[..differences.len().min(40)].join("\n")
    );
}

#[test]
fn the_comparison_sees_a_wrong_operand_and_a_wrong_name() {
    assert!(same_text("rori a0, a1, 63", "rori a0,a1,0x3f"));
    assert!(same_text("addi a0, a1, -1", "addi a0,a1,-1"));
    assert!(!same_text("rori a0, a1, 62", "rori a0,a1,0x3f"));
    assert!(!same_text("rol a0, a1, a2", "ror a0,a1,a2"));
    assert!(!same_text("clz a0, a1", "clz a0,a2"));
    assert!(!same_text("clz a0, a1", "clz a0,a1,a2"));
}

//! Encodes a translation's instructions to host bytes, in place of
//! iced-x86's `BlockEncoder`.
//!
//! The block encoder boxes every instruction it lays out (one heap
//! allocation each), which made it two thirds of the time spent
//! translating, and a fifth of `coprof run`'s time on a program that runs
//! much code a few hundred times, as Python does while it imports its
//! modules. A translation needs little of what it does: every branch goes
//! to a label of the same translation, and every other reference is a
//! RIP-relative memory operand naming a label (a header word) or an
//! absolute address in a register. So each instruction but the branches
//! is encoded once, its RIP-relative displacement patched when the labels'
//! offsets are known, and the branches are laid out short (rel8) where
//! they reach and near (rel32) where not, by widening until nothing
//! changes, as the block encoder does. The code is position-independent:
//! it is copied into the arena as it is.

use iced_x86::code_asm::CodeLabel;
use iced_x86::{Code, Encoder, IcedError, Instruction};
use std::hash::{Hash, Hasher};

/// A translation that could not be encoded: the encoder refused an
/// instruction, or an instruction names a label that marks none. The
/// block is then interpreted, as one with an op not translated.
#[derive(Debug)]
pub(super) struct EncodeError;

impl From<IcedError> for EncodeError {
    fn from(_: IcedError) -> EncodeError {
        EncodeError
    }
}

/// A label's id, which the code assembler gives the instruction that
/// follows it (its `ip`), the branches to it (their target) and the
/// memory operands that name it (their displacement). `CodeLabel` hashes
/// as its id alone; the id is not public otherwise.
fn label_id(label: &CodeLabel) -> u64 {
    struct Id(u64);
    impl Hasher for Id {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, _: &[u8]) {
            unreachable!("a label hashes as its u64 id");
        }
        fn write_u64(&mut self, id: u64) {
            self.0 = id;
        }
    }
    let mut id = Id(0);
    label.hash(&mut id);
    id.0
}

/// Encoded code and where each label landed.
pub(super) struct Encoded {
    pub bytes: Vec<u8>,
    /// Per label id, its offset in `bytes` (`u32::MAX` for an id no
    /// instruction carries).
    offsets: Vec<u32>,
}

impl Encoded {
    /// The offset of `label` in the code.
    pub(super) fn label_offset(&self, label: &CodeLabel) -> Result<u64, EncodeError> {
        match self.offsets.get(label_id(label) as usize) {
            Some(&o) if o != u32::MAX => Ok(o as u64),
            _ => Err(EncodeError),
        }
    }
}

/// One instruction laid out: its bytes, or a branch to a label.
enum Piece {
    /// Encoded bytes (`start..start + len` of the pool), with the offset
    /// of a RIP-relative displacement and the index of the instruction it
    /// names, if any.
    Plain {
        start: u32,
        len: u8,
        rip_rel: Option<(u8, u32)>,
    },
    /// A `jmp` (`cc` none) or `jcc` (`cc` its condition's code, 0 to 15)
    /// to the instruction of this index: short while `near` is false.
    Branch {
        target: u32,
        cc: Option<u8>,
        near: bool,
    },
}

/// The `jcc` to an address (either form) of each condition code, in the
/// order of the codes: o, no, b, ae, e, ne, be, a, s, ns, p, np, l, ge,
/// le, g.
const JCC: [[Code; 2]; 16] = {
    use Code::*;
    [
        [Jo_rel8_64, Jo_rel32_64],
        [Jno_rel8_64, Jno_rel32_64],
        [Jb_rel8_64, Jb_rel32_64],
        [Jae_rel8_64, Jae_rel32_64],
        [Je_rel8_64, Je_rel32_64],
        [Jne_rel8_64, Jne_rel32_64],
        [Jbe_rel8_64, Jbe_rel32_64],
        [Ja_rel8_64, Ja_rel32_64],
        [Js_rel8_64, Js_rel32_64],
        [Jns_rel8_64, Jns_rel32_64],
        [Jp_rel8_64, Jp_rel32_64],
        [Jnp_rel8_64, Jnp_rel32_64],
        [Jl_rel8_64, Jl_rel32_64],
        [Jge_rel8_64, Jge_rel32_64],
        [Jle_rel8_64, Jle_rel32_64],
        [Jg_rel8_64, Jg_rel32_64],
    ]
};

/// Whether `code` is a branch to an address, and which: `Some(None)` for
/// a `jmp`, `Some(Some(cc))` for a `jcc`.
fn branch_kind(code: Code) -> Option<Option<u8>> {
    if matches!(code, Code::Jmp_rel8_64 | Code::Jmp_rel32_64) {
        return Some(None);
    }
    JCC.iter()
        .position(|forms| forms.contains(&code))
        .map(|cc| Some(cc as u8))
}

/// Bytes of a `jmp` or `jcc` with an 8-bit displacement.
const SHORT: u32 = 2;

/// Bytes of a branch: short 2, `jmp rel32` 5, `jcc rel32` 6.
fn branch_len(cc: Option<u8>, near: bool) -> u32 {
    match (near, cc) {
        (false, _) => SHORT,
        (true, None) => 5,
        (true, Some(_)) => 6,
    }
}

/// Appends a branch at `here` to `to`, short or near, in the processor's
/// encoding (`EB` or `70+cc` with an 8-bit displacement, `E9` or `0F
/// 80+cc` with a 32-bit one, counted from the branch's end).
fn put_branch(bytes: &mut Vec<u8>, cc: Option<u8>, near: bool, here: u32, to: u32) {
    let rel = to as i64 - (here + branch_len(cc, near)) as i64;
    match (cc, near) {
        (None, false) => bytes.extend_from_slice(&[0xeb, rel as i8 as u8]),
        (Some(cc), false) => bytes.extend_from_slice(&[0x70 | cc, rel as i8 as u8]),
        (None, true) => bytes.push(0xe9),
        (Some(cc), true) => bytes.extend_from_slice(&[0x0f, 0x80 | cc]),
    }
    if near {
        bytes.extend_from_slice(&(rel as i32).to_le_bytes());
    }
}

/// Encodes `instrs`, as the code assembler built them, at offset 0.
pub(super) fn encode(instrs: &[Instruction]) -> Result<Encoded, EncodeError> {
    // The instruction each label id marks.
    let max_id = instrs.iter().map(Instruction::ip).max().unwrap_or(0) as usize;
    let mut marks = vec![u32::MAX; max_id + 1];
    for (i, instr) in instrs.iter().enumerate() {
        if instr.ip() != 0 {
            marks[instr.ip() as usize] = i as u32;
        }
    }
    let index_of = |id: u64| match marks.get(id as usize) {
        Some(&i) if i != u32::MAX => Ok(i),
        _ => Err(EncodeError),
    };

    // Everything but the branches, encoded once.
    let mut encoder = Encoder::new(64);
    let mut pieces = Vec::with_capacity(instrs.len());
    let mut start = 0u32;
    for instr in instrs {
        if let Some(cc) = branch_kind(instr.code()) {
            pieces.push(Piece::Branch {
                target: index_of(instr.near_branch64())?,
                cc,
                near: false,
            });
            continue;
        }
        let len = encoder.encode(instr, 0)? as u8;
        let rip_rel = if instr.is_ip_rel_memory_operand() {
            let at = encoder.get_constant_offsets().displacement_offset() as u8;
            Some((at, index_of(instr.ip_rel_memory_address())?))
        } else {
            None
        };
        pieces.push(Piece::Plain {
            start,
            len,
            rip_rel,
        });
        start += len as u32;
    }
    let pool = encoder.take_buffer();

    // Offsets, widening the branches that do not reach until none
    // changes (a branch only ever widens, so this ends).
    let len_of = |piece: &Piece| match *piece {
        Piece::Plain { len, .. } => len as u32,
        Piece::Branch { cc, near, .. } => branch_len(cc, near),
    };
    let mut offsets = vec![0u32; instrs.len() + 1];
    loop {
        for (i, piece) in pieces.iter().enumerate() {
            offsets[i + 1] = offsets[i] + len_of(piece);
        }
        let mut widened = false;
        for (i, piece) in pieces.iter_mut().enumerate() {
            if let Piece::Branch {
                target,
                near: near @ false,
                ..
            } = piece
            {
                let from = offsets[i] as i64 + SHORT as i64;
                let to = offsets[*target as usize] as i64;
                if i8::try_from(to - from).is_err() {
                    *near = true;
                    widened = true;
                }
            }
        }
        if !widened {
            break;
        }
    }

    // The bytes: each piece at its offset, displacements patched, the
    // branches written to their targets.
    let mut bytes = Vec::with_capacity(offsets[instrs.len()] as usize);
    for (i, piece) in pieces.iter().enumerate() {
        let here = offsets[i];
        match *piece {
            Piece::Plain {
                start,
                len,
                rip_rel,
            } => {
                let at = bytes.len();
                bytes.extend_from_slice(&pool[start as usize..(start + len as u32) as usize]);
                if let Some((disp, target)) = rip_rel {
                    let rel = offsets[target as usize] as i64 - (here + len as u32) as i64;
                    let d = at + disp as usize;
                    bytes[d..d + 4].copy_from_slice(&(rel as i32).to_le_bytes());
                }
            }
            Piece::Branch { target, cc, near } => {
                put_branch(&mut bytes, cc, near, here, offsets[target as usize])
            }
        }
        debug_assert_eq!(bytes.len(), offsets[i + 1] as usize);
    }
    let mut by_id = vec![u32::MAX; marks.len()];
    for (id, &i) in marks.iter().enumerate() {
        if i != u32::MAX {
            by_id[id] = offsets[i as usize];
        }
    }
    Ok(Encoded {
        bytes,
        offsets: by_id,
    })
}

/// Panics unless `ours` is the code iced-x86's block encoder makes of
/// `a`'s instructions, instruction for instruction: the same
/// instructions, with the same bytes but for the displacements of
/// branches and RIP-relative operands, which must land on the same
/// instructions. The block encoder may leave a branch near that reaches
/// short (it widens first and shortens after), so the bytes themselves
/// may differ.
#[cfg(test)]
pub(super) fn check_against_block_encoder(
    a: &mut iced_x86::code_asm::CodeAssembler,
    ours: &Encoded,
) {
    use iced_x86::{Decoder, DecoderOptions};
    let theirs = a
        .assemble_options(0, iced_x86::BlockEncoderOptions::NONE)
        .expect("the block encoder encodes it")
        .inner
        .code_buffer;
    // Each instruction as its code, its bytes (none for a branch or a
    // RIP-relative operand) and the index of the instruction it names.
    let listing = |code: &[u8]| {
        let instrs: Vec<Instruction> = Decoder::with_ip(64, code, 0, DecoderOptions::NONE)
            .into_iter()
            .collect();
        let index = |addr: u64| instrs.iter().position(|i| i.ip() == addr);
        instrs
            .iter()
            .map(|i| {
                let start = i.ip() as usize;
                let (bytes, names) = if branch_kind(i.code()).is_some() {
                    (&[][..], index(i.near_branch64()))
                } else if i.is_ip_rel_memory_operand() {
                    (&[][..], index(i.ip_rel_memory_address()))
                } else {
                    (&code[start..start + i.len()], None)
                };
                (short_form(i.code()), bytes.to_vec(), names)
            })
            .collect::<Vec<_>>()
    };
    let (o, t) = (listing(&ours.bytes), listing(&theirs));
    assert_eq!(o.len(), t.len(), "instructions");
    for (n, (x, y)) in o.iter().zip(&t).enumerate() {
        assert_eq!(x, y, "instruction {n}");
    }
}

/// The short form of a branch's code, and any other code as it is.
#[cfg(test)]
fn short_form(code: Code) -> Code {
    match branch_kind(code) {
        Some(None) => Code::Jmp_rel8_64,
        Some(Some(cc)) => JCC[cc as usize][0],
        None => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::code_asm::*;
    use iced_x86::BlockEncoderOptions;

    #[test]
    fn the_same_code_as_the_block_encoder_with_short_and_near_branches() {
        let mut a = CodeAssembler::new(64).unwrap();
        let mut top = a.create_label();
        let mut far = a.create_label();
        let mut word = a.create_label();
        let mut end = a.create_label();
        a.set_label(&mut word).unwrap();
        a.dq(&[0x1122_3344_5566_7788]).unwrap();
        a.set_label(&mut top).unwrap();
        a.mov(rax, qword_ptr(word)).unwrap();
        a.cmp(qword_ptr(word), 5).unwrap();
        a.je(far).unwrap();
        a.jne(end).unwrap();
        // Past a short branch's reach.
        for i in 0..40 {
            a.mov(rcx, 0x1_0000_0000u64 + i).unwrap();
        }
        a.set_label(&mut far).unwrap();
        a.je(end).unwrap();
        a.jmp(qword_ptr(word)).unwrap();
        a.jmp(top).unwrap();
        a.set_label(&mut end).unwrap();
        a.ret().unwrap();
        let ours = encode(a.instructions()).unwrap();
        check_against_block_encoder(&mut a, &ours);
        let theirs = a
            .assemble_options(0, BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS)
            .unwrap();
        for l in [&top, &far, &word, &end] {
            assert_eq!(ours.label_offset(l).unwrap(), theirs.label_ip(l).unwrap());
        }
    }

    #[test]
    fn every_condition_short_and_near_as_the_block_encoder_writes_it() {
        type Jcc = fn(&mut CodeAssembler, CodeLabel) -> Result<(), IcedError>;
        let jccs: [Jcc; 16] = [
            |a, l| a.jo(l),
            |a, l| a.jno(l),
            |a, l| a.jb(l),
            |a, l| a.jae(l),
            |a, l| a.je(l),
            |a, l| a.jne(l),
            |a, l| a.jbe(l),
            |a, l| a.ja(l),
            |a, l| a.js(l),
            |a, l| a.jns(l),
            |a, l| a.jp(l),
            |a, l| a.jnp(l),
            |a, l| a.jl(l),
            |a, l| a.jge(l),
            |a, l| a.jle(l),
            |a, l| a.jg(l),
        ];
        let mut a = CodeAssembler::new(64).unwrap();
        let mut near = a.create_label();
        let mut far = a.create_label();
        a.set_label(&mut near).unwrap();
        a.nop().unwrap();
        for jcc in jccs {
            jcc(&mut a, near).unwrap();
            jcc(&mut a, far).unwrap();
        }
        for _ in 0..30 {
            a.mov(rax, 0x1234_5678_9abc_def0u64).unwrap();
        }
        a.set_label(&mut far).unwrap();
        a.ret().unwrap();
        let ours = encode(a.instructions()).unwrap();
        let theirs = a
            .assemble_options(0, BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS)
            .unwrap();
        assert_eq!(ours.bytes, theirs.inner.code_buffer);
        assert_eq!(
            ours.label_offset(&far).unwrap(),
            theirs.label_ip(&far).unwrap()
        );
        // A label nothing is at is no offset.
        let nowhere = a.create_label();
        assert!(ours.label_offset(&nowhere).is_err());
    }
}

//! Names for the stubs of the procedure linkage table (PLT), `memset@plt`,
//! as `objdump -d` and perf give them.
//!
//! A dynamically linked program calls a library's function through a stub
//! in `.plt` (or `.plt.sec` and `.plt.got`) that jumps through the
//! function's slot in the global offset table. The stubs have no entry in
//! the symbol table, so without this a sample in one is named after
//! whatever symbol comes before (`_init+0x2c80`, the last function of
//! `.init`). Each stub is decoded, the slot it jumps through found, and
//! the dynamic relocation that fills that slot names the function: the
//! way binutils makes its synthetic `@plt` symbols, for x86-64 (Intel's
//! and AMD's System V psABI, "Procedure Linkage Table") and RISC-V (ELF
//! psABI, "Procedure Linkage Table").
//!
//! A statically linked program calls the C library's functions that pick
//! their code at run time (GNU indirect functions: `memcpy`, `strlen`)
//! through stubs too, whose slots an `IRELATIVE` relocation fills with
//! what the function's resolver returns. The relocation names no symbol,
//! only the resolver's address, where the function's `IFUNC` symbol is:
//! the stub is named after it (`strlen@plt`), where objdump prints
//! `*ABS*+0x41e660@plt` and perf `_init+0xc8`.

use crate::arch::Arch;
use crate::riscv_addresses::RiscvAddresses;
use crate::symtab::FunctionSymbol;
use object::{
    Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, RelocationFlags, RelocationTarget,
    SymbolFlags,
};
use std::collections::HashMap;

/// The sections that hold stubs.
const STUB_SECTIONS: [&str; 3] = [".plt", ".plt.sec", ".plt.got"];

/// One symbol `name@plt` for each stub of `file` whose slot `slots` names
/// ([`slot_names`]), sized to its stub, by address.
pub fn stub_symbols(file: &object::File<'_>, slots: &HashMap<u64, String>) -> Vec<FunctionSymbol> {
    let arch = Arch::from_object(file.architecture());
    if !matches!(arch, Arch::X86_64 | Arch::Riscv64) {
        return Vec::new();
    }
    if slots.is_empty() {
        return Vec::new();
    }
    let mut stubs = Vec::new();
    for section in file.sections() {
        let Ok(name) = section.name() else { continue };
        if !STUB_SECTIONS.contains(&name) {
            continue;
        }
        let Ok(code) = section.data() else { continue };
        // A section's stubs are as long as it is aligned: 16 bytes in a
        // dynamically linked program's `.plt` and `.plt.sec`, 8 in
        // `.plt.got` (16 with Intel's CET) and in the `.plt` of a static
        // one's indirect functions.
        let size = section.align().clamp(8, 16) as usize;
        for (i, stub) in code.chunks(size).enumerate() {
            let addr = section.address().wrapping_add((i * size) as u64);
            let Some(slot) = slot_of(&arch, addr, stub) else {
                continue;
            };
            if let Some(name) = slots.get(&slot) {
                stubs.push(FunctionSymbol {
                    addr,
                    size: size as u64,
                    name: format!("{name}@plt"),
                });
            }
        }
    }
    stubs
}

/// The name of the symbol whose address each slot the dynamic relocations
/// fill will hold, by the slot's address: the global offset table's
/// slots, which a stub jumps through and position-independent code loads
/// a global's address from.
pub fn slot_names(file: &object::File<'_>) -> HashMap<u64, String> {
    let mut names = indirect_slot_names(file);
    let (Some(relocations), Some(symbols)) =
        (file.dynamic_relocations(), file.dynamic_symbol_table())
    else {
        return names;
    };
    for (slot, r) in relocations {
        let RelocationTarget::Symbol(index) = r.target() else {
            continue;
        };
        let Some(name) = symbols
            .symbol_by_index(index)
            .ok()
            .and_then(|s| s.name().ok().map(str::to_string))
        else {
            continue;
        };
        if !name.is_empty() {
            names.insert(slot, crate::demangle::demangle_or_keep(name.into()));
        }
    }
    names
}

/// `R_X86_64_IRELATIVE` and `R_RISCV_IRELATIVE`.
const IRELATIVE: [(Arch, u32); 2] = [(Arch::X86_64, 37), (Arch::Riscv64, 58)];

/// `STT_GNU_IFUNC`, a symbol's type in the low nibble of `st_info`.
const STT_GNU_IFUNC: u8 = 10;

/// The slots that `IRELATIVE` relocations fill, each named after the
/// indirect function whose resolver is their addend. Where several
/// `IFUNC` symbols share a resolver (`memcpy` and `__new_memcpy`,
/// `strchr` and `index`), the name with the fewest leading underscores,
/// then a global one before a weak alias, is the one a program calls.
fn indirect_slot_names(file: &object::File<'_>) -> HashMap<u64, String> {
    let arch = Arch::from_object(file.architecture());
    let Some(&(_, irelative)) = IRELATIVE.iter().find(|(a, _)| *a == arch) else {
        return HashMap::new();
    };
    let slots: Vec<(u64, u64)> = file
        .sections()
        .flat_map(|s| s.relocations())
        .chain(file.dynamic_relocations().into_iter().flatten())
        .filter(|(_, r)| {
            r.target() == RelocationTarget::Absolute
                && r.flags() == RelocationFlags::Elf { r_type: irelative }
        })
        .map(|(slot, r)| (slot, r.addend() as u64))
        .collect();
    if slots.is_empty() {
        return HashMap::new();
    }
    let mut ifuncs: HashMap<u64, (usize, bool, String)> = HashMap::new();
    for sym in file.symbols() {
        let SymbolFlags::Elf { st_info, .. } = sym.flags() else {
            continue;
        };
        let Ok(name) = sym.name() else { continue };
        if st_info & 0xf != STT_GNU_IFUNC || name.is_empty() {
            continue;
        }
        let rank = (
            name.len() - name.trim_start_matches('_').len(),
            sym.is_weak(),
            name.to_string(),
        );
        let best = ifuncs.entry(sym.address()).or_insert_with(|| rank.clone());
        if rank < *best {
            *best = rank;
        }
    }
    slots
        .into_iter()
        .filter_map(|(slot, resolver)| Some((slot, ifuncs.get(&resolver)?.2.clone())))
        .collect()
}

/// The slot the stub at `addr` jumps through: x86-64's `jmp
/// *disp(%rip)`, or RISC-V's `ld t3, lo(t3)` after `auipc t3, hi` (the
/// psABI's stub: `auipc`, `ld`, `jalr t1, t3`, `nop`).
fn slot_of(arch: &Arch, addr: u64, stub: &[u8]) -> Option<u64> {
    match arch {
        Arch::X86_64 => {
            use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind};
            let mut decoder = Decoder::with_ip(64, stub, addr, DecoderOptions::NONE);
            decoder.iter().find_map(|insn| {
                (insn.mnemonic() == Mnemonic::Jmp
                    && insn.op0_kind() == OpKind::Memory
                    && insn.is_ip_rel_memory_operand())
                .then(|| insn.ip_rel_memory_address())
            })
        }
        Arch::Riscv64 => {
            let mut walk = RiscvAddresses::new(None);
            let mut at = 0;
            while at < stub.len() {
                // The first address reached from the `auipc`: the `ld`'s.
                let (len, reached) = walk.next(addr.wrapping_add(at as u64), &stub[at..])?;
                if let Some(r) = reached.filter(|r| !r.absolute) {
                    return Some(r.address);
                }
                at += len;
            }
            None
        }
        Arch::Other(_) => None,
    }
}

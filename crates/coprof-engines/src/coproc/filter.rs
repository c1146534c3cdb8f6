//! The co-processor's front end: the filters that decide, at retirement,
//! which instructions become samples (Zilles & Sohi, HPCA 2001, §3.1–3.2).
//!
//! - the opcode-class filter keeps only the classes a program asks for;
//! - the PC partition filter hashes the PC, masks the hash with a
//!   variable-width mask and compares it with a match value, so that a
//!   program can be divided into 2^k parts profiled in turn;
//! - the PC mask table, a hashed table of bits (4 Kbit by default), lets a
//!   profiling program ignore individual instructions it is done with.
//!
//! The main processor programs the filters (in an interrupt handler); the
//! co-processor never sees what they reject, which is what makes a finished
//! profile cost nothing.

use coprof_core::{Class, ClassSet};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The hash functions the partition filter can apply to a PC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionHash {
    /// Fibonacci (multiplicative) hashing: the high half of PC × 2^64/φ.
    /// Spreads any set of PCs evenly over the parts.
    Multiplicative,
    /// XOR of the PC's 16-bit halfwords (PC/2 first, as instructions are
    /// at least 2-byte aligned).
    Fold,
    /// The low bits of PC/2: parts interleave at instruction granularity.
    Low,
}

impl PartitionHash {
    /// Every hash function.
    pub const ALL: [PartitionHash; 3] = [
        PartitionHash::Multiplicative,
        PartitionHash::Fold,
        PartitionHash::Low,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PartitionHash::Multiplicative => "multiplicative",
            PartitionHash::Fold => "fold",
            PartitionHash::Low => "low",
        }
    }

    /// The 32-bit hash of `pc`.
    #[inline]
    pub fn hash(self, pc: u64) -> u32 {
        match self {
            PartitionHash::Multiplicative => (pc.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as u32,
            PartitionHash::Fold => {
                let x = pc >> 1;
                ((x ^ (x >> 16) ^ (x >> 32) ^ (x >> 48)) & 0xffff) as u32
            }
            PartitionHash::Low => (pc >> 1) as u32,
        }
    }
}

impl fmt::Display for PartitionHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PartitionHash {
    type Err = String;
    fn from_str(s: &str) -> Result<PartitionHash, String> {
        PartitionHash::ALL
            .into_iter()
            .find(|h| h.name() == s)
            .ok_or_else(|| {
                format!("unknown partition hash '{s}' (expected one of: multiplicative, fold, low)")
            })
    }
}

/// One part of the program: the PCs whose hash, masked to its low `bits`
/// bits, equals `matches`. `bits = 0` is the whole program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Part {
    /// Width of the mask: the program is divided into 2^bits parts.
    pub bits: u32,
    /// The match value, in 0..2^bits.
    pub matches: u32,
}

impl Part {
    /// The whole program.
    pub const WHOLE: Part = Part {
        bits: 0,
        matches: 0,
    };

    /// The `ways` parts this part splits into (`ways` a power of two):
    /// the same low bits, plus every value of `log2(ways)` more bits.
    pub fn split(self, ways: u32) -> Vec<Part> {
        debug_assert!(ways.is_power_of_two());
        let extra = ways.trailing_zeros();
        let bits = (self.bits + extra).min(32);
        let added = bits - self.bits;
        (0..1u32 << added)
            .map(|j| Part {
                bits,
                matches: self.matches | j.checked_shl(self.bits).unwrap_or(0),
            })
            .collect()
    }
}

/// The PC partition filter: `hash(pc) & mask == match`.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PartitionFilter {
    /// The hash function.
    pub hash: PartitionHash,
    /// The part that passes.
    pub part: Part,
}

impl PartitionFilter {
    /// A filter that passes the whole program.
    pub fn new(hash: PartitionHash) -> PartitionFilter {
        PartitionFilter {
            hash,
            part: Part::WHOLE,
        }
    }

    /// Whether `pc` is in the current part.
    #[inline]
    pub fn passes(&self, pc: u64) -> bool {
        let mask = if self.part.bits >= 32 {
            u32::MAX
        } else {
            (1u32 << self.part.bits) - 1
        };
        self.hash.hash(pc) & mask == self.part.matches
    }
}

/// The PC mask table: a hashed table of bits; an instruction whose bit is
/// set is ignored. Distinct PCs may share a bit (the table is small, as in
/// hardware), so masking one may mask another.
#[derive(Clone, Debug)]
pub struct PcMaskTable {
    words: Vec<u64>,
    bits: usize,
}

/// The paper's default size: 4 Kbit.
pub const DEFAULT_MASK_BITS: usize = 4096;

impl PcMaskTable {
    /// A table of `bits` bits (a power of two, at least 64), all clear.
    pub fn new(bits: usize) -> Result<PcMaskTable, String> {
        if bits < 64 || !bits.is_power_of_two() {
            return Err(format!(
                "PC mask table size must be a power of two of at least 64 bits, got {bits}"
            ));
        }
        Ok(PcMaskTable {
            words: vec![0; bits / 64],
            bits,
        })
    }

    #[inline]
    fn index(&self, pc: u64) -> usize {
        // XOR-fold of the instruction address (PC/2), so that neighbouring
        // instructions get neighbouring bits and distant code folds over.
        let x = pc >> 1;
        ((x ^ (x >> 12) ^ (x >> 24) ^ (x >> 36)) as usize) & (self.bits - 1)
    }

    /// Whether `pc` is masked.
    #[inline]
    pub fn is_masked(&self, pc: u64) -> bool {
        let i = self.index(pc);
        self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// Masks `pc` (and whatever shares its bit).
    pub fn mask(&mut self, pc: u64) {
        let i = self.index(pc);
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// Number of set bits.
    pub fn count(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// Size in bits.
    pub fn size_bits(&self) -> usize {
        self.bits
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bits / 8
    }
}

/// What the front end did with one retired instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not of a class the program asked for: not a sample at all.
    WrongClass,
    /// A sample, rejected by the partition filter or the mask table.
    Filtered,
    /// A sample for the co-processor.
    Pass,
}

/// The three filters together, as the main processor programs them.
#[derive(Clone, Debug)]
pub struct FrontEnd {
    /// Opcode classes that become samples.
    pub classes: ClassSet,
    /// The PC partition filter.
    pub partition: PartitionFilter,
    /// The PC mask table.
    pub mask: PcMaskTable,
    /// Off: profiling has stopped; every instruction is ignored.
    pub enabled: bool,
    /// On: the profile is complete and the front end only watches for a
    /// load the mask table does not know (`LvpConfig::watch_new_loads`);
    /// rejected samples no longer count towards the idle limit. When a
    /// sample passes, the host clears it and tells the program
    /// (`Program::resume`).
    pub watching: bool,
    /// The retired-instruction counter, as the main processor reads it in
    /// an interrupt handler (a performance counter; the host updates it
    /// before each handler runs).
    pub retired: u64,
}

impl FrontEnd {
    /// A front end that passes `classes` from the whole program, with an
    /// empty mask table of `mask_bits` bits.
    pub fn new(
        classes: ClassSet,
        hash: PartitionHash,
        mask_bits: usize,
    ) -> Result<FrontEnd, String> {
        Ok(FrontEnd {
            classes,
            partition: PartitionFilter::new(hash),
            mask: PcMaskTable::new(mask_bits)?,
            enabled: true,
            watching: false,
            retired: 0,
        })
    }

    /// The verdict on an instruction of class `class` at `pc`.
    #[inline]
    pub fn admit(&self, class: Class, pc: u64) -> Verdict {
        if !self.classes.contains(class) {
            Verdict::WrongClass
        } else if self.partition.passes(pc) && !self.mask.is_masked(pc) {
            Verdict::Pass
        } else {
            Verdict::Filtered
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.mask.bytes() + std::mem::size_of::<PartitionFilter>() + 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_filter_rejects_other_classes() {
        let fe = FrontEnd::new(ClassSet::of(Class::Load), PartitionHash::Low, 4096).unwrap();
        assert_eq!(fe.admit(Class::Store, 0x10), Verdict::WrongClass);
        assert_eq!(fe.admit(Class::Load, 0x10), Verdict::Pass);
    }

    #[test]
    fn partitions_cover_the_program_exactly_once() {
        for hash in PartitionHash::ALL {
            let mut parts = Part::WHOLE.split(2);
            let first = parts.remove(0);
            parts.extend(first.split(4)); // 5 parts: 1/2 and four 1/8ths
            for pc in (0x1000..0x3000u64).step_by(2) {
                let n = parts
                    .iter()
                    .filter(|&&part| PartitionFilter { hash, part }.passes(pc))
                    .count();
                assert_eq!(n, 1, "{hash} pc {pc:#x}");
            }
        }
    }

    #[test]
    fn partitions_divide_evenly() {
        let parts = Part::WHOLE.split(4);
        let f = |part| PartitionFilter {
            hash: PartitionHash::Multiplicative,
            part,
        };
        for p in parts {
            let n = (0..4096u64)
                .filter(|i| f(p).passes(0x1_0000 + 4 * i))
                .count();
            assert!((900..1150).contains(&n), "{p:?}: {n}");
        }
    }

    #[test]
    fn mask_table_masks_and_aliases() {
        let mut t = PcMaskTable::new(64).unwrap();
        assert!(!t.is_masked(0x10));
        t.mask(0x10);
        assert!(t.is_masked(0x10));
        assert!(!t.is_masked(0x12), "neighbours get their own bit");
        assert!(
            t.is_masked(0x10 + 128),
            "the table folds: 64 bits cover 128 bytes"
        );
        assert_eq!(t.count(), 1);
        assert!(PcMaskTable::new(100).is_err());
        assert_eq!(PcMaskTable::new(DEFAULT_MASK_BITS).unwrap().bytes(), 512);
    }

    #[test]
    fn hash_names_parse() {
        for h in PartitionHash::ALL {
            assert_eq!(h.name().parse::<PartitionHash>().unwrap(), h);
        }
        assert!("md5".parse::<PartitionHash>().is_err());
    }
}

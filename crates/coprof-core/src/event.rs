//! The event record: one retired instruction or one sample.
//!
//! Every source (the RV64 simulator, the native sampler, trace files, the
//! synthetic generators) speaks in [`Event`]s and every engine listens to
//! them. The record is `Copy` and 32 bytes so that a batch of them is a flat
//! array that engines scan without chasing pointers.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What kind of instruction retired. The classes are the co-processor
/// paper's opcode classes (Zilles & Sohi, HPCA 2001, §3.1): the front end
/// filters on them at decode time, before any event is built.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[repr(u8)]
pub enum Class {
    /// A memory read (including the read half of atomics and LR).
    Load = 0,
    /// A memory write (including SC).
    Store = 1,
    /// A conditional branch, taken or not.
    CondBranch = 2,
    /// An unconditional jump that is neither a call nor a return.
    Jump = 3,
    /// A call: a jump that saves a return address.
    Call = 4,
    /// A return from a call.
    Return = 5,
    /// Integer arithmetic, logic, shifts, compares, immediates.
    IntAlu = 6,
    /// Integer multiply and divide.
    MulDiv = 7,
    /// Floating-point arithmetic and conversions (FP loads are `Load`).
    Float = 8,
    /// System calls, CSR accesses, fences.
    System = 9,
    /// Anything else.
    #[default]
    Other = 10,
}

impl Class {
    /// Every class, in numeric order.
    pub const ALL: [Class; 11] = [
        Class::Load,
        Class::Store,
        Class::CondBranch,
        Class::Jump,
        Class::Call,
        Class::Return,
        Class::IntAlu,
        Class::MulDiv,
        Class::Float,
        Class::System,
        Class::Other,
    ];

    /// The class with this number, if any.
    pub fn from_u8(n: u8) -> Option<Class> {
        Class::ALL.get(n as usize).copied()
    }

    /// The name used on the command line, in JSON and in trace metadata.
    pub fn name(self) -> &'static str {
        match self {
            Class::Load => "load",
            Class::Store => "store",
            Class::CondBranch => "cond-branch",
            Class::Jump => "jump",
            Class::Call => "call",
            Class::Return => "return",
            Class::IntAlu => "int-alu",
            Class::MulDiv => "mul-div",
            Class::Float => "float",
            Class::System => "system",
            Class::Other => "other",
        }
    }

    /// True for loads and stores: `addr` is an effective address.
    pub fn is_memory(self) -> bool {
        matches!(self, Class::Load | Class::Store)
    }

    /// True for branches, jumps, calls and returns: `addr` is the target.
    pub fn is_control(self) -> bool {
        matches!(
            self,
            Class::CondBranch | Class::Jump | Class::Call | Class::Return
        )
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Class {
    type Err = String;
    fn from_str(s: &str) -> Result<Class, String> {
        let s = s.trim().to_ascii_lowercase();
        for c in Class::ALL {
            if c.name() == s {
                return Ok(c);
            }
        }
        // Short forms a user will type.
        Ok(match s.as_str() {
            "branch" | "br" => Class::CondBranch,
            "alu" | "int" => Class::IntAlu,
            "mul" | "div" | "muldiv" => Class::MulDiv,
            "fp" => Class::Float,
            "ret" => Class::Return,
            "sys" => Class::System,
            _ => {
                let names: Vec<_> = Class::ALL.iter().map(|c| c.name()).collect();
                return Err(format!(
                    "unknown instruction class '{s}' (expected one of: {}, or 'all')",
                    names.join(", ")
                ));
            }
        })
    }
}

/// A set of classes, as a bit mask. Sources ask their sinks for one and
/// build events only for the classes in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClassSet(u16);

impl ClassSet {
    /// No class at all: a source with only such sinks builds no events.
    pub const NONE: ClassSet = ClassSet(0);
    /// Every class.
    pub const ALL: ClassSet = ClassSet((1 << Class::ALL.len()) - 1);
    /// The classes that can close a loop: conditional branches and jumps
    /// (Gordon-Ross & Vahid, CASES 2003, §3.1; calls and returns do not).
    pub const LOOP_BRANCHES: ClassSet =
        ClassSet(1 << Class::CondBranch as u8 | 1 << Class::Jump as u8);
    /// The control-transfer classes (branches, jumps, calls, returns).
    pub const CONTROL: ClassSet = ClassSet(
        1 << Class::CondBranch as u8
            | 1 << Class::Jump as u8
            | 1 << Class::Call as u8
            | 1 << Class::Return as u8,
    );

    /// A set holding just `c`.
    pub const fn of(c: Class) -> ClassSet {
        ClassSet(1 << c as u8)
    }

    /// This set plus `c`.
    pub const fn with(self, c: Class) -> ClassSet {
        ClassSet(self.0 | 1 << c as u8)
    }

    /// Union of two sets.
    pub const fn union(self, other: ClassSet) -> ClassSet {
        ClassSet(self.0 | other.0)
    }

    /// The classes in both sets.
    pub const fn intersection(self, other: ClassSet) -> ClassSet {
        ClassSet(self.0 & other.0)
    }

    /// Whether `c` is in the set.
    #[inline]
    pub const fn contains(self, c: Class) -> bool {
        self.0 & (1 << c as u8) != 0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The raw bit mask (bit i is `Class` number i).
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// The set with this bit mask; unknown bits are dropped.
    pub const fn from_bits(bits: u16) -> ClassSet {
        ClassSet(bits & ClassSet::ALL.0)
    }

    /// The classes in the set, in numeric order.
    pub fn iter(self) -> impl Iterator<Item = Class> {
        Class::ALL.into_iter().filter(move |c| self.contains(*c))
    }

    /// The class names, for metadata and reports.
    pub fn names(self) -> Vec<String> {
        self.iter().map(|c| c.name().to_string()).collect()
    }
}

impl FromIterator<Class> for ClassSet {
    fn from_iter<I: IntoIterator<Item = Class>>(iter: I) -> ClassSet {
        iter.into_iter().fold(ClassSet::NONE, ClassSet::with)
    }
}

impl FromStr for ClassSet {
    type Err = String;
    /// Parses a comma-separated list such as `load,branch,call`, or `all`.
    fn from_str(s: &str) -> Result<ClassSet, String> {
        let mut set = ClassSet::NONE;
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            match part.trim() {
                "all" => set = ClassSet::ALL,
                "control" => set = set.union(ClassSet::CONTROL),
                "memory" => set = set.with(Class::Load).with(Class::Store),
                p => set = set.with(p.parse::<Class>()?),
            }
        }
        if set.is_empty() {
            return Err("empty class list".to_string());
        }
        Ok(set)
    }
}

impl fmt::Display for ClassSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == ClassSet::ALL {
            return f.write_str("all");
        }
        f.write_str(&self.names().join(","))
    }
}

/// Bits of [`Event::flags`]. Sources fill what they know; zero means
/// "not known or not so".
pub mod flags {
    /// A control transfer was taken.
    pub const TAKEN: u16 = 1 << 0;
    /// The branch was mispredicted (filled by sources that model or read a
    /// predictor).
    pub const MISPREDICTED: u16 = 1 << 1;
    /// Shift of the two-bit cache-miss level: 0 = hit or unknown, 1 = missed
    /// L1, 2 = missed L2, 3 = missed the last level.
    pub const MISS_LEVEL_SHIFT: u16 = 2;
    /// Mask of the cache-miss level after shifting.
    pub const MISS_LEVEL_MASK: u16 = 0b11;
    /// The instruction is a 2-byte compressed instruction (RVC).
    pub const COMPRESSED: u16 = 1 << 4;
    /// The event is a sample standing for many retired instructions (from a
    /// periodic sampler) rather than one retired instruction.
    pub const SAMPLE: u16 = 1 << 5;
    /// The instruction wrote a destination register and `value` holds it.
    pub const HAS_VALUE: u16 = 1 << 6;
    /// Every bit a source may set; trace readers reject others.
    pub const KNOWN: u16 = (1 << 7) - 1;
}

/// One retired instruction, or one sample of one.
///
/// Which fields mean something depends on [`Class`]:
///
/// | class | `addr` | `size` | `value` |
/// |---|---|---|---|
/// | load | effective address | bytes read | value loaded (zero-extended) |
/// | store | effective address | bytes written (0 for a store-conditional that failed) | value stored |
/// | branch, jump, call, return | target (taken or not) | 0 | link value written, if any |
/// | others | 0 | 0 | value written to the destination register, if `HAS_VALUE` |
///
/// `value` means something only when [`flags::HAS_VALUE`] is set; trace
/// files keep it only then.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct Event {
    /// Address of the instruction.
    pub pc: u64,
    /// Effective address of a memory access, or target of a control transfer.
    pub addr: u64,
    /// The value loaded, stored or written to the destination register.
    pub value: u64,
    /// The instruction class.
    pub class: Class,
    /// Access size in bytes for loads and stores (1, 2, 4, 8, 16), else 0.
    pub size: u8,
    /// Bit flags, see [`flags`].
    pub flags: u16,
}

impl Event {
    /// An event of class `class` at `pc` with no operands.
    #[inline]
    pub const fn new(pc: u64, class: Class) -> Event {
        Event {
            pc,
            addr: 0,
            value: 0,
            class,
            size: 0,
            flags: 0,
        }
    }

    /// A load of `size` bytes from `addr` that returned `value`.
    #[inline]
    pub const fn load(pc: u64, addr: u64, size: u8, value: u64) -> Event {
        Event {
            pc,
            addr,
            value,
            class: Class::Load,
            size,
            flags: flags::HAS_VALUE,
        }
    }

    /// A store of `size` bytes of `value` to `addr`.
    #[inline]
    pub const fn store(pc: u64, addr: u64, size: u8, value: u64) -> Event {
        Event {
            pc,
            addr,
            value,
            class: Class::Store,
            size,
            flags: flags::HAS_VALUE,
        }
    }

    /// A control transfer of class `class` to `target`.
    #[inline]
    pub const fn control(pc: u64, class: Class, target: u64, taken: bool) -> Event {
        Event {
            pc,
            addr: target,
            value: 0,
            class,
            size: 0,
            flags: if taken { flags::TAKEN } else { 0 },
        }
    }

    /// An instruction that wrote `value` to its destination register.
    #[inline]
    pub const fn with_value(pc: u64, class: Class, value: u64) -> Event {
        Event {
            pc,
            addr: 0,
            value,
            class,
            size: 0,
            flags: flags::HAS_VALUE,
        }
    }

    /// Whether a control transfer was taken.
    #[inline]
    pub const fn taken(&self) -> bool {
        self.flags & flags::TAKEN != 0
    }

    /// Target of a control transfer (the same bits as `addr`).
    #[inline]
    pub const fn target(&self) -> u64 {
        self.addr
    }

    /// Whether `value` holds a value the instruction produced.
    #[inline]
    pub const fn has_value(&self) -> bool {
        self.flags & flags::HAS_VALUE != 0
    }

    /// Cache-miss level: 0 hit/unknown, 1 L1 miss, 2 L2 miss, 3 LLC miss.
    #[inline]
    pub const fn miss_level(&self) -> u8 {
        ((self.flags >> flags::MISS_LEVEL_SHIFT) & flags::MISS_LEVEL_MASK) as u8
    }

    /// Whether this is a taken short backward branch: a taken control
    /// transfer whose target lies at most `max_distance` bytes below (or
    /// at) its own PC. This is how the frequent loop detector recognises a
    /// loop (Gordon-Ross & Vahid, CASES 2003, §3.1); calls and returns are
    /// excluded because they do not close loops.
    #[inline]
    pub const fn is_short_backward_branch(&self, max_distance: u64) -> bool {
        ClassSet::LOOP_BRANCHES.contains(self.class)
            && self.taken()
            && is_short_backward(self.pc, self.addr, max_distance)
    }
}

/// Whether a transfer at `pc` to `target` goes back at most
/// `max_distance` bytes (or to itself): the distance test of a short
/// backward branch, for a stream that knows where a branch went without
/// an event for it (runs of blocks, [`crate::runs::Transfers`]).
#[inline]
pub const fn is_short_backward(pc: u64, target: u64, max_distance: u64) -> bool {
    target <= pc && pc - target <= max_distance
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_is_small() {
        assert_eq!(std::mem::size_of::<Event>(), 32);
    }

    #[test]
    fn class_names_round_trip() {
        for c in Class::ALL {
            assert_eq!(c.name().parse::<Class>().unwrap(), c);
            assert_eq!(Class::from_u8(c as u8), Some(c));
        }
        assert!("nonsense".parse::<Class>().is_err());
    }

    #[test]
    fn class_set_parses_lists() {
        let s: ClassSet = "load,branch,call".parse().unwrap();
        assert!(s.contains(Class::Load));
        assert!(s.contains(Class::CondBranch));
        assert!(s.contains(Class::Call));
        assert!(!s.contains(Class::Store));
        assert_eq!("all".parse::<ClassSet>().unwrap(), ClassSet::ALL);
        assert_eq!(s.to_string(), "load,cond-branch,call");
        assert!("load,bogus".parse::<ClassSet>().is_err());
        assert!("".parse::<ClassSet>().is_err());
    }

    #[test]
    fn short_backward_branch() {
        let e = Event::control(0x1000, Class::CondBranch, 0x0f00, true);
        assert!(e.is_short_backward_branch(4096));
        assert!(!e.is_short_backward_branch(0x80));
        let not_taken = Event::control(0x1000, Class::CondBranch, 0x0f00, false);
        assert!(!not_taken.is_short_backward_branch(4096));
        let forward = Event::control(0x1000, Class::CondBranch, 0x1100, true);
        assert!(!forward.is_short_backward_branch(4096));
        let call = Event::control(0x1000, Class::Call, 0x0f00, true);
        assert!(!call.is_short_backward_branch(4096));
    }
}

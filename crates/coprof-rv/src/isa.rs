//! Which instruction set the simulated hart implements: RV64GC always,
//! and each of the bit-manipulation extensions Zba, Zbb, Zbc and Zbs
//! (RISC-V Bit-Manipulation ISA-extensions 1.0.0, §1.4) unless left out.
//!
//! By default the hart has all four (Zba, Zbb and Zbs are the B of the
//! RVA22U64 profile), so that programs built for them run, as
//! `qemu-riscv64` runs them by default. `--isa rv64gc` makes it a plain
//! RV64GC hart, as the boards without B are: an instruction of a left-out
//! extension is then an illegal instruction, as on such a board (and as
//! under `qemu-riscv64 -cpu rv64,zba=false,zbb=false,zbc=false,zbs=false`),
//! and `riscv_hwprobe` does not report it. The string is GCC's `-march`
//! spelling, so the one a program was built with can be given as it is.

use crate::op::Kind;
use std::fmt;
use std::str::FromStr;

/// The extensions of the hart beyond RV64GC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Isa {
    /// Zba: address generation (`sh1add`, `add.uw`, …).
    pub zba: bool,
    /// Zbb: basic bit manipulation (`clz`, `rev8`, `min`, rotations, …).
    pub zbb: bool,
    /// Zbc: carry-less multiplication (`clmul`, `clmulh`, `clmulr`).
    pub zbc: bool,
    /// Zbs: single-bit instructions (`bset`, `bext`, …).
    pub zbs: bool,
}

impl Default for Isa {
    /// RV64GC with Zba, Zbb, Zbc and Zbs.
    fn default() -> Isa {
        Isa::FULL
    }
}

/// The extensions a `-march` string may name after the base, beside the
/// four that can be left out: those every RV64GC hart here has.
const ALWAYS: [&str; 6] = ["zicsr", "zifencei", "zmmul", "zaamo", "zalrsc", "zca"];

impl Isa {
    /// RV64GC with Zba, Zbb, Zbc and Zbs.
    pub const FULL: Isa = Isa {
        zba: true,
        zbb: true,
        zbc: true,
        zbs: true,
    };
    /// Plain RV64GC.
    pub const RV64GC: Isa = Isa {
        zba: false,
        zbb: false,
        zbc: false,
        zbs: false,
    };

    /// Whether the hart executes ops of `kind`: every RV64GC op, and
    /// those of the extensions it has.
    pub fn has(self, kind: Kind) -> bool {
        extension_of(kind).is_none_or(|e| self.has_extension(e))
    }

    /// Whether the hart has extension `e`.
    pub fn has_extension(mut self, e: Extension) -> bool {
        *self.flag(e)
    }

    /// The field that says whether the hart has `e`.
    fn flag(&mut self, e: Extension) -> &mut bool {
        match e {
            Extension::Zba => &mut self.zba,
            Extension::Zbb => &mut self.zbb,
            Extension::Zbc => &mut self.zbc,
            Extension::Zbs => &mut self.zbs,
        }
    }
}

/// An extension beyond RV64GC that the hart may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extension {
    /// Address generation.
    Zba,
    /// Basic bit manipulation.
    Zbb,
    /// Carry-less multiplication.
    Zbc,
    /// Single-bit instructions.
    Zbs,
}

impl Extension {
    /// Every one, in the order of a `-march` string.
    pub const ALL: [Extension; 4] = [
        Extension::Zba,
        Extension::Zbb,
        Extension::Zbc,
        Extension::Zbs,
    ];

    /// Its name as the specification writes it (`Zba`).
    pub fn name(self) -> &'static str {
        match self {
            Extension::Zba => "Zba",
            Extension::Zbb => "Zbb",
            Extension::Zbc => "Zbc",
            Extension::Zbs => "Zbs",
        }
    }
}

/// The extension beyond RV64GC whose op `kind` is, if any.
pub fn extension_of(kind: Kind) -> Option<Extension> {
    use Kind::*;
    Some(match kind {
        Sh1add | Sh2add | Sh3add | AddUw | Sh1addUw | Sh2addUw | Sh3addUw | SlliUw => {
            Extension::Zba
        }
        Bclr | Bclri | Bext | Bexti | Binv | Binvi | Bset | Bseti => Extension::Zbs,
        Clmul | Clmulh | Clmulr => Extension::Zbc,
        Andn | Orn | Xnor | Clz | Clzw | Ctz | Ctzw | Cpop | Cpopw | Max | Maxu | Min | Minu
        | SextB | SextH | ZextH | Rol | Rolw | Ror | Rori | Roriw | Rorw | OrcB | Rev8 => {
            Extension::Zbb
        }
        _ => return None,
    })
}

impl fmt::Display for Isa {
    /// The `-march` string: `rv64gc`, then `_zba`, `_zbb`, `_zbc`, `_zbs`
    /// for the extensions the hart has.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("rv64gc")?;
        for e in Extension::ALL
            .into_iter()
            .filter(|&e| self.has_extension(e))
        {
            write!(f, "_{}", e.name().to_ascii_lowercase())?;
        }
        Ok(())
    }
}

impl FromStr for Isa {
    type Err = String;

    /// A `-march` string: `rv64gc` (or `rv64imafdc`, the same), then any
    /// of `_zba`, `_zbb`, `_zbc`, `_zbs`, and `_b` for Zba, Zbb and Zbs
    /// (the B extension); `_zicsr`, `_zifencei` and the other parts of
    /// RV64GC may be named too.
    fn from_str(s: &str) -> Result<Isa, String> {
        let lower = s.trim().to_ascii_lowercase();
        let rest = ["rv64gc", "rv64imafdc"]
            .iter()
            .find_map(|base| lower.strip_prefix(base))
            .ok_or_else(|| {
                format!(
                    "ISA '{s}' does not start with rv64gc: the hart is RV64GC, with any of \
                     Zba, Zbb, Zbc and Zbs (rv64gc_zba_zbb_zbc_zbs)"
                )
            })?;
        let mut isa = Isa::RV64GC;
        for part in rest.split('_').filter(|p| !p.is_empty()) {
            let named = Extension::ALL
                .into_iter()
                .find(|e| e.name().eq_ignore_ascii_case(part));
            if let Some(e) = named {
                *isa.flag(e) = true;
                continue;
            }
            match part {
                "b" => {
                    for e in [Extension::Zba, Extension::Zbb, Extension::Zbs] {
                        *isa.flag(e) = true;
                    }
                }
                p if ALWAYS.contains(&p) => {}
                p => {
                    return Err(format!(
                        "ISA '{s}': extension '{p}' is not one the simulator has \
                         (beyond RV64GC it has zba, zbb, zbc and zbs)"
                    ))
                }
            }
        }
        Ok(isa)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn march_strings_name_the_extensions() {
        let parse = |s: &str| s.parse::<Isa>();
        assert_eq!(parse("rv64gc"), Ok(Isa::RV64GC));
        assert_eq!(parse("rv64gc_zba_zbb_zbc_zbs"), Ok(Isa::FULL));
        assert_eq!(
            parse("rv64gc_zba_zbb_zbs"),
            Ok(Isa {
                zbc: false,
                ..Isa::FULL
            })
        );
        assert_eq!(
            parse("RV64IMAFDC_Zbb"),
            Ok(Isa {
                zbb: true,
                ..Isa::RV64GC
            })
        );
        assert_eq!(
            parse("rv64gc_zicsr_zifencei_zba"),
            Ok(Isa {
                zba: true,
                ..Isa::RV64GC
            })
        );
        assert_eq!(parse("rv64gc_b_zbc"), Ok(Isa::FULL));
        assert_eq!(
            parse("rv64gc_b"),
            Ok(Isa {
                zbc: false,
                ..Isa::FULL
            })
        );
        let e = parse("rv64gcv").unwrap_err();
        assert!(e.contains("extension 'v'"), "{e}");
        let e = parse("rv64gc_zbkb").unwrap_err();
        assert!(
            e.contains("'zbkb'") && e.contains("zba, zbb, zbc and zbs"),
            "{e}"
        );
        let e = parse("rv32gc").unwrap_err();
        assert!(e.contains("does not start with rv64gc"), "{e}");
        for isa in [
            Isa::FULL,
            Isa::RV64GC,
            Isa {
                zbs: true,
                ..Isa::RV64GC
            },
        ] {
            assert_eq!(parse(&isa.to_string()), Ok(isa), "{isa}");
        }
        assert_eq!(Isa::default().to_string(), "rv64gc_zba_zbb_zbc_zbs");
    }

    #[test]
    fn each_extension_holds_its_own_ops() {
        let only_zbb = Isa {
            zbb: true,
            ..Isa::RV64GC
        };
        assert!(only_zbb.has(Kind::Clz) && only_zbb.has(Kind::Rev8));
        assert!(!only_zbb.has(Kind::Sh1add) && !only_zbb.has(Kind::Bset));
        assert!(!only_zbb.has(Kind::Clmul) && Isa::FULL.has(Kind::Clmulr));
        assert!(Isa::RV64GC.has(Kind::Add) && Isa::RV64GC.has(Kind::FaddD));
        assert!(!Isa::RV64GC.has(Kind::SlliUw) && !Isa::RV64GC.has(Kind::Bexti));
    }
}

//! `riscv_hwprobe` (Linux's arch/riscv/kernel/sys_hwprobe.c,
//! Documentation/arch/riscv/hwprobe.rst): what the simulated hart is, as
//! key-value pairs. glibc 2.40 and later ask it at startup to choose its
//! string functions, so every static binary they link calls it.
//!
//! The hart is RV64GC with the bit-manipulation extensions Zba, Zbb, Zbc
//! and Zbs, or those of them `--isa` leaves ([`Isa`]): the base behaviour
//! IMA, F and D, C (whose 16-bit instructions Linux 6.11 and later also
//! report as Zca and, with D, Zcd), the bit-manipulation extensions it
//! has, no vector unit, no vendor extension and no cache-block
//! operations. Its `time` CSR counts at 10 MHz, and user addresses end at
//! the top of Sv39. Misaligned loads and stores are performed (as Linux does for
//! user code that traps on them), and reported as SLOW: glibc then keeps
//! the string functions it uses without `riscv_hwprobe` and on most of
//! today's boards, so a profile does not change with the glibc that built
//! the program. Every CPU the host has online answers the same, as the
//! harts of one machine would.

use super::{Outcome, EFAULT, EINVAL};
use crate::isa::{Extension, Isa};
use crate::mem::{perm, Memory, LIMIT};

/// `flags`: reduce the CPU set to the CPUs that match the pairs.
const WHICH_CPUS: u64 = 1;
/// The highest key this answers: Linux's RISCV_HWPROBE_KEY_ZICBOP_BLOCK_SIZE.
const MAX_KEY: i64 = 15;
/// Bytes of a CPU set Linux reads at most (a 1,024-CPU `cpu_set_t`).
const CPU_SET_BYTES: u64 = 128;

/// Keys (include/uapi/asm/hwprobe.h).
mod key {
    pub const BASE_BEHAVIOR: i64 = 3;
    pub const IMA_EXT_0: i64 = 4;
    pub const CPUPERF_0: i64 = 5;
    pub const HIGHEST_VIRT_ADDRESS: i64 = 7;
    pub const TIME_CSR_FREQ: i64 = 8;
    pub const MISALIGNED_SCALAR_PERF: i64 = 9;
    pub const MISALIGNED_VECTOR_PERF: i64 = 10;
    pub const VENDOR_EXT_THEAD_0: i64 = 11;
    pub const VENDOR_EXT_SIFIVE_0: i64 = 13;
    pub const VENDOR_EXT_MIPS_0: i64 = 14;
}

/// `RISCV_HWPROBE_BASE_BEHAVIOR_IMA`.
const BASE_IMA: u64 = 1;
/// IMA_EXT_0 bits: F and D, C, Zca, Zcd; the bit-manipulation extensions'
/// are [`ext_bit`]'s.
const IMA_FD: u64 = 1 << 0;
const IMA_C: u64 = 1 << 1;
const EXT_ZCA: u64 = 1 << 43;
const EXT_ZCD: u64 = 1 << 45;
/// `RISCV_HWPROBE_MISALIGNED_SCALAR_SLOW`.
const MISALIGNED_SLOW: u64 = 2;
/// `RISCV_HWPROBE_MISALIGNED_VECTOR_UNSUPPORTED`: there is no vector unit.
const VECTOR_MISALIGNED_UNSUPPORTED: u64 = 4;
/// The `time` CSR's frequency ([`crate::cpu`]'s timebase).
const TIMEBASE_HZ: u64 = 10_000_000;

/// IMA_EXT_0's bit for `e`: RISCV_HWPROBE_EXT_ZBA, _ZBB, _ZBC, _ZBS.
fn ext_bit(e: Extension) -> u64 {
    match e {
        Extension::Zba => 1 << 3,
        Extension::Zbb => 1 << 4,
        Extension::Zbc => 1 << 7,
        Extension::Zbs => 1 << 5,
    }
}

/// The value for `key` of a hart of `isa`, `None` for a key Linux does
/// not know.
fn value(key: i64, isa: Isa) -> Option<u64> {
    Some(match key {
        // mvendorid, marchid, mimpid: not populated, as on a hart that
        // does not name its maker; the ISA and block sizes say the rest.
        0..=2 => 0,
        key::BASE_BEHAVIOR => BASE_IMA,
        key::IMA_EXT_0 => Extension::ALL
            .into_iter()
            .filter(|&e| isa.has_extension(e))
            .fold(IMA_FD | IMA_C | EXT_ZCA | EXT_ZCD, |v, e| v | ext_bit(e)),
        key::CPUPERF_0 | key::MISALIGNED_SCALAR_PERF => MISALIGNED_SLOW,
        key::HIGHEST_VIRT_ADDRESS => LIMIT - 1,
        key::TIME_CSR_FREQ => TIMEBASE_HZ,
        key::MISALIGNED_VECTOR_PERF => VECTOR_MISALIGNED_UNSUPPORTED,
        // Zicboz, Zicbom and Zicbop block sizes (6, 12, 15): no such
        // extension; the vendor extension bitmasks: none.
        6 | 11..=MAX_KEY => 0,
        _ => return None,
    })
}

/// Whether a CPU whose value for `key` is `has` matches a wanted `want`
/// (Linux's riscv_hwprobe_pair_cmp): every wanted bit for the bitmask
/// keys, the same value for the others.
fn matches(key: i64, has: u64, want: u64) -> bool {
    match key {
        key::BASE_BEHAVIOR
        | key::IMA_EXT_0
        | key::CPUPERF_0
        | key::VENDOR_EXT_THEAD_0
        | key::VENDOR_EXT_SIFIVE_0
        | key::VENDOR_EXT_MIPS_0 => has & want == want,
        _ => has == want,
    }
}

/// The CPUs the host has online, as a CPU set's bytes.
fn online() -> Vec<u8> {
    // SAFETY: a plain query.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.clamp(1, 1024) as usize;
    let mut set = vec![0u8; CPU_SET_BYTES as usize];
    for cpu in 0..n {
        set[cpu / 8] |= 1 << (cpu % 8);
    }
    set
}

/// The CPU set of `size` bytes at `at` (at most [`CPU_SET_BYTES`]), ANDed
/// with the online CPUs.
fn read_set(mem: &Memory, at: u64, size: u64) -> Result<Vec<u8>, i64> {
    let size = size.min(CPU_SET_BYTES);
    let bytes = mem.slice(at, size, perm::R).map_err(|_| EFAULT)?;
    let mut set = online();
    for (s, b) in set
        .iter_mut()
        .zip(bytes.iter().chain(std::iter::repeat(&0)))
    {
        *s &= b;
    }
    Ok(set)
}

/// The address of pair `i` of the array at `pairs` (`struct riscv_hwprobe`
/// is a 64-bit key and a 64-bit value).
fn pair_at(pairs: u64, i: u64) -> u64 {
    pairs.wrapping_add(i.wrapping_mul(16))
}

/// Writes the pair at `at`.
fn store_pair(mem: &mut Memory, at: u64, key: i64, value: u64) -> Result<(), i64> {
    mem.store::<8>(at, key as u64).map_err(|_| EFAULT)?;
    mem.store::<8>(at + 8, value).map_err(|_| EFAULT)
}

/// `riscv_hwprobe(pairs, pair_count, cpusetsize, cpus, flags)` on harts
/// of `isa`.
pub(super) fn riscv_hwprobe(mem: &mut Memory, a: [u64; 8], isa: Isa) -> Outcome {
    let (pairs, count, size, cpus, flags) = (a[0], a[1], a[2], a[3], a[4] as u32 as u64);
    let value = |key| value(key, isa);
    let r = if flags & WHICH_CPUS != 0 {
        which_cpus(mem, pairs, count, size, cpus, flags, value)
    } else {
        values(mem, pairs, count, size, cpus, flags, value)
    };
    Outcome::Ret(r.err().unwrap_or(0))
}

/// Fills in the value of each pair's key for the CPUs of the set (all
/// online CPUs for a null set of size 0); an unknown key becomes −1 with
/// value 0.
fn values(
    mem: &mut Memory,
    pairs: u64,
    count: u64,
    size: u64,
    cpus: u64,
    flags: u64,
    value: impl Fn(i64) -> Option<u64>,
) -> Result<(), i64> {
    if flags != 0 {
        return Err(EINVAL);
    }
    if size != 0 || cpus != 0 {
        // Every CPU answers alike: the set only has to hold one online.
        if read_set(mem, cpus, size)?.iter().all(|&b| b == 0) {
            return Err(EINVAL);
        }
    }
    for i in 0..count {
        let at = pair_at(pairs, i);
        let key = mem.load::<8>(at).map_err(|_| EFAULT)? as i64;
        match value(key) {
            Some(v) => store_pair(mem, at, key, v)?,
            None => store_pair(mem, at, -1, 0)?,
        }
    }
    Ok(())
}

/// RISCV_HWPROBE_WHICH_CPUS: reduces the set (all online CPUs when empty)
/// to the CPUs whose values match every pair; an unknown key becomes −1
/// and empties the set.
fn which_cpus(
    mem: &mut Memory,
    pairs: u64,
    count: u64,
    size: u64,
    cpus: u64,
    flags: u64,
    value: impl Fn(i64) -> Option<u64>,
) -> Result<(), i64> {
    if flags != WHICH_CPUS || size == 0 || cpus == 0 {
        return Err(EINVAL);
    }
    let mut set = read_set(mem, cpus, size)?;
    if set.iter().all(|&b| b == 0) {
        set = online();
    }
    let mut clear = false;
    for i in 0..count {
        let at = pair_at(pairs, i);
        let key = mem.load::<8>(at).map_err(|_| EFAULT)? as i64;
        let want = mem.load::<8>(at + 8).map_err(|_| EFAULT)?;
        match value(key) {
            None => {
                clear = true;
                store_pair(mem, at, -1, 0)?;
            }
            // The harts are alike: one that does not match means none.
            Some(has) if !clear && !matches(key, has, want) => set.fill(0),
            Some(_) => {}
        }
    }
    if clear {
        set.fill(0);
    }
    let size = size.min(CPU_SET_BYTES) as usize;
    mem.slice_mut(cpus, size as u64)
        .map_err(|_| EFAULT)?
        .copy_from_slice(&set[..size]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::perm;

    const AT: u64 = 0x10_0000;

    fn memory() -> Memory {
        let mut mem = Memory::new().unwrap();
        mem.map(AT, 0x1000, perm::R | perm::W).unwrap();
        mem
    }

    fn put_pairs(mem: &mut Memory, pairs: &[(i64, u64)]) {
        for (i, &(k, v)) in pairs.iter().enumerate() {
            mem.store::<8>(AT + 16 * i as u64, k as u64).unwrap();
            mem.store::<8>(AT + 16 * i as u64 + 8, v).unwrap();
        }
    }

    fn pairs(mem: &Memory, n: usize) -> Vec<(i64, u64)> {
        (0..n as u64)
            .map(|i| {
                let k = mem.load::<8>(AT + 16 * i).unwrap() as i64;
                (k, mem.load::<8>(AT + 16 * i + 8).unwrap())
            })
            .collect()
    }

    fn call(mem: &mut Memory, count: u64, size: u64, cpus: u64, flags: u64) -> i64 {
        match riscv_hwprobe(
            mem,
            [AT, count, size, cpus, flags, 0, 0, 258],
            Isa::default(),
        ) {
            Outcome::Ret(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answers_what_the_hart_is_and_marks_unknown_keys() {
        let mut mem = memory();
        put_pairs(
            &mut mem,
            &[
                (4, 7),
                (3, 0),
                (5, 0),
                (8, 0),
                (7, 0),
                (10, 0),
                (99, 5),
                (-3, 1),
            ],
        );
        assert_eq!(call(&mut mem, 8, 0, 0, 0), 0);
        let got = pairs(&mem, 8);
        assert_eq!(
            got[0],
            (4, 0b11 | 0b111 << 3 | 1 << 7 | 1 << 43 | 1 << 45),
            "FD, C, Zba, Zbb, Zbs, Zbc, Zca, Zcd; no V"
        );
        assert_eq!(got[1], (3, 1), "base behaviour IMA");
        assert_eq!(got[2], (5, 2), "misaligned accesses: slow");
        assert_eq!(got[3], (8, 10_000_000), "the time CSR's 10 MHz");
        assert_eq!(got[4], (7, (1 << 38) - 1), "the top of Sv39");
        assert_eq!(got[5], (10, 4), "no vector unit");
        assert_eq!(got[6], (-1, 0), "an unknown key is cleared");
        assert_eq!(got[7], (-1, 0));
    }

    #[test]
    fn a_plain_rv64gc_hart_reports_no_bit_manipulation() {
        let mut mem = memory();
        put_pairs(&mut mem, &[(4, 0)]);
        let a = [AT, 1, 0, 0, 0, 0, 0, 258];
        assert!(matches!(
            riscv_hwprobe(&mut mem, a, Isa::RV64GC),
            Outcome::Ret(0)
        ));
        assert_eq!(pairs(&mem, 1)[0], (4, 0b11 | 1 << 43 | 1 << 45));
        let zbb = Isa {
            zbb: true,
            ..Isa::RV64GC
        };
        assert!(matches!(riscv_hwprobe(&mut mem, a, zbb), Outcome::Ret(0)));
        assert_eq!(pairs(&mem, 1)[0], (4, 0b11 | 1 << 4 | 1 << 43 | 1 << 45));
    }

    #[test]
    fn refuses_as_linux_does() {
        let mut mem = memory();
        put_pairs(&mut mem, &[(4, 0)]);
        assert_eq!(call(&mut mem, 1, 0, 0, 2), EINVAL, "a reserved flag");
        assert_eq!(
            call(&mut mem, 1, 8, 0x50_0000, 0),
            EFAULT,
            "a CPU set out of memory"
        );
        mem.store::<8>(AT + 0x800, 0).unwrap();
        assert_eq!(
            call(&mut mem, 1, 8, AT + 0x800, 0),
            EINVAL,
            "no online CPU in the set"
        );
        mem.store::<8>(AT + 0x800, 1).unwrap();
        assert_eq!(call(&mut mem, 1, 8, AT + 0x800, 0), 0, "CPU 0");
        assert_eq!(
            call(&mut mem, 1000, 0, 0, 0),
            EFAULT,
            "pairs past the mapping"
        );
        assert_eq!(
            call(&mut mem, 1, 0, 0, 1),
            EINVAL,
            "WHICH_CPUS without a set"
        );
    }

    #[test]
    fn which_cpus_keeps_the_cpus_that_match_every_pair() {
        let mut mem = memory();
        let set = AT + 0x800;
        let ask = |mem: &mut Memory, pairs: &[(i64, u64)]| {
            put_pairs(mem, pairs);
            mem.store::<8>(set, 1).unwrap();
            assert_eq!(call(mem, pairs.len() as u64, 8, set, 1), 0);
            mem.load::<8>(set).unwrap()
        };
        assert_eq!(ask(&mut mem, &[(4, 0b11)]), 1, "has F, D and C");
        assert_eq!(ask(&mut mem, &[(4, 0b100)]), 0, "has no V");
        assert_eq!(ask(&mut mem, &[(4, 1 << 4 | 1 << 3)]), 1, "has Zba and Zbb");
        assert_eq!(ask(&mut mem, &[(4, 1 << 7)]), 1, "has Zbc");
        assert_eq!(ask(&mut mem, &[(4, 1 << 8)]), 0, "has no Zbkb");
        assert_eq!(ask(&mut mem, &[(8, 10_000_000), (3, 1)]), 1);
        assert_eq!(ask(&mut mem, &[(8, 1)]), 0, "another timebase");
        assert_eq!(
            ask(&mut mem, &[(77, 0), (4, 0)]),
            0,
            "an unknown key empties it"
        );
        assert_eq!(pairs(&mem, 1)[0], (-1, 0));
    }
}

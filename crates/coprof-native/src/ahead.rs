//! Reaching a thread's next load in one stop rather than one stop per
//! instruction ([`Config::next_load`](crate::Config::next_load)).
//!
//! Single-stepping a thread to its next load costs a ptrace stop per
//! instruction. But a run of instructions that neither branch nor read
//! memory runs the same way whatever the registers hold: the instructions
//! it will execute can be read off the code. So the sampler decodes ahead
//! from the PC to the first instruction at which stepping would have to
//! look again (a load, a system instruction, a branch, call or return, or
//! the last step allowed), puts a hardware execute breakpoint there (debug
//! register 0), and lets the thread run to it: one stop for the whole run.
//! The instruction it stops at, and the count of instructions before it,
//! are those single-stepping would have reached.

use crate::decode::{decode, Regs, MAX_LEN};

/// Bytes of code read at once while decoding ahead.
const WINDOW: usize = 256;

/// Where the thread stopped at `pc` with `regs` goes in a straight line:
/// the address of the first instruction, from `pc` on, that reads
/// memory, is a system instruction, does not fall through to the next
/// (a branch, call, return), or is the `limit`th after `pc`; and the
/// number of instructions before it. `read` reads code: as many bytes as
/// it can of the slice's length at an address, returning how many.
/// `None` when the code cannot be read or decoded.
pub(crate) fn straight_run(
    mut read: impl FnMut(u64, &mut [u8]) -> usize,
    pc: u64,
    regs: &Regs<'_>,
    limit: u32,
) -> Option<(u64, u32)> {
    let mut window = [0u8; WINDOW];
    let mut base = pc;
    let mut got = read(base, &mut window);
    let mut at = pc;
    for count in 0..=limit {
        let offset = (at - base) as usize;
        if offset + MAX_LEN > got && got == WINDOW {
            base = at;
            got = read(base, &mut window);
        }
        let offset = (at - base) as usize;
        let d = decode(&window[offset..got], at, regs)?;
        if count == limit
            || d.read.is_some()
            || d.class == coprof_core::Class::System
            || !d.falls_through
        {
            return Some((at, count));
        }
        at += d.len as u64;
    }
    unreachable!("the loop returns at its last count")
}

/// `offsetof(struct user, u_debugreg)` on x86-64: where ptrace's
/// `PTRACE_POKEUSER` writes the debug registers, 8 bytes each.
const DEBUG_REGS: usize = 848;
/// DR7 with breakpoint 0 enabled for this thread (L0), on execution
/// (R/W0 and LEN0 both 0).
const DR7_EXECUTE_0: u64 = 1;

/// Lets the stopped thread `tid` run until it is about to execute the
/// instruction at `target`; the wait status of the stop it then makes,
/// or `None` when the breakpoint could not be set. The breakpoint is
/// cleared after any stop, so that the thread never meets it again.
pub(crate) fn run_to(tid: i32, target: u64) -> Option<i32> {
    let poke = |reg: usize, value: u64| {
        // SAFETY: a debug register of a stopped tracee; the kernel checks
        // the address and the bits.
        let r = unsafe {
            libc::ptrace(
                libc::PTRACE_POKEUSER,
                tid,
                DEBUG_REGS + 8 * reg,
                value as libc::c_ulong,
            )
        };
        r == 0
    };
    if !(poke(0, target) && poke(7, DR7_EXECUTE_0)) {
        return None;
    }
    // SAFETY: a ptrace request on the stopped tracee.
    unsafe { libc::ptrace(libc::PTRACE_CONT, tid, 0, 0) };
    let status = crate::tracer::wait_for(tid);
    // A thread that has ended has no registers to clear.
    let _ = poke(7, 0);
    Some(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `straight_run` over `code` placed at 0x1000.
    fn run(code: &[u8], limit: u32) -> Option<(u64, u32)> {
        // SAFETY: plain data, all zero.
        let regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
        let read = |addr: u64, out: &mut [u8]| {
            let from = (addr - 0x1000) as usize;
            let n = out.len().min(code.len().saturating_sub(from));
            out[..n].copy_from_slice(&code[from..from + n]);
            n
        };
        straight_run(read, 0x1000, &Regs(&regs), limit)
    }

    #[test]
    fn the_run_ends_at_the_first_load_branch_or_system_instruction() {
        // add rax, rcx; inc rdx; mov rbx, [rax]
        let to_load = [0x48, 0x01, 0xc8, 0x48, 0xff, 0xc2, 0x48, 0x8b, 0x18];
        assert_eq!(run(&to_load, 64), Some((0x1006, 2)));
        // add rax, rcx; je +2
        assert_eq!(run(&[0x48, 0x01, 0xc8, 0x74, 0x02], 64), Some((0x1003, 1)));
        // nop; syscall
        assert_eq!(run(&[0x90, 0x0f, 0x05], 64), Some((0x1001, 1)));
        // A store is passed: mov [rax], ecx; ret
        assert_eq!(run(&[0x89, 0x08, 0xc3], 64), Some((0x1002, 1)));
        // At the PC itself.
        assert_eq!(run(&[0xc3], 64), Some((0x1000, 0)));
    }

    #[test]
    fn the_run_ends_at_the_limit_and_across_windows() {
        let nops = vec![0x90u8; 1000];
        assert_eq!(run(&nops, 5), Some((0x1005, 5)));
        // 600 one-byte instructions: more than two windows of code.
        let mut long = vec![0x90u8; 600];
        long.extend_from_slice(&[0x48, 0x8b, 0x18]); // mov rbx, [rax]
        assert_eq!(run(&long, 1000), Some((0x1000 + 600, 600)));
        // Code that ends, or is no instruction, gives no run.
        assert_eq!(run(&[0x90, 0x90], 64), None);
    }
}

//! The stacks of samples taken into a ring buffer
//! ([`Config::ring_buffer`](crate::Config::ring_buffer) with stacks), as
//! `perf record --call-graph dwarf` unwinds them: the kernel copies each
//! sample's user registers and the top of its stack into the buffer
//! ([`Clock::open_ring`](crate::perf::Clock::open_ring)), and the thread
//! runs on. By the time the sampler reads the buffer its stack holds
//! other frames, so the unwinder reads the stack from the copy alone, and
//! from the process only its code, which does not change as it runs (the
//! calls before return addresses, the vDSO's image). Memory that neither
//! holds (the stack beyond the copy, the heap) is not read: a stack
//! deeper than the copy stops there, as perf's do, and is not whole.
//!
//! Each sample is unwound where it lies in the buffer, before the buffer
//! is handed back to the kernel: its copy is not copied again.
//!
//! With [`Config::frame_pointers`](crate::Config::frame_pointers) the
//! kernel walks the thread's frame pointers at the sample instead, as for
//! `perf record --call-graph fp`, and the sample holds the return
//! addresses it found (`unwind_chain`): each is checked against the code
//! (a call must end just before it) and named by its function's CFI. Of
//! the stack, only the copy of its top 512 bytes is read, for the frames
//! below the innermost frame pointer.

use crate::tracer::read_memory;
use crate::unwind::{Space, Unwinder};
use coprof_core::OpenCall;
use std::cell::Cell;

/// A stack unwound from the copy of its top a sample holds; by default,
/// one that stops at once.
#[derive(Debug, Default)]
pub(crate) struct Unwound {
    pub(crate) calls: Vec<OpenCall>,
    /// Whether it reached the thread's first frame.
    pub(crate) whole: bool,
    /// Whether the unwinding asked for the stack past the copy's end:
    /// a larger copy would have let it go on.
    pub(crate) cut: bool,
}

/// The stack of a sample of thread `tid` of process `pid`, whose
/// registers are `regs` and which copied `copy` from its stack pointer
/// up, unwound by `unwinder` in what `space` knows of the process, whose
/// code lies in `code` (its executable mappings, by start).
pub(crate) fn unwind_copy(
    unwinder: &mut Unwinder,
    space: &mut Space,
    (pid, tid): (i32, i32),
    regs: &libc::user_regs_struct,
    copy: &[u8],
    code: &[(u64, u64)],
) -> Unwound {
    let stack = CopiedStack {
        tid,
        sp: regs.rsp,
        bytes: copy,
        code,
        stack_end: space.maps.end_of(regs.rsp).unwrap_or(0),
        cut: Cell::new(false),
    };
    let mut read = |addr, out: &mut [u8]| stack.read(addr, out);
    let (calls, whole) = unwinder.stack_of_copy(space, pid, regs, &mut read);
    Unwound {
        calls,
        whole,
        cut: !whole && stack.cut.get(),
    }
}

/// The stack of a sample of thread `tid` of process `pid` whose frame
/// pointers the kernel walked, `chain` its PC and the return addresses it
/// found (innermost first), as [`unwind_copy`] unwinds a copy: the frames
/// below the innermost frame pointer from `copy`, the top of the stack
/// from `regs` up, where the kernel had them; the code read from the
/// process, where `code` says it lies.
pub(crate) fn unwind_chain(
    unwinder: &mut Unwinder,
    space: &mut Space,
    (pid, tid): (i32, i32),
    chain: &[u64],
    (regs, copy): (Option<&libc::user_regs_struct>, &[u8]),
    code: &[(u64, u64)],
) -> Unwound {
    let stack = CopiedStack {
        tid,
        sp: regs.map_or(0, |r| r.rsp),
        bytes: copy,
        code,
        stack_end: 0,
        cut: Cell::new(false),
    };
    let mut read = |addr, out: &mut [u8]| stack.read(addr, out);
    let (calls, whole) = unwinder.stack_of_chain(space, pid, regs, chain, &mut read);
    Unwound {
        calls,
        whole,
        cut: false,
    }
}

/// A thread's stack as a sample copied it, and where the thread's code
/// lies.
struct CopiedStack<'a> {
    tid: i32,
    /// The stack pointer at the sample: where the copy starts.
    sp: u64,
    bytes: &'a [u8],
    /// The thread's executable mappings, by start.
    code: &'a [(u64, u64)],
    /// The end of the mapping the stack lies in.
    stack_end: u64,
    /// Whether a read was refused past the copy's end, within the stack.
    cut: Cell<bool>,
}

impl CopiedStack<'_> {
    /// Reads `out.len()` bytes at `addr` into `out`, as
    /// [`read_memory`] does, from the copy within it, from the process
    /// in its code, and not elsewhere: the bytes read.
    fn read(&self, addr: u64, out: &mut [u8]) -> usize {
        if let Some(from) = addr.checked_sub(self.sp) {
            if from < self.bytes.len() as u64 {
                let from = from as usize;
                let n = out.len().min(self.bytes.len() - from);
                out[..n].copy_from_slice(&self.bytes[from..from + n]);
                return n;
            }
        }
        let i = self.code.partition_point(|&(start, _)| start <= addr);
        match i.checked_sub(1).map(|i| self.code[i]) {
            Some((_, end)) if addr < end => {
                let n = out.len().min((end - addr) as usize);
                read_memory(self.tid, addr, &mut out[..n])
            }
            _ => {
                let past = self.sp.saturating_add(self.bytes.len() as u64);
                if (past..self.stack_end).contains(&addr) {
                    self.cut.set(true);
                }
                0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unwind::tests::registers;

    /// A stack's copy is read where it lies and as far as it goes; code
    /// is read from the process (this one); any other memory is not.
    #[test]
    fn the_copy_is_read_within_itself_and_code_from_the_process() {
        let tid = std::process::id() as i32;
        let here = the_copy_is_read_within_itself_and_code_from_the_process as *const () as u64;
        let code = [(here - 64, here + 64)];
        let copy: Vec<u8> = (0..64).collect();
        let stack = CopiedStack {
            tid,
            sp: 0x7000,
            bytes: &copy,
            code: &code,
            stack_end: 0x9000,
            cut: Cell::new(false),
        };
        let mut out = [0u8; 8];
        assert_eq!(stack.read(0x7008, &mut out), 8);
        assert_eq!(out, [8, 9, 10, 11, 12, 13, 14, 15]);
        // Across the copy's end: as far as it goes.
        assert_eq!(stack.read(0x703c, &mut out), 4);
        assert_eq!(out[..4], [60, 61, 62, 63]);
        // Below the stack pointer, and past the copy: nothing, though
        // the process may hold something there.
        let data = copy.as_ptr() as u64;
        assert_eq!(stack.read(0x6ff8, &mut out), 0);
        assert_eq!(stack.read(data, &mut out), 0);
        assert!(!stack.cut.get());
        // Past the copy's end but within the stack: the copy cut it.
        assert_eq!(stack.read(0x7040, &mut out), 0);
        assert!(stack.cut.get());
        // Code, from the process, up to the end of its range.
        assert_eq!(stack.read(here, &mut out), 8);
        // SAFETY: this function's own first bytes.
        let bytes = unsafe { std::slice::from_raw_parts(here as *const u8, 8) };
        assert_eq!(out, bytes);
        assert_eq!(stack.read(here + 60, &mut out), 4);
    }

    /// This thread's stack, unwound live and from copies of its top of
    /// `sizes`, three calls of `copied` down: each unwinding's calls, and
    /// whether it was whole and cut.
    #[inline(never)]
    fn copied(depth: u32, sizes: &[usize]) -> Vec<(Vec<OpenCall>, bool, bool)> {
        if depth > 0 {
            return std::hint::black_box(copied(std::hint::black_box(depth - 1), sizes));
        }
        let regs = registers();
        let pid = std::process::id() as i32;
        let mut top = vec![0u8; 64 << 10];
        let got = read_memory(pid, regs.rsp, &mut top);
        top.truncate(got);
        let mut space = Space::default();
        space.maps.read(pid);
        let code = space.maps.code();
        let mut unwinder = Unwinder::default();
        let mut live = |addr, out: &mut [u8]| read_memory(pid, addr, out);
        let (calls, whole) = unwinder.stack(&mut space, pid, &regs, &mut live);
        let mut all = vec![(calls, whole, false)];
        for &size in sizes {
            let copy = &top[..size.min(top.len())];
            let u = unwind_copy(&mut unwinder, &mut space, (pid, pid), &regs, copy, &code);
            all.push((u.calls, u.whole, u.cut));
        }
        all
    }

    #[test]
    fn a_copy_of_the_stack_unwinds_as_the_stack_does_as_far_as_it_goes() {
        let all = copied(3, &[64 << 10, 64]);
        let (live, whole, _) = &all[0];
        assert!(*whole, "{live:x?}");
        // A copy that holds the whole stack: the same calls, whole.
        assert_eq!(all[1], (live.clone(), true, false));
        // 64 bytes hold `copied`'s own frame at most: the unwinding
        // stops at the copy's end, cut there.
        let (calls, whole, cut) = &all[2];
        assert!(!whole && *cut, "{calls:x?}");
        assert!(
            calls.len() < live.len() && live.ends_with(calls),
            "{calls:x?}"
        );
    }
}

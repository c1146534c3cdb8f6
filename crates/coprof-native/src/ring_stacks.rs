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

use crate::perf::user_regs;
use crate::ring::RingSample;
use crate::tracer::read_memory;
use std::cell::Cell;
use std::ops::Range;

/// Samples read from a ring buffer, kept until they are counted.
#[derive(Debug, Default)]
pub(crate) struct RingSamples {
    pub(crate) taken: Vec<Taken>,
    /// The copies of their stacks, one after another.
    bytes: Vec<u8>,
}

/// One sample read from a ring buffer.
#[derive(Debug)]
pub(crate) struct Taken {
    pub(crate) pc: u64,
    /// Its registers, where it holds them.
    pub(crate) regs: Option<libc::user_regs_struct>,
    /// Where its stack's copy lies in [`RingSamples::bytes`].
    stack: Range<usize>,
}

impl RingSamples {
    /// Forgets the samples kept.
    pub(crate) fn clear(&mut self) {
        self.taken.clear();
        self.bytes.clear();
    }

    /// Keeps `sample`, with a copy of its stack.
    pub(crate) fn keep(&mut self, sample: RingSample<'_>) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(sample.stack);
        self.taken.push(Taken {
            pc: sample.pc,
            regs: user_regs(&sample),
            stack: start..self.bytes.len(),
        });
    }

    /// The stack of `taken` as its sample copied it, for thread `tid`
    /// whose code lies in `code` and whose stack's mapping ends at
    /// `stack_end`.
    pub(crate) fn stack<'a>(
        &'a self,
        taken: &Taken,
        tid: i32,
        code: &'a [(u64, u64)],
        stack_end: u64,
    ) -> Option<CopiedStack<'a>> {
        Some(CopiedStack {
            tid,
            sp: taken.regs?.rsp,
            bytes: &self.bytes[taken.stack.clone()],
            code,
            stack_end,
            cut: Cell::new(false),
        })
    }
}

/// A thread's stack as a sample copied it, and where the thread's code
/// lies.
pub(crate) struct CopiedStack<'a> {
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
    pub(crate) fn read(&self, addr: u64, out: &mut [u8]) -> usize {
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

    /// Whether the unwinding asked for the stack past the copy's end:
    /// a larger copy would have let it go on.
    pub(crate) fn was_cut(&self) -> bool {
        self.cut.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(!stack.was_cut());
        // Past the copy's end but within the stack: the copy cut it.
        assert_eq!(stack.read(0x7040, &mut out), 0);
        assert!(stack.was_cut());
        // Code, from the process, up to the end of its range.
        assert_eq!(stack.read(here, &mut out), 8);
        // SAFETY: this function's own first bytes.
        let bytes = unsafe { std::slice::from_raw_parts(here as *const u8, 8) };
        assert_eq!(out, bytes);
        assert_eq!(stack.read(here + 60, &mut out), 4);
    }

    #[test]
    fn samples_kept_keep_their_registers_and_stacks_apart() {
        let regs: Vec<u8> = (0..17u64).flat_map(|r| (r * 0x100).to_le_bytes()).collect();
        let mut kept = RingSamples::default();
        kept.keep(RingSample {
            pc: 1,
            regs: &regs,
            stack: &[1, 2, 3, 4, 5, 6, 7, 8],
        });
        kept.keep(RingSample {
            pc: 2,
            regs: &[],
            stack: &[],
        });
        kept.keep(RingSample {
            pc: 3,
            regs: &regs,
            stack: &[9; 16],
        });
        let pcs: Vec<u64> = kept.taken.iter().map(|t| t.pc).collect();
        assert_eq!(pcs, [1, 2, 3]);
        let r = kept.taken[0].regs.expect("the registers");
        // rsp is the eighth of the mask's order, rip the ninth, r15 last.
        assert_eq!(
            (r.rax, r.rsp, r.rip, r.r8, r.r15),
            (0, 0x700, 0x800, 0x900, 0x1000)
        );
        assert!(kept.taken[1].regs.is_none());
        assert!(kept.stack(&kept.taken[1], 1, &[], 0).is_none());
        let third = kept.stack(&kept.taken[2], 1, &[], 0).expect("a stack");
        let mut out = [0u8; 16];
        assert_eq!(third.read(0x700, &mut out), 16);
        assert_eq!(out, [9; 16]);
        kept.clear();
        assert!(kept.taken.is_empty());
    }
}

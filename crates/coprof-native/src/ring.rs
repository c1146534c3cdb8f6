//! The kernel's ring buffer of a clock's samples
//! ([`Config::ring_buffer`](crate::Config::ring_buffer)): the clock's
//! descriptor mapped with `mmap`, one page of control (`struct
//! perf_event_mmap_page`) and a power of two of data pages that the
//! kernel writes a record into at each overflow, as it does for
//! `perf record`. The thread is not stopped: the sampler reads the
//! records later ([`Ring::drain`]) and moves the tail on, so the kernel
//! may write over what has been read.
//!
//! A record is a header (`type`, `misc`, `size`) and its body. A sample's
//! body is its PC (`PERF_SAMPLE_IP`), and for a stack
//! ([`Layout::stacks`]) the thread's user registers and a copy of its
//! stack from the stack pointer up, as `perf record --call-graph dwarf`
//! asks (`PERF_SAMPLE_REGS_USER`, `PERF_SAMPLE_STACK_USER`; the fields
//! in that order, as `perf_event_open(2)` lists them). When the buffer is full the kernel drops samples and writes a
//! `PERF_RECORD_LOST` record with their number once there is room; when
//! the thread takes more interrupts than `perf_event_max_sample_rate`
//! allows it throttles the clock for a while and says so with a
//! `PERF_RECORD_THROTTLE` record.

use std::sync::atomic::{fence, Ordering};

/// `PERF_RECORD_LOST`: `{ id: u64, lost: u64 }`.
const RECORD_LOST: u32 = 2;
/// `PERF_RECORD_THROTTLE`.
const RECORD_THROTTLE: u32 = 5;
/// `PERF_RECORD_SAMPLE`: `{ ip: u64 }`, then with the registers `{ abi:
/// u64, regs: [u64; n] }` (no `regs` where `abi` is 0, none), then with
/// the stack `{ size: u64, data: [u8; size], dyn_size: u64 }` (no `data`
/// or `dyn_size` where `size` is 0).
const RECORD_SAMPLE: u32 = 9;
/// Where `data_head` and `data_tail` lie in the control page.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;

/// What a ring's samples hold beside the PC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Whether each sample holds the kernel's walk of the thread's frame
    /// pointers (`PERF_SAMPLE_CALLCHAIN`).
    pub chain: bool,
    /// Words of user registers each sample holds (`PERF_SAMPLE_REGS_USER`
    /// with that many bits in its mask), or 0 for none.
    pub regs: usize,
    /// Whether each sample holds a copy of its stack
    /// (`PERF_SAMPLE_STACK_USER`).
    pub stacks: bool,
}

/// One sample read from a ring, its parts borrowed from the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingSample<'a> {
    /// The interrupted PC.
    pub pc: u64,
    /// The kernel's walk of the frame pointers, eight bytes a word
    /// ([`RingSample::chain`]); empty where none was asked.
    pub chain: &'a [u8],
    /// The thread's user registers, in the order of their mask's bits,
    /// eight bytes each ([`RingSample::reg`]); empty where none were
    /// asked or the kernel had none.
    pub regs: &'a [u8],
    /// The thread's stack from its stack pointer up, as far as the kernel
    /// could copy it; empty where none was asked.
    pub stack: &'a [u8],
}

/// What one [`Ring::drain`] read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drained {
    /// Samples read (their PCs went to the caller).
    pub samples: u64,
    /// Samples the kernel dropped because the buffer was full.
    pub lost: u64,
    /// Times the kernel throttled the clock.
    pub throttled: u64,
}

/// A clock descriptor's mapped buffer; unmapped on drop.
#[derive(Debug)]
pub struct Ring {
    base: *mut u8,
    /// Bytes mapped: the control page and the data.
    len: usize,
    /// Bytes of data, a power of two.
    size: usize,
    page: usize,
    layout: Layout,
    /// The body of the sample being read, copied out of the buffer.
    body: Vec<u8>,
}

impl Ring {
    /// Maps `data_pages` (a power of two) pages of `page` bytes of data
    /// and the control page of the perf event `fd`, whose samples are laid
    /// out as `layout` says.
    pub fn map(
        fd: i32,
        data_pages: usize,
        page: usize,
        layout: Layout,
    ) -> Result<Ring, std::io::Error> {
        debug_assert!(data_pages.is_power_of_two());
        let size = data_pages * page;
        let len = size + page;
        // SAFETY: a new shared mapping of the descriptor; writable, so
        // that the kernel reads the tail this side moves and does not
        // write over records not yet read.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Ring {
            base: base as *mut u8,
            len,
            size,
            page,
            layout,
            body: Vec::new(),
        })
    }

    /// Reads every record written since the last drain, in order: each
    /// sample to `each`, and the lost and throttled counts.
    pub fn drain(&mut self, mut each: impl FnMut(RingSample<'_>)) -> Drained {
        let mut got = Drained::default();
        // SAFETY: the control page is mapped for the life of `self`; the
        // kernel writes `data_head`, this side `data_tail`, each an
        // aligned u64, read and written volatile.
        let head_at = unsafe { self.base.add(DATA_HEAD) as *const u64 };
        let tail_at = unsafe { self.base.add(DATA_TAIL) as *mut u64 };
        let head = unsafe { head_at.read_volatile() };
        // The records up to `head` are written before it is.
        fence(Ordering::Acquire);
        let mut tail = unsafe { tail_at.read_volatile() };
        while tail + 8 <= head {
            let header = self.read(tail);
            let kind = header as u32;
            let size = header >> 48;
            if size < 8 || tail + size > head {
                // Not a record: the rest cannot be read in step.
                tail = head;
                break;
            }
            match kind {
                RECORD_SAMPLE if size >= 16 => {
                    got.samples += 1;
                    // Read where it lies, unless it wraps around the
                    // data's end: then from a copy in one piece.
                    match self.within(tail + 8, size - 8) {
                        Some(body) => each(self.layout.sample(body)),
                        None => {
                            let mut body = std::mem::take(&mut self.body);
                            body.clear();
                            self.copy(tail + 8, size - 8, &mut body);
                            each(self.layout.sample(&body));
                            self.body = body;
                        }
                    }
                }
                RECORD_LOST if size >= 24 => got.lost += self.read(tail + 16),
                RECORD_THROTTLE => got.throttled += 1,
                _ => {}
            }
            tail += size;
        }
        // The records read are done with before the kernel may reuse them.
        fence(Ordering::Release);
        // SAFETY: as above.
        unsafe { tail_at.write_volatile(tail) };
        got
    }

    /// Appends the `len` bytes at position `at` of the data to `out`, in
    /// one piece or two where they wrap around the data's end.
    fn copy(&self, at: u64, len: u64, out: &mut Vec<u8>) {
        let off = at as usize & (self.size - 1);
        let len = len as usize;
        let first = len.min(self.size - off);
        for (from, n) in [(off, first), (0, len - first)] {
            out.extend_from_slice(self.data(from, n));
        }
    }

    /// The `len` bytes at position `at` of the data, where they do not
    /// wrap around its end.
    fn within(&self, at: u64, len: u64) -> Option<&[u8]> {
        let off = at as usize & (self.size - 1);
        let len = len as usize;
        (off + len <= self.size).then(|| self.data(off, len))
    }

    /// The `n` bytes from offset `from` of the data pages, which lie
    /// within them.
    fn data(&self, from: usize, n: usize) -> &[u8] {
        debug_assert!(from + n <= self.size);
        // SAFETY: `n` bytes from `from` lie within the data pages mapped.
        // They are between the tail and the head: the kernel wrote them
        // before it moved the head (the fence after reading it), and
        // writes none there until the tail moves past them, which it
        // does after they are read (`drain` borrows `self` meanwhile).
        unsafe { std::slice::from_raw_parts(self.base.add(self.page + from), n) }
    }

    /// The u64 at position `at` of the data. Records are whole u64s
    /// (the kernel pads them to 8 bytes), so none is split by the end.
    fn read(&self, at: u64) -> u64 {
        let off = at as usize & (self.size - 1) & !7;
        // SAFETY: an aligned u64 within the data pages mapped.
        unsafe { (self.base.add(self.page + off) as *const u64).read_volatile() }
    }
}

impl Layout {
    /// The sample whose body (after its header) is `body`. A body shorter
    /// than its fields say keeps its PC alone.
    fn sample<'a>(&self, body: &'a [u8]) -> RingSample<'a> {
        let word = |at: usize| {
            let bytes = body.get(at..at + 8)?;
            Some(u64::from_le_bytes(bytes.try_into().ok()?))
        };
        let pc = word(0).unwrap_or(0);
        let alone = RingSample {
            pc,
            chain: &[],
            regs: &[],
            stack: &[],
        };
        let mut at = 8;
        let mut chain: &[u8] = &[];
        if self.chain {
            let Some(nr) = word(at) else { return alone };
            at += 8;
            let Some(all) = (nr.checked_mul(8))
                .and_then(|n| at.checked_add(usize::try_from(n).ok()?))
                .and_then(|end| body.get(at..end))
            else {
                return alone;
            };
            chain = all;
            at += all.len();
        }
        let mut regs: &[u8] = &[];
        if self.regs > 0 {
            let Some(abi) = word(at) else { return alone };
            at += 8;
            if abi != 0 {
                let Some(all) = body.get(at..at + 8 * self.regs) else {
                    return alone;
                };
                regs = all;
                at += 8 * self.regs;
            }
        }
        let mut stack: &[u8] = &[];
        if self.stacks {
            let Some(size) = word(at) else { return alone };
            at += 8;
            if size > 0 {
                let size = size as usize;
                let Some(copied) = at.checked_add(size).and_then(word) else {
                    return alone;
                };
                stack = &body[at..at + size.min(copied as usize)];
            }
        }
        RingSample {
            pc,
            chain,
            regs,
            stack,
        }
    }
}

/// The least value of the words that mark a part of a chain
/// (`PERF_CONTEXT_MAX`, -4095): `PERF_CONTEXT_USER` before the user's
/// frames, `PERF_CONTEXT_KERNEL` before the kernel's.
const CONTEXT_MARK: u64 = -4095i64 as u64;
/// `PERF_CONTEXT_USER`.
const CONTEXT_USER: u64 = -512i64 as u64;

impl RingSample<'_> {
    /// The user's part of the sample's chain: the PC, then each frame's
    /// return address, innermost first, as the kernel walked them; the
    /// kernel's part and the marks left out.
    pub fn chain(&self) -> impl Iterator<Item = u64> + '_ {
        let mut user = false;
        self.chain
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("chunks of 8")))
            .filter(move |&w| match w >= CONTEXT_MARK {
                true => {
                    user = w == CONTEXT_USER;
                    false
                }
                false => user,
            })
    }

    /// The `i`th register of the sample's mask, if it has them.
    pub fn reg(&self, i: usize) -> Option<u64> {
        let bytes = self.regs.get(8 * i..8 * i + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping this value owns.
            unsafe { libc::munmap(self.base as *mut _, self.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the kernel writes: a sample's PC, a count of samples lost,
    /// or a throttle.
    #[derive(Clone, Debug)]
    enum Record {
        Sample(u64),
        Lost(u64),
        Throttle,
        /// A record of a type not asked for (`PERF_RECORD_MMAP`'s, 7),
        /// with this many u64s of body: passed over.
        Other(usize),
    }

    /// The kernel's side of a ring over memory of the test's own: writes
    /// records at `head`, wrapping at the data's end, and publishes it.
    struct Writer {
        mem: Vec<u64>,
        page: usize,
        size: usize,
        head: u64,
    }

    impl Writer {
        fn new(page: usize, data_pages: usize) -> Writer {
            let size = page * data_pages;
            Writer {
                mem: vec![0; (page + size) / 8],
                page,
                size,
                head: 0,
            }
        }

        fn ring(&mut self, layout: Layout) -> Ring {
            Ring {
                base: self.mem.as_mut_ptr() as *mut u8,
                len: 0,
                size: self.size,
                page: self.page,
                layout,
                body: Vec::new(),
            }
        }

        fn put(&mut self, word: u64) {
            let at = (self.page + (self.head as usize & (self.size - 1))) / 8;
            self.mem[at] = word;
            self.head += 8;
        }

        fn write(&mut self, r: &Record) {
            let (kind, body): (u32, Vec<u64>) = match *r {
                Record::Sample(pc) => (RECORD_SAMPLE, vec![pc]),
                Record::Lost(n) => (RECORD_LOST, vec![42, n]),
                Record::Throttle => (RECORD_THROTTLE, vec![1, 2, 3]),
                Record::Other(n) => (7, vec![9; n]),
            };
            let size = 8 * (1 + body.len() as u64);
            self.put(kind as u64 | (size << 48));
            for w in body {
                self.put(w);
            }
        }

        fn publish(&mut self) {
            self.mem[DATA_HEAD / 8] = self.head;
        }

        fn tail(&self) -> u64 {
            self.mem[DATA_TAIL / 8]
        }
    }

    fn record() -> impl Strategy<Value = Record> {
        prop_oneof![
            6 => any::<u64>().prop_map(Record::Sample),
            1 => (1u64..1000).prop_map(Record::Lost),
            1 => Just(Record::Throttle),
            1 => (0usize..6).prop_map(Record::Other),
        ]
    }

    proptest! {
        /// Every sample is read once, in order, with the lost and
        /// throttled counts, however the records fall across the end of
        /// the buffer and however many drains they are read in; and the
        /// tail the reader leaves is the head it was given.
        #[test]
        fn drains_read_every_record_in_order_across_the_buffers_end(
            batches in proptest::collection::vec(proptest::collection::vec(record(), 0..40), 1..30),
        ) {
            // Pages of 2 KiB (room for the control page's fields at 1024
            // and 1032), one of data: 256 words, so batches wrap often.
            let mut w = Writer::new(2048, 1);
            let mut ring = w.ring(Layout::default());
            for batch in &batches {
                // No more than the buffer holds between two drains, as
                // the kernel keeps to (it drops what would not fit).
                let words: usize = batch.iter().map(|r| match r {
                    Record::Sample(_) => 2,
                    Record::Lost(_) => 3,
                    Record::Throttle => 4,
                    Record::Other(n) => n + 1,
                }).sum();
                prop_assume!(words * 8 <= w.size);
                for r in batch {
                    w.write(r);
                }
                w.publish();
                let mut pcs = Vec::new();
                let got = ring.drain(|s| pcs.push(s.pc));
                let want: Vec<u64> = batch.iter().filter_map(|r| match r {
                    Record::Sample(pc) => Some(*pc),
                    _ => None,
                }).collect();
                prop_assert_eq!(&pcs, &want);
                prop_assert_eq!(got.samples, want.len() as u64);
                let lost: u64 = batch.iter().map(|r| match r { Record::Lost(n) => *n, _ => 0 }).sum();
                prop_assert_eq!(got.lost, lost);
                let throttled = batch.iter().filter(|r| matches!(r, Record::Throttle)).count();
                prop_assert_eq!(got.throttled, throttled as u64);
                prop_assert_eq!(w.tail(), w.head);
            }
        }
    }

    /// A sample as the kernel writes it with registers and a stack: its
    /// PC, its registers (none where the kernel had none, abi 0), and
    /// the stack's bytes copied of those asked for.
    #[derive(Clone, Debug)]
    struct Full {
        pc: u64,
        regs: Option<Vec<u64>>,
        stack: Vec<u8>,
        copied: usize,
    }

    const REGS: usize = 3;

    impl Writer {
        fn write_full(&mut self, s: &Full) {
            let mut body = vec![s.pc];
            match &s.regs {
                Some(regs) => {
                    body.push(2);
                    body.extend(regs);
                }
                None => body.push(0),
            }
            body.push(s.stack.len() as u64);
            if !s.stack.is_empty() {
                body.extend(s.stack.chunks(8).map(|c| {
                    let mut w = [0u8; 8];
                    w[..c.len()].copy_from_slice(c);
                    u64::from_le_bytes(w)
                }));
                body.push(s.copied as u64);
            }
            let size = 8 * (1 + body.len() as u64);
            self.put(RECORD_SAMPLE as u64 | (size << 48));
            for w in body {
                self.put(w);
            }
        }
    }

    fn full() -> impl Strategy<Value = Full> {
        (
            any::<u64>(),
            proptest::option::of(proptest::collection::vec(any::<u64>(), REGS)),
            (0usize..40).prop_flat_map(|words| proptest::collection::vec(any::<u8>(), 8 * words)),
            any::<prop::sample::Index>(),
        )
            .prop_map(|(pc, regs, stack, copied)| {
                let copied = copied.index(stack.len() + 1);
                Full {
                    pc,
                    regs,
                    stack,
                    copied,
                }
            })
    }

    proptest! {
        /// A sample's registers and stack are read as the kernel wrote
        /// them, however they fall across the end of the buffer: the
        /// stack as far as it was copied, no registers where the kernel
        /// had none.
        #[test]
        fn samples_keep_their_registers_and_stack_across_the_buffers_end(
            batches in proptest::collection::vec(proptest::collection::vec(full(), 0..4), 1..20),
        ) {
            let mut w = Writer::new(2048, 1);
            let mut ring = w.ring(Layout { chain: false, regs: REGS, stacks: true });
            for batch in &batches {
                let words: usize = batch.iter().map(|s| 5 + REGS + s.stack.len() / 8).sum();
                prop_assume!(words * 8 <= w.size);
                for s in batch {
                    w.write_full(s);
                }
                w.publish();
                let mut read = Vec::new();
                let got = ring.drain(|s| {
                    let regs: Vec<u64> = (0..REGS).map_while(|i| s.reg(i)).collect();
                    read.push((s.pc, regs, s.stack.to_vec()));
                });
                prop_assert_eq!(got.samples, batch.len() as u64);
                let want: Vec<(u64, Vec<u64>, Vec<u8>)> = batch.iter().map(|s| (
                    s.pc,
                    s.regs.clone().unwrap_or_default(),
                    s.stack[..s.copied].to_vec(),
                )).collect();
                prop_assert_eq!(read, want);
                prop_assert_eq!(w.tail(), w.head);
            }
        }
    }

    /// A sample as the kernel writes it with its frame pointers' walk:
    /// the PC, then the chain, its kernel's part (if any) and its user's,
    /// each after its mark.
    #[derive(Clone, Debug)]
    struct Chained {
        pc: u64,
        kernel: Option<Vec<u64>>,
        user: Vec<u64>,
    }

    /// `PERF_CONTEXT_KERNEL`.
    const CONTEXT_KERNEL: u64 = -128i64 as u64;

    impl Chained {
        fn chain(&self) -> Vec<u64> {
            let mut chain = Vec::new();
            if let Some(kernel) = &self.kernel {
                chain.push(CONTEXT_KERNEL);
                chain.extend(kernel);
            }
            chain.push(CONTEXT_USER);
            chain.extend(&self.user);
            chain
        }
    }

    fn chained() -> impl Strategy<Value = Chained> {
        // Addresses below the marks, as every address a chain holds is.
        let address = 0..CONTEXT_MARK;
        (
            address.clone(),
            proptest::option::of(proptest::collection::vec(address.clone(), 0..4)),
            proptest::collection::vec(address, 0..20),
        )
            .prop_map(|(pc, kernel, user)| Chained { pc, kernel, user })
    }

    proptest! {
        /// A sample's chain is read as the kernel wrote it, however it
        /// falls across the end of the buffer: the user's part alone.
        #[test]
        fn samples_keep_their_chains_across_the_buffers_end(
            batches in proptest::collection::vec(proptest::collection::vec(chained(), 0..6), 1..20),
        ) {
            let mut w = Writer::new(2048, 1);
            let mut ring = w.ring(Layout { chain: true, regs: 0, stacks: false });
            for batch in &batches {
                let words: usize = batch.iter().map(|s| 3 + s.chain().len()).sum();
                prop_assume!(words * 8 <= w.size);
                for s in batch {
                    let chain = s.chain();
                    let size = 8 * (3 + chain.len() as u64);
                    w.put(RECORD_SAMPLE as u64 | (size << 48));
                    w.put(s.pc);
                    w.put(chain.len() as u64);
                    for word in chain {
                        w.put(word);
                    }
                }
                w.publish();
                let mut read = Vec::new();
                ring.drain(|s| read.push((s.pc, s.chain().collect::<Vec<u64>>())));
                let want: Vec<(u64, Vec<u64>)> = batch.iter().map(|s| (s.pc, s.user.clone())).collect();
                prop_assert_eq!(read, want);
                prop_assert_eq!(w.tail(), w.head);
            }
        }
    }

    /// A chain longer than its record keeps the sample's PC, without it.
    #[test]
    fn a_chain_past_its_records_end_is_left_out() {
        let layout = Layout {
            chain: true,
            ..Layout::default()
        };
        for nr in [2, u64::MAX / 4, u64::MAX] {
            let mut body = 7u64.to_le_bytes().to_vec();
            body.extend(nr.to_le_bytes());
            body.extend(CONTEXT_USER.to_le_bytes());
            let s = layout.sample(&body);
            assert_eq!((s.pc, s.chain().count()), (7, 0), "nr {nr}");
        }
    }

    /// A sample cut short of the fields its layout says keeps its PC.
    #[test]
    fn a_sample_shorter_than_its_fields_keeps_its_pc() {
        let layout = Layout {
            chain: false,
            regs: REGS,
            stacks: true,
        };
        let mut body = 7u64.to_le_bytes().to_vec();
        body.extend(2u64.to_le_bytes());
        body.extend(1u64.to_le_bytes());
        let s = layout.sample(&body);
        assert_eq!((s.pc, s.regs, s.stack), (7, &[][..], &[][..]));
        // A stack's size past the record's end.
        let mut body = 7u64.to_le_bytes().to_vec();
        body.extend(0u64.to_le_bytes());
        body.extend(u64::MAX.to_le_bytes());
        let s = layout.sample(&body);
        assert_eq!((s.pc, s.stack), (7, &[][..]));
    }
}

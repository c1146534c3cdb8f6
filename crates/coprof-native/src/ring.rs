//! The kernel's ring buffer of a clock's samples
//! ([`Config::ring_buffer`](crate::Config::ring_buffer)): the clock's
//! descriptor mapped with `mmap`, one page of control (`struct
//! perf_event_mmap_page`) and a power of two of data pages that the
//! kernel writes a record into at each overflow, as it does for
//! `perf record`. The thread is not stopped: the sampler reads the
//! records later ([`Ring::drain`]) and moves the tail on, so the kernel
//! may write over what has been read.
//!
//! A record is a header (`type`, `misc`, `size`) and its body. The clock
//! asks for the PC alone (`PERF_SAMPLE_IP`), so a sample's body is one
//! `u64`. When the buffer is full the kernel drops samples and writes a
//! `PERF_RECORD_LOST` record with their number once there is room; when
//! the thread takes more interrupts than `perf_event_max_sample_rate`
//! allows it throttles the clock for a while and says so with a
//! `PERF_RECORD_THROTTLE` record.

use std::sync::atomic::{fence, Ordering};

/// `PERF_RECORD_LOST`: `{ id: u64, lost: u64 }`.
const RECORD_LOST: u32 = 2;
/// `PERF_RECORD_THROTTLE`.
const RECORD_THROTTLE: u32 = 5;
/// `PERF_RECORD_SAMPLE`: with `PERF_SAMPLE_IP` only, `{ ip: u64 }`.
const RECORD_SAMPLE: u32 = 9;
/// Where `data_head` and `data_tail` lie in the control page.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;

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
}

impl Ring {
    /// Maps `data_pages` (a power of two) pages of `page` bytes of data
    /// and the control page of the perf event `fd`.
    pub fn map(fd: i32, data_pages: usize, page: usize) -> Result<Ring, std::io::Error> {
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
        })
    }

    /// Reads every record written since the last drain, in order: each
    /// sample's PC to `pc`, and the lost and throttled counts.
    pub fn drain(&mut self, mut pc: impl FnMut(u64)) -> Drained {
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
                    pc(self.read(tail + 8));
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

    /// The u64 at position `at` of the data. Records are whole u64s
    /// (the kernel pads them to 8 bytes), so none is split by the end.
    fn read(&self, at: u64) -> u64 {
        let off = at as usize & (self.size - 1) & !7;
        // SAFETY: an aligned u64 within the data pages mapped.
        unsafe { (self.base.add(self.page + off) as *const u64).read_volatile() }
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

        fn ring(&mut self) -> Ring {
            Ring {
                base: self.mem.as_mut_ptr() as *mut u8,
                len: 0,
                size: self.size,
                page: self.page,
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
            let mut ring = w.ring();
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
                let got = ring.drain(|pc| pcs.push(pc));
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
}

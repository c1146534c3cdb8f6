//! The clock that interrupts a thread: a `perf_event_open` CPU-clock
//! event on one thread of the traced process, which sends that thread a
//! signal each time it has run for a period.
//!
//! The event is armed for one overflow at a time (`PERF_EVENT_IOC_REFRESH`
//! of 1): at the overflow the kernel disables it and sends the thread
//! [`SAMPLE_SIGNAL`] (the fasync signal of the event's descriptor, owned
//! by that thread), which stops it under ptrace where it was interrupted.
//! The tracer takes the sample, sets the next period and arms it again.
//! The CPU clock is a high-resolution timer on the thread's own CPU time,
//! so periods of tens of microseconds work, where `ITIMER_PROF` moves with
//! the kernel's tick (4 ms at 250 Hz).
//!
//! With [`Config::ring_buffer`](crate::Config::ring_buffer) the clock
//! instead runs on at every overflow and the kernel writes the PC into a
//! ring buffer mapped beside it ([`Ring`]), without stopping the thread.
//! A second clock on the thread, of a period as long as an eighth of the
//! buffer's samples, stops it as the first kind does: the sampler then
//! reads the buffer, one stop for 256 samples. A sample that copies the
//! thread's stack too, for its stack to be unwound, is some 8 KiB rather
//! than 16 bytes: its buffer is larger (1 MiB, 120 samples), read every
//! 15. One that holds the kernel's walk of the frame pointers instead,
//! with the registers and the top 512 bytes of the stack, is about 1 KiB:
//! its buffer is 512 KiB, read every 68 samples.

use crate::ring::{Drained, Layout, Ring, RingSample};
use crate::NativeError;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The signal a sample stops a thread with: SIGSTOP, which no signal
/// mask blocks. A thread that blocks every signal still stops for its
/// sample: glibc's `pthread_create` starts each thread so, for a moment,
/// and many programs keep their worker threads so, that only the main
/// thread take the process's signals (`xz -T`, GLib's and libuv's thread
/// pools). With SIGPROF, DCPI's and `setitimer`'s, such threads were
/// never sampled. ptrace stops the thread at the signal's delivery; the
/// tracer knows it for the clock's by its `si_code` (the program's own
/// SIGSTOP is delivered) and drops it, so the program never takes it.
///
/// The price: the kernel drops a SIGCONT pending for the process when it
/// sends a stop signal, so a SIGCONT sent in the moment before a sample,
/// whose handler had not run yet, is lost to the program.
pub const SAMPLE_SIGNAL: i32 = libc::SIGSTOP;

/// `struct perf_event_attr` as of its fourth version (96 bytes,
/// `PERF_ATTR_SIZE_VER3`, Linux 3.7), which holds every field used here:
/// the last, the user registers and stack a sample copies.
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
}

const PERF_TYPE_SOFTWARE: u32 = 1;
/// `PERF_SAMPLE_IP`: a ring buffer's sample holds the PC.
const PERF_SAMPLE_IP: u64 = 1 << 0;
/// `PERF_SAMPLE_CALLCHAIN`: with a chain, it holds the kernel's walk of
/// the frame pointers, after the PC.
const PERF_SAMPLE_CALLCHAIN: u64 = 1 << 5;
/// `PERF_SAMPLE_REGS_USER` and `PERF_SAMPLE_STACK_USER`: with a stack, it
/// holds the user registers too and a copy of the stack.
const PERF_SAMPLE_REGS_USER: u64 = 1 << 12;
const PERF_SAMPLE_STACK_USER: u64 = 1 << 13;
/// The registers a sample with a stack copies, as bits of `enum
/// perf_event_x86_regs`: rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp, rip
/// (bits 0 to 8) and r8 to r15 (16 to 23); the segment registers
/// between are refused on x86-64. The unwinder reads them
/// ([`user_regs`]).
const USER_REGS: u64 = 0x00ff_01ff;
/// Bytes of a ring buffer's sample record: its header and the PC.
const SAMPLE_BYTES: usize = 16;
/// Bytes of a sample with a stack besides the stack's copy: the header,
/// the PC, the registers' ABI and the registers, the copy's size and the
/// size copied.
const STACK_SAMPLE_BYTES: usize = 8 + 8 + 8 + 8 * USER_REGS.count_ones() as usize + 8 + 8;
/// Bytes of the stack a sample copies by default, from the stack pointer
/// up: `perf record --call-graph dwarf`'s default. Frames beyond are not
/// unwound.
pub const STACK_COPY: u32 = 8192;
/// The largest copy of a stack the kernel makes: a record's size is 16
/// bits, and the copy's a multiple of 8 below it (perf's limit too).
pub const MAX_STACK_COPY: u32 = 65528;
/// Whether the kernel copies `bytes` of a stack: a multiple of 8 from 8
/// to [`MAX_STACK_COPY`].
pub fn copies_stack_of(bytes: u32) -> bool {
    bytes > 0 && bytes.is_multiple_of(8) && bytes <= MAX_STACK_COPY
}
/// Samples with stacks a ring buffer holds at least.
const STACK_SAMPLES: usize = 120;
/// Data pages of a ring buffer whose samples hold chains: 512 KiB,
/// which with its control page is the locked memory an unprivileged
/// user has for each CPU by default (`perf_event_mlock_kb`, 516).
const CHAIN_PAGES: usize = 128;
/// Bytes of the stack a sample with a chain copies too, from the stack
/// pointer up, for the frames below the innermost frame pointer: those of
/// a function sampled before it has set its frame pointer up, or that
/// keeps none, such as most leaves GCC builds (`ring_stacks.rs`).
pub const CHAIN_STACK_COPY: u32 = 512;
/// Bytes of a sample with a chain of 32 frames: the registers, the copy
/// and the rest of a sample with a stack, and the chain's length, its
/// mark and its words; a deep stack's, by which the buffer's reading is
/// timed. A chain holds 127 at most (`kernel.perf_event_max_stack`),
/// 768 bytes more: a buffer read an eighth full of samples this size is
/// then under half full at worst.
const CHAIN_SAMPLE_BYTES: usize = STACK_SAMPLE_BYTES + CHAIN_STACK_COPY as usize + 8 + 8 + 8 * 32;

/// What a ring buffer's samples hold beside the PC, for their stacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingStacks {
    /// Nothing: PCs alone.
    None,
    /// The thread's user registers and a copy of this many bytes of its
    /// stack, from the stack pointer up, to be unwound from the CFI
    /// (`perf record --call-graph dwarf`).
    Copy(u32),
    /// The kernel's walk of the thread's frame pointers, the return
    /// address at each (`perf record --call-graph fp`), and the thread's
    /// user registers and the top [`CHAIN_STACK_COPY`] bytes of its stack.
    Chain,
}
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
/// `disabled`: armed later by the refresh.
const FLAG_DISABLED: u64 = 1 << 0;
/// `exclude_kernel`, which an unprivileged tracer needs
/// (`perf_event_paranoid` 2).
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
/// `exclude_callchain_kernel`: a chain holds the user's frames alone.
const FLAG_EXCLUDE_CALLCHAIN_KERNEL: u64 = 1 << 21;
// _IO('$', 2) and _IOW('$', 4, u64).
const PERF_EVENT_IOC_REFRESH: libc::c_ulong = 0x2402;
const PERF_EVENT_IOC_PERIOD: libc::c_ulong = 0x4008_2404;
const F_SETSIG: i32 = 10;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
const F_SETOWN_EX: i32 = 15;
const F_OWNER_TID: i32 = 0;

/// One thread's sampling clock; closed on drop.
#[derive(Debug)]
pub struct Clock {
    fd: OwnedFd,
    /// Its ring buffer, for a clock that does not stop the thread.
    ring: Option<Ring>,
    /// With a ring buffer: a second clock on the thread that stops it,
    /// by the signal a stopping clock sends, each time it has run long
    /// enough to fill an eighth of the buffer, so that the sampler reads
    /// it then, with room for seven times as many more before any is
    /// lost. Never armed for one overflow: it runs on.
    _reader: Option<OwnedFd>,
}

impl Clock {
    /// A clock on thread `tid` that signals it once it has run for
    /// `period_ns` of CPU time, not yet armed ([`Clock::arm`]).
    pub fn open(tid: i32, period_ns: u64) -> Result<Clock, NativeError> {
        let fd = event(tid, period_ns, FLAG_DISABLED, 0, 0)?;
        signal_to(&fd, tid)?;
        Ok(Clock {
            fd,
            ring: None,
            _reader: None,
        })
    }

    /// A clock on thread `tid` that writes its PC into a ring buffer of
    /// `data_pages` pages (a power of two) every `period_ns` of its CPU
    /// time, running from now on, and signals the thread as [`open`]'s
    /// does each time it has run for an eighth of the buffer's samples.
    /// Where
    /// locked memory is short (`EPERM`, `ENOMEM`), a buffer of half the
    /// pages is tried, down to one page. With `stacks` a
    /// [`RingStacks::Copy`], each sample holds the thread's user registers
    /// too and a copy of that many bytes of its stack, for the sampler to
    /// unwind: the buffer is then as large as [`STACK_SAMPLES`] of them
    /// need at least, and the copy smaller where a buffer halved would
    /// hold fewer than two. With a [`RingStacks::Chain`], each holds the
    /// kernel's walk of its frame pointers, in a buffer of
    /// [`CHAIN_PAGES`] at least.
    ///
    /// [`open`]: Clock::open
    pub fn open_ring(
        tid: i32,
        period_ns: u64,
        data_pages: usize,
        stacks: RingStacks,
    ) -> Result<Clock, NativeError> {
        // SAFETY: plain call.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let mut pages = match stacks {
            RingStacks::None => data_pages,
            RingStacks::Copy(copy) => data_pages.max(
                (STACK_SAMPLES * (STACK_SAMPLE_BYTES + copy as usize))
                    .div_ceil(page)
                    .next_power_of_two(),
            ),
            RingStacks::Chain => data_pages.max(CHAIN_PAGES),
        };
        let kib = (pages + 1) * page / 1024;
        let (fd, ring, sample_bytes) = loop {
            let (sample_type, flags, copy, layout, sample_bytes) = match stacks {
                RingStacks::None => (PERF_SAMPLE_IP, 0, 0, Layout::default(), SAMPLE_BYTES),
                RingStacks::Copy(copy) => {
                    let copy = copy.min(room_for_two(pages * page));
                    let layout = Layout {
                        chain: false,
                        regs: USER_REGS.count_ones() as usize,
                        stacks: true,
                    };
                    let sample_type =
                        PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
                    (
                        sample_type,
                        0,
                        copy,
                        layout,
                        STACK_SAMPLE_BYTES + copy as usize,
                    )
                }
                RingStacks::Chain => (
                    PERF_SAMPLE_IP
                        | PERF_SAMPLE_CALLCHAIN
                        | PERF_SAMPLE_REGS_USER
                        | PERF_SAMPLE_STACK_USER,
                    FLAG_EXCLUDE_CALLCHAIN_KERNEL,
                    CHAIN_STACK_COPY,
                    Layout {
                        chain: true,
                        regs: USER_REGS.count_ones() as usize,
                        stacks: true,
                    },
                    CHAIN_SAMPLE_BYTES,
                ),
            };
            let fd = event(tid, period_ns, flags, sample_type, copy)?;
            match Ring::map(fd.as_raw_fd(), pages, page, layout) {
                Ok(ring) => break (fd, ring, sample_bytes),
                Err(e)
                    if pages > 1
                        && matches!(e.raw_os_error(), Some(libc::EPERM | libc::ENOMEM)) =>
                {
                    pages /= 2;
                }
                Err(source) => return Err(NativeError::RingBuffer { tid, kib, source }),
            }
        };
        // Read an eighth full: a reader's overflow in the kernel (a system
        // call) is skipped, as a sample's is, and the next comes a period
        // later, so a buffer must hold the samples of several periods.
        let every = (pages * page / 8 / sample_bytes).max(1) as u64;
        let reader = event(tid, period_ns.max(1).saturating_mul(every), 0, 0, 0)?;
        signal_to(&reader, tid)?;
        Ok(Clock {
            fd,
            ring: Some(ring),
            _reader: Some(reader),
        })
    }

    /// Whether the clock writes into a ring buffer.
    pub fn has_ring(&self) -> bool {
        self.ring.is_some()
    }

    /// Arms the clock for one more overflow, `period_ns` of the thread's
    /// CPU time from now.
    pub fn arm(&self, period_ns: u64) -> Result<(), std::io::Error> {
        self.set_period(period_ns)?;
        // SAFETY: an ioctl perf events take, on a descriptor this value
        // owns, with an integer argument.
        match unsafe { libc::ioctl(self.fd.as_raw_fd(), PERF_EVENT_IOC_REFRESH, 1) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }

    /// Sets the period from the next overflow on: for a clock that runs
    /// on ([`Clock::open_ring`]), and before [`Clock::arm`]'s refresh.
    pub fn set_period(&self, period_ns: u64) -> Result<(), std::io::Error> {
        let period = period_ns.max(1);
        // SAFETY: an ioctl perf events take, on a descriptor this value
        // owns; the period is read from a local.
        match unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                PERF_EVENT_IOC_PERIOD,
                &period as *const u64,
            )
        } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }

    /// The CPU time, in nanoseconds, the thread has run while the clock
    /// counted: since it was opened, in the program's user code and in
    /// the kernel for it (the interrupts that take its samples too), but
    /// for the moments a clock that stops the thread is not armed, when
    /// the thread is on its way to a stop. Each sample stands for a
    /// period of it. 0 if it cannot be read.
    pub fn cpu_ns(&self) -> u64 {
        let mut count = 0u64;
        // SAFETY: reads 8 bytes into a local, from a descriptor this
        // value owns; a perf event without a read format gives its
        // count alone.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&mut count as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        if n == std::mem::size_of::<u64>() as isize {
            count
        } else {
            0
        }
    }

    /// Reads the samples in the clock's ring buffer, each to `each`;
    /// nothing for a clock that stops its thread.
    pub fn drain(&mut self, each: impl FnMut(RingSample<'_>)) -> Drained {
        match &mut self.ring {
            Some(ring) => ring.drain(each),
            None => Drained::default(),
        }
    }
}

/// The most bytes of stack a sample may copy for a ring buffer of
/// `data_bytes` to hold two samples.
fn room_for_two(data_bytes: usize) -> u32 {
    let room = (data_bytes / 2).saturating_sub(STACK_SAMPLE_BYTES) & !7;
    room.min(MAX_STACK_COPY as usize) as u32
}

/// The registers of a sample with a stack ([`Clock::open_ring`]), as
/// ptrace gives a stopped thread's: the general ones and the PC, the
/// rest 0. `None` for a sample without them (the kernel had no user
/// registers).
pub fn user_regs(sample: &RingSample<'_>) -> Option<libc::user_regs_struct> {
    // SAFETY: a plain struct of integers.
    let mut r: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    let order = [
        &mut r.rax, &mut r.rbx, &mut r.rcx, &mut r.rdx, &mut r.rsi, &mut r.rdi, &mut r.rbp,
        &mut r.rsp, &mut r.rip, &mut r.r8, &mut r.r9, &mut r.r10, &mut r.r11, &mut r.r12,
        &mut r.r13, &mut r.r14, &mut r.r15,
    ];
    for (i, reg) in order.into_iter().enumerate() {
        *reg = sample.reg(i)?;
    }
    Some(r)
}

/// A CPU-clock event on thread `tid` of period `period_ns`, with `flags`
/// beside the exclusions, sampling `sample_type` into a ring buffer if
/// one is mapped (`PERF_SAMPLE_IP` and more), or none (0) for one that
/// signals; a sample copies `stack_copy` bytes of the stack where it
/// asks for it.
fn event(
    tid: i32,
    period_ns: u64,
    flags: u64,
    sample_type: u64,
    stack_copy: u32,
) -> Result<OwnedFd, NativeError> {
    let attr = Attr {
        kind: PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<Attr>() as u32,
        config: PERF_COUNT_SW_CPU_CLOCK,
        sample_period: period_ns.max(1),
        sample_type,
        flags: flags | FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV,
        // A ring buffer's reader is woken at none of its samples (the
        // kernel's default: when half full, and nobody polls it): a
        // wake-up at each would cost an interrupt of its own.
        wakeup_events: u32::from(sample_type == 0),
        sample_regs_user: match sample_type & PERF_SAMPLE_REGS_USER {
            0 => 0,
            _ => USER_REGS,
        },
        sample_stack_user: stack_copy,
        ..Attr::default()
    };
    // SAFETY: a valid attribute block the call only reads.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            tid,
            -1,
            -1,
            PERF_FLAG_FD_CLOEXEC,
        )
    } as i32;
    if fd < 0 {
        return Err(NativeError::Clock {
            tid,
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: a descriptor just opened, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Has the event `fd` send thread `tid` [`SAMPLE_SIGNAL`] at each
/// overflow (its fasync signal, owned by that thread).
fn signal_to(fd: &OwnedFd, tid: i32) -> Result<(), NativeError> {
    #[repr(C)]
    struct Owner {
        kind: i32,
        pid: i32,
    }
    let owner = Owner {
        kind: F_OWNER_TID,
        pid: tid,
    };
    let fd = fd.as_raw_fd();
    // SAFETY: plain calls on a descriptor of a perf event.
    let ok = unsafe {
        libc::fcntl(fd, F_SETOWN_EX, &owner as *const Owner) == 0
            && libc::fcntl(fd, F_SETSIG, SAMPLE_SIGNAL) == 0
            && libc::fcntl(fd, libc::F_SETFL, libc::O_ASYNC) == 0
    };
    match ok {
        true => Ok(()),
        false => Err(NativeError::Clock {
            tid,
            source: std::io::Error::last_os_error(),
        }),
    }
}

//! Signals: the process's dispositions, mask, pending set and alternate
//! stack, and the running of the handlers it installs, as Linux does on
//! RISC-V (kernel/signal.c; arch/riscv/kernel/signal.c: `setup_rt_frame`,
//! `sys_rt_sigreturn`; the layouts of arch/riscv/include/uapi/asm/
//! ucontext.h and sigcontext.h).
//!
//! A handler runs on a frame built 16-byte aligned below the interrupted
//! stack pointer, or at the top of the alternate stack for `SA_ONSTACK`:
//!
//! | offset | size | what |
//! |---:|---:|---|
//! | 0 | 128 | `siginfo_t`: signal, errno, code, then the sender's pid and uid or the fault address |
//! | 128 | 8 + 8 | `uc_flags`, `uc_link` (0) |
//! | 144 | 24 | `uc_stack`: the alternate stack as it was |
//! | 168 | 8 (+ 120) | `uc_sigmask`: the mask to restore |
//! | 304 | 256 | `uc_mcontext.sc_regs`: pc, then x1 to x31 |
//! | 560 | 256 + 4 | `sc_fpregs`: f0 to f31, fcsr (then zeros to the end of the Q extension's room: no vector state) |
//!
//! 1088 bytes in all. The handler starts with a0 = the signal, a1 =
//! &siginfo, a2 = &ucontext, sp = the frame and ra = a two-instruction
//! trampoline, `li a7, 139; ecall` (`rt_sigreturn`), on a page of its own
//! above the stack, where Linux puts the vDSO's. `rt_sigreturn` restores
//! every register, the mask and the alternate stack from the frame.

use crate::cpu::Cpu;
use crate::mem::{perm, Fault, Memory, PAGE};
use crate::pids::Pids;
use crate::process::STACK_TOP;

/// Where the `rt_sigreturn` trampoline lives: the page above the stack.
pub const TRAMPOLINE: u64 = STACK_TOP;
/// `li a7, 139` (`addi a7, x0, 139`), `ecall`.
const TRAMPOLINE_CODE: [u32; 2] = [0x08b0_0893, 0x0000_0073];

/// Bytes of a frame (`struct rt_sigframe` without vector state).
pub const FRAME_BYTES: u64 = 1088;
const UCONTEXT: u64 = 128;
const UC_STACK: u64 = UCONTEXT + 16;
const UC_SIGMASK: u64 = UCONTEXT + 40;
const MCONTEXT: u64 = UCONTEXT + 176;
const FPREGS: u64 = MCONTEXT + 256;
const FCSR: u64 = FPREGS + 256;

/// `sa_flags` bits (include/uapi/asm-generic/signal.h).
const SA_ONSTACK: u64 = 0x0800_0000;
const SA_RESTART: u64 = 0x1000_0000;
const SA_NODEFER: u64 = 0x4000_0000;
const SA_RESETHAND: u64 = 0x8000_0000;
/// sigaltstack's flags (include/uapi/linux/signal.h).
pub(crate) const SS_ONSTACK: u64 = 1;
pub(crate) const SS_DISABLE: u64 = 2;
pub(crate) const SS_AUTODISARM: u64 = 1 << 31;
/// RISC-V's smallest alternate stack (arch/riscv/include/uapi/asm/sigcontext.h).
pub(crate) const MINSIGSTKSZ: u64 = 2048;
/// SIGKILL and SIGSTOP: never caught, blocked or ignored.
const UNBLOCKABLE: u64 = (1 << 8) | (1 << 18);

/// `si_code` values (include/uapi/asm-generic/siginfo.h).
pub mod code {
    /// Sent by `kill`.
    pub const SI_USER: i32 = 0;
    /// Sent by `sigqueue` (`rt_sigqueueinfo`).
    pub const SI_QUEUE: i32 = -1;
    /// A POSIX timer's signal.
    pub const SI_TIMER: i32 = -2;
    /// Sent by `tkill` or `tgkill` (`raise`).
    pub const SI_TKILL: i32 = -6;
    /// Sent by the kernel: an interval timer's signal.
    pub const SI_KERNEL: i32 = 0x80;
    /// SIGSEGV: no mapping at the address.
    pub const SEGV_MAPERR: i32 = 1;
    /// SIGSEGV: a mapping without the permission.
    pub const SEGV_ACCERR: i32 = 2;
    /// SIGILL: illegal opcode.
    pub const ILL_ILLOPC: i32 = 1;
    /// SIGTRAP: breakpoint.
    pub const TRAP_BRKPT: i32 = 1;
    /// SIGBUS: misaligned address.
    pub const BUS_ADRALN: i32 = 1;
}

/// What a handler is told about its signal: `siginfo_t`'s first fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SigInfo {
    /// The signal.
    pub signo: i32,
    /// Why it was sent ([`code`]).
    pub code: i32,
    /// The union's first word: the sender's pid and uid (low and high
    /// halves) for a sent signal, the address for a fault, the timer's id
    /// and overrun for a POSIX timer's signal.
    pub word: u64,
    /// The union's second word: `si_value` of a POSIX timer's signal.
    pub value: u64,
}

impl SigInfo {
    /// A signal the process sent itself with `code` (SI_USER, SI_TKILL),
    /// from its pid as `pids` has it seen.
    pub fn sent(signo: i32, code: i32, pids: &Pids) -> SigInfo {
        let pid = pids.own() as u32;
        // SAFETY: plain call.
        let uid = unsafe { libc::getuid() };
        SigInfo {
            signo,
            code,
            word: pid as u64 | (uid as u64) << 32,
            value: 0,
        }
    }

    /// This signal, caught from another process, as the program sees it:
    /// with its sender's pid as `pids` has it seen, for the codes that
    /// carry one (a process's `kill` or `sigqueue`, a thread's `tgkill`,
    /// a child's SIGCHLD).
    pub fn seen_by(self, pids: &Pids) -> SigInfo {
        let sent = matches!(self.code, code::SI_USER | code::SI_QUEUE | code::SI_TKILL);
        let child = self.signo == libc::SIGCHLD && self.code > 0 && self.code < code::SI_KERNEL;
        if sent || child {
            SigInfo {
                word: pids.seen_sender(self.word),
                ..self
            }
        } else {
            self
        }
    }

    /// `siginfo_t` as the program reads it: 128 bytes, the union's first
    /// word at offset 16, its second at 24.
    pub fn bytes(&self) -> [u8; 128] {
        let mut b = [0u8; 128];
        b[..4].copy_from_slice(&self.signo.to_le_bytes());
        b[8..12].copy_from_slice(&self.code.to_le_bytes());
        b[16..24].copy_from_slice(&self.word.to_le_bytes());
        b[24..32].copy_from_slice(&self.value.to_le_bytes());
        b
    }

    /// The inverse of [`bytes`](SigInfo::bytes): a `siginfo_t` as a
    /// program or the host kernel wrote it (the layout is Linux's generic
    /// one on both RV64 and x86-64), its fields past the union's second
    /// word dropped.
    pub fn from_bytes(b: &[u8; 128]) -> SigInfo {
        let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default());
        SigInfo {
            signo: i32::from_le_bytes(b[..4].try_into().unwrap_or_default()),
            code: i32::from_le_bytes(b[8..12].try_into().unwrap_or_default()),
            word: word(16),
            value: word(24),
        }
    }

    /// A `siginfo_t` the host kernel filled, as [`from_bytes`](SigInfo::from_bytes)
    /// reads it. Async-signal-safe: it only reads memory.
    pub fn from_host(info: &libc::siginfo_t) -> SigInfo {
        // SAFETY: siginfo_t is 128 plain bytes.
        let bytes = unsafe { &*(info as *const libc::siginfo_t as *const [u8; 128]) };
        SigInfo::from_bytes(bytes)
    }

    /// An interval timer's signal: from the kernel, no sender.
    pub fn timer(signo: i32) -> SigInfo {
        SigInfo {
            signo,
            code: code::SI_KERNEL,
            word: 0,
            value: 0,
        }
    }

    /// A fault's signal at `addr`.
    pub fn fault(signo: i32, code: i32, addr: u64) -> SigInfo {
        SigInfo {
            signo,
            code,
            word: addr,
            value: 0,
        }
    }
}

/// The process's signal state.
#[derive(Clone, Debug)]
pub struct Signals {
    /// Per signal: handler, flags, mask, as `rt_sigaction` set them.
    pub(crate) actions: [[u64; 3]; 65],
    /// Blocked signals (bit n − 1 for signal n).
    pub(crate) mask: u64,
    /// Signals sent to the process (`kill`, timers) not yet delivered.
    shared: Pending,
    /// Signals sent to the running thread (`tgkill`, `raise`) not yet
    /// delivered; each thread off the hart keeps its own.
    pub(crate) own: Pending,
    /// The alternate stack: base, SS_AUTODISARM if set, size (0: none).
    pub(crate) altstack: [u64; 3],
    /// The mask `rt_sigsuspend` replaced, which the first handler's frame
    /// saves (to be restored by its return) and which comes back if no
    /// handler runs (`saved_sigmask` in Linux).
    pub(crate) saved_mask: Option<u64>,
}

/// What a program `execve` starts inherits of its signals (POSIX; Linux's
/// `flush_signal_handlers` resets only handlers, the mask is the calling
/// thread's, and pending signals stay pending): the signals ignored and
/// the blocked mask, as masks (bit `sig - 1`), and the signals pending,
/// for [`Config::inherited_signals`](crate::Config::inherited_signals).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InheritedSignals {
    /// Signals whose action is SIG_IGN.
    pub ignored: u64,
    /// Signals blocked.
    pub blocked: u64,
    /// Signals pending (blocked, or they would have been delivered), each
    /// with what it was sent with, in the order they are to be delivered.
    pub pending: Vec<SigInfo>,
}

impl Signals {
    /// Starts the program with what it inherits: ignoring the signals of
    /// `inherited.ignored`, and blocking those of `inherited.blocked`.
    /// SIGKILL and SIGSTOP are never ignored or blocked.
    pub fn inherit(&mut self, inherited: &InheritedSignals) {
        for sig in 1..=64usize {
            if inherited.ignored & 1 << (sig - 1) != 0 && bit(sig as i32) & UNBLOCKABLE == 0 {
                self.actions[sig] = [SIG_IGN, 0, 0];
            }
        }
        self.set_mask(inherited.blocked);
        for info in &inherited.pending {
            self.shared.hold(*info);
        }
    }

    /// The signals pending for the running thread, its own first, then
    /// the process's, each with what it was sent with: what an `execve`
    /// keeps pending for the new program.
    pub(crate) fn pending_infos(&self) -> Vec<SigInfo> {
        [&self.own, &self.shared]
            .into_iter()
            .flat_map(|p| p.infos())
            .collect()
    }
}

impl Default for Signals {
    fn default() -> Signals {
        Signals {
            actions: [[0; 3]; 65],
            mask: 0,
            shared: Pending::default(),
            own: Pending::default(),
            altstack: [0; 3],
            saved_mask: None,
        }
    }
}

/// The first real-time signal (Linux's SIGRTMIN; the C library keeps 32
/// and 33 for itself and calls 34 its SIGRTMIN).
pub const SIGRTMIN: i32 = 32;

/// Linux's name of signal `sig` (the numbers RV64 and x86-64 share):
/// `SIGSEGV`, and `SIGRTMIN+N` for a real-time one, counted from the
/// kernel's [`SIGRTMIN`]; `signal` for a number that is none.
pub fn name(sig: i32) -> std::borrow::Cow<'static, str> {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    match sig {
        1..=31 => NAMES[sig as usize - 1].into(),
        SIGRTMIN..=64 => format!("SIGRTMIN+{}", sig - SIGRTMIN).into(),
        _ => "signal".into(),
    }
}

/// Most real-time signals queued behind the pending ones of one set
/// (Linux's limit is RLIMIT_SIGPENDING, per user; a send past it is
/// EAGAIN).
pub const MAX_QUEUED: usize = 4096;

/// Signals sent and not yet delivered, with what each was sent with. A
/// second standard signal of a kind before delivery is merged into the
/// first; real-time signals queue, each instance with its own siginfo,
/// delivered in the order sent (kernel/signal.c, `legacy_queue`).
#[derive(Clone, Debug)]
pub(crate) struct Pending {
    set: u64,
    info: [SigInfo; 65],
    /// Real-time signals sent while one of their kind was pending, oldest
    /// first.
    queued: std::collections::VecDeque<SigInfo>,
}

impl Default for Pending {
    fn default() -> Pending {
        Pending {
            set: 0,
            info: [SigInfo::timer(0); 65],
            queued: std::collections::VecDeque::new(),
        }
    }
}

impl Pending {
    /// The signals pending, bit `sig - 1` for signal `sig`.
    pub(crate) fn set(&self) -> u64 {
        self.set
    }

    /// Keeps `info` until it is taken: merged into a pending standard
    /// signal of its kind, queued behind a pending real-time one. `false`
    /// when the queue is full (the send is EAGAIN).
    pub(crate) fn hold(&mut self, info: SigInfo) -> bool {
        if self.set & bit(info.signo) == 0 {
            self.info[info.signo as usize] = info;
            self.set |= bit(info.signo);
        } else if info.signo >= SIGRTMIN {
            if self.queued.len() >= MAX_QUEUED {
                return false;
            }
            self.queued.push_back(info);
        }
        true
    }

    /// Counts a POSIX timer's expiry `info` as an overrun of its signal if
    /// one is pending here, as Linux does instead of sending it again
    /// (kernel/time/posix-timers.c): its `si_overrun` grows by one and by
    /// the periods `info` says were missed. `false` if none is pending.
    pub(crate) fn overrun_timer(&mut self, info: &SigInfo) -> bool {
        let timer = info.word as u32;
        let missed = info.word >> 32;
        let same = |p: &SigInfo| {
            p.signo == info.signo && p.code == code::SI_TIMER && p.word as u32 == timer
        };
        let sig = info.signo as usize;
        let pending = if self.set & bit(info.signo) != 0 && same(&self.info[sig]) {
            Some(&mut self.info[sig])
        } else {
            self.queued.iter_mut().find(|p| same(p))
        };
        match pending {
            Some(p) => {
                let overrun = ((p.word >> 32) + 1 + missed).min(i32::MAX as u64);
                p.word = p.word as u32 as u64 | overrun << 32;
                true
            }
            None => false,
        }
    }

    /// Keeps `info` as [`hold`](Self::hold) does, unless it is a POSIX
    /// timer's expiry whose signal is pending here, which counts as that
    /// signal's overrun instead ([`overrun_timer`](Self::overrun_timer)).
    pub(crate) fn hold_or_overrun(&mut self, info: SigInfo) {
        if !self.overrun_timer(&info) {
            self.hold(info);
        }
    }

    /// Every signal held, lowest first, each real-time kind's instances
    /// oldest first.
    fn infos(&self) -> Vec<SigInfo> {
        let mut out = Vec::new();
        for sig in (1..=64).filter(|&sig| self.set & bit(sig) != 0) {
            out.push(self.info[sig as usize]);
            out.extend(self.queued.iter().filter(|q| q.signo == sig));
        }
        out
    }

    /// Takes the lowest signal held that `allowed` lets through (of a
    /// real-time kind, the oldest instance).
    fn take(&mut self, allowed: u64) -> Option<SigInfo> {
        let ready = self.set & allowed;
        if ready == 0 {
            return None;
        }
        let sig = ready.trailing_zeros() as i32 + 1;
        let out = self.info[sig as usize];
        match self.queued.iter().position(|q| q.signo == sig) {
            Some(next) => {
                self.info[sig as usize] = self.queued.remove(next).unwrap_or(out);
            }
            None => self.set &= !bit(sig),
        }
        Some(out)
    }
}

/// What delivering a signal does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Runs the handler the program installed.
    Run,
    /// Nothing: ignored, by SIG_IGN or by default.
    Ignore,
    /// Kills the process (the default action of most signals).
    Kill,
    /// Stops the process until a SIGCONT (SIGSTOP's default action, and
    /// SIGTSTP's, SIGTTIN's and SIGTTOU's): the host process stops, so
    /// that its parent sees it stopped, and goes on when continued.
    Stop,
}

impl Action {
    /// Whether taking the signal ends a wait the thread is in: a handler
    /// runs or the process dies. A stop does not: the call goes on once
    /// the process is continued, as Linux restarts it.
    pub(crate) fn interrupts(self) -> bool {
        matches!(self, Action::Run | Action::Kill)
    }
}

/// A handler address that means the default action or "ignore".
pub(crate) const SIG_DFL: u64 = 0;
pub(crate) const SIG_IGN: u64 = 1;

fn bit(sig: i32) -> u64 {
    1 << (sig - 1)
}

impl Signals {
    /// Drops every pending signal, as a forked child starts (Linux's
    /// copy_process clears the child's pending sets).
    pub(crate) fn forget_pending(&mut self) {
        self.shared = Pending::default();
        self.own = Pending::default();
    }

    /// Puts every signal with a handler back to its default action, and
    /// every action's flags and mask to none; ignored signals stay
    /// ignored. As Linux's `flush_signal_handlers(p, 0)` does for a child
    /// made with CLONE_CLEAR_SIGHAND.
    pub(crate) fn clear_handlers(&mut self) {
        for action in self.actions.iter_mut() {
            let handler = if action[0] == SIG_IGN {
                SIG_IGN
            } else {
                SIG_DFL
            };
            *action = [handler, 0, 0];
        }
    }

    /// Sets the mask; SIGKILL and SIGSTOP stay unblocked.
    pub(crate) fn set_mask(&mut self, mask: u64) {
        self.mask = mask & !UNBLOCKABLE;
    }

    /// Whether `sig` is blocked now.
    pub(crate) fn blocked(&self, sig: i32) -> bool {
        self.mask & bit(sig) != 0
    }

    /// Keeps a signal sent to the process until it is delivered (at once
    /// on the way back to the program unless blocked).
    pub(crate) fn hold(&mut self, info: SigInfo) -> bool {
        self.shared.hold(info)
    }

    /// Keeps a signal sent to the running thread until it is delivered.
    pub(crate) fn hold_own(&mut self, info: SigInfo) -> bool {
        self.own.hold(info)
    }

    /// A POSIX timer's expiry `info` for the process (`own`: for the
    /// running thread) counted as an overrun of its pending signal, if
    /// there is one ([`Pending::overrun_timer`]); else held.
    pub(crate) fn hold_timer(&mut self, info: SigInfo, own: bool) {
        let set = if own { &mut self.own } else { &mut self.shared };
        set.hold_or_overrun(info);
    }

    /// The sets `/proc/PID/status` shows, by its names (fs/proc/array.c,
    /// `task_sig`): a thread's pending and blocked signals (`own` and
    /// `mask`; the running thread's are [`own`](Self::own) and
    /// [`mask`](Self::mask)), the process's pending, ignored and caught
    /// ones; bit `sig - 1` for signal `sig`.
    pub(crate) fn status_sets(&self, own: u64, mask: u64) -> [(&'static str, u64); 5] {
        let (mut ignored, mut caught) = (0, 0);
        for sig in 1..=64 {
            match self.actions[sig][0] {
                SIG_DFL => {}
                SIG_IGN => ignored |= 1 << (sig - 1),
                _ => caught |= 1 << (sig - 1),
            }
        }
        [
            ("SigPnd", own),
            ("ShdPnd", self.shared.set),
            ("SigBlk", mask),
            ("SigIgn", ignored),
            ("SigCgt", caught),
        ]
    }

    /// Signals pending for the running thread: its own and the process's.
    pub(crate) fn pending(&self) -> u64 {
        self.own.set | self.shared.set
    }

    /// The lowest pending signal that is no longer blocked, taken off the
    /// pending set: the thread's own first, then the process's, as Linux
    /// dequeues them.
    pub(crate) fn take_ready(&mut self) -> Option<SigInfo> {
        let allowed = !self.mask;
        self.own.take(allowed).or_else(|| self.shared.take(allowed))
    }

    /// The lowest pending signal of `set`, taken off the pending set,
    /// blocked or not (`rt_sigtimedwait`).
    pub(crate) fn take_pending_in(&mut self, set: u64) -> Option<SigInfo> {
        let allowed = set & !UNBLOCKABLE;
        self.own.take(allowed).or_else(|| self.shared.take(allowed))
    }

    /// Whether a signal is pending that the mask lets through and that
    /// does something: runs a handler or kills. Only such a signal ends
    /// `rt_sigsuspend`; ignored ones are dropped and the wait goes on.
    pub(crate) fn wakes(&self) -> bool {
        self.would_interrupt(&self.own, self.mask)
    }

    /// Whether a thread off the hart with its own pending signals `own`
    /// and mask `mask` has a signal to take that does something (runs a
    /// handler or kills): its own, or one of the process's.
    pub(crate) fn would_interrupt(&self, own: &Pending, mask: u64) -> bool {
        let ready = (own.set | self.shared.set) & !(mask | UNBLOCKABLE);
        ready != 0 && (1..=64).any(|sig| ready & bit(sig) != 0 && self.action(sig).interrupts())
    }

    /// Whether a thread with its own pending signals `own` has one of
    /// `set` pending, its own or the process's (what `rt_sigtimedwait`
    /// waits for).
    pub(crate) fn takes_in(&self, own: &Pending, set: u64) -> bool {
        (own.set | self.shared.set) & set & !UNBLOCKABLE != 0
    }

    /// Whether the call the running thread was in when a signal came is
    /// made again after the handler instead of failing with EINTR: the
    /// first signal it will take that does something runs a handler
    /// installed with SA_RESTART (Linux's `handle_signal` on
    /// -ERESTARTSYS).
    pub(crate) fn restarts(&self) -> bool {
        let allowed = !(self.mask | UNBLOCKABLE);
        [self.own.set & allowed, self.shared.set & allowed]
            .into_iter()
            .flat_map(|set| (1..=64).filter(move |&sig| set & bit(sig) != 0))
            .find(|&sig| self.action(sig).interrupts())
            .is_some_and(|sig| {
                self.action(sig) == Action::Run && self.actions[sig as usize][1] & SA_RESTART != 0
            })
    }

    /// The installed handler of `sig`, if it has one (not SIG_DFL or
    /// SIG_IGN; SIGKILL and SIGSTOP never do).
    pub(crate) fn handler(&self, sig: i32) -> Option<u64> {
        let h = self.actions[sig as usize][0];
        (h != SIG_DFL && h != SIG_IGN && bit(sig) & UNBLOCKABLE == 0).then_some(h)
    }

    /// What delivering `sig` does now.
    pub(crate) fn action(&self, sig: i32) -> Action {
        if self.handler(sig).is_some() {
            return Action::Run;
        }
        if self.actions[sig as usize][0] == SIG_IGN && bit(sig) & UNBLOCKABLE == 0 {
            return Action::Ignore;
        }
        match sig {
            // Default action "ignore": SIGCHLD, SIGCONT, SIGURG, SIGWINCH.
            17 | 18 | 23 | 28 => Action::Ignore,
            19..=22 => Action::Stop,
            _ => Action::Kill,
        }
    }

    /// Whether a fault's signal reaches a handler: there is one and the
    /// signal is not blocked. Otherwise Linux resets it to the default
    /// action, which kills the process (kernel/signal.c,
    /// `force_sig_info_to_task`).
    pub fn catches_fault(&self, sig: i32) -> bool {
        self.handler(sig).is_some() && !self.blocked(sig)
    }

    /// Whether `sp` lies on the alternate stack (`on_sig_stack`).
    pub(crate) fn on_altstack(&self, sp: u64) -> bool {
        let [base, _, size] = self.altstack;
        sp > base && sp - base <= size
    }

    /// The alternate stack's state as `sigaltstack` and `uc_stack` report
    /// it with the stack pointer at `sp` (`sas_ss_flags`), with
    /// SS_AUTODISARM as set.
    pub(crate) fn altstack_flags(&self, sp: u64) -> u64 {
        let [_, autodisarm, size] = self.altstack;
        let state = if size == 0 {
            SS_DISABLE
        } else if self.on_altstack(sp) {
            SS_ONSTACK
        } else {
            0
        };
        state | autodisarm
    }

    /// Installs a new alternate stack as `sigaltstack` does after its
    /// checks; `Err` with the negative errno otherwise.
    pub(crate) fn set_altstack(
        &mut self,
        sp: u64,
        flags: u64,
        size: u64,
        now_sp: u64,
    ) -> Result<(), i64> {
        if self.on_altstack(now_sp) {
            return Err(-(libc::EPERM as i64));
        }
        match flags & !SS_AUTODISARM {
            SS_DISABLE => self.altstack = [0, flags & SS_AUTODISARM, 0],
            0 | SS_ONSTACK if size < MINSIGSTKSZ => return Err(-(libc::ENOMEM as i64)),
            0 | SS_ONSTACK => self.altstack = [sp, flags & SS_AUTODISARM, size],
            _ => return Err(-(libc::EINVAL as i64)),
        }
        Ok(())
    }
}

/// Maps the trampoline's page and writes its code.
pub fn install_trampoline(mem: &mut Memory) -> std::io::Result<()> {
    mem.map(TRAMPOLINE, PAGE, perm::R | perm::X)?;
    let mut code = [0u8; 8];
    code[..4].copy_from_slice(&TRAMPOLINE_CODE[0].to_le_bytes());
    code[4..].copy_from_slice(&TRAMPOLINE_CODE[1].to_le_bytes());
    mem.poke(TRAMPOLINE, &code)
        .map_err(|f| std::io::Error::other(format!("trampoline page at {:#x}", f.addr)))
}

/// Runs the handler of `info.signo`: builds the frame for the hart's
/// state (its pc is where the program resumes), blocks the handler's mask
/// and the signal itself, and points the hart at the handler. `Err` with
/// the address when the frame cannot be written (Linux then kills the
/// process with SIGSEGV).
pub fn enter_handler(
    signals: &mut Signals,
    cpu: &mut Cpu,
    mem: &mut Memory,
    info: &SigInfo,
) -> Result<(), Fault> {
    let sig = info.signo;
    let [handler, flags, sa_mask] = signals.actions[sig as usize];
    let sp = cpu.x[2];
    // `get_sigframe`: on the alternate stack only if asked and not there
    // already; a frame that would overflow the alternate stack it is on
    // goes to an address that always faults.
    let top = if flags & SA_ONSTACK != 0 && signals.altstack_flags(sp) & !SS_AUTODISARM == 0 {
        signals.altstack[0] + signals.altstack[2]
    } else {
        sp
    };
    let frame = if signals.on_altstack(sp) && !signals.on_altstack(sp.wrapping_sub(FRAME_BYTES)) {
        u64::MAX
    } else {
        top.wrapping_sub(FRAME_BYTES) & !15
    };
    let mut b = vec![0u8; FRAME_BYTES as usize];
    b[..128].copy_from_slice(&info.bytes());
    let mut put = |off: u64, v: u64, n: usize| {
        b[off as usize..off as usize + n].copy_from_slice(&v.to_le_bytes()[..n]);
    };
    let [ss_sp, _, ss_size] = signals.altstack;
    put(UC_STACK, ss_sp, 8);
    put(UC_STACK + 8, signals.altstack_flags(sp), 4);
    put(UC_STACK + 16, ss_size, 8);
    // The mask the handler's return restores: the one `rt_sigsuspend`
    // replaced, for the first handler after it.
    let restore = signals.saved_mask.unwrap_or(signals.mask);
    put(UC_SIGMASK, restore, 8);
    put(MCONTEXT, cpu.pc, 8);
    for r in 1..32 {
        put(MCONTEXT + 8 * r as u64, cpu.x[r], 8);
    }
    for (r, &f) in cpu.f.iter().enumerate() {
        put(FPREGS + 8 * r as u64, f, 8);
    }
    put(FCSR, ((cpu.frm << 5) | cpu.fflags) as u64, 4);
    if frame == u64::MAX || frame.checked_add(FRAME_BYTES).is_none() {
        return Err(Fault {
            addr: frame,
            access: crate::mem::Access::Write,
        });
    }
    mem.slice_mut(frame, FRAME_BYTES)?.copy_from_slice(&b);
    signals.saved_mask = None;
    if signals.altstack[1] & SS_AUTODISARM != 0 {
        signals.altstack = [0, 0, 0];
    }
    let mut mask = signals.mask | sa_mask;
    if flags & SA_NODEFER == 0 {
        mask |= bit(sig);
    }
    signals.set_mask(mask);
    if flags & SA_RESETHAND != 0 {
        signals.actions[sig as usize][0] = SIG_DFL;
    }
    cpu.reservation = Cpu::NO_RESERVATION;
    cpu.x[1] = TRAMPOLINE;
    cpu.x[2] = frame;
    cpu.x[10] = sig as u64;
    cpu.x[11] = frame;
    cpu.x[12] = frame + UCONTEXT;
    cpu.pc = handler;
    Ok(())
}

/// `rt_sigreturn`: restores the registers, the mask and the alternate
/// stack from the frame at sp. `Err` with the address when the frame
/// cannot be read (Linux then kills the process with SIGSEGV).
pub fn sigreturn(signals: &mut Signals, cpu: &mut Cpu, mem: &Memory) -> Result<(), Fault> {
    let frame = cpu.x[2];
    let b = mem.slice(frame, FRAME_BYTES, perm::R)?.to_vec();
    let get = |off: u64, n: usize| {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(&b[off as usize..off as usize + n]);
        u64::from_le_bytes(w)
    };
    signals.set_mask(get(UC_SIGMASK, 8));
    cpu.pc = get(MCONTEXT, 8);
    for r in 1..32 {
        cpu.x[r] = get(MCONTEXT + 8 * r as u64, 8);
    }
    for r in 0..32 {
        cpu.f[r] = get(FPREGS + 8 * r as u64, 8);
    }
    let fcsr = get(FCSR, 4) as u32;
    cpu.fflags = fcsr & 0x1f;
    cpu.frm = (fcsr >> 5) & 7;
    cpu.reservation = Cpu::NO_RESERVATION;
    // `restore_altstack`: as `sigaltstack` would, its errors ignored.
    let _ = signals.set_altstack(
        get(UC_STACK, 8),
        get(UC_STACK + 8, 4),
        get(UC_STACK + 16, 8),
        cpu.x[2],
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_named_as_linux_numbers_them() {
        let host = [
            (libc::SIGHUP, "SIGHUP"),
            (libc::SIGSEGV, "SIGSEGV"),
            (libc::SIGSTKFLT, "SIGSTKFLT"),
            (libc::SIGCHLD, "SIGCHLD"),
            (libc::SIGSTOP, "SIGSTOP"),
            (libc::SIGVTALRM, "SIGVTALRM"),
            (libc::SIGPWR, "SIGPWR"),
            (libc::SIGSYS, "SIGSYS"),
        ];
        for (sig, named) in host {
            assert_eq!(name(sig), named);
        }
        assert_eq!(name(34), "SIGRTMIN+2");
        assert_eq!(name(64), "SIGRTMIN+32");
        assert_eq!((name(0), name(65)), ("signal".into(), "signal".into()));
    }

    #[test]
    fn the_frame_layout_is_linuxs() {
        // struct rt_sigframe: siginfo (128) + ucontext, whose mcontext is
        // 16-byte aligned after 168 bytes, holding 32 registers and the
        // 528-byte FP union.
        assert_eq!(MCONTEXT, 128 + 176);
        assert_eq!(FRAME_BYTES, 128 + 176 + 256 + 528);
        assert_eq!(FCSR, FRAME_BYTES - 528 + 256);
    }

    proptest::proptest! {
        #[test]
        fn a_siginfo_reads_back_what_it_wrote(signo in 1i32..=64, code: i32, word: u64, value: u64) {
            let info = SigInfo { signo, code, word, value };
            proptest::prop_assert_eq!(SigInfo::from_bytes(&info.bytes()), info);
        }
    }

    #[test]
    fn a_host_siginfo_is_read_as_the_kernel_filled_it() {
        // A signal this thread queues itself with a value: sigtimedwait
        // gives back the kernel's siginfo, whose sender is this process.
        // SAFETY: plain calls on sets filled here; the signal is blocked
        // before it is queued and taken before it is unblocked.
        unsafe {
            let sig = libc::SIGRTMIN() + 3;
            let mut one: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut one);
            libc::sigaddset(&mut one, sig);
            libc::pthread_sigmask(libc::SIG_BLOCK, &one, &mut old);
            let sent = SigInfo {
                signo: sig,
                code: -1,
                word: libc::getpid() as u32 as u64 | (libc::getuid() as u64) << 32,
                value: 0x5eed,
            };
            let tid = libc::syscall(libc::SYS_gettid);
            let queued = libc::syscall(
                libc::SYS_rt_tgsigqueueinfo,
                libc::getpid(),
                tid,
                sig,
                sent.bytes().as_ptr(),
            );
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let taken = libc::sigtimedwait(&one, &mut info, &zero);
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            assert_eq!((queued, taken), (0, sig));
            assert_eq!(SigInfo::from_host(&info), sent);
            assert_eq!(info.si_value().sival_ptr as u64, 0x5eed);
        }
    }

    #[test]
    fn signals_ignored_and_blocked_from_the_start_but_never_kill_or_stop() {
        let mut s = Signals::default();
        let mask =
            (1 << (libc::SIGHUP - 1)) | (1 << (libc::SIGKILL - 1)) | (1 << (libc::SIGSTOP - 1));
        s.inherit(&InheritedSignals {
            ignored: mask,
            blocked: mask | 1 << (libc::SIGUSR1 - 1),
            pending: Vec::new(),
        });
        assert_eq!(s.action(libc::SIGHUP), Action::Ignore);
        assert!(s.blocked(libc::SIGHUP) && s.blocked(libc::SIGUSR1));
        assert!(!s.blocked(libc::SIGINT));
        assert!(!s.blocked(libc::SIGKILL) && !s.blocked(libc::SIGSTOP));
        assert_eq!(s.action(libc::SIGINT), Action::Kill);
        assert_eq!(s.action(libc::SIGKILL), Action::Kill);
        assert_eq!(s.action(libc::SIGSTOP), Action::Stop);
    }

    #[test]
    fn pending_signals_wait_for_their_unblocking_lowest_first() {
        let mut s = Signals::default();
        s.set_mask(bit(10) | bit(12) | bit(9));
        assert!(!s.blocked(9), "SIGKILL cannot be blocked");
        s.hold(SigInfo::sent(12, code::SI_USER, &Pids::default()));
        s.hold(SigInfo::sent(10, code::SI_TKILL, &Pids::default()));
        assert_eq!(s.take_ready(), None);
        s.set_mask(0);
        assert_eq!(
            s.take_ready().map(|i| (i.signo, i.code)),
            Some((10, code::SI_TKILL))
        );
        assert_eq!(
            s.take_ready().map(|i| (i.signo, i.code)),
            Some((12, code::SI_USER))
        );
        assert_eq!(s.take_ready(), None);
    }

    #[test]
    fn only_signals_that_do_something_end_a_suspend() {
        let mut s = Signals::default();
        s.hold(SigInfo::sent(28, code::SI_USER, &Pids::default())); // SIGWINCH: ignored by default
        assert!(!s.wakes());
        s.hold(SigInfo::timer(15)); // SIGTERM: kills by default
        assert!(s.wakes());
        s.set_mask(bit(15));
        assert!(!s.wakes(), "blocked");
        assert_eq!(
            s.take_pending_in(bit(15)).map(|i| i.signo),
            Some(15),
            "taken though blocked"
        );
        assert_eq!(s.take_pending_in(bit(15)), None);
        assert_eq!(
            s.take_pending_in(bit(9) | bit(28)).map(|i| i.signo),
            Some(28)
        );
    }

    #[test]
    fn a_sleeping_thread_is_woken_by_a_signal_it_would_take() {
        let mut s = Signals::default();
        let mut own = Pending::default();
        assert!(!s.would_interrupt(&own, 0));
        own.hold(SigInfo::sent(28, code::SI_TKILL, &Pids::default())); // SIGWINCH: ignored
        assert!(!s.would_interrupt(&own, 0));
        s.actions[10][0] = 0x1000;
        own.hold(SigInfo::sent(10, code::SI_TKILL, &Pids::default()));
        assert!(s.would_interrupt(&own, 0));
        assert!(!s.would_interrupt(&own, bit(10)), "its mask blocks it");
        s.hold(SigInfo::timer(14)); // SIGALRM to the process: kills
        assert!(s.would_interrupt(&Pending::default(), bit(10)));
    }

    #[test]
    fn real_time_signals_queue_standard_ones_merge_and_timers_overrun() {
        let mut p = Pending::default();
        let queued = |value| SigInfo {
            signo: 34,
            code: code::SI_QUEUE,
            word: 0,
            value,
        };
        for v in 1..=3 {
            assert!(p.hold(queued(v)));
        }
        assert!(p.hold(SigInfo::sent(10, code::SI_USER, &Pids::default())));
        assert!(p.hold(SigInfo::sent(10, code::SI_USER, &Pids::default())));
        let all = u64::MAX;
        // Lowest first; a real-time kind in the order sent.
        assert_eq!(p.take(all).map(|i| i.signo), Some(10));
        assert_eq!(p.take(all).map(|i| i.value), Some(1));
        assert_eq!(p.take(all).map(|i| i.value), Some(2));
        assert_eq!(p.take(all).map(|i| i.value), Some(3));
        assert_eq!(p.take(all), None);
        // The queue has a bound, past which a send is refused.
        for _ in 0..=MAX_QUEUED {
            assert!(p.hold(queued(0)));
        }
        assert!(!p.hold(queued(0)));
        // A timer's expiry while its signal is pending adds to its overrun
        // (one, and the periods it says were missed) instead of queueing.
        let mut p = Pending::default();
        let expiry = |missed: u64| SigInfo {
            signo: 35,
            code: code::SI_TIMER,
            word: 7 | missed << 32,
            value: 0,
        };
        assert!(!p.overrun_timer(&expiry(0)));
        assert!(p.hold(expiry(0)));
        assert!(p.overrun_timer(&expiry(2)));
        assert!(p.overrun_timer(&expiry(0)));
        let other_timer = SigInfo {
            word: 8,
            ..expiry(0)
        };
        assert!(!p.overrun_timer(&other_timer));
        let taken = p.take(all).unwrap();
        assert_eq!((taken.word as u32, taken.word >> 32), (7, 4));
        assert_eq!(p.take(all), None);
    }

    #[test]
    fn faults_reach_only_unblocked_installed_handlers() {
        let mut s = Signals::default();
        assert!(!s.catches_fault(11));
        s.actions[11][0] = 0x1000;
        assert!(s.catches_fault(11));
        s.set_mask(bit(11));
        assert!(!s.catches_fault(11));
        s.actions[9][0] = 0x1000;
        assert_eq!(s.handler(9), None);
    }

    #[test]
    fn the_alternate_stack_reports_where_the_stack_pointer_is() {
        let mut s = Signals::default();
        assert_eq!(s.altstack_flags(0x5000), SS_DISABLE);
        s.set_altstack(0x1000, SS_AUTODISARM, 0x2000, 0x9000)
            .unwrap();
        assert_eq!(s.altstack_flags(0x9000), SS_AUTODISARM);
        assert_eq!(s.altstack_flags(0x3000), SS_ONSTACK | SS_AUTODISARM);
        assert_eq!(
            s.altstack_flags(0x1000),
            SS_AUTODISARM,
            "the base is below it"
        );
        assert_eq!(
            s.set_altstack(0, SS_DISABLE, 0, 0x2000),
            Err(-(libc::EPERM as i64)),
            "not while on it"
        );
        assert_eq!(
            s.set_altstack(0x1000, 0, 100, 0x9000),
            Err(-(libc::ENOMEM as i64))
        );
        assert_eq!(
            s.set_altstack(0x1000, 4, 0x4000, 0x9000),
            Err(-(libc::EINVAL as i64))
        );
    }
}

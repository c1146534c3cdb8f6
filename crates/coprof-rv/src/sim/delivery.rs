//! Signals reaching the program: pending ones delivered between blocks
//! and after system calls (a handler's frame, or the default action), a
//! fault's signal, and the death of the process with its message.

use super::{Caught, Exit, Simulator};
use crate::cpu::Stop;
use crate::disasm::disassemble;
use crate::mem::Access;
use crate::signal::{self, code, Action, SigInfo};

impl Simulator {
    /// On the way back to the program, as Linux on its way back to user
    /// mode: every pending signal that is not blocked, lowest first, runs
    /// its handler (each on the frame of the one before, so the last runs
    /// first), is dropped, or kills the process.
    #[inline(never)]
    pub(super) fn deliver_pending(&mut self, at: u64) -> Option<Exit> {
        self.hand_directed();
        while let Some(info) = self.kernel.signals.take_ready() {
            self.kernel.timers.posix.delivered(&info);
            match self.kernel.signals.action(info.signo) {
                Action::Run => {
                    if let Err(exit) = self.enter_handler(&info) {
                        return Some(exit);
                    }
                }
                Action::Ignore => {}
                Action::Kill => return Some(killed_by(&info, at, self.kernel.pids.own())),
                // The host process stops with the same signal (whose host
                // disposition is the default then) and goes on here.
                // SAFETY: plain call.
                Action::Stop => unsafe {
                    libc::kill(libc::getpid(), info.signo);
                },
            }
        }
        // No handler took the mask `rt_sigsuspend` replaced: it comes
        // back now.
        if let Some(mask) = self.kernel.signals.saved_mask.take() {
            self.kernel.signals.set_mask(mask);
        }
        // A signal for a thread off the hart (its own, or the process's
        // that the running thread blocks) ends its wait, as Linux's
        // signal_wake_up does.
        self.wake_blocked(false);
        None
    }

    /// Signals sent to threads off the hart (by `tgkill`, or a POSIX
    /// timer's SIGEV_THREAD_ID) wait in theirs; those for a thread that
    /// has ended are dropped.
    pub(super) fn hand_directed(&mut self) {
        for (tid, info) in std::mem::take(&mut self.kernel.directed) {
            if let Some(p) = self.threads.parked.iter_mut().find(|p| p.tid == tid) {
                p.pending.hold_or_overrun(info);
            }
        }
    }

    /// The signal a trap stops the hart with, and the PC it happened at.
    #[inline(never)]
    pub(super) fn fault_signal(&self, stop: Stop, bi: usize) -> (SigInfo, u64) {
        let op_pc = |at: usize| self.code.blocks[bi].ops[at].pc;
        match stop {
            Stop::Illegal { at } => (SigInfo::fault(4, code::ILL_ILLOPC, op_pc(at)), op_pc(at)),
            Stop::Fault { at, fault } => {
                let si_code = if self.mem.perm_at(fault.addr) & crate::mem::perm::MAPPED != 0 {
                    code::SEGV_ACCERR
                } else {
                    code::SEGV_MAPERR
                };
                (SigInfo::fault(11, si_code, fault.addr), op_pc(at))
            }
            Stop::Misaligned { at, addr } => (SigInfo::fault(7, code::BUS_ADRALN, addr), op_pc(at)),
            // ebreak: the hart's pc is its address.
            _ => (
                SigInfo::fault(5, code::TRAP_BRKPT, self.cpu.pc),
                self.cpu.pc,
            ),
        }
    }

    /// Starts the handler a trap's signal `info` at `pc` goes to, when the
    /// program installed one and has not blocked the signal. A handler
    /// that returns resumes at `pc`, the instruction that trapped, as
    /// under Linux.
    #[inline(never)]
    pub(super) fn catch(&mut self, info: &SigInfo, pc: u64) -> Caught {
        if !self.kernel.signals.catches_fault(info.signo) {
            return Caught::Default;
        }
        self.cpu.pc = pc;
        match self.enter_handler(info) {
            Ok(()) => Caught::Handler,
            Err(exit) => Caught::Killed(exit),
        }
    }

    /// The end of a process that a trap's signal kills, with a message
    /// naming the PC, the address and the instruction as a kernel log or
    /// debugger would.
    #[cold]
    #[inline(never)]
    pub(super) fn death(&self, stop: Stop, bi: usize) -> Exit {
        match stop {
            Stop::Illegal { at } => {
                let op = self.code.blocks[bi].ops[at];
                let bytes = self.instruction_bytes(op.pc, op.len);
                Exit::Signal {
                    signal: 4,
                    message: format!(
                        "illegal instruction at pc {:#x}: bytes {} ({}): SIGILL",
                        op.pc,
                        bytes,
                        disassemble(&op, self.cpu.frm)
                    ),
                }
            }
            Stop::Fault { at, fault } => {
                let op = self.code.blocks[bi].ops[at];
                let what = match fault.access {
                    Access::Read => "read from",
                    Access::Write => "write to",
                    Access::Execute => "instruction fetch from",
                };
                let how = if self.mem.perm_at(fault.addr) & crate::mem::perm::MAPPED != 0 {
                    "a page without that permission"
                } else {
                    "unmapped memory"
                };
                let instr = if fault.access == Access::Execute {
                    String::new()
                } else {
                    format!(" by `{}`", disassemble(&op, self.cpu.frm))
                };
                Exit::Signal {
                    signal: 11,
                    message: format!(
                        "segmentation fault: {what} address {:#x} ({how}) at pc {:#x}{instr}: SIGSEGV",
                        fault.addr, op.pc
                    ),
                }
            }
            Stop::Misaligned { at, addr } => {
                let op = self.code.blocks[bi].ops[at];
                Exit::Signal {
                    signal: 7,
                    message: format!(
                        "misaligned atomic access to address {addr:#x} at pc {:#x} by `{}`: SIGBUS",
                        op.pc,
                        disassemble(&op, self.cpu.frm)
                    ),
                }
            }
            _ => Exit::Signal {
                signal: 5,
                message: format!("breakpoint (ebreak) at pc {:#x}: SIGTRAP", self.cpu.pc),
            },
        }
    }

    /// Builds the signal frame and starts the handler; when the frame
    /// cannot be written, the exit by SIGSEGV that Linux gives.
    fn enter_handler(&mut self, info: &SigInfo) -> Result<(), Exit> {
        let sp = self.cpu.x[2];
        self.redirected.get_or_insert(self.cpu.pc);
        signal::enter_handler(&mut self.kernel.signals, &mut self.cpu, &mut self.mem, info).map_err(
            |f| Exit::Signal {
                signal: 11,
                message: format!(
                    "no room for the frame of {} (signal {}) at {:#x} below sp {sp:#x}: SIGSEGV",
                    signal::name(info.signo),
                    info.signo,
                    f.addr
                ),
            },
        )
    }
}

/// The end of a process killed at `at` by a signal: one it sent itself,
/// its timers', or one from outside (another process, the terminal);
/// `me` is the process's pid as the program sees it.
fn killed_by(info: &SigInfo, at: u64, me: i64) -> Exit {
    let sig = info.signo;
    let me = me as u32;
    let sender = info.word as u32;
    let from = if info.code == code::SI_KERNEL && matches!(sig, 14 | 26 | 27) {
        "from its interval timer".to_string()
    } else if info.code == code::SI_KERNEL {
        "from outside (the terminal or the kernel)".to_string()
    } else if info.code == code::SI_TIMER {
        "from its POSIX timer".to_string()
    } else if matches!(info.code, code::SI_USER | code::SI_QUEUE | code::SI_TKILL) && sender != me {
        format!("sent by process {sender}")
    } else {
        "sent by the program itself".to_string()
    };
    Exit::Signal {
        signal: sig,
        message: format!(
            "killed by {} (signal {sig}) {from} at pc {at:#x}",
            signal::name(sig)
        ),
    }
}

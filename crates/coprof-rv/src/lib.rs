//! coprof-rv: an RV64GC (and Zba, Zbb, Zbc, Zbs) Linux user-mode simulator that runs real,
//! unmodified executables, static or dynamically linked, and emits coprof
//! [`Event`]s.
//!
//! The profiling mechanisms coprof implements come from papers whose
//! authors watched the full retire stream of programs in their own
//! simulators. This crate is that simulator for RISC-V: it loads a
//! statically linked RV64 Linux ELF (ET_EXEC or static-pie), or a
//! dynamically linked one with its dynamic loader from a sysroot
//! ([`sysroot`]), starts it as Linux would, executes RV64IMAFDC with Zicsr and Zifencei (RISC-V
//! Unprivileged ISA 20191213) with its threads taking turns on one hart
//! ([`threads`]), answers its Linux system calls, runs its signal
//! handlers ([`signal`]) for its own signals and those from outside
//! ([`host_signals`]), forks the host process for the program's child
//! processes, which run unobserved (the `sim` module's `fork`), and pushes
//! one [`Event`] per retired instruction of the classes the attached
//! [`Sink`] asked for.
//!
//! Speed comes from decoding each instruction once into a compact
//! [`op::Op`], caching basic blocks by PC ([`code`]), dispatching with one
//! `match`, counting retired instructions per block, and compiling the
//! event code out of the loop when nothing listens ([`cpu`]).
//!
//! ```no_run
//! use coprof_core::{Class, ClassSet, Collect};
//! use coprof_rv::{Config, Simulator};
//! let mut sim = Simulator::load("prog".as_ref(), &Config::default()).unwrap();
//! let mut loads = Collect { events: vec![], wants: ClassSet::of(Class::Load) };
//! let exit = sim.run_to_exit(&mut loads).unwrap();
//! println!("{} loads, exit status {}", loads.events.len(), exit.status());
//! ```
//!
//! [`Event`]: coprof_core::Event
//! [`Sink`]: coprof_core::Sink

#![warn(missing_docs)]

mod bitmanip;
pub mod code;
pub mod command;
pub mod cpu;
pub mod decode;
pub mod disasm;
pub mod elf;
pub mod encode;
pub mod error;
pub mod events;
pub mod fdtable;
pub mod fp;
pub mod host_signals;
pub mod isa;
pub mod itimer;
pub mod jit;
pub mod mem;
pub mod op;
pub mod pids;
pub mod posix_timer;
pub mod process;
pub mod random;
pub mod rvc;
pub mod signal;
pub mod sim;
pub mod syscall;
pub mod sysno;
pub mod sysroot;
pub mod threads;

pub use error::SimError;
pub use isa::Isa;
pub use signal::InheritedSignals;
pub use sim::{Config, Exit, Simulator};

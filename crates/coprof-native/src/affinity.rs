//! [`Config::same_cpu`](crate::Config::same_cpu): the program and the
//! sampling thread kept on one CPU.
//!
//! Each sample wakes the sampling thread and then the program's thread
//! again. When the two are on different CPUs, each wake-up is an
//! inter-processor interrupt, and so is each of the two `ioctl`s that arm
//! the next period (the kernel runs them on the CPU the thread last ran
//! on). A virtual machine pays a VM exit for every one. On one CPU, none
//! is needed.

use crate::NativeError;

/// The CPUs a thread may run on.
#[derive(Clone, Copy)]
pub(crate) struct Mask(libc::cpu_set_t);

impl Mask {
    /// The calling thread's mask.
    pub(crate) fn current() -> std::io::Result<Mask> {
        // SAFETY: a cpu_set_t filled by the call, of the size given.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(Mask(set))
        }
    }

    /// A mask of the one CPU `cpu`.
    pub(crate) fn one(cpu: usize) -> Mask {
        // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET checks the
        // bound.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            Mask(set)
        }
    }

    /// Makes this the calling thread's mask.
    pub(crate) fn set(&self) -> std::io::Result<()> {
        // SAFETY: the call reads the set, of the size given.
        let r =
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.0) };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

/// The calling thread kept on the CPU it runs on now, until dropped,
/// when its own mask is put back. A process it forks meanwhile inherits
/// the one CPU.
pub(crate) struct Pinned {
    former: Mask,
}

impl Pinned {
    pub(crate) fn here() -> Result<Pinned, NativeError> {
        let error = |source| NativeError::Affinity { source };
        let former = Mask::current().map_err(error)?;
        // SAFETY: plain call.
        let cpu = unsafe { libc::sched_getcpu() };
        if cpu < 0 {
            return Err(error(std::io::Error::last_os_error()));
        }
        Mask::one(cpu as usize).set().map_err(error)?;
        Ok(Pinned { former })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = self.former.set();
    }
}

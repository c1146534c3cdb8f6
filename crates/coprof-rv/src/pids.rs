//! The process id the program sees (`--pid N`, [`Config::pid`]).
//!
//! A simulated process is a host process, and by default it sees the
//! host's ids, as under qemu-user or Valgrind. Those change from run to
//! run, and programs load them: the C library keeps the thread id in every
//! locked mutex (`__pthread_mutex_lock` stores it as the owner), so the
//! load values of a multithreaded program, and the value profiles built on
//! them, differ a little between two runs of the same input. With a pid
//! given, the program sees that number as its own, and its threads are
//! numbered after it, so that runs repeat exactly (with `--random-seed`
//! and `--clear-env`).
//!
//! The translation is a swap of two numbers, its own inverse: the host pid
//! of the process the pid was given to and the pid it sees. Every id that
//! goes from the program to the host (`kill`, `wait4`, `setpgid`,
//! `/proc/PID/…`) and every one that comes back (`getppid`, a child's
//! `fork` result, `getpgid`, a signal's sender) goes through it. A host
//! process that happens to have the number given is seen under the host
//! pid of the process that took its number, so no two processes look
//! alike. Forked children are host processes with the host's ids: they
//! see their parent under the given pid (`getppid`), and themselves under
//! their own host pid.
//!
//! [`Config::pid`]: crate::Config::pid

/// The largest pid Linux hands out (`PID_MAX_LIMIT` on 64-bit machines),
/// and so the largest a program may be given.
pub const PID_MAX: i32 = 4 * 1024 * 1024;

/// The smallest pid a program may be given: 1 is init's, and as a group
/// it would make `kill(-pgid)` a signal to every process (`kill(-1)`).
pub const PID_MIN: i32 = 2;

/// The swap of a host pid with the pid the program sees in its place, or
/// none (the host's ids as they are).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pids {
    swap: Option<(i32, i32)>,
}

impl Pids {
    /// The program in host process `host` sees itself as `seen`, which
    /// should be [`PID_MIN`] to [`PID_MAX`].
    pub fn new(host: i32, seen: i32) -> Pids {
        Pids {
            swap: (host != seen).then_some((host, seen)),
        }
    }

    /// The ids of [`Config::pid`] and [`Config::pid_host`]: the program
    /// sees `pid` in place of `host`, by default the calling process.
    ///
    /// [`Config::pid`]: crate::Config::pid
    /// [`Config::pid_host`]: crate::Config::pid_host
    pub fn given(pid: Option<i32>, host: Option<i32>) -> Pids {
        match pid {
            // SAFETY: plain call.
            Some(seen) => Pids::new(host.unwrap_or(unsafe { libc::getpid() }), seen),
            None => Pids::default(),
        }
    }

    /// The id the program sees for the host's `pid`. A negative pid is a
    /// process group (`kill(-pgid)`, `wait4(-pgid)`) and keeps its sign;
    /// 0 and -1 (this process or group; every process) are no process.
    pub fn seen(&self, pid: i64) -> i64 {
        let Some((host, seen)) = self.swap else {
            return pid;
        };
        let (sign, n) = if pid < -1 { (-1, -pid) } else { (1, pid) };
        if n == host as i64 {
            sign * seen as i64
        } else if n == seen as i64 {
            sign * host as i64
        } else {
            pid
        }
    }

    /// The host's id for the `pid` the program gave: the same swap, which
    /// is its own inverse.
    pub fn host(&self, pid: i64) -> i64 {
        self.seen(pid)
    }

    /// The id of the calling host process as the program sees it.
    pub fn own(&self) -> i64 {
        // SAFETY: plain call.
        self.seen(unsafe { libc::getpid() } as i64)
    }

    /// The pid in `raw`'s first 4 bytes, a structure's little-endian
    /// `pid_t` field (`struct ucred`'s, `siginfo_t`'s `si_pid`, a
    /// terminal's group), translated in place. The swap is its own
    /// inverse, so this serves the way to the host and the way back.
    pub fn swap_raw(&self, raw: &mut [u8]) {
        let Some(field) = raw.get_mut(..4) else {
            return;
        };
        let pid = i32::from_le_bytes(field.try_into().unwrap_or_default());
        field.copy_from_slice(&(self.seen(pid as i64) as i32).to_le_bytes());
    }

    /// A signal's sender as the program sees it: `word` holds the pid in
    /// its low half and the uid in its high half ([`SigInfo`]'s word, for
    /// the codes that carry a sender).
    ///
    /// [`SigInfo`]: crate::signal::SigInfo
    pub fn seen_sender(&self, word: u64) -> u64 {
        let pid = self.seen(word as u32 as i32 as i64) as u32 as u64;
        word & !0xffff_ffff | pid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn without_a_pid_every_id_is_the_hosts() {
        let p = Pids::default();
        for pid in [-5, -1, 0, 1, 1234, PID_MAX as i64] {
            assert_eq!(p.seen(pid), pid);
            assert_eq!(p.host(pid), pid);
        }
        assert_eq!(p.own(), unsafe { libc::getpid() } as i64);
    }

    #[test]
    fn the_given_pid_and_the_host_pid_swap_groups_included() {
        let p = Pids::new(5000, 42);
        assert_eq!(p.seen(5000), 42);
        assert_eq!(p.host(42), 5000);
        assert_eq!(
            p.seen(42),
            5000,
            "a host process numbered 42 is not the program"
        );
        assert_eq!(p.seen(-5000), -42);
        assert_eq!(p.host(-42), -5000);
        assert_eq!(p.seen(0), 0);
        assert_eq!(p.seen(-1), -1);
        assert_eq!(p.seen(7), 7);
        assert_eq!(Pids::new(9, 9), Pids::default());
    }

    #[test]
    fn a_pid_field_is_swapped_in_place_and_the_rest_kept() {
        let p = Pids::new(5000, 42);
        let mut raw = [0u8; 8];
        raw[..4].copy_from_slice(&42i32.to_le_bytes());
        raw[4..].copy_from_slice(&1001u32.to_le_bytes());
        p.swap_raw(&mut raw);
        assert_eq!(i32::from_le_bytes(raw[..4].try_into().unwrap()), 5000);
        assert_eq!(u32::from_le_bytes(raw[4..].try_into().unwrap()), 1001);
        p.swap_raw(&mut raw);
        assert_eq!(i32::from_le_bytes(raw[..4].try_into().unwrap()), 42);
        let mut zero = [0u8; 4];
        p.swap_raw(&mut zero);
        assert_eq!(zero, [0; 4], "no pid stays no pid");
        let mut short = [7u8; 3];
        p.swap_raw(&mut short);
        assert_eq!(short, [7; 3]);
    }

    #[test]
    fn a_senders_uid_is_kept() {
        let p = Pids::new(5000, 42);
        let word = 5000u64 | (1001u64 << 32);
        assert_eq!(p.seen_sender(word), 42 | (1001u64 << 32));
        assert_eq!(p.seen_sender(77 | (3u64 << 32)), 77 | (3u64 << 32));
    }

    proptest! {
        /// The translation is a bijection on ids: going to the host and
        /// back gives the same id, so no two processes look alike.
        #[test]
        fn to_the_host_and_back_is_the_identity(host in PID_MIN..PID_MAX, seen in PID_MIN..PID_MAX, pid in -(PID_MAX as i64)..=PID_MAX as i64) {
            let p = Pids::new(host, seen);
            prop_assert_eq!(p.seen(p.host(pid)), pid);
            prop_assert_eq!(p.host(p.seen(pid)), pid);
            prop_assert_eq!(p.seen(pid).signum(), pid.signum());
        }
    }
}

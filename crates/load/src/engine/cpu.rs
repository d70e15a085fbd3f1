//! The process's CPU time, user and system apart, for what a phase cost the client
//! (`ClientCpu`). getrusage counts every thread of the process, as the phase uses them all.

use std::time::Duration;

/// User and system CPU time of the process so far.
#[derive(Debug, Clone, Copy)]
pub(super) struct CpuTime {
    user: Duration,
    system: Duration,
}

impl CpuTime {
    /// `None` where the system will not say.
    #[cfg(unix)]
    #[allow(
        unsafe_code,
        reason = "no safe wrapper offers getrusage (rustix has none); the call only writes `usage`"
    )]
    pub(super) fn now() -> Option<CpuTime> {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `usage` is a valid, writable rusage for the duration of the call.
        let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } == 0;
        // SAFETY: zeroed is a valid rusage (plain integers), and a successful call filled it.
        let usage = unsafe { usage.assume_init() };
        let time = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec.max(0) as u64)
                + Duration::from_micros(t.tv_usec.max(0) as u64)
        };
        ok.then(|| CpuTime {
            user: time(usage.ru_utime),
            system: time(usage.ru_stime),
        })
    }

    #[cfg(not(unix))]
    pub(super) fn now() -> Option<CpuTime> {
        None
    }

    /// User and system time spent since `self`.
    pub(super) fn spent(self) -> Option<(Duration, Duration)> {
        let now = CpuTime::now()?;
        Some((
            now.user.saturating_sub(self.user),
            now.system.saturating_sub(self.system),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spinning_shows_as_user_time() {
        // The thread's own CPU clock says when it has spun 50 ms, however loaded the
        // machine (a wall-clock spin on a busy machine may get little of its time).
        let on_thread = || {
            let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
            Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
        };
        let before = CpuTime::now().expect("getrusage on Linux");
        let until = on_thread() + Duration::from_millis(50);
        let mut x = 0u64;
        // Reading that clock is a system call: read it once every 100,000 additions.
        while on_thread() < until {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        let (user, system) = before.spent().unwrap();
        // The process's time holds the thread's 50 ms (getrusage to the microsecond), and
        // a spin is mostly user time (the kernel splits user and system by its ticks).
        assert!(
            user + system >= Duration::from_millis(49),
            "{user:?} {system:?}"
        );
        assert!(user >= Duration::from_millis(25), "{user:?} {system:?}");
    }
}

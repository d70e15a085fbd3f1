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
        let before = CpuTime::now().expect("getrusage on Linux");
        let until = std::time::Instant::now() + Duration::from_millis(60);
        let mut x = 0u64;
        while std::time::Instant::now() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let (user, system) = before.spent().unwrap();
        // Spinning 60 ms of wall time on a shared machine: most of it is this thread's.
        assert!(
            user + system >= Duration::from_millis(20),
            "{user:?} {system:?}"
        );
    }
}

//! A server `tune` starts and stops: the user's command run by `sh -c` in a process group of
//! its own, its output in a file, and its end made sure of. Stopping signals that group and
//! nothing else (SIGTERM, a grace period, SIGKILL) and returns only once no process of the
//! group is left, so the next configuration's server finds its port free.

use rustix::process::{Pid, Signal, kill_process_group};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

/// How often an ending is looked for.
const POLL: Duration = Duration::from_millis(50);

/// How long a group may take to go after SIGKILL before it is given up on (a process in
/// uninterruptible sleep): the next server must not start beside it.
const AFTER_KILL: Duration = Duration::from_secs(10);

/// A running server: `sh -c COMMAND`, leader of its own process group.
pub struct LocalServer {
    child: Child,
    group: Pid,
    started: Instant,
    exited: Option<ExitStatus>,
}

/// What starting takes: the command as the user wrote it (filled), what its environment
/// gets besides ours, and the file its output goes to.
pub struct Spec<'a> {
    pub command: &'a str,
    pub env: &'a [(String, String)],
    pub log: &'a Path,
}

impl LocalServer {
    pub fn start(spec: &Spec<'_>) -> std::io::Result<LocalServer> {
        if let Some(dir) = spec.log.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let out = std::fs::File::create(spec.log)?;
        let err = out.try_clone()?;
        let child = Command::new("sh")
            .arg("-c")
            .arg(spec.command)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            // Its own group: everything it starts can be stopped together, and a Ctrl-C at
            // the terminal reaches the tool alone, which stops the server in its own time.
            .process_group(0)
            .spawn()?;
        let pid = child.id().and_then(|id| Pid::from_raw(id as i32));
        let group = pid.ok_or_else(|| std::io::Error::other("the server's shell has no pid"))?;
        Ok(LocalServer {
            child,
            group,
            started: Instant::now(),
            exited: None,
        })
    }

    /// The process group's id (the shell's pid), for a stop that cannot wait.
    pub fn group(&self) -> i32 {
        self.group.as_raw_nonzero().get()
    }

    pub fn age(&self) -> Duration {
        self.started.elapsed()
    }

    /// Once the command has exited: the server is then taken for dead.
    pub async fn exited(&mut self) -> ExitStatus {
        if let Some(s) = self.exited {
            return s;
        }
        let status = match self.child.wait().await {
            Ok(s) => s,
            // Not ours to wait for any more: it is gone either way.
            Err(_) => std::os::unix::process::ExitStatusExt::from_raw(0),
        };
        self.exited = Some(status);
        status
    }

    fn reap(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().ok().flatten();
        }
        self.exited
    }

    /// Stops the whole group: SIGTERM, up to `grace` for it to go, then SIGKILL. Returns how
    /// it ended, in words, once no process of it is left; an error when even SIGKILL left
    /// one behind.
    pub async fn stop(mut self, grace: Duration) -> Result<String, String> {
        if let Some(status) = self.reap()
            && !group_alive(self.group)
        {
            return Ok(format!(
                "{} after {:.1} s",
                ended(status),
                self.age().as_secs_f64()
            ));
        }
        let asked = Instant::now();
        let _ = kill_process_group(self.group, Signal::TERM);
        let mut killed = false;
        loop {
            tokio::time::sleep(POLL).await;
            self.reap();
            if self.exited.is_some() && !group_alive(self.group) {
                let after = asked.elapsed().as_secs_f64();
                return Ok(if killed {
                    format!(
                        "killed (SIGKILL) after the {:.1} s grace",
                        grace.as_secs_f64()
                    )
                } else {
                    format!("stopped by SIGTERM after {after:.1} s")
                });
            }
            if !killed && asked.elapsed() >= grace {
                let _ = kill_process_group(self.group, Signal::KILL);
                killed = true;
            }
            if killed && asked.elapsed() >= grace + AFTER_KILL {
                return Err(format!(
                    "process group {} still has processes {} s after SIGKILL",
                    self.group(),
                    AFTER_KILL.as_secs()
                ));
            }
        }
    }
}

/// SIGKILL to the group now: a second interrupt, when nothing may be waited for.
pub fn kill_now(group: i32) {
    if let Some(pid) = Pid::from_raw(group) {
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

/// How a command ended, in words.
pub fn ended(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("ended by signal {sig}"),
        (None, None) => "ended".into(),
    }
}

/// Whether any process of `group` is left that is not a zombie: a zombie holds no port
/// and runs nothing, and one whose parent is not ours may never be reaped here. Where
/// `/proc` cannot be read, any process at all.
pub fn group_alive(group: Pid) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return rustix::process::test_kill_process_group(group).is_ok();
    };
    let want = group.as_raw_nonzero().get();
    entries.flatten().any(|e| {
        let name = e.file_name();
        let is_pid = name
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
        is_pid
            && std::fs::read_to_string(e.path().join("stat")).is_ok_and(|stat| {
                let (state, pgrp) = state_and_group(&stat);
                pgrp == Some(want) && state != Some('Z')
            })
    })
}

/// A `/proc/PID/stat` line's state and process group: the fields after the command's
/// closing parenthesis (the command may hold spaces and parentheses of its own).
fn state_and_group(stat: &str) -> (Option<char>, Option<i32>) {
    let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return (None, None);
    };
    let mut fields = after.split_whitespace();
    let state = fields.next().and_then(|s| s.chars().next());
    let pgrp = fields.nth(1).and_then(|g| g.parse().ok());
    (state, pgrp)
}

/// The last `lines` lines of a server's log, made safe to show and store (escaped, known
/// secrets replaced); only its end is read, however large it grew.
pub fn tail(log: &Path, lines: usize) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    const LAST_BYTES: u64 = 64 * 1024;
    let Ok(mut f) = std::fs::File::open(log) else {
        return vec![];
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(LAST_BYTES)));
    let mut bytes = Vec::new();
    let _ = f.take(LAST_BYTES).read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..]
        .iter()
        .map(|l| encbench_core::text::truncate(&encbench_core::scrub::text(l), 300))
        .collect()
}

/// Where a configuration's output goes: its number and its values, as a file name.
pub fn log_path(dir: &Path, index: usize, label: &str) -> PathBuf {
    let safe: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "=.-_".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!(
        "{:02}-{}.log",
        index + 1,
        encbench_core::text::truncate(&safe, 80)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_past_a_command_with_parentheses() {
        let stat = "4242 (my (odd) server) S 1 4240 4240 0 -1 4194560";
        assert_eq!(state_and_group(stat), (Some('S'), Some(4240)));
        assert_eq!(state_and_group("garbage"), (None, None));
    }

    #[test]
    fn log_names_keep_the_values_and_lose_what_a_file_name_cannot_hold() {
        let p = log_path(Path::new("/tmp/x"), 1, "workers=4 model=a/b");
        assert_eq!(p, Path::new("/tmp/x/02-workers=4_model=a_b.log"));
    }

    #[tokio::test]
    async fn a_group_is_stopped_whole_and_its_log_kept() {
        let dir = std::env::temp_dir().join(format!("encbench-server-{}", std::process::id()));
        let log = dir.join("s.log");
        // A child that ignores SIGTERM, in the same group: the grace ends in SIGKILL.
        let spec = Spec {
            command: "echo up $ENCBENCH_PARAM_X; (trap '' TERM; sleep 30) & sleep 30",
            env: &[("ENCBENCH_PARAM_X".into(), "7".into())],
            log: &log,
        };
        let server = LocalServer::start(&spec).unwrap();
        let group = Pid::from_raw(server.group()).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(group_alive(group));
        let how = server.stop(Duration::from_millis(300)).await.unwrap();
        assert!(how.starts_with("killed (SIGKILL)"), "{how}");
        assert!(!group_alive(group));
        assert_eq!(tail(&log, 5), ["up 7"]);
        let _ = std::fs::remove_dir_all(dir);
    }
}

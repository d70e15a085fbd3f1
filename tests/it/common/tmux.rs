//! The real binary on a real terminal: a private tmux server per test (never the user's
//! sessions, never another test's), one session `ui`, read back with capture-pane.

use super::wait_until;
use std::process::Command;

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// A `w`×`h` session running `command`. The pane stays after the command ends.
    pub fn start(name: &str, w: u16, h: u16, command: &str) -> Tmux {
        let ok = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "tmux is required for this test (apt-get install tmux)");
        let t = Tmux {
            socket: format!("encbench-test-{}-{name}", std::process::id()),
        };
        let (w, h) = (w.to_string(), h.to_string());
        t.cmd(&["new-session", "-d", "-s", "ui", "-x", &w, "-y", &h]);
        t.cmd(&["set-option", "-t", "ui", "remain-on-exit", "on"]);
        t.respawn(command);
        t
    }

    /// Runs `command` in the pane, replacing what ran there, on a cleared screen (so an old
    /// exit line is not read as the new one). tmux sometimes marks a pane dead without ever
    /// reaping its process (no exit status): the shell prints the code instead.
    pub fn respawn(&self, command: &str) {
        self.cmd(&["clear-history", "-t", "ui"]);
        let wrapped = format!("printf '\\033[H\\033[2J'; {command}; echo exit=$?");
        self.cmd(&["respawn-pane", "-k", "-t", "ui", &wrapped]);
    }

    pub fn cmd(&self, args: &[&str]) -> String {
        let mut tmux = Command::new("tmux");
        // The server's environment is every pane's: none of the user's settings.
        for k in super::USER_SETTINGS {
            tmux.env_remove(k);
        }
        let out = tmux
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "ui"])
    }

    /// The screen plus `lines` of scrollback above it.
    pub fn history(&self, lines: u32) -> String {
        self.cmd(&["capture-pane", "-p", "-S", &format!("-{lines}"), "-t", "ui"])
    }

    pub fn keys(&self, keys: &str) {
        self.cmd(&["send-keys", "-t", "ui", keys]);
    }

    /// Polls the screen until `cond` holds; panics with the last screen after `secs`.
    pub fn wait_for(&self, what: &str, secs: u64, cond: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        loop {
            let last = self.screen();
            if cond(&last) {
                return last;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}; screen:\n{last}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    pub fn display(&self, what: &str) -> String {
        self.cmd(&["display-message", "-p", "-t", "ui", what])
            .trim()
            .to_string()
    }

    /// The binary's exit code, as the wrapping shell printed it.
    pub fn wait_exit(&self, secs: u64) -> i32 {
        let code = self.wait_for("the binary to exit", secs, |s| {
            s.lines().any(|l| l.starts_with("exit="))
        });
        let line = code.lines().find_map(|l| l.strip_prefix("exit=")).unwrap();
        let digits: String = line.chars().take_while(char::is_ascii_digit).collect();
        digits
            .parse()
            .unwrap_or_else(|_| panic!("no exit code in {line:?}:\n{code}"))
    }

    /// The binary, a child of the pane's shell.
    pub fn binary_pid(&self) -> u32 {
        let sh = self.display("#{pane_pid}");
        let mut pid = None;
        wait_until("the binary's pid", 10, || {
            let children = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children"))
                .unwrap_or_default();
            pid = children
                .split_whitespace()
                .next()
                .and_then(|p| p.parse().ok());
            pid.is_some()
        });
        pid.unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.cmd(&["kill-server"]);
    }
}

/// The `n` in the percentiles panel's title: the segment under way (the whole run after `w`).
pub fn percentiles_n(screen: &str) -> u64 {
    screen
        .split("percentiles · n ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

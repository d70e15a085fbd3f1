//! The live terminal UI: a front-end that steers the engine with keys and draws its snapshots.
//! It never sees a single request: frame cost depends on the screen, not on the run's length.

pub mod compare;
pub mod keys;
pub mod panels;
pub mod screen;
pub mod state;
pub mod terminal;
#[cfg(test)]
mod tests;
pub mod tune;
pub mod views;

use crate::signals::{Abort, Hangup, abort_now, stop_asked, wait_for_signal};
use encbench_core::results::RunReport;
use encbench_load::engine::{Command, Engine};
use ratatui::crossterm::event::Event;
use state::{Action, App, Info};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Writes an export of what has been measured so far; returns where, or why not.
pub type ExportNow = Box<dyn Fn(&RunReport) -> Result<String, String> + Send>;

/// Where the benchmark harness (`bench/run.sh`) asks for frame draw times: it cannot see
/// inside the process, and frame cost must be shown flat over a real run, not only a replay.
const FRAME_LOG_ENV: &str = "ENCBENCH_FRAME_LOG";

/// How long a message stays in the footer.
const STATUS_FOR: Duration = Duration::from_secs(4);

/// Frame costs bucketed by second of the run: one small entry per second, like the
/// engine's timeline. A frame's cost is the CPU time of the thread that draws it: on a
/// shared machine wall time mostly measures who else got the core.
struct FrameLog {
    start: Instant,
    /// (frames, total draw CPU time) per second.
    seconds: Vec<(u32, Duration)>,
}

impl FrameLog {
    fn add(&mut self, at: Instant, took: Duration) {
        let s = at.saturating_duration_since(self.start).as_secs() as usize;
        if self.seconds.len() <= s {
            self.seconds.resize(s + 1, (0, Duration::ZERO));
        }
        self.seconds[s].0 += 1;
        self.seconds[s].1 += took;
    }

    fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        let seconds: Vec<serde_json::Value> = self
            .seconds
            .iter()
            .enumerate()
            .map(|(t, (n, d))| serde_json::json!({ "t_s": t, "frames": n, "draw_cpu_us": d.as_micros() as u64 }))
            .collect();
        std::fs::write(path, serde_json::json!({ "seconds": seconds }).to_string())
    }
}

/// Runs the screen until the operator quits or a signal arrives, then stops the engine and
/// returns its report. The terminal is restored before this returns.
pub async fn run(
    engine: Engine,
    info: Info,
    fps: u64,
    export_now: ExportNow,
    abort: Abort,
) -> std::io::Result<RunReport> {
    let hangup = Hangup::default();
    let (mut terminal, restore) = terminal::init(&hangup)?;
    let mut events = terminal::events(&hangup);
    let mut screen = Screen::new(&engine, info, fps);
    screen
        .until_quit(&mut terminal, &mut events, &engine, &export_now, &hangup)
        .await;
    screen.app.status =
        Some("stopping: requests in flight, then the accuracy check after load… (Ctrl-C again: exit now)".into());
    let _ = terminal.draw(|f| {
        screen::draw(f, &screen.app);
    });
    engine.send(Command::Stop);
    let report = wind_down(engine, &mut events, restore, &abort).await;
    screen.write_frame_log();
    Ok(report)
}

/// The live screen as it runs: what it shows, when it draws, and what drawing cost.
struct Screen {
    app: App,
    snaps: tokio::sync::watch::Receiver<std::sync::Arc<encbench_load::engine::Snapshot>>,
    frame: tokio::time::Interval,
    /// When the footer's message goes.
    status_until: Option<tokio::time::Instant>,
    frame_log: FrameLog,
}

impl Screen {
    fn new(engine: &Engine, info: Info, fps: u64) -> Screen {
        let snaps = engine.snapshots();
        let app = App::new(info, snaps.borrow().clone());
        let mut frame = tokio::time::interval(Duration::from_millis(1000 / fps.clamp(1, 60)));
        frame.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        Screen {
            app,
            snaps,
            frame,
            status_until: None,
            frame_log: FrameLog {
                start: Instant::now(),
                seconds: Vec::new(),
            },
        }
    }

    /// Draws and serves keys until the operator quits, a signal arrives or the engine fails.
    async fn until_quit(
        &mut self,
        terminal: &mut terminal::Term,
        events: &mut mpsc::UnboundedReceiver<Event>,
        engine: &Engine,
        export_now: &ExportNow,
        hangup: &Hangup,
    ) {
        let signal = stop_asked(hangup);
        tokio::pin!(signal);
        loop {
            // A bug in a panel must not lose the run: stop drawing, keep the measurements.
            if !self.draw(terminal) {
                return;
            }
            tokio::select! {
                ev = events.recv() => match ev {
                    Some(Event::Key(k)) => match self.app.on_key(k) {
                        Action::Engine(c) => engine.send(c),
                        Action::Quit => return,
                        Action::ExportNow => self.export_now(engine, export_now),
                        Action::None => {}
                    },
                    Some(_) => {} // resize and others: the next draw adapts
                    None => return,
                },
                _ = self.frame.tick() => {
                    self.app.on_snapshot(self.snaps.borrow_and_update().clone());
                    if self.app.snap.state == encbench_load::engine::RunState::Failed {
                        return;
                    }
                    if std::mem::take(&mut self.app.status_new) {
                        self.status_until = Some(tokio::time::Instant::now() + STATUS_FOR);
                    } else if self.status_until.is_some_and(|t| tokio::time::Instant::now() >= t) {
                        self.app.status = None;
                        self.status_until = None;
                    }
                }
                () = &mut signal => return,
            }
        }
    }

    /// One frame, its CPU time logged; `false` when a panel panicked.
    fn draw(&mut self, terminal: &mut terminal::Term) -> bool {
        let drawing = Instant::now();
        let cpu_before = encbench_wire::timing::thread_cpu_time();
        let mut room = self.app.sweep_room;
        let app = &self.app;
        if catch_unwind(AssertUnwindSafe(|| {
            terminal.draw(|f| room = screen::draw(f, app)).map(|_| ())
        }))
        .is_err()
        {
            return false;
        }
        self.app.sweep_room = room;
        self.frame_log.add(
            drawing,
            encbench_wire::timing::thread_cpu_time().saturating_sub(cpu_before),
        );
        true
    }

    /// Key e: an export of what was measured so far, said in the footer for a few seconds.
    fn export_now(&mut self, engine: &Engine, export_now: &ExportNow) {
        self.app.say(match export_now(&engine.interim_report()) {
            Ok(path) => format!("exported to {path}"),
            Err(e) => format!("export failed: {e}"),
        });
    }

    fn write_frame_log(&self) {
        let Some(path) = std::env::var_os(FRAME_LOG_ENV).map(std::path::PathBuf::from) else {
            return;
        };
        if let Err(e) = self.frame_log.write(&path) {
            crate::stderr::say(format_args!(
                "{FRAME_LOG_ENV} {}: cannot write: {e}",
                path.display()
            ));
        }
    }
}

/// Waits for the stopped engine's report; a second interrupt meanwhile (Ctrl-C as a key, or
/// a signal) restores the terminal, writes what was measured and exits at once. The terminal
/// going away meanwhile is not a second interrupt: nobody asked twice.
async fn wind_down(
    engine: Engine,
    events: &mut mpsc::UnboundedReceiver<Event>,
    restore: terminal::Restore,
    abort: &Abort,
) -> RunReport {
    let interim = engine.interim();
    let finishing = engine.finish();
    tokio::pin!(finishing);
    // The signal future already fired if that is how we got here: listen for a fresh one.
    let again = wait_for_signal();
    tokio::pin!(again);
    let report = loop {
        tokio::select! {
            report = &mut finishing => break report,
            ev = events.recv() => match ev {
                Some(Event::Key(k)) if state::is_interrupt(&k) => {
                    drop(restore);
                    abort_now(abort, &interim);
                }
                Some(_) => {}
                None => break finishing.await,
            },
            () = &mut again => {
                drop(restore);
                abort_now(abort, &interim);
            }
        }
    };
    drop(restore);
    report
}

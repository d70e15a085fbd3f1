//! The configurations one after another: each one's server started, waited for until its
//! ready route answers, loaded by the engine as a run would load it, and stopped (its whole
//! process group gone) before the next starts. What each ended as is published in the view.

use super::{Plan, Slot};
use crate::app::AppError;
use crate::app::run::Workload;
use crate::cli::RunArgs;
use encbench_core::export::tune::{TuneConfiguration, TuneStatus, summary};
use encbench_core::export::{AccuracyExport, RunConfig};
use encbench_core::results::RunReport;
use encbench_core::tune::Assignment;
use encbench_load::engine::{Command, Engine, Hosts};
use encbench_load::setup::{self, Address, PreparedTarget, TargetSettings};
use encbench_load::tune::server::{self, LocalServer, Spec};
use encbench_load::tune::{ConfigurationState, Row, TuneView};
use encbench_wire::client::OnWaiting;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::watch;

/// Lines of a server's output kept in the export.
const TAIL_KEPT: usize = 20;

/// How the configurations went: the view as they left it, and an internal failure that
/// ended them early.
pub(super) struct Ended {
    pub view: TuneView,
    pub error: Option<String>,
}

pub(super) async fn run(
    plan: &Plan,
    view: watch::Sender<TuneView>,
    mut stop: watch::Receiver<bool>,
    slot: Slot,
    waiting: &OnWaiting,
) -> Ended {
    let clock = std::time::Instant::now();
    let mut error = None;
    for (i, values) in plan.grid.iter().enumerate() {
        if *stop.borrow() {
            break;
        }
        let row = match &plan.resumed[i] {
            Some(r) => r.clone(),
            None => {
                let mut one = One {
                    plan,
                    index: i,
                    values,
                    view: &view,
                    stop: &mut stop,
                    slot: &slot,
                    waiting,
                };
                let (row, internal) = Box::pin(one.run()).await;
                error = error.or(internal);
                row
            }
        };
        view.send_modify(|v| {
            v.rows[i] = row;
            v.current = None;
            v.server = None;
            v.log = None;
            v.elapsed = clock.elapsed();
        });
        if error.is_some() {
            break;
        }
    }
    view.send_modify(|v| {
        v.finished = true;
        v.elapsed = clock.elapsed();
    });
    Ended {
        view: view.borrow().clone(),
        error,
    }
}

/// Why a server was not measured.
enum NotReady {
    /// It failed: the reason.
    Failed(String),
    /// The tune was stopped meanwhile.
    Stopped,
}

/// One configuration under way.
struct One<'a> {
    plan: &'a Plan,
    index: usize,
    values: &'a Assignment,
    view: &'a watch::Sender<TuneView>,
    stop: &'a mut watch::Receiver<bool>,
    slot: &'a Slot,
    /// Told when a server is up and not ready yet.
    waiting: &'a OnWaiting,
}

impl One<'_> {
    fn label(&self) -> String {
        self.values.to_string()
    }

    fn set(&self, f: impl FnOnce(&mut TuneView)) {
        self.view.send_modify(f);
    }

    fn state(&self, s: ConfigurationState) {
        let i = self.index;
        self.set(|v| v.rows[i].state = s);
    }

    /// The row it ended as, and an internal failure that must end the tune.
    async fn run(&mut self) -> (Row, Option<String>) {
        let i = self.index;
        self.set(|v| v.current = Some(i));
        self.state(ConfigurationState::Starting);
        let row = Row::waiting(self.label());
        let port = self.plan.args.picks_port().then(free_port).flatten();
        let mut record = self.record();
        let conf = match self.plan.args.configuration(self.values, port) {
            Ok(c) => c,
            Err(e) => return (failed(row, record, e.trim_start_matches("error: ")), None),
        };
        let mut a = conf.run;
        a.seed = Some(self.plan.seed);
        record.instance_type.clone_from(&a.instance_type);
        record.price_per_hour_usd = price(&a);
        let run = settle(a);
        let url = run.url().to_string();
        record.url = Some(encbench_core::scrub::url(&url));
        if let Some(there) = answering(&url).await {
            let why = format!(
                "{there} answers before its server started: another server would be measured in its place; stop it, or give another port"
            );
            return (failed(row, record, &why), None);
        }
        let log = server::log_path(&self.plan.logs, i, &self.label());
        record.log = Some(log.display().to_string());
        let spec = Spec {
            command: &conf.serve,
            env: &conf.env,
            log: &log,
        };
        let srv = match LocalServer::start(&spec) {
            Ok(s) => s,
            Err(e) => return (failed(row, record, &format!("cannot run sh: {e}")), None),
        };
        let (group, shown) = (srv.group(), log.display().to_string());
        self.set(|v| {
            v.server = Some(group);
            v.log = Some(shown);
        });
        Box::pin(self.served(&run, srv, row, record)).await
    }

    /// With its server started: ready, measured, stopped.
    async fn served(
        &mut self,
        run: &ConfigurationRun,
        mut srv: LocalServer,
        mut row: Row,
        mut record: TuneConfiguration,
    ) -> (Row, Option<String>) {
        let mut internal = None;
        match self.ready(run, &mut srv).await {
            Ok((p, config)) => {
                record.ready_after_s = Some(round1(srv.age().as_secs_f64()));
                record.config = Some(config);
                let (r, ended) = self.measure(run, p, &mut srv).await;
                (record.status, record.reason) = ended;
                record.accuracy = AccuracyExport::of(&r.accuracy_before, &r.accuracy_after);
                internal = r.error.map(|e| format!("{}: {e}", self.label()));
                (row.phases, row.capacity, row.notices) = (r.phases, r.capacity, r.notices);
            }
            Err(NotReady::Failed(why)) => {
                (record.status, record.reason) = (TuneStatus::Failed, Some(why));
            }
            Err(NotReady::Stopped) => {
                record.status = TuneStatus::Incomplete;
                record.reason = Some("stopped while its server started".into());
            }
        }
        self.state(ConfigurationState::Stopping);
        let grace = Duration::from_secs_f64(self.plan.args.stop_grace);
        match srv.stop(grace).await {
            Ok(how) => record.server_exit = Some(how),
            Err(e) => {
                let why = format!("{}: its server would not stop: {e}", self.label());
                internal = internal.or(Some(why));
            }
        }
        if let Some(log) = &record.log {
            record.log_tail = server::tail(std::path::Path::new(log), TAIL_KEPT);
        }
        self.tag(&mut row);
        record.capacity = summary(&row.capacity, &row.label);
        row.state = ConfigurationState::Done(record.status);
        row.record = Some(record);
        (row, internal)
    }

    /// Its phases, answers and notices named after it.
    fn tag(&self, row: &mut Row) {
        let label = self.label();
        for p in &mut row.phases {
            p.target = Some(label.clone());
        }
        for c in &mut row.capacity {
            c.target = Some(label.clone());
        }
        for n in &mut row.notices {
            *n = format!("{label}: {n}");
        }
    }

    /// Its record before it ran: failed until it says otherwise.
    fn record(&self) -> TuneConfiguration {
        super::export::record(self.values, TuneStatus::Failed)
    }

    /// Until the server listens, its target is prepared as a run's would be, and its ready
    /// route says it can serve; its command exiting, or a stop, ends the wait.
    async fn ready(
        &mut self,
        run: &ConfigurationRun,
        srv: &mut LocalServer,
    ) -> Result<(PreparedTarget, Value), NotReady> {
        let stop = &mut *self.stop;
        tokio::select! {
            r = prepared(run, self.waiting) => r.map_err(NotReady::Failed),
            status = srv.exited() => Err(NotReady::Failed(format!(
                "its server {} {:.1} s after it started, before it was ready",
                server::ended(status),
                srv.age().as_secs_f64()
            ))),
            () = stopped(stop) => Err(NotReady::Stopped),
        }
    }

    /// The engine loads the configuration as a run would; its server exiting, or a stop,
    /// ends the load and keeps what was measured.
    async fn measure(
        &mut self,
        run: &ConfigurationRun,
        p: PreparedTarget,
        srv: &mut LocalServer,
    ) -> (RunReport, (TuneStatus, Option<String>)) {
        self.state(ConfigurationState::Measuring);
        let setup = match run.workload.clone().engine(p) {
            Ok(s) => s,
            Err(e) => return (empty_report(), (TuneStatus::Failed, Some(e.to_string()))),
        };
        let engine = Engine::start_among(Hosts::default(), setup);
        *lock(self.slot) = Some(engine.interim());
        let mut snaps = engine.snapshots();
        let commands = engine.commands();
        let finish = engine.finish();
        tokio::pin!(finish);
        let (mut died, mut stopped) = (None, false);
        let i = self.index;
        let report = loop {
            tokio::select! {
                r = &mut finish => break r,
                Ok(()) = snaps.changed() => {
                    let snap = snaps.borrow_and_update().clone();
                    self.set(|v| v.rows[i].snapshot = Some(snap));
                }
                Ok(()) = self.stop.changed(), if !stopped => {
                    if *self.stop.borrow() {
                        stopped = true;
                        let _ = commands.send(Command::Stop);
                    }
                }
                status = srv.exited(), if died.is_none() => {
                    died = Some((status, srv.age()));
                    let _ = commands.send(Command::Stop);
                }
            }
        };
        *lock(self.slot) = None;
        let report = RunReport {
            error: encbench_core::failure::describe(report.error),
            ..report
        };
        let ended = match (died, stopped) {
            (Some((status, age)), _) => (
                TuneStatus::Failed,
                Some(format!(
                    "its server {} {:.1} s after it started, during the load",
                    server::ended(status),
                    age.as_secs_f64()
                )),
            ),
            (None, true) => (
                TuneStatus::Incomplete,
                Some("stopped during the load: what it measured is kept, and is no answer".into()),
            ),
            (None, false) if report.error.is_some() => (TuneStatus::Failed, report.error.clone()),
            (None, false) => (TuneStatus::Measured, None),
        };
        (report, ended)
    }
}

fn lock(slot: &Slot) -> std::sync::MutexGuard<'_, Option<encbench_load::engine::Interim>> {
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Once a stop is asked (at once if it was).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

fn failed(mut row: Row, mut record: TuneConfiguration, why: &str) -> Row {
    record.status = TuneStatus::Failed;
    record.reason = Some(encbench_core::scrub::text(why));
    row.state = ConfigurationState::Done(TuneStatus::Failed);
    row.record = Some(record);
    row
}

fn empty_report() -> RunReport {
    let now = std::time::SystemTime::now();
    RunReport {
        started_at: now,
        ended_at: now,
        phases: vec![],
        capacity: vec![],
        accuracy_before: None,
        accuracy_after: None,
        timeline: vec![],
        stopped_early: false,
        error: None,
        notices: vec![],
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The hourly price a run of `a` is costed at: `--price-per-hour`, else its instance's.
pub(super) fn price(a: &RunArgs) -> Option<f64> {
    a.price_per_hour.or_else(|| {
        a.instance_type
            .as_deref()
            .and_then(encbench_core::pricing::instance_price)
    })
}

/// A port nothing listens on now, for `{port}`.
fn free_port() -> Option<u16> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .ok()
}

/// `host:port` of `url` when something accepts connections there.
async fn answering(url: &str) -> Option<String> {
    let (host, port) = encbench_wire::client::address::socket(url)?;
    let connect = tokio::net::TcpStream::connect((host.as_str(), port));
    let ok = tokio::time::timeout(Duration::from_millis(500), connect)
        .await
        .is_ok_and(|r| r.is_ok());
    ok.then(|| format!("{host}:{port}"))
}

/// A configuration's run as its command line settles it, once its port is filled in: a
/// run's parts, on one host, headless.
struct ConfigurationRun {
    target: TargetSettings,
    workload: Workload,
    record: RunConfig,
    /// `--ready-timeout` as given.
    ready_timeout_s: f64,
}

fn settle(a: RunArgs) -> ConfigurationRun {
    let (target, _) = crate::app::run::target(&a);
    let workload = crate::app::run::workload(&a, false);
    let record = crate::app::run::record(&a, &Hosts::default());
    let ready_timeout_s = a.ready_timeout;
    // `cli::tune` refuses a tune without --url: the started server is there.
    let address = Address::Url(a.url.unwrap_or_default());
    ConfigurationRun {
        target: TargetSettings { address, ..target },
        workload,
        record,
        ready_timeout_s,
    }
}

impl ConfigurationRun {
    fn url(&self) -> &str {
        match &self.target.address {
            Address::Url(u) => u,
            _ => "",
        }
    }
}

/// The configuration's target prepared and ready, with its run's config: once something
/// listens at its URL (until `--ready-timeout`), discovery and the ready route as a run's.
async fn prepared(
    run: &ConfigurationRun,
    waiting: &OnWaiting,
) -> Result<(PreparedTarget, Value), String> {
    let (url, timeout_s) = (run.url(), run.ready_timeout_s);
    let timeout = Duration::from_secs_f64(timeout_s);
    let started = tokio::time::Instant::now();
    while answering(url).await.is_none() {
        if started.elapsed() >= timeout {
            return Err(format!(
                "nothing listened at {} within --ready-timeout {} s",
                encbench_core::scrub::url(url),
                timeout_s
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let p = setup::prepare(&run.target)
        .await
        .map_err(|e| AppError::from(e).to_string())?;
    let mut record = run.record.clone();
    crate::app::run::resolve(&mut record, &p);
    let config = serde_json::to_value(record).expect("a run's config serializes");
    p.target
        .check_ready(waiting)
        .await
        .map_err(|e| e.to_string())?;
    Ok((p, config))
}

/// Where the configurations' output goes when `--server-logs` does not say.
pub(super) fn default_logs(export: Option<&std::path::Path>) -> PathBuf {
    match export.filter(|p| !crate::app::is_stdout(p)) {
        Some(p) => p.with_extension("logs"),
        None => std::env::temp_dir().join(format!("encbench-tune-{}", std::process::id())),
    }
}

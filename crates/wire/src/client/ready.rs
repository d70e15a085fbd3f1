//! The wait for a server that is up but not ready yet, one loop for the HTTP and gRPC
//! clients: each asks its own question (`/ping`, `ServerLive` and `ModelReady`), the loop
//! decides how long each try may take, when to give up, and when to tell the caller.

use super::TargetError;
use std::future::Future;
use std::time::Duration;

/// A server up but not ready yet, told once per wait: the caller shows it (a run's stderr)
/// or not (a screen that shows the same state its own way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The target as it may be shown.
    pub target: String,
    /// What its server said, or that it said nothing in time.
    pub reason: String,
}

impl std::fmt::Display for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "waiting for {} to become ready ({})",
            self.target, self.reason
        )
    }
}

/// What `Target::check_ready` tells while it waits.
pub type OnWaiting = dyn Fn(&Waiting) + Send + Sync;

/// One try's answer.
pub(crate) enum Look {
    /// Ready, with what the server said about itself.
    Ready(String),
    /// Up, and not ready: why.
    NotYet(String),
    /// No answer within the try's time.
    Silent,
}

/// Tries `look` until the server is ready, `look` fails (an unreachable server, an unknown
/// model: waiting would not change that), or `timeout` has passed.
pub(crate) async fn wait<F, Fut>(
    shown: &str,
    timeout: Duration,
    waiting: &OnWaiting,
    mut look: F,
) -> Result<String, TargetError>
where
    F: FnMut(Duration) -> Fut,
    Fut: Future<Output = Result<Look, TargetError>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let each = timeout.min(Duration::from_secs(5));
    let mut told = false;
    let mut last: Option<(String, bool)> = None;
    loop {
        // No try outlasts the timeout, whatever the server sends.
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let try_for = left.min(each);
        let (reason, silent) = match look(try_for).await? {
            Look::Ready(said) => return Ok(said),
            Look::NotYet(said) => (said, false),
            Look::Silent => match &last {
                // A try the deadline cut short says only that the time ran out ("no answer
                // within 0.0 s"): the try before it says why.
                Some((before, silent)) if try_for < each => (before.clone(), *silent),
                _ => (
                    format!("no answer within {:.1} s", try_for.as_secs_f64()),
                    true,
                ),
            },
        };
        last = Some((reason.clone(), silent));
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let pause = Duration::from_millis(250);
        if left <= pause {
            let waited = timeout.as_secs_f64();
            return Err(TargetError::Unhealthy {
                target: shown.to_string(),
                reason: if silent {
                    format!(
                        "no answer in {waited} s, each try waiting {:.1} s: --ready-timeout waits longer",
                        each.as_secs_f64()
                    )
                } else {
                    format!("{reason}, still after {waited} s")
                },
            });
        }
        if !told {
            waiting(&Waiting {
                target: shown.to_string(),
                reason,
            });
            told = true;
        }
        tokio::time::sleep(pause).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[tokio::test]
    async fn a_server_not_ready_is_told_once_then_given_up_on_with_the_try_before() {
        let told = Arc::new(Mutex::new(vec![]));
        let kept = told.clone();
        let on = move |w: &Waiting| kept.lock().unwrap().push(w.to_string());
        let mut tries = 0;
        let r = wait("http://h", Duration::from_millis(600), &on, |_| {
            tries += 1;
            let n = tries;
            async move {
                Ok(if n == 1 {
                    Look::NotYet("GET /ping answered 503".into())
                } else {
                    Look::Silent
                })
            }
        })
        .await;
        assert_eq!(
            *told.lock().unwrap(),
            ["waiting for http://h to become ready (GET /ping answered 503)"]
        );
        let e = r.unwrap_err().to_string();
        assert_eq!(
            e, "http://h: not healthy (GET /ping answered 503, still after 0.6 s)",
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_ready_server_is_not_told_about() {
        let on = |_: &Waiting| panic!("nothing to tell");
        let r = wait("h", Duration::from_secs(1), &on, |_| async {
            Ok(Look::Ready("ok".into()))
        });
        assert_eq!(r.await.unwrap(), "ok");
    }
}

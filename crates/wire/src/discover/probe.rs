//! The requests of one discovery: the GETs sent at once, and each answer read (status, JSON
//! body), said in `tried` as it is taken.

use super::{Ask, Found, Refused, refused};
use crate::client::{body, tls};
use crate::payload::{Api, PayloadFormat};
use encbench_core::choice::Choice;
use encbench_core::export::Detected;
use serde_json::Value;

/// The requests of one discovery, each said in `tried`.
pub(super) struct Probe {
    client: reqwest::Client,
    pub(super) base: String,
    pub(super) tried: Vec<String>,
    /// Answers fetched ahead, all at once, taken as the order of discovery asks for them.
    pub(super) ahead: Vec<Fetched>,
}

/// A request as `tried` says it, and its answer.
pub(super) type Fetched = (String, Result<Answer, Refused>);

/// An answer: its status, and its body when it is JSON.
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) json: Option<Value>,
    pub(super) empty: bool,
}

impl Answer {
    pub(super) fn ok_json(self) -> Option<Value> {
        (200..300)
            .contains(&self.status)
            .then_some(self.json)
            .flatten()
    }
}

/// One request: the line `tried` keeps of it, and its answer. A refusal of credentials
/// ends the discovery (waiting would not change it), as nothing answering at all does.
async fn fetch(
    client: reqwest::Client,
    base: String,
    method: &'static str,
    path: String,
    body: Option<Value>,
) -> Fetched {
    let url = format!("{base}{path}");
    let req = match &body {
        None => client.get(&url),
        Some(b) => client.post(&url).json(b),
    };
    let shown = || encbench_core::scrub::url(&base);
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) if e.is_timeout() => {
            let answer = Answer {
                status: 0,
                json: None,
                empty: true,
            };
            return (format!("{method} {path} no answer"), Ok(answer));
        }
        Err(e) => {
            let why = crate::client::url::short_reason(&e);
            let message = format!("{}: endpoint unreachable ({why})", shown());
            let r = Refused {
                unreachable: true,
                ..refused("--url", message)
            };
            return (format!("{method} {path} unreachable"), Err(r));
        }
    };
    let status = resp.status().as_u16();
    let line = format!("{method} {path} {status}");
    if matches!(status, 401 | 403) {
        let message = format!(
            "{}: {method} {path} answered {status}: the server wants credentials (--header, --bearer-token-env)",
            shown()
        );
        return (line, Err(refused("--url", message)));
    }
    let (json, empty) = match body::read_reqwest(resp, body::MAX_PROBE_BYTES).await {
        Ok((b, false)) => (serde_json::from_slice(&b).ok(), b.trim_ascii().is_empty()),
        _ => (None, false),
    };
    (
        line,
        Ok(Answer {
            status,
            json,
            empty,
        }),
    )
}

impl Probe {
    /// Sends every GET of `paths` at once: discovery then takes as long as the slowest
    /// answer, not the sum of them (a server that trickles every route costs one wait).
    pub(super) async fn ahead(&mut self, paths: &[&str]) {
        let mut set = tokio::task::JoinSet::new();
        for (i, path) in paths.iter().enumerate() {
            let (client, base, path) =
                (self.client.clone(), self.base.clone(), (*path).to_string());
            set.spawn(async move { (i, fetch(client, base, "GET", path, None).await) });
        }
        let mut answers: Vec<(usize, Fetched)> = vec![];
        while let Some(done) = set.join_next().await {
            if let Ok(a) = done {
                answers.push(a);
            }
        }
        answers.sort_by_key(|(i, _)| *i);
        self.ahead = answers.into_iter().map(|(_, a)| a).collect();
    }

    pub(super) async fn send(
        &mut self,
        method: &'static str,
        path: &str,
        body: Option<Value>,
    ) -> Result<Answer, Refused> {
        let wanted = format!("{method} {path} ");
        let (line, answer) = match self.ahead.iter().position(|(l, _)| l.starts_with(&wanted)) {
            Some(i) => self.ahead.remove(i),
            None => {
                let (client, base) = (self.client.clone(), self.base.clone());
                fetch(client, base, method, path.to_string(), body).await
            }
        };
        self.tried.push(line);
        answer
    }

    pub(super) async fn get(&mut self, path: &str) -> Result<Answer, Refused> {
        self.send("GET", path, None).await
    }

    pub(super) async fn post(&mut self, path: &str, body: Value) -> Result<Answer, Refused> {
        self.send("POST", path, Some(body)).await
    }

    /// What was found: `said` is the task the server says its model has (its kind), which
    /// `asked` (`--api`) overrides for the requests but not in the record.
    pub(super) fn found(
        self,
        family: PayloadFormat,
        server: String,
        model: Option<String>,
        said: Option<Api>,
        asked: Option<Api>,
    ) -> Found {
        Found {
            family,
            api: asked.or(said),
            prefix: "",
            record: Detected {
                engine: family.name().into(),
                server,
                kind: said.map(|a| a.kind().to_string()),
                model: model.clone(),
                max_client_batch: None,
                tried: self.tried,
            },
            model,
        }
    }
}

pub(super) fn probe(ask: &Ask<'_>) -> Result<Probe, Refused> {
    let mut builder = tls::reqwest_builder()
        .default_headers(ask.headers.map())
        .timeout(ask.wait)
        .connect_timeout(ask.wait);
    // Plain HTTP needs no root certificates: loading them is most of what building a
    // client costs (about 16 million instructions, measured with callgrind).
    if ask.url.starts_with("http://") {
        builder = builder.tls_certs_only(std::iter::empty());
    }
    let client = builder
        .build()
        .map_err(|e| refused("--url", format!("cannot build an HTTP client: {e}")))?;
    Ok(Probe {
        client,
        base: ask.url.trim_end_matches('/').to_string(),
        tried: vec![],
        ahead: vec![],
    })
}

//! The daemon's HTTP listener (`serve:`): webhook deliveries from GitHub
//! (`POST /webhooks/github`, `X-Hub-Signature-256`) and GitLab (`POST /webhooks/gitlab`,
//! `X-Gitlab-Token`), verified and handed to the sweep worker as nudges; and, rendered on
//! request from the database through a reading connection of each serving thread's own, the
//! metrics (`GET /metrics`), the status page (`GET /`) and the daemon's health
//! (`GET /healthz`: the last sweep's time and whether it succeeded).
//!
//! A delivery is answered as soon as it is verified and handed over: nothing here waits for
//! the forge or for the sweep. 401 for a bad signature or token, 413 for a body over 25 MiB,
//! 202 otherwise (an event that names no watched PR changes nothing).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::commands::listener::{self, Limits, Request};
use crate::config::Config;
use crate::locked::Locked;
use crate::model::nudge::Nudge;
use crate::model::{Instant, stamp};
use crate::store::Store;

/// The largest delivery read (GitHub caps its payloads at 25 MiB).
pub const MAX_BODY: usize = 25 * 1024 * 1024;

/// What a client may take: a delivery arrives whole within 30 s (its head within 10 s: the
/// forges give up after 10 s), 256 connections are read at once, four requests are handled at
/// once (a page being rendered never holds up a delivery).
const LIMITS: Limits = Limits {
    head: std::time::Duration::from_secs(10),
    whole: std::time::Duration::from_secs(30),
    max_body: MAX_BODY,
    readers: 256,
    workers: 4,
};

/// How the last sweep went, as `/healthz` tells it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LastSweep {
    /// When it ended, on the daemon's clock; `None` before the first one ends.
    pub at: Option<Instant>,
    /// Whether every PR's tick in it completed.
    pub ok: bool,
}

/// What the worker and the listener share.
#[derive(Debug, Default)]
pub struct Shared {
    pub last_sweep: Locked<LastSweep>,
}

/// Where nudges go: the sweep worker.
pub type NudgeSink = Box<dyn Fn(Vec<Nudge>) + Send + Sync>;

/// Everything a serving thread needs.
struct Listener {
    config: Config,
    database: PathBuf,
    /// `--now`, when the clock is fixed; else the page is rendered at the wall clock's now.
    fixed_now: Option<Instant>,
    github_secret: Option<String>,
    gitlab_token: Option<String>,
    shared: Arc<Shared>,
    nudge: NudgeSink,
}

type Reply = listener::Response;

/// Reads a webhook secret from the environment variable `name` (held, so it is masked
/// wherever pr-monitor writes); `None`, said once, when it is unset or empty.
fn secret(name: &str, forge: &str) -> Option<String> {
    let value = std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    match &value {
        Some(v) => crate::secrets::hold(v),
        None => {
            tracing::warn!("`{name}` is not set: every {forge} webhook delivery is refused (401)");
        }
    }
    value
}

/// Binds `serve.listen` and starts serving; returns the address bound (port 0 takes a free
/// one). Deliveries go to `nudge`; `/healthz` reads `shared`.
pub fn start(
    config: &Config,
    database: PathBuf,
    fixed_now: Option<Instant>,
    shared: Arc<Shared>,
    nudge: NudgeSink,
) -> Result<SocketAddr> {
    let Some(serve) = &config.serve else {
        anyhow::bail!("the config has no `serve` block");
    };
    let listener = std::net::TcpListener::bind(serve.listen)
        .with_context(|| format!("cannot listen on `{}`", serve.listen))?;
    let addr = listener.local_addr()?;
    let this = Arc::new(Listener {
        config: config.clone(),
        database,
        fixed_now,
        github_secret: secret(&serve.github_webhook_secret_env, "GitHub"),
        gitlab_token: secret(&serve.gitlab_webhook_token_env, "GitLab"),
        shared,
        nudge,
    });
    listener::serve(listener, LIMITS, || {
        let (this, mut store) = (Arc::clone(&this), None);
        Box::new(move |request| this.serve(&request, &mut store))
    });
    Ok(addr)
}

impl Listener {
    fn serve(&self, request: &Request, store: &mut Option<Store>) -> Reply {
        let path = request.path.as_str();
        match (request.method.as_str(), path) {
            ("POST", "/webhooks/github" | "/webhooks/gitlab") => self.delivery(request, path),
            ("GET", "/metrics") => {
                self.rendered(store, "text/plain; version=0.0.4; charset=utf-8", |s| {
                    crate::tick::metrics::text(s)
                })
            }
            ("GET", "/") => {
                let now = self.fixed_now.unwrap_or_else(crate::clock::wall_now);
                self.rendered(store, "text/html; charset=utf-8", |s| {
                    crate::tick::pages::text(&self.config, s, now)
                })
            }
            ("GET", "/healthz") => self.health(),
            (_, "/webhooks/github" | "/webhooks/gitlab" | "/metrics" | "/" | "/healthz") => {
                Reply::text(405, "method not allowed")
            }
            _ => Reply::text(404, "not found"),
        }
    }

    /// A webhook delivery (its size was checked as it was read): its signature, then what it
    /// names.
    fn delivery(&self, request: &Request, path: &str) -> Reply {
        let github = path == "/webhooks/github";
        let body = &request.body;
        let named = |name: &str| request.header(name).map(str::to_owned);
        let (forge, nudges) = if github {
            let signature = named("X-Hub-Signature-256");
            let secret = self.github_secret.as_deref().unwrap_or("").as_bytes();
            if !crate::forge::github::webhook::signed(secret, body, signature.as_deref()) {
                tracing::info!(
                    "a GitHub webhook delivery was refused: its signature does not verify"
                );
                return Reply::text(401, "the signature does not verify");
            }
            let event = named("X-GitHub-Event").unwrap_or_default();
            (
                "GitHub",
                crate::forge::github::webhook::nudges(&event, body),
            )
        } else {
            let token = self.gitlab_token.as_deref().unwrap_or("").as_bytes();
            if !crate::forge::gitlab::webhook::admitted(token, named("X-Gitlab-Token").as_deref()) {
                tracing::info!(
                    "a GitLab webhook delivery was refused: its token is not the one configured"
                );
                return Reply::text(401, "the token is not the one configured");
            }
            ("GitLab", crate::forge::gitlab::webhook::nudges(body))
        };
        tracing::debug!(
            "a {forge} webhook delivery names {} PR(s) or heads",
            nudges.len()
        );
        if !nudges.is_empty() {
            (self.nudge)(nudges);
        }
        Reply::text(202, "accepted")
    }

    /// A view rendered from the database, through this thread's reading connection (opened
    /// on first use, and again after an error).
    fn rendered(
        &self,
        store: &mut Option<Store>,
        content_type: &'static str,
        render: impl FnOnce(&Store) -> Result<String>,
    ) -> Reply {
        if store.is_none() {
            match Store::open_for_reading(&self.database) {
                Ok(s) => *store = Some(s),
                Err(e) => return Self::failed(&e),
            }
        }
        let Some(s) = store.as_ref() else {
            return Reply::text(500, "the database cannot be read");
        };
        match render(s) {
            Ok(body) => {
                let mut headers = vec![("Content-Type", content_type.to_owned())];
                if content_type.starts_with("text/html") {
                    let csp = crate::view::status_page::CSP.to_owned();
                    headers.push(("Content-Security-Policy", csp));
                }
                Reply {
                    status: 200,
                    headers,
                    body,
                }
            }
            Err(e) => {
                *store = None;
                Self::failed(&e)
            }
        }
    }

    fn failed(e: &anyhow::Error) -> Reply {
        let what = crate::secrets::mask(&format!("{e:#}"));
        crate::logging::complain(&format!("serving a view failed: {what}"));
        Reply::text(500, "the database cannot be read")
    }

    /// `/healthz`: 200 while the last sweep succeeded, 503 before the first one ends and
    /// after one that failed.
    fn health(&self) -> Reply {
        let last = self.shared.last_sweep.get();
        let healthy = last.at.is_some() && last.ok;
        Reply {
            status: if healthy { 200 } else { 503 },
            headers: vec![("Content-Type", "application/json".to_owned())],
            body: format!(
                "{}\n",
                serde_json::json!({
                    "ok": healthy,
                    "last_sweep_at": last.at.map(stamp),
                    "last_sweep_ok": last.at.map(|_| last.ok),
                })
            ),
        }
    }
}

//! HTTP for forge clients: bearer auth, retries with growing back-off, rate-limit waits, and
//! the mapping of status codes to [`ForgeError`].
//!
//! Reads are retried up to three times on 5xx, timeouts and refused connections. Writes whose
//! outcome is unknown are never retried here: the caller re-reads the PR first. A spent rate
//! limit (REST's 403/429, or GraphQL's HTTP 200 with `errors[].type: RATE_LIMITED`) is waited
//! out when the reset is near, otherwise every later request of this client
//! fails fast until the reset (the limit is shared by everything one token does).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::collections::BTreeMap;

use crate::address::{Address, is_https_or_loopback, is_loopback};
use crate::forge::ForgeError;
use crate::forge::deadline::{Deadline, Limits};
use crate::forge::rate::{self, RateFigures};
use crate::forge::tail;
use crate::forge::wait::{self, GIVE_UP_BLOCK, Limit, rate_limit_sleep};
use crate::locked::{Gate, Locked};

mod body;
pub use body::Body;

/// How many times a failed read is tried again.
pub const RETRIES: u32 = 3;
/// The most requests one client has under way at once, over its reused connections.
pub const MAX_IN_FLIGHT: usize = 8;

/// Whether a request may be repeated after an unknown outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idempotency {
    /// Reads (including GraphQL queries sent by POST): retried on transient failures.
    Retry,
    /// Writes: a transient failure is returned at once, for the caller to re-read.
    Once,
}

/// One answer.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub location: Option<String>,
    /// GitLab's `x-next-page` header, when it names a page (it is empty on the last one).
    pub next_page: Option<String>,
    /// The `date` header: the forge's own clock when it answered.
    pub date: Option<String>,
    pub body: String,
}

/// What a client has used: the metrics' forge counters and rate-limit gauge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub requests: u64,
    /// Points against the secondary limits (see [`crate::forge::call::points`]).
    pub points: u64,
    /// The primary limit's `remaining`, from the last answer that said it.
    pub rate_limit_remaining: Option<u64>,
}

impl Usage {
    /// Both together: counts add up, the later `remaining` wins.
    #[must_use]
    pub fn then(self, later: Usage) -> Usage {
        Usage {
            requests: self.requests + later.requests,
            points: self.points + later.points,
            rate_limit_remaining: later.rate_limit_remaining.or(self.rate_limit_remaining),
        }
    }
}

/// A forge HTTP client bound to one token.
pub struct HttpClient {
    proxied: ureq::Agent,
    direct: ureq::Agent,
    token: String,
    /// Send GitHub's `Accept` and API-version headers (off for GitLab).
    github_headers: bool,
    backoff: Duration,
    blocked_until: Locked<Option<SystemTime>>,
    /// Secondary limits without `Retry-After` met in a row (this run's and, once told by
    /// [`HttpClient::hold`], earlier runs'): each holds the host twice as long as the last.
    secondary_streak: Locked<u32>,
    /// Time this client has slept on rate limits (bounded by `RATE_LIMIT_BUDGET`).
    rate_limit_slept: Locked<Duration>,
    requests: Locked<u64>,
    /// Points spent against the secondary limits (see [`crate::forge::call::points`]).
    points: Locked<u64>,
    /// The primary limit's `remaining` from the last answer that said it.
    rate_limit_remaining: Locked<Option<u64>>,
    /// Bounds the requests this client has under way at once (its threads share it).
    in_flight: Gate,
    /// The last figures of each budget resource the forge's answers named.
    rates: Locked<BTreeMap<String, RateFigures>>,
    /// GraphQL points charged this run, as the answers' `rateLimit { cost }` said.
    graphql_cost: Locked<u64>,
    /// The request timeout and the run's time on this forge (see [`crate::forge::deadline`]).
    deadline: Deadline,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("token", &"***")
            .field("requests", &self.requests.get())
            .finish_non_exhaustive()
    }
}

/// Refuses URLs a token must not be sent to: anything but https, except plain http to loopback.
pub fn check_url(url: &str) -> Result<(), String> {
    if is_https_or_loopback(url) {
        Ok(())
    } else if url.starts_with("http://") {
        Err(format!(
            "`{url}` is plain http to a host that is not loopback; use https"
        ))
    } else {
        Err(format!("`{url}` is not an http(s) URL"))
    }
}

/// A forge client's agent: it keeps as many idle connections to a host as it has requests in
/// flight ([`MAX_IN_FLIGHT`]), so a burst of reads finds them all open again (ureq keeps three
/// by default: each burst of eight would connect five times, a TLS handshake each, again).
/// The API's host and a blob host that logs are fetched from are kept apart.
fn agent(proxy_from_env: bool, timeout: Duration) -> ureq::Agent {
    crate::http::config(timeout, !proxy_from_env)
        .max_idle_connections_per_host(KEPT_PER_HOST)
        .max_idle_connections(2 * KEPT_PER_HOST)
        .build()
        .into()
}

/// Idle connections a forge client keeps open to one host.
const KEPT_PER_HOST: usize = MAX_IN_FLIGHT;

fn header(resp: &ureq::http::Response<ureq::Body>, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Request headers that carry credentials; a forge or proxy that echoes one back never gets
/// its value into an error.
const CREDENTIAL_HEADERS: [&str; 5] = [
    "authorization",
    "proxy-authorization",
    "private-token",
    "cookie",
    "x-api-key",
];

/// `text` with the value after any credential header name cut (`Authorization: ***`), and
/// every held secret masked.
fn without_credentials(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for (start, _) in lower.match_indices(':') {
        if start < rest {
            continue;
        }
        let name_start = lower[..start]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .map_or(0, |i| i + 1);
        if CREDENTIAL_HEADERS.contains(&&lower[name_start..start]) {
            let end = lower[start..]
                .find(['\n', '"', ','])
                .map_or(text.len(), |i| start + i);
            out.push_str(&text[rest..=start]);
            out.push_str(" ***");
            rest = end;
        }
    }
    out.push_str(&text[rest..]);
    crate::secrets::mask(&out)
}

/// The message inside a forge's JSON error body, or the body itself, shortened; never a
/// credential the request carried.
pub fn error_message(body: &str) -> String {
    let body = &without_credentials(body);
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let msg = parsed
        .as_ref()
        .and_then(|v| v.get("message").or_else(|| v.get("error")))
        .and_then(|m| {
            m.as_str()
                .map(str::to_owned)
                .or_else(|| Some(m.to_string()))
        })
        .unwrap_or_else(|| body.trim().to_owned());
    msg.chars().take(300).collect()
}

impl HttpClient {
    /// A client sending `token` as a bearer token.
    pub fn new(token: String) -> Self {
        let limits = Limits::default();
        HttpClient {
            proxied: agent(true, limits.timeout),
            direct: agent(false, limits.timeout),
            token,
            github_headers: true,
            backoff: Duration::from_millis(250),
            blocked_until: Locked::new(None),
            secondary_streak: Locked::new(0),
            rate_limit_slept: Locked::new(Duration::ZERO),
            requests: Locked::new(0),
            points: Locked::new(0),
            rate_limit_remaining: Locked::new(None),
            in_flight: Gate::new(MAX_IN_FLIGHT),
            rates: Locked::new(BTreeMap::new()),
            graphql_cost: Locked::new(0),
            deadline: Deadline::new(limits),
        }
    }

    /// The same client under `limits`: each request's timeout, and the run's time on the
    /// forge, counted from now.
    #[must_use]
    pub fn with_limits(self, limits: Limits) -> Self {
        HttpClient {
            proxied: agent(true, limits.timeout),
            direct: agent(false, limits.timeout),
            deadline: Deadline::new(limits),
            ..self
        }
    }

    /// A client sending `token` as a bearer token without GitHub's media-type and API-version
    /// headers (GitLab accepts `Authorization: Bearer` for personal and OAuth tokens).
    pub fn without_github_headers(token: String) -> Self {
        HttpClient {
            github_headers: false,
            ..Self::new(token)
        }
    }

    /// How many HTTP requests this client has sent.
    pub fn requests(&self) -> u64 {
        self.requests.get()
    }

    /// What this client has used so far: requests, points, the limit's last `remaining`.
    pub fn usage(&self) -> Usage {
        Usage {
            requests: self.requests.get(),
            points: self.points.get(),
            rate_limit_remaining: self.rate_limit_remaining.get(),
        }
    }

    /// The last figures of each budget resource the forge's answers named this run.
    pub fn rates(&self) -> Vec<RateFigures> {
        self.rates.borrow().values().cloned().collect()
    }

    /// A fingerprint of this client's token (see [`rate::identity`]).
    pub fn identity(&self) -> String {
        rate::identity(&self.token)
    }

    /// This client's budget at `url`'s host: `reads` is the resource PR reads spend, `spent`
    /// what they spent so far.
    pub fn budget(&self, url: &str, reads: &'static str, spent: u64) -> rate::Budget {
        rate::Budget {
            host: rate::host_of(url),
            identity: self.identity(),
            reads,
            figures: self.rates(),
            spent,
        }
    }

    /// Keeps `figures` as the latest of their resource.
    pub fn note_rate(&self, figures: RateFigures) {
        let mut rates = self.rates.borrow();
        let kept = rate::merged(rates.get(&figures.resource), figures);
        rates.insert(kept.resource.clone(), kept);
    }

    /// Counts `points` charged to the GraphQL budget (an answer's `rateLimit { cost }`).
    pub fn note_graphql_cost(&self, points: u64) {
        self.graphql_cost.update(|c| *c += points);
    }

    /// GraphQL points charged this run, as the answers said.
    pub fn graphql_cost(&self) -> u64 {
        self.graphql_cost.get()
    }

    /// Counts one call and logs it at debug level: method, path template (GraphQL: with the
    /// operation), status, duration, points, the limit's remaining. Never the token or a query
    /// string.
    fn record(
        &self,
        method: &str,
        url: &str,
        body: Option<&Body>,
        status: Option<u16>,
        started: std::time::Instant,
    ) {
        let path = crate::forge::call::template(&path_of(url));
        let graphql = path.ends_with("/graphql");
        let points = crate::forge::call::points(
            method,
            graphql,
            graphql && body.is_some_and(Body::is_mutation),
        );
        self.points.update(|n| *n += points);
        let operation = body.and_then(Body::operation).filter(|_| graphql);
        tracing::debug!(
            method,
            path = %path,
            operation = operation.unwrap_or(""),
            status = status.unwrap_or(0),
            duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            points,
            rate_limit_remaining = self.rate_limit_remaining.get(),
            "forge call"
        );
    }

    fn agent_for(&self, url: &str) -> &ureq::Agent {
        if is_loopback(url) {
            &self.direct
        } else {
            &self.proxied
        }
    }

    /// Sends one request with the token, following the retry and rate-limit rules.
    pub fn send(
        &self,
        method: &str,
        url: &str,
        body: Option<&Body>,
        idem: Idempotency,
    ) -> Result<Response, ForgeError> {
        self.send_as(method, url, body, idem, &self.token)
    }

    /// [`HttpClient::send`] with another bearer token than the client's own (a GitHub App's
    /// JWT or installation token).
    pub fn send_as(
        &self,
        method: &str,
        url: &str,
        body: Option<&Body>,
        idem: Idempotency,
        token: &str,
    ) -> Result<Response, ForgeError> {
        self.send_with(method, url, body, idem, token, None)
    }

    /// [`HttpClient::send_as`], asking only for the document's last `tail` bytes when given.
    fn send_with(
        &self,
        method: &str,
        url: &str,
        body: Option<&Body>,
        idem: Idempotency,
        token: &str,
        tail: Option<u64>,
    ) -> Result<Response, ForgeError> {
        check_url(url).map_err(ForgeError::Unexpected)?;
        let mut attempt = 0;
        let mut waits = 0;
        loop {
            if let Some(refused) = self.deadline.refusal(&host_of(url)) {
                return Err(refused);
            }
            if let Some(until) = self.blocked_until.get() {
                if let Ok(left) = until.duration_since(SystemTime::now()) {
                    return Err(ForgeError::RateLimited {
                        retry_after_secs: Some(left.as_secs() + 1),
                    });
                }
                self.blocked_until.set(None);
            }
            let outcome = self.send_once(method, url, body, Some(token), tail);
            let transient = match outcome {
                Ok(resp) if resp.0.status >= 500 => {
                    ForgeError::Transient(format!("HTTP {} from {}", resp.0.status, path_of(url)))
                }
                Ok((_, Some(Limit::Secondary))) => {
                    return Err(self.hold_after_secondary_limit());
                }
                Ok((resp, Some(Limit::Wait(asked)))) => {
                    let spent = self.rate_limit_slept.get();
                    if let Some(wait) = rate_limit_sleep(asked, waits, spent) {
                        std::thread::sleep(wait);
                        self.rate_limit_slept.set(spent + wait);
                        waits += 1;
                        continue;
                    }
                    let wait = asked.max(GIVE_UP_BLOCK);
                    self.blocked_until.set(Some(SystemTime::now() + wait));
                    let _ = resp;
                    return Err(ForgeError::RateLimited {
                        retry_after_secs: Some(wait.as_secs()),
                    });
                }
                Ok((resp, None)) => {
                    self.end_secondary_streak();
                    return Ok(resp);
                }
                Err(e) => e,
            };
            if idem == Idempotency::Once || attempt >= RETRIES {
                return Err(transient);
            }
            std::thread::sleep(self.backoff * 2u32.pow(attempt));
            attempt += 1;
        }
    }

    /// Holds this client's host as an earlier run left it: no request is sent before `until`,
    /// and the next secondary limit is the `streak + 1`th in a row.
    pub fn hold(&self, until: SystemTime, streak: u32) {
        if until > SystemTime::now() && self.blocked_until.get().is_none_or(|b| b < until) {
            self.blocked_until.set(Some(until));
        }
        self.secondary_streak.set(streak);
    }

    /// A secondary limit without `Retry-After` was met: the host is held (a minute, doubling
    /// with each one in a row), kept as the `secondary` figures for the next run, and the
    /// request fails as rate limited.
    fn hold_after_secondary_limit(&self) -> ForgeError {
        let streak = self.secondary_streak.get() + 1;
        self.secondary_streak.set(streak);
        let hold = wait::secondary_hold(streak);
        let until = SystemTime::now() + hold;
        self.blocked_until.set(Some(until));
        self.note_rate(rate::secondary_hold(streak, epoch_secs(until)));
        tracing::warn!(
            hold_secs = hold.as_secs(),
            streak,
            "secondary rate limit without Retry-After: nothing more is sent to this host until the hold ends"
        );
        ForgeError::RateLimited {
            retry_after_secs: Some(hold.as_secs()),
        }
    }

    /// An answer that is no rate limit ends a streak of secondary limits.
    fn end_secondary_streak(&self) {
        if self.secondary_streak.get() > 0 {
            self.secondary_streak.set(0);
            self.note_rate(rate::secondary_hold(0, epoch_secs(SystemTime::now())));
        }
    }

    /// The last part of a plain-text document such as a job log: at most
    /// [`tail::LOG_TAIL_BYTES`], asked for with `Range` (an answer that ignores it is read as
    /// a stream and cut), its first partial line dropped. One redirect is followed without
    /// credentials (logs live on a blob host); 404 and 410 mean there is none, 416 (a range
    /// of an empty document) an empty one.
    pub fn get_tail(&self, url: &str) -> Result<Option<String>, ForgeError> {
        self.get_tail_as(url, &self.token)
    }

    /// [`HttpClient::get_tail`] with another bearer token than the client's own.
    pub fn get_tail_as(&self, url: &str, token: &str) -> Result<Option<String>, ForgeError> {
        let tail = Some(tail::LOG_TAIL_BYTES);
        let resp = self.send_with("GET", url, None, Idempotency::Retry, token, tail)?;
        let resp = match (resp.status, &resp.location) {
            (301 | 302 | 303 | 307 | 308, Some(location)) => self.fetch_plain(location, tail)?,
            _ => resp,
        };
        match resp.status {
            200 | 206 => Ok(Some(resp.body)),
            416 => Ok(Some(String::new())),
            404 | 410 => Ok(None),
            _ => Err(status_error(&resp)),
        }
    }

    /// Fetches a URL without credentials (a redirect target on a blob host), only its last
    /// `tail` bytes when given.
    fn fetch_plain(&self, url: &str, tail: Option<u64>) -> Result<Response, ForgeError> {
        check_url(url).map_err(ForgeError::Unexpected)?;
        let mut attempt = 0;
        loop {
            if let Some(refused) = self.deadline.refusal(&host_of(url)) {
                return Err(refused);
            }
            match self.send_once("GET", url, None, None, tail) {
                Ok((resp, _)) if resp.status < 500 => return Ok(resp),
                Ok((resp, _)) if attempt >= RETRIES => {
                    return Err(ForgeError::Transient(format!(
                        "HTTP {} from a log download",
                        resp.status
                    )));
                }
                Err(e) if attempt >= RETRIES => return Err(e),
                _ => {}
            }
            std::thread::sleep(self.backoff * 2u32.pow(attempt));
            attempt += 1;
        }
    }

    /// One attempt. `Err` is a transport failure (described without the URL's query string:
    /// `Unreachable` when no connection was made, `Transient` otherwise);
    /// `Ok((resp, Some(limit)))` is a rate-limit answer.
    fn send_once(
        &self,
        method: &str,
        url: &str,
        body: Option<&Body>,
        auth: Option<&str>,
        tail: Option<u64>,
    ) -> Result<(Response, Option<Limit>), ForgeError> {
        self.requests.update(|n| *n += 1);
        let started = std::time::Instant::now();
        let answered = self.attempt(Attempt {
            method,
            url,
            body,
            auth,
            tail,
        });
        let status = answered.as_ref().ok().map(|(resp, _)| resp.status);
        self.record(method, url, body, status, started);
        answered
    }

    /// One attempt, unlogged: see [`HttpClient::send_once`].
    fn attempt(&self, call: Attempt<'_>) -> Result<(Response, Option<Limit>), ForgeError> {
        let Attempt {
            method,
            url,
            body,
            auth,
            tail,
        } = call;
        let agent = self.agent_for(url);
        // Held until the answer is read, so the connection is back in the pool when it opens.
        let _slot = self.in_flight.enter();
        let builder = ureq::http::Request::builder().method(method).uri(url);
        let builder = if self.github_headers {
            builder
                .header("Accept", github_accept(url))
                .header("X-GitHub-Api-Version", "2022-11-28")
        } else {
            builder
        };
        let builder = match auth {
            Some(token) => builder.header("Authorization", format!("Bearer {token}")),
            None => builder,
        };
        let builder = match tail {
            Some(n) => builder.header("Range", tail::range(n)),
            None => builder,
        };
        let result = if let Some(body) = body {
            let req = builder
                .header("Content-Type", "application/json")
                .body(body.bytes())
                .map_err(|e| ForgeError::Unexpected(format!("bad request: {e}")))?;
            agent.run(req)
        } else {
            let req = builder
                .body(())
                .map_err(|e| ForgeError::Unexpected(format!("bad request: {e}")))?;
            agent.run(req)
        };
        let mut resp = result.map_err(|e| self.transport_error(&e, url))?;
        let status = resp.status().as_u16();
        let location = header(&resp, "location");
        let next_page = header(&resp, "x-next-page").filter(|p| !p.trim().is_empty());
        let date = header(&resp, "date");
        if let Some(remaining) = header(&resp, "x-ratelimit-remaining")
            .or_else(|| header(&resp, "ratelimit-remaining"))
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            self.rate_limit_remaining.set(Some(remaining));
        }
        if auth.is_some() {
            let lookup = |name: &str| header(&resp, name);
            if let Some(figures) = rate::from_headers(&lookup, !self.github_headers) {
                self.note_rate(figures);
            }
        }
        let (bytes, from_middle) = match tail {
            Some(n) => self.read_tail(&mut resp, n, url)?,
            None => (self.read_whole(&mut resp, url)?, false),
        };
        // Decoded lossily: a job log may hold any bytes, and one that is not UTF-8 must not
        // make the rest of it unreadable (JSON answers are UTF-8 by their specification).
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        let text = if from_middle {
            crate::core::logs::from_middle(&text).to_owned()
        } else {
            text
        };
        // GraphQL's primary limit arrives as HTTP 200 with `errors[].type: RATE_LIMITED`: it is
        // waited for (or deferred to) its reset exactly like REST's 403/429.
        let limit = wait::limit_of(
            status,
            |name: &str| header(&resp, name),
            &text,
            SystemTime::now(),
        );
        Ok((
            Response {
                status,
                location,
                next_page,
                date,
                body: text,
            },
            limit,
        ))
    }
}

impl HttpClient {
    /// An answer's whole body (at most 64 MiB).
    fn read_whole(
        &self,
        resp: &mut ureq::http::Response<ureq::Body>,
        url: &str,
    ) -> Result<Vec<u8>, ForgeError> {
        resp.body_mut()
            .with_config()
            .limit(64 * 1024 * 1024)
            .read_to_vec()
            .map_err(|e| self.read_error(&e, url))
    }

    /// The last `n` bytes of an answer to a ranged request, streamed (a host may ignore the
    /// range and send the whole document), and whether they start past the document's first
    /// byte.
    fn read_tail(
        &self,
        resp: &mut ureq::http::Response<ureq::Body>,
        n: u64,
        url: &str,
    ) -> Result<(Vec<u8>, bool), ForgeError> {
        let partial = resp.status().as_u16() == 206
            && tail::starts_past_the_beginning(header(resp, "content-range").as_deref());
        let keep = usize::try_from(n).unwrap_or(usize::MAX);
        let (bytes, dropped) = tail::last_bytes(resp.body_mut().as_reader(), keep)
            .map_err(|e| self.read_error(&ureq::Error::Io(e), url))?;
        Ok((bytes, partial || dropped))
    }

    /// A failed read of an answer's body as a [`ForgeError`]; a timeout counts against the
    /// forge.
    fn read_error(&self, e: &ureq::Error, url: &str) -> ForgeError {
        if matches!(e, ureq::Error::Timeout(_)) {
            self.deadline.note_hang();
        }
        ForgeError::Transient(format!(
            "reading the answer from {} failed: {e}",
            path_of(url)
        ))
    }

    /// A transport failure as a [`ForgeError`]; a timeout counts against the forge.
    fn transport_error(&self, e: &ureq::Error, url: &str) -> ForgeError {
        if matches!(e, ureq::Error::Timeout(_)) {
            self.deadline.note_hang();
        }
        describe_transport(e, url)
    }
}

/// What one attempt sends.
#[derive(Debug, Clone, Copy)]
struct Attempt<'a> {
    method: &'a str,
    url: &'a str,
    body: Option<&'a Body>,
    /// The bearer token; `None` for a request without credentials.
    auth: Option<&'a str>,
    /// Only the document's last bytes, this many, are wanted (a `Range` is sent).
    tail: Option<u64>,
}

/// The `Accept` header of a GitHub request: GraphQL asks for the `merge-info-preview` media
/// type too, without which GitHub Enterprise Server has no `PullRequest.mergeStateStatus`.
fn github_accept(url: &str) -> &'static str {
    if path_of(url).ends_with("/graphql") {
        "application/vnd.github.merge-info-preview+json, application/vnd.github+json"
    } else {
        "application/vnd.github+json"
    }
}

/// The path of a URL without host or query (query strings may carry signed tokens).
fn path_of(url: &str) -> String {
    Address::parse(url).map_or_else(|_| "/".to_owned(), |a| a.path().to_owned())
}

fn describe_transport(e: &ureq::Error, url: &str) -> ForgeError {
    let path = path_of(url);
    match e {
        ureq::Error::Timeout(_) => ForgeError::Transient(format!("{path} timed out")),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            ForgeError::Unreachable(format!("{path}: connection refused"))
        }
        ureq::Error::Io(io) => match crate::tls::handshake_failure(io) {
            Some(why) => ForgeError::Unreachable(format!(
                "{path}: the TLS certificate of `{}` is not trusted: {why}",
                host_of(url)
            )),
            None => ForgeError::Transient(format!("{path}: connection failed ({})", io.kind())),
        },
        ureq::Error::ConnectionFailed => {
            ForgeError::Unreachable(format!("{path}: connection failed"))
        }
        ureq::Error::HostNotFound => ForgeError::Unreachable(format!("{path}: host not found")),
        other => ForgeError::Transient(format!("{path}: {other}")),
    }
}

/// `t` in seconds since the Unix epoch.
fn epoch_secs(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The instant `secs` seconds after the Unix epoch (none before it).
pub fn epoch_time(secs: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).unwrap_or(0))
}

/// `host[:port]` of `url`, for messages.
fn host_of(url: &str) -> String {
    Address::parse(url).map_or_else(|_| "(an unreadable address)".to_owned(), |a| a.host_port())
}

/// Maps a non-success status to the error callers branch on.
pub fn status_error(resp: &Response) -> ForgeError {
    let msg = error_message(&resp.body);
    match resp.status {
        401 | 403 => ForgeError::Unauthorized(msg),
        404 | 410 => ForgeError::NotFound(msg),
        409 if msg.to_ascii_lowercase().contains("conflict") => ForgeError::MergeConflict(msg),
        409 => ForgeError::HeadMoved(msg),
        405 | 422 => ForgeError::Refused(msg),
        429 => ForgeError::RateLimited {
            retry_after_secs: None,
        },
        s if s >= 500 => ForgeError::Transient(format!("HTTP {s}: {msg}")),
        s => ForgeError::Unexpected(format!("HTTP {s}: {msg}")),
    }
}

#[cfg(test)]
mod tests;

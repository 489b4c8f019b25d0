//! The scaffolding the fake forges (`fake_github`, `fake_gitlab`) share: a [`FakeServer`] is an
//! [`HttpServer`] on `127.0.0.1:<random port>` serving each connection on its own thread, over
//! [`Shared`] state — the forge's world `W` behind a mutex, the [`RequestLog`] and the queue of
//! [`Fault`]s of the forge's kind `K`, the base URL.
//!
//! What this module owns: starting and stopping the server, what a request is ([`Incoming`])
//! and an answer ([`Reply`]), the test-facing calls `world(|w| …)`, `fault(..)`,
//! `clear_faults()`, `pending_faults()`, `requests()` and `clear_requests()`, the request log
//! ([`LoggedRequest`], [`RequestLog`]: counts by route template, checked against the forge's
//! placeholders) and fault matching (`on(pattern)`, `times`, `once`, `always`, `after`).
//! Dropping a server whose queued fault never fired fails the test (unless it is already
//! failing): a fault that never fires is a test that does not test what it says. So does a
//! request the forge's own API description refuses ([`Shared::nonconforming`]), unless the test
//! took it ([`FakeServer::take_nonconforming`]).
//!
//! What a forge supplies: its world and fault kinds, a handler `fn(&Shared<W, K>, &Incoming) ->
//! Reply` that routes, logs ([`Shared::log`], [`Shared::set_status`]) and answers, and its own
//! `impl FakeServer<W, K>` (`start`, `url`, …) and `impl Fault<K>` (constructors), named through
//! type aliases (`FakeGitHub`, `Fault`, `RequestLog`).
#![allow(dead_code)] // A support API: each test binary uses a different part of it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::http_server::{self, HttpServer};
use super::meet::Meetings;

/// Locks `m`, ignoring poisoning: a test that panicked while holding the lock already failed;
/// keep serving.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

// ── the server ──────────────────────────────────────────────────────────────────────────────

/// How a forge answers one request.
pub type Handler<W, K> = fn(&Shared<W, K>, &Incoming) -> Reply;

/// A running fake forge over a world `W`, with faults of kind `K`. Dropping it stops the server.
pub struct FakeServer<W, K> {
    shared: Arc<Shared<W, K>>,
    server: HttpServer,
    /// Other addresses serving the same forge (see [`FakeServer::second_host`]).
    others: Vec<HttpServer>,
}

/// What the server threads and the test share.
#[derive(Debug)]
pub struct Shared<W, K> {
    world: Mutex<W>,
    log: Mutex<Vec<LoggedRequest<K>>>,
    faults: Mutex<Vec<Fault<K>>>,
    /// Requests the forge's own API description refuses (see [`Shared::nonconforming`]).
    nonconforming: Mutex<Vec<String>>,
    /// What requests meet besides their answer (see [`super::meet`]).
    meetings: Meetings<W>,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// The type name `Debug` shows (`FakeGitHub`).
    name: &'static str,
    /// The placeholders route templates use (`{o}`, `{id}`, …).
    placeholders: &'static [&'static str],
    /// The bytes of every answer's body written so far.
    served: std::sync::atomic::AtomicU64,
    handler: Handler<W, K>,
}

impl<W: Send + 'static, K: Clone + Send + 'static> FakeServer<W, K> {
    /// Starts serving `world` with `handler` on `127.0.0.1:<random port>`. `name` is what
    /// `Debug` shows; `placeholders` are those [`RequestLog::matching`] accepts.
    pub fn serve(
        name: &'static str,
        placeholders: &'static [&'static str],
        world: W,
        handler: Handler<W, K>,
    ) -> Self {
        let listener = http_server::listener();
        let port = listener.local_addr().expect("a local address").port();
        let shared = Arc::new(Shared {
            world: Mutex::new(world),
            log: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
            nonconforming: Mutex::new(Vec::new()),
            meetings: Meetings::default(),
            base_url: format!("http://127.0.0.1:{port}"),
            name,
            placeholders,
            served: std::sync::atomic::AtomicU64::new(0),
            handler,
        });
        let server = serve(listener, &shared);
        FakeServer {
            shared,
            server,
            others: Vec::new(),
        }
    }

    /// The same forge answering on another address too (another port of 127.0.0.1: another
    /// host to a client, such as a blob host a forge redirects to); its `http://127.0.0.1:PORT`.
    pub fn second_host(&mut self) -> String {
        let server = serve(http_server::listener(), &self.shared);
        let url = format!("http://127.0.0.1:{}", server.port());
        self.others.push(server);
        url
    }
}

/// Serves `listener`'s connections from `shared`, with the forge's handler.
fn serve<W: Send + 'static, K: Clone + Send + 'static>(
    listener: std::net::TcpListener,
    shared: &Arc<Shared<W, K>>,
) -> HttpServer {
    let shared = Arc::clone(shared);
    HttpServer::start(
        listener,
        Arc::new(move |req: &Incoming| serve_one(&shared, req)),
    )
}

impl<W, K: Clone> FakeServer<W, K> {
    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> &str {
        &self.shared.base_url
    }

    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// How many connections clients have opened to its main address so far.
    pub fn connections(&self) -> usize {
        self.server.connections()
    }

    /// Reads or changes the world; the server waits meanwhile.
    pub fn world<R>(&self, f: impl FnOnce(&mut W) -> R) -> R {
        f(&mut self.shared.world())
    }

    /// Queues a fault.
    pub fn fault(&self, fault: Fault<K>) {
        lock(&self.shared.faults).push(fault);
    }

    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }

    /// Faults that can still fire.
    pub fn pending_faults(&self) -> usize {
        lock(&self.shared.faults)
            .iter()
            .filter(|f| f.remaining() > 0)
            .count()
    }

    /// A copy of the request log so far.
    pub fn requests(&self) -> RequestLog<K> {
        RequestLog {
            entries: lock(&self.shared.log).clone(),
            placeholders: self.shared.placeholders,
        }
    }

    pub fn clear_requests(&self) {
        lock(&self.shared.log).clear();
    }

    /// The requests the forge's API description refused so far, taken: a test that sends a
    /// wrong request on purpose takes them, so that dropping the server does not fail it.
    pub fn take_nonconforming(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.shared.nonconforming))
    }

    /// Each request matching `pattern` waits until `together` of them have come (see
    /// [`super::meet`]).
    pub fn hold_until_together(&self, pattern: &str, together: usize) {
        self.shared.meetings.hold_until_together(pattern, together);
    }

    /// The most requests matching the held `pattern` that ever waited at once.
    pub fn most_together(&self, pattern: &str) -> usize {
        self.shared.meetings.most_together(pattern)
    }

    /// `change` is made to the world when the first request matching `pattern` comes, before
    /// it is answered.
    pub fn after_request(&self, pattern: &str, change: impl FnOnce(&mut W) + Send + 'static) {
        self.shared.meetings.after(pattern, change);
    }

    /// The bytes of every answer's body written so far, on every address.
    pub fn bytes_served(&self) -> u64 {
        self.shared.served.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl<W, K> std::fmt::Debug for FakeServer<W, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(self.shared.name)
            .field("url", &self.shared.base_url)
            .finish_non_exhaustive()
    }
}

impl<W, K> Drop for FakeServer<W, K> {
    /// Stops the server, then fails the test if a queued fault never fired (a fault that never
    /// fires is a test that does not test what it says) or a request did not conform to the
    /// forge's API description (unless the test already failed).
    fn drop(&mut self) {
        self.server.stop();
        for mut server in self.others.drain(..) {
            server.stop();
        }
        if std::thread::panicking() {
            return;
        }
        let unfired: Vec<String> = lock(&self.shared.faults)
            .iter()
            .filter(|f| f.fired == 0)
            .map(Fault::describe)
            .collect();
        assert!(
            unfired.is_empty(),
            "{}: queued faults that never fired: {}",
            self.shared.name,
            unfired.join("; ")
        );
        let unmet = self.shared.meetings.unfired();
        assert!(
            unmet.is_empty(),
            "{}: world changes no request fired: on {}",
            self.shared.name,
            unmet.join("; on ")
        );
        let refused = lock(&self.shared.nonconforming).clone();
        assert!(
            refused.is_empty(),
            "{}: requests the API description refuses: {}",
            self.shared.name,
            refused.join("; ")
        );
    }
}

impl<W, K: Clone> Shared<W, K> {
    /// The world, locked.
    pub fn world(&self) -> MutexGuard<'_, W> {
        lock(&self.world)
    }

    /// Records a request the forge's API description refuses (`what`: the request and why): the
    /// forge answers it as the real one would, and dropping the server fails the test.
    pub fn nonconforming(&self, what: String) {
        lock(&self.nonconforming).push(what);
    }

    /// Logs `entry` with the first queued fault that matches it, which fires. Returns the
    /// entry's index in the log (for [`Shared::set_status`]) and that fault.
    pub fn log(&self, mut entry: LoggedRequest<K>) -> (usize, Option<K>) {
        let fault = {
            let mut faults = lock(&self.faults);
            let mut firing = None;
            for f in faults
                .iter_mut()
                .filter(|f| f.remaining() > 0 && f.matches(&entry))
            {
                if f.skip > 0 {
                    f.skip -= 1;
                } else {
                    f.fired += 1;
                    firing = Some(f.kind.clone());
                    break;
                }
            }
            firing
        };
        entry.fault.clone_from(&fault);
        let seq = {
            let mut log = lock(&self.log);
            entry.seq = log.len();
            log.push(entry.clone());
            entry.seq
        };
        self.meetings.meet(&entry, &self.world);
        (seq, fault)
    }

    /// Records the status answered to the request logged at `seq`.
    pub fn set_status(&self, seq: usize, status: u16) {
        if let Some(e) = lock(&self.log).get_mut(seq) {
            e.status = status;
        }
    }

    /// Sets the points request `seq` cost.
    pub fn set_points(&self, seq: usize, points: u64) {
        if let Some(e) = lock(&self.log).get_mut(seq) {
            e.points = points;
        }
    }

    /// The points request `seq` cost.
    pub fn points(&self, seq: usize) -> u64 {
        lock(&self.log).get(seq).map_or(0, |e| e.points)
    }
}

// ── requests and replies ────────────────────────────────────────────────────────────────────

/// A request as read off the wire.
#[derive(Debug, Clone)]
pub struct Incoming {
    /// Upper case.
    pub method: String,
    /// The path as sent, without the query.
    pub path: String,
    pub query: Option<String>,
    /// Names in lower case, in order.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Incoming {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An answer before it is written.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// `None`: no body type (redirects).
    pub content_type: Option<String>,
}

impl Reply {
    /// `v` as `application/json; charset=utf-8`.
    pub fn json(status: u16, v: &serde_json::Value) -> Self {
        Self::json_as(status, v, "application/json; charset=utf-8")
    }

    /// `s` as `text/plain; charset=utf-8`.
    pub fn text(status: u16, s: &str) -> Self {
        Self::text_as(status, s, "text/plain; charset=utf-8")
    }

    /// `v` as JSON with the content type `content_type`.
    pub fn json_as(status: u16, v: &serde_json::Value, content_type: &str) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: serde_json::to_vec(v).expect("JSON serializes"),
            content_type: Some(content_type.into()),
        }
    }

    /// `s` with the content type `content_type`.
    pub fn text_as(status: u16, s: &str, content_type: &str) -> Self {
        Self::bytes(status, s.as_bytes(), content_type)
    }

    /// `body` as it is, with the content type `content_type`.
    pub fn bytes(status: u16, body: &[u8], content_type: &str) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: body.to_vec(),
            content_type: Some(content_type.into()),
        }
    }

    /// A plain-text document as a server that honours `Range` sends it: a suffix range
    /// (`bytes=-N`) or a `bytes=A-[B]` range answers 206 with that part and its
    /// `Content-Range`, one past the end 416; no range (or `ignore_range`, as a server that
    /// does not do ranges) the whole document with 200.
    pub fn ranged(body: &[u8], range: Option<&str>, ignore_range: bool) -> Self {
        let len = body.len();
        let wanted = range
            .filter(|_| !ignore_range)
            .and_then(|r| r.trim().strip_prefix("bytes="))
            .and_then(|r| r.split_once('-'))
            .and_then(|(from, to)| match (from.trim(), to.trim()) {
                ("", n) => n
                    .parse::<usize>()
                    .ok()
                    .map(|n| (len.saturating_sub(n), len)),
                (a, "") => a.parse::<usize>().ok().map(|a| (a, len)),
                (a, b) => Some((a.parse().ok()?, b.parse::<usize>().ok()? + 1)),
            });
        let plain = "text/plain; charset=utf-8";
        match wanted {
            None => Self::bytes(200, body, plain),
            Some((start, _)) if start >= len => {
                let mut r = Self::bytes(416, b"", plain);
                r.headers
                    .push(("content-range".into(), format!("bytes */{len}")));
                r
            }
            Some((start, end)) => {
                let end = end.min(len);
                let mut r = Self::bytes(206, &body[start..end], plain);
                r.headers.push((
                    "content-range".into(),
                    format!("bytes {start}-{}/{len}", end - 1),
                ));
                r
            }
        }
    }
}

/// The forge's answer to `req`, its body's bytes counted.
fn serve_one<W, K>(shared: &Shared<W, K>, req: &Incoming) -> Reply {
    let reply = (shared.handler)(shared, req);
    shared
        .served
        .fetch_add(reply.body.len() as u64, std::sync::atomic::Ordering::SeqCst);
    reply
}

// ── faults ──────────────────────────────────────────────────────────────────────────────────

/// A queued fault: what (`kind`, the forge's), on which requests, how often. Forges add the
/// constructors (`impl Fault<FaultKind> { pub fn status(..) }`).
#[derive(Debug, Clone)]
pub struct Fault<K> {
    pub kind: K,
    /// A request pattern (see [`RequestLog::count`]); `None` matches every request.
    pub on: Option<String>,
    /// Only requests about this PR (see [`LoggedRequest::prs`]).
    pub mentions: Option<(String, u64)>,
    /// Remaining firings; `None` until set (then once, or always when PR-scoped).
    pub times: Option<u32>,
    /// Matching requests to let through before the first firing.
    pub skip: u32,
    fired: u32,
}

impl<K> Fault<K> {
    /// A fault of `kind` on every request, once.
    pub fn new(kind: K) -> Self {
        Fault {
            kind,
            on: None,
            mentions: None,
            times: None,
            skip: 0,
            fired: 0,
        }
    }

    /// Only requests matching `pattern` (see [`RequestLog::count`]).
    pub fn on(mut self, pattern: &str) -> Self {
        self.on = Some(pattern.to_owned());
        self
    }

    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    pub fn once(self) -> Self {
        self.times(1)
    }

    /// Lets the first `n` matching requests through; fires from the one after.
    pub fn after(mut self, n: u32) -> Self {
        self.skip = n;
        self
    }

    pub fn always(self) -> Self {
        self.times(u32::MAX)
    }

    /// How many more times it fires.
    pub fn remaining(&self) -> u32 {
        let times = self
            .times
            .unwrap_or(if self.mentions.is_some() { u32::MAX } else { 1 });
        times.saturating_sub(self.fired)
    }

    /// `on <pattern> [about <repo>#<n>]`, for the unfired-fault message.
    fn describe(&self) -> String {
        let on = self.on.as_deref().unwrap_or("every request");
        match &self.mentions {
            Some((repo, n)) => format!("on {on} about {repo}#{n}"),
            None => format!("on {on}"),
        }
    }

    fn matches(&self, req: &LoggedRequest<K>) -> bool {
        self.on.as_deref().is_none_or(|p| req.matches(p))
            && self.mentions.as_ref().is_none_or(|m| req.prs.contains(m))
    }
}

// ── the request log ─────────────────────────────────────────────────────────────────────────

/// One request the fake received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedRequest<K> {
    pub seq: usize,
    pub method: String,
    /// The path as the forge routes it (GitLab's under `/api/v4`, project ids URL-encoded).
    pub path: String,
    pub query: Option<String>,
    /// The route template (`/repos/{o}/{r}/pulls/{n}/merge`), or the path when unknown.
    pub route: String,
    /// The GraphQL operation name.
    pub operation: Option<String>,
    /// Whether the GraphQL operation is a mutation.
    pub mutation: bool,
    /// `METHOD route [operation]`: what counts are keyed by.
    pub key: String,
    /// The PRs the request is about (empty where the forge does not tell).
    pub prs: Vec<(String, u64)>,
    pub status: u16,
    pub body: String,
    /// The `Authorization` header as sent.
    pub authorization: Option<String>,
    pub fault: Option<K>,
    /// What the request cost on the forge's budget (GitHub: GraphQL points, 1 per REST call,
    /// 0 for a 304 or a refused request).
    pub points: u64,
}

impl<K> LoggedRequest<K> {
    /// An entry for `req` on `route`, keyed `METHOD route`, at `path`.
    pub fn new(req: &Incoming, path: &str, route: &str) -> Self {
        LoggedRequest {
            seq: 0,
            method: req.method.clone(),
            path: path.to_owned(),
            query: req.query.clone(),
            route: route.to_owned(),
            operation: None,
            mutation: false,
            key: format!("{} {route}", req.method),
            prs: Vec::new(),
            status: 0,
            body: req.body.clone(),
            authorization: req.header("authorization").map(str::to_owned),
            fault: None,
            points: 0,
        }
    }

    /// Whether `pattern` names this request: its key, a prefix of it ending at a word, or
    /// `METHOD concrete-path`.
    pub fn matches(&self, pattern: &str) -> bool {
        self.key == pattern
            || self
                .key
                .strip_prefix(pattern)
                .is_some_and(|rest| rest.starts_with(' '))
            || format!("{} {}", self.method, self.path) == pattern
    }

    /// The request body as JSON (`Null` if it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// A query parameter's value, as sent.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query.as_deref().and_then(|q| {
            q.split('&')
                .filter_map(|kv| kv.split_once('='))
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_owned())
        })
    }
}

/// The requests received, in order.
#[derive(Debug, Clone)]
pub struct RequestLog<K> {
    pub entries: Vec<LoggedRequest<K>>,
    /// The placeholders the forge's route templates use.
    placeholders: &'static [&'static str],
}

impl<K> RequestLog<K> {
    /// How many requests match `pattern`: a key (`"POST /graphql PullRequestSnapshots"`,
    /// `"GET /projects/{id}/merge_requests/{iid}"`), a prefix of one at a word boundary
    /// (`"POST /graphql"` counts every GraphQL request), or `"METHOD /concrete/path"`.
    pub fn count(&self, pattern: &str) -> usize {
        self.matching(pattern).len()
    }

    /// Requests matching `pattern`. A route template may use only the placeholders the forge's
    /// routes use: a misspelt one would match nothing and make a count that cannot fail, so it
    /// panics.
    pub fn matching(&self, pattern: &str) -> Vec<&LoggedRequest<K>> {
        let mut rest = pattern;
        while let Some(start) = rest.find('{') {
            let end = rest[start..]
                .find('}')
                .map_or(rest.len(), |e| start + e + 1);
            let placeholder = &rest[start..end];
            assert!(
                self.placeholders.contains(&placeholder),
                "`{pattern}`: routes use {}, not {placeholder}",
                self.placeholders.join(", ")
            );
            rest = &rest[end..];
        }
        self.entries.iter().filter(|r| r.matches(pattern)).collect()
    }

    /// Counts by key.
    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for r in &self.entries {
            *out.entry(r.key.clone()).or_insert(0) += 1;
        }
        out
    }

    pub fn total(&self) -> usize {
        self.entries.len()
    }

    /// The points the requests matching `pattern` cost (`""` for all).
    pub fn points(&self, pattern: &str) -> u64 {
        self.entries
            .iter()
            .filter(|r| pattern.is_empty() || r.matches(pattern))
            .map(|r| r.points)
            .sum()
    }

    /// GraphQL operation names in order.
    pub fn operations(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter_map(|r| r.operation.clone())
            .collect()
    }

    /// Requests that ask for a change: REST writes and GraphQL mutations.
    pub fn writes(&self) -> Vec<&LoggedRequest<K>> {
        self.entries
            .iter()
            .filter(|r| {
                if r.route == "/graphql" {
                    r.mutation
                } else {
                    r.method != "GET"
                }
            })
            .collect()
    }
}

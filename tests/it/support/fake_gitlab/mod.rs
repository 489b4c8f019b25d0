//! A stateful, in-process fake GitLab for integration tests: a real HTTP server on
//! `127.0.0.1:<random port>` answering the REST v4 routes pr-monitor uses, in GitLab's shapes
//! (see `tests/fixtures/gitlab`), status codes and quirks. Much smaller than the fake GitHub.
//!
//! # Use
//! ```ignore
//! let gl = FakeGitLab::start();                     // viewer "owner", token "gl-test-token"
//! gl.world(|w| {
//!     w.project("g/p").pipelines_must_succeed();
//!     w.mr("g/p", 1).head_by("fixer-bot");
//!     w.job("g/p", 1, "lint").failed().trace("error: unused variable\n");
//!     w.thread("g/p", 1).note("reviewer", "please rename").on("src/a.rs", 3);
//! });
//! // api_url = gl.url() (…/api/v4), token_env carrying gl.token()
//! assert_eq!(gl.requests().count("GET /projects/{id}/merge_requests/{iid}"), 1);
//! assert_eq!(gl.world(|w| w.merges("g/p", 1)), 0);
//! ```
//!
//! # The model ([`world`])
//! Projects (default branch, merge method, squash option, "pipelines must succeed",
//! "discussions must be resolved", approvals required), MRs (state, draft, head sha, branches,
//! author, labels, conflict, commits behind, approvals, discussions, armed auto-merge), commits
//! (author and committer names, dates), pipelines with jobs (status, failure_reason, trace,
//! retried attempts), external commit statuses and an [`Event`] log. `detailed_merge_status` is
//! derived like GitLab's unless overridden. A push leaves the MR's head pipeline on the old
//! head until `w.pipeline`/`w.job` makes one for the new head.
//!
//! Auto-merge: `PUT …/merge` with `merge_when_pipeline_succeeds`/`auto_merge` arms it while
//! the head's pipeline runs, merges when it succeeds ([`World::settle`], run before every
//! request) and is dropped when it fails. Armed while the head has no pipeline of its own, it
//! merges AT ONCE (GitLab's trap, gitlab-org/gitlab#37292): [`Event::Merged`] records
//! `at_once_without_pipeline`.
//!
//! # Requests and faults
//! Every request needs `Authorization: Bearer <token>` (401 otherwise). Lists page with
//! `per_page` (capped by `w.max_per_page`) and answer `x-page`, `x-per-page`, `x-next-page`
//! (empty on the last page), `x-total`, `x-total-pages`. The [`RequestLog`] counts by route
//! template (`GET /projects/{id}/merge_requests/{iid}`) or `METHOD /concrete/path`.
//! `gl.fault(Fault::status(502).on("GET /projects/{id}/merge_requests/{iid}").times(3))` and
//! `Fault::rate_limit(secs)` (429 `Retry later` with `Retry-After` and `RateLimit-*`).
#![allow(dead_code)] // A support API: each test uses a different part of it.

pub mod world;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use serde_json::{Value, json};

pub use world::*;

/// A running fake GitLab. Dropping it stops the server.
pub struct FakeGitLab {
    shared: Arc<Shared>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct Shared {
    world: Mutex<World>,
    log: Mutex<Vec<LoggedRequest>>,
    faults: Mutex<Vec<Fault>>,
    base_url: String,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl FakeGitLab {
    pub fn start() -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1:0"));
        let port = server.server_addr().to_ip().expect("an IP listener").port();
        let shared = Arc::new(Shared {
            world: Mutex::new(World::default()),
            log: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
            base_url: format!("http://127.0.0.1:{port}"),
        });
        let thread = {
            let (server, shared) = (Arc::clone(&server), Arc::clone(&shared));
            std::thread::spawn(move || {
                for req in server.incoming_requests() {
                    let shared = Arc::clone(&shared);
                    std::thread::spawn(move || handle(&shared, req));
                }
            })
        };
        FakeGitLab {
            shared,
            server,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT/api/v4` (the `api_url`).
    pub fn url(&self) -> String {
        format!("{}/api/v4", self.shared.base_url)
    }

    pub fn token(&self) -> String {
        lock(&self.shared.world).token.clone()
    }

    /// Reads or changes the world; the server waits meanwhile.
    pub fn world<R>(&self, f: impl FnOnce(&mut World) -> R) -> R {
        f(&mut lock(&self.shared.world))
    }

    pub fn fault(&self, fault: Fault) {
        lock(&self.shared.faults).push(fault);
    }

    pub fn requests(&self) -> RequestLog {
        RequestLog {
            entries: lock(&self.shared.log).clone(),
        }
    }

    pub fn clear_requests(&self) {
        lock(&self.shared.log).clear();
    }
}

impl std::fmt::Debug for FakeGitLab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeGitLab")
            .field("url", &self.shared.base_url)
            .finish_non_exhaustive()
    }
}

impl Drop for FakeGitLab {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

// ── faults ──────────────────────────────────────────────────────────────────────────────────

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// Answer `status` without handling the request.
    Status(u16),
    /// 429 `Retry later`, `Retry-After: secs`.
    RateLimit { retry_after_secs: u64 },
}

#[derive(Debug, Clone)]
pub struct Fault {
    pub kind: FaultKind,
    pub on: Option<String>,
    pub times: u32,
    fired: u32,
}

impl Fault {
    pub fn status(code: u16) -> Self {
        Fault {
            kind: FaultKind::Status(code),
            on: None,
            times: 1,
            fired: 0,
        }
    }
    pub fn rate_limit(retry_after_secs: u64) -> Self {
        Fault {
            kind: FaultKind::RateLimit { retry_after_secs },
            ..Self::status(429)
        }
    }
    /// Only requests matching `pattern` (see [`RequestLog::count`]).
    pub fn on(mut self, pattern: &str) -> Self {
        self.on = Some(pattern.into());
        self
    }
    pub fn times(mut self, n: u32) -> Self {
        self.times = n;
        self
    }
    pub fn always(self) -> Self {
        self.times(u32::MAX)
    }
}

// ── the request log ─────────────────────────────────────────────────────────────────────────

#[derive(Debug, Clone)]
pub struct LoggedRequest {
    pub method: String,
    /// The path under `/api/v4`, as sent (project ids URL-encoded).
    pub path: String,
    pub query: Option<String>,
    /// `METHOD template`, e.g. `GET /projects/{id}/merge_requests/{iid}`.
    pub key: String,
    pub body: String,
    pub status: u16,
    pub authorization: Option<String>,
}

impl LoggedRequest {
    pub fn matches(&self, pattern: &str) -> bool {
        self.key == pattern || format!("{} {}", self.method, self.path) == pattern
    }
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
    /// A query parameter's value.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query.as_deref().and_then(|q| {
            q.split('&')
                .filter_map(|kv| kv.split_once('='))
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_owned())
        })
    }
}

#[derive(Debug, Clone, Default)]
pub struct RequestLog {
    pub entries: Vec<LoggedRequest>,
}

impl RequestLog {
    /// Requests matching a key (`"PUT /projects/{id}/merge_requests/{iid}/merge"`) or
    /// `"METHOD /concrete/path"`. Placeholders: `{id}`, `{iid}`, `{did}`, `{sha}`, `{pid}`,
    /// `{job}`; a misspelt one would make a count that cannot fail, so it panics.
    pub fn matching(&self, pattern: &str) -> Vec<&LoggedRequest> {
        for part in pattern.split('/') {
            if part.starts_with('{') {
                assert!(
                    ["{id}", "{iid}", "{did}", "{sha}", "{pid}", "{job}"].contains(&part),
                    "`{pattern}`: unknown placeholder {part}"
                );
            }
        }
        self.entries.iter().filter(|r| r.matches(pattern)).collect()
    }
    pub fn count(&self, pattern: &str) -> usize {
        self.matching(pattern).len()
    }
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
    pub fn writes(&self) -> Vec<&LoggedRequest> {
        self.entries.iter().filter(|r| r.method != "GET").collect()
    }
}

// ── routes ──────────────────────────────────────────────────────────────────────────────────

/// Decodes `%XX` escapes (project ids).
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The route template of `path` and its parameters, in order.
fn template(path: &str) -> (String, Vec<String>) {
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut out = Vec::new();
    let mut params = Vec::new();
    for (i, seg) in segs.iter().enumerate() {
        let prev = if i == 0 { "" } else { segs[i - 1] };
        let placeholder = match prev {
            "projects" if i == 1 => Some("{id}"),
            "merge_requests" => Some("{iid}"),
            "discussions" => Some("{did}"),
            "commits" => Some("{sha}"),
            "pipelines" => Some("{pid}"),
            "jobs" if i == 3 => Some("{job}"),
            _ => None,
        };
        match placeholder {
            Some(p) => {
                out.push(p.to_owned());
                params.push(decode(seg));
            }
            None => out.push((*seg).to_owned()),
        }
    }
    (format!("/{}", out.join("/")), params)
}

/// An answer before it is written.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    content_type: &'static str,
}

impl Reply {
    fn json(status: u16, v: &Value) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: serde_json::to_vec(v).expect("JSON serializes"),
            content_type: "application/json",
        }
    }
    fn text(status: u16, s: &str) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: s.as_bytes().to_vec(),
            content_type: "text/plain",
        }
    }
    fn message(status: u16, msg: &str) -> Self {
        Self::json(status, &json!({ "message": msg }))
    }
    fn not_found(what: &str) -> Self {
        Self::message(404, &format!("404 {what} Not Found"))
    }
}

fn handle(shared: &Shared, mut req: tiny_http::Request) {
    let method = req.method().as_str().to_ascii_uppercase();
    let url = req.url().to_owned();
    let (path, query) = match url.split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (url.clone(), None),
    };
    let authorization = req
        .headers()
        .iter()
        .find(|h| h.field.equiv("authorization"))
        .map(|h| h.value.as_str().to_owned());
    let mut body = Vec::new();
    let _ = req.as_reader().read_to_end(&mut body);
    let body = String::from_utf8_lossy(&body).into_owned();
    let path = path
        .strip_prefix("/api/v4")
        .map_or_else(|| path.clone(), str::to_owned);
    let (tmpl, params) = template(&path);
    let mut entry = LoggedRequest {
        method: method.clone(),
        path: path.clone(),
        query: query.clone(),
        key: format!("{method} {tmpl}"),
        body: body.clone(),
        status: 0,
        authorization: authorization.clone(),
    };
    let fault = {
        let mut faults = lock(&shared.faults);
        faults
            .iter_mut()
            .find(|f| f.fired < f.times && f.on.as_deref().is_none_or(|p| entry.matches(p)))
            .map(|f| {
                f.fired += 1;
                f.kind.clone()
            })
    };
    let reply = match fault {
        Some(FaultKind::Status(code)) => Reply::message(code, &format!("{code} Fault")),
        Some(FaultKind::RateLimit { retry_after_secs }) => {
            let mut r = Reply::text(429, "Retry later\n");
            let reset = chrono::Utc::now().timestamp() + retry_after_secs as i64;
            r.headers.extend([
                ("Retry-After".into(), retry_after_secs.to_string()),
                ("RateLimit-Name".into(), "throttle_authenticated_api".into()),
                ("RateLimit-Limit".into(), "2000".into()),
                ("RateLimit-Observed".into(), "2000".into()),
                ("RateLimit-Remaining".into(), "0".into()),
                ("RateLimit-Reset".into(), reset.to_string()),
            ]);
            r
        }
        None => {
            let mut w = lock(&shared.world);
            let token = authorization
                .as_deref()
                .and_then(|a| a.strip_prefix("Bearer "));
            if token == Some(w.token.as_str()) {
                w.settle();
                route(&mut w, &method, &tmpl, &params, query.as_deref(), &body)
            } else {
                Reply::message(401, "401 Unauthorized")
            }
        }
    };
    entry.status = reply.status;
    lock(&shared.log).push(entry);

    let mut response = tiny_http::Response::from_data(reply.body).with_status_code(reply.status);
    let mut headers = reply.headers;
    headers.push(("Content-Type".into(), reply.content_type.into()));
    for (k, v) in headers {
        if let Ok(h) = tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()) {
            response.add_header(h);
        }
    }
    let _ = req.respond(response);
}

fn param(query: Option<&str>, name: &str) -> Option<String> {
    query.and_then(|q| {
        q.split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| decode(v))
    })
}

/// One page of `items`, with GitLab's paging headers.
fn paged(w: &World, query: Option<&str>, items: Vec<Value>) -> Reply {
    let per_page = param(query, "per_page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(20)
        .clamp(1, w.max_per_page);
    let page = param(query, "page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let total = items.len();
    let pages = total.div_ceil(per_page).max(1);
    let slice: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let mut r = Reply::json(200, &Value::Array(slice));
    let next = if page < pages {
        (page + 1).to_string()
    } else {
        String::new()
    };
    r.headers.extend([
        ("X-Page".into(), page.to_string()),
        ("X-Per-Page".into(), per_page.to_string()),
        ("X-Next-Page".into(), next),
        ("X-Total".into(), total.to_string()),
        ("X-Total-Pages".into(), pages.to_string()),
    ]);
    r
}

fn json_field(body: &str, name: &str) -> Option<Value> {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get(name).cloned())
}

fn flag(body: &str, query: Option<&str>, name: &str) -> bool {
    json_field(body, name).is_some_and(|v| v == json!(true) || v == json!("true"))
        || param(query, name).as_deref() == Some("true")
}

fn route(
    w: &mut World,
    method: &str,
    tmpl: &str,
    params: &[String],
    query: Option<&str>,
    body: &str,
) -> Reply {
    let project = params.first().cloned().unwrap_or_default();
    let iid = || {
        params
            .get(1)
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let key = (project.clone(), iid());
    if tmpl != "/user" && !w.projects.contains_key(&project) {
        return Reply::not_found("Project");
    }
    if method == "GET" {
        let raw = match tmpl {
            "/projects/{id}/merge_requests/{iid}" => w.raw_mrs.get(&key),
            "/projects/{id}/merge_requests/{iid}/discussions" => w.raw_discussions.get(&key),
            "/projects/{id}/merge_requests/{iid}/approvals" => w.raw_approvals.get(&key),
            _ => None,
        };
        if let Some(v) = raw {
            return match v {
                Value::Array(items) => paged(w, query, items.clone()),
                v => Reply::json(200, v),
            };
        }
    }
    let mr_routes = tmpl.starts_with("/projects/{id}/merge_requests/{iid}");
    if mr_routes && !w.mrs.contains_key(&key) {
        return Reply::not_found("Merge Request");
    }
    match (method, tmpl) {
        ("GET", "/user") => Reply::json(
            200,
            &json!({ "id": 1, "username": w.viewer, "name": "The Owner", "state": "active" }),
        ),
        ("GET", "/projects/{id}") => Reply::json(200, &World::project_json(&w.projects[&project])),
        ("GET", "/projects/{id}/merge_requests") => {
            let state = param(query, "state");
            let items = w
                .mrs
                .values()
                .filter(|m| m.project == project)
                .filter(|m| state.as_deref().is_none_or(|s| s == "all" || s == m.state))
                .map(|m| w.mr_json(m, false))
                .collect();
            paged(w, query, items)
        }
        ("GET", "/projects/{id}/merge_requests/{iid}") => {
            let diverged =
                param(query, "include_diverged_commits_count").as_deref() == Some("true");
            Reply::json(200, &w.mr_json(&w.mrs[&key], diverged))
        }
        ("GET", "/projects/{id}/merge_requests/{iid}/approvals") => {
            Reply::json(200, &w.approvals_json(&w.mrs[&key]))
        }
        ("GET", "/projects/{id}/merge_requests/{iid}/discussions") => {
            let items = w.mrs[&key]
                .discussions
                .iter()
                .map(World::discussion_json)
                .collect();
            paged(w, query, items)
        }
        ("POST", "/projects/{id}/merge_requests/{iid}/discussions/{did}/notes") => {
            let text = json_field(body, "body")
                .and_then(|b| b.as_str().map(str::to_owned))
                .or_else(|| param(query, "body"));
            match text {
                None => Reply::message(400, "400 Bad request - body is missing"),
                Some(text) => match w.reply(&key, &params[2], &text) {
                    Some(v) => Reply::json(201, &v),
                    None => Reply::not_found("Discussion"),
                },
            }
        }
        ("PUT", "/projects/{id}/merge_requests/{iid}/discussions/{did}") => {
            if !flag(body, query, "resolved") {
                return Reply::message(400, "400 Bad request - resolved is missing");
            }
            match w.resolve(&key, &params[2]) {
                Some(v) => Reply::json(200, &v),
                None => Reply::not_found("Discussion"),
            }
        }
        ("PUT", "/projects/{id}/merge_requests/{iid}/merge") => {
            let sha = json_field(body, "sha")
                .and_then(|s| s.as_str().map(str::to_owned))
                .or_else(|| param(query, "sha"));
            let squash = flag(body, query, "squash");
            let auto = flag(body, query, "merge_when_pipeline_succeeds")
                || flag(body, query, "auto_merge");
            match w.merge(&key, sha.as_deref(), squash, auto) {
                Ok(()) => Reply::json(200, &w.mr_json(&w.mrs[&key], false)),
                Err(ApiError(code, msg)) => Reply::message(code, &msg),
            }
        }
        ("POST", "/projects/{id}/merge_requests/{iid}/cancel_merge_when_pipeline_succeeds") => {
            if w.mrs[&key].auto_merge.is_none() {
                return Reply::message(406, "Can't cancel the automatic merge");
            }
            w.get_mr_mut(&key.0, key.1).auto_merge = None;
            w.events.push(Event::AutoMergeCancelled {
                project: key.0.clone(),
                iid: key.1,
            });
            Reply::json(201, &w.mr_json(&w.mrs[&key], false))
        }
        ("PUT", "/projects/{id}/merge_requests/{iid}/rebase") => match w.rebase(&key) {
            Ok(()) => Reply::json(202, &json!({ "rebase_in_progress": true })),
            Err(ApiError(code, msg)) => Reply::message(code, &msg),
        },
        ("GET", "/projects/{id}/repository/commits/{sha}") => match w.commits.get(&params[1]) {
            Some(c) => Reply::json(200, &World::commit_json(c)),
            None => Reply::not_found("Commit"),
        },
        ("GET", "/projects/{id}/repository/commits/{sha}/statuses") => {
            let items = w.statuses_json(&project, &params[1]);
            paged(w, query, items)
        }
        ("GET", "/projects/{id}/pipelines/{pid}/jobs") => {
            let Some(p) = params[1]
                .parse::<u64>()
                .ok()
                .and_then(|id| w.pipelines.get(&id))
                .filter(|p| p.project == project)
            else {
                return Reply::not_found("");
            };
            let include_retried = param(query, "include_retried").as_deref() == Some("true");
            let items = p
                .jobs
                .iter()
                .filter(|j| include_retried || !j.retried)
                .map(|j| w.job_json(p, j))
                .collect();
            paged(w, query, items)
        }
        ("POST", "/projects/{id}/pipelines/{pid}/retry") => {
            let id = params[1].parse::<u64>().unwrap_or(0);
            match w.retry_pipeline(id) {
                Ok(()) => {
                    let p = &w.pipelines[&id];
                    Reply::json(
                        201,
                        &json!({ "id": p.id, "sha": p.sha, "status": p.status() }),
                    )
                }
                Err(ApiError(code, msg)) => Reply::message(code, &msg),
            }
        }
        ("GET", "/projects/{id}/jobs/{job}/trace") => {
            let id = params[1].parse::<u64>().unwrap_or(0);
            let trace = w
                .pipelines
                .values()
                .flat_map(|p| &p.jobs)
                .find(|j| j.id == id)
                .and_then(|j| j.trace.clone());
            match trace {
                Some(t) => Reply::text(200, &t),
                None => Reply::not_found(""),
            }
        }
        _ => Reply::message(404, "404 Not Found"),
    }
}

// ── a TestEnv with a fake GitLab ────────────────────────────────────────────────────────────

/// A [`TestEnv`](super::env::TestEnv) whose config also has a `gitlab:` block pointing at a
/// fresh fake GitLab (token in `PRM_TEST_GITLAB_TOKEN`). Derefs to the `TestEnv`; `advance`
/// moves the fake GitLab's clock too.
pub struct GitLabEnv {
    pub env: super::env::TestEnv,
    pub gl: FakeGitLab,
}

impl GitLabEnv {
    pub fn new() -> Self {
        Self::with_config("")
    }

    /// Like [`GitLabEnv::new`], with `extra` YAML appended to the config.
    pub fn with_config(extra: &str) -> Self {
        let gl = FakeGitLab::start();
        let mut env = super::env::TestEnv::with_config(&format!(
            "gitlab:\n  api_url: {}\n  token_env: PRM_TEST_GITLAB_TOKEN\n{extra}",
            gl.url()
        ));
        env.vars.push(("PRM_TEST_GITLAB_TOKEN".into(), gl.token()));
        GitLabEnv { env, gl }
    }

    /// Moves both clocks (pr-monitor's `--now` and the fakes') by `secs`.
    pub fn advance(&mut self, secs: i64) {
        self.env.advance(secs);
        let now = self.env.now.clone();
        self.gl.world(|w| w.set_now(&now));
    }
}

impl std::ops::Deref for GitLabEnv {
    type Target = super::env::TestEnv;
    fn deref(&self) -> &Self::Target {
        &self.env
    }
}

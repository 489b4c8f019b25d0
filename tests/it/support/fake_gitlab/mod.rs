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
//! (author and committer names, dates, signatures: `head_signed(kind, verified)`, answered by
//! `…/commits/:sha/signature`, 404 when unsigned), pipelines with jobs (status, failure_reason, trace,
//! retried attempts), external commit statuses, each MR's label and state events
//! ([`ResourceEvent`]) and an [`Event`] log. `detailed_merge_status` is
//! derived like GitLab's unless overridden. A push leaves the MR's head pipeline on the old
//! head until `w.pipeline`/`w.job` makes one for the new head.
//!
//! Auto-merge: `PUT …/merge` with `merge_when_pipeline_succeeds`/`auto_merge` arms it while
//! the head's pipeline runs, merges when it succeeds ([`World::settle`], run before every
//! request) and is dropped when it fails. Armed while the head has no pipeline of its own, it
//! merges AT ONCE (GitLab's trap, gitlab-org/gitlab#37292): [`Event::Merged`] records
//! `at_once_without_pipeline`.
//!
//! Merge trains ([`train`]): `w.project(p).merge_trains()` gives each target branch a train;
//! armed MRs join it once their pipeline passes, `w.train_job` puts jobs in a car's train
//! pipeline, a failed one drops the car and the MR's auto-merge, the front car merges when its
//! pipeline passes, and a direct `PUT …/merge` is refused (405).
//!
//! # Requests and faults
//! Every request needs `Authorization: Bearer <token>` (401 otherwise), and is checked against
//! GitLab's API reference ([`api`]): an operation GitLab has not is answered 404, a value of the
//! wrong type or a missing required one 400, an undeclared attribute is ignored as GitLab does;
//! each is recorded and fails the test unless the test takes it (`take_nonconforming`). Lists page with
//! `per_page` (capped by `w.max_per_page`) and answer `x-page`, `x-per-page`, `x-next-page`
//! (empty on the last page), `x-total`, `x-total-pages`. The [`RequestLog`] counts by route
//! template (`GET /projects/{id}/merge_requests/{iid}`) or `METHOD /concrete/path`.
//! `gl.fault(Fault::status(502).on("GET /projects/{id}/merge_requests/{iid}").times(3))` and
//! `Fault::rate_limit(secs)` (429 `Retry later` with `Retry-After` and `RateLimit-*`),
//! `Fault::status_after_handling(code)` (the write happens, the answer is `code`) and
//! `Fault::apply_then_hang()` (the write happens, the answer is held back for a minute).
//! Every authenticated answer carries `RateLimit-Limit / -Observed / -Remaining / -Reset` from
//! `w.rate` (2,000 requests a minute, as on GitLab.com), and a spent budget answers 429 until
//! its window ends.
//!
//! The token's user (`GET /user`) is `owner`, named "The Owner", with a primary email and a
//! separate commit email; a rebase rewrites the head as that name and commit email (GitLab
//! writes names and emails into commits, never usernames). `PUT …/rebase` answers 202 and,
//! with `w.rebase_takes_reads = n`, the MR shows `rebase_in_progress: true` (asked with
//! `include_rebase_in_progress=true`) for n reads before the rebase is over; a rebase that
//! fails (`.rebase_fails()`, or a conflict) leaves the head and sets `merge_error`.
#![allow(dead_code)] // A support API: each test uses a different part of it.

pub mod api;
pub mod train;
pub mod world;

use serde_json::{Value, json};

pub use world::*;

use super::fake_server::{self, FakeServer, Incoming, Reply, Shared};

/// A running fake GitLab. Dropping it stops the server.
pub type FakeGitLab = FakeServer<World, FaultKind>;

/// A queued fault: what, on which requests, how often.
pub type Fault = fake_server::Fault<FaultKind>;

/// One request the fake received; `path` is under `/api/v4`, `key` is `METHOD template`, e.g.
/// `GET /projects/{id}/merge_requests/{iid}`.
pub type LoggedRequest = fake_server::LoggedRequest<FaultKind>;

/// The requests received, in order.
pub type RequestLog = fake_server::RequestLog<FaultKind>;

/// The placeholders of the route templates (see [`RequestLog::matching`]).
const PLACEHOLDERS: &[&str] = &[
    "{id}",
    "{iid}",
    "{did}",
    "{sha}",
    "{pid}",
    "{job}",
    "{branch}",
    "{name}",
    "{user_id}",
];

impl FakeGitLab {
    pub fn start() -> Self {
        FakeServer::serve("FakeGitLab", PLACEHOLDERS, World::default(), handle)
    }

    /// `http://127.0.0.1:PORT/api/v4` (the `api_url`).
    pub fn url(&self) -> String {
        format!("{}/api/v4", self.base_url())
    }

    pub fn token(&self) -> String {
        self.world(|w| w.token.clone())
    }
}

// ── faults ──────────────────────────────────────────────────────────────────────────────────

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// Answer `status` without handling the request.
    Status(u16),
    /// Handle the request (its effects happen), then answer `status` instead.
    StatusAfterHandling(u16),
    /// Handle the request (its effects happen), then hold the answer back for `Duration` and
    /// answer 504: for tests that kill the client between the forge's effect and its record.
    HangAfterHandling(std::time::Duration),
    /// 429 `Retry later`, `Retry-After: secs`.
    RateLimit { retry_after_secs: u64 },
}

/// The constructors; `.on(pattern)` (see [`RequestLog::count`]), `.times(n)`, `.always()` are
/// [`fake_server::Fault`]'s.
impl Fault {
    pub fn status(code: u16) -> Self {
        Self::new(FaultKind::Status(code))
    }
    pub fn rate_limit(retry_after_secs: u64) -> Self {
        Self::new(FaultKind::RateLimit { retry_after_secs })
    }
    /// Handles the request, then answers `code` (the write happened; the client cannot know).
    pub fn status_after_handling(code: u16) -> Self {
        Self::new(FaultKind::StatusAfterHandling(code))
    }
    /// The write happens, and the answer never comes (for a minute).
    pub fn apply_then_hang() -> Self {
        Self::new(FaultKind::HangAfterHandling(
            std::time::Duration::from_secs(60),
        ))
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
            "merge_trains" if *seg != "merge_requests" => Some("{branch}"),
            "branches" => Some("{name}"),
            "all" if i >= 2 && segs[i - 2] == "members" => Some("{user_id}"),
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

/// GitLab's JSON answer.
fn json(status: u16, v: &Value) -> Reply {
    Reply::json_as(status, v, "application/json")
}

/// GitLab's text answer (job traces, the rate limit's).
fn text(status: u16, s: &str) -> Reply {
    Reply::text_as(status, s, "text/plain")
}

fn message(status: u16, msg: &str) -> Reply {
    json(status, &json!({ "message": msg }))
}

fn not_found(what: &str) -> Reply {
    message(404, &format!("404 {what} Not Found"))
}

fn handle(shared: &Shared<World, FaultKind>, req: &Incoming) -> Reply {
    let path = req.path.strip_prefix("/api/v4").unwrap_or(&req.path);
    let (tmpl, params) = template(path);
    let entry = LoggedRequest::new(req, path, &tmpl);
    let authorization = entry.authorization.clone();
    let (seq, fault) = shared.log(entry);
    let reply = match fault {
        Some(FaultKind::Status(code)) => message(code, &format!("{code} Fault")),
        Some(FaultKind::RateLimit { retry_after_secs }) => {
            let mut r = text(429, "Retry later\n");
            let reset = chrono::Utc::now().timestamp() + i64::try_from(retry_after_secs).unwrap();
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
        Some(FaultKind::StatusAfterHandling(code)) => {
            handled(shared, req, &tmpl, &params, authorization.as_deref());
            message(code, &format!("{code} Fault"))
        }
        Some(FaultKind::HangAfterHandling(d)) => {
            handled(shared, req, &tmpl, &params, authorization.as_deref());
            shared.world().held_answers += 1;
            std::thread::sleep(d);
            message(504, "504 Gateway Timeout")
        }
        None => handled(shared, req, &tmpl, &params, authorization.as_deref()),
    };
    shared.set_status(seq, reply.status);
    reply
}

/// The request handled by the model (after the token check and the rate budget), under the
/// world's lock.
fn handled(
    shared: &Shared<World, FaultKind>,
    req: &Incoming,
    tmpl: &str,
    params: &[String],
    authorization: Option<&str>,
) -> Reply {
    let mut w = shared.world();
    let token = authorization.and_then(|a| a.strip_prefix("Bearer "));
    w.acting = match token {
        Some(t) if t == w.token => None,
        Some(t) if w.people.contains_key(t) => w.people.get(t).cloned(),
        _ => return message(401, "401 Unauthorized"),
    };
    w.rate.reset_if_due(chrono::Utc::now().timestamp());
    if w.rate.used >= w.rate.limit {
        // A spent budget: GitLab's throttle answer, not counted.
        let mut r = text(429, "Retry later\n");
        let wait = w.rate.reset_epoch - chrono::Utc::now().timestamp();
        r.headers
            .push(("Retry-After".into(), wait.max(0).to_string()));
        r.headers.extend(w.rate.headers());
        r.headers.retain(|(k, _)| k != "RateLimit-Remaining");
        r.headers.push(("RateLimit-Remaining".into(), "0".into()));
        return r;
    }
    w.rate.used += 1;
    w.settle();
    let query = req.query.as_deref();
    // A request GitLab's API reference refuses is recorded (failing the test) and answered
    // the way GitLab answers it.
    if let Err(refusal) = api::check(&req.method, tmpl, query, &req.body) {
        let q = query.map_or(String::new(), |q| format!("?{q}"));
        shared.nonconforming(format!(
            "{} {tmpl}{q} {}: {refusal:?}",
            req.method, req.body
        ));
        match refusal {
            api::Refusal::NotFound(_) => return message(404, "404 Not Found"),
            api::Refusal::Invalid(why) => return json(400, &json!({ "error": why })),
            api::Refusal::Undeclared(_) => {}
        }
    }
    let mut r = route(&mut w, &req.method, tmpl, params, query, &req.body);
    if tmpl == "/projects/{id}/jobs/{job}/trace" && r.status == 200 {
        r = Reply::ranged(&r.body, req.header("range"), w.traces_ignore_range);
        r.content_type = Some("text/plain".into());
    }
    r.headers.extend(w.rate.headers());
    r
}

/// Every value of a repeated parameter (`iids[]=1&iids[]=2`, brackets escaped or not).
fn param_all(query: Option<&str>, name: &str) -> Vec<String> {
    query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| decode(k) == name)
        .map(|(_, v)| decode(v))
        .collect()
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
    let mut r = json(200, &Value::Array(slice));
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

#[expect(
    clippy::too_many_lines,
    reason = "the fake's REST routes: one short arm per route"
)]
fn route(
    w: &mut World,
    method: &str,
    tmpl: &str,
    params: &[String],
    query: Option<&str>,
    body: &str,
) -> Reply {
    // GitLab's `:id` is the project's path or its numeric id.
    let project = params.first().cloned().unwrap_or_default();
    let project = match project.parse::<u64>() {
        Ok(id) => w
            .projects
            .values()
            .find(|p| p.id == id)
            .map_or(project, |p| p.path.clone()),
        Err(_) => project,
    };
    let iid = || {
        params
            .get(1)
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let key = (project.clone(), iid());
    if tmpl != "/user" && tmpl != "/merge_requests" && !w.projects.contains_key(&project) {
        return not_found("Project");
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
                v => json(200, v),
            };
        }
    }
    let mr_routes = tmpl.starts_with("/projects/{id}/merge_requests/{iid}");
    if mr_routes && !w.mrs.contains_key(&key) {
        return not_found("Merge Request");
    }
    match (method, tmpl) {
        ("GET", "/user") if w.acting.is_some() => {
            let login = w.actor();
            json(
                200,
                &json!({ "id": 2, "username": login, "name": login, "state": "active",
                         "email": format!("{login}@example.com"),
                         "commit_email": format!("{login}@example.com"), "public_email": "" }),
            )
        }
        ("GET", "/user") => json(
            200,
            &json!({
                "id": 1,
                "username": w.viewer,
                "name": w.viewer_name,
                "state": "active",
                "email": w.viewer_email,
                "commit_email": w.viewer_commit_email,
                "public_email": "",
            }),
        ),
        ("GET", "/projects/{id}") => json(200, &World::project_json(&w.projects[&project])),
        ("GET", "/projects/{id}/members/all/{user_id}") => {
            let p = &w.projects[&project];
            let viewer = (w.viewer.clone(), 40);
            let found = p
                .members
                .iter()
                .chain(std::iter::once(&viewer))
                .find(|(name, _)| World::user_json(name)["id"].as_u64() == params[1].parse().ok());
            match found {
                Some((name, level)) => {
                    let mut user = World::user_json(name);
                    user["access_level"] = json!(level);
                    json(200, &user)
                }
                None => not_found("Member"),
            }
        }
        // Every MR the token's user can see across projects; `scope=created_by_me` keeps the
        // ones they opened (GitLab's default scope for this route).
        ("GET", "/merge_requests") => {
            let state = param(query, "state");
            let mine = param(query, "scope").is_none_or(|s| s == "created_by_me");
            let me = w.actor();
            let items = w
                .mrs
                .values()
                .filter(|m| !mine || m.author == me)
                .filter(|m| state.as_deref().is_none_or(|s| s == "all" || s == m.state))
                .map(|m| w.mr_json(m, false))
                .collect();
            paged(w, query, items)
        }
        ("GET", "/projects/{id}/merge_requests") => {
            let state = param(query, "state");
            let iids: Vec<u64> = param_all(query, "iids[]")
                .iter()
                .filter_map(|i| i.parse().ok())
                .collect();
            let items = w
                .mrs
                .values()
                .filter(|m| m.project == project)
                .filter(|m| iids.is_empty() || iids.contains(&m.iid))
                .filter(|m| state.as_deref().is_none_or(|s| s == "all" || s == m.state))
                .map(|m| w.mr_json(m, false))
                .collect();
            paged(w, query, items)
        }
        ("GET", "/projects/{id}/merge_requests/{iid}") => {
            let asked = |name: &str| param(query, name).as_deref() == Some("true");
            w.read_mr(&key);
            let mr = &w.mrs[&key];
            let mut v = w.mr_json(mr, asked("include_diverged_commits_count"));
            if asked("include_rebase_in_progress") {
                v["rebase_in_progress"] = json!(mr.rebase_reads_left.is_some());
            }
            json(200, &v)
        }
        ("GET", "/projects/{id}/merge_requests/{iid}/approvals") => {
            json(200, &w.approvals_json(&w.mrs[&key]))
        }
        ("GET", "/projects/{id}/merge_requests/{iid}/discussions") => {
            let items = w.mrs[&key]
                .discussions
                .iter()
                .map(World::discussion_json)
                .collect();
            let mut reply = paged(w, query, items);
            if w.endless_discussions {
                let page = param(query, "page").and_then(|p| p.parse::<u64>().ok());
                let next = (page.unwrap_or(1) + 1).to_string();
                for (name, value) in &mut reply.headers {
                    if name == "X-Next-Page" {
                        value.clone_from(&next);
                    }
                }
            }
            reply
        }
        ("POST", "/projects/{id}/merge_requests/{iid}/discussions/{did}/notes") => {
            let text = json_field(body, "body")
                .and_then(|b| b.as_str().map(str::to_owned))
                .or_else(|| param(query, "body"));
            match text {
                None => message(400, "400 Bad request - body is missing"),
                Some(text) => match w.reply(&key, &params[2], &text) {
                    Some(v) => json(201, &v),
                    None => not_found("Discussion"),
                },
            }
        }
        ("PUT", "/projects/{id}/merge_requests/{iid}/discussions/{did}") => {
            if !flag(body, query, "resolved") {
                return message(400, "400 Bad request - resolved is missing");
            }
            match w.resolve(&key, &params[2]) {
                Some(v) => json(200, &v),
                None => not_found("Discussion"),
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
                Ok(()) => json(200, &w.mr_json(&w.mrs[&key], false)),
                Err(ApiError(code, msg)) => message(code, &msg),
            }
        }
        ("GET", "/projects/{id}/merge_trains/{branch}")
            if w.projects[&project].train_list_forbidden =>
        {
            message(403, "403 Forbidden")
        }
        ("GET", "/projects/{id}/merge_trains/{branch}") => {
            let asc = param(query, "sort").as_deref() == Some("asc");
            let items = w.train_json(&project, &params[1], asc);
            paged(w, query, items)
        }
        ("GET", "/projects/{id}/merge_trains/merge_requests/{iid}") => {
            match w.mrs.get(&key).and_then(|_| w.car(&key.0, key.1)) {
                Some((_, car)) => json(200, &w.car_json(&project, car)),
                None => not_found("Merge Train"),
            }
        }
        ("POST", "/projects/{id}/merge_trains/merge_requests/{iid}") => {
            let sha = json_field(body, "sha")
                .and_then(|s| s.as_str().map(str::to_owned))
                .or_else(|| param(query, "sha"));
            let squash = flag(body, query, "squash");
            let auto =
                flag(body, query, "auto_merge") || flag(body, query, "when_pipeline_succeeds");
            match w.add_to_train(&key, sha.as_deref(), squash, auto) {
                Ok(code) => {
                    let branch = w.mrs[&key].target_branch.clone();
                    json(code, &Value::Array(w.train_json(&project, &branch, false)))
                }
                Err(ApiError(code, msg)) => message(code, &msg),
            }
        }
        ("POST", "/projects/{id}/merge_requests/{iid}/cancel_merge_when_pipeline_succeeds") => {
            if w.mrs[&key].auto_merge.is_none() {
                return message(406, "Can't cancel the automatic merge");
            }
            w.get_mr_mut(&key.0, key.1).auto_merge = None;
            w.events.push(Event::AutoMergeCancelled {
                project: key.0.clone(),
                iid: key.1,
            });
            json(201, &w.mr_json(&w.mrs[&key], false))
        }
        ("PUT", "/projects/{id}/merge_requests/{iid}/rebase") => match w.rebase(&key) {
            Ok(()) => json(202, &json!({ "rebase_in_progress": true })),
            Err(ApiError(code, msg)) => message(code, &msg),
        },
        ("GET", "/projects/{id}/repository/compare") => {
            let (from, to) = (param(query, "from"), param(query, "to"));
            if param(query, "straight").as_deref() != Some("false") {
                return message(
                    400,
                    "400 Bad request - straight must be false for a merge-base compare",
                );
            }
            if let (Some(from), Some(to)) = (&from, &to)
                && let Some(commits) = w.branch_commits_between(&project, from, to)
            {
                return json(
                    200,
                    &json!({
                        "commit": commits.last(), "commits": commits, "diffs": [],
                        "compare_timeout": false, "compare_same_ref": from == to, "web_url": "",
                    }),
                );
            }
            let side = w.mrs.values().find_map(|mr| {
                let open = mr.project == project && mr.state == "opened";
                if !open {
                    None
                } else if from.as_deref() == Some(&mr.target_branch)
                    && to.as_deref() == Some(&mr.sha)
                {
                    Some(&mr.head_files)
                } else if from.as_deref() == Some(&mr.sha)
                    && to.as_deref() == Some(&mr.target_branch)
                {
                    Some(&mr.base_files)
                } else {
                    None
                }
            });
            match side {
                Some(files) => json(
                    200,
                    &json!({
                        "commit": null, "commits": [], "compare_timeout": false, "compare_same_ref": false,
                        "diffs": files.iter().map(|f| json!({
                            "old_path": f, "new_path": f, "a_mode": "100644", "b_mode": "100644",
                            "diff": "", "new_file": false, "renamed_file": false, "deleted_file": false,
                        })).collect::<Vec<_>>(),
                        "web_url": "",
                    }),
                ),
                None => not_found("Ref"),
            }
        }
        ("GET", "/projects/{id}/repository/branches/{name}") => {
            json(200, &w.branch_json(&project, &params[1]))
        }
        ("GET", "/projects/{id}/events") => {
            if let Some(a) = param(query, "action")
                && ![
                    "pushed",
                    "created",
                    "updated",
                    "closed",
                    "reopened",
                    "merged",
                    "commented",
                    "joined",
                    "left",
                    "destroyed",
                    "expired",
                    "approved",
                ]
                .contains(&a.as_str())
            {
                return message(400, "400 Bad request - action does not have a valid value");
            }
            let items = if param(query, "action").is_none_or(|a| a == "pushed") {
                w.push_events_json(&project)
            } else {
                Vec::new()
            };
            paged(w, query, items)
        }
        ("GET", "/projects/{id}/pipelines") => {
            let items = w.pipelines_json(&project);
            paged(w, query, items)
        }
        ("GET", "/projects/{id}/repository/commits/{sha}") => match w.commits.get(&params[1]) {
            Some(c) => json(200, &World::commit_json(c)),
            None => not_found("Commit"),
        },
        ("GET", "/projects/{id}/repository/commits/{sha}/signature") => {
            match w.commits.get(&params[1]) {
                None => not_found("Commit"),
                Some(c) => match c.signature {
                    Some(s) => json(200, &World::signature_json(c, s)),
                    None => not_found("Signature"),
                },
            }
        }
        ("GET", "/projects/{id}/merge_requests/{iid}/resource_label_events") => {
            let items = w.resource_events_json(&key, true);
            paged(w, query, items)
        }
        ("GET", "/projects/{id}/merge_requests/{iid}/resource_state_events") => {
            let items = w.resource_events_json(&key, false);
            paged(w, query, items)
        }
        ("GET", "/projects/{id}/merge_requests/{iid}/commits") => {
            let items = w.mr_commits_json(&w.mrs[&key]);
            paged(w, query, items)
        }
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
                return not_found("");
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
                    json(
                        201,
                        &json!({ "id": p.id, "sha": p.sha, "status": p.status() }),
                    )
                }
                Err(ApiError(code, msg)) => message(code, &msg),
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
                Some(t) => text(200, &t),
                None => not_found(""),
            }
        }
        _ => message(404, "404 Not Found"),
    }
}

// ── a TestEnv with a fake GitLab ────────────────────────────────────────────────────────────

/// A [`TestEnv`](super::env::TestEnv) whose config also has a `gitlab:` block pointing at a
/// fresh fake GitLab (token in `PRM_TEST_GITLAB_TOKEN`; `web_url` the host the fake's own
/// addresses name, as a real instance's). Derefs to the `TestEnv`; `advance`
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
            "gitlab:\n  api_url: {}\n  web_url: https://gitlab.example.com\n  token_env: PRM_TEST_GITLAB_TOKEN\n{extra}",
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

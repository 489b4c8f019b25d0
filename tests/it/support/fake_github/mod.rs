//! A stateful, in-process fake GitHub for integration tests: a real HTTP server on
//! `127.0.0.1:<random port>` that answers GitHub's GraphQL API and the REST routes pr-monitor
//! uses, the way GitHub does (shapes, status codes, error strings, quirks).
//!
//! # Use
//! ```ignore
//! let gh = FakeGitHub::start();                    // viewer "owner", token "test-token"
//! gh.world(|w| {
//!     w.repo("octo/app").required_checks(&["lint"]);
//!     w.pr("octo/app", 1).author("dev").head_commit(|c| c.author("fixer-bot"));
//!     w.check_run("octo/app", 1, "lint").failure().log("error: unused variable\n");
//!     w.thread("octo/app", 1).comment("reviewer", "please rename").unresolved();
//! });
//! // run pr-monitor with api_url = gh.url(), graphql_url = gh.graphql_url(), --now DEFAULT_NOW
//! gh.world(|w| w.push("octo/app", 1, "human"));   // a new head by "human", no checks yet
//! assert_eq!(gh.requests().count("POST /graphql PullRequestSnapshots"), 1);
//! assert_eq!(gh.world(|w| w.merges("octo/app", 1)), 0);
//! ```
//!
//! # The model ([`world`])
//! [`World`] holds repositories, PRs, commits with check suites / check runs / statuses,
//! review threads, reviews, comments, job logs, the clock (`now`, default [`DEFAULT_NOW`]) and
//! an [`Event`] log of everything clients made the forge do. Tests change it through
//! [`FakeGitHub::world`], with builders that create on first use and chain:
//! - `w.repo(r)` → `.default_branch(b)`, `.auto_merge_allowed(bool)`, `.merge_methods(&[..])`,
//!   `.unprotected()`, `.required_checks(&[..])`, `.strict()`, `.required_approvals(n)`,
//!   `.require_resolved_threads()`, `.protect(branch, Protection)`;
//! - `w.pr(r, n)` → `.title`, `.body`, `.author`, `.ghost_author`, `.draft`, `.ready`, `.closed`,
//!   `.merged`, `.reopened`, `.head_ref`, `.base_ref`, `.cross_repository`, `.label`, `.labels`,
//!   `.mergeable(Mergeable)`, `.conflicting`, `.mergeable_unknown_for(reads)`, `.behind(n)`,
//!   `.merge_state(MergeState)` (override), `.auto_merge(method)`, `.head_commit(|c| ..)`;
//!   getters `.node_id()`, `.head_sha()`; after every push (`w.push*`, a branch update) the
//!   next read of `mergeable` / `mergeStateStatus` answers UNKNOWN, as GitHub's does;
//! - commits (`head_commit`, `push_with` closures) → `.author`, `.committer`, `.by`,
//!   `.unknown_author`, `.committed_at`, `.authored_at`, `.message`;
//! - `w.check_run(r, n, name)` (a new run on the head; `check_run_on(r, sha, name)` for any
//!   commit; `update_check_run(r, n, name)` for the newest existing one) →
//!   `.success` (default), `.failure`, `.cancelled`, `.timed_out`, `.skipped`, `.neutral`,
//!   `.conclusion(c)`, `.queued`, `.in_progress`, `.status(s)`, `.title`, `.summary`, `.text`,
//!   `.annotation(level, path, line, msg)`, `.log(text)`, `.details_url`, `.workflow(name)`,
//!   `.event(e)`, `.app(slug)` (non-Actions), `.started_at`, `.completed_at`; getters `.job_id()`,
//!   `.run_id()`, `.node_id()`. Runs of one workflow share a workflow run (run id);
//! - `w.status(r, n, context)` → `.success` (default), `.failure`, `.error`, `.pending`,
//!   `.target_url`, `.description`, `.at(t)`;
//! - `w.thread(r, n)` → `.comment(author, body)`, `.comment_at(author, body, t)`, `.resolved`,
//!   `.unresolved`, `.outdated`, `.path`, `.line`; getter `.id()`;
//! - `w.review(r, n, author)` → `.approved`, `.changes_requested`, `.dismissed`, `.state(s)`,
//!   `.body`, `.at(t)`; `.id()`;
//! - `w.comment(r, n, author, body)` → `.at(t)`, `.edited_at(t)`; `.id()`;
//! - `w.push(r, n, login) -> sha`, `w.push_with(r, n, |c| ..) -> sha`, `w.advance_base(r, base, n)`,
//!   `w.advance(secs)`, `w.set_now(rfc3339)`, `w.settle()`;
//! - reads: `get_repo`, `get_pr(_mut)`, `head`, `commit(_mut)`, `thread_by_id`,
//!   `check_run_by_job_id`, `merge_state`, `head_outcomes`, `events`, and counts `merges`,
//!   `reruns(run_id)`, `auto_merge_enables`, `branch_updates`, `replies(thread_id)`, `count(pred)`.
//!
//! A builder borrows the world, so end a closure that only builds with `;`
//! (`gh.world(|w| { w.repo("o/r"); })`); `push` returns the new sha and can end one.
//!
//! Times: builders stamp with `w.now`, except a new PR's first commit (an hour earlier) and
//! the PR's creation (two hours earlier), so a fresh PR is not "recently active".
//!
//! `mergeStateStatus` is derived like GitHub's unless overridden (see [`World::merge_state`]):
//! DRAFT, DIRTY (conflict), BLOCKED (required checks / approvals / resolved threads missing;
//! masks BEHIND), BEHIND (strict protection), UNSTABLE (another check failing or pending),
//! CLEAN. Auto-merge is carried out by the fake when an armed PR reads CLEAN or UNSTABLE at
//! the start of a request (`w.auto_merge_executes = false` turns that off). Merging a PR makes
//! the other open PRs into the same base one commit more behind.
//!
//! # The API
//! GraphQL ([`graphql`]): documents are validated against GitHub's schema and executed by
//! resolvers over the world; mutations `enablePullRequestAutoMerge`,
//! `disablePullRequestAutoMerge`, `updatePullRequestBranch`, `mergePullRequest`,
//! `addPullRequestReviewThreadReply`, `resolveReviewThread`. REST: see [`rest`]; every REST
//! request is checked against GitHub's REST description first ([`openapi`]). Every API
//! request needs `Authorization: Bearer <w.token>` (or `token <w.token>`), else 401; answers
//! carry `x-ratelimit-*` headers. `w.enterprise = true` plays GitHub Enterprise Server: a
//! document naming `mergeStateStatus` is refused unless `Accept` names [`MERGE_INFO_PREVIEW`].
//!
//! # Faults
//! `gh.fault(Fault::status(502).on("POST /graphql").times(2))` — queued faults apply in order
//! to matching requests. Kinds: [`Fault::status`], [`Fault::delay`], [`Fault::rate_limit`]
//! (secondary, `retry-after`), [`Fault::secondary_rate_limit_without_retry_after`],
//! [`Fault::primary_rate_limit`], [`Fault::graphql_rate_limit`],
//! [`Fault::malformed`], [`Fault::status_after_handling`] and its [`Fault::merge_then_500`],
//! [`Fault::apply_then_hang`].
//! Scope: `.on(pattern)` (see [`RequestLog::count`] for patterns), `.when_query_mentions(repo, n)`
//! (only requests about that PR, e.g. a batched snapshot including it). Repetition: once by
//! default, `.times(n)`, `.always()`; a PR-scoped fault defaults to always.
//!
//! # Requests
//! [`FakeGitHub::requests`] returns the [`RequestLog`]: every request with method, path, route
//! template, GraphQL operation, the PRs it concerns, status, body and the fault applied.
#![allow(dead_code)] // A support API: each test binary uses a different part of it.

pub mod app;
pub mod events;
pub mod graphql;
pub mod openapi;
pub mod queue;
pub mod rest;
pub mod world;

use std::time::Duration;

pub use world::*;

use super::fake_server::{self, FakeServer, Incoming, Reply, Shared};
use rest::Route;

/// A running fake GitHub. Dropping it stops the server.
pub type FakeGitHub = FakeServer<World, FaultKind>;

/// A queued fault: what, on which requests, how often.
pub type Fault = fake_server::Fault<FaultKind>;

/// One request the fake received.
pub type LoggedRequest = fake_server::LoggedRequest<FaultKind>;

/// The requests received, in order.
pub type RequestLog = fake_server::RequestLog<FaultKind>;

/// The media type GitHub Enterprise Server wants before it shows `mergeStateStatus`.
pub const MERGE_INFO_PREVIEW: &str = "application/vnd.github.merge-info-preview+json";

/// The placeholders of the route templates (see [`RequestLog::matching`]).
const PLACEHOLDERS: &[&str] = &["{o}", "{r}", "{n}", "{id}", "{basehead}", "{ref}"];

impl FakeGitHub {
    /// A fake with an empty world: viewer `owner`, token `test-token`.
    pub fn start() -> Self {
        Self::start_with(World::default())
    }

    pub fn start_with(world: World) -> Self {
        graphql::warm_up();
        FakeServer::serve("FakeGitHub", PLACEHOLDERS, world, handle)
    }

    /// `http://127.0.0.1:PORT` (the `api_url`).
    pub fn url(&self) -> String {
        self.base_url().to_owned()
    }

    /// `http://127.0.0.1:PORT/graphql`.
    pub fn graphql_url(&self) -> String {
        format!("{}/graphql", self.base_url())
    }

    pub fn token(&self) -> String {
        self.world(|w| w.token.clone())
    }

    /// Job-log redirects point at a blob host on another address from now on (which, like
    /// the real one, refuses a request carrying `Authorization`); its `http://127.0.0.1:PORT`.
    pub fn log_host(&mut self) -> String {
        let host = self.second_host();
        self.world(|w| w.log_host = Some(host.clone()));
        host
    }
}

// ── faults ──────────────────────────────────────────────────────────────────────────────────

/// What a fault does to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// Answer `status` without handling the request (GitHub's 5xx bodies).
    Status(u16),
    /// Handle the request (its effects happen), then answer `status` instead.
    StatusAfterHandling(u16),
    /// Wait, then handle normally.
    Delay(Duration),
    /// 403, secondary rate limit: `retry-after`, `x-ratelimit-remaining: 0`.
    SecondaryRateLimit { retry_after_secs: u64 },
    /// 403, secondary rate limit as GitHub often sends it: no `retry-after`, and the primary
    /// budget's headers as they are (not spent).
    SecondaryRateLimitBare,
    /// 403, primary rate limit: `x-ratelimit-remaining: 0`, reset in `reset_in_secs`.
    PrimaryRateLimit { reset_in_secs: u64 },
    /// GraphQL's primary limit: HTTP 200 with a `RATE_LIMITED` error, `x-ratelimit-remaining:
    /// 0`, and the reset in `reset_in_secs` (real time; `None`: the world's reset).
    GraphqlRateLimited { reset_in_secs: Option<u64> },
    /// Handle the request, then answer 200 with the body cut in half.
    Malformed,
    /// Handle the request, then answer its JSON with every object's fields in reverse order
    /// (GitHub answers fields in the order the query selects them, not by name).
    Reordered,
    /// Handle the request (its effects happen), then never answer within `Duration`: the
    /// client is expected to die waiting (a test kills it).
    HangAfterHandling(Duration),
    /// Answer `status` with a body that echoes the request's `Authorization` header, as a
    /// careless proxy's error page does.
    EchoAuthorization(u16),
}

/// The constructors; `.on(pattern)`, `.times(n)`, `.once()`, `.always()` are
/// [`fake_server::Fault`]'s. Patterns: `"POST /graphql"`, `"POST /graphql PullRequestSnapshots"`,
/// `"PUT /repos/{o}/{r}/pulls/{n}/merge"`, or a concrete `"PUT /repos/octo/app/pulls/1/merge"`.
impl Fault {
    /// Answers `code` instead of handling the request.
    pub fn status(code: u16) -> Self {
        Self::new(FaultKind::Status(code))
    }

    /// Handles the request, then answers `code` (the write happened; the client cannot know).
    pub fn status_after_handling(code: u16) -> Self {
        Self::new(FaultKind::StatusAfterHandling(code))
    }

    /// The merge happens, the answer is a 500: for never-merge-twice tests.
    pub fn merge_then_500() -> Self {
        Self::status_after_handling(500).on("PUT /repos/{o}/{r}/pulls/{n}/merge")
    }

    /// Waits `ms` before handling.
    pub fn delay(ms: u64) -> Self {
        Self::new(FaultKind::Delay(Duration::from_millis(ms)))
    }

    /// A secondary rate limit with `retry-after: secs`.
    pub fn rate_limit(retry_after_secs: u64) -> Self {
        Self::new(FaultKind::SecondaryRateLimit { retry_after_secs })
    }

    /// A secondary rate limit without `retry-after`, the primary budget not spent: the client
    /// is to wait at least a minute, then longer.
    pub fn secondary_rate_limit_without_retry_after() -> Self {
        Self::new(FaultKind::SecondaryRateLimitBare)
    }

    /// The primary rate limit, resetting in `reset_in_secs` (real time).
    pub fn primary_rate_limit(reset_in_secs: u64) -> Self {
        Self::new(FaultKind::PrimaryRateLimit { reset_in_secs })
    }

    /// GraphQL's way of saying the points are spent: HTTP 200, `errors[].type = RATE_LIMITED`.
    pub fn graphql_rate_limit() -> Self {
        Self::new(FaultKind::GraphqlRateLimited {
            reset_in_secs: None,
        })
        .on("POST /graphql")
    }

    /// GraphQL's spent points, resetting in `reset_in_secs` (real time).
    pub fn graphql_rate_limit_resetting_in(reset_in_secs: u64) -> Self {
        Self::new(FaultKind::GraphqlRateLimited {
            reset_in_secs: Some(reset_in_secs),
        })
        .on("POST /graphql")
    }

    /// The write happens, and the answer never comes (for a minute): for tests that kill the
    /// client between the forge's effect and its record of it.
    pub fn apply_then_hang() -> Self {
        Self::new(FaultKind::HangAfterHandling(Duration::from_secs(60)))
    }

    /// `code` with an error page that repeats the request's `Authorization` header.
    pub fn echo_authorization(code: u16) -> Self {
        Self::new(FaultKind::EchoAuthorization(code))
    }

    /// 200 with a truncated JSON body (after handling).
    pub fn malformed() -> Self {
        Self::new(FaultKind::Malformed)
    }

    /// The answer's JSON with every object's fields in reverse order (after handling).
    pub fn reordered() -> Self {
        Self::new(FaultKind::Reordered)
    }

    /// Only requests about PR `number` of `repo` (a snapshot query selecting it, a page query
    /// or mutation naming one of its nodes, a REST call on it). Fires always unless `.times`.
    pub fn when_query_mentions(mut self, repo: &str, number: u64) -> Self {
        self.mentions = Some((repo.to_owned(), number));
        self
    }
}

// ── serving ─────────────────────────────────────────────────────────────────────────────────

fn server_error(status: u16, graphql: bool) -> Reply {
    if graphql && matches!(status, 502 | 504) {
        // What GitHub's GraphQL endpoint says when a query times out.
        return Reply::json(
            status,
            &serde_json::json!({"data": null, "errors": [{"message": "Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug. Please include `0000:1111:2222:3333:44444444` when reporting this issue."}]}),
        );
    }
    let message = match status {
        500 => "Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Error",
    };
    rest::message(status, message, "https://docs.github.com/rest")
}

type GitHubShared = Shared<World, FaultKind>;

#[expect(
    clippy::too_many_lines,
    reason = "the fake's dispatch: faults, auth, budget, then the route, in the order GitHub applies them"
)]
fn handle(shared: &GitHubShared, req: &Incoming) -> Reply {
    let (method, path, body) = (req.method.as_str(), req.path.as_str(), req.body.as_str());
    let route = rest::route(method, path);
    let is_graphql = route == Route::Graphql;
    let template = if route == Route::Unknown {
        path
    } else {
        route.template()
    };
    // A REST request GitHub's REST description refuses is recorded (failing the test) and
    // answered the way GitHub answers it, once authenticated.
    let refusal = if route.is_api() && !is_graphql {
        openapi::spec()
            .check(method, path, req.query.as_deref(), body)
            .err()
    } else {
        None
    };
    if let Some(r) = &refusal {
        let query = req
            .query
            .as_deref()
            .map_or(String::new(), |q| format!("?{q}"));
        shared.nonconforming(format!("{method} {path}{query} {body}: {r:?}"));
    }
    let body_json: Option<serde_json::Value> = serde_json::from_str(body).ok();
    // `None` for a GraphQL request means its body is not JSON.
    let mut prepared = if is_graphql {
        body_json.as_ref().map(graphql::prepare)
    } else {
        None
    };
    // A server without some fields refuses documents that use them (a plain word match on the
    // query text is enough for the field names tests use).
    if let (Some(p), Some(query)) = (
        prepared.as_mut(),
        body_json.as_ref().and_then(|b| b["query"].as_str()),
    ) {
        let mut missing = shared.world().missing_fields.clone();
        let previewed = req
            .header("accept")
            .is_some_and(|a| a.contains(MERGE_INFO_PREVIEW));
        if shared.world().enterprise && !previewed {
            missing.push(("PullRequest".into(), "mergeStateStatus".into()));
        }
        let uses = |field: &str| {
            query
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .any(|word| word == field)
        };
        let removed = shared.world().removed_fields.clone();
        let refused = missing
            .iter()
            .find(|(_, f)| uses(f))
            .or_else(|| removed.iter().find(|(t, f)| selects_on(query, t, f)));
        if let Some((ty, field)) = refused {
            p.refuse(serde_json::json!({ "errors": [{
                "message": format!("Field '{field}' doesn't exist on type '{ty}'"),
                "extensions": {"code": "undefinedField", "typeName": ty, "fieldName": field},
            }]}));
        }
    }
    let mut entry = LoggedRequest::new(req, path, template);
    entry.operation = prepared.as_ref().and_then(|p| p.operation_name.clone());
    entry.mutation = prepared.as_ref().is_some_and(|p| p.is_mutation);
    entry.prs = {
        let w = shared.world();
        match &prepared {
            Some(p) => p.mentions(&w),
            None => rest::mentions(&route, &w),
        }
    };
    if let Some(op) = &entry.operation {
        entry.key = format!("{method} {template} {op}");
    }
    // GraphQL costs its points (nothing when refused before execution); REST one each.
    entry.points = if is_graphql {
        prepared
            .as_ref()
            .and_then(|p| p.cost)
            .map_or(0, |c| c.points)
    } else {
        u64::from(route.is_api() && route != Route::RateLimit)
    };
    let authorization = entry.authorization.clone();
    let charge = entry.points;
    // The budget is whole again once its reset time (real time) has passed.
    shared
        .world()
        .rate
        .reset_if_due(chrono::Utc::now().timestamp());
    let (seq, fault) = shared.log(entry);
    // A spent budget refuses what it cannot cover, as GitHub does: GraphQL with HTTP 200 and
    // `RATE_LIMITED`, REST with 403; neither is charged.
    let fault = fault.or_else(|| {
        let w = shared.world();
        if !route.is_api() || route == Route::RateLimit {
            None
        } else if is_graphql {
            (charge > w.rate.limit.saturating_sub(w.rate.graphql_used)).then_some(
                FaultKind::GraphqlRateLimited {
                    reset_in_secs: None,
                },
            )
        } else {
            (w.rate.core_used >= w.rate.limit).then_some(FaultKind::PrimaryRateLimit {
                reset_in_secs: u64::try_from(w.rate.reset_epoch - chrono::Utc::now().timestamp())
                    .unwrap_or(0),
            })
        }
    });
    let charged = !matches!(
        fault,
        Some(
            FaultKind::Status(_)
                | FaultKind::EchoAuthorization(_)
                | FaultKind::SecondaryRateLimit { .. }
                | FaultKind::SecondaryRateLimitBare
                | FaultKind::PrimaryRateLimit { .. }
                | FaultKind::GraphqlRateLimited { .. }
        )
    );
    if !charged {
        shared.set_points(seq, 0);
    } else if is_graphql {
        // Charged before execution, so `rateLimit { remaining }` includes this query.
        let points = shared.points(seq);
        shared.world().rate.graphql_used += points;
    }

    let mut reply = answer(
        shared,
        &route,
        fault.as_ref(),
        prepared,
        refusal,
        req,
        authorization.as_deref(),
    );

    if route.is_api() {
        let mut w = shared.world();
        let graphql_resource = is_graphql;
        let refused = matches!(
            fault,
            Some(
                FaultKind::SecondaryRateLimit { .. }
                    | FaultKind::SecondaryRateLimitBare
                    | FaultKind::PrimaryRateLimit { .. }
            )
        );
        if !graphql_resource && route != Route::RateLimit && !refused {
            w.rate.core_used += 1;
        }
        let used = if graphql_resource {
            w.rate.graphql_used
        } else {
            w.rate.core_used
        };
        let limited = matches!(
            fault,
            Some(
                FaultKind::SecondaryRateLimit { .. }
                    | FaultKind::PrimaryRateLimit { .. }
                    | FaultKind::GraphqlRateLimited { .. }
            )
        );
        let remaining = if limited {
            0
        } else {
            w.rate.limit.saturating_sub(used)
        };
        let reset = match fault {
            Some(
                FaultKind::PrimaryRateLimit { reset_in_secs }
                | FaultKind::GraphqlRateLimited {
                    reset_in_secs: Some(reset_in_secs),
                },
            ) => chrono::Utc::now().timestamp() + i64::try_from(reset_in_secs).unwrap(),
            _ => w.rate.reset_epoch,
        };
        for (k, v) in [
            ("x-ratelimit-limit", w.rate.limit.to_string()),
            ("x-ratelimit-remaining", remaining.to_string()),
            ("x-ratelimit-reset", reset.to_string()),
            ("x-ratelimit-used", used.to_string()),
            (
                "x-ratelimit-resource",
                if graphql_resource { "graphql" } else { "core" }.to_owned(),
            ),
            ("x-github-request-id", format!("FAKE:{seq:08X}")),
            ("x-github-api-version-selected", "2022-11-28".to_owned()),
        ] {
            reply.headers.push((k.to_owned(), v));
        }
    }
    shared.set_status(seq, reply.status);
    if reply.status == 304 {
        shared.set_points(seq, 0);
    }
    reply
}

/// Whether `query` selects `field` inside a selection on type `ty` (`fragment X on Ty { … }`
/// or `... on Ty { … }`; nested selections included).
fn selects_on(query: &str, ty: &str, field: &str) -> bool {
    let marker = format!("on {ty}");
    query.match_indices(&marker).any(|(i, _)| {
        let after = &query[i + marker.len()..];
        let body = after.trim_start();
        if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            || !body.starts_with('{')
        {
            return false;
        }
        let mut depth = 0;
        let end = body
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .map_or(body.len(), |(k, _)| k);
        body[..end]
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|w| w == field)
    })
}

/// GitHub's answer to a request over a secondary rate limit (403, its documented message).
fn secondary_limit() -> Reply {
    rest::message(
        403,
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID FAKE.",
        "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
    )
}

#[allow(clippy::too_many_arguments)]
fn answer(
    shared: &GitHubShared,
    route: &Route,
    fault: Option<&FaultKind>,
    prepared: Option<graphql::Prepared>,
    refusal: Option<openapi::Refusal>,
    req: &Incoming,
    authorization: Option<&str>,
) -> Reply {
    let is_graphql = *route == Route::Graphql;
    if let Some(early) = fault_before(shared, fault, is_graphql, authorization) {
        return early;
    }
    let mut w = shared.world();
    if route.is_api()
        && let Err(refused) = authenticate(&mut w, route, prepared.as_ref(), authorization)
    {
        return refused;
    }
    match refusal {
        Some(openapi::Refusal::NotFound(_)) => return rest::not_found(),
        Some(openapi::Refusal::Invalid(why)) => {
            return rest::message(
                422,
                &format!("Invalid request.\n\n{why}"),
                "https://docs.github.com/rest",
            );
        }
        None => {}
    }
    let reply = match (route, prepared) {
        (Route::Graphql, None) => rest::message(
            400,
            "Problems parsing JSON",
            "https://docs.github.com/graphql",
        ),
        (Route::Graphql, Some(p)) => Reply::json(200, &p.execute(&mut w)),
        (Route::Unknown, _) => rest::not_found(),
        (route, _) => rest::handle(
            route,
            req.query.as_deref(),
            &req.headers,
            &req.body,
            &mut w,
            &shared.base_url,
        ),
    };
    drop(w);
    fault_after(shared, fault, is_graphql, reply)
}

/// A fault that answers before the request is handled (a status, a rate limit, an echo of the
/// authorization), or delays it; none when the request goes on.
fn fault_before(
    shared: &GitHubShared,
    fault: Option<&FaultKind>,
    is_graphql: bool,
    authorization: Option<&str>,
) -> Option<Reply> {
    match fault {
        Some(FaultKind::Status(code)) => Some(server_error(*code, is_graphql)),
        Some(FaultKind::SecondaryRateLimit { retry_after_secs }) => {
            let mut r = secondary_limit();
            r.headers
                .push(("retry-after".into(), retry_after_secs.to_string()));
            Some(r)
        }
        Some(FaultKind::SecondaryRateLimitBare) => Some(secondary_limit()),
        Some(FaultKind::PrimaryRateLimit { .. }) => {
            let login = shared.world().viewer.clone();
            Some(rest::message(
                403,
                &format!("API rate limit exceeded for user ID 1 ({login})."),
                "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            ))
        }
        Some(FaultKind::GraphqlRateLimited { .. }) if is_graphql => Some(Reply::json(
            200,
            &serde_json::json!({"errors": [{"type": "RATE_LIMITED", "code": "graphql_rate_limit", "message": "API rate limit already exceeded for user ID 1."}]}),
        )),
        Some(FaultKind::Delay(d)) => {
            std::thread::sleep(*d);
            None
        }
        Some(FaultKind::EchoAuthorization(code)) => Some(Reply::text(
            *code,
            &format!(
                "proxy error: the upstream refused the request\nAuthorization: {}\n",
                authorization.unwrap_or("")
            ),
        )),
        _ => None,
    }
}

/// Who calls, from the token: a person acts as themselves, an App installation reaches only
/// its account's repositories (GitHub's 403 or not-found otherwise); then the world settles.
fn authenticate(
    w: &mut World,
    route: &Route,
    prepared: Option<&graphql::Prepared>,
    authorization: Option<&str>,
) -> Result<(), Reply> {
    let is_graphql = *route == Route::Graphql;
    let token = authorization.and_then(|a| {
        a.strip_prefix("Bearer ")
            .or_else(|| a.strip_prefix("bearer "))
            .or_else(|| a.strip_prefix("token "))
    });
    let doc = if is_graphql {
        "https://docs.github.com/graphql"
    } else {
        "https://docs.github.com/rest"
    };
    let app_route = matches!(route, Route::App(_));
    let caller = match token {
        None => return Err(rest::message(401, "Requires authentication", doc)),
        Some(t) => w.caller(t.trim(), app_route, doc)?,
    };
    w.acting = match &caller {
        app::Caller::Person(login) => Some(login.clone()),
        _ => None,
    };
    if let app::Caller::Installation { account, .. } = &caller {
        if *route == Route::User {
            return Err(rest::message(
                403,
                "Resource not accessible by integration",
                doc,
            ));
        }
        let mentioned = match prepared {
            Some(p) => p.mentions(w),
            None => rest::mentions(route, w),
        };
        if let Some((repo, _)) = mentioned.iter().find(|(repo, _)| {
            !repo
                .to_ascii_lowercase()
                .starts_with(&format!("{account}/"))
        }) {
            return Err(if is_graphql {
                Reply::json(
                    200,
                    &serde_json::json!({"data": null, "errors": [{"type": "NOT_FOUND", "message": format!("Could not resolve to a Repository with the name '{repo}'.")}]}),
                )
            } else {
                rest::not_found()
            });
        }
    }
    w.settle();
    Ok(())
}

/// `v` as JSON text with every object's fields in reverse order.
fn write_reversed(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_reversed(item, out);
            }
            out.push(']');
        }
        serde_json::Value::Object(fields) => {
            out.push('{');
            for (i, (name, value)) in fields.iter().rev().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::Value::String(name.clone()).to_string());
                out.push(':');
                write_reversed(value, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A fault that spoils the answer after the request was handled (its writes made): a status,
/// a hang, or a body cut short.
fn fault_after(
    shared: &GitHubShared,
    fault: Option<&FaultKind>,
    is_graphql: bool,
    reply: Reply,
) -> Reply {
    match fault {
        Some(FaultKind::StatusAfterHandling(code)) => server_error(*code, is_graphql),
        Some(FaultKind::HangAfterHandling(d)) => {
            shared.world().held_answers += 1;
            std::thread::sleep(*d);
            server_error(504, is_graphql)
        }
        Some(FaultKind::Malformed) => {
            let mut r = reply;
            let keep = (r.body.len() / 2).max(1).min(r.body.len());
            r.body.truncate(keep);
            if r.body.is_empty() || serde_json::from_slice::<serde_json::Value>(&r.body).is_ok() {
                r.body = b"{\"data\": {".to_vec();
            }
            r.status = 200;
            r.content_type = Some("application/json; charset=utf-8".into());
            r
        }
        Some(FaultKind::Reordered) => {
            let mut r = reply;
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&r.body) {
                let mut text = String::new();
                write_reversed(&v, &mut text);
                r.body = text.into_bytes();
            }
            r
        }
        _ => reply,
    }
}

//! The REST routes the fake answers, with GitHub's JSON shapes and status codes.
//!
//! | route template | answer |
//! | --- | --- |
//! | `GET /repos/{o}/{r}/actions/jobs/{id}/logs` | 302 to `/_blobs/job-logs/{id}?token=…`; 404 without a log |
//! | `GET /_blobs/job-logs/{id}` | the log as text/plain, 206 with the part a `Range` asks (unless `w.logs_ignore_range`); 400 if `Authorization` is sent, 403 on a bad token |
//! | `POST /repos/{o}/{r}/actions/runs/{id}/rerun-failed-jobs` | 201 `{}`; 403 while a job still runs; 404 |
//! | `PUT /repos/{o}/{r}/pulls/{n}/merge` | 200 merged; 409 head moved; 405 not mergeable / method not allowed |
//! | `PUT /repos/{o}/{r}/pulls/{n}/update-branch` | 202; 422 with GitHub's three messages |
//! | `GET /repos/{o}/{r}/compare/{basehead}` | `status`, `ahead_by`, `behind_by`, `files` changed since the merge base (`base...head`, or `head...base` for the base's side); between two commits of a pushed branch, the `commits` after the base with their `verification` |
//! | `GET /repos/{o}/{r}/commits/{ref}` | one commit (by sha) with its `verification` |
//! | `GET /repos/{o}/{r}/activity` | the pushes of branches living in the repository (`ref`, `per_page` ≤ 100; 422 otherwise), newest first |
//! | `GET /repos/{o}/{r}/issues/{n}/events` | the PR's issue events, oldest first (see [`super::events`]) |
//! | `GET /repos/{o}/{r}/pulls/{n}/commits` | the PR's commits with `verification`, REST's `author`/`committer` users (a bot's `name[bot]`) |
//! | `GET /rate_limit`, `GET /user` | |
//! | `GET /app`, `GET /repos/{o}/{r}/installation`, `POST /app/installations/{id}/access_tokens` | the App's, with a JWT (see [`super::app`]) |
//! | anything else | 404 `{"message":"Not Found"}` |

use serde_json::{Value, json};

use super::Reply;
use super::app::AppRoute;
use super::world::{ApiError, MergeMethod, PrState, Time, UpdateMethod, World};

/// A recognised REST route (or GraphQL), with its path parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Graphql,
    JobLogs {
        repo: String,
        job: u64,
    },
    Blob {
        job: u64,
    },
    RerunFailedJobs {
        repo: String,
        run: u64,
    },
    Merge {
        repo: String,
        number: u64,
    },
    UpdateBranch {
        repo: String,
        number: u64,
    },
    Compare {
        repo: String,
        base: String,
        head: String,
    },
    Activity {
        repo: String,
    },
    PullCommits {
        repo: String,
        number: u64,
    },
    IssueEvents {
        repo: String,
        number: u64,
    },
    Commit {
        repo: String,
        sha: String,
    },
    RateLimit,
    User,
    App(AppRoute),
    Unknown,
}

impl Route {
    /// The route template requests are counted under (`GET /repos/{o}/{r}/…`).
    pub fn template(&self) -> &'static str {
        match self {
            Route::Graphql => "/graphql",
            Route::JobLogs { .. } => "/repos/{o}/{r}/actions/jobs/{id}/logs",
            Route::Blob { .. } => "/_blobs/job-logs/{id}",
            Route::RerunFailedJobs { .. } => "/repos/{o}/{r}/actions/runs/{id}/rerun-failed-jobs",
            Route::Merge { .. } => "/repos/{o}/{r}/pulls/{n}/merge",
            Route::UpdateBranch { .. } => "/repos/{o}/{r}/pulls/{n}/update-branch",
            Route::Compare { .. } => "/repos/{o}/{r}/compare/{basehead}",
            Route::Activity { .. } => "/repos/{o}/{r}/activity",
            Route::PullCommits { .. } => "/repos/{o}/{r}/pulls/{n}/commits",
            Route::IssueEvents { .. } => "/repos/{o}/{r}/issues/{n}/events",
            Route::Commit { .. } => "/repos/{o}/{r}/commits/{ref}",
            Route::RateLimit => "/rate_limit",
            Route::User => "/user",
            Route::App(AppRoute::App) => "/app",
            Route::App(AppRoute::RepoInstallation { .. }) => "/repos/{o}/{r}/installation",
            Route::App(AppRoute::AccessTokens { .. }) => "/app/installations/{id}/access_tokens",
            Route::Unknown => "",
        }
    }

    /// Whether the route is GitHub's API (authenticated, rate limited) rather than the blob host.
    pub fn is_api(&self) -> bool {
        !matches!(self, Route::Blob { .. })
    }
}

/// Recognises `method path`.
pub fn route(method: &str, path: &str) -> Route {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let num = |s: &str| s.parse::<u64>().ok();
    match (method, parts.as_slice()) {
        ("POST", ["graphql"]) => Route::Graphql,
        ("GET", ["rate_limit"]) => Route::RateLimit,
        ("GET", ["user"]) => Route::User,
        ("GET", ["app"]) => Route::App(AppRoute::App),
        ("GET", ["repos", o, r, "installation"]) => Route::App(AppRoute::RepoInstallation {
            repo: format!("{o}/{r}"),
        }),
        ("POST", ["app", "installations", id, "access_tokens"]) => num(id)
            .map_or(Route::Unknown, |installation| {
                Route::App(AppRoute::AccessTokens { installation })
            }),
        ("GET", ["_blobs", "job-logs", id]) => {
            num(id).map_or(Route::Unknown, |job| Route::Blob { job })
        }
        ("GET", ["repos", o, r, "actions", "jobs", id, "logs"]) => {
            num(id).map_or(Route::Unknown, |job| Route::JobLogs {
                repo: format!("{o}/{r}"),
                job,
            })
        }
        ("POST", ["repos", o, r, "actions", "runs", id, "rerun-failed-jobs"]) => {
            num(id).map_or(Route::Unknown, |run| Route::RerunFailedJobs {
                repo: format!("{o}/{r}"),
                run,
            })
        }
        ("PUT", ["repos", o, r, "pulls", n, "merge"]) => {
            num(n).map_or(Route::Unknown, |number| Route::Merge {
                repo: format!("{o}/{r}"),
                number,
            })
        }
        ("GET", ["repos", o, r, "activity"]) => Route::Activity {
            repo: format!("{o}/{r}"),
        },
        ("GET", ["repos", o, r, "pulls", n, "commits"]) => {
            num(n).map_or(Route::Unknown, |number| Route::PullCommits {
                repo: format!("{o}/{r}"),
                number,
            })
        }
        ("GET", ["repos", o, r, "issues", n, "events"]) => {
            num(n).map_or(Route::Unknown, |number| Route::IssueEvents {
                repo: format!("{o}/{r}"),
                number,
            })
        }
        ("GET", ["repos", o, r, "commits", sha]) => Route::Commit {
            repo: format!("{o}/{r}"),
            sha: (*sha).to_owned(),
        },
        ("PUT", ["repos", o, r, "pulls", n, "update-branch"]) => {
            num(n).map_or(Route::Unknown, |number| Route::UpdateBranch {
                repo: format!("{o}/{r}"),
                number,
            })
        }
        ("GET", ["repos", o, r, "compare", rest @ ..]) => {
            let basehead = rest.join("/");
            match basehead.split_once("...") {
                Some((base, head)) => Route::Compare {
                    repo: format!("{o}/{r}"),
                    base: base.into(),
                    head: head.into(),
                },
                None => Route::Unknown,
            }
        }
        _ => Route::Unknown,
    }
}

/// The PRs a REST request is about, for PR-scoped faults and the request log.
pub fn mentions(route: &Route, world: &World) -> Vec<(String, u64)> {
    match route {
        Route::Merge { repo, number }
        | Route::UpdateBranch { repo, number }
        | Route::PullCommits { repo, number }
        | Route::IssueEvents { repo, number } => {
            vec![(repo.clone(), *number)]
        }
        Route::JobLogs { job, .. } | Route::Blob { job } => {
            pr_of_job(world, *job).into_iter().collect()
        }
        Route::RerunFailedJobs { repo, run } => world
            .pr_of_run(repo, *run)
            .map(|n| (repo.clone(), n))
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

fn pr_of_job(world: &World, job: u64) -> Option<(String, u64)> {
    world.repos.values().find_map(|r| {
        let sha = r.commits.iter().find_map(|(sha, c)| {
            c.suites
                .iter()
                .flat_map(|s| &s.runs)
                .any(|run| run.database_id == job)
                .then_some(sha)
        })?;
        world
            .pr_of_commit(&r.full_name, sha)
            .map(|n| (r.full_name.clone(), n))
    })
}

/// The token a blob URL carries for a job (a stand-in for a signature).
pub fn blob_token(job: u64) -> String {
    format!("{:016x}", job.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5eed)
}

/// `{"message": …, "documentation_url": …}` with `status`.
pub fn message(status: u16, message: &str, doc: &str) -> Reply {
    Reply::json(
        status,
        &json!({ "message": message, "documentation_url": doc }),
    )
}

pub fn not_found() -> Reply {
    message(404, "Not Found", "https://docs.github.com/rest")
}

fn api_error(e: &ApiError, doc: &str) -> Reply {
    let status = match e {
        ApiError::NotFound(_) => 404,
        ApiError::Unprocessable(_) => 422,
        ApiError::Conflict(_) => 409,
        ApiError::NotAllowed(_) => 405,
        ApiError::Forbidden(_) => 403,
    };
    if status == 404 {
        return not_found();
    }
    message(status, e.message(), doc)
}

fn parse_body(body: &str) -> Result<Value, Reply> {
    if body.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(body)
        .map_err(|_| message(400, "Problems parsing JSON", "https://docs.github.com/rest"))
}

/// Answers a REST route. `base_url` is the fake's own `http://127.0.0.1:PORT`.
#[expect(
    clippy::too_many_lines,
    reason = "the fake's REST routes: one short arm per route"
)]
pub fn handle(
    route: &Route,
    query: Option<&str>,
    headers: &[(String, String)],
    body: &str,
    world: &mut World,
    base_url: &str,
) -> Reply {
    match route {
        Route::JobLogs { repo, job } => {
            let in_repo = pr_of_job(world, *job).is_some_and(|(r, _)| &r == repo)
                || world
                    .check_run_by_job_id(*job)
                    .is_some_and(|(r, _)| r == repo);
            if !in_repo || !world.job_logs.contains_key(job) {
                return not_found();
            }
            let host = world.log_host.as_deref().unwrap_or(base_url);
            let location = format!("{host}/_blobs/job-logs/{job}?token={}", blob_token(*job));
            Reply {
                status: 302,
                headers: vec![("location".into(), location)],
                body: Vec::new(),
                content_type: None,
            }
        }
        Route::Blob { job } => {
            if headers.iter().any(|(k, _)| k == "authorization") {
                return Reply::text(
                    400,
                    "Only one auth mechanism allowed; the signature query parameter or the Authorization header should be specified, not both\n",
                );
            }
            let token = query
                .unwrap_or_default()
                .split('&')
                .find_map(|kv| kv.strip_prefix("token="))
                .unwrap_or_default();
            if token != blob_token(*job) {
                return Reply::text(403, "Server failed to authenticate the request.\n");
            }
            match world.job_logs.get(job) {
                Some(log) => {
                    let range = headers.iter().find(|(k, _)| k == "range");
                    Reply::ranged(log, range.map(|(_, v)| v.as_str()), world.logs_ignore_range)
                }
                None => Reply::text(404, "The specified blob does not exist.\n"),
            }
        }
        Route::RerunFailedJobs { repo, run } => match world.rerun_failed_jobs(repo, *run) {
            Ok(_) => Reply::json(201, &json!({})),
            Err(e) => api_error(
                &e,
                "https://docs.github.com/rest/actions/workflow-runs#re-run-failed-jobs-from-a-workflow-run",
            ),
        },
        Route::Merge { repo, number } => {
            let doc = "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request";
            let body = match parse_body(body) {
                Ok(b) => b,
                Err(r) => return r,
            };
            let method = match body.get("merge_method").and_then(Value::as_str) {
                None => MergeMethod::Merge,
                Some(m) => match MergeMethod::from_rest(m) {
                    Some(m) => m,
                    None => {
                        return message(
                            422,
                            &format!(
                                "Invalid request.\n\n{m:?} is not a member of [\"merge\", \"squash\", \"rebase\"]."
                            ),
                            doc,
                        );
                    }
                },
            };
            let sha = body.get("sha").and_then(Value::as_str);
            match world.merge(repo, *number, sha, method) {
                Ok(merge_sha) => Reply::json(
                    200,
                    &json!({ "sha": merge_sha, "merged": true, "message": "Pull Request successfully merged" }),
                ),
                Err(e) => api_error(&e, doc),
            }
        }
        Route::UpdateBranch { repo, number } => {
            let doc = "https://docs.github.com/rest/pulls/pulls#update-a-pull-request-branch";
            let body = match parse_body(body) {
                Ok(b) => b,
                Err(r) => return r,
            };
            let expected = body.get("expected_head_sha").and_then(Value::as_str);
            match world.update_branch(repo, *number, expected, UpdateMethod::Merge) {
                Ok(_) => Reply::json(
                    202,
                    &json!({
                        "message": "Updating pull request branch.",
                        "url": format!("https://github.com/{repo}/pull/{number}"),
                    }),
                ),
                Err(e) => api_error(&e, doc),
            }
        }
        Route::Compare { repo, base, head } => {
            let Some(r) = world.repos.get(repo) else {
                return not_found();
            };
            let head = head.rsplit(':').next().unwrap_or(head);
            if let Some(v) = branch_compare(r, base, head) {
                return Reply::json(200, &v);
            }
            let open = |p: &&super::world::Pr| p.state == PrState::Open;
            // The base's side: `head_sha...base`, its files the base's own since they parted.
            if let Some(pr) = r
                .prs
                .values()
                .rev()
                .filter(open)
                .find(|p| p.base_ref == head && p.head_sha() == base)
            {
                return Reply::json(
                    200,
                    &compare_json(repo, base, head, pr.behind_by, &pr.base_files),
                );
            }
            let pr = r
                .prs
                .values()
                .rev()
                .filter(open)
                .find(|p| p.base_ref == *base && (p.head_ref == head || p.head_sha() == head));
            let Some(pr) = pr else { return not_found() };
            let (ahead, behind) = (pr.commits.len() as u64, pr.behind_by);
            let mut v = compare_json(repo, base, head, ahead, &pr.head_files);
            v["behind_by"] = json!(behind);
            v["status"] = json!(match (ahead > 0, behind > 0) {
                (true, true) => "diverged",
                (false, true) => "behind",
                (true, false) => "ahead",
                (false, false) => "identical",
            });
            Reply::json(200, &v)
        }
        Route::Activity { repo } => activity(world, repo, query),
        Route::IssueEvents { repo, number } => {
            super::events::list(world, repo, *number, &params(query))
        }
        Route::PullCommits { repo, number } => {
            match world.repos.get(repo).and_then(|r| r.prs.get(number)) {
                Some(pr) => {
                    let r = &world.repos[repo];
                    let list: Vec<Value> = pr
                        .commits
                        .iter()
                        .map(|sha| pull_commit(repo, &r.commits[sha]))
                        .collect();
                    Reply::json(200, &Value::Array(list))
                }
                None => not_found(),
            }
        }
        Route::Commit { repo, sha } => match world.repos.get(repo).and_then(|r| r.commits.get(sha))
        {
            Some(c) => {
                let mut v = pull_commit(repo, c);
                v["files"] = json!([]);
                Reply::json(200, &v)
            }
            None => message(
                422,
                &format!("No commit found for SHA: {sha}"),
                "https://docs.github.com/rest/commits/commits#get-a-commit",
            ),
        },
        Route::RateLimit => {
            let r = &world.rate;
            let res = |used: u64| json!({ "limit": r.limit, "used": used, "remaining": r.limit.saturating_sub(used), "reset": r.reset_epoch });
            Reply::json(
                200,
                &json!({
                    "resources": { "core": res(r.core_used), "graphql": res(r.graphql_used) },
                    "rate": res(r.core_used),
                }),
            )
        }
        Route::User => Reply::json(
            200,
            &json!({ "login": world.actor(), "id": 1, "node_id": "U_kgDOAAAAAQ", "type": "User", "site_admin": false }),
        ),
        Route::App(app_route) => world.app_route(app_route),
        Route::Graphql | Route::Unknown => not_found(),
    }
}

/// `base...head` between two commits pushed onto one branch of `r`, `base` the older: the
/// commits after it up to `head`, oldest first.
fn branch_compare(r: &super::world::Repo, base: &str, head: &str) -> Option<Value> {
    r.branches.values().find_map(|shas| {
        let from = shas.iter().position(|s| s == base)?;
        let to = shas
            .iter()
            .position(|s| s == head)
            .filter(|to| *to >= from)?;
        let between = &shas[from + 1..=to];
        let mut v = compare_json(&r.full_name, base, head, between.len() as u64, &[]);
        v["commits"] = between
            .iter()
            .map(|s| pull_commit(&r.full_name, &r.commits[s]))
            .collect();
        Some(v)
    })
}

/// A comparison's answer: `to` is `ahead` commits ahead of `from`, with `files` changed.
fn compare_json(repo: &str, from: &str, to: &str, ahead: u64, files: &[String]) -> Value {
    json!({
        "url": format!("https://api.github.com/repos/{repo}/compare/{from}...{to}"),
        "html_url": format!("https://github.com/{repo}/compare/{from}...{to}"),
        "status": if ahead > 0 { "ahead" } else { "identical" },
        "ahead_by": ahead,
        "behind_by": 0,
        "total_commits": ahead,
        "commits": [],
        "files": files
            .iter()
            .map(|f| json!({"filename": f, "status": "modified", "additions": 1, "deletions": 1, "changes": 2}))
            .collect::<Vec<_>>(),
    })
}

/// A query's parameters, decoded.
fn params(query: Option<&str>) -> Vec<(String, String)> {
    query
        .unwrap_or_default()
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `GET /repos/{o}/{r}/activity`: every push of a branch living in `repo` (the base
/// repository's own branches, or a fork's), one per commit its PR gained, and one per commit
/// pushed onto a branch of the repository itself, newest first. The
/// parameters pr-monitor may send are checked as GitHub documents them.
fn activity(world: &World, repo: &str, query: Option<&str>) -> Reply {
    let doc = "https://docs.github.com/rest/repos/repos#list-repository-activities";
    if !world.repos.contains_key(repo) {
        return not_found();
    }
    let mut want_ref = None;
    for (k, v) in params(query) {
        match k.as_str() {
            "ref" => want_ref = Some(v.strip_prefix("refs/heads/").unwrap_or(&v).to_owned()),
            "per_page" => match v.parse::<u32>() {
                Ok(1..=100) => {}
                _ => return message(422, &format!("Invalid per_page: {v}"), doc),
            },
            "direction" | "before" | "after" | "actor" | "time_period" | "activity_type" => {}
            other => return message(422, &format!("Unknown parameter: {other}"), doc),
        }
    }
    let mut entries: Vec<(Time, Value)> = Vec::new();
    for base in world.repos.values() {
        for pr in base.prs.values() {
            if pr.head_repo_or(&base.full_name) != repo
                || want_ref.as_deref().is_some_and(|r| r != pr.head_ref)
            {
                continue;
            }
            push_entries(base, &pr.commits, &pr.head_ref, &mut entries);
        }
    }
    let base = &world.repos[repo];
    for (branch, commits) in &base.branches {
        if want_ref.as_deref().is_some_and(|r| r != branch) {
            continue;
        }
        push_entries(base, commits, branch, &mut entries);
    }
    entries.sort_by_key(|e| std::cmp::Reverse(e.0));
    Reply::json(
        200,
        &Value::Array(entries.into_iter().map(|(_, v)| v).collect()),
    )
}

/// The activity entries of pushing `shas` (oldest first) one by one onto `branch` of `base`.
fn push_entries(
    base: &super::world::Repo,
    shas: &[String],
    branch: &str,
    entries: &mut Vec<(Time, Value)>,
) {
    let mut before = "0".repeat(40);
    for sha in shas {
        if let Some(entry) = push_entry(&base.commits[sha], &before, branch, entries.len() + 1) {
            entries.push(entry);
        }
        before.clone_from(sha);
    }
}

/// The activity entry of `c`'s push onto `branch` (on top of `before`), when its push is
/// listed, with the time it sorts by.
fn push_entry(
    c: &super::world::Commit,
    before: &str,
    branch: &str,
    id: usize,
) -> Option<(Time, Value)> {
    let actor = c.pushed_by().filter(|_| !c.push_unlisted)?;
    let at = c.pushed_at.unwrap_or(c.committed_at);
    Some((
        at,
        json!({
            "id": id,
            "node_id": format!("RA_{}", &c.sha[..12]),
            "before": before,
            "after": c.sha,
            "ref": format!("refs/heads/{branch}"),
            "timestamp": super::world::timestamp(at),
            "activity_type": "push",
            "actor": user_json(actor, c.bot.as_deref() == Some(actor)),
        }),
    ))
}

/// A REST simple user: a bot's login keeps its `[bot]`.
fn user_json(login: &str, bot: bool) -> Value {
    json!({
        "login": login,
        "id": 1000 + login.len(),
        "node_id": format!("U_{login}"),
        "type": if bot || login.ends_with("[bot]") { "Bot" } else { "User" },
        "site_admin": false,
    })
}

/// One commit of `GET /repos/{o}/{r}/pulls/{n}/commits`.
fn pull_commit(repo: &str, c: &super::world::Commit) -> Value {
    let (author_name, author_email) = c.author_identity();
    let (committer_name, committer_email) = c.committer_identity();
    let user = |login: Option<&str>| match (c.bot.as_deref(), login) {
        (Some(bot), _) => user_json(bot, true),
        (None, Some(l)) => user_json(l, false),
        (None, None) => Value::Null,
    };
    json!({
        "sha": c.sha,
        "node_id": c.node_id,
        "url": format!("https://api.github.com/repos/{repo}/commits/{}", c.sha),
        "html_url": format!("https://github.com/{repo}/commit/{}", c.sha),
        "commit": {
            "author": { "name": author_name, "email": author_email, "date": super::world::timestamp(c.authored_at) },
            "committer": { "name": committer_name, "email": committer_email, "date": super::world::timestamp(c.committed_at) },
            "message": c.message,
            "comment_count": 0,
            "verification": {
                "verified": c.verified,
                "reason": if c.verified { "valid" } else { "unsigned" },
                "signature": null,
                "payload": null,
                "verified_at": null,
            },
        },
        "author": user(c.author.as_deref()),
        "committer": user(c.committer.as_deref()),
        "parents": c.parents.iter().map(|p| json!({ "sha": p })).collect::<Vec<_>>(),
    })
}

//! GitLab's REST API v4 as its reference documents it, for the operations the fake GitLab
//! serves: each operation's method and path, and the query parameters and body attributes it
//! takes, with their types and which are required. GitLab publishes no machine-readable
//! description of these routes, so this is our own table of the names and types on the
//! reference pages (docs.gitlab.com/api/merge_requests, merge_request_approvals, discussions,
//! pipelines, jobs, commits, repositories, branches, merge_trains, events, members, users,
//! projects, resource_label_events, resource_state_events; pagination on rest/#pagination).
//!
//! The fake checks every request against it ([`check`]) before answering: an operation GitLab
//! has not is a 404, a value of the wrong type a 400 (GitLab's `{"error": "… is invalid"}`),
//! and an attribute GitLab does not declare, which GitLab would silently ignore, is answered as
//! GitLab would; all three are recorded as nonconforming, which fails the test.

/// A parameter's type as the reference gives it.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    Int,
    Bool,
    Str,
    /// A string out of these.
    OneOf(&'static [&'static str]),
    /// An array of integers (`iids[]=1&iids[]=2`).
    Ints,
}

/// One documented operation.
pub struct Operation {
    pub method: &'static str,
    /// The fake's path template (`/projects/{id}/merge_requests/{iid}`).
    pub path: &'static str,
    /// Its query parameters or body attributes, besides the path's.
    pub params: &'static [(&'static str, Ty)],
    /// Which of `params` are required.
    pub required: &'static [&'static str],
    /// What a list takes besides: `page` and `per_page` ([`PAGES`]), and its filters.
    pub list: &'static [(&'static str, Ty)],
}

const PAGES: &[(&str, Ty)] = &[("page", Ty::Int), ("per_page", Ty::Int)];
const STATE: Ty = Ty::OneOf(&["opened", "closed", "locked", "merged", "all"]);
const SORT: Ty = Ty::OneOf(&["asc", "desc"]);
/// What the merge request lists take: their filters, and pages.
const MR_LIST: &[(&str, Ty)] = &[
    ("state", STATE),
    (
        "scope",
        Ty::OneOf(&["created_by_me", "assigned_to_me", "reviews_for_me", "all"]),
    ),
    (
        "order_by",
        Ty::OneOf(&["created_at", "updated_at", "merged_at", "title"]),
    ),
    ("sort", SORT),
    ("labels", Ty::Str),
    ("author_username", Ty::Str),
    ("source_branch", Ty::Str),
    ("target_branch", Ty::Str),
    ("updated_after", Ty::Str),
    ("view", Ty::OneOf(&["simple"])),
    ("page", Ty::Int),
    ("per_page", Ty::Int),
];

const fn get(
    path: &'static str,
    params: &'static [(&'static str, Ty)],
    list: &'static [(&'static str, Ty)],
) -> Operation {
    Operation {
        method: "GET",
        path,
        params,
        required: &[],
        list,
    }
}

const fn write(
    method: &'static str,
    path: &'static str,
    params: &'static [(&'static str, Ty)],
    required: &'static [&'static str],
) -> Operation {
    Operation {
        method,
        path,
        params,
        required,
        list: &[],
    }
}

/// The operations, as the reference documents them.
pub const OPERATIONS: &[Operation] = &[
    get("/user", &[], &[]),
    get(
        "/projects/{id}",
        &[
            ("statistics", Ty::Bool),
            ("license", Ty::Bool),
            ("with_custom_attributes", Ty::Bool),
        ],
        &[],
    ),
    get("/projects/{id}/members/all/{user_id}", &[], &[]),
    get("/merge_requests", &[], MR_LIST),
    get(
        "/projects/{id}/merge_requests",
        &[("iids", Ty::Ints)],
        MR_LIST,
    ),
    get(
        "/projects/{id}/merge_requests/{iid}",
        &[
            ("render_html", Ty::Bool),
            ("include_diverged_commits_count", Ty::Bool),
            ("include_rebase_in_progress", Ty::Bool),
        ],
        &[],
    ),
    get("/projects/{id}/merge_requests/{iid}/approvals", &[], &[]),
    get("/projects/{id}/merge_requests/{iid}/commits", &[], PAGES),
    get(
        "/projects/{id}/merge_requests/{iid}/discussions",
        &[],
        PAGES,
    ),
    get(
        "/projects/{id}/merge_requests/{iid}/resource_label_events",
        &[],
        PAGES,
    ),
    get(
        "/projects/{id}/merge_requests/{iid}/resource_state_events",
        &[],
        PAGES,
    ),
    write(
        "PUT",
        "/projects/{id}/merge_requests/{iid}/merge",
        &[
            ("merge_commit_message", Ty::Str),
            ("squash_commit_message", Ty::Str),
            ("squash", Ty::Bool),
            ("should_remove_source_branch", Ty::Bool),
            ("merge_when_pipeline_succeeds", Ty::Bool),
            ("auto_merge", Ty::Bool),
            ("sha", Ty::Str),
        ],
        &[],
    ),
    write(
        "POST",
        "/projects/{id}/merge_requests/{iid}/cancel_merge_when_pipeline_succeeds",
        &[],
        &[],
    ),
    write(
        "PUT",
        "/projects/{id}/merge_requests/{iid}/rebase",
        &[("skip_ci", Ty::Bool)],
        &[],
    ),
    write(
        "POST",
        "/projects/{id}/merge_requests/{iid}/discussions/{did}/notes",
        &[("body", Ty::Str), ("created_at", Ty::Str)],
        &["body"],
    ),
    write(
        "PUT",
        "/projects/{id}/merge_requests/{iid}/discussions/{did}",
        &[("resolved", Ty::Bool)],
        &["resolved"],
    ),
    get(
        "/projects/{id}/pipelines",
        &[
            (
                "scope",
                Ty::OneOf(&["running", "pending", "finished", "branches", "tags"]),
            ),
            ("status", Ty::Str),
            ("source", Ty::Str),
            ("ref", Ty::Str),
            ("sha", Ty::Str),
            ("updated_after", Ty::Str),
            ("updated_before", Ty::Str),
            (
                "order_by",
                Ty::OneOf(&["id", "status", "ref", "updated_at", "user_id"]),
            ),
            ("sort", SORT),
        ],
        PAGES,
    ),
    get(
        "/projects/{id}/pipelines/{pid}/jobs",
        &[("scope", Ty::Str), ("include_retried", Ty::Bool)],
        PAGES,
    ),
    write("POST", "/projects/{id}/pipelines/{pid}/retry", &[], &[]),
    get("/projects/{id}/jobs/{job}/trace", &[], &[]),
    get("/projects/{id}/repository/branches/{name}", &[], &[]),
    get(
        "/projects/{id}/repository/commits/{sha}",
        &[("stats", Ty::Bool)],
        &[],
    ),
    get(
        "/projects/{id}/repository/commits/{sha}/signature",
        &[],
        &[],
    ),
    get(
        "/projects/{id}/repository/commits/{sha}/statuses",
        &[
            ("ref", Ty::Str),
            ("stage", Ty::Str),
            ("name", Ty::Str),
            ("pipeline_id", Ty::Int),
            ("order_by", Ty::OneOf(&["id", "pipeline_id"])),
            ("sort", SORT),
            ("all", Ty::Bool),
        ],
        PAGES,
    ),
    Operation {
        method: "GET",
        path: "/projects/{id}/repository/compare",
        params: &[
            ("from", Ty::Str),
            ("to", Ty::Str),
            ("from_project_id", Ty::Int),
            ("straight", Ty::Bool),
            ("unidiff", Ty::Bool),
        ],
        required: &["from", "to"],
        list: &[],
    },
    get(
        "/projects/{id}/events",
        &[
            (
                "action",
                Ty::OneOf(&[
                    "approved",
                    "closed",
                    "commented",
                    "created",
                    "destroyed",
                    "expired",
                    "joined",
                    "left",
                    "merged",
                    "pushed",
                    "reopened",
                    "updated",
                ]),
            ),
            ("target_type", Ty::Str),
            ("before", Ty::Str),
            ("after", Ty::Str),
            ("sort", SORT),
        ],
        PAGES,
    ),
    get(
        "/projects/{id}/merge_trains/{branch}",
        &[
            ("scope", Ty::OneOf(&["active", "complete"])),
            ("sort", SORT),
        ],
        PAGES,
    ),
    get("/projects/{id}/merge_trains/merge_requests/{iid}", &[], &[]),
    write(
        "POST",
        "/projects/{id}/merge_trains/merge_requests/{iid}",
        &[
            ("sha", Ty::Str),
            ("squash", Ty::Bool),
            ("auto_merge", Ty::Bool),
            ("when_pipeline_succeeds", Ty::Bool),
        ],
        &[],
    ),
];

/// Why GitLab would not take a request as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No such operation: GitLab's 404.
    NotFound(String),
    /// A value GitLab's parameter validation refuses (or a required one missing): its 400.
    Invalid(String),
    /// An attribute GitLab does not declare: GitLab ignores it, so the request did not say
    /// what its sender meant.
    Undeclared(String),
}

fn decode(s: &str) -> String {
    super::decode(&s.replace('+', " "))
}

fn fits(ty: Ty, v: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (ty, v) {
        (Ty::Int, Value::Number(n)) => n.is_u64(),
        (Ty::Int | Ty::Ints, Value::String(s)) => s.parse::<u64>().is_ok(),
        (Ty::Bool, Value::Bool(_)) | (Ty::Str, Value::String(_)) => true,
        (Ty::Bool, Value::String(s)) => s == "true" || s == "false",
        (Ty::OneOf(values), Value::String(s)) => values.contains(&s.as_str()),
        (Ty::Ints, Value::Array(items)) => items.iter().all(Value::is_u64),
        _ => false,
    }
}

/// Checks `method tmpl?query` with `body` against [`OPERATIONS`].
pub fn check(method: &str, tmpl: &str, query: Option<&str>, body: &str) -> Result<(), Refusal> {
    let op = OPERATIONS
        .iter()
        .find(|o| o.method == method && o.path == tmpl)
        .ok_or_else(|| Refusal::NotFound(format!("{method} {tmpl}")))?;
    let mut given: Vec<(String, serde_json::Value)> = query
        .unwrap_or_default()
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let k = decode(k);
            let k = k.strip_suffix("[]").unwrap_or(&k).to_owned();
            (k, serde_json::Value::String(decode(v)))
        })
        .collect();
    if !body.trim().is_empty() {
        match serde_json::from_str::<serde_json::Value>(body) {
            Ok(serde_json::Value::Object(fields)) => given.extend(fields),
            _ => {
                return Err(Refusal::Invalid(format!(
                    "the body is not a JSON object: {body}"
                )));
            }
        }
    }
    for (key, value) in &given {
        let Some((_, ty)) = op.params.iter().chain(op.list).find(|(k, _)| k == key) else {
            return Err(Refusal::Undeclared(format!(
                "{method} {tmpl} takes no `{key}`"
            )));
        };
        if !fits(*ty, value) {
            return Err(Refusal::Invalid(format!("{key} is invalid")));
        }
    }
    if let Some(missing) = op
        .required
        .iter()
        .find(|r| !given.iter().any(|(k, _)| k == *r))
    {
        return Err(Refusal::Invalid(format!("{missing} is missing")));
    }
    Ok(())
}

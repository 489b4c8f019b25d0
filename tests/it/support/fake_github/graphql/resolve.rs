//! Executing a prepared request: one resolver per GitHub type over the world, GitHub's error
//! types, connections and cursors, and the mutations.

use std::cell::RefCell;
use std::collections::BTreeMap;

use apollo_compiler::resolvers::{Execution, FieldError, ObjectValue, ResolveInfo, ResolvedValue};
use apollo_compiler::response::JsonValue;
use serde_json::Value;

use super::prepare::{actual_repo_name, error_response};
use super::{Cost, Prepared, loaded};

use super::super::world::{
    ApiError, CheckStatus, Conclusion, MergeMethod, NodeRef, Outcome, PrState, ReviewState,
    StatusState, Time, UpdateMethod, World, timestamp,
};

impl Prepared {
    /// Runs the request against the world (mutations change it) and returns GitHub's JSON
    /// answer.
    pub fn execute(&self, world: &mut World) -> Value {
        let ready = match &self.outcome {
            Ok(r) => r,
            Err(e) => return e.clone(),
        };
        let op = ready
            .doc
            .operations
            .get(self.operation_name.as_deref())
            .expect("operation chosen in prepare");
        let l = loaded();
        let ctx = Ctx {
            world: RefCell::new(std::mem::take(world)),
            mergeable_reads: RefCell::new(BTreeMap::new()),
            cost: ready.cost,
        };
        let root = NodeObj {
            ctx: &ctx,
            obj: if self.is_mutation {
                Obj::Mutation
            } else {
                Obj::Query
            },
        };
        let result = Execution::new(&l.schema, &ready.doc)
            .implementers_map(&l.implementers)
            .operation(op)
            .raw_variable_values(&ready.variables)
            .execute_sync(&root);
        *world = ctx.world.into_inner();
        match result {
            Ok(resp) => {
                let mut v = serde_json::to_value(&resp).expect("response serializes");
                if let Some(errors) = v.get_mut("errors").and_then(Value::as_array_mut) {
                    for e in errors {
                        split_error_type(e);
                    }
                }
                v
            }
            Err(e) => {
                error_response(&[
                    serde_json::to_value(e.to_graphql_error(&ready.doc.sources)).expect("error")
                ])
            }
        }
    }
}

// ── errors ──────────────────────────────────────────────────────────────────────────────────

/// Field errors carry GitHub's `type` inside the message until the response is assembled.
const TYPE_MARK: char = '\u{1e}';

fn typed_error(ty: &str, message: impl std::fmt::Display) -> FieldError {
    FieldError {
        message: format!("{TYPE_MARK}{ty}{TYPE_MARK}{message}"),
    }
}

fn split_error_type(e: &mut Value) {
    let Some(msg) = e.get("message").and_then(Value::as_str) else {
        return;
    };
    // The engine prefixes field errors ("resolver error: …").
    let Some((_, rest)) = msg.split_once(TYPE_MARK) else {
        return;
    };
    let Some((ty, message)) = rest.split_once(TYPE_MARK) else {
        return;
    };
    let (ty, message) = (ty.to_owned(), message.to_owned());
    e["type"] = Value::String(ty);
    e["message"] = Value::String(message);
}

fn api_error(e: &ApiError) -> FieldError {
    let ty = match e {
        ApiError::NotFound(_) => "NOT_FOUND",
        ApiError::Forbidden(_) => "FORBIDDEN",
        ApiError::Unprocessable(_) | ApiError::Conflict(_) | ApiError::NotAllowed(_) => {
            "UNPROCESSABLE"
        }
    };
    typed_error(ty, e.message())
}

// ── execution ───────────────────────────────────────────────────────────────────────────────

struct Ctx {
    world: RefCell<World>,
    /// Per request: whether each PR's mergeability reads UNKNOWN (decided once per request).
    mergeable_reads: RefCell<BTreeMap<(String, u64), bool>>,
    /// This request's cost (what `rateLimit { cost nodeCount }` answers).
    cost: Cost,
}

type PrKey = (String, u64);

/// A GraphQL object: what it is and where it lives in the world.
#[derive(Debug, Clone)]
enum Obj {
    Query,
    Mutation,
    Repo(String),
    Ref {
        repo: String,
        name: String,
    },
    Comparison {
        ahead: u64,
        behind: u64,
    },
    Pr(PrKey),
    PrCommit(PrKey, String),
    Commit(String, String),
    GitActor {
        login: Option<String>,
        name: String,
        email: String,
        date: Time,
    },
    User(String),
    /// A commit's signature GitHub verified (an unsigned commit has none): its signer's
    /// login, when the fake knows one, and the committer email it is over.
    Signature {
        signer: Option<String>,
        email: String,
        date: Time,
    },
    Label(String),
    Suite(String, String, usize),
    Run(String, String, usize, usize),
    Annotation(String, String, usize, usize, usize),
    Span(u64),
    Position(u64),
    WorkflowRun(String, String, usize),
    Workflow(String),
    App(String),
    Status(String, String),
    StatusContext(String, String, usize),
    Rollup(String, String),
    Thread(PrKey, usize),
    ThreadComment(PrKey, usize, usize),
    Review(PrKey, usize),
    IssueComment(PrKey, usize),
    AutoMerge(PrKey),
    QueueEntry(PrKey),
    /// The `i`-th event of a PR's timeline, with its GraphQL type.
    TimelineEvent(PrKey, usize, &'static str),
    /// A branch's merge queue: (repository, branch).
    MergeQueue(String, String),
    Conn(Box<Conn>),
    Edge {
        typename: String,
        cursor: String,
        node: Box<Obj>,
    },
    PageInfo {
        has_next: bool,
        has_prev: bool,
        start: Option<String>,
        end: Option<String>,
    },
    Payload {
        typename: &'static str,
        pr: Option<PrKey>,
        node: Option<Box<Obj>>,
    },
    RateLimit,
}

#[derive(Debug, Clone)]
struct Conn {
    typename: &'static str,
    items: Vec<(String, Obj)>,
    total: usize,
    has_next: bool,
    has_prev: bool,
}

impl Obj {
    fn from_node(node: NodeRef) -> Obj {
        match node {
            NodeRef::Repo(repo) => Obj::Repo(repo),
            NodeRef::Pr(repo, num) => Obj::Pr((repo, num)),
            NodeRef::Commit(repo, sha) => Obj::Commit(repo, sha),
            NodeRef::Suite(repo, sha, si) => Obj::Suite(repo, sha, si),
            NodeRef::Run(repo, sha, si, ri) => Obj::Run(repo, sha, si, ri),
            NodeRef::WorkflowRun(repo, sha, si) => Obj::WorkflowRun(repo, sha, si),
            NodeRef::StatusContext(repo, sha, idx) => Obj::StatusContext(repo, sha, idx),
            NodeRef::Thread(repo, num, ti) => Obj::Thread((repo, num), ti),
            NodeRef::ThreadComment(repo, num, ti, ci) => Obj::ThreadComment((repo, num), ti, ci),
            NodeRef::Review(repo, num, idx) => Obj::Review((repo, num), idx),
            NodeRef::IssueComment(repo, num, idx) => Obj::IssueComment((repo, num), idx),
        }
    }

    fn type_name(&self) -> &str {
        match self {
            Obj::Query => "Query",
            Obj::Mutation => "Mutation",
            Obj::Repo(_) => "Repository",
            Obj::Ref { .. } => "Ref",
            Obj::Comparison { .. } => "Comparison",
            Obj::Pr(_) => "PullRequest",
            Obj::PrCommit(..) => "PullRequestCommit",
            Obj::Commit(..) => "Commit",
            Obj::GitActor { .. } => "GitActor",
            Obj::User(_) => "User",
            Obj::Signature { .. } => "GpgSignature",
            Obj::Label(_) => "Label",
            Obj::Suite(..) => "CheckSuite",
            Obj::Run(..) => "CheckRun",
            Obj::Annotation(..) => "CheckAnnotation",
            Obj::Span(_) => "CheckAnnotationSpan",
            Obj::Position(_) => "CheckAnnotationPosition",
            Obj::WorkflowRun(..) => "WorkflowRun",
            Obj::Workflow(_) => "Workflow",
            Obj::App(_) => "App",
            Obj::Status(..) => "Status",
            Obj::StatusContext(..) => "StatusContext",
            Obj::Rollup(..) => "StatusCheckRollup",
            Obj::Thread(..) => "PullRequestReviewThread",
            Obj::ThreadComment(..) => "PullRequestReviewComment",
            Obj::Review(..) => "PullRequestReview",
            Obj::IssueComment(..) => "IssueComment",
            Obj::AutoMerge(_) => "AutoMergeRequest",
            Obj::QueueEntry(_) => "MergeQueueEntry",
            Obj::MergeQueue(..) => "MergeQueue",
            Obj::Conn(c) => c.typename,
            Obj::Edge { typename, .. } => typename,
            Obj::PageInfo { .. } => "PageInfo",
            Obj::Payload { typename, .. } | Obj::TimelineEvent(_, _, typename) => typename,
            Obj::RateLimit => "RateLimit",
        }
    }
}

struct NodeObj<'c> {
    ctx: &'c Ctx,
    obj: Obj,
}

type Resolved<'a> = Result<ResolvedValue<'a>, FieldError>;

#[allow(clippy::unnecessary_wraps)] // shaped like every resolver's result
fn leaf<'a>(v: impl Into<JsonValue>) -> Resolved<'a> {
    Ok(ResolvedValue::leaf(v))
}

#[allow(clippy::unnecessary_wraps)] // shaped like every resolver's result
fn null<'a>() -> Resolved<'a> {
    Ok(ResolvedValue::null())
}

fn opt_str(v: Option<&str>) -> JsonValue {
    v.map_or(JsonValue::Null, JsonValue::from)
}

fn time(t: Time) -> JsonValue {
    JsonValue::from(timestamp(t))
}

fn opt_time(t: Option<Time>) -> JsonValue {
    t.map_or(JsonValue::Null, time)
}

fn b64(s: &str) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in s.as_bytes().chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn cursor(i: usize) -> String {
    b64(&format!("cursor:v2:{i}"))
}

fn decode_cursor(c: &str) -> Option<usize> {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut nbits = 0;
    let mut bytes = Vec::new();
    for ch in c.trim_end_matches('=').bytes() {
        let v = A.iter().position(|a| *a == ch)?;
        bits = (bits << 6) | u32::try_from(v).ok()?;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            bytes.push(u8::try_from(bits >> nbits).ok()?);
            bits &= (1 << nbits) - 1;
        }
    }
    String::from_utf8(bytes)
        .ok()?
        .strip_prefix("cursor:v2:")?
        .parse()
        .ok()
}

fn arg_str<'i>(info: &'i ResolveInfo<'_>, name: &str) -> Option<&'i str> {
    info.arguments().get(name).and_then(JsonValue::as_str)
}

/// A list-of-strings argument (`states`, `labels` …); empty when absent.
fn arg_strings(info: &ResolveInfo<'_>, name: &str) -> Vec<String> {
    info.arguments()
        .get(name)
        .and_then(JsonValue::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn arg_int(info: &ResolveInfo<'_>, name: &str) -> Option<i64> {
    info.arguments().get(name).and_then(JsonValue::as_i64)
}

fn input<'i>(info: &'i ResolveInfo<'_>, name: &str) -> Option<&'i JsonValue> {
    info.arguments()
        .get("input")
        .and_then(JsonValue::as_object)
        .and_then(|m| m.get(name))
        .filter(|v| !v.is_null())
}

fn input_str<'i>(info: &'i ResolveInfo<'_>, name: &str) -> Option<&'i str> {
    input(info, name).and_then(JsonValue::as_str)
}

fn pr_url(repo: &str, number: u64) -> String {
    format!("https://github.com/{repo}/pull/{number}")
}

impl<'c> NodeObj<'c> {
    #[allow(clippy::unnecessary_wraps)] // shaped like every resolver's result
    fn obj<'a>(&self, obj: Obj) -> Resolved<'a>
    where
        'c: 'a,
    {
        Ok(ResolvedValue::object(NodeObj { ctx: self.ctx, obj }))
    }

    fn opt_obj<'a>(&self, obj: Option<Obj>) -> Resolved<'a>
    where
        'c: 'a,
    {
        obj.map_or_else(null, |o| self.obj(o))
    }

    #[allow(clippy::unnecessary_wraps)] // shaped like every resolver's result
    fn list<'a>(&self, objs: Vec<Obj>) -> Resolved<'a>
    where
        'c: 'a,
    {
        let ctx = self.ctx;
        Ok(ResolvedValue::list(objs.into_iter().map(move |obj| {
            ResolvedValue::object(NodeObj { ctx, obj })
        })))
    }

    /// A connection over `items`, sliced by `first` / `last` / `after` / `before`.
    fn connection<'a>(
        &self,
        info: &ResolveInfo<'_>,
        typename: &'static str,
        items: Vec<Obj>,
    ) -> Resolved<'a>
    where
        'c: 'a,
    {
        let total = items.len();
        let (mut start, mut end) = (0, total);
        if let Some(a) = arg_str(info, "after") {
            start = decode_cursor(a).ok_or_else(|| {
                typed_error(
                    "INVALID_CURSOR_ARGUMENTS",
                    format!("`{a}` does not appear to be a valid cursor."),
                )
            })? + 1;
        }
        if let Some(b) = arg_str(info, "before") {
            end = decode_cursor(b).ok_or_else(|| {
                typed_error(
                    "INVALID_CURSOR_ARGUMENTS",
                    format!("`{b}` does not appear to be a valid cursor."),
                )
            })?;
        }
        start = start.min(total);
        end = end.clamp(start, total);
        if let Some(f) = arg_int(info, "first") {
            end = end.min(start + usize::try_from(f).unwrap_or(0));
        }
        if let Some(l) = arg_int(info, "last") {
            start = start.max(end.saturating_sub(usize::try_from(l).unwrap_or(0)));
        }
        let page: Vec<(String, Obj)> = items
            .into_iter()
            .enumerate()
            .skip(start)
            .take(end - start)
            .map(|(i, o)| (cursor(i), o))
            .collect();
        self.obj(Obj::Conn(Box::new(Conn {
            typename,
            items: page,
            total,
            has_next: end < total,
            has_prev: start > 0,
        })))
    }

    /// Whether this request reads the PR's mergeability as UNKNOWN (the quirk).
    fn mergeable_unknown(&self, key: &PrKey) -> bool {
        if let Some(v) = self.ctx.mergeable_reads.borrow().get(key) {
            return *v;
        }
        let mut w = self.ctx.world.borrow_mut();
        let pr = w.get_pr_mut(&key.0, key.1);
        let unknown = pr.mergeable_unknown_reads > 0;
        if unknown {
            pr.mergeable_unknown_reads -= 1;
        }
        self.ctx
            .mergeable_reads
            .borrow_mut()
            .insert(key.clone(), unknown);
        unknown
    }

    /// A merge-queue removal or auto-merge disabling on a PR's timeline.
    fn timeline_event<'a>(&self, info: &ResolveInfo<'_>, key: &PrKey, i: usize) -> Resolved<'a>
    where
        'c: 'a,
    {
        use super::super::queue::TimelineEvent;
        let w = self.ctx.world.borrow();
        let event = w.get_pr(&key.0, key.1).timeline[i].clone();
        drop(w);
        match (info.field_name(), &event) {
            ("id", _) => leaf(format!("TE_{}_{}_{i}", key.0, key.1)),
            (
                "createdAt",
                TimelineEvent::RemovedFromQueue { at, .. }
                | TimelineEvent::AutoMergeDisabled { at, .. },
            ) => leaf(time(*at)),
            (
                "reason",
                TimelineEvent::RemovedFromQueue { reason, .. }
                | TimelineEvent::AutoMergeDisabled { reason, .. },
            ) => leaf(reason.as_str()),
            ("beforeCommit", TimelineEvent::RemovedFromQueue { head, .. }) => {
                self.obj(Obj::Commit(key.0.clone(), head.clone()))
            }
            ("reasonCode", TimelineEvent::AutoMergeDisabled { .. }) => leaf("MERGE_QUEUE_REMOVAL"),
            ("actor" | "enqueuer" | "disabler" | "mergeQueue", _) => null(),
            ("pullRequest", _) => self.obj(Obj::Pr(key.clone())),
            _ => self.not_implemented(info),
        }
    }

    fn not_implemented<'a>(&self, info: &ResolveInfo<'_>) -> Resolved<'a> {
        Err(typed_error(
            "FAKE_NOT_IMPLEMENTED",
            format!(
                "the fake GitHub does not model field '{}' on type '{}' (add it to tests/it/support/fake_github/graphql.rs)",
                info.field_name(),
                self.obj.type_name()
            ),
        ))
    }
}

impl ObjectValue for NodeObj<'_> {
    fn type_name(&self) -> &str {
        self.obj.type_name()
    }

    #[expect(
        clippy::too_many_lines,
        reason = "the fake's schema: one short arm per GraphQL field"
    )]
    fn resolve_field<'a>(&'a self, info: &'a ResolveInfo<'a>) -> Resolved<'a> {
        let nulled = |(ty, field): &(String, String)| {
            ty == self.obj.type_name() && field == info.field_name()
        };
        if self.ctx.world.borrow().null_fields.iter().any(nulled) {
            return null();
        }
        match &self.obj {
            Obj::Query => self.query(info),
            Obj::Mutation => self.mutation(info),
            Obj::Repo(r) => self.repository(info, r),
            Obj::Ref { repo, name } => self.git_ref(info, repo, name),
            Obj::Comparison { ahead, behind } => match info.field_name() {
                "aheadBy" => leaf(*ahead),
                "behindBy" => leaf(*behind),
                "status" => leaf(match (*ahead > 0, *behind > 0) {
                    (true, true) => "DIVERGED",
                    (false, true) => "BEHIND",
                    (true, false) => "AHEAD",
                    (false, false) => "IDENTICAL",
                }),
                _ => self.not_implemented(info),
            },
            Obj::Pr(key) => self.pull_request(info, key),
            Obj::PrCommit(key, sha) => match info.field_name() {
                "id" => leaf(format!("PURC_{}", &sha[..12])),
                "commit" => self.obj(Obj::Commit(key.0.clone(), sha.clone())),
                "url" => leaf(format!("{}/commits/{sha}", pr_url(&key.0, key.1))),
                "pullRequest" => self.obj(Obj::Pr(key.clone())),
                _ => self.not_implemented(info),
            },
            Obj::Commit(repo, sha) => self.commit(info, repo, sha),
            Obj::GitActor {
                login,
                name,
                email,
                date,
            } => match info.field_name() {
                "name" => leaf(name.as_str()),
                "email" => leaf(email.as_str()),
                "date" => leaf(time(*date)),
                "user" => self.opt_obj(login.clone().map(Obj::User)),
                _ => self.not_implemented(info),
            },
            Obj::Signature {
                signer,
                email,
                date,
            } => match info.field_name() {
                "isValid" => leaf(true),
                "state" => leaf("VALID"),
                "wasSignedByGitHub" => leaf(false),
                "email" => leaf(email.as_str()),
                "signer" => self.opt_obj(signer.clone().map(Obj::User)),
                "verifiedAt" => leaf(time(*date)),
                _ => self.not_implemented(info),
            },
            Obj::User(login) => match info.field_name() {
                "login" => leaf(login.as_str()),
                "id" => leaf(format!("U_{}", b64(login).trim_end_matches('='))),
                "url" => leaf(format!("https://github.com/{login}")),
                "resourcePath" => leaf(format!("/{login}")),
                "avatarUrl" => leaf(format!("https://avatars.githubusercontent.com/{login}")),
                "name" => null(),
                _ => self.not_implemented(info),
            },
            Obj::Label(name) => match info.field_name() {
                "name" => leaf(name.as_str()),
                "id" => leaf(format!("LA_{}", b64(name).trim_end_matches('='))),
                "color" => leaf("ededed"),
                "description" => null(),
                _ => self.not_implemented(info),
            },
            Obj::Suite(repo, sha, si) => self.suite(info, repo, sha, *si),
            Obj::Run(repo, sha, si, ri) => self.check_run(info, repo, sha, *si, *ri),
            Obj::Annotation(repo, sha, si, ri, ai) => {
                let w = self.ctx.world.borrow();
                let a = &w.commit(repo, sha).suites[*si].runs[*ri].annotations[*ai];
                match info.field_name() {
                    "annotationLevel" => leaf(a.level.as_graphql()),
                    "message" => leaf(a.message.as_str()),
                    "path" => leaf(a.path.as_str()),
                    "title" => leaf(opt_str(a.title.as_deref())),
                    "rawDetails" => null(),
                    "location" => self.obj(Obj::Span(a.line)),
                    _ => self.not_implemented(info),
                }
            }
            Obj::Span(line) => match info.field_name() {
                "start" | "end" => self.obj(Obj::Position(*line)),
                _ => self.not_implemented(info),
            },
            Obj::Position(line) => match info.field_name() {
                "line" => leaf(*line),
                "column" => null(),
                _ => self.not_implemented(info),
            },
            Obj::WorkflowRun(repo, sha, si) => {
                let w = self.ctx.world.borrow();
                let run = w.commit(repo, sha).suites[*si]
                    .workflow_run
                    .as_ref()
                    .expect("an Actions suite");
                match info.field_name() {
                    "id" => leaf(run.node_id.as_str()),
                    "databaseId" => leaf(run.database_id),
                    "event" => leaf(run.event.as_str()),
                    "runNumber" => leaf(run.run_number),
                    "url" => leaf(format!(
                        "https://github.com/{repo}/actions/runs/{}",
                        run.database_id
                    )),
                    "workflow" => self.obj(Obj::Workflow(run.workflow.clone())),
                    "checkSuite" => self.obj(Obj::Suite(repo.clone(), sha.clone(), *si)),
                    _ => self.not_implemented(info),
                }
            }
            Obj::Workflow(name) => match info.field_name() {
                "name" => leaf(name.as_str()),
                "id" => leaf(format!("W_{}", b64(name).trim_end_matches('='))),
                _ => self.not_implemented(info),
            },
            Obj::App(slug) => match info.field_name() {
                "slug" => leaf(slug.as_str()),
                "name" => leaf(if slug == super::super::world::ACTIONS_APP {
                    "GitHub Actions".to_owned()
                } else {
                    slug.clone()
                }),
                "id" => leaf(format!("A_{}", b64(slug).trim_end_matches('='))),
                _ => self.not_implemented(info),
            },
            Obj::Status(repo, sha) => self.status(info, repo, sha),
            Obj::StatusContext(repo, sha, i) => self.status_context(info, repo, sha, *i),
            Obj::Rollup(repo, sha) => self.rollup(info, repo, sha),
            Obj::Thread(key, ti) => self.thread(info, key, *ti),
            Obj::ThreadComment(key, ti, ci) => self.thread_comment(info, key, *ti, *ci),
            Obj::Review(key, i) => self.review(info, key, *i),
            Obj::IssueComment(key, i) => self.issue_comment(info, key, *i),
            Obj::AutoMerge(key) => {
                let w = self.ctx.world.borrow();
                let Some(am) = &w.get_pr(&key.0, key.1).auto_merge else {
                    return null();
                };
                match info.field_name() {
                    "enabledAt" => leaf(time(am.enabled_at)),
                    "mergeMethod" => leaf(am.method.as_graphql()),
                    "enabledBy" => self.obj(Obj::User(am.enabled_by.clone())),
                    "pullRequest" => self.obj(Obj::Pr(key.clone())),
                    "commitHeadline" | "commitBody" | "authorEmail" => null(),
                    _ => self.not_implemented(info),
                }
            }
            Obj::QueueEntry(key) => self.queue_entry(info, key),
            Obj::TimelineEvent(key, i, _) => self.timeline_event(info, key, *i),
            Obj::MergeQueue(repo, branch) => match info.field_name() {
                "id" => leaf(format!("MQ_{repo}_{branch}")),
                "entries" => {
                    let items = self
                        .ctx
                        .world
                        .borrow()
                        .queue_line(repo, branch)
                        .into_iter()
                        .map(|n| Obj::QueueEntry((repo.clone(), n)))
                        .collect();
                    self.connection(info, "MergeQueueEntryConnection", items)
                }
                _ => self.not_implemented(info),
            },
            Obj::Conn(c) => match info.field_name() {
                "totalCount" => leaf(c.total),
                "issueCount" if c.typename == "SearchResultItemConnection" => leaf(c.total),
                "nodes" => self.list(c.items.iter().map(|(_, o)| o.clone()).collect()),
                "edges" => {
                    let typename = c.typename.replace("Connection", "Edge");
                    self.list(
                        c.items
                            .iter()
                            .map(|(cur, o)| Obj::Edge {
                                typename: typename.clone(),
                                cursor: cur.clone(),
                                node: Box::new(o.clone()),
                            })
                            .collect(),
                    )
                }
                "pageInfo" => self.obj(Obj::PageInfo {
                    has_next: c.has_next,
                    has_prev: c.has_prev,
                    start: c.items.first().map(|(cur, _)| cur.clone()),
                    end: c.items.last().map(|(cur, _)| cur.clone()),
                }),
                _ => self.not_implemented(info),
            },
            Obj::Edge { cursor, node, .. } => match info.field_name() {
                "cursor" => leaf(cursor.as_str()),
                "node" => self.obj((**node).clone()),
                _ => self.not_implemented(info),
            },
            Obj::PageInfo {
                has_next,
                has_prev,
                start,
                end,
            } => match info.field_name() {
                "hasNextPage" => leaf(*has_next),
                "hasPreviousPage" => leaf(*has_prev),
                "startCursor" => leaf(opt_str(start.as_deref())),
                "endCursor" => leaf(opt_str(end.as_deref())),
                _ => self.not_implemented(info),
            },
            Obj::Payload { pr, node, .. } => match info.field_name() {
                "clientMutationId" => leaf(opt_str(input_str(info, "clientMutationId"))),
                "actor" => self.obj(Obj::User(self.ctx.world.borrow().viewer.clone())),
                "pullRequest" => self.opt_obj(pr.clone().map(Obj::Pr)),
                "comment" | "thread" => self.opt_obj(node.as_deref().cloned()),
                _ => self.not_implemented(info),
            },
            Obj::RateLimit => {
                let w = self.ctx.world.borrow();
                match info.field_name() {
                    "cost" => leaf(self.ctx.cost.points),
                    "limit" => leaf(w.rate.limit),
                    "used" => leaf(w.rate.graphql_used),
                    "remaining" => leaf(w.rate.limit.saturating_sub(w.rate.graphql_used)),
                    "resetAt" => leaf(
                        chrono::DateTime::from_timestamp(w.rate.reset_epoch, 0)
                            .map_or(JsonValue::Null, time),
                    ),
                    "nodeCount" => leaf(self.ctx.cost.nodes),
                    _ => self.not_implemented(info),
                }
            }
        }
    }
}

impl<'c> NodeObj<'c> {
    fn query<'a>(&self, info: &ResolveInfo<'_>) -> Resolved<'a>
    where
        'c: 'a,
    {
        match info.field_name() {
            "repository" => {
                let owner = arg_str(info, "owner").unwrap_or_default();
                let name = arg_str(info, "name").unwrap_or_default();
                let full = format!("{owner}/{name}");
                match actual_repo_name(&self.ctx.world.borrow(), &full) {
                    Some(r) => self.obj(Obj::Repo(r)),
                    None => Err(typed_error(
                        "NOT_FOUND",
                        format!("Could not resolve to a Repository with the name '{full}'."),
                    )),
                }
            }
            "node" => {
                let id = arg_str(info, "id").unwrap_or_default();
                match self.ctx.world.borrow().find_node(id) {
                    Some(n) => self.obj(Obj::from_node(n)),
                    None => Err(typed_error(
                        "NOT_FOUND",
                        format!("Could not resolve to a node with the global id of '{id}'"),
                    )),
                }
            }
            "viewer" => self.obj(Obj::User(self.ctx.world.borrow().actor())),
            "user" => self.obj(Obj::User(
                arg_str(info, "login").unwrap_or_default().to_owned(),
            )),
            "rateLimit" => self.obj(Obj::RateLimit),
            "search" => {
                if arg_str(info, "type") != Some("ISSUE") {
                    return self.not_implemented(info);
                }
                let q = arg_str(info, "query").unwrap_or_default();
                let found = super::search::pull_requests(&self.ctx.world.borrow(), q)
                    .map_err(|e| typed_error("FAKE_NOT_IMPLEMENTED", e))?;
                let items = found.into_iter().map(Obj::Pr).collect();
                self.connection(info, "SearchResultItemConnection", items)
            }
            _ => self.not_implemented(info),
        }
    }

    fn mutation<'a>(&self, info: &ResolveInfo<'_>) -> Resolved<'a>
    where
        'c: 'a,
    {
        let pr_id = input_str(info, "pullRequestId").unwrap_or_default();
        let payload = |typename: &'static str, pr: Option<PrKey>, node: Option<Obj>| Obj::Payload {
            typename,
            pr,
            node: node.map(Box::new),
        };
        let result = {
            let mut w = self.ctx.world.borrow_mut();
            match info.field_name() {
                "enablePullRequestAutoMerge" => {
                    let method = input_str(info, "mergeMethod")
                        .and_then(MergeMethod::from_graphql)
                        .unwrap_or(MergeMethod::Merge);
                    w.enable_auto_merge(pr_id, method, input_str(info, "expectedHeadOid"))
                        .map(|k| payload("EnablePullRequestAutoMergePayload", Some(k), None))
                }
                "disablePullRequestAutoMerge" => w
                    .disable_auto_merge(pr_id)
                    .map(|k| payload("DisablePullRequestAutoMergePayload", Some(k), None)),
                "updatePullRequestBranch" => {
                    let method = input_str(info, "updateMethod")
                        .and_then(UpdateMethod::from_graphql)
                        .unwrap_or(UpdateMethod::Merge);
                    match w.find_node(pr_id) {
                        Some(NodeRef::Pr(repo, n)) => w
                            .update_branch(&repo, n, input_str(info, "expectedHeadOid"), method)
                            .map(|_| {
                                payload("UpdatePullRequestBranchPayload", Some((repo, n)), None)
                            }),
                        _ => Err(ApiError::NotFound(format!(
                            "Could not resolve to a node with the global id of '{pr_id}'"
                        ))),
                    }
                }
                "mergePullRequest" => {
                    let method = input_str(info, "mergeMethod")
                        .and_then(MergeMethod::from_graphql)
                        .unwrap_or(MergeMethod::Merge);
                    match w.find_node(pr_id) {
                        Some(NodeRef::Pr(repo, n)) => w
                            .merge(&repo, n, input_str(info, "expectedHeadOid"), method)
                            .map(|_| payload("MergePullRequestPayload", Some((repo, n)), None)),
                        _ => Err(ApiError::NotFound(format!(
                            "Could not resolve to a node with the global id of '{pr_id}'"
                        ))),
                    }
                }
                "addPullRequestReviewThreadReply" => {
                    let thread = input_str(info, "pullRequestReviewThreadId").unwrap_or_default();
                    let body = input_str(info, "body").unwrap_or_default();
                    w.reply_to_thread(thread, body).map(|n| {
                        payload(
                            "AddPullRequestReviewThreadReplyPayload",
                            None,
                            Some(Obj::from_node(n)),
                        )
                    })
                }
                "resolveReviewThread" => {
                    let thread = input_str(info, "threadId").unwrap_or_default();
                    w.resolve_thread(thread).map(|n| {
                        payload("ResolveReviewThreadPayload", None, Some(Obj::from_node(n)))
                    })
                }
                _ => return self.not_implemented(info),
            }
        };
        match result {
            Ok(p) => self.obj(p),
            Err(e) => Err(api_error(&e)),
        }
    }

    fn repository<'a>(&self, info: &ResolveInfo<'_>, repo: &str) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let r = w.get_repo(repo);
        let (owner, name) = repo.split_once('/').unwrap_or((repo, ""));
        match info.field_name() {
            "id" => leaf(r.node_id.as_str()),
            "databaseId" => leaf(r.database_id),
            "name" => leaf(name),
            "nameWithOwner" => leaf(repo),
            "owner" => self.obj(Obj::User(owner.to_owned())),
            "url" => leaf(format!("https://github.com/{repo}")),
            "defaultBranchRef" => self.obj(Obj::Ref {
                repo: repo.to_owned(),
                name: r.default_branch.clone(),
            }),
            "autoMergeAllowed" => leaf(r.allow_auto_merge),
            "squashMergeAllowed" => leaf(r.allow_squash),
            "mergeCommitAllowed" => leaf(r.allow_merge_commit),
            "mergeQueue" => {
                let branch =
                    arg_str(info, "branch").map_or_else(|| r.default_branch.clone(), str::to_owned);
                let required = w.queue_required(repo, &branch);
                self.opt_obj(required.then(|| Obj::MergeQueue(repo.to_owned(), branch)))
            }
            "rebaseMergeAllowed" => leaf(r.allow_rebase),
            "deleteBranchOnMerge" | "isArchived" | "isPrivate" | "isFork" => leaf(false),
            "viewerPermission" => leaf("ADMIN"),
            "viewerDefaultMergeMethod" => leaf(
                [MergeMethod::Merge, MergeMethod::Squash, MergeMethod::Rebase]
                    .into_iter()
                    .find(|m| r.method_allowed(*m))
                    .unwrap_or(MergeMethod::Merge)
                    .as_graphql(),
            ),
            "pullRequest" => {
                let n = arg_int(info, "number").unwrap_or(0);
                let n = u64::try_from(n).unwrap_or(0);
                if r.prs.contains_key(&n) {
                    self.obj(Obj::Pr((repo.to_owned(), n)))
                } else {
                    Err(typed_error(
                        "NOT_FOUND",
                        format!("Could not resolve to a PullRequest with the number of {n}."),
                    ))
                }
            }
            "pullRequests" => {
                let states = arg_strings(info, "states");
                let labels = arg_strings(info, "labels");
                let head = arg_str(info, "headRefName");
                let base = arg_str(info, "baseRefName");
                let items = r
                    .prs
                    .values()
                    .filter(|p| {
                        states.is_empty() || states.iter().any(|s| s == p.state.as_graphql())
                    })
                    .filter(|p| labels.is_empty() || labels.iter().any(|l| p.labels.contains(l)))
                    .filter(|p| head.is_none_or(|h| h == p.head_ref))
                    .filter(|p| base.is_none_or(|b| b == p.base_ref))
                    .map(|p| Obj::Pr((repo.to_owned(), p.number)))
                    .collect();
                drop(w);
                self.connection(info, "PullRequestConnection", items)
            }
            "ref" => {
                let q = arg_str(info, "qualifiedName").unwrap_or_default();
                let name = q.strip_prefix("refs/heads/").unwrap_or(q);
                let known = r.default_branch == name
                    || r.branches.contains_key(name)
                    || r.protections.contains_key(name)
                    || r.prs.values().any(|p| {
                        p.base_ref == name || (p.head_ref == name && p.state == PrState::Open)
                    });
                self.opt_obj(known.then(|| Obj::Ref {
                    repo: repo.to_owned(),
                    name: name.to_owned(),
                }))
            }
            "object" => {
                let oid = arg_str(info, "oid").unwrap_or_default();
                self.opt_obj(
                    r.commits
                        .contains_key(oid)
                        .then(|| Obj::Commit(repo.to_owned(), oid.to_owned())),
                )
            }
            _ => self.not_implemented(info),
        }
    }

    fn git_ref<'a>(&self, info: &ResolveInfo<'_>, repo: &str, name: &str) -> Resolved<'a>
    where
        'c: 'a,
    {
        match info.field_name() {
            "name" => leaf(name),
            "prefix" => leaf("refs/heads/"),
            "id" => leaf(format!(
                "REF_{}",
                b64(&format!("{repo}:{name}")).trim_end_matches('=')
            )),
            "repository" => self.obj(Obj::Repo(repo.to_owned())),
            // The branch's head: its own pushes', else the newest open PR's whose head it is.
            "target" => {
                let w = self.ctx.world.borrow();
                let r = w.get_repo(repo);
                let head = r
                    .branches
                    .get(name)
                    .and_then(|c| c.last().cloned())
                    .or_else(|| {
                        r.prs
                            .values()
                            .rev()
                            .find(|p| p.head_ref == name && p.state == PrState::Open)
                            .map(|p| p.head_sha().to_owned())
                    });
                drop(w);
                self.opt_obj(head.map(|sha| Obj::Commit(repo.to_owned(), sha)))
            }
            "compare" => {
                let head = arg_str(info, "headRef").unwrap_or_default();
                let head = head.strip_prefix("refs/heads/").unwrap_or(head);
                let w = self.ctx.world.borrow();
                let pr = w.get_repo(repo).prs.values().rev().find(|p| {
                    p.base_ref == name
                        && (p.head_ref == head || p.head_sha() == head)
                        && p.state == PrState::Open
                });
                let cmp = pr.map(|p| Obj::Comparison {
                    ahead: p.commits.len() as u64,
                    behind: p.behind_by,
                });
                self.opt_obj(cmp)
            }
            _ => self.not_implemented(info),
        }
    }

    fn queue_entry<'a>(&self, info: &ResolveInfo<'_>, key: &PrKey) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let Some((position, item)) = w.queue_entry(&key.0, key.1) else {
            return null();
        };
        match info.field_name() {
            "id" => leaf(format!("MQE_{}_{}", key.1, &item.group_sha[..8])),
            "position" => leaf(position),
            "state" => leaf(w.queue_state(&key.0, key.1)),
            "estimatedTimeToMerge" => {
                leaf(position as u64 * super::super::queue::SECONDS_PER_ENTRY)
            }
            "enqueuedAt" => leaf(time(item.enqueued_at)),
            "headCommit" => self.obj(Obj::Commit(key.0.clone(), item.group_sha.clone())),
            "pullRequest" => self.obj(Obj::Pr(key.clone())),
            "jump" | "solo" => leaf(false),
            _ => self.not_implemented(info),
        }
    }

    #[expect(
        clippy::too_many_lines,
        reason = "the fake's PullRequest type: one short arm per field"
    )]
    fn pull_request<'a>(&self, info: &ResolveInfo<'_>, key: &PrKey) -> Resolved<'a>
    where
        'c: 'a,
    {
        let (repo, number) = (key.0.as_str(), key.1);
        if matches!(info.field_name(), "mergeable" | "mergeStateStatus")
            && self.mergeable_unknown(key)
        {
            return leaf("UNKNOWN");
        }
        let w = self.ctx.world.borrow();
        let pr = w.get_pr(repo, number);
        let head = pr.head_sha().to_owned();
        let url = pr_url(repo, number);
        match info.field_name() {
            "id" => leaf(pr.node_id.as_str()),
            "databaseId" => leaf(pr.database_id),
            "fullDatabaseId" => leaf(pr.database_id.to_string()),
            "number" => leaf(number),
            "url" | "permalink" => leaf(url),
            "resourcePath" => leaf(format!("/{repo}/pull/{number}")),
            "title" => leaf(pr.title.as_str()),
            "body" | "bodyText" => leaf(pr.body.as_str()),
            "state" => leaf(pr.state.as_graphql()),
            "isDraft" => leaf(pr.draft),
            "closed" => leaf(pr.state != PrState::Open),
            "merged" => leaf(pr.state == PrState::Merged),
            "locked" => leaf(false),
            "isInMergeQueue" => leaf(w.queue_entry(repo, number).is_some()),
            "isMergeQueueEnabled" => leaf(w.queue_required(repo, &pr.base_ref)),
            "mergeQueueEntry" => self.opt_obj(
                w.queue_entry(repo, number)
                    .map(|_| Obj::QueueEntry(key.clone())),
            ),
            "createdAt" => leaf(time(pr.created_at)),
            "updatedAt" => {
                let mut t = pr
                    .created_at
                    .max(pr.labels_changed_at)
                    .max(w.commit(repo, &head).committed_at);
                for c in &pr.comments {
                    t = t.max(c.updated_at);
                }
                for r in &pr.reviews {
                    t = t.max(r.updated_at);
                }
                for c in pr.threads.iter().flat_map(|t| &t.comments) {
                    t = t.max(c.updated_at);
                }
                leaf(time(t))
            }
            "mergedAt" => leaf(opt_time(pr.merged_at)),
            "closedAt" => leaf(opt_time(pr.closed_at)),
            "author" => self.opt_obj(pr.author.clone().map(Obj::User)),
            "authorAssociation" => leaf(w.author_association(repo, pr.author.as_deref())),
            "headRefName" => leaf(pr.head_ref.as_str()),
            "headRefOid" => leaf(head),
            "baseRefName" => leaf(pr.base_ref.as_str()),
            "headRef" => self.opt_obj((pr.state == PrState::Open).then(|| Obj::Ref {
                repo: repo.to_owned(),
                name: pr.head_ref.clone(),
            })),
            "baseRef" => self.obj(Obj::Ref {
                repo: repo.to_owned(),
                name: pr.base_ref.clone(),
            }),
            "isCrossRepository" => leaf(pr.cross_repository),
            "maintainerCanModify" => leaf(!pr.cross_repository),
            "repository" | "baseRepository" => self.obj(Obj::Repo(repo.to_owned())),
            "headRepository" => self.obj(Obj::Repo(pr.head_repo_or(repo).to_owned())),
            "mergeable" => leaf(pr.mergeable.as_graphql()),
            "mergeStateStatus" => leaf(w.merge_state(repo, number).as_graphql()),
            "autoMergeRequest" => {
                self.opt_obj(pr.auto_merge.is_some().then(|| Obj::AutoMerge(key.clone())))
            }
            "viewerCanEnableAutoMerge" => {
                leaf(pr.state == PrState::Open && pr.auto_merge.is_none())
            }
            "viewerCanDisableAutoMerge" => leaf(pr.auto_merge.is_some()),
            "viewerCanUpdateBranch" => leaf(pr.state == PrState::Open && pr.behind_by > 0),
            "viewerCanMergeAsAdmin" => leaf(true),
            "mergeCommit" => self.opt_obj(
                pr.merge_commit
                    .clone()
                    .map(|s| Obj::Commit(repo.to_owned(), s)),
            ),
            "totalCommentsCount" => {
                leaf(pr.comments.len() + pr.threads.iter().map(|t| t.comments.len()).sum::<usize>())
            }
            "reviewDecision" => {
                let required = w
                    .get_repo(repo)
                    .protections
                    .get(&pr.base_ref)
                    .map_or(0, |p| p.required_approvals);
                if required == 0 {
                    return null();
                }
                let mut latest: BTreeMap<&str, ReviewState> = BTreeMap::new();
                for r in &pr.reviews {
                    if let Some(a) = &r.author
                        && matches!(
                            r.state,
                            ReviewState::Approved
                                | ReviewState::ChangesRequested
                                | ReviewState::Dismissed
                        )
                    {
                        latest.insert(a, r.state);
                    }
                }
                leaf(
                    if latest.values().any(|s| *s == ReviewState::ChangesRequested) {
                        "CHANGES_REQUESTED"
                    } else if latest
                        .values()
                        .filter(|s| **s == ReviewState::Approved)
                        .count()
                        >= usize::try_from(required).unwrap()
                    {
                        "APPROVED"
                    } else {
                        "REVIEW_REQUIRED"
                    },
                )
            }
            "statusCheckRollup" => {
                let c = w.commit(repo, &head);
                self.opt_obj(
                    (!c.suites.is_empty() || !c.statuses.is_empty())
                        .then(|| Obj::Rollup(repo.to_owned(), head.clone())),
                )
            }
            "labels" => {
                let items = pr.labels.iter().map(|l| Obj::Label(l.clone())).collect();
                drop(w);
                self.connection(info, "LabelConnection", items)
            }
            "commits" => {
                let items = pr
                    .commits
                    .iter()
                    .map(|s| Obj::PrCommit(key.clone(), s.clone()))
                    .collect();
                drop(w);
                self.connection(info, "PullRequestCommitConnection", items)
            }
            "reviewThreads" => {
                // A thread of a review not submitted yet shows only to its author.
                let items = (0..pr.threads.len())
                    .filter(|i| {
                        pr.threads[*i]
                            .comments
                            .iter()
                            .any(|c| visible(&w, c.pending, c.author.as_deref()))
                            || pr.threads[*i].comments.is_empty()
                    })
                    .map(|i| Obj::Thread(key.clone(), i))
                    .collect();
                drop(w);
                self.connection(info, "PullRequestReviewThreadConnection", items)
            }
            "reviews" => {
                let states = arg_strings(info, "states");
                let author = arg_str(info, "author");
                let items = pr
                    .reviews
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| {
                        states.is_empty() || states.iter().any(|s| s == r.state.as_graphql())
                    })
                    .filter(|(_, r)| author.is_none_or(|a| r.author.as_deref() == Some(a)))
                    .filter(|(_, r)| {
                        visible(&w, r.state == ReviewState::Pending, r.author.as_deref())
                    })
                    .map(|(i, _)| Obj::Review(key.clone(), i))
                    .collect();
                drop(w);
                self.connection(info, "PullRequestReviewConnection", items)
            }
            "comments" => {
                let items = (0..pr.comments.len())
                    .map(|i| Obj::IssueComment(key.clone(), i))
                    .collect();
                drop(w);
                self.connection(info, "IssueCommentConnection", items)
            }
            "timelineItems" => {
                let types = arg_strings(info, "itemTypes");
                let items = pr
                    .timeline
                    .iter()
                    .enumerate()
                    .filter_map(|(i, e)| {
                        let (typename, item_type) = e.type_names();
                        (types.is_empty() || types.iter().any(|t| t == item_type))
                            .then(|| Obj::TimelineEvent(key.clone(), i, typename))
                    })
                    .collect();
                drop(w);
                self.connection(info, "PullRequestTimelineItemsConnection", items)
            }
            _ => self.not_implemented(info),
        }
    }

    fn commit<'a>(&self, info: &ResolveInfo<'_>, repo: &str, sha: &str) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let c = w.commit(repo, sha);
        match info.field_name() {
            "id" => leaf(c.node_id.as_str()),
            "oid" => leaf(sha),
            "abbreviatedOid" => leaf(&sha[..7]),
            "url" => leaf(format!("https://github.com/{repo}/commit/{sha}")),
            "message" => leaf(c.message.as_str()),
            "messageHeadline" => leaf(c.message.lines().next().unwrap_or_default()),
            "messageBody" => leaf(
                c.message
                    .split_once('\n')
                    .map_or("", |(_, b)| b.trim_start()),
            ),
            "committedDate" => leaf(time(c.committed_at)),
            "authoredDate" => leaf(time(c.authored_at)),
            "author" => {
                let (name, email) = c.author_identity();
                self.obj(Obj::GitActor {
                    login: c.author.clone(),
                    name,
                    email,
                    date: c.authored_at,
                })
            }
            "committer" => {
                let (name, email) = c.committer_identity();
                self.obj(Obj::GitActor {
                    login: c.committer.clone(),
                    name,
                    email,
                    date: c.committed_at,
                })
            }
            "signature" => {
                let (_, email) = c.committer_identity();
                self.opt_obj(c.verified.then(|| Obj::Signature {
                    signer: c.committer.clone(),
                    email,
                    date: c.committed_at,
                }))
            }
            "repository" => self.obj(Obj::Repo(repo.to_owned())),
            "parents" => {
                let items = c
                    .parents
                    .iter()
                    .map(|p| Obj::Commit(repo.to_owned(), p.clone()))
                    .collect();
                drop(w);
                self.connection(info, "CommitConnection", items)
            }
            "checkSuites" => {
                let items = (0..c.suites.len())
                    .map(|i| Obj::Suite(repo.to_owned(), sha.to_owned(), i))
                    .collect();
                drop(w);
                self.connection(info, "CheckSuiteConnection", items)
            }
            "status" => self.opt_obj(
                (!c.statuses.is_empty()).then(|| Obj::Status(repo.to_owned(), sha.to_owned())),
            ),
            "statusCheckRollup" => self.opt_obj(
                (!c.suites.is_empty() || !c.statuses.is_empty())
                    .then(|| Obj::Rollup(repo.to_owned(), sha.to_owned())),
            ),
            _ => self.not_implemented(info),
        }
    }

    fn suite<'a>(&self, info: &ResolveInfo<'_>, repo: &str, sha: &str, si: usize) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let s = &w.commit(repo, sha).suites[si];
        let all_done = s.runs.iter().all(|r| r.status == CheckStatus::Completed);
        match info.field_name() {
            "id" => leaf(s.node_id.as_str()),
            "databaseId" => leaf(s.database_id),
            "app" => self.obj(Obj::App(s.app.clone())),
            "workflowRun" => self.opt_obj(
                s.workflow_run
                    .is_some()
                    .then(|| Obj::WorkflowRun(repo.to_owned(), sha.to_owned(), si)),
            ),
            "commit" => self.obj(Obj::Commit(repo.to_owned(), sha.to_owned())),
            "repository" => self.obj(Obj::Repo(repo.to_owned())),
            "status" => leaf(if all_done {
                "COMPLETED"
            } else if s.runs.iter().any(|r| r.status == CheckStatus::InProgress) {
                "IN_PROGRESS"
            } else {
                "QUEUED"
            }),
            "conclusion" => {
                if !all_done || s.runs.is_empty() {
                    return null();
                }
                leaf(if s.runs.iter().any(|r| r.outcome() == Outcome::Failed) {
                    Conclusion::Failure.as_graphql()
                } else {
                    Conclusion::Success.as_graphql()
                })
            }
            "checkRuns" => {
                let items = (0..s.runs.len())
                    .map(|i| Obj::Run(repo.to_owned(), sha.to_owned(), si, i))
                    .collect();
                drop(w);
                self.connection(info, "CheckRunConnection", items)
            }
            _ => self.not_implemented(info),
        }
    }

    fn check_run<'a>(
        &self,
        info: &ResolveInfo<'_>,
        repo: &str,
        sha: &str,
        si: usize,
        ri: usize,
    ) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let run = &w.commit(repo, sha).suites[si].runs[ri];
        match info.field_name() {
            "id" => leaf(run.node_id.as_str()),
            "databaseId" => leaf(run.database_id),
            "name" => leaf(run.name.as_str()),
            "status" => leaf(run.status.as_graphql()),
            "conclusion" => leaf(opt_str(run.conclusion.map(Conclusion::as_graphql))),
            "detailsUrl" => leaf(opt_str(run.details_url.as_deref())),
            "url" | "permalink" => leaf(format!(
                "https://github.com/{repo}/runs/{}",
                run.database_id
            )),
            "startedAt" => leaf(opt_time(run.started_at)),
            "completedAt" => leaf(opt_time(run.completed_at)),
            "title" => leaf(opt_str(run.title.as_deref())),
            "summary" => leaf(opt_str(run.summary.as_deref())),
            "text" => leaf(opt_str(run.text.as_deref())),
            "externalId" => null(),
            "checkSuite" => self.obj(Obj::Suite(repo.to_owned(), sha.to_owned(), si)),
            "repository" => self.obj(Obj::Repo(repo.to_owned())),
            "isRequired" => leaf(is_required(&w, info, repo, &run.name)),
            "annotations" => {
                let items = (0..run.annotations.len())
                    .map(|i| Obj::Annotation(repo.to_owned(), sha.to_owned(), si, ri, i))
                    .collect();
                drop(w);
                self.connection(info, "CheckAnnotationConnection", items)
            }
            _ => self.not_implemented(info),
        }
    }

    fn status<'a>(&self, info: &ResolveInfo<'_>, repo: &str, sha: &str) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let latest = latest_statuses(&w, repo, sha);
        match info.field_name() {
            "id" => leaf(format!("SC_{}", &sha[..12])),
            "state" => {
                let states: Vec<StatusState> = latest
                    .iter()
                    .map(|i| w.commit(repo, sha).statuses[*i].state)
                    .collect();
                leaf(combined(&states).as_graphql())
            }
            "contexts" => {
                let items = latest
                    .into_iter()
                    .map(|i| Obj::StatusContext(repo.to_owned(), sha.to_owned(), i))
                    .collect();
                self.list(items)
            }
            "context" => {
                let name = arg_str(info, "name").unwrap_or_default();
                let found = latest
                    .into_iter()
                    .find(|i| w.commit(repo, sha).statuses[*i].context == name);
                self.opt_obj(found.map(|i| Obj::StatusContext(repo.to_owned(), sha.to_owned(), i)))
            }
            "commit" => self.obj(Obj::Commit(repo.to_owned(), sha.to_owned())),
            _ => self.not_implemented(info),
        }
    }

    fn status_context<'a>(
        &self,
        info: &ResolveInfo<'_>,
        repo: &str,
        sha: &str,
        i: usize,
    ) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let s = &w.commit(repo, sha).statuses[i];
        match info.field_name() {
            "id" => leaf(s.node_id.as_str()),
            "context" => leaf(s.context.as_str()),
            "state" => leaf(s.state.as_graphql()),
            "targetUrl" => leaf(opt_str(s.target_url.as_deref())),
            "description" => leaf(opt_str(s.description.as_deref())),
            "createdAt" => leaf(time(s.created_at)),
            "avatarUrl" => null(),
            "isRequired" => leaf(is_required(&w, info, repo, &s.context)),
            "commit" => self.obj(Obj::Commit(repo.to_owned(), sha.to_owned())),
            _ => self.not_implemented(info),
        }
    }

    fn rollup<'a>(&self, info: &ResolveInfo<'_>, repo: &str, sha: &str) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let c = w.commit(repo, sha);
        match info.field_name() {
            "id" => leaf(format!("SCR_{}", &sha[..12])),
            "commit" => self.obj(Obj::Commit(repo.to_owned(), sha.to_owned())),
            "state" => {
                let mut states: Vec<StatusState> = latest_statuses(&w, repo, sha)
                    .into_iter()
                    .map(|i| c.statuses[i].state)
                    .collect();
                for run in c.suites.iter().flat_map(|s| &s.runs) {
                    states.push(match run.outcome() {
                        Outcome::Passed => StatusState::Success,
                        Outcome::Pending => StatusState::Pending,
                        Outcome::Failed => StatusState::Failure,
                    });
                }
                leaf(combined(&states).as_graphql())
            }
            "contexts" => {
                let mut items: Vec<Obj> = Vec::new();
                for (si, s) in c.suites.iter().enumerate() {
                    for ri in 0..s.runs.len() {
                        items.push(Obj::Run(repo.to_owned(), sha.to_owned(), si, ri));
                    }
                }
                for i in latest_statuses(&w, repo, sha) {
                    items.push(Obj::StatusContext(repo.to_owned(), sha.to_owned(), i));
                }
                drop(w);
                self.connection(info, "StatusCheckRollupContextConnection", items)
            }
            _ => self.not_implemented(info),
        }
    }

    fn thread<'a>(&self, info: &ResolveInfo<'_>, key: &PrKey, ti: usize) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let t = &w.get_pr(&key.0, key.1).threads[ti];
        match info.field_name() {
            "id" => leaf(t.node_id.as_str()),
            "isResolved" | "isCollapsed" | "viewerCanUnresolve" => leaf(t.resolved),
            "isOutdated" => leaf(t.outdated),
            "path" => leaf(t.path.as_str()),
            "line" => leaf(t.line),
            "originalLine" => leaf(t.line.unwrap_or(1)),
            "startLine" | "originalStartLine" | "startDiffSide" => null(),
            "diffSide" => leaf("RIGHT"),
            "subjectType" => leaf("LINE"),
            "resolvedBy" => self.opt_obj(t.resolved_by.clone().map(Obj::User)),
            "viewerCanReply" => leaf(true),
            "viewerCanResolve" => leaf(!t.resolved),
            "pullRequest" => self.obj(Obj::Pr(key.clone())),
            "repository" => self.obj(Obj::Repo(key.0.clone())),
            "comments" => {
                let items = (0..t.comments.len())
                    .filter(|ci| {
                        let c = &t.comments[*ci];
                        visible(&w, c.pending, c.author.as_deref())
                    })
                    .map(|ci| Obj::ThreadComment(key.clone(), ti, ci))
                    .collect();
                drop(w);
                self.connection(info, "PullRequestReviewCommentConnection", items)
            }
            _ => self.not_implemented(info),
        }
    }

    fn thread_comment<'a>(
        &self,
        info: &ResolveInfo<'_>,
        key: &PrKey,
        ti: usize,
        ci: usize,
    ) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let t = &w.get_pr(&key.0, key.1).threads[ti];
        let c = &t.comments[ci];
        match info.field_name() {
            "id" => leaf(c.node_id.as_str()),
            "databaseId" => leaf(c.database_id),
            "fullDatabaseId" => leaf(c.database_id.to_string()),
            "author" => self.opt_obj(c.author.clone().map(Obj::User)),
            "body" | "bodyText" => leaf(c.body.as_str()),
            "url" => leaf(format!(
                "{}#discussion_r{}",
                pr_url(&key.0, key.1),
                c.database_id
            )),
            "createdAt" | "publishedAt" => leaf(time(c.created_at)),
            "updatedAt" => leaf(time(c.updated_at)),
            "lastEditedAt" => leaf(opt_time(
                (c.updated_at != c.created_at).then_some(c.updated_at),
            )),
            "editor" => self.opt_obj(
                (c.updated_at != c.created_at)
                    .then(|| c.editor.clone().or_else(|| c.author.clone()))
                    .flatten()
                    .map(Obj::User),
            ),
            "authorAssociation" => leaf(w.author_association(&key.0, c.author.as_deref())),
            "path" => leaf(t.path.as_str()),
            "line" => leaf(t.line),
            "originalLine" => leaf(t.line.unwrap_or(1)),
            "outdated" => leaf(t.outdated),
            "diffHunk" => leaf(""),
            "state" => leaf(if c.pending { "PENDING" } else { "SUBMITTED" }),
            "isMinimized" => leaf(false),
            "minimizedReason" => null(),
            "viewerDidAuthor" => leaf(c.author.as_deref() == Some(w.viewer.as_str())),
            "replyTo" => self.opt_obj((ci > 0).then(|| Obj::ThreadComment(key.clone(), ti, 0))),
            "pullRequest" => self.obj(Obj::Pr(key.clone())),
            "repository" => self.obj(Obj::Repo(key.0.clone())),
            _ => self.not_implemented(info),
        }
    }

    fn review<'a>(&self, info: &ResolveInfo<'_>, key: &PrKey, i: usize) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let r = &w.get_pr(&key.0, key.1).reviews[i];
        match info.field_name() {
            "id" => leaf(r.node_id.as_str()),
            "databaseId" => leaf(r.database_id),
            "fullDatabaseId" => leaf(r.database_id.to_string()),
            "author" => self.opt_obj(r.author.clone().map(Obj::User)),
            "state" => leaf(r.state.as_graphql()),
            "body" | "bodyText" => leaf(r.body.as_str()),
            "url" => leaf(format!(
                "{}#pullrequestreview-{}",
                pr_url(&key.0, key.1),
                r.database_id
            )),
            "submittedAt" | "publishedAt" => leaf(opt_time(r.submitted_at)),
            "createdAt" => leaf(time(r.submitted_at.unwrap_or(r.updated_at))),
            "updatedAt" => leaf(time(r.updated_at)),
            "lastEditedAt" => leaf(opt_time(review_edited(r).then_some(r.updated_at))),
            "editor" => self.opt_obj(
                review_edited(r)
                    .then(|| r.editor.clone().or_else(|| r.author.clone()))
                    .flatten()
                    .map(Obj::User),
            ),
            "authorAssociation" => leaf(w.author_association(&key.0, r.author.as_deref())),
            "commit" => self.opt_obj(r.commit.clone().map(|s| Obj::Commit(key.0.clone(), s))),
            "viewerDidAuthor" => leaf(r.author.as_deref() == Some(w.viewer.as_str())),
            "pullRequest" => self.obj(Obj::Pr(key.clone())),
            "repository" => self.obj(Obj::Repo(key.0.clone())),
            _ => self.not_implemented(info),
        }
    }

    fn issue_comment<'a>(&self, info: &ResolveInfo<'_>, key: &PrKey, i: usize) -> Resolved<'a>
    where
        'c: 'a,
    {
        let w = self.ctx.world.borrow();
        let c = &w.get_pr(&key.0, key.1).comments[i];
        match info.field_name() {
            "id" => leaf(c.node_id.as_str()),
            "databaseId" => leaf(c.database_id),
            "fullDatabaseId" => leaf(c.database_id.to_string()),
            "author" => self.opt_obj(c.author.clone().map(Obj::User)),
            "body" | "bodyText" => leaf(c.body.as_str()),
            "url" => leaf(format!(
                "{}#issuecomment-{}",
                pr_url(&key.0, key.1),
                c.database_id
            )),
            "createdAt" | "publishedAt" => leaf(time(c.created_at)),
            "updatedAt" => leaf(time(c.updated_at)),
            "lastEditedAt" => leaf(opt_time(
                (c.updated_at != c.created_at).then_some(c.updated_at),
            )),
            "editor" => self.opt_obj(
                (c.updated_at != c.created_at)
                    .then(|| c.editor.clone().or_else(|| c.author.clone()))
                    .flatten()
                    .map(Obj::User),
            ),
            "authorAssociation" => leaf(w.author_association(&key.0, c.author.as_deref())),
            "isMinimized" => leaf(false),
            "minimizedReason" => null(),
            "viewerDidAuthor" => leaf(c.author.as_deref() == Some(w.viewer.as_str())),
            "pullRequest" => self.obj(Obj::Pr(key.clone())),
            "repository" => self.obj(Obj::Repo(key.0.clone())),
            _ => self.not_implemented(info),
        }
    }
}

/// A submitted review's body changed after it was submitted.
fn review_edited(r: &super::super::world::Review) -> bool {
    r.submitted_at.is_some_and(|t| t != r.updated_at)
}

/// Whether something its author has not submitted (a pending review or its comments) shows:
/// only to that author, the viewer.
fn visible(w: &World, pending: bool, author: Option<&str>) -> bool {
    !pending || author == Some(w.viewer.as_str())
}

/// Whether check `name` is required on the PR named by `isRequired(pullRequestId | pullRequestNumber)`.
fn is_required(w: &World, info: &ResolveInfo<'_>, repo: &str, name: &str) -> bool {
    let pr = if let Some(id) = arg_str(info, "pullRequestId") {
        w.pr_of_node(id).map(|(_, n)| n)
    } else {
        arg_int(info, "pullRequestNumber").and_then(|n| u64::try_from(n).ok())
    };
    let r = w.get_repo(repo);
    pr.and_then(|n| r.prs.get(&n))
        .and_then(|p| r.protections.get(&p.base_ref))
        .is_some_and(|p| p.required_checks.iter().any(|c| c == name))
}

/// Indices of the newest status per context, in first-seen order.
fn latest_statuses(w: &World, repo: &str, sha: &str) -> Vec<usize> {
    let statuses = &w.commit(repo, sha).statuses;
    let mut out: Vec<usize> = Vec::new();
    for (i, s) in statuses.iter().enumerate() {
        match out.iter_mut().find(|j| statuses[**j].context == s.context) {
            Some(j) => *j = i,
            None => out.push(i),
        }
    }
    out
}

/// GitHub's combined state: any error → ERROR, any failure → FAILURE, any pending → PENDING.
fn combined(states: &[StatusState]) -> StatusState {
    if states.contains(&StatusState::Error) {
        StatusState::Error
    } else if states.contains(&StatusState::Failure) {
        StatusState::Failure
    } else if states
        .iter()
        .any(|s| matches!(s, StatusState::Pending | StatusState::Expected))
    {
        StatusState::Pending
    } else {
        StatusState::Success
    }
}

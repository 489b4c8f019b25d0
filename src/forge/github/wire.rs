//! GitHub's GraphQL answers as serde types, and their conversion into domain types. Wire
//! types never leave this module: the rest of pr-monitor sees only `model`.

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::forge::wire_time;
use crate::model::{
    Check, CheckKind, CheckState, Comment, Edit, HeadCommit, MergeMethod, MergeState, Mergeable,
    PrRef, PrState, RepoSettings, Review, ReviewState, ReviewThread, Sha, Snapshot,
};

/// A GraphQL connection page. Nodes may be null when the token cannot see one, and the list
/// itself may be null (`[T]` in the schema): then there are none.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", bound(deserialize = "T: Deserialize<'de>"))]
pub(super) struct Conn<T> {
    #[serde(default)]
    pub page_info: Option<PageInfo>,
    #[serde(default = "Vec::new", deserialize_with = "nullable_list")]
    pub nodes: Vec<Option<T>>,
}

/// A list the schema lets be null, null read as empty.
fn nullable_list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

impl<T> Conn<T> {
    /// A connection without nodes (what a null connection reads as).
    pub(super) fn empty() -> Self {
        Conn {
            page_info: None,
            nodes: Vec::new(),
        }
    }

    /// The cursor of the next page, when there is one.
    pub(super) fn next_cursor(&self) -> Option<String> {
        self.page_info
            .as_ref()
            .filter(|p| p.has_next_page)
            .and_then(|p| p.end_cursor.clone())
    }
    pub(super) fn into_nodes(self) -> Vec<T> {
        self.nodes.into_iter().flatten().collect()
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PageInfo {
    pub has_next_page: bool,
    pub end_cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Name {
    pub name: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct Login {
    pub login: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct UserRef {
    pub user: Option<Login>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RepoName {
    pub name_with_owner: String,
}

/// `repository { ...Repo pullRequest { ...Pr } baseRef: ref { compare } }`
#[expect(
    clippy::struct_excessive_bools,
    reason = "the forge's own settings, as GitHub sends them"
)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RepoNode {
    pub default_branch_ref: Option<Name>,
    #[serde(default)]
    pub auto_merge_allowed: bool,
    #[serde(default)]
    pub squash_merge_allowed: bool,
    #[serde(default)]
    pub merge_commit_allowed: bool,
    #[serde(default)]
    pub rebase_merge_allowed: bool,
    pub pull_request: Option<PrNode>,
    pub base_ref: Option<RefNode>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RefNode {
    pub compare: Option<Comparison>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Comparison {
    pub behind_by: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PrNode {
    pub id: String,
    pub url: String,
    pub title: String,
    pub state: String,
    #[serde(default)]
    pub is_draft: bool,
    pub author: Option<Login>,
    /// `CommentAuthorAssociation`: the author's standing in the repository.
    #[serde(default)]
    pub author_association: Option<String>,
    pub head_ref_name: String,
    pub head_ref_oid: String,
    pub base_ref_name: String,
    #[serde(default)]
    pub is_cross_repository: bool,
    /// Null when the fork is gone.
    #[serde(default)]
    pub head_repository: Option<RepoName>,
    pub mergeable: String,
    pub merge_state_status: String,
    pub auto_merge_request: Option<serde_json::Value>,
    /// Absent on servers without merge queues (the fields are not asked for there).
    #[serde(default)]
    pub is_merge_queue_enabled: bool,
    #[serde(default)]
    pub merge_queue_entry: Option<QueueEntryNode>,
    /// The last merge-queue removals and auto-merge disablings (asked only where the server
    /// has merge queues).
    #[serde(default)]
    pub timeline_items: Option<Conn<TimelineNode>>,
    pub labels: Option<Conn<Name>>,
    pub commits: Conn<CommitWrap>,
    pub review_threads: Conn<ThreadNode>,
    /// Null where the schema allows it (`PullRequestReviewConnection`): no reviews then.
    #[serde(default)]
    pub reviews: Option<Conn<ReviewNode>>,
    pub comments: Conn<CommentNode>,
    /// Asked only for a job that judges required checks alone.
    #[serde(default)]
    pub required_checks: Option<Conn<RequiredWrap>>,
}

/// `requiredChecks`: the head's check contexts, each with whether the base requires it.
#[derive(Debug, Deserialize)]
pub(super) struct RequiredWrap {
    pub commit: RequiredCommit,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RequiredCommit {
    pub oid: String,
    pub status_check_rollup: Option<RequiredRollup>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RequiredRollup {
    pub contexts: Conn<RequiredContext>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RequiredContext {
    pub name: Option<String>,
    pub context: Option<String>,
    #[serde(default)]
    pub is_required: bool,
}

/// The names of the checks the base requires of the PR whose head is `head`; `None` when the
/// answer cannot tell them all (it is about another commit, or more contexts than one page).
pub(super) fn required_names(conn: Conn<RequiredWrap>, head: &str) -> Option<Vec<String>> {
    let commit = conn.into_nodes().into_iter().next()?.commit;
    if commit.oid != head {
        return None;
    }
    let Some(rollup) = commit.status_check_rollup else {
        return Some(Vec::new());
    };
    if rollup
        .contexts
        .page_info
        .as_ref()
        .is_some_and(|p| p.has_next_page)
    {
        return None;
    }
    Some(
        rollup
            .contexts
            .into_nodes()
            .into_iter()
            .filter(|c| c.is_required)
            .filter_map(|c| c.name.or(c.context))
            .collect(),
    )
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct QueueEntryNode {
    pub position: u32,
    pub state: String,
    pub estimated_time_to_merge: Option<u64>,
    pub enqueued_at: Option<String>,
    pub head_commit: Option<Oid>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Oid {
    pub oid: String,
}

/// An entry of `Repository.mergeQueue.entries`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct QueueLineNode {
    pub position: u32,
    /// Null when the token cannot see that PR: its place still counts.
    #[serde(default)]
    pub pull_request: Option<NumberNode>,
}

#[derive(Debug, Deserialize)]
pub(super) struct NumberNode {
    pub number: u64,
}

/// A `RemovedFromMergeQueueEvent` or `AutoMergeDisabledEvent` of the PR's timeline.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TimelineNode {
    #[serde(rename = "__typename", default)]
    pub typename: String,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub before_commit: Option<Oid>,
}

/// The PR's merge-queue removals, oldest first; a removal that gives no reason takes the one
/// of the auto-merge disabling that follows it.
pub(super) fn queue_removals(node: &PrNode) -> Vec<crate::model::QueueRemoval> {
    let mut out: Vec<crate::model::QueueRemoval> = Vec::new();
    let reason = |n: &TimelineNode| n.reason.clone().filter(|r| !r.trim().is_empty());
    for n in node
        .timeline_items
        .iter()
        .flat_map(|c| c.nodes.iter().flatten())
    {
        match n.typename.as_str() {
            "RemovedFromMergeQueueEvent" => out.push(crate::model::QueueRemoval {
                at: wire_time(n.created_at.as_deref()),
                reason: reason(n),
                head: n.before_commit.as_ref().map(|c| Sha(c.oid.clone())),
            }),
            "AutoMergeDisabledEvent" => {
                if let Some(last) = out.last_mut().filter(|l| l.reason.is_none()) {
                    last.reason = reason(n);
                }
            }
            _ => {}
        }
    }
    out
}

/// The PR's merge-queue entry, when it has one in a state this client knows.
pub(super) fn queue_entry(node: &PrNode) -> Option<crate::model::QueueEntry> {
    let e = node.merge_queue_entry.as_ref()?;
    Some(crate::model::QueueEntry {
        position: e.position,
        state: crate::model::QueueState::parse(&e.state)?,
        estimated_seconds: e.estimated_time_to_merge,
        enqueued_at: wire_time(e.enqueued_at.as_deref()),
        group_sha: e.head_commit.as_ref().map(|c| Sha(c.oid.clone())),
        ahead: Vec::new(),
    })
}

#[derive(Debug, Deserialize)]
pub(super) struct CommitWrap {
    pub commit: CommitNode,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CommitNode {
    pub id: String,
    pub oid: String,
    pub committed_date: Option<String>,
    pub author: Option<UserRef>,
    pub committer: Option<UserRef>,
    #[serde(default)]
    pub parents: Option<Conn<OidNode>>,
    pub check_suites: Option<Conn<SuiteNode>>,
    pub status: Option<StatusNode>,
}

#[derive(Debug, Deserialize)]
pub(super) struct OidNode {
    pub oid: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct StatusNode {
    #[serde(default)]
    pub contexts: Vec<StatusContext>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct StatusContext {
    pub context: String,
    pub state: String,
    pub target_url: Option<String>,
    pub description: Option<String>,
    pub created_at: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SuiteNode {
    pub id: String,
    pub workflow_run: Option<WorkflowRun>,
    pub check_runs: Option<Conn<RunNode>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WorkflowRun {
    pub database_id: Option<u64>,
    pub event: Option<String>,
    pub workflow: Option<Name>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RunNode {
    #[serde(default)]
    pub id: Option<String>,
    pub database_id: Option<u64>,
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub details_url: Option<String>,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ThreadNode {
    pub id: String,
    pub is_resolved: bool,
    #[serde(default)]
    pub is_outdated: bool,
    pub path: Option<String>,
    pub line: Option<u64>,
    pub comments: Conn<CommentNode>,
}

/// An issue comment or a review-thread comment: the same fields.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CommentNode {
    pub id: String,
    /// A server without `fullDatabaseId` (see [`CommentNode::number`]).
    #[serde(default)]
    pub database_id: Option<u64>,
    /// GraphQL's `BigInt`, a decimal string.
    #[serde(default)]
    pub full_database_id: Option<String>,
    pub author: Option<Login>,
    #[serde(default)]
    pub body: String,
    pub url: Option<String>,
    pub updated_at: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub last_edited_at: Option<String>,
    #[serde(default)]
    pub editor: Option<Login>,
    /// A review-thread comment's `PENDING` or `SUBMITTED` (issue comments have none).
    #[serde(default)]
    pub state: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ReviewNode {
    pub id: String,
    /// A server without `fullDatabaseId` (see [`ReviewNode::number`]).
    #[serde(default)]
    pub database_id: Option<u64>,
    /// GraphQL's `BigInt`, a decimal string.
    #[serde(default)]
    pub full_database_id: Option<String>,
    pub author: Option<Login>,
    pub state: String,
    #[serde(default)]
    pub body: String,
    pub url: Option<String>,
    pub submitted_at: Option<String>,
    pub updated_at: Option<String>,
    #[serde(default)]
    pub last_edited_at: Option<String>,
    #[serde(default)]
    pub editor: Option<Login>,
}

/// The number a comment or review goes by in REST and on its page: `fullDatabaseId` (a
/// decimal string), or the deprecated `databaseId` where the server has no other.
fn database_number(full: Option<&str>, old: Option<u64>) -> Option<u64> {
    full.and_then(|n| n.trim().parse().ok()).or(old)
}

impl CommentNode {
    /// Its number: see [`database_number`].
    pub(super) fn number(&self) -> Option<u64> {
        database_number(self.full_database_id.as_deref(), self.database_id)
    }
}

impl ReviewNode {
    /// Its number: see [`database_number`].
    pub(super) fn number(&self) -> Option<u64> {
        database_number(self.full_database_id.as_deref(), self.database_id)
    }
}

/// One node of a pull request `search`.
#[derive(Debug, Deserialize)]
pub(super) struct SearchedPr {
    /// Absent on a search hit that is not a pull request.
    pub number: Option<u64>,
    pub repository: Option<NameWithOwner>,
}

/// A repository's `nameWithOwner`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct NameWithOwner {
    pub name_with_owner: String,
}

/// One node of `pullRequests(states: [OPEN])`.
#[derive(Debug, Deserialize)]
pub(super) struct OpenPrNode {
    pub number: u64,
    pub author: Option<Login>,
    pub labels: Option<Conn<Name>>,
}

/// One context of a `statusCheckRollup`: a check run or a commit status (`__typename` tells,
/// and the fields do too: a status has `state`, a check run `status`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RollupContext {
    pub name: Option<String>,
    pub context: Option<String>,
    pub status: Option<String>,
    pub conclusion: Option<String>,
    pub state: Option<String>,
    pub details_url: Option<String>,
    pub target_url: Option<String>,
    pub description: Option<String>,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub created_at: Option<String>,
    pub check_suite: Option<RollupSuite>,
    /// A check run's job id, where the query asks for it (a branch's checks).
    #[serde(default)]
    pub database_id: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RollupSuite {
    pub workflow_run: Option<WorkflowRun>,
}

/// A rollup context as a check.
pub(super) fn rollup_check(c: RollupContext) -> Check {
    if let Some(state) = c.state {
        status_check(StatusContext {
            context: c.context.or(c.name).unwrap_or_default(),
            state,
            target_url: c.target_url,
            description: c.description,
            created_at: c.created_at,
        })
    } else {
        {
            let suite = c.check_suite.and_then(|s| s.workflow_run);
            let conclusion = c.conclusion.filter(|s| !s.is_empty());
            run_check(
                RunNode {
                    id: None,
                    database_id: c.database_id,
                    name: c.name.unwrap_or_default(),
                    status: c.status.unwrap_or_default(),
                    conclusion,
                    details_url: c.details_url,
                    started_at: c.started_at,
                    completed_at: c.completed_at,
                    title: None,
                    summary: c.description,
                },
                suite.as_ref(),
            )
        }
    }
}

/// `node(id:) { ... on T { field { pageInfo nodes } } }`: the page, whatever the field.
#[derive(Debug, Deserialize)]
pub(super) struct PageAnswer<T> {
    pub node: Option<std::collections::BTreeMap<String, Conn<T>>>,
}

fn login(l: Option<Login>) -> Option<String> {
    l.map(|l| l.login)
}

/// Buckets a check run's status and conclusion (the way `gh pr checks` does).
pub(super) fn run_state(status: &str, conclusion: Option<&str>) -> CheckState {
    if status != "COMPLETED" {
        return CheckState::Pending;
    }
    match conclusion.unwrap_or("") {
        "SUCCESS" => CheckState::Passed,
        "NEUTRAL" | "SKIPPED" => CheckState::Skipped,
        "STALE" | "" => CheckState::Pending,
        _ => CheckState::Failed,
    }
}

/// Buckets a commit status's state.
pub(super) fn status_state(state: &str) -> CheckState {
    match state {
        "SUCCESS" => CheckState::Passed,
        "FAILURE" | "ERROR" => CheckState::Failed,
        _ => CheckState::Pending,
    }
}

pub(super) fn run_check(run: RunNode, suite: Option<&WorkflowRun>) -> Check {
    let output = [run.title.as_deref(), run.summary.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n");
    Check {
        state: run_state(&run.status, run.conclusion.as_deref()),
        conclusion: run.conclusion.map(|c| c.to_ascii_lowercase()),
        name: run.name,
        kind: CheckKind::CheckRun,
        url: run.details_url,
        job_id: run.database_id,
        run_id: suite.and_then(|s| s.database_id),
        workflow: suite.and_then(|s| s.workflow.as_ref().map(|w| w.name.clone())),
        event: suite.and_then(|s| s.event.clone()),
        started_at: wire_time(run.started_at.as_deref()),
        completed_at: wire_time(run.completed_at.as_deref()),
        output,
        node_id: run.id,
        failure_reason: None,
        optional: false,
    }
}

pub(super) fn status_check(ctx: StatusContext) -> Check {
    Check {
        state: status_state(&ctx.state),
        conclusion: Some(ctx.state.to_ascii_lowercase()),
        name: ctx.context,
        kind: CheckKind::Status,
        url: ctx.target_url,
        job_id: None,
        run_id: None,
        workflow: None,
        event: None,
        started_at: wire_time(ctx.created_at.as_deref()),
        completed_at: None,
        output: ctx.description.unwrap_or_default(),
        node_id: None,
        failure_reason: None,
        optional: false,
    }
}

/// The last edit GitHub reports (`lastEditedAt`, `editor`), if the text was edited.
fn edit(last_edited_at: Option<&str>, editor: Option<Login>) -> Option<Edit> {
    let at = wire_time(last_edited_at);
    at.map(|at| Edit {
        at: Some(at),
        by: login(editor),
    })
}

pub(super) fn comment(c: CommentNode) -> Comment {
    Comment {
        database_id: c.number(),
        updated_at: wire_time(c.updated_at.as_deref()),
        created_at: wire_time(c.created_at.as_deref()),
        edit: edit(c.last_edited_at.as_deref(), c.editor),
        pending: c.state.as_deref() == Some("PENDING"),
        id: c.id,
        author: login(c.author),
        body: c.body,
        url: c.url,
    }
}

pub(super) fn review(r: ReviewNode) -> Option<Review> {
    Some(Review {
        database_id: r.number(),
        state: ReviewState::parse(&r.state)?,
        submitted_at: wire_time(r.submitted_at.as_deref()),
        updated_at: wire_time(r.updated_at.as_deref()),
        edit: edit(r.last_edited_at.as_deref(), r.editor),
        id: r.id,
        author: login(r.author),
        body: r.body,
        url: r.url,
    })
}

pub(super) fn thread(t: ThreadNode, comments: Vec<CommentNode>) -> ReviewThread {
    ReviewThread {
        id: t.id,
        resolved: t.is_resolved,
        outdated: t.is_outdated,
        path: t.path,
        line: t.line,
        comments: comments.into_iter().map(comment).collect(),
    }
}

/// The parts of a PR answer that need no further pages, as a snapshot with empty lists; the
/// client fills checks, threads, reviews and comments after paging them in full.
pub(super) fn snapshot_head(
    pr: &PrRef,
    repo: &RepoNode,
    node: &PrNode,
    commit: Option<&CommitNode>,
) -> Snapshot {
    let state = match node.state.as_str() {
        "MERGED" => PrState::Merged,
        "CLOSED" => PrState::Closed,
        _ => PrState::Open,
    };
    let allowed = [
        (repo.squash_merge_allowed, MergeMethod::Squash),
        (repo.merge_commit_allowed, MergeMethod::Merge),
        (repo.rebase_merge_allowed, MergeMethod::Rebase),
    ];
    Snapshot {
        pr: pr.clone(),
        node_id: node.id.clone(),
        url: node.url.clone(),
        title: node.title.clone(),
        state,
        draft: node.is_draft,
        author: node.author.as_ref().map(|a| a.login.clone()),
        author_can_write: matches!(
            node.author_association.as_deref(),
            Some("OWNER" | "MEMBER" | "COLLABORATOR")
        ),
        head_ref: node.head_ref_name.clone(),
        cross_repository: node.is_cross_repository,
        head_repo: node
            .head_repository
            .as_ref()
            .map(|r| r.name_with_owner.clone()),
        head: HeadCommit {
            sha: Sha(node.head_ref_oid.clone()),
            author_login: commit
                .and_then(|c| c.author.as_ref()?.user.as_ref().map(|u| u.login.clone())),
            committer_login: commit
                .and_then(|c| c.committer.as_ref()?.user.as_ref().map(|u| u.login.clone())),
            author_email: commit.and_then(|c| c.author.as_ref()?.email.clone()),
            committer_email: commit.and_then(|c| c.committer.as_ref()?.email.clone()),
            committer_name: commit.and_then(|c| c.committer.as_ref()?.name.clone()),
            committed_at: commit.and_then(|c| wire_time(c.committed_date.as_deref())),
            parents: commit
                .and_then(|c| c.parents.as_ref())
                .map(|p| {
                    p.nodes
                        .iter()
                        .flatten()
                        .map(|n| Sha(n.oid.clone()))
                        .collect()
                })
                .unwrap_or_default(),
        },
        base_ref: node.base_ref_name.clone(),
        labels: node
            .labels
            .as_ref()
            .map(|l| l.nodes.iter().flatten().map(|n| n.name.clone()).collect())
            .unwrap_or_default(),
        mergeable: match node.mergeable.as_str() {
            "MERGEABLE" => Mergeable::Mergeable,
            "CONFLICTING" => Mergeable::Conflicting,
            _ => Mergeable::Unknown,
        },
        merge_state: MergeState::parse(&node.merge_state_status),
        behind_by: repo
            .base_ref
            .as_ref()
            .and_then(|r| r.compare.as_ref())
            .map(|c| c.behind_by),
        checks: Vec::new(),
        checks_source: crate::model::ChecksSource::CommitPinned,
        threads: Vec::new(),
        reviews: Vec::new(),
        comments: Vec::new(),
        failed_logs: Vec::new(),
        auto_merge_enabled: node
            .auto_merge_request
            .as_ref()
            .is_some_and(|v| !v.is_null()),
        repo: RepoSettings {
            default_branch: repo
                .default_branch_ref
                .as_ref()
                .map(|r| r.name.clone())
                .unwrap_or_default(),
            auto_merge_allowed: repo.auto_merge_allowed,
            allowed_methods: allowed
                .into_iter()
                .filter(|(on, _)| *on)
                .map(|(_, m)| m)
                .collect(),
        },
        merge_queue: node.is_merge_queue_enabled,
        queue_entry: queue_entry(node),
        queue_failures: Vec::new(),
        queue_unfinished: Vec::new(),
        queue_unread: None,
        queue_removals: queue_removals(node),
        update_in_progress: false,
        update_error: None,
    }
}

/// Parses a JSON value into a wire type, naming what failed.
pub(super) fn parse<T: DeserializeOwned>(
    value: serde_json::Value,
    what: &str,
) -> Result<T, crate::forge::ForgeError> {
    serde_json::from_value(value)
        .map_err(|e| crate::forge::ForgeError::Unexpected(format!("{what}: {e}")))
}

#[cfg(test)]
mod tests;

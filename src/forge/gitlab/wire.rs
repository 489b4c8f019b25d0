//! GitLab's REST v4 answers as serde types, and their conversion into domain types. Wire types
//! never leave this module: the rest of pr-monitor sees only `model`.

use serde::Deserialize;

use crate::forge::ForgeError;
use crate::forge::wire_time;
use crate::model::{
    Check, CheckKind, CheckState, Comment, Edit, HeadCommit, MergeMethod, MergeState, Mergeable,
    PrRef, PrState, QueueEntry, QueueState, RepoSettings, Review, ReviewState, ReviewThread, Sha,
    Snapshot,
};

#[derive(Debug, Deserialize)]
pub(super) struct User {
    #[serde(default)]
    pub id: Option<u64>,
    pub username: String,
    /// The display name GitLab writes into the commits it makes for the user.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub email: Option<String>,
    /// The email GitLab commits as for the user (a rebase in the web or the API).
    #[serde(default)]
    pub commit_email: Option<String>,
}

/// An MR's `references`.
#[derive(Debug, Deserialize)]
pub(super) struct References {
    pub full: String,
}

/// `GET /projects/:id/merge_requests/:iid` (and the items of the MR list).
#[derive(Debug, Deserialize)]
pub(super) struct MergeRequest {
    pub id: u64,
    pub iid: u64,
    #[serde(default)]
    pub title: String,
    pub state: String,
    #[serde(default)]
    pub draft: Option<bool>,
    /// The pre-14.0 name of `draft`.
    #[serde(default)]
    pub work_in_progress: Option<bool>,
    #[serde(default)]
    pub web_url: String,
    /// `full` is `group/project!iid`: the only place a cross-project listing names the project.
    #[serde(default)]
    pub references: Option<References>,
    #[serde(default)]
    pub sha: Option<String>,
    #[serde(default)]
    pub source_branch: String,
    #[serde(default)]
    pub target_branch: String,
    #[serde(default)]
    pub source_project_id: Option<u64>,
    #[serde(default)]
    pub target_project_id: Option<u64>,
    #[serde(default)]
    pub author: Option<User>,
    #[serde(default)]
    pub detailed_merge_status: Option<String>,
    /// Deprecated since 15.6; read only when `detailed_merge_status` is missing.
    #[serde(default)]
    pub merge_status: Option<String>,
    #[serde(default)]
    pub has_conflicts: bool,
    #[serde(default)]
    pub diverged_commits_count: Option<u64>,
    #[serde(default)]
    pub merge_when_pipeline_succeeds: Option<bool>,
    #[serde(default)]
    pub auto_merge: Option<bool>,
    #[serde(default)]
    pub head_pipeline: Option<Pipeline>,
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    #[serde(default)]
    pub user_notes_count: Option<u64>,
    /// Present when asked with `include_rebase_in_progress=true`: a rebase is under way.
    #[serde(default)]
    pub rebase_in_progress: Option<bool>,
    /// Why GitLab's last merge or rebase of the MR failed (`Rebase failed. Please rebase
    /// locally`).
    #[serde(default)]
    pub merge_error: Option<String>,
}

/// `GET /projects/:id/repository/branches/:branch`.
#[derive(Debug, Deserialize)]
pub(super) struct Branch {
    pub commit: BranchCommit,
}

#[derive(Debug, Deserialize)]
pub(super) struct BranchCommit {
    pub id: String,
}

impl MergeRequest {
    /// The head commit, when the MR has one (an MR whose source branch is gone may not).
    pub(super) fn head_sha(&self) -> Option<&str> {
        self.sha.as_deref().filter(|s| !s.is_empty())
    }

    /// The head pipeline, only when it ran on the current head: an older head's pipeline says
    /// nothing about this one (and arming a merge against it merges at once).
    pub(super) fn current_pipeline(&self) -> Option<&Pipeline> {
        let sha = self.head_sha()?;
        self.head_pipeline.as_ref().filter(|p| p.sha == sha)
    }

    /// The head pipeline when it is one of this MR's merged-results or merge-train pipelines
    /// (`refs/merge-requests/IID/merge` or `…/train`): it ran on a merge commit of the target
    /// branch and a head, never the head itself, so which head it was is told by that merge
    /// commit's parents.
    pub(super) fn merged_results_pipeline(&self) -> Option<&Pipeline> {
        let prefix = format!("refs/merge-requests/{}/", self.iid);
        self.head_pipeline.as_ref().filter(|p| {
            p.sha != self.head_sha().unwrap_or_default()
                && p.git_ref
                    .as_deref()
                    .and_then(|r| r.strip_prefix(&prefix))
                    .is_some_and(|kind| matches!(kind, "merge" | "train"))
        })
    }

    pub(super) fn is_open(&self) -> bool {
        pr_state(&self.state) == PrState::Open
    }
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct Pipeline {
    pub id: u64,
    #[serde(default)]
    pub sha: String,
    /// The ref it ran for: a branch, or `refs/merge-requests/IID/head|merge|train`.
    #[serde(default, rename = "ref")]
    pub git_ref: Option<String>,
    /// `created`, `pending`, `running`, `success`, `failed`, `canceled`, ….
    #[serde(default)]
    pub status: Option<String>,
}

/// A car of a merge train: an item of `GET /projects/:id/merge_trains/:target_branch`, or
/// `GET /projects/:id/merge_trains/merge_requests/:iid`.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct TrainCar {
    pub merge_request: CarMergeRequest,
    /// `idle`, `stale`, `fresh`, `merging`, `merged`, `skip_merged`.
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub pipeline: Option<Pipeline>,
    #[serde(default)]
    pub created_at: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct CarMergeRequest {
    pub iid: u64,
}

/// `GET /projects/:id`: the settings a merge depends on.
#[derive(Debug, Deserialize)]
pub(super) struct Project {
    /// `group/project`: what a fork's numeric id names.
    #[serde(default)]
    pub path_with_namespace: Option<String>,
    #[serde(default)]
    pub default_branch: Option<String>,
    #[serde(default)]
    pub squash_option: Option<String>,
    /// Absent on GitLab Free and before merge trains existed.
    #[serde(default)]
    pub merge_trains_enabled: Option<bool>,
}

/// `GET /projects/:id/repository/compare`: the changed files (`diffs`), the commits (oldest
/// first), and whether the comparison ran out of time (its lists then incomplete).
#[derive(Debug, Deserialize)]
pub(super) struct Comparison {
    #[serde(default)]
    pub diffs: Vec<ComparedFile>,
    #[serde(default)]
    pub commits: Vec<ListedCommit>,
    #[serde(default)]
    pub compare_timeout: bool,
}

#[derive(Debug, Deserialize)]
pub(super) struct ComparedFile {
    pub old_path: String,
    pub new_path: String,
}

/// One of `GET /projects/:id/events?action=pushed`.
#[derive(Debug, Deserialize)]
pub(super) struct PushEvent {
    #[serde(default)]
    pub author_username: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub push_data: Option<PushData>,
}

#[derive(Debug, Deserialize)]
pub(super) struct PushData {
    #[serde(default)]
    pub commit_from: Option<String>,
    #[serde(default)]
    pub commit_to: Option<String>,
    #[serde(default)]
    pub r#ref: Option<String>,
    #[serde(default)]
    pub ref_type: Option<String>,
}

/// `GET /projects/:id/repository/commits/:sha`.
#[derive(Debug, Deserialize)]
pub(super) struct Commit {
    #[serde(default)]
    pub author_email: Option<String>,
    #[serde(default)]
    pub committer_name: Option<String>,
    #[serde(default)]
    pub committer_email: Option<String>,
    #[serde(default)]
    pub committed_date: Option<String>,
    #[serde(default)]
    pub parent_ids: Vec<String>,
}

/// An item of `GET /projects/:id/merge_requests/:iid/commits` (or a compare's `commits`).
#[derive(Debug, Deserialize)]
pub(super) struct ListedCommit {
    pub id: String,
    #[serde(default)]
    pub committer_email: Option<String>,
}

/// `GET /projects/:id/repository/commits/:sha/signature` (404 when the commit is unsigned):
/// GPG, SSH and X.509 signatures all carry `verification_status`.
#[derive(Debug, Deserialize)]
pub(super) struct CommitSignature {
    #[serde(default)]
    pub verification_status: Option<String>,
}

/// An item of `GET /projects/:id/pipelines/:pid/jobs`.
#[derive(Debug, Deserialize)]
pub(super) struct Job {
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub stage: Option<String>,
    pub status: String,
    #[serde(default)]
    pub allow_failure: bool,
    #[serde(default)]
    pub failure_reason: Option<String>,
    #[serde(default)]
    pub web_url: Option<String>,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub finished_at: Option<String>,
}

/// An item of `GET /projects/:id/repository/commits/:sha/statuses`. CI jobs are commit
/// statuses too, so the list repeats them; the client keeps only the others.
#[derive(Debug, Deserialize)]
pub(super) struct CommitStatus {
    pub id: u64,
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub allow_failure: bool,
    #[serde(default)]
    pub target_url: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub finished_at: Option<String>,
}

/// An item of `GET .../merge_requests/:iid/discussions`.
#[derive(Debug, Deserialize)]
pub(super) struct Discussion {
    pub id: String,
    #[serde(default)]
    pub notes: Vec<Note>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Note {
    pub id: u64,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub author: Option<User>,
    #[serde(default)]
    pub system: bool,
    #[serde(default)]
    pub resolvable: bool,
    #[serde(default)]
    pub resolved: Option<bool>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    #[serde(default)]
    pub position: Option<Position>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Position {
    #[serde(default)]
    pub new_path: Option<String>,
    #[serde(default)]
    pub old_path: Option<String>,
    #[serde(default)]
    pub new_line: Option<u64>,
    #[serde(default)]
    pub old_line: Option<u64>,
}

/// `GET /projects/:id/members/all/:user_id`: a member's role, inherited ones included.
#[derive(Debug, Deserialize)]
pub(super) struct Member {
    pub access_level: u32,
}

/// GitLab's Developer role: the least that may push to the project.
pub(super) const DEVELOPER_ACCESS: u32 = 30;

/// `GET .../merge_requests/:iid/approvals`.
#[derive(Debug, Deserialize)]
pub(super) struct Approvals {
    #[serde(default)]
    pub approved_by: Vec<Approver>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Approver {
    pub user: User,
}

/// `opened` and `locked` (a transient state while merging) are open.
pub(super) fn pr_state(state: &str) -> PrState {
    match state {
        "merged" => PrState::Merged,
        "closed" => PrState::Closed,
        _ => PrState::Open,
    }
}

/// Maps `detailed_merge_status` (or, before GitLab 15.6, `merge_status`) and `has_conflicts`
/// onto GitHub's pair. Values GitLab may add later read as blocked: never merged blind.
pub(super) fn merge_status(
    detailed: Option<&str>,
    legacy: Option<&str>,
    has_conflicts: bool,
) -> (Mergeable, MergeState) {
    // Before 15.6 only `merge_status` exists: read it as the detailed value it stands for.
    let detailed = detailed.or(match legacy {
        Some("can_be_merged") => Some("mergeable"),
        Some("cannot_be_merged") => Some("conflict"),
        _ => None,
    });
    let (mergeable, state) = match detailed {
        Some("conflict") => (Mergeable::Conflicting, MergeState::Dirty),
        Some("checking" | "unchecked" | "preparing" | "approvals_syncing") | None => {
            (Mergeable::Unknown, MergeState::Unknown)
        }
        Some("mergeable") => (Mergeable::Mergeable, MergeState::Clean),
        Some("need_rebase") => (Mergeable::Mergeable, MergeState::Behind),
        Some("draft_status") => (Mergeable::Mergeable, MergeState::Draft),
        Some("not_open") => (Mergeable::Unknown, MergeState::Other("NOT_OPEN".into())),
        Some(_) => (Mergeable::Mergeable, MergeState::Blocked),
    };
    if has_conflicts && mergeable != Mergeable::Conflicting {
        let state = if state == MergeState::Draft {
            state
        } else {
            MergeState::Dirty
        };
        return (Mergeable::Conflicting, state);
    }
    (mergeable, state)
}

/// The project's settings: GitLab always offers "merge when pipeline succeeds"; squash is
/// allowed unless `squash_option` is `never`, and the only method when it is `always`;
/// `merge` stands for the project's own method (a merge commit, semi-linear or
/// fast-forward). GitLab has no per-MR rebase merge, so `rebase` is never offered.
pub(super) fn repo_settings(p: &Project) -> RepoSettings {
    let squash = p.squash_option.as_deref();
    let mut allowed = Vec::new();
    if squash != Some("never") {
        allowed.push(MergeMethod::Squash);
    }
    if squash != Some("always") {
        allowed.push(MergeMethod::Merge);
    }
    RepoSettings {
        default_branch: p.default_branch.clone().unwrap_or_default(),
        auto_merge_allowed: true,
        allowed_methods: allowed,
    }
}

/// A train car as the queue model's entry at `position` (0 when GitLab did not say): waiting
/// (`idle`, `stale`), checking, passed or failed by its train pipeline (`fresh`), being merged
/// (`merging`). A merged car is no longer in line.
pub(super) fn train_entry(car: &TrainCar, position: u32) -> Option<QueueEntry> {
    let pipeline = car.pipeline.as_ref();
    let state = match car.status.as_str() {
        "merged" | "skip_merged" => return None,
        "merging" => QueueState::Locked,
        "idle" | "stale" => QueueState::Queued,
        _ => match pipeline.and_then(|p| p.status.as_deref()) {
            Some("success") => QueueState::Mergeable,
            Some("failed" | "canceled") => QueueState::Unmergeable,
            _ => QueueState::AwaitingChecks,
        },
    };
    Some(QueueEntry {
        position,
        state,
        estimated_seconds: None,
        enqueued_at: wire_time(car.created_at.as_deref()),
        group_sha: pipeline
            .filter(|p| !p.sha.is_empty())
            .map(|p| Sha(p.sha.clone())),
        ahead: Vec::new(),
    })
}

/// Buckets a job's or commit status's status.
pub(super) fn check_state(status: &str, allow_failure: bool) -> CheckState {
    match status {
        "success" => CheckState::Passed,
        "failed" if allow_failure => CheckState::Skipped,
        "failed" | "canceled" | "canceling" => CheckState::Failed,
        "skipped" | "manual" => CheckState::Skipped,
        _ => CheckState::Pending,
    }
}

/// `job` of pipeline `pipeline_id` as a check; a merged-results pipeline's jobs say so in
/// their event ([`MERGED_RESULT`]).
pub(super) fn job_check(job: Job, pipeline_id: u64, merged_result: bool) -> Check {
    Check {
        state: check_state(&job.status, job.allow_failure),
        conclusion: Some(job.status),
        name: job.name,
        kind: CheckKind::CheckRun,
        url: job.web_url,
        job_id: Some(job.id),
        run_id: Some(pipeline_id),
        workflow: job.stage,
        event: merged_result.then(|| crate::model::MERGED_RESULT.to_owned()),
        started_at: wire_time(job.started_at.as_deref()),
        completed_at: wire_time(job.finished_at.as_deref()),
        output: job.failure_reason.clone().unwrap_or_default(),
        node_id: None,
        failure_reason: job.failure_reason,
        optional: false,
    }
}

pub(super) fn status_check(s: CommitStatus) -> Check {
    Check {
        state: check_state(&s.status, s.allow_failure),
        conclusion: Some(s.status),
        name: s.name,
        kind: CheckKind::Status,
        url: s.target_url,
        job_id: None,
        run_id: None,
        workflow: None,
        event: None,
        started_at: wire_time(s.created_at.as_deref()),
        completed_at: wire_time(s.finished_at.as_deref()),
        output: s.description.unwrap_or_default(),
        node_id: None,
        failure_reason: None,
        optional: false,
    }
}

/// A note whose update time is past its creation was changed after it was written; GitLab
/// does not say by whom (a maintainer may edit anyone's note).
fn note_comment(n: &Note, mr_url: &str) -> Comment {
    let created_at = wire_time(n.created_at.as_deref());
    let updated_at = wire_time(n.updated_at.as_deref());
    let edited = matches!((created_at, updated_at), (Some(c), Some(u)) if u > c);
    Comment {
        created_at,
        edit: edited.then_some(Edit {
            at: updated_at,
            by: None,
        }),
        pending: false,
        id: n.id.to_string(),
        database_id: Some(n.id),
        author: n.author.as_ref().map(|a| a.username.clone()),
        body: n.body.clone(),
        url: (!mr_url.is_empty()).then(|| format!("{mr_url}#note_{}", n.id)),
        updated_at,
    }
}

/// Splits discussions into review threads (resolvable ones) and conversation comments (the
/// human notes of the others). System notes ("added 1 commit", "mentioned in …") are dropped.
pub(super) fn discussions(
    list: Vec<Discussion>,
    mr_url: &str,
) -> (Vec<ReviewThread>, Vec<Comment>) {
    let mut threads = Vec::new();
    let mut comments = Vec::new();
    for d in list {
        let human: Vec<&Note> = d.notes.iter().filter(|n| !n.system).collect();
        if d.notes.iter().any(|n| n.resolvable) {
            let position = d.notes.first().and_then(|n| n.position.as_ref());
            threads.push(ReviewThread {
                resolved: d
                    .notes
                    .iter()
                    .filter(|n| n.resolvable)
                    .all(|n| n.resolved == Some(true)),
                outdated: false,
                path: position.and_then(|p| p.new_path.clone().or_else(|| p.old_path.clone())),
                line: position.and_then(|p| p.new_line.or(p.old_line)),
                comments: human.iter().map(|n| note_comment(n, mr_url)).collect(),
                id: d.id,
            });
        } else {
            comments.extend(human.iter().map(|n| note_comment(n, mr_url)));
        }
    }
    (threads, comments)
}

/// An approval per approver; `requested_changes` as a change request by an unknown reviewer.
pub(super) fn reviews(approvals: Approvals, detailed_merge_status: Option<&str>) -> Vec<Review> {
    let review = |id: String, author: Option<String>, state: ReviewState| Review {
        id,
        database_id: None,
        author,
        state,
        body: String::new(),
        url: None,
        submitted_at: None,
        updated_at: None,
        edit: None,
    };
    let mut out: Vec<Review> = approvals
        .approved_by
        .into_iter()
        .map(|a| {
            review(
                format!("approval:{}", a.user.username),
                Some(a.user.username),
                ReviewState::Approved,
            )
        })
        .collect();
    if detailed_merge_status == Some("requested_changes") {
        out.push(review(
            "requested_changes".into(),
            None,
            ReviewState::ChangesRequested,
        ));
    }
    out
}

/// The parts of an MR answer that need no further requests, as a snapshot with empty lists.
pub(super) fn snapshot_head(
    pr: &PrRef,
    mr: &MergeRequest,
    repo: RepoSettings,
    commit: Option<&Commit>,
) -> Snapshot {
    let (mergeable, merge_state) = merge_status(
        mr.detailed_merge_status.as_deref(),
        mr.merge_status.as_deref(),
        mr.has_conflicts,
    );
    Snapshot {
        pr: pr.clone(),
        node_id: mr.id.to_string(),
        url: if mr.web_url.is_empty() {
            pr.url()
        } else {
            mr.web_url.clone()
        },
        title: mr.title.clone(),
        state: pr_state(&mr.state),
        draft: mr.draft.or(mr.work_in_progress).unwrap_or(false),
        author: mr.author.as_ref().map(|a| a.username.clone()),
        author_can_write: false,
        head_ref: mr.source_branch.clone(),
        cross_repository: matches!(
            (mr.source_project_id, mr.target_project_id),
            (Some(s), Some(t)) if s != t
        ),
        // The source project, by id (GitLab's `:id` takes the id or the path).
        head_repo: match (mr.source_project_id, mr.target_project_id) {
            (Some(s), Some(t)) if s != t => Some(s.to_string()),
            _ => Some(pr.repo.clone()),
        },
        head: HeadCommit {
            sha: Sha(mr.head_sha().unwrap_or_default().to_owned()),
            // GitLab's commits carry names and emails, never a username: who made a commit
            // is known by its email or its push (see `core::identity`), never by a name.
            author_login: None,
            committer_login: None,
            author_email: commit.and_then(|c| c.author_email.clone()),
            committer_email: commit.and_then(|c| c.committer_email.clone()),
            committer_name: commit.and_then(|c| c.committer_name.clone()),
            committed_at: commit.and_then(|c| wire_time(c.committed_date.as_deref())),
            parents: commit
                .map(|c| c.parent_ids.iter().cloned().map(Sha).collect())
                .unwrap_or_default(),
        },
        base_ref: mr.target_branch.clone(),
        labels: mr.labels.clone(),
        mergeable,
        merge_state,
        behind_by: mr.diverged_commits_count,
        checks: Vec::new(),
        checks_source: crate::model::ChecksSource::CommitPinned,
        threads: Vec::new(),
        reviews: Vec::new(),
        comments: Vec::new(),
        failed_logs: Vec::new(),
        auto_merge_enabled: mr.merge_when_pipeline_succeeds.unwrap_or(false)
            || mr.auto_merge.unwrap_or(false),
        repo,
        merge_queue: false,
        queue_entry: None,
        queue_failures: Vec::new(),
        queue_unfinished: Vec::new(),
        queue_unread: None,
        queue_removals: Vec::new(),
        update_in_progress: mr.rebase_in_progress.unwrap_or(false),
        update_error: mr
            .merge_error
            .clone()
            .filter(|e| !e.trim().is_empty() && mr.rebase_in_progress != Some(true)),
    }
}

/// Parses a JSON answer into a wire type, naming what failed.
pub(super) fn parse<T: serde::de::DeserializeOwned>(
    body: &str,
    what: &str,
) -> Result<T, ForgeError> {
    serde_json::from_str(body).map_err(|e| ForgeError::Unexpected(format!("{what}: {e}")))
}

#[cfg(test)]
mod tests;

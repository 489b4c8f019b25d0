//! The forge seam: what pr-monitor asks of GitHub or GitLab, in domain types.
//!
//! Reads come in batches (many PR references in, one snapshot or error per PR out), so a
//! client can answer a whole tick in few requests. Writes are narrow verbs. Errors are typed
//! because callers branch on them: a conflict becomes a `cnf` pill, a not-found ends a watch,
//! a transient failure leaves the PR's tick incomplete.

pub mod agent;
pub mod call;
pub mod deadline;
pub mod github;
pub mod gitlab;
pub mod http;
pub mod rate;
pub mod tail;
pub mod wait;
use crate::model::branch::BranchRef;
use crate::model::{
    Check, Instant, MergeMethod, PrRef, Sha, Snapshot, UpdateMethod, parse_instant,
};

/// An optional timestamp field of a forge's answer: absent, or one the forge garbled, is
/// unknown rather than an error.
pub(crate) fn wire_time(s: Option<&str>) -> Option<Instant> {
    s.and_then(|s| parse_instant(s).ok())
}

/// Why a forge request failed, in the shapes callers act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForgeError {
    /// The PR or repository does not exist, or the token cannot see it.
    #[error("not found: {0}")]
    NotFound(String),
    /// The token was refused (401) or lacks a permission (403 without a rate limit).
    #[error("not authorized: {0}")]
    Unauthorized(String),
    /// The forge's rate limit is spent; `retry_after_secs` says when it resets, when known.
    #[error("rate limited{}", .retry_after_secs.map(|s| format!(" for {s}s")).unwrap_or_default())]
    RateLimited { retry_after_secs: Option<u64> },
    /// The head is no longer the one the write was guarded by: re-read before acting.
    #[error("head moved: {0}")]
    HeadMoved(String),
    /// The branch conflicts with its base: the change cannot be applied.
    #[error("conflict: {0}")]
    MergeConflict(String),
    /// The forge understood and refused (405, 422, GraphQL UNPROCESSABLE): the message says why.
    #[error("refused: {0}")]
    Refused(String),
    /// Auto-merge could not be turned on, for a reason the caller acts on.
    #[error("refused: {0}")]
    AutoMergeRefused(Refusal),
    /// 5xx, a timeout or a refused connection that outlived the retries. The outcome of a
    /// write that failed this way is unknown: re-read before trying again.
    #[error("forge unavailable: {0}")]
    Transient(String),
    /// The forge could not be reached at all (connection refused, host not found) after the
    /// retries: nothing about any PR is known.
    #[error("forge unreachable: {0}")]
    Unreachable(String),
    /// An answer pr-monitor could not understand (malformed JSON, an unexpected status).
    #[error("unexpected answer: {0}")]
    Unexpected(String),
}

pub use crate::model::outcome::Refusal;

impl ForgeError {
    /// Whether the PR itself is gone for this token (deleted, or access lost).
    pub fn is_gone(&self) -> bool {
        matches!(self, ForgeError::NotFound(_))
    }

    /// Whether the forge refused the token or could not be reached: nothing of the PR is known.
    pub fn cuts_off(&self) -> bool {
        matches!(
            self,
            ForgeError::Unauthorized(_) | ForgeError::Unreachable(_)
        )
    }
}

/// What a batched read needs to know about one PR beyond its reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotRequest {
    pub pr: PrRef,
    /// The base and head branch names seen last tick, if any: lets the client compare the
    /// branches in the same request instead of a second one.
    pub branches: Option<(String, String)>,
    /// Also read which of the head's checks the base requires (`policy.checks: required`):
    /// checks it does not are marked [`crate::model::Check::optional`].
    pub required_checks: bool,
}

/// What a cheap summary read needs to know about one PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRequest {
    pub read: SnapshotRequest,
    /// The ids of the stored snapshot's unresolved threads: the summary asks each whether it
    /// is still unresolved, since a thread resolved without a word changes nothing else a
    /// summary shows (a new thread or comment moves the PR's update time).
    pub threads: Vec<String>,
    /// How far behind its base the stored snapshot says the PR is: a forge whose summary
    /// cannot count commits but can tell that neither branch moved answers with this.
    pub behind_by: Option<u64>,
}

/// What a cheap summary read saw of one PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Everything the summary shows but the branch comparison and the thread count, as one
    /// comparable digest ([`crate::core::hash::Fingerprint`], written).
    pub fingerprint: String,
    /// Commits the base has that the head lacks, when the branches were compared.
    pub behind_by: Option<u64>,
    /// How many of the threads the summary was asked about are still unresolved (`None`
    /// when it was asked about none).
    pub unresolved_threads: Option<usize>,
    /// The base and head branch names the summary saw (`None` for a fork, whose branch name
    /// means nothing in the base, or a forge that does not say): a first look's full read
    /// compares them in its own request.
    pub branches: Option<(String, String)>,
}

/// The read batch of a forge that does not say otherwise.
pub const DEFAULT_READ_BATCH: usize = 10;

/// A forge, seen from the decision shell. Synchronous, like the HTTP client under it.
pub trait Forge {
    /// One snapshot or error per request, in the same order.
    fn snapshots(&self, requests: &[SnapshotRequest]) -> Vec<Result<Snapshot, ForgeError>>;

    /// A summary per request, in order, of everything a cheap read can see of the PR (head,
    /// update time, checks, merge state, labels, how far behind, ...): an equal summary means
    /// the full snapshot read with the earlier one still holds. `None` means this read cannot tell (the
    /// forge has no summary, or it failed for that PR): read it in full. An error means the
    /// forge cannot be read at all now (rate limited, unreachable, token refused): a full read
    /// would fail the same way.
    fn summaries(&self, requests: &[SummaryRequest]) -> Result<Vec<Option<Summary>>, ForgeError> {
        Ok(requests.iter().map(|_| None).collect())
    }

    /// How many PRs one summary read covers (several read batches).
    fn summary_batch_size(&self) -> usize {
        self.read_batch_size()
    }

    /// How many PRs one read batch holds: a tick reads, decides and acts this many at a time.
    fn read_batch_size(&self) -> usize {
        DEFAULT_READ_BATCH
    }

    /// Where this client's rate-limit budget is kept (host, token fingerprint), the resource
    /// its PR reads spend, and what its answers said of the budget so far.
    fn budget(&self) -> rate::Budget;

    /// Holds this client as an earlier run left its host after a secondary rate limit (see
    /// [`rate::SECONDARY`]): nothing is sent before `until_epoch` (real epoch seconds), and
    /// the next such limit is the `streak + 1`th in a row.
    fn hold(&self, until_epoch: i64, streak: u32);

    /// Every open PR of `repo` (for a job's `repo:` watch entries).
    fn open_prs(&self, repo: &str) -> Result<Vec<OpenPr>, ForgeError>;

    /// Every open PR the token's user authored, on any repository it reaches (a job's `mine:`
    /// entry): one search request (per hundred PRs).
    fn my_open_prs(&self) -> Result<Vec<PrRef>, ForgeError>;

    /// The head of each branch with the checks on it, in order (`None`: no such branch), in
    /// as few requests as the forge allows (GitHub: one per hundred branches).
    fn branch_heads(&self, branches: &[BranchRef]) -> Result<Vec<Option<BranchHead>>, ForgeError>;

    /// The pushes the forge recorded of `branch`, newest first (GitHub's repository activity,
    /// GitLab's push events): who put each head there.
    fn branch_pushes(
        &self,
        branch: &BranchRef,
    ) -> Result<Vec<crate::model::trust::Push>, ForgeError>;

    /// The commits of `branch` after `since` (the newest head judged trusted) up to `head`,
    /// with their signatures' verification; the head commit alone without `since`. `None`
    /// where the forge does not verify signatures.
    fn branch_signed_commits(
        &self,
        branch: &BranchRef,
        since: Option<&Sha>,
        head: &Sha,
    ) -> Result<Option<Vec<crate::model::trust::SignedCommit>>, ForgeError>;

    /// The login the token belongs to: the owner pr-monitor acts for.
    fn viewer_login(&self) -> Result<String, ForgeError>;

    /// The token's user: its login, and how the commits the forge makes for it name it
    /// (by default: by that login).
    fn viewer(&self) -> Result<crate::model::viewer::Viewer, ForgeError> {
        Ok(crate::model::viewer::Viewer::by_login(
            &self.viewer_login()?,
        ))
    }

    /// The last part of the plain-text log of one job of `repo` (at most
    /// [`tail::LOG_TAIL_BYTES`], without its first partial line), or `None` when the forge
    /// keeps none.
    fn job_log(&self, repo: &str, job_id: u64) -> Result<Option<String>, ForgeError>;

    /// The annotations each check run reported (a text per run, a line per annotation:
    /// path, title and message), for classifying failures: one answer per run, in order, the
    /// runs of several PRs in as few requests as the forge allows (GitHub: one, or one per
    /// owner signed in as an App). A request that fails fails each run it asked about.
    fn annotations(&self, runs: &[CheckRunRef]) -> Vec<Result<String, ForgeError>>;

    /// [`Forge::annotations`] of `runs`, and in the same requests the commits of `prs` as
    /// [`Forge::signed_commits`] would list them, one answer per PR: `None` where they were not
    /// read that way (the forge cannot, the request failed, the PR's head is no longer the one
    /// asked about, or the answer does not tell what `signed_commits` would), so the evidence
    /// read asks `signed_commits` as before.
    fn annotations_and_commits(
        &self,
        runs: &[CheckRunRef],
        prs: &[CommitsAsk],
    ) -> (Vec<Result<String, ForgeError>>, ListedCommits) {
        (self.annotations(runs), vec![None; prs.len()])
    }

    /// The files `to` changed since it parted from `from` (a comparison from their merge base;
    /// each a ref or a sha of the PR's repository); `None` when the forge cannot list them whole.
    fn changed_files(
        &self,
        pr: &PrRef,
        from: &str,
        to: &str,
    ) -> Result<Option<Vec<String>>, ForgeError>;

    /// What happened on the PR's conversation, oldest first: GitHub's issue events, GitLab's
    /// label and state events of the merge request, and why the list is cut short when the
    /// forge's budget did not allow the whole history. Read only for `check --full-payload`.
    fn issue_events(&self, pr: &PrRef) -> Result<crate::model::issue_event::Events, ForgeError>;

    /// Re-run the failed jobs of one workflow run (GitHub) or pipeline (GitLab).
    fn rerun_failed(&self, pr: &PrRef, run_id: u64) -> Result<(), ForgeError>;

    /// Bring the branch up to date with its base, if the head is still `expected_head`.
    fn update_branch(
        &self,
        snap: &Snapshot,
        expected_head: &Sha,
        method: UpdateMethod,
    ) -> Result<(), ForgeError>;

    /// Turn the forge's auto-merge on with `method`.
    fn enable_auto_merge(&self, snap: &Snapshot, method: MergeMethod) -> Result<(), ForgeError>;

    /// Turn the forge's auto-merge on for each PR with its method: one answer per PR, in
    /// order, each as [`Forge::enable_auto_merge`] would give it, in as few requests as the
    /// forge allows (GitHub: one document; by default one write after another).
    fn enable_auto_merge_many(
        &self,
        prs: &[(&Snapshot, MergeMethod)],
    ) -> Vec<Result<(), ForgeError>> {
        prs.iter()
            .map(|(snap, method)| self.enable_auto_merge(snap, *method))
            .collect()
    }

    /// The checks of any commit of the PR's repository by sha (a merge group's, or a merge
    /// train pipeline's).
    fn commit_checks(&self, pr: &PrRef, sha: &Sha) -> Result<Vec<Check>, ForgeError>;

    /// Turn the forge's auto-merge off.
    fn disable_auto_merge(&self, snap: &Snapshot) -> Result<(), ForgeError>;

    /// Merge now, only if the head is still `sha`.
    fn merge(&self, pr: &PrRef, sha: &Sha, method: MergeMethod) -> Result<(), ForgeError>;

    /// Answer a review thread.
    fn reply_to_thread(&self, pr: &PrRef, thread_id: &str, body: &str) -> Result<(), ForgeError>;

    /// Mark a review thread resolved.
    fn resolve_thread(&self, pr: &PrRef, thread_id: &str) -> Result<(), ForgeError>;

    /// The pushes the forge recorded of the PR's head branch (in the head's repository: the
    /// fork's for a fork PR), newest first: GitHub's repository activity, GitLab's push events.
    fn pushes(&self, snap: &Snapshot) -> Result<Vec<crate::model::trust::Push>, ForgeError>;

    /// The PR's commits past the base with their signatures' verification, where the forge
    /// verifies signatures (`None` where it does not). GitLab's list may end at the first
    /// commit that is not verified.
    fn signed_commits(
        &self,
        snap: &Snapshot,
    ) -> Result<Option<Vec<crate::model::trust::SignedCommit>>, ForgeError>;
}

/// A check run of a PR, by the forge's node id, whose annotations are asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRunRef {
    pub pr: PrRef,
    pub node_id: String,
}

/// A PR whose commits are asked for beside a chunk's annotations: its evidence may be read
/// for `head` (see [`Forge::annotations_and_commits`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitsAsk {
    pub pr: PrRef,
    pub head: Sha,
}

/// The commits listed for each [`CommitsAsk`], in order (`None`: not listed).
pub type ListedCommits = Vec<Option<Vec<crate::model::trust::SignedCommit>>>;

/// A branch's head commit and the checks on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchHead {
    pub sha: Sha,
    pub checks: Vec<Check>,
}

/// An open PR found in a repository, with what a job's filters look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenPr {
    pub pr: PrRef,
    pub author: Option<String>,
    pub labels: Vec<String>,
}

/// `s` percent-encoded for a URL: every byte but ASCII letters, digits, `-_.~` and those in
/// `keep` (a path keeps `/`).
pub(crate) fn percent_encoded(s: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || keep.contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

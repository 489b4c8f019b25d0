//! Domain types: what a pull request *is* to pr-monitor, independent of any forge's wire format.
//!
//! Forge clients convert their JSON into these types in one place (`forge::github`), so the
//! decision core never sees a `serde_json::Value`. Everything here is plain data.

pub mod answers;
pub mod branch;
pub mod checkout;
pub mod intent;
pub mod issue_event;
pub mod message;
pub mod nudge;
pub mod outcome;
pub mod plan;
pub mod policy;
pub mod reference;
mod review;
pub mod standing;
mod time;
pub mod trust;
pub mod viewer;
pub mod watch;
pub mod web;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use review::{Comment, Edit, Review, ReviewState, ReviewThread};
pub use time::{Instant, parse_instant, stamp, stamp_or_empty};

/// Which forge a pull request lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    GitHub,
    GitLab,
}

impl ForgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ForgeKind::GitHub => "github",
            ForgeKind::GitLab => "gitlab",
        }
    }

    /// The forge's name as people write it.
    pub fn name(self) -> &'static str {
        match self {
            ForgeKind::GitHub => "GitHub",
            ForgeKind::GitLab => "GitLab",
        }
    }

    /// What the forge's rate-limit budget is counted in.
    pub fn budget_unit(self) -> &'static str {
        match self {
            ForgeKind::GitHub => "points",
            ForgeKind::GitLab => "requests",
        }
    }

    /// What the forge calls its merge queue: GitHub's merge queue, GitLab's merge train.
    pub fn queue_noun(self) -> &'static str {
        match self {
            ForgeKind::GitHub => "merge queue",
            ForgeKind::GitLab => "merge train",
        }
    }
}

impl FromStr for ForgeKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "github" => Ok(ForgeKind::GitHub),
            "gitlab" => Ok(ForgeKind::GitLab),
            other => Err(format!("unknown forge `{other}`")),
        }
    }
}

/// A forge login. GitHub and GitLab logins ignore letter case, so two logins are equal when
/// they match ignoring ASCII case; the spelling given is kept for display.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Login(String);

impl Login {
    pub fn new(login: impl Into<String>) -> Self {
        Login(login.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `login` (as the forge spelled it) is this login: ignoring ASCII case, and with
    /// or without the `[bot]` suffix of a GitHub App bot (REST spells `claude[bot]`, GraphQL's
    /// `Bot.login` spells `claude`).
    pub fn is(&self, login: &str) -> bool {
        Login::bare(&self.0).eq_ignore_ascii_case(Login::bare(login))
    }

    /// Why `login` names the forge itself rather than a person or an agent, when it does: such
    /// a login is on commits and pushes anyone can make, so it can neither be an agent's nor be
    /// trusted (`config check` refuses it in `logins` and `trust`).
    pub fn forge_actor(login: &str) -> Option<&'static str> {
        let l = Login::new(login);
        if l.is("web-flow") {
            Some(
                "GitHub commits every web-interface edit, merge and revert as `web-flow`, whoever made it",
            )
        } else if l.is("github-actions[bot]") {
            Some(
                "every GitHub Actions workflow pushes as `github-actions[bot]`, whoever wrote or triggered it",
            )
        } else if l.is("github-merge-queue[bot]") {
            Some("GitHub's merge queue commits every merge group as `github-merge-queue[bot]`")
        } else if l.is("ghost") {
            Some("`ghost` stands for every deleted GitHub account")
        } else {
            None
        }
    }

    /// A login without its `[bot]` suffix.
    pub fn bare(login: &str) -> &str {
        let n = login.len();
        if n > 5 && login.is_char_boundary(n - 5) && login[n - 5..].eq_ignore_ascii_case("[bot]") {
            &login[..n - 5]
        } else {
            login
        }
    }

    /// Whether `login` is one of `logins`.
    pub fn any_is(logins: &[Login], login: Option<&str>) -> bool {
        login.is_some_and(|l| logins.iter().any(|x| x.is(l)))
    }
}

impl PartialEq for Login {
    fn eq(&self, other: &Self) -> bool {
        self.is(&other.0)
    }
}

impl Eq for Login {}

impl From<&str> for Login {
    fn from(s: &str) -> Self {
        Login::new(s)
    }
}

impl fmt::Display for Login {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A pull request (GitHub) or merge request (GitLab): the identity of a watch.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PrRef {
    pub forge: ForgeKind,
    /// `owner/name` on GitHub, `group/…/project` on GitLab.
    pub repo: String,
    pub number: u64,
}

impl PrRef {
    pub fn github(repo: &str, number: u64) -> Self {
        PrRef {
            forge: ForgeKind::GitHub,
            repo: repo.to_owned(),
            number,
        }
    }

    /// `PR #342` or `MR !57`: how notices name the PR.
    pub fn short(&self) -> String {
        match self.forge {
            ForgeKind::GitHub => format!("PR #{}", self.number),
            ForgeKind::GitLab => format!("MR !{}", self.number),
        }
    }

    /// The id of a message about this PR: `octo-app-342-<parts joined by ->`. The one builder
    /// of outbox and agent-message ids.
    pub fn message_id(&self, parts: &[&str]) -> String {
        let mut id = format!("{}-{}", self.repo.replace('/', "-"), self.number);
        for part in parts {
            id.push('-');
            id.push_str(part);
        }
        id
    }

    pub fn owner_and_name(&self) -> (&str, &str) {
        self.repo.split_once('/').unwrap_or((&self.repo, ""))
    }
}

impl fmt::Display for PrRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.forge {
            ForgeKind::GitHub => write!(f, "{}#{}", self.repo, self.number),
            ForgeKind::GitLab => write!(f, "{}!{}", self.repo, self.number),
        }
    }
}

/// A commit id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Sha(pub String);

impl Sha {
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The first seven characters, as people write them.
    pub fn short(&self) -> &str {
        self.0.get(..7).unwrap_or(&self.0)
    }
}

impl fmt::Display for Sha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether the PR is still open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrState {
    Open,
    Merged,
    Closed,
}

impl PrState {
    pub fn as_str(self) -> &'static str {
        match self {
            PrState::Open => "open",
            PrState::Merged => "merged",
            PrState::Closed => "closed",
        }
    }
}

impl FromStr for PrState {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "open" => Ok(PrState::Open),
            "merged" => Ok(PrState::Merged),
            "closed" => Ok(PrState::Closed),
            other => Err(format!("unknown PR state `{other}`")),
        }
    }
}

/// Where a check came from on the head commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// A check run (GitHub Actions and other apps), or a GitLab job.
    CheckRun,
    /// A commit status (the older statuses API).
    Status,
}

/// A check's state, bucketed the way a person reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckState {
    /// Queued, in progress, waiting, requested, expected, stale.
    Pending,
    Passed,
    /// Neutral or skipped: counts as neither passed nor failed.
    Skipped,
    /// Failure, error, timed out, startup failure, action required, cancelled.
    Failed,
}

/// One check on the head commit, newest per (name, workflow, event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub kind: CheckKind,
    pub state: CheckState,
    /// The forge's own conclusion word, lowercased (`failure`, `timed_out`, `cancelled` …).
    pub conclusion: Option<String>,
    pub url: Option<String>,
    /// The job behind a check run, whose log can be read (GitHub Actions job id, GitLab job id).
    pub job_id: Option<u64>,
    /// The workflow run (GitHub) or pipeline (GitLab) the job belongs to, for re-runs.
    pub run_id: Option<u64>,
    pub workflow: Option<String>,
    /// What the run ran for: GitHub's event (`push`, `pull_request`, `merge_group`), or
    /// [`MERGED_RESULT`] for a GitLab merged-results or merge-train pipeline's job.
    pub event: Option<String>,
    pub started_at: Option<Instant>,
    pub completed_at: Option<Instant>,
    /// Text the check itself reports (title, summary, annotations; GitLab's failure_reason).
    pub output: String,
    /// GitLab's machine-readable `failure_reason` of a job (`runner_system_failure` …).
    pub failure_reason: Option<String>,
    /// The forge's id for the check run (GraphQL node id), to read its annotations.
    pub node_id: Option<String>,
    /// The base branch does not require it (read only where a job judges required checks
    /// alone: `policy.checks: required`).
    #[serde(default)]
    pub optional: bool,
}

/// The event of a check that ran on the merged result of the PR's head and its base (GitLab's
/// merged-results and merge-train pipelines), not on the head alone.
pub const MERGED_RESULT: &str = "merged_result";

/// Which data a snapshot's checks came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChecksSource {
    /// The check runs and statuses pinned to the head commit.
    CommitPinned,
    /// The PR's rollup of the same head: the fallback when commit-pinned data is missing.
    PrChecks,
}

impl ChecksSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ChecksSource::CommitPinned => "commit-pinned",
            ChecksSource::PrChecks => "pr-checks",
        }
    }
}

/// Whether the head can merge into the base without conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Mergeable {
    Mergeable,
    Conflicting,
    /// Still being computed: neither clean nor conflicting.
    Unknown,
}

impl Mergeable {
    /// GitHub's spelling (`MERGEABLE`, `CONFLICTING`, `UNKNOWN`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mergeable::Mergeable => "MERGEABLE",
            Mergeable::Conflicting => "CONFLICTING",
            Mergeable::Unknown => "UNKNOWN",
        }
    }
}

/// The forge's summary of why a PR can or cannot merge (GitHub's `mergeStateStatus`).
/// Lossy: BLOCKED hides BEHIND. Kept for display and as one input among the underlying facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MergeState {
    Behind,
    Blocked,
    Clean,
    Dirty,
    Draft,
    HasHooks,
    Unknown,
    Unstable,
    Other(String),
}

impl MergeState {
    pub fn parse(s: &str) -> Self {
        match s {
            "BEHIND" => MergeState::Behind,
            "BLOCKED" => MergeState::Blocked,
            "CLEAN" => MergeState::Clean,
            "DIRTY" => MergeState::Dirty,
            "DRAFT" => MergeState::Draft,
            "HAS_HOOKS" => MergeState::HasHooks,
            "UNKNOWN" => MergeState::Unknown,
            "UNSTABLE" => MergeState::Unstable,
            other => MergeState::Other(other.to_owned()),
        }
    }
    pub fn as_str(&self) -> &str {
        match self {
            MergeState::Behind => "BEHIND",
            MergeState::Blocked => "BLOCKED",
            MergeState::Clean => "CLEAN",
            MergeState::Dirty => "DIRTY",
            MergeState::Draft => "DRAFT",
            MergeState::HasHooks => "HAS_HOOKS",
            MergeState::Unknown => "UNKNOWN",
            MergeState::Unstable => "UNSTABLE",
            MergeState::Other(s) => s,
        }
    }
}

/// The head commit and who made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadCommit {
    pub sha: Sha,
    /// The author's login as the forge resolves it (GitHub: the user of the author email;
    /// `None` for an App bot, whose GraphQL actor is no user, and on GitLab, whose commits
    /// carry no username).
    pub author_login: Option<String>,
    pub committer_login: Option<String>,
    /// The author's email as written into the commit (anyone can write any).
    #[serde(default)]
    pub author_email: Option<String>,
    /// The committer's email as written into the commit.
    #[serde(default)]
    pub committer_email: Option<String>,
    /// The committer's free-text name (git's `user.name`): shown, never trusted.
    #[serde(default)]
    pub committer_name: Option<String>,
    pub committed_at: Option<Instant>,
    /// The head's parent commits (a merge commit has two), where the forge says.
    #[serde(default)]
    pub parents: Vec<Sha>,
}

/// How a behind branch is brought up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpdateMethod {
    Merge,
    Rebase,
}

impl UpdateMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateMethod::Merge => "merge",
            UpdateMethod::Rebase => "rebase",
        }
    }
}

impl fmt::Display for UpdateMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A merge method a repository may allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MergeMethod {
    Squash,
    Merge,
    Rebase,
}

impl MergeMethod {
    /// The order in which an unset `merge_method` picks the first one allowed.
    pub const PREFERENCE: [MergeMethod; 3] =
        [MergeMethod::Squash, MergeMethod::Merge, MergeMethod::Rebase];

    pub fn as_str(self) -> &'static str {
        match self {
            MergeMethod::Squash => "squash",
            MergeMethod::Merge => "merge",
            MergeMethod::Rebase => "rebase",
        }
    }
}

impl FromStr for MergeMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "squash" => Ok(MergeMethod::Squash),
            "merge" => Ok(MergeMethod::Merge),
            "rebase" => Ok(MergeMethod::Rebase),
            other => Err(format!(
                "unknown merge method `{other}` (squash, merge or rebase)"
            )),
        }
    }
}

/// What the repository allows when merging.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoSettings {
    pub default_branch: String,
    pub auto_merge_allowed: bool,
    pub allowed_methods: Vec<MergeMethod>,
}

/// Where a PR's entry in the forge's merge queue (GitHub) or merge train (GitLab) stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum QueueState {
    Queued,
    AwaitingChecks,
    Mergeable,
    Unmergeable,
    Locked,
}

impl QueueState {
    pub fn as_str(self) -> &'static str {
        match self {
            QueueState::Queued => "QUEUED",
            QueueState::AwaitingChecks => "AWAITING_CHECKS",
            QueueState::Mergeable => "MERGEABLE",
            QueueState::Unmergeable => "UNMERGEABLE",
            QueueState::Locked => "LOCKED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            QueueState::Queued,
            QueueState::AwaitingChecks,
            QueueState::Mergeable,
            QueueState::Unmergeable,
            QueueState::Locked,
        ]
        .into_iter()
        .find(|q| q.as_str() == s)
    }
}

/// A PR's entry in the merge queue or train, as the forge gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueEntry {
    /// The place in line, as the forge counts it (1 is the head of the queue).
    pub position: u32,
    pub state: QueueState,
    pub estimated_seconds: Option<u64>,
    pub enqueued_at: Option<Instant>,
    /// The commit the queue tests: GitHub's merge group, GitLab's train pipeline.
    pub group_sha: Option<Sha>,
    /// The PRs ahead of it in line, front first, when the forge lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ahead: Vec<u64>,
}

/// The forge's record that the PR left the merge queue (GitHub's timeline:
/// `RemovedFromMergeQueueEvent`, with the reason of the `AutoMergeDisabledEvent` after it when
/// it gave none), read so a removal between two polls is not missed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueRemoval {
    pub at: Option<Instant>,
    /// The forge's words for why, when it gave any.
    pub reason: Option<String>,
    /// The head the PR had in line (`beforeCommit`), when the forge named it.
    pub head: Option<Sha>,
}

impl QueueRemoval {
    /// Whether it is the removal GitHub also writes when the queue merges the PR.
    pub fn merged(&self) -> bool {
        self.reason
            .as_deref()
            .is_some_and(|r| r.trim().eq_ignore_ascii_case("merged"))
    }
}

/// A failed check with what its log says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedCheck {
    pub name: String,
    pub url: Option<String>,
    pub job_id: Option<u64>,
    pub run_id: Option<u64>,
    /// When the check finished: tells a re-run's failure from the original's.
    pub completed_at: Option<Instant>,
    /// The cleaned, masked tail of the job's log (empty when the forge keeps none).
    pub log_tail: String,
    pub classification: Classification,
    /// Why the log could not be read this tick (the forge failed to answer); `None` when it
    /// was read, cached, or the forge keeps none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// Everything detect learned about one PR in one tick: the input of the decision core.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts the forge reports about one PR"
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub pr: PrRef,
    /// The forge's own id for the PR (GraphQL node id), needed by mutations.
    pub node_id: String,
    pub url: String,
    pub title: String,
    pub state: PrState,
    pub draft: bool,
    pub author: Option<String>,
    /// The forge says the PR's author may write to the repository (GitHub's author association
    /// OWNER, MEMBER or COLLABORATOR; a GitLab access level of Developer or more).
    #[serde(default)]
    pub author_can_write: bool,
    pub head_ref: String,
    /// The head branch lives in a fork.
    pub cross_repository: bool,
    /// The repository the head branch lives in (`owner/name`; the fork for a fork PR; GitLab's
    /// source project path), when the forge says.
    #[serde(default)]
    pub head_repo: Option<String>,
    pub head: HeadCommit,
    pub base_ref: String,
    pub labels: Vec<String>,
    pub mergeable: Mergeable,
    pub merge_state: MergeState,
    /// Commits the base has that the head lacks; `None` when the forge could not compare.
    pub behind_by: Option<u64>,
    pub checks: Vec<Check>,
    /// Which data the checks came from.
    pub checks_source: ChecksSource,
    pub threads: Vec<ReviewThread>,
    pub reviews: Vec<Review>,
    pub comments: Vec<Comment>,
    /// Log tails and classifications of the failed checks (up to five), filled by detect
    /// once all of the head's checks are done.
    pub failed_logs: Vec<FailedCheck>,
    /// Whether the forge's auto-merge is enabled on the PR right now.
    pub auto_merge_enabled: bool,
    pub repo: RepoSettings,
    /// The base merges only through the forge's merge queue or merge train.
    #[serde(default)]
    pub merge_queue: bool,
    /// The PR's entry in that queue, while it is in line.
    #[serde(default)]
    pub queue_entry: Option<QueueEntry>,
    /// The failed checks of the merge group the PR last waited in, read once it left the
    /// queue (with their log tails, as `failed_logs`).
    #[serde(default)]
    pub queue_failures: Vec<FailedCheck>,
    /// The merge group's checks still unfinished when the PR left the queue (it timed out).
    #[serde(default)]
    pub queue_unfinished: Vec<String>,
    /// Why the merge group's checks could not be read once the PR left the queue: the exit
    /// is then undecided (neither failures nor their absence are known).
    #[serde(default)]
    pub queue_unread: Option<String>,
    /// The last merge-queue removals on the PR's timeline, oldest first (GitHub, where the
    /// server has merge queues; empty elsewhere).
    #[serde(default)]
    pub queue_removals: Vec<QueueRemoval>,
    /// A branch update the forge makes in the background is under way (GitLab's rebase:
    /// `rebase_in_progress`).
    #[serde(default)]
    pub update_in_progress: bool,
    /// The forge's word that its last background branch update failed (GitLab's `merge_error`
    /// after a rebase), when none is under way.
    #[serde(default)]
    pub update_error: Option<String>,
}

/// Whether `labels` carry `want`. Label names are compared in any letter case, as the forges
/// treat them: the one rule for a job's label filter and a policy's required labels.
pub fn has_label(labels: &[String], want: &str) -> bool {
    let want = want.to_lowercase();
    labels.iter().any(|l| l.to_lowercase() == want)
}

impl Snapshot {
    pub fn unresolved_threads(&self) -> impl Iterator<Item = &ReviewThread> {
        self.threads.iter().filter(|t| !t.resolved)
    }

    pub fn has_conflict(&self) -> bool {
        self.mergeable == Mergeable::Conflicting || self.merge_state == MergeState::Dirty
    }

    /// The branch is behind its base: by the comparison, or by the forge's merge state.
    pub fn is_behind(&self) -> bool {
        self.behind_by.is_some_and(|b| b > 0) || self.merge_state == MergeState::Behind
    }
}

/// The verdict on one failed check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Classification {
    Real,
    /// An infrastructure failure; `evidence` is the line (or reason) that matched.
    Infra {
        evidence: String,
    },
}

impl Classification {
    pub fn is_infra(&self) -> bool {
        matches!(self, Classification::Infra { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_url_and_short_names() {
        let pr = PrRef::github("o/r", 1);
        assert_eq!(pr.url(), "https://github.com/o/r/pull/1");
        assert_eq!(pr.short(), "PR #1");
        let mr: PrRef = "g/p!57".parse().unwrap();
        assert_eq!(mr.short(), "MR !57");
        assert_eq!(mr.url().parse::<PrRef>(), Ok(mr));
    }

    #[test]
    fn parse_instant_reads_rfc3339_into_utc_and_refuses_garbage() {
        let utc = |s: &str| Some(s.to_owned());
        let table: &[(&str, Option<String>)] = &[
            ("2026-11-29T12:00:00Z", utc("2026-11-29T12:00:00Z")),
            ("2026-11-29T12:00:00z", utc("2026-11-29T12:00:00Z")),
            ("2026-11-29T12:00:00+00:00", utc("2026-11-29T12:00:00Z")),
            ("2026-11-29T13:30:00+01:30", utc("2026-11-29T12:00:00Z")),
            ("2026-11-29T07:00:00-05:00", utc("2026-11-29T12:00:00Z")),
            ("2026-11-29T23:30:00-01:00", utc("2026-11-30T00:30:00Z")),
            ("2022-10-31T19:06:06.237Z", utc("2022-10-31T19:06:06.237Z")),
            (
                "2022-10-31T19:06:06.000000001+00:00",
                utc("2022-10-31T19:06:06.000000001Z"),
            ),
            ("", None),
            ("garbage", None),
            ("2026-11-29", None),
            ("2026-11-29T12:00:00", None),
            ("2026-11-29 12:00:00 UTC", None),
            ("2026-13-29T12:00:00Z", None),
        ];
        for (input, want) in table {
            let got = parse_instant(input)
                .ok()
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true));
            assert_eq!(&got, want, "{input:?}");
        }
    }
}

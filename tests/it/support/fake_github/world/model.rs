//! The fake GitHub's data model: repositories, pull requests, commits and their checks, review
//! threads, reviews, comments, job logs, the event log, and GitHub's enum spellings.

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};

/// An instant on the world's clock.
pub type Time = DateTime<Utc>;

/// Where the world's clock starts: tests pass the same instant to the binary's `--now`.
pub const DEFAULT_NOW: &str = "2026-11-29T12:00:00Z";

/// GitHub's timestamp format (`2026-11-29T12:00:00Z`).
pub fn timestamp(t: Time) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Parses an RFC 3339 instant; panics with the text on a typo (test support).
pub fn at(rfc3339: &str) -> Time {
    DateTime::parse_from_rfc3339(rfc3339)
        .unwrap_or_else(|e| panic!("`{rfc3339}` is not an RFC 3339 instant: {e}"))
        .with_timezone(&Utc)
}

macro_rules! graphql_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }

        impl $name {
            /// The GraphQL enum value.
            pub fn as_graphql(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the GraphQL enum value.
            pub fn from_graphql(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)+ _ => None }
            }
        }
    };
}

graphql_enum!(
    /// `PullRequestState`.
    PrState { Open = "OPEN", Closed = "CLOSED", Merged = "MERGED" }
);
graphql_enum!(
    /// `MergeableState`.
    #[allow(clippy::enum_variant_names)] // GitHub's own value names
    Mergeable { Mergeable = "MERGEABLE", Conflicting = "CONFLICTING", Unknown = "UNKNOWN" }
);
graphql_enum!(
    /// `MergeStateStatus`.
    MergeState {
        Behind = "BEHIND",
        Blocked = "BLOCKED",
        Clean = "CLEAN",
        Dirty = "DIRTY",
        Draft = "DRAFT",
        HasHooks = "HAS_HOOKS",
        Unknown = "UNKNOWN",
        Unstable = "UNSTABLE",
    }
);
graphql_enum!(
    /// `PullRequestMergeMethod`.
    MergeMethod { Merge = "MERGE", Squash = "SQUASH", Rebase = "REBASE" }
);
graphql_enum!(
    /// `PullRequestBranchUpdateMethod`.
    UpdateMethod { Merge = "MERGE", Rebase = "REBASE" }
);
graphql_enum!(
    /// `CheckStatusState`.
    CheckStatus {
        Queued = "QUEUED",
        InProgress = "IN_PROGRESS",
        Completed = "COMPLETED",
        Waiting = "WAITING",
        Requested = "REQUESTED",
        Pending = "PENDING",
    }
);
graphql_enum!(
    /// `CheckConclusionState`.
    Conclusion {
        ActionRequired = "ACTION_REQUIRED",
        Cancelled = "CANCELLED",
        Failure = "FAILURE",
        Neutral = "NEUTRAL",
        Skipped = "SKIPPED",
        Stale = "STALE",
        StartupFailure = "STARTUP_FAILURE",
        Success = "SUCCESS",
        TimedOut = "TIMED_OUT",
    }
);
graphql_enum!(
    /// `StatusState` (commit statuses and their combined state).
    StatusState { Error = "ERROR", Expected = "EXPECTED", Failure = "FAILURE", Pending = "PENDING", Success = "SUCCESS" }
);
graphql_enum!(
    /// `PullRequestReviewState`.
    ReviewState {
        Approved = "APPROVED",
        ChangesRequested = "CHANGES_REQUESTED",
        Commented = "COMMENTED",
        Dismissed = "DISMISSED",
        Pending = "PENDING",
    }
);
graphql_enum!(
    /// `CheckAnnotationLevel`.
    AnnotationLevel { Failure = "FAILURE", Notice = "NOTICE", Warning = "WARNING" }
);

impl MergeMethod {
    /// The REST spelling (`merge_method` of `PUT …/merge`).
    pub fn as_rest(self) -> &'static str {
        match self {
            MergeMethod::Merge => "merge",
            MergeMethod::Squash => "squash",
            MergeMethod::Rebase => "rebase",
        }
    }

    pub fn from_rest(s: &str) -> Option<Self> {
        Self::from_graphql(&s.to_ascii_uppercase())
    }
}

/// How a check or status reads for merging purposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Pending,
    Passed,
    Failed,
}

impl Conclusion {
    /// Whether a completed run with this conclusion counts as failed (and is re-run by
    /// `rerun-failed-jobs`).
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Conclusion::ActionRequired
                | Conclusion::Cancelled
                | Conclusion::Failure
                | Conclusion::StartupFailure
                | Conclusion::TimedOut
        )
    }
}

/// An error the forge answers with. The API layers map it to their own shape: GraphQL errors
/// with `type` NOT_FOUND / UNPROCESSABLE / FORBIDDEN, REST status codes 404 / 422 / 409 / 405 / 403.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// 404 / `NOT_FOUND`.
    NotFound(String),
    /// 422 / `UNPROCESSABLE`.
    Unprocessable(String),
    /// 409 (REST merge with a stale sha).
    Conflict(String),
    /// 405 (REST merge refused).
    NotAllowed(String),
    /// 403 / `FORBIDDEN`.
    Forbidden(String),
}

impl ApiError {
    pub fn message(&self) -> &str {
        match self {
            ApiError::NotFound(m)
            | ApiError::Unprocessable(m)
            | ApiError::Conflict(m)
            | ApiError::NotAllowed(m)
            | ApiError::Forbidden(m) => m,
        }
    }
}

/// Something the forge did because a client (or the forge itself) asked: the audit trail tests
/// assert on. Mutating API calls that fail record nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The PR was merged, by `PUT …/merge` (`auto_merge: false`) or by GitHub's auto-merge.
    Merged {
        repo: String,
        number: u64,
        head: String,
        method: MergeMethod,
        auto_merge: bool,
    },
    AutoMergeEnabled {
        repo: String,
        number: u64,
        method: MergeMethod,
    },
    AutoMergeDisabled {
        repo: String,
        number: u64,
    },
    BranchUpdated {
        repo: String,
        number: u64,
        method: UpdateMethod,
        old_head: String,
        new_head: String,
    },
    RerunFailedJobs {
        repo: String,
        run_id: u64,
        jobs: Vec<u64>,
    },
    ThreadReply {
        repo: String,
        number: u64,
        thread_id: String,
        body: String,
    },
    ThreadResolved {
        repo: String,
        number: u64,
        thread_id: String,
    },
    /// The PR joined its base's merge queue.
    Enqueued {
        repo: String,
        number: u64,
    },
    /// The merge queue let the PR go (its merge group failed); auto-merge went off with it.
    Dequeued {
        repo: String,
        number: u64,
    },
}

/// The rate-limit figures reported in `x-ratelimit-*` headers and `GET /rate_limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimit {
    pub limit: u64,
    pub core_used: u64,
    pub graphql_used: u64,
    /// Real epoch seconds (the contract says rate-limit resets are real time).
    pub reset_epoch: i64,
}

impl RateLimit {
    /// How long GitHub's primary budget lasts before it is whole again.
    pub const WINDOW_SECS: i64 = 3600;

    /// Makes the budget whole again when its reset time (real epoch seconds `now`) has
    /// passed, with the next reset an hour later.
    pub fn reset_if_due(&mut self, now: i64) {
        if now >= self.reset_epoch {
            self.core_used = 0;
            self.graphql_used = 0;
            self.reset_epoch = now + Self::WINDOW_SECS;
        }
    }

    /// GraphQL points left.
    pub fn graphql_remaining(&self) -> u64 {
        self.limit.saturating_sub(self.graphql_used)
    }
}

/// The whole forge.
#[derive(Debug, Clone)]
pub struct World {
    /// The token every request must present (`Authorization: Bearer …`).
    pub token: String,
    /// The login the token belongs to: `viewer { login }`, author of replies and branch updates.
    pub viewer: String,
    /// Other people's personal tokens (token → login), e.g. an agent's own: a request with one
    /// acts as that login ([`World::person_token`]).
    pub people: BTreeMap<String, String>,
    /// The login the request being answered acts as, when it is not the viewer's.
    pub acting: Option<String>,
    /// The world's clock: stamps everything the builders and mutations create.
    pub now: Time,
    pub repos: BTreeMap<String, Repo>,
    /// Plain-text job logs by job id (= check run `databaseId`).
    pub job_logs: BTreeMap<u64, Vec<u8>>,
    /// The blob host job-log redirects point at (`http://127.0.0.1:PORT`, see
    /// [`super::super::FakeGitHub::log_host`]); `None`: this server's own address.
    pub log_host: Option<String>,
    /// The blob host sends a whole log whatever `Range` asks (as a host without ranges).
    pub logs_ignore_range: bool,
    pub events: Vec<Event>,
    /// Requests handled whose answer is being held back (`Fault::apply_then_hang`): a test
    /// waits for this to know the write happened before it kills the client.
    pub held_answers: usize,
    /// Whether GitHub's auto-merge merges an armed PR once it reads CLEAN or UNSTABLE (checked at
    /// the start of every request and by [`World::settle`]). On by default.
    pub auto_merge_executes: bool,
    /// Fields this server lacks, as (type, field): a document using one is refused with
    /// GitHub's "Field 'x' doesn't exist on type 'Y'" (an older GitHub Enterprise Server).
    pub missing_fields: Vec<(String, String)>,
    /// Fields this server no longer has (GitHub removing a deprecated field), as (type, field),
    /// told apart by type: a document selecting one inside a selection `on Type { … }` (a
    /// fragment on it) is refused like a missing field.
    pub removed_fields: Vec<(String, String)>,
    /// Fields answered null wherever they are asked, as (type, field): what GitHub may answer
    /// where the schema lets a field be null (a deleted author, a commit no user made, an
    /// unreadable connection). Only nullable fields belong here: the executor refuses a null
    /// for a non-null one.
    pub null_fields: Vec<(String, String)>,
    /// GitHub Enterprise Server: `PullRequest.mergeStateStatus` exists only for requests whose
    /// `Accept` names the `merge-info-preview` media type, as on a real GHES.
    pub enterprise: bool,
    pub rate: RateLimit,
    /// The GitHub App, when tests sign in as one (see [`super::super::app`]).
    pub app: Option<super::super::app::FakeApp>,
    pub(super) next_id: u64,
    /// Where database ids start (1,000,000; GitHub's newer ones are past 32 bits).
    pub database_id_base: u64,
    /// Where each node id pointed at the last full walk of the world: a lookup checks the
    /// entry it finds and walks the world afresh when it is stale, or missing while ids were
    /// made since (a world of thousands of PRs is asked for hundreds of nodes per request, and
    /// every string argument of a query is tried as one).
    pub(super) node_index: std::cell::RefCell<NodeIndex>,
}

/// Where each node id pointed at the last full walk of the world, and the world's id counter
/// then: a lookup that misses walks again only if ids were made since.
#[derive(Debug, Clone, Default)]
pub struct NodeIndex {
    pub at: std::collections::HashMap<String, NodeRef>,
    pub walked_at: Option<u64>,
}

/// Branch protection of one branch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protection {
    /// Check-run names or status contexts that must pass.
    pub required_checks: Vec<String>,
    /// "Require branches to be up to date before merging": a behind PR reads BEHIND.
    pub strict: bool,
    pub required_approvals: u32,
    pub require_resolved_threads: bool,
    /// "Require merge queue": PRs merge only through the branch's line.
    pub merge_queue: bool,
}

#[expect(
    clippy::struct_excessive_bools,
    reason = "a repository's independent settings"
)]
#[derive(Debug, Clone)]
pub struct Repo {
    /// `owner/name`.
    pub full_name: String,
    pub node_id: String,
    pub database_id: u64,
    pub default_branch: String,
    pub allow_auto_merge: bool,
    pub allow_squash: bool,
    pub allow_merge_commit: bool,
    pub allow_rebase: bool,
    /// Protected branches. Enabling auto-merge on a PR whose base is not here is refused.
    pub protections: BTreeMap<String, Protection>,
    pub prs: BTreeMap<u64, Pr>,
    /// Every commit by sha (PR heads, older PR commits, merge commits).
    pub commits: BTreeMap<String, Commit>,
    /// The merge queue of each branch that requires one, head of the line first.
    pub queues: BTreeMap<String, Vec<super::super::queue::QueueItem>>,
    /// Logins with write access besides the owner of the repository and the viewer: their
    /// `authorAssociation` is COLLABORATOR.
    pub collaborators: Vec<String>,
    /// Branches pushed to directly (not a PR's head), each its commits oldest first: the last
    /// is the branch's head.
    pub branches: BTreeMap<String, Vec<String>>,
}

impl Repo {
    pub fn method_allowed(&self, m: MergeMethod) -> bool {
        match m {
            MergeMethod::Merge => self.allow_merge_commit,
            MergeMethod::Squash => self.allow_squash,
            MergeMethod::Rebase => self.allow_rebase,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoMerge {
    pub method: MergeMethod,
    pub enabled_at: Time,
    pub enabled_by: String,
}

#[derive(Debug, Clone)]
pub struct Pr {
    pub number: u64,
    pub node_id: String,
    pub database_id: u64,
    pub title: String,
    pub body: String,
    pub state: PrState,
    pub draft: bool,
    pub author: Option<String>,
    pub head_ref: String,
    pub base_ref: String,
    pub cross_repository: bool,
    /// The fork the head branch lives in (`owner/name`), for a fork PR.
    pub head_repo: Option<String>,
    /// Commit shas, oldest first; the last is the head.
    pub commits: Vec<String>,
    pub labels: Vec<String>,
    /// When a label was last added or removed: GitHub moves the PR's `updatedAt` then.
    pub labels_changed_at: Time,
    /// The real mergeability (what merging acts on).
    pub mergeable: Mergeable,
    /// This many more reads of `mergeable` / `mergeStateStatus` answer UNKNOWN (GitHub still
    /// computing) before the real values show. Every push (and branch update) leaves at least
    /// one, as GitHub computes mergeability in the background after a push.
    pub mergeable_unknown_reads: u32,
    /// Forces `mergeStateStatus` (and what merging acts on) instead of deriving it; cleared when
    /// the head changes.
    pub merge_state_override: Option<MergeState>,
    /// Commits on the base the head lacks.
    pub behind_by: u64,
    /// Replaying the head's commits one by one onto the base conflicts, though the whole
    /// merges cleanly (`mergeable` stays MERGEABLE): a rebase update is refused with a conflict.
    pub rebase_conflicts: bool,
    pub auto_merge: Option<AutoMerge>,
    pub reviews: Vec<Review>,
    pub threads: Vec<Thread>,
    pub comments: Vec<IssueComment>,
    pub created_at: Time,
    pub merged_at: Option<Time>,
    pub closed_at: Option<Time>,
    pub merge_commit: Option<String>,
    /// Its issue events (labels, force pushes, closing, reopening, merging), oldest first.
    pub issue_events: Vec<super::super::events::IssueEvent>,
    /// The merge-queue removals and auto-merge disablings on its timeline, oldest first.
    pub timeline: Vec<super::super::queue::TimelineEvent>,
    /// The files the head branch changed since it parted from the base (what the three-dot
    /// compare `base...head` lists).
    pub head_files: Vec<String>,
    /// The files the base changed since the head branch parted from it (`head...base`).
    pub base_files: Vec<String>,
}

impl Pr {
    pub fn head_sha(&self) -> &str {
        self.commits.last().map_or("", String::as_str)
    }

    /// The repository its head branch lives in.
    pub fn head_repo_or<'a>(&'a self, base: &'a str) -> &'a str {
        self.head_repo.as_deref().unwrap_or(base)
    }
}

impl Commit {
    /// Who pushed it, as the repository activity names them.
    pub fn pushed_by(&self) -> Option<&str> {
        self.pusher
            .as_deref()
            .or(self.bot.as_deref())
            .or(self.committer.as_deref())
            .or(self.author.as_deref())
    }

    /// The author's name and email as written into the commit.
    pub fn author_identity(&self) -> (String, String) {
        identity(
            self.bot.as_deref(),
            self.author.as_deref(),
            self.author_email.as_deref(),
        )
    }

    /// The committer's name and email as written into the commit.
    pub fn committer_identity(&self) -> (String, String) {
        identity(self.bot.as_deref(), self.committer.as_deref(), None)
    }
}

/// A git identity: an App bot's name and no-reply address, a user's login and no-reply
/// address, or someone unknown; `email` overrides the address.
fn identity(bot: Option<&str>, login: Option<&str>, email: Option<&str>) -> (String, String) {
    let (name, default) = match (bot, login) {
        (Some(bot), _) => (
            bot.to_owned(),
            format!("{}+{bot}@users.noreply.github.com", 41_898_282 + bot.len()),
        ),
        (None, Some(l)) => (l.to_owned(), format!("{l}@users.noreply.github.com")),
        (None, None) => ("Someone".to_owned(), "someone@example.com".to_owned()),
    };
    (name, email.map_or(default, str::to_owned))
}

#[derive(Debug, Clone)]
pub struct Commit {
    pub sha: String,
    pub node_id: String,
    /// Login of the GitHub user the author email maps to; `None` for an unknown email, and
    /// for a GitHub App bot (see `bot`).
    pub author: Option<String>,
    pub committer: Option<String>,
    /// A GitHub App bot that authored and committed it (`claude[bot]`): GraphQL's actor has
    /// `user: null`, REST's `author` is the bot, the email is its no-reply address.
    pub bot: Option<String>,
    /// The author email written into the commit, when not the no-reply address of its
    /// author (anyone can write any).
    pub author_email: Option<String>,
    /// GitHub verified its signature.
    pub verified: bool,
    /// Who pushed it, when not its committer (else its author, else its bot).
    pub pusher: Option<String>,
    /// When it was pushed, when not when it was committed.
    pub pushed_at: Option<Time>,
    /// The repository activity does not list its push (yet).
    pub push_unlisted: bool,
    pub authored_at: Time,
    pub committed_at: Time,
    pub message: String,
    /// The parent commits' shas (empty for a PR's first commit).
    pub parents: Vec<String>,
    pub suites: Vec<CheckSuite>,
    pub statuses: Vec<StatusContext>,
}

#[derive(Debug, Clone)]
pub struct CheckSuite {
    pub node_id: String,
    pub database_id: u64,
    /// The app's slug: `github-actions` for Actions.
    pub app: String,
    /// The Actions workflow run behind the suite (`None` for other apps).
    pub workflow_run: Option<WorkflowRun>,
    pub runs: Vec<CheckRun>,
}

#[derive(Debug, Clone)]
pub struct WorkflowRun {
    pub node_id: String,
    /// The run id `rerun-failed-jobs` takes.
    pub database_id: u64,
    pub workflow: String,
    pub event: String,
    pub run_number: u64,
}

#[derive(Debug, Clone)]
pub struct CheckRun {
    pub node_id: String,
    /// The job id (`actions/jobs/{id}/logs`).
    pub database_id: u64,
    pub name: String,
    pub status: CheckStatus,
    /// Set only when `status` is COMPLETED.
    pub conclusion: Option<Conclusion>,
    pub details_url: Option<String>,
    pub started_at: Option<Time>,
    pub completed_at: Option<Time>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
    pub annotations: Vec<Annotation>,
}

impl CheckRun {
    pub fn outcome(&self) -> Outcome {
        match (self.status, self.conclusion) {
            (
                CheckStatus::Completed,
                Some(Conclusion::Success | Conclusion::Neutral | Conclusion::Skipped),
            ) => Outcome::Passed,
            (CheckStatus::Completed, Some(Conclusion::Stale) | None) => Outcome::Pending,
            (CheckStatus::Completed, Some(_)) => Outcome::Failed,
            _ => Outcome::Pending,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Annotation {
    pub level: AnnotationLevel,
    pub path: String,
    pub line: u64,
    pub title: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct StatusContext {
    pub node_id: String,
    pub context: String,
    pub state: StatusState,
    pub target_url: Option<String>,
    pub description: Option<String>,
    pub created_at: Time,
}

impl StatusContext {
    pub fn outcome(&self) -> Outcome {
        match self.state {
            StatusState::Success => Outcome::Passed,
            StatusState::Pending | StatusState::Expected => Outcome::Pending,
            StatusState::Error | StatusState::Failure => Outcome::Failed,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Thread {
    pub node_id: String,
    pub resolved: bool,
    pub resolved_by: Option<String>,
    pub outdated: bool,
    pub path: String,
    pub line: Option<u64>,
    pub comments: Vec<ThreadComment>,
}

#[derive(Debug, Clone)]
pub struct ThreadComment {
    pub node_id: String,
    pub database_id: u64,
    pub author: Option<String>,
    pub body: String,
    pub created_at: Time,
    pub updated_at: Time,
    /// Who last edited it when not its author (an edit is `updated_at` past `created_at`).
    pub editor: Option<String>,
    /// Part of a review its author has not submitted: only they see it.
    pub pending: bool,
}

#[derive(Debug, Clone)]
pub struct Review {
    pub node_id: String,
    pub database_id: u64,
    pub author: Option<String>,
    pub state: ReviewState,
    pub body: String,
    pub submitted_at: Option<Time>,
    pub updated_at: Time,
    /// Who last edited its body when not its author.
    pub editor: Option<String>,
    /// The sha the review was made on.
    pub commit: Option<String>,
}

#[derive(Debug, Clone)]
pub struct IssueComment {
    pub node_id: String,
    pub database_id: u64,
    pub author: Option<String>,
    pub body: String,
    pub created_at: Time,
    pub updated_at: Time,
    /// Who last edited it when not its author (an edit is `updated_at` past `created_at`).
    pub editor: Option<String>,
}

/// Where a node id points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeRef {
    Repo(String),
    Pr(String, u64),
    Commit(String, String),
    Suite(String, String, usize),
    Run(String, String, usize, usize),
    WorkflowRun(String, String, usize),
    StatusContext(String, String, usize),
    Thread(String, u64, usize),
    ThreadComment(String, u64, usize, usize),
    Review(String, u64, usize),
    IssueComment(String, u64, usize),
}

/// The app slug of GitHub Actions suites.
pub const ACTIONS_APP: &str = "github-actions";
/// The workflow a check run joins unless told otherwise.
pub const DEFAULT_WORKFLOW: &str = "CI";
/// The event a workflow run was triggered by unless told otherwise.
pub const DEFAULT_EVENT: &str = "pull_request";
/// Job ids and workflow run ids start this high, like real ones (beyond 32 bits), so a client
/// that parses them into `i32` fails in tests.
pub const JOB_ID_BASE: u64 = 40_000_000_000;
pub const RUN_ID_BASE: u64 = 12_000_000_000;

pub(super) fn b64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

pub(super) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

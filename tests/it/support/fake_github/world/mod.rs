//! The fake GitHub's model: repositories, pull requests, commits and their checks, review
//! threads, reviews, comments, job logs — and the forge semantics the API layers share (merge,
//! auto-merge, branch update, re-run, thread reply and resolve), with GitHub's refusals.
//!
//! Every field is public so a test can set up or inspect anything directly; the builder methods
//! on [`World`] make the common scenarios read as one line each (see the module doc of
//! `fake_github` for the overview).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, SecondsFormat, Utc};

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

/// The whole forge.
#[derive(Debug, Clone)]
pub struct World {
    /// The token every request must present (`Authorization: Bearer …`).
    pub token: String,
    /// The login the token belongs to: `viewer { login }`, author of replies and branch updates.
    pub viewer: String,
    /// The world's clock: stamps everything the builders and mutations create.
    pub now: Time,
    pub repos: BTreeMap<String, Repo>,
    /// Plain-text job logs by job id (= check run `databaseId`).
    pub job_logs: BTreeMap<u64, String>,
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
    pub rate: RateLimit,
    next_id: u64,
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
    pub queues: BTreeMap<String, Vec<super::queue::QueueItem>>,
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
    /// Commit shas, oldest first; the last is the head.
    pub commits: Vec<String>,
    pub labels: Vec<String>,
    /// The real mergeability (what merging acts on).
    pub mergeable: Mergeable,
    /// Quirk: this many more reads of `mergeable` / `mergeStateStatus` answer UNKNOWN (GitHub
    /// still computing) before the real values show.
    pub mergeable_unknown_reads: u32,
    /// Forces `mergeStateStatus` (and what merging acts on) instead of deriving it; cleared when
    /// the head changes.
    pub merge_state_override: Option<MergeState>,
    /// Commits on the base the head lacks.
    pub behind_by: u64,
    pub auto_merge: Option<AutoMerge>,
    pub reviews: Vec<Review>,
    pub threads: Vec<Thread>,
    pub comments: Vec<IssueComment>,
    pub created_at: Time,
    pub merged_at: Option<Time>,
    pub closed_at: Option<Time>,
    pub merge_commit: Option<String>,
}

impl Pr {
    pub fn head_sha(&self) -> &str {
        self.commits.last().map_or("", String::as_str)
    }
}

#[derive(Debug, Clone)]
pub struct Commit {
    pub sha: String,
    pub node_id: String,
    /// Login of the GitHub user the author email maps to; `None` for an unknown email.
    pub author: Option<String>,
    pub committer: Option<String>,
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

fn b64(bytes: &[u8]) -> String {
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

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Default for World {
    fn default() -> Self {
        World::new("owner", "test-token")
    }
}

impl World {
    /// An empty forge whose token `token` belongs to `viewer`.
    pub fn new(viewer: &str, token: &str) -> Self {
        World {
            token: token.to_owned(),
            viewer: viewer.to_owned(),
            now: at(DEFAULT_NOW),
            repos: BTreeMap::new(),
            job_logs: BTreeMap::new(),
            events: Vec::new(),
            held_answers: 0,
            auto_merge_executes: true,
            missing_fields: Vec::new(),
            rate: RateLimit {
                limit: 5000,
                core_used: 0,
                graphql_used: 0,
                reset_epoch: Utc::now().timestamp() + 3600,
            },
            next_id: 0,
        }
    }

    // ── ids ─────────────────────────────────────────────────────────────────────────────────

    fn next(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// A fresh GitHub-style global node id with `prefix` (`PR`, `PRRT`, …).
    pub fn new_node_id(&mut self, prefix: &str) -> String {
        let n = self.next();
        format!(
            "{prefix}_kwDO{}",
            b64(&(n + 0x00A1_0000).to_be_bytes()[3..])
        )
    }

    /// A fresh small database id.
    pub fn new_database_id(&mut self) -> u64 {
        1_000_000 + self.next()
    }

    /// A fresh 40-hex commit sha.
    pub fn new_sha(&mut self) -> String {
        let n = self.next();
        let part = |i: u64| splitmix(n.wrapping_mul(3).wrapping_add(i));
        let mut s = format!("{:016x}{:016x}{:016x}", part(0), part(1), part(2));
        s.truncate(40);
        s
    }

    // ── clock ───────────────────────────────────────────────────────────────────────────────

    pub fn set_now(&mut self, rfc3339: &str) {
        self.now = at(rfc3339);
    }

    pub fn advance(&mut self, secs: i64) {
        self.now += Duration::seconds(secs);
    }

    // ── builders ────────────────────────────────────────────────────────────────────────────

    /// The repository `owner/name`, created with defaults on first use: default branch `main`
    /// (protected, no required checks), auto-merge allowed, every merge method allowed.
    pub fn repo(&mut self, full_name: &str) -> RepoBuilder<'_> {
        assert!(
            full_name.split('/').count() == 2,
            "`{full_name}` is not owner/name"
        );
        if !self.repos.contains_key(full_name) {
            let node_id = self.new_node_id("R");
            let database_id = self.new_database_id();
            let mut protections = BTreeMap::new();
            protections.insert("main".to_owned(), Protection::default());
            self.repos.insert(
                full_name.to_owned(),
                Repo {
                    full_name: full_name.to_owned(),
                    node_id,
                    database_id,
                    default_branch: "main".to_owned(),
                    allow_auto_merge: true,
                    allow_squash: true,
                    allow_merge_commit: true,
                    allow_rebase: true,
                    protections,
                    prs: BTreeMap::new(),
                    commits: BTreeMap::new(),
                    queues: BTreeMap::new(),
                },
            );
        }
        RepoBuilder {
            world: self,
            repo: full_name.to_owned(),
        }
    }

    /// PR `number` of `repo` (both created on first use). A new PR is open, authored by the
    /// viewer, from `feature-N` into the default branch, mergeable, not behind, with one head
    /// commit by its author committed an hour before `now` and no checks.
    pub fn pr(&mut self, repo: &str, number: u64) -> PrBuilder<'_> {
        let exists = self.repo(repo).world.repos[repo].prs.contains_key(&number);
        if !exists {
            let node_id = self.new_node_id("PR");
            let database_id = self.new_database_id();
            let sha = self.new_sha();
            let commit = self.new_commit(
                &sha,
                Some(&self.viewer.clone()),
                self.now - Duration::hours(1),
            );
            let r = self.repos.get_mut(repo).expect("repo just created");
            r.commits.insert(sha.clone(), commit);
            let pr = Pr {
                number,
                node_id,
                database_id,
                title: format!("Change #{number}"),
                body: String::new(),
                state: PrState::Open,
                draft: false,
                author: Some(self.viewer.clone()),
                head_ref: format!("feature-{number}"),
                base_ref: r.default_branch.clone(),
                cross_repository: false,
                commits: vec![sha],
                labels: Vec::new(),
                mergeable: Mergeable::Mergeable,
                mergeable_unknown_reads: 0,
                merge_state_override: None,
                behind_by: 0,
                auto_merge: None,
                reviews: Vec::new(),
                threads: Vec::new(),
                comments: Vec::new(),
                created_at: self.now - Duration::hours(2),
                merged_at: None,
                closed_at: None,
                merge_commit: None,
            };
            self.repos
                .get_mut(repo)
                .expect("repo")
                .prs
                .insert(number, pr);
        }
        PrBuilder {
            world: self,
            repo: repo.to_owned(),
            number,
        }
    }

    fn new_commit(&mut self, sha: &str, login: Option<&str>, when: Time) -> Commit {
        Commit {
            sha: sha.to_owned(),
            node_id: self.new_node_id("C"),
            author: login.map(str::to_owned),
            committer: login.map(str::to_owned),
            authored_at: when,
            committed_at: when,
            message: "Change things".to_owned(),
            parents: Vec::new(),
            suites: Vec::new(),
            statuses: Vec::new(),
        }
    }

    /// `login` pushes a new head commit to the PR now: no checks yet, a cleared merge-state
    /// override, mergeability and auto-merge kept. Returns the new sha.
    pub fn push(&mut self, repo: &str, number: u64, login: &str) -> String {
        self.push_with(repo, number, |c| c.by(login))
    }

    /// Like [`World::push`], shaping the new commit (`|c| c.author("a").committer("b")`).
    pub fn push_with(
        &mut self,
        repo: &str,
        number: u64,
        f: impl for<'c> FnOnce(CommitBuilder<'c>) -> CommitBuilder<'c>,
    ) -> String {
        self.pr(repo, number);
        let sha = self.new_sha();
        let mut commit = self.new_commit(&sha, Some(&self.viewer.clone()), self.now);
        let r = self.repos.get_mut(repo).expect("repo");
        let pr = r.prs.get_mut(&number).expect("pr");
        commit.parents = pr.commits.last().cloned().into_iter().collect();
        pr.commits.push(sha.clone());
        r.commits.insert(sha.clone(), commit);
        pr.merge_state_override = None;
        f(CommitBuilder {
            commit: r.commits.get_mut(&sha).expect("commit"),
        });
        sha
    }

    /// A check run on the PR's head commit, in the Actions workflow `CI` (event
    /// `pull_request`), completed with SUCCESS unless the builder says otherwise.
    pub fn check_run(&mut self, repo: &str, number: u64, name: &str) -> CheckRunBuilder<'_> {
        let sha = self
            .pr(repo, number)
            .world
            .get_pr(repo, number)
            .head_sha()
            .to_owned();
        self.check_run_on(repo, &sha, name)
    }

    /// A check run on any commit of `repo`.
    pub fn check_run_on(&mut self, repo: &str, sha: &str, name: &str) -> CheckRunBuilder<'_> {
        let node_id = self.new_node_id("CR");
        let job_id = JOB_ID_BASE + self.next();
        let now = self.now;
        let run = CheckRun {
            node_id,
            database_id: job_id,
            name: name.to_owned(),
            status: CheckStatus::Completed,
            conclusion: Some(Conclusion::Success),
            details_url: None,
            started_at: Some(now - Duration::minutes(5)),
            completed_at: Some(now - Duration::minutes(1)),
            title: None,
            summary: None,
            text: None,
            annotations: Vec::new(),
        };
        let si = self.suite_index(
            repo,
            sha,
            ACTIONS_APP,
            Some((DEFAULT_WORKFLOW, DEFAULT_EVENT)),
        );
        let suite = &mut self.commit_mut(repo, sha).suites[si];
        suite.runs.push(run);
        let ri = suite.runs.len() - 1;
        let mut b = CheckRunBuilder {
            world: self,
            repo: repo.to_owned(),
            sha: sha.to_owned(),
            suite: si,
            run: ri,
        };
        b.refresh_details_url();
        b
    }

    /// The newest check run called `name` on the PR's head, to change it:
    /// `w.update_check_run("o/r", 1, "test").success()`.
    pub fn update_check_run(&mut self, repo: &str, number: u64, name: &str) -> CheckRunBuilder<'_> {
        let sha = self.get_pr(repo, number).head_sha().to_owned();
        let newest = self
            .commit(repo, &sha)
            .suites
            .iter()
            .enumerate()
            .flat_map(|(si, s)| s.runs.iter().enumerate().map(move |(ri, r)| (si, ri, r)))
            .filter(|(_, _, r)| r.name == name)
            .max_by_key(|(_, _, r)| r.database_id);
        let Some((suite, run, _)) = newest else {
            panic!("no check run `{name}` on the head of {repo}#{number}");
        };
        CheckRunBuilder {
            world: self,
            repo: repo.to_owned(),
            sha,
            suite,
            run,
        }
    }

    /// The index of the suite of `app` (and workflow, event) on a commit, created if missing.
    fn suite_index(
        &mut self,
        repo: &str,
        sha: &str,
        app: &str,
        workflow: Option<(&str, &str)>,
    ) -> usize {
        let found = self.commit(repo, sha).suites.iter().position(|s| {
            s.app == app
                && match (&s.workflow_run, workflow) {
                    (Some(w), Some((name, event))) => w.workflow == name && w.event == event,
                    (None, None) => true,
                    _ => false,
                }
        });
        if let Some(i) = found {
            return i;
        }
        let node_id = self.new_node_id("CS");
        let database_id = self.new_database_id();
        let workflow_run = workflow.map(|(name, event)| WorkflowRun {
            node_id: self.new_node_id("WFR"),
            database_id: RUN_ID_BASE + self.next(),
            workflow: name.to_owned(),
            event: event.to_owned(),
            run_number: self.next(),
        });
        let commit = self.commit_mut(repo, sha);
        commit.suites.push(CheckSuite {
            node_id,
            database_id,
            app: app.to_owned(),
            workflow_run,
            runs: Vec::new(),
        });
        commit.suites.len() - 1
    }

    /// A commit status (`context`) on the PR's head commit, SUCCESS unless the builder says
    /// otherwise.
    pub fn status(&mut self, repo: &str, number: u64, context: &str) -> StatusBuilder<'_> {
        let sha = self
            .pr(repo, number)
            .world
            .get_pr(repo, number)
            .head_sha()
            .to_owned();
        let node_id = self.new_node_id("SC");
        let now = self.now;
        let commit = self.commit_mut(repo, &sha);
        commit.statuses.push(StatusContext {
            node_id,
            context: context.to_owned(),
            state: StatusState::Success,
            target_url: None,
            description: None,
            created_at: now,
        });
        let idx = commit.statuses.len() - 1;
        StatusBuilder {
            world: self,
            repo: repo.to_owned(),
            sha,
            idx,
        }
    }

    /// A new unresolved review thread on `src/lib.rs` line 1, without comments yet.
    pub fn thread(&mut self, repo: &str, number: u64) -> ThreadBuilder<'_> {
        self.pr(repo, number);
        let node_id = self.new_node_id("PRRT");
        let pr = self.get_pr_mut(repo, number);
        pr.threads.push(Thread {
            node_id,
            resolved: false,
            resolved_by: None,
            outdated: false,
            path: "src/lib.rs".to_owned(),
            line: Some(1),
            comments: Vec::new(),
        });
        let idx = pr.threads.len() - 1;
        ThreadBuilder {
            world: self,
            repo: repo.to_owned(),
            number,
            idx,
        }
    }

    /// A submitted review by `author` on the head commit, COMMENTED with an empty body unless
    /// the builder says otherwise.
    pub fn review(&mut self, repo: &str, number: u64, author: &str) -> ReviewBuilder<'_> {
        let head = self
            .pr(repo, number)
            .world
            .get_pr(repo, number)
            .head_sha()
            .to_owned();
        let node_id = self.new_node_id("PRR");
        let database_id = self.new_database_id();
        let now = self.now;
        let pr = self.get_pr_mut(repo, number);
        pr.reviews.push(Review {
            node_id,
            database_id,
            author: Some(author.to_owned()),
            state: ReviewState::Commented,
            body: String::new(),
            submitted_at: Some(now),
            updated_at: now,
            commit: Some(head),
        });
        let idx = pr.reviews.len() - 1;
        ReviewBuilder {
            world: self,
            repo: repo.to_owned(),
            number,
            idx,
        }
    }

    /// A conversation comment by `author`, now.
    pub fn comment(
        &mut self,
        repo: &str,
        number: u64,
        author: &str,
        body: &str,
    ) -> IssueCommentBuilder<'_> {
        self.pr(repo, number);
        let node_id = self.new_node_id("IC");
        let database_id = self.new_database_id();
        let now = self.now;
        let pr = self.get_pr_mut(repo, number);
        pr.comments.push(IssueComment {
            node_id,
            database_id,
            author: Some(author.to_owned()),
            body: body.to_owned(),
            created_at: now,
            updated_at: now,
        });
        let idx = pr.comments.len() - 1;
        IssueCommentBuilder {
            world: self,
            repo: repo.to_owned(),
            number,
            idx,
        }
    }

    /// The base branch `base` of `repo` moves on by `n` commits: every open PR into it is `n`
    /// more behind.
    pub fn advance_base(&mut self, repo: &str, base: &str, n: u64) {
        for pr in self.repo_mut(repo).prs.values_mut() {
            if pr.state == PrState::Open && pr.base_ref == base {
                pr.behind_by += n;
            }
        }
    }

    // ── lookups ─────────────────────────────────────────────────────────────────────────────

    pub fn get_repo(&self, repo: &str) -> &Repo {
        self.repos
            .get(repo)
            .unwrap_or_else(|| panic!("fake GitHub has no repository {repo}"))
    }

    pub fn repo_mut(&mut self, repo: &str) -> &mut Repo {
        self.repos
            .get_mut(repo)
            .unwrap_or_else(|| panic!("fake GitHub has no repository {repo}"))
    }

    pub fn get_pr(&self, repo: &str, number: u64) -> &Pr {
        self.get_repo(repo)
            .prs
            .get(&number)
            .unwrap_or_else(|| panic!("fake GitHub has no PR {repo}#{number}"))
    }

    pub fn get_pr_mut(&mut self, repo: &str, number: u64) -> &mut Pr {
        self.repo_mut(repo)
            .prs
            .get_mut(&number)
            .unwrap_or_else(|| panic!("fake GitHub has no PR {repo}#{number}"))
    }

    pub fn commit(&self, repo: &str, sha: &str) -> &Commit {
        self.get_repo(repo)
            .commits
            .get(sha)
            .unwrap_or_else(|| panic!("fake GitHub has no commit {sha} in {repo}"))
    }

    pub fn commit_mut(&mut self, repo: &str, sha: &str) -> &mut Commit {
        self.repo_mut(repo)
            .commits
            .get_mut(sha)
            .unwrap_or_else(|| panic!("fake GitHub has no commit {sha} in {repo}"))
    }

    /// The PR's head commit.
    pub fn head(&self, repo: &str, number: u64) -> &Commit {
        self.commit(repo, self.get_pr(repo, number).head_sha())
    }

    /// A review thread by node id.
    pub fn thread_by_id(&self, id: &str) -> Option<&Thread> {
        match self.find_node(id)? {
            NodeRef::Thread(repo, number, t) => Some(&self.get_pr(&repo, number).threads[t]),
            _ => None,
        }
    }

    /// A check run by job id.
    pub fn check_run_by_job_id(&self, job_id: u64) -> Option<(&str, &CheckRun)> {
        self.repos.values().find_map(|r| {
            r.commits.values().find_map(|c| {
                c.suites
                    .iter()
                    .flat_map(|s| &s.runs)
                    .find(|run| run.database_id == job_id)
                    .map(|run| (r.full_name.as_str(), run))
            })
        })
    }

    /// Where a node id points, if anywhere.
    pub fn find_node(&self, id: &str) -> Option<NodeRef> {
        for r in self.repos.values() {
            let repo = || r.full_name.clone();
            if r.node_id == id {
                return Some(NodeRef::Repo(repo()));
            }
            for (sha, c) in &r.commits {
                if c.node_id == id {
                    return Some(NodeRef::Commit(repo(), sha.clone()));
                }
                for (si, s) in c.suites.iter().enumerate() {
                    if s.node_id == id {
                        return Some(NodeRef::Suite(repo(), sha.clone(), si));
                    }
                    if s.workflow_run.as_ref().is_some_and(|w| w.node_id == id) {
                        return Some(NodeRef::WorkflowRun(repo(), sha.clone(), si));
                    }
                    if let Some(ri) = s.runs.iter().position(|run| run.node_id == id) {
                        return Some(NodeRef::Run(repo(), sha.clone(), si, ri));
                    }
                }
                if let Some(i) = c.statuses.iter().position(|s| s.node_id == id) {
                    return Some(NodeRef::StatusContext(repo(), sha.clone(), i));
                }
            }
            for (n, pr) in &r.prs {
                if pr.node_id == id {
                    return Some(NodeRef::Pr(repo(), *n));
                }
                for (ti, t) in pr.threads.iter().enumerate() {
                    if t.node_id == id {
                        return Some(NodeRef::Thread(repo(), *n, ti));
                    }
                    if let Some(ci) = t.comments.iter().position(|c| c.node_id == id) {
                        return Some(NodeRef::ThreadComment(repo(), *n, ti, ci));
                    }
                }
                if let Some(i) = pr.reviews.iter().position(|x| x.node_id == id) {
                    return Some(NodeRef::Review(repo(), *n, i));
                }
                if let Some(i) = pr.comments.iter().position(|x| x.node_id == id) {
                    return Some(NodeRef::IssueComment(repo(), *n, i));
                }
            }
        }
        None
    }

    /// The PR a node belongs to (the PR itself, or its threads, comments, reviews, commits).
    pub fn pr_of_node(&self, id: &str) -> Option<(String, u64)> {
        match self.find_node(id)? {
            NodeRef::Pr(r, n)
            | NodeRef::Thread(r, n, _)
            | NodeRef::ThreadComment(r, n, ..)
            | NodeRef::Review(r, n, _)
            | NodeRef::IssueComment(r, n, _) => Some((r, n)),
            NodeRef::Commit(r, sha)
            | NodeRef::Suite(r, sha, _)
            | NodeRef::Run(r, sha, ..)
            | NodeRef::WorkflowRun(r, sha, _)
            | NodeRef::StatusContext(r, sha, _) => self.pr_of_commit(&r, &sha).map(|n| (r, n)),
            NodeRef::Repo(_) => None,
        }
    }

    /// The PR whose commits include `sha` (the newest such PR).
    pub fn pr_of_commit(&self, repo: &str, sha: &str) -> Option<u64> {
        self.repos
            .get(repo)?
            .prs
            .values()
            .rev()
            .find(|p| p.commits.iter().any(|c| c == sha))
            .map(|p| p.number)
    }

    /// The PR a workflow run (run id) belongs to.
    pub fn pr_of_run(&self, repo: &str, run_id: u64) -> Option<u64> {
        let r = self.repos.get(repo)?;
        let sha = r.commits.iter().find_map(|(sha, c)| {
            c.suites
                .iter()
                .any(|s| {
                    s.workflow_run
                        .as_ref()
                        .is_some_and(|w| w.database_id == run_id)
                })
                .then_some(sha)
        })?;
        self.pr_of_commit(repo, sha)
    }

    // ── derived state ───────────────────────────────────────────────────────────────────────

    /// The outcome of each check on the PR's head (newest check run per name, newest status
    /// per context).
    pub fn head_outcomes(&self, repo: &str, number: u64) -> BTreeMap<String, Outcome> {
        let sha = self.get_pr(repo, number).head_sha().to_owned();
        self.commit_outcomes(repo, &sha)
    }

    /// The outcome of each check on commit `sha` of `repo`.
    pub fn commit_outcomes(&self, repo: &str, sha: &str) -> BTreeMap<String, Outcome> {
        let head = self.commit(repo, sha);
        let mut newest: BTreeMap<String, (u64, Outcome)> = BTreeMap::new();
        for run in head.suites.iter().flat_map(|s| &s.runs) {
            let e = newest
                .entry(run.name.clone())
                .or_insert((0, Outcome::Pending));
            if run.database_id >= e.0 {
                *e = (run.database_id, run.outcome());
            }
        }
        let mut out: BTreeMap<String, Outcome> =
            newest.into_iter().map(|(k, (_, o))| (k, o)).collect();
        for s in &head.statuses {
            out.insert(s.context.clone(), s.outcome());
        }
        out
    }

    /// The PR's true `mergeStateStatus`: the override if set, else derived the way GitHub does
    /// (draft → DRAFT, conflict → DIRTY, required checks, approvals or conversations missing →
    /// BLOCKED (which masks BEHIND), behind with strict protection → BEHIND, any other check
    /// failing or pending → UNSTABLE, else CLEAN).
    pub fn merge_state(&self, repo: &str, number: u64) -> MergeState {
        let r = self.get_repo(repo);
        let pr = self.get_pr(repo, number);
        if let Some(s) = pr.merge_state_override {
            return s;
        }
        if pr.state != PrState::Open {
            return MergeState::Unknown;
        }
        if pr.draft {
            return MergeState::Draft;
        }
        match pr.mergeable {
            Mergeable::Conflicting => return MergeState::Dirty,
            Mergeable::Unknown => return MergeState::Unknown,
            Mergeable::Mergeable => {}
        }
        let outcomes = self.head_outcomes(repo, number);
        if let Some(p) = r.protections.get(&pr.base_ref) {
            let checks_ok = p
                .required_checks
                .iter()
                .all(|c| outcomes.get(c) == Some(&Outcome::Passed));
            let mut latest: BTreeMap<&str, ReviewState> = BTreeMap::new();
            for review in &pr.reviews {
                if let Some(a) = &review.author
                    && review.state != ReviewState::Commented
                    && review.state != ReviewState::Pending
                {
                    latest.insert(a, review.state);
                }
            }
            let approvals = latest
                .values()
                .filter(|s| **s == ReviewState::Approved)
                .count() as u32;
            let changes_requested = latest.values().any(|s| *s == ReviewState::ChangesRequested);
            let reviews_ok = approvals >= p.required_approvals
                && !(p.required_approvals > 0 && changes_requested);
            let threads_ok = !p.require_resolved_threads || pr.threads.iter().all(|t| t.resolved);
            if !(checks_ok && reviews_ok && threads_ok) {
                return MergeState::Blocked;
            }
            if p.strict && pr.behind_by > 0 {
                return MergeState::Behind;
            }
        }
        if outcomes.values().any(|o| *o != Outcome::Passed) {
            return MergeState::Unstable;
        }
        MergeState::Clean
    }

    // ── forge semantics (shared by the GraphQL and REST layers) ─────────────────────────────

    fn pr_by_node_id(&self, id: &str) -> Result<(String, u64), ApiError> {
        match self.find_node(id) {
            Some(NodeRef::Pr(r, n)) => Ok((r, n)),
            _ => Err(not_a_node(id)),
        }
    }

    /// `enablePullRequestAutoMerge`.
    pub fn enable_auto_merge(
        &mut self,
        pr_id: &str,
        method: MergeMethod,
        expected_head: Option<&str>,
    ) -> Result<(String, u64), ApiError> {
        let (repo, number) = self.pr_by_node_id(pr_id)?;
        let r = self.get_repo(&repo);
        let pr = self.get_pr(&repo, number);
        let refuse = |m: &str| Err(ApiError::Unprocessable(format!("Pull request {m}")));
        if pr.state != PrState::Open {
            return refuse("Pull request is closed");
        }
        if !r.allow_auto_merge {
            return refuse("Auto merge is not allowed for this repository");
        }
        if !r.protections.contains_key(&pr.base_ref) {
            return refuse("Protected branch rules not configured for this branch");
        }
        if expected_head.is_some_and(|h| h != pr.head_sha()) {
            return refuse("Head branch was modified. Review and try the merge again.");
        }
        if !r.method_allowed(method) {
            return refuse(&format!(
                "Merge method {} is not allowed for this repository",
                method.as_rest()
            ));
        }
        let queued_base = r
            .protections
            .get(&pr.base_ref)
            .is_some_and(|p| p.merge_queue);
        if pr.auto_merge.is_none() && !queued_base {
            match self.merge_state(&repo, number) {
                MergeState::Clean => return refuse("Pull request is in clean status"),
                MergeState::Unstable => return refuse("Pull request is in unstable status"),
                MergeState::HasHooks => return refuse("Pull request is in has_hooks status"),
                MergeState::Draft => return refuse("Pull request is in draft status"),
                _ => {}
            }
        }
        let am = AutoMerge {
            method,
            enabled_at: self.now,
            enabled_by: self.viewer.clone(),
        };
        self.get_pr_mut(&repo, number).auto_merge = Some(am);
        self.events.push(Event::AutoMergeEnabled {
            repo: repo.clone(),
            number,
            method,
        });
        Ok((repo, number))
    }

    /// `disablePullRequestAutoMerge`.
    pub fn disable_auto_merge(&mut self, pr_id: &str) -> Result<(String, u64), ApiError> {
        let (repo, number) = self.pr_by_node_id(pr_id)?;
        let pr = self.get_pr_mut(&repo, number);
        if pr.auto_merge.take().is_none() {
            return Err(ApiError::Unprocessable(
                "Can't disable auto-merge for this pull request.".into(),
            ));
        }
        self.events.push(Event::AutoMergeDisabled {
            repo: repo.clone(),
            number,
        });
        Ok((repo, number))
    }

    /// `PUT /repos/{o}/{r}/pulls/{n}/merge`. Returns the merge commit sha.
    pub fn merge(
        &mut self,
        repo: &str,
        number: u64,
        sha: Option<&str>,
        method: MergeMethod,
    ) -> Result<String, ApiError> {
        let r = self
            .repos
            .get(repo)
            .ok_or_else(|| ApiError::NotFound("Not Found".into()))?;
        let pr = r
            .prs
            .get(&number)
            .ok_or_else(|| ApiError::NotFound("Not Found".into()))?;
        let not_mergeable = || ApiError::NotAllowed("Pull Request is not mergeable".into());
        if pr.state != PrState::Open {
            return Err(not_mergeable());
        }
        if r.protections
            .get(&pr.base_ref)
            .is_some_and(|p| p.merge_queue)
        {
            return Err(ApiError::NotAllowed(
                super::queue::DIRECT_MERGE_REFUSED.into(),
            ));
        }
        if sha.is_some_and(|s| s != pr.head_sha()) {
            return Err(ApiError::Conflict(
                "Head branch was modified. Review and try the merge again.".into(),
            ));
        }
        if !r.method_allowed(method) {
            return Err(ApiError::NotAllowed(
                match method {
                    MergeMethod::Merge => "Merge commits are not allowed on this repository.",
                    MergeMethod::Squash => "Squash merges are not allowed on this repository.",
                    MergeMethod::Rebase => "Rebase merges are not allowed on this repository.",
                }
                .into(),
            ));
        }
        if pr.draft || pr.mergeable == Mergeable::Conflicting {
            return Err(not_mergeable());
        }
        match self.merge_state(repo, number) {
            MergeState::Blocked | MergeState::Behind | MergeState::Dirty | MergeState::Draft => {
                return Err(not_mergeable());
            }
            _ => {}
        }
        Ok(self.do_merge(repo, number, method, false))
    }

    /// The queue merges the head of its line.
    pub(super) fn merge_from_queue(&mut self, repo: &str, number: u64, method: MergeMethod) {
        self.do_merge(repo, number, method, true);
    }

    /// A new commit (for the merge queue's merge groups).
    pub(super) fn new_commit_pub(&mut self, sha: &str, login: Option<&str>, when: Time) -> Commit {
        self.new_commit(sha, login, when)
    }

    fn do_merge(
        &mut self,
        repo: &str,
        number: u64,
        method: MergeMethod,
        auto_merge: bool,
    ) -> String {
        let sha = self.new_sha();
        let viewer = self.viewer.clone();
        let commit = self.new_commit(&sha, Some(&viewer), self.now);
        let now = self.now;
        let r = self.repo_mut(repo);
        r.commits.insert(sha.clone(), commit);
        let pr = r.prs.get_mut(&number).expect("pr");
        let head = pr.head_sha().to_owned();
        pr.state = PrState::Merged;
        pr.merged_at = Some(now);
        pr.closed_at = Some(now);
        pr.merge_commit = Some(sha.clone());
        pr.auto_merge = None;
        let base = pr.base_ref.clone();
        self.advance_base(repo, &base, 1);
        self.events.push(Event::Merged {
            repo: repo.to_owned(),
            number,
            head,
            method,
            auto_merge,
        });
        sha
    }

    /// GitHub's auto-merge: merge every armed open PR that reads CLEAN or UNSTABLE now.
    pub fn settle(&mut self) {
        if !self.auto_merge_executes {
            return;
        }
        self.settle_queues();
        loop {
            let ready = self.repos.values().find_map(|r| {
                r.prs.values().find_map(|p| {
                    let am = p.auto_merge.as_ref()?;
                    (p.state == PrState::Open
                        && !self.queue_required(&r.full_name, &p.base_ref)
                        && matches!(
                            self.merge_state(&r.full_name, p.number),
                            MergeState::Clean | MergeState::Unstable | MergeState::HasHooks
                        ))
                    .then(|| (r.full_name.clone(), p.number, am.method))
                })
            });
            let Some((repo, number, method)) = ready else {
                return;
            };
            self.do_merge(&repo, number, method, true);
        }
    }

    /// `updatePullRequestBranch` / `PUT …/update-branch`. Returns the new head sha.
    pub fn update_branch(
        &mut self,
        repo: &str,
        number: u64,
        expected_head: Option<&str>,
        method: UpdateMethod,
    ) -> Result<String, ApiError> {
        let pr = self
            .repos
            .get(repo)
            .and_then(|r| r.prs.get(&number))
            .ok_or_else(|| ApiError::NotFound("Not Found".into()))?;
        let refuse = |m: &str| Err(ApiError::Unprocessable(m.to_owned()));
        if expected_head.is_some_and(|h| h != pr.head_sha()) {
            return refuse("expected head sha didn't match current head ref.");
        }
        if pr.state != PrState::Open {
            return refuse("Pull request is closed.");
        }
        if pr.mergeable == Mergeable::Conflicting {
            return refuse("merge conflict between base and head");
        }
        if pr.behind_by == 0 {
            return refuse("There are no new commits on the base branch.");
        }
        let old_head = pr.head_sha().to_owned();
        let old_commits = pr.commits.clone();
        let viewer = self.viewer.clone();
        let now = self.now;
        let mut new_commits = Vec::new();
        match method {
            UpdateMethod::Merge => {
                let sha = self.new_sha();
                let mut c = self.new_commit(&sha, Some(&viewer), now);
                "Merge branch into head".clone_into(&mut c.message);
                c.parents = vec![old_head.clone()];
                self.repo_mut(repo).commits.insert(sha.clone(), c);
                new_commits.extend(old_commits);
                new_commits.push(sha);
            }
            UpdateMethod::Rebase => {
                let mut parent: Vec<String> = Vec::new();
                for old in old_commits {
                    let sha = self.new_sha();
                    let node_id = self.new_node_id("C");
                    let orig = self.commit(repo, &old).clone();
                    let c = Commit {
                        sha: sha.clone(),
                        node_id,
                        committer: Some(viewer.clone()),
                        committed_at: now,
                        parents: std::mem::replace(&mut parent, vec![sha.clone()]),
                        suites: Vec::new(),
                        statuses: Vec::new(),
                        ..orig
                    };
                    self.repo_mut(repo).commits.insert(sha.clone(), c);
                    new_commits.push(sha);
                }
            }
        }
        let new_head = new_commits.last().cloned().expect("a PR has commits");
        let pr = self.get_pr_mut(repo, number);
        pr.commits = new_commits;
        pr.behind_by = 0;
        pr.merge_state_override = None;
        self.events.push(Event::BranchUpdated {
            repo: repo.to_owned(),
            number,
            method,
            old_head,
            new_head: new_head.clone(),
        });
        Ok(new_head)
    }

    /// `POST …/actions/runs/{run_id}/rerun-failed-jobs`: failed runs of the workflow run go
    /// back to QUEUED (same job ids). Refused while any of its jobs is still running.
    pub fn rerun_failed_jobs(&mut self, repo: &str, run_id: u64) -> Result<Vec<u64>, ApiError> {
        let r = self
            .repos
            .get_mut(repo)
            .ok_or_else(|| ApiError::NotFound("Not Found".into()))?;
        let mut suites: Vec<&mut CheckSuite> = r
            .commits
            .values_mut()
            .flat_map(|c| c.suites.iter_mut())
            .filter(|s| {
                s.workflow_run
                    .as_ref()
                    .is_some_and(|w| w.database_id == run_id)
            })
            .collect();
        if suites.is_empty() {
            return Err(ApiError::NotFound("Not Found".into()));
        }
        if suites
            .iter()
            .flat_map(|s| &s.runs)
            .any(|run| run.status != CheckStatus::Completed)
        {
            return Err(ApiError::Forbidden(
                "This workflow is already running".into(),
            ));
        }
        let mut jobs = Vec::new();
        for run in suites.iter_mut().flat_map(|s| s.runs.iter_mut()) {
            if run.conclusion.is_some_and(Conclusion::is_failure) {
                run.status = CheckStatus::Queued;
                run.conclusion = None;
                run.started_at = None;
                run.completed_at = None;
                jobs.push(run.database_id);
            }
        }
        self.events.push(Event::RerunFailedJobs {
            repo: repo.to_owned(),
            run_id,
            jobs: jobs.clone(),
        });
        Ok(jobs)
    }

    /// `addPullRequestReviewThreadReply`: the viewer answers. Returns the new comment's node.
    pub fn reply_to_thread(&mut self, thread_id: &str, body: &str) -> Result<NodeRef, ApiError> {
        let Some(NodeRef::Thread(repo, number, ti)) = self.find_node(thread_id) else {
            return Err(not_a_node(thread_id));
        };
        if body.trim().is_empty() {
            return Err(ApiError::Unprocessable("Body can't be blank".into()));
        }
        let node_id = self.new_node_id("PRRC");
        let database_id = self.new_database_id();
        let (viewer, now) = (self.viewer.clone(), self.now);
        let thread = &mut self.get_pr_mut(&repo, number).threads[ti];
        thread.comments.push(ThreadComment {
            node_id,
            database_id,
            author: Some(viewer),
            body: body.to_owned(),
            created_at: now,
            updated_at: now,
        });
        let ci = thread.comments.len() - 1;
        self.events.push(Event::ThreadReply {
            repo: repo.clone(),
            number,
            thread_id: thread_id.to_owned(),
            body: body.to_owned(),
        });
        Ok(NodeRef::ThreadComment(repo, number, ti, ci))
    }

    /// `resolveReviewThread`.
    pub fn resolve_thread(&mut self, thread_id: &str) -> Result<NodeRef, ApiError> {
        let Some(NodeRef::Thread(repo, number, ti)) = self.find_node(thread_id) else {
            return Err(not_a_node(thread_id));
        };
        let viewer = self.viewer.clone();
        let thread = &mut self.get_pr_mut(&repo, number).threads[ti];
        thread.resolved = true;
        thread.resolved_by = Some(viewer);
        self.events.push(Event::ThreadResolved {
            repo: repo.clone(),
            number,
            thread_id: thread_id.to_owned(),
        });
        Ok(NodeRef::Thread(repo, number, ti))
    }

    // ── counts for assertions ───────────────────────────────────────────────────────────────

    /// Merges of the PR (by the client's `PUT …/merge` or by auto-merge).
    pub fn merges(&self, repo: &str, number: u64) -> usize {
        self.count(
            |e| matches!(e, Event::Merged { repo: r, number: n, .. } if r == repo && *n == number),
        )
    }

    /// `rerun-failed-jobs` calls that succeeded for the workflow run.
    pub fn reruns(&self, run_id: u64) -> usize {
        self.count(|e| matches!(e, Event::RerunFailedJobs { run_id: r, .. } if *r == run_id))
    }

    pub fn auto_merge_enables(&self, repo: &str, number: u64) -> usize {
        self.count(|e| matches!(e, Event::AutoMergeEnabled { repo: r, number: n, .. } if r == repo && *n == number))
    }

    pub fn branch_updates(&self, repo: &str, number: u64) -> usize {
        self.count(|e| matches!(e, Event::BranchUpdated { repo: r, number: n, .. } if r == repo && *n == number))
    }

    /// Bodies of the replies posted to a thread through the API.
    pub fn replies(&self, thread_id: &str) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::ThreadReply {
                    thread_id: t, body, ..
                } if t == thread_id => Some(body.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn count(&self, f: impl Fn(&Event) -> bool) -> usize {
        self.events.iter().filter(|e| f(e)).count()
    }

    /// The set of `(repo, number)` of every PR, for iteration in tests.
    pub fn all_prs(&self) -> BTreeSet<(String, u64)> {
        self.repos
            .values()
            .flat_map(|r| r.prs.keys().map(|n| (r.full_name.clone(), *n)))
            .collect()
    }
}

fn not_a_node(id: &str) -> ApiError {
    ApiError::NotFound(format!(
        "Could not resolve to a node with the global id of '{id}'"
    ))
}

// ── builders ────────────────────────────────────────────────────────────────────────────────

/// Shapes a repository; from [`World::repo`]. Settings on "the default branch" act on the
/// default branch as it is when called.
#[derive(Debug)]
pub struct RepoBuilder<'w> {
    world: &'w mut World,
    repo: String,
}

impl RepoBuilder<'_> {
    fn r(&mut self) -> &mut Repo {
        self.world.repo_mut(&self.repo)
    }

    fn protection(&mut self) -> &mut Protection {
        let r = self.r();
        let branch = r.default_branch.clone();
        r.protections.entry(branch).or_default()
    }

    /// Renames the default branch (its protection moves with it).
    pub fn default_branch(mut self, name: &str) -> Self {
        let r = self.r();
        if let Some(p) = r.protections.remove(&r.default_branch) {
            r.protections.insert(name.to_owned(), p);
        }
        name.clone_into(&mut r.default_branch);
        self
    }

    pub fn auto_merge_allowed(mut self, allowed: bool) -> Self {
        self.r().allow_auto_merge = allowed;
        self
    }

    /// Allows exactly these merge methods.
    pub fn merge_methods(mut self, methods: &[MergeMethod]) -> Self {
        let r = self.r();
        r.allow_merge_commit = methods.contains(&MergeMethod::Merge);
        r.allow_squash = methods.contains(&MergeMethod::Squash);
        r.allow_rebase = methods.contains(&MergeMethod::Rebase);
        self
    }

    /// The default branch has no protection rules at all.
    pub fn unprotected(mut self) -> Self {
        let r = self.r();
        let b = r.default_branch.clone();
        r.protections.remove(&b);
        self
    }

    /// Required checks (check-run names or status contexts) on the default branch.
    pub fn required_checks(mut self, names: &[&str]) -> Self {
        self.protection().required_checks = names.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    /// "Require merge queue" on the default branch.
    pub fn merge_queue(mut self) -> Self {
        self.protection().merge_queue = true;
        self
    }

    /// "Require branches to be up to date before merging" on the default branch.
    pub fn strict(mut self) -> Self {
        self.protection().strict = true;
        self
    }

    pub fn required_approvals(mut self, n: u32) -> Self {
        self.protection().required_approvals = n;
        self
    }

    pub fn require_resolved_threads(mut self) -> Self {
        self.protection().require_resolved_threads = true;
        self
    }

    /// Protection rules for any branch.
    pub fn protect(mut self, branch: &str, protection: Protection) -> Self {
        self.r().protections.insert(branch.to_owned(), protection);
        self
    }
}

/// Shapes a pull request; from [`World::pr`].
#[derive(Debug)]
pub struct PrBuilder<'w> {
    world: &'w mut World,
    repo: String,
    number: u64,
}

impl PrBuilder<'_> {
    fn p(&mut self) -> &mut Pr {
        self.world.get_pr_mut(&self.repo, self.number)
    }

    pub fn title(mut self, t: &str) -> Self {
        t.clone_into(&mut self.p().title);
        self
    }

    pub fn body(mut self, b: &str) -> Self {
        b.clone_into(&mut self.p().body);
        self
    }

    /// The PR's author; while the PR has only its first commit, that commit's author and
    /// committer too.
    pub fn author(mut self, login: &str) -> Self {
        let p = self.p();
        p.author = Some(login.to_owned());
        if p.commits.len() == 1 {
            let sha = p.commits[0].clone();
            let c = self.world.commit_mut(&self.repo, &sha);
            c.author = Some(login.to_owned());
            c.committer = Some(login.to_owned());
        }
        self
    }

    /// An author whose account is gone (`author: null`).
    pub fn ghost_author(mut self) -> Self {
        self.p().author = None;
        self
    }

    pub fn draft(mut self) -> Self {
        self.p().draft = true;
        self
    }

    pub fn ready(mut self) -> Self {
        self.p().draft = false;
        self
    }

    pub fn closed(mut self) -> Self {
        let now = self.world.now;
        let p = self.p();
        p.state = PrState::Closed;
        p.closed_at = Some(now);
        p.auto_merge = None;
        self
    }

    /// Merged outside the client's doing (no event is recorded).
    pub fn merged(mut self) -> Self {
        let now = self.world.now;
        let sha = self.world.new_sha();
        let p = self.p();
        p.state = PrState::Merged;
        p.merged_at = Some(now);
        p.closed_at = Some(now);
        p.merge_commit = Some(sha);
        p.auto_merge = None;
        self
    }

    pub fn reopened(mut self) -> Self {
        let p = self.p();
        p.state = PrState::Open;
        p.closed_at = None;
        p.merged_at = None;
        self
    }

    pub fn head_ref(mut self, name: &str) -> Self {
        name.clone_into(&mut self.p().head_ref);
        self
    }

    pub fn base_ref(mut self, name: &str) -> Self {
        name.clone_into(&mut self.p().base_ref);
        self
    }

    pub fn cross_repository(mut self) -> Self {
        self.p().cross_repository = true;
        self
    }

    pub fn label(mut self, name: &str) -> Self {
        self.p().labels.push(name.to_owned());
        self
    }

    pub fn labels(mut self, names: &[&str]) -> Self {
        self.p().labels = names.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    pub fn mergeable(mut self, m: Mergeable) -> Self {
        self.p().mergeable = m;
        self
    }

    /// Conflicts with its base: `mergeable` CONFLICTING, state DIRTY.
    pub fn conflicting(self) -> Self {
        self.mergeable(Mergeable::Conflicting)
    }

    /// The next `reads` GraphQL reads of `mergeable` / `mergeStateStatus` answer UNKNOWN.
    pub fn mergeable_unknown_for(mut self, reads: u32) -> Self {
        self.p().mergeable_unknown_reads = reads;
        self
    }

    /// The base has `n` commits the head lacks.
    pub fn behind(mut self, n: u64) -> Self {
        self.p().behind_by = n;
        self
    }

    /// Forces `mergeStateStatus` (until the head changes).
    pub fn merge_state(mut self, s: MergeState) -> Self {
        self.p().merge_state_override = Some(s);
        self
    }

    /// Auto-merge already enabled (by the viewer, now) with `method`.
    pub fn auto_merge(mut self, method: MergeMethod) -> Self {
        let (now, viewer) = (self.world.now, self.world.viewer.clone());
        self.p().auto_merge = Some(AutoMerge {
            method,
            enabled_at: now,
            enabled_by: viewer,
        });
        self
    }

    /// Shapes the current head commit: `.head_commit(|c| c.author("fixer-bot"))`.
    pub fn head_commit(
        mut self,
        f: impl for<'c> FnOnce(CommitBuilder<'c>) -> CommitBuilder<'c>,
    ) -> Self {
        let sha = self.p().head_sha().to_owned();
        f(CommitBuilder {
            commit: self.world.commit_mut(&self.repo, &sha),
        });
        self
    }

    pub fn node_id(mut self) -> String {
        self.p().node_id.clone()
    }

    pub fn head_sha(mut self) -> String {
        self.p().head_sha().to_owned()
    }
}

/// Shapes a commit; handed to the closures of [`PrBuilder::head_commit`] and
/// [`World::push_with`].
#[derive(Debug)]
pub struct CommitBuilder<'c> {
    commit: &'c mut Commit,
}

impl CommitBuilder<'_> {
    /// Author (the GitHub user of the author email); `None`-able through [`Self::unknown_author`].
    pub fn author(self, login: &str) -> Self {
        self.commit.author = Some(login.to_owned());
        self
    }

    pub fn committer(self, login: &str) -> Self {
        self.commit.committer = Some(login.to_owned());
        self
    }

    /// Both author and committer.
    pub fn by(self, login: &str) -> Self {
        self.author(login).committer(login)
    }

    /// An author email that maps to no GitHub user (`author { user: null }`).
    pub fn unknown_author(self) -> Self {
        self.commit.author = None;
        self
    }

    pub fn committed_at(self, t: Time) -> Self {
        self.commit.committed_at = t;
        self
    }

    pub fn authored_at(self, t: Time) -> Self {
        self.commit.authored_at = t;
        self
    }

    pub fn message(self, m: &str) -> Self {
        m.clone_into(&mut self.commit.message);
        self
    }

    pub fn sha(&self) -> &str {
        &self.commit.sha
    }
}

/// Shapes a check run; from [`World::check_run`].
#[derive(Debug)]
pub struct CheckRunBuilder<'w> {
    world: &'w mut World,
    repo: String,
    sha: String,
    suite: usize,
    run: usize,
}

impl CheckRunBuilder<'_> {
    fn s(&mut self) -> &mut CheckSuite {
        &mut self.world.commit_mut(&self.repo, &self.sha).suites[self.suite]
    }

    fn r(&mut self) -> &mut CheckRun {
        let run = self.run;
        &mut self.s().runs[run]
    }

    fn refresh_details_url(&mut self) {
        let repo = self.repo.clone();
        let ri = self.run;
        let s = self.s();
        let url = s.workflow_run.as_ref().map(|w| w.database_id);
        let job = s.runs[ri].database_id;
        self.r().details_url = Some(match url {
            Some(run_id) => format!("https://github.com/{repo}/actions/runs/{run_id}/job/{job}"),
            None => format!("https://ci.example.com/{repo}/jobs/{job}"),
        });
    }

    /// Completed with `c`.
    pub fn conclusion(mut self, c: Conclusion) -> Self {
        let now = self.world.now;
        let r = self.r();
        r.status = CheckStatus::Completed;
        r.conclusion = Some(c);
        r.started_at.get_or_insert(now - Duration::minutes(5));
        r.completed_at = Some(now - Duration::minutes(1));
        self
    }

    pub fn success(self) -> Self {
        self.conclusion(Conclusion::Success)
    }

    pub fn failure(self) -> Self {
        self.conclusion(Conclusion::Failure)
    }

    pub fn cancelled(self) -> Self {
        self.conclusion(Conclusion::Cancelled)
    }

    pub fn timed_out(self) -> Self {
        self.conclusion(Conclusion::TimedOut)
    }

    pub fn skipped(self) -> Self {
        self.conclusion(Conclusion::Skipped)
    }

    pub fn neutral(self) -> Self {
        self.conclusion(Conclusion::Neutral)
    }

    /// Not completed: `status` is `s`, no conclusion.
    pub fn status(mut self, s: CheckStatus) -> Self {
        let now = self.world.now;
        let r = self.r();
        r.status = s;
        r.conclusion = None;
        r.completed_at = None;
        r.started_at = (s == CheckStatus::InProgress).then(|| now - Duration::minutes(2));
        self
    }

    pub fn queued(self) -> Self {
        self.status(CheckStatus::Queued)
    }

    pub fn in_progress(self) -> Self {
        self.status(CheckStatus::InProgress)
    }

    pub fn title(mut self, t: &str) -> Self {
        self.r().title = Some(t.to_owned());
        self
    }

    pub fn summary(mut self, s: &str) -> Self {
        self.r().summary = Some(s.to_owned());
        self
    }

    pub fn text(mut self, s: &str) -> Self {
        self.r().text = Some(s.to_owned());
        self
    }

    pub fn annotation(
        mut self,
        level: AnnotationLevel,
        path: &str,
        line: u64,
        message: &str,
    ) -> Self {
        self.r().annotations.push(Annotation {
            level,
            path: path.to_owned(),
            line,
            title: None,
            message: message.to_owned(),
        });
        self
    }

    pub fn details_url(mut self, url: &str) -> Self {
        self.r().details_url = Some(url.to_owned());
        self
    }

    pub fn started_at(mut self, t: Time) -> Self {
        self.r().started_at = Some(t);
        self
    }

    pub fn completed_at(mut self, t: Time) -> Self {
        self.r().completed_at = Some(t);
        self
    }

    /// The job's plain-text log (served by `GET …/actions/jobs/{id}/logs`).
    pub fn log(mut self, text: &str) -> Self {
        let id = self.r().database_id;
        self.world.job_logs.insert(id, text.to_owned());
        self
    }

    fn rehome(mut self, app: &str, workflow: Option<(&str, &str)>) -> Self {
        let ri = self.run;
        let run = self.s().runs.remove(ri);
        if self.s().runs.is_empty() {
            let si = self.suite;
            self.world
                .commit_mut(&self.repo, &self.sha)
                .suites
                .remove(si);
        }
        let si = self.world.suite_index(&self.repo, &self.sha, app, workflow);
        self.suite = si;
        let s = self.s();
        s.runs.push(run);
        self.run = s.runs.len() - 1;
        self.refresh_details_url();
        self
    }

    fn workflow_and_event(&mut self) -> (String, String) {
        self.s().workflow_run.as_ref().map_or_else(
            || (DEFAULT_WORKFLOW.to_owned(), DEFAULT_EVENT.to_owned()),
            |w| (w.workflow.clone(), w.event.clone()),
        )
    }

    /// Moves the run into the Actions workflow `name` (its own workflow run).
    pub fn workflow(mut self, name: &str) -> Self {
        let (_, event) = self.workflow_and_event();
        self.rehome(ACTIONS_APP, Some((name, &event)))
    }

    /// The event that triggered the run's workflow run (`pull_request`, `push`, …).
    pub fn event(mut self, event: &str) -> Self {
        let (name, _) = self.workflow_and_event();
        self.rehome(ACTIONS_APP, Some((&name, event)))
    }

    /// Reported by another app (no workflow run, no re-run through Actions).
    pub fn app(self, slug: &str) -> Self {
        self.rehome(slug, None)
    }

    /// The job id (check run `databaseId`).
    pub fn job_id(mut self) -> u64 {
        self.r().database_id
    }

    /// The workflow run id, for an Actions run.
    pub fn run_id(mut self) -> Option<u64> {
        self.s().workflow_run.as_ref().map(|w| w.database_id)
    }

    pub fn node_id(mut self) -> String {
        self.r().node_id.clone()
    }
}

/// Shapes a commit status; from [`World::status`].
#[derive(Debug)]
pub struct StatusBuilder<'w> {
    world: &'w mut World,
    repo: String,
    sha: String,
    idx: usize,
}

impl StatusBuilder<'_> {
    fn s(&mut self) -> &mut StatusContext {
        let idx = self.idx;
        &mut self.world.commit_mut(&self.repo, &self.sha).statuses[idx]
    }

    pub fn state(mut self, s: StatusState) -> Self {
        self.s().state = s;
        self
    }

    pub fn success(self) -> Self {
        self.state(StatusState::Success)
    }

    pub fn failure(self) -> Self {
        self.state(StatusState::Failure)
    }

    pub fn error(self) -> Self {
        self.state(StatusState::Error)
    }

    pub fn pending(self) -> Self {
        self.state(StatusState::Pending)
    }

    pub fn target_url(mut self, url: &str) -> Self {
        self.s().target_url = Some(url.to_owned());
        self
    }

    pub fn description(mut self, d: &str) -> Self {
        self.s().description = Some(d.to_owned());
        self
    }

    pub fn at(mut self, t: Time) -> Self {
        self.s().created_at = t;
        self
    }
}

/// Shapes a review thread; from [`World::thread`].
#[derive(Debug)]
pub struct ThreadBuilder<'w> {
    world: &'w mut World,
    repo: String,
    number: u64,
    idx: usize,
}

impl ThreadBuilder<'_> {
    fn t(&mut self) -> &mut Thread {
        let idx = self.idx;
        &mut self.world.get_pr_mut(&self.repo, self.number).threads[idx]
    }

    /// A comment by `author`, now.
    pub fn comment(self, author: &str, body: &str) -> Self {
        let now = self.world.now;
        self.comment_at(author, body, now)
    }

    pub fn comment_at(mut self, author: &str, body: &str, t: Time) -> Self {
        let node_id = self.world.new_node_id("PRRC");
        let database_id = self.world.new_database_id();
        self.t().comments.push(ThreadComment {
            node_id,
            database_id,
            author: Some(author.to_owned()),
            body: body.to_owned(),
            created_at: t,
            updated_at: t,
        });
        self
    }

    pub fn resolved(mut self) -> Self {
        let viewer = self.world.viewer.clone();
        let t = self.t();
        t.resolved = true;
        t.resolved_by = Some(viewer);
        self
    }

    pub fn unresolved(mut self) -> Self {
        let t = self.t();
        t.resolved = false;
        t.resolved_by = None;
        self
    }

    pub fn outdated(mut self) -> Self {
        let t = self.t();
        t.outdated = true;
        t.line = None;
        self
    }

    pub fn path(mut self, p: &str) -> Self {
        p.clone_into(&mut self.t().path);
        self
    }

    pub fn line(mut self, l: u64) -> Self {
        self.t().line = Some(l);
        self
    }

    pub fn id(mut self) -> String {
        self.t().node_id.clone()
    }
}

/// Shapes a review; from [`World::review`].
#[derive(Debug)]
pub struct ReviewBuilder<'w> {
    world: &'w mut World,
    repo: String,
    number: u64,
    idx: usize,
}

impl ReviewBuilder<'_> {
    fn r(&mut self) -> &mut Review {
        let idx = self.idx;
        &mut self.world.get_pr_mut(&self.repo, self.number).reviews[idx]
    }

    pub fn state(mut self, s: ReviewState) -> Self {
        let r = self.r();
        r.state = s;
        if s == ReviewState::Pending {
            r.submitted_at = None;
        }
        self
    }

    pub fn approved(self) -> Self {
        self.state(ReviewState::Approved)
    }

    pub fn changes_requested(self) -> Self {
        self.state(ReviewState::ChangesRequested)
    }

    pub fn dismissed(self) -> Self {
        self.state(ReviewState::Dismissed)
    }

    pub fn body(mut self, b: &str) -> Self {
        b.clone_into(&mut self.r().body);
        self
    }

    pub fn at(mut self, t: Time) -> Self {
        let r = self.r();
        r.submitted_at = Some(t);
        r.updated_at = t;
        self
    }

    pub fn id(mut self) -> String {
        self.r().node_id.clone()
    }
}

/// Shapes a conversation comment; from [`World::comment`].
#[derive(Debug)]
pub struct IssueCommentBuilder<'w> {
    world: &'w mut World,
    repo: String,
    number: u64,
    idx: usize,
}

impl IssueCommentBuilder<'_> {
    fn c(&mut self) -> &mut IssueComment {
        let idx = self.idx;
        &mut self.world.get_pr_mut(&self.repo, self.number).comments[idx]
    }

    pub fn at(mut self, t: Time) -> Self {
        let c = self.c();
        c.created_at = t;
        c.updated_at = t;
        self
    }

    /// Edited at `t`.
    pub fn edited_at(mut self, t: Time) -> Self {
        self.c().updated_at = t;
        self
    }

    pub fn id(mut self) -> String {
        self.c().node_id.clone()
    }
}

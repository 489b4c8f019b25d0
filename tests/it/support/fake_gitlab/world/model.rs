//! The fake GitLab's data model: projects, merge requests, commits, pipelines with jobs,
//! commit statuses, discussions, the event log, the API budget and the world that holds them.

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

use super::super::super::fake_github::DEFAULT_NOW;

pub(super) fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("an RFC 3339 instant")
        .with_timezone(&Utc)
}

pub(in super::super) fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A project's settings.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent settings of a project, as GitLab has them"
)]
#[derive(Debug, Clone)]
pub struct Project {
    pub id: u64,
    pub path: String,
    pub default_branch: String,
    /// `merge`, `rebase_merge` or `ff`.
    pub merge_method: String,
    /// `never`, `always`, `default_on` or `default_off`.
    pub squash_option: String,
    pub only_allow_merge_if_pipeline_succeeds: bool,
    pub only_allow_merge_if_all_discussions_are_resolved: bool,
    pub approvals_required: usize,
    /// Merge trains (with merged results pipelines): armed MRs merge only through the train.
    pub merge_trains: bool,
    /// The token's user is only a Developer here: the train list (`GET …/merge_trains/:branch`,
    /// Maintainer only on some installs) answers 403; an MR's own car can still be read.
    pub train_list_forbidden: bool,
    /// Members by username with their access level (30 Developer, 40 Maintainer …); the
    /// viewer is a Maintainer besides.
    pub members: Vec<(String, u32)>,
}

#[derive(Debug, Clone)]
pub struct Commit {
    pub sha: String,
    pub author_name: String,
    pub author_email: String,
    pub committer_name: String,
    pub committer_email: String,
    pub committed_date: DateTime<Utc>,
    /// The username that pushed it (the push event's `author_username`); `None`: no push
    /// event lists it.
    pub pusher: Option<String>,
    /// When it was pushed, when not when it was committed.
    pub pushed_at: Option<DateTime<Utc>>,
    /// Its parents' shas (`parent_ids`): a merged-results pipeline's merge commit has the
    /// target branch's tip and the MR's head.
    pub parents: Vec<String>,
    /// Its signature (`None`: unsigned, the signature route answers 404).
    pub signature: Option<Signature>,
}

/// How a commit is signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureKind {
    Gpg,
    Ssh,
    X509,
}

/// A commit's signature as GitLab judged it: `verified` when the signing key (or
/// certificate) belongs to a user one of whose verified emails is the commit's committer email.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    pub kind: SignatureKind,
    pub verified: bool,
}

impl Commit {
    /// A commit the user `username` authored, committed and pushed at `at`, with GitLab's
    /// no-reply email of that user (`<id>-<username>@users.noreply.gitlab.com`) and the
    /// username as its display name.
    pub fn by(sha: &str, username: &str, at: DateTime<Utc>) -> Self {
        Self::by_named(sha, username, username, at)
    }

    /// Like [`Commit::by`], with a display name (git's `user.name`) other than the username.
    pub fn by_named(sha: &str, username: &str, display: &str, at: DateTime<Utc>) -> Self {
        let email = noreply(username);
        Commit {
            sha: sha.to_owned(),
            author_name: display.to_owned(),
            author_email: email.clone(),
            committer_name: display.to_owned(),
            committer_email: email,
            committed_date: at,
            pusher: Some(username.to_owned()),
            pushed_at: None,
            parents: Vec::new(),
            signature: None,
        }
    }
}

/// GitLab's no-reply commit email of a user.
pub fn noreply(username: &str) -> String {
    format!(
        "{}-{username}@users.noreply.gitlab.com",
        100 + username.len()
    )
}

#[derive(Debug, Clone)]
pub struct Job {
    pub id: u64,
    pub name: String,
    pub stage: String,
    /// `created`, `pending`, `running`, `success`, `failed`, `canceled`, `skipped`, `manual`.
    pub status: String,
    pub allow_failure: bool,
    pub failure_reason: Option<String>,
    pub trace: Option<String>,
    /// Replaced by a retry: hidden unless `include_retried`.
    pub retried: bool,
    pub finished_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone)]
pub struct Pipeline {
    pub id: u64,
    pub project: String,
    pub sha: String,
    pub git_ref: String,
    pub jobs: Vec<Job>,
}

impl Pipeline {
    /// GitLab's pipeline status, from its current (not retried) jobs.
    pub fn status(&self) -> &'static str {
        let jobs: Vec<&Job> = self.jobs.iter().filter(|j| !j.retried).collect();
        let any = |s: &[&str]| jobs.iter().any(|j| s.contains(&j.status.as_str()));
        if jobs.is_empty() {
            "created"
        } else if any(&["running"]) {
            "running"
        } else if any(&["created", "pending", "waiting_for_resource", "preparing"]) {
            "pending"
        } else if jobs
            .iter()
            .any(|j| j.status == "failed" && !j.allow_failure)
        {
            "failed"
        } else if any(&["canceled"]) {
            "canceled"
        } else {
            "success"
        }
    }
}

/// An external commit status (posted with `POST /projects/:id/statuses/:sha`).
#[derive(Debug, Clone)]
pub struct ExternalStatus {
    pub id: u64,
    pub project: String,
    pub sha: String,
    pub name: String,
    pub status: String,
    pub target_url: Option<String>,
    pub description: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Note {
    pub id: u64,
    pub author: String,
    pub body: String,
    pub system: bool,
    pub resolvable: bool,
    pub resolved: bool,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct Discussion {
    pub id: String,
    pub resolvable: bool,
    pub path: Option<String>,
    pub line: Option<u64>,
    pub notes: Vec<Note>,
}

#[derive(Debug, Clone)]
pub struct Mr {
    pub id: u64,
    pub project: String,
    pub iid: u64,
    pub title: String,
    /// `opened`, `closed`, `merged`.
    pub state: String,
    pub draft: bool,
    pub sha: String,
    pub source_branch: String,
    pub target_branch: String,
    pub author: String,
    pub labels: Vec<String>,
    pub conflict: bool,
    /// The files the source branch changed since it parted from the target (a
    /// `compare?from=target&to=sha&straight=false`).
    pub head_files: Vec<String>,
    /// The files the target changed since the source branch parted from it.
    pub base_files: Vec<String>,
    pub diverged: u64,
    /// Overrides the derived `detailed_merge_status`.
    pub status_override: Option<String>,
    /// The MR's head pipeline id: not moved by a push until the new pipeline exists.
    pub head_pipeline: Option<u64>,
    /// Armed "merge when pipeline succeeds": the squash flag it was armed with.
    pub auto_merge: Option<bool>,
    pub approved_by: Vec<String>,
    pub discussions: Vec<Discussion>,
    pub merge_error: Option<String>,
    /// A rebase asked for and under way (`rebase_in_progress`): it completes on the read of
    /// the MR after this many more (see [`World::rebase_takes_reads`]).
    pub rebase_reads_left: Option<u32>,
    /// A rebase of this MR fails (a commit of it conflicts with the target when replayed,
    /// though a merge would not): `merge_error` says so once it is over.
    pub rebase_fails: bool,
    /// When the fake last changed the MR itself (its `updated_at` also follows its head
    /// commit and notes).
    pub touched_at: DateTime<Utc>,
    /// The fork the source branch lives in (`None`: the MR's own project).
    pub source_project: Option<String>,
    /// Its label and state events, oldest first.
    pub resource_events: Vec<super::ResourceEvent>,
}

/// What clients made the fake do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Merged {
        project: String,
        iid: u64,
        sha: String,
        squash: bool,
        /// Merged by arming auto-merge while the head had no pipeline: GitLab's trap.
        at_once_without_pipeline: bool,
    },
    AutoMergeArmed {
        project: String,
        iid: u64,
        sha: String,
    },
    AutoMergeCancelled {
        project: String,
        iid: u64,
    },
    PipelineRetried {
        pipeline: u64,
    },
    Rebased {
        project: String,
        iid: u64,
    },
    Replied {
        discussion: String,
        body: String,
    },
    Resolved {
        discussion: String,
    },
    /// The MR joined its target branch's merge train.
    TrainJoined {
        project: String,
        iid: u64,
    },
    /// The train dropped the MR (its train pipeline failed, or its head moved) and
    /// cancelled its auto-merge.
    TrainLeft {
        project: String,
        iid: u64,
    },
}

/// An API refusal: status and GitLab's message.
#[derive(Debug, Clone)]
pub struct ApiError(pub u16, pub String);

/// Everything the fake knows.
#[derive(Debug)]
pub struct World {
    pub token: String,
    /// The token user's username, display name, primary email and commit email.
    pub viewer: String,
    pub viewer_name: String,
    pub viewer_email: String,
    pub viewer_commit_email: String,
    /// Other people's personal access tokens (token → username), e.g. an agent's own: a
    /// request with one acts as that user ([`World::person_token`]).
    pub people: BTreeMap<String, String>,
    /// The username the request being answered acts as, when it is not the viewer's.
    pub acting: Option<String>,
    /// Answers the fake handled and then held back (a client killed meanwhile never saw them).
    pub held_answers: usize,
    pub now: DateTime<Utc>,
    pub projects: BTreeMap<String, Project>,
    pub mrs: BTreeMap<(String, u64), Mr>,
    pub commits: BTreeMap<String, Commit>,
    pub pipelines: BTreeMap<u64, Pipeline>,
    pub statuses: Vec<ExternalStatus>,
    /// How many times each (project, branch) moved by a merge: its tip commit.
    pub branch_moves: BTreeMap<(String, String), u64>,
    /// Branches pushed to directly, by (project, branch): their commits, oldest first (the
    /// last is the tip).
    pub pushed_branches: BTreeMap<(String, String), Vec<String>>,
    /// The merge trains, by (project, target branch), front first.
    pub trains: BTreeMap<(String, String), Vec<super::super::train::Car>>,
    pub events: Vec<Event>,
    /// Answers served verbatim instead of the model's (recorded fixtures), by (project, iid):
    /// the MR, its discussions (a JSON array) and its approvals.
    pub raw_mrs: BTreeMap<(String, u64), Value>,
    pub raw_discussions: BTreeMap<(String, u64), Value>,
    pub raw_approvals: BTreeMap<(String, u64), Value>,
    /// The largest page the fake serves, whatever `per_page` asks (to test paging).
    pub max_per_page: usize,
    /// A job's trace is sent whole whatever `Range` asks (as a server without ranges).
    pub traces_ignore_range: bool,
    /// The discussions list never says "last page": past its end every page is empty and names
    /// the next (a misbehaving server or proxy, for the client's bound on pages).
    pub endless_discussions: bool,
    /// How many reads of an MR show a rebase asked for as under way before it is over (0: it
    /// is over before the `PUT` answers, as on a small repository).
    pub rebase_takes_reads: u32,
    /// The authenticated API's budget, told in `RateLimit-*` headers on every answer.
    pub rate: ApiBudget,
    pub(super) next_id: u64,
}

/// GitLab.com's authenticated API throttle: `limit` requests a window (a minute), the window
/// ending at `reset_epoch` (real epoch seconds). A spent budget answers 429 `Retry later`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiBudget {
    pub limit: u64,
    pub used: u64,
    pub reset_epoch: i64,
}

impl ApiBudget {
    /// How long one window lasts.
    pub const WINDOW_SECS: i64 = 60;

    /// A whole budget again once the window (real epoch seconds `now`) is over.
    pub fn reset_if_due(&mut self, now: i64) {
        if now >= self.reset_epoch {
            self.used = 0;
            self.reset_epoch = now + Self::WINDOW_SECS;
        }
    }

    /// The `RateLimit-*` headers of an answer.
    pub fn headers(&self) -> Vec<(String, String)> {
        vec![
            ("RateLimit-Name".into(), "throttle_authenticated_api".into()),
            ("RateLimit-Limit".into(), self.limit.to_string()),
            ("RateLimit-Observed".into(), self.used.to_string()),
            (
                "RateLimit-Remaining".into(),
                self.limit.saturating_sub(self.used).to_string(),
            ),
            ("RateLimit-Reset".into(), self.reset_epoch.to_string()),
        ]
    }
}

impl Default for World {
    fn default() -> Self {
        World {
            token: "gl-test-token".into(),
            viewer: "owner".into(),
            viewer_name: "The Owner".into(),
            viewer_email: "owner@example.com".into(),
            viewer_commit_email: "1-owner@users.noreply.gitlab.example.com".into(),
            people: BTreeMap::new(),
            acting: None,
            held_answers: 0,
            now: at(DEFAULT_NOW),
            projects: BTreeMap::new(),
            mrs: BTreeMap::new(),
            commits: BTreeMap::new(),
            pipelines: BTreeMap::new(),
            statuses: Vec::new(),
            branch_moves: BTreeMap::new(),
            pushed_branches: BTreeMap::new(),
            trains: BTreeMap::new(),
            events: Vec::new(),
            raw_mrs: BTreeMap::new(),
            raw_discussions: BTreeMap::new(),
            raw_approvals: BTreeMap::new(),
            rate: ApiBudget {
                limit: 2000,
                used: 0,
                reset_epoch: Utc::now().timestamp() + ApiBudget::WINDOW_SECS,
            },
            max_per_page: 100,
            traces_ignore_range: false,
            endless_discussions: false,
            rebase_takes_reads: 0,
            next_id: 1000,
        }
    }
}

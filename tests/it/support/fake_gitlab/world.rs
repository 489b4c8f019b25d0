//! The fake GitLab's model: projects, merge requests, commits, pipelines with jobs, commit
//! statuses, discussions, approvals and auto-merge, with builders that create on first use,
//! and the rules GitLab follows (`detailed_merge_status`, "merge when pipeline succeeds").

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde_json::{Value, json};

use super::super::fake_github::DEFAULT_NOW;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("an RFC 3339 instant")
        .with_timezone(&Utc)
}

pub(super) fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A project's settings.
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
}

#[derive(Debug, Clone)]
pub struct Commit {
    pub sha: String,
    pub author_name: String,
    pub author_email: String,
    pub committer_name: String,
    pub committer_email: String,
    pub committed_date: DateTime<Utc>,
}

impl Commit {
    /// A commit authored and committed by `name` (email `<name>@example.com`) at `at`.
    pub fn by(sha: &str, name: &str, at: DateTime<Utc>) -> Self {
        Commit {
            sha: sha.to_owned(),
            author_name: name.to_owned(),
            author_email: format!("{name}@example.com"),
            committer_name: name.to_owned(),
            committer_email: format!("{name}@example.com"),
            committed_date: at,
        }
    }
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
    /// When the fake last changed the MR itself (its `updated_at` also follows its head
    /// commit and notes).
    pub touched_at: DateTime<Utc>,
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
    /// The merge trains, by (project, target branch), front first.
    pub trains: BTreeMap<(String, String), Vec<super::train::Car>>,
    pub events: Vec<Event>,
    /// Answers served verbatim instead of the model's (recorded fixtures), by (project, iid):
    /// the MR, its discussions (a JSON array) and its approvals.
    pub raw_mrs: BTreeMap<(String, u64), Value>,
    pub raw_discussions: BTreeMap<(String, u64), Value>,
    pub raw_approvals: BTreeMap<(String, u64), Value>,
    /// The largest page the fake serves, whatever `per_page` asks (to test paging).
    pub max_per_page: usize,
    /// The authenticated API's budget, told in `RateLimit-*` headers on every answer.
    pub rate: ApiBudget,
    next_id: u64,
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
            held_answers: 0,
            now: at(DEFAULT_NOW),
            projects: BTreeMap::new(),
            mrs: BTreeMap::new(),
            commits: BTreeMap::new(),
            pipelines: BTreeMap::new(),
            statuses: Vec::new(),
            branch_moves: BTreeMap::new(),
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
            next_id: 1000,
        }
    }
}

/// A builder over one project.
#[derive(Debug)]
pub struct ProjectBuilder<'w>(&'w mut Project);

impl ProjectBuilder<'_> {
    pub fn default_branch(self, b: &str) -> Self {
        self.0.default_branch = b.into();
        self
    }
    pub fn merge_method(self, m: &str) -> Self {
        self.0.merge_method = m.into();
        self
    }
    pub fn squash_option(self, s: &str) -> Self {
        self.0.squash_option = s.into();
        self
    }
    pub fn pipelines_must_succeed(self) -> Self {
        self.0.only_allow_merge_if_pipeline_succeeds = true;
        self
    }
    pub fn discussions_must_be_resolved(self) -> Self {
        self.0.only_allow_merge_if_all_discussions_are_resolved = true;
        self
    }
    pub fn approvals_required(self, n: usize) -> Self {
        self.0.approvals_required = n;
        self
    }
    /// Merge trains on (which GitLab allows only with merged results pipelines).
    pub fn merge_trains(self) -> Self {
        self.0.merge_trains = true;
        self
    }
}

/// A builder over one merge request.
#[derive(Debug)]
pub struct MrBuilder<'w> {
    w: &'w mut World,
    key: (String, u64),
}

impl MrBuilder<'_> {
    fn mr(&mut self) -> &mut Mr {
        let now = self.w.now;
        let mr = self.w.mrs.get_mut(&self.key).expect("the MR exists");
        mr.touched_at = now;
        mr
    }
    pub fn title(mut self, t: &str) -> Self {
        self.mr().title = t.into();
        self
    }
    pub fn author(mut self, a: &str) -> Self {
        self.mr().author = a.into();
        self
    }
    pub fn draft(mut self) -> Self {
        self.mr().draft = true;
        self
    }
    pub fn closed(mut self) -> Self {
        self.mr().state = "closed".into();
        self
    }
    pub fn label(mut self, l: &str) -> Self {
        self.mr().labels.push(l.into());
        self
    }
    pub fn target_branch(mut self, b: &str) -> Self {
        self.mr().target_branch = b.into();
        self
    }
    pub fn conflict(mut self) -> Self {
        self.mr().conflict = true;
        self
    }
    pub fn diverged(mut self, n: u64) -> Self {
        self.mr().diverged = n;
        self
    }
    /// Overrides the derived `detailed_merge_status`.
    pub fn detailed_merge_status(mut self, s: &str) -> Self {
        self.mr().status_override = Some(s.into());
        self
    }
    pub fn approved_by(mut self, who: &str) -> Self {
        self.mr().approved_by.push(who.into());
        self
    }
    /// The head commit's author and committer name.
    pub fn head_by(mut self, name: &str) -> Self {
        let sha = self.mr().sha.clone();
        let c = self
            .w
            .commits
            .get_mut(&sha)
            .expect("the head commit exists");
        let at = c.committed_date;
        *c = Commit::by(&sha, name, at);
        self
    }
    pub fn sha(&mut self) -> String {
        self.mr().sha.clone()
    }
}

/// A builder over one job.
#[derive(Debug)]
pub struct JobBuilder<'w> {
    job: &'w mut Job,
    now: DateTime<Utc>,
}

impl JobBuilder<'_> {
    fn finish(self, status: &str) -> Self {
        self.job.status = status.into();
        self.job.finished_at = Some(self.now);
        self
    }
    pub fn success(self) -> Self {
        self.finish("success")
    }
    /// Failed with `script_failure` unless `.reason(..)` says otherwise.
    pub fn failed(self) -> Self {
        self.job.failure_reason = Some("script_failure".into());
        self.finish("failed")
    }
    pub fn canceled(self) -> Self {
        self.finish("canceled")
    }
    pub fn running(self) -> Self {
        self.job.status = "running".into();
        self
    }
    pub fn pending(self) -> Self {
        self.job.status = "pending".into();
        self
    }
    pub fn manual(self) -> Self {
        self.job.status = "manual".into();
        self
    }
    pub fn allow_failure(self) -> Self {
        self.job.allow_failure = true;
        self
    }
    pub fn reason(self, r: &str) -> Self {
        self.job.failure_reason = Some(r.into());
        self
    }
    pub fn stage(self, s: &str) -> Self {
        self.job.stage = s.into();
        self
    }
    pub fn trace(self, t: &str) -> Self {
        self.job.trace = Some(t.into());
        self
    }
    pub fn id(&self) -> u64 {
        self.job.id
    }
}

/// A builder over one discussion.
#[derive(Debug)]
pub struct DiscussionBuilder<'w> {
    d: &'w mut Discussion,
    ids: &'w mut u64,
    now: DateTime<Utc>,
}

impl DiscussionBuilder<'_> {
    pub fn note(self, author: &str, body: &str) -> Self {
        *self.ids += 1;
        self.d.notes.push(Note {
            id: *self.ids,
            author: author.into(),
            body: body.into(),
            system: false,
            resolvable: self.d.resolvable,
            resolved: false,
            updated_at: self.now,
        });
        self
    }
    pub fn system_note(self, body: &str) -> Self {
        *self.ids += 1;
        self.d.notes.push(Note {
            id: *self.ids,
            author: "gitlab-bot".into(),
            body: body.into(),
            system: true,
            resolvable: false,
            resolved: false,
            updated_at: self.now,
        });
        self
    }
    pub fn resolved(self) -> Self {
        for n in &mut self.d.notes {
            n.resolved = n.resolvable;
        }
        self
    }
    pub fn on(self, path: &str, line: u64) -> Self {
        self.d.path = Some(path.into());
        self.d.line = Some(line);
        self
    }
    pub fn id(&self) -> String {
        self.d.id.clone()
    }
}

impl World {
    pub(super) fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub(super) fn new_sha(&mut self) -> String {
        let n = self.id();
        format!("{n:0>8x}{:0>32x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    pub fn set_now(&mut self, rfc3339: &str) {
        self.now = at(rfc3339);
    }

    /// The project at `path`, created with defaults (`main`, `merge`, `default_off`).
    pub fn project(&mut self, path: &str) -> ProjectBuilder<'_> {
        if !self.projects.contains_key(path) {
            let id = self.id();
            self.projects.insert(
                path.into(),
                Project {
                    id,
                    path: path.into(),
                    default_branch: "main".into(),
                    merge_method: "merge".into(),
                    squash_option: "default_off".into(),
                    only_allow_merge_if_pipeline_succeeds: false,
                    only_allow_merge_if_all_discussions_are_resolved: false,
                    approvals_required: 0,
                    merge_trains: false,
                },
            );
        }
        ProjectBuilder(self.projects.get_mut(path).expect("just made"))
    }

    /// MR `iid` of `project`, created with a head commit by `dev` an hour ago and no pipeline.
    pub fn mr(&mut self, project: &str, iid: u64) -> MrBuilder<'_> {
        self.project(project);
        let key = (project.to_owned(), iid);
        if !self.mrs.contains_key(&key) {
            let id = self.id();
            let sha = self.new_sha();
            let then = self.now - Duration::hours(1);
            self.commits
                .insert(sha.clone(), Commit::by(&sha, "dev", then));
            let target = self.projects[project].default_branch.clone();
            self.mrs.insert(
                key.clone(),
                Mr {
                    id,
                    project: project.into(),
                    iid,
                    title: format!("Change {iid}"),
                    state: "opened".into(),
                    draft: false,
                    sha,
                    source_branch: format!("feature-{iid}"),
                    target_branch: target,
                    author: "dev".into(),
                    labels: Vec::new(),
                    conflict: false,
                    diverged: 0,
                    status_override: None,
                    head_pipeline: None,
                    auto_merge: None,
                    approved_by: Vec::new(),
                    discussions: Vec::new(),
                    merge_error: None,
                    touched_at: then,
                },
            );
        }
        MrBuilder { w: self, key }
    }

    pub fn get_mr(&self, project: &str, iid: u64) -> &Mr {
        self.mrs
            .get(&(project.to_owned(), iid))
            .expect("the MR exists")
    }

    /// The MR, to change: its `updated_at` becomes now.
    pub fn get_mr_mut(&mut self, project: &str, iid: u64) -> &mut Mr {
        let now = self.now;
        let mr = self
            .mrs
            .get_mut(&(project.to_owned(), iid))
            .expect("the MR exists");
        mr.touched_at = now;
        mr
    }

    /// A new pipeline on the MR's current head (it becomes the head pipeline).
    pub fn pipeline(&mut self, project: &str, iid: u64) -> u64 {
        let id = self.id();
        let mr = self.get_mr(project, iid).clone();
        self.pipelines.insert(
            id,
            Pipeline {
                id,
                project: project.into(),
                sha: mr.sha.clone(),
                git_ref: mr.source_branch.clone(),
                jobs: Vec::new(),
            },
        );
        self.get_mr_mut(project, iid).head_pipeline = Some(id);
        id
    }

    /// Job `name` in the MR's head pipeline (made on the current head if there is none), or
    /// its current attempt when it exists; pending until told otherwise.
    pub fn job(&mut self, project: &str, iid: u64, name: &str) -> JobBuilder<'_> {
        let mr = self.get_mr(project, iid).clone();
        let pid = match mr.head_pipeline {
            Some(p) if self.pipelines[&p].sha == mr.sha => p,
            _ => self.pipeline(project, iid),
        };
        self.pipeline_job(pid, name)
    }

    /// Job `name` of pipeline `pid`, or its current attempt when it exists; pending until told
    /// otherwise.
    pub fn pipeline_job(&mut self, pid: u64, name: &str) -> JobBuilder<'_> {
        let exists = self.pipelines[&pid]
            .jobs
            .iter()
            .any(|j| j.name == name && !j.retried);
        if !exists {
            let id = self.id();
            self.pipelines
                .get_mut(&pid)
                .expect("pipeline")
                .jobs
                .push(Job {
                    id,
                    name: name.into(),
                    stage: "test".into(),
                    status: "pending".into(),
                    allow_failure: false,
                    failure_reason: None,
                    trace: None,
                    retried: false,
                    finished_at: None,
                });
        }
        let now = self.now;
        let job = self
            .pipelines
            .get_mut(&pid)
            .expect("pipeline")
            .jobs
            .iter_mut()
            .find(|j| j.name == name && !j.retried)
            .expect("just made");
        JobBuilder { job, now }
    }

    /// An external commit status on the MR's head.
    pub fn status(&mut self, project: &str, iid: u64, name: &str, status: &str) {
        let id = self.id();
        let sha = self.get_mr(project, iid).sha.clone();
        self.statuses.push(ExternalStatus {
            id,
            project: project.into(),
            sha,
            name: name.into(),
            status: status.into(),
            target_url: Some(format!("https://ci.example.com/{name}")),
            description: Some(format!("{name} says {status}")),
        });
    }

    /// A resolvable discussion (a diff or review thread).
    pub fn thread(&mut self, project: &str, iid: u64) -> DiscussionBuilder<'_> {
        self.discussion(project, iid, true)
    }

    /// A plain, non-resolvable discussion (an MR comment).
    pub fn comment(&mut self, project: &str, iid: u64, author: &str, body: &str) {
        self.discussion(project, iid, false).note(author, body);
    }

    fn discussion(&mut self, project: &str, iid: u64, resolvable: bool) -> DiscussionBuilder<'_> {
        let n = self.id();
        let id = format!("{n:0>40x}");
        let now = self.now;
        self.get_mr_mut(project, iid).discussions.push(Discussion {
            id,
            resolvable,
            path: None,
            line: None,
            notes: Vec::new(),
        });
        let World { mrs, next_id, .. } = self;
        let d = mrs
            .get_mut(&(project.to_owned(), iid))
            .and_then(|m| m.discussions.last_mut())
            .expect("just made");
        DiscussionBuilder {
            d,
            ids: next_id,
            now,
        }
    }

    /// A new head commit by `name` (author and committer), now; no pipeline yet.
    pub fn push(&mut self, project: &str, iid: u64, name: &str) -> String {
        let sha = self.new_sha();
        self.commits
            .insert(sha.clone(), Commit::by(&sha, name, self.now));
        self.get_mr_mut(project, iid).sha.clone_from(&sha);
        sha
    }

    /// The current pipeline of the MR: its head pipeline, only when it ran on the head.
    pub fn current_pipeline(&self, mr: &Mr) -> Option<&Pipeline> {
        mr.head_pipeline
            .and_then(|p| self.pipelines.get(&p))
            .filter(|p| p.sha == mr.sha)
    }

    /// `detailed_merge_status`, derived the way GitLab does unless overridden.
    pub fn detailed_merge_status(&self, mr: &Mr) -> String {
        if let Some(s) = &mr.status_override {
            return s.clone();
        }
        if mr.state != "opened" {
            return "not_open".into();
        }
        let project = &self.projects[&mr.project];
        let pipeline = self.current_pipeline(mr).map(Pipeline::status);
        let unresolved = mr
            .discussions
            .iter()
            .any(|d| d.notes.iter().any(|n| n.resolvable && !n.resolved));
        if mr.draft {
            "draft_status"
        } else if mr.conflict {
            "conflict"
        } else if project.only_allow_merge_if_pipeline_succeeds
            && matches!(pipeline, Some("running" | "pending" | "created"))
        {
            "ci_still_running"
        } else if project.only_allow_merge_if_pipeline_succeeds && pipeline != Some("success") {
            "ci_must_pass"
        } else if mr.approved_by.len() < project.approvals_required {
            "not_approved"
        } else if project.only_allow_merge_if_all_discussions_are_resolved && unresolved {
            "discussions_not_resolved"
        } else if project.merge_method != "merge" && mr.diverged > 0 {
            "need_rebase"
        } else {
            "mergeable"
        }
        .into()
    }

    pub(super) fn do_merge(&mut self, key: &(String, u64), squash: bool, at_once: bool) {
        let (project, target, sha) = {
            let mr = self.mrs.get_mut(key).expect("the MR exists");
            mr.touched_at = self.now;
            mr.state = "merged".into();
            mr.auto_merge = None;
            (mr.project.clone(), mr.target_branch.clone(), mr.sha.clone())
        };
        for other in self.mrs.values_mut() {
            if other.project == project && other.target_branch == target && other.state == "opened"
            {
                other.diverged += 1;
            }
        }
        *self
            .branch_moves
            .entry((project.clone(), target.clone()))
            .or_default() += 1;
        self.events.push(Event::Merged {
            project,
            iid: key.1,
            sha,
            squash,
            at_once_without_pipeline: at_once,
        });
    }

    /// What GitLab does between requests: an armed MR merges when its pipeline succeeded, and
    /// is disarmed when it failed; on a project with merge trains it joins the train instead
    /// (see [`World::settle_trains`]).
    pub fn settle(&mut self) {
        let keys: Vec<(String, u64)> = self.mrs.keys().cloned().collect();
        for key in keys {
            let mr = self.mrs[&key].clone();
            let Some(squash) = mr.auto_merge else {
                continue;
            };
            if self.projects[&mr.project].merge_trains {
                continue;
            }
            match self.current_pipeline(&mr).map(Pipeline::status) {
                Some("success") if self.detailed_merge_status(&mr) == "mergeable" => {
                    self.do_merge(&key, squash, false);
                }
                Some("failed" | "canceled") => {
                    self.mrs.get_mut(&key).expect("exists").auto_merge = None;
                }
                _ => {}
            }
        }
        self.settle_trains();
    }

    /// `PUT …/merge`: GitLab's rules, including its trap. On a project with merge trains a
    /// merge joins the train (when asked to wait for the pipeline) or is refused.
    pub fn merge(
        &mut self,
        key: &(String, u64),
        sha: Option<&str>,
        squash: bool,
        auto: bool,
    ) -> Result<(), ApiError> {
        let mr = self.mergeable_mr(key, sha, ApiError(405, "405 Method Not Allowed".into()))?;
        if self.projects[&mr.project].merge_trains {
            if !auto {
                return Err(ApiError(405, "405 Method Not Allowed".into()));
            }
            return self.add_to_train(key, sha, squash, true).map(|_| ());
        }
        if auto {
            match self.current_pipeline(&mr).map(Pipeline::status) {
                // The trap: no pipeline for this head yet, so nothing to wait for.
                None => self.do_merge(key, squash, true),
                Some("success") => self.do_merge(key, squash, false),
                Some("failed" | "canceled") => {
                    return Err(ApiError(405, "405 Method Not Allowed".into()));
                }
                Some(_) => {
                    self.mrs.get_mut(key).expect("exists").auto_merge = Some(squash);
                    self.events.push(Event::AutoMergeArmed {
                        project: key.0.clone(),
                        iid: key.1,
                        sha: mr.sha.clone(),
                    });
                }
            }
            return Ok(());
        }
        match self.detailed_merge_status(&mr).as_str() {
            "mergeable" => {
                self.do_merge(key, squash, false);
                Ok(())
            }
            _ => Err(ApiError(405, "405 Method Not Allowed".into())),
        }
    }

    /// The open, ready, conflict-free MR at `key` whose head is `sha` (when given); `refused`
    /// when it is closed, a draft or conflicting, 409 when the head moved.
    pub(super) fn mergeable_mr(
        &self,
        key: &(String, u64),
        sha: Option<&str>,
        refused: ApiError,
    ) -> Result<Mr, ApiError> {
        let mr = self
            .mrs
            .get(key)
            .cloned()
            .ok_or_else(|| ApiError(404, "404 Not found".into()))?;
        if mr.state != "opened" || mr.draft || mr.conflict {
            return Err(refused);
        }
        if sha.is_some_and(|s| s != mr.sha) {
            return Err(ApiError(
                409,
                "SHA does not match HEAD of source branch".into(),
            ));
        }
        Ok(mr)
    }

    /// `POST …/pipelines/:pid/retry`: each failed or canceled job gets a new pending attempt.
    pub fn retry_pipeline(&mut self, pid: u64) -> Result<(), ApiError> {
        let mut next = self.next_id;
        let p = self
            .pipelines
            .get_mut(&pid)
            .ok_or_else(|| ApiError(404, "404 Not found".into()))?;
        let mut fresh = Vec::new();
        for j in p.jobs.iter_mut().filter(|j| !j.retried) {
            if j.status == "failed" || j.status == "canceled" {
                j.retried = true;
                next += 1;
                fresh.push(Job {
                    id: next,
                    status: "pending".into(),
                    failure_reason: None,
                    trace: None,
                    retried: false,
                    finished_at: None,
                    ..j.clone()
                });
            }
        }
        p.jobs.extend(fresh);
        self.next_id = next;
        self.events.push(Event::PipelineRetried { pipeline: pid });
        Ok(())
    }

    /// `n` commits land on `branch` of `project` from elsewhere: its tip moves, and every open
    /// MR targeting it falls `n` more commits behind.
    pub fn advance_target(&mut self, project: &str, branch: &str, n: u64) {
        for mr in self.mrs.values_mut() {
            if mr.project == project && mr.target_branch == branch && mr.state == "opened" {
                mr.diverged += n;
            }
        }
        *self
            .branch_moves
            .entry((project.to_owned(), branch.to_owned()))
            .or_default() += 1;
    }

    /// `PUT …/rebase`: the head is rewritten by the viewer; the new head has no pipeline yet.
    pub fn rebase(&mut self, key: &(String, u64)) -> Result<(), ApiError> {
        let mr = self
            .mrs
            .get(key)
            .cloned()
            .ok_or_else(|| ApiError(404, "404 Not found".into()))?;
        if mr.conflict {
            self.mrs.get_mut(key).expect("exists").merge_error =
                Some("Rebase failed. Please rebase locally".into());
            return Ok(());
        }
        // GitLab rewrites the commits as the user who asked: its display name and commit
        // email, never its username; the author stays. No parent link to the old head.
        let sha = self.new_sha();
        let old = self.commits[&mr.sha].clone();
        self.commits.insert(
            sha.clone(),
            Commit {
                sha: sha.clone(),
                committer_name: self.viewer_name.clone(),
                committer_email: self.viewer_commit_email.clone(),
                committed_date: self.now,
                ..old
            },
        );
        let m = self.mrs.get_mut(key).expect("exists");
        m.sha = sha;
        m.diverged = 0;
        self.events.push(Event::Rebased {
            project: key.0.clone(),
            iid: key.1,
        });
        Ok(())
    }

    pub fn merges(&self, project: &str, iid: u64) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::Merged { project: p, iid: i, .. } if p == project && *i == iid))
            .count()
    }

    pub fn retries(&self, pipeline: u64) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::PipelineRetried { pipeline: p } if *p == pipeline))
            .count()
    }

    // ── JSON in GitLab's shapes ─────────────────────────────────────────────────────────────

    pub(super) fn user_json(name: &str) -> Value {
        json!({
            "id": name.bytes().map(u64::from).sum::<u64>(),
            "username": name,
            "name": name,
            "state": "active",
            "avatar_url": null,
            "web_url": format!("https://gitlab.example.com/{name}"),
        })
    }

    pub(super) fn pipeline_json(&self, p: &Pipeline) -> Value {
        json!({
            "id": p.id,
            "iid": p.id - 1000,
            "project_id": self.projects[&p.project].id,
            "sha": p.sha,
            "ref": p.git_ref,
            "status": p.status(),
            "source": "merge_request_event",
            "web_url": format!("https://gitlab.example.com/{}/-/pipelines/{}", p.project, p.id),
        })
    }

    pub fn project_json(p: &Project) -> Value {
        json!({
            "id": p.id,
            "path_with_namespace": p.path,
            "default_branch": p.default_branch,
            "merge_method": p.merge_method,
            "squash_option": p.squash_option,
            "only_allow_merge_if_pipeline_succeeds": p.only_allow_merge_if_pipeline_succeeds,
            "only_allow_merge_if_all_discussions_are_resolved": p.only_allow_merge_if_all_discussions_are_resolved,
            "merge_pipelines_enabled": p.merge_trains,
            "merge_trains_enabled": p.merge_trains,
            "web_url": format!("https://gitlab.example.com/{}", p.path),
        })
    }

    pub fn mr_json(&self, mr: &Mr, diverged: bool) -> Value {
        let pid = self.projects[&mr.project].id;
        let detailed = self.detailed_merge_status(mr);
        let mut v = json!({
            "id": mr.id,
            "iid": mr.iid,
            "project_id": pid,
            "title": if mr.draft { format!("Draft: {}", mr.title) } else { mr.title.clone() },
            "description": "",
            "state": mr.state,
            "created_at": stamp(self.now - Duration::hours(2)),
            "updated_at": stamp(self.updated_at(mr)),
            "target_branch": mr.target_branch,
            "source_branch": mr.source_branch,
            "author": Self::user_json(&mr.author),
            "source_project_id": pid,
            "target_project_id": pid,
            "labels": mr.labels,
            "draft": mr.draft,
            "work_in_progress": mr.draft,
            "merge_when_pipeline_succeeds": mr.auto_merge.is_some(),
            "merge_status": if mr.conflict { "cannot_be_merged" } else { "can_be_merged" },
            "detailed_merge_status": detailed,
            "sha": mr.sha,
            "merge_commit_sha": null,
            "squash": false,
            "has_conflicts": mr.conflict,
            "blocking_discussions_resolved": true,
            "references": {
                "short": format!("!{}", mr.iid),
                "relative": format!("!{}", mr.iid),
                "full": format!("{}!{}", mr.project, mr.iid),
            },
            "web_url": format!("https://gitlab.example.com/{}/-/merge_requests/{}", mr.project, mr.iid),
            "head_pipeline": mr.head_pipeline.and_then(|p| self.pipelines.get(&p)).map(|p| self.pipeline_json(p)),
            "diff_refs": { "base_sha": "0".repeat(40), "head_sha": mr.sha, "start_sha": "0".repeat(40) },
            "merge_error": mr.merge_error,
            "user": { "can_merge": true },
        });
        if diverged {
            v["diverged_commits_count"] = json!(mr.diverged);
        }
        v
    }

    /// The MR's `updated_at`: the last change to it, its head commit or its notes.
    pub fn updated_at(&self, mr: &Mr) -> DateTime<Utc> {
        let notes = mr.discussions.iter().flat_map(|d| &d.notes);
        notes
            .map(|n| n.updated_at)
            .chain(self.commits.get(&mr.sha).map(|c| c.committed_date))
            .fold(mr.touched_at, DateTime::max)
    }

    /// `GET /projects/:id/repository/branches/:branch`: the tip moves with every merge.
    pub fn branch_json(&self, project: &str, branch: &str) -> Value {
        let moves = self
            .branch_moves
            .get(&(project.to_owned(), branch.to_owned()))
            .copied()
            .unwrap_or(0);
        let tip = format!("{moves:0>8x}{:0>32x}", self.projects[project].id);
        json!({ "name": branch, "merged": false, "protected": true, "default": branch == self.projects[project].default_branch, "commit": { "id": tip, "short_id": &tip[..8] } })
    }

    /// `GET /projects/:id/pipelines`: the project's pipelines, newest first.
    pub fn pipelines_json(&self, project: &str) -> Vec<Value> {
        self.pipelines
            .values()
            .rev()
            .filter(|p| p.project == project)
            .map(|p| self.pipeline_json(p))
            .collect()
    }

    pub fn commit_json(c: &Commit) -> Value {
        json!({
            "id": c.sha,
            "short_id": &c.sha[..8],
            "title": "a change",
            "message": "a change\n",
            "author_name": c.author_name,
            "author_email": c.author_email,
            "authored_date": stamp(c.committed_date),
            "committer_name": c.committer_name,
            "committer_email": c.committer_email,
            "committed_date": stamp(c.committed_date),
            "created_at": stamp(c.committed_date),
            "parent_ids": [],
        })
    }

    pub fn job_json(&self, p: &Pipeline, j: &Job) -> Value {
        json!({
            "id": j.id,
            "name": j.name,
            "stage": j.stage,
            "status": j.status,
            "allow_failure": j.allow_failure,
            "failure_reason": j.failure_reason,
            "ref": p.git_ref,
            "tag": false,
            "created_at": stamp(self.now - Duration::minutes(30)),
            "started_at": stamp(self.now - Duration::minutes(20)),
            "finished_at": j.finished_at.map(stamp),
            "web_url": format!("https://gitlab.example.com/{}/-/jobs/{}", p.project, j.id),
            "pipeline": self.pipeline_json(p),
            "commit": { "id": p.sha },
            "retried": j.retried,
        })
    }

    /// The statuses of a commit: external ones and, as on GitLab, the CI jobs too.
    pub fn statuses_json(&self, project: &str, sha: &str) -> Vec<Value> {
        let mut out: Vec<Value> = self
            .pipelines
            .values()
            .filter(|p| p.project == project && p.sha == sha)
            .flat_map(|p| p.jobs.iter().filter(|j| !j.retried).map(move |j| (p, j)))
            .map(|(p, j)| {
                json!({
                    "id": j.id, "sha": sha, "ref": p.git_ref, "status": j.status, "name": j.name,
                    "target_url": format!("https://gitlab.example.com/{}/-/jobs/{}", p.project, j.id),
                    "description": null, "allow_failure": j.allow_failure,
                    "created_at": stamp(self.now), "started_at": null, "finished_at": null,
                    "author": Self::user_json("dev"), "coverage": null, "pipeline_id": p.id,
                })
            })
            .collect();
        out.extend(
            self.statuses
                .iter()
                .filter(|s| s.project == project && s.sha == sha)
                .map(|s| {
                    json!({
                        "id": s.id, "sha": sha, "ref": null, "status": s.status, "name": s.name,
                        "target_url": s.target_url, "description": s.description,
                        "allow_failure": false, "created_at": stamp(self.now), "started_at": null,
                        "finished_at": null, "author": Self::user_json("ci-bot"), "coverage": null,
                    })
                }),
        );
        out
    }

    pub fn note_json(n: &Note, d: &Discussion) -> Value {
        let mut v = json!({
            "id": n.id,
            "type": if d.resolvable { Value::from("DiffNote") } else { Value::Null },
            "body": n.body,
            "attachment": null,
            "author": Self::user_json(&n.author),
            "created_at": stamp(n.updated_at),
            "updated_at": stamp(n.updated_at),
            "system": n.system,
            "noteable_type": "MergeRequest",
            "resolvable": n.resolvable,
        });
        if n.resolvable {
            v["resolved"] = json!(n.resolved);
            v["resolved_by"] = if n.resolved {
                Self::user_json("owner")
            } else {
                Value::Null
            };
        }
        if let Some(path) = &d.path {
            v["position"] = json!({
                "base_sha": "0".repeat(40), "start_sha": "0".repeat(40), "head_sha": "0".repeat(40),
                "old_path": path, "new_path": path, "position_type": "text",
                "old_line": null, "new_line": d.line,
            });
        }
        v
    }

    pub fn discussion_json(d: &Discussion) -> Value {
        json!({
            "id": d.id,
            "individual_note": !d.resolvable && d.notes.len() == 1,
            "notes": d.notes.iter().map(|n| Self::note_json(n, d)).collect::<Vec<_>>(),
        })
    }

    pub fn approvals_json(&self, mr: &Mr) -> Value {
        let required = self.projects[&mr.project].approvals_required;
        json!({
            "id": mr.id,
            "iid": mr.iid,
            "approvals_required": required,
            "approvals_left": required.saturating_sub(mr.approved_by.len()),
            "approved": mr.approved_by.len() >= required,
            "approved_by": mr.approved_by.iter().map(|u| json!({ "user": Self::user_json(u) })).collect::<Vec<_>>(),
        })
    }

    pub fn reply(&mut self, key: &(String, u64), discussion: &str, body: &str) -> Option<Value> {
        let id = self.id();
        let now = self.now;
        let viewer = self.viewer.clone();
        let d = self
            .mrs
            .get_mut(key)?
            .discussions
            .iter_mut()
            .find(|d| d.id == discussion)?;
        let note = Note {
            id,
            author: viewer,
            body: body.into(),
            system: false,
            resolvable: d.resolvable,
            resolved: false,
            updated_at: now,
        };
        d.notes.push(note.clone());
        let v = Self::note_json(&note, d);
        self.events.push(Event::Replied {
            discussion: discussion.into(),
            body: body.into(),
        });
        Some(v)
    }

    pub fn resolve(&mut self, key: &(String, u64), discussion: &str) -> Option<Value> {
        let d = self
            .mrs
            .get_mut(key)?
            .discussions
            .iter_mut()
            .find(|d| d.id == discussion)?;
        for n in &mut d.notes {
            n.resolved = n.resolvable;
        }
        let v = Self::discussion_json(d);
        self.events.push(Event::Resolved {
            discussion: discussion.into(),
        });
        Some(v)
    }
}

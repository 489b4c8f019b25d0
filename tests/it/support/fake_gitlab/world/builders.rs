//! The builders that create on first use and make the common scenarios read as one line each:
//! the `World` methods that start one (`project`, `mr`, `job`, `thread`, …) and the builder
//! types.

use chrono::{DateTime, Duration, Utc};

use super::ResourceChange;
use super::model::{
    Commit, Discussion, ExternalStatus, Job, Mr, Note, Pipeline, Project, Signature, SignatureKind,
    World, at,
};

/// A builder over one project.
#[derive(Debug)]
pub struct ProjectBuilder<'w>(&'w mut Project);

impl ProjectBuilder<'_> {
    /// `username` is a member with `access_level` (30 Developer, 20 Reporter …).
    pub fn member(self, username: &str, access_level: u32) -> Self {
        self.0.members.push((username.into(), access_level));
        self
    }
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
    /// The train list is refused (403) to the token's user; its MR's own cars are not.
    pub fn train_list_forbidden(self) -> Self {
        self.0.train_list_forbidden = true;
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
    /// The MR's head commit.
    fn head_commit(&mut self) -> &mut Commit {
        let sha = self.mr().sha.clone();
        self.w
            .commits
            .get_mut(&sha)
            .expect("the head commit exists")
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
    /// Records `change` by the viewer now.
    fn by_viewer(self, change: ResourceChange) -> Self {
        let viewer = self.w.viewer.clone();
        self.w.record_resource_event(&self.key, &viewer, change);
        self
    }
    pub fn closed(mut self) -> Self {
        self.mr().state = "closed".into();
        self.by_viewer(ResourceChange::State("closed".into()))
    }
    /// Open again after being closed.
    pub fn reopened(mut self) -> Self {
        self.mr().state = "opened".into();
        self.by_viewer(ResourceChange::State("reopened".into()))
    }
    /// A rebase fails (`merge_error`), though a merge would not conflict.
    pub fn rebase_fails(mut self) -> Self {
        self.mr().rebase_fails = true;
        self
    }
    /// The viewer adds the label `l` now.
    pub fn label(self, l: &str) -> Self {
        let viewer = self.w.viewer.clone();
        self.labeled_by(l, &viewer)
    }
    /// `user` adds the label `l` now.
    pub fn labeled_by(mut self, l: &str, user: &str) -> Self {
        self.mr().labels.push(l.into());
        let change = ResourceChange::Label {
            name: l.into(),
            add: true,
        };
        self.w.record_resource_event(&self.key, user, change);
        self
    }
    /// The viewer removes the label `l` now.
    pub fn unlabel(mut self, l: &str) -> Self {
        self.mr().labels.retain(|x| x != l);
        self.by_viewer(ResourceChange::Label {
            name: l.into(),
            add: false,
        })
    }
    pub fn target_branch(mut self, b: &str) -> Self {
        self.mr().target_branch = b.into();
        self
    }
    pub fn conflict(mut self) -> Self {
        self.mr().conflict = true;
        self
    }
    /// Conflicting with its target in `files`: both sides changed them since they parted, and
    /// each side changed one file of its own besides.
    pub fn conflict_in(mut self, files: &[&str]) -> Self {
        let both = files.iter().map(|f| (*f).to_owned());
        let mr = self.mr();
        mr.head_files = both
            .clone()
            .chain(["src/only_on_the_branch.rs".into()])
            .collect();
        mr.base_files = both.chain(["docs/only_on_the_base.md".into()]).collect();
        self.conflict()
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
    /// The head commit by the user `username` whose git name is `display` (no-reply email).
    /// The source branch lives in fork `path` (made if missing): its pushes are that
    /// project's events.
    pub fn in_fork(mut self, path: &str) -> Self {
        self.w.project(path);
        self.mr().source_project = Some(path.to_owned());
        self
    }
    pub fn head_by_named(mut self, username: &str, display: &str) -> Self {
        let c = self.head_commit();
        *c = Commit::by_named(&c.sha.clone(), username, display, c.committed_date);
        self
    }
    /// The head commit's author email (anyone can write any).
    pub fn head_email(mut self, email: &str) -> Self {
        let c = self.head_commit();
        email.clone_into(&mut c.author_email);
        email.clone_into(&mut c.committer_email);
        self
    }
    /// The head commit's committer email alone (its author's stays).
    pub fn head_committer_email(mut self, email: &str) -> Self {
        let c = self.head_commit();
        email.clone_into(&mut c.committer_email);
        self
    }
    /// Who pushed the head (`None`: no push event lists it), and when.
    pub fn head_pushed_by(mut self, username: Option<&str>, at: Option<DateTime<Utc>>) -> Self {
        let c = self.head_commit();
        c.pusher = username.map(str::to_owned);
        c.pushed_at = at;
        self
    }
    /// The head commit signed with a key of `kind`; `verified`: GitLab verified it (the key's
    /// user has the committer email among their verified emails).
    pub fn head_signed(mut self, kind: SignatureKind, verified: bool) -> Self {
        let c = self.head_commit();
        c.signature = Some(Signature { kind, verified });
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
    pub(in super::super) fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub(in super::super) fn new_sha(&mut self) -> String {
        let n = self.id();
        format!("{n:0>8x}{:0>32x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    pub fn set_now(&mut self, rfc3339: &str) {
        self.now = at(rfc3339);
    }

    /// A personal access token of `username` (an agent's own): requests with it act as them.
    pub fn person_token(&mut self, username: &str) -> String {
        let token = format!("glpat-person-{username}");
        self.people.insert(token.clone(), username.to_owned());
        token
    }

    /// The username the request being answered acts as: the token's owner.
    pub fn actor(&self) -> String {
        self.acting.clone().unwrap_or_else(|| self.viewer.clone())
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
                    train_list_forbidden: false,
                    members: Vec::new(),
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
                    head_files: Vec::new(),
                    base_files: Vec::new(),
                    diverged: 0,
                    status_override: None,
                    head_pipeline: None,
                    auto_merge: None,
                    approved_by: Vec::new(),
                    discussions: Vec::new(),
                    merge_error: None,
                    rebase_reads_left: None,
                    rebase_fails: false,
                    touched_at: then,
                    source_project: None,
                    resource_events: Vec::new(),
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

    /// `username` pushes a new commit onto `branch` of `project` now, listed among the
    /// project's push events, with a pipeline of its own (no jobs yet). Returns the commit's
    /// sha and the pipeline's id.
    pub fn push_branch(&mut self, project: &str, branch: &str, username: &str) -> (String, u64) {
        self.project(project);
        let sha = self.new_sha();
        let now = self.now;
        self.commits
            .insert(sha.clone(), Commit::by(&sha, username, now));
        self.pushed_branches
            .entry((project.to_owned(), branch.to_owned()))
            .or_default()
            .push(sha.clone());
        let id = self.new_pipeline(project, sha.clone(), branch.into());
        (sha, id)
    }

    /// `username` force-pushes a new commit in place of `branch`'s head, as
    /// [`World::push_branch`] pushes one: the old head leaves the branch and, collected, the
    /// project, so a comparison from it answers 404 (`Ref Not Found`) as GitLab's does.
    pub fn force_push_branch(
        &mut self,
        project: &str,
        branch: &str,
        username: &str,
    ) -> (String, u64) {
        let gone = self
            .pushed_branches
            .get_mut(&(project.to_owned(), branch.to_owned()))
            .and_then(Vec::pop)
            .expect("a pushed branch");
        self.commits.remove(&gone);
        self.push_branch(project, branch, username)
    }

    /// A new pipeline with no jobs yet, on `sha` at `git_ref`; returns its id.
    fn new_pipeline(&mut self, project: &str, sha: String, git_ref: String) -> u64 {
        let id = self.id();
        let pipeline = Pipeline {
            id,
            project: project.into(),
            sha,
            git_ref,
            jobs: Vec::new(),
        };
        self.pipelines.insert(id, pipeline);
        id
    }

    /// A new pipeline on the MR's current head (it becomes the head pipeline).
    pub fn pipeline(&mut self, project: &str, iid: u64) -> u64 {
        let mr = self.get_mr(project, iid).clone();
        let id = self.new_pipeline(project, mr.sha.clone(), mr.source_branch.clone());
        self.get_mr_mut(project, iid).head_pipeline = Some(id);
        id
    }

    /// A merged-results pipeline of the MR, now its head pipeline: it runs on a merge commit
    /// of the target branch's tip and the MR's head (`refs/merge-requests/IID/merge`), so its
    /// sha is never the head's. Returns its id (add jobs with [`World::pipeline_job`]).
    pub fn merged_results_pipeline(&mut self, project: &str, iid: u64) -> u64 {
        let mr = self.get_mr(project, iid).clone();
        let tip = self.branch_json(project, &mr.target_branch)["commit"]["id"]
            .as_str()
            .expect("a tip")
            .to_owned();
        let sha = self.new_sha();
        let now = self.now;
        let mut merge = Commit::by(&sha, &self.viewer.clone(), now);
        merge.pusher = None;
        merge.parents = vec![tip, mr.sha.clone()];
        self.commits.insert(sha.clone(), merge);
        let id = self.new_pipeline(project, sha, format!("refs/merge-requests/{iid}/merge"));
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
}

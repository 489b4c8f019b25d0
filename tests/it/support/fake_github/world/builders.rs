//! The fluent builders that make the common scenarios read as one line each: the `World`
//! methods that start one, and the builder types.

use std::collections::BTreeMap;

use chrono::Duration;

use super::{
    ACTIONS_APP, Annotation, AnnotationLevel, AutoMerge, CheckRun, CheckStatus, CheckSuite, Commit,
    Conclusion, DEFAULT_EVENT, DEFAULT_WORKFLOW, IssueComment, JOB_ID_BASE, MergeMethod,
    MergeState, Mergeable, Pr, PrState, Protection, RUN_ID_BASE, Repo, Review, ReviewState,
    StatusContext, StatusState, Thread, ThreadComment, Time, WorkflowRun, World,
};

impl World {
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
                    collaborators: Vec::new(),
                    branches: BTreeMap::new(),
                },
            );
        }
        RepoBuilder {
            world: self,
            repo: full_name.to_owned(),
        }
    }

    /// `dev`'s PR `number` of `repo`, whose head the owner (the viewer) pushed: a head only a
    /// trusted push vouches for.
    pub fn devs_pr_the_owner_pushed(&mut self, repo: &str, number: u64) -> PrBuilder<'_> {
        let owner = self.viewer.clone();
        self.pr(repo, number)
            .author("dev")
            .head_commit(|c| c.pushed_by(&owner, None))
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
                head_repo: None,
                commits: vec![sha],
                labels: Vec::new(),
                labels_changed_at: self.now - Duration::hours(2),
                mergeable: Mergeable::Mergeable,
                mergeable_unknown_reads: 0,
                merge_state_override: None,
                behind_by: 0,
                rebase_conflicts: false,
                auto_merge: None,
                reviews: Vec::new(),
                threads: Vec::new(),
                comments: Vec::new(),
                created_at: self.now - Duration::hours(2),
                merged_at: None,
                closed_at: None,
                merge_commit: None,
                issue_events: Vec::new(),
                timeline: Vec::new(),
                head_files: Vec::new(),
                base_files: Vec::new(),
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

    pub(super) fn new_commit(&mut self, sha: &str, login: Option<&str>, when: Time) -> Commit {
        Commit {
            sha: sha.to_owned(),
            node_id: self.new_node_id("C"),
            author: login.map(str::to_owned),
            committer: login.map(str::to_owned),
            bot: None,
            author_email: None,
            verified: false,
            pusher: None,
            pushed_at: None,
            push_unlisted: false,
            authored_at: when,
            committed_at: when,
            message: "Change things".to_owned(),
            parents: Vec::new(),
            suites: Vec::new(),
            statuses: Vec::new(),
        }
    }

    /// `login` pushes a new commit onto `branch` of `repo` now (made by them unless `f` says
    /// otherwise), listed in the repository activity. Returns the new sha.
    pub fn push_branch(
        &mut self,
        repo: &str,
        branch: &str,
        login: &str,
        f: impl for<'c> FnOnce(CommitBuilder<'c>) -> CommitBuilder<'c>,
    ) -> String {
        self.repo(repo);
        let sha = self.new_sha();
        let mut commit = self.new_commit(&sha, Some(login), self.now);
        let r = self.repos.get_mut(repo).expect("repo");
        let commits = r.branches.entry(branch.to_owned()).or_default();
        commit.parents = commits.last().cloned().into_iter().collect();
        commit.pushed_at = Some(self.now);
        commits.push(sha.clone());
        r.commits.insert(sha.clone(), commit);
        f(CommitBuilder {
            commit: r.commits.get_mut(&sha).expect("commit"),
        });
        sha
    }

    /// `login` force-pushes a new commit in place of `branch`'s head: the old head leaves the
    /// branch and, collected, the repository, so a comparison from it answers 404 as GitHub's
    /// does. Returns the new sha.
    pub fn force_push_branch(
        &mut self,
        repo: &str,
        branch: &str,
        login: &str,
        f: impl for<'c> FnOnce(CommitBuilder<'c>) -> CommitBuilder<'c>,
    ) -> String {
        let r = self.repos.get_mut(repo).expect("repo");
        let gone = r
            .branches
            .get_mut(branch)
            .and_then(Vec::pop)
            .expect("a pushed branch");
        r.commits.remove(&gone);
        self.push_branch(repo, branch, login, f)
    }

    /// `login` pushes a new head commit to the PR now: no checks yet, a cleared merge-state
    /// override, mergeability and auto-merge kept, the next mergeability read UNKNOWN (GitHub
    /// recomputes it after a push). Returns the new sha.
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
        let sha = self.new_sha();
        self.push_sha(repo, number, &sha, f)
    }

    /// Like [`World::push_with`], the new head being the commit `sha` (one made in a real
    /// repository, as a client's `git push` would bring it).
    pub fn push_sha(
        &mut self,
        repo: &str,
        number: u64,
        sha: &str,
        f: impl for<'c> FnOnce(CommitBuilder<'c>) -> CommitBuilder<'c>,
    ) -> String {
        self.pr(repo, number);
        let sha = sha.to_owned();
        let mut commit = self.new_commit(&sha, Some(&self.viewer.clone()), self.now);
        let r = self.repos.get_mut(repo).expect("repo");
        let pr = r.prs.get_mut(&number).expect("pr");
        commit.parents = pr.commits.last().cloned().into_iter().collect();
        pr.commits.push(sha.clone());
        r.commits.insert(sha.clone(), commit);
        pr.merge_state_override = None;
        pr.mergeable_unknown_reads = pr.mergeable_unknown_reads.max(1);
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
            editor: None,
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
            editor: None,
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
}

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

    /// `login` gets write access: `authorAssociation` COLLABORATOR.
    pub fn collaborator(mut self, login: &str) -> Self {
        self.r().collaborators.push(login.to_owned());
        self
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
        let viewer = self.world.viewer.clone();
        self.issue_event(&viewer, "closed", None)
    }

    /// Merged outside the client's doing (no client event is recorded; the PR's issue events
    /// `merged` and `closed` are).
    pub fn merged(mut self) -> Self {
        let now = self.world.now;
        let sha = self.world.new_sha();
        let p = self.p();
        p.state = PrState::Merged;
        p.merged_at = Some(now);
        p.closed_at = Some(now);
        p.merge_commit = Some(sha.clone());
        p.auto_merge = None;
        let viewer = self.world.viewer.clone();
        self.world.record_issue_event(
            &self.repo,
            self.number,
            &viewer,
            "merged",
            (None, Some(&sha)),
        );
        self.issue_event(&viewer, "closed", None)
    }

    pub fn reopened(mut self) -> Self {
        let p = self.p();
        p.state = PrState::Open;
        p.closed_at = None;
        p.merged_at = None;
        let viewer = self.world.viewer.clone();
        self.issue_event(&viewer, "reopened", None)
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

    /// The head branch lives in the fork `owner/name` (created empty on first use).
    pub fn fork(mut self, fork: &str) -> Self {
        self.world.repo(fork);
        let p = self.p();
        p.cross_repository = true;
        p.head_repo = Some(fork.to_owned());
        self
    }

    /// The viewer adds the label `name` now.
    pub fn label(self, name: &str) -> Self {
        let viewer = self.world.viewer.clone();
        self.labeled_by(name, &viewer)
    }

    /// `login` adds the label `name` now (a `labeled` issue event).
    pub fn labeled_by(mut self, name: &str, login: &str) -> Self {
        let now = self.world.now;
        let p = self.p();
        p.labels.push(name.to_owned());
        p.labels_changed_at = now;
        self.issue_event(login, "labeled", Some(name))
    }

    /// Records `event` (on `label`) by `login` now.
    fn issue_event(self, login: &str, event: &str, label: Option<&str>) -> Self {
        self.world
            .record_issue_event(&self.repo, self.number, login, event, (label, None));
        self
    }

    /// The viewer sets the labels to `names` now: `unlabeled` for each removed, `labeled` for
    /// each added.
    pub fn labels(mut self, names: &[&str]) -> Self {
        let now = self.world.now;
        let p = self.p();
        let before = std::mem::replace(
            &mut p.labels,
            names.iter().map(|s| (*s).to_owned()).collect(),
        );
        p.labels_changed_at = now;
        let viewer = self.world.viewer.clone();
        let removed = before.iter().filter(|l| !names.contains(&l.as_str()));
        let removed: Vec<String> = removed.cloned().collect();
        for l in removed {
            self = self.issue_event(&viewer, "unlabeled", Some(&l));
        }
        for l in names.iter().filter(|n| !before.iter().any(|b| b == *n)) {
            self = self.issue_event(&viewer, "labeled", Some(l));
        }
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

    /// Conflicting with its base in `files` (see [`PrBuilder::changed_on_both_sides`]).
    pub fn conflicting_in(self, files: &[&str]) -> Self {
        self.changed_on_both_sides(files).conflicting()
    }

    /// Both sides changed `files` since they parted, and each side changed one file of its
    /// own besides (what the comparisons answer; mergeability is set on its own).
    pub fn changed_on_both_sides(mut self, files: &[&str]) -> Self {
        let both = files.iter().map(|f| (*f).to_owned());
        let p = self.p();
        p.head_files = both
            .clone()
            .chain(["src/only_on_the_branch.rs".into()])
            .collect();
        p.base_files = both.chain(["docs/only_on_the_base.md".into()]).collect();
        self
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

    /// A rebase of the head onto the base conflicts commit by commit, though the PR merges
    /// cleanly.
    pub fn rebase_conflicts(mut self) -> Self {
        self.p().rebase_conflicts = true;
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

    /// Authored and committed by the GitHub App bot `login` (`claude[bot]`): `user: null` in
    /// GraphQL, its no-reply email, pushed by the bot.
    pub fn app_bot(self, login: &str) -> Self {
        self.commit.author = None;
        self.commit.committer = None;
        self.commit.bot = Some(login.to_owned());
        self
    }

    /// The author email written into the commit (`author { user }` stays as it is).
    pub fn author_email(self, email: &str) -> Self {
        self.commit.author_email = Some(email.to_owned());
        self
    }

    /// Signed, and GitHub verified the signature.
    pub fn verified(self) -> Self {
        self.commit.verified = true;
        self
    }

    /// `login` pushed it (the repository activity's actor), at `at` when given.
    pub fn pushed_by(self, login: &str, at: Option<Time>) -> Self {
        self.commit.pusher = Some(login.to_owned());
        self.commit.pushed_at = at;
        self
    }

    /// The repository activity does not list its push.
    pub fn push_unlisted(self) -> Self {
        self.commit.push_unlisted = true;
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

    /// Failed as a job whose runner was lost: its log ends plainly and an annotation says
    /// the runner was shut down (what tells an infrastructure failure from a real one).
    pub fn runner_lost(self) -> Self {
        self.failure().log("Process completed.\n").annotation(
            AnnotationLevel::Failure,
            ".github",
            1,
            "The runner has received a shutdown signal.",
        )
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
    pub fn log(self, text: &str) -> Self {
        self.log_bytes(text.as_bytes())
    }

    /// The job's log as raw bytes, which need not be UTF-8 (a job may print anything).
    pub fn log_bytes(mut self, bytes: &[u8]) -> Self {
        let id = self.r().database_id;
        self.world.job_logs.insert(id, bytes.to_vec());
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
            editor: None,
            pending: false,
        });
        self
    }

    /// Its last comment is part of a review its author has not submitted yet.
    pub fn pending(mut self) -> Self {
        if let Some(c) = self.t().comments.last_mut() {
            c.pending = true;
        }
        self
    }

    /// `login` edits its last comment to `body` at `t`.
    pub fn edit_last(mut self, login: &str, body: &str, t: Time) -> Self {
        if let Some(c) = self.t().comments.last_mut() {
            body.clone_into(&mut c.body);
            c.updated_at = t;
            c.editor = (c.author.as_deref() != Some(login)).then(|| login.to_owned());
        }
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

    /// Edited by its author at `t`.
    pub fn edited_at(mut self, t: Time) -> Self {
        self.c().updated_at = t;
        self
    }

    /// `login` rewrites it to `body` at `t` (its author, or anyone with triage rights).
    pub fn edited_by(mut self, login: &str, body: &str, t: Time) -> Self {
        let c = self.c();
        body.clone_into(&mut c.body);
        c.updated_at = t;
        c.editor = (c.author.as_deref() != Some(login)).then(|| login.to_owned());
        self
    }

    pub fn id(mut self) -> String {
        self.c().node_id.clone()
    }
}

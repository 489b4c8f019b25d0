//! The forge semantics the GraphQL and REST layers share: derived state (check outcomes,
//! `mergeStateStatus`), merge, auto-merge, branch update, re-run, thread reply and resolve,
//! with GitHub's refusals.

use std::collections::BTreeMap;

use super::{
    ApiError, AutoMerge, CheckStatus, CheckSuite, Commit, Conclusion, Event, MergeMethod,
    MergeState, Mergeable, NodeRef, Outcome, PrState, ReviewState, ThreadComment, Time,
    UpdateMethod, World,
};

impl World {
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
            let approvals = u32::try_from(
                latest
                    .values()
                    .filter(|s| **s == ReviewState::Approved)
                    .count(),
            )
            .unwrap();
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
                super::super::queue::DIRECT_MERGE_REFUSED.into(),
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
    pub(crate) fn merge_from_queue(&mut self, repo: &str, number: u64, method: MergeMethod) {
        self.do_merge(repo, number, method, true);
    }

    /// A new commit (for the merge queue's merge groups).
    pub(crate) fn new_commit_pub(&mut self, sha: &str, login: Option<&str>, when: Time) -> Commit {
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
        if method == UpdateMethod::Rebase && pr.rebase_conflicts {
            return refuse("Rebase failed: merge conflict between base and head");
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
                        pusher: Some(viewer.clone()),
                        pushed_at: Some(now),
                        push_unlisted: false,
                        verified: false,
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
        pr.mergeable_unknown_reads = pr.mergeable_unknown_reads.max(1);
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
        let (viewer, now) = (self.actor(), self.now);
        let thread = &mut self.get_pr_mut(&repo, number).threads[ti];
        thread.comments.push(ThreadComment {
            node_id,
            database_id,
            author: Some(viewer),
            body: body.to_owned(),
            created_at: now,
            updated_at: now,
            editor: None,
            pending: false,
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
        let viewer = self.actor();
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
}

fn not_a_node(id: &str) -> ApiError {
    ApiError::NotFound(format!(
        "Could not resolve to a node with the global id of '{id}'"
    ))
}

//! The fake GitHub's model: repositories, pull requests, commits and their checks, review
//! threads, reviews, comments, job logs — and the forge semantics the API layers share (merge,
//! auto-merge, branch update, re-run, thread reply and resolve), with GitHub's refusals.
//!
//! Every field is public so a test can set up or inspect anything directly; the builder methods
//! on [`World`] make the common scenarios read as one line each (see the module doc of
//! `fake_github` for the overview).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Duration, Utc};

mod builders;
mod model;
mod semantics;

pub use model::*;

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
            people: BTreeMap::new(),
            acting: None,
            now: at(DEFAULT_NOW),
            repos: BTreeMap::new(),
            job_logs: BTreeMap::new(),
            log_host: None,
            logs_ignore_range: false,
            events: Vec::new(),
            held_answers: 0,
            auto_merge_executes: true,
            missing_fields: Vec::new(),
            removed_fields: Vec::new(),
            null_fields: Vec::new(),
            enterprise: false,
            rate: RateLimit {
                limit: 5000,
                core_used: 0,
                graphql_used: 0,
                reset_epoch: Utc::now().timestamp() + 3600,
            },
            app: None,
            next_id: 0,
            database_id_base: 1_000_000,
            node_index: std::cell::RefCell::default(),
        }
    }

    /// A personal token of `login` (an agent's own): requests with it act as `login`.
    pub fn person_token(&mut self, login: &str) -> String {
        let token = format!("ghp_person_{login}");
        self.people.insert(token.clone(), login.to_owned());
        token
    }

    /// The login the request being answered acts as: the token's owner.
    pub fn actor(&self) -> String {
        self.acting.clone().unwrap_or_else(|| self.viewer.clone())
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
        self.database_id_base + self.next()
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

    // ── lookups ─────────────────────────────────────────────────────────────────────────────

    /// GitHub's `CommentAuthorAssociation` of `login` in `repo`: OWNER for the owner of the
    /// repository, COLLABORATOR for the viewer and the repository's collaborators, NONE else.
    pub fn author_association(&self, repo: &str, login: Option<&str>) -> &'static str {
        let Some(login) = login else {
            return "NONE";
        };
        let owner = repo.split('/').next().unwrap_or_default();
        if login.eq_ignore_ascii_case(owner) {
            "OWNER"
        } else if login.eq_ignore_ascii_case(&self.viewer)
            || self
                .get_repo(repo)
                .collaborators
                .iter()
                .any(|c| c.eq_ignore_ascii_case(login))
        {
            "COLLABORATOR"
        } else {
            "NONE"
        }
    }

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
        let (kept, current) = {
            let index = self.node_index.borrow();
            (
                index.at.get(id).cloned(),
                index.walked_at == Some(self.next_id),
            )
        };
        match kept {
            Some(at) if self.node_id_at(&at) == Some(id) => return Some(at),
            None if current => return None,
            _ => {}
        }
        let at = self.walk_nodes();
        let found = at.get(id).cloned();
        *self.node_index.borrow_mut() = NodeIndex {
            at,
            walked_at: Some(self.next_id),
        };
        found
    }

    /// Every node of the world, by id.
    fn walk_nodes(&self) -> std::collections::HashMap<String, NodeRef> {
        let mut index = std::collections::HashMap::new();
        let mut put = |id: &str, at: NodeRef| {
            index.insert(id.to_owned(), at);
        };
        for r in self.repos.values() {
            let repo = || r.full_name.clone();
            put(&r.node_id, NodeRef::Repo(repo()));
            for (sha, c) in &r.commits {
                put(&c.node_id, NodeRef::Commit(repo(), sha.clone()));
                for (si, s) in c.suites.iter().enumerate() {
                    put(&s.node_id, NodeRef::Suite(repo(), sha.clone(), si));
                    if let Some(w) = &s.workflow_run {
                        put(&w.node_id, NodeRef::WorkflowRun(repo(), sha.clone(), si));
                    }
                    for (ri, run) in s.runs.iter().enumerate() {
                        put(&run.node_id, NodeRef::Run(repo(), sha.clone(), si, ri));
                    }
                }
                for (i, st) in c.statuses.iter().enumerate() {
                    put(&st.node_id, NodeRef::StatusContext(repo(), sha.clone(), i));
                }
            }
            for (n, pr) in &r.prs {
                put(&pr.node_id, NodeRef::Pr(repo(), *n));
                for (ti, t) in pr.threads.iter().enumerate() {
                    put(&t.node_id, NodeRef::Thread(repo(), *n, ti));
                    for (ci, c) in t.comments.iter().enumerate() {
                        put(&c.node_id, NodeRef::ThreadComment(repo(), *n, ti, ci));
                    }
                }
                for (i, x) in pr.reviews.iter().enumerate() {
                    put(&x.node_id, NodeRef::Review(repo(), *n, i));
                }
                for (i, x) in pr.comments.iter().enumerate() {
                    put(&x.node_id, NodeRef::IssueComment(repo(), *n, i));
                }
            }
        }
        index
    }

    /// The id of the node at `at`, if the world still has one there.
    fn node_id_at(&self, at: &NodeRef) -> Option<&str> {
        let repo = |r: &str| self.repos.get(r);
        let commit = |r: &str, sha: &str| repo(r).and_then(|r| r.commits.get(sha));
        let pr = |r: &str, n: u64| repo(r).and_then(|r| r.prs.get(&n));
        let id = match at {
            NodeRef::Repo(r) => &repo(r)?.node_id,
            NodeRef::Commit(r, sha) => &commit(r, sha)?.node_id,
            NodeRef::Suite(r, sha, si) => &commit(r, sha)?.suites.get(*si)?.node_id,
            NodeRef::WorkflowRun(r, sha, si) => {
                &commit(r, sha)?
                    .suites
                    .get(*si)?
                    .workflow_run
                    .as_ref()?
                    .node_id
            }
            NodeRef::Run(r, sha, si, ri) => {
                &commit(r, sha)?.suites.get(*si)?.runs.get(*ri)?.node_id
            }
            NodeRef::StatusContext(r, sha, i) => &commit(r, sha)?.statuses.get(*i)?.node_id,
            NodeRef::Pr(r, n) => &pr(r, *n)?.node_id,
            NodeRef::Thread(r, n, t) => &pr(r, *n)?.threads.get(*t)?.node_id,
            NodeRef::ThreadComment(r, n, t, c) => {
                &pr(r, *n)?.threads.get(*t)?.comments.get(*c)?.node_id
            }
            NodeRef::Review(r, n, i) => &pr(r, *n)?.reviews.get(*i)?.node_id,
            NodeRef::IssueComment(r, n, i) => &pr(r, *n)?.comments.get(*i)?.node_id,
        };
        Some(id)
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

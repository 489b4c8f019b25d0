//! The GitLab client: REST v4 for reads and writes, one merge request at a time (GitLab's REST
//! API cannot batch). Wire JSON becomes model types in [`wire`] and never leaves this module.
//!
//! # Requests per open MR per snapshot
//! 1. `GET /projects/:id/merge_requests/:iid?include_diverged_commits_count=true`;
//! 2. `GET /projects/:id/repository/commits/:sha` (who made the head, and when);
//! 3. `GET /projects/:id/pipelines/:pid/jobs` (only when the head pipeline ran on the head,
//!    or on a merge commit of it: a merged-results pipeline, whose commit is read first to
//!    tell; one page per 100 jobs);
//! 4. `GET /projects/:id/repository/commits/:sha/statuses` (external commit statuses);
//! 5. `GET /projects/:id/merge_requests/:iid/discussions` (one page per 100 discussions);
//! 6. `GET /projects/:id/merge_requests/:iid/approvals`;
//! 7. `GET /projects/:id/members/all/:user_id` (the MR author's role), only when the author
//!    wrote in the MR, once per project and author per run;
//!
//! plus `GET /projects/:id` once per project per run (the settings are cached in the client),
//! and, on a project with merge trains, `GET /projects/:id/merge_trains/:branch` once per target
//! branch per run when an MR with auto-merge on targets it (its place in the train).
//! A merged or closed MR costs request 1 only. So a tick over N open MRs in one project costs
//! 5N + 1 requests when no head has a pipeline yet, 6N + 1 otherwise. Arming auto-merge
//! checks what the snapshot just read of the MR, so it costs the `PUT` alone (see
//! [`GitLab::enable_auto_merge`]).

mod arm;
mod branch;
mod events;
mod pipelines;
mod signatures;
mod summary;
pub mod webhook;
mod wire;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::forge::http::{HttpClient, Idempotency, Response, status_error};
use crate::forge::{
    Forge, ForgeError, OpenPr, SnapshotRequest, Summary, SummaryRequest, UpdateMethod,
};
use crate::locked::Locked;
use crate::model::{Check, ForgeKind, MergeMethod, PrRef, RepoSettings, Sha, Snapshot};

/// How many MRs one summary covers (a listing holds 100).
const SUMMARY_BATCH: usize = 100;

/// The most pages read of one list (100,000 items at 100 a page, as GitHub's issue events): a
/// guard against a server that never says "last page". A list cut there says so on stderr.
const MAX_PAGES: u32 = 1000;

/// A GitLab (gitlab.com or self-managed) API endpoint with a token, sent as
/// `Authorization: Bearer` (GitLab accepts it for personal, project and OAuth tokens).
#[derive(Debug)]
pub struct GitLab {
    http: HttpClient,
    api_url: String,
    /// Project settings read this run, by project path.
    projects: Locked<BTreeMap<String, ProjectFacts>>,
    /// Merge trains read this run, by (project path, target branch); `None` when the server
    /// does not list trains (then an MR's own car is read instead).
    trains: Locked<BTreeMap<(String, String), Option<Train>>>,
    /// Whether a user may write to a project (Developer or more), read this run, by (project
    /// path, user id).
    writers: Locked<BTreeMap<(String, u64), bool>>,
    /// What this run's snapshot of an MR showed that arming auto-merge checks, by (project
    /// path, iid), taken when it is armed: the MR is read once per read, not again to arm it.
    armable: Locked<BTreeMap<(String, u64), arm::Armable>>,
}

/// A merge train's cars, front first.
type Train = Vec<wire::TrainCar>;

/// What one `GET /projects/:id` says that merging depends on.
#[derive(Debug, Clone)]
struct ProjectFacts {
    settings: RepoSettings,
    /// Merge trains are on: MRs merge only through the train of their target branch.
    merge_trains: bool,
    /// `group/project`.
    path: Option<String>,
}

/// A project path as GitLab's `:id`: `group/sub/project` → `group%2Fsub%2Fproject`.
fn project_id(repo: &str) -> String {
    crate::forge::percent_encoded(repo, b"")
}

/// `path` with `key=value` added to its query.
fn with_param(path: &str, key: &str, value: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}{key}={value}")
}

fn expect_success(resp: &Response) -> Result<(), ForgeError> {
    if (200..300).contains(&resp.status) {
        Ok(())
    } else {
        Err(status_error(resp))
    }
}

impl GitLab {
    /// A client for `api_url` (`https://gitlab.com/api/v4`), refusing plain http except to
    /// loopback.
    pub fn new(api_url: &str, token: String) -> Result<Self, String> {
        crate::forge::http::check_url(api_url)?;
        Ok(GitLab {
            http: HttpClient::without_github_headers(token),
            api_url: api_url.trim_end_matches('/').to_owned(),
            projects: Locked::new(BTreeMap::new()),
            trains: Locked::new(BTreeMap::new()),
            writers: Locked::new(BTreeMap::new()),
            armable: Locked::new(BTreeMap::new()),
        })
    }

    /// The same client under `limits` (see [`crate::forge::deadline`]).
    #[must_use]
    pub fn with_limits(mut self, limits: crate::forge::deadline::Limits) -> Self {
        self.http = self.http.with_limits(limits);
        self
    }

    /// Requests, points and the rate limit's remaining, for the metrics.
    pub fn usage(&self) -> crate::forge::http::Usage {
        self.http.usage()
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        idem: Idempotency,
    ) -> Result<Response, ForgeError> {
        let body = body.map(crate::forge::http::Body::json);
        self.http.send(
            method,
            &format!("{}{path}", self.api_url),
            body.as_ref(),
            idem,
        )
    }

    /// `/projects/:id/merge_requests/:iid` of `pr`, followed by `rest`.
    fn mr_path(pr: &PrRef, rest: &str) -> String {
        format!(
            "/projects/{}/merge_requests/{}{rest}",
            project_id(&pr.repo),
            pr.number
        )
    }

    fn get<T: DeserializeOwned>(&self, path: &str, what: &str) -> Result<T, ForgeError> {
        let resp = self.send("GET", path, None, Idempotency::Retry)?;
        if resp.status != 200 {
            return Err(status_error(&resp));
        }
        wire::parse(&resp.body, what)
    }

    /// Every page of a list, following `x-next-page`.
    fn get_all<T: DeserializeOwned>(&self, path: &str, what: &str) -> Result<Vec<T>, ForgeError> {
        let mut items = Vec::new();
        let mut url = path.to_owned();
        for _ in 0..MAX_PAGES {
            let resp = self.send("GET", &url, None, Idempotency::Retry)?;
            if resp.status != 200 {
                return Err(status_error(&resp));
            }
            items.extend(wire::parse::<Vec<T>>(&resp.body, what)?);
            match resp.next_page {
                Some(page) => url = with_param(path, "page", page.trim()),
                None => return Ok(items),
            }
        }
        tracing::warn!(
            path,
            "the {what} list is cut short: only its first {} items were read, and it goes on past {MAX_PAGES} pages",
            items.len()
        );
        Ok(items)
    }

    fn merge_request(&self, pr: &PrRef) -> Result<wire::MergeRequest, ForgeError> {
        self.get(
            &Self::mr_path(
                pr,
                "?include_diverged_commits_count=true&include_rebase_in_progress=true",
            ),
            "merge request",
        )
    }

    /// The project's settings, read once per run.
    fn project(&self, repo: &str) -> Result<ProjectFacts, ForgeError> {
        if let Some(s) = self.projects.borrow().get(repo) {
            return Ok(s.clone());
        }
        let project: wire::Project =
            self.get(&format!("/projects/{}", project_id(repo)), "project")?;
        let facts = ProjectFacts {
            settings: wire::repo_settings(&project),
            merge_trains: project.merge_trains_enabled.unwrap_or(false),
            path: project.path_with_namespace,
        };
        self.projects
            .borrow()
            .insert(repo.to_owned(), facts.clone());
        Ok(facts)
    }

    /// Whether user `id` is a member of the project with at least the Developer role (404: not
    /// a member), read once per run.
    fn can_write(&self, repo: &str, id: u64) -> Result<bool, ForgeError> {
        let key = (repo.to_owned(), id);
        if let Some(can) = self.writers.borrow().get(&key) {
            return Ok(*can);
        }
        let path = format!("/projects/{}/members/all/{id}", project_id(repo));
        let can = match self.get::<wire::Member>(&path, "project member") {
            Ok(m) => m.access_level >= wire::DEVELOPER_ACCESS,
            Err(ForgeError::NotFound(_)) => false,
            Err(e) => return Err(e),
        };
        self.writers.borrow().insert(key, can);
        Ok(can)
    }

    fn snapshot(&self, pr: &PrRef) -> Result<Snapshot, ForgeError> {
        let mr = self.merge_request(pr)?;
        let project = self.project(&pr.repo)?;
        let pid = project_id(&pr.repo);
        let sha = mr.head_sha().map(str::to_owned);
        if !mr.is_open() || sha.is_none() {
            let mut snap = wire::snapshot_head(pr, &mr, project.settings, None);
            snap.merge_queue = project.merge_trains;
            return Ok(snap);
        }
        let sha = sha.unwrap_or_default();
        let commit: wire::Commit = self.get(
            &format!("/projects/{pid}/repository/commits/{sha}"),
            "commit",
        )?;
        let mut snap = wire::snapshot_head(pr, &mr, project.settings, Some(&commit));
        snap.merge_queue = project.merge_trains;
        if snap.cross_repository
            && let Some(fork) = mr.source_project_id
        {
            // The MR names its fork by id only: its path is what the agent is told.
            match self.project(&fork.to_string()) {
                Ok(facts) => snap.head_repo = facts.path.or(snap.head_repo),
                // A fork the token cannot see: its id still names it to GitLab.
                Err(ForgeError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        // Only an MR with auto-merge on can be in a train.
        if project.merge_trains && snap.auto_merge_enabled {
            snap.queue_entry = self.train_entry(pr, &mr.target_branch)?;
        }

        let head_pipeline = self.head_pipeline(&pr.repo, &mr)?;
        self.remember_armable(pr, &mr, head_pipeline.is_some());
        if let Some((pipeline, merged_result)) = head_pipeline {
            let jobs: Vec<wire::Job> = self.get_all(
                &format!(
                    "/projects/{pid}/pipelines/{}/jobs?per_page=100&include_retried=false",
                    pipeline.id
                ),
                "pipeline jobs",
            )?;
            snap.checks = jobs
                .into_iter()
                .map(|j| wire::job_check(j, pipeline.id, merged_result))
                .collect();
        }
        let statuses: Vec<wire::CommitStatus> = self.get_all(
            &format!("/projects/{pid}/repository/commits/{sha}/statuses?per_page=100"),
            "commit statuses",
        )?;
        // CI jobs are commit statuses too: keep only what is not one of the head's jobs.
        let job_ids: Vec<u64> = snap.checks.iter().filter_map(|c| c.job_id).collect();
        let statuses: Vec<_> = statuses
            .into_iter()
            .filter(|s| !job_ids.contains(&s.id) && !snap.checks.iter().any(|c| c.name == s.name))
            .map(wire::status_check)
            .collect();
        snap.checks.extend(statuses);

        let discussions: Vec<wire::Discussion> = self.get_all(
            &Self::mr_path(pr, "/discussions?per_page=100"),
            "discussions",
        )?;
        let (threads, comments) = wire::discussions(discussions, &snap.url);
        snap.threads = threads;
        snap.comments = comments;
        // The author's role matters only to their own words.
        let author = mr
            .author
            .as_ref()
            .and_then(|a| Some((a.id?, a.username.as_str())));
        if let Some((id, name)) = author {
            let wrote = snap
                .comments
                .iter()
                .chain(snap.threads.iter().flat_map(|t| &t.comments))
                .any(|c| c.author.as_deref() == Some(name));
            if wrote {
                snap.author_can_write = self.can_write(&pr.repo, id)?;
            }
        }
        let approvals: wire::Approvals = self.get(&Self::mr_path(pr, "/approvals"), "approvals")?;
        snap.reviews = wire::reviews(approvals, mr.detailed_merge_status.as_deref());
        Ok(snap)
    }

    /// Puts the MR on its train once its pipeline passes (`auto_merge`, and its pre-17.11 name
    /// `when_pipeline_succeeds`), guarded by the head sha: 201 added, 202 scheduled; 409 means
    /// the head moved, 400/403/405/406/422 that GitLab will not add it.
    fn join_train(&self, snap: &Snapshot, method: MergeMethod) -> Result<(), ForgeError> {
        let body = json!({
            "sha": snap.head.sha.as_str(),
            "auto_merge": true,
            "when_pipeline_succeeds": true,
            "squash": method == MergeMethod::Squash,
        });
        let path = format!(
            "/projects/{}/merge_trains/merge_requests/{}",
            project_id(&snap.pr.repo),
            snap.pr.number
        );
        let resp = self.send("POST", &path, Some(&body), Idempotency::Once)?;
        match resp.status {
            200..=299 => Ok(()),
            409 => Err(ForgeError::HeadMoved(crate::forge::http::error_message(
                &resp.body,
            ))),
            400 | 403 | 405 | 406 | 422 => Err(ForgeError::Refused(
                crate::forge::http::error_message(&resp.body),
            )),
            _ => Err(status_error(&resp)),
        }
    }

    /// The fingerprints of a project's MRs `iids` (see [`summary`]): one listing per 100 MRs,
    /// one page of pipelines and one read per target branch. An MR the listing lacks, or that
    /// a summary cannot tell, has none.
    fn project_summaries(
        &self,
        repo: &str,
        iids: &[u64],
    ) -> Result<BTreeMap<u64, String>, ForgeError> {
        let pid = project_id(repo);
        let mut mrs: Vec<wire::MergeRequest> = Vec::new();
        for chunk in iids.chunks(100) {
            let list = chunk.iter().fold(String::new(), |mut out, i| {
                let _ = write!(out, "&iids[]={i}");
                out
            });
            mrs.extend(self.get_all::<wire::MergeRequest>(
                &format!("/projects/{pid}/merge_requests?per_page=100{list}"),
                "merge requests",
            )?);
        }
        let pipelines: Vec<wire::Pipeline> = self.get(
            &format!("/projects/{pid}/pipelines?order_by=updated_at&sort=desc&per_page=100"),
            "pipelines",
        )?;
        let mut tips = BTreeMap::new();
        for branch in summary::target_branches(&mrs) {
            let b: wire::Branch = self.get(
                &format!(
                    "/projects/{pid}/repository/branches/{}",
                    project_id(&branch)
                ),
                "branch",
            )?;
            tips.insert(branch, b.commit.id);
        }
        Ok(mrs
            .iter()
            .filter_map(|mr| Some((mr.iid, summary::fingerprint(mr, &pipelines, &tips)?)))
            .collect())
    }

    /// `PUT …/merge` with the sha guard; GitLab's refusals in the shapes callers act on.
    fn put_merge(&self, pr: &PrRef, body: &Value) -> Result<(), ForgeError> {
        let resp = self.send(
            "PUT",
            &Self::mr_path(pr, "/merge"),
            Some(body),
            Idempotency::Once,
        )?;
        match resp.status {
            200..=299 => Ok(()),
            405 | 406 | 422 => Err(ForgeError::Refused(crate::forge::http::error_message(
                &resp.body,
            ))),
            _ => Err(status_error(&resp)),
        }
    }
}

impl Forge for GitLab {
    fn budget(&self) -> crate::forge::rate::Budget {
        self.http.budget(
            &self.api_url,
            crate::forge::rate::GITLAB_RESOURCE,
            self.http.requests(),
        )
    }

    fn hold(&self, until_epoch: i64, streak: u32) {
        self.http
            .hold(crate::forge::http::epoch_time(until_epoch), streak);
    }

    /// `GET /projects/:id/repository/compare?from&to&straight=false`: from the merge base. The
    /// REST API has no conflicts endpoint (the conflict resolver's list is the web UI's own).
    fn changed_files(
        &self,
        pr: &PrRef,
        from: &str,
        to: &str,
    ) -> Result<Option<Vec<String>>, ForgeError> {
        let path = format!(
            "/projects/{}/repository/compare?from={}&to={}&straight=false",
            project_id(&pr.repo),
            project_id(from),
            project_id(to)
        );
        let resp = self.send("GET", &path, None, Idempotency::Retry)?;
        if resp.status == 404 {
            return Ok(None);
        }
        if resp.status != 200 {
            return Err(status_error(&resp));
        }
        let c: wire::Comparison = wire::parse(&resp.body, "comparison")?;
        if c.compare_timeout {
            return Ok(None);
        }
        Ok(Some(
            c.diffs
                .into_iter()
                .flat_map(|d| [d.new_path, d.old_path])
                .collect(),
        ))
    }

    fn issue_events(&self, pr: &PrRef) -> Result<crate::model::issue_event::Events, ForgeError> {
        self.events_of(pr)
            .map(crate::model::issue_event::Events::whole)
    }

    /// The project's push events of the MR's source branch (in the source project), newest
    /// first: who pushed which commit to the branch's tip.
    fn pushes(&self, snap: &Snapshot) -> Result<Vec<crate::model::trust::Push>, ForgeError> {
        let project = snap.head_repo.as_deref().unwrap_or(&snap.pr.repo);
        self.pushes_of(project, &snap.head_ref)
    }

    fn branch_heads(
        &self,
        branches: &[crate::model::branch::BranchRef],
    ) -> Result<Vec<Option<crate::forge::BranchHead>>, ForgeError> {
        self.heads_of(branches)
    }

    fn branch_pushes(
        &self,
        branch: &crate::model::branch::BranchRef,
    ) -> Result<Vec<crate::model::trust::Push>, ForgeError> {
        self.pushes_of(&branch.repo, &branch.name)
    }

    fn branch_signed_commits(
        &self,
        branch: &crate::model::branch::BranchRef,
        since: Option<&Sha>,
        head: &Sha,
    ) -> Result<Option<Vec<crate::model::trust::SignedCommit>>, ForgeError> {
        self.branch_signed(branch, since, head).map(Some)
    }

    /// The MR's commits past the base with their signatures (see [`signatures`]).
    fn signed_commits(
        &self,
        snap: &Snapshot,
    ) -> Result<Option<Vec<crate::model::trust::SignedCommit>>, ForgeError> {
        self.mr_signed_commits(snap).map(Some)
    }

    /// A commit's pipeline jobs and external checks, as GitLab lists them among its statuses.
    fn commit_checks(&self, pr: &PrRef, sha: &Sha) -> Result<Vec<Check>, ForgeError> {
        self.statuses_of(&pr.repo, sha)
    }

    fn snapshots(&self, requests: &[SnapshotRequest]) -> Vec<Result<Snapshot, ForgeError>> {
        requests.iter().map(|r| self.snapshot(&r.pr)).collect()
    }

    /// Per project, one listing of the watched MRs and what tells a change (see [`summary`]).
    /// The fingerprint holds the target branch's tip, so an equal one means the MR is exactly
    /// as far behind as the stored snapshot says. A project that cannot be summarised is read
    /// in full; a forge that cannot be read at all now fails the summary.
    fn summaries(&self, requests: &[SummaryRequest]) -> Result<Vec<Option<Summary>>, ForgeError> {
        let mut by_project: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
        for r in requests {
            by_project
                .entry(r.read.pr.repo.as_str())
                .or_default()
                .push(r.read.pr.number);
        }
        let mut seen: BTreeMap<&str, BTreeMap<u64, String>> = BTreeMap::new();
        for (repo, iids) in by_project {
            match self.project_summaries(repo, &iids) {
                Ok(found) => {
                    seen.insert(repo, found);
                }
                Err(
                    e @ (ForgeError::RateLimited { .. }
                    | ForgeError::Unauthorized(_)
                    | ForgeError::Unreachable(_)),
                ) => return Err(e),
                Err(_) => {}
            }
        }
        Ok(requests
            .iter()
            .map(|r| {
                let fingerprint = seen.get(r.read.pr.repo.as_str())?.get(&r.read.pr.number)?;
                Some(Summary {
                    fingerprint: fingerprint.clone(),
                    behind_by: r.behind_by,
                    unresolved_threads: None,
                    branches: None,
                })
            })
            .collect())
    }

    fn summary_batch_size(&self) -> usize {
        SUMMARY_BATCH
    }

    fn open_prs(&self, repo: &str) -> Result<Vec<OpenPr>, ForgeError> {
        let list: Vec<wire::MergeRequest> = self.get_all(
            &format!(
                "/projects/{}/merge_requests?state=opened&per_page=100",
                project_id(repo)
            ),
            "merge requests",
        )?;
        Ok(list
            .into_iter()
            .map(|mr| OpenPr {
                pr: PrRef {
                    forge: ForgeKind::GitLab,
                    repo: repo.to_owned(),
                    number: mr.iid,
                },
                author: mr.author.map(|a| a.username),
                labels: mr.labels,
            })
            .collect())
    }

    /// One listing across projects (`scope=created_by_me`), each MR's project read from its
    /// `references.full` (`group/project!iid`).
    fn my_open_prs(&self) -> Result<Vec<PrRef>, ForgeError> {
        let list: Vec<wire::MergeRequest> = self.get_all(
            "/merge_requests?scope=created_by_me&state=opened&per_page=100",
            "merge requests",
        )?;
        Ok(list
            .into_iter()
            .filter_map(|mr| {
                let full = mr.references?.full;
                let (repo, _) = full.rsplit_once('!')?;
                Some(PrRef {
                    forge: ForgeKind::GitLab,
                    repo: repo.to_owned(),
                    number: mr.iid,
                })
            })
            .collect())
    }

    fn viewer_login(&self) -> Result<String, ForgeError> {
        Ok(self.viewer()?.login)
    }

    /// GitLab commits for the user (a rebase) as its display name and its commit email (its
    /// primary email when it has set none): both are needed to tell its commits.
    fn viewer(&self) -> Result<crate::model::viewer::Viewer, ForgeError> {
        let user: wire::User = self.get("/user", "user")?;
        let emails = [user.commit_email, user.email]
            .into_iter()
            .flatten()
            .filter(|e| !e.is_empty())
            .collect();
        Ok(crate::model::viewer::Viewer {
            login: user.username,
            commits_as: crate::model::viewer::Committer::NameAndEmail {
                name: user.name,
                emails,
            },
        })
    }

    fn job_log(&self, repo: &str, job_id: u64) -> Result<Option<String>, ForgeError> {
        let path = format!("/projects/{}/jobs/{job_id}/trace", project_id(repo));
        self.http.get_tail(&format!("{}{path}", self.api_url))
    }

    /// GitLab jobs carry no annotations: an empty text per run.
    fn annotations(&self, runs: &[crate::forge::CheckRunRef]) -> Vec<Result<String, ForgeError>> {
        runs.iter().map(|_| Ok(String::new())).collect()
    }

    /// Retries the failed and canceled jobs of pipeline `run_id`.
    fn rerun_failed(&self, pr: &PrRef, run_id: u64) -> Result<(), ForgeError> {
        let resp = self.send(
            "POST",
            &format!(
                "/projects/{}/pipelines/{run_id}/retry",
                project_id(&pr.repo)
            ),
            None,
            Idempotency::Once,
        )?;
        expect_success(&resp)
    }

    /// GitLab only rebases (`PUT …/rebase`), so `UpdateMethod::Merge` rebases too. The rebase
    /// has no head guard: the snapshot's head must still be `expected_head`. It answers 202 and
    /// rebases in the background: the MR shows `rebase_in_progress`, then the new head, or
    /// `merge_error` when the rebase failed (read by later snapshots). 409 ("Failed to enqueue
    /// the rebase operation") means try again later; 403 (cannot push to the source branch,
    /// protected from force push) is a refusal.
    fn update_branch(
        &self,
        snap: &Snapshot,
        expected_head: &Sha,
        _method: UpdateMethod,
    ) -> Result<(), ForgeError> {
        if &snap.head.sha != expected_head {
            return Err(ForgeError::HeadMoved(format!(
                "the head moved from {} to {}",
                expected_head.short(),
                snap.head.sha.short()
            )));
        }
        let resp = self.send(
            "PUT",
            &Self::mr_path(&snap.pr, "/rebase"),
            None,
            Idempotency::Once,
        )?;
        let message = || crate::forge::http::error_message(&resp.body);
        match resp.status {
            200..=299 => Ok(()),
            403 => Err(ForgeError::Refused(message())),
            409 => Err(ForgeError::Transient(format!(
                "GitLab could not start the rebase now ({}); it is asked again later",
                message()
            ))),
            _ => Err(status_error(&resp)),
        }
    }

    /// Arms "merge when pipeline succeeds" (or joins the train) guarded by the head sha, and
    /// only once the head's pipeline exists (see [`GitLab::check_armable`]).
    fn enable_auto_merge(&self, snap: &Snapshot, method: MergeMethod) -> Result<(), ForgeError> {
        self.check_armable(snap)?;
        if snap.merge_queue {
            return self.join_train(snap, method);
        }
        let body = json!({
            "sha": snap.head.sha.as_str(),
            "merge_when_pipeline_succeeds": true,
            "auto_merge": true,
            "squash": method == MergeMethod::Squash,
        });
        self.put_merge(&snap.pr, &body)
    }

    fn disable_auto_merge(&self, snap: &Snapshot) -> Result<(), ForgeError> {
        let resp = self.send(
            "POST",
            &Self::mr_path(&snap.pr, "/cancel_merge_when_pipeline_succeeds"),
            None,
            Idempotency::Once,
        )?;
        match resp.status {
            200..=299 => Ok(()),
            406 => Err(ForgeError::Refused(crate::forge::http::error_message(
                &resp.body,
            ))),
            _ => Err(status_error(&resp)),
        }
    }

    /// Merges now with the sha guard: 409 means the head moved ("SHA does not match HEAD of
    /// source branch"), 405/406/422 that GitLab cannot merge it. `squash` follows `method`;
    /// otherwise the project's own merge method applies.
    fn merge(&self, pr: &PrRef, sha: &Sha, method: MergeMethod) -> Result<(), ForgeError> {
        if self.project(&pr.repo)?.merge_trains {
            return Err(ForgeError::Refused(
                "the project merges only through its merge trains".into(),
            ));
        }
        let body = json!({ "sha": sha.as_str(), "squash": method == MergeMethod::Squash });
        self.put_merge(pr, &body)
    }

    fn reply_to_thread(&self, pr: &PrRef, thread_id: &str, body: &str) -> Result<(), ForgeError> {
        let resp = self.send(
            "POST",
            &Self::mr_path(pr, &format!("/discussions/{}/notes", project_id(thread_id))),
            Some(&json!({ "body": body })),
            Idempotency::Once,
        )?;
        expect_success(&resp)
    }

    fn resolve_thread(&self, pr: &PrRef, thread_id: &str) -> Result<(), ForgeError> {
        let resp = self.send(
            "PUT",
            &Self::mr_path(
                pr,
                &format!("/discussions/{}?resolved=true", project_id(thread_id)),
            ),
            None,
            Idempotency::Once,
        )?;
        expect_success(&resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_paths_are_url_encoded() {
        assert_eq!(
            project_id("group/sub/my.project"),
            "group%2Fsub%2Fmy.project"
        );
        assert_eq!(with_param("/a?x=1", "page", "2"), "/a?x=1&page=2");
        assert_eq!(with_param("/a", "page", "2"), "/a?page=2");
    }
}

//! The GitHub client: GraphQL for reads (many PRs per request) and for the mutations GitHub
//! only offers there, REST for job logs, re-runs and the sha-guarded merge.

pub mod app_auth;
pub mod app_key;
pub mod branch;
mod client;
mod compare;
mod events;
pub mod features;
mod notes;
pub mod queries;
mod read;
mod skim;
mod summary;
mod trust;
pub mod webhook;
mod wire;
mod write;

use crate::forge::http::HttpClient;
use crate::forge::{
    Forge, ForgeError, OpenPr, SnapshotRequest, Summary, SummaryRequest, UpdateMethod,
};
use crate::model::{Check, MergeMethod, PrRef, Sha, Snapshot};
use features::Features;

/// PRs read per snapshot request: keeps each query far under GitHub's node limit.
pub const BATCH_SIZE: usize = 10;

/// A GitHub (or GitHub Enterprise) API endpoint with a token.
#[derive(Debug)]
pub struct GitHub {
    http: HttpClient,
    api_url: String,
    graphql_url: String,
    /// The optional parts of the schema this server has not refused (yet).
    features: crate::locked::Locked<Features>,
    /// The merge queues read this run, by (repository, branch): (position, PR number), front
    /// first; `None` when the read failed.
    queue_lines:
        crate::locked::Locked<std::collections::BTreeMap<(String, String), Option<QueueLine>>>,
    /// Signed in as a GitHub App: each request carries the installation token of the owner
    /// of the repository its verb is about; `None`: the client's own token.
    app: Option<app_auth::AppAuth>,
}

impl GitHub {
    /// A client for `api_url` (REST) and `graphql_url`, refusing plain http except to loopback.
    pub fn new(api_url: &str, graphql_url: &str, token: String) -> Result<Self, String> {
        crate::forge::http::check_url(api_url)?;
        crate::forge::http::check_url(graphql_url)?;
        Ok(GitHub {
            http: HttpClient::new(token),
            api_url: api_url.trim_end_matches('/').to_owned(),
            graphql_url: graphql_url.to_owned(),
            features: crate::locked::Locked::new(Features::default()),
            queue_lines: crate::locked::Locked::new(std::collections::BTreeMap::new()),
            app: None,
        })
    }

    /// The same client under `limits` (see [`crate::forge::deadline`]).
    #[must_use]
    pub fn with_limits(mut self, limits: crate::forge::deadline::Limits) -> Self {
        self.http = self.http.with_limits(limits);
        self
    }

    /// A client signed in as a GitHub App (see [`app_auth`]).
    pub fn with_app(
        api_url: &str,
        graphql_url: &str,
        app: app_auth::AppAuth,
    ) -> Result<Self, String> {
        let mut client = GitHub::new(api_url, graphql_url, String::new())?;
        client.app = Some(app);
        Ok(client)
    }

    /// Requests, points and the rate limit's remaining, for the metrics.
    pub fn usage(&self) -> crate::forge::http::Usage {
        self.http.usage()
    }
}

/// A merge queue's entries as (position, PR number), front first.
type QueueLine = Vec<(u32, u64)>;

/// Each verb is the inherent method of the same name: the reads in `read.rs`, the writes in
/// `write.rs`, acting for the verb's repository (signed in as an App: with its owner's
/// installation token; batches are read owner by owner).
impl Forge for GitHub {
    fn read_batch_size(&self) -> usize {
        BATCH_SIZE
    }

    fn summary_batch_size(&self) -> usize {
        queries::SUMMARY_BATCH
    }

    fn summaries(&self, requests: &[SummaryRequest]) -> Result<Vec<Option<Summary>>, ForgeError> {
        let repos: Vec<&str> = requests.iter().map(|r| r.read.pr.repo.as_str()).collect();
        let mut out = vec![None; requests.len()];
        for (repo, members) in self.by_owner(&repos) {
            let _acting = repo.map(client::acting_for);
            let group = client::members(requests, repo, &members);
            for (summary, &i) in GitHub::summaries(self, &group)?.into_iter().zip(&members) {
                out[i] = summary;
            }
        }
        Ok(out)
    }

    fn snapshots(&self, requests: &[SnapshotRequest]) -> Vec<Result<Snapshot, ForgeError>> {
        let repos: Vec<&str> = requests.iter().map(|r| r.pr.repo.as_str()).collect();
        let mut out: Vec<Option<Result<Snapshot, ForgeError>>> = std::iter::repeat_with(|| None)
            .take(requests.len())
            .collect();
        for (repo, members) in self.by_owner(&repos) {
            let _acting = repo.map(client::acting_for);
            let group = client::members(requests, repo, &members);
            for (result, &i) in GitHub::snapshots(self, &group).into_iter().zip(&members) {
                out[i] = Some(result);
            }
        }
        out.into_iter()
            .map(|r| {
                r.unwrap_or_else(|| Err(ForgeError::Unexpected("no answer for this PR".into())))
            })
            .collect()
    }

    fn budget(&self) -> crate::forge::rate::Budget {
        self.http.budget(
            &self.graphql_url,
            crate::forge::rate::GITHUB_GRAPHQL,
            self.http.graphql_cost(),
        )
    }

    fn hold(&self, until_epoch: i64, streak: u32) {
        self.http
            .hold(crate::forge::http::epoch_time(until_epoch), streak);
    }

    fn open_prs(&self, repo: &str) -> Result<Vec<OpenPr>, ForgeError> {
        let _acting = client::acting_for(repo);
        GitHub::open_prs(self, repo)
    }

    fn my_open_prs(&self) -> Result<Vec<PrRef>, ForgeError> {
        GitHub::my_open_prs(self)
    }

    fn branch_heads(
        &self,
        branches: &[crate::model::branch::BranchRef],
    ) -> Result<Vec<Option<crate::forge::BranchHead>>, ForgeError> {
        GitHub::branch_heads(self, branches)
    }

    fn branch_pushes(
        &self,
        branch: &crate::model::branch::BranchRef,
    ) -> Result<Vec<crate::model::trust::Push>, ForgeError> {
        let _acting = client::acting_for(&branch.repo);
        GitHub::branch_pushes(self, branch)
    }

    fn branch_signed_commits(
        &self,
        branch: &crate::model::branch::BranchRef,
        since: Option<&Sha>,
        head: &Sha,
    ) -> Result<Option<Vec<crate::model::trust::SignedCommit>>, ForgeError> {
        let _acting = client::acting_for(&branch.repo);
        self.commits_since(&branch.repo, since, head).map(Some)
    }

    fn viewer_login(&self) -> Result<String, ForgeError> {
        match &self.app {
            // Installation tokens cannot ask who they are; the App names its bot.
            Some(app) => app.bot_login(&self.http),
            None => GitHub::viewer_login(self),
        }
    }

    fn job_log(&self, repo: &str, job_id: u64) -> Result<Option<String>, ForgeError> {
        let _acting = client::acting_for(repo);
        GitHub::job_log(self, repo, job_id)
    }

    fn annotations(&self, runs: &[crate::forge::CheckRunRef]) -> Vec<Result<String, ForgeError>> {
        self.annotations_and_commits(runs, &[]).0
    }

    fn annotations_and_commits(
        &self,
        runs: &[crate::forge::CheckRunRef],
        prs: &[crate::forge::CommitsAsk],
    ) -> (Vec<Result<String, ForgeError>>, crate::forge::ListedCommits) {
        // One request per owner signed in as an App (one for all otherwise), each run's and
        // PR's answer in its place.
        let repos: Vec<&str> = runs
            .iter()
            .map(|r| r.pr.repo.as_str())
            .chain(prs.iter().map(|a| a.pr.repo.as_str()))
            .collect();
        let mut texts: Vec<Result<String, ForgeError>> = runs
            .iter()
            .map(|_| Err(ForgeError::Unexpected("no answer for this check".into())))
            .collect();
        let mut listed: crate::forge::ListedCommits = vec![None; prs.len()];
        for (repo, members) in self.by_owner(&repos) {
            let _acting = repo.map(client::acting_for);
            let (run_members, pr_members): (Vec<usize>, Vec<usize>) =
                members.into_iter().partition(|&i| i < runs.len());
            let ids: Vec<&str> = run_members
                .iter()
                .map(|&i| runs[i].node_id.as_str())
                .collect();
            let asks: Vec<&crate::forge::CommitsAsk> =
                pr_members.iter().map(|&i| &prs[i - runs.len()]).collect();
            match GitHub::notes(self, &ids, &asks) {
                Ok((answers, commits)) => {
                    for (text, &i) in answers.into_iter().zip(&run_members) {
                        texts[i] = Ok(text);
                    }
                    for (c, &i) in commits.into_iter().zip(&pr_members) {
                        listed[i - runs.len()] = c;
                    }
                }
                Err(e) => {
                    for &i in &run_members {
                        texts[i] = Err(e.clone());
                    }
                }
            }
        }
        (texts, listed)
    }

    fn commit_checks(&self, pr: &PrRef, sha: &Sha) -> Result<Vec<Check>, ForgeError> {
        let _acting = client::acting_for(&pr.repo);
        GitHub::commit_checks(self, pr, sha)
    }

    fn pushes(&self, snap: &Snapshot) -> Result<Vec<crate::model::trust::Push>, ForgeError> {
        let _acting = client::acting_for(&snap.pr.repo);
        GitHub::pushes(self, snap)
    }

    fn signed_commits(
        &self,
        snap: &Snapshot,
    ) -> Result<Option<Vec<crate::model::trust::SignedCommit>>, ForgeError> {
        let _acting = client::acting_for(&snap.pr.repo);
        GitHub::signed_commits(self, snap).map(Some)
    }

    fn changed_files(
        &self,
        pr: &PrRef,
        from: &str,
        to: &str,
    ) -> Result<Option<Vec<String>>, ForgeError> {
        let _acting = client::acting_for(&pr.repo);
        GitHub::changed_files(self, pr, from, to)
    }

    fn issue_events(&self, pr: &PrRef) -> Result<crate::model::issue_event::Events, ForgeError> {
        let _acting = client::acting_for(&pr.repo);
        GitHub::issue_events(self, pr)
    }

    fn rerun_failed(&self, pr: &PrRef, run_id: u64) -> Result<(), ForgeError> {
        let _acting = client::acting_for(&pr.repo);
        GitHub::rerun_failed(self, pr, run_id)
    }

    fn update_branch(
        &self,
        snap: &Snapshot,
        expected_head: &Sha,
        method: UpdateMethod,
    ) -> Result<(), ForgeError> {
        let _acting = client::acting_for(&snap.pr.repo);
        GitHub::update_branch(self, snap, expected_head, method)
    }

    fn enable_auto_merge(&self, snap: &Snapshot, method: MergeMethod) -> Result<(), ForgeError> {
        let _acting = client::acting_for(&snap.pr.repo);
        GitHub::enable_auto_merge(self, snap, method)
    }

    /// One document per owner signed in as an App (each with its installation's token), one
    /// for all with a token; a single PR is armed as [`Forge::enable_auto_merge`] arms it.
    fn enable_auto_merge_many(
        &self,
        prs: &[(&Snapshot, MergeMethod)],
    ) -> Vec<Result<(), ForgeError>> {
        let repos: Vec<&str> = prs.iter().map(|(s, _)| s.pr.repo.as_str()).collect();
        let mut out: Vec<Result<(), ForgeError>> = prs
            .iter()
            .map(|_| Err(ForgeError::Unexpected("no answer for this PR".into())))
            .collect();
        for (repo, members) in self.by_owner(&repos) {
            let _acting = repo.map(client::acting_for);
            let group = client::members(prs, repo, &members);
            for (result, &i) in GitHub::enable_auto_merge_many(self, &group)
                .into_iter()
                .zip(&members)
            {
                out[i] = result;
            }
        }
        out
    }

    fn disable_auto_merge(&self, snap: &Snapshot) -> Result<(), ForgeError> {
        let _acting = client::acting_for(&snap.pr.repo);
        GitHub::disable_auto_merge(self, snap)
    }

    fn merge(&self, pr: &PrRef, sha: &Sha, method: MergeMethod) -> Result<(), ForgeError> {
        let _acting = client::acting_for(&pr.repo);
        GitHub::merge(self, pr, sha, method)
    }

    fn reply_to_thread(&self, pr: &PrRef, thread_id: &str, body: &str) -> Result<(), ForgeError> {
        let _acting = client::acting_for(&pr.repo);
        GitHub::reply_to_thread(self, pr, thread_id, body)
    }

    fn resolve_thread(&self, pr: &PrRef, thread_id: &str) -> Result<(), ForgeError> {
        let _acting = client::acting_for(&pr.repo);
        GitHub::resolve_thread(self, pr, thread_id)
    }
}

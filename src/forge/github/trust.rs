//! What GitHub says of how a head got there: the repository activity of its branch (who
//! pushed what, `GET /repos/{o}/{r}/activity`, in the head's repository: the fork's for a fork
//! PR) and the PR's commits with their signatures' verification
//! (`GET /repos/{o}/{r}/pulls/{n}/commits`); for a watched branch, the commits since its last
//! trusted head (`GET /repos/{o}/{r}/compare/{base}...{head}`), or the head commit alone
//! (`GET /repos/{o}/{r}/commits/{ref}`) when there is none. Read only when something would reach
//! the agent.

use serde::Deserialize;

use super::GitHub;
use crate::forge::ForgeError;
use crate::forge::http::{Idempotency, status_error};
use crate::forge::wire_time;
use crate::model::trust::{Push, SignedCommit};
use crate::model::{Sha, Snapshot};

/// One entry of `GET /repos/{o}/{r}/activity`.
#[derive(Debug, Deserialize)]
struct Activity {
    #[serde(default)]
    before: Option<String>,
    after: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(rename = "activity_type")]
    kind: String,
    #[serde(default)]
    actor: Option<Actor>,
}

#[derive(Debug, Deserialize)]
struct Actor {
    login: String,
}

/// One entry of `GET /repos/{o}/{r}/pulls/{n}/commits`.
#[derive(Debug, Deserialize)]
struct PrCommit {
    sha: String,
    commit: GitCommit,
    #[serde(default)]
    author: Option<Actor>,
    #[serde(default)]
    committer: Option<Actor>,
}

/// `GET /repos/{o}/{r}/compare/{basehead}`, the part that lists commits.
#[derive(Debug, Deserialize)]
struct Comparison {
    #[serde(default)]
    total_commits: usize,
    #[serde(default)]
    commits: Vec<PrCommit>,
}

#[derive(Debug, Deserialize)]
struct GitCommit {
    #[serde(default)]
    verification: Option<Verification>,
}

#[derive(Debug, Deserialize)]
struct Verification {
    verified: bool,
}

/// The activities that put a commit at the branch's tip.
const PUSHES: [&str; 3] = ["push", "force_push", "branch_creation"];

/// Percent-encodes a query value.
fn query_value(s: &str) -> String {
    crate::forge::percent_encoded(s, b"")
}

impl GitHub {
    pub(super) fn pushes(&self, snap: &Snapshot) -> Result<Vec<Push>, ForgeError> {
        let repo = snap.head_repo.as_deref().unwrap_or(&snap.pr.repo);
        self.pushes_of(repo, &snap.head_ref)
    }

    /// The pushes of `branch` in `repo`, newest first.
    pub(super) fn pushes_of(&self, repo: &str, branch: &str) -> Result<Vec<Push>, ForgeError> {
        let path = format!(
            "/repos/{repo}/activity?ref={}&per_page=100",
            query_value(&format!("refs/heads/{branch}"))
        );
        let resp = self.rest("GET", &path, None, Idempotency::Retry)?;
        if resp.status == 404 {
            // The fork is gone, or the token cannot see it: nothing is listed.
            return Ok(Vec::new());
        }
        if resp.status != 200 {
            return Err(status_error(&resp));
        }
        let list: Vec<Activity> = serde_json::from_str(&resp.body)
            .map_err(|e| ForgeError::Unexpected(format!("repository activity: {e}")))?;
        Ok(list
            .into_iter()
            .filter(|a| PUSHES.contains(&a.kind.as_str()))
            .filter_map(|a| {
                Some(Push {
                    actor: a.actor?.login,
                    before: a.before.map(Sha),
                    after: Sha(a.after),
                    at: wire_time(a.timestamp.as_deref()),
                })
            })
            .collect())
    }

    pub(super) fn signed_commits(&self, snap: &Snapshot) -> Result<Vec<SignedCommit>, ForgeError> {
        let path = format!(
            "/repos/{}/pulls/{}/commits?per_page=100",
            snap.pr.repo, snap.pr.number
        );
        let resp = self.rest("GET", &path, None, Idempotency::Retry)?;
        if resp.status != 200 {
            return Err(status_error(&resp));
        }
        let list: Vec<PrCommit> = serde_json::from_str(&resp.body)
            .map_err(|e| ForgeError::Unexpected(format!("pull request commits: {e}")))?;
        if list.len() >= 100 {
            // More than one page: not every commit is known, so the signatures vouch for none.
            return Ok(Vec::new());
        }
        Ok(list.into_iter().map(signed).collect())
    }

    /// The commits of `repo` after `since` up to `head` with their signatures (the head alone
    /// without `since`, or when `since` is gone: the comparison answers 404 once the trusted
    /// head was force-pushed away and collected, and the head is then judged as if no head had
    /// been trusted before). Empty, so vouching for nothing, when they are more than one page.
    pub(super) fn commits_since(
        &self,
        repo: &str,
        since: Option<&Sha>,
        head: &Sha,
    ) -> Result<Vec<SignedCommit>, ForgeError> {
        let Some(since) = since else {
            let resp = self.rest(
                "GET",
                &format!("/repos/{repo}/commits/{head}"),
                None,
                Idempotency::Retry,
            )?;
            if resp.status != 200 {
                return Err(status_error(&resp));
            }
            let c: PrCommit = serde_json::from_str(&resp.body)
                .map_err(|e| ForgeError::Unexpected(format!("commit: {e}")))?;
            return Ok(vec![signed(c)]);
        };
        let path = format!("/repos/{repo}/compare/{since}...{head}?per_page=100");
        let resp = self.rest("GET", &path, None, Idempotency::Retry)?;
        if resp.status == 404 {
            return self.commits_since(repo, None, head);
        }
        if resp.status != 200 {
            return Err(status_error(&resp));
        }
        let c: Comparison = serde_json::from_str(&resp.body)
            .map_err(|e| ForgeError::Unexpected(format!("comparison: {e}")))?;
        if c.total_commits > c.commits.len() {
            return Ok(Vec::new());
        }
        Ok(c.commits.into_iter().map(signed).collect())
    }
}

/// A listed commit with what GitHub verified of its signature.
fn signed(c: PrCommit) -> SignedCommit {
    SignedCommit {
        sha: Sha(c.sha),
        verified: c.commit.verification.is_some_and(|v| v.verified),
        author_login: c.author.map(|a| a.login),
        committer_login: c.committer.map(|a| a.login),
        committer_email: None,
    }
}

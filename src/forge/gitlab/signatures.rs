//! GitLab's commit signatures, read for a head no trusted push vouches for: the MR's commits
//! past the base (`GET /projects/:id/merge_requests/:iid/commits`, newest first) and each
//! one's signature (`GET /projects/:id/repository/commits/:sha/signature`; 404 when it is
//! unsigned). GitLab verifies a GPG, SSH or X.509 signature only when the commit's committer
//! email is one of the signing user's verified emails, and names no username, so a verified
//! commit is told by that email. Reading stops at the first commit that is not signed and
//! verified: one such commit is enough for the signatures to vouch for nothing. A watched
//! branch's commits since its last trusted head come from a comparison
//! (`GET /projects/:id/repository/compare?from=…&to=…&straight=false`), or the head commit
//! alone (`GET /projects/:id/repository/commits/:sha`) when no head was trusted before or the
//! one that was is gone (the comparison answers 404 once it was force-pushed away).

use super::{GitLab, project_id, wire};
use crate::forge::ForgeError;
use crate::model::branch::BranchRef;
use crate::model::trust::SignedCommit;
use crate::model::{Sha, Snapshot};

/// More commits than one page: not every commit is known, so the signatures vouch for none.
const MAX_COMMITS: usize = 100;

impl GitLab {
    /// The MR's commits past the base with their signatures' verification, newest first, up
    /// to the first that is not verified.
    pub(super) fn mr_signed_commits(
        &self,
        snap: &Snapshot,
    ) -> Result<Vec<SignedCommit>, ForgeError> {
        let commits: Vec<wire::ListedCommit> = self.get(
            &Self::mr_path(&snap.pr, &format!("/commits?per_page={MAX_COMMITS}")),
            "merge request commits",
        )?;
        if commits.len() >= MAX_COMMITS {
            return Ok(Vec::new());
        }
        self.signatures(&snap.pr.repo, commits)
    }

    /// The commits of `branch` after `since` up to `head` with their signatures, newest first
    /// (the head alone without `since`, or when `since` is gone); empty, so vouching for
    /// nothing, past one page.
    pub(super) fn branch_signed(
        &self,
        branch: &BranchRef,
        since: Option<&Sha>,
        head: &Sha,
    ) -> Result<Vec<SignedCommit>, ForgeError> {
        let project = project_id(&branch.repo);
        let compared = match since {
            None => None,
            Some(since) => match self.get::<wire::Comparison>(
                &format!(
                    "/projects/{project}/repository/compare?from={since}&to={head}&straight=false"
                ),
                "comparison",
            ) {
                Ok(c) => Some(c),
                Err(ForgeError::NotFound(_)) => None,
                Err(e) => return Err(e),
            },
        };
        let commits = match compared {
            None => vec![self.get::<wire::ListedCommit>(
                &format!("/projects/{project}/repository/commits/{head}"),
                "commit",
            )?],
            Some(c) if c.compare_timeout || c.commits.len() >= MAX_COMMITS => {
                return Ok(Vec::new());
            }
            Some(c) => c.commits.into_iter().rev().collect(),
        };
        self.signatures(&branch.repo, commits)
    }

    /// Each commit's signature in `project`, in order, up to the first that is not verified.
    pub(super) fn signatures(
        &self,
        project: &str,
        commits: Vec<wire::ListedCommit>,
    ) -> Result<Vec<SignedCommit>, ForgeError> {
        let mut out = Vec::with_capacity(commits.len());
        for c in commits {
            let path = format!(
                "/projects/{}/repository/commits/{}/signature",
                project_id(project),
                c.id
            );
            let verified = match self.get::<wire::CommitSignature>(&path, "commit signature") {
                Ok(s) => s.verification_status.as_deref() == Some("verified"),
                Err(ForgeError::NotFound(_)) => false,
                Err(e) => return Err(e),
            };
            out.push(SignedCommit {
                sha: Sha(c.id),
                verified,
                author_login: None,
                committer_login: None,
                committer_email: c.committer_email,
            });
            if !verified {
                break;
            }
        }
        Ok(out)
    }
}

//! Branches on GitLab: a watched branch's tip and the statuses of its commit, and the push
//! events of a branch (who put each tip there), shared with the MRs' trust reads.

use super::{GitLab, project_id, wire};
use crate::forge::ForgeError;
use crate::model::{Check, Sha};

impl GitLab {
    /// A branch's tip (`GET …/repository/branches/:name`) and its commit's statuses: two
    /// requests per branch.
    pub(super) fn heads_of(
        &self,
        branches: &[crate::model::branch::BranchRef],
    ) -> Result<Vec<Option<crate::forge::BranchHead>>, ForgeError> {
        let mut out = Vec::with_capacity(branches.len());
        for b in branches {
            let path = format!(
                "/projects/{}/repository/branches/{}",
                project_id(&b.repo),
                project_id(&b.name)
            );
            let tip: wire::Branch = match self.get(&path, "branch") {
                Ok(tip) => tip,
                Err(ForgeError::NotFound(_)) => {
                    out.push(None);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let sha = Sha(tip.commit.id);
            let checks = self.statuses_of(&b.repo, &sha)?;
            out.push(Some(crate::forge::BranchHead { sha, checks }));
        }
        Ok(out)
    }

    /// A commit's pipeline jobs and external checks, as GitLab lists them among its statuses.
    pub(super) fn statuses_of(&self, repo: &str, sha: &Sha) -> Result<Vec<Check>, ForgeError> {
        let statuses: Vec<wire::CommitStatus> = self.get_all(
            &format!(
                "/projects/{}/repository/commits/{sha}/statuses?per_page=100",
                project_id(repo)
            ),
            "commit statuses",
        )?;
        // A CI job is a commit status with the job's id: its log is the job's trace (an
        // external status has none, and its trace reads as missing).
        Ok(statuses
            .into_iter()
            .map(|s| {
                let id = s.id;
                Check {
                    job_id: Some(id),
                    ..wire::status_check(s)
                }
            })
            .collect())
    }

    /// The push events of `branch` in `project`, newest first.
    pub(super) fn pushes_of(
        &self,
        project: &str,
        branch: &str,
    ) -> Result<Vec<crate::model::trust::Push>, ForgeError> {
        let events: Vec<wire::PushEvent> = self.get(
            &format!(
                "/projects/{}/events?action=pushed&per_page=100",
                project_id(project)
            ),
            "push events",
        )?;
        Ok(events
            .into_iter()
            .filter_map(|e| {
                let data = e.push_data?;
                let on_branch = data.r#ref.as_deref() == Some(branch);
                (data.ref_type.as_deref().is_none_or(|t| t == "branch") && on_branch)
                    .then_some(())?;
                Some(crate::model::trust::Push {
                    actor: e.author_username?,
                    before: data.commit_from.map(Sha),
                    after: Sha(data.commit_to?),
                    at: crate::forge::wire_time(e.created_at.as_deref()),
                })
            })
            .collect())
    }
}

//! The agent's own, smaller power: [`AgentForge`] is a forge client built on the agent's own
//! token (`agents.NAME.token_env | token_file`), never the owner's, and it offers only what an
//! agent may do: answer a review thread, resolve one, and read. Its read face
//! ([`AgentForge::reads`]) is a [`Forge`] whose every write is refused before it leaves the
//! process, so whatever code is handed an agent's client (`thread … --agent NAME`,
//! `pr-monitor mcp`) cannot merge, arm, disarm, re-run or update a branch.

use crate::forge::{
    Forge, ForgeError, OpenPr, SnapshotRequest, Summary, SummaryRequest, rate::Budget,
};
use crate::model::{Check, MergeMethod, PrRef, Sha, Snapshot, UpdateMethod};

/// A forge client on an agent's own token, with only an agent's verbs.
pub struct AgentForge {
    agent: String,
    client: Box<dyn Forge + Send + Sync>,
}

impl std::fmt::Debug for AgentForge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentForge")
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl AgentForge {
    /// `client` must carry the agent's own token (see `App::agent_forge`).
    pub fn new(agent: &str, client: Box<dyn Forge + Send + Sync>) -> Self {
        AgentForge {
            agent: agent.to_owned(),
            client,
        }
    }

    /// The agent's name.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// Answers a review thread, as the agent.
    pub fn reply(&self, pr: &PrRef, thread_id: &str, body: &str) -> Result<(), ForgeError> {
        self.client.reply_to_thread(pr, thread_id, body)
    }

    /// Marks a review thread resolved, as the agent.
    pub fn resolve(&self, pr: &PrRef, thread_id: &str) -> Result<(), ForgeError> {
        self.client.resolve_thread(pr, thread_id)
    }

    /// The client's reads, as a [`Forge`] that refuses every write.
    pub fn reads(&self) -> ReadsOnly<'_> {
        ReadsOnly(&*self.client)
    }
}

/// A forge that reads through the client it wraps and refuses every write without sending it.
pub struct ReadsOnly<'a>(&'a (dyn Forge + Send + Sync));

impl std::fmt::Debug for ReadsOnly<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadsOnly")
    }
}

fn refused(verb: &str) -> Result<(), ForgeError> {
    Err(ForgeError::Refused(format!(
        "an agent cannot {verb}: that is the owner's"
    )))
}

impl Forge for ReadsOnly<'_> {
    fn snapshots(&self, requests: &[SnapshotRequest]) -> Vec<Result<Snapshot, ForgeError>> {
        self.0.snapshots(requests)
    }

    fn summaries(&self, requests: &[SummaryRequest]) -> Result<Vec<Option<Summary>>, ForgeError> {
        self.0.summaries(requests)
    }

    fn summary_batch_size(&self) -> usize {
        self.0.summary_batch_size()
    }

    fn read_batch_size(&self) -> usize {
        self.0.read_batch_size()
    }

    fn budget(&self) -> Budget {
        self.0.budget()
    }

    fn hold(&self, until_epoch: i64, streak: u32) {
        self.0.hold(until_epoch, streak);
    }

    fn open_prs(&self, repo: &str) -> Result<Vec<OpenPr>, ForgeError> {
        self.0.open_prs(repo)
    }

    fn my_open_prs(&self) -> Result<Vec<PrRef>, ForgeError> {
        self.0.my_open_prs()
    }

    fn branch_heads(
        &self,
        branches: &[crate::model::branch::BranchRef],
    ) -> Result<Vec<Option<crate::forge::BranchHead>>, ForgeError> {
        self.0.branch_heads(branches)
    }

    fn branch_pushes(
        &self,
        branch: &crate::model::branch::BranchRef,
    ) -> Result<Vec<crate::model::trust::Push>, ForgeError> {
        self.0.branch_pushes(branch)
    }

    fn branch_signed_commits(
        &self,
        branch: &crate::model::branch::BranchRef,
        since: Option<&Sha>,
        head: &Sha,
    ) -> Result<Option<Vec<crate::model::trust::SignedCommit>>, ForgeError> {
        self.0.branch_signed_commits(branch, since, head)
    }

    fn viewer_login(&self) -> Result<String, ForgeError> {
        self.0.viewer_login()
    }

    fn viewer(&self) -> Result<crate::model::viewer::Viewer, ForgeError> {
        self.0.viewer()
    }

    fn job_log(&self, repo: &str, job_id: u64) -> Result<Option<String>, ForgeError> {
        self.0.job_log(repo, job_id)
    }

    fn changed_files(
        &self,
        pr: &PrRef,
        from: &str,
        to: &str,
    ) -> Result<Option<Vec<String>>, ForgeError> {
        self.0.changed_files(pr, from, to)
    }

    fn annotations(&self, runs: &[crate::forge::CheckRunRef]) -> Vec<Result<String, ForgeError>> {
        self.0.annotations(runs)
    }

    fn annotations_and_commits(
        &self,
        runs: &[crate::forge::CheckRunRef],
        prs: &[crate::forge::CommitsAsk],
    ) -> (Vec<Result<String, ForgeError>>, crate::forge::ListedCommits) {
        self.0.annotations_and_commits(runs, prs)
    }

    fn issue_events(&self, pr: &PrRef) -> Result<crate::model::issue_event::Events, ForgeError> {
        self.0.issue_events(pr)
    }

    fn commit_checks(&self, pr: &PrRef, sha: &Sha) -> Result<Vec<Check>, ForgeError> {
        self.0.commit_checks(pr, sha)
    }

    fn pushes(&self, snap: &Snapshot) -> Result<Vec<crate::model::trust::Push>, ForgeError> {
        self.0.pushes(snap)
    }

    fn signed_commits(
        &self,
        snap: &Snapshot,
    ) -> Result<Option<Vec<crate::model::trust::SignedCommit>>, ForgeError> {
        self.0.signed_commits(snap)
    }

    fn rerun_failed(&self, _pr: &PrRef, _run_id: u64) -> Result<(), ForgeError> {
        refused("re-run checks")
    }

    fn update_branch(
        &self,
        _snap: &Snapshot,
        _expected_head: &Sha,
        _method: UpdateMethod,
    ) -> Result<(), ForgeError> {
        refused("update a branch")
    }

    fn enable_auto_merge(&self, _snap: &Snapshot, _method: MergeMethod) -> Result<(), ForgeError> {
        refused("arm a merge")
    }

    fn disable_auto_merge(&self, _snap: &Snapshot) -> Result<(), ForgeError> {
        refused("disarm a merge")
    }

    fn merge(&self, _pr: &PrRef, _sha: &Sha, _method: MergeMethod) -> Result<(), ForgeError> {
        refused("merge")
    }

    fn reply_to_thread(&self, _pr: &PrRef, _thread: &str, _body: &str) -> Result<(), ForgeError> {
        refused("reply through the read face; use `AgentForge::reply`")
    }

    fn resolve_thread(&self, _pr: &PrRef, _thread: &str) -> Result<(), ForgeError> {
        refused("resolve through the read face; use `AgentForge::resolve`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::snap;
    use crate::forge::github::GitHub;

    /// Every write through the read face is refused in-process: the client underneath points
    /// at a closed port, so a write that got through would fail as unreachable instead.
    #[test]
    fn the_read_face_refuses_every_write_before_sending_it() {
        let client = GitHub::new(
            "http://127.0.0.1:9",
            "http://127.0.0.1:9/graphql",
            "t".into(),
        )
        .unwrap();
        let agent = AgentForge::new("fixer", Box::new(client));
        let reads = agent.reads();
        let snap = snap("a");
        let pr = snap.pr.clone();
        let sha = snap.head.sha.clone();
        let writes = [
            reads.rerun_failed(&pr, 1),
            reads.update_branch(&snap, &sha, UpdateMethod::Merge),
            reads.enable_auto_merge(&snap, MergeMethod::Squash),
            reads.disable_auto_merge(&snap),
            reads.merge(&pr, &sha, MergeMethod::Squash),
            reads.reply_to_thread(&pr, "T", "hi"),
            reads.resolve_thread(&pr, "T"),
        ];
        for (i, w) in writes.into_iter().enumerate() {
            assert!(
                matches!(&w, Err(ForgeError::Refused(why)) if why.starts_with("an agent cannot")),
                "write {i}: {w:?}"
            );
        }
    }
}

//! Watched branches on GitHub: the head of many branches with the checks on it, in one
//! GraphQL request per hundred branches (each branch is one `contexts(first: 100)`
//! connection, so a hundred cost one point, like a hundred idle PRs' summary), and the pushes
//! of one branch from the repository activity.

use serde_json::{Map, Value, json};

use super::queries::branch_heads_query;
use super::{GitHub, wire};
use crate::forge::http::Idempotency;
use crate::forge::{BranchHead, ForgeError};
use crate::model::Sha;
use crate::model::branch::BranchRef;
use crate::model::trust::Push;

/// Branches read per request.
pub const BRANCH_BATCH: usize = 100;

/// The variables of [`branch_heads_query`] for `branches`.
fn variables(branches: &[BranchRef]) -> Value {
    let mut vars = Map::new();
    for (i, b) in branches.iter().enumerate() {
        let (owner, name) = b.repo.split_once('/').unwrap_or((&b.repo, ""));
        vars.insert(format!("o{i}"), json!(owner));
        vars.insert(format!("n{i}"), json!(name));
        vars.insert(format!("r{i}"), json!(format!("refs/heads/{}", b.name)));
    }
    Value::Object(vars)
}

/// One branch's answer: its head and checks, or `None` when the repository or branch is not
/// there.
fn head_of(answer: &Value) -> Result<Option<BranchHead>, ForgeError> {
    let Some(target) = answer.pointer("/ref/target").filter(|t| !t.is_null()) else {
        return Ok(None);
    };
    let Some(oid) = target["oid"].as_str() else {
        return Ok(None);
    };
    let nodes = target
        .pointer("/statusCheckRollup/contexts/nodes")
        .cloned()
        .unwrap_or_else(|| json!([]));
    let contexts: Vec<Option<wire::RollupContext>> = wire::parse(nodes, "branch checks")?;
    Ok(Some(BranchHead {
        sha: Sha(oid.to_owned()),
        checks: contexts
            .into_iter()
            .flatten()
            .map(wire::rollup_check)
            .collect(),
    }))
}

impl GitHub {
    pub(super) fn branch_heads(
        &self,
        branches: &[BranchRef],
    ) -> Result<Vec<Option<BranchHead>>, ForgeError> {
        let mut out = Vec::with_capacity(branches.len());
        for chunk in branches.chunks(BRANCH_BATCH) {
            let answer = self.graphql(
                &branch_heads_query(chunk.len()),
                &variables(chunk),
                None,
                Idempotency::Retry,
            )?;
            if answer.data.is_null() {
                answer.into_data()?;
                return Err(ForgeError::Unexpected("empty answer".into()));
            }
            // A repository that is gone answers `null` with a NOT_FOUND error of its own:
            // that branch is missing, the others are read.
            for i in 0..chunk.len() {
                let one = answer.data.get(format!("b{i}")).unwrap_or(&Value::Null);
                out.push(head_of(one)?);
            }
        }
        Ok(out)
    }

    pub(super) fn branch_pushes(&self, branch: &BranchRef) -> Result<Vec<Push>, ForgeError> {
        self.pushes_of(&branch.repo, &branch.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CheckKind, CheckState, ForgeKind};

    #[test]
    fn a_branch_answer_reads_into_its_head_and_checks() {
        let answer = json!({"ref": {"target": {"oid": "abc", "statusCheckRollup": {"contexts": {"nodes": [
            {"__typename": "CheckRun", "databaseId": 7, "name": "test", "status": "COMPLETED",
             "conclusion": "FAILURE", "detailsUrl": "https://x/7", "startedAt": null, "completedAt": null,
             "checkSuite": {"workflowRun": {"databaseId": 70, "event": "push", "workflow": {"name": "CI"}}}},
            {"__typename": "StatusContext", "context": "deploy", "state": "PENDING", "targetUrl": null,
             "description": null, "createdAt": null}
        ]}}}}});
        let head = head_of(&answer).unwrap().unwrap();
        assert_eq!(head.sha.as_str(), "abc");
        let seen: Vec<_> = head
            .checks
            .iter()
            .map(|c| (c.name.as_str(), c.kind, c.state, c.job_id))
            .collect();
        assert_eq!(
            seen,
            [
                ("test", CheckKind::CheckRun, CheckState::Failed, Some(7)),
                ("deploy", CheckKind::Status, CheckState::Pending, None),
            ]
        );
        assert_eq!(head_of(&json!({"ref": null})).unwrap(), None);
        assert_eq!(head_of(&Value::Null).unwrap(), None);
    }

    #[test]
    fn each_branch_has_its_own_variables() {
        let b = |repo: &str, name: &str| BranchRef {
            forge: ForgeKind::GitHub,
            repo: repo.into(),
            name: name.into(),
        };
        let vars = variables(&[b("octo/app", "main"), b("octo/lib", "release/1")]);
        assert_eq!(vars["o1"], "octo");
        assert_eq!(vars["n1"], "lib");
        assert_eq!(vars["r1"], "refs/heads/release/1");
        let q = branch_heads_query(2);
        assert!(q.contains("b1: repository(owner: $o1, name: $n1)"), "{q}");
    }
}

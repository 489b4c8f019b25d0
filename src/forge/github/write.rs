//! GitHub writes: re-runs, branch updates, auto-merge, the sha-guarded merge and thread replies.

use serde_json::json;

use super::GitHub;
use super::client::Answer;
use super::queries;
use crate::forge::http::{Idempotency, status_error};
use crate::forge::{ForgeError, Refusal};
use crate::model::UpdateMethod;
use crate::model::{MergeMethod, PrRef, Sha, Snapshot};

/// What GitHub's refusal to enable auto-merge means. "Pull request is in clean status" (or
/// "unstable status" where no check is required): nothing to wait for. "Auto merge is not
/// allowed for this repository" or "protected branch rules not configured": no auto-merge here.
fn auto_merge_refusal(msg: String) -> Refusal {
    let lower = msg.to_ascii_lowercase();
    if lower.contains("not allowed") || lower.contains("protected branch rules not configured") {
        Refusal::Unavailable(msg)
    } else if lower.contains("clean status") || lower.contains("unstable status") {
        Refusal::AlreadyClean(msg)
    } else {
        Refusal::Other(msg)
    }
}

/// An error of an arming write: a refusal in the words [`auto_merge_refusal`] reads.
fn armed(e: ForgeError) -> ForgeError {
    match e {
        ForgeError::Refused(msg) => ForgeError::AutoMergeRefused(auto_merge_refusal(msg)),
        other => other,
    }
}

fn graphql_method(method: MergeMethod) -> &'static str {
    match method {
        MergeMethod::Squash => "SQUASH",
        MergeMethod::Merge => "MERGE",
        MergeMethod::Rebase => "REBASE",
    }
}

impl GitHub {
    pub(super) fn rerun_failed(&self, pr: &PrRef, run_id: u64) -> Result<(), ForgeError> {
        let resp = self.rest(
            "POST",
            &format!("/repos/{}/actions/runs/{run_id}/rerun-failed-jobs", pr.repo),
            Some(&json!({})),
            Idempotency::Once,
        )?;
        if (200..300).contains(&resp.status) {
            Ok(())
        } else {
            Err(status_error(&resp))
        }
    }

    /// A merge update goes through REST's `update-branch` with the expected head; a rebase
    /// through GraphQL's `updatePullRequestBranch` (REST cannot rebase). A conflict or a head
    /// is `MergeConflict`, a head that moved `HeadMoved`; "no new commits on the base" is
    /// `Refused`.
    pub(super) fn update_branch(
        &self,
        snap: &Snapshot,
        expected_head: &Sha,
        method: UpdateMethod,
    ) -> Result<(), ForgeError> {
        let typed = |msg: String| {
            let lower = msg.to_ascii_lowercase();
            if lower.contains("conflict") {
                ForgeError::MergeConflict(msg)
            } else if lower.contains("expected head") || lower.contains("head ref") {
                ForgeError::HeadMoved(msg)
            } else {
                ForgeError::Refused(msg)
            }
        };
        if method == UpdateMethod::Merge {
            let body = json!({ "expected_head_sha": expected_head.as_str() });
            let path = format!(
                "/repos/{}/pulls/{}/update-branch",
                snap.pr.repo, snap.pr.number
            );
            let resp = self.rest("PUT", &path, Some(&body), Idempotency::Once)?;
            return match resp.status {
                200..=299 => Ok(()),
                _ => match status_error(&resp) {
                    ForgeError::Refused(msg) => Err(typed(msg)),
                    e => Err(e),
                },
            };
        }
        let vars = json!({
            "pullRequestId": snap.node_id,
            "expectedHeadOid": expected_head.as_str(),
            "updateMethod": "REBASE",
        });
        let answer = self.graphql(
            queries::OPERATIONS,
            &vars,
            Some("UpdateBranch"),
            Idempotency::Once,
        )?;
        match answer.errors.first() {
            None => Ok(()),
            Some(e) => Err(match e.to_forge_error() {
                ForgeError::Refused(msg) => typed(msg),
                other => other,
            }),
        }
    }

    pub(super) fn enable_auto_merge(
        &self,
        snap: &Snapshot,
        method: MergeMethod,
    ) -> Result<(), ForgeError> {
        let vars = json!({
            "pullRequestId": snap.node_id,
            "mergeMethod": graphql_method(method),
            "expectedHeadOid": snap.head.sha.as_str(),
        });
        self.graphql(
            queries::OPERATIONS,
            &vars,
            Some("EnableAutoMerge"),
            Idempotency::Once,
        )
        .and_then(Answer::into_data)
        .map(drop)
        .map_err(armed)
    }

    /// Arms auto-merge on every PR of `prs` in one document (see [`queries::auto_merge_many`]):
    /// one answer per PR, in order, each alias's refusal read as [`GitHub::enable_auto_merge`]
    /// reads its own; a single PR is armed by [`GitHub::enable_auto_merge`]. A write is sent
    /// once: a request that fails as a whole (a 502, a timeout) fails each PR with that error,
    /// its outcome unknown.
    pub(super) fn enable_auto_merge_many(
        &self,
        prs: &[(&Snapshot, MergeMethod)],
    ) -> Vec<Result<(), ForgeError>> {
        if let [(snap, method)] = prs {
            return vec![self.enable_auto_merge(snap, *method)];
        }
        let arming: Vec<queries::Arming<'_>> = prs
            .iter()
            .map(|(snap, method)| queries::Arming {
                pull_request_id: &snap.node_id,
                expected_head: snap.head.sha.as_str(),
                method: graphql_method(*method),
            })
            .collect();
        let answer = match self.graphql(
            &queries::auto_merge_many(&arming),
            &json!({}),
            Some("EnableAutoMerges"),
            Idempotency::Once,
        ) {
            Ok(answer) => answer,
            Err(e) => return prs.iter().map(|_| Err(armed(e.clone()))).collect(),
        };
        // An error that names no alias (the document refused as a whole) is every PR's
        // that has no answer of its own.
        let general = answer
            .errors
            .iter()
            .find(|e| e.path.first().and_then(serde_json::Value::as_str).is_none());
        (0..prs.len())
            .map(|i| {
                let alias = queries::arm_alias(i);
                let own = answer
                    .errors
                    .iter()
                    .find(|e| e.path.first().and_then(serde_json::Value::as_str) == Some(&alias));
                match (own, answer.data.get(&alias)) {
                    (Some(e), _) => Err(armed(e.to_forge_error())),
                    (None, Some(v)) if !v.is_null() => Ok(()),
                    (None, _) => Err(general.map_or_else(
                        || ForgeError::Unexpected(format!("no answer for {alias}")),
                        |e| armed(e.to_forge_error()),
                    )),
                }
            })
            .collect()
    }

    pub(super) fn disable_auto_merge(&self, snap: &Snapshot) -> Result<(), ForgeError> {
        let vars = json!({ "pullRequestId": snap.node_id });
        self.graphql(
            queries::OPERATIONS,
            &vars,
            Some("DisableAutoMerge"),
            Idempotency::Once,
        )?
        .into_data()
        .map(drop)
    }

    pub(super) fn merge(
        &self,
        pr: &PrRef,
        sha: &Sha,
        method: MergeMethod,
    ) -> Result<(), ForgeError> {
        let body = json!({ "merge_method": method.as_str(), "sha": sha.as_str() });
        let resp = self.rest(
            "PUT",
            &format!("/repos/{}/pulls/{}/merge", pr.repo, pr.number),
            Some(&body),
            Idempotency::Once,
        )?;
        if resp.status == 200 {
            Ok(())
        } else {
            Err(status_error(&resp))
        }
    }

    pub(super) fn reply_to_thread(
        &self,
        _pr: &PrRef,
        thread_id: &str,
        body: &str,
    ) -> Result<(), ForgeError> {
        let vars = json!({ "threadId": thread_id, "body": body });
        self.graphql(
            queries::OPERATIONS,
            &vars,
            Some("ReplyToThread"),
            Idempotency::Once,
        )?
        .into_data()
        .map(drop)
    }

    pub(super) fn resolve_thread(&self, _pr: &PrRef, thread_id: &str) -> Result<(), ForgeError> {
        let vars = json!({ "threadId": thread_id });
        self.graphql(
            queries::OPERATIONS,
            &vars,
            Some("ResolveThread"),
            Idempotency::Once,
        )?
        .into_data()
        .map(drop)
    }
}

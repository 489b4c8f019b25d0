//! The shape of `check`'s focused payload, defined once: the contract's keys as typed fields.
//! [`Payload::to_json`] is what is printed; as a JSON object, its keys come out sorted.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::issue_event::IssueEvent;
use crate::model::{Check, ChecksSource, Comment, Review, ReviewThread};

/// The focused payload of one PR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Payload {
    pub pr: PrFacts,
    pub checks: Checks,
    pub comments: Comments,
    pub threads: Threads,
    /// The unresolved threads, and the resolved ones with something new, by id.
    pub thread_details: BTreeMap<String, ThreadDetail>,
    pub reviews: Reviews,
    pub merge: MergeFacts,
    /// Ready by the tick's own rule (see [`crate::core::decide::merge::readiness`]).
    pub ready: bool,
    pub readiness: Missing,
    /// What needs attention, each by its contract name (`failed_checks`, `merge_conflict` …).
    pub actionable: Vec<&'static str>,
    pub has_actionable: bool,
    /// The head moved since the last look.
    pub head_pushed_recently: bool,
    /// The poll's number in watch mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick: Option<u64>,
    /// `--full-payload`: the raw lists.
    #[serde(flatten)]
    pub full: Option<Full>,
}

impl Payload {
    /// The payload as printed.
    pub(crate) fn to_json(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(self)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PrFacts {
    pub number: u64,
    pub url: String,
    pub title: String,
    pub head_ref_name: String,
    pub head_ref_oid: String,
    pub base_ref_name: String,
    pub mergeable: &'static str,
    pub merge_state_status: String,
    pub labels: Vec<String>,
    pub is_draft: bool,
    pub state: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[expect(
    clippy::struct_field_names,
    reason = "the field names are the contract's JSON keys"
)]
pub(crate) struct Checks {
    pub source: ChecksSource,
    pub head_sha: String,
    pub total: usize,
    pub failed: usize,
    pub pending: usize,
    pub passed: usize,
    pub failed_checks: Vec<CheckLink>,
    pub pending_names: Vec<String>,
    /// Failed checks classified as infrastructure flakes, with the evidence.
    pub flakes: Vec<Flake>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CheckLink {
    pub name: String,
    pub url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Flake {
    pub name: String,
    pub evidence: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[expect(
    clippy::struct_field_names,
    reason = "the field names are the contract's JSON keys"
)]
pub(crate) struct Comments {
    pub total_issue_comments: usize,
    pub total_review_comments: usize,
    pub new_issue_comment_ids: Vec<String>,
    pub new_review_comment_ids: Vec<String>,
    pub new_issue_comments: Vec<NewComment>,
    pub new_review_comments: Vec<NewComment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct NewComment {
    pub id: String,
    pub author: Option<String>,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Threads {
    pub unresolved: usize,
    pub unresolved_new: usize,
    pub unresolved_updated_since_head: usize,
    pub unresolved_thread_ids: Vec<String>,
    pub unresolved_new_thread_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ThreadDetail {
    pub path: Option<String>,
    pub line: Option<u64>,
    pub resolved: bool,
    pub outdated: bool,
    pub comments: Vec<ThreadComment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadComment {
    pub author: Option<String>,
    pub body: String,
    pub database_id: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[expect(
    clippy::struct_field_names,
    reason = "the field names are the contract's JSON keys"
)]
pub(crate) struct Reviews {
    pub total: usize,
    pub new_review_ids: Vec<String>,
    pub effective_decision: Option<&'static str>,
    /// Each reviewer's latest approval or change request.
    pub latest_by_reviewer: BTreeMap<String, &'static str>,
    pub new_reviews: Vec<NewReview>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct NewReview {
    pub author: Option<String>,
    pub state: &'static str,
    pub id: String,
}

#[expect(
    clippy::struct_excessive_bools,
    reason = "the contract's merge facts, each a key of the payload"
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MergeFacts {
    pub blocked: bool,
    pub has_conflicts: bool,
    pub conflict_files: Vec<String>,
    pub conflict_analysis_available: bool,
    pub mergeable: &'static str,
    pub merge_state_status: String,
    pub behind: bool,
    pub behind_by: Option<u64>,
    pub is_draft: bool,
}

/// What readiness misses of the criteria.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Missing {
    pub missing_labels: Vec<String>,
    pub missing_approvals_from: Vec<String>,
}

/// The raw lists `--full-payload` adds, under their contract names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Full {
    #[serde(rename = "prChecks")]
    pub pr_checks: Vec<Check>,
    #[serde(rename = "commitCheckRuns")]
    pub commit_check_runs: Vec<Check>,
    #[serde(rename = "commitStatuses")]
    pub commit_statuses: Vec<Check>,
    pub reviews_raw: Vec<Review>,
    pub issue_comments: Vec<Comment>,
    pub review_threads: Vec<ReviewThread>,
    /// Each thread's comments, flat, each naming its thread and place.
    pub review_comments: Vec<PlacedComment>,
    /// The PR's issue events (GitLab: its label and state events), oldest first.
    pub issue_events: Vec<IssueEvent>,
    pub merge_conflicts: Vec<ConflictFile>,
}

/// A review thread's comment with its thread and place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct PlacedComment {
    #[serde(flatten)]
    pub comment: Comment,
    pub thread_id: String,
    pub path: Option<String>,
    pub line: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ConflictFile {
    pub path: String,
}

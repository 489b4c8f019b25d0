//! What people said on a PR: comments (on the conversation or in a review thread), their
//! edits, review threads and submitted reviews.

use serde::{Deserialize, Serialize};

use super::time::Instant;

/// A comment: on the conversation (an issue comment), or inside a review thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    pub id: String,
    /// The REST id (what `in_reply_to` takes).
    pub database_id: Option<u64>,
    pub author: Option<String>,
    pub body: String,
    pub url: Option<String>,
    pub updated_at: Option<Instant>,
    /// When it was written (`None` when the forge did not say).
    #[serde(default)]
    pub created_at: Option<Instant>,
    /// Its last edit, when it was edited after it was written.
    #[serde(default)]
    pub edit: Option<Edit>,
    /// Part of a review not submitted yet (only its author sees it): never feedback.
    #[serde(default)]
    pub pending: bool,
}

/// The last edit of a comment or a review's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    pub at: Option<Instant>,
    /// Who made it; `None` when the forge does not say (GitLab's notes).
    pub by: Option<String>,
}

/// A review thread on the diff (GitHub) or a resolvable discussion (GitLab).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewThread {
    pub id: String,
    pub resolved: bool,
    pub outdated: bool,
    pub path: Option<String>,
    pub line: Option<u64>,
    pub comments: Vec<Comment>,
}

impl ReviewThread {
    /// When anyone last wrote in the thread.
    pub fn last_activity(&self) -> Option<Instant> {
        self.comments.iter().filter_map(|c| c.updated_at).max()
    }
}

/// What a reviewer said in a review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReviewState {
    Approved,
    ChangesRequested,
    Commented,
    Dismissed,
    Pending,
}

impl ReviewState {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "APPROVED" => ReviewState::Approved,
            "CHANGES_REQUESTED" => ReviewState::ChangesRequested,
            "COMMENTED" => ReviewState::Commented,
            "DISMISSED" => ReviewState::Dismissed,
            "PENDING" => ReviewState::Pending,
            _ => return None,
        })
    }

    /// The forge's spelling (`APPROVED`, `CHANGES_REQUESTED` …).
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewState::Approved => "APPROVED",
            ReviewState::ChangesRequested => "CHANGES_REQUESTED",
            ReviewState::Commented => "COMMENTED",
            ReviewState::Dismissed => "DISMISSED",
            ReviewState::Pending => "PENDING",
        }
    }
}

/// A submitted review (its body is a comment on the PR, not on code).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    pub id: String,
    pub database_id: Option<u64>,
    pub author: Option<String>,
    pub state: ReviewState,
    pub body: String,
    pub url: Option<String>,
    pub submitted_at: Option<Instant>,
    pub updated_at: Option<Instant>,
    /// The last edit of its body, when it was edited after it was submitted.
    #[serde(default)]
    pub edit: Option<Edit>,
}

//! The plan's vocabulary: what the decision core hands the shell (actions, agent requests,
//! notices) and what it records. Plain data, shared by the core's stages, `feedback`,
//! `report` and the shell, so none of them needs the rules to name it.

use crate::config::{NotifyKind, UpdateMethod};
use crate::model::{FailedCheck, Instant, MergeMethod, Sha};
use crate::watch::{HistoryEntry, WatchStatus};

/// What an agent message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    CiFailure,
    ReviewFeedback,
    Conflict,
}

impl MessageKind {
    /// The contract's spelling (`kind` in an agent message).
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::CiFailure => "ci_failure",
            MessageKind::ReviewFeedback => "review_feedback",
            MessageKind::Conflict => "conflict",
        }
    }

    /// The short word in a message id.
    pub fn id_word(self) -> &'static str {
        match self {
            MessageKind::CiFailure => "ci",
            MessageKind::ReviewFeedback => "review",
            MessageKind::Conflict => "conflict",
        }
    }
}

/// One piece of review feedback handed to the agent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Feedback {
    /// issue_comment | review | review_thread | review_comment
    pub source: String,
    pub id: String,
    pub author: Option<String>,
    pub body: String,
    pub path: Option<String>,
    pub line: Option<u64>,
    pub url: Option<String>,
    pub updated_at: String,
}

/// A message for the PR's agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRequest {
    /// Stable for one (PR, head, kind, attempt): a retried delivery overwrites, never doubles.
    pub id: String,
    pub agent: String,
    pub kind: MessageKind,
    /// fix_sent | fix_asked
    pub reason: crate::watch::Why,
    pub checks: Vec<FailedCheck>,
    pub feedback: Vec<Feedback>,
}

/// A notice for the owner. The words come from `report`; this says what and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub kind: NotifyKind,
    /// After `PR #342: `, e.g. `lint failed`, `merged`, `merge armed`.
    pub headline: String,
    pub detail: String,
}

/// Something the shell must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    SendToAgent(AgentRequest),
    /// Re-run the failed jobs of these workflow runs (GitHub) or pipelines (GitLab).
    RerunFailed {
        run_ids: Vec<u64>,
        /// The once-per-job-per-head guards (`<sha>:<check name>`) this re-run spends.
        guards: Vec<String>,
    },
    UpdateBranch {
        expected_head: Sha,
        method: UpdateMethod,
    },
    /// Enable the forge's auto-merge; if the forge refuses because the PR is already clean
    /// and `merge_if_clean` is set, merge that head directly instead.
    EnableAutoMerge {
        method: MergeMethod,
        merge_if_clean: Option<Sha>,
    },
    DisableAutoMerge,
    Merge {
        sha: Sha,
        method: MergeMethod,
    },
    Notify(Notice),
}

/// What one tick decided for one PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The PR's state after the tick.
    pub status: WatchStatus,
    pub actions: Vec<Action>,
    /// The audit trail of this tick: one row per decision.
    pub history: Vec<HistoryEntry>,
    /// Items now handled: (source, id, updated_at).
    pub seen: Vec<(String, String, String)>,
    /// When to look again; `None` once the PR is merged or closed.
    pub next_tick_at: Option<Instant>,
    /// The recorded intents this tick's read reconciled (see [`crate::intent`]).
    pub resolved_intents: Vec<i64>,
}

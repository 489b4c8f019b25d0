//! The plan's vocabulary: what the decision core hands the shell (actions, agent requests,
//! notices) and what it records. Plain data, shared by the core's stages, `feedback`,
//! `report` and the shell, so none of them needs the rules to name it.

use crate::model::UpdateMethod;
use crate::model::watch::{HistoryEntry, WatchStatus, Why};
use crate::model::{FailedCheck, ForgeKind, Instant, MergeMethod, Sha};
use serde::{Deserialize, Serialize};

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

/// Where an item that is marked seen comes from: the one vocabulary of the tick's seen state
/// (review feedback) and `check`'s (the focused payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeenSource {
    /// A comment on the conversation.
    IssueComment,
    /// A review's own body.
    Review,
    /// A review thread (its latest comment).
    ReviewThread,
    /// One comment in a review thread (`check` only).
    ReviewComment,
    /// The head last looked at (`check` only).
    Head,
}

impl SeenSource {
    /// The stored and printed spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SeenSource::IssueComment => "issue_comment",
            SeenSource::Review => "review",
            SeenSource::ReviewThread => "review_thread",
            SeenSource::ReviewComment => "review_comment",
            SeenSource::Head => "head",
        }
    }
}

/// One piece of review feedback handed to the agent; serialised as an agent message's
/// `feedback[]` item. Its update time is also what the seen state keeps.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Feedback {
    pub source: SeenSource,
    pub id: String,
    pub author: Option<String>,
    pub body: String,
    pub path: Option<String>,
    pub line: Option<u64>,
    pub url: Option<String>,
    /// When the forge last saw it change (`null` when it did not say).
    #[serde(default, serialize_with = "empty_as_null")]
    pub updated_at: String,
    /// Its words were edited after they were written.
    #[serde(default)]
    pub edited: bool,
    /// How its words read: `request`, `question`, `nit`, `approval_note` (a hint).
    #[serde(default)]
    pub classification: FeedbackHint,
}

impl Feedback {
    /// Its key in a seen state: (source, id).
    pub fn seen_key(&self) -> (String, String) {
        (self.source.as_str().to_owned(), self.id.clone())
    }
}

/// How a feedback item's words read (`core::hint` says how it is told): a hint for the agent,
/// which decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackHint {
    /// Asks for a change.
    #[default]
    Request,
    /// Asks something: answer it, or say it needs the owner's judgment.
    Question,
    /// A small, optional point.
    Nit,
    /// Approves, with nothing to change.
    ApprovalNote,
}

impl FeedbackHint {
    /// `request`, `question`, `nit`, `approval_note`.
    pub fn as_str(self) -> &'static str {
        match self {
            FeedbackHint::Request => "request",
            FeedbackHint::Question => "question",
            FeedbackHint::Nit => "nit",
            FeedbackHint::ApprovalNote => "approval_note",
        }
    }
}

/// An unknown instant, kept as `""`, is written as `null`.
fn empty_as_null<S: serde::Serializer>(s: &str, out: S) -> Result<S::Ok, S::Error> {
    if s.is_empty() {
        out.serialize_none()
    } else {
        out.serialize_str(s)
    }
}

/// One row of a seen state: the item (`source`, `id`) was handled as of `updated_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenMark {
    pub source: SeenSource,
    pub id: String,
    pub updated_at: String,
}

impl SeenMark {
    /// Its key in a seen state: (source, id).
    pub fn key(&self) -> (String, String) {
        (self.source.as_str().to_owned(), self.id.clone())
    }

    pub fn new(source: SeenSource, id: impl Into<String>, updated_at: impl Into<String>) -> Self {
        SeenMark {
            source,
            id: id.into(),
            updated_at: updated_at.into(),
        }
    }
}

/// A message for the PR's agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRequest {
    /// Stable for one (PR, head, kind, attempt): a retried delivery overwrites, never doubles.
    pub id: String,
    pub agent: String,
    pub kind: MessageKind,
    /// fix_sent | fix_asked
    pub reason: Why,
    pub checks: Vec<FailedCheck>,
    pub feedback: Vec<Feedback>,
    /// How the head is vouched for (`push by fixer-bot`, `signatures`, `vouched by the owner`).
    pub trusted_by: String,
    /// A conflict message's files, where the forge could tell them (the shell reads them just
    /// before the message goes: the core leaves this empty).
    pub conflict_files: Vec<String>,
}

/// A conflict message readied with a branch update, sent in the same tick when the update
/// finds the conflict (rather than at the next decision).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictHandoff {
    pub request: AgentRequest,
    /// When the decision readied it: the message's time in the PR's memory.
    pub at: Instant,
}

/// A notice for the owner: what happened, with the facts its words need. Closed: every notice
/// pr-monitor sends is one of these, its kind is [`Notice::kind`], and its words are
/// `report`'s ([`crate::core::report::headline`], [`crate::core::report::detail`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Checks failed and it is the owner's move (`ci` lit), for `why`.
    ChecksFailed {
        names: Vec<String>,
        why: Why,
        attempts: u32,
    },
    /// A guard stopped auto-fix.
    GuardStopped { guard: Guard, attempts: u32 },
    /// The branch conflicts with `base` (`cnf` lit); `found` is the forge's words when a
    /// branch update found the conflict.
    Conflict { base: String, found: Option<String> },
    /// More review threads are unresolved (`cmt` rose).
    Unresolved { threads: u32 },
    /// The owner armed the merge.
    MergeArmed,
    /// The armed merge was disarmed, for `reason`.
    Disarmed { reason: Disarm },
    /// The PR merged; `done` is what it merged with (see [`Done`]).
    Merged { done: Done },
    /// The merge queue (GitHub) or train (GitLab) let `head` go, for `why`; `evidence` is the
    /// failed checks' log tails, if any.
    LeftQueue {
        forge: ForgeKind,
        why: String,
        head: Sha,
        evidence: String,
    },
    /// The head has not moved for this many seconds past the stuck timeout.
    Stuck { for_secs: i64 },
    /// The watch's ticks keep failing.
    KeepsErroring { error: String },
    /// The agent was sent `per_hour` messages about the PR in the last hour: more work waits.
    AgentCapped { per_hour: u32 },
    /// The agent marked review feedback done without a new commit and without answering any
    /// of it (`threads` review threads and `comments` other items); `note` is what it said.
    AgentDidNothing {
        threads: usize,
        comments: u32,
        note: Option<String>,
    },
    /// A command agent failed `attempts` times on one message: it is not tried again.
    AgentGaveUp {
        agent: String,
        attempts: u32,
        error: String,
    },
    /// The forge token now belongs to `now`, not `was`: every watch of the forge is paused.
    TokenLoginChanged { was: String, now: String },
}

/// The `done` record of a merge (seed 002's "stop at merge"): what the PR merged with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// The merged head.
    pub head: Sha,
    /// Its checks (newest per check): how many passed of how many, and the failed ones.
    pub checks_passed: usize,
    pub checks_total: usize,
    pub checks_failed: Vec<String>,
    /// Who approved (their latest review), in name order.
    pub approved_by: Vec<String>,
    pub threads_resolved: usize,
    /// The review threads still open, each named.
    pub threads_open: Vec<OpenThread>,
    /// The messages sent to the agent about this PR.
    pub agent_messages: u32,
}

/// A review thread left open at merge: where, who opened it, and its link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenThread {
    /// `src/lib.rs:10`, or `a thread` when it is on no line.
    pub place: String,
    pub author: Option<String>,
    pub url: Option<String>,
}

/// The guards that stop auto-fix, with the failed checks' names where a failure tripped it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guard {
    /// The fix is over and the head has not moved.
    NoNewCommit,
    MaxAttempts {
        names: Vec<String>,
    },
    SameFailure {
        names: Vec<String>,
    },
}

impl Guard {
    /// The why the status shows for it.
    pub fn why(&self) -> Why {
        match self {
            Guard::NoNewCommit => Why::NoNewCommit,
            Guard::MaxAttempts { .. } => Why::MaxAttempts,
            Guard::SameFailure { .. } => Why::SameFailure,
        }
    }
}

/// Why an armed merge was disarmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disarm {
    /// The decision core's reason, in its words (a human push, a base that is not the default …).
    Because(String),
    /// The PR closed without merging.
    Closed,
    /// The owner ran `merge --cancel`.
    Cancelled,
}

impl Notice {
    /// Which `notify_on` kind it is (the contract's spelling through [`NotifyKind::as_str`]).
    pub fn kind(&self) -> NotifyKind {
        match self {
            Notice::ChecksFailed { .. } => NotifyKind::Ci,
            Notice::GuardStopped { .. }
            | Notice::AgentCapped { .. }
            | Notice::AgentDidNothing { .. }
            | Notice::AgentGaveUp { .. } => NotifyKind::Guard,
            Notice::Conflict { .. } => NotifyKind::Conflict,
            Notice::Unresolved { .. } => NotifyKind::Review,
            Notice::MergeArmed
            | Notice::Disarmed { .. }
            | Notice::Merged { .. }
            | Notice::LeftQueue { .. } => NotifyKind::Merge,
            Notice::Stuck { .. } => NotifyKind::Stuck,
            Notice::KeepsErroring { .. } | Notice::TokenLoginChanged { .. } => NotifyKind::Error,
        }
    }
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
        /// The conflict message to send at once when the forge answers that the update
        /// conflicts (the conflict policy hands it to the agent): readied by the decision,
        /// which knows whether the agent may have it.
        on_conflict: Option<Box<ConflictHandoff>>,
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
    pub seen: Vec<SeenMark>,
    /// When to look again; `None` once the PR is merged or closed.
    pub next_tick_at: Option<Instant>,
    /// The recorded intents this tick's read reconciled (see [`crate::model::intent`]).
    pub resolved_intents: Vec<i64>,
    /// Something would reach the agent, and whether the head is trusted (or whose it is)
    /// depends on what the forge says of its push and commits: read them, then decide again
    /// with them (this plan is not to be applied).
    pub needs_evidence: bool,
}
/// The method of the forge's auto-merge that `actions` turn on, when that is the first thing
/// they ask of the forge (messages and notices aside): a chunk's such armings can be asked
/// together before each plan is applied.
pub fn arms_first(actions: &[Action]) -> Option<MergeMethod> {
    match actions.iter().find(|a| a.writes_to_forge())? {
        Action::EnableAutoMerge { method, .. } => Some(*method),
        _ => None,
    }
}

impl Action {
    /// Whether this action asks the forge to change something (a message to the agent and a
    /// notice go to the outbox).
    pub fn writes_to_forge(&self) -> bool {
        !matches!(self, Action::SendToAgent(_) | Action::Notify(_))
    }
}

/// A notification channel, configured in the config's `notify` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyChannel {
    /// `notify.email`.
    Email,
    /// `notify.slack`.
    Slack,
}

impl NotifyChannel {
    /// The name as written in YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyChannel::Email => "email",
            NotifyChannel::Slack => "slack",
        }
    }
}

/// What a notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyKind {
    /// A lit `ci` pill.
    Ci,
    /// A guard stopped auto-fix.
    Guard,
    /// A merge armed, disarmed or merged.
    Merge,
    /// A PR stuck past its timeout.
    Stuck,
    /// A watch that keeps erroring.
    Error,
    /// A lit `cnf` pill (off by default).
    Conflict,
    /// A lit `cmt` pill (off by default).
    Review,
}

impl NotifyKind {
    /// The name as written in YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyKind::Ci => "ci",
            NotifyKind::Guard => "guard",
            NotifyKind::Merge => "merge",
            NotifyKind::Stuck => "stuck",
            NotifyKind::Error => "error",
            NotifyKind::Conflict => "conflict",
            NotifyKind::Review => "review",
        }
    }

    /// The kinds notified when a job does not say: `ci, guard, merge, stuck, error`.
    pub const DEFAULT: [NotifyKind; 5] = [
        NotifyKind::Ci,
        NotifyKind::Guard,
        NotifyKind::Merge,
        NotifyKind::Stuck,
        NotifyKind::Error,
    ];
}

#[cfg(test)]
mod arming_tests {
    use super::*;

    #[test]
    fn a_plan_arms_first_only_when_arming_is_its_first_forge_write() {
        let arm = Action::EnableAutoMerge {
            method: MergeMethod::Squash,
            merge_if_clean: None,
        };
        let notice = Action::Notify(Notice::Stuck { for_secs: 60 });
        let update = Action::UpdateBranch {
            expected_head: Sha("a".repeat(40)),
            method: UpdateMethod::Merge,
            on_conflict: None,
        };
        assert_eq!(
            arms_first(std::slice::from_ref(&arm)),
            Some(MergeMethod::Squash)
        );
        assert_eq!(
            arms_first(&[notice.clone(), arm.clone()]),
            Some(MergeMethod::Squash)
        );
        assert_eq!(arms_first(&[update, arm]), None);
        assert_eq!(arms_first(&[notice]), None);
        assert_eq!(arms_first(&[]), None);
    }
}

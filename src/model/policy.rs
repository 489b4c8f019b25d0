//! The policy for one PR, resolved from the config and its job: every switch and figure the
//! core decides with, as plain data (the config is read and resolved in `config`).

use serde::{Deserialize, Serialize};

use super::plan::{NotifyChannel, NotifyKind};
use super::{MergeMethod, UpdateMethod};

/// The policy for one PR, resolved: the job's `policy`, else the config's `pr` block, else the
/// built-in default. Callers apply per-watch overrides (`watch add --agent …`) on top.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent switches of the policy, each a key of the job file"
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Policy {
    /// The job the PR belongs to, if any.
    pub job: Option<String>,
    /// The agent that fixes the PR (a key of `agents`), if any.
    pub agent: Option<String>,
    /// Send failures on the agent's commits back to it.
    pub auto_fix: bool,
    /// Fixes per PR before auto-fix stops.
    pub max_attempts: u32,
    /// `None`: the first the repository allows of squash, merge, rebase.
    pub merge_method: Option<MergeMethod>,
    /// Seconds between ticks while something is happening.
    pub poll_sec: u64,
    /// Seconds between ticks otherwise.
    pub idle_poll_sec: u64,
    /// Seconds a fix may be in flight without a new commit.
    pub fix_timeout_sec: u64,
    /// Seconds a head with no checks counts as pending.
    pub no_checks_grace_sec: u64,
    /// Seconds without movement before a PR is stuck; `None`: never.
    pub stuck_after_sec: Option<u64>,
    /// Seconds a check may stay pending before it counts as never finished; `None`: forever.
    pub pending_timeout_sec: Option<u64>,
    /// Lines of a failed log sent to the agent.
    pub log_tail_lines: usize,
    /// Bytes of a failed log sent to the agent, at most.
    pub log_tail_bytes: usize,
    /// Extra infra-flake substrings, matched case-insensitively.
    pub infra_patterns: Vec<String>,
    /// Arm a merge as soon as the PR is watched.
    pub merge_when_ready: bool,
    /// Who handles review feedback.
    pub reviews: Handler,
    /// Who handles merge conflicts.
    pub conflicts: Handler,
    /// When a behind branch is updated.
    pub update_branch: UpdateBranch,
    /// How it is updated.
    pub update_method: UpdateMethod,
    /// Labels required before a merge is armed.
    pub required_labels: Vec<String>,
    /// Logins whose approval is required before a merge is armed.
    pub required_approvals_from: Vec<String>,
    /// Logins whose feedback may reach the agent, besides the owner and the PR author.
    pub trust: Vec<String>,
    /// Whether merges may be armed on a PR whose base is not the default branch.
    pub allow_non_default_base: bool,
    /// Whether pr-monitor merges itself where the forge has no auto-merge.
    pub self_merge: bool,
    /// Which edits make a comment new feedback.
    pub edits: Edits,
    /// Which checks are judged: all, or only those the base requires.
    pub checks: ChecksScope,
    /// Messages to the agent per PR in any hour; `None`: no cap.
    pub agent_messages_per_hour: Option<u32>,
    /// Feedback reaches the agent only when it mentions this handle; `None`: no gate.
    pub mention: Option<String>,
    /// Channels to notify through.
    pub notify: Vec<NotifyChannel>,
    /// Event kinds that notify.
    pub notify_on: Vec<NotifyKind>,
}

impl Policy {
    /// Whether events of `kind` are notified at all.
    pub fn notifies(&self, kind: NotifyKind) -> bool {
        !self.notify.is_empty() && self.notify_on.contains(&kind)
    }
}

/// Which edits of a comment count as new feedback (`edits:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Edits {
    /// An edit its own author made (as the forge says; GitLab never says, so there none).
    Author,
    /// None: a comment is new once, when it is written.
    Never,
}

/// Which checks are judged (`checks:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChecksScope {
    /// Every check on the head.
    #[default]
    All,
    /// Only the checks the base branch requires (GitHub's required checks; on GitLab every
    /// job but those allowed to fail, which are never failures anyway).
    Required,
}

/// Who deals with review feedback (`reviews:`) or a merge conflict (`conflicts:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Handler {
    /// The owner: pr-monitor only lights the pill (`cmt` or `cnf`).
    Owner,
    /// The agent: new feedback, or the conflict, is sent to it.
    Agent,
}

impl Handler {
    /// The name as written in YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            Handler::Owner => "owner",
            Handler::Agent => "agent",
        }
    }
}

/// When a branch that is behind its base gets updated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpdateBranch {
    /// Only when a merge is armed.
    Armed,
    /// Whenever it is behind.
    Always,
    /// Never.
    Never,
}

impl UpdateBranch {
    /// The name as written in YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateBranch::Armed => "armed",
            UpdateBranch::Always => "always",
            UpdateBranch::Never => "never",
        }
    }
}

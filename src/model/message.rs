//! The messages pr-monitor writes into its outbox, as typed values shared by their writer
//! (`report`, the digest and `notify test`) and their readers (the email and Slack transports):
//! the owner notice payload, the agent message (the contract's inbox shape), and the channel a
//! message goes through.
//!
//! Stored text is written through [`to_json`]: keys in alphabetical order, as the outbox has
//! always held them, whatever order the fields are declared in here.

use serde::{Deserialize, Serialize};

use crate::model::plan::{Feedback, MessageKind};
use crate::model::watch::{Pills, Why};

/// The JSON text of a message as the outbox stores it (keys sorted).
pub fn to_json<T: Serialize>(message: &T) -> serde_json::Result<String> {
    serde_json::to_value(message).map(|v| v.to_string())
}

/// An owner notice for email and Slack. Every field but `subject` may be absent: the error
/// notice, digests and `notify test` carry fewer fields, and rows written by older versions
/// are read the same way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NoticePayload {
    /// `PR #342: lint failed · octo/app`: the email subject and Slack's first line.
    pub subject: String,
    /// The plain-text message.
    pub text: String,
    /// The PR's web address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The PR's title (forge text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `ci`, `guard`, `merge` … (a notice's `notify_on` kind), `digest` or `test`.
    pub kind: String,
    /// The PR's pills when the notice was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pills: Option<Pills>,
    /// The failed checks, each with its page (absent from the error notice and digests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_checks: Option<Vec<CheckLink>>,
    /// A digest's notices, one per PR.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<DigestItem>,
    /// Why, for a notice about something that keeps going wrong (`keeps failing to tick`: the
    /// last error), so a channel that shows only a few lines still says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A merge's `done` record in one short line (checks, approvals, open threads counted),
    /// for a channel that shows only a few lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
}

impl NoticePayload {
    /// The failed checks it names (none when absent).
    pub fn checks(&self) -> &[CheckLink] {
        self.failed_checks.as_deref().unwrap_or_default()
    }
}

/// A failed check and its page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckLink {
    pub name: String,
    pub url: Option<String>,
    /// The last lines of its log, cleaned.
    pub log_excerpt: String,
}

/// One notice of a digest: its subject, its PR's address and title, and a merge's `done`
/// record in its short form (empty for other notices).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DigestItem {
    pub subject: String,
    pub url: String,
    pub title: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub done: String,
}

/// The version of the agent message's shape, carried as `schema`; raised only when a field
/// changes meaning or goes away.
pub const AGENT_MESSAGE_SCHEMA: u32 = 1;

/// A message for a coding agent (the contract's inbox shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentMessage {
    /// [`AGENT_MESSAGE_SCHEMA`].
    pub schema: u32,
    pub id: String,
    pub created_at: String,
    /// Always `pr-monitor`.
    pub from: String,
    pub agent: String,
    pub kind: MessageKind,
    pub reason: Why,
    pub pr: AgentPr,
    /// At most five.
    pub checks: Vec<AgentCheck>,
    pub feedback: Vec<Feedback>,
    /// The markdown brief.
    pub body: String,
    /// How the head is vouched for: `push by fixer-bot`, `signatures`, `vouched by the owner`.
    #[serde(default)]
    pub trusted_by: String,
    /// A conflict message's base branch and files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<AgentConflict>,
}

/// The PR an agent message is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentPr {
    pub url: String,
    pub forge: crate::model::ForgeKind,
    pub repo: String,
    pub number: u64,
    pub title: String,
    pub head_sha: String,
    pub base: String,
    /// Where the head branch lives (`owner/name`; the fork for a fork PR): where to push.
    #[serde(default)]
    pub head_repo: Option<String>,
    #[serde(default)]
    pub head_branch: String,
}

/// The `kind` of a [`BranchMessage`].
pub const BRANCH_FAILURE: &str = "branch_failure";

/// A message for a coding agent about a watched branch whose checks failed on a trusted head
/// (`kind: branch_failure`): the agent's inbox shape with `branch` where a PR message has `pr`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchMessage {
    /// [`AGENT_MESSAGE_SCHEMA`].
    pub schema: u32,
    pub id: String,
    pub created_at: String,
    /// Always `pr-monitor`.
    pub from: String,
    pub agent: String,
    /// [`BRANCH_FAILURE`].
    pub kind: String,
    /// Always null: a branch's message is about no PR (the key is there for readers of
    /// every message, such as the MCP server's `inbox_read`).
    pub pr: Option<AgentPr>,
    pub branch: AgentBranch,
    /// Always `fix_sent`: a tick sends it (the key is there for readers of every message).
    #[serde(default = "fix_sent")]
    pub reason: Why,
    /// At most five.
    pub checks: Vec<AgentCheck>,
    /// Always empty: a branch has no review feedback (the key is there for readers of every
    /// message).
    #[serde(default)]
    pub feedback: Vec<Feedback>,
    /// The markdown brief.
    pub body: String,
    /// How the head is vouched for: `push by octocat`, `signatures`.
    pub trusted_by: String,
}

/// A branch message's `reason`, also for one written before it carried one.
fn fix_sent() -> Why {
    Why::FixSent
}

/// The branch a [`BranchMessage`] is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentBranch {
    pub repo: String,
    pub name: String,
    pub head_sha: String,
    pub forge: crate::model::ForgeKind,
    pub url: String,
}

/// A failed check handed to the agent, with the tail of its log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentCheck {
    pub name: String,
    pub url: Option<String>,
    pub log_tail: String,
    /// Its log reads as an infrastructure flake (sent beside a real failure, not to be fixed).
    #[serde(default)]
    pub flake: bool,
}

/// What a conflict message says of the conflict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentConflict {
    pub base: String,
    /// The conflicting files, when the forge tells.
    pub files: Vec<String>,
}

/// Where an outbox message goes. The outbox row keeps it as text (`email`, `slack`,
/// `inbox:<agent>`); everything else speaks of it through this type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Channel {
    Email,
    Slack,
    /// The named agent, whatever its delivery (inbox folder, webhook, command).
    Agent(String),
}

impl Channel {
    /// An owner notice's channel (every channel but an agent's).
    pub fn is_owner(&self) -> bool {
        !matches!(self, Channel::Agent(_))
    }
}

impl From<crate::model::plan::NotifyChannel> for Channel {
    fn from(c: crate::model::plan::NotifyChannel) -> Self {
        match c {
            crate::model::plan::NotifyChannel::Email => Channel::Email,
            crate::model::plan::NotifyChannel::Slack => Channel::Slack,
        }
    }
}

impl std::fmt::Display for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Channel::Email => f.write_str("email"),
            Channel::Slack => f.write_str("slack"),
            Channel::Agent(name) => write!(f, "inbox:{name}"),
        }
    }
}

impl std::str::FromStr for Channel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "email" => Ok(Channel::Email),
            "slack" => Ok(Channel::Slack),
            other => match other.strip_prefix("inbox:") {
                Some(name) if !name.is_empty() => Ok(Channel::Agent(name.to_owned())),
                _ => Err(format!(
                    "channel `{other}` is not supported by this version"
                )),
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_channel_is_written_and_read_as_the_outbox_stores_it() {
        for (channel, text) in [
            (Channel::Email, "email"),
            (Channel::Slack, "slack"),
            (Channel::Agent("fixer".into()), "inbox:fixer"),
        ] {
            assert_eq!(channel.to_string(), text);
            assert_eq!(text.parse::<Channel>().unwrap(), channel);
        }
        assert_eq!(
            "sms".parse::<Channel>().unwrap_err(),
            "channel `sms` is not supported by this version"
        );
        assert!("inbox:".parse::<Channel>().is_err());
    }
}

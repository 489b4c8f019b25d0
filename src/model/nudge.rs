//! What a forge's webhook event names: the watched PRs it may concern, by number, by head
//! commit or by head branch. A nudge is a hint about timing only: it makes the PRs it names due,
//! and what happens to them is decided by the next read, exactly as in a poll.

use crate::model::{ForgeKind, Sha};

/// One PR (or several, by head) that an event names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Nudge {
    pub forge: ForgeKind,
    /// The repository (GitHub `owner/name`, GitLab project path), in any letter case.
    pub repo: String,
    pub names: Named,
}

/// How an event names a PR.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Named {
    /// By its number (GitLab: its iid).
    Number(u64),
    /// By the head commit last seen on it.
    Head(Sha),
    /// By its head branch.
    Branch(String),
}

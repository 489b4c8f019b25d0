//! Review feedback the agent was sent and has not yet been judged on: what it carried, on
//! which head, and what the agent said when it marked the message done. Kept in a PR's
//! memory until the tick after `inbox done` ([`crate::core::answers`] judges it).

use serde::{Deserialize, Serialize};

use crate::model::{Instant, Sha};

/// One review-feedback message in the agent's hands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackSent {
    pub message_id: String,
    /// The head it was sent on: a fix is a new head.
    pub head_sha: Sha,
    pub sent_at: Instant,
    /// The review threads it carried, by id.
    #[serde(default)]
    pub threads: Vec<String>,
    /// How many other items (comments, review bodies) it carried.
    #[serde(default)]
    pub comments: u32,
    /// When the agent marked it done (`inbox done`, MCP `inbox_done`).
    #[serde(default)]
    pub done_at: Option<Instant>,
    /// What the agent said then (`--note`), cut to 500 characters.
    #[serde(default)]
    pub note: Option<String>,
}

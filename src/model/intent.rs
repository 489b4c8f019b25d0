//! Intents: the forge writes pr-monitor is about to make (a branch update from a head, a
//! re-run of jobs on a head, a merge of a head, arming auto-merge on a head, turning it off), each recorded
//! in SQLite in its own committed transaction *before* the call. The next tick that reads the
//! PR reconciles the open ones against what the forge shows ([`crate::core::decide`]), so a lost
//! answer, a 502 or a crash between the call and the record never turns pr-monitor's own
//! effect into someone else's, and never makes it ask twice.

use crate::model::{Instant, Sha};

/// Which write an intent announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntentKind {
    /// Update the branch whose head is the intent's head (detail: the method).
    UpdateBranch,
    /// Re-run failed jobs on the head (detail: the once-per-job-per-head guards it spends,
    /// one per line).
    Rerun,
    /// Merge the head.
    Merge,
    /// Arm the forge's auto-merge on the head.
    Arm,
    /// Turn off the auto-merge pr-monitor armed (the PR was disarmed).
    Disarm,
}

impl IntentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            IntentKind::UpdateBranch => "update_branch",
            IntentKind::Rerun => "rerun",
            IntentKind::Merge => "merge",
            IntentKind::Arm => "arm",
            IntentKind::Disarm => "disarm",
        }
    }

    pub fn parse(s: &str) -> Option<IntentKind> {
        [
            IntentKind::UpdateBranch,
            IntentKind::Rerun,
            IntentKind::Merge,
            IntentKind::Arm,
            IntentKind::Disarm,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// A recorded intent that no read has reconciled yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intent {
    pub id: i64,
    pub kind: IntentKind,
    /// The head the write was asked for (for a branch update: the head before it).
    pub head: Sha,
    pub detail: String,
    pub created_at: Instant,
}

impl Intent {
    /// The guards a re-run intent spends (`<sha>:<check name>`).
    pub fn guards(&self) -> impl Iterator<Item = &str> {
        self.detail.lines().filter(|l| !l.is_empty())
    }
}

/// Where the shell records an intent before the write it announces; a write whose intent
/// could not be recorded is not made.
pub trait IntentLog {
    /// Records `intent` for the watch `watch_id`, committed before this returns.
    fn record_intent(
        &mut self,
        watch_id: i64,
        kind: IntentKind,
        head: &Sha,
        detail: &str,
        at: Instant,
    ) -> anyhow::Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_back_what_they_write() {
        for k in [
            IntentKind::UpdateBranch,
            IntentKind::Rerun,
            IntentKind::Merge,
            IntentKind::Arm,
            IntentKind::Disarm,
        ] {
            assert_eq!(IntentKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(IntentKind::parse("launch"), None);
    }
}

//! The failure cadence: what a PR's tick that failed before it could act, or whose writes were
//! left incomplete, records: one more in the error streak, and the next tick on the active
//! cadence (later when the forge asked to wait), or none when the forge says the PR is gone.
//! The owner hears about a watch once its streak reaches [`ERROR_STREAK_NOTICE`].

use chrono::Duration;

use crate::model::policy::Policy;
use crate::model::watch::{HistoryEntry, WatchStatus};
use crate::model::{Instant, plan::Plan};

/// Consecutive failed ticks after which the owner hears about a watch that keeps erroring.
pub(super) const ERROR_STREAK_NOTICE: u32 = 3;

/// When a PR whose tick failed is read again, by what failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Never: the forge says the PR is gone for this token (deleted, or access lost).
    Never,
    /// On the active cadence, or after the forge's wait when it is longer (seconds).
    After(Option<u64>),
}

/// The record of a tick that failed before it could act.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FailedTick {
    pub status: WatchStatus,
    pub next_tick_at: Option<Instant>,
    /// The PR's `last_error`.
    pub message: String,
    pub history: Vec<HistoryEntry>,
}

/// A tick of the PR at `status` failed, the failure saying `said`, before it could act.
pub(crate) fn after_failure(
    status: &WatchStatus,
    said: &str,
    retry: Retry,
    policy: &Policy,
    now: Instant,
) -> FailedTick {
    let mut status = status.clone();
    status.memory.error_streak += 1;
    let (message, next_tick_at) = match retry {
        Retry::Never => (
            format!(
                "{said}; the PR was deleted or this token lost access to it, so it is no longer polled (watch add re-arms it)"
            ),
            None,
        ),
        Retry::After(wait) => {
            let wait = wait.map_or(policy.poll_sec, |s| s.max(policy.poll_sec));
            (said.to_owned(), Some(now + seconds(wait)))
        }
    };
    FailedTick {
        history: vec![HistoryEntry {
            at: now,
            what: format!("tick failed: {message}"),
            why: None,
        }],
        status,
        next_tick_at,
        message,
    }
}

/// A tick that acted: a write left incomplete (`error`) counts in the error streak and
/// brings the next tick to the active cadence, noted in `history`; a complete one ends the
/// streak.
pub(crate) fn after_acting(
    plan: &mut Plan,
    error: Option<&str>,
    policy: &Policy,
    now: Instant,
    history: &mut Vec<HistoryEntry>,
) {
    let Some(e) = error else {
        plan.status.memory.error_streak = 0;
        return;
    };
    plan.status.memory.error_streak += 1;
    plan.next_tick_at = Some(now + seconds(policy.poll_sec));
    history.push(HistoryEntry {
        at: now,
        what: format!("tick incomplete: {e}"),
        why: None,
    });
}

/// Whether the owner hears now about a watch that keeps erroring (once per streak).
pub(crate) fn keeps_erroring(status: &WatchStatus) -> bool {
    status.memory.error_streak == ERROR_STREAK_NOTICE
}

fn seconds(s: u64) -> Duration {
    Duration::seconds(i64::try_from(s).unwrap_or(i64::MAX / 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::{policy, t0, watch};

    /// (why it failed, the streak before) → when the PR is read again (seconds after now,
    /// with a 30 s active cadence; `None`: never), and whether the owner hears of it now.
    #[test]
    fn a_failed_tick_sets_the_next_one_and_counts_the_streak() {
        let table = [
            (Retry::After(None), 0, Some(30), false),
            (Retry::After(Some(120)), 0, Some(120), false),
            (Retry::After(Some(5)), 0, Some(30), false),
            (Retry::After(None), 2, Some(30), true),
            (Retry::After(None), 3, Some(30), false),
            (Retry::Never, 0, None, false),
        ];
        let mut policy = policy();
        policy.poll_sec = 30;
        for (retry, streak, next, notice) in table {
            let mut status = watch().status;
            status.memory.error_streak = streak;
            let failed = after_failure(&status, "forge unavailable: 502", retry, &policy, t0());
            let row = format!("{retry:?} after {streak}");
            assert_eq!(failed.status.memory.error_streak, streak + 1, "{row}");
            assert_eq!(
                failed.next_tick_at,
                next.map(|s| t0() + Duration::seconds(s)),
                "{row}"
            );
            assert_eq!(keeps_erroring(&failed.status), notice, "{row}");
            assert!(
                failed.message.starts_with("forge unavailable: 502"),
                "{row}"
            );
            assert_eq!(
                failed.history[0].what,
                format!("tick failed: {}", failed.message)
            );
            let gone = failed.message.contains("no longer polled");
            assert_eq!(gone, retry == Retry::Never, "{row}");
        }
    }

    /// An incomplete tick counts and comes back on the active cadence; a complete one ends
    /// the streak and keeps the plan's own next tick.
    #[test]
    fn an_incomplete_tick_counts_and_a_complete_one_ends_the_streak() {
        let mut policy = policy();
        policy.poll_sec = 30;
        for (error, streak, next, noted) in [
            (
                Some("forge unavailable: 502"),
                3,
                t0() + Duration::seconds(30),
                true,
            ),
            (None, 0, t0() + Duration::seconds(600), false),
        ] {
            let mut plan = Plan {
                status: watch().status,
                actions: Vec::new(),
                history: Vec::new(),
                seen: Vec::new(),
                next_tick_at: Some(t0() + Duration::seconds(600)),
                resolved_intents: Vec::new(),
                needs_evidence: false,
            };
            plan.status.memory.error_streak = 2;
            let mut history = Vec::new();
            after_acting(&mut plan, error, &policy, t0(), &mut history);
            assert_eq!(plan.status.memory.error_streak, streak, "{error:?}");
            assert_eq!(plan.next_tick_at, Some(next), "{error:?}");
            assert_eq!(!history.is_empty(), noted, "{error:?}");
        }
    }
}

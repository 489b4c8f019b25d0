//! A PR's tick that failed: the record it leaves (an error streak, a retry on the active
//! cadence, or none when the forge says the PR is gone), and the owner's notice about a watch
//! that keeps erroring.

use chrono::Duration;

use super::execute;
use crate::app::App;
use crate::forge::ForgeError;
use crate::model::Instant;
use crate::model::watch::{HistoryEntry, Watch};
use crate::store::TickRecord;

/// Consecutive failed ticks after which the owner hears about a watch that keeps erroring.
pub(super) const ERROR_STREAK_NOTICE: u32 = 3;

/// The record of a tick that could not read its PR.
pub(super) fn failed_tick(
    watch: &Watch,
    e: &ForgeError,
    now: Instant,
    poll_sec: u64,
) -> (TickRecord, String) {
    let mut status = watch.status.clone();
    status.memory.error_streak += 1;
    let (message, next) = if e.is_gone() {
        (
            format!(
                "{e}; the PR was deleted or this token lost access to it, so it is no longer polled (watch add re-arms it)"
            ),
            None,
        )
    } else {
        let wait = match e {
            ForgeError::RateLimited {
                retry_after_secs: Some(s),
            } => (*s).max(poll_sec),
            _ => poll_sec,
        };
        (
            e.to_string(),
            Some(now + Duration::seconds(i64::try_from(wait).unwrap_or(i64::MAX / 2))),
        )
    };
    // The per-PR error, for whoever reads the log (the run's results stay on stdout).
    // Logged under the tick's own target, whichever of its modules says it.
    tracing::warn!(target: "pr_monitor::tick", pr = %watch.pr.url(), error = %message, "tick failed");
    let record = TickRecord {
        next_tick_at: next,
        last_error: Some(message.clone()),
        history: vec![HistoryEntry {
            at: now,
            what: format!("tick failed: {message}"),
            why: None,
        }],
        ..TickRecord::bare(status, now)
    };
    (record, message)
}

/// The owner's notice about a watch that keeps erroring (sent once per streak).
pub(super) fn error_notice(
    app: &App,
    watch: &Watch,
    error: &str,
) -> serde_json::Result<Vec<crate::store::OutboxMessage>> {
    let notice = crate::model::plan::Notice::KeepsErroring {
        error: error.to_owned(),
    };
    let payload = crate::core::report::bare_notice_payload(&notice, &watch.pr);
    execute::owner_messages(
        &app.config,
        &app.policy_for(watch),
        &watch.pr,
        &notice,
        &payload,
        app.now,
    )
}

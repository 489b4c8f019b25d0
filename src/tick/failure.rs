//! A PR's tick that failed: why ([`TickFailure`]: the forge, the PR's damaged stored state,
//! the setup, or the database), the record it leaves (by the core's failure cadence,
//! [`crate::core::decide::after_failure`]), and the owner's notice about a watch that keeps
//! erroring.

use super::execute;
use crate::app::{App, ClientFailure};
use crate::core::decide::{Retry, after_failure};
use crate::forge::ForgeError;
use crate::model::Instant;
use crate::model::policy::Policy;
use crate::model::watch::Watch;
use crate::store::TickRecord;

/// Why a PR's tick could not complete. Each kind has its own prefix in `last_error`, so a
/// damaged row or a missing token is never shown as something the forge said.
#[derive(Debug, thiserror::Error)]
pub(super) enum TickFailure {
    /// The forge failed or refused (its own words and prefix: `not found:`, `rate limited` …).
    #[error(transparent)]
    Forge(#[from] ForgeError),
    /// The PR's stored state cannot be read; it is left as it is.
    #[error("damaged: {0}")]
    Damaged(String),
    /// The setup: a forge client that cannot be built (its token unreadable), an agent the
    /// config does not have.
    #[error("setup: {0}")]
    Setup(String),
    /// The database failed.
    #[error("database: {0:#}")]
    Store(anyhow::Error),
}

impl From<ClientFailure> for TickFailure {
    fn from(e: ClientFailure) -> Self {
        match e {
            ClientFailure::Setup(e) => TickFailure::Setup(e),
            ClientFailure::Forge(e) => TickFailure::Forge(e),
        }
    }
}

impl TickFailure {
    /// The PR's read never reached the forge, or the forge refused the token or could not be
    /// reached: nothing of it is known.
    pub(super) fn cuts_off(&self) -> bool {
        match self {
            TickFailure::Setup(_) => true,
            TickFailure::Forge(e) => e.cuts_off(),
            TickFailure::Damaged(_) | TickFailure::Store(_) => false,
        }
    }
}

impl TickFailure {
    /// When the PR is read again after this failure (the rule is the core's:
    /// [`crate::core::decide::after_failure`]).
    fn retry(&self) -> Retry {
        match self {
            TickFailure::Forge(e) if e.is_gone() => Retry::Never,
            TickFailure::Forge(ForgeError::RateLimited { retry_after_secs }) => {
                Retry::After(*retry_after_secs)
            }
            _ => Retry::After(None),
        }
    }
}

/// The per-PR error, for whoever reads the log (the run's results stay on stdout). Logged under
/// the tick's own target, whichever of its modules says it.
pub(super) fn log_failure(watch: &Watch, message: &str) {
    tracing::warn!(target: "pr_monitor::tick", pr = %watch.pr.url(), error = %message, "tick failed");
}

/// The record of a tick that failed before it could act, and its `last_error`.
pub(super) fn failed_tick(
    watch: &Watch,
    e: &TickFailure,
    now: Instant,
    policy: &Policy,
) -> (TickRecord, String) {
    let failed = after_failure(&watch.status, &e.to_string(), e.retry(), policy, now);
    let record = TickRecord {
        next_tick_at: failed.next_tick_at,
        last_error: Some(failed.message.clone()),
        history: failed.history,
        ..TickRecord::bare(failed.status, now)
    };
    (record, failed.message)
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
    let payload = crate::core::report::bare_notice_payload(&notice, &watch.pr, &watch.pr.url());
    execute::owner_messages(
        &app.config,
        &app.policy_for(watch),
        &watch.pr,
        &notice,
        &payload,
        app.now,
    )
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;
    use crate::core::decide::tests::{policy, t0, watch};

    /// Each kind of failure: the start of `last_error`, when the PR is read again (seconds
    /// after now, with a 30 s active cadence; `None`: never), and whether it cut the read off.
    #[test]
    fn each_failure_says_its_kind_and_sets_the_next_tick() {
        let table: Vec<(TickFailure, &str, Option<i64>, bool)> = vec![
            (
                ForgeError::Transient("502".into()).into(),
                "forge unavailable: 502",
                Some(30),
                false,
            ),
            (
                ForgeError::RateLimited {
                    retry_after_secs: Some(120),
                }
                .into(),
                "rate limited for 120s",
                Some(120),
                false,
            ),
            (
                ForgeError::RateLimited {
                    retry_after_secs: Some(5),
                }
                .into(),
                "rate limited for 5s",
                Some(30),
                false,
            ),
            (
                ForgeError::NotFound("gone".into()).into(),
                "not found: gone; the PR was deleted",
                None,
                false,
            ),
            (
                ForgeError::Unauthorized("401".into()).into(),
                "not authorized: 401",
                Some(30),
                true,
            ),
            (
                ForgeError::HeadMoved("abc".into()).into(),
                "head moved: abc",
                Some(30),
                false,
            ),
            (
                ForgeError::MergeConflict("abc".into()).into(),
                "conflict: abc",
                Some(30),
                false,
            ),
            (
                TickFailure::Damaged("memory: EOF".into()),
                "damaged: memory: EOF",
                Some(30),
                false,
            ),
            (
                TickFailure::Setup("`GITHUB_TOKEN` is empty".into()),
                "setup: `GITHUB_TOKEN` is empty",
                Some(30),
                true,
            ),
            (
                TickFailure::Store(anyhow::anyhow!("disk full").context("cannot read")),
                "database: cannot read: disk full",
                Some(30),
                false,
            ),
            (
                ClientFailure::Setup("no key".into()).into(),
                "setup: no key",
                Some(30),
                true,
            ),
            (
                ClientFailure::Forge(ForgeError::Unreachable("refused".into())).into(),
                "forge unreachable: refused",
                Some(30),
                true,
            ),
        ];
        let w = watch();
        let mut policy = policy();
        policy.poll_sec = 30;
        for (failure, says, next, cut_off) in table {
            let (record, message) = failed_tick(&w, &failure, t0(), &policy);
            assert!(message.starts_with(says), "{failure:?}: {message}");
            assert_eq!(record.last_error.as_deref(), Some(message.as_str()));
            assert_eq!(
                record.next_tick_at,
                next.map(|s| t0() + Duration::seconds(s)),
                "{failure:?}"
            );
            assert_eq!(record.status.memory.error_streak, 1, "{failure:?}");
            assert_eq!(failure.cuts_off(), cut_off, "{failure:?}");
        }
    }
}

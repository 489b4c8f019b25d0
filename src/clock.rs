//! pr-monitor's two clocks, named in one place.
//!
//! - The **logical clock** (`App::now`, an [`Instant`]): `--now` when given, else the wall
//!   clock read when the command starts (and again before each daemon sweep and `check --watch`
//!   poll, unless `--now` fixed it). Everything the program decides with or records comes from
//!   it: cadence, `next_tick_at`, the agent-commit and activity windows, fix timeouts,
//!   history, seen keys, messages' `created_at`. The decision core never reads any other.
//! - The **wall clock** ([`wall_now`], [`wall_secs`]): real time, whatever `--now` says. It
//!   measures what really takes time: how long a run holds a PR's lease, when the outbox tries a
//!   message again, how long the owner's login stays cached, back-off and rate-limit waits.
//!   So in a replay a message's `created_at` is logical and its next attempt real.

use crate::model::Instant;

/// The logical clock's reading: `fixed` (`--now`) when given, else the wall clock.
pub(crate) fn logical(fixed: Option<Instant>) -> Instant {
    fixed.unwrap_or_else(wall_now)
}

/// The wall clock, now.
pub(crate) fn wall_now() -> Instant {
    chrono::Utc::now()
}

/// The wall clock, in seconds since the Unix epoch (as leases and the outbox store it).
pub(crate) fn wall_secs() -> i64 {
    wall_now().timestamp()
}

//! How long a quiet decision holds. A decision that changes nothing (no action, history, seen
//! item or reconciled intent, the status as it was) is made again on the next tick from the
//! same stored state, snapshot and context; only the clock differs. [`settled_until`] says
//! until when that second decision is bound to be the same: the earliest instant one of the
//! time-driven rules could turn. Each rule that reads `now` has its turn here, next to the
//! rule it mirrors:
//!
//! - the checks' verdict: the no-checks grace ends, a pending check passes its timeout
//!   ([`checks::turns`]);
//! - `stuck_after_sec` passes for a head not yet reported stuck;
//! - a fix or review feedback with the agent passes `fix_timeout_sec`;
//! - an agent message leaves the hour `agent_messages_per_hour` counts;
//! - an unlisted head's grace ends;
//! - the cadence: a commit, a head or agent activity enters or leaves the two-minute window
//!   that keeps the PR on `poll_sec` ([`next_tick`](super::next_tick)).
//!
//! A decision that records a change is followed, at the same instant, by the one the next
//! tick would make on what it recorded ([`settled_after`]): when that one is quiet, its bound
//! holds from this tick on, so the next tick need not decide.
//!
//! Whatever those say, a settled decision is made again after [`SETTLED_AT_MOST_SECS`]. A
//! decision is never settled when it rests on more than the snapshot and the stored state: the
//! forge's word on the head (evidence), recorded intents, the owner's `fix`, a failed check's
//! log or a merge group's checks that could not be read, or a merge group read after the
//! queue let the PR go.

use chrono::Duration;

use super::{ACTIVITY_WINDOW_SECS, Action, Context, Plan, waiting_since};
use crate::core::checks;
use crate::model::trust::{TrustVerdict, UNLISTED_GRACE_SECS};
use crate::model::watch::Watch;
use crate::model::{Instant, PrState, Snapshot};

/// The longest a quiet decision is taken as settled: past it, the PR is decided again on its
/// kept read even when no rule turns.
pub(crate) const SETTLED_AT_MOST_SECS: i64 = 3600;

/// The instant until which deciding `watch` again on `snap` with `ctx` (another `now`
/// aside) makes the same quiet `plan` as this one did: for every `t` with `ctx.now <= t <
/// until`, the plan at `t` is `plan` with its times moved. `None` when `plan` is not quiet or
/// rests on more than the snapshot and the stored state (see the module doc).
pub(crate) fn settled_until(
    watch: &Watch,
    snap: &Snapshot,
    ctx: &Context<'_>,
    plan: &Plan,
) -> Option<Instant> {
    let before = &watch.status;
    let quiet = plan.actions.is_empty()
        && plan.history.is_empty()
        && plan.seen.is_empty()
        && plan.resolved_intents.is_empty()
        && !plan.needs_evidence
        && plan.status == *before;
    let leans_on_more = ctx.evidence.is_some()
        || ctx.fix_asked
        || !ctx.intents.is_empty()
        || snap.failed_logs.iter().any(|f| f.unreadable.is_some())
        || !snap.queue_failures.is_empty()
        || !snap.queue_unfinished.is_empty()
        || snap.queue_unread.is_some();
    if !quiet || leans_on_more || before.head_sha.as_ref() != Some(&snap.head.sha) {
        return None;
    }
    let now = ctx.now;
    let head_seen_at = before.head_seen_at?;
    let mut until = after(now, SETTLED_AT_MOST_SECS)?;
    if snap.state == PrState::Open {
        for turn in turns(before, snap, ctx, head_seen_at) {
            if turn > now {
                until = until.min(turn);
            }
        }
    }
    Some(until)
}

/// The decision the next tick makes on the same snapshot after `plan` is recorded, made now
/// (at `next.now`), with its bound when it is quiet (see [`settled_until`]). `recorded` is the
/// watch as the store reads it back once `plan` (as applied: its actions' answers in its
/// status) is recorded; `next` the context the next tick decides in: what `plan` handled and
/// reconciled taken in, no evidence read. `None` when `plan` asked the forge for anything (the
/// next read reconciles its answer and intent), when it left an error, and when the second
/// decision is not quiet.
pub(crate) fn settled_after(
    plan: &Plan,
    recorded: &Watch,
    snap: &Snapshot,
    next: &Context<'_>,
) -> Option<(Plan, Instant)> {
    let only_messages = plan
        .actions
        .iter()
        .all(|a| matches!(a, Action::Notify(_) | Action::SendToAgent(_)));
    if !only_messages || recorded.last_error.is_some() || next.evidence.is_some() {
        return None;
    }
    let mut again = super::decide(recorded, snap, next);
    super::after_acting(&mut again, None, next.policy, next.now, &mut Vec::new());
    let until = settled_until(recorded, snap, next, &again)?;
    Some((again, until))
}

/// Every instant at which a time-driven rule of an open PR's decision could turn (some may
/// have passed).
fn turns(
    before: &crate::model::watch::WatchStatus,
    snap: &Snapshot,
    ctx: &Context<'_>,
    head_seen_at: Instant,
) -> Vec<Instant> {
    let policy = ctx.policy;
    let m = &before.memory;
    let judged = checks::judged(
        &snap.checks,
        policy.checks == crate::model::policy::ChecksScope::Required,
    );
    let since = waiting_since(before, snap, ctx.now);
    let mut out = checks::turns(
        &judged,
        since,
        policy.no_checks_grace_sec,
        policy.pending_timeout_sec,
    );
    // `stuck`: reported once the head has not moved for more than `stuck_after_sec`.
    if let Some(stuck) = policy.stuck_after_sec
        && m.stuck_reported_for.as_ref() != Some(&snap.head.sha)
    {
        out.extend(after_secs(head_seen_at, stuck).and_then(|t| after(t, 1)));
    }
    // A fix, or review feedback, with the agent is over once `fix_timeout_sec` has passed.
    let fix_timeout = policy.fix_timeout_sec;
    out.extend(
        m.fix
            .iter()
            .map(|f| f.sent_at)
            .chain(m.feedback_sent.iter().map(|f| f.sent_at))
            .filter_map(|sent| after_secs(sent, fix_timeout)),
    );
    // The hourly cap counts the messages of the hour before now.
    out.extend(m.agent_messages.iter().filter_map(|t| after(*t, 3600)));
    // An unlisted head is untrusted once its grace has passed.
    out.extend(
        m.head_trust
            .iter()
            .filter(|t| t.verdict == TrustVerdict::Unlisted)
            .filter_map(|t| after(t.judged_at, UNLISTED_GRACE_SECS)),
    );
    // The cadence: within the window (to the whole second) around a commit, a head first seen
    // or agent activity, the PR is polled on `poll_sec`.
    let window = ACTIVITY_WINDOW_SECS + 1;
    for t in [
        snap.head.committed_at,
        Some(head_seen_at),
        m.agent_activity_at,
    ]
    .into_iter()
    .flatten()
    {
        out.extend(after(t, -window));
        out.extend(after(t, window));
    }
    out
}

/// `t` moved by `secs` seconds, when that can be told.
fn after(t: Instant, secs: i64) -> Option<Instant> {
    t.checked_add_signed(Duration::try_seconds(secs)?)
}

/// `t` plus a configured number of seconds.
fn after_secs(t: Instant, secs: u64) -> Option<Instant> {
    after(t, i64::try_from(secs).ok()?)
}

#[cfg(test)]
#[path = "settle_tests.rs"]
mod tests;

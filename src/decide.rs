//! The pure decision core: stored state + a fresh snapshot + policy + clock → a [`Plan`].
//!
//! No I/O and no clock reads happen here; `now` is an argument and the plan says when to look
//! again. The shell (`tick`) applies the plan's actions and records its state. Every rule of
//! seed 000 that can be decided from data lives in this module, tested table by table.

use chrono::Duration;

use crate::checks::{self, Verdict};
use crate::config::Policy;
use crate::model::{Instant, PrState, Snapshot};
use crate::watch::{HistoryEntry, Pills, Watch, WatchStatus};

/// How long a push, a new head or an agent run counts as recent activity (poll on `poll_sec`).
pub const ACTIVITY_WINDOW_SECS: i64 = 120;

/// What one tick decided for one PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The PR's state after the tick.
    pub status: WatchStatus,
    /// The audit trail of this tick: one row per decision.
    pub history: Vec<HistoryEntry>,
    /// When to look again; `None` once the PR is merged or closed.
    pub next_tick_at: Option<Instant>,
}

/// The facts about a snapshot that the rules branch on, classified once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub verdict: Verdict,
    pub conflict: bool,
    /// GitHub has not finished computing mergeability.
    pub mergeability_unknown: bool,
    pub unresolved_threads: u32,
}

/// Classifies a snapshot: the one place the rules read the forge's facts.
pub fn condition(
    snap: &Snapshot,
    head_seen_at: Instant,
    now: Instant,
    policy: &Policy,
) -> Condition {
    Condition {
        verdict: checks::verdict(&snap.checks, head_seen_at, now, policy.no_checks_grace_sec),
        conflict: snap.has_conflict(),
        mergeability_unknown: snap.mergeable == crate::model::Mergeable::Unknown,
        unresolved_threads: u32::try_from(snap.unresolved_threads().count()).unwrap_or(u32::MAX),
    }
}

/// Decides one tick for `watch` given its fresh `snap`.
pub fn decide(watch: &Watch, snap: &Snapshot, policy: &Policy, now: Instant) -> Plan {
    let before = &watch.status;
    let mut status = before.clone();
    let mut history = Vec::new();
    let mut note = |what: String, why: Option<&str>| {
        history.push(HistoryEntry {
            at: now,
            what,
            why: why.map(str::to_owned),
        });
    };

    status.title = Some(snap.title.clone());
    status.head_ref = Some(snap.head_ref.clone());
    status.base_ref = Some(snap.base_ref.clone());
    let new_head = before.head_sha.as_ref() != Some(&snap.head.sha);
    if new_head {
        status.head_sha = Some(snap.head.sha.clone());
        status.head_seen_at = Some(now);
        let by = snap
            .head
            .author_login
            .as_deref()
            .unwrap_or("an unknown author");
        note(format!("head {} by {by}", snap.head.sha.short()), None);
    }

    if snap.state != PrState::Open {
        if before.state != snap.state {
            note(format!("{} ({})", snap.state.as_str(), snap.url), None);
        }
        status.state = snap.state;
        status.pills = Pills::default();
        status.why = None;
        return Plan {
            status,
            history,
            next_tick_at: None,
        };
    }
    if before.state != PrState::Open {
        note("reopened".into(), None);
    }
    status.state = PrState::Open;

    let head_seen_at = status.head_seen_at.unwrap_or(now);
    let cond = condition(snap, head_seen_at, now, policy);

    let pills = Pills {
        ci: matches!(cond.verdict, Verdict::Failed { .. }) && !cond.conflict,
        ci_fixing: false,
        cnf: cond.conflict,
        cmt: cond.unresolved_threads,
    };
    if pills.ci != before.pills.ci {
        match &cond.verdict {
            Verdict::Failed { failed } if pills.ci => {
                note(format!("ci lit: {} failed", failed.join(", ")), None)
            }
            _ => note("ci cleared".into(), None),
        }
    }
    if pills.cnf != before.pills.cnf {
        let what = if pills.cnf {
            format!("cnf lit: conflicts with {}", snap.base_ref)
        } else {
            "cnf cleared".into()
        };
        note(what, None);
    }
    if pills.cmt != before.pills.cmt {
        note(
            format!("cmt: {} unresolved review thread(s)", pills.cmt),
            None,
        );
    }
    status.pills = pills;
    status.why = None;

    let next_tick_at = Some(next_tick(&status, snap, &cond, policy, now));
    Plan {
        status,
        history,
        next_tick_at,
    }
}

/// Seed 000's cadence: `poll_sec` while checks run, a fix is in flight, a merge is armed,
/// mergeability is still being computed, or there was activity in the last two minutes;
/// `idle_poll_sec` otherwise.
pub fn next_tick(
    status: &WatchStatus,
    snap: &Snapshot,
    cond: &Condition,
    policy: &Policy,
    now: Instant,
) -> Instant {
    let recent = |t: Option<Instant>| {
        t.is_some_and(|t| (now - t).num_seconds().abs() <= ACTIVITY_WINDOW_SECS)
    };
    let active = cond.verdict.in_progress()
        || status.pills.ci_fixing
        || status.merge_armed
        || cond.mergeability_unknown
        || recent(snap.head.committed_at)
        || recent(status.head_seen_at);
    let secs = if active {
        policy.poll_sec
    } else {
        policy.idle_poll_sec
    };
    now + Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX / 2))
}

#[cfg(test)]
mod tests;

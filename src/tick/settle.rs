//! Settled decisions, the shell's side. A quiet decision made on a kept read is kept beside it
//! with the core's bound ([`crate::core::decide::settled_until`]), the digest of the watch's stored row and
//! the digest of its context; while the summary still matches the kept read, the row is the
//! same, the context is the same and the bound has not passed, the next tick records the same
//! quiet plan without loading the kept read or deciding ([`quiet`]). A decision that records
//! a change is followed by the one the next tick would make on what it recorded
//! ([`crate::core::decide::settled_after`]): when that one is quiet, it is kept instead, over
//! the row as recorded ([`Again`]). Any other decision on the read forgets what was kept
//! ([`Settlement`]).

use crate::core::decide::{self, Plan};
use crate::core::hash::Digest;
use crate::model::watch::Watch;
use crate::model::{Instant, Snapshot};
use crate::store::{Settled, TickRecord};

/// What a decision is made over besides the stored row, the snapshot and the items already
/// handled (which only a recorded decision changes): the configuration (`config`, its digest:
/// the policy, the agents), who the owner is and how the forge's commits name them, the
/// agent's logins and emails, and whether it is the PR's turn to update its branch. Recorded
/// intents and the owner's `fix` are never settled over.
#[derive(Debug, Clone, Copy)]
pub(super) struct Context<'a> {
    pub(super) config: u64,
    pub(super) owner: &'a str,
    pub(super) commits_as: &'a crate::model::viewer::Committer,
    pub(super) agent_logins: &'a [crate::model::Login],
    pub(super) agent_emails: &'a [String],
    pub(super) update_turn: bool,
}

impl Context<'_> {
    /// Its digest.
    pub(super) fn digest(&self) -> u64 {
        let mut d = Digest::default();
        d.part(&self.config.to_le_bytes())
            .part(self.owner.as_bytes())
            .part(format!("{:?}", self.commits_as).as_bytes())
            .part(&[u8::from(self.update_turn)]);
        for login in self.agent_logins {
            d.part(b"login").part(login.as_str().as_bytes());
        }
        for email in self.agent_emails {
            d.part(b"email").part(email.as_bytes());
        }
        d.finish()
    }
}

/// The digest of the configuration a run decides under.
pub(super) fn config(config: &crate::config::Config) -> u64 {
    Digest::default()
        .part(format!("{config:?}").as_bytes())
        .finish()
}

/// The quiet plan and record a settled read stands for at `now`, when its decision holds in
/// the context of digest `context`, with no recorded intent (`intents`: there are some) and
/// not for the owner's `fix`: the watch as it is, next due `every` seconds on.
pub(super) fn quiet(
    watch: &Watch,
    settled: &Settled,
    context: u64,
    (intents, fix_asked): (bool, bool),
    now: Instant,
) -> Option<(Plan, TickRecord)> {
    let next_tick_at = next_due(
        settled,
        watch.row_digest.map(|r| r.row),
        context,
        (intents, fix_asked),
        now,
    )?;
    let plan = Plan {
        status: watch.status.clone(),
        actions: Vec::new(),
        history: Vec::new(),
        seen: Vec::new(),
        next_tick_at,
        resolved_intents: Vec::new(),
        needs_evidence: false,
    };
    let record = TickRecord {
        next_tick_at,
        last_error: watch.last_error.clone(),
        ..TickRecord::bare(watch.status.clone(), now)
    };
    Some((plan, record))
}

/// When a PR whose settled read stands for `settled` is next due after its quiet tick at `now`
/// (`None`: never again), when the decision holds over its stored row, of digest `row`, in
/// the context of digest `context`, with no recorded intent (`intents`: there are some) and
/// not for the owner's `fix`; `None` when it does not hold.
#[expect(
    clippy::option_option,
    reason = "whether it holds, then when the PR is next due (maybe never)"
)]
pub(super) fn next_due(
    settled: &Settled,
    row: Option<u64>,
    context: u64,
    (intents, fix_asked): (bool, bool),
    now: Instant,
) -> Option<Option<Instant>> {
    let holds =
        settled.context == context && !intents && !fix_asked && settled.holds_over(now, row);
    if !holds {
        return None;
    }
    Some(match settled.every {
        Some(secs) => Some(now.checked_add_signed(chrono::Duration::try_seconds(secs)?)?),
        None => None,
    })
}

/// What to keep beside a kept read after a decision on it: the read (by its fingerprint, as
/// kept) and its new settled decision, or `None` to forget the one it had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Settlement {
    pub(super) summary: String,
    pub(super) settled: Option<Settled>,
}

/// A decision just made on a read, as [`Settlement::after`] weighs it.
#[derive(Debug)]
pub(super) struct Decided<'a> {
    pub(super) plan: &'a Plan,
    /// The core's bound ([`crate::core::decide::settled_until`]): `None` when the decision is not quiet.
    pub(super) until: Option<Instant>,
    /// The decision was made on `read` (not on a read made again before acting).
    pub(super) on_read: bool,
    /// The quiet decision made after it on what it recorded, when it is not quiet itself.
    pub(super) again: Option<Again>,
}

/// A quiet decision made, at the same instant, on what a decision that records a change
/// recorded (see [`crate::core::decide::settled_after`]): its bound, its next tick, and the
/// digest of the watch's row as recorded.
#[derive(Debug, Clone, Copy)]
pub(super) struct Again {
    pub(super) until: Instant,
    pub(super) next_tick_at: Option<Instant>,
    pub(super) row: u64,
}

impl Settlement {
    /// What to keep after `decided` was made on a read of `watch` and recorded as `record`
    /// (in the context of digest `context` at `now`): `kept` is the kept read it was made on
    /// (its fingerprint as kept, and what was settled on it before). `None` when nothing
    /// changes.
    pub(super) fn after(
        watch: &Watch,
        kept: Option<(String, Option<Settled>)>,
        decided: &Decided<'_>,
        record: &TickRecord,
        context: u64,
        now: Instant,
    ) -> Option<Settlement> {
        let (summary, before) = kept?;
        let quiet = decided
            .until
            .filter(|_| record.only_times(watch))
            .zip(watch.row_digest)
            .map(|(until, row)| Again {
                until,
                next_tick_at: decided.plan.next_tick_at,
                row: row.row,
            });
        let settled = quiet
            .or(decided.again)
            .filter(|_| decided.on_read)
            .map(|a| Settled {
                at: now,
                until: a.until,
                row: a.row,
                context,
                every: a.next_tick_at.map(|t| (t - now).num_seconds()),
            });
        (settled != before).then_some(Settlement { summary, settled })
    }
}

/// The quiet decision the next tick would make on `snap` once `record` is recorded, made now:
/// `plan` was decided on `watch` in `ctx` and applied as `record` (see
/// [`decide::settled_after`]). `None` when it would not be quiet or cannot be told.
pub(super) fn again(
    watch: &Watch,
    snap: &Snapshot,
    ctx: &decide::Context<'_>,
    plan: &Plan,
    record: &TickRecord,
) -> Option<Again> {
    let recorded = crate::store::as_recorded(watch, record)?;
    let seen = crate::store::seen_after(ctx.seen, &record.seen);
    let intents: Vec<crate::model::intent::Intent> = ctx
        .intents
        .iter()
        .filter(|i| !record.resolved_intents.contains(&i.id))
        .cloned()
        .collect();
    let next = decide::Context {
        evidence: None,
        seen: &seen,
        intents: &intents,
        ..ctx.clone()
    };
    let (again, until) = decide::settled_after(plan, &recorded, snap, &next)?;
    Some(Again {
        until,
        next_tick_at: again.next_tick_at,
        row: recorded.row_digest?.row,
    })
}

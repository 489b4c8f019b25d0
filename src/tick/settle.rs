//! Settled decisions, the shell's side. A quiet decision made on a kept read is kept beside it
//! with the core's bound ([`crate::core::decide::settled_until`]), the digest of the watch's stored row and
//! the digest of its context; while the summary still matches the kept read, the row is the
//! same, the context is the same and the bound has not passed, the next tick records the same
//! quiet plan without loading the kept read or deciding ([`quiet`]). Any other decision on
//! the read forgets what was kept ([`Settlement`]).

use crate::core::decide::Plan;
use crate::core::hash::Digest;
use crate::model::Instant;
use crate::model::watch::Watch;
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
        watch.row_digest,
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
    let holds = settled.context == context && !intents && !fix_asked && settled.holds(now, row);
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
        let every = |t: Instant| (t - now).num_seconds();
        let settled = decided
            .until
            .filter(|_| decided.on_read && record.only_times(watch))
            .zip(watch.row_digest)
            .map(|(until, row)| Settled {
                at: now,
                until,
                row,
                context,
                every: decided.plan.next_tick_at.map(every),
            });
        (settled != before).then_some(Settlement { summary, settled })
    }
}

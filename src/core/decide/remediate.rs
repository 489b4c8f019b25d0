//! Remediate: what each failure gets (a fix, a re-run, the owner), the guards, clearing, conflicts and review
//! feedback. Appends to the draft plan; never does I/O.
//!
//! This module holds the order of a tick's remediation, what is cleared on a new head, the
//! conflict, and what every stage shares: the trust gate before anything reaches the agent,
//! the hourly cap and the message itself. A failed check's row of the failure table is
//! [`failed_checks`]'s, review feedback [`review_feedback`]'s.

mod failed_checks;
mod review_feedback;

use super::to_agent::fix_out;
pub(super) use failed_checks::merge_group_to_agent;

/// Ticks in a row a failure waits for a log the forge did not answer for; then it is acted
/// on with what could be read.
pub(super) const MAX_LOG_WAITS: u32 = 3;

use crate::core::answers;
use crate::core::decide::{Action, Condition, Context, Draft, Feedback, MessageKind};
use crate::core::report;
use crate::model::plan::{Guard, Notice};
use crate::model::policy::Handler;
use crate::model::trust::TrustVerdict;
use crate::model::watch::Ci;
use crate::model::watch::{Watch, Why};
use crate::model::{FailedCheck, Snapshot};

/// Whether what is on the head may reach the agent.
enum Gate {
    /// Yes: the head is vouched for, so.
    Go(String),
    /// Not yet: the forge's word on the head is awaited (this tick's second decision, or a
    /// later tick while the forge lists no push of it).
    Wait,
    /// No: the head is not trusted, for this reason.
    Refused(String),
}

/// Asks whether the head is trusted before anything goes to the agent; a head not judged
/// yet asks the shell to read the forge's evidence and decide again.
fn gate(d: &mut Draft, cond: &Condition) -> Gate {
    let Some(t) = &cond.trust else {
        d.needs_evidence = true;
        d.waiting_for_trust = true;
        return Gate::Wait;
    };
    match &t.verdict {
        TrustVerdict::Trusted(by) => Gate::Go(by.words()),
        TrustVerdict::Untrusted { reason } => Gate::Refused(reason.clone()),
        TrustVerdict::Unlisted => {
            if !cond.trust_fresh {
                d.needs_evidence = true;
            }
            d.waiting_for_trust = true;
            Gate::Wait
        }
    }
}

/// Who vouches for the head, when what is held (`held`, said in words) may go to the agent
/// now; none while the head waits for its judgement, or when it is not trusted (said once:
/// on the tick that judged the head).
fn vouched(
    d: &mut Draft,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
    held: &str,
) -> Option<String> {
    match gate(d, cond) {
        Gate::Go(by) => Some(by),
        Gate::Wait => None,
        Gate::Refused(reason) => {
            if ctx.evidence.is_some() {
                note_untrusted(d, snap, &reason, held);
            }
            None
        }
    }
}

/// Notes that nothing reaches the agent on the head, and why.
fn note_untrusted(d: &mut Draft, snap: &Snapshot, reason: &str, what: &str) {
    let line = format!(
        "head {} is not trusted ({reason}): {what}",
        snap.head.sha.short()
    );
    if !d.history.iter().any(|h| h.what == line) {
        d.note(line, Some(Why::UntrustedHead.as_str()));
    }
}

pub(super) fn remediate(
    d: &mut Draft,
    watch: &Watch,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
) {
    if cond.new_head {
        new_head(d, snap);
    }
    fix_over_without_commit(d, snap, ctx);
    feedback_answered(d, snap, ctx);

    let had_conflict = watch.status.pills.cnf;
    d.status.pills.cnf = cond.conflict;
    if cond.conflict {
        if !had_conflict {
            d.note(format!("cnf lit: conflicts with {}", snap.base_ref), None);
            d.notify(Notice::Conflict {
                base: snap.base_ref.clone(),
                found: None,
            });
        }
        conflict_to_agent(d, snap, cond, ctx);
    } else {
        if had_conflict {
            d.note("cnf cleared", None);
        }
        failed_checks::checks(d, snap, cond, ctx);
    }
    review_feedback::reviews(d, watch, snap, cond, ctx);
}

/// With `conflicts: agent`, the conflict goes to the agent once per head: not while a fix is
/// with it or the hour's messages are spent, and only on a head vouched for.
fn conflict_to_agent(d: &mut Draft, snap: &Snapshot, cond: &Condition, ctx: &Context<'_>) {
    if ctx.policy.conflicts != Handler::Agent
        || d.status.memory.conflict_sent_for.as_ref() == Some(&snap.head.sha)
        || fix_out(d)
    {
        return;
    }
    let Some(agent) = ctx.policy.agent.clone() else {
        return;
    };
    if capped(d, ctx) {
        return;
    }
    let Some(trusted_by) = vouched(d, snap, cond, ctx, "the conflict is held from the agent")
    else {
        return;
    };
    d.status.memory.conflict_sent_for = Some(snap.head.sha.clone());
    send(
        d,
        snap,
        ctx,
        (&agent, MessageKind::Conflict, Why::FixSent),
        (Vec::new(), Vec::new()),
        trusted_by,
    );
    d.note(
        format!("sent the conflict with {} to {agent}", snap.base_ref),
        None,
    );
}

/// Clearing: a new head's checks start, so `ci` and `ci…` clear; a fix in flight on the old
/// head ended with a commit.
fn new_head(d: &mut Draft, snap: &Snapshot) {
    if d.status.pills.ci != Ci::Off {
        d.note("ci cleared: a new head's checks start", None);
    }
    d.status.pills.ci = Ci::Off;
    d.status.why = None;
    if d.status
        .memory
        .fix
        .as_ref()
        .is_some_and(|f| f.head_sha != snap.head.sha)
    {
        d.status.memory.fix = None;
    }
}

/// Guard: the fix is over (the agent said done, or the timeout passed) and the head has not
/// moved.
fn fix_over_without_commit(d: &mut Draft, snap: &Snapshot, ctx: &Context<'_>) {
    let Some(fix) = d.status.memory.fix.clone() else {
        return;
    };
    let timed_out = (ctx.now - fix.sent_at).num_seconds()
        >= i64::try_from(ctx.policy.fix_timeout_sec).unwrap_or(i64::MAX);
    if fix.head_sha == snap.head.sha && (fix.done_at.is_some() || timed_out) {
        d.status.memory.fix = None;
        failed_checks::stop(d, Guard::NoNewCommit);
    }
}

/// Closing the loop: the review feedback the agent marked done is judged on this snapshot,
/// once. What it answered goes in the history; when it did nothing, the owner hears.
fn feedback_answered(d: &mut Draft, snap: &Snapshot, ctx: &Context<'_>) {
    let Some(sent) = d.status.memory.feedback_sent.clone() else {
        return;
    };
    let Some(judged) = answers::judge(&sent, snap, ctx.agent_logins) else {
        return;
    };
    d.status.memory.feedback_sent = None;
    if judged.did_nothing() {
        let notice = Notice::AgentDidNothing {
            threads: sent.threads.len(),
            comments: sent.comments,
            note: sent.note.clone(),
        };
        let line = match &sent.note {
            Some(note) => format!("{} (the agent said: {note})", report::headline(&notice)),
            None => report::headline(&notice),
        };
        d.note(line, None);
        d.notify(notice);
        return;
    }
    let agent = ctx.policy.agent.as_deref().unwrap_or("the agent");
    for line in answers::history(agent, &sent, &judged) {
        d.note(line, None);
    }
}

/// Whether review feedback is with the agent (sent, not yet marked done, within
/// `fix_timeout_sec`): the agent holds the branch, and a CI fix waits for it.
fn feedback_out(d: &Draft, ctx: &Context<'_>) -> bool {
    let timeout = i64::try_from(ctx.policy.fix_timeout_sec).unwrap_or(i64::MAX);
    d.status
        .memory
        .feedback_sent
        .as_ref()
        .is_some_and(|f| f.done_at.is_none() && (ctx.now - f.sent_at).num_seconds() < timeout)
}

/// Whether the agent had its `agent_messages_per_hour` about this PR in the hour before now:
/// then the work waits (nothing is marked handled), and the owner is told once until a message
/// goes again. The owner's own `fix` is never held back.
fn capped(d: &mut Draft, ctx: &Context<'_>) -> bool {
    let Some(cap) = ctx.policy.agent_messages_per_hour else {
        return false;
    };
    let hour_ago = ctx.now - chrono::Duration::hours(1);
    let m = &mut d.status.memory;
    m.agent_messages.retain(|t| *t > hour_ago);
    if !super::to_agent::at_cap(m, ctx) {
        return false;
    }
    if !m.cap_told {
        m.cap_told = true;
        let notice = Notice::AgentCapped { per_hour: cap };
        d.note(report::headline(&notice), None);
        d.notify(notice);
    }
    true
}

/// Queues a message to the agent (with its failed checks and feedback, on a head vouched for
/// as `trusted_by` says); returns its id.
fn send(
    d: &mut Draft,
    snap: &Snapshot,
    ctx: &Context<'_>,
    what: (&str, MessageKind, Why),
    lists: (Vec<FailedCheck>, Vec<Feedback>),
    trusted_by: String,
) -> String {
    let req = super::to_agent::request(snap, ctx, what, lists, trusted_by);
    let id = req.id.clone();
    d.status.memory.agent_message_sent(ctx.now);
    d.actions.push(Action::SendToAgent(req));
    id
}

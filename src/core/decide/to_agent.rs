//! What a message to the agent is made of, apart from when it goes: the request itself, the
//! hourly cap, and the conflict message a branch update readies so that a conflict the update
//! finds reaches the agent in the same tick ([`ConflictHandoff`]).

use crate::core::decide::{AgentRequest, Condition, Context, Draft, Feedback, MessageKind};
use crate::model::plan::ConflictHandoff;
use crate::model::policy::Handler;
use crate::model::trust::TrustVerdict;
use crate::model::watch::{Memory, Why};
use crate::model::{FailedCheck, Snapshot};

/// The request for the agent `agent` about `snap`'s head (with its failed checks and
/// feedback, on a head vouched for as `trusted_by` says). Its id is stable for one head, kind
/// and instant.
pub(super) fn request(
    snap: &Snapshot,
    ctx: &Context<'_>,
    (agent, kind, reason): (&str, MessageKind, Why),
    (checks, feedback): (Vec<FailedCheck>, Vec<Feedback>),
    trusted_by: String,
) -> AgentRequest {
    AgentRequest {
        id: snap.pr.message_id(&[
            snap.head.sha.short(),
            kind.id_word(),
            &ctx.now.timestamp().to_string(),
        ]),
        agent: agent.to_owned(),
        kind,
        reason,
        checks,
        feedback,
        trusted_by,
        conflict_files: Vec::new(),
    }
}

/// Whether the last hour's messages already reach `agent_messages_per_hour`.
pub(super) fn at_cap(memory: &Memory, ctx: &Context<'_>) -> bool {
    let hour_ago = ctx.now - chrono::Duration::hours(1);
    ctx.policy.agent_messages_per_hour.is_some_and(|cap| {
        let sent = memory
            .agent_messages
            .iter()
            .filter(|t| **t > hour_ago)
            .count();
        sent >= usize::try_from(cap).unwrap_or(usize::MAX)
    })
}

/// The conflict message a branch update of `snap`'s head readies: when conflicts go to the
/// agent and it may have this one now (none sent for the head, no fix out, the hourly cap not
/// reached, the head trusted). Otherwise a conflict the update finds waits for the next
/// decision, which says why. A head whose trust is not judged yet asks for the forge's word on
/// it first (the shell reads it and decides again), as anything bound for the agent does.
pub(super) fn conflict_handoff(
    d: &mut Draft,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
) -> Option<Box<ConflictHandoff>> {
    let agent = ctx
        .policy
        .agent
        .as_deref()
        .filter(|_| ctx.policy.conflicts == Handler::Agent)?;
    let m = &d.status.memory;
    if m.conflict_sent_for.as_ref() == Some(&snap.head.sha) || fix_out(d) || at_cap(m, ctx) {
        return None;
    }
    let verdict = cond.trust.as_ref().map(|t| &t.verdict);
    let unjudged = match verdict {
        None => true,
        Some(TrustVerdict::Unlisted) => !cond.trust_fresh,
        Some(_) => false,
    };
    if unjudged {
        d.needs_evidence = true;
    }
    let Some(TrustVerdict::Trusted(by)) = verdict else {
        return None;
    };
    Some(Box::new(ConflictHandoff {
        request: request(
            snap,
            ctx,
            (agent, MessageKind::Conflict, Why::FixSent),
            (Vec::new(), Vec::new()),
            by.words(),
        ),
        at: ctx.now,
    }))
}

/// Whether a fix is with the agent (sent, on this head, not over): the agent then holds the
/// branch, and no other work or branch update goes to it (one writer per branch).
pub(super) fn fix_out(d: &Draft) -> bool {
    d.status.memory.fix.is_some()
}

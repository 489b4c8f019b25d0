//! Review feedback: `cmt` counts the unresolved threads; with `reviews: agent`, new items from
//! allowed authors go to the agent once each, on a head vouched for, never while a fix holds
//! the branch. Appends to the draft plan; never does I/O.

use crate::core::answers;
use crate::core::decide::{Action, Condition, Context, Draft, Feedback, MessageKind};
use crate::core::feedback;
use crate::model::plan::Notice;
use crate::model::policy::Handler;
use crate::model::watch::{Watch, Why};
use crate::model::{Login, Snapshot};

use super::{capped, fix_out, send, vouched};

/// Review feedback: `cmt` counts unresolved threads; with `reviews: agent`, new items from
/// allowed authors go to the agent once each.
pub(super) fn reviews(
    d: &mut Draft,
    watch: &Watch,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
) {
    count_threads(d, watch, cond, ctx);
    if ctx.policy.reviews != Handler::Agent {
        return;
    }
    let Some(agent) = ctx.policy.agent.clone() else {
        return;
    };
    let mut sorted = feedback::sort(candidates(snap, ctx), ctx.seen, ctx.policy.edits);
    // What is to be sent is marked handled only once it is sent: on an untrusted head it is
    // held. Ignored edits are handled whatever the head.
    let to_send = feedback::Sorted {
        send: std::mem::take(&mut sorted.send),
        ..feedback::Sorted::default()
    };
    note_ignored(d, &sorted.ignored, &agent);
    if !to_send.send.is_empty() && capped(d, ctx) {
        // What would go waits, unmarked, for an hour that allows it.
        d.seen.extend(sorted.seen_rows());
        return;
    }
    d.seen.extend(sorted.seen_rows());
    send_feedback(d, snap, cond, ctx, &agent, &to_send);
}

/// `cmt` is the count of unresolved threads; with `reviews: owner`, the owner hears when it
/// grows.
fn count_threads(d: &mut Draft, watch: &Watch, cond: &Condition, ctx: &Context<'_>) {
    let before = watch.status.pills.cmt;
    d.status.pills.cmt = cond.unresolved_threads;
    if cond.unresolved_threads == before {
        return;
    }
    d.note(
        format!(
            "cmt: {} unresolved review thread(s)",
            cond.unresolved_threads
        ),
        None,
    );
    if cond.unresolved_threads > before && ctx.policy.reviews == Handler::Owner {
        d.notify(Notice::Unresolved {
            threads: cond.unresolved_threads,
        });
    }
}

/// The feedback items that may go to the agent: by a trusted author, and mentioning the job's
/// handle when it has one. The PR's author counts only when the forge says they may write to
/// the repository: in a job that watches outsiders' PRs, an outsider's own words never reach
/// the agent.
fn candidates(snap: &Snapshot, ctx: &Context<'_>) -> Vec<feedback::Item> {
    let trusted = |author: &Option<String>| {
        author.as_deref().map(Login::new).is_some_and(|a| {
            a.is(ctx.owner)
                || ctx.policy.trust.iter().any(|t| a.is(t))
                || (snap.author_can_write
                    && snap.author.as_deref().is_some_and(|author| a.is(author)))
        })
    };
    feedback::items(snap, ctx.agent_logins)
        .into_iter()
        .filter(|i| trusted(&i.feedback.author))
        .filter(|i| {
            ctx.policy
                .mention
                .as_deref()
                .is_none_or(|handle| crate::core::mention::mentions(&i.feedback.body, handle))
        })
        .collect()
}

/// Notes each edit that does not count, with who made it when the forge says.
fn note_ignored(d: &mut Draft, ignored: &[(Feedback, Option<String>)], agent: &str) {
    for (f, by) in ignored {
        let whose = format!(
            "{}'s {}",
            f.author.as_deref().unwrap_or("someone"),
            f.source.as_str().replace('_', " ")
        );
        d.note(
            match by {
                Some(by) => format!("an edit of {whose} by {by} was ignored: not sent to {agent}"),
                None => format!(
                    "{whose} changed after it was sent, and the forge does not say who changed it: not sent again"
                ),
            },
            Some(&f.id),
        );
    }
}

/// Sends the new feedback (its bodies cut and masked) to the agent, marked seen once sent:
/// while a fix is with the agent it waits, and on a head not vouched for it is held.
fn send_feedback(
    d: &mut Draft,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
    agent: &str,
    to_send: &feedback::Sorted,
) {
    let new: Vec<Feedback> = to_send
        .send
        .iter()
        .cloned()
        .map(|f| Feedback {
            body: crate::core::logs::feedback_body(&f.body, ctx.policy.log_tail_bytes, ctx.held),
            ..f
        })
        .collect();
    if new.is_empty() {
        return;
    }
    // One writer per branch: while a fix is with the agent, feedback waits (not marked seen)
    // and goes once the fix is over.
    if fix_out(d) {
        if d.actions
            .iter()
            .any(|a| matches!(a, Action::SendToAgent(_)))
        {
            d.note(
                format!(
                    "{} piece(s) of review feedback wait: a fix is with {agent}",
                    new.len()
                ),
                None,
            );
        }
        return;
    }
    // Held (not marked seen) until the head is trusted.
    let Some(trusted_by) = vouched(d, snap, cond, ctx, "feedback is held from the agent") else {
        return;
    };
    d.seen.extend(to_send.seen_rows());
    let n = new.len();
    let kept = |id: &str| answers::sent(id, &snap.head.sha, ctx.now, &new);
    let id = send(
        d,
        snap,
        ctx,
        (agent, MessageKind::ReviewFeedback, Why::FixSent),
        (Vec::new(), new.clone()),
        trusted_by,
    );
    d.status.memory.feedback_sent = Some(kept(&id));
    d.note(
        format!("sent {n} piece(s) of review feedback to {agent}"),
        None,
    );
}

//! Remediate: what each failure gets (a fix, a re-run, the owner), the guards, clearing, conflicts and review
//! feedback. Appends to the draft plan; never does I/O.

use crate::core::answers;
use crate::core::checks::Verdict;
use crate::core::decide::{Action, Condition, Context, Draft, Feedback, MessageKind};
use crate::core::feedback;
use crate::core::hash::fnv64;
use crate::core::report;
use crate::model::plan::{Guard, Notice};
use crate::model::policy::Handler;
use crate::model::trust::TrustVerdict;
use crate::model::watch::Ci;
use crate::model::watch::{FixInFlight, Watch, Why};
use crate::model::{FailedCheck, Login, Snapshot};

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
        if ctx.policy.conflicts == Handler::Agent
            && d.status.memory.conflict_sent_for.as_ref() != Some(&snap.head.sha)
            && !fix_out(d)
            && let Some(agent) = ctx.policy.agent.clone()
            && !capped(d, ctx)
        {
            let trusted_by = match gate(d, cond) {
                Gate::Go(by) => by,
                Gate::Wait => return reviews(d, watch, snap, cond, ctx),
                Gate::Refused(reason) => {
                    // Said once: on the tick that judged the head.
                    if ctx.evidence.is_some() {
                        note_untrusted(d, snap, &reason, "the conflict is held from the agent");
                    }
                    return reviews(d, watch, snap, cond, ctx);
                }
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
    } else {
        if had_conflict {
            d.note("cnf cleared", None);
        }
        checks(d, snap, cond, ctx);
    }
    reviews(d, watch, snap, cond, ctx);
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
        stop(d, Guard::NoNewCommit);
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

fn checks(d: &mut Draft, snap: &Snapshot, cond: &Condition, ctx: &Context<'_>) {
    match &cond.verdict {
        Verdict::AwaitingChecks | Verdict::Running { .. } => {}
        Verdict::Passed | Verdict::NoChecks => {
            if d.status.pills.ci != Ci::Off {
                d.note("ci cleared: checks passed", None);
            }
            if d.status.attempts > 0 {
                d.note(
                    format!("attempts reset after {} fix(es)", d.status.attempts),
                    None,
                );
            }
            d.status.pills.ci = Ci::Off;
            d.status.why = None;
            d.status.attempts = 0;
            let m = &mut d.status.memory;
            m.fix = None;
            m.fix_held_for = None;
            m.handled_failure = None;
            m.last_fix_fingerprint = None;
            m.log_waits = 0;
        }
        Verdict::Failed { failed } => {
            let watch_handled = d.status.memory.handled_failure.clone();
            let key = failure_key(snap, failed);
            // A fix held for feedback is judged again once the feedback is answered.
            let released = d.status.memory.fix_held_for.as_deref() == Some(key.as_str())
                && !feedback_out(d, ctx);
            if !ctx.fix_asked
                && !released
                && d.status.memory.handled_failure.as_deref() == Some(key.as_str())
            {
                return;
            }
            if !ctx.fix_asked && cond.only_stale() {
                // Staleness, not code: the branch update (merge stage) answers it.
                d.status.memory.handled_failure = Some(key);
                d.note(
                    format!(
                        "{} failed, a freshness check: the branch is behind {}, so it is updated, not sent as a failure",
                        failed.join(", "),
                        snap.base_ref
                    ),
                    None,
                );
                return;
            }
            if !ctx.fix_asked && wait_for_logs(d, snap) {
                return;
            }
            d.status.memory.log_waits = 0;
            d.status.memory.handled_failure = Some(key);
            if !cond.overdue.is_empty() {
                let secs = ctx.policy.pending_timeout_sec.unwrap_or_default();
                d.note(
                    format!(
                        "{} never finished in {secs} s: counted as failed",
                        cond.overdue.join(", ")
                    ),
                    None,
                );
            }
            let handled_before = watch_handled.clone();
            failure_table(d, snap, cond, ctx, failed);
            if d.waiting_for_trust {
                // Judged again on a later tick (or this tick's second decision).
                d.status.memory.handled_failure = handled_before;
            }
        }
    }
}

/// Whether a fix is with the agent (sent, on this head, not over): the agent then holds the
/// branch, and no other work or branch update goes to it (one writer per branch).
pub(super) fn fix_out(d: &Draft) -> bool {
    d.status.memory.fix.is_some()
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

/// Ticks in a row a failure waits for a log the forge did not answer for; then it is acted
/// on with what could be read.
pub(super) const MAX_LOG_WAITS: u32 = 3;

/// A failed check's log could not be read this tick: the failure waits for the next tick
/// (nothing sent, no attempt spent, no re-run, no guard moved), and the history says why.
/// Whether it waits.
fn wait_for_logs(d: &mut Draft, snap: &Snapshot) -> bool {
    let Some(unread) = snap.failed_logs.iter().find(|f| f.unreadable.is_some()) else {
        return false;
    };
    if d.status.memory.log_waits >= MAX_LOG_WAITS {
        d.note(
            format!(
                "the log of {} still cannot be read: acting on the failure without it",
                unread.name
            ),
            None,
        );
        return false;
    }
    d.status.memory.log_waits += 1;
    d.note(
        format!(
            "the log of {} could not be read ({}): the failure waits for the next tick, no attempt spent",
            unread.name,
            unread.unreadable.as_deref().unwrap_or("")
        ),
        None,
    );
    true
}

/// Identifies one failure on one head: a re-run's failure is a new one.
fn failure_key(snap: &Snapshot, failed: &[String]) -> String {
    let mut parts: Vec<String> = failed.to_vec();
    for f in &snap.failed_logs {
        parts.push(format!(
            "{}#{}@{}",
            f.name,
            f.job_id.unwrap_or(0),
            f.completed_at.map_or(0, |t| t.timestamp())
        ));
    }
    format!("{}:{}", snap.head.sha, parts.join(","))
}

#[expect(
    clippy::too_many_lines,
    reason = "the failure table: one arm per row of it, read top to bottom"
)]
fn failure_table(
    d: &mut Draft,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
    failed: &[String],
) {
    let policy = ctx.policy;
    if ctx.fix_asked {
        if let Some(agent) = policy.agent.clone() {
            match gate(d, cond) {
                Gate::Go(by) => send_fix(
                    d,
                    snap,
                    ctx,
                    &agent,
                    (Why::FixAsked, by),
                    failed,
                    &snap.failed_logs,
                ),
                Gate::Wait => {}
                Gate::Refused(reason) => refuse(d, snap, failed, &reason),
            }
        }
        return;
    }
    let logs = &snap.failed_logs;
    let all_infra = !logs.is_empty()
        && logs.len() == failed.len()
        && logs.iter().all(|f| f.classification.is_infra());
    if all_infra {
        let keys: Vec<String> = logs
            .iter()
            .map(|f| format!("{}:{}", snap.head.sha, f.name))
            .collect();
        let mut run_ids: Vec<u64> = logs.iter().filter_map(|f| f.run_id).collect();
        run_ids.sort_unstable();
        run_ids.dedup();
        let already = keys
            .iter()
            .any(|k| d.status.memory.infra_reruns.contains(k));
        if !already && !run_ids.is_empty() {
            let evidence: Vec<String> = logs
                .iter()
                .filter_map(|f| match &f.classification {
                    crate::model::Classification::Infra { evidence } => {
                        Some(format!("{}: {evidence}", f.name))
                    }
                    crate::model::Classification::Real => None,
                })
                .collect();
            d.status.memory.infra_reruns.extend(keys.iter().cloned());
            d.status.memory.last_rerun_at = Some(ctx.now);
            d.actions.push(Action::RerunFailed {
                run_ids,
                guards: keys,
            });
            d.status.why = Some(Why::InfraRerun);
            d.note(
                format!("re-ran {} for infrastructure reasons", failed.join(", ")),
                Some(&evidence.join("; ")),
            );
            return;
        }
        light_ci(d, failed, Why::InfraAgain);
        return;
    }
    let agent = policy.agent.clone().filter(|_| cond.agent_commit);
    let Some(agent) = agent else {
        // Whose head it is may be known only from who pushed it: read that first when the
        // failure could go to the agent.
        if policy.agent.is_some() && policy.auto_fix && cond.trust.is_none() {
            d.needs_evidence = true;
            d.waiting_for_trust = true;
            return;
        }
        light_ci(d, failed, Why::NotAgentCommit);
        return;
    };
    if !policy.auto_fix {
        light_ci(d, failed, Why::AutoFixOff);
    } else if d.status.attempts >= policy.max_attempts {
        stop(
            d,
            Guard::MaxAttempts {
                names: failed.to_vec(),
            },
        );
    } else if d.status.memory.last_fix_fingerprint.as_deref()
        == Some(fingerprint(failed, logs).as_str())
    {
        stop(
            d,
            Guard::SameFailure {
                names: failed.to_vec(),
            },
        );
    } else if feedback_out(d, ctx) {
        // One writer per branch: the fix waits for the feedback with the agent, said once.
        let key = d.status.memory.handled_failure.clone();
        if d.status.memory.fix_held_for != key {
            d.note(
                format!(
                    "the fix of {} waits: review feedback is with {agent}",
                    failed.join(", ")
                ),
                None,
            );
        }
        d.status.memory.fix_held_for = key;
    } else if capped(d, ctx) {
        // The failure waits: judged again at a later tick, when the hour allows.
        d.status.memory.handled_failure = None;
    } else {
        match gate(d, cond) {
            Gate::Go(by) => send_fix(d, snap, ctx, &agent, (Why::FixSent, by), failed, logs),
            Gate::Wait => {}
            Gate::Refused(reason) => refuse(d, snap, failed, &reason),
        }
    }
}

/// The failure would go to the agent, but the head is not trusted: `ci` is lit for the owner
/// with `untrusted_head` and the reason.
fn refuse(d: &mut Draft, snap: &Snapshot, failed: &[String], reason: &str) {
    note_untrusted(d, snap, reason, "nothing is sent to the agent");
    light_ci(d, failed, Why::UntrustedHead);
}

/// A merge group failed on the agent's own commit: it goes to the agent like a failure of the
/// PR's own checks, with the merge group's logs, under the same guards. Whether it was sent.
pub(super) fn merge_group_to_agent(
    d: &mut Draft,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
    logs: &[FailedCheck],
) -> bool {
    let policy = ctx.policy;
    let Some(agent) = policy.agent.clone().filter(|_| cond.agent_commit) else {
        return false;
    };
    let failed: Vec<String> = logs.iter().map(|f| f.name.clone()).collect();
    let fresh = d.status.memory.last_fix_fingerprint.as_deref()
        != Some(fingerprint(&failed, logs).as_str());
    if failed.is_empty()
        || !policy.auto_fix
        || d.status.attempts >= policy.max_attempts
        || !fresh
        || capped(d, ctx)
    {
        return false;
    }
    match gate(d, cond) {
        Gate::Go(by) => {
            send_fix(d, snap, ctx, &agent, (Why::FixSent, by), &failed, logs);
            true
        }
        Gate::Wait => false,
        Gate::Refused(reason) => {
            note_untrusted(d, snap, &reason, "the merge group's failure is the owner's");
            false
        }
    }
}

/// Lights `ci` for the owner with `why`, and tells them.
fn light_ci(d: &mut Draft, failed: &[String], why: Why) {
    d.status.pills.ci = Ci::Lit;
    d.status.why = Some(why);
    d.note(
        format!("ci lit: {}", report::failed(failed)),
        Some(why.as_str()),
    );
    d.notify(Notice::ChecksFailed {
        names: failed.to_vec(),
        why,
        attempts: d.status.attempts,
    });
}

/// A guard stops auto-fix: lights `ci`, records why, tells the owner once.
fn stop(d: &mut Draft, guard: Guard) {
    let why = guard.why();
    d.status.pills.ci = Ci::Lit;
    d.status.why = Some(why);
    let notice = Notice::GuardStopped {
        guard,
        attempts: d.status.attempts,
    };
    d.note(report::headline(&notice), Some(why.as_str()));
    d.notify(notice);
}

fn send_fix(
    d: &mut Draft,
    snap: &Snapshot,
    ctx: &Context<'_>,
    agent: &str,
    (why, trusted_by): (Why, String),
    failed: &[String],
    logs: &[FailedCheck],
) {
    let checks: Vec<FailedCheck> = logs.iter().take(5).cloned().collect();
    d.status.memory.fix_held_for = None;
    d.status.attempts += 1;
    d.status.pills.ci = Ci::Fixing;
    d.status.why = Some(why);
    d.status.memory.last_fix_fingerprint = Some(fingerprint(failed, logs));
    let id = send(
        d,
        snap,
        ctx,
        (agent, MessageKind::CiFailure, why),
        (checks, Vec::new()),
        trusted_by,
    );
    d.status.memory.fix = Some(FixInFlight {
        message_id: id,
        head_sha: snap.head.sha.clone(),
        sent_at: ctx.now,
        done_at: None,
    });
    d.note(
        format!(
            "sent {} to {agent} (attempt {})",
            report::failed(failed),
            d.status.attempts
        ),
        Some(why.as_str()),
    );
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

/// Failed names plus their log tails with numbers and hashes normalised away: the same
/// failure with the same logs has the same fingerprint across heads.
pub(crate) fn fingerprint(failed: &[String], logs: &[FailedCheck]) -> String {
    let mut text = failed.join("\n");
    for f in logs {
        text.push('\n');
        text.push_str(&f.name);
        let mut last_digit = false;
        for c in f.log_tail.chars() {
            let digit = c.is_ascii_digit();
            if !(digit && last_digit) {
                text.push(if digit { '0' } else { c });
            }
            last_digit = digit;
        }
    }
    fnv64(&text)
}

/// Review feedback: `cmt` counts unresolved threads; with `reviews: agent`, new items from
/// allowed authors go to the agent once each.
#[expect(
    clippy::too_many_lines,
    reason = "review feedback's stages in order: count, sort, gate, send, note; each a few lines"
)]
fn reviews(d: &mut Draft, watch: &Watch, snap: &Snapshot, cond: &Condition, ctx: &Context<'_>) {
    let before = watch.status.pills.cmt;
    d.status.pills.cmt = cond.unresolved_threads;
    if cond.unresolved_threads != before {
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
    if ctx.policy.reviews != Handler::Agent {
        return;
    }
    let Some(agent) = ctx.policy.agent.clone() else {
        return;
    };
    // The PR's author counts only when the forge says they may write to the repository: in
    // a job that watches outsiders' PRs, an outsider's own words never reach the agent.
    let trusted = |author: &Option<String>| {
        author.as_deref().map(Login::new).is_some_and(|a| {
            a.is(ctx.owner)
                || ctx.policy.trust.iter().any(|t| a.is(t))
                || (snap.author_can_write
                    && snap.author.as_deref().is_some_and(|author| a.is(author)))
        })
    };
    let candidates = feedback::items(snap, ctx.agent_logins)
        .into_iter()
        .filter(|i| trusted(&i.feedback.author))
        .filter(|i| {
            ctx.policy
                .mention
                .as_deref()
                .is_none_or(|handle| crate::core::mention::mentions(&i.feedback.body, handle))
        })
        .collect();
    let mut sorted = feedback::sort(candidates, ctx.seen, ctx.policy.edits);
    // What is to be sent is marked handled only once it is sent: on an untrusted head it is
    // held. Ignored edits are handled whatever the head.
    let to_send = feedback::Sorted {
        send: std::mem::take(&mut sorted.send),
        ..feedback::Sorted::default()
    };
    for (f, by) in &sorted.ignored {
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
    if !to_send.send.is_empty() && capped(d, ctx) {
        // What would go waits, unmarked, for an hour that allows it.
        d.seen.extend(sorted.seen_rows());
        return;
    }
    d.seen.extend(sorted.seen_rows());
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
    let trusted_by = match gate(d, cond) {
        Gate::Go(by) => by,
        Gate::Wait => return,
        Gate::Refused(reason) => {
            // Said once: on the tick that judged the head.
            if ctx.evidence.is_some() {
                note_untrusted(d, snap, &reason, "feedback is held from the agent");
            }
            return;
        }
    };
    d.seen.extend(to_send.seen_rows());
    let n = new.len();
    let kept = |id: &str| answers::sent(id, &snap.head.sha, ctx.now, &new);
    let id = send(
        d,
        snap,
        ctx,
        (&agent, MessageKind::ReviewFeedback, Why::FixSent),
        (Vec::new(), new.clone()),
        trusted_by,
    );
    d.status.memory.feedback_sent = Some(kept(&id));
    d.note(
        format!("sent {n} piece(s) of review feedback to {agent}"),
        None,
    );
}

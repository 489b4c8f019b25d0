//! The failure table: what a failed check gets (a re-run of an infrastructure flake, a fix from
//! the agent, or `ci` lit for the owner), the guards that stop a runaway loop, and waiting for
//! a log the forge did not answer for. Appends to the draft plan; never does I/O.

use crate::core::checks::Verdict;
use crate::core::decide::{Action, Condition, Context, Draft, MessageKind};
use crate::core::hash::fnv64;
use crate::core::report;
use crate::model::plan::{Guard, Notice};
use crate::model::watch::{Ci, FixInFlight, Why};
use crate::model::{FailedCheck, Snapshot};

use super::{Gate, MAX_LOG_WAITS, capped, feedback_out, gate, note_untrusted, send};

pub(super) fn checks(d: &mut Draft, snap: &Snapshot, cond: &Condition, ctx: &Context<'_>) {
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

/// One failure, by the rows of the failure table: a fix the owner asked for goes to the agent;
/// infrastructure flakes are re-run once; a failure on the agent's own commit goes back to it
/// under the guards; anything else lights `ci` for the owner.
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
        rerun_infra(d, snap, ctx, failed);
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
    fix_unless_guarded(d, snap, cond, ctx, failed, &agent);
}

/// Every failed check is an infrastructure flake: re-run them, once per job per head, with
/// the evidence in the history; a flake again lights `ci`.
fn rerun_infra(d: &mut Draft, snap: &Snapshot, ctx: &Context<'_>, failed: &[String]) {
    let logs = &snap.failed_logs;
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
    if already || run_ids.is_empty() {
        light_ci(d, failed, Why::InfraAgain);
        return;
    }
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
}

/// A real failure on the agent's own commit: the fix goes to `agent` unless auto-fix is off,
/// a guard stops it (attempts spent, the same failure again), review feedback holds the
/// branch, or the hour's messages are spent; and only on a head vouched for.
fn fix_unless_guarded(
    d: &mut Draft,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
    failed: &[String],
    agent: &str,
) {
    let policy = ctx.policy;
    let logs = &snap.failed_logs;
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
            Gate::Go(by) => send_fix(d, snap, ctx, agent, (Why::FixSent, by), failed, logs),
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
pub(in crate::core::decide) fn merge_group_to_agent(
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
pub(super) fn stop(d: &mut Draft, guard: Guard) {
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

/// Failed names plus their log tails with numbers and hashes normalised away: the same
/// failure with the same logs has the same fingerprint across heads.
fn fingerprint(failed: &[String], logs: &[FailedCheck]) -> String {
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

//! Applies a plan's actions: forge writes now, messages into the outbox (delivered after the
//! tick's transaction commits). Outcomes the plan could not know (a conflict found on update,
//! a forge that refuses auto-merge because the PR is already clean) adjust the PR's state here,
//! each for what it means, and are recorded in its history. Every forge write is announced
//! first: its intent is committed to the store before the call ([`crate::model::intent`]), and a
//! write whose intent cannot be recorded is not made.

use crate::config::{Config, Policy};
use crate::core::decide::{Action, MessageKind, Notice, Plan};
use crate::core::hash::fnv64;
use crate::core::report;
use crate::forge::{Forge, ForgeError, Refusal};
use crate::model::intent::{IntentKind, IntentLog};
use crate::model::message::{Channel, NoticePayload, to_json};
use crate::model::watch::{HistoryEntry, MergeVia, Pills, WatchStatus};
use crate::model::{Instant, MergeMethod, PrState, Sha, Snapshot};
use crate::store::OutboxMessage;

/// What applying a plan produced besides the plan itself.
#[derive(Debug, Default)]
pub struct Applied {
    pub history: Vec<HistoryEntry>,
    pub outbox: Vec<OutboxMessage>,
    /// A forge write whose failure leaves the PR's tick incomplete.
    pub error: Option<String>,
    /// This tick merged the PR.
    pub merged: bool,
}

/// The facts `apply` needs besides the plan.
#[derive(Debug)]
pub struct Env<'a> {
    /// The watch the plan is for (its intents are recorded under it).
    pub watch_id: i64,
    pub config: &'a Config,
    pub policy: &'a Policy,
    pub owner: &'a str,
    pub now: Instant,
    pub dry_run: bool,
}

/// Where a plan's writes go: the forge, and the log their intents are recorded in first.
pub struct Writes<'a> {
    pub forge: &'a dyn Forge,
    pub intents: &'a mut dyn IntentLog,
}

impl std::fmt::Debug for Writes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Writes")
    }
}

/// Applies `plan` (mutating its status where outcomes demand) and returns what else happened.
pub fn apply(writes: &mut Writes<'_>, snap: &Snapshot, plan: &mut Plan, env: &Env<'_>) -> Applied {
    let forge = writes.forge;
    let mut out = Applied::default();
    let actions = std::mem::take(&mut plan.actions);
    let mut notices = Vec::new();
    for action in &actions {
        if env.dry_run {
            continue;
        }
        match action {
            Action::Notify(n) => notices.push(n.clone()),
            Action::SendToAgent(req) => {
                let mut req = req.clone();
                if req.kind == MessageKind::Conflict {
                    // Read only now, when the conflict goes to the agent.
                    req.conflict_files =
                        crate::tick::detect::conflict_files(forge, snap).unwrap_or_default();
                }
                let message = agent_outbox_message(&req, snap, env.owner, env.now);
                queue(&mut out, env.now, message.map(|m| vec![m]));
            }
            Action::RerunFailed { run_ids, guards } => {
                if !intend(
                    writes,
                    env,
                    IntentKind::Rerun,
                    &snap.head.sha,
                    &guards.join("\n"),
                    &mut out,
                ) {
                    let memory = &mut plan.status.memory;
                    memory.infra_reruns.retain(|g| !guards.contains(g));
                    continue;
                }
                for run in run_ids {
                    if let Err(e) = forge.rerun_failed(&snap.pr, *run) {
                        note(
                            &mut out,
                            env.now,
                            format!("re-run of workflow run {run} failed: {e}"),
                        );
                    }
                }
            }
            Action::UpdateBranch {
                expected_head,
                method,
            } => match intend(
                writes,
                env,
                IntentKind::UpdateBranch,
                expected_head,
                method.as_str(),
                &mut out,
            )
            .then(|| forge.update_branch(snap, expected_head, *method))
            {
                None => plan.status.memory.update_requested_for = None,
                Some(Ok(())) => note(
                    &mut out,
                    env.now,
                    format!("branch update requested ({method})"),
                ),
                Some(Err(ForgeError::MergeConflict(msg))) => {
                    // A conflict from here on (see `Condition::conflict`): it follows the
                    // conflict policy at the next decision.
                    plan.status.memory.update_failed_for = Some(expected_head.clone());
                    plan.status.pills.cnf = true;
                    plan.status.memory.holds_update_turn = false;
                    note(
                        &mut out,
                        env.now,
                        format!("cnf lit: the branch update found a conflict ({msg})"),
                    );
                    notices.push(Notice::Conflict {
                        base: snap.base_ref.clone(),
                        found: Some(msg),
                    });
                }
                Some(Err(e)) => {
                    plan.status.memory.update_requested_for = None;
                    note(&mut out, env.now, format!("branch update not done: {e}"));
                    incomplete(&mut out, &e);
                }
            },
            Action::EnableAutoMerge {
                method,
                merge_if_clean,
            } => {
                enable_auto_merge(
                    writes,
                    snap,
                    plan,
                    env,
                    *method,
                    merge_if_clean.as_ref(),
                    &mut out,
                );
            }
            Action::DisableAutoMerge => {
                if !intend(
                    writes,
                    env,
                    IntentKind::Disarm,
                    &snap.head.sha,
                    "",
                    &mut out,
                ) {
                    continue;
                }
                if let Err(e) = forge.disable_auto_merge(snap) {
                    note(
                        &mut out,
                        env.now,
                        format!("could not disable auto-merge: {e}"),
                    );
                    incomplete(&mut out, &e);
                }
            }
            Action::Merge { sha, method } => merge(writes, snap, plan, env, sha, *method, &mut out),
        }
    }
    plan.actions = actions;
    if out.merged {
        record_merged(plan);
        notices.push(Notice::Merged);
    }
    for n in notices {
        let messages = notice_messages(env, snap, &plan.status, &n);
        queue(&mut out, env.now, messages);
    }
    out
}

/// Queues messages for the outbox; one that could not be written leaves the tick incomplete.
fn queue(out: &mut Applied, now: Instant, messages: serde_json::Result<Vec<OutboxMessage>>) {
    match messages {
        Ok(messages) => out.outbox.extend(messages),
        Err(e) => {
            let why = format!("a message could not be written: {e}");
            note(out, now, why.clone());
            out.error = Some(why);
        }
    }
}

/// The tick that merges records the outcome at once: merged, disarmed (how it merged is kept
/// for history), no pill lit, no next tick.
fn record_merged(plan: &mut Plan) {
    plan.status.state = PrState::Merged;
    plan.status.merge = plan.status.merge.merged();
    plan.status.pills = Pills::default();
    plan.status.memory.update_requested_for = None;
    plan.status.memory.holds_update_turn = false;
    plan.next_tick_at = None;
}

fn note(out: &mut Applied, now: Instant, what: String) {
    out.history.push(HistoryEntry {
        at: now,
        what,
        why: None,
    });
}

/// Records the intent of a write before it is made; false (noted, the tick incomplete) when
/// it could not be recorded, and then the write is not made.
fn intend(
    writes: &mut Writes<'_>,
    env: &Env<'_>,
    kind: IntentKind,
    head: &Sha,
    detail: &str,
    out: &mut Applied,
) -> bool {
    match writes
        .intents
        .record_intent(env.watch_id, kind, head, detail, env.now)
    {
        Ok(()) => true,
        Err(e) => {
            let why = format!(
                "{} on {} not asked: its intent could not be recorded first ({e:#})",
                kind.as_str(),
                head.short()
            );
            note(out, env.now, why.clone());
            out.error = Some(why);
            false
        }
    }
}

/// A transient failure of a write leaves the tick incomplete (exit 1, retried next tick).
fn incomplete(out: &mut Applied, e: &ForgeError) {
    if matches!(
        e,
        ForgeError::Transient(_) | ForgeError::Unreachable(_) | ForgeError::RateLimited { .. }
    ) {
        out.error = Some(e.to_string());
    }
}

fn enable_auto_merge(
    writes: &mut Writes<'_>,
    snap: &Snapshot,
    plan: &mut Plan,
    env: &Env<'_>,
    method: MergeMethod,
    merge_if_clean: Option<&Sha>,
    out: &mut Applied,
) {
    if !intend(
        writes,
        env,
        IntentKind::Arm,
        &snap.head.sha,
        method.as_str(),
        out,
    ) {
        plan.status.memory.merge_attempted_for = None;
        return;
    }
    match writes.forge.enable_auto_merge(snap, method) {
        Ok(()) => note(
            out,
            env.now,
            format!("auto-merge enabled ({})", method.as_str()),
        ),
        Err(ForgeError::AutoMergeRefused(refusal)) => {
            // Each refusal for what it means: nothing left to wait for, or no auto-merge on
            // this repo/branch at all (then pr-monitor merges itself).
            let unavailable = matches!(refusal, Refusal::Unavailable(_));
            let merge_directly = unavailable || matches!(refusal, Refusal::AlreadyClean(_));
            let msg = refusal.message();
            if unavailable {
                plan.status.merge.choose(MergeVia::SelfMerge);
            }
            if merge_directly {
                // Not asked again for this head: the merge falls to pr-monitor, as the job's
                // self_merge says.
                plan.status.memory.arm_refused = Some(crate::core::decide::merge::arm_refused(
                    snap,
                    method,
                    !unavailable,
                ));
            }
            let what = if unavailable && env.policy.self_merge {
                format!("auto-merge is not available here, so pr-monitor merges itself ({msg})")
            } else if unavailable {
                format!(
                    "auto-merge is not available here, and the job's self_merge is off: pr-monitor never merges it ({msg})"
                )
            } else if merge_directly && merge_if_clean.is_some() {
                "already clean: nothing to wait for, merging directly".to_owned()
            } else if merge_directly {
                "already clean: the merge waits for the next tick's confirmed head".to_owned()
            } else {
                format!("the forge refused auto-merge: {msg}")
            };
            note(out, env.now, what);
            match merge_if_clean {
                Some(sha) if merge_directly => merge(writes, snap, plan, env, sha, method, out),
                _ => {
                    // Not ready yet: try again next tick rather than merging blind.
                    plan.status.memory.merge_attempted_for = None;
                }
            }
        }
        Err(e) => {
            plan.status.memory.merge_attempted_for = None;
            note(out, env.now, format!("enabling auto-merge failed: {e}"));
            incomplete(out, &e);
        }
    }
}

/// Merges once, guarded by the head sha. A failure whose outcome is unknown is never retried
/// here: the next tick re-reads the PR first (a 500 can merge and still report failure).
fn merge(
    writes: &mut Writes<'_>,
    snap: &Snapshot,
    plan: &mut Plan,
    env: &Env<'_>,
    sha: &Sha,
    method: MergeMethod,
    out: &mut Applied,
) {
    if !intend(writes, env, IntentKind::Merge, sha, method.as_str(), out) {
        plan.status.memory.merge_attempted_for = None;
        return;
    }
    match writes.forge.merge(&snap.pr, sha, method) {
        Ok(()) => {
            out.merged = true;
            note(
                out,
                env.now,
                format!("merged {} ({})", sha.short(), method.as_str()),
            );
        }
        Err(
            e @ (ForgeError::Transient(_)
            | ForgeError::Unreachable(_)
            | ForgeError::RateLimited { .. }),
        ) => {
            plan.status.memory.merge_attempted_for = None;
            note(
                out,
                env.now,
                format!("merge outcome unknown ({e}); the PR is re-read before any retry"),
            );
            incomplete(out, &e);
        }
        Err(e) => note(out, env.now, format!("merge refused: {e}")),
    }
}

/// The outbox row of a message for the PR's agent.
pub fn agent_outbox_message(
    req: &crate::model::plan::AgentRequest,
    snap: &Snapshot,
    owner: &str,
    now: Instant,
) -> serde_json::Result<OutboxMessage> {
    let payload = report::agent_message(req, snap, owner, now);
    let kind = req.kind.as_str();
    Ok(OutboxMessage {
        id: req.id.clone(),
        pr: snap.pr.url(),
        channel: Channel::Agent(req.agent.clone()).to_string(),
        kind: kind.to_owned(),
        subject: report::subject(&snap.pr, &format!("{kind} for {}", req.agent)),
        payload: to_json(&payload)?,
        created_at: now,
    })
}

/// The owner's messages for one notice, with the snapshot's facts, one per channel the
/// policy routes it to.
pub fn notice_messages(
    env: &Env<'_>,
    snap: &Snapshot,
    status: &WatchStatus,
    notice: &Notice,
) -> serde_json::Result<Vec<OutboxMessage>> {
    let payload = report::notice_payload(notice, snap, &status.pills);
    owner_messages(env.config, env.policy, &snap.pr, notice, &payload, env.now)
}

/// The owner's messages for `notice` about `pr` (payload already written), one per channel
/// that the policy routes it to and that carries its kind. The id is stable for one notice of
/// one tick, so a resend after a crash replaces rather than doubles.
pub fn owner_messages(
    config: &Config,
    policy: &Policy,
    pr: &crate::model::PrRef,
    notice: &Notice,
    payload: &NoticePayload,
    now: Instant,
) -> serde_json::Result<Vec<OutboxMessage>> {
    let kind = notice.kind();
    if !policy.notify_on.contains(&kind) {
        return Ok(Vec::new());
    }
    let text = to_json(payload)?;
    Ok(policy
        .notify
        .iter()
        .filter(|c| config.notify.carries(**c, kind))
        .map(|channel| OutboxMessage {
            id: pr.message_id(&[
                kind.as_str(),
                channel.as_str(),
                &now.timestamp().to_string(),
                &fnv64(&report::headline(notice))[..8],
            ]),
            pr: pr.url(),
            channel: Channel::from(*channel).to_string(),
            kind: kind.as_str().to_owned(),
            subject: payload.subject.clone(),
            payload: text.clone(),
            created_at: now,
        })
        .collect())
}

#[cfg(test)]
mod tests;

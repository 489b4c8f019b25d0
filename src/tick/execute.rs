//! Applies a plan's actions: forge writes now, messages into the outbox (delivered after the
//! tick's transaction commits). Outcomes the plan could not know (a conflict found on update,
//! a forge that refuses auto-merge because the PR is already clean) adjust the PR's state by
//! the rules of [`crate::core::outcome`], and are recorded in its history. Every forge write is announced
//! first: its intent is committed to the store before the call ([`crate::model::intent`]), and a
//! write whose intent cannot be recorded is not made.

use crate::config::{Config, Policy};
use crate::core::decide::{Action, MessageKind, Notice, Plan};
use crate::core::hash::fnv64;
use crate::core::{outcome, report};
use crate::forge::{Forge, ForgeError};
use crate::model::intent::{IntentKind, IntentLog};
use crate::model::message::{Channel, NoticePayload, to_json};
use crate::model::outcome::{Failure, FailureKind, Outcome};
use crate::model::watch::{HistoryEntry, WatchStatus};
use crate::model::{Instant, Sha, Snapshot};
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
    /// The answer to the arming the plan asks first, when it was already asked (its intent
    /// recorded) together with its chunk's others (see [`super::arm`]).
    pub armed: Option<Outcome>,
}

impl std::fmt::Debug for Writes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Writes")
    }
}

/// Applies `plan`: each action is asked of the forge (its intent recorded first) and its answer
/// applied to the plan's status by [`outcome::apply`]. Returns what else happened.
pub fn apply(writes: &mut Writes<'_>, snap: &Snapshot, plan: &mut Plan, env: &Env<'_>) -> Applied {
    let mut out = Applied::default();
    let actions = std::mem::take(&mut plan.actions);
    let mut notices = Vec::new();
    for action in &actions {
        if env.dry_run {
            continue;
        }
        let mut next = Some(action.clone());
        while let Some(action) = next.take() {
            let answer = write(writes, snap, env, &action, &mut out);
            let fx = outcome::apply(&mut plan.status, &action, answer, snap, env.policy);
            out.history
                .extend(fx.notes.into_iter().map(|what| HistoryEntry {
                    at: env.now,
                    what,
                    why: None,
                }));
            notices.extend(fx.notices);
            if fx.incomplete.is_some() {
                out.error = fx.incomplete;
            }
            out.merged |= fx.merged;
            next = fx.then;
        }
    }
    plan.actions = actions;
    if out.merged {
        outcome::record_merged(plan);
        let done = crate::core::done::record(snap, plan.status.memory.agent_messages_sent);
        out.history.push(HistoryEntry {
            at: env.now,
            what: crate::core::done::line(&done),
            why: None,
        });
        notices.push(Notice::Merged { done });
    }
    for n in notices {
        let messages = notice_messages(env, snap, &plan.status, &n);
        queue(&mut out, env.now, messages);
    }
    out
}

/// Asks `action` of the forge, its intent recorded first (an agent's message goes to the
/// outbox), and returns the answer.
fn write(
    writes: &mut Writes<'_>,
    snap: &Snapshot,
    env: &Env<'_>,
    action: &Action,
    out: &mut Applied,
) -> Outcome {
    let forge = writes.forge;
    let head = &snap.head.sha;
    let asked = match action {
        Action::Notify(_) => return Outcome::Done,
        Action::SendToAgent(req) => {
            let mut req = req.clone();
            if req.kind == MessageKind::Conflict {
                // Read only now, when the conflict goes to the agent: also when the forge
                // found it updating the branch, though the PR itself still merges cleanly.
                req.conflict_files =
                    crate::tick::detect::files_both_sides_changed(forge, snap).unwrap_or_default();
            }
            let message = agent_outbox_message(&req, snap, env.owner, env.now);
            queue(out, env.now, message.map(|m| vec![m]));
            return Outcome::Done;
        }
        Action::RerunFailed { run_ids, guards } => {
            intend(writes, env, IntentKind::Rerun, head, &guards.join("\n")).map(|()| {
                let failed = run_ids
                    .iter()
                    .filter_map(|run| {
                        let e = forge.rerun_failed(&snap.pr, *run).err()?;
                        Some((*run, failure(&e)))
                    })
                    .collect();
                Outcome::RunsFailed(failed)
            })
        }
        Action::UpdateBranch {
            expected_head,
            method,
            ..
        } => intend(
            writes,
            env,
            IntentKind::UpdateBranch,
            expected_head,
            method.as_str(),
        )
        .map(|()| answer(forge.update_branch(snap, expected_head, *method))),
        Action::EnableAutoMerge { method, .. } => match writes.armed.take() {
            Some(armed) => Ok(armed),
            None => intend(writes, env, IntentKind::Arm, head, method.as_str())
                .map(|()| answer(forge.enable_auto_merge(snap, *method))),
        },
        Action::DisableAutoMerge => intend(writes, env, IntentKind::Disarm, head, "")
            .map(|()| answer(forge.disable_auto_merge(snap))),
        Action::Merge { sha, method } => {
            intend(writes, env, IntentKind::Merge, sha, method.as_str())
                .map(|()| answer(forge.merge(&snap.pr, sha, *method)))
        }
    };
    asked.unwrap_or_else(Outcome::NotAsked)
}

/// A forge's answer to a write, as the rules read it.
pub(super) fn answer(result: Result<(), ForgeError>) -> Outcome {
    match result {
        Ok(()) => Outcome::Done,
        Err(e) => Outcome::Failed(failure(&e)),
    }
}

fn failure(e: &ForgeError) -> Failure {
    let kind = match e {
        ForgeError::MergeConflict(found) => FailureKind::Conflict(found.clone()),
        ForgeError::AutoMergeRefused(refusal) => FailureKind::AutoMergeRefused(refusal.clone()),
        ForgeError::Transient(_) | ForgeError::Unreachable(_) | ForgeError::RateLimited { .. } => {
            FailureKind::Unknown
        }
        _ => FailureKind::Refused,
    };
    Failure {
        said: e.to_string(),
        kind,
    }
}

/// Queues messages for the outbox; one that could not be written leaves the tick incomplete.
fn queue(out: &mut Applied, now: Instant, messages: serde_json::Result<Vec<OutboxMessage>>) {
    match messages {
        Ok(messages) => out.outbox.extend(messages),
        Err(e) => {
            let why = format!("a message could not be written: {e}");
            out.history.push(HistoryEntry {
                at: now,
                what: why.clone(),
                why: None,
            });
            out.error = Some(why);
        }
    }
}

/// Records the intent of a write before it is made; why not, when it could not be recorded
/// (then the write is not made).
fn intend(
    writes: &mut Writes<'_>,
    env: &Env<'_>,
    kind: IntentKind,
    head: &Sha,
    detail: &str,
) -> Result<(), String> {
    writes
        .intents
        .record_intent(env.watch_id, kind, head, detail, env.now)
        .map_err(|e| not_recorded(kind, head, &e))
}

/// Why a write was not asked: its intent could not be recorded first.
pub(super) fn not_recorded(kind: IntentKind, head: &Sha, e: &anyhow::Error) -> String {
    format!(
        "{} on {} not asked: its intent could not be recorded first ({e:#})",
        kind.as_str(),
        head.short()
    )
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
    let payload = report::notice_payload(notice, snap, status.pills);
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

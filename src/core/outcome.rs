//! PURE: what each answer to a plan's action does to the PR's state. The shell records the
//! action's intent, asks the forge, and hands the answer here as an [`Outcome`]; the
//! [`Effects`] say what the history notes, what the owner is told, whether the tick is left
//! incomplete, and which write follows (an auto-merge refused because nothing is left to wait
//! for is followed by the merge itself).

use crate::model::outcome::{Failure, FailureKind, Outcome, Refusal};
use crate::model::plan::{Action, Notice, Plan};
use crate::model::policy::Policy;
use crate::model::watch::{MergeVia, Pills, WatchStatus};
use crate::model::{MergeMethod, PrState, Sha, Snapshot};

/// What one answer adds to the tick besides the PR's state.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Effects {
    /// Lines for the PR's history, in order.
    pub notes: Vec<String>,
    /// Notices for the owner.
    pub notices: Vec<Notice>,
    /// Why the tick is incomplete (exit 1, retried next tick), when it is.
    pub incomplete: Option<String>,
    /// The PR merged.
    pub merged: bool,
    /// The write to make next, with its own answer applied in turn.
    pub then: Option<Action>,
}

impl Effects {
    fn note(&mut self, what: String) {
        self.notes.push(what);
    }

    /// Notes a failed write; one whose outcome is unknown leaves the tick incomplete.
    fn failed(&mut self, what: String, failure: &Failure) {
        self.note(what);
        if failure.kind == FailureKind::Unknown {
            self.incomplete = Some(failure.said.clone());
        }
    }
}

/// Applies the answer `outcome` to `action` on `status` (the PR `snap`, under `policy`).
pub(crate) fn apply(
    status: &mut WatchStatus,
    action: &Action,
    outcome: Outcome,
    snap: &Snapshot,
    policy: &Policy,
) -> Effects {
    let mut fx = Effects::default();
    match outcome {
        Outcome::Done => done(action, &mut fx),
        Outcome::NotAsked(why) => {
            not_asked(status, action);
            fx.note(why.clone());
            fx.incomplete = Some(why);
        }
        Outcome::Failed(failure) => failed(status, action, &failure, snap, policy, &mut fx),
        Outcome::RunsFailed(runs) => {
            for (run, failure) in runs {
                let what = format!("re-run of workflow run {run} failed: {}", failure.said);
                fx.note(what);
            }
        }
    }
    fx
}

fn done(action: &Action, fx: &mut Effects) {
    match action {
        Action::Notify(n) => fx.notices.push(n.clone()),
        Action::UpdateBranch { method, .. } => {
            fx.note(format!("branch update requested ({method})"));
        }
        Action::EnableAutoMerge { method, .. } => {
            fx.note(format!("auto-merge enabled ({})", method.as_str()));
        }
        Action::Merge { sha, method } => {
            fx.merged = true;
            fx.note(format!("merged {} ({})", sha.short(), method.as_str()));
        }
        Action::SendToAgent(_) | Action::RerunFailed { .. } | Action::DisableAutoMerge => {}
    }
}

/// A write that was not asked is asked again next tick: what it claimed is let go.
fn not_asked(status: &mut WatchStatus, action: &Action) {
    let memory = &mut status.memory;
    match action {
        Action::RerunFailed { guards, .. } => memory.infra_reruns.retain(|g| !guards.contains(g)),
        Action::UpdateBranch { .. } => memory.update_requested_for = None,
        Action::EnableAutoMerge { .. } | Action::Merge { .. } => {
            memory.merge_attempted_for = None;
        }
        Action::Notify(_) | Action::SendToAgent(_) | Action::DisableAutoMerge => {}
    }
}

fn failed(
    status: &mut WatchStatus,
    action: &Action,
    failure: &Failure,
    snap: &Snapshot,
    policy: &Policy,
    fx: &mut Effects,
) {
    let said = &failure.said;
    match (action, &failure.kind) {
        (
            Action::UpdateBranch {
                expected_head,
                on_conflict,
                ..
            },
            FailureKind::Conflict(found),
        ) => {
            // A conflict from here on (see `Condition::conflict`): it follows the conflict
            // policy, at once when the decision readied its message, else at the next decision.
            status.memory.update_failed_for = Some(expected_head.clone());
            status.pills.cnf = true;
            status.memory.holds_update_turn = false;
            fx.note(format!(
                "cnf lit: the branch update found a conflict ({found})"
            ));
            fx.notices.push(Notice::Conflict {
                base: snap.base_ref.clone(),
                found: Some(found.clone()),
            });
            if let Some(handoff) = on_conflict {
                status.memory.conflict_sent_for = Some(expected_head.clone());
                status.memory.agent_message_sent(handoff.at);
                fx.note(format!(
                    "sent the conflict with {} to {}",
                    snap.base_ref, handoff.request.agent
                ));
                fx.then = Some(Action::SendToAgent(handoff.request.clone()));
            }
        }
        (Action::UpdateBranch { .. }, _) => {
            status.memory.update_requested_for = None;
            fx.failed(format!("branch update not done: {said}"), failure);
        }
        (
            Action::EnableAutoMerge {
                method,
                merge_if_clean,
            },
            FailureKind::AutoMergeRefused(refusal),
        ) => auto_merge_refused(
            status,
            (*method, merge_if_clean.as_ref()),
            refusal,
            (snap, policy),
            fx,
        ),
        (Action::EnableAutoMerge { .. }, _) => {
            status.memory.merge_attempted_for = None;
            fx.failed(format!("enabling auto-merge failed: {said}"), failure);
        }
        (Action::DisableAutoMerge, _) => {
            fx.failed(format!("could not disable auto-merge: {said}"), failure);
        }
        // A merge whose outcome is unknown is never retried blind: the next tick re-reads the
        // PR first (a 500 can merge and still report failure).
        (Action::Merge { .. }, FailureKind::Unknown) => {
            status.memory.merge_attempted_for = None;
            fx.failed(
                format!("merge outcome unknown ({said}); the PR is re-read before any retry"),
                failure,
            );
        }
        (Action::Merge { .. }, _) => fx.note(format!("merge refused: {said}")),
        (Action::RerunFailed { .. }, _) => fx.note(format!("re-run failed: {said}")),
        (Action::Notify(_) | Action::SendToAgent(_), _) => {
            fx.failed(format!("a message could not be written: {said}"), failure);
        }
    }
}

/// The forge refused to enable auto-merge: where it has none, or the PR is already clean, the
/// merge falls to pr-monitor for this head (merging now when the head was confirmed ready);
/// otherwise it is asked again next tick.
fn auto_merge_refused(
    status: &mut WatchStatus,
    (method, merge_if_clean): (MergeMethod, Option<&Sha>),
    refusal: &Refusal,
    (snap, policy): (&Snapshot, &Policy),
    fx: &mut Effects,
) {
    let unavailable = matches!(refusal, Refusal::Unavailable(_));
    let merge_directly = unavailable || matches!(refusal, Refusal::AlreadyClean(_));
    if unavailable {
        status.merge.choose(MergeVia::SelfMerge);
    }
    if merge_directly {
        // Not asked again for this head: the merge falls to pr-monitor, as the job's
        // self_merge says.
        status.memory.arm_refused = Some(crate::core::decide::merge::arm_refused(
            snap,
            method,
            !unavailable,
        ));
    }
    fx.note(refusal_note(
        refusal,
        policy.self_merge,
        merge_if_clean.is_some(),
    ));
    match merge_if_clean {
        Some(sha) if merge_directly => {
            fx.then = Some(Action::Merge {
                sha: sha.clone(),
                method,
            });
        }
        // Not ready yet: try again next tick rather than merging blind.
        _ => status.memory.merge_attempted_for = None,
    }
}

/// Each auto-merge refusal for what it means: nothing left to wait for, or no auto-merge on
/// this repo or branch at all (then pr-monitor merges itself, when the job lets it).
fn refusal_note(refusal: &Refusal, self_merge: bool, head_confirmed: bool) -> String {
    let msg = refusal.message();
    match refusal {
        Refusal::Unavailable(_) if self_merge => {
            format!("auto-merge is not available here, so pr-monitor merges itself ({msg})")
        }
        Refusal::Unavailable(_) => format!(
            "auto-merge is not available here, and the job's self_merge is off: pr-monitor never merges it ({msg})"
        ),
        Refusal::AlreadyClean(_) if head_confirmed => {
            "already clean: nothing to wait for, merging directly".to_owned()
        }
        Refusal::AlreadyClean(_) => {
            "already clean: the merge waits for the next tick's confirmed head".to_owned()
        }
        Refusal::Other(_) => format!("the forge refused auto-merge: {msg}"),
    }
}

/// The tick that merged records it at once: merged, disarmed (how it merged is kept for
/// history), no pill lit, no next tick.
pub(crate) fn record_merged(plan: &mut Plan) {
    plan.status.state = PrState::Merged;
    plan.status.merge = plan.status.merge.merged();
    plan.status.pills = Pills::default();
    plan.status.memory.update_requested_for = None;
    plan.status.memory.holds_update_turn = false;
    plan.next_tick_at = None;
}

#[cfg(test)]
mod tests;

//! Reconciling recorded intents ([`crate::model::intent`]) with a fresh read, before the rules run:
//! a branch update is recognised as pr-monitor's own by the head it produced: the token's user
//! made it ([`crate::model::viewer::Committer`]: its login on GitHub, its name and email on GitLab),
//! and it comes from the recorded head — as its child for a merge update; for a rebase, which
//! rewrites every commit and leaves no link to the old head, by a commit time no earlier than
//! the intent (less [`CLOCK_SKEW_SECS`]). Only a recorded intent makes a new head
//! pr-monitor's: a push on top of its update, made before a tick saw it, is someone else's. A
//! recorded re-run spends its once-per-job-per-head guards whatever became of the answer, and
//! a recorded arm of auto-merge is remembered as pr-monitor's when the forge shows it on.
//! Each intent is resolved by the first read that can tell; a branch update the forge has not
//! shown yet stays open, however long the forge takes, until the head moves (the move it
//! explains, or someone else's) or the PR merges or closes. Past [`UPDATE_SHOWS_WITHIN_SECS`]
//! such an update no longer has a kept read read again ([`wants_fresh_read`]): its head shows
//! in the summary when it comes.

use crate::core::decide::{Context, Draft};
use crate::model::UpdateMethod;
use crate::model::intent::{Intent, IntentKind};
use crate::model::viewer::Committer;
use crate::model::watch::WatchStatus;
use crate::model::{PrState, Snapshot};

/// How long a recorded branch update usually takes to show on the forge: until then its PR is
/// read in full at every tick; after it, the update is still pr-monitor's whenever it shows.
pub(crate) const UPDATE_SHOWS_WITHIN_SECS: i64 = 600;

/// How far the forge's clock may lag pr-monitor's when it stamps a rebase it made.
pub(crate) const CLOCK_SKEW_SECS: i64 = 300;

/// Folds the open intents into the draft; the ones this read settles are marked resolved.
pub(super) fn reconcile(d: &mut Draft, snap: &Snapshot, ctx: &Context<'_>) {
    for intent in ctx.intents {
        let settled = match intent.kind {
            IntentKind::UpdateBranch => update(d, snap, ctx, intent),
            IntentKind::Rerun => {
                rerun(d, intent);
                true
            }
            IntentKind::Merge => {
                merge(d, snap, intent);
                true
            }
            // A turn-off whose answer was lost and that the forge does not show: the auto-merge
            // still on is pr-monitor's, to be turned off again while the PR is disarmed.
            IntentKind::Arm | IntentKind::Disarm => {
                if snap.auto_merge_enabled {
                    d.status.memory.auto_merge_enabled_once = true;
                }
                true
            }
        };
        if settled {
            d.resolved_intents.push(intent.id);
        }
    }
}

/// Whether `snap`'s head is the branch update `intent` asked for, made for the token's user
/// (`owner`): a merge update's head has the recorded head as a parent; a rebase rewrites every
/// commit, so its head is recognised by who committed it and when (not before the intent).
pub(crate) fn own_update(snap: &Snapshot, intent: &Intent, owner: &Committer) -> bool {
    let rebased_since = intent.detail == UpdateMethod::Rebase.as_str()
        && snap
            .head
            .committed_at
            .is_some_and(|at| (intent.created_at - at).num_seconds() <= CLOCK_SKEW_SECS);
    let from_recorded_head = snap.head.parents.contains(&intent.head) || rebased_since;
    intent.kind == IntentKind::UpdateBranch
        && snap.head.sha != intent.head
        && owner.made(&snap.head)
        && from_recorded_head
}

/// Whether open `intents` ask that a PR decided on a kept read be read afresh: any of them
/// but a branch update older than [`UPDATE_SHOWS_WITHIN_SECS`] (a kept read means an unchanged
/// summary, so its head has not moved yet, and a fresh read would tell nothing more).
pub(crate) fn wants_fresh_read(intents: &[Intent], now: crate::model::Instant) -> bool {
    intents.iter().any(|i| {
        i.kind != IntentKind::UpdateBranch
            || (now - i.created_at).num_seconds() < UPDATE_SHOWS_WITHIN_SECS
    })
}

/// Whether the branch update of the PR's head failed on the forge, which rebases in the
/// background and says so afterwards (GitLab's `merge_error`): remembered from an earlier
/// read, or told now while pr-monitor's update of this head is recorded. Such a head conflicts
/// with its base until it moves.
pub(crate) fn update_failed(before: &WatchStatus, snap: &Snapshot, intents: &[Intent]) -> bool {
    let told_now = !snap.update_in_progress
        && snap.update_error.is_some()
        && intents
            .iter()
            .any(|i| i.kind == IntentKind::UpdateBranch && i.head == snap.head.sha);
    told_now || before.memory.update_failed_for.as_ref() == Some(&snap.head.sha)
}

fn update(d: &mut Draft, snap: &Snapshot, ctx: &Context<'_>, intent: &Intent) -> bool {
    if snap.head.sha == intent.head {
        if let Some(why) = snap
            .update_error
            .as_ref()
            .filter(|_| !snap.update_in_progress)
        {
            d.status.memory.update_failed_for = Some(intent.head.clone());
            d.note(
                format!(
                    "the branch update of {} failed on the forge: {why}",
                    intent.head.short()
                ),
                None,
            );
            return true;
        }
        // Not shown yet (the forge updates in the background, sometimes for long), or never
        // made: open until the head moves, however late.
        return snap.state != PrState::Open;
    }
    if own_update(snap, intent, ctx.commits_as) {
        d.own_update = true;
        if d.status.memory.update_requested_for.as_ref() != Some(&intent.head) {
            d.note(
                format!(
                    "head {} is pr-monitor's own update of {} (recorded before the call; its answer was lost)",
                    snap.head.sha.short(),
                    intent.head.short()
                ),
                None,
            );
        }
    }
    true
}

fn rerun(d: &mut Draft, intent: &Intent) {
    let memory = &mut d.status.memory;
    let mut spent = false;
    for guard in intent.guards() {
        if !memory.infra_reruns.iter().any(|g| g == guard) {
            memory.infra_reruns.push(guard.to_owned());
            spent = true;
        }
    }
    if spent {
        memory.last_rerun_at = Some(
            memory
                .last_rerun_at
                .map_or(intent.created_at, |t| t.max(intent.created_at)),
        );
        d.note(
            format!(
                "the re-run on {} recorded before the call counts as done (its outcome was not recorded)",
                intent.head.short()
            ),
            None,
        );
    }
}

fn merge(d: &mut Draft, snap: &Snapshot, intent: &Intent) {
    let known = d.status.memory.merge_attempted_for.as_ref() == Some(&intent.head);
    if snap.state == PrState::Open && snap.head.sha == intent.head && !known {
        d.note(
            format!(
                "the merge of {} asked before did not happen: the forge shows the PR open",
                intent.head.short()
            ),
            None,
        );
    }
}

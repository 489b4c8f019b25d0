//! Reconciling recorded intents ([`crate::model::intent`]) with a fresh read, before the rules run:
//! a branch update is recognised as pr-monitor's own by the head it produced (its parent is
//! the recorded head, and the token's login made it — or, for a rebase, made it at all), a
//! recorded re-run spends its once-per-job-per-head guards whatever became of the answer, and
//! a recorded arm of auto-merge is remembered as pr-monitor's when the forge shows it on.
//! Each intent is resolved by the first read that can tell; a branch update the forge has not
//! shown yet stays open for [`UPDATE_SHOWS_WITHIN_SECS`].

use crate::core::decide::{Context, Draft};
use crate::forge::UpdateMethod;
use crate::model::intent::{Intent, IntentKind};
use crate::model::{Login, PrState, Snapshot};

/// How long a recorded branch update may take to show on the forge before it is given up.
pub const UPDATE_SHOWS_WITHIN_SECS: i64 = 600;

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
            IntentKind::Arm => {
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

/// Whether `snap`'s head is the branch update `intent` asked for, made for the token's login
/// `owner`: a merge update's head has the recorded head as a parent; a rebase rewrites every
/// commit, so its head is recognised by who committed it.
pub fn own_update(snap: &Snapshot, intent: &Intent, owner: &str) -> bool {
    let owner_made_it = !owner.is_empty()
        && [&snap.head.author_login, &snap.head.committer_login]
            .into_iter()
            .any(|l| l.as_deref().is_some_and(|l| Login::new(l).is(owner)));
    let from_recorded_head =
        snap.head.parents.contains(&intent.head) || intent.detail == UpdateMethod::Rebase.as_str();
    intent.kind == IntentKind::UpdateBranch
        && snap.head.sha != intent.head
        && owner_made_it
        && from_recorded_head
}

fn update(d: &mut Draft, snap: &Snapshot, ctx: &Context<'_>, intent: &Intent) -> bool {
    if snap.head.sha == intent.head {
        // Not shown yet (the forge updates in the background), or never made.
        let waited = (ctx.now - intent.created_at).num_seconds();
        return snap.state != PrState::Open || waited >= UPDATE_SHOWS_WITHIN_SECS;
    }
    if own_update(snap, intent, ctx.owner) {
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

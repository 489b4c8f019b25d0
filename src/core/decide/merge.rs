//! Reconcile merge (merge when ready): while armed, re-arm the
//! forge's auto-merge every tick it is off (not while the PR conflicts with its base: then
//! once the conflict clears), or merge once itself where the forge cannot; update a
//! behind branch when it is this PR's turn; disarm on a foreign push or a base change.
//! Never approves, never merges what the owner did not arm.

use crate::core::checks::Verdict;
use crate::core::decide::{Action, Condition, Context, Draft};
use crate::model::plan::{Disarm, Notice};
use crate::model::policy::UpdateBranch;
use crate::model::watch::Merge;
use crate::model::watch::{ArmRefusal, MergeVia, Watch};
use crate::model::{Login, MergeMethod, MergeState, Mergeable, PrState, ReviewState, Snapshot};

/// The method to merge with: the configured one when the repo allows it, else the first the
/// repo allows of squash, merge, rebase.
pub(crate) fn method(
    preferred: Option<MergeMethod>,
    allowed: &[MergeMethod],
) -> Option<MergeMethod> {
    preferred.filter(|m| allowed.contains(m)).or_else(|| {
        MergeMethod::PREFERENCE
            .into_iter()
            .find(|m| allowed.contains(m))
    })
}

/// Why an armed merge cannot apply to this PR at all, if it cannot.
pub(crate) fn arming_refusal(snap: &Snapshot, allow_non_default_base: bool) -> Option<String> {
    (!allow_non_default_base && !snap.repo.default_branch.is_empty() && snap.base_ref != snap.repo.default_branch).then(|| {
        format!(
            "its base `{}` is not the default branch `{}` (a job may set allow_non_default_base)",
            snap.base_ref, snap.repo.default_branch
        )
    })
}

/// The settings a refusal to arm is remembered under: the base, whether the repository allows
/// auto-merge, and the method asked for. A change to any of them asks the forge again.
fn arm_settings(snap: &Snapshot, method: MergeMethod) -> String {
    format!(
        "base {} auto-merge {} method {}",
        snap.base_ref,
        if snap.repo.auto_merge_allowed {
            "allowed"
        } else {
            "not allowed"
        },
        method.as_str()
    )
}

/// The forge's refusal to arm this head with `method`, to remember: `clean` when it said
/// there is nothing to wait for.
pub(crate) fn arm_refused(snap: &Snapshot, method: MergeMethod, clean: bool) -> ArmRefusal {
    ArmRefusal {
        head: snap.head.sha.clone(),
        settings: arm_settings(snap, method),
        clean,
    }
}

/// Whether a remembered refusal still answers for this snapshot: the same head and settings,
/// and, for "nothing to wait for", nothing blocking the PR since.
fn refusal_stands(r: &ArmRefusal, snap: &Snapshot, method: MergeMethod) -> bool {
    let blocked = matches!(
        snap.merge_state,
        MergeState::Blocked | MergeState::Behind | MergeState::Dirty | MergeState::Draft
    );
    r.head == snap.head.sha && r.settings == arm_settings(snap, method) && !(r.clean && blocked)
}

/// Why the owner's `merge --now` cannot merge this PR, if it cannot: a queued base merges
/// only through its queue, and a draft, a conflicting or a closed PR not at all.
pub(crate) fn merge_now_refusal(snap: &Snapshot) -> Option<String> {
    if snap.merge_queue {
        return Some(format!(
            "merges into `{}` only through the {}; use merge --when-ready",
            snap.base_ref,
            snap.pr.forge.queue_noun()
        ));
    }
    if snap.draft {
        return Some("is a draft".to_owned());
    }
    if snap.has_conflict() {
        return Some(format!("conflicts with {}", snap.base_ref));
    }
    (snap.state != PrState::Open).then(|| format!("is {}", snap.state.as_str()))
}

/// What readiness asks for beyond what the forge says: labels, and approvals from logins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Criteria {
    pub required_labels: Vec<String>,
    pub required_approvals_from: Vec<String>,
}

impl Criteria {
    pub(crate) fn of(policy: &crate::model::policy::Policy) -> Self {
        Criteria {
            required_labels: policy.required_labels.clone(),
            required_approvals_from: policy.required_approvals_from.clone(),
        }
    }
}

/// Whether a PR may be merged now, and which criteria it misses. The one rule of "ready":
/// the tick merges by it and `check` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Readiness {
    pub ready: bool,
    pub missing_labels: Vec<String>,
    pub missing_approvals_from: Vec<String>,
}

/// Ready: the PR's own checks and reviews are green (see [`own_readiness`]) and the forge's
/// merge state says mergeable now: not blocked, behind, dirty or a draft.
pub(crate) fn readiness(snap: &Snapshot, verdict: &Verdict, criteria: &Criteria) -> Readiness {
    let mut r = own_readiness(snap, verdict, criteria);
    let blocked = matches!(
        snap.merge_state,
        MergeState::Blocked | MergeState::Behind | MergeState::Dirty | MergeState::Draft
    );
    r.ready = r.ready && !blocked && snap.mergeable == Mergeable::Mergeable;
    r
}

/// The PR's own side of ready: checks green on this head (or none, past the grace period), no
/// conflict, not a draft, no changes requested, and the criteria met. On a queued base this is
/// when it joins the line (the forge then tests it on top of what is ahead).
pub(crate) fn own_readiness(snap: &Snapshot, verdict: &Verdict, criteria: &Criteria) -> Readiness {
    let green = matches!(verdict, Verdict::Passed | Verdict::NoChecks);
    let changes_requested = effective_decision(snap) == Some(ReviewState::ChangesRequested);
    let missing_labels: Vec<String> = criteria
        .required_labels
        .iter()
        .filter(|l| !crate::model::has_label(&snap.labels, l))
        .cloned()
        .collect();
    let missing_approvals_from: Vec<String> = criteria
        .required_approvals_from
        .iter()
        .filter(|who| {
            let who = Login::new(who.as_str());
            !snap.reviews.iter().any(|r| {
                r.state == ReviewState::Approved && r.author.as_deref().is_some_and(|a| who.is(a))
            })
        })
        .cloned()
        .collect();
    let ready = green
        && !snap.draft
        && !snap.has_conflict()
        && !changes_requested
        && missing_labels.is_empty()
        && missing_approvals_from.is_empty();
    Readiness {
        ready,
        missing_labels,
        missing_approvals_from,
    }
}

/// Latest review per reviewer; a later APPROVED supersedes an earlier CHANGES_REQUESTED;
/// COMMENTED does not override.
pub(crate) fn effective_decision(snap: &Snapshot) -> Option<ReviewState> {
    let mut latest: std::collections::BTreeMap<&str, (Option<crate::model::Instant>, ReviewState)> =
        std::collections::BTreeMap::new();
    for r in &snap.reviews {
        if !matches!(
            r.state,
            ReviewState::Approved | ReviewState::ChangesRequested | ReviewState::Dismissed
        ) {
            continue;
        }
        let who = r.author.as_deref().unwrap_or("");
        let at = r.submitted_at;
        if latest.get(who).is_none_or(|(t, _)| at >= *t) {
            latest.insert(who, (at, r.state));
        }
    }
    let states: Vec<ReviewState> = latest.into_values().map(|(_, s)| s).collect();
    if states.contains(&ReviewState::ChangesRequested) {
        Some(ReviewState::ChangesRequested)
    } else if states.contains(&ReviewState::Approved) {
        Some(ReviewState::Approved)
    } else {
        None
    }
}

fn disarm(d: &mut Draft, snap: &Snapshot, reason: &str) {
    d.status.merge = Merge::Disarmed;
    d.status.memory.update_requested_for = None;
    d.status.memory.holds_update_turn = false;
    d.status.memory.arm_refused = None;
    super::queue::forget(d);
    if snap.auto_merge_enabled && d.status.memory.auto_merge_enabled_once {
        d.actions.push(Action::DisableAutoMerge);
    }
    d.note(format!("merge disarmed: {reason}"), None);
    d.notify(Notice::Disarmed {
        reason: Disarm::Because(reason.to_owned()),
    });
}

/// Disarmed, the PR may still show the auto-merge pr-monitor turned on (the call that turns it
/// off failed): it is asked again, every tick, until the forge shows it off; then it is no
/// longer pr-monitor's (an auto-merge someone turns on later is theirs).
fn turn_off_own_auto_merge(d: &mut Draft, snap: &Snapshot) {
    if !snap.auto_merge_enabled {
        d.status.memory.auto_merge_enabled_once = false;
    } else if d.status.memory.auto_merge_enabled_once {
        d.actions.push(Action::DisableAutoMerge);
        d.note(
            "auto-merge pr-monitor turned on is still on: asking again to turn it off",
            None,
        );
    }
}

/// A PR that merged or closed: the watch ends; an armed merge is finished or disarmed.
pub(super) fn finish(d: &mut Draft, watch: &Watch, snap: &Snapshot) {
    match snap.state {
        PrState::Merged => {
            // Merged is the end of an armed merge: disarmed, how it merged kept for history.
            d.status.merge = d.status.merge.merged();
            if watch.status.state != PrState::Merged {
                let done = crate::core::done::record(snap, d.status.memory.agent_messages_sent);
                d.note(crate::core::done::line(&done), None);
                d.notify(Notice::Merged { done });
            }
        }
        PrState::Closed if watch.status.merge.is_armed() => {
            d.status.merge = Merge::Disarmed;
            d.note("merge disarmed: the PR closed", None);
            d.notify(Notice::Disarmed {
                reason: Disarm::Closed,
            });
        }
        _ => {}
    }
    d.status.memory.update_requested_for = None;
    d.status.memory.holds_update_turn = false;
}

/// While armed: keep the arming (or disarm on a foreign push or a base that refuses it), choose
/// how the merge happens, ask for it, and update a behind branch on this PR's turn.
pub(super) fn reconcile(
    d: &mut Draft,
    watch: &Watch,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
) {
    d.status.memory.behind = cond.behind;
    if !d.status.merge.is_armed() {
        turn_off_own_auto_merge(d, snap);
        super::queue::forget(d);
        update_branch(d, snap, cond, ctx, false);
        return;
    }
    if !stays_armed(d, watch, snap, cond, ctx) {
        return;
    }
    if cond.new_head {
        d.status.memory.update_requested_for = None;
    }
    let Some(method) = method(ctx.policy.merge_method, &snap.repo.allowed_methods) else {
        d.note("cannot merge: the repository allows no merge method", None);
        return;
    };
    if snap.merge_queue {
        queued(d, watch, snap, cond, ctx, method);
        return;
    }
    let via = choose_via(d, snap, method);
    ask_to_merge(d, watch, snap, cond, ctx, (via, method));
    update_branch(d, snap, cond, ctx, true);
}

/// Whether an armed PR stays armed: it is disarmed when the arming cannot apply to it (its
/// base) or when someone else pushed a new head. pr-monitor's own branch update (told by its
/// recorded intent, see `intents`) and the agent's commits never disarm.
fn stays_armed(
    d: &mut Draft,
    watch: &Watch,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
) -> bool {
    if let Some(reason) = arming_refusal(snap, ctx.policy.allow_non_default_base) {
        disarm(d, snap, &format!("not armed: {reason}"));
        return false;
    }
    if cond.new_head && watch.status.head_sha.is_some() && !d.own_update && !cond.agent_commit {
        let by = snap.head.author_login.as_deref().unwrap_or("someone else");
        disarm(
            d,
            snap,
            &format!("{by} pushed a new head {}", snap.head.sha.short()),
        );
        return false;
    }
    true
}

/// How the merge happens: the forge's auto-merge where the repository allows it and it was
/// not refused for this head, else pr-monitor merging itself. A refusal to arm this head is not
/// asked again: the merge falls to pr-monitor (as the job's self_merge says) until the head or
/// the settings change. A change of way is noted.
fn choose_via(d: &mut Draft, snap: &Snapshot, method: MergeMethod) -> MergeVia {
    let refused = d
        .status
        .memory
        .arm_refused
        .as_ref()
        .is_some_and(|r| refusal_stands(r, snap, method));
    if !refused {
        d.status.memory.arm_refused = None;
    }
    let via = if snap.repo.auto_merge_allowed && !refused {
        MergeVia::AutoMerge
    } else {
        MergeVia::SelfMerge
    };
    if d.status.merge.via() != Some(via) {
        d.note(
            format!("merge via {} ({})", via.as_str(), method.as_str()),
            None,
        );
        d.status.merge.choose(via);
    }
    via
}

/// Asks for the merge the chosen way: (re-)enables the forge's auto-merge while it is off
/// (not while the PR conflicts), or merges a ready head once itself where the job allows it.
fn ask_to_merge(
    d: &mut Draft,
    watch: &Watch,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
    (via, method): (MergeVia, MergeMethod),
) {
    let is_ready = readiness(snap, &cond.verdict, &Criteria::of(ctx.policy)).ready;
    let untried = d.status.memory.merge_attempted_for.as_ref() != Some(&snap.head.sha);
    match via {
        MergeVia::AutoMerge if !snap.auto_merge_enabled && !snap.draft && cond.conflict => {
            // A conflicted PR cannot merge: asking again every tick only repeats a refusal.
            if !watch.status.pills.cnf {
                d.note(
                    "auto-merge is asked for again once the conflict clears",
                    None,
                );
            }
        }
        MergeVia::AutoMerge if !snap.auto_merge_enabled && !snap.draft => {
            if d.status.memory.auto_merge_enabled_once {
                d.note("auto-merge was found disabled; enabling it again", None);
            }
            d.status.memory.auto_merge_enabled_once = true;
            // A direct merge of a clean head is pr-monitor merging itself.
            let merge_if_clean =
                (is_ready && untried && ctx.policy.self_merge).then(|| snap.head.sha.clone());
            if merge_if_clean.is_some() {
                d.status.memory.merge_attempted_for = Some(snap.head.sha.clone());
            }
            d.actions.push(Action::EnableAutoMerge {
                method,
                merge_if_clean,
            });
        }
        MergeVia::AutoMerge => {}
        MergeVia::SelfMerge if !ctx.policy.self_merge => {
            // The job keeps the forge's auto-merge as the only way in: said once per head.
            if is_ready && untried {
                d.status.memory.merge_attempted_for = Some(snap.head.sha.clone());
                d.note(
                    "ready, not merging: the forge will not arm its auto-merge here and the job's self_merge is off",
                    None,
                );
            }
        }
        MergeVia::SelfMerge => {
            if is_ready && untried {
                d.status.memory.merge_attempted_for = Some(snap.head.sha.clone());
                d.actions.push(Action::Merge {
                    sha: snap.head.sha.clone(),
                    method,
                });
                d.note(
                    format!("merging {} ({})", snap.head.sha.short(), method.as_str()),
                    None,
                );
            }
        }
    }
}

/// On a queued base the forge merges, in line: pr-monitor puts the head in line once its own
/// checks and reviews are green (auto-merge, which joins the queue or train), never merges
/// directly, never jumps, never updates the branch (the queue tests it on top of its base), and
/// never queues again a head the queue let go.
fn queued(
    d: &mut Draft,
    watch: &Watch,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
    method: MergeMethod,
) {
    if d.status.merge.via() != Some(MergeVia::AutoMerge) {
        d.note(
            format!(
                "merge via the {} ({})",
                snap.pr.forge.queue_noun(),
                method.as_str()
            ),
            None,
        );
        d.status.merge.choose(MergeVia::AutoMerge);
    }
    let may_enqueue = super::queue::track(d, watch, snap, cond, ctx);
    if may_enqueue
        && !snap.auto_merge_enabled
        && own_readiness(snap, &cond.verdict, &Criteria::of(ctx.policy)).ready
    {
        d.status.memory.auto_merge_enabled_once = true;
        d.actions.push(Action::EnableAutoMerge {
            method,
            merge_if_clean: None,
        });
        d.note(
            format!(
                "putting {} in the {}",
                snap.head.sha.short(),
                snap.pr.forge.queue_noun()
            ),
            None,
        );
    }
}

/// Clean but stale: update a behind branch, per the policy, when it is this PR's turn.
fn update_branch(d: &mut Draft, snap: &Snapshot, cond: &Condition, ctx: &Context<'_>, armed: bool) {
    let wanted = match ctx.policy.update_branch {
        UpdateBranch::Never => false,
        UpdateBranch::Armed => armed && ctx.update_turn,
        UpdateBranch::Always => !armed || ctx.update_turn,
    };
    // A failing freshness check is what the update answers.
    let green_enough = !matches!(cond.verdict, Verdict::Failed { .. }) || cond.only_stale();
    // One writer per branch: no update while a fix is with the agent.
    let fix_out = super::to_agent::fix_out(d);
    if !wanted || !cond.behind || cond.conflict || !green_enough || snap.draft || fix_out {
        return;
    }
    if d.status.memory.update_requested_for.as_ref() == Some(&snap.head.sha) {
        return;
    }
    d.status.memory.update_requested_for = Some(snap.head.sha.clone());
    d.status.memory.holds_update_turn = armed;
    // GitLab's only branch update is a rebase (`PUT …/rebase`), whatever the policy says.
    let method = match snap.pr.forge {
        crate::model::ForgeKind::GitLab => crate::model::UpdateMethod::Rebase,
        crate::model::ForgeKind::GitHub => ctx.policy.update_method,
    };
    let on_conflict = super::to_agent::conflict_handoff(d, snap, cond, ctx);
    d.actions.push(Action::UpdateBranch {
        expected_head: snap.head.sha.clone(),
        method,
        on_conflict,
    });
    d.note(
        format!(
            "updating the branch: {} behind {} ({})",
            snap.behind_by
                .map_or("some".into(), |b| format!("{b} commit(s)")),
            snap.base_ref,
            method.as_str()
        ),
        None,
    );
}

//! Merge queues (GitHub) and merge trains (GitLab): following an armed PR through the forge's
//! line. The PR's place is recorded when it enters; when the forge lets it go (a failing
//! merge-group check, a conflict with what is ahead, a timeout), the owner hears once why, and
//! the same head is never queued again; a new head or the owner's `merge --when-ready` lifts
//! that.

use crate::core::decide::{Condition, Context, Draft};
use crate::model::plan::Notice;
use crate::model::watch::Watch;
use crate::model::{ForgeKind, Snapshot};

/// `1st`, `2nd`, `3rd`, `11th`, `22nd`.
pub(crate) fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, r) if r != 11 => "st",
        (2, r) if r != 12 => "nd",
        (3, r) if r != 13 => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// `3rd in the merge train`, or `in the merge train` when the forge did not say the place
/// (position 0).
pub(crate) fn place(position: u32, forge: ForgeKind) -> String {
    if position == 0 {
        format!("in the {}", forge.queue_noun())
    } else {
        format!("{} in the {}", ordinal(position), forge.queue_noun())
    }
}

/// What is ahead in line, as the forge names PRs: `#5, #7` (GitHub), `!5, !7` (GitLab).
pub(crate) fn ahead_words(forge: ForgeKind, numbers: &[u64]) -> String {
    let sigil = match forge {
        ForgeKind::GitHub => '#',
        ForgeKind::GitLab => '!',
    };
    numbers
        .iter()
        .map(|n| format!("{sigil}{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why the forge let the PR go, in words that tell the three apart: the merge group's checks
/// failed (named), they did not finish (a timeout, named), or the PR now conflicts (with what
/// was ahead of it). With none of these the forge gave no sign, and the words say so.
pub(crate) fn exit_reason(snap: &Snapshot) -> String {
    let group = group_noun(snap.pr.forge);
    let failed: Vec<&str> = snap
        .queue_failures
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    if !failed.is_empty() {
        format!("{} failed in {group}", failed.join(", "))
    } else if !snap.queue_unfinished.is_empty() {
        format!(
            "timed out waiting for {} in {group}",
            snap.queue_unfinished.join(", ")
        )
    } else if snap.has_conflict() {
        "a conflict with what was ahead of it".into()
    } else if let Some(unread) = &snap.queue_unread {
        format!("removed by the forge; the checks of {group} could not be read ({unread})")
    } else {
        format!(
            "removed by the forge with no failed check in {group} (a conflict with what is ahead, or a timeout)"
        )
    }
}

/// Records where the armed PR stands in the queue, and its exit (told once). Returns whether
/// pr-monitor may put the head in line now: it is not in line and the queue has not let this
/// head go.
pub(super) fn track(
    d: &mut Draft,
    watch: &Watch,
    snap: &Snapshot,
    cond: &Condition,
    ctx: &Context<'_>,
) -> bool {
    let head = &snap.head.sha;
    if d.status
        .memory
        .queue_left_head
        .as_ref()
        .is_some_and(|h| h != head)
    {
        d.status.memory.queue_left_head = None;
    }
    let was_queued = d.status.memory.queued_head.as_ref() == Some(head);
    match &snap.queue_entry {
        Some(entry) => {
            if !was_queued {
                d.status.memory.queued_head = Some(head.clone());
                let place = if entry.position == 0 {
                    String::new()
                } else {
                    format!(": {} in line", ordinal(entry.position))
                };
                d.note(
                    format!(
                        "entered the {} at {}{place}",
                        snap.pr.forge.queue_noun(),
                        head.short()
                    ),
                    None,
                );
            }
            false
        }
        None if was_queued && wait_for_group(d, watch, snap) => false,
        None if was_queued => {
            left_in_sight(d, snap, cond, ctx);
            false
        }
        None => {
            d.status.memory.queued_head = None;
            if d.status.memory.queue_left_head.as_ref() == Some(head) {
                return false;
            }
            !left_between_looks(d, snap)
        }
    }
}

/// The head a look saw in line is out of it: why (with the failed checks' log tails as
/// evidence), said once; a merge group's failure on the agent's own commit goes to the agent,
/// anything else to the owner. The head is not queued again.
fn left_in_sight(d: &mut Draft, snap: &Snapshot, cond: &Condition, ctx: &Context<'_>) {
    let head = &snap.head.sha;
    d.status.memory.queue_exit_waits = 0;
    d.status.memory.queued_head = None;
    d.status.memory.queue_left_head = Some(head.clone());
    let why = exit_reason(snap);
    let tails: Vec<String> = snap
        .queue_failures
        .iter()
        .filter(|f| !f.log_tail.is_empty())
        .map(|f| {
            format!(
                "{}:\n{}",
                f.name,
                crate::core::text::strip_controls(&f.log_tail)
            )
        })
        .collect();
    let evidence = tails.join("\n");
    d.note(
        format!(
            "left the {}: {why}; {} is not queued again",
            snap.pr.forge.queue_noun(),
            head.short()
        ),
        (!evidence.is_empty()).then_some(evidence.as_str()),
    );
    if super::remediate::merge_group_to_agent(d, snap, cond, ctx, &snap.queue_failures) {
        return;
    }
    d.notify(Notice::LeftQueue {
        forge: snap.pr.forge,
        why,
        head: head.clone(),
        evidence,
    });
}

/// Whether the forge's timeline says the head left the queue between two looks (no look saw
/// it in line since the merge was armed or last asked for): then it is said once, and the
/// head is not queued again.
fn left_between_looks(d: &mut Draft, snap: &Snapshot) -> bool {
    let head = &snap.head.sha;
    let asked = d
        .status
        .merge
        .armed_at()
        .max(d.status.memory.queue_asked_at);
    let seen = (d.status.head_seen_at, asked);
    let Some(removal) = removed_between_looks(snap, seen) else {
        return false;
    };
    d.status.memory.queue_left_head = Some(head.clone());
    let why = removal.reason.as_deref().map_or_else(
        || "removed by the forge".to_owned(),
        |r| format!("removed by the forge ({r})"),
    );
    d.note(
        format!(
            "left the {} between two looks, as its timeline says: {why}; {} is not queued again",
            snap.pr.forge.queue_noun(),
            head.short()
        ),
        None,
    );
    d.notify(Notice::LeftQueue {
        forge: snap.pr.forge,
        why,
        head: head.clone(),
        evidence: String::new(),
    });
    true
}

/// The removal of the current head from the queue that the forge's timeline records since
/// the merge was last armed, when no look saw it in line: one naming the head, or naming none
/// and made after the head was first seen. `seen` is (when the head was first seen, when the
/// merge was armed). The removal written when the queue merges the PR is none.
fn removed_between_looks(
    snap: &Snapshot,
    seen: (Option<crate::model::Instant>, Option<crate::model::Instant>),
) -> Option<&crate::model::QueueRemoval> {
    let (head_seen_at, armed_at) = seen;
    snap.queue_removals.iter().rev().find(|r| {
        let since_arm = r.at.zip(armed_at).is_none_or(|(at, armed)| at >= armed);
        let this_head = match &r.head {
            Some(h) => *h == snap.head.sha,
            None => r.at.zip(head_seen_at).is_some_and(|(at, seen)| at >= seen),
        };
        !r.merged() && since_arm && this_head
    })
}

/// Ticks in a row the exit waits for its merge group's checks the forge did not answer for;
/// then it is told with what is known.
pub(crate) const MAX_QUEUE_EXIT_WAITS: u32 = 3;

/// The PR left the queue but its merge group's checks could not be read: the exit waits for
/// the next tick (still counted as in line, nothing told), and the history says why. Whether
/// it waits. The place last seen is kept, so the next tick knows which group to read.
fn wait_for_group(d: &mut Draft, watch: &Watch, snap: &Snapshot) -> bool {
    let Some(why) = &snap.queue_unread else {
        return false;
    };
    if d.status.memory.queue_exit_waits >= MAX_QUEUE_EXIT_WAITS {
        return false;
    }
    d.status.memory.queue_exit_waits += 1;
    d.status
        .memory
        .picture
        .queue
        .clone_from(&watch.status.memory.picture.queue);
    d.note(
        format!(
            "left the {}: {}'s checks could not be read ({why}); why is told once they are",
            snap.pr.forge.queue_noun(),
            group_noun(snap.pr.forge)
        ),
        None,
    );
    true
}

fn group_noun(forge: ForgeKind) -> &'static str {
    match forge {
        ForgeKind::GitHub => "the merge group",
        ForgeKind::GitLab => "the merge train",
    }
}

/// Forgets the PR's place in line (it is no longer armed).
pub(super) fn forget(d: &mut Draft) {
    d.status.memory.queued_head = None;
    d.status.memory.queue_exit_waits = 0;
}

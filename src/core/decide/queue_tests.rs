//! Decisions on a queued base (merge queue, merge train), table by table.

use super::tests::{Ctx, after, armed, check, failed_log, notices, sent, snap, t0};
use super::*;
use crate::config::NotifyKind;
use crate::model::{CheckState, MergeState, QueueEntry, QueueState, Sha};

fn entry(position: u32, state: QueueState) -> QueueEntry {
    QueueEntry {
        position,
        state,
        estimated_seconds: Some(720),
        enqueued_at: None,
        ahead: Vec::new(),
        group_sha: Some(Sha("group".into())),
    }
}

fn queued_base(sha: &str) -> Snapshot {
    let mut s = snap(sha);
    s.merge_queue = true;
    s
}

fn enqueues(plan: &Plan) -> usize {
    plan.actions
        .iter()
        .filter(|a| matches!(a, Action::EnableAutoMerge { .. }))
        .count()
}

fn merges(plan: &Plan) -> usize {
    plan.actions
        .iter()
        .filter(|a| matches!(a, Action::Merge { .. } | Action::UpdateBranch { .. }))
        .count()
}

#[test]
fn on_a_queued_base_the_head_joins_the_line_only_when_its_own_checks_and_reviews_are_green() {
    let c = Ctx::new();
    // (checks, merge state, auto-merge on, in line) -> joins the line now
    let cases = [
        (CheckState::Passed, MergeState::Clean, false, None, 1),
        (CheckState::Passed, MergeState::Blocked, false, None, 1),
        (CheckState::Pending, MergeState::Blocked, false, None, 0),
        (CheckState::Failed, MergeState::Blocked, false, None, 0),
        (CheckState::Passed, MergeState::Clean, true, None, 0),
        (
            CheckState::Passed,
            MergeState::Clean,
            false,
            Some(entry(3, QueueState::Queued)),
            0,
        ),
    ];
    for (checks, merge_state, auto_on, in_line, want) in cases {
        let mut s = queued_base("a");
        s.checks = vec![check("t", checks)];
        s.merge_state = merge_state.clone();
        s.auto_merge_enabled = auto_on;
        s.queue_entry = in_line.clone();
        let plan = c.decide(&armed("a"), &s);
        assert_eq!(
            enqueues(&plan),
            want,
            "{checks:?} {merge_state:?} {auto_on} {in_line:?}"
        );
        assert_eq!(
            merges(&plan),
            0,
            "never a direct merge or branch update on a queued base"
        );
        assert!(
            plan.actions.iter().all(|a| !matches!(
                a,
                Action::EnableAutoMerge {
                    merge_if_clean: Some(_),
                    ..
                }
            )),
            "never a direct merge after a refused enqueue"
        );
    }
}

#[test]
fn a_pr_the_queue_lets_go_is_told_once_and_its_head_is_not_queued_again() {
    let c = Ctx::new();
    let mut s = queued_base("a");
    s.auto_merge_enabled = true;
    s.queue_entry = Some(entry(2, QueueState::AwaitingChecks));
    let entered = c.decide(&armed("a"), &s);
    assert_eq!(entered.status.memory.queued_head, Some(Sha("a".into())));
    assert!(
        entered
            .history
            .iter()
            .any(|h| h.what.contains("entered the merge queue at a: 2nd in line"))
    );
    assert_eq!(entered.status.memory.picture.queue, s.queue_entry);

    // The forge removes it: merge-group check failed, auto-merge off.
    let mut gone = queued_base("a");
    gone.queue_failures = vec![failed_log("test", "assertion failed: left == right", false)];
    let left = c.decide(&after(&armed("a"), &entered), &gone);
    assert_eq!(
        notices(&left),
        vec![(
            NotifyKind::Merge,
            "left the merge queue: test failed in the merge group".to_owned()
        )]
    );
    assert_eq!(enqueues(&left), 0);
    assert!(left.history.iter().any(|h| {
        h.why
            .as_deref()
            .is_some_and(|w| w.contains("assertion failed"))
    }));

    // Five more ticks on the same head: no enqueue, no second notice.
    let mut w = after(&armed("a"), &left);
    for _ in 0..5 {
        let plan = c.decide(&w, &queued_base("a"));
        assert_eq!(enqueues(&plan), 0);
        assert!(notices(&plan).is_empty());
        w = after(&w, &plan);
    }
    // The agent's fix (a new head) joins the line again.
    let mut fix = queued_base("b");
    fix.head.author_login = Some("fixer-bot".into());
    let plan = c.decide(&w, &fix);
    assert_eq!(enqueues(&plan), 1);
    assert_eq!(plan.status.memory.queue_left_head, None);
}

#[test]
fn leaving_without_a_failed_check_says_so_and_disarming_forgets_the_place() {
    let c = Ctx::new();
    let mut s = queued_base("a");
    s.queue_entry = Some(entry(1, QueueState::Queued));
    let entered = c.decide(&armed("a"), &s);
    let left = c.decide(&after(&armed("a"), &entered), &queued_base("a"));
    assert!(
        notices(&left)[0]
            .1
            .starts_with("left the merge queue: removed by the forge")
    );

    let mut w = after(&armed("a"), &entered);
    w.status.merge = crate::model::watch::Merge::Disarmed;
    let plan = c.decide(&w, &queued_base("a"));
    assert_eq!(plan.status.memory.queued_head, None);
    assert!(notices(&plan).is_empty());
}

#[test]
fn a_failure_a_timeout_and_a_conflict_are_told_apart() {
    let c = Ctx::new();
    let mut s = queued_base("a");
    s.queue_entry = Some(entry(2, QueueState::Queued));
    let entered = c.decide(&armed("a"), &s);
    let leave = |gone: Snapshot| {
        let plan = c.decide(&after(&armed("a"), &entered), &gone);
        notices(&plan)
            .into_iter()
            .map(|n| n.1.clone())
            .find(|n| n.starts_with("left the"))
            .unwrap_or_default()
    };
    let mut failed = queued_base("a");
    failed.queue_failures = vec![failed_log("test", "boom", false)];
    failed.queue_unfinished = vec!["lint".into()];
    assert_eq!(
        leave(failed),
        "left the merge queue: test failed in the merge group"
    );
    let mut timed_out = queued_base("a");
    timed_out.queue_unfinished = vec!["test".into(), "lint".into()];
    assert_eq!(
        leave(timed_out),
        "left the merge queue: timed out waiting for test, lint in the merge group"
    );
    let mut conflict = queued_base("a");
    conflict.mergeable = crate::model::Mergeable::Conflicting;
    conflict.merge_state = MergeState::Dirty;
    assert_eq!(
        leave(conflict),
        "left the merge queue: a conflict with what was ahead of it"
    );
}

#[test]
fn ordinals() {
    let cases = [
        (1, "1st"),
        (2, "2nd"),
        (3, "3rd"),
        (4, "4th"),
        (11, "11th"),
        (12, "12th"),
        (13, "13th"),
        (21, "21st"),
        (22, "22nd"),
        (103, "103rd"),
    ];
    for (n, want) in cases {
        assert_eq!(queue::ordinal(n), want);
    }
    assert_eq!(
        queue::place(2, crate::model::ForgeKind::GitLab),
        "2nd in the merge train"
    );
    assert_eq!(
        queue::place(0, crate::model::ForgeKind::GitLab),
        "in the merge train",
        "the forge did not say the place"
    );
}

#[test]
fn a_merge_group_failure_on_the_agents_commit_goes_to_the_agent_not_the_owner() {
    let c = Ctx::new();
    let mut s = queued_base("a");
    s.head.author_login = Some("fixer-bot".into());
    s.head.committer_login = Some("fixer-bot".into());
    s.queue_entry = Some(entry(1, QueueState::AwaitingChecks));
    let entered = c.decide(&armed("a"), &s);
    let mut gone = queued_base("a");
    gone.head.author_login = Some("fixer-bot".into());
    gone.head.committer_login = Some("fixer-bot".into());
    gone.queue_failures = vec![failed_log("test", "mismatched types", false)];
    let left = c.decide(&after(&armed("a"), &entered), &gone);
    let sent = sent(&left);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].checks[0].log_tail, "mismatched types");
    assert!(notices(&left).is_empty());
    assert_eq!(left.status.memory.queue_left_head, Some(Sha("a".into())));
}

#[test]
fn an_exit_whose_merge_group_could_not_be_read_waits_a_bounded_number_of_ticks() {
    let c = Ctx::new();
    let mut s = queued_base("a");
    s.auto_merge_enabled = true;
    s.queue_entry = Some(entry(2, QueueState::AwaitingChecks));
    let entered = c.decide(&armed("a"), &s);
    let mut w = after(&armed("a"), &entered);
    let mut gone = queued_base("a");
    gone.queue_unread = Some("HTTP 500".into());
    for tick in 0..queue::MAX_QUEUE_EXIT_WAITS {
        let plan = c.decide(&w, &gone);
        assert!(notices(&plan).is_empty(), "tick {tick}");
        assert_eq!(enqueues(&plan), 0, "tick {tick}");
        assert_eq!(plan.status.memory.queued_head, Some(Sha("a".into())));
        assert_eq!(
            plan.status.memory.picture.queue, s.queue_entry,
            "the group to read next tick"
        );
        assert!(
            plan.history
                .iter()
                .any(|h| h.what.contains("could not be read (HTTP 500)")),
            "{:?}",
            plan.history
        );
        w = after(&w, &plan);
    }
    let told = c.decide(&w, &gone);
    assert_eq!(
        notices(&told),
        vec![(
            NotifyKind::Merge,
            "left the merge queue: removed by the forge; the checks of the merge group could \
             not be read (HTTP 500)"
                .to_owned()
        )]
    );
    assert_eq!(told.status.memory.queue_exit_waits, 0);
    assert_eq!(told.status.memory.queued_head, None);
}

/// A removal only the forge's timeline records (no look saw the PR in line) ends the head's
/// turn once: not the removal the queue writes when it merges, not an earlier head's, not one
/// from before the owner asked again.
#[test]
fn a_timeline_removal_since_the_last_ask_ends_the_heads_turn() {
    use crate::model::QueueRemoval;
    let c = Ctx::new();
    let removal = |reason: &str, head: Option<&str>, mins_ago: i64| QueueRemoval {
        at: Some(t0() - Duration::minutes(mins_ago)),
        reason: Some(reason.into()),
        head: head.map(|h| Sha(h.into())),
    };
    let cases = [
        (vec![removal("failed_checks", Some("a"), 5)], 0),
        (vec![removal("failed_checks", None, 5)], 0),
        (vec![removal("merged", Some("a"), 5)], 1),
        (vec![removal("failed_checks", Some("old"), 5)], 1),
        (vec![removal("failed_checks", Some("a"), 120)], 1),
        (Vec::new(), 1),
    ];
    for (removals, want) in cases {
        let mut s = queued_base("a");
        s.checks = vec![check("t", CheckState::Passed)];
        s.merge_state = MergeState::Clean;
        s.queue_removals = removals.clone();
        let plan = c.decide(&armed("a"), &s);
        assert_eq!(enqueues(&plan), want, "{removals:?}");
        if want == 0 {
            assert_eq!(plan.status.memory.queue_left_head, Some(Sha("a".into())));
            let again = c.decide(&after(&armed("a"), &plan), &s);
            assert_eq!(enqueues(&again), 0, "not queued again");
            assert!(notices(&again).is_empty(), "told once");
        }
    }
}

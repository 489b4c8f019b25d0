//! The bound of a quiet decision: each time-driven rule moves it, and deciding again anywhere
//! before it makes the same plan.

use chrono::Duration;

use super::super::tests::{Ctx, after, armed, check, snap, t0, watch, watch_seen};
use super::*;
use crate::model::trust::HeadTrust;
use crate::model::watch::FixInFlight;
use crate::model::{CheckState, Sha};

fn secs(n: i64) -> Duration {
    Duration::seconds(n)
}

/// `w` decided on `s` until its decision is quiet (the stored state a tick leaves), and that
/// quiet decision's plan.
fn settled(c: &Ctx, w: &Watch, s: &Snapshot) -> (Watch, Plan) {
    let mut w = w.clone();
    for _ in 0..4 {
        let plan = c.decide(&w, s);
        if plan.status == w.status && plan.history.is_empty() && plan.actions.is_empty() {
            return (w, plan);
        }
        w = after(&w, &plan);
    }
    panic!("no quiet decision for {s:?}");
}

fn at(c: &Ctx, now: Instant) -> Ctx {
    let mut c = c.clone();
    c.now = now;
    c
}

/// Whether the decision at `now` is the quiet `plan` made at `c.now`, its times moved.
fn same_at(c: &Ctx, w: &Watch, s: &Snapshot, plan: &Plan, now: Instant) -> bool {
    let again = at(c, now).decide(w, s);
    let moved = |p: &Plan, t: Instant| p.next_tick_at.map(|n| n - t);
    again.status == plan.status
        && again.actions.is_empty()
        && again.history.is_empty()
        && again.seen.is_empty()
        && moved(&again, now) == moved(plan, c.now)
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one table test: its rows are its length"
)]
fn each_time_driven_rule_moves_the_bound_and_the_decision_holds_until_it() {
    let long_ago = t0() - Duration::hours(3);
    let cap = t0() + secs(SETTLED_AT_MOST_SECS);
    let no_agent = Ctx::plain();
    let agent = Ctx::new();
    let pending = |started: Instant| {
        let mut c = check("e2e", CheckState::Pending);
        c.started_at = Some(started);
        Snapshot {
            checks: vec![check("lint", CheckState::Passed), c],
            ..snap("a")
        }
    };
    let committed = |at: Instant| {
        let mut s = snap("a");
        s.head.committed_at = Some(at);
        s
    };
    let mut stuck = no_agent.clone();
    stuck.policy.stuck_after_sec = Some(2400);
    let mut capped = agent.clone();
    capped.policy.agent_messages_per_hour = Some(5);
    let with_memory = |seen: Instant, edit: &dyn Fn(&mut crate::model::watch::Memory)| {
        let mut w = watch_seen("a", seen);
        edit(&mut w.status.memory);
        w
    };
    struct Case {
        what: &'static str,
        ctx: Ctx,
        watch: Watch,
        snap: Snapshot,
        until: Instant,
        /// The decision a second past `until` differs: the rule turns there (the bound is not
        /// only safe but tight, to the second).
        turns_there: bool,
    }
    let cases = vec![
        Case {
            what: "an idle PR: no rule turns, the cap holds",
            ctx: no_agent.clone(),
            watch: watch_seen("a", long_ago),
            snap: snap("a"),
            until: cap,
            turns_there: false,
        },
        Case {
            what: "a pending check times out an hour after it started",
            ctx: no_agent.clone(),
            watch: watch_seen("a", long_ago),
            snap: pending(t0() - secs(3000)),
            until: t0() + secs(601),
            turns_there: true,
        },
        Case {
            what: "a pending check's timeout counts from the head's first sight when later",
            ctx: no_agent.clone(),
            watch: watch_seen("a", t0() - secs(3500)),
            snap: pending(long_ago),
            until: t0() + secs(101),
            turns_there: true,
        },
        Case {
            what: "the no-checks grace ends",
            ctx: no_agent.clone(),
            watch: watch_seen("a", t0() - secs(500)),
            snap: Snapshot {
                checks: vec![],
                ..snap("a")
            },
            until: t0() + secs(100),
            turns_there: true,
        },
        Case {
            what: "a head not moving for stuck_after_sec is reported",
            ctx: stuck.clone(),
            watch: watch_seen("a", t0() - secs(1800)),
            snap: snap("a"),
            until: t0() + secs(601),
            turns_there: true,
        },
        Case {
            what: "a head already reported stuck is not reported again",
            ctx: stuck,
            watch: with_memory(t0() - secs(1800), &|m| {
                m.stuck_reported_for = Some(Sha("a".into()));
            }),
            snap: snap("a"),
            until: cap,
            turns_there: false,
        },
        Case {
            what: "a fix with the agent times out",
            ctx: agent.clone(),
            watch: with_memory(long_ago, &|m| {
                m.fix = Some(FixInFlight {
                    message_id: "m1".into(),
                    head_sha: Sha("a".into()),
                    sent_at: t0() - secs(1500),
                    done_at: None,
                });
            }),
            snap: Snapshot {
                checks: vec![check("lint", CheckState::Failed)],
                ..snap("a")
            },
            until: t0() + secs(300),
            turns_there: true,
        },
        Case {
            what: "review feedback with the agent times out",
            ctx: agent.clone(),
            watch: with_memory(long_ago, &|m| {
                m.feedback_sent = Some(crate::core::answers::sent(
                    "m2",
                    &Sha("a".into()),
                    t0() - secs(1000),
                    &[],
                ));
            }),
            snap: snap("a"),
            until: t0() + secs(800),
            turns_there: false,
        },
        Case {
            what: "an agent message leaves the capped hour",
            ctx: capped,
            watch: with_memory(long_ago, &|m| {
                m.agent_messages = vec![t0() - secs(3000), t0() - secs(100)];
            }),
            snap: snap("a"),
            until: t0() + secs(600),
            turns_there: false,
        },
        Case {
            what: "an unlisted head's grace ends",
            ctx: agent.clone(),
            watch: with_memory(long_ago, &|m| {
                m.head_trust = Some(HeadTrust {
                    sha: Sha("a".into()),
                    verdict: TrustVerdict::Unlisted,
                    pusher: None,
                    pushed_at: None,
                    judged_at: t0() - secs(400),
                });
            }),
            snap: snap("a"),
            until: t0() + secs(200),
            turns_there: false,
        },
        Case {
            what: "a recent commit leaves the active window",
            ctx: no_agent.clone(),
            watch: watch_seen("a", long_ago),
            snap: committed(t0() - secs(90)),
            until: t0() + secs(31),
            turns_there: true,
        },
        Case {
            what: "a commit dated ahead of the clock enters the active window",
            ctx: no_agent.clone(),
            watch: watch_seen("a", long_ago),
            snap: committed(t0() + secs(600)),
            until: t0() + secs(479),
            turns_there: true,
        },
        Case {
            what: "a head first seen a minute ago leaves the active window",
            ctx: no_agent.clone(),
            watch: watch_seen("a", t0() - secs(60)),
            snap: snap("a"),
            until: t0() + secs(61),
            turns_there: true,
        },
        Case {
            what: "agent activity leaves the active window",
            ctx: no_agent,
            watch: with_memory(long_ago, &|m| m.agent_activity_at = Some(t0() - secs(100))),
            snap: snap("a"),
            until: t0() + secs(21),
            turns_there: true,
        },
    ];
    for c in cases {
        let (w, plan) = settled(&c.ctx, &c.watch, &c.snap);
        let until = settled_until(&w, &c.snap, &c.ctx.ctx(), &plan);
        assert_eq!(until, Some(c.until), "{}", c.what);
        let span = (c.until - t0()).num_seconds();
        for t in [0, span / 3, span / 2, span - 1] {
            assert!(
                same_at(&c.ctx, &w, &c.snap, &plan, t0() + secs(t)),
                "{}: the decision {t} s later differs",
                c.what
            );
        }
        assert_eq!(
            !same_at(&c.ctx, &w, &c.snap, &plan, c.until + secs(1)),
            c.turns_there,
            "{}: the decision a second past the bound",
            c.what
        );
    }
}

#[test]
fn a_decision_that_acts_or_leans_on_more_than_the_snapshot_is_not_settled() {
    let long_ago = t0() - Duration::hours(3);
    let c = Ctx::plain();
    let (w, plan) = settled(&c, &watch_seen("a", long_ago), &snap("a"));
    let settles = |w: &Watch, s: &Snapshot, ctx: &Context<'_>, plan: &Plan| {
        settled_until(w, s, ctx, plan).is_some()
    };
    assert!(settles(&w, &snap("a"), &c.ctx(), &plan));

    let new_head = c.decide(&w, &snap("b"));
    assert!(!settles(&w, &snap("b"), &c.ctx(), &new_head), "a new head");

    let mut asked = c.clone();
    asked.fix_asked = true;
    assert!(
        !settles(&w, &snap("a"), &asked.ctx(), &plan),
        "the owner's fix"
    );

    let evidence = super::super::tests::pushed_by_committer(&snap("a"));
    let judged = Context {
        evidence: Some(&evidence),
        ..c.ctx()
    };
    assert!(!settles(&w, &snap("a"), &judged, &plan), "evidence read");

    let mut unread = snap("a");
    unread.failed_logs = vec![super::super::tests::failed_log("lint", "", false)];
    unread.failed_logs[0].unreadable = Some("503".into());
    assert!(!settles(&w, &unread, &c.ctx(), &plan), "a log not read");

    let mut unseen = w.clone();
    unseen.status.head_seen_at = None;
    assert!(
        !settles(
            &unseen,
            &snap("a"),
            &c.ctx(),
            &Plan {
                status: unseen.status.clone(),
                ..plan.clone()
            }
        ),
        "a head never seen"
    );
}

/// The context the next tick decides in once `plan`, decided in `c`, is recorded: what it
/// handled is seen, what it reconciled is no longer open.
fn next_ctx(c: &Ctx, plan: &Plan) -> Ctx {
    let mut next = c.clone();
    next.seen
        .extend(plan.seen.iter().map(|m| (m.key(), m.updated_at.clone())));
    next.intents
        .retain(|i| !plan.resolved_intents.contains(&i.id));
    next
}

/// `w` decided on `s` in `c`, a decision that records a change, then [`settled_after`] on what
/// it recorded: whether it settles; when it does, its plan is the next tick's decision on the
/// same read, its bound is that decision's, and the decision holds until it.
fn settles_at_once(what: &str, c: &Ctx, w: &Watch, s: &Snapshot) -> bool {
    let plan = c.decide(w, s);
    let quiet = plan.status == w.status && plan.history.is_empty() && plan.actions.is_empty();
    assert!(!quiet, "{what}: the first decision records a change");
    let recorded = Watch {
        last_tick_at: Some(c.now),
        ..after(w, &plan)
    };
    let next = next_ctx(c, &plan);
    let Some((again, until)) = settled_after(&plan, &recorded, s, &next.ctx()) else {
        return false;
    };
    let decided = next.decide(&recorded, s);
    assert_eq!(again, decided, "{what}");
    assert_eq!(
        settled_until(&recorded, s, &next.ctx(), &decided),
        Some(until),
        "{what}"
    );
    let span = (until - t0()).num_seconds();
    for t in [0, span / 2, span - 1] {
        assert!(
            same_at(&next, &recorded, s, &again, t0() + secs(t)),
            "{what}: the decision {t} s later differs"
        );
    }
    true
}

#[test]
fn a_decision_that_records_a_change_settles_on_the_next_decision_made_at_once() {
    let long_ago = t0() - Duration::hours(3);
    let owner_only = Ctx::plain();
    let mut pending = check("e2e", CheckState::Pending);
    pending.started_at = Some(t0() - secs(600));
    let running = Snapshot {
        checks: vec![check("lint", CheckState::Passed), pending],
        ..snap("b")
    };
    let mut reconciling = owner_only.clone();
    reconciling.intents = vec![crate::model::intent::Intent {
        id: 7,
        kind: crate::model::intent::IntentKind::Arm,
        head: Sha("a".into()),
        detail: "squash".into(),
        created_at: t0() - secs(30),
    }];
    let armed_on = Snapshot {
        auto_merge_enabled: true,
        merge_state: crate::model::MergeState::Blocked,
        ..snap("a")
    };
    let failing = Snapshot {
        checks: vec![check("lint", CheckState::Failed)],
        ..snap("b")
    };
    let mut errored = watch_seen("a", long_ago);
    errored.last_error = Some("the forge said 502".into());
    // (what, context, watch, snapshot, whether it settles on what it recorded)
    let cases = vec![
        (
            "a head seen for the first time",
            &owner_only,
            watch(),
            snap("a"),
            true,
        ),
        (
            "a new head replaces the one seen",
            &owner_only,
            watch_seen("a", long_ago),
            snap("b"),
            true,
        ),
        (
            "a new head whose check still runs",
            &owner_only,
            watch_seen("a", long_ago),
            running,
            true,
        ),
        (
            "a recorded arming the read reconciles",
            &reconciling,
            armed("a"),
            armed_on,
            true,
        ),
        (
            "a failure on a new head, the owner told",
            &owner_only,
            watch_seen("a", long_ago),
            failing,
            true,
        ),
        (
            "an armed PR ready to merge asks the forge",
            &owner_only,
            armed("a"),
            snap("a"),
            false,
        ),
        (
            "a tick that left an error",
            &owner_only,
            errored,
            snap("b"),
            false,
        ),
    ];
    for (what, c, w, s, settles) in cases {
        assert_eq!(settles_at_once(what, c, &w, &s), settles, "{what}");
    }
}

#[test]
fn a_decision_that_wrote_to_the_forge_or_was_judged_on_evidence_is_not_settled_at_once() {
    let c = Ctx::new();
    let long_ago = t0() - Duration::hours(3);
    let w = watch_seen("a", long_ago);
    let (quiet_w, quiet) = settled(&c, &w, &snap("a"));
    let recorded = after(&quiet_w, &quiet);
    assert!(settled_after(&quiet, &recorded, &snap("a"), &c.ctx()).is_some());
    let evidence = super::super::tests::pushed_by_committer(&snap("a"));
    let judged = Context {
        evidence: Some(&evidence),
        ..c.ctx()
    };
    assert!(
        settled_after(&quiet, &recorded, &snap("a"), &judged).is_none(),
        "the next tick reads no evidence before it decides"
    );
    let rerun = Plan {
        actions: vec![Action::RerunFailed {
            run_ids: vec![1],
            guards: vec![],
        }],
        ..quiet.clone()
    };
    assert!(
        settled_after(&rerun, &recorded, &snap("a"), &c.ctx()).is_none(),
        "a write's answer is the next read's to tell"
    );
}

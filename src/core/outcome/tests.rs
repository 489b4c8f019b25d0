//! Table tests of [`apply`]: every action against the answers that mean something for it.

use super::*;
use crate::core::decide::tests::{armed, policy, snap};
use crate::model::plan::{AgentRequest, ConflictHandoff, MessageKind};
use crate::model::watch::Why;
use crate::model::{MergeMethod, Sha, UpdateMethod};

fn sha() -> Sha {
    Sha("abc".into())
}

fn fail(kind: FailureKind, said: &str) -> Outcome {
    Outcome::Failed(Failure {
        said: said.to_owned(),
        kind,
    })
}

fn refused(refusal: Refusal) -> Outcome {
    let said = format!("refused: {refusal}");
    fail(FailureKind::AutoMergeRefused(refusal), &said)
}

fn arm(merge_if_clean: bool) -> Action {
    Action::EnableAutoMerge {
        method: MergeMethod::Squash,
        merge_if_clean: merge_if_clean.then(sha),
    }
}

fn merge() -> Action {
    Action::Merge {
        sha: sha(),
        method: MergeMethod::Squash,
    }
}

fn update() -> Action {
    Action::UpdateBranch {
        expected_head: sha(),
        method: UpdateMethod::Merge,
        on_conflict: None,
    }
}

fn rerun() -> Action {
    Action::RerunFailed {
        run_ids: vec![7, 8],
        guards: vec!["abc:test".into()],
    }
}

/// What an answer left of the PR's claims, in one comparable line: whether the merge and the
/// update are still taken as asked for this head, the update turn, the cnf pill, the chosen
/// way to merge, and the re-run guards.
fn claims(status: &WatchStatus) -> String {
    let m = &status.memory;
    format!(
        "merge asked {}, update asked {}, turn {}, cnf {}, self-merge {}, guards {}",
        m.merge_attempted_for.is_some(),
        m.update_requested_for.is_some(),
        m.holds_update_turn,
        status.pills.cnf,
        status.merge.via() == Some(MergeVia::SelfMerge),
        m.infra_reruns.len(),
    )
}

/// An armed PR at head `abc` that asked for a merge and an update, holds the update turn and
/// re-ran one check as a flake.
fn claimed() -> WatchStatus {
    let mut status = armed("abc").status;
    status.memory.merge_attempted_for = Some(sha());
    status.memory.update_requested_for = Some(sha());
    status.memory.holds_update_turn = true;
    status.memory.infra_reruns = vec!["abc:test".into()];
    status
}

const UNTOUCHED: &str =
    "merge asked true, update asked true, turn true, cnf false, self-merge false, guards 1";

/// One answer to one action, and what it must do.
#[expect(
    clippy::struct_excessive_bools,
    reason = "a table row: each flag is one expected effect"
)]
struct Row {
    name: &'static str,
    action: Action,
    outcome: Outcome,
    notes: &'static [&'static str],
    claims: &'static str,
    incomplete: bool,
    merged: bool,
    then_merge: bool,
    conflict_notice: bool,
}

/// A row with no flag set.
fn row(
    name: &'static str,
    action: Action,
    outcome: Outcome,
    notes: &'static [&'static str],
    claims: &'static str,
) -> Row {
    Row {
        name,
        action,
        outcome,
        notes,
        claims,
        incomplete: false,
        merged: false,
        then_merge: false,
        conflict_notice: false,
    }
}

fn unknown(said: &str) -> Outcome {
    fail(FailureKind::Unknown, said)
}

fn refusal(said: &str) -> Outcome {
    fail(FailureKind::Refused, said)
}

/// Applies each row's answer to a [`claimed`] PR and checks its effects.
fn check(rows: impl IntoIterator<Item = Row>) {
    for r in rows {
        let name = r.name;
        let mut status = claimed();
        let fx = apply(&mut status, &r.action, r.outcome, &snap("abc"), &policy());
        assert_eq!(fx.notes, r.notes, "{name}");
        assert_eq!(claims(&status), r.claims, "{name}");
        assert_eq!(fx.incomplete.is_some(), r.incomplete, "{name}");
        assert_eq!(fx.merged, r.merged, "{name}");
        assert_eq!(fx.then, r.then_merge.then(merge), "{name}");
        let conflict = matches!(fx.notices[..], [Notice::Conflict { .. }]);
        assert_eq!(conflict, r.conflict_notice, "{name}");
        assert_eq!(
            status.state,
            PrState::Open,
            "{name}: merged only when the tick records it"
        );
    }
}

#[test]
fn answers_to_arming_auto_merge() {
    let rows = [
        row(
            "armed",
            arm(true),
            Outcome::Done,
            &["auto-merge enabled (squash)"],
            UNTOUCHED,
        ),
        Row {
            then_merge: true,
            ..row(
                "already clean, with a head to merge: merged directly",
                arm(true),
                refused(Refusal::AlreadyClean("clean status".into())),
                &["already clean: nothing to wait for, merging directly"],
                UNTOUCHED,
            )
        },
        row(
            "already clean, no confirmed head: waits for the next tick",
            arm(false),
            refused(Refusal::AlreadyClean("clean status".into())),
            &["already clean: the merge waits for the next tick's confirmed head"],
            "merge asked false, update asked true, turn true, cnf false, self-merge false, guards 1",
        ),
        Row {
            then_merge: true,
            ..row(
                "no auto-merge here: pr-monitor merges itself",
                arm(true),
                refused(Refusal::Unavailable("not allowed".into())),
                &["auto-merge is not available here, so pr-monitor merges itself (not allowed)"],
                "merge asked true, update asked true, turn true, cnf false, self-merge true, guards 1",
            )
        },
        row(
            "refused for another reason: never merged blind",
            arm(true),
            refused(Refusal::Other("pull request is in draft".into())),
            &["the forge refused auto-merge: pull request is in draft"],
            "merge asked false, update asked true, turn true, cnf false, self-merge false, guards 1",
        ),
        Row {
            incomplete: true,
            ..row(
                "arming, forge down: retried next tick, the tick incomplete",
                arm(true),
                unknown("forge unavailable: 502"),
                &["enabling auto-merge failed: forge unavailable: 502"],
                "merge asked false, update asked true, turn true, cnf false, self-merge false, guards 1",
            )
        },
        row(
            "arming, the head moved: retried next tick on the new head",
            arm(true),
            refusal("head moved: expected head abc"),
            &["enabling auto-merge failed: head moved: expected head abc"],
            "merge asked false, update asked true, turn true, cnf false, self-merge false, guards 1",
        ),
    ];
    check(rows);
}

#[test]
fn answers_to_a_merge() {
    let rows = [
        Row {
            merged: true,
            ..row(
                "merged",
                merge(),
                Outcome::Done,
                &["merged abc (squash)"],
                UNTOUCHED,
            )
        },
        row(
            "merge refused: never retried on this head",
            merge(),
            refusal("head moved: head ref changed"),
            &["merge refused: head moved: head ref changed"],
            UNTOUCHED,
        ),
        row(
            "merge conflict: refused",
            merge(),
            fail(
                FailureKind::Conflict("merge conflict".into()),
                "conflict: merge conflict",
            ),
            &["merge refused: conflict: merge conflict"],
            UNTOUCHED,
        ),
        Row {
            incomplete: true,
            ..row(
                "merge outcome unknown: re-read before any retry",
                merge(),
                unknown("forge unavailable: 500"),
                &[
                    "merge outcome unknown (forge unavailable: 500); the PR is re-read before any retry",
                ],
                "merge asked false, update asked true, turn true, cnf false, self-merge false, guards 1",
            )
        },
    ];
    check(rows);
}

#[test]
fn answers_to_a_branch_update() {
    let rows = [
        row(
            "update requested",
            update(),
            Outcome::Done,
            &["branch update requested (merge)"],
            UNTOUCHED,
        ),
        Row {
            conflict_notice: true,
            ..row(
                "a conflict on update lights cnf and gives up the turn",
                update(),
                fail(FailureKind::Conflict("in a.rs".into()), "conflict: in a.rs"),
                &["cnf lit: the branch update found a conflict (in a.rs)"],
                "merge asked true, update asked true, turn false, cnf true, self-merge false, guards 1",
            )
        },
        row(
            "update, the head moved: asked again, the tick complete",
            update(),
            refusal("head moved: expected head abc"),
            &["branch update not done: head moved: expected head abc"],
            "merge asked true, update asked false, turn true, cnf false, self-merge false, guards 1",
        ),
        Row {
            incomplete: true,
            ..row(
                "update, forge down: asked again, the tick incomplete",
                update(),
                unknown("forge unavailable: 503"),
                &["branch update not done: forge unavailable: 503"],
                "merge asked true, update asked false, turn true, cnf false, self-merge false, guards 1",
            )
        },
    ];
    check(rows);
}

/// A conflict message readied with the update goes in the same tick only when the update
/// finds the conflict, counted as a message to the agent.
#[test]
fn a_conflict_found_by_an_update_hands_the_readied_message_on() {
    let request = AgentRequest {
        id: "m-1".into(),
        agent: "fixer".into(),
        kind: MessageKind::Conflict,
        reason: Why::FixSent,
        checks: Vec::new(),
        feedback: Vec::new(),
        trusted_by: "push by fixer-bot".into(),
        conflict_files: Vec::new(),
    };
    let at = crate::core::decide::tests::t0();
    let readied = Action::UpdateBranch {
        expected_head: sha(),
        method: UpdateMethod::Rebase,
        on_conflict: Some(Box::new(ConflictHandoff {
            request: request.clone(),
            at,
        })),
    };
    let mut status = claimed();
    let conflict = fail(FailureKind::Conflict("in a.rs".into()), "conflict: in a.rs");
    let fx = apply(&mut status, &readied, conflict, &snap("abc"), &policy());
    assert_eq!(fx.then, Some(Action::SendToAgent(request)));
    assert_eq!(
        fx.notes,
        [
            "cnf lit: the branch update found a conflict (in a.rs)",
            "sent the conflict with main to fixer",
        ]
    );
    let m = &status.memory;
    assert_eq!(m.conflict_sent_for, Some(sha()));
    assert_eq!((m.agent_messages_sent, m.agent_activity_at), (1, Some(at)));
    assert_eq!(m.agent_messages, [at]);

    let mut status = claimed();
    let fx = apply(
        &mut status,
        &readied,
        Outcome::Done,
        &snap("abc"),
        &policy(),
    );
    assert_eq!(fx.then, None, "no conflict, nothing sent");
    assert_eq!(status.memory.conflict_sent_for, None);
    assert_eq!(status.memory.agent_messages_sent, 0);
}

#[test]
fn answers_to_disarming_and_re_runs() {
    let rows = [
        Row {
            incomplete: true,
            ..row(
                "disarming, forge down: the tick incomplete",
                Action::DisableAutoMerge,
                unknown("forge unavailable: 502"),
                &["could not disable auto-merge: forge unavailable: 502"],
                UNTOUCHED,
            )
        },
        row(
            "re-runs asked",
            rerun(),
            Outcome::RunsFailed(Vec::new()),
            &[],
            UNTOUCHED,
        ),
        row(
            "a re-run refused is noted, the tick complete",
            rerun(),
            Outcome::RunsFailed(vec![(
                8,
                Failure {
                    said: "refused: too old".into(),
                    kind: FailureKind::Refused,
                },
            )]),
            &["re-run of workflow run 8 failed: refused: too old"],
            UNTOUCHED,
        ),
    ];
    check(rows);
}

/// A write whose intent could not be recorded was not made: the tick is incomplete, and what
/// the action claimed is let go so the next tick asks again.
#[test]
fn a_write_not_asked_is_asked_again_next_tick() {
    let why = "merge on abc not asked: its intent could not be recorded first (disk full)";
    let rows = [
        (
            arm(true),
            "merge asked false, update asked true, turn true, cnf false, self-merge false, guards 1",
        ),
        (
            merge(),
            "merge asked false, update asked true, turn true, cnf false, self-merge false, guards 1",
        ),
        (
            update(),
            "merge asked true, update asked false, turn true, cnf false, self-merge false, guards 1",
        ),
        (
            rerun(),
            "merge asked true, update asked true, turn true, cnf false, self-merge false, guards 0",
        ),
        (Action::DisableAutoMerge, UNTOUCHED),
    ];
    for (action, left) in rows {
        let mut status = claimed();
        let fx = apply(
            &mut status,
            &action,
            Outcome::NotAsked(why.into()),
            &snap("abc"),
            &policy(),
        );
        assert_eq!(fx.notes, [why], "{action:?}");
        assert_eq!(fx.incomplete.as_deref(), Some(why), "{action:?}");
        assert_eq!(claims(&status), left, "{action:?}");
    }
}

#[test]
fn the_tick_that_merged_records_it_at_once() {
    let mut plan = Plan {
        status: armed("abc").status,
        actions: vec![merge()],
        history: Vec::new(),
        seen: Vec::new(),
        next_tick_at: Some(crate::core::decide::tests::t0()),
        resolved_intents: Vec::new(),
        needs_evidence: false,
    };
    plan.status.pills.cnf = true;
    plan.status.memory.holds_update_turn = true;
    record_merged(&mut plan);
    assert_eq!(plan.status.state, PrState::Merged);
    assert!(!plan.status.merge.is_armed());
    assert_eq!(plan.status.pills, Pills::default());
    assert!(!plan.status.memory.holds_update_turn);
    assert_eq!(plan.next_tick_at, None);
}

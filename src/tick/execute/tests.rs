//! Table tests of `apply`'s outcome handling against an in-process forge that records every
//! write and answers each verb as the row scripts it; no HTTP, no store.

use std::cell::RefCell;

use super::*;
use crate::core::decide::tests::{armed, policy, snap, t0};
use crate::forge::rate::Budget;
use crate::forge::{OpenPr, Refusal, SnapshotRequest};
use crate::model::intent::IntentKind;
use crate::model::watch::MergeVia;
use crate::model::{Check, MergeMethod, PrRef, PrState, UpdateMethod};

/// A forge that records the writes asked of it and answers them as scripted. Reads are not
/// part of `apply`: they answer `Unexpected`.
#[derive(Default)]
struct RecordingForge {
    enable_auto_merge: Option<ForgeError>,
    merge: Option<ForgeError>,
    update_branch: Option<ForgeError>,
    writes: RefCell<Vec<String>>,
}

impl RecordingForge {
    fn answer(&self, write: String, scripted: Option<&ForgeError>) -> Result<(), ForgeError> {
        self.writes.borrow_mut().push(write);
        scripted.map_or(Ok(()), |e| Err(e.clone()))
    }

    fn writes(&self) -> Vec<String> {
        self.writes.borrow().clone()
    }
}

fn no_read<T>() -> Result<T, ForgeError> {
    Err(ForgeError::Unexpected("apply reads nothing".into()))
}

impl Forge for RecordingForge {
    fn snapshots(&self, requests: &[SnapshotRequest]) -> Vec<Result<Snapshot, ForgeError>> {
        requests.iter().map(|_| no_read()).collect()
    }

    fn budget(&self) -> Budget {
        Budget {
            host: "forge.test".into(),
            identity: "test".into(),
            reads: "graphql",
            figures: Vec::new(),
            spent: 0,
        }
    }

    fn hold(&self, _until_epoch: i64, _streak: u32) {}

    fn open_prs(&self, _repo: &str) -> Result<Vec<OpenPr>, ForgeError> {
        no_read()
    }

    fn my_open_prs(&self) -> Result<Vec<PrRef>, ForgeError> {
        no_read()
    }

    fn branch_heads(
        &self,
        _branches: &[crate::model::branch::BranchRef],
    ) -> Result<Vec<Option<crate::forge::BranchHead>>, ForgeError> {
        no_read()
    }

    fn branch_pushes(
        &self,
        _branch: &crate::model::branch::BranchRef,
    ) -> Result<Vec<crate::model::trust::Push>, ForgeError> {
        no_read()
    }

    fn branch_signed_commits(
        &self,
        _branch: &crate::model::branch::BranchRef,
        _since: Option<&Sha>,
        _head: &Sha,
    ) -> Result<Option<Vec<crate::model::trust::SignedCommit>>, ForgeError> {
        no_read()
    }

    fn viewer_login(&self) -> Result<String, ForgeError> {
        no_read()
    }

    fn job_log(&self, _repo: &str, _job_id: u64) -> Result<Option<String>, ForgeError> {
        no_read()
    }

    fn annotations(&self, runs: &[crate::forge::CheckRunRef]) -> Vec<Result<String, ForgeError>> {
        runs.iter().map(|_| no_read()).collect()
    }

    fn changed_files(
        &self,
        _pr: &PrRef,
        _from: &str,
        _to: &str,
    ) -> Result<Option<Vec<String>>, ForgeError> {
        no_read()
    }

    fn issue_events(&self, _pr: &PrRef) -> Result<crate::model::issue_event::Events, ForgeError> {
        no_read()
    }

    fn rerun_failed(&self, _pr: &PrRef, run_id: u64) -> Result<(), ForgeError> {
        self.answer(format!("rerun {run_id}"), None)
    }

    fn update_branch(
        &self,
        _snap: &Snapshot,
        expected_head: &Sha,
        method: UpdateMethod,
    ) -> Result<(), ForgeError> {
        let write = format!("update {} {}", expected_head.0, method.as_str());
        self.answer(write, self.update_branch.as_ref())
    }

    fn enable_auto_merge(&self, _snap: &Snapshot, method: MergeMethod) -> Result<(), ForgeError> {
        let write = format!("arm {}", method.as_str());
        self.answer(write, self.enable_auto_merge.as_ref())
    }

    fn commit_checks(&self, _pr: &PrRef, _sha: &Sha) -> Result<Vec<Check>, ForgeError> {
        no_read()
    }

    fn disable_auto_merge(&self, _snap: &Snapshot) -> Result<(), ForgeError> {
        self.answer("disarm".into(), None)
    }

    fn merge(&self, _pr: &PrRef, sha: &Sha, method: MergeMethod) -> Result<(), ForgeError> {
        let write = format!("merge {} {}", sha.0, method.as_str());
        self.answer(write, self.merge.as_ref())
    }

    fn reply_to_thread(&self, _pr: &PrRef, _thread: &str, _body: &str) -> Result<(), ForgeError> {
        self.answer("reply".into(), None)
    }

    fn resolve_thread(&self, _pr: &PrRef, _thread: &str) -> Result<(), ForgeError> {
        self.answer("resolve".into(), None)
    }

    fn pushes(&self, _snap: &Snapshot) -> Result<Vec<crate::model::trust::Push>, ForgeError> {
        no_read()
    }

    fn signed_commits(
        &self,
        _snap: &Snapshot,
    ) -> Result<Option<Vec<crate::model::trust::SignedCommit>>, ForgeError> {
        no_read()
    }
}

/// The intents recorded, or a store that refuses to record them.
#[derive(Default)]
struct Intents {
    refuse: bool,
    recorded: Vec<(IntentKind, String)>,
}

impl IntentLog for Intents {
    fn record_intent(
        &mut self,
        _watch_id: i64,
        kind: IntentKind,
        head: &Sha,
        _detail: &str,
        _at: Instant,
    ) -> anyhow::Result<()> {
        if self.refuse {
            anyhow::bail!("the disk is full");
        }
        self.recorded.push((kind, head.0.clone()));
        Ok(())
    }
}

/// What one `apply` of one action did.
struct Outcome {
    writes: Vec<String>,
    intents: Vec<(IntentKind, String)>,
    plan: Plan,
    applied: Applied,
}

impl Outcome {
    fn history(&self) -> Vec<&str> {
        self.applied
            .history
            .iter()
            .map(|h| h.what.as_str())
            .collect()
    }
}

/// Applies `action` to an armed PR at head `abc`, with `forge` and `intents` answering.
fn apply_one(forge: &RecordingForge, intents: Intents, action: Action) -> Outcome {
    apply_answered(forge, intents, action, None)
}

/// [`apply_one`], the plan's first arming already answered `armed` when given.
fn apply_answered(
    forge: &RecordingForge,
    mut intents: Intents,
    action: Action,
    answered: Option<crate::model::outcome::Outcome>,
) -> Outcome {
    let config = Config::default();
    let policy = policy();
    let mut plan = Plan {
        status: armed("abc").status,
        actions: vec![action],
        history: Vec::new(),
        seen: Vec::new(),
        next_tick_at: Some(t0()),
        resolved_intents: Vec::new(),
        needs_evidence: false,
    };
    plan.status.memory.merge_attempted_for = Some(Sha("abc".into()));
    plan.status.memory.update_requested_for = Some(Sha("abc".into()));
    plan.status.memory.holds_update_turn = true;
    let env = Env {
        watch_id: 1,
        config: &config,
        policy: &policy,
        owner: "owner",
        now: t0(),
        dry_run: false,
    };
    let applied = {
        let mut writes = Writes {
            forge,
            intents: &mut intents,
            armed: answered,
        };
        apply(&mut writes, &snap("abc"), &mut plan, &env)
    };
    Outcome {
        writes: forge.writes(),
        intents: intents.recorded,
        plan,
        applied,
    }
}

fn arm(merge_if_clean: bool) -> Action {
    Action::EnableAutoMerge {
        method: MergeMethod::Squash,
        merge_if_clean: merge_if_clean.then(|| Sha("abc".into())),
    }
}

fn merge_abc() -> Action {
    Action::Merge {
        sha: Sha("abc".into()),
        method: MergeMethod::Squash,
    }
}

fn update() -> Action {
    Action::UpdateBranch {
        expected_head: Sha("abc".into()),
        method: UpdateMethod::Merge,
        on_conflict: None,
    }
}

fn refused(refusal: Refusal) -> ForgeError {
    ForgeError::AutoMergeRefused(refusal)
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one table test: its rows are its length"
)]
fn enabling_auto_merge_outcomes() {
    #[expect(
        clippy::struct_excessive_bools,
        reason = "a table row: each flag is one expected outcome"
    )]
    struct Row {
        name: &'static str,
        answer: Option<ForgeError>,
        merge_if_clean: bool,
        writes: &'static [&'static str],
        history: &'static str,
        merged: bool,
        self_merge: bool,
        retry_next_tick: bool,
        incomplete: bool,
    }
    let rows = [
        Row {
            name: "armed",
            answer: None,
            merge_if_clean: true,
            writes: &["arm squash"],
            history: "auto-merge enabled (squash)",
            merged: false,
            self_merge: false,
            retry_next_tick: false,
            incomplete: false,
        },
        Row {
            name: "already clean, with a head to merge: merged directly",
            answer: Some(refused(Refusal::AlreadyClean("clean status".into()))),
            merge_if_clean: true,
            writes: &["arm squash", "merge abc squash"],
            history: "already clean: nothing to wait for, merging directly",
            merged: true,
            self_merge: false,
            retry_next_tick: false,
            incomplete: false,
        },
        Row {
            name: "already clean, no confirmed head: waits for the next tick",
            answer: Some(refused(Refusal::AlreadyClean("clean status".into()))),
            merge_if_clean: false,
            writes: &["arm squash"],
            history: "already clean: the merge waits for the next tick's confirmed head",
            merged: false,
            self_merge: false,
            retry_next_tick: true,
            incomplete: false,
        },
        Row {
            name: "no auto-merge here: pr-monitor merges itself",
            answer: Some(refused(Refusal::Unavailable("not allowed".into()))),
            merge_if_clean: true,
            writes: &["arm squash", "merge abc squash"],
            history: "auto-merge is not available here, so pr-monitor merges itself (not allowed)",
            merged: true,
            self_merge: true,
            retry_next_tick: false,
            incomplete: false,
        },
        Row {
            name: "refused for another reason: never merged blind",
            answer: Some(refused(Refusal::Other("pull request is in draft".into()))),
            merge_if_clean: true,
            writes: &["arm squash"],
            history: "the forge refused auto-merge: pull request is in draft",
            merged: false,
            self_merge: false,
            retry_next_tick: true,
            incomplete: false,
        },
        Row {
            name: "forge down: retried next tick, the tick incomplete",
            answer: Some(ForgeError::Transient("502".into())),
            merge_if_clean: true,
            writes: &["arm squash"],
            history: "enabling auto-merge failed: forge unavailable: 502",
            merged: false,
            self_merge: false,
            retry_next_tick: true,
            incomplete: true,
        },
        Row {
            name: "the head moved: retried next tick on the new head",
            answer: Some(ForgeError::HeadMoved("expected head abc".into())),
            merge_if_clean: true,
            writes: &["arm squash"],
            history: "enabling auto-merge failed: head moved: expected head abc",
            merged: false,
            self_merge: false,
            retry_next_tick: true,
            incomplete: false,
        },
    ];
    for row in rows {
        let forge = RecordingForge {
            enable_auto_merge: row.answer,
            ..RecordingForge::default()
        };
        let o = apply_one(&forge, Intents::default(), arm(row.merge_if_clean));
        let name = row.name;
        assert_eq!(o.writes, row.writes, "{name}");
        assert_eq!(o.history()[0], row.history, "{name}");
        assert_eq!(o.applied.merged, row.merged, "{name}");
        assert_eq!(
            o.plan.status.merge.via() == Some(MergeVia::SelfMerge),
            row.self_merge,
            "{name}"
        );
        assert_eq!(
            o.plan.status.memory.merge_attempted_for.is_none(),
            row.retry_next_tick,
            "{name}"
        );
        assert_eq!(o.applied.error.is_some(), row.incomplete, "{name}");
        let kinds: Vec<IntentKind> = o.intents.iter().map(|(k, _)| *k).collect();
        let want = if row.merged {
            vec![IntentKind::Arm, IntentKind::Merge]
        } else {
            vec![IntentKind::Arm]
        };
        assert_eq!(kinds, want, "{name}: every write announced first");
        if row.merged {
            assert_eq!(o.plan.status.state, PrState::Merged, "{name}");
            assert!(
                !o.plan.status.merge.is_armed(),
                "{name}: a merged PR is disarmed"
            );
            assert_eq!(o.plan.next_tick_at, None, "{name}");
        } else {
            assert_eq!(o.plan.status.state, PrState::Open, "{name}");
            assert!(o.plan.status.merge.is_armed(), "{name}: still armed");
        }
    }
}

#[test]
fn merge_outcomes() {
    struct Row {
        name: &'static str,
        answer: Option<ForgeError>,
        history: &'static str,
        merged: bool,
        retry_next_tick: bool,
        incomplete: bool,
    }
    let rows = [
        Row {
            name: "merged",
            answer: None,
            history: "merged abc (squash)",
            merged: true,
            retry_next_tick: false,
            incomplete: false,
        },
        Row {
            name: "the head moved: refused, never retried on this head",
            answer: Some(ForgeError::HeadMoved("head ref changed".into())),
            history: "merge refused: head moved: head ref changed",
            merged: false,
            retry_next_tick: false,
            incomplete: false,
        },
        Row {
            name: "a merge conflict: refused",
            answer: Some(ForgeError::MergeConflict("merge conflict".into())),
            history: "merge refused: conflict: merge conflict",
            merged: false,
            retry_next_tick: false,
            incomplete: false,
        },
        Row {
            name: "refused by the forge",
            answer: Some(ForgeError::Refused("required reviews".into())),
            history: "merge refused: refused: required reviews",
            merged: false,
            retry_next_tick: false,
            incomplete: false,
        },
        Row {
            name: "outcome unknown: re-read before any retry",
            answer: Some(ForgeError::Transient("500".into())),
            history: "merge outcome unknown (forge unavailable: 500); the PR is re-read before any retry",
            merged: false,
            retry_next_tick: true,
            incomplete: true,
        },
    ];
    for row in rows {
        let forge = RecordingForge {
            merge: row.answer,
            ..RecordingForge::default()
        };
        let o = apply_one(&forge, Intents::default(), merge_abc());
        let name = row.name;
        assert_eq!(o.writes, ["merge abc squash"], "{name}");
        assert_eq!(o.intents, [(IntentKind::Merge, "abc".to_owned())], "{name}");
        let history = o.history();
        assert_eq!(history[0], row.history, "{name}");
        // The tick that merges adds the done record.
        assert_eq!(history.len(), 1 + usize::from(row.merged), "{name}");
        assert!(
            history[1..].iter().all(|h| h.starts_with("done at abc: ")),
            "{name}: {history:?}"
        );
        assert_eq!(o.applied.merged, row.merged, "{name}");
        let merged = o.plan.status.state == PrState::Merged;
        assert_eq!(merged, row.merged, "{name}");
        assert_eq!(
            o.plan.status.memory.merge_attempted_for.is_none(),
            row.retry_next_tick,
            "{name}"
        );
        assert_eq!(o.applied.error.is_some(), row.incomplete, "{name}");
    }
}

#[test]
fn branch_update_outcomes() {
    #[expect(
        clippy::struct_excessive_bools,
        reason = "a table row: each flag is one expected outcome"
    )]
    struct Row {
        name: &'static str,
        answer: Option<ForgeError>,
        history: &'static str,
        cnf: bool,
        holds_turn: bool,
        asked_again: bool,
        incomplete: bool,
    }
    let rows = [
        Row {
            name: "requested",
            answer: None,
            history: "branch update requested (merge)",
            cnf: false,
            holds_turn: true,
            asked_again: false,
            incomplete: false,
        },
        Row {
            name: "a conflict lights cnf and gives up the turn",
            answer: Some(ForgeError::MergeConflict("merge conflict in a.rs".into())),
            history: "cnf lit: the branch update found a conflict (merge conflict in a.rs)",
            cnf: true,
            holds_turn: false,
            asked_again: false,
            incomplete: false,
        },
        Row {
            name: "the head moved: asked again on the new head, the tick complete",
            answer: Some(ForgeError::HeadMoved("expected head abc".into())),
            history: "branch update not done: head moved: expected head abc",
            cnf: false,
            holds_turn: true,
            asked_again: true,
            incomplete: false,
        },
        Row {
            name: "forge down: asked again, the tick incomplete",
            answer: Some(ForgeError::Transient("503".into())),
            history: "branch update not done: forge unavailable: 503",
            cnf: false,
            holds_turn: true,
            asked_again: true,
            incomplete: true,
        },
    ];
    for row in rows {
        let forge = RecordingForge {
            update_branch: row.answer,
            ..RecordingForge::default()
        };
        let o = apply_one(&forge, Intents::default(), update());
        let name = row.name;
        assert_eq!(o.writes, ["update abc merge"], "{name}");
        assert_eq!(
            o.intents,
            [(IntentKind::UpdateBranch, "abc".to_owned())],
            "{name}"
        );
        assert_eq!(o.history(), [row.history], "{name}");
        assert_eq!(o.plan.status.pills.cnf, row.cnf, "{name}");
        let memory = &o.plan.status.memory;
        assert_eq!(memory.holds_update_turn, row.holds_turn, "{name}");
        assert_eq!(
            memory.update_requested_for.is_none(),
            row.asked_again,
            "{name}"
        );
        assert_eq!(o.applied.error.is_some(), row.incomplete, "{name}");
        assert!(!o.applied.merged, "{name}");
    }
}

#[test]
fn a_write_whose_intent_cannot_be_recorded_is_not_made() {
    for action in [arm(true), merge_abc(), update()] {
        let forge = RecordingForge::default();
        let intents = Intents {
            refuse: true,
            ..Intents::default()
        };
        let o = apply_one(&forge, intents, action.clone());
        assert!(o.writes.is_empty(), "{action:?}: {:?}", o.writes);
        let error = o.applied.error.clone().unwrap_or_default();
        assert!(
            error.contains("its intent could not be recorded first") && error.contains("full"),
            "{action:?}: {error}"
        );
        assert_eq!(o.history(), [error.as_str()], "{action:?}");
        assert!(!o.applied.merged);
        let memory = &o.plan.status.memory;
        assert!(
            memory.merge_attempted_for.is_none() || matches!(action, Action::UpdateBranch { .. }),
            "{action:?}: the merge is tried again next tick"
        );
        assert!(
            memory.update_requested_for.is_none() || !matches!(action, Action::UpdateBranch { .. }),
            "{action:?}: the update is asked again next tick"
        );
    }
}

/// An arming asked ahead with its chunk's others is neither asked again nor announced again;
/// its answer is applied by the same rules, and what it chains to is asked as usual.
#[test]
fn an_arming_answered_ahead_is_applied_without_asking_again() {
    use crate::model::outcome::{Failure, FailureKind, Outcome as Answer};
    let forge = RecordingForge::default();
    let done = apply_answered(&forge, Intents::default(), arm(true), Some(Answer::Done));
    assert!(done.writes.is_empty() && done.intents.is_empty());
    assert!(done.history().contains(&"auto-merge enabled (squash)"));

    let forge = RecordingForge::default();
    let refusal = Refusal::Unavailable("not allowed".into());
    let unavailable = Answer::Failed(Failure {
        said: refused(refusal.clone()).to_string(),
        kind: FailureKind::AutoMergeRefused(refusal),
    });
    let merged = apply_answered(&forge, Intents::default(), arm(true), Some(unavailable));
    assert_eq!(merged.writes, ["merge abc squash"]);
    assert_eq!(merged.intents, [(IntentKind::Merge, "abc".to_owned())]);
    assert!(merged.applied.merged);

    let forge = RecordingForge::default();
    let unasked = Answer::NotAsked("arm on abc not asked".into());
    let incomplete = apply_answered(&forge, Intents::default(), arm(true), Some(unasked));
    assert!(incomplete.writes.is_empty());
    assert!(incomplete.applied.error.is_some());
}

#[test]
fn a_dry_run_writes_nothing() {
    let forge = RecordingForge::default();
    let config = Config::default();
    let policy = policy();
    let mut intents = Intents::default();
    let mut plan = Plan {
        status: armed("abc").status,
        actions: vec![arm(true), merge_abc(), update(), Action::DisableAutoMerge],
        history: Vec::new(),
        seen: Vec::new(),
        next_tick_at: Some(t0()),
        resolved_intents: Vec::new(),
        needs_evidence: false,
    };
    let env = Env {
        watch_id: 1,
        config: &config,
        policy: &policy,
        owner: "owner",
        now: t0(),
        dry_run: true,
    };
    let mut writes = Writes {
        forge: &forge,
        intents: &mut intents,
        armed: None,
    };
    let applied = apply(&mut writes, &snap("abc"), &mut plan, &env);
    assert!(forge.writes().is_empty());
    assert!(intents.recorded.is_empty());
    assert!(applied.history.is_empty() && applied.outbox.is_empty());
    assert_eq!(
        plan.actions.len(),
        4,
        "the plan still says what it would do"
    );
}

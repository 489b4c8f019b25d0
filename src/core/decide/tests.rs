//! Table-driven tests of the decision core, with small builders for watches and snapshots
//! that other modules' tests reuse.

use crate::model::watch::{Ci, Merge};
use chrono::Duration;
use std::collections::BTreeMap;

use super::*;
use crate::config::NotifyKind;
use crate::model::watch::{MergeVia, Pills, Why};
use crate::model::{
    Check, CheckKind, CheckState, ForgeKind, HeadCommit, MergeMethod, MergeState, Mergeable, PrRef,
    RepoSettings, ReviewThread, Sha,
};

pub(crate) fn t0() -> Instant {
    crate::model::parse_instant("2026-11-29T12:00:00Z").unwrap()
}

pub(crate) fn policy() -> Policy {
    crate::config::Config::default().policy(None)
}

pub(crate) fn watch() -> Watch {
    Watch {
        id: 1,
        pr: PrRef {
            forge: ForgeKind::GitHub,
            repo: "octo/app".into(),
            number: 1,
        },
        job: None,
        agent: None,
        auto_fix: None,
        paused: false,
        added_at: t0(),
        status: WatchStatus::default(),
        next_tick_at: Some(t0()),
        last_tick_at: None,
        last_error: None,
        unreadable: None,
        row_digest: None,
    }
}

/// A watch that already saw head `sha` at `seen` (long enough ago to be idle).
pub(crate) fn watch_seen(sha: &str, seen: Instant) -> Watch {
    let mut w = watch();
    w.status.head_sha = Some(Sha(sha.into()));
    w.status.head_seen_at = Some(seen);
    w
}

pub(crate) fn check(name: &str, state: CheckState) -> Check {
    Check {
        name: name.into(),
        kind: CheckKind::CheckRun,
        state,
        conclusion: None,
        url: Some(format!(
            "https://github.com/octo/app/actions/runs/1/job/{name}"
        )),
        job_id: Some(7),
        run_id: Some(1),
        workflow: Some("ci".into()),
        event: Some("pull_request".into()),
        started_at: None,
        completed_at: None,
        output: String::new(),
        node_id: None,
        failure_reason: None,
        optional: false,
    }
}

pub(crate) fn snap(sha: &str) -> Snapshot {
    Snapshot {
        pr: watch().pr,
        node_id: "PR_1".into(),
        url: "https://github.com/octo/app/pull/1".into(),
        title: "Add a feature".into(),
        state: PrState::Open,
        draft: false,
        author: Some("dev".into()),
        author_can_write: false,
        head_ref: "feature".into(),
        cross_repository: false,
        head_repo: Some("octo/app".into()),
        head: HeadCommit {
            sha: Sha(sha.into()),
            author_login: Some("dev".into()),
            committer_login: Some("dev".into()),
            author_email: None,
            committer_email: None,
            committer_name: None,
            committed_at: Some(t0() - Duration::hours(1)),
            parents: vec![],
        },
        base_ref: "main".into(),
        labels: vec![],
        mergeable: Mergeable::Mergeable,
        merge_state: MergeState::Clean,
        behind_by: Some(0),
        checks: vec![check("lint", CheckState::Passed)],
        checks_source: crate::model::ChecksSource::CommitPinned,
        threads: vec![],
        reviews: vec![],
        comments: vec![],
        failed_logs: vec![],
        auto_merge_enabled: false,
        repo: RepoSettings {
            default_branch: "main".into(),
            auto_merge_allowed: true,
            allowed_methods: MergeMethod::PREFERENCE.to_vec(),
        },
        merge_queue: false,
        queue_entry: None,
        queue_failures: vec![],
        queue_unfinished: vec![],
        queue_unread: None,
        queue_removals: Vec::new(),
        update_in_progress: false,
        update_error: None,
    }
}

fn thread(resolved: bool) -> ReviewThread {
    thread_with_id("PRRT_1", resolved)
}

/// A review thread `id` without comments.
pub(crate) fn thread_with_id(id: &str, resolved: bool) -> ReviewThread {
    ReviewThread {
        id: id.into(),
        resolved,
        outdated: false,
        path: None,
        line: None,
        comments: vec![],
    }
}

#[test]
fn pills_table() {
    let old = t0() - Duration::hours(1);
    struct Case {
        what: &'static str,
        snap: Snapshot,
        want: Pills,
    }
    let failing = Snapshot {
        checks: vec![check("lint", CheckState::Failed)],
        ..snap("a")
    };
    let cases = [
        Case {
            what: "green",
            snap: snap("a"),
            want: Pills::default(),
        },
        Case {
            what: "a failed check lights ci",
            snap: failing.clone(),
            want: Pills {
                ci: Ci::Lit,
                ..Pills::default()
            },
        },
        Case {
            what: "a running check keeps ci dark until all are done",
            snap: Snapshot {
                checks: vec![
                    check("lint", CheckState::Failed),
                    check("test", CheckState::Pending),
                ],
                ..snap("a")
            },
            want: Pills::default(),
        },
        Case {
            what: "a conflict lights cnf and takes precedence over failing checks",
            snap: Snapshot {
                mergeable: Mergeable::Conflicting,
                merge_state: MergeState::Dirty,
                ..failing
            },
            want: Pills {
                cnf: true,
                ..Pills::default()
            },
        },
        Case {
            what: "unknown mergeability is no conflict",
            snap: Snapshot {
                mergeable: Mergeable::Unknown,
                merge_state: MergeState::Unknown,
                ..snap("a")
            },
            want: Pills::default(),
        },
        Case {
            what: "cmt counts unresolved threads only",
            snap: Snapshot {
                threads: vec![thread(false), thread(true), thread(false)],
                ..snap("a")
            },
            want: Pills {
                cmt: 2,
                ..Pills::default()
            },
        },
    ];
    for c in cases {
        let plan = Ctx::plain().decide(&watch_seen("a", old), &c.snap);
        assert_eq!(plan.status.pills, c.want, "{}", c.what);
    }
}

#[test]
fn cadence_table() {
    let long_ago = t0() - Duration::hours(1);
    let fast = t0() + Duration::seconds(30);
    let slow = t0() + Duration::seconds(300);
    let mut armed = watch_seen("a", long_ago);
    armed.status.merge = Merge::Armed {
        at: long_ago,
        via: None,
    };
    let recent_commit = Snapshot {
        head: HeadCommit {
            committed_at: Some(t0() - Duration::seconds(90)),
            ..snap("a").head
        },
        ..snap("a")
    };
    let cases: Vec<(&str, Watch, Snapshot, Option<Instant>)> = vec![
        (
            "idle open PR",
            watch_seen("a", long_ago),
            snap("a"),
            Some(slow),
        ),
        (
            "checks running",
            watch_seen("a", long_ago),
            Snapshot {
                checks: vec![check("t", CheckState::Pending)],
                ..snap("a")
            },
            Some(fast),
        ),
        (
            "a new head was just seen",
            watch_seen("old", long_ago),
            snap("a"),
            Some(fast),
        ),
        (
            "a commit in the last two minutes",
            watch_seen("a", long_ago),
            recent_commit,
            Some(fast),
        ),
        ("a merge is armed", armed, snap("a"), Some(fast)),
        (
            "mergeability still computing",
            watch_seen("a", long_ago),
            Snapshot {
                mergeable: Mergeable::Unknown,
                ..snap("a")
            },
            Some(fast),
        ),
        (
            "no checks yet after a push is pending",
            watch_seen("a", t0() - Duration::seconds(200)),
            Snapshot {
                checks: vec![],
                ..snap("a")
            },
            Some(fast),
        ),
        (
            "merged",
            watch_seen("a", long_ago),
            Snapshot {
                state: PrState::Merged,
                ..snap("a")
            },
            None,
        ),
        (
            "closed: looked at again within a day, in case it is reopened",
            watch_seen("a", long_ago),
            Snapshot {
                state: PrState::Closed,
                ..snap("a")
            },
            Some(t0() + Duration::hours(24)),
        ),
    ];
    for (what, w, s, want) in cases {
        assert_eq!(Ctx::plain().decide(&w, &s).next_tick_at, want, "{what}");
    }
}

#[test]
fn merged_or_closed_clears_pills_and_records_the_end() {
    let mut w = watch_seen("a", t0() - Duration::hours(1));
    w.status.pills = Pills {
        ci: Ci::Fixing,
        cnf: true,
        cmt: 3,
    };
    w.status.why = Some(Why::FixSent);
    let plan = Ctx::plain().decide(
        &w,
        &Snapshot {
            state: PrState::Merged,
            ..snap("a")
        },
    );
    assert_eq!(plan.status.state, PrState::Merged);
    assert_eq!(plan.status.pills, Pills::default());
    assert_eq!(plan.status.why, None);
    assert!(
        plan.history.iter().any(|h| h.what.starts_with("merged")),
        "{:?}",
        plan.history
    );
}

#[test]
fn a_new_head_is_recorded_once() {
    let w = watch_seen("old", t0() - Duration::hours(1));
    let plan = Ctx::plain().decide(&w, &snap("new"));
    assert_eq!(plan.status.head_sha, Some(Sha("new".into())));
    assert_eq!(plan.status.head_seen_at, Some(t0()));
    let again = Watch {
        status: plan.status.clone(),
        ..w
    };
    let mut later = Ctx::plain();
    later.now = t0() + Duration::seconds(30);
    let second = later.decide(&again, &snap("new"));
    assert_eq!(
        second.status.head_seen_at,
        Some(t0()),
        "first-seen time is kept"
    );
    assert!(
        second.history.is_empty(),
        "nothing new, nothing recorded: {:?}",
        second.history
    );
}

#[test]
fn pill_changes_are_recorded_in_history() {
    let w = watch_seen("a", t0() - Duration::hours(1));
    let failing = Snapshot {
        checks: vec![check("lint", CheckState::Failed)],
        ..snap("a")
    };
    let plan = Ctx::plain().decide(&w, &failing);
    assert_eq!(plan.history.len(), 1);
    assert_eq!(plan.history[0].what, "ci lit: lint failed");
    let lit = Watch {
        status: plan.status,
        ..w
    };
    let cleared = Ctx::plain().decide(&lit, &snap("a"));
    assert_eq!(cleared.history[0].what, "ci cleared: checks passed");
}

// ---------------------------------------------------------------------------------------
// Remediation: what each failure gets, guards and clearing.

use crate::model::Classification;
use crate::model::FailedCheck;

pub(crate) fn failed_log(name: &str, tail: &str, infra: bool) -> FailedCheck {
    FailedCheck {
        name: name.into(),
        url: Some(format!(
            "https://github.com/octo/app/actions/runs/1/job/{name}"
        )),
        job_id: Some(11),
        run_id: Some(1),
        completed_at: Some(t0() - Duration::minutes(1)),
        log_tail: tail.into(),
        classification: if infra {
            Classification::Infra {
                evidence: tail.into(),
            }
        } else {
            Classification::Real
        },
        unreadable: None,
    }
}

/// A failing snapshot on head `sha` authored by `author`.
fn failing(sha: &str, author: &str, tail: &str, infra: bool) -> Snapshot {
    let mut s = snap(sha);
    s.head.author_login = Some(author.into());
    s.head.committer_login = Some(author.into());
    s.checks = vec![check("lint", CheckState::Failed)];
    s.failed_logs = vec![failed_log("lint", tail, infra)];
    s
}

#[derive(Clone)]
pub(crate) struct Ctx {
    pub policy: Policy,
    pub logins: Vec<Login>,
    pub seen: BTreeMap<(String, String), String>,
    pub now: Instant,
    pub turn: bool,
    pub fix_asked: bool,
    pub intents: Vec<crate::model::intent::Intent>,
    pub commits_as: crate::model::viewer::Committer,
    pub emails: Vec<String>,
    /// What the forge says of the head when a decision asks; `None`: what a forge says of a
    /// head its committer pushed when it was committed.
    pub evidence: Option<crate::model::trust::Evidence>,
}

/// The forge's word on a head its committer (else its author) pushed when it was committed.
pub(crate) fn pushed_by_committer(s: &Snapshot) -> crate::model::trust::Evidence {
    let actor = s
        .head
        .committer_login
        .clone()
        .or(s.head.author_login.clone());
    crate::model::trust::Evidence {
        pushes: actor
            .map(|actor| crate::model::trust::Push {
                actor,
                before: None,
                after: s.head.sha.clone(),
                at: s.head.committed_at,
            })
            .into_iter()
            .collect(),
        commits: None,
    }
}

impl Ctx {
    pub(crate) fn new() -> Self {
        let mut policy = policy();
        policy.agent = Some("fixer".into());
        Ctx {
            policy,
            logins: vec!["fixer-bot".into()],
            seen: BTreeMap::new(),
            now: t0(),
            turn: true,
            fix_asked: false,
            intents: Vec::new(),
            commits_as: crate::model::viewer::Committer::Login("owner".into()),
            emails: Vec::new(),
            evidence: None,
        }
    }
    /// No agent configured: every failure is the owner's.
    pub(crate) fn plain() -> Self {
        Ctx {
            policy: policy(),
            ..Ctx::new()
        }
    }
    pub(crate) fn ctx(&self) -> Context<'_> {
        Context {
            policy: &self.policy,
            now: self.now,
            agent_logins: &self.logins,
            agent_emails: &self.emails,
            evidence: None,
            owner: "owner",
            commits_as: &self.commits_as,
            update_turn: self.turn,
            seen: &self.seen,
            fix_asked: self.fix_asked,
            intents: &self.intents,
            held: |text| text.replace("held-secret-value", "***"),
        }
    }
    /// Decides as the shell does: a first decision, and when it asks for the forge's word on
    /// the head, a second one with it.
    pub(crate) fn decide(&self, w: &Watch, s: &Snapshot) -> Plan {
        let plan = decide(w, s, &self.ctx());
        if !plan.needs_evidence {
            return plan;
        }
        let evidence = self
            .evidence
            .clone()
            .unwrap_or_else(|| pushed_by_committer(s));
        let second = decide(
            w,
            s,
            &Context {
                evidence: Some(&evidence),
                ..self.ctx()
            },
        );
        assert!(!second.needs_evidence, "a second decision never asks again");
        second
    }
}

pub(crate) fn sent(plan: &Plan) -> Vec<&AgentRequest> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::SendToAgent(r) => Some(r),
            _ => None,
        })
        .collect()
}

pub(crate) fn notices(plan: &Plan) -> Vec<(NotifyKind, String)> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::Notify(n) => Some((n.kind(), crate::core::report::headline(n))),
            _ => None,
        })
        .collect()
}

/// Runs `plan` forward: the watch as recorded after it.
pub(crate) fn after(w: &Watch, plan: &Plan) -> Watch {
    Watch {
        status: plan.status.clone(),
        next_tick_at: plan.next_tick_at,
        ..w.clone()
    }
}

#[test]
fn failure_table() {
    struct Row {
        what: &'static str,
        snap: Snapshot,
        tweak: fn(&mut Ctx),
        why: Why,
        ci: Ci,
        sends: usize,
        reruns: usize,
        notice: Option<NotifyKind>,
    }
    let seen_long_ago = t0() - Duration::hours(1);
    let rows = [
        Row {
            what: "agent's commit, auto-fix on: sent to the agent",
            snap: failing("a", "fixer-bot", "error: unused variable", false),
            tweak: |_| {},
            why: Why::FixSent,
            ci: Ci::Fixing,
            sends: 1,
            reruns: 0,
            notice: None,
        },
        Row {
            what: "someone else's commit: ci for the owner",
            snap: failing("a", "human", "error: unused variable", false),
            tweak: |_| {},
            why: Why::NotAgentCommit,
            ci: Ci::Lit,
            sends: 0,
            reruns: 0,
            notice: Some(NotifyKind::Ci),
        },
        Row {
            what: "auto-fix off",
            snap: failing("a", "fixer-bot", "error: unused variable", false),
            tweak: |c| c.policy.auto_fix = false,
            why: Why::AutoFixOff,
            ci: Ci::Lit,
            sends: 0,
            reruns: 0,
            notice: Some(NotifyKind::Ci),
        },
        Row {
            what: "only infrastructure failures: re-run once, no notice",
            snap: failing("a", "human", "No space left on device", true),
            tweak: |_| {},
            why: Why::InfraRerun,
            ci: Ci::Off,
            sends: 0,
            reruns: 1,
            notice: None,
        },
        Row {
            what: "the committer counts as the agent too",
            snap: {
                let mut s = failing("a", "human", "error", false);
                s.head.committer_login = Some("fixer-bot".into());
                s
            },
            tweak: |_| {},
            why: Why::FixSent,
            ci: Ci::Fixing,
            sends: 1,
            reruns: 0,
            notice: None,
        },
    ];
    for row in rows {
        let mut c = Ctx::new();
        (row.tweak)(&mut c);
        let plan = c.decide(&watch_seen("a", seen_long_ago), &row.snap);
        assert_eq!(plan.status.why, Some(row.why), "{}", row.what);
        assert_eq!(plan.status.pills.ci, row.ci, "{}", row.what);
        assert_eq!(sent(&plan).len(), row.sends, "{}", row.what);
        let reruns = plan
            .actions
            .iter()
            .filter(|a| matches!(a, Action::RerunFailed { .. }))
            .count();
        assert_eq!(reruns, row.reruns, "{}", row.what);
        assert_eq!(
            notices(&plan).first().map(|n| n.0),
            row.notice,
            "{}",
            row.what
        );
    }
}

#[test]
fn the_same_failure_on_the_same_head_is_acted_on_once() {
    let c = Ctx::new();
    let w = watch_seen("a", t0() - Duration::hours(1));
    let s = failing("a", "fixer-bot", "error: x", false);
    let first = c.decide(&w, &s);
    assert_eq!(sent(&first).len(), 1);
    let second = c.decide(&after(&w, &first), &s);
    assert!(second.actions.is_empty(), "{:?}", second.actions);
    assert!(second.history.is_empty(), "{:?}", second.history);
    assert_eq!(second.status, first.status);
}

#[test]
fn infra_failing_again_after_the_rerun_lights_ci() {
    let c = Ctx::new();
    let w = watch_seen("a", t0() - Duration::hours(1));
    let first = c.decide(&w, &failing("a", "human", "TLS handshake timeout", true));
    assert_eq!(first.status.why, Some(Why::InfraRerun));
    let mut again = failing("a", "human", "TLS handshake timeout", true);
    again.failed_logs[0].completed_at = Some(t0());
    let second = c.decide(&after(&w, &first), &again);
    assert_eq!(second.status.why, Some(Why::InfraAgain));
    assert_eq!(second.status.pills.ci, Ci::Lit);
    assert!(
        !second
            .actions
            .iter()
            .any(|a| matches!(a, Action::RerunFailed { .. })),
        "re-run once per job per head"
    );
}

#[test]
fn guards_stop_auto_fix() {
    let c = Ctx::new();
    let w = watch_seen("a", t0() - Duration::hours(1));
    // same_failure: the agent's fix fails with the same logs.
    let first = c.decide(&w, &failing("a", "fixer-bot", "error: x at line 12", false));
    let w1 = after(&w, &first);
    let second = c.decide(
        &w1,
        &failing("b", "fixer-bot", "error: x at line 13", false),
    );
    assert_eq!(second.status.why, Some(Why::SameFailure));
    assert_eq!(second.status.pills.ci, Ci::Lit);
    assert_eq!(
        notices(&second),
        vec![(
            NotifyKind::Guard,
            "auto-fix stopped: the same failure came back (lint failed)".into()
        )]
    );

    // max_attempts: three fixes with different failures, then a fourth failure.
    let mut w = watch_seen("a", t0() - Duration::hours(1));
    for (i, sha) in ["a", "b", "c"].iter().enumerate() {
        let plan = c.decide(
            &w,
            &failing(
                sha,
                "fixer-bot",
                &format!("error kind {}", ["x", "y", "z"][i]),
                false,
            ),
        );
        assert_eq!(plan.status.why, Some(Why::FixSent), "attempt {i}");
        w = after(&w, &plan);
    }
    let stop = c.decide(&w, &failing("d", "fixer-bot", "error kind w", false));
    assert_eq!(stop.status.why, Some(Why::MaxAttempts));
    assert_eq!(stop.status.attempts, 3);

    // no_new_commit: the agent says done and the head has not moved.
    let w = watch_seen("a", t0() - Duration::hours(1));
    let first = c.decide(&w, &failing("a", "fixer-bot", "error", false));
    let mut w1 = after(&w, &first);
    w1.status.memory.fix.as_mut().unwrap().done_at = Some(t0());
    let plan = c.decide(&w1, &failing("a", "fixer-bot", "error", false));
    assert_eq!(plan.status.why, Some(Why::NoNewCommit));
    assert_eq!(plan.status.pills.ci, Ci::Lit);
    // ... or the fix timeout passes.
    let mut late = Ctx::new();
    late.now = t0() + Duration::seconds(1801);
    let plan = late.decide(
        &after(&w, &first),
        &failing("a", "fixer-bot", "error", false),
    );
    assert_eq!(plan.status.why, Some(Why::NoNewCommit));
}

#[test]
fn clearing_and_reset() {
    let c = Ctx::new();
    let w = watch_seen("a", t0() - Duration::hours(1));
    let first = c.decide(&w, &failing("a", "fixer-bot", "error", false));
    assert_eq!(first.status.pills.ci, Ci::Fixing);
    // A new head's checks start: ci… clears.
    let mut running = snap("b");
    running.checks = vec![check("lint", CheckState::Pending)];
    let started = c.decide(&after(&w, &first), &running);
    assert_eq!(started.status.pills.ci, Ci::Off);
    assert_eq!(started.status.attempts, 1);
    // Checks pass: the attempt count resets.
    let passed = c.decide(&after(&w, &started), &snap("b"));
    assert_eq!(passed.status.attempts, 0);
    assert_eq!(passed.status.why, None);
}

#[test]
fn a_conflict_beats_failing_checks_and_stays_the_owners() {
    let c = Ctx::new();
    let mut s = failing("a", "fixer-bot", "error", false);
    s.mergeable = Mergeable::Conflicting;
    s.merge_state = MergeState::Dirty;
    let plan = c.decide(&watch_seen("a", t0() - Duration::hours(1)), &s);
    assert!(plan.status.pills.cnf);
    assert_ne!(plan.status.pills.ci, Ci::Lit);
    assert!(sent(&plan).is_empty());
    let mut agent = Ctx::new();
    agent.policy.conflicts = crate::config::Handler::Agent;
    let plan = agent.decide(&watch_seen("a", t0() - Duration::hours(1)), &s);
    assert_eq!(sent(&plan)[0].kind, MessageKind::Conflict);
}

#[test]
fn fix_it_bypasses_author_and_guards_but_not_trust() {
    let mut c = Ctx::new();
    c.fix_asked = true;
    let mut w = watch_seen("a", t0() - Duration::hours(1));
    w.status.attempts = 9;
    let s = failing("a", "human", "error", false);
    c.evidence = Some(pushed(&s, "owner", t0()));
    let plan = c.decide(&w, &s);
    assert_eq!(plan.status.why, Some(Why::FixAsked));
    assert_eq!(sent(&plan)[0].reason, Why::FixAsked);
    assert_eq!(sent(&plan)[0].trusted_by, "push by owner");
    c.evidence = Some(pushed(&s, "human", t0()));
    let plan = c.decide(&w, &s);
    assert!(sent(&plan).is_empty(), "the head an outsider pushed");
    assert_eq!(plan.status.why, Some(Why::UntrustedHead));
    w.status.memory.vouched_heads = vec![Sha("a".into())];
    let plan = c.decide(&w, &s);
    assert_eq!(sent(&plan)[0].trusted_by, "vouched by the owner");
}

/// The forge's word: `actor` pushed the head of `s` at `at`.
fn pushed(s: &Snapshot, actor: &str, at: Instant) -> crate::model::trust::Evidence {
    crate::model::trust::Evidence {
        pushes: vec![crate::model::trust::Push {
            actor: actor.into(),
            before: None,
            after: s.head.sha.clone(),
            at: Some(at),
        }],
        commits: None,
    }
}

/// A head's shape in [`whose_failure_and_whether_it_reaches_the_agent`].
type Shape = fn(&mut Snapshot);

/// A row of [`whose_failure_and_whether_it_reaches_the_agent`]: what it shows, the head's
/// shape, the forge's evidence (else a push by the agent, or by an outsider when the row says
/// so), the `why` wanted (none: it waits for the head's judgement) and who vouched for what
/// was sent.
type WhoseCase = (
    &'static str,
    Shape,
    Option<crate::model::trust::Evidence>,
    Option<Why>,
    Option<&'static str>,
);

fn whose_failure_cases() -> Vec<WhoseCase> {
    use crate::model::trust::{Evidence, SignedCommit};
    let app_bot = |s: &mut Snapshot| {
        s.head.author_login = None;
        s.head.committer_login = None;
        s.head.author_email = Some("209825114+claude[bot]@users.noreply.github.com".into());
        s.head.committer_name = Some("claude[bot]".into());
    };
    let signed = |verified: bool, by: &str| Evidence {
        pushes: vec![],
        commits: Some(vec![SignedCommit {
            sha: Sha("b".into()),
            verified,
            author_login: Some(by.into()),
            committer_login: Some(by.into()),
            committer_email: None,
        }]),
    };
    let none: Shape = |_| {};
    let agent_email: Shape = |s| {
        s.head.author_login = Some("mallory".into());
        s.head.committer_login = Some("mallory".into());
        s.head.author_email = Some("1+claude[bot]@users.noreply.github.com".into());
    };
    vec![
        (
            "an App bot's commit (user null) it pushed",
            app_bot,
            Some(Evidence {
                pushes: vec![],
                commits: None,
            }),
            None,
            None,
        ),
        (
            "an App bot's commit, pushed by the bot",
            app_bot,
            None,
            Some(Why::FixSent),
            Some("push by claude[bot]"),
        ),
        (
            "an outsider's commit with the agent's email",
            agent_email,
            None,
            Some(Why::UntrustedHead),
            None,
        ),
        (
            "a human's commit the agent pushed",
            none,
            None,
            Some(Why::FixSent),
            Some("push by claude[bot]"),
        ),
        (
            "signed and verified by the agent, no push listed",
            app_bot,
            Some(signed(true, "claude[bot]")),
            Some(Why::FixSent),
            Some("signatures"),
        ),
        (
            "signed by the agent, unverified",
            app_bot,
            Some(signed(false, "claude[bot]")),
            None,
            None,
        ),
    ]
}

#[test]
fn whose_failure_and_whether_it_reaches_the_agent() {
    let w = watch_seen("z", t0() - Duration::hours(1));
    let cases = whose_failure_cases();
    let mut c = Ctx::new();
    c.logins = vec!["claude[bot]".into()];
    for (what, shape, evidence, why, by) in cases {
        let mut s = failing("b", "dev", "error", false);
        shape(&mut s);
        c.evidence = Some(evidence.unwrap_or_else(|| {
            let actor = if what.contains("outsider") {
                "mallory"
            } else {
                "claude[bot]"
            };
            pushed(&s, actor, t0())
        }));
        let plan = c.decide(&w, &s);
        assert_eq!(plan.status.why, why, "{what}");
        assert_eq!(
            sent(&plan).first().map(|r| r.trusted_by.as_str()),
            by,
            "{what}"
        );
        if why.is_none() {
            assert!(notices(&plan).is_empty(), "{what}: waits, says nothing yet");
            assert_eq!(
                plan.status.memory.handled_failure, None,
                "{what}: judged again"
            );
        }
    }
}

#[test]
fn an_untrusted_head_holds_feedback_until_a_trusted_one() {
    let mut c = Ctx::new();
    c.policy.reviews = crate::config::Handler::Agent;
    let mut s = snap("b");
    s.comments = vec![crate::model::Comment {
        id: "IC_1".into(),
        database_id: Some(1),
        author: Some("owner".into()),
        body: "please fix".into(),
        url: None,
        updated_at: Some(t0()),
        created_at: Some(t0()),
        edit: None,
        pending: false,
    }];
    c.evidence = Some(pushed(&s, "mallory", t0()));
    let w = watch_seen("a", t0() - Duration::hours(1));
    let held = c.decide(&w, &s);
    assert!(sent(&held).is_empty());
    assert!(held.seen.is_empty(), "held, not handled");
    assert!(
        held.history
            .iter()
            .any(|h| h.what.contains("pushed by mallory, who is not trusted"))
    );
    // The next tick keeps the verdict: no new read, no new note.
    let again = c.decide(&after(&w, &held), &s);
    assert!(!again.needs_evidence && again.history.is_empty() && sent(&again).is_empty());
    let mut trusted = s.clone();
    trusted.head.sha = Sha("c".into());
    c.evidence = Some(pushed(&trusted, "owner", t0()));
    let plan = c.decide(&after(&w, &again), &trusted);
    assert_eq!(sent(&plan)[0].kind, MessageKind::ReviewFeedback);
}

#[test]
fn vouched_heads_are_forgotten_when_the_trust_list_narrows() {
    let mut c = Ctx::new();
    c.policy.trust = vec!["reviewer".into()];
    let s = failing("a", "mallory", "error", false);
    c.evidence = Some(pushed(&s, "mallory", t0()));
    let mut w = watch_seen("a", t0() - Duration::hours(1));
    w.status.memory.vouched_heads = vec![Sha("a".into())];
    c.logins = vec!["mallory".into()];
    let plan = c.decide(&w, &s);
    assert_eq!(sent(&plan)[0].trusted_by, "vouched by the owner");
    assert_eq!(plan.status.memory.trust_basis, ["mallory", "reviewer"]);
    let mut next = after(&w, &plan);
    next.status.memory.handled_failure = None;
    next.status.memory.last_fix_fingerprint = None;
    c.policy.trust = vec![];
    let plan = c.decide(&next, &s);
    assert!(plan.status.memory.vouched_heads.is_empty(), "forgotten");
    assert_eq!(plan.status.memory.trust_basis, ["mallory"]);
}

// ---------------------------------------------------------------------------------------
// Reconcile merge.

pub(crate) fn armed(sha: &str) -> Watch {
    let mut w = watch_seen(sha, t0() - Duration::hours(1));
    w.status.merge = Merge::Armed {
        at: t0() - Duration::hours(1),
        via: None,
    };
    w
}

#[test]
fn merge_method_choice() {
    use MergeMethod::{Merge, Rebase, Squash};
    let cases: [(Option<MergeMethod>, &[MergeMethod], Option<MergeMethod>); 6] = [
        (None, &[Squash, Merge, Rebase], Some(Squash)),
        (None, &[Merge, Rebase], Some(Merge)),
        (None, &[Rebase], Some(Rebase)),
        (Some(Rebase), &[Squash, Rebase], Some(Rebase)),
        (Some(Rebase), &[Squash, Merge], Some(Squash)),
        (None, &[], None),
    ];
    for (preferred, allowed, want) in cases {
        assert_eq!(
            merge::method(preferred, allowed),
            want,
            "{preferred:?} {allowed:?}"
        );
    }
}

#[test]
fn armed_pr_enables_auto_merge_every_tick_it_is_off() {
    let c = Ctx::new();
    let mut s = snap("a");
    s.checks = vec![check("t", CheckState::Pending)];
    let plan = c.decide(&armed("a"), &s);
    assert_eq!(plan.status.merge.via(), Some(MergeVia::AutoMerge));
    assert!(plan.actions.contains(&Action::EnableAutoMerge {
        method: MergeMethod::Squash,
        merge_if_clean: None
    }));
    // Enabled: nothing to do. Found disabled behind our back: enabled again, and said so.
    let on = Snapshot {
        auto_merge_enabled: true,
        ..s.clone()
    };
    assert!(c.decide(&after(&armed("a"), &plan), &on).actions.is_empty());
    let again = c.decide(&after(&armed("a"), &plan), &s);
    assert!(
        again
            .actions
            .iter()
            .any(|a| matches!(a, Action::EnableAutoMerge { .. }))
    );
    assert!(
        again
            .history
            .iter()
            .any(|h| h.what.contains("found disabled"))
    );
}

#[test]
fn a_clean_pr_carries_a_direct_merge_of_its_head() {
    let c = Ctx::new();
    let plan = c.decide(&armed("a"), &snap("a"));
    assert!(plan.actions.contains(&Action::EnableAutoMerge {
        method: MergeMethod::Squash,
        merge_if_clean: Some(Sha("a".into()))
    }));
}

#[test]
fn without_auto_merge_it_merges_itself_once_when_ready() {
    let c = Ctx::new();
    let mut s = snap("a");
    s.repo.auto_merge_allowed = false;
    let plan = c.decide(&armed("a"), &s);
    assert_eq!(plan.status.merge.via(), Some(MergeVia::SelfMerge));
    assert!(plan.actions.contains(&Action::Merge {
        sha: Sha("a".into()),
        method: MergeMethod::Squash
    }));
    let second = c.decide(&after(&armed("a"), &plan), &s);
    assert!(
        !second
            .actions
            .iter()
            .any(|a| matches!(a, Action::Merge { .. })),
        "merges once per head"
    );
    // Not ready: failing checks, a draft, changes requested → no merge.
    for blocked in [
        Snapshot {
            checks: vec![check("t", CheckState::Failed)],
            ..s.clone()
        },
        Snapshot {
            draft: true,
            ..s.clone()
        },
        Snapshot {
            mergeable: Mergeable::Unknown,
            ..s.clone()
        },
    ] {
        let plan = c.decide(&armed("a"), &blocked);
        assert!(
            !plan
                .actions
                .iter()
                .any(|a| matches!(a, Action::Merge { .. })),
            "{blocked:?}"
        );
    }
}

#[test]
fn with_self_merge_off_only_the_forges_auto_merge_merges() {
    let mut c = Ctx::new();
    c.policy.self_merge = false;
    let mut s = snap("a");
    s.repo.auto_merge_allowed = false;
    let plan = c.decide(&armed("a"), &s);
    assert!(
        !plan
            .actions
            .iter()
            .any(|a| matches!(a, Action::Merge { .. })),
        "{:?}",
        plan.actions
    );
    assert!(
        plan.history
            .iter()
            .any(|h| h.what.contains("self_merge is off")),
        "{:?}",
        plan.history
    );
    let again = c.decide(&after(&armed("a"), &plan), &s);
    assert!(
        again.history.iter().all(|h| !h.what.contains("self_merge")),
        "said once per head"
    );
    // Where the forge has auto-merge, it is armed, with no direct merge of a clean head.
    s.repo.auto_merge_allowed = true;
    let plan = c.decide(&armed("a"), &s);
    assert!(plan.actions.contains(&Action::EnableAutoMerge {
        method: MergeMethod::Squash,
        merge_if_clean: None
    }));
}

#[test]
fn never_merges_what_was_not_armed() {
    let c = Ctx::new();
    let mut s = snap("a");
    s.repo.auto_merge_allowed = false;
    let plan = c.decide(&watch_seen("a", t0() - Duration::hours(1)), &s);
    assert!(
        !plan
            .actions
            .iter()
            .any(|a| matches!(a, Action::Merge { .. } | Action::EnableAutoMerge { .. }))
    );
}

#[test]
fn disarm_rules() {
    let c = Ctx::new();
    // A human pushes a new head.
    let mut pushed = snap("b");
    pushed.head.author_login = Some("human".into());
    pushed.head.committer_login = Some("human".into());
    let plan = c.decide(&armed("a"), &pushed);
    assert!(!plan.status.merge.is_armed());
    assert_eq!(notices(&plan), vec![(NotifyKind::Merge, "disarmed".into())]);
    // The agent pushes: stays armed.
    let mut agent = snap("b");
    agent.head.author_login = Some("fixer-bot".into());
    assert!(c.decide(&armed("a"), &agent).status.merge.is_armed());
    // A push after pr-monitor asked for a branch update is still a push: only a recorded
    // intent's head is pr-monitor's own.
    let mut updating = armed("a");
    updating.status.memory.update_requested_for = Some(Sha("a".into()));
    assert!(!c.decide(&updating, &pushed).status.merge.is_armed());
    // A base that is not the default branch.
    let other_base = Snapshot {
        base_ref: "release".into(),
        ..snap("a")
    };
    let plan = c.decide(&armed("a"), &other_base);
    assert!(!plan.status.merge.is_armed());
    assert!(
        plan.history
            .iter()
            .any(|h| h.what.contains("not the default branch")),
        "{:?}",
        plan.history
    );
    let mut allowed = Ctx::new();
    allowed.policy.allow_non_default_base = true;
    assert!(
        allowed
            .decide(&armed("a"), &other_base)
            .status
            .merge
            .is_armed()
    );
    // Closed.
    let plan = c.decide(
        &armed("a"),
        &Snapshot {
            state: PrState::Closed,
            ..snap("a")
        },
    );
    assert!(!plan.status.merge.is_armed());
}

/// With conflicts the agent's, a branch update carries the conflict message it would send,
/// so a conflict the update finds reaches the agent in the same tick; only for a head the
/// agent may have.
#[test]
fn a_branch_update_readies_the_conflict_message_for_the_agent() {
    let mut c = Ctx::new();
    let mut behind = Snapshot {
        behind_by: Some(2),
        merge_state: MergeState::Behind,
        ..snap("a")
    };
    // The agent's own commit, pushed by its login.
    behind.head.author_login = Some("fixer-bot".into());
    behind.head.committer_login = Some("fixer-bot".into());
    let readied = |c: &Ctx| {
        c.decide(&armed("a"), &behind)
            .actions
            .into_iter()
            .find_map(|a| match a {
                Action::UpdateBranch { on_conflict, .. } => Some(on_conflict),
                _ => None,
            })
            .expect("an update")
    };
    assert_eq!(readied(&c), None, "conflicts are the owner's");
    c.policy.conflicts = crate::config::Handler::Agent;
    let handoff = readied(&c).expect("readied");
    assert_eq!(
        (handoff.request.kind, handoff.request.agent.as_str()),
        (MessageKind::Conflict, "fixer")
    );
    assert_eq!(handoff.at, c.now);
    c.evidence = Some(crate::model::trust::Evidence {
        pushes: vec![crate::model::trust::Push {
            actor: "mallory".into(),
            before: None,
            after: Sha("a".into()),
            at: None,
        }],
        commits: None,
    });
    assert_eq!(readied(&c), None, "a head pushed by an outsider");
}

#[test]
fn behind_branches_update_one_at_a_time_per_base() {
    let mut c = Ctx::new();
    let behind = Snapshot {
        behind_by: Some(2),
        merge_state: MergeState::Behind,
        ..snap("a")
    };
    let plan = c.decide(&armed("a"), &behind);
    assert!(plan.actions.contains(&Action::UpdateBranch {
        expected_head: Sha("a".into()),
        method: crate::model::UpdateMethod::Merge,
        on_conflict: None,
    }));
    assert!(plan.status.memory.holds_update_turn);
    assert!(
        c.decide(&after(&armed("a"), &plan), &behind)
            .actions
            .iter()
            .all(|a| !matches!(a, Action::UpdateBranch { .. })),
        "once per head"
    );
    c.turn = false;
    assert!(
        !c.decide(&armed("a"), &behind)
            .actions
            .iter()
            .any(|a| matches!(a, Action::UpdateBranch { .. }))
    );

    // The queue: oldest armed first; the next only once the first is done or failing.
    let mk = |id: i64, mins: i64, behind: bool| {
        let mut w = armed("a");
        w.id = id;
        w.pr.number = u64::try_from(id).unwrap();
        w.status.base_ref = Some("main".into());
        w.status.merge = Merge::Armed {
            at: t0() - Duration::minutes(mins),
            via: None,
        };
        w.status.memory.behind = behind;
        w
    };
    let line = vec![mk(1, 10, true), mk(2, 30, true), mk(3, 20, true)];
    assert_eq!(update_turns(&line, &BTreeMap::new()), vec![2]);
    let mut failing_first = line.clone();
    failing_first[1].status.pills.ci = Ci::Lit;
    assert_eq!(update_turns(&failing_first, &BTreeMap::new()), vec![3]);
    let mut merged_first = line;
    merged_first[1].status.state = PrState::Merged;
    assert_eq!(update_turns(&merged_first, &BTreeMap::new()), vec![3]);
}

#[test]
fn effective_review_decision() {
    use crate::model::{Review, ReviewState};
    let review = |who: &str, state: ReviewState, min: i64| Review {
        id: format!("{who}{min}"),
        database_id: None,
        author: Some(who.into()),
        state,
        body: String::new(),
        url: None,
        submitted_at: Some(t0() + Duration::minutes(min)),
        updated_at: None,
        edit: None,
    };
    let mut s = snap("a");
    s.reviews = vec![
        review("r", ReviewState::ChangesRequested, 0),
        review("r", ReviewState::Approved, 5),
    ];
    assert_eq!(merge::effective_decision(&s), Some(ReviewState::Approved));
    s.reviews.push(review("r", ReviewState::Commented, 9));
    assert_eq!(
        merge::effective_decision(&s),
        Some(ReviewState::Approved),
        "COMMENTED does not override"
    );
    s.reviews
        .push(review("q", ReviewState::ChangesRequested, 1));
    assert_eq!(
        merge::effective_decision(&s),
        Some(ReviewState::ChangesRequested)
    );
}

#[test]
fn a_pr_that_does_not_move_is_reported_stuck_once() {
    let mut c = Ctx::plain();
    c.policy.stuck_after_sec = Some(7200);
    let w = watch_seen("a", t0() - Duration::hours(3));
    let plan = c.decide(&w, &snap("a"));
    assert_eq!(
        notices(&plan),
        vec![(NotifyKind::Stuck, "stuck for 3h00m".into())]
    );
    assert!(
        c.decide(&after(&w, &plan), &snap("a")).actions.is_empty(),
        "once per head"
    );
    let fresh = watch_seen("a", t0() - Duration::hours(1));
    assert!(c.decide(&fresh, &snap("a")).actions.is_empty());
}

#[test]
fn a_head_that_appeared_during_a_command_agents_run_is_the_agents() {
    let mut c = Ctx::new();
    c.policy.trust = vec!["human".into()];
    let mut w = watch_seen("a", t0() - Duration::hours(1));
    let run_end = t0() - Duration::minutes(5);
    w.status.memory.agent_run = Some((run_end - Duration::minutes(3), run_end));
    // (pushed at, committed at, the agent's): the push time judges, never the commit's date.
    for (pushed_at, committed, agents) in [
        (
            run_end - Duration::minutes(1),
            run_end - Duration::hours(1),
            true,
        ),
        (run_end + Duration::seconds(15), run_end, true),
        (run_end + Duration::seconds(16), run_end, false),
        (
            run_end - Duration::minutes(4),
            run_end - Duration::minutes(4),
            false,
        ),
        (t0(), run_end - Duration::minutes(1), false),
    ] {
        let mut s = failing("b", "human", "error", false);
        s.head.committed_at = Some(committed);
        c.evidence = Some(pushed(&s, "human", pushed_at));
        let plan = c.decide(&w, &s);
        let want = if agents {
            Why::FixSent
        } else {
            Why::NotAgentCommit
        };
        assert_eq!(plan.status.why, Some(want), "pushed at {pushed_at}");
    }
    // With no push listed, the head appeared when pr-monitor first saw it.
    let mut w = watch_seen("a", t0() - Duration::hours(1));
    w.status.memory.agent_run = Some((t0() - Duration::minutes(3), t0() - Duration::seconds(10)));
    let s = failing("b", "human", "error", false);
    c.evidence = Some(crate::model::trust::Evidence::default());
    let mut judged = w.clone();
    judged.status.memory.head_trust = Some(HeadTrust {
        sha: Sha("b".into()),
        verdict: TrustVerdict::Trusted(crate::model::trust::TrustedBy::Owner),
        pusher: None,
        pushed_at: None,
        judged_at: t0(),
    });
    let plan = c.decide(&judged, &s);
    assert_eq!(
        plan.status.why,
        Some(Why::FixSent),
        "first seen 10 s after the run"
    );
}

#[test]
fn update_branch_policy() {
    use crate::config::UpdateBranch;
    let behind = Snapshot {
        behind_by: Some(2),
        ..snap("a")
    };
    let updates = |policy: UpdateBranch, w: &Watch, turn: bool| {
        let mut c = Ctx::new();
        c.policy.update_branch = policy;
        c.turn = turn;
        c.decide(w, &behind)
            .actions
            .iter()
            .any(|a| matches!(a, Action::UpdateBranch { .. }))
    };
    let idle = watch_seen("a", t0() - Duration::hours(1));
    let cases = [
        (
            "armed policy, not armed",
            UpdateBranch::Armed,
            &idle,
            true,
            false,
        ),
        (
            "armed policy, armed, its turn",
            UpdateBranch::Armed,
            &armed("a"),
            true,
            true,
        ),
        (
            "armed policy, armed, not its turn",
            UpdateBranch::Armed,
            &armed("a"),
            false,
            false,
        ),
        (
            "always, not armed",
            UpdateBranch::Always,
            &idle,
            false,
            true,
        ),
        (
            "always, armed waits its turn",
            UpdateBranch::Always,
            &armed("a"),
            false,
            false,
        ),
        ("never", UpdateBranch::Never, &armed("a"), true, false),
    ];
    for (what, policy, w, turn, want) in cases {
        assert_eq!(updates(policy, w, turn), want, "{what}");
    }
    // Never on a conflict or a failing head: a conflict is not staleness.
    let mut c = Ctx::new();
    c.policy.update_branch = UpdateBranch::Always;
    let conflicting = Snapshot {
        mergeable: Mergeable::Conflicting,
        ..behind.clone()
    };
    assert!(
        !c.decide(&idle, &conflicting)
            .actions
            .iter()
            .any(|a| matches!(a, Action::UpdateBranch { .. }))
    );
    // One writer per branch: never while a fix is with the agent.
    let mut fixing = idle.clone();
    fixing.status.memory.fix = Some(crate::model::watch::FixInFlight {
        message_id: "m".into(),
        head_sha: Sha("a".into()),
        sent_at: t0() - Duration::minutes(1),
        done_at: None,
    });
    // (its checks still running: passing checks would end the fix)
    let running = Snapshot {
        checks: vec![check("lint", CheckState::Pending)],
        ..behind.clone()
    };
    assert!(
        !c.decide(&fixing, &running)
            .actions
            .iter()
            .any(|a| matches!(a, Action::UpdateBranch { .. })),
        "a fix is out"
    );
    assert!(
        c.decide(&idle, &running)
            .actions
            .iter()
            .any(|a| matches!(a, Action::UpdateBranch { .. })),
        "no fix out"
    );
}

#[test]
fn the_update_turn_reads_this_ticks_snapshots() {
    // Never ticked: the stored state knows nothing of behind or the base.
    let mk = |id: i64, mins: i64| {
        let mut w = armed("a");
        w.id = id;
        w.pr.number = u64::try_from(id).unwrap();
        w.status.base_ref = None;
        w.status.merge = Merge::Armed {
            at: t0() - Duration::minutes(mins),
            via: None,
        };
        w
    };
    let line = vec![mk(1, 10), mk(2, 30), mk(3, 20)];
    assert!(update_turns(&line, &BTreeMap::new()).is_empty());
    let behind = Snapshot {
        behind_by: Some(2),
        ..snap("a")
    };
    let fresh: BTreeMap<i64, &Snapshot> = [(1, &behind), (2, &behind), (3, &behind)].into();
    assert_eq!(
        update_turns(&line, &fresh),
        vec![2],
        "the oldest armed, at once"
    );
}

#[test]
fn readiness_is_one_rule_for_the_tick_and_check() {
    let criteria = merge::Criteria {
        required_labels: vec![],
        required_approvals_from: vec!["Ci-Bot".into()],
    };
    let mut s = snap("a");
    s.reviews = vec![crate::model::Review {
        id: "R1".into(),
        database_id: None,
        author: Some("ci-bot".into()),
        state: crate::model::ReviewState::Approved,
        body: String::new(),
        url: None,
        submitted_at: Some(t0()),
        updated_at: None,
        edit: None,
    }];
    let r = merge::readiness(&s, &Verdict::Passed, &criteria);
    assert!(r.ready, "approvals match logins in any letter case: {r:?}");
    assert!(merge::readiness(&s, &Verdict::NoChecks, &criteria).ready);
    assert!(!merge::readiness(&s, &Verdict::AwaitingChecks, &criteria).ready);
    let blocked = Snapshot {
        merge_state: MergeState::Blocked,
        ..s.clone()
    };
    assert!(!merge::readiness(&blocked, &Verdict::Passed, &criteria).ready);
    let unknown = Snapshot {
        mergeable: Mergeable::Unknown,
        ..s
    };
    assert!(!merge::readiness(&unknown, &Verdict::Passed, &criteria).ready);
}

/// A required label is met by the PR's label in any letter case, as a job's label filter is
/// (`config::job::RepoWatch::matches`): a PR a job picks up for `ready` is not then left
/// unarmed for `Ready`.
#[test]
fn required_labels_match_in_any_letter_case_like_job_filters() {
    let criteria = merge::Criteria {
        required_labels: vec!["Ready".into(), "Größe".into()],
        required_approvals_from: vec![],
    };
    let mut s = snap("a");
    s.labels = vec!["ready".into(), "GRÖSSE".into()];
    let r = merge::readiness(&s, &Verdict::Passed, &criteria);
    assert_eq!(r.missing_labels, vec!["Größe".to_owned()], "{r:?}");
    s.labels = vec!["READY".into(), "grÖße".into()];
    let r = merge::readiness(&s, &Verdict::Passed, &criteria);
    assert!(r.ready, "{r:?}");
    let job = crate::config::RepoWatch {
        forge: ForgeKind::GitHub,
        repo: "octo/app".into(),
        authors: vec![],
        labels: criteria.required_labels.clone(),
    };
    assert!(job.matches(None, &s.labels), "the job filter agrees");
    s.labels = vec!["ready".into()];
    assert!(!merge::readiness(&s, &Verdict::Passed, &criteria).ready);
    assert!(!job.matches(None, &s.labels));
}

/// Waiting for checks counts from one instant for the tick and for `check`
/// ([`waiting_since`]): the head's first sight, or pr-monitor's later re-run.
#[test]
fn waiting_for_checks_counts_from_the_first_sight_or_the_last_rerun() {
    let s = snap("a");
    let seen = t0() - Duration::hours(2);
    let rerun = t0() - Duration::minutes(5);
    let status = |head: Option<&str>, seen_at, rerun_at| {
        let mut w = watch().status;
        w.head_sha = head.map(|h| Sha(h.into()));
        w.head_seen_at = seen_at;
        w.memory.last_rerun_at = rerun_at;
        w
    };
    let table = [
        ("a head never seen", status(None, None, None), t0()),
        (
            "another head",
            status(Some("b"), Some(seen), Some(rerun)),
            rerun.max(t0()),
        ),
        ("seen, no re-run", status(Some("a"), Some(seen), None), seen),
        (
            "seen, re-run since",
            status(Some("a"), Some(seen), Some(rerun)),
            rerun,
        ),
        (
            "a re-run before the head was seen",
            status(Some("a"), Some(rerun), Some(seen)),
            rerun,
        ),
    ];
    for (what, before, want) in table {
        assert_eq!(waiting_since(&before, &s, t0()), want, "{what}");
    }
}

#[test]
fn agent_logins_ignore_letter_case() {
    let mut c = Ctx::new();
    c.logins = vec![Login::new("Fixer-Bot")];
    let mut s = snap("a");
    s.head.author_login = Some("fixer-bot".into());
    s.head.committer_login = Some("FIXER-BOT".into());
    let cond = condition(&watch().status, &s, &c.ctx());
    assert!(cond.agent_commit);
}

// ---------------------------------------------------------------------------------------
// Recorded intents.

fn intent(
    kind: crate::model::intent::IntentKind,
    head: &str,
    detail: &str,
) -> crate::model::intent::Intent {
    crate::model::intent::Intent {
        id: 7,
        kind,
        head: Sha(head.into()),
        detail: detail.into(),
        created_at: t0() - Duration::seconds(30),
    }
}

#[test]
fn own_branch_update_table() {
    use crate::model::intent::IntentKind::UpdateBranch;
    use crate::model::viewer::Committer;
    let github = Committer::Login("owner".into());
    let gitlab = Committer::NameAndEmail {
        name: "The Owner".into(),
        emails: vec!["1-owner@users.noreply.example".into()],
    };
    // A head `b` committed by `by` 20 s after the intent was recorded, on top of `parent`.
    let updated = |by: &str, email: Option<&str>, parent: &str| {
        let mut s = snap("b");
        s.head.author_login = Some("dev".into());
        s.head.committer_login = Some(by.into());
        s.head.committer_email = email.map(str::to_owned);
        s.head.committer_name = Some(by.into());
        s.head.committed_at = Some(t0() - Duration::seconds(10));
        s.head.parents = vec![Sha(parent.into())];
        s
    };
    let mut stale = updated("owner", None, "z");
    stale.head.committed_at = Some(t0() - Duration::hours(1));
    let noreply = Some("1-owner@users.noreply.example");
    let cases = [
        (
            "a merge update of the recorded head by the token's login",
            &github,
            updated("Owner", None, "a"),
            intent(UpdateBranch, "a", "merge"),
            true,
        ),
        (
            "someone else's merge of the base into the recorded head",
            &github,
            updated("human", None, "a"),
            intent(UpdateBranch, "a", "merge"),
            false,
        ),
        (
            "the token's login, but on top of another head",
            &github,
            updated("owner", None, "z"),
            intent(UpdateBranch, "a", "merge"),
            false,
        ),
        (
            "a rebase update rewrites every commit: who made it, and when, tells",
            &github,
            updated("owner", None, "z"),
            intent(UpdateBranch, "a", "rebase"),
            true,
        ),
        (
            "a head the token's login committed before the update was asked for",
            &github,
            stale,
            intent(UpdateBranch, "a", "rebase"),
            false,
        ),
        (
            "the head has not moved",
            &github,
            updated("owner", None, "a"),
            intent(UpdateBranch, "b", "merge"),
            false,
        ),
        (
            "a GitLab rebase: the token user's name and commit email",
            &gitlab,
            updated("The Owner", noreply, "z"),
            intent(UpdateBranch, "a", "rebase"),
            true,
        ),
        (
            "a GitLab push by someone who took the token user's name",
            &gitlab,
            updated("The Owner", Some("dana@example.com"), "z"),
            intent(UpdateBranch, "a", "rebase"),
            false,
        ),
        (
            "a GitLab commit names no username",
            &gitlab,
            updated("owner", noreply, "z"),
            intent(UpdateBranch, "a", "rebase"),
            false,
        ),
    ];
    for (what, who, s, i, own) in cases {
        assert_eq!(intents::own_update(&s, &i, who), own, "{what}");
    }
}

#[test]
fn a_recorded_branch_update_is_never_a_foreign_push() {
    let mut c = Ctx::plain();
    c.intents = vec![intent(
        crate::model::intent::IntentKind::UpdateBranch,
        "a",
        "merge",
    )];
    let mut s = snap("b");
    s.head.author_login = Some("owner".into());
    s.head.committer_login = Some("owner".into());
    s.head.parents = vec![Sha("a".into())];
    let plan = c.decide(&armed("a"), &s);
    assert!(plan.status.merge.is_armed(), "{:?}", plan.history);
    assert_eq!(plan.resolved_intents, vec![7]);
    // Without the intent, the same head is a push from elsewhere.
    c.intents.clear();
    assert!(!c.decide(&armed("a"), &s).status.merge.is_armed());
}

#[test]
fn a_background_update_that_fails_is_a_conflict_until_the_head_moves() {
    use crate::model::intent::IntentKind::UpdateBranch;
    let mut c = Ctx::plain();
    c.intents = vec![intent(UpdateBranch, "a", "rebase")];
    // Behind its base, so only the failure keeps another update from being asked.
    let failed = |in_progress: bool| {
        let mut s = snap("a");
        s.behind_by = Some(1);
        s.update_in_progress = in_progress;
        s.update_error = Some("Rebase failed. Please rebase locally".into());
        s
    };
    // Under way: the update stays open, nothing conflicts yet.
    let plan = c.decide(&armed("a"), &snap("a"));
    assert!(!plan.status.pills.cnf);
    let mut busy = snap("a");
    busy.update_in_progress = true;
    let plan = c.decide(&armed("a"), &busy);
    assert!(plan.resolved_intents.is_empty() && !plan.status.pills.cnf);
    // Failed: settled, remembered, and a conflict like any other.
    let plan = c.decide(&armed("a"), &failed(false));
    assert_eq!(plan.resolved_intents, vec![7]);
    assert!(plan.status.pills.cnf, "{:?}", plan.history);
    assert_eq!(plan.status.memory.update_failed_for, Some(Sha("a".into())));
    assert!(
        plan.history
            .iter()
            .any(|h| h.what.contains("Rebase failed")),
        "{:?}",
        plan.history
    );
    // A later read of the same head, the intent settled: still a conflict, never updated again.
    c.intents.clear();
    let mut after = armed("a");
    after.status = plan.status.clone();
    let later = c.decide(&after, &failed(false));
    assert!(later.status.pills.cnf);
    assert!(
        !later
            .actions
            .iter()
            .any(|a| matches!(a, Action::UpdateBranch { .. }))
    );
    // A merge error nobody's update of this head explains is not a conflict.
    assert!(!c.decide(&armed("a"), &failed(false)).status.pills.cnf);
    // A new head ends it.
    let mut moved = snap("b");
    moved.update_error = Some("Rebase failed. Please rebase locally".into());
    assert!(!c.decide(&after, &moved).status.pills.cnf);
}

#[test]
fn a_recorded_update_not_shown_yet_stays_open_until_the_head_moves_however_late() {
    use crate::model::intent::IntentKind::{Rerun, UpdateBranch};
    let mut c = Ctx::plain();
    c.intents = vec![intent(UpdateBranch, "a", "merge")];
    for late in [0, intents::UPDATE_SHOWS_WITHIN_SECS, 86_400] {
        c.now = t0() + Duration::seconds(late);
        let plan = c.decide(&armed("a"), &snap("a"));
        assert!(plan.resolved_intents.is_empty(), "{late} s");
    }
    let mut merged = snap("a");
    merged.state = PrState::Merged;
    assert_eq!(c.decide(&armed("a"), &merged).resolved_intents, vec![7]);
    // A kept read is read again while the update is young, or for any other open intent.
    let fresh = |intents: &[crate::model::intent::Intent], late: i64| {
        intents::wants_fresh_read(intents, t0() + Duration::seconds(late))
    };
    let update = [intent(UpdateBranch, "a", "merge")];
    // (recorded 30 s before t0)
    assert!(fresh(&update, intents::UPDATE_SHOWS_WITHIN_SECS - 31));
    assert!(!fresh(&update, intents::UPDATE_SHOWS_WITHIN_SECS - 30));
    assert!(fresh(&[intent(Rerun, "a", "a:lint")], 86_400));
    assert!(!fresh(&[], 0));
}

#[test]
fn a_recorded_rerun_counts_as_done_for_its_job_and_head() {
    let mut c = Ctx::new();
    c.intents = vec![intent(
        crate::model::intent::IntentKind::Rerun,
        "a",
        "a:lint",
    )];
    let w = watch_seen("a", t0() - Duration::hours(1));
    // The run died after the re-run: the next read still sees the old failure.
    let plan = c.decide(&w, &failing("a", "human", "TLS handshake timeout", true));
    assert!(
        !plan
            .actions
            .iter()
            .any(|a| matches!(a, Action::RerunFailed { .. })),
        "{:?}",
        plan.actions
    );
    assert_eq!(plan.status.why, Some(Why::InfraAgain));
    assert_eq!(notices(&plan).len(), 1, "the owner hears it failed again");
    assert_eq!(plan.resolved_intents, vec![7]);
}

#[test]
fn a_recorded_arm_is_remembered_when_the_forge_shows_it_on() {
    let mut c = Ctx::plain();
    c.intents = vec![intent(crate::model::intent::IntentKind::Arm, "a", "squash")];
    let mut s = snap("a");
    s.auto_merge_enabled = true;
    let plan = c.decide(&armed("a"), &s);
    assert!(plan.status.memory.auto_merge_enabled_once);
    assert_eq!(plan.resolved_intents, vec![7]);
}

#[test]
fn a_conflicted_armed_pr_asks_for_auto_merge_only_once_the_conflict_clears() {
    let c = Ctx::plain();
    let enables = |plan: &Plan| {
        plan.actions
            .iter()
            .filter(|a| matches!(a, Action::EnableAutoMerge { .. }))
            .count()
    };
    let mut conflicted = snap("a");
    conflicted.checks = vec![check("t", CheckState::Passed)];
    conflicted.mergeable = Mergeable::Conflicting;
    conflicted.merge_state = MergeState::Dirty;
    let mut w = armed("a");
    w.status.memory.auto_merge_enabled_once = true;
    // (ticks while conflicted, conflict cleared?) → auto-merge requests on the last tick.
    let cases = [
        ("first tick of a conflict", 1, false, 0),
        ("every later tick of it", 3, false, 0),
        ("the tick the conflict clears", 2, true, 1),
    ];
    for (what, conflicted_ticks, clears, want) in cases {
        let mut w = w.clone();
        let mut last = None;
        for _ in 0..conflicted_ticks {
            let plan = c.decide(&w, &conflicted);
            w = after(&w, &plan);
            last = Some(plan);
        }
        let plan = if clears {
            let mut clean = conflicted.clone();
            clean.mergeable = Mergeable::Mergeable;
            clean.merge_state = MergeState::Blocked;
            c.decide(&w, &clean)
        } else {
            last.expect("a tick")
        };
        assert_eq!(enables(&plan), want, "{what}: {:?}", plan.actions);
    }
}

#[test]
fn a_log_that_could_not_be_read_defers_the_fix_without_spending_an_attempt() {
    let c = Ctx::new();
    let w = watch_seen("a", t0() - Duration::hours(1));
    let mut unread = failing("a", "fixer-bot", "", false);
    unread.failed_logs[0].unreadable = Some("HTTP 500".into());
    let waited = c.decide(&w, &unread);
    assert!(sent(&waited).is_empty(), "{:?}", waited.actions);
    assert_eq!(waited.status.attempts, 0);
    assert_eq!(waited.status.memory.handled_failure, None);
    assert_eq!(waited.status.memory.last_fix_fingerprint, None);
    assert!(
        waited
            .history
            .iter()
            .any(|h| h.what.contains("could not be read") && h.what.contains("no attempt spent")),
        "{:?}",
        waited.history
    );
    assert_eq!(
        waited.next_tick_at,
        Some(t0() + Duration::seconds(i64::try_from(c.policy.poll_sec).unwrap())),
        "the next tick comes soon"
    );
    // The next tick reads the log: the fix goes with it, one attempt.
    let read = failing("a", "fixer-bot", "error: x", false);
    let sent_plan = c.decide(&after(&w, &waited), &read);
    assert_eq!(sent(&sent_plan).len(), 1);
    assert_eq!(sent_plan.status.attempts, 1);
    assert_eq!(sent_plan.status.memory.log_waits, 0);
    // A log that never comes is waited for a bounded number of ticks.
    let mut w = w;
    for _ in 0..remediate::MAX_LOG_WAITS {
        let plan = c.decide(&w, &unread);
        assert!(sent(&plan).is_empty());
        w = after(&w, &plan);
    }
    assert_eq!(sent(&c.decide(&w, &unread)).len(), 1);
}

#[test]
fn the_pr_author_is_trusted_only_when_the_forge_says_they_may_write() {
    use crate::config::Handler;
    use crate::model::Comment;
    // (who wrote, the PR's author may write, in `trust`) -> reaches the agent
    let cases = [
        ("dev", false, false, false, "an outsider author"),
        ("dev", true, false, true, "an author with write access"),
        ("dev", false, true, true, "an author the job trusts"),
        ("owner", false, false, true, "the owner"),
        (
            "passer-by",
            true,
            false,
            false,
            "someone else with an author who may write",
        ),
    ];
    for (who, can_write, trusted, reaches, what) in cases {
        let mut c = Ctx::new();
        c.policy.reviews = Handler::Agent;
        if trusted {
            c.policy.trust = vec![who.into()];
        }
        let mut s = snap("a");
        s.author_can_write = can_write;
        s.comments = vec![Comment {
            id: "IC_1".into(),
            database_id: None,
            author: Some(who.into()),
            body: "please change it".into(),
            url: None,
            updated_at: Some(t0()),
            created_at: Some(t0()),
            edit: None,
            pending: false,
        }];
        // A head the owner pushed: only the feedback's author decides here.
        c.evidence = Some(pushed(&s, "owner", t0()));
        let plan = c.decide(&watch_seen("a", t0() - Duration::hours(1)), &s);
        assert_eq!(!sent(&plan).is_empty(), reaches, "{what}");
    }
}

#[test]
fn the_hourly_cap_holds_work_back_and_tells_the_owner_once() {
    use crate::config::Handler;
    use crate::model::Comment;
    let mut c = Ctx::new();
    c.policy.reviews = Handler::Agent;
    c.policy.agent_messages_per_hour = Some(2);
    let mut w = watch_seen("a", t0() - Duration::hours(1));
    let mut s = snap("a");
    // A head the owner pushed: only the cap decides here.
    c.evidence = Some(pushed(&s, "owner", t0()));
    // (minutes after t0, sent, owner told)
    let steps = [
        (0, true, false),
        (10, true, false),
        (20, false, true),
        (30, false, false),
        (61, true, false),
        (62, false, true),
    ];
    for (i, (min, want_sent, want_told)) in steps.into_iter().enumerate() {
        c.now = t0() + Duration::minutes(min);
        s.comments.push(Comment {
            id: format!("IC_{i}"),
            database_id: None,
            author: Some("owner".into()),
            body: format!("comment {i}"),
            url: None,
            updated_at: Some(c.now),
            created_at: Some(c.now),
            edit: None,
            pending: false,
        });
        let plan = c.decide(&w, &s);
        assert_eq!(!sent(&plan).is_empty(), want_sent, "at +{min}m");
        let told = notices(&plan)
            .iter()
            .any(|(_, h)| h.contains("more work waits"));
        assert_eq!(told, want_told, "at +{min}m");
        for m in &plan.seen {
            c.seen.insert(m.key(), m.updated_at.clone());
        }
        w.status = plan.status;
    }
    // Nothing was lost: the held comments went in the messages after the hour passed.
    assert!(
        c.seen
            .contains_key(&("issue_comment".into(), "IC_3".into()))
    );

    let mut owner_asked = Ctx::new();
    owner_asked.policy.agent_messages_per_hour = Some(1);
    owner_asked.fix_asked = true;
    let mut full = watch_seen("a", t0() - Duration::hours(1));
    full.status.memory.agent_messages = vec![t0()];
    let failing = failing("a", "fixer-bot", "error\n", false);
    assert_eq!(
        sent(&owner_asked.decide(&full, &failing)).len(),
        1,
        "`fix` is never held"
    );
    owner_asked.fix_asked = false;
    let held = owner_asked.decide(&full, &failing);
    assert!(sent(&held).is_empty(), "auto-fix waits");
    assert_eq!(
        held.status.memory.handled_failure, None,
        "and is judged again later"
    );
}

/// A refusal to arm is remembered per head and settings: while it stands no arming is asked
/// and a ready PR is merged by pr-monitor (self_merge); a new head, another method, or (for
/// "nothing to wait for") a PR that became blocked asks the forge again.
#[test]
fn a_remembered_refusal_to_arm_is_not_asked_again() {
    let c = Ctx::new();
    let mut pending = snap("a");
    pending.checks = vec![check("t", CheckState::Pending)];
    pending.merge_state = MergeState::Unstable;
    let arms = |plan: &Plan| {
        plan.actions
            .iter()
            .filter(|a| matches!(a, Action::EnableAutoMerge { .. }))
            .count()
    };
    let refused = |clean: bool| {
        let mut w = armed("a");
        w.status.memory.arm_refused =
            Some(merge::arm_refused(&pending, MergeMethod::Squash, clean));
        w
    };
    let mut blocked = pending.clone();
    blocked.merge_state = MergeState::Blocked;
    let mut moved = pending.clone();
    moved.head.sha = Sha("b".into());
    let mut no_squash = pending.clone();
    no_squash.repo.allowed_methods = vec![MergeMethod::Merge];
    // The head moved to `b` (seen by an earlier tick, so nothing disarms).
    let mut on_b = refused(false);
    on_b.status.head_sha = Some(Sha("b".into()));
    let table: [(&str, Watch, &Snapshot, usize); 6] = [
        ("never refused", armed("a"), &pending, 1),
        ("refused for this head", refused(false), &pending, 0),
        (
            "refused as clean, still unblocked",
            refused(true),
            &pending,
            0,
        ),
        (
            "refused as clean, blocked since",
            refused(true),
            &blocked,
            1,
        ),
        ("refused for another head", on_b, &moved, 1),
        ("refused for another method", refused(false), &no_squash, 1),
    ];
    for (what, w, s, want) in table {
        let plan = c.decide(&w, s);
        assert_eq!(arms(&plan), want, "{what}: {:?}", plan.actions);
        assert_eq!(
            plan.status.memory.arm_refused.is_some(),
            want == 0 && w.status.memory.arm_refused.is_some(),
            "{what}: a refusal that no longer stands is forgotten"
        );
    }
    // Refused and now ready: pr-monitor merges the head itself, once.
    let plan = c.decide(&refused(false), &snap("a"));
    assert_eq!(arms(&plan), 0);
    assert!(
        plan.actions.contains(&Action::Merge {
            sha: Sha("a".into()),
            method: MergeMethod::Squash
        }),
        "{:?}",
        plan.actions
    );
}

/// `merge --now` refuses a PR it cannot merge, each for its reason; an open, clean PR passes.
#[test]
fn merge_now_refuses_what_it_cannot_merge() {
    use crate::model::{Mergeable, PrState};
    type Change = fn(&mut Snapshot);
    let cases: [(&str, Change, Option<&str>); 5] = [
        ("clean", |_| {}, None),
        (
            "queued base",
            |s| s.merge_queue = true,
            Some("merges into `main` only through the merge queue; use merge --when-ready"),
        ),
        ("draft", |s| s.draft = true, Some("is a draft")),
        (
            "conflict",
            |s| s.mergeable = Mergeable::Conflicting,
            Some("conflicts with main"),
        ),
        ("closed", |s| s.state = PrState::Closed, Some("is closed")),
    ];
    for (name, change, refusal) in cases {
        let mut s = snap("abc");
        change(&mut s);
        assert_eq!(merge::merge_now_refusal(&s).as_deref(), refusal, "{name}");
    }
}

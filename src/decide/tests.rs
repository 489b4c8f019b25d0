//! Table-driven tests of the decision core, with small builders for watches and snapshots
//! that other modules' tests reuse.

use chrono::{DateTime, Duration, Utc};

use super::*;
use crate::model::{
    Check, CheckKind, CheckState, ForgeKind, HeadCommit, MergeMethod, MergeState, Mergeable, PrRef, RepoSettings,
    ReviewThread, Sha,
};
use crate::watch::Why;

pub(crate) fn t0() -> Instant {
    DateTime::parse_from_rfc3339("2026-11-29T12:00:00Z").unwrap().with_timezone(&Utc)
}

pub(crate) fn policy() -> Policy {
    crate::config::Config::default().policy(None)
}

pub(crate) fn watch() -> Watch {
    Watch {
        id: 1,
        pr: PrRef { forge: ForgeKind::GitHub, repo: "octo/app".into(), number: 1 },
        job: None,
        agent: None,
        auto_fix: None,
        paused: false,
        added_at: t0(),
        status: WatchStatus::default(),
        next_tick_at: Some(t0()),
        last_tick_at: None,
        last_error: None,
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
        url: Some(format!("https://github.com/octo/app/actions/runs/1/job/{name}")),
        job_id: Some(7),
        run_id: Some(1),
        workflow: Some("ci".into()),
        event: Some("pull_request".into()),
        started_at: None,
        completed_at: None,
        output: String::new(),
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
        head_ref: "feature".into(),
        cross_repository: false,
        head: HeadCommit {
            sha: Sha(sha.into()),
            author_login: Some("dev".into()),
            committer_login: Some("dev".into()),
            committed_at: Some(t0() - Duration::hours(1)),
        },
        base_ref: "main".into(),
        labels: vec![],
        mergeable: Mergeable::Mergeable,
        merge_state: MergeState::Clean,
        behind_by: Some(0),
        checks: vec![check("lint", CheckState::Passed)],
        checks_source: "commit-pinned".into(),
        threads: vec![],
        reviews: vec![],
        comments: vec![],
        auto_merge_enabled: false,
        repo: RepoSettings {
            default_branch: "main".into(),
            auto_merge_allowed: true,
            allowed_methods: MergeMethod::PREFERENCE.to_vec(),
        },
    }
}

fn thread(resolved: bool) -> ReviewThread {
    ReviewThread { id: "PRRT_1".into(), resolved, outdated: false, path: None, line: None, comments: vec![] }
}

#[test]
fn pills_table() {
    let old = t0() - Duration::hours(1);
    struct Case {
        what: &'static str,
        snap: Snapshot,
        want: Pills,
    }
    let failing = Snapshot { checks: vec![check("lint", CheckState::Failed)], ..snap("a") };
    let cases = [
        Case { what: "green", snap: snap("a"), want: Pills::default() },
        Case { what: "a failed check lights ci", snap: failing.clone(), want: Pills { ci: true, ..Pills::default() } },
        Case {
            what: "a running check keeps ci dark until all are done",
            snap: Snapshot {
                checks: vec![check("lint", CheckState::Failed), check("test", CheckState::Pending)],
                ..snap("a")
            },
            want: Pills::default(),
        },
        Case {
            what: "a conflict lights cnf and takes precedence over failing checks",
            snap: Snapshot { mergeable: Mergeable::Conflicting, merge_state: MergeState::Dirty, ..failing },
            want: Pills { cnf: true, ..Pills::default() },
        },
        Case {
            what: "unknown mergeability is no conflict",
            snap: Snapshot { mergeable: Mergeable::Unknown, merge_state: MergeState::Unknown, ..snap("a") },
            want: Pills::default(),
        },
        Case {
            what: "cmt counts unresolved threads only",
            snap: Snapshot { threads: vec![thread(false), thread(true), thread(false)], ..snap("a") },
            want: Pills { cmt: 2, ..Pills::default() },
        },
    ];
    for c in cases {
        let plan = decide(&watch_seen("a", old), &c.snap, &policy(), t0());
        assert_eq!(plan.status.pills, c.want, "{}", c.what);
        assert_eq!(plan.status.why, None, "{}", c.what);
    }
}

#[test]
fn cadence_table() {
    let p = policy();
    let long_ago = t0() - Duration::hours(1);
    let fast = t0() + Duration::seconds(30);
    let slow = t0() + Duration::seconds(300);
    let mut armed = watch_seen("a", long_ago);
    armed.status.merge_armed = true;
    let recent_commit = Snapshot {
        head: HeadCommit { committed_at: Some(t0() - Duration::seconds(90)), ..snap("a").head },
        ..snap("a")
    };
    let cases: Vec<(&str, Watch, Snapshot, Option<Instant>)> = vec![
        ("idle open PR", watch_seen("a", long_ago), snap("a"), Some(slow)),
        (
            "checks running",
            watch_seen("a", long_ago),
            Snapshot { checks: vec![check("t", CheckState::Pending)], ..snap("a") },
            Some(fast),
        ),
        ("a new head was just seen", watch_seen("old", long_ago), snap("a"), Some(fast)),
        ("a commit in the last two minutes", watch_seen("a", long_ago), recent_commit, Some(fast)),
        ("a merge is armed", armed, snap("a"), Some(fast)),
        (
            "mergeability still computing",
            watch_seen("a", long_ago),
            Snapshot { mergeable: Mergeable::Unknown, ..snap("a") },
            Some(fast),
        ),
        (
            "no checks yet after a push is pending",
            watch_seen("a", t0() - Duration::seconds(200)),
            Snapshot { checks: vec![], ..snap("a") },
            Some(fast),
        ),
        ("merged", watch_seen("a", long_ago), Snapshot { state: PrState::Merged, ..snap("a") }, None),
        ("closed", watch_seen("a", long_ago), Snapshot { state: PrState::Closed, ..snap("a") }, None),
    ];
    for (what, w, s, want) in cases {
        assert_eq!(decide(&w, &s, &p, t0()).next_tick_at, want, "{what}");
    }
}

#[test]
fn merged_or_closed_clears_pills_and_records_the_end() {
    let mut w = watch_seen("a", t0() - Duration::hours(1));
    w.status.pills = Pills { ci: true, ci_fixing: true, cnf: true, cmt: 3 };
    w.status.why = Some(Why::FixSent);
    let plan = decide(&w, &Snapshot { state: PrState::Merged, ..snap("a") }, &policy(), t0());
    assert_eq!(plan.status.state, PrState::Merged);
    assert_eq!(plan.status.pills, Pills::default());
    assert_eq!(plan.status.why, None);
    assert!(plan.history.iter().any(|h| h.what.starts_with("merged")), "{:?}", plan.history);
}

#[test]
fn a_new_head_is_recorded_once() {
    let w = watch_seen("old", t0() - Duration::hours(1));
    let plan = decide(&w, &snap("new"), &policy(), t0());
    assert_eq!(plan.status.head_sha, Some(Sha("new".into())));
    assert_eq!(plan.status.head_seen_at, Some(t0()));
    let again = Watch { status: plan.status.clone(), ..w };
    let second = decide(&again, &snap("new"), &policy(), t0() + Duration::seconds(30));
    assert_eq!(second.status.head_seen_at, Some(t0()), "first-seen time is kept");
    assert!(second.history.is_empty(), "nothing new, nothing recorded: {:?}", second.history);
}

#[test]
fn pill_changes_are_recorded_in_history() {
    let w = watch_seen("a", t0() - Duration::hours(1));
    let failing = Snapshot { checks: vec![check("lint", CheckState::Failed)], ..snap("a") };
    let plan = decide(&w, &failing, &policy(), t0());
    assert_eq!(plan.history.len(), 1);
    assert_eq!(plan.history[0].what, "ci lit: lint failed");
    let lit = Watch { status: plan.status, ..w };
    let cleared = decide(&lit, &snap("a"), &policy(), t0());
    assert_eq!(cleared.history[0].what, "ci cleared");
}

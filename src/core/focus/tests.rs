//! The focused payload, field by field, and new-versus-seen across polls.

use chrono::Duration;
use serde_json::{Value, json};

use super::*;
use crate::core::decide::tests::{check, snap, t0};
use crate::model::{Comment, Mergeable, Review, ReviewThread};

/// The payload with the checks' verdict the tick would give a head it saw long ago.
/// As printed.
fn payload(s: &Snapshot, seen: &Seen, criteria: &Criteria, full: bool) -> (Value, Marks) {
    with_events(s, seen, criteria, full.then_some(&[]))
}

/// [`payload`], full with `events` when they are given.
fn with_events(
    s: &Snapshot,
    seen: &Seen,
    criteria: &Criteria,
    events: Option<&[IssueEvent]>,
) -> (Value, Marks) {
    let verdict = checks::verdict(&s.checks, t0(), t0(), 0, None);
    let (p, marks) = super::payload(s, seen, criteria, (&verdict, None), events);
    (p.to_json().unwrap(), marks)
}

fn comment(id: &str, who: &str, body: &str, min: i64) -> Comment {
    Comment {
        id: id.into(),
        database_id: Some(1),
        author: Some(who.into()),
        body: body.into(),
        url: None,
        updated_at: Some(t0() + Duration::minutes(min)),
        created_at: None,
        edit: None,
        pending: false,
    }
}

fn thread(id: &str, resolved: bool, comments: &[(&str, &str, i64)]) -> ReviewThread {
    ReviewThread {
        id: id.into(),
        resolved,
        outdated: false,
        path: Some("src/a.rs".into()),
        line: Some(3),
        comments: comments
            .iter()
            .enumerate()
            .map(|(i, (who, body, min))| Comment {
                id: format!("{id}-c{i}"),
                database_id: Some(100 + i as u64),
                author: Some((*who).into()),
                body: (*body).into(),
                url: None,
                updated_at: Some(t0() + Duration::minutes(*min)),
                created_at: None,
                edit: None,
                pending: false,
            })
            .collect(),
    }
}

fn busy() -> Snapshot {
    let mut s = snap("a");
    s.checks = vec![
        check("lint", CheckState::Failed),
        check("test", CheckState::Passed),
    ];
    s.comments = vec![comment("IC_1", "reviewer", "please add docs", 1)];
    s.threads = vec![
        thread("PRRT_1", false, &[("reviewer", "rename this", 2)]),
        thread("PRRT_2", true, &[("reviewer", "ok", 2)]),
    ];
    s.reviews = vec![Review {
        id: "PRR_1".into(),
        database_id: Some(9),
        author: Some("reviewer".into()),
        state: ReviewState::ChangesRequested,
        body: "needs work".into(),
        url: None,
        submitted_at: Some(t0()),
        updated_at: Some(t0()),
        edit: None,
    }];
    s
}

#[test]
fn first_poll_lists_everything_second_lists_nothing_new() {
    let s = busy();
    let mut seen = Seen::default();
    let (p, marks) = payload(&s, &seen, &Criteria::default(), false);
    assert_eq!(p["checks"]["failed"], 1);
    assert_eq!(p["checks"]["failedChecks"][0]["name"], "lint");
    assert_eq!(p["comments"]["newIssueCommentIds"], json!(["IC_1"]));
    assert_eq!(
        p["comments"]["newReviewCommentIds"],
        json!(["PRRT_1-c0", "PRRT_2-c0"])
    );
    assert_eq!(p["threads"]["unresolved"], 1);
    assert_eq!(p["threads"]["unresolvedNewThreadIds"], json!(["PRRT_1"]));
    assert_eq!(
        p["threadDetails"]["PRRT_1"]["comments"][0]["databaseId"],
        100
    );
    assert_eq!(p["reviews"]["effectiveDecision"], "CHANGES_REQUESTED");
    assert_eq!(
        p["actionable"],
        json!([
            "failed_checks",
            "issue_comments",
            "review_comments",
            "unresolved_review_threads",
            "changes_requested"
        ])
    );
    apply_marks(&mut seen, &marks);
    let (p2, _) = payload(&s, &seen, &Criteria::default(), false);
    assert_eq!(p2["comments"]["newIssueCommentIds"], json!([]));
    assert_eq!(p2["comments"]["newReviewCommentIds"], json!([]));
    assert_eq!(p2["threads"]["unresolvedNew"], 0);
    assert_eq!(p2["reviews"]["newReviewIds"], json!([]));
    assert_eq!(
        p2["actionable"],
        json!(["failed_checks", "changes_requested"]),
        "state, not news, stays actionable"
    );
    assert_eq!(p2["headPushedRecently"], false);
}

#[test]
fn edits_and_replies_on_resolved_threads_are_new() {
    let mut s = busy();
    let mut seen = Seen::default();
    let marks = payload(&s, &seen, &Criteria::default(), false).1;
    apply_marks(&mut seen, &marks);
    s.comments[0].body = "please add docs (edited)".into();
    s.comments[0].updated_at = Some(t0() + Duration::minutes(30));
    s.threads[1].comments.push(Comment {
        id: "PRRT_2-c1".into(),
        database_id: Some(200),
        author: Some("reviewer".into()),
        body: "actually, one more thing".into(),
        url: None,
        updated_at: Some(t0() + Duration::minutes(31)),
        created_at: None,
        edit: None,
        pending: false,
    });
    let (p, _) = payload(&s, &seen, &Criteria::default(), false);
    assert_eq!(p["comments"]["newIssueCommentIds"], json!(["IC_1"]));
    assert_eq!(p["comments"]["newReviewCommentIds"], json!(["PRRT_2-c1"]));
    assert!(
        p["threadDetails"]["PRRT_2"].is_object(),
        "a new reply on a resolved thread is shown"
    );
}

#[test]
fn merge_signals_and_head_push() {
    let mut s = snap("b");
    s.mergeable = Mergeable::Conflicting;
    s.merge_state = MergeState::Dirty;
    let seen = Seen {
        head: Some("a".into()),
        ..Seen::default()
    };
    let (p, _) = payload(&s, &seen, &Criteria::default(), false);
    assert_eq!(p["merge"]["hasConflicts"], true);
    assert_eq!(p["actionable"], json!(["merge_conflict"]));
    assert_eq!(p["headPushedRecently"], true);
    let behind = Snapshot {
        behind_by: Some(3),
        ..snap("a")
    };
    assert_eq!(
        payload(&behind, &Seen::default(), &Criteria::default(), false).0["actionable"],
        json!(["stale_branch"])
    );
    let unknown = Snapshot {
        mergeable: Mergeable::Unknown,
        merge_state: MergeState::Unknown,
        ..snap("a")
    };
    let (p, _) = payload(&unknown, &Seen::default(), &Criteria::default(), false);
    assert_eq!(
        p["merge"]["hasConflicts"], false,
        "UNKNOWN is not a conflict"
    );
    assert_eq!(p["merge"]["mergeable"], "UNKNOWN");
}

#[test]
fn readiness_criteria() {
    let s = snap("a");
    let criteria = Criteria {
        required_labels: vec!["automerge".into()],
        required_approvals_from: vec!["bot".into()],
    };
    let (p, _) = payload(&s, &Seen::default(), &criteria, false);
    assert_eq!(p["ready"], false);
    assert_eq!(p["readiness"]["missingLabels"], json!(["automerge"]));
    let (p, _) = payload(&s, &Seen::default(), &Criteria::default(), false);
    assert_eq!(p["ready"], true);
}

#[test]
fn counts_are_numbers_and_lists_are_lists() {
    let (p, _) = payload(&busy(), &Seen::default(), &Criteria::default(), false);
    for (obj, key) in [
        ("checks", "total"),
        ("checks", "failed"),
        ("checks", "pending"),
        ("checks", "passed"),
        ("threads", "unresolved"),
        ("threads", "unresolvedNew"),
        ("threads", "unresolvedUpdatedSinceHead"),
        ("comments", "totalIssueComments"),
        ("comments", "totalReviewComments"),
        ("reviews", "total"),
    ] {
        assert!(p[obj][key].is_number(), "{obj}.{key}");
    }
    for (obj, key) in [
        ("checks", "pendingNames"),
        ("comments", "newIssueCommentIds"),
        ("threads", "unresolvedThreadIds"),
        ("reviews", "newReviews"),
    ] {
        assert!(p[obj][key].is_array(), "{obj}.{key}");
    }
}

#[test]
fn conflict_files_are_known_only_where_there_is_no_conflict() {
    let analysis = |mergeable| {
        let s = Snapshot {
            mergeable,
            ..snap("a")
        };
        let (p, _) = payload(&s, &Seen::default(), &Criteria::default(), false);
        assert_eq!(p["merge"]["conflictFiles"], json!([]));
        p["merge"]["conflictAnalysisAvailable"].clone()
    };
    assert_eq!(
        analysis(Mergeable::Mergeable),
        true,
        "clean: no file conflicts"
    );
    assert_eq!(
        analysis(Mergeable::Conflicting),
        false,
        "the forge names no file"
    );
    assert_eq!(analysis(Mergeable::Unknown), false, "not computed yet");
}

#[test]
fn conflict_files_told_by_the_forge_are_listed_with_their_analysis() {
    let verdict = checks::verdict(&[], t0(), t0(), 0, None);
    let files = vec!["src/a.rs".to_owned()];
    let with = |mergeable| {
        let s = Snapshot {
            mergeable,
            ..snap("a")
        };
        super::payload(
            &s,
            &Seen::default(),
            &Criteria::default(),
            (&verdict, Some(&files)),
            Some(&[]),
        )
        .0
        .to_json()
        .unwrap()
    };
    let p = with(Mergeable::Conflicting);
    assert_eq!(p["merge"]["conflictFiles"], json!(["src/a.rs"]));
    assert_eq!(p["merge"]["conflictAnalysisAvailable"], true);
    assert_eq!(p["merge_conflicts"], json!([{"path": "src/a.rs"}]));
    let clean = with(Mergeable::Mergeable);
    assert_eq!(
        clean["merge"]["conflictFiles"],
        json!([]),
        "no conflict, no files"
    );
    assert_eq!(clean["merge"]["conflictAnalysisAvailable"], true);
}

#[test]
fn the_full_payload_carries_the_raw_lists_under_their_names() {
    let (p, _) = payload(&busy(), &Seen::default(), &Criteria::default(), false);
    for key in [
        "review_comments",
        "merge_conflicts",
        "issue_comments",
        "review_threads",
        "issue_events",
    ] {
        assert!(p.get(key).is_none(), "{key} only with --full-payload");
    }
    let (p, _) = payload(&busy(), &Seen::default(), &Criteria::default(), true);
    assert_eq!(p["review_comments"].as_array().map(Vec::len), Some(2));
    assert_eq!(p["review_comments"][0]["thread_id"], "PRRT_1");
    assert_eq!(p["review_comments"][0]["body"], "rename this");
    assert_eq!(p["review_comments"][0]["path"], "src/a.rs");
    assert_eq!(p["merge_conflicts"], json!([]));
    assert_eq!(p["issue_comments"][0]["id"], "IC_1");
    assert_eq!(p["issue_events"], json!([]));
    let pushed = IssueEvent::new(9, "head_ref_force_pushed", Some("dev".into()), Some(t0()));
    let (p, _) = with_events(
        &busy(),
        &Seen::default(),
        &Criteria::default(),
        Some(&[pushed]),
    );
    assert_eq!(p["issue_events"][0]["event"], "head_ref_force_pushed");
    assert_eq!(p["issue_events"][0]["actor"]["login"], "dev");
}

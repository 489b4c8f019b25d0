//! Tests of `forge::github::wire`.

use super::*;

#[test]
fn required_checks_are_told_only_for_the_head_and_a_whole_page() {
    let answer = |oid: &str, more: bool| -> Conn<RequiredWrap> {
        serde_json::from_value(serde_json::json!({"nodes": [{"commit": {"oid": oid,
        "statusCheckRollup": {"contexts": {"pageInfo": {"hasNextPage": more}, "nodes": [
            {"__typename": "CheckRun", "name": "test", "isRequired": true},
            {"__typename": "CheckRun", "name": "lint", "isRequired": false},
            {"__typename": "StatusContext", "context": "ci/legacy", "isRequired": true},
        ]}}}}]}))
        .unwrap()
    };
    assert_eq!(
        required_names(answer("a", false), "a"),
        Some(vec!["test".to_owned(), "ci/legacy".to_owned()])
    );
    assert_eq!(
        required_names(answer("b", false), "a"),
        None,
        "another head"
    );
    assert_eq!(
        required_names(answer("a", true), "a"),
        None,
        "more than a page"
    );
}

#[test]
fn check_run_buckets_follow_gh() {
    let cases = [
        ("COMPLETED", Some("SUCCESS"), CheckState::Passed),
        ("COMPLETED", Some("FAILURE"), CheckState::Failed),
        ("COMPLETED", Some("TIMED_OUT"), CheckState::Failed),
        ("COMPLETED", Some("CANCELLED"), CheckState::Failed),
        ("COMPLETED", Some("ACTION_REQUIRED"), CheckState::Failed),
        ("COMPLETED", Some("STARTUP_FAILURE"), CheckState::Failed),
        ("COMPLETED", Some("NEUTRAL"), CheckState::Skipped),
        ("COMPLETED", Some("SKIPPED"), CheckState::Skipped),
        ("COMPLETED", Some("STALE"), CheckState::Pending),
        ("IN_PROGRESS", None, CheckState::Pending),
        ("QUEUED", None, CheckState::Pending),
        ("WAITING", None, CheckState::Pending),
    ];
    for (status, conclusion, want) in cases {
        assert_eq!(
            run_state(status, conclusion),
            want,
            "{status} {conclusion:?}"
        );
    }
    assert_eq!(status_state("ERROR"), CheckState::Failed);
    assert_eq!(status_state("EXPECTED"), CheckState::Pending);
}

//! Tests of `forge::gitlab::wire`.

use super::*;

#[test]
fn detailed_merge_status_maps_onto_mergeable_and_state() {
    let cases = [
        ("conflict", false, Mergeable::Conflicting, MergeState::Dirty),
        ("mergeable", true, Mergeable::Conflicting, MergeState::Dirty),
        ("checking", false, Mergeable::Unknown, MergeState::Unknown),
        (
            "approvals_syncing",
            false,
            Mergeable::Unknown,
            MergeState::Unknown,
        ),
        ("mergeable", false, Mergeable::Mergeable, MergeState::Clean),
        (
            "need_rebase",
            false,
            Mergeable::Mergeable,
            MergeState::Behind,
        ),
        (
            "not_approved",
            false,
            Mergeable::Mergeable,
            MergeState::Blocked,
        ),
        (
            "ci_still_running",
            false,
            Mergeable::Mergeable,
            MergeState::Blocked,
        ),
        (
            "requested_changes",
            false,
            Mergeable::Mergeable,
            MergeState::Blocked,
        ),
        (
            "something_new",
            false,
            Mergeable::Mergeable,
            MergeState::Blocked,
        ),
        (
            "draft_status",
            false,
            Mergeable::Mergeable,
            MergeState::Draft,
        ),
        (
            "draft_status",
            true,
            Mergeable::Conflicting,
            MergeState::Draft,
        ),
    ];
    for (status, conflicts, mergeable, state) in cases {
        assert_eq!(
            merge_status(Some(status), None, conflicts),
            (mergeable, state),
            "{status} {conflicts}"
        );
    }
    assert_eq!(
        merge_status(None, Some("cannot_be_merged"), false).0,
        Mergeable::Conflicting
    );
}

#[test]
fn job_states_follow_gitlab() {
    assert_eq!(check_state("failed", true), CheckState::Skipped);
    assert_eq!(check_state("failed", false), CheckState::Failed);
    assert_eq!(check_state("canceled", false), CheckState::Failed);
    assert_eq!(check_state("manual", false), CheckState::Skipped);
    for s in [
        "created",
        "pending",
        "running",
        "waiting_for_resource",
        "preparing",
        "scheduled",
    ] {
        assert_eq!(check_state(s, false), CheckState::Pending, "{s}");
    }
}

fn car(status: &str, pipeline: Option<&str>) -> TrainCar {
    TrainCar {
        merge_request: CarMergeRequest { iid: 1 },
        status: status.into(),
        pipeline: pipeline.map(|p| Pipeline {
            id: 9,
            sha: "abc".into(),
            git_ref: None,
            status: Some(p.into()),
        }),
        created_at: Some("2026-11-29T12:00:00Z".into()),
    }
}

#[test]
fn train_cars_map_onto_queue_states() {
    let cases = [
        ("idle", Some("created"), Some(QueueState::Queued)),
        ("stale", Some("running"), Some(QueueState::Queued)),
        ("fresh", Some("running"), Some(QueueState::AwaitingChecks)),
        ("fresh", None, Some(QueueState::AwaitingChecks)),
        ("fresh", Some("success"), Some(QueueState::Mergeable)),
        ("fresh", Some("failed"), Some(QueueState::Unmergeable)),
        ("fresh", Some("canceled"), Some(QueueState::Unmergeable)),
        ("merging", Some("success"), Some(QueueState::Locked)),
        (
            "something_new",
            Some("pending"),
            Some(QueueState::AwaitingChecks),
        ),
        ("merged", Some("success"), None),
        ("skip_merged", Some("success"), None),
    ];
    for (status, pipeline, want) in cases {
        let got = train_entry(&car(status, pipeline), 2);
        assert_eq!(got.as_ref().map(|e| e.state), want, "{status} {pipeline:?}");
        if let Some(e) = got {
            assert_eq!(e.position, 2);
            assert_eq!(e.estimated_seconds, None);
            assert_eq!(e.group_sha, pipeline.map(|_| Sha("abc".into())));
        }
    }
}

#[test]
fn gitlabs_documented_car_is_read() {
    let body =
        include_str!("../../../../tests/fixtures/gitlab/get_merge_request_in_merge_train.json");
    let car: TrainCar = parse(body, "car").unwrap();
    assert_eq!(car.merge_request.iid, 1);
    let e = train_entry(&car, 0).unwrap();
    assert_eq!(e.state, QueueState::Queued);
    assert_eq!(
        e.group_sha,
        Some(Sha("b83d6e391c22777fca1ed3012fce84f633d7fed0".into()))
    );
    assert_eq!(e.enqueued_at, wire_time(Some("2022-10-31T19:06:06.237Z")));
}

#[test]
fn squash_option_limits_the_methods() {
    let p = |s: &str| Project {
        path_with_namespace: None,
        default_branch: Some("main".into()),
        squash_option: Some(s.into()),
        merge_trains_enabled: None,
    };
    assert_eq!(
        repo_settings(&p("never")).allowed_methods,
        [MergeMethod::Merge]
    );
    assert_eq!(
        repo_settings(&p("always")).allowed_methods,
        [MergeMethod::Squash]
    );
    assert_eq!(
        repo_settings(&p("default_off")).allowed_methods,
        [MergeMethod::Squash, MergeMethod::Merge]
    );
}

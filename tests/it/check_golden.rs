//! The `check` payload byte for byte: `check PR --json` and `check PR --json --full-payload`
//! of one representative PR, as printed. The payload's structs rely on serde_json writing
//! object keys sorted; a field renamed, added, dropped or reordered fails here. The shape is
//! the contract's (`check --json`: the focused payload).

use crate::support::env::TestEnv;
use crate::support::fake_github::at;

const REPO: &str = "octo/app";

/// A PR with one of everything the payload tells: a real failure and an infrastructure flake
/// beside a passing check and a failing commit status; a new issue comment, a review asking
/// for changes, an unresolved review thread and a resolved one; a label; and a conflict with
/// its base in two files, on a branch two commits behind.
fn representative(env: &TestEnv) {
    env.gh.world(|w| {
        w.pr(REPO, 7)
            .title("Pin the payload")
            .label("ready")
            .conflicting_in(&["src/lib.rs", "Cargo.lock"])
            .behind(2);
        w.check_run(REPO, 7, "build").success();
        w.check_run(REPO, 7, "lint")
            .failure()
            .log("error: unused variable `x`\n");
        w.check_run(REPO, 7, "test")
            .failure()
            .log("running 12 tests\nerror: failed to download crate: 502 Bad Gateway\n");
        w.status(REPO, 7, "ci/legacy")
            .failure()
            .description("legacy pipeline failed");
        w.thread(REPO, 7)
            .comment_at("reviewer", "please rename `x`", at("2026-11-29T11:00:00Z"))
            .unresolved();
        w.thread(REPO, 7)
            .comment_at("reviewer", "fine", at("2026-11-29T10:00:00Z"))
            .resolved();
        w.comment(REPO, 7, "reviewer", "please add docs")
            .at(at("2026-11-29T10:15:00Z"));
        w.review(REPO, 7, "reviewer")
            .changes_requested()
            .body("Needs tests.")
            .at(at("2026-11-29T10:30:00Z"));
    });
}

/// The payload as printed: its top-level fields, in the order given, and a newline.
fn printed(fields: &[&str]) -> String {
    format!("{{{}}}\n", fields.join(","))
}

#[test]
fn the_focused_payload_is_printed_as_pinned() {
    let env = TestEnv::new();
    representative(&env);
    let out = env.ok(&["check", "octo/app#7", "--json", "--no-state"]);
    let want = printed(&[
        ACTIONABLE,
        CHECKS,
        COMMENTS,
        HAS_ACTIONABLE,
        HEAD_PUSHED_RECENTLY,
        MERGE,
        PR,
        READINESS,
        READY,
        REVIEWS,
        THREAD_DETAILS,
        THREADS,
    ]);
    assert_eq!(out.stdout, want);
}

#[test]
fn the_full_payload_adds_the_raw_lists_as_pinned() {
    let env = TestEnv::new();
    representative(&env);
    let out = env.ok(&[
        "check",
        "octo/app#7",
        "--json",
        "--no-state",
        "--full-payload",
    ]);
    let want = printed(&[
        ACTIONABLE,
        CHECKS,
        COMMENTS,
        COMMIT_CHECK_RUNS,
        COMMIT_STATUSES,
        HAS_ACTIONABLE,
        HEAD_PUSHED_RECENTLY,
        ISSUE_COMMENTS,
        ISSUE_EVENTS,
        MERGE,
        MERGE_CONFLICTS,
        PR,
        PR_CHECKS,
        READINESS,
        READY,
        REVIEW_COMMENTS,
        REVIEW_THREADS,
        REVIEWS,
        REVIEWS_RAW,
        THREAD_DETAILS,
        THREADS,
    ]);
    assert_eq!(out.stdout, want);
}

const ACTIONABLE: &str = concat!(
    r#""actionable":["failed_checks","issue_comments","#,
    r#""review_comments","unresolved_review_threads","changes_requested","merge_conflict"]"#,
);

const CHECKS: &str = concat!(
    r#""checks":{"failed":3,"failedChecks":[{"name":"ci/legacy","#,
    r#""url":null},{"name":"lint","url":"https://github.com/octo/app/actions/runs/12000000013/job/40000000016"},"#,
    r#"{"name":"test","url":"https://github.com/octo/app/actions/runs/12000000013/job/40000000018"}],"#,
    r#""flakes":[{"evidence":"error: failed to download crate: 502 Bad Gateway","#,
    r#""name":"test"}],"headSha":"875b9307abf550055de186dcba779207808475f0","#,
    r#""passed":1,"pending":0,"pendingNames":[],"source":"commit-pinned","total":4}"#,
);

const COMMENTS: &str = concat!(
    r#""comments":{"newIssueCommentIds":["IC_kwDOAAChABo"],"#,
    r#""newIssueComments":[{"author":"reviewer","body":"please add docs","#,
    r#""id":"IC_kwDOAAChABo"}],"newReviewCommentIds":["PRRC_kwDOAAChABU","#,
    r#""PRRC_kwDOAAChABg"],"newReviewComments":[{"author":"reviewer","#,
    r#""body":"please rename `x`","id":"PRRC_kwDOAAChABU"},"#,
    r#"{"author":"reviewer","body":"fine","id":"PRRC_kwDOAAChABg"}],"#,
    r#""totalIssueComments":1,"totalReviewComments":2}"#,
);

/// The head's check runs, as each raw list writes them (`commitCheckRuns`, `prChecks`).
macro_rules! check_runs {
    () => {
        concat!(
            r#"{"completed_at":"2026-11-29T11:59:00Z","conclusion":"success","#,
            r#""event":"pull_request","failure_reason":null,"#,
            r#""job_id":40000000009,"kind":"check_run","name":"build","#,
            r#""node_id":"CR_kwDOAAChAAg","optional":false,"#,
            r#""output":"","run_id":12000000013,"started_at":"2026-11-29T11:55:00Z","#,
            r#""state":"passed","url":"https://github.com/octo/app/actions/runs/12000000013/job/40000000009","#,
            r#""workflow":"CI"},{"completed_at":"2026-11-29T11:59:00Z","#,
            r#""conclusion":"failure","event":"pull_request","#,
            r#""failure_reason":null,"job_id":40000000016,"kind":"check_run","#,
            r#""name":"lint","node_id":"CR_kwDOAAChAA8","optional":false,"#,
            r#""output":"","run_id":12000000013,"started_at":"2026-11-29T11:55:00Z","#,
            r#""state":"failed","url":"https://github.com/octo/app/actions/runs/12000000013/job/40000000016","#,
            r#""workflow":"CI"},{"completed_at":"2026-11-29T11:59:00Z","#,
            r#""conclusion":"failure","event":"pull_request","#,
            r#""failure_reason":null,"job_id":40000000018,"kind":"check_run","#,
            r#""name":"test","node_id":"CR_kwDOAAChABE","optional":false,"#,
            r#""output":"","run_id":12000000013,"started_at":"2026-11-29T11:55:00Z","#,
            r#""state":"failed","url":"https://github.com/octo/app/actions/runs/12000000013/job/40000000018","#,
            r#""workflow":"CI"}"#,
        )
    };
}

/// The head's commit status, as each raw list writes it (`commitStatuses`, `prChecks`).
macro_rules! legacy_status {
    () => {
        concat!(
            r#"{"completed_at":null,"conclusion":"failure","#,
            r#""event":null,"failure_reason":null,"job_id":null,"#,
            r#""kind":"status","name":"ci/legacy","node_id":null,"#,
            r#""optional":false,"output":"legacy pipeline failed","#,
            r#""run_id":null,"started_at":"2026-11-29T12:00:00Z","#,
            r#""state":"failed","url":null,"workflow":null}"#,
        )
    };
}

const COMMIT_CHECK_RUNS: &str = concat!(r#""commitCheckRuns":["#, check_runs!(), "]");

const COMMIT_STATUSES: &str = concat!(r#""commitStatuses":["#, legacy_status!(), "]");

const HAS_ACTIONABLE: &str = r#""hasActionable":true"#;

const HEAD_PUSHED_RECENTLY: &str = r#""headPushedRecently":false"#;

const ISSUE_COMMENTS: &str = concat!(
    r#""issue_comments":[{"author":"reviewer","body":"please add docs","#,
    r#""created_at":"2026-11-29T10:15:00Z","database_id":1000027,"#,
    r#""edit":null,"id":"IC_kwDOAAChABo","pending":false,"#,
    r#""updated_at":"2026-11-29T10:15:00Z","url":"https://github.com/octo/app/pull/7#issuecomment-1000027"}]"#,
);

const ISSUE_EVENTS: &str = concat!(
    r#""issue_events":[{"actor":{"login":"owner"},"commit_id":null,"#,
    r#""created_at":"2026-11-29T12:00:00Z","event":"labeled","#,
    r#""id":1000007,"label":{"name":"ready"}}]"#,
);

const MERGE: &str = concat!(
    r#""merge":{"behind":true,"behindBy":2,"blocked":false,"#,
    r#""conflictAnalysisAvailable":true,"conflictFiles":["Cargo.lock","#,
    r#""src/lib.rs"],"hasConflicts":true,"isDraft":false,"#,
    r#""mergeStateStatus":"DIRTY","mergeable":"CONFLICTING"}"#,
);

const MERGE_CONFLICTS: &str = r#""merge_conflicts":[{"path":"Cargo.lock"},{"path":"src/lib.rs"}]"#;

const PR: &str = concat!(
    r#""pr":{"baseRefName":"main","headRefName":"feature-7","#,
    r#""headRefOid":"875b9307abf550055de186dcba779207808475f0","#,
    r#""isDraft":false,"labels":["ready"],"mergeStateStatus":"DIRTY","#,
    r#""mergeable":"CONFLICTING","number":7,"state":"open","#,
    r#""title":"Pin the payload","url":"https://github.com/octo/app/pull/7"}"#,
);

const PR_CHECKS: &str = concat!(r#""prChecks":["#, check_runs!(), ",", legacy_status!(), "]");

const READINESS: &str = r#""readiness":{"missingApprovalsFrom":[],"missingLabels":[]}"#;

const READY: &str = r#""ready":false"#;

const REVIEW_COMMENTS: &str = concat!(
    r#""review_comments":[{"author":"reviewer","body":"please rename `x`","#,
    r#""created_at":"2026-11-29T11:00:00Z","database_id":1000022,"#,
    r#""edit":null,"id":"PRRC_kwDOAAChABU","line":1,"#,
    r#""path":"src/lib.rs","pending":false,"thread_id":"PRRT_kwDOAAChABQ","#,
    r#""updated_at":"2026-11-29T11:00:00Z","url":"https://github.com/octo/app/pull/7#discussion_r1000022"},"#,
    r#"{"author":"reviewer","body":"fine","created_at":"2026-11-29T10:00:00Z","#,
    r#""database_id":1000025,"edit":null,"id":"PRRC_kwDOAAChABg","#,
    r#""line":1,"path":"src/lib.rs","pending":false,"#,
    r#""thread_id":"PRRT_kwDOAAChABc","updated_at":"2026-11-29T10:00:00Z","#,
    r#""url":"https://github.com/octo/app/pull/7#discussion_r1000025"}]"#,
);

const REVIEW_THREADS: &str = concat!(
    r#""review_threads":[{"comments":[{"author":"reviewer","#,
    r#""body":"please rename `x`","created_at":"2026-11-29T11:00:00Z","#,
    r#""database_id":1000022,"edit":null,"id":"PRRC_kwDOAAChABU","#,
    r#""pending":false,"updated_at":"2026-11-29T11:00:00Z","#,
    r#""url":"https://github.com/octo/app/pull/7#discussion_r1000022"}],"#,
    r#""id":"PRRT_kwDOAAChABQ","line":1,"outdated":false,"#,
    r#""path":"src/lib.rs","resolved":false},{"comments":[{"author":"reviewer","#,
    r#""body":"fine","created_at":"2026-11-29T10:00:00Z","#,
    r#""database_id":1000025,"edit":null,"id":"PRRC_kwDOAAChABg","#,
    r#""pending":false,"updated_at":"2026-11-29T10:00:00Z","#,
    r#""url":"https://github.com/octo/app/pull/7#discussion_r1000025"}],"#,
    r#""id":"PRRT_kwDOAAChABc","line":1,"outdated":false,"#,
    r#""path":"src/lib.rs","resolved":true}]"#,
);

const REVIEWS: &str = concat!(
    r#""reviews":{"effectiveDecision":"CHANGES_REQUESTED","#,
    r#""latestByReviewer":{"reviewer":"CHANGES_REQUESTED"},"#,
    r#""newReviewIds":["PRR_kwDOAAChABw"],"newReviews":[{"author":"reviewer","#,
    r#""id":"PRR_kwDOAAChABw","state":"CHANGES_REQUESTED"}],"total":1}"#,
);

const REVIEWS_RAW: &str = concat!(
    r#""reviews_raw":[{"author":"reviewer","body":"Needs tests.","#,
    r#""database_id":1000029,"edit":null,"id":"PRR_kwDOAAChABw","#,
    r#""state":"CHANGES_REQUESTED","submitted_at":"2026-11-29T10:30:00Z","#,
    r#""updated_at":"2026-11-29T10:30:00Z","url":"https://github.com/octo/app/pull/7#pullrequestreview-1000029"}]"#,
);

const THREAD_DETAILS: &str = concat!(
    r#""threadDetails":{"PRRT_kwDOAAChABQ":{"comments":[{"author":"reviewer","#,
    r#""body":"please rename `x`","databaseId":1000022}],"#,
    r#""line":1,"outdated":false,"path":"src/lib.rs","#,
    r#""resolved":false},"PRRT_kwDOAAChABc":{"comments":[{"author":"reviewer","#,
    r#""body":"fine","databaseId":1000025}],"line":1,"#,
    r#""outdated":false,"path":"src/lib.rs","resolved":true}}"#,
);

const THREADS: &str = concat!(
    r#""threads":{"unresolved":1,"unresolvedNew":1,"#,
    r#""unresolvedNewThreadIds":["PRRT_kwDOAAChABQ"],"#,
    r#""unresolvedThreadIds":["PRRT_kwDOAAChABQ"],"unresolvedUpdatedSinceHead":0}"#,
);

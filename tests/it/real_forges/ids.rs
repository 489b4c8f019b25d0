//! Comment and review ids: GitHub deprecated their `databaseId` (an `Int`, which new ids
//! outgrow: past 32 bits it answers null) for `fullDatabaseId` (a `BigInt` string). pr-monitor
//! reads `fullDatabaseId`, and falls back to `databaseId` on a server that has no
//! `fullDatabaseId` yet.

use crate::support::env::TestEnv;

const PR: &str = "octo/app#1";
const TYPES: [&str; 3] = [
    "IssueComment",
    "PullRequestReview",
    "PullRequestReviewComment",
];

/// A PR with a review, a comment and an unresolved thread, their ids from `base` on, on a
/// server without `removed` on comments and reviews: `check`'s payload carries each one's id.
fn ids_reach_check(base: u64, removed: Option<&str>) {
    let env = TestEnv::new();
    let (thread, review, comment) = env.gh.world(|w| {
        w.database_id_base = base;
        w.pr("octo/app", 1);
        let review = w.review("octo/app", 1, "reviewer").changes_requested().id();
        let comment = w.comment("octo/app", 1, "reviewer", "please add docs").id();
        let thread = w
            .thread("octo/app", 1)
            .comment("reviewer", "please rename")
            .id();
        for ty in TYPES.iter().filter(|_| removed.is_some()) {
            w.removed_fields
                .push(((*ty).to_owned(), removed.unwrap_or_default().to_owned()));
        }
        (thread, review, comment)
    });
    let payload = env
        .ok(&["check", PR, "--json", "--no-state", "--full-payload"])
        .json();
    let (thread_comment, review, comment) = env.gh.world(|w| {
        let pr = w.get_pr("octo/app", 1);
        (
            w.thread_by_id(&thread).unwrap().comments[0].database_id,
            pr.reviews
                .iter()
                .find(|r| r.node_id == review)
                .map(|r| r.database_id),
            pr.comments
                .iter()
                .find(|c| c.node_id == comment)
                .map(|c| c.database_id),
        )
    });
    let got = |v: &serde_json::Value| v.as_u64();
    assert_eq!(
        got(&payload["threadDetails"][&thread]["comments"][0]["databaseId"]),
        Some(thread_comment),
        "{payload}"
    );
    assert_eq!(
        got(&payload["reviews_raw"][0]["database_id"]),
        review,
        "{payload}"
    );
    assert_eq!(
        got(&payload["issue_comments"][0]["database_id"]),
        comment,
        "{payload}"
    );
}

#[test]
fn comment_and_review_ids_past_32_bits_are_read_whole() {
    ids_reach_check(5_000_000_000, None);
}

#[test]
fn ids_are_read_once_github_removes_database_id() {
    ids_reach_check(5_000_000_000, Some("databaseId"));
}

#[test]
fn a_server_without_full_database_id_is_read_with_database_id() {
    ids_reach_check(1_000_000, Some("fullDatabaseId"));
}

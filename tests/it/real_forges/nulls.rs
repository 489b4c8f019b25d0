//! GitHub answers null wherever its schema lets it (a deleted author is null, a commit no
//! GitHub user made has a null `user`, a connection's `nodes` may be null, a PR's `reviews`
//! may be): each such field the client reads, answered null, still lets the PR's tick finish.

use crate::support::env::TestEnv;
use crate::support::fake_github::graphql;

const PR: &str = "octo/app#1";

/// Every nullable field the snapshot and summary read, as (type, field).
const NULLABLE: &[(&str, &str)] = &[
    ("PullRequest", "author"),
    ("PullRequest", "reviews"),
    ("PullRequest", "labels"),
    ("PullRequest", "headRepository"),
    ("PullRequest", "autoMergeRequest"),
    ("PullRequest", "mergeQueueEntry"),
    ("Repository", "defaultBranchRef"),
    ("Ref", "compare"),
    ("Commit", "author"),
    ("Commit", "committer"),
    ("Commit", "checkSuites"),
    ("Commit", "status"),
    ("GitActor", "user"),
    ("GitActor", "name"),
    ("GitActor", "email"),
    ("CheckSuite", "workflowRun"),
    ("CheckSuite", "checkRuns"),
    ("CheckSuite", "app"),
    ("WorkflowRun", "databaseId"),
    ("CheckRun", "databaseId"),
    ("CheckRun", "conclusion"),
    ("CheckRun", "detailsUrl"),
    ("CheckRun", "startedAt"),
    ("CheckRun", "completedAt"),
    ("CheckRun", "title"),
    ("CheckRun", "summary"),
    ("PullRequestReviewThread", "line"),
    ("PullRequestReviewComment", "author"),
    ("PullRequestReviewComment", "databaseId"),
    ("PullRequestReview", "author"),
    ("PullRequestReview", "databaseId"),
    ("PullRequestReview", "submittedAt"),
    ("IssueComment", "author"),
    ("IssueComment", "databaseId"),
    ("IssueComment", "fullDatabaseId"),
    ("PullRequestReview", "fullDatabaseId"),
    ("PullRequestReviewComment", "fullDatabaseId"),
    ("IssueComment", "editor"),
    ("IssueComment", "lastEditedAt"),
    ("PageInfo", "endCursor"),
    ("PullRequestCommitConnection", "nodes"),
    ("PullRequestReviewConnection", "nodes"),
    ("PullRequestReviewThreadConnection", "nodes"),
    ("PullRequestReviewCommentConnection", "nodes"),
    ("IssueCommentConnection", "nodes"),
    ("LabelConnection", "nodes"),
    ("CheckSuiteConnection", "nodes"),
    ("CheckRunConnection", "nodes"),
];

#[test]
fn every_field_the_schema_lets_be_null_answered_null_still_ticks_the_pr() {
    for (ty, field) in NULLABLE {
        assert_eq!(
            graphql::nullable(ty, field),
            Some(true),
            "{ty}.{field} is a nullable field of GitHub's schema"
        );
    }
    let mut refused = Vec::new();
    for (ty, field) in NULLABLE {
        let env = TestEnv::new();
        env.gh.world(|w| {
            w.pr("octo/app", 1)
                .label("ready")
                .head_commit(|c| c.by("fixer-bot"));
            w.check_run("octo/app", 1, "lint")
                .failure()
                .log("error: unused variable\n");
            w.review("octo/app", 1, "reviewer").changes_requested();
            w.comment("octo/app", 1, "reviewer", "please rename");
            w.thread("octo/app", 1).comment("reviewer", "why?");
            w.null_fields.push(((*ty).to_owned(), (*field).to_owned()));
        });
        env.ok(&["watch", "add", "--agent", "fixer", PR]);
        let run = env.run(&["run"]);
        let status = env.status(PR);
        if run.code != 0 || !status["last_error"].is_null() {
            refused.push(format!(
                "{ty}.{field}: exit {}, {}",
                run.code, status["last_error"]
            ));
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

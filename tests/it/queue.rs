//! GitHub's merge queue where GitHub alone differs: a server without merge queues still ticks,
//! and one without the queue's list still shows the PR's place. What the queue shares with
//! GitLab's merge trains is in `forges::queue`.

use serde_json::json;

use crate::support::env::TestEnv;
use crate::support::forge::{FakeForge, OnGitHub};

const REPO: &str = "octo/app";

#[test]
fn a_server_without_merge_queues_still_ticks() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.missing_fields
            .push(("PullRequest".into(), "isMergeQueueEnabled".into()));
        w.missing_fields
            .push(("PullRequest".into(), "mergeQueueEntry".into()));
        w.repo(REPO).required_checks(&["test"]);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").in_progress();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    env.advance(600);
    env.ok(&["run"]);
    let s = env.status("octo/app#1");
    assert_eq!(s["last_error"], json!(null), "{s}");
    assert_eq!(s["queue"], json!(null));
    assert_eq!(env.gh.world(|w| w.auto_merge_enables(REPO, 1)), 1);
    // One refused summary per run (a run is one process), then one without the queue fields;
    // the snapshots that follow never ask for them.
    let counts = env.gh.requests().counts();
    assert_eq!(
        counts.get("POST /graphql PullRequestSummaries"),
        Some(&4),
        "{counts:?}"
    );
    assert_eq!(
        counts.get("POST /graphql PullRequestSnapshots"),
        Some(&2),
        "{counts:?}"
    );
}

#[test]
fn a_server_without_the_queue_list_still_shows_the_place() {
    let mut env = OnGitHub::new();
    env.gh.world(|w| {
        w.missing_fields
            .push(("Repository".into(), "mergeQueue".into()));
    });
    env.queued_behind(5, 1, "dev");
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    let s = env.status("octo/app#1");
    assert_eq!(s["last_error"], json!(null), "{s}");
    assert_eq!(s["queue"]["position"], 2, "{s}");
    assert_eq!(s["queue"]["ahead"], json!([]));
    assert_eq!(
        env.gh.requests().count("POST /graphql MergeQueueLine"),
        1,
        "one refused document, in the run that finds PR 1 behind another"
    );
}

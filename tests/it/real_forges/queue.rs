//! GitHub's merge queue as its timeline records it: a PR the queue takes and lets go between
//! two looks is never seen in line, yet it left.

use crate::support::env::TestEnv;
use crate::support::fake_github::World;

const REPO: &str = "octo/app";

#[test]
fn a_queue_removal_between_two_looks_is_told_once_and_the_head_is_not_queued_again() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]).merge_queue();
        w.pr(REPO, 1).head_commit(|c| c.by("dev"));
        w.check_run(REPO, 1, "test").success();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    // Between two looks: GitHub puts it in line, its merge group fails, the queue lets it go.
    env.gh.world(|w| {
        w.settle();
        let g = w.group_sha(REPO, 1);
        w.check_run_on(REPO, &g, "test")
            .event("merge_group")
            .failure();
        w.settle();
    });
    assert_eq!(env.gh.world(|w| w.enqueues(REPO, 1)), 1);
    for _ in 0..3 {
        env.advance(60);
        env.ok(&["run", "--force"]);
        env.gh.world(World::settle);
    }
    assert_eq!(
        env.gh.world(|w| w.enqueues(REPO, 1)),
        1,
        "the same head is not queued again"
    );
    let history = env.history_text("octo/app#1");
    assert_eq!(
        history.matches("left the merge queue").count(),
        1,
        "told once: {history}"
    );
    assert!(history.contains("failed_checks"), "{history}");
}

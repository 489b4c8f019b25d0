//! Places where two commands, or a command and the stored state, must agree: `check` and the
//! tick (seen state, readiness), logins and repositories in any letter case, a damaged row,
//! and `--dry-run`. (The behind-branch turn taken from this tick's snapshots is
//! `merge::behind_armed_prs_are_updated_one_at_a_time_oldest_first`.)

use crate::support::env::TestEnv;

const REPO: &str = "octo/app";

#[test]
fn check_then_run_still_forwards_new_review_feedback_to_the_agent() {
    let env = TestEnv::new();
    env.agentic_job();
    env.gh.world(|w| {
        // dev's PR, whose head the owner pushed (a head only a trusted push vouches for).
        w.pr(REPO, 1)
            .author("dev")
            .head_commit(|c| c.pushed_by("owner", None));
        w.thread(REPO, 1)
            .comment("owner", "please rename `x`")
            .unresolved();
    });
    env.ok(&["watch", "add", "--job", "agentic", "octo/app#1"]);
    let checked = env.ok(&["check", "octo/app#1", "--json"]).json();
    assert_eq!(checked["threads"]["unresolvedNew"], 1);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(
        msgs.len(),
        1,
        "check's seen state is its own: the tick still forwards the thread"
    );
    assert_eq!(msgs[0]["kind"], "review_feedback");
    // And the tick's seen state is not check's: check still reports the thread as new once.
    let again = env.ok(&["check", "octo/app#1", "--json"]).json();
    assert_eq!(again["threads"]["unresolvedNew"], 0, "check saw it already");
}

#[test]
fn check_and_the_tick_agree_that_a_blocked_pr_is_not_ready() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO)
            .required_checks(&["test"])
            .required_approvals(1);
        w.pr(REPO, 1).author("dev");
        w.check_run(REPO, 1, "test").success();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    let checked = env.ok(&["check", "octo/app#1", "--json"]).json();
    assert_eq!(checked["merge"]["mergeStateStatus"], "BLOCKED");
    assert_eq!(checked["ready"], false, "branch protection blocks it");
    env.ok(&["run"]);
    assert_eq!(env.gh.world(|w| w.merges(REPO, 1)), 0);
}

#[test]
fn a_pr_branch_protection_lets_through_is_ready_for_both() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]);
        w.pr(REPO, 1).author("dev");
        w.check_run(REPO, 1, "test").success();
    });
    let checked = env.ok(&["check", "octo/app#1", "--json"]).json();
    assert_eq!(checked["merge"]["mergeStateStatus"], "CLEAN");
    assert_eq!(checked["ready"], true);
}

#[test]
fn an_agent_login_in_another_letter_case_is_the_agent() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("Fixer-Bot"));
        w.check_run(REPO, 1, "lint")
            .failure()
            .log("error: unused variable\n");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    assert_eq!(env.status("octo/app#1")["why"], "fix_sent");
    assert_eq!(env.inbox_messages().len(), 1);
}

#[test]
fn a_repository_in_another_letter_case_is_the_same_watch() {
    let env = TestEnv::new();
    env.with_pr(REPO, 342);
    env.ok(&["watch", "add", "octo/app#342"]);
    env.ok(&["watch", "add", "OCTO/App#342"]);
    env.ok(&["watch", "add", "https://github.com/Octo/APP/pull/342"]);
    let all = env.ok(&["status", "--json"]).json();
    assert_eq!(all.as_array().unwrap().len(), 1, "{all}");
    assert_eq!(all[0]["repo"], "octo/app", "the first spelling stays");
    env.ok(&["watch", "pause", "Octo/App#342"]);
    env.ok(&["watch", "rm", "OCTO/APP#342"]);
    assert_eq!(env.ok(&["status", "--json"]).json(), serde_json::json!([]));
}

#[test]
fn a_corrupt_memory_row_fails_only_that_prs_tick() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.pr(REPO, 2);
        w.check_run(REPO, 1, "test").success();
        w.check_run(REPO, 2, "test").success();
    });
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2"]);
    env.ok(&["run"]);
    let db = env.dir.path().join("state.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE watches SET memory = '{\"attempts_by_head\": ' WHERE number = 1",
            [],
        )
        .unwrap();
    env.advance(600);
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let one = env.status("octo/app#1");
    let error = one["last_error"].as_str().unwrap_or_default();
    assert!(
        error.contains("stored state") && error.contains("memory"),
        "a clear last_error: {one}"
    );
    assert!(
        error.starts_with("damaged: "),
        "a damaged row is said as such, not as a forge's answer: {one}"
    );
    let two = env.status("octo/app#2");
    assert_eq!(two["last_error"], serde_json::Value::Null, "{two}");
    assert_eq!(two["last_tick_at"], env.now.as_str(), "the other PR ticked");
    // The damaged row is left as it was, for the owner to look at.
    let memory: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT memory FROM watches WHERE number = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(memory, "{\"attempts_by_head\": ");
}

#[test]
fn dry_run_leaves_the_database_byte_for_byte_unchanged() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("fixer-bot"));
        w.check_run(REPO, 1, "lint")
            .failure()
            .log("error: unused variable\n");
    });
    env.ok(&[
        "watch",
        "add",
        "--agent",
        "fixer",
        "--merge-when-ready",
        "octo/app#1",
    ]);
    env.ok(&["status"]);
    let db = env.dir.path().join("state.db");
    let before = std::fs::read(&db).unwrap();
    env.advance(60);
    let out = env.ok(&["run", "--dry-run"]);
    assert!(!out.stdout.is_empty());
    assert!(
        std::fs::read(&db).unwrap() == before,
        "--dry-run changes nothing (no log cache, no owner login)"
    );
    assert!(env.inbox_messages().is_empty());
}

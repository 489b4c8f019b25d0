//! Merge queues end to end against the fake GitHub's queue: an armed PR joins the line once,
//! shows its place, merges when the queue does; a merge-group failure is told once and the same
//! head is not queued again; a server without merge queues still ticks.

use serde_json::json;

use crate::support::env::TestEnv;
use crate::support::fake_github::MergeMethod;
use crate::support::smtp::SmtpServer;

const REPO: &str = "octo/app";

/// A repository whose `main` requires the merge queue and a passing `test`; PR 5 is already in
/// line, PR 1 (head by `author`) is green and not armed yet.
fn queued_repo(env: &TestEnv, author: &str) {
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]).merge_queue();
        w.pr(REPO, 5).auto_merge(MergeMethod::Squash);
        w.check_run(REPO, 5, "test").success();
        w.pr(REPO, 1).head_commit(|c| c.by(author));
        w.check_run(REPO, 1, "test").success();
        w.settle();
    });
}

/// PR 1 (head by `author`, agent `fixer`) armed and in line; then its merge group's `test`
/// fails with `log` and the queue lets it go.
fn in_line_then_failed(env: &mut TestEnv, author: &str, log: &str) {
    queued_repo(env, author);
    env.ok(&[
        "watch",
        "add",
        "--agent",
        "fixer",
        "--merge-when-ready",
        "octo/app#1",
    ]);
    env.ok(&["run"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    env.gh.world(|w| {
        let g = w.group_sha(REPO, 1);
        w.check_run_on(REPO, &g, "test")
            .event("merge_group")
            .failure()
            .log(log);
        w.settle();
    });
}

fn with_email(smtp: &SmtpServer) -> TestEnv {
    TestEnv::with_config(&smtp.notify_config())
}

#[test]
fn an_armed_pr_joins_the_queue_once_shows_its_place_and_merges_at_the_head() {
    let mut env = TestEnv::with_config("report:\n  html_path: out/status.html\n");
    queued_repo(&env, "fixer-bot");
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    // GitHub puts it in line after the mutation; the next tick sees it second.
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gh.world(|w| w.enqueues(REPO, 1)), 1);
    let s = env.status("octo/app#1");
    assert_eq!(s["queue"]["position"], 2, "{s}");
    assert_eq!(s["queue"]["state"], "QUEUED");
    assert_eq!(s["queue"]["estimated_seconds"], 480);
    assert!(s["queue"]["enqueued_at"].is_string());
    assert_eq!(s["queue"]["ahead"], json!([5]), "what is ahead: {s}");
    let line = env.ok(&["status"]).stdout;
    assert!(line.contains("PR #1 ⏳ 2nd in queue (~8m)"), "{line}");
    let detail = env.ok(&["status", "octo/app#1"]).stdout;
    assert!(
        detail.contains("2nd in the merge queue (QUEUED)"),
        "{detail}"
    );
    assert!(detail.contains("ahead      #5"), "{detail}");
    let page = std::fs::read_to_string(env.dir.path().join("out/status.html")).unwrap();
    assert!(
        page.contains("Ahead of it: #5."),
        "the page says what is ahead"
    );
    assert_eq!(
        env.gh.requests().count("POST /graphql MergeQueueLine"),
        1,
        "the line is read once, only for the run that finds PR 1 behind another"
    );
    assert!(detail.contains("entered the merge queue"), "{detail}");

    // PR 5's merge group passes and merges; PR 1 is at the head, checking.
    env.gh.world(|w| {
        let g = w.group_sha(REPO, 5);
        w.check_run_on(REPO, &g, "test")
            .event("merge_group")
            .success();
        w.settle();
    });
    env.advance(60);
    env.ok(&["run", "--force"]);
    let line = env.ok(&["status"]).stdout;
    assert!(line.contains("PR #1 ⏳ queued, checking"), "{line}");
    env.gh.world(|w| {
        let g = w.group_sha(REPO, 1);
        w.check_run_on(REPO, &g, "test")
            .event("merge_group")
            .success();
        w.settle();
    });
    for _ in 0..3 {
        env.advance(60);
        env.ok(&["run", "--force"]);
    }
    let s = env.status("octo/app#1");
    assert_eq!(s["state"], "merged", "{s}");
    assert_eq!(s["queue"], json!(null));
    assert_eq!(env.gh.world(|w| w.enqueues(REPO, 1)), 1, "enqueued once");
    assert_eq!(env.gh.world(|w| w.merges(REPO, 1)), 1);
    assert_eq!(
        env.gh.requests().count("PUT /repos/octo/app/pulls/1/merge"),
        0,
        "never a direct merge on a queued base"
    );
    assert_eq!(env.gh.requests().count("POST /graphql UpdateBranch"), 0);
}

#[test]
fn a_merge_group_failure_is_told_once_and_the_same_head_is_not_queued_again() {
    let smtp = SmtpServer::start();
    let mut env = with_email(&smtp);
    in_line_then_failed(
        &mut env,
        "dev",
        "thread 'main' panicked: assertion failed: left == right\n",
    );
    for _ in 0..6 {
        env.advance(60);
        env.ok(&["run", "--force"]);
    }
    assert_eq!(
        env.gh.world(|w| w.enqueues(REPO, 1)),
        1,
        "the same head is not queued again"
    );
    let left: Vec<String> = smtp
        .subjects()
        .into_iter()
        .filter(|s| s.contains("left the merge queue"))
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        left[0].starts_with("PR #1: left the merge queue: test failed in the merge group"),
        "{left:?}"
    );
    let v = env.ok(&["status", "octo/app#1", "--json"]).json();
    let history = v["history"].to_string();
    assert!(history.contains("left the merge queue"), "{history}");
    assert!(history.contains("assertion failed"), "{history}");
    assert_eq!(v["queue"], json!(null));

    // A new head (a fix) joins the line again once green.
    env.gh.world(|w| {
        w.push_with(REPO, 1, |c| c.by("fixer-bot"));
        w.check_run(REPO, 1, "test").success();
    });
    env.advance(60);
    env.ok(&["run", "--force"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gh.world(|w| w.enqueues(REPO, 1)), 2);
    assert!(
        env.inbox_messages().is_empty(),
        "the failed head was not the agent's"
    );
}

/// The merge group's checks cannot be read when the PR leaves the queue (a 500 through every
/// retry): the exit is not told as "no failed check", and its one notice is not spent; the
/// next tick reads the group and tells why.
#[test]
fn a_merge_group_that_could_not_be_read_leaves_the_exit_undecided() {
    use crate::support::fake_github::Fault;
    let smtp = SmtpServer::start();
    let mut env = with_email(&smtp);
    in_line_then_failed(&mut env, "dev", "assertion failed: left == right\n");
    env.gh
        .fault(Fault::status(500).on("POST /graphql CommitChecks").times(4));
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gh.pending_faults(), 0, "every retry of the read failed");
    let left = |smtp: &SmtpServer| -> Vec<String> {
        smtp.subjects()
            .into_iter()
            .filter(|s| s.contains("left the merge queue"))
            .collect()
    };
    assert_eq!(left(&smtp), Vec::<String>::new(), "not told without why");
    let history = env.history("octo/app#1").join("\n");
    assert!(!history.contains("no failed check"), "{history}");

    env.advance(60);
    env.ok(&["run", "--force"]);
    let told = left(&smtp);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].starts_with("PR #1: left the merge queue: test failed in the merge group"),
        "{told:?}"
    );
    assert_eq!(env.gh.world(|w| w.enqueues(REPO, 1)), 1);
}

#[test]
fn a_merge_group_failure_on_the_agents_commit_goes_to_the_agent_with_the_log() {
    let smtp = SmtpServer::start();
    let mut env = with_email(&smtp);
    in_line_then_failed(
        &mut env,
        "fixer-bot",
        "error[E0308]: mismatched types in src/queue.rs\n",
    );
    env.advance(60);
    env.ok(&["run", "--force"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["kind"], "ci_failure");
    assert!(
        msgs[0].to_string().contains("mismatched types"),
        "{}",
        msgs[0]
    );
    assert!(
        !smtp
            .subjects()
            .iter()
            .any(|s| s.contains("left the merge queue")),
        "the agent's failure is the agent's"
    );
    assert_eq!(env.gh.world(|w| w.enqueues(REPO, 1)), 1);
}

#[test]
fn the_owners_merge_when_ready_queues_the_refused_head_again() {
    let mut env = TestEnv::new();
    in_line_then_failed(&mut env, "dev", "test failed\n");
    env.advance(60);
    env.ok(&["run", "--force"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gh.world(|w| w.enqueues(REPO, 1)), 1);
    env.ok(&["merge", "octo/app#1", "--when-ready"]);
    env.ok(&["run"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gh.world(|w| w.enqueues(REPO, 1)), 2);
    // And `merge --now` never jumps the queue.
    let out = env.run(&["merge", "octo/app#1", "--merge-now"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("merge queue"), "{}", out.stderr);
    assert_eq!(
        env.gh.requests().count("PUT /repos/octo/app/pulls/1/merge"),
        0
    );
}

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

/// PR 1 in line second (its merge group's `test` still running) when the queue drops it
/// without a failed check; `conflict` says whether the PR conflicts by then.
fn dropped_without_a_failure(env: &mut TestEnv, conflict: bool) -> String {
    queued_repo(env, "dev");
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    env.gh.world(|w| {
        let g = w.group_sha(REPO, 1);
        if !conflict {
            w.check_run_on(REPO, &g, "test")
                .event("merge_group")
                .in_progress();
        }
        w.drop_from_queue(REPO, 1);
        if conflict {
            w.pr(REPO, 1).conflicting();
        }
    });
    env.advance(60);
    env.ok(&["run", "--force"]);
    env.history_text("octo/app#1")
}

#[test]
fn a_timeout_and_a_conflict_are_told_apart_from_a_check_failure() {
    let mut env = TestEnv::new();
    let history = dropped_without_a_failure(&mut env, false);
    assert!(
        history.contains("left the merge queue: timed out waiting for test in the merge group"),
        "{history}"
    );
    let mut env = TestEnv::new();
    let history = dropped_without_a_failure(&mut env, true);
    assert!(
        history.contains("left the merge queue: a conflict with what was ahead of it"),
        "{history}"
    );
    assert_eq!(env.gh.world(|w| w.enqueues(REPO, 1)), 1);
}

#[test]
fn a_server_without_the_queue_list_still_shows_the_place() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.missing_fields
            .push(("Repository".into(), "mergeQueue".into()));
    });
    queued_repo(&env, "dev");
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

//! Caps and stops end to end: the hourly cap on agent messages holds across runs, a command
//! agent that keeps failing stops being retried, and a token that changed hands pauses its
//! forge's watches until the owner resumes them.

use crate::support::env::{Out, TestEnv};
use crate::support::http_sink::{HttpSink, SLACK_HOOK};

const REPO: &str = "octo/app";

#[test]
fn the_hourly_cap_holds_across_runs_and_nothing_is_lost() {
    let slack = HttpSink::start();
    let mut env = TestEnv::with_slack(&slack.url(SLACK_HOOK), "");
    env.job(
        "agentic",
        "name: agentic\npolicy:\n  agent: fixer\n  reviews: agent\n  agent_messages_per_hour: 2\n",
    );
    env.with_pr(REPO, 1);
    env.ok(&["watch", "add", "--job", "agentic", "octo/app#1"]);
    let comment = |env: &mut TestEnv, body: &str| {
        env.advance(600);
        env.gh.world(|w| {
            w.comment(REPO, 1, "owner", body);
        });
        env.ok(&["run", "--force"]);
    };
    comment(&mut env, "one");
    comment(&mut env, "two");
    assert_eq!(env.inbox_messages().len(), 2);
    comment(&mut env, "three");
    comment(&mut env, "four");
    assert_eq!(env.inbox_messages().len(), 2, "two an hour, across runs");
    let held: Vec<String> = slack
        .slack_lines()
        .into_iter()
        .filter(|l| l.contains("more work waits"))
        .collect();
    assert_eq!(held.len(), 1, "the owner hears once: {held:?}");
    // An hour after the first message, the held comments go.
    env.advance(1800);
    env.ok(&["run", "--force"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 3);
    let bodies: Vec<&str> = msgs
        .iter()
        .flat_map(|m| m["feedback"].as_array().unwrap())
        .map(|f| f["body"].as_str().unwrap())
        .collect();
    for body in ["one", "two", "three", "four"] {
        assert!(bodies.contains(&body), "{body} is lost: {bodies:?}");
    }
}

#[test]
fn a_failing_command_agent_is_tried_three_times_then_the_owner_hears_once() {
    let slack = HttpSink::start();
    let mut env = TestEnv::with_slack(
        &slack.url(SLACK_HOOK),
        "  cmd:\n    command: \"echo ran >> runs.txt; echo broken >&2; exit 1\"\n    logins: [cmd-bot]\n",
    );
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("cmd-bot"));
        w.check_run(REPO, 1, "lint").failure().log("error: x\n");
    });
    env.ok(&["watch", "add", "--agent", "cmd", "octo/app#1"]);
    let runs = |env: &TestEnv| {
        std::fs::read_to_string(env.dir.path().join("runs.txt"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    for run in 1..=5 {
        env.ok(&["run"]);
        assert_eq!(runs(&env), run.min(3), "run {run}");
        env.advance(60);
    }
    let told: Vec<String> = slack
        .slack_lines()
        .into_iter()
        .filter(|l| l.contains("agent cmd failed 3 times on one message"))
        .collect();
    assert_eq!(told.len(), 1, "{:?}", slack.slack_lines());
    assert!(
        env.history_text("octo/app#1")
            .contains("agent cmd failed 3 times on one message: not tried again"),
        "{}",
        env.history_text("octo/app#1")
    );
}

#[test]
fn a_token_that_changed_hands_pauses_the_watches_until_resumed() {
    let slack = HttpSink::start();
    let mut env = TestEnv::with_slack(&slack.url(SLACK_HOOK), "");
    env.gh.world(|w| {
        w.pr(REPO, 1).author("dev");
        w.pr(REPO, 2).author("dev");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#2"]);
    env.ok(&["run"]);
    assert_eq!(
        env.status("octo/app#1")["paused_reason"],
        serde_json::Value::Null
    );

    // The token is replaced by one of another account.
    env.gh.world(|w| {
        w.token = "another-token".into();
        w.viewer = "mallory".into();
    });
    env.advance(3600);
    env.gh.clear_requests();
    env.ok(&["run", "--force"]);
    for pr in ["octo/app#1", "octo/app#2"] {
        let s = env.status(pr);
        assert_eq!(s["paused"], true, "{s}");
        assert_eq!(s["paused_reason"], "token_login_changed", "{s}");
    }
    assert_eq!(
        env.gh
            .requests()
            .count("POST /graphql PullRequestSnapshots"),
        0,
        "nothing is read for a paused forge"
    );
    env.advance(60);
    env.ok(&["run", "--force"]);
    let told: Vec<String> = slack
        .slack_lines()
        .into_iter()
        .filter(|l| l.contains("the token now belongs to mallory, not owner"))
        .collect();
    assert_eq!(
        told.len(),
        1,
        "the owner hears once: {:?}",
        slack.slack_lines()
    );

    // Resuming asks the forge whose the token is: a token it refuses resumes nothing, and
    // says that nothing could be read (exit 3).
    let out: Out = env
        .command_for(&["watch", "resume", "octo/app#1"])
        .env("PRM_TEST_GITHUB_TOKEN", "wrong-token")
        .output()
        .unwrap()
        .into();
    assert_eq!(out.code, 3, "{out:?}");
    assert!(
        out.stderr
            .contains("error: nothing could be read: not authorized"),
        "{}",
        out.stderr
    );
    assert_eq!(env.status("octo/app#1")["paused"], true);

    // Resuming accepts the new login: the resumed PR runs again, the other stays paused.
    env.ok(&["watch", "resume", "octo/app#1"]);
    let s = env.status("octo/app#1");
    assert_eq!(s["paused"], false, "{s}");
    assert_eq!(s["paused_reason"], serde_json::Value::Null);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.status("octo/app#1")["paused"], false);
    assert_eq!(
        env.status("octo/app#2")["paused_reason"],
        "token_login_changed"
    );
    assert!(
        env.history_text("octo/app#1")
            .contains("resumed: acting for mallory from now on"),
        "{}",
        env.history_text("octo/app#1")
    );
}

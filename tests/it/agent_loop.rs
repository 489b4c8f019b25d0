//! Closing the loop with the agent: review feedback it marks done without a new commit and
//! without answering any thread it was sent reaches the owner, once; what it did answer, and
//! what it said when it marked the message done, is in the PR's history.

use crate::support::env::TestEnv;
use crate::support::http_sink::{HttpSink, SLACK_HOOK};

const REPO: &str = "octo/app";
const PR: &str = "octo/app#1";
const DID_NOTHING: &str = "the agent did nothing about 2 review threads";

/// An agentic job whose owner notices go to `slack`, and dev's PR 1 (its head pushed by the
/// owner) with two unresolved threads the owner opened: one tick sends them to the agent.
/// Returns the environment and the message's id.
fn feedback_sent(slack: &HttpSink) -> (TestEnv, String) {
    let mut env = TestEnv::with_slack(&slack.url(SLACK_HOOK), "");
    env.agentic_job();
    env.gh.world(|w| {
        w.devs_pr_the_owner_pushed(REPO, 1);
        w.thread(REPO, 1)
            .comment("owner", "please rename `x`")
            .unresolved();
        w.thread(REPO, 1)
            .comment("owner", "why is this public?")
            .unresolved();
    });
    env.ok(&["watch", "add", "--job", "agentic", PR]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1);
    assert_eq!(
        msgs[0]["feedback"].as_array().unwrap().len(),
        2,
        "{}",
        msgs[0]
    );
    env.advance(60);
    let id = msgs[0]["id"].as_str().unwrap().to_owned();
    (env, id)
}

fn told(slack: &HttpSink) -> Vec<String> {
    slack
        .slack_lines()
        .into_iter()
        .filter(|l| l.contains("did nothing"))
        .collect()
}

#[test]
fn feedback_marked_done_with_no_commit_and_no_reply_reaches_the_owner_once() {
    let slack = HttpSink::start();
    let (mut env, id) = feedback_sent(&slack);
    env.ok(&["inbox", "done", &id, "--note", "looks fine to me"]);
    env.ok(&["run"]);
    assert_eq!(told(&slack).len(), 1, "{:?}", slack.slack_lines());
    assert!(told(&slack)[0].contains(DID_NOTHING), "{:?}", told(&slack));
    let history = env.history_text(PR);
    assert!(history.contains(DID_NOTHING), "{history}");
    assert!(
        history.contains("the agent said: looks fine to me"),
        "{history}"
    );
    for _ in 0..2 {
        env.advance(600);
        env.ok(&["run", "--force"]);
    }
    assert_eq!(told(&slack).len(), 1, "once: {:?}", slack.slack_lines());
}

#[test]
fn feedback_the_agent_answered_is_recorded_and_nobody_is_told() {
    let slack = HttpSink::start();
    let (env, id) = feedback_sent(&slack);
    let thread = env
        .gh
        .world(|w| w.get_pr(REPO, 1).threads[1].node_id.clone());
    let reply = env.dir.path().join("reply.md");
    std::fs::write(&reply, "It is used by the CLI crate.\n").unwrap();
    env.ok(&[
        "thread",
        "reply",
        PR,
        &thread,
        "--body-file",
        reply.to_str().unwrap(),
    ]);
    env.ok(&["inbox", "done", &id]);
    env.ok(&["run"]);
    assert!(told(&slack).is_empty(), "{:?}", slack.slack_lines());
    let history = env.history_text(PR);
    assert!(
        history.contains("fixer answered 1 of 2 review threads"),
        "{history}"
    );
    assert!(
        history.contains("It is used by the CLI crate."),
        "{history}"
    );
    assert!(
        env.inbox_messages().is_empty(),
        "its own reply is not new feedback"
    );
}

#[test]
fn feedback_marked_done_after_a_new_commit_tells_nobody() {
    let slack = HttpSink::start();
    let (env, id) = feedback_sent(&slack);
    env.gh.world(|w| {
        w.push_with(REPO, 1, |c| c.by("fixer-bot").pushed_by("fixer-bot", None));
    });
    env.ok(&["inbox", "done", &id]);
    env.ok(&["run"]);
    assert!(told(&slack).is_empty(), "{:?}", slack.slack_lines());
    let history = env.history_text(PR);
    assert!(
        history.contains("a new commit followed the review feedback sent to fixer"),
        "{history}"
    );
}

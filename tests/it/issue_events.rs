//! `check --full-payload` carries the PR's `issue_events` in GitHub's issue-event shape: GitHub's
//! own list, GitLab's label and state events merged by time; without `--full-payload` they are
//! not read.

use serde_json::Value;

use crate::support::env::{Out, TestEnv};
use crate::support::fake_gitlab::GitLabEnv;

const EVENTS: &str = "GET /repos/{o}/{r}/issues/{n}/events";
const LABEL_EVENTS: &str = "GET /projects/{id}/merge_requests/{iid}/resource_label_events";
const STATE_EVENTS: &str = "GET /projects/{id}/merge_requests/{iid}/resource_state_events";

/// `(event, actor, label)` of each event, in order.
fn summary(events: &Value) -> Vec<(String, String, Option<String>)> {
    events
        .as_array()
        .expect("issue_events is a list")
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_owned(),
                e["actor"]["login"].as_str().unwrap().to_owned(),
                e["label"]["name"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

/// `check octo/app#1 --full-payload`'s JSON.
fn full_check(env: &TestEnv) -> Value {
    full_check_run(env).json()
}

/// `check octo/app#1 --full-payload`, its output and diagnostics.
fn full_check_run(env: &TestEnv) -> Out {
    env.ok(&[
        "check",
        "octo/app#1",
        "--json",
        "--no-state",
        "--full-payload",
    ])
}

fn row(event: &str, actor: &str, label: Option<&str>) -> (String, String, Option<String>) {
    (event.into(), actor.into(), label.map(str::to_owned))
}

#[test]
fn github_issue_events_reach_the_full_payload_only() {
    let env = TestEnv::new();
    let head = env.gh.world(|w| {
        w.pr("octo/app", 1).labeled_by("needs-review", "maintainer");
        w.advance(60);
        w.force_push("octo/app", 1, "dev")
    });
    let plain = env
        .ok(&["check", "octo/app#1", "--json", "--no-state"])
        .json();
    assert!(plain.get("issue_events").is_none());
    assert_eq!(
        env.gh.requests().count(EVENTS),
        0,
        "read for --full-payload only"
    );

    let full = full_check(&env);
    assert_eq!(env.gh.requests().count(EVENTS), 1);
    assert_eq!(
        summary(&full["issue_events"]),
        [
            row("labeled", "maintainer", Some("needs-review")),
            row("head_ref_force_pushed", "dev", None),
        ]
    );
    let pushed = &full["issue_events"][1];
    assert_eq!(pushed["commit_id"], head.as_str());
    assert_eq!(full["pr"]["headRefOid"], head.as_str());
    assert!(pushed["id"].is_u64());
    assert!(
        full["issue_events"][0]["created_at"].as_str().unwrap()
            < pushed["created_at"].as_str().unwrap()
    );
}

#[test]
fn github_issue_events_are_read_past_one_page() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        for i in 0..120 {
            w.pr("octo/app", 1).label(&format!("l{i}"));
        }
    });
    let full = full_check(&env);
    let events = full["issue_events"].as_array().unwrap();
    assert_eq!(events.len(), 120);
    assert_eq!(events[119]["label"]["name"], "l119");
    assert_eq!(env.gh.requests().count(EVENTS), 2);
}

#[test]
fn gitlab_label_and_state_events_merge_by_time_in_the_full_payload() {
    let env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project("g/p");
        w.mr("g/p", 1).labeled_by("needs-review", "maintainer");
        w.now += chrono::Duration::minutes(1);
        w.mr("g/p", 1).closed();
        w.now += chrono::Duration::minutes(1);
        w.mr("g/p", 1).unlabel("needs-review");
        w.now += chrono::Duration::minutes(1);
        w.mr("g/p", 1).reopened();
    });
    let plain = env.ok(&["check", "g/p!1", "--json", "--no-state"]).json();
    assert!(plain.get("issue_events").is_none());
    let log = env.gl.requests();
    assert_eq!(log.count(LABEL_EVENTS) + log.count(STATE_EVENTS), 0);

    let full = env
        .ok(&["check", "g/p!1", "--json", "--no-state", "--full-payload"])
        .json();
    assert_eq!(
        summary(&full["issue_events"]),
        [
            row("labeled", "maintainer", Some("needs-review")),
            row("closed", "owner", None),
            row("unlabeled", "owner", Some("needs-review")),
            row("reopened", "owner", None),
        ]
    );
    assert!(full["issue_events"][1]["commit_id"].is_null());
    let log = env.gl.requests();
    assert_eq!((log.count(LABEL_EVENTS), log.count(STATE_EVENTS)), (1, 1));
}

/// `n` label events on octo/app#1.
fn labels(env: &TestEnv, n: usize) {
    env.gh.world(|w| {
        for i in 0..n {
            w.pr("octo/app", 1).label(&format!("l{i}"));
        }
    });
}

#[test]
fn github_issue_events_are_read_to_the_end_past_a_thousand() {
    let env = TestEnv::new();
    labels(&env, 1050);
    let out = full_check_run(&env);
    let events = out.json()["issue_events"].as_array().unwrap().clone();
    assert_eq!(events.len(), 1050);
    assert_eq!(events[1049]["label"]["name"], "l1049");
    assert_eq!(env.gh.requests().count(EVENTS), 11);
    assert!(!out.stderr.contains("cut short"), "{}", out.stderr);
}

#[test]
fn github_issue_events_stop_where_the_rest_budget_runs_low_and_say_so() {
    let env = TestEnv::new();
    labels(&env, 1050);
    // 505 REST requests left: the pages stop before fewer than 500 are.
    env.gh.world(|w| w.rate.core_used = w.rate.limit - 505);
    let out = full_check_run(&env);
    let read = out.json()["issue_events"].as_array().unwrap().len();
    let pages = env.gh.requests().count(EVENTS);
    assert!((1..11).contains(&pages), "{pages} pages");
    assert_eq!(read, pages * 100, "the oldest, whole pages");
    let left = env.gh.world(|w| w.rate.limit - w.rate.core_used);
    assert!((495..500).contains(&left), "{left} left");
    for words in [
        "issue_events is cut short",
        &format!("only the first {read} events were read"),
        &format!("GitHub's REST budget is down to {left} requests"),
    ] {
        assert!(out.stderr.contains(words), "{words}: {}", out.stderr);
    }
}

#[test]
fn a_failed_events_read_leaves_the_full_payload_without_them_and_says_so() {
    use crate::support::fake_github::Fault;
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1).labeled_by("needs-review", "maintainer");
        w.check_run("octo/app", 1, "test").success();
    });
    env.gh.fault(Fault::status(502).on(EVENTS).always());
    let out = full_check_run(&env);
    let full = out.json();
    assert_eq!(full["issue_events"], serde_json::json!([]));
    assert_eq!(full["prChecks"][0]["name"], "test", "the other lists stay");
    assert_eq!(full["pr"]["number"], 1);
    assert!(
        out.stderr
            .contains("the PR's events could not be read: issue_events is empty"),
        "{}",
        out.stderr
    );
}

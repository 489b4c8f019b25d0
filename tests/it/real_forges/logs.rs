//! Job logs as the real forges serve them: GitHub's log endpoint redirects to a blob host on
//! another address that refuses any request carrying `Authorization`; GitLab serves a job's
//! trace itself. A log may be 100 MiB: only its tail is wanted, asked for with `Range`, and a
//! host that ignores the range is read as a stream of which only the end is kept.

use serde_json::Value;

use crate::support::env::TestEnv;
use crate::support::fake_gitlab::GitLabEnv;

const REPO: &str = "octo/app";
const FAILURE: &str = "error[E0599]: no method named `frobnicate` found for struct `Widget`\n";

/// 100 MiB of build output ending in `last`.
fn hundred_mib_log(last: &str) -> Vec<u8> {
    let line = b"   Compiling widget v1.0.0 (one step of a very long build)\n";
    let mut log = Vec::with_capacity((100 << 20) + line.len() + last.len());
    while log.len() < 100 << 20 {
        log.extend_from_slice(line);
    }
    log.extend_from_slice(last.as_bytes());
    log
}

/// The log tail of the one failure message the agent received.
fn tail_sent(msgs: &[Value], history: &str) -> String {
    assert_eq!(msgs.len(), 1, "{history}");
    assert_eq!(msgs[0]["kind"], "ci_failure", "{}", msgs[0]);
    msgs[0]["checks"][0]["log_tail"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A PR of the agent's with `lint` failing with `log`.
fn github_failing(env: &TestEnv, log: &[u8]) {
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("fixer-bot"));
        w.check_run(REPO, 1, "lint").failure().log_bytes(log);
    });
}

#[test]
fn a_log_redirected_to_another_host_arrives_without_authorization() {
    let mut env = TestEnv::new();
    let host = env.gh.log_host();
    github_failing(&env, FAILURE.as_bytes());
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    let tail = tail_sent(&env.inbox_messages(), &env.history_text("octo/app#1"));
    assert!(tail.contains("no method named `frobnicate`"), "{tail}");
    let log = env.gh.requests();
    let redirect = log.matching("GET /repos/{o}/{r}/actions/jobs/{id}/logs");
    assert_eq!(redirect.len(), 1);
    assert!(
        redirect[0].authorization.is_some(),
        "the API is asked with the token"
    );
    let blobs = log.matching("GET /_blobs/job-logs/{id}");
    assert_eq!(blobs.len(), 1, "{:?}", log.counts());
    assert!(
        matches!(blobs[0].status, 200 | 206),
        "the blob host at {host} served the log: {}",
        blobs[0].status
    );
    assert_eq!(
        blobs[0].authorization, None,
        "no credential follows the redirect"
    );
}

#[test]
fn a_hundred_mib_github_log_yields_its_tail_in_one_ranged_request() {
    let mut env = TestEnv::new();
    env.gh.log_host();
    github_failing(&env, &hundred_mib_log(FAILURE));
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    let served = env.gh.bytes_served();
    env.ok(&["run"]);
    let tail = tail_sent(&env.inbox_messages(), &env.history_text("octo/app#1"));
    assert!(tail.contains("no method named `frobnicate`"), "{tail}");
    assert!(
        tail.lines()
            .all(|l| l.contains("Compiling widget") || l.contains("frobnicate")),
        "no partial line at the cut: {tail}"
    );
    let blobs = env
        .gh
        .requests()
        .matching("GET /_blobs/job-logs/{id}")
        .len();
    assert_eq!(blobs, 1, "one request for the log");
    let read = env.gh.bytes_served() - served;
    assert!(read <= 400 * 1024, "the run read {read} bytes");
}

#[test]
fn a_blob_host_that_ignores_the_range_still_yields_the_tail_of_a_hundred_mib_log() {
    let mut env = TestEnv::new();
    env.gh.log_host();
    env.gh.world(|w| w.logs_ignore_range = true);
    github_failing(&env, &hundred_mib_log(FAILURE));
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    let tail = tail_sent(&env.inbox_messages(), &env.history_text("octo/app#1"));
    assert!(tail.contains("no method named `frobnicate`"), "{tail}");
    let blobs = env
        .gh
        .requests()
        .matching("GET /_blobs/job-logs/{id}")
        .len();
    assert_eq!(blobs, 1, "the whole log is read once, as a stream");
}

#[test]
fn a_hundred_mib_gitlab_trace_yields_its_tail_in_one_ranged_request() {
    for ignores_range in [false, true] {
        let env = GitLabEnv::new();
        let trace = String::from_utf8(hundred_mib_log(FAILURE)).unwrap();
        env.gl.world(|w| {
            w.traces_ignore_range = ignores_range;
            w.mr("g/p", 1).head_by("fixer-bot");
            w.job("g/p", 1, "lint").failed().trace(&trace);
        });
        drop(trace);
        env.ok(&["watch", "add", "--agent", "fixer", "g/p!1"]);
        let served = env.gl.bytes_served();
        env.ok(&["run"]);
        let tail = tail_sent(&env.inbox_messages(), &env.history_text("g/p!1"));
        assert!(tail.contains("no method named `frobnicate`"), "{tail}");
        let traces = env
            .gl
            .requests()
            .count("GET /projects/{id}/jobs/{job}/trace");
        assert_eq!(traces, 1, "one request for the trace");
        if !ignores_range {
            let read = env.gl.bytes_served() - served;
            assert!(read <= 400 * 1024, "the run read {read} bytes");
        }
    }
}

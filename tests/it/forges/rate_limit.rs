//! Rate limits and refused answers, written once over both fakes: a limit whose reset is near is
//! waited out within the tick, one an hour away defers every change to the reset after one
//! request and fails the run fast; a limit that says "retry now" forever is waited on a bounded
//! number of times; a transient server error is retried within the tick. Each forge's test
//! gives its own shapes of the answer (GitHub: a secondary limit with `retry-after`, a primary
//! limit, GraphQL's `RATE_LIMITED` in an HTTP 200; GitLab: 429 with `Retry-After`).

use serde_json::json;

use crate::support::fake_github;
use crate::support::fake_gitlab::{self, GitLabEnv};
use crate::support::fake_server::Fault;
use crate::support::forge::{FakeForge, OnGitHub};

/// A rate limit whose reset is near (`short`) is waited out (real time) and the tick succeeds;
/// one whose reset is an hour away (`long`, on every request) defers both changes to the reset
/// after one request, and the run fails fast. `waited` sees the requests of the first run.
fn a_short_limit_is_waited_out_and_a_long_one_defers_every_change_to_the_reset<F: FakeForge>(
    f: &mut F,
    short: Fault<F::FaultKind>,
    long: Fault<F::FaultKind>,
    waited: impl FnOnce(&F),
) {
    let prs = [f.pr(1), f.pr(2)];
    for (n, pr) in (1..).zip(&prs) {
        f.open(n, "dev");
        f.ok(&["watch", "add", pr]);
    }
    f.fault(short);
    f.ok(&["run"]);
    assert_eq!(f.pending_faults(), 0, "the limit was met");
    for pr in &prs {
        assert_eq!(f.status(pr)["last_error"], json!(null), "{pr}");
    }
    waited(f);
    f.clear_requests();
    f.fault(long.always());
    let out = f.run(&["run", "--force"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        f.request_count(),
        1,
        "one request, then nothing until the reset"
    );
    for pr in &prs {
        let s = f.status(pr);
        assert!(
            s["last_error"].as_str().unwrap().contains("rate limited"),
            "{pr}: {s}"
        );
        let next = s["next_tick_at"].as_str().unwrap().to_owned();
        assert!(
            next.as_str() > "2026-11-29T12:59:00Z",
            "{pr}: next tick after the reset: {next}"
        );
    }
}

/// The summary refused, then answered; then one snapshot of both PRs.
fn summary_asked_twice(f: &OnGitHub) {
    let counts = f.gh.requests().counts();
    assert_eq!(
        counts.get("POST /graphql PullRequestSummaries"),
        Some(&2),
        "the summary refused, then answered: {counts:?}"
    );
    assert_eq!(
        counts.get("POST /graphql PullRequestSnapshots"),
        Some(&1),
        "{counts:?}"
    );
}

#[test]
fn a_secondary_limit_is_waited_out_and_a_primary_one_defers_every_pr_to_the_reset_on_github() {
    a_short_limit_is_waited_out_and_a_long_one_defers_every_change_to_the_reset(
        &mut OnGitHub::new(),
        fake_github::Fault::rate_limit(1).on("POST /graphql"),
        fake_github::Fault::primary_rate_limit(3600).on("POST /graphql"),
        summary_asked_twice,
    );
}

#[test]
fn graphql_http_200_rate_limit_is_handled_like_rest_403_on_github() {
    // HTTP 200, `errors[].type: RATE_LIMITED`, `x-ratelimit-remaining: 0`, a reset time.
    a_short_limit_is_waited_out_and_a_long_one_defers_every_change_to_the_reset(
        &mut OnGitHub::new(),
        fake_github::Fault::graphql_rate_limit_resetting_in(2),
        fake_github::Fault::graphql_rate_limit_resetting_in(3600),
        summary_asked_twice,
    );
}

#[test]
fn a_short_429_is_waited_out_and_an_hour_long_one_defers_every_mr_to_the_reset_on_gitlab() {
    a_short_limit_is_waited_out_and_a_long_one_defers_every_change_to_the_reset(
        &mut GitLabEnv::new(),
        fake_gitlab::Fault::rate_limit(1).on("GET /projects/{id}/merge_requests/{iid}"),
        fake_gitlab::Fault::rate_limit(3600),
        |f| {
            assert_eq!(
                f.gl.requests()
                    .count("GET /projects/{id}/merge_requests/{iid}"),
                3,
                "the refused MR read again, once"
            );
        },
    );
}

/// The forge refuses every request with a limit that says "retry now" (`limit`): the run
/// waits on it a bounded number of times, fails, and says the change was rate limited.
fn a_persistent_limit_saying_retry_now_is_waited_on_a_bounded_number_of_times<F: FakeForge>(
    f: &F,
    limit: Fault<F::FaultKind>,
) {
    f.open(1, "dev");
    f.pass(1, "test");
    let pr = f.pr(1);
    f.ok(&["watch", "add", &pr]);
    f.fault(limit.always());
    let out = f.run(&["run"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let sent = f.request_count();
    assert!(
        sent <= 8,
        "a bounded number of requests, not a spin: {sent}"
    );
    let s = f.status(&pr);
    assert!(
        s["last_error"]
            .as_str()
            .unwrap_or("")
            .contains("rate limited"),
        "{s}"
    );
}

#[test]
fn a_persistent_limit_saying_retry_now_is_waited_on_a_bounded_number_of_times_on_github() {
    a_persistent_limit_saying_retry_now_is_waited_on_a_bounded_number_of_times(
        &OnGitHub::new(),
        fake_github::Fault::rate_limit(0),
    );
}

#[test]
fn a_persistent_limit_saying_retry_now_is_waited_on_a_bounded_number_of_times_on_gitlab() {
    a_persistent_limit_saying_retry_now_is_waited_on_a_bounded_number_of_times(
        &GitLabEnv::new(),
        fake_gitlab::Fault::rate_limit(0),
    );
}

/// The forge answers `error` (a 5xx) to a read a few times: the read is asked again within the
/// tick and the tick succeeds. `retried` sees the requests.
fn a_transient_server_error_is_retried_within_the_tick<F: FakeForge>(
    f: &F,
    error: Fault<F::FaultKind>,
    retried: impl FnOnce(&F),
) {
    f.open(1, "dev");
    let pr = f.pr(1);
    f.ok(&["watch", "add", &pr]);
    f.fault(error);
    f.ok(&["run"]);
    assert_eq!(f.pending_faults(), 0, "every error was answered");
    let s = f.status(&pr);
    assert_eq!(s["last_error"], json!(null), "{s}");
    assert_eq!(s["state"], "open");
    retried(f);
}

#[test]
fn a_transient_server_error_is_retried_within_the_tick_on_github() {
    a_transient_server_error_is_retried_within_the_tick(
        &OnGitHub::new(),
        fake_github::Fault::status(503).on("POST /graphql").times(2),
        |f| {
            let counts = f.gh.requests().counts();
            assert_eq!(
                counts.get("POST /graphql PullRequestSummaries"),
                Some(&3),
                "refused twice, then answered: {counts:?}"
            );
        },
    );
}

#[test]
fn a_transient_server_error_is_retried_within_the_tick_on_gitlab() {
    a_transient_server_error_is_retried_within_the_tick(
        &GitLabEnv::new(),
        fake_gitlab::Fault::status(502).on("GET /projects/{id}/merge_requests/{iid}/approvals"),
        |f| {
            assert_eq!(
                f.gl.requests()
                    .count("GET /projects/{id}/merge_requests/{iid}/approvals"),
                2
            );
        },
    );
}

//! Rate limits as the forges document them.

use crate::support::env::TestEnv;
use crate::support::fake_github::Fault;

const REPO: &str = "octo/app";

/// GitHub's secondary limit often comes without `Retry-After`: "wait for at least one
/// minute". It is a limit, never a refused token, and no run sends anything to the host
/// before the minute is over, even one whose PRs are due.
#[test]
fn a_secondary_limit_without_retry_after_sends_nothing_to_that_host_for_a_minute() {
    let mut env = TestEnv::new();
    env.with_pr(REPO, 1);
    env.with_pr(REPO, 2);
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2"]);
    let before = env.gh.requests().total();
    env.gh
        .fault(Fault::secondary_rate_limit_without_retry_after().on("POST /graphql"));
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        env.gh.requests().total() - before,
        1,
        "one request, then nothing more to that host"
    );
    assert!(!out.stderr.contains("not authorized"), "{}", out.stderr);
    for pr in ["octo/app#1", "octo/app#2"] {
        let s = env.status(pr);
        let error = s["last_error"].as_str().unwrap_or("");
        assert!(error.contains("rate limited for 60s"), "{pr}: {s}");
        let next = s["next_tick_at"].as_str().unwrap().to_owned();
        assert!(
            next.as_str() >= "2026-11-29T12:01:00Z",
            "{pr}: not before a minute: {next}"
        );
    }

    // The run's clock moves past the PRs' next look; the real minute has not passed.
    env.advance(120);
    let before = env.gh.requests().total();
    let out = env.run(&["run"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        env.gh.requests().total(),
        before,
        "nothing is sent to the host while it is held"
    );
    let history = env.history_text("octo/app#1");
    assert!(
        history.contains("secondary rate limit"),
        "the hold is told: {history}"
    );
}

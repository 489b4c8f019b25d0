//! What pr-monitor guarantees when things go wrong: a slow or hanging batch does not hold the
//! others' actions, overlapping runs never double a delivery, crashes are recovered from in
//! seconds, rate limits are waited on a bounded number of times, and our own forge writes are
//! recognised whatever their answer was.

use crate::support::env::TestEnv;

const REPO: &str = "octo/app";

#[test]
fn each_batch_acts_before_the_next_is_read() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).auto_merge_allowed(false);
        for n in 1..=11 {
            w.pr(REPO, n);
            w.check_run(REPO, n, "test").success();
        }
    });
    let refs: Vec<String> = (1..=11).map(|n| format!("{REPO}#{n}")).collect();
    let mut args = vec!["watch", "add", "--merge-when-ready"];
    args.extend(refs.iter().map(String::as_str));
    env.ok(&args);
    env.ok(&["run"]);
    let log = env.gh.requests();
    let reads: Vec<usize> = log
        .matching("POST /graphql PullRequestSnapshots")
        .iter()
        .map(|r| r.seq)
        .collect();
    assert!(reads.len() >= 2, "eleven PRs take two reads: {reads:?}");
    let first_merge = log
        .writes()
        .iter()
        .find(|r| r.prs.contains(&(REPO.to_owned(), 1)))
        .map(|r| r.seq)
        .expect("PR 1 is merged");
    assert!(
        first_merge < reads[reads.len() - 1],
        "the first batch acts before the second batch is read: merge at {first_merge}, reads {reads:?}"
    );
    assert_eq!(env.gh.world(|w| w.merges(REPO, 11)), 1);
}

#[test]
fn a_persistent_rate_limit_with_retry_after_zero_is_waited_on_a_bounded_number_of_times() {
    use crate::support::fake_github::Fault;
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.gh.fault(Fault::rate_limit(0).always());
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let sent = env.gh.requests().total();
    assert!(
        sent <= 8,
        "a bounded number of requests, not a spin: {sent}"
    );
    let s = env.status("octo/app#1");
    assert!(
        s["last_error"]
            .as_str()
            .unwrap_or("")
            .contains("rate limited"),
        "{s}"
    );
}

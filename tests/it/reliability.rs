//! What pr-monitor guarantees when things go wrong: a slow or hanging batch does not hold the
//! others' actions, overlapping runs never double a delivery, crashes are recovered from in
//! seconds, and our own forge writes are recognised whatever their answer was. (Branch updates
//! recognised so on both forges: `forges::update`; rate limits waited on a bounded number of
//! times: `forges::rate_limit`.)

use crate::support::env::TestEnv;

const REPO: &str = "octo/app";

/// PRs 1 to `n`, green, watched with `--merge-when-ready` in a repository without auto-merge
/// (pr-monitor merges them itself).
fn ready_to_merge(n: u64) -> TestEnv {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).auto_merge_allowed(false);
        for i in 1..=n {
            w.pr(REPO, i);
            w.check_run(REPO, i, "test").success();
        }
    });
    let refs: Vec<String> = (1..=n).map(|i| format!("{REPO}#{i}")).collect();
    let mut args = vec!["watch", "add", "--merge-when-ready"];
    args.extend(refs.iter().map(String::as_str));
    env.ok(&args);
    env
}

#[test]
fn each_batch_acts_before_the_next_is_read() {
    let env = ready_to_merge(11);
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
fn a_slow_batch_holds_only_its_own_prs() {
    use crate::support::fake_github::Fault;
    let env = ready_to_merge(30);
    // The second batch (PRs 11 to 20) is answered five seconds late.
    env.gh.fault(
        Fault::delay(5000)
            .on("POST /graphql PullRequestSnapshots")
            .when_query_mentions(REPO, 11)
            .once(),
    );
    env.ok(&["run"]);
    let log = env.gh.requests();
    let first_merge = |batch: std::ops::RangeInclusive<u64>| {
        log.writes()
            .iter()
            .filter(|r| r.prs.iter().any(|(_, n)| batch.contains(n)))
            .map(|r| r.seq)
            .min()
            .expect("the batch is merged")
    };
    let (slow, third) = (first_merge(11..=20), first_merge(21..=30));
    assert!(
        third < slow,
        "the third batch is merged while the second is still being read: {third} vs {slow}"
    );
    for n in 1..=30 {
        assert_eq!(env.gh.world(|w| w.merges(REPO, n)), 1, "PR {n}");
    }
}

/// 100 PRs ready to merge are ten batches: the first is read alone, then eight are under way
/// at once and never nine. The fake holds each batch's read until ten have come (or its
/// bound): the first waits alone, the eight after it wait together, and the tenth is sent
/// only when one of them is answered.
#[test]
fn eight_batches_are_read_at_once_and_no_more() {
    const SNAPSHOTS: &str = "POST /graphql PullRequestSnapshots";
    let env = ready_to_merge(100);
    env.gh.hold_until_together(SNAPSHOTS, 10);
    env.ok(&["run"]);
    assert_eq!(env.gh.requests().count(SNAPSHOTS), 10);
    assert_eq!(env.gh.most_together(SNAPSHOTS), 8);
    assert_eq!(env.gh.world(|w| w.merges(REPO, 100)), 1);
}

/// A run keeps its connections to the forge open and uses them again: merging 100 PRs (ten
/// batches read, up to eight at once, and a merge each: 120 requests) opens no more
/// connections than it has requests under way at once. (Whether a burst of eight finds the
/// last burst's eight open: `forge::http::tests::a_burst_of_reads_finds_the_last_bursts_connections_open`.)
#[test]
fn a_run_opens_no_more_connections_than_it_has_requests_under_way() {
    let env = ready_to_merge(100);
    let before = env.gh.connections();
    env.ok(&["run"]);
    let opened = env.gh.connections() - before;
    assert!((1..=8).contains(&opened), "{opened} connections");
    assert_eq!(env.gh.world(|w| w.merges(REPO, 100)), 1);
}

/// One watched PR whose lint failed on a commit of the command agent `slow`, which runs
/// `command` (a shell line) for each message.
fn slow_agent_env(command: &str) -> TestEnv {
    let env = TestEnv::with_config(&format!(
        "  slow:\n    command: \"{command}\"\n    logins: [slow-bot]\n"
    ));
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("slow-bot"));
        w.check_run(REPO, 1, "lint").failure().log("error: x\n");
    });
    env.ok(&["watch", "add", "--agent", "slow", "octo/app#1"]);
    env
}

/// Waits until the slow agent's command has touched `agent-started`.
fn wait_for_the_agent(env: &TestEnv) {
    let started = env.dir.path().join("agent-started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent never started"
        );
        std::thread::yield_now();
    }
}

/// A second run that reaches delivery while the first is still delivering finds the messages
/// claimed: a slow command agent runs once, not once per run.
#[test]
fn overlapping_runs_deliver_each_message_once() {
    let env = slow_agent_env("echo call >> agent-calls.txt; touch agent-started; sleep 2");
    let first = env.spawn(&["run"]);
    wait_for_the_agent(&env);
    let second = env.run(&["run", "--force"]);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{first:?}");
    let calls = std::fs::read_to_string(env.dir.path().join("agent-calls.txt")).unwrap();
    assert_eq!(calls.lines().count(), 1, "the agent ran {calls:?}");
}

/// Starts `run` with the fake forge holding its first snapshot read (for two minutes), and
/// returns once that read has arrived: the run then holds its PRs' leases.
fn run_held_in_its_read(env: &TestEnv, args: &[&str]) -> std::process::Child {
    use crate::support::fake_github::Fault;
    env.gh.fault(
        Fault::delay(120_000)
            .on("POST /graphql PullRequestSnapshots")
            .once(),
    );
    let child = env.spawn(args);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while env
        .gh
        .requests()
        .count("POST /graphql PullRequestSnapshots")
        == 0
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never read its PRs"
        );
        std::thread::yield_now();
    }
    child
}

fn three_watched_prs() -> TestEnv {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO);
        for n in 1..=3 {
            w.pr(REPO, n);
            w.check_run(REPO, n, "test").success();
        }
    });
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2", "octo/app#3"]);
    env
}

/// A run killed with SIGKILL in the middle of its tick holds its leases for ten minutes; the
/// next run on the same host sees the holder's process is gone and takes them over at once.
#[test]
fn a_run_killed_mid_tick_leaves_no_gap() {
    let env = three_watched_prs();
    let mut first = run_held_in_its_read(&env, &["run"]);
    first.kill().unwrap();
    first.wait().unwrap();
    let out = env.ok(&["run"]);
    assert!(out.stdout.contains("ticked 3 PRs"), "{}", out.stdout);
    assert!(
        out.stdout.contains("took over 3 PRs from run ")
            && out.stdout.contains(&format!("(pid {} on ", first.id()))
            && out.stdout.contains("whose process is gone"),
        "{}",
        out.stdout
    );
    for n in 1..=3 {
        let s = env.status(&format!("octo/app#{n}"));
        assert_eq!(s["last_tick_at"], env.now.as_str(), "{s}");
        assert_eq!(s["held_by"], serde_json::Value::Null, "{s}");
    }
}

/// A lease held by a live run is left to it: a second run skips the PR and says who holds it,
/// and `status` names the holder, in text and JSON.
#[test]
fn a_lease_held_by_a_live_run_is_left_to_it_and_named() {
    let env = three_watched_prs();
    let mut first = run_held_in_its_read(&env, &["run"]);
    let pid = first.id();
    let holder = format!("(pid {pid} on ");
    let second = env.ok(&["run", "--force"]);
    assert!(
        second.stdout.contains("3 PRs held by run ") && second.stdout.contains(&holder),
        "{}",
        second.stdout
    );
    assert!(
        !second.stdout.contains("nothing is due"),
        "{}",
        second.stdout
    );
    let status = env.ok(&["status"]);
    assert!(
        status.stdout.contains("3 PRs held by run ") && status.stdout.contains(&holder),
        "{}",
        status.stdout
    );
    let detail = env.ok(&["status", "octo/app#2"]);
    assert!(
        detail.stdout.contains("  held by    run ") && detail.stdout.contains(&holder),
        "{}",
        detail.stdout
    );
    let s = env.status("octo/app#1");
    assert_eq!(s["held_by"]["pid"], pid, "{s}");
    assert!(
        s["held_by"]["run"].as_str().is_some_and(|r| !r.is_empty()),
        "{s}"
    );
    assert_eq!(
        s["last_tick_at"],
        serde_json::Value::Null,
        "not ticked yet: {s}"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    let after = env.ok(&["status"]);
    assert!(
        after
            .stdout
            .contains("whose process is gone: the next run takes them over"),
        "{}",
        after.stdout
    );
    let s = env.status("octo/app#1");
    assert_eq!(
        s["held_by"],
        serde_json::Value::Null,
        "a dead run holds nothing: {s}"
    );
    let detail = env.ok(&["status", "octo/app#2"]);
    assert!(!detail.stdout.contains("held by"), "{}", detail.stdout);
    let third = env.ok(&["run"]);
    assert!(third.stdout.contains("ticked 3 PRs"), "{}", third.stdout);
}

/// A run killed while it delivers leaves its claimed messages to the next run at once (the
/// claim names a process that is gone): the one documented duplicate, with the same id.
#[test]
fn a_run_killed_while_delivering_leaves_its_messages_to_the_next_run() {
    let env = slow_agent_env(
        "echo $PR_MONITOR_MESSAGE_ID >> agent-calls.txt; touch agent-started; i=0; while [ ! -e go-on ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; echo >> agent-ended.txt",
    );
    let mut first = env.spawn(&["run"]);
    wait_for_the_agent(&env);
    first.kill().unwrap();
    first.wait().unwrap();
    std::fs::write(env.dir.path().join("go-on"), "").unwrap();
    let out = env.ok(&["run"]);
    assert!(out.stdout.contains("1 message sent"), "{}", out.stdout);
    let calls = std::fs::read_to_string(env.dir.path().join("agent-calls.txt")).unwrap();
    let ids: Vec<&str> = calls.lines().collect();
    assert_eq!(ids.len(), 2, "{calls:?}");
    // The killed run's agent outlives it: wait for it to end before its folder goes.
    let ended = env.dir.path().join("agent-ended.txt");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(&ended).map_or(0, |s| s.lines().count()) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the agents never ended"
        );
        std::thread::yield_now();
    }
    assert_eq!(ids[0], ids[1], "the same message, by its id");
    let again = env.ok(&["run", "--force"]);
    assert!(!again.stdout.contains("message"), "{}", again.stdout);
}

/// Starts `run` with the fake applying the first request on `route` and then never answering,
/// and kills the run with SIGKILL once `done` sees the write in the forge's world.
fn run_killed_after(
    env: &TestEnv,
    route: &str,
    done: impl Fn(&crate::support::fake_github::World) -> bool,
) {
    use crate::support::fake_github::Fault;
    env.gh.fault(Fault::apply_then_hang().on(route));
    env.run_killed_when(&["run"], || env.gh.world(|w| done(w)));
}

/// A Slack sink, and an env whose owner notices go to it.
fn posting_to_slack() -> (crate::support::http_sink::HttpSink, TestEnv) {
    let slack = crate::support::http_sink::HttpSink::start();
    let mut env = TestEnv::with_config("notify:\n  slack:\n    webhook_url_env: PRM_TEST_SLACK\n");
    env.vars
        .push(("PRM_TEST_SLACK".into(), slack.url("/services/T0/B0/hook")));
    (slack, env)
}

/// The texts `slack` received, in order.
fn posted(slack: &crate::support::http_sink::HttpSink) -> Vec<String> {
    slack
        .requests()
        .iter()
        .map(|r| r.json()["text"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// The process dies right after GitHub accepted an infrastructure re-run: the next runs
/// neither re-run that job on that head again nor lose the owner's "failed again" notice.
#[test]
fn a_crash_right_after_an_infra_rerun_reruns_once_and_the_owner_hears_it_failed_again() {
    let (slack, mut env) = posting_to_slack();
    let run_id = env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("human"));
        w.check_run(REPO, 1, "test")
            .failure()
            .log("npm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/x\n")
            .run_id()
    });
    let run_id = run_id.expect("an Actions run");
    env.ok(&["watch", "add", "octo/app#1"]);
    run_killed_after(
        &env,
        "POST /repos/{o}/{r}/actions/runs/{id}/rerun-failed-jobs",
        |w| w.reruns(run_id) > 0,
    );

    // The re-run is still running, then fails for infrastructure reasons again.
    env.advance(60);
    env.ok(&["run", "--force"]);
    env.advance(60);
    env.gh.world(|w| {
        w.update_check_run(REPO, 1, "test")
            .failure()
            .log("npm ERR! 503 Service Unavailable\n");
    });
    env.ok(&["run", "--force"]);
    assert_eq!(
        env.gh.world(|w| w.reruns(run_id)),
        1,
        "one re-run per job per head"
    );
    let s = env.status("octo/app#1");
    assert_eq!(s["why"], "infra_again", "{s}");
    let told = posted(&slack);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].contains("test failed"), "{told:?}");
}

/// An armed PR, green, on a repository without auto-merge: the next tick merges it itself.
fn armed_pr_ready_to_merge() -> TestEnv {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).auto_merge_allowed(false);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env
}

/// The process dies after GitHub merged and before anything was recorded: the next run reads
/// the PR merged and records it so, without a second merge.
#[test]
fn a_crash_between_a_merge_and_its_record_never_merges_twice() {
    let mut env = armed_pr_ready_to_merge();
    run_killed_after(&env, "PUT /repos/{o}/{r}/pulls/{n}/merge", |w| {
        w.merges(REPO, 1) > 0
    });
    env.advance(30);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gh.world(|w| w.merges(REPO, 1)), 1);
    assert_eq!(env.status("octo/app#1")["state"], "merged");
}

/// A write whose intent cannot be recorded first (the database refuses the row, as a full
/// disk would) is not made: the tick is incomplete, and the next one makes it.
#[test]
fn a_write_whose_intent_cannot_be_recorded_is_not_made() {
    let mut env = armed_pr_ready_to_merge();
    env.refuse_intents(true);
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        env.gh.world(|w| w.merges(REPO, 1)),
        0,
        "no merge without its intent"
    );
    let history = env.history_text("octo/app#1");
    assert!(
        history.contains("its intent could not be recorded first"),
        "{history}"
    );
    env.refuse_intents(false);
    env.advance(30);
    env.ok(&["run"]);
    assert_eq!(env.gh.world(|w| w.merges(REPO, 1)), 1);
}

/// The process dies right after GitHub accepted auto-merge and before anything was recorded:
/// the next runs do not ask again while the forge shows it on, the merge happens once, and
/// the owner hears "merged" once.
#[test]
fn a_crash_right_after_arming_auto_merge_neither_arms_twice_nor_loses_the_merge() {
    let (slack, mut env) = posting_to_slack();
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").in_progress();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    run_killed_after(&env, "POST /graphql EnableAutoMerge", |w| {
        w.auto_merge_enables(REPO, 1) > 0
    });
    for _ in 0..2 {
        env.advance(30);
        env.ok(&["run", "--force"]);
    }
    assert_eq!(
        env.gh.world(|w| w.auto_merge_enables(REPO, 1)),
        1,
        "armed once"
    );
    let s = env.status("octo/app#1");
    assert_eq!(s["merge_armed"], true, "{s}");
    assert_eq!(s["merge_via"], "auto_merge", "{s}");
    env.advance(60);
    env.gh.world(|w| {
        w.update_check_run(REPO, 1, "test").success();
        w.settle();
    });
    env.ok(&["run", "--force"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gh.world(|w| w.merges(REPO, 1)), 1);
    assert_eq!(env.status("octo/app#1")["state"], "merged");
    let told = posted(&slack);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].contains("merged"), "{told:?}");
}

/// The process dies right after GitHub applied a chunk's armings in one document and before
/// anything was recorded: the next runs ask none of them again, and each PR merges once.
#[test]
fn a_crash_right_after_a_chunks_armings_neither_arms_twice_nor_loses_a_merge() {
    let mut env = TestEnv::new();
    let prs = [1, 2, 3];
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]);
        for n in prs {
            w.pr(REPO, n);
            w.check_run(REPO, n, "test").in_progress();
        }
    });
    env.ok(&[
        "watch",
        "add",
        "--merge-when-ready",
        "octo/app#1",
        "octo/app#2",
        "octo/app#3",
    ]);
    run_killed_after(&env, "POST /graphql EnableAutoMerges", |w| {
        prs.iter().all(|&n| w.auto_merge_enables(REPO, n) > 0)
    });
    let enables = |env: &TestEnv| env.gh.world(|w| prs.map(|n| w.auto_merge_enables(REPO, n)));
    for _ in 0..2 {
        env.advance(30);
        env.ok(&["run", "--force"]);
    }
    assert_eq!(enables(&env), [1, 1, 1], "armed once each");
    env.advance(60);
    env.gh.world(|w| {
        for n in prs {
            w.update_check_run(REPO, n, "test").success();
        }
        w.settle();
    });
    env.ok(&["run", "--force"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    for n in prs {
        assert_eq!(env.gh.world(|w| w.merges(REPO, n)), 1);
        assert_eq!(env.status(&format!("octo/app#{n}"))["state"], "merged");
    }
    assert_eq!(enables(&env), [1, 1, 1]);
}

/// Resolved intents do not pile up: an armed PR whose auto-merge is turned off behind its back
/// every tick records an intent per tick, and the table keeps at most 20 resolved ones per PR,
/// none resolved more than 7 days before the PR's latest tick.
#[test]
fn resolved_intents_are_kept_a_bounded_time_and_number() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").in_progress();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    let rows = |env: &TestEnv| -> (i64, i64) {
        let db = rusqlite::Connection::open(env.dir.path().join("state.db")).expect("the database");
        db.query_row(
            "SELECT count(*), count(resolved_at) FROM intents",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("count the intents")
    };
    for _ in 0..25 {
        env.gh.world(|w| w.get_pr_mut(REPO, 1).auto_merge = None);
        env.ok(&["run", "--force"]);
        env.advance(30);
    }
    assert_eq!(env.gh.world(|w| w.auto_merge_enables(REPO, 1)), 25);
    let (all, resolved) = rows(&env);
    assert_eq!(all - resolved, 1, "the last one is still open");
    assert_eq!(resolved, 20, "at most 20 resolved kept");
    env.advance(8 * 86_400);
    env.ok(&["run", "--force"]);
    assert_eq!(rows(&env), (1, 1), "older than 7 days: gone");
}

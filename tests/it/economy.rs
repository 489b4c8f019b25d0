//! Request economy on GitHub, in the unit GitHub charges: every run starts with one summary
//! query over up to 100 PRs (1 point for 100, unresolved threads asked about by id at no
//! extra cost), and only the PRs whose summary changed, or
//! that have no kept read yet, are read in full. Points are deterministic, so each case
//! asserts them exactly from the fake's log.

use serde_json::json;

use crate::support::env::TestEnv;
use crate::support::fake_github::Fault;

const REPO: &str = "octo/app";

/// 100 watched PRs: 50 green and idle, 50 with a check still running; all read once.
fn hundred_prs() -> TestEnv {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO);
        for n in 1..=100 {
            w.pr(REPO, n);
            if n <= 50 {
                w.check_run(REPO, n, "test").success();
            } else {
                w.check_run(REPO, n, "test").in_progress();
            }
        }
    });
    let refs: Vec<String> = (1..=100).map(|n| format!("{REPO}#{n}")).collect();
    let mut args = vec!["watch", "add"];
    args.extend(refs.iter().map(String::as_str));
    env.ok(&args);
    env.ok(&["run"]);
    env
}

/// Runs once more after every PR is due again; (points, requests) that run spent.
fn next_run(env: &mut TestEnv) -> (u64, usize) {
    env.advance(600);
    env.gh.clear_requests();
    env.ok(&["run"]);
    let log = env.gh.requests();
    (log.points(""), log.total())
}

#[test]
fn a_first_look_reads_every_pr_in_full_after_the_summary() {
    let env = hundred_prs();
    let log = env.gh.requests();
    assert_eq!(
        log.count("POST /graphql PullRequestSummaries"),
        1,
        "{:?}",
        log.counts()
    );
    assert_eq!(log.points("POST /graphql PullRequestSummaries"), 1);
    assert_eq!(log.count("POST /graphql PullRequestSnapshots"), 10);
    assert_eq!(log.points("POST /graphql PullRequestSnapshots"), 160);
    // Each snapshot compares the branches the summary named, at no extra cost: 1.61 points
    // and 0.11 requests per PR.
    assert_eq!(log.count("POST /graphql CompareBranches"), 0);
    assert_eq!(
        (log.points(""), log.total()),
        (1 + 160, 1 + 10),
        "{:?}",
        log.counts()
    );
}

/// GitHub answers a query's fields in the order it selects them; the kept fingerprint does not
/// hang on that order (nor on how the text is spaced): an idle PR whose answer comes with its
/// fields the other way round is still idle.
#[test]
fn a_summary_whose_fields_come_in_another_order_still_matches() {
    let mut env = hundred_prs();
    env.gh.fault(
        Fault::reordered()
            .on("POST /graphql PullRequestSummaries")
            .always(),
    );
    let (points, requests) = next_run(&mut env);
    let log = env.gh.requests();
    assert_eq!(log.count("POST /graphql PullRequestSummaries"), 1);
    assert_eq!((points, requests), (1, 1), "{:?}", log.counts());
}

/// A summary's fingerprint is kept beside its read. Fingerprints kept in an earlier form (this
/// build digests each PR's part of the answer where it lies in the text; earlier ones digested
/// the text rewritten with its fields by name) equal none the summary read now gives: each PR
/// is read in full once, as a changed PR is, and then matches and is idle again.
#[test]
fn a_fingerprint_kept_in_an_earlier_form_reads_its_pr_in_full_once() {
    let mut env = hundred_prs();
    let db = rusqlite::Connection::open(env.dir.path().join("state.db")).expect("open the db");
    for table in ["last_reads", "kept_hints"] {
        let kept = db
            .execute(
                &format!("UPDATE {table} SET summary = '#' || printf('%032x', watch_id)"),
                [],
            )
            .expect("keep fingerprints no summary now gives");
        assert_eq!(kept, 100, "{table}");
    }
    let (points, requests) = next_run(&mut env);
    let log = env.gh.requests();
    assert_eq!(log.count("POST /graphql PullRequestSnapshots"), 10);
    assert_eq!((points, requests), (1 + 160, 1 + 10), "{:?}", log.counts());
    assert!(log.writes().is_empty(), "{:?}", log.counts());
    let (points, requests) = next_run(&mut env);
    assert_eq!(
        (points, requests),
        (1, 1),
        "read once, then idle again: {:?}",
        env.gh.requests().counts()
    );
}

#[test]
fn idle_prs_and_prs_with_running_checks_cost_one_summary_for_a_hundred() {
    let mut env = hundred_prs();
    let before: Vec<serde_json::Value> = [1, 51]
        .iter()
        .map(|n| env.status(&format!("{REPO}#{n}")))
        .collect();
    let (points, requests) = next_run(&mut env);
    assert_eq!(
        (points, requests),
        (1, 1),
        "0.01 points per PR: {:?}",
        env.gh.requests().counts()
    );
    for (n, was) in [1, 51].iter().zip(before) {
        let s = env.status(&format!("{REPO}#{n}"));
        for key in ["pills", "why", "head_sha", "state", "last_error"] {
            assert_eq!(s[key], was[key], "#{n} {key} decided as before");
        }
    }
    assert_eq!(env.pills(&format!("{REPO}#51"))["ci"], json!(false));
}

#[test]
fn a_new_head_is_read_in_full() {
    let mut env = hundred_prs();
    let sha = env.gh.world(|w| w.push(REPO, 7, "someone"));
    let (points, _) = next_run(&mut env);
    let log = env.gh.requests();
    assert_eq!(log.count("POST /graphql PullRequestSnapshots"), 1);
    assert_eq!(points, 1 + 2, "{:?}", log.counts());
    assert_eq!(env.status(&format!("{REPO}#7"))["head_sha"], json!(sha));
}

#[test]
fn new_feedback_is_read_in_full() {
    let mut env = hundred_prs();
    env.gh.world(|w| {
        w.thread(REPO, 8)
            .comment("reviewer", "please rename this")
            .unresolved();
    });
    let (points, _) = next_run(&mut env);
    let log = env.gh.requests();
    assert_eq!(log.count("POST /graphql PullRequestSnapshots"), 1);
    assert_eq!(points, 1 + 2, "{:?}", log.counts());
    assert_eq!(env.pills(&format!("{REPO}#8"))["cmt"], json!(1));
}

#[test]
fn a_new_label_is_read_in_full() {
    // The summary asks for no labels (a second connection would make 100 PRs cost 2
    // points): a label added or removed moves the PR's update time, which it does ask.
    let mut env = hundred_prs();
    env.gh.world(|w| {
        w.advance(60);
        w.pr(REPO, 9).label("do-not-merge");
    });
    let (points, _) = next_run(&mut env);
    let log = env.gh.requests();
    assert_eq!(log.count("POST /graphql PullRequestSnapshots"), 1);
    assert_eq!(points, 1 + 2, "{:?}", log.counts());
}

#[test]
fn a_finished_check_is_read_in_full() {
    let mut env = hundred_prs();
    env.gh.world(|w| {
        w.update_check_run(REPO, 60, "test").failure();
    });
    let (points, requests) = next_run(&mut env);
    let log = env.gh.requests();
    assert_eq!(log.count("POST /graphql PullRequestSnapshots"), 1);
    // The summary, the one PR's snapshot, its failed run's annotations and its log.
    assert_eq!((points, requests), (1 + 2 + 1 + 1, 4), "{:?}", log.counts());
    assert_eq!(env.pills(&format!("{REPO}#60"))["ci"], json!(true));
}

/// The failed checks of a chunk of ten PRs have their annotations read in one query, each
/// check judged by its own: of three failing PRs (one with two failed checks), the one whose
/// runner was lost (an annotation says so) is re-run, the others light their pill.
#[test]
fn a_chunks_failed_checks_have_their_annotations_read_in_one_query() {
    let env = TestEnv::new();
    let lost = env.gh.world(|w| {
        w.repo(REPO);
        let mut lost = None;
        for n in 1..=10 {
            w.pr(REPO, n).head_commit(|c| c.by("human"));
            let test = w.check_run(REPO, n, "test");
            match n {
                3 | 9 => {
                    test.failure().log("error: assertion failed\n");
                }
                6 => {
                    lost = test.runner_lost().run_id();
                }
                _ => {
                    test.success();
                }
            }
        }
        w.check_run(REPO, 9, "lint")
            .failure()
            .log("error: unused import\n");
        lost
    });
    let refs: Vec<String> = (1..=10).map(|n| format!("{REPO}#{n}")).collect();
    let mut args = vec!["watch", "add"];
    args.extend(refs.iter().map(String::as_str));
    env.ok(&args);
    env.ok(&["run"]);
    let log = env.gh.requests();
    assert_eq!(
        log.count("POST /graphql Annotations"),
        1,
        "{:?}",
        log.counts()
    );
    assert_eq!(
        log.count("GET /repos/{o}/{r}/actions/jobs/{id}/logs"),
        4,
        "{:?}",
        log.counts()
    );
    assert_eq!(
        env.status(&format!("{REPO}#6"))["why"],
        json!("infra_rerun")
    );
    assert_eq!(env.gh.world(|w| w.reruns(lost.unwrap())), 1);
    for n in [3, 9] {
        let pr = format!("{REPO}#{n}");
        assert_eq!(env.pills(&pr)["ci"], json!(true), "{pr}");
        assert_ne!(env.status(&pr)["why"], json!("infra_rerun"), "{pr}");
    }
}

#[test]
fn an_armed_pr_whose_base_moved_is_read_in_full_and_updated() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO)
            .required_checks(&["test"])
            .strict()
            .required_approvals(1);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
        w.pr(REPO, 2);
        w.check_run(REPO, 2, "test").in_progress();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["watch", "add", "octo/app#2"]);
    env.ok(&["run"]);
    env.advance(600);
    env.ok(&["run"]);
    let updates = env.gh.world(|w| w.branch_updates(REPO, 1));
    env.gh.world(|w| w.advance_base(REPO, "main", 1));
    let (points, _) = next_run(&mut env);
    let log = env.gh.requests();
    // The base moved under both PRs: one summary (1 point for two PRs), one snapshot of both
    // (312 connection requests: 3 points), and the armed one's branch update (1).
    assert_eq!(log.points("POST /graphql PullRequestSummaries"), 1);
    assert_eq!(log.count("POST /graphql PullRequestSnapshots"), 1);
    assert_eq!(log.points("POST /graphql PullRequestSnapshots"), 3);
    assert_eq!(points, 1 + 3 + 1, "{:?}", log.counts());
    assert_eq!(env.gh.world(|w| w.branch_updates(REPO, 1)), updates + 1);
}

#[test]
fn a_kept_read_that_would_act_is_read_again_before_acting() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").in_progress();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    next_run(&mut env);
    assert_eq!(
        env.gh
            .requests()
            .count("POST /graphql PullRequestSnapshots"),
        0,
        "nothing changed: the kept read decides"
    );
    // An hour on, the same summary: the check never finished, which counts as a failure the
    // owner hears about. That is an action, so the PR is read in full first.
    env.advance(3600);
    env.gh.clear_requests();
    env.ok(&["run"]);
    let log = env.gh.requests();
    assert_eq!(log.count("POST /graphql PullRequestSummaries"), 1);
    assert_eq!(
        log.count("POST /graphql PullRequestSnapshots"),
        1,
        "{:?}",
        log.counts()
    );
    assert_eq!(env.pills("octo/app#1")["ci"], json!(true));
}

#[test]
fn a_thread_resolved_without_a_word_is_read_in_full() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO);
        for n in 1..=2 {
            w.pr(REPO, n);
            w.check_run(REPO, n, "test").success();
            w.thread(REPO, n)
                .comment("reviewer", "please rename this")
                .unresolved();
        }
    });
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2"]);
    env.ok(&["run"]);
    next_run(&mut env);
    assert_eq!(
        env.gh
            .requests()
            .count("POST /graphql PullRequestSnapshots"),
        0,
        "the thread count matches the kept reads"
    );
    // Resolving changes no update time: the summary's count of unresolved threads tells.
    env.gh.world(|w| {
        let thread = &mut w.get_pr_mut(REPO, 1).threads[0];
        thread.resolved = true;
        thread.resolved_by = Some("reviewer".to_owned());
    });
    next_run(&mut env);
    assert_eq!(
        env.gh
            .requests()
            .count("POST /graphql PullRequestSnapshots"),
        1
    );
    assert_eq!(env.pills("octo/app#1")["cmt"], json!(0));
    assert_eq!(env.pills("octo/app#2")["cmt"], json!(1));
}

#[test]
fn idle_prs_with_unresolved_threads_cost_no_more_than_other_idle_prs() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO);
        for n in 1..=100 {
            w.pr(REPO, n);
            w.check_run(REPO, n, "test").success();
            w.thread(REPO, n)
                .comment("reviewer", "please rename this")
                .unresolved();
        }
    });
    let refs: Vec<String> = (1..=100).map(|n| format!("{REPO}#{n}")).collect();
    let mut args = vec!["watch", "add"];
    args.extend(refs.iter().map(String::as_str));
    env.ok(&args);
    env.ok(&["run"]);
    // Each unresolved thread is asked about by its id, which is no connection.
    let (points, requests) = next_run(&mut env);
    assert_eq!(
        (points, requests),
        (1, 1),
        "0.01 points per PR: {:?}",
        env.gh.requests().counts()
    );
}

/// `n` watched PRs, read once and settled: green, with a check still running, failed with a
/// log (one in five), with an unresolved thread and comments, one in four armed to merge.
fn settled_prs(n: u64) -> TestEnv {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_approvals(1);
        for i in 1..=n {
            w.pr(REPO, i);
            w.check_run(REPO, i, "lint").success();
            if i % 5 == 3 {
                w.check_run(REPO, i, "test")
                    .failure()
                    .log("test parse ... FAILED\n");
            } else if i % 10 == 1 {
                w.check_run(REPO, i, "test").in_progress();
            } else {
                w.check_run(REPO, i, "test").success();
            }
            w.thread(REPO, i).comment("reviewer", "nit").unresolved();
            w.comment(REPO, i, "reviewer", "Thanks.");
        }
    });
    for armed in [false, true] {
        let refs: Vec<String> = (1..=n)
            .filter(|i| (i % 4 == 0) == armed)
            .map(|i| format!("{REPO}#{i}"))
            .collect();
        let mut args = vec!["watch", "add"];
        if armed {
            args.push("--merge-when-ready");
        }
        args.extend(refs.iter().map(String::as_str));
        env.ok(&args);
    }
    env.ok(&["run"]);
    env.advance(600);
    env.ok(&["run", "--force"]);
    env
}

/// The SQL statements an idle `run --force` of every PR starts (from the store's debug line).
fn idle_statements(env: &mut TestEnv) -> u64 {
    env.advance(600);
    env.gh.clear_requests();
    let out = env.ok(&["--log-level", "pr_monitor::store=debug", "run", "--force"]);
    assert!(
        env.gh
            .requests()
            .count("POST /graphql PullRequestSnapshots")
            == 0,
        "the PRs are idle: {:?}",
        env.gh.requests().counts()
    );
    let said = out.stderr;
    said.lines()
        .find_map(|l| {
            let (before, _) = l.split_once(" SQL statements")?;
            before.rsplit(' ').next()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no count of statements in:\n{said}"))
}

#[test]
fn an_idle_pr_costs_no_sql_statement_of_its_own() {
    let (few, many) = (20, 80);
    let at_few = idle_statements(&mut settled_prs(few));
    let at_many = idle_statements(&mut settled_prs(many));
    // Each chunk of ten PRs is leased, loaded and recorded in a handful of statements; a
    // statement for each idle PR would add at least one per PR.
    // Fewer than 1.5 more per PR.
    assert!(
        2 * (at_many - at_few) < 3 * (many - few),
        "{at_few} statements for {few} idle PRs, {at_many} for {many}"
    );
}

/// An idle group whose PRs' quiet decisions hold is leased, loaded and recorded as one
/// chunk: a hundred such PRs (one summary read) cost a few statements in all, not a few for
/// every ten PRs.
#[test]
fn settled_idle_prs_are_recorded_a_group_at_a_time() {
    let mut env = settled_prs(100);
    // The armed PRs, read in full by the last run, settle on their first kept read.
    idle_statements(&mut env);
    let settled = idle_statements(&mut env);
    assert!(
        settled <= 20,
        "{settled} statements for 100 idle PRs whose decisions hold"
    );
}

/// `settled_prs(n)` once more ticked, so its armed PRs settle too: every PR's decision holds.
fn all_settled(n: u64) -> TestEnv {
    let mut env = settled_prs(n);
    idle_statements(&mut env);
    env
}

/// Past the first summary read, a large run's settled PRs are looked at without loading their
/// rows and recorded a group at a time: each more group of a hundred such PRs costs a handful
/// of statements, not the twenty a group loaded, leased and recorded in full costs.
#[test]
fn a_large_runs_settled_groups_cost_a_handful_of_statements_each() {
    let (few, many) = (120, 320);
    let at_few = idle_statements(&mut all_settled(few));
    let at_many = idle_statements(&mut all_settled(many));
    assert!(
        at_many - at_few <= 2 * 6,
        "{at_few} statements for {few} settled PRs, {at_many} for {many}"
    );
}

/// A settled PR another live run holds is left to it on the path that does not load it: the
/// run counts it held and names the holder, and records every other PR.
#[test]
fn a_settled_pr_another_live_run_holds_is_left_to_it() {
    let mut env = all_settled(120);
    let holder = json!({
        "run": "elsewhere",
        "pid": 1,
        "host": "another-host",
        "since": "2026-01-01T00:00:00Z"
    });
    let before = env.status(&format!("{REPO}#115"))["last_tick_at"].clone();
    // Held for an hour from now by the wall clock, as a lease is.
    rusqlite::Connection::open(env.dir.path().join("state.db"))
        .expect("the database")
        .execute(
            "UPDATE watches SET lease_owner = ?1, lease_until = unixepoch() + 3600
             WHERE repo = ?2 AND number = 115",
            rusqlite::params![holder.to_string(), REPO],
        )
        .expect("hold the lease");
    env.advance(600);
    let out = env.ok(&["run", "--force"]);
    assert!(
        out.stdout
            .contains("ticked 119 PRs: 0 changed, 119 unchanged")
            && out
                .stdout
                .contains("1 PR held by run elsewhere (pid 1 on another-host"),
        "{}",
        out.stdout
    );
    assert_eq!(env.status(&format!("{REPO}#115"))["last_tick_at"], before);
    for n in [1, 114, 116, 120] {
        let s = env.status(&format!("{REPO}#{n}"));
        assert_eq!(s["last_tick_at"], env.now.as_str(), "{s}");
    }
}

/// `run --json` shows every settled PR as it is, as for any PR, whatever the run's size.
#[test]
fn run_json_shows_every_settled_pr_in_a_large_run() {
    let mut env = all_settled(120);
    env.advance(600);
    let out = env.ok(&["run", "--force", "--json"]).json();
    let prs = out.as_array().expect("an array");
    assert_eq!(prs.len(), 120);
    let all = env.ok(&["status", "--json"]).json();
    for (ran, now) in prs.iter().zip(all.as_array().expect("an array")) {
        assert_eq!(ran["history"], json!([]), "{ran}");
        for key in [
            "pr",
            "state",
            "title",
            "pills",
            "next_tick_at",
            "last_tick_at",
        ] {
            assert_eq!(ran[key], now[key], "{key}: {ran} against {now}");
        }
    }
}

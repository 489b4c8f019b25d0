//! Settled decisions: a PR whose summary, stored state and context are unchanged is not
//! decided again until one of its time-driven rules could turn. To show the kept read is not
//! even loaded, these tests make it unreadable in the database: a PR that loads it is read in
//! full instead.

use serde_json::json;

use crate::support::env::TestEnv;

const REPO: &str = "octo/app";
const SNAPSHOTS: &str = "POST /graphql PullRequestSnapshots";

/// Makes every kept snapshot unparseable (its hints stay): loading one fails, and the PR is
/// read in full.
fn spoil_kept_snapshots(env: &TestEnv) {
    let db = rusqlite::Connection::open(env.dir.path().join("state.db")).expect("open the db");
    db.execute("UPDATE last_reads SET snapshot = '{'", [])
        .expect("spoil the kept reads");
}

/// Moves the clock by `secs` and runs; the full reads that run made.
fn run_after(env: &mut TestEnv, secs: i64, args: &[&str]) -> usize {
    env.advance(secs);
    env.gh.clear_requests();
    env.ok(args);
    env.gh.requests().count(SNAPSHOTS)
}

/// Watches `prs`: read once, then, past the two minutes a new head keeps a PR on the fast
/// cadence, decided once more on the kept read: settled.
fn settled(env: &mut TestEnv, prs: &[&str]) {
    let mut args = vec!["watch", "add"];
    args.extend_from_slice(prs);
    env.ok(&args);
    env.ok(&["run"]);
    assert_eq!(
        run_after(env, 200, &["run", "--force"]),
        0,
        "the summary is the same"
    );
}

#[test]
fn a_pending_check_times_out_on_a_settled_pr_at_the_tick_it_passes_its_timeout() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "lint").success();
        w.check_run(REPO, 1, "e2e").in_progress();
    });
    // First seen now: `pending_timeout_sec` (an hour) counts from here.
    settled(&mut env, &["octo/app#1"]);
    spoil_kept_snapshots(&env);
    // Polled every 30 s while the check runs; the settled decision holds, so the spoilt kept
    // read is never loaded.
    assert_eq!(run_after(&mut env, 600, &["run"]), 0);
    // Forced, to the second: still running an hour in.
    assert_eq!(
        run_after(&mut env, 2800, &["run", "--force"]),
        0,
        "an hour in"
    );
    assert_eq!(env.pills("octo/app#1")["ci"], json!(false));
    // One second past the hour the check is overdue: the PR is decided again (its kept read
    // no longer loads, so it is read in full) and the owner hears.
    assert_eq!(
        run_after(&mut env, 1, &["run", "--force"]),
        1,
        "an hour and a second in"
    );
    assert_eq!(env.pills("octo/app#1")["ci"], json!(true));
    assert!(
        env.history_text("octo/app#1").contains("e2e"),
        "{}",
        env.history_text("octo/app#1")
    );
}

/// A green idle PR, settled, its kept read spoilt, and ticked `secs` later without loading
/// it.
fn settled_green_pr(secs: i64) -> TestEnv {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
    });
    settled(&mut env, &["octo/app#1"]);
    spoil_kept_snapshots(&env);
    assert_eq!(run_after(&mut env, secs, &["run", "--force"]), 0);
    assert!(env.gh.requests().writes().is_empty());
    env
}

#[test]
fn a_settled_pr_is_decided_again_when_its_watch_changes() {
    let mut env = settled_green_pr(600);
    // Arming changes the stored watch: the decision is made again, and it arms the forge's
    // auto-merge.
    env.ok(&["merge", "octo/app#1", "--when-ready"]);
    assert_eq!(run_after(&mut env, 60, &["run", "--force"]), 1);
    assert!(
        !env.gh.requests().writes().is_empty(),
        "{:?}",
        env.gh.requests().counts()
    );
}

#[test]
fn a_settled_pr_is_decided_again_when_the_config_changes() {
    let mut env = settled_green_pr(1200);
    // The same PR under a config that reports a head not moving for ten minutes: decided
    // again at once, and reported stuck.
    let stricter = env.dir.path().join("stricter.yaml");
    let config = std::fs::read_to_string(env.config_path()).expect("the config");
    std::fs::write(&stricter, format!("{config}pr:\n  stuck_after_sec: 600\n"))
        .expect("write the config");
    env.advance(60);
    env.gh.clear_requests();
    let out = env.run_with_config(&stricter, &["run", "--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.gh.requests().count(SNAPSHOTS), 1);
    assert!(
        env.history_text("octo/app#1").contains("stuck"),
        "{}",
        env.history_text("octo/app#1")
    );
}

/// A read kept before hints were kept beside it (a database from an older pr-monitor, schema
/// version 13, whose reads had no hints) has them worked out on upgrade and is decided on as it
/// is; its quiet decision settles it, so the tick after that does not load it.
#[test]
fn a_read_kept_before_hints_existed_settles_on_its_next_quiet_decision() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    let db = rusqlite::Connection::open(env.dir.path().join("state.db")).expect("open the db");
    // Back to schema 13 with no hints: what migrations 14 and 15 added is taken away.
    db.execute_batch(
        "DROP TABLE kept_hints;
         CREATE TABLE read_hints (
             watch_id  INTEGER PRIMARY KEY REFERENCES last_reads (watch_id) ON DELETE CASCADE,
             hints     TEXT NOT NULL
         ) STRICT;
         ALTER TABLE watches DROP COLUMN cross_repository;
         PRAGMA user_version = 13;",
    )
    .expect("an older schema");
    drop(db);
    assert_eq!(
        run_after(&mut env, 200, &["run", "--force"]),
        0,
        "decided on the kept read"
    );
    spoil_kept_snapshots(&env);
    assert_eq!(
        run_after(&mut env, 600, &["run", "--force"]),
        0,
        "settled: the kept read is not loaded"
    );
    assert!(env.gh.requests().writes().is_empty());
}

/// A decision that records a change is followed, at once, by the one the next tick would make
/// on what it recorded; when that one is quiet the PR is settled already: a first look settles
/// its PR, which is decided again only when a time-driven rule turns (here the two minutes a
/// new head keeps a PR on the fast cadence).
#[test]
fn a_first_look_settles_its_pr_until_a_time_driven_rule_turns() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "lint").success();
        w.check_run(REPO, 1, "e2e").in_progress();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    spoil_kept_snapshots(&env);
    assert_eq!(
        run_after(&mut env, 120, &["run", "--force"]),
        0,
        "two minutes in: settled by the first look, its kept read not loaded"
    );
    assert_eq!(
        run_after(&mut env, 1, &["run", "--force"]),
        1,
        "two minutes and a second in: decided again"
    );
    assert!(env.gh.requests().writes().is_empty());
    assert_eq!(env.pills("octo/app#1")["ci"], json!(false));
}

/// The tick that reconciles a recorded arming of the forge's auto-merge (its read shows it on)
/// settles the PR on what it recorded; the next tick does not decide, until a time-driven rule
/// turns.
#[test]
fn the_tick_that_reconciles_an_arming_settles_its_pr() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.auto_merge_executes = false;
        w.repo(REPO).required_approvals(1);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    assert!(
        !env.gh.requests().writes().is_empty(),
        "auto-merge armed: {:?}",
        env.gh.requests().counts()
    );
    assert_eq!(
        run_after(&mut env, 60, &["run", "--force"]),
        1,
        "the summary shows auto-merge on: read in full, the arming reconciled"
    );
    spoil_kept_snapshots(&env);
    assert_eq!(
        run_after(&mut env, 60, &["run", "--force"]),
        0,
        "settled by the tick that reconciled it"
    );
    assert_eq!(
        run_after(&mut env, 1, &["run", "--force"]),
        1,
        "the head's two minutes are over: decided again"
    );
    assert!(env.gh.requests().writes().is_empty());
}

/// A dry run records nothing: neither the decision it makes nor what would settle it.
#[test]
fn a_dry_run_leaves_what_is_settled_as_it_was() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    let hints = |env: &TestEnv| -> Vec<Option<i64>> {
        let db = rusqlite::Connection::open(env.dir.path().join("state.db")).expect("open the db");
        db.query_row(
            "SELECT settled_at, settled_until, settled_row, settled_context, settled_every
             FROM kept_hints",
            [],
            |r| (0..5).map(|i| r.get(i)).collect(),
        )
        .expect("the kept read's hints")
    };
    let before = hints(&env);
    assert!(before[1].is_some(), "settled: {before:?}");
    // Under a config that reports a head not moving for ten minutes, the PR is decided again
    // and reported stuck, which a dry run does not record.
    let stricter = env.dir.path().join("stricter.yaml");
    let config = std::fs::read_to_string(env.config_path()).expect("the config");
    std::fs::write(&stricter, format!("{config}pr:\n  stuck_after_sec: 600\n"))
        .expect("write the config");
    env.advance(1200);
    let out = env.run_with_config(&stricter, &["run", "--force", "--dry-run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(hints(&env), before);
    assert!(!env.history_text("octo/app#1").contains("stuck"));
}

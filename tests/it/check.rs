//! `pr-monitor check` end to end: the focused payload of a busy PR, nothing new on the second
//! run, seen state in the database or a state file or none, watch mode's exit codes, and exit
//! 3 when nothing could be read, on both forges.

use serde_json::{Value, json};

use crate::support::env::{Out, TestEnv};
use crate::support::fake_github::{Fault, at};
use crate::support::fake_gitlab::GitLabEnv;
use crate::support::forge::{FakeForge, OnGitHub};

const REPO: &str = "octo/app";

/// The PR a careful human would review: 150 review threads (one unresolved and new, one
/// resolved with a new reply), an edited comment, a review body, statuses beside check runs,
/// and a flaky job.
fn busy(env: &TestEnv) {
    env.gh.world(|w| {
        w.pr(REPO, 1).title("Big change");
        w.check_run(REPO, 1, "lint").success();
        w.check_run(REPO, 1, "test")
            .failure()
            .log("running 12 tests\nerror: failed to download crate: 502 Bad Gateway\n");
        w.status(REPO, 1, "ci/legacy")
            .failure()
            .description("legacy pipeline failed");
        w.status(REPO, 1, "deploy/preview").success();
        for i in 0..148 {
            w.thread(REPO, 1)
                .comment_at("reviewer", &format!("nit {i}"), at("2026-11-29T10:00:00Z"))
                .resolved();
        }
        w.thread(REPO, 1)
            .comment_at("reviewer", "please rename `x`", at("2026-11-29T11:00:00Z"))
            .unresolved();
        w.thread(REPO, 1)
            .comment_at("reviewer", "fine", at("2026-11-29T10:00:00Z"))
            .resolved();
        w.comment(REPO, 1, "reviewer", "please add docs")
            .at(at("2026-11-29T10:00:00Z"));
        w.review(REPO, 1, "reviewer")
            .changes_requested()
            .body("Needs tests.")
            .at(at("2026-11-29T10:30:00Z"));
    });
}

fn ids(v: &Value) -> usize {
    v.as_array().map_or(0, Vec::len)
}

#[test]
fn a_busy_pr_lists_what_needs_attention_once() {
    let env = TestEnv::new();
    busy(&env);
    let first = env.ok(&["check", "octo/app#1", "--json"]).json();
    assert_eq!(first["pr"]["title"], "Big change");
    assert_eq!(first["checks"]["source"], "commit-pinned");
    assert_eq!(first["checks"]["total"], 4, "{}", first["checks"]);
    assert_eq!(first["checks"]["failed"], 2);
    assert_eq!(first["checks"]["passed"], 2);
    let failed: Vec<&str> = first["checks"]["failedChecks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(failed, vec!["ci/legacy", "test"]);
    assert_eq!(first["checks"]["flakes"][0]["name"], "test");
    assert!(
        first["checks"]["flakes"][0]["evidence"]
            .as_str()
            .unwrap()
            .contains("502 Bad Gateway")
    );
    assert_eq!(first["threads"]["unresolved"], 1);
    assert_eq!(first["comments"]["totalReviewComments"], 150);
    assert_eq!(
        ids(&first["comments"]["newReviewCommentIds"]),
        150,
        "first look: every comment is new"
    );
    assert_eq!(
        first["comments"]["newIssueComments"][0]["body"],
        "please add docs"
    );
    assert_eq!(first["reviews"]["effectiveDecision"], "CHANGES_REQUESTED");
    assert_eq!(
        first["reviews"]["newReviews"][0]["state"],
        "CHANGES_REQUESTED"
    );
    let unresolved_id = first["threads"]["unresolvedThreadIds"][0]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        first["threadDetails"][&unresolved_id]["comments"][0]["body"],
        "please rename `x`"
    );
    assert!(first["threadDetails"][&unresolved_id]["comments"][0]["databaseId"].is_u64());
    assert_eq!(
        first["actionable"],
        json!([
            "failed_checks",
            "issue_comments",
            "review_comments",
            "unresolved_review_threads",
            "changes_requested"
        ])
    );

    // Second run: nothing new.
    let second = env.ok(&["check", "octo/app#1", "--json"]).json();
    assert_eq!(ids(&second["comments"]["newIssueCommentIds"]), 0);
    assert_eq!(ids(&second["comments"]["newReviewCommentIds"]), 0);
    assert_eq!(ids(&second["reviews"]["newReviewIds"]), 0);
    assert_eq!(second["threads"]["unresolvedNew"], 0);
    assert_eq!(
        second["actionable"],
        json!(["failed_checks", "changes_requested"])
    );

    // An edit and a reply on a resolved thread are new.
    let resolved = env
        .gh
        .world(|w| w.get_pr(REPO, 1).threads[149].node_id.clone());
    env.gh.world(|w| {
        let (node_id, database_id) = (w.new_node_id("PRRC"), w.new_database_id());
        let t = at("2026-11-29T11:55:00Z");
        w.get_pr_mut(REPO, 1).threads[149].comments.push(
            crate::support::fake_github::ThreadComment {
                node_id,
                database_id,
                author: Some("reviewer".into()),
                body: "one more thing".into(),
                created_at: t,
                updated_at: t,
                editor: None,
                pending: false,
            },
        );
        w.get_pr_mut(REPO, 1).comments[0].body = "please add docs (edited)".into();
        w.get_pr_mut(REPO, 1).comments[0].updated_at = t;
    });
    let third = env.ok(&["check", "octo/app#1", "--json"]).json();
    assert_eq!(
        third["comments"]["newIssueComments"][0]["body"],
        "please add docs (edited)"
    );
    assert_eq!(ids(&third["comments"]["newReviewCommentIds"]), 1);
    assert!(third["threadDetails"][&resolved].is_object());
}

#[test]
fn human_output_is_a_short_summary() {
    let env = TestEnv::new();
    busy(&env);
    let out = env.ok(&["check", "octo/app#1"]);
    assert!(
        out.stdout.contains("needs attention: failed_checks"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("✗ test"), "{}", out.stdout);
    assert!(out.stdout.lines().count() < 15, "{}", out.stdout);
}

#[test]
fn seen_state_in_a_file_or_none() {
    let env = TestEnv::new();
    busy(&env);
    let state = env.dir.path().join("state.json");
    let state = state.to_str().unwrap();
    let first = env
        .ok(&["check", "octo/app#1", "--json", "--state-file", state])
        .json();
    assert_eq!(
        first["comments"]["newIssueCommentIds"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let second = env
        .ok(&["check", "octo/app#1", "--json", "--state-file", state])
        .json();
    assert_eq!(second["comments"]["newIssueCommentIds"], json!([]));
    // The database's seen state is untouched by a state file.
    let db = env.ok(&["check", "octo/app#1", "--json"]).json();
    assert_eq!(
        db["comments"]["newIssueCommentIds"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // --no-state: everything is new, every time.
    for _ in 0..2 {
        let none = env
            .ok(&["check", "octo/app#1", "--json", "--no-state"])
            .json();
        assert_eq!(
            none["comments"]["newIssueCommentIds"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
    // A push between polls.
    env.gh.world(|w| {
        w.push(REPO, 1, "dev");
    });
    let pushed = env
        .ok(&["check", "octo/app#1", "--json", "--state-file", state])
        .json();
    assert_eq!(pushed["headPushedRecently"], true);
}

#[test]
fn unknown_mergeability_is_neither_conflict_nor_clean() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).conflicting().mergeable_unknown_for(1);
    });
    let first = env
        .ok(&["check", "octo/app#1", "--json", "--no-state"])
        .json();
    assert_eq!(first["merge"]["mergeable"], "UNKNOWN");
    assert_eq!(first["merge"]["hasConflicts"], false);
    let second = env
        .ok(&["check", "octo/app#1", "--json", "--no-state"])
        .json();
    assert_eq!(second["merge"]["hasConflicts"], true);
    assert_eq!(second["actionable"], json!(["merge_conflict"]));
}

#[test]
fn watch_mode_exit_codes() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").in_progress();
        w.pr(REPO, 2);
        w.check_run(REPO, 2, "test").failure();
    });
    // Nothing actionable and not ready: times out with 124.
    let out = env.run(&[
        "check",
        "octo/app#1",
        "--watch",
        "--interval",
        "0",
        "--max-duration",
        "0",
    ]);
    assert_eq!(out.code, 124, "{}", out.stdout);
    let last: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["final"], true);
    assert_eq!(last["outcome"], "timeout");
    // Actionable on the first tick: 0.
    let out = env.run(&[
        "check",
        "octo/app#2",
        "--watch",
        "--interval",
        "0",
        "--max-duration",
        "60",
    ]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "one tick line, then the final line");
    assert_eq!(lines[1]["outcome"], "actionable");
    // A forge failure that survives retries: 2.
    env.gh
        .fault(Fault::status(502).on("POST /graphql").always());
    let out = env.run(&[
        "check",
        "octo/app#1",
        "--watch",
        "--interval",
        "0",
        "--max-duration",
        "60",
    ]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    let last: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["outcome"], "error");
}

#[test]
fn watch_mode_on_a_merged_or_closed_pr_ends_at_once_with_the_outcome() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).merged();
        w.pr(REPO, 2).closed();
    });
    for (pr, outcome) in [("octo/app#1", "merged"), ("octo/app#2", "closed")] {
        let out = env.run(&[
            "check",
            pr,
            "--watch",
            "--interval",
            "1",
            "--max-duration",
            "2",
        ]);
        assert_eq!(out.code, 0, "{}", out.stdout);
        let lines: Vec<Value> = out
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "one tick, then the outcome: {}", out.stdout);
        assert_eq!(lines[1]["final"], true);
        assert_eq!(lines[1]["outcome"], outcome);
    }
}

#[test]
fn check_works_without_a_watch_or_a_database_file_beforehand() {
    let env = TestEnv::new();
    env.with_pr(REPO, 1);
    let out = env.ok(&["check", "octo/app#1", "--json", "--no-state"]);
    assert_eq!(out.json()["pr"]["number"], 1);
    assert_eq!(
        env.ok(&["status", "--json"]).json(),
        json!([]),
        "check watches nothing"
    );
}

#[test]
fn behind_is_read_from_the_branches_when_blocked_hides_it() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]).strict();
        w.pr(REPO, 1).behind(3);
        w.check_run(REPO, 1, "test").in_progress();
    });
    let p = env
        .ok(&["check", "octo/app#1", "--json", "--no-state"])
        .json();
    assert_eq!(
        p["merge"]["mergeStateStatus"], "BLOCKED",
        "GitHub masks BEHIND"
    );
    assert_eq!(p["merge"]["behind"], true);
    assert_eq!(p["merge"]["behindBy"], 3);
    assert_eq!(p["actionable"], json!(["stale_branch"]));
}

#[test]
fn every_list_pages_past_one_hundred() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1);
        for i in 0..120 {
            w.check_run(REPO, 1, &format!("check-{i:03}")).success();
        }
        w.check_run(REPO, 1, "check-late").failure();
        for i in 0..110 {
            w.review(REPO, 1, &format!("reviewer-{i}")).approved();
        }
        for i in 0..130 {
            w.comment(REPO, 1, "someone", &format!("comment {i}"));
        }
        let mut thread = w.thread(REPO, 1);
        for i in 0..105 {
            thread = thread.comment("reviewer", &format!("reply {i}"));
        }
        thread.unresolved();
    });
    let p = env
        .ok(&["check", "octo/app#1", "--json", "--no-state"])
        .json();
    assert_eq!(p["checks"]["total"], 121);
    assert_eq!(
        p["checks"]["failedChecks"][0]["name"], "check-late",
        "the failure on page two is seen"
    );
    assert_eq!(p["reviews"]["total"], 110);
    assert_eq!(p["comments"]["totalIssueComments"], 130);
    assert_eq!(p["comments"]["totalReviewComments"], 105);
    let thread = p["threads"]["unresolvedThreadIds"][0]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        p["threadDetails"][&thread]["comments"]
            .as_array()
            .unwrap()
            .len(),
        105
    );
    assert!(
        env.gh.requests().count("POST /graphql Page") >= 4,
        "{:?}",
        env.gh.requests().counts()
    );
}

#[test]
fn readiness_criteria_from_the_command_line() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).label("automerge");
        w.check_run(REPO, 1, "test").success();
        w.review(REPO, 1, "ci-bot").approved();
    });
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "octo/app#1", "--json", "--no-state"];
        args.extend_from_slice(extra);
        env.ok(&args).json()
    };
    assert_eq!(check(&[])["ready"], true);
    assert_eq!(
        check(&[
            "--require-label",
            "automerge",
            "--require-approval-from",
            "ci-bot"
        ])["ready"],
        true
    );
    let p = check(&[
        "--require-label",
        "ship-it",
        "--require-approval-from",
        "verify-bot",
    ]);
    assert_eq!(p["ready"], false);
    assert_eq!(
        p["readiness"],
        json!({"missingLabels": ["ship-it"], "missingApprovalsFrom": ["verify-bot"]})
    );
}

#[test]
fn watch_mode_ends_ready_when_checks_and_approvals_land_mid_watch() {
    use std::io::{BufRead, BufReader};
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_approvals(1);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").in_progress();
    });
    let mut child = env.spawn(&[
        "check",
        "octo/app#1",
        "--watch",
        "--interval",
        "1",
        "--max-duration",
        "60",
        "--require-approval-from",
        "lead",
    ]);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["ready"], false, "{first}");
    assert_eq!(first["hasActionable"], false);
    // The checks pass and the approval lands while the watch waits for its next tick.
    env.gh.world(|w| {
        w.update_check_run(REPO, 1, "test").success();
        w.review(REPO, 1, "lead").approved();
    });
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{rest:?}");
    let last = rest.last().unwrap();
    assert_eq!(last["final"], true);
    assert_eq!(last["outcome"], "ready", "{rest:?}");
    assert_eq!(rest[rest.len() - 2]["ready"], true);
}

#[test]
fn a_conflict_whose_files_the_forge_does_not_name_says_so() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).conflicting();
        w.pr(REPO, 2);
    });
    let conflicting = env
        .ok(&["check", "octo/app#1", "--json", "--no-state"])
        .json();
    assert_eq!(conflicting["merge"]["hasConflicts"], true);
    assert_eq!(conflicting["merge"]["conflictFiles"], json!([]));
    assert_eq!(conflicting["merge"]["conflictAnalysisAvailable"], false);
    let clean = env
        .ok(&[
            "check",
            "octo/app#2",
            "--json",
            "--no-state",
            "--full-payload",
        ])
        .json();
    assert_eq!(clean["merge"]["conflictAnalysisAvailable"], true);
    assert_eq!(clean["merge_conflicts"], json!([]));
    assert!(clean["review_comments"].is_array());
}

/// One-shot `check` that reads nothing exits 3, as `run` does, with the reason on stderr and
/// nothing on stdout: the forge refuses the token, the token cannot be read (its variable
/// empty), or the forge cannot be reached. `check --watch` keeps the contract's exit 2 for a
/// forge failure.
fn one_shot_check_exits_3_when_nothing_can_be_read(f: &impl FakeForge) {
    f.open(1, "dev");
    let pr = f.pr(1);
    f.ok(&["check", &pr, "--json"]);
    let args = ["check", &pr, "--json"];
    let cut_off = (f.token_var(), f.api_url());
    for (what, out, says) in crate::nothing_read::cut_off_runs(f, (cut_off.0, &cut_off.1), &args) {
        crate::nothing_read::says_nothing_read(&args, what, &out, &says);
    }
    let out: Out = f
        .command_for(&[
            "check",
            &pr,
            "--watch",
            "--interval",
            "0",
            "--max-duration",
            "60",
        ])
        .env(f.token_var(), "wrong-token")
        .output()
        .unwrap()
        .into();
    assert_eq!(out.code, 2, "watch mode: {out:?}");
    let last: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["outcome"], "error", "{last}");
}

#[test]
fn one_shot_check_exits_3_when_nothing_can_be_read_on_github() {
    one_shot_check_exits_3_when_nothing_can_be_read(&OnGitHub::new());
}

#[test]
fn one_shot_check_exits_3_when_nothing_can_be_read_on_gitlab() {
    one_shot_check_exits_3_when_nothing_can_be_read(&GitLabEnv::new());
}

//! Seed 002's policies end to end, through the binary against the fakes with `--now`: a flake
//! beside a real failure is labelled, conflict files reach the agent, `policy.checks: required`,
//! and the history's words about who merges.

use serde_json::json;

use crate::support::env::TestEnv;
use crate::support::fake_gitlab::GitLabEnv;
use crate::support::forge::{FakeForge, OnGitHub};

const REPO: &str = "octo/app";

#[test]
fn a_flake_beside_a_real_failure_is_labelled_for_the_agent() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("fixer-bot"));
        w.check_run(REPO, 1, "lint")
            .failure()
            .log("error[E0425]: cannot find value `x`\n");
        w.check_run(REPO, 1, "deps").failure().log(
            "fetching crates\nerror: failed to download from registry: 503 Service Unavailable\n",
        );
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    let checks = msgs[0]["checks"].as_array().unwrap();
    let flake = |name: &str| {
        checks
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {checks:?}"))["flake"]
            .clone()
    };
    assert_eq!(flake("lint"), false);
    assert_eq!(flake("deps"), true);
    let body = msgs[0]["body"].as_str().unwrap();
    assert!(
        body.contains("## Failed check: `deps` (infrastructure flake"),
        "{body}"
    );
    assert!(body.contains("## Failed check: `lint`\n"), "{body}");
}

/// A conflict's files, told by comparing each side with where they parted: in `check` and in
/// the conflict message the agent gets; read only for a PR that conflicts.
fn conflict_files_reach_check_and_the_agent(f: &mut impl FakeForge) {
    f.job(
        "conflicts",
        "name: conflicts\npolicy:\n  agent: fixer\n  conflicts: agent\n",
    );
    f.open(1, "fixer-bot");
    f.open(2, "fixer-bot");
    let check = |n: u64| {
        f.ok(&["check", &f.pr(n), "--json", "--no-state", "--full-payload"])
            .json()
    };
    f.clear_requests();
    check(2);
    assert!(
        f.requests_by_token()
            .iter()
            .all(|(r, _)| !r.contains("compare")),
        "no comparison without a conflict: {:?}",
        f.requests_by_token()
    );
    f.conflicting_in(1, &["src/lib.rs", "Cargo.lock"]);
    let p = check(1);
    assert_eq!(p["merge"]["hasConflicts"], true, "{p}");
    assert_eq!(
        p["merge"]["conflictFiles"],
        json!(["Cargo.lock", "src/lib.rs"])
    );
    assert_eq!(p["merge"]["conflictAnalysisAvailable"], true);
    assert_eq!(
        p["merge_conflicts"],
        json!([{"path": "Cargo.lock"}, {"path": "src/lib.rs"}])
    );
    f.ok(&["watch", "add", "--job", "conflicts", &f.pr(1)]);
    f.ok(&["run"]);
    let msgs = f.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["kind"], "conflict");
    assert_eq!(
        msgs[0]["conflict"]["files"],
        json!(["Cargo.lock", "src/lib.rs"])
    );
    let body = msgs[0]["body"].as_str().unwrap();
    assert!(body.contains("- `src/lib.rs`\n"), "{body}");
}

#[test]
fn conflict_files_reach_check_and_the_agent_on_github() {
    conflict_files_reach_check_and_the_agent(&mut OnGitHub::new());
}

#[test]
fn conflict_files_reach_check_and_the_agent_on_gitlab() {
    conflict_files_reach_check_and_the_agent(&mut GitLabEnv::new());
}

#[test]
fn with_checks_required_only_the_checks_the_base_requires_are_judged() {
    let env = TestEnv::new();
    env.job(
        "required",
        "name: required\npolicy:\n  agent: fixer\n  checks: required\n",
    );
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]);
        // #1: the optional `lint` fails on the agent's commit, the required `test` passes.
        w.pr(REPO, 1).head_commit(|c| c.by("fixer-bot"));
        w.check_run(REPO, 1, "lint")
            .failure()
            .log("error: unused\n");
        w.check_run(REPO, 1, "test").success();
        // #2: the required `test` fails.
        w.pr(REPO, 2).head_commit(|c| c.by("fixer-bot"));
        w.check_run(REPO, 2, "lint").success();
        w.check_run(REPO, 2, "test")
            .failure()
            .log("assertion failed\n");
    });
    env.ok(&[
        "watch",
        "add",
        "--job",
        "required",
        "octo/app#1",
        "octo/app#2",
    ]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["pr"]["number"], 2);
    assert_eq!(msgs[0]["checks"][0]["name"], "test");
    assert_eq!(env.pills("octo/app#1")["ci"], false);
    assert_eq!(env.pills("octo/app#1")["ci_fixing"], false);
    assert_eq!(env.status("octo/app#1")["why"], serde_json::Value::Null);
    assert_eq!(env.pills("octo/app#2")["ci_fixing"], true);
}

#[test]
fn fix_and_feedback_never_reach_the_agent_in_the_same_tick() {
    let mut env = TestEnv::new();
    env.agentic_job();
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("fixer-bot"));
        w.check_run(REPO, 1, "lint").failure().log("error: x\n");
        w.thread(REPO, 1)
            .comment("owner", "please rename `x`")
            .unresolved();
    });
    env.ok(&["watch", "add", "--job", "agentic", "octo/app#1"]);
    env.ok(&["run"]);
    let kinds = inbox_kinds;
    assert_eq!(kinds(&env), ["ci_failure"], "the fix goes first, alone");
    env.advance(30);
    env.ok(&["run", "--force"]);
    assert_eq!(
        kinds(&env),
        ["ci_failure"],
        "feedback waits while the fix is out"
    );
    // The agent pushes its fix: the feedback follows.
    env.advance(60);
    env.gh.world(|w| {
        w.push(REPO, 1, "fixer-bot");
    });
    env.ok(&["run", "--force"]);
    assert_eq!(kinds(&env), ["ci_failure", "review_feedback"]);
}

/// The kinds of the agent's inbox messages, oldest first.
fn inbox_kinds(env: &TestEnv) -> Vec<String> {
    let mut msgs = env.inbox_messages();
    msgs.sort_by_key(|m| m["created_at"].as_str().unwrap_or_default().to_owned());
    msgs.iter()
        .map(|m| m["kind"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Seed 002's clean-but-stale: a failing freshness check on a clean branch behind its base is
/// answered by a branch update, never sent to the agent as a code failure; the same check
/// failing on a branch that is not behind is the code's.
#[test]
fn a_failing_freshness_check_on_a_behind_branch_updates_it_instead_of_reaching_the_agent() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        for (n, behind) in [(1, 2), (2, 0)] {
            w.pr(REPO, n)
                .behind(behind)
                .head_commit(|c| c.by("fixer-bot"));
            w.check_run(REPO, n, "test").success();
            w.check_run(REPO, n, "branch-up-to-date")
                .failure()
                .log("error: the branch is behind main\n");
        }
    });
    env.watch_armed_for_fixer(&["octo/app#1", "octo/app#2"]);
    env.ok(&["run"]);
    assert_eq!(env.gh.world(|w| w.branch_updates(REPO, 1)), 1);
    assert_eq!(env.pills("octo/app#1")["ci"], false);
    assert_eq!(env.pills("octo/app#1")["ci_fixing"], false);
    let history = env.history_text("octo/app#1");
    assert!(history.contains("a freshness check"), "{history}");
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["pr"]["number"], 2, "only the PR that is not behind");
    assert_eq!(msgs[0]["kind"], "ci_failure");
}

/// A conflict met while updating the branch (here a rebase that conflicts commit by commit,
/// though the PR merges cleanly) follows the conflict policy: `conflicts: agent` sends it to
/// the agent; otherwise `cnf` is lit for the owner. The update is asked once.
#[test]
fn a_conflict_met_during_a_branch_update_follows_the_conflict_policy() {
    for handler in ["agent", "owner"] {
        let mut env = TestEnv::new();
        env.job(
            "rebasing",
            &format!(
                "name: rebasing\npolicy:\n  agent: fixer\n  conflicts: {handler}\n  update_method: rebase\n  update_branch: always\n"
            ),
        );
        env.gh.world(|w| {
            w.pr(REPO, 1)
                .behind(2)
                .rebase_conflicts()
                .changed_on_both_sides(&["src/lib.rs"])
                .head_commit(|c| c.by("fixer-bot"));
            w.check_run(REPO, 1, "test").success();
        });
        env.ok(&["watch", "add", "--job", "rebasing", "octo/app#1"]);
        let want: &[&str] = if handler == "agent" {
            &["conflict"]
        } else {
            &[]
        };
        // The tick whose update found the conflict hands it on, with the files both sides
        // changed.
        env.ok(&["run"]);
        assert_eq!(inbox_kinds(&env), want, "{handler}: in the same tick");
        if handler == "agent" {
            let msgs = env.inbox_messages();
            assert_eq!(msgs[0]["conflict"]["files"], json!(["src/lib.rs"]));
        }
        for _ in 0..2 {
            env.advance(30);
            env.ok(&["run", "--force"]);
        }
        assert_eq!(
            env.gh.requests().count("POST /graphql UpdateBranch"),
            1,
            "{handler}: asked once"
        );
        assert_eq!(env.pills("octo/app#1")["cnf"], true, "{handler}");
        assert_eq!(inbox_kinds(&env), want, "{handler}: sent once");
    }
}

/// One writer per branch, the other way round: while review feedback is with the agent, a CI
/// failure on the agent's new commit waits (nothing new is sent); once the agent marks the
/// feedback done, the fix follows.
#[test]
fn feedback_with_the_agent_holds_back_a_ci_fix_until_it_is_answered() {
    let mut env = TestEnv::new();
    env.agentic_job();
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("fixer-bot"));
        w.check_run(REPO, 1, "lint").success();
        w.thread(REPO, 1)
            .comment("owner", "please rename `x`")
            .unresolved();
    });
    env.ok(&["watch", "add", "--job", "agentic", "octo/app#1"]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(inbox_kinds(&env), ["review_feedback"]);
    let feedback_id = msgs[0]["id"].as_str().unwrap().to_owned();
    // The agent pushes a commit; its checks fail while the feedback is still out.
    env.advance(60);
    env.gh.world(|w| {
        w.push(REPO, 1, "fixer-bot");
        w.check_run(REPO, 1, "lint").failure().log("error: x\n");
    });
    for _ in 0..2 {
        env.ok(&["run", "--force"]);
        env.advance(30);
    }
    assert_eq!(inbox_kinds(&env), ["review_feedback"], "the fix waits");
    assert_eq!(env.pills("octo/app#1")["ci_fixing"], false);
    let history = env.history_text("octo/app#1");
    assert!(
        history.contains("waits: review feedback is with fixer"),
        "{history}"
    );
    // The agent marks the feedback done: the fix goes.
    env.ok(&["inbox", "done", &feedback_id]);
    env.ok(&["run", "--force"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["kind"], "ci_failure");
    assert_eq!(msgs[0]["checks"][0]["name"], "lint");
    assert_eq!(env.pills("octo/app#1")["ci_fixing"], true);
}

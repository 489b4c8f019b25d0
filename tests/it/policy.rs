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
    let kinds = |env: &TestEnv| -> Vec<String> {
        let mut msgs = env.inbox_messages();
        msgs.sort_by_key(|m| m["created_at"].as_str().unwrap_or_default().to_owned());
        msgs.iter()
            .map(|m| m["kind"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
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

//! Watches that are not one PR: `mine:` (every open PR the owner authored, on any repository,
//! found with one search request) and `branch:` (the checks on a branch's head).

use crate::support::env::TestEnv;
use crate::support::fake_gitlab::GitLabEnv;

fn watched_numbers(env: &TestEnv) -> Vec<String> {
    let all = env.ok(&["status", "--json"]).json();
    let mut prs: Vec<String> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] != "branch")
        .map(|s| format!("{}#{}", s["repo"].as_str().unwrap(), s["number"]))
        .collect();
    prs.sort();
    prs
}

#[test]
fn mine_github_finds_prs_in_two_repositories_with_one_search_request() {
    let mut env = TestEnv::new();
    env.job("mine", "name: mine\nwatch:\n  - mine: github\n");
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.pr("octo/lib", 7);
        w.pr("octo/app", 2).author("someone-else");
        w.pr("octo/lib", 8).closed();
    });
    let out = env.ok(&["run"]);
    assert!(
        out.stdout
            .contains("watching https://github.com/octo/lib/pull/7 (job mine)"),
        "{}",
        out.stdout
    );
    assert_eq!(watched_numbers(&env), ["octo/app#1", "octo/lib#7"]);
    assert_eq!(
        env.gh.requests().count("POST /graphql MyOpenPullRequests"),
        1,
        "one search request finds both repositories' PRs"
    );
    assert_eq!(env.gh.requests().count("POST /graphql OpenPullRequests"), 0);
    for s in env.ok(&["status", "--json"]).json().as_array().unwrap() {
        assert_eq!(s["job"], "mine");
        assert_eq!(s["kind"], "pr");
    }

    // The next run within idle_poll_sec searches nothing; a later one finds a new PR, and a
    // PR that left the list (merged) is ticked to its end like any other.
    env.ok(&["run"]);
    assert_eq!(
        env.gh.requests().count("POST /graphql MyOpenPullRequests"),
        1
    );
    env.gh.world(|w| {
        w.pr("octo/site", 3);
        w.pr("octo/app", 1).merged();
    });
    env.advance(301);
    env.ok(&["run"]);
    assert_eq!(
        env.gh.requests().count("POST /graphql MyOpenPullRequests"),
        2
    );
    assert_eq!(
        watched_numbers(&env),
        ["octo/app#1", "octo/lib#7", "octo/site#3"]
    );
    assert_eq!(env.status("octo/app#1")["state"], "merged");
}

#[test]
fn mine_gitlab_finds_mrs_in_two_projects_with_one_listing() {
    let env = GitLabEnv::new();
    env.job("mine", "name: mine\nwatch:\n  - mine: gitlab\n");
    env.gl.world(|w| {
        w.mr("g/app", 1).author("owner");
        w.mr("g/sub/lib", 4).author("owner");
        w.mr("g/app", 2).author("someone-else");
    });
    env.ok(&["run"]);
    let mut watched: Vec<String> = env
        .ok(&["status", "--json"])
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["pr"].as_str().unwrap().to_owned())
        .collect();
    watched.sort();
    assert_eq!(
        watched,
        [
            "https://gitlab.example.com/g/app/-/merge_requests/1",
            "https://gitlab.example.com/g/sub/lib/-/merge_requests/4",
        ]
    );
    assert_eq!(env.gl.requests().count("GET /merge_requests"), 1);
}

#[test]
fn a_mine_entry_takes_no_filters() {
    let env = TestEnv::new();
    env.job(
        "mine",
        "name: mine\nwatch:\n  - mine: github\n    labels: [x]\n",
    );
    let out = env.run(&["config", "check"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("takes no filters"), "{}", out.stderr);
}

/// A job watching `octo/app@main`'s `test` check for the agent `fixer`.
/// The job `main` watching `octo/app@main` (check `test`) for the agent `fixer`.
pub(crate) fn branch_job(env: &TestEnv) {
    env.job(
        "main",
        "name: main\nwatch:\n  - branch: octo/app@main\n    checks: [test]\npolicy:\n  agent: fixer\n",
    );
}

/// The branch's row of `status --json`.
pub(crate) fn branch_row(env: &TestEnv) -> serde_json::Value {
    let all = env.ok(&["status", "--json"]).json();
    all.as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "branch")
        .cloned()
        .unwrap_or_else(|| panic!("no branch row: {all}"))
}

#[test]
fn a_failing_main_sends_one_branch_failure_and_clears_on_green() {
    let mut env =
        TestEnv::with_config("report:\n  html_path: page.html\n  metrics_path: metrics.prom\n");
    branch_job(&env);
    let red = env.gh.world(|w| {
        let sha = w.push_branch("octo/app", "main", "owner", |c| c);
        w.check_run_on("octo/app", &sha, "test")
            .failure()
            .log("running 3 tests\nassertion failed: parser accepts `}`\n");
        w.check_run_on("octo/app", &sha, "lint").failure();
        sha
    });
    let out = env.ok(&["run"]);
    assert!(
        out.stdout
            .contains("branch octo/app@main: ci lit: test failed"),
        "{}",
        out.stdout
    );
    let messages = env.inbox_messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let m = &messages[0];
    assert_eq!(m["kind"], "branch_failure");
    assert_eq!(m["schema"], 1);
    assert_eq!(
        m["pr"],
        serde_json::Value::Null,
        "a branch's message names no PR"
    );
    assert_eq!(
        m["branch"],
        serde_json::json!({"repo": "octo/app", "name": "main", "head_sha": red,
            "forge": "github", "url": "https://github.com/octo/app/tree/main"})
    );
    let checks = m["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "only the mapped check: {checks:?}");
    assert_eq!(checks[0]["name"], "test");
    assert!(
        checks[0]["log_tail"]
            .as_str()
            .unwrap()
            .contains("assertion failed"),
        "{m}"
    );
    assert_eq!(m["trusted_by"], "push by owner");
    let row = branch_row(&env);
    assert_eq!(row["branch"], "main");
    assert_eq!(row["number"], serde_json::Value::Null);
    assert_eq!(row["pills"]["ci"], true);
    assert_eq!(row["head_sha"], red.as_str());
    let text = env.ok(&["status"]).stdout;
    assert!(
        text.contains("branch octo/app@main ✗ 1 failing  ci  test failed"),
        "{text}"
    );
    let page = std::fs::read_to_string(env.dir.path().join("page.html")).unwrap();
    assert!(
        page.contains("branch main ✗ 1 failing</a>")
            && page.contains(r#"<span class="pill ci">ci</span>"#),
        "{page}"
    );
    let metrics = std::fs::read_to_string(env.dir.path().join("metrics.prom")).unwrap();
    assert!(
        metrics.contains("pr_monitor_branches{pill=\"ci\"} 1\n"),
        "{metrics}"
    );

    // Looked at again: still red, nothing sent twice.
    env.advance(301);
    env.ok(&["run"]);
    assert_eq!(env.inbox_messages().len(), 1);
    assert_eq!(branch_row(&env)["pills"]["ci"], true);

    // A green head clears it.
    env.gh.world(|w| {
        let sha = w.push_branch("octo/app", "main", "owner", |c| c);
        w.check_run_on("octo/app", &sha, "test").success();
    });
    env.advance(301);
    let out = env.ok(&["run"]);
    assert!(
        out.stdout.contains("branch octo/app@main: ci cleared"),
        "{}",
        out.stdout
    );
    assert_eq!(branch_row(&env)["pills"]["ci"], false);
    assert_eq!(env.inbox_messages().len(), 1);
    let metrics = std::fs::read_to_string(env.dir.path().join("metrics.prom")).unwrap();
    assert!(
        metrics.contains("pr_monitor_branches{pill=\"ci\"} 0\n"),
        "{metrics}"
    );
}

#[test]
fn a_failure_on_a_head_pushed_by_an_outsider_lights_ci_and_reaches_no_agent() {
    let env = TestEnv::new();
    branch_job(&env);
    env.gh.world(|w| {
        let sha = w.push_branch("octo/app", "main", "mallory", |c| c);
        w.check_run_on("octo/app", &sha, "test").failure();
    });
    env.ok(&["run"]);
    assert!(env.inbox_messages().is_empty());
    let row = branch_row(&env);
    assert_eq!(row["pills"]["ci"], true);
    assert_eq!(row["trusted_by"], serde_json::Value::Null);
}

#[test]
fn an_idle_branch_costs_one_point_per_look_like_an_idle_pr() {
    let mut env = TestEnv::new();
    branch_job(&env);
    env.gh.world(|w| {
        let sha = w.push_branch("octo/app", "main", "owner", |c| c);
        w.check_run_on("octo/app", &sha, "test").success();
    });
    env.ok(&["run"]);
    env.gh.clear_requests();
    env.ok(&["run"]);
    assert_eq!(env.gh.requests().total(), 0, "not due yet");
    env.advance(301);
    env.ok(&["run"]);
    let log = env.gh.requests();
    assert_eq!(
        (log.points(""), log.total()),
        (1, 1),
        "one read of the branch: {:?}",
        log.counts()
    );
    assert_eq!(log.count("POST /graphql BranchHeads"), 1);
}

#[test]
fn a_failing_gitlab_branch_sends_one_branch_failure_and_clears_on_green() {
    let mut env = GitLabEnv::new();
    env.job(
        "main",
        "name: main\nwatch:\n  - branch: g/sub/app@main\n    forge: gitlab\npolicy:\n  agent: fixer\n",
    );
    let red = env.gl.world(|w| {
        let (sha, pipeline) = w.push_branch("g/sub/app", "main", "owner");
        w.pipeline_job(pipeline, "test")
            .failed()
            .trace("error[E0308]: mismatched types\n");
        sha
    });
    env.ok(&["run"]);
    let messages = env.inbox_messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["kind"], "branch_failure");
    assert_eq!(messages[0]["branch"]["repo"], "g/sub/app");
    assert_eq!(messages[0]["branch"]["head_sha"], red.as_str());
    assert!(
        messages[0]["checks"][0]["log_tail"]
            .as_str()
            .unwrap()
            .contains("mismatched types"),
        "{}",
        messages[0]
    );
    assert_eq!(branch_row(&env)["pills"]["ci"], true);
    env.advance(301);
    env.ok(&["run"]);
    assert_eq!(env.inbox_messages().len(), 1, "once per head and check");
    env.gl.world(|w| {
        let (_, pipeline) = w.push_branch("g/sub/app", "main", "owner");
        w.pipeline_job(pipeline, "test").success();
    });
    env.advance(301);
    env.ok(&["run"]);
    assert_eq!(branch_row(&env)["pills"]["ci"], false);
}

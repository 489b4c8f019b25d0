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
            "https://gitlab.com/g/app/-/merge_requests/1",
            "https://gitlab.com/g/sub/lib/-/merge_requests/4",
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

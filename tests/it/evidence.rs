//! What the evidence on a chunk's failing heads costs in requests on GitHub: each head's pushes
//! are read once (`GET /repos/{o}/{r}/activity`), and its commits' signatures come from the
//! chunk's one annotations query (`PullRequest.commits` beside the check runs' annotations)
//! instead of a `GET /repos/{o}/{r}/pulls/{n}/commits` each, with the same verdicts; where
//! GraphQL cannot tell what REST would (an App bot signs as no login there), REST is asked.

use crate::support::env::TestEnv;

const REPO: &str = "octo/app";
const ACTIVITY: &str = "GET /repos/{o}/{r}/activity";
const COMMITS: &str = "GET /repos/{o}/{r}/pulls/{n}/commits";
const ANNOTATIONS: &str = "POST /graphql Annotations";

/// A second agent, `claude`, that pushes as the GitHub App bot `claude[bot]`.
const CLAUDE: &str = "  claude:\n    inbox: inbox/claude\n    logins: [\"claude[bot]\"]\n";

/// One chunk watched for the agent `fixer`: #1 the agent's failing head, pushed by it; #2 a
/// human's failing head; #3 the agent's signed failing head, pushed by an outsider; #4 green.
fn a_chunk_of_failing_heads() -> TestEnv {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("fixer-bot"));
        w.pr(REPO, 2).head_commit(|c| c.by("dev"));
        w.pr(REPO, 3)
            .head_commit(|c| c.by("fixer-bot").verified().pushed_by("mallory", None));
        w.pr(REPO, 4).head_commit(|c| c.by("dev"));
        for n in 1..=3 {
            w.check_run(REPO, n, "test")
                .failure()
                .log(&format!("test case_{n} ... FAILED\n"));
        }
        w.check_run(REPO, 4, "test").success();
    });
    watch_for_fixer(&env, 4);
    env
}

/// Watches PRs 1 to `n` for the agent `fixer`.
fn watch_for_fixer(env: &TestEnv, n: u64) {
    let prs: Vec<String> = (1..=n).map(|n| format!("{REPO}#{n}")).collect();
    let mut args = vec!["watch", "add", "--agent", "fixer"];
    args.extend(prs.iter().map(String::as_str));
    env.ok(&args);
}

#[test]
fn a_chunks_failing_heads_have_their_commits_listed_with_its_annotations() {
    let env = a_chunk_of_failing_heads();
    env.ok(&["run"]);
    let log = env.gh.requests();
    assert_eq!(
        (
            log.count(ANNOTATIONS),
            log.count(COMMITS),
            log.count(ACTIVITY)
        ),
        (1, 0, 3),
        "one query for the chunk, one activity read per failing head: {:?}",
        log.counts()
    );
    assert_eq!(
        log.points(ANNOTATIONS),
        1,
        "the commits cost the chunk's query no point more"
    );
    let msgs = env.inbox_messages();
    let mut trusted: Vec<(&str, &str)> = msgs
        .iter()
        .map(|m| {
            (
                m["pr"]["url"].as_str().unwrap_or_default(),
                m["trusted_by"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    trusted.sort_unstable();
    assert_eq!(
        trusted,
        [
            ("https://github.com/octo/app/pull/1", "push by fixer-bot"),
            ("https://github.com/octo/app/pull/3", "signatures"),
        ],
        "{msgs:?}"
    );
    let human = env.status("octo/app#2");
    assert_eq!(human["why"], "not_agent_commit", "{human}");
    assert_eq!(human["pills"]["ci"], true);
    let history = env.history_text("octo/app#2");
    assert!(
        !history.contains("not trusted"),
        "the failure is the owner's; nothing was refused: {history}"
    );
}

#[test]
fn an_app_bots_signed_commits_are_read_from_rest_where_graphql_names_no_login() {
    let env = TestEnv::with_config(CLAUDE);
    env.gh.world(|w| {
        w.pr(REPO, 1).head_ref("claude/fix").head_commit(|c| {
            c.app_bot("claude[bot]")
                .verified()
                .pushed_by("mallory", None)
        });
        w.check_run(REPO, 1, "lint")
            .failure()
            .log("error: unused\n");
    });
    env.ok(&["watch", "add", "--agent", "claude", "octo/app#1"]);
    env.ok(&["run"]);
    let log = env.gh.requests();
    assert_eq!(
        (log.count(ANNOTATIONS), log.count(COMMITS)),
        (1, 1),
        "{:?}",
        log.counts()
    );
    let msgs = env.inbox_messages_of("inbox/claude");
    assert_eq!(msgs.len(), 1, "{}", env.history_text("octo/app#1"));
    assert_eq!(msgs[0]["trusted_by"], "signatures");
}

/// The largest chunk query: ten PRs of the agent, each with five failed checks, asks for 50
/// runs' annotations and ten PRs' commits, 60 connections: still one point.
#[test]
fn a_full_chunks_annotations_and_commits_cost_one_point() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        for n in 1..=10 {
            w.pr(REPO, n).head_commit(|c| c.by("dev"));
            for check in 1..=5 {
                w.check_run(REPO, n, &format!("test-{check}"))
                    .failure()
                    .log("test case ... FAILED\n");
            }
        }
    });
    watch_for_fixer(&env, 10);
    env.ok(&["run"]);
    let log = env.gh.requests();
    assert_eq!(
        (
            log.count(ANNOTATIONS),
            log.points(ANNOTATIONS),
            log.count(COMMITS)
        ),
        (1, 1, 0),
        "{:?}",
        log.counts()
    );
    assert_eq!(env.status("octo/app#10")["why"], "not_agent_commit");
}

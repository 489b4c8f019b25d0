//! A chunk's armings asked together: the PRs of one chunk whose plans turn GitHub's auto-merge
//! on are armed in one GraphQL document, each alias's answer handled as a single write's is.

use crate::support::env::TestEnv;
use crate::support::fake_github::Fault;

const REPO: &str = "octo/app";

/// Watches `prs` (repository, number) with merge-when-ready, each with its required check
/// still running (so the forge's auto-merge is what merges it), on a fresh env.
fn armed_and_running(prs: &[(&str, u64)]) -> TestEnv {
    let env = TestEnv::new();
    env.gh.world(|w| {
        for &(repo, n) in prs {
            w.repo(repo).required_checks(&["test"]);
            w.pr(repo, n);
            w.check_run(repo, n, "test").in_progress();
        }
    });
    let refs: Vec<String> = prs.iter().map(|(r, n)| format!("{r}#{n}")).collect();
    let mut args = vec!["watch", "add", "--merge-when-ready"];
    args.extend(refs.iter().map(String::as_str));
    env.ok(&args);
    env
}

/// How many times GitHub was asked to arm each of `prs`.
fn enables(env: &TestEnv, prs: &[(&str, u64)]) -> Vec<usize> {
    env.gh.world(|w| {
        prs.iter()
            .map(|&(r, n)| w.auto_merge_enables(r, n))
            .collect()
    })
}

/// The intents recorded (all, open).
fn intents(env: &TestEnv) -> (i64, i64) {
    let db = rusqlite::Connection::open(env.dir.path().join("state.db")).expect("the database");
    db.query_row(
        "SELECT count(*), count(*) - count(resolved_at) FROM intents WHERE kind = 'arm'",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .expect("count the intents")
}

/// The run armed its PRs in one request.
fn one_arming_request(env: &TestEnv) {
    let log = env.gh.requests();
    assert_eq!(
        log.count("POST /graphql EnableAutoMerges"),
        1,
        "{:?}",
        log.counts()
    );
}

#[test]
fn a_chunks_armed_prs_are_armed_in_one_request() {
    let prs: Vec<(&str, u64)> = (1..=5).map(|n| (REPO, n)).collect();
    let env = armed_and_running(&prs);
    env.ok(&["run"]);
    one_arming_request(&env);
    assert_eq!(env.gh.requests().count("POST /graphql EnableAutoMerge"), 0);
    assert_eq!(enables(&env, &prs), [1; 5]);
    for (repo, n) in &prs {
        let pr = format!("{repo}#{n}");
        let s = env.status(&pr);
        assert_eq!(
            (s["merge_armed"].clone(), s["merge_via"].clone()),
            (true.into(), "auto_merge".into()),
            "{s}"
        );
        assert!(env.history_text(&pr).contains("auto-merge enabled"), "{pr}");
    }
    assert_eq!(intents(&env), (5, 5), "each announced before the write");
    // The next read reconciles each, and asks nothing again.
    let mut env = env;
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(enables(&env, &prs), [1; 5]);
    assert_eq!(intents(&env), (5, 0));
}

/// One PR of the chunk is on a base without protection rules, which GitHub refuses to arm:
/// its refusal is handled as a single write's (pr-monitor merges it itself once its checks
/// pass), and the others are armed by the same document.
#[test]
fn a_refused_arming_does_not_spoil_the_others() {
    let prs = [(REPO, 1), ("octo/bare", 1), (REPO, 2)];
    let mut env = armed_and_running(&prs);
    env.gh.world(|w| {
        w.repo("octo/bare").unprotected();
    });
    env.ok(&["run"]);
    one_arming_request(&env);
    assert_eq!(enables(&env, &prs), [1, 0, 1]);
    let bare = env.status("octo/bare#1");
    assert_eq!(bare["merge_via"], "self", "{bare}");
    let history = env.history_text("octo/bare#1");
    assert!(
        history.contains("auto-merge is not available here, so pr-monitor merges itself"),
        "{history}"
    );
    for pr in ["octo/app#1", "octo/app#2"] {
        let s = env.status(pr);
        assert_eq!(s["merge_via"], "auto_merge", "{s}");
    }
    env.advance(60);
    env.gh.world(|w| {
        w.update_check_run("octo/bare", 1, "test").success();
    });
    env.ok(&["run", "--force"]);
    assert_eq!(env.gh.world(|w| w.merges("octo/bare", 1)), 1);
    assert_eq!(env.status("octo/bare#1")["state"], "merged");
    assert_eq!(enables(&env, &prs), [1, 0, 1], "none asked again");
}

/// The document is applied and its answer lost (a 502): the outcome of each arming is unknown,
/// so every intent stays open and the next read reconciles each against what GitHub shows,
/// without asking again.
#[test]
fn a_lost_answer_leaves_every_intent_to_reconcile() {
    let prs = [(REPO, 1), (REPO, 2), (REPO, 3)];
    let mut env = armed_and_running(&prs);
    env.gh
        .fault(Fault::status_after_handling(502).on("POST /graphql EnableAutoMerges"));
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(enables(&env, &prs), [1, 1, 1]);
    assert_eq!(intents(&env), (3, 3));
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(enables(&env, &prs), [1, 1, 1], "not asked again");
    assert_eq!(intents(&env), (3, 0));
    for (repo, n) in prs {
        let s = env.status(&format!("{repo}#{n}"));
        assert_eq!(s["merge_via"], "auto_merge", "{s}");
    }
}

/// The document never reached GitHub (a 502 before it was handled): nothing was armed, the
/// next read finds each intent unfulfilled, and the next run arms them (together again).
#[test]
fn a_request_that_failed_whole_is_asked_again_on_the_next_run() {
    let prs = [(REPO, 1), (REPO, 2)];
    let mut env = armed_and_running(&prs);
    env.gh
        .fault(Fault::status(502).on("POST /graphql EnableAutoMerges"));
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(enables(&env, &prs), [0, 0]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(enables(&env, &prs), [1, 1]);
    assert_eq!(env.gh.requests().count("POST /graphql EnableAutoMerges"), 2);
}

/// A chunk's intents cannot be recorded (the database refuses the rows, as a full disk
/// would): nothing is armed, each PR's tick says why, and the next run arms them.
#[test]
fn armings_whose_intents_cannot_be_recorded_are_not_asked() {
    let prs = [(REPO, 1), (REPO, 2)];
    let mut env = armed_and_running(&prs);
    env.refuse_intents(true);
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(env.gh.requests().count("POST /graphql EnableAutoMerges"), 0);
    assert_eq!(enables(&env, &prs), [0, 0]);
    for pr in ["octo/app#1", "octo/app#2"] {
        let history = env.history_text(pr);
        assert!(
            history.contains("its intent could not be recorded first"),
            "{history}"
        );
    }
    env.refuse_intents(false);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(enables(&env, &prs), [1, 1]);
    assert_eq!(env.gh.requests().count("POST /graphql EnableAutoMerges"), 1);
}

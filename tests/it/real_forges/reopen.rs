//! A closed PR can be reopened, and then it is to be watched again: on its next lookup (a
//! job's listing finding it open, `watch add` naming it), or, with nothing naming it, by the
//! look a closed PR gets once a day; on GitHub and GitLab alike. A merged PR cannot be
//! reopened on either forge.

use crate::support::env::TestEnv;
use crate::support::fake_gitlab::GitLabEnv;

const PR: &str = "octo/app#1";

/// A watched PR, read open once, then closed and read closed.
fn closed_after_a_look(env: &mut TestEnv) {
    env.ok(&["run"]);
    assert_eq!(env.status(PR)["state"], "open");
    env.gh.world(|w| {
        w.pr("octo/app", 1).closed();
    });
    env.advance(600);
    env.ok(&["run"]);
    assert_eq!(env.status(PR)["state"], "closed");
}

/// A PR watched by `watch add`, read open, closed, read closed, then reopened on the forge.
fn reopened_after_a_closed_look() -> TestEnv {
    let mut env = TestEnv::new();
    env.with_pr("octo/app", 1);
    env.ok(&["watch", "add", PR]);
    closed_after_a_look(&mut env);
    env.gh.world(|w| {
        w.pr("octo/app", 1).reopened();
    });
    env
}

/// `pr` is open again, `history` says so, and it is back on the fast or idle cadence.
fn watched_again(env: &TestEnv, pr: &str) {
    let status = env.status(pr);
    assert_eq!(status["state"], "open", "{}", env.history_text(pr));
    assert!(
        env.history(pr).iter().any(|h| h == "reopened"),
        "{}",
        env.history_text(pr)
    );
}

#[test]
fn a_reopened_pr_a_job_lists_is_watched_again_on_the_next_listing() {
    let mut env = TestEnv::new();
    env.with_pr("octo/app", 1);
    env.job("listed", "name: listed\nwatch:\n  - repo: octo/app\n");
    closed_after_a_look(&mut env);
    env.gh.world(|w| {
        w.pr("octo/app", 1).reopened();
    });
    env.advance(600);
    let out = env.ok(&["run"]);
    assert!(
        out.stdout.contains("is open again (job listed)"),
        "{}",
        out.stdout
    );
    watched_again(&env, PR);
}

#[test]
fn a_reopened_pr_watch_add_names_is_watched_again() {
    let env = reopened_after_a_closed_look();
    env.ok(&["watch", "add", PR]);
    env.ok(&["run"]);
    assert_eq!(env.status(PR)["state"], "open", "{}", env.history_text(PR));
}

#[test]
fn a_closed_pr_nothing_names_is_looked_at_again_within_a_day() {
    let mut env = reopened_after_a_closed_look();
    env.advance(3600);
    env.gh.clear_requests();
    env.ok(&["run"]);
    assert_eq!(
        env.gh.requests().total(),
        0,
        "a closed PR is not read every run"
    );
    assert_eq!(env.status(PR)["state"], "closed");
    env.advance(23 * 3600);
    env.ok(&["run"]);
    watched_again(&env, PR);
}

#[test]
fn a_reopened_gitlab_mr_the_owners_listing_finds_is_watched_again() {
    let mr = "g/app!1";
    let mut env = GitLabEnv::new();
    env.job("mine", "name: mine\nwatch:\n  - mine: gitlab\n");
    env.gl.world(|w| {
        w.mr("g/app", 1).author("owner");
    });
    env.ok(&["run"]);
    assert_eq!(env.status(mr)["state"], "open");
    env.gl.world(|w| {
        w.mr("g/app", 1).closed();
    });
    env.advance(600);
    env.ok(&["run"]);
    assert_eq!(env.status(mr)["state"], "closed");
    env.gl.world(|w| {
        w.mr("g/app", 1).reopened();
    });
    env.advance(600);
    let out = env.ok(&["run"]);
    assert!(
        out.stdout.contains("is open again (job mine)"),
        "{}",
        out.stdout
    );
    watched_again(&env, mr);
}

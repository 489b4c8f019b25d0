//! The forge's merge line, written once over both fakes: GitHub's merge queue and GitLab's merge
//! train. An armed change joins the line once, shows its place and merges when the line does,
//! never directly; a failure in the line is told once (to the agent when the head is the
//! agent's) and the same head is not put in line again, while a new head or the owner's
//! `merge --when-ready` is; an exit whose checks cannot be read is not told until they can; a
//! timeout and a conflict are told apart. What only one forge has (GitHub's estimate and line
//! query, GitLab's join request and refused direct merge) is asserted by that forge's test.

use serde_json::{Value, json};

use crate::support::fake_gitlab::{ApiError, GitLabEnv};
use crate::support::forge::{FakeForge, OnGitHub};
use crate::support::smtp::SmtpServer;

/// Change 5 in line, change 1 (head by `author`, agent `agent` when given) armed: after a tick
/// and another a minute later, change 1 is second in line.
fn armed_in_line(f: &mut impl FakeForge, author: &str, agent: Option<&str>) {
    f.queued_behind(5, 1, author);
    let pr = f.pr(1);
    let mut args = vec!["watch", "add"];
    if let Some(agent) = agent {
        args.extend(["--agent", agent]);
    }
    args.extend(["--merge-when-ready", &pr]);
    f.ok(&args);
    f.ok(&["run"]);
    // The forge puts it in line after the write; the next tick sees it there.
    f.advance(60);
    f.ok(&["run", "--force"]);
}

/// Change 1 (head by `author`, agent `fixer`) armed and in line; then the line's `test` fails
/// with `log` and the line lets it go.
fn in_line_then_failed(f: &mut impl FakeForge, author: &str, log: &str) {
    armed_in_line(f, author, Some("fixer"));
    f.group_fails(1, "test", log);
}

/// Ticks `n` times, a minute apart.
fn tick(f: &mut impl FakeForge, n: usize) {
    for _ in 0..n {
        f.advance(60);
        f.ok(&["run", "--force"]);
    }
}

/// The mails that said a change left the line.
fn told_left(f: &impl FakeForge, smtp: &SmtpServer) -> Vec<String> {
    let said = format!("left the merge {}", f.words().line);
    smtp.subjects()
        .into_iter()
        .filter(|s| s.contains(&said))
        .collect()
}

/// Whether `told` is one mail saying change 1 left the line because `test` failed there.
fn told_test_failed_in_line(f: &impl FakeForge, told: &[String]) {
    let w = f.words();
    assert_eq!(told.len(), 1, "{told:?}");
    let said = format!(
        "{}: left the merge {}: test failed in {}",
        w.change(1),
        w.line,
        w.group
    );
    assert!(told[0].starts_with(&said), "{told:?}");
}

/// Runs `scenario` on a forge that `env` makes with a config that mails the owner.
fn mailing<F>(env: impl FnOnce(&str) -> F, scenario: impl FnOnce(&mut F, &SmtpServer)) {
    let smtp = SmtpServer::start();
    scenario(&mut env(&smtp.notify_config()), &smtp);
}

const PAGE: &str = "report:\n  html_path: out/status.html\n";

/// `joined` sees the status once change 1 is second in line.
fn an_armed_change_joins_the_line_once_shows_its_place_and_merges_at_the_front<F: FakeForge>(
    f: &mut F,
    joined: impl FnOnce(&F, &Value),
) {
    let w = f.words();
    let pr = f.pr(1);
    armed_in_line(f, "fixer-bot", None);
    assert_eq!(f.enqueues(1), 1);
    let s = f.status(&pr);
    assert_eq!(s["queue"]["position"], 2, "{s}");
    assert_eq!(s["queue"]["state"], "QUEUED");
    assert!(s["queue"]["enqueued_at"].is_string());
    assert_eq!(s["queue"]["ahead"], json!([5]), "what is ahead: {s}");
    let line = f.ok(&["status"]).stdout;
    let second = format!("{} ⏳ 2nd in {}", w.change(1), w.line);
    assert!(line.contains(&second), "{line}");
    let detail = f.ok(&["status", &pr]).stdout;
    let place = format!("2nd in the merge {} (QUEUED)", w.line);
    assert!(detail.contains(&place), "{detail}");
    let ahead = format!("ahead      {}5", w.sigil);
    assert!(detail.contains(&ahead), "{detail}");
    let entered = format!("entered the merge {}", w.line);
    assert!(detail.contains(&entered), "{detail}");
    let page = std::fs::read_to_string(f.dir.path().join("out/status.html")).unwrap();
    let ahead = format!("Ahead of it: {}5.", w.sigil);
    assert!(page.contains(&ahead), "the page says what is ahead");
    joined(f, &s);

    // Change 5's line checks pass and it merges; change 1 is at the front, checking.
    f.group_passes(5, "test");
    assert_eq!(f.merges(5), 1);
    f.group_running(1, "test");
    tick(f, 1);
    let s = f.status(&pr);
    assert_eq!(s["queue"]["position"], 1, "{s}");
    assert_eq!(s["queue"]["state"], "AWAITING_CHECKS");
    let line = f.ok(&["status"]).stdout;
    let checking = format!("{} ⏳ queued, checking", w.change(1));
    assert!(line.contains(&checking), "{line}");
    f.group_passes(1, "test");
    tick(f, 3);
    let s = f.status(&pr);
    assert_eq!(s["state"], "merged", "{s}");
    assert_eq!(s["queue"], json!(null));
    assert_eq!(f.enqueues(1), 1, "put in line once");
    assert_eq!(f.merges(1), 1);
    assert_eq!(
        f.direct_merge_requests(),
        0,
        "never a direct merge on a base with a merge line"
    );
    assert_eq!(f.update_requests(), 0);
}

#[test]
fn an_armed_change_joins_the_line_once_shows_its_place_and_merges_at_the_front_on_github() {
    an_armed_change_joins_the_line_once_shows_its_place_and_merges_at_the_front(
        &mut OnGitHub::with_config(PAGE),
        |f, s| {
            assert_eq!(s["queue"]["estimated_seconds"], 480, "{s}");
            let line = f.ok(&["status"]).stdout;
            assert!(line.contains("PR #1 ⏳ 2nd in queue (~8m)"), "{line}");
            assert_eq!(
                f.gh.requests().count("POST /graphql MergeQueueLine"),
                1,
                "the line is read once, only for the run that finds PR 1 behind another"
            );
        },
    );
}

#[test]
fn an_armed_change_joins_the_line_once_shows_its_place_and_merges_at_the_front_on_gitlab() {
    an_armed_change_joins_the_line_once_shows_its_place_and_merges_at_the_front(
        &mut GitLabEnv::with_config(PAGE),
        |f, s| {
            assert_eq!(s["queue"]["estimated_seconds"], json!(null), "{s}");
            let log = f.gl.requests();
            let joins = log.matching("POST /projects/{id}/merge_trains/merge_requests/{iid}");
            assert_eq!(joins.len(), 1);
            let body = joins[0].json();
            assert_eq!(body["sha"], f.head(1).as_str(), "guarded by the head sha");
            assert_eq!(body["auto_merge"], true);
        },
    );
}

fn a_failure_in_the_line_is_told_once_and_the_same_head_is_not_put_in_line_again(
    f: &mut impl FakeForge,
    smtp: &SmtpServer,
) {
    let pr = f.pr(1);
    let line = f.words().line;
    in_line_then_failed(
        f,
        "dev",
        "thread 'main' panicked: assertion failed: left == right\n",
    );
    tick(f, 6);
    assert_eq!(f.enqueues(1), 1, "the same head is not put in line again");
    told_test_failed_in_line(f, &told_left(f, smtp));
    let v = f.ok(&["status", &pr, "--json"]).json();
    let history = v["history"].to_string();
    assert!(
        history.contains(&format!("left the merge {line}")),
        "{history}"
    );
    assert!(history.contains("assertion failed"), "{history}");
    assert_eq!(v["queue"], json!(null));

    // A new head (a fix) joins the line again once green.
    f.push(1, "fixer-bot");
    f.pass(1, "test");
    tick(f, 2);
    assert_eq!(f.enqueues(1), 2);
    assert!(
        f.inbox_messages().is_empty(),
        "the failed head was not the agent's"
    );
}

#[test]
fn a_failure_in_the_line_is_told_once_and_the_same_head_is_not_put_in_line_again_on_github() {
    mailing(
        OnGitHub::with_config,
        a_failure_in_the_line_is_told_once_and_the_same_head_is_not_put_in_line_again,
    );
}

#[test]
fn a_failure_in_the_line_is_told_once_and_the_same_head_is_not_put_in_line_again_on_gitlab() {
    mailing(
        GitLabEnv::with_config,
        a_failure_in_the_line_is_told_once_and_the_same_head_is_not_put_in_line_again,
    );
}

/// The line's checks cannot be read when the change leaves it (a 500 through every retry):
/// the exit is not told as "no failed check", and its one notice is not spent; the next tick
/// reads them and tells why.
fn an_exit_whose_checks_cannot_be_read_is_left_undecided(
    f: &mut impl FakeForge,
    smtp: &SmtpServer,
) {
    in_line_then_failed(f, "dev", "assertion failed: left == right\n");
    f.fail_group_reads(1);
    tick(f, 1);
    assert_eq!(f.pending_faults(), 0, "every retry of the read failed");
    assert_eq!(
        told_left(f, smtp),
        Vec::<String>::new(),
        "not told without why"
    );
    let history = f.history_text(&f.pr(1));
    assert!(!history.contains("no failed check"), "{history}");

    tick(f, 1);
    told_test_failed_in_line(f, &told_left(f, smtp));
    assert_eq!(f.enqueues(1), 1);
}

#[test]
fn an_exit_whose_checks_cannot_be_read_is_left_undecided_on_github() {
    mailing(
        OnGitHub::with_config,
        an_exit_whose_checks_cannot_be_read_is_left_undecided,
    );
}

#[test]
fn an_exit_whose_checks_cannot_be_read_is_left_undecided_on_gitlab() {
    mailing(
        GitLabEnv::with_config,
        an_exit_whose_checks_cannot_be_read_is_left_undecided,
    );
}

fn a_failure_in_the_line_on_the_agents_commit_goes_to_the_agent_with_the_log(
    f: &mut impl FakeForge,
    smtp: &SmtpServer,
) {
    in_line_then_failed(
        f,
        "fixer-bot",
        "error[E0308]: mismatched types in src/queue.rs\n",
    );
    tick(f, 1);
    let msgs = f.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["kind"], "ci_failure");
    assert!(
        msgs[0].to_string().contains("mismatched types"),
        "{}",
        msgs[0]
    );
    assert_eq!(
        told_left(f, smtp),
        Vec::<String>::new(),
        "the agent's failure is the agent's"
    );
    assert_eq!(f.enqueues(1), 1);
}

#[test]
fn a_failure_in_the_line_on_the_agents_commit_goes_to_the_agent_with_the_log_on_github() {
    mailing(
        OnGitHub::with_config,
        a_failure_in_the_line_on_the_agents_commit_goes_to_the_agent_with_the_log,
    );
}

#[test]
fn a_failure_in_the_line_on_the_agents_commit_goes_to_the_agent_with_the_log_on_gitlab() {
    mailing(
        GitLabEnv::with_config,
        a_failure_in_the_line_on_the_agents_commit_goes_to_the_agent_with_the_log,
    );
}

/// The line's failure does not fail the change's own checks: the owner's `merge --when-ready`
/// puts the refused head in line again; `merge --now` never jumps the line.
fn the_owners_merge_when_ready_puts_the_refused_head_in_line_again(f: &mut impl FakeForge) {
    let pr = f.pr(1);
    in_line_then_failed(f, "dev", "test failed\n");
    tick(f, 2);
    assert_eq!(f.enqueues(1), 1);
    f.ok(&["merge", &pr, "--when-ready"]);
    f.ok(&["run"]);
    tick(f, 1);
    assert_eq!(f.enqueues(1), 2);
    let out = f.run(&["merge", &pr, "--merge-now"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let line = format!("merge {}", f.words().line);
    assert!(out.stderr.contains(&line), "{}", out.stderr);
    assert_eq!(f.direct_merge_requests(), 0);
}

#[test]
fn the_owners_merge_when_ready_puts_the_refused_head_in_line_again_on_github() {
    the_owners_merge_when_ready_puts_the_refused_head_in_line_again(&mut OnGitHub::new());
}

#[test]
fn the_owners_merge_when_ready_puts_the_refused_head_in_line_again_on_gitlab() {
    let mut f = GitLabEnv::new();
    the_owners_merge_when_ready_puts_the_refused_head_in_line_again(&mut f);
    // And GitLab itself refuses a direct merge on a train project.
    let refused = f.gl.world(|w| {
        let sha = w.get_mr("g/p", 1).sha.clone();
        w.merge(&("g/p".to_owned(), 1), Some(&sha), false, false)
    });
    assert!(matches!(refused, Err(ApiError(405, _))), "{refused:?}");
}

/// Change 1 second in line (its line's `test` still running unless `conflict`) when the line
/// lets it go without a failed check; with `conflict` the change conflicts by then. Its history.
fn dropped_without_a_failure(f: &mut impl FakeForge, conflict: bool) -> String {
    armed_in_line(f, "dev", None);
    if !conflict {
        f.group_running(1, "test");
    }
    f.drop_from_queue(1);
    if conflict {
        f.open_conflicting(1);
    }
    tick(f, 1);
    f.history_text(&f.pr(1))
}

fn a_timeout_and_a_conflict_are_told_apart_from_a_check_failure<F: FakeForge>(new: impl Fn() -> F) {
    let mut f = new();
    let w = f.words();
    let history = dropped_without_a_failure(&mut f, false);
    let timed_out = format!(
        "left the merge {}: timed out waiting for test in {}",
        w.line, w.group
    );
    assert!(history.contains(&timed_out), "{history}");
    let mut f = new();
    let history = dropped_without_a_failure(&mut f, true);
    let conflict = format!(
        "left the merge {}: a conflict with what was ahead of it",
        w.line
    );
    assert!(history.contains(&conflict), "{history}");
    assert_eq!(f.enqueues(1), 1);
}

#[test]
fn a_timeout_and_a_conflict_are_told_apart_from_a_check_failure_on_github() {
    a_timeout_and_a_conflict_are_told_apart_from_a_check_failure(OnGitHub::new);
}

#[test]
fn a_timeout_and_a_conflict_are_told_apart_from_a_check_failure_on_gitlab() {
    a_timeout_and_a_conflict_are_told_apart_from_a_check_failure(GitLabEnv::new);
}

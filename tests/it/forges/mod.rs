//! Features GitHub and GitLab share, each written once as a scenario over
//! [`FakeForge`](crate::support::forge::FakeForge) and run against both fakes: the agent loop
//! on a failed check, an infrastructure failure re-run once, arming and the forge's merge, a
//! green armed change merged at once, `merge --now`, an armed change brought up to date once,
//! and an agent replying to and resolving a review thread. What only one forge shows (its request
//! log, its recorded shapes) is asserted by that forge's test after the shared body. The merge
//! queue (train) scenarios are in [`queue`], the rate-limit ones in [`rate_limit`] and
//! [`budget`], pr-monitor's own branch updates recognised whatever their answer in [`update`].

mod budget;
mod queue;
mod rate_limit;
mod update;

use serde_json::{Value, json};

use crate::support::fake_gitlab::{Event, GitLabEnv};
use crate::support::forge::{FakeForge, OnGitHub};

/// The agent's commit fails `lint`: one message with the log's tail goes to the agent, and
/// nothing more while nothing changes; the agent's fix fails the same way and auto-fix stops.
/// `logs` are the two failures' logs as the forge writes them (`src/a.rs:3`, then `:4`);
/// `first_message` sees the first message to the agent as soon as it is sent.
fn a_failed_check_goes_to_the_agent_until_the_same_failure_returns<F: FakeForge>(
    f: &mut F,
    logs: [&str; 2],
    first_message: impl FnOnce(&F, &Value),
) {
    f.open(1, "fixer-bot");
    f.fail(1, "lint", logs[0]);
    f.pass(1, "test");
    let pr = f.pr(1);
    f.ok(&["watch", "add", "--agent", "fixer", &pr]);
    f.ok(&["run"]);

    // One message, with the log tail, cleaned.
    let msgs = f.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    let m = &msgs[0];
    assert_eq!(m["kind"], "ci_failure");
    assert_eq!(m["reason"], "fix_sent");
    assert_eq!(m["agent"], "fixer");
    assert_eq!(m["from"], "pr-monitor");
    assert_eq!(m["pr"]["forge"], f.forge());
    assert_eq!(m["pr"]["repo"], f.repo());
    assert_eq!(m["pr"]["number"], 1);
    assert_eq!(m["checks"].as_array().unwrap().len(), 1);
    assert_eq!(m["checks"][0]["name"], "lint");
    let tail = m["checks"][0]["log_tail"].as_str().unwrap();
    assert!(
        tail.contains("error: unused variable `x` at src/a.rs:3"),
        "{tail}"
    );
    assert!(
        m["body"]
            .as_str()
            .unwrap()
            .contains("pr-monitor inbox done"),
        "{}",
        m["body"]
    );
    first_message(f, m);
    let s = f.status(&pr);
    assert_eq!(s["why"], "fix_sent");
    assert_eq!(s["attempts"], 1);
    assert_eq!(s["pills"]["ci_fixing"], true);
    assert_eq!(
        s["next_tick_at"], "2026-11-29T12:00:30Z",
        "a fix in flight keeps the fast cadence"
    );

    // Nothing new: nothing sent again.
    f.advance(30);
    f.ok(&["run"]);
    assert_eq!(f.inbox_messages().len(), 1);

    // The agent pushes a fix that fails the same way.
    f.advance(60);
    f.push(1, "fixer-bot");
    f.fail(1, "lint", logs[1]);
    f.ok(&["run"]);
    let s = f.status(&pr);
    assert_eq!(s["why"], "same_failure");
    assert_eq!(s["pills"]["ci"], true);
    assert_eq!(s["pills"]["ci_fixing"], false);
    assert_eq!(
        f.inbox_messages().len(),
        1,
        "a guard sends nothing to the agent"
    );
    assert!(
        f.history(&pr)
            .iter()
            .any(|h| h.contains("auto-fix stopped: the same failure came back")),
        "{:?}",
        f.history(&pr)
    );
}

#[test]
fn a_failed_check_goes_to_the_agent_until_the_same_failure_returns_on_github() {
    a_failed_check_goes_to_the_agent_until_the_same_failure_returns(
        &mut OnGitHub::new(),
        [
            "2026-11-29T11:59:00.0000000Z \u{1b}[31merror\u{1b}[0m: unused variable `x` at src/a.rs:3\n",
            "error: unused variable `x` at src/a.rs:4\n",
        ],
        |_, m| {
            assert_eq!(
                m["checks"][0]["log_tail"], "error: unused variable `x` at src/a.rs:3",
                "timestamps and colours cleaned"
            );
        },
    );
}

#[test]
fn a_failed_check_goes_to_the_agent_until_the_same_failure_returns_on_gitlab() {
    a_failed_check_goes_to_the_agent_until_the_same_failure_returns(
        &mut GitLabEnv::new(),
        [
            "Running with gitlab-runner 17.0\n$ cargo clippy\nerror: unused variable `x` at src/a.rs:3\n",
            "Running with gitlab-runner 17.0\n$ cargo clippy\nerror: unused variable `x` at src/a.rs:4\n",
        ],
        |f, m| {
            assert_eq!(
                m["pr"]["url"], "https://gitlab.example.com/g/p/-/merge_requests/1",
                "on the instance's own host"
            );
            assert_eq!(
                f.gl.requests().count("GET /projects/{id}/jobs/{job}/trace"),
                1
            );
        },
    );
}

/// A check on the agent's commit fails for the infrastructure: its jobs are re-run once and
/// nothing goes to the agent; failing the same way again lights `ci` without a second re-run.
fn an_infra_failure_is_rerun_once_then_lights_ci(f: &mut impl FakeForge) {
    f.open(1, "fixer-bot");
    let run = f.fail_for_infra(1, "test");
    let pr = f.pr(1);
    f.ok(&["watch", "add", "--agent", "fixer", &pr]);
    f.ok(&["run"]);
    assert_eq!(f.reruns(run), 1);
    let s = f.status(&pr);
    assert_eq!(s["why"], "infra_rerun");
    assert_eq!(s["pills"]["ci"], false, "a re-run is not the owner's yet");
    assert!(
        f.history(&pr)
            .iter()
            .any(|h| h.contains("re-ran test for infrastructure reasons")),
        "{:?}",
        f.history(&pr)
    );
    assert!(f.inbox_messages().is_empty(), "infra goes to no agent");

    // The re-run fails for infra reasons again.
    f.advance(120);
    f.fail_for_infra_again(1, "test");
    f.ok(&["run"]);
    assert_eq!(f.reruns(run), 1, "re-run at most once per job per head");
    let s = f.status(&pr);
    assert_eq!(s["why"], "infra_again");
    assert_eq!(s["pills"]["ci"], true);
    assert!(f.inbox_messages().is_empty());
}

#[test]
fn an_infra_failure_is_rerun_once_then_lights_ci_on_github() {
    an_infra_failure_is_rerun_once_then_lights_ci(&mut OnGitHub::new());
}

#[test]
fn an_infra_failure_is_rerun_once_then_lights_ci_on_gitlab() {
    let mut f = GitLabEnv::new();
    an_infra_failure_is_rerun_once_then_lights_ci(&mut f);
    assert_eq!(
        f.gl.requests()
            .count("POST /projects/{id}/pipelines/{pid}/retry"),
        1
    );
}

/// An armed change whose required check is running: the tick turns the forge's auto-merge on,
/// the forge merges once the check passes, and the next tick sees it merged and stops.
/// `armed` looks at the forge right after the tick that armed it.
fn arming_turns_auto_merge_on_and_the_forge_merges_when_green<F: FakeForge>(
    f: &mut F,
    armed: impl FnOnce(&F),
) {
    f.require("test");
    f.open(1, "dev");
    f.running(1, "test");
    let pr = f.pr(1);
    f.ok(&["watch", "add", &pr]);
    let out = f.ok(&["merge", &pr, "--when-ready"]);
    assert!(out.stdout.contains("armed"), "{}", out.stdout);
    f.ok(&["run"]);
    assert_eq!(f.auto_merge_enables(1), 1);
    let s = f.status(&pr);
    assert_eq!(s["merge_armed"], true);
    assert_eq!(s["merge_via"], "auto_merge");
    assert_eq!(f.merges(1), 0, "nothing merges while the check runs");
    armed(f);

    // Green: the forge's own auto-merge merges it; the next tick sees merged and stops.
    f.advance(60);
    f.goes_green(1, "test");
    f.ok(&["run"]);
    assert_eq!(f.merges(1), 1);
    let s = f.status(&pr);
    assert_eq!(s["state"], "merged");
    assert_eq!(s["next_tick_at"], json!(null));
    assert_eq!(s["merge_armed"], false, "merged is disarmed");
    let detail = f.ok(&["status", &pr]).stdout;
    assert!(!detail.contains("armed (auto_merge)"), "{detail}");
    assert_eq!(f.auto_merge_enables(1), 1, "armed once");
}

#[test]
fn arming_turns_auto_merge_on_and_the_forge_merges_when_green_on_github() {
    arming_turns_auto_merge_on_and_the_forge_merges_when_green(&mut OnGitHub::new(), |_| {});
}

#[test]
fn arming_turns_auto_merge_on_and_the_forge_merges_when_green_on_gitlab() {
    let mut f = GitLabEnv::new();
    let mut sha = String::new();
    arming_turns_auto_merge_on_and_the_forge_merges_when_green(&mut f, |f| {
        sha = f.gl.world(|w| w.get_mr("g/p", 1).sha.clone());
        let log = f.gl.requests();
        let puts = log.matching("PUT /projects/{id}/merge_requests/{iid}/merge");
        assert_eq!(puts.len(), 1);
        let body = puts[0].json();
        assert_eq!(body["sha"], sha.as_str(), "the sha guard");
        assert_eq!(body["merge_when_pipeline_succeeds"], true);
        assert_eq!(body["auto_merge"], true);
    });
    let merged = f.gl.world(|w| {
        w.events
            .iter()
            .filter(|e| matches!(e, Event::Merged { .. }))
            .cloned()
            .collect::<Vec<_>>()
    });
    assert!(
        matches!(merged.as_slice(), [Event::Merged { at_once_without_pipeline: false, sha: s, .. }] if *s == sha),
        "{merged:?}"
    );
}

/// The agent answers a review thread through pr-monitor, then resolves it: the forge shows the
/// reply, signed for the owner, and the thread resolved.
fn agents_reply_to_and_resolve_threads(f: &mut impl FakeForge) -> String {
    let thread = f.thread(1, "reviewer", "rename");
    let pr = f.pr(1);
    f.ok(&["watch", "add", "--agent", "fixer", &pr]);
    let body = f.dir.path().join("reply.md");
    std::fs::write(&body, "Renamed in abc123.\n").unwrap();
    f.ok(&[
        "thread",
        "reply",
        &pr,
        &thread,
        "--body-file",
        body.to_str().unwrap(),
    ]);
    f.ok(&["thread", "resolve", &pr, &thread]);
    assert_eq!(
        f.replies(&thread),
        vec!["🤖 fixer on behalf of owner\n\nRenamed in abc123.".to_owned()]
    );
    assert!(f.resolved(&thread));
    thread
}

#[test]
fn agents_reply_to_and_resolve_threads_on_github() {
    agents_reply_to_and_resolve_threads(&mut OnGitHub::new());
}

#[test]
fn agents_reply_to_and_resolve_threads_on_gitlab() {
    let mut f = GitLabEnv::new();
    let thread = agents_reply_to_and_resolve_threads(&mut f);
    let events = f.gl.world(|w| w.events.clone());
    assert!(events.contains(&Event::Resolved { discussion: thread }));
    let log = f.gl.requests();
    assert_eq!(
        log.count("POST /projects/{id}/merge_requests/{iid}/discussions/{did}/notes"),
        1
    );
    assert_eq!(
        log.count("PUT /projects/{id}/merge_requests/{iid}/discussions/{did}"),
        1
    );
}

/// With `--agent`, the agent answers and resolves with its own token: without one the commands
/// refuse (exit 2) and the forge hears nothing; with one, every request they make carries the
/// agent's token, never the owner's, and the forge shows the agent as the reply's author. The
/// reply still says whom the agent speaks for.
fn agents_answer_with_their_own_token(f: &mut impl FakeForge) {
    let thread = f.thread(1, "reviewer", "rename");
    let pr = f.pr(1);
    f.ok(&["watch", "add", "--agent", "fixer", &pr]);
    f.ok(&["run"]);
    let body = f.dir.path().join("reply.md");
    std::fs::write(&body, "Renamed.\n").unwrap();
    let body = body.to_str().unwrap().to_owned();
    let reply = [
        "thread",
        "reply",
        &pr,
        &thread,
        "--agent",
        "fixer",
        "--body-file",
        &body,
    ];
    let resolve = ["thread", "resolve", &pr, &thread, "--agent", "fixer"];

    f.clear_requests();
    for args in [&reply[..], &resolve[..]] {
        let out = f.run(args);
        assert_eq!(out.code, 2, "{args:?}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stderr
                .contains("agent `fixer` has no forge token of its own"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(
        f.requests_by_token(),
        [],
        "nothing borrowed the owner's token"
    );
    assert!(f.replies(&thread).is_empty());

    let token = f.give_agent_token("fixer-bot");
    f.ok(&reply);
    f.ok(&resolve);
    let requests = f.requests_by_token();
    assert!(requests.len() >= 2, "{requests:?}");
    for (key, used) in &requests {
        assert_eq!(used, &token, "{key} carried another token than the agent's");
    }
    assert_eq!(
        f.replies(&thread),
        ["🤖 fixer on behalf of owner\n\nRenamed.".to_owned()]
    );
    assert_eq!(f.reply_authors(&thread), ["fixer-bot"]);
    assert!(f.resolved(&thread));
    let history = f.history(&pr);
    assert!(
        history.contains(&format!("fixer replied to {thread}"))
            && history.contains(&format!("fixer resolved {thread}")),
        "{history:?}"
    );
}

#[test]
fn agents_answer_with_their_own_token_on_github() {
    agents_answer_with_their_own_token(&mut OnGitHub::new());
}

#[test]
fn agents_answer_with_their_own_token_on_gitlab() {
    agents_answer_with_their_own_token(&mut GitLabEnv::new());
}

/// An armed change whose checks already passed merges on the first tick, whichever way the
/// forge takes it (GitHub refuses auto-merge as clean, so pr-monitor merges with the sha
/// guard), and never a second time.
fn a_green_armed_change_merges_on_the_first_tick_exactly_once(f: &mut impl FakeForge) {
    f.open(1, "dev");
    f.pass(1, "test");
    let pr = f.pr(1);
    f.ok(&["watch", "add", "--merge-when-ready", &pr]);
    f.ok(&["run"]);
    assert_eq!(f.merges(1), 1, "merged on the first tick");
    f.advance(30);
    f.ok(&["run", "--force"]);
    assert_eq!(f.merges(1), 1, "never twice");
    assert_eq!(f.status(&pr)["state"], "merged");
}

#[test]
fn a_green_armed_change_merges_on_the_first_tick_exactly_once_on_github() {
    a_green_armed_change_merges_on_the_first_tick_exactly_once(&mut OnGitHub::new());
}

#[test]
fn a_green_armed_change_merges_on_the_first_tick_exactly_once_on_gitlab() {
    a_green_armed_change_merges_on_the_first_tick_exactly_once(&mut GitLabEnv::new());
}

/// `merge --now` is the owner's explicit merge: a draft and a conflicting change are refused
/// (usage error, saying why) and merge nothing; a clean one merges at once.
fn merge_now_is_the_owners_explicit_merge(f: &mut impl FakeForge) {
    f.open_draft(1);
    f.open_conflicting(2);
    f.open(3, "dev");
    for (n, why) in [(1, "draft"), (2, "conflicts")] {
        let out = f.run(&["merge", &f.pr(n), "--now"]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains(why), "{}", out.stderr);
        assert_eq!(f.merges(n), 0);
    }
    f.ok(&["merge", &f.pr(3), "--now"]);
    assert_eq!(f.merges(3), 1);
}

#[test]
fn merge_now_is_the_owners_explicit_merge_on_github() {
    merge_now_is_the_owners_explicit_merge(&mut OnGitHub::new());
}

#[test]
fn merge_now_is_the_owners_explicit_merge_on_gitlab() {
    let mut f = GitLabEnv::new();
    merge_now_is_the_owners_explicit_merge(&mut f);
    let log = f.gl.requests();
    let puts = log.matching("PUT /projects/{id}/merge_requests/{iid}/merge");
    assert_eq!(puts.len(), 1, "only the clean MR is asked");
    let body = puts[0].json();
    assert_eq!(
        body["sha"],
        f.gl.world(|w| w.get_mr("g/p", 3).sha.clone()).as_str(),
        "guarded by the head"
    );
    assert_eq!(
        body["squash"], true,
        "squash first when the project allows it"
    );
}

/// An armed change behind a base that takes only changes up to date is brought up to date
/// once, by pr-monitor, and stays armed on its new head: its own update never disarms.
/// `updated` looks at the forge right after the update.
fn an_armed_change_behind_its_base_is_updated_once_and_stays_armed<F: FakeForge>(
    f: &mut F,
    updated: impl FnOnce(&F),
) {
    f.open_behind(1, 2);
    f.running(1, "test");
    let pr = f.pr(1);
    f.ok(&["watch", "add", "--merge-when-ready", &pr]);
    f.ok(&["run"]);
    f.advance(30);
    f.ok(&["run"]);
    assert_eq!(f.branch_updates(1), 1);
    assert!(f.history_text(&pr).contains("2 commit(s)"));
    updated(f);
    let new_head = f.head(1);
    f.advance(30);
    f.ok(&["run"]);
    let s = f.status(&pr);
    assert_eq!(s["head_sha"], new_head.as_str());
    assert_eq!(s["merge_armed"], true, "our own update never disarms: {s}");
    assert_eq!(f.branch_updates(1), 1, "updated once");
}

#[test]
fn an_armed_change_behind_its_base_is_updated_once_and_stays_armed_on_github() {
    an_armed_change_behind_its_base_is_updated_once_and_stays_armed(&mut OnGitHub::new(), |_| {});
}

#[test]
fn an_armed_change_behind_its_base_is_updated_once_and_stays_armed_on_gitlab() {
    an_armed_change_behind_its_base_is_updated_once_and_stays_armed(&mut GitLabEnv::new(), |f| {
        let log = f.gl.requests();
        assert_eq!(
            log.count("PUT /projects/{id}/merge_requests/{iid}/rebase"),
            1,
            "{:?}",
            log.counts()
        );
        let committer = f.gl.world(|w| {
            let mr = w.get_mr("g/p", 1);
            w.commits[&mr.sha].committer_name.clone()
        });
        assert_eq!(committer, "The Owner", "GitLab commits as the display name");
    });
}

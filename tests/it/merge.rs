//! Reconcile merge end to end: re-arm the forge's auto-merge every tick, merge once where it
//! cannot, disarm on a foreign push, update behind branches one at a time, never merge twice.
//! Arming and the forge's own merge, a green PR merged at once and `merge --now` run against
//! both forges in `forges/`.

use serde_json::json;

use crate::support::env::TestEnv;
use crate::support::fake_github::{Fault, MergeMethod};
use crate::support::http_sink::{HttpSink, SLACK_HOOK};
use crate::support::smtp::SmtpServer;

const REPO: &str = "octo/app";

fn merges(env: &TestEnv, n: u64) -> usize {
    env.gh.world(|w| w.merges(REPO, n))
}

#[test]
fn auto_merge_disabled_behind_our_back_is_enabled_again() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").in_progress();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    env.gh.world(|w| w.get_pr_mut(REPO, 1).auto_merge = None);
    env.advance(30);
    env.ok(&["run"]);
    assert_eq!(env.gh.world(|w| w.auto_merge_enables(REPO, 1)), 2);
    let history = env.history_text("octo/app#1");
    assert!(history.contains("found disabled"), "{history}");
}

#[test]
fn the_tick_that_merges_says_merged_at_once_in_plain_words() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    let out = env.ok(&["run"]);
    assert_eq!(merges(&env, 1), 1);
    assert!(
        out.stdout.starts_with("PR #1 merged  octo/app"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("next"), "{}", out.stdout);
    assert!(out.stdout.contains("already clean"), "{}", out.stdout);
    assert!(!out.stdout.contains("refused"), "{}", out.stdout);
    let s = env.status("octo/app#1");
    assert_eq!(s["state"], "merged");
    assert_eq!(s["merge_armed"], false);
    assert_eq!(s["next_tick_at"], json!(null));
    assert_eq!(s["merge_via"], "auto_merge", "how it merged is kept");
    let status = env.ok(&["status"]).stdout;
    assert!(status.starts_with("PR #1 merged  octo/app  "), "{status}");
    assert!(
        !status.contains("armed") && !status.contains("next"),
        "{status}"
    );
    let detail = env.ok(&["status", "octo/app#1"]).stdout;
    assert!(
        detail.contains("merge      merged (via auto_merge)"),
        "{detail}"
    );
}

#[test]
fn without_auto_merge_it_merges_itself_once_after_checks_pass() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).auto_merge_allowed(false);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").in_progress();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    assert_eq!(merges(&env, 1), 0, "not while checks run");
    assert_eq!(env.status("octo/app#1")["merge_via"], "self");
    env.advance(30);
    env.gh.world(|w| {
        w.update_check_run(REPO, 1, "test").success();
    });
    env.ok(&["run"]);
    assert_eq!(merges(&env, 1), 1, "merged within one tick of going green");
    env.advance(30);
    env.ok(&["run", "--force"]);
    assert_eq!(merges(&env, 1), 1);
}

#[test]
fn method_choice_follows_the_repository() {
    let cases: [(&[MergeMethod], &str, &str); 4] = [
        (
            &[MergeMethod::Squash, MergeMethod::Merge, MergeMethod::Rebase],
            "",
            "squash",
        ),
        (&[MergeMethod::Merge, MergeMethod::Rebase], "", "merge"),
        (&[MergeMethod::Rebase], "", "rebase"),
        (
            &[MergeMethod::Squash, MergeMethod::Rebase],
            "rebase",
            "rebase",
        ),
    ];
    for (allowed, configured, want) in cases {
        let extra = if configured.is_empty() {
            String::new()
        } else {
            format!("pr:\n  merge_method: {configured}\n")
        };
        let env = TestEnv::with_config(&extra);
        env.gh.world(|w| {
            w.repo(REPO)
                .auto_merge_allowed(false)
                .merge_methods(allowed);
            w.pr(REPO, 1);
            w.check_run(REPO, 1, "test").success();
        });
        env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
        env.ok(&["run"]);
        let merged = env
            .gh
            .requests()
            .matching("PUT /repos/octo/app/pulls/1/merge")
            .first()
            .map(|r| r.body.clone());
        assert!(
            merged
                .as_deref()
                .is_some_and(|b| b.contains(&format!("\"merge_method\":\"{want}\""))),
            "{allowed:?} {configured}: {merged:?}"
        );
    }
}

#[test]
fn a_human_push_disarms_and_an_agent_push_does_not() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]);
        w.pr(REPO, 1);
        w.pr(REPO, 2);
        w.check_run(REPO, 1, "test").in_progress();
        w.check_run(REPO, 2, "test").in_progress();
    });
    env.ok(&[
        "watch",
        "add",
        "--agent",
        "fixer",
        "--merge-when-ready",
        "octo/app#1",
        "octo/app#2",
    ]);
    env.ok(&["run"]);
    env.advance(60);
    env.gh.world(|w| {
        w.push(REPO, 1, "human");
        w.push(REPO, 2, "fixer-bot");
    });
    env.ok(&["run"]);
    assert_eq!(env.status("octo/app#1")["merge_armed"], false);
    let history = env.history_text("octo/app#1");
    assert!(
        history.contains("merge disarmed: human pushed"),
        "{history}"
    );
    assert_eq!(env.status("octo/app#2")["merge_armed"], true);
}

/// Disarmed by a human push, the PR still shows the auto-merge pr-monitor turned on, and the
/// forge fails the call that turns it off: the tick is incomplete, and the next one asks
/// again, so a disarmed PR is never left to merge on its own.
#[test]
fn a_failed_disable_of_auto_merge_is_asked_again() {
    use crate::support::fake_github::Fault;
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").in_progress();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    assert!(env.gh.world(|w| w.get_pr(REPO, 1).auto_merge.is_some()));
    env.advance(60);
    env.gh.world(|w| w.push(REPO, 1, "human"));
    env.gh.fault(
        Fault::status(502)
            .on("POST /graphql DisableAutoMerge")
            .times(1),
    );
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1, "incomplete: {}\n{}", out.stdout, out.stderr);
    assert_eq!(env.gh.pending_faults(), 0);
    assert_eq!(env.status("octo/app#1")["merge_armed"], false);
    assert!(env.gh.world(|w| w.get_pr(REPO, 1).auto_merge.is_some()));

    env.advance(60);
    env.ok(&["run"]);
    assert!(
        env.gh.world(|w| w.get_pr(REPO, 1).auto_merge.is_none()),
        "asked again: {}",
        env.history_text("octo/app#1")
    );
    // Off on the forge: pr-monitor's arm is gone, and nothing more is asked.
    env.advance(60);
    env.ok(&["run"]);
    assert_eq!(env.gh.requests().count("POST /graphql DisableAutoMerge"), 2);
}

#[test]
fn a_pr_on_a_non_default_base_is_not_armed() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).base_ref("release-1.0");
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    let out = env.run(&["merge", "octo/app#1", "--when-ready"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("not the default branch"),
        "{}",
        out.stderr
    );
    assert_eq!(env.status("octo/app#1")["merge_armed"], false);
    // A job may allow it.
    env.job(
        "release",
        "name: release\npolicy:\n  allow_non_default_base: true\n",
    );
    env.ok(&["watch", "add", "--job", "release", "octo/app#1"]);
    env.ok(&["merge", "octo/app#1", "--when-ready"]);
    assert_eq!(env.status("octo/app#1")["merge_armed"], true);
}

#[test]
fn nothing_merges_without_arming() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).auto_merge_allowed(false);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
        w.review(REPO, 1, "reviewer").approved();
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    assert_eq!(merges(&env, 1), 0);
    assert!(
        env.gh.requests().writes().is_empty(),
        "{:?}",
        env.gh.requests().writes()
    );
}

#[test]
fn a_merge_that_answers_500_after_merging_is_never_repeated() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).auto_merge_allowed(false);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
    });
    env.gh.fault(Fault::merge_then_500());
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1, "the outcome was unknown: {}", out.stdout);
    assert_eq!(
        env.gh.requests().count("PUT /repos/octo/app/pulls/1/merge"),
        1,
        "not retried blind"
    );
    env.advance(30);
    env.ok(&["run"]);
    assert_eq!(merges(&env, 1), 1);
    assert_eq!(
        env.gh.requests().count("PUT /repos/octo/app/pulls/1/merge"),
        1,
        "re-read first: already merged"
    );
    assert_eq!(env.status("octo/app#1")["state"], "merged");
}

#[test]
fn behind_armed_prs_are_updated_one_at_a_time_oldest_first() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]).strict();
        for n in 1..=3 {
            w.pr(REPO, n).behind(2);
            w.check_run(REPO, n, "test").success();
        }
    });
    // Armed in the order 2, 3, 1.
    for n in [2, 3, 1] {
        env.ok(&[
            "watch",
            "add",
            "--merge-when-ready",
            &format!("octo/app#{n}"),
        ]);
        env.advance(1);
    }
    let updates = |env: &TestEnv| {
        (1..=3)
            .map(|n| env.gh.world(|w| w.branch_updates(REPO, n)))
            .collect::<Vec<_>>()
    };
    env.ok(&["run"]);
    assert_eq!(
        updates(&env),
        vec![0, 1, 0],
        "the oldest armed PR is updated on the first tick that sees it behind"
    );
    env.advance(30);
    env.ok(&["run"]);
    assert_eq!(
        updates(&env),
        vec![0, 1, 0],
        "only the oldest armed PR is updated"
    );
    assert_eq!(
        env.status("octo/app#2")["merge_armed"],
        true,
        "its own update never disarms"
    );
    // #2's new head goes green and merges; then #3 gets its turn.
    env.advance(30);
    env.gh.world(|w| {
        w.check_run(REPO, 2, "test").success();
        w.settle();
    });
    env.ok(&["run", "--force"]);
    assert_eq!(merges(&env, 2), 1);
    env.advance(30);
    env.ok(&["run", "--force"]);
    assert_eq!(
        updates(&env),
        vec![0, 1, 1],
        "the next one, after the first merged"
    );
}

#[test]
fn a_rebase_update_goes_through_graphql() {
    let mut env = TestEnv::new();
    env.job(
        "rebasing",
        "name: rebasing\npolicy:\n  update_method: rebase\n  update_branch: always\n",
    );
    env.gh.world(|w| {
        w.pr(REPO, 1).behind(3).head_commit(|c| c.by("dev"));
        w.check_run(REPO, 1, "test").success();
    });
    env.ok(&["watch", "add", "--job", "rebasing", "octo/app#1"]);
    env.ok(&["run"]);
    env.advance(30);
    env.ok(&["run"]);
    assert_eq!(env.gh.world(|w| w.branch_updates(REPO, 1)), 1);
    assert_eq!(env.gh.requests().count("POST /graphql UpdateBranch"), 1);
    let head = env.gh.world(|w| w.get_pr(REPO, 1).head_sha().to_owned());
    let author = env.gh.world(|w| w.commit(REPO, &head).author.clone());
    assert_eq!(author.as_deref(), Some("dev"), "a rebase keeps the author");
}

/// A conflicted armed PR cannot merge: auto-merge is not asked for while the conflict lasts,
/// and is asked for once when it clears.
#[test]
fn a_conflicted_armed_pr_asks_for_auto_merge_only_once_the_conflict_clears() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).required_checks(&["test"]);
        w.pr(REPO, 1).conflicting();
        w.check_run(REPO, 1, "test").in_progress();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    let enables = |env: &TestEnv| env.gh.requests().count("POST /graphql EnableAutoMerge");
    for _ in 0..3 {
        env.ok(&["run", "--force"]);
        env.advance(30);
    }
    assert_eq!(enables(&env), 0, "not while the PR conflicts");
    assert_eq!(env.status("octo/app#1")["merge_armed"], true);
    env.gh.world(|w| {
        w.pr(REPO, 1)
            .mergeable(crate::support::fake_github::Mergeable::Mergeable);
    });
    env.ok(&["run", "--force"]);
    env.advance(30);
    env.ok(&["run", "--force"]);
    assert_eq!(enables(&env), 1, "asked for once the conflict cleared");
}

#[test]
fn with_self_merge_off_it_never_merges_itself() {
    // A repository without auto-merge, and one whose base has no protection rules (the forge
    // refuses to arm): either way only the forge's auto-merge may merge, and the history never
    // says pr-monitor merges itself.
    for unprotected in [false, true] {
        let mut env = TestEnv::new();
        env.job(
            "forge-only",
            "name: forge-only\npolicy:\n  self_merge: false\n",
        );
        env.gh.world(|w| {
            if unprotected {
                w.repo(REPO).unprotected();
            } else {
                w.repo(REPO).auto_merge_allowed(false);
            }
            w.pr(REPO, 1);
            w.check_run(REPO, 1, "test").success();
        });
        env.ok(&[
            "watch",
            "add",
            "--job",
            "forge-only",
            "--merge-when-ready",
            "octo/app#1",
        ]);
        env.ok(&["run"]);
        env.advance(30);
        env.ok(&["run", "--force"]);
        assert_eq!(merges(&env, 1), 0, "{:?}", env.gh.requests().counts());
        let history = env.history("octo/app#1");
        assert!(
            history.iter().any(|h| h.contains("self_merge is off")),
            "{history:?}"
        );
        assert!(
            history
                .iter()
                .all(|h| !h.contains("pr-monitor merges itself")),
            "{history:?}"
        );
    }
}

/// A base without protection rules: the forge refuses auto-merge. The refusal is remembered for
/// the head, so three ticks ask once; pr-monitor merges itself once the checks pass (the job's
/// `self_merge`), and a new head is asked again.
#[test]
fn a_refused_auto_merge_is_asked_once_per_head_and_pr_monitor_merges_itself() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO).unprotected();
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").in_progress();
    });
    env.watch_armed_for_fixer(&["octo/app#1"]);
    let enables = |env: &TestEnv| env.gh.requests().count("POST /graphql EnableAutoMerge");
    for _ in 0..3 {
        env.ok(&["run", "--force"]);
        env.advance(30);
    }
    assert_eq!(enables(&env), 1, "{:?}", env.gh.requests().counts());
    assert_eq!(env.status("octo/app#1")["merge_via"], "self");
    assert_eq!(merges(&env, 1), 0, "not while checks run");
    // A new head: the forge is asked again, once.
    env.gh.world(|w| {
        w.push(REPO, 1, "fixer-bot");
        w.check_run(REPO, 1, "test").in_progress();
    });
    for _ in 0..2 {
        env.ok(&["run", "--force"]);
        env.advance(30);
    }
    assert_eq!(enables(&env), 2, "{:?}", env.gh.requests().counts());
    env.gh.world(|w| {
        w.update_check_run(REPO, 1, "test").success();
    });
    env.ok(&["run", "--force"]);
    assert_eq!(merges(&env, 1), 1, "merged by pr-monitor once green");
    assert_eq!(enables(&env), 2);
}

/// The `done` record at merge: the history and the merge notice say what the PR merged with —
/// its checks, who approved, the threads resolved and the one left open, named with its link,
/// and the messages sent to the agent.
#[test]
fn a_merge_records_what_it_merged_with_and_names_the_thread_left_open() {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    let mut env = TestEnv::with_config(&format!(
        "notify:\n  email:\n    smtp_url: \"{}\"\n    from: pr-monitor@example.com\n    to: [owner@example.com]\n  slack:\n    webhook_url_env: PRM_TEST_SLACK\n",
        smtp.url()
    ));
    env.vars
        .push(("PRM_TEST_SLACK".into(), slack.url(SLACK_HOOK)));
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
        w.review(REPO, 1, "alice").approved();
        w.thread(REPO, 1).comment("alice", "typo").resolved();
        w.thread(REPO, 1)
            .comment("bob", "rename this later?")
            .unresolved();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    assert_eq!(merges(&env, 1), 1);
    let open = "1 still open: src/lib.rs:1 by bob (https://github.com/octo/app/pull/1#discussion_r";
    let history = env.history_text("octo/app#1");
    for words in [
        "done at ",
        "checks green (1/1)",
        "approved by alice",
        "1 review thread(s) resolved",
        open,
        "0 message(s) to the agent",
    ] {
        assert!(history.contains(words), "{words}: {history}");
    }
    let merged: Vec<String> = smtp
        .mails()
        .iter()
        .filter(|m| {
            m.header("Subject")
                .is_some_and(|s| s.starts_with("PR #1: merged"))
        })
        .filter_map(|m| m.part("text/plain"))
        .collect();
    assert_eq!(merged.len(), 1, "{merged:?}");
    for words in ["checks green (1/1)", "approved by alice", open] {
        assert!(merged[0].contains(words), "{words}: {}", merged[0]);
    }
    // Slack's short form: one message, the PR's link, the open threads counted.
    let posted: Vec<serde_json::Value> = slack
        .requests()
        .iter()
        .map(crate::support::http_sink::Recorded::json)
        .filter(|b| {
            b["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("PR #1: merged"))
        })
        .collect();
    assert_eq!(posted.len(), 1, "{posted:?}");
    let section = posted[0]["blocks"][0]["text"]["text"].as_str().unwrap();
    assert_eq!(
        section.lines().take(3).collect::<Vec<_>>(),
        [
            "*PR #1: merged · octo/app*",
            "<https://github.com/octo/app/pull/1|Change #1>",
            "checks green (1/1) · approved by alice · 1 review thread left open",
        ],
        "{section}"
    );
}

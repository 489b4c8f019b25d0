//! Report end to end: over a scripted day of a PR's life (fail, fix, conflict, green, merged)
//! the owner receives exactly the messages a person would want, once each, through email and
//! Slack, even with the SMTP server and the webhook failing part of the time.

use crate::support::env::TestEnv;
use crate::support::http_sink::{HttpSink, Reply};
use crate::support::smtp::SmtpServer;

const REPO: &str = "octo/app";

fn env_with_channels(smtp_port: u16, slack: &HttpSink) -> TestEnv {
    let mut env = TestEnv::with_config(&format!(
        "notify:\n  email:\n    smtp_url: smtp://127.0.0.1:{smtp_port}\n    from: pr-monitor@example.com\n    \
         to: [owner@example.com]\n  slack:\n    webhook_url_env: PRM_TEST_SLACK\n"
    ));
    env.vars
        .push(("PRM_TEST_SLACK".into(), slack.url("/services/T0/B0/hook")));
    env
}

#[test]
fn a_scripted_day_sends_each_material_change_once() {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    let mut env = env_with_channels(smtp.port(), &slack);
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("fixer-bot"));
        w.check_run(REPO, 1, "lint")
            .failure()
            .log("error: unused variable `x`\n");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);

    // 12:00 The agent's commit fails: it goes to the agent, not to the owner.
    env.ok(&["run"]);
    assert_eq!(env.inbox_messages().len(), 1);
    assert!(smtp.subjects().is_empty());
    assert!(slack.requests().is_empty());

    // 12:05 The fix fails the same way: a guard stops auto-fix and the owner is told — but
    // SMTP is down and Slack answers 500.
    smtp.set_down(true);
    slack.script([Reply::status(500)]);
    env.advance(300);
    env.gh.world(|w| {
        w.push(REPO, 1, "fixer-bot");
        w.check_run(REPO, 1, "lint")
            .failure()
            .log("error: unused variable `x`\n");
    });
    env.ok(&["run"]);
    assert_eq!(env.status("octo/app#1")["why"], "same_failure");
    assert!(slack.slack_lines().is_empty());

    // 12:10 Still down: kept, tried again, nothing lost.
    env.advance(300);
    env.ok(&["run", "--force"]);

    // 12:15 Back up: the guard notice arrives, once per channel. A human push that conflicts
    // lights cnf but conflicts are not notified by default.
    smtp.set_down(false);
    env.advance(300);
    env.gh.world(|w| {
        w.push(REPO, 1, "human");
        w.pr(REPO, 1).conflicting();
    });
    env.ok(&["run"]);
    assert_eq!(env.pills("octo/app#1")["cnf"], true);
    let stopped = "PR #1: auto-fix stopped: the same failure came back (lint failed) · octo/app";
    assert_eq!(smtp.subjects(), vec![stopped.to_owned()]);
    assert_eq!(slack.slack_lines(), vec![stopped.to_owned()]);

    // 12:20 The human resolves the conflict and the checks go green: nothing to say.
    env.advance(300);
    env.gh.world(|w| {
        w.push(REPO, 1, "human");
        w.pr(REPO, 1)
            .mergeable(crate::support::fake_github::Mergeable::Mergeable);
        w.check_run(REPO, 1, "lint").success();
    });
    env.ok(&["run"]);
    assert_eq!(smtp.subjects().len(), 1);

    // 12:25 The owner arms the merge; the next tick merges the clean PR; the one after reports it.
    env.advance(300);
    env.ok(&["merge", "octo/app#1", "--when-ready"]);
    env.ok(&["run", "--force"]);
    env.advance(30);
    env.ok(&["run", "--force"]);
    assert_eq!(env.status("octo/app#1")["state"], "merged");

    // A tick with no change sends nothing.
    env.advance(30);
    env.ok(&["run", "--force"]);

    let want = vec![
        stopped.to_owned(),
        "PR #1: merge armed · octo/app".to_owned(),
        "PR #1: merged · octo/app".to_owned(),
    ];
    assert_eq!(smtp.subjects(), want);
    assert_eq!(slack.slack_lines(), want);
    for m in smtp.mails() {
        assert_eq!(m.to, ["owner@example.com"]);
        assert!(
            m.part("text/plain")
                .is_some_and(|t| t.contains("https://github.com/octo/app/pull/1")),
            "{m:?}"
        );
    }
}

#[test]
fn a_permanent_failure_is_kept_and_visible() {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    slack.script([Reply::status(404)]);
    let env = env_with_channels(smtp.port(), &slack);
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("human"));
        w.check_run(REPO, 1, "lint").failure();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    assert_eq!(
        smtp.subjects(),
        vec!["PR #1: lint failed · octo/app".to_owned()]
    );
    assert_eq!(slack.requests().len(), 1);
    let status = env.ok(&["status"]);
    assert!(status.stdout.contains("undelivered"), "{}", status.stdout);
    assert!(status.stdout.contains("slack"), "{}", status.stdout);
    // Permanent: not retried.
    env.ok(&["run", "--force"]);
    assert_eq!(slack.requests().len(), 1);
}

/// PRs 1..=`n` of `REPO`, each failing `lint` on a human's commit.
fn failing_prs(env: &TestEnv, n: u64) {
    env.gh.world(|w| {
        w.repo(REPO);
        for n in 1..=n {
            w.pr(REPO, n).head_commit(|c| c.by("human"));
            w.check_run(REPO, n, "lint").failure();
        }
    });
}

/// Watches PRs 1..=`n` of `REPO`.
fn watch_prs(env: &TestEnv, n: u64) {
    let prs: Vec<String> = (1..=n).map(|n| format!("{REPO}#{n}")).collect();
    let mut args = vec!["watch", "add"];
    args.extend(prs.iter().map(String::as_str));
    env.ok(&args);
}

#[test]
fn many_changes_in_one_tick_arrive_as_one_digest() {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    let env = env_with_channels(smtp.port(), &slack);
    failing_prs(&env, 7);
    watch_prs(&env, 7);
    let run = env.ok(&["run"]);
    assert!(
        run.stdout.contains(" · 2 messages sent"),
        "one digest by mail, one on Slack: {}",
        run.stdout
    );
    let mails = smtp.mails();
    assert_eq!(mails.len(), 1, "{:?}", smtp.subjects());
    assert_eq!(
        mails[0].header("Subject").as_deref(),
        Some("pr-monitor: 7 pull requests changed")
    );
    let text = mails[0].part("text/plain").unwrap();
    for n in 1..=7 {
        assert!(text.contains(&format!("PR #{n}: lint failed")), "{text}");
    }
    assert_eq!(
        slack.slack_lines(),
        vec!["pr-monitor: 7 pull requests changed".to_owned()]
    );
    // The Slack digest names every PR with its headline and link.
    let posted = slack.requests();
    let blocks = posted[0].json()["blocks"].to_string();
    for n in 1..=7 {
        assert!(
            blocks.contains(&format!(
                "<https://github.com/octo/app/pull/{n}|PR #{n}: lint failed · octo/app>"
            )),
            "{blocks}"
        );
    }
}

/// A merge among more notices than go out one by one keeps its `done` record in the digest:
/// the mail's line for the PR and Slack's say it in its short form.
#[test]
fn a_merged_prs_done_record_survives_the_digest() {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    let env = env_with_channels(smtp.port(), &slack);
    failing_prs(&env, 6);
    env.gh.world(|w| {
        w.pr(REPO, 7).title("Ship it").merged();
        w.check_run(REPO, 7, "lint").success();
    });
    watch_prs(&env, 7);
    env.ok(&["run"]);
    let done = "checks green (1/1) · no approvals · no review thread left open";
    let mails = smtp.mails();
    assert_eq!(mails.len(), 1, "one digest: {:?}", smtp.subjects());
    let text = mails[0].part("text/plain").unwrap();
    assert!(text.contains("PR #7: merged"), "{text}");
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let at = lines.iter().position(|l| l.starts_with("- PR #7: merged"));
    assert_eq!(
        at.map(|i| &lines[i + 1..i + 3]),
        Some(&["  Ship it", &*format!("  {done}")][..]),
        "{text}"
    );
    let blocks = slack.requests()[0].json()["blocks"].to_string();
    assert!(blocks.contains(&format!("Ship it — {done}")), "{blocks}");
}

#[test]
fn an_email_says_what_happened_in_its_subject_and_both_parts() {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    let env = env_with_channels(smtp.port(), &slack);
    env.gh.world(|w| {
        w.pr(REPO, 1)
            .title("Speed up the parser")
            .head_commit(|c| c.by("human"));
        w.check_run(REPO, 1, "lint")
            .failure()
            .log("checking src/a.rs\nerror: unused variable `x`\n");
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    let mails = smtp.mails();
    assert_eq!(mails.len(), 1);
    let mail = &mails[0];
    assert_eq!(
        mail.header("Subject").as_deref(),
        Some("PR #1: lint failed · octo/app")
    );
    assert_eq!(
        mail.header("Auto-Submitted").as_deref(),
        Some("auto-generated")
    );
    let text = mail.part("text/plain").unwrap().replace("\r\n", "\n");
    assert!(text.contains("Speed up the parser"), "{text}");
    assert!(text.contains("Failing checks:\n- lint  https://"), "{text}");
    assert!(text.contains("    error: unused variable `x`"), "{text}");
    let html = mail.part("text/html").unwrap();
    assert!(
        html.contains("<title>PR #1: lint failed · octo/app</title>"),
        "{html}"
    );
}

#[test]
fn a_channel_carries_only_the_kinds_it_is_filtered_to() {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    let mut env = TestEnv::with_config(&format!(
        "notify:\n  email:\n    smtp_url: smtp://127.0.0.1:{}\n    from: pr-monitor@example.com\n    to: [owner@example.com]\n  \
         slack:\n    webhook_url_env: PRM_TEST_SLACK\n    on: [merge]\n",
        smtp.port()
    ));
    env.vars.push(("PRM_TEST_SLACK".into(), slack.url("/hook")));
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("human"));
        w.check_run(REPO, 1, "lint").failure();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    assert_eq!(
        smtp.subjects(),
        vec!["PR #1: lint failed · octo/app".to_owned()]
    );
    assert!(slack.requests().is_empty());
    env.ok(&["merge", "octo/app#1", "--when-ready"]);
    assert_eq!(
        slack.slack_lines(),
        vec!["PR #1: merge armed · octo/app".to_owned()]
    );
}

#[test]
fn a_watch_that_keeps_erroring_is_reported_once() {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    let mut env = env_with_channels(smtp.port(), &slack);
    env.with_pr(REPO, 1);
    env.gh.fault(
        crate::support::fake_github::Fault::status(502)
            .when_query_mentions(REPO, 1)
            .always(),
    );
    env.ok(&["watch", "add", "octo/app#1"]);
    for _ in 0..4 {
        assert_eq!(env.run(&["run", "--force"]).code, 1);
        env.advance(30);
    }
    assert_eq!(
        smtp.subjects(),
        vec!["PR #1: keeps failing to tick · octo/app".to_owned()],
        "once, on the third failure"
    );
    assert_eq!(
        slack.slack_lines(),
        vec!["PR #1: keeps failing to tick · octo/app".to_owned()]
    );
    assert!(smtp.mails()[0].part("text/plain").unwrap().contains("502"));
    // Slack says why too, in the message's own section.
    let sent = slack.requests();
    let section = sent
        .iter()
        .filter(|r| r.status == 200)
        .map(|r| {
            r.json()["blocks"][0]["text"]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .next()
        .unwrap();
    assert!(
        section
            .lines()
            .any(|l| l.starts_with("Why: ") && l.contains("502")),
        "{section}"
    );
}

#[test]
fn one_prs_emails_thread_under_its_first_with_one_list_id() {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    let env = env_with_channels(smtp.port(), &slack);
    env.gh.world(|w| {
        for n in [1, 2] {
            w.pr(REPO, n).head_commit(|c| c.by("human"));
            w.check_run(REPO, n, "lint").failure();
        }
    });
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2"]);
    env.ok(&["run"]);
    env.ok(&["merge", "octo/app#1", "--when-ready"]);
    let mails = smtp.mails();
    let subjects = smtp.subjects();
    assert_eq!(subjects.len(), 3, "{subjects:?}");
    let about = |n: u64, what: &str| {
        mails
            .iter()
            .find(|m| {
                m.header("Subject")
                    .is_some_and(|s| s == format!("PR #{n}: {what} · octo/app"))
            })
            .unwrap_or_else(|| panic!("PR #{n}: {what} in {subjects:?}"))
    };
    let (first, later, other) = (
        about(1, "lint failed"),
        about(1, "merge armed"),
        about(2, "lint failed"),
    );
    let first_id = first.header("Message-ID").unwrap();
    assert_eq!(
        later.header("In-Reply-To").as_deref(),
        Some(first_id.as_str())
    );
    assert_eq!(
        later.header("References").as_deref(),
        Some(first_id.as_str())
    );
    assert_ne!(later.header("Message-ID").unwrap(), first_id);
    for starts in [first, other] {
        assert_eq!(starts.header("In-Reply-To"), None, "{starts:?}");
        assert_eq!(starts.header("References"), None, "{starts:?}");
    }
    let lists: Vec<Option<String>> = mails.iter().map(|m| m.header("List-Id")).collect();
    assert_eq!(
        lists[0].as_deref(),
        Some("pr-monitor <pr-monitor.example.com>")
    );
    assert!(lists.iter().all(|l| *l == lists[0]), "{lists:?}");
}

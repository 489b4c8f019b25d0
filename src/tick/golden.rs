//! Golden tests: the exact JSON of every message pr-monitor writes into the outbox (agent
//! messages of each kind, owner notices, the short error notice, digests, `notify test`), byte
//! for byte as stored. The shapes are the contract's; a change here is a change to what
//! receivers read.

use crate::core::decide::tests::{snap, t0};
use crate::core::report::tests;
use crate::core::report::*;
use crate::model::FailedCheck;
use crate::model::message::NoticePayload;
use crate::model::message::to_json;
use crate::model::plan::Feedback;
use crate::model::plan::{AgentRequest, MessageKind, Notice};
use crate::model::watch::{Pills, Why};

fn request(kind: MessageKind) -> AgentRequest {
    let base = tests::request();
    let lint = FailedCheck {
        url: Some("https://ci/7".into()),
        log_tail: "error: unused\u{1b}[0m".into(),
        ..base.checks[0].clone()
    };
    let e2e = FailedCheck {
        name: "e2e".into(),
        url: None,
        job_id: None,
        run_id: None,
        log_tail: String::new(),
        ..lint.clone()
    };
    let thread = Feedback {
        url: Some("https://github.com/octo/app/pull/1#r1".into()),
        updated_at: "2026-11-29T11:00:00Z".into(),
        edited: true,
        ..base.feedback[0].clone()
    };
    let comment = Feedback {
        source: crate::model::plan::SeenSource::IssueComment,
        id: "IC_2".into(),
        author: None,
        body: "ok".into(),
        path: None,
        line: None,
        url: None,
        updated_at: String::new(),
        edited: false,
        classification: crate::model::plan::FeedbackHint::ApprovalNote,
    };
    AgentRequest {
        kind,
        reason: Why::FixAsked,
        checks: vec![lint, e2e],
        feedback: vec![thread, comment],
        ..base
    }
}

/// The stored text of an agent message: everything but the brief, which
/// `the_agent_brief_reads_as_written` pins word for word.
fn agent_json(kind: MessageKind, kind_str: &str, conflict: &str) -> String {
    let req = request(kind);
    let body = serde_json::to_string(&agent_brief(&req, &snap("a"), "owner")).unwrap();
    format!(
        concat!(
            r#"{{"agent":"fixer","body":{body},"#,
            r#""checks":[{{"flake":false,"log_tail":"error: unused","name":"lint","url":"https://ci/7"}},"#,
            r#"{{"flake":false,"log_tail":"","name":"e2e","url":null}}],"#,
            r#"{conflict}"created_at":"2026-11-29T12:00:00Z","#,
            r#""feedback":[{{"author":"owner","body":"Please rename `x`.","classification":"request","edited":true,"id":"PRRT_1","line":3,"#,
            r#""path":"src/a.rs","source":"review_thread","updated_at":"2026-11-29T11:00:00Z","#,
            r#""url":"https://github.com/octo/app/pull/1#r1"}},"#,
            r#"{{"author":null,"body":"ok","classification":"approval_note","edited":false,"id":"IC_2","line":null,"path":null,"source":"issue_comment","#,
            r#""updated_at":null,"url":null}}],"#,
            r#""from":"pr-monitor","id":"octo-app-1-a-ci-1","kind":"{kind_str}","#,
            r#""pr":{{"base":"main","forge":"github","head_branch":"feature","head_repo":"octo/app","head_sha":"a","number":1,"repo":"octo/app","#,
            r#""title":"Add a feature","url":"https://github.com/octo/app/pull/1"}},"#,
            r#""reason":"fix_asked","schema":1,"trusted_by":"push by fixer-bot"}}"#
        ),
        body = body,
        conflict = conflict,
        kind_str = kind_str,
    )
}

#[test]
fn agent_messages_of_every_kind_are_stored_as_pinned() {
    for (kind, word, conflict) in [
        (MessageKind::CiFailure, "ci_failure", ""),
        (MessageKind::ReviewFeedback, "review_feedback", ""),
        (
            MessageKind::Conflict,
            "conflict",
            r#""conflict":{"base":"main","files":[]},"#,
        ),
    ] {
        let stored = to_json(&agent_message(&request(kind), &snap("a"), "owner", t0())).unwrap();
        assert_eq!(stored, agent_json(kind, word, conflict), "{word}");
    }
}

fn ci_notice() -> Notice {
    Notice::ChecksFailed {
        names: vec!["lint".into(), "e2e".into()],
        why: Why::NotAgentCommit,
        attempts: 0,
    }
}

#[test]
fn an_owner_notice_is_stored_as_pinned() {
    let mut s = snap("a");
    s.failed_logs = request(MessageKind::CiFailure).checks;
    let pills = Pills {
        ci: crate::model::watch::Ci::Lit,
        cnf: true,
        cmt: 2,
    };
    let stored = to_json(&notice_payload(&ci_notice(), &s, pills)).unwrap();
    let want = concat!(
        r#"{"failed_checks":[{"log_excerpt":"error: unused","name":"lint","url":"https://ci/7"},"#,
        r#"{"log_excerpt":"","name":"e2e","url":null}],"kind":"ci","#,
        r#""pills":{"ci":true,"ci_fixing":false,"cmt":2,"cnf":true},"#,
        r#""subject":"PR #1: lint, e2e failed · octo/app","#,
        r#""text":"PR #1 octo/app: lint, e2e failed\nAdd a feature\nhttps://github.com/octo/app/pull/1\n\n"#,
        r#"The head commit isn't one the agent made, so auto-fix leaves it to you.\n\n"#,
        r#"Failing checks:\n- lint  https://ci/7\n    error: unused\n- e2e  (no link)\n","#,
        r#""title":"Add a feature","url":"https://github.com/octo/app/pull/1"}"#
    );
    assert_eq!(stored, want);
    let plain = to_json(&notice_payload(&ci_notice(), &snap("a"), Pills::default())).unwrap();
    assert!(
        plain.starts_with(r#"{"failed_checks":[],"kind":"ci","pills":{"ci":false,"ci_fixing":false,"cmt":0,"cnf":false},"#),
        "{plain}"
    );
}

#[test]
fn the_error_notice_is_stored_as_pinned() {
    let notice = Notice::KeepsErroring {
        error: "the forge answered 500".into(),
    };
    let stored = to_json(&bare_notice_payload(
        &notice,
        &snap("a").pr,
        &snap("a").pr.url(),
    ))
    .unwrap();
    assert_eq!(
        stored,
        concat!(
            r#"{"kind":"error","reason":"the forge answered 500","#,
            r#""subject":"PR #1: keeps failing to tick · octo/app","#,
            r#""text":"PR #1 octo/app: keeps failing to tick\nhttps://github.com/octo/app/pull/1\n\nthe forge answered 500\n","#,
            r#""url":"https://github.com/octo/app/pull/1"}"#
        )
    );
}

#[test]
fn the_notify_test_messages_are_stored_as_pinned() {
    let notice = to_json(&crate::notify::probe::test_notice(t0())).unwrap();
    assert_eq!(
        notice,
        concat!(
            r#"{"failed_checks":[],"kind":"test","subject":"pr-monitor: test message","#,
            r#""text":"pr-monitor: test message\nSent by `pr-monitor notify test` at 2026-11-29T12:00:00Z. "#,
            r#"Notices about watched pull requests will arrive here.\n"}"#
        )
    );
    let agent = crate::notify::probe::test_agent_message("test-1-fixer", "fixer", t0()).to_string();
    assert_eq!(
        agent,
        concat!(
            r#"{"agent":"fixer","body":"A test message from `pr-monitor notify test`: there is nothing to fix. "#,
            r#"Acknowledge it with `pr-monitor inbox done test-1-fixer`.","checks":[],"#,
            r#""created_at":"2026-11-29T12:00:00Z","feedback":[],"from":"pr-monitor","id":"test-1-fixer","#,
            r#""kind":"test","pr":null,"reason":null}"#
        )
    );
}

fn outbox_row(id: &str, channel: &str, payload: &NoticePayload) -> crate::store::OutboxRow {
    crate::store::OutboxRow {
        message: crate::store::OutboxMessage {
            id: id.into(),
            pr: "https://github.com/octo/app/pull/1".into(),
            channel: channel.parse().unwrap(),
            kind: "ci".into(),
            subject: payload.subject.clone(),
            payload: to_json(payload).unwrap(),
            created_at: t0(),
        },
        attempts: 1,
        delivered_at: None,
        last_error: None,
        permanent: false,
    }
}

#[test]
fn a_digest_is_stored_as_pinned() {
    let rows: Vec<_> = (1..=2)
        .map(|n| {
            let mut s = snap("a");
            s.pr.number = n;
            s.url = s.pr.url();
            s.title = format!("Title {n}\u{1b}[0m");
            outbox_row(
                &format!("m-{n}"),
                "slack",
                &notice_payload(&ci_notice(), &s, Pills::default()),
            )
        })
        .collect();
    let digest = crate::notify::digest(&rows).unwrap();
    assert_eq!(digest.message.id, "digest-9e0e6078ed54");
    assert_eq!(digest.message.kind, "digest");
    assert_eq!(
        digest.message.subject,
        "pr-monitor: 2 pull requests changed"
    );
    assert_eq!(
        digest.message.payload,
        concat!(
            r#"{"items":[{"subject":"PR #1: lint, e2e failed · octo/app","title":"Title 1\u001b[0m","url":"https://github.com/octo/app/pull/1"},"#,
            r#"{"subject":"PR #2: lint, e2e failed · octo/app","title":"Title 2\u001b[0m","url":"https://github.com/octo/app/pull/2"}],"#,
            r#""kind":"digest","subject":"pr-monitor: 2 pull requests changed","#,
            r#""text":"pr-monitor: 2 pull requests changed\n\n- PR #1: lint, e2e failed · octo/app  https://github.com/octo/app/pull/1\n  Title 1\n"#,
            r#"- PR #2: lint, e2e failed · octo/app  https://github.com/octo/app/pull/2\n  Title 2\n"}"#
        )
    );
}

#[test]
fn owner_messages_carry_the_pinned_id_channel_kind_and_subject() {
    let config = crate::config::Config::parse(
        "notify:\n  email:\n    smtp_url: \"smtp://127.0.0.1:2525\"\n    from: \"pr-monitor@example.com\"\n    to: [owner@example.com]\n",
        std::path::Path::new("/nonexistent/pr-monitor.yaml"),
    )
    .unwrap();
    let policy = config.policy(None);
    let s = snap("a");
    let payload = notice_payload(&ci_notice(), &s, Pills::default());
    let rows =
        crate::tick::execute::owner_messages(&config, &policy, &s.pr, &ci_notice(), &payload, t0())
            .unwrap();
    let want = to_json(&payload).unwrap();
    let got: Vec<_> = rows
        .iter()
        .map(|m| {
            (
                m.id.as_str(),
                m.channel.clone(),
                m.kind.as_str(),
                m.subject.as_str(),
                m.pr.as_str(),
                m.payload == want,
            )
        })
        .collect();
    assert_eq!(
        got,
        [(
            "octo-app-1-ci-email-1795953600-5c14e90c",
            "email".to_owned(),
            "ci",
            "PR #1: lint, e2e failed · octo/app",
            "https://github.com/octo/app/pull/1",
            true
        )]
    );
}

#[test]
fn an_agent_message_row_carries_the_pinned_channel_kind_and_subject() {
    for (kind, word) in [
        (MessageKind::CiFailure, "ci_failure"),
        (MessageKind::ReviewFeedback, "review_feedback"),
        (MessageKind::Conflict, "conflict"),
    ] {
        let req = request(kind);
        let m =
            crate::tick::execute::agent_outbox_message(&req, &snap("a"), "owner", t0()).unwrap();
        assert_eq!(
            (
                m.id.as_str(),
                m.pr.as_str(),
                m.channel.clone(),
                m.kind.as_str(),
                m.subject.clone(),
                m.created_at
            ),
            (
                "octo-app-1-a-ci-1",
                "https://github.com/octo/app/pull/1",
                "inbox:fixer".to_owned(),
                word,
                format!("PR #1: {word} for fixer · octo/app"),
                t0()
            )
        );
        assert_eq!(
            m.payload,
            to_json(&agent_message(&req, &snap("a"), "owner", t0())).unwrap()
        );
    }
}

/// Every notice's kind and words, one row per variant: the words the owner reads, and the
/// headline that names the notice in its message ids.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one golden test: every notice's pinned words, one row each"
)]
fn every_notice_says_its_pinned_words() {
    use crate::config::NotifyKind as K;
    use crate::model::plan::{Disarm, Guard};
    use crate::model::{ForgeKind, Sha};
    let url = "https://github.com/octo/app/pull/1";
    let names = || vec!["lint".to_owned(), "test".to_owned()];
    let rows: Vec<(Notice, K, &str, &str)> = vec![
        (
            Notice::ChecksFailed {
                names: names(),
                why: Why::AutoFixOff,
                attempts: 0,
            },
            K::Ci,
            "lint, test failed",
            "Auto-fix is off for this PR.",
        ),
        (
            Notice::GuardStopped {
                guard: Guard::MaxAttempts { names: names() },
                attempts: 3,
            },
            K::Guard,
            "auto-fix stopped after 3 attempts; lint, test failed",
            "Auto-fix stopped after 3 attempts.",
        ),
        (
            Notice::GuardStopped {
                guard: Guard::SameFailure { names: names() },
                attempts: 1,
            },
            K::Guard,
            "auto-fix stopped: the same failure came back (lint, test failed)",
            "The same failure came back after a fix.",
        ),
        (
            Notice::GuardStopped {
                guard: Guard::NoNewCommit,
                attempts: 1,
            },
            K::Guard,
            "auto-fix stopped: the last fix pushed no new commit",
            "The last fix pushed no new commit.",
        ),
        (
            Notice::Conflict {
                base: "main".into(),
                found: None,
            },
            K::Conflict,
            "merge conflicts with main",
            url,
        ),
        (
            Notice::Conflict {
                base: "main".into(),
                found: Some("merge conflict in a.rs".into()),
            },
            K::Conflict,
            "merge conflicts with main",
            "merge conflict in a.rs",
        ),
        (
            Notice::Unresolved { threads: 2 },
            K::Review,
            "2 unresolved review thread(s)",
            url,
        ),
        (
            Notice::MergeArmed,
            K::Merge,
            "merge armed",
            "merges once its checks pass",
        ),
        (
            Notice::Disarmed {
                reason: Disarm::Because("a human pushed".into()),
            },
            K::Merge,
            "disarmed",
            "a human pushed",
        ),
        (
            Notice::Disarmed {
                reason: Disarm::Closed,
            },
            K::Merge,
            "disarmed",
            "the PR closed without merging",
        ),
        (
            Notice::Disarmed {
                reason: Disarm::Cancelled,
            },
            K::Merge,
            "disarmed",
            "the owner cancelled merge when ready",
        ),
        (
            Notice::Merged {
                done: crate::model::plan::Done {
                    head: Sha("abcdef0123456".into()),
                    checks_passed: 2,
                    checks_total: 2,
                    approved_by: vec!["alice".into()],
                    threads_resolved: 1,
                    threads_open: vec![crate::model::plan::OpenThread {
                        place: "src/lib.rs:10".into(),
                        author: Some("bob".into()),
                        url: Some(format!("{url}#discussion_r1")),
                    }],
                    agent_messages: 2,
                    checks_failed: Vec::new(),
                },
            },
            K::Merge,
            "merged",
            "checks green (2/2)\napproved by alice\n1 review thread(s) resolved, 1 still open: src/lib.rs:10 by bob (https://github.com/octo/app/pull/1#discussion_r1)\n2 message(s) to the agent\nhttps://github.com/octo/app/pull/1",
        ),
        (
            Notice::LeftQueue {
                forge: ForgeKind::GitHub,
                why: "test failed in the merge group".into(),
                head: Sha("abcdef0123456".into()),
                evidence: String::new(),
            },
            K::Merge,
            "left the merge queue: test failed in the merge group",
            "abcdef0 is not queued again until a new head or `merge --when-ready`",
        ),
        (
            Notice::LeftQueue {
                forge: ForgeKind::GitLab,
                why: "the pipeline failed".into(),
                head: Sha("abc".into()),
                evidence: "test:\nboom".into(),
            },
            K::Merge,
            "left the merge train: the pipeline failed",
            "test:\nboom",
        ),
        (
            Notice::Stuck {
                for_secs: 3 * 3600 + 5 * 60 + 9,
            },
            K::Stuck,
            "stuck for 3h05m",
            url,
        ),
        (
            Notice::KeepsErroring {
                error: "HTTP 500".into(),
            },
            K::Error,
            "keeps failing to tick",
            "HTTP 500",
        ),
    ];
    for (notice, kind, head, body) in rows {
        assert_eq!(
            (
                notice.kind(),
                headline(&notice).as_str(),
                detail(&notice, url).as_str()
            ),
            (kind, head, body),
            "{notice:?}"
        );
    }
}

//! The `done` record of a merge (seed 002's "stop at merge"): checks at the merged head,
//! who approved, the review threads resolved and those left open (named, with links), and
//! how many messages went to the agent. Said in the history and in the merge notice, so
//! "merged" never reads the same when open threads were left behind.

use std::collections::BTreeMap;

use crate::core::checks;
use crate::model::plan::{Done, OpenThread};
use crate::model::{CheckState, Instant, ReviewState, Snapshot};

/// The record of `snap` merging, with `agent_messages` sent about it.
pub(crate) fn record(snap: &Snapshot, agent_messages: u32) -> Done {
    let current = checks::newest(&snap.checks);
    let state_count = |state: CheckState| current.iter().filter(|c| c.state == state).count();
    let threads_open = snap
        .threads
        .iter()
        .filter(|t| !t.resolved)
        .map(|t| {
            let first = t.comments.first();
            OpenThread {
                place: match (&t.path, t.line) {
                    (Some(path), Some(line)) => format!("{path}:{line}"),
                    (Some(path), None) => path.clone(),
                    (None, _) => "a thread".to_owned(),
                },
                author: first.and_then(|c| c.author.clone()),
                url: first.and_then(|c| c.url.clone()),
            }
        })
        .collect();
    Done {
        head: snap.head.sha.clone(),
        checks_passed: state_count(CheckState::Passed),
        checks_total: current.len(),
        checks_failed: current
            .iter()
            .filter(|c| c.state == CheckState::Failed)
            .map(|c| c.name.clone())
            .collect(),
        approved_by: approvers(snap),
        threads_resolved: snap.threads.iter().filter(|t| t.resolved).count(),
        threads_open,
        agent_messages,
    }
}

/// The reviewers whose latest approving, blocking or dismissed review approves.
fn approvers(snap: &Snapshot) -> Vec<String> {
    let mut latest: BTreeMap<&str, (Option<Instant>, ReviewState)> = BTreeMap::new();
    for r in &snap.reviews {
        let (Some(who), true) = (
            r.author.as_deref(),
            matches!(
                r.state,
                ReviewState::Approved | ReviewState::ChangesRequested | ReviewState::Dismissed
            ),
        ) else {
            continue;
        };
        if latest.get(who).is_none_or(|(at, _)| r.submitted_at >= *at) {
            latest.insert(who, (r.submitted_at, r.state));
        }
    }
    latest
        .into_iter()
        .filter(|(_, (_, state))| *state == ReviewState::Approved)
        .map(|(who, _)| who.to_owned())
        .collect()
}

/// The record in one line, for the history: `done at abc1234: checks green (3/3) · approved
/// by alice · 1 review thread resolved, 1 still open: src/lib.rs:10 by bob (https://…) · 2
/// messages to the agent`.
pub(crate) fn line(done: &Done) -> String {
    format!("done at {}: {}", done.head.short(), lines(done).join(" · "))
}

/// The record's parts, one per line in a notice.
pub(crate) fn lines(done: &Done) -> Vec<String> {
    let checks = checks_said(done);
    let approvals = approvals_said(done);
    let mut threads = format!("{} review thread(s) resolved", done.threads_resolved);
    if done.threads_open.is_empty() {
        threads.push_str(", none open");
    } else {
        let named: Vec<String> = done
            .threads_open
            .iter()
            .map(|t| {
                let mut s = t.place.clone();
                if let Some(who) = &t.author {
                    s.push_str(&format!(" by {who}"));
                }
                if let Some(url) = &t.url {
                    s.push_str(&format!(" ({url})"));
                }
                s
            })
            .collect();
        threads.push_str(&format!(
            ", {} still open: {}",
            done.threads_open.len(),
            named.join("; ")
        ));
    }
    vec![
        checks,
        approvals,
        threads,
        format!("{} message(s) to the agent", done.agent_messages),
    ]
}

/// The record in Slack's short form, one line: the checks, the approvals and how many review
/// threads were left open (`checks green (2/2) · approved by alice · 1 review thread left
/// open`); the email and the history name each of them.
pub(crate) fn short(done: &Done) -> String {
    let open = match done.threads_open.len() {
        0 => "no review thread left open".to_owned(),
        1 => "1 review thread left open".to_owned(),
        n => format!("{n} review threads left open"),
    };
    format!("{} · {} · {open}", checks_said(done), approvals_said(done))
}

/// `checks green (3/3)`, `checks 2/3 passed, e2e failed` or `no checks`.
fn checks_said(done: &Done) -> String {
    if done.checks_total == 0 {
        "no checks".to_owned()
    } else if done.checks_failed.is_empty() && done.checks_passed == done.checks_total {
        format!(
            "checks green ({}/{})",
            done.checks_passed, done.checks_total
        )
    } else {
        let mut s = format!("checks {}/{} passed", done.checks_passed, done.checks_total);
        if !done.checks_failed.is_empty() {
            s.push_str(&format!(", {} failed", done.checks_failed.join(", ")));
        }
        s
    }
}

/// `approved by alice, bob` or `no approvals`.
fn approvals_said(done: &Done) -> String {
    if done.approved_by.is_empty() {
        "no approvals".to_owned()
    } else {
        format!("approved by {}", done.approved_by.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::{check, snap};
    use crate::model::{Comment, Review, ReviewThread};

    fn thread(id: &str, resolved: bool, author: &str) -> ReviewThread {
        ReviewThread {
            id: id.into(),
            resolved,
            outdated: false,
            path: Some("src/lib.rs".into()),
            line: Some(10),
            comments: vec![Comment {
                id: format!("{id}-c"),
                database_id: None,
                author: Some(author.into()),
                body: "nit".into(),
                url: Some(format!("https://github.com/octo/app/pull/1#{id}")),
                updated_at: None,
                created_at: None,
                edit: None,
                pending: false,
            }],
        }
    }

    fn review(author: &str, state: ReviewState, minute: i64) -> Review {
        Review {
            id: format!("{author}{minute}"),
            database_id: None,
            author: Some(author.into()),
            state,
            body: String::new(),
            url: None,
            submitted_at: Some(
                crate::core::decide::tests::t0() + chrono::Duration::minutes(minute),
            ),
            updated_at: None,
            edit: None,
        }
    }

    #[test]
    fn the_record_names_checks_approvers_open_threads_and_agent_messages() {
        let mut s = snap("abc1234def");
        s.checks = vec![
            check("lint", CheckState::Passed),
            check("test", CheckState::Passed),
        ];
        s.threads = vec![thread("t1", true, "alice"), thread("t2", false, "bob")];
        s.reviews = vec![
            review("alice", ReviewState::Approved, 1),
            review("carol", ReviewState::Approved, 1),
            review("carol", ReviewState::ChangesRequested, 2),
            review("dave", ReviewState::Commented, 3),
        ];
        let done = record(&s, 2);
        assert_eq!(done.approved_by, ["alice"]);
        assert_eq!(
            line(&done),
            "done at abc1234: checks green (2/2) · approved by alice · 1 review thread(s) resolved, \
             1 still open: src/lib.rs:10 by bob (https://github.com/octo/app/pull/1#t2) · 2 message(s) to the agent"
        );
        s.threads.clear();
        s.reviews.clear();
        s.checks.push(check("e2e", CheckState::Failed));
        assert_eq!(
            lines(&record(&s, 0)),
            [
                "checks 2/3 passed, e2e failed",
                "no approvals",
                "0 review thread(s) resolved, none open",
                "0 message(s) to the agent"
            ]
        );
    }

    #[test]
    fn the_short_form_counts_the_open_threads() {
        let mut s = snap("abc1234def");
        s.checks = vec![check("lint", CheckState::Passed)];
        s.reviews = vec![review("alice", ReviewState::Approved, 1)];
        assert_eq!(
            short(&record(&s, 0)),
            "checks green (1/1) · approved by alice · no review thread left open"
        );
        s.threads = vec![thread("t1", false, "bob")];
        assert_eq!(
            short(&record(&s, 0)),
            "checks green (1/1) · approved by alice · 1 review thread left open"
        );
        s.threads.push(thread("t2", false, "carol"));
        s.threads.push(thread("t3", true, "carol"));
        s.checks.push(check("e2e", CheckState::Failed));
        s.reviews.clear();
        assert_eq!(
            short(&record(&s, 0)),
            "checks 1/2 passed, e2e failed · no approvals · 2 review threads left open"
        );
    }
}

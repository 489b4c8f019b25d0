//! PURE: closing the loop on review feedback. Once the agent marks a review-feedback message
//! done, the next tick looks at what it did since the message went: a new head, a reply of
//! its own in a thread it was sent (by one of its logins, or carrying pr-monitor's `🤖 `
//! prefix), a thread resolved, a comment of its own on the PR. When it did none of these the
//! owner hears once; whatever it did answer is written to the history.

use crate::core::feedback::AGENT_REPLY_PREFIX;
use crate::core::text::{clip, one_line};
use crate::model::answers::FeedbackSent;
use crate::model::plan::{Feedback, SeenSource};
use crate::model::{Comment, Instant, Login, Sha, Snapshot};

/// The most characters of an answer quoted in the history.
const QUOTE_CHARS: usize = 200;

/// What the agent did about a review-feedback message it marked done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Judgement {
    /// The head moved after the message went.
    pub new_head: bool,
    /// Threads it answered: the thread's id and its reply's words, `None` when it only
    /// resolved the thread.
    pub threads: Vec<(String, Option<String>)>,
    /// Its own comment on the PR after the message went, if any.
    pub comment: Option<String>,
}

impl Judgement {
    /// No new commit, no reply, no resolved thread, no comment.
    pub(crate) fn did_nothing(&self) -> bool {
        !self.new_head && self.threads.is_empty() && self.comment.is_none()
    }
}

/// What is kept of a review-feedback message `message_id` sent on `head` at `at`.
pub(crate) fn sent(
    message_id: &str,
    head: &Sha,
    at: Instant,
    feedback: &[Feedback],
) -> FeedbackSent {
    let threads: Vec<String> = feedback
        .iter()
        .filter(|f| f.source == SeenSource::ReviewThread)
        .map(|f| f.id.clone())
        .collect();
    let comments = feedback.len() - threads.len();
    FeedbackSent {
        message_id: message_id.to_owned(),
        head_sha: head.clone(),
        sent_at: at,
        threads,
        comments: u32::try_from(comments).unwrap_or(u32::MAX),
        done_at: None,
        note: None,
    }
}

/// What the agent did about `sent`, judged on `snap`; `None` while it is not marked done.
pub(crate) fn judge(
    sent: &FeedbackSent,
    snap: &Snapshot,
    agent_logins: &[Login],
) -> Option<Judgement> {
    sent.done_at?;
    let after = |c: &Comment| {
        !c.pending
            && c.created_at
                .or(c.updated_at)
                .is_some_and(|t| t >= sent.sent_at)
            && (Login::any_is(agent_logins, c.author.as_deref())
                || c.body.starts_with(AGENT_REPLY_PREFIX))
    };
    let threads = sent
        .threads
        .iter()
        .filter_map(|id| {
            let thread = snap.threads.iter().find(|t| &t.id == id)?;
            match thread.comments.iter().rev().find(|c| after(c)) {
                Some(reply) => Some((id.clone(), Some(words(&reply.body)))),
                None => thread.resolved.then(|| (id.clone(), None)),
            }
        })
        .collect();
    Some(Judgement {
        new_head: snap.head.sha != sent.head_sha,
        threads,
        comment: snap
            .comments
            .iter()
            .rev()
            .find(|c| after(c))
            .map(|c| words(&c.body)),
    })
}

/// A reply's own words, on one line, without the `🤖 <agent> on behalf of <owner>` line.
fn words(body: &str) -> String {
    let own = match body.strip_prefix(AGENT_REPLY_PREFIX) {
        Some(rest) => rest.split_once('\n').map_or("", |(_, words)| words),
        None => body,
    };
    clip(&one_line(own.trim()), QUOTE_CHARS)
}

/// `2 review threads`, `1 comment`, `2 review threads and 1 comment`: what a message carried.
pub(crate) fn carried(threads: usize, comments: u32) -> String {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let t = plural(threads as u64, "review thread", "review threads");
    let c = plural(u64::from(comments), "comment", "comments");
    match (threads, comments) {
        (_, 0) => t,
        (0, _) => c,
        _ => format!("{t} and {c}"),
    }
}

/// The history's lines for what `agent` did about `sent` (none when it did nothing: the
/// notice says that).
pub(crate) fn history(agent: &str, sent: &FeedbackSent, j: &Judgement) -> Vec<String> {
    let mut out = Vec::new();
    if j.new_head {
        out.push(format!(
            "a new commit followed the review feedback sent to {agent}"
        ));
    }
    if !j.threads.is_empty() {
        let answers: Vec<String> = j
            .threads
            .iter()
            .map(|(id, reply)| match reply {
                Some(words) => format!("{id}: \"{words}\""),
                None => format!("{id}: resolved"),
            })
            .collect();
        out.push(format!(
            "{agent} answered {} of {}: {}",
            j.threads.len(),
            carried(sent.threads.len(), 0),
            answers.join("; ")
        ));
    }
    if let Some(words) = &j.comment {
        out.push(format!("{agent} commented: \"{words}\""));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ReviewThread;

    fn t(s: &str) -> Instant {
        s.parse().unwrap()
    }

    fn comment(author: &str, body: &str, at: &str) -> Comment {
        Comment {
            id: format!("c-{author}-{at}"),
            database_id: None,
            author: Some(author.to_owned()),
            body: body.to_owned(),
            url: None,
            updated_at: Some(t(at)),
            created_at: Some(t(at)),
            edit: None,
            pending: false,
        }
    }

    fn thread(id: &str, resolved: bool, comments: Vec<Comment>) -> ReviewThread {
        ReviewThread {
            id: id.to_owned(),
            resolved,
            outdated: false,
            path: None,
            line: None,
            comments,
        }
    }

    const SENT: &str = "2026-11-29T12:00:00Z";
    const BEFORE: &str = "2026-11-29T11:00:00Z";
    const AFTER: &str = "2026-11-29T12:05:00Z";

    fn sent_done() -> FeedbackSent {
        FeedbackSent {
            message_id: "m1".into(),
            head_sha: Sha("abc".into()),
            sent_at: t(SENT),
            threads: vec!["T1".into(), "T2".into()],
            comments: 0,
            done_at: Some(t(AFTER)),
            note: None,
        }
    }

    fn snap(head: &str, threads: Vec<ReviewThread>, comments: Vec<Comment>) -> Snapshot {
        let mut s = crate::core::decide::tests::snap(head);
        s.threads = threads;
        s.comments = comments;
        s
    }

    #[test]
    fn what_the_agent_did_is_read_from_the_snapshot() {
        let agent = [Login::new("fixer-bot")];
        let owner_t1 = || comment("owner", "please rename", BEFORE);
        let cases = [
            // Nothing: no commit, no reply, its old words do not count, nor the owner's.
            (
                snap(
                    "abc",
                    vec![
                        thread(
                            "T1",
                            false,
                            vec![owner_t1(), comment("fixer-bot", "old", BEFORE)],
                        ),
                        thread("T2", false, vec![comment("owner", "still?", AFTER)]),
                    ],
                    vec![],
                ),
                false,
                vec![],
                None,
            ),
            // A reply through pr-monitor (the prefix), a resolved thread, a comment by login.
            (
                snap(
                    "abc",
                    vec![
                        thread(
                            "T1",
                            false,
                            vec![
                                owner_t1(),
                                comment("owner", "🤖 fixer on behalf of owner\n\nRenamed.", AFTER),
                            ],
                        ),
                        thread("T2", true, vec![comment("owner", "why?", BEFORE)]),
                    ],
                    vec![comment("fixer-bot", "Working on it", AFTER)],
                ),
                false,
                vec![
                    ("T1".to_owned(), Some("Renamed.".to_owned())),
                    ("T2".to_owned(), None),
                ],
                Some("Working on it".to_owned()),
            ),
            // A new head alone.
            (snap("def", vec![], vec![]), true, vec![], None),
        ];
        for (s, new_head, threads, comment) in cases {
            let j = judge(&sent_done(), &s, &agent).expect("done");
            assert_eq!(
                j,
                Judgement {
                    new_head,
                    threads,
                    comment
                },
                "{:?}",
                s.threads
            );
        }
    }

    #[test]
    fn nothing_is_judged_before_the_agent_says_done() {
        let open = FeedbackSent {
            done_at: None,
            ..sent_done()
        };
        assert_eq!(judge(&open, &snap("def", vec![], vec![]), &[]), None);
    }

    #[test]
    fn what_a_message_carried_reads_as_words() {
        for (threads, comments, want) in [
            (2, 0, "2 review threads"),
            (1, 0, "1 review thread"),
            (0, 1, "1 comment"),
            (2, 3, "2 review threads and 3 comments"),
        ] {
            assert_eq!(carried(threads, comments), want);
        }
    }
}

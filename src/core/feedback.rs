//! The needs-response set (see "What reaches whom" in the README): every issue comment,
//! submitted PR-level review body and review thread whose latest activity is from someone
//! other than the agent, keyed by source + id + update time, so a new reply on an answered or
//! resolved thread is new. Reviews not yet submitted never count. An edit makes an item new
//! only when its own author made it (and the job's `edits` is `author`); an edit by anyone
//! else is ignored and said so.

use std::collections::BTreeMap;

use crate::model::plan::{Feedback, SeenMark, SeenSource};
use crate::model::policy::Edits;
use crate::model::{Comment, Edit, Login, ReviewState, Snapshot};

/// Replies pr-monitor posts for agents start with this; they are never feedback.
pub(crate) const AGENT_REPLY_PREFIX: &str = "🤖 ";

use crate::model::stamp_or_empty as stamp;

/// Whose words an item holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Words {
    /// As written: never edited.
    Written,
    /// Edited by its own author.
    EditedByAuthor,
    /// Edited by this other login.
    EditedBy(String),
    /// Edited, and the forge does not say by whom (GitLab's notes).
    EditedByUnknown,
}

impl Words {
    fn of(author: Option<&str>, edit: Option<&Edit>) -> Self {
        match edit {
            None => Words::Written,
            Some(Edit { by: None, .. }) => Words::EditedByUnknown,
            Some(Edit { by: Some(by), .. }) => {
                if author.is_some_and(|a| Login::new(a).is(by)) {
                    Words::EditedByAuthor
                } else {
                    Words::EditedBy(by.clone())
                }
            }
        }
    }
}

/// One item that may need a response, and whose words it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    pub feedback: Feedback,
    pub words: Words,
}

/// Every item that may need a response, newest activity last within each source.
pub(crate) fn items(snap: &Snapshot, agent_logins: &[Login]) -> Vec<Item> {
    let by_agent = |author: &Option<String>, body: &str| {
        Login::any_is(agent_logins, author.as_deref()) || body.starts_with(AGENT_REPLY_PREFIX)
    };
    let item = |source: SeenSource, id: &str, c: &Comment, updated_at, path, line| Item {
        words: Words::of(c.author.as_deref(), c.edit.as_ref()),
        feedback: Feedback {
            source,
            id: id.to_owned(),
            author: c.author.clone(),
            body: c.body.clone(),
            path,
            line,
            url: c.url.clone(),
            updated_at,
            edited: c.edit.is_some(),
            classification: crate::core::hint::classify(&c.body),
        },
    };
    let mut out = Vec::new();
    for c in &snap.comments {
        if !c.pending && !by_agent(&c.author, &c.body) && !c.body.trim().is_empty() {
            out.push(item(
                SeenSource::IssueComment,
                &c.id,
                c,
                stamp(c.updated_at),
                None,
                None,
            ));
        }
    }
    for r in &snap.reviews {
        if r.state != ReviewState::Pending
            && !by_agent(&r.author, &r.body)
            && !r.body.trim().is_empty()
        {
            out.push(Item {
                words: Words::of(r.author.as_deref(), r.edit.as_ref()),
                feedback: Feedback {
                    source: SeenSource::Review,
                    id: r.id.clone(),
                    author: r.author.clone(),
                    body: r.body.clone(),
                    path: None,
                    line: None,
                    url: r.url.clone(),
                    updated_at: stamp(r.updated_at.or(r.submitted_at)),
                    edited: r.edit.is_some(),
                    classification: crate::core::hint::classify(&r.body),
                },
            });
        }
    }
    for t in &snap.threads {
        let submitted = t.comments.iter().filter(|c| !c.pending);
        let Some(last) = submitted.clone().max_by_key(|c| c.updated_at) else {
            continue;
        };
        if by_agent(&last.author, &last.body) {
            continue;
        }
        let updated_at = stamp(submitted.filter_map(|c| c.updated_at).max());
        out.push(item(
            SeenSource::ReviewThread,
            &t.id,
            last,
            updated_at,
            t.path.clone(),
            t.line,
        ));
    }
    out
}

/// Whether `item` is newer than what was handled.
pub(crate) fn is_new(item: &Feedback, seen: &BTreeMap<(String, String), String>) -> bool {
    seen.get(&item.seen_key()) != Some(&item.updated_at)
}

/// What becomes of the new items from trusted authors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Sorted {
    /// What goes to the agent.
    pub send: Vec<Feedback>,
    /// Edits that do not count, with who made them (`None`: the forge does not say): marked
    /// handled, never sent, and noted in the history.
    pub ignored: Vec<(Feedback, Option<String>)>,
    /// Edits the job ignores (`edits: never`): marked handled, nothing more.
    pub quiet: Vec<Feedback>,
}

impl Sorted {
    /// The seen-state rows that mark every sorted item handled.
    pub(crate) fn seen_rows(&self) -> Vec<SeenMark> {
        let ignored = self.ignored.iter().map(|(f, _)| f);
        self.send
            .iter()
            .chain(ignored)
            .chain(&self.quiet)
            .map(|f| SeenMark::new(f.source, &f.id, &f.updated_at))
            .collect()
    }
}

/// Sorts `items` that are new against `seen`: an item never handled is sent unless another
/// login rewrote it; a changed one is sent again only when its author edited it and `edits`
/// is `author` (or it is a new reply on a thread).
pub(crate) fn sort(
    items: Vec<Item>,
    seen: &BTreeMap<(String, String), String>,
    edits: Edits,
) -> Sorted {
    let mut out = Sorted::default();
    for Item { feedback, words } in items {
        if !is_new(&feedback, seen) {
            continue;
        }
        let handled_before = seen.contains_key(&feedback.seen_key());
        match (words, edits, handled_before) {
            (Words::Written, ..)
            | (Words::EditedByAuthor, Edits::Author, _)
            | (Words::EditedByAuthor | Words::EditedByUnknown, Edits::Never, false) => {
                out.send.push(feedback);
            }
            (Words::EditedByAuthor | Words::EditedByUnknown, Edits::Never, true) => {
                out.quiet.push(feedback);
            }
            // A note GitLab shows edited before it was first seen: the edit is most likely its
            // author's (only maintainers may edit another's), and the words are new.
            (Words::EditedByUnknown, Edits::Author, false) => out.send.push(feedback),
            (Words::EditedByUnknown, Edits::Author, true) => out.ignored.push((feedback, None)),
            (Words::EditedBy(by), ..) => out.ignored.push((feedback, Some(by))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::{snap, t0};
    use crate::model::{Review, ReviewThread};
    use chrono::Duration;

    fn comment(id: &str, who: &str, min: i64, edit: Option<(i64, Option<&str>)>) -> Comment {
        Comment {
            id: id.into(),
            database_id: None,
            author: Some(who.into()),
            body: format!("words of {id}"),
            url: None,
            updated_at: Some(t0() + Duration::minutes(edit.map_or(min, |(at, _)| at))),
            created_at: Some(t0() + Duration::minutes(min)),
            edit: edit.map(|(at, by)| Edit {
                at: Some(t0() + Duration::minutes(at)),
                by: by.map(str::to_owned),
            }),
            pending: false,
        }
    }

    fn seen_at(items: &[Item]) -> BTreeMap<(String, String), String> {
        items
            .iter()
            .map(|i| (i.feedback.seen_key(), i.feedback.updated_at.clone()))
            .collect()
    }

    #[test]
    fn whose_words_an_item_holds() {
        let cases = [
            (None, Words::Written),
            (Some((5, Some("ann"))), Words::EditedByAuthor),
            (Some((5, Some("ANN"))), Words::EditedByAuthor),
            (Some((5, Some("max"))), Words::EditedBy("max".into())),
            (Some((5, None)), Words::EditedByUnknown),
        ];
        for (edit, want) in cases {
            let mut s = snap("a");
            s.comments = vec![comment("IC_1", "ann", 0, edit)];
            let got = items(&s, &[]);
            assert_eq!(got[0].words, want, "{edit:?}");
            assert_eq!(got[0].feedback.edited, edit.is_some(), "{edit:?}");
        }
    }

    #[test]
    fn pending_reviews_and_pending_thread_comments_are_never_feedback() {
        let mut s = snap("a");
        s.reviews = vec![Review {
            id: "PRR_1".into(),
            database_id: None,
            author: Some("owner".into()),
            state: ReviewState::Pending,
            body: "draft words".into(),
            url: None,
            submitted_at: None,
            updated_at: Some(t0()),
            edit: None,
        }];
        let mut draft = comment("PRRC_1", "owner", 0, None);
        draft.pending = true;
        s.threads = vec![ReviewThread {
            id: "PRRT_1".into(),
            resolved: false,
            outdated: false,
            path: None,
            line: None,
            comments: vec![draft.clone()],
        }];
        assert!(items(&s, &[]).is_empty(), "{:?}", items(&s, &[]));
        // A submitted comment with a pending reply: the item is the submitted one.
        s.threads[0].comments = vec![
            comment("PRRC_0", "owner", 0, None),
            Comment {
                updated_at: Some(t0() + Duration::minutes(9)),
                ..draft
            },
        ];
        let got = items(&s, &[]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].feedback.body, "words of PRRC_0");
        assert_eq!(got[0].feedback.updated_at, "2026-11-29T12:00:00Z");
    }

    #[test]
    fn edits_count_only_when_their_author_made_them() {
        // (words now, handled before at the unedited time, policy) -> sent, ignored (by), quiet
        type Case<'a> = (Option<(i64, Option<&'a str>)>, bool, Edits, &'a str);
        let cases: [Case<'_>; 12] = [
            (None, false, Edits::Author, "send"),
            (Some((5, Some("ann"))), true, Edits::Author, "send"),
            (Some((5, Some("ann"))), false, Edits::Author, "send"),
            (Some((5, Some("ann"))), true, Edits::Never, "quiet"),
            (Some((5, Some("ann"))), false, Edits::Never, "send"),
            (
                Some((5, Some("max"))),
                true,
                Edits::Author,
                "ignored by max",
            ),
            (
                Some((5, Some("max"))),
                false,
                Edits::Author,
                "ignored by max",
            ),
            (Some((5, Some("max"))), true, Edits::Never, "ignored by max"),
            (Some((5, None)), true, Edits::Author, "ignored by ?"),
            (Some((5, None)), false, Edits::Author, "send"),
            (Some((5, None)), true, Edits::Never, "quiet"),
            (Some((5, None)), false, Edits::Never, "send"),
        ];
        for (edit, handled, edits, want) in cases {
            let mut s = snap("a");
            s.comments = vec![comment("IC_1", "ann", 0, None)];
            let seen = if handled {
                seen_at(&items(&s, &[]))
            } else {
                BTreeMap::new()
            };
            s.comments = vec![comment("IC_1", "ann", 0, edit)];
            let sorted = sort(items(&s, &[]), &seen, edits);
            let got = match (&sorted.send[..], &sorted.ignored[..], &sorted.quiet[..]) {
                ([_], [], []) => "send".to_owned(),
                ([], [(_, by)], []) => format!("ignored by {}", by.as_deref().unwrap_or("?")),
                ([], [], [_]) => "quiet".to_owned(),
                other => format!("{other:?}"),
            };
            assert_eq!(got, want, "{edit:?} handled={handled} {edits:?}");
            assert_eq!(sorted.seen_rows().len(), 1, "handled either way");
            // Once handled, the same words are not new again.
            let mut again = seen.clone();
            for m in sorted.seen_rows() {
                again.insert(m.key(), m.updated_at);
            }
            assert_eq!(sort(items(&s, &[]), &again, edits), Sorted::default());
        }
    }

    #[test]
    fn a_new_reply_on_a_handled_thread_is_new() {
        let mut s = snap("a");
        s.threads = vec![ReviewThread {
            id: "PRRT_1".into(),
            resolved: true,
            outdated: false,
            path: None,
            line: None,
            comments: vec![comment("PRRC_1", "owner", 0, None)],
        }];
        let seen = seen_at(&items(&s, &[]));
        s.threads[0]
            .comments
            .push(comment("PRRC_2", "owner", 3, None));
        let sorted = sort(items(&s, &[]), &seen, Edits::Never);
        assert_eq!(sorted.send.len(), 1);
        assert_eq!(sorted.send[0].body, "words of PRRC_2");
    }
}

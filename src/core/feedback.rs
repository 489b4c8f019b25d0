//! The needs-response set (seed 002): every issue comment, PR-level review body and review
//! thread whose latest activity is from someone other than the agent, keyed by source + id +
//! updatedAt, so an edited comment or a new reply on an answered or resolved thread is new.

use std::collections::BTreeMap;

use crate::model::plan::Feedback;
use crate::model::{Login, Snapshot};

/// Replies pr-monitor posts for agents start with this; they are never feedback.
pub const AGENT_REPLY_PREFIX: &str = "🤖 ";

use crate::model::stamp_or_empty as stamp;

/// Every item that may need a response, newest activity last within each source.
pub fn items(snap: &Snapshot, agent_logins: &[Login]) -> Vec<Feedback> {
    let by_agent = |author: &Option<String>, body: &str| {
        Login::any_is(agent_logins, author.as_deref()) || body.starts_with(AGENT_REPLY_PREFIX)
    };
    let mut out = Vec::new();
    for c in &snap.comments {
        if !by_agent(&c.author, &c.body) && !c.body.trim().is_empty() {
            out.push(Feedback {
                source: "issue_comment".into(),
                id: c.id.clone(),
                author: c.author.clone(),
                body: c.body.clone(),
                path: None,
                line: None,
                url: c.url.clone(),
                updated_at: stamp(c.updated_at),
            });
        }
    }
    for r in &snap.reviews {
        if !by_agent(&r.author, &r.body) && !r.body.trim().is_empty() {
            out.push(Feedback {
                source: "review".into(),
                id: r.id.clone(),
                author: r.author.clone(),
                body: r.body.clone(),
                path: None,
                line: None,
                url: r.url.clone(),
                updated_at: stamp(r.updated_at.or(r.submitted_at)),
            });
        }
    }
    for t in &snap.threads {
        let Some(last) = t.comments.iter().max_by_key(|c| c.updated_at) else {
            continue;
        };
        if by_agent(&last.author, &last.body) {
            continue;
        }
        out.push(Feedback {
            source: "review_thread".into(),
            id: t.id.clone(),
            author: last.author.clone(),
            body: last.body.clone(),
            path: t.path.clone(),
            line: t.line,
            url: last.url.clone(),
            updated_at: stamp(t.last_activity()),
        });
    }
    out
}

/// Whether `item` is newer than what was handled.
pub fn is_new(item: &Feedback, seen: &BTreeMap<(String, String), String>) -> bool {
    seen.get(&(item.source.clone(), item.id.clone())) != Some(&item.updated_at)
}

/// The seen-state rows that mark `items` handled.
pub fn seen_rows(items: &[Feedback]) -> Vec<crate::model::plan::SeenMark> {
    items
        .iter()
        .map(|f| crate::model::plan::SeenMark::new(&f.source, &f.id, &f.updated_at))
        .collect()
}

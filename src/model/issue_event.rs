//! What happened on a PR's conversation, in GitHub's issue-event shape: GitHub's issue events
//! as they come, GitLab's label and state events of a merge request put in the same words.

use serde::Serialize;

use super::{Instant, stamp_or_empty};

/// One event: `labeled`, `unlabeled`, `head_ref_force_pushed`, `closed`, `reopened`, `merged`…
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IssueEvent {
    pub id: u64,
    pub event: String,
    pub actor: Option<Actor>,
    pub created_at: String,
    /// The label added or removed (`labeled`, `unlabeled` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<EventLabel>,
    /// The commit the event refers to, where it refers to one.
    pub commit_id: Option<String>,
    /// When it happened, for ordering.
    #[serde(skip)]
    pub at: Option<Instant>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Actor {
    pub login: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventLabel {
    pub name: String,
}

impl IssueEvent {
    /// An event by `actor` (unknown for a deleted account) at `at`.
    pub fn new(id: u64, event: &str, actor: Option<String>, at: Option<Instant>) -> Self {
        IssueEvent {
            id,
            event: event.to_owned(),
            actor: actor.map(|login| Actor { login }),
            created_at: stamp_or_empty(at),
            label: None,
            commit_id: None,
            at,
        }
    }
}

/// A PR's events as read: its whole history, or as much of it as the forge's budget allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Events {
    /// Oldest first.
    pub events: Vec<IssueEvent>,
    /// Why the list stops short of the whole history, when it does (said on stderr).
    pub cut: Option<String>,
}

impl Events {
    /// The whole history.
    pub fn whole(events: Vec<IssueEvent>) -> Self {
        Events { events, cut: None }
    }
}

/// Several lists of events as one, oldest first (an unknown time first; ties by id).
pub fn in_time_order(lists: impl IntoIterator<Item = Vec<IssueEvent>>) -> Vec<IssueEvent> {
    let mut all: Vec<IssueEvent> = lists.into_iter().flatten().collect();
    all.sort_by_key(|e| (e.at, e.id));
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_instant;

    fn at(s: &str) -> Instant {
        parse_instant(s).unwrap()
    }

    #[test]
    fn lists_merge_oldest_first() {
        let labels = vec![
            IssueEvent::new(
                7,
                "labeled",
                Some("ann".into()),
                Some(at("2026-11-29T10:00:00Z")),
            ),
            IssueEvent::new(8, "unlabeled", None, Some(at("2026-11-29T12:00:00Z"))),
        ];
        let states = vec![IssueEvent::new(
            3,
            "closed",
            Some("bob".into()),
            Some(at("2026-11-29T11:00:00Z")),
        )];
        let order: Vec<(u64, String)> = in_time_order([labels, states])
            .into_iter()
            .map(|e| (e.id, e.event))
            .collect();
        assert_eq!(
            order,
            [
                (7, "labeled".to_owned()),
                (3, "closed".to_owned()),
                (8, "unlabeled".to_owned())
            ]
        );
    }

    #[test]
    fn an_event_reads_as_github_writes_it() {
        let mut e = IssueEvent::new(
            1,
            "labeled",
            Some("ann".into()),
            Some(at("2026-11-29T10:00:00Z")),
        );
        e.label = Some(EventLabel {
            name: "ready".into(),
        });
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "id": 1, "event": "labeled", "actor": {"login": "ann"},
                "created_at": "2026-11-29T10:00:00Z", "label": {"name": "ready"}, "commit_id": null
            })
        );
        let gone = IssueEvent::new(2, "closed", None, None);
        let v = serde_json::to_value(&gone).unwrap();
        assert!(v["actor"].is_null());
        assert!(v.get("label").is_none());
    }
}

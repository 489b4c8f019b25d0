//! A merge request's label and state events (`GET …/resource_label_events`,
//! `…/resource_state_events`), put in GitHub's issue-event words and merged into one list by
//! time: a label added is `labeled`, removed `unlabeled`; a state is its own event (`closed`,
//! `reopened`, `merged`).

use serde::Deserialize;

use super::GitLab;
use crate::forge::{ForgeError, wire_time};
use crate::model::PrRef;
use crate::model::issue_event::{EventLabel, IssueEvent, in_time_order};

#[derive(Debug, Deserialize)]
struct LabelEvent {
    id: u64,
    #[serde(default)]
    user: Option<EventUser>,
    #[serde(default)]
    created_at: Option<String>,
    /// Null when the label was deleted since.
    #[serde(default)]
    label: Option<Label>,
    /// `add` or `remove`.
    action: String,
}

#[derive(Debug, Deserialize)]
struct StateEvent {
    id: u64,
    #[serde(default)]
    user: Option<EventUser>,
    #[serde(default)]
    created_at: Option<String>,
    state: String,
}

#[derive(Debug, Deserialize)]
struct EventUser {
    username: String,
}

#[derive(Debug, Deserialize)]
struct Label {
    name: String,
}

impl LabelEvent {
    fn into_event(self) -> IssueEvent {
        let event = if self.action == "remove" {
            "unlabeled"
        } else {
            "labeled"
        };
        let mut e = IssueEvent::new(
            self.id,
            event,
            self.user.map(|u| u.username),
            wire_time(self.created_at.as_deref()),
        );
        e.label = self.label.map(|l| EventLabel { name: l.name });
        e
    }
}

impl StateEvent {
    fn into_event(self) -> IssueEvent {
        IssueEvent::new(
            self.id,
            &self.state,
            self.user.map(|u| u.username),
            wire_time(self.created_at.as_deref()),
        )
    }
}

impl GitLab {
    pub(super) fn events_of(&self, pr: &PrRef) -> Result<Vec<IssueEvent>, ForgeError> {
        let labels: Vec<LabelEvent> = self.get_all(
            &Self::mr_path(pr, "/resource_label_events?per_page=100"),
            "label events",
        )?;
        let states: Vec<StateEvent> = self.get_all(
            &Self::mr_path(pr, "/resource_state_events?per_page=100"),
            "state events",
        )?;
        Ok(in_time_order([
            labels.into_iter().map(LabelEvent::into_event).collect(),
            states.into_iter().map(StateEvent::into_event).collect(),
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitlab_events_read_in_github_words() {
        // The examples of GitLab's resource label and state events documentation, cut.
        let added: LabelEvent = serde_json::from_str(
            r##"{"id": 142, "user": {"id": 1, "name": "Administrator", "username": "root"},
                "created_at": "2018-08-20T13:38:20.077Z", "resource_type": "MergeRequest",
                "resource_id": 253, "label": {"id": 73, "name": "a1", "color": "#34495E",
                "description": ""}, "action": "add"}"##,
        )
        .unwrap();
        let e = added.into_event();
        assert_eq!(e.event, "labeled");
        assert_eq!(e.label.map(|l| l.name).as_deref(), Some("a1"));
        assert_eq!(e.created_at, "2018-08-20T13:38:20Z");
        let removed: LabelEvent = serde_json::from_str(
            r#"{"id": 143, "user": null, "created_at": "2018-08-20T13:38:20.077Z",
                "label": null, "action": "remove"}"#,
        )
        .unwrap();
        let e = removed.into_event();
        assert_eq!(
            (e.event.as_str(), e.actor, e.label),
            ("unlabeled", None, None)
        );
        let closed: StateEvent = serde_json::from_str(
            r#"{"id": 142, "user": {"id": 1, "username": "root"},
                "created_at": "2018-08-21T14:38:20.077Z", "resource_type": "MergeRequest",
                "resource_id": 11, "state": "closed"}"#,
        )
        .unwrap();
        let e = closed.into_event();
        assert_eq!(e.event, "closed");
        assert_eq!(e.actor.map(|a| a.login).as_deref(), Some("root"));
    }
}

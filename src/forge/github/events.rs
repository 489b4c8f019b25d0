//! A PR's issue events (`GET /repos/{o}/{r}/issues/{n}/events`): labels added and removed,
//! force pushes, closings, reopenings, merges… oldest first, as GitHub lists them. Read only
//! for `check --full-payload`, page after page to the end of the history, unless GitHub's REST
//! budget runs low: the list is then cut there, and says why.

use serde::Deserialize;

use super::GitHub;
use crate::forge::http::{Idempotency, status_error};
use crate::forge::{ForgeError, wire_time};
use crate::model::PrRef;
use crate::model::issue_event::{EventLabel, Events, IssueEvent};

/// Events per page (GitHub's most).
const PER_PAGE: usize = 100;
/// The REST requests left (the last answer's `x-ratelimit-remaining`) below which no further
/// page is read: what is left is the ticks' (logs, activity, comparisons).
const KEEP_LEFT: u64 = 500;
/// Pages read at most (100,000 events), so a server that never ends a list is left at last.
const MAX_PAGES: usize = 1000;

#[derive(Debug, Deserialize)]
struct WireEvent {
    id: u64,
    event: String,
    #[serde(default)]
    actor: Option<Login>,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    label: Option<Label>,
    #[serde(default)]
    commit_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Login {
    login: String,
}

#[derive(Debug, Deserialize)]
struct Label {
    name: String,
}

impl WireEvent {
    fn into_event(self) -> IssueEvent {
        let mut e = IssueEvent::new(
            self.id,
            &self.event,
            self.actor.map(|a| a.login),
            wire_time(self.created_at.as_deref()),
        );
        e.label = self.label.map(|l| EventLabel { name: l.name });
        e.commit_id = self.commit_id;
        e
    }
}

impl GitHub {
    pub(super) fn issue_events(&self, pr: &PrRef) -> Result<Events, ForgeError> {
        let mut events = Vec::new();
        for page in 1..=MAX_PAGES {
            let path = format!(
                "/repos/{}/issues/{}/events?per_page={PER_PAGE}&page={page}",
                pr.repo, pr.number
            );
            let resp = self.rest("GET", &path, None, Idempotency::Retry)?;
            if resp.status != 200 {
                return Err(status_error(&resp));
            }
            let list: Vec<WireEvent> = serde_json::from_str(&resp.body)
                .map_err(|e| ForgeError::Unexpected(format!("issue events: {e}")))?;
            let full = list.len() >= PER_PAGE;
            events.extend(list.into_iter().map(WireEvent::into_event));
            if !full {
                return Ok(Events::whole(events));
            }
            let left = self.http.usage().rate_limit_remaining;
            if let Some(left) = left.filter(|left| *left < KEEP_LEFT) {
                let cut = format!(
                    "only the first {} events were read: GitHub's REST budget is down to {left} requests until its reset",
                    events.len()
                );
                return Ok(Events {
                    events,
                    cut: Some(cut),
                });
            }
        }
        let cut = format!(
            "only the first {} events were read: the history goes on past {MAX_PAGES} pages",
            events.len()
        );
        Ok(Events {
            events,
            cut: Some(cut),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issue_event_keeps_its_label_and_commit() {
        // Cut from the example of GitHub's "List issue events" documentation.
        let e: WireEvent = serde_json::from_str(
            r#"{"id": 1, "node_id": "MDEwOklzc3VlRXZlbnQx",
                "url": "https://api.github.com/repos/octocat/Hello-World/issues/events/1",
                "actor": {"login": "octocat", "id": 1}, "event": "closed",
                "commit_id": "6dcb09b5b57875f334f61aebed695e2e4193db5e",
                "commit_url": "https://api.github.com/repos/octocat/Hello-World/commits/6dcb09b5b57875f334f61aebed695e2e4193db5e",
                "created_at": "2011-04-14T16:00:49Z", "performed_via_github_app": null,
                "label": {"name": "label", "color": "red"}}"#,
        )
        .unwrap();
        let e = e.into_event();
        assert_eq!(e.event, "closed");
        assert_eq!(e.actor.map(|a| a.login).as_deref(), Some("octocat"));
        assert_eq!(e.created_at, "2011-04-14T16:00:49Z");
        assert_eq!(e.label.map(|l| l.name).as_deref(), Some("label"));
        assert_eq!(
            e.commit_id.as_deref(),
            Some("6dcb09b5b57875f334f61aebed695e2e4193db5e")
        );
    }
}

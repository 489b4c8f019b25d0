//! A PR's issue events, as GitHub records them and `GET /repos/{o}/{r}/issues/{n}/events`
//! lists them (oldest first, `per_page` ≤ 100 and `page`): a label added (`labeled`, by the
//! builder's `label`/`labeled_by`), a force push ([`World::force_push`]:
//! `head_ref_force_pushed` with the new head's `commit_id`), and the PR closed, reopened or
//! merged by the builder (by the viewer).

use serde_json::{Value, json};

use super::Reply;
use super::rest::{message, not_found};
use super::world::{Time, World, timestamp};

/// One issue event on a PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueEvent {
    pub id: u64,
    /// `labeled`, `unlabeled`, `head_ref_force_pushed`, `closed`, `reopened`, `merged`.
    pub event: String,
    pub actor: String,
    pub at: Time,
    pub label: Option<String>,
    pub commit_id: Option<String>,
}

impl World {
    /// Records `event` on the PR now.
    pub fn record_issue_event(
        &mut self,
        repo: &str,
        number: u64,
        actor: &str,
        event: &str,
        (label, commit_id): (Option<&str>, Option<&str>),
    ) {
        let id = self.new_database_id();
        let at = self.now;
        self.get_pr_mut(repo, number).issue_events.push(IssueEvent {
            id,
            event: event.to_owned(),
            actor: actor.to_owned(),
            at,
            label: label.map(str::to_owned),
            commit_id: commit_id.map(str::to_owned),
        });
    }

    /// `login` force-pushes a new head commit in place of the PR's head (a rewritten last
    /// commit): GitHub records `head_ref_force_pushed` naming it. Returns the new sha.
    pub fn force_push(&mut self, repo: &str, number: u64, login: &str) -> String {
        let sha = self.push(repo, number, login);
        let pr = self.get_pr_mut(repo, number);
        let n = pr.commits.len();
        pr.commits.remove(n - 2);
        self.record_issue_event(
            repo,
            number,
            login,
            "head_ref_force_pushed",
            (None, Some(&sha)),
        );
        sha
    }
}

/// GitHub's issue-event item.
fn event_json(repo: &str, e: &IssueEvent) -> Value {
    let mut v = json!({
        "id": e.id,
        "node_id": format!("IE_{}", e.id),
        "url": format!("https://api.github.com/repos/{repo}/issues/events/{}", e.id),
        "actor": { "login": e.actor, "id": 1, "type": "User" },
        "event": e.event,
        "commit_id": e.commit_id,
        "commit_url": e.commit_id.as_ref().map(|c| format!("https://api.github.com/repos/{repo}/commits/{c}")),
        "created_at": timestamp(e.at),
        "performed_via_github_app": null,
    });
    if let Some(name) = &e.label {
        v["label"] = json!({ "name": name, "color": "ededed" });
    }
    v
}

/// `GET /repos/{o}/{r}/issues/{n}/events`.
pub fn list(world: &World, repo: &str, number: u64, params: &[(String, String)]) -> Reply {
    let doc = "https://docs.github.com/rest/issues/events#list-issue-events";
    let Some(pr) = world.repos.get(repo).and_then(|r| r.prs.get(&number)) else {
        return not_found();
    };
    let (mut per_page, mut page) = (30, 1);
    for (k, v) in params {
        let n = v.parse::<usize>().ok();
        match (k.as_str(), n) {
            ("per_page", Some(n @ 1..=100)) => per_page = n,
            ("page", Some(n @ 1..)) => page = n,
            _ => return message(422, &format!("Invalid {k}: {v}"), doc),
        }
    }
    let items: Vec<Value> = pr
        .issue_events
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|e| event_json(repo, e))
        .collect();
    Reply::json(200, &Value::Array(items))
}

//! A merge request's resource events, as GitLab records them and lists them
//! (`GET …/merge_requests/:iid/resource_label_events` and `…/resource_state_events`, oldest
//! first, paged): a label added or removed by the builder (`label`, `labeled_by`, `unlabel`),
//! the MR closed or reopened by the builder (by the viewer) and merged (by whoever merges it).

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::model::{World, stamp};

/// What a resource event records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceChange {
    /// A label added (`add`) or removed (`remove`).
    Label { name: String, add: bool },
    /// The MR's new state: `closed`, `reopened`, `merged`.
    State(String),
}

/// One resource event on an MR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEvent {
    pub id: u64,
    pub user: String,
    pub at: DateTime<Utc>,
    pub change: ResourceChange,
}

impl World {
    /// Records `change` on the MR by `user` now.
    pub fn record_resource_event(
        &mut self,
        key: &(String, u64),
        user: &str,
        change: ResourceChange,
    ) {
        let id = self.id();
        let at = self.now;
        self.mrs
            .get_mut(key)
            .expect("the MR exists")
            .resource_events
            .push(ResourceEvent {
                id,
                user: user.to_owned(),
                at,
                change,
            });
    }

    /// The MR's label events (`labels`) or state events, in GitLab's shape.
    pub(in super::super) fn resource_events_json(
        &self,
        key: &(String, u64),
        labels: bool,
    ) -> Vec<Value> {
        let mr = &self.mrs[key];
        mr.resource_events
            .iter()
            .filter_map(|e| {
                let mut v = json!({
                    "id": e.id,
                    "user": World::user_json(&e.user),
                    "created_at": stamp(e.at),
                    "resource_type": "MergeRequest",
                    "resource_id": mr.id,
                });
                match (&e.change, labels) {
                    (ResourceChange::Label { name, add }, true) => {
                        v["label"] = json!({
                            "id": name.bytes().map(u64::from).sum::<u64>(),
                            "name": name,
                            "color": "#34495E",
                            "description": "",
                        });
                        v["action"] = json!(if *add { "add" } else { "remove" });
                    }
                    (ResourceChange::State(state), false) => {
                        v["state"] = json!(state);
                        v["source_commit"] = Value::Null;
                        v["source_merge_request"] = Value::Null;
                    }
                    _ => return None,
                }
                Some(v)
            })
            .collect()
    }
}

//! `pr-monitor notify test`: one test message through every configured channel (email, Slack,
//! and each agent's delivery), sent at once rather than through the outbox, each outcome
//! reported per channel.

use serde::Serialize;
use serde_json::{Value, json};

use super::deliver;
use crate::config::Config;
use crate::model::Instant;
use crate::model::message::{Channel, NoticePayload};
use crate::store::{OutboxMessage, OutboxRow};

/// The subject of the owner's test message.
pub const TEST_SUBJECT: &str = "pr-monitor: test message";

/// What happened on one channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChannelResult {
    /// `email`, `slack` or `inbox:<agent>`.
    pub channel: String,
    pub ok: bool,
    pub error: Option<String>,
}

impl ChannelResult {
    /// `email: sent` or `slack: failed: …`.
    pub fn line(&self) -> String {
        match &self.error {
            None => format!("{}: sent", self.channel),
            Some(e) => format!("{}: failed: {e}", self.channel),
        }
    }
}

/// The owner notice sent to email and Slack.
pub fn test_notice(now: Instant) -> NoticePayload {
    let text = format!(
        "{TEST_SUBJECT}\nSent by `pr-monitor notify test` at {}. Notices about watched pull \
         requests will arrive here.\n",
        crate::model::stamp(now)
    );
    NoticePayload {
        subject: TEST_SUBJECT.to_owned(),
        text,
        kind: "test".to_owned(),
        failed_checks: Some(Vec::new()),
        ..NoticePayload::default()
    }
}

/// The agent message sent to each agent: the inbox message shape with `kind: "test"`.
pub fn test_agent_message(id: &str, agent: &str, now: Instant) -> Value {
    json!({
        "id": id,
        "created_at": crate::model::stamp(now),
        "from": "pr-monitor",
        "agent": agent,
        "kind": "test",
        "reason": null,
        "pr": null,
        "checks": [],
        "feedback": [],
        "body": format!(
            "A test message from `pr-monitor notify test`: there is nothing to fix. \
             Acknowledge it with `pr-monitor inbox done {id}`."
        ),
    })
}

/// A unique id for this run's test messages (from the real clock: ids must not repeat when
/// `--now` is fixed).
fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("test-{nanos}-{}", std::process::id())
}

/// Sends the test messages, email first, then Slack, then the agents by name.
pub fn send_all(config: &Config, now: Instant) -> Vec<ChannelResult> {
    let run = run_id();
    // A notice that could not be written is an empty payload: each channel then reports it.
    let notice = crate::model::message::to_json(&test_notice(now)).unwrap_or_default();
    let mut messages = Vec::new();
    for channel in config.notify.channels() {
        let channel = Channel::from(channel).to_string();
        let id = format!("{run}-{channel}");
        messages.push((channel, id, notice.clone()));
    }
    for name in config.agents.keys() {
        let id = format!("{run}-{name}");
        let payload = test_agent_message(&id, name, now).to_string();
        messages.push((Channel::Agent(name.clone()).to_string(), id, payload));
    }
    messages
        .into_iter()
        .map(|(channel, id, payload)| {
            let row = OutboxRow {
                message: OutboxMessage {
                    id,
                    pr: String::new(),
                    channel: channel.clone(),
                    kind: "test".to_owned(),
                    subject: TEST_SUBJECT.to_owned(),
                    payload,
                    created_at: now,
                },
                attempts: 0,
                delivered_at: None,
                last_error: None,
                permanent: false,
            };
            let error = deliver(config, &row).err().map(|e| e.message);
            ChannelResult {
                ok: error.is_none(),
                channel,
                error,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn lines_and_json_follow_the_command_output() {
        let ok = ChannelResult {
            channel: "email".into(),
            ok: true,
            error: None,
        };
        let bad = ChannelResult {
            channel: "slack".into(),
            ok: false,
            error: Some("Slack webhook answered HTTP 404".into()),
        };
        assert_eq!(ok.line(), "email: sent");
        assert_eq!(bad.line(), "slack: failed: Slack webhook answered HTTP 404");
        assert_eq!(
            serde_json::to_value([&ok, &bad]).unwrap(),
            json!([{"channel":"email","ok":true,"error":null},
                   {"channel":"slack","ok":false,"error":"Slack webhook answered HTTP 404"}])
        );
    }

    #[test]
    fn each_agent_gets_a_test_message_in_its_inbox() {
        let dir = tempfile::tempdir().unwrap();
        let yaml = format!(
            "agents:\n  fixer:\n    inbox: {}\n",
            dir.path().join("fixer").display()
        );
        let config = Config::parse(&yaml, &dir.path().join("c.yaml")).unwrap();
        let results = send_all(&config, chrono::Utc::now());
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].line(), "inbox:fixer: sent");
        let file = std::fs::read_dir(dir.path().join("fixer/new"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let msg: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(msg["kind"], "test");
        assert_eq!(msg["agent"], "fixer");
        assert_eq!(
            Path::new(&format!("{}.json", msg["id"].as_str().unwrap())),
            Path::new(file.file_name().unwrap())
        );
    }
}

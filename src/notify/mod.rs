//! Delivery of the durable outbox: agent inboxes, email and Slack. Transports only; the words
//! come from `report`, and deduplication lives in the decision and the outbox ids.
//!
//! A message is written to the outbox in the same transaction as the state change that caused
//! it and delivered after the commit. A crash between the two loses nothing (the next run
//! delivers it); a crash right after a delivery and before it is marked delivered resends that
//! one message, with the same id, which inbox files and webhooks use to drop the duplicate.

pub mod inbox;

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Result;

use crate::config::{AgentDelivery, Config};
use crate::store::{OutboxRow, Store};

/// Why a delivery failed, and whether trying again can help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryError {
    pub message: String,
    pub permanent: bool,
}

impl DeliveryError {
    pub fn temporary(message: impl Into<String>) -> Self {
        DeliveryError {
            message: message.into(),
            permanent: false,
        }
    }
    pub fn permanent(message: impl Into<String>) -> Self {
        DeliveryError {
            message: message.into(),
            permanent: true,
        }
    }
}

/// What one delivery pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Delivered {
    pub sent: usize,
    pub failed: Vec<(String, String)>,
}

fn real_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Seconds before the next try after `attempts` failures: 30 s, 1 min, 2 min … capped at 1 h.
pub fn backoff_secs(attempts: u32) -> i64 {
    (30_i64 << attempts.min(7)).min(3600)
}

/// Delivers one message through its channel.
pub fn deliver(config: &Config, row: &OutboxRow) -> Result<(), DeliveryError> {
    let m = &row.message;
    if let Some(agent) = m.channel.strip_prefix("inbox:") {
        let agent_config = config.agent(agent).map_err(DeliveryError::permanent)?;
        return match agent_config.delivery() {
            Some(AgentDelivery::Inbox(dir)) => inbox::write(dir, &m.id, &m.payload),
            Some(other) => Err(DeliveryError::permanent(format!(
                "agent `{agent}`: delivery {other:?} is not supported by this version"
            ))),
            None => Err(DeliveryError::permanent(format!(
                "agent `{agent}` has no inbox configured"
            ))),
        };
    }
    Err(DeliveryError::permanent(format!(
        "channel `{}` is not supported by this version",
        m.channel
    )))
}

/// Delivers every pending message that is due, recording each outcome.
pub fn deliver_pending(
    store: &mut Store,
    config: &Config,
    now: crate::model::Instant,
) -> Result<Delivered> {
    let mut report = Delivered::default();
    for row in store.pending_outbox(real_now())? {
        match deliver(config, &row) {
            Ok(()) => {
                store.mark_delivered(&row.message.id, now)?;
                report.sent += 1;
            }
            Err(e) => {
                let next = real_now() + backoff_secs(row.attempts);
                store.mark_failed(&row.message.id, &e.message, next, e.permanent)?;
                report.failed.push((row.message.id.clone(), e.message));
            }
        }
    }
    Ok(report)
}

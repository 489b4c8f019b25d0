//! Delivery of the durable outbox: agent inboxes, email and Slack. Transports only; the words
//! come from `report`, and deduplication lives in the decision and the outbox ids.
//!
//! A message is written to the outbox in the same transaction as the state change that caused
//! it and delivered after the commit. A crash between the two loses nothing (the next run
//! delivers it); a crash right after a delivery and before it is marked delivered resends that
//! one message, with the same id, which inbox files, email `Message-ID`s and webhook
//! `Idempotency-Key`s carry so the receiver can drop the duplicate.
//!
//! This module only dispatches on the channel and records outcomes; each transport lives in
//! its own module: [`email`], [`slack`], and [`agent`] (inbox folders, webhooks, commands).

pub mod agent;
pub mod email;
mod http;
pub mod inbox;
pub mod notice;
pub mod probe;
pub mod slack;

use anyhow::Result;

pub use agent::CommandRun;

use crate::config::Config;
use crate::model::PrRef;
use crate::model::message::{Channel, DigestItem, NoticePayload};
use crate::model::watch::HistoryEntry;
use crate::store::{OutboxRow, Store};

/// Why a delivery failed, and whether trying again can help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryError {
    pub message: String,
    pub permanent: bool,
    /// The receiver asked not to be tried again sooner than this many seconds (`Retry-After`).
    pub retry_after_secs: Option<u64>,
    /// The agent command that ran before the delivery failed, if one did.
    pub command_run: Option<CommandRun>,
}

impl DeliveryError {
    pub fn temporary(message: impl Into<String>) -> Self {
        DeliveryError {
            message: message.into(),
            permanent: false,
            retry_after_secs: None,
            command_run: None,
        }
    }
    pub fn permanent(message: impl Into<String>) -> Self {
        DeliveryError {
            message: message.into(),
            permanent: true,
            retry_after_secs: None,
            command_run: None,
        }
    }
    /// The same error, asking for the next attempt no sooner than `secs` from now.
    #[must_use]
    pub fn retry_after(mut self, secs: Option<u64>) -> Self {
        self.retry_after_secs = secs;
        self
    }
    /// The same error, carrying the agent command run that ended in it.
    #[must_use]
    pub fn with_run(mut self, run: CommandRun) -> Self {
        self.command_run = Some(run);
        self
    }
}

/// What one successful delivery did, besides delivering.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The agent command that took the message, for the PR's history.
    pub command_run: Option<CommandRun>,
}

/// What one delivery pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Delivered {
    pub sent: usize,
    pub failed: Vec<(String, String)>,
    /// Messages a command agent failed [`COMMAND_AGENT_TRIES`] times: not tried again, and the
    /// owner is to be told.
    pub gave_up: Vec<GaveUp>,
}

/// Runs of a command agent on one message before it is not tried again.
pub const COMMAND_AGENT_TRIES: u32 = 3;

/// A message a command agent kept failing on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GaveUp {
    /// The PR's address, as the outbox row has it.
    pub pr: String,
    pub agent: String,
    pub attempts: u32,
    pub error: String,
}

fn real_now() -> i64 {
    crate::clock::wall_secs()
}

/// The longest `Retry-After` honoured (a day): a receiver cannot park a message for ever.
pub const MAX_RETRY_AFTER_SECS: u64 = 86_400;

/// Seconds before the next try after a failure. A message that could not be delivered is
/// retried at every later run (within the daemon, at least every `poll_sec`): the runs are the
/// back-off. Only a receiver's `Retry-After` holds it back longer (up to
/// [`MAX_RETRY_AFTER_SECS`]).
pub fn retry_delay_secs(error: &DeliveryError) -> i64 {
    error.retry_after_secs.map_or(0, |s| {
        i64::try_from(s.min(MAX_RETRY_AFTER_SECS)).unwrap_or(i64::MAX)
    })
}

/// Delivers one message through its channel (a row whose channel this version does not know
/// can never be delivered: permanent).
pub fn deliver(config: &Config, row: &OutboxRow) -> Result<Sent, DeliveryError> {
    deliver_in_thread(config, row, None)
}

/// [`deliver`], an email in the thread of outbox message `thread` (the PR's first email).
fn deliver_in_thread(
    config: &Config,
    row: &OutboxRow,
    thread: Option<&str>,
) -> Result<Sent, DeliveryError> {
    let m = &row.message;
    let not_configured =
        |what: &str| DeliveryError::permanent(format!("channel `{what}` is not configured"));
    match m.channel.parse().map_err(DeliveryError::permanent)? {
        Channel::Email => {
            let email = config
                .notify
                .email
                .as_ref()
                .ok_or_else(|| not_configured("email"))?;
            email::send(email, &m.id, &m.payload, thread).map(|()| Sent::default())
        }
        Channel::Slack => {
            let slack = config
                .notify
                .slack
                .as_ref()
                .ok_or_else(|| not_configured("slack"))?;
            slack::send(slack, &m.id, &m.payload).map(|()| Sent::default())
        }
        Channel::Agent(name) => {
            let agent_config = config.agent(&name).map_err(DeliveryError::permanent)?;
            agent::deliver(&name, agent_config, &m.id, &m.payload)
        }
    }
}

/// Owner notices from one tick on one channel beyond this many go out as one digest.
pub const DIGEST_AFTER: usize = 5;

/// One digest message standing for `rows` (owner notices of one channel from one tick). A
/// member whose payload cannot be read is listed by its subject alone.
pub fn digest(rows: &[OutboxRow]) -> serde_json::Result<OutboxRow> {
    let first = &rows[0].message;
    let ids: Vec<&str> = rows.iter().map(|r| r.message.id.as_str()).collect();
    let subject = format!("pr-monitor: {} pull requests changed", rows.len());
    let mut text = format!("{subject}\n\n");
    let mut items = Vec::new();
    for r in rows {
        let member: NoticePayload = serde_json::from_str(&r.message.payload).unwrap_or_default();
        let url = member.url.unwrap_or_default();
        let title = member.title.unwrap_or_default();
        let done = member.done.unwrap_or_default();
        text.push_str(&format!("- {}  {url}\n", r.message.subject));
        for line in [&title, &done].into_iter().filter(|l| !l.is_empty()) {
            text.push_str(&format!("  {}\n", crate::core::text::one_line(line)));
        }
        items.push(DigestItem {
            subject: r.message.subject.clone(),
            url,
            title,
            done,
        });
    }
    let payload = NoticePayload {
        subject: subject.clone(),
        text,
        kind: "digest".to_owned(),
        items,
        ..NoticePayload::default()
    };
    Ok(OutboxRow {
        message: crate::store::OutboxMessage {
            id: format!("digest-{}", &crate::core::hash::fnv64(&ids.join(","))[..12]),
            pr: first.pr.clone(),
            channel: first.channel.clone(),
            kind: "digest".into(),
            subject,
            payload: crate::model::message::to_json(&payload)?,
            created_at: first.created_at,
        },
        attempts: rows.iter().map(|r| r.attempts).max().unwrap_or(0),
        delivered_at: None,
        last_error: None,
        permanent: false,
    })
}

/// Groups the pending rows: a tick's owner notices on one channel beyond [`DIGEST_AFTER`]
/// become one digest; everything else goes alone. Each group is (what to send, the rows it
/// stands for).
fn batches(rows: Vec<OutboxRow>) -> Vec<(OutboxRow, Vec<OutboxRow>)> {
    let mut groups: Vec<((String, crate::model::Instant), Vec<OutboxRow>)> = Vec::new();
    let mut single = Vec::new();
    for row in rows {
        let owner = row
            .message
            .channel
            .parse::<Channel>()
            .is_ok_and(|c| c.is_owner());
        if !owner {
            single.push(row);
            continue;
        }
        let key = (row.message.channel.clone(), row.message.created_at);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(row),
            None => groups.push((key, vec![row])),
        }
    }
    let mut out: Vec<(OutboxRow, Vec<OutboxRow>)> =
        single.into_iter().map(|r| (r.clone(), vec![r])).collect();
    for (_, group) in groups {
        let digest = (group.len() > DIGEST_AFTER)
            .then(|| digest(&group))
            .and_then(Result::ok);
        if let Some(digest) = digest {
            out.push((digest, group));
        } else {
            out.extend(group.into_iter().map(|r| (r.clone(), vec![r])));
        }
    }
    out
}

/// How long a run's claim on the messages it is delivering lasts: a run that dies mid-delivery
/// leaves them to the next run on its host at once (its process is gone), else to be retried
/// after this; no other run sends them before.
const CLAIM_SECS: i64 = 600;

/// Delivers every pending message that is due, recording each outcome, and an agent command's
/// run in the PR's history. Many owner notices from one tick on one channel go as a digest.
pub fn deliver_pending(
    store: &mut Store,
    config: &Config,
    now: crate::model::Instant,
) -> Result<Delivered> {
    let mut report = Delivered::default();
    let hosts = config.forge_hosts();
    let mut unrecorded = Vec::new();
    let claimed = store.claim_outbox(
        real_now(),
        real_now().saturating_add(CLAIM_SECS),
        &crate::holder::Holder::new_run(),
        &crate::holder::Holder::gone_here,
    )?;
    for (send, members) in batches(claimed) {
        let thread = thread_of(store, &send)?;
        let outcome = deliver_in_thread(config, &send, thread.as_deref());
        let run = match &outcome {
            Ok(sent) => sent.command_run.clone(),
            Err(e) => e.command_run.clone(),
        };
        if outcome.is_ok() {
            let ids: Vec<&str> = members.iter().map(|r| r.message.id.as_str()).collect();
            store.mark_delivered(&ids, now)?;
            report.sent += 1;
        }
        if let Err(e) = &outcome {
            for row in &members {
                record_failure(store, row, e, &mut report)?;
            }
        }
        let Some(run) = run else { continue };
        // A branch's message names no PR: there is no watch to record the agent's run on.
        if send.message.kind == crate::model::message::BRANCH_FAILURE {
            continue;
        }
        // The PR reads back through the configured hosts; one that does not (a damaged row)
        // leaves the agent's run unrecorded, and its next commit would read as someone
        // else's: said, once every message is delivered.
        match PrRef::parse_on(&send.message.pr, &hosts) {
            Err(e) => unrecorded.push(format!(
                "message `{}`: its PR `{}` does not read back ({e})",
                send.message.id, send.message.pr
            )),
            Ok(pr) => record_run(store, &pr, &run, now)?,
        }
    }
    if !unrecorded.is_empty() {
        anyhow::bail!("an agent's run was not recorded: {}", unrecorded.join("; "));
    }
    Ok(report)
}

/// A message not delivered: retried after the error's delay, or never when it is permanent or
/// an agent's command failed [`COMMAND_AGENT_TRIES`] times (then the owner hears who gave up).
fn record_failure(
    store: &mut Store,
    row: &OutboxRow,
    e: &DeliveryError,
    report: &mut Delivered,
) -> Result<()> {
    let next = real_now().saturating_add(retry_delay_secs(e));
    let attempts = row.attempts.saturating_add(1);
    let agent = match row.message.channel.parse::<Channel>() {
        Ok(Channel::Agent(name)) => Some(name),
        _ => None,
    };
    let gave_up = agent
        .filter(|_| e.command_run.is_some() && !e.permanent)
        .filter(|_| attempts >= COMMAND_AGENT_TRIES);
    let error = if gave_up.is_some() {
        format!("{} (failed {attempts} times: not tried again)", e.message)
    } else {
        e.message.clone()
    };
    store.mark_failed(
        &[row.message.id.as_str()],
        &error,
        next,
        e.permanent || gave_up.is_some(),
    )?;
    if let Some(agent) = gave_up {
        report.gave_up.push(GaveUp {
            pr: row.message.pr.clone(),
            agent,
            attempts,
            error: e.message.clone(),
        });
    }
    report.failed.push((row.message.id.clone(), error));
    Ok(())
}

/// The first email about the PR an email is about, which it answers; none for a digest (about
/// many PRs) or a message about none.
fn thread_of(store: &Store, row: &OutboxRow) -> Result<Option<String>> {
    let m = &row.message;
    if m.kind == "digest" || m.pr.is_empty() || m.channel.parse::<Channel>() != Ok(Channel::Email) {
        return Ok(None);
    }
    store.thread_root(&m.pr, &m.channel)
}

/// Records an agent command's run: in the watch's memory (its next commit is the agent's)
/// and in the PR's history.
fn record_run(
    store: &mut Store,
    pr: &PrRef,
    run: &CommandRun,
    now: crate::model::Instant,
) -> Result<()> {
    if let Some(watch) = store.watch(pr)? {
        let (started, ended) = (run.started.into(), run.ended.into());
        store.update_memory(watch.id, |m| {
            crate::core::memory::agent_ran(m, started, ended);
        })?;
    }
    store.log(
        pr,
        &[HistoryEntry {
            at: now,
            what: run.describe(),
            why: None,
        }],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_retry_after_holds_a_message_back() {
        let plain = DeliveryError::temporary("busy");
        assert_eq!(retry_delay_secs(&plain), 0, "retried at the next run");
        assert_eq!(
            retry_delay_secs(&plain.clone().retry_after(Some(7200))),
            7200
        );
        assert_eq!(retry_delay_secs(&plain.retry_after(Some(u64::MAX))), 86_400);
    }
}

//! The durable outbox: messages queued in the tick's transaction or by owner commands, claimed
//! by one run at a time, and their delivery record.

use anyhow::Result;
use rusqlite::{OptionalExtension as _, Row, TransactionBehavior, params};

use super::{Store, parse_ts, ts};
use crate::holder::Holder;
use crate::model::Instant;
use crate::secrets;

/// A message waiting in the durable outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxMessage {
    /// The idempotency id: inserting the same id twice keeps one message.
    pub id: String,
    pub pr: String,
    /// A [`crate::model::message::Channel`] as the column holds it: `email`, `slack`, `inbox:<agent>`.
    pub channel: String,
    pub kind: String,
    pub subject: String,
    /// The message itself, as JSON the channel understands.
    pub payload: String,
    pub created_at: Instant,
}

/// An outbox row with its delivery record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub message: OutboxMessage,
    pub attempts: u32,
    pub delivered_at: Option<Instant>,
    pub last_error: Option<String>,
    pub permanent: bool,
}

pub(super) fn insert_outbox(tx: &rusqlite::Connection, messages: &[OutboxMessage]) -> Result<()> {
    for m in messages {
        tx.prepare_cached(
            "INSERT INTO outbox (id, pr, channel, kind, subject, payload, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING",
        )?
        .execute(params![
            m.id,
            m.pr,
            m.channel,
            m.kind,
            secrets::mask(&m.subject),
            secrets::mask(&m.payload),
            ts(m.created_at)
        ])?;
    }
    Ok(())
}

fn outbox_from_row(r: &Row<'_>) -> rusqlite::Result<OutboxRow> {
    Ok(OutboxRow {
        message: OutboxMessage {
            id: r.get("id")?,
            pr: r.get("pr")?,
            channel: r.get("channel")?,
            kind: r.get("kind")?,
            subject: r.get("subject")?,
            payload: r.get("payload")?,
            created_at: parse_ts(r.get("created_at")?).unwrap_or_default(),
        },
        attempts: r.get("attempts")?,
        delivered_at: parse_ts(r.get("delivered_at")?),
        last_error: r.get("last_error")?,
        permanent: r.get("permanent")?,
    })
}

impl Store {
    /// Queues messages outside a tick (owner commands), idempotently by id.
    pub fn enqueue(&mut self, messages: &[OutboxMessage]) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        insert_outbox(&tx, messages)?;
        tx.commit()?;
        Ok(())
    }

    /// Undelivered messages whose next attempt is due by `real_now` (epoch seconds), oldest first.
    pub fn pending_outbox(&self, real_now: i64) -> Result<Vec<OutboxRow>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT * FROM outbox WHERE delivered_at IS NULL AND permanent = 0 AND next_attempt <= ?1 ORDER BY created_at, rowid",
        )?;
        let rows = stmt.query_map([real_now], outbox_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Claims for `holder` the undelivered messages due by `real_now` (epoch seconds), and
    /// those claimed by a run `gone` says has ended, and returns them, oldest first. The claim
    /// names its holder and pushes each row's next attempt to `claim_until` in the same write
    /// transaction that selects it, so a second run started beside this one finds nothing to
    /// send; delivery then records the outcome (delivered, or the next attempt after a failure)
    /// and clears the claim. A run that dies holding a claim leaves its rows to the next run on
    /// its host at once, else to be retried once `claim_until` has passed.
    pub fn claim_outbox(
        &mut self,
        real_now: i64,
        claim_until: i64,
        holder: &Holder,
        gone: &dyn Fn(&Holder) -> bool,
    ) -> Result<Vec<OutboxRow>> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let claimants: Vec<String> = {
            let mut stmt = tx.prepare_cached(
                "SELECT DISTINCT claim_owner FROM outbox
                 WHERE delivered_at IS NULL AND permanent = 0 AND claim_owner IS NOT NULL AND next_attempt > ?1",
            )?;
            let rows = stmt.query_map([real_now], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let orphaned: Vec<String> = claimants
            .into_iter()
            .filter(|key| Holder::parse(key).is_some_and(|h| gone(&h)))
            .collect();
        let orphaned = serde_json::to_string(&orphaned)?;
        let due = "delivered_at IS NULL AND permanent = 0
                   AND (next_attempt <= ?1 OR claim_owner IN (SELECT value FROM json_each(?2)))";
        let rows: Vec<OutboxRow> = {
            let mut stmt = tx.prepare(&format!(
                "SELECT * FROM outbox WHERE {due} ORDER BY created_at, rowid"
            ))?;
            let rows = stmt.query_map(params![real_now, orphaned], outbox_from_row)?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        tx.execute(
            &format!("UPDATE outbox SET next_attempt = ?3, claim_owner = ?4 WHERE {due}"),
            params![real_now, orphaned, claim_until, holder.key()],
        )?;
        tx.commit()?;
        Ok(rows)
    }

    /// The id of the first message about `pr` on `channel` that was delivered or may still be
    /// (not given up on): the thread every later message about that PR answers.
    pub fn thread_root(&self, pr: &str, channel: &str) -> Result<Option<String>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM outbox WHERE pr = ?1 AND channel = ?2
               AND (delivered_at IS NOT NULL OR permanent = 0)
             ORDER BY created_at, rowid LIMIT 1",
        )?;
        Ok(stmt
            .query_row(params![pr, channel], |r| r.get(0))
            .optional()?)
    }

    /// Every message that failed and is not delivered (kept, visible, retried unless permanent).
    pub fn outbox_problems(&self) -> Result<Vec<OutboxRow>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT * FROM outbox WHERE delivered_at IS NULL AND last_error IS NOT NULL ORDER BY created_at, rowid",
        )?;
        let rows = stmt.query_map([], outbox_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    ///
    /// `ids` are the messages one delivery stood for (one message, or a digest's members),
    /// marked in one transaction: a run killed while marking leaves all of them marked or
    /// none, so a digest is never sent again in part under another id.
    pub fn mark_delivered(&mut self, ids: &[&str], at: Instant) -> Result<()> {
        let tx = self.conn.transaction()?;
        for id in ids {
            tx.prepare_cached(
                "UPDATE outbox SET delivered_at = ?2, attempts = attempts + 1, last_error = NULL, claim_owner = NULL WHERE id = ?1",
            )?
            .execute(params![id, ts(at)])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Records a failed attempt for the messages one delivery stood for, in one transaction:
    /// retried from `next_attempt` (epoch seconds), or never if permanent.
    pub fn mark_failed(
        &mut self,
        ids: &[&str],
        error: &str,
        next_attempt: i64,
        permanent: bool,
    ) -> Result<()> {
        let error = secrets::mask(error);
        let tx = self.conn.transaction()?;
        for id in ids {
            tx.prepare_cached(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?2, next_attempt = ?3, permanent = ?4, claim_owner = NULL WHERE id = ?1",
            )?
            .execute(params![id, error, next_attempt, permanent])?;
        }
        tx.commit()?;
        Ok(())
    }
}

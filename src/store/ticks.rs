//! One tick's hold on a watch and its outcome: the lease (taken, taken over from a gone
//! holder, or held), and the one transaction that records what the tick decided (or that the
//! watch was deferred for budget, unread) and releases the lease.

use anyhow::{Context, Result};
use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params};

use super::outbox::{OutboxMessage, insert_outbox};
use super::watches::insert_history;
use super::{Store, intents, ts};
use crate::core::memory;
use crate::holder::Holder;
use crate::model::watch::{BudgetDeferral, HistoryEntry, Memory, Watch, WatchStatus};
use crate::model::{ForgeKind, Instant, PrRef};
use crate::secrets;

/// Proof that this process holds a PR's lease: only [`Store::lease`] makes one, and
/// [`Store::record`] requires it.
#[derive(Debug)]
pub struct Lease {
    watch_id: i64,
    owner: String,
}

/// What asking for a lease gave.
#[derive(Debug)]
pub enum Leased {
    /// The lease was free (or expired, or already this run's).
    Taken(Lease),
    /// The lease was held by a run whose process is gone; it is this run's now.
    TakenOver(Lease, Holder),
    /// Another run holds it (named, when its lease names its holder).
    Held(Option<Holder>),
}

/// What one tick decided for one PR, written atomically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TickRecord {
    pub status: WatchStatus,
    pub next_tick_at: Option<Instant>,
    pub last_tick_at: Instant,
    pub last_error: Option<String>,
    pub history: Vec<HistoryEntry>,
    /// Items now handled: (source, id, updated_at).
    pub seen: Vec<crate::model::plan::SeenMark>,
    /// Messages caused by this tick, delivered after the commit.
    pub outbox: Vec<OutboxMessage>,
    /// The intents this tick's read reconciled (see [`crate::model::intent`]).
    pub resolved_intents: Vec<i64>,
}

impl TickRecord {
    /// A tick at `at` that leaves `status` and nothing else: no next tick, error, history,
    /// seen items, messages or reconciled intents (a failed tick adds its error and history).
    pub fn bare(status: WatchStatus, at: Instant) -> TickRecord {
        TickRecord {
            status,
            next_tick_at: None,
            last_tick_at: at,
            last_error: None,
            history: vec![],
            seen: vec![],
            outbox: vec![],
            resolved_intents: vec![],
        }
    }
}

impl TickRecord {
    /// Whether this record changes nothing of `before` (the watch as its tick read it) but
    /// when it was ticked and is next due: the same status and error, and no history, seen
    /// items, messages or reconciled intents. [`Store::record_times`] writes such a record;
    /// [`Store::record`] would write the same, and over an edit made while the tick ran
    /// (`watch arm`, an agent's run) it would write the status the tick read.
    pub fn only_times(&self, before: &Watch) -> bool {
        self.status == before.status
            && self.last_error == before.last_error
            && self.history.is_empty()
            && self.seen.is_empty()
            && self.outbox.is_empty()
            && self.resolved_intents.is_empty()
    }
}

/// The watch `watch` becomes once `rec` is recorded over its row, as the next load reads it,
/// with that row's digest (see [`super::watches::read_back`]); `None` when it would not read
/// back whole, or `watch` was not read from the database. It is the row the next load reads
/// only if nothing else writes the row between.
pub(crate) fn as_recorded(watch: &Watch, rec: &TickRecord) -> Option<Watch> {
    let values = recorded_values(rec, &rec.status.memory).ok()?;
    super::watches::read_back(watch, &values)
}

/// The values [`Store::record`] writes for `rec` with `memory`, one per column of the watch row
/// from [`super::watches::RECORDED_FROM`] on, in order: what the next load of the row reads.
pub(super) fn recorded_values(rec: &TickRecord, memory: &Memory) -> Result<Vec<Value>> {
    let s = &rec.status;
    let text = |t: Option<String>| t.map_or(Value::Null, Value::Text);
    let flag = |b: bool| Value::Integer(i64::from(b));
    let (pill_ci, pill_ci_fixing) = s.pills.ci.flags();
    let (merge_armed, merge_via, armed_at) = s.merge.columns();
    Ok(vec![
        Value::Text(s.state.as_str().to_owned()),
        text(secrets::mask_opt(s.title.as_deref())),
        text(s.head_sha.as_ref().map(|h| h.as_str().to_owned())),
        text(s.head_seen_at.map(ts)),
        text(secrets::mask_opt(s.head_ref.as_deref())),
        text(secrets::mask_opt(s.base_ref.as_deref())),
        flag(pill_ci),
        flag(pill_ci_fixing),
        flag(s.pills.cnf),
        Value::Integer(i64::from(s.pills.cmt)),
        text(s.why.map(|w| w.as_str().to_owned())),
        Value::Integer(i64::from(s.attempts)),
        flag(merge_armed),
        text(merge_via.map(|v| v.as_str().to_owned())),
        text(armed_at.map(ts)),
        Value::Text(serde_json::to_string(memory)?),
        text(rec.next_tick_at.map(ts)),
        Value::Text(ts(rec.last_tick_at)),
        text(secrets::mask_opt(rec.last_error.as_deref())),
    ])
}

/// The address of the watch `owner` holds the lease on, as its history and seen rows name it.
fn leased_url(tx: &rusqlite::Connection, watch_id: i64, owner: &str) -> Result<String> {
    let row: Option<(String, String, i64)> = tx
        .prepare_cached(
            "SELECT forge, repo, number FROM watches WHERE id = ?1 AND lease_owner = ?2",
        )?
        .query_row(params![watch_id, owner], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .optional()?;
    let (forge, repo, number) =
        row.context("the watch's lease was lost (removed, or taken by another run)")?;
    let forge = forge.parse::<ForgeKind>().map_err(anyhow::Error::msg)?;
    Ok(PrRef {
        forge,
        repo,
        number: u64::try_from(number)?,
    }
    .url())
}

impl Store {
    /// Takes the lease on a watch for `secs` of real time for `holder`, unless another run holds
    /// it. A lease whose holder `gone` says has ended (its process is gone) is taken over at
    /// once, in one statement that checks it is still that holder's; any other held lease waits
    /// for its expiry.
    pub fn lease(
        &mut self,
        watch_id: i64,
        holder: &Holder,
        secs: i64,
        gone: &dyn Fn(&Holder) -> bool,
    ) -> Result<Leased> {
        let real_now = crate::clock::wall_secs();
        let owner = holder.key();
        let taken = self
            .conn
            .prepare_cached(
                "UPDATE watches SET lease_owner = ?2, lease_until = ?3
             WHERE id = ?1 AND (lease_until IS NULL OR lease_until < ?4 OR lease_owner = ?2)",
            )?
            .execute(params![watch_id, owner, real_now + secs, real_now])?
            == 1;
        let lease = Lease {
            watch_id,
            owner: owner.clone(),
        };
        if taken {
            return Ok(Leased::Taken(lease));
        }
        let current: Option<String> = self
            .conn
            .prepare_cached("SELECT lease_owner FROM watches WHERE id = ?1")?
            .query_row([watch_id], |r| r.get(0))
            .optional()?
            .flatten();
        let Some((key, other)) = current.and_then(|k| Holder::parse(&k).map(|h| (k, h))) else {
            return Ok(Leased::Held(None));
        };
        if !gone(&other) {
            return Ok(Leased::Held(Some(other)));
        }
        let taken_over = self.conn.prepare_cached(
            "UPDATE watches SET lease_owner = ?2, lease_until = ?3 WHERE id = ?1 AND lease_owner = ?4")?
.execute(
            params![watch_id, owner, real_now + secs, key],
        )? == 1;
        Ok(if taken_over {
            Leased::TakenOver(lease, other)
        } else {
            Leased::Held(None)
        })
    }

    /// Takes the leases on `watch_ids` as [`Store::lease`] does, in id order: those free (or
    /// expired, or already this run's) in one statement, then each of the others as
    /// [`Store::lease`] would (taken over from a gone holder, or held).
    pub fn lease_all(
        &mut self,
        watch_ids: &[i64],
        holder: &Holder,
        secs: i64,
        gone: &dyn Fn(&Holder) -> bool,
    ) -> Result<Vec<(i64, Leased)>> {
        let real_now = crate::clock::wall_secs();
        let owner = holder.key();
        let taken: std::collections::BTreeSet<i64> = self
            .conn
            .prepare_cached(
                "UPDATE watches SET lease_owner = ?2, lease_until = ?3
                 WHERE id IN (SELECT value FROM json_each(?1))
                   AND (lease_until IS NULL OR lease_until < ?4 OR lease_owner = ?2)
                 RETURNING id",
            )?
            .query_map(
                params![
                    serde_json::to_string(watch_ids)?,
                    owner,
                    real_now + secs,
                    real_now
                ],
                |r| r.get(0),
            )?
            .collect::<rusqlite::Result<_>>()?;
        watch_ids
            .iter()
            .map(|&id| {
                let leased = if taken.contains(&id) {
                    Leased::Taken(Lease {
                        watch_id: id,
                        owner: owner.clone(),
                    })
                } else {
                    self.lease(id, holder, secs, gone)?
                };
                Ok((id, leased))
            })
            .collect()
    }

    /// The leases held now (by the wall clock) by runs that name their holder: watch id and
    /// holder, by watch id.
    pub fn held(&self) -> Result<Vec<(i64, Holder)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, lease_owner FROM watches WHERE lease_owner IS NOT NULL AND lease_until >= ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([crate::clock::wall_secs()], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?;
        let rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, key)| Holder::parse(&key).map(|h| (id, h)))
            .collect())
    }

    /// Writes one tick's outcome for the leased watch, and releases the lease, in one transaction.
    /// Of the memory, only what the tick changed from the memory it `read` is written: edits
    /// made while it ran (an agent's run, `inbox done`) stay ([`memory::ticked`]).
    pub fn record(&mut self, lease: Lease, read: &Memory, rec: &TickRecord) -> Result<()> {
        let Lease { watch_id, owner } = lease;
        let tx = self.atomic()?;
        let url = leased_url(&tx, watch_id, &owner)?;
        let stored: String = tx
            .prepare_cached("SELECT memory FROM watches WHERE id = ?1")?
            .query_row([watch_id], |r| r.get(0))?;
        let memory = match serde_json::from_str::<Memory>(&stored) {
            Ok(stored) => memory::ticked(read, &rec.status.memory, &stored)?,
            // Unreadable now: the tick's memory replaces it, as before.
            Err(_) => rec.status.memory.clone(),
        };
        let values = recorded_values(rec, &memory)?;
        tx.prepare_cached(
            "UPDATE watches SET state = ?2, title = ?3, head_sha = ?4, head_seen_at = ?5, head_ref = ?6,
                    base_ref = ?7, pill_ci = ?8, pill_ci_fixing = ?9, pill_cnf = ?10, pill_cmt = ?11,
                    why = ?12, attempts = ?13, merge_armed = ?14, merge_via = ?15, armed_at = ?16,
                    memory = ?17, next_tick_at = ?18, last_tick_at = ?19, last_error = ?20,
                    cross_repository = ?21, lease_owner = NULL, lease_until = NULL
             WHERE id = ?1")?
        .execute(rusqlite::params_from_iter(
            std::iter::once(Value::Integer(watch_id))
                .chain(values)
                .chain([Value::Integer(i64::from(memory.cross_repository))]),
        ))?;
        insert_history(&tx, &url, &rec.history)?;
        insert_outbox(&tx, &rec.outbox)?;
        intents::resolve(&tx, watch_id, &rec.resolved_intents, rec.last_tick_at)?;
        for crate::model::plan::SeenMark {
            source,
            id,
            updated_at: updated,
        } in &rec.seen
        {
            tx.prepare_cached(
                "INSERT INTO seen (pr, source, item_id, updated_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (pr, source, item_id) DO UPDATE SET updated_at = excluded.updated_at",
            )?
            .execute(params![url, source.as_str(), id, updated])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Records ticks that changed nothing of their watches but when they were ticked
    /// ([`TickRecord::only_times`]): each watch's next and last tick, its lease released; all
    /// in one statement. One result per lease, in order: an error where the lease was lost (the
    /// watch removed, or taken by another run), as [`Store::record`] would give.
    pub fn record_times(&mut self, ticked: Vec<(Lease, &TickRecord)>) -> Result<Vec<Result<()>>> {
        let rows: Vec<(i64, &str, Option<String>, String)> = ticked
            .iter()
            .map(|(lease, rec)| {
                (
                    lease.watch_id,
                    lease.owner.as_str(),
                    rec.next_tick_at.map(ts),
                    ts(rec.last_tick_at),
                )
            })
            .collect();
        let recorded: std::collections::BTreeSet<i64> = self
            .conn
            .prepare_cached(
                "UPDATE watches SET next_tick_at = t.next_tick_at, last_tick_at = t.last_tick_at,
                        lease_owner = NULL, lease_until = NULL
                 FROM (SELECT value ->> 0 AS id, value ->> 1 AS owner,
                              value ->> 2 AS next_tick_at, value ->> 3 AS last_tick_at
                       FROM json_each(?1)) AS t
                 WHERE watches.id = t.id AND watches.lease_owner = t.owner
                 RETURNING watches.id",
            )?
            .query_map([serde_json::to_string(&rows)?], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ticked
            .into_iter()
            .map(|(lease, _)| {
                if recorded.contains(&lease.watch_id) {
                    Ok(())
                } else {
                    Err(anyhow::anyhow!(
                        "the watch's lease was lost (removed, or taken by another run)"
                    ))
                }
            })
            .collect())
    }

    /// Writes only the failure of a tick on a watch whose stored row cannot be read in full
    /// ([`Watch::unreadable`]): `last_error`, the times and the history. The rest of the row
    /// is left as it is, for the owner to look at.
    pub fn record_failure(&mut self, lease: Lease, rec: &TickRecord) -> Result<()> {
        let Lease { watch_id, owner } = lease;
        let tx = self.atomic()?;
        let url = leased_url(&tx, watch_id, &owner)?;
        tx.prepare_cached(
            "UPDATE watches SET next_tick_at = ?2, last_tick_at = ?3, last_error = ?4,
                    lease_owner = NULL, lease_until = NULL
             WHERE id = ?1",
        )?
        .execute(params![
            watch_id,
            rec.next_tick_at.map(ts),
            ts(rec.last_tick_at),
            secrets::mask_opt(rec.last_error.as_deref())
        ])?;
        insert_history(&tx, &url, &rec.history)?;
        tx.commit()?;
        Ok(())
    }

    /// Pushes a leased watch past the forge's rate-limit reset without reading it: its next
    /// tick at `deferral.until`, the deferral kept in its memory (for `status`), `history`
    /// added; the lease is released. Nothing else of the watch changes.
    pub fn defer(
        &mut self,
        lease: Lease,
        deferral: &BudgetDeferral,
        history: &[HistoryEntry],
    ) -> Result<()> {
        let Lease { watch_id, owner } = lease;
        let tx = self.atomic()?;
        let url = leased_url(&tx, watch_id, &owner)?;
        tx.prepare_cached(
            "UPDATE watches SET next_tick_at = ?2,
                    memory = json_set(memory, '$.budget_deferral', json(?3)),
                    lease_owner = NULL, lease_until = NULL
             WHERE id = ?1",
        )?
        .execute(params![
            watch_id,
            ts(deferral.until),
            secrets::mask(&serde_json::to_string(deferral)?)
        ])?;
        insert_history(&tx, &url, history)?;
        tx.commit()?;
        Ok(())
    }

    /// Gives a lease back without recording anything (a dry run, or a run that stops early).
    pub fn release(&mut self, lease: Lease) -> Result<()> {
        let Lease { watch_id, owner } = lease;
        self.conn.prepare_cached(
            "UPDATE watches SET lease_owner = NULL, lease_until = NULL WHERE id = ?1 AND lease_owner = ?2")?
.execute(
            params![watch_id, owner],
        )?;
        Ok(())
    }
}

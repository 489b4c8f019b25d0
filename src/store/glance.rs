//! A group's due watches at a glance: the compact row a summary read and a settled decision
//! need (the PR, its job and agent, the branches a full read compares, the row's digest),
//! read without parsing the row's status or `memory` (whether the PR is a fork's, which the
//! branches depend on, is `memory`'s flag, written beside it in a column of its own); and the
//! ticks of settled watches recorded in one statement, again without reading their rows.
//!
//! Recording a settled chunk is optimistic, in one `UPDATE`: it takes no lease first. A row
//! is written only where no other live run holds its lease (an expired lease or this run's
//! own is free) and its digest is still the one the run loaded, so a row another run or a
//! command changed since, or one a run holds now, is left as it is and the caller ticks it
//! the full way (which leases it, counts it held, or decides it again). The statement
//! clears the lease as a recorded tick does; it is atomic, so no run sees a half-recorded
//! chunk, and holding a lease between the check and the write would only add two
//! statements and a commit for the same guarantee.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use anyhow::Result;
use rusqlite::functions::FunctionFlags;
use rusqlite::params;
use rusqlite::types::ValueRef;

use super::Store;
use super::int::{Uint, signed, unsigned};
use super::reads::{KeptHints, hint_columns, hints_from};
use super::watches::{RECORDED_FROM, TICK_TIMES, WATCH_COLUMNS, digest_value};
use crate::holder::Holder;
use crate::model::{ForgeKind, Instant, PrRef, PrState};

/// A due watch as a group loads it before its summaries are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glance {
    pub id: i64,
    pub pr: PrRef,
    pub job: Option<String>,
    pub agent: Option<String>,
    pub auto_fix: Option<bool>,
    /// The base and head branches a full read may compare (`None` for a fork's, whose
    /// branch name means nothing in the base, or when either is unknown).
    pub branches: Option<(String, String)>,
    /// The digest of its row ([`crate::model::watch::RowDigest::row`]).
    pub row_digest: u64,
    /// Its row does not read in full (an unknown forge or state, a `memory` that was no JSON
    /// when its fork flag became a column): only its full load says why, and only a full tick
    /// may handle it. A `memory` damaged later is not told here: it changes the row's digest,
    /// so no settled decision holds over it.
    pub damaged: bool,
}

/// The digest of a row's digested columns' values, in [`WATCH_COLUMNS`]' order without the
/// tick times: the row's digest ([`RowDigest::row`], as `row_digest` computes it), which
/// the SQL function [`DIGEST_FUNCTION`] computes from the columns [`digest_call`] names.
fn digest_args<'a, E>(mut values: impl Iterator<Item = Result<ValueRef<'a>, E>>) -> Result<u64, E> {
    let mut settings = crate::core::hash::Digest::default();
    for value in values.by_ref().take(RECORDED_FROM) {
        digest_value(&mut settings, value?);
    }
    let mut d = crate::core::hash::Digest::default();
    d.part(&settings.finish().to_le_bytes());
    for value in values {
        digest_value(&mut d, value?);
    }
    Ok(d.finish())
}

/// The SQL function giving a watch row's digest ([`RowDigest::row`]) from the columns
/// [`digest_call`] names, as a signed integer (SQLite's): a query compares a row with the one
/// a run loaded without reading it out.
const DIGEST_FUNCTION: &str = "watch_digest";

/// The call of [`DIGEST_FUNCTION`] over a watch row's digested columns, each named after
/// `prefix` (`watches.` where a joined table has columns of the same names).
fn digest_call(prefix: &str) -> String {
    let columns: Vec<String> = WATCH_COLUMNS
        .split(',')
        .map(str::trim)
        .enumerate()
        .filter(|(i, _)| !TICK_TIMES.contains(i))
        .map(|(_, c)| format!("{prefix}{c}"))
        .collect();
    format!("{DIGEST_FUNCTION}({})", columns.join(", "))
}

/// Registers [`DIGEST_FUNCTION`] on `conn`.
pub(super) fn add_digest_function(conn: &rusqlite::Connection) -> Result<()> {
    conn.create_scalar_function(
        DIGEST_FUNCTION,
        -1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let values = (0..ctx.len()).map(|i| Ok::<_, rusqlite::Error>(ctx.get_raw(i)));
            Ok(signed(digest_args(values)?))
        },
    )?;
    Ok(())
}

/// [`Store::record_settled`]'s statement: `?1` the rows, `?2` the tick's time, `?3` the
/// run's key, `?4` the wall clock. The run's key and the wall clock come in beside each row:
/// compared with a column as parameters, they would have SQLite plan the statement again at
/// every call.
fn record_settled_sql() -> String {
    format!(
        "UPDATE watches SET next_tick_at = t.next_tick_at, last_tick_at = ?2,
                lease_owner = NULL, lease_until = NULL
         FROM (SELECT value ->> 0 AS id, value ->> 1 AS digest,
                      value ->> 2 AS next_tick_at, ?3 AS me, ?4 AS wall
               FROM json_each(?1)) AS t
         WHERE watches.id = t.id
           AND (watches.lease_until IS NULL OR watches.lease_until < t.wall
                OR watches.lease_owner = t.me)
           AND {} = t.digest
         RETURNING watches.id",
        digest_call("watches.")
    )
}

impl Store {
    /// The watches of `ids` that still exist, at a glance, in the order of `ids`, with the
    /// hints of those whose read is kept (by watch id), in one statement.
    pub fn glances(&self, ids: &[i64]) -> Result<(Vec<Glance>, BTreeMap<i64, KeptHints>)> {
        static SQL: LazyLock<String> = LazyLock::new(|| {
            format!(
                "SELECT w.id, w.forge, w.repo, w.number, w.job, w.agent, w.auto_fix, w.base_ref,
                        w.head_ref, w.state, w.cross_repository, {}, {}
                 FROM watches AS w LEFT JOIN kept_hints AS h ON h.watch_id = w.id
                 WHERE w.id IN (SELECT value FROM json_each(?1))",
                digest_call("w."),
                hint_columns("h.")
            )
        });
        let mut stmt = self.conn.prepare_cached(&SQL)?;
        let (mut by_id, mut hints) = (BTreeMap::new(), BTreeMap::new());
        let mut rows = stmt.query([serde_json::to_string(ids)?])?;
        while let Some(r) = rows.next()? {
            let forge = r.get_ref(1)?.as_str().ok().map(str::parse::<ForgeKind>);
            let state = r.get_ref(9)?.as_str().ok().map(str::parse::<PrState>);
            let cross: Option<i64> = r.get(10)?;
            let (base, head): (Option<String>, Option<String>) = (r.get(7)?, r.get(8)?);
            let glance = Glance {
                id: r.get(0)?,
                pr: PrRef {
                    forge: forge
                        .clone()
                        .and_then(Result::ok)
                        .unwrap_or(ForgeKind::GitHub),
                    repo: r.get(2)?,
                    number: r.get::<_, Uint>(3)?.0,
                },
                job: r.get(4)?,
                agent: r.get(5)?,
                auto_fix: r.get(6)?,
                branches: base.zip(head).filter(|_| cross == Some(0)),
                row_digest: unsigned(r.get(11)?),
                damaged: !matches!((forge, state, cross), (Some(Ok(_)), Some(Ok(_)), Some(_))),
            };
            if let Some(h) = hints_from(r, 12) {
                hints.insert(glance.id, h);
            }
            by_id.insert(glance.id, glance);
        }
        let glances = ids.iter().filter_map(|id| by_id.remove(id)).collect();
        Ok((glances, hints))
    }

    /// Records the ticks of settled watches at `now` that changed nothing but their times,
    /// in one statement, without reading their rows: each of `ticks` (watch id, the digest
    /// of its row as loaded, when it is next due) is written where no other live run holds
    /// its lease (by the wall clock; `holder`'s own is free) and its row is still the one
    /// loaded, its lease cleared. The watches recorded.
    pub fn record_settled(
        &mut self,
        ticks: &[(i64, u64, Option<Instant>)],
        holder: &Holder,
        now: Instant,
    ) -> Result<BTreeSet<i64>> {
        let rows: Vec<(i64, i64, Option<String>)> = ticks
            .iter()
            .map(|&(id, digest, next)| (id, signed(digest), next.map(super::ts)))
            .collect();
        static SQL: LazyLock<String> = LazyLock::new(record_settled_sql);
        let recorded = self
            .conn
            .prepare_cached(&SQL)?
            .query_map(
                params![
                    serde_json::to_string(&rows)?,
                    super::ts(now),
                    holder.key(),
                    crate::clock::wall_secs()
                ],
                |r| r.get(0),
            )?
            .collect::<rusqlite::Result<_>>()?;
        Ok(recorded)
    }
}

#[cfg(test)]
mod tests;

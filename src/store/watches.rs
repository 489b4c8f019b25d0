//! The watches table: adding, pausing, arming and removing watches, reading them back (a row
//! that cannot be read in full is carried as unreadable, never guessed), the due query, and
//! the history rows.

use std::collections::{BTreeMap, HashMap};

use anyhow::{Context, Result};
use rusqlite::types::{FromSql, Value, ValueRef};
use rusqlite::{OptionalExtension, Row, TransactionBehavior, params};

use super::int::Uint;
use super::{Store, parse_ts, ts};
use crate::model::nudge::{Named, Nudge};
use crate::model::watch::{
    Ci, HistoryEntry, Memory, Merge, MergeVia, Pills, RowDigest, Watch, WatchStatus, Why,
};
use crate::model::{ForgeKind, Instant, PrRef, PrState, Sha};
use crate::secrets;

/// Settings given when a PR is first watched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewWatch {
    pub job: Option<String>,
    pub agent: Option<String>,
    pub auto_fix: AutoFixChoice,
    pub merge_armed: bool,
}

/// What `watch add` does to a PR's own auto-fix override.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AutoFixChoice {
    /// Leave it as it is (none for a new watch).
    #[default]
    Keep,
    /// Override the policy with this value.
    Set(bool),
    /// No override: the policy decides.
    Clear,
}

/// Which watches a query selects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only watches of this job.
    pub job: Option<String>,
    /// Only these PRs (empty: all).
    pub prs: Vec<PrRef>,
}

/// The armed watches in line to update their branch, as the `watches_in_line` index (migration
/// 8) holds them: open, unpaused, armed, and seen behind or holding the turn by their last
/// tick. The index's WHERE is the same expression, so the planner uses it for this one.
pub(super) const IN_LINE: &str = "merge_armed = 1 AND paused = 0 AND state = 'open'
               AND CASE WHEN json_valid(memory)
                   THEN json_extract(memory, '$.behind') OR json_extract(memory, '$.holds_update_turn')
                   ELSE 0 END";

/// A watch a run is due to tick, as the due query chose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    pub id: i64,
    /// Its forge (a row naming no known forge reads as GitHub here; loaded in full, it is
    /// unreadable, and its tick says why).
    pub forge: ForgeKind,
}

/// The due query over `columns`: `?1` the time (unused when forced), `?2` the job (NULL: any).
pub(super) fn due_sql(columns: &str, force: bool) -> String {
    if force {
        format!(
            "SELECT {columns} FROM watches
             WHERE paused = 0 AND state = 'open' AND (?2 IS NULL OR job = ?2)
             ORDER BY id"
        )
    } else {
        format!(
            "SELECT {columns} FROM watches
             WHERE paused = 0 AND next_tick_at IS NOT NULL AND next_tick_at <= ?1
               AND (?2 IS NULL OR job = ?2)
             ORDER BY next_tick_at, id"
        )
    }
}

pub(super) const WATCH_COLUMNS: &str = "id, forge, repo, number, job, agent, auto_fix, paused, added_at, state, \
     title, head_sha, head_seen_at, head_ref, base_ref, pill_ci, pill_ci_fixing, pill_cnf, pill_cmt, \
     why, attempts, merge_armed, merge_via, armed_at, memory, next_tick_at, last_tick_at, last_error";

/// The position of each column of [`WATCH_COLUMNS`]: a row is read by position (a name is
/// looked up among all the columns on every read).
mod at {
    pub(super) const ID: usize = 0;
    pub(super) const FORGE: usize = 1;
    pub(super) const REPO: usize = 2;
    pub(super) const NUMBER: usize = 3;
    pub(super) const JOB: usize = 4;
    pub(super) const AGENT: usize = 5;
    pub(super) const AUTO_FIX: usize = 6;
    pub(super) const PAUSED: usize = 7;
    pub(super) const ADDED_AT: usize = 8;
    pub(super) const STATE: usize = 9;
    pub(super) const TITLE: usize = 10;
    pub(super) const HEAD_SHA: usize = 11;
    pub(super) const HEAD_SEEN_AT: usize = 12;
    pub(super) const HEAD_REF: usize = 13;
    pub(super) const BASE_REF: usize = 14;
    pub(super) const PILL_CI: usize = 15;
    pub(super) const PILL_CI_FIXING: usize = 16;
    pub(super) const PILL_CNF: usize = 17;
    pub(super) const PILL_CMT: usize = 18;
    pub(super) const WHY: usize = 19;
    pub(super) const ATTEMPTS: usize = 20;
    pub(super) const MERGE_ARMED: usize = 21;
    pub(super) const MERGE_VIA: usize = 22;
    pub(super) const ARMED_AT: usize = 23;
    pub(super) const MEMORY: usize = 24;
    pub(super) const NEXT_TICK_AT: usize = 25;
    pub(super) const LAST_TICK_AT: usize = 26;
    pub(super) const LAST_ERROR: usize = 27;
}

/// The positions in [`WATCH_COLUMNS`] of `next_tick_at` and `last_tick_at`, which a row's
/// digest leaves out.
pub(super) const TICK_TIMES: [usize; 2] = [at::NEXT_TICK_AT, at::LAST_TICK_AT];

/// The first column of [`WATCH_COLUMNS`] a tick's record writes: it writes every one from here
/// on, in this order (see [`read_back`]); those before it are the owner's settings.
pub(super) const RECORDED_FROM: usize = at::STATE;

/// A watch row's columns by position: a row as read, or the values a tick's record writes
/// ([`Recorded`]).
pub(super) trait Columns {
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>>;

    fn get<T: FromSql>(&self, i: usize) -> rusqlite::Result<T> {
        let value = self.value(i)?;
        T::column_result(value).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(i, value.data_type(), Box::new(e))
        })
    }
}

impl Columns for Row<'_> {
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>> {
        self.get_ref(i)
    }

    fn get<T: FromSql>(&self, i: usize) -> rusqlite::Result<T> {
        Row::get(self, i)
    }
}

/// The columns a tick's record writes, from [`RECORDED_FROM`] on, as it binds them.
struct Recorded<'a>(&'a [Value]);

impl Columns for Recorded<'_> {
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>> {
        i.checked_sub(RECORDED_FROM)
            .and_then(|at| self.0.get(at))
            .map(ValueRef::from)
            .ok_or(rusqlite::Error::InvalidColumnIndex(i))
    }
}

/// Adds one column's value, with its type, to a row's digest.
pub(super) fn digest_value(d: &mut crate::core::hash::Digest, value: ValueRef<'_>) {
    match value {
        ValueRef::Null => d.part(b"n"),
        ValueRef::Integer(n) => d.part(b"i").part(&n.to_le_bytes()),
        ValueRef::Real(x) => d.part(b"r").part(&x.to_le_bytes()),
        ValueRef::Text(t) => d.part(b"t").part(t),
        ValueRef::Blob(b) => d.part(b"b").part(b),
    };
}

/// The digest of a watch row as read (see [`Watch::row_digest`]): every column of
/// [`WATCH_COLUMNS`] but the tick times (the lease is not among them), each with its type; the
/// settings' columns digested first, on their own.
fn row_digest(row: &Row<'_>) -> rusqlite::Result<RowDigest> {
    let mut settings = crate::core::hash::Digest::default();
    for i in 0..RECORDED_FROM {
        digest_value(&mut settings, row.get_ref(i)?);
    }
    let settings = settings.finish();
    Ok(RowDigest {
        row: recorded_digest(settings, row)?,
        settings,
    })
}

/// The digest of a row whose settings digest to `settings` and whose recorded columns are
/// `cols`'.
fn recorded_digest(settings: u64, cols: &impl Columns) -> rusqlite::Result<u64> {
    let mut d = crate::core::hash::Digest::default();
    d.part(&settings.to_le_bytes());
    for i in (RECORDED_FROM..=at::LAST_ERROR).filter(|i| !TICK_TIMES.contains(i)) {
        digest_value(&mut d, cols.value(i)?);
    }
    Ok(d.finish())
}

/// The watch `watch` becomes once a tick's record writes `values` over its row (one per
/// column from [`RECORDED_FROM`] on), as the next load reads it (the same parse of the same
/// values: instants to the second, secrets masked) with that row's digest; `None` when it
/// would not read back whole, or `watch` was not read from the database.
pub(super) fn read_back(watch: &Watch, values: &[Value]) -> Option<Watch> {
    let settings = watch.row_digest?.settings;
    let cols = Recorded(values);
    let part = recorded_part(&cols, watch.added_at).ok()?;
    if !part.unreadable.is_empty() {
        return None;
    }
    Some(Watch {
        status: part.status,
        next_tick_at: part.next_tick_at,
        last_tick_at: part.last_tick_at,
        last_error: part.last_error,
        row_digest: Some(RowDigest {
            row: recorded_digest(settings, &cols).ok()?,
            settings,
        }),
        ..watch.clone()
    })
}

/// What a watch row's recorded columns say, and what of them could not be read.
struct RecordedPart {
    status: WatchStatus,
    next_tick_at: Option<Instant>,
    last_tick_at: Option<Instant>,
    last_error: Option<String>,
    unreadable: Vec<String>,
}

/// The text in column `i`.
pub(super) fn text(cols: &impl Columns, i: usize) -> rusqlite::Result<&str> {
    cols.value(i)?.as_str().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// The instant in column `i`, when it reads as one.
pub(super) fn time(cols: &impl Columns, i: usize) -> rusqlite::Result<Option<Instant>> {
    Ok(cols
        .value(i)?
        .as_str_or_null()
        .ok()
        .flatten()
        .and_then(|s| crate::model::parse_instant(s).ok()))
}

/// A watch row's recorded columns (from [`RECORDED_FROM`] on), read.
fn recorded_part(cols: &impl Columns, added_at: Instant) -> rusqlite::Result<RecordedPart> {
    let mut unreadable = Vec::new();
    let state = text(cols, at::STATE)?
        .parse::<PrState>()
        .unwrap_or_else(|e| {
            unreadable.push(format!("state: {e}"));
            PrState::Open
        });
    let memory = serde_json::from_str::<Memory>(text(cols, at::MEMORY)?).unwrap_or_else(|e| {
        unreadable.push(format!("memory: {e}"));
        Memory::default()
    });
    let status = WatchStatus {
        state,
        title: cols.get(at::TITLE)?,
        head_sha: cols.get::<Option<String>>(at::HEAD_SHA)?.map(Sha),
        head_seen_at: time(cols, at::HEAD_SEEN_AT)?,
        head_ref: cols.get(at::HEAD_REF)?,
        base_ref: cols.get(at::BASE_REF)?,
        pills: Pills {
            ci: Ci::from_flags(cols.get(at::PILL_CI)?, cols.get(at::PILL_CI_FIXING)?),
            cnf: cols.get(at::PILL_CNF)?,
            cmt: cols.get(at::PILL_CMT)?,
        },
        why: cols
            .value(at::WHY)?
            .as_str_or_null()
            .ok()
            .flatten()
            .and_then(Why::parse),
        attempts: cols.get(at::ATTEMPTS)?,
        merge: Merge::from_columns(
            cols.get(at::MERGE_ARMED)?,
            cols.value(at::MERGE_VIA)?
                .as_str_or_null()
                .ok()
                .flatten()
                .and_then(MergeVia::parse),
            time(cols, at::ARMED_AT)?,
            added_at,
        ),
        memory,
    };
    Ok(RecordedPart {
        status,
        next_tick_at: time(cols, at::NEXT_TICK_AT)?,
        last_tick_at: time(cols, at::LAST_TICK_AT)?,
        last_error: cols.get(at::LAST_ERROR)?,
        unreadable,
    })
}

/// A watch row. What cannot be read (an unknown forge or state, a corrupt `memory`) is never
/// guessed silently: the watch carries it in `unreadable`, and the tick refuses to act on it.
fn watch_from_row(row: &Row<'_>) -> rusqlite::Result<Watch> {
    let forge = text(row, at::FORGE)?.parse::<ForgeKind>();
    let added_at = time(row, at::ADDED_AT)?.unwrap_or_default();
    let part = recorded_part(row, added_at)?;
    let mut unreadable = Vec::new();
    let forge = forge.unwrap_or_else(|e| {
        unreadable.push(format!("forge: {e}"));
        ForgeKind::GitHub
    });
    unreadable.extend(part.unreadable);
    Ok(Watch {
        id: row.get(at::ID)?,
        pr: PrRef {
            forge,
            repo: row.get(at::REPO)?,
            number: row.get::<_, Uint>(at::NUMBER)?.0,
        },
        job: row.get(at::JOB)?,
        agent: row.get(at::AGENT)?,
        auto_fix: row.get(at::AUTO_FIX)?,
        paused: row.get(at::PAUSED)?,
        added_at,
        status: part.status,
        next_tick_at: part.next_tick_at,
        last_tick_at: part.last_tick_at,
        last_error: part.last_error,
        unreadable: (!unreadable.is_empty()).then(|| unreadable.join("; ")),
        row_digest: Some(row_digest(row)?),
    })
}

pub(super) fn insert_history(
    tx: &rusqlite::Connection,
    url: &str,
    entries: &[HistoryEntry],
) -> Result<()> {
    for h in entries {
        tx.execute(
            "INSERT INTO history (pr, at, what, why) VALUES (?1, ?2, ?3, ?4)",
            params![
                url,
                ts(h.at),
                secrets::mask(&h.what),
                secrets::mask_opt(h.why.as_deref())
            ],
        )?;
    }
    Ok(())
}

impl Store {
    /// `pr` as it is watched: forges ignore the letter case of repository paths, so
    /// `OCTO/App#1` names the watch of `octo/app#1`, and every row keyed by the PR uses the
    /// spelling it was first watched under. An unwatched PR is returned as given.
    pub fn known(&self, pr: &PrRef) -> Result<PrRef> {
        let repo: Option<String> = self
            .conn
            .query_row(
                "SELECT repo FROM watches WHERE forge = ?1 AND repo = ?2 COLLATE NOCASE AND number = ?3
                 ORDER BY id LIMIT 1",
                params![pr.forge.as_str(), pr.repo, Uint(pr.number)],
                |r| r.get(0),
            )
            .optional()?;
        Ok(PrRef {
            repo: repo.unwrap_or_else(|| pr.repo.clone()),
            ..pr.clone()
        })
    }

    /// Starts watching `pr`, due at `now`. Returns false when it was already watched, in any
    /// letter case (its settings are then updated with whatever `new` sets, and it is made
    /// due again).
    pub fn add_watch(&mut self, pr: &PrRef, new: &NewWatch, now: Instant) -> Result<bool> {
        let pr = &self.known(pr)?;
        let (set, clear) = match new.auto_fix {
            AutoFixChoice::Keep => (None, false),
            AutoFixChoice::Set(v) => (Some(v), false),
            AutoFixChoice::Clear => (None, true),
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let inserted = tx.execute(
            "INSERT INTO watches (forge, repo, number, job, agent, auto_fix, merge_armed, armed_at, added_at, next_tick_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, CASE WHEN ?7 THEN ?8 END, ?8, ?8)
             ON CONFLICT (forge, repo, number) DO NOTHING",
            params![pr.forge.as_str(), pr.repo, Uint(pr.number), new.job, new.agent, set, new.merge_armed, ts(now)],
        )? == 1;
        if !inserted {
            tx.execute(
                "UPDATE watches SET job = COALESCE(?4, job), agent = COALESCE(?5, agent),
                        auto_fix = CASE WHEN ?9 THEN NULL ELSE COALESCE(?6, auto_fix) END,
                        armed_at = CASE WHEN ?7 AND NOT merge_armed THEN ?8 ELSE armed_at END,
                        merge_armed = merge_armed OR ?7,
                        next_tick_at = CASE WHEN state = 'open' THEN ?8 ELSE next_tick_at END
                 WHERE forge = ?1 AND repo = ?2 AND number = ?3",
                params![
                    pr.forge.as_str(),
                    pr.repo,
                    Uint(pr.number),
                    new.job,
                    new.agent,
                    set,
                    new.merge_armed,
                    ts(now),
                    clear
                ],
            )?;
        }
        tx.commit()?;
        Ok(inserted)
    }

    /// Re-opens a finished watch (merged or closed) so it is polled again, as `watch add` does.
    pub fn reopen(&mut self, pr: &PrRef, now: Instant) -> Result<()> {
        self.conn.execute(
            "UPDATE watches SET state = 'open', next_tick_at = ?4
             WHERE forge = ?1 AND repo = ?2 AND number = ?3 AND state != 'open'",
            params![pr.forge.as_str(), pr.repo, Uint(pr.number), ts(now)],
        )?;
        Ok(())
    }

    /// Makes a closed watch due at `now` (a listing found its PR open again): the tick that
    /// reads it open notes it reopened. Returns false when `pr` is no closed watch.
    pub fn look_again(&mut self, pr: &PrRef, now: Instant) -> Result<bool> {
        Ok(self.conn.execute(
            "UPDATE watches SET next_tick_at = ?4
             WHERE forge = ?1 AND repo = ?2 AND number = ?3 AND state = 'closed'",
            params![pr.forge.as_str(), pr.repo, Uint(pr.number), ts(now)],
        )? == 1)
    }

    /// Stops watching `pr`. Returns false when it was not watched.
    pub fn remove_watch(&mut self, pr: &PrRef) -> Result<bool> {
        Ok(self.conn.execute(
            "DELETE FROM watches WHERE forge = ?1 AND repo = ?2 AND number = ?3",
            params![pr.forge.as_str(), pr.repo, Uint(pr.number)],
        )? == 1)
    }

    /// Pauses or resumes `pr`; a resumed watch is due at `now`. Returns false when not watched.
    pub fn set_paused(&mut self, pr: &PrRef, paused: bool, now: Instant) -> Result<bool> {
        Ok(self.conn.execute(
            "UPDATE watches SET paused = ?4,
                    next_tick_at = CASE WHEN NOT ?4 AND state = 'open' THEN ?5 ELSE next_tick_at END
             WHERE forge = ?1 AND repo = ?2 AND number = ?3",
            params![pr.forge.as_str(), pr.repo, Uint(pr.number), paused, ts(now)],
        )? == 1)
    }

    /// Arms or disarms merge-when-ready (the owner's command); an armed watch is due at `now`.
    /// Arming also lifts a merge queue's refusal of the current head: the owner asked again.
    pub fn set_merge_armed(&mut self, pr: &PrRef, armed: bool, now: Instant) -> Result<bool> {
        Ok(self.conn.execute(
            "UPDATE watches SET
                    armed_at = CASE WHEN ?4 THEN COALESCE(CASE WHEN merge_armed THEN armed_at END, ?5) END,
                    merge_via = CASE WHEN ?4 THEN merge_via END,
                    merge_armed = ?4,
                    memory = CASE WHEN ?4
                        THEN json_set(json_remove(memory, '$.queue_left_head'), '$.queue_asked_at', ?5)
                        ELSE memory END,
                    next_tick_at = CASE WHEN state = 'open' THEN ?5 ELSE next_tick_at END
             WHERE forge = ?1 AND repo = ?2 AND number = ?3",
            params![pr.forge.as_str(), pr.repo, Uint(pr.number), armed, ts(now)],
        )? == 1)
    }

    /// One watch, if `pr` is watched.
    pub fn watch(&self, pr: &PrRef) -> Result<Option<Watch>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {WATCH_COLUMNS} FROM watches WHERE forge = ?1 AND repo = ?2 AND number = ?3"),
                params![pr.forge.as_str(), pr.repo, Uint(pr.number)],
                watch_from_row,
            )
            .optional()?)
    }

    /// The watch whose fix or review feedback in flight was sent as message `id`, if any (the
    /// oldest, should two claim it).
    pub fn watch_with_fix(&self, id: &str) -> Result<Option<Watch>> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {WATCH_COLUMNS} FROM watches
                     WHERE CASE WHEN json_valid(memory) THEN json_extract(memory, '$.fix.message_id') END = ?1
                        OR CASE WHEN json_valid(memory) THEN json_extract(memory, '$.feedback_sent.message_id') END = ?1
                     ORDER BY id LIMIT 1"
                ),
                [id],
                watch_from_row,
            )
            .optional()?)
    }

    /// Every watch, oldest first.
    pub fn watches(&self) -> Result<Vec<Watch>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {WATCH_COLUMNS} FROM watches ORDER BY id"))?;
        let rows = stmt.query_map([], watch_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The forges of the open watches (`github`, `gitlab`): the ones a run will read.
    pub fn forges_watched(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT forge FROM watches WHERE state = 'open' ORDER BY forge")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many watches there are.
    pub fn count_watches(&self) -> Result<usize> {
        let n: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM watches", [], |r| r.get(0))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// The open, unpaused watches armed to merge that may be in line to update their branch:
    /// those whose last tick saw them behind or holding the turn (found by the
    /// `watches_in_line` index, whose WHERE this repeats), and those of `fresh` (watches the
    /// caller holds, whose reads this tick tell whether they are behind; taken as held, not
    /// read again). The others cannot hold a turn, so they are never loaded: a run asks once
    /// per chunk. A damaged `memory` is never in line.
    pub fn armed_in_line(&self, fresh: &[&Watch]) -> Result<Vec<Watch>> {
        let mut in_line = self.conn.prepare_cached(&format!(
            "SELECT {WATCH_COLUMNS} FROM watches WHERE {IN_LINE}"
        ))?;
        let mut by_id: BTreeMap<i64, Watch> = in_line
            .query_map([], watch_from_row)?
            .map(|w| w.map(|w| (w.id, w)))
            .collect::<rusqlite::Result<_>>()?;
        for w in fresh {
            if w.status.merge.is_armed() && w.status.state == PrState::Open && !w.paused {
                by_id.insert(w.id, (*w).clone());
            }
        }
        Ok(by_id.into_values().collect())
    }

    /// The watches a run should tick: open, not paused, due at `now` (any time with `force`),
    /// within `sel`, in due order; each only as its id and forge, so choosing among ten
    /// thousand watches stays cheap and a run holds no more than that (it loads each group's
    /// watches when it reads them). Uses the `watches_due` index when not forced.
    pub fn due(&self, now: Instant, force: bool, sel: &Selection) -> Result<Vec<Due>> {
        // Named PRs are matched on their address; otherwise the `watches_due` index covers
        // the query.
        let named = !sel.prs.is_empty();
        let columns = if named {
            "id, forge, repo, number"
        } else {
            "id, forge"
        };
        let mut stmt = self.conn.prepare_cached(&due_sql(columns, force))?;
        let mut rows = stmt.query(params![ts(now), sel.job])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let kind = r
                .get_ref(1)?
                .as_str()
                .ok()
                .and_then(|f| f.parse::<ForgeKind>().ok())
                .unwrap_or(ForgeKind::GitHub);
            if named {
                let pr = PrRef {
                    forge: kind,
                    repo: r.get(2)?,
                    number: r.get::<_, Uint>(3)?.0,
                };
                if !sel.prs.contains(&pr) {
                    continue;
                }
            }
            out.push(Due {
                id: r.get(0)?,
                forge: kind,
            });
        }
        Ok(out)
    }

    /// Each due watch (as [`Store::due`] chooses them) read in full, one at a time, in due
    /// order: for the rare run that must weigh every due watch (its budget falls short).
    pub fn each_due(
        &self,
        now: Instant,
        force: bool,
        sel: &Selection,
        f: &mut dyn FnMut(Watch),
    ) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(&due_sql(WATCH_COLUMNS, force))?;
        for w in stmt.query_map(params![ts(now), sel.job], watch_from_row)? {
            let w = w?;
            if sel.prs.is_empty() || sel.prs.contains(&w.pr) {
                f(w);
            }
        }
        Ok(())
    }

    /// The watches of `ids` that still exist, in the order of `ids` (each once), each moved
    /// into its place once (a watch is large).
    pub fn watches_by_ids(&self, ids: &[i64]) -> Result<Vec<Watch>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {WATCH_COLUMNS} FROM watches WHERE id IN (SELECT value FROM json_each(?1))"
        ))?;
        let mut found: Vec<Option<Watch>> = stmt
            .query_map([serde_json::to_string(ids)?], watch_from_row)?
            .map(|w| w.map(Some))
            .collect::<rusqlite::Result<_>>()?;
        let mut at: HashMap<i64, usize> = (found.iter().flatten().enumerate())
            .map(|(i, w)| (w.id, i))
            .collect();
        let take = |id| found.get_mut(at.remove(id)?)?.take();
        Ok(ids.iter().filter_map(take).collect())
    }

    /// The newest `limit` history rows of each of `prs`, oldest first (`out[i]` is `prs[i]`'s),
    /// in one statement: the status page shows them for every watch, and a statement per PR
    /// is compiled again each time its PR is bound.
    pub fn recent_history(&self, prs: &[&PrRef], limit: usize) -> Result<Vec<Vec<HistoryEntry>>> {
        let urls: Vec<String> = prs.iter().map(|pr| pr.url()).collect();
        let mut stmt = self.conn.prepare_cached(
            "SELECT j.key, h.id, h.at, h.what, h.why FROM json_each(?1) AS j JOIN history AS h
             ON h.id IN (SELECT id FROM history WHERE pr = j.value ORDER BY id DESC LIMIT ?2)",
        )?;
        let mut found: Vec<Vec<(i64, HistoryEntry)>> = prs.iter().map(|_| Vec::new()).collect();
        let mut rows = stmt.query(params![serde_json::to_string(&urls)?, Uint::from(limit)])?;
        while let Some(r) = rows.next()? {
            let Some(entries) = usize::try_from(r.get::<_, i64>(0)?)
                .ok()
                .and_then(|i| found.get_mut(i))
            else {
                continue;
            };
            let entry = HistoryEntry {
                at: parse_ts(r.get(2)?).unwrap_or_default(),
                what: r.get(3)?,
                why: r.get(4)?,
            };
            entries.push((r.get(1)?, entry));
        }
        Ok(found
            .into_iter()
            .map(|mut entries| {
                entries.sort_by_key(|(id, _)| *id);
                entries.into_iter().map(|(_, e)| e).collect()
            })
            .collect())
    }

    /// The newest `limit` history rows of a PR, oldest first.
    pub fn history(&self, pr: &PrRef, limit: usize) -> Result<Vec<HistoryEntry>> {
        let mut stmt = self.conn.prepare(
            "SELECT at, what, why FROM (SELECT id, at, what, why FROM history WHERE pr = ?1 ORDER BY id DESC LIMIT ?2)
             ORDER BY id",
        )?;
        let rows = stmt.query_map(params![pr.url(), Uint::from(limit)], |r| {
            Ok(HistoryEntry {
                at: parse_ts(r.get(0)?).unwrap_or_default(),
                what: r.get(1)?,
                why: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Adds history rows outside a tick (owner commands).
    pub fn log(&mut self, pr: &PrRef, entries: &[HistoryEntry]) -> Result<()> {
        let tx = self.conn.transaction()?;
        insert_history(&tx, &pr.url(), entries)?;
        tx.commit()?;
        Ok(())
    }

    /// Edits watch `id`'s memory in one transaction: reads it, applies `edit`, writes it back,
    /// and returns what `edit` returned (`None`: no such watch). A memory that cannot be read
    /// is an error and stays as it is: `edit` never sees a default in its place.
    pub fn update_memory<T>(
        &mut self,
        id: i64,
        edit: impl FnOnce(&mut Memory) -> T,
    ) -> Result<Option<T>> {
        let tx = self.atomic()?;
        let Some(stored) = tx
            .query_row("SELECT memory FROM watches WHERE id = ?1", [id], |r| {
                r.get::<_, String>(0)
            })
            .optional()?
        else {
            return Ok(None);
        };
        let mut memory: Memory = serde_json::from_str(&stored)
            .with_context(|| format!("the memory of watch {id} cannot be read"))?;
        let out = edit(&mut memory);
        tx.execute(
            "UPDATE watches SET memory = ?2, cross_repository = ?3 WHERE id = ?1",
            params![id, serde_json::to_string(&memory)?, memory.cross_repository],
        )?;
        tx.commit()?;
        Ok(Some(out))
    }

    /// Makes the open, unpaused watches that `nudges` name due at `now` (a watch due sooner
    /// keeps its time), matching repositories in any letter case; a head or a branch names
    /// the watches whose last read saw it, and a base branch every watch whose last read had it
    /// as its base. Returns how many watches it moved.
    pub fn nudge(&mut self, nudges: &[Nudge], now: Instant) -> Result<usize> {
        let tx = self.atomic()?;
        let mut moved = 0;
        for n in nudges {
            let (column, value): (&str, &dyn rusqlite::ToSql) = match &n.names {
                Named::Number(number) => ("number", &Uint(*number)),
                Named::Head(sha) => ("head_sha", &sha.0),
                Named::Branch(branch) => ("head_ref", branch),
                Named::Base(branch) => ("base_ref", branch),
            };
            moved += tx.execute(
                &format!(
                    "UPDATE watches SET next_tick_at = ?1
                     WHERE forge = ?2 AND repo = ?3 COLLATE NOCASE AND {column} = ?4
                       AND state = 'open' AND paused = 0
                       AND (next_tick_at IS NULL OR next_tick_at > ?1)"
                ),
                params![ts(now), n.forge.as_str(), n.repo, value],
            )?;
        }
        tx.commit()?;
        Ok(moved)
    }

    /// Makes watch `id` due at `at`, if it is still open.
    pub fn make_due(&mut self, id: i64, at: Instant) -> Result<()> {
        self.conn.execute(
            "UPDATE watches SET next_tick_at = CASE WHEN state = 'open' THEN ?2 ELSE next_tick_at END
             WHERE id = ?1",
            params![id, ts(at)],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each position names its column of [`WATCH_COLUMNS`].
    #[test]
    fn the_positions_name_the_columns() {
        let columns: Vec<&str> = WATCH_COLUMNS.split(',').map(str::trim).collect();
        let positions = [
            ("id", at::ID),
            ("forge", at::FORGE),
            ("repo", at::REPO),
            ("number", at::NUMBER),
            ("job", at::JOB),
            ("agent", at::AGENT),
            ("auto_fix", at::AUTO_FIX),
            ("paused", at::PAUSED),
            ("added_at", at::ADDED_AT),
            ("state", at::STATE),
            ("title", at::TITLE),
            ("head_sha", at::HEAD_SHA),
            ("head_seen_at", at::HEAD_SEEN_AT),
            ("head_ref", at::HEAD_REF),
            ("base_ref", at::BASE_REF),
            ("pill_ci", at::PILL_CI),
            ("pill_ci_fixing", at::PILL_CI_FIXING),
            ("pill_cnf", at::PILL_CNF),
            ("pill_cmt", at::PILL_CMT),
            ("why", at::WHY),
            ("attempts", at::ATTEMPTS),
            ("merge_armed", at::MERGE_ARMED),
            ("merge_via", at::MERGE_VIA),
            ("armed_at", at::ARMED_AT),
            ("memory", at::MEMORY),
            ("next_tick_at", at::NEXT_TICK_AT),
            ("last_tick_at", at::LAST_TICK_AT),
            ("last_error", at::LAST_ERROR),
        ];
        assert_eq!(columns.len(), positions.len());
        for (name, at) in positions {
            assert_eq!(columns[at], name);
        }
    }
}

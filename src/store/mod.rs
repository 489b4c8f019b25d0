//! SQLite storage. `Store` owns the connection and every SQL statement in the program; the rest
//! of pr-monitor speaks domain types to it (`due`, `record`, `add_watch` …).
//!
//! The database runs in WAL mode with a busy timeout, so a `run` and a `status` may overlap.
//! Each tick's outcome for a PR is written in one transaction; a lease keeps two overlapping
//! runs from acting on the same PR.

mod intents;
mod metrics;
mod migrations;
mod reads;

pub use metrics::{Labels, StoredMetric};
pub use reads::KeptRead;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use crate::holder::Holder;
use crate::model::{ForgeKind, Instant, PrRef, PrState, Sha};
use crate::secrets;
use crate::watch::{HistoryEntry, Memory, MergeVia, Pills, Watch, WatchStatus, Why};

/// `path` for a `file:` URI: every byte but unreserved characters and `/` percent-encoded.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str()
        .as_bytes()
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The database was written by a newer pr-monitor: a usage error (exit 2), never altered.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NewerDatabase(String);

/// The database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
}

/// Settings given when a PR is first watched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewWatch {
    pub job: Option<String>,
    pub agent: Option<String>,
    pub auto_fix: Option<bool>,
    pub merge_armed: bool,
}

/// Which watches a query selects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only watches of this job.
    pub job: Option<String>,
    /// Only these PRs (empty: all).
    pub prs: Vec<PrRef>,
}

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
    pub seen: Vec<(String, String, String)>,
    /// Messages caused by this tick, delivered after the commit.
    pub outbox: Vec<OutboxMessage>,
    /// The intents this tick's read reconciled (see [`crate::intent`]).
    pub resolved_intents: Vec<i64>,
}

/// A message waiting in the durable outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxMessage {
    /// The idempotency id: inserting the same id twice keeps one message.
    pub id: String,
    pub pr: String,
    /// `inbox:<agent>`, `email` or `slack`.
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

use crate::model::stamp as ts;

fn parse_ts(s: Option<String>) -> Option<Instant> {
    s.and_then(|s| DateTime::parse_from_rfc3339(&s).ok())
        .map(|t| t.with_timezone(&Utc))
}

const WATCH_COLUMNS: &str = "id, forge, repo, number, job, agent, auto_fix, paused, added_at, state, \
     title, head_sha, head_seen_at, head_ref, base_ref, pill_ci, pill_ci_fixing, pill_cnf, pill_cmt, \
     why, attempts, merge_armed, merge_via, armed_at, memory, next_tick_at, last_tick_at, last_error";

fn insert_outbox(tx: &rusqlite::Transaction<'_>, messages: &[OutboxMessage]) -> Result<()> {
    for m in messages {
        tx.execute(
            "INSERT INTO outbox (id, pr, channel, kind, subject, payload, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING",
            params![
                m.id,
                m.pr,
                m.channel,
                m.kind,
                secrets::mask(&m.subject),
                secrets::mask(&m.payload),
                ts(m.created_at)
            ],
        )?;
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

/// A watch row. What cannot be read (an unknown forge or state, a corrupt `memory`) is never
/// guessed silently: the watch carries it in `unreadable`, and the tick refuses to act on it.
fn watch_from_row(row: &Row<'_>) -> rusqlite::Result<Watch> {
    let forge: String = row.get("forge")?;
    let state: String = row.get("state")?;
    let memory: String = row.get("memory")?;
    let mut unreadable = Vec::new();
    let forge = forge.parse::<ForgeKind>().unwrap_or_else(|e| {
        unreadable.push(format!("forge: {e}"));
        ForgeKind::GitHub
    });
    let state = state.parse::<PrState>().unwrap_or_else(|e| {
        unreadable.push(format!("state: {e}"));
        PrState::Open
    });
    let memory = serde_json::from_str::<Memory>(&memory).unwrap_or_else(|e| {
        unreadable.push(format!("memory: {e}"));
        Memory::default()
    });
    Ok(Watch {
        id: row.get("id")?,
        pr: PrRef {
            forge,
            repo: row.get("repo")?,
            number: row.get::<_, i64>("number")? as u64,
        },
        job: row.get("job")?,
        agent: row.get("agent")?,
        auto_fix: row.get("auto_fix")?,
        paused: row.get("paused")?,
        added_at: parse_ts(row.get("added_at")?).unwrap_or_default(),
        status: WatchStatus {
            state,
            title: row.get("title")?,
            head_sha: row.get::<_, Option<String>>("head_sha")?.map(Sha),
            head_seen_at: parse_ts(row.get("head_seen_at")?),
            head_ref: row.get("head_ref")?,
            base_ref: row.get("base_ref")?,
            pills: Pills {
                ci: row.get("pill_ci")?,
                ci_fixing: row.get("pill_ci_fixing")?,
                cnf: row.get("pill_cnf")?,
                cmt: row.get("pill_cmt")?,
            },
            why: row
                .get::<_, Option<String>>("why")?
                .as_deref()
                .and_then(Why::parse),
            attempts: row.get("attempts")?,
            merge_armed: row.get("merge_armed")?,
            merge_via: row
                .get::<_, Option<String>>("merge_via")?
                .as_deref()
                .and_then(MergeVia::parse),
            armed_at: parse_ts(row.get("armed_at")?),
            memory,
        },
        next_tick_at: parse_ts(row.get("next_tick_at")?),
        last_tick_at: parse_ts(row.get("last_tick_at")?),
        last_error: row.get("last_error")?,
        unreadable: (!unreadable.is_empty()).then(|| unreadable.join("; ")),
    })
}

fn insert_history(
    tx: &rusqlite::Transaction<'_>,
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

/// The address of the watch `owner` holds the lease on, as its history and seen rows name it.
fn leased_url(tx: &rusqlite::Transaction<'_>, watch_id: i64, owner: &str) -> Result<String> {
    let row: Option<(String, String, i64)> = tx
        .query_row(
            "SELECT forge, repo, number FROM watches WHERE id = ?1 AND lease_owner = ?2",
            params![watch_id, owner],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
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
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::private::create_dir_all(dir).with_context(|| {
                format!("cannot create the database folder `{}`", dir.display())
            })?;
        }
        crate::private::create_file(path)
            .with_context(|| format!("cannot create the database `{}`", path.display()))?;
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open the database `{}`", path.display()))?;
        Self::init(conn).with_context(|| format!("cannot use the database `{}`", path.display()))
    }

    /// Opens an existing database for reading only (`status`): works on a read-only file or
    /// folder. A database that does not exist yet or needs a migration is opened with
    /// [`Store::open`] instead.
    pub fn open_for_reading(path: &Path) -> Result<Store> {
        if !path.exists() {
            return Self::open(path);
        }
        let read = |conn: Connection| -> Result<(Connection, i64)> {
            conn.busy_timeout(Duration::from_secs(10))?;
            let version = Self::version(&conn)?;
            Ok((conn, version))
        };
        let flags =
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let opened = Connection::open_with_flags(path, flags)
            .map_err(anyhow::Error::from)
            .and_then(read)
            .or_else(|e| {
                if e.chain().any(<dyn std::error::Error>::is::<NewerDatabase>) {
                    return Err(e);
                }
                // A WAL database whose folder we cannot write (no `-shm` can be made) is read
                // as immutable: nobody who could change it can be writing it either.
                let uri = format!("file:{}?immutable=1", uri_path(path));
                Connection::open_with_flags(uri, flags | rusqlite::OpenFlags::SQLITE_OPEN_URI)
                    .map_err(anyhow::Error::from)
                    .and_then(read)
            })
            .with_context(|| format!("cannot use the database `{}`", path.display()))?;
        let (conn, version) = opened;
        if version < migrations::latest() {
            drop(conn);
            return Self::open(path);
        }
        Ok(Store { conn })
    }

    /// The schema version of `conn`'s database; an error naming the versions when it is newer
    /// than this build knows.
    fn version(conn: &Connection) -> Result<i64> {
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let latest = migrations::latest();
        if version > latest {
            return Err(NewerDatabase(format!(
                "it was written by a newer pr-monitor (schema version {version}; this one knows up to {latest}); \
                 upgrade pr-monitor or point --db at another file"
            ))
            .into());
        }
        Ok(version)
    }

    /// An in-memory database, for tests and `--dry-run` without a file.
    pub fn open_in_memory() -> Result<Store> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(mut conn: Connection) -> Result<Store> {
        conn.busy_timeout(Duration::from_secs(10))?;
        let _mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version = Self::version(&tx)?;
        let latest = migrations::latest();
        for (i, sql) in migrations::MIGRATIONS
            .iter()
            .enumerate()
            .skip(version as usize)
        {
            tx.execute_batch(sql)
                .with_context(|| format!("migration {} failed", i + 1))?;
        }
        if version != latest {
            tx.pragma_update(None, "user_version", latest)?;
        }
        tx.commit()?;
        Ok(Store { conn })
    }

    /// `pr` as it is watched: forges ignore the letter case of repository paths, so
    /// `OCTO/App#1` names the watch of `octo/app#1`, and every row keyed by the PR uses the
    /// spelling it was first watched under. An unwatched PR is returned as given.
    pub fn known(&self, pr: &PrRef) -> Result<PrRef> {
        let repo: Option<String> = self
            .conn
            .query_row(
                "SELECT repo FROM watches WHERE forge = ?1 AND repo = ?2 COLLATE NOCASE AND number = ?3
                 ORDER BY id LIMIT 1",
                params![pr.forge.as_str(), pr.repo, i64::try_from(pr.number)?],
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
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let inserted = tx.execute(
            "INSERT INTO watches (forge, repo, number, job, agent, auto_fix, merge_armed, armed_at, added_at, next_tick_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, CASE WHEN ?7 THEN ?8 END, ?8, ?8)
             ON CONFLICT (forge, repo, number) DO NOTHING",
            params![pr.forge.as_str(), pr.repo, pr.number as i64, new.job, new.agent, new.auto_fix, new.merge_armed, ts(now)],
        )? == 1;
        if !inserted {
            tx.execute(
                "UPDATE watches SET job = COALESCE(?4, job), agent = COALESCE(?5, agent),
                        auto_fix = COALESCE(?6, auto_fix),
                        armed_at = CASE WHEN ?7 AND NOT merge_armed THEN ?8 ELSE armed_at END,
                        merge_armed = merge_armed OR ?7,
                        next_tick_at = CASE WHEN state = 'open' THEN ?8 ELSE next_tick_at END
                 WHERE forge = ?1 AND repo = ?2 AND number = ?3",
                params![
                    pr.forge.as_str(),
                    pr.repo,
                    pr.number as i64,
                    new.job,
                    new.agent,
                    new.auto_fix,
                    new.merge_armed,
                    ts(now)
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
            params![pr.forge.as_str(), pr.repo, pr.number as i64, ts(now)],
        )?;
        Ok(())
    }

    /// Stops watching `pr`. Returns false when it was not watched.
    pub fn remove_watch(&mut self, pr: &PrRef) -> Result<bool> {
        Ok(self.conn.execute(
            "DELETE FROM watches WHERE forge = ?1 AND repo = ?2 AND number = ?3",
            params![pr.forge.as_str(), pr.repo, pr.number as i64],
        )? == 1)
    }

    /// Pauses or resumes `pr`; a resumed watch is due at `now`. Returns false when not watched.
    pub fn set_paused(&mut self, pr: &PrRef, paused: bool, now: Instant) -> Result<bool> {
        Ok(self.conn.execute(
            "UPDATE watches SET paused = ?4,
                    next_tick_at = CASE WHEN NOT ?4 AND state = 'open' THEN ?5 ELSE next_tick_at END
             WHERE forge = ?1 AND repo = ?2 AND number = ?3",
            params![
                pr.forge.as_str(),
                pr.repo,
                pr.number as i64,
                paused,
                ts(now)
            ],
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
                    memory = CASE WHEN ?4 THEN json_remove(memory, '$.queue_left_head') ELSE memory END,
                    next_tick_at = CASE WHEN state = 'open' THEN ?5 ELSE next_tick_at END
             WHERE forge = ?1 AND repo = ?2 AND number = ?3",
            params![pr.forge.as_str(), pr.repo, pr.number as i64, armed, ts(now)],
        )? == 1)
    }

    /// One watch, if `pr` is watched.
    pub fn watch(&self, pr: &PrRef) -> Result<Option<Watch>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {WATCH_COLUMNS} FROM watches WHERE forge = ?1 AND repo = ?2 AND number = ?3"),
                params![pr.forge.as_str(), pr.repo, pr.number as i64],
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

    /// The watches a run should tick: open, not paused, due at `now` (any time with `force`),
    /// within `sel`. Uses the `watches_due` index when not forced.
    pub fn due(&self, now: Instant, force: bool, sel: &Selection) -> Result<Vec<Watch>> {
        let sql = if force {
            format!(
                "SELECT {WATCH_COLUMNS} FROM watches WHERE paused = 0 AND state = 'open' ORDER BY id"
            )
        } else {
            format!(
                "SELECT {WATCH_COLUMNS} FROM watches
                 WHERE paused = 0 AND next_tick_at IS NOT NULL AND next_tick_at <= ?1 ORDER BY next_tick_at, id"
            )
        };
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = if force {
            stmt.query_map([], watch_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?
        } else {
            stmt.query_map([ts(now)], watch_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?
        };
        Ok(rows
            .into_iter()
            .filter(|w| sel.job.is_none() || w.job == sel.job)
            .filter(|w| sel.prs.is_empty() || sel.prs.contains(&w.pr))
            .collect())
    }

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
        let taken = self.conn.execute(
            "UPDATE watches SET lease_owner = ?2, lease_until = ?3
             WHERE id = ?1 AND (lease_until IS NULL OR lease_until < ?4 OR lease_owner = ?2)",
            params![watch_id, owner, real_now + secs, real_now],
        )? == 1;
        let lease = Lease {
            watch_id,
            owner: owner.clone(),
        };
        if taken {
            return Ok(Leased::Taken(lease));
        }
        let current: Option<String> = self
            .conn
            .query_row(
                "SELECT lease_owner FROM watches WHERE id = ?1",
                [watch_id],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        let Some((key, other)) = current.and_then(|k| Holder::parse(&k).map(|h| (k, h))) else {
            return Ok(Leased::Held(None));
        };
        if !gone(&other) {
            return Ok(Leased::Held(Some(other)));
        }
        let taken_over = self.conn.execute(
            "UPDATE watches SET lease_owner = ?2, lease_until = ?3 WHERE id = ?1 AND lease_owner = ?4",
            params![watch_id, owner, real_now + secs, key],
        )? == 1;
        Ok(if taken_over {
            Leased::TakenOver(lease, other)
        } else {
            Leased::Held(None)
        })
    }

    /// The leases held now (by the wall clock) by runs that name their holder: watch id and
    /// holder, by watch id.
    pub fn held(&self) -> Result<Vec<(i64, Holder)>> {
        let mut stmt = self.conn.prepare(
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
    pub fn record(&mut self, lease: Lease, rec: &TickRecord) -> Result<()> {
        let Lease { watch_id, owner } = lease;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let url = leased_url(&tx, watch_id, &owner)?;
        let s = &rec.status;
        tx.execute(
            "UPDATE watches SET state = ?2, title = ?3, head_sha = ?4, head_seen_at = ?5, head_ref = ?6,
                    base_ref = ?7, pill_ci = ?8, pill_ci_fixing = ?9, pill_cnf = ?10, pill_cmt = ?11,
                    why = ?12, attempts = ?13, merge_armed = ?14, merge_via = ?15, armed_at = ?16,
                    memory = ?17, next_tick_at = ?18, last_tick_at = ?19, last_error = ?20,
                    lease_owner = NULL, lease_until = NULL
             WHERE id = ?1",
            params![
                watch_id,
                s.state.as_str(),
                s.title,
                s.head_sha.as_ref().map(Sha::as_str),
                s.head_seen_at.map(ts),
                s.head_ref,
                s.base_ref,
                s.pills.ci,
                s.pills.ci_fixing,
                s.pills.cnf,
                s.pills.cmt,
                s.why.map(Why::as_str),
                s.attempts,
                s.merge_armed,
                s.merge_via.map(MergeVia::as_str),
                s.armed_at.map(ts),
                serde_json::to_string(&s.memory)?,
                rec.next_tick_at.map(ts),
                ts(rec.last_tick_at),
                secrets::mask_opt(rec.last_error.as_deref()),
            ],
        )?;
        insert_history(&tx, &url, &rec.history)?;
        insert_outbox(&tx, &rec.outbox)?;
        intents::resolve(&tx, watch_id, &rec.resolved_intents, rec.last_tick_at)?;
        for (source, id, updated) in &rec.seen {
            tx.execute(
                "INSERT INTO seen (pr, source, item_id, updated_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (pr, source, item_id) DO UPDATE SET updated_at = excluded.updated_at",
                params![url, source, id, updated],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Writes only the failure of a tick on a watch whose stored row cannot be read in full
    /// ([`Watch::unreadable`]): `last_error`, the times and the history. The rest of the row
    /// is left as it is, for the owner to look at.
    pub fn record_failure(&mut self, lease: Lease, rec: &TickRecord) -> Result<()> {
        let Lease { watch_id, owner } = lease;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let url = leased_url(&tx, watch_id, &owner)?;
        tx.execute(
            "UPDATE watches SET next_tick_at = ?2, last_tick_at = ?3, last_error = ?4,
                    lease_owner = NULL, lease_until = NULL
             WHERE id = ?1",
            params![
                watch_id,
                rec.next_tick_at.map(ts),
                ts(rec.last_tick_at),
                secrets::mask_opt(rec.last_error.as_deref())
            ],
        )?;
        insert_history(&tx, &url, &rec.history)?;
        tx.commit()?;
        Ok(())
    }

    /// Gives a lease back without recording anything (a dry run, or a run that stops early).
    pub fn release(&mut self, lease: Lease) -> Result<()> {
        let Lease { watch_id, owner } = lease;
        self.conn.execute(
            "UPDATE watches SET lease_owner = NULL, lease_until = NULL WHERE id = ?1 AND lease_owner = ?2",
            params![watch_id, owner],
        )?;
        Ok(())
    }

    /// The newest `limit` history rows of a PR, oldest first.
    pub fn history(&self, pr: &PrRef, limit: usize) -> Result<Vec<HistoryEntry>> {
        let mut stmt = self.conn.prepare(
            "SELECT at, what, why FROM (SELECT id, at, what, why FROM history WHERE pr = ?1 ORDER BY id DESC LIMIT ?2)
             ORDER BY id",
        )?;
        let rows = stmt.query_map(params![pr.url(), limit as i64], |r| {
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

    /// What the tick already handled for `pr`: (source, id) → updated_at.
    pub fn seen(&self, pr: &PrRef) -> Result<std::collections::BTreeMap<(String, String), String>> {
        let mut stmt = self.conn.prepare(
            "SELECT source, item_id, updated_at FROM seen WHERE pr = ?1 AND source NOT LIKE 'check:%'",
        )?;
        let rows = stmt.query_map([pr.url()], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// What `check` already reported for `pr`: (source, id) → updated_at. `check` keeps its
    /// own key space in the `seen` table (sources prefixed [`CHECK_SEEN`]), so looking at a PR
    /// never changes what the tick forwards, and a tick never hides news from `check`.
    pub fn check_seen(
        &self,
        pr: &PrRef,
    ) -> Result<std::collections::BTreeMap<(String, String), String>> {
        let mut stmt = self.conn.prepare(
            "SELECT substr(source, ?2), item_id, updated_at FROM seen WHERE pr = ?1 AND source LIKE 'check:%'",
        )?;
        let from = i64::try_from(CHECK_SEEN.len() + 1)?;
        let rows = stmt.query_map(params![pr.url(), from], |r| {
            Ok(((r.get(0)?, r.get(1)?), r.get(2)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Records what `check` reported (its own key space, see [`Store::check_seen`]).
    pub fn mark_check_seen(
        &mut self,
        pr: &PrRef,
        items: &[(String, String, String)],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        for (source, id, updated) in items {
            tx.execute(
                "INSERT INTO seen (pr, source, item_id, updated_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (pr, source, item_id) DO UPDATE SET updated_at = excluded.updated_at",
                params![pr.url(), format!("{CHECK_SEEN}{source}"), id, updated],
            )?;
        }
        tx.commit()?;
        Ok(())
    }
}

/// The prefix of `check`'s sources in the `seen` table.
pub const CHECK_SEEN: &str = "check:";

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
        let mut stmt = self.conn.prepare(
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
            let mut stmt = tx.prepare(
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

    /// Every message that failed and is not delivered (kept, visible, retried unless permanent).
    pub fn outbox_problems(&self) -> Result<Vec<OutboxRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT * FROM outbox WHERE delivered_at IS NULL AND last_error IS NOT NULL ORDER BY created_at, rowid",
        )?;
        let rows = stmt.query_map([], outbox_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every outbox row, oldest first (for tests and `notify` output).
    pub fn outbox(&self) -> Result<Vec<OutboxRow>> {
        let mut stmt = self
            .conn
            .prepare("SELECT * FROM outbox ORDER BY created_at, rowid")?;
        let rows = stmt.query_map([], outbox_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn mark_delivered(&mut self, id: &str, at: Instant) -> Result<()> {
        self.conn.execute(
            "UPDATE outbox SET delivered_at = ?2, attempts = attempts + 1, last_error = NULL, claim_owner = NULL WHERE id = ?1",
            params![id, ts(at)],
        )?;
        Ok(())
    }

    /// Records a failed attempt: retried from `next_attempt` (epoch seconds), or never if permanent.
    pub fn mark_failed(
        &mut self,
        id: &str,
        error: &str,
        next_attempt: i64,
        permanent: bool,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE outbox SET attempts = attempts + 1, last_error = ?2, next_attempt = ?3, permanent = ?4, claim_owner = NULL WHERE id = ?1",
            params![id, secrets::mask(error), next_attempt, permanent],
        )?;
        Ok(())
    }

    /// A small persisted value (e.g. when a job's repository was last listed).
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }

    /// A cached log tail and its classification (JSON), for a job that finished at `completed_at`.
    pub fn cached_log(
        &self,
        forge: ForgeKind,
        job_id: u64,
        completed_at: &str,
    ) -> Result<Option<(String, String)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT tail, classification FROM log_cache WHERE forge = ?1 AND job_id = ?2 AND completed_at = ?3",
                params![forge.as_str(), job_id as i64, completed_at],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    pub fn cache_log(
        &mut self,
        forge: ForgeKind,
        job_id: u64,
        completed_at: &str,
        tail: &str,
        classification: &str,
    ) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO log_cache (forge, job_id, completed_at, tail, classification) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![forge.as_str(), job_id as i64, completed_at, tail, classification],
        )?;
        Ok(())
    }

    /// Records a command agent's run on `pr`: its window decides whose the next head is, and
    /// it counts as activity. Does nothing for a PR that is not watched.
    pub fn record_agent_run(&mut self, pr: &PrRef, started: Instant, ended: Instant) -> Result<()> {
        let Some(mut w) = self.watch(pr)? else {
            return Ok(());
        };
        w.status.memory.agent_run = Some((started, ended));
        w.status.memory.agent_activity_at = Some(ended);
        if let Some(fix) = w.status.memory.fix.as_mut().filter(|f| f.done_at.is_none()) {
            fix.done_at = Some(ended);
        }
        self.conn.execute(
            "UPDATE watches SET memory = ?2 WHERE id = ?1",
            params![w.id, serde_json::to_string(&w.status.memory)?],
        )?;
        Ok(())
    }

    /// Records that the agent finished message `id`: the fix in flight with that id ends now.
    /// Returns the PR it was for, if any watch had it in flight.
    pub fn fix_done(&mut self, id: &str, at: Instant) -> Result<Option<PrRef>> {
        for mut w in self.watches()? {
            if let Some(fix) = w.status.memory.fix.as_mut().filter(|f| f.message_id == id) {
                fix.done_at = Some(at);
                self.conn.execute(
                    "UPDATE watches SET memory = ?2, next_tick_at = CASE WHEN state = 'open' THEN ?3 ELSE next_tick_at END WHERE id = ?1",
                    params![w.id, serde_json::to_string(&w.status.memory)?, ts(at)],
                )?;
                return Ok(Some(w.pr));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Instant {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn migrates_a_fresh_database_and_refuses_a_newer_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        drop(Store::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, migrations::latest());
        conn.pragma_update(None, "user_version", 999).unwrap();
        drop(conn);
        let err = format!("{:#}", Store::open(&path).unwrap_err());
        assert!(err.contains("newer pr-monitor"), "{err}");
        let conn = Connection::open(&path).unwrap();
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, 999, "a newer database is never altered");
    }

    #[test]
    fn due_selects_only_open_unpaused_watches_whose_time_has_come() {
        let mut s = Store::open_in_memory().unwrap();
        let now = t("2026-11-29T12:00:00Z");
        let (a, b, c) = (
            PrRef::github("o/r", 1),
            PrRef::github("o/r", 2),
            PrRef::github("o/r", 3),
        );
        for pr in [&a, &b, &c] {
            s.add_watch(pr, &NewWatch::default(), now).unwrap();
        }
        s.set_paused(&b, true, now).unwrap();
        let lease = taken(s.lease(s.watch(&c).unwrap().unwrap().id, &holder("me"), 60, &never));
        s.record(
            lease,
            &TickRecord {
                status: WatchStatus::default(),
                next_tick_at: Some(t("2026-11-29T12:05:00Z")),
                last_tick_at: now,
                last_error: None,
                history: vec![],
                seen: vec![],
                outbox: vec![],
                resolved_intents: vec![],
            },
        )
        .unwrap();
        let due: Vec<u64> = s
            .due(now, false, &Selection::default())
            .unwrap()
            .iter()
            .map(|w| w.pr.number)
            .collect();
        assert_eq!(due, vec![1]);
        let later: Vec<u64> = s
            .due(t("2026-11-29T12:05:00Z"), false, &Selection::default())
            .unwrap()
            .iter()
            .map(|w| w.pr.number)
            .collect();
        assert_eq!(later, vec![1, 3]);
        let forced: Vec<u64> = s
            .due(now, true, &Selection::default())
            .unwrap()
            .iter()
            .map(|w| w.pr.number)
            .collect();
        assert_eq!(forced, vec![1, 3]);
    }

    fn holder(run: &str) -> Holder {
        Holder {
            run: run.into(),
            pid: 1,
            host: "host-a".into(),
            since: t("2026-11-29T12:00:00Z"),
            started: None,
        }
    }

    fn never(_: &Holder) -> bool {
        false
    }

    fn taken(leased: Result<Leased>) -> Lease {
        match leased.unwrap() {
            Leased::Taken(lease) => lease,
            other => panic!("not taken: {other:?}"),
        }
    }

    #[test]
    fn a_held_lease_blocks_a_second_run_and_names_its_holder() {
        let mut s = Store::open_in_memory().unwrap();
        let pr = PrRef::github("o/r", 1);
        s.add_watch(&pr, &NewWatch::default(), t("2026-11-29T12:00:00Z"))
            .unwrap();
        let id = s.watch(&pr).unwrap().unwrap().id;
        let first = taken(s.lease(id, &holder("run-a"), 60, &never));
        assert_eq!(s.held().unwrap(), vec![(id, holder("run-a"))]);
        match s.lease(id, &holder("run-b"), 60, &never).unwrap() {
            Leased::Held(Some(h)) => assert_eq!(h, holder("run-a")),
            other => panic!("{other:?}"),
        }
        s.release(first).unwrap();
        assert!(s.held().unwrap().is_empty());
        taken(s.lease(id, &holder("run-b"), 60, &never));
    }

    #[test]
    fn a_lease_whose_holder_is_gone_is_taken_over_at_once() {
        let mut s = Store::open_in_memory().unwrap();
        let pr = PrRef::github("o/r", 1);
        s.add_watch(&pr, &NewWatch::default(), t("2026-11-29T12:00:00Z"))
            .unwrap();
        let id = s.watch(&pr).unwrap().unwrap().id;
        let dead = taken(s.lease(id, &holder("dead"), 600, &never));
        let gone = |h: &Holder| h.run == "dead";
        let lease = match s.lease(id, &holder("next"), 600, &gone).unwrap() {
            Leased::TakenOver(lease, was) => {
                assert_eq!(was.run, "dead");
                lease
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(s.held().unwrap(), vec![(id, holder("next"))]);
        assert!(
            s.release(dead).is_ok() && s.held().unwrap().len() == 1,
            "the dead run's lease no longer releases the new holder's"
        );
        s.release(lease).unwrap();
        // An owner written before leases named holders waits for its expiry.
        s.conn
            .execute(
                "UPDATE watches SET lease_owner = 'old-style', lease_until = ?2 WHERE id = ?1",
                params![id, crate::clock::wall_secs() + 600],
            )
            .unwrap();
        let always = |_: &Holder| true;
        assert!(matches!(
            s.lease(id, &holder("next"), 600, &always).unwrap(),
            Leased::Held(None)
        ));
    }

    #[test]
    fn outbox_claims_hold_off_other_runs_until_delivered_or_their_holder_is_gone() {
        let mut s = Store::open_in_memory().unwrap();
        let message = |id: &str| OutboxMessage {
            id: id.into(),
            pr: "https://github.com/o/r/pull/1".into(),
            channel: "email".into(),
            kind: "ci".into(),
            subject: "PR #1: lint failed".into(),
            payload: "{}".into(),
            created_at: t("2026-11-29T12:00:00Z"),
        };
        s.enqueue(&[message("a"), message("b")]).unwrap();
        let ids = |rows: Vec<OutboxRow>| -> Vec<String> {
            rows.into_iter().map(|r| r.message.id).collect()
        };
        let first = s.claim_outbox(100, 700, &holder("first"), &never).unwrap();
        assert_eq!(ids(first), ["a", "b"]);
        assert!(
            s.claim_outbox(101, 701, &holder("second"), &never)
                .unwrap()
                .is_empty(),
            "claimed by a live run"
        );
        s.mark_delivered("a", t("2026-11-29T12:00:01Z")).unwrap();
        let gone = |h: &Holder| h.run == "first";
        let taken = s.claim_outbox(102, 702, &holder("second"), &gone).unwrap();
        assert_eq!(ids(taken), ["b"], "the gone run's undelivered claim only");
        s.mark_failed("b", "busy", 5000, false).unwrap();
        assert!(
            s.claim_outbox(103, 703, &holder("third"), &|_| true)
                .unwrap()
                .is_empty(),
            "a failed message waits for its next attempt, whoever claimed it before"
        );
        assert_eq!(
            ids(s
                .claim_outbox(5000, 5600, &holder("third"), &never)
                .unwrap()),
            ["b"]
        );
    }

    #[test]
    fn the_due_query_uses_its_index() {
        let s = Store::open_in_memory().unwrap();
        let plan: String = s
            .conn
            .query_row(
                "EXPLAIN QUERY PLAN SELECT id FROM watches WHERE paused = 0 AND next_tick_at IS NOT NULL AND next_tick_at <= '2026'",
                [],
                |r| r.get(3),
            )
            .unwrap();
        assert!(plan.contains("watches_due"), "{plan}");
    }
}

#[cfg(test)]
mod migration_tests {
    use super::*;

    #[test]
    fn a_version_one_database_with_data_migrates_and_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(migrations::MIGRATIONS[0]).unwrap();
            conn.execute(
                "INSERT INTO watches (forge, repo, number, added_at, next_tick_at, pill_ci, why, attempts, memory)
                 VALUES ('github', 'o/r', 7, '2026-11-01T00:00:00Z', '2026-11-01T00:00:30Z', 1, 'max_attempts', 3,
                         '{\"error_streak\": 2, \"a_field_from_the_future\": true}')",
                [],
            )
            .unwrap();
            conn.execute("INSERT INTO seen (pr, source, item_id, updated_at) VALUES ('https://github.com/o/r/pull/7', 'issue_comment', 'IC_1', 'x')", []).unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
        }
        let mut store = Store::open(&path).unwrap();
        let pr = PrRef::github("o/r", 7);
        let w = store.watch(&pr).unwrap().unwrap();
        assert!(w.status.pills.ci);
        assert_eq!(w.status.why, Some(Why::MaxAttempts));
        assert_eq!(w.status.attempts, 3);
        assert_eq!(
            w.status.memory.error_streak, 2,
            "old memory reads, unknown fields ignored"
        );
        assert_eq!(store.seen(&pr).unwrap().len(), 1);
        // The new tables work.
        store.set_meta("k", "v").unwrap();
        assert_eq!(store.meta("k").unwrap().as_deref(), Some("v"));
        assert!(store.pending_outbox(i64::MAX).unwrap().is_empty());
    }
}

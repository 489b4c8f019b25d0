//! SQLite storage. `Store` owns the connection and every SQL statement in the program; the rest
//! of pr-monitor speaks domain types to it (`due`, `record`, `add_watch` …).
//!
//! The database runs in WAL mode with a busy timeout, so a `run` and a `status` may overlap.
//! Each tick's outcome for a PR is written atomically (a chunk's outcomes in one batch, each
//! PR's a savepoint of it); a lease keeps two overlapping runs from acting on the same PR.

mod batch;
mod branches;
mod budget;
mod cache;
mod glance;
mod int;
mod intents;
mod metrics;
mod migrations;
mod outbox;
mod reads;
mod seen;
mod standings;
mod ticks;
mod watches;
mod web_keys;

pub use branches::BranchLook;
pub use budget::KeptBudget;
pub use glance::Glance;
pub use metrics::{Labels, StoredMetric};
pub use outbox::{OutboxMessage, OutboxRow};
pub(crate) use reads::kept_summary;
pub use reads::{KeptHints, KeptRead, Settled};
pub(crate) use seen::seen_after;
pub use seen::{CHECK_SEEN, Seen};
pub(crate) use ticks::as_recorded;
pub use ticks::{Lease, Leased, TickRecord};
pub use watches::{AutoFixChoice, Due, NewWatch, Selection};

/// How many prepared statements a connection keeps compiled.
const STATEMENT_CACHE: usize = 64;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, TransactionBehavior};

use crate::model::Instant;

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
    /// How many SQL statements the connection has started, counted only while
    /// `pr_monitor::store` logs at debug level (see [`Store::statements`]).
    statements: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

use crate::model::stamp as ts;

/// A stored instant column: NULL, or a value that does not read, is unknown.
fn parse_ts(s: Option<String>) -> Option<Instant> {
    s.and_then(|s| crate::model::parse_instant(&s).ok())
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
        let (mut conn, version) = opened;
        if version < migrations::latest() {
            drop(conn);
            return Self::open(path);
        }
        // Keys written on other web roots are rewritten when the file can be written; a
        // database that cannot be is read as it is.
        let stale = {
            let tx = conn.transaction()?;
            web_keys::stale(&tx, &crate::web_roots::roots())?
        };
        if stale && let Ok(store) = Self::open(path) {
            return Ok(store);
        }
        Ok(Store {
            conn,
            statements: None,
        })
    }

    /// How many SQL statements this store has started since it was opened for writing, when
    /// `pr_monitor::store` logs at debug level (a measure of what a run costs; nothing decides
    /// on it); `None` otherwise.
    pub fn statements(&self) -> Option<u64> {
        self.statements
            .as_ref()
            .map(|n| n.load(std::sync::atomic::Ordering::Relaxed))
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

    /// An in-memory database (the unit tests' store).
    pub fn open_in_memory() -> Result<Store> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(mut conn: Connection) -> Result<Store> {
        conn.busy_timeout(Duration::from_secs(10))?;
        let _mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        // A tick runs a few dozen distinct statements per PR; each is compiled once per run.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version = Self::version(&tx)?;
        let latest = migrations::latest();
        for (i, sql) in migrations::MIGRATIONS
            .iter()
            .enumerate()
            .skip(usize::try_from(version).context("the schema version is negative")?)
        {
            tx.execute_batch(sql)
                .with_context(|| format!("migration {} failed", i + 1))?;
        }
        if version < migrations::SUMMARY_DIGESTS {
            reads::digest_kept_summaries(&tx)?;
        }
        if version < migrations::HINT_COLUMNS {
            reads::move_kept_hints(&tx)?;
        }
        if version != latest {
            tx.pragma_update(None, "user_version", latest)?;
        }
        web_keys::rekey(&tx, &crate::web_roots::roots())?;
        tx.commit()?;
        glance::add_digest_function(&conn)?;
        let statements = if tracing::enabled!(target: "pr_monitor::store", tracing::Level::DEBUG) {
            let started = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
            let counter = std::sync::Arc::clone(&started);
            conn.trace_v2(
                rusqlite::trace::TraceEventCodes::SQLITE_TRACE_STMT,
                Some(move |_: rusqlite::trace::TraceEvent<'_>| {
                    counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }),
            )?;
            Some(started)
        } else {
            None
        };
        Ok(Store { conn, statements })
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod migration_tests;

//! Each watch's last full read, kept beside the summary fingerprint seen just before it: when
//! the next summary shows the same fingerprint, the tick decides on the kept snapshot instead
//! of reading it again. A read that cannot be kept or parsed is simply read again.

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::Store;
use crate::model::Snapshot;

/// A kept read: the summary fingerprint and the snapshot read after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptRead {
    pub summary: String,
    pub snapshot: Snapshot,
}

impl Store {
    /// The kept reads of `watch_ids` (those that have one that still parses).
    pub fn kept_reads(&self, watch_ids: &[i64]) -> Result<BTreeMap<i64, KeptRead>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT summary, snapshot FROM last_reads WHERE watch_id = ?1")?;
        let mut out = BTreeMap::new();
        for &id in watch_ids {
            let row: Option<(String, String)> = stmt
                .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            let Some((summary, snapshot)) = row else {
                continue;
            };
            if let Ok(snapshot) = serde_json::from_str(&snapshot) {
                out.insert(id, KeptRead { summary, snapshot });
            }
        }
        Ok(out)
    }

    /// Keeps `snapshot`, read after the summary `summary`, for watch `watch_id`. Held secrets
    /// are masked in what is kept (forge text may quote them), as everywhere in the database.
    pub fn keep_read(&mut self, watch_id: i64, summary: &str, snapshot: &Snapshot) -> Result<()> {
        let kept = crate::secrets::mask(&serde_json::to_string(snapshot)?);
        self.conn.execute(
            "INSERT OR REPLACE INTO last_reads (watch_id, summary, snapshot) VALUES (?1, ?2, ?3)",
            params![watch_id, crate::secrets::mask(summary), kept],
        )?;
        Ok(())
    }

    /// Drops watch `watch_id`'s kept read: its next tick reads it in full.
    pub fn forget_read(&mut self, watch_id: i64) -> Result<()> {
        self.conn
            .execute("DELETE FROM last_reads WHERE watch_id = ?1", [watch_id])?;
        Ok(())
    }
}

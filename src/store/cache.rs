//! Small persisted values: the meta table and the log cache.

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::Store;
use super::int::Uint;
use crate::model::ForgeKind;

/// A cached log's key: the forge, the job and when it finished.
pub(super) type LogKey = (ForgeKind, u64, String);

impl Store {
    /// A small persisted value (e.g. when a job's repository was last listed).
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
            .query_row([key], |r| r.get(0))
            .optional()?)
    }

    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.conn.prepare_cached(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")?
.execute(
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
            .prepare_cached(
                "SELECT tail, classification FROM log_cache WHERE forge = ?1 AND job_id = ?2 AND completed_at = ?3")?
.query_row(
                params![forge.as_str(), Uint(job_id), completed_at],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    /// The cached logs of `keys` ((forge, job id, completed at), as [`Store::cached_log`]
    /// takes them), in one statement: tail and classification by key, for those cached.
    pub fn cached_logs(&self, keys: &[LogKey]) -> Result<BTreeMap<LogKey, (String, String)>> {
        let wanted: Vec<(&str, u64, &str)> = keys
            .iter()
            .map(|(f, job, at)| (f.as_str(), *job, at.as_str()))
            .collect();
        let mut stmt = self.conn.prepare_cached(
            "SELECT l.forge, l.job_id, l.completed_at, l.tail, l.classification
             FROM (SELECT value ->> 0 AS forge, value ->> 1 AS job_id, value ->> 2 AS completed_at
                   FROM json_each(?1)) AS k
             JOIN log_cache AS l ON l.forge = k.forge AND l.job_id = k.job_id
                                AND l.completed_at = k.completed_at",
        )?;
        let mut out = BTreeMap::new();
        let mut rows = stmt.query([serde_json::to_string(&wanted)?])?;
        while let Some(r) = rows.next()? {
            let Ok(forge) = r.get::<_, String>(0)?.parse::<ForgeKind>() else {
                continue;
            };
            out.insert(
                (forge, r.get::<_, Uint>(1)?.0, r.get(2)?),
                (r.get(3)?, r.get(4)?),
            );
        }
        Ok(out)
    }

    pub fn cache_log(
        &mut self,
        forge: ForgeKind,
        job_id: u64,
        completed_at: &str,
        tail: &str,
        classification: &str,
    ) -> Result<()> {
        self.conn.prepare_cached(
            "INSERT OR REPLACE INTO log_cache (forge, job_id, completed_at, tail, classification) VALUES (?1, ?2, ?3, ?4, ?5)")?
.execute(
            params![forge.as_str(), Uint(job_id), completed_at, tail, classification],
        )?;
        Ok(())
    }
}

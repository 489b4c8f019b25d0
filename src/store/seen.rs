//! The seen table: what the tick already handled, and `check`'s own key space beside it.

use anyhow::Result;
use rusqlite::params;

use std::collections::BTreeMap;

use super::Store;
use crate::model::PrRef;

/// Items handled: (source, id) → updated_at.
pub type Seen = BTreeMap<(String, String), String>;

/// The prefix of `check`'s sources in the `seen` table.
pub const CHECK_SEEN: &str = "check:";

/// What the tick already handled once `marks` are recorded over `seen`, as [`Store::seen`]
/// then reads it (`check`'s own sources left out).
pub(crate) fn seen_after(seen: &Seen, marks: &[crate::model::plan::SeenMark]) -> Seen {
    let mut out = seen.clone();
    out.extend(
        marks
            .iter()
            .filter(|m| !m.source.as_str().starts_with(CHECK_SEEN))
            .map(|m| (m.key(), m.updated_at.clone())),
    );
    out
}

impl Store {
    /// What the tick already handled for `pr`: (source, id) → updated_at.
    pub fn seen(&self, pr: &PrRef) -> Result<Seen> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT source, item_id, updated_at FROM seen WHERE pr = ?1 AND source NOT LIKE 'check:%'",
        )?;
        let rows = stmt.query_map([pr.url()], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// What the tick already handled for each of `prs`, in one statement: by the PR's address,
    /// (source, id) → updated_at (a PR with nothing handled is absent).
    pub fn seen_of(&self, prs: &[&PrRef]) -> Result<BTreeMap<String, Seen>> {
        let urls: Vec<String> = prs.iter().map(|p| p.url()).collect();
        let mut stmt = self.conn.prepare_cached(
            "SELECT pr, source, item_id, updated_at FROM seen
             WHERE pr IN (SELECT value FROM json_each(?1)) AND source NOT LIKE 'check:%'",
        )?;
        let mut out: BTreeMap<String, Seen> = BTreeMap::new();
        let mut rows = stmt.query([serde_json::to_string(&urls)?])?;
        while let Some(r) = rows.next()? {
            out.entry(r.get(0)?)
                .or_default()
                .insert((r.get(1)?, r.get(2)?), r.get(3)?);
        }
        Ok(out)
    }

    /// What `check` already reported for `pr`: (source, id) → updated_at. `check` keeps its
    /// own key space in the `seen` table (sources prefixed [`CHECK_SEEN`]), so looking at a PR
    /// never changes what the tick forwards, and a tick never hides news from `check`.
    pub fn check_seen(&self, pr: &PrRef) -> Result<Seen> {
        let mut stmt = self.conn.prepare_cached(
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
        items: &[crate::model::plan::SeenMark],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        for crate::model::plan::SeenMark {
            source,
            id,
            updated_at: updated,
        } in items
        {
            tx.prepare_cached(
                "INSERT INTO seen (pr, source, item_id, updated_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (pr, source, item_id) DO UPDATE SET updated_at = excluded.updated_at",
            )?
            .execute(params![
                pr.url(),
                format!("{CHECK_SEEN}{}", source.as_str()),
                id,
                updated
            ])?;
        }
        tx.commit()?;
        Ok(())
    }
}

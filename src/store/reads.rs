//! Each watch's last full read, kept beside the summary fingerprint seen just before it: when
//! the next summary shows the same fingerprint, the tick decides on the kept snapshot instead
//! of reading it again. A read that cannot be kept or parsed is simply read again. Beside each
//! snapshot, its hints: what a summary read asks and compares with, so a group of PRs is
//! summarised without loading its snapshots (each chunk loads its own when it is read).

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::params;

use super::Store;
use crate::model::Snapshot;

/// A kept read: the summary fingerprint and the snapshot read after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptRead {
    pub summary: String,
    pub snapshot: Snapshot,
}

/// What a summary read needs of a kept read, without its snapshot: the fingerprint it was
/// read after, how far behind its base the branch was, and the threads it left unresolved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeptHints {
    pub summary: String,
    pub behind_by: Option<u64>,
    pub unresolved_threads: Vec<String>,
}

/// The stored form of [`KeptHints`] beside the fingerprint.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct StoredHints {
    behind_by: Option<u64>,
    unresolved_threads: Vec<String>,
}

impl KeptHints {
    /// The hints of `snapshot`, read after the summary `summary`.
    pub fn of(summary: &str, snapshot: &Snapshot) -> Self {
        KeptHints {
            summary: summary.to_owned(),
            behind_by: snapshot.behind_by,
            unresolved_threads: snapshot
                .unresolved_threads()
                .map(|t| t.id.clone())
                .collect(),
        }
    }
}

impl Store {
    /// The kept hints of `watch_ids` (those that have a kept read), in one statement. A read kept before hints
    /// were (no `hints`) has them worked out from its snapshot; one that no longer parses has
    /// none.
    pub fn kept_hints(&self, watch_ids: &[i64]) -> Result<BTreeMap<i64, KeptHints>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT watch_id, summary, hints, CASE WHEN hints IS NULL THEN snapshot END
             FROM last_reads WHERE watch_id IN (SELECT value FROM json_each(?1))",
        )?;
        let mut out = BTreeMap::new();
        let mut rows = stmt.query([serde_json::to_string(watch_ids)?])?;
        while let Some(r) = rows.next()? {
            let (id, summary): (i64, String) = (r.get(0)?, r.get(1)?);
            let (hints, snapshot): (Option<String>, Option<String>) = (r.get(2)?, r.get(3)?);
            let hints = match (hints, snapshot) {
                (Some(hints), _) => {
                    serde_json::from_str::<StoredHints>(&hints)
                        .ok()
                        .map(|h| KeptHints {
                            summary,
                            behind_by: h.behind_by,
                            unresolved_threads: h.unresolved_threads,
                        })
                }
                (None, Some(snapshot)) => serde_json::from_str(&snapshot)
                    .ok()
                    .map(|snapshot| KeptHints::of(&summary, &snapshot)),
                (None, None) => None,
            };
            if let Some(hints) = hints {
                out.insert(id, hints);
            }
        }
        Ok(out)
    }

    /// The kept reads of `watch_ids` (those that have one that still parses), in one statement.
    pub fn kept_reads(&self, watch_ids: &[i64]) -> Result<BTreeMap<i64, KeptRead>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT watch_id, summary, snapshot FROM last_reads
             WHERE watch_id IN (SELECT value FROM json_each(?1))",
        )?;
        let mut out = BTreeMap::new();
        let mut rows = stmt.query([serde_json::to_string(watch_ids)?])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let summary: String = r.get(1)?;
            let Ok(text) = r.get_ref(2)?.as_str() else {
                continue;
            };
            if let Ok(snapshot) = serde_json::from_str(text) {
                out.insert(id, KeptRead { summary, snapshot });
            }
        }
        Ok(out)
    }

    /// Keeps `snapshot`, read after the summary `summary`, for watch `watch_id`. Held secrets
    /// are masked in what is kept (forge text may quote them), as everywhere in the database.
    pub fn keep_read(&mut self, watch_id: i64, summary: &str, snapshot: &Snapshot) -> Result<()> {
        let kept = crate::secrets::mask(&serde_json::to_string(snapshot)?);
        let hints = KeptHints::of(summary, snapshot);
        let hints = crate::secrets::mask(&serde_json::to_string(&StoredHints {
            behind_by: hints.behind_by,
            unresolved_threads: hints.unresolved_threads,
        })?);
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO last_reads (watch_id, summary, snapshot, hints)
             VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![
                watch_id,
                crate::secrets::mask(summary),
                kept,
                hints
            ])?;
        Ok(())
    }

    /// Drops watch `watch_id`'s kept read: its next tick reads it in full.
    pub fn forget_read(&mut self, watch_id: i64) -> Result<()> {
        self.conn
            .prepare_cached("DELETE FROM last_reads WHERE watch_id = ?1")?
            .execute([watch_id])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::thread_with_id as thread;
    use crate::store::NewWatch;

    /// A kept read's hints come back without its snapshot; a read kept before hints were has
    /// them worked out from its snapshot, and one whose snapshot no longer parses has none.
    #[test]
    fn hints_are_kept_beside_each_read() {
        let mut s = Store::open_in_memory().unwrap();
        let now = crate::model::parse_instant("2026-11-29T12:00:00Z").unwrap();
        let mut ids = Vec::new();
        for n in 1..=3 {
            let pr = crate::model::PrRef::github("o/r", n);
            s.add_watch(&pr, &NewWatch::default(), now).unwrap();
            ids.push(s.watch(&pr).unwrap().unwrap().id);
        }
        let mut snapshot = crate::core::decide::tests::snap("aaa");
        snapshot.behind_by = Some(2);
        snapshot.threads = vec![thread("T1", false), thread("T2", true), thread("T3", false)];
        for &id in &ids {
            s.keep_read(id, "fp", &snapshot).unwrap();
        }
        s.conn
            .execute(
                "UPDATE last_reads SET hints = NULL WHERE watch_id = ?1",
                [ids[1]],
            )
            .unwrap();
        s.conn
            .execute(
                "UPDATE last_reads SET hints = NULL, snapshot = '{' WHERE watch_id = ?1",
                [ids[2]],
            )
            .unwrap();
        let want = KeptHints {
            summary: "fp".into(),
            behind_by: Some(2),
            unresolved_threads: vec!["T1".into(), "T3".into()],
        };
        let hints = s.kept_hints(&ids).unwrap();
        assert_eq!(hints.get(&ids[0]), Some(&want));
        assert_eq!(
            hints.get(&ids[1]),
            Some(&want),
            "worked out from the snapshot"
        );
        assert_eq!(hints.get(&ids[2]), None, "a snapshot that no longer parses");
        assert_eq!(KeptHints::of("fp", &snapshot), want);
    }
}

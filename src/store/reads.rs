//! Each watch's last full read, kept beside the summary fingerprint seen just before it: when
//! the next summary shows the same fingerprint, the tick decides on the kept snapshot instead
//! of reading it again. A read that cannot be kept or parsed is simply read again. Beside each
//! snapshot, its hints: what a summary read asks and compares with, so a group of PRs is
//! summarised without loading its snapshots (each chunk loads its own when it is read).

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::params;

use super::Store;
use crate::core::hash::Fingerprint;
use crate::model::{Instant, Snapshot};

/// A kept read: the summary fingerprint and the snapshot read after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptRead {
    pub summary: String,
    pub snapshot: Snapshot,
}

/// What a summary read needs of a kept read, without its snapshot: the fingerprint it was
/// read after, how far behind its base the branch was, the threads it left unresolved, and
/// the quiet decision last made on it, if it holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeptHints {
    pub summary: String,
    pub behind_by: Option<u64>,
    pub unresolved_threads: Vec<String>,
    pub settled: Option<Settled>,
}

/// A quiet decision made on a kept read (see [`crate::core::decide::settled_until`]): made at
/// `at` over the watch's stored row `row` and the context `context` (digests), it holds until
/// `until` while both are the same, and the PR is then next due `every` seconds after its tick
/// (`None`: never again).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Settled {
    pub at: Instant,
    pub until: Instant,
    #[serde(with = "hex")]
    pub row: u64,
    #[serde(with = "hex")]
    pub context: u64,
    pub every: Option<i64>,
}

impl Settled {
    /// Whether it holds at `now` over a watch whose stored row has the digest `row`.
    pub fn holds(&self, now: Instant, row: Option<crate::model::watch::RowDigest>) -> bool {
        self.holds_over(now, row.map(|r| r.row))
    }

    /// Whether it holds at `now` over a watch whose stored row's digest
    /// ([`crate::model::watch::RowDigest::row`]) is `row`.
    pub fn holds_over(&self, now: Instant, row: Option<u64>) -> bool {
        self.at <= now && now < self.until && row == Some(self.row)
    }
}

/// A digest kept as 16 hex digits: JSON numbers lose the high bits of a `u64` in SQLite.
mod hex {
    #[expect(
        clippy::trivially_copy_pass_by_ref,
        reason = "serde's `with` hands the field by reference"
    )]
    pub(super) fn serialize<S: serde::Serializer>(n: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{n:016x}"))
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let text: std::borrow::Cow<'de, str> = serde::Deserialize::deserialize(d)?;
        u64::from_str_radix(&text, 16).map_err(serde::de::Error::custom)
    }
}

/// The stored form of [`KeptHints`] beside the fingerprint.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct StoredHints {
    behind_by: Option<u64>,
    unresolved_threads: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    settled: Option<Settled>,
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
            settled: None,
        }
    }
}

/// How a summary's fingerprint is kept: as it is when it is a digest (masking could only
/// damage one), else with held secrets masked, as all forge text is.
pub(crate) fn kept_summary(fingerprint: &str) -> String {
    if Fingerprint::is_written(fingerprint) {
        fingerprint.to_owned()
    } else {
        crate::secrets::mask(fingerprint)
    }
}

/// Turns each summary kept as its whole text (before migration 12) into the digest the
/// summary read now gives for the same text, so the reads kept then still match.
pub(super) fn digest_kept_summaries(tx: &rusqlite::Connection) -> Result<()> {
    let texts: Vec<(i64, String)> = tx
        .prepare("SELECT watch_id, summary FROM last_reads")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut update = tx.prepare("UPDATE last_reads SET summary = ?2 WHERE watch_id = ?1")?;
    for (id, text) in texts {
        if !Fingerprint::is_written(&text) {
            update.execute(params![id, Fingerprint::of(&text)])?;
        }
    }
    Ok(())
}

impl Store {
    /// The kept hints of `watch_ids` (those that have a kept read), in one statement. A read kept before hints
    /// were (no `hints`) has them worked out from its snapshot; one that no longer parses has
    /// none.
    pub fn kept_hints(&self, watch_ids: &[i64]) -> Result<BTreeMap<i64, KeptHints>> {
        // The snapshot is read only for a read without hints.
        let mut stmt = self.conn.prepare_cached(
            "SELECT r.watch_id, r.summary, h.hints, CASE WHEN h.hints IS NULL THEN r.snapshot END
             FROM last_reads AS r LEFT JOIN read_hints AS h ON h.watch_id = r.watch_id
             WHERE r.watch_id IN (SELECT value FROM json_each(?1))",
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
                            settled: h.settled,
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

    /// Keeps `snapshot`, read after the summary `summary`, for watch `watch_id`, with its
    /// hints beside it, both or neither (in a batch: an error here must end the batch). Held
    /// secrets are masked in what is kept (forge text may quote them), as everywhere in the
    /// database.
    pub fn keep_read(&mut self, watch_id: i64, summary: &str, snapshot: &Snapshot) -> Result<()> {
        let kept = crate::secrets::mask(&serde_json::to_string(snapshot)?);
        let hints = KeptHints::of(summary, snapshot);
        let hints = crate::secrets::mask(&serde_json::to_string(&StoredHints {
            behind_by: hints.behind_by,
            unresolved_threads: hints.unresolved_threads,
            settled: None,
        })?);
        self.batch(|store| {
            store
                .conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO last_reads (watch_id, summary, snapshot, hints)
                     VALUES (?1, ?2, ?3, NULL)",
                )?
                .execute(params![watch_id, kept_summary(summary), kept])?;
            store
                .conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO read_hints (watch_id, hints) VALUES (?1, ?2)",
                )?
                .execute(params![watch_id, hints])?;
            Ok(())
        })
    }

    /// Keeps with each kept read named (watch id, the fingerprint it was read after, as
    /// kept) the quiet decision just made on it, or forgets the one it had (`None`), in one
    /// statement. A read replaced since (another fingerprint) is left alone. A read kept
    /// before hints were, which the statement cannot touch, gets its hints whole, worked out
    /// from its snapshot, with the decision (a second statement, only when there is one).
    pub fn settle(&mut self, reads: &[(i64, &str, Option<&Settled>)]) -> Result<()> {
        let rows = reads
            .iter()
            .map(|(id, summary, settled)| {
                Ok((id, summary, settled.map(serde_json::to_string).transpose()?))
            })
            .collect::<Result<Vec<_>>>()?;
        let updated = self
            .conn
            .prepare_cached(
                "UPDATE read_hints
                 SET hints = json_set(hints, '$.settled', json(COALESCE(t.settled, 'null')))
                 FROM (SELECT value ->> 0 AS id, value ->> 1 AS summary, value ->> 2 AS settled
                       FROM json_each(?1)) AS t
                 WHERE read_hints.watch_id = t.id
                   AND (SELECT summary FROM last_reads WHERE watch_id = t.id) = t.summary
                 RETURNING read_hints.watch_id",
            )?
            .query_map([serde_json::to_string(&rows)?], |r| r.get::<_, i64>(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?;
        let unhinted: BTreeMap<i64, (&str, &Settled)> = reads
            .iter()
            .filter(|(id, ..)| !updated.contains(id))
            .filter_map(|(id, summary, settled)| Some((*id, (*summary, (*settled)?))))
            .collect();
        if !unhinted.is_empty() {
            self.hint_old_reads(&unhinted)?;
        }
        Ok(())
    }

    /// Gives each read of `reads` (watch id → the fingerprint it was read after, the quiet
    /// decision made on it) that was kept before hints were its hints, with the decision.
    fn hint_old_reads(&mut self, reads: &BTreeMap<i64, (&str, &Settled)>) -> Result<()> {
        let ids: Vec<i64> = reads.keys().copied().collect();
        let old: Vec<(i64, String, String)> = self
            .conn
            .prepare_cached(
                "SELECT watch_id, summary, snapshot FROM last_reads AS r
                 WHERE watch_id IN (SELECT value FROM json_each(?1))
                   AND NOT EXISTS (SELECT 1 FROM read_hints AS h WHERE h.watch_id = r.watch_id)",
            )?
            .query_map([serde_json::to_string(&ids)?], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        for (id, summary, snapshot) in old {
            let Some((_, settled)) = reads.get(&id).filter(|(s, _)| *s == summary) else {
                continue;
            };
            let Ok(snapshot) = serde_json::from_str::<Snapshot>(&snapshot) else {
                continue;
            };
            let hints = KeptHints::of(&summary, &snapshot);
            let hints = crate::secrets::mask(&serde_json::to_string(&StoredHints {
                behind_by: hints.behind_by,
                unresolved_threads: hints.unresolved_threads,
                settled: Some((*settled).clone()),
            })?);
            self.conn
                .prepare_cached(
                    "INSERT OR IGNORE INTO read_hints (watch_id, hints) VALUES (?1, ?2)",
                )?
                .execute(params![id, hints])?;
        }
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
        for &id in &ids[1..] {
            s.conn
                .execute("DELETE FROM read_hints WHERE watch_id = ?1", [id])
                .unwrap();
        }
        s.conn
            .execute(
                "UPDATE last_reads SET snapshot = '{' WHERE watch_id = ?1",
                [ids[2]],
            )
            .unwrap();
        let want = KeptHints {
            summary: "fp".into(),
            behind_by: Some(2),
            unresolved_threads: vec!["T1".into(), "T3".into()],
            settled: None,
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

    /// A store watching one PR whose read is kept after the summary `fp`: its watch id, the
    /// time it was watched at and the snapshot kept.
    fn one_kept_read() -> (Store, i64, Instant, Snapshot) {
        let mut s = Store::open_in_memory().unwrap();
        let now = crate::model::parse_instant("2026-11-29T12:00:00Z").unwrap();
        let pr = crate::model::PrRef::github("o/r", 1);
        s.add_watch(&pr, &NewWatch::default(), now).unwrap();
        let id = s.watch(&pr).unwrap().unwrap().id;
        let snapshot = crate::core::decide::tests::snap("aaa");
        s.keep_read(id, "fp", &snapshot).unwrap();
        (s, id, now, snapshot)
    }

    /// A settled decision is kept beside the read it was made on, and goes with it: another
    /// fingerprint's read is left alone, `None` forgets it, and a new read has none. Its
    /// digests keep all 64 bits.
    #[test]
    fn a_settled_decision_is_kept_beside_its_read_and_goes_with_it() {
        let (mut s, id, now, snapshot) = one_kept_read();
        let settled = Settled {
            at: now,
            until: now + chrono::Duration::hours(1),
            row: u64::MAX - 1,
            context: 1 << 63,
            every: Some(300),
        };
        let kept = |s: &Store| s.kept_hints(&[id]).unwrap().remove(&id).unwrap().settled;
        s.settle(&[(id, "fp", Some(&settled))]).unwrap();
        assert_eq!(kept(&s), Some(settled.clone()));
        assert_eq!(
            s.kept_reads(&[id]).unwrap()[&id].snapshot,
            snapshot,
            "the read is as it was"
        );
        s.settle(&[(id, "another", None)]).unwrap();
        assert_eq!(kept(&s), Some(settled.clone()), "another read's");
        s.settle(&[(id, "fp", None)]).unwrap();
        assert_eq!(kept(&s), None);
        s.settle(&[(id, "fp", Some(&settled))]).unwrap();
        s.keep_read(id, "fp2", &snapshot).unwrap();
        assert_eq!(kept(&s), None, "a new read");
        // A read kept before hints were gets them whole with its first settled decision; a
        // decision on another read leaves it without.
        s.conn.execute("DELETE FROM read_hints", []).unwrap();
        s.settle(&[(id, "fp", Some(&settled))]).unwrap();
        assert_eq!(kept(&s), None, "another read's");
        s.settle(&[(id, "fp2", Some(&settled))]).unwrap();
        let hints = s.kept_hints(&[id]).unwrap().remove(&id).unwrap();
        assert_eq!(
            hints,
            KeptHints {
                settled: Some(settled),
                ..KeptHints::of("fp2", &snapshot)
            }
        );
    }

    /// Settling a chunk's decisions and forgetting a read write only beside the kept reads:
    /// the rows holding the snapshots are never rewritten (they are the large ones), and a
    /// read forgotten or replaced takes its hints with it.
    #[test]
    fn a_settled_decision_is_kept_without_rewriting_the_snapshot_beside_it() {
        let (mut s, id, now, snapshot) = one_kept_read();
        s.conn
            .execute_batch(
                "CREATE TRIGGER kept_as_it_is BEFORE UPDATE ON last_reads
                 BEGIN SELECT RAISE(ABORT, 'a kept read was rewritten'); END;",
            )
            .unwrap();
        let settled = Settled {
            at: now,
            until: now + chrono::Duration::hours(1),
            row: 7,
            context: 9,
            every: Some(300),
        };
        s.settle(&[(id, "fp", Some(&settled))]).unwrap();
        let kept = |s: &Store| s.kept_hints(&[id]).unwrap().remove(&id);
        assert_eq!(kept(&s).unwrap().settled, Some(settled.clone()));
        s.settle(&[(id, "fp", None)]).unwrap();
        assert_eq!(kept(&s).unwrap().settled, None);
        s.settle(&[(id, "fp", Some(&settled))]).unwrap();
        s.conn.execute_batch("DROP TRIGGER kept_as_it_is").unwrap();
        s.keep_read(id, "fp2", &snapshot).unwrap();
        assert_eq!(
            kept(&s),
            Some(KeptHints::of("fp2", &snapshot)),
            "a new read"
        );
        s.forget_read(id).unwrap();
        assert_eq!(kept(&s), None);
        let left: i64 = s
            .conn
            .query_row("SELECT count(*) FROM read_hints", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0, "hints go with their read");
    }
}

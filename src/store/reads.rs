//! Each watch's last full read, kept beside the summary fingerprint seen just before it: when
//! the next summary shows the same fingerprint, the tick decides on the kept snapshot instead
//! of reading it again. A read that cannot be kept or parsed is simply read again. Beside each
//! snapshot, its hints: what a summary read asks and compares with, so a group of PRs is
//! summarised without loading its snapshots (each chunk loads its own when it is read).
//!
//! The hints are kept as plain columns of a narrow table of their own (`kept_hints`), the
//! fingerprint repeated beside them: a group's hints are read from one index-ordered table with
//! no JSON to parse and no instant to read from text, and a chunk's settled decisions are
//! written without touching the snapshots. The settled decision is flat (two instants, two
//! digests, a cadence), so its parts are columns too: the quiet check compares them as they are
//! ([`Settled::holds_over`]), and a digest of them would have to be unpacked to be compared.

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::DateTime;
use rusqlite::params;

use super::Store;
use super::int::{signed, unsigned};
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
/// (`None`: never again). Its JSON form is the one kept before the hints were columns, read
/// once on upgrade ([`move_kept_hints`]).
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

    /// Its columns (`settled_at`, `settled_until`, `settled_row`, `settled_context`,
    /// `settled_every`): the instants in nanoseconds since the Unix epoch, the digests' bits
    /// signed. `None` for an instant past what that counts (after 2262), kept as no decision.
    fn columns(&self) -> Option<[Option<i64>; 5]> {
        Some([
            Some(self.at.timestamp_nanos_opt()?),
            Some(self.until.timestamp_nanos_opt()?),
            Some(signed(self.row)),
            Some(signed(self.context)),
            self.every,
        ])
    }

    /// The decision [`Settled::columns`] kept, when there is one.
    fn from_columns([at, until, row, context, every]: [Option<i64>; 5]) -> Option<Settled> {
        Some(Settled {
            at: DateTime::from_timestamp_nanos(at?),
            until: DateTime::from_timestamp_nanos(until?),
            row: unsigned(row?),
            context: unsigned(context?),
            every,
        })
    }
}

/// A digest kept as 16 hex digits in the JSON form: JSON numbers lose the high bits of a
/// `u64` in SQLite.
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

/// The form hints were kept in before they were columns (a JSON text beside the read), read
/// once on upgrade ([`move_kept_hints`]).
#[derive(Debug, serde::Deserialize)]
struct StoredHints {
    behind_by: Option<u64>,
    unresolved_threads: Vec<String>,
    #[serde(default)]
    settled: Option<Settled>,
}

/// The unresolved threads' ids as kept: one per line, secrets masked as in all forge text (a
/// line break inside an id, or a masked one, only makes the summary read ask again).
fn threads_text(ids: &[String]) -> String {
    crate::secrets::mask(&ids.join("\n"))
}

/// The ids [`threads_text`] kept.
fn threads_of(text: &str) -> Vec<String> {
    if text.is_empty() {
        Vec::new()
    } else {
        text.split('\n').map(str::to_owned).collect()
    }
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

/// The statement keeping a read's hints: `?1` the watch, then its fingerprint as kept, how far
/// behind, the threads ([`threads_text`]) and the five parts of its settled decision
/// ([`Settled::columns`]).
const KEEP_HINTS: &str = "INSERT OR REPLACE INTO kept_hints
     (watch_id, summary, behind_by, threads,
      settled_at, settled_until, settled_row, settled_context, settled_every)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

/// Keeps `hints` for watch `watch_id` with `conn`'s statement [`KEEP_HINTS`].
fn keep_hints(conn: &rusqlite::Connection, watch_id: i64, hints: &KeptHints) -> Result<()> {
    let [at, until, row, context, every] = hints
        .settled
        .as_ref()
        .and_then(Settled::columns)
        .unwrap_or_default();
    conn.prepare_cached(KEEP_HINTS)?.execute(params![
        watch_id,
        kept_summary(&hints.summary),
        hints.behind_by.map(super::int::Uint),
        threads_text(&hints.unresolved_threads),
        at,
        until,
        row,
        context,
        every
    ])?;
    Ok(())
}

/// Moves the hints kept as JSON beside each read (migration 13's `read_hints`, or a read's
/// snapshot where it has none) into their columns (migration 14's `kept_hints`), as the last
/// build read them: a read whose hints or snapshot no longer parse has none. Then drops
/// `read_hints`.
pub(super) fn move_kept_hints(tx: &rusqlite::Connection) -> Result<()> {
    let old: Vec<(i64, String, Option<String>, Option<String>)> = tx
        .prepare(
            "SELECT r.watch_id, r.summary, h.hints, CASE WHEN h.hints IS NULL THEN r.snapshot END
             FROM last_reads AS r LEFT JOIN read_hints AS h ON h.watch_id = r.watch_id",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (id, summary, hints, snapshot) in old {
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
            keep_hints(tx, id, &hints)?;
        }
    }
    tx.execute_batch("DROP TABLE read_hints")?;
    Ok(())
}

/// The columns of `kept_hints` a group's glance reads ([`super::Store::glances`]), each named
/// after `prefix`, in the order [`hints_from`] reads them.
pub(super) fn hint_columns(prefix: &str) -> String {
    [
        "summary",
        "behind_by",
        "threads",
        "settled_at",
        "settled_until",
        "settled_row",
        "settled_context",
        "settled_every",
    ]
    .map(|c| format!("{prefix}{c}"))
    .join(", ")
}

/// The hints in `r`'s columns from `first` on, as [`hint_columns`] names them: `None` when
/// there is no kept read (no fingerprint). A part that does not read is left out (a number
/// out of range, a settled decision not whole), never an error: the PR is only read again.
pub(super) fn hints_from(r: &rusqlite::Row<'_>, first: usize) -> Option<KeptHints> {
    let summary: String = r.get(first).ok()?;
    let number = |i: usize| r.get::<_, Option<i64>>(first + i).ok().flatten();
    Some(KeptHints {
        summary,
        behind_by: number(1).and_then(|n| u64::try_from(n).ok()),
        unresolved_threads: r
            .get_ref(first + 2)
            .ok()
            .and_then(|v| v.as_str().ok())
            .map(threads_of)
            .unwrap_or_default(),
        settled: Settled::from_columns([number(3), number(4), number(5), number(6), number(7)]),
    })
}

impl Store {
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
        self.batch(|store| {
            store
                .conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO last_reads (watch_id, summary, snapshot, hints)
                     VALUES (?1, ?2, ?3, NULL)",
                )?
                .execute(params![watch_id, kept_summary(summary), kept])?;
            keep_hints(&store.conn, watch_id, &hints)
        })
    }

    /// Keeps with each kept read named (watch id, the fingerprint it was read after, as
    /// kept) the quiet decision just made on it, or forgets the one it had (`None`), in one
    /// statement. A read replaced since (another fingerprint) is left alone.
    pub fn settle(&mut self, reads: &[(i64, &str, Option<&Settled>)]) -> Result<()> {
        let rows: Vec<(i64, &str, [Option<i64>; 5])> = reads
            .iter()
            .map(|&(id, summary, settled)| {
                let columns = settled.and_then(Settled::columns).unwrap_or_default();
                (id, summary, columns)
            })
            .collect();
        self.conn
            .prepare_cached(
                "UPDATE kept_hints
                 SET settled_at = t.at, settled_until = t.until, settled_row = t.row,
                     settled_context = t.context, settled_every = t.every
                 FROM (SELECT value ->> 0 AS id, value ->> 1 AS summary,
                              value ->> '$[2][0]' AS at, value ->> '$[2][1]' AS until,
                              value ->> '$[2][2]' AS row, value ->> '$[2][3]' AS context,
                              value ->> '$[2][4]' AS every
                       FROM json_each(?1)) AS t
                 WHERE kept_hints.watch_id = t.id AND kept_hints.summary = t.summary",
            )?
            .execute([serde_json::to_string(&rows)?])?;
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

    /// A kept read's hints come back with its watch's glance, without its snapshot, each
    /// unresolved thread as it was.
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
        let mut none = crate::core::decide::tests::snap("bbb");
        none.threads = vec![thread("T2", true)];
        s.keep_read(ids[0], "fp", &snapshot).unwrap();
        s.keep_read(ids[1], "fp2", &none).unwrap();
        let want = KeptHints {
            summary: "fp".into(),
            behind_by: Some(2),
            unresolved_threads: vec!["T1".into(), "T3".into()],
            settled: None,
        };
        let hints = s.glances(&ids).unwrap().1;
        assert_eq!(hints.get(&ids[0]), Some(&want));
        assert_eq!(KeptHints::of("fp", &snapshot), want);
        assert_eq!(hints.get(&ids[1]), Some(&KeptHints::of("fp2", &none)));
        assert!(hints[&ids[1]].unresolved_threads.is_empty());
        assert_eq!(hints.get(&ids[2]), None, "no kept read");
        // A part that does not read is left out, and the glance goes on.
        s.conn
            .execute(
                "UPDATE kept_hints SET behind_by = -1, settled_until = 1, settled_row = 2,
                        settled_context = 3
                 WHERE watch_id = ?1",
                [ids[0]],
            )
            .unwrap();
        let (glances, hints) = s.glances(&ids).unwrap();
        assert_eq!(glances.len(), 3);
        assert_eq!(
            hints[&ids[0]],
            KeptHints {
                behind_by: None,
                ..want
            },
            "no settled decision without when it was made"
        );
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
    /// digests keep all 64 bits, its instants every nanosecond, and a PR never due again stays
    /// so.
    #[test]
    fn a_settled_decision_is_kept_beside_its_read_and_goes_with_it() {
        let (mut s, id, now, snapshot) = one_kept_read();
        let now = now + chrono::Duration::nanoseconds(123_456_789);
        let settled = Settled {
            at: now,
            until: now + chrono::Duration::hours(1),
            row: u64::MAX - 1,
            context: 1 << 63,
            every: Some(300),
        };
        let kept = |s: &Store| s.glances(&[id]).unwrap().1.remove(&id).unwrap().settled;
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
        let never = Settled {
            every: None,
            row: 0,
            ..settled.clone()
        };
        s.settle(&[(id, "fp", Some(&never))]).unwrap();
        assert_eq!(kept(&s), Some(never), "never due again");
        s.keep_read(id, "fp2", &snapshot).unwrap();
        assert_eq!(kept(&s), None, "a new read");
        // An instant past what the columns count is no decision.
        let far = Settled {
            until: crate::model::parse_instant("2300-01-01T00:00:00Z").unwrap(),
            ..settled
        };
        s.settle(&[(id, "fp2", Some(&far))]).unwrap();
        assert_eq!(kept(&s), None);
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
        let kept = |s: &Store| s.glances(&[id]).unwrap().1.remove(&id);
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
            .query_row("SELECT count(*) FROM kept_hints", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0, "hints go with their read");
    }

    /// Thread ids are kept one per line, none as an empty text.
    #[test]
    fn thread_ids_are_kept_one_per_line() {
        for ids in [
            vec![],
            vec!["PRRT_1".to_owned()],
            vec!["a".into(), "b".into()],
        ] {
            assert_eq!(threads_of(&threads_text(&ids)), ids);
        }
        assert_eq!(threads_text(&["a".into(), "b".into()]), "a\nb");
    }
}

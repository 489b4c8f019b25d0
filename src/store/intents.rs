//! The `intents` table: a forge write recorded before it is made ([`crate::model::intent`]), read
//! back open by the next tick of its watch, and marked resolved in the record of the tick that
//! can tell what became of it; the same write asked again while it is open is one row. A
//! resolved intent is kept for a while (it explains a history line) and then pruned in a later
//! record of its watch: at most [`KEEP_RESOLVED`] per watch, none resolved more than
//! [`KEEP_RESOLVED_SECS`] before that record, so the table never grows with a PR's age.

use anyhow::Result;
use rusqlite::params;

use super::{Store, parse_ts, ts};
use crate::model::intent::{Intent, IntentKind, IntentLog};
use crate::model::{Instant, Sha};

impl IntentLog for Store {
    fn record_intent(
        &mut self,
        watch_id: i64,
        kind: IntentKind,
        head: &Sha,
        detail: &str,
        at: Instant,
    ) -> Result<()> {
        // A branch update asked again on the same head while its first record is open (one
        // that failed, or that the forge has not shown yet) keeps that first record: the
        // earlier time, and one row however often it is asked. Such a record stays open for
        // as long as the head is the same, so it is never the one a tick resolves. Any other
        // kind is resolved by the next read, maybe in the very tick that asks again: a new row.
        let sql = if kind == IntentKind::UpdateBranch {
            "INSERT INTO intents (watch_id, kind, head, detail, created_at)
             SELECT ?1, ?2, ?3, ?4, ?5
             WHERE NOT EXISTS (SELECT 1 FROM intents WHERE watch_id = ?1 AND kind = ?2
                               AND head = ?3 AND detail = ?4 AND resolved_at IS NULL)"
        } else {
            "INSERT INTO intents (watch_id, kind, head, detail, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)"
        };
        self.conn.execute(
            sql,
            params![watch_id, kind.as_str(), head.as_str(), detail, ts(at)],
        )?;
        Ok(())
    }
}

impl Store {
    /// The watch's intents that no tick has reconciled yet, oldest first. A row of a kind
    /// this build does not know is left out (and left open).
    pub fn open_intents(&self, watch_id: i64) -> Result<Vec<Intent>> {
        Ok(self
            .open_intents_of(&[watch_id])?
            .remove(&watch_id)
            .unwrap_or_default())
    }

    /// The open intents of each of `watch_ids` ([`Store::open_intents`]), in one statement; a
    /// watch with none is absent.
    pub fn open_intents_of(
        &self,
        watch_ids: &[i64],
    ) -> Result<std::collections::BTreeMap<i64, Vec<Intent>>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT watch_id, id, kind, head, detail, created_at FROM intents
             WHERE watch_id IN (SELECT value FROM json_each(?1)) AND resolved_at IS NULL
             ORDER BY id",
        )?;
        let rows = stmt.query_map([serde_json::to_string(watch_ids)?], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })?;
        let mut out: std::collections::BTreeMap<i64, Vec<Intent>> =
            std::collections::BTreeMap::new();
        for row in rows {
            let (watch_id, id, kind, head, detail, created_at) = row?;
            if let Some(kind) = IntentKind::parse(&kind) {
                out.entry(watch_id).or_default().push(Intent {
                    id,
                    kind,
                    head: Sha(head),
                    detail,
                    created_at: parse_ts(created_at).unwrap_or_default(),
                });
            }
        }
        Ok(out)
    }
}

/// The most resolved intents kept per watch.
pub(super) const KEEP_RESOLVED: i64 = 20;

/// How long a resolved intent is kept, before the record of its watch's tick.
pub(super) const KEEP_RESOLVED_SECS: i64 = 7 * 86_400;

/// Marks `ids` resolved at `at`, inside a tick's record of `watch_id`, and prunes the watch's
/// resolved intents beyond [`KEEP_RESOLVED`] or [`KEEP_RESOLVED_SECS`].
pub(super) fn resolve(
    tx: &rusqlite::Connection,
    watch_id: i64,
    ids: &[i64],
    at: Instant,
) -> Result<()> {
    for id in ids {
        tx.prepare_cached(
            "UPDATE intents SET resolved_at = ?2 WHERE id = ?1 AND resolved_at IS NULL",
        )?
        .execute(params![id, ts(at)])?;
    }
    let oldest_kept = at - chrono::Duration::seconds(KEEP_RESOLVED_SECS);
    tx.prepare_cached(
        "DELETE FROM intents
         WHERE watch_id = ?1 AND resolved_at IS NOT NULL
           AND (resolved_at < ?2 OR id NOT IN (
                SELECT id FROM intents WHERE watch_id = ?1 AND resolved_at IS NOT NULL
                ORDER BY id DESC LIMIT ?3))",
    )?
    .execute(params![watch_id, ts(oldest_kept), KEEP_RESOLVED])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::watch::WatchStatus;
    use crate::store::{NewWatch, TickRecord};

    fn at(s: &str) -> Instant {
        crate::model::parse_instant(s).unwrap_or_default()
    }

    #[test]
    fn an_intent_stays_open_until_a_record_resolves_it_is_one_row_while_open_and_goes_with_its_watch()
     {
        let mut s = Store::open_in_memory().unwrap();
        let now = at("2026-11-29T12:00:00Z");
        let pr = crate::model::PrRef::github("o/r", 1);
        s.add_watch(&pr, &NewWatch::default(), now).unwrap();
        let id = s.watch(&pr).unwrap().unwrap().id;
        s.record_intent(id, IntentKind::UpdateBranch, &Sha("a".into()), "merge", now)
            .unwrap();
        s.record_intent(id, IntentKind::Rerun, &Sha("a".into()), "a:lint", now)
            .unwrap();
        let open = s.open_intents(id).unwrap();
        assert_eq!(
            open.iter().map(|i| i.kind).collect::<Vec<_>>(),
            vec![IntentKind::UpdateBranch, IntentKind::Rerun]
        );
        assert_eq!(open[1].guards().collect::<Vec<_>>(), vec!["a:lint"]);
        let never = |_: &crate::holder::Holder| false;
        let crate::store::Leased::Taken(lease) = s
            .lease(id, &crate::holder::Holder::new_run(), 60, &never)
            .unwrap()
        else {
            panic!("a free watch is leased")
        };
        s.record(
            lease,
            &crate::model::watch::Memory::default(),
            &TickRecord {
                resolved_intents: vec![open[0].id],
                ..TickRecord::bare(WatchStatus::default(), now)
            },
        )
        .unwrap();
        assert_eq!(s.open_intents(id).unwrap(), vec![open[1].clone()]);
        // A branch update asked again while open is one row, its first time kept; once
        // resolved, a new row. Any other kind asked again is a new row.
        let later = now + chrono::Duration::minutes(5);
        s.record_intent(id, IntentKind::UpdateBranch, &Sha("b".into()), "merge", now)
            .unwrap();
        s.record_intent(
            id,
            IntentKind::UpdateBranch,
            &Sha("b".into()),
            "merge",
            later,
        )
        .unwrap();
        s.record_intent(
            id,
            IntentKind::UpdateBranch,
            &Sha("a".into()),
            "merge",
            later,
        )
        .unwrap();
        s.record_intent(id, IntentKind::Rerun, &Sha("a".into()), "a:lint", later)
            .unwrap();
        let again = s.open_intents(id).unwrap();
        let at_of = |kind, head: &str| {
            again
                .iter()
                .filter(|i| i.kind == kind && i.head.as_str() == head)
                .map(|i| i.created_at)
                .collect::<Vec<_>>()
        };
        assert_eq!(at_of(IntentKind::UpdateBranch, "b"), vec![now]);
        assert_eq!(at_of(IntentKind::UpdateBranch, "a"), vec![later]);
        assert_eq!(at_of(IntentKind::Rerun, "a"), vec![now, later]);
        s.remove_watch(&pr).unwrap();
        let left: i64 = s
            .conn
            .query_row("SELECT count(*) FROM intents", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0, "a watch's intents go with it");
    }
}

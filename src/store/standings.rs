//! The watches' standings ([`crate::model::standing`]): each watch's id, place and the few
//! columns its need and the counts depend on, read without its memory, so the status page
//! and the metrics order and count ten thousand PRs without loading them; and a read
//! snapshot, so a page read in many statements shows one moment.

use anyhow::Result;
use rusqlite::Row;

use super::Store;
use super::int::Uint;
use super::watches::{text, time};
use crate::model::PrState;
use crate::model::standing::{Placed, Standing};
use crate::model::watch::{Ci, Pills};

/// A standing row, read as a watch's load reads the same columns (a state that does not read
/// is open, an instant that does not read is none).
fn placed_from_row(row: &Row<'_>) -> rusqlite::Result<Placed> {
    Ok(Placed {
        id: row.get(0)?,
        repo: row.get(1)?,
        number: row.get::<_, Uint>(2)?.0,
        standing: Standing {
            state: text(row, 3)?.parse::<PrState>().unwrap_or(PrState::Open),
            pills: Pills {
                ci: Ci::from_flags(row.get(4)?, row.get(5)?),
                cnf: row.get(6)?,
                cmt: row.get(7)?,
            },
            error: row.get(8)?,
            paused: row.get(9)?,
            armed: row.get(10)?,
            next_tick_at: time(row, 11)?,
        },
    })
}

impl Store {
    /// Every watch's standing, oldest first (the order [`Store::watches`] loads them in).
    pub fn standings(&self) -> Result<Vec<Placed>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, repo, number, state, pill_ci, pill_ci_fixing, pill_cnf, pill_cmt,
                    last_error IS NOT NULL, paused, merge_armed, next_tick_at
             FROM watches ORDER BY id",
        )?;
        let rows = stmt.query_map([], placed_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// `read` over one snapshot of the database: what another process commits meanwhile is
    /// not seen by any of its statements.
    pub fn snapshot<T>(&self, read: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
        let tx = self.conn.unchecked_transaction()?;
        let out = read(self)?;
        tx.finish()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::watch;
    use crate::model::watch::{Merge, Watch};
    use crate::model::{ForgeKind, PrRef};
    use crate::store::NewWatch;
    use crate::store::tests::t;

    /// Whatever a row holds, its standing reads as the watch loaded whole stands.
    #[test]
    fn a_standing_is_what_the_watch_loaded_whole_stands() {
        let mut s = Store::open_in_memory().unwrap();
        let mut lit = watch();
        lit.pr = PrRef::github("o/b", 2);
        lit.status.pills.ci = Ci::Lit;
        lit.status.pills.cmt = 2;
        lit.status.merge = Merge::Armed {
            at: t("2026-11-29T11:00:00Z"),
            via: None,
        };
        lit.last_error = Some("boom".into());
        let mut merged = watch();
        merged.pr = PrRef {
            forge: ForgeKind::GitLab,
            repo: "g/a".into(),
            number: 1,
        };
        merged.status.state = PrState::Merged;
        merged.status.pills.ci = Ci::Fixing;
        merged.status.pills.cnf = true;
        merged.next_tick_at = Some(t("2026-11-29T12:05:00Z"));
        let mut paused = watch();
        paused.pr = PrRef::github("o/a", 3);
        paused.paused = true;
        for w in [lit, merged, paused] {
            s.keep_watch(&w, &[]).unwrap();
        }
        s.conn
            .execute_batch(
                "INSERT INTO watches (forge, repo, number, added_at, state, next_tick_at, memory)
                 VALUES ('elsewhere', 'o/z', 9, 'x', 'weird', 'not a time', 'not json')",
            )
            .unwrap();
        let whole: Vec<Placed> = s
            .watches()
            .unwrap()
            .iter()
            .map(|w: &Watch| Placed {
                id: w.id,
                repo: w.pr.repo.clone(),
                number: w.pr.number,
                standing: Standing::of(w),
            })
            .collect();
        assert_eq!(whole.len(), 4);
        assert_eq!(whole.iter().filter(|p| p.standing.paused).count(), 1);
        assert_eq!(s.standings().unwrap(), whole);
    }

    #[test]
    fn a_snapshot_does_not_see_what_is_committed_while_it_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let reader = Store::open(&path).unwrap();
        let mut writer = Store::open(&path).unwrap();
        let now = t("2026-11-29T12:00:00Z");
        writer
            .add_watch(&PrRef::github("o/a", 1), &NewWatch::default(), now)
            .unwrap();
        let seen = reader
            .snapshot(|r| {
                let before = r.standings()?.len();
                writer.add_watch(&PrRef::github("o/a", 2), &NewWatch::default(), now)?;
                Ok((before, r.standings()?.len()))
            })
            .unwrap();
        assert_eq!(seen, (1, 1));
        assert_eq!(reader.standings().unwrap().len(), 2);
    }
}

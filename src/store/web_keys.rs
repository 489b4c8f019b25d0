//! A PR's seen items, history and outbox rows are keyed by its web address, written on its
//! forge's web root. The `meta` table records the roots the keys were written on
//! (`key_root.github`, `key_root.gitlab`; none recorded: the public forges', which every
//! version before these keys wrote); when the configured roots differ (a GitHub Enterprise or
//! self-managed GitLab host configured, or `web_url` changed), every key is rewritten onto the
//! new root in the transaction that opens the database, so nothing is lost.

use anyhow::Result;
use rusqlite::{Transaction, params};

use crate::model::ForgeKind;
use crate::model::web::WebRoots;

/// The tables whose `pr` column is a PR's web address.
const KEYED: [&str; 3] = ["seen", "history", "outbox"];

fn meta_key(forge: ForgeKind) -> String {
    format!("key_root.{}", forge.as_str())
}

/// The root each forge's keys are written on, as recorded; the public forge's when none is.
fn recorded(tx: &Transaction<'_>, forge: ForgeKind) -> Result<String> {
    let mut stmt = tx.prepare("SELECT value FROM meta WHERE key = ?1")?;
    let mut rows = stmt.query([meta_key(forge)])?;
    Ok(match rows.next()? {
        Some(row) => row.get(0)?,
        None => WebRoots::default().of(forge).to_owned(),
    })
}

/// Whether keys written on other roots than `roots` are kept in the database.
pub(super) fn stale(tx: &Transaction<'_>, roots: &WebRoots) -> Result<bool> {
    for forge in [ForgeKind::GitHub, ForgeKind::GitLab] {
        if recorded(tx, forge)? != roots.of(forge) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Rewrites every key written on another root onto `roots`, and records them. A GitLab
/// address has `/-/merge_requests/` (no GitHub repository path has `/-/`), so two forges on
/// one host keep apart.
pub(super) fn rekey(tx: &Transaction<'_>, roots: &WebRoots) -> Result<()> {
    for forge in [ForgeKind::GitHub, ForgeKind::GitLab] {
        let new = roots.of(forge);
        let old = recorded(tx, forge)?;
        if old == new {
            continue;
        }
        let shape = match forge {
            ForgeKind::GitHub => "NOT LIKE '%/-/merge_requests/%'",
            ForgeKind::GitLab => "LIKE '%/-/merge_requests/%'",
        };
        for table in KEYED {
            tx.execute(
                &format!(
                    "UPDATE OR REPLACE {table} SET pr = ?2 || substr(pr, length(?1) + 1)
                     WHERE substr(pr, 1, length(?1) + 1) = ?1 || '/' AND pr {shape}"
                ),
                params![old, new],
            )?;
        }
        tx.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![meta_key(forge), new],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;

    #[test]
    fn keys_move_to_their_own_forges_root_even_when_both_share_a_host() {
        let mut conn = Connection::open_in_memory().unwrap();
        for sql in super::super::migrations::MIGRATIONS {
            conn.execute_batch(sql).unwrap();
        }
        for pr in [
            "https://github.com/o/r/pull/1",
            "https://gitlab.com/g/p/-/merge_requests/2",
            "https://github.com.evil/o/r/pull/3",
        ] {
            conn.execute(
                "INSERT INTO history (pr, at, what) VALUES (?1, 'now', 'x')",
                [pr],
            )
            .unwrap();
        }
        let roots = WebRoots {
            github: "http://127.0.0.1:9".into(),
            gitlab: "http://127.0.0.1:9".into(),
        };
        let tx = conn.transaction().unwrap();
        assert!(stale(&tx, &roots).unwrap());
        rekey(&tx, &roots).unwrap();
        assert!(!stale(&tx, &roots).unwrap());
        // Once moved, a second pass changes nothing.
        rekey(&tx, &roots).unwrap();
        let mut stmt = tx.prepare("SELECT pr FROM history ORDER BY id").unwrap();
        let keys: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            keys,
            [
                "http://127.0.0.1:9/o/r/pull/1",
                "http://127.0.0.1:9/g/p/-/merge_requests/2",
                "https://github.com.evil/o/r/pull/3",
            ]
        );
    }
}

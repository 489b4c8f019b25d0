use super::*;
use crate::model::PrRef;
use crate::model::watch::Why;

/// A database at schema `version` in `dir`, as a build of then left it once `fill` wrote to it.
fn old_database(
    dir: &tempfile::TempDir,
    version: usize,
    fill: impl FnOnce(&Connection),
) -> std::path::PathBuf {
    let path = dir.path().join("old.db");
    let conn = Connection::open(&path).unwrap();
    for sql in &migrations::MIGRATIONS[..version] {
        conn.execute_batch(sql).unwrap();
    }
    fill(&conn);
    conn.pragma_update(None, "user_version", i64::try_from(version).unwrap())
        .unwrap();
    path
}

/// Watches PR `n` of `o/r` in an old database.
fn watch_in(conn: &Connection, n: i64) {
    conn.execute(
        "INSERT INTO watches (forge, repo, number, added_at) VALUES ('github', 'o/r', ?1, '2026-11-01T00:00:00Z')",
        [n],
    )
    .unwrap();
}

#[test]
fn a_version_one_database_with_data_migrates_and_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(migrations::MIGRATIONS[0]).unwrap();
        conn.execute(
            "INSERT INTO watches (forge, repo, number, added_at, next_tick_at, pill_ci, why, attempts, memory)
             VALUES ('github', 'o/r', 7, '2026-11-01T00:00:00Z', '2026-11-01T00:00:30Z', 1, 'max_attempts', 3,
                     '{\"error_streak\": 2, \"a_field_from_the_future\": true}')",
            [],
        )
        .unwrap();
        conn.execute("INSERT INTO seen (pr, source, item_id, updated_at) VALUES ('https://github.com/o/r/pull/7', 'issue_comment', 'IC_1', 'x')", []).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let pr = PrRef::github("o/r", 7);
    let w = store.watch(&pr).unwrap().unwrap();
    assert_eq!(w.status.pills.ci, crate::model::watch::Ci::Lit);
    assert_eq!(w.status.why, Some(Why::MaxAttempts));
    assert_eq!(w.status.attempts, 3);
    assert_eq!(
        w.status.memory.error_streak, 2,
        "old memory reads, unknown fields ignored"
    );
    assert_eq!(store.seen(&pr).unwrap().len(), 1);
    // The new tables work.
    store.set_meta("k", "v").unwrap();
    assert_eq!(store.meta("k").unwrap().as_deref(), Some("v"));
    assert!(store.pending_outbox(i64::MAX).unwrap().is_empty());
}

/// A read kept as its summary's whole text (before migration 12) is kept as that text's
/// digest after the upgrade, which is what the summary read gives now: it still matches, so
/// an upgrade reads nothing in full again. A digest is kept as it is.
#[test]
fn kept_summaries_become_their_digests_on_upgrade() {
    use crate::core::hash::Fingerprint;
    let dir = tempfile::tempdir().unwrap();
    let text = r#"{"pullRequest":{"headRefOid":"abc","updatedAt":"2026-11-01T00:00:00Z"}}"#;
    let digest = Fingerprint::of("another summary");
    let path = old_database(&dir, 11, |conn| {
        for (n, summary) in [(1, text), (2, digest.as_str())] {
            watch_in(conn, n);
            conn.execute(
                "INSERT INTO last_reads (watch_id, summary, snapshot) VALUES (?1, ?2, '{}')",
                rusqlite::params![n, summary],
            )
            .unwrap();
        }
    });
    let store = Store::open(&path).unwrap();
    let kept: Vec<(i64, String)> = store
        .conn
        .prepare("SELECT watch_id, summary FROM last_reads ORDER BY watch_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(kept, vec![(1, Fingerprint::of(text)), (2, digest)]);
}

/// The hints kept beside each read (with the decision settled on it) move to a table of their
/// own on upgrade and read as they did, so no PR is read in full or decided again because of
/// it; a read kept without hints still has them worked out from its snapshot.
#[test]
fn kept_hints_move_beside_their_reads_on_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = crate::core::decide::tests::snap("aaa");
    let text = serde_json::to_string(&snapshot).unwrap();
    let hints = r#"{"behind_by":3,"unresolved_threads":["T1"],"settled":{"at":"2026-11-01T00:00:00Z","until":"2026-11-01T01:00:00Z","row":"00000000000000ff","context":"0000000000000001","every":300}}"#;
    let path = old_database(&dir, 12, |conn| {
        for (n, kept) in [(1, Some(hints)), (2, None)] {
            watch_in(conn, n);
            conn.execute(
                "INSERT INTO last_reads (watch_id, summary, snapshot, hints) VALUES (?1, 'fp', ?2, ?3)",
                rusqlite::params![n, text, kept],
            )
            .unwrap();
        }
    });
    let store = Store::open(&path).unwrap();
    let kept = store.glances(&[1, 2]).unwrap().1;
    let at = |s| crate::model::parse_instant(s).unwrap();
    assert_eq!(
        kept[&1],
        KeptHints {
            summary: "fp".into(),
            behind_by: Some(3),
            unresolved_threads: vec!["T1".into()],
            settled: Some(Settled {
                at: at("2026-11-01T00:00:00Z"),
                until: at("2026-11-01T01:00:00Z"),
                row: 0xff,
                context: 1,
                every: Some(300),
            }),
        }
    );
    assert_eq!(kept[&2], KeptHints::of("fp", &snapshot));
}

/// The hints kept as JSON beside each read (with the decision settled on it) become columns on
/// upgrade and read as the last build read them, to the nanosecond and the 64th bit: no PR is
/// read in full or decided again because of it. A read kept without hints has them worked out
/// from its snapshot then; hints or a snapshot that no longer parse leave none.
#[test]
fn kept_hints_become_columns_on_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = crate::core::decide::tests::snap("aaa");
    let text = serde_json::to_string(&snapshot).unwrap();
    let settled = r#"{"behind_by":3,"unresolved_threads":["T1","T2"],"settled":{"at":"2026-11-01T00:00:00.123456789Z","until":"2026-11-01T01:00:00Z","row":"fffffffffffffffe","context":"8000000000000000","every":null}}"#;
    let plain = r#"{"behind_by":null,"unresolved_threads":[]}"#;
    // Watch 1: settled; 2: no decision; 3: damaged hints; 4: no hints; 5: neither parses.
    let rows = [
        (1, Some(settled), text.as_str()),
        (2, Some(plain), text.as_str()),
        (3, Some("{"), text.as_str()),
        (4, None, text.as_str()),
        (5, None, "{"),
    ];
    let path = old_database(&dir, 13, |conn| {
        for (n, hints, snapshot) in rows {
            watch_in(conn, n);
            conn.execute(
                "INSERT INTO last_reads (watch_id, summary, snapshot) VALUES (?1, 'fp', ?2)",
                rusqlite::params![n, snapshot],
            )
            .unwrap();
            if let Some(hints) = hints {
                conn.execute(
                    "INSERT INTO read_hints (watch_id, hints) VALUES (?1, ?2)",
                    rusqlite::params![n, hints],
                )
                .unwrap();
            }
        }
    });
    let store = Store::open(&path).unwrap();
    let kept = store.glances(&[1, 2, 3, 4, 5]).unwrap().1;
    let at = |s| crate::model::parse_instant(s).unwrap();
    assert_eq!(
        kept[&1],
        KeptHints {
            summary: "fp".into(),
            behind_by: Some(3),
            unresolved_threads: vec!["T1".into(), "T2".into()],
            settled: Some(Settled {
                at: at("2026-11-01T00:00:00.123456789Z"),
                until: at("2026-11-01T01:00:00Z"),
                row: u64::MAX - 1,
                context: 1 << 63,
                every: None,
            }),
        }
    );
    assert_eq!(
        kept[&2],
        KeptHints {
            summary: "fp".into(),
            ..KeptHints::default()
        }
    );
    assert_eq!(kept[&4], KeptHints::of("fp", &snapshot));
    assert_eq!(kept.keys().copied().collect::<Vec<_>>(), [1, 2, 4]);
    let old: i64 = store
        .conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'read_hints'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(old, 0, "the JSON hints are gone");
}

/// Whether a PR is a fork's moves from `memory` to a column on upgrade (NULL where `memory`
/// is no JSON), and the store writes the column with `memory` after.
#[test]
fn the_cross_repository_flag_is_a_column_written_with_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = old_database(&dir, 14, |conn| {
        for (n, memory) in [
            (1, r#"{"cross_repository": true}"#),
            (2, r#"{"cross_repository": false}"#),
            (3, "{}"),
            (4, "{"),
        ] {
            watch_in(conn, n);
            conn.execute(
                "UPDATE watches SET memory = ?2 WHERE number = ?1",
                rusqlite::params![n, memory],
            )
            .unwrap();
        }
    });
    let mut store = Store::open(&path).unwrap();
    let flags = |s: &Store| -> Vec<Option<i64>> {
        s.conn
            .prepare("SELECT cross_repository FROM watches ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    assert_eq!(flags(&store), [Some(1), Some(0), Some(0), None]);
    store
        .update_memory(1, |m| m.cross_repository = false)
        .unwrap();
    store
        .update_memory(2, |m| m.cross_repository = true)
        .unwrap();
    let added = crate::model::parse_instant("2026-11-02T00:00:00Z").unwrap();
    store
        .add_watch(&PrRef::github("o/r", 5), &NewWatch::default(), added)
        .unwrap();
    assert_eq!(flags(&store), [Some(0), Some(1), Some(0), None, Some(0)]);
}

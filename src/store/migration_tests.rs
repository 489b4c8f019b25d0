use super::*;
use crate::model::PrRef;
use crate::model::watch::Why;

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
    let path = dir.path().join("old.db");
    let text = r#"{"pullRequest":{"headRefOid":"abc","updatedAt":"2026-11-01T00:00:00Z"}}"#;
    let digest = Fingerprint::of("another summary");
    {
        let conn = Connection::open(&path).unwrap();
        for sql in &migrations::MIGRATIONS[..11] {
            conn.execute_batch(sql).unwrap();
        }
        for (n, summary) in [(1, text), (2, digest.as_str())] {
            conn.execute(
                "INSERT INTO watches (forge, repo, number, added_at) VALUES ('github', 'o/r', ?1, '2026-11-01T00:00:00Z')",
                [n],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO last_reads (watch_id, summary, snapshot) VALUES (?1, ?2, '{}')",
                rusqlite::params![n, summary],
            )
            .unwrap();
        }
        conn.pragma_update(None, "user_version", 11).unwrap();
    }
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
    let path = dir.path().join("old.db");
    let snapshot = crate::core::decide::tests::snap("aaa");
    let text = serde_json::to_string(&snapshot).unwrap();
    let hints = r#"{"behind_by":3,"unresolved_threads":["T1"],"settled":{"at":"2026-11-01T00:00:00Z","until":"2026-11-01T01:00:00Z","row":"00000000000000ff","context":"0000000000000001","every":300}}"#;
    {
        let conn = Connection::open(&path).unwrap();
        for sql in &migrations::MIGRATIONS[..12] {
            conn.execute_batch(sql).unwrap();
        }
        for (n, kept) in [(1, Some(hints)), (2, None)] {
            conn.execute(
                "INSERT INTO watches (forge, repo, number, added_at) VALUES ('github', 'o/r', ?1, '2026-11-01T00:00:00Z')",
                [n],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO last_reads (watch_id, summary, snapshot, hints) VALUES (?1, 'fp', ?2, ?3)",
                rusqlite::params![n, text, kept],
            )
            .unwrap();
        }
        conn.pragma_update(None, "user_version", 12).unwrap();
    }
    let store = Store::open(&path).unwrap();
    let kept = store.kept_hints(&[1, 2]).unwrap();
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

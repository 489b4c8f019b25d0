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

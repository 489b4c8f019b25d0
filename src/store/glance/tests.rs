use super::*;
use crate::store::NewWatch;
use crate::store::tests::{holder, t, taken};

/// Three watches, the second with both branches seen: their ids.
fn three(s: &mut Store) -> Vec<i64> {
    let now = t("2026-11-29T12:00:00Z");
    (1..=3)
        .map(|n| {
            let pr = PrRef::github("o/r", n);
            s.add_watch(&pr, &NewWatch::default(), now).unwrap();
            let id = s.watch(&pr).unwrap().unwrap().id;
            if n == 2 {
                s.conn
                    .execute(
                        "UPDATE watches SET base_ref = 'main', head_ref = 'fix' WHERE id = ?1",
                        [id],
                    )
                    .unwrap();
            }
            id
        })
        .collect()
}

/// A glance carries its row's digest as a full load computes it, the branches only where
/// both are known and the PR is not a fork's, and a row that does not read as damaged.
#[test]
fn a_glance_is_the_rows_digest_and_what_a_summary_read_asks() {
    let mut s = Store::open_in_memory().unwrap();
    let ids = three(&mut s);
    let wanted = [ids[2], 999, ids[0], ids[1]];
    let glances = s.glances(&wanted).unwrap().0;
    let full = s.watches_by_ids(&wanted).unwrap();
    assert_eq!(
        glances.iter().map(|g| g.id).collect::<Vec<_>>(),
        [ids[2], ids[0], ids[1]]
    );
    for (g, w) in glances.iter().zip(&full) {
        assert_eq!(
            (g.id, &g.pr, g.row_digest),
            (w.id, &w.pr, w.row_digest.unwrap().row)
        );
        assert!(!g.damaged);
    }
    assert_eq!(glances[2].branches, Some(("main".into(), "fix".into())));
    assert_eq!(glances[0].branches, None);
    // A fork's branches are not compared; an unknown state is damage, and a damaged memory
    // changes the row's digest, as a full load computes it.
    let before = s.glances(&ids).unwrap().0;
    s.update_memory(ids[1], |m| m.cross_repository = true)
        .unwrap();
    s.conn
        .execute("UPDATE watches SET memory = '{' WHERE id = ?1", [ids[0]])
        .unwrap();
    s.conn
        .execute("UPDATE watches SET state = 'gone' WHERE id = ?1", [ids[2]])
        .unwrap();
    let glances = s.glances(&ids).unwrap().0;
    assert_eq!(glances[1].branches, None);
    assert!(!glances[1].damaged && glances[2].damaged);
    assert_ne!(glances[0].row_digest, before[0].row_digest);
    let full = s.watches_by_ids(&ids).unwrap();
    for (g, w) in glances.iter().zip(&full) {
        assert_eq!(g.row_digest, w.row_digest.unwrap().row, "{}", g.pr);
    }
    assert!(full[0].unreadable.is_some(), "only its full load tells");
    s.update_memory(ids[1], |m| m.cross_repository = false)
        .unwrap();
    assert_eq!(
        s.glances(&[ids[1]]).unwrap().0[0].branches,
        Some(("main".into(), "fix".into()))
    );
}

/// A settled tick is recorded only where the row is still the one loaded and no other live
/// run holds it; an expired lease or the run's own is free, and the lease is cleared.
#[test]
fn settled_ticks_are_recorded_only_over_unchanged_rows_no_other_run_holds() {
    let mut s = Store::open_in_memory().unwrap();
    let mut ids = three(&mut s);
    let pr4 = PrRef::github("o/r", 4);
    s.add_watch(&pr4, &NewWatch::default(), t("2026-11-29T12:00:00Z"))
        .unwrap();
    ids.push(s.watch(&pr4).unwrap().unwrap().id);
    let loaded = s.glances(&ids).unwrap().0;
    let (me, other) = (holder("me"), holder("other"));
    let never = |_: &Holder| false;
    // 1: held by another live run; 2: changed since it was loaded; 3: held by this run.
    s.lease_all(&[ids[0]], &other, 600, &never).unwrap();
    s.set_paused(&loaded[1].pr, true, t("2026-11-29T12:01:00Z"))
        .unwrap();
    s.lease_all(&[ids[2]], &me, 600, &never).unwrap();
    // 4: its lease long expired.
    s.conn
        .execute(
            "UPDATE watches SET lease_owner = 'gone', lease_until = 1 WHERE id = ?1",
            [ids[3]],
        )
        .unwrap();
    let now = t("2026-11-29T12:05:00Z");
    let next = t("2026-11-29T12:10:00Z");
    let ticks: Vec<(i64, u64, Option<Instant>)> = loaded
        .iter()
        .map(|g| (g.id, g.row_digest, Some(next)))
        .collect();
    let recorded = s.record_settled(&ticks, &me, now).unwrap();
    assert_eq!(recorded, BTreeSet::from([ids[2], ids[3]]));
    let after = s.watches_by_ids(&ids).unwrap();
    for w in &after {
        let written = recorded.contains(&w.id);
        assert_eq!(w.last_tick_at == Some(now), written, "{}", w.pr);
        assert_eq!(w.next_tick_at == Some(next), written, "{}", w.pr);
    }
    let leases: Vec<Option<String>> = ids
        .iter()
        .map(|id| {
            s.conn
                .query_row("SELECT lease_owner FROM watches WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .unwrap()
        })
        .collect();
    assert_eq!(leases, [Some(other.key()), None, None, None]);
    // The times are not in the digest: recorded again, it still matches.
    let again = s.record_settled(&ticks[2..], &me, now).unwrap();
    assert_eq!(again, BTreeSet::from([ids[2], ids[3]]));
}

/// Recording settled ticks again and again uses the statement as it was first planned.
#[test]
fn recording_settled_ticks_plans_its_statement_once() {
    let mut s = Store::open_in_memory().unwrap();
    let ids = three(&mut s);
    let loaded = s.glances(&ids).unwrap().0;
    for minute in 1..=3 {
        let now = t(&format!("2026-11-29T12:0{minute}:00Z"));
        let ticks: Vec<(i64, u64, Option<Instant>)> = loaded
            .iter()
            .map(|g| (g.id, g.row_digest, Some(now)))
            .collect();
        assert_eq!(
            s.record_settled(&ticks, &holder(&format!("run {minute}")), now)
                .unwrap()
                .len(),
            3
        );
    }
    let stmt = s.conn.prepare_cached(&record_settled_sql()).unwrap();
    assert_eq!(stmt.get_status(rusqlite::StatementStatus::RePrepare), 0);
}

/// Whether a PR is a fork's, as a tick records it in `memory`, is what the glance tells.
#[test]
fn a_glance_tells_a_fork_as_its_tick_recorded_it() {
    let mut s = Store::open_in_memory().unwrap();
    let ids = three(&mut s);
    for (n, fork) in [true, false].into_iter().enumerate() {
        let now = t(&format!("2026-11-29T12:0{n}:00Z"));
        let w = s.watches_by_ids(&ids[1..2]).unwrap().remove(0);
        let lease = taken(s.lease(w.id, &holder("me"), 60, &|_: &Holder| false));
        let mut status = w.status.clone();
        status.memory.cross_repository = fork;
        s.record(
            lease,
            &w.status.memory,
            &crate::store::TickRecord::bare(status, now),
        )
        .unwrap();
        let branches = s.glances(&ids[1..2]).unwrap().0[0].branches.clone();
        assert_eq!(branches.is_none(), fork, "fork: {fork}");
    }
}

use anyhow::Context as _;
use rusqlite::params;

use super::*;
use crate::holder::Holder;
use crate::model::watch::WatchStatus;
use crate::model::{ForgeKind, PrRef};

pub(super) fn t(s: &str) -> Instant {
    crate::model::parse_instant(s).unwrap()
}

#[test]
fn migrates_a_fresh_database_and_refuses_a_newer_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, migrations::latest());
    conn.pragma_update(None, "user_version", 999).unwrap();
    drop(conn);
    let err = format!("{:#}", Store::open(&path).unwrap_err());
    assert!(err.contains("newer pr-monitor"), "{err}");
    let conn = Connection::open(&path).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 999, "a newer database is never altered");
}

#[test]
fn due_selects_only_open_unpaused_watches_whose_time_has_come() {
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    let (a, b, c) = (
        PrRef::github("o/r", 1),
        PrRef::github("o/r", 2),
        PrRef::github("o/r", 3),
    );
    for pr in [&a, &b, &c] {
        s.add_watch(pr, &NewWatch::default(), now).unwrap();
    }
    s.set_paused(&b, true, now).unwrap();
    let lease = taken(s.lease(s.watch(&c).unwrap().unwrap().id, &holder("me"), 60, &never));
    s.record(
        lease,
        &crate::model::watch::Memory::default(),
        &TickRecord {
            next_tick_at: Some(t("2026-11-29T12:05:00Z")),
            ..TickRecord::bare(WatchStatus::default(), now)
        },
    )
    .unwrap();
    let numbers = |due: Vec<Due>| -> Vec<u64> {
        let ids: Vec<i64> = due.iter().map(|d| d.id).collect();
        s.watches_by_ids(&ids)
            .unwrap()
            .iter()
            .map(|w| w.pr.number)
            .collect()
    };
    let all = Selection::default();
    assert_eq!(numbers(s.due(now, false, &all).unwrap()), vec![1]);
    let later = t("2026-11-29T12:05:00Z");
    assert_eq!(numbers(s.due(later, false, &all).unwrap()), vec![1, 3]);
    assert_eq!(numbers(s.due(now, true, &all).unwrap()), vec![1, 3]);
    let only_3 = Selection {
        job: None,
        prs: vec![c.clone()],
    };
    assert_eq!(numbers(s.due(later, false, &only_3).unwrap()), vec![3]);
    let mut full = Vec::new();
    s.each_due(later, false, &only_3, &mut |w| full.push(w.pr.number))
        .unwrap();
    assert_eq!(full, vec![3]);
}

/// A nudge makes the open, unpaused watches it names due at once, by number, by the head,
/// the head branch or the base branch their last read saw, in any letter case of the repository; a watch
/// already due keeps its time, and nothing else moves.
#[test]
fn a_nudge_makes_the_watches_it_names_due() {
    use crate::model::nudge::{Named, Nudge};
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    let later = t("2026-11-29T12:05:00Z");
    for n in 1..=6 {
        let pr = PrRef::github("Octo/App", n);
        s.add_watch(&pr, &NewWatch::default(), now).unwrap();
        let id = s.watch(&pr).unwrap().unwrap().id;
        let lease = taken(s.lease(id, &holder("me"), 60, &never));
        let status = WatchStatus {
            head_sha: Some(crate::model::Sha(format!("sha{n}"))),
            head_ref: Some(format!("branch{n}")),
            base_ref: Some(if n >= 5 { "release" } else { "main" }.to_owned()),
            ..WatchStatus::default()
        };
        s.record(
            lease,
            &crate::model::watch::Memory::default(),
            &TickRecord {
                next_tick_at: Some(later),
                ..TickRecord::bare(status, now)
            },
        )
        .unwrap();
    }
    s.set_paused(&PrRef::github("Octo/App", 4), true, now)
        .unwrap();
    let mr = PrRef {
        forge: ForgeKind::GitLab,
        repo: "octo/app".to_owned(),
        number: 1,
    };
    s.add_watch(&mr, &NewWatch::default(), later).unwrap();
    let github = |names| Nudge {
        forge: ForgeKind::GitHub,
        repo: "octo/app".to_owned(),
        names,
    };
    let moved = s
        .nudge(
            &[
                github(Named::Number(1)),
                github(Named::Head(crate::model::Sha("sha2".into()))),
                github(Named::Branch("branch3".into())),
                github(Named::Base("release".into())),
                github(Named::Number(4)),
                github(Named::Number(99)),
                Nudge {
                    forge: ForgeKind::GitHub,
                    repo: "octo/other".to_owned(),
                    names: Named::Number(5),
                },
            ],
            now,
        )
        .unwrap();
    assert_eq!(moved, 5);
    let due: Vec<(ForgeKind, u64)> = s
        .due(now, false, &Selection::default())
        .unwrap()
        .iter()
        .map(|d| {
            let w = &s.watches_by_ids(&[d.id]).unwrap()[0];
            (w.pr.forge, w.pr.number)
        })
        .collect();
    assert_eq!(
        due,
        vec![
            (ForgeKind::GitHub, 1),
            (ForgeKind::GitHub, 2),
            (ForgeKind::GitHub, 3),
            (ForgeKind::GitHub, 5),
            (ForgeKind::GitHub, 6)
        ]
    );
    // Already due: a second nudge moves nothing.
    assert_eq!(s.nudge(&[github(Named::Number(1))], now).unwrap(), 0);
}

/// Only armed, open, unpaused watches are in line, and of those only the ones whose last
/// tick saw them behind or holding the turn, plus those read fresh this tick (as held); a
/// damaged memory is never in line.
#[test]
fn armed_in_line_loads_only_who_may_hold_an_update_turn() {
    use crate::model::watch::{Memory, Merge};
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    let armed = WatchStatus {
        merge: Merge::Armed { at: now, via: None },
        ..WatchStatus::default()
    };
    // number → (armed, behind, holds the turn)
    let rows = [
        (1, true, true, false),
        (2, true, false, true),
        (3, true, false, false),
        (4, false, true, false),
        (5, true, false, false),
        (6, true, true, false),
    ];
    let mut ids = std::collections::BTreeMap::new();
    for (n, is_armed, behind, holds) in rows {
        let pr = PrRef::github("o/r", n);
        s.add_watch(&pr, &NewWatch::default(), now).unwrap();
        let id = s.watch(&pr).unwrap().unwrap().id;
        ids.insert(n, id);
        let mut status = if is_armed {
            armed.clone()
        } else {
            WatchStatus::default()
        };
        status.memory = Memory {
            behind,
            holds_update_turn: holds,
            ..Memory::default()
        };
        let lease = taken(s.lease(id, &holder("me"), 60, &never));
        s.record(lease, &Memory::default(), &TickRecord::bare(status, now))
            .unwrap();
    }
    s.conn
        .execute("UPDATE watches SET memory = '{' WHERE id = ?1", [ids[&6]])
        .unwrap();
    let numbers = |fresh: &[i64]| -> Vec<u64> {
        let held = s.watches_by_ids(fresh).unwrap();
        s.armed_in_line(&held.iter().collect::<Vec<_>>())
            .unwrap()
            .iter()
            .map(|w| w.pr.number)
            .collect()
    };
    assert_eq!(numbers(&[]), vec![1, 2]);
    assert_eq!(numbers(&[ids[&3], ids[&4]]), vec![1, 2, 3]);
    // The in-line watches are found by their index, not by reading every armed watch.
    let plan: Vec<String> = s
        .conn
        .prepare(&format!(
            "EXPLAIN QUERY PLAN SELECT id FROM watches WHERE {}",
            watches::IN_LINE
        ))
        .unwrap()
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(
        plan.iter().any(|p| p.contains("watches_in_line")),
        "{plan:?}"
    );
}

/// Each merge and ci state is written to, and read back from, the columns it always had.
#[test]
fn merge_and_ci_states_keep_their_columns() {
    use crate::model::watch::{Ci, Merge, MergeVia, Pills};
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    let armed_at = t("2026-11-29T11:00:00Z");
    let pr = PrRef::github("o/r", 1);
    s.add_watch(&pr, &NewWatch::default(), now).unwrap();
    let id = s.watch(&pr).unwrap().unwrap().id;
    let rows = [
        (Merge::Disarmed, Ci::Off, "0|||0|0"),
        (
            Merge::Armed {
                at: armed_at,
                via: None,
            },
            Ci::Lit,
            "1||2026-11-29T11:00:00Z|1|0",
        ),
        (
            Merge::Armed {
                at: armed_at,
                via: Some(MergeVia::AutoMerge),
            },
            Ci::Fixing,
            "1|auto_merge|2026-11-29T11:00:00Z|0|1",
        ),
        (
            Merge::Merged {
                via: MergeVia::SelfMerge,
            },
            Ci::Off,
            "0|self||0|0",
        ),
    ];
    for (merge, ci, want) in rows {
        let status = WatchStatus {
            merge,
            pills: Pills {
                ci,
                ..Pills::default()
            },
            ..WatchStatus::default()
        };
        let lease = taken(s.lease(id, &holder("me"), 60, &never));
        s.record(
            lease,
            &crate::model::watch::Memory::default(),
            &TickRecord::bare(status, now),
        )
        .unwrap();
        let columns: String = s
            .conn
            .query_row(
                "SELECT merge_armed || '|' || COALESCE(merge_via, '') || '|' || COALESCE(armed_at, '')
                        || '|' || pill_ci || '|' || pill_ci_fixing FROM watches WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(columns, want, "{merge:?} {ci:?}");
        let back = s.watch(&pr).unwrap().unwrap().status;
        assert_eq!((back.merge, back.pills.ci), (merge, ci));
    }
}

/// An agent's run recorded while a tick holds the PR's lease survives the tick's record:
/// the tick writes only what it changed in the memory it read.
#[test]
fn a_memory_edit_made_during_a_tick_survives_its_record() {
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    let pr = PrRef::github("o/r", 1);
    s.add_watch(&pr, &NewWatch::default(), now).unwrap();
    let read = s.watch(&pr).unwrap().unwrap();
    let lease = taken(s.lease(read.id, &holder("me"), 60, &never));
    let (start, end) = (t("2026-11-29T11:58:00Z"), t("2026-11-29T11:59:00Z"));
    s.update_memory(read.id, |m| crate::core::memory::agent_ran(m, start, end))
        .unwrap();
    let mut status = read.status.clone();
    status.memory.error_streak = 1;
    s.record(lease, &read.status.memory, &TickRecord::bare(status, now))
        .unwrap();
    let memory = s.watch(&pr).unwrap().unwrap().status.memory;
    assert_eq!(
        memory.agent_run,
        Some((start, end)),
        "the agent's run stays"
    );
    assert_eq!(memory.agent_activity_at, Some(end));
    assert_eq!(memory.error_streak, 1, "the tick's change is written");
}

/// The watch a finished message belongs to is found by its fix's message id, in SQL.
#[test]
fn a_watch_is_found_by_the_message_id_of_its_fix_whatever_other_rows_hold() {
    use crate::model::Sha;
    use crate::model::watch::FixInFlight;
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    for n in [1, 2] {
        s.add_watch(&PrRef::github("o/r", n), &NewWatch::default(), now)
            .unwrap();
    }
    let id = s.watch(&PrRef::github("o/r", 2)).unwrap().unwrap().id;
    s.update_memory(id, |m| {
        m.fix = Some(FixInFlight {
            message_id: "m7".into(),
            head_sha: Sha("abc".into()),
            sent_at: now,
            done_at: None,
        });
    })
    .unwrap();
    // A watch whose stored memory is damaged never hides the others' fixes.
    s.conn
        .execute("UPDATE watches SET memory = '{' WHERE number = 1", [])
        .unwrap();
    let found = s.watch_with_fix("m7").unwrap().map(|w| w.pr.number);
    assert_eq!(found, Some(2));
    assert!(s.watch_with_fix("m8").unwrap().is_none(), "no such fix");
}

/// The memory is edited in place; a row that is gone is none, and a corrupt one is an
/// error that leaves it as it was.
#[test]
fn update_memory_edits_a_readable_memory_and_never_a_corrupt_one() {
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    let pr = PrRef::github("o/r", 1);
    s.add_watch(&pr, &NewWatch::default(), now).unwrap();
    let id = s.watch(&pr).unwrap().unwrap().id;
    let edited = s
        .update_memory(id, |m| {
            m.agent_activity_at = Some(now);
            7
        })
        .unwrap();
    assert_eq!(edited, Some(7));
    let memory = s.watch(&pr).unwrap().unwrap().status.memory;
    assert_eq!(memory.agent_activity_at, Some(now));
    assert_eq!(
        s.update_memory(id + 1, |_| ()).unwrap(),
        None,
        "no such watch"
    );
    s.conn
        .execute(
            "UPDATE watches SET memory = '{\"fix\": 3' WHERE id = ?1",
            [id],
        )
        .unwrap();
    let err = s
        .update_memory(id, |_| panic!("never edits a default"))
        .unwrap_err();
    assert!(
        format!("{err:#}").contains(&format!("the memory of watch {id} cannot be read")),
        "{err:#}"
    );
    let kept: String = s
        .conn
        .query_row("SELECT memory FROM watches WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(kept, "{\"fix\": 3");
}

pub(super) fn holder(run: &str) -> Holder {
    Holder {
        run: run.into(),
        pid: 1,
        host: "host-a".into(),
        since: t("2026-11-29T12:00:00Z"),
        started: None,
    }
}

fn never(_: &Holder) -> bool {
    false
}

pub(super) fn taken(leased: Result<Leased>) -> Lease {
    match leased.unwrap() {
        Leased::Taken(lease) => lease,
        other => panic!("not taken: {other:?}"),
    }
}

#[test]
fn a_held_lease_blocks_a_second_run_and_names_its_holder() {
    let mut s = Store::open_in_memory().unwrap();
    let pr = PrRef::github("o/r", 1);
    s.add_watch(&pr, &NewWatch::default(), t("2026-11-29T12:00:00Z"))
        .unwrap();
    let id = s.watch(&pr).unwrap().unwrap().id;
    let first = taken(s.lease(id, &holder("run-a"), 60, &never));
    assert_eq!(s.held().unwrap(), vec![(id, holder("run-a"))]);
    match s.lease(id, &holder("run-b"), 60, &never).unwrap() {
        Leased::Held(Some(h)) => assert_eq!(h, holder("run-a")),
        other => panic!("{other:?}"),
    }
    s.release(first).unwrap();
    assert!(s.held().unwrap().is_empty());
    taken(s.lease(id, &holder("run-b"), 60, &never));
}

#[test]
fn a_lease_whose_holder_is_gone_is_taken_over_at_once() {
    let mut s = Store::open_in_memory().unwrap();
    let pr = PrRef::github("o/r", 1);
    s.add_watch(&pr, &NewWatch::default(), t("2026-11-29T12:00:00Z"))
        .unwrap();
    let id = s.watch(&pr).unwrap().unwrap().id;
    let dead = taken(s.lease(id, &holder("dead"), 600, &never));
    let gone = |h: &Holder| h.run == "dead";
    let lease = match s.lease(id, &holder("next"), 600, &gone).unwrap() {
        Leased::TakenOver(lease, was) => {
            assert_eq!(was.run, "dead");
            lease
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(s.held().unwrap(), vec![(id, holder("next"))]);
    assert!(
        s.release(dead).is_ok() && s.held().unwrap().len() == 1,
        "the dead run's lease no longer releases the new holder's"
    );
    s.release(lease).unwrap();
    // An owner written before leases named holders waits for its expiry.
    s.conn
        .execute(
            "UPDATE watches SET lease_owner = 'old-style', lease_until = ?2 WHERE id = ?1",
            params![id, crate::clock::wall_secs() + 600],
        )
        .unwrap();
    let always = |_: &Holder| true;
    assert!(matches!(
        s.lease(id, &holder("next"), 600, &always).unwrap(),
        Leased::Held(None)
    ));
}

/// One email notice about PR 1, the outbox tests' message.
fn outbox_message(id: &str) -> OutboxMessage {
    OutboxMessage {
        id: id.into(),
        pr: "https://github.com/o/r/pull/1".into(),
        channel: "email".into(),
        kind: "ci".into(),
        subject: "PR #1: lint failed".into(),
        payload: "{}".into(),
        created_at: t("2026-11-29T12:00:00Z"),
    }
}

/// A digest's members are marked in one transaction: when one of them cannot be marked
/// (here a trigger refuses it, as a kill would stop the marking there), none is.
#[test]
fn a_deliverys_messages_are_marked_all_or_none() {
    let mut s = Store::open_in_memory().unwrap();
    s.enqueue(&[
        outbox_message("a"),
        outbox_message("b"),
        outbox_message("c"),
    ])
    .unwrap();
    s.conn
        .execute_batch(
            "CREATE TEMP TRIGGER refuse_c BEFORE UPDATE ON outbox WHEN NEW.id = 'c'
             BEGIN SELECT RAISE(ABORT, 'refused'); END;",
        )
        .unwrap();
    let pending = |s: &Store| s.pending_outbox(i64::MAX).unwrap().len();
    assert!(
        s.mark_delivered(&["a", "b", "c"], t("2026-11-29T12:00:01Z"))
            .is_err()
    );
    assert_eq!(pending(&s), 3, "none marked");
    assert!(s.mark_failed(&["a", "b", "c"], "busy", 0, true).is_err());
    assert_eq!(pending(&s), 3, "none marked");
    s.conn.execute_batch("DROP TRIGGER refuse_c").unwrap();
    s.mark_delivered(&["a", "b", "c"], t("2026-11-29T12:00:01Z"))
        .unwrap();
    assert_eq!(pending(&s), 0);
}

#[test]
fn outbox_claims_hold_off_other_runs_until_delivered_or_their_holder_is_gone() {
    let mut s = Store::open_in_memory().unwrap();
    s.enqueue(&[outbox_message("a"), outbox_message("b")])
        .unwrap();
    let ids =
        |rows: Vec<OutboxRow>| -> Vec<String> { rows.into_iter().map(|r| r.message.id).collect() };
    let first = s.claim_outbox(100, 700, &holder("first"), &never).unwrap();
    assert_eq!(ids(first), ["a", "b"]);
    assert!(
        s.claim_outbox(101, 701, &holder("second"), &never)
            .unwrap()
            .is_empty(),
        "claimed by a live run"
    );
    s.mark_delivered(&["a"], t("2026-11-29T12:00:01Z")).unwrap();
    let gone = |h: &Holder| h.run == "first";
    let taken = s.claim_outbox(102, 702, &holder("second"), &gone).unwrap();
    assert_eq!(ids(taken), ["b"], "the gone run's undelivered claim only");
    s.mark_failed(&["b"], "busy", 5000, false).unwrap();
    assert!(
        s.claim_outbox(103, 703, &holder("third"), &|_| true)
            .unwrap()
            .is_empty(),
        "a failed message waits for its next attempt, whoever claimed it before"
    );
    assert_eq!(
        ids(s
            .claim_outbox(5000, 5600, &holder("third"), &never)
            .unwrap()),
        ["b"]
    );
}

#[test]
fn the_due_query_reads_only_its_covering_index() {
    let s = Store::open_in_memory().unwrap();
    for job in [None, Some("nightly")] {
        let plan: Vec<String> = s
            .conn
            .prepare(&format!(
                "EXPLAIN QUERY PLAN {}",
                watches::due_sql("id, forge", false)
            ))
            .unwrap()
            .query_map(params!["2026", job], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        // One step: a search of the covering index, in its order (no sort, no row read).
        assert!(
            plan.len() == 1 && plan[0].contains("USING COVERING INDEX watches_due"),
            "{job:?}: {plan:?}"
        );
    }
}

/// A chunk's leases in one statement: free ones taken, one whose holder is gone taken over,
/// one another run holds left to it; and the records that change only times written in one
/// statement, where a lost lease is that watch's error and the others land.
#[test]
fn a_chunks_leases_and_quiet_records_go_in_one_statement_each() {
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    let mut ids = Vec::new();
    for n in 1..=5 {
        let pr = PrRef::github("o/r", n);
        s.add_watch(&pr, &NewWatch::default(), now).unwrap();
        ids.push(s.watch(&pr).unwrap().unwrap().id);
    }
    let _held = taken(s.lease(ids[3], &holder("busy"), 600, &never));
    let _dead = taken(s.lease(ids[4], &holder("dead"), 600, &never));
    ids.push(999);
    let gone = |h: &Holder| h.run == "dead";
    let leased = s.lease_all(&ids, &holder("me"), 600, &gone).unwrap();
    assert_eq!(
        leased.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        ids,
        "in the order asked"
    );
    let mut mine = Vec::new();
    for (id, l) in leased {
        match (id, l) {
            (id, Leased::Taken(lease)) if id < ids[3] => mine.push(lease),
            (id, Leased::Held(Some(by))) if id == ids[3] => assert_eq!(by, holder("busy")),
            (id, Leased::TakenOver(_, was)) if id == ids[4] => assert_eq!(was.run, "dead"),
            (999, Leased::Held(None)) => {}
            other => panic!("{other:?}"),
        }
    }
    // Watch 2 is removed while its tick runs: its lease is lost.
    s.remove_watch(&PrRef::github("o/r", 2)).unwrap();
    let later = t("2026-11-29T12:05:00Z");
    let status = s.watch(&PrRef::github("o/r", 1)).unwrap().unwrap().status;
    let rec = TickRecord {
        next_tick_at: Some(later),
        ..TickRecord::bare(status, now)
    };
    let recorded = s
        .record_times(mine.into_iter().map(|l| (l, &rec)).collect())
        .unwrap();
    assert_eq!(
        recorded.iter().map(Result::is_ok).collect::<Vec<_>>(),
        vec![true, false, true]
    );
    for n in [1, 3] {
        let w = s.watch(&PrRef::github("o/r", n)).unwrap().unwrap();
        assert_eq!((w.next_tick_at, w.last_tick_at), (Some(later), Some(now)));
    }
    assert_eq!(
        s.held()
            .unwrap()
            .into_iter()
            .map(|(_, h)| h.run)
            .collect::<Vec<_>>(),
        vec!["busy".to_owned(), "me".to_owned()],
        "the recorded leases are released; the one taken over is still held"
    );
}

/// A record changes only times when the status and error are the watch's and it writes no
/// history, seen items, messages or reconciled intents.
#[test]
fn a_record_that_changes_only_times_is_told_from_one_that_changes_more() {
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    let pr = PrRef::github("o/r", 1);
    s.add_watch(&pr, &NewWatch::default(), now).unwrap();
    let w = s.watch(&pr).unwrap().unwrap();
    let quiet = TickRecord {
        next_tick_at: Some(t("2026-11-29T12:05:00Z")),
        ..TickRecord::bare(w.status.clone(), now)
    };
    assert!(quiet.only_times(&w));
    let mut memory = quiet.clone();
    memory.status.memory.error_streak = 1;
    let mut error = quiet.clone();
    error.last_error = Some("boom".into());
    let mut history = quiet.clone();
    history.history.push(crate::model::watch::HistoryEntry {
        at: now,
        what: "head abc by dev".into(),
        why: None,
    });
    let mut intents = quiet.clone();
    intents.resolved_intents.push(1);
    for changed in [memory, error, history, intents] {
        assert!(!changed.only_times(&w), "{changed:?}");
    }
}

/// A watch row's digest covers what a tick decides on and nothing of when it ticked: a record
/// of times alone keeps it, arming the watch or recording a tick that changed its state does
/// not.
#[test]
fn a_watch_rows_digest_leaves_out_its_tick_times_only() {
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    let pr = PrRef::github("o/r", 1);
    s.add_watch(&pr, &NewWatch::default(), now).unwrap();
    let digest = |s: &Store| s.watch(&pr).unwrap().unwrap().row_digest.unwrap();
    let first = digest(&s);
    let id = s.watch(&pr).unwrap().unwrap().id;
    let lease = taken(s.lease(id, &holder("me"), 60, &never));
    let times = TickRecord {
        next_tick_at: Some(t("2026-11-29T12:05:00Z")),
        ..TickRecord::bare(WatchStatus::default(), now)
    };
    s.record_times(vec![(lease, &times)])
        .unwrap()
        .remove(0)
        .unwrap();
    assert_eq!(s.watch(&pr).unwrap().unwrap().last_tick_at, Some(now));
    assert_eq!(digest(&s), first, "only its times moved");
    s.set_merge_armed(&pr, true, now).unwrap();
    let armed = digest(&s);
    assert_ne!(armed, first);
    let lease = taken(s.lease(id, &holder("me"), 60, &never));
    let mut status = s.watch(&pr).unwrap().unwrap().status;
    status.memory.behind = true;
    s.record(
        lease,
        &crate::model::watch::Memory::default(),
        &TickRecord::bare(status, now),
    )
    .unwrap();
    assert_ne!(digest(&s), armed, "its memory changed");
}

/// The watch a tick's record leaves, told before it is written ([`as_recorded`]), is the one
/// the next load reads, digest and all: instants to the second, secrets masked, memory as
/// written. Anything else written to the row meanwhile makes the digests differ.
#[test]
fn a_recorded_watch_is_told_as_the_next_load_reads_it() {
    use crate::model::Sha;
    use crate::model::watch::{Ci, Merge, MergeVia, Why};
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00.250Z");
    let pr = PrRef::github("o/r", 1);
    s.add_watch(&pr, &NewWatch::default(), now).unwrap();
    let mut first = WatchStatus {
        title: Some(
            "Fix -----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY----- leak".into(),
        ),
        head_sha: Some(Sha("a1".into())),
        head_seen_at: Some(t("2026-11-29T11:59:58.900Z")),
        head_ref: Some("feature".into()),
        base_ref: Some("main".into()),
        why: Some(Why::FixSent),
        attempts: 2,
        merge: Merge::Armed {
            at: t("2026-11-29T11:00:00.5Z"),
            via: Some(MergeVia::AutoMerge),
        },
        ..WatchStatus::default()
    };
    first.pills.ci = Ci::Fixing;
    first.pills.cnf = true;
    first.pills.cmt = 3;
    first.memory.agent_activity_at = Some(t("2026-11-29T11:59:00.123456Z"));
    first.memory.behind = true;
    let mut second = first.clone();
    second.head_sha = None;
    second.merge = Merge::Disarmed;
    second.why = None;
    second.memory.behind = false;
    let records = [
        TickRecord {
            next_tick_at: Some(t("2026-11-29T12:00:30.250Z")),
            last_error: Some("the forge said 502".into()),
            ..TickRecord::bare(first, now)
        },
        TickRecord::bare(second, now),
    ];
    for rec in records {
        let w = s.watch(&pr).unwrap().unwrap();
        let told = as_recorded(&w, &rec).expect("a watch read from the store");
        let lease = taken(s.lease(w.id, &holder("me"), 60, &never));
        s.record(lease, &w.status.memory, &rec).unwrap();
        let read = s.watch(&pr).unwrap().unwrap();
        assert_eq!(told, read);
        assert_ne!(told.row_digest, w.row_digest);
        assert!(!told.status.title.unwrap().contains("abc"), "masked");
    }
    // Paused, or its memory edited, while the tick ran: the row is not the one told.
    type Edit = fn(&mut Store, &PrRef, Instant);
    let edits: [Edit; 2] = [
        |s, pr, now| assert!(s.set_paused(pr, true, now).unwrap()),
        |s, pr, now| {
            let id = s.watch(pr).unwrap().unwrap().id;
            s.update_memory(id, |m| m.agent_activity_at = Some(now))
                .unwrap();
        },
    ];
    for edit in edits {
        let w = s.watch(&pr).unwrap().unwrap();
        let rec = TickRecord::bare(w.status.clone(), now);
        let told = as_recorded(&w, &rec).unwrap();
        let lease = taken(s.lease(w.id, &holder("me"), 60, &never));
        edit(&mut s, &pr, now);
        s.record(lease, &w.status.memory, &rec).unwrap();
        let read = s.watch(&pr).unwrap().unwrap();
        assert_ne!(told.row_digest, read.row_digest);
        s.set_paused(&pr, false, now).unwrap();
    }
}

/// The status page's history of every watch in one statement: each PR's own newest entries,
/// oldest first, as [`Store::history`] reads one PR's.
#[test]
fn recent_history_is_each_prs_own_newest_entries() {
    let mut s = Store::open_in_memory().unwrap();
    let prs: Vec<PrRef> = (1..=4).map(|n| PrRef::github("o/r", n)).collect();
    let entry = |n: usize| crate::model::watch::HistoryEntry {
        at: t("2026-11-29T12:00:00Z") + chrono::Duration::minutes(i64::try_from(n).unwrap()),
        what: format!("step {n}"),
        why: n.is_multiple_of(2).then(|| "even".to_owned()),
    };
    // PR 1 has five entries, PR 2 none, PR 3 two, PR 4 one; logged interleaved.
    for (pr, count) in [(&prs[0], 5), (&prs[2], 2), (&prs[3], 1)] {
        for n in 0..count {
            s.log(pr, &[entry(n)]).unwrap();
            s.log(&PrRef::github("o/other", 9), &[entry(n)]).unwrap();
        }
    }
    let asked: Vec<&PrRef> = vec![&prs[0], &prs[1], &prs[2], &prs[3], &prs[0]];
    let got = s.recent_history(&asked, 3).unwrap();
    let want: Vec<Vec<_>> = asked.iter().map(|pr| s.history(pr, 3).unwrap()).collect();
    assert_eq!(got, want);
    assert_eq!(
        got[0].iter().map(|e| e.what.as_str()).collect::<Vec<_>>(),
        ["step 2", "step 3", "step 4"]
    );
    assert!(got[1].is_empty());
    assert_eq!(got[2].len(), 2);
    assert!(s.recent_history(&[], 3).unwrap().is_empty());
}

#[test]
fn watches_by_ids_come_in_the_order_asked_each_once() {
    let mut s = Store::open_in_memory().unwrap();
    let now = t("2026-11-29T12:00:00Z");
    let ids: Vec<i64> = (1..=4)
        .map(|n| {
            let pr = PrRef::github("o/r", n);
            s.add_watch(&pr, &NewWatch::default(), now).unwrap();
            s.watch(&pr).unwrap().unwrap().id
        })
        .collect();
    let asked = [ids[2], ids[0], 999, ids[3], ids[0], ids[1]];
    let numbers: Vec<u64> = s
        .watches_by_ids(&asked)
        .unwrap()
        .iter()
        .map(|w| w.pr.number)
        .collect();
    assert_eq!(numbers, vec![3, 1, 4, 2]);
}

/// Keeps a test's watch of any standing as a tick would leave it.
impl Store {
    /// Adds `w` (its PR, agent, job and own auto-fix), records its status, times and error as
    /// a tick would, with `history`, and pauses it when it is paused; its id.
    pub(crate) fn keep_watch(
        &mut self,
        w: &crate::model::watch::Watch,
        history: &[crate::model::watch::HistoryEntry],
    ) -> Result<i64> {
        use super::{AutoFixChoice, Leased, NewWatch, TickRecord};
        let new = NewWatch {
            job: w.job.clone(),
            agent: w.agent.clone(),
            auto_fix: w.auto_fix.map_or(AutoFixChoice::Keep, AutoFixChoice::Set),
            merge_armed: false,
        };
        self.add_watch(&w.pr, &new, w.added_at)?;
        let id = self.watch(&w.pr)?.context("just added")?.id;
        let holder = Holder {
            run: "test".into(),
            pid: 1,
            host: "host".into(),
            since: w.added_at,
            started: None,
        };
        let Leased::Taken(lease) = self.lease(id, &holder, 60, &|_| false)? else {
            anyhow::bail!("not leased");
        };
        let rec = TickRecord {
            next_tick_at: w.next_tick_at,
            last_error: w.last_error.clone(),
            history: history.to_vec(),
            ..TickRecord::bare(w.status.clone(), w.last_tick_at.unwrap_or(w.added_at))
        };
        self.record(lease, &crate::model::watch::Memory::default(), &rec)?;
        if w.paused {
            self.set_paused(&w.pr, true, w.added_at)?;
        }
        Ok(id)
    }
}

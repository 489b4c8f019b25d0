//! The stored state's JSON shapes and its small rules.

use super::*;
use crate::core::decide::tests::watch;

#[test]
fn a_short_tail_keeps_the_last_lines_within_the_cap() {
    let tail = (1..=20)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        FailedLog::short_tail(&tail),
        "line 15\nline 16\nline 17\nline 18\nline 19\nline 20"
    );
    let long = "é".repeat(FailedLog::BYTES);
    let short = FailedLog::short_tail(&long);
    assert!(short.len() <= FailedLog::BYTES && short.chars().all(|c| c == 'é'));
    assert_eq!(FailedLog::short_tail(""), "");
}

#[test]
fn changes_are_said_in_words() {
    let before = watch();
    assert!(before.changes_from(&before).is_empty());
    let mut after = watch();
    after.agent = Some("fixer".into());
    after.auto_fix = Some(false);
    after.status.merge = Merge::Armed {
        at: crate::core::decide::tests::t0(),
        via: None,
    };
    assert_eq!(
        after.changes_from(&before),
        ["agent fixer", "auto-fix off", "merge armed"]
    );
    let mut merged = watch();
    merged.status.state = PrState::Merged;
    assert_eq!(watch().changes_from(&merged), ["watched again"]);
}

#[test]
fn ci_is_one_state_stored_as_two_flags() {
    for (ci, flags, json) in [
        (
            Ci::Off,
            (false, false),
            r#"{"ci":false,"ci_fixing":false,"cnf":false,"cmt":0}"#,
        ),
        (
            Ci::Lit,
            (true, false),
            r#"{"ci":true,"ci_fixing":false,"cnf":false,"cmt":0}"#,
        ),
        (
            Ci::Fixing,
            (false, true),
            r#"{"ci":false,"ci_fixing":true,"cnf":false,"cmt":0}"#,
        ),
    ] {
        assert_eq!(ci.flags(), flags);
        assert_eq!(Ci::from_flags(flags.0, flags.1), ci);
        let pills = Pills {
            ci,
            ..Pills::default()
        };
        assert_eq!(serde_json::to_string(&pills).unwrap(), json);
        assert_eq!(serde_json::from_str::<Pills>(json).unwrap(), pills);
    }
    assert_eq!(Ci::from_flags(true, true), Ci::Fixing, "both set: fixing");
    assert_eq!(
        serde_json::from_str::<Pills>(r#"{"cmt":2}"#).unwrap(),
        Pills {
            cmt: 2,
            ..Pills::default()
        },
        "missing flags read as off"
    );
}

#[test]
fn merge_states_and_their_columns() {
    let (at, added) = (
        crate::core::decide::tests::t0(),
        crate::core::decide::tests::t0() - chrono::Duration::days(1),
    );
    let auto = Some(MergeVia::AutoMerge);
    let rows = [
        (Merge::Disarmed, (false, None, None)),
        (Merge::Armed { at, via: None }, (true, None, Some(at))),
        (Merge::Armed { at, via: auto }, (true, auto, Some(at))),
        (
            Merge::Merged {
                via: MergeVia::AutoMerge,
            },
            (false, auto, None),
        ),
    ];
    for (merge, columns) in rows {
        assert_eq!(merge.columns(), columns);
        let (armed, via, armed_at) = columns;
        assert_eq!(Merge::from_columns(armed, via, armed_at, added), merge);
    }
    assert_eq!(
        Merge::from_columns(true, None, None, added),
        Merge::Armed {
            at: added,
            via: None
        },
        "armed without a time: armed when first watched"
    );
    // How a merge ends, and how its way is chosen.
    let merged = |m: Merge| m.merged();
    assert_eq!(
        merged(Merge::Armed { at, via: auto }),
        Merge::Merged {
            via: MergeVia::AutoMerge
        }
    );
    assert_eq!(merged(Merge::Armed { at, via: None }), Merge::Disarmed);
    assert_eq!(merged(Merge::Disarmed), Merge::Disarmed);
    let mut m = Merge::Armed { at, via: None };
    m.choose(MergeVia::SelfMerge);
    assert_eq!(m.via(), Some(MergeVia::SelfMerge));
    let mut m = Merge::Disarmed;
    m.choose(MergeVia::SelfMerge);
    assert_eq!(m, Merge::Disarmed, "only an armed merge chooses its way");
}

/// A memory row as stored today. Every field is set, so a renamed or dropped field shows
/// here instead of silently resetting that field for every watch (`serde(default)` would
/// read the old name as absent). Adding a field is fine; renaming one needs a
/// `serde(alias)` and this document left as it is.
const STORED_MEMORY: &str = r#"{
    "handled_failure": "abc:lint",
    "last_fix_fingerprint": "fp",
    "fix": {"message_id": "m1", "head_sha": "abc", "sent_at": "2026-11-29T12:00:00Z", "done_at": "2026-11-29T12:05:00Z"},
    "infra_reruns": ["abc:test"],
    "last_rerun_at": "2026-11-29T12:01:00Z",
    "conflict_sent_for": "abc",
    "agent_activity_at": "2026-11-29T12:02:00Z",
    "agent_run": ["2026-11-29T12:03:00Z", "2026-11-29T12:04:00Z"],
    "cross_repository": true,
    "behind": true,
    "update_requested_for": "abc",
    "holds_update_turn": true,
    "merge_attempted_for": "abc",
    "auto_merge_enabled_once": true,
    "error_streak": 2,
    "picture": {
        "failed": [["lint", "https://ci/1"]], "pending": ["test"], "total": 3,
        "flakes": [["e2e", "502 Bad Gateway"]], "unresolved_threads": 1,
        "review_decision": "APPROVED", "mergeable": "MERGEABLE", "merge_state": "CLEAN",
        "behind_by": 2, "draft": true,
        "queue": {"position": 3, "state": "AWAITING_CHECKS", "estimated_seconds": 720,
                  "enqueued_at": "2026-11-29T11:50:00Z", "group_sha": "def"},
        "merge_method": "squash",
        "failed_logs": [{"name": "lint", "tail": "error: unused", "runner": false}]
    },
    "stuck_reported_for": "abc",
    "queued_head": "abc",
    "queue_left_head": "abd",
    "queue_asked_at": "2026-11-29T11:58:00Z",
    "log_waits": 1,
    "queue_exit_waits": 1
}"#;

#[test]
fn stored_memory_field_names_are_pinned() {
    let stored: serde_json::Value = serde_json::from_str(STORED_MEMORY).unwrap();
    let memory: Memory = serde_json::from_value(stored.clone()).unwrap();
    assert_ne!(memory.picture, Picture::default());
    assert!(memory.fix.is_some() && memory.agent_run.is_some());
    let written = serde_json::to_value(&memory).unwrap();
    let (stored, written) = (stored.as_object().unwrap(), written.as_object().unwrap());
    for (key, value) in stored {
        assert_eq!(
            written.get(key),
            Some(value),
            "`{key}` is read back and written under the same name"
        );
    }
    for key in written.keys() {
        assert!(
            stored.contains_key(key),
            "a new memory field `{key}`: add it to STORED_MEMORY so it stays pinned"
        );
    }
}

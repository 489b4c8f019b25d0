//! PURE: what the agent's side of a fix does to a PR's [`Memory`] between ticks: a command
//! agent's run on the PR, and a message the agent says it finished (`inbox done`). The shell
//! applies these edits to the stored memory in one step. Such an edit can land while a tick
//! holds the PR, so a tick writes only its own changes over it ([`ticked`]).

use serde_json::{Map, Value};

use crate::model::Instant;
use crate::model::watch::Memory;

/// The memory a tick writes: `stored` (the memory as it is when the tick records, with the
/// edits made while it ran) with the tick's own changes applied field by field. A field the
/// tick changed from what it `read` takes the tick's value; every other field keeps the stored
/// one, so an agent's run or an `inbox done` recorded during the tick is not overwritten.
pub(crate) fn ticked(
    read: &Memory,
    ticked: &Memory,
    stored: &Memory,
) -> serde_json::Result<Memory> {
    let (read, mine, mut out) = (fields(read)?, fields(ticked)?, fields(stored)?);
    for key in read.keys().chain(mine.keys()) {
        if read.get(key) != mine.get(key) {
            match mine.get(key) {
                Some(value) => out.insert(key.clone(), value.clone()),
                None => out.remove(key),
            };
        }
    }
    serde_json::from_value(Value::Object(out))
}

/// A memory's fields, as stored.
fn fields(memory: &Memory) -> serde_json::Result<Map<String, Value>> {
    match serde_json::to_value(memory)? {
        Value::Object(map) => Ok(map),
        other => Err(serde::de::Error::custom(format_args!(
            "a memory is stored as an object, not {other}"
        ))),
    }
}

/// A command agent ran on the PR from `started` to `ended`: its window decides whose the next
/// head is, it counts as activity, and it ends the fix in flight (one already ended keeps its
/// end).
pub(crate) fn agent_ran(memory: &mut Memory, started: Instant, ended: Instant) {
    memory.agent_run = Some((started, ended));
    memory.agent_activity_at = Some(ended);
    if let Some(fix) = memory.fix.as_mut().filter(|f| f.done_at.is_none()) {
        fix.done_at = Some(ended);
    }
}

/// The agent finished message `id` at `at`, saying `note`: when it is the fix in flight, the
/// fix ends then; when it is the review feedback in its hands, the next tick judges what it
/// did about it. Returns whether it was either.
pub(crate) fn message_done(memory: &mut Memory, id: &str, at: Instant, note: Option<&str>) -> bool {
    let mut was = false;
    if let Some(fix) = memory.fix.as_mut().filter(|f| f.message_id == id) {
        fix.done_at = Some(at);
        was = true;
    }
    if let Some(sent) = memory.feedback_sent.as_mut().filter(|f| f.message_id == id) {
        sent.done_at = Some(at);
        sent.note = note.map(|n| n.chars().take(NOTE_CHARS).collect());
        was = true;
    }
    was
}

/// The most characters of an agent's note kept.
pub(crate) const NOTE_CHARS: usize = 500;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sha;
    use crate::model::watch::{BudgetDeferral, FixInFlight};

    fn t(s: &str) -> Instant {
        s.parse().unwrap()
    }

    /// A fix in flight sent as message `id`, done at `done_at`.
    fn fix(id: &str, done_at: Option<&str>) -> FixInFlight {
        FixInFlight {
            message_id: id.to_owned(),
            head_sha: Sha("abc".into()),
            sent_at: t("2026-11-29T11:00:00Z"),
            done_at: done_at.map(t),
        }
    }

    #[test]
    fn an_agents_run_is_remembered_and_ends_an_open_fix() {
        let (start, end) = (t("2026-11-29T12:00:00Z"), t("2026-11-29T12:05:00Z"));
        let earlier = "2026-11-29T11:30:00Z";
        for (before, after) in [
            (None, None),
            (
                Some(fix("m1", None)),
                Some(fix("m1", Some("2026-11-29T12:05:00Z"))),
            ),
            (
                Some(fix("m1", Some(earlier))),
                Some(fix("m1", Some(earlier))),
            ),
        ] {
            let mut memory = Memory {
                fix: before.clone(),
                ..Memory::default()
            };
            agent_ran(&mut memory, start, end);
            let want = Memory {
                fix: after,
                agent_run: Some((start, end)),
                agent_activity_at: Some(end),
                ..Memory::default()
            };
            assert_eq!(memory, want, "{before:?}");
        }
    }

    #[test]
    fn a_finished_message_ends_only_the_fix_it_was() {
        let at = t("2026-11-29T12:10:00Z");
        let earlier = "2026-11-29T11:30:00Z";
        for (before, id, was_fix, after) in [
            (None, "m1", false, None),
            (Some(fix("m1", None)), "m2", false, Some(fix("m1", None))),
            (
                Some(fix("m1", None)),
                "m1",
                true,
                Some(fix("m1", Some("2026-11-29T12:10:00Z"))),
            ),
            // Said twice, or after a command run ended it: the last word counts.
            (
                Some(fix("m1", Some(earlier))),
                "m1",
                true,
                Some(fix("m1", Some("2026-11-29T12:10:00Z"))),
            ),
        ] {
            let mut memory = Memory {
                fix: before.clone(),
                ..Memory::default()
            };
            assert_eq!(
                message_done(&mut memory, id, at, None),
                was_fix,
                "{before:?} {id}"
            );
            let want = Memory {
                fix: after,
                ..Memory::default()
            };
            assert_eq!(memory, want, "{before:?} {id}");
        }
    }

    #[test]
    fn a_tick_writes_only_its_own_changes_over_edits_made_meanwhile() {
        let (start, end) = (t("2026-11-29T12:00:00Z"), t("2026-11-29T12:05:00Z"));
        let ran = |mut m: Memory| {
            agent_ran(&mut m, start, end);
            m
        };
        let with = |fix: Option<FixInFlight>, error_streak: u32| Memory {
            fix,
            error_streak,
            ..Memory::default()
        };
        let deferred = Memory {
            budget_deferral: Some(BudgetDeferral {
                at: start,
                until: end,
                why: "budget".into(),
            }),
            ..Memory::default()
        };
        // (read, ticked, stored, written)
        let cases = vec![
            // Nothing happened meanwhile: the tick's memory.
            (with(None, 0), with(None, 1), with(None, 0), with(None, 1)),
            // An agent ran meanwhile: its run and the tick's change both stay.
            (
                with(Some(fix("m1", None)), 0),
                with(Some(fix("m1", None)), 1),
                ran(with(Some(fix("m1", None)), 0)),
                ran(with(Some(fix("m1", None)), 1)),
            ),
            // The tick replaced the fix: its fix wins over the old one's end.
            (
                with(Some(fix("m1", None)), 0),
                with(Some(fix("m2", None)), 0),
                ran(with(Some(fix("m1", None)), 0)),
                Memory {
                    fix: Some(fix("m2", None)),
                    ..ran(Memory::default())
                },
            ),
            // A field the tick cleared (stored only when set) is cleared.
            (
                deferred.clone(),
                Memory::default(),
                ran(deferred.clone()),
                ran(Memory::default()),
            ),
        ];
        for (read, mine, stored, want) in cases {
            assert_eq!(
                ticked(&read, &mine, &stored).unwrap(),
                want,
                "{read:?} {mine:?} {stored:?}"
            );
        }
    }
}

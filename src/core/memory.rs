//! PURE: what the agent's side of a fix does to a PR's [`Memory`] between ticks: a command
//! agent's run on the PR, and a message the agent says it finished (`inbox done`). The shell
//! applies these edits to the stored memory in one step.

use crate::model::Instant;
use crate::model::watch::Memory;

/// A command agent ran on the PR from `started` to `ended`: its window decides whose the next
/// head is, it counts as activity, and it ends the fix in flight (one already ended keeps its
/// end).
pub fn agent_ran(memory: &mut Memory, started: Instant, ended: Instant) {
    memory.agent_run = Some((started, ended));
    memory.agent_activity_at = Some(ended);
    if let Some(fix) = memory.fix.as_mut().filter(|f| f.done_at.is_none()) {
        fix.done_at = Some(ended);
    }
}

/// Whether message `id` is the fix in flight.
pub fn is_fix(memory: &Memory, id: &str) -> bool {
    memory.fix.as_ref().is_some_and(|f| f.message_id == id)
}

/// The agent finished message `id` at `at`: when it is the fix in flight, the fix ends then.
/// Returns whether it was.
pub fn message_done(memory: &mut Memory, id: &str, at: Instant) -> bool {
    match memory.fix.as_mut().filter(|f| f.message_id == id) {
        Some(fix) => {
            fix.done_at = Some(at);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sha;
    use crate::model::watch::FixInFlight;

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
            assert_eq!(is_fix(&memory, id), was_fix, "{before:?} {id}");
            assert_eq!(
                message_done(&mut memory, id, at),
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
}

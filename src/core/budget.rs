//! Budget-aware scheduling, the pure part: given what is left of a forge's rate-limit budget
//! until its reset, the PRs due now and those that fall due before the reset classified
//! (armed, active, idle), and what a PR read is expected to cost, which idle PRs due now wait
//! for the reset. Armed and active PRs always keep their turn and are counted
//! first; idle ones take what is left in their due order, and those it
//! does not cover are pushed to just after the reset. A predictable shortfall so never fails
//! a tick: it only moves idle PRs later. Nothing is deferred when the budget is unknown, when
//! the reset has passed, or when the budget covers every PR due before the reset.

/// Why a due PR needs its turn now, or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    /// Its merge is armed: it goes first.
    Armed,
    /// Something is moving (checks running, a fix in flight, a first look, a recent push): it
    /// keeps its turn.
    Active,
    /// Nothing is moving: it may wait for the reset.
    Idle,
}

/// A due watch's class, from what its last tick stored: armed; active when it was never read,
/// checks were running, a fix or a log is awaited, mergeability was unknown, or its head or
/// agent moved within the activity window; idle otherwise.
pub(crate) fn class_of(w: &crate::model::watch::Watch, now: crate::model::Instant) -> Class {
    let s = &w.status;
    let m = &s.memory;
    let recent = |t: Option<crate::model::Instant>| {
        t.is_some_and(|t| {
            (now - t).num_seconds().abs() <= crate::core::decide::ACTIVITY_WINDOW_SECS
        })
    };
    if s.merge.is_armed() {
        Class::Armed
    } else if w.last_tick_at.is_none()
        || s.pills.ci == crate::model::watch::Ci::Fixing
        || m.fix.is_some()
        || m.log_waits > 0
        || !m.picture.pending.is_empty()
        || m.picture.mergeable.eq_ignore_ascii_case("unknown")
        || recent(s.head_seen_at)
        || recent(m.agent_activity_at)
    {
        Class::Active
    } else {
        Class::Idle
    }
}

/// What is left of the budget, as the forge last said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Left {
    /// Points (GitHub GraphQL) or requests (GitLab) left.
    pub remaining: u64,
    /// Seconds from now to the reset (real time); zero or less: the reset has passed.
    pub reset_in_secs: i64,
}

/// The idle PRs pushed after the reset, and the figures that made it so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shortfall {
    /// Watch ids, in their due order.
    pub deferred: Vec<i64>,
    pub remaining: u64,
    /// What reading every due PR would cost, in thousandths of a point (or request).
    pub needed_milli: u64,
    pub due: usize,
    pub reset_in_secs: i64,
}

impl Shortfall {
    /// Why, in words, for the PR's history and `status`: `GitHub budget: 3 points left until
    /// its reset in 3540s; the 120 PRs due need about 192; armed and active PRs went first`.
    pub(crate) fn why(&self, forge: &str, unit: &str) -> String {
        format!(
            "{forge} budget: {remaining} {unit} left until its reset in {reset}s; the {due} PRs due need about {needed}; armed and active PRs went first",
            remaining = self.remaining,
            reset = self.reset_in_secs,
            due = self.due,
            needed = self.needed_milli.div_ceil(1000),
        )
    }
}

/// Which idle PRs of `due` (watch id and class, in due order) wait for the reset, when `left`
/// does not cover `milli_per_pr` (thousandths of a point per PR read) for every PR due before
/// the reset: those due now and the `upcoming` ones (their classes), not due yet but due
/// before the reset comes. Armed and active PRs, due now or upcoming, are counted first; the
/// idle ones due now take what is left in their due order (the upcoming idle ones wait for
/// their own turn). `None`: nothing waits.
pub(crate) fn defer(
    left: Option<Left>,
    due: &[(i64, Class)],
    upcoming: &[Class],
    milli_per_pr: u64,
) -> Option<Shortfall> {
    let left = left.filter(|l| l.reset_in_secs > 0)?;
    let budget = left.remaining.saturating_mul(1000);
    let all = due.len() + upcoming.len();
    let needed = milli_per_pr.saturating_mul(all as u64);
    if needed <= budget {
        return None;
    }
    let keep_turn = due
        .iter()
        .map(|(_, class)| class)
        .chain(upcoming)
        .filter(|class| **class != Class::Idle)
        .count();
    let mut spent = milli_per_pr.saturating_mul(keep_turn as u64);
    let mut deferred = Vec::new();
    for (id, _) in due.iter().filter(|(_, class)| *class == Class::Idle) {
        let after = spent.saturating_add(milli_per_pr);
        if after <= budget && deferred.is_empty() {
            spent = after;
        } else {
            deferred.push(*id);
        }
    }
    (!deferred.is_empty()).then_some(Shortfall {
        deferred,
        remaining: left.remaining,
        needed_milli: needed,
        due: all,
        reset_in_secs: left.reset_in_secs,
    })
}

#[cfg(test)]
mod tests {
    use super::Class::{Active, Armed, Idle};
    use super::*;

    fn left(remaining: u64, reset_in_secs: i64) -> Left {
        Left {
            remaining,
            reset_in_secs,
        }
    }

    #[test]
    fn deferral_table() {
        struct Case {
            name: &'static str,
            left: Option<Left>,
            due: Vec<(i64, Class)>,
            milli_per_pr: u64,
            deferred: Option<Vec<i64>>,
        }
        let mixed = vec![(1, Idle), (2, Armed), (3, Idle), (4, Active), (5, Idle)];
        let cases = [
            Case {
                name: "an unknown budget defers nothing",
                left: None,
                due: mixed.clone(),
                milli_per_pr: 1_000_000,
                deferred: None,
            },
            Case {
                name: "a budget that covers every PR defers nothing",
                left: Some(left(5, 600)),
                due: mixed.clone(),
                milli_per_pr: 1000,
                deferred: None,
            },
            Case {
                name: "a reset that has passed defers nothing",
                left: Some(left(0, 0)),
                due: mixed.clone(),
                milli_per_pr: 1000,
                deferred: None,
            },
            Case {
                name: "armed and active go first, idle ones in due order take the rest",
                left: Some(left(3, 600)),
                due: mixed.clone(),
                milli_per_pr: 1000,
                deferred: Some(vec![3, 5]),
            },
            Case {
                name: "nothing left: every idle PR waits",
                left: Some(left(0, 3600)),
                due: mixed.clone(),
                milli_per_pr: 20,
                deferred: Some(vec![1, 3, 5]),
            },
            Case {
                name: "armed and active PRs are never deferred, even beyond the budget",
                left: Some(left(1, 3600)),
                due: vec![(1, Armed), (2, Active), (3, Active)],
                milli_per_pr: 1600,
                deferred: None,
            },
            Case {
                name: "summary shares: 0.02 points a PR, 100 idle PRs need 2 points",
                left: Some(left(1, 60)),
                due: (1..=100).map(|id| (id, Idle)).collect(),
                milli_per_pr: 20,
                deferred: Some((51..=100).collect()),
            },
            Case {
                name: "an idle PR that fits after one that did not still waits: the due order holds",
                left: Some(left(2, 60)),
                due: vec![(1, Idle), (2, Active), (3, Idle)],
                milli_per_pr: 1500,
                deferred: Some(vec![1, 3]),
            },
            Case {
                name: "a PR that costs nothing never needs deferring",
                left: Some(left(0, 60)),
                due: mixed,
                milli_per_pr: 0,
                deferred: None,
            },
        ];
        for c in cases {
            let got = defer(c.left, &c.due, &[], c.milli_per_pr).map(|s| s.deferred);
            assert_eq!(got, c.deferred, "{}", c.name);
        }
    }

    #[test]
    fn classes_come_from_the_stored_state() {
        use crate::model::watch::{Watch, WatchStatus};
        use crate::model::{Instant, PrRef};
        let now: Instant = "2026-11-29T12:00:00Z".parse().unwrap();
        let base = Watch {
            id: 1,
            pr: PrRef::github("o/r", 1),
            job: None,
            agent: None,
            auto_fix: None,
            paused: false,
            added_at: now,
            status: WatchStatus::default(),
            next_tick_at: Some(now),
            last_tick_at: Some(now - chrono::Duration::hours(1)),
            last_error: None,
            unreadable: None,
            row_digest: None,
        };
        let with = |f: &dyn Fn(&mut Watch)| {
            let mut w = base.clone();
            f(&mut w);
            class_of(&w, now)
        };
        assert_eq!(with(&|_| {}), Idle, "nothing moving");
        assert_eq!(
            with(&|w| {
                w.status.merge = crate::model::watch::Merge::Armed { at: now, via: None };
            }),
            Armed
        );
        assert_eq!(with(&|w| w.last_tick_at = None), Active, "a first look");
        assert_eq!(
            with(&|w| w.status.memory.picture.pending = vec!["ci".into()]),
            Active,
            "checks running"
        );
        assert_eq!(
            with(&|w| w.status.pills.ci = crate::model::watch::Ci::Fixing),
            Active
        );
        assert_eq!(with(&|w| w.status.memory.log_waits = 1), Active);
        assert_eq!(
            with(&|w| w.status.memory.picture.mergeable = "UNKNOWN".into()),
            Active
        );
        assert_eq!(
            with(&|w| w.status.head_seen_at = Some(now - chrono::Duration::seconds(60))),
            Active,
            "a push a minute ago"
        );
        assert_eq!(
            with(&|w| w.status.head_seen_at = Some(now - chrono::Duration::hours(2))),
            Idle
        );
    }

    #[test]
    fn a_shortfall_says_what_was_left_and_needed() {
        let s = defer(
            Some(left(4, 3540)),
            &[(1, Idle), (2, Armed), (3, Idle), (4, Idle)],
            &[],
            1600,
        )
        .unwrap();
        assert_eq!(s.deferred, vec![3, 4]);
        assert_eq!(
            s.why("GitHub", "points"),
            "GitHub budget: 4 points left until its reset in 3540s; the 4 PRs due need about 7; armed and active PRs went first"
        );
    }

    #[test]
    fn the_prs_that_fall_due_before_the_reset_count_too() {
        let due = [(1, Idle), (2, Idle), (3, Active)];
        // 4 points left, 1 point a PR.
        struct Case {
            name: &'static str,
            upcoming: Vec<Class>,
            deferred: Option<Vec<i64>>,
        }
        let case = |name, upcoming, deferred| Case {
            name,
            upcoming,
            deferred,
        };
        let cases = [
            case("the due PRs alone fit", vec![], None),
            case(
                "one more PR due before the reset still fits",
                vec![Idle],
                None,
            ),
            case(
                "an upcoming active PR is kept room for: the last idle one waits",
                vec![Active, Armed],
                Some(vec![2]),
            ),
            case(
                "upcoming idle PRs count in what is needed but wait for their own turn",
                vec![Idle, Idle, Idle],
                None,
            ),
            case(
                "upcoming armed and active PRs take it all: every idle one due now waits",
                vec![Armed, Active, Active],
                Some(vec![1, 2]),
            ),
        ];
        for c in cases {
            let got = defer(Some(left(4, 3600)), &due, &c.upcoming, 1000).map(|s| s.deferred);
            assert_eq!(got, c.deferred, "{}", c.name);
        }
        let s = defer(Some(left(4, 3600)), &due, &[Active, Idle, Armed], 1000).unwrap();
        assert_eq!(
            (s.due, s.needed_milli, s.deferred),
            (6, 6000, vec![2]),
            "the PRs due before the reset and what they need"
        );
    }
}

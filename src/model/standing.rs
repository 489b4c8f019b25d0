//! A watch's standing: the few columns its place among the others and the counts of all of
//! them depend on (state, pills, error, paused, armed, next look). The status page orders
//! and counts ten thousand PRs, and the metrics count them, from these alone, without loading
//! any watch whole; `status` takes them from the watches it holds.

use crate::model::watch::{Ci, Pills, Watch};
use crate::model::{Instant, PrState};

/// What a watch's need and the counts of all watches depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    pub state: PrState,
    pub pills: Pills,
    /// Its last tick failed.
    pub error: bool,
    pub paused: bool,
    /// Armed to merge.
    pub armed: bool,
    pub next_tick_at: Option<Instant>,
}

impl Standing {
    /// The standing of a watch held whole.
    pub fn of(w: &Watch) -> Standing {
        Standing {
            state: w.status.state,
            pills: w.status.pills,
            error: w.last_error.is_some(),
            paused: w.paused,
            armed: w.status.merge.is_armed(),
            next_tick_at: w.next_tick_at,
        }
    }

    fn open(self) -> bool {
        self.state == PrState::Open
    }

    /// How much the PR needs its owner: lower first (an error, then a lit `ci` or `cnf`,
    /// then `cmt`, the agent fixing, the rest open, paused, and closed or merged last).
    pub fn need(self) -> u8 {
        let p = self.pills;
        match self.state {
            PrState::Merged | PrState::Closed => 6,
            PrState::Open if self.error => 0,
            PrState::Open if self.paused => 5,
            PrState::Open if p.ci == Ci::Lit || p.cnf => 1,
            PrState::Open if p.cmt > 0 => 2,
            PrState::Open if p.ci == Ci::Fixing => 3,
            PrState::Open => 4,
        }
    }
}

/// A watch as the page orders it: its id, its place (need, repository, number) and standing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub id: i64,
    pub repo: String,
    pub number: u64,
    pub standing: Standing,
}

/// The counts of a set of watches, added up one standing at a time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub watched: usize,
    pub open: usize,
    pub merged: usize,
    pub closed: usize,
    /// Open PRs with `ci` lit, with the agent fixing, with `cnf`, with `cmt`.
    pub ci: usize,
    pub ci_fixing: usize,
    pub cnf: usize,
    pub cmt: usize,
    /// Open PRs whose last tick failed, and open PRs armed to merge.
    pub errors: usize,
    pub armed: usize,
    /// Paused watches, whatever their state.
    pub paused: usize,
    /// PRs that need their owner (need 2 or less: an error, `ci`, `cnf`, `cmt`).
    pub needing: usize,
    /// The earliest next look among open, unpaused PRs.
    pub next_due: Option<Instant>,
}

impl Tally {
    /// The counts of `standings`.
    pub fn of(standings: impl IntoIterator<Item = Standing>) -> Tally {
        let mut t = Tally::default();
        for s in standings {
            t.add(s);
        }
        t
    }

    /// Counts one more watch.
    pub fn add(&mut self, s: Standing) {
        let count = |n: &mut usize, yes: bool| *n += usize::from(yes);
        self.watched += 1;
        count(&mut self.open, s.state == PrState::Open);
        count(&mut self.merged, s.state == PrState::Merged);
        count(&mut self.closed, s.state == PrState::Closed);
        let open = s.open();
        count(&mut self.ci, open && s.pills.ci == Ci::Lit);
        count(&mut self.ci_fixing, open && s.pills.ci == Ci::Fixing);
        count(&mut self.cnf, open && s.pills.cnf);
        count(&mut self.cmt, open && s.pills.cmt > 0);
        count(&mut self.errors, open && s.error);
        count(&mut self.armed, open && s.armed);
        count(&mut self.paused, s.paused);
        count(&mut self.needing, s.need() <= 2);
        if open && !s.paused {
            self.next_due = match (self.next_due, s.next_tick_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }

    /// How many are in `state`.
    pub fn in_state(&self, state: PrState) -> usize {
        match state {
            PrState::Open => self.open,
            PrState::Merged => self.merged,
            PrState::Closed => self.closed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::{t0, watch};
    use crate::model::watch::Merge;

    fn standing(state: PrState) -> Standing {
        Standing {
            state,
            pills: Pills::default(),
            error: false,
            paused: false,
            armed: false,
            next_tick_at: None,
        }
    }

    #[test]
    fn need_orders_errors_then_lit_pills_then_comments_then_the_rest() {
        let lit = Pills {
            ci: Ci::Lit,
            ..Pills::default()
        };
        let cases = [
            (
                Standing {
                    error: true,
                    pills: lit,
                    ..standing(PrState::Open)
                },
                0,
            ),
            (
                Standing {
                    pills: lit,
                    ..standing(PrState::Open)
                },
                1,
            ),
            (
                Standing {
                    pills: Pills {
                        cnf: true,
                        ..Pills::default()
                    },
                    ..standing(PrState::Open)
                },
                1,
            ),
            (
                Standing {
                    pills: Pills {
                        cmt: 2,
                        ..Pills::default()
                    },
                    ..standing(PrState::Open)
                },
                2,
            ),
            (
                Standing {
                    pills: Pills {
                        ci: Ci::Fixing,
                        ..Pills::default()
                    },
                    ..standing(PrState::Open)
                },
                3,
            ),
            (standing(PrState::Open), 4),
            (
                Standing {
                    paused: true,
                    pills: lit,
                    ..standing(PrState::Open)
                },
                5,
            ),
            (
                Standing {
                    error: true,
                    ..standing(PrState::Merged)
                },
                6,
            ),
            (standing(PrState::Closed), 6),
        ];
        for (s, need) in cases {
            assert_eq!(s.need(), need, "{s:?}");
        }
    }

    #[test]
    fn a_watchs_standing_is_its_state_pills_error_pause_arming_and_next_look() {
        let mut w = watch();
        w.status.pills.cmt = 2;
        w.last_error = Some("boom".into());
        w.paused = true;
        w.status.merge = Merge::Armed {
            at: t0(),
            via: None,
        };
        w.next_tick_at = Some(t0());
        assert_eq!(
            Standing::of(&w),
            Standing {
                state: PrState::Open,
                pills: w.status.pills,
                error: true,
                paused: true,
                armed: true,
                next_tick_at: Some(t0()),
            }
        );
    }

    #[test]
    fn a_tally_counts_open_prs_pills_and_the_earliest_open_unpaused_next_look() {
        let at = |m: i64| Some(t0() + chrono::Duration::minutes(m));
        let lit = Pills {
            ci: Ci::Lit,
            cmt: 1,
            ..Pills::default()
        };
        let t = Tally::of([
            Standing {
                pills: lit,
                armed: true,
                next_tick_at: at(5),
                ..standing(PrState::Open)
            },
            Standing {
                paused: true,
                error: true,
                next_tick_at: at(1),
                ..standing(PrState::Open)
            },
            Standing {
                pills: lit,
                armed: true,
                error: true,
                next_tick_at: at(2),
                ..standing(PrState::Merged)
            },
            Standing {
                pills: Pills {
                    ci: Ci::Fixing,
                    cnf: true,
                    cmt: 0,
                },
                next_tick_at: at(9),
                ..standing(PrState::Open)
            },
            standing(PrState::Closed),
        ]);
        assert_eq!(
            t,
            Tally {
                watched: 5,
                open: 3,
                merged: 1,
                closed: 1,
                ci: 1,
                ci_fixing: 1,
                cnf: 1,
                cmt: 1,
                errors: 1,
                armed: 1,
                paused: 1,
                needing: 3,
                next_due: at(5),
            }
        );
        assert_eq!(t.in_state(PrState::Merged), 1);
        assert_eq!(Tally::of([]).next_due, None);
    }
}

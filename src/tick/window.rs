//! How far a run reads ahead of the outcomes it has handed on. Outcomes go out in the run's
//! order (see [`super::outcomes`]), so every chunk finished after a slower one waits for it;
//! a new group opens only while fewer than [`GROUPS_AHEAD`] groups, counted from the oldest
//! whose outcomes have not all gone out, are open. A slow read holds only its own chunk
//! while the run goes on up to that many groups past it, and what a run holds (watches,
//! hints, summaries, outcomes waiting for their turn) stays bounded however many PRs are due.

use std::collections::VecDeque;

/// How many groups are open at once, each holding its watches, its kept reads' hints and its
/// summaries (never its kept snapshots: each chunk loads those it reuses), counted until
/// their outcomes have gone out: enough that the next groups' summaries are read while this
/// thread decides, few enough that memory does not grow with the number of PRs.
pub(super) const GROUPS_AHEAD: usize = 6;

/// The groups opened whose outcomes have not all gone out, by where their chunks end.
#[derive(Debug, Default)]
pub(super) struct Window {
    /// For each such group, oldest first: one past the last sequence number its chunks use.
    ends: VecDeque<usize>,
}

impl Window {
    /// A group was opened; `end` is one past the last sequence number its chunks use.
    pub(super) fn opened(&mut self, end: usize) {
        self.ends.push_back(end);
    }

    /// Whether another group may open, now that the chunks numbered below `handed_on` have
    /// gone out.
    pub(super) fn may_open(&mut self, handed_on: usize) -> bool {
        while self.ends.front().is_some_and(|&end| end <= handed_on) {
            self.ends.pop_front();
        }
        self.ends.len() < GROUPS_AHEAD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups of ten chunks: the window fills at six, and only the oldest group's outcomes
    /// going out make room; later groups finishing first do not.
    #[test]
    fn a_group_opens_only_within_six_of_the_oldest_not_handed_on() {
        let mut window = Window::default();
        let mut formed = 0;
        while window.may_open(0) {
            formed += 10;
            window.opened(formed);
        }
        assert_eq!(formed, 10 * GROUPS_AHEAD);
        // The first group's last chunk is slow: everything after it waits, nothing opens.
        assert!(!window.may_open(9));
        // It goes out, and the five groups behind it with it: six may open again, one at a time.
        assert!(window.may_open(60));
        for _ in 0..GROUPS_AHEAD {
            assert!(window.may_open(60));
            formed += 10;
            window.opened(formed);
        }
        assert!(!window.may_open(60));
        assert!(window.may_open(70));
    }
}

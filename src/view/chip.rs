//! The chip at the head of every PR line (`PR #342 ✗ 2 failing`): the state of a PR
//! in one glance, for `status`, the status page and the run summary. [`Chip::of`] decides, one
//! match arm per chip, so a new chip is one arm and one variant.

use crate::model::PrState;
use crate::model::watch::Ci;
use crate::model::watch::Watch;

/// What the chip says after `PR #342`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chip {
    Merged,
    Closed,
    /// The PR conflicts with its base (takes precedence over checks, which may not run).
    Conflicts,
    /// Checks failed on the head: how many.
    Failing(usize),
    /// Checks still running: done of total.
    Running {
        done: usize,
        total: usize,
    },
    /// Waiting in the forge's merge queue or merge train.
    InQueue {
        position: u32,
        checking: bool,
        minutes: Option<u64>,
        train: bool,
    },
    /// Armed to merge, checks green or none: waiting for the forge.
    MergingWhenReady,
    /// Every check passed (or there are none).
    Passing,
    /// A draft, checks green or none: it waits until marked ready.
    Draft,
    /// Not read yet: no read of the PR has succeeded (never ticked, or every tick failed).
    Unread,
}

/// How a chip is coloured: a signal, not a decoration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Good,
    Bad,
    Busy,
    Quiet,
}

impl Chip {
    /// The chip of a watched PR, from what its last tick recorded.
    pub fn of(w: &Watch) -> Chip {
        let s = &w.status;
        let p = &s.memory.picture;
        let total = p.total as usize;
        match s.state {
            PrState::Merged => Chip::Merged,
            PrState::Closed => Chip::Closed,
            // Only a read that succeeded fills the picture: nothing read, nothing to show.
            PrState::Open if p.merge_state.is_empty() => Chip::Unread,
            PrState::Open if s.pills.cnf => Chip::Conflicts,
            PrState::Open if !p.failed.is_empty() => Chip::Failing(p.failed.len()),
            PrState::Open if !p.pending.is_empty() => Chip::Running {
                done: total.saturating_sub(p.pending.len()),
                total: total.max(p.pending.len()),
            },
            PrState::Open if s.pills.ci == Ci::Lit => Chip::Failing(1),
            PrState::Open if s.merge.is_armed() && p.queue.is_some() => {
                let e = p.queue.as_ref().map_or((0, false, None), |e| {
                    (
                        e.position,
                        e.state == crate::model::QueueState::AwaitingChecks,
                        e.estimated_seconds.map(|s| s.div_ceil(60)),
                    )
                });
                Chip::InQueue {
                    position: e.0,
                    checking: e.1,
                    minutes: e.2,
                    train: w.pr.forge == crate::model::ForgeKind::GitLab,
                }
            }
            PrState::Open if p.draft => Chip::Draft,
            PrState::Open if s.merge.is_armed() => Chip::MergingWhenReady,
            PrState::Open => Chip::Passing,
        }
    }

    /// `✗ 2 failing`, `◌ 3/7 running`, `merged`.
    pub fn text(self) -> String {
        match self {
            Chip::Merged => "merged".into(),
            Chip::Closed => "closed".into(),
            Chip::Conflicts => "⚠ conflicts".into(),
            Chip::Failing(n) => format!("✗ {n} failing"),
            Chip::Running { done, total } => format!("◌ {done}/{total} running"),
            Chip::InQueue {
                position,
                checking,
                minutes,
                train,
            } => {
                let line = if train { "train" } else { "queue" };
                if checking && position <= 1 {
                    "⏳ queued, checking".into()
                } else if position == 0 {
                    format!("⏳ in {line}")
                } else {
                    format!(
                        "⏳ {} in {}{}",
                        crate::core::decide::queue::ordinal(position),
                        line,
                        minutes.map(|m| format!(" (~{m}m)")).unwrap_or_default()
                    )
                }
            }
            Chip::MergingWhenReady => "merging when ready".into(),
            Chip::Passing => "✓".into(),
            Chip::Draft => "draft".into(),
            Chip::Unread => "… not read yet".into(),
        }
    }

    pub fn tone(self) -> Tone {
        match self {
            Chip::Merged | Chip::Passing | Chip::MergingWhenReady => Tone::Good,
            Chip::Conflicts | Chip::Failing(_) => Tone::Bad,
            Chip::Running { .. } | Chip::InQueue { .. } => Tone::Busy,
            Chip::Closed | Chip::Draft | Chip::Unread => Tone::Quiet,
        }
    }

    /// A class name for the page: `good`, `bad`, `busy`, `quiet`.
    pub fn class(self) -> &'static str {
        match self.tone() {
            Tone::Good => "good",
            Tone::Bad => "bad",
            Tone::Busy => "busy",
            Tone::Quiet => "quiet",
        }
    }
}

/// `PR #342 ✗ 2 failing`, `MR !57 merged`.
pub fn label(w: &Watch) -> String {
    format!("{} {}", w.pr.short(), Chip::of(w).text())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::{t0, watch};
    use crate::model::watch::MergeVia;

    fn ticked() -> Watch {
        let mut w = watch();
        w.last_tick_at = Some(t0());
        w.status.memory.picture.merge_state = "CLEAN".into();
        w.status.memory.picture.total = 7;
        w
    }

    #[test]
    fn each_state_has_its_chip() {
        let mut cases: Vec<(Watch, &str)> = Vec::new();
        cases.push((watch(), "PR #1 … not read yet"));
        cases.push((ticked(), "PR #1 ✓"));
        let mut w = watch();
        w.last_tick_at = Some(t0());
        w.last_error = Some("GitHub refused the token".into());
        cases.push((w, "PR #1 … not read yet"));
        let mut w = ticked();
        w.status.memory.picture.draft = true;
        cases.push((w.clone(), "PR #1 draft"));
        w.status.merge = crate::model::watch::Merge::Armed {
            at: t0(),
            via: Some(MergeVia::AutoMerge),
        };
        cases.push((w, "PR #1 draft"));
        let mut w = ticked();
        w.status.memory.picture.failed = vec![("lint".into(), None), ("test".into(), None)];
        cases.push((w, "PR #1 ✗ 2 failing"));
        let mut w = ticked();
        w.status.memory.picture.pending = vec!["a".into(), "b".into(), "c".into(), "d".into()];
        cases.push((w, "PR #1 ◌ 3/7 running"));
        let mut w = ticked();
        w.status.pills.cnf = true;
        w.status.memory.picture.failed = vec![("lint".into(), None)];
        cases.push((w, "PR #1 ⚠ conflicts"));
        let mut w = ticked();
        w.status.merge = crate::model::watch::Merge::Armed {
            at: t0(),
            via: Some(MergeVia::AutoMerge),
        };
        cases.push((w.clone(), "PR #1 merging when ready"));
        let mut q = w.clone();
        q.status.memory.picture.queue = Some(crate::model::QueueEntry {
            position: 3,
            state: crate::model::QueueState::Queued,
            estimated_seconds: Some(720),
            enqueued_at: None,
            ahead: Vec::new(),
            group_sha: None,
        });
        cases.push((q.clone(), "PR #1 ⏳ 3rd in queue (~12m)"));
        if let Some(e) = q.status.memory.picture.queue.as_mut() {
            e.position = 1;
            e.state = crate::model::QueueState::AwaitingChecks;
        }
        cases.push((q.clone(), "PR #1 ⏳ queued, checking"));
        q.pr = "g/p!57".parse().unwrap();
        if let Some(e) = q.status.memory.picture.queue.as_mut() {
            e.position = 2;
            e.estimated_seconds = None;
            e.state = crate::model::QueueState::Queued;
        }
        cases.push((q.clone(), "MR !57 ⏳ 2nd in train"));
        if let Some(e) = q.status.memory.picture.queue.as_mut() {
            e.position = 0;
        }
        cases.push((q, "MR !57 ⏳ in train"));
        let mut w = ticked();
        w.status.state = PrState::Merged;
        cases.push((w, "PR #1 merged"));
        let mut w = ticked();
        w.status.state = PrState::Closed;
        cases.push((w, "PR #1 closed"));
        let mut w = ticked();
        w.pr = "g/p!57".parse().unwrap();
        cases.push((w, "MR !57 ✓"));
        for (w, want) in cases {
            assert_eq!(label(&w), want);
        }
    }
}

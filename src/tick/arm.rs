//! A chunk's armings asked together, off the acting thread: of the PRs a chunk decided, those
//! whose plan turns the forge's auto-merge on before asking anything else of it have their
//! intents recorded in one commit on the acting thread, then are armed on the read pool in as
//! few requests as the forge allows (GitHub: one document), one chunk's armings at a time (a
//! forge asks for its writes one after another); the chunk waits, and when the answers are
//! back each is applied with its PR's plan by [`crate::core::outcome`], as a single write's is.
//! A write whose intent could not be recorded is not made; a request that fails as a whole
//! leaves each of its intents for the next read to reconcile.

use std::collections::{BTreeMap, VecDeque};

use super::execute;
use super::pr::Step;
use super::run::RunOptions;
use crate::app::{App, SharedForge};
use crate::forge::ForgeError;
use crate::model::intent::{IntentKind, IntentLog};
use crate::model::outcome::Outcome;
use crate::model::{MergeMethod, Snapshot};
use crate::store::Lease;

/// A chunk's armings to send: the forge client, and each PR's snapshot and method.
pub(super) struct Arming {
    pub(super) forge: SharedForge,
    pub(super) prs: Vec<(Snapshot, MergeMethod)>,
}

/// Asks `prs` of `forge` (on a pool thread): one answer per PR, in order.
pub(super) fn send(
    forge: &SharedForge,
    prs: &[(Snapshot, MergeMethod)],
) -> Vec<Result<(), ForgeError>> {
    let asked: Vec<(&Snapshot, MergeMethod)> = prs.iter().map(|(s, m)| (s, *m)).collect();
    forge.enable_auto_merge_many(&asked)
}

/// What a chunk's armings leave its plans with.
pub(super) enum Armings {
    /// Nothing to wait for: the answer to each step's first arming where it is known
    /// already (not asked: its intent could not be recorded), one per step.
    Ready(Vec<Option<Outcome>>),
    /// Their intents are recorded: the armings to send, at these places among the steps.
    Send(Vec<usize>, Arming),
}

/// Records the intents of the armings `steps` ask first, in one commit, and says what to
/// send. A dry run asks nothing; without a forge client each plan is applied as it stands
/// (and says why).
pub(super) fn prepare<L>(app: &mut App, steps: &[(Step, L)], opts: &RunOptions) -> Armings {
    let mut ready: Vec<Option<Outcome>> = steps.iter().map(|_| None).collect();
    let arming: Vec<(usize, i64, &Snapshot, MergeMethod)> = steps
        .iter()
        .enumerate()
        .filter_map(|(i, (step, _))| match step {
            Step::Decided(d) => d.arming().map(|(id, snap, method)| (i, id, snap, method)),
            Step::Acted(_) => None,
        })
        .collect();
    let Some(kind) = arming.first().map(|(_, _, snap, _)| snap.pr.forge) else {
        return Armings::Ready(ready);
    };
    if opts.dry_run {
        return Armings::Ready(ready);
    }
    let Ok(forge) = app.forges.shared(kind, &app.config) else {
        return Armings::Ready(ready);
    };
    let now = app.now;
    // The chunk's intents in one commit, before anything is asked.
    let recorded = app.store.batch(|store| {
        for (_, id, snap, method) in &arming {
            store.record_intent(*id, IntentKind::Arm, &snap.head.sha, method.as_str(), now)?;
        }
        Ok(())
    });
    if let Err(e) = recorded {
        for (i, _, snap, _) in &arming {
            ready[*i] = Some(Outcome::NotAsked(execute::not_recorded(
                IntentKind::Arm,
                &snap.head.sha,
                &e,
            )));
        }
        return Armings::Ready(ready);
    }
    let places = arming.iter().map(|(i, ..)| *i).collect();
    let prs = arming
        .into_iter()
        .map(|(_, _, snap, method)| (snap.clone(), method))
        .collect();
    Armings::Send(places, Arming { forge, prs })
}

/// A chunk's steps and the leases a stop left unasked.
pub(super) type Steps = (Vec<(Step, Option<Lease>)>, Vec<Lease>);

/// The chunks waiting for their armings' answers, and the armings not sent yet: one chunk's
/// are out at a time.
pub(super) struct Line<A = Arming> {
    /// By chunk: its steps, leases, and its armings' places among the steps.
    parked: BTreeMap<usize, (Steps, Vec<usize>)>,
    queue: VecDeque<(usize, A)>,
    out: bool,
}

impl<A> Default for Line<A> {
    fn default() -> Self {
        Line {
            parked: BTreeMap::new(),
            queue: VecDeque::new(),
            out: false,
        }
    }
}

impl<A> Line<A> {
    /// `chunk` waits for `arming`, asked for the steps at `places`.
    pub(super) fn park(&mut self, chunk: usize, steps: Steps, places: Vec<usize>, arming: A) {
        self.parked.insert(chunk, (steps, places));
        self.queue.push_back((chunk, arming));
    }

    /// How many chunks wait for their armings.
    pub(super) fn waiting(&self) -> usize {
        self.parked.len()
    }

    /// The next chunk's armings to send, when none are out.
    pub(super) fn next(&mut self) -> Option<(usize, A)> {
        if self.out {
            return None;
        }
        let next = self.queue.pop_front()?;
        self.out = true;
        Some(next)
    }

    /// `chunk`'s armings answered `results`: its steps and leases, with the answer to each
    /// step's first arming.
    pub(super) fn answered(
        &mut self,
        chunk: usize,
        results: Vec<Result<(), ForgeError>>,
    ) -> Option<(Steps, Vec<Option<Outcome>>)> {
        self.out = false;
        let (steps, places) = self.parked.remove(&chunk)?;
        let mut answers: Vec<Option<Outcome>> = steps.0.iter().map(|_| None).collect();
        for (place, result) in places.into_iter().zip(results) {
            answers[place] = Some(execute::answer(result));
        }
        Some((steps, answers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_chunks_armings_are_out_at_a_time_in_the_order_chunks_wait() {
        let mut line: Line<&str> = Line::default();
        line.park(3, (Vec::new(), Vec::new()), Vec::new(), "third");
        line.park(1, (Vec::new(), Vec::new()), Vec::new(), "first");
        assert_eq!(line.waiting(), 2);
        assert_eq!(line.next(), Some((3, "third")));
        assert_eq!(line.next(), None, "one out at a time");
        assert!(line.answered(3, Vec::new()).is_some());
        assert_eq!(line.waiting(), 1);
        assert_eq!(line.next(), Some((1, "first")));
        assert!(line.answered(1, Vec::new()).is_some());
        assert_eq!((line.waiting(), line.next()), (0, None));
    }
}

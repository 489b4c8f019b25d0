//! A run's outcomes on their way out. Each chunk's PR outcomes are handed to the run's
//! consumer once every chunk formed before it has been handed on, so the consumer sees the
//! run's order (forge by forge, due order within a forge) while the run holds only the chunks
//! that finished ahead of a slower one, never every outcome. What the run itself needs of
//! them afterwards (counts, actions by kind, PRs read per forge) is tallied as they pass.

use std::collections::BTreeMap;

use crate::core::decide::Plan;
use crate::model::watch::Watch;
use crate::model::{ForgeKind, PrRef};

/// The outcome of one PR's tick.
#[derive(Debug)]
pub struct PrOutcome {
    pub watch: Watch,
    /// The plan, when the PR could be read.
    pub plan: Option<Plan>,
    pub error: Option<String>,
    /// The read failed because the forge refused the token or could not be reached.
    pub cut_off: bool,
}

/// Told what a run does as it goes.
pub trait Report {
    /// What syncing the jobs' watch lists did (PRs added, listings that failed), before any
    /// PR is read.
    fn jobs(&mut self, _lines: &[String]) {}
    /// How many PRs are due (the most the run ticks: a PR another run holds is skipped),
    /// once, before the first outcome.
    fn due(&mut self, _prs: usize) {}
    /// One PR's outcome, once recorded: forge by forge, in due order within a forge.
    fn outcome(&mut self, outcome: PrOutcome);
    /// Whether it reads the outcome of a PR whose settled decision held (its tick changed
    /// nothing but its times). While it does not, such a PR's stored state is never loaded,
    /// and it is told of the PR by [`Report::settled`] instead. Once it says no it must not
    /// say yes again in the same run.
    fn wants_settled(&self) -> bool {
        true
    }
    /// A PR ticked whose settled decision held, in place of its outcome while
    /// [`Report::wants_settled`] says no; in the order of the outcomes.
    fn settled(&mut self, _pr: &PrRef) {}
}

impl<F: FnMut(PrOutcome)> Report for F {
    fn outcome(&mut self, outcome: PrOutcome) {
        self(outcome);
    }
}

/// A chunk's PRs on their way out: the addresses of its settled PRs (see
/// [`Report::settled`]), then its outcomes.
type Handed = (Vec<PrRef>, Vec<PrOutcome>);

/// The run's outcomes: the consumer they go to, the chunks waiting for an earlier one (and
/// the settled PRs of chunks not yet done), and the tallies.
pub struct Outcomes<'a> {
    consumer: &'a mut dyn Report,
    /// The chunk whose outcomes go out next.
    next: usize,
    waiting: BTreeMap<usize, Handed>,
    settled: BTreeMap<usize, Vec<PrRef>>,
    tally: Tally,
}

impl std::fmt::Debug for Outcomes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outcomes")
            .field("next", &self.next)
            .field("waiting", &self.waiting.len())
            .field("tally", &self.tally)
            .finish_non_exhaustive()
    }
}

/// What a run counts of its outcomes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    /// PRs ticked (an outcome each).
    pub ticked: usize,
    /// Of those, PRs whose tick failed.
    pub errors: usize,
    /// The planned actions, by kind.
    pub actions: BTreeMap<&'static str, u64>,
    /// PRs ticked per forge.
    pub read: BTreeMap<ForgeKind, u64>,
    /// Of the PRs ticked, those whose read was cut off (token refused, forge unreachable).
    pub cut_off: usize,
    /// The forges at least one PR was read from.
    pub forges_read: std::collections::BTreeSet<ForgeKind>,
    /// The PRs whose tick failed, by address.
    pub failed_prs: Vec<String>,
}

impl<'a> Outcomes<'a> {
    pub fn new(consumer: &'a mut dyn Report) -> Self {
        Outcomes {
            consumer,
            next: 0,
            waiting: BTreeMap::new(),
            settled: BTreeMap::new(),
            tally: Tally::default(),
        }
    }

    /// Chunk `seq` is done with `outcomes` (none, when another run held all its PRs): hands
    /// on every chunk now in order.
    pub fn chunk_done(&mut self, seq: usize, outcomes: Vec<PrOutcome>) {
        let settled = self.settled.remove(&seq).unwrap_or_default();
        self.waiting.insert(seq, (settled, outcomes));
        while let Some(outcomes) = self.waiting.remove(&self.next) {
            self.next += 1;
            self.hand_on(outcomes);
        }
    }

    /// Chunk `seq`'s PRs `prs`, whose settled decisions held, are recorded (see
    /// [`Report::settled`]): they go out first of its PRs once it is done.
    pub(super) fn settled_done(&mut self, seq: usize, prs: Vec<PrRef>) {
        self.settled.entry(seq).or_default().extend(prs);
    }

    /// Whether the consumer reads the outcomes of settled PRs (see [`Report::wants_settled`]).
    pub(super) fn wants_settled(&self) -> bool {
        self.consumer.wants_settled()
    }

    /// How many chunks have gone out: every chunk numbered below it.
    pub(super) fn handed_on(&self) -> usize {
        self.next
    }

    /// The run is over: chunks still waiting (behind one a stop left unread) go out in order.
    pub fn finish(&mut self) -> Tally {
        for (seq, prs) in std::mem::take(&mut self.settled) {
            self.waiting.entry(seq).or_default().0.splice(0..0, prs);
        }
        for outcomes in std::mem::take(&mut self.waiting).into_values() {
            self.hand_on(outcomes);
        }
        std::mem::take(&mut self.tally)
    }

    fn hand_on(&mut self, (settled, outcomes): Handed) {
        for pr in settled {
            // A quiet plan: read, no action, no error.
            let t = &mut self.tally;
            t.ticked += 1;
            *t.read.entry(pr.forge).or_default() += 1;
            t.forges_read.insert(pr.forge);
            self.consumer.settled(&pr);
        }
        for o in outcomes {
            let t = &mut self.tally;
            t.ticked += 1;
            t.errors += usize::from(o.error.is_some());
            t.cut_off += usize::from(o.cut_off);
            *t.read.entry(o.watch.pr.forge).or_default() += 1;
            if o.plan.is_some() {
                t.forges_read.insert(o.watch.pr.forge);
            }
            if o.error.is_some() {
                t.failed_prs.push(o.watch.pr.url());
            }
            for a in o.plan.iter().flat_map(|p| &p.actions) {
                *t.actions
                    .entry(crate::tick::metrics::action_kind(a))
                    .or_default() += 1;
            }
            self.consumer.outcome(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    fn outcome(forge: ForgeKind, n: u64, error: bool) -> PrOutcome {
        let mut watch = crate::core::decide::tests::watch();
        watch.pr.forge = forge;
        watch.pr.number = n;
        PrOutcome {
            watch,
            plan: None,
            error: error.then(|| "boom".to_owned()),
            cut_off: false,
        }
    }

    /// Chunks finishing out of order go out in order, each as soon as those before it have;
    /// a gap a stop left is passed over when the run finishes.
    #[test]
    fn chunks_go_out_in_their_order_as_soon_as_they_can() {
        let seen = RefCell::new(Vec::new());
        let mut record = |o: PrOutcome| seen.borrow_mut().push(o.watch.pr.number);
        let mut outcomes = Outcomes::new(&mut record);
        let (gh, gl) = (ForgeKind::GitHub, ForgeKind::GitLab);
        // (chunk done, its PRs as (forge, number)) → every PR gone out after it
        let steps = [
            (1, vec![(gh, 3), (gh, 4)], vec![]),
            (0, vec![(gh, 1), (gh, 2)], vec![1, 2, 3, 4]),
            (2, Vec::new(), vec![1, 2, 3, 4]),
            (4, vec![(gl, 9)], vec![1, 2, 3, 4]),
            (5, vec![(gl, 10)], vec![1, 2, 3, 4]),
        ];
        for (seq, prs, after) in steps {
            let chunk = prs.iter().map(|&(f, n)| outcome(f, n, n == 4)).collect();
            outcomes.chunk_done(seq, chunk);
            assert_eq!(*seen.borrow(), after, "after chunk {seq}");
        }
        let tally = outcomes.finish();
        assert_eq!(*seen.borrow(), vec![1, 2, 3, 4, 9, 10]);
        assert_eq!((tally.ticked, tally.errors), (6, 1));
        assert_eq!(tally.read, BTreeMap::from([(gh, 4), (gl, 2)]));
    }

    /// What a consumer hears, in order: `o` for an outcome, `s` for a settled PR.
    #[derive(Default)]
    struct Heard(Vec<(char, u64)>, bool);

    impl Report for Heard {
        fn outcome(&mut self, o: PrOutcome) {
            self.0.push(('o', o.watch.pr.number));
        }
        fn wants_settled(&self) -> bool {
            self.1
        }
        fn settled(&mut self, pr: &PrRef) {
            self.0.push(('s', pr.number));
        }
    }

    /// A chunk's settled PRs go out first of its PRs once it is done, in the run's order, and
    /// are tallied as read PRs with no action; those of a chunk a stop left undone go out
    /// when the run finishes.
    #[test]
    fn settled_prs_go_out_with_their_chunk_and_are_tallied() {
        let mut heard = Heard::default();
        let mut outcomes = Outcomes::new(&mut heard);
        assert!(!outcomes.wants_settled());
        let (gh, gl) = (ForgeKind::GitHub, ForgeKind::GitLab);
        let pr = |forge, n| PrRef {
            forge,
            repo: "o/r".into(),
            number: n,
        };
        outcomes.settled_done(1, vec![pr(gh, 5), pr(gh, 6)]);
        outcomes.chunk_done(1, vec![outcome(gh, 7, false)]);
        outcomes.settled_done(0, vec![pr(gh, 1)]);
        outcomes.settled_done(0, vec![pr(gh, 2)]);
        outcomes.chunk_done(0, vec![outcome(gh, 3, true)]);
        outcomes.settled_done(3, vec![pr(gl, 9)]);
        let tally = outcomes.finish();
        assert_eq!((tally.ticked, tally.errors), (7, 1));
        assert_eq!(tally.read, BTreeMap::from([(gh, 6), (gl, 1)]));
        assert_eq!(tally.forges_read, [gh, gl].into_iter().collect());
        let want = [
            ('s', 1),
            ('s', 2),
            ('o', 3),
            ('s', 5),
            ('s', 6),
            ('o', 7),
            ('s', 9),
        ];
        assert_eq!(heard.0, want);
    }
}

//! A run of the tick: what it is asked ([`RunOptions`]), how it tells its progress ([`Step`]),
//! what it comes to ([`RunSummary`]), and the run under way ([`Run`]) that the flow carries.

use super::outcomes::Outcomes;
use crate::holder::Holder;
use crate::store::Selection;

/// What a run asks for.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub selection: Selection,
    pub force: bool,
    pub dry_run: bool,
    /// `pr-monitor fix`: send the current failure to the agent whatever the author and guards.
    /// `fix` says a PR's failure itself (its `error:` line), so the run logs no `tick failed`
    /// line of its own: the error is said once.
    pub fix_asked: bool,
    /// Set by a signal handler: finish the PR in hand, then stop.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Told how the run is going (a terminal draws it; nothing else asks).
    pub progress: Option<Progress>,
}

/// A step of a run, for a progress display.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// Reading the due PRs from their forges.
    Reading { due: usize },
    /// One PR decided and recorded.
    Ticked {
        done: usize,
        total: usize,
        pr: &'a crate::model::PrRef,
    },
    /// Sending the outbox.
    Delivering,
    /// The run is over: the display clears itself.
    Done,
}

/// Receives the run's [`Step`]s.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(Step<'_>) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

pub(super) fn tell(opts: &RunOptions, step: Step<'_>) {
    if let Some(p) = &opts.progress {
        (p.0)(step);
    }
}

/// The outcome of a run; each PR's own outcome went to the run's [`Report`] as it came.
#[derive(Debug, Default)]
pub struct RunSummary {
    /// PRs ticked, and how many of those ticks failed.
    pub ticked: usize,
    pub errors: usize,
    /// Watches another run held the lease on: one entry per watch, naming the holder when its
    /// lease does.
    pub busy: Vec<Option<Holder>>,
    /// Watches whose lease this run took over from a run whose process was gone: one entry
    /// per watch.
    pub taken_over: Vec<Holder>,
    /// How many watches exist at all (to tell "nothing watched" from "nothing due").
    pub watched: usize,
    /// Outbox messages delivered, and those that failed (id, error).
    pub delivered: usize,
    pub delivery_failures: Vec<(String, String)>,
    /// What syncing the jobs' watch lists did (PRs added, listings that failed).
    pub jobs: Vec<String>,
    /// Due watches pushed past their forge's rate-limit reset for budget, unread.
    pub deferred: usize,
    /// Nothing could be read: PRs were due, and every one's read was cut off because its
    /// forge refused the token or could not be reached.
    pub nothing_read: bool,
    /// Every forge the run needed answered at least one of its PRs' reads.
    pub read_every_forge: bool,
}

impl RunSummary {
    pub fn failed(&self) -> bool {
        self.errors > 0
    }

    /// The exit code: 3 when nothing could be read, 1 when some PR's tick failed, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.nothing_read {
            3
        } else {
            u8::from(self.failed())
        }
    }
}

/// A run under way: what it was asked, the holder of its leases, what it has to tell, and how
/// far it got.
pub(super) struct Run<'r, 'o> {
    pub(super) opts: &'r RunOptions,
    pub(super) holder: &'r Holder,
    pub(super) summary: &'r mut RunSummary,
    pub(super) outcomes: Outcomes<'o>,
    pub(super) done: usize,
    pub(super) total: usize,
    /// The digest of the configuration the run decides under (see [`super::settle`]).
    pub(super) config: u64,
}

impl Run<'_, '_> {
    /// One more of the run's PRs is ticked (`pr`): its progress says so.
    pub(super) fn ticked(&mut self, pr: &crate::model::PrRef) {
        self.done += 1;
        tell(
            self.opts,
            Step::Ticked {
                done: self.done,
                total: self.total,
                pr,
            },
        );
    }
}

/// Whether a signal asked the run to stop after the PR in hand.
pub(super) fn stopped(opts: &RunOptions) -> bool {
    opts.stop
        .as_ref()
        .is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst))
}

//! The daemon: cron-scheduled sweeps (tokio-cron-scheduler) feeding one sequential worker, so
//! sweeps never overlap; the outbox is retried at least every `poll_sec`; SIGTERM or SIGINT
//! lets the PR in hand finish, then the daemon exits 0. Each sweep builds its forge clients
//! anew, reading the tokens afresh, so a rotated token needs no restart. With `serve:` it also
//! listens ([`super::serve`]): a verified webhook delivery that names a watched PR makes it due
//! at once and wakes the worker, which sweeps what is due, exactly as a scheduled sweep would.
//!
//! tokio stays here: the tick itself is synchronous, run on the worker thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio_cron_scheduler::{Job, JobScheduler};

use crate::app::App;
use crate::commands::serve::{self, LastSweep, Shared};
use crate::model::nudge::Nudge;
use crate::store::Selection;
use crate::tick::{self, RunOptions};

/// What woke the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Wake {
    /// A schedule fired: sweep the due PRs (of one job, or all).
    Sweep(Option<String>),
    /// A webhook delivery named these PRs: make them due, then sweep what is due.
    Nudge(Vec<Nudge>),
    Stop,
}

/// The distinct sweeps: the config's schedule for everything, plus each job's own schedule.
fn sweeps(app: &App) -> Vec<(String, Option<String>)> {
    let mut out = vec![(app.config.schedule.with_seconds(), None)];
    for job in &app.config.jobs {
        if let Some(s) = &job.schedule {
            out.push((s.with_seconds(), Some(job.name.clone())));
        }
    }
    out
}

/// Runs until a signal; returns the exit code (0).
pub fn daemon(app: &mut App, database: &std::path::Path) -> Result<u8> {
    let (tx, rx) = mpsc::channel::<Wake>();
    let stop = Arc::new(AtomicBool::new(false));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the scheduler runtime")?;
    let mut scheduler = schedule_sweeps(&runtime, sweeps(app), &tx)?;
    stop_on_signal(&runtime, tx.clone(), stop.clone());
    let shared = Arc::new(Shared::default());
    if app.config.serve.is_some() {
        let tx = tx.clone();
        let addr = serve::start(
            &app.config,
            database.to_path_buf(),
            app.clock_fixed.then_some(app.now),
            shared.clone(),
            Box::new(move |nudges| {
                let _ = tx.send(Wake::Nudge(nudges));
            }),
        )?;
        crate::logging::say(&format!("pr-monitor daemon: serving on http://{addr}"));
    }
    crate::logging::say(&format!(
        "pr-monitor daemon: sweeping on `{}`; SIGTERM or SIGINT stops it",
        app.config.schedule.as_str()
    ));
    let _ = tx.send(Wake::Sweep(None));
    let retry = Duration::from_secs(app.config.pr.poll_sec.max(1));
    loop {
        let wake = match rx.recv_timeout(retry) {
            Ok(w) => Some(w),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => Some(Wake::Stop),
        };
        if !app.clock_fixed {
            app.now = crate::clock::wall_now();
        }
        match wake {
            Some(Wake::Stop) => break,
            Some(first) => {
                let jobs = coalesce(app, first, &rx, &stop);
                for job in jobs {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let ok = sweep(app, job, &stop);
                    shared.last_sweep.set(LastSweep {
                        at: Some(app.now),
                        ok,
                    });
                }
            }
            None => {
                if let Err(e) = tick::deliver(app) {
                    crate::logging::complain(&format!("delivering the outbox failed: {e:#}"));
                }
            }
        }
        if stop.load(Ordering::SeqCst) {
            break;
        }
    }
    let _ = runtime.block_on(scheduler.shutdown());
    runtime.shutdown_timeout(Duration::from_secs(1));
    crate::logging::say("pr-monitor daemon: stopped");
    Ok(0)
}

/// Starts the cron scheduler on `runtime`: each sweep's schedule sends its wake to the worker.
fn schedule_sweeps(
    runtime: &tokio::runtime::Runtime,
    sweep_list: Vec<(String, Option<String>)>,
    tx: &mpsc::Sender<Wake>,
) -> Result<JobScheduler> {
    let scheduler = runtime.block_on(async {
        let cron_jobs = JobScheduler::new().await?;
        for (cron, job) in sweep_list {
            let tx = tx.clone();
            let entry = Job::new(cron.as_str(), move |_id, _lock| {
                let _ = tx.send(Wake::Sweep(job.clone()));
            })?;
            cron_jobs.add(entry).await?;
        }
        cron_jobs.start().await?;
        Ok::<_, tokio_cron_scheduler::JobSchedulerError>(cron_jobs)
    });
    scheduler.map_err(|e| anyhow::anyhow!("cannot schedule the sweeps: {e}"))
}

/// On SIGTERM or SIGINT: raises `stop` (the PR in hand finishes) and wakes the worker to stop.
fn stop_on_signal(
    runtime: &tokio::runtime::Runtime,
    tx: mpsc::Sender<Wake>,
    stop: Arc<AtomicBool>,
) {
    runtime.spawn(async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
        }
        stop.store(true, Ordering::SeqCst);
        let _ = tx.send(Wake::Stop);
    });
}

/// The sweeps to run for `first` and every wake that came while the last sweep ran: each
/// job's once, or one sweep of everything when a schedule or a nudge asks for it. The PRs a
/// nudge names are made due first; a stop among them raises `stop`.
fn coalesce(
    app: &mut App,
    first: Wake,
    rx: &mpsc::Receiver<Wake>,
    stop: &AtomicBool,
) -> Vec<Option<String>> {
    let mut jobs = Vec::new();
    let mut nudges = Vec::new();
    let mut take = |w: Wake| match w {
        Wake::Sweep(j) => jobs.push(j),
        Wake::Nudge(n) => nudges.extend(n),
        Wake::Stop => stop.store(true, Ordering::SeqCst),
    };
    take(first);
    while let Ok(w) = rx.try_recv() {
        take(w);
    }
    if !nudges.is_empty() {
        // The PRs named are due at once; the sweep reads whatever is due (a PR
        // that is not watched, or not open, is not among them).
        if let Err(e) = app.store.nudge(&nudges, app.now) {
            crate::logging::complain(&format!("a nudge failed: {e:#}"));
        }
        jobs.push(None);
    }
    jobs.sort();
    jobs.dedup();
    if jobs.contains(&None) {
        jobs = vec![None];
    }
    jobs
}

/// One sweep of the due PRs (of `job`, or all), its outcome lines said on standard error.
/// Returns whether every PR's tick in it completed.
fn sweep(app: &mut App, job: Option<String>, stop: &Arc<AtomicBool>) -> bool {
    // Every sweep reads the tokens afresh: a rotated secret (a replaced token file, a new
    // credential) works without a restart.
    app.forges = crate::app::Forges::default();
    let opts = RunOptions {
        selection: Selection {
            job,
            prs: Vec::new(),
        },
        stop: Some(stop.clone()),
        ..RunOptions::default()
    };
    let mut log = SweepLog::new(app.now, crate::logging::say);
    let ran = tick::run(app, &opts, &mut log);
    log.finish();
    match ran {
        Ok(summary) => !summary.failed(),
        Err(e) => {
            crate::logging::complain(&format!("the sweep failed: {e:#}"));
            false
        }
    }
}

/// A sweep's outcome lines, said as `run` prints them: every PR of a sweep of at most
/// [`LIST_ALL_UP_TO`](super::run_report::LIST_ALL_UP_TO) PRs (at its end), else only the PRs
/// that changed, as they come. Once a sweep is known to be large it passes over unchanged
/// PRs, so their settled ticks are recorded without loading them
/// ([`tick::Report::wants_settled`]).
struct SweepLog<F: FnMut(&str)> {
    lines: super::run_report::OutcomeLines,
    now: crate::model::Instant,
    say: F,
}

impl<F: FnMut(&str)> SweepLog<F> {
    fn new(now: crate::model::Instant, say: F) -> Self {
        SweepLog {
            lines: super::run_report::OutcomeLines::default(),
            now,
            say,
        }
    }

    /// The sweep is over: the lines still held (a small sweep's every line) are said.
    fn finish(&mut self) {
        for line in self.lines.finish() {
            (self.say)(&line);
        }
    }
}

impl<F: FnMut(&str)> tick::Report for SweepLog<F> {
    fn outcome(&mut self, o: tick::PrOutcome) {
        let now = self.now;
        let line = || super::output::outcome_line(&o, now, crate::terminal::Term::PLAIN);
        for line in self.lines.add(line, super::output::changed(&o)) {
            (self.say)(&line);
        }
    }

    fn due(&mut self, prs: usize) {
        self.lines.due(prs);
    }

    fn wants_settled(&self) -> bool {
        !self.lines.large()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tick::Report;

    fn outcome(number: u64, changed: bool) -> tick::PrOutcome {
        let mut watch = crate::core::decide::tests::watch();
        watch.pr.number = number;
        tick::PrOutcome {
            watch,
            plan: None,
            error: changed.then(|| "boom".to_owned()),
            cut_off: false,
        }
    }

    /// A small sweep says every PR's line at its end and reads every outcome; a large one
    /// says only the changed PRs' lines and, once it knows it is large, passes over the
    /// unchanged ones.
    #[test]
    fn a_small_sweep_says_every_pr_and_a_large_one_the_changed_ones() {
        let mut said = Vec::new();
        let mut small = SweepLog::new(crate::model::Instant::UNIX_EPOCH, |l: &str| {
            said.push(l.to_owned());
        });
        for n in 1..=3 {
            small.outcome(outcome(n, n == 2));
            assert!(small.wants_settled());
        }
        small.finish();
        assert_eq!(said.len(), 3, "{said:?}");

        let mut said = Vec::new();
        let mut large = SweepLog::new(crate::model::Instant::UNIX_EPOCH, |l: &str| {
            said.push(l.to_owned());
        });
        for n in 1..=30 {
            assert_eq!(large.wants_settled(), n <= 11, "before PR {n}");
            large.outcome(outcome(n, n % 10 == 0));
        }
        large.finish();
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(said.iter().all(|l| l.contains("boom")), "{said:?}");

        // Told up front that eleven are due, it passes over unchanged PRs from the first.
        let mut said = Vec::new();
        let mut told = SweepLog::new(crate::model::Instant::UNIX_EPOCH, |l: &str| {
            said.push(l.to_owned());
        });
        told.due(11);
        assert!(!told.wants_settled());
        told.outcome(outcome(1, true));
        assert_eq!(said.len(), 1, "a changed PR's line comes at once");
    }
}

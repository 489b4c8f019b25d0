//! One tick: due watches, then chunk by chunk (one forge read batch each) leases → snapshots →
//! failed checks' logs → detect → decide → apply → record; then deliver. Snapshots, and the
//! logs and annotations of a chunk's failed checks (one job per PR), are read on the bounded
//! pool; this thread keeps the database, decides and writes. A slow or hanging batch holds
//! only its own PRs' actions, and only one batch of snapshots is held in memory at a time.
//!
//! A PR whose read or actions fail never stops the tick for the others: its `last_error` says
//! what happened, it is retried on the active cadence (or stopped, if the forge says it is
//! gone), and the run's exit code becomes 1. Forge writes happen before the record, outbox
//! messages are recorded with the state that caused them and delivered after the commit, so a
//! crash mid-tick never loses or duplicates what was decided: the next tick re-reads the forge.

//! This module holds the run itself ([`run`]) and the outbox's delivery ([`deliver`]); the
//! pieces are `run` (a run's options, progress and summary), `flow` (groups and chunks through
//! the read pool), `pr` (one PR's tick) and `failure` (what a failed tick records), over
//! [`read`], [`detect`], [`execute`] and [`outcomes`].

mod ahead;
mod arm;
pub mod branches;
pub mod deferral;
pub mod detect;
pub mod execute;
mod failure;
mod flow;
mod group;
mod inputs;
pub mod jobs;
pub mod metrics;
pub mod outcomes;
pub mod owners;
pub mod pages;
pub mod pool;
mod pr;
mod quiet;
pub mod read;
mod record;
mod run;
mod settle;
mod window;

use anyhow::Result;

use crate::app::App;
use crate::holder::Holder;
use crate::model::standing::Tally as Counts;
use outcomes::Outcomes;
pub use outcomes::{PrOutcome, Report};
pub use run::{Progress, RunOptions, RunSummary, Step};
use run::{Run, tell};

/// Runs one tick over the due watches, telling `report` each PR's outcome as soon as it is
/// recorded, then delivers the outbox.
pub fn run(app: &mut App, opts: &RunOptions, report: &mut dyn Report) -> Result<RunSummary> {
    let started = std::time::Instant::now();
    let now = app.now;
    app.dry_run = opts.dry_run;
    let jobs = if opts.dry_run || opts.fix_asked {
        Vec::new()
    } else {
        let mut said = jobs::sync(app)?;
        said.extend(branches::look(app)?);
        said
    };
    report.jobs(&jobs);
    let due = app.store.due(now, opts.force, &opts.selection)?;
    let due = if opts.dry_run {
        due
    } else {
        owners::hold_changed(app, due)?
    };
    let holder = Holder::new_run();
    // A dry run writes nothing; `fix` and a run of named PRs are asked for by hand.
    let (due, deferred) = if opts.dry_run || opts.fix_asked || !opts.selection.prs.is_empty() {
        (due, 0)
    } else {
        deferral::defer_due(app, due, opts.force, &opts.selection, &holder)?
    };
    let mut summary = RunSummary {
        watched: app.store.count_watches()?,
        jobs,
        deferred,
        ..RunSummary::default()
    };

    let total = due.len();
    tell(opts, Step::Reading { due: total });
    report.due(total);
    let mut ticking = Run {
        opts,
        holder: &holder,
        summary: &mut summary,
        outcomes: Outcomes::new(report),
        done: 0,
        total,
        config: settle::config(&app.config),
    };
    if total > 0 {
        let before = app.store.statements();
        flow::tick_due(app, due, &mut ticking)?;
        if let (Some(before), Some(after)) = (before, app.store.statements()) {
            tracing::debug!(
                target: "pr_monitor::store",
                prs = total,
                statements = after - before,
                "the ticks of {total} due PRs ran {} SQL statements",
                after - before
            );
        }
    }
    let tally = ticking.outcomes.finish();
    summary.ticked = tally.ticked;
    summary.errors = tally.errors;
    summary.nothing_read = tally.ticked > 0 && tally.cut_off == tally.ticked;
    summary.read_every_forge = tally.read.keys().all(|f| tally.forges_read.contains(f));
    if !opts.dry_run {
        tell(opts, Step::Delivering);
        let delivered = deliver(app)?;
        summary.delivered = delivered.sent;
        summary.delivery_failures = delivered.failed;
        metrics::count_actions(&mut app.store, &tally.actions)?;
        metrics::count_errors(&mut app.store, &tally.failed_prs)?;
        metrics::count_forge_usage(&mut app.store, &app.forges.take_usage())?;
        deferral::remember(app, &tally.read)?;
        // The page and the metrics show every watch: each watch's standing is read once for
        // both, and only when one of them is written; the page from one snapshot.
        let report = &app.config.report;
        let counts = if report.html_path.is_some() || report.metrics_path.is_some() {
            app.store.snapshot(|store| {
                let placed = store.standings()?;
                pages::write(&app.config, store, &placed, now)?;
                Ok(Counts::of(placed.iter().map(|p| p.standing)))
            })?
        } else {
            Counts::default()
        };
        metrics::record_run(
            &mut app.store,
            metrics::RunFacts {
                now,
                read_every_forge: summary.read_every_forge,
                duration_seconds: started.elapsed().as_secs_f64(),
            },
        )?;
        metrics::write(&app.config, &app.store, counts)?;
    }
    tell(opts, Step::Done);
    Ok(summary)
}

/// Delivers the outbox; a message a command agent kept failing on is not tried again, and
/// its owner is told at once.
pub fn deliver(app: &mut App) -> Result<crate::notify::Delivered> {
    let mut delivered = crate::notify::deliver_pending(&mut app.store, &app.config, app.now)?;
    if delivered.gave_up.is_empty() {
        return Ok(delivered);
    }
    for g in std::mem::take(&mut delivered.gave_up) {
        let Ok(pr) = g.pr.parse::<crate::model::PrRef>() else {
            continue;
        };
        let Some(watch) = app.store.watch(&pr)? else {
            continue;
        };
        let notice = crate::model::plan::Notice::AgentGaveUp {
            agent: g.agent,
            attempts: g.attempts,
            error: g.error,
        };
        let headline = crate::core::report::headline(&notice);
        let payload = crate::core::report::bare_notice_payload(&notice, &pr, &pr.url());
        let messages = execute::owner_messages(
            &app.config,
            &app.policy_for(&watch),
            &pr,
            &notice,
            &payload,
            app.now,
        )?;
        app.store.enqueue(&messages)?;
        app.log(&pr, headline)?;
    }
    let more = crate::notify::deliver_pending(&mut app.store, &app.config, app.now)?;
    delivered.sent += more.sent;
    delivered.failed.extend(more.failed);
    delivered.gave_up.extend(more.gave_up);
    Ok(delivered)
}

#[cfg(test)]
mod golden;

//! One tick: due watches → leases → batched snapshots → decide → apply → record.
//!
//! A PR whose read or actions fail never stops the tick for the others: its `last_error` says
//! what happened, it is retried on the active cadence (or stopped, if the forge says it is
//! gone), and the run's exit code becomes 1.

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::Duration;

use crate::app::App;
use crate::decide::{self, Plan};
use crate::forge::{ForgeError, SnapshotRequest};
use crate::model::{ForgeKind, Instant, Snapshot};
use crate::store::{Selection, TickRecord};
use crate::watch::{HistoryEntry, Watch};

/// What a run asks for.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub selection: Selection,
    pub force: bool,
    pub dry_run: bool,
}

/// The outcome of one PR's tick.
#[derive(Debug)]
pub struct PrOutcome {
    pub watch: Watch,
    /// The plan, when the PR could be read.
    pub plan: Option<Plan>,
    pub error: Option<String>,
}

/// The outcome of a run.
#[derive(Debug, Default)]
pub struct RunSummary {
    pub outcomes: Vec<PrOutcome>,
    /// Watches another run held the lease on.
    pub skipped_busy: usize,
    /// How many watches exist at all (to tell "nothing watched" from "nothing due").
    pub watched: usize,
}

impl RunSummary {
    pub fn failed(&self) -> bool {
        self.outcomes.iter().any(|o| o.error.is_some())
    }
}

/// How long a lease lasts: far longer than one PR's tick, short enough to recover a crash.
const LEASE_SECS: i64 = 600;

/// Runs one tick over the due watches.
pub fn run(app: &mut App, opts: &RunOptions) -> Result<RunSummary> {
    let now = app.now;
    let due = app.store.due(now, opts.force, &opts.selection)?;
    let mut summary = RunSummary {
        watched: app.store.watches()?.len(),
        ..RunSummary::default()
    };
    if due.is_empty() {
        return Ok(summary);
    }
    let run_id = format!(
        "{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
    );

    let mut leased = Vec::new();
    for w in due {
        if opts.dry_run {
            leased.push((w, None));
        } else if let Some(lease) = app.store.lease(w.id, &run_id, LEASE_SECS)? {
            leased.push((w, Some(lease)));
        } else {
            summary.skipped_busy += 1;
        }
    }

    let snapshots = read_all(app, &leased.iter().map(|(w, _)| w).collect::<Vec<_>>());
    for ((watch, lease), snap) in leased.into_iter().zip(snapshots) {
        let policy = app.policy_for(&watch);
        let (plan, error, record) = match snap {
            Ok(snap) => {
                let plan = decide::decide(&watch, &snap, &policy, now);
                let record = TickRecord {
                    status: plan.status.clone(),
                    next_tick_at: plan.next_tick_at,
                    last_tick_at: now,
                    last_error: None,
                    history: plan.history.clone(),
                    seen: Vec::new(),
                };
                (Some(plan), None, record)
            }
            Err(e) => {
                let (record, message) = failed_tick(&watch, &e, now, policy.poll_sec);
                (None, Some(message), record)
            }
        };
        if let Some(lease) = lease {
            app.store.record(lease, &record)?;
        }
        summary.outcomes.push(PrOutcome { watch, plan, error });
    }
    Ok(summary)
}

/// Reads every watch's snapshot, batching per forge; one result per watch, in order.
fn read_all(app: &mut App, watches: &[&Watch]) -> Vec<Result<Snapshot, ForgeError>> {
    let mut by_forge: BTreeMap<ForgeKind, Vec<usize>> = BTreeMap::new();
    for (i, w) in watches.iter().enumerate() {
        by_forge.entry(w.pr.forge).or_default().push(i);
    }
    let mut results: Vec<Option<Result<Snapshot, ForgeError>>> =
        watches.iter().map(|_| None).collect();
    for (kind, indexes) in by_forge {
        let requests: Vec<SnapshotRequest> = indexes
            .iter()
            .map(|&i| {
                let s = &watches[i].status;
                SnapshotRequest {
                    pr: watches[i].pr.clone(),
                    branches: s.base_ref.clone().zip(s.head_ref.clone()),
                }
            })
            .collect();
        let answers = match app.forge(kind) {
            Ok(forge) => forge.snapshots(&requests),
            Err(e) => requests
                .iter()
                .map(|_| Err(ForgeError::Unauthorized(e.clone())))
                .collect(),
        };
        for (i, answer) in indexes.into_iter().zip(answers) {
            results[i] = Some(answer);
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(ForgeError::Unexpected("no answer for this PR".into()))))
        .collect()
}

/// The record of a tick that could not read its PR.
fn failed_tick(watch: &Watch, e: &ForgeError, now: Instant, poll_sec: u64) -> (TickRecord, String) {
    let mut status = watch.status.clone();
    status.memory.error_streak += 1;
    let (message, next) = if e.is_gone() {
        (
            format!(
                "{e}; the PR was deleted or this token lost access to it, so it is no longer polled (watch add re-arms it)"
            ),
            None,
        )
    } else {
        let wait = match e {
            ForgeError::RateLimited {
                retry_after_secs: Some(s),
            } => (*s).max(poll_sec),
            _ => poll_sec,
        };
        (
            e.to_string(),
            Some(now + Duration::seconds(i64::try_from(wait).unwrap_or(i64::MAX / 2))),
        )
    };
    let record = TickRecord {
        status,
        next_tick_at: next,
        last_tick_at: now,
        last_error: Some(message.clone()),
        history: vec![HistoryEntry {
            at: now,
            what: format!("tick failed: {message}"),
            why: None,
        }],
        seen: Vec::new(),
    };
    (record, message)
}

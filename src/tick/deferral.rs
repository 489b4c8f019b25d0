//! Budget-aware scheduling, the shell around [`crate::core::budget`]. Before a run reads anything,
//! each forge's kept budget (the figures its last answers gave, kept per host and token
//! fingerprint) and the due watches' classes decide which idle watches wait for the reset:
//! those are leased, pushed past the reset with the reason in their memory and history, and
//! left out of the run, which goes on with the rest. After the run, the figures the forge
//! answered with, and what a PR read cost, are kept for the next run.

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::Duration;

use crate::app::App;
use crate::core::budget::{self, Left};
use crate::holder::Holder;
use crate::model::ForgeKind;
use crate::model::watch::{BudgetDeferral, HistoryEntry};
use crate::store::{Due, Labels, Leased, Selection};

/// Gauge: PRs the last run pushed past the reset for budget, by forge.
pub const DEFERRED_PRS: &str = "pr_monitor_budget_deferred_prs";
/// Counter: PRs pushed past the reset for budget, by forge, across runs.
pub const DEFERRALS_TOTAL: &str = "pr_monitor_budget_deferrals_total";

/// A PR read's cost before any run measured one, in thousandths: GitHub's full snapshot is
/// 16 points per 10 PRs; GitLab's full read is 6 requests.
fn default_milli_per_pr(kind: ForgeKind) -> u64 {
    match kind {
        ForgeKind::GitHub => 1600,
        ForgeKind::GitLab => 6000,
    }
}

/// Splits `due` (chosen with `forced` and `sel`) into the watches this run reads and how many
/// it pushed past their forge's reset (recorded: next tick, memory, history). A watch another
/// run holds is left to that run. The due watches are loaded in full, one at a time, only
/// when a forge's budget does not cover every watch there is.
pub fn defer_due(
    app: &mut App,
    due: Vec<Due>,
    forced: bool,
    sel: &Selection,
    holder: &Holder,
) -> Result<(Vec<Due>, usize)> {
    let mut kinds: Vec<ForgeKind> = due.iter().map(|d| d.forge).collect();
    kinds.sort();
    kinds.dedup();
    let mut deferred_ids: BTreeMap<i64, BudgetDeferral> = BTreeMap::new();
    let watches = u64::try_from(app.store.count_watches()?).unwrap_or(u64::MAX);
    for kind in kinds {
        let Ok(forge) = app.forges.get(kind, &app.config) else {
            continue;
        };
        let key = forge.budget();
        if let Some(deferral) = secondary_hold(app, kind, &key)? {
            deferred_ids.extend(
                due.iter()
                    .filter(|d| d.forge == kind)
                    .map(|d| (d.id, deferral.clone())),
            );
            continue;
        }
        let kept = app.store.kept_budget(&key.host, &key.identity, key.reads)?;
        let left = kept.as_ref().map(|k| Left {
            remaining: k.figures.remaining,
            reset_in_secs: k
                .figures
                .reset_epoch
                .map_or(0, |r| r - crate::clock::wall_secs()),
        });
        let milli = kept
            .as_ref()
            .and_then(|k| k.milli_per_pr)
            .unwrap_or_else(|| default_milli_per_pr(kind));
        // A budget that covers a read of every watch there is (or none known, or one whose
        // reset has passed) defers nothing: no watch need be loaded to know it.
        let covers_all = left.is_none_or(|l| {
            l.reset_in_secs <= 0
                || l.remaining.saturating_mul(1000) >= milli.saturating_mul(watches)
        });
        let shortfall = if covers_all {
            None
        } else {
            let mut classes: Vec<(i64, budget::Class)> = Vec::new();
            app.store.each_due(app.now, forced, sel, &mut |w| {
                if w.pr.forge == kind {
                    classes.push((w.id, budget::class_of(&w, app.now)));
                }
            })?;
            let upcoming = upcoming_classes(app, kind, &due, left.map_or(0, |l| l.reset_in_secs))?;
            budget::defer(left, &classes, &upcoming, milli)
        };
        let count = shortfall.as_ref().map_or(0, |s| s.deferred.len());
        let labels = Labels::of(&[("forge", kind.as_str())]);
        #[allow(clippy::cast_precision_loss)]
        {
            app.store.set_gauge(DEFERRED_PRS, &labels, count as f64)?;
            app.store
                .add_to_counter(DEFERRALS_TOTAL, &labels, count as f64)?;
        }
        let Some(shortfall) = shortfall else {
            continue;
        };
        let deferral = BudgetDeferral {
            at: app.now,
            until: app.now + Duration::seconds(shortfall.reset_in_secs + 1),
            why: shortfall.why(kind.name(), kind.budget_unit()),
        };
        tracing::warn!(
            forge = kind.as_str(),
            deferred = count,
            until = %crate::model::stamp(deferral.until),
            "{}",
            deferral.why
        );
        for id in shortfall.deferred {
            deferred_ids.insert(id, deferral.clone());
        }
    }
    if deferred_ids.is_empty() {
        return Ok((due, 0));
    }
    let mut run = Vec::with_capacity(due.len());
    let mut deferred = 0;
    for d in due {
        let Some(deferral) = deferred_ids.get(&d.id) else {
            run.push(d);
            continue;
        };
        let lease = match app.store.lease(d.id, holder, 60, &Holder::gone_here)? {
            Leased::Taken(lease) | Leased::TakenOver(lease, _) => lease,
            Leased::Held(_) => continue,
        };
        app.store
            .defer(lease, deferral, &[history_entry(deferral)])?;
        deferred += 1;
    }
    Ok((run, deferred))
}

/// Carries an earlier run's secondary-limit hold of `kind`'s host over to its client (no
/// request before the hold ends; the next limit holds twice as long), and, while the hold
/// lasts, the deferral every due watch of that forge takes.
fn secondary_hold(
    app: &mut App,
    kind: ForgeKind,
    key: &crate::forge::rate::Budget,
) -> Result<Option<BudgetDeferral>> {
    let Some(kept) =
        app.store
            .kept_budget(&key.host, &key.identity, crate::forge::rate::SECONDARY)?
    else {
        return Ok(None);
    };
    let streak = kept
        .figures
        .used
        .and_then(|u| u32::try_from(u).ok())
        .unwrap_or(0);
    let until = kept.figures.reset_epoch.unwrap_or(0);
    if let Ok(forge) = app.forges.get(kind, &app.config) {
        forge.hold(until, streak);
    }
    let left = until - crate::clock::wall_secs();
    if kept.figures.remaining > 0 || left <= 0 {
        return Ok(None);
    }
    let deferral = BudgetDeferral {
        at: app.now,
        until: app.now + Duration::seconds(left + 1),
        why: format!(
            "{} answered with a secondary rate limit: nothing is sent to it for {left}s more",
            kind.name()
        ),
    };
    tracing::warn!(forge = kind.as_str(), "{}", deferral.why);
    Ok(Some(deferral))
}

/// The classes of `kind`'s watches not due now that fall due before the reset, `reset_in`
/// seconds away (none when it has passed).
fn upcoming_classes(
    app: &App,
    kind: ForgeKind,
    due: &[Due],
    reset_in: i64,
) -> Result<Vec<budget::Class>> {
    if reset_in <= 0 {
        return Ok(Vec::new());
    }
    let due_ids: std::collections::BTreeSet<i64> = due.iter().map(|d| d.id).collect();
    let until = app.now + Duration::seconds(reset_in);
    let mut classes = Vec::new();
    app.store
        .each_due(until, false, &Selection::default(), &mut |w| {
            if w.pr.forge == kind && !due_ids.contains(&w.id) {
                classes.push(budget::class_of(&w, app.now));
            }
        })?;
    Ok(classes)
}

/// The history row of a deferral.
fn history_entry(d: &BudgetDeferral) -> HistoryEntry {
    HistoryEntry {
        at: d.at,
        what: format!("deferred for budget until {}", crate::model::stamp(d.until)),
        why: Some(d.why.clone()),
    }
}

/// Keeps the budget figures each forge answered with this run, and, for the resource PR reads
/// spend, what one PR read cost (`read` PRs read of each forge).
pub fn remember(app: &mut App, read: &BTreeMap<ForgeKind, u64>) -> Result<()> {
    let seen_at = crate::clock::wall_secs();
    for (kind, key) in app.forges.budgets() {
        let prs = read.get(&kind).copied().unwrap_or(0);
        let milli = (prs > 0 && key.spent > 0).then(|| key.spent.saturating_mul(1000) / prs);
        for figures in &key.figures {
            let cost = milli.filter(|_| figures.resource == key.reads);
            app.store
                .keep_budget(&key.host, &key.identity, figures, seen_at, cost)?;
        }
    }
    Ok(())
}

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
use crate::model::watch::{BudgetDeferral, HistoryEntry, Watch};
use crate::store::{Labels, Leased};

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

/// Splits `due` into the watches this run reads and those it pushed past their forge's reset
/// (recorded: next tick, memory, history). A watch another run holds is left to that run.
pub fn defer_due(
    app: &mut App,
    due: Vec<Watch>,
    holder: &Holder,
) -> Result<(Vec<Watch>, Vec<Watch>)> {
    let mut kinds: Vec<ForgeKind> = due.iter().map(|w| w.pr.forge).collect();
    kinds.sort();
    kinds.dedup();
    let mut deferred_ids: BTreeMap<i64, BudgetDeferral> = BTreeMap::new();
    let watches = u64::try_from(app.store.count_watches()?).unwrap_or(u64::MAX);
    for kind in kinds {
        let Ok(forge) = app.forges.get(kind, &app.config) else {
            continue;
        };
        let key = forge.budget();
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
        let classes: Vec<(i64, budget::Class)> = due
            .iter()
            .filter(|w| w.pr.forge == kind)
            .map(|w| (w.id, budget::class_of(w, app.now)))
            .collect();
        // A budget that covers a read of every watch there is defers nothing: the watches
        // falling due before the reset need not be loaded to know it.
        let covers_all =
            left.is_some_and(|l| l.remaining.saturating_mul(1000) >= milli.saturating_mul(watches));
        let upcoming = if covers_all {
            Vec::new()
        } else {
            upcoming_classes(app, kind, &due, left.map_or(0, |l| l.reset_in_secs))?
        };
        let shortfall = budget::defer(left, &classes, &upcoming, milli);
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
        return Ok((due, Vec::new()));
    }
    let mut run = Vec::with_capacity(due.len());
    let mut deferred = Vec::new();
    for w in due {
        let Some(deferral) = deferred_ids.get(&w.id) else {
            run.push(w);
            continue;
        };
        let lease = match app.store.lease(w.id, holder, 60, &Holder::gone_here)? {
            Leased::Taken(lease) | Leased::TakenOver(lease, _) => lease,
            Leased::Held(_) => continue,
        };
        app.store
            .defer(lease, deferral, &[history_entry(deferral)])?;
        deferred.push(w);
    }
    Ok((run, deferred))
}

/// The classes of `kind`'s watches not due now that fall due before the reset, `reset_in`
/// seconds away (none when it has passed).
fn upcoming_classes(
    app: &App,
    kind: ForgeKind,
    due: &[Watch],
    reset_in: i64,
) -> Result<Vec<budget::Class>> {
    if reset_in <= 0 {
        return Ok(Vec::new());
    }
    let due_ids: std::collections::BTreeSet<i64> = due.iter().map(|w| w.id).collect();
    let until = app.now + Duration::seconds(reset_in);
    Ok(app
        .store
        .due(until, false, &crate::store::Selection::default())?
        .iter()
        .filter(|w| w.pr.forge == kind && !due_ids.contains(&w.id))
        .map(|w| budget::class_of(w, app.now))
        .collect())
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

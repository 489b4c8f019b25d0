//! A chunk's outcomes recorded in one commit: the ticks that changed nothing of their watches
//! but their times (an idle PR's, most of them) in one statement, each other one in its own
//! savepoint with its history, messages and seen items; and the leases of the PRs a stop left
//! unasked given back.

use super::outcomes::PrOutcome;
use super::pr::Acted;
use crate::app::App;
use crate::store::{Lease, Settled};

/// Records the chunk's `acted` PRs (outcome, record, lease) and releases the `unasked`
/// leases; each outcome carries the error that kept it from being recorded, if any. What
/// the recorded ones settled is kept beside their kept reads, in one statement.
pub(super) fn chunk(
    app: &mut App,
    acted: Vec<(Acted, Option<Lease>)>,
    unasked: Vec<Lease>,
) -> Vec<PrOutcome> {
    let (mut outcomes, mut records, mut leases) = (Vec::new(), Vec::new(), Vec::new());
    let mut settlements = Vec::new();
    for (acted, lease) in acted {
        // A dry run holds no lease and records nothing, what settles its decisions neither.
        settlements.push(acted.settlement.filter(|_| lease.is_some()));
        outcomes.push(acted.outcome);
        records.push(acted.record);
        leases.push(lease);
    }
    let recorded = app.store.batch(|store| {
        for lease in unasked {
            store.release(lease)?;
        }
        let mut results: Vec<anyhow::Result<()>> = Vec::with_capacity(records.len());
        let mut quiet = Vec::new();
        let mut quiet_places = Vec::new();
        for (place, ((outcome, record), lease)) in
            outcomes.iter().zip(&records).zip(&mut leases).enumerate()
        {
            results.push(Ok(()));
            // A PR whose outcome cannot be recorded (its lease lost to another run) is
            // that PR's failure, not the run's: the others go on.
            let Some(lease) = lease.take() else {
                continue;
            };
            let watch = &outcome.watch;
            results[place] = if watch.unreadable.is_some() {
                store.record_failure(lease, record)
            } else if record.only_times(watch) {
                quiet.push((lease, record));
                quiet_places.push(place);
                Ok(())
            } else {
                store.record(lease, &watch.status.memory, record)
            };
        }
        if !quiet.is_empty() {
            for (place, result) in quiet_places.into_iter().zip(store.record_times(quiet)?) {
                results[place] = result;
            }
        }
        let settled: Vec<(i64, &str, Option<&Settled>)> = outcomes
            .iter()
            .zip(&settlements)
            .zip(&results)
            .filter(|(_, result)| result.is_ok())
            .filter_map(|((outcome, settlement), _)| {
                let s = settlement.as_ref()?;
                Some((outcome.watch.id, s.summary.as_str(), s.settled.as_ref()))
            })
            .collect();
        if !settled.is_empty() {
            store.settle(&settled)?;
        }
        Ok(results)
    });
    // The whole batch failing to commit (the disk full) fails each of its PRs.
    let recorded = recorded.unwrap_or_else(|e| {
        let e = format!("{e:#}");
        outcomes
            .iter()
            .map(|_| Err(anyhow::anyhow!("{e}")))
            .collect()
    });
    outcomes
        .into_iter()
        .zip(recorded)
        .map(|(mut outcome, recorded)| {
            if let Err(e) = recorded {
                outcome.error = Some(format!("the outcome could not be recorded: {e:#}"));
            }
            outcome
        })
        .collect()
}

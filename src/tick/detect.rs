//! Detect, the part beyond the snapshot read: once all of a head's checks are done, fetch the
//! log of each failed check (up to five), keep its cleaned tail and classify it, reading the
//! check's own output and annotations too. Each job is read once and its tail and verdict
//! cached in the database, a log the forge no longer has included; a read that fails leaves
//! the tail empty, says why (`FailedCheck::unreadable`, so the decision core can wait for
//! it) and is tried again next tick.

use crate::config::Policy;
use crate::core::checks;
use crate::core::flake;
use crate::forge::Forge;
use crate::model::Classification;
use crate::model::watch::WatchStatus;
use crate::model::{Check, CheckState, FailedCheck, Snapshot};
use crate::store::Store;

/// How many failed checks are read in full.
pub const MAX_FAILED_LOGS: usize = 5;

/// Fills `snap.failed_logs` when every check on the head is done and some failed. With
/// `remember` false (a dry run) the cache is read but never written.
pub fn failed_logs(
    forge: &dyn Forge,
    store: &mut Store,
    snap: &mut Snapshot,
    policy: &Policy,
    remember: bool,
) {
    if checks::newest(&snap.checks)
        .iter()
        .any(|c| c.state == CheckState::Pending)
    {
        return;
    }
    let all = snap.checks.clone();
    snap.failed_logs = read_failures(forge, store, snap, policy, &all, remember);
}

/// Fills `snap.queue_failures` when the PR's head, last seen in the merge queue or train, is no
/// longer there and still open: the failed checks of the merge group it waited in, with their
/// logs, so the owner (or the agent) hears why the queue let it go.
pub fn queue_failures(
    forge: &dyn Forge,
    store: &mut Store,
    snap: &mut Snapshot,
    policy: &Policy,
    before: &WatchStatus,
    remember: bool,
) {
    let left = snap.state == crate::model::PrState::Open
        && snap.queue_entry.is_none()
        && before.merge.is_armed()
        && before.memory.queued_head.as_ref() == Some(&snap.head.sha);
    let group = before
        .memory
        .picture
        .queue
        .as_ref()
        .and_then(|q| q.group_sha.clone());
    let (true, Some(group)) = (left, group) else {
        return;
    };
    let Ok(group_checks) = forge.commit_checks(&snap.pr, &group) else {
        return;
    };
    snap.queue_unfinished = checks::newest(&group_checks)
        .into_iter()
        .filter(|c| c.state == CheckState::Pending)
        .map(|c| c.name.clone())
        .collect();
    snap.queue_failures = read_failures(forge, store, snap, policy, &group_checks, remember);
}

/// The failed checks among `all` (up to five), each with its log tail and classification.
fn read_failures(
    forge: &dyn Forge,
    store: &mut Store,
    snap: &Snapshot,
    policy: &Policy,
    all: &[Check],
    remember: bool,
) -> Vec<FailedCheck> {
    let current = checks::newest(all);
    let failed: Vec<Check> = current
        .into_iter()
        .filter(|c| c.state == CheckState::Failed)
        .take(MAX_FAILED_LOGS)
        .cloned()
        .collect();
    let stamp = |c: &Check| c.completed_at.map(|t| t.to_rfc3339()).unwrap_or_default();
    let cached: Vec<Option<(String, Classification)>> = failed
        .iter()
        .map(|c| {
            let job = c.job_id?;
            let (tail, class) = store
                .cached_log(snap.pr.forge, job, &stamp(c))
                .ok()
                .flatten()?;
            Some((
                tail,
                serde_json::from_str(&class).unwrap_or(Classification::Real),
            ))
        })
        .collect();
    // One request for the annotations of every check not read before.
    let unread: Vec<String> = failed
        .iter()
        .zip(&cached)
        .filter(|(_, hit)| hit.is_none())
        .filter_map(|(c, _)| c.node_id.clone())
        .collect();
    let notes = if unread.is_empty() {
        Vec::new()
    } else {
        forge.annotations(&snap.pr, &unread).unwrap_or_default()
    };
    let notes_for = |c: &Check| {
        let i = unread
            .iter()
            .position(|id| Some(id) == c.node_id.as_ref())?;
        notes.get(i).cloned()
    };

    let mut out = Vec::new();
    for (c, hit) in failed.iter().zip(cached) {
        let reason = c.failure_reason.as_deref();
        let (log_tail, classification, unreadable) = hit.map_or_else(
            || {
                let (tail, class, failed_read) =
                    read_and_classify(forge, snap, policy, c, notes_for(c), reason);
                if let (true, Some(job), None) = (remember, c.job_id, &failed_read) {
                    let stamp = c.completed_at.map(|t| t.to_rfc3339()).unwrap_or_default();
                    let json = serde_json::to_string(&class).unwrap_or_default();
                    // A cache: a failed write only means the log is read again next tick.
                    let _ = store.cache_log(snap.pr.forge, job, &stamp, &tail, &json);
                }
                (tail, class, failed_read)
            },
            |(tail, class)| (tail, class, None),
        );
        out.push(FailedCheck {
            name: c.name.clone(),
            url: c.url.clone(),
            job_id: c.job_id,
            run_id: c.run_id,
            completed_at: c.completed_at,
            log_tail,
            classification,
            unreadable,
        });
    }
    out
}

/// Reads one failed job's log and classifies the failure, with why the read failed when the
/// forge did not answer (a missing log is an answer, and may be cached). A failed read is not
/// cached, so it is tried again next tick.
fn read_and_classify(
    forge: &dyn Forge,
    snap: &Snapshot,
    policy: &Policy,
    c: &Check,
    notes: Option<String>,
    reason: Option<&str>,
) -> (String, Classification, Option<String>) {
    let read = c.job_id.map(|job| forge.job_log(&snap.pr, job));
    let raw = match &read {
        Some(Ok(Some(raw))) => raw.as_str(),
        _ => "",
    };
    let tail = crate::core::logs::tail(raw, policy.log_tail_lines, policy.log_tail_bytes);
    let mut output = c.output.clone();
    if let Some(n) = notes {
        output.push('\n');
        output.push_str(&n);
    }
    let class = flake::classify(&tail, &output, reason, &policy.infra_patterns);
    let failed_read = match read {
        Some(Err(e)) => Some(crate::secrets::mask(&e.to_string())),
        _ => None,
    };
    (tail, class, failed_read)
}

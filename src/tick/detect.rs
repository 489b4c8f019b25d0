//! Detect, the part beyond the snapshot read: once all of a head's checks are done, fetch the
//! log of each failed check (up to five), keep its cleaned tail and classify it, reading the
//! check's own output and annotations too. Each job is read once and its tail and verdict
//! cached in the database, a log the forge no longer has included; a read that fails leaves
//! the tail empty, says why (`FailedCheck::unreadable`, so the decision core can wait for
//! it) and is tried again next tick.
//!
//! A run reads those logs ahead of its acting phase, on the pool's threads ([`wanted_logs`],
//! [`ReadAhead`]): what a pool thread read is kept in the database by the owning thread, and
//! the acting phase finds every log of the PR already read ([`Overlay`]), failed reads
//! included, so it sends no request for them.

use std::collections::BTreeMap;

use crate::config::Policy;
use crate::core::checks;
use crate::core::flake;
use crate::forge::{CheckRunRef, CommitsAsk, Forge, ListedCommits};
use crate::model::watch::WatchStatus;
use crate::model::{Check, CheckState, FailedCheck, Snapshot};
use crate::model::{Classification, ForgeKind};
use crate::store::Store;

/// Where a conflicting PR's conflict lies ([`files_both_sides_changed`]), read only for a PR
/// the forge says conflicts; `None` otherwise, or when that cannot be told.
pub fn conflict_files(forge: &dyn Forge, snap: &Snapshot) -> Option<Vec<String>> {
    snap.has_conflict()
        .then(|| files_both_sides_changed(forge, snap))
        .flatten()
}

/// The files both the PR and its base changed since they parted
/// ([`crate::core::conflict::files`]): two comparisons, for a conflict the forge reported,
/// reading the PR or updating its branch. `None` when that cannot be told: a list the forge
/// cut short, or a read that failed (said on stderr; the conflict is then told without its
/// files).
pub fn files_both_sides_changed(forge: &dyn Forge, snap: &Snapshot) -> Option<Vec<String>> {
    let side = |from: &str, to: &str| {
        forge
            .changed_files(&snap.pr, from, to)
            .unwrap_or_else(|e| {
                tracing::warn!(pr = %snap.pr.url(), error = %e, "the conflict's files could not be read");
                None
            })
    };
    let head = snap.head.sha.as_str();
    let branch = side(&snap.base_ref, head)?;
    let base = side(head, &snap.base_ref)?;
    crate::core::conflict::files(&branch, &base)
}

/// How many failed checks are read in full.
pub const MAX_FAILED_LOGS: usize = 5;

/// A failed check's log: forge, job id and the time the job finished (a re-run job finishes
/// again).
pub type LogKey = (ForgeKind, u64, String);

/// A failed check's log as read: its cleaned tail, its classification (JSON) and, when the
/// read failed, why (a failed read is never kept in the database).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptLog {
    pub tail: String,
    pub classification: String,
    pub unreadable: Option<String>,
}

/// Where failed checks' logs are looked up before they are read, and kept once read.
pub trait LogCache {
    fn kept_log(&self, key: &LogKey) -> Option<KeptLog>;
    fn keep_log(&mut self, key: LogKey, log: KeptLog);
}

impl LogCache for Store {
    fn kept_log(&self, (forge, job, at): &LogKey) -> Option<KeptLog> {
        let (tail, classification) = self.cached_log(*forge, *job, at).ok().flatten()?;
        Some(KeptLog {
            tail,
            classification,
            unreadable: None,
        })
    }

    fn keep_log(&mut self, (forge, job, at): LogKey, log: KeptLog) {
        // A failed read is tried again next tick; a failed write only means the log is read
        // again next tick.
        if log.unreadable.is_none() {
            let _ = self.cache_log(forge, job, &at, &log.tail, &log.classification);
        }
    }
}

/// One PR's logs read ahead on a pool thread: what the database held for its failed checks,
/// then everything read (failed reads included).
#[derive(Debug, Clone, Default)]
pub struct ReadAhead {
    pub held: BTreeMap<LogKey, KeptLog>,
    pub read: BTreeMap<LogKey, KeptLog>,
}

impl LogCache for ReadAhead {
    fn kept_log(&self, key: &LogKey) -> Option<KeptLog> {
        self.read.get(key).or_else(|| self.held.get(key)).cloned()
    }

    fn keep_log(&mut self, key: LogKey, log: KeptLog) {
        self.read.insert(key, log);
    }
}

/// The acting phase's view: the logs read ahead this run first, then the database.
pub struct Overlay<'a> {
    pub ahead: &'a BTreeMap<LogKey, KeptLog>,
    pub store: &'a mut Store,
}

impl std::fmt::Debug for Overlay<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Overlay")
    }
}

impl LogCache for Overlay<'_> {
    fn kept_log(&self, key: &LogKey) -> Option<KeptLog> {
        self.ahead
            .get(key)
            .cloned()
            .or_else(|| self.store.kept_log(key))
    }

    fn keep_log(&mut self, key: LogKey, log: KeptLog) {
        self.store.keep_log(key, log);
    }
}

/// The failed checks whose logs [`failed_logs`] reads for `snap` under `policy`: the checks
/// the policy judges (`checks: required` leaves the optional ones out), once every one of
/// them is done; `None` while one still runs.
fn to_read(snap: &Snapshot, policy: &Policy) -> Option<Vec<Check>> {
    let judged = checks::judged(
        &snap.checks,
        policy.checks == crate::config::ChecksScope::Required,
    );
    let current = checks::newest(&judged);
    if current.iter().any(|c| c.state == CheckState::Pending) {
        return None;
    }
    Some(
        current
            .into_iter()
            .filter(|c| c.state == CheckState::Failed)
            .take(MAX_FAILED_LOGS)
            .cloned()
            .collect(),
    )
}

/// The logs [`failed_logs`] would read for `snap` (every judged check on the head done, some
/// failed), by the same judgement; `None` when one of those checks has no job (its
/// annotations would be asked each time, so it is left to the acting phase).
pub fn wanted_logs(snap: &Snapshot, policy: &Policy) -> Option<Vec<LogKey>> {
    to_read(snap, policy)
        .unwrap_or_default()
        .iter()
        .map(|c| c.job_id.map(|job| (snap.pr.forge, job, stamp(c))))
        .collect()
}

/// The keys of the logs [`failed_logs`] would look up for `snap`, whether or not every check
/// is done: those of its failed checks that have a job.
pub fn log_keys(snap: &Snapshot) -> Vec<LogKey> {
    checks::newest(&snap.checks)
        .into_iter()
        .filter(|c| c.state == CheckState::Failed)
        .take(MAX_FAILED_LOGS)
        .filter_map(|c| c.job_id.map(|job| (snap.pr.forge, job, stamp(c))))
        .collect()
}

/// The log tail kept for check `c` of a PR on `forge`, if its log was read.
pub fn kept_tail(cache: &dyn LogCache, forge: ForgeKind, c: &Check) -> Option<String> {
    cache
        .kept_log(&(forge, c.job_id?, stamp(c)))
        .map(|kept| kept.tail)
}

fn stamp(c: &Check) -> String {
    c.completed_at.map(|t| t.to_rfc3339()).unwrap_or_default()
}

/// Annotations read ahead of the logs, by check run node id: the run's text, or why the read
/// failed (masked).
pub type Notes = BTreeMap<String, Result<String, String>>;

/// The check runs whose annotations [`failed_logs`] would ask for on `snap`: its judged failed
/// checks (once every one is done) whose verdict `cache` does not hold, those with a node id.
pub fn unread_runs(snap: &Snapshot, policy: &Policy, cache: &dyn LogCache) -> Vec<CheckRunRef> {
    let failed = to_read(snap, policy).unwrap_or_default();
    unread(&failed, &kept_verdicts(cache, snap, &failed))
        .into_iter()
        .map(|node_id| CheckRunRef {
            pr: snap.pr.clone(),
            node_id,
        })
        .collect()
}

/// The annotations of `runs`, in one read of the forge's (as few as it allows); a read that
/// fails says why for each run it asked about.
pub fn read_notes(forge: &dyn Forge, runs: &[CheckRunRef]) -> Notes {
    read_notes_and_commits(forge, runs, &[]).0
}

/// [`read_notes`], and in the same read the commits of `prs` where the forge lists them there
/// (see [`Forge::annotations_and_commits`]).
pub fn read_notes_and_commits(
    forge: &dyn Forge,
    runs: &[CheckRunRef],
    prs: &[CommitsAsk],
) -> (Notes, ListedCommits) {
    if runs.is_empty() {
        return (Notes::new(), vec![None; prs.len()]);
    }
    let (answers, listed) = forge.annotations_and_commits(runs, prs);
    let notes = runs
        .iter()
        .zip(answers)
        .map(|(run, answer)| {
            let answer = answer
                .map_err(|e| format!("annotations: {}", crate::secrets::mask(&e.to_string())));
            (run.node_id.clone(), answer)
        })
        .collect();
    (notes, listed)
}

/// Fills `snap.failed_logs` when every check on the head is done and some failed; the
/// annotations of a check not in `notes` (read ahead) are read here. With `remember` false (a
/// dry run) the cache is read but never written.
pub fn failed_logs(
    forge: &dyn Forge,
    store: &mut dyn LogCache,
    snap: &mut Snapshot,
    policy: &Policy,
    remember: bool,
    notes: &Notes,
) {
    let Some(failed) = to_read(snap, policy) else {
        return;
    };
    snap.failed_logs = read_failures(forge, store, snap, policy, &failed, remember, notes);
}

/// Fills `snap.queue_failures` when the PR's head, last seen in the merge queue or train, is no
/// longer there and still open: the failed checks of the merge group it waited in, with their
/// logs, so the owner (or the agent) hears why the queue let it go.
pub fn queue_failures(
    forge: &dyn Forge,
    store: &mut dyn LogCache,
    snap: &mut Snapshot,
    policy: &Policy,
    before: &WatchStatus,
    remember: bool,
) {
    let Some(group) = left_group(snap, before) else {
        return;
    };
    let group_checks = match forge.commit_checks(&snap.pr, &group) {
        Ok(checks) => checks,
        Err(e) => {
            snap.queue_unread = Some(crate::secrets::mask(&e.to_string()));
            return;
        }
    };
    snap.queue_unfinished = checks::newest(&group_checks)
        .into_iter()
        .filter(|c| c.state == CheckState::Pending)
        .map(|c| c.name.clone())
        .collect();
    let failed: Vec<Check> = checks::newest(&group_checks)
        .into_iter()
        .filter(|c| c.state == CheckState::Failed)
        .take(MAX_FAILED_LOGS)
        .cloned()
        .collect();
    snap.queue_failures =
        read_failures(forge, store, snap, policy, &failed, remember, &Notes::new());
}

/// The merge group `snap`'s head waited in, when it is no longer in the merge queue or train
/// it was last seen in and still open (see [`queue_failures`]).
fn left_group(snap: &Snapshot, before: &WatchStatus) -> Option<crate::model::Sha> {
    let left = snap.state == crate::model::PrState::Open
        && snap.queue_entry.is_none()
        && before.merge.is_armed()
        && before.memory.queued_head.as_ref() == Some(&snap.head.sha);
    let group = before.memory.picture.queue.as_ref()?.group_sha.clone();
    group.filter(|_| left)
}

/// Fills `snap.failed_logs` from `cache` alone, as [`failed_logs`] and [`queue_failures`]
/// would: false, `snap` untouched, when they would read the forge (a failed check whose
/// verdict `cache` lacks, or a merge group the head left). A decision made ahead of the acting
/// phase detects this way, so it never sends a request.
pub fn held_failures(
    cache: &dyn LogCache,
    snap: &mut Snapshot,
    policy: &Policy,
    before: &WatchStatus,
) -> bool {
    if left_group(snap, before).is_some() {
        return false;
    }
    let Some(failed) = to_read(snap, policy) else {
        return true;
    };
    let mut held = Vec::with_capacity(failed.len());
    for (c, hit) in failed.iter().zip(kept_verdicts(cache, snap, &failed)) {
        let Some((kept, class)) = hit else {
            return false;
        };
        held.push(failed_check(c, kept.tail, class, kept.unreadable));
    }
    snap.failed_logs = held;
    true
}

/// Check `c` failed, with its log's tail, classification and why its read failed.
pub fn failed_check(
    c: &Check,
    log_tail: String,
    classification: Classification,
    unreadable: Option<String>,
) -> FailedCheck {
    FailedCheck {
        name: c.name.clone(),
        url: c.url.clone(),
        job_id: c.job_id,
        run_id: c.run_id,
        completed_at: c.completed_at,
        log_tail,
        classification,
        unreadable,
    }
}

/// The kept verdict of check `c` of `snap`: a kept verdict that no longer reads back is no
/// verdict (the log is read again).
fn kept_verdict(
    store: &dyn LogCache,
    snap: &Snapshot,
    c: &Check,
) -> Option<(KeptLog, Classification)> {
    let kept = store.kept_log(&(snap.pr.forge, c.job_id?, stamp(c)))?;
    let class = serde_json::from_str(&kept.classification).ok()?;
    Some((kept, class))
}

/// The kept verdict of each of the `failed` checks of `snap`, in order.
fn kept_verdicts(
    store: &dyn LogCache,
    snap: &Snapshot,
    failed: &[Check],
) -> Vec<Option<(KeptLog, Classification)>> {
    failed
        .iter()
        .map(|c| kept_verdict(store, snap, c))
        .collect()
}

/// The node ids of the `failed` checks without a kept verdict (`cached`, in the same order):
/// their annotations are read with their logs.
fn unread(failed: &[Check], cached: &[Option<(KeptLog, Classification)>]) -> Vec<String> {
    failed
        .iter()
        .zip(cached)
        .filter(|(_, hit)| hit.is_none())
        .filter_map(|(c, _)| c.node_id.clone())
        .collect()
}

/// The `failed` checks (up to five), each with its log tail and classification; the
/// annotations of those not read before and not in `notes` in one request.
fn read_failures(
    forge: &dyn Forge,
    store: &mut dyn LogCache,
    snap: &Snapshot,
    policy: &Policy,
    failed: &[Check],
    remember: bool,
    notes: &Notes,
) -> Vec<FailedCheck> {
    let cached = kept_verdicts(store, snap, failed);
    let missing: Vec<CheckRunRef> = unread(failed, &cached)
        .into_iter()
        .filter(|id| !notes.contains_key(id))
        .map(|node_id| CheckRunRef {
            pr: snap.pr.clone(),
            node_id,
        })
        .collect();
    let read_here = read_notes(forge, &missing);
    // A failed annotations read leaves every check it was for unjudged (and uncached): its
    // annotations may be what tells a runner loss from a real failure.
    let notes_for = |c: &Check| -> Result<Option<String>, String> {
        let Some(id) = c.node_id.as_ref() else {
            return Ok(None);
        };
        match read_here.get(id).or_else(|| notes.get(id)) {
            Some(answer) => answer.clone().map(Some),
            None => Ok(None),
        }
    };

    let mut out = Vec::new();
    for (c, hit) in failed.iter().zip(cached) {
        let reason = c.failure_reason.as_deref();
        let (log_tail, classification, unreadable) = hit.map_or_else(
            || {
                let (notes, failed_notes) = match notes_for(c) {
                    Ok(notes) => (notes, None),
                    Err(e) => (None, Some(e)),
                };
                let (tail, class, failed_read) =
                    read_and_classify(forge, snap, policy, c, notes, reason);
                let failed_read = failed_read.or(failed_notes);
                if let (true, Some(job)) = (remember, c.job_id) {
                    store.keep_log(
                        (snap.pr.forge, job, stamp(c)),
                        KeptLog {
                            tail: tail.clone(),
                            classification: serde_json::to_string(&class).unwrap_or_default(),
                            unreadable: failed_read.clone(),
                        },
                    );
                }
                (tail, class, failed_read)
            },
            |(kept, class)| (kept.tail, class, kept.unreadable),
        );
        out.push(failed_check(c, log_tail, classification, unreadable));
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
    let read = c.job_id.map(|job| forge.job_log(&snap.pr.repo, job));
    let raw = match &read {
        Some(Ok(Some(raw))) => raw.as_str(),
        _ => "",
    };
    let tail = crate::core::logs::tail(
        raw,
        policy.log_tail_lines,
        policy.log_tail_bytes,
        crate::secrets::mask,
    );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::{check, snap, t0};

    fn failed(name: &str, job: Option<u64>) -> Check {
        let mut c = check(name, CheckState::Failed);
        c.job_id = job;
        c.completed_at = Some(t0());
        c
    }

    fn optional(mut c: Check) -> Check {
        c.optional = true;
        c
    }

    #[test]
    fn the_logs_a_run_reads_ahead() {
        let key = |job| (ForgeKind::GitHub, job, t0().to_rfc3339());
        let many: Vec<Check> = (1..=7).map(|n| failed(&format!("t{n}"), Some(n))).collect();
        // (what, the job's `checks: required`, the head's checks, the logs read ahead)
        type Row = (&'static str, bool, Vec<Check>, Option<Vec<LogKey>>);
        let table: Vec<Row> = vec![
            (
                "nothing failed",
                false,
                vec![check("a", CheckState::Passed)],
                Some(vec![]),
            ),
            (
                "a check still running: nothing yet",
                false,
                vec![failed("a", Some(1)), check("b", CheckState::Pending)],
                Some(vec![]),
            ),
            (
                "each failed check's job, finished when",
                false,
                vec![
                    failed("a", Some(1)),
                    check("b", CheckState::Passed),
                    failed("c", Some(3)),
                ],
                Some(vec![key(1), key(3)]),
            ),
            (
                "at most five",
                false,
                many,
                Some((1..=5).map(key).collect()),
            ),
            (
                "a failed check without a job: left to the acting phase",
                false,
                vec![failed("a", Some(1)), failed("b", None)],
                None,
            ),
            (
                "checks: all: an optional failure counts",
                false,
                vec![optional(failed("a", Some(1)))],
                Some(vec![key(1)]),
            ),
            (
                "checks: required: an optional failure is never read",
                true,
                vec![
                    optional(failed("a", Some(1))),
                    check("b", CheckState::Passed),
                ],
                Some(vec![]),
            ),
            (
                "checks: required: a running optional check holds nothing back",
                true,
                vec![
                    failed("a", Some(1)),
                    optional(check("b", CheckState::Pending)),
                ],
                Some(vec![key(1)]),
            ),
            (
                "checks: required: an optional failure without a job leaves nothing to the acting phase",
                true,
                vec![failed("a", Some(1)), optional(failed("b", None))],
                Some(vec![key(1)]),
            ),
        ];
        for (what, required, checks, want) in table {
            let mut s = snap("h1");
            s.checks = checks;
            let mut policy = crate::core::decide::tests::policy();
            if required {
                policy.checks = crate::config::ChecksScope::Required;
            }
            assert_eq!(wanted_logs(&s, &policy), want, "{what}");
        }
    }
}

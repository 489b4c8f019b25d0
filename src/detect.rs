//! Detect, the part beyond the snapshot read: once all of a head's checks are done, fetch the
//! log of each failed check (up to five), keep its cleaned tail and classify it. Each job's log
//! is fetched once and cached in the database; a log that cannot be read leaves the tail empty
//! and the classification to the check's own output.

use crate::checks;
use crate::config::Policy;
use crate::flake::{self, Classification};
use crate::forge::Forge;
use crate::model::{CheckState, FailedCheck, Snapshot};
use crate::store::Store;

/// How many failed checks are read in full.
pub const MAX_FAILED_LOGS: usize = 5;

/// Fills `snap.failed_logs` when every check on the head is done and some failed.
pub fn failed_logs(forge: &dyn Forge, store: &mut Store, snap: &mut Snapshot, policy: &Policy) {
    let current = checks::newest(&snap.checks);
    if current.iter().any(|c| c.state == CheckState::Pending) {
        return;
    }
    let failed: Vec<_> = current
        .into_iter()
        .filter(|c| c.state == CheckState::Failed)
        .cloned()
        .collect();
    let mut out = Vec::new();
    for c in failed.iter().take(MAX_FAILED_LOGS) {
        let completed = c.completed_at.map(|t| t.to_rfc3339()).unwrap_or_default();
        let reason =
            (snap.pr.forge == crate::model::ForgeKind::GitLab).then_some(c.output.as_str());
        let (log_tail, classification) = match c.job_id {
            Some(job) => {
                if let Some((tail, class)) = store
                    .cached_log(snap.pr.forge, job, &completed)
                    .ok()
                    .flatten()
                {
                    let class = serde_json::from_str(&class).unwrap_or(Classification::Real);
                    (tail, class)
                } else {
                    let raw = forge
                        .job_log(&snap.pr, job)
                        .ok()
                        .flatten()
                        .unwrap_or_default();
                    let tail =
                        crate::logs::tail(&raw, policy.log_tail_lines, policy.log_tail_bytes);
                    // The check's own words: title and summary, and its annotations.
                    let mut output = c.output.clone();
                    if let Some(notes) = c
                        .node_id
                        .as_ref()
                        .and_then(|id| forge.annotations(&snap.pr, id).ok())
                    {
                        output.push('\n');
                        output.push_str(&notes);
                    }
                    let class = flake::classify(&tail, &output, reason, &policy.infra_patterns);
                    if !raw.is_empty() {
                        let json = serde_json::to_string(&class).unwrap_or_default();
                        let _ = store.cache_log(snap.pr.forge, job, &completed, &tail, &json);
                    }
                    (tail, class)
                }
            }
            None => (
                String::new(),
                flake::classify("", &c.output, reason, &policy.infra_patterns),
            ),
        };
        out.push(FailedCheck {
            name: c.name.clone(),
            url: c.url.clone(),
            job_id: c.job_id,
            run_id: c.run_id,
            completed_at: c.completed_at,
            log_tail,
            classification,
        });
    }
    snap.failed_logs = out;
}

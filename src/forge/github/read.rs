//! GitHub reads: the batched snapshot read (split on failure, compare fallback, paging, queue
//! lines) and the other reads the `Forge` trait names (the summary read is [`super::summary`]).

use serde_json::{Value, json};

use super::client::GqlError;
use super::queries::Paged;
use super::wire::{Conn, PageAnswer};
use super::{BATCH_SIZE, GitHub, QueueLine, queries, wire};
use crate::forge::http::Idempotency;
use crate::forge::{ForgeError, OpenPr, SnapshotRequest};
use crate::model::{Check, ChecksSource, PrRef, Sha, Snapshot};

/// The search for the owner's open pull requests (a job's `mine:` entry).
const MY_OPEN_PRS: &str = "is:pr is:open author:@me";

/// Converts `statusCheckRollup.contexts.nodes` (the PR-level fallback when commit-pinned check
/// data is missing) into checks.
fn rollup_checks(nodes: &Value) -> Result<Vec<Check>, ForgeError> {
    let contexts: Vec<Option<wire::RollupContext>> =
        wire::parse(nodes.clone(), "status check rollup")?;
    Ok(contexts
        .into_iter()
        .flatten()
        .map(wire::rollup_check)
        .collect())
}

impl GitHub {
    /// Reads one batch; an `Err` means the whole request failed (the caller splits it).
    fn read_batch(
        &self,
        requests: &[SnapshotRequest],
    ) -> Result<Vec<Result<Snapshot, ForgeError>>, ForgeError> {
        let mut answer = self.graphql(
            &queries::snapshot_query(requests, self.features.get()),
            &json!({}),
            None,
            Idempotency::Retry,
        )?;
        if answer.data.is_null() {
            return Err(answer.errors.first().map_or_else(
                || ForgeError::Unexpected("empty answer".into()),
                GqlError::to_forge_error,
            ));
        }
        Ok(requests
            .iter()
            .enumerate()
            .map(|(i, req)| {
                let alias = queries::alias(i);
                // Taken, not copied: a batch's answer is the largest thing a read holds.
                let value = answer.data.get_mut(&alias).map_or(Value::Null, Value::take);
                let error_for = || {
                    answer
                        .errors
                        .iter()
                        .find(|e| e.path.first().and_then(Value::as_str) == Some(alias.as_str()))
                        .map_or_else(
                            || {
                                ForgeError::NotFound(format!(
                                    "{} does not exist or is not visible to this token",
                                    req.pr
                                ))
                            },
                            GqlError::to_forge_error,
                        )
                };
                if value.is_null() || value.get("pullRequest").is_none_or(Value::is_null) {
                    return Err(error_for());
                }
                self.complete_snapshot(&req.pr, wire::parse(value, "pull request")?)
            })
            .collect())
    }

    /// The rollup of a commit's checks (one page: the fallback is for tokens without checks
    /// access, where the rollup is all there is).
    fn rollup(&self, commit_id: &str) -> Result<Vec<Check>, ForgeError> {
        let data = self
            .graphql(
                queries::ROLLUP,
                &json!({ "id": commit_id }),
                None,
                Idempotency::Retry,
            )?
            .into_data()?;
        rollup_checks(
            data.pointer("/node/statusCheckRollup/contexts/nodes")
                .unwrap_or(&Value::Null),
        )
    }

    /// Fills `behind_by` for snapshots read without branch hints, in one request: GitHub's
    /// `mergeStateStatus` hides BEHIND under BLOCKED, so behind is read from the branches.
    /// A failure here leaves `behind_by` unknown; it never fails the snapshots.
    fn compare_unhinted(
        &self,
        requests: &[SnapshotRequest],
        results: &mut [Result<Snapshot, ForgeError>],
    ) {
        if !self.features.get().compare {
            return;
        }
        let wanted: Vec<usize> = (0..requests.len())
            .filter(|&i| requests[i].branches.is_none())
            .filter(|&i| matches!(&results[i], Ok(s) if s.state == crate::model::PrState::Open && !s.cross_repository && s.behind_by.is_none()))
            .collect();
        if wanted.is_empty() {
            return;
        }
        let items: Vec<(&PrRef, &str, &str)> = wanted
            .iter()
            .filter_map(|&i| {
                results[i]
                    .as_ref()
                    .ok()
                    .map(|s| (&s.pr, s.base_ref.as_str(), s.head_ref.as_str()))
            })
            .collect();
        let Ok(answer) = self.graphql(
            &queries::compare_query(&items),
            &json!({}),
            None,
            Idempotency::Retry,
        ) else {
            return;
        };
        if answer.data.is_null()
            && answer
                .errors
                .iter()
                .any(|e| self.refused_feature(&e.message))
        {
            return;
        }
        for (k, &i) in wanted.iter().enumerate() {
            let behind = answer
                .data
                .pointer(&format!("/c{k}/baseRef/compare/behindBy"))
                .and_then(Value::as_u64);
            if let Ok(snap) = &mut results[i] {
                snap.behind_by = behind;
            }
        }
    }

    /// Fills what is ahead of each PR that waits behind others in a merge queue: one
    /// `Repository.mergeQueue` read per branch per run, never failing the snapshots.
    fn fill_ahead(&self, results: &mut [Result<Snapshot, ForgeError>]) {
        for snap in results.iter_mut().flatten() {
            let features = self.features.get();
            if !features.queue || !features.ahead {
                return;
            }
            let Some(position) = snap.queue_entry.as_ref().map(|e| e.position) else {
                continue;
            };
            if position <= 1 {
                continue;
            }
            let Some(line) = self.queue_line(&snap.pr, &snap.base_ref) else {
                continue;
            };
            let number = snap.pr.number;
            if let Some(entry) = snap.queue_entry.as_mut() {
                entry.ahead = line
                    .iter()
                    .filter(|(p, n)| *p < position && *n != number)
                    .map(|(_, n)| *n)
                    .collect();
            }
        }
    }

    /// `branch`'s merge queue, front first, read once per run.
    fn queue_line(&self, pr: &PrRef, branch: &str) -> Option<QueueLine> {
        let key = (pr.repo.clone(), branch.to_owned());
        if let Some(line) = self.queue_lines.borrow().get(&key) {
            return line.clone();
        }
        let (owner, name) = pr.owner_and_name();
        let answer = self
            .graphql(
                queries::QUEUE_LINE,
                &json!({ "owner": owner, "name": name, "branch": branch }),
                None,
                Idempotency::Retry,
            )
            .ok()?;
        if answer.data.is_null() {
            // A server without `Repository.mergeQueue` is not asked again this run.
            let _ = answer
                .errors
                .iter()
                .any(|e| self.refused_feature(&e.message));
            return None;
        }
        let nodes: Vec<wire::QueueLineNode> = answer
            .data
            .pointer("/repository/mergeQueue/entries/nodes")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default();
        let mut line: QueueLine = nodes
            .into_iter()
            .filter_map(|n| Some((n.position, n.pull_request?.number)))
            .collect();
        line.sort_unstable();
        self.queue_lines.borrow().insert(key, Some(line.clone()));
        Some(line)
    }

    /// Turns off the optional feature a refusal names; whether there was one.
    pub(super) fn refused_feature(&self, message: &str) -> bool {
        let Some(fewer) = self.features.get().without_refused(message) else {
            return false;
        };
        self.features.set(fewer);
        true
    }

    /// Reads a batch, splitting it when the request fails so one bad PR cannot fail the rest.
    fn read_split(&self, requests: &[SnapshotRequest]) -> Vec<Result<Snapshot, ForgeError>> {
        match self.read_batch(requests) {
            Ok(results) => results,
            // A server without an optional part of the schema: read again without it, from now on.
            Err(ForgeError::Refused(msg)) if self.refused_feature(&msg) => {
                self.read_split(requests)
            }
            Err(e) if requests.len() == 1 => vec![Err(e)],
            Err(
                e @ (ForgeError::RateLimited { .. }
                | ForgeError::Unreachable(_)
                | ForgeError::Unauthorized(_)),
            ) => requests.iter().map(|_| Err(e.clone())).collect(),
            Err(_) => {
                let (a, b) = requests.split_at(requests.len() / 2);
                let mut out = self.read_split(a);
                out.extend(self.read_split(b));
                out
            }
        }
    }

    /// The rest of a connection after its first page.
    fn complete<T: serde::de::DeserializeOwned>(
        &self,
        node_id: &str,
        paged: Paged,
        first: Conn<T>,
    ) -> Result<Vec<T>, ForgeError> {
        let mut cursor = first.next_cursor();
        let mut items = first.into_nodes();
        let query = queries::page_query(paged, self.features.get());
        while let Some(after) = cursor {
            let data = self
                .graphql(
                    &query,
                    &json!({ "id": node_id, "after": after }),
                    None,
                    Idempotency::Retry,
                )?
                .into_data()?;
            let page: PageAnswer<T> = wire::parse(data, "page")?;
            let conn = page
                .node
                .and_then(|mut m| m.pop_first().map(|(_, c)| c))
                .ok_or_else(|| {
                    ForgeError::Unexpected(format!("page of {paged:?} for {node_id} is missing"))
                })?;
            cursor = conn.next_cursor();
            items.extend(conn.into_nodes());
        }
        Ok(items)
    }

    /// Every check run of a commit's check suites, past the first pages.
    fn suite_checks(
        &self,
        commit_id: &str,
        suites: Conn<wire::SuiteNode>,
    ) -> Result<Vec<Check>, ForgeError> {
        let mut checks = Vec::new();
        for suite in self.complete(commit_id, Paged::CheckSuites, suites)? {
            let runs = match suite.check_runs {
                Some(runs) => self.complete(&suite.id, Paged::CheckRuns, runs)?,
                None => Vec::new(),
            };
            checks.extend(
                runs.into_iter()
                    .map(|r| wire::run_check(r, suite.workflow_run.as_ref())),
            );
        }
        Ok(checks)
    }

    fn complete_snapshot(&self, pr: &PrRef, repo: wire::RepoNode) -> Result<Snapshot, ForgeError> {
        let mut repo = repo;
        let node = repo
            .pull_request
            .take()
            .ok_or_else(|| ForgeError::NotFound(pr.to_string()))?;
        let mut node = node;
        let commits = std::mem::replace(&mut node.commits, Conn::empty());
        let commit = commits
            .into_nodes()
            .into_iter()
            .map(|c| c.commit)
            .next()
            .filter(|c| c.oid == node.head_ref_oid);
        let mut snap = wire::snapshot_head(pr, &repo, &node, commit.as_ref());

        if let Some(commit) = commit {
            let mut checks: Vec<Check> = Vec::new();
            if commit.check_suites.is_none() && commit.status.is_none() {
                // Commit-pinned data is missing (the token cannot read it): fall back to the
                // PR's rollup of the same head.
                snap.checks = self.rollup(&commit.id)?;
                snap.checks_source = ChecksSource::PrChecks;
            } else if let Some(suites) = commit.check_suites {
                checks = self.suite_checks(&commit.id, suites)?;
            }
            if let Some(status) = commit.status {
                checks.extend(status.contexts.into_iter().map(wire::status_check));
            }
            if snap.checks_source != ChecksSource::PrChecks {
                snap.checks = checks;
            }
        }
        // Asked only for a job that judges required checks alone; when the answer cannot
        // tell, every check is judged.
        if let Some(required) = node
            .required_checks
            .take()
            .and_then(|c| wire::required_names(c, &node.head_ref_oid))
        {
            for c in &mut snap.checks {
                c.optional = !required.contains(&c.name);
            }
        }

        let threads = self.complete(&node.id, Paged::ReviewThreads, node.review_threads)?;
        snap.threads = threads
            .into_iter()
            .map(|mut t| {
                let first = std::mem::replace(&mut t.comments, Conn::empty());
                let comments = self.complete(&t.id, Paged::ThreadComments, first)?;
                Ok(wire::thread(t, comments))
            })
            .collect::<Result<_, ForgeError>>()?;
        snap.reviews = self
            .complete(
                &node.id,
                Paged::Reviews,
                node.reviews.unwrap_or_else(Conn::empty),
            )?
            .into_iter()
            .filter_map(wire::review)
            .collect();
        snap.comments = self
            .complete(&node.id, Paged::Comments, node.comments)?
            .into_iter()
            .map(wire::comment)
            .collect();
        Ok(snap)
    }

    pub(super) fn snapshots(
        &self,
        requests: &[SnapshotRequest],
    ) -> Vec<Result<Snapshot, ForgeError>> {
        requests
            .chunks(BATCH_SIZE)
            .flat_map(|chunk| {
                let mut results = self.read_split(chunk);
                self.compare_unhinted(chunk, &mut results);
                self.fill_ahead(&mut results);
                results
            })
            .collect()
    }

    pub(super) fn open_prs(&self, repo: &str) -> Result<Vec<OpenPr>, ForgeError> {
        let (owner, name) = repo.split_once('/').unwrap_or((repo, ""));
        let mut out = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let vars = json!({ "owner": owner, "name": name, "after": after });
            let data = self
                .graphql(
                    queries::OPERATIONS,
                    &vars,
                    Some("OpenPullRequests"),
                    Idempotency::Retry,
                )?
                .into_data()?;
            let conn: Conn<wire::OpenPrNode> = wire::parse(
                data.pointer("/repository/pullRequests")
                    .cloned()
                    .unwrap_or(Value::Null),
                "open pull requests",
            )?;
            after = conn.next_cursor();
            for node in conn.into_nodes() {
                out.push(OpenPr {
                    pr: PrRef::github(repo, node.number),
                    author: node.author.map(|a| a.login),
                    labels: node
                        .labels
                        .map(|l| l.into_nodes().into_iter().map(|n| n.name).collect())
                        .unwrap_or_default(),
                });
            }
            if after.is_none() {
                return Ok(out);
            }
        }
    }

    /// Every open PR the token's user authored, on any repository: one `search` request per
    /// hundred.
    pub(super) fn my_open_prs(&self) -> Result<Vec<PrRef>, ForgeError> {
        let mut out = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let vars = json!({ "query": MY_OPEN_PRS, "after": after });
            let data = self
                .graphql(
                    queries::OPERATIONS,
                    &vars,
                    Some("MyOpenPullRequests"),
                    Idempotency::Retry,
                )?
                .into_data()?;
            let conn: Conn<wire::SearchedPr> = wire::parse(
                data.pointer("/search").cloned().unwrap_or(Value::Null),
                "pull request search",
            )?;
            after = conn.next_cursor();
            out.extend(
                conn.into_nodes()
                    .into_iter()
                    .filter_map(|n| Some(PrRef::github(&n.repository?.name_with_owner, n.number?))),
            );
            if after.is_none() {
                return Ok(out);
            }
        }
    }

    pub(super) fn viewer_login(&self) -> Result<String, ForgeError> {
        let data = self
            .graphql(
                queries::OPERATIONS,
                &json!({}),
                Some("Viewer"),
                Idempotency::Retry,
            )?
            .into_data()?;
        data.pointer("/viewer/login")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| ForgeError::Unexpected("viewer has no login".into()))
    }

    pub(super) fn job_log(&self, repo: &str, job_id: u64) -> Result<Option<String>, ForgeError> {
        self.get_tail(&format!(
            "{}/repos/{repo}/actions/jobs/{job_id}/logs",
            self.api_url
        ))
    }

    pub(super) fn commit_checks(&self, pr: &PrRef, sha: &Sha) -> Result<Vec<Check>, ForgeError> {
        let (owner, name) = pr.owner_and_name();
        let data = self
            .graphql(
                &queries::commit_checks_query(),
                &json!({ "owner": owner, "name": name, "oid": sha.as_str() }),
                None,
                Idempotency::Retry,
            )?
            .into_data()?;
        let Some(commit) = data.pointer("/repository/object").filter(|v| !v.is_null()) else {
            return Ok(Vec::new());
        };
        let id = commit["id"].as_str().unwrap_or_default().to_owned();
        let suites: Conn<wire::SuiteNode> =
            wire::parse(commit["checkSuites"].clone(), "check suites")?;
        self.suite_checks(&id, suites)
    }
}

/// Real answers written by another GitHub client (see `tests/fixtures/github/SOURCES.md`)
/// parse into pr-monitor's checks.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::checks::{self, Verdict};
    use crate::model::{CheckKind, CheckState};

    fn rollup(answer: &str) -> Vec<Check> {
        let v: Value = serde_json::from_str(answer).unwrap();
        let nodes = v
            .pointer("/data/node/statusCheckRollup/nodes/0/commit/statusCheckRollup/contexts/nodes")
            .unwrap();
        rollup_checks(nodes).unwrap()
    }

    #[test]
    fn a_rollup_with_failing_and_running_checks() {
        let checks = rollup(include_str!(
            "../../../tests/fixtures/github/gh-cli/checks.someFailing.json"
        ));
        let states: Vec<(&str, CheckState)> =
            checks.iter().map(|c| (c.name.as_str(), c.state)).collect();
        assert_eq!(
            states,
            vec![
                ("cool tests", CheckState::Passed),
                ("sad tests", CheckState::Failed),
                ("slow tests", CheckState::Pending)
            ]
        );
        let seen: crate::model::Instant = "2026-11-29T12:00:00Z".parse().unwrap();
        assert!(
            matches!(
                checks::verdict(&checks, seen, seen, 600, None),
                Verdict::Running { .. }
            ),
            "acts only once all are done"
        );
    }

    #[test]
    fn a_rollup_mixing_check_runs_and_statuses() {
        let checks = rollup(include_str!(
            "../../../tests/fixtures/github/gh-cli/checks.withStatuses.json"
        ));
        let status = checks.iter().find(|c| c.kind == CheckKind::Status).unwrap();
        assert_eq!(status.name, "a status");
        assert_eq!(status.state, CheckState::Failed);
        assert_eq!(
            checks
                .iter()
                .filter(|c| c.kind == CheckKind::CheckRun)
                .count(),
            2
        );
    }

    #[test]
    fn push_and_pull_request_runs_of_one_check_stay_apart() {
        let checks = rollup(include_str!(
            "../../../tests/fixtures/github/gh-cli/checks.withEvents.json"
        ));
        let events: Vec<Option<&str>> = checks.iter().map(|c| c.event.as_deref()).collect();
        assert!(
            events.contains(&Some("pull_request")) && events.contains(&Some("push")),
            "{events:?}"
        );
        assert_eq!(
            checks::newest(&checks).len(),
            checks.len(),
            "the same name under two events is two checks"
        );
        assert_eq!(checks[0].workflow.as_deref(), Some("tests"));
    }
}

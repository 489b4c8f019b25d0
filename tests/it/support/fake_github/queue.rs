//! GitHub's merge queue in the fake: one line per protected branch that requires it. A PR whose
//! auto-merge is on ("merge when ready") joins the line once its own checks and reviews pass;
//! each entry gets a merge-group commit where tests put the `merge_group` check runs. A failed
//! merge-group check removes the entry and disables auto-merge (as GitHub does); the head of the
//! line merges once its merge group's required checks pass. A direct merge of a PR into a
//! queued branch is refused with GitHub's message.

use super::world::{Event, MergeState, Outcome, PrState, Time, World};

/// What GitHub answers to a direct merge into a branch that requires the merge queue.
pub const DIRECT_MERGE_REFUSED: &str = "Changes must be made through the merge queue";

/// Seconds the fake estimates per entry ahead (and including) a PR.
pub const SECONDS_PER_ENTRY: u64 = 240;

/// What GitHub writes on a PR's timeline when the queue lets it go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimelineEvent {
    /// `RemovedFromMergeQueueEvent`: the head it held (`beforeCommit`) and GitHub's `reason`.
    RemovedFromQueue {
        at: Time,
        reason: String,
        head: String,
    },
    /// `AutoMergeDisabledEvent`, with its `reason`.
    AutoMergeDisabled { at: Time, reason: String },
}

impl TimelineEvent {
    /// Its GraphQL type and its `PullRequestTimelineItemsItemType`.
    pub fn type_names(&self) -> (&'static str, &'static str) {
        match self {
            TimelineEvent::RemovedFromQueue { .. } => (
                "RemovedFromMergeQueueEvent",
                "REMOVED_FROM_MERGE_QUEUE_EVENT",
            ),
            TimelineEvent::AutoMergeDisabled { .. } => {
                ("AutoMergeDisabledEvent", "AUTO_MERGE_DISABLED_EVENT")
            }
        }
    }
}

/// One PR waiting in line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueItem {
    pub number: u64,
    pub head: String,
    /// The merge-group commit the queue tests.
    pub group_sha: String,
    pub enqueued_at: Time,
}

impl World {
    /// Whether `branch` of `repo` merges only through the merge queue.
    pub fn queue_required(&self, repo: &str, branch: &str) -> bool {
        self.get_repo(repo)
            .protections
            .get(branch)
            .is_some_and(|p| p.merge_queue)
    }

    /// The PR's entry and its 1-based position, if it is in line.
    pub fn queue_entry(&self, repo: &str, number: u64) -> Option<(usize, &QueueItem)> {
        let r = self.get_repo(repo);
        let base = &r.prs.get(&number)?.base_ref;
        r.queues
            .get(base)?
            .iter()
            .enumerate()
            .find(|(_, i)| i.number == number)
            .map(|(k, i)| (k + 1, i))
    }

    /// The entry's state, as GitHub names it: the head of the line awaits its checks.
    pub fn queue_state(&self, repo: &str, number: u64) -> &'static str {
        match self.queue_entry(repo, number) {
            Some((1, item)) => match self.failed_or_passed(repo, &item.group_sha) {
                Some(Outcome::Failed) => "UNMERGEABLE",
                Some(Outcome::Passed) => "MERGEABLE",
                _ => "AWAITING_CHECKS",
            },
            _ => "QUEUED",
        }
    }

    /// The PRs in `branch`'s line, front first.
    pub fn queue_line(&self, repo: &str, branch: &str) -> Vec<u64> {
        self.get_repo(repo)
            .queues
            .get(branch)
            .map(|q| q.iter().map(|i| i.number).collect())
            .unwrap_or_default()
    }

    /// The queue gives up on the PR without a failed check (its merge group's checks took too
    /// long, or it conflicts with what is ahead): the entry goes, and auto-merge with it.
    pub fn drop_from_queue(&mut self, repo: &str, number: u64) {
        let base = self.get_pr(repo, number).base_ref.clone();
        self.dequeue(repo, &base, number, "it was removed from the merge queue");
    }

    /// The merge-group commit of the PR's entry (panics when it is not in line).
    pub fn group_sha(&self, repo: &str, number: u64) -> String {
        self.queue_entry(repo, number)
            .map(|(_, i)| i.group_sha.clone())
            .expect("the PR is in the merge queue")
    }

    /// How many times `number` joined the line.
    pub fn enqueues(&self, repo: &str, number: u64) -> usize {
        self.count(
            |e| matches!(e, Event::Enqueued { repo: r, number: n } if r == repo && *n == number),
        )
    }

    /// Whether the merge group passed (every required check, and every check present, passed),
    /// failed (any failed), or is still waiting.
    fn failed_or_passed(&self, repo: &str, sha: &str) -> Option<Outcome> {
        let outcomes = self.commit_outcomes(repo, sha);
        if outcomes.values().any(|o| *o == Outcome::Failed) {
            return Some(Outcome::Failed);
        }
        let required: Vec<String> = self
            .get_repo(repo)
            .protections
            .values()
            .filter(|p| p.merge_queue)
            .flat_map(|p| p.required_checks.clone())
            .collect();
        let all_done = outcomes.values().all(|o| *o == Outcome::Passed);
        let required_ok = required
            .iter()
            .all(|c| outcomes.get(c) == Some(&Outcome::Passed));
        (all_done && required_ok && !outcomes.is_empty()).then_some(Outcome::Passed)
    }

    /// Moves every queue one step: armed PRs whose own checks pass join; failed merge groups
    /// leave (auto-merge off); the head of each line merges when its group passed.
    pub(super) fn settle_queues(&mut self) {
        let mut joining = Vec::new();
        for r in self.repos.values() {
            for p in r.prs.values() {
                let armed = p.auto_merge.is_some() && p.state == PrState::Open;
                let queued = r
                    .queues
                    .get(&p.base_ref)
                    .is_some_and(|q| q.iter().any(|i| i.number == p.number));
                if armed
                    && !queued
                    && self.queue_required(&r.full_name, &p.base_ref)
                    && matches!(
                        self.merge_state(&r.full_name, p.number),
                        MergeState::Clean | MergeState::Unstable | MergeState::HasHooks
                    )
                {
                    joining.push((r.full_name.clone(), p.number));
                }
            }
        }
        for (repo, number) in joining {
            self.enqueue(&repo, number);
        }
        let lines: Vec<(String, String)> = self
            .repos
            .values()
            .flat_map(|r| r.queues.keys().map(|b| (r.full_name.clone(), b.clone())))
            .collect();
        for (repo, branch) in lines {
            let items = self.get_repo(&repo).queues[&branch].clone();
            for (k, item) in items.iter().enumerate() {
                match self.failed_or_passed(&repo, &item.group_sha) {
                    Some(Outcome::Failed) => {
                        self.dequeue(&repo, &branch, item.number, "failed_checks");
                    }
                    Some(Outcome::Passed) if k == 0 => {
                        // GitHub writes a removal when the queue merges the PR too.
                        self.note_removal(&repo, item.number, "merged");
                        self.dequeue_quietly(&repo, &branch, item.number);
                        let method = self
                            .get_pr(&repo, item.number)
                            .auto_merge
                            .as_ref()
                            .map_or(super::world::MergeMethod::Merge, |a| a.method);
                        self.merge_from_queue(&repo, item.number, method);
                    }
                    _ => {}
                }
            }
        }
    }

    fn enqueue(&mut self, repo: &str, number: u64) {
        let group_sha = self.new_sha();
        let viewer = self.viewer.clone();
        let now = self.now;
        let commit = self.new_commit_pub(&group_sha, Some(&viewer), now);
        let r = self.repo_mut(repo);
        r.commits.insert(group_sha.clone(), commit);
        let pr = &r.prs[&number];
        let (base, head) = (pr.base_ref.clone(), pr.head_sha().to_owned());
        r.queues.entry(base).or_default().push(QueueItem {
            number,
            head,
            group_sha,
            enqueued_at: now,
        });
        self.events.push(Event::Enqueued {
            repo: repo.to_owned(),
            number,
        });
    }

    fn dequeue_quietly(&mut self, repo: &str, branch: &str, number: u64) {
        if let Some(q) = self.repo_mut(repo).queues.get_mut(branch) {
            q.retain(|i| i.number != number);
        }
    }

    /// The removal on the PR's timeline, naming the head it held.
    fn note_removal(&mut self, repo: &str, number: u64, reason: &str) {
        let at = self.now;
        let pr = self.get_pr_mut(repo, number);
        let head = pr.head_sha().to_owned();
        pr.timeline.push(TimelineEvent::RemovedFromQueue {
            at,
            reason: reason.to_owned(),
            head,
        });
    }

    /// GitHub removes the entry, turns the PR's auto-merge off, and says both on the PR's
    /// timeline (with `reason`).
    fn dequeue(&mut self, repo: &str, branch: &str, number: u64, reason: &str) {
        self.note_removal(repo, number, reason);
        self.dequeue_quietly(repo, branch, number);
        let at = self.now;
        let pr = self.get_pr_mut(repo, number);
        pr.auto_merge = None;
        pr.timeline.push(TimelineEvent::AutoMergeDisabled {
            at,
            reason: "the pull request was removed from the merge queue".to_owned(),
        });
        self.events.push(Event::Dequeued {
            repo: repo.to_owned(),
            number,
        });
    }
}

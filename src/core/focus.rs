//! PURE: the focused PR payload of `pr-monitor check`: what failed, what is new
//! since the last look, what needs attention, and whether the PR is ready (by the tick's own
//! rule). A function of a snapshot, the seen state, the readiness criteria and the checks'
//! verdict; the `check` command reads and keeps those.

use std::collections::BTreeMap;

mod shape;

pub(crate) use shape::{
    CheckLink, Checks, Comments, ConflictFile, Flake, Full, MergeFacts, Missing, NewComment,
    NewReview, Payload, PlacedComment, PrFacts, Reviews, ThreadComment, ThreadDetail, Threads,
};

use crate::core::checks::{self, Verdict};
use crate::core::decide::merge as merge_rules;
use crate::model::issue_event::IssueEvent;
use crate::model::plan::{SeenMark, SeenSource};
use crate::model::{
    CheckKind, CheckState, Classification, Comment, MergeState, Mergeable, ReviewState, Snapshot,
};

/// Seen-state rows.
pub(crate) type Marks = Vec<SeenMark>;

/// Seen items: (source, id) → updated_at; plus the head last polled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    pub items: BTreeMap<(String, String), String>,
    pub head: Option<String>,
}

impl Seen {
    fn is_new(&self, source: SeenSource, id: &str, updated: &str) -> bool {
        self.items
            .get(&(source.as_str().to_owned(), id.to_owned()))
            .map(String::as_str)
            != Some(updated)
    }
}

use crate::model::stamp_or_empty as stamp;

pub(crate) use crate::core::decide::merge::Criteria;

/// The focused payload, and the seen rows that mark what it reported. `verdict` is the
/// checks' verdict as the tick would give it, so `ready` means what the tick merges by;
/// `conflict_files` are the files a conflict lies in, when they could be told. `full` (the
/// PR's issue events) asks for the raw lists too.
pub(crate) fn payload(
    snap: &Snapshot,
    seen: &Seen,
    criteria: &Criteria,
    (verdict, conflict_files): (&Verdict, Option<&[String]>),
    full: Option<&[IssueEvent]>,
) -> (Payload, Marks) {
    let mut marks = Vec::new();
    let comments = comments(snap, seen, &mut marks);
    let threads = threads(snap, seen, &mut marks);
    let reviews = reviews(snap, seen, &mut marks);
    let conflict = snap.has_conflict();
    // The files are known where they could be told, and where there is no conflict (a clean,
    // computed mergeability).
    let files: &[String] = conflict_files.filter(|_| conflict).unwrap_or_default();
    let merge = merge_facts(snap, files);
    let checks = checks(snap);
    let actionable = actionable(&checks, &comments, &threads.0, &reviews, &merge);
    let readiness = merge_rules::readiness(snap, verdict, criteria);
    let head_pushed_recently = seen
        .head
        .as_deref()
        .is_some_and(|h| h != snap.head.sha.as_str());
    let p = Payload {
        pr: PrFacts {
            number: snap.pr.number,
            url: snap.url.clone(),
            title: snap.title.clone(),
            head_ref_name: snap.head_ref.clone(),
            head_ref_oid: snap.head.sha.as_str().to_owned(),
            base_ref_name: snap.base_ref.clone(),
            mergeable: snap.mergeable.as_str(),
            merge_state_status: snap.merge_state.as_str().to_owned(),
            labels: snap.labels.clone(),
            is_draft: snap.draft,
            state: snap.state.as_str(),
        },
        checks,
        comments,
        threads: threads.0,
        thread_details: threads.1,
        reviews,
        merge,
        ready: readiness.ready,
        readiness: Missing {
            missing_labels: readiness.missing_labels,
            missing_approvals_from: readiness.missing_approvals_from,
        },
        has_actionable: !actionable.is_empty(),
        actionable,
        head_pushed_recently,
        tick: None,
        full: full.map(|events| full_lists(snap, files, events)),
    };
    marks.push(SeenMark::new(
        SeenSource::Head,
        "head",
        snap.head.sha.as_str(),
    ));
    (p, marks)
}

fn checks(snap: &Snapshot) -> Checks {
    let current = checks::newest(&snap.checks);
    let named = |state: CheckState| current.iter().filter(move |c| c.state == state);
    Checks {
        source: snap.checks_source,
        head_sha: snap.head.sha.as_str().to_owned(),
        total: current.len(),
        failed: named(CheckState::Failed).count(),
        pending: named(CheckState::Pending).count(),
        passed: named(CheckState::Passed).count(),
        failed_checks: named(CheckState::Failed)
            .map(|c| CheckLink {
                name: c.name.clone(),
                url: c.url.clone(),
            })
            .collect(),
        pending_names: named(CheckState::Pending).map(|c| c.name.clone()).collect(),
        flakes: snap
            .failed_logs
            .iter()
            .filter_map(|f| match &f.classification {
                Classification::Infra { evidence } => Some(Flake {
                    name: f.name.clone(),
                    evidence: evidence.clone(),
                }),
                Classification::Real => None,
            })
            .collect(),
    }
}

fn new_comment(c: &Comment) -> NewComment {
    NewComment {
        id: c.id.clone(),
        author: c.author.clone(),
        body: c.body.clone(),
    }
}

/// The conversation's comments and the threads' comments, and which are new.
fn comments(snap: &Snapshot, seen: &Seen, marks: &mut Marks) -> Comments {
    let mut new_issue = Vec::new();
    for c in &snap.comments {
        let updated = stamp(c.updated_at);
        if seen.is_new(SeenSource::IssueComment, &c.id, &updated) {
            new_issue.push(new_comment(c));
        }
        marks.push(SeenMark::new(SeenSource::IssueComment, &c.id, updated));
    }
    let mut new_review = Vec::new();
    let mut total_review_comments = 0;
    for c in snap.threads.iter().flat_map(|t| &t.comments) {
        total_review_comments += 1;
        let updated = stamp(c.updated_at);
        if seen.is_new(SeenSource::ReviewComment, &c.id, &updated) {
            new_review.push(new_comment(c));
        }
        marks.push(SeenMark::new(SeenSource::ReviewComment, &c.id, updated));
    }
    let ids = |list: &[NewComment]| list.iter().map(|c| c.id.clone()).collect();
    Comments {
        total_issue_comments: snap.comments.len(),
        total_review_comments,
        new_issue_comment_ids: ids(&new_issue),
        new_review_comment_ids: ids(&new_review),
        new_issue_comments: new_issue,
        new_review_comments: new_review,
    }
}

/// The review threads: counts, and the details of the unresolved ones and of the resolved ones
/// with something new.
fn threads(
    snap: &Snapshot,
    seen: &Seen,
    marks: &mut Marks,
) -> (Threads, BTreeMap<String, ThreadDetail>) {
    let head_time = snap.head.committed_at;
    let mut unresolved_new = Vec::new();
    let mut updated_since_head = 0;
    let mut details = BTreeMap::new();
    for t in &snap.threads {
        let updated = stamp(t.last_activity());
        let is_new = seen.is_new(SeenSource::ReviewThread, &t.id, &updated);
        marks.push(SeenMark::new(SeenSource::ReviewThread, &t.id, updated));
        if t.resolved && !is_new {
            continue;
        }
        if !t.resolved {
            if is_new {
                unresolved_new.push(t.id.clone());
            }
            if head_time.is_some_and(|h| t.last_activity().is_some_and(|a| a > h)) {
                updated_since_head += 1;
            }
        }
        let comments = t
            .comments
            .iter()
            .map(|c| ThreadComment {
                author: c.author.clone(),
                body: c.body.clone(),
                database_id: c.database_id,
            })
            .collect();
        let detail = ThreadDetail {
            path: t.path.clone(),
            line: t.line,
            resolved: t.resolved,
            outdated: t.outdated,
            comments,
        };
        details.insert(t.id.clone(), detail);
    }
    let unresolved: Vec<String> = snap.unresolved_threads().map(|t| t.id.clone()).collect();
    let threads = Threads {
        unresolved: unresolved.len(),
        unresolved_new: unresolved_new.len(),
        unresolved_updated_since_head: updated_since_head,
        unresolved_thread_ids: unresolved,
        unresolved_new_thread_ids: unresolved_new,
    };
    (threads, details)
}

/// The reviews: which are new, the effective decision and each reviewer's latest verdict.
fn reviews(snap: &Snapshot, seen: &Seen, marks: &mut Marks) -> Reviews {
    let mut new_reviews = Vec::new();
    let mut latest = BTreeMap::new();
    let mut sorted: Vec<_> = snap.reviews.iter().collect();
    sorted.sort_by_key(|r| r.submitted_at);
    for r in sorted {
        let updated = stamp(r.updated_at.or(r.submitted_at));
        if seen.is_new(SeenSource::Review, &r.id, &updated) {
            new_reviews.push(NewReview {
                author: r.author.clone(),
                state: r.state.as_str(),
                id: r.id.clone(),
            });
        }
        marks.push(SeenMark::new(SeenSource::Review, &r.id, updated));
        if r.state != ReviewState::Commented && r.state != ReviewState::Pending {
            latest.insert(r.author.clone().unwrap_or_default(), r.state.as_str());
        }
    }
    Reviews {
        total: snap.reviews.len(),
        new_review_ids: new_reviews.iter().map(|r| r.id.clone()).collect(),
        effective_decision: merge_rules::effective_decision(snap).map(ReviewState::as_str),
        latest_by_reviewer: latest,
        new_reviews,
    }
}

fn merge_facts(snap: &Snapshot, files: &[String]) -> MergeFacts {
    let conflict = snap.has_conflict();
    MergeFacts {
        blocked: matches!(snap.merge_state, MergeState::Blocked),
        has_conflicts: conflict,
        conflict_files: files.to_vec(),
        conflict_analysis_available: if conflict {
            !files.is_empty()
        } else {
            snap.mergeable == Mergeable::Mergeable
        },
        mergeable: snap.mergeable.as_str(),
        merge_state_status: snap.merge_state.as_str().to_owned(),
        behind: snap.is_behind(),
        behind_by: snap.behind_by,
        is_draft: snap.draft,
    }
}

/// What needs attention, in the contract's order.
fn actionable(
    checks: &Checks,
    comments: &Comments,
    threads: &Threads,
    reviews: &Reviews,
    merge: &MergeFacts,
) -> Vec<&'static str> {
    let changes_requested =
        reviews.effective_decision == Some(ReviewState::ChangesRequested.as_str());
    [
        (checks.failed > 0, "failed_checks"),
        (!comments.new_issue_comments.is_empty(), "issue_comments"),
        (!comments.new_review_comments.is_empty(), "review_comments"),
        (threads.unresolved_new > 0, "unresolved_review_threads"),
        (changes_requested, "changes_requested"),
        (merge.has_conflicts, "merge_conflict"),
        (merge.behind && !merge.has_conflicts, "stale_branch"),
    ]
    .into_iter()
    .filter_map(|(needs, what)| needs.then_some(what))
    .collect()
}

/// The raw lists of `--full-payload`.
fn full_lists(snap: &Snapshot, files: &[String], events: &[IssueEvent]) -> Full {
    let of_kind = |kind: CheckKind| {
        snap.checks
            .iter()
            .filter(|c| c.kind == kind)
            .cloned()
            .collect()
    };
    // Each thread's comments, flat, each naming its thread and place.
    let review_comments = snap
        .threads
        .iter()
        .flat_map(|t| {
            t.comments.iter().map(|c| PlacedComment {
                comment: c.clone(),
                thread_id: t.id.clone(),
                path: t.path.clone(),
                line: t.line,
            })
        })
        .collect();
    Full {
        pr_checks: snap.checks.clone(),
        commit_check_runs: of_kind(CheckKind::CheckRun),
        commit_statuses: of_kind(CheckKind::Status),
        reviews_raw: snap.reviews.clone(),
        issue_comments: snap.comments.clone(),
        review_threads: snap.threads.clone(),
        review_comments,
        issue_events: events.to_vec(),
        merge_conflicts: files
            .iter()
            .map(|f| ConflictFile { path: f.clone() })
            .collect(),
    }
}

/// A short, readable summary of a payload.
pub(crate) fn human(p: &Payload) -> String {
    // Forge text (title, branches, check names) is shown one line each, controls removed.
    let text = crate::core::text::one_line;
    let mut s = format!(
        "{} {}\n  head {} ({} → {})\n",
        text(&p.pr.url),
        text(&p.pr.title),
        text(&p.pr.head_ref_oid).get(..7).unwrap_or(""),
        text(&p.pr.head_ref_name),
        text(&p.pr.base_ref_name),
    );
    let c = &p.checks;
    s.push_str(&format!(
        "  checks: {} passed, {} failed, {} pending ({} total)\n",
        c.passed, c.failed, c.pending, c.total
    ));
    for f in &c.failed_checks {
        let url = f.url.as_deref().unwrap_or("");
        s.push_str(&format!("    ✗ {} {}\n", text(&f.name), text(url)));
    }
    s.push_str(&format!(
        "  threads: {} unresolved ({} new); comments: {} new, review comments: {} new; reviews: {}\n",
        p.threads.unresolved,
        p.threads.unresolved_new,
        p.comments.new_issue_comments.len(),
        p.comments.new_review_comments.len(),
        p.reviews.effective_decision.unwrap_or("none"),
    ));
    s.push_str(&format!(
        "  merge: {} {}\n",
        p.merge.mergeable, p.merge.merge_state_status
    ));
    if p.actionable.is_empty() {
        s.push_str("  nothing needs attention\n");
    } else {
        s.push_str(&format!("  needs attention: {}\n", p.actionable.join(", ")));
    }
    s
}

/// Marks the reported items seen (the head row too).
pub(crate) fn apply_marks(seen: &mut Seen, marks: &[SeenMark]) {
    for SeenMark {
        source,
        id,
        updated_at: updated,
    } in marks
    {
        if *source == SeenSource::Head {
            seen.head = Some(updated.clone());
        } else {
            seen.items
                .insert((source.as_str().to_owned(), id.clone()), updated.clone());
        }
    }
}

#[cfg(test)]
mod tests;

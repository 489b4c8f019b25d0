//! PURE: the focused PR payload of `pr-monitor check` (seed 001): what failed, what is new
//! since the last look, what needs attention, and whether the PR is ready (by the tick's own
//! rule). A function of a snapshot, the seen state, the readiness criteria and the checks'
//! verdict; the `check` command reads and keeps those.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::core::checks::{self, Verdict};
use crate::core::decide::merge as merge_rules;
use crate::model::plan::SeenMark;
use crate::model::{CheckKind, CheckState, MergeState, ReviewState, Snapshot};

/// Seen-state rows.
pub type Marks = Vec<SeenMark>;

/// Seen items: (source, id) → updated_at; plus the head last polled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    pub items: BTreeMap<(String, String), String>,
    pub head: Option<String>,
}

impl Seen {
    fn is_new(&self, source: &str, id: &str, updated: &str) -> bool {
        self.items
            .get(&(source.to_owned(), id.to_owned()))
            .map(String::as_str)
            != Some(updated)
    }
}

use crate::model::stamp_or_empty as stamp;

pub use crate::core::decide::merge::Criteria;

/// The focused payload, and the seen rows that mark what it reported. `verdict` is the
/// checks' verdict as the tick would give it, so `ready` means what the tick merges by;
/// `conflict_files` are the files a conflict lies in, when they could be told.
pub fn payload(
    snap: &Snapshot,
    seen: &Seen,
    criteria: &Criteria,
    (verdict, conflict_files): (&Verdict, Option<&[String]>),
    full: bool,
) -> (Value, Marks) {
    let mut marks = Vec::new();
    let current = checks::newest(&snap.checks);
    let names = |state: CheckState| {
        current
            .iter()
            .filter(|c| c.state == state)
            .collect::<Vec<_>>()
    };
    let failed = names(CheckState::Failed);
    let pending = names(CheckState::Pending);
    let passed = names(CheckState::Passed);

    let mut new_issue = Vec::new();
    for c in &snap.comments {
        let updated = stamp(c.updated_at);
        if seen.is_new("issue_comment", &c.id, &updated) {
            new_issue.push(json!({"id": c.id, "author": c.author, "body": c.body}));
        }
        marks.push(SeenMark::new("issue_comment", &c.id, updated));
    }
    let mut new_review_comments = Vec::new();
    let mut total_review_comments = 0;
    for t in &snap.threads {
        for c in &t.comments {
            total_review_comments += 1;
            let updated = stamp(c.updated_at);
            if seen.is_new("review_comment", &c.id, &updated) {
                new_review_comments.push(json!({"id": c.id, "author": c.author, "body": c.body}));
            }
            marks.push(SeenMark::new("review_comment", &c.id, updated));
        }
    }
    let head_time = snap.head.committed_at;
    let unresolved: Vec<_> = snap.unresolved_threads().collect();
    let mut unresolved_new = Vec::new();
    let mut updated_since_head = 0;
    let mut details = serde_json::Map::new();
    for t in &snap.threads {
        let updated = stamp(t.last_activity());
        let is_new = seen.is_new("review_thread", &t.id, &updated);
        marks.push(SeenMark::new("review_thread", &t.id, updated));
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
        details.insert(
            t.id.clone(),
            json!({
                "path": t.path, "line": t.line, "resolved": t.resolved, "outdated": t.outdated,
                "comments": t.comments.iter().map(|c| json!({"author": c.author, "body": c.body, "databaseId": c.database_id})).collect::<Vec<_>>(),
            }),
        );
    }
    let mut new_reviews = Vec::new();
    let mut latest: BTreeMap<String, &str> = BTreeMap::new();
    let mut reviews_sorted: Vec<_> = snap.reviews.iter().collect();
    reviews_sorted.sort_by_key(|r| r.submitted_at);
    for r in reviews_sorted {
        let updated = stamp(r.updated_at.or(r.submitted_at));
        if seen.is_new("review", &r.id, &updated) {
            new_reviews.push(json!({"author": r.author, "state": r.state.as_str(), "id": r.id}));
        }
        marks.push(SeenMark::new("review", &r.id, updated));
        if r.state != ReviewState::Commented && r.state != ReviewState::Pending {
            latest.insert(r.author.clone().unwrap_or_default(), r.state.as_str());
        }
    }
    let decision = merge_rules::effective_decision(snap).map(ReviewState::as_str);
    let behind = snap.is_behind();
    let conflict = snap.has_conflict();
    // The files are known where they could be told, and where there is no conflict (a clean,
    // computed mergeability).
    let files: &[String] = conflict_files.filter(|_| conflict).unwrap_or_default();
    let conflict_analysis = if conflict {
        !files.is_empty()
    } else {
        snap.mergeable == crate::model::Mergeable::Mergeable
    };

    let mut actionable = Vec::new();
    if !failed.is_empty() {
        actionable.push("failed_checks");
    }
    if !new_issue.is_empty() {
        actionable.push("issue_comments");
    }
    if !new_review_comments.is_empty() {
        actionable.push("review_comments");
    }
    if !unresolved_new.is_empty() {
        actionable.push("unresolved_review_threads");
    }
    if decision == Some("CHANGES_REQUESTED") {
        actionable.push("changes_requested");
    }
    if conflict {
        actionable.push("merge_conflict");
    }
    if behind && !conflict {
        actionable.push("stale_branch");
    }
    let readiness = merge_rules::readiness(snap, verdict, criteria);
    let head_pushed_recently = seen
        .head
        .as_deref()
        .is_some_and(|h| h != snap.head.sha.as_str());

    let mut out = json!({
        "pr": {
            "number": snap.pr.number, "url": snap.url, "title": snap.title,
            "headRefName": snap.head_ref, "headRefOid": snap.head.sha.as_str(), "baseRefName": snap.base_ref,
            "mergeable": snap.mergeable.as_str(), "mergeStateStatus": snap.merge_state.as_str(),
            "labels": snap.labels, "isDraft": snap.draft, "state": snap.state.as_str(),
        },
        "checks": {
            "source": snap.checks_source, "headSha": snap.head.sha.as_str(),
            "total": current.len(), "failed": failed.len(), "pending": pending.len(), "passed": passed.len(),
            "failedChecks": failed.iter().map(|c| json!({"name": c.name, "url": c.url})).collect::<Vec<_>>(),
            "pendingNames": pending.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            "flakes": snap.failed_logs.iter().filter_map(|f| match &f.classification {
                crate::model::Classification::Infra { evidence } => Some(json!({"name": f.name, "evidence": evidence})),
                crate::model::Classification::Real => None,
            }).collect::<Vec<_>>(),
        },
        "comments": {
            "totalIssueComments": snap.comments.len(), "totalReviewComments": total_review_comments,
            "newIssueCommentIds": new_issue.iter().map(|c| c["id"].clone()).collect::<Vec<_>>(),
            "newReviewCommentIds": new_review_comments.iter().map(|c| c["id"].clone()).collect::<Vec<_>>(),
            "newIssueComments": new_issue, "newReviewComments": new_review_comments,
        },
        "threads": {
            "unresolved": unresolved.len(), "unresolvedNew": unresolved_new.len(),
            "unresolvedUpdatedSinceHead": updated_since_head,
            "unresolvedThreadIds": unresolved.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
            "unresolvedNewThreadIds": unresolved_new,
        },
        "threadDetails": details,
        "reviews": {
            "total": snap.reviews.len(),
            "newReviewIds": new_reviews.iter().map(|r| r["id"].clone()).collect::<Vec<_>>(),
            "effectiveDecision": decision, "latestByReviewer": latest, "newReviews": new_reviews,
        },
        "merge": {
            "blocked": matches!(snap.merge_state, MergeState::Blocked), "hasConflicts": conflict,
            "conflictFiles": files, "conflictAnalysisAvailable": conflict_analysis,
            "mergeable": snap.mergeable.as_str(),
            "mergeStateStatus": snap.merge_state.as_str(), "behind": behind, "behindBy": snap.behind_by,
            "isDraft": snap.draft,
        },
        "ready": readiness.ready,
        "readiness": {
            "missingLabels": readiness.missing_labels,
            "missingApprovalsFrom": readiness.missing_approvals_from,
        },
        "actionable": actionable,
        "hasActionable": !actionable.is_empty(),
        "headPushedRecently": head_pushed_recently,
    });
    if full {
        out["prChecks"] = json!(snap.checks);
        out["commitCheckRuns"] = json!(
            snap.checks
                .iter()
                .filter(|c| c.kind == CheckKind::CheckRun)
                .collect::<Vec<_>>()
        );
        out["commitStatuses"] = json!(
            snap.checks
                .iter()
                .filter(|c| c.kind == CheckKind::Status)
                .collect::<Vec<_>>()
        );
        out["reviews_raw"] = json!(snap.reviews);
        out["issue_comments"] = json!(snap.comments);
        out["review_threads"] = json!(snap.threads);
        // Each thread's comments, flat, each naming its thread and place (seed 001's list).
        let mut review_comments = Vec::new();
        for t in &snap.threads {
            for c in &t.comments {
                let mut v = json!(c);
                v["thread_id"] = json!(t.id);
                v["path"] = json!(t.path);
                v["line"] = json!(t.line);
                review_comments.push(v);
            }
        }
        out["review_comments"] = json!(review_comments);
        out["merge_conflicts"] =
            json!(files.iter().map(|f| json!({"path": f})).collect::<Vec<_>>());
    }
    marks.push(SeenMark::new("head", "head", snap.head.sha.as_str()));
    (out, marks)
}

/// A short, readable summary of a payload.
pub fn human(p: &Value) -> String {
    // Forge text (title, branches, check names) is shown one line each, controls removed.
    let text = |v: &Value| crate::core::text::one_line(v.as_str().unwrap_or(""));
    let mut s = format!(
        "{} {}\n  head {} ({} → {})\n",
        text(&p["pr"]["url"]),
        text(&p["pr"]["title"]),
        text(&p["pr"]["headRefOid"]).get(..7).unwrap_or(""),
        text(&p["pr"]["headRefName"]),
        text(&p["pr"]["baseRefName"]),
    );
    let c = &p["checks"];
    s.push_str(&format!(
        "  checks: {} passed, {} failed, {} pending ({} total)\n",
        c["passed"], c["failed"], c["pending"], c["total"]
    ));
    for f in c["failedChecks"].as_array().into_iter().flatten() {
        s.push_str(&format!("    ✗ {} {}\n", text(&f["name"]), text(&f["url"])));
    }
    s.push_str(&format!(
        "  threads: {} unresolved ({} new); comments: {} new, review comments: {} new; reviews: {}\n",
        p["threads"]["unresolved"],
        p["threads"]["unresolvedNew"],
        p["comments"]["newIssueComments"].as_array().map_or(0, Vec::len),
        p["comments"]["newReviewComments"].as_array().map_or(0, Vec::len),
        p["reviews"]["effectiveDecision"].as_str().unwrap_or("none"),
    ));
    s.push_str(&format!(
        "  merge: {} {}\n",
        p["merge"]["mergeable"].as_str().unwrap_or(""),
        p["merge"]["mergeStateStatus"].as_str().unwrap_or("")
    ));
    let actionable: Vec<&str> = p["actionable"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if actionable.is_empty() {
        s.push_str("  nothing needs attention\n");
    } else {
        s.push_str(&format!("  needs attention: {}\n", actionable.join(", ")));
    }
    s
}

/// Marks the reported items seen (the head row too).
pub fn apply_marks(seen: &mut Seen, marks: &[SeenMark]) {
    for SeenMark {
        source,
        id,
        updated_at: updated,
    } in marks
    {
        if source == "head" {
            seen.head = Some(updated.clone());
        } else {
            seen.items
                .insert((source.clone(), id.clone()), updated.clone());
        }
    }
}

#[cfg(test)]
mod tests;

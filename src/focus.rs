//! `pr-monitor check PR`: the focused PR payload (seed 001), new-versus-seen across runs, and
//! watch mode. The payload is a pure function of a snapshot and the seen state; the command
//! reads the forge, keeps the seen state (database, a JSON state file, or none) and prints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant as Clock};

use anyhow::{Context, Result, anyhow};
use serde_json::{Value, json};

use crate::app::App;
use crate::checks::{self, Verdict};
use crate::cli::CheckArgs;
use crate::decide::merge as merge_rules;
use crate::model::{CheckKind, CheckState, Instant, MergeState, PrRef, ReviewState, Snapshot};

/// Seen-state rows: (source, id, updated_at).
pub type Marks = Vec<(String, String, String)>;

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

pub use crate::decide::merge::Criteria;

/// The focused payload, and the seen rows that mark what it reported. `verdict` is the
/// checks' verdict as the tick would give it, so `ready` means what the tick merges by.
pub fn payload(
    snap: &Snapshot,
    seen: &Seen,
    criteria: &Criteria,
    verdict: &Verdict,
    full: bool,
) -> (Value, Vec<(String, String, String)>) {
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
        marks.push(("issue_comment".to_owned(), c.id.clone(), updated));
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
            marks.push(("review_comment".to_owned(), c.id.clone(), updated));
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
        marks.push(("review_thread".to_owned(), t.id.clone(), updated));
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
        marks.push(("review".to_owned(), r.id.clone(), updated));
        if r.state != ReviewState::Commented && r.state != ReviewState::Pending {
            latest.insert(r.author.clone().unwrap_or_default(), r.state.as_str());
        }
    }
    let decision = merge_rules::effective_decision(snap).map(ReviewState::as_str);
    let behind = snap.is_behind();
    let conflict = snap.has_conflict();

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
                crate::flake::Classification::Infra { evidence } => Some(json!({"name": f.name, "evidence": evidence})),
                crate::flake::Classification::Real => None,
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
            "conflictFiles": [], "mergeable": snap.mergeable.as_str(),
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
    }
    marks.push((
        "head".to_owned(),
        "head".to_owned(),
        snap.head.sha.as_str().to_owned(),
    ));
    (out, marks)
}

/// A short, readable summary of a payload.
pub fn human(p: &Value) -> String {
    // Forge text (title, branches, check names) is shown one line each, controls removed.
    let text = |v: &Value| crate::text::one_line(v.as_str().unwrap_or(""));
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

/// Where the seen state lives.
enum State {
    Db,
    File(PathBuf),
    None,
}

fn load_file(path: &Path) -> Result<Seen> {
    if !path.exists() {
        return Ok(Seen::default());
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the state file `{}`", path.display()))?;
    let v: Value = serde_json::from_str(&text)
        .with_context(|| format!("the state file `{}` is not JSON", path.display()))?;
    let mut seen = Seen {
        head: v["headSha"].as_str().map(str::to_owned),
        ..Seen::default()
    };
    for (source, ids) in v["seen"].as_object().into_iter().flatten() {
        for (id, updated) in ids.as_object().into_iter().flatten() {
            seen.items.insert(
                (source.clone(), id.clone()),
                updated.as_str().unwrap_or("").to_owned(),
            );
        }
    }
    Ok(seen)
}

fn save_file(path: &Path, seen: &Seen, now: Instant) -> Result<()> {
    let mut by_source: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for ((source, id), updated) in &seen.items {
        by_source.entry(source).or_default().insert(id, updated);
    }
    let v = json!({ "seen": by_source, "headSha": seen.head, "lastPolledAt": stamp(Some(now)) });
    let tmp = path.with_extension("tmp");
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&tmp, serde_json::to_string_pretty(&v)?)?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot write the state file `{}`", path.display()))?;
    Ok(())
}

fn apply_marks(seen: &mut Seen, marks: &[(String, String, String)]) {
    for (source, id, updated) in marks {
        if source == "head" {
            seen.head = Some(updated.clone());
        } else {
            seen.items
                .insert((source.clone(), id.clone()), updated.clone());
        }
    }
}

fn load(app: &App, state: &State, pr: &PrRef) -> Result<Seen> {
    match state {
        State::None => Ok(Seen::default()),
        State::File(p) => load_file(p),
        State::Db => {
            let mut seen = Seen::default();
            for ((source, id), updated) in app.store.check_seen(pr)? {
                if source == "head" {
                    seen.head = Some(updated);
                } else {
                    seen.items.insert((source, id), updated);
                }
            }
            Ok(seen)
        }
    }
}

fn save(
    app: &mut App,
    state: &State,
    pr: &PrRef,
    seen: &mut Seen,
    marks: &[(String, String, String)],
) -> Result<()> {
    apply_marks(seen, marks);
    match state {
        State::None => Ok(()),
        State::File(p) => save_file(p, seen, app.now),
        State::Db => app.store.mark_check_seen(pr, marks),
    }
}

/// One poll: read, enrich, build the payload.
fn poll(
    app: &mut App,
    pr: &PrRef,
    seen: &Seen,
    criteria: &Criteria,
    full: bool,
) -> Result<(Value, Marks)> {
    let mut snap = crate::owner::read(app, pr)?;
    let watch = app.store.watch(pr)?;
    let policy = watch
        .as_ref()
        .map_or_else(|| app.config.policy(None), |w| app.policy_for(w));
    let forge = app
        .forges
        .get(pr.forge, &app.config)
        .map_err(|e| anyhow!(e))?;
    crate::detect::failed_logs(forge, &mut app.store, &mut snap, &policy, true);
    // The checks' verdict as the tick gives it: waiting counts from when the tick first saw
    // this head, or from now for a head it has not seen.
    let head_seen_at = watch
        .as_ref()
        .filter(|w| w.status.head_sha.as_ref() == Some(&snap.head.sha))
        .and_then(|w| w.status.head_seen_at)
        .unwrap_or(app.now);
    let verdict = checks::verdict(
        &snap.checks,
        head_seen_at,
        app.now,
        policy.no_checks_grace_sec,
        policy.pending_timeout_sec,
    );
    Ok(payload(&snap, seen, criteria, &verdict, full))
}

/// `check PR [--full-payload] [--state-file P | --no-state] [--watch …]`.
pub fn command(app: &mut App, args: &CheckArgs) -> Result<u8> {
    let pr = app.pr(&args.pr)?;
    let state = match (&args.state_file, args.no_state) {
        (_, true) => State::None,
        (Some(p), false) => State::File(p.clone()),
        (None, false) => State::Db,
    };
    let policy = app
        .store
        .watch(&pr)?
        .map_or_else(|| app.config.policy(None), |w| app.policy_for(&w));
    let mut criteria = Criteria {
        required_labels: policy.required_labels.clone(),
        required_approvals_from: policy.required_approvals_from.clone(),
    };
    criteria
        .required_labels
        .extend(args.require_labels.iter().cloned());
    criteria
        .required_approvals_from
        .extend(args.require_approvals_from.iter().cloned());
    let mut seen = load(app, &state, &pr)?;
    if !args.watch {
        let (p, marks) = poll(app, &pr, &seen, &criteria, args.full_payload)?;
        save(app, &state, &pr, &mut seen, &marks)?;
        // Comment and review bodies are printed as written, save for the secrets we hold.
        if app.json {
            println!("{}", crate::secrets::mask(&p.to_string()));
        } else {
            print!("{}", crate::secrets::mask(&human(&p)));
        }
        return Ok(0);
    }
    let started = Clock::now();
    let limit = Duration::from_secs(args.max_duration);
    let mut tick = 0u64;
    loop {
        tick += 1;
        match poll(app, &pr, &seen, &criteria, args.full_payload) {
            Ok((mut p, marks)) => {
                save(app, &state, &pr, &mut seen, &marks)?;
                p["tick"] = json!(tick);
                println!("{}", crate::secrets::mask(&p.to_string()));
                if p["hasActionable"].as_bool() == Some(true) {
                    println!(
                        "{}",
                        json!({"final": true, "outcome": "actionable", "tick": tick, "actionable": p["actionable"], "pr": p["pr"]["url"]})
                    );
                    return Ok(0);
                }
                // A merged or closed PR will not change again: say so at once, not at timeout.
                if let Some(state @ ("merged" | "closed")) = p["pr"]["state"].as_str() {
                    println!(
                        "{}",
                        json!({"final": true, "outcome": state, "tick": tick, "pr": p["pr"]["url"]})
                    );
                    return Ok(0);
                }
            }
            Err(e) => {
                println!(
                    "{}",
                    json!({"final": true, "outcome": "error", "tick": tick, "error": crate::secrets::mask(&format!("{e:#}"))})
                );
                return Ok(2);
            }
        }
        let interval = Duration::from_secs(args.interval);
        if started.elapsed() + interval > limit {
            println!(
                "{}",
                json!({"final": true, "outcome": "timeout", "tick": tick, "elapsedSec": started.elapsed().as_secs()})
            );
            return Ok(124);
        }
        std::thread::sleep(interval);
        if !app.clock_fixed {
            app.now = crate::clock::wall_now();
        }
    }
}

#[cfg(test)]
mod tests;

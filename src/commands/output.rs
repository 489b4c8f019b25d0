//! What commands print: the contract's `status --json` objects and the short human lines.
//! Pure functions of stored state, so every shape is tested here.

use serde_json::{Value, json};

use crate::core::text::one_line;
use crate::holder::Holder;
use crate::model::checkout::Standing;
use crate::model::watch::{HistoryEntry, Picture, Watch, Why};
use crate::model::{Instant, PrState};
use crate::terminal::Term;
use crate::tick::PrOutcome;
use crate::view::when::{both, relative};

fn ts(t: Option<Instant>) -> Value {
    t.map_or(Value::Null, |t| json!(crate::model::stamp(t)))
}

/// One `status --json` object (the contract's shape).
pub fn status_json(w: &Watch) -> Value {
    let s = &w.status;
    let (ci, ci_fixing) = s.pills.ci.flags();
    json!({
        "kind": "pr",
        "pr": w.pr.url(),
        "forge": w.pr.forge.as_str(),
        "repo": w.pr.repo,
        "number": w.pr.number,
        "state": s.state.as_str(),
        "head_sha": s.head_sha.as_ref().map(crate::model::Sha::as_str),
        "pills": { "ci": ci, "ci_fixing": ci_fixing, "cnf": s.pills.cnf, "cmt": s.pills.cmt },
        "why": s.why.map(Why::as_str),
        "attempts": s.attempts,
        "merge_armed": s.merge.is_armed(),
        "merge_via": if s.merge.is_armed() || s.state == PrState::Merged { s.merge.via().map(crate::model::watch::MergeVia::as_str) } else { None },
        "next_tick_at": if s.state == PrState::Open { ts(w.next_tick_at) } else { Value::Null },
        "last_tick_at": ts(w.last_tick_at),
        "last_error": w.last_error,
        "title": s.title,
        "job": w.job,
        "agent": w.agent,
        "paused": w.paused,
        "paused_reason": if w.paused { w.status.memory.paused_reason.as_deref() } else { None },
        "queue": queue_json(w),
        "deferred": deferred_json(w),
        "auto_fix_override": w.auto_fix,
        "merge_method": if s.state == PrState::Open { s.memory.picture.merge_method.map(crate::model::MergeMethod::as_str) } else { None },
        "trusted_by": s.trusted_by(),
    })
}

/// The `deferred` field of `status --json`: when an open PR was pushed past its forge's
/// rate-limit reset for budget, until when and why; null otherwise.
fn deferred_json(w: &Watch) -> Value {
    match w.status.memory.budget_deferral.as_ref() {
        Some(d) if w.status.state == PrState::Open => json!({
            "at": crate::model::stamp(d.at),
            "until": crate::model::stamp(d.until),
            "why": d.why,
        }),
        _ => Value::Null,
    }
}

/// The contract's `queue` object: the PR's entry in the merge queue or train, or null.
fn queue_json(w: &Watch) -> Value {
    let s = &w.status;
    let entry = s.memory.picture.queue.as_ref();
    match entry.filter(|_| s.merge.is_armed() && s.state == PrState::Open) {
        Some(e) => json!({
            "position": e.position,
            "state": e.state.as_str(),
            "estimated_seconds": e.estimated_seconds,
            "enqueued_at": ts(e.enqueued_at),
            "ahead": e.ahead,
        }),
        None => Value::Null,
    }
}

/// `status PR`'s line for the queue entry: `3rd in the merge queue (QUEUED), about 12m, since …`.
fn queue_line(w: &Watch) -> Option<String> {
    let e = w.status.memory.picture.queue.as_ref()?;
    Some(format!(
        "  queue      {} ({}){}{}\n{}",
        crate::core::decide::queue::place(e.position, w.pr.forge),
        e.state.as_str(),
        e.estimated_seconds
            .map(|s| format!(", about {}m to merge", s.div_ceil(60)))
            .unwrap_or_default(),
        e.enqueued_at
            .map(|t| format!(", in line since {}", crate::view::when::absolute(t)))
            .unwrap_or_default(),
        if e.ahead.is_empty() {
            String::new()
        } else {
            format!(
                "  ahead      {}\n",
                crate::core::decide::queue::ahead_words(w.pr.forge, &e.ahead)
            )
        }
    ))
}

/// `status PR --json`'s `checkout`: the agent's checkout named by the watch, where it stands
/// against the head (`standing`: at_head, behind, ahead, diverged, unreadable) and whether
/// that is another commit (`stale`); null when the watch names none.
pub fn checkout_json(w: &Watch, standing: Option<&Standing>) -> Value {
    match (&w.status.memory.checkout, standing) {
        (Some(path), Some(standing)) => {
            let mut v = json!(standing);
            v["path"] = json!(path);
            v["stale"] = json!(standing.is_stale());
            v
        }
        (Some(path), None) => json!({"path": path, "standing": null, "stale": null}),
        _ => Value::Null,
    }
}

/// `status --json` for many watches: an array.
pub fn status_array(watches: &[Watch]) -> Value {
    Value::Array(watches.iter().map(status_json).collect())
}

/// The pills as a person reads them: `ci cnf cmt 3`, or `-`.
pub fn pills_text(w: &Watch) -> String {
    let lit = crate::view::status_view::pills(w);
    if lit.is_empty() {
        "-".to_owned()
    } else {
        lit.into_iter()
            .map(|(t, _)| t)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `status PR`: the picture in detail, with recent history; times relative to `now`.
///
/// `policy_auto_fix` is what the PR's policy says of auto-fix, shown beside an override;
/// `checkout` is where the agent's checkout stands, when the watch names one.
pub fn status_detail(
    w: &Watch,
    history: &[HistoryEntry],
    now: Instant,
    policy_auto_fix: bool,
    checkout: Option<&Standing>,
) -> String {
    let mut out = format!(
        "{}  {}\n",
        crate::view::chip::label(w),
        one_line(w.status.title.as_deref().unwrap_or(""))
    );
    out.push_str(&format!("  {}\n", w.pr.url()));
    out.push_str(&detail_head(w, checkout));
    out.push_str(&detail_picture(&w.status.memory.picture));
    out.push_str(&detail_merge(w, policy_auto_fix));
    out.push_str(&detail_ticks(w, now));
    if !history.is_empty() {
        out.push_str("  history\n");
        for h in history {
            out.push_str(&format!(
                "    {:>8}  {}",
                relative(h.at, now),
                one_line(&h.what)
            ));
            if let Some(why) = &h.why {
                out.push_str(&format!(" ({})", one_line(why)));
            }
            out.push('\n');
        }
    }
    out
}

/// `status PR`'s state, head, who pushed it, where the agent's checkout stands, the pills
/// and why.
fn detail_head(w: &Watch, checkout: Option<&Standing>) -> String {
    let s = &w.status;
    let mut out = format!("  state      {}\n", s.state.as_str());
    out.push_str(&format!(
        "  head       {}{}\n",
        s.head_sha.as_ref().map_or("-", |h| h.short()),
        s.head_ref
            .as_deref()
            .map(|r| format!(
                " ({} → {})",
                one_line(r),
                one_line(s.base_ref.as_deref().unwrap_or("?"))
            ))
            .unwrap_or_default()
    ));
    if let Some(words) = s.trust_words() {
        out.push_str(&format!("  pushed     {}\n", one_line(&words)));
    }
    if let (Some(agent), Some(Why::NotAgentCommit)) = (&w.agent, s.why) {
        out.push_str(&format!(
            "  stale      the head was pushed from elsewhere, not by {agent}: auto-fix leaves it to you\n"
        ));
    }
    if let (Some(path), Some(standing), Some(head)) = (&s.memory.checkout, checkout, &s.head_sha) {
        out.push_str(&format!(
            "  checkout   {}: {}\n",
            one_line(path),
            one_line(&standing.words(head))
        ));
    }
    out.push_str(&format!("  pills      {}\n", pills_text(w)));
    if let Some(why) = s.why {
        out.push_str(&format!(
            "  why        {} — {}\n",
            why.as_str(),
            why.explain(s.attempts)
        ));
    }
    out
}

/// `status PR`'s last read: the failed checks with their links and log tails, the flakes,
/// what runs, mergeability and reviews; nothing before a read.
fn detail_picture(p: &Picture) -> String {
    let mut out = String::new();
    if p.merge_state.is_empty() {
        return out;
    }
    for (name, url) in &p.failed {
        let log = p.failed_logs.iter().find(|l| &l.name == name);
        out.push_str(&format!(
            "  ✗ {}{}  {}\n",
            one_line(name),
            if log.is_some_and(|l| l.runner) {
                " (runner)"
            } else {
                ""
            },
            one_line(url.as_deref().unwrap_or(""))
        ));
        for line in log.map_or("", |l| l.tail.as_str()).lines() {
            out.push_str(&format!("      │ {}\n", one_line(line)));
        }
    }
    for (name, evidence) in &p.flakes {
        out.push_str(&format!(
            "    {} is an infrastructure failure: {}\n",
            one_line(name),
            one_line(evidence)
        ));
    }
    if !p.pending.is_empty() {
        out.push_str(&format!(
            "  ◌ running: {}\n",
            one_line(&p.pending.join(", "))
        ));
    }
    out.push_str(&format!(
        "  mergeable  {} {}{}{}\n",
        p.mergeable,
        p.merge_state,
        p.behind_by
            .filter(|b| *b > 0)
            .map(|b| format!(", {b} behind"))
            .unwrap_or_default(),
        if p.draft { ", draft" } else { "" }
    ));
    out.push_str(&format!(
        "  reviews    {}; {} unresolved thread(s)\n",
        p.review_decision.as_deref().unwrap_or("no decision"),
        p.unresolved_threads
    ));
    out
}

/// `status PR`'s auto-fix override, attempts, place in a queue, how the merge is armed, and
/// the method it would use.
fn detail_merge(w: &Watch, policy_auto_fix: bool) -> String {
    let s = &w.status;
    let mut out = String::new();
    if let Some(own) = w.auto_fix {
        out.push_str(&format!(
            "  auto-fix   {} for this PR (the policy says {}; `--auto-fix default` clears it)\n",
            on_off(own),
            on_off(policy_auto_fix)
        ));
    }
    out.push_str(&format!("  attempts   {}\n", s.attempts));
    if s.merge.is_armed() {
        out.push_str(&queue_line(w).unwrap_or_default());
    }
    out.push_str(&format!(
        "  merge      {}\n",
        if s.merge.is_armed() {
            format!(
                "armed ({})",
                s.merge.via().map_or("pending", |v| v.as_str())
            )
        } else if s.state == PrState::Merged {
            format!(
                "merged (via {})",
                s.merge.via().map_or("the forge", |v| v.as_str())
            )
        } else {
            "not armed".into()
        }
    ));
    if let Some(method) = s
        .memory
        .picture
        .merge_method
        .filter(|_| s.state == PrState::Open)
    {
        out.push_str(&format!("  method     {}\n", method.as_str()));
    }
    out
}

/// `status PR`'s last and next tick, the last error, and a deferral by the budget.
fn detail_ticks(w: &Watch, now: Instant) -> String {
    let s = &w.status;
    let mut out = format!(
        "  last tick  {}\n  next tick  {}\n",
        both(w.last_tick_at, now),
        if s.state == PrState::Open && !w.paused {
            both(w.next_tick_at, now)
        } else {
            "-".to_owned()
        }
    );
    if let Some(e) = &w.last_error {
        out.push_str(&format!("  error      {}\n", one_line(e)));
    }
    if let Some(d) = s
        .memory
        .budget_deferral
        .as_ref()
        .filter(|_| s.state == PrState::Open)
    {
        out.push_str(&format!(
            "  deferred   until {}: {}\n",
            both(Some(d.until), now),
            one_line(&d.why)
        ));
    }
    out
}

fn on_off(v: bool) -> &'static str {
    if v { "on" } else { "off" }
}

/// One line per PR of a run (only this run's error, never a stale one).
pub fn outcome_line(o: &PrOutcome, now: Instant, term: Term) -> String {
    match (&o.plan, &o.error) {
        (_, Some(e)) => format!(
            "{}  error: {}",
            o.watch.pr,
            one_line(&crate::secrets::mask(e))
        ),
        (Some(plan), None) => {
            let w = Watch {
                status: plan.status.clone(),
                next_tick_at: plan.next_tick_at,
                last_error: None,
                last_tick_at: Some(now),
                ..o.watch.clone()
            };
            let mut line = crate::view::status_view::line(&w, now, term);
            for h in &plan.history {
                line.push_str(&format!("\n    {}", one_line(&h.what)));
            }
            line
        }
        (None, None) => format!("{}  skipped", o.watch.pr),
    }
}

/// Whether a PR's tick changed anything (history written, or an error).
pub fn changed(o: &PrOutcome) -> bool {
    o.error.is_some() || o.plan.as_ref().is_some_and(|p| !p.history.is_empty())
}

/// `run 7f3a0c21 (pid 4121 on host-a, since 2026-11-30 20:14:02Z)`.
pub fn describe_holder(h: &Holder) -> String {
    format!(
        "run {} (pid {} on {}, since {})",
        h.run,
        h.pid,
        one_line(&h.host),
        crate::view::when::absolute(h.since)
    )
}

/// `3 PRs held by run 7f3a0c21 (pid 4121 on host-a, since 2026-11-30 20:14:02Z)`: one line per
/// holder, in the order first met, from one entry per held PR (`None`: a holder not named).
pub fn held_lines(held: &[Option<Holder>]) -> Vec<String> {
    let mut groups: Vec<(Option<&Holder>, usize)> = Vec::new();
    for h in held {
        match groups.iter_mut().find(|(g, _)| *g == h.as_ref()) {
            Some((_, n)) => *n += 1,
            None => groups.push((h.as_ref(), 1)),
        }
    }
    groups
        .into_iter()
        .map(|(h, n)| {
            format!(
                "{n} PR{} held by {}",
                if n == 1 { "" } else { "s" },
                h.map_or_else(|| "another run".to_owned(), describe_holder)
            )
        })
        .collect()
}

/// `took over 2 PRs from run 7f3a0c21 (…), whose process is gone`: one line per holder.
pub fn taken_over_lines(taken: &[Holder]) -> Vec<String> {
    let named: Vec<Option<Holder>> = taken.iter().cloned().map(Some).collect();
    held_lines(&named)
        .into_iter()
        .map(|line| {
            let line = line.replacen(" held by ", " from ", 1);
            format!("took over {line}, whose process is gone")
        })
        .collect()
}

/// The `held_by` field of `status --json`: the run holding the PR's lease, or null.
pub fn held_json(holder: Option<&Holder>) -> Value {
    holder.map_or(Value::Null, |h| {
        json!({"run": h.run, "pid": h.pid, "host": h.host, "since": crate::model::stamp(h.since)})
    })
}

/// One undelivered outbox message for `status`.
pub fn undelivered_line(row: &crate::store::OutboxRow) -> String {
    format!(
        "  {}  {}  {} attempt(s){}: {}",
        row.message.channel,
        one_line(&row.message.subject),
        row.attempts,
        if row.permanent {
            ", given up"
        } else {
            ", retried at the next run"
        },
        row.last_error.as_deref().unwrap_or("")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_is_described_by_its_run_pid_host_and_start() {
        let h = Holder {
            run: "7f3a0c21".into(),
            pid: 4121,
            host: "host-a".into(),
            since: crate::model::parse_instant("2026-11-30T20:14:02Z").unwrap(),
            started: Some(900),
        };
        assert_eq!(
            describe_holder(&h),
            "run 7f3a0c21 (pid 4121 on host-a, since 2026-11-30 20:14:02Z)"
        );
    }

    #[test]
    fn held_prs_are_counted_per_holder() {
        let h = |run: &str| Holder {
            run: run.into(),
            pid: 4121,
            host: "host-a".into(),
            since: t0(),
            started: Some(1),
        };
        let held = [
            Some(h("7f3a")),
            None,
            Some(h("7f3a")),
            Some(h("9b01")),
            Some(h("7f3a")),
        ];
        assert_eq!(
            held_lines(&held),
            vec![
                "3 PRs held by run 7f3a (pid 4121 on host-a, since 2026-11-29 12:00:00Z)",
                "1 PR held by another run",
                "1 PR held by run 9b01 (pid 4121 on host-a, since 2026-11-29 12:00:00Z)",
            ]
        );
        assert_eq!(
            taken_over_lines(&[h("7f3a"), h("7f3a")]),
            vec![
                "took over 2 PRs from run 7f3a (pid 4121 on host-a, since 2026-11-29 12:00:00Z), whose process is gone"
            ]
        );
        assert_eq!(
            held_json(Some(&h("7f3a"))),
            json!({"run": "7f3a", "pid": 4121, "host": "host-a", "since": "2026-11-29T12:00:00Z"})
        );
    }
    use crate::core::decide::tests::{t0, watch};
    use crate::model::{QueueEntry, QueueState};

    #[test]
    fn the_queue_object_and_line_show_an_armed_prs_entry_only() {
        let mut w = watch();
        w.status.memory.picture.queue = Some(QueueEntry {
            position: 3,
            state: QueueState::Queued,
            estimated_seconds: Some(720),
            enqueued_at: Some(t0()),
            ahead: vec![5, 7],
            group_sha: None,
        });
        assert_eq!(status_json(&w)["queue"], Value::Null, "not armed");
        w.status.merge = crate::model::watch::Merge::Armed {
            at: t0(),
            via: None,
        };
        assert_eq!(
            status_json(&w)["queue"],
            json!({"position": 3, "state": "QUEUED", "estimated_seconds": 720, "enqueued_at": "2026-11-29T12:00:00Z", "ahead": [5, 7]})
        );
        assert_eq!(
            queue_line(&w).as_deref(),
            Some(
                "  queue      3rd in the merge queue (QUEUED), about 12m to merge, in line since 2026-11-29 12:00:00Z\n  ahead      #5, #7\n"
            )
        );
    }
}

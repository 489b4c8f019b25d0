//! The pure decision core: stored state + a fresh snapshot + policy + clock → a [`Plan`].
//!
//! No I/O and no clock reads happen here; `now` is an argument and the plan says when to look
//! again. The shell (`tick`) applies the plan's actions and records its state. The rules are
//! split by stage: [`remediate`] (what each failure gets, the guards, clearing, conflicts,
//! review feedback) and [`merge`] (merge when ready); this module classifies the snapshot once,
//! runs the stages, and sets the cadence.

mod failure;
pub(crate) mod intents;
pub(crate) mod merge;
pub(crate) mod queue;
mod remediate;
mod settle;
mod to_agent;

pub(crate) use crate::model::plan::{Action, AgentRequest, Feedback, MessageKind, Notice, Plan};
pub(crate) use failure::{Retry, after_acting, after_failure, keeps_erroring};
pub(crate) use settle::{settled_after, settled_until};

use crate::model::watch::Ci;
use chrono::Duration;

use crate::core::checks::{self, Verdict};
use crate::core::identity::Agent;
use crate::core::trust::{self, Trusted};
use crate::model::policy::Policy;
use crate::model::trust::{HeadTrust, TrustVerdict};
use crate::model::watch::{HistoryEntry, Watch, WatchStatus};
use crate::model::{Instant, Login, PrState, Snapshot};

/// How long a push, a new head or an agent run counts as recent activity (poll on `poll_sec`).
pub(crate) const ACTIVITY_WINDOW_SECS: i64 = 120;

/// A head that appeared this long after a command agent's run ended is still the agent's: its
/// push may land just after the run reports done.
pub(crate) const AGENT_RUN_GRACE_SECS: i64 = 15;

/// How long a closed (not merged) PR waits before it is looked at again, so one reopened is
/// noticed within a day even when nothing names it. A merged PR cannot be reopened on either
/// forge, and is not looked at again.
pub(crate) const CLOSED_LOOK_SECS: i64 = 24 * 3600;

/// Facts from outside the snapshot that the rules need.
#[derive(Debug, Clone)]
pub(crate) struct Context<'a> {
    pub policy: &'a Policy,
    pub now: Instant,
    /// Logins whose commits are the agent's (from `agents.<name>.logins`).
    pub agent_logins: &'a [Login],
    /// Commit emails that are the agent's (from `agents.<name>.emails`).
    pub agent_emails: &'a [String],
    /// What the forge said this tick of how the head got there, when it was read (only when a
    /// first decision asked for it: see [`Plan::needs_evidence`]).
    pub evidence: Option<&'a crate::model::trust::Evidence>,
    /// The token's login: the owner pr-monitor acts for.
    pub owner: &'a str,
    /// How the commits the forge makes for the owner name it (see [`crate::model::viewer`]).
    pub commits_as: &'a crate::model::viewer::Committer,
    /// This PR is first in line to update its branch for its base (see [`update_turns`]).
    pub update_turn: bool,
    /// Items already handled: (source, id) → updated_at.
    pub seen: &'a std::collections::BTreeMap<(String, String), String>,
    /// `pr-monitor fix`: send the current failure now, whoever made the commit and whatever
    /// the guards say.
    pub fix_asked: bool,
    /// The PR's recorded intents no read has reconciled yet (see [`intents`]).
    pub intents: &'a [crate::model::intent::Intent],
    /// Masks the secrets the process holds in text bound for an agent (feedback bodies).
    pub held: crate::core::logs::Masker,
}

/// The facts about a snapshot that the rules branch on, classified once.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts derived from one snapshot"
)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Condition {
    pub verdict: Verdict,
    pub conflict: bool,
    /// GitHub has not finished computing mergeability.
    pub mergeability_unknown: bool,
    pub unresolved_threads: u32,
    /// The head commit is the agent's.
    pub agent_commit: bool,
    /// The head changed since the last tick.
    pub new_head: bool,
    pub behind: bool,
    /// Checks pending past `pending_timeout_sec`: they never finished and count as failed.
    pub overdue: Vec<String>,
    /// The verdict on the head's trust, when known (kept, vouched, or judged on this tick's
    /// evidence); `None` until the forge's evidence is read.
    pub trust: Option<HeadTrust>,
    /// `trust` was judged on this tick's evidence, or is settled (it needs no new read).
    pub trust_fresh: bool,
    /// Failing freshness checks (see [`checks::is_freshness`]) on a clean branch behind its
    /// base that the policy lets pr-monitor update: staleness, answered by a branch update,
    /// never a code failure for the agent or the owner.
    pub freshness: Vec<String>,
}

impl Condition {
    /// Whether every failing check is a freshness check (see [`Condition::freshness`]).
    pub(crate) fn only_stale(&self) -> bool {
        match &self.verdict {
            Verdict::Failed { failed } => failed.iter().all(|f| self.freshness.contains(f)),
            _ => false,
        }
    }
}

/// When waiting for the head's checks began (the no-checks grace and the pending timeout count
/// from it): the tick's first sight of the head, or pr-monitor's last re-run, whichever is
/// later; `now` for a head the tick has not seen. The tick and `check` both ask this.
pub(crate) fn waiting_since(before: &WatchStatus, snap: &Snapshot, now: Instant) -> Instant {
    let head_seen_at = if before.head_sha.as_ref() == Some(&snap.head.sha) {
        before.head_seen_at.unwrap_or(now)
    } else {
        now
    };
    before
        .memory
        .last_rerun_at
        .map_or(head_seen_at, |r| r.max(head_seen_at))
}

/// Classifies a snapshot: the one place the rules read the forge's facts.
pub(crate) fn condition(before: &WatchStatus, snap: &Snapshot, ctx: &Context<'_>) -> Condition {
    let new_head = before.head_sha.as_ref() != Some(&snap.head.sha);
    let since = waiting_since(before, snap, ctx.now);
    let head_seen_at = if new_head {
        ctx.now
    } else {
        before.head_seen_at.unwrap_or(ctx.now)
    };
    let agent = Agent {
        logins: ctx.agent_logins,
        emails: ctx.agent_emails,
    };
    let (trust, trust_fresh) = head_trust(before, snap, ctx);
    let pusher = trust.as_ref().and_then(|t| t.pusher.as_deref());
    let appeared_at = trust
        .as_ref()
        .and_then(|t| t.pushed_at)
        .unwrap_or(head_seen_at);
    let judged = checks::judged(
        &snap.checks,
        ctx.policy.checks == crate::model::policy::ChecksScope::Required,
    );
    let updatable = match ctx.policy.update_branch {
        crate::model::policy::UpdateBranch::Never => false,
        crate::model::policy::UpdateBranch::Armed => before.merge.is_armed(),
        crate::model::policy::UpdateBranch::Always => true,
    };
    // A branch update the forge refused or failed with a conflict is a conflict, whatever its
    // mergeability says yet.
    let conflict = snap.has_conflict() || intents::update_failed(before, snap, ctx.intents);
    let freshness = if updatable && snap.is_behind() && !conflict && !snap.draft {
        checks::failing_freshness(&judged)
    } else {
        Vec::new()
    };
    Condition {
        freshness,
        verdict: checks::verdict(
            &judged,
            since,
            ctx.now,
            ctx.policy.no_checks_grace_sec,
            ctx.policy.pending_timeout_sec,
        ),
        conflict,
        mergeability_unknown: snap.mergeable == crate::model::Mergeable::Unknown,
        unresolved_threads: u32::try_from(snap.unresolved_threads().count()).unwrap_or(u32::MAX),
        agent_commit: agent.made(&snap.head)
            || pusher.is_some_and(|p| agent.has_login(p))
            || during_agent_run(before, appeared_at),
        new_head,
        overdue: checks::overdue(&judged, since, ctx.now, ctx.policy.pending_timeout_sec),
        behind: snap.is_behind(),
        trust,
        trust_fresh,
    }
}

/// The logins whose pushes and signatures vouch for a head in this PR.
pub(crate) fn trusted<'a>(ctx: &'a Context<'a>) -> Trusted<'a> {
    Trusted {
        owner: ctx.owner,
        agent: ctx.agent_logins,
        trust: &ctx.policy.trust,
        emails: ctx.agent_emails,
    }
}

/// The verdict on the head's trust: vouched for by the owner, kept from an earlier tick, or
/// judged on this tick's evidence; and whether it needs no new read. What was kept under a
/// trust list that has since narrowed is forgotten.
fn head_trust(
    before: &WatchStatus,
    snap: &Snapshot,
    ctx: &Context<'_>,
) -> (Option<HeadTrust>, bool) {
    let trusted = trusted(ctx);
    let m = &before.memory;
    let narrowed = trust::narrowed(&m.trust_basis, &trusted.basis());
    let kept = m
        .head_trust
        .as_ref()
        .filter(|t| t.sha == snap.head.sha && !narrowed);
    let head = &snap.head.sha;
    if let Some(t) = trust::owner_word(head, &m.vouched_heads, narrowed, kept, ctx.now) {
        return (Some(t), true);
    }
    if let Some(evidence) = ctx.evidence {
        return (
            Some(trust::judge(head, evidence, &trusted, kept, ctx.now)),
            true,
        );
    }
    match kept {
        Some(t) => {
            let settled = !matches!(t.verdict, TrustVerdict::Unlisted);
            (Some(t.clone()), settled)
        }
        None => (None, false),
    }
}

/// Whether the head appeared (was pushed, or first seen) while the command agent ran, or
/// within [`AGENT_RUN_GRACE_SECS`] after its run ended. Never the commit's own dates: anyone
/// can write them.
fn during_agent_run(before: &WatchStatus, appeared_at: Instant) -> bool {
    let Some((start, end)) = before.memory.agent_run else {
        return false;
    };
    start <= appeared_at && appeared_at <= end + Duration::seconds(AGENT_RUN_GRACE_SECS)
}

/// A plan under construction: the stages append to it.
#[derive(Debug)]
pub(crate) struct Draft {
    pub status: WatchStatus,
    pub actions: Vec<Action>,
    pub history: Vec<HistoryEntry>,
    pub seen: Vec<crate::model::plan::SeenMark>,
    /// Recorded intents this read settled.
    pub resolved_intents: Vec<i64>,
    /// The new head is pr-monitor's own branch update (from a recorded intent).
    pub own_update: bool,
    /// A decision waits for the forge's word on the head (see [`Plan::needs_evidence`]).
    pub needs_evidence: bool,
    /// Something held for the agent waits for the head's trust to be judged.
    pub waiting_for_trust: bool,
    now: Instant,
}

impl Draft {
    pub(crate) fn note(&mut self, what: impl Into<String>, why: Option<&str>) {
        self.history.push(HistoryEntry {
            at: self.now,
            what: what.into(),
            why: why.map(str::to_owned),
        });
    }
    pub(crate) fn notify(&mut self, notice: Notice) {
        self.actions.push(Action::Notify(notice));
    }
    /// The finished plan, to be looked at again at `next_tick_at`.
    fn into_plan(self, next_tick_at: Option<Instant>, needs_evidence: bool) -> Plan {
        Plan {
            status: self.status,
            actions: self.actions,
            history: self.history,
            seen: self.seen,
            next_tick_at,
            resolved_intents: self.resolved_intents,
            needs_evidence,
        }
    }
}

/// Decides one tick for `watch` given its fresh `snap`.
pub(crate) fn decide(watch: &Watch, snap: &Snapshot, ctx: &Context<'_>) -> Plan {
    let before = &watch.status;
    let cond = condition(before, snap, ctx);
    let mut d = Draft {
        status: before.clone(),
        actions: Vec::new(),
        history: Vec::new(),
        seen: Vec::new(),
        resolved_intents: Vec::new(),
        own_update: false,
        needs_evidence: false,
        waiting_for_trust: false,
        now: ctx.now,
    };
    keep_trust(&mut d.status.memory, &cond, ctx);
    take_in(&mut d, snap, &cond, ctx);
    intents::reconcile(&mut d, snap, ctx);

    if snap.state != PrState::Open {
        return ended(d, watch, snap, ctx);
    }
    if before.state != PrState::Open {
        d.note("reopened", None);
    }
    d.status.state = PrState::Open;

    remediate::remediate(&mut d, watch, snap, &cond, ctx);
    merge::reconcile(&mut d, watch, snap, &cond, ctx);
    stuck(&mut d, snap, ctx);

    let next_tick_at = Some(next_tick(&d.status, snap, &cond, ctx.policy, ctx.now));
    let needs_evidence = d.needs_evidence;
    d.into_plan(next_tick_at, needs_evidence)
}

/// Remembers whom the trust rests on: heads vouched for under a list that has since lost a
/// login are forgotten; the head's judgement, when this tick has one, is kept.
fn keep_trust(m: &mut crate::model::watch::Memory, cond: &Condition, ctx: &Context<'_>) {
    let basis = trusted(ctx).basis();
    if trust::narrowed(&m.trust_basis, &basis) {
        m.vouched_heads.clear();
        m.head_trust = None;
    }
    m.trust_basis = basis;
    if let Some(t) = &cond.trust {
        m.head_trust = Some(t.clone());
    }
}

/// Takes in what the read says of the PR: its title and branches, the picture `status PR`
/// shows, and a new head (noted with who made it).
fn take_in(d: &mut Draft, snap: &Snapshot, cond: &Condition, ctx: &Context<'_>) {
    d.status.title = Some(snap.title.clone());
    d.status.head_ref = Some(snap.head_ref.clone());
    d.status.base_ref = Some(snap.base_ref.clone());
    d.status.memory.cross_repository = snap.cross_repository;
    d.status.memory.picture = picture(snap, cond, ctx.policy);
    if cond.new_head {
        d.status.head_sha = Some(snap.head.sha.clone());
        d.status.head_seen_at = Some(ctx.now);
        let by = snap
            .head
            .author_login
            .as_deref()
            .or(snap.head.author_email.as_deref())
            .unwrap_or("an unknown author");
        d.note(format!("head {} by {by}", snap.head.sha.short()), None);
    }
}

/// The PR merged or closed: the merge is finished (or disarmed), the pills clear, and a
/// closed PR is looked at again later (it may reopen).
fn ended(mut d: Draft, watch: &Watch, snap: &Snapshot, ctx: &Context<'_>) -> Plan {
    if watch.status.state != snap.state {
        d.note(format!("{} ({})", snap.state.as_str(), snap.url), None);
    }
    merge::finish(&mut d, watch, snap);
    d.status.state = snap.state;
    d.status.pills = crate::model::watch::Pills::default();
    d.status.why = None;
    d.status.memory.fix = None;
    let next_tick_at =
        (snap.state == PrState::Closed).then(|| ctx.now + Duration::seconds(CLOSED_LOOK_SECS));
    d.into_plan(next_tick_at, false)
}

/// What `status PR` shows of the snapshot.
fn picture(snap: &Snapshot, cond: &Condition, policy: &Policy) -> crate::model::watch::Picture {
    let current = checks::newest(&snap.checks);
    crate::model::watch::Picture {
        failed: current
            .iter()
            .filter(|c| c.state == crate::model::CheckState::Failed)
            .map(|c| (c.name.clone(), c.url.clone()))
            .collect(),
        pending: current
            .iter()
            .filter(|c| c.state == crate::model::CheckState::Pending)
            .map(|c| c.name.clone())
            .collect(),
        total: u32::try_from(current.len()).unwrap_or(u32::MAX),
        flakes: snap
            .failed_logs
            .iter()
            .filter_map(|f| match &f.classification {
                crate::model::Classification::Infra { evidence } => {
                    Some((f.name.clone(), evidence.clone()))
                }
                crate::model::Classification::Real => None,
            })
            .collect(),
        unresolved_threads: cond.unresolved_threads,
        review_decision: merge::effective_decision(snap).map(|d| d.as_str().to_owned()),
        mergeable: snap.mergeable.as_str().to_owned(),
        merge_state: snap.merge_state.as_str().to_owned(),
        behind_by: snap.behind_by,
        draft: snap.draft,
        queue: snap.queue_entry.clone(),
        merge_method: merge::method(policy.merge_method, &snap.repo.allowed_methods),
        failed_logs: snap
            .failed_logs
            .iter()
            .map(|f| crate::model::watch::FailedLog {
                name: f.name.clone(),
                tail: crate::model::watch::FailedLog::short_tail(&f.log_tail),
                runner: matches!(f.classification, crate::model::Classification::Infra { .. }),
            })
            .collect(),
    }
}

/// A PR whose head has not moved for `stuck_after_sec` is reported once per head.
fn stuck(d: &mut Draft, snap: &Snapshot, ctx: &Context<'_>) {
    let Some(after) = ctx.policy.stuck_after_sec else {
        return;
    };
    let since = d.status.head_seen_at.unwrap_or(ctx.now);
    let waited = (ctx.now - since).num_seconds();
    if waited <= i64::try_from(after).unwrap_or(i64::MAX)
        || d.status.memory.stuck_reported_for.as_ref() == Some(&snap.head.sha)
    {
        return;
    }
    d.status.memory.stuck_reported_for = Some(snap.head.sha.clone());
    d.note(
        format!(
            "stuck: the head has not moved for {}",
            crate::core::report::hours_minutes(waited)
        ),
        None,
    );
    d.notify(Notice::Stuck { for_secs: waited });
}

/// Seed 000's cadence: `poll_sec` while checks run, a fix is in flight, a failure waits for
/// its log, a merge is armed,
/// mergeability is still being computed, or there was activity in the last two minutes;
/// `idle_poll_sec` otherwise.
pub(crate) fn next_tick(
    status: &WatchStatus,
    snap: &Snapshot,
    cond: &Condition,
    policy: &Policy,
    now: Instant,
) -> Instant {
    let recent = |t: Option<Instant>| {
        t.is_some_and(|t| (now - t).num_seconds().abs() <= ACTIVITY_WINDOW_SECS)
    };
    let active = cond.verdict.in_progress()
        || status.pills.ci == Ci::Fixing
        || status.memory.fix.is_some()
        || status.memory.log_waits > 0
        || status.merge.is_armed()
        || cond.mergeability_unknown
        || status
            .memory
            .head_trust
            .as_ref()
            .is_some_and(|t| t.sha == snap.head.sha && t.verdict == TrustVerdict::Unlisted)
        || recent(snap.head.committed_at)
        || recent(status.head_seen_at)
        || recent(status.memory.agent_activity_at);
    let secs = if active {
        policy.poll_sec
    } else {
        policy.idle_poll_sec
    };
    now + Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX / 2))
}

/// Which armed watches may update their branch now: per (forge, repo, base), the oldest armed
/// open watch that is in line (behind, or already updating), unless it failed its checks —
/// then the next one. `fresh` holds this tick's snapshots by watch id: whether a PR is behind,
/// and its base, come from them where there is one, else from the stored state. So the oldest
/// armed PR is updated on the first tick that sees it behind, and N behind PRs cost N updates.
pub(crate) fn update_turns(
    watches: &[Watch],
    fresh: &std::collections::BTreeMap<i64, &Snapshot>,
) -> Vec<i64> {
    use std::collections::BTreeMap;
    let mut lines: BTreeMap<(String, String), Vec<&Watch>> = BTreeMap::new();
    let behind = |w: &Watch| {
        fresh
            .get(&w.id)
            .map_or(w.status.memory.behind, |s| s.is_behind())
    };
    let in_line = |w: &&Watch| {
        w.status.merge.is_armed()
            && w.status.state == PrState::Open
            && !w.paused
            && (behind(w) || w.status.memory.holds_update_turn)
    };
    for w in watches.iter().filter(in_line) {
        let base = fresh.get(&w.id).map_or_else(
            || w.status.base_ref.clone().unwrap_or_default(),
            |s| s.base_ref.clone(),
        );
        let key = (format!("{}:{}", w.pr.forge.as_str(), w.pr.repo), base);
        lines.entry(key).or_default().push(w);
    }
    lines
        .into_values()
        .filter_map(|mut line| {
            line.sort_by_key(|w| (w.status.merge.armed_at(), w.id));
            line.into_iter()
                .find(|w| w.status.pills.ci == Ci::Off && !w.status.pills.cnf)
                .map(|w| w.id)
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod queue_tests;

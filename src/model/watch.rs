//! A watched PR as pr-monitor remembers it between ticks: identity, the owner's settings, and
//! the state the decision core owns (pills, why, attempts, its memory).

use serde::{Deserialize, Serialize};

use crate::model::{Instant, PrRef, PrState, Sha};

/// The `ci` pill: off, lit (failed checks the owner must look at), or fixing (a fix is with
/// the agent, `ci…`). One state, so it is never both lit and fixing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ci {
    #[default]
    Off,
    Lit,
    Fixing,
}

impl Ci {
    /// From the two flags it is stored and printed as (`ci`, `ci_fixing`); both set reads as
    /// fixing, the state that keeps the fast cadence.
    pub fn from_flags(lit: bool, fixing: bool) -> Self {
        match (lit, fixing) {
            (_, true) => Ci::Fixing,
            (true, false) => Ci::Lit,
            (false, false) => Ci::Off,
        }
    }

    /// The two flags it is stored and printed as: (`ci`, `ci_fixing`).
    pub fn flags(self) -> (bool, bool) {
        (self == Ci::Lit, self == Ci::Fixing)
    }
}

/// The owner-facing signals on a PR, its pills: CI failing, a fix in flight, a conflict, and
/// unanswered review comments. Stored and sent as
/// `{"ci", "ci_fixing", "cnf", "cmt"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "PillFlags", into = "PillFlags")]
pub struct Pills {
    pub ci: Ci,
    /// The PR conflicts with its base.
    pub cnf: bool,
    /// Unresolved review threads.
    pub cmt: u32,
}

/// [`Pills`] as written in JSON: the `ci` state as two flags.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default)]
struct PillFlags {
    ci: bool,
    ci_fixing: bool,
    cnf: bool,
    cmt: u32,
}

impl From<PillFlags> for Pills {
    fn from(f: PillFlags) -> Self {
        Pills {
            ci: Ci::from_flags(f.ci, f.ci_fixing),
            cnf: f.cnf,
            cmt: f.cmt,
        }
    }
}

impl From<Pills> for PillFlags {
    fn from(p: Pills) -> Self {
        let (ci, ci_fixing) = p.ci.flags();
        PillFlags {
            ci,
            ci_fixing,
            cnf: p.cnf,
            cmt: p.cmt,
        }
    }
}

impl Pills {
    /// The lit pills as words: `ci`, `ci…`, `cnf`, `cmt:2`.
    pub fn words(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.ci {
            Ci::Lit => out.push("ci".to_owned()),
            Ci::Fixing => out.push("ci…".to_owned()),
            Ci::Off => {}
        }
        if self.cnf {
            out.push("cnf".to_owned());
        }
        if self.cmt > 0 {
            out.push(format!("cmt:{}", self.cmt));
        }
        out
    }
}

/// What the watcher last did about a failure, and why: each variant one row of the reasons
/// `status` and the page explain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    NotAgentCommit,
    AutoFixOff,
    MaxAttempts,
    NoNewCommit,
    SameFailure,
    InfraRerun,
    InfraAgain,
    FixSent,
    FixAsked,
    /// The head is not vouched for: nothing on it reaches the agent.
    UntrustedHead,
}

impl Why {
    pub fn as_str(self) -> &'static str {
        match self {
            Why::NotAgentCommit => "not_agent_commit",
            Why::AutoFixOff => "auto_fix_off",
            Why::MaxAttempts => "max_attempts",
            Why::NoNewCommit => "no_new_commit",
            Why::SameFailure => "same_failure",
            Why::InfraRerun => "infra_rerun",
            Why::InfraAgain => "infra_again",
            Why::FixSent => "fix_sent",
            Why::FixAsked => "fix_asked",
            Why::UntrustedHead => "untrusted_head",
        }
    }

    /// Every why, in the contract's order.
    pub const ALL: [Why; 10] = [
        Why::NotAgentCommit,
        Why::AutoFixOff,
        Why::MaxAttempts,
        Why::NoNewCommit,
        Why::SameFailure,
        Why::InfraRerun,
        Why::InfraAgain,
        Why::FixSent,
        Why::FixAsked,
        Why::UntrustedHead,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Why::ALL.into_iter().find(|w| w.as_str() == s)
    }

    /// A few words for one line of `status`: what happened and whose move it is.
    pub fn words(self, attempts: u32) -> String {
        match self {
            Why::NotAgentCommit => "yours: not the agent's commit".into(),
            Why::AutoFixOff => "yours: auto-fix is off".into(),
            Why::MaxAttempts => format!("yours: auto-fix gave up after {attempts}"),
            Why::NoNewCommit => "yours: the fix pushed nothing".into(),
            Why::SameFailure => "yours: same failure after a fix".into(),
            Why::InfraRerun => "re-ran for runner reasons".into(),
            Why::InfraAgain => "yours: runner failed again".into(),
            Why::FixSent => "agent is fixing it".into(),
            Why::FixAsked => "agent is fixing it (asked)".into(),
            Why::UntrustedHead => "yours: the head is not trusted".into(),
        }
    }

    /// The sentence `status` and the status page show for it.
    pub fn explain(self, attempts: u32) -> String {
        match self {
            Why::NotAgentCommit => {
                "The head commit isn't one the agent made, so auto-fix leaves it to you.".into()
            }
            Why::AutoFixOff => "Auto-fix is off for this PR.".into(),
            Why::MaxAttempts => format!("Auto-fix stopped after {attempts} attempts."),
            Why::NoNewCommit => "The last fix pushed no new commit.".into(),
            Why::SameFailure => "The same failure came back after a fix.".into(),
            Why::InfraRerun => "The checks failed for runner reasons, so they were re-run.".into(),
            Why::InfraAgain => "The checks failed for runner reasons again after a re-run.".into(),
            Why::FixSent => "Auto-fix sent the failure to the agent.".into(),
            Why::FixAsked => "Fix it sent the failure to the agent.".into(),
            Why::UntrustedHead => {
                "No trusted login pushed the head (nor signed it, nor did the owner vouch for it), so nothing on it reaches the agent.".into()
            }
        }
    }
}

/// How an armed merge is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeVia {
    /// The forge's own auto-merge, re-armed every tick.
    AutoMerge,
    /// pr-monitor merges once itself when the PR is ready.
    #[serde(rename = "self")]
    SelfMerge,
}

impl MergeVia {
    pub fn as_str(self) -> &'static str {
        match self {
            MergeVia::AutoMerge => "auto_merge",
            MergeVia::SelfMerge => "self",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto_merge" => Some(MergeVia::AutoMerge),
            "self" => Some(MergeVia::SelfMerge),
            _ => None,
        }
    }
}

/// The owner's merge-when-ready, as far as it got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Merge {
    /// Not armed.
    #[default]
    Disarmed,
    /// Armed by the owner at `at` (its place in line to update the branch); `via` once a tick
    /// chose how the merge is carried out (none yet: pending).
    Armed { at: Instant, via: Option<MergeVia> },
    /// No longer armed: the PR merged, and this is how (kept for history).
    Merged { via: MergeVia },
}

impl Merge {
    pub fn is_armed(self) -> bool {
        matches!(self, Merge::Armed { .. })
    }

    /// When the owner armed it, while armed.
    pub fn armed_at(self) -> Option<Instant> {
        match self {
            Merge::Armed { at, .. } => Some(at),
            Merge::Disarmed | Merge::Merged { .. } => None,
        }
    }

    /// How the merge is (armed) or was (merged) carried out.
    pub fn via(self) -> Option<MergeVia> {
        match self {
            Merge::Armed { via, .. } => via,
            Merge::Merged { via } => Some(via),
            Merge::Disarmed => None,
        }
    }

    /// An armed merge carried out `via`; any other state is left as it is.
    pub fn choose(&mut self, chosen: MergeVia) {
        if let Merge::Armed { via, .. } = self {
            *via = Some(chosen);
        }
    }

    /// The PR merged: an armed merge whose way was chosen is kept as how it merged; an armed
    /// one whose way was not is disarmed.
    #[must_use]
    pub fn merged(self) -> Self {
        match self {
            Merge::Armed { via: Some(via), .. } | Merge::Merged { via } => Merge::Merged { via },
            Merge::Armed { via: None, .. } | Merge::Disarmed => Merge::Disarmed,
        }
    }

    /// From its stored columns (`merge_armed`, `merge_via`, `armed_at`). An armed row without
    /// a readable `armed_at` counts as armed at `fallback_at` (when the PR was first watched).
    pub fn from_columns(
        armed: bool,
        via: Option<MergeVia>,
        at: Option<Instant>,
        fallback_at: Instant,
    ) -> Self {
        match (armed, via) {
            (true, via) => Merge::Armed {
                at: at.unwrap_or(fallback_at),
                via,
            },
            (false, Some(via)) => Merge::Merged { via },
            (false, None) => Merge::Disarmed,
        }
    }

    /// Its stored columns: (`merge_armed`, `merge_via`, `armed_at`).
    pub fn columns(self) -> (bool, Option<MergeVia>, Option<Instant>) {
        (self.is_armed(), self.via(), self.armed_at())
    }
}

/// What the last tick saw of the PR, for `status PR`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Picture {
    /// Failed checks: name and link.
    pub failed: Vec<(String, Option<String>)>,
    pub pending: Vec<String>,
    /// Every current check on the head, whatever its state.
    pub total: u32,
    /// Failures classified as infrastructure: name and the evidence.
    pub flakes: Vec<(String, String)>,
    pub unresolved_threads: u32,
    /// The latest opinion per reviewer: APPROVED or CHANGES_REQUESTED.
    pub review_decision: Option<String>,
    pub mergeable: String,
    pub merge_state: String,
    pub behind_by: Option<u64>,
    pub draft: bool,
    /// The PR's entry in the merge queue or train.
    pub queue: Option<crate::model::QueueEntry>,
    /// The method a merge would use (the policy's, among those the repository allows).
    pub merge_method: Option<crate::model::MergeMethod>,
    /// The failed checks' logs as `status PR` and the page show them: a short tail, and
    /// whether the failure is the runner's (infrastructure).
    pub failed_logs: Vec<FailedLog>,
}

/// A failed check's log, short, for `status PR` and the page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FailedLog {
    pub name: String,
    /// The last lines of the cleaned, masked tail (at most [`FailedLog::LINES`] lines and
    /// [`FailedLog::BYTES`] bytes).
    pub tail: String,
    /// An infrastructure (runner) failure: shown with the `(runner)` mark.
    pub runner: bool,
}

impl FailedLog {
    pub const LINES: usize = 6;
    pub const BYTES: usize = 600;

    /// The short form of a log tail: its last lines, cut from the front to the byte cap.
    pub fn short_tail(tail: &str) -> String {
        let lines: Vec<&str> = tail.trim_end().lines().collect();
        let mut out = lines[lines.len().saturating_sub(Self::LINES)..].join("\n");
        while out.len() > Self::BYTES {
            let cut = out
                .char_indices()
                .map(|(i, _)| i)
                .find(|i| out.len() - i <= Self::BYTES)
                .unwrap_or(out.len());
            out = out[cut..].to_owned();
        }
        out
    }
}

/// A fix request the agent is working on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixInFlight {
    pub message_id: String,
    /// The head the failure was on: a fix is a new head.
    pub head_sha: Sha,
    pub sent_at: Instant,
    /// When the agent said it was done (`inbox done`), or its command run ended.
    pub done_at: Option<Instant>,
}

/// The decision core's memory of a PR beyond what `status` shows, stored as JSON. Every field
/// has a default so older rows read cleanly as the struct grows.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts the core remembers, each with its own lifetime"
)]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Memory {
    /// The failure already acted on (head + failed jobs), so a tick that finds nothing new
    /// does nothing and the same failure on the same head is never sent twice.
    pub handled_failure: Option<String>,
    /// The fingerprint (failed names + normalised log tails) of the failure last sent for a fix.
    pub last_fix_fingerprint: Option<String>,
    pub fix: Option<FixInFlight>,
    /// Review feedback with the agent, until the tick after it is marked done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback_sent: Option<crate::model::answers::FeedbackSent>,
    /// The failure (as `handled_failure` keys it) whose fix waits while review feedback is
    /// with the agent (one writer per branch): judged again once the feedback is answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_held_for: Option<String>,
    /// `head:check` keys re-run once for infrastructure reasons.
    pub infra_reruns: Vec<String>,
    /// When pr-monitor last re-ran checks: pending timeouts count from then.
    pub last_rerun_at: Option<Instant>,
    /// The head a conflict message was sent to the agent for.
    pub conflict_sent_for: Option<Sha>,
    /// The last agent message or agent run (activity keeps the fast cadence).
    pub agent_activity_at: Option<Instant>,
    /// The last command-agent run (start, end): a head committed while it ran, or within
    /// [`crate::core::decide::AGENT_RUN_GRACE_SECS`] after, is the agent's.
    pub agent_run: Option<(Instant, Instant)>,
    /// The head branch lives in a fork: its name means nothing in the base repository, so it
    /// is not compared there.
    pub cross_repository: bool,
    /// The branch was behind its base at the last tick.
    pub behind: bool,
    /// The head pr-monitor asked the forge to update (never asked twice for one head).
    pub update_requested_for: Option<Sha>,
    /// The head whose update the forge refused with a conflict (GitHub) or tried in the
    /// background and failed (GitLab's rebase ending in `merge_error`): it conflicts with its
    /// base until it moves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_failed_for: Option<Sha>,
    /// pr-monitor updated this branch and waits for it to merge: it holds its base's turn.
    pub holds_update_turn: bool,
    /// The head pr-monitor tried to merge itself (never merged blind, never twice).
    pub merge_attempted_for: Option<Sha>,
    /// pr-monitor enabled the forge's auto-merge at least once.
    pub auto_merge_enabled_once: bool,
    /// The forge refused to turn its auto-merge on for this head: not asked again until the
    /// head or the settings change (see [`crate::core::decide::merge`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arm_refused: Option<ArmRefusal>,
    /// Consecutive ticks that ended in an error.
    pub error_streak: u32,
    /// What the last tick saw.
    pub picture: Picture,
    /// The PR was reported stuck (once per head).
    pub stuck_reported_for: Option<Sha>,
    /// The head last seen waiting in the forge's merge queue or merge train.
    pub queued_head: Option<Sha>,
    /// The head the queue let go: never queued again; a new head or the owner's
    /// `merge --when-ready` lifts this.
    pub queue_left_head: Option<Sha>,
    /// When the owner last asked for the merge again (`merge --when-ready`): a queue removal
    /// the forge's timeline records before it is already answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_asked_at: Option<Instant>,
    /// Ticks in a row that waited for a failed check's log the forge did not answer for.
    pub log_waits: u32,
    /// Ticks in a row that waited to tell why the queue let the PR go, its merge group's
    /// checks unread.
    pub queue_exit_waits: u32,
    /// The run that pushed this PR past the forge's rate-limit reset, and why; its next tick
    /// clears it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_deferral: Option<BudgetDeferral>,
    /// How many messages went to the agent about this PR (the `done` record at merge).
    #[serde(skip_serializing_if = "crate::model::watch::is_zero")]
    pub agent_messages_sent: u32,
    /// When each message of the last hour went to the agent (`agent_messages_per_hour`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agent_messages: Vec<Instant>,
    /// The owner was told that the hourly cap holds work back (once until a message goes).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cap_told: bool,
    /// Why pr-monitor paused the watch itself (`token_login_changed`); `None` when the owner
    /// paused it, or it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_reason: Option<String>,
    /// The verdict on the current head's trust, once judged (see [`crate::core::trust`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_trust: Option<crate::model::trust::HeadTrust>,
    /// Heads the owner vouched for (`fix --head`, `watch add --trust-head`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vouched_heads: Vec<Sha>,
    /// The trusted logins (besides the owner) the verdict and the vouched heads were kept
    /// under: when one of them leaves the list, both are forgotten.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trust_basis: Vec<String>,
    /// The agent's checkout of this PR (`watch add PR --checkout PATH`), an absolute path:
    /// `status PR` says when it is at another commit than the head. Read, never written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkout: Option<String>,
}

impl Memory {
    /// A message went to the agent at `at`: the agent is active, the message counts toward
    /// the hourly cap and the `done` record, and a cap that holds work back may be told again.
    pub fn agent_message_sent(&mut self, at: Instant) {
        self.agent_activity_at = Some(at);
        self.agent_messages.push(at);
        self.agent_messages_sent = self.agent_messages_sent.saturating_add(1);
        self.cap_told = false;
    }
}

/// Whether a count is zero (a field left out of the stored JSON then).
pub fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The forge's refusal to turn its auto-merge on, as remembered: for which head, under which
/// settings, and whether it said there is nothing to wait for (GitHub's "clean status"), which
/// holds only while nothing blocks the PR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArmRefusal {
    pub head: Sha,
    /// The base, whether the repository allows auto-merge, and the merge method asked for.
    pub settings: String,
    pub clean: bool,
}

/// The `paused_reason` of a watch paused because its forge's token changed hands.
pub const TOKEN_LOGIN_CHANGED: &str = "token_login_changed";

/// An idle PR pushed past the forge's rate-limit reset because the budget left would not
/// cover every due PR (see [`crate::core::budget`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetDeferral {
    pub at: Instant,
    pub until: Instant,
    pub why: String,
}

/// What the decision core reads and writes about a PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchStatus {
    pub state: PrState,
    pub title: Option<String>,
    pub head_sha: Option<Sha>,
    /// When pr-monitor first saw the current head.
    pub head_seen_at: Option<Instant>,
    pub head_ref: Option<String>,
    pub base_ref: Option<String>,
    pub pills: Pills,
    pub why: Option<Why>,
    pub attempts: u32,
    pub merge: Merge,
    pub memory: Memory,
}

impl WatchStatus {
    /// How the current head is vouched for (`push by fixer-bot`, `signatures`, `vouched by the
    /// owner`), or `None` when it is not (yet).
    pub fn trusted_by(&self) -> Option<String> {
        crate::model::trust::trusted_by(
            self.head_sha.as_ref(),
            &self.memory.vouched_heads,
            self.memory.head_trust.as_ref(),
        )
    }

    /// Who pushed the current head and why it is (not) trusted, in words, once judged:
    /// `pushed by fixer-bot · trusted: push by fixer-bot`.
    pub fn trust_words(&self) -> Option<String> {
        let head = self.head_sha.as_ref()?;
        let kept = self.memory.head_trust.as_ref().filter(|t| &t.sha == head);
        let pusher = kept.and_then(|t| t.pusher.as_deref()).map_or_else(
            || "pusher not listed".to_owned(),
            |p| format!("pushed by {p}"),
        );
        if let Some(by) = self.trusted_by() {
            return Some(format!("{pusher} · trusted: {by}"));
        }
        match &kept?.verdict {
            crate::model::trust::TrustVerdict::Untrusted { reason } => {
                Some(format!("{pusher} · not trusted: {reason}"))
            }
            crate::model::trust::TrustVerdict::Unlisted => Some(format!(
                "{pusher} · not judged yet: the forge lists no push of it yet"
            )),
            crate::model::trust::TrustVerdict::Trusted(_) => None,
        }
    }
}

impl Default for WatchStatus {
    fn default() -> Self {
        WatchStatus {
            state: PrState::Open,
            title: None,
            head_sha: None,
            head_seen_at: None,
            head_ref: None,
            base_ref: None,
            pills: Pills::default(),
            why: None,
            attempts: 0,
            merge: Merge::Disarmed,
            memory: Memory::default(),
        }
    }
}

/// A watched PR, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    pub id: i64,
    pub pr: PrRef,
    pub job: Option<String>,
    pub agent: Option<String>,
    /// `watch add --auto-fix on|off`: overrides the policy's auto_fix.
    pub auto_fix: Option<bool>,
    pub paused: bool,
    pub added_at: Instant,
    pub status: WatchStatus,
    pub next_tick_at: Option<Instant>,
    pub last_tick_at: Option<Instant>,
    pub last_error: Option<String>,
    /// What in the stored row could not be read (a corrupt `memory`, an unknown forge or
    /// state). Such a watch is shown but never ticked: its tick fails with this in
    /// `last_error`, and the row is left as it is.
    pub unreadable: Option<String>,
    /// A digest of the stored row as it was read, its tick times and lease aside (`None` for a
    /// watch not read from the database): a settled decision holds only over the row it was
    /// made on (see [`crate::core::decide::settled_until`]).
    pub row_digest: Option<RowDigest>,
}

/// The digest of a watch row (see [`Watch::row_digest`]): of the whole row, and of the
/// owner's settings alone (the columns before those a tick records), from which the store
/// tells the digest of the row a tick's record leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowDigest {
    pub row: u64,
    pub settings: u64,
}

impl Watch {
    /// What the owner's settings say now that they did not say in `before`, in words:
    /// `agent fixer`, `job nightly`, `auto-fix off`, `merge armed`, `watched again`.
    pub fn changes_from(&self, before: &Watch) -> Vec<String> {
        let mut out = Vec::new();
        if self.job != before.job {
            out.push(format!("job {}", self.job.as_deref().unwrap_or("none")));
        }
        if self.agent != before.agent {
            out.push(format!("agent {}", self.agent.as_deref().unwrap_or("none")));
        }
        if self.auto_fix != before.auto_fix {
            out.push(match self.auto_fix {
                Some(true) => "auto-fix on".to_owned(),
                Some(false) => "auto-fix off".to_owned(),
                None => "auto-fix as the policy says".to_owned(),
            });
        }
        if self.status.merge.is_armed() && !before.status.merge.is_armed() {
            out.push("merge armed".to_owned());
        }
        if self.status.state == PrState::Open && before.status.state != PrState::Open {
            out.push("watched again".to_owned());
        }
        out
    }
}

/// One row of the audit history: when, what, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub at: Instant,
    pub what: String,
    pub why: Option<String>,
}

#[cfg(test)]
mod tests;

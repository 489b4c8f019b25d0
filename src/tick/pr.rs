//! One PR's tick: its inputs besides the snapshot ([`PrInputs`]), then detect → decide →
//! apply, and the outcome and record to write, whatever its read gave.

use std::collections::BTreeMap;

use super::detect;
use super::execute::{self, Env};
use super::failure::{TickFailure, error_notice, failed_tick};
use super::outcomes::PrOutcome;
use super::read::{self, Read};
use super::run::RunOptions;
use crate::app::App;
use crate::config::Policy;
use crate::core::decide::{self, Context, Plan};
use crate::model::watch::Watch;
use crate::model::{Login, Snapshot};
use crate::store::TickRecord;

/// Detect → decide → apply for one PR of a chunk, whatever its read gave: its outcome and the
/// record to write.
pub(super) fn act(
    app: &mut App,
    watch: Watch,
    read: Result<Read, TickFailure>,
    chunk: &ChunkInputs,
    opts: &RunOptions,
) -> (PrOutcome, TickRecord) {
    let now = app.now;
    let cut_off = read.as_ref().is_err_and(TickFailure::cuts_off);
    let ticked = read.and_then(|read| tick_one(app, &watch, read, chunk, opts));
    let (plan, error, mut record) = match ticked {
        Ok((plan, error, record)) => (Some(plan), error, record),
        Err(e) => {
            let policy = app.policy_for(&watch);
            let (record, message) = failed_tick(&watch, &e, now, &policy);
            (None, Some(message), record)
        }
    };
    // A tick ends any deferral for budget: the PR had its turn.
    record.status.memory.budget_deferral = None;
    if decide::keeps_erroring(&record.status) {
        match error_notice(app, &watch, record.last_error.as_deref().unwrap_or("")) {
            Ok(messages) => record.outbox.extend(messages),
            Err(e) => {
                tracing::warn!(target: "pr_monitor::tick", pr = %watch.pr.url(), error = %e, "the error notice could not be written");
            }
        }
    }
    (
        PrOutcome {
            watch,
            plan,
            error,
            cut_off,
        },
        record,
    )
}

/// Detect → decide on a PR's read. A kept read whose plan acts, or whose PR has a recorded
/// write not yet reconciled, is read again in full and decided anew, so no action or
/// reconciliation ever rests on a kept read.
fn detect_and_decide(
    app: &mut App,
    watch: &Watch,
    read: Read,
    ctx: &Context<'_>,
    ahead: &BTreeMap<detect::LogKey, detect::KeptLog>,
    opts: &RunOptions,
) -> Result<(Snapshot, Plan), TickFailure> {
    // The forge's word on a head is read at most once per tick, also when a kept read is
    // read again in full.
    let mut read_evidence: Option<(crate::model::Sha, crate::model::trust::Evidence)> = None;
    let mut decided = |app: &mut App, mut snap: Snapshot| {
        let forge = app
            .forges
            .get(watch.pr.forge, &app.config)
            .map_err(TickFailure::Setup)?;
        let policy = ctx.policy;
        let mut logs = detect::Overlay {
            ahead,
            store: &mut app.store,
        };
        detect::failed_logs(
            forge,
            &mut logs,
            &mut snap,
            policy,
            !opts.dry_run,
            &detect::Notes::new(),
        );
        detect::queue_failures(
            forge,
            &mut logs,
            &mut snap,
            policy,
            &watch.status,
            !opts.dry_run,
        );
        let plan = decide::decide(watch, &snap, ctx);
        if !plan.needs_evidence {
            return Ok((snap, plan));
        }
        // Something would reach the agent: what the forge says of the head's push (and, when
        // no trusted push settles it, of its commits' signatures) decides whether it may.
        let evidence = match read_evidence.take() {
            Some((sha, evidence)) if sha == snap.head.sha => evidence,
            _ => {
                let pushes = forge.pushes(&snap)?;
                let commits = if crate::core::trust::push_settles(
                    &snap.head.sha,
                    &pushes,
                    &decide::trusted(ctx),
                ) {
                    None
                } else {
                    forge.signed_commits(&snap)?
                };
                crate::model::trust::Evidence { pushes, commits }
            }
        };
        let judged = Context {
            evidence: Some(&evidence),
            ..ctx.clone()
        };
        let plan = decide::decide(watch, &snap, &judged);
        read_evidence = Some((snap.head.sha.clone(), evidence));
        Ok((snap, plan))
    };
    let (snap, plan) = decided(app, read.snapshot)?;
    // A recorded write not yet reconciled is reconciled against a fresh read too.
    if !read.reused
        || (plan.actions.is_empty() && !decide::intents::wants_fresh_read(ctx.intents, ctx.now))
    {
        return Ok((snap, plan));
    }
    let fresh = read::reread(app, watch)?;
    decided(app, fresh)
}

/// Detect → decide → apply for one PR whose snapshot was read: its plan, the error that left
/// its actions incomplete, and the record to write; or why it failed before it could act.
fn tick_one(
    app: &mut App,
    watch: &Watch,
    read: Read,
    chunk: &ChunkInputs,
    opts: &RunOptions,
) -> Result<(Plan, Option<String>, TickRecord), TickFailure> {
    let now = app.now;
    let policy = app.policy_for(watch);
    let update_turn = chunk.turns.contains(&watch.id);
    let ahead = &chunk.logs;
    let PrInputs {
        agent_logins,
        agent_emails,
        owner,
        commits_as,
        seen,
        intents,
    } = pr_inputs(app, watch, &policy, chunk)?;
    let ctx = Context {
        policy: &policy,
        now,
        agent_logins: &agent_logins,
        agent_emails: &agent_emails,
        evidence: None,
        owner: &owner,
        commits_as: &commits_as,
        update_turn,
        seen: &seen,
        fix_asked: opts.fix_asked,
        intents: &intents,
        held: crate::secrets::mask,
    };
    let (snap, mut plan) = detect_and_decide(app, watch, read, &ctx, ahead, opts)?;
    let forge = app
        .forges
        .get(watch.pr.forge, &app.config)
        .map_err(TickFailure::Setup)?;
    let env = Env {
        watch_id: watch.id,
        config: &app.config,
        policy: &policy,
        owner: &owner,
        now,
        dry_run: opts.dry_run,
    };
    let mut writes = execute::Writes {
        forge,
        intents: &mut app.store,
    };
    let applied = execute::apply(&mut writes, &snap, &mut plan, &env);
    let mut history = plan.history.clone();
    history.extend(applied.history);
    decide::after_acting(
        &mut plan,
        applied.error.as_deref(),
        &policy,
        now,
        &mut history,
    );
    plan.history.clone_from(&history);
    let record = TickRecord {
        status: plan.status.clone(),
        next_tick_at: plan.next_tick_at,
        last_tick_at: now,
        last_error: applied.error.clone(),
        history,
        seen: plan.seen.clone(),
        outbox: applied.outbox,
        resolved_intents: plan.resolved_intents.clone(),
    };
    Ok((plan, applied.error, record))
}

/// What a PR's tick needs besides its snapshot. A failed read of any of these fails that PR's
/// tick: guessing (nothing seen, no owner, no agent logins) would re-send or mis-route.
struct PrInputs {
    agent_logins: Vec<Login>,
    agent_emails: Vec<String>,
    owner: String,
    /// How the forge's commits for the owner name it (to tell a recorded update's head).
    commits_as: crate::model::viewer::Committer,
    seen: BTreeMap<(String, String), String>,
    /// The PR's recorded intents no read has reconciled yet.
    intents: Vec<crate::model::intent::Intent>,
}

/// What a chunk's PRs' ticks read of the database besides their watches and reads, each kind
/// for the whole chunk in one statement: whose turn it is to update a behind branch, what each
/// PR already handled, its open intents, and the failed checks' logs kept (with those read
/// ahead this run over them).
#[derive(Debug)]
pub(super) struct ChunkInputs {
    pub turns: Vec<i64>,
    /// By the PR's address; an error fails each PR's tick.
    pub seen: Result<BTreeMap<String, crate::store::Seen>, String>,
    pub intents: Result<BTreeMap<i64, Vec<crate::model::intent::Intent>>, String>,
    pub logs: BTreeMap<detect::LogKey, detect::KeptLog>,
}

impl ChunkInputs {
    /// Loads the inputs of `watches` (those whose stored state reads) and their `reads`;
    /// `ahead` are the logs read ahead this run.
    pub(super) fn load(
        app: &App,
        watches: &[&Watch],
        reads: &[Result<Read, TickFailure>],
        turns: Vec<i64>,
        mut ahead: BTreeMap<detect::LogKey, detect::KeptLog>,
    ) -> Self {
        let readable: Vec<&Watch> = watches
            .iter()
            .copied()
            .filter(|w| w.unreadable.is_none())
            .collect();
        let prs: Vec<&crate::model::PrRef> = readable.iter().map(|w| &w.pr).collect();
        let ids: Vec<i64> = readable.iter().map(|w| w.id).collect();
        let keys: Vec<detect::LogKey> = reads
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .flat_map(|r| detect::log_keys(&r.snapshot))
            .filter(|k| !ahead.contains_key(k))
            .collect();
        // A cache: logs it cannot give are looked up again, one by one, when they are needed.
        if !keys.is_empty() {
            for (key, log) in app.store.cached_logs(&keys).unwrap_or_default() {
                ahead.entry(key).or_insert(detect::KeptLog {
                    tail: log.0,
                    classification: log.1,
                    unreadable: None,
                });
            }
        }
        let text = |e: anyhow::Error| format!("{e:#}");
        ChunkInputs {
            turns,
            seen: if prs.is_empty() {
                Ok(BTreeMap::new())
            } else {
                app.store.seen_of(&prs).map_err(text)
            },
            intents: if ids.is_empty() {
                Ok(BTreeMap::new())
            } else {
                app.store.open_intents_of(&ids).map_err(text)
            },
            logs: ahead,
        }
    }
}

fn pr_inputs(
    app: &mut App,
    watch: &Watch,
    policy: &Policy,
    chunk: &ChunkInputs,
) -> Result<PrInputs, TickFailure> {
    if let Some(damage) = &watch.unreadable {
        return Err(TickFailure::Damaged(format!(
            "the stored state of this PR cannot be read ({damage}); it is left as it is: \
             `watch rm` then `watch add` starts it afresh"
        )));
    }
    let (agent_logins, agent_emails) = match policy.agent.as_deref() {
        Some(name) => {
            let agent = app.config.agent(name).map_err(TickFailure::Setup)?;
            (
                agent
                    .logins
                    .iter()
                    .map(|l| Login::new(l.as_str()))
                    .collect(),
                agent.emails.clone(),
            )
        }
        None => (Vec::new(), Vec::new()),
    };
    let intents = match &chunk.intents {
        Ok(by_watch) => by_watch.get(&watch.id).cloned().unwrap_or_default(),
        Err(e) => {
            return Err(TickFailure::Store(anyhow::anyhow!(
                "cannot read the recorded intents: {e}"
            )));
        }
    };
    // The owner's login matters only where an agent may be written to, or where a recorded
    // branch update must be told from someone else's push.
    let updating = intents
        .iter()
        .any(|i| i.kind == crate::model::intent::IntentKind::UpdateBranch);
    let viewer = if policy.agent.is_some() || updating {
        app.viewer(watch.pr.forge)?
    } else {
        crate::model::viewer::Viewer::by_login("")
    };
    let seen = match &chunk.seen {
        Ok(by_pr) => by_pr.get(&watch.pr.url()).cloned().unwrap_or_default(),
        Err(e) => {
            return Err(TickFailure::Store(anyhow::anyhow!(
                "cannot read what was already handled: {e}"
            )));
        }
    };
    Ok(PrInputs {
        agent_logins,
        agent_emails,
        owner: viewer.login,
        commits_as: viewer.commits_as,
        seen,
        intents,
    })
}

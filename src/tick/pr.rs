//! One PR's tick: its inputs besides the snapshot ([`PrInputs`]), then detect → decide →
//! apply, and the outcome and record to write, whatever its read gave.

use std::collections::BTreeMap;

use super::ahead::{self, PrAhead};
use super::detect;
use super::execute::{self, Env};
use super::failure::{TickFailure, error_notice, failed_tick, log_failure};
use super::inputs::{ChunkLoads, PrInputs, pr_inputs};
use super::outcomes::PrOutcome;
use super::read::{self, Read};
use super::run::{RunOptions, stopped};
use super::settle::{self, Settlement};
use crate::app::App;
use crate::config::Policy;
use crate::core::decide::{self, Context, Plan};
use crate::forge::ForgeError;
use crate::model::trust::Evidence;
use crate::model::watch::Watch;
use crate::model::{Sha, Snapshot};
use crate::store::{Lease, Settled, TickRecord};

/// One PR acted on: its outcome, the record to write, and what to keep beside its kept read.
pub(super) struct Acted {
    pub(super) outcome: PrOutcome,
    pub(super) record: TickRecord,
    pub(super) settlement: Option<Settlement>,
}

/// One PR of a chunk after its decision: acted on already (nothing to apply, or it failed),
/// or decided, its plan still to apply.
pub(super) enum Step {
    Acted(Box<Acted>),
    Decided(Box<Decided>),
}

/// A PR decided on its read, its plan not yet applied.
pub(super) struct Decided {
    watch: Watch,
    judged: Judged,
}

/// What applying a PR's decision needs besides its watch.
struct Judged {
    policy: Policy,
    /// The inputs it was decided on, and whether it was the PR's turn to update its branch.
    inputs: (PrInputs, bool),
    decision: Decision,
    /// The kept read it was decided on (its fingerprint as kept, and what was settled on it).
    kept: Option<(String, Option<Settled>)>,
    /// The digest of the PR's context (see [`settle::Context`]).
    context: u64,
}

impl Decided {
    /// The watch's id, the snapshot decided on and the method of the auto-merge its plan
    /// turns on, when that is the first thing the plan asks of the forge.
    pub(super) fn arming(&self) -> Option<(i64, &Snapshot, crate::model::MergeMethod)> {
        let decision = &self.judged.decision;
        let method = crate::model::plan::arms_first(&decision.plan.actions)?;
        Some((self.watch.id, &decision.snap, method))
    }
}

/// Detect → decide for one PR of a chunk, whatever its read gave: acted on already when
/// nothing is left to apply or it failed, else decided.
pub(super) fn decide(
    app: &mut App,
    watch: Watch,
    (read, ahead): (Result<Read, TickFailure>, PrAhead),
    chunk: &mut ChunkInputs,
    opts: &RunOptions,
) -> Step {
    let cut_off = read.as_ref().is_err_and(TickFailure::cuts_off);
    match read.and_then(|read| decide_one(app, &watch, (read, ahead), chunk, opts)) {
        Ok(Decide::Ticked(t)) => Step::Acted(Box::new(acted(app, watch, Ok(*t), cut_off, opts))),
        Ok(Decide::Decided(judged)) => Step::Decided(Box::new(Decided {
            watch,
            judged: *judged,
        })),
        Err(e) => Step::Acted(Box::new(acted(app, watch, Err(e), cut_off, opts))),
    }
}

/// Applies a decided PR's plan: `armed` is the answer to the arming it asks first, when that
/// was asked together with the chunk's others (its intent recorded then).
pub(super) fn act(
    app: &mut App,
    step: Step,
    armed: Option<crate::model::outcome::Outcome>,
    opts: &RunOptions,
) -> Acted {
    match step {
        Step::Acted(acted) => *acted,
        Step::Decided(d) => {
            let Decided { watch, judged } = *d;
            let ticked = finish_one(app, &watch, judged, armed, opts);
            acted(app, watch, ticked, false, opts)
        }
    }
}

/// A PR's outcome and record, whatever its tick gave.
fn acted(
    app: &mut App,
    watch: Watch,
    ticked: Result<Ticked, TickFailure>,
    cut_off: bool,
    opts: &RunOptions,
) -> Acted {
    let now = app.now;
    let (plan, error, mut record, settlement) = match ticked {
        Ok(t) => (Some(t.plan), t.error, t.record, t.settlement),
        Err(e) => {
            let policy = app.policy_for(&watch);
            let (record, message) = failed_tick(&watch, &e, now, &policy);
            if !opts.fix_asked {
                log_failure(&watch, &message);
            }
            (None, Some(message), record, None)
        }
    };
    had_its_turn(&mut record);
    if decide::keeps_erroring(&record.status) {
        match error_notice(app, &watch, record.last_error.as_deref().unwrap_or("")) {
            Ok(messages) => record.outbox.extend(messages),
            Err(e) => {
                tracing::warn!(target: "pr_monitor::tick", pr = %watch.pr.url(), error = %e, "the error notice could not be written");
            }
        }
    }
    Acted {
        outcome: PrOutcome {
            watch,
            plan,
            error,
            cut_off,
        },
        record,
        settlement,
    }
}

/// A tick ends any deferral for budget: the PR had its turn.
fn had_its_turn(record: &mut TickRecord) {
    record.status.memory.budget_deferral = None;
}

/// A PR's decision: the snapshot it was made on, the plan, and its bound when it is quiet
/// and was made on the tick's read (see [`decide::settled_until`]).
struct Decision {
    snap: Snapshot,
    plan: Plan,
    until: Option<crate::model::Instant>,
    on_read: bool,
}

/// What a PR's decisions find read ahead of them: the chunk's failed checks' logs, the
/// evidence on a head (see [`PrAhead`]), and the plan its decision ahead made on the read,
/// when the acting phase's first decision would make the same (see [`DecidedAhead`]).
struct Held<'a> {
    logs: &'a BTreeMap<detect::LogKey, detect::KeptLog>,
    evidence: Option<(Sha, Result<Evidence, ForgeError>)>,
    plan: Option<Plan>,
}

/// Detect → decide on a PR's read. A kept read whose plan acts, or whose PR has a recorded
/// write not yet reconciled, is read again in full and decided anew, so no action or
/// reconciliation ever rests on a kept read.
fn detect_and_decide(
    app: &mut App,
    watch: &Watch,
    (snapshot, reused): (Snapshot, bool),
    ctx: &Context<'_>,
    held: Held<'_>,
    opts: &RunOptions,
) -> Result<Decision, TickFailure> {
    // The forge's word on a head is read at most once per tick (ahead of the acting phase,
    // or here), also when a kept read is read again in full.
    let mut read_evidence = held.evidence;
    // Only the first decision is on the read the plan ahead was made on.
    let mut plan_ahead = held.plan;
    let mut decided = |app: &mut App, mut snap: Snapshot| {
        let forge = app
            .forges
            .get(watch.pr.forge, &app.config)
            .map_err(TickFailure::Setup)?;
        let policy = ctx.policy;
        let mut logs = detect::Overlay {
            ahead: held.logs,
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
        let plan = match plan_ahead.take() {
            Some(plan) => {
                debug_assert_eq!(plan, decide::decide(watch, &snap, ctx), "{}", watch.pr);
                plan
            }
            None => decide::decide(watch, &snap, ctx),
        };
        if !plan.needs_evidence {
            let until = decide::settled_until(watch, &snap, ctx, &plan);
            return Ok::<_, TickFailure>((snap, plan, until));
        }
        // Something would reach the agent: what the forge says of the head's push (and, when
        // no trusted push settles it, of its commits' signatures) decides whether it may.
        let evidence = match read_evidence.take() {
            Some((sha, evidence)) if sha == snap.head.sha => evidence?,
            _ => ahead::evidence(forge, &snap, &decide::trusted(ctx), None)?,
        };
        let judged = Context {
            evidence: Some(&evidence),
            ..ctx.clone()
        };
        let plan = decide::decide(watch, &snap, &judged);
        read_evidence = Some((snap.head.sha.clone(), Ok(evidence)));
        Ok((snap, plan, None))
    };
    let (snap, plan, until) = decided(app, snapshot)?;
    // A recorded write not yet reconciled is reconciled against a fresh read too.
    if !reused
        || (plan.actions.is_empty() && !decide::intents::wants_fresh_read(ctx.intents, ctx.now))
    {
        return Ok(Decision {
            snap,
            plan,
            until,
            on_read: true,
        });
    }
    let fresh = read::reread(app, watch)?;
    let (snap, plan, until) = decided(app, fresh)?;
    Ok(Decision {
        snap,
        plan,
        until,
        on_read: false,
    })
}

/// The first decision [`tick_one`] makes on `read`, made ahead of the acting phase on the same
/// inputs: the snapshot as detected and who vouches for its head, when that decision asks for
/// the forge's evidence (see [`Plan::needs_evidence`]). `None` when it does not; when it
/// cannot be made without reading the forge (a failed check's log not held, a merge group's
/// checks: see [`detect::held_failures`]); when the PR's tick would fail before deciding; and
/// for a PR without an agent, which nothing waits on evidence for.
///
/// The PR's inputs it derives and the plan it makes are kept in `chunk` for the acting
/// phase's decision ([`DecidedAhead`]), which would derive the same: they come from the
/// chunk's one load of seen items and open intents (both decisions read that load, never the
/// database again; the intents of a chunk's armings are recorded only once all its PRs are
/// decided), the run's config and the owner's login the run holds.
fn evidence_wanted(
    app: &mut App,
    watch: &Watch,
    read: &Read,
    chunk: &mut ChunkInputs,
    opts: &RunOptions,
) -> Option<(Snapshot, ahead::Vouchers)> {
    let (Read::Fresh { snapshot, .. } | Read::Kept { snapshot, .. }) = read else {
        return None;
    };
    let policy = app.policy_for(watch);
    policy.agent.as_ref()?;
    let inputs = pr_inputs(app, watch, &policy, chunk.loads(), true).ok()?;
    let update_turn = chunk.turns.contains(&watch.id);
    let decided = decided_ahead(
        app,
        watch,
        snapshot,
        (&inputs, &policy, update_turn),
        chunk,
        opts,
    );
    let (plan, wanted) = match decided {
        Some((snap, plan, Some(vouchers))) => (Some(plan), Some((snap, vouchers))),
        Some((_, plan, None)) => (Some(plan), None),
        None => (None, None),
    };
    let ahead = DecidedAhead {
        inputs,
        plan,
        update_turn,
    };
    chunk.inputs_ahead.insert(watch.id, ahead);
    wanted
}

/// [`evidence_wanted`]'s decision on `inputs`: the snapshot as detected, the plan, and who
/// vouches for the head when the plan asks for evidence; `None` when it cannot be made without
/// reading the forge.
fn decided_ahead(
    app: &mut App,
    watch: &Watch,
    snapshot: &Snapshot,
    (inputs, policy, update_turn): (&PrInputs, &Policy, bool),
    chunk: &ChunkInputs,
    opts: &RunOptions,
) -> Option<(Snapshot, Plan, Option<ahead::Vouchers>)> {
    let mut snap = snapshot.clone();
    let logs = detect::Overlay {
        ahead: &chunk.logs,
        store: &mut app.store,
    };
    if !detect::held_failures(&logs, &mut snap, policy, &watch.status) {
        return None;
    }
    let ctx = inputs.context(policy, app.now, update_turn, opts.fix_asked);
    let plan = decide::decide(watch, &snap, &ctx);
    let vouchers = plan
        .needs_evidence
        .then(|| ahead::Vouchers::of(&decide::trusted(&ctx)));
    Some((snap, plan, vouchers))
}

/// The jobs of a chunk whose logs are back (see [`ahead`]): one evidence read for each PR whose decision
/// ahead asks for it, with the commits `answers` listed for its head. A stopping run acts on
/// nothing more and asks nothing.
pub(super) fn ahead_jobs(
    app: &mut App,
    leased: &[(Watch, Option<Lease>)],
    reads: &[Result<Read, TickFailure>],
    chunk: &mut ChunkInputs,
    answers: &mut ahead::Answers,
    opts: &RunOptions,
) -> Vec<ahead::Job> {
    let mut jobs = Vec::new();
    if stopped(opts) {
        return jobs;
    }
    for ((watch, _), read) in leased.iter().zip(reads) {
        let Ok(read) = read else {
            continue;
        };
        let Some((snapshot, vouchers)) = evidence_wanted(app, watch, read, chunk, opts) else {
            continue;
        };
        // Without a client the acting phase reports why.
        if let Ok(forge) = app.forges.shared(watch.pr.forge, &app.config) {
            let listed = answers.take_listed(watch.id, &snapshot.head.sha);
            jobs.push(ahead::Job {
                watch: watch.id,
                forge,
                snapshot: Box::new(snapshot),
                vouchers,
                listed,
            });
        }
    }
    jobs
}

/// What one PR's tick gave when it could act.
struct Ticked {
    plan: Plan,
    /// The error that left its actions incomplete.
    error: Option<String>,
    record: TickRecord,
    settlement: Option<Settlement>,
}

/// A read to decide on: its snapshot, whether it is a kept one, and the kept read it is (its
/// fingerprint as kept, and what was settled on it), if any.
struct ToDecide {
    snapshot: Snapshot,
    reused: bool,
    kept: Option<(String, Option<Settled>)>,
}

impl ToDecide {
    /// A settled read whose decision does not hold in this context: the kept read it stands
    /// for, loaded now (or, when it is gone, a full read).
    fn unsettle(
        app: &mut App,
        watch: &Watch,
        settled: Settled,
        summary: String,
    ) -> Result<Self, TickFailure> {
        let kept = app
            .store
            .kept_reads(&[watch.id])
            .unwrap_or_default()
            .remove(&watch.id)
            .filter(|k| k.summary == summary);
        Ok(match kept {
            Some(k) => ToDecide {
                snapshot: k.snapshot,
                reused: true,
                kept: Some((summary, Some(settled))),
            },
            None => ToDecide {
                snapshot: read::reread(app, watch)?,
                reused: false,
                kept: None,
            },
        })
    }
}

/// What deciding one PR gave: a tick already whole (a settled decision holds), or a decision
/// to apply.
enum Decide {
    Ticked(Box<Ticked>),
    Decided(Box<Judged>),
}

/// Detect → decide for one PR whose snapshot was read (or whose settled decision holds): the
/// tick when the settled decision holds, else the decision to apply; or why it failed before
/// it could act.
fn decide_one(
    app: &mut App,
    watch: &Watch,
    (read, ahead): (Read, PrAhead),
    chunk: &mut ChunkInputs,
    opts: &RunOptions,
) -> Result<Decide, TickFailure> {
    let now = app.now;
    let policy = app.policy_for(watch);
    let update_turn = chunk.turns.contains(&watch.id);
    let settled_read = matches!(read, Read::Settled { .. });
    // Derived already when the PR was decided ahead (a settled read never is); so was the
    // first decision, unless whose turn it is to update a branch moved since.
    let (mut inputs, plan_ahead) = match chunk.inputs_ahead.remove(&watch.id) {
        Some(ahead) => {
            let plan = ahead.plan.filter(|_| ahead.update_turn == update_turn);
            (ahead.inputs, plan)
        }
        None => (
            pr_inputs(app, watch, &policy, chunk.loads(), !settled_read)?,
            None,
        ),
    };
    let context = inputs.context_digest(chunk.config, update_turn);
    let ToDecide {
        snapshot,
        reused,
        kept,
    } = match read {
        Read::Settled { settled, summary } => {
            let asked = (!inputs.intents.is_empty(), opts.fix_asked);
            if let Some((plan, record)) = settle::quiet(watch, &settled, context, asked, now) {
                return Ok(Decide::Ticked(Box::new(Ticked {
                    plan,
                    error: None,
                    record,
                    settlement: None,
                })));
            }
            // Decided after all: on what was already handled, too.
            inputs.seen = app.store.seen(&watch.pr).map_err(TickFailure::Store)?;
            ToDecide::unsettle(app, watch, settled, summary)?
        }
        Read::Fresh { snapshot, kept } => ToDecide {
            snapshot,
            reused: false,
            kept: kept.map(|k| (k, None)),
        },
        Read::Kept {
            snapshot,
            summary,
            settled,
        } => ToDecide {
            snapshot,
            reused: true,
            kept: Some((summary, settled)),
        },
    };
    let ctx = inputs.context(&policy, now, update_turn, opts.fix_asked);
    let held = Held {
        logs: &chunk.logs,
        evidence: ahead.evidence,
        plan: plan_ahead,
    };
    let decision = detect_and_decide(app, watch, (snapshot, reused), &ctx, held, opts)?;
    Ok(Decide::Decided(Box::new(Judged {
        policy,
        inputs: (inputs, update_turn),
        decision,
        kept,
        context,
    })))
}

/// Applies a PR's decision: its plan, the error that left its actions incomplete, the record
/// to write and what to keep beside its kept read.
fn finish_one(
    app: &mut App,
    watch: &Watch,
    judged: Judged,
    armed: Option<crate::model::outcome::Outcome>,
    opts: &RunOptions,
) -> Result<Ticked, TickFailure> {
    let now = app.now;
    let Judged {
        policy,
        inputs: (inputs, update_turn),
        decision,
        kept,
        context,
    } = judged;
    let Decision {
        snap,
        plan,
        until,
        on_read,
    } = decision;
    let owner = (&policy, inputs.owner.as_str());
    let (plan, error, mut record) = apply(app, watch, owner, (&snap, plan), armed, opts)?;
    had_its_turn(&mut record);
    // Not settled on its own: perhaps on what it recorded.
    let again = (on_read && kept.is_some() && !(until.is_some() && record.only_times(watch)))
        .then(|| {
            let ctx = inputs.context(&policy, now, update_turn, opts.fix_asked);
            settle::again(watch, &snap, &ctx, &plan, &record)
        })
        .flatten();
    let decided = settle::Decided {
        plan: &plan,
        until,
        on_read,
        again,
    };
    let settlement = Settlement::after(watch, kept, &decided, &record, context, now);
    Ok(Ticked {
        plan,
        error,
        record,
        settlement,
    })
}

/// Applies a decision's plan: the plan as applied, the error that left it incomplete, and the
/// record to write.
fn apply(
    app: &mut App,
    watch: &Watch,
    (policy, owner): (&Policy, &str),
    (snap, mut plan): (&Snapshot, Plan),
    armed: Option<crate::model::outcome::Outcome>,
    opts: &RunOptions,
) -> Result<(Plan, Option<String>, TickRecord), TickFailure> {
    let now = app.now;
    let forge = app
        .forges
        .get(watch.pr.forge, &app.config)
        .map_err(TickFailure::Setup)?;
    let env = Env {
        watch_id: watch.id,
        config: &app.config,
        policy,
        owner,
        now,
        dry_run: opts.dry_run,
    };
    let mut writes = execute::Writes {
        forge,
        intents: &mut app.store,
        armed,
    };
    let applied = execute::apply(&mut writes, snap, &mut plan, &env);
    let mut history = plan.history.clone();
    history.extend(applied.history);
    decide::after_acting(
        &mut plan,
        applied.error.as_deref(),
        policy,
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

/// What a chunk's PRs' ticks read of the database besides their watches and reads, each kind
/// for the whole chunk in one statement: whose turn it is to update a behind branch, what each
/// PR already handled, its open intents, and the failed checks' logs kept (with those read
/// ahead this run over them).
#[derive(Debug)]
pub(super) struct ChunkInputs {
    pub turns: Vec<i64>,
    /// The digest of the run's configuration (see [`settle::Context`]).
    pub config: u64,
    /// By the PR's address; an error fails each PR's tick.
    pub seen: Result<BTreeMap<String, crate::store::Seen>, String>,
    pub intents: Result<BTreeMap<i64, Vec<crate::model::intent::Intent>>, String>,
    pub logs: BTreeMap<detect::LogKey, detect::KeptLog>,
    /// What each PR's decision ahead derived and decided, by watch id, for its decision in
    /// the acting phase (see [`evidence_wanted`]).
    inputs_ahead: BTreeMap<i64, DecidedAhead>,
}

/// A PR's decision ahead, kept for the acting phase: its inputs, and the plan made on its
/// read (when it could be made without the forge) with whether it was the PR's turn to
/// update its branch then. The acting phase's first decision is on the same read, inputs
/// and logs held, so it makes the same plan unless the turn moved while the chunk's jobs
/// were out; debug builds decide again and check.
#[derive(Debug)]
struct DecidedAhead {
    inputs: PrInputs,
    plan: Option<Plan>,
    update_turn: bool,
}

impl ChunkInputs {
    /// What it loaded for its PRs' inputs.
    fn loads(&self) -> ChunkLoads<'_> {
        ChunkLoads {
            intents: &self.intents,
            seen: &self.seen,
        }
    }

    /// Loads the inputs of `watches` (those whose stored state reads) and their `reads`
    /// (what settled reads already handled is left out); `ahead` are the logs read ahead this
    /// run, `config` the digest of the run's configuration.
    pub(super) fn load(
        app: &App,
        watches: &[&Watch],
        reads: &[Result<Read, TickFailure>],
        (turns, config): (Vec<i64>, u64),
        mut ahead: BTreeMap<detect::LogKey, detect::KeptLog>,
    ) -> Self {
        let readable: Vec<(&Watch, bool)> = watches
            .iter()
            .copied()
            .zip(reads.iter().map(|r| matches!(r, Ok(Read::Settled { .. }))))
            .filter(|(w, _)| w.unreadable.is_none())
            .collect();
        let prs: Vec<&crate::model::PrRef> = readable
            .iter()
            .filter(|(_, settled)| !settled)
            .map(|(w, _)| &w.pr)
            .collect();
        let ids: Vec<i64> = readable.iter().map(|(w, _)| w.id).collect();
        let keys: Vec<detect::LogKey> = reads
            .iter()
            .filter_map(|r| r.as_ref().ok()?.snapshot())
            .flat_map(detect::log_keys)
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
            config,
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
            inputs_ahead: BTreeMap::new(),
        }
    }
}

//! One tick: due watches, then chunk by chunk (one forge read batch each) leases → snapshots →
//! failed checks' logs → detect → decide → apply → record; then deliver. Snapshots, and the
//! logs and annotations of a chunk's failed checks (one job per PR), are read on the bounded
//! pool; this thread keeps the database, decides and writes. A slow or hanging batch holds
//! only its own PRs' actions, and only one batch of snapshots is held in memory at a time.
//!
//! A PR whose read or actions fail never stops the tick for the others: its `last_error` says
//! what happened, it is retried on the active cadence (or stopped, if the forge says it is
//! gone), and the run's exit code becomes 1. Forge writes happen before the record, outbox
//! messages are recorded with the state that caused them and delivered after the commit, so a
//! crash mid-tick never loses or duplicates what was decided: the next tick re-reads the forge.

pub mod branches;
pub mod deferral;
pub mod detect;
pub mod execute;
pub mod jobs;
pub mod metrics;
pub mod outcomes;
pub mod owners;
pub mod pages;
pub mod pool;
pub mod read;

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::Duration;

use crate::app::App;
use crate::app::SharedForge;
use crate::config::Policy;
use crate::core::decide::{self, Context, Plan};
use crate::forge::{DEFAULT_READ_BATCH, ForgeError};
use crate::forge::{SnapshotRequest, Summary, SummaryRequest};
use crate::holder::Holder;
use crate::model::watch::{HistoryEntry, Watch};
use crate::model::{ForgeKind, Instant, Login, Snapshot};
use crate::store::{Due, Lease, Leased, Selection, TickRecord};
use execute::Env;
use outcomes::Outcomes;
pub use outcomes::{PrOutcome, Report};
use pool::READS_IN_FLIGHT;
use read::{ChunkReads, Read, Summaries};

/// What a run asks for.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub selection: Selection,
    pub force: bool,
    pub dry_run: bool,
    /// `pr-monitor fix`: send the current failure to the agent whatever the author and guards.
    pub fix_asked: bool,
    /// Set by a signal handler: finish the PR in hand, then stop.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Told how the run is going (a terminal draws it; nothing else asks).
    pub progress: Option<Progress>,
}

/// A step of a run, for a progress display.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// Reading the due PRs from their forges.
    Reading { due: usize },
    /// One PR decided and recorded.
    Ticked {
        done: usize,
        total: usize,
        pr: &'a crate::model::PrRef,
    },
    /// Sending the outbox.
    Delivering,
    /// The run is over: the display clears itself.
    Done,
}

/// Receives the run's [`Step`]s.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(Step<'_>) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

fn tell(opts: &RunOptions, step: Step<'_>) {
    if let Some(p) = &opts.progress {
        (p.0)(step);
    }
}

/// The outcome of a run; each PR's own outcome went to the run's [`Report`] as it came.
#[derive(Debug, Default)]
pub struct RunSummary {
    /// PRs ticked, and how many of those ticks failed.
    pub ticked: usize,
    pub errors: usize,
    /// Watches another run held the lease on: one entry per watch, naming the holder when its
    /// lease does.
    pub busy: Vec<Option<Holder>>,
    /// Watches whose lease this run took over from a run whose process was gone: one entry
    /// per watch.
    pub taken_over: Vec<Holder>,
    /// How many watches exist at all (to tell "nothing watched" from "nothing due").
    pub watched: usize,
    /// Outbox messages delivered, and those that failed (id, error).
    pub delivered: usize,
    pub delivery_failures: Vec<(String, String)>,
    /// What syncing the jobs' watch lists did (PRs added, listings that failed).
    pub jobs: Vec<String>,
    /// Due watches pushed past their forge's rate-limit reset for budget, unread.
    pub deferred: usize,
    /// Nothing could be read: PRs were due, and every one's read was cut off because its
    /// forge refused the token or could not be reached.
    pub nothing_read: bool,
    /// Every forge the run needed answered at least one of its PRs' reads.
    pub read_every_forge: bool,
}

impl RunSummary {
    pub fn failed(&self) -> bool {
        self.errors > 0
    }

    /// The exit code: 3 when nothing could be read, 1 when some PR's tick failed, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.nothing_read {
            3
        } else {
            u8::from(self.failed())
        }
    }
}

/// How long a lease lasts: far longer than one PR's tick, short enough to recover a crash.
const LEASE_SECS: i64 = 600;
/// Consecutive failed ticks after which the owner hears about a watch that keeps erroring.
const ERROR_STREAK_NOTICE: u32 = 3;

/// Runs one tick over the due watches, telling `report` each PR's outcome as soon as it is
/// recorded, then delivers the outbox.
pub fn run(app: &mut App, opts: &RunOptions, report: &mut dyn Report) -> Result<RunSummary> {
    let started = std::time::Instant::now();
    let now = app.now;
    app.dry_run = opts.dry_run;
    let jobs = if opts.dry_run || opts.fix_asked {
        Vec::new()
    } else {
        let mut said = jobs::sync(app)?;
        said.extend(branches::look(app)?);
        said
    };
    report.jobs(&jobs);
    let due = app.store.due(now, opts.force, &opts.selection)?;
    let due = if opts.dry_run {
        due
    } else {
        owners::hold_changed(app, due)?
    };
    let holder = Holder::new_run();
    // A dry run writes nothing; `fix` and a run of named PRs are asked for by hand.
    let (due, deferred) = if opts.dry_run || opts.fix_asked || !opts.selection.prs.is_empty() {
        (due, 0)
    } else {
        deferral::defer_due(app, due, opts.force, &opts.selection, &holder)?
    };
    let mut summary = RunSummary {
        watched: app.store.count_watches()?,
        jobs,
        deferred,
        ..RunSummary::default()
    };

    let total = due.len();
    tell(opts, Step::Reading { due: total });
    let mut ticking = Ticking {
        opts,
        holder: &holder,
        summary: &mut summary,
        outcomes: Outcomes::new(report),
        done: 0,
        total,
    };
    if total > 0 {
        tick_due(app, due, &mut ticking)?;
    }
    let tally = ticking.outcomes.finish();
    summary.ticked = tally.ticked;
    summary.errors = tally.errors;
    summary.nothing_read = tally.ticked > 0 && tally.cut_off == tally.ticked;
    summary.read_every_forge = tally.read.keys().all(|f| tally.forges_read.contains(f));
    if !opts.dry_run {
        tell(opts, Step::Delivering);
        let delivered = deliver(app)?;
        summary.delivered = delivered.sent;
        summary.delivery_failures = delivered.failed;
        metrics::count_actions(&mut app.store, &tally.actions)?;
        metrics::count_errors(&mut app.store, &tally.failed_prs)?;
        metrics::count_forge_usage(&mut app.store, &app.forges.take_usage())?;
        deferral::remember(app, &tally.read)?;
        pages::write(&app.config, &app.store, now)?;
        metrics::write(
            &app.config,
            &mut app.store,
            metrics::RunFacts {
                now,
                read_every_forge: summary.read_every_forge,
                duration_seconds: started.elapsed().as_secs_f64(),
            },
        )?;
    }
    tell(opts, Step::Done);
    Ok(summary)
}

/// A run under way: what it was asked, the holder of its leases, what it has to tell, and how
/// far it got.
struct Ticking<'r, 'o> {
    opts: &'r RunOptions,
    holder: &'r Holder,
    summary: &'r mut RunSummary,
    outcomes: Outcomes<'o>,
    done: usize,
    total: usize,
}

/// A read a pool thread makes.
enum Job {
    /// One PR's failed checks' logs, read ahead of the acting phase.
    Logs {
        chunk: usize,
        forge: SharedForge,
        snapshot: Box<Snapshot>,
        policy: Box<Policy>,
        cache: detect::ReadAhead,
    },
    Summaries {
        group: usize,
        forge: SharedForge,
        requests: Vec<SummaryRequest>,
    },
    Snapshots {
        chunk: usize,
        forge: SharedForge,
        requests: Vec<SnapshotRequest>,
    },
}

/// What a pool thread read.
enum Answer {
    Logs {
        chunk: usize,
        read: BTreeMap<detect::LogKey, detect::KeptLog>,
    },
    Summaries {
        group: usize,
        answer: Result<Vec<Option<Summary>>, ForgeError>,
    },
    Snapshots {
        chunk: usize,
        answer: Vec<Result<Snapshot, ForgeError>>,
    },
}

fn read_in_pool(job: Job) -> Answer {
    match job {
        Job::Logs {
            chunk,
            forge,
            mut snapshot,
            policy,
            mut cache,
        } => {
            detect::failed_logs(&*forge, &mut cache, &mut snapshot, &policy, true);
            Answer::Logs {
                chunk,
                read: cache.read,
            }
        }
        Job::Summaries {
            group,
            forge,
            requests,
        } => Answer::Summaries {
            group,
            answer: forge.summaries(&requests),
        },
        Job::Snapshots {
            chunk,
            forge,
            requests,
        } => Answer::Snapshots {
            chunk,
            answer: forge.snapshots(&requests),
        },
    }
}

/// A group under way: its kept reads' hints until its summaries arrive, its chunks not yet
/// read, and how many are being read.
struct Group {
    id: usize,
    ids: Vec<i64>,
    hints: BTreeMap<i64, crate::store::KeptHints>,
    summaries: Option<Summaries>,
    chunks: std::collections::VecDeque<Chunk>,
    reading: usize,
}

impl Group {
    fn finished(&self) -> bool {
        self.summaries.is_some() && self.chunks.is_empty() && self.reading == 0
    }
}

/// A chunk whose snapshots are being read: its leases and the half-done read.
struct Reading {
    group: usize,
    leased: Vec<(Watch, Option<Lease>)>,
    plan: ChunkReads,
}

/// A read chunk whose failed checks' logs are being read ahead: its leases and reads, the
/// logs read so far, and how many PRs' logs are still out.
struct Acting {
    leased: Vec<(Watch, Option<Lease>)>,
    reads: Vec<Result<Read, ForgeError>>,
    ahead: BTreeMap<detect::LogKey, detect::KeptLog>,
    out: usize,
}

/// How many groups are open at once, each holding its watches, its kept reads' hints and its
/// summaries (never its kept snapshots: each chunk loads those it reuses): enough that the
/// next groups' summaries are read while this thread decides, few enough that memory does not
/// grow with the number of PRs.
const GROUPS_AHEAD: usize = 6;

/// Reads, decides, acts on and records the due watches: up to [`READS_IN_FLIGHT`] reads (a
/// group's summary, a chunk's snapshots) are under way on the pool's threads while this
/// thread loads each group's watches as it opens, leases each chunk just before its read is
/// sent and acts on each chunk as soon as its read is back, in the order the reads finish, so
/// a slow or hanging read holds only its own chunk. Until a first chunk has been acted on,
/// one read goes at a time: a run whose forge refuses the token or has no budget left learns
/// it from one request, and a small run (two chunks) reads, acts and records one chunk before
/// reading the next.
fn tick_due(app: &mut App, due: Vec<Due>, run: &mut Ticking<'_, '_>) -> Result<()> {
    let mut waiting: std::collections::VecDeque<Waiting> = groups(app, due).into();
    pool::with_pool(READS_IN_FLIGHT, read_in_pool, |pool| {
        let mut open: Vec<Group> = Vec::new();
        let mut reading: BTreeMap<usize, Reading> = BTreeMap::new();
        let mut acting: BTreeMap<usize, Acting> = BTreeMap::new();
        let (mut groups_started, mut chunks_formed) = (0, 0);
        let mut acted = false;
        loop {
            let window = if acted { READS_IN_FLIGHT } else { 1 };
            while !stopped(run.opts) && pool.in_flight() < window {
                if let Some(g) = open
                    .iter_mut()
                    .find(|g| g.summaries.is_some() && !g.chunks.is_empty())
                {
                    let Some(chunk) = g.chunks.pop_front() else {
                        continue;
                    };
                    let seq = chunk.seq;
                    let leased = take_leases(app, chunk, run)?;
                    let Some(kind) = leased.first().map(|(w, _)| w.pr.forge) else {
                        run.outcomes.chunk_done(seq, Vec::new());
                        continue;
                    };
                    let Some(summaries) = g.summaries.as_mut() else {
                        continue;
                    };
                    let watches: Vec<&Watch> = leased.iter().map(|(w, _)| w).collect();
                    let (plan, requests) =
                        read::plan_chunk(app, &watches, summaries, run.opts.fix_asked);
                    let reads = if requests.is_empty() {
                        read::finish_chunk(app, plan, summaries, Vec::new(), false)
                    } else {
                        match app.forges.shared(kind, &app.config) {
                            Ok(forge) => {
                                pool.send(Job::Snapshots {
                                    chunk: seq,
                                    forge,
                                    requests,
                                });
                                g.reading += 1;
                                let group = g.id;
                                reading.insert(
                                    seq,
                                    Reading {
                                        group,
                                        leased,
                                        plan,
                                    },
                                );
                                continue;
                            }
                            Err(e) => leased
                                .iter()
                                .map(|_| Err(ForgeError::Unauthorized(e.clone())))
                                .collect(),
                        }
                    };
                    acted |= after_read(app, pool, &mut acting, seq, leased, reads, run)?;
                    continue;
                }
                if open.len() >= GROUPS_AHEAD {
                    break;
                }
                let Some(next) = waiting.pop_front() else {
                    break;
                };
                // The group's watches as they are now, loaded only when it is read.
                let watches = app.store.watches_by_ids(&next.ids)?;
                let Some(kind) = watches.first().map(|w| w.pr.forge) else {
                    continue;
                };
                let everyone: Vec<&Watch> = watches.iter().collect();
                let (ids, hints, requests) = read::summary_requests(app, &everyone);
                let mut chunks = std::collections::VecDeque::new();
                let mut rest = watches.into_iter().peekable();
                while rest.peek().is_some() {
                    chunks.push_back(Chunk {
                        seq: chunks_formed,
                        watches: rest.by_ref().take(next.chunk_size).collect(),
                    });
                    chunks_formed += 1;
                }
                let mut group = Group {
                    id: groups_started,
                    ids,
                    hints,
                    summaries: None,
                    chunks,
                    reading: 0,
                };
                groups_started += 1;
                match app.forges.shared(kind, &app.config) {
                    Ok(forge) => pool.send(Job::Summaries {
                        group: group.id,
                        forge,
                        requests,
                    }),
                    // The chunks' reads report why.
                    Err(_) => group.summaries = Some(Summaries::default()),
                }
                open.push(group);
            }
            open.retain(|g| !g.finished());
            let Some(answer) = pool.recv() else {
                break;
            };
            match answer {
                Answer::Summaries { group, answer } => {
                    if let Some(g) = open.iter_mut().find(|g| g.id == group) {
                        let hints = std::mem::take(&mut g.hints);
                        g.summaries = Some(Summaries::new(&g.ids, hints, answer));
                    }
                }
                Answer::Snapshots { chunk, answer } => {
                    let Some(Reading {
                        group,
                        leased,
                        plan,
                    }) = reading.remove(&chunk)
                    else {
                        continue;
                    };
                    let Some(g) = open.iter_mut().find(|g| g.id == group) else {
                        continue;
                    };
                    g.reading -= 1;
                    let empty = Summaries::default();
                    let summaries = g.summaries.as_ref().unwrap_or(&empty);
                    let reads = read::finish_chunk(app, plan, summaries, answer, !run.opts.dry_run);
                    acted |= after_read(app, pool, &mut acting, chunk, leased, reads, run)?;
                }
                Answer::Logs { chunk, read } => {
                    let Some(a) = acting.get_mut(&chunk) else {
                        continue;
                    };
                    a.ahead.extend(read);
                    a.out -= 1;
                    if a.out > 0 {
                        continue;
                    }
                    let Some(Acting {
                        leased,
                        reads,
                        ahead,
                        ..
                    }) = acting.remove(&chunk)
                    else {
                        continue;
                    };
                    // The logs read are kept for the next ticks, in one commit; a cache, so a
                    // commit that fails only means they are read again next tick.
                    let _ = app.store.batch(|store| {
                        for (key, log) in &ahead {
                            detect::LogCache::keep_log(store, key.clone(), log.clone());
                        }
                        Ok(())
                    });
                    act_on_chunk(app, chunk, leased, reads, &ahead, run)?;
                    acted = true;
                }
            }
        }
        Ok(())
    })
}

/// A chunk just read: the failed checks' logs its fresh reads need and the database lacks
/// are read ahead on the pool (one job per PR), and the chunk is acted on when they are back;
/// a chunk that needs none (or a dry run) is acted on at once. Whether it was acted on.
fn after_read(
    app: &mut App,
    pool: &mut pool::Pool<Job, Answer>,
    acting: &mut BTreeMap<usize, Acting>,
    chunk: usize,
    leased: Vec<(Watch, Option<Lease>)>,
    reads: Vec<Result<Read, ForgeError>>,
    run: &mut Ticking<'_, '_>,
) -> Result<bool> {
    let mut jobs = Vec::new();
    // A dry run writes no cache and a stopping run acts on nothing more: both read nothing
    // ahead. A PR whose stored state is damaged is never detected, and a kept read may be
    // read again, so neither is read ahead either.
    if !run.opts.dry_run && !stopped(run.opts) {
        for ((watch, _), read) in leased.iter().zip(&reads) {
            let Ok(read) = read else { continue };
            if read.reused || watch.unreadable.is_some() {
                continue;
            }
            let Some(keys) = detect::wanted_logs(&read.snapshot) else {
                continue;
            };
            let mut cache = detect::ReadAhead::default();
            let mut missing = false;
            for key in keys {
                match detect::LogCache::kept_log(&app.store, &key) {
                    Some(log) => {
                        cache.held.insert(key, log);
                    }
                    None => missing = true,
                }
            }
            if missing {
                jobs.push((
                    watch.pr.forge,
                    read.snapshot.clone(),
                    app.policy_for(watch),
                    cache,
                ));
            }
        }
    }
    let mut sent = 0;
    for (kind, snapshot, policy, cache) in jobs {
        // Without a client the acting phase reports why.
        if let Ok(forge) = app.forges.shared(kind, &app.config) {
            pool.send(Job::Logs {
                chunk,
                forge,
                snapshot: Box::new(snapshot),
                policy: Box::new(policy),
                cache,
            });
            sent += 1;
        }
    }
    if sent == 0 {
        act_on_chunk(app, chunk, leased, reads, &BTreeMap::new(), run)?;
        return Ok(true);
    }
    acting.insert(
        chunk,
        Acting {
            leased,
            reads,
            ahead: BTreeMap::new(),
            out: sent,
        },
    );
    Ok(false)
}

/// Detect → decide → apply for every PR of a read chunk, in the chunk's order, then the
/// chunk's outcomes recorded in one commit (each forge write's intent was recorded on its own
/// before the write) and handed on; a stop asked for releases the leases of the PRs not yet
/// decided.
fn act_on_chunk(
    app: &mut App,
    chunk: usize,
    leased: Vec<(Watch, Option<Lease>)>,
    reads: Vec<Result<Read, ForgeError>>,
    ahead: &BTreeMap<detect::LogKey, detect::KeptLog>,
    run: &mut Ticking<'_, '_>,
) -> Result<()> {
    let turns = chunk_turns(app, &leased, &reads)?;
    let mut acted = Vec::with_capacity(leased.len());
    let mut unasked = Vec::new();
    for ((watch, lease), read) in leased.into_iter().zip(reads) {
        run.done += 1;
        tell(
            run.opts,
            Step::Ticked {
                done: run.done,
                total: run.total,
                pr: &watch.pr,
            },
        );
        if stopped(run.opts) {
            unasked.extend(lease);
            continue;
        }
        acted.push((act(app, watch, read, &turns, ahead, run.opts), lease));
    }
    let recorded = app.store.batch(|store| {
        for lease in unasked {
            store.release(lease)?;
        }
        Ok(acted
            .iter_mut()
            .map(|((outcome, record), lease)| {
                // A PR whose outcome cannot be recorded (its lease lost to another run) is
                // that PR's failure, not the run's: the others go on.
                let Some(lease) = lease.take() else {
                    return Ok(());
                };
                if outcome.watch.unreadable.is_some() {
                    store.record_failure(lease, record)
                } else {
                    store.record(lease, &outcome.watch.status.memory, record)
                }
            })
            .collect::<Vec<_>>())
    });
    // The whole batch failing to commit (the disk full) fails each of its PRs.
    let recorded = recorded.unwrap_or_else(|e| {
        let e = format!("{e:#}");
        acted.iter().map(|_| Err(anyhow::anyhow!("{e}"))).collect()
    });
    let outcomes = acted
        .into_iter()
        .zip(recorded)
        .map(|(((mut outcome, _), _), recorded)| {
            if let Err(e) = recorded {
                outcome.error = Some(format!("the outcome could not be recorded: {e:#}"));
            }
            outcome
        })
        .collect();
    run.outcomes.chunk_done(chunk, outcomes);
    Ok(())
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
) -> Result<(Snapshot, Plan), ForgeError> {
    // The forge's word on a head is read at most once per tick, also when a kept read is
    // read again in full.
    let mut read_evidence: Option<(crate::model::Sha, crate::model::trust::Evidence)> = None;
    let mut decided = |app: &mut App, mut snap: Snapshot| {
        let forge = app
            .forges
            .get(watch.pr.forge, &app.config)
            .map_err(ForgeError::Unauthorized)?;
        let policy = ctx.policy;
        let mut logs = detect::Overlay {
            ahead,
            store: &mut app.store,
        };
        detect::failed_logs(forge, &mut logs, &mut snap, policy, !opts.dry_run);
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

/// Detect → decide → apply for one PR whose snapshot was read.
fn tick_one(
    app: &mut App,
    watch: &Watch,
    read: Read,
    update_turn: bool,
    ahead: &BTreeMap<detect::LogKey, detect::KeptLog>,
    opts: &RunOptions,
) -> (Option<Plan>, Option<String>, TickRecord) {
    let now = app.now;
    let policy = app.policy_for(watch);
    let facts = match facts(app, watch, &policy) {
        Ok(facts) => facts,
        Err(message) => {
            let record = failed_tick(
                watch,
                &ForgeError::Unexpected(message.clone()),
                now,
                policy.poll_sec,
            )
            .0;
            return (None, Some(message), record);
        }
    };
    let Facts {
        agent_logins,
        agent_emails,
        owner,
        commits_as,
        seen,
        intents,
    } = facts;
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
    let (snap, mut plan) = match detect_and_decide(app, watch, read, &ctx, ahead, opts) {
        Ok(decided) => decided,
        Err(e) => {
            let (record, message) = failed_tick(watch, &e, now, policy.poll_sec);
            return (None, Some(message), record);
        }
    };
    let Ok(forge) = app.forges.get(watch.pr.forge, &app.config) else {
        let record = failed_tick(
            watch,
            &ForgeError::Unexpected("no forge client".into()),
            now,
            policy.poll_sec,
        )
        .0;
        return (None, Some("no forge client".into()), record);
    };
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
    if let Some(e) = &applied.error {
        plan.status.memory.error_streak += 1;
        plan.next_tick_at =
            Some(now + Duration::seconds(i64::try_from(policy.poll_sec).unwrap_or(30)));
        history.push(HistoryEntry {
            at: now,
            what: format!("tick incomplete: {e}"),
            why: None,
        });
    } else {
        plan.status.memory.error_streak = 0;
    }
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
    (Some(plan), applied.error, record)
}

/// What a PR's tick needs besides its snapshot. A failed read of any of these fails that PR's
/// tick: guessing (nothing seen, no owner, no agent logins) would re-send or mis-route.
struct Facts {
    agent_logins: Vec<Login>,
    agent_emails: Vec<String>,
    owner: String,
    /// How the forge's commits for the owner name it (to tell a recorded update's head).
    commits_as: crate::viewer::Committer,
    seen: BTreeMap<(String, String), String>,
    /// The PR's recorded intents no read has reconciled yet.
    intents: Vec<crate::model::intent::Intent>,
}

fn facts(app: &mut App, watch: &Watch, policy: &Policy) -> Result<Facts, String> {
    if let Some(damage) = &watch.unreadable {
        return Err(format!(
            "the stored state of this PR cannot be read ({damage}); it is left as it is: \
             `watch rm` then `watch add` starts it afresh"
        ));
    }
    let (agent_logins, agent_emails) = match policy.agent.as_deref() {
        Some(name) => {
            let agent = app.config.agent(name)?;
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
    let intents = app
        .store
        .open_intents(watch.id)
        .map_err(|e| format!("cannot read the recorded intents: {e:#}"))?;
    // The owner's login matters only where an agent may be written to, or where a recorded
    // branch update must be told from someone else's push.
    let updating = intents
        .iter()
        .any(|i| i.kind == crate::model::intent::IntentKind::UpdateBranch);
    let viewer = if policy.agent.is_some() || updating {
        app.viewer(watch.pr.forge)
            .map_err(|e| format!("cannot learn the token's login: {e}"))?
    } else {
        crate::viewer::Viewer::by_login("")
    };
    let seen = app
        .store
        .seen(&watch.pr)
        .map_err(|e| format!("cannot read what was already handled: {e:#}"))?;
    Ok(Facts {
        agent_logins,
        agent_emails,
        owner: viewer.login,
        commits_as: viewer.commits_as,
        seen,
        intents,
    })
}

/// Whether a signal asked the run to stop after the PR in hand.
fn stopped(opts: &RunOptions) -> bool {
    opts.stop
        .as_ref()
        .is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst))
}

/// A tick's unit of work: up to one read batch of one forge's due watches, numbered in the
/// order the run forms them (its outcomes are handed on in that order).
struct Chunk {
    seq: usize,
    watches: Vec<Watch>,
}

/// A group not yet read: up to one summary read of one forge's due watches, by id, and the
/// size of its chunks.
struct Waiting {
    ids: Vec<i64>,
    chunk_size: usize,
}

/// Splits the due watches into groups the size of each forge's summary read, forge by forge,
/// keeping the due order within a forge.
fn groups(app: &mut App, due: Vec<Due>) -> Vec<Waiting> {
    let mut by_forge: BTreeMap<ForgeKind, Vec<i64>> = BTreeMap::new();
    for d in due {
        by_forge.entry(d.forge).or_default().push(d.id);
    }
    let mut out = Vec::new();
    for (kind, ids) in by_forge {
        let (group, size) = app
            .forges
            .get(kind, &app.config)
            .map_or((DEFAULT_READ_BATCH, DEFAULT_READ_BATCH), |f| {
                (f.summary_batch_size(), f.read_batch_size())
            });
        let (group, size) = (group.max(1), size.max(1));
        out.extend(ids.chunks(group).map(|ids| Waiting {
            ids: ids.to_vec(),
            chunk_size: size,
        }));
    }
    out
}

/// Takes the leases of one chunk just before it is read; a lease whose holder's process is
/// gone (on this host) is taken over; watches another run holds are counted, with their
/// holder, and left out. A dry run takes none.
fn take_leases(
    app: &mut App,
    chunk: Chunk,
    run: &mut Ticking<'_, '_>,
) -> Result<Vec<(Watch, Option<Lease>)>> {
    if run.opts.dry_run {
        return Ok(chunk.watches.into_iter().map(|w| (w, None)).collect());
    }
    let (holder, summary) = (run.holder, &mut *run.summary);
    // The chunk's leases in one commit, before anything is read.
    app.store.batch(|store| {
        let mut leased = Vec::with_capacity(chunk.watches.len());
        for w in chunk.watches {
            match store.lease(w.id, holder, LEASE_SECS, &Holder::gone_here)? {
                Leased::Taken(lease) => leased.push((w, Some(lease))),
                Leased::TakenOver(lease, was) => {
                    summary.taken_over.push(was);
                    leased.push((w, Some(lease)));
                }
                Leased::Held(by) => summary.busy.push(by),
            }
        }
        Ok(leased)
    })
}

/// Detect → decide → apply for one PR of a chunk, whatever its read gave: its outcome and the
/// record to write.
fn act(
    app: &mut App,
    watch: Watch,
    read: Result<Read, ForgeError>,
    turns: &[i64],
    ahead: &BTreeMap<detect::LogKey, detect::KeptLog>,
    opts: &RunOptions,
) -> (PrOutcome, TickRecord) {
    let now = app.now;
    let cut_off = matches!(
        read,
        Err(ForgeError::Unauthorized(_) | ForgeError::Unreachable(_))
    );
    let (plan, error, mut record) = match read {
        Ok(read) => tick_one(app, &watch, read, turns.contains(&watch.id), ahead, opts),
        Err(e) => {
            let policy = app.policy_for(&watch);
            let (record, message) = failed_tick(&watch, &e, now, policy.poll_sec);
            (None, Some(message), record)
        }
    };
    // A tick ends any deferral for budget: the PR had its turn.
    record.status.memory.budget_deferral = None;
    if record.status.memory.error_streak == ERROR_STREAK_NOTICE {
        match error_notice(app, &watch, record.last_error.as_deref().unwrap_or("")) {
            Ok(messages) => record.outbox.extend(messages),
            Err(e) => {
                tracing::warn!(pr = %watch.pr.url(), error = %e, "the error notice could not be written");
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

/// Whose turn it is to update a behind branch: from this chunk's snapshots where there are
/// some, else from the stored state (which holds what earlier chunks of this tick recorded).
fn chunk_turns(
    app: &App,
    leased: &[(Watch, Option<Lease>)],
    reads: &[Result<Read, ForgeError>],
) -> Result<Vec<i64>> {
    let ids: Vec<i64> = leased.iter().map(|(w, _)| w.id).collect();
    let all = app.store.armed_in_line(&ids)?;
    let fresh: BTreeMap<i64, &Snapshot> = leased
        .iter()
        .zip(reads)
        .filter_map(|((w, _), r)| r.as_ref().ok().map(|r| (w.id, &r.snapshot)))
        .collect();
    Ok(decide::update_turns(&all, &fresh))
}

/// The record of a tick that could not read its PR.
fn failed_tick(watch: &Watch, e: &ForgeError, now: Instant, poll_sec: u64) -> (TickRecord, String) {
    let mut status = watch.status.clone();
    status.memory.error_streak += 1;
    let (message, next) = if e.is_gone() {
        (
            format!(
                "{e}; the PR was deleted or this token lost access to it, so it is no longer polled (watch add re-arms it)"
            ),
            None,
        )
    } else {
        let wait = match e {
            ForgeError::RateLimited {
                retry_after_secs: Some(s),
            } => (*s).max(poll_sec),
            _ => poll_sec,
        };
        (
            e.to_string(),
            Some(now + Duration::seconds(i64::try_from(wait).unwrap_or(i64::MAX / 2))),
        )
    };
    // The per-PR error, for whoever reads the log (the run's results stay on stdout).
    tracing::warn!(pr = %watch.pr.url(), error = %message, "tick failed");
    let record = TickRecord {
        next_tick_at: next,
        last_error: Some(message.clone()),
        history: vec![HistoryEntry {
            at: now,
            what: format!("tick failed: {message}"),
            why: None,
        }],
        ..TickRecord::bare(status, now)
    };
    (record, message)
}

/// Delivers the outbox; a message a command agent kept failing on is not tried again, and
/// its owner is told at once.
pub fn deliver(app: &mut App) -> Result<crate::notify::Delivered> {
    let mut delivered = crate::notify::deliver_pending(&mut app.store, &app.config, app.now)?;
    if delivered.gave_up.is_empty() {
        return Ok(delivered);
    }
    for g in std::mem::take(&mut delivered.gave_up) {
        let Ok(pr) = g.pr.parse::<crate::model::PrRef>() else {
            continue;
        };
        let Some(watch) = app.store.watch(&pr)? else {
            continue;
        };
        let notice = crate::model::plan::Notice::AgentGaveUp {
            agent: g.agent,
            attempts: g.attempts,
            error: g.error,
        };
        let headline = crate::core::report::headline(&notice);
        let payload = crate::core::report::bare_notice_payload(&notice, &pr);
        let messages = execute::owner_messages(
            &app.config,
            &app.policy_for(&watch),
            &pr,
            &notice,
            &payload,
            app.now,
        )?;
        app.store.enqueue(&messages)?;
        app.log(&pr, headline)?;
    }
    let more = crate::notify::deliver_pending(&mut app.store, &app.config, app.now)?;
    delivered.sent += more.sent;
    delivered.failed.extend(more.failed);
    delivered.gave_up.extend(more.gave_up);
    Ok(delivered)
}

/// The owner's notice about a watch that keeps erroring (sent once per streak).
fn error_notice(
    app: &App,
    watch: &Watch,
    error: &str,
) -> serde_json::Result<Vec<crate::store::OutboxMessage>> {
    let notice = crate::model::plan::Notice::KeepsErroring {
        error: error.to_owned(),
    };
    let payload = crate::core::report::bare_notice_payload(&notice, &watch.pr);
    execute::owner_messages(
        &app.config,
        &app.policy_for(watch),
        &watch.pr,
        &notice,
        &payload,
        app.now,
    )
}

#[cfg(test)]
mod golden;

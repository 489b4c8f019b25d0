//! The flow of a tick through the read pool: the due watches are grouped (one summary read
//! each) and chunked (one snapshot read each); each chunk is leased just before its read is
//! sent, its failed checks' logs are read ahead, and it is acted on (see [`super::pr`]) and
//! recorded as soon as its reads are back, in the order they finish.

use std::collections::BTreeMap;

use anyhow::Result;

use super::failure::TickFailure;
use super::group::{self, Chunk, Formed, Group, PendingGroup};
use super::pool::{self, READS_IN_FLIGHT};
use super::read::{self, ChunkReads, Read, Summaries};
use super::run::{Run, stopped};
use super::window::Window;
use super::{ahead, arm, detect, pr, quiet, record};
use crate::app::{App, SharedForge};
use crate::config::Policy;
use crate::core::decide;
use crate::forge::ForgeError;
use crate::forge::{SnapshotRequest, Summary, SummaryRequest};
use crate::holder::Holder;
use crate::model::Snapshot;
use crate::model::watch::Watch;
use crate::store::{Due, Lease, Leased};

/// How long a lease lasts: far longer than one PR's tick, short enough to recover a crash.
const LEASE_SECS: i64 = 600;

/// One PR's failed checks' logs to read ahead of the acting phase: its forge client, read,
/// policy and the logs the database holds for it, and its commits to list with the chunk's
/// annotations (see [`ahead::ask`]).
struct LogJob {
    ask: Option<ahead::Ask>,
    forge: SharedForge,
    snapshot: Box<Snapshot>,
    policy: Box<Policy>,
    cache: detect::ReadAhead,
}

/// A read a pool thread makes.
enum PoolRead {
    /// The annotations of a chunk's failed checks not read before, and the commits of its
    /// PRs (by watch id) whose evidence may be read, in one request.
    Notes {
        chunk: usize,
        forge: SharedForge,
        runs: Vec<crate::forge::CheckRunRef>,
        asks: Vec<ahead::Ask>,
    },
    /// One PR's failed checks' logs, with their annotations read ahead.
    Logs {
        chunk: usize,
        job: LogJob,
        notes: detect::Notes,
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
    /// A chunk's armings, asked together (a write, the one the pool sends).
    Arm { chunk: usize, arming: arm::Arming },
    /// A job of a chunk's stage ahead of its acting phase.
    Ahead { chunk: usize, job: ahead::Job },
}

/// What a pool thread read.
enum Answer {
    Notes {
        chunk: usize,
        notes: detect::Notes,
        listed: ahead::Listed,
    },
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
    Armed {
        chunk: usize,
        results: Vec<Result<(), ForgeError>>,
    },
    Ahead {
        chunk: usize,
        done: ahead::Done,
    },
}

fn read_in_pool(job: PoolRead) -> Answer {
    match job {
        PoolRead::Notes {
            chunk,
            forge,
            runs,
            asks,
        } => {
            let (notes, listed) = ahead::read_notes(&*forge, &runs, asks);
            Answer::Notes {
                chunk,
                notes,
                listed,
            }
        }
        PoolRead::Logs {
            chunk,
            job:
                LogJob {
                    forge,
                    mut snapshot,
                    policy,
                    mut cache,
                    ..
                },
            notes,
        } => {
            detect::failed_logs(&*forge, &mut cache, &mut snapshot, &policy, true, &notes);
            Answer::Logs {
                chunk,
                read: cache.read,
            }
        }
        PoolRead::Summaries {
            group,
            forge,
            requests,
        } => Answer::Summaries {
            group,
            answer: forge.summaries(&requests),
        },
        PoolRead::Snapshots {
            chunk,
            forge,
            requests,
        } => Answer::Snapshots {
            chunk,
            answer: forge.snapshots(&requests),
        },
        PoolRead::Arm { chunk, arming } => Answer::Armed {
            chunk,
            results: arm::send(&arming.forge, &arming.prs),
        },
        PoolRead::Ahead { chunk, job } => Answer::Ahead {
            chunk,
            done: ahead::work(job),
        },
    }
}

/// A chunk whose snapshots are being read: its leases and the half-done read.
struct Reading {
    group: usize,
    leased: Vec<(Watch, Option<Lease>)>,
    plan: ChunkReads,
}

/// A read chunk whose reads ahead of its acting phase are under way: its leases and reads,
/// the log reads waiting for the chunk's annotations, the logs read so far, once they are all
/// back its inputs and the answers of its jobs ahead (see [`ahead`]), and how many reads are
/// still out.
struct Awaiting {
    leased: Vec<(Watch, Option<Lease>)>,
    reads: Vec<Result<Read, TickFailure>>,
    waiting: Vec<LogJob>,
    ahead: BTreeMap<detect::LogKey, detect::KeptLog>,
    inputs: Option<pr::ChunkInputs>,
    answers: ahead::Answers,
    out: usize,
}

/// Reads, decides, acts on and records the due watches: up to [`READS_IN_FLIGHT`] reads (a
/// group's summary, a chunk's snapshots) are under way on the pool's threads while this
/// thread loads each group's watches as it opens, leases each chunk just before its read is
/// sent and acts on each chunk as soon as its read is back, in the order the reads finish, so
/// a slow or hanging read holds only its own chunk (and the run goes on at most
/// [`GROUPS_AHEAD`](super::window::GROUPS_AHEAD) groups past it). Until a first chunk has been acted on,
/// one read goes at a time: a run whose forge refuses the token or has no budget left learns
/// it from one request, and a small run (two chunks) reads, acts and records one chunk before
/// reading the next.
#[expect(
    clippy::too_many_lines,
    reason = "the read pool's one loop: filling the pool and taking an answer share its state"
)]
pub(super) fn tick_due(app: &mut App, due: Vec<Due>, run: &mut Run<'_, '_>) -> Result<()> {
    let mut waiting: std::collections::VecDeque<PendingGroup> = group::groups(app, due).into();
    pool::with_pool(READS_IN_FLIGHT, read_in_pool, |pool| {
        let mut open: Vec<Group> = Vec::new();
        let mut reach = Window::default();
        let mut reading: BTreeMap<usize, Reading> = BTreeMap::new();
        let mut awaiting: BTreeMap<usize, Awaiting> = BTreeMap::new();
        let mut line = arm::Line::default();
        let (mut groups_started, mut chunks_formed) = (0, 0);
        let mut acted = false;
        loop {
            let window = if acted { READS_IN_FLIGHT } else { 1 };
            // Chunks waiting for their armings hold their decided PRs: no more is read while
            // as many wait as reads may be out.
            while !stopped(run.opts)
                && pool.in_flight() < window
                && line.waiting() < READS_IN_FLIGHT
            {
                if let Some(g) = open
                    .iter_mut()
                    .find(|g| g.summaries.is_some() && !g.chunks.is_empty())
                {
                    let chunk = match g.chunks.pop_front() {
                        Some(Formed::Full(chunk)) => chunk,
                        Some(Formed::Settled(settled)) => {
                            let seq = settled.seq;
                            let rest = quiet::record(app, settled, run);
                            if rest.is_empty() {
                                run.outcomes.chunk_done(seq, Vec::new());
                                continue;
                            }
                            // The PRs it did not record go the full way, in its place.
                            let watches = app.store.watches_by_ids(&rest)?;
                            Chunk { seq, watches }
                        }
                        None => continue,
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
                        forge_failures(read::finish_chunk(app, plan, summaries, Vec::new(), false))
                    } else {
                        match app.forges.shared(kind, &app.config) {
                            Ok(forge) => {
                                pool.send(PoolRead::Snapshots {
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
                                .map(|_| Err(TickFailure::Setup(e.clone())))
                                .collect(),
                        }
                    };
                    acted |= on_chunk_read(
                        app,
                        pool,
                        (&mut awaiting, &mut line),
                        seq,
                        leased,
                        reads,
                        run,
                    )?;
                    continue;
                }
                if !reach.may_open(run.outcomes.handed_on()) {
                    break;
                }
                let Some(next) = waiting.pop_front() else {
                    break;
                };
                // The group's watches as they are now, glanced at only when it is read.
                let Some((mut group, kind, requests)) =
                    Group::open(app, &next, (groups_started, chunks_formed))?
                else {
                    continue;
                };
                groups_started += 1;
                chunks_formed += group.ids.len();
                reach.opened(chunks_formed);
                match app.forges.shared(kind, &app.config) {
                    Ok(forge) => pool.send(PoolRead::Summaries {
                        group: group.id,
                        forge,
                        requests,
                    }),
                    // The chunks' reads report why.
                    Err(_) => group.chunk(Summaries::default(), app, true, run)?,
                }
                open.push(group);
            }
            open.retain(|g| !g.finished());
            if let Some((chunk, arming)) = line.next() {
                pool.send(PoolRead::Arm { chunk, arming });
            }
            let Some(answer) = pool.recv() else {
                break;
            };
            match answer {
                Answer::Summaries { group, answer } => {
                    if let Some(g) = open.iter_mut().find(|g| g.id == group) {
                        let hints = std::mem::take(&mut g.hints);
                        let summaries = Summaries::new(&g.ids, hints, answer);
                        g.chunk(summaries, app, run.opts.fix_asked, run)?;
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
                    let reads = forge_failures(read::finish_chunk(
                        app,
                        plan,
                        summaries,
                        answer,
                        !run.opts.dry_run,
                    ));
                    acted |= on_chunk_read(
                        app,
                        pool,
                        (&mut awaiting, &mut line),
                        chunk,
                        leased,
                        reads,
                        run,
                    )?;
                }
                Answer::Notes {
                    chunk,
                    notes,
                    listed,
                } => {
                    let Some(a) = awaiting.get_mut(&chunk) else {
                        continue;
                    };
                    a.out -= 1;
                    a.answers.listed(listed);
                    for job in std::mem::take(&mut a.waiting) {
                        let notes = notes.clone();
                        pool.send(PoolRead::Logs { chunk, job, notes });
                        a.out += 1;
                    }
                    acted |= chunk_back(app, pool, (&mut awaiting, &mut line), chunk, run)?;
                }
                Answer::Armed { chunk, results } => {
                    if let Some((steps, answers)) = line.answered(chunk, results) {
                        apply_chunk(app, chunk, steps, answers, run);
                        acted = true;
                    }
                }
                Answer::Logs { chunk, read } => {
                    let Some(a) = awaiting.get_mut(&chunk) else {
                        continue;
                    };
                    a.ahead.extend(read);
                    a.out -= 1;
                    acted |= chunk_back(app, pool, (&mut awaiting, &mut line), chunk, run)?;
                }
                Answer::Ahead { chunk, done } => {
                    let Some(a) = awaiting.get_mut(&chunk) else {
                        continue;
                    };
                    a.answers.add(done);
                    a.out -= 1;
                    acted |= chunk_back(app, pool, (&mut awaiting, &mut line), chunk, run)?;
                }
            }
        }
        Ok(())
    })
}

/// A chunk just read: the failed checks' logs its fresh reads need and the database lacks
/// are read ahead on the pool, the annotations of all of them first in one request, then one
/// job per PR; when they are back, the chunk's stage ahead (see [`chunk_back`]). Whether it was
/// acted on (see [`act_on_chunk`]).
fn on_chunk_read(
    app: &mut App,
    pool: &mut pool::Pool<PoolRead, Answer>,
    (awaiting, line): (&mut BTreeMap<usize, Awaiting>, &mut arm::Line),
    chunk: usize,
    leased: Vec<(Watch, Option<Lease>)>,
    reads: Vec<Result<Read, TickFailure>>,
    run: &mut Run<'_, '_>,
) -> Result<bool> {
    let jobs = log_jobs(app, &leased, &reads, run);
    let (mut runs, mut asks) = (Vec::new(), Vec::new());
    for j in &jobs {
        let unread = detect::unread_runs(&j.snapshot, &j.policy, &j.cache);
        asks.extend(j.ask.clone().filter(|_| !unread.is_empty()));
        runs.extend(unread);
    }
    let (waiting, out) = match jobs.first().map(|j| j.forge.clone()) {
        Some(forge) if !runs.is_empty() => {
            pool.send(PoolRead::Notes {
                chunk,
                forge,
                runs,
                asks,
            });
            (jobs, 1)
        }
        _ => {
            let out = jobs.len();
            for job in jobs {
                pool.send(PoolRead::Logs {
                    chunk,
                    job,
                    notes: detect::Notes::new(),
                });
            }
            (Vec::new(), out)
        }
    };
    awaiting.insert(
        chunk,
        Awaiting {
            leased,
            reads,
            waiting,
            ahead: BTreeMap::new(),
            inputs: None,
            answers: ahead::Answers::default(),
            out,
        },
    );
    chunk_back(app, pool, (awaiting, line), chunk, run)
}

/// The log reads a chunk's fresh reads need: one per PR whose failed checks' logs the
/// database lacks (all of one forge, whose client each carries).
fn log_jobs(
    app: &mut App,
    leased: &[(Watch, Option<Lease>)],
    reads: &[Result<Read, TickFailure>],
    run: &Run<'_, '_>,
) -> Vec<LogJob> {
    let mut jobs = Vec::new();
    // A stopping run acts on nothing more: it reads nothing ahead. A PR whose stored state is
    // damaged is never detected, and a kept read may be read again, so neither is read ahead
    // either.
    if stopped(run.opts) {
        return jobs;
    }
    for ((watch, _), read) in leased.iter().zip(reads) {
        let Ok(Read::Fresh { snapshot, .. }) = read else {
            continue;
        };
        if watch.unreadable.is_some() {
            continue;
        }
        let policy = app.policy_for(watch);
        let Some(keys) = detect::wanted_logs(snapshot, &policy) else {
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
        // Without a client the acting phase reports why.
        if let (true, Ok(forge)) = (missing, app.forges.shared(watch.pr.forge, &app.config)) {
            jobs.push(LogJob {
                ask: ahead::ask(watch, snapshot, &policy),
                forge,
                snapshot: Box::new(snapshot.clone()),
                policy: Box::new(policy),
                cache,
            });
        }
    }
    jobs
}

/// A chunk whose reads ahead are all back moves on. Once its logs are: they are kept for the
/// next ticks in one commit (a cache, so a commit that fails only means they are read again
/// next tick; a dry run keeps none), its inputs are loaded and its PRs decided ahead, and the
/// jobs those decisions ask for are sent (see [`ahead`]). Once those are back too (or when
/// there are none), it is acted on. Whether it was acted on (a chunk whose armings are out is
/// not yet).
fn chunk_back(
    app: &mut App,
    pool: &mut pool::Pool<PoolRead, Answer>,
    (awaiting, line): (&mut BTreeMap<usize, Awaiting>, &mut arm::Line),
    chunk: usize,
    run: &mut Run<'_, '_>,
) -> Result<bool> {
    if awaiting.get(&chunk).is_none_or(|a| a.out > 0) {
        return Ok(false);
    }
    let Some(mut a) = awaiting.remove(&chunk) else {
        return Ok(false);
    };
    if let Some(mut inputs) = a.inputs {
        // Other chunks were recorded while its jobs were out: whose turn it is may have moved.
        inputs.turns = chunk_turns(app, &a.leased, &a.reads)?;
        let inputs = (inputs, a.answers);
        return Ok(act_on_chunk(
            app, line, chunk, a.leased, a.reads, inputs, run,
        ));
    }
    if !run.opts.dry_run {
        let _ = app.store.batch(|store| {
            for (key, log) in &a.ahead {
                detect::LogCache::keep_log(store, key.clone(), log.clone());
            }
            Ok(())
        });
    }
    let turns = chunk_turns(app, &a.leased, &a.reads)?;
    let watches: Vec<&Watch> = a.leased.iter().map(|(w, _)| w).collect();
    let ahead_logs = std::mem::take(&mut a.ahead);
    let mut inputs =
        pr::ChunkInputs::load(app, &watches, &a.reads, (turns, run.config), ahead_logs);
    let jobs = pr::ahead_jobs(
        app,
        &a.leased,
        &a.reads,
        &mut inputs,
        &mut a.answers,
        run.opts,
    );
    if jobs.is_empty() {
        let inputs = (inputs, a.answers);
        return Ok(act_on_chunk(
            app, line, chunk, a.leased, a.reads, inputs, run,
        ));
    }
    a.out = jobs.len();
    for job in jobs {
        pool.send(PoolRead::Ahead { chunk, job });
    }
    a.inputs = Some(inputs);
    awaiting.insert(chunk, a);
    Ok(false)
}

/// Detect → decide for every PR of a read chunk, in the chunk's order; the armings their plans
/// ask first are asked together on the pool ([`arm`]) and the chunk waits for them, else each
/// plan is applied at once and the chunk's outcomes recorded in one commit (each forge
/// write's intent was recorded before the write) and handed on. A stop asked for releases
/// the leases of the PRs not yet decided. Whether the chunk was acted on.
fn act_on_chunk(
    app: &mut App,
    line: &mut arm::Line,
    chunk: usize,
    leased: Vec<(Watch, Option<Lease>)>,
    reads: Vec<Result<Read, TickFailure>>,
    (mut inputs, mut answers): (pr::ChunkInputs, ahead::Answers),
    run: &mut Run<'_, '_>,
) -> bool {
    let mut steps = Vec::with_capacity(leased.len());
    let mut unasked = Vec::new();
    for ((watch, lease), read) in leased.into_iter().zip(reads) {
        run.ticked(&watch.pr);
        if stopped(run.opts) {
            unasked.extend(lease);
            continue;
        }
        let ahead = answers.take(watch.id);
        steps.push((
            pr::decide(app, watch, (read, ahead), &mut inputs, run.opts),
            lease,
        ));
    }
    match arm::prepare(app, &steps, run.opts) {
        arm::Armings::Ready(answers) => {
            apply_chunk(app, chunk, (steps, unasked), answers, run);
            true
        }
        arm::Armings::Send(places, arming) => {
            line.park(chunk, (steps, unasked), places, arming);
            false
        }
    }
}

/// Applies each decided plan of a chunk (`answers`: to the arming each asks first, when it
/// was asked together), then records the chunk's outcomes in one commit and hands them on.
fn apply_chunk(
    app: &mut App,
    chunk: usize,
    (steps, unasked): arm::Steps,
    answers: Vec<Option<crate::model::outcome::Outcome>>,
    run: &mut Run<'_, '_>,
) {
    let acted = steps
        .into_iter()
        .zip(answers)
        .map(|((step, lease), armed)| (pr::act(app, step, armed, run.opts), lease))
        .collect();
    let outcomes = record::chunk(app, acted, unasked);
    run.outcomes.chunk_done(chunk, outcomes);
}

/// Takes the leases of one chunk just before it is read; a lease whose holder's process is
/// gone (on this host) is taken over; watches another run holds are counted, with their
/// holder, and left out. A dry run takes none.
fn take_leases(
    app: &mut App,
    chunk: Chunk,
    run: &mut Run<'_, '_>,
) -> Result<Vec<(Watch, Option<Lease>)>> {
    if run.opts.dry_run {
        return Ok(chunk.watches.into_iter().map(|w| (w, None)).collect());
    }
    let (holder, summary) = (run.holder, &mut *run.summary);
    let ids: Vec<i64> = chunk.watches.iter().map(|w| w.id).collect();
    // The chunk's leases in one commit, before anything is read.
    let asked = app
        .store
        .batch(|store| store.lease_all(&ids, holder, LEASE_SECS, &Holder::gone_here))?;
    let mut leased = Vec::with_capacity(chunk.watches.len());
    for (w, (_, lease)) in chunk.watches.into_iter().zip(asked) {
        match lease {
            Leased::Taken(lease) => leased.push((w, Some(lease))),
            Leased::TakenOver(lease, was) => {
                summary.taken_over.push(was);
                leased.push((w, Some(lease)));
            }
            Leased::Held(by) => summary.busy.push(by),
        }
    }
    Ok(leased)
}

/// Whose turn it is to update a behind branch: from this chunk's snapshots where there are
/// some, else from the stored state (which holds what earlier chunks of this tick recorded).
fn chunk_turns(
    app: &App,
    leased: &[(Watch, Option<Lease>)],
    reads: &[Result<Read, TickFailure>],
) -> Result<Vec<i64>> {
    let read: Vec<(&Watch, &Snapshot)> = leased
        .iter()
        .zip(reads)
        // A settled read stands for a decision that left the stored state as its snapshot
        // says: the stored state tells.
        .filter_map(|((w, _), r)| Some((w, r.as_ref().ok()?.snapshot()?)))
        .collect();
    let held: Vec<&Watch> = read.iter().map(|(w, _)| *w).collect();
    let all = app.store.armed_in_line(&held)?;
    let fresh: BTreeMap<i64, &Snapshot> = read.into_iter().map(|(w, s)| (w.id, s)).collect();
    Ok(decide::update_turns(&all, &fresh))
}

/// A chunk's reads, each failure the forge's.
fn forge_failures(reads: Vec<Result<Read, ForgeError>>) -> Vec<Result<Read, TickFailure>> {
    reads
        .into_iter()
        .map(|r| r.map_err(TickFailure::Forge))
        .collect()
}

//! Two-phase reads: a cheap summary of every PR of a chunk first, then the full snapshot only
//! for the PRs whose summary differs from the one kept with their last full read (or that have
//! none). A PR whose summary is unchanged is decided on its kept snapshot; the tick reads it
//! in full again before acting on it (see [`crate::tick`]), so every forge write and message
//! rests on a fresh read. A summary that cannot tell (an error, a forge without summaries, a
//! connection longer than its page) always falls through to the full read. A group's summary
//! is compared with its kept reads' hints; a chunk loads only the kept snapshots it reuses,
//! and checks each again, whole.

use std::collections::BTreeMap;

use crate::app::App;
use crate::forge::{ForgeError, SnapshotRequest, Summary, SummaryRequest};
use crate::model::watch::Watch;
use crate::model::{ForgeKind, Snapshot};
use crate::store::{Glance, KeptHints, Settled};

/// One PR's read for this tick.
#[derive(Debug, Clone)]
pub enum Read {
    /// Read in full now; `kept` is its summary's fingerprint as kept beside it, when it is.
    Fresh {
        snapshot: Snapshot,
        kept: Option<String>,
    },
    /// The kept read: its summary is the one just read. `summary` is its fingerprint as
    /// kept, `settled` the quiet decision last made on it (which did not hold).
    Kept {
        snapshot: Snapshot,
        summary: String,
        settled: Option<Settled>,
    },
    /// The kept read, not loaded: its summary is the one just read, and the quiet decision
    /// last made on it holds over the watch's stored row now; the tick makes it again only if
    /// its context changed. `summary` is the kept read's fingerprint, as kept.
    Settled { settled: Settled, summary: String },
}

impl Read {
    /// The snapshot to decide on, when it is loaded.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        match self {
            Read::Fresh { snapshot, .. } | Read::Kept { snapshot, .. } => Some(snapshot),
            Read::Settled { .. } => None,
        }
    }
}

/// What the full read of `w` asks: the branches seen last tick let the client compare them
/// in the same request (never for a fork, whose branch name means nothing in the base), and
/// which checks the base requires when its job judges those alone.
pub fn snapshot_request(app: &App, w: &Watch) -> SnapshotRequest {
    let s = &w.status;
    SnapshotRequest {
        pr: w.pr.clone(),
        branches: s
            .base_ref
            .clone()
            .zip(s.head_ref.clone())
            .filter(|_| !s.memory.cross_repository),
        required_checks: app.policy_for(w).checks == crate::config::ChecksScope::Required,
    }
}

/// What a watch's policy comes from: its job, and its own agent and auto-fix overrides (see
/// [`App::policy_of`]).
pub(super) type PolicyKey<'a> = (Option<&'a str>, Option<&'a str>, Option<bool>);

/// [`PolicyKey`] of a watch at a glance.
pub(super) fn policy_key(g: &Glance) -> PolicyKey<'_> {
    (g.job.as_deref(), g.agent.as_deref(), g.auto_fix)
}

/// Whether the watches of each job and overrides judge the checks the base requires alone:
/// a group's policies, each worked out once.
#[derive(Debug, Default)]
struct RequiredChecks<'a>(BTreeMap<PolicyKey<'a>, bool>);

impl<'a> RequiredChecks<'a> {
    fn of(&mut self, app: &App, g: &'a Glance) -> bool {
        let key = policy_key(g);
        *self.0.entry(key).or_insert_with(|| {
            app.policy_of(key.0, key.1, key.2).checks == crate::config::ChecksScope::Required
        })
    }
}

/// Whether a kept read still holds: its summary is the one just read, the branches are as far
/// apart as it says, and as many threads are unresolved (where the summary counted them).
pub fn reusable(kept: Option<&KeptHints>, summary: Option<&Summary>) -> bool {
    matches!((kept, summary), (Some(k), Some(s))
        if k.summary == s.fingerprint
            && k.behind_by == s.behind_by
            && s.unresolved_threads
                .is_none_or(|n| n == k.unresolved_threads.len()))
}

/// A group's summaries, read before its chunks, with the kept reads' hints they are compared
/// with (each chunk loads the kept snapshots it reuses).
#[derive(Debug)]
pub struct Summaries {
    /// Fingerprint by watch id (absent: the summary cannot tell); an error when the forge
    /// cannot be read at all.
    by_watch: Result<BTreeMap<i64, Summary>, ForgeError>,
    hints: BTreeMap<i64, KeptHints>,
}

impl Default for Summaries {
    fn default() -> Self {
        Summaries {
            by_watch: Ok(BTreeMap::new()),
            hints: BTreeMap::new(),
        }
    }
}

/// What a group's summary read asks (all of one forge), with the kept reads' hints its
/// answers are compared with: a PR whose kept read shows unresolved threads has each of them
/// asked about. `glances` are the group's watches as loaded before it is read ([`Glance`]),
/// with `hints`, their kept reads' (see [`crate::store::Store::glances`]),
/// [`snapshot_request`]'s full read asked as it would ask it.
pub fn summary_requests(
    app: &App,
    glances: &[Glance],
    hints: BTreeMap<i64, KeptHints>,
) -> (Vec<i64>, BTreeMap<i64, KeptHints>, Vec<SummaryRequest>) {
    let ids: Vec<i64> = glances.iter().map(|g| g.id).collect();
    let mut required = RequiredChecks::default();
    let requests = glances
        .iter()
        .map(|g| SummaryRequest {
            read: SnapshotRequest {
                pr: g.pr.clone(),
                branches: g.branches.clone(),
                required_checks: required.of(app, g),
            },
            threads: hints
                .get(&g.id)
                .map_or_else(Vec::new, |k| k.unresolved_threads.clone()),
            behind_by: hints.get(&g.id).and_then(|k| k.behind_by),
        })
        .collect();
    (ids, hints, requests)
}

impl Summaries {
    /// The settled read of watch `id` at `now`, when its kept read need not be loaded: the
    /// summary just read is the kept read's and the quiet decision last made on it holds over
    /// the watch's stored row, of digest `row` (the acting phase makes it again only if its
    /// context changed).
    pub fn settled(&self, id: i64, row: Option<u64>, now: crate::model::Instant) -> Option<Read> {
        let (settled, summary) = self.settled_on(id, row, now)?;
        Some(Read::Settled {
            settled: settled.clone(),
            summary: summary.to_owned(),
        })
    }

    /// [`Summaries::settled`]'s decision and the kept read's fingerprint, borrowed.
    pub(super) fn settled_on(
        &self,
        id: i64,
        row: Option<u64>,
        now: crate::model::Instant,
    ) -> Option<(&Settled, &str)> {
        let by_watch = self.by_watch.as_ref().ok()?;
        let kept = self.hints.get(&id)?;
        let settled = kept.settled.as_ref().filter(|s| s.holds_over(now, row))?;
        reusable(Some(kept), by_watch.get(&id)).then_some((settled, kept.summary.as_str()))
    }

    /// A group's summaries from the forge's answer to [`summary_requests`].
    pub fn new(
        ids: &[i64],
        hints: BTreeMap<i64, KeptHints>,
        answer: Result<Vec<Option<Summary>>, ForgeError>,
    ) -> Self {
        let by_watch = answer.map(|found| {
            ids.iter()
                .zip(found)
                .filter_map(|(id, s)| s.map(|s| (*id, s)))
                .collect()
        });
        Summaries { by_watch, hints }
    }
}

/// A chunk's read half done: each PR's kept read, or a place for its full read.
#[derive(Debug)]
pub struct ChunkReads {
    kind: ForgeKind,
    slots: Vec<Option<Result<Read, ForgeError>>>,
    /// The PRs read in full, in the order of the requests.
    wanted: Vec<i64>,
}

/// The first half of reading one chunk (all of one forge) against its group's `summaries`:
/// the PRs whose kept read holds take it (with `fresh`, none does), and the requests for the
/// others' full reads. An answer is one snapshot per request, in order, given to
/// [`finish_chunk`].
pub fn plan_chunk(
    app: &mut App,
    watches: &[&Watch],
    summaries: &mut Summaries,
    fresh: bool,
) -> (ChunkReads, Vec<SnapshotRequest>) {
    let kind = watches.first().map_or(ForgeKind::GitHub, |w| w.pr.forge);
    let mut plan = ChunkReads {
        kind,
        slots: Vec::with_capacity(watches.len()),
        wanted: Vec::new(),
    };
    let by_watch = match &summaries.by_watch {
        Ok(by_watch) => by_watch,
        Err(e) => {
            if matches!(e, ForgeError::Unauthorized(_)) {
                // A rotated token: the next group reads it afresh.
                app.forges.forget(kind);
            }
            plan.slots = watches.iter().map(|_| Some(Err(e.clone()))).collect();
            return (plan, Vec::new());
        }
    };
    // A kept read whose last decision holds is not loaded.
    let now = app.now;
    let settled: Vec<Option<Read>> = watches
        .iter()
        .map(|w| {
            if fresh {
                None
            } else {
                summaries.settled(w.id, w.row_digest.map(|r| r.row), now)
            }
        })
        .collect();
    // The kept snapshots this chunk may reuse, loaded now; each is checked again, whole, in
    // case another run kept a newer read since the group's hints were loaded.
    let candidates: Vec<i64> = watches
        .iter()
        .zip(&settled)
        .filter(|(w, s)| {
            s.is_none() && !fresh && reusable(summaries.hints.get(&w.id), by_watch.get(&w.id))
        })
        .map(|(w, _)| w.id)
        .collect();
    let mut kept = if candidates.is_empty() {
        BTreeMap::new()
    } else {
        app.store.kept_reads(&candidates).unwrap_or_default()
    };
    let mut requests = Vec::new();
    for (w, settled) in watches.iter().zip(settled) {
        let holds = kept.get(&w.id).is_some_and(|k| {
            let hints = KeptHints::of(&k.summary, &k.snapshot);
            reusable(Some(&hints), by_watch.get(&w.id))
        });
        if let Some(settled) = settled {
            plan.slots.push(Some(Ok(settled)));
        } else if let Some(k) = kept.remove(&w.id).filter(|_| holds) {
            // What was settled on it, when it is the read the hints were loaded with.
            let settled = summaries
                .hints
                .get(&w.id)
                .filter(|h| h.summary == k.summary)
                .and_then(|h| h.settled.clone());
            plan.slots.push(Some(Ok(Read::Kept {
                snapshot: k.snapshot,
                summary: k.summary,
                settled,
            })));
        } else {
            plan.slots.push(None);
            plan.wanted.push(w.id);
            let mut request = snapshot_request(app, w);
            // A first look compares the branches its summary named in the same request.
            if request.branches.is_none() {
                request.branches = by_watch.get(&w.id).and_then(|s| s.branches.clone());
            }
            requests.push(request);
        }
    }
    (plan, requests)
}

/// The second half: one result per watch of the chunk, in order, from the forge's `answers`
/// to the requests [`plan_chunk`] made. With `keep` the full reads are kept with their
/// summaries for the next tick (a dry run keeps nothing).
pub fn finish_chunk(
    app: &mut App,
    plan: ChunkReads,
    summaries: &Summaries,
    mut answers: Vec<Result<Snapshot, ForgeError>>,
    keep: bool,
) -> Vec<Result<Read, ForgeError>> {
    let ChunkReads {
        kind,
        slots,
        wanted,
    } = plan;
    answers.resize_with(wanted.len(), || {
        Err(ForgeError::Unexpected("no answer for this PR".into()))
    });
    let by_watch = summaries.by_watch.as_ref().ok();
    let mut answers = wanted.into_iter().zip(answers);
    // The full reads to keep: (watch id, place in `out`).
    let mut fresh = Vec::new();
    let out: Vec<Result<Read, ForgeError>> = slots
        .into_iter()
        .enumerate()
        .map(|(place, slot)| {
            if let Some(read) = slot {
                return read;
            }
            let Some((id, answer)) = answers.next() else {
                return Err(ForgeError::Unexpected("no answer for this PR".into()));
            };
            let summary = by_watch.and_then(|b| b.get(&id));
            if keep && answer.is_ok() {
                fresh.push((id, place));
            }
            answer.map(|snapshot| Read::Fresh {
                snapshot,
                kept: summary
                    .filter(|_| keep)
                    .map(|s| crate::store::kept_summary(&s.fingerprint)),
            })
        })
        .collect();
    if !fresh.is_empty() {
        // A cache, kept in one commit: a failed write undoes the chunk's, which only means
        // its PRs are read in full next tick (each kept read stays beside its own hints).
        let _ = app.store.batch(|store| {
            for (id, place) in &fresh {
                let Some(Ok(Read::Fresh { snapshot, .. })) = out.get(*place) else {
                    continue;
                };
                match by_watch.and_then(|b| b.get(id)) {
                    Some(summary) => store.keep_read(*id, &summary.fingerprint, snapshot)?,
                    None => store.forget_read(*id)?,
                }
            }
            Ok(())
        });
    }
    if out
        .iter()
        .any(|a| matches!(a, Err(ForgeError::Unauthorized(_))))
    {
        // A rotated token: the next batch reads it afresh.
        app.forges.forget(kind);
    }
    out
}

/// Reads one PR in full again (a kept read whose plan wants to act).
pub fn reread(app: &mut App, watch: &Watch) -> Result<Snapshot, ForgeError> {
    let request = snapshot_request(app, watch);
    let forge = app
        .forges
        .get(watch.pr.forge, &app.config)
        .map_err(ForgeError::Unauthorized)?;
    forge
        .snapshots(&[request])
        .pop()
        .unwrap_or_else(|| Err(ForgeError::Unexpected("no answer for this PR".into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(summary: &str, behind_by: Option<u64>) -> KeptHints {
        let mut snapshot = crate::core::decide::tests::snap("aaa");
        snapshot.behind_by = behind_by;
        KeptHints::of(summary, &snapshot)
    }

    fn seen(fingerprint: &str, behind_by: Option<u64>) -> Summary {
        Summary {
            fingerprint: fingerprint.to_owned(),
            behind_by,
            unresolved_threads: None,
            branches: None,
        }
    }

    #[test]
    fn a_kept_read_holds_only_while_its_summary_is_the_one_just_read() {
        let k = kept("a", Some(0));
        let cases: [(Option<&KeptHints>, Option<Summary>, bool); 7] = [
            (Some(&k), Some(seen("a", Some(0))), true),
            (Some(&k), Some(seen("b", Some(0))), false),
            (Some(&k), Some(seen("a", Some(1))), false),
            (Some(&k), Some(seen("a", None)), false),
            (Some(&k), None, false),
            (None, Some(seen("a", Some(0))), false),
            (None, None, false),
        ];
        for (kept, summary, want) in cases {
            assert_eq!(reusable(kept, summary.as_ref()), want, "{summary:?}");
        }
        // The kept snapshot has no unresolved thread: a summary counting one does not match.
        let counted = |n| Summary {
            unresolved_threads: Some(n),
            ..seen("a", Some(0))
        };
        assert!(reusable(Some(&k), Some(&counted(0))));
        assert!(!reusable(Some(&k), Some(&counted(1))));
    }
}

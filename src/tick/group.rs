//! A tick's groups and chunks. The due watches are grouped, forge by forge, into one summary
//! read each; a group's watches are loaded at a glance when it opens ([`Glance`]: what its
//! summary read asks, and its rows' digests), and once its summaries are back it is cut into
//! chunks. When the run's consumer passes over settled PRs (see
//! [`super::outcomes::Report::wants_settled`]), the PRs whose settled decisions hold go into
//! one chunk of their own, recorded without loading their rows ([`super::quiet`]); the others
//! are loaded in full and cut into chunks of at most one read batch of PRs read in full or
//! whose kept read is loaded, each with any number of settled PRs besides.

use std::collections::{BTreeMap, VecDeque};

use anyhow::Result;

use super::quiet::SettledChunk;
use super::read::{self, Summaries};
use super::run::Run;
use crate::app::App;
use crate::forge::{DEFAULT_READ_BATCH, SummaryRequest};
use crate::model::ForgeKind;
use crate::model::watch::Watch;
use crate::store::{Due, Glance, KeptHints};

/// A group not yet read: up to one summary read of one forge's due watches, by id, and the
/// size of its chunks.
pub(super) struct PendingGroup {
    ids: Vec<i64>,
    chunk_size: usize,
}

/// A tick's unit of work: up to one read batch of one forge's due watches, numbered in the
/// order the run forms them (its outcomes are handed on in that order).
pub(super) struct Chunk {
    pub(super) seq: usize,
    pub(super) watches: Vec<Watch>,
}

/// A chunk as its group forms it: its watches loaded in full, or its settled PRs at a glance.
pub(super) enum Formed {
    Full(Chunk),
    Settled(SettledChunk),
}

/// A group under way: its kept reads' hints and its watches at a glance until its summaries
/// arrive, then its chunks not yet read, and how many are being read.
pub(super) struct Group {
    pub(super) id: usize,
    pub(super) ids: Vec<i64>,
    pub(super) hints: BTreeMap<i64, KeptHints>,
    pub(super) summaries: Option<Summaries>,
    /// Its watches at a glance, in due order, until they are chunked.
    glances: Vec<Glance>,
    /// The first of the chunk numbers kept for it (one per watch, at most), and its chunks'
    /// size in full reads.
    first_seq: usize,
    chunk_size: usize,
    pub(super) chunks: VecDeque<Formed>,
    pub(super) reading: usize,
}

impl Group {
    /// Opens `pending` as group `id`, its chunks numbered from `first_seq`: its watches that
    /// still exist at a glance, its forge and its summary read's requests (`None` when none
    /// of its watches is left).
    pub(super) fn open(
        app: &App,
        pending: &PendingGroup,
        (id, first_seq): (usize, usize),
    ) -> Result<Option<(Group, ForgeKind, Vec<SummaryRequest>)>> {
        let (glances, hints) = app.store.glances(&pending.ids)?;
        let Some(kind) = glances.first().map(|g| g.pr.forge) else {
            return Ok(None);
        };
        let (ids, hints, requests) = read::summary_requests(app, &glances, hints);
        let group = Group {
            id,
            ids,
            hints,
            summaries: None,
            glances,
            first_seq,
            chunk_size: pending.chunk_size,
            chunks: VecDeque::new(),
            reading: 0,
        };
        Ok(Some((group, kind, requests)))
    }

    pub(super) fn finished(&self) -> bool {
        self.summaries.is_some() && self.chunks.is_empty() && self.reading == 0
    }

    /// Its summaries have come (or cannot; with `fresh`, no kept read holds): its watches are
    /// cut, in due order, into chunks (see the module's doc). The chunk numbers kept for it
    /// and not used are handed on empty.
    pub(super) fn chunk(
        &mut self,
        summaries: Summaries,
        app: &App,
        fresh: bool,
        run: &mut Run<'_, '_>,
    ) -> Result<()> {
        let now = app.now;
        let mut seq = self.first_seq;
        let glances = std::mem::take(&mut self.glances);
        let light = !fresh && !run.opts.dry_run && !run.outcomes.wants_settled();
        let mut full: Vec<i64> = Vec::with_capacity(glances.len());
        let mut settled = Vec::new();
        for g in glances {
            let holds = light && !g.damaged;
            match holds
                .then(|| summaries.settled_on(g.id, Some(g.row_digest), now))
                .flatten()
            {
                Some((decision, _)) => {
                    let decision = decision.clone();
                    settled.push((g, decision));
                }
                None => full.push(g.id),
            }
        }
        if !settled.is_empty() {
            self.chunks
                .push_back(Formed::Settled(SettledChunk { seq, prs: settled }));
            seq += 1;
        }
        let watches = if full.is_empty() {
            Vec::new()
        } else {
            app.store.watches_by_ids(&full)?
        };
        let mut current: Vec<Watch> = Vec::new();
        let mut heavy = 0;
        for w in watches {
            let settled = !fresh
                && summaries
                    .settled_on(w.id, w.row_digest.map(|r| r.row), now)
                    .is_some();
            if !settled && heavy == self.chunk_size {
                self.chunks.push_back(Formed::Full(Chunk {
                    seq,
                    watches: std::mem::take(&mut current),
                }));
                seq += 1;
                heavy = 0;
            }
            heavy += usize::from(!settled);
            current.push(w);
        }
        let kept = self.first_seq + self.ids.len();
        if !current.is_empty() {
            self.chunks.push_back(Formed::Full(Chunk {
                seq,
                watches: current,
            }));
            seq += 1;
        }
        for unused in seq..kept {
            run.outcomes.chunk_done(unused, Vec::new());
        }
        self.summaries = Some(summaries);
        Ok(())
    }
}

/// Splits the due watches into groups the size of each forge's summary read, forge by forge,
/// keeping the due order within a forge.
pub(super) fn groups(app: &mut App, due: Vec<Due>) -> Vec<PendingGroup> {
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
        out.extend(ids.chunks(group).map(|ids| PendingGroup {
            ids: ids.to_vec(),
            chunk_size: size,
        }));
    }
    out
}

//! A group's settled PRs recorded without loading their rows. A PR whose summary matches its
//! kept read and whose quiet decision holds over its row as glanced at ([`Glance`]) is
//! checked once more in this run's context (its policy, owner and agent, whether it is its
//! turn to update a behind branch, no recorded intent, not the owner's `fix`), each distinct
//! context worked out once per chunk; those that hold are recorded together in one statement
//! ([`crate::store::Store::record_settled`]: optimistic, leaving alone a row another live run
//! holds or that changed since it was glanced at), never parsing their rows. A settled
//! decision is only ever kept over a row its tick left as it was (see
//! [`super::settle::Settlement::after`]), so such a tick has no budget deferral to end and no
//! error notice to send. The PRs it does not record are ticked the full way by the caller:
//! loaded, leased (or counted held), and decided again where they must be.

use std::collections::{BTreeMap, BTreeSet};

use super::run::Run;
use super::settle;
use super::{inputs, read};
use crate::app::App;
use crate::store::{Glance, Settled};

/// A group's settled PRs, in due order, each with the decision its kept read settled on.
#[derive(Debug)]
pub(super) struct SettledChunk {
    pub(super) seq: usize,
    pub(super) prs: Vec<(Glance, Settled)>,
}

/// The key a chunk's contexts are worked out once for: what the policy comes from, and
/// whether it is the PR's turn to update its branch.
type ContextKey<'a> = (read::PolicyKey<'a>, bool);

/// Records the PRs of `chunk` whose settled decisions hold, in one statement, and hands them
/// on as settled (see [`super::outcomes::Report::settled`]); the ids of the others, in due
/// order, for the full way.
pub(super) fn record(app: &mut App, chunk: SettledChunk, run: &mut Run<'_, '_>) -> Vec<i64> {
    let SettledChunk { seq, prs } = chunk;
    let ids: Vec<i64> = prs.iter().map(|(g, _)| g.id).collect();
    // What cannot be told here is told the full way.
    let (Ok(intents), Ok(in_line)) = (
        app.store.open_intents_of(&ids),
        app.store.armed_in_line(&[]),
    ) else {
        return ids;
    };
    let turns: BTreeSet<i64> = crate::core::decide::update_turns(&in_line, &BTreeMap::new())
        .into_iter()
        .collect();
    let now = app.now;
    let mut contexts: BTreeMap<ContextKey<'_>, Option<u64>> = BTreeMap::new();
    let mut ticks = Vec::with_capacity(prs.len());
    for (g, settled) in &prs {
        let update_turn = turns.contains(&g.id);
        let key = (read::policy_key(g), update_turn);
        let context = *contexts.entry(key).or_insert_with(|| {
            let (job, agent, auto_fix) = key.0;
            let policy = app.policy_of(job, agent, auto_fix);
            inputs::quiet_context(app, g.pr.forge, &policy, (run.config, update_turn)).ok()
        });
        let asked = (intents.contains_key(&g.id), run.opts.fix_asked);
        let next =
            context.and_then(|c| settle::next_due(settled, Some(g.row_digest), c, asked, now));
        if let Some(next) = next {
            ticks.push((g.id, g.row_digest, next));
        }
    }
    // A statement that fails records none: each is ticked the full way, which says why.
    let recorded = if ticks.is_empty() {
        BTreeSet::new()
    } else {
        app.store
            .record_settled(&ticks, run.holder, now)
            .unwrap_or_default()
    };
    let (mut done, mut rest) = (Vec::with_capacity(recorded.len()), Vec::new());
    for (g, _) in prs {
        if !recorded.contains(&g.id) {
            rest.push(g.id);
            continue;
        }
        run.ticked(&g.pr);
        done.push(g.pr);
    }
    run.outcomes.settled_done(seq, done);
    rest
}

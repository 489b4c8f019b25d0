//! A chunk's armings asked together: of the PRs a chunk decided, those whose plan turns the
//! forge's auto-merge on before asking anything else of it have their intents recorded in one
//! commit, then are armed in as few requests as the forge allows (GitHub: one document); each
//! answer is then applied with its PR's plan by [`crate::core::outcome`], as a single write's is.
//! A write whose intent could not be recorded is not made; a request that fails as a whole
//! leaves each of its intents for the next read to reconcile.

use super::execute;
use super::pr::Step;
use super::run::RunOptions;
use crate::app::App;
use crate::model::intent::{IntentKind, IntentLog};
use crate::model::outcome::Outcome;

/// The answer to each step's first arming when it was asked together with others (one per
/// step, in order; `None`: its plan is applied as it stands). A chunk with fewer than two
/// such armings, or a dry run, asks nothing here.
pub(super) fn ask_together<L>(
    app: &mut App,
    steps: &[(Step, L)],
    opts: &RunOptions,
) -> Vec<Option<Outcome>> {
    let mut answers: Vec<Option<Outcome>> = steps.iter().map(|_| None).collect();
    let arming: Vec<(
        usize,
        i64,
        &crate::model::Snapshot,
        crate::model::MergeMethod,
    )> = steps
        .iter()
        .enumerate()
        .filter_map(|(i, (step, _))| match step {
            Step::Decided(d) => d.arming().map(|(id, snap, method)| (i, id, snap, method)),
            Step::Acted(_) => None,
        })
        .collect();
    if opts.dry_run || arming.len() < 2 {
        return answers;
    }
    let Some(kind) = arming.first().map(|(_, _, snap, _)| snap.pr.forge) else {
        return answers;
    };
    // Without a client each plan is applied as it stands, and says why.
    let Ok(forge) = app.forges.get(kind, &app.config) else {
        return answers;
    };
    let now = app.now;
    // The chunk's intents in one commit, before anything is asked.
    let recorded = app.store.batch(|store| {
        for (_, id, snap, method) in &arming {
            store.record_intent(*id, IntentKind::Arm, &snap.head.sha, method.as_str(), now)?;
        }
        Ok(())
    });
    if let Err(e) = recorded {
        for (i, _, snap, _) in &arming {
            answers[*i] = Some(Outcome::NotAsked(execute::not_recorded(
                IntentKind::Arm,
                &snap.head.sha,
                &e,
            )));
        }
        return answers;
    }
    let asked: Vec<(&crate::model::Snapshot, crate::model::MergeMethod)> = arming
        .iter()
        .map(|(_, _, snap, method)| (*snap, *method))
        .collect();
    for ((i, ..), result) in arming.iter().zip(forge.enable_auto_merge_many(&asked)) {
        answers[*i] = Some(execute::answer(result));
    }
    answers
}

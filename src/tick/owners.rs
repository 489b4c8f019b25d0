//! A forge token that changed hands: every open watch of that forge pauses
//! (`paused_reason: token_login_changed`) before anything is read or written for it, and the
//! owner is told once; `watch resume` accepts the new login (see [`crate::app::App`]).

use std::collections::BTreeSet;

use anyhow::Result;

use crate::app::App;
use crate::model::plan::Notice;
use crate::model::watch::TOKEN_LOGIN_CHANGED;
use crate::model::{ForgeKind, PrState};
use crate::store::Due;

/// The due watches left once the forges whose token changed hands are held.
pub fn hold_changed(app: &mut App, due: Vec<Due>) -> Result<Vec<Due>> {
    let kinds: BTreeSet<ForgeKind> = due.iter().map(|d| d.forge).collect();
    let mut held = BTreeSet::new();
    for kind in kinds {
        if let Some((was, now)) = app.token_login_change(kind)? {
            pause_all(app, kind, &Notice::TokenLoginChanged { was, now })?;
            held.insert(kind);
        }
    }
    Ok(due
        .into_iter()
        .filter(|d| !held.contains(&d.forge))
        .collect())
}

/// Pauses every open, running watch of `kind`, and tells the owner `notice` unless a watch
/// paused for it already did.
fn pause_all(app: &mut App, kind: ForgeKind, notice: &Notice) -> Result<()> {
    let watches: Vec<_> = app
        .store
        .watches()?
        .into_iter()
        .filter(|w| w.pr.forge == kind && w.status.state == PrState::Open)
        .collect();
    let told = watches
        .iter()
        .any(|w| w.paused && w.status.memory.paused_reason.as_deref() == Some(TOKEN_LOGIN_CHANGED));
    let headline = crate::core::report::headline(notice);
    let running: Vec<_> = watches.iter().filter(|w| !w.paused).collect();
    for w in &running {
        app.store.set_paused(&w.pr, true, app.now)?;
        app.store.update_memory(w.id, |m| {
            m.paused_reason = Some(TOKEN_LOGIN_CHANGED.to_owned());
        })?;
        app.log(&w.pr, headline.clone())?;
    }
    if let Some(first) = running.first().filter(|_| !told) {
        let payload = crate::core::report::bare_notice_payload(notice, &first.pr, &first.pr.url());
        let messages = super::execute::owner_messages(
            &app.config,
            &app.policy_for(first),
            &first.pr,
            notice,
            &payload,
            app.now,
        )?;
        app.store.enqueue(&messages)?;
    }
    Ok(())
}

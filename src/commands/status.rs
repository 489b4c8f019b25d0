//! `status` and `status PR`: every watched PR (and branch) with its pills and who holds it, or
//! one PR in detail with its history; both as the contract's JSON with `--json`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;

use crate::app::{App, usage};
use crate::holder::Holder;
use crate::model::reference::PrArg;

use super::output;

pub(super) fn status(app: &App, pr: Option<&PrArg>) -> Result<u8> {
    match pr {
        None => status_all(app)?,
        Some(pr) => status_one(app, pr)?,
    }
    Ok(0)
}

/// `status`: one line per watched PR, then the watched branches, who holds which PRs, and the
/// messages not delivered.
fn status_all(app: &App) -> Result<()> {
    let watches = app.store.watches()?;
    let branches = app.store.branch_watches()?;
    let (holders, held_lines) = held(app)?;
    if app.json {
        let mut rows = output::status_array(&watches);
        if let Some(rows) = rows.as_array_mut() {
            for (row, w) in rows.iter_mut().zip(&watches) {
                row["held_by"] = output::held_json(holders.get(&w.id));
            }
            rows.extend(branches.iter().map(crate::view::branch_view::json));
        }
        crate::outln!("{rows}")?;
        return Ok(());
    }
    if watches.is_empty() && branches.is_empty() {
        crate::outln!("nothing is watched; add a PR with `pr-monitor watch add OWNER/REPO#N`")?;
        return Ok(());
    }
    let term = crate::terminal::Term::detect();
    if !watches.is_empty() {
        crate::out!(
            "{}",
            crate::view::status_view::render(&watches, app.now, term)
        )?;
    }
    if !branches.is_empty() {
        crate::out!(
            "{}",
            crate::view::branch_view::render(&branches, app.now, term)
        )?;
    }
    if watches.is_empty() {
        return Ok(());
    }
    for line in held_lines {
        crate::outln!("{line}")?;
    }
    let problems = app.store.outbox_problems()?;
    if !problems.is_empty() {
        crate::outln!("undelivered messages:")?;
        for p in &problems {
            crate::outln!("{}", output::undelivered_line(p))?;
        }
    }
    Ok(())
}

/// `status PR`: the PR in detail, with its history, who holds it and where the agent's
/// checkout stands.
fn status_one(app: &App, pr: &PrArg) -> Result<()> {
    let pr = app.pr(pr)?;
    let w = app
        .store
        .watch(&pr)?
        .ok_or_else(|| usage(format!("{} is not watched", pr.url())))?;
    let history = app.store.history(&pr, 20)?;
    let (holders, _) = held(app)?;
    let checkout = w
        .status
        .memory
        .checkout
        .as_deref()
        .zip(w.status.head_sha.as_ref())
        .map(|(path, head)| crate::checkout::read(Path::new(path), head));
    let holder = holders.get(&w.id);
    if app.json {
        let mut v = output::status_json(&w);
        v["history"] = serde_json::to_value(&history)?;
        v["picture"] = serde_json::to_value(&w.status.memory.picture)?;
        v["held_by"] = output::held_json(holder);
        v["checkout"] = output::checkout_json(&w, checkout.as_ref());
        crate::outln!("{v}")?;
        return Ok(());
    }
    let policy_auto_fix = app
        .config
        .policy(w.job.as_deref().and_then(|j| app.config.job(j)))
        .auto_fix;
    crate::out!(
        "{}",
        output::status_detail(&w, &history, app.now, policy_auto_fix, checkout.as_ref())
    )?;
    if let Some(h) = holder {
        crate::outln!("  held by    {}", output::describe_holder(h))?;
    }
    Ok(())
}

/// The leases held now by live runs, by watch id (a lease whose holder's process is gone
/// holds nothing: the next run takes it over); and the `status` lines saying who holds how
/// many PRs (a holder whose process is gone says the next run takes its PRs over).
fn held(app: &App) -> Result<(BTreeMap<i64, Holder>, Vec<String>)> {
    let (gone, live): (Vec<_>, Vec<_>) = app
        .store
        .held()?
        .into_iter()
        .partition(|(_, h)| h.gone_here());
    let named = |v: &[(i64, Holder)]| -> Vec<Option<Holder>> {
        v.iter().map(|(_, h)| Some(h.clone())).collect()
    };
    let mut lines = output::held_lines(&named(&live));
    lines.extend(
        output::held_lines(&named(&gone))
            .into_iter()
            .map(|l| format!("{l}, whose process is gone: the next run takes them over")),
    );
    Ok((live.into_iter().collect(), lines))
}

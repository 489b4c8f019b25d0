//! The owner's commands on one PR: `fix`, `rerun`, `merge --when-ready | --cancel | --now`.
//! Merging is the owner's alone: these are the only paths that arm or merge, and no agent
//! message, inbox reply or forge comment reaches them.

use anyhow::{Result, anyhow};

use crate::app::{App, usage};
use crate::cli::MergeHow;
use crate::core::checks;
use crate::core::decide::merge as merge_rules;
use crate::model::plan::{Disarm, Notice};
use crate::model::watch::Watch;
use crate::model::{CheckState, PrRef, Snapshot};
use crate::store::{NewWatch, Selection};
use crate::tick::execute::{self, Env};
use crate::tick::{self, RunOptions};

/// The PR's head, when it is `sha` (the full id, or a prefix of at least seven characters);
/// a usage error (exit 2) when the head moved.
pub fn current_head(app: &mut App, pr: &PrRef, sha: &str) -> Result<crate::model::Sha> {
    let sha = commit_id(sha)?;
    let head = app.snapshot(pr)?.head.sha;
    same_head(&pr.url(), head, sha)
}

/// `sha` trimmed, when it is a commit id (at least seven hexadecimal digits); else a usage
/// error.
fn commit_id(sha: &str) -> Result<&str> {
    let sha = sha.trim();
    if sha.len() < 7 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(usage(format!(
            "`{sha}` is not a commit id (at least seven hexadecimal digits)"
        )));
    }
    Ok(sha)
}

/// `head`, when `sha` names it; a usage error (exit 2) saying the head of `what` moved.
fn same_head(what: &str, head: crate::model::Sha, sha: &str) -> Result<crate::model::Sha> {
    if !head
        .as_str()
        .to_ascii_lowercase()
        .starts_with(&sha.to_ascii_lowercase())
    {
        return Err(usage(format!(
            "{what}: the head moved: it is {} now, not {sha}; nothing was vouched for",
            head.short()
        )));
    }
    Ok(head)
}

/// `fix OWNER/REPO@BRANCH --head SHA`: the owner vouches for that exact head of a watched
/// branch, compare-and-set (refused with exit 2 when the head moved); the branch is looked at
/// on the next run.
pub fn vouch_branch(app: &mut App, written: &str, sha: Option<&str>) -> Result<u8> {
    let Some(sha) = sha else {
        return Err(usage(format!(
            "a branch takes `--head SHA`: `fix {written} --head SHA` vouches for that head"
        )));
    };
    let sha = commit_id(sha)?;
    let watches = app.store.branch_watches()?;
    let named: Vec<_> = watches
        .iter()
        .filter(|w| w.branch.short() == written)
        .collect();
    let w = match named.as_slice() {
        [w] => *w,
        [] => {
            return Err(usage(format!(
                "{written} is not a watched branch: name it in a job's `branch:` entry"
            )));
        }
        _ => {
            return Err(usage(format!(
                "{written} is watched on both forges; vouching for one is not possible by name"
            )));
        }
    };
    let forge = app
        .forges
        .get(w.branch.forge, &app.config)
        .map_err(crate::app::ClientFailure::Setup)?;
    let head = forge
        .branch_heads(std::slice::from_ref(&w.branch))?
        .pop()
        .flatten()
        .ok_or_else(|| {
            usage(format!(
                "no branch {written} on {}",
                w.branch.forge.as_str()
            ))
        })?
        .sha;
    let head = same_head(&w.branch.url(), head, sha)?;
    app.store.vouch_branch_head(w.id, &head, app.now)?;
    if !app.json {
        crate::outln!("vouched for {written} at {}", head.short())?;
    }
    Ok(0)
}

/// Records that the owner vouched for `head` of a watched PR.
pub fn remember_vouched(app: &mut App, pr: &PrRef, head: &crate::model::Sha) -> Result<()> {
    let watch = app
        .store
        .watch(pr)?
        .ok_or_else(|| usage(format!("{} is not watched; `watch add` it first", pr.url())))?;
    app.store.update_memory(watch.id, |m| {
        if !m.vouched_heads.contains(head) {
            m.vouched_heads.push(head.clone());
        }
    })?;
    app.log(pr, format!("the owner vouched for head {}", head.short()))?;
    Ok(())
}

/// `watch add --checkout PATH`: the one PR's checkout, made absolute (it is read from
/// wherever `status` runs). Refused (exit 2) with several PRs: a checkout holds one branch.
pub fn checkout_path(path: Option<&std::path::Path>, prs: usize) -> Result<Option<String>> {
    match (path, prs) {
        (None, _) => Ok(None),
        (Some(p), 1) => {
            let absolute = std::path::absolute(p)
                .map_err(|e| usage(format!("`--checkout {}`: {e}", p.display())))?;
            Ok(Some(absolute.display().to_string()))
        }
        (Some(_), _) => Err(usage("`--checkout` names the checkout of one PR: name one")),
    }
}

/// Keeps the agent's checkout of `pr` in its memory, and says so in its history.
pub fn remember_checkout(app: &mut App, pr: &PrRef, path: &str) -> Result<()> {
    let watch = app
        .store
        .watch(pr)?
        .ok_or_else(|| usage(format!("{} is not watched; `watch add` it first", pr.url())))?;
    if watch.status.memory.checkout.as_deref() == Some(path) {
        return Ok(());
    }
    app.store
        .update_memory(watch.id, |m| m.checkout = Some(path.to_owned()))?;
    app.log(pr, format!("the agent's checkout is {path}"))?;
    Ok(())
}

/// `fix PR --head SHA`: the owner vouches for that exact head, compare-and-set: refused
/// (exit 2) when the head moved.
pub fn vouch(app: &mut App, pr: &PrRef, sha: &str) -> Result<()> {
    if app.store.watch(pr)?.is_none() {
        return Err(usage(format!(
            "{} is not watched; `watch add` it first",
            pr.url()
        )));
    }
    let head = current_head(app, pr, sha)?;
    remember_vouched(app, pr, &head)
}

/// `fix PR`: sends the current failure to the agent now, whoever made the commit and
/// whatever the guards say. Runs a tick of that PR with the guards bypassed.
pub fn fix(app: &mut App, pr: &PrRef) -> Result<u8> {
    let watch = app
        .store
        .watch(pr)?
        .ok_or_else(|| usage(format!("{} is not watched; `watch add` it first", pr.url())))?;
    if app.policy_for(&watch).agent.is_none() {
        return Err(usage(format!(
            "{} has no agent: set one with `watch add --agent NAME` or in its job",
            pr.url()
        )));
    }
    let opts = RunOptions {
        selection: Selection {
            job: None,
            prs: vec![pr.clone()],
        },
        force: true,
        fix_asked: true,
        ..RunOptions::default()
    };
    let mut first = None;
    tick::run(app, &opts, &mut |o| {
        first.get_or_insert(o);
    })?;
    let outcome = first.ok_or_else(|| anyhow!("{} is paused or not open", pr.url()))?;
    if let Some(e) = &outcome.error {
        let e = anyhow!("{}: {e}", pr.url());
        // The PR could not be read: the forge refused the token or could not be reached.
        return Err(if outcome.cut_off {
            e.context(crate::app::NothingRead)
        } else {
            e
        });
    }
    let sent = outcome.plan.as_ref().is_some_and(|p| {
        p.actions
            .iter()
            .any(|a| matches!(a, crate::core::decide::Action::SendToAgent(_)))
    });
    let untrusted = outcome.plan.as_ref().and_then(|p| {
        let s = &p.status;
        (s.why == Some(crate::model::watch::Why::UntrustedHead))
            .then(|| s.trust_words().unwrap_or_default())
    });
    if let (false, Some(words)) = (sent, untrusted) {
        return Err(usage(format!(
            "{}: the head is not trusted ({words}): nothing was sent; vouch for it with `fix PR --head SHA`",
            pr.url()
        )));
    }
    if !sent {
        return Err(usage(format!(
            "{}: no finished failure on the head to send (checks running, passing, or a conflict)",
            pr.url()
        )));
    }
    if !app.json {
        crate::outln!(
            "sent the current failure of {} to its agent (fix_asked)",
            pr.url()
        )?;
    }
    Ok(0)
}

/// `rerun PR`: re-runs every failed workflow run on the head once, whatever the cause.
pub fn rerun(app: &mut App, pr: &PrRef) -> Result<u8> {
    let snap = app.snapshot(pr)?;
    let mut runs: Vec<u64> = checks::newest(&snap.checks)
        .into_iter()
        .filter(|c| c.state == CheckState::Failed)
        .filter_map(|c| c.run_id)
        .collect();
    runs.sort_unstable();
    runs.dedup();
    if runs.is_empty() {
        // Nothing failed (or nothing failed that the forge can re-run): done, nothing to do.
        if !app.json {
            crate::outln!("{}: no failed check on the head can be re-run", pr.url())?;
        }
        return Ok(0);
    }
    let forge = app.forge(pr.forge)?;
    let mut failed = Vec::new();
    for run in &runs {
        if let Err(e) = forge.rerun_failed(pr, *run) {
            failed.push(format!("run {run}: {e}"));
        }
    }
    app.log(
        pr,
        format!(
            "owner re-ran {} failed workflow run(s)",
            runs.len() - failed.len()
        ),
    )?;
    if !failed.is_empty() {
        return Err(anyhow!("{}: {}", pr.url(), failed.join("; ")));
    }
    if !app.json {
        crate::outln!(
            "re-running {} failed workflow run(s) of {}",
            runs.len(),
            pr.url()
        )?;
    }
    Ok(0)
}

/// Queues the owner's notice about `pr` and delivers it.
fn tell(app: &mut App, snap: &Snapshot, notice: &Notice) -> Result<()> {
    let watch = app.store.watch(&snap.pr)?;
    let policy = app.policy_for_pr(watch.as_ref());
    let watch_id = watch.as_ref().map_or(0, |w| w.id);
    let status = watch.map(|w| w.status).unwrap_or_default();
    let env = Env {
        watch_id,
        config: &app.config,
        policy: &policy,
        owner: "",
        now: app.now,
        dry_run: false,
    };
    let messages = execute::notice_messages(&env, snap, &status, notice)?;
    app.store.enqueue(&messages)?;
    tick::deliver(app)?;
    Ok(())
}

/// `merge PR --when-ready | --cancel | --now`.
pub fn merge(app: &mut App, pr: &PrRef, request: MergeHow) -> Result<u8> {
    let snap = app.snapshot(pr)?;
    let watch = app.store.watch(pr)?;
    match request {
        MergeHow::WhenReady => arm(app, pr, &snap, watch.as_ref())?,
        MergeHow::Cancel => disarm(app, pr, &snap, watch.as_ref())?,
        MergeHow::Now => merge_now(app, pr, &snap, watch.as_ref())?,
    }
    Ok(0)
}

/// `merge PR --when-ready`: arms an open PR whose base allows it, watching it if it was not.
fn arm(app: &mut App, pr: &PrRef, snap: &Snapshot, watch: Option<&Watch>) -> Result<()> {
    let policy = app.policy_for_pr(watch);
    if let Some(reason) = merge_rules::arming_refusal(snap, policy.allow_non_default_base) {
        return Err(usage(format!("not armed: {} {reason}", pr.url())));
    }
    if snap.state != crate::model::PrState::Open {
        return Err(usage(format!(
            "not armed: {} is {}",
            pr.url(),
            snap.state.as_str()
        )));
    }
    if watch.is_none() {
        app.store.add_watch(pr, &NewWatch::default(), app.now)?;
    }
    app.store.set_merge_armed(pr, true, app.now)?;
    app.log(pr, "merge armed by the owner".into())?;
    tell(app, snap, &Notice::MergeArmed)?;
    if !app.json {
        crate::outln!("armed {} to merge when ready", pr.url())?;
    }
    Ok(())
}

/// `merge PR --cancel`: disarms, and turns off the forge's auto-merge that the arming enabled.
fn disarm(app: &mut App, pr: &PrRef, snap: &Snapshot, watch: Option<&Watch>) -> Result<()> {
    let was_armed = watch.is_some_and(|w| w.status.merge.is_armed());
    app.store.set_merge_armed(pr, false, app.now)?;
    if snap.auto_merge_enabled && was_armed {
        let forge = app.forge(pr.forge)?;
        forge.disable_auto_merge(snap)?;
    }
    app.log(pr, "merge disarmed by the owner".into())?;
    if was_armed {
        tell(
            app,
            snap,
            &Notice::Disarmed {
                reason: Disarm::Cancelled,
            },
        )?;
    }
    if !app.json {
        crate::outln!("disarmed {}", pr.url())?;
    }
    Ok(())
}

/// `merge PR --now`: merges the head read, with the policy's method, once.
fn merge_now(app: &mut App, pr: &PrRef, snap: &Snapshot, watch: Option<&Watch>) -> Result<()> {
    let policy = app.policy_for_pr(watch);
    if let Some(reason) = merge_rules::merge_now_refusal(snap) {
        return Err(usage(format!("not merged: {} {reason}", pr.url())));
    }
    let method =
        merge_rules::method(policy.merge_method, &snap.repo.allowed_methods).ok_or_else(|| {
            usage(format!(
                "{}: the repository allows no merge method",
                pr.url()
            ))
        })?;
    let forge = app.forge(pr.forge)?;
    forge
        .merge(pr, &snap.head.sha, method)
        .map_err(|e| anyhow!("{}: not merged: {e}", pr.url()))?;
    if let Some(w) = watch {
        app.log(
            pr,
            format!(
                "merged {} by the owner ({})",
                snap.head.sha.short(),
                method.as_str()
            ),
        )?;
        // The next run records the merge (state, notice, the `done` record) at once.
        app.store.make_due(w.id, app.now)?;
    }
    if !app.json {
        crate::outln!(
            "merged {} at {} ({})",
            pr.url(),
            snap.head.sha.short(),
            method.as_str()
        )?;
    }
    Ok(())
}

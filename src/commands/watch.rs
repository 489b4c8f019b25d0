//! `watch add`, `watch ls`, `watch rm`, `watch pause` and `watch resume`: what is watched, and
//! how (its job, agent, auto-fix override, arming, vouched head and the agent's checkout).

use anyhow::Result;

use crate::app::{App, usage};
use crate::cli::{AutoFixArg, WatchCommand};
use crate::model::reference::PrArg;
use crate::model::watch::Watch;
use crate::model::{PrRef, Sha};
use crate::store::{AutoFixChoice, NewWatch};

use super::{output, owner};

/// What `watch add` asks of every PR it names.
struct Adding {
    job: Option<String>,
    agent: Option<String>,
    auto_fix: Option<AutoFixArg>,
    /// `--merge-when-ready`, or a job whose policy says merge_when_ready.
    merge_armed: bool,
    /// The head the owner vouched for (one PR only).
    trust_head: Option<Sha>,
    /// The agent's checkout (one PR only).
    checkout: Option<String>,
}

pub(super) fn watch(app: &mut App, cmd: WatchCommand) -> Result<u8> {
    match cmd {
        WatchCommand::Add {
            prs,
            job,
            agent,
            merge_when_ready,
            auto_fix,
            trust_head,
            checkout,
        } => {
            let prs = prs.iter().map(|p| app.pr(p)).collect::<Result<Vec<_>>>()?;
            let checkout = owner::checkout_path(checkout.as_deref(), prs.len())?;
            let trust_head = match (&trust_head, prs.as_slice()) {
                (None, _) => None,
                (Some(sha), [pr]) => Some(owner::current_head(app, pr, sha)?),
                (Some(_), _) => {
                    return Err(usage(
                        "`--trust-head` vouches for the head of one PR: name one",
                    ));
                }
            };
            check_names(app, job.as_deref(), agent.as_deref())?;
            // A job whose policy says merge_when_ready arms every PR added to it.
            let job_arms = job
                .as_deref()
                .and_then(|j| app.config.job(j))
                .is_some_and(|j| app.config.policy(Some(j)).merge_when_ready);
            let adding = Adding {
                job,
                agent,
                auto_fix,
                merge_armed: merge_when_ready || job_arms,
                trust_head,
                checkout,
            };
            add(app, &prs, &adding)
        }
        WatchCommand::Ls => super::status::status(app, None),
        WatchCommand::Rm { pr } => {
            let pr = app.pr(&pr)?;
            if !app.store.remove_watch(&pr)? {
                return Err(usage(format!("{} is not watched", pr.url())));
            }
            if !app.json {
                crate::outln!("stopped watching {}", pr.url())?;
            }
            Ok(0)
        }
        WatchCommand::Pause { pr } => pause(app, &pr, true),
        WatchCommand::Resume { pr } => pause(app, &pr, false),
    }
}

/// A job and an agent named on the command line must exist.
fn check_names(app: &App, job: Option<&str>, agent: Option<&str>) -> Result<()> {
    if let Some(job) = job
        && app.config.job(job).is_none()
    {
        return Err(usage(format!(
            "no job named `{job}` (see the files in the jobs folder)"
        )));
    }
    if let Some(agent) = agent
        && !app.config.agents.contains_key(agent)
    {
        return Err(usage(format!(
            "no agent named `{agent}` in the config's `agents`"
        )));
    }
    Ok(())
}

/// Adds (or updates) each PR's watch and says what changed; with `--json`, the watches.
fn add(app: &mut App, prs: &[PrRef], adding: &Adding) -> Result<u8> {
    for pr in prs {
        add_one(app, pr, adding)?;
    }
    if app.json {
        let watches = prs
            .iter()
            .filter_map(|p| app.store.watch(p).transpose())
            .collect::<Result<Vec<_>>>()?;
        crate::outln!("{}", output::status_array(&watches))?;
    }
    Ok(0)
}

fn add_one(app: &mut App, pr: &PrRef, adding: &Adding) -> Result<()> {
    let before = app.store.watch(pr)?;
    let new = NewWatch {
        job: adding.job.clone(),
        agent: adding.agent.clone(),
        auto_fix: auto_fix_choice(app, adding, before.as_ref()),
        merge_armed: adding.merge_armed,
    };
    let added = app.store.add_watch(pr, &new, app.now)?;
    if !added {
        app.store.reopen(pr, app.now)?;
    }
    let changes = match (&before, app.store.watch(pr)?) {
        (Some(b), Some(a)) => a.changes_from(b),
        _ => Vec::new(),
    };
    if !changes.is_empty() {
        app.log(pr, format!("watch updated: {}", changes.join(", ")))?;
    }
    if let Some(head) = &adding.trust_head {
        owner::remember_vouched(app, pr, head)?;
    }
    if let Some(path) = &adding.checkout {
        owner::remember_checkout(app, pr, path)?;
    }
    if !app.json {
        if added {
            crate::outln!("watching {}", pr.url())?;
        } else if changes.is_empty() {
            crate::outln!("already watching {}; nothing changed", pr.url())?;
        } else {
            crate::outln!("already watching {}; now: {}", pr.url(), changes.join(", "))?;
        }
    }
    Ok(())
}

/// What `--auto-fix` does to a PR's own setting: setting it back to what the PR's job says
/// (or `default`) clears the override.
fn auto_fix_choice(app: &App, adding: &Adding, before: Option<&Watch>) -> AutoFixChoice {
    let job_name = adding
        .job
        .as_deref()
        .or_else(|| before.and_then(|b| b.job.as_deref()));
    let policy_value = app
        .config
        .policy(job_name.and_then(|j| app.config.job(j)))
        .auto_fix;
    match adding.auto_fix {
        None => AutoFixChoice::Keep,
        Some(AutoFixArg::Default) => AutoFixChoice::Clear,
        Some(v) if (v == AutoFixArg::On) == policy_value => AutoFixChoice::Clear,
        Some(v) => AutoFixChoice::Set(v == AutoFixArg::On),
    }
}

fn pause(app: &mut App, pr: &PrArg, paused: bool) -> Result<u8> {
    let pr = app.pr(pr)?;
    let Some(watch) = app.store.watch(&pr)? else {
        return Err(usage(format!("{} is not watched", pr.url())));
    };
    // Resuming a watch paused because the token changed hands accepts its new login.
    if !paused
        && watch.status.memory.paused_reason.as_deref()
            == Some(crate::model::watch::TOKEN_LOGIN_CHANGED)
    {
        let login = app.accept_owner(pr.forge)?;
        app.log(&pr, format!("resumed: acting for {login} from now on"))?;
    }
    app.store.set_paused(&pr, paused, app.now)?;
    app.store
        .update_memory(watch.id, |m| m.paused_reason = None)?;
    if !app.json {
        crate::outln!("{} {}", if paused { "paused" } else { "resumed" }, pr.url())?;
    }
    Ok(0)
}

//! Jobs name which PRs to watch: `pr:` entries are watched as they are; `repo:` entries are
//! listed on the forge, and `mine:` entries searched for the owner's open PRs on any
//! repository (each at most once per `idle_poll_sec` per job and entry); every open PR found
//! (matching a `repo:` entry's filters) is watched under the job. A PR that leaves a listing
//! stays watched until it merges or closes, like one dropped from a job's file. A closed PR a
//! listing finds open again (reopened) is looked at in this run. A listing that fails is
//! reported and retried next run; it never stops the tick. `branch:` entries are watched by
//! [`super::branches`].

use anyhow::Result;
use chrono::Duration;

use crate::app::App;
use crate::config::{Job, Watch as Entry};
use crate::forge::ForgeError;
use crate::model::{ForgeKind, PrRef, parse_instant};
use crate::store::NewWatch;

/// Adds the PRs the jobs name. Returns a line per PR added and per listing that failed.
pub fn sync(app: &mut App) -> Result<Vec<String>> {
    let mut said = Vec::new();
    let jobs = app.config.jobs.clone();
    for job in &jobs {
        let policy = app.config.policy(Some(job));
        let new = NewWatch {
            job: Some(job.name.clone()),
            agent: None,
            auto_fix: crate::store::AutoFixChoice::Keep,
            merge_armed: policy.merge_when_ready,
        };
        let wait = Duration::seconds(i64::try_from(policy.idle_poll_sec).unwrap_or(300));
        for entry in &job.watch {
            // Listings find open PRs only; a `pr:` entry says nothing of its state.
            let listing = !matches!(entry, Entry::Pr(_));
            let found = match entry {
                Entry::Pr(pr) => Ok(vec![pr.clone()]),
                Entry::Repo(rw) => listed(app, job, wait, (rw.forge, &rw.repo), |f| {
                    Ok(f.open_prs(&rw.repo)?
                        .into_iter()
                        .filter(|o| rw.matches(o.author.as_deref(), &o.labels))
                        .map(|o| o.pr)
                        .collect())
                })?,
                Entry::Mine(forge) => {
                    listed(app, job, wait, (*forge, "mine"), |f| f.my_open_prs())?
                }
                Entry::Branch(_) => continue,
            };
            match found {
                Ok(prs) => {
                    for pr in prs {
                        if app.store.watch(&pr)?.is_none() {
                            app.store.add_watch(&pr, &new, app.now)?;
                            said.push(format!("watching {} (job {})", pr.url(), job.name));
                        } else if listing && app.store.look_again(&pr, app.now)? {
                            said.push(format!("{} is open again (job {})", pr.url(), job.name));
                        }
                    }
                }
                Err(e) => said.push(format!("error: job {}: {e}", job.name)),
            }
        }
    }
    Ok(said)
}

/// The PRs one listing entry finds through `list`, when its turn has come (`wait` since its
/// last listing); none when it has not; why not, when the forge could not list them. `what`
/// names the entry: its forge, and the repository (or `mine`).
fn listed(
    app: &mut App,
    job: &Job,
    wait: Duration,
    what: (ForgeKind, &str),
    list: impl FnOnce(&dyn crate::forge::Forge) -> Result<Vec<PrRef>, ForgeError>,
) -> Result<Result<Vec<PrRef>, String>> {
    let (forge, name) = what;
    let key = format!("listed:{}:{}:{name}", job.name, forge.as_str());
    let listed_at = app.store.meta(&key)?.and_then(|t| parse_instant(&t).ok());
    if listed_at.is_some_and(|t| app.now - t < wait && t <= app.now) {
        return Ok(Ok(Vec::new()));
    }
    let found = app
        .forges
        .get(forge, &app.config)
        .map_err(|e| e.clone())
        .and_then(|f| list(f).map_err(|e| e.to_string()));
    let what = if name == "mine" {
        format!("search the owner's open PRs on {}", forge.as_str())
    } else {
        format!("list the open PRs of {name}")
    };
    match found {
        Ok(prs) => {
            app.store.set_meta(&key, &app.now.to_rfc3339())?;
            Ok(Ok(prs))
        }
        Err(e) => Ok(Err(format!("cannot {what}: {e}"))),
    }
}

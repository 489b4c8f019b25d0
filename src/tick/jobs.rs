//! Jobs name which PRs to watch: `pr:` entries are watched as they are; `repo:` entries are
//! listed on the forge (at most once per `idle_poll_sec` per job and repository) and every open
//! PR matching the filters is watched under the job. A listing that fails is reported and
//! retried next run; it never stops the tick.

use anyhow::Result;
use chrono::Duration;

use crate::app::App;
use crate::config::Watch as Entry;
use crate::model::parse_instant;
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
        for entry in &job.watch {
            match entry {
                Entry::Pr(pr) => {
                    if app.store.watch(pr)?.is_none() {
                        app.store.add_watch(pr, &new, app.now)?;
                        said.push(format!("watching {} (job {})", pr.url(), job.name));
                    }
                }
                Entry::Repo(rw) => {
                    let key = format!("listed:{}:{}:{}", job.name, rw.forge.as_str(), rw.repo);
                    let last = app.store.meta(&key)?.and_then(|t| parse_instant(&t).ok());
                    let wait =
                        Duration::seconds(i64::try_from(policy.idle_poll_sec).unwrap_or(300));
                    if last.is_some_and(|t| app.now - t < wait && t <= app.now) {
                        continue;
                    }
                    let listed = app
                        .forges
                        .get(rw.forge, &app.config)
                        .map_err(|e| e.clone())
                        .and_then(|f| f.open_prs(&rw.repo).map_err(|e| e.to_string()));
                    match listed {
                        Ok(open) => {
                            for o in open
                                .iter()
                                .filter(|o| rw.matches(o.author.as_deref(), &o.labels))
                            {
                                if app.store.watch(&o.pr)?.is_none() {
                                    app.store.add_watch(&o.pr, &new, app.now)?;
                                    said.push(format!(
                                        "watching {} (job {})",
                                        o.pr.url(),
                                        job.name
                                    ));
                                }
                            }
                            app.store.set_meta(&key, &app.now.to_rfc3339())?;
                        }
                        Err(e) => said.push(format!(
                            "error: job {}: cannot list the open PRs of {}: {e}",
                            job.name, rw.repo
                        )),
                    }
                }
            }
        }
    }
    Ok(said)
}

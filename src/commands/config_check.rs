//! `config check`: loads the config, refuses a secret a run needs that cannot be read, and
//! prints the source, the job files, every path the config resolves to and where each secret
//! comes from.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::app::usage;
use crate::config::{Config, TokenKeys as _};
use crate::store::Store;

use super::{paths, secrets_check};

/// The paths a config resolves to, by what they are, in the order `config check` prints them.
fn resolved_paths(config: &Config, cli_db: Option<&Path>) -> Vec<(String, PathBuf)> {
    let mut paths = vec![(
        "database".to_owned(),
        cli_db.map_or_else(|| config.database.clone(), Path::to_path_buf),
    )];
    if let Some(dir) = &config.jobs_dir {
        paths.push(("jobs".to_owned(), dir.clone()));
    }
    for (forge, token) in [
        ("github", config.github.token()),
        ("gitlab", config.gitlab.token()),
    ] {
        if let crate::config::TokenSource::File(file) = token {
            paths.push((format!("{forge} token"), file));
        }
    }
    if let Some(key) = config
        .github
        .app
        .as_ref()
        .and_then(|a| a.private_key_file.clone())
    {
        paths.push(("github app key".to_owned(), key));
    }
    for (name, agent) in &config.agents {
        if let Some(inbox) = &agent.inbox {
            paths.push((format!("inbox {name}"), inbox.clone()));
        }
    }
    if let Some(page) = &config.report.html_path {
        paths.push(("status page".to_owned(), page.clone()));
    }
    if let Some(metrics) = &config.report.metrics_path {
        paths.push(("metrics".to_owned(), metrics.clone()));
    }
    paths
}

pub(super) fn config_check(config: &Config, cli_db: Option<&Path>, json: bool) -> Result<u8> {
    let db = paths::checked_database(cli_db, config)?;
    let mut used = secrets_check::forges_of_jobs(config);
    if db.exists() {
        let store = Store::open_for_reading(&db)?;
        used.extend(
            store
                .forges_watched()?
                .iter()
                .filter_map(|f| f.parse::<crate::model::ForgeKind>().ok()),
        );
    }
    let secrets = secrets_check::needed(config, &used);
    let problems: Vec<String> = secrets.iter().filter_map(secrets_check::problem).collect();
    if !problems.is_empty() {
        return Err(usage(format!(
            "a secret a run needs cannot be read: {}",
            problems.join("; ")
        )));
    }
    let source = config.source().map_or_else(
        || "built-in defaults".to_owned(),
        |p| p.display().to_string(),
    );
    let paths = resolved_paths(config, cli_db);
    if json {
        let paths: serde_json::Map<String, serde_json::Value> = paths
            .iter()
            .map(|(what, path)| (what.clone(), path.display().to_string().into()))
            .collect();
        crate::outln!(
            "{}",
            serde_json::json!({"ok": true, "config": source, "jobs": config.jobs.iter().map(|j| &j.name).collect::<Vec<_>>(), "paths": paths,
                "secrets": secrets.iter().map(|n| serde_json::json!({"what": n.what, "source": n.source.to_string()})).collect::<Vec<_>>()})
        )?;
    } else {
        crate::outln!("{source}: ok ({} job file(s))", config.jobs.len())?;
        let width = paths.iter().map(|(what, _)| what.len()).max().unwrap_or(0);
        for (what, path) in &paths {
            crate::outln!("  {what:<width$}  {}", path.display())?;
        }
        for n in &secrets {
            crate::outln!("  {}: {}", n.what, secrets_check::describe(n))?;
        }
    }
    Ok(0)
}

//! Where a command's files are: the database it uses (refused when its folder is missing,
//! never a silent `mkdir`), and the line that says which config and database it reads.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::app::usage;
use crate::config::Config;

/// The database a command uses: `--db`, else the config's `database`. A database whose folder
/// does not exist is a usage error, never a silent `mkdir`; the one folder created is the
/// user's state folder (owner-only), when no config file was found.
pub(super) fn database(cli_db: Option<&Path>, config: &Config) -> Result<PathBuf> {
    if cli_db.is_none()
        && let Some(dir) = &config.state_dir
    {
        crate::private::create_dir_all(dir)
            .with_context(|| format!("cannot create the state folder `{}`", dir.display()))?;
    }
    checked_database(cli_db, config)
}

/// The database [`database`] would use, refused as it would be, without creating anything: a
/// database in the user's state folder (which [`database`] creates) is not refused for it.
pub(super) fn checked_database(cli_db: Option<&Path>, config: &Config) -> Result<PathBuf> {
    let (db, named_by) = match cli_db {
        Some(db) => (db.to_path_buf(), "--db".to_owned()),
        None if config.database.as_os_str().is_empty() => {
            return Err(usage(
                "no config file was found (config/pr-monitor.yaml, /etc/pr-monitor/config.yaml) \
                 and neither XDG_STATE_HOME nor HOME is set to keep the database in: \
                 give --config or --db",
            ));
        }
        None => {
            let named_by = config.source().map_or_else(
                || "the built-in default".to_owned(),
                |p| format!("`database` in {}", p.display()),
            );
            (config.database.clone(), named_by)
        }
    };
    match db.parent() {
        Some(dir)
            if !dir.as_os_str().is_empty()
                && !dir.is_dir()
                && (cli_db.is_some() || config.state_dir.as_deref() != Some(dir)) =>
        {
            Err(usage(format!(
                "the database `{}` (from {named_by}) is in a folder that does not exist: \
                 create `{}` first, or name another database",
                db.display(),
                dir.display()
            )))
        }
        _ => Ok(db),
    }
}

/// `config /etc/pr-monitor/config.yaml · database /var/lib/pr-monitor/pr-monitor.db`: what a
/// command reads, said on standard error.
pub(super) fn using_line(config: &Config, db: &Path) -> String {
    let config = config.source().map_or_else(
        || "none found (built-in defaults)".to_owned(),
        |p| p.display().to_string(),
    );
    format!("config {config} · database {}", db.display())
}

//! The command line: argv → [`Cli`] (clap derive). Names and flags are the external contract.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Drives open pull requests and merge requests to merged.
#[derive(Debug, Parser)]
#[command(name = "pr-monitor", version, about, propagate_version = true)]
pub struct Cli {
    /// The config file (default: config/pr-monitor.yaml, else /etc/pr-monitor/config.yaml, else built-in defaults).
    #[arg(long, global = true, env = "PR_MONITOR_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// The SQLite database (overrides the config's `database`).
    #[arg(long, global = true, env = "PR_MONITOR_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// Act as if the clock read this instant (RFC 3339), for replays and tests.
    #[arg(long, global = true, env = "PR_MONITOR_NOW", value_name = "RFC3339")]
    pub now: Option<String>,

    /// Machine-readable output.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start, list, stop, pause or resume watching PRs.
    #[command(subcommand)]
    Watch(WatchCommand),
    /// One tick over every due watched PR.
    Run(RunArgs),
    /// Every watched PR, or one in detail.
    Status {
        /// One PR, in detail.
        pr: Option<String>,
    },
    /// Configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
}

#[derive(Debug, Subcommand)]
pub enum WatchCommand {
    /// Start watching PRs (due at once).
    Add {
        /// https://github.com/o/r/pull/N, https://gitlab.com/g/p/-/merge_requests/N, o/r#N or g/p!N.
        #[arg(required = true, value_name = "PR")]
        prs: Vec<String>,
        /// The job whose policy applies.
        #[arg(long, value_name = "NAME")]
        job: Option<String>,
        /// The agent failures go back to.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// Arm merge when ready.
        #[arg(long)]
        merge_when_ready: bool,
        /// Override auto-fix for these PRs.
        #[arg(long, value_name = "on|off")]
        auto_fix: Option<OnOff>,
    },
    /// List watched PRs.
    Ls,
    /// Stop watching a PR.
    Rm {
        #[arg(value_name = "PR")]
        pr: String,
    },
    /// Stop ticking a PR until resumed.
    Pause {
        #[arg(value_name = "PR")]
        pr: String,
    },
    /// Tick a paused PR again (due at once).
    Resume {
        #[arg(value_name = "PR")]
        pr: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Only the watches of this job.
    #[arg(long, value_name = "NAME")]
    pub job: Option<String>,
    /// Only these PRs.
    #[arg(long = "pr", value_name = "PR")]
    pub prs: Vec<String>,
    /// Tick every selected PR, due or not.
    #[arg(long)]
    pub force: bool,
    /// Decide and print, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate the config and every job file.
    Check,
}

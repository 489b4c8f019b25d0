//! The command line: argv → [`Cli`] (clap derive). Names and flags are the external contract.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::model::reference::PrArg;

/// Drives open pull requests and merge requests to merged.
#[derive(Debug, Parser)]
#[command(name = "pr-monitor", version, about, propagate_version = true)]
pub struct Cli {
    /// The config file (default: config/pr-monitor.yaml, else /etc/pr-monitor/config.yaml, else built-in defaults).
    #[arg(long, global = true, env = "PR_MONITOR_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// The SQLite database (overrides the config's `database`); its folder must exist.
    #[arg(long, global = true, env = "PR_MONITOR_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// Act as if the clock read this instant (RFC 3339), for replays and tests.
    #[arg(long, global = true, env = "PR_MONITOR_NOW", value_name = "RFC3339")]
    pub now: Option<String>,

    /// Machine-readable output.
    #[arg(long, global = true)]
    pub json: bool,

    /// Diagnostics on stderr from this level (error, warn, info, debug, trace, or tracing
    /// directives such as `pr_monitor=debug`); default: `RUST_LOG`, else warn (pr-monitor's
    /// own from info).
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<String>,

    /// How diagnostics are written on stderr: human lines, or one JSON object a line.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t,
        value_name = "FORMAT"
    )]
    pub log_format: crate::logging::LogFormat,

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
        pr: Option<PrArg>,
    },
    /// Configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Notification channels.
    #[command(subcommand)]
    Notify(NotifyCommand),
    /// Long-running: cron-scheduled sweeps until SIGTERM or SIGINT.
    Daemon,
    /// The focused PR payload; works without a database.
    Check(CheckArgs),
    /// Send the current failure to the agent now, whoever made the commit and whatever the guards say.
    Fix {
        #[arg(value_name = "PR")]
        pr: PrArg,
        /// Vouch for this exact head (refused when the head moved).
        #[arg(long, value_name = "SHA")]
        head: Option<String>,
    },
    /// Re-run the failed checks on the forge.
    Rerun {
        #[arg(value_name = "PR")]
        pr: PrArg,
    },
    /// Arm, disarm, or merge at once (`merge PR --now`).
    Merge(MergeArgs),
    /// For agents: say a message is handled.
    #[command(subcommand)]
    Inbox(InboxCommand),
    /// For agents: answer and resolve review threads.
    #[command(subcommand)]
    Thread(ThreadCommand),
    /// For agents: an MCP server on standard input and output (inbox, PR status, thread
    /// replies with the agent's own token; nothing that merges, arms, re-runs or pauses).
    Mcp {
        /// The agent served.
        #[arg(long, value_name = "NAME")]
        agent: String,
    },
    /// Shell completions, from the same definitions as `--help`:
    /// `source <(pr-monitor completions bash)`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("how").required(true).args(["when_ready", "cancel", "merge_now"])))]
pub struct MergeArgs {
    #[arg(value_name = "PR")]
    pub pr: PrArg,
    /// Merge once the checks pass (re-arms the forge's auto-merge every tick).
    #[arg(long)]
    pub when_ready: bool,
    /// Disarm.
    #[arg(long)]
    pub cancel: bool,
    /// Merge now (written `--now` after `merge PR`).
    #[arg(long = "merge-now")]
    pub merge_now: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[arg(value_name = "PR")]
    pub pr: PrArg,
    /// Include the raw lists.
    #[arg(long)]
    pub full_payload: bool,
    /// Keep the seen state in this JSON file instead of the database.
    #[arg(long, value_name = "P", conflicts_with = "no_state")]
    pub state_file: Option<PathBuf>,
    /// Keep no seen state: everything is new.
    #[arg(long)]
    pub no_state: bool,
    /// Poll until something is actionable (one NDJSON line per tick).
    #[arg(long)]
    pub watch: bool,
    /// Seconds between polls in watch mode.
    #[arg(long, value_name = "S", default_value_t = 60)]
    pub interval: u64,
    /// Give up after this many seconds in watch mode (exit 124).
    #[arg(long, value_name = "S", default_value_t = 3600)]
    pub max_duration: u64,
    /// Readiness: the PR must carry this label (repeatable; adds to the job's).
    #[arg(long = "require-label", value_name = "LABEL")]
    pub require_labels: Vec<String>,
    /// Readiness: the PR needs an approval from this login (repeatable; adds to the job's).
    #[arg(long = "require-approval-from", value_name = "LOGIN")]
    pub require_approvals_from: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum InboxCommand {
    /// The agent has finished with message ID.
    Done {
        id: String,
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ThreadCommand {
    /// Answer a review thread (prefixed `🤖 <agent> on behalf of <owner>`).
    Reply {
        #[arg(value_name = "PR")]
        pr: PrArg,
        #[arg(value_name = "THREAD")]
        thread: String,
        /// The reply's text (`-` for standard input).
        #[arg(long, value_name = "F")]
        body_file: PathBuf,
        /// As this agent, with its own token (`agents.NAME.token_env | token_file`); refused
        /// when it has none.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
    /// Mark a review thread resolved.
    Resolve {
        #[arg(value_name = "PR")]
        pr: PrArg,
        #[arg(value_name = "THREAD")]
        thread: String,
        /// As this agent, with its own token; refused when it has none.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
}

/// Rewrites `merge PR --now` (the contract's spelling) into `--merge-now`, since `--now
/// RFC3339` is also a global flag: a `--now` after `merge` not followed by an instant is the
/// merge flag.
pub fn normalize_args(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let is_instant = |s: Option<&std::ffi::OsString>| {
        s.and_then(|s| s.to_str())
            .is_some_and(|s| crate::model::parse_instant(s).is_ok())
    };
    let Some(merge_at) = args.iter().position(|a| a == "merge") else {
        return args;
    };
    let mut out = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        if i > merge_at && a == "--now" && !is_instant(args.get(i + 1)) {
            out.push("--merge-now".into());
        } else {
            out.push(a.clone());
        }
    }
    out
}

#[derive(Debug, Subcommand)]
pub enum WatchCommand {
    /// Start watching PRs (due at once).
    Add {
        /// https://github.com/o/r/pull/N, https://gitlab.com/g/p/-/merge_requests/N, o/r#N or g/p!N.
        #[arg(required = true, value_name = "PR")]
        prs: Vec<PrArg>,
        /// The job whose policy applies.
        #[arg(long, value_name = "NAME")]
        job: Option<String>,
        /// The agent failures go back to.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// Arm merge when ready.
        #[arg(long)]
        merge_when_ready: bool,
        /// Override auto-fix for these PRs; `default` clears the override (the policy decides).
        #[arg(long, value_name = "on|off|default")]
        auto_fix: Option<AutoFixArg>,
        /// The owner vouches for this exact head of the one PR added (refused when the head
        /// moved).
        #[arg(long, value_name = "SHA")]
        trust_head: Option<String>,
        /// The agent's checkout of the one PR added: `status PR` says when it is at another
        /// commit than the head (read with git, never written).
        #[arg(long, value_name = "PATH")]
        checkout: Option<PathBuf>,
    },
    /// List watched PRs.
    Ls,
    /// Stop watching a PR.
    Rm {
        #[arg(value_name = "PR")]
        pr: PrArg,
    },
    /// Stop ticking a PR until resumed.
    Pause {
        #[arg(value_name = "PR")]
        pr: PrArg,
    },
    /// Tick a paused PR again (due at once).
    Resume {
        #[arg(value_name = "PR")]
        pr: PrArg,
    },
}

/// `watch add --auto-fix`: a per-PR override, or back to the policy's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AutoFixArg {
    On,
    Off,
    Default,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Only the watches of this job.
    #[arg(long, value_name = "NAME")]
    pub job: Option<String>,
    /// Only these PRs.
    #[arg(long = "pr", value_name = "PR")]
    pub prs: Vec<PrArg>,
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

#[derive(Debug, Subcommand)]
pub enum NotifyCommand {
    /// Send one test message through every configured channel (email, Slack, each agent).
    Test,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("pr-monitor").chain(args.iter().copied()))
    }

    #[test]
    fn every_pr_argument_is_parsed_by_the_command_line() {
        let pr = |s: &str| s.parse::<PrArg>().unwrap();
        let Command::Fix { pr: fix, .. } = parse(&["fix", "octo/app#1"]).unwrap().command else {
            panic!("fix");
        };
        assert_eq!(fix, pr("octo/app#1"));
        let Command::Watch(WatchCommand::Add { prs, .. }) = parse(&[
            "watch",
            "add",
            "o/r#1",
            "https://gitlab.com/g/p/-/merge_requests/2",
        ])
        .unwrap()
        .command
        else {
            panic!("watch add");
        };
        assert_eq!(
            prs,
            [pr("o/r#1"), pr("https://gitlab.com/g/p/-/merge_requests/2")]
        );
        let Command::Run(run) = parse(&["run", "--pr", "g/p!3"]).unwrap().command else {
            panic!("run");
        };
        assert_eq!(run.prs, [pr("g/p!3")]);
        let Command::Status { pr: none } = parse(&["status"]).unwrap().command else {
            panic!("status");
        };
        assert_eq!(none, None);
    }

    #[test]
    fn a_bad_reference_is_a_command_line_error_carrying_why() {
        for args in [
            &["fix", "o/..#1"][..],
            &["watch", "add", "o/r#1", "octo"],
            &["run", "--pr", "o/r#0"],
            &["status", "g/p!x"],
            &["merge", "o/r", "--when-ready"],
            &["thread", "resolve", "o/r#", "T1"],
        ] {
            let err = parse(args).unwrap_err();
            assert!(err.use_stderr(), "{args:?}");
            let why = std::error::Error::source(&err)
                .and_then(|s| s.downcast_ref::<crate::model::reference::BadPrRef>())
                .unwrap_or_else(|| panic!("{args:?}: {err}"));
            assert!(
                why.to_string()
                    .contains(crate::model::reference::PR_REF_FORMS),
                "{why}"
            );
        }
    }
}

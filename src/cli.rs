//! The command line: argv → [`Cli`] (clap derive). Names and flags are the external contract.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::model::reference::{FixTarget, PrArg};

/// Drives open pull requests and merge requests to merged.
#[derive(Debug, Parser)]
#[command(
    name = "pr-monitor",
    version,
    about,
    propagate_version = true,
    next_help_heading = "Global options",
    after_help = "Examples:\n  pr-monitor watch add octo/app#342 --agent fixer --merge-when-ready\n  pr-monitor run\n  pr-monitor status\n  pr-monitor --config /etc/pr-monitor/config.yaml status octo/app#342 --json\n  pr-monitor watch add --help"
)]
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
    #[command(
        subcommand,
        after_help = "Examples:\n  pr-monitor watch add octo/app#342\n  pr-monitor watch ls\n  pr-monitor watch pause octo/app#342"
    )]
    Watch(WatchCommand),
    /// One tick over every due watched PR.
    #[command(
        after_help = "Examples:\n  pr-monitor run\n  pr-monitor run --pr octo/app#342 --force\n  pr-monitor run --job my-prs --dry-run\n  pr-monitor --log-format json run --json"
    )]
    Run(RunArgs),
    /// Every watched PR, or one in detail.
    #[command(
        after_help = "Examples:\n  pr-monitor status\n  pr-monitor status octo/app#342\n  pr-monitor status group/project!57 --json"
    )]
    Status {
        /// One PR, in detail.
        pr: Option<PrArg>,
    },
    /// Configuration.
    #[command(subcommand, after_help = "Examples:\n  pr-monitor config check")]
    Config(ConfigCommand),
    /// Notification channels.
    #[command(subcommand, after_help = "Examples:\n  pr-monitor notify test")]
    Notify(NotifyCommand),
    /// Long-running: cron-scheduled sweeps until SIGTERM or SIGINT.
    #[command(
        after_help = "Examples:\n  pr-monitor daemon\n  pr-monitor --config /etc/pr-monitor/config.yaml --log-format json daemon"
    )]
    Daemon,
    /// The focused PR payload; works without a database.
    #[command(
        after_help = "Examples:\n  pr-monitor check octo/app#342 --json\n  pr-monitor check group/project!57 --full-payload --no-state\n  pr-monitor check octo/app#342 --state-file state.json --watch --interval 30 --max-duration 1800"
    )]
    Check(CheckArgs),
    /// Send the current failure to the agent now, whoever made the commit and whatever the guards say.
    #[command(
        after_help = "Examples:\n  pr-monitor fix octo/app#342\n  pr-monitor fix octo/app#342 --head 1a2b3c4d5e6f\n  pr-monitor fix octo/app@main --head 1a2b3c4d5e6f"
    )]
    Fix {
        /// The PR (o/r#N, g/p!N or its address), or a watched branch OWNER/REPO@BRANCH (with
        /// `--head`).
        #[arg(value_name = "PR")]
        pr: FixTarget,
        /// Vouch for this exact head (refused when the head moved).
        #[arg(long, value_name = "SHA")]
        head: Option<String>,
    },
    /// Re-run the failed checks on the forge.
    #[command(after_help = "Examples:\n  pr-monitor rerun octo/app#342")]
    Rerun {
        /// The PR (o/r#N, g/p!N or its address).
        #[arg(value_name = "PR")]
        pr: PrArg,
    },
    /// Arm (`--when-ready`), disarm (`--cancel`), or merge at once (`--now`).
    ///
    /// After `merge`, a `--now` not followed by an RFC 3339 instant is the merge flag; one
    /// followed by an instant is the global clock (`merge PR --now --now 2026-11-29T12:00:00Z`
    /// does both).
    #[command(
        override_usage = "pr-monitor merge <PR> <--when-ready|--cancel|--now>",
        after_help = "Examples:\n  pr-monitor merge octo/app#342 --when-ready\n  pr-monitor merge octo/app#342 --cancel\n  pr-monitor merge octo/app#342 --now"
    )]
    Merge(MergeArgs),
    /// For agents: say a message is handled.
    #[command(
        subcommand,
        after_help = "Examples:\n  pr-monitor inbox done octo-app-342-ci-1a2b3c4"
    )]
    Inbox(InboxCommand),
    /// For agents: answer and resolve review threads.
    #[command(
        subcommand,
        after_help = "Examples:\n  pr-monitor thread reply octo/app#342 PRRT_kwDOAbc123 --body-file reply.md\n  pr-monitor thread resolve octo/app#342 PRRT_kwDOAbc123"
    )]
    Thread(ThreadCommand),
    /// For agents: an MCP server on standard input and output (inbox, PR status, thread
    /// replies with the agent's own token; nothing that merges, arms, re-runs or pauses).
    #[command(
        after_help = "Examples:\n  pr-monitor mcp --agent fixer\n  claude mcp add pr-monitor -- pr-monitor mcp --agent fixer"
    )]
    Mcp {
        /// The agent served.
        #[arg(long, value_name = "NAME")]
        agent: String,
    },
    /// Shell completions, from the same definitions as `--help`:
    /// `source <(pr-monitor completions bash)`.
    #[command(
        after_help = "Examples:\n  source <(pr-monitor completions bash)\n  pr-monitor completions zsh > ~/.zfunc/_pr-monitor\n  pr-monitor completions fish > ~/.config/fish/completions/pr-monitor.fish"
    )]
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// The manual, from the same definitions as `--help`: pr-monitor(1) on standard output, or
    /// with `--dir` a page for every command written into that folder.
    #[command(
        after_help = "Examples:\n  pr-monitor man | man -l -\n  pr-monitor man --dir /usr/local/share/man/man1"
    )]
    Man {
        /// Write pr-monitor.1 and one page per command (pr-monitor-watch-add.1, …) into this
        /// folder instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// `merge`'s arguments. Which of `--when-ready`, `--cancel` and `--now` was given is checked
/// by [`MergeArgs::how`], not by a clap group, so a refusal names `--now` as the user wrote it.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The PR (o/r#N, g/p!N or its address).
    #[arg(value_name = "PR")]
    pub pr: PrArg,
    /// Merge once the checks pass (re-arms the forge's auto-merge every tick).
    #[arg(long)]
    pub when_ready: bool,
    /// Disarm.
    #[arg(long)]
    pub cancel: bool,
    /// `--now` after `merge PR`, rewritten by [`normalize_args`]; also its unambiguous
    /// spelling.
    #[arg(long = "merge-now", hide = true)]
    pub merge_now: bool,
}

/// How `merge` was asked to act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeHow {
    WhenReady,
    Cancel,
    Now,
}

impl MergeArgs {
    /// The one way asked of `--when-ready`, `--cancel` and `--now`, or why the arguments say none.
    pub fn how(&self) -> Result<MergeHow, &'static str> {
        match (self.when_ready, self.cancel, self.merge_now) {
            (true, false, false) => Ok(MergeHow::WhenReady),
            (false, true, false) => Ok(MergeHow::Cancel),
            (false, false, true) => Ok(MergeHow::Now),
            (false, false, false) => {
                Err("`merge` needs one of `--when-ready`, `--cancel` or `--now`")
            }
            _ => Err("`merge` takes only one of `--when-ready`, `--cancel` or `--now`"),
        }
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The PR (o/r#N, g/p!N or its address); it need not be watched.
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
    #[command(
        after_help = "Examples:\n  pr-monitor inbox done octo-app-342-ci-1a2b3c4 --note \"pushed 5d6e7f8\""
    )]
    Done {
        /// The message's id (its file name in the inbox's new/, without .json).
        id: String,
        /// What the agent did, for the PR's history.
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ThreadCommand {
    /// Answer a review thread (prefixed `🤖 <agent> on behalf of <owner>`).
    #[command(
        after_help = "Examples:\n  pr-monitor thread reply octo/app#342 PRRT_kwDOAbc123 --body-file reply.md --agent fixer\n  echo Renamed. | pr-monitor thread reply octo/app#342 PRRT_kwDOAbc123 --body-file -"
    )]
    Reply {
        /// The PR (o/r#N, g/p!N or its address).
        #[arg(value_name = "PR")]
        pr: PrArg,
        /// The forge's thread id (GitHub's `PRRT_…`, GitLab's discussion id).
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
    #[command(
        after_help = "Examples:\n  pr-monitor thread resolve octo/app#342 PRRT_kwDOAbc123\n  pr-monitor thread resolve octo/app#342 PRRT_kwDOAbc123 --agent fixer"
    )]
    Resolve {
        /// The PR (o/r#N, g/p!N or its address).
        #[arg(value_name = "PR")]
        pr: PrArg,
        /// The forge's thread id (GitHub's `PRRT_…`, GitLab's discussion id).
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
    #[command(
        after_help = "Examples:\n  pr-monitor watch add https://github.com/octo/app/pull/342 --agent fixer --merge-when-ready\n  pr-monitor watch add octo/app#342 octo/app#343 --job my-prs\n  pr-monitor watch add group/project!57 --auto-fix off\n  pr-monitor watch add octo/app#342 --checkout /home/agent/src/app"
    )]
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
    #[command(after_help = "Examples:\n  pr-monitor watch ls\n  pr-monitor watch ls --json")]
    Ls,
    /// Stop watching a PR.
    #[command(after_help = "Examples:\n  pr-monitor watch rm octo/app#342")]
    Rm {
        /// The PR (o/r#N, g/p!N or its address).
        #[arg(value_name = "PR")]
        pr: PrArg,
    },
    /// Stop ticking a PR until resumed.
    #[command(after_help = "Examples:\n  pr-monitor watch pause octo/app#342")]
    Pause {
        /// The PR (o/r#N, g/p!N or its address).
        #[arg(value_name = "PR")]
        pr: PrArg,
    },
    /// Tick a paused PR again (due at once).
    #[command(after_help = "Examples:\n  pr-monitor watch resume octo/app#342")]
    Resume {
        /// The PR (o/r#N, g/p!N or its address).
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
    #[command(
        after_help = "Examples:\n  pr-monitor config check\n  pr-monitor --config /etc/pr-monitor/config.yaml config check --json"
    )]
    Check,
}

#[derive(Debug, Subcommand)]
pub enum NotifyCommand {
    /// Send one test message through every configured channel (email, Slack, each agent).
    #[command(after_help = "Examples:\n  pr-monitor notify test")]
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
        assert_eq!(fix, FixTarget::Pr(pr("octo/app#1")));
        let Command::Fix { pr: branch, head } =
            parse(&["fix", "octo/app@release/1.2", "--head", "abc1234"])
                .unwrap()
                .command
        else {
            panic!("fix a branch");
        };
        assert_eq!(branch, FixTarget::Branch("octo/app@release/1.2".into()));
        assert_eq!(head.as_deref(), Some("abc1234"));
        assert!(parse(&["fix", "octo@main"]).is_err(), "no repository");
        assert!(parse(&["fix", "https://x@github.com/o/r"]).is_err());
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

    /// The words of one example after its last `pr-monitor`, up to a redirection, a pipe or the end of
    /// a process substitution; double quotes group words.
    fn example_args(line: &str) -> Option<Vec<String>> {
        let (_, rest) = line.rsplit_once("pr-monitor ")?;
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        for c in rest.chars() {
            match c {
                '"' => quoted = !quoted,
                '>' | '|' | ')' if !quoted => break,
                ' ' if !quoted => {
                    if !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                }
                c => word.push(c),
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
        Some(words)
    }

    /// Every command below `command`, with the words that name it.
    fn commands(command: &clap::Command, path: &[String]) -> Vec<(Vec<String>, clap::Command)> {
        let mut out = vec![(path.to_vec(), command.clone())];
        for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut p = path.to_vec();
            p.push(sub.get_name().to_owned());
            out.extend(commands(sub, &p));
        }
        out
    }

    #[test]
    fn every_command_has_examples_that_parse_and_every_argument_a_description() {
        let mut root = <Cli as clap::CommandFactory>::command();
        root.build();
        let all = commands(&root, &[]);
        assert!(all.len() > 25, "{}", all.len());
        for (path, command) in all {
            let help = command
                .get_after_help()
                .map(ToString::to_string)
                .unwrap_or_default();
            assert!(
                help.starts_with("Examples:\n  "),
                "{path:?} has no examples"
            );
            for line in help.lines().skip(1) {
                let args = example_args(line).unwrap_or_else(|| panic!("{path:?}: {line}"));
                let mut rest = args.iter();
                assert!(
                    path.iter().all(|p| rest.any(|a| a == p)),
                    "{path:?}'s example is another command's: {line}"
                );
                let command_line = std::iter::once("pr-monitor".into())
                    .chain(args.iter().map(Into::into))
                    .collect();
                if let Err(e) = Cli::try_parse_from(normalize_args(command_line)) {
                    assert!(
                        !e.use_stderr(),
                        "{path:?}'s example does not parse: {line}\n{e}"
                    );
                }
            }
            for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
                assert!(
                    arg.get_help()
                        .is_some_and(|h| !h.to_string().trim().is_empty()),
                    "{path:?}: `{}` has no description",
                    arg.get_id()
                );
            }
        }
    }

    #[test]
    fn global_flags_have_a_heading_of_their_own() {
        let mut root = <Cli as clap::CommandFactory>::command();
        root.build();
        let run = root.find_subcommand("run").unwrap();
        for arg in run.get_arguments() {
            let global = arg.is_global_set();
            assert_eq!(
                arg.get_help_heading() == Some("Global options"),
                global,
                "{}",
                arg.get_id()
            );
        }
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

//! The commands: parses the command line, loads config and database into an [`App`], runs
//! the command, and turns the outcome into an exit code.
//!
//! Errors are printed once, here, as `error: …`; exit codes follow the contract: 0 done,
//! 1 some PR's tick could not complete, 2 usage or config error, 3 nothing could be read (a
//! forge refused the token or could not be reached).

pub mod agent_cli;
pub mod check;
mod config_check;
pub mod listener;
pub mod manual;
pub mod mcp;
pub mod mcp_tools;
pub mod output;
pub mod owner;
mod paths;
pub mod progress;
pub mod run_report;
pub mod schedule;
pub mod secrets_check;
pub mod serve;
pub mod signals;
mod status;
mod watch;

use std::io::IsTerminal as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;

use crate::app::{App, Forges, UsageError, usage};
use crate::cli::{
    Cli, Command, ConfigCommand, InboxCommand, MergeArgs, RunArgs, ThreadCommand, WatchCommand,
};
use crate::config::{Config, TokenKeys as _};
use crate::model::reference::{BadPrRef, FixTarget};
use crate::model::{Instant, PrRef, parse_instant};
use crate::store::{Selection, Store};
use crate::tick::{self, RunOptions};

/// The program: parse, run, print the error once, return the exit code.
pub fn main() -> ExitCode {
    // Before any thread is started.
    crate::malloc::tune();
    let args = crate::cli::normalize_args(std::env::args_os().collect());
    let json_logs = crate::logging::asks_for_json(&args);
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // A PR argument that is no PR reference is said as every other usage error is.
        Err(e) => {
            if let Some(bad) =
                std::error::Error::source(&e).and_then(|s| s.downcast_ref::<BadPrRef>())
            {
                crate::logging::early_error(json_logs, &bad.to_string());
                return ExitCode::from(2);
            }
            if e.use_stderr() && json_logs {
                crate::logging::early_error(true, &e.render().to_string());
            } else {
                let _ = e.print();
            }
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    if let Err(e) = crate::logging::init(cli.log_level.as_deref(), cli.log_format) {
        crate::logging::early_error(json_logs, &e);
        return ExitCode::from(2);
    }
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        // The reader stopped early (`status | head -1`): nothing more to say to anyone.
        Err(e) if crate::stdout::is_closed(&e) => ExitCode::SUCCESS,
        Err(e) => {
            crate::logging::complain(&crate::secrets::mask(&format!("{e:#}")));
            let usage = e
                .chain()
                .any(|c| c.is::<UsageError>() || c.is::<crate::store::NewerDatabase>());
            let nothing_read = e.downcast_ref::<crate::app::NothingRead>().is_some();
            ExitCode::from(if usage {
                2
            } else if nothing_read {
                3
            } else {
                1
            })
        }
    }
}

/// Gathers the secrets the config points at that can be read without running anything (the
/// token variables and files, the SMTP credentials, the Slack webhook), so they are masked from
/// the first line written; a token command's output is held when it runs.
fn hold_secrets(config: &Config) {
    let agents = config
        .agents
        .values()
        .filter_map(crate::config::AgentConfig::token);
    for source in [config.github.token(), config.gitlab.token()]
        .into_iter()
        .chain(agents)
    {
        match source {
            crate::config::TokenSource::Env(name) => crate::secrets::hold_env([name.as_str()]),
            source @ (crate::config::TokenSource::File(_)
            | crate::config::TokenSource::GlabConfig { .. }) => {
                if let Ok(value) = source.resolve() {
                    crate::secrets::hold(value.expose());
                }
            }
            // Run when first needed, like a token command; the value is held then.
            crate::config::TokenSource::Command(_) | crate::config::TokenSource::GhUser(_) => {}
        }
    }
    if let Some(app) = &config.github.app {
        crate::secrets::hold_env(app.private_key_env.as_deref());
    }
    if let Some(email) = &config.notify.email {
        crate::secrets::hold_env(email.password_env.as_deref());
        // A password written into the URL itself (`smtp://user:password@host`).
        if let Ok(address) = crate::address::Address::parse(&email.smtp_url)
            && let Some(password) = address.password()
        {
            crate::secrets::hold(password);
        }
    }
    if let Some(slack) = &config.notify.slack
        && let Ok(url) = std::env::var(&slack.webhook_url_env)
    {
        crate::secrets::hold_url(&url);
    }
}

/// `completions SHELL`: the shell's completion script, from the same definitions as `--help`.
/// It needs no config and no database, so it is answered before either is read.
fn completions(shell: clap_complete::Shell) -> Result<u8> {
    let mut command = <Cli as clap::CommandFactory>::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "pr-monitor", &mut script);
    // Written whole, so a closed pipe is an error said, never a panic mid-script.
    std::io::Write::write_all(&mut std::io::stdout().lock(), &script)?;
    Ok(0)
}

/// Whether `command` may talk to a forge (or, `config check`, vouches for the credentials).
fn reads_forges(command: &Command) -> bool {
    !matches!(
        command,
        Command::Status { .. }
            | Command::Watch(_)
            | Command::Inbox(_)
            | Command::Notify(_)
            | Command::Mcp { .. }
    )
}

fn parse_now(now: Option<&str>) -> Result<Instant> {
    match now {
        None => Ok(crate::clock::logical(None)),
        Some(s) => parse_instant(s)
            .map_err(|e| usage(format!("--now `{s}` is not an RFC 3339 instant ({e})"))),
    }
}

/// The config, whose web roots become the process's (every PR address is written on them),
/// and whose `tls.ca_file` every TLS connection trusts.
fn load_config(path: Option<&Path>) -> Result<Config> {
    let config = Config::load(path).map_err(|e| usage(e.to_string()))?;
    crate::web_roots::set_roots(config.web_roots());
    if let Some(ca_file) = &config.tls.ca_file {
        crate::tls::set_extra_roots(crate::tls::read_ca_file(ca_file).map_err(usage)?);
    }
    Ok(config)
}

fn run(cli: Cli) -> Result<u8> {
    match &cli.command {
        Command::Completions { shell } => return completions(*shell),
        Command::Man { dir } => return manual::man(dir.as_deref(), cli.json),
        _ => {}
    }
    let now = parse_now(cli.now.as_deref())?;
    let config = load_config(cli.config.as_deref())?;
    hold_secrets(&config);
    // A GitHub App key that cannot be read or is no RSA key is a config error, said before
    // any forge is asked anything.
    if let Some(app) = &config.github.app
        && reads_forges(&cli.command)
    {
        crate::app::app_key(app).map_err(usage)?;
    }
    let command = match cli.command {
        Command::Config(ConfigCommand::Check) => {
            return config_check::config_check(&config, cli.db.as_deref(), cli.json);
        }
        Command::Notify(crate::cli::NotifyCommand::Test) => {
            return notify_test(&config, now, cli.json);
        }
        other => other,
    };
    let db = paths::database(cli.db.as_deref(), &config)?;
    // `status` always says what it reads (on standard error: its output stays as it was);
    // `run` says it on a terminal, where a person is reading.
    let says_where = match command {
        Command::Status { .. } => !cli.json,
        Command::Run(_) => std::io::stderr().is_terminal(),
        _ => false,
    };
    if says_where {
        crate::logging::say(&paths::using_line(&config, &db));
    }
    // Reading commands work on a database they may not write (a read-only file or folder).
    let store = if matches!(
        command,
        Command::Status { .. } | Command::Watch(WatchCommand::Ls)
    ) {
        Store::open_for_reading(&db)?
    } else {
        Store::open(&db)?
    };
    let app = App {
        config,
        store,
        now,
        clock_fixed: cli.now.is_some(),
        json: cli.json,
        forges: Forges::default(),
        dry_run: false,
        viewers_read: std::collections::BTreeMap::new(),
    };
    // Whichever command it was: a forge that refused the token or could not be reached
    // before anything was read exits 3.
    dispatch(app, command, &db, cli.db.as_deref()).map_err(crate::app::nothing_read_if_cut_off)
}

/// Runs `command` on the app it opened (`db` is its database, `cli_db` what `--db` said).
fn dispatch(mut app: App, command: Command, db: &Path, cli_db: Option<&Path>) -> Result<u8> {
    match command {
        Command::Watch(cmd) => watch::watch(&mut app, cmd),
        Command::Run(args) => run_tick(&mut app, &args),
        Command::Status { pr } => status::status(&app, pr.as_ref()),
        Command::Config(ConfigCommand::Check) => {
            config_check::config_check(&app.config, cli_db, app.json)
        }
        Command::Notify(crate::cli::NotifyCommand::Test) => {
            notify_test(&app.config, app.now, app.json)
        }
        Command::Completions { shell } => completions(shell),
        Command::Man { dir } => manual::man(dir.as_deref(), app.json),
        Command::Daemon => schedule::daemon(&mut app, db),
        Command::Mcp { agent } => mcp::command(app, &agent),
        Command::Check(args) => check::command(&mut app, &args),
        Command::Fix {
            pr: FixTarget::Branch(branch),
            head,
        } => owner::vouch_branch(&mut app, &branch, head.as_deref()),
        Command::Fix {
            pr: FixTarget::Pr(pr),
            head,
        } => {
            let pr = app.pr(&pr)?;
            if let Some(head) = &head {
                owner::vouch(&mut app, &pr, head)?;
            }
            owner::fix(&mut app, &pr)
        }
        Command::Rerun { pr } => {
            let pr = app.pr(&pr)?;
            owner::rerun(&mut app, &pr)
        }
        Command::Merge(args) => merge(&mut app, &args),
        Command::Inbox(InboxCommand::Done { id, note }) => {
            agent_cli::inbox_done(&mut app, &id, note.as_deref())
        }
        Command::Thread(ThreadCommand::Reply {
            pr,
            thread,
            body_file,
            agent,
        }) => {
            let pr = app.pr(&pr)?;
            agent_cli::reply(&mut app, &pr, &thread, &body_file, agent.as_deref())
        }
        Command::Thread(ThreadCommand::Resolve { pr, thread, agent }) => {
            let pr = app.pr(&pr)?;
            agent_cli::resolve(&mut app, &pr, &thread, agent.as_deref())
        }
    }
}

/// `merge PR`: now, when ready, or `--cancel`.
fn merge(app: &mut App, args: &MergeArgs) -> Result<u8> {
    let how = args.how().map_err(usage)?;
    let pr = app.pr(&args.pr)?;
    owner::merge(app, &pr, how)
}

/// `notify test`: one line (or JSON object) per channel; 0 when every channel took its message.
fn notify_test(config: &Config, now: Instant, json: bool) -> Result<u8> {
    let results = crate::notify::probe::send_all(config, now);
    let code = u8::from(results.iter().any(|r| !r.ok));
    let print = || -> Result<()> {
        if json {
            crate::outln!("{}", serde_json::to_string(&results)?)?;
        } else if results.is_empty() {
            crate::outln!("no notification channel or agent is configured")?;
        } else {
            for r in &results {
                crate::outln!("{}", r.line())?;
            }
        }
        Ok(())
    };
    crate::stdout::keep_code(code, print())
}

fn run_tick(app: &mut App, args: &RunArgs) -> Result<u8> {
    let prs = args
        .prs
        .iter()
        .map(|p| app.pr(p))
        .collect::<Result<Vec<_>>>()?;
    if let Some(job) = &args.job
        && app.config.job(job).is_none()
    {
        return Err(usage(format!("no job named `{job}`")));
    }
    for pr in &prs {
        if app.store.watch(pr)?.is_none() && !named_by_a_job(&app.config, pr) {
            return Err(usage(format!(
                "{} is not watched; watch it first with `pr-monitor watch add {pr}`, or read it once with `pr-monitor check {pr}`",
                pr.url()
            )));
        }
    }
    let opts = RunOptions {
        selection: Selection {
            job: args.job.clone(),
            prs,
        },
        force: args.force,
        dry_run: args.dry_run,
        ..RunOptions::default()
    };
    let progress = if app.json {
        None
    } else {
        progress::on_terminal()
    };
    let opts = RunOptions {
        progress: progress.clone(),
        stop: signals::stop_flag(),
        ..opts
    };
    let output = run_report::RunOutput::new(app.json, crate::logging::is_json());
    let mut printer = run_report::RunPrinter::new(output, app.now, progress.clone());
    let result = tick::run(app, &opts, &mut printer);
    if let Some(p) = &progress {
        (p.0)(tick::Step::Done);
    }
    let summary = result.context("the tick could not run")?;
    crate::stdout::keep_code(summary.exit_code(), printer.finish(&summary))
}

/// Whether a job's watch list names `pr` (a `pr:` entry, a `repo:` listing of its repository,
/// or a `mine:` search of its forge): the run's sync may add it before ticking.
fn named_by_a_job(config: &Config, pr: &PrRef) -> bool {
    config.jobs.iter().flat_map(|j| &j.watch).any(|w| match w {
        crate::config::Watch::Pr(p) => p == pr,
        crate::config::Watch::Repo(r) => r.forge == pr.forge && r.repo == pr.repo,
        crate::config::Watch::Mine(forge) => *forge == pr.forge,
        crate::config::Watch::Branch(_) => false,
    })
}

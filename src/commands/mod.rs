//! The commands: parses the command line, loads config and database into an [`App`], runs
//! the command, and turns the outcome into an exit code.
//!
//! Errors are printed once, here, as `error: …`; exit codes follow the contract: 0 done,
//! 1 some PR's tick could not complete, 2 usage or config error.

pub mod agent_cli;
pub mod check;
pub mod listener;
pub mod manual;
pub mod mcp;
pub mod mcp_tools;
pub mod output;
pub mod owner;
pub mod progress;
pub mod run_report;
pub mod schedule;
pub mod secrets_check;
pub mod serve;
pub mod signals;

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;

use crate::app::{App, Forges, UsageError, usage};
use crate::cli::{
    AutoFixArg, Cli, Command, ConfigCommand, InboxCommand, RunArgs, ThreadCommand, WatchCommand,
};
use crate::config::{Config, TokenKeys as _};
use crate::holder::Holder;
use crate::model::reference::{BadPrRef, FixTarget, PrArg};
use crate::model::{Instant, PrRef, parse_instant};
use crate::store::{AutoFixChoice, NewWatch, Selection, Store};
use crate::tick::{self, RunOptions};

/// The program: parse, run, print the error once, return the exit code.
pub fn main() -> ExitCode {
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
            ExitCode::from(if usage { 2 } else { 1 })
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

/// The database a command uses: `--db`, else the config's `database`. A database whose folder
/// does not exist is a usage error, never a silent `mkdir`; the one folder created is the
/// user's state folder (owner-only), when no config file was found.
fn database(cli_db: Option<&Path>, config: &Config) -> Result<PathBuf> {
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
fn checked_database(cli_db: Option<&Path>, config: &Config) -> Result<PathBuf> {
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
fn using_line(config: &Config, db: &Path) -> String {
    let config = config.source().map_or_else(
        || "none found (built-in defaults)".to_owned(),
        |p| p.display().to_string(),
    );
    format!("config {config} · database {}", db.display())
}

#[expect(
    clippy::too_many_lines,
    reason = "the command dispatch: one short arm per command"
)]
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
            return config_check(&config, cli.db.as_deref(), cli.json);
        }
        Command::Notify(crate::cli::NotifyCommand::Test) => {
            return notify_test(&config, now, cli.json);
        }
        other => other,
    };
    let db = database(cli.db.as_deref(), &config)?;
    // `status` always says what it reads (on standard error: its output stays as it was);
    // `run` says it on a terminal, where a person is reading.
    let says_where = match command {
        Command::Status { .. } => !cli.json,
        Command::Run(_) => std::io::stderr().is_terminal(),
        _ => false,
    };
    if says_where {
        crate::logging::say(&using_line(&config, &db));
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
    let mut app = App {
        config,
        store,
        now,
        clock_fixed: cli.now.is_some(),
        json: cli.json,
        forges: Forges::default(),
        dry_run: false,
        viewers_read: std::collections::BTreeMap::new(),
    };
    match command {
        Command::Watch(cmd) => watch(&mut app, cmd),
        Command::Run(args) => run_tick(&mut app, &args),
        Command::Status { pr } => status(&app, pr.as_ref()),
        Command::Config(ConfigCommand::Check) => {
            config_check(&app.config, cli.db.as_deref(), app.json)
        }
        Command::Notify(crate::cli::NotifyCommand::Test) => {
            notify_test(&app.config, app.now, app.json)
        }
        Command::Completions { shell } => completions(shell),
        Command::Man { dir } => manual::man(dir.as_deref(), app.json),
        Command::Daemon => schedule::daemon(&mut app, &db),
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
        Command::Merge(args) => {
            let how = if args.when_ready {
                owner::MergeRequest::WhenReady
            } else if args.cancel {
                owner::MergeRequest::Cancel
            } else {
                owner::MergeRequest::Now
            };
            let pr = app.pr(&args.pr)?;
            owner::merge(&mut app, &pr, how)
        }
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

fn config_check(config: &Config, cli_db: Option<&Path>, json: bool) -> Result<u8> {
    let db = checked_database(cli_db, config)?;
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

#[expect(
    clippy::too_many_lines,
    reason = "the watch subcommands: one short arm each"
)]
fn watch(app: &mut App, cmd: WatchCommand) -> Result<u8> {
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
            if let Some(job) = &job
                && app.config.job(job).is_none()
            {
                return Err(usage(format!(
                    "no job named `{job}` (see the files in the jobs folder)"
                )));
            }
            if let Some(agent) = &agent
                && !app.config.agents.contains_key(agent)
            {
                return Err(usage(format!(
                    "no agent named `{agent}` in the config's `agents`"
                )));
            }
            // A job whose policy says merge_when_ready arms every PR added to it.
            let job_arms = job
                .as_deref()
                .and_then(|j| app.config.job(j))
                .is_some_and(|j| app.config.policy(Some(j)).merge_when_ready);
            for pr in &prs {
                let before = app.store.watch(pr)?;
                // Setting auto-fix back to what the PR's job says clears the override.
                let job_name = job
                    .as_deref()
                    .or_else(|| before.as_ref().and_then(|b| b.job.as_deref()));
                let policy_value = app
                    .config
                    .policy(job_name.and_then(|j| app.config.job(j)))
                    .auto_fix;
                let new = NewWatch {
                    job: job.clone(),
                    agent: agent.clone(),
                    auto_fix: match auto_fix {
                        None => AutoFixChoice::Keep,
                        Some(AutoFixArg::Default) => AutoFixChoice::Clear,
                        Some(v) if (v == AutoFixArg::On) == policy_value => AutoFixChoice::Clear,
                        Some(v) => AutoFixChoice::Set(v == AutoFixArg::On),
                    },
                    merge_armed: merge_when_ready || job_arms,
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
                if let Some(head) = &trust_head {
                    owner::remember_vouched(app, pr, head)?;
                }
                if let Some(path) = &checkout {
                    owner::remember_checkout(app, pr, path)?;
                }
                if !app.json {
                    if added {
                        crate::outln!("watching {}", pr.url())?;
                    } else if changes.is_empty() {
                        crate::outln!("already watching {}; nothing changed", pr.url())?;
                    } else {
                        crate::outln!(
                            "already watching {}; now: {}",
                            pr.url(),
                            changes.join(", ")
                        )?;
                    }
                }
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
        WatchCommand::Ls => status(app, None),
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

/// The leases held now by live runs, by watch id (a lease whose holder's process is gone
/// holds nothing: the next run takes it over); and the `status` lines saying who holds how
/// many PRs (a holder whose process is gone says the next run takes its PRs over).
fn held(app: &App) -> Result<(std::collections::BTreeMap<i64, Holder>, Vec<String>)> {
    let (gone, live): (Vec<_>, Vec<_>) = app
        .store
        .held()?
        .into_iter()
        .partition(|(_, h)| h.gone_here());
    let named = |v: &[(i64, Holder)]| -> Vec<Option<Holder>> {
        v.iter().map(|(_, h)| Some(h.clone())).collect()
    };
    let mut lines = output::held_lines(&named(&live));
    lines.extend(
        output::held_lines(&named(&gone))
            .into_iter()
            .map(|l| format!("{l}, whose process is gone: the next run takes them over")),
    );
    Ok((live.into_iter().collect(), lines))
}

fn status(app: &App, pr: Option<&PrArg>) -> Result<u8> {
    match pr {
        None => {
            let watches = app.store.watches()?;
            let branches = app.store.branch_watches()?;
            let (holders, held_lines) = held(app)?;
            if app.json {
                let mut rows = output::status_array(&watches);
                if let Some(rows) = rows.as_array_mut() {
                    for (row, w) in rows.iter_mut().zip(&watches) {
                        row["held_by"] = output::held_json(holders.get(&w.id));
                    }
                    rows.extend(branches.iter().map(crate::view::branch_view::json));
                }
                crate::outln!("{rows}")?;
            } else if watches.is_empty() && !branches.is_empty() {
                let term = crate::terminal::Term::detect();
                crate::out!(
                    "{}",
                    crate::view::branch_view::render(&branches, app.now, term)
                )?;
            } else if watches.is_empty() {
                crate::outln!(
                    "nothing is watched; add a PR with `pr-monitor watch add OWNER/REPO#N`"
                )?;
            } else {
                crate::out!(
                    "{}",
                    crate::view::status_view::render(
                        &watches,
                        app.now,
                        crate::terminal::Term::detect()
                    )
                )?;
                if !branches.is_empty() {
                    let term = crate::terminal::Term::detect();
                    crate::out!(
                        "{}",
                        crate::view::branch_view::render(&branches, app.now, term)
                    )?;
                }
                for line in held_lines {
                    crate::outln!("{line}")?;
                }
                let problems = app.store.outbox_problems()?;
                if !problems.is_empty() {
                    crate::outln!("undelivered messages:")?;
                    for p in &problems {
                        crate::outln!("{}", output::undelivered_line(p))?;
                    }
                }
            }
        }
        Some(pr) => {
            let pr = app.pr(pr)?;
            let w = app
                .store
                .watch(&pr)?
                .ok_or_else(|| usage(format!("{} is not watched", pr.url())))?;
            let history = app.store.history(&pr, 20)?;
            let (holders, _) = held(app)?;
            let checkout = w
                .status
                .memory
                .checkout
                .as_deref()
                .zip(w.status.head_sha.as_ref())
                .map(|(path, head)| crate::checkout::read(Path::new(path), head));
            let holder = holders.get(&w.id);
            if app.json {
                let mut v = output::status_json(&w);
                v["history"] = serde_json::to_value(&history)?;
                v["picture"] = serde_json::to_value(&w.status.memory.picture)?;
                v["held_by"] = output::held_json(holder);
                v["checkout"] = output::checkout_json(&w, checkout.as_ref());
                crate::outln!("{v}")?;
            } else {
                let policy_auto_fix = app
                    .config
                    .policy(w.job.as_deref().and_then(|j| app.config.job(j)))
                    .auto_fix;
                crate::out!(
                    "{}",
                    output::status_detail(
                        &w,
                        &history,
                        app.now,
                        policy_auto_fix,
                        checkout.as_ref()
                    )
                )?;
                if let Some(h) = holder {
                    crate::outln!("  held by    {}", output::describe_holder(h))?;
                }
            }
        }
    }
    Ok(0)
}

//! The configuration: the config file (`pr-monitor.yaml`) and the job files (`jobs/*.yaml`).
//!
//! This module owns finding, reading, parsing, validating and resolving both, and it is the only
//! place that calls serde_yaml (so a move to a fork is a rename here). Unknown keys are errors;
//! every default is documented on its field; relative paths are resolved against the config
//! file's folder at load. Any problem inside a file is reported as `file:line:column: what is
//! wrong` ([`ConfigError::At`]): serde_yaml gives the position of syntax, type and single-value
//! errors, and the checks that compare values find theirs with a position probe (a second,
//! targeted parse of the same text; see the private `locate` module).
//!
//! Callers get typed values: [`Config`], its [`Job`]s, and the resolved per-PR [`Policy`] from
//! [`Config::policy`]. Tokens are [`TokenSource`]s, read into a [`Secret`] only when needed.

mod agents;
mod cron;
mod de;
mod forges;
mod github_app;
mod job;
mod load;
mod locate;
mod secret;
mod serve;
mod state_dir;
mod tls;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use agents::{AgentConfig, AgentDelivery};
pub use cron::CronSchedule;
pub use forges::{GitHubConfig, GitLabConfig, TokenKeyValues, TokenKeys};
pub use github_app::GitHubAppConfig;
pub use job::{Job, JobPolicy, NotifyChannel, NotifyKind, RepoWatch, UpdateMethod, Watch};
pub use load::ConfigError;
pub(crate) use load::Source;
pub use secret::{Secret, TokenSource};
pub use serve::ServeConfig;
pub use tls::TlsConfig;

pub use crate::model::policy::{ChecksScope, Edits, Handler, Policy, UpdateBranch};

use crate::model::MergeMethod;

/// The config file looked for in the current folder when no path is given.
pub const LOCAL_CONFIG: &str = "config/pr-monitor.yaml";
/// The config file looked for next, when [`LOCAL_CONFIG`] does not exist.
pub const SYSTEM_CONFIG: &str = "/etc/pr-monitor/config.yaml";
/// The database's file name when the config does not say.
pub const DEFAULT_DATABASE: &str = "pr-monitor.db";
/// The jobs folder, beside the config file, when the config does not say.
pub const DEFAULT_JOBS_DIR: &str = "jobs";
/// A job's `agent_messages_per_hour` when it does not say.
pub const DEFAULT_AGENT_MESSAGES_PER_HOUR: u32 = 6;
/// An agent's `timeout_sec` when it does not say.
pub const DEFAULT_AGENT_TIMEOUT_SEC: u64 = 60;

/// The config file. Unknown keys are errors; every key is optional.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default, expecting = "a mapping of config keys")]
pub struct Config {
    /// The SQLite database. Default `pr-monitor.db` beside the config file (in the user's state
    /// folder when there is no config file; see [`Config::state_dir`]). `--db` overrides it.
    #[serde(deserialize_with = "de::path")]
    pub database: PathBuf,
    /// The folder of job files (`*.yaml`, `*.yml`). Default `jobs` beside the config file, read
    /// only if it exists; a folder named here must exist. After loading: the folder the jobs
    /// were read from, or `None` when none was.
    #[serde(deserialize_with = "de::opt_path")]
    pub jobs_dir: Option<PathBuf>,
    /// How often the daemon's sweep for due PRs runs: 5-field cron, or 6 with seconds first.
    /// Default `*/1 * * * *`.
    pub schedule: CronSchedule,
    /// GitHub (or GitHub Enterprise).
    pub github: GitHubConfig,
    /// GitLab (gitlab.com or self-managed).
    pub gitlab: GitLabConfig,
    /// The defaults for every watched PR; a job's `policy` overrides them.
    pub pr: PrConfig,
    /// The agents that fix PRs, by name (letters, digits, `-`, `_`, `.`). Default none.
    #[serde(deserialize_with = "de::unique_map")]
    pub agents: BTreeMap<String, AgentConfig>,
    /// Notification channels. Default none.
    pub notify: NotifyConfig,
    /// Files written at the end of every run. Default none.
    pub report: ReportConfig,
    /// Trust roots beyond the bundled ones. Default none.
    pub tls: TlsConfig,
    /// What the daemon serves over HTTP: webhooks, metrics, the page, its health. Default:
    /// nothing (the daemon listens nowhere). Read by the daemon only.
    pub serve: Option<ServeConfig>,
    /// The jobs read from `jobs_dir`, sorted by file name (set by the loader).
    #[serde(skip)]
    pub jobs: Vec<Job>,
    /// The config file this was read from; `None` for the built-in defaults.
    #[serde(skip)]
    pub source: Option<PathBuf>,
    /// With no config file found: the user's state folder (`$XDG_STATE_HOME/pr-monitor`, else
    /// `~/.local/state/pr-monitor`) that `database` lies in, to be created owner-only before
    /// the database is opened. `None` when a config file was read, or when neither variable
    /// is set (then `database` is empty, and only `--db` names one).
    #[serde(skip)]
    pub state_dir: Option<PathBuf>,
}

impl Default for Config {
    /// The built-in defaults: `pr-monitor.db` (relative), no jobs folder, every block at its
    /// default.
    fn default() -> Self {
        Config {
            database: PathBuf::from(DEFAULT_DATABASE),
            jobs_dir: None,
            schedule: CronSchedule::every_minute(),
            github: GitHubConfig::default(),
            gitlab: GitLabConfig::default(),
            pr: PrConfig::default(),
            agents: BTreeMap::new(),
            notify: NotifyConfig::default(),
            report: ReportConfig::default(),
            tls: TlsConfig::default(),
            serve: None,
            jobs: Vec::new(),
            source: None,
            state_dir: None,
        }
    }
}

/// The `pr:` block: defaults for every watched PR. Cadences and counts are at least 1; a
/// negative or zero value is an error naming its position.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default, expecting = "a mapping (the `pr` block)")]
pub struct PrConfig {
    /// Send failures on the agent's commits back to it. Default `true`.
    pub auto_fix: bool,
    /// Fixes per PR before auto-fix stops. Default 3.
    #[serde(deserialize_with = "de::count")]
    pub max_attempts: u32,
    /// `squash | merge | rebase`. Default `""` (`None`): the first the repository allows of
    /// squash, merge, rebase.
    #[serde(deserialize_with = "de::merge_method")]
    pub merge_method: Option<MergeMethod>,
    /// Cadence, in seconds, while checks run, a fix is in flight, a merge is armed, or there
    /// was activity in the last two minutes. Default 30.
    #[serde(deserialize_with = "de::secs")]
    pub poll_sec: u64,
    /// Cadence, in seconds, for an open PR otherwise. Default 300.
    #[serde(deserialize_with = "de::secs")]
    pub idle_poll_sec: u64,
    /// A fix in flight this long (seconds) without a new commit counts as having pushed none.
    /// Default 1800.
    #[serde(deserialize_with = "de::secs")]
    pub fix_timeout_sec: u64,
    /// A head with no checks yet is pending this long (seconds) after it was first seen; then it
    /// has no checks. Default 600; 0 means at once.
    #[serde(deserialize_with = "de::secs_or_zero")]
    pub no_checks_grace_sec: u64,
    /// Addition to the contract: how many lines of a failed job's log go to the agent.
    /// Default 80.
    #[serde(deserialize_with = "de::size")]
    pub log_tail_lines: usize,
    /// Addition to the contract: the most bytes of a failed job's log that go to the agent.
    /// Default 16384.
    #[serde(deserialize_with = "de::size")]
    pub log_tail_bytes: usize,
    /// Addition to the contract: extra infrastructure-flake patterns, plain substrings (not
    /// regexes) matched case-insensitively against job logs and check output, on top of the
    /// built-in ones. Default none.
    pub infra_patterns: Vec<String>,
    /// Addition to the contract: a PR that has not moved for this many seconds is reported as
    /// stuck. Default 0: off.
    #[serde(deserialize_with = "de::secs_or_zero")]
    pub stuck_after_sec: u64,
    /// Addition to the contract: a check still queued or running this many seconds after its
    /// head was first seen counts as failed ("never finished"), so a third-party suite that
    /// sits queued forever cannot hold a PR. Default 3600; 0: wait forever.
    #[serde(deserialize_with = "de::secs_or_zero")]
    pub pending_timeout_sec: u64,
}

impl Default for PrConfig {
    fn default() -> Self {
        PrConfig {
            auto_fix: true,
            max_attempts: 3,
            merge_method: None,
            poll_sec: 30,
            idle_poll_sec: 300,
            fix_timeout_sec: 1800,
            no_checks_grace_sec: 600,
            log_tail_lines: 80,
            log_tail_bytes: 16384,
            infra_patterns: Vec::new(),
            stuck_after_sec: 0,
            pending_timeout_sec: 3600,
        }
    }
}

/// The `notify:` block. A channel is on when its block is present.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(
    deny_unknown_fields,
    default,
    expecting = "a mapping (the `notify` block)"
)]
pub struct NotifyConfig {
    /// Email through an SMTP server. Default: off.
    pub email: Option<EmailConfig>,
    /// Slack through an incoming webhook. Default: off.
    pub slack: Option<SlackConfig>,
}

impl NotifyConfig {
    /// The configured channels, email first.
    pub fn channels(&self) -> Vec<NotifyChannel> {
        let mut out = Vec::new();
        if self.email.is_some() {
            out.push(NotifyChannel::Email);
        }
        if self.slack.is_some() {
            out.push(NotifyChannel::Slack);
        }
        out
    }

    /// Whether `channel` is configured and carries notices of `kind` (its `on:` filter).
    pub fn carries(&self, channel: NotifyChannel, kind: NotifyKind) -> bool {
        let on = match channel {
            NotifyChannel::Email => self.email.as_ref().map(|e| e.on.as_ref()),
            NotifyChannel::Slack => self.slack.as_ref().map(|s| s.on.as_ref()),
        };
        on.is_some_and(|filter| filter.is_none_or(|kinds| kinds.contains(&kind)))
    }
}

/// `notify.email`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping (the `email` block)")]
pub struct EmailConfig {
    /// `smtps://HOST:465` or `smtp://HOST:587` (STARTTLS). Required.
    #[serde(deserialize_with = "de::smtp_url")]
    pub smtp_url: String,
    /// The environment variable holding the SMTP user name. Default: no authentication.
    #[serde(default, deserialize_with = "de::opt_env_name")]
    pub username_env: Option<String>,
    /// The environment variable holding the SMTP password; given together with `username_env`.
    #[serde(default, deserialize_with = "de::opt_env_name")]
    pub password_env: Option<String>,
    /// The sender address (`addr@host` or `Name <addr@host>`). Required.
    #[serde(deserialize_with = "de::email")]
    pub from: String,
    /// The recipients; at least one. Required.
    #[serde(deserialize_with = "de::emails")]
    pub to: Vec<String>,
    /// Addition to the contract: the notice kinds this channel carries (`ci`, `guard`,
    /// `merge`, `stuck`, `error`, `conflict`, `review`). Default: every kind a job notifies on.
    #[serde(default)]
    pub on: Option<Vec<NotifyKind>>,
}

/// `notify.slack`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping (the `slack` block)")]
pub struct SlackConfig {
    /// The environment variable holding the incoming-webhook URL (a secret). Required.
    #[serde(deserialize_with = "de::env_name")]
    pub webhook_url_env: String,
    /// Addition to the contract: the notice kinds this channel carries. Default: every kind a
    /// job notifies on.
    #[serde(default)]
    pub on: Option<Vec<NotifyKind>>,
}

/// The `report:` block: files written atomically at the end of every run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(
    deny_unknown_fields,
    default,
    expecting = "a mapping (the `report` block)"
)]
pub struct ReportConfig {
    /// A self-contained HTML status page. Default: none.
    #[serde(deserialize_with = "de::opt_path")]
    pub html_path: Option<PathBuf>,
    /// Prometheus text-format metrics (for node_exporter's textfile collector). Default: none.
    #[serde(deserialize_with = "de::opt_path")]
    pub metrics_path: Option<PathBuf>,
    /// Addition to the contract: the mode of the page and the metrics, an octal string such as
    /// `"0640"` (read and write bits only). Default: owner-only, `0600`.
    #[serde(deserialize_with = "de::opt_file_mode")]
    pub mode: Option<u32>,
}

impl ReportConfig {
    /// The mode the page and the metrics are written with.
    pub fn file_mode(&self) -> u32 {
        self.mode.unwrap_or(crate::private::FILE)
    }
}

impl Config {
    /// The web hosts a PR address may name: the public forges, the configured APIs' hosts and
    /// the forges' web hosts.
    pub fn forge_hosts(&self) -> crate::model::reference::ForgeHosts {
        crate::model::reference::ForgeHosts::with_apis(&self.github.api_url, &self.gitlab.api_url)
            .with_web(&self.web_roots())
    }

    /// Each forge's web root: `web_url`, else derived from `api_url`.
    pub fn web_roots(&self) -> crate::model::web::WebRoots {
        crate::model::web::WebRoots::new(
            (&self.github.api_url, self.github.web_url.as_deref()),
            (&self.gitlab.api_url, self.gitlab.web_url.as_deref()),
        )
    }

    /// The config file this was read from; `None` for the built-in defaults.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// The job called `name`.
    pub fn job(&self, name: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.name == name)
    }

    /// The agent called `name`, or a message listing the defined ones (for `--agent NAME`).
    pub fn agent(&self, name: &str) -> Result<&AgentConfig, String> {
        self.agents.get(name).ok_or_else(|| {
            let names: Vec<String> = self.agents.keys().map(|k| format!("`{k}`")).collect();
            if names.is_empty() {
                format!("no agent `{name}`: the config defines none")
            } else {
                format!(
                    "no agent `{name}` in the config (defined: {})",
                    names.join(", ")
                )
            }
        })
    }

    /// The resolved policy for a PR in `job` (or in none): each value from the job's `policy`
    /// when set there, else from the `pr` block, else the built-in default. Channels default to
    /// every configured one; kinds to [`NotifyKind::DEFAULT`].
    pub fn policy(&self, job: Option<&Job>) -> Policy {
        let default = JobPolicy::default();
        let p = job.map_or(&default, |j| &j.policy);
        let pr = &self.pr;
        Policy {
            job: job.map(|j| j.name.clone()),
            agent: p.agent.clone(),
            auto_fix: p.auto_fix.unwrap_or(pr.auto_fix),
            max_attempts: p.max_attempts.unwrap_or(pr.max_attempts),
            merge_method: p.merge_method.unwrap_or(pr.merge_method),
            poll_sec: p.poll_sec.unwrap_or(pr.poll_sec),
            idle_poll_sec: p.idle_poll_sec.unwrap_or(pr.idle_poll_sec),
            fix_timeout_sec: pr.fix_timeout_sec,
            no_checks_grace_sec: pr.no_checks_grace_sec,
            stuck_after_sec: Some(pr.stuck_after_sec).filter(|s| *s > 0),
            pending_timeout_sec: Some(pr.pending_timeout_sec).filter(|s| *s > 0),
            log_tail_lines: pr.log_tail_lines,
            log_tail_bytes: pr.log_tail_bytes,
            infra_patterns: pr.infra_patterns.clone(),
            merge_when_ready: p.merge_when_ready.unwrap_or(false),
            reviews: p.reviews.unwrap_or(Handler::Owner),
            conflicts: p.conflicts.unwrap_or(Handler::Owner),
            update_branch: p.update_branch.unwrap_or(UpdateBranch::Armed),
            update_method: p.update_method.unwrap_or(UpdateMethod::Merge),
            required_labels: p.required_labels.clone().unwrap_or_default(),
            required_approvals_from: p.required_approvals_from.clone().unwrap_or_default(),
            trust: p.trust.clone().unwrap_or_default(),
            allow_non_default_base: p.allow_non_default_base.unwrap_or(false),
            self_merge: p.self_merge.unwrap_or(true),
            edits: p.edits.unwrap_or(Edits::Author),
            checks: p.checks.unwrap_or_default(),
            agent_messages_per_hour: Some(
                p.agent_messages_per_hour
                    .unwrap_or(DEFAULT_AGENT_MESSAGES_PER_HOUR),
            )
            .filter(|n| *n > 0),
            mention: p.mention.clone(),
            notify: dedup(
                job.and_then(|j| j.notify.clone())
                    .unwrap_or_else(|| self.notify.channels()),
            ),
            notify_on: dedup(
                job.and_then(|j| j.notify_on.clone())
                    .unwrap_or_else(|| NotifyKind::DEFAULT.to_vec()),
            ),
        }
    }
}

/// Removes repeats, keeping the first of each.
fn dedup<T: PartialEq>(items: Vec<T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

#[cfg(test)]
mod tests;

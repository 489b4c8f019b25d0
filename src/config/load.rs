//! Loading the configuration: finding and reading the files, reporting a problem inside one
//! as `file:line:column` ([`ConfigError`]), the checks that compare values, and resolving
//! relative paths and the jobs folder.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::locate::{self, Seg, Target};
use super::{
    AgentConfig, Config, DEFAULT_DATABASE, DEFAULT_JOBS_DIR, EmailConfig, GitHubConfig,
    GitLabConfig, Job, LOCAL_CONFIG, SYSTEM_CONFIG, TokenKeys, de, secret, state_dir,
};

/// Why the configuration could not be loaded. Printed once, at the top; exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Something inside a file is wrong: bad YAML, an unknown key, a wrong type, a bad value.
    #[error("{}:{line}:{column}: {message}", path.display())]
    At {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
        /// 1-based.
        column: usize,
        /// What is wrong, starting with the key path when there is one (`pr.poll_sec: …`).
        message: String,
    },
    /// A file or folder could not be read.
    #[error("cannot read {what} `{}`: {reason}", path.display())]
    Read {
        /// `config`, `job file`, `jobs folder`, `current folder`.
        what: &'static str,
        /// What could not be read.
        path: PathBuf,
        /// Why (`no such file or directory`, `permission denied` …).
        reason: String,
    },
}

/// One file's text, for reporting positions in it.
pub(crate) struct Source<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

impl Source<'_> {
    /// Parses the whole text; an empty document is `None`.
    pub(super) fn parse<T: DeserializeOwned>(&self) -> Result<Option<T>, ConfigError> {
        serde_yaml::from_str::<Option<T>>(self.text).map_err(|e| self.yaml_error(&e))
    }

    /// serde_yaml's message, with its position moved to the front.
    fn yaml_error(&self, e: &serde_yaml::Error) -> ConfigError {
        let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
        let message = strip_location(&e.to_string(), line, column);
        let (line, column) = locate::duplicate_field(self.text, &message).unwrap_or((line, column));
        ConfigError::At {
            path: self.path.to_path_buf(),
            line,
            column,
            message,
        }
    }

    /// An error at `path` (its key or its value), prefixed with the path like serde_yaml's own.
    pub(super) fn error(
        &self,
        path: &[Seg<'_>],
        target: Target,
        message: impl fmt::Display,
    ) -> ConfigError {
        let (line, column) = locate::position(self.text, path, target);
        let at = locate::render(path);
        let message = if at.is_empty() {
            message.to_string()
        } else {
            format!("{at}: {message}")
        };
        ConfigError::At {
            path: self.path.to_path_buf(),
            line,
            column,
            message,
        }
    }
}

/// Removes the first ` at line L column C` (the position now in front) from a serde_yaml message,
/// keeping any later position ("…, while parsing a block mapping at line 2 column 1").
pub(super) fn strip_location(message: &str, line: usize, column: usize) -> String {
    let needle = format!(" at line {line} column {column}");
    let mut from = 0;
    while let Some(i) = message[from..].find(&needle).map(|i| i + from) {
        let end = i + needle.len();
        if !message[end..].starts_with(|c: char| c.is_ascii_digit()) {
            return format!("{}{}", &message[..i], &message[end..]);
        }
        from = end;
    }
    message.to_owned()
}

/// `no such file or directory`, without the `(os error 2)`.
pub(super) fn io_reason(e: &io::Error) -> String {
    let text = e.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text.to_owned(),
    }
}

fn read(path: &Path, what: &'static str) -> Result<String, ConfigError> {
    let bytes = std::fs::read(path).map_err(|e| ConfigError::Read {
        what,
        path: path.to_path_buf(),
        reason: io_reason(&e),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let (line, column) = byte_position(e.as_bytes(), e.utf8_error().valid_up_to());
        ConfigError::At {
            path: path.to_path_buf(),
            line,
            column,
            message: "the file is not valid UTF-8 here".to_owned(),
        }
    })
}

/// The 1-based line and column (in characters) of byte `offset` in `bytes`, whose first
/// `offset` bytes are valid UTF-8.
fn byte_position(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = String::from_utf8_lossy(&bytes[..offset]);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

impl Config {
    /// Loads the configuration the way the binary does: `explicit` (from `--config` or
    /// `PR_MONITOR_CONFIG`) when given, which must exist; else [`LOCAL_CONFIG`] in the current
    /// folder; else [`SYSTEM_CONFIG`]; else the built-in defaults. Jobs are loaded too.
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let cwd = std::env::current_dir().map_err(|e| ConfigError::Read {
            what: "current folder",
            path: PathBuf::from("."),
            reason: io_reason(&e),
        })?;
        Config::load_from(explicit, &cwd)
    }

    /// [`Config::load`] with the current folder given: a relative `explicit` path and
    /// [`LOCAL_CONFIG`] are taken relative to `cwd`. With no config file, the database is
    /// `pr-monitor.db` in the user's state folder (from this process's environment).
    pub fn load_from(explicit: Option<&Path>, cwd: &Path) -> Result<Config, ConfigError> {
        Config::load_searching(
            explicit,
            cwd,
            &[cwd.join(LOCAL_CONFIG), SYSTEM_CONFIG.into()],
            state_dir::default_dir(|name| std::env::var_os(name)),
        )
    }

    pub(super) fn load_searching(
        explicit: Option<&Path>,
        cwd: &Path,
        candidates: &[PathBuf],
        state_dir: Option<PathBuf>,
    ) -> Result<Config, ConfigError> {
        if let Some(path) = explicit {
            return Config::from_file(&cwd.join(path));
        }
        match candidates.iter().find(|p| p.exists()) {
            Some(path) => Config::from_file(path),
            None => Ok(Config {
                database: state_dir
                    .as_ref()
                    .map_or_else(PathBuf::new, |dir| dir.join(DEFAULT_DATABASE)),
                state_dir,
                ..Config::default()
            }),
        }
    }

    /// Reads, validates and resolves the config file at `path`, then loads its jobs.
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let text = read(path, "config")?;
        let src = Source { path, text: &text };
        let (mut config, jobs_dir_explicit) = Config::parse_source(&src)?;
        config.load_jobs(&src, jobs_dir_explicit)?;
        Ok(config)
    }

    /// Parses and validates a config file's text without loading jobs. `path` names the file in
    /// errors, and relative paths are resolved against its folder. `jobs_dir` is resolved to the
    /// folder jobs would be read from.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        Config::parse_source(&Source { path, text }).map(|(config, _)| config)
    }

    /// Also says whether `jobs_dir` was written in the file.
    fn parse_source(src: &Source<'_>) -> Result<(Config, bool), ConfigError> {
        let mut config: Config = src.parse()?.unwrap_or_default();
        config.validate(src)?;
        let jobs_dir_explicit = config.jobs_dir.is_some();
        let base = src.path.parent().unwrap_or(Path::new(""));
        config.resolve_paths(base);
        config.source = Some(src.path.to_path_buf());
        Ok((config, jobs_dir_explicit))
    }

    /// The checks that compare values, each pointing at the offending key or value.
    fn validate(&self, src: &Source<'_>) -> Result<(), ConfigError> {
        self.validate_forge_credentials(src)?;
        for (name, agent) in &self.agents {
            validate_agent(src, name, agent)?;
        }
        for (i, pattern) in self.pr.infra_patterns.iter().enumerate() {
            if pattern.trim().is_empty() {
                return Err(src.error(
                    &[Seg::Key("pr"), Seg::Key("infra_patterns"), Seg::Index(i)],
                    Target::Value,
                    "an empty pattern would match every log",
                ));
            }
        }
        if let Some(email) = &self.notify.email {
            validate_email(src, email)?;
        }
        Ok(())
    }

    /// One token source per forge, and a GitHub App (instead of a token) with one private key.
    fn validate_forge_credentials(&self, src: &Source<'_>) -> Result<(), ConfigError> {
        let github = &self.github;
        for (block, keys) in [
            (GitHubConfig::BLOCK, github.token_keys_given()),
            (GitLabConfig::BLOCK, self.gitlab.token_keys_given()),
        ] {
            only_one(src, &[Seg::Key(block)], &keys)?;
        }
        let Some(app) = &github.app else {
            return Ok(());
        };
        for token_key in github.token_keys_given() {
            only_one(
                src,
                &[Seg::Key(GitHubConfig::BLOCK)],
                &[token_key, ("app", true)],
            )?;
        }
        let at = [Seg::Key("github"), Seg::Key("app")];
        let keys = [
            ("private_key_file", app.private_key_file.is_some()),
            ("private_key_env", app.private_key_env.is_some()),
        ];
        if keys.iter().all(|(_, given)| !given) {
            return Err(src.error(
                &at,
                Target::Value,
                "an App needs one of `private_key_file` or `private_key_env`",
            ));
        }
        only_one(src, &at, &keys)
    }

    /// Makes every relative path absolute against `base` (the config file's folder), and sets
    /// the default jobs folder.
    fn resolve_paths(&mut self, base: &Path) {
        let resolve = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        resolve(&mut self.database);
        let jobs_dir = self
            .jobs_dir
            .get_or_insert_with(|| PathBuf::from(DEFAULT_JOBS_DIR));
        resolve(jobs_dir);
        // `${CREDENTIALS_DIRECTORY}/…` is expanded when the token is read, not here.
        let resolve_token = |p: &mut PathBuf| {
            if !p.starts_with(secret::CREDENTIALS_DIRECTORY) {
                resolve(p);
            }
        };
        for token_file in [
            &mut self.github.token_file,
            &mut self.gitlab.token_file,
            &mut self.gitlab.glab_config_dir,
        ] {
            token_file.iter_mut().for_each(resolve_token);
        }
        if let Some(app) = &mut self.github.app {
            app.private_key_file.iter_mut().for_each(resolve_token);
        }
        for agent in self.agents.values_mut() {
            agent.inbox.iter_mut().for_each(resolve);
            agent.token_file.iter_mut().for_each(resolve_token);
        }
        self.report.html_path.iter_mut().for_each(resolve);
        self.report.metrics_path.iter_mut().for_each(resolve);
        self.tls.ca_file.iter_mut().for_each(resolve);
    }

    /// Reads every `*.yaml` / `*.yml` in `jobs_dir`, sorted by name, skipping dotfiles.
    fn load_jobs(&mut self, src: &Source<'_>, explicit: bool) -> Result<(), ConfigError> {
        let Some(dir) = self.jobs_dir.clone() else {
            return Ok(());
        };
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound && !explicit => {
                self.jobs_dir = None;
                return Ok(());
            }
            Err(e) => {
                let why = match e.kind() {
                    io::ErrorKind::NotFound => "does not exist".to_owned(),
                    _ => format!("cannot be read: {}", io_reason(&e)),
                };
                return Err(src.error(
                    &[Seg::Key("jobs_dir")],
                    Target::Value,
                    format_args!("jobs folder `{}` {why}", dir.display()),
                ));
            }
        };
        let mut files = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| ConfigError::Read {
                what: "jobs folder",
                path: dir.clone(),
                reason: io_reason(&e),
            })?;
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let is_yaml = name.ends_with(".yaml") || name.ends_with(".yml");
            if is_yaml && !name.starts_with('.') && path.is_file() {
                files.push(path);
            }
        }
        files.sort();
        let mut jobs: Vec<Job> = Vec::with_capacity(files.len());
        for file in files {
            let text = read(&file, "job file")?;
            let job = Job::parse(&text, &file, self)?;
            if let Some(first) = jobs.iter().find(|j| j.name == job.name) {
                let src = Source {
                    path: &file,
                    text: &text,
                };
                return Err(src.error(
                    &[Seg::Key("name")],
                    Target::Value,
                    format_args!(
                        "job `{}` is already defined in `{}`",
                        job.name,
                        first.source.display()
                    ),
                ));
            }
            jobs.push(job);
        }
        self.jobs = jobs;
        Ok(())
    }
}

/// An agent's checks: a name fit for a key, one way to deliver (and only the keys that go
/// with it), one token source.
fn validate_agent(src: &Source<'_>, name: &str, agent: &AgentConfig) -> Result<(), ConfigError> {
    let at = [Seg::Key("agents"), Seg::Key(name)];
    de::check_name(name).map_err(|why| src.error(&at, Target::Key, why))?;
    let deliveries = [
        ("inbox", agent.inbox.is_some()),
        ("webhook_url", agent.webhook_url.is_some()),
        ("command", agent.command.is_some()),
    ];
    if deliveries.iter().all(|(_, given)| !given) {
        return Err(src.error(
            &at,
            Target::Value,
            "an agent needs one of `inbox`, `webhook_url` or `command`",
        ));
    }
    only_one(src, &at, &deliveries)?;
    if agent.inbox.is_some() && agent.timeout_sec.is_some() {
        return Err(src.error(
            &[Seg::Key("agents"), Seg::Key(name), Seg::Key("timeout_sec")],
            Target::Key,
            "`timeout_sec` goes with `webhook_url` or `command`, not with `inbox`",
        ));
    }
    if agent.command.is_none() && !agent.env.is_empty() {
        return Err(src.error(
            &[Seg::Key("agents"), Seg::Key(name), Seg::Key("env")],
            Target::Key,
            "`env` goes with `command` only",
        ));
    }
    only_one(
        src,
        &at,
        &[
            ("token_env", agent.token_env.is_some()),
            ("token_file", agent.token_file.is_some()),
        ],
    )
}

/// The email channel's checks: at least one address, and a username with a password.
fn validate_email(src: &Source<'_>, email: &EmailConfig) -> Result<(), ConfigError> {
    let at = |key| [Seg::Key("notify"), Seg::Key("email"), Seg::Key(key)];
    if email.to.is_empty() {
        return Err(src.error(&at("to"), Target::Value, "needs at least one address"));
    }
    match (&email.username_env, &email.password_env) {
        (Some(_), None) => Err(src.error(
            &at("username_env"),
            Target::Key,
            "`username_env` needs `password_env` too",
        )),
        (None, Some(_)) => Err(src.error(
            &at("password_env"),
            Target::Key,
            "`password_env` needs `username_env` too",
        )),
        _ => Ok(()),
    }
}

/// At most one of `keys` (name, given) may be given in the block at `block`; the error points
/// at the later key of the first two given.
fn only_one<'a>(
    src: &Source<'_>,
    block: &[Seg<'a>],
    keys: &[(&'a str, bool)],
) -> Result<(), ConfigError> {
    let given: Vec<&str> = keys.iter().filter(|(_, g)| *g).map(|(k, _)| *k).collect();
    if given.len() < 2 {
        return Ok(());
    }
    let at = |key: &'a str| {
        let mut path = block.to_vec();
        path.push(Seg::Key(key));
        path
    };
    // Report at whichever key comes second in the file.
    let mut positioned: Vec<(Option<locate::Position>, &str)> = given
        .iter()
        .map(|k| (locate::locate(src.text, &at(k), Target::Key), *k))
        .collect();
    positioned.sort_by_key(|(pos, _)| pos.unwrap_or((usize::MAX, usize::MAX)));
    let (first, second) = (positioned[0].1, positioned[1].1);
    let names: Vec<String> = keys.iter().map(|(k, _)| format!("`{k}`")).collect();
    Err(src.error(
        &at(second),
        Target::Key,
        format_args!(
            "give only one of {}; `{first}` is already given",
            names.join(", ")
        ),
    ))
}

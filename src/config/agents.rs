//! One entry of the `agents:` block: how messages reach an agent and which logins, emails and
//! token are its own.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{DEFAULT_AGENT_TIMEOUT_SEC, TokenSource, de};

/// One entry of `agents:`. Exactly one of `inbox`, `webhook_url`, `command`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping (an agent)")]
pub struct AgentConfig {
    /// A folder: each message is written to `tmp/` and renamed into `new/`; `inbox done ID`
    /// moves it to `cur/`. Relative to the config file's folder.
    #[serde(default, deserialize_with = "de::opt_path")]
    pub inbox: Option<PathBuf>,
    /// Addition to the contract, instead of `inbox`: each message is POSTed here as JSON.
    /// https, or http to a loopback host.
    #[serde(default, deserialize_with = "de::opt_http_url")]
    pub webhook_url: Option<String>,
    /// Addition to the contract, instead of `inbox`: a command run with `sh -c` for each
    /// message, which it receives as JSON on standard input.
    #[serde(default, deserialize_with = "de::opt_command")]
    pub command: Option<String>,
    /// Addition to the contract: how long `webhook_url` or `command` may take, in seconds.
    /// Default 60. Not allowed with `inbox`.
    #[serde(default, deserialize_with = "de::opt_secs")]
    pub timeout_sec: Option<u64>,
    /// Commits authored, committed or pushed by these logins are the agent's. A GitHub App
    /// bot is `name[bot]`; logins compare ignoring case and the `[bot]` suffix. Default none.
    #[serde(default, deserialize_with = "de::logins")]
    pub logins: Vec<String>,
    /// Addition to the contract: commit emails that are the agent's (besides the forges'
    /// no-reply addresses of its logins). Default none.
    #[serde(default, deserialize_with = "de::emails")]
    pub emails: Vec<String>,
    /// Addition to the contract, only with `command`: the names of environment variables passed
    /// through to the command. It gets nothing else of pr-monitor's environment but `PATH`,
    /// `HOME`, `LANG` and the `PR_MONITOR_*` facts of the message. Default none.
    #[serde(default, deserialize_with = "de::env_names")]
    pub env: Vec<String>,
    /// The environment variable holding the agent's own forge token: thread replies and
    /// resolves made for the agent (`thread … --agent NAME`, `pr-monitor mcp`) use it, never
    /// the owner's. At most one of `token_env`, `token_file`. Default none: those routes refuse.
    #[serde(default, deserialize_with = "de::opt_env_name")]
    pub token_env: Option<String>,
    /// A file holding the agent's own forge token (see `token_env`).
    #[serde(default, deserialize_with = "de::opt_path")]
    pub token_file: Option<PathBuf>,
}

/// How messages reach an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentDelivery<'a> {
    /// Files in a maildir-like folder.
    Inbox(&'a Path),
    /// An HTTP POST of the message.
    Webhook {
        /// Where to POST.
        url: &'a str,
        /// Request timeout.
        timeout_sec: u64,
    },
    /// A command fed the message on standard input.
    Command {
        /// Run with `sh -c`.
        command: &'a str,
        /// Kill it after this long.
        timeout_sec: u64,
        /// Environment variables passed through (`env:`).
        env: &'a [String],
    },
}

impl AgentConfig {
    /// Where the agent's own forge token comes from, if it has one.
    pub fn token(&self) -> Option<TokenSource> {
        match (&self.token_env, &self.token_file) {
            (Some(name), _) => Some(TokenSource::Env(name.clone())),
            (None, Some(path)) => Some(TokenSource::File(path.clone())),
            (None, None) => None,
        }
    }

    /// How messages reach this agent. Always `Some` for a loaded config, which has exactly one
    /// of `inbox`, `webhook_url` and `command`.
    pub fn delivery(&self) -> Option<AgentDelivery<'_>> {
        let timeout_sec = self.timeout_sec.unwrap_or(DEFAULT_AGENT_TIMEOUT_SEC);
        if let Some(inbox) = &self.inbox {
            Some(AgentDelivery::Inbox(inbox))
        } else if let Some(url) = &self.webhook_url {
            Some(AgentDelivery::Webhook { url, timeout_sec })
        } else {
            self.command
                .as_deref()
                .map(|command| AgentDelivery::Command {
                    command,
                    timeout_sec,
                    env: &self.env,
                })
        }
    }
}

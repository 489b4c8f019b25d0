//! The forge blocks, `github:` and `gitlab:`, and the token keys they share ([`TokenKeys`]):
//! where each forge's API is and where its token comes from.

use std::path::PathBuf;

use serde::Deserialize;

use super::{GitHubAppConfig, TokenSource, de};

/// The `github:` block. At most one of `token_env`, `token_file`, `token_command` and `app`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(
    deny_unknown_fields,
    default,
    expecting = "a mapping (the `github` block)"
)]
pub struct GitHubConfig {
    /// The REST API. Default `https://api.github.com`; GitHub Enterprise:
    /// `https://HOST/api/v3`. https, or http to a loopback host; a trailing `/` is dropped.
    #[serde(deserialize_with = "de::api_url")]
    pub api_url: String,
    /// The GraphQL API. Default: derived from `api_url`, see [`GitHubConfig::graphql_url`].
    #[serde(deserialize_with = "de::opt_http_url")]
    pub graphql_url: Option<String>,
    /// The web address links name. Default: derived from `api_url`
    /// ([`crate::model::web::web_root`]): `https://github.com` for `https://api.github.com`.
    #[serde(deserialize_with = "de::opt_http_url")]
    pub web_url: Option<String>,
    /// The environment variable holding the token. Default `GITHUB_TOKEN` when none of the
    /// three token keys is given.
    #[serde(deserialize_with = "de::opt_env_name")]
    pub token_env: Option<String>,
    /// A file holding the token.
    #[serde(deserialize_with = "de::opt_path")]
    pub token_file: Option<PathBuf>,
    /// A command printing the token, run with `sh -c` (e.g. `gh auth token`).
    #[serde(deserialize_with = "de::opt_command")]
    pub token_command: Option<String>,
    /// One of the GitHub CLI's accounts: the token is `gh auth token --user NAME`'s.
    #[serde(deserialize_with = "de::opt_name")]
    pub gh_user: Option<String>,
    /// Sign in as a GitHub App instead of with a token: installation tokens are minted per
    /// repository owner (see [`GitHubAppConfig`]).
    pub app: Option<GitHubAppConfig>,
    /// How long one request may take, in seconds (connecting: at most 10). Default 30.
    pub timeout_sec: Option<u64>,
    /// How long one run may spend on this forge, in seconds, waits included; after it, or
    /// after two requests that timed out, the forge is not asked again until the next run and
    /// its PRs left are said as unreachable. Default 120.
    pub run_budget_sec: Option<u64>,
}

impl Default for GitHubConfig {
    fn default() -> Self {
        GitHubConfig {
            api_url: "https://api.github.com".to_owned(),
            graphql_url: None,
            web_url: None,
            token_env: None,
            token_file: None,
            token_command: None,
            gh_user: None,
            app: None,
            timeout_sec: None,
            run_budget_sec: None,
        }
    }
}

impl GitHubConfig {
    /// The GraphQL address: `graphql_url` when set, else derived from `api_url`:
    /// `https://api.github.com` → `https://api.github.com/graphql`, `https://HOST/api/v3` →
    /// `https://HOST/api/graphql`, anything else (a test server) → `{api_url}/graphql`.
    pub fn graphql_url(&self) -> String {
        if let Some(url) = &self.graphql_url {
            return url.clone();
        }
        let api = self.api_url.trim_end_matches('/');
        match api.strip_suffix("/api/v3") {
            Some(host) => format!("{host}/api/graphql"),
            None => format!("{api}/graphql"),
        }
    }
}

impl TokenKeys for GitHubConfig {
    const BLOCK: &'static str = "github";
    const DEFAULT_ENV: &'static str = "GITHUB_TOKEN";
    const ACCOUNT_KEY: &'static str = "gh_user";

    fn account(&self) -> Option<TokenSource> {
        self.gh_user.clone().map(TokenSource::GhUser)
    }

    fn token_keys(&self) -> TokenKeyValues<'_> {
        TokenKeyValues {
            env: self.token_env.as_ref(),
            file: self.token_file.as_ref(),
            command: self.token_command.as_ref(),
        }
    }
}

/// The `gitlab:` block. At most one of `token_env`, `token_file`, `token_command`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(
    deny_unknown_fields,
    default,
    expecting = "a mapping (the `gitlab` block)"
)]
pub struct GitLabConfig {
    /// The REST API. Default `https://gitlab.com/api/v4`. https, or http to a loopback host; a
    /// trailing `/` is dropped.
    #[serde(deserialize_with = "de::api_url")]
    pub api_url: String,
    /// The web address links name. Default: derived from `api_url`
    /// ([`crate::model::web::web_root`]): `https://gitlab.com` for `https://gitlab.com/api/v4`.
    #[serde(deserialize_with = "de::opt_http_url")]
    pub web_url: Option<String>,
    /// The environment variable holding the token. Default `GITLAB_TOKEN` when none of the
    /// three token keys is given.
    #[serde(deserialize_with = "de::opt_env_name")]
    pub token_env: Option<String>,
    /// A file holding the token.
    #[serde(deserialize_with = "de::opt_path")]
    pub token_file: Option<PathBuf>,
    /// A command printing the token, run with `sh -c`.
    #[serde(deserialize_with = "de::opt_command")]
    pub token_command: Option<String>,
    /// glab's config folder (e.g. `~/.config/glab-cli`): the token is the one its `config.yml`
    /// keeps for `api_url`'s host.
    #[serde(deserialize_with = "de::opt_path")]
    pub glab_config_dir: Option<PathBuf>,
    /// How long one request may take, in seconds (connecting: at most 10). Default 30.
    pub timeout_sec: Option<u64>,
    /// How long one run may spend on this forge, in seconds, waits included; after it, or
    /// after two requests that timed out, the forge is not asked again until the next run and
    /// its PRs left are said as unreachable. Default 120.
    pub run_budget_sec: Option<u64>,
}

impl Default for GitLabConfig {
    fn default() -> Self {
        GitLabConfig {
            api_url: "https://gitlab.com/api/v4".to_owned(),
            web_url: None,
            token_env: None,
            token_file: None,
            token_command: None,
            glab_config_dir: None,
            timeout_sec: None,
            run_budget_sec: None,
        }
    }
}

impl TokenKeys for GitLabConfig {
    const BLOCK: &'static str = "gitlab";
    const DEFAULT_ENV: &'static str = "GITLAB_TOKEN";
    const ACCOUNT_KEY: &'static str = "glab_config_dir";

    fn account(&self) -> Option<TokenSource> {
        let host = crate::address::Address::parse(&self.api_url)
            .map(|a| a.host_port())
            .unwrap_or_default();
        self.glab_config_dir
            .clone()
            .map(|dir| TokenSource::GlabConfig { dir, host })
    }

    fn token_keys(&self) -> TokenKeyValues<'_> {
        TokenKeyValues {
            env: self.token_env.as_ref(),
            file: self.token_file.as_ref(),
            command: self.token_command.as_ref(),
        }
    }
}

/// The token keys every forge block has: `token_env`, `token_file`, `token_command`, at most
/// one given. Each block keeps its own fields (`serde(flatten)` does not combine with
/// `deny_unknown_fields`, which places an unknown key's error at its position); this trait
/// reads them alike, so where a token comes from and which keys exclude each other are said
/// once.
pub trait TokenKeys {
    /// The block's key in the config file.
    const BLOCK: &'static str;
    /// The environment variable read when none of the keys is given.
    const DEFAULT_ENV: &'static str;
    /// The key naming an account of the forge's own command-line tool (`gh_user`,
    /// `glab_config_dir`), a fourth way to the token.
    const ACCOUNT_KEY: &'static str;

    /// The three keys' values, as written.
    fn token_keys(&self) -> TokenKeyValues<'_>;

    /// The token source [`TokenKeys::ACCOUNT_KEY`] names, when given.
    fn account(&self) -> Option<TokenSource>;

    /// Where the token comes from: the key given, else [`TokenKeys::DEFAULT_ENV`].
    fn token(&self) -> TokenSource {
        if let Some(account) = self.account() {
            return account;
        }
        let keys = self.token_keys();
        match (keys.env, keys.file, keys.command) {
            (Some(name), _, _) => TokenSource::Env(name.clone()),
            (None, Some(path), _) => TokenSource::File(path.clone()),
            (None, None, Some(command)) => TokenSource::Command(command.clone()),
            (None, None, None) => TokenSource::Env(Self::DEFAULT_ENV.to_owned()),
        }
    }

    /// Each key's name and whether it is given, in the order of the file format.
    fn token_keys_given(&self) -> [(&'static str, bool); 4] {
        let keys = self.token_keys();
        [
            ("token_env", keys.env.is_some()),
            ("token_file", keys.file.is_some()),
            ("token_command", keys.command.is_some()),
            (Self::ACCOUNT_KEY, self.account().is_some()),
        ]
    }
}

/// A forge block's token keys, borrowed (see [`TokenKeys`]).
#[derive(Debug, Clone, Copy)]
pub struct TokenKeyValues<'a> {
    /// `token_env`.
    pub env: Option<&'a String>,
    /// `token_file`.
    pub file: Option<&'a PathBuf>,
    /// `token_command`.
    pub command: Option<&'a String>,
}

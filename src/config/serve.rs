//! The `serve:` block: where the daemon listens and which environment variables hold the
//! webhooks' secrets.

use serde::Deserialize;

use super::de;

/// The `serve:` block: the daemon's HTTP listener.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(
    deny_unknown_fields,
    default,
    expecting = "a mapping (the `serve` block)"
)]
pub struct ServeConfig {
    /// The address and port to listen on. Default `127.0.0.1:8080`; port 0 takes a free one
    /// (the daemon says which).
    #[serde(deserialize_with = "de::socket_addr")]
    pub listen: std::net::SocketAddr,
    /// The environment variable holding the GitHub webhook's secret. Default
    /// `GITHUB_WEBHOOK_SECRET`; unset or empty, every GitHub delivery is refused.
    #[serde(deserialize_with = "de::env_name")]
    pub github_webhook_secret_env: String,
    /// The environment variable holding the GitLab webhook's secret token. Default
    /// `GITLAB_WEBHOOK_TOKEN`; unset or empty, every GitLab delivery is refused.
    #[serde(deserialize_with = "de::env_name")]
    pub gitlab_webhook_token_env: String,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 8080)),
            github_webhook_secret_env: "GITHUB_WEBHOOK_SECRET".to_owned(),
            gitlab_webhook_token_env: "GITLAB_WEBHOOK_TOKEN".to_owned(),
        }
    }
}

//! The `github.app:` block: pr-monitor signs in as a GitHub App (its id and private key)
//! instead of with a token, and reads the key when it needs it — never at load, so a key handed
//! over in `${CREDENTIALS_DIRECTORY}` or rotated in place is read afresh.

use std::path::PathBuf;

use serde::Deserialize;

use super::de;
use super::secret::{Secret, expand_credentials};

/// `github.app`: the App's id and where its private key is. Exactly one of `private_key_file`
/// and `private_key_env`; the block excludes `token_env`, `token_file` and `token_command`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping (the `github.app` block)")]
pub struct GitHubAppConfig {
    /// The App's id (its settings page's "App ID"). Required.
    #[serde(deserialize_with = "de::id")]
    pub id: u64,
    /// A file holding the PEM private key GitHub generated (`BEGIN RSA PRIVATE KEY`; PKCS#8
    /// `BEGIN PRIVATE KEY` too). Relative to the config's folder; may start with
    /// `${CREDENTIALS_DIRECTORY}`, like `token_file`.
    #[serde(default, deserialize_with = "de::opt_path")]
    pub private_key_file: Option<PathBuf>,
    /// An environment variable holding the PEM private key.
    #[serde(default, deserialize_with = "de::opt_env_name")]
    pub private_key_env: Option<String>,
}

impl GitHubAppConfig {
    /// Reads the private key's PEM text and holds it as a secret. The error names the file or
    /// variable, never any of its text.
    pub fn read_private_key(&self) -> Result<Secret, String> {
        let text = match (&self.private_key_file, &self.private_key_env) {
            (Some(path), _) => {
                let path = expand_credentials(path, |name| std::env::var_os(name))
                    .map_err(|e| format!("GitHub App private key: {e}"))?;
                std::fs::read_to_string(&path).map_err(|e| {
                    format!(
                        "GitHub App private key file `{}` cannot be read: {}",
                        path.display(),
                        super::load::io_reason(&e)
                    )
                })?
            }
            (None, Some(name)) => std::env::var(name).map_err(|_| {
                format!("GitHub App private key: environment variable `{name}` is not set")
            })?,
            (None, None) => {
                return Err("GitHub App: no `private_key_file` or `private_key_env`".to_owned());
            }
        };
        let text = text.trim();
        crate::secrets::hold_pem(text);
        Ok(Secret::new(text))
    }

    /// Where the key is read from, for messages.
    pub fn key_source(&self) -> String {
        match (&self.private_key_file, &self.private_key_env) {
            (Some(path), _) => format!("private key file `{}`", path.display()),
            (None, Some(name)) => format!("private key variable `{name}`"),
            (None, None) => "no private key".to_owned(),
        }
    }
}

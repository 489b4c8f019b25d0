//! Secrets and where they come from: the config names a source, never a value.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};

/// A secret value (a forge token, an SMTP password, a webhook URL). `Debug` and `Display` print
/// `***`, so it can sit in any struct that gets logged; [`Secret::expose`] is the one way out.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value itself, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Where a token is read from, resolved when needed rather than at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// An environment variable's value.
    Env(String),
    /// A file's contents, trimmed (relative paths were resolved against the config's folder).
    File(PathBuf),
    /// A command's standard output, trimmed; run with `sh -c`.
    Command(String),
    /// The GitHub CLI's token for one of its accounts: `gh auth token --user NAME`.
    GhUser(String),
    /// The token glab's config (`DIR/config.yml`) keeps for the API's host (`host[:port]`).
    GlabConfig { dir: PathBuf, host: String },
}

impl TokenSource {
    /// Reads the token. Errors name the variable, file or command and say what went wrong; they
    /// never contain the value (nor the command's standard output).
    pub fn resolve(&self) -> anyhow::Result<Secret> {
        let value = match self {
            TokenSource::Env(name) => match std::env::var(name) {
                Ok(v) => v,
                Err(std::env::VarError::NotPresent) => {
                    bail!("environment variable `{name}` is not set")
                }
                Err(std::env::VarError::NotUnicode(_)) => {
                    bail!("environment variable `{name}` is not valid UTF-8")
                }
            },
            TokenSource::File(path) => {
                let path = expand_credentials(path, |name| std::env::var_os(name))
                    .map_err(anyhow::Error::msg)?;
                std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read token file `{}`", path.display()))?
            }
            TokenSource::Command(command) => run(command)?,
            TokenSource::GhUser(user) => gh_token(user)?,
            TokenSource::GlabConfig { dir, host } => glab_token(dir, host)?,
        };
        let value = value.trim();
        if value.is_empty() {
            bail!("{self} is empty");
        }
        crate::secrets::hold(value);
        Ok(Secret::new(value))
    }
}

/// How a `token_file` names the folder systemd hands a service's credentials in
/// (`LoadCredential=`); expanded when the file is read, from the service's environment.
pub(super) const CREDENTIALS_DIRECTORY: &str = "${CREDENTIALS_DIRECTORY}";

/// `path` with a leading `${CREDENTIALS_DIRECTORY}` replaced by that variable's value (read
/// through `var`); any other path as it is. An error when the variable is not set.
pub(super) fn expand_credentials(
    path: &Path,
    var: impl Fn(&str) -> Option<OsString>,
) -> Result<PathBuf, String> {
    let Ok(rest) = path.strip_prefix(CREDENTIALS_DIRECTORY) else {
        return Ok(path.to_path_buf());
    };
    match var("CREDENTIALS_DIRECTORY").filter(|v| !v.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir).join(rest)),
        None => Err(format!(
            "token file `{}`: CREDENTIALS_DIRECTORY is not set (systemd sets it for a unit with \
             LoadCredential=)",
            path.display()
        )),
    }
}

impl fmt::Display for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenSource::Env(name) => write!(f, "environment variable `{name}`"),
            TokenSource::File(path) => write!(f, "token file `{}`", path.display()),
            TokenSource::Command(command) => write!(f, "token command `{command}`"),
            TokenSource::GhUser(user) => write!(f, "`gh auth token --user {user}`"),
            TokenSource::GlabConfig { dir, host } => write!(
                f,
                "glab's token for `{host}` in `{}`",
                dir.join(GLAB_CONFIG_FILE).display()
            ),
        }
    }
}

/// The file glab keeps its hosts and tokens in, inside its config folder.
pub(super) const GLAB_CONFIG_FILE: &str = "config.yml";

/// `gh auth token --user USER`'s output, run without a shell; as with a token command, neither
/// output is kept on failure.
fn gh_token(user: &str) -> anyhow::Result<String> {
    let output = Command::new("gh")
        .args(["auth", "token", "--user", user])
        .stdin(Stdio::null())
        .output()
        .context("cannot run `gh` (the GitHub CLI) for `github.gh_user`")?;
    if !output.status.success() {
        let status = output.status;
        bail!("`gh auth token --user {user}` failed ({status}); run it by hand to see why");
    }
    String::from_utf8(output.stdout)
        .map_err(|_| anyhow::anyhow!("`gh auth token --user {user}` printed invalid UTF-8"))
}

/// The token glab's `config.yml` in `dir` keeps for `host` (`hosts: {HOST: {token: …}}`, the
/// host matched by its key or its `api_host`, with or without the port).
fn glab_token(dir: &Path, host: &str) -> anyhow::Result<String> {
    let path = dir.join(GLAB_CONFIG_FILE);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read glab's config `{}`", path.display()))?;
    let config: serde_yaml::Value = serde_yaml::from_str(&text)
        .map_err(|_| anyhow::anyhow!("glab's config `{}` is not YAML", path.display()))?;
    let bare = host.split(':').next().unwrap_or(host);
    let hosts = config.get("hosts").and_then(serde_yaml::Value::as_mapping);
    let entry = hosts.into_iter().flatten().find_map(|(key, entry)| {
        let names = [
            key.as_str(),
            entry.get("api_host").and_then(serde_yaml::Value::as_str),
        ];
        names
            .into_iter()
            .flatten()
            .any(|n| n.eq_ignore_ascii_case(host) || n.eq_ignore_ascii_case(bare))
            .then_some(entry)
    });
    match entry
        .and_then(|e| e.get("token"))
        .and_then(serde_yaml::Value::as_str)
    {
        Some(token) => Ok(token.to_owned()),
        None => bail!(
            "glab's config `{}` has no token for `{host}` (`glab auth login --hostname {bare}`)",
            path.display()
        ),
    }
}

/// Runs `command` with `sh -c` and returns its standard output. On failure the error says so
/// with the exit status; neither standard output nor standard error (which may echo the
/// token) is kept.
fn run(command: &str) -> anyhow::Result<String> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run token command `{command}`"))?;
    if !output.status.success() {
        let status = output.status;
        bail!("token command `{command}` failed ({status}); run it by hand to see why");
    }
    String::from_utf8(output.stdout)
        .map_err(|_| anyhow::anyhow!("token command `{command}` printed invalid UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "ghp_SuperSecretValue123";
    /// Prints TOKEN without the command's own text containing it (errors name the command).
    const SPLIT: &str = "echo ghp_Super\"\"SecretValue123";

    #[test]
    fn a_token_file_may_sit_in_the_credentials_directory() {
        let set = |name: &str| (name == "CREDENTIALS_DIRECTORY").then(|| OsString::from("/run/c"));
        let unset = |_: &str| None;
        let cred = Path::new("${CREDENTIALS_DIRECTORY}/github-token");
        assert_eq!(
            expand_credentials(cred, set),
            Ok(PathBuf::from("/run/c/github-token"))
        );
        let err = expand_credentials(cred, unset).unwrap_err();
        assert!(err.contains("CREDENTIALS_DIRECTORY is not set"), "{err}");
        for plain in ["/etc/token", "rel/${CREDENTIALS_DIRECTORY}/x"] {
            assert_eq!(
                expand_credentials(Path::new(plain), unset),
                Ok(plain.into())
            );
        }
    }

    #[test]
    fn secret_never_prints_its_value() {
        let s = Secret::new(TOKEN);
        assert_eq!(format!("{s}"), "***");
        assert_eq!(format!("{s:?}"), "***");
        assert_eq!(format!("{:?}", Some(&s)), "Some(***)");
        assert_eq!(s.expose(), TOKEN);
    }

    #[test]
    fn resolves_each_source_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, format!("  {TOKEN}\n")).unwrap();
        let sources = [
            TokenSource::File(file),
            TokenSource::Command(SPLIT.to_owned()),
            // PATH is always set where tests run; its value stands in for a token.
            TokenSource::Env("PATH".into()),
        ];
        for source in &sources {
            let secret = source.resolve().unwrap();
            assert!(!secret.expose().is_empty(), "{source}");
            assert_eq!(secret.expose(), secret.expose().trim(), "{source}");
        }
        assert_eq!(sources[0].resolve().unwrap().expose(), TOKEN);
        assert_eq!(sources[1].resolve().unwrap().expose(), TOKEN);
    }

    #[test]
    fn errors_name_the_source_but_never_the_value() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        let cases = [
            (
                TokenSource::Env("PR_MONITOR_TEST_SURELY_UNSET_VAR".into()),
                "`PR_MONITOR_TEST_SURELY_UNSET_VAR` is not set",
            ),
            (
                TokenSource::File(dir.path().join("missing")),
                "cannot read token file",
            ),
            (TokenSource::File(empty), "is empty"),
            (
                TokenSource::Command(format!("{SPLIT} >&2; echo 'not logged in' >&2; exit 3")),
                "failed (exit status: 3); run it by hand to see why",
            ),
            (
                TokenSource::Command(format!("{SPLIT}; exit 1")),
                "failed (exit status: 1)",
            ),
            (
                TokenSource::Command("true".into()),
                "token command `true` is empty",
            ),
        ];
        for (source, want) in cases {
            let err = format!("{:#}", source.resolve().unwrap_err());
            assert!(err.contains(want), "{source}: {err}");
            assert!(!err.contains(TOKEN), "{source}: leaked: {err}");
        }
    }
}

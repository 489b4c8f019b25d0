//! Secrets and where they come from: the config names a source, never a value.

use std::fmt;
use std::path::PathBuf;
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
            TokenSource::File(path) => std::fs::read_to_string(path)
                .with_context(|| format!("cannot read token file `{}`", path.display()))?,
            TokenSource::Command(command) => run(command)?,
        };
        let value = value.trim();
        if value.is_empty() {
            bail!("{self} is empty");
        }
        crate::secrets::hold(value);
        Ok(Secret::new(value))
    }
}

impl fmt::Display for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenSource::Env(name) => write!(f, "environment variable `{name}`"),
            TokenSource::File(path) => write!(f, "token file `{}`", path.display()),
            TokenSource::Command(command) => write!(f, "token command `{command}`"),
        }
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const TOKEN: &str = "ghp_SuperSecretValue123";
    /// Prints TOKEN without the command's own text containing it (errors name the command).
    const SPLIT: &str = "echo ghp_Super\"\"SecretValue123";

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

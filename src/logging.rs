//! Diagnostics on standard error, through `tracing`: what pr-monitor did and what went wrong,
//! apart from the results a command prints on standard output.
//!
//! The filter is `--log-level` (a level or `tracing` directives such as `pr_monitor=debug`),
//! else `RUST_LOG`, else `warn` with pr-monitor's own events from `info`. `--log-format text`
//! (the default) writes human lines, coloured on a terminal; `json` writes one JSON object a
//! line, for a log collector (Kubernetes): flat, with the process's run id on every line
//! ([`flat`]); `run --json` then writes its results as JSON lines too. Every line passes the secret mask on its way out, so a
//! token read this run can never reach the log.
//!
//! Standard error may be closed (`2>&-`) or a pipe whose reader is gone: a line that cannot be
//! written is dropped ([`to_stderr`]) — there is no one left to tell — and never panics, so a
//! command's decisions and exit code do not depend on whether anyone reads its diagnostics.

pub mod flat;

use std::io::{IsTerminal as _, Write};

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

/// The default filter: warnings from everything, pr-monitor's own events from `info`.
const DEFAULT_FILTER: &str = "warn,pr_monitor=info";
/// The cron scheduler reports its own shutdown as errors; they are never pr-monitor's.
const QUIET: &str = "tokio_cron_scheduler=off";

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// Human lines (coloured on a terminal).
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

/// The filter for `--log-level` (`level`), else `RUST_LOG` (`env`), else the default. An
/// invalid `--log-level` is an error; an invalid `RUST_LOG` falls back to the default.
pub fn filter(level: Option<&str>, env: Option<&str>) -> Result<EnvFilter, String> {
    let chosen = match (level, env) {
        (Some(level), _) => {
            EnvFilter::try_new(level).map_err(|e| format!("--log-level `{level}`: {e}"))?;
            level
        }
        (None, Some(env)) if EnvFilter::try_new(env).is_ok() => env,
        _ => DEFAULT_FILTER,
    };
    EnvFilter::try_new(format!("{chosen},{QUIET}")).map_err(|e| e.to_string())
}

/// Standard error, through the secret mask. The fmt layer writes each event with one call.
#[derive(Debug)]
struct MaskedStderr;

impl Write for MaskedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        to_stderr(&crate::secrets::mask(&String::from_utf8_lossy(buf)));
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes `text` to standard error, dropping it when standard error cannot take it (closed,
/// or a pipe whose reader is gone): diagnostics never stop a command.
pub fn to_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// The format chosen at [`init`].
static FORMAT: std::sync::OnceLock<LogFormat> = std::sync::OnceLock::new();

/// This process's run id, on every JSON log line and every `run --json` line beside them.
static RUN_ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// This process's run id (made on first use).
pub fn run_id() -> &'static str {
    RUN_ID.get_or_init(flat::new_run_id)
}

/// Whether diagnostics are JSON lines (`--log-format json`): then every output is.
pub fn is_json() -> bool {
    FORMAT.get().copied() == Some(LogFormat::Json)
}

/// A line for the person or collector reading stderr (the daemon's progress, what a command
/// reads): as it is in text format, an `info` event in JSON.
pub fn say(line: &str) {
    match FORMAT.get().copied().unwrap_or_default() {
        LogFormat::Text => to_stderr(&format!("{line}\n")),
        LogFormat::Json => tracing::info!("{line}"),
    }
}

/// An error line: `error: …` in text format, an `error` event in JSON.
pub fn complain(message: &str) {
    match FORMAT.get().copied().unwrap_or_default() {
        LogFormat::Text => to_stderr(&format!("error: {message}\n")),
        LogFormat::Json => tracing::error!("{message}"),
    }
}

/// Whether the command line asks for JSON logs, read before it is parsed, so that even a usage
/// error is a JSON line when it does.
pub fn asks_for_json(args: &[std::ffi::OsString]) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        a == "--log-format=json"
            || (a == "--log-format" && args.get(i + 1).is_some_and(|n| n == "json"))
    })
}

/// An error said before logging starts (the command line could not be parsed): `error: …`,
/// or a JSON line when `json`.
pub fn early_error(json: bool, message: &str) {
    let message = message.trim().trim_start_matches("error: ");
    if json {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let line = flat::line(
            &now,
            "ERROR",
            "pr_monitor",
            run_id(),
            serde_json::Map::from_iter([("message".to_owned(), serde_json::Value::from(message))]),
        );
        to_stderr(&format!("{line}\n"));
    } else {
        to_stderr(&format!("error: {message}\n"));
    }
}

/// Installs the subscriber for this process. Called once, before any command runs.
pub fn init(level: Option<&str>, format: LogFormat) -> Result<(), String> {
    let _ = FORMAT.set(format);
    let env = std::env::var("RUST_LOG").ok();
    let filter = filter(level, env.as_deref())?;
    let terminal = std::io::stderr().is_terminal();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Its own complaint about a failed write would go to the same closed stderr, by a
        // printing macro that panics.
        .log_internal_errors(false)
        .with_writer(|| MaskedStderr);
    let installed = match format {
        LogFormat::Json => builder
            .event_format(flat::FlatJson { run_id: run_id() })
            .try_init(),
        LogFormat::Text if terminal => builder
            .with_ansi(true)
            .with_target(false)
            .without_time()
            .try_init(),
        LogFormat::Text => builder.with_ansi(false).try_init(),
    };
    installed.map_err(|e| format!("cannot start logging: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_rust_log_which_wins_over_the_default() {
        let cases = [
            (Some("debug"), Some("trace"), "debug"),
            (None, Some("pr_monitor=trace"), "pr_monitor=trace"),
            (None, Some("not a [filter"), DEFAULT_FILTER),
            (None, None, DEFAULT_FILTER),
        ];
        for (level, env, want) in cases {
            let got = filter(level, env).unwrap().to_string();
            let want = EnvFilter::try_new(format!("{want},{QUIET}"))
                .unwrap()
                .to_string();
            assert_eq!(got, want, "{level:?} {env:?}");
        }
        let err = filter(Some("not a [filter"), None).unwrap_err();
        assert!(err.starts_with("--log-level `not a [filter`"), "{err}");
    }
}

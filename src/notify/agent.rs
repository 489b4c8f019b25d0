//! Agent messages through the three delivery kinds an agent may configure: a folder inbox
//! ([`super::inbox`]), a webhook (the message JSON POSTed, keyed by `Idempotency-Key`), or a
//! command (`sh -c COMMAND`, fed the message JSON on standard input, killed at its timeout).
//!
//! A command runs in its own process group, so a timeout kills everything it started; its
//! standard output is discarded and the last line of its standard error explains a failure.
//! The run's start and end are returned as a [`CommandRun`] for the PR's history.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use super::http::{Post, post};
use super::{DeliveryError, Sent, inbox};
use crate::config::{AgentConfig, AgentDelivery};

/// How long to wait for a finished command's standard error to close (a background process
/// it left behind may hold it open).
const STDERR_GRACE: Duration = Duration::from_secs(2);
/// The most of a command's standard error kept.
const STDERR_KEEP: usize = 16 * 1024;

/// One run of an agent command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRun {
    pub started: SystemTime,
    pub ended: SystemTime,
    /// The exit code; 128 + the signal number when a signal ended it.
    pub status: i32,
    /// Killed because it ran past its timeout.
    pub timed_out: bool,
    /// The last non-empty line of its standard error.
    pub stderr_tail: String,
}

fn stamp(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl CommandRun {
    /// The history line: `agent command ran from … to … (exit N)`.
    pub fn describe(&self) -> String {
        let how = if self.timed_out {
            format!("exit {}, killed at its timeout", self.status)
        } else {
            format!("exit {}", self.status)
        };
        format!(
            "agent command ran from {} to {} ({how})",
            stamp(self.started),
            stamp(self.ended)
        )
    }

    /// Delivered when the command exited 0; otherwise a temporary error.
    pub fn outcome(&self, agent: &str) -> Result<(), DeliveryError> {
        let why = if self.timed_out {
            format!(
                "agent `{agent}`: the command was killed after {:.0?}",
                self.ended
                    .duration_since(self.started)
                    .unwrap_or(Duration::ZERO)
            )
        } else if self.status == 0 {
            return Ok(());
        } else {
            format!("agent `{agent}`: the command exited with {}", self.status)
        };
        let message = if self.stderr_tail.is_empty() {
            why
        } else {
            format!("{why}: {}", self.stderr_tail)
        };
        Err(DeliveryError::temporary(message))
    }
}

/// Delivers the agent message `payload` (outbox message `id`) to agent `name`.
pub fn deliver(
    name: &str,
    agent: &AgentConfig,
    id: &str,
    payload: &str,
) -> Result<Sent, DeliveryError> {
    match agent.delivery() {
        Some(AgentDelivery::Inbox(dir)) => inbox::write(dir, id, payload).map(|()| Sent::default()),
        Some(AgentDelivery::Webhook { url, timeout_sec }) => {
            webhook(name, url, Duration::from_secs(timeout_sec), id, payload)
                .map(|()| Sent::default())
        }
        Some(AgentDelivery::Command {
            command,
            timeout_sec,
            env,
        }) => {
            let limits = Limits {
                timeout: Duration::from_secs(timeout_sec),
                pass: env,
            };
            let run = run_command(command, &limits, id, payload).map_err(|e| DeliveryError {
                message: format!("agent `{name}`: {}", e.message),
                ..e
            })?;
            match run.outcome(name) {
                Ok(()) => Ok(Sent {
                    command_run: Some(run),
                }),
                Err(e) => Err(e.with_run(run)),
            }
        }
        None => Err(DeliveryError::permanent(format!(
            "agent `{name}` has no delivery configured"
        ))),
    }
}

/// POSTs the message JSON to an agent's webhook, with `Idempotency-Key: <id>`.
pub fn webhook(
    name: &str,
    url: &str,
    timeout: Duration,
    id: &str,
    payload: &str,
) -> Result<(), DeliveryError> {
    let receiver = format!("webhook of agent `{name}`");
    post(&Post {
        url,
        receiver: &receiver,
        body: payload,
        headers: &[("Idempotency-Key", id), ("X-PR-Monitor-Id", id)],
        timeout,
    })
}

/// The environment a command gets: the message's id, PR and kind.
pub fn command_env(id: &str, payload: &Value) -> Vec<(&'static str, String)> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let pr = &payload["pr"];
    vec![
        ("PR_MONITOR_MESSAGE_ID", id.to_owned()),
        ("PR_MONITOR_PR_URL", text(&pr["url"])),
        ("PR_MONITOR_REPO", text(&pr["repo"])),
        ("PR_MONITOR_PR_NUMBER", text(&pr["number"])),
        ("PR_MONITOR_HEAD_SHA", text(&pr["head_sha"])),
        ("PR_MONITOR_KIND", text(&payload["kind"])),
    ]
}

/// Variables of pr-monitor's own environment every command gets.
const BASE_ENV: [&str; 3] = ["PATH", "HOME", "LANG"];

/// What a command may use: its time, and the variables passed through to it.
#[derive(Debug, Clone, Copy)]
pub struct Limits<'a> {
    pub timeout: Duration,
    /// Names from the agent's `env:` list.
    pub pass: &'a [String],
}

/// The variables of `ours` a command receives: `PATH`, `HOME`, `LANG` and those `pass` names,
/// when set. Nothing else of pr-monitor's environment (tokens, passwords, webhook URLs) reaches
/// an agent.
pub fn passed_env(
    pass: &[String],
    ours: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<(String, std::ffi::OsString)> {
    BASE_ENV
        .iter()
        .map(|n| (*n).to_owned())
        .chain(pass.iter().cloned())
        .filter_map(|name| ours(&name).map(|v| (name, v)))
        .collect()
}

/// Runs `sh -c command` with the message on standard input and a minimal environment
/// ([`passed_env`] and [`command_env`]), killing it (and everything it started) after its
/// timeout. `Err` only when it could not be started.
pub fn run_command(
    command: &str,
    limits: &Limits<'_>,
    id: &str,
    payload: &str,
) -> Result<CommandRun, DeliveryError> {
    let timeout = limits.timeout;
    let message: Value = serde_json::from_str(payload)
        .map_err(|e| DeliveryError::permanent(format!("the message is not JSON: {e}")))?;
    let started = SystemTime::now();
    let clock = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .env_clear()
        .envs(passed_env(limits.pass, |name| std::env::var_os(name)))
        .envs(command_env(id, &message))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| DeliveryError::temporary(format!("cannot run `sh -c`: {e}")))?;

    // Feed stdin and drain stderr on their own threads: a command that neither reads all of
    // its input nor stops writing errors must not block us past the timeout.
    if let Some(mut stdin) = child.stdin.take() {
        let input = payload.as_bytes().to_vec();
        std::thread::spawn(move || {
            // A command that exits without reading its input closes the pipe: not our error.
            let _ = stdin.write_all(&input);
        });
    }
    let (tx, rx) = mpsc::channel();
    if let Some(mut stderr) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut buf = [0_u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * STDERR_KEEP {
                    kept.drain(..kept.len() - STDERR_KEEP);
                }
            }
            let _ = tx.send(kept);
        });
    }

    let (status, timed_out) = wait_or_kill(&mut child, clock + timeout)
        .map_err(|e| DeliveryError::temporary(format!("waiting for the command failed: {e}")))?;
    let ended = SystemTime::now();
    let stderr = rx.recv_timeout(STDERR_GRACE).unwrap_or_default();
    Ok(CommandRun {
        started,
        ended,
        status: status
            .code()
            .or_else(|| status.signal().map(|s| 128 + s))
            .unwrap_or(-1),
        timed_out,
        stderr_tail: last_line(&String::from_utf8_lossy(&stderr)),
    })
}

/// Waits for `child` until `deadline`, polling; past it, kills its process group.
fn wait_or_kill(child: &mut Child, deadline: Instant) -> std::io::Result<(ExitStatus, bool)> {
    let mut pause = Duration::from_millis(2);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok((status, false));
        }
        let now = Instant::now();
        if now >= deadline {
            kill_group(child);
            return Ok((child.wait()?, true));
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Kills the command's process group (it leads one, so its children go too), and the command
/// itself should that fail.
fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let killed = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !killed {
        let _ = child.kill();
    }
}

/// The last non-empty line of `text`, at most 300 characters.
fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .chars()
        .take(300)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGE: &str = r#"{"id":"m-1","kind":"ci_failure","pr":{"url":"https://github.com/o/r/pull/7","repo":"o/r","number":7,"head_sha":"abc"}}"#;

    fn limits(ms: u64) -> Limits<'static> {
        Limits {
            timeout: Duration::from_millis(ms),
            pass: &[],
        }
    }

    #[test]
    fn only_path_home_lang_and_the_listed_names_pass_through() {
        let ours = |name: &str| {
            ["PATH", "LANG", "GITHUB_TOKEN", "AGENT_KEY"]
                .contains(&name)
                .then(|| std::ffi::OsString::from(format!("v-{name}")))
        };
        let pass = ["AGENT_KEY".to_owned(), "UNSET_ONE".to_owned()];
        let got: Vec<String> = passed_env(&pass, ours)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(got, ["PATH", "LANG", "AGENT_KEY"]);
    }

    #[test]
    fn a_command_sees_no_other_variable() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("env");
        let run = run_command(
            &format!("env > '{}'", out.display()),
            &limits(30_000),
            "m-1",
            MESSAGE,
        )
        .unwrap();
        assert_eq!(run.status, 0);
        let env = std::fs::read_to_string(&out).unwrap();
        for line in env.lines() {
            let name = line.split('=').next().unwrap();
            assert!(
                ["PATH", "HOME", "LANG", "PWD", "SHLVL", "_", "OLDPWD"].contains(&name)
                    || name.starts_with("PR_MONITOR_"),
                "{name} reached the command: {env}"
            );
        }
        assert!(env.contains("PR_MONITOR_MESSAGE_ID=m-1"), "{env}");
    }

    #[test]
    fn the_environment_comes_from_the_message() {
        let env = command_env("m-1", &serde_json::from_str(MESSAGE).unwrap());
        assert_eq!(
            env,
            [
                ("PR_MONITOR_MESSAGE_ID", "m-1".to_owned()),
                (
                    "PR_MONITOR_PR_URL",
                    "https://github.com/o/r/pull/7".to_owned()
                ),
                ("PR_MONITOR_REPO", "o/r".to_owned()),
                ("PR_MONITOR_PR_NUMBER", "7".to_owned()),
                ("PR_MONITOR_HEAD_SHA", "abc".to_owned()),
                ("PR_MONITOR_KIND", "ci_failure".to_owned()),
            ]
        );
        let bare = command_env("t", &serde_json::json!({"kind": "test"}));
        assert_eq!(bare[1], ("PR_MONITOR_PR_URL", String::new()));
    }

    #[test]
    fn a_failing_command_is_temporary_with_its_last_error_line() {
        let run = run_command(
            "cat >/dev/null; echo first >&2; echo 'disk full' >&2; exit 3",
            &limits(30_000),
            "m-1",
            MESSAGE,
        )
        .unwrap();
        assert_eq!((run.status, run.timed_out), (3, false));
        let e = run.outcome("fixer").unwrap_err();
        assert!(!e.permanent);
        assert_eq!(
            e.message,
            "agent `fixer`: the command exited with 3: disk full"
        );
        assert!(run.describe().starts_with("agent command ran from "));
        assert!(run.describe().ends_with(" (exit 3)"), "{}", run.describe());
    }

    #[test]
    fn a_command_past_its_timeout_is_killed_with_its_children() {
        let run = run_command("sleep 30 & sleep 30; wait", &limits(200), "m-1", MESSAGE).unwrap();
        assert!(run.timed_out);
        assert_eq!(run.status, 128 + 9);
        let took = run.ended.duration_since(run.started).unwrap();
        assert!(took < Duration::from_secs(10), "{took:?}");
        assert!(
            run.outcome("fixer")
                .unwrap_err()
                .message
                .contains("killed after")
        );
    }

    #[test]
    fn a_message_that_is_not_json_is_permanent() {
        assert!(
            run_command("true", &limits(5000), "m", "nope")
                .unwrap_err()
                .permanent
        );
    }
}

//! Is a failed check a real failure or an infrastructure flake? Reads the job log's tail, the
//! check's own output, and GitLab's `failure_reason`; every verdict carries its evidence.
//!
//! Patterns are specific phrases, not lone words: a test that merely mentions "timeout" in
//! passing is a real failure.

use crate::model::Classification;

/// Built-in phrases (lowercase) that mark an infrastructure failure.
pub(crate) const BUILTIN_PATTERNS: &[&str] = &[
    // runner lost or system failure
    "the runner has received a shutdown signal",
    "lost communication with the server",
    "the hosted runner encountered an error",
    "runner_system_failure",
    "the operation was canceled.",
    "the job was not acquired by runner",
    "no space left on device",
    "you are running out of disk space",
    "killed signal terminated program",
    "exit code 137",
    "out of memory",
    "oomkilled",
    "cannot allocate memory",
    // dependency download, TLS, registry 5xx
    "tls handshake timeout",
    "net/http: tls handshake",
    "connection reset by peer",
    "could not resolve host",
    "temporary failure in name resolution",
    "failed to download",
    "error: failed to get",
    "502 bad gateway",
    "503 service unavailable",
    "504 gateway time-out",
    "504 gateway timeout",
    "toomanyrequests",
    "rate limit exceeded",
    "econnreset",
    "etimedout",
    "socket hang up",
    "read: connection timed out",
    "i/o timeout",
    "unable to access 'https://",
];

/// GitLab `failure_reason`s that are infrastructure by nature.
pub(crate) const INFRA_REASONS: &[&str] = &[
    "runner_system_failure",
    "stuck_or_timeout_failure",
    "scheduler_failure",
    "api_failure",
    "data_integrity_failure",
    "runner_interrupted",
    "runner_external_dependency_failure",
    "job_execution_server_timeout",
    "server_timeout_running",
    "server_timeout_canceling",
    "stuck_pending_with_matching_runners",
    "stuck_pending_no_matching_runners",
    "no_updates_running",
    "no_updates_canceling",
];

/// Classifies a failed check from its log tail and its own output text. `extra` are the
/// user's patterns from config.
pub(crate) fn classify(
    log_tail: &str,
    output: &str,
    failure_reason: Option<&str>,
    extra: &[String],
) -> Classification {
    if let Some(reason) = failure_reason.filter(|r| INFRA_REASONS.contains(r)) {
        return Classification::Infra {
            evidence: format!("failure_reason: {reason}"),
        };
    }
    let extra: Vec<String> = extra
        .iter()
        .map(|p| p.to_ascii_lowercase())
        .filter(|p| !p.is_empty())
        .collect();
    for line in output.lines().chain(log_tail.lines()) {
        let lower = line.to_ascii_lowercase();
        let hit = BUILTIN_PATTERNS.iter().any(|p| lower.contains(p))
            || extra.iter().any(|p| lower.contains(p.as_str()));
        if hit {
            return Classification::Infra {
                evidence: line.trim().chars().take(300).collect(),
            };
        }
    }
    Classification::Real
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_table() {
        let infra = [
            (
                "runner lost",
                "##[error]The runner has received a shutdown signal.",
            ),
            (
                "tls",
                "Get https://proxy.golang.org/x: net/http: TLS handshake timeout",
            ),
            (
                "registry 5xx",
                "npm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/x",
            ),
            ("disk", "write /tmp/x: no space left on device"),
            ("oom", "Process completed with exit code 137."),
            (
                "dns",
                "fatal: unable to access 'https://github.com/x/': Could not resolve host: github.com",
            ),
        ];
        for (what, line) in infra {
            let got = classify(&format!("step 1\n{line}\nstep 3"), "", None, &[]);
            assert_eq!(
                got,
                Classification::Infra {
                    evidence: line.trim().into()
                },
                "{what}"
            );
        }
        let real = [
            "test timeout_handling ... FAILED\nassertion failed: retries == 3",
            "error[E0308]: mismatched types",
            "lint: line too long (timeout constant)",
        ];
        for log in real {
            assert_eq!(classify(log, "", None, &[]), Classification::Real, "{log}");
        }
    }

    #[test]
    fn gitlab_reasons_and_user_patterns() {
        assert!(classify("", "", Some("runner_system_failure"), &[]).is_infra());
        assert!(!classify("", "", Some("script_failure"), &[]).is_infra());
        assert!(classify("Flaky Sandbox Died", "", None, &["sandbox died".into()]).is_infra());
        assert!(
            classify(
                "",
                "The hosted runner encountered an error while running your job.",
                None,
                &[]
            )
            .is_infra()
        );
    }
}
